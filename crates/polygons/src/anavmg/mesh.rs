//! The triangulated region ANavMG works on: the outline as the first triangulation gave it,
//! the plan of what earlier rounds fixed (points on walls, portals), and the mesh a round
//! works on, triangulated again from the outline and the plan.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tessera_artifacts::Point;
use tessera_geom::predicates::{dist2, vector, GridVector};

use crate::partition::edge_key;
use crate::triangulate::{triangulate_edges, TriangulationError};

/// The region's outline as the triangulation gave it: its vertices, its boundary edges
/// (directed, region on the left, sorted) and which of them are walls.
pub(super) struct Outline {
    pub(super) verts: Vec<Point>,
    pub(super) tris: Vec<[u32; 3]>,
    pub(super) edges: Vec<(u32, u32)>,
    walls: Vec<bool>,
}

/// What earlier rounds fixed: points added on walls (with the wall, an index into
/// [`Outline::edges`]) and portals, by their end points.
#[derive(Default)]
pub(super) struct Plan {
    pub(super) added: Vec<(Point, usize)>,
    pub(super) portals: Vec<(Point, Point)>,
}

/// The triangulated region a round works on: the outline's vertices first, then the added
/// points; fixed portals are edges of the triangulation.
pub(super) struct Mesh {
    pub(super) verts: Vec<Point>,
    pub(super) tris: Vec<[u32; 3]>,
    /// Directed edge -> the triangle holding it.
    pub(super) tri_of: HashMap<(u32, u32), u32>,
    /// Portals fixed by earlier rounds, by [`edge_key`].
    pub(super) fixed: HashSet<(u32, u32)>,
    /// Boundary pieces on a wall -> that wall.
    pub(super) wall: HashMap<(u32, u32), usize>,
    /// The wall of each added point (`verts[outline.verts.len()..]`).
    pub(super) added_on: Vec<usize>,
}

impl Mesh {
    /// The vector from vertex `a` to vertex `b`.
    pub(super) fn dir(&self, a: u32, b: u32) -> GridVector {
        vector(self.verts[a as usize], self.verts[b as usize])
    }
}

/// Directed edge -> the triangle holding it.
fn tri_index(tris: &[[u32; 3]]) -> HashMap<(u32, u32), u32> {
    let mut tri_of = HashMap::default();
    for (t, tri) in tris.iter().enumerate() {
        for k in 0..3 {
            tri_of.insert((tri[k], tri[(k + 1) % 3]), t as u32);
        }
    }
    tri_of
}

/// The boundary edges (no twin; directed, region on the left), sorted.
pub(super) fn boundary_of(tri_of: &HashMap<(u32, u32), u32>) -> Vec<(u32, u32)> {
    let mut edges: Vec<(u32, u32)> = tri_of
        .keys()
        .filter(|&&(a, b)| !tri_of.contains_key(&(b, a)))
        .copied()
        .collect();
    edges.sort_unstable();
    edges
}

impl Outline {
    pub(super) fn new(
        verts: Vec<Point>,
        tris: Vec<[u32; 3]>,
        is_wall: &dyn Fn(Point, Point) -> bool,
    ) -> Self {
        let edges = boundary_of(&tri_index(&tris));
        let walls = edges
            .iter()
            .map(|&(a, b)| is_wall(verts[a as usize], verts[b as usize]))
            .collect();
        Outline {
            verts,
            tris,
            edges,
            walls,
        }
    }

    /// The first round's mesh: the triangulation as given.
    pub(super) fn mesh(&self) -> Mesh {
        Mesh {
            verts: self.verts.clone(),
            tri_of: tri_index(&self.tris),
            tris: self.tris.clone(),
            fixed: HashSet::default(),
            wall: (0..self.edges.len())
                .filter(|&k| self.walls[k])
                .map(|k| (self.edges[k], k))
                .collect(),
            added_on: Vec::new(),
        }
    }

    /// The outline with the plan's points on its walls and its portals as edges, triangulated.
    pub(super) fn build(&self, plan: &Plan) -> Result<Mesh, TriangulationError> {
        let mut verts = self.verts.clone();
        let mut id: HashMap<Point, u32> = verts
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, i as u32))
            .collect();
        let mut added_on = Vec::new();
        let mut on_wall: HashMap<usize, Vec<u32>> = HashMap::default();
        for &(p, w) in &plan.added {
            if let std::collections::hash_map::Entry::Vacant(e) = id.entry(p) {
                e.insert(verts.len() as u32);
                on_wall.entry(w).or_default().push(verts.len() as u32);
                verts.push(p);
                added_on.push(w);
            }
        }
        let mut boundary = Vec::new();
        let mut wall = HashMap::default();
        for (k, &(a, b)) in self.edges.iter().enumerate() {
            let mut chain = vec![a];
            if let Some(points) = on_wall.get_mut(&k) {
                let from = verts[a as usize];
                points.sort_unstable_by_key(|&p| dist2(from, verts[p as usize]));
                chain.extend_from_slice(points);
            }
            chain.push(b);
            for w in chain.windows(2) {
                boundary.push([w[0], w[1]]);
                if self.walls[k] {
                    wall.insert((w[0], w[1]), k);
                }
            }
        }
        let portals: Vec<[u32; 2]> = plan.portals.iter().map(|(p, q)| [id[p], id[q]]).collect();
        let tris = triangulate_edges(&verts, &boundary, &portals)?;
        Ok(Mesh {
            verts,
            tri_of: tri_index(&tris),
            tris,
            fixed: portals.iter().map(|e| edge_key(e[0], e[1])).collect(),
            wall,
            added_on,
        })
    }
}
