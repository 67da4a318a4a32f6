//! Stage 1, ingest: the scene (a file or an in-memory mesh) into the scene cache.
//!
//! * Input: [`SceneInput`].
//! * Output: `work/scene.cache` (rebased f32 triangles, their area ids and a checksummed
//!   trailer), mapped.
//! * Key: the cache's own source key (size, content hash, up axis, the key of the config's
//!   area rules; the mtime is kept in its trailer but not compared, so a file written again
//!   with the same bytes keeps its cache), kept in its trailer; a cache made from another
//!   source or with other rules is rebuilt, a corrupt one reported and rebuilt.
//! * Progress: triangles read (the total is not known before the end).
//! * Threads: the stage runs on a pool of the bake's threads, on which the OBJ reader parses
//!   windows of the file; what it parses waits in buffers reserved from the budget.

use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;
use tessera_budget::MemoryBudget;
use tessera_config::BakeConfig;
use tessera_geom::UpAxis;
use tessera_ingest::cache::{
    build_cache_part, ensure_cache, open_split, reuse_cache, write_split, CacheBatch, IngestStats,
    SceneCache, SourceKey, SplitCache,
};
use tessera_ingest::obj::ObjScene;
use tessera_ingest::{
    AreaRules, IngestError, MeshSource, ReadLimits, SceneFormat, SceneSource, Stop, WorldTriangle,
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
    /// Whether the parts are one file's cache in parts (a distributed bake's processes read
    /// it so): then `info` is that file's one cache's.
    split: bool,
}

impl Scene {
    /// The scene of `parts` in order, each part's offset set from the lowest corner of all.
    fn of(mut parts: Vec<ScenePart>) -> Scene {
        let info = combined(&parts);
        for p in &mut parts {
            let own = p.cache.info().origin;
            p.offset = [0, 1, 2].map(|k| own[k] - info.origin[k]);
        }
        Scene {
            parts,
            info,
            split: false,
        }
    }

    /// The scene of one file whose cache is in parts (all on the file's origin: no offsets),
    /// which together are the file's one cache (`split.whole`).
    fn of_split(split: SplitCache, name: &str, reused: bool) -> Scene {
        let parts = split
            .parts
            .into_iter()
            .map(|cache| ScenePart {
                cache,
                name: name.to_string(),
                offset: [0.0; 3],
                reused,
            })
            .collect();
        Scene {
            parts,
            info: split.whole,
            split: true,
        }
    }

    /// Whether this is one file's cache in parts.
    pub fn is_split(&self) -> bool {
        self.split
    }

