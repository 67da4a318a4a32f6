//! The seed's own contour extraction, kept as an oracle for [`trace_tile`](crate::trace_tile).
//!
//! Based on: seed 000, 4.1.2-4.1.3 (corner points by the neighbour configuration masks, slash
//! and antislash points) and 4.2 (Alg. 3-5: corner points into rows and columns, even-odd
//! pairing, contours by alternating vertical and horizontal links); the outer contour is the
//! one through the region's bottom-left vertex, as Alg. 7 (5.1.1) labels it.
//!
//! For regions wholly inside one tile. Tests check that tracing finds the same corner points
//! and the same contours.

use tessera_artifacts::{Contour, Point, SpanField, TileRegions, NO_NEIGHBOUR, NO_REGION};

use crate::grid::LevelField;

/// What kind of corner point a vertex is (seed 000, 4.1.2-4.1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CornerKind {
    /// A convex or concave corner.
    Normal,
    /// Two cells of the region touch at the point along a `/` diagonal.
    Slash,
    /// Along a `\` diagonal.
    Antislash,
}

/// The neighbour configuration bits of seed 000 (4.1.3), around span X:
///
/// ```text
///  1   2   4        (+y up)
///  8   X  16
/// 32  64 128
/// ```
const NC: [(i32, i32, u8); 8] = [
    (-1, 1, 1),
    (0, 1, 2),
    (1, 1, 4),
    (-1, 0, 8),
    (1, 0, 16),
    (-1, -1, 32),
    (0, -1, 64),
    (1, -1, 128),
];

/// The corner points of every region of a tile, found span by span with the seed's neighbour
/// configuration masks, on the tile extended by its ring (so that second-class points are
/// found and third-class points never appear). A normal corner is listed once per region
/// however many of its cells see it; a slash or antislash point is listed twice (the seed's
/// duplication), once by each diagonal cell. Returned sorted by (region, point, kind).
pub fn corner_points(field: &SpanField, regions: &TileRegions) -> Vec<(u32, Point, CornerKind)> {
    let core = field.core;
    let lf = LevelField::new(field, regions.levels);
    let mut normal: Vec<(u32, Point, CornerKind)> = Vec::new();
    let mut diagonal: Vec<(u32, Point, CornerKind)> = Vec::new();
    for y in core.y0..core.y1() {
        for x in core.x0..core.x1() {
            let i = field.rect.index(x, y);
            for k in field.column_start[i] as usize..field.column_start[i + 1] as usize {
                let label = regions.labels[k];
                if label == NO_REGION {
                    continue;
                }
                let level = lf.level(k);
                let nc = NC
                    .iter()
                    .filter(|(dx, dy, _)| lf.member(x + dx, y + dy, level))
                    .fold(0u8, |acc, (_, _, bit)| acc | bit);
                // (vertex point, mask, straight-boundary values, diagonal-only value, its kind)
                let vertices = [
                    ((x, y + 1), 11u8, [8u8, 2u8], 1u8, CornerKind::Antislash),
                    ((x + 1, y + 1), 22, [2, 16], 4, CornerKind::Slash),
                    ((x, y), 104, [8, 64], 32, CornerKind::Slash),
                    ((x + 1, y), 208, [16, 64], 128, CornerKind::Antislash),
                ];
                for (p, mask, straight, diag, kind) in vertices {
                    let m = nc & mask;
                    if m == mask || straight.contains(&m) {
                        continue;
                    }
                    if m == diag {
                        diagonal.push((label, p, kind));
                    } else {
                        normal.push((label, p, CornerKind::Normal));
                    }
                }
            }
        }
    }
    normal.sort_unstable();
    normal.dedup();
    normal.extend(diagonal);
    normal.sort_unstable();
    normal
}

/// The seed's own contour extraction (Alg. 3-5) for regions wholly inside one tile: corner
/// points into rows and columns (slash and antislash points twice), even-odd pairing along
/// each row and each column, then walking alternately vertical and horizontal links. The
/// copies of a duplicated point are told apart geometrically (the seed's Table 1 is garbled):
/// the first copy in its row pairs westward, the second eastward; as in [`trace_tile`], each
/// cycle keeps to one piece of the complement, so an antislash point's west copy continues
/// south (both edges bound the south-west cell outside the region) and a slash point's west
/// copy continues north. Contours come out with the region on the left, like
/// [`trace_tile`]'s: this is the cross-check that tracing implements the seed's method.
///
/// [`trace_tile`]: crate::trace_tile
pub fn contours_by_pairing(field: &SpanField, regions: &TileRegions) -> Vec<Contour> {
    let corners = corner_points(field, regions);
    let lf = LevelField::new(field, regions.levels);
    let mut out = Vec::new();
    let mut start = 0;
    while start < corners.len() {
        let region = corners[start].0;
        let end = corners[start..]
            .iter()
            .position(|c| c.0 != region)
            .map_or(corners.len(), |n| start + n);
        out.extend(pair_region(&lf, region, &corners[start..end], regions));
        start = end;
    }
    out
}

