//! The polygons of each region kept from one polygon stage to the next, so that a rebake of a
//! changed scene polygonizes only the regions whose input changed (issue 19).
//!
//! `work/region-polygons.pack` holds, for every region of the last polygon stage (the other
//! processes of a distributed bake send each region's key with its polygons), its polygons as
//! the assembler took them (height detail done) under its key:
//! a hash of the region's contours and the simplification points restored on them
//! ([`tessera_polygons::Reuse`]) and, with height detail, of the triangles of every tile under
//! the region (the tile hashes of the voxelize stage: the floors detail reads come from them).
//! With height detail a chunk holds the tile hashes the stage's detail read: a region made
//! again takes the detail of each of its polygons whose corners its last record had, over
//! tiles whose hashes did not change ([`tessera_polygons::detail::KeptDetails`]).
//! The last chunk is the index: every region's id, key and the extent of its contours, in
//! region order. A region's input (a hash of its contours' key from the contours phase and of
//! the points restored on its sections) names its contours, so a region whose key over the
//! recorded extent is the one kept is taken without its contours being read. The header holds
//! the grid and the settings: a pack made under others is not reused.
//!
//! Likewise the hierarchy's table of lengths of every cluster: `work/cluster-lengths.bin`
//! holds each cluster's table under its key ([`tessera_navgraph::KeptLengths`]), which the
//! next polygon stage reads ([`KeptTables`]) while it writes its own beside it
//! ([`ClusterTables`]).
//!
//! A polygon stage under a new key moves the pack to `work/previous-polygons.pack` (a stage
//! resumed after an interruption finds it there), takes from it each region whose id and key
//! it finds again, writes the new pack as it goes, and removes the previous one once the
//! navmesh is written. The kept polygons are those a fresh run would make: the navmesh is
//! byte-identical to a fresh bake's. In a distributed bake process 0 moves the pack before it
//! gives out the regions, and every process takes its own share's from it ([`Kept::of_peer`]).

use std::path::Path;
use std::sync::Arc;

use tessera_artifacts::codec::{Reader, Writer};
use tessera_artifacts::{GridFrame, SpanKey};
use tessera_polygons::{FirstRound, RegionOutput, Reuse, Sealed};
use tessera_store::{Journal, PackReader, PackWriter};

use crate::keys::StageKey;
use crate::polygon_parts::{decode, encode};
use crate::voxelize::HASHES_KIND;
use crate::{BakeError, BakeLayout};

/// Pack kind of the kept polygons.
const KIND: &[u8; 8] = b"TSRPOLY\0";
/// The chunk key of the index.
const INDEX: u32 = u32::MAX;
/// The chunk key of every region's first round of simplification ([`FirstRounds`]), here
/// and in the part of a distributed polygon stage.
pub(crate) const FIRST_ROUNDS: u32 = u32::MAX - 1;
/// The chunk key of the tile hashes the stage's height detail read ([`Kept`]'s `tiles`).
const TILE_HASHES: u32 = u32::MAX - 2;
/// Bytes of one index entry: id (y, x, zmax), key and the extent of the region's contours
/// (lo x, lo y, hi x, hi y).
const ENTRY: usize = 4 + 4 + 4 + 8 + 16;
/// Cells around a region's contours whose floors its height detail may read.
const DETAIL_REACH: i32 = 2;

/// The header of the pack: the grid and a key of everything else a region's polygons depend
/// on (the settings, and this record's layout).
pub(crate) fn blob(frame: &GridFrame, settings: u64) -> Vec<u8> {
    let mut b = frame.encode();
    let key = StageKey::new("region polygons")
        .reads("record version", &4u32)
        .reads("settings", &settings)
        .finish();
    b.extend_from_slice(&key.to_le_bytes());
    b
}

/// A region's entry in the index: id, key and the extent of its contours.
type IndexEntry = (SpanKey, u64, [i32; 4]);

/// The last stage's kept polygons, and what a region's key reads.
pub(crate) struct Kept {
    /// The last stage's pack and its index (id, key, extent), sorted by id (None: nothing
    /// kept).
    last: Option<(PackReader, Vec<IndexEntry>)>,
    /// The last stage's first rounds of simplification, sorted by id (empty: none kept).
    first: Vec<(SpanKey, u64, FirstRound)>,
    /// This stage's, once the first round is done.
    made: std::sync::Mutex<Vec<(SpanKey, u64, FirstRound)>>,
    frame: GridFrame,
    /// With height detail: the hash of the triangles of every tile that has any.
    tiles: Option<TileHashes>,
    /// The same, of the last stage (from its pack): a polygon over tiles of equal hashes
    /// keeps its detail ([`Reuse::kept_details`]).
    last_tiles: Option<TileHashes>,
}

