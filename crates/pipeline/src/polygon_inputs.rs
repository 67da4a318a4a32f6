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
    /// The index kept beside the file for the next stage, if it is kept.
    kept: Option<PathBuf>,
    /// Regions in id order: id, and their contours' `(offset, words)` in `locations`.
    regions: Vec<(SpanKey, u32, u32)>,
    /// Each region's id and a hash of its contours' words as the journal holds them, in the
    /// order of `regions` ([`RegionSource::contour_keys`]).
    keys: Vec<(SpanKey, u64)>,
    locations: Vec<(u64, u32)>,
    /// Each contour's hash, beside its location: what is read back is checked against it.
    hashes: Vec<u64>,
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

/// What one tile record of a region journal gave the contour file: the record's digest
/// ([`Journal::digest`]), its regions and members, and its contours (tile, local region,
/// first word in the file, words, hash).
struct TileLaid {
    digest: u64,
    regions: Vec<(SpanKey, Vec<(TileCoord, u32)>)>,
    contours: Vec<(TileCoord, u32, u64, u32, u64)>,
}

impl TileLaid {
    fn words(&self) -> u64 {
        self.contours.iter().map(|c| u64::from(c.3)).sum()
    }
}

/// The index of a contour file kept from one polygon stage to the next
/// (`work/contours-index.bin`, sealed): how many words of the file it describes, and each
/// tile record's [`TileLaid`].
struct ContourIndex {
    words: u64,
    tiles: HashMap<u32, TileLaid>,
}

const CONTOUR_INDEX_MAGIC: &[u8; 8] = b"TSCNTIDX";
const CONTOUR_INDEX_VERSION: u32 = 1;

impl ContourIndex {
    /// The index at `path`, when it is whole and the file at `spill` holds every word it
    /// describes; None otherwise (the stage then lays every tile out again).
    fn read(path: &Path, spill: &Path) -> Option<ContourIndex> {
        use tessera_artifacts::codec::{unseal, Reader};
        let bytes = std::fs::read(path).ok()?;
        let payload = unseal(
            &bytes,
            CONTOUR_INDEX_MAGIC,
            CONTOUR_INDEX_VERSION,
            "contour index",
        )
        .ok()?;
        let r = &mut Reader::new(payload, "contour index");
        let words = r.u64().ok()?;
        if std::fs::metadata(spill).ok()?.len() < words.checked_mul(4)? {
            return None;
        }
        let n = r.count(4 + 8 + 8 + 8).ok()?;
        let mut tiles = HashMap::with_capacity(n);
        let coord = |r: &mut Reader| -> Option<TileCoord> {
            Some(TileCoord {
                x: r.u32().ok()?,
                y: r.u32().ok()?,
            })
        };
        for _ in 0..n {
            let key = r.u32().ok()?;
            let digest = r.u64().ok()?;
            let nr = r.count(12 + 8).ok()?;
            let mut regions = Vec::with_capacity(nr);
            for _ in 0..nr {
                let id = SpanKey {
                    y: r.i32().ok()?,
                    x: r.i32().ok()?,
                    zmax: r.u32().ok()?,
                };
                let nm = r.count(12).ok()?;
                let mut members = Vec::with_capacity(nm);
                for _ in 0..nm {
                    members.push((coord(r)?, r.u32().ok()?));
                }
                regions.push((id, members));
            }
            let nc = r.count(8 + 4 + 8 + 4 + 8).ok()?;
            let mut contours = Vec::with_capacity(nc);
            for _ in 0..nc {
                let c = (
                    coord(r)?,
                    r.u32().ok()?,
                    r.u64().ok()?,
                    r.u32().ok()?,
                    r.u64().ok()?,
                );
                if c.2.checked_add(u64::from(c.3))? > words {
                    return None;
                }
                contours.push(c);
            }
            tiles.insert(
                key,
                TileLaid {
                    digest,
                    regions,
                    contours,
                },
            );
        }
        (r.remaining() == 0).then_some(ContourIndex { words, tiles })
    }

