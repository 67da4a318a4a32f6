//! A region's simplified contours to convex polygons: constrained Delaunay triangulation with
//! holes (spade), then either Hertel-Mehlhorn (seed 000, 5.1.3: remove every diagonal whose
//! removal keeps both sides convex, longest first) or ANavMG (seed 002: one portal per notch,
//! to a vertex or to a new grid point on a wall, unnecessary portals removed, tau relaxation).
//! Table 1 of seed 002 is measured on the floor plans of `benches/polygons/plans/`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use spade::handles::FixedFaceHandle;
use spade::{ConstrainedDelaunayTriangulation, Point2, Triangulation};
use tessera_artifacts::Point;

/// Convex polygons of one region over its own vertex list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionPolygons {
    pub verts: Vec<Point>,
    /// Counter-clockwise vertex cycles.
    pub polys: Vec<Vec<u32>>,
    /// The triangles each polygon is made of (counter-clockwise).
    pub tris: Vec<Vec<[u32; 3]>>,
    /// Vertices the partition added, each on a wall of the region: (vertex, the wall's start
    /// and end as the outline has them, region on the left).
    pub on_walls: Vec<(u32, Point, Point)>,
}

pub(crate) fn orient(a: Point, b: Point, c: Point) -> i64 {
    (b.0 - a.0) as i64 * (c.1 - a.1) as i64 - (b.1 - a.1) as i64 * (c.0 - a.0) as i64
}

/// How many notches (reflex vertices, strictly) the contours have: outer counter-clockwise,
/// holes clockwise.
pub(crate) fn notches(contours: &[Vec<Point>]) -> u64 {
    contours
        .iter()
        .map(|c| {
            let n = c.len();
            (0..n)
                .filter(|&k| orient(c[(k + n - 1) % n], c[k], c[(k + 1) % n]) < 0)
                .count() as u64
        })
        .sum()
}

/// Triangulates the region bounded by `contours` (outer counter-clockwise, holes clockwise; no
/// two segments crossing) and returns the triangles inside it, over the deduplicated vertices.
pub fn triangulate(contours: &[Vec<Point>]) -> Result<(Vec<Point>, Vec<[u32; 3]>), String> {
    let mut ids: HashMap<Point, u32> = HashMap::default();
    let mut verts: Vec<Point> = Vec::new();
    let mut edges: Vec<[u32; 2]> = Vec::new();
    for c in contours {
        let idx: Vec<u32> = c
            .iter()
            .map(|&p| {
                *ids.entry(p).or_insert_with(|| {
                    verts.push(p);
                    verts.len() as u32 - 1
                })
            })
            .collect();
        for k in 0..idx.len() {
            let (a, b) = (idx[k], idx[(k + 1) % idx.len()]);
            if a != b {
                edges.push([a, b]);
            }
        }
    }
    let tris = triangulate_edges(&verts, &edges, &[])?;
    Ok((verts, tris))
}

/// The triangles inside the region whose boundary is `boundary` (directed edges, region on the
/// left), with `portals` (segments between vertices, inside the region) kept as edges too.
fn triangulate_edges(
    verts: &[Point],
    boundary: &[[u32; 2]],
    portals: &[[u32; 2]],
) -> Result<Vec<[u32; 3]>, String> {
    let points: Vec<Point2<f64>> = verts
        .iter()
        .map(|p| Point2::new(p.0 as f64, p.1 as f64))
        .collect();
    let edges: Vec<[usize; 2]> = boundary
        .iter()
        .chain(portals)
        .map(|e| e.map(|v| v as usize))
        .collect();
    let inner: HashSet<(u32, u32)> = portals.iter().map(|e| key(e[0], e[1])).collect();
    let mut conflicts = 0usize;
    let cdt =
        ConstrainedDelaunayTriangulation::<Point2<f64>>::try_bulk_load_cdt(points, edges, |_| {
            conflicts += 1
        })
        .map_err(|e| format!("triangulation failed: {e:?}"))?;
    if conflicts > 0 {
        return Err(format!("{conflicts} crossing constraint edges"));
    }
    if cdt.num_vertices() != verts.len() {
        return Err("duplicate vertices".into());
    }
    // Inside = an odd number of boundary edges crossed from the outside (portals lie inside).
    let crosses_boundary = |e: spade::handles::DirectedEdgeHandle<_, _, _, _>| {
        let [a, b] = e.vertices().map(|v| v.fix().index() as u32);
        cdt.is_constraint_edge(e.fix().as_undirected()) && !inner.contains(&key(a, b))
    };
    let mut parity: HashMap<FixedFaceHandle<spade::handles::InnerTag>, bool> = HashMap::default();
    let mut queue = Vec::new();
    for face in cdt.inner_faces() {
        for e in face.adjacent_edges() {
            if e.rev().face().is_outer() {
                if parity.insert(face.fix(), crosses_boundary(e)).is_none() {
                    queue.push(face.fix());
                }
                break;
            }
        }
    }
    while let Some(f) = queue.pop() {
        let here = parity[&f];
        for e in cdt.face(f).adjacent_edges() {
            if let Some(g) = e.rev().face().as_inner() {
                let p = here ^ crosses_boundary(e);
                if let std::collections::hash_map::Entry::Vacant(v) = parity.entry(g.fix()) {
                    v.insert(p);
                    queue.push(g.fix());
                }
            }
        }
    }
    let mut tris = Vec::new();
    for face in cdt.inner_faces() {
        if parity.get(&face.fix()).copied().unwrap_or(false) {
            let v = face.vertices().map(|v| v.fix().index() as u32);
            tris.push(v);
        }
    }
    // Deterministic order, each triangle starting at its smallest index.
    for t in tris.iter_mut() {
        let m = (0..3).min_by_key(|&k| t[k]).unwrap();
        *t = [t[m], t[(m + 1) % 3], t[(m + 2) % 3]];
    }
    tris.sort_unstable();
    Ok(tris)
}

