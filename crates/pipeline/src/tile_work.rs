//! The voxelize stage's work on one tile: the reader's half (read the tile's triangles, plan
//! the parts it is voxelized in, reserve their memory) and the worker's half (voxelize the
//! parts or decode the checkpoint, assemble, segment into regions, trace contours).

use std::path::Path;
use std::sync::Arc;
use tessera_artifacts::codec::{Reader, Writer};
use tessera_artifacts::{
    CellRect, GridFrame, SpanField, TileContours, TileCoord, TileRegions, TileTriangle, Triangle,
};
use tessera_budget::{MemoryBudget, Reservation};
use tessera_config::VoxelParams;
use tessera_store::JournalReader;

use crate::grid::MIN_BIN_BUFFER;
use crate::voxelize::Raster;
use crate::BakeError;

/// Spans per cell above which the span bound is not believed (a column holding more than this
/// many separate spans is beyond any real scene at these cell heights).
const MAX_SPANS_PER_CELL: u64 = 64;
/// Parts are not split below this side [cells].
const MIN_PART_SIDE: u32 = 16;

/// What a worker does with a tile.
pub(crate) enum Work {
    /// Voxelize the tile's triangles (of these areas) in these parts; `hash`: of the
    /// triangles as binned ([`triangles_hash`]).
    Voxelize {
        triangles: Vec<Triangle>,
        areas: Vec<u8>,
        hash: u64,
        parts: Vec<CellRect>,
    },
    /// The tile's span field is in the checkpoint: decode it instead.
    Recovered,
    /// The last bake voxelized the tile from triangles of hash `hash`, the ones binned now:
    /// its records serve ([`Previous`]), so it was not planned. `untouched`: the merge takes
    /// the tile's batch as the last bake's merge made it (no region of it reaches a changed
    /// tile), so its regions and contours are not even decoded. `linked`: the writer takes
    /// the tile's journal segment over whole, so its span field and floors are not read (nor
    /// its regions record, when untouched).
    Reuse {
        hash: u64,
        untouched: bool,
        linked: bool,
    },
}

/// A tile on its way to a worker, with the memory it holds.
pub(crate) struct TileJob {
    pub(crate) index: u32,
    pub(crate) coord: TileCoord,
    pub(crate) work: Work,
    pub(crate) reservation: Reservation,
}

/// An encoded artifact, compressed for a journal.
#[derive(Default)]
pub(crate) struct Packed {
    pub(crate) bytes: Vec<u8>,
    pub(crate) raw_len: usize,
}

impl Packed {
    /// `encoded`, compressed through the worker's buffer.
    fn of(encoded: &[u8], scratch: &mut Vec<u8>) -> Packed {
        Packed {
            bytes: tessera_store::compress_with(encoded, scratch),
            raw_len: encoded.len(),
        }
    }
}

use tessera_stitch::LocalLink;

/// A finished tile on its way to the writer.
pub(crate) struct TileDone {
    pub(crate) index: u32,
    pub(crate) recovered: bool,
    /// The hash of the triangles it was voxelized from (0 when recovered: the checkpoint
    /// holds it).
    pub(crate) hash: u64,
    /// Its span field and floors were taken from the last bake's, whose triangles were the
    /// same ([`Previous`]).
    pub(crate) reused: bool,
    pub(crate) regions: tessera_artifacts::TileRegions,
    /// The links to other tiles of the process that computed it, matched there (a
    /// distributed bake; `regions.links` holds the rest), and where they were in the list of
    /// the tile's links (`regions_packed` holds them all).
    pub(crate) local: Vec<LocalLink>,
    pub(crate) local_at: Vec<u32>,
    pub(crate) contours: tessera_artifacts::TileContours,
    /// The span field and its floors for the checkpoints, and its regions and contours with
    /// its span counts ([`tile_record`]) (all empty when recovered).
    pub(crate) spans_packed: Packed,
    pub(crate) floors_packed: Packed,
    pub(crate) regions_packed: Packed,
    /// The tile rasterized for a group of agents, for the others' stages
    /// ([`crate::voxelize::Raster::Write`]).
    pub(crate) raster_packed: Option<Packed>,
    /// It was voxelized from the record of the group's first agent, not rasterized here.
    pub(crate) from_record: bool,
    pub(crate) spans: u64,
    pub(crate) walkable: u64,
    pub(crate) _reservation: Reservation,
}