    /// The scene whose files' caches another process of a distributed bake made (each
    /// verified by its checksums), in order; or, when `paths` is one manifest of a file's
    /// cache in parts (`*.parts`), that file's.
    pub fn open_caches(paths: &[PathBuf]) -> Result<Scene, BakeError> {
        if let [manifest] = paths {
            if manifest.extension().is_some_and(|x| x == "parts") {
                let split = open_split(manifest, None)?.expect("no key to differ from");
                return Ok(Scene::of_split(
                    split,
                    &manifest.display().to_string(),
                    true,
                ));
            }
        }
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

    /// Marks the parts named in `made` as not reused: their caches were made by an earlier
    /// attempt of the same bake (which found a damaged file and started again).
    pub(crate) fn made_before(&mut self, made: &[String]) {
        for part in &mut self.parts {
            part.reused &= !made.contains(&part.name);
        }
    }

    /// The first file's cache, for messages about the scene's frame.
    pub fn path(&self) -> &std::path::Path {
        self.parts[0].cache.path()
    }

    /// The caches another process opens to read this scene ([`Scene::open_caches`]): each
    /// file's, or the manifest of a file's cache in parts.
    pub fn cache_paths(&self, layout: &BakeLayout) -> Vec<PathBuf> {
        match self.split {
            true => vec![layout.split_manifest()],
            false => self
                .parts
                .iter()
                .map(|p| p.cache.path().to_path_buf())
                .collect(),
        }
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

/// The area rules of `config`: its `[[areas]]` patterns, in order.
pub(crate) fn area_rules(config: &BakeConfig) -> AreaRules {
    AreaRules::new(config.areas.iter().map(|a| a.patterns.clone()).collect())
}

/// Runs the stage on a pool of `threads`: opens the cache if it was made from this scene (and
/// `config`'s area rules), else makes it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    scene: &SceneInput,
    config: &BakeConfig,
    layout: &BakeLayout,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    progress: &Progress,
    interrupt: Option<&Arc<AtomicBool>>,
    share: Option<&dyn IngestShare>,
) -> Result<Ingested, BakeError> {
    let started = Instant::now();
    let start = Start::new(config, budget, threads, progress, interrupt)?;
    let interrupted = &|| start.stop.is_raised();
    let mut ingested =
        start.run(|limits| read(scene, layout, limits, progress, interrupted, share))?;
    drop(start);
    let _ = std::fs::remove_dir_all(layout.scratch());
    progress.stage_done(STAGE, ingested.stats.triangles);
    ingested.seconds = started.elapsed().as_secs_f64();
    Ok(ingested)
}

/// What every reading of the stage starts with: the stage announced, the flag that stops the
/// reader, its buffers reserved from the budget, the area rules, and the pool it parses on.
struct Start {
    stop: Stop,
    limits: ReadLimits,
    pool: rayon::ThreadPool,
    _buffers: tessera_budget::Reservation,
}

impl Start {
    fn new(
        config: &BakeConfig,
        budget: &Arc<MemoryBudget>,
        threads: usize,
        progress: &Progress,
        interrupt: Option<&Arc<AtomicBool>>,
    ) -> Result<Start, BakeError> {
        // The reader also looks at the flag between windows of the scene's hash and vertex
        // pass.
        let stop = interrupt.cloned().map_or_else(Stop::default, Stop::on);
        progress.stage_start(STAGE, 0);
        // The reader's parsed windows waiting to be written: a quarter of the budget, as
        // binning (the reader keeps to it down to windows of one line; a budget too small for
        // the bake is refused after ingest, once the grid is known).
        let buffers = (budget.total() / 4).min(crate::grid::STAGE_BUFFER_CAP);
        let reservation = budget.reserve(buffers, "scene reading buffers")?;
        Ok(Start {
            limits: ReadLimits::new(buffers as usize)
                .with_stop(stop.clone())
                .with_areas(area_rules(config)),
            stop,
            pool: crate::error::thread_pool(threads, STAGE)?,
            _buffers: reservation,
        })
    }

    /// Runs `read` on the pool. A raised interrupt flag stops the reading at its next batch
    /// of triangles (as an error of the source, which the cache discards): reported as an
    /// interruption.
    fn run<T: Send>(
        &self,
        read: impl FnOnce(ReadLimits) -> Result<T, BakeError> + Send,
    ) -> Result<T, BakeError> {
        let limits = self.limits.clone();
        self.pool.install(|| read(limits)).map_err(|e| {
            if self.stop.is_raised() {
                BakeError::Interrupted
            } else {
                e
            }
        })
    }
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
    share: Option<&dyn IngestShare>,
) -> Result<Ingested, BakeError> {
    let warn = &mut |e: &IngestError| progress.warn(&format!("scene cache rebuilt: {e}"));
    let reading = Reading {
        layout,
        limits,
        progress,
        interrupted,
    };
    match scene {
        SceneInput::File { path, up } => {
            read_files(std::slice::from_ref(path), *up, &reading, share)
        }
        SceneInput::Files { paths, up } => read_files(paths, *up, &reading, share),
        SceneInput::Mesh {
            name,
            positions,
            triangles,
        } => {
            let key = SourceKey::of_mesh(positions, triangles, UpAxis::Z, reading.limits.areas());
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

/// The ingest of a scene of several files shared with other processes (a distributed bake):
/// each process reads its share of the files into their caches in the shared bake folder.
pub trait IngestShare: Send + Sync {
    /// Processes of the bake, this one included.
    fn ingest_processes(&self) -> u32;
    /// Process 0: process `p` (from 1) reads `files[p]` (each with the scene's up axis `up`)
    /// into their caches.
    fn assign_files(&self, files: &[Vec<PathBuf>], up: UpAxis) -> Result<(), BakeError>;
    /// Process 0: waits until process `p` has read its files; whether each cache was reused.
    fn wait_files(&self, p: u32) -> Result<Vec<bool>, BakeError>;
    /// Process 0: every other process `p` reads the windows `parts[p]` of pass 2 of the OBJ
    /// file `path` (source key `key`, its area rules' key included), whose pass 1 this process
    /// wrote to the bake folder
    /// (`BakeLayout::obj_tables`), into part `p` of its cache (`BakeLayout::split_part`).
    fn assign_split(
        &self,
        path: &std::path::Path,
        key: &SourceKey,
        parts: &[std::ops::Range<usize>],
    ) -> Result<(), BakeError>;
    /// Process 0: waits until process `p` has written its part: the triangles it read, or
    /// the malformed line it found (its number and the message).
    fn wait_split(&self, p: u32) -> Result<Result<u64, (u64, String)>, BakeError>;
}

/// The up axis every file of `paths` has (`up` when given, else each format's own), or the
/// refusal naming two files that differ.
fn scene_up(paths: &[PathBuf], up: Option<UpAxis>) -> Result<UpAxis, BakeError> {
    let mut first: Option<(UpAxis, &PathBuf)> = None;
    for path in paths {
        let this = match up {
            Some(u) => u,
            None => SceneFormat::of(path)?.default_up(),
        };
        match first {
            Some((axis, first_path)) if axis != this => {
                return Err(BakeError::Input(IngestError::Scene {
                    path: path.clone(),
                    message: format!(
                        "its up axis is {this}, {}'s is {axis}: a scene's files must share one \
                         (give --up)",
                        first_path.display()
                    ),
                }))
            }
            None => first = Some((this, path)),
            _ => {}
        }
    }
    Ok(first.map_or(UpAxis::Z, |f| f.0))
}

/// One scene file into its cache at `cache_path` (reused when made from this file), its OBJ
/// vertex tables in `scratch`; `many`: one file of several (its phases name it).
fn read_file(
    path: &std::path::Path,
    up: UpAxis,
    cache_path: &std::path::Path,
    scratch: &std::path::Path,
    many: bool,
    reading: &Reading,
) -> Result<(SceneCache, IngestStats), BakeError> {
    let shown = path.display().to_string();
    let what = |step: &str| match many {
        true => format!("{step} ({shown})"),
        false => step.to_string(),
    };
    reading
        .progress
        .phase(STAGE, &what("hashing the scene file"), 0);
    let key = SourceKey::of_file(path, up, &reading.limits)?;
    cache_file(path, (up, key), cache_path, scratch, many, reading)
}

/// [`read_file`] once the file's key is known.
fn cache_file(
    path: &std::path::Path,
    (up, key): (UpAxis, SourceKey),
    cache_path: &std::path::Path,
    scratch: &std::path::Path,
    many: bool,
    reading: &Reading,
) -> Result<(SceneCache, IngestStats), BakeError> {
    let (limits, progress, interrupted) = (&reading.limits, reading.progress, reading.interrupted);
    let warn = &mut |e: &IngestError| progress.warn(&format!("scene cache rebuilt: {e}"));
    let shown = path.display().to_string();
    let what = |step: &str| match many {
        true => format!("{step} ({shown})"),
        false => step.to_string(),
    };
    if cache_path.exists() {
        progress.phase(
            STAGE,
            &what("checking the scene cache of an earlier bake"),
            0,
        );
    }
    Ok(ensure_cache(
        cache_path,
        key,
        &mut || {
            let opening = match SceneFormat::of(path)? {
                SceneFormat::Obj => "opening the scene (OBJ: its vertex pass)",
                SceneFormat::Gltf => "opening the scene (glTF: its buffers and bounds)",
            };
            progress.phase(STAGE, &what(opening), 0);
            let source = tessera_ingest::open_scene_with(path, up, scratch, limits.clone())?;
            progress.phase(STAGE, &what("triangles"), 0);
            Ok(counted(source, progress, interrupted))
        },
        warn,
    )?)
}

/// A scene file's key, and its cache of an earlier bake when that serves.
type Checked = (SourceKey, Option<(SceneCache, IngestStats)>);

/// Each scene file into its cache (`work/scene.cache` for one file; one per file in
/// `work/scenes/` for several, whose caches of files no longer listed are removed). With
/// `share` (process 0 of a distributed bake) and several files, every process reads a share of
/// them (balanced by file size) and this one opens the others' caches, each checked by its
/// checksums.
fn read_files(
    paths: &[PathBuf],
    up: Option<UpAxis>,
    reading: &Reading,
    share: Option<&dyn IngestShare>,
) -> Result<Ingested, BakeError> {
    let layout = reading.layout;
    let up = scene_up(paths, up)?;
    if let [path] = paths {
        return read_one(path, up, reading, share);
    }
    // Which process reads each file (0: this one).
    let processes = share.map_or(1, |s| s.ingest_processes()).max(1);
    let owner = match (share, processes > 1) {
        (Some(share), true) => {
            let sizes: Vec<u64> = paths
                .iter()
                .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
                .collect();
            let owner = balance(&sizes, processes);
            let files: Vec<Vec<PathBuf>> = (0..processes)
                .map(|p| {
                    paths
                        .iter()
                        .zip(&owner)
                        .filter(|(_, &o)| o == p)
                        .map(|(f, _)| f.clone())
                        .collect()
                })
                .collect();
            share.assign_files(&files, up)?;
            owner
        }
        _ => vec![0; paths.len()],
    };
    // This process's files hashed, and those whose cache of an earlier bake serves checked
    // (each cache's checksums read through), side by side; the others are read below, one at
    // a time, each on the whole pool. Errors are taken in file order.
    let progress = reading.progress;
    let checked: Vec<Result<Option<Checked>, BakeError>> = paths
        .par_iter()
        .zip(&owner)
        .map(|(path, &o)| {
            if o != 0 {
                return Ok(None);
            }
            let shown = path.display();
            progress.phase(STAGE, &format!("hashing the scene file ({shown})"), 0);
            let key = SourceKey::of_file(path, up, &reading.limits)?;
            let cache_path = layout.part_cache(path);
            if !cache_path.exists() {
                return Ok(Some((key, None)));
            }
            progress.phase(
                STAGE,
                &format!("checking the scene cache of an earlier bake ({shown})"),
                0,
            );
            let mut corrupt = false;
            let reused = reuse_cache(&cache_path, key, &mut |e| {
                corrupt = true;
                progress.warn(&format!("scene cache rebuilt: {e}"));
            });
            if corrupt {
                // Told once: the file is read again below.
                let _ = std::fs::remove_file(&cache_path);
            }
            Ok(Some((key, reused)))
        })
        .collect();
    let mut mine = Vec::with_capacity(paths.len());
    for (path, checked) in paths.iter().zip(checked) {
        mine.push(match checked? {
            None => None,
            Some((_, Some(reused))) => Some(reused),
            Some((key, None)) => Some(cache_file(
                path,
                (up, key),
                &layout.part_cache(path),
                &layout.scratch(),
                true,
                reading,
            )?),
        });
    }
    let mut theirs: Vec<std::vec::IntoIter<bool>> = vec![Vec::new().into_iter()];
    for p in 1..processes {
        if owner.contains(&p) {
            let reused = share.expect("files were shared").wait_files(p)?;
            theirs.push(reused.into_iter());
        } else {
            theirs.push(Vec::new().into_iter());
        }
    }
    let mut parts = Vec::with_capacity(paths.len());
    let mut stats = IngestStats::default();
    for ((path, read), &o) in paths.iter().zip(mine).zip(&owner) {
        let (cache, reused) = match read {
            Some((cache, got)) => (cache, got.reused),
            None => (
                SceneCache::open(&layout.part_cache(path))?,
                theirs[o as usize].next().unwrap_or(false),
            ),
        };
        // Another process's areas must be given by the same rules as this one's.
        if cache.info().key.areas != reading.limits.areas().key() {
            return Err(BakeError::Input(IngestError::Cache {
                path: cache.path().to_path_buf(),
                message: "made with other area rules (does every process read the same \
                          config?)"
                    .into(),
            }));
        }
        stats.triangles += cache.info().triangles;
        stats.degenerate += cache.info().degenerate;
        parts.push(ScenePart {
            cache,
            name: path.display().to_string(),
            offset: [0.0; 3],
            reused,
        });
    }
    stats.reused = parts.iter().all(|p| p.reused);
    let kept: Vec<&std::path::Path> = parts.iter().map(|p| p.cache.path()).collect();
    remove_other_caches(&layout.part_caches(), &kept);
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
        up,
        seconds: 0.0,
    })
}

/// A scene of one file: the cache of it that the last bake made, either `work/scene.cache`
/// or the parts of one that a distributed bake's processes read (`work/scene-parts/`),
/// whichever was made from this file; else the file read anew: by this process alone, or,
/// with `share` and other processes, an OBJ file split (process 0 runs pass 1 and shares its
/// tables, then every process reads its part of pass 2: [`read_split`]). A glTF file is read
/// by process 0 alone (its reader decodes buffers and node trees, not windows of text).
fn read_one(
    path: &std::path::Path,
    up: UpAxis,
    reading: &Reading,
    share: Option<&dyn IngestShare>,
) -> Result<Ingested, BakeError> {
    let layout = reading.layout;
    let progress = reading.progress;
    let processes = share.map_or(1, |s| s.ingest_processes());
    let split = match share {
        Some(share) if processes > 1 && SceneFormat::of(path)? == SceneFormat::Obj => Some(share),
        _ => None,
    };
    let name = path.display().to_string();
    progress.phase(STAGE, "hashing the scene file", 0);
    let key = SourceKey::of_file(path, up, &reading.limits)?;
    let warn = &mut |e: &IngestError| progress.warn(&format!("scene cache rebuilt: {e}"));
    let whole = |cache: SceneCache, stats: IngestStats| Ingested {
        scene: Scene::of(vec![ScenePart {
            cache,
            name: name.clone(),
            offset: [0.0; 3],
            reused: stats.reused,
        }]),
        stats,
        name: name.clone(),
        up,
        seconds: 0.0,
    };
    let in_parts = |split: SplitCache, reused: bool| Ingested {
        stats: IngestStats {
            triangles: split.whole.triangles,
            degenerate: split.whole.degenerate,
            reused,
        },
        scene: Scene::of_split(split, &name, reused),
        name: name.clone(),
        up,
        seconds: 0.0,
    };
    // The cache an earlier bake made, in one file or in parts, whatever number of processes
    // made it.
    if layout.split_manifest().exists() {
        progress.phase(STAGE, "checking the scene cache of an earlier bake", 0);
        match open_split(&layout.split_manifest(), Some(key)) {
            Ok(Some(split)) => return Ok(in_parts(split, true)),
            Ok(None) => {}
            Err(e) => warn(&e),
        }
    }
    let _ = std::fs::remove_dir_all(layout.split_cache());
    let scene_cache = layout.scene_cache();
    let Some(share) = split else {
        // Reused or made anew.
        let (cache, stats) = cache_file(
            path,
            (up, key),
            &scene_cache,
            &layout.scratch(),
            false,
            reading,
        )?;
        return Ok(whole(cache, stats));
    };
    if scene_cache.exists() {
        progress.phase(STAGE, "checking the scene cache of an earlier bake", 0);
    }
    if let Some((cache, stats)) = reuse_cache(&scene_cache, key, warn) {
        return Ok(whole(cache, stats));
    }
    let _ = std::fs::remove_file(&scene_cache);
    let split = read_split(path, key, reading, share)?;
    Ok(in_parts(split, false))
}

/// Process 0's part of reading the OBJ file `path` with the other processes: pass 1 here, its
/// tables shared; pass 2's windows cut into one run per process, balanced by the text of the
/// windows with faces; every process writes its run's triangles into its part of the cache;
/// then the parts joined and named in a manifest. The first malformed line in file order is
/// the error, as when one process reads the file.
fn read_split(
    path: &std::path::Path,
    key: SourceKey,
    reading: &Reading,
    share: &dyn IngestShare,
) -> Result<SplitCache, BakeError> {
    let (layout, progress) = (reading.layout, reading.progress);
    let processes = share.ingest_processes();
    let dir = layout.split_cache();
    std::fs::create_dir_all(&dir).map_err(|e| tessera_store::StoreError::io(&dir, e))?;
    progress.phase(STAGE, "opening the scene (OBJ: its vertex pass)", 0);
    let mut scene =
        ObjScene::open_shared(path, key.up, &layout.obj_tables(), reading.limits.clone())?;
    let parts = scene.face_parts(processes);
    share.assign_split(path, &key, &parts)?;
    scene.read_part(parts[0].clone());
    progress.phase(STAGE, "triangles (this process's part)", 0);
    let mut source = counted(Box::new(scene), progress, reading.interrupted);
    build_cache_part(source.as_mut(), key, &layout.split_part(0, processes))?;
    drop(source);
    for p in 1..processes {
        if let Err((line, message)) = share.wait_split(p)? {
            return Err(BakeError::Input(IngestError::Obj {
                path: path.to_path_buf(),
                line,
                message,
            }));
        }
    }
    progress.phase(STAGE, "joining the parts of the scene cache", 0);
    let paths: Vec<PathBuf> = (0..processes)
        .map(|p| layout.split_part(p, processes))
        .collect();
    Ok(write_split(
        &layout.split_manifest(),
        &paths,
        key,
        &path.display().to_string(),
    )?)
}

/// What a process other than 0 reads of a one-file OBJ scene split between processes.
#[derive(Clone, Debug)]
pub struct SplitAssignment {
    /// This process's index (from 1), and how many processes read the file.
    pub process: u32,
    pub parts: u32,
    pub path: PathBuf,
    pub key: SourceKey,
    /// The windows of pass 2 this process reads.
    pub windows: std::ops::Range<usize>,
}

/// Process `assigned.process` of a distributed bake: reads its windows of the OBJ file
/// (with the tables process 0 shared, and `config`'s area rules, which must be those of the
/// assignment's key) into its part of the file's cache; the triangles read.
pub(crate) fn read_split_for_peer(
    assigned: &SplitAssignment,
    config: &BakeConfig,
    layout: &BakeLayout,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    progress: &Progress,
    interrupt: Option<&Arc<AtomicBool>>,
) -> Result<u64, BakeError> {
    let start = Start::new(config, budget, threads, progress, interrupt)?;
    let interrupted = &|| start.stop.is_raised();
    let key = assigned.key;
    let read = start.run(|limits| {
        let mut scene =
            ObjScene::open_tables(&assigned.path, key.up, &layout.obj_tables(), limits)?;
        scene.read_part(assigned.windows.clone());
        let mut source = counted(Box::new(scene), progress, interrupted);
        let out = layout.split_part(assigned.process, assigned.parts);
        let (stats, _) = build_cache_part(source.as_mut(), key, &out)?;
        Ok(stats.triangles + stats.degenerate)
    })?;
    progress.stage_done(STAGE, read);
    Ok(read)
}

/// The process of each file of `sizes` among `processes`: the largest files first, each to the
/// process with the least bytes so far (the lowest index on a tie). The same every time.
fn balance(sizes: &[u64], processes: u32) -> Vec<u32> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(sizes[i]), i));
    let mut load = vec![0u64; processes.max(1) as usize];
    let mut owner = vec![0u32; sizes.len()];
    for i in order {
        let p = (0..load.len()).min_by_key(|&p| (load[p], p)).unwrap_or(0);
        load[p] += sizes[i].max(1);
        owner[i] = p as u32;
    }
    owner
}

