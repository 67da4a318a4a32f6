//! Analytic heightfields: scenes whose spans can be worked out by hand.
//! Cell sizes are powers of two so that every expected height is exact.

mod common;
use common::*;
use tessera_artifacts::Span;

const CS: f64 = 0.125;
const CH: f64 = 0.0625;

fn walkable_cells(world: &std::collections::BTreeMap<(i32, i32), Vec<Span>>) -> Vec<(i32, i32)> {
    world
        .iter()
        .filter(|(_, c)| c.iter().any(|s| s.walkable))
        .map(|(k, _)| *k)
        .collect()
}

fn rect_cells(x0: i32, x1: i32, y0: i32, y1: i32) -> Vec<(i32, i32)> {
    let mut v = Vec::new();
    for x in x0..=x1 {
        for y in y0..=y1 {
            v.push((x, y));
        }
    }
    v.sort();
    v
}

#[test]
fn flat_quad_gives_the_expected_columns_and_heights() {
    // 2 m x 1 m at z = 1 m: 16 x 8 cells, voxel 16 (zmin 16, zmax 17).
    let p = params(CS, CH, 0.0, 0.5, 2.0);
    let world = voxelize_world(&quad(0.0, 0.0, 2.0, 1.0, 1.0), &p, SINGLE_TILE);
    assert_eq!(
        world.keys().copied().collect::<Vec<_>>(),
        rect_cells(0, 15, 0, 7)
    );
    for col in world.values() {
        assert_eq!(col.len(), 1);
        assert_eq!((col[0].zmin, col[0].zmax), (16, 17));
    }
    // The outermost ring is a ledge (a drop into the void); everything inside is walkable.
    assert_eq!(walkable_cells(&world), rect_cells(1, 14, 1, 6));
}

#[test]
fn erosion_removes_exactly_the_radius() {
    for r in 1..=3 {
        let p = params(CS, CH, r as f64 * CS, 0.5, 2.0);
        let world = voxelize_world(&quad(0.0, 0.0, 4.0, 3.0, 0.5), &p, SINGLE_TILE);
        // 32 x 24 cells; the ledge ring, then r more rings.
        let k = 1 + r;
        assert_eq!(
            walkable_cells(&world),
            rect_cells(k, 31 - k, k, 23 - k),
            "radius {r} cells"
        );
    }
}

#[test]
fn ramp_walkable_below_max_slope_and_not_above() {
    for (deg, expect) in [(20.0f64, true), (40.0, true), (50.0, false), (70.0, false)] {
        let p = params(CS, CH, 0.0, 0.5, 2.0);
        let run = 3.0f32;
        let rise = run * (deg.to_radians().tan() as f32);
        let tris = ramp(0.0, run, 0.0, 2.0, 0.0, rise);
        let world = voxelize_world(&tris, &p, SINGLE_TILE);
        // Interior cells, away from the edges (ledges) of the ramp.
        let interior: Vec<_> = world
            .iter()
            .filter(|((x, y), _)| (4..20).contains(x) && (2..14).contains(y))
            .collect();
        assert!(!interior.is_empty());
        for (cell, col) in interior {
            let walkable = col.iter().any(|s| s.walkable);
            assert_eq!(walkable, expect, "{deg} degrees at {cell:?}: {col:?}");
        }
    }
}

#[test]
fn low_ceiling_removes_walkability_by_clearance() {
    let p = params(CS, CH, 0.0, 0.5, 2.0);
    let mut tris = quad(0.0, 0.0, 4.0, 4.0, 0.0);
    // A slab from 1.5 m to 1.75 m over the middle: 1.5 m of clearance under a 2 m agent.
    tris.extend(cuboid([1.0, 1.0, 1.5], [3.0, 3.0, 1.75]));
    let world = voxelize_world(&tris, &p, SINGLE_TILE);
    for ((x, y), col) in &world {
        let floor = col[0];
        assert_eq!(floor.zmax, 1);
        let under = (8..24).contains(x) && (8..24).contains(y);
        let clear = !(7..=24).contains(x) || !(7..=24).contains(y);
        let inside_world = (1..31).contains(x) && (1..31).contains(y);
        if under {
            assert!(col.len() >= 2, "a floor and the slab's faces above it");
            assert!(!floor.walkable, "under the slab at {x},{y}");
        } else if clear && inside_world {
            assert!(floor.walkable, "open floor at {x},{y}");
        }
    }
    // With a 1 m agent the floor under the slab is walkable again.
    let short = params(CS, CH, 0.0, 0.5, 1.0);
    let world = voxelize_world(&tris, &short, SINGLE_TILE);
    assert!(world[&(12, 12)][0].walkable);
}

#[test]
fn steps_within_the_climb_stay_walkable_and_higher_ones_are_ledges() {
    let p = params(CS, CH, 0.0, 0.5, 2.0);
    // A 0.25 m kerb: floor at 0 for x < 2, a box up to 0.25 for x in [2, 4].
    let mut kerb = quad(0.0, 0.0, 4.0, 2.0, 0.0);
    kerb.extend(cuboid([2.0, 0.0, 0.0], [4.0, 2.0, 0.25]));
    let world = voxelize_world(&kerb, &p, SINGLE_TILE);
    for x in [14, 15, 16, 17] {
        let top = world[&(x, 8)].last().copied().unwrap();
        assert!(top.walkable, "kerb at x={x}: {:?}", world[&(x, 8)]);
    }
    // A 1 m wall-top step: the upper edge is a ledge, the floor below it is not.
    let mut wall = quad(0.0, 0.0, 4.0, 2.0, 0.0);
    wall.extend(cuboid([2.0, 0.0, 0.0], [4.0, 2.0, 1.0]));
    let world = voxelize_world(&wall, &p, SINGLE_TILE);
    assert!(
        !world[&(16, 8)].last().unwrap().walkable,
        "upper edge of a 1 m drop"
    );
    assert!(
        world[&(17, 8)].last().unwrap().walkable,
        "one cell in from the drop"
    );
    assert!(world[&(14, 8)][0].walkable, "floor beside the wall");
    // Low clutter on a floor (a 0.2 m bar) is climbed over by the low-hanging filter.
    let mut clutter = quad(0.0, 0.0, 4.0, 2.0, 0.0);
    clutter.extend(cuboid([1.0, 0.5, 0.0], [1.5, 1.5, 0.2]));
    let world = voxelize_world(&clutter, &p, SINGLE_TILE);
    assert!(world[&(10, 8)].last().unwrap().walkable);
}
