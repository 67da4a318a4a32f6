//! What the polygon stage reads, out of core: the merged regions of the region journal
//! (copied once into a flat scratch file) and the walkable floors of the floor journal.
//!
//! * [`JournalRegions`]: the journal's contours copied into `work/polygons/contours.spill`,
//!   with an index of where each region's contours are kept in memory (a few words a
//!   contour); regions are served back in windows, in region order, as many passes as
//!   [`tessera_polygons::polygonize_stream`] asks for.
//! * [`SpanHeights`]: each tile's walkable floors read from the floor journal through a
//!   budgeted cache, for height detail.
//!
//! Both report their progress as phases of the polygon stage.

use rayon::prelude::*;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tessera_artifacts::{Contour, GridFrame, RegionBatch, SpanKey, TileCoord, TileFloors};
use tessera_polygons::detail::Floor;
use tessera_polygons::{PolygonError, RegionContours, RegionSource, Sealed, Served};
use tessera_spill::{Spill, SpillWriter};
use tessera_store::{Journal, StoreError};

use crate::{BakeError, Progress};

const STAGE: &str = "polygons";

/// Words of a contour's header in the scratch file: tile x, tile y, local region, level,
/// vertex count.
const HEADER_WORDS: u64 = 5;
/// Words per contour vertex: x, y, height, neighbour.
const VERTEX_WORDS: u64 = 4;

/// The regions of a finished region journal, served in windows of about `window_bytes` of
/// contour data.
pub(crate) struct JournalRegions {
    file: File,
    path: PathBuf,
    /// Regions in id order: id, and their contours' `(offset, words)` in `locations`.
    regions: Vec<(SpanKey, u32, u32)>,
    /// Each region's id and a hash of its contours' words as the journal holds them, in the
    /// order of `regions` ([`RegionSource::contour_keys`]).
    keys: Vec<(SpanKey, u64)>,
    locations: Vec<(u64, u32)>,
    window_bytes: u64,
    /// Passes served so far.
    passes: u32,
    /// The first read that failed: the stream stopped there.
    failure: Option<std::io::Error>,
    progress: Progress,
    /// Raised to stop the bake: the stream stops before its next window.
    interrupt: Option<Arc<AtomicBool>>,
    /// Whether the stream stopped because of it.
    pub(crate) interrupted: bool,
    /// When every region fits one window: that window, read by the first pass and served
    /// again by the next ones (a window's worth of memory is the stage's either way).
    whole: Option<Vec<RegionContours>>,
}

/// A region batch as the scratch file takes it: its regions' ids and members, its contours'
/// words one after the other, and per contour its tile, local region, first word, words and
/// their hash.
struct LaidOut {
    regions: Vec<(SpanKey, Vec<(TileCoord, u32)>)>,
    words: Vec<u32>,
    contours: Vec<(TileCoord, u32, u64, u32, u64)>,
}

impl LaidOut {
    fn of(batch: RegionBatch) -> LaidOut {
        let n: usize = batch.contours.iter().map(|c| c.points.len()).sum();
        let mut words: Vec<u32> = Vec::with_capacity(
            HEADER_WORDS as usize * batch.contours.len() + VERTEX_WORDS as usize * n,
        );
        let mut contours = Vec::with_capacity(batch.contours.len());
        for c in &batch.contours {
            let at = words.len();
            let n = c.points.len();
            words.extend([c.tile.x, c.tile.y, c.region, c.level, n as u32]);
            for k in 0..n {
                words.extend([
                    c.points[k].0 as u32,
                    c.points[k].1 as u32,
                    c.heights[k],
                    c.neighbours[k],
                ]);
            }
            let hash = xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(&words[at..]));
            let len = (words.len() - at) as u32;
            contours.push((c.tile, c.region, at as u64, len, hash));
        }
        LaidOut {
            regions: batch
                .regions
                .into_iter()
                .map(|r| (r.id, r.members))
                .collect(),
            words,
            contours,
        }
    }
}

