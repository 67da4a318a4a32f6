//! Queries on hand-made meshes whose answers are known exactly.

mod common;

use common::{centre_line, frame, l_corridor, length, Builder};
use tessera_query::{Query, Rng};

const START: [f32; 3] = [1.0, 1.0, 0.0];
const END: [f32; 3] = [9.0, 9.0, 0.0];

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-9)
}

#[test]
fn l_corridor_path_bends_at_the_inner_corner_with_the_analytic_length() {
    let bytes = l_corridor().bytes(frame());
    let q = Query::new(bytes.mesh());
    let c = q.find_path(0, START, 5, END);
    assert!(c.found);
    assert_eq!(c.polys.first(), Some(&0));
    assert_eq!(c.polys.last(), Some(&5));
    let pts = q.straight_path(START, END, &c.polys);
    assert_eq!(pts, vec![START, [8.0, 2.0, 0.0], END]);
    let want = 2.0 * 50f64.sqrt(); // (1,1) -> (8,2) -> (9,9)
    assert!(close(length(&pts), want, 1e-4), "{}", length(&pts));

    // The same through `path`, in scene coordinates (the frame's origin is added back).
    let o = frame().origin;
    let scene = |p: [f32; 3]| [p[0] as f64 + o[0], p[1] as f64 + o[1], p[2] as f64 + o[2]];
    let a = q.path(scene([1.0, 1.0, 0.5]), scene([9.0, 9.0, 1.0]));
    assert!(a.found);
    assert!(close(a.length, want, 1e-4), "{}", a.length);
    assert_eq!(a.waypoints.len(), 3);
    let corner = scene([8.0, 2.0, 0.0]);
    assert!(a.waypoints[1]
        .iter()
        .zip(corner)
        .all(|(w, c)| (w - c).abs() < 1e-6));
}

#[test]
fn path_works_in_a_y_up_scene() {
    let mut f = frame();
    f.up = b'y';
    let bytes = l_corridor().bytes(f.clone());
    let q = Query::new(bytes.mesh());
    let a = q.path(f.to_scene(START), f.to_scene(END));
    assert!(a.found);
    assert!(close(a.length, 2.0 * 50f64.sqrt(), 1e-4), "{}", a.length);
    // Scene Y is up: every waypoint is at the floor's scene height, origin z.
    assert!(a
        .waypoints
        .iter()
        .all(|w| (w[1] - f.origin[2]).abs() < 1e-6));
    let back = f.to_internal(a.waypoints[1]);
    assert!((back[0] - 8.0).abs() < 1e-4 && (back[1] - 2.0).abs() < 1e-4);
}

#[test]
fn straight_path_is_no_longer_than_the_centre_line() {
    let bytes = l_corridor().bytes(frame());
    let q = Query::new(bytes.mesh());
    for (s, e) in [
        (START, END),
        ([0.5, 1.9, 0.0], [9.9, 2.5, 0.0]),
        ([9.0, 9.0, 0.0], [0.2, 0.2, 0.0]),
        ([2.0, 0.5, 0.0], [6.0, 1.5, 0.0]),
    ] {
        let (sp, s) = q.nearest(s, [0.5, 0.5, 1.0]).unwrap();
        let (ep, e) = q.nearest(e, [0.5, 0.5, 1.0]).unwrap();
        let c = q.find_path(sp, s, ep, e);
        assert!(c.found);
        let straight = length(&q.straight_path(s, e, &c.polys));
        let centre = length(&centre_line(&q, s, e, &c.polys));
        assert!(straight <= centre + 1e-5, "{straight} > {centre}");
        let direct = length(&[s, e]);
        assert!(straight >= direct - 1e-5);
    }
}

