//! The bake, stage by stage, as a streaming dataflow inside a memory budget.
//!
//! ```text
//! scene file ──ingest──> work/scene.cache ──bin──> work/tiles.pack
//!     ──reader──[bounded]──> voxelize workers (rayon) ──[bounded]──> writer ──> work/spans.pack
//!                                                                      └──> summary.json
//! ```
//!
//! * Binning is a barrier (any triangle may land in any tile); its buffers are a reservation
//!   from the budget and spill to the tile pack when full.
//! * The reader reserves each tile's memory before reading it, so when workers or the writer
//!   fall behind, the reader waits: back-pressure, not buffering. Channel capacities are sized
//!   from the budget.
//! * The writer restores tile order before appending, so every file a bake writes has the same
//!   bytes for any thread count.
//!
//! This crate owns threads and the bake folder's layout ([`BakeLayout`]); the stages it calls
//! are pure.

mod layout;
mod polygon_stage;
mod progress;

pub use layout::BakeLayout;
pub use progress::{LogFormat, Progress};

use crossbeam_channel::bounded;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera_artifacts::{CellRect, GridFrame, RegionBatch, SpanField, TileCoord, Triangle};
use tessera_budget::{MemoryBudget, OverBudget, PeakSampler, Reservation};
use tessera_config::BakeConfig;
use tessera_geom::UpAxis;
use tessera_ingest::cache::{ensure_cache, SourceKey};
use tessera_ingest::{IngestError, MeshSource, SceneFormat, SceneSource};
use tessera_polygons::PolygonError;
use tessera_store::{Journal, JournalReader, PackReader, PackWriter, StoreError};

/// Pack kinds.
pub const TILES_KIND: &[u8; 8] = b"TSTILES\0";
pub const SPANS_KIND: &[u8; 8] = b"TSSPANS\0";
pub const REGIONS_KIND: &[u8; 8] = b"TSREGNS\0";

/// Why a bake failed. The binary maps each kind to its own exit code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BakeError {
    #[error(transparent)]
    Input(#[from] IngestError),
    #[error("{0}")]
    NoWalkable(String),
    #[error("out of memory budget: {0}")]
    OverBudget(String),
    #[error(transparent)]
    Io(#[from] StoreError),
    #[error("interrupted: checkpoints are intact; run the same command again to resume")]
    Interrupted,
    #[error("corrupt artifact {path}: {message}")]
    Corrupt { path: PathBuf, message: String },
}

impl From<OverBudget> for BakeError {
    fn from(e: OverBudget) -> Self {
        BakeError::OverBudget(e.to_string())
    }
}

/// What to bake.
pub enum SceneInput {
    /// A scene file; `up` None means the format's convention (OBJ: Z, glTF: Y).
    File { path: PathBuf, up: Option<UpAxis> },
    /// An in-memory Z-up mesh (the built-in demo world).
    Mesh {
        name: String,
        positions: Vec<[f64; 3]>,
        triangles: Vec<[u32; 3]>,
    },
}

/// A bake request: the scene, the settings and the machine resources it may use.
pub struct BakeRequest {
    pub scene: SceneInput,
    pub config: BakeConfig,
    pub out_dir: PathBuf,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Budget for the bake's own large allocations [bytes].
    pub memory_budget: u64,
    pub progress: Progress,
    /// Set (by a signal handler) to stop at the next safe point with checkpoints intact.
    pub interrupt: Option<Arc<AtomicBool>>,
}

fn interrupted(req: &BakeRequest) -> bool {
    req.interrupt
        .as_ref()
        .is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Identities of each stage's inputs and settings: a checkpoint made under another key is
/// not reused.
struct StageKeys {
    bin: u64,
    voxelize: u64,
    polygons: u64,
}

/// Bumped when a stage's output changes meaning, so old checkpoints are recomputed.
const CHECKPOINT_VERSION: u32 = 2;

impl StageKeys {
    fn new(
        info: &tessera_ingest::cache::CacheInfo,
        frame: &GridFrame,
        config: &BakeConfig,
    ) -> StageKeys {
        let params = &config.voxel_params();
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&CHECKPOINT_VERSION.to_le_bytes());
        h.update(&info.key.content_hash.to_le_bytes());
        h.update(&[info.key.up.code()]);
        h.update(&info.payload_hash.to_le_bytes());
        h.update(&frame.encode());
        let bin = h.digest();
        h.update(b"voxelize+segment+contours");
        for v in [
            params.walkable_height,
            params.walkable_climb,
            params.walkable_radius,
            params.region_step,
        ] {
            h.update(&v.to_le_bytes());
        }
        h.update(&params.walkable_slope_cos.to_bits().to_le_bytes());
        let voxelize = h.digest();
        h.update(b"polygons+navmesh");
        h.update(&tessera_navmesh::VERSION.to_le_bytes());
        h.update(&config.polygons.max_error.to_bits().to_le_bytes());
        h.update(format!("{:?}", config.polygons.partition).as_bytes());
        h.update(&config.polygons.tau_degrees.to_bits().to_le_bytes());
        h.update(&[u8::from(config.polygons.portal_removal)]);
        h.update(
            &config
                .polygons
                .detail_sample_distance
                .to_bits()
                .to_le_bytes(),
        );
        h.update(&config.polygons.detail_max_error.to_bits().to_le_bytes());
        h.update(&config.agent.radius.to_bits().to_le_bytes());
        for p in &config.polygons.reachable_from {
            for c in p {
                h.update(&c.to_bits().to_le_bytes());
            }
        }
        h.update(&[info.key.up.code()]);
        for v in info.origin {
            h.update(&v.to_bits().to_le_bytes());
        }
        StageKeys {
            bin,
            voxelize,
            polygons: h.digest(),
        }
    }
}

/// One group of [`BakeSummary::by_notches`]: regions with `min_notches ..= max_notches`
/// notches (no upper end: `null`), their polygons and notches.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NotchGroup {
    pub min_notches: u64,
    pub max_notches: Option<u64>,
    pub regions: u64,
    pub polygons: u64,
    pub notches: u64,
}

