//! The output of segmentation, per tile: its local regions and the connections to its
//! neighbours' spans. Produced by `regions`, read by `stitch` (the cross-tile merge) and
//! `contours` (tracing).

use crate::{CellRect, Levels, SpanKey, TileCoord};

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
