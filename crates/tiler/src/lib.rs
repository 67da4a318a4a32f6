//! Tile binning: every triangle goes to every tile whose voxelized rectangle (core grown by the
//! border band) it overlaps, so each tile can be voxelized alone and agree with its neighbours.
//!
//! The [`Binner`] keeps one byte buffer per tile and a bound on their total; when the bound is
//! reached it hands the largest buffers to a `spill` callback (the driver compresses them and
//! appends them to the tile pack on disk) and frees them. Triangles reach a tile in scene order,
//! whatever the spilling, which keeps voxelization identical for any tiling.
//!
//! Finding the tiles of a triangle is most of the work; [`Placements`] does it for a run of
//! triangles apart from the binner, so a driver can place runs on several threads and add them
//! to the one binner in scene order ([`Binner::add_placed`]): the buffers, the spills and so the
//! pack are the same as when adding one triangle at a time.
//!
//! Pure: no I/O, no threads. Depends on geom and artifacts only.

use rustc_hash::FxHashMap;
use tessera_artifacts::{CellRect, GridFrame, TileCoord, TileTriangle, Triangle};
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
        let first = tessera_geom::floor_i64((lo(axis) - band) / ts).max(0);
        let last = tessera_geom::floor_i64((hi(axis) + band) / ts).min(count as i64 - 1);
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

/// Most tiles [`Placements`] lists for one triangle; the tiles of a triangle reaching more
/// (one wider than a few tiles: rare, and costly to bin anyway) are found again when it is
/// added.
pub const MAX_LISTED: usize = 16;

/// Marks a triangle whose tiles were not listed.
const NOT_LISTED: u8 = u8::MAX;

/// The tiles each triangle of a run reaches (as [`tiles_of_triangle`] visits them), found
/// apart from the [`Binner`] so that runs can be placed on any thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placements {
    /// Tile indices, triangle after triangle.
    tiles: Vec<u32>,
    /// Per triangle: how many of `tiles` are its own, or [`NOT_LISTED`].
    counts: Vec<u8>,
}

impl Placements {
    /// Memory held per triangle at most [bytes].
    pub const MAX_BYTES_PER_TRIANGLE: usize = 1 + 4 * MAX_LISTED;

    /// The tiles of every triangle of `triangles`.
    pub fn of(frame: &GridFrame, triangles: &[Triangle]) -> Placements {
        let mut p = Placements {
            tiles: Vec::with_capacity(triangles.len() * 2),
            counts: Vec::with_capacity(triangles.len()),
        };
        for tri in triangles {
            let start = p.tiles.len();
            let mut count = 0;
            tiles_of_triangle(frame, tri, |t| {
                if count < MAX_LISTED {
                    p.tiles.push(frame.tile_index(t) as u32);
                }
                count += 1;
            });
            if count > MAX_LISTED {
                p.tiles.truncate(start);
                p.counts.push(NOT_LISTED);
            } else {
                p.counts.push(count as u8);
            }
        }
        p
    }

    /// Triangles placed.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

/// Buffers handed to the `spill` callback, in the order they go to the pack: (tile index,
/// that tile's triangles since its last spill).
pub type Spill = Vec<(u32, Vec<u8>)>;

/// Per-tile triangle buffers with a bound on their total size.
pub struct Binner {
    frame: GridFrame,
    /// Only tiles holding triangles have a buffer (a slot): the world's bounding rectangle
    /// may hold far more tiles than its geometry touches (a stray triangle far from the rest).
    buffers: Vec<(u32, Vec<u8>)>,
    slot_of: FxHashMap<u32, u32>,
    /// The last tile written and its slot: consecutive triangles mostly share a tile.
    last: (u32, u32),
    buffered: usize,
    limit: usize,
    /// Tile indices of the triangle being added (reused).
    scratch: Vec<u32>,
    /// Triangle copies written (a triangle reaching k tiles counts k times).
    pub placements: u64,
}

impl Binner {
    /// `limit`: the most bytes held in buffers at once (at least one triangle).
    pub fn new(frame: &GridFrame, limit: usize) -> Binner {
        Binner {
            frame: frame.clone(),
            buffers: Vec::new(),
            slot_of: FxHashMap::default(),
            last: (u32::MAX, 0),
            buffered: 0,
            limit: limit.max(std::mem::size_of::<TileTriangle>()),
            scratch: Vec::new(),
            placements: 0,
        }
    }

    /// Adds one triangle of area `area` to the tiles it reaches; spills when over the bound.
    pub fn add<E>(
        &mut self,
        tri: &Triangle,
        area: u8,
        spill: &mut impl FnMut(Spill) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut tiles = std::mem::take(&mut self.scratch);
        tiles.clear();
        tiles_of_triangle(&self.frame, tri, |t| {
            tiles.push(self.frame.tile_index(t) as u32)
        });
        let added = self.add_to(tri, area, &tiles, spill);
        self.scratch = tiles;
        added
    }

