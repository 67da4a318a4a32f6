//! Scene ingest: source files in, the scene cache out.
//!
//! * [`obj`]: Wavefront OBJ streamed from a memory map in two passes (vertices into a
//!   memory-mapped vertex table in the scratch folder, then faces), never read into a `String`.
//!   Each pass parses windows of the map (cut at line boundaries) on the current rayon pool and
//!   takes their results in file order, within the memory bound of [`ReadLimits`].
//! * [`gltf_scene`]: glTF 2.0 (`.gltf` + `.bin`, `.glb`): every triangle primitive, node
//!   transforms composed in f64 down the scene tree.
//! * [`cache`]: the scene cache, a versioned, checksummed file of rebased f32 triangles and
//!   their area ids that the tiler memory-maps; a second bake of the same input (same size,
//!   mtime, content hash, up axis and area rules) reuses it.
//! * [`areas`]: area ids from scene names ([`AreaRules`], glob patterns), given to each
//!   triangle by the readers.
//! * [`fuzzing`]: the readers on arbitrary bytes, shared by the fuzz targets (`fuzz/`) and the
//!   regression tests that replay what they found.
//!
//! Coordinates are read as f64, converted to Z-up once ([`UpAxis`]) and rebased on the world
//! origin (the minimum of the scene's vertices) before narrowing to f32, by the readers
//! ([`cache::CacheBatch`], possibly on several threads) for the cache to write in file order.
//!
//! `unsafe` here is limited to the functions that map files (`memmap2::Mmap::map`) and advise
//! the kernel to drop their pages, each allowed by name (the workspace denies `unsafe_code`).
//! A mapped file must not be truncated by another process while it is mapped: tessera maps
//! its inputs read-only (README.md states the contract for users) and its own scratch and
//! cache files, which nothing else writes and which are replaced only by rename.

pub mod areas;
pub mod cache;
pub mod fuzzing;
pub mod gltf_scene;
mod lines;
pub mod obj;
mod pages;
mod windows;

pub use areas::AreaRules;
use cache::CacheBatch;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
pub use tessera_geom::{UpAxis, WorldBounds};

/// A scene that cannot be ingested. Every variant names the file, and the line (OBJ) or the
/// accessor or part (glTF) at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IngestError {
    #[error("{path}:{line}: {message}")]
    Obj {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: glTF {part}: {message}")]
    Gltf {
        path: PathBuf,
        part: String,
        message: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: unsupported scene format (expected .obj, .gltf or .glb)")]
    Format { path: PathBuf },
    #[error(
        "{path}: the scene is empty: no triangle with a surface ({degenerate} degenerate skipped)"
    )]
    Empty { path: PathBuf, degenerate: u64 },
    #[error(transparent)]
    Store(#[from] tessera_store::StoreError),
    #[error("{path}: {message}")]
    Cache { path: PathBuf, message: String },
    /// The reader's [`Stop`] was raised: it stopped at its next window.
    #[error("{path}: stopped while reading")]
    Stopped { path: PathBuf },
    /// A file that cannot join the others of a scene of several (another up axis).
    #[error("{path}: {message}")]
    Scene { path: PathBuf, message: String },
}

