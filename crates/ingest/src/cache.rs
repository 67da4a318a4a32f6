//! The scene cache: the scene's triangles, Z-up, rebased on the world origin, as f32.
//!
//! ```text
//! triangles  [f32; 9] x N, little-endian, from byte 0 (so the memory map is aligned)
//! areas      u8 x N: each triangle's area id (`areas`), in triangle order
//! padding    zeros up to a multiple of 8 bytes
//! trailer    TRAILER_LEN bytes: magic, version, source key, origin, bounds, counts,
//!            xxh3 of the payload (triangles, areas, padding), xxh3 of the trailer itself
//! ```
//!
//! The trailer goes last so the file is written in one sequential pass (the areas wait in
//! memory, or in a temporary file beside the cache once they are many, until the triangles are
//! written). A cache whose key matches (input size, content hash, up axis, area rules: the
//! mtime is recorded but not compared) is reused; one that fails its checksums is reported and
//! rebuilt.
//!
//! A distributed bake may write one file's cache in parts, one per process, each a cache of
//! its own (its trailer: the file's key, the scene's origin, its own counts and checksum),
//! and then a manifest that names them ([`write_split`], [`open_split`]). The parts are the
//! one cache a single process writes, cut: the manifest keeps that cache's trailer, whose
//! payload checksum is taken over the parts' triangles end to end, then their areas end to
//! end, then the one cache's padding.

use crate::{AreaRules, IngestError, ReadLimits, SceneSource, WorldTriangle};
use memmap2::Mmap;
use std::fs::File;
use std::path::{Path, PathBuf};
use tessera_geom::{is_degenerate, Triangle, UpAxis, WorldBounds};
use tessera_store::AtomicFile;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

const MAGIC: &[u8; 8] = b"TSSCENE\0";
/// Bumped whenever the layout or the meaning of the cache changes.
pub const VERSION: u32 = 3;

/// The grid the origin a cache is rebased on snaps to [m], on every axis.
pub const ORIGIN_STEP: f64 = 32.0;

/// The origin a cache of a scene whose lowest corner is `min` is rebased on: the corner of the
/// [`ORIGIN_STEP`] grid at or below it. A change that moves the lowest corner a little (a
/// building added at the edge of a district file, a lower basement) then leaves the origin,
/// and so every other triangle's stored coordinates and the tile grid, as they were, which
/// keeps the rest of a rebake's tiles unchanged; the grid starts at most a step of empty space
/// below the scene.
pub fn origin_below(min: [f64; 3]) -> [f64; 3] {
    min.map(|v| (v / ORIGIN_STEP).floor() * ORIGIN_STEP)
}
const TRAILER_LEN: usize = 8 + 4 + 4 + 8 * 4 + 8 * 3 + 4 * 6 + 8 * 4;
const TRIANGLE_LEN: u64 = std::mem::size_of::<Triangle>() as u64;

/// Bytes before the trailer of a cache of `triangles`: the triangles, their areas, and the
/// padding that makes it a multiple of 8.
fn payload_len(triangles: u64) -> u64 {
    (triangles * (TRIANGLE_LEN + 1)).next_multiple_of(8)
}

/// What a cache was built from: a cache is reused only for an equal key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceKey {
    pub size: u64,
    pub mtime_ns: u64,
    pub content_hash: u64,
    pub up: UpAxis,
    /// The key of the area rules the triangles' areas were given by ([`AreaRules::key`]).
    pub areas: u64,
}

impl SourceKey {
    /// Whether a cache built from `self` serves an input of key `other`: the same bytes (size
    /// and content hash), up axis and area rules. The mtime is left out: a file written again
    /// with the same bytes (a re-export, a checkout, a copy) is the same scene, and every bake
    /// hashes its content anyway.
    pub fn same_input(&self, other: &SourceKey) -> bool {
        (self.size, self.content_hash, self.up, self.areas)
            == (other.size, other.content_hash, other.up, other.areas)
    }

    /// The key of a scene file: its size, mtime and a hash of its bytes (and of the external
    /// buffers a `.gltf` names): xxh3 over the xxh3 of each 1 MiB piece, the pieces hashed in
    /// parallel on the current thread pool; and the key of `limits`' area rules. A raised stop
    /// flag of `limits` ends it at the next 64 MiB.
    ///
    /// Only buffer files the glTF reader would read count: regular files at relative paths
    /// inside the scene's folder. Any other URI (`/etc/passwd`, `../x.bin`, a missing file, a
    /// device) is left out here and refused by the reader, which names the scene and the
    /// buffer; hashing it first would read what the reader refuses to, and fail without
    /// naming either.
    #[allow(unsafe_code)] // maps the input file read-only to hash it: see the SAFETY comment inside
    pub fn of_file(path: &Path, up: UpAxis, limits: &ReadLimits) -> Result<SourceKey, IngestError> {
        let stop = limits.stop();
        let mut files = vec![path.to_path_buf()];
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gltf"))
        {
            let text = std::fs::read(path).map_err(|e| IngestError::io(path, e))?;
            if let Ok(json) = serde_json::from_slice::<serde_json::Value>(&text) {
                for b in json
                    .get("buffers")
                    .and_then(|b| b.as_array())
                    .into_iter()
                    .flatten()
                {
                    let Some(uri) = b.get("uri").and_then(|u| u.as_str()) else {
                        continue;
                    };
                    if uri.starts_with("data:") {
                        continue;
                    }
                    let base = path.parent().unwrap_or(Path::new("."));
                    if let Some(file) = crate::gltf_scene::buffer_file(base, uri) {
                        if std::fs::metadata(&file).is_ok_and(|m| m.is_file()) {
                            files.push(file);
                        }
                    }
                }
            }
        }
        let mut key = SourceKey {
            size: 0,
            mtime_ns: 0,
            content_hash: 0,
            up,
            areas: limits.areas().key(),
        };
        let mut hasher = Xxh3::new();
        for f in &files {
            let file = File::open(f).map_err(|e| IngestError::io(f, e))?;
            let meta = file.metadata().map_err(|e| IngestError::io(f, e))?;
            if !meta.is_file() {
                // A folder opens, then fails to map with "No such device".
                return Err(IngestError::io(
                    f,
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "not a regular file (a folder?): give the scene file itself",
                    ),
                ));
            }
            key.size += meta.len();
            key.mtime_ns = key.mtime_ns.max(mtime_ns(&meta));
            if meta.len() > 0 {
                // SAFETY: read-only map of an input file nobody modifies during the bake.
                let map = unsafe { Mmap::map(&file) }.map_err(|e| IngestError::io(f, e))?;
                // A window at a time, its pieces in parallel, released behind: an input
                // larger than the budget is never resident all at once.
                crate::pages::hash_pieces_released(&map, map.len(), &mut hasher, &|| {
                    stop.check(f)
                })?;
            }
        }
        key.content_hash = hasher.digest();
        Ok(key)
    }

    /// The key of an in-memory mesh (no file: size and mtime are zero) read for a bake with
    /// `areas` (a mesh names nothing, so its triangles are area 0 whatever the rules; the key
    /// names them all the same, as every scene's does).
    pub fn of_mesh(
        positions: &[[f64; 3]],
        triangles: &[[u32; 3]],
        up: UpAxis,
        areas: &AreaRules,
    ) -> SourceKey {
        let mut h = Xxh3::new();
        for p in positions {
            for c in p {
                h.update(&c.to_le_bytes());
            }
        }
        for t in triangles {
            for i in t {
                h.update(&i.to_le_bytes());
            }
        }
        SourceKey {
            size: 0,
            mtime_ns: 0,
            content_hash: h.digest(),
            up,
            areas: areas.key(),
        }
    }
}