impl Kept {
    /// Before the stage: keeps the last stage's pack when it was made under `blob`, and reads
    /// the tile hashes of this bake (with height detail). Nothing kept when the pack is
    /// missing, of other settings or damaged: every region is polygonized.
    pub(crate) fn open(
        layout: &BakeLayout,
        frame: &GridFrame,
        blob: &[u8],
        detail: bool,
    ) -> Result<Kept, BakeError> {
        let (current, previous) = (layout.region_polygons(), layout.previous_polygons());
        let io = |path: &Path, e| BakeError::Io(tessera_store::StoreError::io(path, e));
        if current.exists() {
            // A finished stage's pack: the one to reuse from now on (a pack left by an
            // earlier interrupted stage is older).
            std::fs::rename(&current, &previous).map_err(|e| io(&current, e))?;
        }
        Kept::of_peer(layout, frame, blob, detail)
    }

    /// The last stage's pack as process 0 of a distributed bake kept it before it gave out
    /// the regions ([`Kept::open`]), read alone: for another process, which takes from it
    /// the regions of its share whose input is unchanged and hands process 0 the rest
    /// polygonized, each region with its key.
    pub(crate) fn of_peer(
        layout: &BakeLayout,
        frame: &GridFrame,
        blob: &[u8],
        detail: bool,
    ) -> Result<Kept, BakeError> {
        let last = PackReader::open(layout.previous_polygons(), KIND)
            .ok()
            .filter(|p| p.header() == blob)
            .and_then(|p| {
                let index = p.read(INDEX).ok()?;
                if index.len() % ENTRY != 0 {
                    return None;
                }
                let entries: Vec<IndexEntry> = index
                    .chunks_exact(ENTRY)
                    .map(|e| {
                        let word = |k: usize| u32::from_le_bytes(e[k..k + 4].try_into().unwrap());
                        let id = SpanKey {
                            y: word(0) as i32,
                            x: word(4) as i32,
                            zmax: word(8),
                        };
                        let key = u64::from_le_bytes(e[12..20].try_into().unwrap());
                        (id, key, [20, 24, 28, 32].map(|k| word(k) as i32))
                    })
                    .collect();
                // Written in region order, which is id order.
                entries
                    .windows(2)
                    .all(|w| w[0].0 < w[1].0)
                    .then_some((p, entries))
            });
        // (A pack without them, or with a damaged chunk: every region is read in the first
        // round.)
        let first = last
            .as_ref()
            .and_then(|(p, _)| p.read(FIRST_ROUNDS).ok())
            .and_then(|b| FirstRounds::decode(&b))
            .unwrap_or_default();
        let tiles = tile_hashes(layout, frame, detail)?;
        let last_tiles = last
            .as_ref()
            .filter(|_| tiles.is_some())
            .and_then(|(p, _)| p.read(TILE_HASHES).ok())
            .filter(|b| b.len() % 12 == 0)
            .map(|b| {
                b.chunks_exact(12)
                    .map(|w| {
                        let tile = u32::from_le_bytes(w[..4].try_into().unwrap());
                        (tile, u64::from_le_bytes(w[4..].try_into().unwrap()))
                    })
                    .collect()
            });
        Ok(Kept {
            last,
            first,
            made: Default::default(),
            frame: frame.clone(),
            tiles,
            last_tiles,
        })
    }

    /// The first rounds this stage made or took, for the next stage's pack.
    pub(crate) fn take_first_rounds(&self) -> Vec<(SpanKey, u64, FirstRound)> {
        std::mem::take(&mut *self.made.lock().expect("a polygon thread panicked"))
    }

    /// The tile hashes this stage's height detail reads, for the next stage's pack.
    pub(crate) fn tiles(&self) -> Option<&TileHashes> {
        self.tiles.as_ref()
    }

    /// Whether the last stage's polygons were kept under these settings: a rebake.
    pub(crate) fn has_last(&self) -> bool {
        self.last.is_some()
    }

