//! The output of segmentation, per tile: its local regions and the connections to its
//! neighbours' spans. Produced by `regions`, read by `stitch` (the cross-tile merge) and
//! `contours` (tracing).

use crate::codec::{self, Reader, Writer};
use crate::{invalid, ArtifactError, CellRect, Levels, SpanKey, TileCoord};

/// No region (an unwalkable span, or a span of the ring).
pub const NO_REGION: u32 = u32::MAX;

/// A connection between two spans of neighbouring tiles, the smaller key first. Both tiles of
/// a connection produce the same key, which is how the merge finds the regions that the tiling
/// cut apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkKey(pub SpanKey, pub SpanKey);

impl LinkKey {
    pub fn new(a: SpanKey, b: SpanKey) -> LinkKey {
        if a <= b {
            LinkKey(a, b)
        } else {
            LinkKey(b, a)
        }
    }
}

/// One connection of a core span to a span in the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BorderLink {
    pub key: LinkKey,
    /// The local region of the core span.
    pub region: u32,
}

/// What a tile's part of a region holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalRegion {
    /// Walkable spans (cells) in the region.
    pub spans: u64,
    /// The region's first span in (y, x) order: its canonical name.
    pub first: SpanKey,
    /// Floor height range [voxels].
    pub zmin: u32,
    pub zmax: u32,
}

/// The regions of one tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileRegions {
    pub tile: TileCoord,
    /// How floors were grouped (the contours need the same rule).
    pub levels: Levels,
    pub core: CellRect,
    /// Per span of the field (core and ring), its local region or [`NO_REGION`].
    pub labels: Vec<u32>,
    pub regions: Vec<LocalRegion>,
    /// Sorted by key.
    pub links: Vec<BorderLink>,
}

const MAGIC: &[u8; 8] = b"TSTREGNS";
const VERSION: u32 = 1;

pub(crate) fn write_span_key(w: &mut Writer, k: SpanKey) {
    w.i32(k.y);
    w.i32(k.x);
    w.u32(k.zmax);
}

/// A little-endian word of four bytes.
fn word(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().unwrap())
}

/// A [`SpanKey`] as [`write_span_key`] wrote it, from its twelve bytes.
fn span_key_at(b: &[u8]) -> SpanKey {
    SpanKey {
        y: word(&b[0..4]) as i32,
        x: word(&b[4..8]) as i32,
        zmax: word(&b[8..12]),
    }
}

impl TileRegions {
    /// The tile's regions in the sealed codec, for carrying a tile between processes (a
    /// distributed bake); not a checkpoint format.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.tile.x);
        w.u32(self.tile.y);
        w.u32(self.levels.step);
        w.u8(self.levels.surface as u8);
        w.u32(self.levels.block);
        w.u32(self.levels.climb);
        w.i32(self.core.x0);
        w.i32(self.core.y0);
        w.u32(self.core.width);
        w.u32(self.core.height);
        w.u64(self.labels.len() as u64);
        for &l in &self.labels {
            w.u32(l);
        }
        w.u64(self.regions.len() as u64);
        for r in &self.regions {
            w.u64(r.spans);
            write_span_key(&mut w, r.first);
            w.u32(r.zmin);
            w.u32(r.zmax);
        }
        w.u64(self.links.len() as u64);
        for l in &self.links {
            write_span_key(&mut w, l.key.0);
            write_span_key(&mut w, l.key.1);
            w.u32(l.region);
        }
        codec::seal(MAGIC, VERSION, &w.bytes)
    }

    pub fn decode(bytes: &[u8]) -> Result<TileRegions, ArtifactError> {
        const A: &str = "tile regions";
        let payload = codec::unseal(bytes, MAGIC, VERSION, A)?;
        let r = &mut Reader::new(payload, A);
        let tile = TileCoord {
            x: r.u32()?,
            y: r.u32()?,
        };
        let levels = Levels {
            step: r.u32()?,
            surface: r.u8()? != 0,
            block: r.u32()?,
            climb: r.u32()?,
        };
        let core = CellRect {
            x0: r.i32()?,
            y0: r.i32()?,
            width: r.u32()?,
            height: r.u32()?,
        };
        let n = r.count(4)?;
        let labels = r.u32s(n)?;
        // Regions and links are fixed-size records: each list is taken whole and cut up.
        let n = r.count(28)?;
        let regions = r
            .take(28 * n)?
            .chunks_exact(28)
            .map(|b| LocalRegion {
                spans: u64::from_le_bytes(b[0..8].try_into().unwrap()),
                first: span_key_at(&b[8..20]),
                zmin: word(&b[20..24]),
                zmax: word(&b[24..28]),
            })
            .collect();
        let n = r.count(28)?;
        let links = r
            .take(28 * n)?
            .chunks_exact(28)
            .map(|b| BorderLink {
                key: LinkKey(span_key_at(&b[0..12]), span_key_at(&b[12..24])),
                region: word(&b[24..28]),
            })
            .collect();
        if r.remaining() != 0 {
            return Err(invalid(A, "trailing bytes"));
        }
        Ok(TileRegions {
            tile,
            levels,
            core,
            labels,
            regions,
            links,
        })
    }
}
