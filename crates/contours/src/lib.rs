//! Contours of flat regions (seed 000, section 4), traced per tile and joined across tiles.
//!
//! Based on: seed 000, 4.1-4.3 (corner points, contours, the three classes of tile-border
//! vertices and their removal).
//!
//! A region's boundary is made of unit grid edges between a cell of the region and a cell that
//! is not (same floor height decides membership, as in segmentation). Each edge is oriented
//! with the region on its left, so outer contours run counter-clockwise and holes clockwise.
//! At a grid point where the region touches itself diagonally (the seed's slash and antislash
//! points) two edges leave; the contour takes the right turn, so every cycle separates the
//! region from exactly one 4-connected piece of its complement, and the point is visited once
//! by each of the two cycles that meet there (or twice by one, where the region pinches). The
//! vertices of a contour are its corner points: where it changes direction.
//!
//! **Tiles.** A tile owns the edges of its core cells; it sees the one-cell ring, so it knows
//! every edge's successor, even one owned by a neighbour. [`trace_tile`] returns closed cycles
//! and open chains that leave the tile. [`ContourJoiner`] joins chains across tiles in any
//! order; where two chains meet in a straight line, the meeting point existed only because of
//! the tiling (a third-class vertex) and is removed. The joined contours equal those of a
//! single-tile bake.
//!
//! Pure: no I/O, no threads.

use rustc_hash::FxHashMap as HashMap;

use tessera_artifacts::heading::{EAST, NORTH, SOUTH, WEST};
use tessera_artifacts::{
    Chain, Contour, EdgeKey, Levels, Point, Reach, SpanField, TileContours, TileCoord, TileRegions,
    NO_NEIGHBOUR, NO_REGION, OUT_OF_REACH,
};

const STEP: [(i32, i32); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];

/// The cell on the left of an edge leaving grid point `p` with `heading` (the region's cell).
#[inline]
fn left_cell(p: Point, heading: u8) -> (i32, i32) {
    match heading {
        EAST => (p.0, p.1),
        NORTH => (p.0 - 1, p.1),
        WEST => (p.0 - 1, p.1 - 1),
        _ => (p.0, p.1 - 1),
    }
}

/// The cell on the right of that edge (outside the region).
#[inline]
fn right_cell(p: Point, heading: u8) -> (i32, i32) {
    match heading {
        EAST => (p.0, p.1 - 1),
        NORTH => (p.0, p.1),
        WEST => (p.0 - 1, p.1),
        _ => (p.0 - 1, p.1 - 1),
    }
}

/// True when cell (x, y) has a walkable span at `level` (a member of the region at that level,
/// since all cells around a grid point are 8-neighbours).
#[inline]
fn member(field: &SpanField, x: i32, y: i32, level: u32, levels: Levels) -> bool {
    if !field.rect.contains(x, y) {
        return false;
    }
    field
        .column(x, y)
        .iter()
        .any(|s| s.walkable && levels.of(s.zmax) == level)
}

/// The floor height of a region (at `level`) at grid point `p`: the highest of its floors in
/// the four cells around `p`. Decided by those four cells alone, so every tile that sees the
/// point agrees.
fn corner_height(field: &SpanField, p: Point, level: u32, levels: Levels) -> u32 {
    let mut h = 0;
    for (x, y) in [
        (p.0 - 1, p.1 - 1),
        (p.0, p.1 - 1),
        (p.0 - 1, p.1),
        (p.0, p.1),
    ] {
        if field.rect.contains(x, y) {
            for s in field.column(x, y) {
                if s.walkable && levels.of(s.zmax) == level {
                    h = h.max(s.zmax);
                }
            }
        }
    }
    h
}

