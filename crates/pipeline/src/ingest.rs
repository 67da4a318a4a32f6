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

use std::path::PathBuf;
use tessera_ingest::cache::CacheInfo;

use crate::{BakeError, BakeLayout, Progress, SceneInput};

const STAGE: &str = "ingest";
/// Triangles between two progress reports.
const REPORT_EVERY: u64 = 1 << 20;

/// One file's cached triangles in a scene of several, and where they sit in the scene.
pub(crate) struct ScenePart {
    pub cache: SceneCache,
    /// The file, for messages.
    pub name: String,
    /// Its cache's origin less the scene's: added to its triangles (zero for the part, or
    /// the only part, that holds the scene's lowest corner on every axis).
    pub offset: [f64; 3],
    pub reused: bool,
}

impl ScenePart {
    /// Whether its triangles are the scene's as they are stored (no offset to add).
    pub fn in_place(&self) -> bool {
        self.offset == [0.0; 3]
    }

    /// A stored triangle in the scene's frame: each coordinate moved by the offset in f64 and
    /// rounded to f32 once (a monotonic rounding, so the part's bounds move the same way).
    pub fn placed(&self, t: &tessera_artifacts::Triangle) -> tessera_artifacts::Triangle {
        t.map(|v| [0, 1, 2].map(|k| (f64::from(v[k]) + self.offset[k]) as f32))
    }
}

/// The ingested scene: its files' caches in order, and what they hold together.
pub(crate) struct Scene {
    parts: Vec<ScenePart>,
    info: CacheInfo,
}

impl Scene {
    /// The scene of `parts` in order, each part's offset set from the lowest corner of all.
    fn of(mut parts: Vec<ScenePart>) -> Scene {
        let info = combined(&parts);
        for p in &mut parts {
            let own = p.cache.info().origin;
            p.offset = [0, 1, 2].map(|k| own[k] - info.origin[k]);
        }
        Scene { parts, info }
    }

    /// The scene whose files' caches another process of a distributed bake made (each
    /// verified by its checksums), in order.
    pub fn open_caches(paths: &[PathBuf]) -> Result<Scene, BakeError> {
        let mut parts = Vec::with_capacity(paths.len());
        for path in paths {
            parts.push(ScenePart {
                cache: SceneCache::open(path)?,
                name: path.display().to_string(),
                offset: [0.0; 3],
                reused: true,
            });
        }
        if parts.is_empty() {
            return Err(BakeError::Cluster("no scene cache to bin from".into()));
        }
        Ok(Scene::of(parts))
    }

    /// What the scene holds: for one file its cache's trailer; for several, their triangles
    /// together in the frame of the lowest corner of all.
    pub fn info(&self) -> &CacheInfo {
        &self.info
    }

    pub fn parts(&self) -> &[ScenePart] {
        &self.parts
    }

    /// The first file's cache, for messages about the scene's frame.
    pub fn path(&self) -> &std::path::Path {
        self.parts[0].cache.path()
    }
}

/// The trailer of a scene of `parts` (each part's `offset` set here).
fn combined(parts: &[ScenePart]) -> CacheInfo {
    let first = *parts[0].cache.info();
    if parts.len() == 1 {
        return first;
    }
    let origin = [0, 1, 2].map(|k| {
        parts
            .iter()
            .map(|p| p.cache.info().origin[k])
            .fold(f64::INFINITY, f64::min)
    });
    let mut hash = xxhash_rust::xxh3::Xxh3::new();
    let mut info = CacheInfo {
        origin,
        bounds_min: [f32::INFINITY; 3],
        bounds_max: [f32::NEG_INFINITY; 3],
        triangles: 0,
        degenerate: 0,
        ..first
    };
    for p in parts {
        let i = p.cache.info();
        let offset = [0, 1, 2].map(|k| i.origin[k] - origin[k]);
        for k in 0..3 {
            info.bounds_min[k] =
                info.bounds_min[k].min((f64::from(i.bounds_min[k]) + offset[k]) as f32);
            info.bounds_max[k] =
                info.bounds_max[k].max((f64::from(i.bounds_max[k]) + offset[k]) as f32);
        }
        info.triangles += i.triangles;
        info.degenerate += i.degenerate;
        info.key.size += i.key.size;
        info.key.mtime_ns = info.key.mtime_ns.max(i.key.mtime_ns);
        for v in [i.key.content_hash, i.key.up.code() as u64, i.payload_hash] {
            hash.update(&v.to_le_bytes());
        }
        for v in i.origin {
            hash.update(&v.to_le_bytes());
        }
    }
    info.key.content_hash = hash.digest();
    info.payload_hash = hash.digest();
    info
}

/// The ingested scene.
pub(crate) struct Ingested {
    pub scene: Scene,
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

/// What reading a scene needs besides the scene.
struct Reading<'a> {
    layout: &'a BakeLayout,
    limits: ReadLimits,
    progress: &'a Progress,
    interrupted: &'a (dyn Fn() -> bool + Sync),
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
    let reading = Reading {
        layout,
        limits,
        progress,
        interrupted,
    };
    match scene {
        SceneInput::File { path, up } => read_files(std::slice::from_ref(path), *up, &reading),
        SceneInput::Files { paths, up } => read_files(paths, *up, &reading),
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
            let part = ScenePart {
                cache,
                name: name.clone(),
                offset: [0.0; 3],
                reused: stats.reused,
            };
            Ok(Ingested {
                scene: Scene::of(vec![part]),
                stats,
                name: name.clone(),
                up: UpAxis::Z,
                seconds: 0.0,
            })
        }
    }
}