const WIRE_MAGIC: &[u8; 8] = b"TSTILEDN";
pub(crate) const WIRE_VERSION: u32 = 6;

impl TileDone {
    /// The tile as another process's writer needs it (a distributed bake): its compressed span
    /// field, floors and regions record ([`tile_record`]: its regions with every border link,
    /// and its contours), the links matched here and where they were in the tile's list of
    /// links, whether it was reused from the last bake, and for a bake of several agents
    /// whether it came from the group's rasterized record and the record it made for the
    /// group, sealed with a checksum.
    pub(crate) fn to_wire(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.index);
        w.u64(self.hash);
        for packed in [
            &self.spans_packed,
            &self.floors_packed,
            &self.regions_packed,
        ] {
            w.u64(packed.bytes.len() as u64);
            w.bytes.extend_from_slice(&packed.bytes);
            w.u64(packed.raw_len as u64);
        }
        // What the links matched here change at this tile.
        w.u64(self.local.len() as u64);
        for link in &self.local {
            match *link {
                LocalLink::Waits { region, links } => {
                    w.u32(0);
                    w.u32(region);
                    w.u32(links);
                }
                LocalLink::Joins {
                    region,
                    tile,
                    other,
                } => {
                    w.u32(1);
                    w.u32(region);
                    w.u32(tile.x);
                    w.u32(tile.y);
                    w.u32(other);
                }
                LocalLink::Resolves { tile, other, links } => {
                    w.u32(2);
                    w.u32(tile.x);
                    w.u32(tile.y);
                    w.u32(other);
                    w.u32(links);
                }
            }
        }
        w.u64(self.local_at.len() as u64);
        for &i in &self.local_at {
            w.u32(i);
        }
        w.u32(
            u32::from(self.from_record)
                | u32::from(self.raster_packed.is_some()) << 1
                | u32::from(self.reused) << 2,
        );
        if let Some(packed) = &self.raster_packed {
            w.u64(packed.bytes.len() as u64);
            w.bytes.extend_from_slice(&packed.bytes);
            w.u64(packed.raw_len as u64);
        }
        tessera_artifacts::codec::seal(WIRE_MAGIC, WIRE_VERSION, &w.bytes)
    }

    /// Decodes [`TileDone::to_wire`]; `reservation` pays for it while it waits for the writer.
    /// Its regions keep the links the peer did not match, for the merge; its record keeps them
    /// all, for the checkpoint.
    pub(crate) fn from_wire(bytes: &[u8], reservation: Reservation) -> Result<TileDone, String> {
        const A: &str = "tile from a peer";
        let payload = tessera_artifacts::codec::unseal(bytes, WIRE_MAGIC, WIRE_VERSION, A)
            .map_err(|e| e.to_string())?;
        let r = &mut Reader::new(payload, A);
        let fail = |e: tessera_artifacts::ArtifactError| e.to_string();
        let (index, hash) = (r.u32().map_err(fail)?, r.u64().map_err(fail)?);
        let packed = |r: &mut Reader| -> Result<Packed, String> {
            let n = usize::try_from(r.u64().map_err(fail)?).map_err(|e| e.to_string())?;
            let bytes = r.take(n).map_err(fail)?.to_vec();
            let raw_len = usize::try_from(r.u64().map_err(fail)?).map_err(|e| e.to_string())?;
            Ok(Packed { bytes, raw_len })
        };
        let (spans_packed, floors_packed, regions_packed) = (packed(r)?, packed(r)?, packed(r)?);
        let record = tessera_store::decompress(&regions_packed.bytes, regions_packed.raw_len)
            .map_err(|e| format!("{A}: regions record: {e}"))?;
        let (spans, walkable, mut regions, contours) = decode_tile_record(&record)?;
        let entries = r.u64().map_err(fail)?;
        let mut local = Vec::new();
        let mut matched = 0u64;
        for _ in 0..entries {
            let mut word = || r.u32().map_err(fail);
            let link = match word()? {
                0 => LocalLink::Waits {
                    region: word()?,
                    links: word()?,
                },
                1 => LocalLink::Joins {
                    region: word()?,
                    tile: tessera_artifacts::TileCoord {
                        x: word()?,
                        y: word()?,
                    },
                    other: word()?,
                },
                2 => LocalLink::Resolves {
                    tile: tessera_artifacts::TileCoord {
                        x: word()?,
                        y: word()?,
                    },
                    other: word()?,
                    links: word()?,
                },
                k => return Err(format!("{A}: unknown kind {k} of matched links")),
            };
            matched += u64::from(link.links());
            local.push(link);
        }
        let positions = r.u64().map_err(fail)?;
        if positions != matched {
            return Err(format!(
                "{A}: {matched} matched links at {positions} positions"
            ));
        }
        let mut at = Vec::new();
        for _ in 0..positions {
            at.push(r.u32().map_err(fail)? as usize);
        }
        let flags = r.u32().map_err(fail)?;
        if flags > 7 {
            return Err(format!("{A}: unknown flags {flags}"));
        }
        let raster_packed = if flags & 2 != 0 {
            Some(packed(r)?)
        } else {
            None
        };
        if r.remaining() != 0 {
            return Err(format!("{A}: trailing bytes"));
        }
        // The links the peer matched leave the regions' list, as they left it there.
        if !at.is_sorted_by(|a, b| a < b) || at.last().is_some_and(|&i| i >= regions.links.len()) {
            return Err(format!(
                "{A}: positions of matched links out of order or range"
            ));
        }
        let mut next = at.iter().peekable();
        let mut i = 0;
        regions.links.retain(|_| {
            let matched_here = next.next_if(|&&j| j == i).is_some();
            i += 1;
            !matched_here
        });
        let mut done = TileDone::finished(
            (index, false, hash, flags & 4 != 0),
            (regions, contours, spans, walkable),
            [spans_packed, floors_packed, regions_packed],
            (raster_packed, flags & 1 != 0),
            reservation,
        );
        done.local = local;
        Ok(done)
    }
}

