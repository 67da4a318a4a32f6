//! Stage 2, bin: each triangle of the scene cache to every tile whose core and band it
//! overlaps, written to the tile pack. A barrier (any triangle may land in any tile); its
//! buffers are a reservation from the budget and spill to the pack when full.
//!
//! * Threads: the scene's triangles are cut into two consecutive parts (see `local_parts`;
//!   one for a small scene), each binned into a pack of its own, both at once (each with half
//!   the buffers one would take). Within a part, runs of triangles are placed (their tiles found,
//!   `tessera_tiler::Placements`) in parallel while the run before is added to the part's
//!   binner in scene order; the buffers a run spills are compressed in parallel while the next
//!   run is added (in room reserved for them; without it, where they spill) and appended in
//!   order. A tile is read from the parts in order, so its triangles are the scene's, in
//!   scene order, for any thread count.
//!
//! * Inputs: the scene cache's triangles, the grid.
//! * Output: `work/tiles.pack`, or with parts `work/bins/part-P-of-N.pack`; each header the
//!   stage key and the grid. A scene of several files on one machine is binned in parts of
//!   whole files instead (`work/bins/part-P-of-N-KEY.pack`, [`file_parts`]), each under a key
//!   of its own files, so that a rebake bins again only the files that changed.
//! * Key: [`key`], the scene and the grid (cell sizes, tile size, band). A pack with the same
//!   header whose every chunk checksum holds is reused whole.
//! * Progress: triangles binned.

use rayon::prelude::*;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tessera_artifacts::{GridFrame, TileTriangle, Triangle};
use tessera_budget::MemoryBudget;
use tessera_store::{PackReader, PackWriter};
use tessera_tiler::{Binner, Placements, Spill};

use crate::grid::{MIN_BIN_BUFFER, STAGE_BUFFER_CAP};
use crate::ingest::Scene;
use crate::keys::{SceneIdentity, StageKey};
use crate::{BakeError, BakeLayout, Progress};

const STAGE: &str = "bin";
/// Pack kind of the tile pack.
pub const TILES_KIND: &[u8; 8] = b"TSTILES\0";
/// Scenes of at most this many bytes of triangles (1.9 million triangles) get a tile pack of
/// raw chunks, at most about 75 MB: there compressing costs more CPU (a quarter of the stage on
/// citygen M, and the voxelize reader's decompression) than the disk it saves is worth. Larger
/// scenes get lz4, about a third of the bytes, so that a huge world's pack stays small and its
/// writes do not queue behind the disk.
const RAW_PACK_MAX: u64 = 64 << 20;

/// Whether the tile pack of a scene of `triangles` triangles stores its chunks raw.
pub(crate) fn stores_raw(triangles: u64) -> bool {
    triangles.saturating_mul(std::mem::size_of::<TileTriangle>() as u64) <= RAW_PACK_MAX
}

/// Triangles between two page releases of the scene cache (8 MiB of them), progress reports
/// and interrupt checks.
const RELEASE_EVERY: usize = (8 << 20) / std::mem::size_of::<Triangle>();

/// The stage's key: what the tile pack depends on.
pub(crate) fn key(scene: &SceneIdentity, frame: &GridFrame) -> u64 {
    StageKey::new(STAGE)
        .reads("scene", scene)
        .reads("grid", frame)
        .finish()
}

/// The binned tiles: one tile pack, or the packs of the parts of the scene's triangles binned
/// apart (by two threads, or by the processes of a distributed bake), whose chunks of a tile,
/// in part order, are the tile's triangles in scene order.
pub struct TilePacks {
    packs: Vec<PackReader>,
    paths: Vec<PathBuf>,
    keys: Vec<u32>,
}

impl TilePacks {
    /// The packs at `paths`, in part order; every header must be `header`.
    pub(crate) fn open(paths: &[PathBuf], header: &[u8]) -> Result<TilePacks, BakeError> {
        Self::open_checked(paths, |_| Some(header))
    }

