//! The navmesh file end to end: the same for every tiling and thread count, convex polygons,
//! symmetric portals, exact cover without simplification, stairs joining floors.

use std::collections::VecDeque;
use std::path::Path;

use tessera_config::SegmentationMode::{Flat, Layered, Surface};
use tessera_navmesh::{ArchivedNavMesh, NavMeshFile, NONE};
use tessera_tests::{
    bake_columns, bake_variants, coarse_config, interrupt_run, recast_scenes, IntoScene, Variant,
};

fn open(out: &Path) -> NavMeshFile {
    NavMeshFile::open(out.join("navmesh.tsn")).unwrap()
}

/// The archive bytes (the header holds the checkpoint key, which names the tile size).
fn payload(out: &Path) -> Vec<u8> {
    std::fs::read(out.join("navmesh.tsn")).unwrap()[tessera_navmesh::HEADER_LEN..].to_vec()
}

/// Every polygon convex in plan; every portal answered by the polygon across, on the same
/// edge reversed.
fn check_structure(m: &ArchivedNavMesh, what: &str) {
    for p in 0..m.polys.len() as u32 {
        let v: Vec<[f32; 3]> = m.poly_vert_ids(p).map(|i| m.vert(i)).collect();
        let n = v.len();
        for k in 0..n {
            let (a, b, c) = (v[k], v[(k + 1) % n], v[(k + 2) % n]);
            let turn = (b[0] as f64 - a[0] as f64) * (c[1] as f64 - b[1] as f64)
                - (b[1] as f64 - a[1] as f64) * (c[0] as f64 - b[0] as f64);
            // Vertices sit on the voxel grid, so a real reflex turn is at least a cell's area;
            // f32 world coordinates round straight angles by a few ulps of the coordinates.
            let len = |p: [f32; 3], q: [f32; 3]| ((q[0] - p[0]).hypot(q[1] - p[1])) as f64;
            let scale = [a, b, c]
                .iter()
                .flat_map(|p| [p[0].abs(), p[1].abs()])
                .fold(1f32, f32::max);
            let tol = 4.0 * f32::EPSILON as f64 * scale as f64 * (len(a, b) + len(b, c));
            assert!(turn >= -tol, "{what}: polygon {p} is not convex: {v:?}");
        }
        let ids: Vec<u32> = m.poly_vert_ids(p).collect();
        for (k, q) in m.poly_neighbours(p).enumerate() {
            if q == NONE {
                continue;
            }
            let (a, b) = (m.vert(ids[k]), m.vert(ids[(k + 1) % n]));
            let qids: Vec<u32> = m.poly_vert_ids(q).collect();
            let back = m.poly_neighbours(q).enumerate().any(|(j, r)| {
                let (c, d) = (m.vert(qids[j]), m.vert(qids[(j + 1) % qids.len()]));
                r == p && c[..2] == b[..2] && d[..2] == a[..2]
            });
            assert!(back, "{what}: portal {p} -> {q} is not answered");
        }
    }
}

#[test]
#[ignore = "slow: every Recast scene single-tile and tiled in both modes (about 10 s)"]
fn recast_scenes_navmesh_is_the_same_for_every_tiling() {
    for scene in recast_scenes() {
        for mode in [Surface, Layered, Flat] {
            let dir = tempfile::tempdir().unwrap();
            let mut config = coarse_config(8192);
            config.regions.mode = mode;
            let input = || tessera_tests::file(&scene, tessera_geom::UpAxis::Y);
            let runs = bake_variants(
                &input,
                &config,
                &[Variant::tiles(8192), Variant::tiles(32)],
                dir.path(),
            );
            let (whole, tiled) = (&runs.bakes[0], &runs.bakes[1]);
            assert!(tiled.0.tiles > 4);
            assert!(whole.0.polygons > 0);
            let what = format!("{} {mode:?}", scene.display());
            check_structure(open(&tiled.1).mesh(), &what);
        }
    }
}

