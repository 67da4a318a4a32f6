//! Paths that take stair links: two floors at different heights, a plan gap between them that
//! no shared edge covers, and a link each way whose segments face each other across the gap.

mod common;

use common::{centre_line, frame, length, Builder};
use tessera_query::{Query, StraightPath};

/// The lower floor (height 0): polygons 0 (x 0..4) and 1 (x 4..8) over y 0..4, and a north arm
/// 2 (x 0..4, y 4..10). The upper floor (height 0.5 m, within the climb): polygons 3 (x 9..13)
/// and 4 (x 13..17) over y 0..4. A 1 m gap at x 8..9; the link joins 1 and 3 over y 1..3, its
/// segment on x = 8 on the lower side and on x = 9 on the upper side.
fn stair_gap() -> Builder {
    let mut b = Builder::new();
    let low = b.rect(0, 0, 4, 4, 0, 0);
    let edge = b.rect(4, 0, 8, 4, 0, 0);
    b.rect(0, 4, 4, 10, 0, 0);
    let up = b.rect(9, 0, 13, 4, 2, 1);
    b.rect(13, 0, 17, 4, 2, 1);
    assert_eq!((low, edge, up), (0, 1, 3));
    // Facing edges run opposite ways: north along x = 8, south along x = 9.
    b.link_across(edge, up, [[8, 1, 0], [8, 3, 0]], [[9, 3, 2], [9, 1, 2]]);
    b
}

const STEP: f32 = 0.5;

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-9)
}

fn near(a: [f32; 3], b: [f32; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() < 1e-5)
}

/// The straight path from `s` to `e` (both snapped), and its corridor.
fn pull(q: &Query, s: [f32; 3], e: [f32; 3]) -> (StraightPath, Vec<u32>) {
    let ext = [0.5, 0.5, 1.0];
    let (sp, s) = q.nearest(s, ext).expect("start on the mesh");
    let (ep, e) = q.nearest(e, ext).expect("end on the mesh");
    let c = q.find_path(sp, s, ep, e);
    assert!(c.found, "{s:?} -> {e:?}");
    (q.straight_path_with_links(s, e, &c.polys), c.polys)
}

/// Every segment but the marked link crossings raycasts clear; the crossings do not (the gap
/// is off the mesh).
fn check_on_mesh(q: &Query, path: &StraightPath) {
    for (i, w) in path.points.windows(2).enumerate() {
        let (poly, _) = q.nearest(w[0], [0.01, 0.01, 0.01]).unwrap();
        let r = q.raycast(poly, w[0], w[1]);
        if path.links.contains(&i) {
            assert!(
                r.t < 1.0,
                "the crossing {:?} -> {:?} is on the mesh",
                w[0],
                w[1]
            );
        } else {
            assert_eq!(r.t, 1.0, "segment {i} {:?} -> {:?}: {r:?}", w[0], w[1]);
        }
    }
}

/// Pulls the path from `s` to `e` and checks it against the expected waypoints and crossings:
/// on the mesh but for the steps, its length that of `want`, and no longer than the corridor's
/// centre line. Returns it with its corridor.
fn expect_path(
    q: &Query,
    s: [f32; 3],
    e: [f32; 3],
    want: &[[f32; 3]],
    links: &[usize],
) -> (StraightPath, Vec<u32>) {
    let (path, corridor) = pull(q, s, e);
    assert_eq!(path.points.len(), want.len(), "{path:?}");
    assert!(
        path.points.iter().zip(want).all(|(a, b)| near(*a, *b)),
        "{path:?}"
    );
    assert_eq!(path.links, links);
    check_on_mesh(q, &path);
    let len = length(&path.points);
    assert!(close(len, length(want), 1e-5), "{len}");
    let centre = length(&centre_line(q, s, e, &corridor));
    assert!(len <= centre + 1e-5, "{len} > centre line {centre}");
    (path, corridor)
}

