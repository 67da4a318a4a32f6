//! The global voxel grid and the tiling laid on it.
//!
//! There is one grid per bake. Its corner (cell `(0, 0)`, voxel height 0) is the world origin the
//! scene was rebased on (the scene's bounds minimum), so rebased coordinates divided by the cell
//! size are voxel coordinates. Tile origins are multiples of the tile size on that grid: the
//! border cells of two neighbouring tiles are the same cells, bit for bit.

use crate::codec::{self, Reader, Writer};

const MAGIC: &[u8; 8] = b"TSFRAME\0";
const VERSION: u32 = 1;
use crate::{invalid, ArtifactError};
use serde::{Deserialize, Serialize};

/// A tile's position in the tiling (in tiles, not cells).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TileCoord {
    pub x: u32,
    pub y: u32,
}

/// A rectangle of grid cells: `x0 .. x0 + width`, `y0 .. y0 + height`. Cells may lie outside the
/// world (negative or past its end) when a tile is grown by its border band.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CellRect {
    pub x0: i32,
    pub y0: i32,
    pub width: u32,
    pub height: u32,
}

impl CellRect {
    /// Number of cells.
    pub fn area(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// One past the last column.
    pub fn x1(&self) -> i32 {
        self.x0 + self.width as i32
    }

    /// One past the last row.
    pub fn y1(&self) -> i32 {
        self.y0 + self.height as i32
    }

    /// True when global cell `(x, y)` lies inside.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.x0 && x < self.x1() && y >= self.y0 && y < self.y1()
    }

    /// True when `other` lies entirely inside.
    pub fn contains_rect(&self, other: &CellRect) -> bool {
        other.x0 >= self.x0
            && other.y0 >= self.y0
            && other.x1() <= self.x1()
            && other.y1() <= self.y1()
    }

    /// The rectangle grown by `band` cells on every side.
    pub fn grown(&self, band: u32) -> CellRect {
        CellRect {
            x0: self.x0 - band as i32,
            y0: self.y0 - band as i32,
            width: self.width + 2 * band,
            height: self.height + 2 * band,
        }
    }

    /// Row-major index of global cell `(x, y)`, which must lie inside.
    #[inline]
    pub fn index(&self, x: i32, y: i32) -> usize {
        debug_assert!(self.contains(x, y));
        (y - self.y0) as usize * self.width as usize + (x - self.x0) as usize
    }
}

/// The voxel grid of one bake and its tiling. Built once by the driver from the config and the
/// scene bounds; every stage receives it instead of world-unit settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridFrame {
    /// World coordinates (Z-up, metres) of the grid corner; rebased coordinates are relative to it.
    pub world_origin: [f64; 3],
    /// Horizontal cell edge [m].
    pub cell_size: f64,
    /// Vertical voxel size [m].
    pub cell_height: f64,
    /// Number of cells covering the world along X and Y (at least 1 each).
    pub cells: [u32; 2],
    /// Tile edge [cells].
    pub tile_size: u32,
    /// Extra cells each tile voxelizes around its core so that filters and erosion near the core's
    /// edge see the same neighbourhood as in a single-tile bake.
    pub band: u32,
}

impl GridFrame {
    /// The most cells along either side: grid coordinates are `i32`, with room for a tile's
    /// band beyond the world on both sides. [`GridFrame::new`] clamps to it, so a world wider
    /// than this many cells must be refused by whoever builds the frame (see
    /// [`GridFrame::cells_needed`]).
    pub const MAX_CELLS: u32 = i32::MAX as u32 / 2;

    /// Cells a rebased extent of `extent` metres needs along one side at `cell_size` (as a
    /// float: it may be far beyond [`GridFrame::MAX_CELLS`]).
    pub fn cells_needed(extent: f64, cell_size: f64) -> f64 {
        (extent / cell_size).floor() + 1.0
    }

    /// The frame covering rebased extent `extent` (metres from the origin) with the given cells.
    pub fn new(
        world_origin: [f64; 3],
        extent: [f64; 3],
        cell_size: f64,
        cell_height: f64,
        tile_size: u32,
        band: u32,
    ) -> GridFrame {
        // Saturating: an extent of 10^30 m is u64::MAX cells, one more must not wrap to 0.
        let cells_along = |e: f64| {
            ((e / cell_size).floor() as u64)
                .saturating_add(1)
                .min(GridFrame::MAX_CELLS as u64) as u32
        };
        GridFrame {
            world_origin,
            cell_size,
            cell_height,
            cells: [cells_along(extent[0]), cells_along(extent[1])],
            tile_size,
            band,
        }
    }

    /// Number of tiles along X and Y.
    pub fn tiles(&self) -> [u32; 2] {
        [
            self.cells[0].div_ceil(self.tile_size),
            self.cells[1].div_ceil(self.tile_size),
        ]
    }

    /// Total number of tiles.
    pub fn tile_count(&self) -> usize {
        let t = self.tiles();
        t[0] as usize * t[1] as usize
    }

    /// Tiles in row-major order (the canonical order of every per-tile output).
    pub fn tile_coords(&self) -> impl Iterator<Item = TileCoord> {
        let [tx, ty] = self.tiles();
        (0..ty).flat_map(move |y| (0..tx).map(move |x| TileCoord { x, y }))
    }