/// Each scene file into its cache (`work/scene.cache` for one file; one per file in
/// `work/scenes/` for several, whose caches of files no longer listed are removed).
fn read_files(
    paths: &[PathBuf],
    up: Option<UpAxis>,
    reading: &Reading,
) -> Result<Ingested, BakeError> {
    let Reading {
        layout,
        limits,
        progress,
        interrupted,
    } = reading;
    let (progress, interrupted) = (*progress, *interrupted);
    let warn = &mut |e: &IngestError| progress.warn(&format!("scene cache rebuilt: {e}"));
    let many = paths.len() > 1;
    let mut parts = Vec::with_capacity(paths.len());
    let mut stats = IngestStats::default();
    let mut scene_up: Option<(UpAxis, &PathBuf)> = None;
    for path in paths {
        let up = match up {
            Some(u) => u,
            None => SceneFormat::of(path)?.default_up(),
        };
        match scene_up {
            Some((first, first_path)) if first != up => {
                return Err(BakeError::Input(IngestError::Scene {
                    path: path.clone(),
                    message: format!(
                        "its up axis is {up}, {}'s is {first}: a scene's files must share one \
                         (give --up)",
                        first_path.display()
                    ),
                }))
            }
            None => scene_up = Some((up, path)),
            _ => {}
        }
        let shown = path.display().to_string();
        let what = |step: &str| match many {
            true => format!("{step} ({shown})"),
            false => step.to_string(),
        };
        progress.phase(STAGE, &what("hashing the scene file"), 0);
        let key = SourceKey::of_file(path, up, limits.stop())?;
        let scratch = layout.scratch();
        let cache_path = match many {
            true => layout.part_cache(path),
            false => layout.scene_cache(),
        };
        if cache_path.exists() {
            progress.phase(
                STAGE,
                &what("checking the scene cache of an earlier bake"),
                0,
            );
        }
        let (cache, got) = ensure_cache(
            &cache_path,
            key,
            &mut || {
                progress.phase(STAGE, &what("opening the scene (OBJ: its vertex pass)"), 0);
                let source = tessera_ingest::open_scene_with(path, up, &scratch, limits.clone())?;
                progress.phase(STAGE, &what("triangles"), 0);
                Ok(counted(source, progress, interrupted))
            },
            warn,
        )?;
        stats.triangles += got.triangles;
        stats.degenerate += got.degenerate;
        parts.push(ScenePart {
            cache,
            name: shown,
            offset: [0.0; 3],
            reused: got.reused,
        });
    }
    stats.reused = parts.iter().all(|p| p.reused);
    if many {
        let kept: Vec<&std::path::Path> = parts.iter().map(|p| p.cache.path()).collect();
        remove_other_caches(&layout.part_caches(), &kept);
    }
    let scene = Scene::of(parts);
    let name = match paths {
        [one] => one.display().to_string(),
        [first, ..] => format!(
            "{} and {} more scene files",
            first.display(),
            paths.len() - 1
        ),
        [] => unreachable!("a bake of files has at least one"),
    };
    Ok(Ingested {
        scene,
        stats,
        name,
        up: scene_up.map_or(UpAxis::Z, |u| u.0),
        seconds: 0.0,
    })
}

/// Removes the caches in `dir` other than `kept` (files no longer in the scene's list).
fn remove_other_caches(dir: &std::path::Path, kept: &[&std::path::Path]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "cache") && !kept.contains(&path.as_path()) {
            let _ = std::fs::remove_file(&path);
        }
    }
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
    let (paths, up) = match scene {
        SceneInput::File { path, up } => (std::slice::from_ref(path), *up),
        SceneInput::Files { paths, up } => (paths.as_slice(), *up),
        SceneInput::Mesh { .. } => return Vec::new(),
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
    let scratch = layout.scratch();
    let mut named = Vec::new();
    // The files in order, until `max` are named.
    for path in paths {
        let more = max.saturating_sub(named.len());
        let Ok(up) = up.map_or_else(|| SceneFormat::of(path).map(|f| f.default_up()), Ok) else {
            continue;
        };
        if more == 0 {
            break;
        }
        let limits = ReadLimits::new(buffers as usize).with_stop(stop.clone());
        let found = pool.install(|| {
            tessera_ingest::open_scene_with(path, up, &scratch, limits)
                .and_then(|mut source| source.locate(&inside, more))
        });
        let _ = std::fs::remove_dir_all(&scratch);
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        named.extend(found.unwrap_or_default().into_iter().map(|l| {
            let p = up.from_z_up(l.triangle[0]);
            format!("{name} {} at ({}, {}, {})", l.place, p[0], p[1], p[2])
        }));
    }
    named
}