/// Alg. 3-5 for one region's corner points (sorted by point; duplicates adjacent).
fn pair_region(
    lf: &LevelField,
    region: u32,
    corners: &[(u32, Point, CornerKind)],
    regions: &TileRegions,
) -> Vec<Contour> {
    // Vertices: (point, copy, kind); copy 0 is the west-linked copy of a duplicated point.
    let mut v: Vec<(Point, u8, CornerKind)> = Vec::with_capacity(corners.len());
    for (i, c) in corners.iter().enumerate() {
        let copy = if i > 0 && corners[i - 1].1 == c.1 {
            1
        } else {
            0
        };
        v.push((c.1, copy, c.2));
    }
    let n = v.len();
    let mut horizontal = vec![usize::MAX; n];
    let mut vertical = vec![usize::MAX; n];
    // Rows: by x, copies in order (the first copy takes the west partner).
    let mut rows: Vec<usize> = (0..n).collect();
    rows.sort_by_key(|&i| (v[i].0 .1, v[i].0 .0, v[i].1));
    // Columns: by y; of two copies, the one continuing south comes first.
    let south_first = |i: usize| -> u8 {
        match (v[i].2, v[i].1) {
            (CornerKind::Antislash, 0) | (CornerKind::Slash, 1) => 0,
            (CornerKind::Normal, _) => 0,
            _ => 1,
        }
    };
    let mut cols: Vec<usize> = (0..n).collect();
    cols.sort_by_key(|&i| (v[i].0 .0, v[i].0 .1, south_first(i)));
    for (order, links, same_line) in [
        (
            &rows,
            &mut horizontal,
            (|a: Point, b: Point| a.1 == b.1) as fn(Point, Point) -> bool,
        ),
        (&cols, &mut vertical, |a: Point, b: Point| a.0 == b.0),
    ] {
        let mut k = 0;
        while k < order.len() {
            // One row (or column) at a time, paired first-second, third-fourth, ...
            let mut end = k;
            while end < order.len() && same_line(v[order[k]].0, v[order[end]].0) {
                end += 1;
            }
            for pair in order[k..end].chunks(2) {
                if let [a, b] = *pair {
                    links[a] = b;
                    links[b] = a;
                }
            }
            k = end;
        }
    }
    // Alg. 5: alternate vertical and horizontal links.
    let mut used = vec![false; n];
    let mut contours = Vec::new();
    for s in 0..n {
        if used[s] || vertical[s] == usize::MAX || horizontal[s] == usize::MAX {
            continue;
        }
        let mut points = Vec::new();
        let mut cur = s;
        let mut go_vertical = true;
        loop {
            used[cur] = true;
            points.push(v[cur].0);
            let next = if go_vertical {
                vertical[cur]
            } else {
                horizontal[cur]
            };
            go_vertical = !go_vertical;
            if next == s || next == usize::MAX {
                break;
            }
            cur = next;
        }
        let first = regions.regions[region as usize].first;
        let f = lf.field;
        let column = f.rect.index(first.x, first.y);
        let level = (f.column_start[column] as usize..f.column_start[column + 1] as usize)
            .find(|&k| f.spans[k].zmax == first.zmax)
            .map(|k| lf.level(k))
            .expect("a region's first span is in the field");
        let heights = points.iter().map(|&p| lf.corner_height(p, level)).collect();
        let n = points.len();
        let mut c = Contour {
            tile: regions.tile,
            region,
            level,
            points,
            heights,
            // The seed's method finds corner points only; what lies across each edge is
            // [`trace_tile`]'s business.
            neighbours: vec![NO_NEIGHBOUR; n],
        };
        // Orientation: the region on the left. Alg. 7 labels the contour holding the region's
        // bottom-left vertex as the outer one; it runs counter-clockwise, holes clockwise.
        let first = regions.regions[region as usize].first;
        let outer = c.points.contains(&(first.x, first.y));
        if c.is_outer() != outer {
            c.points.reverse();
        }
        contours.push(c);
    }
    contours
}
