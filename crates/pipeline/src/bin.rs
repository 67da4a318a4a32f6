//! Stage 2, bin: each triangle of the scene cache to every tile whose core and band it
//! overlaps, written to the tile pack. A barrier (any triangle may land in any tile); its
//! buffers are a reservation from the budget and spill to the pack when full.
//!
//! * Threads: on a pool of the bake's threads, runs of triangles are placed (their tiles found,
//!   `tessera_tiler::Placements`) in parallel while the run before is added to the one binner
//!   in scene order; the buffers a run spills are compressed in parallel while the next run is
//!   added (in room reserved for them; without it, where they spill) and appended in order. So
//!   the pack's chunks are those of binning one triangle at a time, for any thread count.
//!
//! * Inputs: the scene cache's triangles, the grid.
//! * Output: `work/tiles.pack`, its header the stage key and the grid.
//! * Key: [`key`], the scene and the grid (cell sizes, tile size, band). A pack with the same
//!   header whose every chunk checksum holds is reused whole.
//! * Progress: triangles binned.

use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;
use tessera_artifacts::{GridFrame, Triangle};
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
    triangles.saturating_mul(std::mem::size_of::<Triangle>() as u64) <= RAW_PACK_MAX
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

/// What binning did.
pub(crate) struct Binned {
    /// The tile pack, open for reading.
    pub tiles: PackReader,
    pub key: u64,
    pub reused: bool,
    /// Triangle copies written (0 when the pack was reused).
    pub placements: u64,
    pub seconds: f64,
}

/// Runs the stage on a pool of `threads`, or reuses the tile pack when it was made from this
/// scene and grid.
pub(crate) fn run(
    scene: &Scene,
    frame: &GridFrame,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    layout: &BakeLayout,
    progress: &Progress,
    interrupted: &(dyn Fn() -> bool + Sync),
) -> Result<Binned, BakeError> {
    let started = Instant::now();
    let key = key(&SceneIdentity::of(scene.info()), frame);
    let header = [key.to_le_bytes().as_slice(), &frame.encode()].concat();
    let reused = match PackReader::open(layout.tiles_pack(), TILES_KIND) {
        Ok(r) if r.header() == header => {
            progress.stage_start(STAGE, 0);
            progress.phase(STAGE, "checking the tile pack of an earlier bake", 0);
            match r.verify() {
                Ok(()) => true,
                Err(e) => {
                    progress.warn(&format!("tile pack recomputed: {e}"));
                    false
                }
            }
        }
        Ok(_) => false,
        // No pack yet: nothing to say. One that is there but does not open (cut short,
        // overwritten) was damaged after it was written: said, as a failed check is.
        Err(tessera_store::StoreError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            false
        }
        Err(e) => {
            progress.warn(&format!("tile pack recomputed: {e}"));
            false
        }
    };
    let placements = if reused {
        0
    } else {
        let pool = crate::error::thread_pool(threads, STAGE)?;
        pool.install(|| bin(scene, frame, &header, budget, layout, progress, interrupted))?
    };
    Ok(Binned {
        tiles: PackReader::open(layout.tiles_pack(), TILES_KIND)?,
        key,
        reused,
        placements,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Bins every triangle into a new tile pack; returns the copies written.
fn bin(
    scene: &Scene,
    frame: &GridFrame,
    header: &[u8],
    budget: &Arc<MemoryBudget>,
    layout: &BakeLayout,
    progress: &Progress,
    interrupted: &(dyn Fn() -> bool + Sync),
) -> Result<u64, BakeError> {
    let total = scene.info().triangles;
    progress.stage_start(STAGE, total);
    let bin_limit = (budget.total() / 4).clamp(MIN_BIN_BUFFER, STAGE_BUFFER_CAP);
    // Beyond the buffers: two runs of placements (the one being added, the next being
    // placed) and the chunks being compressed, up to an eighth of the buffers each (less when
    // the budget is near its minimum: smaller runs and groups, same pack).
    let slack = (bin_limit / 8).min(budget.total().saturating_sub(bin_limit) / 2);
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
    let mut pack = PackWriter::create(layout.tiles_pack(), TILES_KIND, header)?;
    let mut binner = Binner::new(frame, bin_limit as usize);
    // Runs of each part's triangles in scene order (a run never spans two files: where a run
    // ends changes nothing in the pack, as runs are added exactly as one triangle at a time).
    let runs: Vec<(usize, Range<usize>)> = scene
        .parts()
        .iter()
        .enumerate()
        .flat_map(|(p, part)| {
            let n = part.cache.triangles().len();
            (0..n)
                .step_by(run_len)
                .map(move |start| (p, start..(start + run_len).min(n)))
        })
        .collect();
    let place = |(p, r): &(usize, Range<usize>)| place_run(frame, &scene.parts()[*p], r.clone());
    let mut placed = runs.first().map(place);
    // Buffers spilled by the last run, compressed while this one is added.
    let mut spilled: Spill = Vec::new();
    let (mut released, mut binned) = (0, 0);
    for (k, (p, r)) in runs.iter().enumerate() {
        let (triangles, current) = placed
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
                    binner.add_placed(&triangles[piece.clone()], p, &mut keep)
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
            progress.advance(STAGE, binned as u64);
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
    progress.stage_done(STAGE, total);
    Ok(placements)
}

/// A run of a part's triangles as the scene has them: the cache's own when the part needs no
/// offset, else moved into the scene's frame.
type RunTriangles<'a> = std::borrow::Cow<'a, [Triangle]>;

/// The triangles of `run` of `part` (in the scene's frame) and their tiles, placed in
/// parallel pieces of the run (the pieces' ranges are within the run's triangles).
fn place_run<'a>(
    frame: &GridFrame,
    part: &'a crate::ingest::ScenePart,
    run: Range<usize>,
) -> (RunTriangles<'a>, Vec<(Range<usize>, Placements)>) {
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
    (triangles, placed)
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
    let triangle = std::mem::size_of::<Triangle>();
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
