//! Paths that take off-mesh links: a ledge 3 m above the ground with no stair between them,
//! joined by links the bake was given (a jump down, a ladder).

mod common;

use common::{frame, Builder, Bytes};
use tessera_navgraph::LinkSpec;
use tessera_navmesh::OffMeshLink;
use tessera_query::{Filter, Planner, Query};

/// The ledge (3 m: 12 quarter-metre voxels): polygons 0 (x 0..4) and 1 (x 4..8) over y 0..6.
/// The ground (0 m): polygons 2 (x 10..16) and 3 (x 16..22) over y 0..6. A 2 m plan gap at
/// x 8..10 that nothing crosses but the links.
fn ledge() -> Builder {
    let mut b = Builder::new();
    b.rect(0, 0, 4, 6, 12, 0);
    b.rect(4, 0, 8, 6, 12, 0);
    b.rect(10, 0, 16, 6, 0, 1);
    b.rect(16, 0, 22, 6, 0, 1);
    b
}

fn link(name: &str, from: [f32; 3], to: [f32; 3], cost: f32, bidirectional: bool) -> LinkSpec {
    LinkSpec {
        link: OffMeshLink {
            name: name.into(),
            from,
            to,
            cost,
            bidirectional,
        },
        radius: 0.5,
    }
}

fn scene(p: [f32; 3]) -> [f64; 3] {
    let o = frame().origin;
    [0, 1, 2].map(|k| f64::from(p[k]) + o[k])
}

fn near(a: [f64; 3], b: [f64; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() < 1e-4)
}

const TOP: [f32; 3] = [1.0, 3.0, 3.0];
const GROUND: [f32; 3] = [20.0, 3.0, 0.0];

#[test]
fn a_one_way_jump_down_is_taken_down_and_never_up() {
    // The take-off 0.2 m above the ledge, the landing 0.3 m off the ground's edge in plan:
    // both snap onto the mesh.
    let bytes = Bytes::linked(
        frame(),
        &ledge().input,
        vec![link("jump", [7.5, 3.0, 3.2], [9.7, 3.0, 0.0], 1.0, false)],
    );
    let mesh = bytes.mesh();
    assert_eq!(mesh.off_mesh.len(), 1);
    assert_eq!(mesh.links.len(), 1, "one way only");
    let q = Query::new(mesh);
    for planner in [Planner::Hierarchical, Planner::Flat] {
        let down = q.path_with(scene(TOP), scene(GROUND), planner);
        assert!(down.found, "{planner:?}");
        let want = [
            scene(TOP),
            scene([7.5, 3.0, 3.0]),
            scene([10.0, 3.0, 0.0]),
            scene(GROUND),
        ];
        assert_eq!(down.waypoints.len(), want.len(), "{down:?}");
        assert!(
            down.waypoints.iter().zip(&want).all(|(a, b)| near(*a, *b)),
            "{down:?}"
        );
        assert_eq!(down.links, vec![1]);
        assert_eq!(down.link_names, vec!["jump".to_string()]);
        let up = q.path_with(scene(GROUND), scene(TOP), planner);
        assert!(!up.found, "{planner:?}: {up:?}");
    }
    // `tessera validate`'s mass path test does not ask such a mesh for reverse paths, and
    // every path found stays on its corridor.
    let audit = tessera_query::audit::audit_paths(&q, 200, 1, 1e-3);
    assert!(!audit.reversible);
    assert!(audit.ok(), "{audit:?}");
    assert_eq!(audit.pairs, 200);
}

#[test]
fn a_bidirectional_ladder_is_climbed_both_ways() {
    let bytes = Bytes::linked(
        frame(),
        &ledge().input,
        vec![link("ladder", [7.8, 1.0, 3.0], [10.2, 1.0, 0.0], 0.0, true)],
    );
    let q = Query::new(bytes.mesh());
    let up = q.path(scene(GROUND), scene(TOP));
    assert!(up.found);
    assert_eq!(up.link_names, vec!["ladder".to_string()]);
    assert!(near(up.waypoints[up.links[0]], scene([10.2, 1.0, 0.0])));
    assert!(near(up.waypoints[up.links[0] + 1], scene([7.8, 1.0, 3.0])));
}

#[test]
fn a_links_cost_decides_between_two_ways_down() {
    // Two jumps down 4 m apart along the ledge's edge; the end lies beside the northern one.
    let ends = (TOP, [12.0, 5.5, 0.0]);
    let both = |north_cost: f32| {
        let bytes = Bytes::linked(
            frame(),
            &ledge().input,
            vec![
                link("south", [7.8, 1.0, 3.0], [10.2, 1.0, 0.0], 0.0, false),
                link(
                    "north",
                    [7.8, 5.0, 3.0],
                    [10.2, 5.0, 0.0],
                    north_cost,
                    false,
                ),
            ],
        );
        let q = Query::new(bytes.mesh());
        let flat = q.path_with(scene(ends.0), scene(ends.1), Planner::Flat);
        let planned = q.path_with(scene(ends.0), scene(ends.1), Planner::Hierarchical);
        assert_eq!(flat.link_names, planned.link_names);
        assert!((flat.length - planned.length).abs() < 1e-6);
        flat
    };
    // The northern jump is the shorter way by about 3 m.
    assert_eq!(both(0.0).link_names, vec!["north".to_string()]);
    assert_eq!(both(2.0).link_names, vec!["north".to_string()]);
    // Costing it 6 m makes the southern one cheaper, though longer.
    let south = both(6.0);
    assert_eq!(south.link_names, vec!["south".to_string()]);
    assert!(south.length > both(0.0).length + 2.0);
}