#[test]
fn without_simplification_polygons_cover_the_regions_exactly() {
    for scene in recast_scenes() {
        let mut config = coarse_config(64);
        config.polygons.max_error = 0.0;
        let dir = tempfile::tempdir().unwrap();
        let (s, _) = bake_columns(
            tessera_tests::file(&scene, tessera_geom::UpAxis::Y),
            &config,
            dir.path(),
            2,
            256 << 20,
        );
        // Dropped islands were walkable too.
        let polygons = s.navmesh_area_m2 + s.unreachable_area_removed_m2;
        let rel = (polygons - s.walkable_area_m2).abs() / s.walkable_area_m2;
        assert!(
            rel < 1e-5,
            "{}: {} vs {}",
            scene.display(),
            s.navmesh_area_m2,
            s.walkable_area_m2
        );
        check_structure(open(dir.path()).mesh(), &scene.display().to_string());
    }
}

/// The polygon under plan point (x, y) whose height there is nearest to z.
fn poly_at(m: &ArchivedNavMesh, x: f32, y: f32, z: f32) -> Option<u32> {
    let mut best: Option<(f32, u32)> = None;
    for p in 0..m.polys.len() as u32 {
        for t in m.poly_triangles(p) {
            let [a, b, c] = t;
            let d = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
            let u = ((b[0] - x) * (c[1] - y) - (b[1] - y) * (c[0] - x)) / d;
            let v = ((c[0] - x) * (a[1] - y) - (c[1] - y) * (a[0] - x)) / d;
            let w = 1.0 - u - v;
            if u >= -1e-4 && v >= -1e-4 && w >= -1e-4 {
                let h = u * a[2] + v * b[2] + w * c[2];
                if best.is_none_or(|(bd, _)| (h - z).abs() < bd) {
                    best = Some(((h - z).abs(), p));
                }
            }
        }
    }
    best.filter(|(d, _)| *d < 0.6).map(|(_, p)| p)
}

/// Polygons reachable from `start` over portals and links.
fn reachable(m: &ArchivedNavMesh, start: u32) -> Vec<bool> {
    let mut seen = vec![false; m.polys.len()];
    let mut queue = VecDeque::from([start]);
    seen[start as usize] = true;
    while let Some(p) = queue.pop_front() {
        let next = m
            .poly_neighbours(p)
            .filter(|&q| q != NONE)
            .chain(m.poly_links(p).iter().map(|l| l.to.to_native()));
        for q in next.collect::<Vec<_>>() {
            if !seen[q as usize] {
                seen[q as usize] = true;
                queue.push_back(q);
            }
        }
    }
    seen
}

#[test]
fn stairs_join_the_two_floors_in_both_modes_and_the_platform_stays_an_island() {
    for mode in [Flat, Layered, Surface] {
        let mut config = coarse_config(32);
        config.regions.mode = mode;
        // The platform is an island this test wants to see.
        config.polygons.min_island_area = 0.0;
        let dir = tempfile::tempdir().unwrap();
        let scene = tessera_tests::two_storey_building().into_scene("two storeys");
        bake_columns(scene, &config, dir.path(), 2, 256 << 20);
        let file = open(dir.path());
        let m = file.mesh();
        check_structure(m, "two storeys");
        // Internal coordinates are relative to the scene's minimum (0, 0, 0 here).
        let at = |x: f32, y: f32, z: f32| {
            poly_at(m, x, y, z).unwrap_or_else(|| panic!("{mode:?}: no floor at {x},{y},{z}"))
        };
        let ground = at(17.0, 3.0, 0.0);
        let first = at(5.0, 10.0, 3.0);
        let under = at(5.0, 10.0, 0.0);
        let platform = at(17.5, 17.0, 1.5);
        let from_ground = reachable(m, ground);
        assert!(from_ground[first as usize], "{mode:?}: the stairs lead up");
        assert!(from_ground[under as usize]);
        assert!(
            !from_ground[platform as usize],
            "{mode:?}: the platform is an island"
        );
        assert_ne!(first, under);
    }
}

