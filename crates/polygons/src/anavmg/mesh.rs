//! The triangulated region ANavMG works on: the outline as the first triangulation gave it,
//! the plan of what earlier rounds fixed (points on walls, portals), and the mesh a round
//! works on, triangulated again from the outline and the plan.

use rustc_hash::FxHashSet as HashSet;
use tessera_artifacts::Point;
use tessera_geom::predicates::{dist2, vector, GridVector};

use crate::partition::edge_key;
use crate::triangulate::{triangulate_edges, TriangulationError};

/// No entry (a slot of [`Edges`] without a wall, a corner, ...).
pub(super) const NONE: u32 = u32::MAX;

/// The directed edges of a triangulation by their start vertex: for each vertex, the ends of
/// the edges leaving it (sorted) and the triangle holding each. An edge's place in this list
/// (its slot) indexes per-edge tables.
#[derive(Clone)]
pub(super) struct Edges {
    /// Vertex `v`'s edges are the slots `start[v] .. start[v + 1]`.
    start: Vec<u32>,
    /// Per slot: (end vertex, triangle).
    out: Vec<(u32, u32)>,
}

impl Edges {
    pub(super) fn new(verts: usize, tris: &[[u32; 3]]) -> Edges {
        let mut start = vec![0u32; verts + 1];
        for tri in tris {
            for &v in tri {
                start[v as usize + 1] += 1;
            }
        }
        for v in 0..verts {
            start[v + 1] += start[v];
        }
        let mut fill: Vec<u32> = start[..verts].to_vec();
        let mut out = vec![(0u32, 0u32); tris.len() * 3];
        for (t, tri) in tris.iter().enumerate() {
            for k in 0..3 {
                let a = tri[k] as usize;
                out[fill[a] as usize] = (tri[(k + 1) % 3], t as u32);
                fill[a] += 1;
            }
        }
        for v in 0..verts {
            out[start[v] as usize..start[v + 1] as usize].sort_unstable();
        }
        Edges { start, out }
    }

    /// How many slots (directed edges) there are.
    pub(super) fn len(&self) -> usize {
        self.out.len()
    }

    /// The slot of the directed edge `a -> b`.
    pub(super) fn slot(&self, a: u32, b: u32) -> Option<usize> {
        let lo = self.start[a as usize] as usize;
        let list = &self.out[lo..self.start[a as usize + 1] as usize];
        if list.len() <= 8 {
            list.iter().position(|e| e.0 == b)
        } else {
            list.binary_search_by_key(&b, |e| e.0).ok()
        }
        .map(|k| lo + k)
    }

    /// The triangle holding the directed edge `a -> b`.
    pub(super) fn tri(&self, a: u32, b: u32) -> Option<u32> {
        self.slot(a, b).map(|s| self.out[s].1)
    }

    /// Whether a triangle holds the directed edge `a -> b`.
    pub(super) fn has(&self, a: u32, b: u32) -> bool {
        self.slot(a, b).is_some()
    }

    /// Every directed edge `(a, b, triangle)`, by `a` then `b`.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.start.windows(2).enumerate().flat_map(move |(a, w)| {
            self.out[w[0] as usize..w[1] as usize]
                .iter()
                .map(move |&(b, t)| (a as u32, b, t))
        })
    }

    /// The boundary edges (no twin; directed, region on the left), sorted.
    pub(super) fn boundary(&self) -> Vec<(u32, u32)> {
        self.iter()
            .filter(|&(a, b, _)| !self.has(b, a))
            .map(|(a, b, _)| (a, b))
            .collect()
    }
}

/// The region's outline as the triangulation gave it: its vertices, its boundary edges
/// (directed, region on the left, sorted) and which of them are walls.
pub(super) struct Outline {
    pub(super) verts: Vec<Point>,
    pub(super) tris: Vec<[u32; 3]>,
    pub(super) edges: Vec<(u32, u32)>,
    walls: Vec<bool>,
    /// The triangulation's edges.
    first: Edges,
    /// The vertices by point, sorted.
    by_point: Vec<(Point, u32)>,
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
    /// The directed edges and the triangle holding each.
    pub(super) edges: Edges,
    /// Portals fixed by earlier rounds, by [`edge_key`].
    pub(super) fixed: HashSet<(u32, u32)>,
    /// Per slot of [`Mesh::edges`]: the wall a boundary piece lies on, or [`NONE`].
    wall: Vec<u32>,
    /// The wall of each added point (`verts[outline.verts.len()..]`).
    pub(super) added_on: Vec<usize>,
}

impl Mesh {
    /// The vector from vertex `a` to vertex `b`.
    pub(super) fn dir(&self, a: u32, b: u32) -> GridVector {
        vector(self.verts[a as usize], self.verts[b as usize])
    }

