//! Stage 1, ingest: the scene (a file or an in-memory mesh) into the scene cache.
//!
//! * Input: [`SceneInput`].
//! * Output: `work/scene.cache` (rebased f32 triangles and a checksummed trailer), mapped.
//! * Key: the cache's own source key (size, mtime, content hash, up axis), kept in its
//!   trailer; a cache made from another source is rebuilt, a corrupt one reported and rebuilt.
//! * Progress: triangles read (the total is not known before the end).
//! * Threads: the stage runs on a pool of the bake's threads, on which the OBJ reader parses
//!   windows of the file; what it parses waits in buffers reserved from the budget.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;
use tessera_budget::MemoryBudget;
use tessera_geom::UpAxis;
use tessera_ingest::cache::{ensure_cache, CacheBatch, IngestStats, SceneCache, SourceKey};
use tessera_ingest::{
    IngestError, MeshSource, ReadLimits, SceneFormat, SceneSource, Stop, WorldTriangle,
};

use crate::{BakeError, BakeLayout, Progress, SceneInput};

const STAGE: &str = "ingest";
/// Triangles between two progress reports.
const REPORT_EVERY: u64 = 1 << 20;

/// The ingested scene.
pub(crate) struct Ingested {
    pub cache: SceneCache,
    pub stats: IngestStats,
    /// The scene's name for messages and the summary.
    pub name: String,
    pub up: UpAxis,
    pub seconds: f64,
}

/// Runs the stage on a pool of `threads`: opens the cache if it was made from this scene, else
/// makes it.
pub(crate) fn run(
    scene: &SceneInput,
    layout: &BakeLayout,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    progress: &Progress,
    interrupt: Option<&Arc<AtomicBool>>,
) -> Result<Ingested, BakeError> {
    let started = Instant::now();
    // The reader also looks at the flag between windows of the scene's hash and vertex pass.
    let stop = interrupt.cloned().map_or_else(Stop::default, Stop::on);
    let interrupted = &|| stop.is_raised();
    progress.stage_start(STAGE, 0);
    // The reader's parsed windows waiting to be written: a quarter of the budget, as binning
    // (the reader keeps to it down to windows of one line; a budget too small for the bake is
    // refused after ingest, once the grid is known).
    let buffers = (budget.total() / 4).min(crate::grid::STAGE_BUFFER_CAP);
    let reservation = budget.reserve(buffers, "scene reading buffers")?;
    let limits = ReadLimits::new(buffers as usize).with_stop(stop.clone());
    let pool = crate::error::thread_pool(threads, STAGE)?;
    // A raised interrupt flag stops the reading at its next batch of triangles (as an error
    // of the source, which the cache discards): reported as an interruption.
    let mut ingested = pool
        .install(|| read(scene, layout, limits, progress, interrupted))
        .map_err(|e| {
            if interrupted() {
                BakeError::Interrupted
            } else {
                e
            }
        })?;
    drop(reservation);
    let _ = std::fs::remove_dir_all(layout.scratch());
    progress.stage_done(STAGE, ingested.stats.triangles);
    ingested.seconds = started.elapsed().as_secs_f64();
    Ok(ingested)
}

/// The stage's work, on the pool.
fn read(
    scene: &SceneInput,
    layout: &BakeLayout,
    limits: ReadLimits,
    progress: &Progress,
    interrupted: &(dyn Fn() -> bool + Sync),
) -> Result<Ingested, BakeError> {
    let warn = &mut |e: &IngestError| progress.warn(&format!("scene cache rebuilt: {e}"));
    let (cache, stats, name, up) = match scene {
        SceneInput::File { path, up } => {
            let up = match up {
                Some(u) => *u,
                None => SceneFormat::of(path)?.default_up(),
            };
            progress.phase(STAGE, "hashing the scene file", 0);
            let key = SourceKey::of_file(path, up, limits.stop())?;
            let scratch = layout.scratch();
            if layout.scene_cache().exists() {
                progress.phase(STAGE, "checking the scene cache of an earlier bake", 0);
            }
            let (cache, stats) = ensure_cache(
                &layout.scene_cache(),
                key,
                &mut || {
                    progress.phase(STAGE, "opening the scene (OBJ: its vertex pass)", 0);
                    let source =
                        tessera_ingest::open_scene_with(path, up, &scratch, limits.clone())?;
                    progress.phase(STAGE, "triangles", 0);
                    Ok(counted(source, progress, interrupted))
                },
                warn,
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
                    let source = Box::new(MeshSource {
                        name: name.clone(),
                        positions,
                        triangles,
                    });
                    Ok(counted(source, progress, interrupted))
                },
                warn,
            )?;
            (cache, stats, name.clone(), UpAxis::Z)
        }
    };
    Ok(Ingested {
        cache,
        stats,
        name,
        up,
        seconds: 0.0,
    })
}