/// An undirected edge by its two vertices, smaller first.
fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        parent[x as usize] = parent[parent[x as usize] as usize];
        x = parent[x as usize];
    }
    x
}

/// Hertel-Mehlhorn over the triangles: diagonals (edges inside the region) are removed longest
/// first whenever the merged polygon stays convex at both ends of the diagonal.
pub fn hertel_mehlhorn(verts: Vec<Point>, tris: Vec<[u32; 3]>) -> RegionPolygons {
    let mut edge_tris: HashMap<(u32, u32), Vec<u32>> = HashMap::default();
    for (t, tri) in tris.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            edge_tris
                .entry((a.min(b), a.max(b)))
                .or_default()
                .push(t as u32);
        }
    }
    let mut diagonals: Vec<(i64, Point, Point, u32, u32, u32, u32)> = edge_tris
        .iter()
        .filter(|(_, ts)| ts.len() == 2)
        .map(|(&(a, b), ts)| {
            let (pa, pb) = (verts[a as usize], verts[b as usize]);
            let d = (pa.0 - pb.0) as i64;
            let e = (pa.1 - pb.1) as i64;
            (-(d * d + e * e), pa.min(pb), pa.max(pb), a, b, ts[0], ts[1])
        })
        .collect();
    diagonals.sort_unstable();
    let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
    let mut cycles: Vec<Vec<u32>> = tris.iter().map(|t| t.to_vec()).collect();
    for &(_, _, _, a, b, t1, t2) in &diagonals {
        let (p, q) = (find(&mut parent, t1), find(&mut parent, t2));
        if p == q {
            continue;
        }
        // Rotate P to run v .. u and Q to run u .. v, where P holds the directed edge u -> v.
        let (cp, cq) = (&cycles[p as usize], &cycles[q as usize]);
        let pos = |c: &[u32], x: u32| c.iter().position(|&y| y == x);
        let (Some(pa), Some(pb)) = (pos(cp, a), pos(cp, b)) else {
            continue;
        };
        let (u, v) = if cp[(pa + 1) % cp.len()] == b {
            (a, b)
        } else if cp[(pb + 1) % cp.len()] == a {
            (b, a)
        } else {
            continue;
        };
        let pv = pos(cp, v).unwrap();
        let prot: Vec<u32> = (0..cp.len()).map(|k| cp[(pv + k) % cp.len()]).collect();
        let Some(qu) = pos(cq, u) else { continue };
        let qrot: Vec<u32> = (0..cq.len()).map(|k| cq[(qu + k) % cq.len()]).collect();
        if qrot.last() != Some(&v) {
            continue;
        }
        // P and Q touching anywhere else (a pinch) would make a polygon that is not simple.
        if qrot[1..qrot.len() - 1].iter().any(|w| prot.contains(w)) {
            continue;
        }
        let at = |i: u32| verts[i as usize];
        // At u: P's vertex before u, u, Q's vertex after u. At v: Q's before v, v, P's after v.
        // A straight angle is convex; folding back is not.
        let convex = |a: Point, b: Point, c: Point| {
            let o = orient(a, b, c);
            o > 0
                || o == 0
                    && (b.0 - a.0) as i64 * (c.0 - b.0) as i64
                        + (b.1 - a.1) as i64 * (c.1 - b.1) as i64
                        > 0
        };
        if !(convex(at(prot[prot.len() - 2]), at(u), at(qrot[1]))
            && convex(at(qrot[qrot.len() - 2]), at(v), at(prot[1])))
        {
            continue;
        }
        let mut merged = prot;
        merged.extend_from_slice(&qrot[1..qrot.len() - 1]);
        let (keep, gone) = (p.min(q), p.max(q));
        parent[gone as usize] = keep;
        cycles[keep as usize] = merged;
        cycles[gone as usize] = Vec::new();
    }
    // Polygons in order of their smallest triangle; each cycle starts at its smallest vertex.
    let mut index: HashMap<u32, usize> = HashMap::default();
    let mut out = RegionPolygons {
        verts,
        ..Default::default()
    };
    for t in 0..tris.len() as u32 {
        let root = find(&mut parent, t);
        let k = *index.entry(root).or_insert_with(|| {
            let c = &cycles[root as usize];
            let m = (0..c.len()).min_by_key(|&i| c[i]).unwrap();
            out.polys
                .push((0..c.len()).map(|i| c[(m + i) % c.len()]).collect());
            out.tris.push(Vec::new());
            out.polys.len() - 1
        });
        out.tris[k].push(tris[t as usize]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area2(verts: &[Point], cycle: &[u32]) -> i64 {
        (0..cycle.len())
            .map(|k| {
                let (a, b) = (
                    verts[cycle[k] as usize],
                    verts[cycle[(k + 1) % cycle.len()] as usize],
                );
                a.0 as i64 * b.1 as i64 - b.0 as i64 * a.1 as i64
            })
            .sum()
    }

    #[test]
    fn a_square_with_a_hole_triangulates_to_its_area_and_partitions_convexly() {
        let outer = vec![(0, 0), (10, 0), (10, 10), (0, 10)];
        let hole = vec![(4, 4), (4, 6), (6, 6), (6, 4)];
        let (verts, tris) = triangulate(&[outer, hole]).unwrap();
        let total: i64 = tris.iter().map(|t| area2(&verts, t)).sum();
        assert_eq!(total, 2 * (100 - 4));
        let polys = hertel_mehlhorn(verts, tris);
        let mut sum = 0;
        for c in &polys.polys {
            let n = c.len();
            for k in 0..n {
                let (a, b, d) = (c[k], c[(k + 1) % n], c[(k + 2) % n]);
                let v = &polys.verts;
                assert!(orient(v[a as usize], v[b as usize], v[d as usize]) >= 0);
            }
            sum += area2(&polys.verts, c);
        }
        assert_eq!(sum, 2 * 96);
        // A square ring needs at least 4 convex pieces; HM stays within 4x of optimal.
        assert!(
            polys.polys.len() >= 4 && polys.polys.len() <= 8,
            "{}",
            polys.polys.len()
        );
    }

    #[test]
    fn an_l_shape_becomes_two_polygons() {
        let l = vec![(0, 0), (6, 0), (6, 2), (2, 2), (2, 6), (0, 6)];
        let (verts, tris) = triangulate(&[l]).unwrap();
        let polys = hertel_mehlhorn(verts, tris);
        assert_eq!(polys.polys.len(), 2);
    }

    fn convex_cover(polys: &RegionPolygons, want_area2: i64) {
        let mut sum = 0;
        for c in &polys.polys {
            let n = c.len();
            for k in 0..n {
                let v = &polys.verts;
                let (a, b, d) = (c[k], c[(k + 1) % n], c[(k + 2) % n]);
                assert!(
                    orient(v[a as usize], v[b as usize], v[d as usize]) >= 0,
                    "{c:?}"
                );
            }
            sum += area2(&polys.verts, c);
        }
        assert_eq!(sum, want_area2);
    }

    fn no_walls(_: Point, _: Point) -> bool {
        false
    }

    #[test]
    fn anavmg_splits_each_notch_once() {
        // An L: one notch, two cells.
        let l = vec![(0, 0), (6, 0), (6, 2), (2, 2), (2, 6), (0, 6)];
        let (verts, tris) = triangulate(&[l]).unwrap();
        let (p, fell_back) = anavmg(verts, tris, &no_walls, 0.0);
        assert!(!fell_back);
        assert_eq!(p.polys.len(), 2);
        convex_cover(&p, 2 * 20);
        // A square ring: four notches (the hole's corners), four cells.
        let outer = vec![(0, 0), (10, 0), (10, 10), (0, 10)];
        let hole = vec![(4, 4), (4, 6), (6, 6), (6, 4)];
        let (verts, tris) = triangulate(&[outer, hole]).unwrap();
        let (p, fell_back) = anavmg(verts.clone(), tris.clone(), &no_walls, 0.0);
        assert!(!fell_back);
        convex_cover(&p, 2 * 96);
        let hm = hertel_mehlhorn(verts, tris);
        assert!(
            p.polys.len() <= hm.polys.len(),
            "{} vs {}",
            p.polys.len(),
            hm.polys.len()
        );
        assert!(p.polys.len() <= 5, "{}", p.polys.len());
    }

    #[test]
    fn anavmg_relaxation_merges_shallow_notches() {
        // A floor whose top edge dips by one unit in the middle of a 30-unit run: one shallow
        // notch (about 7.6 degrees past straight).
        let shape = vec![(0, 0), (30, 0), (30, 10), (15, 9), (0, 10)];
        let (verts, tris) = triangulate(&[shape]).unwrap();
        let (strict, _) = anavmg(verts.clone(), tris.clone(), &no_walls, 0.0);
        let (relaxed, fell_back) = anavmg(verts, tris, &no_walls, 10f64.to_radians());
        assert!(!fell_back);
        assert!(strict.polys.len() >= 2);
        assert_eq!(relaxed.polys.len(), 1);
    }

    #[test]
    fn crossing_contours_are_refused() {
        let a = vec![(0, 0), (4, 0), (4, 4), (0, 4)];
        let b = vec![(2, 2), (6, 2), (6, 6), (2, 6)];
        assert!(triangulate(&[a, b]).is_err());
    }
}

/// The counter-clockwise angle from direction `a` to direction `b`, in `[0, 2 pi)`.
fn ccw_angle(a: (i64, i64), b: (i64, i64)) -> f64 {
    let cross = (a.0 * b.1 - a.1 * b.0) as f64;
    let dot = (a.0 * b.0 + a.1 * b.1) as f64;
    let t = cross.atan2(dot);
    if t < 0.0 {
        t + std::f64::consts::TAU
    } else {
        t
    }
}

/// True when turning counter-clockwise from `a` to `b` is at most `pi + tau`. Exact (integer)
/// when `tau` is 0.
fn within(a: (i64, i64), b: (i64, i64), tau: f64) -> bool {
    if tau == 0.0 {
        a.0 * b.1 - a.1 * b.0 >= 0
    } else {
        ccw_angle(a, b) <= std::f64::consts::PI + tau + 1e-12
    }
}

/// One corner of the region: a boundary vertex with the rays leaving it into the region,
/// counter-clockwise from the outgoing boundary edge to the incoming one (reversed).
struct Corner {
    v: u32,
    rays: Vec<u32>,
}

/// Rounds of portals to new points (each one triangulates the region again) before the notches
/// still open are bracketed by two diagonals.
pub(crate) const ROUNDS: usize = 6;
/// Triangles searched from one notch for the closest wall point or vertex in its cone.
const SEARCH: usize = 512;

/// The region's outline as the triangulation gave it: its vertices, its boundary edges
/// (directed, region on the left, sorted) and which of them are walls.
struct Outline {
    verts: Vec<Point>,
    tris: Vec<[u32; 3]>,
    edges: Vec<(u32, u32)>,
    walls: Vec<bool>,
}

/// What earlier rounds fixed: points added on walls (with the wall, an index into
/// [`Outline::edges`]) and portals, by their end points.
#[derive(Default)]
struct Plan {
    added: Vec<(Point, usize)>,
    portals: Vec<(Point, Point)>,
}

/// The triangulated region a round works on: the outline's vertices first, then the added
/// points; fixed portals are edges of the triangulation.
struct Mesh {
    verts: Vec<Point>,
    tris: Vec<[u32; 3]>,
    /// Directed edge -> the triangle holding it.
    tri_of: HashMap<(u32, u32), u32>,
    /// Portals fixed by earlier rounds, by [`key`].
    fixed: HashSet<(u32, u32)>,
    /// Boundary pieces on a wall -> that wall.
    wall: HashMap<(u32, u32), usize>,
    /// The wall of each added point (`verts[outline.verts.len()..]`).
    added_on: Vec<usize>,
}

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
fn boundary_of(tri_of: &HashMap<(u32, u32), u32>) -> Vec<(u32, u32)> {
    let mut edges: Vec<(u32, u32)> = tri_of
        .keys()
        .filter(|&&(a, b)| !tri_of.contains_key(&(b, a)))
        .copied()
        .collect();
    edges.sort_unstable();
    edges
}

impl Outline {
    fn new(verts: Vec<Point>, tris: Vec<[u32; 3]>, is_wall: &dyn Fn(Point, Point) -> bool) -> Self {
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
    fn mesh(&self) -> Mesh {
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
    fn build(&self, plan: &Plan) -> Result<Mesh, String> {
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
            fixed: portals.iter().map(|e| key(e[0], e[1])).collect(),
            wall,
            added_on,
        })
    }
}

fn dist2(a: Point, b: Point) -> i64 {
    let (dx, dy) = ((b.0 - a.0) as i64, (b.1 - a.1) as i64);
    dx * dx + dy * dy
}

fn cross(a: (f64, f64), b: (f64, f64)) -> f64 {
    a.0 * b.1 - a.1 * b.0
}

/// The largest `s` range inside `range` where `c0 + s * c1 >= -slack`.
fn clip(range: (f64, f64), c0: f64, c1: f64, slack: f64) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = range;
    if c1.abs() <= f64::EPSILON * c0.abs().max(1.0) {
        return (c0 >= -slack).then_some(range);
    }
    let root = (-slack - c0) / c1;
    if c1 > 0.0 {
        lo = lo.max(root);
    } else {
        hi = hi.min(root);
    }
    (lo <= hi).then_some((lo, hi))
}