/// A file's modification time [ns since the epoch] (0 when the system does not say).
fn mtime_ns(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// A file's size and modification time: what tells, without reading it, that a file is the
/// one an earlier reading saw.
pub(crate) fn size_and_mtime(path: &Path) -> Result<(u64, u64), IngestError> {
    let meta = std::fs::metadata(path).map_err(|e| IngestError::io(path, e))?;
    Ok((meta.len(), mtime_ns(&meta)))
}

/// The trailer's contents.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacheInfo {
    pub key: SourceKey,
    /// World coordinates (Z-up) of the rebased origin.
    pub origin: [f64; 3],
    /// Bounds of the stored triangles, rebased [m].
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    pub triangles: u64,
    /// Triangles skipped at ingest because they had no area.
    pub degenerate: u64,
    pub payload_hash: u64,
}

impl CacheInfo {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(TRAILER_LEN);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&(self.key.up.code() as u32).to_le_bytes());
        for v in [
            self.key.size,
            self.key.mtime_ns,
            self.key.content_hash,
            self.triangles,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for v in self.origin {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for v in self.bounds_min.iter().chain(&self.bounds_max) {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.degenerate.to_le_bytes());
        b.extend_from_slice(&self.key.areas.to_le_bytes());
        b.extend_from_slice(&self.payload_hash.to_le_bytes());
        let own = xxh3_64(&b);
        b.extend_from_slice(&own.to_le_bytes());
        debug_assert_eq!(b.len(), TRAILER_LEN);
        b
    }

    fn decode(b: &[u8]) -> Result<CacheInfo, String> {
        if b.len() != TRAILER_LEN {
            return Err("truncated trailer".into());
        }
        if &b[0..8] != MAGIC {
            return Err("not a tessera scene cache".into());
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let f64_at = |o: usize| f64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let f32_at = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        if u32_at(8) != VERSION {
            return Err(format!(
                "format version {} (this build reads {VERSION})",
                u32_at(8)
            ));
        }
        if xxh3_64(&b[..TRAILER_LEN - 8]) != u64_at(TRAILER_LEN - 8) {
            return Err("trailer checksum mismatch".into());
        }
        let up = UpAxis::from_code(u32_at(12) as u8).ok_or("bad up axis code")?;
        Ok(CacheInfo {
            key: SourceKey {
                size: u64_at(16),
                mtime_ns: u64_at(24),
                content_hash: u64_at(32),
                up,
                areas: u64_at(104),
            },
            triangles: u64_at(40),
            origin: [f64_at(48), f64_at(56), f64_at(64)],
            bounds_min: [f32_at(72), f32_at(76), f32_at(80)],
            bounds_max: [f32_at(84), f32_at(88), f32_at(92)],
            degenerate: u64_at(96),
            payload_hash: u64_at(112),
        })
    }
}

/// An open scene cache: its trailer checked, its payload checked when opened, or (a cache
/// reused from an earlier bake, [`reuse_cache`]) before it is first read
/// ([`SceneCache::verify`]).
#[derive(Debug)]
pub struct SceneCache {
    path: PathBuf,
    map: Option<Mmap>,
    info: CacheInfo,
    /// Whether the payload passed its checksum, once checked: `Some(message)` when it did not.
    checked: std::sync::OnceLock<Option<String>>,
}

impl SceneCache {
    /// Maps and verifies a cache file (both checksums).
    pub fn open(path: &Path) -> Result<SceneCache, IngestError> {
        let cache = SceneCache::map(path)?;
        cache.verify()?;
        Ok(cache)
    }

    /// Checks the payload against the trailer's checksum, once (later calls give the first
    /// answer): what a reader of [`SceneCache::triangles`] or [`SceneCache::areas`] calls
    /// first on a cache [`reuse_cache`] gave.
    pub fn verify(&self) -> Result<(), IngestError> {
        match self.checked.get_or_init(|| self.verify_payload().err()) {
            None => Ok(()),
            Some(message) => Err(IngestError::Cache {
                path: self.path.clone(),
                message: message.clone(),
            }),
        }
    }

    /// Maps the cache this process has just written with `info` (by [`build_cache`]): its
    /// trailer must be `info`, and the payload is not hashed again, since `info`'s hash was
    /// taken of the very bytes written. Every other opening verifies the payload.
    pub fn open_written(path: &Path, info: &CacheInfo) -> Result<SceneCache, IngestError> {
        let cache = SceneCache::map(path)?;
        if cache.info != *info {
            return Err(IngestError::Cache {
                path: path.to_path_buf(),
                message: "the cache on disk is not the one just written".into(),
            });
        }
        let _ = cache.checked.set(None);
        Ok(cache)
    }

    /// Maps a cache file and checks its trailer (checksum, format) and its length; the payload
    /// is not read yet.
    #[allow(unsafe_code)] // maps the scene cache read-only: see the SAFETY comment inside
    fn map(path: &Path) -> Result<SceneCache, IngestError> {
        let bad = |message: String| IngestError::Cache {
            path: path.to_path_buf(),
            message,
        };
        let file = File::open(path).map_err(|e| IngestError::io(path, e))?;
        let len = file.metadata().map_err(|e| IngestError::io(path, e))?.len() as usize;
        if len < TRAILER_LEN {
            return Err(bad("truncated scene cache".into()));
        }
        // SAFETY: the cache is tessera's own file, replaced only by atomic rename (which leaves
        // this mapping on the old inode), never truncated in place.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| IngestError::io(path, e))?;
        let info = CacheInfo::decode(&map[len - TRAILER_LEN..]).map_err(bad)?;
        let payload = info
            .triangles
            .checked_mul(TRIANGLE_LEN + 1)
            .and_then(|b| b.checked_next_multiple_of(8));
        if payload != Some((len - TRAILER_LEN) as u64) {
            return Err(bad("triangle count does not match the file size".into()));
        }
        Ok(SceneCache {
            path: path.to_path_buf(),
            map: Some(map),
            info,
            checked: std::sync::OnceLock::new(),
        })
    }

    /// Hashes the payload against the trailer's checksum, a window at a time, each window's
    /// pages given back once hashed: checking a cache larger than the budget must not make it
    /// resident all at once.
    fn verify_payload(&self) -> Result<(), String> {
        let Some(map) = &self.map else {
            return Ok(());
        };
        let mut hasher = Xxh3::new();
        crate::pages::hash_released(map, map.len() - TRAILER_LEN, |b| hasher.update(b));
        if hasher.digest() != self.info.payload_hash {
            return Err("triangle data checksum mismatch (corrupt cache)".into());
        }
        Ok(())
    }

    pub fn info(&self) -> &CacheInfo {
        &self.info
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The triangles, straight from the memory map.
    pub fn triangles(&self) -> &[Triangle] {
        match &self.map {
            Some(m) => bytemuck::cast_slice(&m[..self.triangle_bytes()]),
            None => &[],
        }
    }

    /// Each triangle's area id ([`crate::areas`]; 0: no rule), in the order of
    /// [`SceneCache::triangles`], straight from the memory map.
    pub fn areas(&self) -> &[u8] {
        let at = self.triangle_bytes();
        match &self.map {
            Some(m) => &m[at..at + self.info.triangles as usize],
            None => &[],
        }
    }

    /// Bytes of triangles at the start of the file.
    fn triangle_bytes(&self) -> usize {
        (self.info.triangles * TRIANGLE_LEN) as usize
    }

    /// Tells the OS that the pages read so far may be dropped (they are clean file pages):
    /// keeps total resident memory near the budget while streaming a large scene.
    #[allow(unsafe_code)] // madvise(DONTNEED) on a read-only map: see the SAFETY comment inside
    pub fn release_pages(&self) {
        #[cfg(unix)]
        if let Some(m) = &self.map {
            // SAFETY: a read-only, file-backed map: dropped pages are read back from the file
            // on the next access, so no data is lost.
            let _ = unsafe { m.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }
}

/// Statistics of building a cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngestStats {
    pub triangles: u64,
    pub degenerate: u64,
    /// True when an existing cache was reused.
    pub reused: bool,
}

/// Triangles made ready for the cache, in file order: rebased on the world origin, narrowed to
/// f32, those without area dropped and counted, each kept one with its area id. Readers fill
/// batches (on any thread) and [`build_cache`] writes them in order.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheBatch {
    /// The kept triangles as the cache stores them (`[f32; 9]` each, little-endian).
    bytes: Vec<u8>,
    /// The kept triangles' area ids.
    areas: Vec<u8>,
    triangles: u64,
    degenerate: u64,
    /// Bounds of the kept triangles, rebased.
    min: [f32; 3],
    max: [f32; 3],
}

impl Default for CacheBatch {
    fn default() -> Self {
        CacheBatch {
            bytes: Vec::new(),
            areas: Vec::new(),
            triangles: 0,
            degenerate: 0,
            min: [f32::INFINITY; 3],
            max: [f32::NEG_INFINITY; 3],
        }
    }
}

impl CacheBatch {
    /// The size at which a reader filling batches on one thread hands one on [bytes].
    pub const FULL: usize = 1 << 16;
    /// Bytes of batch per triangle kept (its area id aside).
    pub const TRIANGLE_BYTES: usize = std::mem::size_of::<Triangle>();

    /// Adds a world triangle of area id `area`: counted as degenerate if it has no surface,
    /// else rebased on `origin` and narrowed to f32.
    #[inline]
    pub fn push(&mut self, origin: [f64; 3], t: WorldTriangle, area: u8) {
        if is_degenerate(&t) {
            self.degenerate += 1;
            return;
        }
        let mut rebased = [[0f32; 3]; 3];
        for (v, p) in rebased.iter_mut().zip(t) {
            for axis in 0..3 {
                v[axis] = (p[axis] - origin[axis]) as f32;
                self.min[axis] = self.min[axis].min(v[axis]);
                self.max[axis] = self.max[axis].max(v[axis]);
            }
        }
        self.bytes.extend_from_slice(bytemuck::cast_slice(&rebased));
        self.areas.push(area);
        self.triangles += 1;
    }

    /// Bytes of kept triangles (and their areas).
    pub fn byte_len(&self) -> usize {
        self.bytes.len() + self.areas.len()
    }

    /// Triangles read into the batch, kept or not.
    pub fn read(&self) -> u64 {
        self.triangles + self.degenerate
    }
}

/// Reads `source` into a new cache at `path` (written atomically); returns what it read and
/// the trailer written.
///
/// The file is renamed into place without an fsync: a cache is a copy of its scene that every
/// later bake verifies by checksum before use ([`SceneCache::open`]), so a cache that a power
/// cut left incomplete is found corrupt and rebuilt, and the bake need not wait for the disk.
pub fn build_cache(
    source: &mut dyn SceneSource,
    key: SourceKey,
    path: &Path,
) -> Result<(IngestStats, CacheInfo), IngestError> {
    write_cache(source, key, path, false)
}

/// [`build_cache`] for one part of a file's cache ([`write_split`]): its triangles are those
/// `source` gives (a part of the file's), rebased on the whole file's origin (`source`'s
/// bounds are the file's); a part without triangles is written too.
pub fn build_cache_part(
    source: &mut dyn SceneSource,
    key: SourceKey,
    path: &Path,
) -> Result<(IngestStats, CacheInfo), IngestError> {
    write_cache(source, key, path, true)
}

fn write_cache(
    source: &mut dyn SceneSource,
    key: SourceKey,
    path: &Path,
    part: bool,
) -> Result<(IngestStats, CacheInfo), IngestError> {
    if source.areas_key().is_some_and(|k| k != key.areas) {
        return Err(IngestError::Cache {
            path: path.to_path_buf(),
            message: "the scene's key names other area rules than its reader has".into(),
        });
    }
    let bounds: WorldBounds = source.bounds();
    let origin = if bounds.is_empty() {
        [0.0; 3]
    } else {
        origin_below(bounds.min)
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| IngestError::io(dir, e))?;
    let mut file = AtomicFile::create_unsynced(path)?;
    let mut hasher = Xxh3::new();
    let mut stats = IngestStats::default();
    let mut bmin = [f32::INFINITY; 3];
    let mut bmax = [f32::NEG_INFINITY; 3];
    let mut write_err = None;
    let mut areas = AreaSpill::new(dir);
    source
        .for_each_cache_batch(origin, &mut |batch| {
            stats.degenerate += batch.degenerate;
            stats.triangles += batch.triangles;
            // Folding batch by batch gives the same bounds as triangle by triangle: min and
            // max are associative (no NaN: coordinates are finite).
            for axis in 0..3 {
                bmin[axis] = bmin[axis].min(batch.min[axis]);
                bmax[axis] = bmax[axis].max(batch.max[axis]);
            }
            hasher.update(&batch.bytes);
            areas.push(&batch.areas)?;
            if let Err(e) = file.write_all(&batch.bytes) {
                write_err = Some(e);
                return Err(IngestError::Cache {
                    path: path.to_path_buf(),
                    message: "write failed".into(),
                });
            }
            Ok(())
        })
        .map_err(|e| match write_err.take() {
            Some(w) => IngestError::Store(w),
            None => e,
        })?;
    if stats.triangles == 0 && !part {
        return Err(IngestError::Empty {
            path: PathBuf::from(source.name()),
            degenerate: stats.degenerate,
        });
    }
    areas.drain(&mut |b| {
        hasher.update(b);
        file.write_all(b).map_err(IngestError::Store)
    })?;
    let padding = payload_len(stats.triangles) - stats.triangles * (TRIANGLE_LEN + 1);
    let zeros = [0u8; 8];
    hasher.update(&zeros[..padding as usize]);
    file.write_all(&zeros[..padding as usize])?;
    let info = CacheInfo {
        key,
        origin,
        bounds_min: bmin,
        bounds_max: bmax,
        triangles: stats.triangles,
        degenerate: stats.degenerate,
        payload_hash: hasher.digest(),
    };
    file.write_all(&info.encode())?;
    file.commit_unsynced()?;
    Ok((stats, info))
}

/// The area ids of the triangles written so far, which the cache stores after them: in
/// memory up to [`AreaSpill::IN_MEMORY`] bytes, then in an unnamed temporary file in the
/// cache's folder (a scene of billions of triangles has gigabytes of them).
struct AreaSpill<'d> {
    dir: &'d Path,
    memory: Vec<u8>,
    file: Option<std::io::BufWriter<File>>,
}

impl<'d> AreaSpill<'d> {
    #[cfg(not(test))]
    const IN_MEMORY: usize = 4 << 20;
    /// Tests go through the file with a few hundred triangles.
    #[cfg(test)]
    const IN_MEMORY: usize = 64;

    fn new(dir: &'d Path) -> AreaSpill<'d> {
        AreaSpill {
            dir,
            memory: Vec::new(),
            file: None,
        }
    }

    fn push(&mut self, areas: &[u8]) -> Result<(), IngestError> {
        use std::io::Write;
        let io = |e| IngestError::io(self.dir, e);
        if let Some(f) = &mut self.file {
            return f.write_all(areas).map_err(io);
        }
        self.memory.extend_from_slice(areas);
        if self.memory.len() > AreaSpill::IN_MEMORY {
            let mut f = std::io::BufWriter::new(tempfile::tempfile_in(self.dir).map_err(io)?);
            f.write_all(&self.memory).map_err(io)?;
            self.memory = Vec::new();
            self.file = Some(f);
        }
        Ok(())
    }

    /// Every area pushed, in order, to `out` a piece at a time.
    fn drain(
        self,
        out: &mut dyn FnMut(&[u8]) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        use std::io::{Read, Seek};
        let io = |e| IngestError::io(self.dir, e);
        let Some(f) = self.file else {
            return out(&self.memory);
        };
        let mut f = f.into_inner().map_err(|e| io(e.into_error()))?;
        f.rewind().map_err(io)?;
        let mut piece = vec![0u8; 1 << 20];
        loop {
            match f.read(&mut piece) {
                Ok(0) => return Ok(()),
                Ok(n) => out(&piece[..n])?,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io(e)),
            }
        }
    }
}

/// Opens the cache at `path` if it was built from `key`, else (re)builds it from the source
/// that `open_source` opens. A cache whose trailer is corrupt is reported through
/// `on_corrupt` and rebuilt; one reused has its payload checked when first read
/// ([`SceneCache::verify`], as [`reuse_cache`] says).
pub fn ensure_cache<'s>(
    path: &Path,
    key: SourceKey,
    open_source: &mut dyn FnMut() -> Result<Box<dyn SceneSource + 's>, IngestError>,
    on_corrupt: &mut dyn FnMut(&IngestError),
) -> Result<(SceneCache, IngestStats), IngestError> {
    if let Some(found) = reuse_cache(path, key, on_corrupt) {
        return Ok(found);
    }
    let (stats, info) = {
        let mut source = open_source()?;
        build_cache(source.as_mut(), key, path)?
    };
    let cache = SceneCache::open_written(path, &info)?;
    Ok((cache, stats))
}