    /// The indices of the tiles within [`DETAIL_REACH`] of `extent` (cells: lo x, lo y, hi
    /// x, hi y; none when empty): those whose floors height detail over it may read.
    fn tiles_within(&self, extent: [i32; 4]) -> impl Iterator<Item = usize> {
        let [tx, ty] = self.frame.tiles();
        let edge = self.frame.tile_size as i32;
        let tile = |c: i32, n: u32| (c.div_euclid(edge)).clamp(0, n as i32 - 1) as u32;
        let [lo_x, lo_y, hi_x, hi_y] = extent;
        let (x0, x1, y0, y1) = if lo_x <= hi_x && lo_y <= hi_y && tx > 0 && ty > 0 {
            (
                tile(lo_x - DETAIL_REACH, tx),
                tile(hi_x + DETAIL_REACH, tx) + 1,
                tile(lo_y - DETAIL_REACH, ty),
                tile(hi_y + DETAIL_REACH, ty) + 1,
            )
        } else {
            (0, 0, 0, 0)
        };
        (y0..y1).flat_map(move |y| (x0..x1).map(move |x| (y * tx + x) as usize))
    }

    /// The last stage's pack, and the number and index entry of region `id`'s record in it.
    fn entry(&self, id: SpanKey) -> Option<(&PackReader, usize, &IndexEntry)> {
        let (pack, index) = self.last.as_ref()?;
        let at = index.binary_search_by(|e| e.0.cmp(&id)).ok()?;
        Some((pack, at, &index[at]))
    }

    /// After the stage: the last stage's pack is no longer needed.
    pub(crate) fn remove(layout: &BakeLayout) {
        let _ = std::fs::remove_file(layout.previous_polygons());
    }
}

/// The hash of the triangles of every tile that has any, by tile index.
pub(crate) type TileHashes = rustc_hash::FxHashMap<u32, u64>;

/// Tile `i`'s hash in `tiles` (0: a tile without triangles).
fn hash_of(tiles: &TileHashes, i: usize) -> u64 {
    u32::try_from(i)
        .ok()
        .and_then(|i| tiles.get(&i))
        .copied()
        .unwrap_or(0)
}

/// With height detail, the hash of every tile's triangles by tile index, from this bake's
/// voxelize stage.
fn tile_hashes(
    layout: &BakeLayout,
    frame: &GridFrame,
    detail: bool,
) -> Result<Option<TileHashes>, BakeError> {
    if !detail {
        return Ok(None);
    }
    let journal = Journal::open_complete(layout.tile_hashes_journal(), HASHES_KIND)?;
    let mut hashes = TileHashes::default();
    for key in journal.keys() {
        let record = journal.read(key)?;
        if let Some(h) = crate::tile_work::TileHash::decode(&record) {
            if (key as usize) < frame.tile_count() {
                hashes.insert(key, h.hash);
            }
        }
    }
    Ok(Some(hashes))
}

impl Reuse for Kept {
    fn key(&self, input: u64, extent: [i32; 4]) -> u64 {
        let Some(tiles) = &self.tiles else {
            return input;
        };
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&input.to_le_bytes());
        for i in self.tiles_within(extent) {
            h.update(&hash_of(tiles, i).to_le_bytes());
        }
        h.digest()
    }

    fn kept_record(&self, id: SpanKey, input: u64) -> Option<Sealed> {
        let (pack, at, &(_, key, extent)) = self.entry(id)?;
        if self.key(input, extent) != key {
            return None;
        }
        // A damaged record is made again, not trusted.
        let (stored, raw_len) = pack.read_stored(at as u32).ok()??;
        Some(Sealed { stored, raw_len })
    }

    fn kept_details(&self, id: SpanKey) -> Option<tessera_polygons::detail::KeptDetails> {
        let (tiles, last_tiles) = (self.tiles.as_ref()?, self.last_tiles.as_ref()?);
        let (pack, at, _) = self.entry(id)?;
        let out = decode(&pack.read(at as u32).ok()?).ok()?;
        if out.id != id {
            return None;
        }
        // A polygon whose heightfield within reach is unchanged.
        tessera_polygons::detail::KeptDetails::of_output(&out, |corners| {
            let extent = tessera_polygons::extent_of(corners.iter().map(|c| (c[0], c[1])));
            self.tiles_within(extent)
                .all(|i| hash_of(tiles, i) == hash_of(last_tiles, i))
        })
    }

    fn unseal(&self, sealed: &Sealed) -> Result<RegionOutput, String> {
        let raw = tessera_store::decompress(&sealed.stored, sealed.raw_len)?;
        decode(&raw).map_err(|e| e.to_string())
    }

    fn first_round(&self, id: SpanKey, contours: u64) -> Option<FirstRound> {
        let at = self.first.binary_search_by_key(&id, |e| e.0).ok()?;
        let (_, key, round) = &self.first[at];
        (*key == contours).then(|| round.clone())
    }

    fn keep_first_rounds(&self, rounds: Vec<(SpanKey, u64, FirstRound)>) {
        *self.made.lock().expect("a polygon thread panicked") = rounds;
    }

    fn seal(&self, out: &RegionOutput) -> Option<Sealed> {
        let raw = encode(out);
        Some(Sealed {
            stored: tessera_store::compress(&raw),
            raw_len: raw.len(),
        })
    }
}

