//! Tile binning: every triangle goes to every tile whose voxelized rectangle (core grown by the
//! border band) it overlaps, so each tile can be voxelized alone and agree with its neighbours.
//!
//! The [`Binner`] keeps one byte buffer per tile and a bound on their total; when the bound is
//! reached it hands the largest buffers to a `spill` callback (the driver appends them to the
//! tile pack on disk) and frees them. Triangles reach a tile in scene order, whatever the
//! spilling, which keeps voxelization identical for any tiling.
//!
//! Pure: no I/O, no threads. Depends on geom and artifacts only.

use tessera_artifacts::{CellRect, GridFrame, TileCoord, Triangle};
use tessera_geom::triangle_overlaps_rect;

/// Slack added around a tile's rectangle in the overlap test [cells]. Taking a triangle that
/// only grazes a tile costs nothing (it rasterizes to no cell of it); missing one would break
/// tiling invariance, so the test errs on the generous side of floating point.
const SLACK_CELLS: f64 = 1e-3;

/// A triangle's plan projection in cell units (f64), as every overlap test sees it.
fn plan_cells(frame: &GridFrame, tri: &Triangle) -> [[f64; 2]; 3] {
    let inv = 1.0 / frame.cell_size;
    tri.map(|v| [v[0] as f64 * inv, v[1] as f64 * inv])
}

fn overlaps(plan: &[[f64; 2]; 3], r: &CellRect) -> bool {
    let min = [r.x0 as f64 - SLACK_CELLS, r.y0 as f64 - SLACK_CELLS];
    let max = [r.x1() as f64 + SLACK_CELLS, r.y1() as f64 + SLACK_CELLS];
    triangle_overlaps_rect(plan, min, max)
}

/// True when the triangle may rasterize into a cell of `rect` (conservative).
pub fn triangle_reaches(frame: &GridFrame, tri: &Triangle, rect: &CellRect) -> bool {
    overlaps(&plan_cells(frame, tri), rect)
}