#[test]
fn threads_budget_tiling_and_interruptions_do_not_change_a_byte() {
    let scene = &recast_scenes()[0];
    let input = || tessera_tests::file(scene, tessera_geom::UpAxis::Y);
    let dir = tempfile::tempdir().unwrap();
    let tiles = Variant::tiles(32);
    let runs = bake_variants(
        &input,
        &coarse_config(32),
        &[
            tiles.run(1, 512 << 20),
            tiles.run(2, 24 << 20),
            tiles.run(8, 64 << 20),
            tiles.run(2, 256 << 20).interrupted(1),
            tiles.run(1, 24 << 20).interrupted(20_000),
            Variant::tiles(8192),
            Variant::tiles(16).run(2, 24 << 20),
        ],
        dir.path(),
    );
    assert!(
        runs.interrupted > 0,
        "no bake was interrupted before it finished"
    );
    // The scene was binned in two parts (the folders are the same, so one is enough).
    let work = runs.bakes[0].1.join("work");
    assert!(work.join("bins/part-1-of-2.pack").is_file());
    assert!(!work.join("tiles.pack").exists());
}

#[test]
fn a_rebake_interrupted_in_its_merge_resumes_to_a_fresh_bakes_bytes() {
    // Islands that no region crosses: a block moved on one reaches a few tiles' regions,
    // and the rebake merges only those again (an incremental merge). Stopped part way and
    // run again, it gives the bytes of a fresh bake of the changed scene.
    let islands = |shift: f64| {
        let mut m = tessera_test_support::mesh::MeshBuilder::default();
        for i in 0..100 {
            let (x, y) = (12.0 * (i % 10) as f64, 12.0 * (i / 10) as f64);
            m.floor(x, y, x + 10.0, y + 10.0, 0.0);
            let dx = if i == 44 { shift } else { 0.0 };
            m.block(x + 3.0 + dx, y + 3.0, x + 7.0 + dx, y + 7.0, 3.0);
        }
        m.into_scene("islands")
    };
    let dir = tempfile::tempdir().unwrap();
    let mut config = tessera_config::BakeConfig::preset("default").unwrap();
    config.voxel.tile_size = 64.into();
    let request = |shift: f64, out: &Path| {
        let (config, out) = (config.clone(), out.to_path_buf());
        move |interrupt| tessera_pipeline::BakeRequest {
            scene: islands(shift),
            config: config.clone(),
            out_dir: out.clone(),
            threads: 2,
            memory_budget: 256 << 20,
            progress: tessera_pipeline::Progress::quiet(),
            interrupt,
            sampler: None,
        }
    };
    let (b, fresh) = (dir.path().join("b"), dir.path().join("fresh"));
    let first = tessera_pipeline::bake(request(0.0, &b)(None)).unwrap();
    let spans = tessera_test_support::bake_folder::bytes_under(&b.join("work/spans"));
    let mut stopped = false;
    for part in [2, 3, 4, 6, 8] {
        let shift = 0.35 * part as f64;
        stopped |= interrupt_run(request(shift, &b), &b, spans / part);
        let again = tessera_pipeline::bake(request(shift, &b)(None)).unwrap();
        assert!(
            again.tiles_remerged * 3 <= first.tiles_with_geometry,
            "{} of {} tiles merged again",
            again.tiles_remerged,
            first.tiles_with_geometry
        );
        let _ = std::fs::remove_dir_all(&fresh);
        tessera_pipeline::bake(request(shift, &fresh)(None)).unwrap();
        tessera_test_support::bake_folder::assert_same_bake(
            &fresh,
            &b,
            tessera_test_support::bake_folder::Same::Tiling,
            &format!("a rebake stopped at 1/{part} of its span journal"),
        );
    }
    assert!(stopped, "no rebake was stopped before it finished");
}

