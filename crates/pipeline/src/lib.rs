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
mod progress;

pub use layout::BakeLayout;
pub use progress::{LogFormat, Progress};

use crossbeam_channel::bounded;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera_artifacts::{CellRect, GridFrame, RegionBatch, SpanField, TileCoord, Triangle};
use tessera_budget::{MemoryBudget, OverBudget, PeakSampler, Reservation};
use tessera_config::BakeConfig;
use tessera_geom::UpAxis;
use tessera_ingest::cache::{ensure_cache, SourceKey};
use tessera_ingest::{IngestError, MeshSource, SceneFormat, SceneSource};
use tessera_store::{PackReader, PackWriter, StoreError};

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
    /// Triangle copies written to tiles (a triangle overlapping k tiles counts k times).
    pub triangle_placements: u64,
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
    /// Largest merge frontier: links waiting for a tile not yet seen.
    pub merge_frontier_links: u64,
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
    seconds.insert("ingest".into(), t.elapsed().as_secs_f64());
    progress.stage_done("ingest", stats.triangles);

    // 2. The grid.
    let info = *cache.info();
    let params = req.config.voxel_params();
    let extent = info.bounds_max.map(|v| v.max(0.0) as f64);
    let frame = GridFrame::new(
        info.origin,
        extent,
        params.cell_size,
        params.cell_height,
        params.tile_size,
        params.band,
    );
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

    // 3. Bin the triangles into tiles on disk.
    let t = Instant::now();
    let triangles = cache.triangles();
    progress.stage_start("bin", triangles.len() as u64);
    let bin_limit = (req.memory_budget / 4).clamp(MIN_BIN_BUFFER, 256 << 20);
    let bin_reservation = budget.reserve(bin_limit, "binning buffers")?;
    let mut pack = PackWriter::create(layout.tiles_pack(), TILES_KIND, &frame.encode())?;
    let mut binner = tessera_tiler::Binner::new(&frame, bin_limit as usize);
    let mut spill = |tile: u32, bytes: &[u8]| pack.append(tile, bytes);
    const RELEASE_EVERY: usize = (64 << 20) / std::mem::size_of::<Triangle>();
    for (i, tri) in triangles.iter().enumerate() {
        binner.add(tri, &mut spill)?;
        if (i + 1) % RELEASE_EVERY == 0 {
            cache.release_pages();
            progress.advance("bin", (i + 1) as u64);
        }
    }
    let placements = binner.finish(&mut spill)?;
    pack.finish()?;
    cache.release_pages();
    drop(bin_reservation);
    seconds.insert("bin".into(), t.elapsed().as_secs_f64());
    progress.stage_done("bin", triangles.len() as u64);

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
    )?;
    seconds.insert("voxelize".into(), t.elapsed().as_secs_f64());
    progress.stage_done("voxelize", counts.tiles_with_geometry);

    if counts.walkable_spans == 0 {
        return Err(BakeError::NoWalkable(format!(
            "{scene_name}: no walkable surface: {} triangles voxelized into {} spans, none walkable for this agent \
             (check --up, the agent settings and the slope limit)",
            stats.triangles, counts.spans
        )));
    }

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
        spans: counts.spans,
        walkable_spans: counts.walkable_spans,
        regions: counts.regions,
        walkable_area_m2: counts.region_spans as f64 * frame.cell_size * frame.cell_size,
        contours: counts.contours,
        contour_vertices: counts.contour_vertices,
        third_class_removed: counts.third_class_removed,
        merge_frontier_links: counts.frontier_peak.0 as u64,
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
}

/// A tile read from the pack, with the memory it holds and the parts it is voxelized in.
struct TileJob {
    index: u32,
    coord: TileCoord,
    triangles: Vec<Triangle>,
    parts: Vec<CellRect>,
    reservation: Reservation,
}

/// A voxelized tile on its way to the writer.
struct TileDone {
    index: u32,
    regions: tessera_regions::TileRegions,
    contours: tessera_contours::TileContours,
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
    reservation.absorb(budget.reserve(total - raw, "a tile in flight")?);
    Ok(TileJob {
        index: key,
        coord,
        triangles,
        parts,
        reservation,
    })
}