/// The hash a tile's voxelization is reused by: of its triangles (the band around it included)
/// as binned, bytes (areas included) and order.
pub(crate) fn triangles_hash(triangles: &[TileTriangle]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(triangles))
}

/// A tile's record in the hash journal: the hash of the triangles it was voxelized from and
/// its span counts (what the stage counts of a tile it takes whole from the last bake).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TileHash {
    pub(crate) hash: u64,
    pub(crate) spans: u64,
    pub(crate) walkable: u64,
}

impl TileHash {
    /// Bytes of a record.
    pub(crate) const LEN: usize = 24;

    pub(crate) fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        for (i, v) in [self.hash, self.spans, self.walkable]
            .into_iter()
            .enumerate()
        {
            b[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// None when `b` is not a record.
    pub(crate) fn decode(b: &[u8]) -> Option<TileHash> {
        let b: &[u8; Self::LEN] = b.try_into().ok()?;
        let word = |i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
        Some(TileHash {
            hash: word(0),
            spans: word(1),
            walkable: word(2),
        })
    }
}

/// The hash ([`triangles_hash`]) of tile `key`'s triangles as binned.
pub(crate) fn tile_hash(tiles: &crate::bin::TilePacks, key: u32) -> Result<u64, BakeError> {
    Ok(triangles_hash(&read_triangles(tiles, key)?))
}

/// Tile `key`'s triangles as binned (not checked).
fn read_triangles(tiles: &crate::bin::TilePacks, key: u32) -> Result<Vec<TileTriangle>, BakeError> {
    const SIZE: usize = std::mem::size_of::<TileTriangle>();
    let raw = tiles.raw_len(key) as usize;
    if !raw.is_multiple_of(SIZE) {
        return Err(BakeError::Corrupt {
            path: tiles.path().to_path_buf(),
            message: format!("tile {key}: {raw} bytes is not a whole number of triangles"),
        });
    }
    let mut records = vec![bytemuck::Zeroable::zeroed(); raw / SIZE];
    tiles.read_into(key, bytemuck::cast_slice_mut(&mut records))?;
    Ok(records)
}

/// A tile's span field (raw, to decode) and its span field and floors as the journals store
/// them (to copy); and its regions record as stored, when the last bake kept one.
struct SpansAndFloors {
    spans: Vec<u8>,
    spans_packed: Packed,
    floors_packed: Packed,
    regions_packed: Option<Packed>,
}

/// A tile's regions (every border link), contours and span counts as its tile-regions journal
/// record holds them: what the merge and the summary take from a tile.
pub(crate) fn tile_record(spans: u64, walkable: u64, regions: &[u8], contours: &[u8]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(spans);
    w.u64(walkable);
    w.u64(regions.len() as u64);
    w.bytes.extend_from_slice(regions);
    w.bytes.extend_from_slice(contours);
    w.bytes
}

/// Decodes [`tile_record`]: (spans, walkable spans, regions, contours).
fn decode_tile_record(
    bytes: &[u8],
) -> Result<
    (
        u64,
        u64,
        tessera_artifacts::TileRegions,
        tessera_artifacts::TileContours,
    ),
    String,
> {
    let r = &mut Reader::new(bytes, "tile regions record");
    let fail = |e: tessera_artifacts::ArtifactError| e.to_string();
    let (spans, walkable) = (r.u64().map_err(fail)?, r.u64().map_err(fail)?);
    let n = usize::try_from(r.u64().map_err(fail)?).map_err(|e| e.to_string())?;
    let regions = tessera_artifacts::TileRegions::decode(r.take(n).map_err(fail)?).map_err(fail)?;
    let contours = tessera_artifacts::TileContours::decode(r.take(r.remaining()).map_err(fail)?)
        .map_err(fail)?;
    Ok((spans, walkable, regions, contours))
}

/// The span, floor and hash journals of the last finished voxelization, when its grid and
/// voxel settings are this one's: a tile whose triangles hash alike takes its span field and
/// floors from them instead of being voxelized again (an incremental rebake), and its regions
/// and contours from its tile-regions journal (when there is one) instead of segmenting and
/// tracing the field again.
pub(crate) struct Previous {
    pub(crate) hashes: std::collections::HashMap<u32, TileHash>,
    /// The journal `hashes` was read from.
    pub(crate) hash_journal: JournalReader,
    /// Each tile's digest of how its triangles were stored then (none when the file is
    /// missing or of another voxelization).
    pub(crate) digests: std::collections::HashMap<u32, u64>,
    pub(crate) spans: JournalReader,
    pub(crate) floors: JournalReader,
    pub(crate) regions: Option<JournalReader>,
    pub(crate) spans_path: std::path::PathBuf,
}

impl Previous {
    /// Whether tile `key`'s records serve for triangles of hash `hash`: the last bake
    /// voxelized it from the same and kept its span field, floors and regions record. Then the
    /// bytes taking them costs at most (their sizes once read, the record's three times over
    /// for its decoded regions and contours).
    pub(crate) fn serves(&self, key: u32, hash: u64) -> Option<u64> {
        let regions = self.regions.as_ref()?.raw_len(key);
        let (spans, floors) = (self.spans.raw_len(key), self.floors.raw_len(key));
        (self.hash_of(key) == Some(hash) && regions > 0 && spans > 0 && floors > 0)
            .then_some(spans + floors + 3 * regions)
    }

    /// The hash of the triangles the last bake voxelized tile `key` from.
    pub(crate) fn hash_of(&self, key: u32) -> Option<u64> {
        self.hashes.get(&key).map(|h| h.hash)
    }

    /// Tile `key`'s span field and floors (and regions record), if the last bake voxelized it
    /// from triangles of hash `hash`; of a tile whose journal segment is taken over whole
    /// (`linked`), none of them (left empty) but the regions record when the merge decodes it
    /// (`untouched` false).
    fn records(
        &self,
        key: u32,
        hash: u64,
        (linked, untouched): (bool, bool),
    ) -> Result<Option<SpansAndFloors>, BakeError> {
        if self.hash_of(key) != Some(hash) {
            return Ok(None);
        }
        let packed = |(bytes, raw_len)| Packed { bytes, raw_len };
        let read = |journal: &JournalReader| -> Result<Option<Packed>, BakeError> {
            Ok(match linked {
                true => Some(Packed::default()),
                false => journal.read_stored(key)?.map(packed),
            })
        };
        let (Some(spans_packed), Some(floors_packed)) = (read(&self.spans)?, read(&self.floors)?)
        else {
            return Ok(None);
        };
        let regions_packed = match &self.regions {
            Some(_) if linked && untouched => Some(Packed::default()),
            Some(journal) => journal.read_stored(key)?.map(packed),
            None => None,
        };
        // Decoded from the bytes read, not read again; only when its regions must be made.
        let spans = match regions_packed {
            Some(_) => Vec::new(),
            None => tessera_store::decompress(&spans_packed.bytes, spans_packed.raw_len).map_err(
                |message| BakeError::Corrupt {
                    path: self.spans_path.clone(),
                    message: format!("tile {key}: {message}"),
                },
            )?,
        };
        Ok(Some(SpansAndFloors {
            spans,
            spans_packed,
            floors_packed,
            regions_packed,
        }))
    }
}

/// Reads one tile and plans it: the parts it is voxelized in (one, unless a whole tile would
/// not fit the budget) and the memory that takes, reserved before the job leaves the reader;
/// or, when the last bake's records of it serve (`previous`), what taking them takes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_and_plan(
    previous: Option<&Previous>,
    frame: &GridFrame,
    tiles: &crate::bin::TilePacks,
    budget: &Arc<MemoryBudget>,
    key: u32,
    coord: TileCoord,
    known: Option<(u64, bool, bool)>,
) -> Result<TileJob, BakeError> {
    // The tile's hash, already known (a rebake hashes every tile first), and whether the
    // merge takes its batch whole: when the last bake's records serve, nothing is read.
    if let Some((hash, untouched, linked)) = known {
        if let Some(bytes) = previous.and_then(|p| p.serves(key, hash)) {
            return Ok(TileJob {
                index: key,
                coord,
                work: Work::Reuse {
                    hash,
                    untouched,
                    linked,
                },
                reservation: budget.reserve(bytes, "a reused tile")?,
            });
        }
    }
    let raw = tiles.raw_len(key);
    let mut reservation = budget.reserve(raw, "a tile's triangles")?;
    // Decompressed straight into the records, then split into corners and areas.
    let records = read_triangles(tiles, key)?;
    tessera_artifacts::check_triangles(&records).map_err(|e| BakeError::Corrupt {
        path: tiles.path().to_path_buf(),
        message: format!("tile {key}: {e}"),
    })?;
    let hash = triangles_hash(&records);
    if let Some(bytes) = previous.and_then(|p| p.serves(key, hash)) {
        drop(records);
        reservation.shrink_to(0);
        reservation.reserve_more(bytes, "a reused tile")?;
        return Ok(TileJob {
            index: key,
            coord,
            work: Work::Reuse {
                hash,
                untouched: false,
                linked: false,
            },
            reservation,
        });
    }
    let (triangles, areas): (Vec<Triangle>, Vec<u8>) =
        records.iter().map(|t| (t.corners, t.area as u8)).unzip();
    drop(records);
    let core = frame.tile_core(coord);
    // What one part costs at most: its grid, the tile's triangles, every span its triangles
    // could make. Parts are sized so that two jobs fit the budget with the binning minimum.
    let cap = (budget.total().saturating_sub(MIN_BIN_BUFFER) / 2).saturating_sub(raw);
    let mut cost = |part: CellRect| {
        let rect = part.grown(frame.band);
        let bound = tessera_voxel::span_bound(frame, rect, &triangles);
        tessera_voxel::memory::estimate(
            rect.area() as u64,
            raw,
            bound.min(rect.area() as u64 * MAX_SPANS_PER_CELL),
        )
    };
    // The whole tile's bound is the common case: computed once.
    let whole = cost(core);
    let (parts, working) = if whole <= cap {
        (vec![core], whole)
    } else {
        let parts = tessera_voxel::split_parts(core, cap, MIN_PART_SIDE, &mut cost);
        let working = parts.iter().map(|p| cost(*p)).max().unwrap_or(0);
        (parts, working)
    };
    // Parts wait for assembly: their outputs and the assembled field, about a span per cell.
    let assembly = if parts.len() > 1 {
        2 * tessera_voxel::memory::estimate(
            core.grown(tessera_voxel::RING).area() as u64,
            0,
            core.grown(tessera_voxel::RING).area() as u64,
        )
    } else {
        0
    };
    let total = (raw + working + assembly).min(budget.total());
    reservation.reserve_more(total - raw, "a tile in flight")?;
    Ok(TileJob {
        index: key,
        coord,
        work: Work::Voxelize {
            triangles,
            areas,
            hash,
            parts,
        },
        reservation,
    })
}

/// What a worker keeps from one tile to the next: the voxelizer's buffers, and the share of
/// the budget they hold while no tile does.
pub(crate) struct WorkerState {
    workspace: tessera_voxel::Workspace,
    /// The level of every span of the tile's field, for segmentation and tracing.
    levels: Vec<u32>,
    segment: tessera_regions::Scratch,
    trace: tessera_contours::Scratch,
    /// An encoding, and its compression, on their way to the writer; a tile's floors; its
    /// rasterized field for a group of agents.
    encoded: Vec<u8>,
    record: Vec<u8>,
    compressed: Vec<u8>,
    floors: Vec<u32>,
    held: Reservation,
}

impl WorkerState {
    pub(crate) fn new(budget: &Arc<MemoryBudget>) -> WorkerState {
        WorkerState {
            workspace: tessera_voxel::Workspace::default(),
            levels: Vec::new(),
            segment: Default::default(),
            trace: Default::default(),
            encoded: Vec::new(),
            record: Vec::new(),
            compressed: Vec::new(),
            floors: Vec::new(),
            held: budget.hold(),
        }
    }

