//! The output of contour tracing, per tile: cycles closed inside the tile and chains that
//! leave it, to be joined across tiles. Produced and joined by `contours`; the pipeline
//! carries them from the tracing workers to the joiner.

use crate::{Contour, Point, TileCoord};

/// Edge headings, counter-clockwise: a unit boundary edge runs east, north, west or south.
pub mod heading {
    pub const EAST: u8 = 0;
    pub const NORTH: u8 = 1;
    pub const WEST: u8 = 2;
    pub const SOUTH: u8 = 3;
}

/// How far across a contour edge to look for the floor on the other side [voxels].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    /// Floors within this step are connected (the agent's climb).
    pub climb: u32,
    /// Floors within this step are still the neighbour across, out of reach
    /// (the agent's height).
    pub height: u32,
}

/// A unit boundary edge: where it starts, its [`heading`] and the region's level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EdgeKey {
    pub x: i32,
    pub y: i32,
    pub heading: u8,
    pub level: u32,
}

/// A contour piece that leaves the tile: from its first edge to the edge (owned by another
/// tile) that follows its last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub tile: TileCoord,
    /// The local region (in `tile`) it bounds.
    pub region: u32,
    pub first: EdgeKey,
    /// The foreign edge that continues it.
    pub next: EdgeKey,
    /// Its start point, its vertices, and its end point.
    pub points: Vec<Point>,
    /// Floor height at each point.
    pub heights: Vec<u32>,
    /// The neighbour across each piece between consecutive points (one fewer than points).
    pub neighbours: Vec<u32>,
    /// [`heading`] of its last edge.
    pub last_heading: u8,
}

/// A tile's contours: cycles wholly inside it, and chains that leave it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileContours {
    pub cycles: Vec<Contour>,
    pub chains: Vec<Chain>,
}
