//! The bake, stage by stage, as a streaming dataflow inside a memory budget.
//!
//! ```text
//! scene ─ingest─> work/scene.cache ─bin─> work/tiles.pack
//!   ─voxelize─> work/spans/              (reader → workers → writer, bounded channels)
//!     └merge──> work/regions/            (in the writer, tile order)
//!   ─polygons─> navmesh.tsn              (work/polygons/ while it runs)
//!   summary.json, config.toml
//! ```
//!
//! One file per stage, in pipeline order: `ingest`, `bin`, `voxelize` (its per-tile
//! work in `tile_work`), `merge`, `polygons` (its out-of-core readers in
//! `polygon_inputs`). Each names its inputs, its outputs (paths from [`BakeLayout`], which
//! owns every path of a bake folder), its stage key (`keys`: a hash of the canonical encoding
//! of what it reads), its timer and its progress. [`bake`] calls them in order and assembles
//! the [`BakeSummary`].
//!
//! * Every file a bake writes has the same bytes for any thread count, memory budget and
//!   tile size (the navmesh's header excepted: it records its tile size and key), and after
//!   any interruption and resume.
//! * Stage crates are pure; this crate owns the threads, the files and the budget. It takes
//!   its settings in grid units from `tessera-config` and converts no world units itself
//!   (the summary's areas in m^2 are the one way back).
//! * It does not parse command lines or install signal handlers: the caller sets
//!   [`BakeRequest::interrupt`].

mod bin;
mod disk;
mod error;
mod grid;
mod ingest;
mod keys;
mod layout;
mod merge;
mod polygon_inputs;
mod polygon_parts;
mod polygons;
mod progress;
mod region_reuse;
mod summary;
mod tile_work;
mod voxelize;

pub use bin::{BinShare, TilePacks, TILES_KIND};
pub use error::BakeError;
pub use grid::minimum_budget;
pub use ingest::{IngestShare, SplitAssignment};
pub use layout::BakeLayout;
pub use merge::REGIONS_KIND;
pub use polygon_inputs::RegionPart;
pub use polygons::{PartWritten, RegionShare};
pub use progress::{EventKind, LogFormat, Observer, Progress, ProgressEvent};
pub use summary::{AgentSummary, BakeSummary, NotchGroup, SceneFile};
pub use tessera_ingest::cache::SourceKey;
pub use tessera_polygons::{merge_asked, Asked};
pub use voxelize::{TileShare, SPANS_KIND};

/// The version of the finished tiles' wire form between the processes of a distributed bake:
/// processes of one job must agree on it.
pub const TILE_WIRE_VERSION: u32 = tile_work::WIRE_VERSION;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera_artifacts::{GridFrame, RegionBatch, SpanField};
use tessera_budget::{MemoryBudget, PeakSampler};
use tessera_config::{BakeConfig, VoxelParams};
use tessera_geom::UpAxis;
use tessera_store::Journal;

/// The stages in pipeline order: their names in progress output and in
/// [`BakeSummary::seconds`].
pub const STAGES: [&str; 5] = ["ingest", "bin", "voxelize", "merge", "polygons"];

/// What to bake.
pub enum SceneInput {
    /// A scene file; `up` None means the format's convention (OBJ: Z, glTF: Y).
    File { path: PathBuf, up: Option<UpAxis> },
    /// Several scene files baked as one scene, their triangles in the order given (a city
    /// exported one file per district or asset). Each file has a scene cache of its own
    /// (`work/scenes/`), so a bake after one file changed reads only that one again; every
    /// file must have the same up axis. One file is [`SceneInput::File`].
    Files {
        paths: Vec<PathBuf>,
        up: Option<UpAxis>,
    },
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
    /// Worker threads (at least 1; at most what the budget allows: see [`threads_for_budget`]).
    pub threads: usize,
    /// Budget for the bake's own large allocations [bytes].
    pub memory_budget: u64,
    pub progress: Progress,
    /// Set (by a signal handler) to stop at the next safe point with checkpoints intact.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// The caller's memory sampler (for example one that also keeps a trace for a report),
    /// whose peaks the summary reports; None: the bake samples on its own. One process needs
    /// one sampling thread.
    pub sampler: Option<Arc<PeakSampler>>,
}

/// How often a bake's own sampler reads the process's memory: often enough to catch the
/// peak of a tile in flight.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(5);

