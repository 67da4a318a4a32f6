//! Stage 3, voxelize (with regions and contours): tiles streamed through workers inside the
//! memory budget.
//!
//! ```text
//! work/tiles.pack ──reader──[bounded]──> workers (rayon) ──[bounded]──> writer ──> work/spans/
//!                                                                         └─[bounded]─> merge ──> work/regions/
//! ```
//!
//! * The reader reserves each tile's memory before reading it, so when workers or the writer
//!   fall behind, the reader waits: back-pressure, not buffering. The channels only hold each
//!   worker's next item.
//! * Workers voxelize a tile (in parts when a whole one would not fit the budget), segment it
//!   into regions and trace its contours (`tile_work`).
//! * The writer restores tile order, appends the span field to the span journal and hands the
//!   regions and contours to the [merge](crate::merge), which runs on a thread of its own in
//!   the same order, so every file has the same bytes for any thread count.
//! * Inputs: the tile pack, the grid, the voxel parameters. Outputs: `work/spans/` (the
//!   span fields), `work/floors/` (their walkable floors, which height detail reads),
//!   `work/tile-regions/` (each tile's regions and contours, the merge's input),
//!   `work/tile-hashes/` (the hash of each tile's triangles) and, through the merge,
//!   `work/regions/`: journals in segments of [`JOURNAL_SEGMENT`] tiles, whose head holds
//!   the key and grid.
//! * Key: [`key`], the tile pack's key and [`VoxelParams`]. The journals keep their whole
//!   records up to any damage and are cut to the tiles all five hold; those tiles' regions
//!   and contours are read back and merged instead of computed.
//! * Rebakes: under a new key on the same grid and settings (a changed scene), the last
//!   finished voxelization waits in `work/previous/`, and a tile whose triangles hash as they
//!   did there takes its records from it (its span field, floors, regions and contours)
//!   instead of being voxelized, segmented and traced. A segment of the journals whose every
//!   tile is so reused is taken over as it is (a hard link), not written again; the merge
//!   does the same with the segments of its journal that no changed region reaches.
//! * Progress: tiles written (and tiles merged, as the merge stage).

use crossbeam_channel::{bounded, Receiver, Sender};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera_artifacts::GridFrame;
use tessera_budget::MemoryBudget;
use tessera_config::VoxelParams;
use tessera_store::{Journal, JournalReader};

use crate::bin::Binned;
use crate::keys::StageKey;
use crate::merge::{LastMerge, Merge, Merged, REGIONS_KIND};
use crate::tile_work::{
    read_and_plan, run_job, Previous, TileDone, TileHash, TileJob, Work, WorkerState,
};
use crate::{BakeError, BakeLayout, Progress};

const STAGE: &str = "voxelize";
/// Pack kind of the span journal.
pub const SPANS_KIND: &[u8; 8] = b"TSSPANS\0";
/// Pack kind of the floor journal.
pub const FLOORS_KIND: &[u8; 8] = b"TSFLOORS";
/// Pack kind of the journal of each tile's regions and contours (`tile_work::tile_record`).
pub const TILE_REGIONS_KIND: &[u8; 8] = b"TSTILRGN";
/// Pack kind of the journal of tile hashes (per tile: the hash of its triangles and its span
/// counts, [`TileHash`]).
pub const HASHES_KIND: &[u8; 8] = b"TSTHASH\0";
/// Pack kind of the journal of rasterized fields shared by a group of agents.
pub const RASTER_KIND: &[u8; 8] = b"TSRASTER";
/// How often the writer makes its checkpoints durable.
const SYNC_EVERY: Duration = Duration::from_millis(500);
/// Tiles written to the checkpoints and waiting for the merge (each holds its reservation).
const MERGE_QUEUE: usize = 4;
/// Tile keys per segment of the stage's five journals (`Journal::open_segmented`): a rebake
/// takes a segment of the last bake whole, without copying it, when every tile of it is
/// reused.
pub(crate) const JOURNAL_SEGMENT: u32 = 64;

/// The keys of `keys` (in rising order) that fall in journal segment `n`.
pub(crate) fn segment_keys(keys: &[u32], n: u32) -> &[u32] {
    debug_assert!(keys.is_sorted());
    let (lo, hi) = (n * JOURNAL_SEGMENT, (n + 1) * JOURNAL_SEGMENT);
    &keys[keys.partition_point(|&k| k < lo)..keys.partition_point(|&k| k < hi)]
}

/// The segments of `keys` that `from` holds with the same keys, each of them passing `whole`:
/// those a journal of these tiles may take over from `from` ([`Journal::adopt`]).
pub(crate) fn whole_segments(
    keys: &[u32],
    from: &JournalReader,
    whole: impl Fn(u32) -> bool,
) -> rustc_hash::FxHashSet<u32> {
    let mut segments = rustc_hash::FxHashSet::default();
    let mut i = 0;
    while let Some(&first) = keys.get(i) {
        let n = first / JOURNAL_SEGMENT;
        let these = segment_keys(keys, n);
        if these.iter().all(|&k| whole(k)) && from.segment_keys(n).as_deref() == Some(these) {
            segments.insert(n);
        }
        i += these.len();
    }
    segments
}

/// The stage's key: what the span and region journals depend on.
pub(crate) fn key(tiles_key: u64, params: &VoxelParams) -> u64 {
    StageKey::new(STAGE)
        .reads("tiles", &tiles_key)
        .reads("voxel", params)
        .finish()
}

/// What voxelization (and the merge beside it) did.
pub(crate) struct Voxelized {
    pub tiles_with_geometry: u64,
    pub spans: u64,
    pub walkable_spans: u64,
    /// Tiles taken from the checkpoint instead of voxelized again.
    pub resumed_tiles: u64,
    /// Tiles whose triangles were those of the last finished bake's same tile: its span field
    /// taken instead of voxelized again (an incremental rebake of a changed scene).
    pub reused_tiles: u64,
    /// Tiles voxelized from the rasterization the group's first agent made (a bake for
    /// several agents: [`Raster`]).
    pub raster_shared: u64,
    /// Every tile came from the checkpoint.
    pub reused: bool,
    pub merged: Merged,
    /// The stage's wall time less the merge's.
    pub seconds: f64,
}

