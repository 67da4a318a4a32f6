//! Walking a plan segment over the mesh.

use rustc_hash::FxHashSet;
use tessera_navmesh::NONE;

use crate::geom::{closest_on_segment, finite3, inside, plan_len, V3};
use crate::Query;

/// What [`Query::raycast`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Raycast {
    /// 1.0 when the end is reached over the mesh; otherwise the fraction of `start..end` (in
    /// plan) at which the segment leaves the mesh.
    pub t: f32,
    /// The polygons visited, in order, the start polygon first.
    pub polys: Vec<u32>,
    /// The plan unit normal, pointing out of the mesh, of the wall edge that stopped the ray;
    /// `None` when the end was reached (or the start was not on the start polygon).
    pub hit_edge_normal: Option<[f32; 2]>,
}

/// The ray in plan: `s + t d`, `t` in `[0, 1]`.
#[derive(Clone, Copy)]
struct Ray {
    sx: f64,
    sy: f64,
    dx: f64,
    dy: f64,
    /// Plan length of `d`.
    len: f64,
}

impl Ray {
    fn at(&self, t: f64) -> V3 {
        [
            (self.sx + t * self.dx) as f32,
            (self.sy + t * self.dy) as f32,
            0.0,
        ]
    }
}

/// Where a ray leaves a polygon.
struct Exit {
    /// The ray parameter of the crossing.
    at: f64,
    /// Whether the end lies on the polygon (within the tolerance): nothing to leave.
    reached: bool,
    /// The leaving edges that hold the crossing point, the first crossed first.
    ties: Vec<usize>,
}

/// Most polygons gathered around one crossing point when the way on is not obvious.
const FAN_LIMIT: usize = 64;

