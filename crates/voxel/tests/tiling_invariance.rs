//! The oracle: a tiled voxelization equals a single-tile one, column by column.

mod common;
use common::*;
use proptest::prelude::*;
use tessera_artifacts::Triangle;

#[derive(Clone, Debug)]
enum Piece {
    Box {
        min: [f32; 3],
        size: [f32; 3],
    },
    Ramp {
        x: f32,
        y: f32,
        len: f32,
        width: f32,
        rise: f32,
    },
    Tilted {
        a: [f32; 3],
        b: [f32; 3],
        c: [f32; 3],
    },
}

fn piece() -> impl Strategy<Value = Piece> {
    let coord = 0.0f32..28.0;
    prop_oneof![
        (
            coord.clone(),
            coord.clone(),
            0.0f32..3.0,
            0.1f32..6.0,
            0.1f32..6.0,
            0.05f32..3.0
        )
            .prop_map(|(x, y, z, sx, sy, sz)| Piece::Box {
                min: [x, y, z],
                size: [sx, sy, sz]
            }),
        (
            coord.clone(),
            coord.clone(),
            1.0f32..8.0,
            0.5f32..4.0,
            0.0f32..4.0
        )
            .prop_map(|(x, y, len, width, rise)| Piece::Ramp {
                x,
                y,
                len,
                width,
                rise
            }),
        (
            (coord.clone(), coord.clone(), 0.0f32..4.0),
            (coord.clone(), coord.clone(), 0.0f32..4.0),
            (coord.clone(), coord, 0.0f32..4.0)
        )
            .prop_map(|(a, b, c)| Piece::Tilted {
                a: [a.0, a.1, a.2],
                b: [b.0, b.1, b.2],
                c: [c.0, c.1, c.2]
            }),
    ]
}

fn build(pieces: &[Piece]) -> Vec<Triangle> {
    let mut tris = quad(0.0, 0.0, 32.0, 32.0, 0.0);
    for p in pieces {
        match *p {
            Piece::Box { min, size } => tris.extend(cuboid(
                min,
                [min[0] + size[0], min[1] + size[1], min[2] + size[2]],
            )),
            Piece::Ramp {
                x,
                y,
                len,
                width,
                rise,
            } => tris.extend(ramp(x, x + len, y, y + width, 0.0, rise)),
            Piece::Tilted { a, b, c } => tris.push([a, b, c]),
        }
    }
    tris
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_scenes_are_tiling_invariant(
        pieces in proptest::collection::vec(piece(), 1..14),
        radius_cells in 0u32..3,
        cell in prop_oneof![Just(0.25f64), Just(0.3), Just(0.2)],
    ) {
        let p = params(cell, 0.1, radius_cells as f64 * cell, 0.5, 2.0);
        let tris = build(&pieces);
        let single = voxelize_world(&tris, &p, SINGLE_TILE);
        for tile in [16, 64] {
            let tiled = voxelize_world(&tris, &p, tile);
            prop_assert!(tiled == single, "tile size {} differs from a single tile", tile);
        }
    }
}

#[test]
fn a_triangle_larger_than_many_tiles() {
    let p = params(0.25, 0.1, 0.5, 0.5, 2.0);
    // One huge sloped triangle over 40 m plus a few boxes: it must land in every tile it covers.
    let mut tris: Vec<Triangle> = vec![[[0.0, 0.0, 0.0], [40.0, 0.0, 1.0], [0.0, 40.0, 3.0]]];
    tris.extend(cuboid([5.0, 5.0, 0.0], [6.0, 9.0, 2.5]));
    let single = voxelize_world(&tris, &p, SINGLE_TILE);
    for tile in [8, 16, 64, 256] {
        assert!(
            voxelize_world(&tris, &p, tile) == single,
            "tile size {tile}"
        );
    }
    assert!(single.len() > 12000);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// A tile voxelized in parts (as a tight memory budget does) and assembled equals the
    /// tile voxelized whole.
    #[test]
    fn parts_assemble_to_the_whole_tile(
        pieces in proptest::collection::vec(piece(), 1..10),
        radius_cells in 0u32..3,
        min_side in 5u32..40,
    ) {
        let p = params(0.25, 0.1, radius_cells as f64 * 0.25, 0.5, 2.0);
        let tris = build(&pieces);
        let frame = frame_for(&tris, &p, SINGLE_TILE);
        let tile = tessera_artifacts::TileCoord { x: 0, y: 0 };
        let areas: Vec<u8> = (0..tris.len()).map(|i| (i % 3) as u8).collect();
        let whole = tessera_voxel::voxelize_tile(&frame, &p, tile, &tris, &areas).field;
        let parts = tessera_voxel::split_parts(frame.tile_core(tile), 0, min_side, &mut |_| 1);
        prop_assert!(parts.len() > 1);
        let outputs: Vec<_> = parts
            .iter()
            .map(|part| {
                let rect = part.grown(frame.band);
                let (subset, subset_areas): (Vec<Triangle>, Vec<u8>) = tris
                    .iter()
                    .zip(&areas)
                    .filter(|(t, _)| tessera_tiler::triangle_reaches(&frame, t, &rect))
                    .unzip();
                tessera_voxel::voxelize_part(&frame, &p, *part, &subset, &subset_areas).field
            })
            .collect();
        let assembled = tessera_voxel::assemble(frame.tile_core(tile), &outputs);
        prop_assert!(assembled == whole);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Agents of other slopes, climbs, clearances and radii rasterized as one group: the first
    /// voxelized with the group's record written, the others from it, each gives the field
    /// it gives alone.
    #[test]
    fn a_group_voxelized_from_one_rasterization_equals_each_agent_alone(
        pieces in proptest::collection::vec(piece(), 1..10),
        radius_cells in 0u32..3,
    ) {
        let cell = 0.25;
        let mut group = vec![
            params(cell, 0.1, radius_cells as f64 * cell, 0.5, 2.0),
            params(cell, 0.1, 0.0, 0.2, 1.2),
            params(cell, 0.1, 0.5, 0.05, 1.5),
        ];
        group[2].walkable_slope_cos = 20f64.to_radians().cos();
        // One band for all, the widest.
        let band = group.iter().map(|p| p.band).max().unwrap();
        for p in &mut group {
            p.band = band;
        }
        let tris = build(&pieces);
        let frame = frame_for(&tris, &group[0], SINGLE_TILE);
        let core = frame.tile_core(tessera_artifacts::TileCoord { x: 0, y: 0 });
        let areas: Vec<u8> = (0..tris.len()).map(|i| (i % 3) as u8).collect();
        let refs: Vec<&tessera_config::VoxelParams> = group.iter().collect();
        let mut ws = tessera_voxel::Workspace::default();
        let mut record = Vec::new();
        tessera_voxel::voxelize_agents_in(&mut ws, &frame, &refs, core, (&tris, &areas), &mut record);
        let first = ws.output().clone();
        prop_assert!(first == tessera_voxel::voxelize_part(&frame, &group[0], core, &tris, &areas).field);
        for (i, p) in group.iter().enumerate() {
            let alone = tessera_voxel::voxelize_part(&frame, p, core, &tris, &areas).field;
            tessera_voxel::voxelize_from_record(&mut ws, &frame, p, core, &record, i).unwrap();
            prop_assert!(ws.output() == &alone, "agent {}", i);
        }
        // A record of another rectangle is refused.
        let other = tessera_artifacts::CellRect { x0: core.x0 + 1, ..core };
        prop_assert!(tessera_voxel::voxelize_from_record(&mut ws, &frame, &group[1], other, &record, 1).is_err());
    }
}
