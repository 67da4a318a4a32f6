//! Stage 5, polygons: the merged regions of the region journal to `navmesh.tsn`, out of core.
//!
//! 1. The journal's contours are copied once into `work/polygons/contours.spill` and served
//!    back in windows of regions, in region order ([`JournalRegions`]); with height detail,
//!    the walkable floors are read from the floor journal a tile at a time ([`SpanHeights`]).
//! 2. [`tessera_polygons::polygonize_stream`] simplifies the regions (a few passes, each a
//!    window at a time) and polygonizes them.
//! 3. Each region's polygons go straight to a [`tessera_navgraph::Assembler`], which spills them
//!    into `work/polygons/`, matches portals and stair links, and writes the archive.
//!
//! * Inputs: `work/regions/`, `work/floors/` (height detail only), the grid,
//!   [`PolygonParams`] (grid units, from `tessera-config`) and the agent (stored in the
//!   navmesh's frame).
//! * Output: `navmesh.tsn` (atomically); its header holds the key and the tile edge.
//! * Key: [`key`]. The navmesh is the same for every tiling, so the key leaves the tiling out;
//!   the file is reused only with the regions it was made from (a bake whose voxelize
//!   checkpoints were all reused).
//! * Memory: one window of regions and its polygons, the index, the assembler's sort
//!   buffers and the table of restored simplification points, all sized from the budget,
//!   except a single region larger than a window, which is taken whole; and, like the index,
//!   a few bytes per region: a fingerprint of each of its sections (four bytes), by which
//!   later rounds of simplification read back only the regions a grown section touches.
//! * Progress: phases (contours, each pass over the regions, the navmesh file).

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;
use tessera_artifacts::GridFrame;
use tessera_budget::MemoryBudget;
use tessera_config::{AgentSettings, PartitionParams, PolygonParams, VoxelParams};
use tessera_geom::UpAxis;
use tessera_navgraph::{Assembled, Assembler, BuildError, Step};
use tessera_navmesh::{ArchivedNavMesh, NavMeshFile};
use tessera_polygons::{Asked, PolygonError};
use tessera_store::StoreError;

use crate::keys::{SceneIdentity, StageKey};
use crate::polygon_inputs::{JournalRegions, RegionPart, SpanHeights};
use crate::polygon_parts::{read_part, PartWriter};
use crate::region_reuse::{ClusterTables, Kept, KeptWriter, SharedTables};
use crate::{BakeError, BakeLayout, Progress};

const STAGE: &str = "polygons";

/// The stage's key: what the navmesh depends on. The grid's tiling (tile size and band) is
/// left out: it changes no byte of the navmesh's payload.
pub(crate) fn key(
    scene: &SceneIdentity,
    voxel: &VoxelParams,
    polygons: &PolygonParams,
    agent: &AgentSettings,
) -> u64 {
    StageKey::new(STAGE)
        .reads("scene", scene)
        .reads("settings", &settings_key(voxel, polygons, agent))
        .finish()
}

/// What the navmesh depends on besides the scene: the format and the settings.
pub(crate) fn settings_key(
    voxel: &VoxelParams,
    polygons: &PolygonParams,
    agent: &AgentSettings,
) -> u64 {
    let untiled = VoxelParams {
        tile_size: 0,
        tile_even: false,
        band: 0,
        ..*voxel
    };
    StageKey::new(STAGE)
        .reads("navmesh format", &tessera_navmesh::VERSION)
        .reads("regions", &untiled)
        .reads("polygons", polygons)
        .reads("agent", agent)
        .finish()
}

/// The most contours the stage indexes: [`JournalRegions`] numbers them with 32 bits.
pub(crate) const MAX_CONTOURS: u64 = u32::MAX as u64;

/// The merge's counts against the tables they fill, so that a world too large for them is
/// refused as soon as the merge has counted that far, not when the polygon stage reaches the
/// region past the limit (hours later on a world that size): the navmesh's region table (one
/// entry per merged region, exactly) and the stage's contour index. `at` says where the counts
/// were taken. Only these two are certain before polygonizing: how many polygons, vertices
/// or detail points a region makes is known once it is polygonized, and the assembler checks
/// those region by region.
pub(crate) fn check_merged(
    regions: u64,
    contours: u64,
    at: impl Fn() -> String,
) -> Result<(), BakeError> {
    // Made only for a refusal (the merge checks after every tile).
    let at = || {
        format!(
            "{}, with {regions} merged regions and {contours} contours",
            at()
        )
    };
    tessera_navgraph::check_merged_regions(regions, at)
        .map_err(|e| BakeError::TooLarge(e.to_string()))?;
    if contours > MAX_CONTOURS {
        return Err(BakeError::TooLarge(format!(
            "the polygon stage would index more than {MAX_CONTOURS} contours, its limit \
             (reached at {}); larger cells make fewer",
            at()
        )));
    }
    Ok(())
}

