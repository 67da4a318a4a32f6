//! The inputs the `navmesh_load` and `navmesh_load_resealed` fuzz targets kept (their corpora
//! and every crash found, in the repository's `fuzz/` folder), loaded through the same entry
//! points as the targets, with and without resealing: each is loaded or refused with an
//! error, never a panic.
//!
//! The hand-made inputs (`corpus/navmesh_load/three_squares.tsn`,
//! `regressions/navmesh_load/grid_without_cells.tsn`) are written by this file:
//! `TESSERA_WRITE_FUZZ_SEEDS=1 cargo test -p tessera-navmesh --test fuzz_regressions`.

#[path = "../../../fuzz/replay.rs"]
mod replay;

use tessera_navmesh::fuzzing::{load, load_resealed};
use tessera_navmesh::{
    encode_keyed, Cluster, Component, Entrance, Frame, Grid, Hierarchy, Link, NavMesh, Poly, Stats,
    DETAIL, NONE,
};

/// Two squares joined by a portal (the second a step higher, one detail vertex) and a third on
/// a floor above the first, joined to it by a pair of links; a 2 x 1 grid; a hierarchy of a
/// cluster per square (entrances on the portal, and an exit and a landing per link).
fn three_squares() -> NavMesh {
    let square = |x: f32, z: f32| {
        [
            [x, 0.0, z],
            [x + 4.0, 0.0, z],
            [x + 4.0, 4.0, z],
            [x, 4.0, z],
        ]
    };
    let verts: Vec<[f32; 3]> = [square(0.0, 0.0), square(4.0, 0.25), square(0.0, 3.0)].concat();
    let poly = |i: u32, tris: (u32, u32), links: (u32, u32)| Poly {
        first: 4 * i,
        count: 4,
        tri_first: tris.0,
        tri_count: tris.1,
        link_first: links.0,
        link_count: links.1,
        region: i,
        area: 16.0,
        // A portal joins squares 0 and 1, links 0 and 2.
        component: 0,
        area_id: 0,
    };
    NavMesh {
        frame: Frame {
            origin: [1000.0, 2000.0, 10.0],
            up: b'y',
            cell_size: 0.5,
            cell_height: 0.25,
            agent_height: 2.0,
            agent_radius: 0.5,
            agent_climb: 0.5,
        },
        bounds_min: [0.0, 0.0, 0.0],
        bounds_max: [8.0, 4.0, 3.0],
        verts,
        polys: vec![
            poly(0, (0, 2), (0, 1)),
            poly(1, (2, 3), (1, 0)),
            poly(2, (5, 2), (1, 1)),
        ],
        areas: vec![tessera_navmesh::Area::default_area()],
        poly_verts: (0..12).collect(),
        poly_neis: vec![
            NONE, 1, NONE, NONE, // square 0: its east edge is the portal
            NONE, NONE, NONE, 0, // square 1: its west edge
            NONE, NONE, NONE, NONE,
        ],
        detail_tris: vec![
            [0, 1, 2],
            [0, 2, 3],
            [4, 5, DETAIL],
            [5, 6, DETAIL],
            [6, 7, DETAIL],
            [8, 9, 10],
            [8, 10, 11],
        ],
        detail_verts: vec![[6.0, 2.0, 0.3]],
        components: vec![Component {
            polygons: 3,
            area: 48.0,
        }],
        hierarchy: hierarchy(),
        links: vec![
            Link::stair(0, 2, [1.0, 4.0, 0.0], [3.0, 4.0, 0.0]),
            Link::stair(2, 0, [1.0, 4.0, 3.0], [3.0, 4.0, 3.0]),
        ],
        off_mesh: Vec::new(),
        grid: Grid {
            min: [0.0, 0.0],
            cell: 4.0,
            width: 2,
            height: 1,
            start: vec![0, 2, 4],
            items: vec![0, 2, 0, 1],
        },
        stats: Stats {
            regions: 3,
            portals: 1,
            links: 2,
            walkable_area: 48.0,
            ..Stats::default()
        },
    }
}