#[test]
fn a_rebake_of_a_city_keeps_the_tables_of_lengths_of_the_clusters_it_did_not_change() {
    // The demo world, then the same with a 2 x 2 x 1 m box on its ground: the rebake takes
    // the tables of the clusters the box does not reach from the last navmesh (opened beside
    // the regions' polygons), and its bytes are a fresh bake's.
    let scene = |boxed: bool| {
        let tessera_pipeline::SceneInput::Mesh {
            name,
            mut positions,
            mut triangles,
        } = tessera_tests::demo_world()
        else {
            unreachable!("the demo world is a mesh")
        };
        if boxed {
            // On the ground (the lowest vertices), at the middle of their extent.
            let low = positions.iter().map(|p| p[2]).fold(f64::INFINITY, f64::min);
            let ground: Vec<&[f64; 3]> = positions.iter().filter(|p| p[2] == low).collect();
            let mid = |k: usize| {
                let (lo, hi) = ground
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                        (a.min(p[k]), b.max(p[k]))
                    });
                (lo + hi) / 2.0
            };
            let mut m = tessera_test_support::mesh::MeshBuilder::default();
            let (x, y) = (mid(0), mid(1));
            m.block(x, y, x + 2.0, y + 2.0, 1.0);
            let tessera_pipeline::SceneInput::Mesh {
                positions: bp,
                triangles: bt,
                ..
            } = m.into_scene("box")
            else {
                unreachable!("a built mesh")
            };
            let base = positions.len() as u32;
            positions.extend(bp.iter().map(|p| [p[0], p[1], p[2] + low]));
            triangles.extend(bt.iter().map(|t| t.map(|i| i + base)));
        }
        tessera_pipeline::SceneInput::Mesh {
            name,
            positions,
            triangles,
        }
    };
    let config = tessera_config::BakeConfig::preset("default").unwrap();
    let bake = |boxed: bool, out: &Path| {
        tessera_pipeline::bake(tessera_tests::quiet_request(
            scene(boxed),
            config.clone(),
            out,
        ))
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let (b, fresh) = (dir.path().join("b"), dir.path().join("fresh"));
    let first = bake(false, &b);
    assert_eq!(first.clusters_reused, 0);
    let again = bake(true, &b);
    let clusters = open(&b).mesh().hierarchy.clusters.len() as u64;
    assert!(again.tiles_rebaked > 0, "the box changed no tile");
    assert!(
        again.clusters_reused > 0 && again.clusters_reused <= clusters,
        "{} of {clusters} clusters' tables kept",
        again.clusters_reused
    );
    bake(true, &fresh);
    tessera_test_support::bake_folder::assert_same_bake(
        &fresh,
        &b,
        tessera_test_support::bake_folder::Same::Tiling,
        "a box added to the demo world",
    );
}