/// Calls `visit` for each tile (row-major) whose voxelized rectangle the triangle's plan
/// projection overlaps.
pub fn tiles_of_triangle(frame: &GridFrame, tri: &Triangle, mut visit: impl FnMut(TileCoord)) {
    let plan = plan_cells(frame, tri);
    let [tiles_x, tiles_y] = frame.tiles();
    let ts = frame.tile_size as f64;
    let band = frame.band as f64 + SLACK_CELLS;
    let lo = |axis: usize| plan.iter().map(|p| p[axis]).fold(f64::INFINITY, f64::min);
    let hi = |axis: usize| {
        plan.iter()
            .map(|p| p[axis])
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let range = |axis: usize, count: u32| {
        let first = ((lo(axis) - band) / ts).floor().max(0.0) as i64;
        let last = (((hi(axis) + band) / ts).floor() as i64).min(count as i64 - 1);
        (first, last)
    };
    let (x0, x1) = range(0, tiles_x);
    let (y0, y1) = range(1, tiles_y);
    let single = x0 == x1 && y0 == y1;
    for ty in y0..=y1 {
        for tx in x0..=x1 {
            let t = TileCoord {
                x: tx as u32,
                y: ty as u32,
            };
            if single || overlaps(&plan, &frame.tile_voxelized(t)) {
                visit(t);
            }
        }
    }
}

/// Per-tile triangle buffers with a bound on their total size.
pub struct Binner {
    frame: GridFrame,
    buffers: Vec<Vec<u8>>,
    buffered: usize,
    limit: usize,
    /// Triangle copies written (a triangle reaching k tiles counts k times).
    pub placements: u64,
}

impl Binner {
    /// `limit`: the most bytes held in buffers at once (at least one triangle).
    pub fn new(frame: &GridFrame, limit: usize) -> Binner {
        Binner {
            frame: frame.clone(),
            buffers: vec![Vec::new(); frame.tile_count()],
            buffered: 0,
            limit: limit.max(std::mem::size_of::<Triangle>()),
            placements: 0,
        }
    }

    /// Adds one triangle to the tiles it reaches; spills when over the bound.
    pub fn add<E>(
        &mut self,
        tri: &Triangle,
        spill: &mut impl FnMut(u32, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let bytes = tessera_artifacts::triangles_as_bytes(std::slice::from_ref(tri));
        let frame = &self.frame;
        let buffers = &mut self.buffers;
        let mut added = 0;
        tiles_of_triangle(frame, tri, |t| {
            buffers[frame.tile_index(t)].extend_from_slice(bytes);
            added += 1;
        });
        self.placements += added;
        self.buffered += added as usize * bytes.len();
        if self.buffered > self.limit {
            self.spill_largest(spill)?;
        }
        Ok(())
    }

    /// Spills the largest buffers until at most half the bound is held.
    fn spill_largest<E>(
        &mut self,
        spill: &mut impl FnMut(u32, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut order: Vec<(usize, u32)> = self
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.is_empty())
            .map(|(i, b)| (b.len(), i as u32))
            .collect();
        // Largest first; ties by tile index so that the chunk layout is deterministic.
        order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (len, tile) in order {
            if self.buffered <= self.limit / 2 {
                break;
            }
            let buf = std::mem::take(&mut self.buffers[tile as usize]);
            spill(tile, &buf)?;
            self.buffered -= len;
        }
        Ok(())
    }

    /// Spills everything left, in tile order.
    pub fn finish<E>(
        mut self,
        spill: &mut impl FnMut(u32, &[u8]) -> Result<(), E>,
    ) -> Result<u64, E> {
        for tile in 0..self.buffers.len() {
            let buf = std::mem::take(&mut self.buffers[tile]);
            if !buf.is_empty() {
                spill(tile as u32, &buf)?;
            }
        }
        Ok(self.placements)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> GridFrame {
        // 100 x 100 cells of 1 m, 10-cell tiles, band 2.
        GridFrame::new([0.0; 3], [99.5, 99.5, 10.0], 1.0, 0.1, 10, 2)
    }

    #[test]
    fn small_triangle_reaches_its_tile_and_band_neighbours() {
        let f = frame();
        let mut got = Vec::new();
        // Inside tile (1, 1), one cell from its left edge: within the left neighbour's band.
        tiles_of_triangle(
            &f,
            &[[11.0, 15.0, 0.0], [12.0, 15.0, 0.0], [11.0, 16.0, 0.0]],
            |t| got.push(t),
        );
        assert_eq!(
            got,
            vec![TileCoord { x: 0, y: 1 }, TileCoord { x: 1, y: 1 }]
        );
    }

    #[test]
    fn large_triangle_lands_in_every_tile_it_covers() {
        let f = frame();
        let mut got = Vec::new();
        let tri = [[0.0, 0.0, 0.0], [99.0, 0.0, 0.0], [0.0, 99.0, 0.0]];
        tiles_of_triangle(&f, &tri, |t| got.push(t));
        // Every tile the triangle really overlaps, and none wholly beyond its hypotenuse.
        for t in f.tile_coords() {
            let r = f.tile_voxelized(t);
            let overlaps = r.x0.max(0) + r.y0.max(0) <= 99;
            assert_eq!(got.contains(&t), overlaps, "{t:?}");
        }
    }

    #[test]
    fn spilling_keeps_scene_order_per_tile() {
        let f = frame();
        let mut binner = Binner::new(&f, 36 * 4);
        let mut chunks: Vec<(u32, Vec<u8>)> = Vec::new();
        let mut spill = |tile: u32, bytes: &[u8]| -> Result<(), ()> {
            chunks.push((tile, bytes.to_vec()));
            Ok(())
        };
        let tris: Vec<Triangle> = (0..20)
            .map(|i| {
                let x = 1.0 + (i % 7) as f32 * 13.0;
                [
                    [x, 1.0, i as f32],
                    [x + 0.5, 1.0, i as f32],
                    [x, 1.5, i as f32],
                ]
            })
            .collect();
        for t in &tris {
            binner.add(t, &mut spill).unwrap();
        }
        binner.finish(&mut spill).unwrap();
        for tile in 0..f.tile_count() as u32 {
            let bytes: Vec<u8> = chunks
                .iter()
                .filter(|c| c.0 == tile)
                .flat_map(|c| c.1.clone())
                .collect();
            let got = tessera_artifacts::triangles_from_bytes(&bytes).unwrap();
            let mut expected = Vec::new();
            for t in &tris {
                tiles_of_triangle(&f, t, |c| {
                    if f.tile_index(c) == tile as usize {
                        expected.push(*t)
                    }
                });
            }
            assert_eq!(got, expected);
        }
    }
}