    /// The triangle holding the directed edge `a -> b`.
    pub(super) fn tri_of(&self, a: u32, b: u32) -> Option<u32> {
        self.edges.tri(a, b)
    }

    /// The wall (an index into [`Outline::edges`]) the boundary piece `a -> b` lies on.
    pub(super) fn wall(&self, a: u32, b: u32) -> Option<usize> {
        let s = self.edges.slot(a, b)?;
        (self.wall[s] != NONE).then_some(self.wall[s] as usize)
    }

    /// The per-slot wall table of `edges` from boundary pieces and their walls.
    fn walls(edges: &Edges, pieces: impl Iterator<Item = ((u32, u32), usize)>) -> Vec<u32> {
        let mut wall = vec![NONE; edges.len()];
        for ((a, b), k) in pieces {
            if let Some(s) = edges.slot(a, b) {
                wall[s] = k as u32;
            }
        }
        wall
    }
}

impl Outline {
    pub(super) fn new(
        verts: Vec<Point>,
        tris: Vec<[u32; 3]>,
        is_wall: &dyn Fn(Point, Point) -> bool,
    ) -> Self {
        let first = Edges::new(verts.len(), &tris);
        let edges = first.boundary();
        let walls = edges
            .iter()
            .map(|&(a, b)| is_wall(verts[a as usize], verts[b as usize]))
            .collect();
        let mut by_point: Vec<(Point, u32)> = (0..verts.len() as u32)
            .map(|i| (verts[i as usize], i))
            .collect();
        by_point.sort_unstable();
        Outline {
            verts,
            tris,
            edges,
            walls,
            first,
            by_point,
        }
    }

    /// The first round's mesh: the triangulation as given.
    pub(super) fn mesh(&self) -> Mesh {
        let pieces = (0..self.edges.len())
            .filter(|&k| self.walls[k])
            .map(|k| (self.edges[k], k));
        Mesh {
            verts: self.verts.clone(),
            tris: self.tris.clone(),
            wall: Mesh::walls(&self.first, pieces),
            edges: self.first.clone(),
            fixed: HashSet::default(),
            added_on: Vec::new(),
        }
    }

    /// The outline's vertex at `p`.
    fn vertex_at(&self, p: Point) -> Option<u32> {
        let k = self.by_point.binary_search_by_key(&p, |e| e.0).ok()?;
        Some(self.by_point[k].1)
    }

    /// The outline with the plan's points on its walls and its portals as edges, triangulated.
    pub(super) fn build(&self, plan: &Plan) -> Result<Mesh, TriangulationError> {
        let first_added = self.verts.len();
        let mut verts = self.verts.clone();
        let mut added_on = Vec::new();
        let id = |verts: &[Point], p: Point| {
            self.vertex_at(p).or_else(|| {
                (first_added..verts.len())
                    .find(|&v| verts[v] == p)
                    .map(|v| v as u32)
            })
        };
        // (wall, point) of each point added, by wall and then from the wall's start.
        let mut on_wall: Vec<(usize, u32)> = Vec::new();
        for &(p, w) in &plan.added {
            if id(&verts, p).is_none() {
                on_wall.push((w, verts.len() as u32));
                verts.push(p);
                added_on.push(w);
            }
        }
        on_wall.sort_unstable_by_key(|&(w, v)| {
            (w, dist2(verts[self.edges[w].0 as usize], verts[v as usize]))
        });
        let mut on_wall = on_wall.into_iter().peekable();
        let mut boundary = Vec::new();
        let mut pieces = Vec::new();
        for (k, &(a, b)) in self.edges.iter().enumerate() {
            let (first_piece, mut from) = (boundary.len(), a);
            while let Some((_, v)) = on_wall.next_if(|&(w, _)| w == k) {
                boundary.push([from, v]);
                from = v;
            }
            boundary.push([from, b]);
            if self.walls[k] {
                pieces.extend(boundary[first_piece..].iter().map(|e| ((e[0], e[1]), k)));
            }
        }
        let portals: Vec<[u32; 2]> = plan
            .portals
            .iter()
            .map(|&(p, q)| [p, q].map(|x| id(&verts, x).expect("a portal ends at a vertex")))
            .collect();
        let tris = triangulate_edges(&verts, &boundary, &portals)?;
        let edges = Edges::new(verts.len(), &tris);
        Ok(Mesh {
            wall: Mesh::walls(&edges, pieces.into_iter()),
            verts,
            tris,
            edges,
            fixed: portals.iter().map(|e| edge_key(e[0], e[1])).collect(),
            added_on,
        })
    }
}