/// [`three_squares`]'s hierarchy: cluster 0 lists its portal's entrance, its link's exit and
/// the landing of the link back; cluster 1 its portal's entrance; cluster 2 its link's exit
/// and the landing of the link from square 0.
fn hierarchy() -> Hierarchy {
    let entrance = |point: [f32; 3], poly: u32, across: u32| Entrance {
        point,
        poly,
        cluster: poly,
        across,
        cost: 0.0,
    };
    let diagonal = 8.0f32.sqrt();
    Hierarchy {
        poly_cluster: vec![0, 1, 2],
        clusters: vec![
            Cluster {
                entrance_first: 0,
                entrance_count: 3,
                cost_first: 0,
                polygons: 1,
            },
            Cluster {
                entrance_first: 3,
                entrance_count: 1,
                cost_first: 9,
                polygons: 1,
            },
            Cluster {
                entrance_first: 4,
                entrance_count: 2,
                cost_first: 10,
                polygons: 1,
            },
        ],
        entrances: vec![
            entrance([4.0, 2.0, 0.0], 0, 3),
            entrance([2.0, 4.0, 0.0], 0, 5),
            entrance([2.0, 4.0, 0.0], 0, NONE),
            entrance([4.0, 2.0, 0.25], 1, 0),
            entrance([2.0, 4.0, 3.0], 2, 2),
            entrance([2.0, 4.0, 3.0], 2, NONE),
        ],
        costs: vec![
            0.0, diagonal, diagonal, diagonal, 0.0, 0.0, diagonal, 0.0, 0.0, // cluster 0
            0.0, // cluster 1
            0.0, 0.0, 0.0, 0.0, // cluster 2
        ],
    }
}

/// Compares a hand-made input of the fuzz folder with `bytes`, or writes it when
/// `TESSERA_WRITE_FUZZ_SEEDS` is set.
fn hand_made(relative: &str, bytes: &[u8]) {
    let path = replay::fuzz_dir().join(relative);
    if std::env::var_os("TESSERA_WRITE_FUZZ_SEEDS").is_some() {
        std::fs::write(&path, bytes).unwrap();
    }
    assert!(
        std::fs::read(&path).unwrap() == bytes,
        "{} is stale (the format changed?): rewrite it with TESSERA_WRITE_FUZZ_SEEDS=1",
        path.display()
    );
}

#[test]
fn the_hand_made_inputs_in_the_fuzz_folder_are_current() {
    let seed = encode_keyed(&three_squares(), 7);
    assert_eq!(load(&seed).unwrap(), 3);
    hand_made("corpus/navmesh_load/three_squares.tsn", &seed);
    // A grid of no cells passed `validate`, and `grid_cells` then panicked (clamp to -1).
    let mut no_cells = three_squares();
    no_cells.grid.width = 0;
    no_cells.grid.start = vec![0];
    no_cells.grid.items = vec![];
    hand_made(
        "regressions/navmesh_load/grid_without_cells.tsn",
        &encode_keyed(&no_cells, 7),
    );
}

#[test]
fn every_navmesh_fuzz_input_is_loaded_or_refused_without_a_panic() {
    for target in ["navmesh_load", "navmesh_load_resealed"] {
        let loaded = replay::replay(target, load);
        let resealed = replay::replay(target, load_resealed);
        if target == "navmesh_load" {
            // The seeds stay loadable (so they keep seeding the fuzzer deep); a bake's file
            // too (see fuzz/README.md to bake it again when the format changes).
            let refused = &loaded["regressions/grid_without_cells.tsn"];
            assert!(
                refused.as_ref().unwrap_err().contains("grid: no cells"),
                "{refused:?}"
            );
            for (seed, polygons) in [
                ("corpus/three_squares.tsn", 3),
                ("corpus/nav_test_cut.tsn", 27),
            ] {
                assert_eq!(loaded[seed], Ok(polygons), "{seed}");
                assert_eq!(resealed[seed], Ok(polygons), "{seed}");
            }
        }
    }
}
