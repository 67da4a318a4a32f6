//! A* over polygons, string pulling, and the scene-coordinates convenience.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;
use tessera_navmesh::NONE;

use crate::geom::{cross2, dist3, finite3, mid3, plan_dist2, V3};
use crate::Query;

/// The polygons a path crosses, start polygon first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Corridor {
    /// Polygon ids in walking order; consecutive ones share a portal or a link.
    pub polys: Vec<u32>,
    /// Whether the corridor ends at the requested end polygon. When it does not, `polys` leads
    /// to the polygon whose entry point came closest to the end (empty for invalid input).
    pub found: bool,
}

/// A path in the scene's own coordinates, as [`Query::path`] answers it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathAnswer {
    /// Whether both ends snapped to the mesh and a path joins them.
    pub found: bool,
    /// Sum of the 3D lengths of the segments between waypoints (world units); 0 if not found.
    pub length: f64,
    /// The straight path's corners, scene coordinates and up axis; empty if not found.
    pub waypoints: Vec<[f64; 3]>,
}

/// A search node: one per polygon reached.
#[derive(Clone, Copy)]
struct Node {
    /// Cost from the start to `pos`.
    g: f64,
    /// `g` plus the heuristic: the heap key.
    f: f64,
    parent: u32,
    /// Where the search entered the polygon: the start point, or a portal's midpoint.
    pos: V3,
    closed: bool,
}

/// A heap entry; ordered so that `BinaryHeap` pops the smallest `f`, then the smallest id.
#[derive(Clone, Copy, PartialEq)]
struct Open {
    f: f64,
    poly: u32,
}

impl Eq for Open {}

