//! Seeing from a notch: the closest point of the region inside its area of interest that
//! one portal can reach (seed 002, 3.2: "the closest element in the geometry that falls
//! within its area of interest"), found by a best-first walk over the triangles of the cone,
//! and the exact test that a portal stays inside the region.
//!
//! The walk orders triangles by their distance to the notch in `f64` (rounded:
//! [`approx_segment_dist2`]); which point wins is decided exactly (squared lengths and
//! orientations on the grid, [`tessera_geom::predicates`]).

use rustc_hash::FxHashSet as HashSet;
use tessera_artifacts::Point;
use tessera_geom::predicates::{length2, orient, GridVector};

use super::cone::Cone;
use super::mesh::Mesh;
use crate::partition::edge_key;

/// Triangles searched from one notch for the closest wall point or vertex in its cone.
const SEARCH: usize = 512;

/// The closest point of the region that notch `v` can see inside `cone` and join with one
/// portal: a vertex (joined by a diagonal already or not), or a grid point on a wall. `fan`
/// are the rays around `v` (counter-clockwise, consecutive ones bounding a triangle) between
/// which the cone lies. Returns the point, its wall (`None` for a vertex) and the triangles
/// the portal crosses (none for a diagonal).
pub(super) fn reach(
    mesh: &Mesh,
    v: u32,
    fan: &[u32],
    cone: &Cone,
) -> Option<(Point, Option<usize>, Vec<u32>)> {
    let vp = mesh.verts[v as usize];
    let rel = |x: u32| mesh.dir(v, x);
    let mut heap = std::collections::BinaryHeap::new();
    let mut seen: HashSet<u32> = HashSet::default();
    for &r in &fan[..fan.len() - 1] {
        let start = mesh.tri_of(v, r).expect("a ray of the fan");
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
            let mut offer = |w: GridVector, vertex: Option<u32>, wall: Option<usize>| {
                let q = (vp.0 + w.0 as i32, vp.1 + w.1 as i32);
                let rank = (length2(w), q);
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
            match mesh.tri_of(y, x) {
                Some(u) => {
                    if x != v
                        && y != v
                        && !mesh.fixed.contains(&edge_key(x, y))
                        && cone.meets(rel(x), rel(y))
                        && seen.insert(u)
                    {
                        heap.push(std::cmp::Reverse((
                            approx_segment_dist2(rel(x), rel(y)).to_bits(),
                            u,
                        )));
                    }
                }
                None => {
                    if let Some(w) = mesh.wall(x, y) {
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

/// Squared distance from the origin (the notch) to the segment `p`..`q`, in `f64`: rounded,
/// used only to order the search.
fn approx_segment_dist2(p: GridVector, q: GridVector) -> f64 {
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
    let mut path = vec![mesh.tri_of(v, r)?];
    for _ in 0..mesh.tris.len() {
        // The segment leaves the current triangle through its edge r -> l, or ends before.
        let o = orient(at(r), at(l), q);
        if o > 0 {
            return None;
        }
        if o == 0 {
            return (vertex.is_none() && !mesh.edges.has(l, r)).then_some(path);
        }
        let t = mesh.tri_of(l, r)?;
        if mesh.fixed.contains(&edge_key(l, r)) {
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