impl JournalRegions {
    /// Indexes `journal_path` (a complete region journal), copying its contours to `path`:
    /// those of every region, or with `part`, those of the regions whose ids lie in it (one
    /// process's share of a distributed polygon stage, [`RegionPart`]).
    pub(crate) fn open(
        journal_path: &Path,
        path: &Path,
        window_bytes: u64,
        progress: &Progress,
        interrupt: Option<Arc<AtomicBool>>,
        part: Option<&RegionPart>,
    ) -> Result<JournalRegions, BakeError> {
        let journal = Journal::open_complete(journal_path, crate::REGIONS_KIND)?;
        let corrupt = |message: String| BakeError::Corrupt {
            path: journal_path.to_path_buf(),
            message,
        };
        let io = |e: std::io::Error| BakeError::Io(StoreError::io(path, e));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut out = SpillWriter::<u32>::create(path).map_err(io)?;
        let mut owner: rustc_hash::FxHashMap<(TileCoord, u32), SpanKey> = Default::default();
        let mut found: Vec<(TileCoord, u32, u64, u32, u64)> = Vec::new();
        let keys = journal.keys();
        progress.phase(STAGE, "contours", keys.len() as u64);
        // Tiles decoded, and their contours laid out as words and hashed, in parallel a small
        // group at a time (a few tiles' contours in memory), then written in tile order.
        let group = 16 * rayon::current_num_threads();
        let mut done = 0;
        for keys in keys.chunks(group) {
            if interrupt
                .as_ref()
                .is_some_and(|i| i.load(Ordering::Relaxed))
            {
                return Err(BakeError::Interrupted);
            }
            progress.advance(STAGE, done as u64);
            done += keys.len();
            let batches: Vec<Result<LaidOut, BakeError>> = keys
                .par_iter()
                .map(|&key| {
                    let batch = RegionBatch::decode(&journal.read(key)?)
                        .map_err(|e| corrupt(format!("tile {key}: {e}")))?;
                    Ok(LaidOut::of(batch))
                })
                .collect();
            for batch in batches {
                let LaidOut {
                    regions,
                    words,
                    contours,
                } = batch?;
                for (id, members) in regions {
                    for m in members {
                        owner.insert(m, id);
                    }
                }
                let base = out.len();
                out.extend(&words).map_err(io)?;
                for (tile, region, at, len, hash) in contours {
                    found.push((tile, region, base + at, len, hash));
                }
            }
        }
        let spill: Spill<u32> = out.finish().map_err(io)?;
        // Contours by region id, then by where they were written (the order they were made in).
        let mut placed: Vec<(SpanKey, u64, u32, u64)> = Vec::with_capacity(found.len());
        for (tile, local, at, words, hash) in found {
            let Some(&id) = owner.get(&(tile, local)) else {
                return Err(corrupt(
                    PolygonError::Orphan {
                        tx: tile.x,
                        ty: tile.y,
                        local,
                    }
                    .to_string(),
                ));
            };
            if part.is_none_or(|p| p.holds(id)) {
                placed.push((id, at, words, hash));
            }
        }
        drop(owner);
        placed.sort_unstable();
        let mut regions: Vec<(SpanKey, u32, u32)> = Vec::new();
        let mut locations = Vec::with_capacity(placed.len());
        let mut hashes = Vec::with_capacity(placed.len());
        for (id, at, words, hash) in placed {
            match regions.last_mut() {
                Some(last) if last.0 == id => last.2 += 1,
                _ => regions.push((id, locations.len() as u32, 1)),
            }
            locations.push((at, words));
            hashes.push(hash);
        }
        // A region's key: its id and its contours' hashes, in the order they were written.
        let keys = regions
            .iter()
            .map(|&(id, first, count)| {
                let mut b: Vec<u8> = Vec::with_capacity(12 + 8 * count as usize);
                for v in [id.y as u32, id.x as u32, id.zmax] {
                    b.extend_from_slice(&v.to_le_bytes());
                }
                for h in &hashes[first as usize..(first + count) as usize] {
                    b.extend_from_slice(&h.to_le_bytes());
                }
                (id, xxhash_rust::xxh3::xxh3_64(&b))
            })
            .collect();
        let file = File::open(spill.path()).map_err(io)?;
        Ok(JournalRegions {
            file,
            path: spill.path().to_path_buf(),
            regions,
            keys,
            locations,
            window_bytes: window_bytes.max(1),
            passes: 0,
            failure: None,
            progress: progress.clone(),
            interrupt,
            interrupted: false,
            whole: None,
        })
    }

