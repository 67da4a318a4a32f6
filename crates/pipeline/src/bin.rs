//! Stage 2, bin: each triangle of the scene cache to every tile whose core and band it
//! overlaps, written to the tile pack. A barrier (any triangle may land in any tile); its
//! buffers are a reservation from the budget and spill to the pack when full.
//!
//! * Inputs: the scene cache's triangles, the grid.
//! * Output: `work/tiles.pack`, its header the stage key and the grid.
//! * Key: [`key`], the scene and the grid (cell sizes, tile size, band). A pack with the same
//!   header whose every chunk checksum holds is reused whole.
//! * Progress: triangles binned.

use std::sync::Arc;
use std::time::Instant;
use tessera_artifacts::{GridFrame, Triangle};
use tessera_budget::MemoryBudget;
use tessera_ingest::cache::SceneCache;
use tessera_store::{PackReader, PackWriter};

use crate::grid::MIN_BIN_BUFFER;
use crate::keys::{SceneIdentity, StageKey};
use crate::{BakeError, BakeLayout, Progress};

const STAGE: &str = "bin";
/// Pack kind of the tile pack.
pub const TILES_KIND: &[u8; 8] = b"TSTILES\0";
/// Triangles between two page releases of the scene cache (64 MiB of them), progress reports
/// and interrupt checks.
const RELEASE_EVERY: usize = (64 << 20) / std::mem::size_of::<Triangle>();

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

/// Runs the stage, or reuses the tile pack when it was made from this scene and grid.
pub(crate) fn run(
    cache: &SceneCache,
    frame: &GridFrame,
    budget: &Arc<MemoryBudget>,
    layout: &BakeLayout,
    progress: &Progress,
    interrupted: &dyn Fn() -> bool,
) -> Result<Binned, BakeError> {
    let started = Instant::now();
    let key = key(&SceneIdentity::of(cache.info()), frame);
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
        _ => false,
    };
    let placements = if reused {
        0
    } else {
        bin(cache, frame, &header, budget, layout, progress, interrupted)?
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
    cache: &SceneCache,
    frame: &GridFrame,
    header: &[u8],
    budget: &Arc<MemoryBudget>,
    layout: &BakeLayout,
    progress: &Progress,
    interrupted: &dyn Fn() -> bool,
) -> Result<u64, BakeError> {
    let triangles = cache.triangles();
    progress.stage_start(STAGE, triangles.len() as u64);
    let bin_limit = (budget.total() / 4).clamp(MIN_BIN_BUFFER, 256 << 20);
    let reservation = budget.reserve(bin_limit, "binning buffers")?;
    let mut pack = PackWriter::create(layout.tiles_pack(), TILES_KIND, header)?;
    let mut binner = tessera_tiler::Binner::new(frame, bin_limit as usize);
    let mut spill = |tile: u32, bytes: &[u8]| {
        progress.add_bytes(bytes.len() as u64);
        pack.append(tile, bytes)
    };
    for (i, tri) in triangles.iter().enumerate() {
        binner.add(tri, &mut spill)?;
        if (i + 1) % RELEASE_EVERY == 0 {
            cache.release_pages();
            progress.advance(STAGE, (i + 1) as u64);
            if interrupted() {
                return Err(BakeError::Interrupted);
            }
        }
    }
    let placements = binner.finish(&mut spill)?;
    pack.finish()?;
    cache.release_pages();
    drop(reservation);
    progress.stage_done(STAGE, triangles.len() as u64);
    Ok(placements)
}