/// The cache at `path` when it is there, was built from an input like `key`'s
/// ([`SourceKey::same_input`]) and its trailer passes its checks; one whose trailer does not
/// is reported through `on_corrupt`. Its payload is not read here: a bake whose tiles are
/// kept never reads it, and a reader checks it first ([`SceneCache::verify`]).
pub fn reuse_cache(
    path: &Path,
    key: SourceKey,
    on_corrupt: &mut dyn FnMut(&IngestError),
) -> Option<(SceneCache, IngestStats)> {
    if !path.exists() {
        return None;
    }
    match SceneCache::map(path) {
        Ok(cache) if cache.info().key.same_input(&key) => {
            let stats = IngestStats {
                triangles: cache.info().triangles,
                degenerate: cache.info().degenerate,
                reused: true,
            };
            Some((cache, stats))
        }
        Ok(_) => None,
        Err(e) => {
            on_corrupt(&e);
            None
        }
    }
}

const SPLIT_MAGIC: &[u8; 8] = b"TSSPLIT\0";

/// A file's cache written in parts ([`write_split`]): the parts in order, each opened and
/// verified, and the trailer of the one cache they make together.
pub struct SplitCache {
    pub parts: Vec<SceneCache>,
    pub whole: CacheInfo,
}

/// The parts at `paths` (in the manifest's folder, in file order) opened as one cache: each
/// verified by its own checksum, and the whole's trailer made from theirs (the payload
/// checksum over their triangles end to end, in the same reading, then over their areas and
/// the one cache's padding). Every part must have `key` and one origin.
fn join_parts(paths: &[PathBuf], key: SourceKey) -> Result<SplitCache, IngestError> {
    let mut parts: Vec<SceneCache> = Vec::with_capacity(paths.len());
    let mut whole_hash = Xxh3::new();
    let mut whole: Option<CacheInfo> = None;
    for path in paths {
        let part = SceneCache::map(path)?;
        let info = *part.info();
        let bad = |message: &str| IngestError::Cache {
            path: path.clone(),
            message: message.to_string(),
        };
        if info.key != key {
            return Err(bad(
                "a part of another scene file (or of another version of it)",
            ));
        }
        let mut own = Xxh3::new();
        if let Some(map) = &part.map {
            let triangles = part.triangle_bytes();
            let mut at = 0;
            crate::pages::hash_released(map, map.len() - TRAILER_LEN, |b| {
                own.update(b);
                // The whole's triangles first: this part's areas are hashed after every
                // part's triangles.
                let upto = (triangles - at.min(triangles)).min(b.len());
                whole_hash.update(&b[..upto]);
                at += b.len();
            });
        }
        if own.digest() != info.payload_hash {
            return Err(bad("triangle data checksum mismatch (corrupt cache part)"));
        }
        whole = Some(match whole {
            None => info,
            Some(w) if w.origin != info.origin => {
                return Err(bad("a part rebased on another origin"));
            }
            Some(mut w) => {
                for axis in 0..3 {
                    w.bounds_min[axis] = w.bounds_min[axis].min(info.bounds_min[axis]);
                    w.bounds_max[axis] = w.bounds_max[axis].max(info.bounds_max[axis]);
                }
                w.triangles += info.triangles;
                w.degenerate += info.degenerate;
                w
            }
        });
        parts.push(part);
    }
    let mut whole = whole.ok_or_else(|| IngestError::Cache {
        path: PathBuf::from("scene"),
        message: "a cache in no parts".into(),
    })?;
    // The areas of a part are a small fraction of it (1 byte to 36 of triangles), read again.
    for part in &parts {
        whole_hash.update(part.areas());
    }
    let padding = payload_len(whole.triangles) - whole.triangles * (TRIANGLE_LEN + 1);
    whole_hash.update(&[0u8; 8][..padding as usize]);
    whole.payload_hash = whole_hash.digest();
    Ok(SplitCache { parts, whole })
}