/// How a bake for several agents shares rasterization: the first agent of a group rasterizes
/// every tile for the whole group and keeps the fields in `work/raster.pack`; the others
/// voxelize from them instead of rasterizing (the same fields: see
/// `tessera_voxel::voxelize_agents_in`).
pub(crate) enum Raster<'a> {
    /// This stage's agent is `group[0]`: its tiles are rasterized for the group, and the
    /// records written under `key`.
    Write {
        group: Vec<&'a VoxelParams>,
        key: u64,
        path: std::path::PathBuf,
    },
    /// This stage's agent is agent `index` of the group whose records `records` (in `path`)
    /// holds; a tile without a record is rasterized here.
    Read {
        records: JournalReader,
        index: usize,
        path: std::path::PathBuf,
    },
}

impl Raster<'_> {
    /// The key of a group's records: the tiles and every agent's settings.
    fn key(tiles_key: u64, group: &[&VoxelParams]) -> u64 {
        StageKey::new("raster")
            .reads("tiles", &tiles_key)
            .reads("group", &group)
            .finish()
    }

    /// How agent `index` of a bake whose agents' settings are `agents` shares rasterization
    /// (None: it rasterizes alone). The agents go in groups of
    /// [`tessera_voxel::rasterize::MAX_AGENTS_AT_ONCE`], in order: the first of a group writes
    /// the records of the tiles binned under `tiles_key` for the group, the others read them
    /// from the group's pack in `layout` once the first's stage finished it (a group of one
    /// rasterizes alone). Process 0 and the other processes of a distributed bake choose
    /// alike.
    pub(crate) fn of_agent<'a>(
        agents: &'a [VoxelParams],
        index: usize,
        tiles_key: u64,
        layout: &BakeLayout,
    ) -> Option<Raster<'a>> {
        let at_once = tessera_voxel::rasterize::MAX_AGENTS_AT_ONCE;
        let (number, position) = (index / at_once, index % at_once);
        let group: Vec<&VoxelParams> = agents.iter().skip(number * at_once).take(at_once).collect();
        if group.len() < 2 || position >= group.len() {
            return None;
        }
        let key = Raster::key(tiles_key, &group);
        let path = layout.raster_pack(number);
        if position == 0 {
            return Some(Raster::Write { group, key, path });
        }
        Raster::records(&path, key).map(|records| Raster::Read {
            records,
            index: position,
            path,
        })
    }

    /// The records of `key` in `path`, when the first agent's stage finished them.
    fn records(path: &std::path::Path, key: u64) -> Option<JournalReader> {
        if Journal::stage_key_of(path).ok()? != key {
            return None;
        }
        Journal::open_complete(path, RASTER_KIND)
            .and_then(|j| j.snapshot())
            .ok()
    }
}

/// What the workers and the reader share.
pub(crate) struct Shared<'a> {
    pub(crate) frame: &'a GridFrame,
    pub(crate) params: &'a VoxelParams,
    /// A bake for several agents: rasterization shared with the others of a group.
    pub(crate) raster: Option<&'a Raster<'a>>,
    /// Which agent of the bake's this stage is for (0 for a bake of one).
    pub(crate) agent: u32,
    pub(crate) tiles: &'a crate::bin::TilePacks,
    pub(crate) budget: &'a Arc<MemoryBudget>,
    pub(crate) layout: &'a BakeLayout,
    pub(crate) interrupt: Option<&'a AtomicBool>,
}

/// Runs the stage: every tile of the pack voxelized (or recovered), merged and written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    frame: &GridFrame,
    params: &VoxelParams,
    binned: &Binned,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    layout: &BakeLayout,
    progress: &Progress,
    interrupt: Option<&AtomicBool>,
    share: Option<&dyn TileShare>,
    (agent, raster): (u32, Option<&Raster>),
) -> Result<Voxelized, BakeError> {
    let started = Instant::now();
    let tiles = &binned.tiles;
    let largest = tiles
        .keys()
        .iter()
        .map(|&k| tiles.raw_len(k))
        .max()
        .unwrap_or(0);
    crate::grid::check_densest(frame, largest, budget.total())?;
    let shared = Shared {
        frame,
        params,
        raster,
        agent,
        tiles,
        budget,
        layout,
        interrupt,
    };
    let key = key(binned.key, params);
    // A stage finished under this key: its counts, without reading every tile back.
    if share.is_none() && raster.is_none() {
        if let Some(mut out) = finished(layout, key, &tiles.keys(), progress) {
            out.seconds = started.elapsed().as_secs_f64();
            return Ok(out);
        }
    }
    let mut out = stream(&shared, key, binned.key, threads, progress, share)?;
    out.reused = out.resumed_tiles == tiles.keys().len() as u64;
    write_counts(layout, key, &out)?;
    out.seconds = (started.elapsed().as_secs_f64() - out.merged.seconds).max(0.0);
    Ok(out)
}

/// Magic of `work/voxelized.bin`: then the stage key, the counts ([`Voxelized::counts`]) and
/// the xxh3 of everything before it.
const COUNTS_MAGIC: &[u8; 8] = b"TSVXCNT\0";

impl Voxelized {
    /// What a finished stage counted, in the order `work/voxelized.bin` keeps it (what it
    /// made: not the merge's frontier, which tells how a run went).
    fn counts(&self) -> [u64; 8] {
        let m = &self.merged;
        [
            self.tiles_with_geometry,
            self.spans,
            self.walkable_spans,
            m.regions,
            m.region_spans,
            m.contours,
            m.contour_vertices,
            m.third_class_removed,
        ]
    }
}

/// The stage key and counts ([`Voxelized::counts`]) a `work/voxelized.bin` at `path` holds,
/// when whole.
pub(crate) fn read_counts(path: &std::path::Path) -> Option<(u64, [u64; 8])> {
    let b = std::fs::read(path).ok()?;
    let n = 8 + 8 * 9;
    if b.len() != n + 8
        || &b[..8] != COUNTS_MAGIC
        || xxhash_rust::xxh3::xxh3_64(&b[..n]).to_le_bytes() != b[n..]
    {
        return None;
    }
    let word = |i: usize| u64::from_le_bytes(b[8 + 8 * i..16 + 8 * i].try_into().unwrap());
    Some((word(0), std::array::from_fn(|i| word(i + 1))))
}