impl Query<'_> {
    /// Where the ray, inside polygon `pts` at parameter `t`, leaves it.
    ///
    /// The ray leaves through the edge it first gets more than the tolerance outside of (so a
    /// ray along an edge, or a hair off parallel to it, does not leave through it); the exit
    /// is where it crosses that edge's line (never before `t`), and `ties` are the leaving
    /// edges that hold the exit point, in edge order. `None` when the ray leaves through no
    /// edge (a degenerate polygon).
    fn exit(&self, pts: &[V3], ray: &Ray, t: f64, tol: f64) -> Option<Exit> {
        let n = pts.len();
        let eps = self.eps as f64;
        // (edge, exact crossing, crossing of the line pushed out by the tolerance)
        let mut leaving: Vec<(usize, f64, f64)> = Vec::with_capacity(n);
        for i in 0..n {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            let (ex, ey) = (b[0] as f64 - a[0] as f64, b[1] as f64 - a[1] as f64);
            let elen = (ex * ex + ey * ey).sqrt();
            // Inside is to the left of a -> b; the ray heads out when it turns right of it.
            // `num / elen` is the start's distance inside the line, `den / elen` its change
            // per unit of `t`.
            let den = ex * ray.dy - ey * ray.dx;
            if den >= -1e-12 * elen * ray.len {
                continue;
            }
            let num = ex * (ray.sy - a[1] as f64) - ey * (ray.sx - a[0] as f64);
            leaving.push((i, (-num / den).max(t), ((-num - eps * elen) / den).max(t)));
        }
        let first = leaving
            .iter()
            .min_by(|x, y| x.2.total_cmp(&y.2).then(x.0.cmp(&y.0)))?;
        let at = first.1.min(1.0);
        let reached = first.2 >= 1.0 || at >= 1.0 - tol;
        let q = ray.at(at);
        // Collinear edges share a line but not the crossing point: keep those that hold it.
        let mut ties: Vec<usize> = leaving
            .iter()
            .filter(|e| closest_on_segment(q, pts[e.0], pts[(e.0 + 1) % n]).1 <= eps * eps)
            .map(|e| e.0)
            .collect();
        if ties.is_empty() {
            ties.push(first.0);
        }
        // The edge found first leads (when it holds the point).
        ties.sort_by_key(|&i| i != first.0);
        Some(Exit { at, reached, ties })
    }

    /// The polygons around the plan point `q` reachable from `cur` through portals and links
    /// that touch `q`, each with the chain of polygons leading to it (`cur` excluded).
    fn fan(&self, cur: u32, q: V3) -> Vec<(u32, Vec<u32>)> {
        let eps = self.eps as f64;
        let touches = |a: V3, b: V3| closest_on_segment(q, a, b).1 <= eps * eps;
        let mut seen: FxHashSet<u32> = FxHashSet::default();
        seen.insert(cur);
        let mut out: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut queue: std::collections::VecDeque<(u32, Vec<u32>)> = [(cur, Vec::new())].into();
        while let Some((p, chain)) = queue.pop_front() {
            let pts = self.poly_corners(p);
            let n = pts.len();
            let mut next: Vec<u32> = Vec::new();
            for (i, nb) in self.mesh.poly_neighbours(p).enumerate() {
                if nb != NONE && self.valid_poly(nb) && touches(pts[i], pts[(i + 1) % n]) {
                    next.push(nb);
                }
            }
            // Stair links only: an off-mesh link is a jump a ray does not take.
            for l in (self.mesh.poly_links(p).iter()).filter(|l| l.off_mesh.to_native() == NONE) {
                let (to, a, b) = (
                    l.to.to_native(),
                    l.a.map(|c| c.to_native()),
                    l.b.map(|c| c.to_native()),
                );
                if self.valid_poly(to) && touches(a, b) && inside(self.poly_corners(to), q, eps) {
                    next.push(to);
                }
            }
            for nb in next {
                if out.len() >= FAN_LIMIT || !seen.insert(nb) {
                    continue;
                }
                let mut c = chain.clone();
                c.push(nb);
                out.push((nb, c.clone()));
                queue.push_back((nb, c));
            }
        }
        out
    }

    /// Walks the plan segment `start..end` from polygon `start_poly`, crossing portals (and
    /// links whose segment holds the crossing point and lead to a polygon that holds it too,
    /// such as stair steps), until it reaches `end` or meets an edge with nothing across.
    ///
    /// Heights are ignored: the walk is in plan, and a ray running along the mesh's boundary
    /// stays on the mesh. Where the ray passes through a vertex, or leaves a polygon through
    /// a corner, the polygons around that point are searched for one the ray goes on into.
    /// `start` must lie on `start_poly` (within [`Query::tolerance`]); if it does not, the
    /// answer is `t = 0` with no normal.
    pub fn raycast(&self, start_poly: u32, start: [f32; 3], end: [f32; 3]) -> Raycast {
        if !self.valid_poly(start_poly) || !finite3(start) || !finite3(end) {
            return Raycast::default();
        }
        let eps = self.eps as f64;
        let mut polys = vec![start_poly];
        if !inside(self.poly_corners(start_poly), start, eps) {
            return Raycast {
                t: 0.0,
                polys,
                hit_edge_normal: None,
            };
        }
        let len = plan_len(start, end);
        let reached = |polys: Vec<u32>| Raycast {
            t: 1.0,
            polys,
            hit_edge_normal: None,
        };
        if len <= eps {
            return reached(polys);
        }
        let ray = Ray {
            sx: start[0] as f64,
            sy: start[1] as f64,
            dx: end[0] as f64 - start[0] as f64,
            dy: end[1] as f64 - start[1] as f64,
            len,
        };
        // Two crossings closer than `eps` along the ray are at the same place.
        let tol = eps / len;
        let mut visited = FxHashSet::default();
        visited.insert(start_poly);
        let mut cur = start_poly;
        let mut t = 0.0f64;
        // Each step enters a new polygon or moves on along the ray; on a hostile mesh whose
        // polygons overlap, this bounds the walk all the same.
        let mut steps_left = 2 * self.mesh.polys.len() + 8;
        loop {
            steps_left = steps_left.saturating_sub(1);
            let pts = self.poly_corners(cur);
            let Some(Exit {
                at: exit,
                reached: done,
                ties,
            }) = self.exit(pts, &ray, t, tol)
            else {
                return reached(polys);
            };
            if done {
                return reached(polys);
            }
            // Usually the ray leaves through one edge and the polygon across it is next.
            let neis: Vec<u32> = self.mesh.poly_neighbours(cur).collect();
            let across = ties
                .iter()
                .map(|&i| neis[i])
                .find(|&nb| nb != NONE && self.valid_poly(nb) && !visited.contains(&nb));
            if let Some(nb) = across {
                visited.insert(nb);
                polys.push(nb);
                cur = nb;
                t = exit;
                continue;
            }
            // A wall, a link, or a corner: look around the crossing point for a polygon the ray
            // goes on into (one it leaves later than here), the farthest-reaching first.
            let q = ray.at(exit);
            let mut best: Option<(f64, Vec<u32>)> = None;
            for (p, chain) in self.fan(cur, q) {
                let ppts = self.poly_corners(p);
                if !inside(ppts, q, eps) {
                    continue;
                }
                let reach = self.exit(ppts, &ray, exit, tol).map_or(1.0, |e| {
                    if e.reached {
                        1.0
                    } else {
                        e.at
                    }
                });
                if reach > exit + tol && best.as_ref().is_none_or(|b| reach > b.0) {
                    best = Some((reach, chain));
                }
            }
            match best.filter(|_| steps_left > 0) {
                Some((_, chain)) => {
                    for &p in &chain {
                        visited.insert(p);
                    }
                    cur = *chain.last().expect("a chain holds its polygon");
                    polys.extend(chain);
                    t = exit;
                }
                None => {
                    let i = ties[0];
                    let (a, b) = (pts[i], pts[(i + 1) % pts.len()]);
                    let (ex, ey) = (b[0] as f64 - a[0] as f64, b[1] as f64 - a[1] as f64);
                    let elen = (ex * ex + ey * ey).sqrt();
                    let normal = if elen > 0.0 {
                        [(ey / elen) as f32, (-ex / elen) as f32]
                    } else {
                        [0.0, 0.0]
                    };
                    return Raycast {
                        t: exit as f32,
                        polys,
                        hit_edge_normal: Some(normal),
                    };
                }
            }
        }
    }
}