    /// Adds `triangles` of areas `areas`, whose tiles `placements` holds (from
    /// [`Placements::of`] on the same triangles and grid), exactly as [`Binner::add`] would one
    /// by one.
    pub fn add_placed<E>(
        &mut self,
        triangles: &[Triangle],
        areas: &[u8],
        placements: &Placements,
        spill: &mut impl FnMut(Spill) -> Result<(), E>,
    ) -> Result<(), E> {
        assert_eq!(
            triangles.len(),
            placements.len(),
            "placements of other triangles"
        );
        assert_eq!(triangles.len(), areas.len(), "an area per triangle");
        let mut at = 0;
        for ((tri, &area), &count) in triangles.iter().zip(areas).zip(&placements.counts) {
            if count == NOT_LISTED {
                self.add(tri, area, spill)?;
            } else {
                let tiles = &placements.tiles[at..at + count as usize];
                at += count as usize;
                self.add_to(tri, area, tiles, spill)?;
            }
        }
        Ok(())
    }

    /// Appends the triangle to the buffers of `tiles`; spills when over the bound.
    fn add_to<E>(
        &mut self,
        tri: &Triangle,
        area: u8,
        tiles: &[u32],
        spill: &mut impl FnMut(Spill) -> Result<(), E>,
    ) -> Result<(), E> {
        let record = TileTriangle {
            corners: *tri,
            area: area as u32,
        };
        let bytes = tessera_artifacts::triangles_as_bytes(std::slice::from_ref(&record));
        for &t in tiles {
            let slot = if t == self.last.0 {
                self.last.1
            } else {
                let next = self.buffers.len() as u32;
                let slot = *self.slot_of.entry(t).or_insert(next);
                if slot == next {
                    self.buffers.push((t, Vec::new()));
                }
                self.last = (t, slot);
                slot
            };
            self.buffers[slot as usize].1.extend_from_slice(bytes);
        }
        self.placements += tiles.len() as u64;
        self.buffered += tiles.len() * bytes.len();
        if self.buffered > self.limit {
            self.spill_largest(spill)?;
        }
        Ok(())
    }

    /// Spills the largest buffers until at most half the bound is held.
    fn spill_largest<E>(
        &mut self,
        spill: &mut impl FnMut(Spill) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut order: Vec<(usize, u32, usize)> = self
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, (_, b))| !b.is_empty())
            .map(|(slot, (t, b))| (b.len(), *t, slot))
            .collect();
        // Largest first; ties by tile index so that the chunk layout is deterministic.
        order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut out = Vec::new();
        for (len, tile, slot) in order {
            if self.buffered <= self.limit / 2 {
                break;
            }
            out.push((tile, std::mem::take(&mut self.buffers[slot].1)));
            self.buffered -= len;
        }
        spill(out)
    }

    /// Spills everything left, in tile order.
    pub fn finish<E>(mut self, spill: &mut impl FnMut(Spill) -> Result<(), E>) -> Result<u64, E> {
        let mut out: Spill = std::mem::take(&mut self.buffers)
            .into_iter()
            .filter(|(_, buffer)| !buffer.is_empty())
            .collect();
        out.sort_unstable_by_key(|(tile, _)| *tile);
        spill(out)?;
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
        let mut binner = Binner::new(&f, 40 * 4);
        let mut chunks: Vec<(u32, Vec<u8>)> = Vec::new();
        let mut spill = |out: Spill| -> Result<(), ()> {
            chunks.extend(out);
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
        for (i, t) in tris.iter().enumerate() {
            binner.add(t, i as u8 % 3, &mut spill).unwrap();
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
            for (i, t) in tris.iter().enumerate() {
                tiles_of_triangle(&f, t, |c| {
                    if f.tile_index(c) == tile as usize {
                        expected.push(TileTriangle {
                            corners: *t,
                            area: i as u32 % 3,
                        })
                    }
                });
            }
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn placed_runs_spill_exactly_as_one_by_one() {
        let f = frame();
        let tris: Vec<Triangle> = (0..300)
            .map(|i| {
                let x = (i * 37 % 97) as f32;
                let y = (i * 53 % 89) as f32;
                // Every 50th triangle spans most of the world (more tiles than are listed).
                let s = if i % 50 == 7 {
                    90.0
                } else {
                    1.0 + (i % 5) as f32 * 4.0
                };
                [[x, y, 0.0], [x + s, y, 1.0], [x, y + s, 2.0]]
            })
            .collect();
        let areas: Vec<u8> = (0..tris.len()).map(|i| (i % 7) as u8).collect();
        for limit in [40, 40 * 10, 40 * 1000] {
            let run = |runs: usize| {
                let mut chunks: Vec<(u32, Vec<u8>)> = Vec::new();
                let mut spill = |out: Spill| -> Result<(), ()> {
                    chunks.push((u32::MAX, Vec::new())); // marks where a spill began
                    chunks.extend(out);
                    Ok(())
                };
                let mut binner = Binner::new(&f, limit);
                if runs == 0 {
                    for (t, &a) in tris.iter().zip(&areas) {
                        binner.add(t, a, &mut spill).unwrap();
                    }
                } else {
                    for (part, a) in tris.chunks(runs).zip(areas.chunks(runs)) {
                        let p = Placements::of(&f, part);
                        binner.add_placed(part, a, &p, &mut spill).unwrap();
                    }
                }
                let placements = binner.finish(&mut spill).unwrap();
                (chunks, placements)
            };
            let one_by_one = run(0);
            assert!(one_by_one.0.len() > 2);
            for runs in [1, 7, 64, 300] {
                assert!(run(runs) == one_by_one, "limit {limit}, runs of {runs}");
            }
        }
    }
}
