//! Merged regions to convex polygons (seed 000, section 5.1): the input of the navmesh file.
//!
//! 1. Contours are grouped by merged region (ordered by region id, so the result does not
//!    depend on the tiling): [`group_regions`], [`RegionContours`].
//! 2. `simplify` cuts every contour at the points where what lies across it changes and
//!    simplifies the shared sections once (Ramer-Douglas-Peucker, `max_error` in cells; 0
//!    keeps every vertex), then repairs crossings and collapses: neighbouring regions keep
//!    identical borders, so their polygons meet edge to edge with no T-junction.
//! 3. [`triangulate`] triangulates each region (outer contour and holes, constrained
//!    Delaunay), and a convex partition cuts it into polygons: [`anavmg`] (seed 002; portals
//!    end at vertices or at new grid points on walls, edges with nothing walkable across) or
//!    [`hertel_mehlhorn`] (seed 000, 5.1.3). Both give a [`RegionPolygons`].
//! 4. [`detail`] (seed 004) adds height detail to each polygon, when asked.
//!
//! One algorithm per file: `simplify.rs`, `triangulate.rs`, `hertel_mehlhorn.rs`,
//! `anavmg.rs` (with `anavmg/`: its area of interest, its mesh, its visibility search) and
//! `detail.rs`, each opening with the paper it follows and how it departs from it;
//! `partition.rs` holds what the two partitions share, `region.rs` takes one region through
//! steps 2 to 3, and `stream.rs` drives every region ([`polygonize_stream`], [`polygonize`]).
//! The exact integer predicates (orientation, distances, areas, segment tests) are
//! [`tessera_geom::predicates`].
//!
//! Vertices stay on the voxel grid (integer corner points); heights come from the contours
//! (each region's own floor at each corner; a point added on a wall gets the wall's end
//! heights interpolated).
//!
//! Pure: no I/O. Regions are processed in parallel and collected in order.

mod anavmg;
pub mod detail;
mod hertel_mehlhorn;
mod partition;
mod region;
mod simplify;
mod stream;
mod triangulate;

use rustc_hash::FxHashMap as HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tessera_artifacts::{
    Contour, InputPoly, MeshInput, NotchGroups, RegionBatch, SpanKey, TileCoord,
};

pub use anavmg::anavmg;
pub use hertel_mehlhorn::hertel_mehlhorn;
pub use partition::RegionPolygons;
pub use stream::{
    merge_asked, polygonize, polygonize_stream, polygonize_stream_reusing,
    polygonize_stream_shared, Asked,
};
pub use triangulate::{triangulate, TriangulationError};

/// The convex partition to use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Partition {
    /// Seed 002 with relaxation `tau` [radians], with or without the removal of portals
    /// that became unnecessary.
    Anavmg {
        tau: f64,
        removal: bool,
    },
    HertelMehlhorn,
}

/// The bounding box of plan points in cells, `[lo x, lo y, hi x, hi y]` (lows above highs
/// without a point).
pub fn extent_of(points: impl IntoIterator<Item = (i32, i32)>) -> [i32; 4] {
    let mut e = [i32::MAX, i32::MAX, i32::MIN, i32::MIN];
    for p in points {
        e = [e[0].min(p.0), e[1].min(p.1), e[2].max(p.0), e[3].max(p.1)];
    }
    e
}

/// A merged region and its contours (outer first, then holes, each group by smallest point).
#[derive(Clone, Debug)]
pub struct RegionContours {
    pub id: SpanKey,
    pub contours: Vec<Contour>,
}

/// What polygonization counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolygonStats {
    pub regions: u64,
    /// Regions whose polygons were taken from an earlier run ([`Reuse`]).
    pub reused_regions: u64,
    pub polygons: u64,
    pub triangles: u64,
    /// Reflex vertices of the simplified contours (seed 002's notches).
    pub notches: u64,
    /// Regions, polygons and notches by how many notches a region has.
    pub by_notches: NotchGroups,
    /// Contour vertices before and after simplification.
    pub contour_vertices: u64,
    pub simplified_vertices: u64,
    /// Vertices put back to undo a crossing or a collapse.
    pub restored_vertices: u64,
    /// Regions where ANavMG gave up and Hertel-Mehlhorn was used.
    pub partition_fallbacks: u64,
    /// Points added for height detail.
    pub detail_points: u64,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolygonError {
    /// A region (named by its id: first cell and height) whose contours did not triangulate.
    #[error("region at cell ({x}, {y}), height {z}: {source}")]
    Region {
        x: i32,
        y: i32,
        z: u32,
        source: TriangulationError,
    },
    #[error("contour of tile ({tx}, {ty}) local region {local} belongs to no merged region")]
    /// A contour whose (tile, local region) is a member of no merged region.
    Orphan { tx: u32, ty: u32, local: u32 },
    /// The [`RegionSource`] could not serve its regions (its message names the file).
    #[error("{0}")]
    Source(String),
    /// The source's stop flag was raised ([`RegionSource::stop_flag`]).
    #[error("stopped before every region was polygonized")]
    Stopped,
}