    /// Splits the regions into `parts` runs of consecutive regions with about as many contour
    /// points each (what polygonizing a region costs grows with them), for the processes of a
    /// distributed polygon stage; keeps the first run and returns every run's bounds (each
    /// process opens the journal with its own). A run may be empty.
    pub(crate) fn split(&mut self, parts: usize) -> Vec<RegionPart> {
        let parts = parts.max(1);
        let words = |r: &(SpanKey, u32, u32)| -> u64 {
            self.locations[r.1 as usize..(r.1 + r.2) as usize]
                .iter()
                .map(|&(_, w)| u64::from(w))
                .sum()
        };
        let total: u64 = self.regions.iter().map(words).sum();
        // Run k starts at the first region past k/parts of the points.
        let mut starts = vec![0usize];
        let mut seen = 0u64;
        for (i, r) in self.regions.iter().enumerate() {
            while starts.len() < parts && seen * parts as u64 >= total * starts.len() as u64 {
                starts.push(i);
            }
            seen += words(r);
        }
        while starts.len() < parts {
            starts.push(self.regions.len());
        }
        let id_at = |i: usize| self.regions.get(i).map(|r| r.0);
        let bounds: Vec<RegionPart> = (0..parts)
            .map(|k| RegionPart {
                first: if k == 0 { None } else { id_at(starts[k]) },
                end: starts.get(k + 1).and_then(|&i| id_at(i)),
                empty: starts.get(k + 1).copied().unwrap_or(self.regions.len()) == starts[k],
            })
            .collect();
        let kept = starts.get(1).copied().unwrap_or(self.regions.len());
        self.regions.truncate(kept);
        self.keys.truncate(kept);
        bounds
    }

    /// The read that stopped the stream, if one did (the path is [`JournalRegions::open`]'s).
    pub(crate) fn take_failure(&mut self) -> Option<std::io::Error> {
        self.failure.take()
    }

    fn read_region(&self, r: usize) -> std::io::Result<RegionContours> {
        let (id, first, count) = self.regions[r];
        let mut contours = Vec::with_capacity(count as usize);
        for &(at, words) in &self.locations[first as usize..(first + count) as usize] {
            let mut buf = vec![0u32; words as usize];
            self.file
                .read_exact_at(bytemuck::cast_slice_mut(&mut buf), at * 4)?;
            let n = buf[4] as usize;
            let v = &buf[HEADER_WORDS as usize..];
            contours.push(Contour {
                tile: TileCoord {
                    x: buf[0],
                    y: buf[1],
                },
                region: buf[2],
                level: buf[3],
                points: (0..n)
                    .map(|k| (v[4 * k] as i32, v[4 * k + 1] as i32))
                    .collect(),
                heights: (0..n).map(|k| v[4 * k + 2]).collect(),
                neighbours: (0..n).map(|k| v[4 * k + 3]).collect(),
            });
        }
        Ok(RegionContours::new(id, contours))
    }

    /// Deletes the scratch file.
    pub(crate) fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl RegionSource for JournalRegions {
    fn stop_flag(&self) -> Option<Arc<AtomicBool>> {
        self.interrupt.clone()
    }

    fn contour_keys(&self) -> Option<&[(SpanKey, u64)]> {
        Some(&self.keys)
    }

    fn for_each_window(
        &mut self,
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        self.serve(None, f)
    }

    fn for_each_window_of(
        &mut self,
        wanted: &(dyn Fn(SpanKey) -> bool + Sync),
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        self.serve(Some(wanted), f)
    }

    fn for_each_window_taking(
        &mut self,
        take: &(dyn Fn(SpanKey) -> Option<Sealed> + Sync),
        f: &mut dyn FnMut(Vec<Served>) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        if let Some(whole) = self.whole.take() {
            let done =
                self.serve_whole(|| f(whole.par_iter().map(|r| Served::of(r, take)).collect()));
            self.whole = Some(whole);
            return done;
        }
        self.serve_as(
            None,
            |this, r| {
                let id = this.regions[r].0;
                match take(id) {
                    Some(record) => Ok(Served::Kept(id, record)),
                    None => this.read_region(r).map(Served::Read),
                }
            },
            &mut |window, _| f(window),
        )
    }
}

impl JournalRegions {
    /// One pass: every region, or those `wanted` accepts, in windows.
    fn serve(
        &mut self,
        wanted: Option<&(dyn Fn(SpanKey) -> bool + Sync)>,
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        if let Some(whole) = self.whole.take() {
            let served = self.serve_whole(|| f(&whole));
            self.whole = Some(whole);
            return served;
        }
        // Every region in one window: kept for the next passes.
        let mut single = None;
        self.serve_as(
            wanted,
            |this, r| this.read_region(r),
            &mut |window, whole| {
                f(&window)?;
                if whole {
                    single = Some(window);
                }
                Ok(())
            },
        )?;
        self.whole = single;
        Ok(())
    }