#[test]
fn the_hierarchy_of_a_city_is_the_same_for_every_tiling_thread_count_and_budget() {
    // The demo world's hierarchy has clusters, entrances and lengths to compare (dungeon's
    // above is one cluster); the navmesh file holds them, so equal files are equal
    // hierarchies.
    let dir = tempfile::tempdir().unwrap();
    let config = tessera_config::BakeConfig::preset("default").unwrap();
    let runs = bake_variants(
        &tessera_tests::demo_world,
        &config,
        &[
            Variant::tiles(64).run(1, 512 << 20),
            Variant::tiles(64).run(2, 24 << 20),
            Variant::tiles(200).run(2, 64 << 20),
        ],
        dir.path(),
    );
    let file = NavMeshFile::open(runs.bakes[0].1.join("navmesh.tsn")).unwrap();
    let m = file.mesh();
    let h = &m.hierarchy;
    assert!(
        h.clusters.len() >= 10 && h.entrances.len() >= 100,
        "{} clusters, {} entrances",
        h.clusters.len(),
        h.entrances.len()
    );
    // Each cluster is connected within itself (portals and links), and its borders are
    // smoothed: no polygon shares more portal length with a cluster that had room for it
    // (under the 128 a square holds) than with its own.
    let np = m.polys.len() as u32;
    let cluster = |p: u32| h.cluster_of(p) as usize;
    let mut parent: Vec<u32> = (0..np).collect();
    let mut uneven = Vec::new();
    for p in 0..np {
        let ids: Vec<u32> = m.poly_vert_ids(p).collect();
        let mut shared: std::collections::BTreeMap<usize, f32> = Default::default();
        for (k, q) in m.poly_neighbours(p).enumerate() {
            if q == tessera_navmesh::NONE || q >= np {
                continue;
            }
            let (a, b) = (m.vert(ids[k]), m.vert(ids[(k + 1) % ids.len()]));
            *shared.entry(cluster(q)).or_default() += (b[0] - a[0]).hypot(b[1] - a[1]);
            if cluster(q) == cluster(p) {
                tessera_geom::union_find::join(&mut parent, p, q);
            }
        }
        for l in m.poly_links(p) {
            let q = l.to.to_native();
            if q < np && cluster(q) == cluster(p) {
                tessera_geom::union_find::join(&mut parent, p, q);
            }
        }
        let own = shared.get(&cluster(p)).copied().unwrap_or(0.0);
        if shared.iter().any(|(&c, &len)| {
            c != cluster(p) && len > own + 1e-3 && h.clusters[c].polygons.to_native() < 128
        }) {
            uneven.push(p);
        }
    }
    let mut roots = vec![tessera_navmesh::NONE; h.clusters.len()];
    for p in 0..np {
        let r = tessera_geom::union_find::root(&mut parent, p);
        let c = cluster(p);
        assert!(
            roots[c] == tessera_navmesh::NONE || roots[c] == r,
            "cluster {c} is in pieces"
        );
        roots[c] = r;
    }
    assert!(
        uneven.is_empty(),
        "polygons nearer another cluster: {uneven:?}"
    );
}

#[test]
fn a_polygon_setting_change_re_runs_only_the_polygon_stage() {
    let scene = &recast_scenes()[0];
    let input = || tessera_tests::file(scene, tessera_geom::UpAxis::Y);
    let mut config = coarse_config(32);
    let dir = tempfile::tempdir().unwrap();
    bake_columns(input(), &config, dir.path(), 2, 256 << 20);
    // Same settings: everything is reused, the polygon stage included.
    let (again, _) = bake_columns(input(), &config, dir.path(), 2, 256 << 20);
    assert_eq!(
        again.stages_reused,
        ["ingest", "bin", "voxelize", "polygons"]
    );
    // A new simplification tolerance: only the polygons are made again.
    config.polygons.max_error = 0.0;
    let (changed, _) = bake_columns(input(), &config, dir.path(), 2, 256 << 20);
    assert_eq!(changed.stages_reused, ["ingest", "bin", "voxelize"]);
    let fresh = tempfile::tempdir().unwrap();
    bake_columns(input(), &config, fresh.path(), 2, 256 << 20);
    assert!(payload(dir.path()) == payload(fresh.path()));
    // A flipped byte in the navmesh is detected and the file made again, identical.
    let path = dir.path().join("navmesh.tsn");
    let mut bytes = std::fs::read(&path).unwrap();
    let good = bytes.clone();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert!(NavMeshFile::open(&path).is_err());
    let (repaired, _) = bake_columns(input(), &config, dir.path(), 2, 256 << 20);
    assert!(!repaired.stages_reused.contains(&"polygons".to_string()));
    assert!(std::fs::read(&path).unwrap() == good);
}

