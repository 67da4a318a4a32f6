//! The stage-boundary types of the bake, in pipeline order, and their codec.
//!
//! ```text
//! scene cache (Triangle soup, rebased) -> tile triangles (per TileCoord) -> SpanField (per tile)
//!     (and its TileFloors, for height detail)
//!     -> TileRegions, TileContours (per tile) -> RegionBatch (MergedRegion, Contour)
//!     -> MeshInput (InputPoly, NotchGroups) -> the navmesh file (crate tessera-navmesh)
//! ```
//!
//! Every artifact carries its own frame ([`GridFrame`], [`CellRect`]) so that it can be read,
//! checked and dumped alone. Every artifact has a `validate()` that tests run after each stage,
//! and a byte encoding sealed by [`codec::seal`] (magic, version, length, xxh3 checksum) so that a
//! corrupt file is detected, never trusted.
//!
//! This crate does no I/O, spawns no threads and depends on no stage crate: every stage crate
//! (voxel, regions, stitch, contours, polygons) reads its inputs and writes its outputs in
//! these types, so none needs another stage's crate. [`NotchGroups`] derives rkyv's traits
//! because the navmesh file archives it.

pub mod codec;
mod floors;
mod frame;
mod polygons;
mod regions;
mod spans;
mod tile_contours;
mod tile_regions;

pub use floors::TileFloors;
pub use frame::{CellRect, GridFrame, TileCoord};
pub use polygons::{ArchivedNotchGroups, InputPoly, MeshInput, NotchGroups, DETAIL, NOTCH_GROUPS};
pub use regions::{
    Closing, Contour, Levels, MergedRegion, Point, RegionBatch, SpanKey, AREA_BITS, NO_LEVEL,
    NO_NEIGHBOUR, OUT_OF_REACH,
};
pub use spans::{RasterRecord, Span, SpanField, MAX_AREA_ID};
pub use tessera_geom::Triangle;
pub use tile_contours::{heading, Chain, EdgeKey, Reach, TileContours};
pub use tile_regions::{BorderLink, LinkKey, LocalRegion, TileRegions, NO_REGION};

/// A broken invariant of an artifact, found by `validate()` or while decoding.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArtifactError {
    #[error("{artifact}: {what}")]
    Invalid {
        artifact: &'static str,
        what: String,
    },
    #[error("{artifact}: wrong magic (not a {artifact} file)")]
    BadMagic { artifact: &'static str },
    #[error("{artifact}: format version {found}, this build reads version {expected}")]
    BadVersion {
        artifact: &'static str,
        found: u32,
        expected: u32,
    },
    #[error("{artifact}: truncated ({have} bytes, expected {need})")]
    Truncated {
        artifact: &'static str,
        have: u64,
        need: u64,
    },
    #[error("{artifact}: checksum mismatch (stored {stored:016x}, computed {computed:016x})")]
    Checksum {
        artifact: &'static str,
        stored: u64,
        computed: u64,
    },
}

pub(crate) fn invalid(artifact: &'static str, what: impl Into<String>) -> ArtifactError {
    ArtifactError::Invalid {
        artifact,
        what: what.into(),
    }
}

/// A triangle as the tile pack holds it: its corners and its area id (0 `default`, else a
/// `[[areas]]` rule's), 40 bytes, little-endian.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TileTriangle {
    pub corners: Triangle,
    pub area: u32,
}

/// Tile triangles as raw little-endian bytes, the payload of tile files.
pub fn triangles_as_bytes(triangles: &[TileTriangle]) -> &[u8] {
    bytemuck::cast_slice(triangles)
}

/// Reads tile triangles back from [`triangles_as_bytes`] output (copying, so any alignment
/// works), checked ([`check_triangles`]).
pub fn triangles_from_bytes(bytes: &[u8]) -> Result<Vec<TileTriangle>, ArtifactError> {
    const SIZE: usize = std::mem::size_of::<TileTriangle>();
    if !bytes.len().is_multiple_of(SIZE) {
        return Err(invalid(
            "tile triangles",
            format!("{} bytes is not a whole number of triangles", bytes.len()),
        ));
    }
    let mut out = vec![bytemuck::Zeroable::zeroed(); bytes.len() / SIZE];
    bytemuck::cast_slice_mut::<TileTriangle, u8>(&mut out).copy_from_slice(bytes);
    check_triangles(&out)?;
    Ok(out)
}

/// Refuses triangles read back from disk with a non-finite coordinate or an unknown area.
pub fn check_triangles(triangles: &[TileTriangle]) -> Result<(), ArtifactError> {
    for t in triangles {
        if t.corners.iter().flatten().any(|c| !c.is_finite()) {
            return Err(invalid("tile triangles", "non-finite coordinate"));
        }
        if t.area > MAX_AREA_ID as u32 {
            return Err(invalid(
                "tile triangles",
                format!("area {} above {MAX_AREA_ID}", t.area),
            ));
        }
    }
    Ok(())
}