/// The regions of a polygon stage shared with other processes (a distributed bake; the
/// `tessera-distributed` crate implements it over timely dataflow). Process 0 runs the stage
/// with it; the others run [`crate::polygons_for_peer`] on the share it gives them. Every
/// process simplifies its regions in the same rounds, sharing what each round asked back
/// ([`tessera_polygons::polygonize_stream_shared`]), so every region is polygonized as in a
/// single process.
pub trait RegionShare: Send + Sync {
    /// Processes of the bake, this one included.
    fn processes(&self) -> u32;
    /// Process 0: process `p` (from 1) polygonizes the regions of `parts[p]` of the region
    /// journal of agent `agent` (its index in the bake's agents) made under `regions_key`.
    fn assign_regions(
        &self,
        agent: u32,
        regions_key: u64,
        parts: &[RegionPart],
    ) -> Result<(), BakeError>;
    /// After round `round` of simplification: this process's asked points out, every
    /// process's back (merged: sorted, each once).
    fn share_asked(&self, round: u32, asked: Asked) -> Result<Asked, BakeError>;
    /// Process 0: waits until process `p` has written its part; returns what it holds.
    fn wait_part(&self, p: u32) -> Result<PartWritten, BakeError>;
}

/// What the stage reads.
pub(crate) struct PolygonInputs<'a> {
    pub scene: &'a tessera_ingest::cache::CacheInfo,
    pub up: UpAxis,
    pub frame: &'a GridFrame,
    pub voxel: &'a VoxelParams,
    pub params: &'a PolygonParams,
    pub agent: &'a AgentSettings,
    /// Which agent of the bake's it is (0 for a bake of one).
    pub agent_index: u32,
    /// The region journal was reused whole, so a navmesh made from it may be too.
    pub regions_reused: bool,
    /// Merged regions and contours in the region journal, as the merge counted them.
    pub merged: (u64, u64),
    /// Raised to stop the bake (between windows of regions, and before the file is committed).
    pub interrupt: Option<&'a std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Other processes polygonizing a share of the regions (a distributed bake).
    pub share: Option<&'a dyn RegionShare>,
}

/// What the summary reports about the navmesh.
pub(crate) struct Polygons {
    pub polygons: u64,
    pub vertices: u64,
    pub detail_vertices: u64,
    pub portals: u64,
    pub links: u64,
    pub notches: u64,
    pub by_notches: tessera_artifacts::NotchGroups,
    pub area: f64,
    pub bytes: u64,
    pub polygons_removed: u64,
    pub islands_removed: u64,
    /// Their plan area [m²].
    pub area_removed: f64,
    pub reused: bool,
    /// Regions polygonized by this stage, and taken from the last polygon stage instead
    /// (none polygonized when the navmesh was reused whole).
    pub regions_rebaked: u64,
    pub regions_reused: u64,
    /// Clusters of the hierarchy whose table of lengths was taken from the last navmesh.
    pub clusters_reused: u64,
    pub seconds: f64,
}