/// Memory a worker thread holds beyond the reservations of its work and its allocator arena's
/// cache (`tessera_budget::arena_cache`): its stack's touched pages. Counted against the
/// budget for every thread, with the arena's cache.
pub const THREAD_OVERHEAD: u64 = 1 << 20;

/// The most worker threads a budget of `memory_budget` bytes runs: their overhead
/// ([`THREAD_OVERHEAD`] each) takes at most an eighth of it. Beyond that, threads would only
/// wait for each other's reservations while their own memory broke the budget.
pub fn threads_for_budget(memory_budget: u64) -> usize {
    ((memory_budget / 8) / THREAD_OVERHEAD).max(1) as usize
}

/// Runs a whole bake.
pub fn bake(req: BakeRequest) -> Result<BakeSummary, BakeError> {
    bake_with(req, None)
}

/// Runs a whole bake as process 0 of a distributed bake: as [`bake`], but the voxelize stage
/// computes only the tiles `tiles` assigns to this process and takes the others' from it,
/// and the polygon stage polygonizes only this process's share of the regions (`regions`)
/// and reads the others' back. Every file is the same as [`bake`]'s.
pub fn bake_shared(req: BakeRequest, share: &dyn Share) -> Result<BakeSummary, BakeError> {
    bake_with(req, Some(share))
}

/// The other processes of a distributed bake, as process 0 sees them: the scene files, the
/// binning, the voxelize stage's tiles and the polygon stage's regions shared with them.
pub trait Share: IngestShare + BinShare + TileShare + RegionShare {}

impl<T: IngestShare + BinShare + TileShare + RegionShare> Share for T {}

/// The threads a bake runs (asked for, at most what the budget pays for) and the budget the
/// stages share once their overhead is taken off the top; warns when fewer are run.
fn threads_and_budget(
    threads: usize,
    memory_budget: u64,
    progress: &Progress,
) -> (usize, u64, Arc<MemoryBudget>) {
    let allowed = threads_for_budget(memory_budget);
    if threads > allowed {
        progress.warn(&format!(
            "{threads} threads asked for, {allowed} used: a memory budget of {:.1} MiB runs at most \
             {allowed} ({} MiB of stack and allocator cache each, an eighth of the budget)",
            memory_budget as f64 / (1u64 << 20) as f64,
            THREAD_OVERHEAD >> 20
        ));
    }
    let threads = threads.clamp(1, allowed);
    // One allocator arena per thread, each keeping a bounded cache for reuse.
    let cache = tessera_budget::arena_cache(memory_budget, threads);
    tessera_budget::tune_allocator(threads, cache);
    // The threads' overhead and what their arenas may keep come off the top: the stages share
    // what is left.
    let overhead = threads as u64 * (THREAD_OVERHEAD + 2 * cache);
    let budget = MemoryBudget::new(memory_budget.saturating_sub(overhead));
    (threads, overhead, budget)
}

