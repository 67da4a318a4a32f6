//! Cell and edge helpers on the voxel grid, shared by the seed's method and by tracing.
//!
//! Based on: seed 000, 4.1.1 (contour edges lie between a span of the region and a cell that
//! is not in it; membership by floor level, as in segmentation).
//!
//! A grid point `(x, y)` is the lower-left corner of cell `(x, y)`. An edge leaves a point
//! with a heading (east, north, west, south) and has the region's cell on its left.

use tessera_artifacts::heading::{EAST, NORTH, WEST};
use tessera_artifacts::{Levels, Point, Reach, SpanField, NO_NEIGHBOUR, OUT_OF_REACH};

/// The grid step of each heading (east, north, west, south).
pub(crate) const STEP: [(i32, i32); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];

/// The cell on the left of an edge leaving grid point `p` with `heading` (the region's cell).
#[inline]
pub(crate) fn left_cell(p: Point, heading: u8) -> (i32, i32) {
    match heading {
        EAST => (p.0, p.1),
        NORTH => (p.0 - 1, p.1),
        WEST => (p.0 - 1, p.1 - 1),
        _ => (p.0, p.1 - 1),
    }
}

/// The cell on the right of that edge (outside the region).
#[inline]
pub(crate) fn right_cell(p: Point, heading: u8) -> (i32, i32) {
    match heading {
        EAST => (p.0, p.1 - 1),
        NORTH => (p.0, p.1),
        WEST => (p.0 - 1, p.1),
        _ => (p.0 - 1, p.1 - 1),
    }
}

/// A tile's field seen by floor level: the field and the level of each of its spans
/// ([`Levels::of_spans`]), so that membership tests compare numbers instead of dividing
/// heights.
pub(crate) struct LevelField<'a> {
    pub(crate) field: &'a SpanField,
    lv: std::borrow::Cow<'a, [u32]>,
}

impl<'a> LevelField<'a> {
    pub(crate) fn new(field: &'a SpanField, levels: Levels) -> LevelField<'a> {
        LevelField {
            field,
            lv: levels.of_spans(field).into(),
        }
    }

    /// The view with the levels already computed (`lv`: [`Levels::of_spans`]).
    pub(crate) fn with(field: &'a SpanField, lv: &'a [u32]) -> LevelField<'a> {
        LevelField {
            field,
            lv: lv.into(),
        }
    }

    /// The level of span `k` ([`NO_LEVEL`](tessera_artifacts::NO_LEVEL) when it is not walkable).
    #[inline]
    pub(crate) fn level(&self, k: usize) -> u32 {
        self.lv[k]
    }

    /// The walkable span of column (x, y) at `level`, as an index into the field's spans; None
    /// also outside the field.
    #[inline]
    pub(crate) fn span_at(&self, x: i32, y: i32, level: u32) -> Option<usize> {
        let f = self.field;
        if !f.rect.contains(x, y) {
            return None;
        }
        let i = f.rect.index(x, y);
        let a = f.column_start[i] as usize;
        let column = &self.lv[a..f.column_start[i + 1] as usize];
        column.iter().position(|&l| l == level).map(|p| a + p)
    }

    /// True when cell (x, y) has a walkable span at `level` (a member of the region at that
    /// level, since all cells around a grid point are 8-neighbours).
    #[inline]
    pub(crate) fn member(&self, x: i32, y: i32, level: u32) -> bool {
        self.span_at(x, y, level).is_some()
    }

    /// The floor height of a region (at `level`) at grid point `p`: the highest of its floors
    /// in the four cells around `p`. Decided by those four cells alone, so every tile that sees
    /// the point agrees.
    pub(crate) fn corner_height(&self, p: Point, level: u32) -> u32 {
        let f = self.field;
        let mut h = 0;
        for (x, y) in [
            (p.0 - 1, p.1 - 1),
            (p.0, p.1 - 1),
            (p.0 - 1, p.1),
            (p.0, p.1),
        ] {
            if f.rect.contains(x, y) {
                let i = f.rect.index(x, y);
                for k in f.column_start[i] as usize..f.column_start[i + 1] as usize {
                    if self.lv[k] == level {
                        h = h.max(f.spans[k].zmax);
                    }
                }
            }
        }
        h
    }

    /// What lies across a boundary edge whose region floor is at height `z`: the label of the
    /// walkable floor of cell (x, y) nearest in height within the agent's height (the lower one
    /// on a tie), marked [`OUT_OF_REACH`] beyond the climb, or [`NO_NEIGHBOUR`]. Two consecutive
    /// edges with the same neighbour label border the same region (their outside cells are
    /// 8-neighbours with one label).
    pub(crate) fn neighbour_across(&self, x: i32, y: i32, z: u32, reach: Reach) -> u32 {
        let f = self.field;
        if !f.rect.contains(x, y) {
            return NO_NEIGHBOUR;
        }
        let i = f.rect.index(x, y);
        (f.column_start[i] as usize..f.column_start[i + 1] as usize)
            .filter(|&k| f.spans[k].walkable && f.spans[k].zmax.abs_diff(z) <= reach.height)
            .min_by_key(|&k| (f.spans[k].zmax.abs_diff(z), f.spans[k].zmax))
            .map_or(NO_NEIGHBOUR, |k| {
                let level = self.lv[k];
                if f.spans[k].zmax.abs_diff(z) <= reach.climb {
                    level
                } else {
                    level | OUT_OF_REACH
                }
            })
    }

    /// True when an edge leaves `p` with `heading` at `level`.
    #[inline]
    fn edge_leaves(&self, p: Point, heading: u8, level: u32) -> bool {
        let (lx, ly) = left_cell(p, heading);
        let (rx, ry) = right_cell(p, heading);
        self.member(lx, ly, level) && !self.member(rx, ry, level)
    }

    /// The heading that follows an edge arriving at `p` with `heading`: the only edge leaving
    /// `p`, or the right turn where two leave (a slash or antislash point).
    pub(crate) fn next_heading(&self, p: Point, heading: u8, level: u32) -> u8 {
        let right = (heading + 3) % 4;
        let straight = heading;
        let left = (heading + 1) % 4;
        for h in [right, straight, left] {
            if self.edge_leaves(p, h, level) {
                return h;
            }
        }
        unreachable!("a boundary edge always continues")
    }
}

/// The start point of the edge on side `heading` of cell (x, y) (the side that has the cell on
/// its left when walked in that heading).
#[inline]
pub(crate) fn side_start(x: i32, y: i32, heading: u8) -> Point {
    match heading {
        EAST => (x, y),
        NORTH => (x + 1, y),
        WEST => (x + 1, y + 1),
        _ => (x, y + 1),
    }
}
