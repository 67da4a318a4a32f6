//! A* over polygons, string pulling, and the scene-coordinates convenience.

use tessera_navmesh::NONE;

use crate::filter::Costs;
use crate::geom::{
    closest_on_segment, cross2, dist3, finite3, lerp3, mid3, plan_dist2, plan_len, V3,
};
use crate::search::Search;
use crate::{Planner, Query, Route};

/// The polygons a path crosses, start polygon first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Corridor {
    /// Polygon ids in walking order; consecutive ones share a portal or a link.
    pub polys: Vec<u32>,
    /// Whether the corridor ends at the requested end polygon. When it does not, `polys` leads
    /// to the polygon reached whose closest point comes nearest the end (empty for invalid
    /// input).
    pub found: bool,
    /// The off-mesh links it takes, `(k, link)` ascending in `k`: it enters `polys[k]` from
    /// `polys[k - 1]` by the link `link` (an index into the navmesh's links). Every other step
    /// takes the first way between the two polygons ([`Query::portal`]), as a corridor of
    /// polygons alone does ([`Query::straight_path_with_links`]).
    pub jumps: Vec<(u32, u32)>,
}

/// A path in the scene's own coordinates, as [`Query::path`] answers it.
///
/// Serialized (serde) as
/// `{"found":..,"length":..,"link_names":[..],"links":[..],"waypoints":[[x,y,z],..]}`,
/// the one JSON form of a path answer: `tessera path --json` prints it and the viewer's
/// `/api/path` sends it. The fields are declared in that (alphabetical) order because the
/// order is part of the output; do not reorder them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PathAnswer {
    /// Whether both ends snapped to the mesh and a path joins them.
    pub found: bool,
    /// Sum of the 3D lengths of the segments between waypoints (world units), link crossings
    /// included (an off-mesh link's cost is not a length and is not in it); 0 if not found.
    pub length: f64,
    /// For each entry of `links`, the link's name: an off-mesh link's own, `"stair"` for a
    /// stair link the bake found.
    pub link_names: Vec<String>,
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
    /// on the mesh. An off-mesh link's step runs from its take-off point to its landing point.
    pub links: Vec<usize>,
    /// For each entry of `links`, the off-mesh link taken (its entry in the navmesh's table,
    /// [`tessera_navmesh::NavMesh::off_mesh`]), or [`NONE`] for a stair link.
    pub off_mesh: Vec<u32>,
}

/// One way out of a polygon: the polygon across, and the segment crossed as seen walking out.
#[derive(Clone, Copy)]
pub(crate) struct Way {
    pub(crate) to: u32,
    pub(crate) left: V3,
    pub(crate) right: V3,
    /// A link rather than a shared edge.
    pub(crate) link: bool,
    /// For an off-mesh link, its entry in the navmesh's table ([`NONE`] otherwise).
    pub(crate) off_mesh: u32,
    /// For an off-mesh link, its landing point (`left` and `right` are its take-off).
    pub(crate) land: V3,
    /// For a link, its index into the navmesh's links ([`NONE`] for a shared edge).
    pub(crate) index: u32,
}

/// The segments a corridor passes through, in walking order, as (left, right) pairs: the
/// start and the end as degenerate segments first and last, shared edges, and for a link its
/// segment on the side walked out of followed by its landing segment on the side entered.
struct Gates {
    portals: Vec<(V3, V3)>,
    /// Indices `k` where `portals[k]` is a link's segment and `portals[k + 1]` its landing,
    /// each with the off-mesh link it is ([`NONE`]: a stair link).
    links: Vec<(usize, u32)>,
}

/// Buffers for [`Query::ways_into`].
#[derive(Default)]
pub(crate) struct WayScratch {
    neis: Vec<u32>,
    pub(crate) out: Vec<Way>,
}

thread_local! {
    pub(crate) static SEARCH: std::cell::RefCell<Search> = std::cell::RefCell::new(Search::default());
}