impl IngestError {
    /// Whether this is the machine failing (a full disk, a read-only or over-quota file
    /// system, a damaged cache) rather than the scene being unreadable or malformed.
    pub fn is_io_failure(&self) -> bool {
        use std::io::ErrorKind::*;
        match self {
            IngestError::Store(_) | IngestError::Cache { .. } => true,
            IngestError::Io { source, .. } => matches!(
                source.kind(),
                StorageFull | QuotaExceeded | WriteZero | ReadOnlyFilesystem | FileTooLarge
            ),
            _ => false,
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> IngestError {
        IngestError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// One world-space (f64, Z-up) triangle.
pub type WorldTriangle = [[f64; 3]; 3];

/// A triangle found by [`SceneSource::locate`]: where the file has it (`line 12`, `triangle
/// 7`) and its corners (Z-up world coordinates).
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub place: String,
    pub triangle: WorldTriangle,
}

/// A scene being read: first its vertex bounds (which fix the world origin), then its triangles
/// in file order.
pub trait SceneSource {
    /// Where the scene comes from (for messages).
    fn name(&self) -> String;
    /// Bounds of every vertex, Z-up world coordinates.
    fn bounds(&self) -> WorldBounds;
    /// Calls `emit` for every triangle in file order (polygons fan-triangulated).
    fn for_each_triangle(
        &mut self,
        emit: &mut dyn FnMut(WorldTriangle) -> Result<(), IngestError>,
    ) -> Result<(), IngestError>;
    /// Up to `max` triangles for which `inside` holds, in file order, each with where the
    /// file has it (messages about a few triangles, such as outliers). By default the
    /// triangle's number in file order; OBJ gives its face's line.
    fn locate(
        &mut self,
        inside: &(dyn Fn(&WorldTriangle) -> bool + Sync),
        max: usize,
    ) -> Result<Vec<Located>, IngestError> {
        let (mut found, mut n) = (Vec::new(), 0u64);
        self.for_each_triangle(&mut |triangle| {
            n += 1;
            if found.len() < max && inside(&triangle) {
                found.push(Located {
                    place: format!("triangle {n}"),
                    triangle,
                });
            }
            Ok(())
        })?;
        Ok(found)
    }
    /// Every triangle in file order made ready for the scene cache, rebased on `origin`
    /// ([`CacheBatch::push`]) with its area, in batches that `emit` receives in file order on
    /// the calling thread. A source may fill batches on the threads of the current rayon pool
    /// (OBJ does); by default they are filled here from [`SceneSource::for_each_triangle`],
    /// every triangle area 0.
    fn for_each_cache_batch(
        &mut self,
        origin: [f64; 3],
        emit: &mut dyn FnMut(CacheBatch) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        let mut batch = CacheBatch::default();
        self.for_each_triangle(&mut |t| {
            batch.push(origin, t, 0);
            if batch.byte_len() >= CacheBatch::FULL {
                emit(std::mem::take(&mut batch))?;
            }
            Ok(())
        })?;
        emit(batch)
    }
    /// The key of the area rules the source gives areas by ([`AreaRules::key`]); `None` for
    /// a source without names, whose triangles are area 0 under any rules (the default).
    /// A cache is refused a [`cache::SourceKey`] that names other rules.
    fn areas_key(&self) -> Option<u64> {
        None
    }
}

/// A flag a caller raises to stop a reader (an interrupted bake): readers look at it between
/// windows of their input, so a stop takes effect within one window.
#[derive(Clone, Default)]
pub struct Stop(Option<Arc<AtomicBool>>);

impl Stop {
    /// Stops when `flag` is raised.
    pub fn on(flag: Arc<AtomicBool>) -> Stop {
        Stop(Some(flag))
    }

    pub fn is_raised(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// An error naming `path` when raised.
    pub(crate) fn check(&self, path: &Path) -> Result<(), IngestError> {
        if self.is_raised() {
            return Err(IngestError::Stopped {
                path: path.to_path_buf(),
            });
        }
        Ok(())
    }
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Stop({})",
            if self.is_raised() { "raised" } else { "down" }
        )
    }
}

impl PartialEq for Stop {
    fn eq(&self, other: &Stop) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        }
    }
}
impl Eq for Stop {}

/// What a reader may hold while it reads, beyond its memory maps: the parsed results of its
/// windows (OBJ) waiting to be written. The threads are those of the current rayon pool.
/// Also how many triangles a glTF scene may make by instancing its meshes, the flag that
/// stops it, and the area rules the readers give triangles their areas by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    buffer_bytes: usize,
    /// The smallest window of text [bytes]; tests make it tiny to cut everywhere.
    min_window: usize,
    instanced_triangles: u64,
    stop: Stop,
    areas: AreaRules,
}

impl ReadLimits {
    /// The bound used when none is given [bytes].
    pub const DEFAULT_BUFFER_BYTES: usize = 64 << 20;

    /// The most triangles a glTF scene may make by instancing when none is given: 2^32
    /// (4.3 billion), counting the triangles of every instance of a mesh after its first.
    ///
    /// A mesh's first instance is read from triangles its file holds (its accessors are
    /// checked against their buffers before counting), which cost what an OBJ file of that size
    /// costs and are not limited, so a scene that instances nothing is never refused. Its other
    /// instances are copies a small file can multiply without bound: 100 000 nodes each
    /// instancing a 100 000-triangle mesh make 10^10 triangles (360 GB of scene cache, at 36
    /// bytes each) from a few MB. Nothing after ingest indexes triangles with 32 bits (the
    /// cache, its statistics and binning count them in u64), so the bound is one of scale,
    /// not of type: 2^32 triangles are 155 GB of scene cache, 176 times the largest world
    /// measured (24.4 M triangles in `benches/RESULTS-scale.md`, baked at 7.5 s per million
    /// triangles on 2 cores: about 9 hours for 2^32), and the example above is refused 2.3
    /// times over. A caller baking larger instanced scenes raises it
    /// ([`ReadLimits::with_instanced_triangles`]).
    pub const DEFAULT_INSTANCED_TRIANGLES: u64 = 1 << 32;