    /// The packs at `paths`, in part order; pack `k`'s header must be `headers[k]` (the parts
    /// of a scene of several files, each binned under a key of its own files).
    fn open_each(paths: &[PathBuf], headers: &[Vec<u8>]) -> Result<TilePacks, BakeError> {
        Self::open_checked(paths, |k| Some(&headers[k]))
    }

    /// The binned tiles of the finished bake in `layout` (for tools and tests): its tile pack,
    /// or the parts of its binning (`work/bins/part-P-of-N.pack`), in part order.
    pub fn open_bake(layout: &BakeLayout) -> Result<TilePacks, BakeError> {
        let part = |p: &Path| -> Option<u32> {
            let name = p.file_name()?.to_str()?;
            name.strip_prefix("part-")?.split('-').next()?.parse().ok()
        };
        let mut parts: Vec<(u32, PathBuf)> = match std::fs::read_dir(layout.bin_parts()) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter_map(|p| Some((part(&p)?, p)))
                .collect(),
            Err(_) => Vec::new(),
        };
        parts.sort();
        let paths: Vec<PathBuf> = if parts.is_empty() {
            vec![layout.tiles_pack()]
        } else {
            parts.into_iter().map(|(_, p)| p).collect()
        };
        Self::open_checked(&paths, |_| None)
    }

    /// The packs at `paths`, pack `k`'s header `header(k)`; where that is None, on the first
    /// pack's grid (a header is a key, then the grid).
    fn open_checked<'h>(
        paths: &[PathBuf],
        header: impl Fn(usize) -> Option<&'h [u8]>,
    ) -> Result<TilePacks, BakeError> {
        let packs: Vec<PackReader> = paths
            .iter()
            .map(|path| PackReader::open(path, TILES_KIND))
            .collect::<Result<_, _>>()?;
        let grid = |h: &[u8]| h.get(8..).map(<[u8]>::to_vec);
        let first = grid(packs[0].header());
        let differs = |k: usize, p: &PackReader| match header(k) {
            Some(h) => p.header() != h,
            None => grid(p.header()).is_none() || grid(p.header()) != first,
        };
        if let Some(k) = packs.iter().enumerate().position(|(k, p)| differs(k, p)) {
            return Err(BakeError::Corrupt {
                path: paths[k].clone(),
                message: "not binned from this scene and grid (is the bake folder shared?)".into(),
            });
        }
        let mut keys: Vec<u32> = packs.iter().flat_map(|p| p.keys()).collect();
        keys.sort_unstable();
        keys.dedup();
        Ok(TilePacks {
            packs,
            paths: paths.to_vec(),
            keys,
        })
    }

    /// The packs' header: the stage key, then the grid (`GridFrame::encode`).
    pub fn header(&self) -> &[u8] {
        self.packs[0].header()
    }

    /// The tiles holding triangles, in tile order.
    pub fn keys(&self) -> Vec<u32> {
        self.keys.clone()
    }

    /// The bytes of tile `key`'s triangles.
    pub fn raw_len(&self, key: u32) -> u64 {
        self.packs.iter().map(|p| p.raw_len(key)).sum()
    }

    /// Tile `key`'s triangles into `out` ([`TilePacks::raw_len`] bytes), part after part.
    pub fn read_into(&self, key: u32, out: &mut [u8]) -> Result<(), tessera_store::StoreError> {
        let mut at = 0;
        for p in &self.packs {
            let n = p.raw_len(key) as usize;
            if n > 0 {
                p.read_into(key, &mut out[at..at + n])?;
            }
            at += n;
        }
        Ok(())
    }

    /// A digest of how tile `key`'s triangles are stored: its chunks' checksums and lengths,
    /// part after part, from the packs' indexes alone. Two tiles of equal digests hold the
    /// same triangles (the converse need not hold: the same triangles may be cut in other
    /// chunks), so a rebake takes a tile's hash from the last bake's record without reading
    /// the tile when the digests match.
    pub(crate) fn digest(&self, key: u32) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for (checksum, raw_len) in self.packs.iter().flat_map(|p| p.chunk_sums(key)) {
            h.update(&checksum.to_le_bytes());
            h.update(&raw_len.to_le_bytes());
        }
        h.digest()
    }

    /// The first pack's path, for messages.
    pub fn path(&self) -> &Path {
        &self.paths[0]
    }

    /// Whether `path` is one of the packs.
    pub(crate) fn holds(&self, path: &Path) -> bool {
        self.paths.iter().any(|p| p == path)
    }
}

