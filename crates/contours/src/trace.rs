//! Boundary tracing of a tile's regions into closed cycles and open chains.
//!
//! Based on: seed 000, 4.1-4.2 (the contours of each region, with their corner points as
//! vertices; slash and antislash points visited once by each cycle that meets there) and
//! 4.1.4 (the tile extended by a one-cell band, so a chain that leaves the tile knows the edge
//! it continues into). The contours come out equal to those of the seed's pairing
//! ([`contours_by_pairing`](crate::contours_by_pairing)); see the crate documentation for the
//! orientation and the right-turn rule.

use tessera_artifacts::heading::{EAST, NORTH, SOUTH, WEST};
use tessera_artifacts::{
    Chain, Contour, EdgeKey, Point, Reach, SpanField, TileContours, TileRegions, NO_REGION,
};

use crate::grid::{left_cell, right_cell, side_start, LevelField, STEP};

/// Traces the contours of a tile's regions (see the crate documentation). `reach` decides
/// which floor across an edge is its neighbour.
///
/// An edge is named by the span it bounds and its heading (`span * 4 + heading`: each heading
/// is one side of the cell), so the bookkeeping is three flags per side in plain arrays.
pub fn trace_tile(field: &SpanField, regions: &TileRegions, reach: Reach) -> TileContours {
    let lv = regions.levels.of_spans(field);
    trace_tile_in(&mut Scratch::default(), field, &lv, regions, reach)
}

/// Tracing's per-edge and per-span buffers, reused from one tile to the next.
#[derive(Default)]
pub struct Scratch {
    /// Per edge: [`PRED`] (an owned edge leads into it), [`VISITED`] (a walk passed it).
    marks: Vec<u8>,
    cell_of: Vec<(i32, i32)>,
    order: Vec<usize>,
}

impl Scratch {
    /// Bytes the buffers hold.
    pub fn byte_size(&self) -> u64 {
        (self.marks.capacity() + self.cell_of.capacity() * 8 + self.order.capacity() * 8) as u64
    }
}

/// An edge's mark: an owned edge leads into it (it starts no chain).
const PRED: u8 = 1;
/// An edge's mark: a walk has passed it.
const VISITED: u8 = 2;

/// Clears `v` and fills it with `n` copies of `value`, keeping its buffer.
fn refill<T: Clone>(v: &mut Vec<T>, n: usize, value: T) {
    v.clear();
    v.resize(n, value);
}

/// [`trace_tile`] with the level of every span given (`lv`: [`Levels::of_spans`], the same
/// `regions.levels`) and the working buffers of `scratch`.
///
/// [`Levels::of_spans`]: tessera_artifacts::Levels::of_spans
pub fn trace_tile_in(
    scratch: &mut Scratch,
    field: &SpanField,
    lv: &[u32],
    regions: &TileRegions,
    reach: Reach,
) -> TileContours {
    let core = field.core;
    let lf = LevelField::with(field, lv);
    let n = field.spans.len() * 4;
    let Scratch {
        marks,
        cell_of,
        order,
    } = scratch;
    refill(cell_of, field.spans.len(), (0, 0));
    order.clear();
    for y in core.y0..core.y1() {
        for x in core.x0..core.x1() {
            let i = field.rect.index(x, y);
            for k in field.column_start[i] as usize..field.column_start[i + 1] as usize {
                if regions.labels[k] == NO_REGION {
                    continue;
                }
                cell_of[k] = (x, y);
                let level = lf.level(k);
                for heading in [EAST, NORTH, WEST, SOUTH] {
                    let (rx, ry) = right_cell(side_start(x, y, heading), heading);
                    if !lf.member(rx, ry, level) {
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
            level: lf.level(e / 4),
        }
    };
    // What lies across an owned edge.
    let across = |e: usize| -> u32 {
        let (x, y) = cell_of[e / 4];
        let heading = (e % 4) as u8;
        let (rx, ry) = right_cell(side_start(x, y, heading), heading);
        lf.neighbour_across(rx, ry, field.spans[e / 4].zmax, reach)
    };
    let height = |p: Point, level: u32| lf.corner_height(p, level);
    // The edge after `e`: owned (an index) or foreign (its key).
    let successor = |e: usize| -> Result<usize, EdgeKey> {
        let k = key_of(e);
        let (dx, dy) = STEP[k.heading as usize];
        let end = (k.x + dx, k.y + dy);
        let heading = lf.next_heading(end, k.heading, k.level);
        let (cx, cy) = left_cell(end, heading);
        if core.contains(cx, cy) {
            let span = lf
                .span_at(cx, cy, k.level)
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
    refill(marks, n, 0);
    for &e in order.iter() {
        if let Ok(s) = successor(e) {
            marks[s] |= PRED;
        }
    }
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
    let walk = |first: usize, marks: &mut [u8]| -> Walk {
        let start = key_of(first);
        let mut points = vec![(start.x, start.y)];
        let mut neighbours = vec![across(first)];
        let mut e = first;
        loop {
            marks[e] |= VISITED;
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
    for &e in order.iter() {
        if marks[e] & (PRED | VISITED) != 0 {
            continue;
        }
        let Walk {
            mut points,
            neighbours,
            foreign,
            last_heading,
        } = walk(e, marks);
        let next = foreign.expect("a walk from a chain start leaves the tile");
        points.push((next.x, next.y));
        let level = lf.level(e / 4);
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
    for &e in order.iter() {
        if marks[e] & VISITED != 0 {
            continue;
        }
        let Walk {
            mut points,
            mut neighbours,
            last_heading,
            ..
        } = walk(e, marks);
        // The start point is a vertex only if the cycle turns there or changes neighbour.
        if last_heading == (e % 4) as u8 && neighbours.last() == neighbours.first() {
            points.remove(0);
            neighbours.remove(0);
        }
        let level = lf.level(e / 4);
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
