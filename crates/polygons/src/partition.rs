//! A region's simplified contours to convex polygons: constrained Delaunay triangulation with
//! holes (spade), then Hertel-Mehlhorn (seed 000, 5.1.3): remove every diagonal whose removal
//! keeps both sides convex, longest first.

use rustc_hash::FxHashMap as HashMap;
use spade::handles::FixedFaceHandle;
use spade::{ConstrainedDelaunayTriangulation, Point2, Triangulation};
use tessera_artifacts::Point;

/// Convex polygons of one region over its own vertex list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionPolygons {
    pub verts: Vec<Point>,
    /// Counter-clockwise vertex cycles.
    pub polys: Vec<Vec<u32>>,
    /// The triangles each polygon is made of (counter-clockwise).
    pub tris: Vec<Vec<[u32; 3]>>,
}

pub(crate) fn orient(a: Point, b: Point, c: Point) -> i64 {
    (b.0 - a.0) as i64 * (c.1 - a.1) as i64 - (b.1 - a.1) as i64 * (c.0 - a.0) as i64
}

/// Triangulates the region bounded by `contours` (outer counter-clockwise, holes clockwise; no
/// two segments crossing) and returns the triangles inside it, over the deduplicated vertices.
pub fn triangulate(contours: &[Vec<Point>]) -> Result<(Vec<Point>, Vec<[u32; 3]>), String> {
    let mut ids: HashMap<Point, usize> = HashMap::default();
    let mut verts: Vec<Point> = Vec::new();
    let mut edges: Vec<[usize; 2]> = Vec::new();
    for c in contours {
        let idx: Vec<usize> = c
            .iter()
            .map(|&p| {
                *ids.entry(p).or_insert_with(|| {
                    verts.push(p);
                    verts.len() - 1
                })
            })
            .collect();
        for k in 0..idx.len() {
            let (a, b) = (idx[k], idx[(k + 1) % idx.len()]);
            if a != b {
                edges.push([a, b]);
            }
        }
    }
    let points: Vec<Point2<f64>> = verts
        .iter()
        .map(|p| Point2::new(p.0 as f64, p.1 as f64))
        .collect();
    let mut conflicts = 0usize;
    let cdt =
        ConstrainedDelaunayTriangulation::<Point2<f64>>::try_bulk_load_cdt(points, edges, |_| {
            conflicts += 1
        })
        .map_err(|e| format!("triangulation failed: {e:?}"))?;
    if conflicts > 0 {
        return Err(format!("{conflicts} crossing constraint edges"));
    }
    if cdt.num_vertices() != verts.len() {
        return Err("duplicate vertices".into());
    }
    // Inside = an odd number of constraint edges crossed from the outside.
    let mut parity: HashMap<FixedFaceHandle<spade::handles::InnerTag>, bool> = HashMap::default();
    let mut queue = Vec::new();
    for face in cdt.inner_faces() {
        for e in face.adjacent_edges() {
            if e.rev().face().is_outer() {
                let inside = cdt.is_constraint_edge(e.fix().as_undirected());
                if parity.insert(face.fix(), inside).is_none() {
                    queue.push(face.fix());
                }
                break;
            }
        }
    }
    while let Some(f) = queue.pop() {
        let here = parity[&f];
        for e in cdt.face(f).adjacent_edges() {
            if let Some(g) = e.rev().face().as_inner() {
                let p = here ^ cdt.is_constraint_edge(e.fix().as_undirected());
                if let std::collections::hash_map::Entry::Vacant(v) = parity.entry(g.fix()) {
                    v.insert(p);
                    queue.push(g.fix());
                }
            }
        }
    }
    let mut tris = Vec::new();
    for face in cdt.inner_faces() {
        if parity.get(&face.fix()).copied().unwrap_or(false) {
            let v = face.vertices().map(|v| v.fix().index() as u32);
            tris.push(v);
        }
    }
    // Deterministic order, each triangle starting at its smallest index.
    for t in tris.iter_mut() {
        let m = (0..3).min_by_key(|&k| t[k]).unwrap();
        *t = [t[m], t[(m + 1) % 3], t[(m + 2) % 3]];
    }
    tris.sort_unstable();
    Ok((verts, tris))
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        parent[x as usize] = parent[parent[x as usize] as usize];
        x = parent[x as usize];
    }
    x
}

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
            let d = (pa.0 - pb.0) as i64;
            let e = (pa.1 - pb.1) as i64;
            (-(d * d + e * e), pa.min(pb), pa.max(pb), a, b, ts[0], ts[1])
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
            o > 0
                || o == 0
                    && (b.0 - a.0) as i64 * (c.0 - b.0) as i64
                        + (b.1 - a.1) as i64 * (c.1 - b.1) as i64
                        > 0
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

    fn area2(verts: &[Point], cycle: &[u32]) -> i64 {
        (0..cycle.len())
            .map(|k| {
                let (a, b) = (
                    verts[cycle[k] as usize],
                    verts[cycle[(k + 1) % cycle.len()] as usize],
                );
                a.0 as i64 * b.1 as i64 - b.0 as i64 * a.1 as i64
            })
            .sum()
    }

    #[test]
    fn a_square_with_a_hole_triangulates_to_its_area_and_partitions_convexly() {
        let outer = vec![(0, 0), (10, 0), (10, 10), (0, 10)];
        let hole = vec![(4, 4), (4, 6), (6, 6), (6, 4)];
        let (verts, tris) = triangulate(&[outer, hole]).unwrap();
        let total: i64 = tris.iter().map(|t| area2(&verts, t)).sum();
        assert_eq!(total, 2 * (100 - 4));
        let polys = hertel_mehlhorn(verts, tris);
        let mut sum = 0;
        for c in &polys.polys {
            let n = c.len();
            for k in 0..n {
                let (a, b, d) = (c[k], c[(k + 1) % n], c[(k + 2) % n]);
                let v = &polys.verts;
                assert!(orient(v[a as usize], v[b as usize], v[d as usize]) >= 0);
            }
            sum += area2(&polys.verts, c);
        }
        assert_eq!(sum, 2 * 96);
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

    fn convex_cover(polys: &RegionPolygons, want_area2: i64) {
        let mut sum = 0;
        for c in &polys.polys {
            let n = c.len();
            for k in 0..n {
                let v = &polys.verts;
                let (a, b, d) = (c[k], c[(k + 1) % n], c[(k + 2) % n]);
                assert!(
                    orient(v[a as usize], v[b as usize], v[d as usize]) >= 0,
                    "{c:?}"
                );
            }
            sum += area2(&polys.verts, c);
        }
        assert_eq!(sum, want_area2);
    }

    #[test]
    fn anavmg_splits_each_notch_once() {
        // An L: one notch, two cells.
        let l = vec![(0, 0), (6, 0), (6, 2), (2, 2), (2, 6), (0, 6)];
        let (verts, tris) = triangulate(&[l]).unwrap();
        let (p, fell_back) = anavmg(verts, tris, 0.0);
        assert!(!fell_back);
        assert_eq!(p.polys.len(), 2);
        convex_cover(&p, 2 * 20);
        // A square ring: four notches (the hole's corners), four cells.
        let outer = vec![(0, 0), (10, 0), (10, 10), (0, 10)];
        let hole = vec![(4, 4), (4, 6), (6, 6), (6, 4)];
        let (verts, tris) = triangulate(&[outer, hole]).unwrap();
        let (p, fell_back) = anavmg(verts.clone(), tris.clone(), 0.0);
        assert!(!fell_back);
        convex_cover(&p, 2 * 96);
        let hm = hertel_mehlhorn(verts, tris);
        assert!(
            p.polys.len() <= hm.polys.len(),
            "{} vs {}",
            p.polys.len(),
            hm.polys.len()
        );
        assert!(p.polys.len() <= 5, "{}", p.polys.len());
    }

    #[test]
    fn anavmg_relaxation_merges_shallow_notches() {
        // A floor whose top edge dips by one unit in the middle of a 30-unit run: one shallow
        // notch (about 7.6 degrees past straight).
        let shape = vec![(0, 0), (30, 0), (30, 10), (15, 9), (0, 10)];
        let (verts, tris) = triangulate(&[shape]).unwrap();
        let (strict, _) = anavmg(verts.clone(), tris.clone(), 0.0);
        let (relaxed, fell_back) = anavmg(verts, tris, 10f64.to_radians());
        assert!(!fell_back);
        assert!(strict.polys.len() >= 2);
        assert_eq!(relaxed.polys.len(), 1);
    }

    #[test]
    fn crossing_contours_are_refused() {
        let a = vec![(0, 0), (4, 0), (4, 4), (0, 4)];
        let b = vec![(2, 2), (6, 2), (6, 6), (2, 6)];
        assert!(triangulate(&[a, b]).is_err());
    }
}