/// Runs the stage, or reuses `navmesh.tsn` when it was made from these regions and settings.
pub(crate) fn run(
    input: &PolygonInputs,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    layout: &BakeLayout,
    progress: &Progress,
) -> Result<Polygons, BakeError> {
    let started = Instant::now();
    let key = key(
        &SceneIdentity::of(input.scene),
        input.voxel,
        input.params,
        input.agent,
    );
    let navmesh_path = layout.navmesh();
    // Reused only with the regions it was made from: a bake whose checkpoints were removed
    // (`--fresh`, `tessera clean`) makes everything again.
    // The key is read from the header alone first: mapping and validating a large file that
    // is about to be replaced would count its pages as the bake's memory for nothing.
    let key_matches =
        input.regions_reused && tessera_navmesh::read_key(&navmesh_path).is_ok_and(|k| k == key);
    let existing = match key_matches.then(|| NavMeshFile::open(&navmesh_path)) {
        None => None,
        Some(Ok(f)) if f.key() == key => Some(f),
        Some(Ok(_)) => None,
        Some(Err(tessera_navmesh::NavMeshError::Io { .. })) => None,
        Some(Err(e)) => {
            progress.warn(&format!("navmesh recomputed: {e}"));
            None
        }
    };
    let mut out = match existing {
        Some(file) => Polygons::of(file.mesh(), file.len() as u64),
        None => {
            let (made, stats) = build(input, key, budget, threads, layout, progress)?;
            // Read back by streaming (no map, so the file's pages never count as the bake's
            // memory): the header and checksum must be what was meant to be written.
            tessera_navmesh::check_file(&navmesh_path).map_err(|e| BakeError::Corrupt {
                path: navmesh_path.clone(),
                message: e.to_string(),
            })?;
            Polygons {
                regions_rebaked: stats.regions - stats.reused_regions,
                regions_reused: stats.reused_regions,
                clusters_reused: made.clusters_kept,
                ..Polygons::made(&made)
            }
        }
    };
    out.seconds = started.elapsed().as_secs_f64();
    Ok(out)
}

impl Polygons {
    fn of(mesh: &ArchivedNavMesh, bytes: u64) -> Polygons {
        Polygons {
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
            area_removed: mesh.stats.area_removed.to_native(),
            reused: true,
            regions_rebaked: 0,
            regions_reused: mesh.stats.regions.to_native() as u64,
            clusters_reused: mesh.hierarchy.clusters.len() as u64,
            seconds: 0.0,
        }
    }

    fn made(made: &Assembled) -> Polygons {
        Polygons {
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
            area_removed: made.stats.area_removed,
            reused: false,
            regions_rebaked: 0,
            regions_reused: 0,
            clusters_reused: 0,
            seconds: 0.0,
        }
    }
}

/// The navmesh builder's failures: its I/O on `path` is I/O, the rest is an internal error.
fn assembly_error(path: &std::path::Path) -> impl Fn(BuildError) -> BakeError + '_ {
    move |e| match e {
        BuildError::Io { source } => BakeError::Io(StoreError::io(path, source)),
        // The report asked to stop: the bake was interrupted.
        BuildError::Stopped => BakeError::Interrupted,
        // A world too large for the format at these settings: not a bug.
        e @ BuildError::Limit { .. } => BakeError::TooLarge(e.to_string()),
        e => BakeError::Assembly(e),
    }
}

/// The settings `polygonize_stream` takes, from the stage's; height detail is read a tile of
/// the grid at a time.
fn stream_params(p: &PolygonParams, frame: &GridFrame) -> tessera_polygons::PolygonParams {
    use tessera_polygons::detail::DetailParams;
    tessera_polygons::PolygonParams {
        partition: match p.partition {
            PartitionParams::Anavmg {
                tau,
                portal_removal,
            } => tessera_polygons::Partition::Anavmg {
                tau,
                removal: portal_removal,
            },
            PartitionParams::HertelMehlhorn => tessera_polygons::Partition::HertelMehlhorn,
        },
        max_error: p.max_error,
        portal_climb: p.portal_climb,
        detail: match p.detail {
            Some(d) => DetailParams {
                sample_distance: d.sample_distance,
                max_error: d.max_error,
                max_points: d.max_points,
                locality: frame.tile_size,
                ground: d.ground,
            },
            None => DetailParams::OFF,
        },
    }
}

