//! The bake's one voxel grid and the memory checks made against it before any tile is
//! touched: a budget too small for one tile, or for the densest tile, is refused up front
//! with the size it would take.

use tessera_artifacts::{GridFrame, TileCoord};
use tessera_config::VoxelParams;
use tessera_geom::union_find;

use crate::BakeError;

/// The smallest binning buffer [bytes]; binning gets a quarter of the budget, at least this.
pub(crate) const MIN_BIN_BUFFER: u64 = 1 << 20;

/// The most a stage's buffers take however large the budget: beyond this no stage gets
/// faster (the scene is read, binned and polygonized in pieces of this size at no measurable
/// cost; benches/RESULTS.md), and a bake should take no more memory than it needs. A smaller
/// budget gets a quarter (ingest, bin) or half (polygons) of itself instead.
pub(crate) const STAGE_BUFFER_CAP: u64 = 16 << 20;

/// The grid over the cached scene (`name`, for messages): its corner on the world origin,
/// tiles of the configured size.
pub(crate) fn frame_of(
    name: &str,
    scene: &crate::ingest::Scene,
    params: &VoxelParams,
) -> Result<GridFrame, BakeError> {
    let info = scene.info();
    // Wider than the grid can number (its coordinates are i32): the frame would clamp it and
    // drop what lies beyond, so the scene is refused here, by axis, before any tile.
    for (axis, extent) in ["x", "y"].into_iter().zip(info.bounds_max) {
        let cells = GridFrame::cells_needed(f64::from(extent.max(0.0)), params.cell_size);
        if cells.is_nan() || cells > GridFrame::MAX_CELLS as f64 {
            return Err(BakeError::TooLarge(format!(
                "{name}: the scene spans {} along {axis}: {cells:.3e} cells of {} m, \
                 more than the grid's {}; look for stray triangles far from the rest, or use \
                 larger cells",
                kilometres(f64::from(extent)),
                params.cell_size,
                GridFrame::MAX_CELLS
            )));
        }
    }
    let frame = tessera_voxel::grid_frame(info.origin, info.bounds_max, params);
    frame.validate().map_err(|e| BakeError::Corrupt {
        path: scene.path().to_path_buf(),
        message: e.to_string(),
    })?;
    // Tiles are keyed by a u32 row-major index in every pack and journal.
    if frame.tile_count() as u64 > u32::MAX as u64 {
        return Err(BakeError::TooLarge(format!(
            "{name}: the scene spans {}: {} tiles of {} cells, more than a bake can number; look for \
             stray triangles far from the rest, or use larger tiles",
            extent_km(&frame),
            frame.tile_count(),
            frame.tile_size
        )));
    }
    Ok(frame)
}

