//! Constrained Delaunay triangulation of one region, outer contour and holes.
//!
//! Based on: G. Saupin et al., "Robust and Scalable Navmesh Generation with multiple levels
//! and stairs support", WSCG 2013 (seed 000), section 5.1: each merged region is
//! triangulated from its outer contour and the contours of its holes (5.1.1, 5.1.2). The
//! triangulation is spade's constrained Delaunay triangulation (every contour edge is kept as
//! an edge; L. P. Chew, "Constrained Delaunay triangulations", Algorithmica 4, 1989). Grid
//! coordinates are exact in `f64`, and spade's orientation tests are robust.
//!
//! How this departs from the paper: the paper removes the triangles inside holes by flooding
//! from one seed vertex per hole (the bottom-left vertex its contour labelling, Algorithm 7,
//! stores). Here a triangle is inside when an odd number of boundary edges separate it from
//! the outside, found by one flood over the triangles from those on the convex hull. That
//! needs no labelling, and it also serves [`crate::anavmg`], which triangulates again with
//! its portals as extra constraint edges (crossing a portal keeps the parity). Triangles come
//! out in a fixed order (each from its smallest index, sorted), whatever spade's internal
//! order is. Crossing constraint edges and repeated vertices are refused
//! ([`TriangulationError`]), never repaired.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use spade::{ConstrainedDelaunayTriangulation, Point2, Triangulation};
use tessera_artifacts::Point;

use crate::partition::edge_key;

/// Why a region could not be triangulated. Contours that passed simplification's checks
/// (simple, apart, correctly oriented) never give one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TriangulationError {
    /// spade refused a vertex (a coordinate out of its range).
    #[error("triangulation failed: {0}")]
    Insertion(#[from] spade::InsertionError),
    /// Constraint edges (contour edges or portals) that cross each other.
    #[error("{0} crossing constraint edges")]
    CrossingConstraints(usize),
    /// Two vertices at the same point, which the triangulation merged.
    #[error("duplicate vertices")]
    DuplicateVertices,
}

/// Triangulates the region bounded by `contours` (outer counter-clockwise, holes clockwise; no
/// two segments crossing) and returns the triangles inside it, over the deduplicated vertices.
pub fn triangulate(
    contours: &[Vec<Point>],
) -> Result<(Vec<Point>, Vec<[u32; 3]>), TriangulationError> {
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
pub(crate) fn triangulate_edges(
    verts: &[Point],
    boundary: &[[u32; 2]],
    portals: &[[u32; 2]],
) -> Result<Vec<[u32; 3]>, TriangulationError> {
    let points: Vec<Point2<f64>> = verts
        .iter()
        .map(|p| Point2::new(p.0 as f64, p.1 as f64))
        .collect();
    let edges: Vec<[usize; 2]> = boundary
        .iter()
        .chain(portals)
        .map(|e| e.map(|v| v as usize))
        .collect();
    let inner: HashSet<(u32, u32)> = portals.iter().map(|e| edge_key(e[0], e[1])).collect();
    let mut conflicts = 0usize;
    let cdt =
        ConstrainedDelaunayTriangulation::<Point2<f64>>::try_bulk_load_cdt(points, edges, |_| {
            conflicts += 1
        })?;
    if conflicts > 0 {
        return Err(TriangulationError::CrossingConstraints(conflicts));
    }
    if cdt.num_vertices() != verts.len() {
        return Err(TriangulationError::DuplicateVertices);
    }
    // Inside = an odd number of boundary edges crossed from the outside (portals lie inside).
    let crosses_boundary = |e: spade::handles::DirectedEdgeHandle<_, _, _, _>| {
        let [a, b] = e.vertices().map(|v| v.fix().index() as u32);
        cdt.is_constraint_edge(e.fix().as_undirected()) && !inner.contains(&edge_key(a, b))
    };
    // Per face (by index; 0 is the outer face): 0 not reached yet, 1 outside, 2 inside.
    let mut parity = vec![0u8; cdt.num_all_faces()];
    let mark = |inside: bool| if inside { 2u8 } else { 1u8 };
    let mut queue = Vec::new();
    for face in cdt.inner_faces() {
        for e in face.adjacent_edges() {
            if e.rev().face().is_outer() {
                let f = face.fix();
                if parity[f.index()] == 0 {
                    parity[f.index()] = mark(crosses_boundary(e));
                    queue.push(f);
                }
                break;
            }
        }
    }
    while let Some(f) = queue.pop() {
        let here = parity[f.index()] == 2;
        for e in cdt.face(f).adjacent_edges() {
            if let Some(g) = e.rev().face().as_inner() {
                let g = g.fix();
                if parity[g.index()] == 0 {
                    parity[g.index()] = mark(here ^ crosses_boundary(e));
                    queue.push(g);
                }
            }
        }
    }
    let mut tris = Vec::new();
    for face in cdt.inner_faces() {
        if parity[face.fix().index()] == 2 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_geom::predicates::twice_area;

    #[test]
    fn a_square_with_a_hole_triangulates_to_its_area() {
        let outer = vec![(0, 0), (10, 0), (10, 10), (0, 10)];
        let hole = vec![(4, 4), (4, 6), (6, 6), (6, 4)];
        let (verts, tris) = triangulate(&[outer, hole]).unwrap();
        let total: i64 = tris
            .iter()
            .map(|t| twice_area(&t.map(|v| verts[v as usize])))
            .sum();
        assert_eq!(total, 2 * (100 - 4));
    }

    #[test]
    fn crossing_contours_are_refused() {
        let a = vec![(0, 0), (4, 0), (4, 4), (0, 4)];
        let b = vec![(2, 2), (6, 2), (6, 6), (2, 6)];
        assert!(matches!(
            triangulate(&[a, b]),
            Err(TriangulationError::CrossingConstraints(_))
        ));
    }
}