/// A notch's area of interest: the directions `w` from it that split its too-wide angle
/// (from direction `a` counter-clockwise to `b`) into two tau-convex angles. `lo` and `hi`
/// bound a convex part of it (all of it unless it is wider than pi) for float searches;
/// [`Cone::holds`] is the exact test.
struct Cone {
    a: (i64, i64),
    b: (i64, i64),
    tau: f64,
    lo: (f64, f64),
    hi: (f64, f64),
}

impl Cone {
    fn new(a: (i64, i64), b: (i64, i64), tau: f64) -> Cone {
        let unit = |d: (i64, i64)| {
            let n = (d.0 as f64).hypot(d.1 as f64);
            (d.0 as f64 / n, d.1 as f64 / n)
        };
        let (lo, hi) = if tau == 0.0 {
            (unit(a), unit(b))
        } else {
            let pi = std::f64::consts::PI;
            let theta = ccw_angle(a, b);
            let (mut from, mut to) = (theta - pi - tau, pi + tau);
            if to - from > pi {
                (from, to) = (theta / 2.0 - pi / 2.0, theta / 2.0 + pi / 2.0);
            }
            let u = unit(a);
            let turn = |t: f64| (u.0 * t.cos() - u.1 * t.sin(), u.0 * t.sin() + u.1 * t.cos());
            (turn(from), turn(to))
        };
        Cone { a, b, tau, lo, hi }
    }