impl NotchGroup {
    /// The groups of `groups`, in order.
    pub fn list(groups: &tessera_navmesh::NotchGroups) -> Vec<NotchGroup> {
        tessera_navmesh::NOTCH_GROUPS
            .iter()
            .enumerate()
            .map(|(g, &(first, last))| NotchGroup {
                min_notches: first,
                max_notches: (last != u64::MAX).then_some(last),
                regions: groups.regions[g],
                polygons: groups.polygons[g],
                notches: groups.notches[g],
            })
            .collect()
    }
}

/// What a bake did, written as `summary.json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BakeSummary {
    pub scene: String,
    pub up: String,
    pub triangles: u64,
    pub degenerate_triangles: u64,
    pub scene_cache_reused: bool,
    pub tiles: u64,
    pub tiles_with_geometry: u64,
    pub tile_size: u32,
    pub cells: [u32; 2],
    /// Triangle copies written to tiles (a triangle overlapping k tiles counts k times; 0 when
    /// the tile pack was reused).
    pub triangle_placements: u64,
    /// Stages whose checkpoint was valid for this input and config and was reused whole.
    pub stages_reused: Vec<String>,
    /// Tiles whose voxelization was recovered from a checkpoint rather than recomputed.
    pub resumed_tiles: u64,
    pub spans: u64,
    pub walkable_spans: u64,
    /// Merged regions (flat: 8-connected spans of one floor height), across tile borders.
    pub regions: u64,
    /// Walkable area: cells in regions times the cell area [m^2].
    pub walkable_area_m2: f64,
    /// Contours (outer and holes) of the merged regions.
    pub contours: u64,
    /// Corner points on those contours, after the merge.
    pub contour_vertices: u64,
    /// Vertices that existed only because of the tiling (straight through a tile border),
    /// removed by the merge.
    pub third_class_removed: u64,
    /// Convex polygons in the navmesh, their distinct vertices, the edges two of them share
    /// (portals), links between polygons that share no edge, and the reflex vertices of the
    /// simplified region outlines (cells per notch = polygons / notches).
    pub polygons: u64,
    pub polygon_vertices: u64,
    /// Points added for height detail (seed 004).
    pub detail_vertices: u64,
    pub portals: u64,
    pub links: u64,
    pub notches: u64,
    /// Regions, their polygons and their notches, grouped by the notches a region has
    /// (seed 002's measure per group; its floor plans have 15 to 106 notches).
    pub by_notches: Vec<NotchGroup>,
    /// Plan area of the polygons [m^2] (differs from `walkable_area_m2` by simplification).
    pub navmesh_area_m2: f64,
    /// Size of `navmesh.tsn`.
    pub navmesh_bytes: u64,
    /// With `polygons.reachable_from` seeds: polygons dropped as unreachable, and the islands
    /// they formed.
    pub unreachable_polygons_removed: u64,
    pub unreachable_islands_removed: u64,
    /// Largest merge frontier: links waiting for a tile not yet seen.
    pub merge_frontier_links: u64,
    /// Largest memory the merge frontier held (waiting links, open regions, open contour
    /// chains), estimated [bytes]. Outside the budget's reservations.
    pub merge_frontier_bytes: u64,
    pub peak_rss_bytes: u64,
    pub peak_anon_bytes: u64,
    /// Peak bytes reserved from the budget.
    pub peak_reserved_bytes: u64,
    pub threads: usize,
    pub memory_budget_bytes: u64,
    /// Bytes the bake folder holds.
    pub disk_bytes: u64,
    /// Seconds per stage, and `total`.
    pub seconds: BTreeMap<String, f64>,
}

/// The memory a bake needs whatever the triangles: binning buffers at their minimum and one
/// tile of this grid in flight with one span per cell.
pub fn minimum_budget(frame: &GridFrame) -> u64 {
    let cells = largest_tile_cells(frame);
    MIN_BIN_BUFFER + tessera_voxel::memory::estimate(cells, 0, cells)
}

/// Cells of the largest voxelized tile rectangle (the first tile is never smaller than another).
fn largest_tile_cells(frame: &GridFrame) -> u64 {
    frame.tile_voxelized(TileCoord { x: 0, y: 0 }).area() as u64
}

const MIN_BIN_BUFFER: u64 = 1 << 20;