#[test]
fn an_end_farther_than_its_radius_from_the_mesh_fails_the_build_naming_it() {
    let err = tessera_navgraph::build_linked(
        frame(),
        &ledge().input,
        &tessera_navgraph::Pruning::default(),
        vec![
            link("ok", [7.5, 3.0, 3.0], [10.5, 3.0, 0.0], 0.0, false),
            // Over the gap: 1 m from either side in plan.
            link("short", [7.5, 1.0, 3.0], [9.0, 1.0, 0.0], 0.0, false),
        ],
    )
    .expect_err("the second link's landing is over the gap");
    match err {
        tessera_navgraph::BuildError::OffMeshEnd { link, end } => {
            assert_eq!((link, end), (1, tessera_navgraph::LinkEnd::To));
        }
        e => panic!("{e}"),
    }
}

/// Two floors of 1 m squares, 80 x 20 m each (1 600 polygons, many clusters of the hierarchy
/// each), 10 m apart in plan, joined only by two one-way links far from each other.
#[test]
fn planned_paths_cross_clusters_by_off_mesh_links_as_flat_ones_do() {
    let mut b = Builder::new();
    for (region, y0) in [(0, 0), (1, 30)] {
        for y in y0..y0 + 20 {
            for x in 0..80 {
                b.rect(x, y, x + 1, y + 1, 0, region);
            }
        }
    }
    let bytes = Bytes::linked(
        frame(),
        &b.input,
        vec![
            link("north", [75.0, 19.5, 0.0], [5.0, 30.5, 0.0], 3.0, false),
            link("south", [40.0, 30.5, 0.0], [40.0, 19.5, 0.0], 10.0, false),
            // Inside one cluster: measured in the cluster's table of lengths.
            link("hop", [1.5, 1.5, 0.0], [5.5, 4.5, 0.0], 0.0, true),
        ],
    );
    let q = Query::new(bytes.mesh());
    assert!(q.mesh().hierarchy.clusters.len() >= 16);
    let h = &q.mesh().hierarchy;
    let hop = q
        .mesh()
        .links
        .iter()
        .find(|l| l.off_mesh == 2)
        .expect("the hop");
    assert_eq!(
        h.cluster_of(hop.from.to_native()),
        h.cluster_of(hop.to.to_native())
    );
    let mut rng = tessera_query::Rng::new(3);
    let (mut planned, mut jumped) = (0, 0);
    for _ in 0..300 {
        let (sp, s) = q.random_point(&mut rng).unwrap();
        let (ep, e) = q.random_point(&mut rng).unwrap();
        let (from, to) = (q.to_scene(s), q.to_scene(e));
        let flat = q.path_with(from, to, Planner::Flat);
        let plan = q.path_with(from, to, Planner::Hierarchical);
        // Either floor reaches the other by one link or the other.
        assert!(flat.found && plan.found);
        assert_eq!(flat.link_names.len(), flat.links.len());
        if q.plans(sp, s, ep, e) {
            planned += 1;
        }
        if !flat.links.is_empty() {
            jumped += 1;
        }
        assert!(
            plan.length <= flat.length * 1.01 + 1e-6 && plan.length >= flat.length - 1e-6,
            "{from:?} -> {to:?}: planned {} flat {}",
            plan.length,
            flat.length
        );
    }
    assert!(
        planned > 100 && jumped > 100,
        "{planned} planned, {jumped} across"
    );
}

#[test]
fn a_filter_overrides_costs_and_avoids_links_by_name() {
    let bytes = Bytes::linked(
        frame(),
        &ledge().input,
        vec![
            link("south", [7.8, 1.0, 3.0], [10.2, 1.0, 0.0], 0.0, false),
            link("north", [7.8, 5.0, 3.0], [10.2, 5.0, 0.0], 0.0, false),
        ],
    );
    let q = Query::new(bytes.mesh());
    let (from, to) = (scene(TOP), scene([12.0, 5.5, 0.0]));
    let taken = |filter: Filter| {
        let costs = q.costs(&filter).expect("names the mesh has");
        let a = q.path_costed(from, to, Planner::Hierarchical, &costs);
        a.found.then(|| a.link_names.join(","))
    };
    assert_eq!(taken(Filter::default()), Some("north".to_string()));
    assert_eq!(
        taken(Filter::default().avoid("north")),
        Some("south".to_string())
    );
    assert_eq!(
        taken(Filter::default().cost("north", 6.0)),
        Some("south".to_string())
    );
    assert_eq!(
        taken(Filter::default().cost("north", 6.0).cost("south", 9.0)),
        Some("north".to_string())
    );
    assert_eq!(taken(Filter::default().avoid("north").avoid("south")), None);
    // Names the mesh does not have, and costs that are no costs, are refused.
    let err = q.costs(&Filter::default().avoid("zipline")).unwrap_err();
    assert!(err.to_string().contains("zipline") && err.to_string().contains("north, south"));
    assert!(q.costs(&Filter::default().cost("north", -1.0)).is_err());
    assert!(q.costs(&Filter::default().cost("north", f32::NAN)).is_err());
}