/// Joins the parts at `paths` (files in `manifest`'s folder, in file order, each written by
/// [`build_cache_part`] from the file of `key`) into one cache, verifying each, and writes the
/// manifest that names them (atomically: temp, fsync, rename) with the whole's trailer. A scene
/// with no triangle in any part is refused as [`build_cache`] refuses it.
pub fn write_split(
    manifest: &Path,
    paths: &[PathBuf],
    key: SourceKey,
    name: &str,
) -> Result<SplitCache, IngestError> {
    let split = join_parts(paths, key)?;
    if split.whole.triangles == 0 {
        return Err(IngestError::Empty {
            path: PathBuf::from(name),
            degenerate: split.whole.degenerate,
        });
    }
    let mut b = Vec::new();
    b.extend_from_slice(SPLIT_MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&split.whole.encode());
    b.extend_from_slice(&(split.parts.len() as u32).to_le_bytes());
    for part in &split.parts {
        let file = part.path.file_name().unwrap_or_default().as_encoded_bytes();
        b.extend_from_slice(&(file.len() as u32).to_le_bytes());
        b.extend_from_slice(file);
        b.extend_from_slice(&part.info.encode());
    }
    b.extend_from_slice(&xxh3_64(&b).to_le_bytes());
    tessera_store::write_atomic(manifest, &b)?;
    Ok(split)
}