impl RegionContours {
    /// A region from its contours, in any order: each contour rotated to its canonical start,
    /// outer contours first, then by smallest point (the same for every tiling).
    pub fn new(id: SpanKey, contours: Vec<Contour>) -> RegionContours {
        let mut r = RegionContours { id, contours };
        r.order();
        r
    }

    /// The bounding box of the contours' points in cells, `[lo x, lo y, hi x, hi y]` (lows
    /// above highs for a region without a point).
    pub fn extent(&self) -> [i32; 4] {
        extent_of(self.contours.iter().flat_map(|c| c.points.iter().copied()))
    }

    fn order(&mut self) {
        for c in &mut self.contours {
            c.make_canonical();
        }
        self.contours.sort_by_key(|c| {
            (
                !c.is_outer(),
                c.points.iter().min().copied().unwrap_or((0, 0)),
            )
        });
    }
}

/// Groups the contours of region batches by merged region, ordered by region id.
pub fn group_regions(
    batches: impl IntoIterator<Item = RegionBatch>,
) -> Result<Vec<RegionContours>, PolygonError> {
    let mut regions = Vec::new();
    let mut contours = Vec::new();
    for b in batches {
        regions.extend(b.regions);
        contours.extend(b.contours);
    }
    regions.sort_by_key(|r| r.id);
    let mut owner: HashMap<(TileCoord, u32), usize> = HashMap::default();
    for (i, r) in regions.iter().enumerate() {
        for &m in &r.members {
            owner.insert(m, i);
        }
    }
    let mut out: Vec<RegionContours> = regions
        .iter()
        .map(|r| RegionContours {
            id: r.id,
            contours: Vec::new(),
        })
        .collect();
    for c in contours {
        let Some(&i) = owner.get(&(c.tile, c.region)) else {
            return Err(PolygonError::Orphan {
                tx: c.tile.x,
                ty: c.tile.y,
                local: c.region,
            });
        };
        out[i].contours.push(c);
    }
    for r in &mut out {
        r.order();
    }
    out.retain(|r| !r.contours.is_empty());
    Ok(out)
}

/// Settings, in grid units.
#[derive(Clone, Copy, Debug)]
pub struct PolygonParams {
    pub partition: Partition,
    /// Simplification tolerance [cells]; 0 keeps every contour vertex.
    pub max_error: f64,
    /// Voxels: portals join edges whose heights differ by at most this (see
    /// [`MeshInput::climb`]).
    pub portal_climb: u32,
    /// Height detail (seed 004); used when the heightfield is given.
    pub detail: detail::DetailParams,
}

/// One region's polygons: vertices on the grid (`x`, `y` corner points, `z` voxel height),
/// polygons over them (local indices; `region` is 0), and what was counted.
#[derive(Clone, Debug, Default)]
pub struct RegionOutput {
    /// The region's id.
    pub id: SpanKey,
    pub verts: Vec<[i32; 3]>,
    /// Points added for height detail (plan in cells, height in voxels); polygon triangles name
    /// them with the [`DETAIL`] bit.
    pub detail: Vec<[f32; 3]>,
    pub polys: Vec<InputPoly>,
    pub notches: u64,
    pub contour_vertices: u64,
    pub simplified_vertices: u64,
    pub fell_back: bool,
    /// A ground region in surface mode ([`tessera_artifacts::Levels`]): height detail reads
    /// each column's lowest walkable floor.
    pub ground: bool,
    /// The region's area id (a region never crosses an area border).
    pub area: u8,
    /// With a [`Reuse`]: the key its polygons were made (or kept) under ([`Reuse::key`]); 0
    /// otherwise.
    pub key: u64,
    /// The extent of the region's contours ([`RegionContours::extent`]), which its key reads
    /// ([`Reuse::key`]).
    pub extent: [i32; 4],
    /// Taken from an earlier run ([`Reuse::kept_record`]) instead of made.
    pub reused: bool,
    /// With a [`Reuse`]: the record it keeps the output in, made on the pool
    /// ([`Reuse::seal`]) or taken as kept, so that the thread handing outputs on only writes
    /// it. None: not made.
    pub sealed: Option<Sealed>,
}

/// A region's output as a [`Reuse`] stores it: `stored` bytes for `raw_len` bytes of record
/// (compressed, or the record itself when as long).
#[derive(Clone, Debug, Default)]
pub struct Sealed {
    pub stored: Vec<u8>,
    pub raw_len: usize,
}

/// Where polygonization may take a region's polygons from an earlier run instead of making
/// them again (an incremental rebake): a region's polygons depend on its contours, the
/// simplification points restored on them (together the region's `input`, a hash the stream
/// computes) and, with height detail, the heightfield under it, which the caller knows.
/// Polygons are taken only from a source that knows its regions' contour keys
/// ([`RegionSource::contour_keys`]); with another, `Reuse` still keys and seals them.
pub trait Reuse: Sync {
    /// The key of a region's polygons: its `input` and whatever else they depend on within
    /// `extent`, its contours' extent ([`RegionContours::extent`]).
    fn key(&self, input: u64, extent: [i32; 4]) -> u64;

