//! A* over polygons, string pulling, and the scene-coordinates convenience.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;
use tessera_navmesh::NONE;

use crate::geom::{
    closest_on_segment, cross2, dist3, finite3, lerp3, mid3, plan_dist2, plan_len, V3,
};
use crate::Query;

/// The polygons a path crosses, start polygon first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Corridor {
    /// Polygon ids in walking order; consecutive ones share a portal or a link.
    pub polys: Vec<u32>,
    /// Whether the corridor ends at the requested end polygon. When it does not, `polys` leads
    /// to the polygon reached whose closest point comes nearest the end (empty for invalid
    /// input).
    pub found: bool,
}

/// A path in the scene's own coordinates, as [`Query::path`] answers it.
///
/// Serialized (serde) as `{"found":..,"length":..,"links":[..],"waypoints":[[x,y,z],..]}`,
/// the one JSON form of a path answer: `tessera path --json` prints it and the viewer's
/// `/api/path` sends it. The fields are declared in that (alphabetical) order because the
/// order is part of the output; do not reorder them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PathAnswer {
    /// Whether both ends snapped to the mesh and a path joins them.
    pub found: bool,
    /// Sum of the 3D lengths of the segments between waypoints (world units), link crossings
    /// included; 0 if not found.
    pub length: f64,
    /// Where the path takes a link, as in [`StraightPath::links`]: ascending indices `i` such
    /// that `waypoints[i] -> waypoints[i + 1]` is a step across a link.
    pub links: Vec<usize>,
    /// The straight path's corners, scene coordinates and up axis; empty if not found.
    pub waypoints: Vec<[f64; 3]>,
}

/// A straight path in the internal frame, with its link crossings marked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StraightPath {
    /// The waypoints, start first and end last.
    pub points: Vec<[f32; 3]>,
    /// Ascending indices `i` such that `points[i] -> points[i + 1]` steps across a link:
    /// `points[i]` lies on the link's segment on the side of the polygon walked out of (at its
    /// height) and `points[i + 1]` on the landing segment of the polygon entered (at its
    /// height). That segment may pass over a plan gap, off the mesh; every other segment stays
    /// on the mesh.
    pub links: Vec<usize>,
}

/// One way out of a polygon: the polygon across, and the segment crossed as seen walking out.
#[derive(Clone, Copy)]
struct Way {
    to: u32,
    left: V3,
    right: V3,
    /// A link rather than a shared edge.
    link: bool,
}

/// The segments a corridor passes through, in walking order, as (left, right) pairs: the
/// start and the end as degenerate segments first and last, shared edges, and for a link its
/// segment on the side walked out of followed by its landing segment on the side entered.
struct Gates {
    portals: Vec<(V3, V3)>,
    /// Indices `k` where `portals[k]` is a link's segment and `portals[k + 1]` its landing.
    links: Vec<usize>,
}

/// A search node: one per polygon reached.
///
/// Besides its entry point, a node keeps the end of a string pulled from the start to it: the
/// last corner (`apex`) with its cost, and the wedge of directions from the apex that pass
/// through every portal since the apex (bounded by the rays `apex -> left` and
/// `apex -> right`). Costs measured from the apex through the wedge are those of the pulled
/// path, not of a chain of entry points, so a large polygon crossed at an angle costs what
/// walking across it costs.
#[derive(Clone, Copy)]
struct Node {
    /// The cost from the start to `pos` plus the distance from `pos` to the end: the heap key.
    /// Never lower than the parent's (see [`Query::find_path`]).
    f: f64,
    parent: u32,
    /// Where the search entered the polygon: the start point, or the point of the entry
    /// portal on the way from the apex to the end (see [`through`]).
    pos: V3,
    /// The last corner of the pulled path to `pos` (the start, a portal end or a link point).
    apex: V3,
    /// Cost from the start to `apex`.
    apex_g: f64,
    /// Points on the left and right rays of the wedge seen from `apex` (equal to `apex` when
    /// the apex lies on this polygon: every direction into it is open).
    left: V3,
    right: V3,
    closed: bool,
}

/// A* buffers kept per thread between queries ([`Query::find_path`]).
#[derive(Default)]
struct Search {
    nodes: FxHashMap<u32, Node>,
    open: BinaryHeap<Open>,
    ways: WayScratch,
}

thread_local! {
    static SEARCH: std::cell::RefCell<Search> = std::cell::RefCell::new(Search::default());
}

/// Node tables larger than this are dropped after a query rather than kept for the next.
const KEEP_NODES: usize = 1 << 16;