fn bake_with(mut req: BakeRequest, share: Option<&dyn Share>) -> Result<BakeSummary, BakeError> {
    let started = Instant::now();
    let sampler = req
        .sampler
        .clone()
        .unwrap_or_else(|| Arc::new(PeakSampler::start(SAMPLE_EVERY)));
    let layout = BakeLayout::new(&req.out_dir);
    layout.create()?;
    let (threads, overhead, budget) =
        threads_and_budget(req.threads, req.memory_budget, &req.progress);
    req.threads = threads;
    let progress = &req.progress;
    let interrupt = req.interrupt.as_deref();
    // The grid and the tiles of every agent: the first agent's settings, the widest band.
    let voxel = req.config.voxel_params();

    let interrupted = || interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
    // From voxelize on, each agent on its own (its files in its own part of the folder), one
    // after the other.
    let bakes = req.config.agent_bakes();
    // The agents rasterize in groups of 4: the first of a group for all of them (`Raster`).
    let params: Vec<_> = bakes.iter().map(|(_, c)| c.voxel_params()).collect();
    let bake_agents = |ingested: &ingest::Ingested,
                       frame: &GridFrame,
                       binned: &bin::Binned|
     -> Result<Vec<_>, BakeError> {
        let mut baked = Vec::with_capacity(bakes.len());
        for (i, (name, config)) in bakes.iter().enumerate() {
            let layout = match name {
                Some(name) => {
                    let agent = layout.of_agent(name);
                    agent.create_agent()?;
                    agent
                }
                None => layout.clone(),
            };
            progress.set_agent(name.as_deref());
            let voxel = &params[i];
            let raster = voxelize::Raster::of_agent(&params, i, binned.key, &layout);
            let voxelized = voxelize::run(
                frame,
                voxel,
                binned,
                &budget,
                req.threads,
                &layout,
                progress,
                interrupt,
                share.map(|s| s as &dyn TileShare),
                (i as u32, raster.as_ref()),
            )?;
            if voxelized.walkable_spans == 0 {
                let who = name
                    .as_ref()
                    .map_or(String::new(), |n| format!(" agent `{n}`:"));
                return Err(BakeError::NoWalkable(format!(
                    "{}:{who} no walkable surface: {} triangles voxelized into {} spans, none \
                     walkable for this agent (check --up, the agent settings and the slope \
                     limit)",
                    ingested.name, ingested.stats.triangles, voxelized.spans
                )));
            }
            let polygons = polygons::run(
                &polygons::PolygonInputs {
                    scene: ingested.scene.info(),
                    up: ingested.up,
                    frame,
                    voxel,
                    params: &config.polygon_params(),
                    agent: &config.agent,
                    agent_index: i as u32,
                    regions_reused: voxelized.reused,
                    merged: (voxelized.merged.regions, voxelized.merged.contours),
                    interrupt: req.interrupt.as_ref(),
                    share: share.map(|s| s as &dyn RegionShare),
                },
                &budget,
                req.threads,
                &layout,
                progress,
            )?;
            baked.push((layout, voxelized, polygons));
        }
        Ok(baked)
    };
    // A tile pack whose chunk is found damaged when its tile is read, or a scene cache whose
    // payload is when it is read (each is checked as it is read, not every file through
    // ahead), is removed and made again, and the bake goes on from its checkpoints; each file
    // once at most.
    let mut remade: Vec<PathBuf> = Vec::new();
    let remake = |e: BakeError,
                  ingested: &ingest::Ingested,
                  tiles: Option<&bin::TilePacks>,
                  remade: &mut Vec<PathBuf>|
     -> Result<(), BakeError> {
        let Some(damaged) = e.damaged_file().map(Path::to_path_buf) else {
            return Err(e);
        };
        let pack = tiles.is_some_and(|t| t.holds(&damaged));
        let cache = (ingested.scene.parts().iter()).any(|p| p.cache.path() == damaged);
        // The parts of a distributed binning are made anew every run, and its scene files
        // are read by every process.
        let alone = share.is_none_or(|s| s.processes() <= 1);
        if !(pack || cache) || remade.contains(&damaged) || !alone {
            return Err(e);
        }
        progress.set_agent(None);
        progress.warn(&match pack {
            true => format!("tile pack recomputed: {e}"),
            false => format!("scene cache rebuilt: {e}"),
        });
        std::fs::remove_file(&damaged)
            .map_err(|err| tessera_store::StoreError::io(&damaged, err))?;
        remade.push(damaged);
        Ok(())
    };
    // What the attempts before the last binned and ingested, counted in the summary with the
    // last's.
    let (mut placed, mut binning) = (0, 0.0);
    let (mut made, mut ingesting) = (Vec::new(), 0.0);
    let mut made_in = |ingested: &ingest::Ingested| {
        ingesting += ingested.seconds;
        (ingested.scene.parts().iter())
            .filter(|p| !p.reused)
            .for_each(|p| made.push(p.name.clone()));
    };
    let (ingested, frame, binned, baked) = loop {
        let ingested = ingest::run(
            &req.scene,
            &req.config,
            &layout,
            &budget,
            req.threads,
            progress,
            req.interrupt.as_ref(),
            share.map(|s| s as &dyn IngestShare),
        )?;
        let frame = grid::frame_of(&ingested.name, &ingested.scene, &voxel)?;
        grid::check_minimum(&frame, req.memory_budget, overhead)?;
        // The work files' disk, before binning writes the first of them.
        disk::check(&layout, &frame, ingested.scene.info().triangles, progress)?;
        let binned = bin::run(
            &bin::Binning {
                scene: &ingested.scene,
                frame: &frame,
                budget: &budget,
                threads: req.threads,
                layout: &layout,
                progress,
                interrupted: &interrupted,
            },
            share
                .filter(|s| s.processes() > 1)
                .map(|s| (s as &dyn BinShare, s.processes())),
        );
        let mut binned = match binned {
            Ok(binned) => binned,
            Err(e) => {
                remake(e, &ingested, None, &mut remade)?;
                made_in(&ingested);
                continue;
            }
        };
        let keys = binned.tiles.keys();
        if let Some(w) = grid::sparse_world_warning(&frame, keys.len() as u64) {
            // Name a few of the triangles that stretch the world, so they can be found.
            let weighed = keys.iter().map(|&k| (k, binned.tiles.raw_len(k)));
            let far = grid::outlying_clusters(&frame, weighed, 3);
            let named = ingest::locate(
                &req.scene,
                &layout,
                (&budget, req.threads),
                &far,
                5,
                req.interrupt.as_ref(),
            );
            if named.is_empty() {
                progress.warn(&w);
            } else {
                progress.warn(&format!("{w}, such as {}", named.join("; ")));
            }
        }
        match bake_agents(&ingested, &frame, &binned) {
            Ok(baked) => {
                binned.placements += placed;
                binned.seconds += binning;
                let mut ingested = ingested;
                ingested.scene.made_before(&made);
                ingested.stats.reused &= made.is_empty();
                ingested.seconds += ingesting;
                break (ingested, frame, binned, baked);
            }
            Err(e) => {
                remake(e, &ingested, Some(&binned.tiles), &mut remade)?;
                made_in(&ingested);
                placed += binned.placements;
                binning += binned.seconds;
            }
        }
    };
    progress.set_agent(None);
    // Every agent that could use the rasterized fields has.
    for group in 0..bakes
        .len()
        .div_ceil(tessera_voxel::rasterize::MAX_AGENTS_AT_ONCE)
    {
        let _ = std::fs::remove_file(layout.raster_pack(group));
    }
    if bakes[0].0.is_some() {
        // Named agents: the first one's navmesh is also `navmesh.tsn`, for the scripts of one
        // agent.
        tessera_store::link_atomic(baked[0].0.navmesh(), layout.navmesh())?;
    }

    let total_seconds = started.elapsed().as_secs_f64();
    let peaks = sampler.peaks();
    let disk_bytes = layout.disk_bytes();
    let assemble = |voxelized, polygons| {
        BakeSummary::assemble(summary::Parts {
            memory_budget: req.memory_budget,
            ingested: &ingested,
            frame: &frame,
            binned: &binned,
            voxelized,
            polygons,
            threads: req.threads,
            budget: &budget,
            peaks,
            disk_bytes,
            total_seconds,
        })
    };
    let summary = match &bakes[..] {
        [(None, _)] => assemble(&baked[0].1, &baked[0].2),
        _ => BakeSummary::of_agents(
            bakes
                .iter()
                .zip(&baked)
                .map(|((name, config), (layout, voxelized, polygons))| {
                    let file = layout.navmesh();
                    let file = file.file_name().expect("a file").to_string_lossy();
                    (
                        name.clone().expect("named agents"),
                        config.agent.clone(),
                        file.into_owned(),
                        assemble(voxelized, polygons),
                    )
                })
                .collect(),
        ),
    };
    tessera_store::write_atomic(layout.config_toml(), req.config.to_toml().as_bytes())?;
    let json = serde_json::to_vec_pretty(&summary).expect("summary serializes");
    tessera_store::write_atomic(layout.summary_json(), &json)?;
    Ok(summary)
}