#[test]
fn every_straight_path_segment_raycasts_clear() {
    let bytes = l_corridor().bytes(frame());
    let q = Query::new(bytes.mesh());
    for (s, e) in [
        (START, END),
        (END, START),
        ([0.5, 0.2, 0.0], [8.1, 9.9, 0.0]),
    ] {
        let (sp, s) = q.nearest(s, [0.5, 0.5, 1.0]).unwrap();
        let (ep, e) = q.nearest(e, [0.5, 0.5, 1.0]).unwrap();
        let pts = q.straight_path(s, e, &q.find_path(sp, s, ep, e).polys);
        assert!(pts.len() >= 3, "the path bends: {pts:?}");
        for w in pts.windows(2) {
            let (poly, _) = q.nearest(w[0], [0.01, 0.01, 0.01]).unwrap();
            let r = q.raycast(poly, w[0], w[1]);
            assert_eq!(r.t, 1.0, "segment {:?} -> {:?}: {r:?}", w[0], w[1]);
            assert_eq!(r.hit_edge_normal, None);
        }
    }
}

#[test]
fn a_raycast_into_a_wall_stops_where_it_leaves_the_mesh() {
    let bytes = l_corridor().bytes(frame());
    let q = Query::new(bytes.mesh());
    // North from (1, 1): the wall at y = 2 is a quarter of the way to (1, 5).
    let r = q.raycast(0, [1.0, 1.0, 0.0], [1.0, 5.0, 0.0]);
    assert!((r.t - 0.25).abs() < 1e-6, "{r:?}");
    assert_eq!(r.polys, vec![0]);
    assert_eq!(r.hit_edge_normal, Some([0.0, 1.0]));
    // East along y = 1 through four polygons to the wall at x = 10: 8 of 10 m.
    let r = q.raycast(0, [2.0, 1.0, 0.0], [12.0, 1.0, 0.0]);
    assert!((r.t - 0.8).abs() < 1e-6, "{r:?}");
    assert_eq!(r.polys, vec![0, 1, 3, 2]);
    assert_eq!(r.hit_edge_normal, Some([1.0, 0.0]));
    // Cutting the inner corner: from (6, 1) towards (9, 4), out through the top of polygon 1
    // at y = 2, a third of the way.
    let r = q.raycast(1, [6.0, 1.0, 0.0], [9.0, 4.0, 0.0]);
    assert!((r.t - 1.0 / 3.0).abs() < 1e-6, "{r:?}");
    assert_eq!(r.hit_edge_normal, Some([0.0, 1.0]));
    // A clear diagonal in the corner square ends at t = 1.
    let r = q.raycast(3, [8.5, 1.5, 0.0], [9.5, 5.0, 0.0]);
    assert_eq!(r.t, 1.0);
    assert_eq!(r.polys, vec![3, 4]);
    // A start outside its polygon: t = 0.
    assert_eq!(q.raycast(0, [5.0, 1.0, 0.0], [6.0, 1.0, 0.0]).t, 0.0);
}

#[test]
fn an_island_is_unreachable() {
    let mut b = l_corridor();
    let island = b.rect(20, 0, 22, 2, 0, 3);
    let bytes = b.bytes(frame());
    let q = Query::new(bytes.mesh());
    // Another connected component: answered from the file's component ids, with nothing
    // searched (issue 17): the corridor is the start polygon alone.
    let mesh = bytes.mesh();
    let component = |p: u32| mesh.polys[p as usize].component.to_native();
    assert_ne!(component(0), component(island));
    assert_eq!(mesh.components.len(), 2);
    let c = q.find_path(0, START, island, [21.0, 1.0, 0.0]);
    assert!(!c.found);
    assert_eq!(c.polys, vec![0], "{c:?}");
    // The same before either search, hierarchical (the default) or flat.
    let flat = tessera_query::Planner::Flat;
    assert_eq!(
        q.find_path_with(0, START, island, [21.0, 1.0, 0.0], flat),
        c
    );
    let o = frame().origin;
    let a = q.path(
        [1.0 + o[0], 1.0 + o[1], o[2]],
        [21.0 + o[0], 1.0 + o[1], o[2]],
    );
    assert!(!a.found);
    assert_eq!(a.length, 0.0);
    assert!(a.waypoints.is_empty());
    // An end nowhere near the mesh is not found either.
    assert!(
        !q.path([o[0] + 50.0, o[1], o[2]], [o[0] + 1.0, o[1] + 1.0, o[2]])
            .found
    );
}