/// Buffers for [`Query::ways_into`].
#[derive(Default)]
struct WayScratch {
    pts: Vec<V3>,
    neis: Vec<u32>,
    out: Vec<Way>,
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
    /// Every way out of polygon `p`: each portal, then each link, with left and right as seen
    /// walking out of `p`. Consecutive edges with the same polygon across (a straight side
    /// split by a vertex) make one portal.
    fn ways(&self, p: u32) -> Vec<Way> {
        let mut scratch = WayScratch::default();
        self.ways_into(p, &mut scratch);
        scratch.out
    }

    /// [`Query::ways`] into `scratch.out`, reusing its buffers (A* calls it per expansion).
    fn ways_into(&self, p: u32, scratch: &mut WayScratch) {
        let WayScratch { pts, neis, out } = scratch;
        self.poly_points_into(p, pts);
        neis.clear();
        neis.extend(self.mesh.poly_neighbours(p));
        out.clear();
        let n = pts.len();
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
                out.push(Way {
                    to: nb,
                    left: pts[(i + run) % n],
                    right: pts[i],
                    link: false,
                });
            }
            k += run;
        }
        for l in self.mesh.poly_links(p) {
            let to = l.to.to_native();
            if to != p && (to as usize) < self.mesh.polys.len() {
                let (left, right) =
                    self.orient_link(pts, l.a.map(|c| c.to_native()), l.b.map(|c| c.to_native()));
                out.push(Way {
                    to,
                    left,
                    right,
                    link: true,
                });
            }
        }
    }

    /// A link's segment as (left, right) walking out of the polygon `pts`: the polygon lies on
    /// the left of right -> left, as it does for its own edges walked out across.
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
        self.way(from, to).map(|w| (w.left, w.right))
    }

    /// The first way from `from` into `to` ([`Query::ways`] order: shared edges first).
    fn way(&self, from: u32, to: u32) -> Option<Way> {
        self.way_with(from, to, &mut WayScratch::default())
    }

    /// [`Query::way`] with reused buffers.
    fn way_with(&self, from: u32, to: u32, scratch: &mut WayScratch) -> Option<Way> {
        if !self.valid_poly(from) || !self.valid_poly(to) {
            return None;
        }
        self.ways_into(from, scratch);
        scratch.out.iter().copied().find(|w| w.to == to)
    }

    /// Where a walk from `from` into `to` lands when it takes a link (`to` and `from` share no
    /// edge): the landing segment on `to`'s side, (left, right) as seen walking into `to`, at
    /// `to`'s heights. `None` when the two are joined by a shared edge, or not at all.
    ///
    /// The landing segment is the reverse link's segment (from `to` back to `from`; of
    /// several, the one whose plan midpoint is nearest the crossing segment's). A link with
    /// no reverse lands on the points of `to` closest to the crossing segment's ends.
    pub fn landing(&self, from: u32, to: u32) -> Option<([f32; 3], [f32; 3])> {
        let w = self.way(from, to)?;
        w.link.then(|| self.land(from, w))
    }

    /// The landing segment of the link `w` out of `from` (see [`Query::landing`]).
    fn land(&self, from: u32, w: Way) -> (V3, V3) {
        let mid = mid3(w.left, w.right);
        let off = |x: &Way| plan_dist2(mid3(x.left, x.right), mid);
        let back = self
            .ways(w.to)
            .into_iter()
            .filter(|x| x.link && x.to == from)
            .min_by(|x, y| off(x).total_cmp(&off(y)));
        match back {
            // Walking back out of `to` sees the segment's sides swapped.
            Some(x) => (x.right, x.left),
            None => {
                let onto = |p: V3| self.closest_point(w.to, p).unwrap_or(p);
                (onto(w.left), onto(w.right))
            }
        }
    }

    /// A* from `start` (on `start_poly`) to `end` (on `end_poly`) over polygons, portals and
    /// links.
    ///
    /// Costs are those of the string pulled along the way searched, not of a chain of one
    /// point per polygon (Detour's portal midpoints): a node keeps the last corner of that
    /// string (the apex, with its cost from the start) and the wedge of directions from the
    /// apex that pass through every portal since. Entering a neighbour, the part of the portal
    /// inside the wedge is seen from the apex; a part outside it is reached by bending at the
    /// wedge's corner on that side, which becomes the new apex (see [`enter`]). A node's f is
    /// the cost to its apex plus the shortest way from there through its part of the portal to
    /// `end` (3D distances), so on few large polygons, where
    /// a point per portal misjudges a crossing by many metres, the search still compares the
    /// corridors by their pulled lengths. A link is a jump: the string is pulled to the point
    /// of its segment on the way, which becomes the apex.
    ///
    /// One node per polygon holds one apex and wedge, the best found so far; a polygon
    /// reached again at a lower f is updated and, if it was expanded already, reopened (as
    /// Detour does). f never decreases from a node to its children, so an update can never
    /// make a polygon the parent of its own ancestor.
    /// Ties in the open list go to the smaller polygon id, so the answer is deterministic.
    /// When `end_poly` cannot be reached, `found` is false and the corridor leads to the
    /// polygon reached that comes closest to `end`; when it lies in another connected
    /// component ([`tessera_navmesh::Poly::component`]), nothing is searched: `found` is false
    /// and the corridor is the start polygon alone.
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
        let component = |p: u32| self.mesh.polys[p as usize].component.to_native();
        if start_poly == end_poly || component(start_poly) != component(end_poly) {
            return Corridor {
                polys: vec![start_poly],
                found: start_poly == end_poly,
            };
        }
        SEARCH.with(|search| {
            let mut search = search.borrow_mut();
            let Search { nodes, open, ways } = &mut *search;
            nodes.clear();
            open.clear();
            let corridor = self.search(start_poly, start, end_poly, end, nodes, open, ways);
            // Keep the buffers for the next query on this thread, but not a huge search's.
            if nodes.capacity() > KEEP_NODES {
                *nodes = FxHashMap::default();
                *open = BinaryHeap::new();
            }
            corridor
        })
    }

    /// The A* of [`Query::find_path`] over the given (empty) buffers.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        start_poly: u32,
        start: [f32; 3],
        end_poly: u32,
        end: [f32; 3],
        nodes: &mut FxHashMap<u32, Node>,
        open: &mut BinaryHeap<Open>,
        scratch: &mut WayScratch,
    ) -> Corridor {
        let h0 = dist3(start, end);
        nodes.insert(
            start_poly,
            Node {
                f: h0,
                parent: NONE,
                pos: start,
                apex: start,
                apex_g: 0.0,
                left: start,
                right: start,
                closed: false,
            },
        );
        open.push(Open {
            f: h0,
            poly: start_poly,
        });
        let eps2 = (self.eps as f64) * (self.eps as f64);
        while let Some(Open { f, poly }) = open.pop() {
            let node = nodes[&poly];
            if node.closed || node.f != f {
                continue; // a stale entry
            }
            nodes.get_mut(&poly).expect("node exists").closed = true;
            if poly == end_poly {
                return Corridor {
                    polys: trace_back(nodes, poly),
                    found: true,
                };
            }
            self.ways_into(poly, scratch);
            for &Way {
                to: nb,
                left,
                right,
                link,
            } in &scratch.out
            {
                // A step never lowers f: a polygon already at or below this node's f (its
                // parent, the polygons expanded before it) cannot be improved from here.
                if nodes.get(&nb).is_some_and(|n| n.f <= node.f) {
                    continue;
                }
                let mut next = enter(&node, (left, right), end, eps2);
                if link {
                    // A link is a jump: the string is pulled to the point where it is taken,
                    // and every direction is open from there.
                    next.apex_g += dist3(next.apex, next.pos);
                    next.apex = next.pos;
                    (next.left, next.right) = (next.pos, next.pos);
                }
                // Costs only grow along the parents (a step never lowers f), so a polygon is
                // updated only for a strictly lower f and can never become the parent of one
                // of its ancestors: parents never form a loop.
                next.f = next.f.max(node.f);
                next.parent = poly;
                let f = next.f;
                match nodes.get_mut(&nb) {
                    // A cheaper way to a polygon updates it and reopens it if it was expanded
                    // (as Detour does): costs depend on where a polygon is entered, so the
                    // first way found to a large polygon is not always the best.
                    Some(n) if n.f <= f => continue,
                    Some(n) => *n = next,
                    None => {
                        nodes.insert(nb, next);
                    }
                }
                open.push(Open { f, poly: nb });
            }
        }
        // Not reached: lead to the polygon reached that comes closest to `end` (by its closest
        // point, not its entry point), ties to the smaller id. The node entered nearest `end`
        // gives a first bound; a polygon whose plan box is farther than the best so far is
        // not measured.
        let exact = |poly: u32| {
            self.closest_point(poly, end)
                .map_or(f64::INFINITY, |c| dist3(c, end))
        };
        let first = nodes
            .iter()
            .map(|(&poly, n)| (dist3(n.pos, end), poly))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map_or(start_poly, |(_, poly)| poly);
        let mut closest = (exact(first), first);
        for &poly in nodes.keys() {
            if poly == first || self.plan_box_distance(poly, end) > closest.0 * (1.0 + 1e-6) + 1e-6
            {
                continue;
            }
            let d = exact(poly);
            if (d, poly) < closest {
                closest = (d, poly);
            }
        }
        Corridor {
            polys: trace_back(nodes, closest.1),
            found: false,
        }
    }

    /// String pulling: the shortest path in plan from `start` to `end` through the portals of
    /// `corridor` (shared edges, link segments), by the funnel algorithm; the points of
    /// [`Query::straight_path_with_links`].
    pub fn straight_path(&self, start: [f32; 3], end: [f32; 3], corridor: &[u32]) -> Vec<[f32; 3]> {
        self.straight_path_with_links(start, end, corridor).points
    }

    /// String pulling along `corridor` by the funnel algorithm, with the links it takes marked.
    ///
    /// `start` is moved onto the corridor's first polygon and `end` onto its last
    /// ([`Query::closest_point`]), so the first waypoint is the start and the last the end,
    /// both at the surface height. The corridor's shared edges are portals. A link is crossed
    /// by a step from its segment on the side walked out of ([`Query::portal`]) to its landing
    /// segment on the side entered ([`Query::landing`]): both are portals of the funnel, one
    /// after the other, so the path is the shortest in plan that passes through every portal
    /// in turn, and it bends at the gap between a link's two segments only where it must. The
    /// waypoints where it meets the two segments (at each one's height) are the crossing and
    /// the landing, and [`StraightPath::links`] marks the crossing. Corners are portal
    /// vertices, at the height of their portal. Consecutive equal points are merged (a path
    /// within one point is one waypoint). A corridor whose consecutive polygons are not
    /// connected is cut before the first gap; an empty or invalid corridor gives no waypoints.
    pub fn straight_path_with_links(
        &self,
        start: [f32; 3],
        end: [f32; 3],
        corridor: &[u32],
    ) -> StraightPath {
        let Some(gates) = self.gates(start, end, corridor) else {
            return StraightPath::default();
        };
        let corners = self.funnel(&gates.portals);
        self.mark_links(&gates, &corners)
    }

    /// The corridor's centre line: the start, the midpoint of each portal and, for a link, of
    /// its segment and then of its landing segment, and the end; ends and cut as in
    /// [`Query::straight_path_with_links`], link crossings marked the same way. A reference
    /// the straight path is never longer than in plan.
    pub fn centre_line(&self, start: [f32; 3], end: [f32; 3], corridor: &[u32]) -> StraightPath {
        let Some(gates) = self.gates(start, end, corridor) else {
            return StraightPath::default();
        };
        StraightPath {
            points: gates.portals.iter().map(|&(l, r)| mid3(l, r)).collect(),
            links: gates.links,
        }
    }

    /// The portals of `corridor` from `start` to `end` (see [`Gates`]); `None` for an empty
    /// or invalid corridor or non-finite ends.
    fn gates(&self, start: V3, end: V3, corridor: &[u32]) -> Option<Gates> {
        if corridor.is_empty()
            || !finite3(start)
            || !finite3(end)
            || !corridor.iter().all(|&p| self.valid_poly(p))
        {
            return None;
        }
        let s = self.closest_point(corridor[0], start)?;
        let mut gates = Gates {
            portals: Vec::with_capacity(corridor.len() + 1),
            links: Vec::new(),
        };
        gates.portals.push((s, s));
        let mut last = corridor[0];
        let mut scratch = WayScratch::default();
        for w in corridor.windows(2) {
            let Some(way) = self.way_with(w[0], w[1], &mut scratch) else {
                break;
            };
            gates.portals.push((way.left, way.right));
            if way.link {
                gates.links.push(gates.portals.len() - 1);
                gates.portals.push(self.land(w[0], way));
            }
            last = w[1];
        }
        let e = self.closest_point(last, end)?;
        gates.portals.push((e, e));
        Some(gates)
    }

    /// The funnel over `portals` (first and last are the start and end as degenerate
    /// portals): the corners in order, each with the index of the portal it is a vertex of
    /// (non-decreasing; 0 for the start, the last index for the end). Equal consecutive
    /// corners are not merged here.
    fn funnel(&self, portals: &[(V3, V3)]) -> Vec<(V3, usize)> {
        let eps2 = (self.eps as f64) * (self.eps as f64);
        let same = |a: V3, b: V3| plan_dist2(a, b) <= eps2;
        let mut out: Vec<(V3, usize)> = vec![(portals[0].0, 0)];
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
                    out.push((left, left_i));
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
                    out.push((right, right_i));
                    apex = right;
                    (left, left_i) = (apex, right_i);
                    i = right_i + 1;
                    continue;
                }
            }
            i += 1;
        }
        let last = portals.len() - 1;
        out.push((portals[last].0, last));
        out
    }

    /// The waypoints: the funnel's `corners` with, for every link, the points where the path
    /// meets its segment and its landing segment put in between, and the crossings marked.
    fn mark_links(&self, gates: &Gates, corners: &[(V3, usize)]) -> StraightPath {
        let eps2 = (self.eps as f64) * (self.eps as f64);
        let mut out = StraightPath::default();
        // Adds `p` unless it repeats the last point; returns its index.
        let push = |pts: &mut Vec<V3>, p: V3| {
            if pts
                .last()
                .is_none_or(|&q| plan_dist2(q, p) > eps2 || q[2] != p[2])
            {
                pts.push(p);
            }
            pts.len() - 1
        };
        push(&mut out.points, corners[0].0);
        // The link segments in walking order: (portal index, is the landing).
        let mut events = gates
            .links
            .iter()
            .flat_map(|&k| [(k, false), (k + 1, true)])
            .peekable();
        let mut crossing = 0;
        for w in corners.windows(2) {
            let ((p, pi), (q, qi)) = (w[0], w[1]);
            // This segment runs from portal `pi` to portal `qi` and meets those in between.
            while let Some((k, landing)) = events.next_if(|&(k, _)| k <= qi) {
                let at = if k == qi {
                    q
                } else if k <= pi {
                    p
                } else {
                    meet(p, q, gates.portals[k])
                };
                let i = push(&mut out.points, at);
                if !landing {
                    crossing = i;
                } else if i > crossing {
                    out.links.push(crossing);
                }
            }
            push(&mut out.points, q);
        }
        out
    }

    /// A path between two scene points (the scene's own coordinates and up axis).
    ///
    /// Both ends snap to the mesh with [`Query::nearest`] in the box [`Query::snap_extent`];
    /// then [`Query::find_path`] and [`Query::straight_path_with_links`]. The waypoints are
    /// converted back to scene coordinates ([`Query::to_scene`]); the length is the sum of
    /// their 3D segment lengths, steps across links included, and `links` marks those steps.
    /// An end that snaps to no polygon, or no path between them, is an answer: `found` false,
    /// length 0, no waypoints.
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
        let straight = self.straight_path_with_links(s, e, &corridor.polys);
        if straight.points.is_empty() {
            return PathAnswer::default();
        }
        let waypoints: Vec<[f64; 3]> = straight.points.iter().map(|&p| self.to_scene(p)).collect();
        // A fold from +0.0: `sum` starts from -0.0, which a path of one waypoint would print.
        let length = waypoints
            .windows(2)
            .map(|w| {
                let d = [0, 1, 2].map(|k| w[1][k] - w[0][k]);
                (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
            })
            .fold(0.0, |total, d| total + d);
        PathAnswer {
            found: true,
            length,
            waypoints,
            links: straight.links,
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

/// The node for the polygon across the portal `(l, r)` (left and right walking out of `from`'s
/// polygon) on the way to `end`: its apex, wedge, entry point and f (`parent` unset).
///
/// The part of the portal inside `from`'s wedge is seen from `from`'s apex, and a path to it
/// keeps that apex. A part outside the wedge on the left is reached by bending at the wedge's
/// left point, which becomes the apex (with the portal's part outside as the wedge); likewise
/// on the right. Of these (at most three) the one with the lowest f is kept: f is the cost to
/// the apex, then the shortest way from it through its part of the portal to `end`.
fn enter(from: &Node, (l, r): (V3, V3), end: V3, eps2: f64) -> Node {
    let a = from.apex;
    // The portal as `l + t (r - l)`, `t` in [0, 1]; the seen part is `lo..=hi`.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    // Where each ray of the wedge crosses the portal's line, when part of it lies outside.
    let mut out_left = None;
    let mut out_right = None;
    // Which wedge ray bounds the seen part at each end (else the portal's own end).
    let (mut lo_ray, mut hi_ray) = (false, false);
    if plan_dist2(a, from.left) > eps2 {
        // Inside: on or right of `a -> left`.
        let (c0, c1) = (cross2(a, from.left, l), cross2(a, from.left, r));
        if c0 > 0.0 || c1 > 0.0 {
            let tc = if c0 > 0.0 && c1 > 0.0 {
                1.0
            } else {
                c0 / (c0 - c1)
            };
            out_left = Some(tc);
            if c0 > 0.0 && c1 > 0.0 {
                lo = f64::INFINITY;
            } else if c0 > 0.0 {
                if tc > lo {
                    (lo, lo_ray) = (tc, true);
                }
            } else if tc < hi {
                hi = tc;
            }
        }
    }
    if plan_dist2(a, from.right) > eps2 {
        // Inside: on or left of `a -> right`.
        let (d0, d1) = (cross2(a, from.right, l), cross2(a, from.right, r));
        if d0 < 0.0 || d1 < 0.0 {
            let tc = if d0 < 0.0 && d1 < 0.0 {
                0.0
            } else {
                d0 / (d0 - d1)
            };
            out_right = Some(tc);
            if d0 < 0.0 && d1 < 0.0 {
                hi = f64::NEG_INFINITY;
            } else if d1 < 0.0 {
                if tc < hi {
                    (hi, hi_ray) = (tc, true);
                }
            } else if tc > lo {
                lo = tc;
            }
        }
    }
    let candidate = |apex: V3, apex_g: f64, left: V3, right: V3| {
        let pos = through(apex, end, (left, right));
        Node {
            f: apex_g + dist3(apex, pos) + dist3(pos, end),
            parent: NONE,
            pos,
            apex,
            apex_g,
            left,
            right,
            closed: false,
        }
    };
    let mut best: Option<Node> = None;
    let mut keep = |n: Node| {
        if best.is_none_or(|b| n.f < b.f) {
            best = Some(n);
        }
    };
    if lo <= hi {
        let (pl, pr) = (lerp3(l, r, lo), lerp3(l, r, hi));
        let mut n = candidate(a, from.apex_g, pl, pr);
        // The wedge's rays keep the points that define them (corners nearer the apex).
        n.left = if lo_ray { from.left } else { pl };
        n.right = if hi_ray { from.right } else { pr };
        keep(n);
    }
    if let Some(tc) = out_left {
        let corner = from.left;
        let g = from.apex_g + dist3(a, corner);
        keep(candidate(corner, g, l, lerp3(l, r, tc.clamp(0.0, 1.0))));
    }
    if let Some(tc) = out_right {
        let corner = from.right;
        let g = from.apex_g + dist3(a, corner);
        keep(candidate(corner, g, lerp3(l, r, tc.clamp(0.0, 1.0)), r));
    }
    // A degenerate wedge that sees nothing and has nothing outside (rounding): bend at its left.
    best.unwrap_or_else(|| {
        let g = from.apex_g + dist3(a, from.left);
        candidate(from.left, g, l, r)
    })
}

/// Where a walk from `p` towards `q` crosses the portal `l..r`: where the plan line `p -> q`
/// passes between the portal's ends, else the end with the shorter way `p -> end -> q` (`l`
/// on a tie).
fn through(p: V3, q: V3, (l, r): (V3, V3)) -> V3 {
    let (dl, dr) = (cross2(p, q, l), cross2(p, q, r));
    if (dl < 0.0 && dr > 0.0) || (dl > 0.0 && dr < 0.0) {
        // The line passes between the ends: where it crosses is the shortest way in plan.
        return lerp3(l, r, dl / (dl - dr));
    }
    let way = |x: V3| dist3(p, x) + dist3(x, q);
    if way(r) < way(l) {
        r
    } else {
        l
    }
}

/// Where the plan segment `p..q` meets the portal `(l, r)`: the point of the portal on the
/// segment's line (clamped to the portal), at the portal's height there. When the two are
/// parallel (or `p..q` is a point), the point of the portal nearest `p`.
fn meet(p: V3, q: V3, (l, r): (V3, V3)) -> V3 {
    let (dl, dr) = (cross2(p, q, l), cross2(p, q, r));
    let scale = plan_len(p, q) * plan_len(l, r);
    let s = if (dl - dr).abs() > 1e-12 * scale && scale > 0.0 {
        (dl / (dl - dr)).clamp(0.0, 1.0)
    } else {
        closest_on_segment(p, l, r).0
    };
    lerp3(l, r, s)
}
