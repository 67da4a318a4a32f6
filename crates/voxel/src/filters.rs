//! Walkability filters on a rasterized field, in the order Recast users know: low hanging
//! obstacles, ledges, clearance, then erosion by the agent radius.
//!
//! Heights are in voxels; `walkable_height` is the clearance an agent needs, `walkable_climb`
//! the step it can take. Columns outside the field count as a drop (a ledge), which is why a
//! tile is voxelized with a band wider than any filter looks.

use tessera_artifacts::SpanField;
use tessera_config::VoxelParams;

/// Open sky above the top span of a column.
const SKY: i64 = i64::MAX / 4;

/// Runs every filter in order.
pub fn filter_all(field: &mut SpanField, params: &VoxelParams) {
    filter_all_in(&mut ErodeScratch::default(), field, params);
}

/// [`filter_all`] with erosion's buffers in `scratch`.
///
/// When the clearance exceeds the climb, the ledge filter also records the links erosion
/// walks: it already reads every neighbour floor of every walkable span, and a span then has
/// at most one neighbour floor per direction it could link to (see [`filter_ledges_linking`]).
pub fn filter_all_in(scratch: &mut ErodeScratch, field: &mut SpanField, params: &VoxelParams) {
    let (height, climb) = (params.walkable_height, params.walkable_climb);
    filter_low_hanging_obstacles(field, climb);
    if height > climb && params.walkable_radius > 0 {
        filter_ledges_linking(scratch, field, height, climb);
        filter_low_clearance(field, height);
        erode_linked(scratch, field, params.walkable_radius);
    } else {
        filter_ledges(field, height, climb);
        filter_low_clearance(field, height);
        erode_in(scratch, field, height, climb, params.walkable_radius);
    }
}

/// An unwalkable span whose top is at most `climb` above a walkable span right below it in the
/// same column becomes walkable: kerbs, low clutter, the steps of stairs modelled as boxes.
pub fn filter_low_hanging_obstacles(field: &mut SpanField, climb: u32) {
    for i in 0..field.rect.area() {
        let (a, b) = (
            field.column_start[i] as usize,
            field.column_start[i + 1] as usize,
        );
        let col = &mut field.spans[a..b];
        let mut prev_walkable = false;
        let mut prev_top = 0u32;
        for s in col.iter_mut() {
            let was_walkable = s.walkable;
            if !s.walkable && prev_walkable && s.zmax.abs_diff(prev_top) <= climb {
                s.walkable = true;
            }
            prev_walkable = was_walkable;
            prev_top = s.zmax;
        }
    }
}

/// A walkable span next to a drop deeper than `climb` (to a neighbour floor the agent fits
/// on, or out of the field), or whose reachable neighbour floors differ by more than `climb`
/// (too steep), is unwalkable.
///
/// The test of one span reads only the heights of its neighbours, never their walkability, so
/// spans are marked as they are found.
pub fn filter_ledges(field: &mut SpanField, height: u32, climb: u32) {
    ledges::<false>(field, height, climb, &mut Vec::new());
}

/// [`filter_ledges`], also writing to `scratch`, for every span still walkable after it, the
/// neighbour span (per direction -x, +y, +x, -y) it could link to before walkability is
/// considered: the span with enough clearance over the shared gap and a top within the climb,
/// among the first [`MAX_LINK_OFFSET`] of its column; [`NO_LINK`] where there is none.
///
/// With `height > climb` there is at most one such span per direction: a second one, higher
/// up the column, would have its top at or above the first one's ceiling, which is at least
/// `height` above our floor, so more than the climb. The links erosion uses are then these,
/// less those to or from a span that is no longer walkable: [`erode_linked`] erodes with them
/// after any filter that only takes walkability away.
pub fn filter_ledges_linking(
    scratch: &mut ErodeScratch,
    field: &mut SpanField,
    height: u32,
    climb: u32,
) {
    assert!(height > climb, "links are unique only above the climb");
    ledges::<true>(field, height, climb, &mut scratch.links);
}