#[test]
fn a_path_aligned_with_the_link_steps_straight_across_with_the_optimal_length() {
    let bytes = stair_gap().bytes(frame());
    let q = Query::new(bytes.mesh());
    assert_eq!(q.mesh().stats.links, 2);
    let (s, e) = ([2.0, 2.0, 0.0], [15.0, 2.0, STEP]);
    // The crossing on the lower side, the landing on the upper side, each at its height.
    let want_pts = [s, [8.0, 2.0, 0.0], [9.0, 2.0, STEP], e];
    let (path, corridor) = expect_path(&q, s, e, &want_pts, &[1]);
    assert_eq!(corridor, vec![0, 1, 3, 4]);
    assert_eq!(path.points, want_pts);
    // The optimum: 6 m on each floor and the step, 1 m across and 0.5 m up.
    let want = 12.0 + (1.0f64 + 0.25).sqrt();
    assert!(
        close(length(&path.points), want, 1e-3),
        "{}",
        length(&path.points)
    );
    // And back down: the same points the other way round, the crossing now on the upper side.
    let (back, _) = pull(&q, e, s);
    let mut rev = path.points.clone();
    rev.reverse();
    assert_eq!(back.points, rev);
    assert_eq!(back.links, vec![1]);
    check_on_mesh(&q, &back);

    // `path`, in scene coordinates: the same waypoints, the link marked, the step counted.
    let o = frame().origin;
    let scene = |p: [f32; 3]| [0, 1, 2].map(|k| p[k] as f64 + o[k]);
    let a = q.path(scene(s), scene(e));
    assert!(a.found);
    assert_eq!(a.links, vec![1]);
    assert_eq!(a.waypoints.len(), 4);
    assert!(close(a.length, want, 1e-3), "{}", a.length);
    for (w, p) in a.waypoints.iter().zip(&path.points) {
        assert!(w.iter().zip(scene(*p)).all(|(w, c)| (w - c).abs() < 1e-6));
    }
}

#[test]
fn a_slanted_path_crosses_the_gap_on_its_straight_line() {
    let bytes = stair_gap().bytes(frame());
    let q = Query::new(bytes.mesh());
    // In plan the line from (1, 3.5) to (16, 0.5) meets x = 8 at y 2.1 and x = 9 at y 1.9,
    // both inside the link: no corner.
    let (s, e) = ([1.0, 3.5, 0.0], [16.0, 0.5, STEP]);
    let want_pts = [s, [8.0, 2.1, 0.0], [9.0, 1.9, STEP], e];
    let (path, _) = expect_path(&q, s, e, &want_pts, &[1]);
    let leg = (49.0f64 + 1.4 * 1.4).sqrt();
    let want = 2.0 * leg + (1.0f64 + 0.04 + 0.25).sqrt();
    assert!(
        close(length(&path.points), want, 1e-3),
        "{}",
        length(&path.points)
    );
}

#[test]
fn a_path_round_a_corner_bends_at_the_link_end() {
    let bytes = stair_gap().bytes(frame());
    let q = Query::new(bytes.mesh());
    // From the north arm: round the inner corner (4, 4), then the line to the end would pass
    // x = 8 above the link, so it bends at the link's north end (8, 3), and lands where the
    // line from there to the end meets x = 9: y = 3 - 1/8.
    let (s, e) = ([2.0, 9.0, 0.0], [16.0, 2.0, STEP]);
    let want_pts = [s, [4.0, 4.0, 0.0], [8.0, 3.0, 0.0], [9.0, 2.875, STEP], e];
    let (_, corridor) = expect_path(&q, s, e, &want_pts, &[2]);
    assert_eq!(corridor, vec![2, 0, 1, 3, 4]);
}

#[test]
fn the_centre_line_and_the_landing_follow_the_link_the_same_way() {
    let bytes = stair_gap().bytes(frame());
    let q = Query::new(bytes.mesh());
    // Walking east out of 1, north is on the left; the landing is seen walking into 3.
    assert_eq!(q.portal(1, 3), Some(([8.0, 3.0, 0.0], [8.0, 1.0, 0.0])));
    assert_eq!(q.landing(1, 3), Some(([9.0, 3.0, STEP], [9.0, 1.0, STEP])));
    assert_eq!(q.portal(3, 1), Some(([9.0, 1.0, STEP], [9.0, 3.0, STEP])));
    assert_eq!(q.landing(3, 1), Some(([8.0, 1.0, 0.0], [8.0, 3.0, 0.0])));
    // A shared edge has no landing; unconnected polygons have neither.
    assert_eq!(q.landing(0, 1), None);
    assert_eq!(q.landing(0, 3), None);
    assert_eq!(q.landing(0, 99), None);

    let (s, e) = ([2.0, 2.0, 0.0], [15.0, 2.0, STEP]);
    let line = q.centre_line(s, e, &[0, 1, 3, 4]);
    assert_eq!(
        line.points,
        vec![
            s,
            [4.0, 2.0, 0.0],
            [8.0, 2.0, 0.0],
            [9.0, 2.0, STEP],
            [13.0, 2.0, STEP],
            e
        ]
    );
    assert_eq!(line.links, vec![2]);
}