    fn holds(&self, w: (i64, i64)) -> bool {
        w != (0, 0) && within(self.a, w, self.tau) && within(w, self.b, self.tau)
    }

    /// The parameters `s` in `range` where `p + s * d` (relative to the notch) lies in the
    /// convex part, widened by `slack` (relative).
    fn span(
        &self,
        p: (f64, f64),
        d: (f64, f64),
        range: (f64, f64),
        slack: f64,
    ) -> Option<(f64, f64)> {
        let scale = slack * (p.0.abs() + p.1.abs() + d.0.abs() + d.1.abs() + 1.0);
        let r = clip(range, cross(self.lo, p), cross(self.lo, d), scale)?;
        clip(r, cross(p, self.hi), cross(d, self.hi), scale)
    }

    /// Whether the segment `p`..`q` (relative to the notch) may meet the cone (generous).
    fn meets(&self, p: (i64, i64), q: (i64, i64)) -> bool {
        let p = (p.0 as f64, p.1 as f64);
        let d = (q.0 as f64 - p.0, q.1 as f64 - p.1);
        self.span(p, d, (0.0, 1.0), 1e-6).is_some()
    }

    /// The grid point strictly inside the wall piece `s`..`t` (relative to the notch) that is
    /// in the cone and closest to the notch, if any.
    fn closest_on(&self, s: (i64, i64), t: (i64, i64)) -> Option<(i64, i64)> {
        let d = (t.0 - s.0, t.1 - s.1);
        let g = gcd(d.0.unsigned_abs(), d.1.unsigned_abs()) as i64;
        if g < 2 {
            return None;
        }
        let step = (d.0 / g, d.1 / g);
        let at = |k: i64| (s.0 + k * step.0, s.1 + k * step.1);
        let sf = (s.0 as f64, s.1 as f64);
        let df = (step.0 as f64, step.1 as f64);
        let (lo, hi) = self.span(sf, df, (1.0, (g - 1) as f64), 1e-9)?;
        let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
        let foot = -(sf.0 * df.0 + sf.1 * df.1) / (df.0 * df.0 + df.1 * df.1);
        let k0 = (foot.round() as i64).clamp(lo.min(hi), hi.max(lo));
        (k0 - 1..=k0 + 1)
            .filter(|&k| k >= 1 && k < g && self.holds(at(k)))
            .map(at)
            .min_by_key(|&w| (w.0 * w.0 + w.1 * w.1, w))
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Whether two portals meet anywhere but at a shared end.
fn clash(p: Point, q: Point, r: Point, s: Point) -> bool {
    let (d1, d2) = (orient(r, s, p).signum(), orient(r, s, q).signum());
    if d1 == 0 && d2 == 0 {
        // Collinear: they clash when they overlap in more than a point.
        let t = |x: Point| {
            (x.0 - p.0) as i64 * (q.0 - p.0) as i64 + (x.1 - p.1) as i64 * (q.1 - p.1) as i64
        };
        let (lo, hi) = (t(r).min(t(s)), t(r).max(t(s)));
        return lo < t(q) && hi > 0;
    }
    if p == r || p == s || q == r || q == s {
        return false;
    }
    let (d3, d4) = (orient(p, q, r).signum(), orient(p, q, s).signum());
    d1 * d2 <= 0 && d3 * d4 <= 0
}

/// Portals to new points (or to vertices the triangulation does not join to their notch)
/// accepted in this round, with the triangles each one crosses.
#[derive(Default)]
struct Round {
    portals: Vec<(Point, Point)>,
    added: Vec<(Point, usize)>,
    by_tri: HashMap<u32, Vec<usize>>,
}

impl Round {
    fn clashes(&self, p: Point, q: Point, path: &[u32]) -> bool {
        path.iter().any(|t| {
            self.by_tri.get(t).is_some_and(|ids| {
                ids.iter().any(|&i| {
                    let (r, s) = self.portals[i];
                    clash(p, q, r, s)
                })
            })
        })
    }

    fn accept(&mut self, p: Point, q: Point, wall: Option<usize>, path: Vec<u32>) {
        for t in path {
            self.by_tri.entry(t).or_default().push(self.portals.len());
        }
        self.portals.push((p, q));
        if let Some(w) = wall {
            self.added.push((q, w));
        }
    }
}

/// The closest point of the region that notch `v` can see inside `cone` and join with one
/// portal: a vertex (joined by a diagonal already or not), or a grid point on a wall. `fan`
/// are the rays around `v` (counter-clockwise, consecutive ones bounding a triangle) between
/// which the cone lies. Returns the point, its wall (`None` for a vertex) and the triangles
/// the portal crosses (none for a diagonal).
fn reach(
    mesh: &Mesh,
    v: u32,
    fan: &[u32],
    cone: &Cone,
) -> Option<(Point, Option<usize>, Vec<u32>)> {
    let vp = mesh.verts[v as usize];
    let rel = |x: u32| {
        let p = mesh.verts[x as usize];
        ((p.0 - vp.0) as i64, (p.1 - vp.1) as i64)
    };
    let mut heap = std::collections::BinaryHeap::new();
    let mut seen: HashSet<u32> = HashSet::default();
    for &r in &fan[..fan.len() - 1] {
        let start = mesh.tri_of[&(v, r)];
        if seen.insert(start) {
            heap.push(std::cmp::Reverse((0u64, start)));
        }
    }
    // (squared length, point): shorter first, ties by coordinates.
    type Best = ((i64, Point), Option<usize>, Vec<u32>);
    let mut best: Option<Best> = None;
    let mut visits = 0;
    while let Some(std::cmp::Reverse((bound, t))) = heap.pop() {
        if best
            .as_ref()
            .is_some_and(|b| f64::from_bits(bound) >= b.0 .0 as f64)
        {
            break;
        }
        visits += 1;
        if visits > SEARCH {
            break;
        }
        let tri = mesh.tris[t as usize];
        for k in 0..3 {
            let (x, y) = (tri[k], tri[(k + 1) % 3]);
            let mut offer = |w: (i64, i64), vertex: Option<u32>, wall: Option<usize>| {
                let q = (vp.0 + w.0 as i32, vp.1 + w.1 as i32);
                let rank = (w.0 * w.0 + w.1 * w.1, q);
                if best.as_ref().is_some_and(|b| b.0 <= rank) {
                    return;
                }
                if let Some(path) = sight(mesh, v, fan, q, vertex) {
                    best = Some((rank, wall, path));
                }
            };
            if x != v && cone.holds(rel(x)) {
                offer(rel(x), Some(x), None);
            }
            match mesh.tri_of.get(&(y, x)) {
                Some(&u) => {
                    if x != v
                        && y != v
                        && !mesh.fixed.contains(&key(x, y))
                        && cone.meets(rel(x), rel(y))
                        && seen.insert(u)
                    {
                        heap.push(std::cmp::Reverse((
                            segment_dist2(rel(x), rel(y)).to_bits(),
                            u,
                        )));
                    }
                }
                None => {
                    if let Some(&w) = mesh.wall.get(&(x, y)) {
                        if let Some(q) = cone.closest_on(rel(x), rel(y)) {
                            offer(q, None, Some(w));
                        }
                    }
                }
            }
        }
    }
    best.map(|((_, q), wall, path)| (q, wall, path))
}

/// Squared distance from the origin to the segment `p`..`q`.
fn segment_dist2(p: (i64, i64), q: (i64, i64)) -> f64 {
    let (p, d) = (
        (p.0 as f64, p.1 as f64),
        ((q.0 - p.0) as f64, (q.1 - p.1) as f64),
    );
    let len2 = d.0 * d.0 + d.1 * d.1;
    let s = if len2 > 0.0 {
        (-(p.0 * d.0 + p.1 * d.1) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let c = (p.0 + s * d.0, p.1 + s * d.1);
    c.0 * c.0 + c.1 * c.1
}

/// The triangles the segment from `v` to `q` crosses (see [`walk`]), starting in the triangle
/// of the fan around `v` that the segment leaves `v` through; an empty path when `q` is the
/// vertex at the end of one of the fan's rays (a diagonal or a fixed portal).
fn sight(mesh: &Mesh, v: u32, fan: &[u32], q: Point, vertex: Option<u32>) -> Option<Vec<u32>> {
    let at = |x: u32| mesh.verts[x as usize];
    let vp = at(v);
    for m in 0..fan.len() - 1 {
        let (r, l) = (fan[m], fan[m + 1]);
        if at(r) == q {
            return (vertex == Some(r)).then(Vec::new);
        }
        if orient(vp, q, at(r)) < 0 && orient(vp, q, at(l)) > 0 {
            return walk(mesh, v, (r, l), q, vertex);
        }
    }
    None
}

/// The triangles the segment from `v` to `q` crosses, from the triangle `(v, r, l)`, if it
/// stays inside the region: it must not meet the boundary, a fixed portal or a vertex before
/// `q`, and must end on a boundary piece (`vertex` None) or at the vertex `vertex`. Exact.
fn walk(
    mesh: &Mesh,
    v: u32,
    (mut r, mut l): (u32, u32),
    q: Point,
    vertex: Option<u32>,
) -> Option<Vec<u32>> {
    let at = |x: u32| mesh.verts[x as usize];
    let vp = at(v);
    if orient(vp, q, at(r)) >= 0 || orient(vp, q, at(l)) <= 0 {
        return None;
    }
    let mut path = vec![mesh.tri_of[&(v, r)]];
    for _ in 0..mesh.tris.len() {
        // The segment leaves the current triangle through its edge r -> l, or ends before.
        let o = orient(at(r), at(l), q);
        if o > 0 {
            return None;
        }
        if o == 0 {
            return (vertex.is_none() && !mesh.tri_of.contains_key(&(l, r))).then_some(path);
        }
        let &t = mesh.tri_of.get(&(l, r))?;
        if mesh.fixed.contains(&key(l, r)) {
            return None;
        }
        path.push(t);
        let tri = mesh.tris[t as usize];
        let w = *tri.iter().find(|&&x| x != l && x != r)?;
        match orient(vp, q, at(w)).signum() {
            0 => return (vertex == Some(w)).then_some(path),
            -1 => r = w,
            _ => l = w,
        }
    }
    None
}

/// The corners of the mesh (see [`Corner`]); None if the triangles do not close around a
/// boundary vertex.
fn corners_of(mesh: &Mesh) -> Option<Vec<Corner>> {
    let tri_of = &mesh.tri_of;
    let boundary = boundary_of(tri_of);
    let mut corners = Vec::with_capacity(boundary.len());
    for &(v, n) in &boundary {
        let mut rays = vec![n];
        let mut cur = n;
        // Turn counter-clockwise around v through the triangles until the boundary edge
        // p -> v: the triangle holding v -> cur has the edge x -> v; x is the next ray.
        loop {
            let tri = mesh.tris[tri_of[&(v, cur)] as usize];
            let k = tri.iter().position(|&w| w == v)?;
            let x = tri[(k + 2) % 3];
            rays.push(x);
            if !tri_of.contains_key(&(v, x)) {
                break;
            }
            cur = x;
            if rays.len() > mesh.tris.len() + 2 {
                return None;
            }
        }
        corners.push(Corner { v, rays });
    }
    Some(corners)
}

/// ANavMG (seed 002). Every notch (a corner whose angle exceeds pi + tau) gets one portal
/// inside its area of interest (the cone of directions that split it into two tau-convex
/// angles); a portal already there for an earlier notch counts for it too:
/// * vertex-vertex serving two notches: the shortest diagonal of the triangulation in the
///   cone whose other end is a notch it splits as well;
/// * else vertex-vertex: the shortest diagonal in the cone;
/// * when none: the closest point the notch sees in the cone (the triangles of the whole
///   cone are searched), a vertex or a grid point on a wall (`is_wall`: a boundary edge,
///   region on its left, with nothing walkable across; only there may new points go, since a
///   point on a border shared with another region would be a T-junction for that region's
///   polygons). Points inside existing portals are never used: they are not on the grid in
///   general and would be T-junctions; a portal's ends are vertices and count as such;
/// * when that fails too (the cone ends on a shared border, or out of reach): the two
///   diagonals that bracket the cone.
///
/// Portals to new points are fixed in rounds: the ones accepted in a round (none crossing
/// another) become edges of a new triangulation, and the next round starts over from it, so
/// a later notch can end its portal at a fixed portal's end (the paper's vertex-portal case).
/// Then portals that became unnecessary are removed, longest first, and a point on a wall
/// left with no portal is taken out again. Cells are the pieces the kept portals cut.
/// Falls back to [`hertel_mehlhorn`] if a cell does not come out simple (never seen; a safety
/// net), which the second value reports.
///
/// Seed 002's own rule (the closest point in the cone whatever it is, diagonal or not) is
/// [`Rule::Closest`]; it is measured, not used (more cells on our plans).
pub fn anavmg(
    verts: Vec<Point>,
    tris: Vec<[u32; 3]>,
    is_wall: &dyn Fn(Point, Point) -> bool,
    tau: f64,
) -> (RegionPolygons, bool) {
    anavmg_with(verts, tris, is_wall, tau, &Settings::default())
}

/// Which portal a notch gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// The shortest diagonal of the triangulation in the cone; the closest point seen there
    /// only when there is none (tessera before the paper's rule, the search now over the whole
    /// cone rather than one triangle). Measured only.
    #[cfg_attr(not(test), allow(dead_code))]
    Diagonals,
    /// Seed 002, 3.2: the closest point seen in the cone, whatever it is (a vertex joined by
    /// a diagonal, another vertex, a grid point on a wall). Measured only: on our floor plans
    /// and random rooms it gives more cells than the other two (benches/RESULTS-polygons.md).
    #[cfg_attr(not(test), allow(dead_code))]
    Closest,
    /// The shortest diagonal in the cone that also splits the notch at its other end (a
    /// vertex-vertex portal serving two notches, which the paper credits for its low ratios),
    /// else as [`Rule::Diagonals`]. The default.
    BothEnds,
}

/// How [`anavmg_with`] runs: at most `rounds` rounds of portals off the triangulation's
/// diagonals (0: diagonals only), the selection `rule`, and with or without the removal of
/// portals that became unnecessary (seed 002, Table 1, first column: without).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub rounds: usize,
    pub rule: Rule,
    pub removal: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rounds: ROUNDS,
            rule: Rule::BothEnds,
            removal: true,
        }
    }
}

