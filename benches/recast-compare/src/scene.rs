//! Loading a scene through tessera's own ingest and cutting it into the tiles both sides voxelize.
//!
//! The scene goes through `open_scene` and `build_cache` exactly as in a bake (Z-up, rebased on
//! the bounds minimum, narrowed to f32), into a scene cache in a temporary folder. Both tessera
//! and Recast then read these f32 triangles, so any difference between them comes from the
//! voxelizers, not from parsing or precision.

use std::error::Error;
use std::path::Path;
use tessera_artifacts::{GridFrame, Levels, TileCoord, Triangle};
use tessera_config::{
    AgentSettings, BakeConfig, RegionSettings, SegmentationMode, VoxelParams, VoxelSettings,
};
use tessera_geom::UpAxis;
use tessera_ingest::cache::{build_cache, SceneCache, SourceKey};

/// The settings of one comparison, in world units (as the command line gives them).
#[derive(Clone, Debug)]
pub struct Settings {
    pub cell_size: f64,
    pub cell_height: f64,
    pub tile_size: u32,
    pub agent_height: f64,
    pub agent_radius: f64,
    pub max_climb: f64,
    pub max_slope: f64,
}

impl Default for Settings {
    /// The settings of the comparison asked for: 5 cm cells, 2 cm voxels, 256-cell tiles, agent
    /// 2.0 m tall, 0.6 m radius, 0.5 m climb, 45 degrees.
    fn default() -> Self {
        Settings {
            cell_size: 0.05,
            cell_height: 0.02,
            tile_size: 256,
            agent_height: 2.0,
            agent_radius: 0.6,
            max_climb: 0.5,
            max_slope: 45.0,
        }
    }
}

impl Settings {
    /// The validated tessera config for these settings. Voxelization does not depend on the
    /// segmentation mode; flat is asked for here because it accepts any climb, so the
    /// voxelization comparison runs whatever the settings.
    pub fn config(&self) -> Result<BakeConfig, Box<dyn Error>> {
        self.config_with(SegmentationMode::Flat)
    }

    /// The validated tessera config with segmentation `mode`.
    pub fn config_with(&self, mode: SegmentationMode) -> Result<BakeConfig, Box<dyn Error>> {
        let config = BakeConfig {
            voxel: VoxelSettings {
                cell_size: self.cell_size,
                cell_height: self.cell_height,
                tile_size: self.tile_size.into(),
            },
            agent: AgentSettings {
                height: self.agent_height,
                radius: self.agent_radius,
                max_climb: self.max_climb,
                max_slope: self.max_slope,
            },
            regions: RegionSettings {
                mode,
                ..RegionSettings::default()
            },
            // The polygon settings do not matter to the tile stages this harness times.
            ..BakeConfig::default()
        };
        config.validate("command line")?;
        Ok(config)
    }

    /// How tessera groups floors into regions in `mode`, as a bake with these settings does.
    pub fn levels(&self, mode: SegmentationMode) -> Result<Levels, Box<dyn Error>> {
        Ok(tessera_voxel::levels(
            &self.config_with(mode)?.voxel_params(),
        ))
    }
}

/// A scene cut into tiles: the grid, and for each tile with geometry its triangles.
pub struct TiledScene {
    pub frame: GridFrame,
    pub params: VoxelParams,
    /// Triangles in the scene (after ingest dropped degenerate ones).
    pub triangles: u64,
    /// Rebased height of the highest vertex [m].
    pub top: f64,
    /// Steepest walkable slope [degrees] (Recast takes the angle, tessera its cosine).
    pub max_slope: f64,
    /// Tiles that received at least one triangle, row-major, with their triangles in scene order.
    pub tiles: Vec<(TileCoord, Vec<Triangle>)>,
}

impl TiledScene {
    /// Area ids for up to the largest tile's triangles: all `default` (the harness reads no
    /// `[[areas]]`), made once, outside any timed loop.
    pub fn default_areas(&self) -> Vec<u8> {
        vec![0; self.tiles.iter().map(|(_, t)| t.len()).max().unwrap_or(0)]
    }
}

impl TiledScene {
    /// Triangle copies over all tiles (a triangle reaching k tiles counts k times): the work
    /// both voxelizers actually do.
    pub fn placements(&self) -> u64 {
        self.tiles.iter().map(|(_, t)| t.len() as u64).sum()
    }

    /// Columns voxelized over all tiles (each tile's core grown by the band).
    pub fn cells(&self) -> u64 {
        self.tiles
            .iter()
            .map(|(t, _)| self.frame.tile_voxelized(*t).area() as u64)
            .sum()
    }
}

/// Ingests `path` and bins its triangles into the tiles of the grid `settings` describe.
pub fn load(path: &Path, up: UpAxis, settings: &Settings) -> Result<TiledScene, Box<dyn Error>> {
    let scratch = tempfile::tempdir()?;
    let cache_path = scratch.path().join("scene.cache");
    let key = SourceKey::of_file(path, up, &Default::default())?;
    {
        let mut source = tessera_ingest::open_scene(path, up, &scratch.path().join("scratch"))?;
        build_cache(source.as_mut(), key, &cache_path)?;
    }
    let cache = SceneCache::open(&cache_path)?;
    let info = *cache.info();
    let params = settings.config()?.voxel_params();
    // The same grid a bake lays.
    let frame = tessera_voxel::grid_frame(info.origin, info.bounds_max, &params);
    frame.validate()?;
    let mut bins: Vec<Vec<Triangle>> = vec![Vec::new(); frame.tile_count()];
    for tri in cache.triangles() {
        tessera_tiler::tiles_of_triangle(&frame, tri, |t| bins[frame.tile_index(t)].push(*tri));
    }
    let tiles = frame
        .tile_coords()
        .zip(bins)
        .filter(|(_, tris)| !tris.is_empty())
        .collect();
    Ok(TiledScene {
        frame,
        params,
        triangles: info.triangles,
        top: info.bounds_max[2].max(0.0) as f64,
        max_slope: settings.max_slope,
        tiles,
    })
}
