//! The output of contour tracing, per tile: cycles closed inside the tile and chains that
//! leave it, to be joined across tiles. Produced and joined by `contours`; the pipeline
//! carries them from the tracing workers to the joiner.

use crate::codec::{self, Reader, Writer};
use crate::regions::{read_contour, write_contour, CONTOUR_MIN_BYTES};
use crate::{invalid, ArtifactError, Contour, Point, TileCoord};

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

const MAGIC: &[u8; 8] = b"TSTCONTR";
const VERSION: u32 = 2;

fn write_edge(w: &mut Writer, e: EdgeKey) {
    w.i32(e.x);
    w.i32(e.y);
    w.u8(e.heading);
    w.u32(e.level);
}

fn read_edge(r: &mut Reader) -> Result<EdgeKey, ArtifactError> {
    Ok(EdgeKey {
        x: r.i32()?,
        y: r.i32()?,
        heading: r.u8()?,
        level: r.u32()?,
    })
}

/// Points, then heights, then neighbours, each with its own count.
fn write_path(w: &mut Writer, points: &[Point], heights: &[u32], neighbours: &[u32]) {
    w.u64(points.len() as u64);
    for p in points {
        w.i32(p.0);
        w.i32(p.1);
    }
    for list in [heights, neighbours] {
        w.u64(list.len() as u64);
        for &v in list {
            w.u32(v);
        }
    }
}

type Path = (Vec<Point>, Vec<u32>, Vec<u32>);

fn read_path(r: &mut Reader) -> Result<Path, ArtifactError> {
    let n = r.count(8)?;
    let mut points = Vec::with_capacity(n);
    for _ in 0..n {
        points.push((r.i32()?, r.i32()?));
    }
    let n = r.count(4)?;
    let heights = r.u32s(n)?;
    let n = r.count(4)?;
    let neighbours = r.u32s(n)?;
    Ok((points, heights, neighbours))
}

impl TileContours {
    /// The tile's contours in the sealed codec, for carrying a tile between processes (a
    /// distributed bake); not a checkpoint format.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u64(self.cycles.len() as u64);
        for c in &self.cycles {
            write_contour(&mut w, c);
        }
        w.u64(self.chains.len() as u64);
        for c in &self.chains {
            w.u32(c.tile.x);
            w.u32(c.tile.y);
            w.u32(c.region);
            write_edge(&mut w, c.first);
            write_edge(&mut w, c.next);
            write_path(&mut w, &c.points, &c.heights, &c.neighbours);
            w.u8(c.last_heading);
        }
        codec::seal(MAGIC, VERSION, &w.bytes)
    }

    pub fn decode(bytes: &[u8]) -> Result<TileContours, ArtifactError> {
        const A: &str = "tile contours";
        let payload = codec::unseal(bytes, MAGIC, VERSION, A)?;
        let r = &mut Reader::new(payload, A);
        let mut out = TileContours::default();
        for _ in 0..r.count(CONTOUR_MIN_BYTES)? {
            out.cycles.push(read_contour(r)?);
        }
        for _ in 0..r.count(63)? {
            let tile = TileCoord {
                x: r.u32()?,
                y: r.u32()?,
            };
            let region = r.u32()?;
            let (first, next) = (read_edge(r)?, read_edge(r)?);
            let (points, heights, neighbours) = read_path(r)?;
            out.chains.push(Chain {
                tile,
                region,
                first,
                next,
                points,
                heights,
                neighbours,
                last_heading: r.u8()?,
            });
        }
        if r.remaining() != 0 {
            return Err(invalid(A, "trailing bytes"));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod codec_tests {
    use super::*;
    use crate::{BorderLink, Levels, LinkKey, LocalRegion, SpanKey, TileRegions};

    #[test]
    fn tile_regions_and_contours_survive_their_codec() {
        let key = |x, y, zmax| SpanKey { y, x, zmax };
        let regions = TileRegions {
            tile: TileCoord { x: 3, y: 1 },
            levels: Levels::layered(4),
            core: crate::CellRect {
                x0: -2,
                y0: 5,
                width: 7,
                height: 9,
            },
            labels: vec![0, crate::NO_REGION, 1],
            regions: vec![
                LocalRegion {
                    spans: 12,
                    first: key(1, 2, 3),
                    zmin: 4,
                    zmax: 9,
                },
                LocalRegion {
                    spans: u64::MAX - 5,
                    first: key(-7, i32::MIN, u32::MAX),
                    zmin: 0,
                    zmax: u32::MAX - 1,
                },
            ],
            links: vec![
                BorderLink {
                    key: LinkKey::new(key(5, 6, 7), key(0, 1, 2)),
                    region: 0,
                },
                BorderLink {
                    key: LinkKey::new(key(-1, i32::MAX, 8), key(-2, -3, 0)),
                    region: 1,
                },
            ],
        };
        assert_eq!(TileRegions::decode(&regions.encode()).unwrap(), regions);
        let edge = |x, heading| EdgeKey {
            x,
            y: -1,
            heading,
            level: 2,
        };
        let contours = TileContours {
            cycles: vec![Contour {
                tile: TileCoord { x: 3, y: 1 },
                region: 0,
                level: 2,
                points: vec![(0, 0), (4, 0), (4, 4)],
                heights: vec![1, 2, 3],
                neighbours: vec![7, 8, 9],
            }],
            chains: vec![Chain {
                tile: TileCoord { x: 3, y: 1 },
                region: 0,
                first: edge(1, heading::EAST),
                next: edge(2, heading::SOUTH),
                points: vec![(1, 1), (2, 2)],
                heights: vec![5, 6],
                neighbours: vec![3],
                last_heading: heading::WEST,
            }],
        };
        let bytes = contours.encode();
        assert_eq!(TileContours::decode(&bytes).unwrap(), contours);
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() - 1);
        assert!(TileContours::decode(&cut).is_err());
    }
}