/// [`anavmg`] with explicit [`Settings`].
pub(crate) fn anavmg_with(
    verts: Vec<Point>,
    tris: Vec<[u32; 3]>,
    is_wall: &dyn Fn(Point, Point) -> bool,
    tau: f64,
    settings: &Settings,
) -> (RegionPolygons, bool) {
    let outline = Outline::new(verts, tris, is_wall);
    match partition(&outline, tau, settings) {
        Some(p) => (p, false),
        None => (
            hertel_mehlhorn(outline.verts.clone(), outline.tris.clone()),
            true,
        ),
    }
}

fn partition(outline: &Outline, tau: f64, settings: &Settings) -> Option<RegionPolygons> {
    let mut plan = Plan::default();
    let mut mesh = outline.mesh();
    let mut round = 0;
    let (corners, mut chosen) = loop {
        let corners = corners_of(&mesh)?;
        let (chosen, fresh) = choose(&mesh, &corners, tau, round < settings.rounds, settings.rule)?;
        if fresh.portals.is_empty() {
            break (corners, chosen);
        }
        plan.added.extend(fresh.added);
        plan.portals.extend(fresh.portals);
        mesh = outline.build(&plan).ok()?;
        round += 1;
    };
    let dir = |a: u32, b: u32| {
        let (p, q) = (mesh.verts[a as usize], mesh.verts[b as usize]);
        ((q.0 - p.0) as i64, (q.1 - p.1) as i64)
    };
    // Remove portals that became unnecessary, longest first.
    let corner_of = corner_index(&corners);
    let mut order: Vec<(u32, u32)> = chosen.iter().copied().collect();
    order.sort_unstable_by_key(|&(a, b)| {
        let d = dir(a, b);
        (-(d.0 * d.0 + d.1 * d.1), a, b)
    });
    for (a, b) in order.into_iter().filter(|_| settings.removal) {
        chosen.remove(&(a, b));
        let still_fine = [(a, b), (b, a)]
            .iter()
            .all(|&(u, w)| match corner_of.get(&(u, w)) {
                Some(&c) => wide(&mesh, &corners[c], &chosen, tau).is_none(),
                None => true,
            });
        if !still_fine {
            chosen.insert((a, b));
        }
    }
    // A point on a wall whose portals all went: triangulate again without it.
    let first_added = outline.verts.len() as u32;
    let used: HashSet<u32> = chosen.iter().flat_map(|&(a, b)| [a, b]).collect();
    if (first_added..mesh.verts.len() as u32).any(|v| !used.contains(&v)) {
        let at = |v: u32| mesh.verts[v as usize];
        let mut order: Vec<(u32, u32)> = chosen.iter().copied().collect();
        order.sort_unstable_by_key(|&(a, b)| (at(a), at(b)));
        let plan = Plan {
            added: (first_added..mesh.verts.len() as u32)
                .filter(|v| used.contains(v))
                .map(|v| (at(v), mesh.added_on[(v - first_added) as usize]))
                .collect(),
            portals: order.iter().map(|&(a, b)| (at(a), at(b))).collect(),
        };
        mesh = outline.build(&plan).ok()?;
        chosen = mesh.fixed.clone();
    }
    let mut out = cells(&mesh, &chosen, tau)?;
    out.on_walls = mesh
        .added_on
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let (a, b) = outline.edges[w];
            (
                first_added + i as u32,
                outline.verts[a as usize],
                outline.verts[b as usize],
            )
        })
        .collect();
    Some(out)
}

