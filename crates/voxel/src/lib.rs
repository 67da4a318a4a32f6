//! Tiled 2.5D voxelization (seed 000, sections 2.2-2.3).
//!
//! Based on: seed 000 (tiled voxelization into span columns, slope filtering, clearance
//! tagging), with the walkable-climb filters and agent-radius erosion that users of Recast
//! expect.
//!
//! [`voxelize_tile`] turns one tile's triangles into a [`SpanField`]:
//!
//! 1. [`rasterize`]: each triangle is clipped to every grid row, then every column, it touches;
//!    the clipped polygon's height range becomes a span; overlapping spans of a column merge.
//!    A triangle whose slope exceeds the limit makes unwalkable spans.
//! 2. [`filters`]: low hanging obstacles (a step up within the climb stays walkable), ledges
//!    (a drop deeper than the climb to a neighbour, or neighbours too uneven), clearance (less
//!    than the agent height to the span above), then erosion by the agent radius.
//!
//! **Tiling invariance.** Every clip is computed from the triangle and the global row or column
//! number alone, in f64 global cell units, never from tile-relative coordinates or from
//! earlier clips, so a column's spans are bit-for-bit the same whichever tile computes them.
//! Filters look at most `radius + 1` cells away; tiles are voxelized with a band of
//! `radius + 3` cells, and the field returned keeps the core plus a one-cell ring.
//!
//! Pure: no I/O, no threads.

pub mod filters;
pub mod rasterize;

use tessera_artifacts::{GridFrame, SpanField, TileCoord, Triangle};
use tessera_config::VoxelParams;

/// Voxelizes one tile: rasterize the triangles over the tile grown by its band, filter, and
/// return the core plus a one-cell ring.
pub fn voxelize_tile(
    frame: &GridFrame,
    params: &VoxelParams,
    tile: TileCoord,
    triangles: &[Triangle],
) -> SpanField {
    let rect = frame.tile_voxelized(tile);
    let core = frame.tile_core(tile);
    let mut field = rasterize::rasterize(frame, params, rect, core, triangles);
    filters::filter_all(&mut field, params);
    filters::crop(&field, core.grown(1), core)
}

/// Bytes a tile's voxelization needs at most for its grid and columns, given its triangle
/// bytes: the basis of the tile's memory reservation.
pub fn tile_memory_estimate(frame: &GridFrame, triangle_bytes: u64) -> u64 {
    let cells = frame.tile_voxelized(TileCoord { x: 0, y: 0 }).area() as u64;
    // Column heads and CSR offsets, a few spans per column, the erosion distances, plus the
    // triangles themselves and the spans they may add.
    cells * (4 + 4 + 3 * 12 + 3 * 4) + triangle_bytes * 2
}