/// Process `p` (from 1) of a distributed bake: reads `files` (with the scene's up axis and
/// `config`'s area rules) into their caches in the shared bake folder, its OBJ vertex tables
/// in a scratch folder of its own; whether each cache was reused.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_files_for_peer(
    files: &[PathBuf],
    up: UpAxis,
    p: u32,
    config: &BakeConfig,
    layout: &BakeLayout,
    budget: &Arc<MemoryBudget>,
    threads: usize,
    progress: &Progress,
    interrupt: Option<&Arc<AtomicBool>>,
) -> Result<Vec<bool>, BakeError> {
    let start = Start::new(config, budget, threads, progress, interrupt)?;
    let interrupted = &|| start.stop.is_raised();
    let scratch = layout.scratch().join(format!("process-{p}"));
    let read = start.run(|limits| {
        let reading = Reading {
            layout,
            limits,
            progress,
            interrupted,
        };
        files
            .iter()
            .map(|f| {
                read_file(f, up, &layout.part_cache(f), &scratch, true, &reading)
                    .map(|(_, got)| got.reused)
            })
            .collect::<Result<Vec<bool>, BakeError>>()
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let reused = read?;
    progress.stage_done(STAGE, files.len() as u64);
    Ok(reused)
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
    fn areas_key(&self) -> Option<u64> {
        self.inner.areas_key()
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