/// The corner each diagonal leaves from: (corner vertex, other end) -> index in `corners`.
fn corner_index(corners: &[Corner]) -> HashMap<(u32, u32), usize> {
    let mut corner_of = HashMap::default();
    for (c, corner) in corners.iter().enumerate() {
        for &w in &corner.rays[1..corner.rays.len() - 1] {
            corner_of.insert((corner.v, w), c);
        }
    }
    corner_of
}

/// The sub-angle of a corner, between consecutive kept rays (its boundary edges and the
/// portals in `chosen`), that is still wider than pi + tau: indices into its rays.
fn wide(
    mesh: &Mesh,
    corner: &Corner,
    chosen: &HashSet<(u32, u32)>,
    tau: f64,
) -> Option<(usize, usize)> {
    wide_with(mesh, corner, chosen, None, tau)
}

/// [`wide`] as if the portal `extra` were chosen too.
fn wide_with(
    mesh: &Mesh,
    corner: &Corner,
    chosen: &HashSet<(u32, u32)>,
    extra: Option<(u32, u32)>,
    tau: f64,
) -> Option<(usize, usize)> {
    let dir = |b: u32| {
        let (p, q) = (mesh.verts[corner.v as usize], mesh.verts[b as usize]);
        ((q.0 - p.0) as i64, (q.1 - p.1) as i64)
    };
    let last = corner.rays.len() - 1;
    let kept: Vec<usize> = (0..corner.rays.len())
        .filter(|&i| {
            let k = key(corner.v, corner.rays[i]);
            i == 0 || i == last || chosen.contains(&k) || extra == Some(k)
        })
        .collect();
    kept.windows(2)
        .map(|w| (w[0], w[1]))
        .find(|&(i, j)| !within(dir(corner.rays[i]), dir(corner.rays[j]), tau))
}

