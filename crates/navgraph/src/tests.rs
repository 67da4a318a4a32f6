use rkyv::rancor;
use tessera_artifacts::{InputPoly, MeshInput, DETAIL};
use tessera_navmesh::{
    access, aligned, encode, encode_keyed, encode_parts, Frame, NavMesh, NavMeshFile, HEADER_LEN,
    NONE,
};

use super::*;

fn frame() -> Frame {
    Frame {
        origin: [1000.0, 2000.0, 10.0],
        up: b'z',
        cell_size: 0.5,
        cell_height: 0.25,
        agent_height: 2.0,
        agent_radius: 0.5,
        agent_climb: 0.5,
    }
}

/// Two unit squares side by side (x 0..4, 4..8; y 0..4), the second one voxel higher, and a
/// third square on another floor above the first.
fn input() -> MeshInput {
    let verts = vec![
        [0, 0, 0],
        [4, 0, 0],
        [4, 4, 0],
        [0, 4, 0],
        [4, 0, 1],
        [8, 0, 1],
        [8, 4, 1],
        [4, 4, 1],
        [0, 0, 20],
        [4, 0, 20],
        [4, 4, 20],
        [0, 4, 20],
    ];
    let square = |a: u32, region| InputPoly {
        verts: vec![a, a + 1, a + 2, a + 3],
        region,
        tris: vec![[a, a + 1, a + 2], [a, a + 2, a + 3]],
        blocked: vec![],
    };
    MeshInput {
        verts,
        detail_verts: vec![],
        polys: vec![square(0, 0), square(4, 1), square(8, 2)],
        links: vec![],
        regions: 3,
        notches: 0,
        by_notches: Default::default(),
        climb: 2,
    }
}

#[test]
fn portals_join_edges_within_the_climb_only() {
    let m = build(frame(), &input()).unwrap();
    assert_eq!(m.stats.portals, 1);
    // Square 0's east edge (vertex 1 -> 2) is the portal to square 1.
    assert_eq!(m.poly_neis[1], 1);
    assert_eq!(m.poly_neis[4 + 3], 0);
    // The floor above shares plan points with square 0 but is 20 voxels up: no portal.
    assert!(m.poly_neis[8..12].iter().all(|&n| n == NONE));
    assert_eq!(m.polys[0].area, 4.0);
    assert_eq!(m.stats.walkable_area, 12.0);
    assert_eq!(m.verts[5], [4.0, 0.0, 0.25]);
}

#[test]
fn blocked_edges_are_never_portals() {
    let mut i = input();
    i.polys[1].blocked = vec![false, false, false, true];
    let m = build(frame(), &i).unwrap();
    assert_eq!(m.stats.portals, 0);
    assert!(m.poly_neis.iter().all(|&n| n == NONE));
}