/// What a process other than 0 of a distributed bake computes: tiles of the pack process 0
/// wrote in the shared bake folder.
pub struct PeerRequest {
    pub config: BakeConfig,
    pub out_dir: PathBuf,
    /// Worker threads, as [`BakeRequest::threads`].
    pub threads: usize,
    /// Budget for this process's own large allocations [bytes].
    pub memory_budget: u64,
    pub progress: Progress,
    pub interrupt: Option<Arc<AtomicBool>>,
    /// The key of the tile pack process 0 announced: the pack read must be that one.
    pub tiles_key: u64,
    /// The tiles to compute, in tile order.
    pub tiles: Vec<u32>,
    /// The processes whose parts of the binning hold the tiles (`work/bins/`); 0 or 1: the
    /// one tile pack (`work/tiles.pack`).
    pub bin_parts: u32,
    /// The agent whose tiles and regions process 0 gave out last: its index in
    /// `config.agent_bakes()` (0 for a bake of one).
    pub agent: usize,
}

impl PeerRequest {
    /// The settings of every agent of the bake, and this request's agent's name, settings and
    /// view of the bake folder.
    fn agent_bake(&self) -> Result<(Vec<VoxelParams>, BakeConfig, BakeLayout), BakeError> {
        let bakes = self.config.agent_bakes();
        let params = bakes.iter().map(|(_, c)| c.voxel_params()).collect();
        let Some((name, config)) = bakes.into_iter().nth(self.agent) else {
            return Err(BakeError::Cluster(format!(
                "process 0 gave out agent {} of a bake with fewer (are the configs the same?)",
                self.agent
            )));
        };
        let layout = BakeLayout::new(&self.out_dir);
        let layout = match name {
            Some(name) => layout.of_agent(&name),
            None => layout,
        };
        Ok((params, config, layout))
    }
}

