//! Properties on random grids of unit squares with holes.

mod common;

use std::collections::VecDeque;

use common::{centre_line, frame, length, Builder};
use proptest::prelude::*;
use tessera_query::{Query, Rng};

/// A `w x h` grid of 2 m squares, `open[y * w + x]` telling which exist; polygon ids in
/// row-major order of the open cells. With `split`, every side has a vertex at its middle
/// (collinear edges, each side two portals).
fn grid_mesh(w: usize, h: usize, open: &[bool], split: bool) -> (Builder, Vec<Option<u32>>) {
    let mut b = Builder::new();
    let mut ids = vec![None; w * h];
    for y in 0..h {
        for x in 0..w {
            if open[y * w + x] {
                let (x0, y0) = (2 * x as i32, 2 * y as i32);
                ids[y * w + x] = Some(if split {
                    let (x1, y1) = (x0 + 2, y0 + 2);
                    let (xm, ym) = (x0 + 1, y0 + 1);
                    b.poly(
                        &[
                            [x0, y0, 0],
                            [xm, y0, 0],
                            [x1, y0, 0],
                            [x1, ym, 0],
                            [x1, y1, 0],
                            [xm, y1, 0],
                            [x0, y1, 0],
                            [x0, ym, 0],
                        ],
                        0,
                    )
                } else {
                    b.rect(x0, y0, x0 + 2, y0 + 2, 0, 0)
                });
            }
        }
    }
    (b, ids)
}

/// Connected components of the open cells (4-neighbours: squares meet along edges).
fn components(w: usize, h: usize, open: &[bool]) -> Vec<usize> {
    let mut comp = vec![usize::MAX; w * h];
    let mut next = 0;
    for s in 0..w * h {
        if !open[s] || comp[s] != usize::MAX {
            continue;
        }
        comp[s] = next;
        let mut queue = VecDeque::from([s]);
        while let Some(c) = queue.pop_front() {
            let (x, y) = (c % w, c / w);
            let mut nbs = Vec::new();
            if x > 0 {
                nbs.push(c - 1);
            }
            if x + 1 < w {
                nbs.push(c + 1);
            }
            if y > 0 {
                nbs.push(c - w);
            }
            if y + 1 < h {
                nbs.push(c + w);
            }
            for n in nbs {
                if open[n] && comp[n] == usize::MAX {
                    comp[n] = next;
                    queue.push_back(n);
                }
            }
        }
        next += 1;
    }
    comp
}