#[test]
fn a_built_mesh_round_trips_through_a_file_and_its_grid_lists_every_polygon() {
    let m = build(frame(), &input()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navmesh.tsn");
    std::fs::write(&path, encode_keyed(&m, 42)).unwrap();
    let file = NavMeshFile::open(&path).unwrap();
    assert_eq!(file.key(), 42);
    let back: NavMesh = rkyv::deserialize::<NavMesh, rancor::Error>(file.mesh()).unwrap();
    assert_eq!(back, m);
    // Every polygon is listed in the grid cells its box covers.
    let mesh = file.mesh();
    for p in 0..mesh.polys.len() as u32 {
        let v = mesh.vert(mesh.poly_vert_ids(p).next().unwrap());
        let (x, y, _, _) = mesh.grid_cells([v[0], v[1]], [v[0], v[1]]);
        assert!(mesh.grid_items(x, y).any(|q| q == p));
    }
}

#[test]
fn clockwise_polygons_are_refused() {
    let mut i = input();
    i.polys[0].verts.reverse();
    assert!(matches!(
        build(frame(), &i),
        Err(BuildError::Poly { poly: 0, .. })
    ));
}

#[test]
fn islands_below_the_minimum_area_are_dropped_and_seeds_win() {
    let i = input();
    let islands = |min_island_area| {
        build_pruned(
            frame(),
            &i,
            &Pruning {
                seeds: &[],
                min_island_area,
            },
        )
        .unwrap()
    };
    // Squares 0 and 1 (4 m² each) form one component of 8 m²; square 2, upstairs, one of 4.
    let (m, pruned) = islands(5.0);
    assert_eq!((pruned.polygons, pruned.islands, pruned.area), (1, 1, 4.0));
    assert_eq!(m.polys.len(), 2);
    assert_eq!(m.stats.walkable_area, 8.0);
    assert_eq!(m.stats.area_removed, 4.0);
    assert!(m.polys.iter().all(|p| p.region < 2));
    // At exactly the minimum an island stays; above the largest, everything goes.
    let (m, pruned) = islands(4.0);
    assert_eq!((m.polys.len(), pruned.polygons), (3, 0));
    let (m, pruned) = islands(8.5);
    assert_eq!((m.polys.len(), pruned.islands, pruned.area), (0, 2, 12.0));
    // A seed keeps what it reaches, however small: only the seeds decide.
    let (m, pruned) = build_pruned(
        frame(),
        &i,
        &Pruning {
            seeds: &[[1.0, 1.0, 5.0]],
            min_island_area: 100.0,
        },
    )
    .unwrap();
    assert_eq!((m.polys.len(), pruned.polygons, pruned.area), (1, 2, 8.0));
}

#[test]
fn a_one_way_off_mesh_link_joins_an_island_to_the_part_it_leads_to_or_from() {
    // The upstairs square (4 m², 5 m up) with a jump down from it to the first square, and,
    // the other way, a ladder from the second square up to it: either keeps it, and never
    // drops the 8 m² below through the link.
    for (from, to) in [
        ([1.0, 1.0, 5.0], [1.0, 1.0, 0.0]),
        ([3.0, 1.0, 0.25], [1.0, 1.0, 5.0]),
    ] {
        let link = LinkSpec {
            link: tessera_navmesh::OffMeshLink {
                name: "drop".into(),
                from,
                to,
                cost: 0.0,
                bidirectional: false,
            },
            radius: 0.5,
        };
        let pruning = Pruning {
            seeds: &[],
            min_island_area: 5.0,
        };
        let (m, pruned) = build_linked(frame(), &input(), &pruning, vec![link]).unwrap();
        assert_eq!(
            (m.polys.len(), pruned.islands),
            (3, 0),
            "{from:?} -> {to:?}"
        );
        assert_eq!(m.links.len(), 1);
        assert_eq!(m.components.len(), 1);
    }
}

#[test]
fn reachability_keeps_what_a_seed_reaches_and_counts_islands() {
    let i = input();
    // A seed on square 1 (x 2..4 m, 1 voxel up): squares 0 and 1 are joined, 2 is an island.
    let (m, pruned) = build_pruned(
        frame(),
        &i,
        &Pruning::seeds(&[[3.0, 1.0, 0.3], [50.0, 50.0, 0.0]]),
    )
    .unwrap();
    assert_eq!(pruned.polygons, 1);
    assert_eq!(pruned.islands, 1);
    assert_eq!(pruned.unplaced_seeds, vec![1]);
    assert_eq!(m.polys.len(), 2);
    assert_eq!(m.stats.regions, 2);
    assert_eq!(m.stats.portals, 1);
    assert_eq!((m.stats.polygons_removed, m.stats.islands_removed), (1, 1));
    // The upper floor's vertices went with it.
    assert_eq!(m.verts.len(), 8);
    // A seed on the upper floor keeps only it.
    let (m, pruned) = build_pruned(frame(), &i, &Pruning::seeds(&[[1.0, 1.0, 5.0]])).unwrap();
    assert_eq!((m.polys.len(), pruned.polygons, pruned.islands), (1, 2, 1));
    assert_eq!(m.stats.regions, 1);
    assert!(m.polys.iter().all(|p| p.region == 0));
}

/// An assembler fed [`input`]'s three regions, each with its own vertices, spilling in `dir`.
fn assembled_input(dir: &std::path::Path) -> Assembler {
    let mut asm = Assembler::new(frame(), 2, dir, 1 << 16).unwrap();
    let inp = input();
    for r in 0..3u32 {
        let polys: Vec<InputPoly> = inp
            .polys
            .iter()
            .filter(|p| p.region == r)
            .cloned()
            .collect();
        let base = polys[0].verts[0];
        let local: Vec<InputPoly> = polys
            .into_iter()
            .map(|p| InputPoly {
                verts: p.verts.iter().map(|v| v - base).collect(),
                tris: p.tris.iter().map(|t| t.map(|v| v - base)).collect(),
                ..p
            })
            .collect();
        asm.add_region(&inp.verts[base as usize..base as usize + 4], &[], &local, 0)
            .unwrap();
    }
    asm
}

#[test]
fn the_streamed_archive_is_rkyvs_own_bytes() {
    // The assembler writes the archive from spill files; deserialized and encoded again by
    // rkyv in memory, the bytes must be the same (the layouts agree field for field).
    let m = build(frame(), &input()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let asm = assembled_input(dir.path());
    let mut file = std::io::Cursor::new(Vec::new());
    let done = asm.finish(&Pruning::default(), 7, 32, &mut file).unwrap();
    let streamed = file.into_inner();
    assert_eq!(done.bytes, streamed.len() as u64);
    let (header, payload) = encode_parts(&m, 7);
    assert_eq!(&streamed[HEADER_LEN..], &payload[..]);
    // Same header but for the tile size (and so the checksum).
    let written = tessera_navmesh::Header::from_bytes(&streamed).unwrap();
    assert_eq!(
        written,
        tessera_navmesh::Header {
            tile_cells: 32,
            checksum: written.checksum,
            ..header
        }
    );
    let dir2 = tempfile::tempdir().unwrap();
    let path = dir2.path().join("m.tsn");
    std::fs::write(&path, &streamed).unwrap();
    let f = NavMeshFile::open(&path).unwrap();
    assert_eq!((f.key(), f.tile_cells()), (7, 32));
}

#[test]
fn sorting_in_small_runs_gives_the_same_file() {
    // Many regions in a row, each one square, neighbours one voxel apart: the border sort and
    // the grid sort spill runs with a tiny buffer, and the file must not change.
    let mut inp = MeshInput {
        climb: 1,
        ..Default::default()
    };
    for r in 0..300u32 {
        let (x, y) = ((r % 20) as i32 * 4, (r / 20) as i32 * 4);
        let h = ((r % 20) as i32 + (r / 20) as i32) % 2;
        let b = inp.verts.len() as u32;
        inp.verts
            .extend([[x, y, h], [x + 4, y, h], [x + 4, y + 4, h], [x, y + 4, h]]);
        inp.polys.push(InputPoly {
            verts: vec![b, b + 1, b + 2, b + 3],
            region: r,
            tris: vec![[b, b + 1, b + 2], [b, b + 2, b + 3]],
            blocked: vec![],
        });
    }
    inp.regions = 300;
    let write = |memory: usize| {
        let dir = tempfile::tempdir().unwrap();
        let mut asm = Assembler::new(frame(), 1, dir.path(), memory).unwrap();
        for p in &inp.polys {
            let local = InputPoly {
                verts: vec![0, 1, 2, 3],
                tris: vec![[0, 1, 2], [0, 2, 3]],
                ..p.clone()
            };
            let b = p.verts[0] as usize;
            asm.add_region(&inp.verts[b..b + 4], &[], &[local], 0)
                .unwrap();
        }
        let mut file = std::io::Cursor::new(Vec::new());
        let done = asm.finish(&Pruning::default(), 0, 0, &mut file).unwrap();
        // Every run file is gone.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        (file.into_inner(), done)
    };
    let (small, done) = write(1);
    let (large, _) = write(64 << 20);
    assert_eq!(small, large);
    // 20 x 15 squares: 19 * 15 + 20 * 14 shared edges, all within one voxel.
    assert_eq!(done.stats.portals, 19 * 15 + 20 * 14);
}

#[test]
fn detail_points_survive_pruning_renumbered() {
    // Square 0 gets a detail point in its middle, 0.5 m up; a seed on square 2 (the upper
    // floor) drops squares 0 and 1, a seed on square 0 keeps them and the point.
    let mut i = input();
    i.detail_verts.push([2.0, 2.0, 2.0]);
    i.polys[0].tris = vec![
        [0, 1, DETAIL],
        [1, 2, DETAIL],
        [2, 3, DETAIL],
        [3, 0, DETAIL],
    ];
    // Square 2 too, with its own point, so that indices must be renumbered after pruning.
    i.detail_verts.push([2.0, 2.0, 21.0]);
    i.polys[2].tris = vec![
        [8, 9, DETAIL | 1],
        [9, 10, DETAIL | 1],
        [10, 11, DETAIL | 1],
        [11, 8, DETAIL | 1],
    ];
    let m = build(frame(), &i).unwrap();
    assert_eq!(m.detail_verts, vec![[1.0, 1.0, 0.5], [1.0, 1.0, 5.25]]);
    let bytes = aligned(&encode(&m));
    let a = access(&bytes, "t").unwrap();
    let tri: Vec<[[f32; 3]; 3]> = a.poly_triangles(0).collect();
    assert_eq!(tri.len(), 4);
    assert!(tri.iter().all(|t| t[2] == [1.0, 1.0, 0.5]));
    // Only the upper floor kept: its point is now detail vertex 0.
    let (m, _) = build_pruned(frame(), &i, &Pruning::seeds(&[[1.0, 1.0, 5.0]])).unwrap();
    assert_eq!(m.detail_verts, vec![[1.0, 1.0, 5.25]]);
    assert!(m.detail_tris.iter().all(|t| t[2] == DETAIL));
    // A detail index out of range is refused when building and when reading.
    let mut bad = input();
    bad.polys[0].tris[0][2] = DETAIL | 5;
    assert!(build(frame(), &bad).is_err());
}

#[test]
fn stair_links_join_facing_blocked_edges_across_a_small_gap() {
    // Square A (x 0..4, floor 0) and square B (x 5..9, floor 2 voxels up), one cell apart;
    // their facing edges are blocked (nothing walkable across).
    let square = |x0: i32, z: i32, blocked: Vec<bool>| {
        let verts = vec![[x0, 0, z], [x0 + 4, 0, z], [x0 + 4, 4, z], [x0, 4, z]];
        let poly = InputPoly {
            verts: vec![0, 1, 2, 3],
            region: 0,
            tris: vec![[0, 1, 2], [0, 2, 3]],
            blocked,
        };
        (verts, poly)
    };
    let links = |r: f64, climb: u32, memory: usize| {
        let dir = tempfile::tempdir().unwrap();
        let mut asm = Assembler::new(frame(), 2, dir.path(), memory).unwrap();
        asm.stair_links(r, climb);
        let (va, pa) = square(0, 0, vec![false, true, false, false]);
        let (vb, pb) = square(5, 2, vec![false, false, false, true]);
        asm.add_region(&va, &[], &[pa], 0).unwrap();
        asm.add_region(&vb, &[], &[pb], 0).unwrap();
        let mut file = std::io::Cursor::new(Vec::new());
        let done = asm.finish(&Pruning::default(), 0, 0, &mut file).unwrap();
        let bytes = aligned(&file.into_inner());
        let m: NavMesh =
            rkyv::deserialize::<NavMesh, rancor::Error>(access(&bytes, "t").unwrap()).unwrap();
        (done.stats.links, m)
    };
    let (n, m) = links(2.0, 3, 1 << 16);
    assert_eq!(n, 2);
    assert_eq!((m.links[0].from, m.links[0].to), (0, 1));
    assert_eq!((m.links[1].from, m.links[1].to), (1, 0));
    // The crossing segment is the from side's edge, in world units (0.5 m cells).
    assert_eq!(
        (m.links[0].a, m.links[0].b),
        ([2.0, 0.0, 0.0], [2.0, 2.0, 0.0])
    );
    assert_eq!(m.polys[0].link_count, 1);
    // Too high a step, or too wide a gap: no link.
    assert_eq!(links(2.0, 1, 1 << 16).0, 0);
    assert_eq!(links(1.0, 3, 1 << 16).0, 0);
}

#[test]
fn the_polygon_sweeps_of_the_file_report_their_counts() {
    // Issue 21, class 11: each pass over the polygons says how many there are and how far it
    // got, so that a large world's navmesh file is never a long silence in the log.
    let dir = tempfile::tempdir().unwrap();
    let asm = assembled_input(dir.path());
    let mut steps = Vec::new();
    let pruning = Pruning {
        seeds: &[],
        min_island_area: 1.0,
    };
    let mut file = std::io::Cursor::new(Vec::new());
    asm.finish_reporting(&pruning, 0, 0, &mut file, &mut |s| {
        steps.push(s);
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    let n = 3;
    assert_eq!(
        steps,
        [
            Step::Pass("stair links", 0),
            Step::Pass("portals across regions", 0),
            Step::Pass("islands", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("components", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("renumbering", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("lookup grid", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("hierarchy: squares", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("hierarchy: clusters", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("hierarchy: borders", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("hierarchy: entrances", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("hierarchy: lengths", n),
            Step::Done(0),
            Step::Done(n),
            Step::Pass("writing the archive", 0),
        ]
    );
}

#[test]
fn a_report_that_asks_to_stop_stops_the_file_at_that_step() {
    // Issue 21, class 5: an interrupted bake stops inside the navmesh file's passes, not after
    // them. Stopping at each report in turn ends the file there, with nothing written after.
    let pruning = Pruning {
        seeds: &[],
        min_island_area: 1.0,
    };
    let total = 30;
    for stop_at in 0..total {
        let dir = tempfile::tempdir().unwrap();
        let asm = assembled_input(dir.path());
        let mut file = std::io::Cursor::new(Vec::new());
        let mut heard = 0;
        let got = asm.finish_reporting(&pruning, 0, 0, &mut file, &mut |_| {
            heard += 1;
            if heard > stop_at {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        });
        assert!(
            matches!(got, Err(crate::BuildError::Stopped)),
            "stopped at report {stop_at}: {:?}",
            got.map(|a| a.polygons)
        );
        assert_eq!(heard, stop_at + 1, "no report after the stop");
        assert!(
            file.get_ref().is_empty(),
            "nothing written before the archive"
        );
    }
}

#[test]
fn a_table_past_the_formats_limit_is_refused_not_wrapped() {
    // Issue 21, class 11: a world whose navmesh outgrows a 32-bit table must fail with the
    // table named, at the region that crosses it, instead of wrapping an index (a corrupt file
    // or a wrong height found only when the file is read, hours later).
    use crate::assemble::{check_limits, Totals, LIMITS};
    let one = Totals {
        verts: 40,
        detail: 7,
        polys: 12,
        edges: 50,
        tris: 30,
        regions: 1,
    };
    assert!(check_limits(&Totals::default(), &one).is_ok());
    let full = |f: fn(&mut Totals) -> &mut u64, what: &str| {
        let mut had = Totals::default();
        *f(&mut had) = *f(&mut LIMITS.clone());
        // Exactly at the limit with nothing more: fine; one region more: refused, named.
        let mut at = had;
        *f(&mut at) -= *f(&mut one.clone());
        assert!(check_limits(&at, &one).is_ok(), "{what} at its limit");
        had.regions = 77;
        match check_limits(&had, &one) {
            Err(BuildError::Limit { what: w, limit, at }) => {
                assert_eq!(w, what);
                assert_eq!(limit, *f(&mut LIMITS.clone()));
                assert_eq!(at, "region 77");
            }
            other => panic!("{what}: {other:?}"),
        }
    };
    full(|t| &mut t.verts, "vertices");
    full(|t| &mut t.detail, "height detail points");
    full(|t| &mut t.polys, "polygons");
    full(|t| &mut t.edges, "polygon corners");
    full(|t| &mut t.tris, "detail triangles");
    // Vertex and detail indices share 32 bits with the detail flag: 2^31 each.
    assert_eq!(LIMITS.verts, 1 << 31);
    assert_eq!(LIMITS.detail, u64::from(DETAIL));
    // The message says which table and what to change.
    let e = check_limits(
        &Totals {
            detail: LIMITS.detail,
            ..Totals::default()
        },
        &one,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("height detail points") && e.contains("sample distance"),
        "{e}"
    );
}

/// An open floor of `n` x `n` squares of 4 cells (2 m), each its own polygon, in one region.
fn floor_of_squares(n: i32) -> MeshInput {
    let cells: Vec<(i32, i32)> = (0..n).flat_map(|y| (0..n).map(move |x| (x, y))).collect();
    tessera_test_support::mesh::squares(&cells, 4)
}

/// Clusters of at most 16 polygons, in squares down to 1 cell.
const SMALL_CLUSTERS: ClusterSettings = ClusterSettings {
    max_polygons: 16,
    min_side_cells: 1,
    entrance_spacing: 0.125,
    entrance_min_spacing: 0.0,
};

#[test]
fn the_hierarchy_covers_every_polygon_and_measures_the_ways_between_entrances() {
    let mut mesh = build(frame(), &floor_of_squares(12)).unwrap();
    let h = hierarchy_of(&mesh, &SMALL_CLUSTERS).unwrap();
    let np = mesh.polys.len();
    assert_eq!(h.poly_cluster.len(), np);
    // 144 squares in quadtree squares of 16 polygons at most: several clusters, none larger.
    assert!(h.clusters.len() >= 9, "{} clusters", h.clusters.len());
    assert!(h.clusters.iter().all(|c| c.polygons <= 16));
    assert_eq!(
        h.clusters
            .iter()
            .map(|c| c.polygons as usize)
            .sum::<usize>(),
        np
    );
    for (i, e) in h.entrances.iter().enumerate() {
        assert_eq!(h.poly_cluster[e.poly as usize], e.cluster);
        // A floor has portals only: each entrance has its twin, at the same point.
        let twin = &h.entrances[e.across as usize];
        assert_eq!(twin.across as usize, i);
        assert_eq!(twin.point, e.point);
        assert_ne!(twin.cluster, e.cluster);
    }
    // Each cluster is a square block of squares (convex): the way between two entrances is
    // the straight line.
    for c in &h.clusters {
        let n = c.entrance_count as usize;
        let ents = &h.entrances[c.entrance_first as usize..][..n];
        for i in 0..n {
            for j in 0..n {
                let cost = h.costs[c.cost_first as usize + i * n + j];
                let (a, b) = (ents[i].point, ents[j].point);
                let direct = ((a[0] - b[0]) as f64).hypot((a[1] - b[1]) as f64);
                assert!((cost as f64 - direct).abs() < 1e-3, "{cost} vs {direct}");
            }
        }
    }
    // What the assembler writes is the same hierarchy with the default settings.
    let default = hierarchy_of(&mesh, &ClusterSettings::default()).unwrap();
    assert_eq!(mesh.hierarchy, default);
    mesh.hierarchy = h;
    access(&aligned(&encode(&mesh)), "mesh with small clusters").unwrap();
}

#[test]
fn the_entrance_spacing_has_a_floor_in_metres() {
    let mesh = build(frame(), &floor_of_squares(12)).unwrap();
    // Per cluster: its entrances and the clusters across them.
    let spread = |floor: f32| {
        let settings = ClusterSettings {
            entrance_min_spacing: floor,
            ..SMALL_CLUSTERS
        };
        let h = hierarchy_of(&mesh, &settings).unwrap();
        h.clusters
            .iter()
            .map(|c| {
                let ents = &h.entrances[c.entrance_first as usize..][..c.entrance_count as usize];
                let mut across: Vec<u32> = ents
                    .iter()
                    .map(|e| h.entrances[e.across as usize].cluster)
                    .collect();
                across.sort_unstable();
                across.dedup();
                (ents.len(), across.len())
            })
            .collect::<Vec<_>>()
    };
    // The fraction alone (an eighth of 8 m blocks): a border of whole squares is cut in
    // pieces of a metre, several entrances to each neighbour.
    let fine = spread(0.0);
    assert!(
        fine.iter().any(|&(n, neighbours)| n > neighbours),
        "{fine:?}"
    );
    // A floor longer than any border: each straight border between two blocks of an open
    // floor is one piece, one entrance to each neighbour.
    let coarse = spread(1000.0);
    assert!(
        coarse.iter().all(|&(n, neighbours)| n == neighbours),
        "{coarse:?}"
    );
    // Between the two, fewer entrances than the fraction alone gives.
    let total = |v: &[(usize, usize)]| v.iter().map(|x| x.0).sum::<usize>();
    let mid = spread(3.0);
    assert!(total(&coarse) < total(&mid) && total(&mid) < total(&fine));
}

/// Tables of lengths kept from a mesh built before, by the keys its build reported.
struct Kept(NavMesh, Vec<u64>);

impl crate::KeptLengths for Kept {
    fn kept(&self, key: u64, n: usize) -> Option<Vec<f32>> {
        let c = self.1.iter().position(|&k| k == key)?;
        let cluster = &self.0.hierarchy.clusters[c];
        (cluster.entrance_count as usize == n).then(|| {
            let first = cluster.cost_first as usize;
            self.0.hierarchy.costs[first..first + n * n].to_vec()
        })
    }
}

#[test]
fn tables_of_unchanged_clusters_are_taken_from_an_earlier_build_with_the_same_bytes() {
    let small = |asm: &mut Assembler| asm.cluster_settings(SMALL_CLUSTERS);
    let build_of = |input: &MeshInput, kept: Option<Kept>| {
        crate::build::build_with(frame(), input, &Pruning::default(), |asm| {
            small(asm);
            if let Some(k) = kept {
                asm.kept_lengths(Box::new(k));
            }
        })
        .unwrap()
    };
    let floor = floor_of_squares(12);
    let (first, _, done) = build_of(&floor, None);
    assert_eq!(done.clusters_kept, 0);
    assert_eq!(done.cluster_keys.len(), first.hierarchy.clusters.len());
    // The same floor again: every table with an entrance kept, the same mesh.
    let (again, _, redone) = build_of(&floor, Some(Kept(first.clone(), done.cluster_keys.clone())));
    let measured = first
        .hierarchy
        .clusters
        .iter()
        .filter(|c| c.entrance_count > 0)
        .count() as u64;
    assert!(measured >= 9);
    assert_eq!(redone.clusters_kept, measured);
    assert_eq!(again, first);
    // One square in the middle gone: its cluster and those whose entrances change measure
    // again, the others are kept, and the mesh is the one a build from nothing makes.
    let mut holed = floor.clone();
    holed.polys.remove(5 * 12 + 5);
    let (fresh, _, _) = build_of(&holed, None);
    let (reused, _, rebuilt) = build_of(&holed, Some(Kept(first, done.cluster_keys)));
    assert_eq!(reused, fresh);
    assert!(
        rebuilt.clusters_kept > 0 && rebuilt.clusters_kept < measured,
        "{} of {measured} kept",
        rebuilt.clusters_kept
    );
}

#[test]
fn a_cluster_key_changes_with_anything_a_table_depends_on() {
    use crate::hierarchy::cluster_key;
    let mut sub = build(frame(), &floor_of_squares(3)).unwrap();
    sub.links
        .push(tessera_navmesh::Link::stair(0, 1, [0.0; 3], [1.0; 3]));
    let targets = [(0, [0.5, 0.5, 0.0]), (8, [4.0, 4.0, 0.0])];
    let key = cluster_key(&sub, 7, &targets);
    assert_eq!(key, cluster_key(&sub.clone(), 7, &targets));
    type Change = fn(&mut NavMesh);
    let changes: [(&str, Change); 6] = [
        ("a corner's height", |m| m.verts[3][2] += 0.25),
        ("a polygon's area", |m| m.polys[2].area_id = 1),
        ("a portal cut", |m| {
            let at = m.poly_neis.iter().position(|&n| n != NONE).unwrap();
            m.poly_neis[at] = NONE;
        }),
        ("a link's cost", |m| m.links[0].cost = 1.0),
        ("a detail point", |m| m.detail_verts.push([0.0; 3])),
        ("a corner's plan", |m| m.verts[3][0] += 0.5),
    ];
    for (what, change) in changes {
        let mut m = sub.clone();
        change(&mut m);
        assert_ne!(cluster_key(&m, 7, &targets), key, "{what}");
    }
    assert_ne!(
        cluster_key(&sub, 8, &targets),
        key,
        "what all clusters share"
    );
    let moved = [(0, [0.5, 0.5, 0.0]), (8, [4.0, 4.5, 0.0])];
    assert_ne!(cluster_key(&sub, 7, &moved), key, "an entrance");
    let other = [(1, [0.5, 0.5, 0.0]), (8, [4.0, 4.0, 0.0])];
    assert_ne!(cluster_key(&sub, 7, &other), key, "an entrance's polygon");
}

#[test]
fn a_broken_hierarchy_is_refused_when_the_file_is_read() {
    use tessera_navmesh::{InvalidMesh, NavMeshError};
    let mut mesh = build(frame(), &floor_of_squares(8)).unwrap();
    mesh.hierarchy = hierarchy_of(&mesh, &SMALL_CLUSTERS).unwrap();
    let np = mesh.polys.len() as u32;
    let refused = |m: &NavMesh| match access(&aligned(&encode(m)), "tampered") {
        Err(NavMeshError::Invalid { source, .. }) => source,
        other => panic!("not refused as invalid: {:?}", other.map(|_| ())),
    };
    type Tamper = fn(&mut NavMesh, u32);
    let cases: [(&str, Tamper); 10] = [
        ("cluster out of range", |m, _| {
            m.hierarchy.poly_cluster[0] = 99
        }),
        ("a polygon without a cluster", |m, _| {
            m.hierarchy.poly_cluster.pop();
        }),
        ("polygon count", |m, _| {
            m.hierarchy.clusters[0].polygons += 1
        }),
        ("entrances out of turn", |m, _| {
            m.hierarchy.clusters[1].entrance_first += 1
        }),
        ("entrance off its cluster", |m, np| {
            m.hierarchy.entrances[0].poly = np
        }),
        ("entrance into its own cluster", |m, _| {
            m.hierarchy.entrances[0].across = 1;
            m.hierarchy.entrances[1].cluster = m.hierarchy.entrances[0].cluster;
        }),
        ("entrance not finite", |m, _| {
            m.hierarchy.entrances[0].point[0] = f32::NAN
        }),
        ("negative length", |m, _| m.hierarchy.costs[1] = -1.0),
        ("length not a number", |m, _| {
            m.hierarchy.costs[1] = f32::NAN
        }),
        ("lengths cut short", |m, _| {
            m.hierarchy.costs.pop();
        }),
    ];
    for (what, tamper) in cases {
        let mut m = mesh.clone();
        tamper(&mut m, np);
        let e = refused(&m);
        let kind = match e {
            InvalidMesh::HierarchyPolygons { .. } => "polygons",
            InvalidMesh::HierarchyClusterNumber { .. } => "number",
            InvalidMesh::HierarchyCluster { .. } => "cluster",
            InvalidMesh::HierarchyEntrance { .. } => "entrance",
            InvalidMesh::HierarchyCost { .. } => "cost",
            InvalidMesh::TableLength { .. } => "table",
            _ => "other",
        };
        assert_ne!(kind, "other", "{what}: {e}");
        eprintln!("{what}: {e}");
    }
    // An empty hierarchy is valid (readers then search every polygon); a table without
    // clusters is not.
    let mut m = mesh.clone();
    m.hierarchy = Default::default();
    access(&aligned(&encode(&m)), "no hierarchy").unwrap();
    m.hierarchy.costs.push(0.0);
    assert!(matches!(refused(&m), InvalidMesh::HierarchyPolygons { .. }));
}

#[test]
fn links_between_clusters_are_an_exit_and_a_landing() {
    // Two floors of 4 x 4 squares, 8 m apart in plan (each in its half of the quadtree),
    // joined by a link each way between facing squares: with clusters of 16 polygons, each
    // floor a cluster.
    let mut cells: Vec<(i32, i32)> = (0..4).flat_map(|y| (0..4).map(move |x| (x, y))).collect();
    cells.extend((0..4).flat_map(|y| (8..12).map(move |x| (x, y))));
    let mut input = tessera_test_support::mesh::squares(&cells, 4);
    // Square (3, 1) is polygon 7, square (8, 1) polygon 20; their facing edges x = 16 and 32.
    input.links = vec![
        (7, 20, [16, 4, 0], [16, 8, 0]),
        (20, 7, [32, 8, 0], [32, 4, 0]),
    ];
    let mesh = build(frame(), &input).unwrap();
    let h = hierarchy_of(&mesh, &SMALL_CLUSTERS).unwrap();
    assert_eq!(h.clusters.len(), 2);
    assert_ne!(h.poly_cluster[7], h.poly_cluster[20]);
    // Each cluster: its exit, then the landing of the other's link.
    assert_eq!(h.entrances.len(), 4);
    for c in &h.clusters {
        let [exit, landing] = [0, 1].map(|k| h.entrances[c.entrance_first as usize + k]);
        assert_ne!(exit.across, NONE);
        assert_eq!(landing.across, NONE);
        let to = h.entrances[exit.across as usize];
        assert_ne!(to.cluster, exit.cluster);
        assert_eq!(to.across, NONE, "an exit leads to a landing");
        // The jump: 8 m (16 cells of 0.5 m) in plan.
        assert!((exit.cost - 8.0).abs() < 1e-4, "{}", exit.cost);
        // From the exit to the landing of the way back, inside the cluster: on the same edge,
        // at the same point here.
        let n = c.entrance_count as usize;
        assert_eq!(h.costs[c.cost_first as usize + 1], 0.0);
        assert_eq!(n, 2);
    }
    let mut with = mesh.clone();
    with.hierarchy = h;
    access(&aligned(&encode(&with)), "linked floors").unwrap();
}
