use tessera_artifacts::{
    CellRect, Contour, Levels, Point, Reach, SpanField, TileContours, TileCoord, TileRegions,
    AREA_BITS, NO_NEIGHBOUR, OUT_OF_REACH,
};
use tessera_regions::segment_tile;
use tessera_test_support::drawing::field;

use crate::{contours_by_pairing, corner_points, trace_tile, ContourJoiner, CornerKind};

/// A height-map drawing (one tile with an empty ring, see [`field`]), segmented.
fn setup(drawing: &[&str]) -> (SpanField, TileRegions) {
    let field = field(drawing);
    let regions = segment_tile(&field, TileCoord { x: 0, y: 0 }, Levels::FLAT);
    (field, regions)
}

const REACH: Reach = Reach {
    climb: 1,
    height: 4,
};

/// Traces a drawing (see [`setup`]).
fn trace(drawing: &[&str]) -> TileContours {
    let (field, regions) = setup(drawing);
    let out = trace_tile(&field, &regions, REACH);
    assert!(
        out.chains.is_empty(),
        "one tile with an empty ring has no open chain"
    );
    out
}

/// The corner points the seed's masks give equal the traced contours' vertices, slash and
/// antislash points twice.
fn masks_agree_with_tracing(drawing: &[&str]) {
    let (field, regions) = setup(drawing);
    let traced = trace_tile(&field, &regions, REACH);
    let mut from_contours: Vec<(u32, Point)> = traced
        .cycles
        .iter()
        .map(|c| c.corners_only())
        .flat_map(|c| c.points.into_iter().map(move |p| (c.region, p)))
        .collect();
    from_contours.sort_unstable();
    let mut from_masks: Vec<(u32, Point)> = corner_points(&field, &regions)
        .into_iter()
        .map(|(r, p, _)| (r, p))
        .collect();
    from_masks.sort_unstable();
    assert_eq!(from_masks, from_contours, "{drawing:?}");
}

#[test]
fn corner_masks_match_the_traced_vertices() {
    masks_agree_with_tracing(&["1"]);
    masks_agree_with_tracing(&["01", "10"]);
    masks_agree_with_tracing(&["10", "01"]);
    masks_agree_with_tracing(&["1111", "1101", "1011", "1111"]);
    masks_agree_with_tracing(&["1122", "1122", "3333"]);
    masks_agree_with_tracing(&["11011", "10101", "11111", "01010"]);
    let (field, regions) = setup(&["01", "10"]);
    let kinds: Vec<CornerKind> = corner_points(&field, &regions)
        .into_iter()
        .map(|c| c.2)
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == CornerKind::Slash).count(), 2);
}

/// Alg. 3-5 (pairing) and tracing give the same contours.
fn pairing_agrees_with_tracing(drawing: &[&str]) {
    let (field, regions) = setup(drawing);
    let canon = |cs: Vec<Contour>| {
        let mut v: Vec<(u32, Vec<Point>)> = cs.iter().map(|c| (c.region, c.canonical())).collect();
        v.sort();
        v
    };
    assert_eq!(
        canon(contours_by_pairing(&field, &regions)),
        canon(
            trace_tile(&field, &regions, REACH)
                .cycles
                .iter()
                .map(|c| c.corners_only())
                .collect()
        ),
        "{drawing:?}"
    );
}

#[test]
fn the_seeds_pairing_gives_the_traced_contours() {
    pairing_agrees_with_tracing(&["1"]);
    pairing_agrees_with_tracing(&["01", "10"]);
    pairing_agrees_with_tracing(&["10", "01"]);
    pairing_agrees_with_tracing(&["1111", "1101", "1011", "1111"]);
    pairing_agrees_with_tracing(&["1122", "1122", "3333"]);
    pairing_agrees_with_tracing(&["11011", "10101", "11111", "01010"]);
    pairing_agrees_with_tracing(&["11111", "10001", "10101", "10001", "11111"]);
}

#[test]
fn a_single_cell_is_a_counter_clockwise_square() {
    let out = trace(&["1"]);
    assert_eq!(out.cycles.len(), 1);
    assert_eq!(
        out.cycles[0].canonical(),
        vec![(0, 0), (1, 0), (1, 1), (0, 1)]
    );
    assert_eq!(out.cycles[0].twice_area(), 2);
}

#[test]
fn a_region_touching_itself_diagonally_pinches_at_the_slash_point() {
    // Two cells of one region touching at a corner: one outer contour through that point
    // twice.
    let out = trace(&["01", "10"]);
    assert_eq!(out.cycles.len(), 1);
    let c = &out.cycles[0];
    assert_eq!(c.points.len(), 8);
    assert_eq!(c.points.iter().filter(|&&p| p == (1, 1)).count(), 2);
    assert_eq!(c.twice_area(), 4);
    assert!(c.validate().is_ok());
    // The antislash orientation too.
    let out = trace(&["10", "01"]);
    assert_eq!(out.cycles.len(), 1);
    assert_eq!(out.cycles[0].twice_area(), 4);
}