/// Two floors side by side (x 0..4 and 4..8), the second 5 m up: too high for a portal, joined
/// only by a link over y 3..4 of their common edge.
fn two_floors(linked: bool) -> Builder {
    let mut b = Builder::new();
    let a = b.rect(0, 0, 4, 4, 0, 0);
    let c = b.rect(4, 0, 8, 4, 20, 1);
    if linked {
        b.link(a, c, [4, 3], [4, 4], 0, 20);
    }
    b
}

#[test]
fn a_link_joins_two_floors_and_the_path_uses_it() {
    let bytes = two_floors(false).bytes(frame());
    let q = Query::new(bytes.mesh());
    assert_eq!(q.mesh().stats.portals, 0);
    assert!(!q.find_path(0, [1.0, 1.0, 0.0], 1, [7.0, 1.0, 5.0]).found);

    let bytes = two_floors(true).bytes(frame());
    let q = Query::new(bytes.mesh());
    let c = q.find_path(0, [1.0, 1.0, 0.0], 1, [7.0, 1.0, 5.0]);
    assert!(c.found);
    assert_eq!(c.polys, vec![0, 1]);
    let path = q.straight_path_with_links([1.0, 1.0, 0.0], [7.0, 1.0, 5.0], &c.polys);
    // Bends at the link's near end, and steps up there from the lower floor's height to the
    // upper one's (the link's two segments meet in plan).
    let pts = path.points;
    assert_eq!(
        pts,
        vec![
            [1.0, 1.0, 0.0],
            [4.0, 3.0, 0.0],
            [4.0, 3.0, 5.0],
            [7.0, 1.0, 5.0]
        ]
    );
    assert_eq!(path.links, vec![1]);
    let want = 2.0 * 13f64.sqrt() + 5.0;
    assert!(close(length(&pts), want, 1e-6));
    let o = frame().origin;
    let a = q.path(
        [1.0 + o[0], 1.0 + o[1], o[2]],
        [7.0 + o[0], 1.0 + o[1], 5.0 + o[2]],
    );
    assert!(a.found && close(a.length, want, 1e-6), "{a:?}");
    assert_eq!(a.links, vec![1]);

    // A ray crosses the link where its segment is, and only there.
    let r = q.raycast(0, [1.0, 3.5, 0.0], [7.0, 3.5, 0.0]);
    assert_eq!((r.t, r.polys.clone()), (1.0, vec![0, 1]), "{r:?}");
    let r = q.raycast(0, [1.0, 1.0, 0.0], [7.0, 1.0, 0.0]);
    assert!(
        (r.t - 0.5).abs() < 1e-6 && r.hit_edge_normal == Some([1.0, 0.0]),
        "{r:?}"
    );
}

#[test]
fn a_path_answer_serializes_as_the_cli_and_viewer_print_it() {
    let bytes = two_floors(true).bytes(frame());
    let q = Query::new(bytes.mesh());
    let o = frame().origin;
    let found = q.path(
        [1.0 + o[0], 1.0 + o[1], o[2]],
        [7.0 + o[0], 1.0 + o[1], 5.0 + o[2]],
    );
    let missing = q.path([1e6, 1e6, 0.0], [7.0 + o[0], 1.0 + o[1], 5.0 + o[2]]);
    assert!(found.found && !found.links.is_empty() && !missing.found);
    for a in [found, missing] {
        // The form `tessera path --json` printed before the answer was serializable: keys in
        // serde_json's (sorted) map order, numbers as serde_json writes them.
        let before = serde_json::json!({
            "found": a.found,
            "length": a.length,
            "link_names": a.link_names,
            "waypoints": a.waypoints,
            "links": a.links,
        })
        .to_string();
        assert_eq!(serde_json::to_string(&a).unwrap(), before);
    }
    let missing = serde_json::to_string(&tessera_query::PathAnswer::default()).unwrap();
    assert_eq!(
        missing,
        r#"{"found":false,"length":0.0,"link_names":[],"links":[],"waypoints":[]}"#
    );
}

/// A 4 x 3 rectangle (area 12) and a triangle of area 4 beside it.
fn three_to_one() -> Builder {
    let mut b = Builder::new();
    b.rect(0, 0, 4, 3, 0, 0);
    b.poly(&[[4, 0, 4], [8, 0, 4], [4, 2, 4]], 1);
    b
}