#[test]
fn reachability_from_a_seed_drops_the_island_and_keeps_both_floors() {
    let mut config = coarse_config(32);
    config.polygons.reachable_from = vec![[17.0, 3.0, 0.0]];
    let dir = tempfile::tempdir().unwrap();
    let scene = tessera_tests::two_storey_building().into_scene("two storeys");
    let (s, _) = bake_columns(scene, &config, dir.path(), 2, 256 << 20);
    assert!(
        s.unreachable_polygons_removed >= 1 && s.unreachable_islands_removed >= 1,
        "{s:?}"
    );
    let file = open(dir.path());
    let m = file.mesh();
    assert!(
        poly_at(m, 17.5, 17.0, 1.5).is_none(),
        "the platform is gone"
    );
    let ground = poly_at(m, 17.0, 3.0, 0.0).unwrap();
    let first = poly_at(m, 5.0, 10.0, 3.0).unwrap();
    let all = reachable(m, ground);
    assert!(
        all[first as usize] && all.iter().all(|&r| r),
        "everything left is reachable"
    );
    check_structure(m, "pruned");
}

#[test]
fn islands_below_the_minimum_area_go_and_a_balcony_reached_by_stairs_stays() {
    // A 20 x 20 m yard; a 3 x 3 m balcony 3 m up with stairs down to the yard; a 3 x 3 m
    // crate 1.5 m high that no agent can climb onto.
    let mut yard = tessera_tests::MeshBuilder::default();
    yard.floor(0.0, 0.0, 20.0, 20.0, 0.0);
    yard.floor(14.0, 8.0, 17.0, 11.0, 3.0);
    for i in 0..15 {
        let x1 = 14.0 - 0.3 * i as f64;
        let z = 3.0 - 0.2 * (i + 1) as f64;
        yard.floor(x1 - 0.3, 8.0, x1, 11.0, z);
        let zt = z + 0.2;
        yard.quad([[x1, 8.0, z], [x1, 11.0, z], [x1, 11.0, zt], [x1, 8.0, zt]]);
    }
    yard.floor(3.0, 14.0, 6.0, 17.0, 1.5);
    let bake = |min_island_area: f64| {
        let mut config = coarse_config(32);
        config.polygons.min_island_area = min_island_area;
        let dir = tempfile::tempdir().unwrap();
        let (s, _) = bake_columns(
            yard.clone().into_scene("yard"),
            &config,
            dir.path(),
            2,
            256 << 20,
        );
        (s, dir)
    };
    let default = tessera_config::BakeConfig::default()
        .polygons
        .min_island_area;
    let (s, dir) = bake(default);
    let file = open(dir.path());
    let m = file.mesh();
    assert_eq!(s.unreachable_islands_removed, 1, "{s:?}");
    assert!(s.unreachable_area_removed_m2 > 0.0 && s.unreachable_area_removed_m2 < 9.0);
    assert!(
        poly_at(m, 4.5, 15.5, 1.5).is_none(),
        "the crate top is gone"
    );
    let balcony = poly_at(m, 15.5, 9.5, 3.0).expect("the balcony stays");
    let ground = poly_at(m, 5.0, 5.0, 0.0).unwrap();
    assert!(reachable(m, ground)[balcony as usize]);
    check_structure(m, "islands dropped");
    // With no minimum the crate top is kept, and the walkable area grows by what was dropped.
    let (kept, dir) = bake(0.0);
    assert_eq!(kept.unreachable_islands_removed, 0);
    assert!(poly_at(open(dir.path()).mesh(), 4.5, 15.5, 1.5).is_some());
    let grown = kept.navmesh_area_m2 - s.navmesh_area_m2;
    assert!(
        (grown - s.unreachable_area_removed_m2).abs() < 1e-3,
        "{grown}"
    );
}