/// `metres` as kilometres for a message: `1234 km`, or `1.000e27 km` past a billion.
fn kilometres(metres: f64) -> String {
    let km = metres / 1000.0;
    if km < 1e9 {
        format!("{km:.0} km")
    } else {
        format!("{km:.3e} km")
    }
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

/// Where the outliers of a sparse world are: the tiles holding triangles (`tiles`: index and
/// bytes of triangles) grouped into clusters of touching tiles (with corners), the cluster
/// with the most bytes taken as the world and the others ordered farthest from it first
/// (then by their first tile). Up to `max` of them, each as the plan rectangle of its tiles
/// in Z-up world coordinates `[x0, y0, x1, y1]`.
pub(crate) fn outlying_clusters(
    frame: &GridFrame,
    tiles: impl IntoIterator<Item = (u32, u64)>,
    max: usize,
) -> Vec<[f64; 4]> {
    let tiles: Vec<(TileCoord, u64)> = tiles
        .into_iter()
        .map(|(key, bytes)| (frame.tile_coord(key as usize), bytes))
        .collect();
    let at: std::collections::HashMap<(u32, u32), usize> = tiles
        .iter()
        .enumerate()
        .map(|(i, (c, _))| ((c.x, c.y), i))
        .collect();
    // Union-find over the tiles (fewer than 2^32: tiles are numbered by u32), joined to the
    // neighbours before them in row order.
    let mut parent: Vec<u32> = (0..tiles.len() as u32).collect();
    for (i, (c, _)) in tiles.iter().enumerate() {
        let (x, y) = (c.x as i64, c.y as i64);
        for (dx, dy) in [(-1, 0), (-1, -1), (0, -1), (1, -1)] {
            let (nx, ny) = (x + dx, y + dy);
            if nx < 0 || ny < 0 {
                continue;
            }
            if let Some(&j) = at.get(&(nx as u32, ny as u32)) {
                union_find::join(&mut parent, i as u32, j as u32);
            }
        }
    }
    // Per cluster (by its root): bytes, tile bounds [x0, y0, x1, y1] and first tile.
    let mut clusters: std::collections::BTreeMap<u32, (u64, [u32; 4], usize)> = Default::default();
    for (i, (c, bytes)) in tiles.iter().enumerate() {
        let r = union_find::root(&mut parent, i as u32);
        let e = clusters.entry(r).or_insert((0, [c.x, c.y, c.x, c.y], i));
        e.0 += bytes;
        e.1 = [
            e.1[0].min(c.x),
            e.1[1].min(c.y),
            e.1[2].max(c.x),
            e.1[3].max(c.y),
        ];
        e.2 = e.2.min(i);
    }
    let mut clusters: Vec<(u64, [u32; 4], usize)> = clusters.into_values().collect();
    clusters.sort_by_key(|&(bytes, _, first)| (std::cmp::Reverse(bytes), first));
    let Some(&(_, world, _)) = clusters.first() else {
        return Vec::new();
    };
    // Tiles between a cluster's rectangle and the world's (0 when they overlap).
    let gap = |b: [u32; 4]| {
        let along = |lo: u32, hi: u32, wlo: u32, whi: u32| {
            wlo.saturating_sub(hi).max(lo.saturating_sub(whi))
        };
        along(b[0], b[2], world[0], world[2]).max(along(b[1], b[3], world[1], world[3]))
    };
    let mut others: Vec<(u32, usize, [u32; 4])> = clusters[1..]
        .iter()
        .map(|&(_, b, first)| (gap(b), first, b))
        .collect();
    others.sort_by_key(|&(g, first, _)| (std::cmp::Reverse(g), first));
    let edge = frame.tile_size as f64 * frame.cell_size;
    let o = frame.world_origin;
    others
        .into_iter()
        .take(max)
        .map(|(_, _, b)| {
            [
                o[0] + b[0] as f64 * edge,
                o[1] + b[1] as f64 * edge,
                o[0] + (b[2] + 1) as f64 * edge,
                o[1] + (b[3] + 1) as f64 * edge,
            ]
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlying_clusters_are_the_ones_apart_from_the_heaviest_farthest_first() {
        // 100 x 100 tiles of 10 m (10 cells of 1 m), the grid's corner at (1000, 2000).
        let frame = GridFrame::new([1000.0, 2000.0, 0.0], [999.0, 999.0, 1.0], 1.0, 0.1, 10, 3);
        let key = |x: u32, y: u32| y * frame.tiles()[0] + x;
        let tiles = [
            // The world: a diagonal run of tiles (corners touch), the most bytes.
            (key(50, 50), 500),
            (key(51, 51), 500),
            (key(52, 52), 500),
            // Farthest: 50 tiles from the world's rectangle.
            (key(0, 0), 36),
            // Near, two touching tiles.
            (key(55, 50), 36),
            (key(56, 50), 36),
            // Far: 47 tiles.
            (key(99, 99), 36),
        ];
        let got = outlying_clusters(&frame, tiles, 8);
        assert_eq!(
            got,
            [
                [1000.0, 2000.0, 1010.0, 2010.0],
                [1990.0, 2990.0, 2000.0, 3000.0],
                [1550.0, 2500.0, 1570.0, 2510.0],
            ]
        );
        assert_eq!(outlying_clusters(&frame, tiles, 1).len(), 1);
        // One cluster: no outlier.
        assert!(outlying_clusters(&frame, tiles[..3].iter().copied(), 8).is_empty());
    }
}