/// The counter-clockwise angle from direction `a` to direction `b`, in `[0, 2 pi)`.
fn ccw_angle(a: (i64, i64), b: (i64, i64)) -> f64 {
    let cross = (a.0 * b.1 - a.1 * b.0) as f64;
    let dot = (a.0 * b.0 + a.1 * b.1) as f64;
    let t = cross.atan2(dot);
    if t < 0.0 {
        t + std::f64::consts::TAU
    } else {
        t
    }
}

/// True when turning counter-clockwise from `a` to `b` is at most `pi + tau`. Exact (integer)
/// when `tau` is 0.
fn within(a: (i64, i64), b: (i64, i64), tau: f64) -> bool {
    if tau == 0.0 {
        a.0 * b.1 - a.1 * b.0 >= 0
    } else {
        ccw_angle(a, b) <= std::f64::consts::PI + tau + 1e-12
    }
}

/// One corner of the region: a boundary vertex with the rays leaving it into the region,
/// counter-clockwise from the outgoing boundary edge to the incoming one (reversed).
struct Corner {
    v: u32,
    rays: Vec<u32>,
}

/// ANavMG (seed 002) over the diagonals of the triangulation: every notch (a corner whose
/// angle exceeds pi + tau) gets the shortest diagonal inside its area of interest (the cone
/// that splits it into two tau-convex angles), or, when no diagonal lies in that cone, the
/// two that bracket it; a portal that already splits a notch met later counts for it too;
/// then portals that became unnecessary are removed, longest first. Cells are the pieces
/// the kept portals cut. Unlike the paper, portals end at existing vertices only (new
/// vertices on a border would have to be added to the neighbouring region as well).
/// Falls back to [`hertel_mehlhorn`] if a cell does not come out simple (never seen; a
/// safety net), which the second value reports.
pub fn anavmg(verts: Vec<Point>, tris: Vec<[u32; 3]>, tau: f64) -> (RegionPolygons, bool) {
    let mut tri_of: HashMap<(u32, u32), u32> = HashMap::default();
    for (t, tri) in tris.iter().enumerate() {
        for k in 0..3 {
            tri_of.insert((tri[k], tri[(k + 1) % 3]), t as u32);
        }
    }
    let dir = |a: u32, b: u32| {
        let (p, q) = (verts[a as usize], verts[b as usize]);
        ((q.0 - p.0) as i64, (q.1 - p.1) as i64)
    };
    // Corners: from each boundary edge v -> n, turn counter-clockwise around v through the
    // triangles until the boundary edge p -> v.
    let mut corners: Vec<Corner> = Vec::new();
    let mut boundary: Vec<(u32, u32)> = tri_of
        .keys()
        .filter(|&&(a, b)| !tri_of.contains_key(&(b, a)))
        .copied()
        .collect();
    boundary.sort_unstable();
    for &(v, n) in &boundary {
        let mut rays = vec![n];
        let mut cur = n;
        let mut guard = 0;
        loop {
            // The triangle holding v -> cur has the edge x -> v; x is the next ray.
            let t = tri_of[&(v, cur)];
            let tri = tris[t as usize];
            let k = tri.iter().position(|&w| w == v).unwrap();
            let x = tri[(k + 2) % 3];
            rays.push(x);
            if !tri_of.contains_key(&(v, x)) {
                break;
            }
            cur = x;
            guard += 1;
            if guard > tris.len() {
                return (hertel_mehlhorn(verts, tris), true);
            }
        }
        corners.push(Corner { v, rays });
    }
    // Which corner each diagonal leaves from, at each end.
    let mut corner_of: HashMap<(u32, u32), usize> = HashMap::default();
    for (c, corner) in corners.iter().enumerate() {
        for &w in &corner.rays[1..corner.rays.len() - 1] {
            corner_of.insert((corner.v, w), c);
        }
    }
    let key = |a: u32, b: u32| (a.min(b), a.max(b));
    let mut chosen: std::collections::HashSet<(u32, u32)> = Default::default();
    // The sub-angle of a corner, between consecutive kept rays, that is still too wide:
    // indices (i, j) into its rays.
    let wide = |corner: &Corner, chosen: &std::collections::HashSet<(u32, u32)>| {
        let kept: Vec<usize> = (0..corner.rays.len())
            .filter(|&i| {
                i == 0
                    || i == corner.rays.len() - 1
                    || chosen.contains(&key(corner.v, corner.rays[i]))
            })
            .collect();
        kept.windows(2).map(|w| (w[0], w[1])).find(|&(i, j)| {
            !within(
                dir(corner.v, corner.rays[i]),
                dir(corner.v, corner.rays[j]),
                tau,
            )
        })
    };
    for corner in &corners {
        while let Some((i, j)) = wide(corner, &chosen) {
            let (a, b) = (dir(corner.v, corner.rays[i]), dir(corner.v, corner.rays[j]));
            // Inside the area of interest: both new angles within pi + tau.
            let best = (i + 1..j)
                .filter(|&m| {
                    let r = dir(corner.v, corner.rays[m]);
                    within(a, r, tau) && within(r, b, tau)
                })
                .min_by_key(|&m| {
                    let r = dir(corner.v, corner.rays[m]);
                    (r.0 * r.0 + r.1 * r.1, corner.rays[m])
                });
            match best {
                Some(m) => {
                    chosen.insert(key(corner.v, corner.rays[m]));
                }
                None => {
                    // The cone lies inside one triangle's angle: keep the two rays around it.
                    let last_ok = (i + 1..j)
                        .filter(|&m| within(a, dir(corner.v, corner.rays[m]), tau))
                        .max();
                    let first_ok = (i + 1..j)
                        .filter(|&m| within(dir(corner.v, corner.rays[m]), b, tau))
                        .min();
                    match (last_ok, first_ok) {
                        (Some(l), Some(f)) => {
                            chosen.insert(key(corner.v, corner.rays[l]));
                            chosen.insert(key(corner.v, corner.rays[f]));
                        }
                        _ => return (hertel_mehlhorn(verts, tris), true),
                    }
                }
            }
        }
    }
    // Remove portals that became unnecessary, longest first.
    let mut order: Vec<(u32, u32)> = chosen.iter().copied().collect();
    order.sort_unstable_by_key(|&(a, b)| {
        let d = dir(a, b);
        (-(d.0 * d.0 + d.1 * d.1), a, b)
    });
    for (a, b) in order {
        chosen.remove(&(a, b));
        let still_fine = [(a, b), (b, a)]
            .iter()
            .all(|&(u, w)| match corner_of.get(&(u, w)) {
                Some(&c) => wide(&corners[c], &chosen).is_none(),
                None => true,
            });
        if !still_fine {
            chosen.insert((a, b));
        }
    }
    // Cells: triangles joined across every diagonal that is not a portal.
    let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
    for (&(a, b), &t) in &tri_of {
        if a < b && !chosen.contains(&(a, b)) {
            if let Some(&u) = tri_of.get(&(b, a)) {
                let (ra, rb) = (find(&mut parent, t), find(&mut parent, u));
                if ra != rb {
                    parent[ra.max(rb) as usize] = ra.min(rb);
                }
            }
        }
    }
    let mut out = RegionPolygons {
        verts: verts.clone(),
        ..Default::default()
    };
    let mut index: HashMap<u32, usize> = HashMap::default();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for t in 0..tris.len() as u32 {
        let root = find(&mut parent, t);
        let k = *index.entry(root).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[k].push(t);
    }
    for group in &groups {
        let mine: std::collections::HashSet<u32> = group.iter().copied().collect();
        // The cell's border: its triangles' edges whose twin is not in the cell.
        let mut next: HashMap<u32, u32> = HashMap::default();
        let mut edges = 0;
        for &t in group {
            let tri = tris[t as usize];
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let inside = tri_of.get(&(b, a)).is_some_and(|u| mine.contains(u));
                if !inside {
                    edges += 1;
                    if next.insert(a, b).is_some() {
                        return (hertel_mehlhorn(verts, tris), true);
                    }
                }
            }
        }
        let start = *next.keys().min().unwrap();
        let mut cycle = vec![start];
        let mut cur = next[&start];
        while cur != start {
            cycle.push(cur);
            cur = match next.get(&cur) {
                Some(&n) if cycle.len() <= edges => n,
                _ => return (hertel_mehlhorn(verts, tris), true),
            };
        }
        let n = cycle.len();
        let convex = (0..n).all(|k| {
            let (p, v, q) = (cycle[k], cycle[(k + 1) % n], cycle[(k + 2) % n]);
            within(dir(p, v), dir(v, q), 0.0) || tau > 0.0
        });
        if n != edges || !convex {
            return (hertel_mehlhorn(verts, tris), true);
        }
        out.polys.push(cycle);
        out.tris
            .push(group.iter().map(|&t| tris[t as usize]).collect());
    }
    (out, false)
}