/// What a process other than 0 sent of its tiles.
#[derive(Clone, Copy, Debug, Default)]
pub struct PeerTiles {
    pub tiles: u64,
    /// Bytes on the wire.
    pub bytes: u64,
    /// Border links between two of its own tiles, matched here rather than by key in process
    /// 0's merge (each counted at both its tiles).
    pub matched_links: u64,
    /// Of them, links that joined two of its components (each once): the only unions of its
    /// links process 0's merge makes.
    pub unions: u64,
}

/// Runs a [`PeerRequest`]: opens the tile pack read-only, voxelizes (segments, traces) its
/// tiles with the same per-tile work as [`bake`], merges the border links between them
/// (`tessera_stitch::LocalMatcher`), and hands each tile, in tile order, to `send` (which may
/// wait). Writes nothing to the bake folder.
pub fn voxelize_for_peer(
    req: &PeerRequest,
    send: &mut dyn FnMut(u32, Vec<u8>) -> Result<(), BakeError>,
) -> Result<PeerTiles, BakeError> {
    let (params, _, layout) = req.agent_bake()?;
    let (threads, _, budget) = threads_and_budget(req.threads, req.memory_budget, &req.progress);
    let paths: Vec<PathBuf> = match req.bin_parts {
        0 | 1 => vec![layout.tiles_pack()],
        n => (0..n).map(|p| layout.bin_part(p, n)).collect(),
    };
    let corrupt = |message: String| BakeError::Corrupt {
        path: paths[0].clone(),
        message,
    };
    let header = tessera_store::PackReader::open(&paths[0], TILES_KIND)?
        .header()
        .to_vec();
    if header.len() < 8 || header[..8] != req.tiles_key.to_le_bytes() {
        return Err(corrupt(
            "not the tile pack process 0 announced (is the bake folder shared?)".into(),
        ));
    }
    let frame = GridFrame::decode(&header[8..]).map_err(|e| corrupt(e.to_string()))?;
    let tiles = bin::TilePacks::open(&paths, &header)?;
    // Rasterized for the group of agents as process 0 would, or from its records.
    let raster = voxelize::Raster::of_agent(&params, req.agent, req.tiles_key, &layout);
    let shared = voxelize::Shared {
        raster: raster.as_ref(),
        agent: req.agent as u32,
        frame: &frame,
        params: &params[req.agent],
        tiles: &tiles,
        budget: &budget,
        layout: &layout,
        interrupt: req.interrupt.as_deref(),
    };
    voxelize::stream_for_peer(&shared, &req.tiles, threads, &req.progress, send)
}

/// Process `process` (from 1) of a distributed bake: reads `files` of the scene (whose up
/// axis is `up`) into their caches in the shared bake folder, with the settings of `req`;
/// whether each cache was reused.
pub fn ingest_for_peer(
    req: &PeerRequest,
    process: u32,
    files: &[PathBuf],
    up: UpAxis,
) -> Result<Vec<bool>, BakeError> {
    let layout = BakeLayout::new(&req.out_dir);
    let (threads, _, budget) = threads_and_budget(req.threads, req.memory_budget, &req.progress);
    ingest::read_files_for_peer(
        files,
        up,
        process,
        &req.config,
        &layout,
        &budget,
        threads,
        &req.progress,
        req.interrupt.as_ref(),
    )
}

