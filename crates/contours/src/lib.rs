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
//! **Tiles.** A tile owns the edges of its core cells; it sees the cells around its core, so it knows
//! every edge's successor, even one owned by a neighbour. [`trace_tile`] returns closed cycles
//! and open chains that leave the tile. [`ContourJoiner`] joins chains across tiles in any
//! order; where two chains meet in a straight line, the meeting point existed only because of
//! the tiling (a third-class vertex) and is removed. The joined contours equal those of a
//! single-tile bake.
//!
//! One algorithm per file:
//!
//! * `grid`: the cell and edge helpers both methods share (membership, corner heights, what
//!   lies across an edge, the next heading at a point).
//! * `oracle`: the seed's own method for one tile ([`corner_points`] by the neighbour
//!   configuration masks, [`contours_by_pairing`] by Alg. 3-5), kept to check tracing against.
//! * `trace`: [`trace_tile`], cycles and open chains of a tile.
//! * `join`: [`ContourJoiner`], chains joined across tiles, third-class vertices removed.
//!
//! Pure: no I/O, no threads.

mod grid;
mod join;
mod oracle;
mod trace;

pub use join::ContourJoiner;
pub use oracle::{contours_by_pairing, corner_points, CornerKind};
pub use trace::{trace_tile, trace_tile_in, Scratch};

#[cfg(test)]
mod tests;