/// Runs a whole bake.
pub fn bake(req: BakeRequest) -> Result<BakeSummary, BakeError> {
    let started = Instant::now();
    tessera_budget::return_freed_memory_to_os();
    let sampler = PeakSampler::start(Duration::from_millis(5));
    let layout = BakeLayout::new(&req.out_dir);
    layout.create()?;
    let budget = MemoryBudget::new(req.memory_budget);
    let progress = req.progress.clone();
    let mut seconds = BTreeMap::new();
    // Stages whose checkpoint was reused whole.
    let mut reused: Vec<String> = Vec::new();

    // 1. Ingest into the scene cache.
    let t = Instant::now();
    progress.stage_start("ingest", 0);
    let (cache, stats, scene_name, up) = match &req.scene {
        SceneInput::File { path, up } => {
            let up = match up {
                Some(u) => *u,
                None => SceneFormat::of(path)?.default_up(),
            };
            let key = SourceKey::of_file(path, up)?;
            let scratch = layout.scratch();
            let (cache, stats) = ensure_cache(
                &layout.scene_cache(),
                key,
                &mut || tessera_ingest::open_scene(path, up, &scratch),
                &mut |e| progress.warn(&format!("scene cache rebuilt: {e}")),
            )?;
            (cache, stats, path.display().to_string(), up)
        }
        SceneInput::Mesh {
            name,
            positions,
            triangles,
        } => {
            let key = SourceKey::of_mesh(positions, triangles, UpAxis::Z);
            let (cache, stats) = ensure_cache(
                &layout.scene_cache(),
                key,
                &mut || {
                    Ok(Box::new(MeshSource {
                        name: name.clone(),
                        positions,
                        triangles,
                    }) as Box<dyn SceneSource>)
                },
                &mut |e| progress.warn(&format!("scene cache rebuilt: {e}")),
            )?;
            (cache, stats, name.clone(), UpAxis::Z)
        }
    };
    let _ = std::fs::remove_dir_all(layout.scratch());
    if stats.reused {
        reused.push("ingest".to_string());
    }
    seconds.insert("ingest".into(), t.elapsed().as_secs_f64());
    progress.stage_done("ingest", stats.triangles);

    // 2. The grid.
    let info = *cache.info();
    let params = req.config.voxel_params();
    let frame = tessera_voxel::grid_frame(info.origin, info.bounds_max, &params);
    frame.validate().map_err(|e| BakeError::Corrupt {
        path: cache.path().to_path_buf(),
        message: e.to_string(),
    })?;
    let minimum = minimum_budget(&frame);
    if req.memory_budget < minimum {
        return Err(BakeError::OverBudget(format!(
            "a memory budget of {} bytes is too small for one {}-cell tile of this world; the minimum is {} bytes ({} MiB)",
            req.memory_budget,
            frame.tile_size,
            minimum,
            minimum.div_ceil(1 << 20)
        )));
    }

    // 3. Bin the triangles into tiles on disk (reused when the scene and grid are unchanged).
    let t = Instant::now();
    let keys = StageKeys::new(&info, &frame, &req.config);
    let tiles_header = [keys.bin.to_le_bytes().as_slice(), &frame.encode()].concat();
    let triangles = cache.triangles();
    let tiles_reused = match PackReader::open(layout.tiles_pack(), TILES_KIND) {
        Ok(r) if r.header() == tiles_header => match r.verify() {
            Ok(()) => true,
            Err(e) => {
                progress.warn(&format!("tile pack recomputed: {e}"));
                false
            }
        },
        _ => false,
    };
    let mut placements = 0;
    if tiles_reused {
        reused.push("bin".to_string());
    } else {
        progress.stage_start("bin", triangles.len() as u64);
        let bin_limit = (req.memory_budget / 4).clamp(MIN_BIN_BUFFER, 256 << 20);
        let bin_reservation = budget.reserve(bin_limit, "binning buffers")?;
        let mut pack = PackWriter::create(layout.tiles_pack(), TILES_KIND, &tiles_header)?;
        let mut binner = tessera_tiler::Binner::new(&frame, bin_limit as usize);
        let mut spill = |tile: u32, bytes: &[u8]| {
            progress.add_bytes(bytes.len() as u64);
            pack.append(tile, bytes)
        };
        const RELEASE_EVERY: usize = (64 << 20) / std::mem::size_of::<Triangle>();
        for (i, tri) in triangles.iter().enumerate() {
            binner.add(tri, &mut spill)?;
            if (i + 1) % RELEASE_EVERY == 0 {
                cache.release_pages();
                progress.advance("bin", (i + 1) as u64);
                if interrupted(&req) {
                    return Err(BakeError::Interrupted);
                }
            }
        }
        placements = binner.finish(&mut spill)?;
        pack.finish()?;
        cache.release_pages();
        drop(bin_reservation);
        progress.stage_done("bin", triangles.len() as u64);
    }
    seconds.insert("bin".into(), t.elapsed().as_secs_f64());

    // 4. Voxelize, streaming tiles through the workers.
    let t = Instant::now();
    let tiles = PackReader::open(layout.tiles_pack(), TILES_KIND)?;
    let largest = tiles
        .keys()
        .iter()
        .map(|&k| tiles.raw_len(k))
        .max()
        .unwrap_or(0);
    let cells = largest_tile_cells(&frame);
    let need = tessera_voxel::memory::estimate(cells, largest, cells);
    if need > req.memory_budget {
        return Err(BakeError::OverBudget(format!(
            "the densest tile holds {largest} bytes of triangles and needs about {need} bytes to voxelize, \
             more than the memory budget of {} bytes; raise --memory-budget to at least {} MiB or lower --tile-size",
            req.memory_budget,
            need.div_ceil(1 << 20)
        )));
    }
    let counts = voxelize_all(
        &frame,
        &params,
        &tiles,
        &budget,
        req.threads,
        &layout,
        &progress,
        keys.voxelize,
        req.interrupt.as_deref(),
    )?;
    if counts.resumed_tiles == tiles.keys().len() as u64 {
        reused.push("voxelize".to_string());
    }
    seconds.insert("voxelize".into(), t.elapsed().as_secs_f64());
    progress.stage_done("voxelize", counts.tiles_with_geometry);

    if counts.walkable_spans == 0 {
        return Err(BakeError::NoWalkable(format!(
            "{scene_name}: no walkable surface: {} triangles voxelized into {} spans, none walkable for this agent \
             (check --up, the agent settings and the slope limit)",
            stats.triangles, counts.spans
        )));
    }

    // 5. Polygons and the navmesh file (reused when made from the same regions and settings).
    let t = Instant::now();
    let navmesh_path = layout.navmesh();
    // Reused only with the regions it was made from: a bake whose checkpoints were removed
    // (`--fresh`, `tessera clean`) makes everything again.
    // The key is read from the header alone first: mapping and validating a large file that
    // is about to be replaced would count its pages as the bake's memory for nothing.
    let regions_reused = reused.iter().any(|s| s == "voxelize");
    let key_matches = regions_reused
        && tessera_navmesh::read_key(&navmesh_path).is_ok_and(|k| k == keys.polygons);
    let existing = match key_matches.then(|| tessera_navmesh::NavMeshFile::open(&navmesh_path)) {
        None => None,
        Some(Ok(f)) if f.key() == keys.polygons => Some(f),
        Some(Ok(_)) => None,
        Some(Err(tessera_navmesh::NavMeshError::Io { .. })) => None,
        Some(Err(e)) => {
            progress.warn(&format!("navmesh recomputed: {e}"));
            None
        }
    };
    let polygons = match existing {
        Some(file) => {
            reused.push("polygons".to_string());
            PolygonCounts::of(file.mesh(), file.len() as u64)
        }
        None => {
            let made = build_navmesh(
                &req,
                &layout,
                &info,
                &frame,
                up,
                &budget,
                keys.polygons,
                &progress,
            )?;
            // Read back by streaming (no map, so the file's pages never count as the bake's
            // memory): the header and checksum must be what was meant to be written.
            tessera_navmesh::check_file(&navmesh_path).map_err(|e| BakeError::Corrupt {
                path: navmesh_path.clone(),
                message: e.to_string(),
            })?;
            PolygonCounts {
                polygons: made.polygons,
                vertices: made.vertices,
                detail_vertices: made.detail_vertices,
                portals: made.stats.portals as u64,
                links: made.stats.links as u64,
                notches: made.stats.notches,
                by_notches: made.stats.by_notches.clone(),
                area: made.stats.walkable_area,
                bytes: made.bytes,
                polygons_removed: made.stats.polygons_removed,
                islands_removed: made.stats.islands_removed,
            }
        }
    };
    seconds.insert("polygons".into(), t.elapsed().as_secs_f64());

    seconds.insert("total".into(), started.elapsed().as_secs_f64());
    let (peak_anon, peak_rss) = sampler.peaks();
    let summary = BakeSummary {
        scene: scene_name,
        up: up.to_string(),
        triangles: stats.triangles,
        degenerate_triangles: stats.degenerate,
        scene_cache_reused: stats.reused,
        tiles: frame.tile_count() as u64,
        tiles_with_geometry: counts.tiles_with_geometry,
        tile_size: frame.tile_size,
        cells: frame.cells,
        triangle_placements: placements,
        stages_reused: reused,
        resumed_tiles: counts.resumed_tiles,
        spans: counts.spans,
        walkable_spans: counts.walkable_spans,
        regions: counts.regions,
        walkable_area_m2: counts.region_spans as f64 * frame.cell_size * frame.cell_size,
        contours: counts.contours,
        contour_vertices: counts.contour_vertices,
        third_class_removed: counts.third_class_removed,
        polygons: polygons.polygons,
        polygon_vertices: polygons.vertices,
        detail_vertices: polygons.detail_vertices,
        portals: polygons.portals,
        links: polygons.links,
        notches: polygons.notches,
        by_notches: NotchGroup::list(&polygons.by_notches),
        navmesh_area_m2: polygons.area,
        navmesh_bytes: polygons.bytes,
        unreachable_polygons_removed: polygons.polygons_removed,
        unreachable_islands_removed: polygons.islands_removed,
        merge_frontier_links: counts.frontier_peak.0 as u64,
        merge_frontier_bytes: counts.frontier_bytes,
        peak_rss_bytes: peak_rss,
        peak_anon_bytes: peak_anon,
        peak_reserved_bytes: budget.peak_reserved(),
        threads: req.threads,
        memory_budget_bytes: req.memory_budget,
        disk_bytes: layout.disk_bytes(),
        seconds,
    };
    tessera_store::write_atomic(layout.config_toml(), req.config.to_toml().as_bytes())?;
    let json = serde_json::to_vec_pretty(&summary).expect("summary serializes");
    tessera_store::write_atomic(layout.summary_json(), &json)?;
    Ok(summary)
}