/// The binning of a scene shared with other processes (a distributed bake): each process bins
/// one part of the scene's triangles into a pack of its own (`work/bins/`), in parallel;
/// every process then reads a tile from all the parts' packs.
pub trait BinShare: Send + Sync {
    /// Process 0: every other process `p` bins part `p` of the scene (its files' caches at
    /// `caches`, paths in the bake folder, in order, or the manifest of one file's cache in
    /// parts) into its part pack, under `key`.
    fn assign_bins(&self, key: u64, caches: &[PathBuf]) -> Result<(), BakeError>;
    /// Process 0: waits until process `p` has binned its part; the triangle copies it wrote.
    fn wait_bins(&self, p: u32) -> Result<u64, BakeError>;
}

/// The triangles of part `k` of `parts` of a scene of `total` triangles (scene order).
pub(crate) fn part_range(total: u64, k: u32, parts: u32) -> Range<u64> {
    let at = |k: u32| total * u64::from(k) / u64::from(parts.max(1));
    at(k)..at(k + 1)
}

/// What binning did.
pub(crate) struct Binned {
    /// The binned tiles, open for reading.
    pub tiles: TilePacks,
    pub key: u64,
    pub reused: bool,
    /// Triangle copies written (0 when the pack was reused).
    pub placements: u64,
    pub seconds: f64,
}

/// What binning reads and where it works.
pub(crate) struct Binning<'a> {
    pub scene: &'a Scene,
    pub frame: &'a GridFrame,
    pub budget: &'a Arc<MemoryBudget>,
    pub threads: usize,
    pub layout: &'a BakeLayout,
    pub progress: &'a Progress,
    pub interrupted: &'a (dyn Fn() -> bool + Sync),
}

impl Binning<'_> {
    /// The triangles `range` of the scene binned into a new pack at `out` (with `header`), on
    /// a pool of the bake's threads; the triangle copies written.
    fn pack(&self, range: Range<u64>, header: &[u8], out: &Path) -> Result<u64, BakeError> {
        self.packs(&[(range, header, out)])
    }

    /// Each job's triangles (a range of the scene's) binned into a new pack at its path with
    /// its header, [`PARTS_AT_ONCE`] at a time on a pool of the bake's threads (each part's
    /// buffers a share of the stage's); the triangle copies written.
    fn packs(&self, jobs: &[(Range<u64>, &[u8], &Path)]) -> Result<u64, BakeError> {
        let total = jobs.iter().map(|(r, ..)| r.end - r.start).sum();
        self.progress.stage_start(STAGE, total);
        let pool = crate::error::thread_pool(self.threads, STAGE)?;
        // The caches of the files the jobs read, checked first (one reused from an earlier
        // bake has only had its trailer checked: a damaged one is made again, see
        // [`crate::bake`]).
        let mut start = 0u64;
        let read: Vec<&tessera_ingest::cache::SceneCache> = (self.scene.parts().iter())
            .filter_map(|part| {
                let end = start + part.cache.triangles().len() as u64;
                let range = std::mem::replace(&mut start, end)..end;
                let wanted = jobs
                    .iter()
                    .any(|(r, ..)| r.start < range.end && range.start < r.end);
                wanted.then_some(&part.cache)
            })
            .collect();
        pool.install(|| read.par_iter().try_for_each(|cache| cache.verify()))?;
        let binned = AtomicU64::new(0);
        let mut placements = 0;
        for at_once in jobs.chunks(PARTS_AT_ONCE) {
            let parts = at_once.len() as u64;
            let done: Vec<Result<u64, BakeError>> = pool.install(|| {
                at_once
                    .par_iter()
                    .map(|(range, header, out)| {
                        bin(self, range.clone(), header, out, (parts, &binned))
                    })
                    .collect()
            });
            placements += done.into_iter().sum::<Result<u64, BakeError>>()?;
        }
        self.progress.stage_done(STAGE, total);
        Ok(placements)
    }
}