/// The cache in parts that `manifest` names ([`write_split`]), each part verified by its
/// checksum and against the trailer the manifest keeps for it, and the whole's checksum
/// against the manifest's. With `key`, a cache made from another source is `Ok(None)`.
pub fn open_split(
    manifest: &Path,
    key: Option<SourceKey>,
) -> Result<Option<SplitCache>, IngestError> {
    let b = std::fs::read(manifest).map_err(|e| IngestError::io(manifest, e))?;
    let bad = |message: &str| IngestError::Cache {
        path: manifest.to_path_buf(),
        message: message.to_string(),
    };
    if b.len() < 8 + 4 + TRAILER_LEN + 4 + 8 || &b[..8] != SPLIT_MAGIC {
        return Err(bad("not a manifest of scene cache parts"));
    }
    let (body, sum) = b.split_at(b.len() - 8);
    if xxh3_64(body).to_le_bytes() != sum {
        return Err(bad("manifest checksum mismatch (damaged)"));
    }
    if body[8..12] != VERSION.to_le_bytes() {
        return Err(bad("made by another version of tessera"));
    }
    let whole = CacheInfo::decode(&body[12..12 + TRAILER_LEN]).map_err(|m| bad(&m))?;
    if key.is_some_and(|k| k != whole.key) {
        return Ok(None);
    }
    let mut at = 12 + TRAILER_LEN;
    let mut take = |n: usize| -> Result<&[u8], IngestError> {
        let got = body
            .get(at..at + n)
            .ok_or_else(|| bad("manifest cut short"))?;
        at += n;
        Ok(got)
    };
    let count = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes"));
    let folder = manifest.parent().unwrap_or(Path::new("."));
    let mut paths = Vec::new();
    let mut infos = Vec::new();
    for _ in 0..count {
        let len = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
        let name =
            std::str::from_utf8(take(len)?).map_err(|_| bad("a part's name is not UTF-8"))?;
        if name.contains('/') || name.contains('\\') || name.starts_with('.') {
            return Err(bad("a part's name leaves the manifest's folder"));
        }
        paths.push(folder.join(name));
        infos.push(CacheInfo::decode(take(TRAILER_LEN)?).map_err(|m| bad(&m))?);
    }
    let split = join_parts(&paths, whole.key)?;
    let theirs: Vec<CacheInfo> = split.parts.iter().map(|p| p.info).collect();
    if theirs != infos || split.whole != whole {
        return Err(bad("the parts are not the ones the manifest names"));
    }
    Ok(Some(split))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MeshSource;

    fn mesh_source<'a>(p: &'a [[f64; 3]], t: &'a [[u32; 3]]) -> MeshSource<'a> {
        MeshSource {
            name: "mesh".into(),
            positions: p,
            triangles: t,
        }
    }

    /// A mesh whose triangle `i` has area `areas[i]`, read as if by `rules`.
    struct Named<'a> {
        mesh: MeshSource<'a>,
        areas: &'a [u8],
        rules: &'a AreaRules,
    }

    impl SceneSource for Named<'_> {
        fn name(&self) -> String {
            self.mesh.name()
        }
        fn bounds(&self) -> WorldBounds {
            self.mesh.bounds()
        }
        fn for_each_triangle(
            &mut self,
            emit: &mut dyn FnMut(WorldTriangle) -> Result<(), IngestError>,
        ) -> Result<(), IngestError> {
            self.mesh.for_each_triangle(emit)
        }
        fn for_each_cache_batch(
            &mut self,
            origin: [f64; 3],
            emit: &mut dyn FnMut(CacheBatch) -> Result<(), IngestError>,
        ) -> Result<(), IngestError> {
            // Small batches: several of them.
            let (mut batch, mut i) = (CacheBatch::default(), 0);
            let areas = self.areas;
            self.mesh.for_each_triangle(&mut |t| {
                batch.push(origin, t, areas[i]);
                i += 1;
                if i % 7 == 0 {
                    emit(std::mem::take(&mut batch))?;
                }
                Ok(())
            })?;
            emit(batch)
        }
        fn areas_key(&self) -> Option<u64> {
            Some(self.rules.key())
        }
    }

    /// `n` triangles in a row (every fifth degenerate), and area `i % 4` for triangle `i`.
    fn row(n: u32) -> (Vec<[f64; 3]>, Vec<[u32; 3]>, Vec<u8>) {
        let mut p = Vec::new();
        let mut t = Vec::new();
        for i in 0..n {
            let x = f64::from(i);
            let k = p.len() as u32;
            p.extend([[x, 0.0, 0.0], [x + 1.0, 0.0, 0.0], [x, 1.0, 0.0]]);
            t.push(if i % 5 == 4 {
                [k, k, k + 1]
            } else {
                [k, k + 1, k + 2]
            });
        }
        let areas = (0..n).map(|i| (i % 4) as u8).collect();
        (p, t, areas)
    }

    /// The areas of the triangles of [`row`] that are kept.
    fn kept_areas(areas: &[u8]) -> Vec<u8> {
        areas
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 5 != 4)
            .map(|(_, &a)| a)
            .collect()
    }

    fn rules(patterns: &[&str]) -> AreaRules {
        AreaRules::new(patterns.iter().map(|p| vec![p.to_string()]).collect())
    }

    #[test]
    fn areas_survive_reopening_and_other_rules_rebuild_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c");
        // More areas than AreaSpill keeps in memory in tests: they go through its file.
        for n in [1, 9, 200] {
            let (p, t, areas) = row(n);
            let (a, b) = (rules(&["a"]), rules(&["b"]));
            let key_a = SourceKey::of_mesh(&p, &t, UpAxis::Z, &a);
            let key_b = SourceKey::of_mesh(&p, &t, UpAxis::Z, &b);
            assert_ne!(key_a, key_b);
            let source = |rules| Named {
                mesh: mesh_source(&p, &t),
                areas: &areas,
                rules,
            };
            let (_, info) = build_cache(&mut source(&a), key_a, &path).unwrap();
            let want = kept_areas(&areas);
            let cache = SceneCache::open(&path).unwrap();
            assert_eq!((cache.areas(), cache.info()), (&want[..], &info));
            assert_eq!(cache.triangles().len(), want.len());
            assert_eq!(std::fs::metadata(&path).unwrap().len() % 8, 0);
            // The cache under `key`, with the rules the reader uses, and whether it was made
            // again.
            let ensure = |key: SourceKey, rules| {
                let mut opened = 0;
                let (cache, got) = ensure_cache(
                    &path,
                    key,
                    &mut || {
                        opened += 1;
                        Ok(Box::new(source(rules)))
                    },
                    &mut |e| panic!("{e}"),
                )
                .unwrap();
                assert_eq!(opened == 1, !got.reused);
                (cache, opened == 1)
            };
            // Reused under the same rules, and for the same bytes written again later.
            assert!(!ensure(key_a, &a).1);
            let rewritten = SourceKey {
                mtime_ns: key_a.mtime_ns + 1_000_000_000,
                ..key_a
            };
            assert!(!ensure(rewritten, &a).1);
            // Made again for other bytes of the same size, and under other rules.
            let edited = SourceKey {
                content_hash: key_a.content_hash ^ 1,
                ..key_a
            };
            assert!(ensure(edited, &a).1);
            let (cache, made) = ensure(key_b, &b);
            assert!(made);
            assert_eq!(cache.info().key.areas, b.key());
            assert_eq!(cache.areas(), want);
            // A key that names other rules than the reader's is refused.
            let e = build_cache(&mut source(&b), key_a, &path).unwrap_err();
            assert!(e.to_string().contains("area rules"), "{e}");
        }
    }

    #[test]
    fn a_corrupt_area_is_caught_by_the_checksum() {
        // 6 triangles kept: 222 bytes, 2 of padding.
        let (p, t, areas) = row(7);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c");
        let r = rules(&["a"]);
        let key = SourceKey::of_mesh(&p, &t, UpAxis::Z, &r);
        let mut source = Named {
            mesh: mesh_source(&p, &t),
            areas: &areas,
            rules: &r,
        };
        build_cache(&mut source, key, &path).unwrap();
        let kept = kept_areas(&areas).len();
        let clean = std::fs::read(&path).unwrap();
        // An area, and the padding after the areas.
        for at in [kept * 36 + 2, kept * 37] {
            let mut bytes = clean.clone();
            bytes[at] ^= 1;
            std::fs::write(&path, &bytes).unwrap();
            let e = SceneCache::open(&path).unwrap_err().to_string();
            assert!(e.contains("checksum"), "{e}");
            // Reused, its trailer sound: the payload is found damaged before it is read.
            let mut reported = 0;
            let (cache, _) = reuse_cache(&path, key, &mut |_| reported += 1).unwrap();
            assert_eq!(reported, 0);
            for _ in 0..2 {
                let e = cache.verify().unwrap_err().to_string();
                assert!(
                    e.contains("checksum") && e.contains(&*path.to_string_lossy()),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn parts_joined_have_the_areas_of_the_one_cache() {
        let (p, t, areas) = row(40);
        let dir = tempfile::tempdir().unwrap();
        let r = rules(&["a"]);
        let key = SourceKey::of_mesh(&p, &t, UpAxis::Z, &r);
        let one = dir.path().join("one.cache");
        build_cache(
            &mut Named {
                mesh: mesh_source(&p, &t),
                areas: &areas,
                rules: &r,
            },
            key,
            &one,
        )
        .unwrap();
        let one = SceneCache::open(&one).unwrap();
        // Parts of the same positions (so the same origin), cut at 0, 13, 13 (empty), 40.
        let mut paths = Vec::new();
        for (k, run) in [0..13, 13..13, 13..40].into_iter().enumerate() {
            let at = dir.path().join(format!("part-{k}.cache"));
            let mut source = Named {
                mesh: mesh_source(&p, &t[run.clone()]),
                areas: &areas[run],
                rules: &r,
            };
            build_cache_part(&mut source, key, &at).unwrap();
            paths.push(at);
        }
        let manifest = dir.path().join("scene.parts");
        let split = write_split(&manifest, &paths, key, "mesh").unwrap();
        assert_eq!(split.whole, *one.info());
        let split = open_split(&manifest, Some(key)).unwrap().unwrap();
        let joined: Vec<u8> = split
            .parts
            .iter()
            .flat_map(|c| c.areas().to_vec())
            .collect();
        assert_eq!(joined, one.areas());
        // The manifest is not one for another rules' key.
        let other = SourceKey::of_mesh(&p, &t, UpAxis::Z, &rules(&["b"]));
        assert!(open_split(&manifest, Some(other)).unwrap().is_none());
    }

    #[test]
    fn the_key_reads_only_the_buffer_files_the_reader_would() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tri.bin"), [7u8; 36]).unwrap();
        std::fs::create_dir(dir.path().join("folder.bin")).unwrap();
        let gltf = dir.path().join("scene.gltf");
        let uris = [
            "tri.bin",
            "/etc/passwd",
            "../outside.bin",
            "missing.bin",
            "folder.bin",
        ];
        let buffers: Vec<String> = uris
            .iter()
            .map(|u| format!(r#"{{"byteLength":36,"uri":"{u}"}}"#))
            .collect();
        let text = format!(
            r#"{{"asset":{{"version":"2.0"}},"buffers":[{}]}}"#,
            buffers.join(",")
        );
        std::fs::write(&gltf, &text).unwrap();
        // Neither a failure (the reader names the scene and the buffer) nor a read of a
        // file outside the folder: only the scene and tri.bin are hashed.
        let key = SourceKey::of_file(&gltf, UpAxis::Y, &ReadLimits::default()).unwrap();
        assert_eq!(key.size, text.len() as u64 + 36);
        // tri.bin's bytes are part of the key.
        std::fs::write(dir.path().join("tri.bin"), [8u8; 36]).unwrap();
        let changed = SourceKey::of_file(&gltf, UpAxis::Y, &ReadLimits::default()).unwrap();
        assert_ne!(key.content_hash, changed.content_hash);
    }

    #[test]
    fn utm_coordinates_keep_centimetres() {
        let base = [512_345.678, 5_712_345.678, 312.5];
        let p = [
            base,
            [base[0] + 0.01, base[1], base[2]],
            [base[0], base[1] + 0.01, base[2] + 0.01],
            [base[0] + 2000.0, base[1] + 2000.0, base[2] + 80.0],
            [base[0] + 2000.01, base[1] + 2000.0, base[2] + 80.0],
            [base[0] + 2000.0, base[1] + 2000.01, base[2] + 80.0],
        ];
        let t = [[0, 1, 2], [3, 4, 5]];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scene.cache");
        let key = SourceKey::of_mesh(&p, &t, UpAxis::Z, &AreaRules::default());
        build_cache(&mut mesh_source(&p, &t), key, &path).unwrap();
        let cache = SceneCache::open(&path).unwrap();
        let tris = cache.triangles();
        for (ti, tri) in t.iter().enumerate() {
            for (k, &vi) in tri.iter().enumerate() {
                for axis in 0..3 {
                    let back = cache.info().origin[axis] + tris[ti][k][axis] as f64;
                    // Well under a millimetre, two kilometres from the origin.
                    assert!(
                        (back - p[vi as usize][axis]).abs() < 5e-4,
                        "{back} vs {}",
                        p[vi as usize][axis]
                    );
                }
            }
        }
        // The 1 cm edges survive as 1 cm.
        let e = tris[1][1][0] - tris[1][0][0];
        assert!((e - 0.01).abs() < 5e-4);
    }

    #[test]
    fn degenerate_triangles_are_counted_and_empty_scenes_refused() {
        let p = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [2.0, 0.0, 0.0],
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c");
        let t = [[0, 1, 2], [0, 0, 1], [0, 1, 3]];
        let (stats, info) = build_cache(
            &mut mesh_source(&p, &t),
            SourceKey::of_mesh(&p, &t, UpAxis::Z, &AreaRules::default()),
            &path,
        )
        .unwrap();
        assert_eq!((stats.triangles, stats.degenerate), (1, 2));
        // The cache just written opens without a second hash when its trailer is the one
        // written, and not when it is another.
        assert_eq!(
            SceneCache::open_written(&path, &info).unwrap().info(),
            &info
        );
        let other = CacheInfo {
            triangles: 7,
            ..info
        };
        assert!(SceneCache::open_written(&path, &other).is_err());
        let only_bad = [[0, 0, 1]];
        let err = build_cache(
            &mut mesh_source(&p, &only_bad),
            SourceKey::of_mesh(&p, &only_bad, UpAxis::Z, &AreaRules::default()),
            &path,
        )
        .unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        // The good cache written before is untouched by the failed build.
        assert_eq!(SceneCache::open(&path).unwrap().info().triangles, 1);
    }

    #[test]
    fn corrupt_cache_is_detected_and_rebuilt() {
        let p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let t = [[0, 1, 2]];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c");
        let key = SourceKey::of_mesh(&p, &t, UpAxis::Z, &AreaRules::default());
        build_cache(&mut mesh_source(&p, &t), key, &path).unwrap();
        let clean = std::fs::read(&path).unwrap();
        let mut bytes = clean.clone();
        bytes[3] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        assert!(SceneCache::open(&path)
            .unwrap_err()
            .to_string()
            .contains("checksum"));
        // Its trailer sound: reused, and the damage found before its triangles are read (the
        // bake then removes it and asks again).
        let (cache, stats) =
            ensure_cache(&path, key, &mut || unreachable!(), &mut |_| panic!()).unwrap();
        assert!(stats.reused);
        assert!(cache.verify().unwrap_err().to_string().contains("checksum"));
        drop(cache);
        std::fs::remove_file(&path).unwrap();
        // A damaged trailer: reported, and the cache rebuilt.
        let mut bytes = clean;
        let at = bytes.len() - 3;
        bytes[at] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let mut reported = 0;
        let (cache, stats) = ensure_cache(
            &path,
            key,
            &mut || Ok(Box::new(mesh_source(&p, &t))),
            &mut |_| reported += 1,
        )
        .unwrap();
        assert_eq!(
            (reported, stats.reused, cache.triangles().len()),
            (1, false, 1)
        );
        assert!(cache.verify().is_ok());
        let (_, again) =
            ensure_cache(&path, key, &mut || unreachable!(), &mut |_| panic!()).unwrap();
        assert!(again.reused);
    }
}