    /// At most `buffer_bytes` of parsed results held at once (a window is never smaller than
    /// one logical line, nor than 16 KiB: a tiny bound is exceeded by that much).
    pub fn new(buffer_bytes: usize) -> ReadLimits {
        ReadLimits {
            buffer_bytes,
            min_window: windows::MIN_WINDOW,
            instanced_triangles: ReadLimits::DEFAULT_INSTANCED_TRIANGLES,
            stop: Stop::default(),
            areas: AreaRules::default(),
        }
    }

    /// Readers give each triangle its area by `areas` (by default none: every triangle area
    /// 0), and scene keys made with these limits name them ([`cache::SourceKey::of_file`]).
    pub fn with_areas(mut self, areas: AreaRules) -> ReadLimits {
        self.areas = areas;
        self
    }

    pub fn areas(&self) -> &AreaRules {
        &self.areas
    }

    /// Readers stop at their next window once `stop` is raised ([`IngestError::Stopped`]).
    pub fn with_stop(mut self, stop: Stop) -> ReadLimits {
        self.stop = stop;
        self
    }

    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    pub fn buffer_bytes(&self) -> usize {
        self.buffer_bytes
    }

    /// A glTF scene whose instances (after the first of each mesh) make more than
    /// `triangles` triangles is refused before any vertex is read
    /// ([`ReadLimits::DEFAULT_INSTANCED_TRIANGLES`] says why the default is what it is).
    pub fn with_instanced_triangles(mut self, triangles: u64) -> ReadLimits {
        self.instanced_triangles = triangles;
        self
    }

    pub fn instanced_triangles(&self) -> u64 {
        self.instanced_triangles
    }

    /// Windows as small as `min_window` bytes (tests: cut the text everywhere).
    #[cfg(test)]
    pub(crate) fn with_min_window(mut self, min_window: usize) -> ReadLimits {
        self.min_window = min_window;
        self
    }
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits::new(ReadLimits::DEFAULT_BUFFER_BYTES)
    }
}

/// An in-memory mesh (the generated demo world, tests). Positions are Z-up world coordinates.
/// It names nothing: every triangle is area 0.
pub struct MeshSource<'a> {
    pub name: String,
    pub positions: &'a [[f64; 3]],
    pub triangles: &'a [[u32; 3]],
}

impl SceneSource for MeshSource<'_> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn bounds(&self) -> WorldBounds {
        let mut b = WorldBounds::EMPTY;
        for &p in self.positions {
            b.grow(p);
        }
        b
    }
    fn for_each_triangle(
        &mut self,
        emit: &mut dyn FnMut(WorldTriangle) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        for (i, t) in self.triangles.iter().enumerate() {
            let get = |k: u32| {
                self.positions
                    .get(k as usize)
                    .copied()
                    .ok_or_else(|| IngestError::Cache {
                        path: PathBuf::from(&self.name),
                        message: format!("triangle {i}: vertex index {k} out of range"),
                    })
            };
            emit([get(t[0])?, get(t[1])?, get(t[2])?])?;
        }
        Ok(())
    }
}

/// The scene formats tessera reads, by file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneFormat {
    Obj,
    Gltf,
}

impl SceneFormat {
    pub fn of(path: &Path) -> Result<SceneFormat, IngestError> {
        match path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .as_deref()
        {
            Some("obj") => Ok(SceneFormat::Obj),
            Some("gltf") | Some("glb") => Ok(SceneFormat::Gltf),
            _ => Err(IngestError::Format {
                path: path.to_path_buf(),
            }),
        }
    }

    /// The up axis a file of this format has unless told otherwise: glTF is Y-up by
    /// specification; OBJ has no convention, and tessera (like the seeds) assumes Z-up.
    pub fn default_up(self) -> UpAxis {
        match self {
            SceneFormat::Obj => UpAxis::Z,
            SceneFormat::Gltf => UpAxis::Y,
        }
    }
}

/// Opens a scene file as a [`SceneSource`]. `scratch` is a folder for temporary files.
pub fn open_scene(
    path: &Path,
    up: UpAxis,
    scratch: &Path,
) -> Result<Box<dyn SceneSource>, IngestError> {
    open_scene_with(path, up, scratch, ReadLimits::default())
}

/// [`open_scene`] within `limits`, areas given by their rules.
pub fn open_scene_with(
    path: &Path,
    up: UpAxis,
    scratch: &Path,
    limits: ReadLimits,
) -> Result<Box<dyn SceneSource>, IngestError> {
    match SceneFormat::of(path)? {
        SceneFormat::Obj => Ok(Box::new(obj::ObjScene::open_with(
            path, up, scratch, limits,
        )?)),
        SceneFormat::Gltf => Ok(Box::new(gltf_scene::GltfScene::open_with(
            path, up, limits,
        )?)),
    }
}