/// Search buffers larger than this many nodes are dropped after a query rather than kept.
const KEEP_NODES: usize = 1 << 16;

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
    pub(crate) fn ways_into(&self, p: u32, scratch: &mut WayScratch) {
        let WayScratch { neis, out } = scratch;
        let pts = self.poly_corners(p);
        neis.clear();
        neis.extend(self.mesh.poly_neighbours(p));
        out.clear();
        self.portals_of(
            p,
            |k| neis[k],
            |w| {
                out.push(w);
                false
            },
        );
        let first_link = self.mesh.polys[p as usize].link_first.to_native();
        for (k, l) in self.mesh.poly_links(p).iter().enumerate() {
            let to = l.to.to_native();
            if to != p && (to as usize) < self.mesh.polys.len() {
                let (a, b) = (l.a.map(|c| c.to_native()), l.b.map(|c| c.to_native()));
                let off_mesh = l.off_mesh.to_native();
                let (left, right) = if off_mesh == NONE {
                    self.orient_link(pts, a, b)
                } else {
                    (a, a)
                };
                out.push(Way {
                    to,
                    left,
                    right,
                    link: true,
                    off_mesh,
                    land: b,
                    index: first_link + k as u32,
                });
            }
        }
    }

    /// The portals out of polygon `p` (`nei(k)`: its neighbour across its edge `k`), in the
    /// order of [`Query::ways`], to `each` until it returns true.
    fn portals_of(&self, p: u32, nei: impl Fn(usize) -> u32, mut each: impl FnMut(Way) -> bool) {
        let pts = self.poly_corners(p);
        let n = pts.len();
        // Start the walk round the polygon where the neighbour changes, so no run is cut.
        let first = (0..n)
            .find(|&k| nei(k) != nei((k + n - 1) % n))
            .unwrap_or(0);
        let mut k = 0;
        while k < n {
            let i = (first + k) % n;
            let nb = nei(i);
            let mut run = 1;
            while k + run < n && nei((first + k + run) % n) == nb {
                run += 1;
            }
            if nb != NONE && nb != p && self.valid_poly(nb) {
                // Walking out across edges a -> b of a counter-clockwise polygon, b is on the
                // left.
                let way = Way {
                    to: nb,
                    left: pts[(i + run) % n],
                    right: pts[i],
                    link: false,
                    off_mesh: NONE,
                    land: pts[i],
                    index: NONE,
                };
                if each(way) {
                    return;
                }
            }
            k += run;
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

    /// The way over the off-mesh link `link` (an index into the links) from `from` into `to`;
    /// `None` when it is not one.
    fn jump_way(&self, from: u32, to: u32, link: u32) -> Option<Way> {
        let l = self.mesh.links.get(link as usize)?;
        let off_mesh = l.off_mesh.to_native();
        if l.from.to_native() != from || l.to.to_native() != to || off_mesh == NONE {
            return None;
        }
        let (a, b) = (l.a.map(|c| c.to_native()), l.b.map(|c| c.to_native()));
        Some(Way {
            to,
            left: a,
            right: a,
            link: true,
            off_mesh,
            land: b,
            index: link,
        })
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
        // A shared edge first, without listing every way out.
        let mut portal = None;
        let poly = &self.mesh.polys[from as usize];
        let first = poly.first.to_native() as usize;
        let neis = &self.mesh.poly_neis[first..first + poly.count.to_native() as usize];
        if neis.iter().any(|nb| nb.to_native() == to) {
            self.portals_of(
                from,
                |k| neis[k].to_native(),
                |w| {
                    portal = (w.to == to).then_some(w);
                    portal.is_some()
                },
            );
            if portal.is_some() {
                return portal;
            }
        }
        self.ways_into(from, scratch);
        scratch.out.iter().copied().find(|w| w.to == to)
    }

    /// Where a walk from `from` into `to` lands when it takes a link (`to` and `from` share no
    /// edge): the landing segment on `to`'s side, (left, right) as seen walking into `to`, at
    /// `to`'s heights. `None` when the two are joined by a shared edge, or not at all.
    ///
    /// A stair link's landing segment is the reverse link's segment (from `to` back to `from`;
    /// of several, the one whose plan midpoint is nearest the crossing segment's); a link with
    /// no reverse lands on the points of `to` closest to the crossing segment's ends. An
    /// off-mesh link lands on its landing point (both ends of the segment).
    pub fn landing(&self, from: u32, to: u32) -> Option<([f32; 3], [f32; 3])> {
        let w = self.way(from, to)?;
        w.link.then(|| self.land(from, w))
    }

    /// The landing segment of the link `w` out of `from` (see [`Query::landing`]).
    fn land(&self, from: u32, w: Way) -> (V3, V3) {
        if w.off_mesh != NONE {
            return (w.land, w.land);
        }
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

    /// The corridor of the shortest path in plan from `start` (on `start_poly`) to `end` (on
    /// `end_poly`) over polygons, portals and links.
    ///
    /// An any-angle A* over intervals of polygon edges, each seen from a root (the start or a
    /// mesh corner) whose cost is known: Polyanya (see the `search` module). Its first path to
    /// the end is the shortest in plan, so the same pair asked either way gives a path of the
    /// same plan length, and [`Query::straight_path`] along the corridor pulls that path. A
    /// path bends only at corners of the mesh (ends of edges with no polygon across). A link
    /// is a jump: the string is pulled to the point of its segment on the way to the end, and
    /// the search goes on from its landing (the one place where the path found may be longer
    /// than the shortest: the point taken on a link's segment is chosen, not searched).
    ///
    /// Ties in the open list go to the node made last, so the answer is deterministic. When
    /// `end_poly` cannot be reached, `found` is false and the corridor leads to the polygon
    /// reached that comes closest to `end`; when it lies in another connected component
    /// ([`tessera_navmesh::Poly::component`]), nothing is searched: `found` is false and the
    /// corridor is the start polygon alone. A hostile mesh (polygons not convex, crossed or
    /// overlapping) makes the search give up after a bounded number of expansions.
    ///
    /// Between two clusters of the mesh's hierarchy, the search is hierarchical (see
    /// [`Query::find_path_with`]): a plan over the clusters first, then this search confined
    /// to the clusters planned, whose shortest path may be a little longer than the flat
    /// search's when the plan missed a cluster the shortest one crosses.
    pub fn find_path(
        &self,
        start_poly: u32,
        start: [f32; 3],
        end_poly: u32,
        end: [f32; 3],
    ) -> Corridor {
        self.find_path_with(start_poly, start, end_poly, end, Planner::Hierarchical)
    }

    /// [`Query::find_path`] by the search `planner` names: the hierarchical one (the
    /// default: a plan over the mesh's clusters, then the same exact search confined to the
    /// clusters planned; see the `hier` module) or the flat one over every polygon. Both
    /// ends in one cluster, ends closer in plan than the diameter of a disc holding four of
    /// the largest clusters' worth of polygons (at the mesh's mean density: such a flat
    /// search costs no more than a plan), or a mesh with no hierarchy take the flat search
    /// either way.
    pub fn find_path_with(
        &self,
        start_poly: u32,
        start: [f32; 3],
        end_poly: u32,
        end: [f32; 3],
        planner: Planner,
    ) -> Corridor {
        self.find_path_costed(start_poly, start, end_poly, end, planner, &Costs::default())
    }

    /// [`Query::find_path_with`] at `costs` (a filter resolved by [`Query::costs`]): an
    /// avoided area is never entered and an avoided link never taken. Link costs other than
    /// the baked ones search flat whatever `planner` says (the hierarchy's lengths hold the
    /// baked costs); areas that cost other than 1 (baked or filtered), or an avoided area,
    /// take the search over polygons (the `weighted` module), whose corridor's string is
    /// pulled as any.
    pub fn find_path_costed(
        &self,
        start_poly: u32,
        start: [f32; 3],
        end_poly: u32,
        end: [f32; 3],
        planner: Planner,
        costs: &Costs,
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
                jumps: Vec::new(),
            };
        }
        let ends = crate::hier::Ends {
            start_poly,
            start,
            end_poly,
            end,
        };
        // Areas that cost other than 1, or are avoided: the search over polygons.
        if costs.areas(self).iter().any(|&c| c != 1.0) {
            return self.weighted_corridor(ends, costs);
        }
        let planned = planner == Planner::Hierarchical
            && costs.baked()
            && self.plans(start_poly, start, end_poly, end);
        SEARCH.with(|search| {
            let mut search = search.borrow_mut();
            search.costs = costs.clone();
            let corridor = planned
                .then(|| self.find_path_planned(ends, &mut search))
                .flatten()
                .unwrap_or_else(|| self.polyanya(ends, &mut search));
            search.costs = Costs::default();
            search.shrink(KEEP_NODES);
            corridor
        })
    }

    /// Whether [`Query::find_path`] plans over the hierarchy between these ends (rather than
    /// searching flat; see [`Query::find_path_with`]): the mesh has a hierarchy, the ends
    /// lie in different clusters and are farther apart in plan than a flat search costs.
    pub fn plans(&self, start_poly: u32, start: [f32; 3], end_poly: u32, end: [f32; 3]) -> bool {
        let h = &self.mesh.hierarchy;
        !h.is_empty()
            && self.valid_poly(start_poly)
            && self.valid_poly(end_poly)
            && h.cluster_of(start_poly) != h.cluster_of(end_poly)
            && plan_len(start, end) > self.flat_within
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
    /// An off-mesh link is a step from its take-off point to its landing point; between two
    /// polygons joined several ways the first is taken: [`Query::straight_path_of`] follows
    /// the off-mesh links a search chose.
    pub fn straight_path_with_links(
        &self,
        start: [f32; 3],
        end: [f32; 3],
        corridor: &[u32],
    ) -> StraightPath {
        self.pull(start, end, corridor, &[])
    }

    /// [`Query::straight_path_with_links`] along a corridor [`Query::find_path`] gave, taking
    /// the off-mesh links its search took ([`Corridor::jumps`]).
    pub fn straight_path_of(
        &self,
        start: [f32; 3],
        end: [f32; 3],
        corridor: &Corridor,
    ) -> StraightPath {
        self.pull(start, end, &corridor.polys, &corridor.jumps)
    }

    fn pull(&self, start: V3, end: V3, corridor: &[u32], jumps: &[(u32, u32)]) -> StraightPath {
        let Some(gates) = self.gates(start, end, corridor, jumps) else {
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
        let Some(gates) = self.gates(start, end, corridor, &[]) else {
            return StraightPath::default();
        };
        StraightPath {
            points: gates.portals.iter().map(|&(l, r)| mid3(l, r)).collect(),
            links: gates.links.iter().map(|l| l.0).collect(),
            off_mesh: gates.links.iter().map(|l| l.1).collect(),
        }
    }

    /// The portals of `corridor` from `start` to `end` (see [`Gates`]); `None` for an empty
    /// or invalid corridor or non-finite ends.
    fn gates(&self, start: V3, end: V3, corridor: &[u32], jumps: &[(u32, u32)]) -> Option<Gates> {
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
        let mut jumps = jumps.iter().peekable();
        for (k, w) in corridor.windows(2).enumerate() {
            let jump = jumps.next_if(|j| j.0 as usize == k + 1).map(|j| j.1);
            let way = match jump {
                Some(link) => self.jump_way(w[0], w[1], link),
                None => self.way_with(w[0], w[1], &mut scratch),
            };
            let Some(way) = way else {
                break;
            };
            gates.portals.push((way.left, way.right));
            if way.link {
                gates.links.push((gates.portals.len() - 1, way.off_mesh));
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
        let mut out: Vec<(V3, usize)> = Vec::with_capacity(portals.len());
        out.push((portals[0].0, 0));
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
        let mut out = StraightPath {
            points: Vec::with_capacity(corners.len() + 2 * gates.links.len()),
            ..StraightPath::default()
        };
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
            .flat_map(|&(k, off_mesh)| [(k, false, off_mesh), (k + 1, true, off_mesh)])
            .peekable();
        let mut crossing = 0;
        for w in corners.windows(2) {
            let ((p, pi), (q, qi)) = (w[0], w[1]);
            // This segment runs from portal `pi` to portal `qi` and meets those in between.
            while let Some((k, landing, off_mesh)) = events.next_if(|&(k, _, _)| k <= qi) {
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
                    out.off_mesh.push(off_mesh);
                }
            }
            push(&mut out.points, q);
        }
        // An end within a point of the corner before it was merged into that corner: the
        // end takes its place, so that the last waypoint is the end as the first is the
        // start (a path within one point stays the start alone).
        if let (Some(&(end, _)), [_, .., last]) = (corners.last(), out.points.as_mut_slice()) {
            *last = end;
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
        self.route(from_scene, to_scene).answer
    }

    /// [`Query::path`] by the search `planner` names (see [`Query::find_path_with`]).
    pub fn path_with(
        &self,
        from_scene: [f64; 3],
        to_scene: [f64; 3],
        planner: Planner,
    ) -> PathAnswer {
        self.route_with(from_scene, to_scene, planner).answer
    }

    /// [`Query::path`] with the corridor it was pulled along (see [`Route`]).
    pub fn route(&self, from_scene: [f64; 3], to_scene: [f64; 3]) -> Route {
        self.route_with(from_scene, to_scene, Planner::Hierarchical)
    }

    /// [`Query::route`] by the search `planner` names.
    pub fn route_with(&self, from_scene: [f64; 3], to_scene: [f64; 3], planner: Planner) -> Route {
        self.route_costed(from_scene, to_scene, planner, &Costs::default())
    }

    /// [`Query::path_with`] at `costs` (see [`Query::find_path_costed`]).
    pub fn path_costed(
        &self,
        from_scene: [f64; 3],
        to_scene: [f64; 3],
        planner: Planner,
        costs: &Costs,
    ) -> PathAnswer {
        self.route_costed(from_scene, to_scene, planner, costs)
            .answer
    }

    /// [`Query::route_with`] at `costs`.
    pub fn route_costed(
        &self,
        from_scene: [f64; 3],
        to_scene: [f64; 3],
        planner: Planner,
        costs: &Costs,
    ) -> Route {
        let (a, b) = (
            self.frame.to_internal(from_scene),
            self.frame.to_internal(to_scene),
        );
        let ext = self.snap_extent();
        let (Some((sp, s)), Some((ep, e))) = (self.nearest(a, ext), self.nearest(b, ext)) else {
            return Route::default();
        };
        let corridor = self.find_path_costed(sp, s, ep, e, planner, costs);
        let answer = if corridor.found {
            self.answer(s, e, &corridor)
        } else {
            PathAnswer::default()
        };
        Route {
            answer,
            corridor: corridor.polys,
        }
    }

    /// The answer for a corridor found from `s` to `e` (internal points on its ends).
    fn answer(&self, s: V3, e: V3, corridor: &Corridor) -> PathAnswer {
        let straight = self.straight_path_of(s, e, corridor);
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
        let link_names = straight
            .off_mesh
            .iter()
            .map(|&k| match self.mesh.off_mesh.get(k as usize) {
                Some(link) => link.name.to_string(),
                None => "stair".to_string(),
            })
            .collect();
        PathAnswer {
            found: true,
            length,
            link_names,
            waypoints,
            links: straight.links,
        }
    }
}

/// Where a walk from `p` towards `q` crosses the portal `l..r`: where the plan line `p -> q`
/// passes between the portal's ends, else the end with the shorter way `p -> end -> q` (`l`
/// on a tie).
pub(crate) fn through(p: V3, q: V3, (l, r): (V3, V3)) -> V3 {
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
