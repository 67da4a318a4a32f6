//! The bake's one voxel grid and the memory checks made against it before any tile is
//! touched: a budget too small for one tile, or for the densest tile, is refused up front
//! with the size it would take.

use tessera_artifacts::{GridFrame, TileCoord};
use tessera_config::VoxelParams;
use tessera_ingest::cache::SceneCache;

use crate::BakeError;

/// The smallest binning buffer [bytes]; binning gets a quarter of the budget, at least this.
pub(crate) const MIN_BIN_BUFFER: u64 = 1 << 20;

/// The most a stage's buffers take however large the budget: beyond this no stage gets
/// faster (the scene is read, binned and polygonized in pieces of this size at no measurable
/// cost; benches/RESULTS.md), and a bake should take no more memory than it needs. A smaller
/// budget gets a quarter (ingest, bin) or half (polygons) of itself instead.
pub(crate) const STAGE_BUFFER_CAP: u64 = 16 << 20;

/// The grid over the cached scene: its corner on the world origin, tiles of the configured
/// size.
pub(crate) fn frame_of(cache: &SceneCache, params: &VoxelParams) -> Result<GridFrame, BakeError> {
    let info = cache.info();
    let frame = tessera_voxel::grid_frame(info.origin, info.bounds_max, params);
    frame.validate().map_err(|e| BakeError::Corrupt {
        path: cache.path().to_path_buf(),
        message: e.to_string(),
    })?;
    // Tiles are keyed by a u32 row-major index in every pack and journal.
    if frame.tile_count() as u64 > u32::MAX as u64 {
        return Err(BakeError::NoWalkable(format!(
            "the scene spans {}: {} tiles of {} cells, more than a bake can number; look for \
             stray triangles far from the rest, or use larger tiles",
            extent_km(&frame),
            frame.tile_count(),
            frame.tile_size
        )));
    }
    Ok(frame)
}

/// The grid's extent, as `W x H km`.
fn extent_km(frame: &GridFrame) -> String {
    let km = |cells: u32| cells as f64 * frame.cell_size / 1000.0;
    format!("{:.1} x {:.1} km", km(frame.cells[0]), km(frame.cells[1]))
}

/// A warning when the world's bounding rectangle holds far more tiles than its geometry
/// touches: a few triangles far from the rest (a stray vertex, another object's
/// coordinates) stretch the world. The bake still works (only tiles with geometry cost
/// anything), but the world may not be what was meant.
pub(crate) fn sparse_world_warning(frame: &GridFrame, with_geometry: u64) -> Option<String> {
    let all = frame.tile_count() as u64;
    (all >= 1 << 20 && all > 64 * with_geometry.max(1)).then(|| {
        format!(
            "the scene spans {} ({all} tiles) but only {with_geometry} tiles hold triangles: \
             some triangles lie far from the rest",
            extent_km(frame)
        )
    })
}

/// The memory a bake needs whatever the triangles: binning buffers at their minimum and one
/// tile of this grid in flight with one span per cell.
pub fn minimum_budget(frame: &GridFrame) -> u64 {
    let cells = largest_tile_cells(frame);
    MIN_BIN_BUFFER + tessera_voxel::memory::estimate(cells, 0, cells)
}

/// Refuses a bake's `budget` below [`minimum_budget`] plus what its worker threads' overhead
/// (`threads`) takes off the top.
pub(crate) fn check_minimum(frame: &GridFrame, budget: u64, threads: u64) -> Result<(), BakeError> {
    let minimum = minimum_budget(frame) + threads;
    if budget < minimum {
        return Err(BakeError::OverBudget(format!(
            "a memory budget of {} bytes is too small for one {}-cell tile of this world with \
             these threads; the minimum is {} bytes ({} MiB)",
            budget,
            frame.tile_size,
            minimum,
            minimum.div_ceil(1 << 20)
        )));
    }
    Ok(())
}

/// Refuses a budget too small to voxelize the densest tile, which holds `largest` bytes of
/// triangles.
pub(crate) fn check_densest(frame: &GridFrame, largest: u64, budget: u64) -> Result<(), BakeError> {
    let cells = largest_tile_cells(frame);
    let need = tessera_voxel::memory::estimate(cells, largest, cells);
    if need > budget {
        return Err(BakeError::OverBudget(format!(
            "the densest tile holds {largest} bytes of triangles and needs about {need} bytes to voxelize, \
             more than the memory budget of {budget} bytes; raise --memory-budget to at least {} MiB or lower --tile-size",
            need.div_ceil(1 << 20)
        )));
    }
    Ok(())
}

/// Cells of the largest voxelized tile rectangle (the first tile is never smaller than another).
fn largest_tile_cells(frame: &GridFrame) -> u64 {
    frame.tile_voxelized(TileCoord { x: 0, y: 0 }).area() as u64
}