/// What lies across a boundary edge whose region floor is at height `z`: the level of the
/// walkable floor of cell (x, y) nearest in height within the agent's height (the lower one
/// on a tie), marked [`OUT_OF_REACH`] beyond the climb, or [`NO_NEIGHBOUR`]. Two consecutive
/// edges with the same neighbour level border the same region (their outside cells are
/// 8-neighbours at one level).
fn neighbour_across(
    field: &SpanField,
    x: i32,
    y: i32,
    z: u32,
    reach: Reach,
    levels: Levels,
) -> u32 {
    if !field.rect.contains(x, y) {
        return NO_NEIGHBOUR;
    }
    field
        .column(x, y)
        .iter()
        .filter(|s| s.walkable && s.zmax.abs_diff(z) <= reach.height)
        .min_by_key(|s| (s.zmax.abs_diff(z), s.zmax))
        .map_or(NO_NEIGHBOUR, |s| {
            let level = levels.of(s.zmax);
            if s.zmax.abs_diff(z) <= reach.climb {
                level
            } else {
                level | OUT_OF_REACH
            }
        })
}

/// True when an edge leaves `p` with `heading` at `level`.
#[inline]
fn edge_leaves(field: &SpanField, p: Point, heading: u8, level: u32, levels: Levels) -> bool {
    let (lx, ly) = left_cell(p, heading);
    let (rx, ry) = right_cell(p, heading);
    member(field, lx, ly, level, levels) && !member(field, rx, ry, level, levels)
}

/// The heading that follows an edge arriving at `p` with `heading`: the only edge leaving `p`,
/// or the right turn where two leave (a slash or antislash point).
fn next_heading(field: &SpanField, p: Point, heading: u8, level: u32, levels: Levels) -> u8 {
    let right = (heading + 3) % 4;
    let straight = heading;
    let left = (heading + 1) % 4;
    for h in [right, straight, left] {
        if edge_leaves(field, p, h, level, levels) {
            return h;
        }
    }
    unreachable!("a boundary edge always continues")
}

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
    let levels = regions.levels;
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
                let level = levels.of(field.spans[k].zmax);
                let nc = NC
                    .iter()
                    .filter(|(dx, dy, _)| member(field, x + dx, y + dy, level, levels))
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
pub fn contours_by_pairing(field: &SpanField, regions: &TileRegions) -> Vec<Contour> {
    let corners = corner_points(field, regions);
    let mut out = Vec::new();
    let mut start = 0;
    while start < corners.len() {
        let region = corners[start].0;
        let end = corners[start..]
            .iter()
            .position(|c| c.0 != region)
            .map_or(corners.len(), |n| start + n);
        out.extend(pair_region(field, region, &corners[start..end], regions));
        start = end;
    }
    out
}

