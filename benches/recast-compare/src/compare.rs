//! The timed runs: tessera's `voxelize_tile` and the matching Recast calls, per tile, on one
//! thread, over the same tile list.
//!
//! What one tile costs on each side:
//!
//! | step | tessera | Recast |
//! |---|---|---|
//! | rasterize | `rasterize::rasterize` (slope test inside) | `rcCreateHeightfield`, `rcMarkWalkableTriangles`, `rcRasterizeTriangles` |
//! | low hanging obstacles | `filter_low_hanging_obstacles` | `rcFilterLowHangingWalkableObstacles` |
//! | ledges | `filter_ledges` | `rcFilterLedgeSpans` |
//! | clearance | `filter_low_clearance` | `rcFilterWalkableLowHeightSpans` |
//! | links for erosion | (inside `erode`) | `rcBuildCompactHeightfield` |
//! | erosion | `erode` | `rcErodeWalkableArea` |
//! | output | `SpanField::crop` to core + 1 ring | (none: the compact field is the output) |
//!
//! Freeing each tile's results is inside the timed region on both sides. Preparing the inputs
//! (binning, converting to Recast's frame) is not.

use crate::recast::{self, CompactHeightfield, Context, Heightfield, RecastError, RecastMesh};
use crate::scene::TiledScene;
use std::hint::black_box;
use std::time::{Duration, Instant};
use tessera_artifacts::{CellRect, SpanField};
use tessera_voxel::{filters, rasterize, voxelize_tile};

/// One tile prepared for Recast: the triangles in Recast's frame and the heightfield's box.
pub struct RecastTile {
    mesh: RecastMesh,
    /// The same triangles wound the other way, when both windings count as floors (an
    /// untimed diagnostic: what a winding-blind slope test would make walkable).
    flipped: Option<RecastMesh>,
    width: i32,
    depth: i32,
    bmin: [f32; 3],
    bmax: [f32; 3],
    /// The core's columns inside the heightfield: x, z offset and size.
    pub(crate) core: [i32; 4],
}

/// Converts a point from tessera's rebased Z-up frame to Recast's Y-up frame: `(x, y, z)`
/// becomes `(x, z, y)`, so that Recast's column `(x, z)` is tessera's column `(x, y)` with no
/// flip. Swapping two axes mirrors the frame, so callers also swap two vertices of each triangle
/// to keep the winding (Recast only takes counter-clockwise-from-above triangles as floors).
#[inline]
pub fn to_recast(p: [f32; 3]) -> [f32; 3] {
    [p[0], p[2], p[1]]
}

/// Recast's heightfield top: a little above the highest vertex, in whole voxels.
fn recast_top(scene: &TiledScene) -> Result<f64, String> {
    let ch = scene.frame.cell_height;
    let voxels = (scene.top / ch).ceil() + 2.0;
    if voxels > recast::SPAN_MAX_HEIGHT as f64 {
        return Err(format!(
            "the scene is {:.1} m tall, {voxels} voxels of {ch} m: more than Recast's {} (13-bit spans); raise --cell-height",
            scene.top,
            recast::SPAN_MAX_HEIGHT
        ));
    }
    Ok(voxels * ch)
}

/// Which triangles Recast may mark walkable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Winding {
    /// Recast's rule: counter-clockwise seen from above (normal up) only.
    Up,
    /// Either winding (`|n_z|` against the slope, tessera's rule before it took Recast's):
    /// marked by running `rcMarkWalkableTriangles` a second time on the triangles wound the
    /// other way.
    Both,
}

/// Converts every tile's triangles and box to Recast's frame.
pub fn prepare_recast(scene: &TiledScene, winding: Winding) -> Result<Vec<RecastTile>, String> {
    let top = recast_top(scene)?;
    let cs = scene.frame.cell_size;
    let p = &scene.params;
    if p.walkable_height > 255 {
        // Recast's compact spans store the open height in a byte: no link would ever pass.
        return Err(format!(
            "agent height is {} voxels; Recast's compact heightfield caps clearance at 255 voxels",
            p.walkable_height
        ));
    }
    if p.walkable_radius > 127 {
        return Err(format!(
            "agent radius is {} cells; Recast's erosion keeps distances in a byte (at most 127 cells)",
            p.walkable_radius
        ));
    }
    Ok(scene
        .tiles
        .iter()
        .map(|(t, tris)| {
            let rect = scene.frame.tile_voxelized(*t);
            let core = scene.frame.tile_core(*t);
            let mut verts = Vec::with_capacity(tris.len() * 9);
            for tri in tris {
                // a, c, b: the axis swap mirrors, the vertex swap mirrors back.
                for v in [tri[0], tri[2], tri[1]] {
                    verts.extend_from_slice(&to_recast(v));
                }
            }
            let indices: Vec<i32> = (0..tris.len() as i32 * 3).collect();
            let flipped = (winding == Winding::Both).then(|| {
                let reversed = indices.chunks(3).flat_map(|t| [t[0], t[2], t[1]]).collect();
                RecastMesh::new(verts.clone(), reversed)
            });
            RecastTile {
                mesh: RecastMesh::new(verts, indices),
                flipped,
                width: rect.width as i32,
                depth: rect.height as i32,
                bmin: [
                    (rect.x0 as f64 * cs) as f32,
                    0.0,
                    (rect.y0 as f64 * cs) as f32,
                ],
                bmax: [
                    (rect.x1() as f64 * cs) as f32,
                    top as f32,
                    (rect.y1() as f64 * cs) as f32,
                ],
                core: [
                    core.x0 - rect.x0,
                    core.y0 - rect.y0,
                    core.width as i32,
                    core.height as i32,
                ],
            }
        })
        .collect())
}

