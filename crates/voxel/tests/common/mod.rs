//! Shared helpers: small scene builders and "voxelize the whole world with tile size N".

#![allow(dead_code)]

use std::collections::BTreeMap;
use tessera_artifacts::{GridFrame, Span, Triangle};
use tessera_config::{BakeConfig, VoxelParams};

pub fn params(cell: f64, height: f64, radius: f64, climb: f64, agent_height: f64) -> VoxelParams {
    let mut c = BakeConfig::default();
    c.voxel.cell_size = cell;
    c.voxel.cell_height = height;
    c.agent.radius = radius;
    c.agent.max_climb = climb;
    c.agent.height = agent_height;
    c.validate("test").unwrap();
    c.voxel_params()
}

/// Two triangles of an axis-aligned horizontal rectangle at height z.
pub fn quad(x0: f32, y0: f32, x1: f32, y1: f32, z: f32) -> Vec<Triangle> {
    vec![
        [[x0, y0, z], [x1, y0, z], [x1, y1, z]],
        [[x0, y0, z], [x1, y1, z], [x0, y1, z]],
    ]
}

/// A closed axis-aligned box (12 triangles).
pub fn cuboid(min: [f32; 3], max: [f32; 3]) -> Vec<Triangle> {
    let [x0, y0, z0] = min;
    let [x1, y1, z1] = max;
    let c = |i: usize| {
        [
            if i & 1 == 0 { x0 } else { x1 },
            if i & 2 == 0 { y0 } else { y1 },
            if i & 4 == 0 { z0 } else { z1 },
        ]
    };
    let faces = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    let mut out = Vec::new();
    for f in faces {
        out.push([c(f[0]), c(f[1]), c(f[2])]);
        out.push([c(f[0]), c(f[2]), c(f[3])]);
    }
    out
}

/// A ramp rising along +x from (x0, z0) to (x1, z1), from y0 to y1.
pub fn ramp(x0: f32, x1: f32, y0: f32, y1: f32, z0: f32, z1: f32) -> Vec<Triangle> {
    vec![
        [[x0, y0, z0], [x1, y0, z1], [x1, y1, z1]],
        [[x0, y0, z0], [x1, y1, z1], [x0, y1, z0]],
    ]
}

/// The frame over `triangles` (origin at zero, as after rebasing on a non-negative scene).
pub fn frame_for(triangles: &[Triangle], p: &VoxelParams, tile_size: u32) -> GridFrame {
    let mut ext = [0f64; 3];
    for v in triangles.iter().flatten() {
        for a in 0..3 {
            assert!(v[a] >= 0.0, "test scenes live in the positive octant");
            ext[a] = ext[a].max(v[a] as f64);
        }
    }
    GridFrame::new([0.0; 3], ext, p.cell_size, p.cell_height, tile_size, p.band)
}

/// Voxelizes the world tile by tile (binning in memory with the real tiler) and returns every
/// core column that has spans, keyed by global cell.
pub fn voxelize_world(
    triangles: &[Triangle],
    p: &VoxelParams,
    tile_size: u32,
) -> BTreeMap<(i32, i32), Vec<Span>> {
    let frame = frame_for(triangles, p, tile_size);
    // Areas vary with the triangle (0, 1, 2 in turn), so that tiling invariance covers them.
    let mut per_tile: Vec<(Vec<Triangle>, Vec<u8>)> = vec![Default::default(); frame.tile_count()];
    for (i, t) in triangles.iter().enumerate() {
        tessera_tiler::tiles_of_triangle(&frame, t, |c| {
            let tile = &mut per_tile[frame.tile_index(c)];
            tile.0.push(*t);
            tile.1.push((i % 3) as u8);
        });
    }
    let mut out = BTreeMap::new();
    for t in frame.tile_coords() {
        let (tris, areas) = &per_tile[frame.tile_index(t)];
        let field = tessera_voxel::voxelize_tile(&frame, p, t, tris, areas).field;
        field.validate().unwrap();
        assert_eq!(field.rect, frame.tile_core(t).grown(tessera_voxel::RING));
        let core = frame.tile_core(t);
        for y in core.y0..core.y1() {
            for x in core.x0..core.x1() {
                let col = field.column(x, y);
                if !col.is_empty() {
                    out.insert((x, y), col.to_vec());
                }
            }
        }
    }
    out
}

/// The tile size that makes the whole world one tile.
pub const SINGLE_TILE: u32 = 8192;