    /// Row-major index of a tile.
    pub fn tile_index(&self, t: TileCoord) -> usize {
        t.y as usize * self.tiles()[0] as usize + t.x as usize
    }

    /// The tile of a row-major index ([`GridFrame::tile_index`]'s inverse).
    pub fn tile_coord(&self, index: usize) -> TileCoord {
        let tx = (self.tiles()[0] as usize).max(1);
        TileCoord {
            x: (index % tx) as u32,
            y: (index / tx) as u32,
        }
    }

    /// The cells a tile owns (its core); the last row and column of tiles may be narrower.
    pub fn tile_core(&self, t: TileCoord) -> CellRect {
        let x0 = t.x * self.tile_size;
        let y0 = t.y * self.tile_size;
        CellRect {
            x0: x0 as i32,
            y0: y0 as i32,
            width: self.tile_size.min(self.cells[0] - x0),
            height: self.tile_size.min(self.cells[1] - y0),
        }
    }

    /// The cells a tile voxelizes: its core grown by the band.
    pub fn tile_voxelized(&self, t: TileCoord) -> CellRect {
        self.tile_core(t).grown(self.band)
    }

    /// The whole world as one rectangle.
    pub fn world_rect(&self) -> CellRect {
        CellRect {
            x0: 0,
            y0: 0,
            width: self.cells[0],
            height: self.cells[1],
        }
    }

    pub fn validate(&self) -> Result<(), ArtifactError> {
        let bad = |what: String| Err(invalid("grid frame", what));
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(self.cell_size) || !positive(self.cell_height) {
            return bad(format!(
                "cells of {} x {} m (each must be a positive number)",
                self.cell_size, self.cell_height
            ));
        }
        if self.tile_size == 0 {
            return bad("tiles of 0 cells".into());
        }
        let [x, y] = self.cells;
        if !(1..=GridFrame::MAX_CELLS).contains(&x) || !(1..=GridFrame::MAX_CELLS).contains(&y) {
            return bad(format!(
                "{x} x {y} cells (each side must hold 1 to {} cells)",
                GridFrame::MAX_CELLS
            ));
        }
        if !self.world_origin.iter().all(|c| c.is_finite()) {
            return bad(format!("origin {:?} is not finite", self.world_origin));
        }
        Ok(())
    }

    /// The sealed byte encoding (stored in the header of every per-tile pack, so a pack can be
    /// read alone).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        for c in self.world_origin {
            w.f64(c);
        }
        w.f64(self.cell_size);
        w.f64(self.cell_height);
        w.u32(self.cells[0]);
        w.u32(self.cells[1]);
        w.u32(self.tile_size);
        w.u32(self.band);
        codec::seal(MAGIC, VERSION, &w.bytes)
    }

    /// Decodes and validates [`GridFrame::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<GridFrame, ArtifactError> {
        let payload = codec::unseal(bytes, MAGIC, VERSION, "grid frame")?;
        let r = &mut Reader::new(payload, "grid frame");
        let frame = GridFrame {
            world_origin: [r.f64()?, r.f64()?, r.f64()?],
            cell_size: r.f64()?,
            cell_height: r.f64()?,
            cells: [r.u32()?, r.u32()?],
            tile_size: r.u32()?,
            band: r.u32()?,
        };
        frame.validate()?;
        Ok(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_world_exactly_once() {
        let f = GridFrame::new([0.0; 3], [10.0, 7.3, 1.0], 0.1, 0.05, 16, 3);
        assert_eq!(f.cells, [101, 74]);
        let mut covered = vec![0u8; f.world_rect().area()];
        for t in f.tile_coords() {
            let core = f.tile_core(t);
            assert!(f.world_rect().contains_rect(&core));
            for y in core.y0..core.y1() {
                for x in core.x0..core.x1() {
                    covered[f.world_rect().index(x, y)] += 1;
                }
            }
        }
        assert!(covered.iter().all(|&c| c == 1));
        assert_eq!(GridFrame::decode(&f.encode()).unwrap(), f);
    }

    #[test]
    fn an_enormous_extent_clamps_to_the_largest_grid_instead_of_wrapping_to_none() {
        // 10^30 m at 10 cm cells is more cells than a u64 holds: the count saturated, and the
        // one added to it wrapped to zero cells.
        let f = GridFrame::new([0.0; 3], [1e30, 5.0, 1.0], 0.1, 0.05, 256, 7);
        assert_eq!(f.cells, [GridFrame::MAX_CELLS, 51]);
        assert!(f.validate().is_ok());
        assert!(GridFrame::cells_needed(1e30, 0.1) > GridFrame::MAX_CELLS as f64);
        // A frame that is not sound says which field is wrong, in words, not as a dump.
        let broken = GridFrame {
            cells: [0, 3],
            ..f.clone()
        };
        let e = broken.validate().unwrap_err().to_string();
        assert!(e.contains("0 x 3 cells"), "{e}");
        assert!(!e.contains("GridFrame"), "{e}");
    }
}