/// Process `assigned.process` (from 1) of a distributed bake: reads its part of a one-file OBJ
/// scene (windows of pass 2, with the vertex and window tables process 0 wrote to the shared
/// bake folder) into its part of the scene cache; the triangles it read.
pub fn ingest_split_for_peer(
    req: &PeerRequest,
    assigned: &SplitAssignment,
) -> Result<u64, BakeError> {
    let layout = BakeLayout::new(&req.out_dir);
    let (threads, _, budget) = threads_and_budget(req.threads, req.memory_budget, &req.progress);
    ingest::read_split_for_peer(
        assigned,
        &req.config,
        &layout,
        &budget,
        threads,
        &req.progress,
        req.interrupt.as_ref(),
    )
}

/// What a process other than 0 of a distributed bake bins: its part of the scene process 0
/// ingested, whose files' caches are `caches` (in the shared bake folder, in order).
#[derive(Clone, Debug)]
pub struct BinAssignment {
    /// This process's index (from 1), and how many processes bin.
    pub process: u32,
    pub parts: u32,
    /// The key process 0 bins under: the scene and grid this process finds must give it.
    pub key: u64,
    pub caches: Vec<PathBuf>,
}

/// Bins `assigned`'s part of the scene (with the settings of `req`, its tiles aside) into its
/// part pack in the shared bake folder (`work/bins/`); returns the triangle copies written.
pub fn bin_for_peer(req: &PeerRequest, assigned: &BinAssignment) -> Result<u64, BakeError> {
    let layout = BakeLayout::new(&req.out_dir);
    let (threads, _, budget) = threads_and_budget(req.threads, req.memory_budget, &req.progress);
    let scene = ingest::Scene::open_caches(&assigned.caches)?;
    let frame = grid::frame_of(
        &assigned.caches[0].display().to_string(),
        &scene,
        &req.config.voxel_params(),
    )?;
    let interrupted = || {
        req.interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    };
    bin::run_part(
        &bin::Binning {
            scene: &scene,
            frame: &frame,
            budget: &budget,
            threads,
            layout: &layout,
            progress: &req.progress,
            interrupted: &interrupted,
        },
        assigned.key,
        (assigned.process, assigned.parts),
    )
}

/// What a process other than 0 of a distributed bake polygonizes: its share of the regions of
/// the region journal process 0 wrote in the shared bake folder.
#[derive(Clone, Copy, Debug)]
pub struct RegionAssignment {
    /// This process's index (from 1).
    pub process: u32,
    /// The key of the region journal process 0 announced: the journal read must be that one.
    pub regions_key: u64,
    pub part: RegionPart,
}

/// Polygonizes `assigned` with the settings of `req` (its tiles aside), in the same rounds of
/// simplification as every other process (`share` gives back every process's asks of a
/// round), taking a region whose input is unchanged from the last bake's polygons, and
/// writes their polygons to the part file process 0 reads (`work/polygons/part-P.pack`).
pub fn polygons_for_peer(
    req: &PeerRequest,
    assigned: RegionAssignment,
    share: &mut (dyn FnMut(u32, Asked) -> Result<Asked, BakeError> + Send),
) -> Result<PartWritten, BakeError> {
    let (_, config, layout) = req.agent_bake()?;
    let (threads, _, budget) = threads_and_budget(req.threads, req.memory_budget, &req.progress);
    let params = config.polygon_params();
    polygons::polygonize_part(
        &polygons::PeerPart {
            layout: &layout,
            params: &params,
            settings: polygons::settings_key(&config.voxel_params(), &params, &config.agent),
            process: assigned.process,
            regions_key: assigned.regions_key,
            part: assigned.part,
            interrupt: req.interrupt.as_ref(),
        },
        share,
        &budget,
        threads,
        &req.progress,
    )
}

/// Reads every span field of a finished bake, in tile order (tests and tools).
pub fn read_span_fields(out_dir: &Path) -> Result<(GridFrame, Vec<SpanField>), BakeError> {
    let path = BakeLayout::new(out_dir).spans_journal();
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
pub fn read_region_batches(out_dir: &Path) -> Result<Vec<RegionBatch>, BakeError> {
    let path = BakeLayout::new(out_dir).regions_journal();
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