/// Span counts over core columns, summed over tiles: the sanity check that both sides built the
/// same thing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Solid spans.
    pub spans: u64,
    /// Walkable spans after the three filters, before erosion.
    pub walkable_filtered: u64,
    /// Walkable spans after erosion (the result).
    pub walkable: u64,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.spans += o.spans;
        self.walkable_filtered += o.walkable_filtered;
        self.walkable += o.walkable;
    }
}

/// Names of the timed steps, in order, for each side.
pub const TESSERA_STAGES: [&str; STAGES] = [
    "rasterize",
    "low hanging obstacles",
    "ledges",
    "clearance",
    "-",
    "erosion (links + distances)",
    "crop to core + ring",
    "free",
];
pub const RECAST_STAGES: [&str; STAGES] = [
    "create + mark slopes + rasterize",
    "low hanging obstacles",
    "ledges",
    "clearance",
    "build compact heightfield (links)",
    "erosion (distances)",
    "-",
    "free",
];
pub const STAGES: usize = 8;

/// Seconds per step, summed over tiles.
#[derive(Clone, Copy, Debug)]
pub struct StageTimes(pub [Duration; STAGES]);

impl StageTimes {
    fn zero() -> StageTimes {
        StageTimes([Duration::ZERO; STAGES])
    }

    /// Keeps, per step, the smaller of the two.
    pub fn min(self, o: StageTimes) -> StageTimes {
        let mut out = self;
        for (a, b) in out.0.iter_mut().zip(o.0) {
            *a = (*a).min(b);
        }
        out
    }

    pub fn total(&self) -> Duration {
        self.0.iter().sum()
    }
}

/// Records the time since the last lap into a step.
struct Laps {
    last: Instant,
}

impl Laps {
    fn start() -> Laps {
        Laps {
            last: Instant::now(),
        }
    }

    fn lap(&mut self, times: &mut StageTimes, stage: usize) {
        let now = Instant::now();
        times.0[stage] += now - self.last;
        self.last = now;
    }

    /// Restarts the clock (after untimed work such as counting).
    fn resume(&mut self) {
        self.last = Instant::now();
    }
}

/// tessera, the public entry point: `voxelize_tile` on every tile.
pub fn tessera_total(scene: &TiledScene) -> Duration {
    let areas = scene.default_areas();
    let start = Instant::now();
    for (t, tris) in &scene.tiles {
        let tile = voxelize_tile(&scene.frame, &scene.params, *t, tris, &areas[..tris.len()]);
        black_box(&tile.field);
    }
    start.elapsed()
}

/// Walkable spans of the field's core columns.
fn core_walkable(field: &SpanField) -> u64 {
    field.core_counts().1
}

/// tessera step by step (the body of `voxelize_tile`), with counts; `check` also compares the
/// result with `voxelize_tile`'s.
pub fn tessera_stages(scene: &TiledScene, check: bool) -> (StageTimes, Counts) {
    let p = &scene.params;
    let mut times = StageTimes::zero();
    let mut counts = Counts::default();
    let areas = scene.default_areas();
    for (t, tris) in &scene.tiles {
        let areas = &areas[..tris.len()];
        let rect = scene.frame.tile_voxelized(*t);
        let core: CellRect = scene.frame.tile_core(*t);
        let mut laps = Laps::start();
        let mut field = rasterize::rasterize(&scene.frame, p, rect, core, tris, areas);
        laps.lap(&mut times, 0);
        filters::filter_low_hanging_obstacles(&mut field, p.walkable_climb);
        laps.lap(&mut times, 1);
        filters::filter_ledges(&mut field, p.walkable_height, p.walkable_climb);
        laps.lap(&mut times, 2);
        filters::filter_low_clearance(&mut field, p.walkable_height);
        laps.lap(&mut times, 3);
        let filtered = core_walkable(&field);
        laps.resume();
        filters::erode(
            &mut field,
            p.walkable_height,
            p.walkable_climb,
            p.walkable_radius,
        );
        laps.lap(&mut times, 5);
        let out = field.crop(core.grown(1), core);
        laps.lap(&mut times, 6);
        let (spans, walkable) = out.core_counts();
        if check {
            let reference = voxelize_tile(&scene.frame, p, *t, tris, areas).field;
            if reference != out {
                eprintln!(
                    "warning: tile ({}, {}): the step-by-step run differs from voxelize_tile (its body changed?)",
                    t.x, t.y
                );
            }
        }
        counts += Counts {
            spans,
            walkable_filtered: filtered,
            walkable,
        };
        laps.resume();
        drop(field);
        drop(out);
        laps.lap(&mut times, 7);
    }
    (times, counts)
}