/// The ledge filter, recording links when `LINK`.
fn ledges<const LINK: bool>(
    field: &mut SpanField,
    height: u32,
    climb: u32,
    links: &mut Vec<[u32; 4]>,
) {
    // Written in span order as the spans are visited (one pass over the buffer, not a fill
    // and then a scattered write).
    if LINK {
        links.clear();
        links.reserve(field.spans.len());
    }
    let rect = field.rect;
    let (height, climb) = (height as i64, climb as i64);
    let width = rect.width as usize;
    let rows = rect.height as usize;
    let starts = &field.column_start;
    let spans = &mut field.spans;
    for y in 0..rows {
        for x in 0..width {
            let i = y * width + x;
            let (a, b) = (starts[i] as usize, starts[i + 1] as usize);
            if a == b {
                continue;
            }
            // Neighbour columns' span ranges; a column outside the field is a drop.
            let edge = x == 0 || y == 0 || x + 1 == width || y + 1 == rows;
            let neighbours = if edge {
                None
            } else {
                Some(
                    [i - 1, i + width, i + 1, i - width]
                        .map(|n| (starts[n] as usize, starts[n + 1] as usize)),
                )
            };
            // Per direction, the first neighbour span that can matter to this column's spans
            // from here up (see `is_ledge`).
            let mut from = neighbours.map_or([0; 4], |n| n.map(|(a, _)| a));
            for k in a..b {
                // No link unless the span stays walkable.
                let mut found = [NO_LINK; 4];
                match neighbours {
                    _ if !spans[k].walkable => {}
                    None => spans[k].walkable = false,
                    Some(neighbours) => {
                        let bot = spans[k].zmax as i64;
                        let top = if k + 1 < b {
                            spans[k + 1].zmin as i64
                        } else {
                            SKY
                        };
                        if is_ledge::<LINK>(
                            spans,
                            &neighbours,
                            &mut from,
                            bot,
                            top,
                            [height, climb],
                            &mut found,
                        ) {
                            spans[k].walkable = false;
                            found = [NO_LINK; 4];
                        }
                    }
                }
                if LINK {
                    links.push(found);
                }
            }
        }
    }
    debug_assert!(!LINK || links.len() == spans.len());
}

/// The ledge test of one span (floor `bot`, ceiling `top`) against its four neighbour columns
/// (span ranges in `spans`). When `LINK` and the span is no ledge, `found` gets per direction
/// the last neighbour span it could step to (among the first [`MAX_LINK_OFFSET`] of the
/// column), which is the only one when `height > climb`.
///
/// `from` holds per direction the first neighbour span to look at: the spans below it are
/// under another span less than `height` above `bot` (no room to stand there from this
/// floor), which holds for every floor above `bot` too, so the caller keeps `from` for the
/// next span up the column.
#[inline]
fn is_ledge<const LINK: bool>(
    spans: &[tessera_artifacts::Span],
    neighbours: &[(usize, usize); 4],
    from: &mut [usize; 4],
    bot: i64,
    top: i64,
    [height, climb]: [i64; 2],
    found: &mut [u32; 4],
) -> bool {
    let mut reach_min = bot;
    let mut reach_max = bot;
    // Neighbour floors above this change nothing, and neither do the floors above them
    // (columns are sorted): too close under our ceiling to stand on, or higher than the climb
    // (neither a drop nor within reach).
    let highest = (top - height).min(bot + climb);
    for (d, &(a, b)) in neighbours.iter().enumerate() {
        // The space below the neighbour's first span: a drop into nothing (`bot` is never
        // below the field's floor, so the gap starts at `bot`).
        let first_bottom = if a < b { spans[a].zmin as i64 } else { SKY };
        if top.min(first_bottom) - bot >= height {
            return true;
        }
        // A span whose next one starts less than `height` above our floor leaves no room
        // over the gap (`top.min(ntop) - bot.max(nbot) < height` below): it changes nothing.
        // (Columns are sorted: a binary search, the columns of stacked floors being long.)
        let mut first = from[d];
        let room = bot + height;
        if first + 1 < b && (spans[first + 1].zmin as i64) < room {
            first += 1 + spans[first + 2..b].partition_point(|s| (s.zmin as i64) < room);
        }
        from[d] = first;
        for j in first..b {
            let nbot = spans[j].zmax as i64;
            if nbot > highest {
                break;
            }
            let ntop = if j + 1 < b {
                spans[j + 1].zmin as i64
            } else {
                SKY
            };
            if top.min(ntop) - bot.max(nbot) >= height {
                if nbot - bot < -climb {
                    return true;
                }
                if (nbot - bot).abs() <= climb {
                    reach_min = reach_min.min(nbot);
                    reach_max = reach_max.max(nbot);
                    if LINK && j - a < MAX_LINK_OFFSET {
                        found[d] = j as u32;
                    }
                }
            }
        }
    }
    reach_max - reach_min > climb
}