#[test]
fn two_holes_touching_at_a_corner_stay_two_simple_holes() {
    let out = trace(&["1111", "1101", "1011", "1111"]);
    let mut areas: Vec<i64> = out.cycles.iter().map(|c| c.twice_area()).collect();
    areas.sort();
    // Two holes of one cell (clockwise, negative) and the outer square.
    assert_eq!(areas, vec![-2, -2, 32]);
    for c in &out.cycles {
        assert!(c.validate().is_ok());
        let mut pts = c.points.clone();
        pts.sort();
        pts.dedup();
        assert_eq!(pts.len(), c.points.len(), "each hole is simple");
    }
    // Outer minus holes is the region's cell count.
    assert_eq!(
        out.cycles.iter().map(|c| c.twice_area()).sum::<i64>(),
        2 * 14
    );
}

#[test]
fn regions_at_different_heights_have_their_own_contours() {
    let out = trace(&["1122", "1122", "3333"]);
    assert_eq!(out.cycles.len(), 3);
    let total: i64 = out.cycles.iter().map(|c| c.twice_area()).sum();
    assert_eq!(total, 2 * 12);
    assert!(out
        .cycles
        .iter()
        .all(|c| c.is_outer() && c.validate().is_ok()));
}

#[test]
fn a_vertex_marks_where_the_neighbour_across_changes() {
    // Floor 1 along the top row; floor 2 (one voxel up) under its western half.
    let drawing = ["1111", "2200"];
    let (field, regions) = setup(&drawing);
    let top = |climb| {
        let out = trace_tile(
            &field,
            &regions,
            Reach {
                climb,
                height: climb,
            },
        );
        out.cycles
            .into_iter()
            .find(|c| c.level == 1 << AREA_BITS)
            .unwrap()
    };
    // Beyond the agent's height: nothing across, only the four corners.
    assert_eq!(top(0).points.len(), 4);
    // Out of the climb but within the height: the shared border is still marked.
    let out = trace_tile(
        &field,
        &regions,
        Reach {
            climb: 0,
            height: 4,
        },
    );
    let c = out
        .cycles
        .iter()
        .find(|c| c.level == 1 << AREA_BITS)
        .unwrap();
    assert_eq!(c.points.len(), 5);
    assert!(c.neighbours.contains(&(2 << AREA_BITS | OUT_OF_REACH)));
    // Within the climb: the bottom edge splits where floor 2 ends.
    let c = top(1);
    c.validate().unwrap();
    assert_eq!(c.canonical(), vec![(0, 1), (2, 1), (4, 1), (4, 2), (0, 2)]);
    let at = |p: Point| c.points.iter().position(|&q| q == p).unwrap();
    assert_eq!(c.neighbours[at((0, 1))], 2 << AREA_BITS);
    assert_eq!(c.neighbours[at((2, 1))], NO_NEIGHBOUR);
    assert!(c.heights.iter().all(|&h| h == 1));
    // The lower floor's contour lists the same shared border, and its heights are its own.
    let out = trace_tile(&field, &regions, REACH);
    let low = out
        .cycles
        .iter()
        .find(|c| c.level == 2 << AREA_BITS)
        .unwrap();
    assert!(low.points.contains(&(0, 1)) && low.points.contains(&(2, 1)));
    assert!(low.heights.iter().all(|&h| h == 2));
}

#[test]
fn joining_removes_straight_tile_border_vertices() {
    // One 4 x 2 region cut by a tile border between columns 1 and 2.
    let whole = field(&["1111", "1111"]);
    let mut joiner = ContourJoiner::new();
    let mut cycles = Vec::new();
    for (tx, x0) in [(1u32, 2i32), (0, 0)] {
        let rect = CellRect {
            x0: x0 - 1,
            y0: -1,
            width: 4,
            height: 4,
        };
        let core = CellRect {
            x0,
            y0: 0,
            width: 2,
            height: 2,
        };
        let part = whole.crop(rect, core);
        let regions = segment_tile(&part, TileCoord { x: tx, y: 0 }, Levels::FLAT);
        let t = trace_tile(&part, &regions, REACH);
        assert!(t.cycles.is_empty() && t.chains.len() == 1);
        for chain in t.chains {
            cycles.extend(joiner.add_counted(chain));
        }
    }
    assert_eq!(cycles.len(), 1);
    assert_eq!(
        cycles[0].0.canonical(),
        vec![(0, 0), (4, 0), (4, 2), (0, 2)]
    );
    assert_eq!(joiner.third_class_removed, 2);
    // The cycle carries its own share of the removed vertices: one where the chains were
    // joined, one where the cycle closed.
    assert_eq!(cycles[0].1, 2);
    assert_eq!(joiner.open_chains(), 0);
}