/// One round of portal choices over `mesh`: the diagonals chosen (with the fixed portals),
/// and the portals to points off the triangulation's diagonals accepted (`fresh`, when
/// allowed). When `fresh` is not empty the diagonals are only provisional.
fn choose(
    mesh: &Mesh,
    corners: &[Corner],
    tau: f64,
    fresh_allowed: bool,
    rule: Rule,
) -> Option<(HashSet<(u32, u32)>, Round)> {
    let dir = |a: u32, b: u32| {
        let (p, q) = (mesh.verts[a as usize], mesh.verts[b as usize]);
        ((q.0 - p.0) as i64, (q.1 - p.1) as i64)
    };
    let corner_of = corner_index(corners);
    let mut chosen = mesh.fixed.clone();
    let mut fresh = Round::default();
    'corners: for corner in corners {
        while let Some((i, j)) = wide(mesh, corner, &chosen, tau) {
            let (v, rays) = (corner.v, &corner.rays);
            let (a, b) = (dir(v, rays[i]), dir(v, rays[j]));
            // Inside the area of interest: both new angles within pi + tau.
            let in_cone: Vec<usize> = (i + 1..j)
                .filter(|&m| {
                    let r = dir(v, rays[m]);
                    within(a, r, tau) && within(r, b, tau)
                })
                .collect();
            let shortest = |ms: &mut dyn Iterator<Item = usize>| {
                ms.min_by_key(|&m| {
                    let r = dir(v, rays[m]);
                    (r.0 * r.0 + r.1 * r.1, rays[m])
                })
            };
            let best = shortest(&mut in_cone.iter().copied());
            if rule == Rule::BothEnds {
                // A diagonal to a notch whose own wide angle it splits too.
                let mut both = in_cone.iter().copied().filter(|&m| {
                    let Some(&c) = corner_of.get(&(rays[m], v)) else {
                        return false;
                    };
                    if wide(mesh, &corners[c], &chosen, tau).is_none() {
                        return false;
                    }
                    wide_with(mesh, &corners[c], &chosen, Some(key(v, rays[m])), tau).is_none()
                });
                if let Some(m) = shortest(&mut both) {
                    chosen.insert(key(v, rays[m]));
                    continue;
                }
            }
            // The closest point the notch sees in its cone (for the paper's rule, even when a
            // diagonal is there).
            if fresh_allowed && (rule == Rule::Closest || best.is_none()) {
                let cone = Cone::new(a, b, tau);
                if let Some((q, wall, path)) = reach(mesh, v, &rays[i..=j], &cone) {
                    let p = mesh.verts[v as usize];
                    let joined = rays[i + 1..j]
                        .iter()
                        .find(|&&w| mesh.verts[w as usize] == q);
                    if let (true, Some(&w)) = (path.is_empty(), joined) {
                        chosen.insert(key(v, w));
                        continue;
                    }
                    if !path.is_empty() {
                        if !fresh.clashes(p, q, &path) {
                            fresh.accept(p, q, wall, path);
                        }
                        // Either way this corner waits for the next round.
                        continue 'corners;
                    }
                }
            }
            if let Some(m) = best {
                chosen.insert(key(v, rays[m]));
                continue;
            }
            // The cone lies inside one triangle's angle, between rays l and f.
            let l = (i..j).filter(|&m| within(a, dir(v, rays[m]), tau)).max()?;
            let f = (i + 1..=j)
                .filter(|&m| within(dir(v, rays[m]), b, tau))
                .min()?;
            let new_l = chosen.insert(key(v, rays[l]));
            if !(chosen.insert(key(v, rays[f])) || new_l) {
                return None;
            }
        }
    }
    Some((chosen, fresh))
}