/// Keeps what the stage finished under `key` counted.
fn write_counts(layout: &BakeLayout, key: u64, out: &Voxelized) -> Result<(), BakeError> {
    let mut b = COUNTS_MAGIC.to_vec();
    for v in std::iter::once(key).chain(out.counts()) {
        b.extend_from_slice(&v.to_le_bytes());
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    tessera_store::write_atomic(layout.voxelized_counts(), &b)?;
    Ok(())
}

/// The counts of the stage when it finished under `key`: its five journals complete under
/// that key with every tile of `keys`, in order, and its counts kept beside them. The same
/// numbers a stage taking every tile from its checkpoints counts again, without reading them.
/// None (the stage runs) when anything is missing, of another key or damaged.
fn finished(layout: &BakeLayout, key: u64, keys: &[u32], progress: &Progress) -> Option<Voxelized> {
    let (found, c) = read_counts(&layout.voxelized_counts())?;
    if found != key {
        return None;
    }
    for (path, kind) in Checkpoints::paths(layout) {
        if Journal::stage_key_of(&path).ok()? != key {
            return None;
        }
        // Opened whole: a damaged or unfinished journal makes the stage run.
        if Journal::open_complete(&path, kind).ok()?.keys() != keys {
            return None;
        }
    }
    progress.stage_start(STAGE, keys.len() as u64);
    progress.stage_done(STAGE, c[0]);
    progress.stage_start(crate::merge::STAGE, keys.len() as u64);
    progress.stage_done(crate::merge::STAGE, keys.len() as u64);
    Some(Voxelized {
        tiles_with_geometry: c[0],
        spans: c[1],
        walkable_spans: c[2],
        resumed_tiles: keys.len() as u64,
        reused_tiles: 0,
        raster_shared: 0,
        reused: true,
        merged: Merged {
            regions: c[3],
            region_spans: c[4],
            contours: c[5],
            contour_vertices: c[6],
            third_class_removed: c[7],
            // No merge ran.
            frontier_links: 0,
            frontier_bytes: 0,
            remerged: 0,
            seconds: 0.0,
        },
        seconds: 0.0,
    })
}

/// The stage's checkpoints, lined up: they hold the same first tiles, in tile order.
struct Checkpoints {
    spans: Journal,
    floors: Journal,
    /// Each tile's regions and contours, as segmented and traced.
    tile_regions: Journal,
    /// The merge's batches.
    regions: Journal,
    hashes: Journal,
}

/// The header blob of the hash journal: the grid, then a key of the voxel settings. A hash
/// journal made under the same blob holds tiles voxelized on the same grid with the same
/// settings, whatever the scene.
fn hashes_blob(frame: &GridFrame, params: &VoxelParams) -> Vec<u8> {
    let mut blob = frame.encode();
    let settings = StageKey::new(STAGE).reads("voxel", params).finish();
    blob.extend_from_slice(&settings.to_le_bytes());
    blob
}

/// Before a voxelization under a new key: keeps the journals of the last one in
/// `work/previous/` when they were made on the same grid with the same settings (a changed
/// scene), so that its unchanged tiles are reused ([`open_previous`] takes them only whole);
/// clears them otherwise. A
/// voxelization resumed under its own key keeps what `previous/` holds.
fn keep_previous(layout: &BakeLayout, stage_key: u64, blob: &[u8]) -> Result<(), BakeError> {
    let dir = layout.previous();
    let current = [
        layout.spans_journal(),
        layout.floors_journal(),
        layout.tile_regions_journal(),
        layout.tile_hashes_journal(),
        layout.regions_journal(),
        layout.voxelized_counts(),
        layout.tile_digests(),
    ];
    let hashes = &current[3];
    if !hashes.exists() || Journal::stage_key_of(hashes).ok() == Some(stage_key) {
        return Ok(());
    }
    // Whether they are whole is checked once, when they are opened for reuse.
    let same_grid = Journal::blob(hashes).ok().as_deref() == Some(blob);
    let io = |path: &std::path::Path, e| BakeError::Io(tessera_store::StoreError::io(path, e));
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&dir, e)),
        _ => {}
    }
    if same_grid {
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        for path in current.iter().filter(|p| p.exists()) {
            let to = dir.join(path.file_name().expect("a file"));
            std::fs::rename(path, &to).map_err(|e| io(path, e))?;
        }
    }
    Ok(())
}

const DIGESTS_MAGIC: &[u8; 8] = b"TSDIGST1";