/// Drops the links of [`filter_ledges_linking`] from or to a span that is not walkable (any
/// more), which leaves the links [`links_into`] would find on the filtered field.
fn keep_walkable_links(field: &SpanField, links: &mut [[u32; 4]]) {
    let spans = &field.spans;
    for (k, l) in links.iter_mut().enumerate() {
        if !spans[k].walkable {
            *l = [NO_LINK; 4];
            continue;
        }
        for n in l.iter_mut() {
            if *n != NO_LINK && !spans[*n as usize].walkable {
                *n = NO_LINK;
            }
        }
    }
}

/// A span with less than `height` of free space above it is unwalkable (seed 000, 2.3.2).
pub fn filter_low_clearance(field: &mut SpanField, height: u32) {
    for i in 0..field.rect.area() {
        let (a, b) = (
            field.column_start[i] as usize,
            field.column_start[i + 1] as usize,
        );
        for k in a..b {
            let top = if k + 1 < b {
                field.spans[k + 1].zmin as i64
            } else {
                SKY
            };
            if top - (field.spans[k].zmax as i64) < height as i64 {
                field.spans[k].walkable = false;
            }
        }
    }
}

/// No connection in a direction.
const NO_LINK: u32 = u32::MAX;

/// Spans further up a neighbour column than this are not linked to (a compact heightfield
/// keeps a byte per direction; so does this filter's rule, whatever it stores).
const MAX_LINK_OFFSET: usize = u8::MAX as usize;

/// Reusable buffers of [`erode_in`].
#[derive(Default)]
pub struct ErodeScratch {
    links: Vec<[u32; 4]>,
    dist: Vec<u32>,
    buckets: Vec<Vec<u32>>,
}

impl ErodeScratch {
    /// Bytes the buffers hold.
    pub fn byte_size(&self) -> usize {
        self.links.capacity() * 16
            + self.dist.capacity() * 4
            + self.buckets.iter().map(|b| b.capacity() * 4).sum::<usize>()
    }
}