#[test]
fn random_points_are_seeded_on_the_mesh_and_area_weighted() {
    let bytes = three_to_one().bytes(frame());
    let q = Query::new(bytes.mesh());
    let sample = |seed| {
        let mut rng = Rng::new(seed);
        (0..4000)
            .map(|_| q.random_point(&mut rng).unwrap())
            .collect::<Vec<_>>()
    };
    let pts = sample(42);
    assert_eq!(pts, sample(42), "same seed, same points");
    assert_ne!(pts, sample(43));
    for &(poly, p) in &pts {
        let h = q
            .height(poly, p)
            .unwrap_or_else(|| panic!("{p:?} is not on polygon {poly}"));
        assert!((h - p[2]).abs() < 1e-5);
    }
    let on_rect = pts.iter().filter(|p| p.0 == 0).count() as f64 / pts.len() as f64;
    assert!((on_rect - 0.75).abs() < 0.05, "{on_rect}");
    // Uniform inside a polygon too: half of the rectangle lies below y = 1.5.
    let rect: Vec<_> = pts.iter().filter(|p| p.0 == 0).collect();
    let low = rect.iter().filter(|p| p.1[1] < 1.5).count() as f64 / rect.len() as f64;
    assert!((low - 0.5).abs() < 0.05, "{low}");
    // The triangle's third nearest its right angle (x < 4 + 4/3 ... by area: 5/9 of it).
    let tri: Vec<_> = pts.iter().filter(|p| p.0 == 1).collect();
    let near = tri.iter().filter(|p| p.1[0] < 4.0 + 4.0 / 3.0).count() as f64 / tri.len() as f64;
    assert!((near - 5.0 / 9.0).abs() < 0.07, "{near}");

    let mut rng = Rng::new(7);
    assert!((0..1000)
        .map(|_| rng.next_f32())
        .all(|v| (0.0..1.0).contains(&v)));
}

#[test]
fn nearest_snaps_to_the_floor_below_and_picks_the_closer_of_two() {
    let mut b = Builder::new();
    b.rect(0, 0, 4, 4, 0, 0); // floor at 0 m
    b.rect(0, 0, 4, 4, 16, 1); // floor at 4 m
    let bytes = b.bytes(frame());
    let q = Query::new(bytes.mesh());
    let ext = [1.0, 1.0, 3.0];
    assert_eq!(q.nearest([2.0, 2.0, 1.0], ext), Some((0, [2.0, 2.0, 0.0])));
    assert_eq!(q.nearest([2.0, 2.0, 3.0], ext), Some((1, [2.0, 2.0, 4.0])));
    // Half-way: equally near, the smaller id.
    assert_eq!(q.nearest([2.0, 2.0, 2.0], ext), Some((0, [2.0, 2.0, 0.0])));
    // Beside the floors: the nearest boundary point.
    assert_eq!(q.nearest([4.5, 1.0, 0.2], ext), Some((0, [4.0, 1.0, 0.0])));
    // Nothing within the box.
    assert_eq!(q.nearest([2.0, 2.0, 8.0], ext), None);
    assert_eq!(q.nearest([9.0, 2.0, 0.0], ext), None);
    assert_eq!(q.nearest([f32::NAN, 2.0, 0.0], ext), None);
}

#[test]
fn heights_come_from_the_detail_triangles() {
    let mut b = Builder::new();
    // A ramp rising 2 m over 4 m northwards, and a flat square east of it.
    b.poly(&[[0, 0, 0], [4, 0, 0], [4, 4, 8], [0, 4, 8]], 0);
    b.rect(4, 0, 8, 4, 0, 1);
    let bytes = b.bytes(frame());
    let q = Query::new(bytes.mesh());
    assert_eq!(q.height(0, [1.0, 2.0, 99.0]), Some(1.0));
    assert_eq!(q.height(0, [0.0, 4.0, 0.0]), Some(2.0));
    assert_eq!(q.height(0, [5.0, 2.0, 0.0]), None);
    assert_eq!(q.height(7, [1.0, 2.0, 0.0]), None);
    // Straight-path ends take the surface height, wherever the caller's z was.
    let pts = q.straight_path([1.0, 3.0, 10.0], [1.0, 1.0, -3.0], &[0]);
    assert_eq!(pts, vec![[1.0, 3.0, 1.5], [1.0, 1.0, 0.5]]);
}