    /// Frees the buffers (and their hold): the next tile starts from empty ones.
    fn free_buffers(&mut self) {
        self.workspace = Default::default();
        self.levels = Vec::new();
        self.segment = Default::default();
        self.trace = Default::default();
        self.encoded = Vec::new();
        self.record = Vec::new();
        self.compressed = Vec::new();
        self.floors = Vec::new();
        self.held.shrink_to(0);
    }

    /// Bytes the buffers hold.
    fn byte_size(&self) -> u64 {
        self.workspace.byte_size()
            + self.levels.capacity() as u64 * 4
            + self.segment.byte_size()
            + self.trace.byte_size()
            + (self.encoded.capacity() + self.record.capacity() + self.compressed.capacity()) as u64
            + self.floors.capacity() as u64 * 4
    }
}

/// Voxelizes a tile's parts one after the other, assembles it, and segments and traces it; or
/// takes its regions and contours from their record: the checkpoint's (`checkpoint`, the
/// tile-regions journal, for a recovered tile) or the last bake's (a reused tile).
///
/// The worker's buffers are reused from tile to tile: while a tile runs they count against
/// its reservation (which plans for them) and the worker's hold covers any excess; between
/// tiles the hold covers them all.
pub(crate) fn run_job(
    frame: &GridFrame,
    (params, raster): (&VoxelParams, Option<&Raster>),
    (checkpoint, checkpoint_path): (Option<&JournalReader>, &Path),
    previous: Option<&Previous>,
    job: TileJob,
    state: &mut WorkerState,
) -> Result<TileDone, BakeError> {
    let core = frame.tile_core(job.coord);
    let mut reservation = job.reservation;
    // While the tile runs, its reservation covers the buffers it reuses; what they hold beyond
    // it (after a larger tile) stays held.
    state
        .held
        .shrink_to(state.byte_size().saturating_sub(reservation.bytes()));
    let recovered = matches!(job.work, Work::Recovered);
    let mut hash = 0;
    let mut raster_packed = None;
    let mut from_record = false;
    // A tile the last bake voxelized from the same triangles: its span field and floors.
    let mut reused: Option<SpansAndFloors> = None;
    if let Work::Voxelize { hash: h, .. } | Work::Reuse { hash: h, .. } = &job.work {
        hash = *h;
        if let Some(previous) = previous {
            let which = match job.work {
                Work::Reuse {
                    linked, untouched, ..
                } => (linked, untouched),
                _ => (false, false),
            };
            reused = previous.records(job.index, hash, which)?;
        }
    }
    if matches!(job.work, Work::Reuse { .. })
        && reused.as_ref().is_none_or(|r| r.regions_packed.is_none())
    {
        // `Previous::serves` said the records were there; they were not on reading.
        return Err(BakeError::Corrupt {
            path: previous.map(|p| p.spans_path.clone()).unwrap_or_default(),
            message: format!("tile {}: the last bake's records went missing", job.index),
        });
    }
    // A tile the merge takes whole from the last bake: its records are copied as stored, and
    // its counts are those of its hash record.
    if let (
        Work::Reuse {
            untouched: true, ..
        },
        Some(r),
        Some(counts),
    ) = (
        &job.work,
        &mut reused,
        previous.and_then(|p| p.hashes.get(&job.index)),
    ) {
        if let Some(regions_packed) = r.regions_packed.take() {
            let r = reused.take().expect("reused");
            let regions = TileRegions {
                tile: job.coord,
                levels: tessera_artifacts::Levels::FLAT,
                core,
                labels: Vec::new(),
                regions: Vec::new(),
                links: Vec::new(),
            };
            return Ok(TileDone::finished(
                (job.index, recovered, hash, true),
                (
                    regions,
                    TileContours::default(),
                    counts.spans,
                    counts.walkable,
                ),
                [r.spans_packed, r.floors_packed, regions_packed],
                (None, false),
                reservation,
            ));
        }
    }
    // A tile whose regions and contours are on record needs no span field at all.
    let record = match (&job.work, &reused) {
        (Work::Recovered, _) => {
            let checkpoint = checkpoint.ok_or_else(|| BakeError::Corrupt {
                path: checkpoint_path.to_path_buf(),
                // Only process 0 of a distributed bake holds checkpoints; it alone recovers.
                message: format!("tile {}: no checkpoint to recover from", job.index),
            })?;
            Some((checkpoint.read(job.index)?, checkpoint_path.to_path_buf()))
        }
        (
            _,
            Some(SpansAndFloors {
                regions_packed: Some(p),
                ..
            }),
        ) => {
            let path = previous.map(|p| p.spans_path.clone()).unwrap_or_default();
            let raw = tessera_store::decompress(&p.bytes, p.raw_len).map_err(|message| {
                BakeError::Corrupt {
                    path: path.clone(),
                    message: format!("tile {}: {message}", job.index),
                }
            })?;
            Some((raw, path))
        }
        _ => None,
    };
    if let Some((bytes, path)) = record {
        let (spans, walkable, regions, contours) =
            decode_tile_record(&bytes).map_err(|message| BakeError::Corrupt {
                path,
                message: format!("tile {}: {message}", job.index),
            })?;
        let is_reused = reused.is_some();
        let (spans_packed, floors_packed, regions_packed) = match reused {
            Some(r) => (
                r.spans_packed,
                r.floors_packed,
                r.regions_packed.expect("on record"),
            ),
            None => Default::default(),
        };
        return Ok(TileDone::finished(
            (job.index, recovered, hash, is_reused),
            (regions, contours, spans, walkable),
            [spans_packed, floors_packed, regions_packed],
            (None, false),
            reservation,
        ));
    }
    let owned: Option<SpanField> = match job.work {
        _ if reused.is_some() => {
            let spans = &reused.as_ref().expect("reused").spans;
            Some(SpanField::decode(spans).map_err(|e| BakeError::Corrupt {
                path: previous.map(|p| p.spans_path.clone()).unwrap_or_default(),
                message: format!("tile {}: {e}", job.index),
            })?)
        }
        Work::Recovered | Work::Reuse { .. } => {
            unreachable!("a recovered or reused tile is taken from its record above")
        }
        Work::Voxelize {
            triangles,
            areas,
            parts,
            ..
        } => {
            let triangle_bytes = (triangles.len() * std::mem::size_of::<TileTriangle>()) as u64;
            let ws = &mut state.workspace;
            if let [part] = parts[..] {
                // A group's record on its way out or in: beyond what one agent plans for.
                let mut record_bytes = 0;
                let spans = match raster {
                    // The first agent of a group: rasterized for all of it.
                    Some(Raster::Write { group, .. }) => {
                        let spans = tessera_voxel::voxelize_agents_in(
                            ws,
                            frame,
                            group,
                            part,
                            (&triangles, &areas),
                            &mut state.record,
                        );
                        let packed = Packed::of(&state.record, &mut state.compressed);
                        record_bytes = (state.record.len() + packed.bytes.len()) as u64;
                        raster_packed = Some(packed);
                        spans
                    }
                    // Another: from the first's record of the tile, when it made one.
                    Some(Raster::Read {
                        records,
                        index,
                        path,
                    }) if records.raw_len(job.index) > 0 => {
                        let record = records.read(job.index)?;
                        record_bytes = record.len() as u64;
                        from_record = true;
                        tessera_voxel::voxelize_from_record(
                            ws, frame, params, part, &record, *index,
                        )
                        .map_err(|e| BakeError::Corrupt {
                            path: path.clone(),
                            message: format!("tile {}: {e}", job.index),
                        })?
                    }
                    _ => tessera_voxel::voxelize_in(ws, frame, params, part, &triangles, &areas),
                };
                let cells = part.grown(frame.band).area() as u64;
                reservation.grow_to(
                    tessera_voxel::memory::estimate(cells, triangle_bytes, spans) + record_bytes,
                );
                None
            } else {
                let mut outputs = Vec::with_capacity(parts.len());
                let mut worst = 0;
                for part in &parts {
                    let rect = part.grown(frame.band);
                    let (subset, subset_areas): (Vec<Triangle>, Vec<u8>) = triangles
                        .iter()
                        .zip(&areas)
                        .filter(|(t, _)| tessera_tiler::triangle_reaches(frame, t, &rect))
                        .unzip();
                    let spans = tessera_voxel::voxelize_in(
                        ws,
                        frame,
                        params,
                        *part,
                        &subset,
                        &subset_areas,
                    );
                    worst = worst.max(tessera_voxel::memory::estimate(
                        rect.area() as u64,
                        triangle_bytes,
                        spans,
                    ));
                    outputs.push(ws.output().clone());
                }
                // Account for what the work really took if the plan fell short (it is an upper
                // bound by construction, so this is a safety net).
                reservation.grow_to(worst);
                drop(triangles);
                Some(tessera_voxel::assemble(core, &outputs))
            }
        }
    };
    let field = owned.as_ref().unwrap_or_else(|| state.workspace.output());
    debug_assert!(field.validate().is_ok());
    let (spans, walkable) = field.core_counts();
    let levels = tessera_voxel::levels(params);
    levels.of_spans_into(field, &mut state.levels);
    let regions = tessera_regions::segment_tile_in(
        &mut state.segment,
        field,
        &state.levels,
        job.coord,
        levels,
    );
    let contours = tessera_contours::trace_tile_in(
        &mut state.trace,
        field,
        &state.levels,
        &regions,
        tessera_artifacts::Reach {
            climb: params.walkable_climb,
            height: params.walkable_height,
        },
    );
    // Only tracing reads the labels; the merge takes the regions and their links.
    let mut regions = regions;
    state.segment.recycle(std::mem::take(&mut regions.labels));
    let is_reused = reused.is_some();
    let regions_packed = Packed::of(
        &tile_record(spans, walkable, &regions.encode(), &contours.encode()),
        &mut state.compressed,
    );
    let (spans_packed, floors_packed) = if let Some(r) = reused {
        (r.spans_packed, r.floors_packed)
    } else {
        field.encode_into(&mut state.encoded);
        let spans = Packed::of(&state.encoded, &mut state.compressed);
        tessera_artifacts::TileFloors::encode_of(field, &mut state.encoded, &mut state.floors);
        (spans, Packed::of(&state.encoded, &mut state.compressed))
    };
    drop(owned);
    // The buffers pass from the tile's reservation to the worker's hold, if the budget has
    // room for them between tiles; otherwise they are freed.
    if !state.held.try_grow_to(state.byte_size()) {
        state.free_buffers();
    }
    Ok(TileDone::finished(
        (job.index, recovered, hash, is_reused),
        (regions, contours, spans, walkable),
        [spans_packed, floors_packed, regions_packed],
        (raster_packed, from_record),
        reservation,
    ))
}

impl TileDone {
    /// A finished tile (by a worker, or received from a peer): (key, recovered, hash, reused),
    /// (its regions, contours, spans and walkable spans), its span, floor and regions records,
    /// (its rasterized field for a group of agents, whether it was voxelized from one); its
    /// reservation shrunk to what the records hold.
    fn finished(
        (index, recovered, hash, reused): (u32, bool, u64, bool),
        (regions, contours, spans, walkable): (TileRegions, TileContours, u64, u64),
        [spans_packed, floors_packed, regions_packed]: [Packed; 3],
        (raster_packed, from_record): (Option<Packed>, bool),
        mut reservation: Reservation,
    ) -> TileDone {
        let held = [&spans_packed, &floors_packed, &regions_packed]
            .into_iter()
            .chain(&raster_packed)
            .map(|p| p.bytes.len() as u64)
            .sum();
        reservation.shrink_to(held);
        TileDone {
            index,
            recovered,
            hash,
            reused,
            regions,
            local: Vec::new(),
            local_at: Vec::new(),
            contours,
            spans_packed,
            floors_packed,
            regions_packed,
            raster_packed,
            from_record,
            spans,
            walkable,
            _reservation: reservation,
        }
    }
}