impl Ord for Open {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .f
            .total_cmp(&self.f)
            .then_with(|| other.poly.cmp(&self.poly))
    }
}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Query<'_> {
    /// Every way out of polygon `p`: (polygon across, left, right) for each portal, then for
    /// each link, with left and right as seen walking out of `p`. Consecutive edges with the
    /// same polygon across (a straight side split by a vertex) make one portal.
    fn crossings(&self, p: u32) -> Vec<(u32, V3, V3)> {
        let pts = self.poly_points(p);
        let neis: Vec<u32> = self.mesh.poly_neighbours(p).collect();
        let n = pts.len();
        let mut out = Vec::new();
        // Start the walk round the polygon where the neighbour changes, so no run is cut.
        let first = (0..n)
            .find(|&k| neis[k] != neis[(k + n - 1) % n])
            .unwrap_or(0);
        let mut k = 0;
        while k < n {
            let i = (first + k) % n;
            let nb = neis[i];
            let mut run = 1;
            while k + run < n && neis[(first + k + run) % n] == nb {
                run += 1;
            }
            if nb != NONE && nb != p && self.valid_poly(nb) {
                // Walking out across edges a -> b of a counter-clockwise polygon, b is on the
                // left.
                out.push((nb, pts[(i + run) % n], pts[i]));
            }
            k += run;
        }
        for l in self.mesh.poly_links(p) {
            let to = l.to.to_native();
            if to != p && (to as usize) < self.mesh.polys.len() {
                let (left, right) =
                    self.orient_link(&pts, l.a.map(|c| c.to_native()), l.b.map(|c| c.to_native()));
                out.push((to, left, right));
            }
        }
        out
    }

    /// A link's segment as (left, right) walking out of the polygon `pts`: the polygon lies on
    /// the right of right -> left, as it does for its own edges.
    fn orient_link(&self, pts: &[V3], a: V3, b: V3) -> (V3, V3) {
        let n = pts.len() as f64;
        let c = [0, 1, 2].map(|k| (pts.iter().map(|v| v[k] as f64).sum::<f64>() / n) as f32);
        if cross2(a, b, c) >= 0.0 {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// The crossing from polygon `from` into polygon `to`: (left, right) as seen walking from
    /// `from` into `to`, heights on `from`'s side. A shared edge is preferred to a link. `None`
    /// when the two are not connected.
    pub fn portal(&self, from: u32, to: u32) -> Option<([f32; 3], [f32; 3])> {
        if !self.valid_poly(from) || !self.valid_poly(to) {
            return None;
        }
        self.crossings(from)
            .into_iter()
            .find(|c| c.0 == to)
            .map(|(_, l, r)| (l, r))
    }

    /// A* from `start` (on `start_poly`) to `end` (on `end_poly`) over polygons, portals and
    /// links.
    ///
    /// As in Detour, a polygon's node sits where the search entered it (the midpoint of the
    /// portal or link segment crossed), the cost of a step is the 3D distance between
    /// consecutive node positions (plus the distance to `end` on entering `end_poly`), and the
    /// heuristic is the 3D distance from a node to `end`, which never overestimates. Each
    /// polygon is expanded once. Ties in the open list go to the smaller polygon id, so the
    /// answer is deterministic. When `end_poly` cannot be reached, `found` is false and the
    /// corridor leads to the node closest to `end`.
    pub fn find_path(
        &self,
        start_poly: u32,
        start: [f32; 3],
        end_poly: u32,
        end: [f32; 3],
    ) -> Corridor {
        if !self.valid_poly(start_poly)
            || !self.valid_poly(end_poly)
            || !finite3(start)
            || !finite3(end)
        {
            return Corridor::default();
        }
        if start_poly == end_poly {
            return Corridor {
                polys: vec![start_poly],
                found: true,
            };
        }
        let mut nodes: FxHashMap<u32, Node> = FxHashMap::default();
        let mut open = BinaryHeap::new();
        let h0 = dist3(start, end);
        nodes.insert(
            start_poly,
            Node {
                g: 0.0,
                f: h0,
                parent: NONE,
                pos: start,
                closed: false,
            },
        );
        open.push(Open {
            f: h0,
            poly: start_poly,
        });
        let mut closest = (h0, start_poly);
        while let Some(Open { f, poly }) = open.pop() {
            let node = nodes[&poly];
            if node.closed || node.f != f {
                continue; // a stale entry
            }
            nodes.get_mut(&poly).expect("node exists").closed = true;
            if poly == end_poly {
                return Corridor {
                    polys: trace_back(&nodes, poly),
                    found: true,
                };
            }
            for (nb, left, right) in self.crossings(poly) {
                let pos = mid3(left, right);
                let h = dist3(pos, end);
                let mut g = node.g + dist3(node.pos, pos);
                if nb == end_poly {
                    g += h;
                }
                let f = if nb == end_poly { g } else { g + h };
                match nodes.get_mut(&nb) {
                    Some(n) if n.closed || n.f <= f => continue,
                    Some(n) => {
                        *n = Node {
                            g,
                            f,
                            parent: poly,
                            pos,
                            closed: false,
                        }
                    }
                    None => {
                        nodes.insert(
                            nb,
                            Node {
                                g,
                                f,
                                parent: poly,
                                pos,
                                closed: false,
                            },
                        );
                    }
                }
                open.push(Open { f, poly: nb });
                if (h, nb) < closest {
                    closest = (h, nb);
                }
            }
        }
        Corridor {
            polys: trace_back(&nodes, closest.1),
            found: false,
        }
    }

    /// String pulling: the shortest path in plan from `start` to `end` through the portals of
    /// `corridor` (shared edges, link segments), by the funnel algorithm.
    ///
    /// `start` is moved onto the corridor's first polygon and `end` onto its last
    /// ([`Query::closest_point`]), so the first waypoint is the start and the last the end,
    /// both at the surface height. Corners are portal vertices, at the height of the polygon
    /// walked out of. Consecutive equal points are merged (a path within one point is one
    /// waypoint). A corridor whose consecutive polygons are not connected is cut before the
    /// first gap; an empty or invalid corridor gives no waypoints.
    pub fn straight_path(&self, start: [f32; 3], end: [f32; 3], corridor: &[u32]) -> Vec<[f32; 3]> {
        if corridor.is_empty()
            || !finite3(start)
            || !finite3(end)
            || !corridor.iter().all(|&p| self.valid_poly(p))
        {
            return Vec::new();
        }
        let mut portals: Vec<(V3, V3)> = Vec::with_capacity(corridor.len() + 1);
        let first = corridor[0];
        let Some(s) = self.closest_point(first, start) else {
            return Vec::new();
        };
        portals.push((s, s));
        let mut last = first;
        for w in corridor.windows(2) {
            match self.portal(w[0], w[1]) {
                Some(p) => {
                    portals.push(p);
                    last = w[1];
                }
                None => break,
            }
        }
        let Some(e) = self.closest_point(last, end) else {
            return Vec::new();
        };
        portals.push((e, e));
        self.funnel(&portals)
    }

    /// The funnel over `portals` (first and last are the start and end as degenerate portals).
    fn funnel(&self, portals: &[(V3, V3)]) -> Vec<V3> {
        let eps2 = (self.eps as f64) * (self.eps as f64);
        let same = |a: V3, b: V3| plan_dist2(a, b) <= eps2;
        let mut out: Vec<V3> = vec![portals[0].0];
        let push = |out: &mut Vec<V3>, p: V3| {
            let last = *out.last().expect("never empty");
            if !(same(last, p) && last[2] == p[2]) {
                out.push(p);
            }
        };
        let mut apex = portals[0].0;
        let (mut left, mut right) = (apex, apex);
        let (mut left_i, mut right_i) = (0usize, 0usize);
        let mut i = 1;
        while i < portals.len() {
            let (l, r) = portals[i];
            // The right side tightens when the new right point is not outside the funnel.
            if cross2(apex, right, r) >= 0.0 {
                if same(apex, right) || cross2(apex, left, r) <= 0.0 {
                    right = r;
                    right_i = i;
                } else {
                    // It crosses the left side: the left corner is a waypoint and the new apex.
                    push(&mut out, left);
                    apex = left;
                    (right, right_i) = (apex, left_i);
                    i = left_i + 1;
                    continue;
                }
            }
            if cross2(apex, left, l) <= 0.0 {
                if same(apex, left) || cross2(apex, right, l) >= 0.0 {
                    left = l;
                    left_i = i;
                } else {
                    push(&mut out, right);
                    apex = right;
                    (left, left_i) = (apex, right_i);
                    i = right_i + 1;
                    continue;
                }
            }
            i += 1;
        }
        let end = portals[portals.len() - 1].0;
        push(&mut out, end);
        out
    }

    /// A path between two scene points (the scene's own coordinates and up axis).
    ///
    /// Both ends snap to the mesh with [`Query::nearest`] in the box [`Query::snap_extent`];
    /// then [`Query::find_path`] and [`Query::straight_path`]. The waypoints are converted back
    /// to scene coordinates ([`Query::to_scene`]); the length is the sum of their 3D segment
    /// lengths. An end that
    /// snaps to no polygon, or no path between them, is an answer: `found` false, length 0,
    /// no waypoints.
    pub fn path(&self, from_scene: [f64; 3], to_scene: [f64; 3]) -> PathAnswer {
        let (a, b) = (
            self.frame.to_internal(from_scene),
            self.frame.to_internal(to_scene),
        );
        let ext = self.snap_extent();
        let (Some((sp, s)), Some((ep, e))) = (self.nearest(a, ext), self.nearest(b, ext)) else {
            return PathAnswer::default();
        };
        let corridor = self.find_path(sp, s, ep, e);
        if !corridor.found {
            return PathAnswer::default();
        }
        let pts = self.straight_path(s, e, &corridor.polys);
        if pts.is_empty() {
            return PathAnswer::default();
        }
        let waypoints: Vec<[f64; 3]> = pts.iter().map(|&p| self.to_scene(p)).collect();
        let length = waypoints
            .windows(2)
            .map(|w| {
                let d = [0, 1, 2].map(|k| w[1][k] - w[0][k]);
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
            })
            .sum();
        PathAnswer {
            found: true,
            length,
            waypoints,
        }
    }
}

/// The polygons from the search's start to `last`, following parents.
fn trace_back(nodes: &FxHashMap<u32, Node>, last: u32) -> Vec<u32> {
    let mut out = vec![last];
    let mut cur = last;
    while let Some(n) = nodes.get(&cur) {
        if n.parent == NONE || out.len() > nodes.len() {
            break;
        }
        cur = n.parent;
        out.push(cur);
    }
    out.reverse();
    out
}