#[test]
fn a_link_with_no_way_back_lands_on_the_nearest_points_of_the_far_side() {
    let mut b = stair_gap();
    b.input.links.truncate(1); // only 1 -> 3
    let bytes = b.bytes(frame());
    let q = Query::new(bytes.mesh());
    assert_eq!(q.landing(1, 3), Some(([9.0, 3.0, STEP], [9.0, 1.0, STEP])));
    let (path, _) = pull(&q, [2.0, 2.0, 0.0], [15.0, 2.0, STEP]);
    assert_eq!(path.links, vec![1]);
    assert_eq!(path.points[1..3], [[8.0, 2.0, 0.0], [9.0, 2.0, STEP]]);
    // The other way there is no path at all.
    let c = q.find_path(4, [15.0, 2.0, STEP], 0, [2.0, 2.0, 0.0]);
    assert!(!c.found);
}

#[test]
fn two_links_in_a_row_are_both_marked() {
    // A third floor 1 m up east of the second, across another 1 m gap at x 17..18.
    let mut b = stair_gap();
    let top = b.rect(18, 0, 22, 4, 4, 2);
    b.link_across(4, top, [[17, 0, 2], [17, 4, 2]], [[18, 4, 4], [18, 0, 4]]);
    let bytes = b.bytes(frame());
    let q = Query::new(bytes.mesh());
    let (s, e) = ([2.0, 2.0, 0.0], [21.0, 2.0, 2.0 * STEP]);
    let want_pts = [
        s,
        [8.0, 2.0, 0.0],
        [9.0, 2.0, STEP],
        [17.0, 2.0, STEP],
        [18.0, 2.0, 2.0 * STEP],
        e,
    ];
    let (path, corridor) = expect_path(&q, s, e, &want_pts, &[1, 3]);
    assert_eq!(corridor, vec![0, 1, 3, 4, top]);
    let want = 6.0 + 8.0 + 3.0 + 2.0 * 1.25f64.sqrt();
    assert!(close(length(&path.points), want, 1e-3));
}

#[test]
fn random_paths_over_the_gap_stay_on_the_mesh_but_for_the_step_and_pull_tight() {
    let bytes = stair_gap().bytes(frame());
    let q = Query::new(bytes.mesh());
    let mut rng = tessera_query::Rng::new(11);
    let mut steps = 0;
    for _ in 0..400 {
        let (sp, s) = q.random_point(&mut rng).unwrap();
        let (ep, e) = q.random_point(&mut rng).unwrap();
        let c = q.find_path(sp, s, ep, e);
        assert!(c.found);
        let path = q.straight_path_with_links(s, e, &c.polys);
        assert_eq!(path.points.first(), Some(&s));
        assert_eq!(path.points.last(), Some(&e));
        // A step exactly when the two ends are on different floors.
        let upper = |p: [f32; 3]| p[0] > 8.5;
        assert_eq!(
            path.links.len(),
            usize::from(upper(s) != upper(e)),
            "{path:?}"
        );
        steps += path.links.len();
        check_on_mesh(&q, &path);
        let straight = length(&path.points);
        let centre = length(&centre_line(&q, s, e, &c.polys));
        assert!(straight <= centre + 1e-5, "{straight} > {centre}");
        assert!(straight >= length(&[s, e]) - 1e-5);
    }
    assert!(steps > 50, "{steps}");
}

#[test]
fn components_follow_portals_and_links_either_way_and_are_numbered_by_first_polygon() {
    // Issue 17: every polygon carries its connected component. The two floors of the stair
    // gap are one component through their link, even with the link one way only (a path
    // then exists one way: components only ever rule a path out). A square off on its own
    // is a component of its own, numbered after the ones whose first polygon comes first.
    for one_way in [false, true] {
        let mut b = stair_gap();
        if one_way {
            b.input.links.truncate(1);
        }
        let alone = b.rect(30, 0, 32, 2, 0, 5);
        let bytes = b.bytes(frame());
        let mesh = bytes.mesh();
        let of: Vec<u32> = mesh.polys.iter().map(|p| p.component.to_native()).collect();
        assert_eq!(of[..5], [0; 5], "one_way {one_way}");
        assert_eq!(of[alone as usize], 1);
        let table: Vec<(u64, f64)> = mesh
            .components
            .iter()
            .map(|c| (c.polygons.to_native(), c.area.to_native()))
            .collect();
        let area = |ps: std::ops::Range<usize>| -> f64 {
            ps.map(|p| mesh.polys[p].area.to_native() as f64).sum()
        };
        assert_eq!(table, [(5, area(0..5)), (1, area(5..6))]);
        // Across components nothing is searched; within one, a one-way link still leaves
        // the way back to the search, which finds none.
        let q = Query::new(mesh);
        let c = q.find_path(0, [2.0, 2.0, 0.0], alone, [31.0, 1.0, 0.0]);
        assert!(!c.found && c.polys == [0], "{c:?}");
        let back = q.find_path(4, [15.0, 2.0, STEP], 0, [2.0, 2.0, 0.0]);
        assert_eq!(back.found, !one_way);
    }
}