#[test]
fn bad_input_gives_empty_answers() {
    let bytes = l_corridor().bytes(frame());
    let q = Query::new(bytes.mesh());
    assert!(!q.find_path(99, START, 0, END).found);
    assert!(!q.find_path(0, [f32::NAN; 3], 0, END).found);
    assert!(q.straight_path(START, END, &[]).is_empty());
    assert!(q.straight_path(START, END, &[0, 99]).is_empty());
    assert_eq!(q.raycast(99, START, END).t, 0.0);
    // Not connected: the corridor is cut before the gap, and the end moved onto what is left.
    assert_eq!(
        q.straight_path(START, END, &[0, 5]),
        vec![START, [4.0, 2.0, 0.0]]
    );
    let single = q.find_path(0, START, 0, [3.0, 1.0, 0.0]);
    assert_eq!((single.polys, single.found), (vec![0], true));
}

/// A 4 x 2 rectangle over two 2 x 2 squares, its bottom side split at (2, 0) so that it has
/// two collinear edges, each with its own square across; and east of it a 4 x 2 rectangle
/// whose shared side is split by a vertex on both sides.
fn collinear() -> Builder {
    let mut b = Builder::new();
    b.poly(
        &[
            [0, 0, 0],
            [2, 0, 0],
            [4, 0, 0],
            [4, 1, 0],
            [4, 2, 0],
            [0, 2, 0],
        ],
        0,
    ); // 0
    b.rect(0, -2, 2, 0, 0, 0); // 1
    b.rect(2, -2, 4, 0, 0, 0); // 2
    b.poly(&[[4, 0, 0], [8, 0, 0], [8, 2, 0], [4, 2, 0], [4, 1, 0]], 0); // 3
    b
}

#[test]
fn collinear_edges_are_told_apart_by_where_the_ray_crosses() {
    let bytes = collinear().bytes(frame());
    let q = Query::new(bytes.mesh());
    // Down through the right half of the split side: into square 2, not square 1.
    let r = q.raycast(0, [3.0, 1.0, 0.0], [3.8, -1.0, 0.0]);
    assert_eq!((r.t, r.polys), (1.0, vec![0, 2]));
    let r = q.raycast(0, [1.0, 1.0, 0.0], [0.5, -1.0, 0.0]);
    assert_eq!((r.t, r.polys), (1.0, vec![0, 1]));
    // From the split vertex itself, down-right.
    let r = q.raycast(0, [2.0, 0.0, 0.0], [3.0, -1.5, 0.0]);
    assert_eq!(r.t, 1.0, "{r:?}");
}

#[test]
fn a_side_split_by_a_vertex_is_one_portal() {
    let bytes = collinear().bytes(frame());
    let q = Query::new(bytes.mesh());
    // Both halves of x = 4, y 0..2 join polygons 0 and 3: the portal is the whole side.
    assert_eq!(q.portal(0, 3), Some(([4.0, 2.0, 0.0], [4.0, 0.0, 0.0])));
    assert_eq!(q.portal(3, 0), Some(([4.0, 0.0, 0.0], [4.0, 2.0, 0.0])));
    // So a path across it near the top is straight.
    let (s, e) = ([0.5, 0.2, 0.0], [7.5, 1.9, 0.0]);
    let c = q.find_path(0, s, 3, e);
    assert_eq!(q.straight_path(s, e, &c.polys), vec![s, e]);
}

#[test]
fn one_query_answers_from_many_threads_as_from_one() {
    // Issue 17, crowds: `Query` is shared by threads (each search keeps its buffers in a
    // thread-local), and answers the same on any of them.
    fn shared<T: Sync>(_: &T) {}
    let bytes = l_corridor().bytes(frame());
    let q = Query::new(bytes.mesh());
    shared(&q);
    let one = q.find_path(0, START, 5, END);
    let answers: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    (0..50)
                        .map(|_| q.find_path(0, START, 5, END))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(answers.iter().all(|c| c.polys == one.polys && c.found));
}