/// What the summary reports about the navmesh.
struct PolygonCounts {
    polygons: u64,
    vertices: u64,
    detail_vertices: u64,
    portals: u64,
    links: u64,
    notches: u64,
    by_notches: tessera_navmesh::NotchGroups,
    area: f64,
    bytes: u64,
    polygons_removed: u64,
    islands_removed: u64,
}

impl PolygonCounts {
    fn of(mesh: &tessera_navmesh::ArchivedNavMesh, bytes: u64) -> PolygonCounts {
        PolygonCounts {
            polygons: mesh.polys.len() as u64,
            vertices: mesh.verts.len() as u64,
            detail_vertices: mesh.detail_verts.len() as u64,
            portals: mesh.stats.portals.to_native() as u64,
            links: mesh.stats.links.to_native() as u64,
            notches: mesh.stats.notches.to_native(),
            by_notches: mesh.stats.by_notches.to_native(),
            area: mesh.stats.walkable_area.to_native(),
            bytes,
            polygons_removed: mesh.stats.polygons_removed.to_native(),
            islands_removed: mesh.stats.islands_removed.to_native(),
        }
    }
}

/// Polygonizes the merged regions of a finished region journal and writes the navmesh file
/// (atomically), streaming: see [`polygon_stage`].
#[allow(clippy::too_many_arguments)]
fn build_navmesh(
    req: &BakeRequest,
    layout: &BakeLayout,
    info: &tessera_ingest::cache::CacheInfo,
    frame: &GridFrame,
    up: UpAxis,
    budget: &Arc<MemoryBudget>,
    key: u64,
    progress: &Progress,
) -> Result<tessera_navgraph::Assembled, BakeError> {
    let regions_path = layout.regions_pack();
    let scratch = layout.work().join("polygons");
    let _ = std::fs::remove_dir_all(&scratch);
    let io = |e: String| BakeError::Corrupt {
        path: scratch.clone(),
        message: e,
    };
    // Working memory of the stage: windows of regions (their contours expand about twentyfold
    // while polygonized) and the assembler's sort buffers.
    let work = (budget.total() / 2).clamp(4 << 20, 256 << 20);
    let _reservation = budget.reserve(work, "polygon stage")?;
    let mut source = polygon_stage::JournalRegions::open(&regions_path, &scratch, work / 32)?;
    progress.stage_start("polygons", source.len() as u64);
    let params = req.config.voxel_params();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(req.threads.max(1))
        .build()
        .map_err(|e| io(format!("thread pool: {e}")))?;
    let agent = &req.config.agent;
    let nav_frame = tessera_navmesh::Frame {
        origin: info.origin,
        up: up.code(),
        cell_size: frame.cell_size as f32,
        cell_height: frame.cell_height as f32,
        agent_height: agent.height as f32,
        agent_radius: agent.radius as f32,
        agent_climb: agent.max_climb as f32,
    };
    // Vertex heights are each side's own floor; floors stacked in one column are at least the
    // agent's height apart.
    let climb = params.walkable_height.saturating_sub(1);
    let mut asm =
        tessera_navgraph::Assembler::new(nav_frame.clone(), climb, &scratch, (work / 4) as usize)
            .map_err(|e| {
            BakeError::Io(StoreError::io(
                &scratch,
                std::io::Error::other(e.to_string()),
            ))
        })?;
    // Stair links (seed 000, 5.2.2): facing blocked edges of two regions, ends within the
    // agent's radius in plan and within the climb in height. Erosion keeps walkable edges a
    // radius away from any wall, so edges facing each other across a wall are at least two
    // radii apart and never linked; without erosion (radius 0) they could be the two sides of
    // a thin wall, and no links are made.
    asm.stair_links(agent.radius / frame.cell_size, params.walkable_climb);
    let polygon_params = tessera_polygons::PolygonParams {
        partition: match req.config.polygons.partition {
            tessera_config::Partition::Anavmg => tessera_polygons::Partition::Anavmg {
                tau: req.config.polygons.tau_degrees.to_radians(),
                removal: req.config.polygons.portal_removal,
            },
            tessera_config::Partition::HertelMehlhorn => {
                tessera_polygons::Partition::HertelMehlhorn
            }
        },
        max_error: req.config.max_error_cells(),
        portal_climb: climb,
        detail: tessera_polygons::detail::DetailParams {
            sample_distance: req.config.polygons.detail_sample_distance / frame.cell_size,
            max_error: req.config.polygons.detail_max_error / frame.cell_height,
            max_points: 128,
            locality: frame.tile_size,
        },
    };
    // The heightfield for height detail: each tile's walkable floors, decoded once from the
    // span journal into a scratch file and read back a budgeted few at a time.
    let heights = if polygon_params.detail.is_on() {
        Some(pool.install(|| {
            polygon_stage::SpanHeights::open(
                &layout.spans_pack(),
                &scratch,
                frame,
                params.walkable_height / 2,
                work / 4,
            )
        })?)
    } else {
        None
    };
    let height_at = |x: i32, y: i32, near: f64| heights.as_ref().and_then(|h| h.height(x, y, near));
    let mut done = 0u64;
    pool.install(|| {
        let height: Option<&tessera_polygons::detail::HeightAt> =
            heights.is_some().then_some(&height_at);
        tessera_polygons::polygonize_stream(&mut source, polygon_params, height, &mut |out| {
            asm.add_outline(out.notches, out.polys.len() as u64);
            asm.add_region(&out.verts, &out.detail, &out.polys)
                .map_err(|e| PolygonError::Source(e.to_string()))?;
            done += 1;
            if done.is_multiple_of(256) {
                progress.advance("polygons", done);
            }
            Ok(())
        })
    })
    .map_err(|e| BakeError::Corrupt {
        path: regions_path.clone(),
        message: e.to_string(),
    })?;
    source.remove();
    if let Some(failure) = heights.as_ref().and_then(|h| h.failure()) {
        return Err(BakeError::Corrupt {
            path: layout.spans_pack(),
            message: format!("height detail: {failure}"),
        });
    }
    let seeds = &req.config.polygons.reachable_from;
    let internal: Vec<[f32; 3]> = seeds.iter().map(|&p| nav_frame.to_internal(p)).collect();
    let mut file = tessera_store::AtomicFile::create(layout.navmesh())?;
    let assembled = asm
        .finish(&internal, key, frame.tile_size, &mut file)
        .map_err(|e| match e {
            tessera_navgraph::BuildError::Io { source } => {
                BakeError::Io(StoreError::io(&layout.navmesh(), source))
            }
            e => io(e.to_string()),
        })?;
    file.commit()?;
    progress.stage_done("polygons", done);
    for &i in &assembled.unplaced_seeds {
        progress.warn(&format!(
            "polygons.reachable_from[{i}] = {:?} stands on no walkable polygon; ignored",
            seeds[i]
        ));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(assembled)
}

#[derive(Default)]
struct VoxelCounts {
    tiles_with_geometry: u64,
    spans: u64,
    walkable_spans: u64,
    regions: u64,
    region_spans: u64,
    /// Largest merge frontier: (waiting links, open regions).
    frontier_peak: (usize, usize),
    contours: u64,
    contour_vertices: u64,
    third_class_removed: u64,
    /// Tiles taken from the checkpoint instead of voxelized again.
    resumed_tiles: u64,
    /// Largest memory held by the merge frontier [bytes, estimated].
    frontier_bytes: u64,
}

/// What a worker does with a tile.
enum Work {
    /// Voxelize the tile's triangles in these parts.
    Voxelize {
        triangles: Vec<Triangle>,
        parts: Vec<CellRect>,
    },
    /// The tile's span field is in the checkpoint: decode it instead.
    Recovered,
}

/// A tile on its way to a worker, with the memory it holds.
struct TileJob {
    index: u32,
    coord: TileCoord,
    work: Work,
    reservation: Reservation,
}

/// A finished tile on its way to the writer.
struct TileDone {
    index: u32,
    recovered: bool,
    regions: tessera_artifacts::TileRegions,
    contours: tessera_artifacts::TileContours,
    compressed: Vec<u8>,
    raw_len: usize,
    spans: u64,
    walkable: u64,
    _reservation: Reservation,
}

/// Reads one tile and plans it: the parts it is voxelized in (one, unless a whole tile would
/// not fit the budget) and the memory that takes, reserved before the job leaves the reader.
fn read_and_plan(
    frame: &GridFrame,
    tiles: &PackReader,
    budget: &Arc<MemoryBudget>,
    key: u32,
    coord: TileCoord,
    tiles_path: &std::path::Path,
) -> Result<TileJob, BakeError> {
    let raw = tiles.raw_len(key);
    let mut reservation = budget.reserve(raw, "a tile's triangles")?;
    let bytes = tiles.read(key)?;
    let triangles =
        tessera_artifacts::triangles_from_bytes(&bytes).map_err(|e| BakeError::Corrupt {
            path: tiles_path.to_path_buf(),
            message: format!("tile {key}: {e}"),
        })?;
    drop(bytes);
    let core = frame.tile_core(coord);
    // What one part costs at most: its grid, the tile's triangles, every span its triangles
    // could make. Parts are sized so that two jobs fit the budget with the binning minimum.
    let cap = (budget.total().saturating_sub(MIN_BIN_BUFFER) / 2).saturating_sub(raw);
    let mut cost = |part: CellRect| {
        let rect = part.grown(frame.band);
        let bound = tessera_voxel::span_bound(frame, rect, &triangles);
        tessera_voxel::memory::estimate(
            rect.area() as u64,
            raw,
            bound.min(rect.area() as u64 * MAX_SPANS_PER_CELL),
        )
    };
    let parts = tessera_voxel::split_parts(core, cap, MIN_PART_SIDE, &mut cost);
    let working = parts.iter().map(|p| cost(*p)).max().unwrap_or(0);
    // Parts wait for assembly: their outputs and the assembled field, about a span per cell.
    let assembly = if parts.len() > 1 {
        2 * tessera_voxel::memory::estimate(
            core.grown(1).area() as u64,
            0,
            core.grown(1).area() as u64,
        )
    } else {
        0
    };
    let total = (raw + working + assembly).min(budget.total());
    reservation.reserve_more(total - raw, "a tile in flight")?;
    Ok(TileJob {
        index: key,
        coord,
        work: Work::Voxelize { triangles, parts },
        reservation,
    })
}

/// Voxelizes a tile's parts one after the other (or decodes its checkpoint), assembles it,
/// and segments and traces it.
fn run_job(
    frame: &GridFrame,
    params: &tessera_config::VoxelParams,
    checkpoint: &JournalReader,
    checkpoint_path: &std::path::Path,
    job: TileJob,
) -> Result<TileDone, BakeError> {
    let core = frame.tile_core(job.coord);
    let mut reservation = job.reservation;
    let recovered = matches!(job.work, Work::Recovered);
    let field = match job.work {
        Work::Recovered => {
            SpanField::decode(&checkpoint.read(job.index)?).map_err(|e| BakeError::Corrupt {
                path: checkpoint_path.to_path_buf(),
                message: format!("tile {}: {e}", job.index),
            })?
        }
        Work::Voxelize { triangles, parts } => {
            let mut outputs = Vec::with_capacity(parts.len());
            let mut worst = 0;
            let triangle_bytes = (triangles.len() * std::mem::size_of::<Triangle>()) as u64;
            for part in &parts {
                let v = if parts.len() == 1 {
                    tessera_voxel::voxelize_part(frame, params, *part, &triangles)
                } else {
                    let rect = part.grown(frame.band);
                    let subset: Vec<Triangle> = triangles
                        .iter()
                        .filter(|t| tessera_tiler::triangle_reaches(frame, t, &rect))
                        .copied()
                        .collect();
                    tessera_voxel::voxelize_part(frame, params, *part, &subset)
                };
                let cells = part.grown(frame.band).area() as u64;
                worst = worst.max(tessera_voxel::memory::estimate(
                    cells,
                    triangle_bytes,
                    v.rasterized_spans,
                ));
                outputs.push(v.field);
            }
            // Account for what the work really took if the plan fell short (it is an upper
            // bound by construction, so this is a safety net).
            reservation.grow_to(worst);
            drop(triangles);
            tessera_voxel::assemble(core, &outputs)
        }
    };
    debug_assert!(field.validate().is_ok());
    let (spans, walkable) = field.core_counts();
    let levels = tessera_artifacts::Levels {
        step: params.region_step,
    };
    let regions = tessera_regions::segment_tile(&field, job.coord, levels);
    let contours = tessera_contours::trace_tile(
        &field,
        &regions,
        tessera_artifacts::Reach {
            climb: params.walkable_climb,
            height: params.walkable_height,
        },
    );
    let (compressed, raw_len) = if recovered {
        (Vec::new(), 0)
    } else {
        let encoded = field.encode();
        (tessera_store::compress(&encoded), encoded.len())
    };
    drop(field);
    reservation.shrink_to(compressed.len() as u64);
    Ok(TileDone {
        index: job.index,
        recovered,
        regions,
        contours,
        compressed,
        raw_len,
        spans,
        walkable,
        _reservation: reservation,
    })
}

/// Spans per cell above which the span bound is not believed (a column holding more than this
/// many separate spans is beyond any real scene at these cell heights).
const MAX_SPANS_PER_CELL: u64 = 64;
/// Parts are not split below this side [cells].
const MIN_PART_SIDE: u32 = 16;
/// How often the writer makes its checkpoints durable.
const SYNC_EVERY: Duration = Duration::from_millis(500);

/// Opens the two checkpoints of the voxelize stage and lines them up: both hold the same
/// first tiles, in tile order, or both start afresh. Returns how many tiles they hold.
fn open_checkpoints(
    layout: &BakeLayout,
    frame: &GridFrame,
    stage_key: u64,
    order: &[u32],
    progress: &Progress,
) -> Result<(Journal, Journal, usize), BakeError> {
    let blob = frame.encode();
    let mut spans = Journal::open(layout.spans_pack(), SPANS_KIND, stage_key, &blob)?;
    let mut regions = Journal::open(layout.regions_pack(), REGIONS_KIND, stage_key, &blob)?;
    let n = spans.keys().len().min(regions.keys().len());
    let prefix_ok = spans.keys()[..n] == order[..n] && regions.keys()[..n] == order[..n];
    let n = if prefix_ok { n } else { 0 };
    if !prefix_ok {
        progress.warn("voxelize checkpoints do not match the tile order; recomputing");
    }
    spans.truncate(n)?;
    regions.truncate(n)?;
    Ok((spans, regions, n))
}

#[allow(clippy::too_many_arguments)]
fn voxelize_all(
    frame: &GridFrame,
    params: &tessera_config::VoxelParams,
    tiles: &PackReader,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    layout: &BakeLayout,
    progress: &Progress,
    stage_key: u64,
    interrupt: Option<&AtomicBool>,
) -> Result<VoxelCounts, BakeError> {
    let keys = tiles.keys();
    progress.stage_start("voxelize", keys.len() as u64);
    let (mut spans_out, mut regions_out, recovered) =
        open_checkpoints(layout, frame, stage_key, &keys, progress)?;
    let checkpoint = spans_out.snapshot()?;
    let checkpoint_path = layout.spans_pack();
    let coords: HashMap<u32, TileCoord> = frame
        .tile_coords()
        .map(|c| (frame.tile_index(c) as u32, c))
        .collect();
    let threads = threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("voxelize-{i}"))
        .build()
        .map_err(|e| BakeError::Io(StoreError::io(&layout.root, std::io::Error::other(e))))?;
    // The budget bounds what is in flight; the channels only need room for each worker's
    // next item.
    let (job_tx, job_rx) = bounded::<TileJob>(threads);
    let (done_tx, done_rx) = bounded::<Result<TileDone, BakeError>>(threads);
    let mut counts = VoxelCounts {
        resumed_tiles: recovered as u64,
        ..VoxelCounts::default()
    };
    let mut merger = tessera_stitch::RegionMerger::new();
    let mut joiner = tessera_contours::ContourJoiner::new();
    let tiles_path = layout.tiles_pack();
    let stopped = AtomicBool::new(false);
    // The merge frontier is held from the budget (it shrinks only as tiles arrive, so it
    // never waits; tiles wait for it instead, and the budget never lets that stall the bake).
    let mut frontier_peak = 0u64;
    let mut frontier_hold = budget.hold();

    std::thread::scope(|scope| -> Result<(), BakeError> {
        // Reader: read, plan, reserve, send; stops early when interrupted or when the writer
        // hangs up.
        let reader_done = done_tx.clone();
        let (tiles_path, coords, checkpoint, stopped) =
            (&tiles_path, &coords, &checkpoint, &stopped);
        let keys = &keys;
        let reader = scope.spawn(move || {
            for (n, &key) in keys.iter().enumerate() {
                if interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
                    stopped.store(true, Ordering::Relaxed);
                    return;
                }
                let job = if n < recovered {
                    budget
                        .reserve(checkpoint.raw_len(key) * 3, "a recovered tile")
                        .map(|reservation| TileJob {
                            index: key,
                            coord: coords[&key],
                            work: Work::Recovered,
                            reservation,
                        })
                        .map_err(BakeError::from)
                } else {
                    read_and_plan(frame, tiles, budget, key, coords[&key], tiles_path)
                };
                match job {
                    Ok(job) => {
                        if job_tx.send(job).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = reader_done.send(Err(e));
                        return;
                    }
                }
            }
        });
        // Workers on the rayon pool, one long-running loop each.
        let checkpoint_path = &checkpoint_path;
        let workers = scope.spawn(move || {
            pool.broadcast(|_| {
                for job in job_rx.iter() {
                    if done_tx
                        .send(run_job(frame, params, checkpoint, checkpoint_path, job))
                        .is_err()
                    {
                        return;
                    }
                }
            });
        });
        // Writer (this thread): restore tile order, merge, append to the checkpoints, count.
        let mut pending: BTreeMap<u32, TileDone> = BTreeMap::new();
        let mut order = keys.iter().copied();
        let mut next = order.next();
        let mut written = 0u64;
        let mut failure = None;
        let mut last_sync = Instant::now();
        for msg in done_rx.iter() {
            match msg {
                Ok(done) => {
                    pending.insert(done.index, done);
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
            while let Some(key) = next {
                let Some(done) = pending.remove(&key) else {
                    break;
                };
                progress.add_bytes(done.compressed.len() as u64);
                if let Err(e) = write_tile(
                    done,
                    key,
                    &mut spans_out,
                    &mut regions_out,
                    &mut merger,
                    &mut joiner,
                    &mut counts,
                ) {
                    failure = Some(e);
                    break;
                }
                let frontier = merger.held_bytes() + joiner.held_bytes();
                frontier_peak = frontier_peak.max(frontier);
                if frontier > frontier_hold.bytes() {
                    frontier_hold.grow_to(frontier);
                } else {
                    frontier_hold.shrink_to(frontier);
                }
                written += 1;
                progress.advance("voxelize", written);
                next = order.next();
                if last_sync.elapsed() >= SYNC_EVERY {
                    // Spans first: a resume keeps the tiles both checkpoints hold.
                    if let Err(e) = spans_out.sync().and_then(|_| regions_out.sync()) {
                        failure = Some(e.into());
                        break;
                    }
                    last_sync = Instant::now();
                }
            }
            if failure.is_some() || next.is_none() {
                break;
            }
        }
        drop(done_rx); // unblocks the workers and the reader if we stopped early
        let _ = reader.join();
        let _ = workers.join();
        spans_out.sync()?;
        regions_out.sync()?;
        match failure {
            Some(e) => Err(e),
            None if next.is_some() && stopped.load(Ordering::Relaxed) => {
                Err(BakeError::Interrupted)
            }
            None => Ok(()),
        }
    })?;
    if !spans_out.is_complete() {
        spans_out.finish()?;
    }
    if !regions_out.is_complete() {
        regions_out.finish()?;
    }
    debug_assert_eq!(merger.open_regions(), 0, "every tile was merged");
    debug_assert_eq!(joiner.open_chains(), 0, "every contour was closed");
    counts.frontier_peak = merger.peak_frontier;
    counts.frontier_bytes = frontier_peak;
    counts.third_class_removed = joiner.third_class_removed;
    Ok(counts)
}

/// The writer's work for one tile, in tile order: merge its regions and contours, and append
/// its outputs to the checkpoints (unless they came from there).
fn write_tile(
    done: TileDone,
    key: u32,
    spans_out: &mut Journal,
    regions_out: &mut Journal,
    merger: &mut tessera_stitch::RegionMerger,
    joiner: &mut tessera_contours::ContourJoiner,
    counts: &mut VoxelCounts,
) -> Result<(), BakeError> {
    counts.tiles_with_geometry += 1;
    counts.spans += done.spans;
    counts.walkable_spans += done.walkable;
    let mut batch = RegionBatch {
        regions: merger.add_tile(&done.regions),
        contours: done.contours.cycles,
    };
    for chain in done.contours.chains {
        batch.contours.extend(joiner.add(chain));
    }
    counts.regions += batch.regions.len() as u64;
    counts.region_spans += batch.regions.iter().map(|r| r.spans).sum::<u64>();
    counts.contours += batch.contours.len() as u64;
    counts.contour_vertices += batch
        .contours
        .iter()
        .map(|c| c.points.len() as u64)
        .sum::<u64>();
    if !done.recovered {
        spans_out.append_compressed(key, &done.compressed, done.raw_len)?;
        let encoded = batch.encode();
        regions_out.append_compressed(key, &tessera_store::compress(&encoded), encoded.len())?;
    }
    Ok(())
}

/// Reads every span field of a finished bake, in tile order (tests and tools).
pub fn read_span_fields(
    out_dir: &std::path::Path,
) -> Result<(GridFrame, Vec<SpanField>), BakeError> {
    let layout = BakeLayout::new(out_dir);
    let path = layout.spans_pack();
    let journal = Journal::open_complete(&path, SPANS_KIND)?;
    let corrupt = |message: String| BakeError::Corrupt {
        path: path.clone(),
        message,
    };
    let frame = GridFrame::decode(&Journal::blob(&path)?).map_err(|e| corrupt(e.to_string()))?;
    let mut fields = Vec::new();
    for key in journal.keys() {
        let field = SpanField::decode(&journal.read(key)?)
            .map_err(|e| corrupt(format!("tile {key}: {e}")))?;
        fields.push(field);
    }
    Ok((frame, fields))
}

/// Reads every region batch of a finished bake, in tile order (tests and tools).
pub fn read_region_batches(out_dir: &std::path::Path) -> Result<Vec<RegionBatch>, BakeError> {
    let layout = BakeLayout::new(out_dir);
    let path = layout.regions_pack();
    let journal = Journal::open_complete(&path, REGIONS_KIND)?;
    let mut batches = Vec::new();
    for key in journal.keys() {
        let batch = RegionBatch::decode(&journal.read(key)?).map_err(|e| BakeError::Corrupt {
            path: path.clone(),
            message: format!("tile {key}: {e}"),
        })?;
        batches.push(batch);
    }
    Ok(batches)
}