/// The new pack, written as the regions come (in region order).
pub(crate) struct KeptWriter {
    pack: PackWriter,
    index: Vec<u8>,
}

impl KeptWriter {
    pub(crate) fn create(layout: &BakeLayout, blob: &[u8]) -> Result<KeptWriter, BakeError> {
        Ok(KeptWriter {
            pack: PackWriter::create(layout.region_polygons(), KIND, blob)?,
            index: Vec::new(),
        })
    }

    /// Keeps `out` under its key.
    pub(crate) fn add(&mut self, out: &RegionOutput) -> Result<(), BakeError> {
        let n = (self.index.len() / ENTRY) as u32;
        match &out.sealed {
            Some(s) => self.pack.append_stored(n, &s.stored, s.raw_len)?,
            None => self.pack.append(n, &encode(out))?,
        }
        for v in [out.id.y as u32, out.id.x as u32, out.id.zmax] {
            self.index.extend_from_slice(&v.to_le_bytes());
        }
        self.index.extend_from_slice(&out.key.to_le_bytes());
        for v in out.extent {
            self.index.extend_from_slice(&v.to_le_bytes());
        }
        Ok(())
    }

    /// Writes every region's first round (when the stage had them), the tile hashes its
    /// height detail read (with height detail), the index, and puts the pack in place.
    pub(crate) fn finish(
        mut self,
        first: &[(SpanKey, u64, FirstRound)],
        tiles: Option<&TileHashes>,
    ) -> Result<(), BakeError> {
        if !first.is_empty() {
            self.pack
                .append(FIRST_ROUNDS, &FirstRounds::encode(first))?;
        }
        if let Some(tiles) = tiles {
            let mut sorted: Vec<(u32, u64)> = tiles.iter().map(|(&t, &h)| (t, h)).collect();
            sorted.sort_unstable();
            let b: Vec<u8> = sorted
                .iter()
                .flat_map(|(t, h)| t.to_le_bytes().into_iter().chain(h.to_le_bytes()))
                .collect();
            self.pack.append(TILE_HASHES, &b)?;
        }
        self.pack.append(INDEX, &self.index)?;
        self.pack.finish()?;
        Ok(())
    }
}

/// The chunk of every region's first round: the count, then per region, in id order, its id
/// (y, x, zmax), its contours' key, the count and the points asked back (name as two words,
/// position), the count and the fingerprints of its sections (the artifacts' codec).
pub(crate) struct FirstRounds;

impl FirstRounds {
    pub(crate) fn encode(rounds: &[(SpanKey, u64, FirstRound)]) -> Vec<u8> {
        let mut w = Writer::default();
        w.u64(rounds.len() as u64);
        for (id, key, round) in rounds {
            w.i32(id.y);
            w.i32(id.x);
            w.u32(id.zmax);
            w.u64(*key);
            w.u64(round.asked.len() as u64);
            for &(name, k) in &round.asked {
                w.u64(name as u64);
                w.u64((name >> 64) as u64);
                w.u32(k);
            }
            w.u64(round.prints.len() as u64);
            for &p in &round.prints {
                w.u32(p);
            }
        }
        w.bytes
    }

    /// None when the bytes are not a whole chunk of ids in order.
    pub(crate) fn decode(b: &[u8]) -> Option<Vec<(SpanKey, u64, FirstRound)>> {
        let r = &mut Reader::new(b, "first rounds of simplification");
        // Each region takes at least its id, key and two counts.
        let count = r.count(36).ok()?;
        let mut out: Vec<(SpanKey, u64, FirstRound)> = Vec::with_capacity(count);
        for _ in 0..count {
            let id = SpanKey {
                y: r.i32().ok()?,
                x: r.i32().ok()?,
                zmax: r.u32().ok()?,
            };
            let key = r.u64().ok()?;
            let asks = r.count(20).ok()?;
            let asked = (0..asks)
                .map(|_| {
                    let (lo, hi) = (r.u64().ok()?, r.u64().ok()?);
                    Some((u128::from(lo) | u128::from(hi) << 64, r.u32().ok()?))
                })
                .collect::<Option<Vec<_>>>()?;
            let n = r.count(4).ok()?;
            let prints = r.u32s(n).ok()?;
            if out.last().is_some_and(|l| l.0 >= id) {
                return None;
            }
            out.push((id, key, FirstRound { asked, prints }));
        }
        (r.remaining() == 0).then_some(out)
    }
}