/// Parts binned at once on one machine: two (adding triangles to their tiles is the serial part
/// of binning one part).
const PARTS_AT_ONCE: usize = 2;

/// A scene of several files is binned in parts of whole consecutive files, each of at least
/// this many triangles (the last aside), so that a change to one file bins its part again
/// and no other.
const MIN_FILES_PART: u64 = 1 << 16;

/// The parts of whole files a scene of several files is binned in on one machine (None for a
/// scene of one file): each part's triangles, and its key, of its files (each file's identity
/// and its place in the scene's frame) and the grid, not of the other files.
fn file_parts(scene: &Scene, frame: &GridFrame) -> Option<Vec<(Range<u64>, u64)>> {
    if scene.is_split() || scene.parts().len() < 2 {
        return None;
    }
    let mut parts = Vec::new();
    let (mut start, mut end) = (0u64, 0u64);
    let mut key = StageKey::new("bin files");
    for (k, part) in scene.parts().iter().enumerate() {
        key = key
            .reads("file", &SceneIdentity::of(part.cache.info()))
            .reads("offset", &part.offset);
        end += part.cache.triangles().len() as u64;
        if end - start >= MIN_FILES_PART || k + 1 == scene.parts().len() {
            parts.push((start..end, key.reads("grid", frame).finish()));
            start = end;
            key = StageKey::new("bin files");
        }
    }
    Some(parts)
}

/// The parts a bake on one machine bins its scene in: two, binned at once (adding triangles
/// to their tiles, a copy into each tile's buffer, is the serial part of binning one part),
/// unless the scene is too small to be worth splitting. It depends on the scene alone, not on
/// the threads or the budget, so that the bake folder is the same for every thread count and
/// budget, and a bake resumed with other ones reuses the parts.
fn local_parts(b: &Binning) -> u32 {
    const MIN_PART_TRIANGLES: u64 = 1 << 12;
    if b.scene.info().triangles >= 2 * MIN_PART_TRIANGLES {
        2
    } else {
        1
    }
}

/// Whether the packs at `paths` were all made from this scene and grid (`header`) and open
/// whole (see [`reusable_packs`]; a damaged one is said, and recomputed).
fn reusable(paths: &[PathBuf], header: &[u8], progress: &Progress) -> bool {
    let headers: Vec<&[u8]> = vec![header; paths.len()];
    reusable_packs(paths, &headers, progress)
        .into_iter()
        .all(|ok| ok)
}

/// Whether each pack of `paths` was made under its header and opens whole: its header and
/// index pass their checksums and every chunk lies inside the file. The chunks themselves are
/// checked as they are read (a rebake reads the few tiles that changed, not every pack
/// through): a chunk found damaged then has its pack binned again ([`crate::bake`] does so
/// and goes on from its checkpoints). One that is there but does not open (cut short,
/// overwritten) is said, and recomputed.
fn reusable_packs(paths: &[PathBuf], headers: &[&[u8]], progress: &Progress) -> Vec<bool> {
    paths
        .iter()
        .zip(headers)
        .map(|(path, header)| match PackReader::open(path, TILES_KIND) {
            Ok(r) => r.header() == *header,
            // No pack yet: nothing to say.
            Err(tessera_store::StoreError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                false
            }
            Err(e) => {
                progress.warn(&format!("tile pack recomputed: {e}"));
                false
            }
        })
        .collect()
}

