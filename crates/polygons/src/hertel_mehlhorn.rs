//! Hertel-Mehlhorn convex partition: a triangulation with its inessential diagonals removed.
//!
//! Based on: S. Hertel and K. Mehlhorn, "Fast triangulation of simple polygons", FCT 1983
//! (LNCS 158), as seed 000 uses it (G. Saupin et al., "Robust and Scalable Navmesh
//! Generation with multiple levels and stairs support", WSCG 2013, section 5.1.3: triangles
//! regrouped into convex polygons) and as seed 002 describes it (section 2: remove the
//! inessential diagonals of a triangulation; within four times the fewest convex pieces).
//! A diagonal is inessential when removing it leaves both of its ends convex.
//!
//! How this departs from the method: diagonals are tried in a fixed order, longest first
//! (ties by their end points), so the result depends only on the triangulation; regions have
//! holes (the bound still holds for them, seed 002, 3.4); a straight angle counts as convex,
//! so collinear vertices stay inside an edge; and two pieces that touch anywhere but along
//! the diagonal (a pinch) are never merged, so every polygon stays simple. Convexity is
//! tested exactly on the grid ([`tessera_geom::predicates`]).

use rustc_hash::FxHashMap as HashMap;
use tessera_artifacts::Point;
use tessera_geom::predicates::{dist2, dot, orient, vector};

use crate::partition::{find, RegionPolygons};

/// Hertel-Mehlhorn over the triangles: diagonals (edges inside the region) are removed longest
/// first whenever the merged polygon stays convex at both ends of the diagonal.
pub fn hertel_mehlhorn(verts: Vec<Point>, tris: Vec<[u32; 3]>) -> RegionPolygons {
    let mut edge_tris: HashMap<(u32, u32), Vec<u32>> = HashMap::default();
    for (t, tri) in tris.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            edge_tris
                .entry((a.min(b), a.max(b)))
                .or_default()
                .push(t as u32);
        }
    }
    let mut diagonals: Vec<(i64, Point, Point, u32, u32, u32, u32)> = edge_tris
        .iter()
        .filter(|(_, ts)| ts.len() == 2)
        .map(|(&(a, b), ts)| {
            let (pa, pb) = (verts[a as usize], verts[b as usize]);
            (-dist2(pa, pb), pa.min(pb), pa.max(pb), a, b, ts[0], ts[1])
        })
        .collect();
    diagonals.sort_unstable();
    let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
    let mut cycles: Vec<Vec<u32>> = tris.iter().map(|t| t.to_vec()).collect();
    for &(_, _, _, a, b, t1, t2) in &diagonals {
        let (p, q) = (find(&mut parent, t1), find(&mut parent, t2));
        if p == q {
            continue;
        }
        // Rotate P to run v .. u and Q to run u .. v, where P holds the directed edge u -> v.
        let (cp, cq) = (&cycles[p as usize], &cycles[q as usize]);
        let pos = |c: &[u32], x: u32| c.iter().position(|&y| y == x);
        let (Some(pa), Some(pb)) = (pos(cp, a), pos(cp, b)) else {
            continue;
        };
        let (u, v) = if cp[(pa + 1) % cp.len()] == b {
            (a, b)
        } else if cp[(pb + 1) % cp.len()] == a {
            (b, a)
        } else {
            continue;
        };
        let pv = pos(cp, v).unwrap();
        let prot: Vec<u32> = (0..cp.len()).map(|k| cp[(pv + k) % cp.len()]).collect();
        let Some(qu) = pos(cq, u) else { continue };
        let qrot: Vec<u32> = (0..cq.len()).map(|k| cq[(qu + k) % cq.len()]).collect();
        if qrot.last() != Some(&v) {
            continue;
        }
        // P and Q touching anywhere else (a pinch) would make a polygon that is not simple.
        if qrot[1..qrot.len() - 1].iter().any(|w| prot.contains(w)) {
            continue;
        }
        let at = |i: u32| verts[i as usize];
        // At u: P's vertex before u, u, Q's vertex after u. At v: Q's before v, v, P's after v.
        // A straight angle is convex; folding back is not.
        let convex = |a: Point, b: Point, c: Point| {
            let o = orient(a, b, c);
            o > 0 || o == 0 && dot(vector(a, b), vector(b, c)) > 0
        };
        if !(convex(at(prot[prot.len() - 2]), at(u), at(qrot[1]))
            && convex(at(qrot[qrot.len() - 2]), at(v), at(prot[1])))
        {
            continue;
        }
        let mut merged = prot;
        merged.extend_from_slice(&qrot[1..qrot.len() - 1]);
        let (keep, gone) = (p.min(q), p.max(q));
        parent[gone as usize] = keep;
        cycles[keep as usize] = merged;
        cycles[gone as usize] = Vec::new();
    }
    // Polygons in order of their smallest triangle; each cycle starts at its smallest vertex.
    let mut index: HashMap<u32, usize> = HashMap::default();
    let mut out = RegionPolygons {
        verts,
        ..Default::default()
    };
    for t in 0..tris.len() as u32 {
        let root = find(&mut parent, t);
        let k = *index.entry(root).or_insert_with(|| {
            let c = &cycles[root as usize];
            let m = (0..c.len()).min_by_key(|&i| c[i]).unwrap();
            out.polys
                .push((0..c.len()).map(|i| c[(m + i) % c.len()]).collect());
            out.tris.push(Vec::new());
            out.polys.len() - 1
        });
        out.tris[k].push(tris[t as usize]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::convex_cover;
    use crate::triangulate;

    #[test]
    fn a_square_with_a_hole_partitions_convexly() {
        let outer = vec![(0, 0), (10, 0), (10, 10), (0, 10)];
        let hole = vec![(4, 4), (4, 6), (6, 6), (6, 4)];
        let (verts, tris) = triangulate(&[outer, hole]).unwrap();
        let polys = hertel_mehlhorn(verts, tris);
        convex_cover(&polys, 2 * 96);
        // A square ring needs at least 4 convex pieces; HM stays within 4x of optimal.
        assert!(
            polys.polys.len() >= 4 && polys.polys.len() <= 8,
            "{}",
            polys.polys.len()
        );
    }

    #[test]
    fn an_l_shape_becomes_two_polygons() {
        let l = vec![(0, 0), (6, 0), (6, 2), (2, 2), (2, 6), (0, 6)];
        let (verts, tris) = triangulate(&[l]).unwrap();
        let polys = hertel_mehlhorn(verts, tris);
        assert_eq!(polys.polys.len(), 2);
    }
}