/// A scene source that reports the triangles it has read, and stops when interrupted.
struct Counted<'s> {
    inner: Box<dyn SceneSource + 's>,
    progress: Progress,
    interrupted: &'s (dyn Fn() -> bool + Sync),
}

fn counted<'s>(
    inner: Box<dyn SceneSource + 's>,
    progress: &Progress,
    interrupted: &'s (dyn Fn() -> bool + Sync),
) -> Box<dyn SceneSource + 's> {
    Box::new(Counted {
        inner,
        progress: progress.clone(),
        interrupted,
    })
}

/// The error that stops a source when the bake is interrupted ([`run`] reports it as such).
fn stop_reading() -> IngestError {
    IngestError::Cache {
        path: "scene".into(),
        message: "interrupted".into(),
    }
}

/// Counts `more` triangles read; reports every [`REPORT_EVERY`].
fn report(progress: &Progress, read: &mut u64, more: u64) {
    let before = *read;
    *read += more;
    if *read / REPORT_EVERY > before / REPORT_EVERY {
        progress.advance(STAGE, *read);
    }
}

impl SceneSource for Counted<'_> {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn bounds(&self) -> tessera_geom::WorldBounds {
        self.inner.bounds()
    }
    fn for_each_triangle(
        &mut self,
        emit: &mut dyn FnMut(WorldTriangle) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        let mut read = 0u64;
        let (progress, interrupted) = (&self.progress, self.interrupted);
        self.inner.for_each_triangle(&mut |t| {
            report(progress, &mut read, 1);
            if read.is_multiple_of(REPORT_EVERY) && interrupted() {
                return Err(stop_reading());
            }
            emit(t)
        })
    }
    fn for_each_cache_batch(
        &mut self,
        origin: [f64; 3],
        emit: &mut dyn FnMut(CacheBatch) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        let mut read = 0u64;
        let (progress, interrupted) = (&self.progress, self.interrupted);
        self.inner.for_each_cache_batch(origin, &mut |batch| {
            report(progress, &mut read, batch.read());
            if interrupted() {
                return Err(stop_reading());
            }
            emit(batch)
        })
    }
}

/// Up to `max` triangles of the scene whose plan centre lies in one of `rects` (Z-up world
/// `[x0, y0, x1, y1]`), each as `FILE line N at (x, y, z)` (a triangle's first corner in the
/// scene's own axes; glTF: its number in file order), for a warning. Reads the scene again,
/// on `threads` and within the budget as ingest does: only for the rare warning that needs
/// it. Nothing when it cannot (an in-memory scene, a read that fails or is stopped, no room
/// in the budget).
pub(crate) fn locate(
    scene: &SceneInput,
    layout: &BakeLayout,
    (budget, threads): (&Arc<MemoryBudget>, usize),
    rects: &[[f64; 4]],
    max: usize,
    interrupt: Option<&Arc<AtomicBool>>,
) -> Vec<String> {
    let SceneInput::File { path, up } = scene else {
        return Vec::new();
    };
    let Ok(up) = up.map_or_else(|| SceneFormat::of(path).map(|f| f.default_up()), Ok) else {
        return Vec::new();
    };
    let inside = |t: &WorldTriangle| {
        let (x, y) = (
            (t[0][0] + t[1][0] + t[2][0]) / 3.0,
            (t[0][1] + t[1][1] + t[2][1]) / 3.0,
        );
        rects
            .iter()
            .any(|r| x >= r[0] && x <= r[2] && y >= r[1] && y <= r[3])
    };
    let stop = interrupt.cloned().map_or_else(Stop::default, Stop::on);
    let buffers = (budget.total() / 4).min(crate::grid::STAGE_BUFFER_CAP);
    let (Ok(_reservation), Ok(pool)) = (
        budget.reserve(buffers, "scene reading buffers"),
        crate::error::thread_pool(threads, STAGE),
    ) else {
        return Vec::new();
    };
    let limits = ReadLimits::new(buffers as usize).with_stop(stop);
    let scratch = layout.scratch();
    let found = pool.install(|| {
        tessera_ingest::open_scene_with(path, up, &scratch, limits)
            .and_then(|mut source| source.locate(&inside, max))
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    found
        .unwrap_or_default()
        .into_iter()
        .map(|l| {
            let p = up.from_z_up(l.triangle[0]);
            format!("{name} {} at ({}, {}, {})", l.place, p[0], p[1], p[2])
        })
        .collect()
}