#[test]
fn seeds_that_all_miss_the_mesh_fail_the_bake_and_keep_the_good_navmesh() {
    let mut config = coarse_config(32);
    let dir = tempfile::tempdir().unwrap();
    let scene = || tessera_tests::two_storey_building().into_scene("two storeys");
    bake_columns(scene(), &config, dir.path(), 2, 256 << 20);
    let good = std::fs::read(dir.path().join("navmesh.tsn")).unwrap();
    // Far away, and under the ground (as with the wrong up axis).
    config.polygons.reachable_from = vec![[500.0, 500.0, 0.0], [5.0, -3.0, 10.0]];
    let err = tessera_pipeline::bake(tessera_tests::quiet_request(
        scene(),
        config.clone(),
        dir.path(),
    ))
    .unwrap_err();
    assert!(
        matches!(err, tessera_pipeline::BakeError::NoWalkable(_)),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("reachable_from[0]") && message.contains("reachable_from[1]"),
        "{message}"
    );
    assert!(std::fs::read(dir.path().join("navmesh.tsn")).unwrap() == good);
    // One seed on the mesh is enough: the other is only warned about.
    config.polygons.reachable_from = vec![[500.0, 500.0, 0.0], [17.0, 3.0, 0.0]];
    let (s, _) = bake_columns(scene(), &config, dir.path(), 2, 256 << 20);
    assert!(s.polygons > 0);
}

/// Heights the navmesh gives at seeded random points, against the voxel floor under them:
/// mean and 95th percentile of the difference [m].
fn height_errors(out: &Path) -> (f64, f64, usize) {
    let file = open(out);
    let m = file.mesh();
    let (frame, fields) = tessera_pipeline::read_span_fields(out).unwrap();
    let q = tessera_query::Query::new(m);
    let mut rng = tessera_query::Rng::new(11);
    let mut errors = Vec::new();
    for _ in 0..600 {
        let (poly, p) = q.random_point(&mut rng).unwrap();
        let h = q.height(poly, p).unwrap() as f64;
        let (x, y) = (
            (p[0] as f64 / frame.cell_size).floor() as i32,
            (p[1] as f64 / frame.cell_size).floor() as i32,
        );
        let Some(field) = fields.iter().find(|f| f.core.contains(x, y)) else {
            continue;
        };
        // The walkable floor nearest the navmesh there (the floor this polygon stands on).
        let ground = field
            .column(x, y)
            .iter()
            .filter(|s| s.walkable)
            .map(|s| s.zmax as f64 * frame.cell_height)
            .min_by(|a, b| (a - h).abs().total_cmp(&(b - h).abs()));
        if let Some(g) = ground {
            errors.push((h - g).abs());
        }
    }
    errors.sort_by(f64::total_cmp);
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    (mean, errors[errors.len() * 95 / 100], errors.len())
}

#[test]
fn height_detail_brings_point_heights_to_the_heightfield() {
    // Undulating terrain, one of the Recast scenes: polygons span bumps, so their own
    // triangles miss the ground; with detail the surface follows the voxel floors.
    let scene = recast_scenes()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("undulating"))
        .expect("undulating.obj in tests/data/recast");
    let bake = |sample: f64| {
        let mut config = coarse_config(32);
        config.polygons.detail_sample_distance = sample;
        config.polygons.detail_max_error = 0.1;
        let dir = tempfile::tempdir().unwrap();
        let input = tessera_tests::file(&scene, tessera_geom::UpAxis::Y);
        let (s, _) = bake_columns(input, &config, dir.path(), 2, 256 << 20);
        (s, height_errors(dir.path()), dir)
    };
    let (plain, (mean0, p95_0, n0), _d0) = bake(0.0);
    let (detailed, (mean1, p95_1, n1), d1) = bake(0.8);
    assert!(n0 > 500 && n1 > 500);
    // Detail changes heights only: the same polygons.
    assert_eq!(plain.polygons, detailed.polygons);
    assert!(!open(d1.path()).mesh().detail_verts.is_empty());
    assert_eq!(
        detailed.detail_vertices,
        open(d1.path()).mesh().detail_verts.len() as u64
    );
    assert_eq!(plain.detail_vertices, 0);
    assert!(
        mean1 < 0.7 * mean0,
        "mean height error {mean1:.3} m with detail vs {mean0:.3} m without"
    );
    // Within the tolerance plus a voxel of quantisation for nearly every point.
    assert!(
        p95_1 <= 0.1 + 0.1 + 1e-6,
        "p95 {p95_1:.3} m (without detail {p95_0:.3} m)"
    );
}