    /// The record an earlier run kept region `id`'s polygons in (height detail done), its
    /// checksum checked, when the key of `input` over the extent that run recorded for the
    /// region is the key it kept them under. `input` covers the region's contours (it is
    /// made from their key, [`RegionSource::contour_keys`]), so equal inputs mean equal
    /// contours and the recorded extent is theirs: the region is then not read. None: the
    /// region is read and polygonized.
    fn kept_record(&self, id: SpanKey, input: u64) -> Option<Sealed> {
        let _ = (id, input);
        None
    }

    /// The height detail an earlier run made for region `id`'s polygons, for those whose
    /// heightfield is unchanged ([`detail::KeptDetails`]): for a region polygonized again,
    /// whose polygons away from the change keep their corners.
    fn kept_details(&self, id: SpanKey) -> Option<detail::KeptDetails> {
        let _ = id;
        None
    }

    /// A record of [`Reuse::kept_record`] read back.
    fn unseal(&self, sealed: &Sealed) -> Result<RegionOutput, String> {
        let _ = sealed;
        Err("this reuse keeps no records".into())
    }

    /// The record `out` is kept in (made on the pool, in parallel), or None to leave it to the
    /// caller.
    fn seal(&self, out: &RegionOutput) -> Option<Sealed> {
        let _ = out;
        None
    }

    /// What the first round of simplification made of region `id` when its contours had the
    /// key `contours` ([`RegionSource::contour_keys`]), if an earlier run kept it: the first
    /// round reads no table of restored points, so the same contours give the same result.
    fn first_round(&self, id: SpanKey, contours: u64) -> Option<FirstRound> {
        let _ = (id, contours);
        None
    }

    /// Every region's first round, in region order with its contours' key, for the next run
    /// (given when the source has [`RegionSource::contour_keys`]).
    fn keep_first_rounds(&self, rounds: Vec<(SpanKey, u64, FirstRound)>) {
        let _ = rounds;
    }
}

/// What the first round of simplification made of one region: the points it asked back and
/// the fingerprints of its sections' names (which later rounds read).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FirstRound {
    pub asked: Vec<(u128, u32)>,
    pub prints: Vec<u32>,
}

/// A region of a window of [`RegionSource::for_each_window_taking`].
#[derive(Debug)]
pub enum Served {
    /// Read: its contours.
    Read(RegionContours),
    /// Not read: the record an earlier run kept its polygons in ([`Reuse::kept_record`]).
    Kept(SpanKey, Sealed),
}

impl Served {
    /// `region` as served when it is already read: the record `take` gives for it, or itself.
    pub fn of(region: &RegionContours, take: &dyn Fn(SpanKey) -> Option<Sealed>) -> Served {
        match take(region.id) {
            Some(record) => Served::Kept(region.id, record),
            None => Served::Read(region.clone()),
        }
    }
}

/// Where the regions come from: windows of consecutive regions, in region order, as many
/// times as asked (simplification makes a few passes; the last one polygonizes).
pub trait RegionSource {
    fn for_each_window(
        &mut self,
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError>;

    /// Every region's id and a key of its contours as the source holds them (equal contours,
    /// equal keys), in region order, when the source knows them without reading the regions:
    /// the first round of simplification then takes a region whose key an earlier run kept
    /// from [`Reuse::first_round`] instead of reading it.
    fn contour_keys(&self) -> Option<&[(SpanKey, u64)]> {
        None
    }

    /// [`RegionSource::for_each_window`] over the regions whose id `wanted` accepts: a hint,
    /// the others may be served too (by default every region is). Rounds of simplification
    /// after the first ask for the few regions a grown section touches.
    fn for_each_window_of(
        &mut self,
        wanted: &(dyn Fn(SpanKey) -> bool + Sync),
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        let _ = wanted;
        self.for_each_window(f)
    }

    /// [`RegionSource::for_each_window`] where a region for which `take` gives a record is
    /// served as that record ([`Served::Kept`]) instead of read: the same windows, in region
    /// order. By default every region is read, then offered to `take`.
    fn for_each_window_taking(
        &mut self,
        take: &(dyn Fn(SpanKey) -> Option<Sealed> + Sync),
        f: &mut dyn FnMut(Vec<Served>) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        self.for_each_window(&mut |window| f(window.iter().map(|r| Served::of(r, take)).collect()))
    }

    /// A flag that, once raised, asks the stream to stop: regions not yet started are
    /// skipped and the stream ends with [`PolygonError::Stopped`]. None: never stopped.
    fn stop_flag(&self) -> Option<Arc<AtomicBool>> {
        None
    }
}

impl RegionSource for &[RegionContours] {
    fn for_each_window(
        &mut self,
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        f(self)
    }
}

#[cfg(test)]
mod tests;