/// Alg. 3-5 for one region's corner points (sorted by point; duplicates adjacent).
fn pair_region(
    field: &SpanField,
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
        let level = regions.levels.of(regions.regions[region as usize].zmax);
        let heights = points
            .iter()
            .map(|&p| corner_height(field, p, level, regions.levels))
            .collect();
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

/// The start point of the edge on side `heading` of cell (x, y) (the side that has the cell on
/// its left when walked in that heading).
#[inline]
fn side_start(x: i32, y: i32, heading: u8) -> Point {
    match heading {
        EAST => (x, y),
        NORTH => (x + 1, y),
        WEST => (x + 1, y + 1),
        _ => (x, y + 1),
    }
}

/// The walkable span of column (x, y) at `level`, as an index into the field's spans.
#[inline]
fn span_at_level(field: &SpanField, x: i32, y: i32, level: u32, levels: Levels) -> Option<usize> {
    let i = field.rect.index(x, y);
    (field.column_start[i] as usize..field.column_start[i + 1] as usize)
        .find(|&k| field.spans[k].walkable && levels.of(field.spans[k].zmax) == level)
}

/// Traces the contours of a tile's regions (see the crate documentation). `reach` decides
/// which floor across an edge is its neighbour.
///
/// An edge is named by the span it bounds and its heading (`span * 4 + heading`: each heading
/// is one side of the cell), so the bookkeeping is three flags per side in plain arrays.
pub fn trace_tile(field: &SpanField, regions: &TileRegions, reach: Reach) -> TileContours {
    let core = field.core;
    let levels = regions.levels;
    let n = field.spans.len() * 4;
    let mut is_edge = vec![false; n];
    let mut cell_of = vec![(0i32, 0i32); field.spans.len()];
    let mut order: Vec<usize> = Vec::new();
    for y in core.y0..core.y1() {
        for x in core.x0..core.x1() {
            let i = field.rect.index(x, y);
            for k in field.column_start[i] as usize..field.column_start[i + 1] as usize {
                if regions.labels[k] == NO_REGION {
                    continue;
                }
                cell_of[k] = (x, y);
                let level = levels.of(field.spans[k].zmax);
                for heading in [EAST, NORTH, WEST, SOUTH] {
                    let (rx, ry) = right_cell(side_start(x, y, heading), heading);
                    if !member(field, rx, ry, level, levels) {
                        is_edge[k * 4 + heading as usize] = true;
                        order.push(k * 4 + heading as usize);
                    }
                }
            }
        }
    }
    let key_of = |e: usize| -> EdgeKey {
        let (x, y) = cell_of[e / 4];
        let heading = (e % 4) as u8;
        let p = side_start(x, y, heading);
        EdgeKey {
            x: p.0,
            y: p.1,
            heading,
            level: levels.of(field.spans[e / 4].zmax),
        }
    };
    // What lies across an owned edge.
    let across = |e: usize| -> u32 {
        let (x, y) = cell_of[e / 4];
        let heading = (e % 4) as u8;
        let (rx, ry) = right_cell(side_start(x, y, heading), heading);
        neighbour_across(field, rx, ry, field.spans[e / 4].zmax, reach, levels)
    };
    let height = |p: Point, level: u32| corner_height(field, p, level, levels);
    // The edge after `e`: owned (an index) or foreign (its key).
    let successor = |e: usize| -> Result<usize, EdgeKey> {
        let k = key_of(e);
        let (dx, dy) = STEP[k.heading as usize];
        let end = (k.x + dx, k.y + dy);
        let heading = next_heading(field, end, k.heading, k.level, levels);
        let (cx, cy) = left_cell(end, heading);
        if core.contains(cx, cy) {
            let span = span_at_level(field, cx, cy, k.level, levels)
                .expect("an edge's left cell is a member");
            Ok(span * 4 + heading as usize)
        } else {
            Err(EdgeKey {
                x: end.0,
                y: end.1,
                heading,
                level: k.level,
            })
        }
    };
    // Chain starts: owned edges whose predecessor is not owned.
    let mut has_pred = vec![false; n];
    for &e in &order {
        if let Ok(s) = successor(e) {
            has_pred[s] = true;
        }
    }
    let mut visited = vec![false; n];
    let mut out = TileContours::default();
    // Walks from `first`: the points where the walk turns or its neighbour changes (starting
    // with the start point), the neighbour of each piece after them, the edge that stopped the
    // walk (foreign key, or None back at `first`) and the last heading.
    struct Walk {
        points: Vec<Point>,
        neighbours: Vec<u32>,
        foreign: Option<EdgeKey>,
        last_heading: u8,
    }
    let walk = |first: usize, visited: &mut Vec<bool>| -> Walk {
        let start = key_of(first);
        let mut points = vec![(start.x, start.y)];
        let mut neighbours = vec![across(first)];
        let mut e = first;
        loop {
            visited[e] = true;
            let heading = (e % 4) as u8;
            match successor(e) {
                Ok(s) if s == first => {
                    return Walk {
                        points,
                        neighbours,
                        foreign: None,
                        last_heading: heading,
                    }
                }
                Ok(s) => {
                    let nb = across(s);
                    if (s % 4) as u8 != heading || nb != *neighbours.last().unwrap() {
                        let p = key_of(s);
                        points.push((p.x, p.y));
                        neighbours.push(nb);
                    }
                    e = s;
                }
                Err(foreign) => {
                    return Walk {
                        points,
                        neighbours,
                        foreign: Some(foreign),
                        last_heading: heading,
                    }
                }
            }
        }
    };
    for &e in &order {
        if has_pred[e] || visited[e] {
            continue;
        }
        let Walk {
            mut points,
            neighbours,
            foreign,
            last_heading,
        } = walk(e, &mut visited);
        let next = foreign.expect("a walk from a chain start leaves the tile");
        points.push((next.x, next.y));
        let level = levels.of(field.spans[e / 4].zmax);
        out.chains.push(Chain {
            tile: regions.tile,
            region: regions.labels[e / 4],
            first: key_of(e),
            next,
            heights: points.iter().map(|&p| height(p, level)).collect(),
            points,
            neighbours,
            last_heading,
        });
    }
    for &e in &order {
        if visited[e] {
            continue;
        }
        let Walk {
            mut points,
            mut neighbours,
            last_heading,
            ..
        } = walk(e, &mut visited);
        // The start point is a vertex only if the cycle turns there or changes neighbour.
        if last_heading == (e % 4) as u8 && neighbours.last() == neighbours.first() {
            points.remove(0);
            neighbours.remove(0);
        }
        let level = levels.of(field.spans[e / 4].zmax);
        out.cycles.push(Contour {
            tile: regions.tile,
            region: regions.labels[e / 4],
            level,
            heights: points.iter().map(|&p| height(p, level)).collect(),
            points,
            neighbours,
        });
    }
    // Scan order is already deterministic; chains sorted by their first edge for readability.
    out.chains.sort_by_key(|c| c.first);
    out
}

/// A chain being joined: its pieces so far (points, heights and neighbours as in [`Chain`]).
struct Open {
    tile: TileCoord,
    region: u32,
    first: EdgeKey,
    next: EdgeKey,
    points: Vec<Point>,
    heights: Vec<u32>,
    neighbours: Vec<u32>,
    last_heading: u8,
}

/// Joins chains from any number of tiles, in any order, into cycles.
#[derive(Default)]
pub struct ContourJoiner {
    /// Open chains by the edge they start with.
    by_first: HashMap<EdgeKey, Open>,
    /// First edge of the open chain that ends into each edge.
    by_next: HashMap<EdgeKey, EdgeKey>,
    /// Tiling-only vertices removed so far.
    pub third_class_removed: u64,
    /// The most chains open at once.
    pub peak_open: usize,
    /// Points held by open chains.
    held_points: u64,
}

impl ContourJoiner {
    pub fn new() -> ContourJoiner {
        ContourJoiner::default()
    }

    /// Chains still open.
    pub fn open_chains(&self) -> usize {
        self.by_first.len()
    }

    /// Bytes the open chains hold (about).
    pub fn held_bytes(&self) -> u64 {
        self.held_points * (std::mem::size_of::<Point>() + 8) as u64
            + self.by_first.len() as u64 * 128
    }

    /// Adds one chain; returns the cycle it closes, if any. The cycle is named after the
    /// (tile, region) of the chain that closed it; every chain of a cycle belongs to the same
    /// merged region.
    pub fn add(&mut self, chain: Chain) -> Option<Contour> {
        let mut cur = Open {
            tile: chain.tile,
            region: chain.region,
            first: chain.first,
            next: chain.next,
            points: chain.points,
            heights: chain.heights,
            neighbours: chain.neighbours,
            last_heading: chain.last_heading,
        };
        // Append what follows it.
        if let Some(after) = self.by_first.remove(&cur.next) {
            self.held_points -= after.points.len() as u64;
            self.by_next.remove(&after.next);
            cur = self.concat(cur, after);
        }
        // Prepend what leads into it.
        if let Some(before_first) = self.by_next.remove(&cur.first) {
            let before = self.by_first.remove(&before_first).expect("indexed chain");
            self.held_points -= before.points.len() as u64;
            cur = self.concat(before, cur);
        }
        if cur.next == cur.first {
            // Closed: the end point repeats the start point, which is a vertex only if the
            // contour turns or changes neighbour there.
            let Open {
                mut points,
                mut heights,
                mut neighbours,
                ..
            } = cur;
            points.pop();
            heights.pop();
            if cur.last_heading == cur.first.heading && neighbours.last() == neighbours.first() {
                points.remove(0);
                heights.remove(0);
                neighbours.remove(0);
                self.third_class_removed += 1;
            }
            return Some(Contour {
                tile: cur.tile,
                region: cur.region,
                level: cur.first.level,
                points,
                heights,
                neighbours,
            });
        }
        self.by_next.insert(cur.next, cur.first);
        self.held_points += cur.points.len() as u64;
        self.by_first.insert(cur.first, cur);
        self.peak_open = self.peak_open.max(self.by_first.len());
        None
    }

    /// `a` followed by `b` (`a.next == b.first`).
    fn concat(&mut self, mut a: Open, b: Open) -> Open {
        debug_assert_eq!(a.next, b.first);
        // The shared point ends `a` and starts `b`; it stays a vertex where the contour turns
        // or its neighbour changes. Otherwise it existed only because of the tiling.
        let straight =
            a.last_heading == b.first.heading && a.neighbours.last() == b.neighbours.first();
        a.points.pop();
        a.heights.pop();
        let skip = if straight {
            self.third_class_removed += 1;
            a.neighbours.pop();
            1
        } else {
            0
        };
        a.points.extend(b.points.into_iter().skip(skip));
        a.heights.extend(b.heights.into_iter().skip(skip));
        a.neighbours.extend(b.neighbours);
        Open {
            tile: a.tile,
            region: a.region,
            first: a.first,
            next: b.next,
            points: a.points,
            heights: a.heights,
            neighbours: a.neighbours,
            last_heading: b.last_heading,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_artifacts::CellRect;
    use tessera_regions::segment_tile;

    /// A height map (rows listed top row first, as drawn; 0 = no span) as one tile with an
    /// empty ring around it, segmented.
    fn setup(drawing: &[&str]) -> (SpanField, TileRegions) {
        let h = drawing.len();
        let w = drawing[0].len();
        let mut rows: Vec<Vec<u32>> = vec![vec![0; w + 2]; h + 2];
        for (r, line) in drawing.iter().enumerate() {
            for (c, ch) in line.chars().enumerate() {
                rows[h - r][c + 1] = ch.to_digit(10).unwrap();
            }
        }
        let refs: Vec<&[u32]> = rows.iter().map(|r| r.as_slice()).collect();
        let rect = CellRect {
            x0: -1,
            y0: -1,
            width: w as u32 + 2,
            height: h as u32 + 2,
        };
        let core = CellRect {
            x0: 0,
            y0: 0,
            width: w as u32,
            height: h as u32,
        };
        let field = SpanField::from_floors(rect, core, &refs);
        let regions = segment_tile(&field, TileCoord { x: 0, y: 0 }, Levels::FLAT);
        (field, regions)
    }

    const REACH: Reach = Reach {
        climb: 1,
        height: 4,
    };

    /// Traces a drawing (see [`setup`]).
    fn trace(drawing: &[&str]) -> TileContours {
        let (field, regions) = setup(drawing);
        let out = trace_tile(&field, &regions, REACH);
        assert!(
            out.chains.is_empty(),
            "one tile with an empty ring has no open chain"
        );
        out
    }

    /// The corner points the seed's masks give equal the traced contours' vertices, slash and
    /// antislash points twice.
    fn masks_agree_with_tracing(drawing: &[&str]) {
        let (field, regions) = setup(drawing);
        let traced = trace_tile(&field, &regions, REACH);
        let mut from_contours: Vec<(u32, Point)> = traced
            .cycles
            .iter()
            .map(|c| c.corners_only())
            .flat_map(|c| c.points.into_iter().map(move |p| (c.region, p)))
            .collect();
        from_contours.sort_unstable();
        let mut from_masks: Vec<(u32, Point)> = corner_points(&field, &regions)
            .into_iter()
            .map(|(r, p, _)| (r, p))
            .collect();
        from_masks.sort_unstable();
        assert_eq!(from_masks, from_contours, "{drawing:?}");
    }

    #[test]
    fn corner_masks_match_the_traced_vertices() {
        masks_agree_with_tracing(&["1"]);
        masks_agree_with_tracing(&["01", "10"]);
        masks_agree_with_tracing(&["10", "01"]);
        masks_agree_with_tracing(&["1111", "1101", "1011", "1111"]);
        masks_agree_with_tracing(&["1122", "1122", "3333"]);
        masks_agree_with_tracing(&["11011", "10101", "11111", "01010"]);
        let (field, regions) = setup(&["01", "10"]);
        let kinds: Vec<CornerKind> = corner_points(&field, &regions)
            .into_iter()
            .map(|c| c.2)
            .collect();
        assert_eq!(kinds.iter().filter(|k| **k == CornerKind::Slash).count(), 2);
    }

    /// Alg. 3-5 (pairing) and tracing give the same contours.
    fn pairing_agrees_with_tracing(drawing: &[&str]) {
        let (field, regions) = setup(drawing);
        let canon = |cs: Vec<Contour>| {
            let mut v: Vec<(u32, Vec<Point>)> =
                cs.iter().map(|c| (c.region, c.canonical())).collect();
            v.sort();
            v
        };
        assert_eq!(
            canon(contours_by_pairing(&field, &regions)),
            canon(
                trace_tile(&field, &regions, REACH)
                    .cycles
                    .iter()
                    .map(|c| c.corners_only())
                    .collect()
            ),
            "{drawing:?}"
        );
    }

    #[test]
    fn the_seeds_pairing_gives_the_traced_contours() {
        pairing_agrees_with_tracing(&["1"]);
        pairing_agrees_with_tracing(&["01", "10"]);
        pairing_agrees_with_tracing(&["10", "01"]);
        pairing_agrees_with_tracing(&["1111", "1101", "1011", "1111"]);
        pairing_agrees_with_tracing(&["1122", "1122", "3333"]);
        pairing_agrees_with_tracing(&["11011", "10101", "11111", "01010"]);
        pairing_agrees_with_tracing(&["11111", "10001", "10101", "10001", "11111"]);
    }

    #[test]
    fn a_single_cell_is_a_counter_clockwise_square() {
        let out = trace(&["1"]);
        assert_eq!(out.cycles.len(), 1);
        assert_eq!(
            out.cycles[0].canonical(),
            vec![(0, 0), (1, 0), (1, 1), (0, 1)]
        );
        assert_eq!(out.cycles[0].twice_area(), 2);
    }

    #[test]
    fn a_region_touching_itself_diagonally_pinches_at_the_slash_point() {
        // Two cells of one region touching at a corner: one outer contour through that point
        // twice.
        let out = trace(&["01", "10"]);
        assert_eq!(out.cycles.len(), 1);
        let c = &out.cycles[0];
        assert_eq!(c.points.len(), 8);
        assert_eq!(c.points.iter().filter(|&&p| p == (1, 1)).count(), 2);
        assert_eq!(c.twice_area(), 4);
        assert!(c.validate().is_ok());
        // The antislash orientation too.
        let out = trace(&["10", "01"]);
        assert_eq!(out.cycles.len(), 1);
        assert_eq!(out.cycles[0].twice_area(), 4);
    }

    #[test]
    fn two_holes_touching_at_a_corner_stay_two_simple_holes() {
        let out = trace(&["1111", "1101", "1011", "1111"]);
        let mut areas: Vec<i64> = out.cycles.iter().map(|c| c.twice_area()).collect();
        areas.sort();
        // Two holes of one cell (clockwise, negative) and the outer square.
        assert_eq!(areas, vec![-2, -2, 32]);
        for c in &out.cycles {
            assert!(c.validate().is_ok());
            let mut pts = c.points.clone();
            pts.sort();
            pts.dedup();
            assert_eq!(pts.len(), c.points.len(), "each hole is simple");
        }
        // Outer minus holes is the region's cell count.
        assert_eq!(
            out.cycles.iter().map(|c| c.twice_area()).sum::<i64>(),
            2 * 14
        );
    }

    #[test]
    fn regions_at_different_heights_have_their_own_contours() {
        let out = trace(&["1122", "1122", "3333"]);
        assert_eq!(out.cycles.len(), 3);
        let total: i64 = out.cycles.iter().map(|c| c.twice_area()).sum();
        assert_eq!(total, 2 * 12);
        assert!(out
            .cycles
            .iter()
            .all(|c| c.is_outer() && c.validate().is_ok()));
    }

    #[test]
    fn a_vertex_marks_where_the_neighbour_across_changes() {
        // Floor 1 along the top row; floor 2 (one voxel up) under its western half.
        let drawing = ["1111", "2200"];
        let (field, regions) = setup(&drawing);
        let top = |climb| {
            let out = trace_tile(
                &field,
                &regions,
                Reach {
                    climb,
                    height: climb,
                },
            );
            out.cycles.into_iter().find(|c| c.level == 1).unwrap()
        };
        // Beyond the agent's height: nothing across, only the four corners.
        assert_eq!(top(0).points.len(), 4);
        // Out of the climb but within the height: the shared border is still marked.
        let out = trace_tile(
            &field,
            &regions,
            Reach {
                climb: 0,
                height: 4,
            },
        );
        let c = out.cycles.iter().find(|c| c.level == 1).unwrap();
        assert_eq!(c.points.len(), 5);
        assert!(c.neighbours.contains(&(2 | OUT_OF_REACH)));
        // Within the climb: the bottom edge splits where floor 2 ends.
        let c = top(1);
        c.validate().unwrap();
        assert_eq!(c.canonical(), vec![(0, 1), (2, 1), (4, 1), (4, 2), (0, 2)]);
        let at = |p: Point| c.points.iter().position(|&q| q == p).unwrap();
        assert_eq!(c.neighbours[at((0, 1))], 2);
        assert_eq!(c.neighbours[at((2, 1))], NO_NEIGHBOUR);
        assert!(c.heights.iter().all(|&h| h == 1));
        // The lower floor's contour lists the same shared border, and its heights are its own.
        let out = trace_tile(&field, &regions, REACH);
        let low = out.cycles.iter().find(|c| c.level == 2).unwrap();
        assert!(low.points.contains(&(0, 1)) && low.points.contains(&(2, 1)));
        assert!(low.heights.iter().all(|&h| h == 2));
    }

    #[test]
    fn joining_removes_straight_tile_border_vertices() {
        // One 4 x 2 region cut by a tile border between columns 1 and 2.
        let floors: Vec<Vec<u32>> = vec![
            vec![0; 6],
            vec![0, 1, 1, 1, 1, 0],
            vec![0, 1, 1, 1, 1, 0],
            vec![0; 6],
        ];
        let refs: Vec<&[u32]> = floors.iter().map(|r| r.as_slice()).collect();
        let whole = SpanField::from_floors(
            CellRect {
                x0: -1,
                y0: -1,
                width: 6,
                height: 4,
            },
            CellRect {
                x0: 0,
                y0: 0,
                width: 4,
                height: 2,
            },
            &refs,
        );
        let mut joiner = ContourJoiner::new();
        let mut cycles = Vec::new();
        for (tx, x0) in [(1u32, 2i32), (0, 0)] {
            let rect = CellRect {
                x0: x0 - 1,
                y0: -1,
                width: 4,
                height: 4,
            };
            let core = CellRect {
                x0,
                y0: 0,
                width: 2,
                height: 2,
            };
            let part = whole.crop(rect, core);
            let regions = segment_tile(&part, TileCoord { x: tx, y: 0 }, Levels::FLAT);
            let t = trace_tile(&part, &regions, REACH);
            assert!(t.cycles.is_empty() && t.chains.len() == 1);
            for chain in t.chains {
                cycles.extend(joiner.add(chain));
            }
        }
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].canonical(), vec![(0, 0), (4, 0), (4, 2), (0, 2)]);
        assert_eq!(joiner.third_class_removed, 2);
        assert_eq!(joiner.open_chains(), 0);
    }
}