/// Seed 002's Table 1, second column: cells per notch with portal removal, on floor plans of
/// 15 to 106 notches.
const TABLE_1_WITH_REMOVAL: f64 = 0.71;

#[test]
fn notch_groups_add_up_and_portal_removal_only_takes_cells_away() {
    let (mut big_polygons, mut big_notches) = (0, 0);
    for scene in recast_scenes() {
        let what = scene.display().to_string();
        let input = || tessera_tests::file(&scene, tessera_geom::UpAxis::Y);
        let mut config = coarse_config(64);
        // The notch groups count the partition as made, before islands are dropped.
        config.polygons.min_island_area = 0.0;
        let dir = tempfile::tempdir().unwrap();
        let (s, _) = bake_columns(input(), &config, dir.path(), 2, 256 << 20);
        let g = &s.by_notches;
        let sum = |f: fn(&tessera_pipeline::NotchGroup) -> u64| g.iter().map(f).sum::<u64>();
        assert_eq!(sum(|g| g.regions), s.regions, "{what}");
        assert_eq!(sum(|g| g.polygons), s.polygons, "{what}");
        assert_eq!(sum(|g| g.notches), s.notches, "{what}");
        // A region without a notch is one polygon; one with a notch needs two at least
        // (strict convexity: tau is 0).
        assert_eq!(g[0].polygons, g[0].regions, "{what}");
        for group in &g[1..] {
            let last = group.max_notches.unwrap_or(u64::MAX);
            assert!(group.notches >= group.min_notches * group.regions, "{what}");
            assert!(
                group.notches <= last.saturating_mul(group.regions),
                "{what}"
            );
            assert!(group.polygons >= 2 * group.regions, "{what}");
        }
        let big = g.last().unwrap();
        assert_eq!(big.min_notches, 15);
        big_polygons += big.polygons;
        big_notches += big.notches;
        // Without portal removal: only the polygon stage runs again, the same notches, at
        // least as many cells, still convex and symmetric.
        config.polygons.portal_removal = false;
        let (kept, _) = bake_columns(input(), &config, dir.path(), 2, 256 << 20);
        assert_eq!(kept.stages_reused, ["ingest", "bin", "voxelize"], "{what}");
        assert_eq!(kept.notches, s.notches, "{what}");
        assert!(kept.polygons >= s.polygons, "{what}");
        check_structure(open(dir.path()).mesh(), &what);
    }
    // Regions the size of the paper's floor plans, over the three scenes.
    let ratio = big_polygons as f64 / big_notches as f64;
    println!("regions with 15+ notches: {big_polygons} cells / {big_notches} notches = {ratio:.3}");
    assert!(big_notches >= 200, "{big_notches}");
    assert!(ratio < TABLE_1_WITH_REMOVAL, "{ratio:.3}");
}

#[test]
fn temporary_files_a_killed_bake_left_are_removed_by_the_next_one() {
    let scene = &recast_scenes()[1];
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    // Process 4999999 cannot exist (Linux's pid_max is at most 2^22).
    let stale = [
        dir.path().join(".navmesh.tsn.4999999.tmp"),
        dir.path().join("work/.tiles.pack.4999999.tmp"),
    ];
    for p in &stale {
        std::fs::write(p, b"half a file").unwrap();
    }
    let input = tessera_tests::file(scene, tessera_geom::UpAxis::Y);
    bake_columns(input, &coarse_config(64), dir.path(), 2, 256 << 20);
    for p in &stale {
        assert!(!p.exists(), "{} was left behind", p.display());
    }
}