    /// A pass served from the window kept whole.
    fn serve_whole(
        &mut self,
        f: impl FnOnce() -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        self.passes += 1;
        let what = format!("regions, pass {}", self.passes);
        self.progress.phase(STAGE, &what, self.regions.len() as u64);
        f()?;
        self.progress.advance(STAGE, self.regions.len() as u64);
        Ok(())
    }

    /// One pass over the regions `wanted` accepts (every one without it), in windows of about
    /// `window_bytes` of contours, each region made by `read` (the index of its entry in
    /// `regions`) in parallel on the current pool; `f` is also told whether the window holds
    /// every region.
    fn serve_as<T: Send>(
        &mut self,
        wanted: Option<&(dyn Fn(SpanKey) -> bool + Sync)>,
        read: impl Fn(&JournalRegions, usize) -> std::io::Result<T> + Sync,
        f: &mut dyn FnMut(Vec<T>, bool) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        self.passes += 1;
        let what = format!("regions, pass {}", self.passes);
        let served: Vec<usize> = (0..self.regions.len())
            .filter(|&r| wanted.is_none_or(|w| w(self.regions[r].0)))
            .collect();
        self.progress.phase(STAGE, &what, served.len() as u64);
        // Windows of whole regions, each at most `window_bytes` of contours unless a single
        // region is larger; a window's regions are read in parallel on the current pool (one
        // positioned read per contour, so the file is shared).
        let mut windows: Vec<std::ops::Range<usize>> = Vec::new();
        let (mut start, mut bytes) = (0, 0u64);
        for (k, &r) in served.iter().enumerate() {
            let (_, first, count) = self.regions[r];
            let size: u64 = self.locations[first as usize..(first + count) as usize]
                .iter()
                .map(|&(_, w)| w as u64 * 4)
                .sum();
            if k > start && bytes + size > self.window_bytes {
                windows.push(start..k);
                (start, bytes) = (k, 0);
            }
            bytes += size;
        }
        if start < served.len() {
            windows.push(start..served.len());
        }
        let whole = windows.len() == 1 && served.len() == self.regions.len();
        for range in windows {
            if range.start > 0 {
                if self
                    .interrupt
                    .as_ref()
                    .is_some_and(|i| i.load(Ordering::Relaxed))
                {
                    self.interrupted = true;
                    return Err(PolygonError::Source("interrupted".into()));
                }
                self.progress.advance(STAGE, range.start as u64);
            }
            let this = &*self;
            let window: Result<Vec<T>, std::io::Error> =
                served[range].par_iter().map(|&r| read(this, r)).collect();
            match window {
                Ok(window) => f(window, whole)?,
                Err(e) => {
                    let message = format!("{}: {e}", self.path.display());
                    self.failure = Some(e);
                    return Err(PolygonError::Source(message));
                }
            }
        }
        self.progress.advance(STAGE, served.len() as u64);
        Ok(())
    }
}

/// One process's share of the regions in a distributed polygon stage: the regions whose ids
/// are at least `first` (None: from the first) and below `end` (None: to the last), or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionPart {
    pub first: Option<SpanKey>,
    pub end: Option<SpanKey>,
    pub empty: bool,
}

impl RegionPart {
    /// Whether the region `id` is in this part.
    pub fn holds(&self, id: SpanKey) -> bool {
        !self.empty && self.first.is_none_or(|f| id >= f) && self.end.is_none_or(|e| id < e)
    }
}

/// Floor heights for height detail, read from the floor journal the voxelize stage wrote
/// (`work/floors/`): a tile's floors are decompressed when first asked for and kept in a
/// cache of `max_bytes` (least recently used out first). Reads and decompression happen
/// outside the cache's lock, so the polygon stage's threads wait for each other only to look
/// a tile up.
pub(crate) struct SpanHeights {
    /// Tells this instance's tiles apart in each thread's last-tile slot.
    id: u64,
    frame: GridFrame,
    /// Farthest a floor may be from the height asked near [voxels] (less than half the
    /// agent's height, so never the floor above or below).
    reach: u32,
    max_bytes: u64,
    journal: Journal,
    path: PathBuf,
    state: Mutex<HeightCache>,
}