/// Writes each tile's digest ([`crate::bin::TilePacks::digest`]) under the stage key:
/// magic, key u64, count u64, then (tile key u32, digest u64) each, then the xxh3 of all
/// before. Not a checkpoint: it describes the binning (another process count bins in other
/// parts) and only spares a rebake reading tiles.
fn write_digests(
    path: &std::path::Path,
    stage_key: u64,
    tiles: &crate::bin::TilePacks,
    keys: &[u32],
) -> Result<(), BakeError> {
    let mut b = Vec::with_capacity(32 + 12 * keys.len());
    b.extend_from_slice(DIGESTS_MAGIC);
    b.extend_from_slice(&stage_key.to_le_bytes());
    b.extend_from_slice(&(keys.len() as u64).to_le_bytes());
    for &k in keys {
        b.extend_from_slice(&k.to_le_bytes());
        b.extend_from_slice(&tiles.digest(k).to_le_bytes());
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    Ok(tessera_store::write_atomic(path, &b)?)
}

/// The stage key and the digests [`write_digests`] wrote; None when missing or damaged.
fn read_digests(path: &std::path::Path) -> Option<(u64, std::collections::HashMap<u32, u64>)> {
    let b = std::fs::read(path).ok()?;
    let (body, sum) = b.split_at_checked(b.len().checked_sub(8)?)?;
    if xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() != sum || !body.starts_with(DIGESTS_MAGIC) {
        return None;
    }
    let word = |at: usize| Some(u64::from_le_bytes(body.get(at..at + 8)?.try_into().ok()?));
    let (key, count) = (word(8)?, word(16)? as usize);
    let records = body.get(24..)?;
    if records.len() != count.checked_mul(12)? {
        return None;
    }
    let digests = records
        .chunks_exact(12)
        .map(|r| {
            let k = u32::from_le_bytes(r[..4].try_into().unwrap());
            (k, u64::from_le_bytes(r[4..].try_into().unwrap()))
        })
        .collect();
    Some((key, digests))
}

/// The journals `work/previous/` holds, when they are whole and their grid and settings are
/// `blob`'s.
fn open_previous(layout: &BakeLayout, blob: &[u8]) -> Option<Previous> {
    let dir = layout.previous();
    let path = |p: std::path::PathBuf| dir.join(p.file_name().expect("a file"));
    let hashes_path = path(layout.tile_hashes_journal());
    if Journal::blob(&hashes_path).ok().as_deref() != Some(blob) {
        return None;
    }
    let open =
        |p: std::path::PathBuf, kind| Journal::open_complete(p, kind).and_then(|j| j.snapshot());
    let spans_path = path(layout.spans_journal());
    // Each read through and checked whole: on the current pool, side by side.
    let ((spans, floors), (regions, hashes_journal)) = rayon::join(
        || {
            rayon::join(
                || open(spans_path.clone(), SPANS_KIND),
                || open(path(layout.floors_journal()), FLOORS_KIND),
            )
        },
        || {
            rayon::join(
                || open(path(layout.tile_regions_journal()), TILE_REGIONS_KIND),
                || open(hashes_path.clone(), HASHES_KIND),
            )
        },
    );
    let (spans, floors, hashes_journal) = (spans.ok()?, floors.ok()?, hashes_journal.ok()?);
    // (A bake before this journal existed kept none: its tiles are segmented again.)
    let regions = regions.ok();
    let digests = read_digests(&path(layout.tile_digests()))
        .filter(|(key, _)| Journal::stage_key_of(&hashes_path).ok() == Some(*key))
        .map(|(_, d)| d)
        .unwrap_or_default();
    let mut hashes = std::collections::HashMap::new();
    for key in hashes_journal.keys() {
        let record = hashes_journal.read(key).ok()?;
        hashes.insert(key, TileHash::decode(&record)?);
    }
    Some(Previous {
        hashes,
        hash_journal: hashes_journal,
        digests,
        spans,
        floors,
        regions,
        spans_path,
    })
}

/// Opens the five checkpoints of the stage and lines them up: all hold the same first
/// tiles, in tile order, or all start afresh. Returns how many tiles they hold. A new key on
/// the same grid and settings first keeps the last voxelization for reuse ([`keep_previous`]).
fn open_checkpoints(
    layout: &BakeLayout,
    (frame, params): (&GridFrame, &VoxelParams),
    stage_key: u64,
    order: &[u32],
    progress: &Progress,
) -> Result<(Checkpoints, usize), BakeError> {
    let blob = frame.encode();
    let hashes = hashes_blob(frame, params);
    keep_previous(layout, stage_key, &hashes)?;
    let open = |(path, kind): (std::path::PathBuf, &[u8; 8])| {
        let blob = if kind == HASHES_KIND { &hashes } else { &blob };
        Journal::open_segmented(path, kind, stage_key, blob, JOURNAL_SEGMENT)
    };
    let [spans, floors, tile_regions, tile_hashes, regions] = Checkpoints::paths(layout);
    let mut c = Checkpoints {
        spans: open(spans)?,
        floors: open(floors)?,
        tile_regions: open(tile_regions)?,
        hashes: open(tile_hashes)?,
        regions: open(regions)?,
    };
    let n = c.all().iter().map(|j| j.keys().len()).min().unwrap_or(0);
    let prefix_ok = c.all().iter().all(|j| j.keys()[..n] == order[..n]);
    let n = if prefix_ok { n } else { 0 };
    if !prefix_ok {
        progress.warn("voxelize checkpoints do not match the tile order; recomputing");
    }
    for j in c.all() {
        j.truncate(n)?;
    }
    Ok((c, n))
}

impl Checkpoints {
    /// The five journals' paths and kinds, in the order of [`Checkpoints::all`].
    fn paths(layout: &BakeLayout) -> [(std::path::PathBuf, &'static [u8; 8]); 5] {
        [
            (layout.spans_journal(), SPANS_KIND),
            (layout.floors_journal(), FLOORS_KIND),
            (layout.tile_regions_journal(), TILE_REGIONS_KIND),
            (layout.tile_hashes_journal(), HASHES_KIND),
            (layout.regions_journal(), REGIONS_KIND),
        ]
    }

    /// The five journals. The writer makes four durable and the merge the region journal,
    /// each on its own thread: a resume keeps the tiles all five hold
    /// ([`open_checkpoints`]).
    fn all(&mut self) -> [&mut Journal; 5] {
        [
            &mut self.spans,
            &mut self.floors,
            &mut self.tile_regions,
            &mut self.hashes,
            &mut self.regions,
        ]
    }

    fn finish(&mut self) -> Result<(), tessera_store::StoreError> {
        for j in self.all() {
            if !j.is_complete() {
                j.finish()?;
            }
        }
        Ok(())
    }
}

/// The tiles of a voxelize stage shared with other processes (a distributed bake; the
/// `tessera-distributed` crate implements it over timely dataflow). Process 0 runs the stage
/// with it; the other processes run [`crate::voxelize_for_peer`].
pub trait TileShare: Send + Sync {
    /// Process 0, once the checkpoints of agent `agent` (its index in the bake's agents) are
    /// lined up: `todo` holds the tiles left to compute, in tile order, each with its triangle
    /// bytes (its estimated cost), and `tiles_key` is the tile pack's key. Returns the process
    /// that computes each of them (0: this one) and tells the others theirs.
    fn assign(
        &self,
        agent: u32,
        tiles_key: u64,
        todo: &[(u32, u64)],
    ) -> Result<Vec<u32>, BakeError>;
    /// The next tile another process finished ([`TileDone`] on the wire), waiting at most
    /// `wait`; `Ok(None)` when none came in that time. A lost peer is an error.
    fn receive(&self, wait: Duration) -> Result<Option<Vec<u8>>, BakeError>;
    /// Process 0's writer has put tile `key`, computed by process `owner`, into the
    /// checkpoints: it holds no memory for it any more (the owner may send one more).
    fn written(&self, key: u32, owner: u32);
}

/// A tile for this process's workers: its key, and whether it comes from the checkpoint.
type LocalTile = (u32, bool);

/// Per tile, its hash, whether the merge takes its batch whole ([`hash_ahead`]) and whether
/// its journal segment is taken over whole from the last bake's ([`Adoption`]).
type Known = std::collections::HashMap<u32, (u64, bool, bool)>;

/// A rebake's tiles hashed before the stream (in parallel): those the last bake's records
/// do not serve are the changed ones, and the last merge ([`LastMerge`]) then finds the
/// regions they reach. Returns each tile's hash and whether the merge takes its batch whole,
/// and the last merge when it serves.
fn hash_ahead(
    s: &Shared,
    previous: &Previous,
    keys: &[u32],
    pool: &rayon::ThreadPool,
    progress: &Progress,
) -> Result<(Known, Option<LastMerge>), BakeError> {
    use rayon::prelude::*;
    progress.phase(STAGE, "hashing every tile's triangles", keys.len() as u64);
    let mut hashes: Vec<u64> = Vec::with_capacity(keys.len());
    for group in keys.chunks(256) {
        if s.interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Err(BakeError::Interrupted);
        }
        let hashed: Vec<u64> = pool.install(|| {
            group
                .par_iter()
                .map(|&k| {
                    // Stored as the last bake stored it: the same triangles, not read again.
                    if let (Some(last), Some(digest)) =
                        (previous.hashes.get(&k), previous.digests.get(&k))
                    {
                        if *digest == s.tiles.digest(k) {
                            return Ok(last.hash);
                        }
                    }
                    let _held = s.budget.reserve(s.tiles.raw_len(k), "a tile's triangles")?;
                    crate::tile_work::tile_hash(s.tiles, k)
                })
                .collect::<Result<_, BakeError>>()
        })?;
        hashes.extend(hashed);
        progress.advance(STAGE, hashes.len() as u64);
    }
    let changed = (keys.iter().zip(&hashes))
        .filter(|(&k, &h)| previous.serves(k, h).is_none())
        .map(|(&k, _)| k)
        .collect();
    let dir = s.layout.previous();
    let kept = |p: std::path::PathBuf| dir.join(p.file_name().expect("a file"));
    let last = Journal::stage_key_of(&previous.spans_path)
        .ok()
        .and_then(|key| {
            let files = (
                kept(s.layout.regions_journal()),
                kept(s.layout.voxelized_counts()),
            );
            let budget = s.budget.total();
            pool.install(|| LastMerge::open(files, (key, budget), s.frame, keys, changed))
        });
    let known = keys
        .iter()
        .zip(hashes)
        .map(|(&k, h)| (k, (h, last.as_ref().is_some_and(|l| l.untouched(k)), false)))
        .collect();
    progress.phase(STAGE, "tiles", keys.len() as u64);
    Ok((known, last))
}

/// Starts the reader (read, plan, reserve, send; stops early when interrupted or when the
/// receiving end hangs up) and the workers (on the rayon pool, one long-running loop each)
/// over `tiles`, in that order. Results go to `done_tx`, in any order.
#[allow(clippy::too_many_arguments)]
fn spawn_reader_and_workers<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    s: &'env Shared<'env>,
    tiles: &'env [LocalTile],
    (checkpoint, checkpoint_path): (Option<&'env JournalReader>, &'env std::path::Path),
    (previous, known): (Option<&'env Previous>, &'env Known),
    pool: rayon::ThreadPool,
    threads: usize,
    done_tx: Sender<Result<TileDone, BakeError>>,
    stopped: &'env AtomicBool,
) -> [std::thread::ScopedJoinHandle<'scope, ()>; 2] {
    // The budget bounds what is in flight; the channel only needs room for each worker's
    // next item.
    let (job_tx, job_rx) = bounded::<TileJob>(threads);
    let reader_done = done_tx.clone();
    let reader = scope.spawn(move || {
        for &(key, recovered) in tiles {
            if s.interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
                stopped.store(true, Ordering::Relaxed);
                return;
            }
            let coord = s.frame.tile_coord(key as usize);
            let job = match (recovered, checkpoint) {
                (true, Some(checkpoint)) => s
                    .budget
                    .reserve(checkpoint.raw_len(key) * 3, "a recovered tile")
                    .map(|reservation| TileJob {
                        index: key,
                        coord,
                        work: Work::Recovered,
                        reservation,
                    })
                    .map_err(BakeError::from),
                _ => read_and_plan(
                    previous,
                    s.frame,
                    s.tiles,
                    s.budget,
                    key,
                    coord,
                    known.get(&key).copied(),
                ),
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
    let workers = scope.spawn(move || {
        pool.broadcast(|_| {
            let mut state = WorkerState::new(s.budget);
            for job in job_rx.iter() {
                let done = run_job(
                    s.frame,
                    (s.params, s.raster),
                    (checkpoint, checkpoint_path),
                    previous,
                    job,
                    &mut state,
                );
                if done_tx.send(done).is_err() {
                    return;
                }
            }
        });
    });
    [reader, workers]
}

/// Process 0 of a distributed bake: passes the `count` tiles other processes computed to
/// the writer, each paid for by a hold on the budget (it cannot wait: the writer may need it
/// to go on; the peers' credit windows bound them). Stops early once `writer_gone` is set.
fn feed_remote_tiles(
    share: &dyn TileShare,
    count: usize,
    budget: &Arc<MemoryBudget>,
    done_tx: Sender<Result<TileDone, BakeError>>,
    writer_gone: &AtomicBool,
) {
    let mut received = 0;
    while received < count && !writer_gone.load(Ordering::Relaxed) {
        let tile = match share.receive(Duration::from_millis(100)) {
            Ok(None) => continue,
            Ok(Some(bytes)) => {
                let mut hold = budget.hold();
                hold.grow_to(bytes.len() as u64 * 2);
                TileDone::from_wire(&bytes, hold).map_err(|message| BakeError::Corrupt {
                    path: "(a tile received from a peer)".into(),
                    message,
                })
            }
            Err(e) => Err(e),
        };
        received += 1;
        let failed = tile.is_err();
        if done_tx.send(tile).is_err() || failed {
            return;
        }
    }
}

/// The reader, the workers and the writer (and, in a distributed bake, the tiles other
/// processes computed).
fn stream(
    s: &Shared,
    stage_key: u64,
    tiles_key: u64,
    threads: usize,
    progress: &Progress,
    share: Option<&dyn TileShare>,
) -> Result<Voxelized, BakeError> {
    let keys = s.tiles.keys();
    progress.stage_start(STAGE, keys.len() as u64);
    let (mut journals, recovered) =
        open_checkpoints(s.layout, (s.frame, s.params), stage_key, &keys, progress)?;
    let threads = threads.max(1);
    let pool = crate::error::thread_pool(threads, STAGE)?;
    let previous = pool.install(|| open_previous(s.layout, &hashes_blob(s.frame, s.params)));
    // A rebake in one process: every tile hashed first, so that the merge knows the changed
    // tiles and merges again only the regions they reach.
    let (mut known, last) = match (&previous, share) {
        (Some(previous), None) => hash_ahead(s, previous, &keys, &pool, progress)?,
        _ => Default::default(),
    };
    // The segments whose every tile is reused: taken over whole from the last bake, so that
    // their tiles' span fields and floors are not even read.
    let adoption = previous
        .as_ref()
        .filter(|_| share.is_none())
        .map(|p| Adoption {
            previous: p,
            segments: whole_segments(&keys, &p.hash_journal, |k| {
                known
                    .get(&k)
                    .is_some_and(|&(h, ..)| p.serves(k, h).is_some())
            }),
            keys: &keys,
        });
    if let Some(a) = &adoption {
        for (k, v) in known.iter_mut() {
            v.2 = a.segments.contains(&(k / JOURNAL_SEGMENT));
        }
    }
    // Which process computes each tile past the checkpoints (0: this one).
    let owners = match share {
        Some(share) => {
            let todo: Vec<(u32, u64)> = keys[recovered..]
                .iter()
                .map(|&k| (k, s.tiles.raw_len(k)))
                .collect();
            share.assign(s.agent, tiles_key, &todo)?
        }
        None => vec![0; keys.len() - recovered],
    };
    let owner_at = |position: usize| position.checked_sub(recovered).map_or(0, |i| owners[i]);
    let local: Vec<LocalTile> = (0..keys.len())
        .filter(|&i| owner_at(i) == 0)
        .map(|i| (keys[i], i < recovered))
        .collect();
    let remote = keys.len() - local.len();
    // A recovered tile is taken from its regions record.
    let checkpoint = journals.tile_regions.snapshot()?;
    let checkpoint_path = s.layout.tile_regions_journal();
    // A group's first agent: the rasterized fields for the others (a tile already there from
    // an interrupted run is not written again).
    let mut raster = match s.raster {
        Some(Raster::Write { key, path, .. }) => {
            let journal = Journal::open(path, RASTER_KIND, *key, &s.frame.encode())?;
            let held: std::collections::HashSet<u32> = journal.keys().into_iter().collect();
            Some((journal, held, false))
        }
        _ => None,
    };
    let (done_tx, done_rx) = bounded::<Result<TileDone, BakeError>>(threads);
    let mut out = Voxelized {
        tiles_with_geometry: 0,
        spans: 0,
        walkable_spans: 0,
        resumed_tiles: recovered as u64,
        reused_tiles: 0,
        raster_shared: 0,
        reused: false,
        merged: Merged::default(),
        seconds: 0.0,
    };
    let mut merge = Merge::start(s.budget, keys.len() as u64, progress, last);
    let stopped = AtomicBool::new(false);
    let writer_gone = AtomicBool::new(false);

    std::thread::scope(|scope| -> Result<(), BakeError> {
        let helpers = spawn_reader_and_workers(
            scope,
            s,
            &local,
            (Some(&checkpoint), &checkpoint_path),
            (previous.as_ref(), &known),
            pool,
            threads,
            done_tx.clone(),
            &stopped,
        );
        let feeder = share.map(|share| {
            let (done_tx, writer_gone) = (done_tx.clone(), &writer_gone);
            scope.spawn(move || feed_remote_tiles(share, remote, s.budget, done_tx, writer_gone))
        });
        drop(done_tx);
        // The merge (its own thread): each tile in tile order, after the writer; it appends
        // to the region journal, the writer to the other four.
        let Checkpoints {
            spans,
            floors,
            tile_regions,
            regions,
            hashes,
        } = &mut journals;
        let (merge_tx, merge_rx) = bounded::<TileDone>(MERGE_QUEUE);
        let merge = &mut merge;
        let merging = scope.spawn(move || -> Result<(), BakeError> {
            let mut last_sync = Instant::now();
            for done in merge_rx {
                let out = (!done.recovered).then_some(&mut *regions);
                merge.add(done.index, (&done.regions, &done.local), done.contours, out)?;
                if last_sync.elapsed() >= SYNC_EVERY {
                    regions.sync()?;
                    last_sync = Instant::now();
                }
            }
            regions.sync()?;
            Ok(())
        });
        // Writer (this thread): restore tile order, append to the checkpoints, count, and
        // hand each tile to the merge.
        let mut tile_journals = [spans, floors, tile_regions, hashes];
        let mut order = TileOrder::new(keys.iter().copied());
        let mut written = 0u64;
        let mut last_sync = Instant::now();
        let received = order.receive(&done_rx, |done| {
            let (position, key) = (written as usize, done.index);
            progress.add_bytes(done.spans_packed.bytes.len() as u64);
            out.reused_tiles += u64::from(done.reused);
            out.raster_shared += u64::from(done.from_record);
            if let (Some((journal, held, appended)), Some(record)) =
                (&mut raster, &done.raster_packed)
            {
                if held.insert(key) {
                    journal.append_stored(key, &record.bytes, record.raw_len)?;
                    *appended = true;
                }
            }
            write_tile(&done, key, &mut tile_journals, adoption.as_ref())?;
            out.tiles_with_geometry += 1;
            out.spans += done.spans;
            out.walkable_spans += done.walkable;
            // The merge takes the regions and contours; the records are written.
            let mut done = done;
            for packed in [
                &mut done.spans_packed,
                &mut done.floors_packed,
                &mut done.regions_packed,
            ] {
                *packed = Default::default();
            }
            done.raster_packed = None;
            // A closed channel: the merge stopped on an error, which its join returns.
            merge_tx.send(done).map_err(|_| BakeError::Interrupted)?;
            if let (Some(share), owner @ 1..) = (share, owner_at(position)) {
                share.written(key, owner);
            }
            written += 1;
            progress.advance(STAGE, written);
            if last_sync.elapsed() >= SYNC_EVERY {
                tile_journals.iter_mut().try_for_each(|j| j.sync())?;
                if let Some((journal, ..)) = &mut raster {
                    journal.sync()?;
                }
                last_sync = Instant::now();
            }
            Ok(())
        });
        writer_gone.store(true, Ordering::Relaxed);
        drop(done_rx); // unblocks the workers and the reader if we stopped early
        drop(merge_tx); // the merge ends once it has taken every tile sent
        for helper in helpers.into_iter().chain(feeder) {
            let _ = helper.join();
        }
        let merged = merging
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        // The merge's own failure first: the writer's then only says that it stopped.
        merged?;
        tile_journals.iter_mut().try_for_each(|j| j.sync())?;
        match received {
            Err(e) => Err(e),
            Ok(()) if !order.finished() && stopped.load(Ordering::Relaxed) => {
                Err(BakeError::Interrupted)
            }
            Ok(()) => Ok(()),
        }
    })?;
    if let Err(e) = merge.check() {
        // Nothing of this merge or the last bake kept: the next bake starts afresh.
        drop(previous);
        let _ = std::fs::remove_dir_all(s.layout.regions_journal());
        let _ = std::fs::remove_dir_all(s.layout.previous());
        return Err(e);
    }
    journals.finish()?;
    write_digests(&s.layout.tile_digests(), stage_key, s.tiles, &keys)?;
    if let Some((mut journal, _, appended)) = raster {
        // (Records appended to a finished journal need a new end record.)
        if appended || !journal.is_complete() {
            journal.finish()?;
        }
    }
    // Whatever the last bake left to reuse has served.
    drop(previous);
    let _ = std::fs::remove_dir_all(s.layout.previous());
    progress.stage_done(STAGE, out.tiles_with_geometry);
    out.merged = merge.finish();
    Ok(out)
}

/// A process other than 0 of a distributed bake: voxelizes `tiles` (in tile order, all past
/// process 0's checkpoints) from the tile pack and hands each finished one, on the wire and
/// in that order, to `send`, which may wait (for a credit from process 0). Returns the bytes
/// sent.
pub(crate) fn stream_for_peer(
    s: &Shared,
    tiles: &[u32],
    threads: usize,
    progress: &Progress,
    send: &mut dyn FnMut(u32, Vec<u8>) -> Result<(), BakeError>,
) -> Result<crate::PeerTiles, BakeError> {
    progress.stage_start(STAGE, tiles.len() as u64);
    let local: Vec<LocalTile> = tiles.iter().map(|&k| (k, false)).collect();
    // A rebake: the last bake's tiles (process 0 kept them in the shared folder before it gave
    // out the tiles) serve here as in process 0.
    let threads = threads.max(1);
    let pool = crate::error::thread_pool(threads, STAGE)?;
    let previous = pool.install(|| open_previous(s.layout, &hashes_blob(s.frame, s.params)));
    let (done_tx, done_rx) = bounded::<Result<TileDone, BakeError>>(threads);
    let stopped = AtomicBool::new(false);
    let no_checkpoint = s.layout.spans_journal();
    let known = Known::new();
    let mut sent = crate::PeerTiles::default();
    std::thread::scope(|scope| -> Result<(), BakeError> {
        let helpers = spawn_reader_and_workers(
            scope,
            s,
            &local,
            (None, &no_checkpoint),
            (previous.as_ref(), &known),
            pool,
            threads,
            done_tx,
            &stopped,
        );
        let mut order = TileOrder::new(tiles.iter().copied());
        // The links between this process's tiles are merged here, in tile order, and reach
        // process 0's merge as what they change at each tile (`tessera_stitch::LocalMatcher`).
        let mut matcher = tessera_stitch::LocalMatcher::new();
        let ours = |key: &tessera_artifacts::LinkKey| {
            [key.0, key.1].iter().all(|span| {
                let size = s.frame.tile_size as i32;
                let [tx, ty] = s.frame.tiles();
                let (x, y) = (span.x.div_euclid(size), span.y.div_euclid(size));
                let inside = (0..tx as i32).contains(&x) && (0..ty as i32).contains(&y);
                let coord = tessera_artifacts::TileCoord {
                    x: x as u32,
                    y: y as u32,
                };
                inside
                    && tiles
                        .binary_search(&(s.frame.tile_index(coord) as u32))
                        .is_ok()
            })
        };
        let received = order.receive(&done_rx, |mut done| {
            // With where they were in the tile's links: process 0 takes them out of the links
            // in the tile's record (which keeps them all, for resuming) as here.
            (done.local, done.local_at) = matcher.split(&mut done.regions, ours);
            sent.matched_links += done.local_at.len() as u64;
            sent.unions += (done.local.iter())
                .filter(|l| matches!(l, tessera_stitch::LocalLink::Joins { .. }))
                .count() as u64;
            let key = done.index;
            let wire = done.to_wire();
            sent.bytes += wire.len() as u64;
            // The tile's reservation is kept until `send` has taken it.
            send(key, wire)?;
            drop(done);
            sent.tiles += 1;
            progress.advance(STAGE, sent.tiles);
            Ok(())
        });
        drop(done_rx);
        for helper in helpers {
            let _ = helper.join();
        }
        match received {
            Err(e) => Err(e),
            Ok(()) if !order.finished() => Err(BakeError::Interrupted),
            Ok(()) => Ok(()),
        }
    })?;
    progress.stage_done(STAGE, tiles.len() as u64);
    Ok(sent)
}

/// Finished tiles, arriving in any order, handed on in the order of `keys`.
struct TileOrder<I: Iterator<Item = u32>> {
    pending: BTreeMap<u32, TileDone>,
    keys: I,
    next: Option<u32>,
}

impl<I: Iterator<Item = u32>> TileOrder<I> {
    fn new(mut keys: I) -> Self {
        let next = keys.next();
        TileOrder {
            pending: BTreeMap::new(),
            keys,
            next,
        }
    }

    /// Takes a tile that arrived.
    fn arrived(&mut self, done: TileDone) {
        self.pending.insert(done.index, done);
    }

    /// The next tile in order when it has arrived; the order then moves past it.
    fn ready(&mut self) -> Option<TileDone> {
        let done = self.pending.remove(&self.next?)?;
        self.next = self.keys.next();
        Some(done)
    }

    /// Every tile was handed on.
    fn finished(&self) -> bool {
        self.next.is_none()
    }

    /// Takes finished tiles from `rx` and hands each to `each` in order, until every tile was
    /// handed on, the channel closes, a worker sends an error or `each` returns one (the first
    /// error is returned).
    fn receive(
        &mut self,
        rx: &Receiver<Result<TileDone, BakeError>>,
        mut each: impl FnMut(TileDone) -> Result<(), BakeError>,
    ) -> Result<(), BakeError> {
        for msg in rx.iter() {
            self.arrived(msg?);
            while let Some(done) = self.ready() {
                each(done)?;
            }
            if self.finished() {
                break;
            }
        }
        Ok(())
    }
}

/// The writer's work for one tile, in tile order: append its hash, span field, floors and
/// regions record to the checkpoints (`journals`: spans, floors, tile regions, hashes),
/// unless they came from there.
fn write_tile(
    done: &TileDone,
    key: u32,
    journals: &mut [&mut Journal; 4],
    adoption: Option<&Adoption>,
) -> Result<(), BakeError> {
    if done.recovered {
        return Ok(());
    }
    let [spans, floors, tile_regions, hashes] = journals;
    // The first tile of a segment the last bake's journals hold whole: the four take it
    // over, and its tiles' records are not written again.
    let n = key / JOURNAL_SEGMENT;
    if let Some((a, regions)) = adoption
        .filter(|a| a.segments.contains(&n))
        .and_then(|a| Some((a, a.previous.regions.as_ref()?)))
    {
        let these = segment_keys(a.keys, n);
        if these.first() == Some(&key) {
            let p = a.previous;
            for (journal, from) in [
                (&mut **spans, &p.spans),
                (&mut **floors, &p.floors),
                (&mut **tile_regions, regions),
                (&mut **hashes, &p.hash_journal),
            ] {
                journal.adopt(from, n, these)?;
            }
        }
    }
    if !hashes.contains(key) {
        // Stored raw.
        let record = TileHash {
            hash: done.hash,
            spans: done.spans,
            walkable: done.walkable,
        };
        hashes.append_stored(key, &record.encode(), TileHash::LEN)?;
    }
    let p = adoption.map(|a| a.previous);
    for (journal, packed, from) in [
        (spans, &done.spans_packed, p.map(|p| &p.spans)),
        (floors, &done.floors_packed, p.map(|p| &p.floors)),
        (
            tile_regions,
            &done.regions_packed,
            p.and_then(|p| p.regions.as_ref()),
        ),
    ] {
        if journal.contains(key) {
            continue;
        }
        match from {
            // A reused tile of a segment that was to be taken over whole (its records were
            // not read) and was not (no hard links here): its record, copied.
            Some(from) if done.reused && packed.bytes.is_empty() => {
                let (stored, raw_len) =
                    from.read_stored(key)?.ok_or_else(|| BakeError::Corrupt {
                        path: p.map(|p| p.spans_path.clone()).unwrap_or_default(),
                        message: format!("tile {key}: the last bake's records went missing"),
                    })?;
                journal.append_stored(key, &stored, raw_len)?;
            }
            _ => journal.append_stored(key, &packed.bytes, packed.raw_len)?,
        }
    }
    Ok(())
}

/// A rebake's segments of the tile journals that the last bake's (`previous`) hold whole:
/// every tile of them reused, the same tiles as there.
struct Adoption<'a> {
    previous: &'a Previous,
    segments: rustc_hash::FxHashSet<u32>,
    /// The stage's tiles, in tile order.
    keys: &'a [u32],
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_config::BakeConfig;

    #[test]
    fn digests_are_read_back_under_their_key_and_refused_when_damaged() {
        let dir = tempfile::tempdir().unwrap();
        // Two parts; tile 3 in both, tile 5 in the second alone.
        let paths = [dir.path().join("a.pack"), dir.path().join("b.pack")];
        let header = b"grid".to_vec();
        for (path, chunks) in paths.iter().zip([
            vec![(3u32, vec![1u8; 40])],
            vec![(3, vec![2u8; 40]), (5, vec![3u8; 80])],
        ]) {
            let mut w =
                tessera_store::PackWriter::create(path, crate::bin::TILES_KIND, &header).unwrap();
            for (key, raw) in chunks {
                w.append(key, &raw).unwrap();
            }
            w.finish().unwrap();
        }
        let tiles = crate::bin::TilePacks::open(&paths, &header).unwrap();
        assert_ne!(tiles.digest(3), tiles.digest(5));
        let file = dir.path().join("tile-digests.bin");
        write_digests(&file, 77, &tiles, &[3, 5]).unwrap();
        let (key, digests) = read_digests(&file).unwrap();
        assert_eq!(key, 77);
        assert_eq!(digests[&3], tiles.digest(3));
        assert_eq!(digests[&5], tiles.digest(5));
        // The same triangles stored in one chunk are not taken for those of two.
        let one = dir.path().join("one.pack");
        let mut w =
            tessera_store::PackWriter::create(&one, crate::bin::TILES_KIND, &header).unwrap();
        w.append(3, &[[1u8; 40], [2u8; 40]].concat()).unwrap();
        w.finish().unwrap();
        let whole = crate::bin::TilePacks::open(&[one], &header).unwrap();
        assert_ne!(whole.digest(3), tiles.digest(3));
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[20] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        assert!(read_digests(&file).is_none());
    }

    #[test]
    fn the_key_follows_the_voxel_settings_only() {
        let base = BakeConfig::default();
        let key_of = |c: &BakeConfig| key(7, &c.voxel_params());
        let mut polygons = base.clone();
        polygons.polygons.max_error = 0.0;
        polygons.polygons.reachable_from = vec![[1.0, 2.0, 3.0]];
        assert_eq!(key_of(&base), key_of(&polygons));
        let mut climb = base.clone();
        climb.agent.max_climb = 0.3;
        assert_ne!(key_of(&base), key_of(&climb));
        assert_ne!(key_of(&base), key(8, &base.voxel_params()));
    }
}