/// For every walkable span and each direction (-x, +y, +x, -y), the walkable span of the
/// neighbour column it connects to: the first one bottom-up with enough clearance over the
/// shared gap and a top within the climb, among the first [`MAX_LINK_OFFSET`] spans of that
/// column. [`NO_LINK`] otherwise, and for unwalkable spans and the field's edge.
fn links_into(field: &SpanField, height: i64, climb: i64, out: &mut Vec<[u32; 4]>) {
    let width = field.rect.width as usize;
    let rows = field.rect.height as usize;
    let starts = &field.column_start;
    let spans = &field.spans;
    out.clear();
    out.resize(spans.len(), [NO_LINK; 4]);
    for y in 0..rows {
        for x in 0..width {
            let i = y * width + x;
            let (a, b) = (starts[i] as usize, starts[i + 1] as usize);
            let neighbours = [
                (x > 0).then(|| i - 1),
                (y + 1 < rows).then(|| i + width),
                (x + 1 < width).then(|| i + 1),
                (y > 0).then(|| i - width),
            ];
            for k in a..b {
                if !spans[k].walkable {
                    continue;
                }
                let bot = spans[k].zmax as i64;
                let top = if k + 1 < b {
                    spans[k + 1].zmin as i64
                } else {
                    SKY
                };
                // Floors above this are out of reach: too high to climb, or too close
                // under our ceiling; so are all floors above them.
                let highest = (top - height).min(bot + climb);
                for (d, n) in neighbours.iter().enumerate() {
                    let Some(n) = *n else { continue };
                    let (na, nb) = (starts[n] as usize, starts[n + 1] as usize);
                    for j in na..nb.min(na + MAX_LINK_OFFSET) {
                        let s = spans[j];
                        let nbot = s.zmax as i64;
                        if nbot > highest {
                            break;
                        }
                        if !s.walkable {
                            continue;
                        }
                        let ntop = if j + 1 < nb {
                            spans[j + 1].zmin as i64
                        } else {
                            SKY
                        };
                        if top.min(ntop) - bot.max(nbot) >= height && (nbot - bot).abs() <= climb {
                            out[k][d] = j as u32;
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// Removes walkable spans closer than `radius` cells to the walkable area's boundary.
///
/// Distances are chamfer distances (2 per axis step, 3 per diagonal step taken as two
/// connected axis steps) from every boundary span (a walkable span with fewer than four
/// connected neighbours), computed exactly by a bucket-queue Dijkstra stopped at `2 * radius`.
/// Being exact shortest paths, they depend only on the spans within `radius` cells, never on
/// scan order or on where the field ends: that is what makes erosion tile-invariant.
pub fn erode(field: &mut SpanField, height: u32, climb: u32, radius: u32) {
    erode_in(&mut ErodeScratch::default(), field, height, climb, radius);
}

/// [`erode`] with the working buffers of `scratch`.
pub fn erode_in(
    scratch: &mut ErodeScratch,
    field: &mut SpanField,
    height: u32,
    climb: u32,
    radius: u32,
) {
    if radius == 0 {
        return;
    }
    links_into(field, height as i64, climb as i64, &mut scratch.links);
    erode_over_links(scratch, field, radius);
}

/// [`erode_in`] with the links [`filter_ledges_linking`] left in `scratch` on this field,
/// which since then has only lost walkable spans.
pub fn erode_linked(scratch: &mut ErodeScratch, field: &mut SpanField, radius: u32) {
    if radius == 0 {
        return;
    }
    keep_walkable_links(field, &mut scratch.links);
    erode_over_links(scratch, field, radius);
}

/// Erosion by `radius` over the links in `scratch` (those [`links_into`] finds on `field`).
fn erode_over_links(scratch: &mut ErodeScratch, field: &mut SpanField, radius: u32) {
    let limit = 2 * radius; // spans with distance < limit are removed
    let ErodeScratch {
        links,
        dist,
        buckets,
    } = scratch;
    dist.clear();
    dist.resize(field.spans.len(), u32::MAX);
    buckets.resize_with(limit as usize + 1, Vec::new);
    for b in buckets.iter_mut() {
        b.clear();
    }
    for (k, l) in links.iter().enumerate() {
        if field.spans[k].walkable && l.contains(&NO_LINK) {
            dist[k] = 0;
            buckets[0].push(k as u32);
        }
    }
    for d in 0..limit {
        let bucket = std::mem::take(&mut buckets[d as usize]);
        for &s in &bucket {
            let s = s as usize;
            if dist[s] != d {
                continue; // a stale entry
            }
            for dir in 0..4 {
                let n = links[s][dir];
                if n == NO_LINK {
                    continue;
                }
                let n = n as usize;
                let mut relax = |m: usize, nd: u32| {
                    if nd < dist[m] && nd <= limit {
                        dist[m] = nd;
                        buckets[nd as usize].push(m as u32);
                    }
                };
                relax(n, d + 2);
                // Diagonal: one more step in the next direction round.
                let m = links[n][(dir + 1) % 4];
                if m != NO_LINK {
                    relax(m as usize, d + 3);
                }
            }
        }
        // Keep the bucket's buffer for the next tile.
        let mut bucket = bucket;
        bucket.clear();
        buckets[d as usize] = bucket;
    }
    for (s, span) in field.spans.iter_mut().enumerate() {
        if span.walkable && dist[s] < limit {
            span.walkable = false;
        }
    }
}

/// The filters as first written (a neighbour scan per test, links re-derived by erosion):
/// the oracle the faster versions above are checked against.
#[cfg(test)]
mod reference {
    use super::SKY;
    use tessera_artifacts::SpanField;

    pub(super) fn filter_ledges(field: &mut SpanField, height: u32, climb: u32) {
        let rect = field.rect;
        let (height, climb) = (height as i64, climb as i64);
        let width = rect.width as usize;
        let mut ledges: Vec<usize> = Vec::new();
        for y in 0..rect.height as usize {
            for x in 0..width {
                let i = y * width + x;
                let (a, b) = (
                    field.column_start[i] as usize,
                    field.column_start[i + 1] as usize,
                );
                // Neighbour columns by index; None where the field ends (a drop).
                let neighbours = [
                    (x > 0).then(|| i - 1),
                    (y + 1 < rect.height as usize).then(|| i + width),
                    (x + 1 < width).then(|| i + 1),
                    (y > 0).then(|| i - width),
                ];
                for k in a..b {
                    if !field.spans[k].walkable {
                        continue;
                    }
                    let bot = field.spans[k].zmax as i64;
                    let top = if k + 1 < b {
                        field.spans[k + 1].zmin as i64
                    } else {
                        SKY
                    };
                    if is_ledge(field, &neighbours, bot, top, height, climb) {
                        ledges.push(k);
                    }
                }
            }
        }
        for i in ledges {
            field.spans[i].walkable = false;
        }
    }

    /// The ledge test of one span (floor `bot`, ceiling `top`) against its four neighbour columns.
    #[inline]
    fn is_ledge(
        field: &SpanField,
        neighbours: &[Option<usize>; 4],
        bot: i64,
        top: i64,
        height: i64,
        climb: i64,
    ) -> bool {
        let mut reach_min = bot;
        let mut reach_max = bot;
        for n in neighbours {
            let Some(n) = *n else { return true };
            let ncol =
                &field.spans[field.column_start[n] as usize..field.column_start[n + 1] as usize];
            // The space below the neighbour's first span: a drop into nothing.
            let first_bottom = ncol.first().map_or(SKY, |s| s.zmin as i64);
            if top.min(first_bottom) - bot.max(-climb - 1) >= height {
                return true;
            }
            for j in 0..ncol.len() {
                let nbot = ncol[j].zmax as i64;
                let ntop = ncol.get(j + 1).map_or(SKY, |s| s.zmin as i64);
                if top.min(ntop) - bot.max(nbot) >= height {
                    if nbot - bot < -climb {
                        return true;
                    }
                    if (nbot - bot).abs() <= climb {
                        reach_min = reach_min.min(nbot);
                        reach_max = reach_max.max(nbot);
                    }
                }
            }
        }
        reach_max - reach_min > climb
    }

    #[inline]
    fn connected_in(
        field: &SpanField,
        n: usize,
        bot: i64,
        top: i64,
        height: i64,
        climb: i64,
    ) -> Option<usize> {
        let (a, b) = (
            field.column_start[n] as usize,
            field.column_start[n + 1] as usize,
        );
        for j in a..b {
            let s = field.spans[j];
            if !s.walkable {
                continue;
            }
            let nbot = s.zmax as i64;
            let ntop = if j + 1 < b {
                field.spans[j + 1].zmin as i64
            } else {
                SKY
            };
            if top.min(ntop) - bot.max(nbot) >= height && (nbot - bot).abs() <= climb {
                return Some(j);
            }
        }
        None
    }

    /// Column index of every span (spans are stored column by column).
    fn span_columns(field: &SpanField) -> Vec<u32> {
        let mut out = Vec::with_capacity(field.spans.len());
        for i in 0..field.rect.area() {
            let len = field.column_start[i + 1] - field.column_start[i];
            out.extend(std::iter::repeat_n(i as u32, len as usize));
        }
        out
    }

    /// No connection in a direction.
    const NO_LINK: u8 = u8::MAX;

    /// For every span and each direction (-x, +y, +x, -y), the position within the neighbour
    /// column of the walkable span it connects to, or [`NO_LINK`] (also for unwalkable spans and
    /// the field's edge). One byte per direction, like a compact heightfield's connections.
    fn links(field: &SpanField, height: i64, climb: i64) -> Vec<[u8; 4]> {
        let width = field.rect.width as usize;
        let rows = field.rect.height as usize;
        let mut out = vec![[NO_LINK; 4]; field.spans.len()];
        for y in 0..rows {
            for x in 0..width {
                let i = y * width + x;
                let neighbours = [
                    (x > 0).then(|| i - 1),
                    (y + 1 < rows).then(|| i + width),
                    (x + 1 < width).then(|| i + 1),
                    (y > 0).then(|| i - width),
                ];
                let (a, b) = (
                    field.column_start[i] as usize,
                    field.column_start[i + 1] as usize,
                );
                for k in a..b {
                    if !field.spans[k].walkable {
                        continue;
                    }
                    let bot = field.spans[k].zmax as i64;
                    let top = if k + 1 < b {
                        field.spans[k + 1].zmin as i64
                    } else {
                        SKY
                    };
                    for (d, n) in neighbours.iter().enumerate() {
                        if let Some(n) = *n {
                            if let Some(j) = connected_in(field, n, bot, top, height, climb) {
                                let offset = j - field.column_start[n] as usize;
                                if offset < NO_LINK as usize {
                                    out[k][d] = offset as u8;
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    pub(super) fn erode(field: &mut SpanField, height: u32, climb: u32, radius: u32) {
        if radius == 0 {
            return;
        }
        let limit = 2 * radius; // spans with distance < limit are removed
        let width = field.rect.width as usize;
        let links = links(field, height as i64, climb as i64);
        let columns = span_columns(field);
        let column_start = &field.column_start;
        // The span that span `k` connects to in direction `d`.
        let step = |k: usize, d: usize| -> Option<usize> {
            let offset = links[k][d];
            if offset == NO_LINK {
                return None;
            }
            let i = columns[k] as usize;
            let n = match d {
                0 => i - 1,
                1 => i + width,
                2 => i + 1,
                _ => i - width,
            };
            Some(column_start[n] as usize + offset as usize)
        };
        let mut dist = vec![u32::MAX; field.spans.len()];
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); limit as usize + 1];
        for (k, l) in links.iter().enumerate() {
            if field.spans[k].walkable && l.contains(&NO_LINK) {
                dist[k] = 0;
                buckets[0].push(k as u32);
            }
        }
        for d in 0..limit {
            let bucket = std::mem::take(&mut buckets[d as usize]);
            for &s in &bucket {
                let s = s as usize;
                if dist[s] != d {
                    continue; // a stale entry
                }
                for dir in 0..4 {
                    let Some(n) = step(s, dir) else { continue };
                    let mut relax = |m: usize, nd: u32| {
                        if nd < dist[m] && nd <= limit {
                            dist[m] = nd;
                            buckets[nd as usize].push(m as u32);
                        }
                    };
                    relax(n, d + 2);
                    // Diagonal: one more step in the next direction round.
                    if let Some(m) = step(n, (dir + 1) % 4) {
                        relax(m, d + 3);
                    }
                }
            }
        }
        for (s, span) in field.spans.iter_mut().enumerate() {
            if span.walkable && dist[s] < limit {
                span.walkable = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tessera_artifacts::{CellRect, Span};
    use tessera_test_support::random::span_fields;

    /// Fields with mostly walkable floors, as a bake's are: a ground of a few levels in steps
    /// of one voxel, and over part of it a second storey (a span a random gap above), so that
    /// spans have walkable neighbours on every side, some below a ceiling.
    fn storeys() -> impl Strategy<Value = SpanField> {
        (6u32..16, 6u32..16).prop_flat_map(|(w, h)| {
            proptest::collection::vec(
                (
                    0u32..3,
                    proptest::option::weighted(0.3, (0u32..14, 1u32..3)),
                    any::<u8>(),
                ),
                (w * h) as usize,
            )
            .prop_map(move |columns| {
                let rect = CellRect {
                    x0: 0,
                    y0: 0,
                    width: w,
                    height: h,
                };
                let mut f = SpanField::empty(rect, rect);
                f.column_start.clear();
                f.column_start.push(0);
                for (ground, upper, flags) in columns {
                    f.spans.push(Span {
                        zmin: 0,
                        zmax: 4 + ground,
                        walkable: flags % 16 != 0,
                        area: 0,
                    });
                    if let Some((gap, len)) = upper {
                        let zmin = 4 + ground + 1 + gap;
                        f.spans.push(Span {
                            zmin,
                            zmax: zmin + len,
                            walkable: flags % 8 != 1,
                            area: 0,
                        });
                    }
                    f.column_start.push(f.spans.len() as u32);
                }
                f
            })
        })
    }

    proptest! {
        #[test]
        fn ledges_as_the_reference(field in prop_oneof![span_fields(1, 4), storeys()], height in 1u32..8, climb in 0u32..5) {
            let mut fast = field.clone();
            let mut slow = field;
            filter_ledges(&mut fast, height, climb);
            reference::filter_ledges(&mut slow, height, climb);
            prop_assert_eq!(fast, slow);
        }

        #[test]
        fn links_recorded_by_the_ledge_filter_erode_as_links_found_after(
            field in prop_oneof![span_fields(1, 4), storeys()],
            height in 1u32..8,
            climb in 0u32..5,
            radius in 1u32..4,
        ) {
            let params = VoxelParams {
                walkable_height: height,
                walkable_climb: climb,
                walkable_radius: radius,
                ..tessera_config::BakeConfig::default().voxel_params()
            };
            let mut fused = field.clone();
            let mut apart = field;
            // Twice through one scratch: reused buffers must not leak into the next field.
            let mut scratch = ErodeScratch::default();
            filter_all_in(&mut scratch, &mut fused.clone(), &params);
            filter_all_in(&mut scratch, &mut fused, &params);
            filter_low_hanging_obstacles(&mut apart, climb);
            filter_ledges(&mut apart, height, climb);
            filter_low_clearance(&mut apart, height);
            erode(&mut apart, height, climb, radius);
            prop_assert_eq!(fused, apart);
        }

        #[test]
        fn erosion_as_the_reference(
            field in prop_oneof![span_fields(1, 4), storeys()],
            height in 1u32..8,
            climb in 0u32..5,
            radius in 0u32..4,
        ) {
            let mut fast = field.clone();
            let mut slow = field;
            // Twice through one scratch: reused buffers must not leak into the next field.
            let mut scratch = ErodeScratch::default();
            erode_in(&mut scratch, &mut fast.clone(), height, climb, radius);
            erode_in(&mut scratch, &mut fast, height, climb, radius);
            reference::erode(&mut slow, height, climb, radius);
            prop_assert_eq!(fast, slow);
        }
    }
}
