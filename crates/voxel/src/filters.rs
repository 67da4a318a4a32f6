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
    filter_low_hanging_obstacles(field, params.walkable_climb);
    filter_ledges(field, params.walkable_height, params.walkable_climb);
    filter_low_clearance(field, params.walkable_height);
    erode(
        field,
        params.walkable_height,
        params.walkable_climb,
        params.walkable_radius,
    );
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
pub fn filter_ledges(field: &mut SpanField, height: u32, climb: u32) {
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
        let ncol = &field.spans[field.column_start[n] as usize..field.column_start[n + 1] as usize];
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

/// The walkable span of column `n` that walkable span `k` (floor `bot`, ceiling `top`)
/// connects to: enough clearance over the shared gap and tops within the climb. The first one
/// bottom-up, as an index into `spans`.
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

/// Removes walkable spans closer than `radius` cells to the walkable area's boundary.
///
/// Distances are chamfer distances (2 per axis step, 3 per diagonal step taken as two
/// connected axis steps) from every boundary span (a walkable span with fewer than four
/// connected neighbours), computed exactly by a bucket-queue Dijkstra stopped at `2 * radius`.
/// Being exact shortest paths, they depend only on the spans within `radius` cells, never on
/// scan order or on where the field ends: that is what makes erosion tile-invariant.
pub fn erode(field: &mut SpanField, height: u32, climb: u32, radius: u32) {
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
