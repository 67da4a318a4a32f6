//! Walkability filters on a rasterized field, in the order Recast users know: low hanging
//! obstacles, ledges, clearance, then erosion by the agent radius.
//!
//! Heights are in voxels; `walkable_height` is the clearance an agent needs, `walkable_climb`
//! the step it can take. Columns outside the field count as a drop (a ledge), which is why a
//! tile is voxelized with a band wider than any filter looks.

use tessera_artifacts::{CellRect, Span, SpanField};
use tessera_config::VoxelParams;

/// Open sky above the top span of a column.
const SKY: i64 = i64::MAX / 4;

/// The 4 axis directions (dx, dy) in the order used everywhere: -x, +y, +x, -y.
const DIRS: [(i32, i32); 4] = [(-1, 0), (0, 1), (1, 0), (0, -1)];

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

/// The ceiling above span `k` of a column: the next span's bottom, or open sky.
#[inline]
fn ceiling(col: &[Span], k: usize) -> i64 {
    col.get(k + 1).map_or(SKY, |s| s.zmin as i64)
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
    let mut ledges: Vec<usize> = Vec::new();
    for y in rect.y0..rect.y1() {
        for x in rect.x0..rect.x1() {
            let i = rect.index(x, y);
            let col = field.column_at(i);
            let base = field.column_start[i] as usize;
            for k in 0..col.len() {
                if !col[k].walkable {
                    continue;
                }
                let bot = col[k].zmax as i64;
                let top = ceiling(col, k);
                let mut lowest_drop = SKY;
                let mut reach_min = bot;
                let mut reach_max = bot;
                for (dx, dy) in DIRS {
                    let (nx, ny) = (x + dx, y + dy);
                    if !rect.contains(nx, ny) {
                        lowest_drop = lowest_drop.min(-climb - 1);
                        continue;
                    }
                    let ncol = field.column(nx, ny);
                    // The space below the neighbour's first span: a drop to nothing.
                    let first_bottom = ncol.first().map_or(SKY, |s| s.zmin as i64);
                    if top.min(first_bottom) - bot.max(-climb - 1) >= height {
                        lowest_drop = lowest_drop.min(-climb - 1 - bot);
                    }
                    for j in 0..ncol.len() {
                        let nbot = ncol[j].zmax as i64;
                        let ntop = ceiling(ncol, j);
                        if top.min(ntop) - bot.max(nbot) >= height {
                            lowest_drop = lowest_drop.min(nbot - bot);
                            if (nbot - bot).abs() <= climb {
                                reach_min = reach_min.min(nbot);
                                reach_max = reach_max.max(nbot);
                            }
                        }
                    }
                }
                if lowest_drop < -climb || reach_max - reach_min > climb {
                    ledges.push(base + k);
                }
            }
        }
    }
    for i in ledges {
        field.spans[i].walkable = false;
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

/// For each span and direction, the index (into `spans`) of the walkable neighbour span it
/// connects to: both walkable, enough clearance over the shared gap, tops within the climb.
fn connections(field: &SpanField, height: u32, climb: u32) -> Vec<[u32; 4]> {
    const NO: u32 = u32::MAX;
    let rect = field.rect;
    let mut links = vec![[NO; 4]; field.spans.len()];
    for y in rect.y0..rect.y1() {
        for x in rect.x0..rect.x1() {
            let i = rect.index(x, y);
            let base = field.column_start[i] as usize;
            let col = field.column_at(i);
            for k in 0..col.len() {
                if !col[k].walkable {
                    continue;
                }
                let bot = col[k].zmax as i64;
                let top = ceiling(col, k);
                for (d, (dx, dy)) in DIRS.iter().enumerate() {
                    let (nx, ny) = (x + dx, y + dy);
                    if !rect.contains(nx, ny) {
                        continue;
                    }
                    let ni = rect.index(nx, ny);
                    let nbase = field.column_start[ni] as usize;
                    let ncol = field.column_at(ni);
                    for j in 0..ncol.len() {
                        if !ncol[j].walkable {
                            continue;
                        }
                        let nbot = ncol[j].zmax as i64;
                        let ntop = ceiling(ncol, j);
                        if top.min(ntop) - bot.max(nbot) >= height as i64
                            && (nbot - bot).abs() <= climb as i64
                        {
                            links[base + k][d] = (nbase + j) as u32;
                            break;
                        }
                    }
                }
            }
        }
    }
    links
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
    const NO: u32 = u32::MAX;
    let limit = 2 * radius; // spans with distance < limit are removed
    let links = connections(field, height, climb);
    let mut dist = vec![u32::MAX; field.spans.len()];
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); limit as usize + 1];
    for (s, l) in links.iter().enumerate() {
        if field.spans[s].walkable && l.iter().any(|&n| n == NO) {
            dist[s] = 0;
            buckets[0].push(s as u32);
        }
    }
    for d in 0..limit {
        let mut k = 0;
        while k < buckets[d as usize].len() {
            let s = buckets[d as usize][k] as usize;
            k += 1;
            if dist[s] != d {
                continue; // a stale entry
            }
            let mut relax = |n: u32, nd: u32, buckets: &mut Vec<Vec<u32>>| {
                if nd < dist[n as usize] && nd <= limit {
                    dist[n as usize] = nd;
                    buckets[nd as usize].push(n);
                }
            };
            for dir in 0..4 {
                let n = links[s][dir];
                if n == NO {
                    continue;
                }
                relax(n, d + 2, &mut buckets);
                // Diagonal: one more step in the next direction round.
                let m = links[n as usize][(dir + 1) % 4];
                if m != NO {
                    relax(m, d + 3, &mut buckets);
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

/// Copies the columns of `rect` (which must lie inside the field) into a new field whose
/// authoritative part is `core`.
pub fn crop(field: &SpanField, rect: CellRect, core: CellRect) -> SpanField {
    debug_assert!(field.rect.contains_rect(&rect));
    let mut out = SpanField::empty(rect, core);
    out.column_start.clear();
    out.column_start.push(0);
    for y in rect.y0..rect.y1() {
        for x in rect.x0..rect.x1() {
            out.spans.extend_from_slice(field.column(x, y));
            out.column_start.push(out.spans.len() as u32);
        }
    }
    out
}