    /// Writes the index of a file of `words` words laid out as `tiles` say to `path`.
    fn write(path: &Path, words: u64, tiles: &[(u32, TileLaid)]) -> Result<(), BakeError> {
        let mut w = tessera_artifacts::codec::Writer::sealed(0);
        w.u64(words);
        w.u64(tiles.len() as u64);
        for (key, t) in tiles {
            w.u32(*key);
            w.u64(t.digest);
            w.u64(t.regions.len() as u64);
            for (id, members) in &t.regions {
                w.i32(id.y);
                w.i32(id.x);
                w.u32(id.zmax);
                w.u64(members.len() as u64);
                for (tile, local) in members {
                    w.u32(tile.x);
                    w.u32(tile.y);
                    w.u32(*local);
                }
            }
            w.u64(t.contours.len() as u64);
            for &(tile, region, at, len, hash) in &t.contours {
                w.u32(tile.x);
                w.u32(tile.y);
                w.u32(region);
                w.u64(at);
                w.u32(len);
                w.u64(hash);
            }
        }
        let bytes = w.seal(CONTOUR_INDEX_MAGIC, CONTOUR_INDEX_VERSION);
        tessera_store::write_atomic(path, &bytes)?;
        Ok(())
    }
}

impl JournalRegions {
    /// Indexes `journal_path` (a complete region journal), copying its contours to `path`:
    /// those of every region, or with `part`, those of the regions whose ids lie in it (one
    /// process's share of a distributed polygon stage, [`RegionPart`]). With `kept` (a whole
    /// journal only), `path` and the index at `kept` are kept for the next stage, and a tile
    /// record the last stage indexed there unchanged ([`Journal::digest`]) is taken from them
    /// without being read: its contours are where the last stage wrote them.
    pub(crate) fn open(
        journal_path: &Path,
        path: &Path,
        kept: Option<&Path>,
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
        let kept = kept.filter(|_| part.is_none());
        let keys = journal.keys();
        let digests: Vec<u64> = keys.iter().map(|&k| journal.digest(k)).collect();
        // The last stage's tiles, taken when their records did not change; all made again when
        // the file holds more than twice what would be taken (the rest is left behind).
        let (mut last, mut out) = match kept.and_then(|index| ContourIndex::read(index, path)) {
            Some(index) => {
                let taken: u64 = (keys.iter().zip(&digests))
                    .filter_map(|(k, &d)| index.tiles.get(k).filter(|t| t.digest == d))
                    .map(TileLaid::words)
                    .sum();
                if index.words > 2 * taken + (1 << 20) {
                    (HashMap::new(), None)
                } else {
                    let out = SpillWriter::<u32>::append_after(path, index.words).map_err(io)?;
                    (index.tiles, Some(out))
                }
            }
            None => (HashMap::new(), None),
        };
        let mut out = match out.take() {
            Some(out) => out,
            None => {
                // The index goes before the file it describes is cut.
                if let Some(index) = kept {
                    tessera_store::remove_if_there(index)?;
                }
                SpillWriter::<u32>::create(path).map_err(io)?
            }
        };
        let mut owner: rustc_hash::FxHashMap<(TileCoord, u32), SpanKey> = Default::default();
        let mut found: Vec<(TileCoord, u32, u64, u32, u64)> = Vec::new();
        let mut index = Vec::new();
        progress.phase(STAGE, "contours", keys.len() as u64);
        // Tiles decoded, and their contours laid out as words and hashed, in parallel a small
        // group at a time (a few tiles' contours in memory), then written in tile order.
        let group = 16 * rayon::current_num_threads();
        let mut done = 0;
        for (keys, digests) in keys.chunks(group).zip(digests.chunks(group)) {
            if interrupt
                .as_ref()
                .is_some_and(|i| i.load(Ordering::Relaxed))
            {
                return Err(BakeError::Interrupted);
            }
            progress.advance(STAGE, done as u64);
            done += keys.len();
            let taken = |key: u32, digest: u64| last.get(&key).is_some_and(|t| t.digest == digest);
            let batches: Vec<Result<Option<LaidOut>, BakeError>> = (keys.par_iter().zip(digests))
                .map(|(&key, &digest)| {
                    if taken(key, digest) {
                        return Ok(None);
                    }
                    let batch = RegionBatch::decode(&journal.read(key)?)
                        .map_err(|e| corrupt(format!("tile {key}: {e}")))?;
                    Ok(Some(LaidOut::of(batch)))
                })
                .collect();
            for ((&key, &digest), batch) in keys.iter().zip(digests).zip(batches) {
                let tile = match batch? {
                    // (Taken once: a key listed twice has more than one record.)
                    None => last
                        .remove(&key)
                        .ok_or_else(|| corrupt(format!("tile {key}: more than one record")))?,
                    Some(LaidOut {
                        regions,
                        words,
                        contours,
                    }) => {
                        let base = out.len();
                        out.extend(&words).map_err(io)?;
                        let contours = contours
                            .into_iter()
                            .map(|(tile, region, at, len, hash)| {
                                (tile, region, base + at, len, hash)
                            })
                            .collect();
                        TileLaid {
                            digest,
                            regions,
                            contours,
                        }
                    }
                };
                for (id, members) in &tile.regions {
                    for &m in members {
                        owner.insert(m, *id);
                    }
                }
                found.extend(tile.contours.iter().copied());
                if kept.is_some() {
                    index.push((key, tile));
                }
            }
        }
        drop(last);
        let spill: Spill<u32> = out.finish().map_err(io)?;
        if let Some(at) = kept {
            // The file's words durable before the index that names them.
            File::open(path).and_then(|f| f.sync_data()).map_err(io)?;
            ContourIndex::write(at, spill.len(), &index)?;
        }
        drop(index);
        // Contours by region id, then in the order they were made in (tile by tile): where
        // they were written no longer tells, once a file is appended to.
        let mut placed: Vec<(SpanKey, u64, u64, u32, u64)> = Vec::with_capacity(found.len());
        for (seq, (tile, local, at, words, hash)) in found.into_iter().enumerate() {
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
                placed.push((id, seq as u64, at, words, hash));
            }
        }
        drop(owner);
        placed.sort_unstable();
        let mut regions: Vec<(SpanKey, u32, u32)> = Vec::new();
        let mut locations = Vec::with_capacity(placed.len());
        let mut hashes = Vec::with_capacity(placed.len());
        for (id, _, at, words, hash) in placed {
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
            kept: kept.map(Path::to_path_buf),
            regions,
            keys,
            locations,
            hashes,
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
        let range = first as usize..(first + count) as usize;
        for (&(at, words), &hash) in self.locations[range.clone()]
            .iter()
            .zip(&self.hashes[range])
        {
            let mut buf = vec![0u32; words as usize];
            self.file
                .read_exact_at(bytemuck::cast_slice_mut(&mut buf), at * 4)?;
            if xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(&buf)) != hash {
                // Damaged since it was written: not taken again by the next stage either.
                if let Some(index) = &self.kept {
                    let _ = std::fs::remove_file(index);
                }
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("a contour of region {id:?} does not match its hash (damaged)"),
                ));
            }
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

    /// Deletes the scratch file, unless it is kept for the next stage.
    pub(crate) fn remove(self) {
        if self.kept.is_none() {
            let _ = std::fs::remove_file(&self.path);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_artifacts::{MergedRegion, NO_NEIGHBOUR};

    fn square(tile: TileCoord, region: u32, x0: i32, side: i32) -> Contour {
        Contour {
            tile,
            region,
            level: 0,
            points: vec![(x0, 0), (x0 + side, 0), (x0 + side, side), (x0, side)],
            heights: vec![3; 4],
            neighbours: vec![NO_NEIGHBOUR; 4],
        }
    }

    /// A region journal of four tiles, each with a square region of its own; the region of
    /// tiles 1 and 2 spans both (one contour in each). `side` sizes tile 2's squares.
    fn journal(path: &Path, side: i32) {
        let _ = std::fs::remove_file(path);
        let mut j = Journal::open(path, crate::REGIONS_KIND, 7, b"grid").unwrap();
        for k in 0..4u32 {
            let tile = TileCoord { x: k, y: 0 };
            let s = if k == 2 { side } else { 2 };
            let mut regions = vec![MergedRegion {
                id: SpanKey {
                    y: 0,
                    x: 10 * k as i32,
                    zmax: 3,
                },
                spans: 4,
                zmin: 3,
                zmax: 3,
                members: vec![(tile, 0)],
            }];
            let mut contours = vec![square(tile, 0, 10 * k as i32, s)];
            if k == 1 {
                regions.push(MergedRegion {
                    id: SpanKey {
                        y: 5,
                        x: 0,
                        zmax: 3,
                    },
                    spans: 8,
                    zmin: 3,
                    zmax: 3,
                    members: vec![(tile, 1), (TileCoord { x: 2, y: 0 }, 1)],
                });
            }
            if k == 1 || k == 2 {
                contours.push(square(tile, 1, 10 * k as i32 + 5, s));
            }
            let batch = RegionBatch {
                regions,
                contours,
                closings: Vec::new(),
            };
            let raw = batch.encode();
            j.append_stored(k, &tessera_store::compress(&raw), raw.len())
                .unwrap();
        }
        j.finish().unwrap();
    }

    fn open(journal: &Path, words: &Path, kept: Option<&Path>) -> JournalRegions {
        JournalRegions::open(
            journal,
            words,
            kept,
            1 << 20,
            &Progress::quiet(),
            None,
            None,
        )
        .unwrap()
    }

    /// Every region served, and the contour keys, as text.
    fn served(source: &mut JournalRegions) -> Result<String, PolygonError> {
        let mut all = Vec::new();
        source.for_each_window(&mut |w| {
            all.extend(w.iter().cloned());
            Ok(())
        })?;
        Ok(format!("{all:?} {:?}", source.contour_keys()))
    }

    #[test]
    fn a_kept_contour_file_takes_unchanged_tiles_unread_and_lays_out_the_changed_ones() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (j, words, index) = (d.join("regions"), d.join("words"), d.join("index"));
        let len = || std::fs::metadata(d.join("words")).unwrap().len();
        // Made afresh, without an index: what every open must serve.
        let fresh = |side: i32| {
            journal(&j, side);
            let mut s = open(&j, &d.join("fresh"), None);
            let text = served(&mut s).unwrap();
            s.remove();
            assert!(!d.join("fresh").exists(), "scratch removed");
            text
        };
        let (before, after) = (fresh(2), fresh(3));
        assert_ne!(before, after);
        journal(&j, 2);
        let mut s = open(&j, &words, Some(&index));
        assert_eq!(served(&mut s).unwrap(), before);
        s.remove();
        let whole = len();
        assert!(index.exists() && whole == 6 * 21 * 4, "kept: {whole} bytes");
        // Tile 2 changed: its two contours appended, the rest taken where they are.
        journal(&j, 3);
        let mut s = open(&j, &words, Some(&index));
        assert_eq!(served(&mut s).unwrap(), after);
        assert_eq!(len(), whole + 2 * 21 * 4);
        // Nothing changed: nothing written.
        let mut s = open(&j, &words, Some(&index));
        assert_eq!(served(&mut s).unwrap(), after);
        assert_eq!(len(), whole + 2 * 21 * 4);
        drop(s);

        // A word of a taken contour damaged: refused when read, and the index dropped, so
        // that the next stage lays every tile out again.
        let mut bytes = std::fs::read(&words).unwrap();
        bytes[5 * 4] ^= 1;
        std::fs::write(&words, &bytes).unwrap();
        let mut s = open(&j, &words, Some(&index));
        let e = served(&mut s).unwrap_err().to_string();
        assert!(e.contains("damaged"), "{e}");
        assert!(!index.exists());
        let mut s = open(&j, &words, Some(&index));
        assert_eq!(served(&mut s).unwrap(), after);
        assert_eq!(len(), whole, "laid out afresh");

        // A damaged index is not taken: every tile laid out again.
        let mut bytes = std::fs::read(&index).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&index, &bytes).unwrap();
        journal(&j, 2);
        let mut s = open(&j, &words, Some(&index));
        assert_eq!(served(&mut s).unwrap(), before);
        assert_eq!(len(), whole);
        // The file cut short of what the index names: laid out again too.
        journal(&j, 3);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&words)
            .unwrap()
            .set_len(whole - 4)
            .unwrap();
        let mut s = open(&j, &words, Some(&index));
        assert_eq!(served(&mut s).unwrap(), after);
        assert_eq!(len(), whole);
    }
}