/// Polygonizes the merged regions and writes the navmesh file (atomically), streaming.
fn build(
    input: &PolygonInputs,
    key: u64,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    layout: &BakeLayout,
    progress: &Progress,
) -> Result<(Assembled, tessera_polygons::PolygonStats), BakeError> {
    let (frame, params) = (input.frame, input.params);
    let regions_path = layout.regions_journal();
    let scratch = layout.polygon_scratch();
    let _ = std::fs::remove_dir_all(&scratch);
    progress.stage_start(STAGE, 0);
    // A world that cannot fit is refused before its contours are even copied.
    check_merged(input.merged.0, input.merged.1, || {
        "the start of the polygon stage".into()
    })?;
    // Working memory of the stage: windows of regions (their contours expand about twentyfold
    // while polygonized), the assembler's sort buffers and the tiles of floors height detail
    // reads (polygons of large regions reach far across the world, and a tile read twice is
    // decompressed twice: a large cache pays for itself).
    let work = (budget.total() / 2).clamp(4 << 20, 256 << 20);
    let _reservation = budget.reserve(work, "polygon stage")?;
    let interrupted = || {
        input
            .interrupt
            .is_some_and(|i| i.load(std::sync::atomic::Ordering::Relaxed))
    };
    let pool = crate::error::thread_pool(threads, STAGE)?;
    let mut source = pool.install(|| {
        JournalRegions::open(
            &regions_path,
            &layout.contours(),
            Some(&layout.contours_index()),
            work / 32,
            progress,
            input.interrupt.cloned(),
            None,
        )
    })?;
    // Each region's polygons as the last stage made them, taken again where the region's
    // input is unchanged (an incremental rebake), and this stage's kept for the next; kept
    // before the regions are given out, as the other processes take theirs from it too.
    let stream = stream_params(params, frame);
    let kept_blob =
        crate::region_reuse::blob(frame, settings_key(input.voxel, params, input.agent));
    let kept = Kept::open(layout, frame, &kept_blob, stream.detail.is_on())?;
    // A distributed bake: this process keeps the first share of the regions, the others
    // polygonize theirs at the same time and write them to parts, read back after its own.
    let share = input.share.filter(|s| s.processes() > 1);
    if let Some(share) = share {
        let parts = source.split(share.processes() as usize);
        let regions_key = tessera_store::Journal::stage_key_of(&regions_path)?;
        share.assign_regions(input.agent_index, regions_key, &parts)?;
    }
    let agent = input.agent;
    let nav_frame = tessera_navmesh::Frame {
        origin: input.scene.origin,
        up: input.up.code(),
        cell_size: frame.cell_size as f32,
        cell_height: frame.cell_height as f32,
        agent_height: agent.height as f32,
        agent_radius: agent.radius as f32,
        agent_climb: agent.max_climb as f32,
    };
    let mut asm = Assembler::new(
        nav_frame.clone(),
        params.portal_climb,
        &scratch,
        (work / 4) as usize,
    )
    .map_err(assembly_error(&scratch))?;
    asm.threads(threads);
    // Stair links (seed 000, 5.2.2): facing blocked edges of two regions, ends within the
    // agent's radius in plan and within the climb in height. Erosion keeps walkable edges a
    // radius away from any wall, so edges facing each other across a wall are at least two
    // radii apart and never linked; without erosion (radius 0) they could be the two sides of
    // a thin wall, and no links are made.
    asm.stair_links(params.link_reach, params.link_climb);
    asm.set_areas(
        std::iter::once(tessera_navmesh::Area::default_area())
            .chain(params.areas.iter().map(|a| tessera_navmesh::Area {
                name: a.name.clone(),
                cost: a.cost as f32,
                walkable: a.walkable,
            }))
            .collect(),
    );
    asm.off_mesh_links(
        params
            .links
            .iter()
            .map(|l| tessera_navgraph::LinkSpec {
                link: tessera_navmesh::OffMeshLink {
                    name: l.name.clone(),
                    from: nav_frame.to_internal(l.from),
                    to: nav_frame.to_internal(l.to),
                    cost: l.cost as f32,
                    bidirectional: l.bidirectional,
                },
                radius: l.radius as f32,
            })
            .collect(),
    );
    // The hierarchy's tables of lengths, written for the next stage; in a rebake (the last
    // stage's polygons kept under these settings) the last stage's, for the clusters it
    // shares with this one.
    let tables = ClusterTables::open(layout, kept.has_last())?;
    asm.kept_lengths(Box::new(SharedTables(tables.clone())));
    let mut keep = KeptWriter::create(layout, &kept_blob)?;
    // The heightfield for height detail: each tile's walkable floors, from the floor journal
    // a budgeted few tiles at a time.
    let heights = floor_heights(layout, frame, params, work / 4)?;
    let height_at = |x: i32, y: i32, floor: tessera_polygons::detail::Floor| {
        heights.as_ref().and_then(|h| h.height(x, y, floor))
    };
    let mut done = 0u64;
    let mut sink_failure = None;
    let mut share_failure = None;
    let mut add = |out: tessera_polygons::RegionOutput| -> Result<(), BakeError> {
        keep.add(&out)?;
        asm.add_outline(out.notches, out.polys.len() as u64);
        asm.add_region(&out.verts, &out.detail, &out.polys, out.area)
            .map_err(assembly_error(&scratch))?;
        done += 1;
        Ok(())
    };
    let streamed = pool.install(|| {
        let height: Option<&tessera_polygons::detail::HeightAt> =
            heights.is_some().then_some(&height_at);
        tessera_polygons::polygonize_stream_reusing(
            &mut source,
            stream,
            height,
            &mut |round, asked| shared_asks(share, round, asked, &mut share_failure),
            Some(&kept),
            &mut |out| {
                add(out).map_err(|e| {
                    let message = e.to_string();
                    sink_failure = Some(e);
                    PolygonError::Source(message)
                })
            },
        )
    });
    if let Some(e) = share_failure {
        return Err(e);
    }
    if source.interrupted || matches!(streamed, Err(PolygonError::Stopped)) {
        return Err(BakeError::Interrupted);
    }
    if let Some(e) = sink_failure {
        return Err(e);
    }
    // The other processes' regions follow this one's, process by process.
    let mut theirs = PartWritten::default();
    let mut first_rounds = Vec::new();
    if let (Some(share), Ok(_)) = (share, &streamed) {
        first_rounds = kept.take_first_rounds();
        for p in 1..share.processes() {
            let part = share.wait_part(p)?;
            first_rounds.extend(read_part(&layout.polygon_part(p), part.regions, &mut add)?);
            theirs.regions += part.regions;
            theirs.reused += part.reused;
            if interrupted() {
                return Err(BakeError::Interrupted);
            }
        }
    }
    if let Some(e) = source.take_failure() {
        return Err(BakeError::Io(StoreError::io(&layout.contours(), e)));
    }
    let mut stats = streamed.map_err(|source| BakeError::Polygons {
        path: regions_path.clone(),
        source,
    })?;
    stats.regions += theirs.regions;
    stats.reused_regions += theirs.reused;
    source.remove();
    if let Some(e) = heights.as_ref().and_then(|h| h.take_failure()) {
        return Err(e);
    }
    progress.phase(STAGE, "navmesh file", 0);
    let seeds = &params.reachable_from;
    let internal: Vec<[f32; 3]> = seeds.iter().map(|&p| nav_frame.to_internal(p)).collect();
    let mut file = tessera_store::AtomicFile::create(layout.navmesh())?;
    let assembled = asm
        .finish_reporting(
            &tessera_navgraph::Pruning {
                seeds: &internal,
                min_island_area: params.min_island_area,
            },
            key,
            frame.tile_size,
            &mut file,
            &mut |step| {
                match step {
                    Step::Pass(name, polygons) => {
                        progress.phase(STAGE, &format!("navmesh file: {name}"), polygons)
                    }
                    Step::Done(polygons) => progress.advance(STAGE, polygons),
                }
                if interrupted() {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        )
        .map_err(|e| match e {
            // A link the settings placed off the mesh: the config's mistake, named in its terms.
            BuildError::OffMeshEnd { link, end } => {
                let l = &params.links[link];
                let at = if end == tessera_navgraph::LinkEnd::From {
                    l.from
                } else {
                    l.to
                };
                BakeError::Config(format!(
                    "links[{link}] (\"{}\"): its `{end}` end {at:?} is farther than its radius \
                     {} m from every walkable polygon (points are in the scene's own coordinates \
                     and up axis)",
                    l.name, l.radius
                ))
            }
            e => assembly_error(&layout.navmesh())(e),
        })?;
    if interrupted() {
        // Stopped while the file was assembled: it is not committed.
        return Err(BakeError::Interrupted);
    }
    // Seeds that all miss the mesh would drop every polygon: a mistake in the settings (the
    // wrong up axis, another scene's coordinates), refused before the file replaces a good one.
    if !seeds.is_empty() && assembled.unplaced_seeds.len() == seeds.len() {
        let listed: Vec<String> = seeds
            .iter()
            .enumerate()
            .map(|(i, p)| format!("polygons.reachable_from[{i}] = {p:?}"))
            .collect();
        return Err(BakeError::NoWalkable(format!(
            "no reachability seed stands on a walkable polygon, so every polygon would be \
             dropped: {} (seeds are in the scene's own coordinates and up axis)",
            listed.join(", ")
        )));
    }
    // Written before the navmesh: a bake killed in between makes the navmesh again, and the
    // keys then name a file that is not there (never the other way round).
    // A distributed stage's first rounds: this process's share, then each part's in process
    // order, which is region order, as one process keeps them.
    if share.is_none() {
        first_rounds = kept.take_first_rounds();
    }
    keep.finish(&first_rounds, kept.tiles())?;
    tables.commit()?;
    file.commit()?;
    Kept::remove(layout);
    progress.stage_done(STAGE, done);
    for &i in &assembled.unplaced_seeds {
        progress.warn(&format!(
            "polygons.reachable_from[{i}] = {:?} stands on no walkable polygon; ignored",
            seeds[i]
        ));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok((assembled, stats))
}

/// The walkable floors height detail reads (None: no height detail), through a cache of
/// `cache` bytes.
fn floor_heights(
    layout: &BakeLayout,
    frame: &GridFrame,
    params: &PolygonParams,
    cache: u64,
) -> Result<Option<SpanHeights>, BakeError> {
    params
        .detail
        .map(|d| SpanHeights::open(&layout.floors_journal(), frame, d.floor_reach, cache))
        .transpose()
}

/// What a round's asks become: every process's, through `share`; this process's alone
/// without one. A failure to share is kept in `failure` (the stream ends on it).
fn shared_asks(
    share: Option<&dyn RegionShare>,
    round: u32,
    asked: Asked,
    failure: &mut Option<BakeError>,
) -> Result<Asked, PolygonError> {
    let Some(share) = share else {
        return Ok(asked);
    };
    share.share_asked(round, asked).map_err(|e| {
        let message = e.to_string();
        *failure = Some(e);
        PolygonError::Source(message)
    })
}

/// What a process other than 0 polygonizes: its part of the regions of the region journal
/// process 0 wrote in the shared bake folder.
pub(crate) struct PeerPart<'a> {
    pub layout: &'a BakeLayout,
    pub params: &'a PolygonParams,
    /// What the navmesh depends on besides the scene ([`settings_key`]): the key of the
    /// polygons kept from the last bake.
    pub settings: u64,
    pub process: u32,
    pub regions_key: u64,
    pub part: RegionPart,
    pub interrupt: Option<&'a std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Polygonizes `peer.part` of the regions with the same rounds as every other process
/// (`share`), taking a region whose input is unchanged from the last bake's polygons, and
/// writes them to its part file.
pub(crate) fn polygonize_part(
    peer: &PeerPart,
    share: &mut (dyn FnMut(u32, Asked) -> Result<Asked, BakeError> + Send),
    budget: &Arc<MemoryBudget>,
    threads: usize,
    progress: &Progress,
) -> Result<PartWritten, BakeError> {
    let layout = peer.layout;
    let regions_path = layout.regions_journal();
    if tessera_store::Journal::stage_key_of(&regions_path)? != peer.regions_key {
        return Err(BakeError::Corrupt {
            path: regions_path,
            message: "not the region journal process 0 announced (is the bake folder shared?)"
                .into(),
        });
    }
    let frame = GridFrame::decode(&tessera_store::Journal::blob(&regions_path)?).map_err(|e| {
        BakeError::Corrupt {
            path: regions_path.clone(),
            message: e.to_string(),
        }
    })?;
    let scratch = layout.polygon_scratch_of(peer.process);
    let _ = std::fs::remove_dir_all(&scratch);
    progress.stage_start(STAGE, 0);
    let work = (budget.total() / 2).clamp(4 << 20, 256 << 20);
    let _reservation = budget.reserve(work, "polygon stage")?;
    let pool = crate::error::thread_pool(threads, STAGE)?;
    let mut source = pool.install(|| {
        JournalRegions::open(
            &regions_path,
            &scratch.join("contours.spill"),
            None,
            work / 32,
            progress,
            peer.interrupt.cloned(),
            Some(&peer.part),
        )
    })?;
    let heights = floor_heights(layout, &frame, peer.params, work / 4)?;
    let height_at = |x: i32, y: i32, floor: tessera_polygons::detail::Floor| {
        heights.as_ref().and_then(|h| h.height(x, y, floor))
    };
    let part_path = layout.polygon_part(peer.process);
    let mut part = PartWriter::create(&part_path)?;
    // Each region's key goes with its polygons, for process 0 to keep them under it.
    let stream = stream_params(peer.params, &frame);
    let kept_blob = crate::region_reuse::blob(&frame, peer.settings);
    let kept = Kept::of_peer(layout, &frame, &kept_blob, stream.detail.is_on())?;
    let (mut share_failure, mut sink_failure) = (None, None);
    let streamed = pool.install(|| {
        let height: Option<&tessera_polygons::detail::HeightAt> =
            heights.is_some().then_some(&height_at);
        tessera_polygons::polygonize_stream_reusing(
            &mut source,
            stream,
            height,
            &mut |round, asked| {
                share(round, asked).map_err(|e| {
                    let message = e.to_string();
                    share_failure = Some(e);
                    PolygonError::Source(message)
                })
            },
            Some(&kept),
            &mut |out| {
                part.add(&out).map_err(|e| {
                    let message = e.to_string();
                    sink_failure = Some(e);
                    PolygonError::Source(message)
                })
            },
        )
    });
    if let Some(e) = share_failure.or(sink_failure) {
        return Err(e);
    }
    if source.interrupted || matches!(streamed, Err(PolygonError::Stopped)) {
        return Err(BakeError::Interrupted);
    }
    if let Some(e) = source.take_failure() {
        return Err(BakeError::Io(StoreError::io(
            &scratch.join("contours.spill"),
            e,
        )));
    }
    let stats = streamed.map_err(|source| BakeError::Polygons {
        path: regions_path.clone(),
        source,
    })?;
    if let Some(e) = heights.as_ref().and_then(|h| h.take_failure()) {
        return Err(e);
    }
    let regions = part.finish(&kept.take_first_rounds())?;
    source.remove();
    let _ = std::fs::remove_dir_all(&scratch);
    progress.stage_done(STAGE, regions);
    Ok(PartWritten {
        regions,
        reused: stats.reused_regions,
    })
}

/// A part of a distributed polygon stage, written by its process.
#[derive(Clone, Copy, Debug, Default)]
pub struct PartWritten {
    /// Regions it holds.
    pub regions: u64,
    /// Of them, regions taken from the last bake's polygons (their input unchanged).
    pub reused: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_config::BakeConfig;

    fn scene() -> SceneIdentity {
        SceneIdentity {
            content_hash: 1,
            up: b'z',
            payload_hash: 2,
            origin: [3.0, 4.0, 5.0],
        }
    }

    fn key_of(c: &BakeConfig) -> u64 {
        key(&scene(), &c.voxel_params(), &c.polygon_params(), &c.agent)
    }

    #[test]
    fn merged_counts_past_a_table_are_refused_naming_it_and_the_count() {
        // Issue 21, class 11: known from the merge, checked before any region is polygonized.
        let regions = u64::from(u32::MAX);
        assert!(check_merged(regions, MAX_CONTOURS, || "here".into()).is_ok());
        match check_merged(regions + 1, 5, || "tile 9 of the merge".into()) {
            Err(BakeError::TooLarge(m)) => {
                assert!(
                    m.contains("regions") && m.contains(&regions.to_string()),
                    "{m}"
                );
                assert!(
                    m.contains("tile 9 of the merge") && m.contains("4294967296"),
                    "{m}"
                );
            }
            other => panic!("{other:?}"),
        }
        match check_merged(3, MAX_CONTOURS + 1, || "there".into()) {
            Err(BakeError::TooLarge(m)) => assert!(m.contains("contours"), "{m}"),
            other => panic!("{other:?}"),
        }
        // The assembler's own refusal is the same kind of failure, not an internal error.
        let limit = BuildError::Limit {
            what: "polygons",
            limit: 7,
            at: "region 3".into(),
        };
        let e = assembly_error(std::path::Path::new("n"))(limit);
        assert!(matches!(e, BakeError::TooLarge(_)), "{e:?}");
    }

    #[test]
    fn the_key_ignores_the_tiling_and_follows_what_the_navmesh_holds() {
        let base = BakeConfig::default();
        let mut tiled = base.clone();
        tiled.voxel.tile_size = 33.into();
        assert_eq!(key_of(&base), key_of(&tiled));
        // The agent's height is stored in the navmesh's frame: 2.01 m and 2.02 m are the
        // same 41 layers of 0.05 m, not the same navmesh file.
        let mut a = base.clone();
        a.agent.height = 2.01;
        let mut b = base.clone();
        b.agent.height = 2.02;
        assert_eq!(a.voxel_params(), b.voxel_params());
        assert_ne!(key_of(&a), key_of(&b));
        let mut simpler = base.clone();
        simpler.polygons.max_error = 0.0;
        assert_ne!(key_of(&base), key_of(&simpler));
        let mut other = base.clone();
        other.agent.max_slope = 30.0;
        assert_ne!(key_of(&base), key_of(&other));
    }
}
