//! Queries in scene coordinates (the C API's and the Python package's), checked against the
//! internal-frame queries they stand on, and a navmesh file opened with its queries.

mod common;

use common::{frame, l_corridor, Builder};
use tessera_query::{Query, QueryFile, Rng};

fn near(a: [f64; 3], b: [f64; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() < 1e-5)
}

#[test]
fn a_scene_raycast_in_a_y_up_scene_names_the_wall_in_scene_axes() {
    let mut f = frame();
    f.up = b'y';
    let bytes = l_corridor().bytes(f.clone());
    let q = Query::new(bytes.mesh());
    // North from (1, 1) (internal): the wall at y = 2 a quarter of the way to (1, 5).
    let r = q
        .raycast_scene(f.to_scene([1.0, 1.0, 0.0]), f.to_scene([1.0, 5.0, 0.0]))
        .expect("the start is on the mesh");
    assert!(r.hit);
    assert!((r.t - 0.25).abs() < 1e-6, "{r:?}");
    assert!(near(r.point, f.to_scene([1.0, 2.0, 0.0])), "{r:?}");
    // Internal +y is scene -z when y is up.
    assert_eq!(r.normal, Some([0.0, 0.0, -1.0]));
    assert_eq!(r.polygons, vec![0]);
    // A clear walk reaches its end, at the surface's height.
    let r = q
        .raycast_scene(f.to_scene([2.0, 1.0, 1.0]), f.to_scene([7.0, 1.5, 1.0]))
        .unwrap();
    assert!(!r.hit && r.t == 1.0 && r.normal.is_none(), "{r:?}");
    assert!(near(r.point, f.to_scene([7.0, 1.5, 0.0])), "{r:?}");
    assert_eq!(r.polygons, vec![0, 1]);
    // A start off the mesh is no walk.
    assert!(q
        .raycast_scene(f.to_scene([5.0, 30.0, 0.0]), f.to_scene([1.0, 1.0, 0.0]))
        .is_none());
}

#[test]
fn a_route_is_the_path_answer_with_its_corridor() {
    let bytes = l_corridor().bytes(frame());
    let q = Query::new(bytes.mesh());
    let f = frame();
    let (a, b) = (f.to_scene([1.0, 1.0, 0.0]), f.to_scene([9.0, 9.0, 0.0]));
    let route = q.route(a, b);
    assert_eq!(route.answer, q.path(a, b));
    assert!(route.answer.found);
    let (sp, s) = q.nearest(f.to_internal(a), q.snap_extent()).unwrap();
    let (ep, e) = q.nearest(f.to_internal(b), q.snap_extent()).unwrap();
    assert_eq!(route.corridor, q.find_path(sp, s, ep, e).polys);
    assert_eq!(route.corridor.first(), Some(&0));
    assert_eq!(route.corridor.last(), Some(&5));
    // An end off the mesh: no answer, no corridor.
    let off = q.route(a, f.to_scene([30.0, 30.0, 0.0]));
    assert!(!off.answer.found && off.corridor.is_empty());
}

#[test]
fn the_surface_under_a_point_is_the_floor_nearest_its_height() {
    let mut b = Builder::new();
    b.rect(0, 0, 4, 4, 0, 0); // ground
    b.rect(0, 0, 4, 4, 12, 1); // a floor 3 m above it (heights in quarter metres)
    let f = frame();
    let bytes = b.bytes(f.clone());
    let q = Query::new(bytes.mesh());
    let low = q.surface_scene(f.to_scene([1.0, 1.0, 0.4])).unwrap();
    assert!(near(low.point, f.to_scene([1.0, 1.0, 0.0])), "{low:?}");
    let high = q.surface_scene(f.to_scene([1.0, 1.0, 2.8])).unwrap();
    assert!(near(high.point, f.to_scene([1.0, 1.0, 3.0])), "{high:?}");
    assert_ne!(low.polygon, high.polygon);
    // Beyond the agent's height from any floor, or off the plan of every polygon: none.
    assert!(q.surface_scene(f.to_scene([1.0, 1.0, 9.0])).is_none());
    assert!(q.surface_scene(f.to_scene([5.0, 1.0, 0.0])).is_none());
    assert!(q.surface_scene([f64::NAN, 0.0, 0.0]).is_none());
}

#[test]
fn nearest_and_random_points_in_scene_coordinates_match_the_internal_queries() {
    let bytes = l_corridor().bytes(frame());
    let q = Query::new(bytes.mesh());
    let f = frame();
    let p = f.to_scene([5.0, 3.0, 0.0]);
    // 1 m north of the corridor: found within the default box, not within a 0.5 m one.
    let n = q.nearest_scene(p, None).unwrap();
    assert!(near(n.point, f.to_scene([5.0, 2.0, 0.0])), "{n:?}");
    assert_eq!(n.polygon, 1);
    assert!(q.nearest_scene(p, Some([0.5, 0.5, 0.5])).is_none());
    let (mut a, mut b) = (Rng::new(7), Rng::new(7));
    for _ in 0..20 {
        let (poly, internal) = q.random_point(&mut a).unwrap();
        let scene = q.random_scene(&mut b).unwrap();
        assert_eq!((scene.polygon, scene.point), (poly, q.to_scene(internal)));
    }
}

#[test]
fn a_query_file_opens_validates_and_answers_from_any_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.tsn");
    let mesh = tessera_navgraph::build(frame(), &l_corridor().input).unwrap();
    std::fs::write(&path, tessera_navmesh::encode(&mesh)).unwrap();
    let opened = std::sync::Arc::new(QueryFile::open(&path).unwrap());
    let f = frame();
    let (a, b) = (f.to_scene([1.0, 1.0, 0.0]), f.to_scene([9.0, 9.0, 0.0]));
    let here = opened.query().path(a, b);
    let there = {
        let opened = std::sync::Arc::clone(&opened);
        std::thread::spawn(move || opened.query().path(a, b))
            .join()
            .unwrap()
    };
    assert!(here.found);
    assert_eq!(here, there);
    assert_eq!(opened.file().path(), path);
    // A corrupt file is refused, as NavMeshFile refuses it.
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    assert!(QueryFile::open(&path).is_err());
}
