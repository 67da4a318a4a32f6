//! What a convex partition of one triangulated region gives back ([`RegionPolygons`]), and the
//! small pieces both partitions share: counting notches, union-find over triangles, and the
//! key of an undirected edge.
//!
//! The partitions themselves are one per file: [`crate::hertel_mehlhorn`] (seed 000, 5.1.3)
//! and [`crate::anavmg`] (seed 002); both start from [`crate::triangulate`].

use tessera_artifacts::Point;
use tessera_geom::predicates::orient;

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

/// An undirected edge by its two vertices, smaller first.
pub(crate) fn edge_key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// The root of `x` in the union-find forest `parent` (paths halved on the way).
pub(crate) fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        parent[x as usize] = parent[parent[x as usize] as usize];
        x = parent[x as usize];
    }
    x
}

/// Test helper: every polygon of `polys` is convex (straight angles allowed) and together
/// they cover twice-area `want`.
#[cfg(test)]
pub(crate) fn convex_cover(polys: &RegionPolygons, want: i64) {
    let mut sum = 0;
    for c in &polys.polys {
        let pts: Vec<Point> = c.iter().map(|&v| polys.verts[v as usize]).collect();
        let n = pts.len();
        for k in 0..n {
            assert!(
                orient(pts[k], pts[(k + 1) % n], pts[(k + 2) % n]) >= 0,
                "{c:?}"
            );
        }
        sum += tessera_geom::predicates::twice_area(&pts);
    }
    assert_eq!(sum, want);
}