/// Runs the stage, or reuses the tile pack when it was made from this scene and grid. With
/// `share` (process 0 of a distributed bake of `parts` processes), every process bins its part
/// of the scene's triangles at once, this one part 0, and the tiles are read from all the
/// parts: the parts' packs are the bake's for this number of processes and are made again every
/// run (binning in parallel is a small share of a bake), while the voxelize checkpoints, keyed
/// by the scene and grid alone, stay valid whatever the number.
pub(crate) fn run(b: &Binning, share: Option<(&dyn BinShare, u32)>) -> Result<Binned, BakeError> {
    let started = Instant::now();
    let (key, header) = header(b.scene, b.frame);
    let layout = b.layout;
    let remove_parts = || {
        let _ = std::fs::remove_dir_all(layout.bin_parts());
    };
    let create_parts = || {
        std::fs::create_dir_all(layout.bin_parts())
            .map_err(|e| tessera_store::StoreError::io(&layout.bin_parts(), e))
    };
    if let Some((share, parts)) = share {
        // The parts of an earlier bake of this folder are not read by this one.
        remove_parts();
        create_parts()?;
        share.assign_bins(key, &b.scene.cache_paths(layout))?;
        let own = part_range(b.scene.info().triangles, 0, parts);
        let mut placements = b.pack(own, &header, &layout.bin_part(0, parts))?;
        for p in 1..parts {
            placements += share.wait_bins(p)?;
        }
        let paths: Vec<PathBuf> = (0..parts).map(|p| layout.bin_part(p, parts)).collect();
        return Ok(Binned {
            tiles: TilePacks::open(&paths, &header)?,
            key,
            reused: false,
            placements,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    // On one machine, a scene of several files: parts of whole files, each kept while its
    // files are.
    if let Some(parts) = file_parts(b.scene, b.frame) {
        return run_file_parts(b, key, &parts, started);
    }
    // Else the tile pack, or the packs of its parts binned at once (the same tiles, read part
    // after part, so the same triangles in the same order).
    let parts = local_parts(b);
    let paths: Vec<PathBuf> = if parts == 1 {
        vec![layout.tiles_pack()]
    } else {
        (0..parts).map(|p| layout.bin_part(p, parts)).collect()
    };
    let reused = reusable(&paths, &header, b.progress);
    let placements = if reused {
        0
    } else {
        // What an earlier bake binned otherwise goes: the other form, or other parts.
        remove_parts();
        if parts == 1 {
            b.pack(0..b.scene.info().triangles, &header, &paths[0])?
        } else {
            let _ = std::fs::remove_file(layout.tiles_pack());
            create_parts()?;
            let total = b.scene.info().triangles;
            let jobs: Vec<_> = (0..parts)
                .map(|p| {
                    (
                        part_range(total, p, parts),
                        &header[..],
                        paths[p as usize].as_path(),
                    )
                })
                .collect();
            b.packs(&jobs)?
        }
    };
    Ok(Binned {
        tiles: TilePacks::open(&paths, &header)?,
        key,
        reused,
        placements,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// [`run`] for a scene of several files on one machine: each of `parts` (its triangles, its
/// key: [`file_parts`]) in a pack of its own, `work/bins/part-P-of-N-KEY.pack`, under its own
/// header (its key, then the grid), kept from the last bake when a pack of that key is there
/// and whole (renamed to its place in the order), else binned. The tiles are the same as one
/// pack's, read part after part. `key` is the whole scene's, for the stages after.
fn run_file_parts(
    b: &Binning,
    key: u64,
    parts: &[(Range<u64>, u64)],
    started: Instant,
) -> Result<Binned, BakeError> {
    let dir = b.layout.bin_parts();
    let io = |path: &Path, e| BakeError::Io(tessera_store::StoreError::io(path, e));
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let _ = std::fs::remove_file(b.layout.tiles_pack());
    // The packs there by the part key their name ends in (an earlier bake's: the same files
    // may sit at another place in the order).
    let key_of = |path: &Path| -> Option<u64> {
        let name = path.file_name()?.to_str()?.strip_suffix(".pack")?;
        let hex = name.rsplit('-').next().filter(|h| h.len() == 16)?;
        u64::from_str_radix(hex, 16).ok()
    };
    let mut there: std::collections::HashMap<u64, PathBuf> = std::collections::HashMap::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| io(&dir, e))? {
        let path = entry.map_err(|e| io(&dir, e))?.path();
        match key_of(&path) {
            Some(k) => {
                there.insert(k, path);
            }
            // Another form of binning's part.
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let n = parts.len();
    let grid = b.frame.encode();
    let mut paths = Vec::with_capacity(n);
    let mut headers = Vec::with_capacity(n);
    for (p, (_, part_key)) in parts.iter().enumerate() {
        let path = dir.join(format!("part-{p}-of-{n}-{part_key:016x}.pack"));
        if let Some(old) = there.remove(part_key) {
            if old != path {
                std::fs::rename(&old, &path).map_err(|e| io(&old, e))?;
            }
        }
        paths.push(path);
        headers.push([part_key.to_le_bytes().as_slice(), &grid].concat());
    }
    // What is left is of files no longer in the scene, or changed.
    for stale in there.into_values() {
        let _ = std::fs::remove_file(stale);
    }
    let header_refs: Vec<&[u8]> = headers.iter().map(|h| &h[..]).collect();
    let reusable = reusable_packs(&paths, &header_refs, b.progress);
    let jobs: Vec<_> = (0..n)
        .filter(|&p| !reusable[p])
        .map(|p| (parts[p].0.clone(), &headers[p][..], paths[p].as_path()))
        .collect();
    let placements = match jobs.is_empty() {
        true => 0,
        false => b.packs(&jobs)?,
    };
    Ok(Binned {
        tiles: TilePacks::open_each(&paths, &headers)?,
        key,
        reused: jobs.is_empty(),
        placements,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The tile pack header of a scene and grid: the stage key, then the grid.
pub(crate) fn header(scene: &Scene, frame: &GridFrame) -> (u64, Vec<u8>) {
    let key = key(&SceneIdentity::of(scene.info()), frame);
    (
        key,
        [key.to_le_bytes().as_slice(), &frame.encode()].concat(),
    )
}

/// Process `p` (from 1) of a distributed bake of `parts` processes: bins its part of the
/// scene into its part pack, under process 0's `key`; returns the triangle copies written.
pub(crate) fn run_part(b: &Binning, key: u64, (p, parts): (u32, u32)) -> Result<u64, BakeError> {
    let (mine, header) = header(b.scene, b.frame);
    if mine != key {
        return Err(BakeError::Corrupt {
            path: b.scene.path().to_path_buf(),
            message: "not the scene process 0 binned (is the bake folder shared?)".into(),
        });
    }
    let range = part_range(b.scene.info().triangles, p, parts);
    b.pack(range, &header, &b.layout.bin_part(p, parts))
}

/// Bins the triangles `range` of the scene (scene order, across its files) into a new tile
/// pack at `out`; returns the copies written.
/// `(parts, binned)`: the parts binning at once in this process (each gets that share of
/// the stage's buffers) and their count of triangles binned, for progress.
fn bin(
    b: &Binning,
    range: Range<u64>,
    header: &[u8],
    out: &Path,
    (parts, binned_all): (u64, &AtomicU64),
) -> Result<u64, BakeError> {
    let Binning {
        scene,
        frame,
        budget,
        progress,
        interrupted,
        ..
    } = *b;
    let total = range.end - range.start;
    // The parts binning at once share what one would take.
    let share = budget.total() / parts.max(1);
    let bin_limit = (share / 4).clamp(
        MIN_BIN_BUFFER,
        (STAGE_BUFFER_CAP / parts).max(MIN_BIN_BUFFER),
    );
    // Beyond the buffers: two runs of placements (the one being added, the next being
    // placed) and the chunks being compressed, up to an eighth of the buffers each (less when
    // the budget is near its minimum: smaller runs and groups, same pack).
    let slack = (bin_limit / 8).min(share.saturating_sub(bin_limit) / 2);
    let reservation = budget.reserve(bin_limit + 2 * slack, "binning buffers")?;
    // A spill (at most half the buffers) is compressed while the next run is added, in room
    // of its own; without that room, where it is spilled.
    let beside = budget
        .reserve(bin_limit, "binning buffers being compressed")
        .ok();
    let run_len = (slack as usize / 2 / Placements::MAX_BYTES_PER_TRIANGLE).clamp(1, RELEASE_EVERY);
    let chunking = Chunking {
        group: slack as usize,
        lz4: !stores_raw(total),
    };
    let mut pack = PackWriter::create(out, TILES_KIND, header)?;
    let mut binner = Binner::new(frame, bin_limit as usize);
    // Runs of each file's triangles within `range`, in scene order (a run never spans two
    // files: where a run ends changes nothing in the pack, as runs are added exactly as one
    // triangle at a time).
    let mut first = 0u64;
    let runs: Vec<(usize, Range<usize>)> = scene
        .parts()
        .iter()
        .enumerate()
        .flat_map(|(p, part)| {
            let n = part.cache.triangles().len() as u64;
            let (lo, hi) = (range.start.max(first), range.end.min(first + n));
            let local = (lo.saturating_sub(first) as usize)..(hi.saturating_sub(first) as usize);
            first += n;
            local
                .clone()
                .step_by(run_len)
                .map(move |start| (p, start..(start + run_len).min(local.end)))
        })
        .collect();
    let place = |(p, r): &(usize, Range<usize>)| place_run(frame, &scene.parts()[*p], r.clone());
    let mut placed = runs.first().map(place);
    // Buffers spilled by the last run, compressed while this one is added.
    let mut spilled: Spill = Vec::new();
    let (mut released, mut binned, mut reported) = (0, 0, 0);
    for (k, (p, r)) in runs.iter().enumerate() {
        let (triangles, areas, current) = placed
            .take()
            .expect("each run is placed before it is added");
        let waiting = std::mem::take(&mut spilled);
        // This run is added here while the pool places the next one and compresses what the
        // last one spilled; the pack gets the chunks in the order they were spilled.
        let (added, (next, compressed)) = rayon::join(
            || {
                let mut out: Spill = Vec::new();
                let mut keep = |chunks: Spill| -> Result<(), BakeError> {
                    if beside.is_some() {
                        out.extend(chunks);
                        Ok(())
                    } else {
                        write_chunks(&mut pack, chunks, chunking, progress)
                    }
                };
                let added = current.iter().try_for_each(|(piece, p)| {
                    binner.add_placed(
                        &triangles[piece.clone()],
                        &areas[piece.clone()],
                        p,
                        &mut keep,
                    )
                });
                added.map(|()| out)
            },
            || {
                rayon::join(
                    || runs.get(k + 1).map(place),
                    || compress_chunks(waiting, chunking),
                )
            },
        );
        append_chunks(&mut pack, compressed, progress)?;
        spilled = added?;
        placed = next;
        binned += r.len();
        if binned / RELEASE_EVERY > released || r.end == scene.parts()[*p].cache.triangles().len() {
            released = binned / RELEASE_EVERY;
            scene.parts()[*p].cache.release_pages();
            let step = (binned - reported) as u64;
            reported = binned;
            progress.advance(STAGE, binned_all.fetch_add(step, Ordering::Relaxed) + step);
            if interrupted() {
                return Err(BakeError::Interrupted);
            }
        }
    }
    // What is left is compressed in one parallel pass when room for it was reserved
    // (groups of the whole buffers), else in groups as above.
    let last = if beside.is_some() {
        Chunking {
            group: bin_limit as usize,
            ..chunking
        }
    } else {
        chunking
    };
    let mut spill = |chunks: Spill| write_chunks(&mut pack, chunks, last, progress);
    spill(spilled)?;
    let placements = binner.finish(&mut spill)?;
    pack.finish()?;
    for part in scene.parts() {
        part.cache.release_pages();
    }
    drop((reservation, beside));
    binned_all.fetch_add((binned - reported) as u64, Ordering::Relaxed);
    debug_assert_eq!(binned as u64, total);
    Ok(placements)
}

/// A run of a part's triangles as the scene has them: the cache's own when the part needs no
/// offset, else moved into the scene's frame.
type RunTriangles<'a> = std::borrow::Cow<'a, [Triangle]>;

/// A run placed: its triangles, their areas, and pieces of the run with their tiles.
type PlacedRun<'a> = (RunTriangles<'a>, &'a [u8], Vec<(Range<usize>, Placements)>);

/// The triangles of `run` of `part` (in the scene's frame), their areas and their tiles,
/// placed in parallel pieces of the run (the pieces' ranges are within the run's triangles).
fn place_run<'a>(
    frame: &GridFrame,
    part: &'a crate::ingest::ScenePart,
    run: Range<usize>,
) -> PlacedRun<'a> {
    let areas = &part.cache.areas()[run.clone()];
    let stored = &part.cache.triangles()[run];
    let triangles: RunTriangles = if part.in_place() {
        RunTriangles::Borrowed(stored)
    } else {
        RunTriangles::Owned(stored.par_iter().map(|t| part.placed(t)).collect())
    };
    let n = triangles.len();
    let piece = n.div_ceil(4 * rayon::current_num_threads()).max(1);
    let pieces: Vec<Range<usize>> = (0..n)
        .step_by(piece)
        .map(|start| start..(start + piece).min(n))
        .collect();
    let placed = pieces
        .into_par_iter()
        .map(|piece| {
            let placed = Placements::of(frame, &triangles[piece.clone()]);
            (piece, placed)
        })
        .collect();
    (triangles, areas, placed)
}

/// Bytes of a spilled buffer compressed as one chunk: a large buffer is stored as several
/// chunks of its tile (read back concatenated), so that even a few large buffers, as a small
/// scene's last spill is, compress on every thread.
const PIECE: usize = 1 << 20;

/// How spilled buffers become chunks of the pack.
#[derive(Clone, Copy)]
struct Chunking {
    /// Bytes of buffers compressed at a time, at most.
    group: usize,
    /// Compressed (in pieces), or each buffer stored raw as one chunk.
    lz4: bool,
}

/// Appends spilled buffers to the pack in their order, each in pieces of at most [`PIECE`]
/// bytes, compressed in parallel a group of at most `chunking.group` bytes (or one piece) at
/// a time; each buffer is freed once compressed.
fn write_chunks(
    pack: &mut PackWriter,
    chunks: Spill,
    chunking: Chunking,
    progress: &Progress,
) -> Result<(), BakeError> {
    let mut chunks = chunks.into_iter().peekable();
    while chunks.peek().is_some() {
        let mut raw = 0;
        let mut taken = Vec::new();
        while let Some(chunk) =
            chunks.next_if(|c| taken.is_empty() || raw + c.1.len() <= chunking.group)
        {
            raw += chunk.1.len();
            taken.push(chunk);
        }
        append_chunks(pack, compress_chunks(taken, chunking), progress)?;
    }
    Ok(())
}

/// Spilled buffers compressed on the pool in pieces of at most [`PIECE`] bytes (and half of
/// the group), whole triangles in each (though readers concatenate a tile's chunks anyway),
/// or taken as they are when stored raw: (tile, stored bytes, raw length) in order. Each
/// buffer is freed once compressed.
fn compress_chunks(chunks: Spill, chunking: Chunking) -> Vec<(u32, Vec<u8>, usize)> {
    if !chunking.lz4 {
        return chunks
            .into_iter()
            .map(|(tile, bytes)| {
                let n = bytes.len();
                (tile, bytes, n)
            })
            .collect();
    }
    let triangle = std::mem::size_of::<TileTriangle>();
    let piece = (PIECE.min(chunking.group / 2) / triangle).max(1) * triangle;
    let pieces: Vec<(u32, &[u8])> = chunks
        .iter()
        .flat_map(|(tile, bytes)| bytes.chunks(piece).map(move |p| (*tile, p)))
        .collect();
    pieces
        .into_par_iter()
        .map(|(tile, bytes)| (tile, tessera_store::compress(bytes), bytes.len()))
        .collect()
}

/// Appends compressed pieces to the pack in their order.
fn append_chunks(
    pack: &mut PackWriter,
    compressed: Vec<(u32, Vec<u8>, usize)>,
    progress: &Progress,
) -> Result<(), BakeError> {
    for (tile, stored, raw_len) in compressed {
        progress.add_bytes(raw_len as u64);
        pack.append_stored(tile, &stored, raw_len)?;
    }
    Ok(())
}