/// Voxelizes a job's parts one after the other and assembles the tile.
fn run_job(frame: &GridFrame, params: &tessera_config::VoxelParams, job: TileJob) -> TileDone {
    let core = frame.tile_core(job.coord);
    let mut outputs = Vec::with_capacity(job.parts.len());
    let mut worst = 0;
    let triangle_bytes = (job.triangles.len() * std::mem::size_of::<Triangle>()) as u64;
    for part in &job.parts {
        let v = if job.parts.len() == 1 {
            tessera_voxel::voxelize_part(frame, params, *part, &job.triangles)
        } else {
            let rect = part.grown(frame.band);
            let subset: Vec<Triangle> = job
                .triangles
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
    let mut reservation = job.reservation;
    // Account for what the work really took if the plan fell short (it is an upper bound by
    // construction, so this is a safety net).
    reservation.grow_to(worst);
    drop(job.triangles);
    let field = tessera_voxel::assemble(core, &outputs);
    drop(outputs);
    debug_assert!(field.validate().is_ok());
    let (spans, walkable) = field.core_counts();
    let regions = tessera_regions::segment_tile(&field, job.coord);
    let contours = tessera_contours::trace_tile(&field, &regions);
    let encoded = field.encode();
    drop(field);
    let raw_len = encoded.len();
    let compressed = tessera_store::compress(&encoded);
    drop(encoded);
    reservation.shrink_to(compressed.len() as u64);
    TileDone {
        index: job.index,
        regions,
        contours,
        compressed,
        raw_len,
        spans,
        walkable,
        _reservation: reservation,
    }
}

/// Spans per cell above which the span bound is not believed (a column holding more than this
/// many separate spans is beyond any real scene at these cell heights).
const MAX_SPANS_PER_CELL: u64 = 64;
/// Parts are not split below this side [cells].
const MIN_PART_SIDE: u32 = 16;

fn voxelize_all(
    frame: &GridFrame,
    params: &tessera_config::VoxelParams,
    tiles: &PackReader,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    layout: &BakeLayout,
    progress: &Progress,
) -> Result<VoxelCounts, BakeError> {
    let keys = tiles.keys();
    progress.stage_start("voxelize", keys.len() as u64);
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
    let mut out = PackWriter::create(layout.spans_pack(), SPANS_KIND, &frame.encode())?;
    let mut counts = VoxelCounts::default();
    let mut merger = tessera_stitch::RegionMerger::new();
    let mut joiner = tessera_contours::ContourJoiner::new();
    let mut regions_out = PackWriter::create(layout.regions_pack(), REGIONS_KIND, &frame.encode())?;
    let tiles_path = layout.tiles_pack();

    std::thread::scope(|scope| -> Result<(), BakeError> {
        // Reader: read, plan, reserve, send; stops early when the writer hangs up.
        let reader_done = done_tx.clone();
        let tiles_path = &tiles_path;
        let coords = &coords;
        let reader = scope.spawn(move || {
            for &key in &keys {
                match read_and_plan(frame, tiles, budget, key, coords[&key], tiles_path) {
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
        let workers = scope.spawn(move || {
            pool.broadcast(|_| {
                for job in job_rx.iter() {
                    if done_tx.send(Ok(run_job(frame, params, job))).is_err() {
                        return;
                    }
                }
            });
        });
        // Writer (this thread): restore tile order, append, count.
        let mut pending: BTreeMap<u32, TileDone> = BTreeMap::new();
        let mut order = tiles.keys().into_iter();
        let mut next = order.next();
        let mut written = 0u64;
        let mut failure = None;
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
                if !batch.is_empty() {
                    if let Err(e) = regions_out.append(key, &batch.encode()) {
                        failure = Some(e.into());
                        break;
                    }
                }
                if let Err(e) = out.append_compressed(key, &done.compressed, done.raw_len) {
                    failure = Some(e.into());
                    break;
                }
                written += 1;
                progress.advance("voxelize", written);
                next = order.next();
            }
            if failure.is_some() || next.is_none() {
                break;
            }
        }
        drop(done_rx); // unblocks the workers and the reader if we stopped early
        let _ = reader.join();
        let _ = workers.join();
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })?;
    out.finish()?;
    regions_out.finish()?;
    debug_assert_eq!(merger.open_regions(), 0, "every tile was merged");
    debug_assert_eq!(joiner.open_chains(), 0, "every contour was closed");
    counts.third_class_removed = joiner.third_class_removed;
    counts.frontier_peak = merger.peak_frontier;
    Ok(counts)
}

/// Reads every span field of a finished bake, in tile order (tests and tools).
pub fn read_span_fields(
    out_dir: &std::path::Path,
) -> Result<(GridFrame, Vec<SpanField>), BakeError> {
    let layout = BakeLayout::new(out_dir);
    let pack = PackReader::open(layout.spans_pack(), SPANS_KIND)?;
    let corrupt = |message: String| BakeError::Corrupt {
        path: layout.spans_pack(),
        message,
    };
    let frame = GridFrame::decode(pack.header()).map_err(|e| corrupt(e.to_string()))?;
    let mut fields = Vec::new();
    for key in pack.keys() {
        let field =
            SpanField::decode(&pack.read(key)?).map_err(|e| corrupt(format!("tile {key}: {e}")))?;
        fields.push(field);
    }
    Ok((frame, fields))
}

/// Reads every region batch of a finished bake, in tile order (tests and tools).
pub fn read_region_batches(out_dir: &std::path::Path) -> Result<Vec<RegionBatch>, BakeError> {
    let layout = BakeLayout::new(out_dir);
    let pack = PackReader::open(layout.regions_pack(), REGIONS_KIND)?;
    let mut batches = Vec::new();
    for key in pack.keys() {
        let batch = RegionBatch::decode(&pack.read(key)?).map_err(|e| BakeError::Corrupt {
            path: layout.regions_pack(),
            message: format!("tile {key}: {e}"),
        })?;
        batches.push(batch);
    }
    Ok(batches)
}