fn grid_case() -> impl Strategy<Value = (usize, usize, Vec<bool>, bool, u64)> {
    (2usize..12, 2usize..12).prop_flat_map(|(w, h)| {
        (
            Just(w),
            Just(h),
            proptest::collection::vec(proptest::bool::weighted(0.75), w * h),
            any::<bool>(),
            any::<u64>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn straight_paths_are_short_clear_and_found_exactly_when_connected(
        (w, h, open, split, seed) in grid_case()
    ) {
        prop_assume!(open.iter().any(|&o| o));
        let (b, _) = grid_mesh(w, h, &open, split);
        let bytes = b.bytes(frame());
        let q = Query::new(bytes.mesh());
        let comp = components(w, h, &open);
        let cell_of = |p: [f32; 3]| (p[1] / 2.0).floor().min(h as f32 - 1.0) as usize * w
            + (p[0] / 2.0).floor().min(w as f32 - 1.0) as usize;
        let mut rng = Rng::new(seed);
        for _ in 0..16 {
            let (sp, s) = q.random_point(&mut rng).unwrap();
            let (ep, e) = q.random_point(&mut rng).unwrap();
            let c = q.find_path(sp, s, ep, e);
            prop_assert_eq!(c.found, comp[cell_of(s)] == comp[cell_of(e)]);
            if !c.found {
                continue;
            }
            let pts = q.straight_path(s, e, &c.polys);
            prop_assert_eq!(pts.first(), Some(&s));
            prop_assert_eq!(pts.last(), Some(&e));
            let straight = length(&pts);
            let centre = length(&centre_line(&q, s, e, &c.polys));
            prop_assert!(straight <= centre + 1e-4, "{} > centre line {}", straight, centre);
            prop_assert!(straight >= length(&[s, e]) - 1e-4);
            for seg in pts.windows(2) {
                let (poly, _) = q.nearest(seg[0], [0.01, 0.01, 0.01]).unwrap();
                let r = q.raycast(poly, seg[0], seg[1]);
                prop_assert_eq!(r.t, 1.0, "{:?} -> {:?} from {}: {:?}", seg[0], seg[1], poly, r);
            }
        }
    }

    #[test]
    fn a_ray_stops_exactly_at_the_first_missing_square(
        (w, h, open, split, seed) in grid_case()
    ) {
        prop_assume!(open.iter().any(|&o| o));
        let (b, ids) = grid_mesh(w, h, &open, split);
        let bytes = b.bytes(frame());
        let q = Query::new(bytes.mesh());
        let mut rng = Rng::new(seed);
        // Rays along a row, east or west, from a random point: the mesh ends at the first
        // closed cell (or the grid's edge).
        for _ in 0..16 {
            let (sp, s) = q.random_point(&mut rng).unwrap();
            if (s[1] - 2.0 * (s[1] / 2.0).round()).abs() < 0.01 {
                continue; // along a row's edge, within the tolerance: the row beside counts too
            }
            let east = rng.next_u64() & 1 == 0;
            let reach = 3.0 + 2.0 * w as f32 * rng.next_f32();
            let e = [if east { s[0] + reach } else { s[0] - reach }, s[1], s[2]];
            let (cx, cy) = ((s[0] / 2.0).floor() as i64, (s[1] / 2.0).floor() as i64);
            let mut x = cx;
            loop {
                let nx = if east { x + 1 } else { x - 1 };
                if nx < 0 || nx >= w as i64 || ids[cy as usize * w + nx as usize].is_none() {
                    break;
                }
                x = nx;
            }
            let wall = if east { 2.0 * (x + 1) as f32 } else { 2.0 * x as f32 };
            if (e[0] - wall).abs() < 0.01 {
                continue; // an end on the wall, within the tolerance: either answer is right
            }
            let want = ((wall - s[0]) / (e[0] - s[0])).min(1.0);
            let r = q.raycast(sp, s, e);
            prop_assert!((r.t - want).abs() < 1e-4, "want {} got {:?} from {:?} to {:?}", want, r, s, e);
            if want < 1.0 {
                prop_assert_eq!(r.hit_edge_normal, Some([if east { 1.0 } else { -1.0 }, 0.0]));
            }
        }
    }
}

/// Vertices, polygons (vertex indices), links (polygon pairs), and a seed.
type Garbage = (Vec<[i32; 3]>, Vec<Vec<u32>>, Vec<(u32, u32)>, u64);

/// Garbage that still builds: polygons over random vertices (counter-clockwise overall but
/// not necessarily convex or simple), random detail triangles, random links.
fn garbage_case() -> impl Strategy<Value = Garbage> {
    (4usize..12, 1usize..8).prop_flat_map(|(nv, np)| {
        (
            proptest::collection::vec(
                (0i32..6, 0i32..6, 0i32..3).prop_map(|(x, y, z)| [x, y, z]),
                nv,
            ),
            proptest::collection::vec(proptest::collection::vec(0..nv as u32, 3..7), np),
            proptest::collection::vec((0..np as u32, 0..np as u32), 0..4),
            any::<u64>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Queries on meshes that break the geometric rules (the file format promises indices in
    /// range, finite numbers and convex counter-clockwise polygons, not that polygons meet
    /// edge to edge, stay apart or match their neighbours) end, and do not panic.
    #[test]
    fn queries_on_garbage_geometry_end_without_panicking((verts, polys, links, seed) in garbage_case()) {
        let mut b = Builder::new();
        b.input.verts = verts.clone();
        b.input.regions = 1;
        for mut p in polys {
            let twice: i64 = (0..p.len())
                .map(|k| {
                    let (a, c) = (verts[p[k] as usize], verts[p[(k + 1) % p.len()] as usize]);
                    a[0] as i64 * c[1] as i64 - c[0] as i64 * a[1] as i64
                })
                .sum();
            if twice == 0 {
                continue;
            }
            if twice < 0 {
                p.reverse();
            }
            // A polygon that is not convex is refused when the file is read: left out.
            let corner = |k: usize| verts[p[k % p.len()] as usize];
            let reflex = (0..p.len()).any(|k| {
                let (a, b, c) = (corner(k), corner(k + 1), corner(k + 2));
                let (e, f) = ([b[0] - a[0], b[1] - a[1]], [c[0] - b[0], c[1] - b[1]]);
                (e[0] as i64) * (f[1] as i64) - (e[1] as i64) * (f[0] as i64) < 0
            });
            if reflex {
                continue;
            }
            let tris = vec![[p[0], p[1], p[2]], [p[2], p[1], p[0]]];
            b.input.polys.push(tessera_artifacts::InputPoly { verts: p, region: 0, tris, ..Default::default() });
        }
        let np = b.input.polys.len() as u32;
        prop_assume!(np > 0);
        for (i, &(x, y)) in links.iter().enumerate() {
            let (x, y) = (x % np, y % np);
            let p = [i as i32, 1];
            b.input.links.push((x, y, [p[0], p[1], 0], [p[0] + 1, p[1] + 2, 1]));
        }
        let bytes = b.bytes(frame());
        let q = Query::new(bytes.mesh());
        let mut rng = Rng::new(seed);
        let point = |rng: &mut Rng| [rng.next_f32() * 8.0 - 1.0, rng.next_f32() * 8.0 - 1.0, rng.next_f32()];
        for _ in 0..6 {
            let (a, z) = (point(&mut rng), point(&mut rng));
            let (pa, pz) = ((rng.next_u64() % np as u64) as u32, (rng.next_u64() % np as u64) as u32);
            let c = q.find_path(pa, a, pz, z);
            let pts = q.straight_path(a, z, &c.polys);
            prop_assert!(!c.polys.is_empty() && !pts.is_empty());
            let r = q.raycast(pa, a, z);
            prop_assert!((0.0..=1.0).contains(&r.t), "{:?}", r);
            let _ = q.nearest(a, [2.0, 2.0, 2.0]);
            let _ = q.random_point(&mut rng);
            let _ = q.height(pa, a);
        }
    }

    /// `nearest` (grid candidates, boxes nearest first, stopping early) answers what a scan
    /// of every polygon answers: the smallest distance to a closest point inside the search
    /// box, ties to the smaller id.
    #[test]
    fn nearest_equals_a_scan_of_every_polygon(
        rects in prop::collection::vec((0i32..12, 0i32..12, 1i32..6, 1i32..6, 0i32..12), 1..24),
        seed in any::<u64>(),
    ) {
        let mut b = Builder::new();
        for &(x, y, w, h, z) in &rects {
            b.rect(x, y, x + w, y + h, z, 0);
        }
        let bytes = b.bytes(frame());
        let q = Query::new(bytes.mesh());
        let eps = q.tolerance();
        let mut rng = Rng::new(seed);
        for _ in 0..40 {
            let p = [
                rng.next_f32() * 20.0 - 3.0,
                rng.next_f32() * 20.0 - 3.0,
                rng.next_f32() * 5.0 - 1.0,
            ];
            let ext = [0.2 + rng.next_f32() * 4.0, 0.2 + rng.next_f32() * 4.0, 0.2 + rng.next_f32() * 3.0];
            let mut want: Option<(f64, u32, [f32; 3])> = None;
            for poly in 0..q.poly_count() {
                let c = q.closest_point(poly, p).unwrap();
                if (0..3).any(|k| c[k] < p[k] - ext[k] - eps || c[k] > p[k] + ext[k] + eps) {
                    continue;
                }
                let d = (0..3).map(|k| (c[k] as f64 - p[k] as f64).powi(2)).sum::<f64>().sqrt();
                if want.is_none_or(|(wd, _, _)| d < wd) {
                    want = Some((d, poly, c));
                }
            }
            prop_assert_eq!(q.nearest(p, ext), want.map(|(_, poly, c)| (poly, c)), "{:?} +- {:?}", p, ext);
        }
    }
}

/// Found by `straight_paths_are_short_clear_and_found_exactly_when_connected`: a start 0.7 mm
/// below its square's top edge (within the
/// tolerance), whose way to the far side runs along that edge's line and round two corners on
/// it. The search took the start as on the line where a cone grazed it and as off it where a
/// cone's side ran along it, lost the corners, and answered "no path".
#[test]
fn a_start_a_hair_off_an_edge_line_still_finds_its_way_round_the_corners_on_it() {
    let (w, h) = (6, 3);
    let open = [
        true, true, true, false, true, true, true, true, false, false, true, false, true, true,
        true, true, true, false,
    ];
    let (b, ids) = grid_mesh(w, h, &open, false);
    let bytes = b.bytes(frame());
    let q = Query::new(bytes.mesh());
    let (start, end) = ([1.0663749, 3.9992988, 0.0], [8.996598, 1.7037439, 0.0]);
    let (s, e) = (ids[w].unwrap(), ids[4].unwrap());
    let c = q.find_path(s, start, e, end);
    assert!(c.found, "{c:?}");
    let pts = q.straight_path(start, end, &c.polys);
    // Round the corners (4, 4) and (8, 4), the shortest way.
    let shortest = length(&[start, [4.0, 4.0, 0.0], [8.0, 4.0, 0.0], end]);
    assert!((length(&pts) - shortest).abs() < 1e-3, "{pts:?}");
}