/// What one Recast tile build keeps alive until it is freed.
pub(crate) struct RecastOutput {
    pub(crate) hf: Heightfield,
    pub(crate) chf: CompactHeightfield,
}

/// Builds one tile the Recast way. `on_lap(stage, hf)` is called after each step, with the
/// heightfield after the last filter (so the caller can count its walkable spans untimed).
pub(crate) fn recast_tile(
    ctx: &Context,
    tile: &RecastTile,
    scene: &TiledScene,
    mut on_lap: impl FnMut(usize, Option<&Heightfield>),
) -> Result<RecastOutput, RecastError> {
    let p = &scene.params;
    let (height, climb) = (p.walkable_height as i32, p.walkable_climb as i32);
    let mut hf = Heightfield::new(
        ctx,
        tile.width,
        tile.depth,
        tile.bmin,
        tile.bmax,
        scene.frame.cell_size as f32,
        scene.frame.cell_height as f32,
    )?;
    let mut areas = vec![recast::NULL_AREA; tile.mesh.triangle_count()];
    recast::mark_walkable_triangles(ctx, scene.max_slope as f32, &tile.mesh, &mut areas);
    if let Some(flipped) = &tile.flipped {
        // Marks more triangles walkable, never fewer.
        recast::mark_walkable_triangles(ctx, scene.max_slope as f32, flipped, &mut areas);
    }
    hf.rasterize(ctx, &tile.mesh, &areas, climb)?;
    drop(areas);
    on_lap(0, None);
    hf.filter_low_hanging_obstacles(ctx, climb);
    on_lap(1, None);
    hf.filter_ledges(ctx, height, climb);
    on_lap(2, None);
    hf.filter_low_clearance(ctx, height);
    on_lap(3, Some(&hf));
    let mut chf = CompactHeightfield::build(ctx, height, climb, &hf)?;
    on_lap(4, None);
    if p.walkable_radius > 0 {
        chf.erode(ctx, p.walkable_radius as i32)?;
    }
    on_lap(5, None);
    Ok(RecastOutput { hf, chf })
}

/// Recast, whole tiles.
pub fn recast_total(
    ctx: &Context,
    scene: &TiledScene,
    tiles: &[RecastTile],
) -> Result<Duration, RecastError> {
    let start = Instant::now();
    for tile in tiles {
        let out = recast_tile(ctx, tile, scene, |_, _| {})?;
        black_box(&out.chf);
    }
    Ok(start.elapsed())
}

/// Recast step by step, with counts.
pub fn recast_stages(
    ctx: &Context,
    scene: &TiledScene,
    tiles: &[RecastTile],
) -> Result<(StageTimes, Counts), RecastError> {
    let mut times = StageTimes::zero();
    let mut counts = Counts::default();
    for tile in tiles {
        let [x0, z0, w, d] = tile.core;
        let mut laps = Laps::start();
        let mut filtered = 0;
        let out = recast_tile(ctx, tile, scene, |stage, hf| {
            laps.lap(&mut times, stage);
            if let Some(hf) = hf {
                filtered = hf.counts(x0, z0, w, d).1;
                laps.resume();
            }
        })?;
        let spans = out.hf.counts(x0, z0, w, d).0;
        let walkable = out.chf.walkable(x0, z0, w, d);
        counts += Counts {
            spans,
            walkable_filtered: filtered,
            walkable,
        };
        laps.resume();
        drop(out);
        laps.lap(&mut times, 7);
    }
    Ok((times, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks one triangle (tessera frame) the way `prepare_recast` converts it.
    fn recast_marks(tri: [[f32; 3]; 3]) -> bool {
        let mut verts = Vec::new();
        for v in [tri[0], tri[2], tri[1]] {
            verts.extend_from_slice(&to_recast(v));
        }
        let mesh = RecastMesh::new(verts, vec![0, 1, 2]);
        let mut areas = [recast::NULL_AREA];
        recast::mark_walkable_triangles(&Context::new(), 45.0, &mesh, &mut areas);
        areas[0] != recast::NULL_AREA
    }

    #[test]
    fn floors_facing_up_stay_walkable_in_recast() {
        // Counter-clockwise seen from +Z: normal up.
        let up = [[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]];
        assert!(recast_marks(up));
        // The same triangle wound the other way faces down: Recast refuses it.
        assert!(!recast_marks([up[0], up[2], up[1]]));
        // A wall is never walkable.
        assert!(!recast_marks([
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0]
        ]));
    }
}
