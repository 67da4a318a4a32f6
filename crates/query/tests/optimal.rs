//! A* over few large polygons: the corridor found is the shortest one (issue 15).
//!
//! The reference is an exhaustive search: Dijkstra over points sampled along every portal (a
//! way across a convex polygon between two points of its boundary is a straight line), then
//! string pulling along the corridor it picks.

mod common;

use std::collections::{BinaryHeap, HashMap};

use common::{frame, length, Builder};
use tessera_query::Query;

/// A field of `n` x `n` cells of `size` m, each cut into two triangles along one of its
/// diagonals (chosen by `diagonal(x, y)`), without the cells `holes` lists.
fn field(n: i32, size: i32, holes: &[(i32, i32)], diagonal: impl Fn(i32, i32) -> bool) -> Builder {
    let mut b = Builder::new();
    for y in 0..n {
        for x in 0..n {
            if holes.contains(&(x, y)) {
                continue;
            }
            let (x0, y0, x1, y1) = (x * size, y * size, (x + 1) * size, (y + 1) * size);
            let region = (y * n + x) as u32;
            if diagonal(x, y) {
                b.poly(&[[x0, y0, 0], [x1, y0, 0], [x1, y1, 0]], region);
                b.poly(&[[x0, y0, 0], [x1, y1, 0], [x0, y1, 0]], region);
            } else {
                b.poly(&[[x0, y0, 0], [x1, y0, 0], [x0, y1, 0]], region);
                b.poly(&[[x1, y0, 0], [x1, y1, 0], [x0, y1, 0]], region);
            }
        }
    }
    b
}

/// The length of the shortest path from `start` (on `sp`) to `end` (on `ep`): the pulled
/// string along the corridor of an exhaustive search over `samples` points per portal.
fn reference_length(q: &Query, sp: u32, start: [f32; 3], ep: u32, end: [f32; 3]) -> f64 {
    const SAMPLES: usize = 16;
    let n = q.poly_count();
    let dist = |a: [f32; 3], b: [f32; 3]| {
        let d = [0, 1, 2].map(|k| b[k] as f64 - a[k] as f64);
        (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
    };
    // Nodes: (polygon entered, point); the start is node 0.
    let mut points = vec![(sp, start)];
    let mut parent = vec![usize::MAX];
    let mut cost = vec![0.0f64];
    let mut index = HashMap::new();
    let mut heap = BinaryHeap::new();
    heap.push((std::cmp::Reverse(0u64), 0usize));
    let mut best: Option<(f64, usize)> = None;
    while let Some((std::cmp::Reverse(key), i)) = heap.pop() {
        let d = f64::from_bits(key);
        if d > cost[i] || best.is_some_and(|(b, _)| d >= b) {
            continue;
        }
        let (poly, at) = points[i];
        if poly == ep {
            let total = d + dist(at, end);
            if best.is_none_or(|(b, _)| total < b) {
                best = Some((total, i));
            }
            continue;
        }
        for to in 0..n {
            let Some((l, r)) = q.portal(poly, to) else {
                continue;
            };
            for k in 0..=SAMPLES {
                let s = k as f32 / SAMPLES as f32;
                let x = [0, 1, 2].map(|c| l[c] + s * (r[c] - l[c]));
                let g = d + dist(at, x);
                let slot = *index.entry((poly, to, k)).or_insert_with(|| {
                    points.push((to, x));
                    parent.push(usize::MAX);
                    cost.push(f64::INFINITY);
                    points.len() - 1
                });
                if g < cost[slot] {
                    (cost[slot], parent[slot]) = (g, i);
                    heap.push((std::cmp::Reverse(g.to_bits()), slot));
                }
            }
        }
    }
    let (_, mut i) = best.expect("the end is reachable");
    let mut corridor = vec![points[i].0];
    while i != 0 {
        i = parent[i];
        corridor.push(points[i].0);
    }
    corridor.reverse();
    corridor.dedup();
    length(&q.straight_path(start, end, &corridor))
}

/// Points spread over the field (a fixed low-discrepancy walk), on the mesh.
fn spread(q: &Query, count: usize, extent: f32) -> Vec<(u32, [f32; 3])> {
    let mut out = Vec::new();
    let (mut u, mut v) = (0.5f32, 0.5f32);
    while out.len() < count {
        u = (u + 0.618_034) % 1.0;
        v = (v + 0.754_877_7) % 1.0;
        let p = [u * extent, v * extent, 0.0];
        if let Some(hit) = q.nearest(p, [0.01, 0.01, 1.0]) {
            out.push(hit);
        }
    }
    out
}

#[test]
fn a_star_over_large_triangles_finds_the_shortest_corridor() {
    // 5 x 5 cells of 20 m with holes: large triangles, and several ways round each hole.
    let holes = [(1, 1), (3, 1), (2, 2), (1, 3), (3, 3)];
    let bytes = field(5, 20, &holes, |x, y| (x * 7 + y * 3) % 2 == 0).bytes(frame());
    let q = Query::new(bytes.mesh());
    let points = spread(&q, 30, 100.0);
    let (mut pairs, mut longer) = (0, 0);
    let mut worst = (1.0f64, 0, 0);
    for (i, &(sp, s)) in points.iter().enumerate() {
        for (j, &(ep, e)) in points.iter().enumerate() {
            if i == j {
                continue;
            }
            let c = q.find_path(sp, s, ep, e);
            assert!(c.found);
            let got = length(&q.straight_path(s, e, &c.polys));
            let want = reference_length(&q, sp, s, ep, e);
            let ratio = got / want.max(1e-6);
            pairs += 1;
            if ratio > 1.0 + 1e-5 {
                longer += 1;
            }
            if ratio > worst.0 {
                worst = (ratio, i, j);
            }
        }
    }
    // Every path is the shortest (to a centimetre per hundred kilometres).
    assert_eq!(
        longer, 0,
        "{longer} of {pairs} paths longer than the shortest; the worst, pair {} -> {}, {:.6} \
         times",
        worst.1, worst.2, worst.0
    );
}

#[test]
fn a_path_is_as_long_both_ways() {
    // Smaller cells, more holes, both diagonals: many corridors of nearly equal length.
    let holes = [
        (1, 1),
        (4, 1),
        (2, 3),
        (5, 3),
        (3, 5),
        (1, 6),
        (6, 6),
        (4, 4),
    ];
    let bytes = field(8, 10, &holes, |x, y| (x * 5 + y * 11) % 3 == 0).bytes(frame());
    let q = Query::new(bytes.mesh());
    let points = spread(&q, 40, 80.0);
    let mut joined = 0;
    for (i, &(sp, s)) in points.iter().enumerate() {
        for &(ep, e) in &points[i + 1..] {
            let there = q.find_path(sp, s, ep, e);
            let back = q.find_path(ep, e, sp, s);
            assert_eq!(there.found, back.found, "{s:?} -> {e:?}");
            if !there.found {
                continue;
            }
            joined += 1;
            let (a, b) = (
                length(&q.straight_path(s, e, &there.polys)),
                length(&q.straight_path(e, s, &back.polys)),
            );
            assert!(
                (a - b).abs() <= 1e-5 * a.max(b),
                "{s:?} -> {e:?}: {a} there, {b} back"
            );
        }
    }
    assert!(joined > 500, "{joined} pairs joined");
}