/// Pack kind of `work/cluster-lengths.bin`: one chunk per cluster, in cluster order, its `n *
/// n` lengths (f32, stored raw), keyed by its number; the [`INDEX`] chunk lists every
/// cluster's key and entrance count `n` (u64, u32).
const LENGTHS_KIND: &[u8; 8] = b"TSCLENS\0";

/// The last polygon stage's tables of lengths by cluster key, from `work/cluster-lengths.bin`
/// (held open: the next stage's pack replaces it by a rename, so this one stays readable
/// while that one is written). A table depends on its cluster alone (its key says so), not
/// on the navmesh it was written with.
pub(crate) struct KeptTables {
    pack: PackReader,
    /// Each key's chunk and entrance count.
    by_key: rustc_hash::FxHashMap<u64, (u32, usize)>,
}

impl KeptTables {
    /// The last stage's tables; None when the pack is missing, cut short or its index
    /// damaged (every table is then searched). Each table is checked when it is taken: a
    /// damaged one is searched instead.
    pub(crate) fn open(layout: &BakeLayout) -> Option<KeptTables> {
        let pack = PackReader::open(layout.cluster_lengths(), LENGTHS_KIND).ok()?;
        let index = pack.read(INDEX).ok()?;
        if index.len() % 12 != 0 {
            return None;
        }
        let by_key = index
            .chunks_exact(12)
            .enumerate()
            .map(|(c, e)| {
                let key = u64::from_le_bytes(e[..8].try_into().unwrap());
                let n = u32::from_le_bytes(e[8..].try_into().unwrap()) as usize;
                (key, (c as u32, n))
            })
            .collect();
        Some(KeptTables { pack, by_key })
    }
}

impl tessera_navgraph::KeptLengths for KeptTables {
    fn kept(&self, key: u64, n: usize) -> Option<Vec<f32>> {
        let &(chunk, m) = self.by_key.get(&key)?;
        let b = self.pack.read(chunk).ok().filter(|_| m == n)?;
        (b.len() == 4 * n * n).then(|| {
            b.chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect()
        })
    }
}

/// This stage's tables of lengths, written to `work/cluster-lengths.bin` as the hierarchy
/// makes or takes them, and the index of their keys and entrance counts.
struct TablesWriter {
    pack: PackWriter,
    index: Vec<u8>,
}

/// The hierarchy's tables of lengths for one polygon stage: the last stage's, opened on a
/// thread of their own while the stage runs (the stage needs them only once its hierarchy is
/// measured) and taken at the first table asked for; and this stage's, written for the next.
pub(crate) struct ClusterTables {
    opening: std::sync::Mutex<Option<std::thread::JoinHandle<Option<KeptTables>>>>,
    tables: std::sync::OnceLock<Option<KeptTables>>,
    next: std::sync::Mutex<Option<TablesWriter>>,
}

impl ClusterTables {
    /// With `last` (a rebake), the last stage's tables are opened too.
    pub(crate) fn open(layout: &BakeLayout, last: bool) -> Result<Arc<ClusterTables>, BakeError> {
        let pack = PackWriter::create(layout.cluster_lengths(), LENGTHS_KIND, &[])?;
        let opening = last.then(|| {
            let layout = layout.clone();
            std::thread::spawn(move || KeptTables::open(&layout))
        });
        Ok(Arc::new(ClusterTables {
            opening: std::sync::Mutex::new(opening),
            tables: std::sync::OnceLock::new(),
            next: std::sync::Mutex::new(Some(TablesWriter {
                pack,
                index: Vec::new(),
            })),
        }))
    }

    fn tables(&self) -> Option<&KeptTables> {
        self.tables
            .get_or_init(|| {
                let handle = self.opening.lock().ok()?.take()?;
                handle.join().ok().flatten()
            })
            .as_ref()
    }