thread_local! {
    /// The floors a thread read last: which [`SpanHeights`], which tile.
    static LAST_TILE: std::cell::RefCell<Option<(u64, u32, Arc<TileFloors>)>> =
        const { std::cell::RefCell::new(None) };
}

struct HeightCache {
    tiles: HashMap<u32, (Arc<TileFloors>, u64)>,
    bytes: u64,
    clock: u64,
    failed: Option<BakeError>,
}

impl SpanHeights {
    /// Opens the floors of `journal_path` (a complete floor journal); floors farther than
    /// `reach` from the height asked for are never answered.
    pub(crate) fn open(
        journal_path: &Path,
        frame: &GridFrame,
        reach: u32,
        max_bytes: u64,
    ) -> Result<SpanHeights, BakeError> {
        let journal = Journal::open_complete(journal_path, crate::voxelize::FLOORS_KIND)?;
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Ok(SpanHeights {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            frame: frame.clone(),
            reach,
            max_bytes,
            journal,
            path: journal_path.to_path_buf(),
            state: Mutex::new(HeightCache {
                tiles: HashMap::new(),
                bytes: 0,
                clock: 0,
                failed: None,
            }),
        })
    }

    /// The walkable floor [voxels] in cell `(x, y)` nearest `near`, within the reach, or its
    /// lowest walkable floor (a column's floors are sorted upward).
    pub(crate) fn height(&self, x: i32, y: i32, floor: Floor) -> Option<f64> {
        let f = &self.frame;
        if x < 0 || y < 0 || x as u32 >= f.cells[0] || y as u32 >= f.cells[1] {
            return None;
        }
        let tile = TileCoord {
            x: x as u32 / f.tile_size,
            y: y as u32 / f.tile_size,
        };
        let key = f.tile_index(tile) as u32;
        // Samples come in runs over one tile: each thread keeps the tile it read last, so a
        // lookup takes neither the cache's lock nor a reference count shared between threads.
        LAST_TILE.with(|last| {
            let mut last = last.borrow_mut();
            if !matches!(&*last, Some((id, k, _)) if *id == self.id && *k == key) {
                *last = Some((self.id, key, self.tile(key)?));
            }
            let (_, _, floors) = last.as_ref()?;
            let near = match floor {
                Floor::Ground => return floors.at(x, y).first().map(|&z| z as f64),
                Floor::Near(near) => near,
            };
            floors
                .at(x, y)
                .iter()
                .map(|&z| z as f64)
                .filter(|&z| (z - near).abs() <= self.reach as f64)
                .min_by(|a, b| {
                    (a - near)
                        .abs()
                        .total_cmp(&(b - near).abs())
                        .then(a.total_cmp(b))
                })
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HeightCache> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn tile(&self, key: u32) -> Option<Arc<TileFloors>> {
        {
            let mut st = self.lock();
            st.clock += 1;
            let now = st.clock;
            if let Some((floors, used)) = st.tiles.get_mut(&key) {
                *used = now;
                return Some(floors.clone());
            }
        }
        if self.journal.raw_len(key) == 0 {
            return None; // a tile without triangles has no record
        }
        let read = self
            .journal
            .read(key)
            .map_err(BakeError::from)
            .and_then(|bytes| {
                TileFloors::decode(&bytes).map_err(|e| BakeError::Corrupt {
                    path: self.path.clone(),
                    message: format!("tile {key}: {e}"),
                })
            });
        let mut st = self.lock();
        let floors = match read {
            Ok(floors) => Arc::new(floors),
            Err(e) => {
                st.failed.get_or_insert(e);
                return None;
            }
        };
        if let Some((cached, _)) = st.tiles.get(&key) {
            return Some(cached.clone()); // another thread read it meanwhile
        }
        let size = floors.byte_size() as u64;
        while st.bytes + size > self.max_bytes && !st.tiles.is_empty() {
            let oldest = *st
                .tiles
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .unwrap()
                .0;
            if let Some((f, _)) = st.tiles.remove(&oldest) {
                st.bytes -= f.byte_size() as u64;
            }
        }
        st.bytes += size;
        let now = st.clock;
        st.tiles.insert(key, (floors.clone(), now));
        Some(floors)
    }

    /// The first error met reading the floors back (heights were missing from then on).
    pub(crate) fn take_failure(&self) -> Option<BakeError> {
        self.lock().failed.take()
    }
}