/// Cells: triangles joined across every diagonal that is not a portal, each traced as one
/// counter-clockwise cycle; None if one does not come out simple (or convex when tau is 0).
fn cells(mesh: &Mesh, chosen: &HashSet<(u32, u32)>, tau: f64) -> Option<RegionPolygons> {
    let (tris, tri_of) = (&mesh.tris, &mesh.tri_of);
    let dir = |a: u32, b: u32| {
        let (p, q) = (mesh.verts[a as usize], mesh.verts[b as usize]);
        ((q.0 - p.0) as i64, (q.1 - p.1) as i64)
    };
    let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
    for (&(a, b), &t) in tri_of {
        if a < b && !chosen.contains(&(a, b)) {
            if let Some(&u) = tri_of.get(&(b, a)) {
                let (ra, rb) = (find(&mut parent, t), find(&mut parent, u));
                if ra != rb {
                    parent[ra.max(rb) as usize] = ra.min(rb);
                }
            }
        }
    }
    let mut out = RegionPolygons {
        verts: mesh.verts.clone(),
        ..Default::default()
    };
    let mut index: HashMap<u32, usize> = HashMap::default();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for t in 0..tris.len() as u32 {
        let root = find(&mut parent, t);
        let k = *index.entry(root).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[k].push(t);
    }
    for group in &groups {
        let mine: HashSet<u32> = group.iter().copied().collect();
        // The cell's border: its triangles' edges whose twin is not in the cell.
        let mut next: HashMap<u32, u32> = HashMap::default();
        let mut edges = 0;
        for &t in group {
            let tri = tris[t as usize];
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let inside = tri_of.get(&(b, a)).is_some_and(|u| mine.contains(u));
                if !inside {
                    edges += 1;
                    if next.insert(a, b).is_some() {
                        return None;
                    }
                }
            }
        }
        let start = *next.keys().min()?;
        let mut cycle = vec![start];
        let mut cur = next[&start];
        while cur != start {
            cycle.push(cur);
            if cycle.len() > edges {
                return None;
            }
            cur = *next.get(&cur)?;
        }
        let n = cycle.len();
        let convex = (0..n).all(|k| {
            let (p, v, q) = (cycle[k], cycle[(k + 1) % n], cycle[(k + 2) % n]);
            within(dir(p, v), dir(v, q), 0.0) || tau > 0.0
        });
        if n != edges || !convex {
            return None;
        }
        out.polys.push(cycle);
        out.tris
            .push(group.iter().map(|&t| tris[t as usize]).collect());
    }
    Some(out)
}