    /// Puts this stage's pack in place: before the navmesh (a table is checked by its key and
    /// the pack by its checksums, so neither needs the other), unsynced like every pack.
    pub(crate) fn commit(&self) -> Result<(), BakeError> {
        let Some(mut w) = self
            .next
            .lock()
            .expect("a hierarchy thread panicked")
            .take()
        else {
            return Ok(());
        };
        w.pack.append(INDEX, &w.index)?;
        w.pack.finish()?;
        Ok(())
    }
}

/// A [`ClusterTables`] the assembler holds while the stage keeps its own.
pub(crate) struct SharedTables(pub(crate) Arc<ClusterTables>);

impl tessera_navgraph::KeptLengths for SharedTables {
    fn kept(&self, key: u64, n: usize) -> Option<Vec<f32>> {
        self.0.tables()?.kept(key, n)
    }

    fn keep(&self, key: u64, table: &[f32]) -> std::io::Result<()> {
        let mut next = self.0.next.lock().expect("a hierarchy thread panicked");
        let Some(w) = next.as_mut() else {
            return Ok(());
        };
        let n = (table.len() as f64).sqrt() as usize;
        debug_assert_eq!(n * n, table.len());
        let chunk = (w.index.len() / 12) as u32;
        w.index.extend_from_slice(&key.to_le_bytes());
        w.index.extend_from_slice(&(n as u32).to_le_bytes());
        let b: Vec<u8> = table.iter().flat_map(|v| v.to_le_bytes()).collect();
        // Stored raw: lengths barely compress, and the thread writing the hierarchy pays.
        w.pack
            .append_stored(chunk, &b, b.len())
            .map_err(std::io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_of_lengths_come_back_by_key_and_damage_is_refused() {
        use tessera_navgraph::KeptLengths;
        let dir = tempfile::tempdir().unwrap();
        let layout = BakeLayout::new(dir.path());
        std::fs::create_dir_all(layout.cluster_lengths().parent().unwrap()).unwrap();
        let tables: Vec<(u64, Vec<f32>)> = vec![
            (7, vec![0.0, 1.5, 1.5, 0.0]),
            (u64::MAX, vec![]),
            (3, (0..9).map(|k| k as f32 * 0.25).collect()),
        ];
        let write = |last: bool| {
            let next = ClusterTables::open(&layout, last).unwrap();
            let shared = SharedTables(next.clone());
            for (key, table) in &tables {
                shared.keep(*key, table).unwrap();
            }
            next.commit().unwrap();
            shared
        };
        write(false);
        let kept = KeptTables::open(&layout).unwrap();
        for (key, table) in &tables {
            let n = (table.len() as f64).sqrt() as usize;
            assert_eq!(kept.kept(*key, n).as_ref(), Some(table), "key {key}");
        }
        // Another entrance count, or a key not kept: searched.
        assert_eq!(kept.kept(7, 3), None);
        assert_eq!(kept.kept(8, 2), None);
        // A rebake reads the last file while it writes its own over it.
        let again = write(true);
        assert_eq!(again.kept(3, 3).as_ref(), Some(&tables[2].1));
        // Any byte flipped, or the file cut short: nothing kept.
        let path = layout.cluster_lengths();
        let good = std::fs::read(&path).unwrap();
        for at in [0, 9, good.len() / 2, good.len() - 9, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            std::fs::write(&path, &bad).unwrap();
            assert!(KeptTables::open(&layout).is_none(), "byte {at}");
        }
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(KeptTables::open(&layout).is_none());
    }

    #[test]
    fn first_rounds_survive_their_chunk_and_damage_is_refused() {
        let id = |y, x, zmax| SpanKey { y, x, zmax };
        let rounds = vec![
            (id(-3, 7, 2), 11, FirstRound::default()),
            (
                id(0, 1, u32::MAX),
                u64::MAX,
                FirstRound {
                    asked: vec![(u128::MAX - 1, 4), (5, 0)],
                    prints: vec![9, 0, u32::MAX],
                },
            ),
        ];
        let b = FirstRounds::encode(&rounds);
        assert_eq!(FirstRounds::decode(&b), Some(rounds.clone()));
        // Cut short, one byte too many, or ids out of order: not used.
        assert_eq!(FirstRounds::decode(&b[..b.len() - 1]), None);
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(FirstRounds::decode(&longer), None);
        let swapped = vec![rounds[1].clone(), rounds[0].clone()];
        assert_eq!(FirstRounds::decode(&FirstRounds::encode(&swapped)), None);
    }
}
