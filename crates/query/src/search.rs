//! The search of [`Query::find_path`]: an any-angle A* over intervals of polygon edges
//! (Polyanya: D. Harabor, M. Cui, A. Grastien, "Compromise-free Pathfinding on a Navigation
//! Mesh", IJCAI 2017), which finds the shortest path in plan, and the corridor it crosses.
//!
//! A search node is an interval of an edge, the polygon it opens into, and a root: the start
//! or a mesh corner from which every point of the interval is seen in a straight line, the
//! path from the start to the root being known (its cost `g`). Expanding a node projects the
//! interval from its root across the polygon beyond: the part of that polygon's other edges
//! inside the cone (root, interval) keeps the root; a part outside the cone is reached by
//! bending round an end of the interval, which must then be a corner of the mesh (the end of
//! an edge with nothing across: a shortest path bends nowhere else), and which becomes the
//! root. A node's `f` is `g` plus the shortest way from the root through the interval to the
//! end (the end mirrored across the interval's line when it lies on the root's side), a lower
//! bound, so the first time the end is taken from the open list its path is the shortest. A
//! corner reached again at a higher cost than before is not expanded again as a root, and a
//! polygon seen whole from a root is expanded once from it.
//!
//! The mesh is f32 and polygons need not share their corners' vertex entries, so corners are
//! told by position, and a cut within the query tolerance of an edge's end, or a root within
//! it of an edge's line, counts as exactly there: otherwise a cone through a corner leaves a
//! sliver beside it, and the sliver bends round the wrong end.
//!
//! Costs are plan distances, as the funnel that pulls the corridor's string measures them. A
//! stair link is a jump: the string is pulled to the point of its segment nearest the way to
//! the end, and the search goes on from its landing as a new root that sees all of the
//! polygon landed on. An off-mesh link is entered at its take-off point, reached as the end
//! would be, and costs its plan length and its own cost; the search goes on from its landing
//! point likewise.

use std::cmp::Ordering;

use rustc_hash::FxHashMap;
use tessera_navmesh::NONE;

use crate::filter::Costs;
use crate::geom::{cross2, lerp3, plan_dist2, plan_len, V3};
use crate::hier::Ends;
use crate::path::Corridor;
use crate::radix::RadixHeap;
use crate::Query;

/// A search node: an interval `left..right` of an edge (as seen from `root`), the polygon it
/// opens into, and the root.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Node {
    /// Cost from the start to the root (plan length).
    g: f64,
    root: V3,
    /// The root is a mesh corner (else the start or a link's landing).
    root_corner: bool,
    left: V3,
    right: V3,
    /// The interval's ends are mesh corners, which a path may bend round.
    left_corner: bool,
    right_corner: bool,
    /// The root lies on the interval's line (it is a vertex of the edge, the start or a
    /// landing): every point of `poly` is seen from it.
    sees_all: bool,
    /// The polygon the interval opens into.
    poly: u32,
    /// The polygon the interval was crossed from (`NONE` for the start).
    from: u32,
    /// The node this one was made from (`NONE` for the start).
    parent: u32,
    /// This node is the end itself (reached from its parent's root, or by bending at one of
    /// the parent's interval ends: `root`).
    end: bool,
    /// This node is the landing of an off-mesh link taken from its parent's polygon.
    jump: bool,
}

// One cache line per node: a search takes its nodes from the open list in no order of
// memory, so each node taken costs a miss; two when a node straddles two lines.
const _: () = assert!(std::mem::size_of::<Node>() == 64);

impl Node {
    /// A node at one point that sees all of `poly` from it: the start, a link's landing, or
    /// (`end`) the end reached.
    #[allow(clippy::too_many_arguments)]
    fn at(point: V3, g: f64, poly: u32, from: u32, parent: u32, end: bool) -> Node {
        Node {
            g,
            root: point,
            root_corner: false,
            left: point,
            right: point,
            left_corner: false,
            right_corner: false,
            sees_all: true,
            poly,
            from,
            parent,
            end,
            jump: false,
        }
    }
}

/// An open-list entry: smallest `f` first, then the node made last (deeper first on ties).
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct Open {
    pub f: f64,
    pub node: u32,
}

impl Eq for Open {}

impl Ord for Open {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .f
            .total_cmp(&self.f)
            .then_with(|| self.node.cmp(&other.node))
    }
}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The buffers of one search, kept per thread between queries.
#[derive(Default)]
pub(crate) struct Search {
    nodes: Vec<Node>,
    /// Per node, its `f`: the cost to its root plus the lower bound through its interval to
    /// the end. Beside the nodes rather than in them, so that a node fills one cache line.
    fs: Vec<f64>,
    /// The `f` of the node being expanded: its successors' `f` is never lower.
    parent_f: f64,
    open: RadixHeap<u32>,
    /// The lowest cost at which each mesh corner was made a root, by position (polygons of
    /// a mesh need not share their corners' vertex entries).
    root_g: FxHashMap<[u32; 3], f64>,
    /// Polygons expanded whole from a root on their boundary (a corner turned round, a
    /// landing): by root position and polygon, the lowest cost. Such an expansion does not
    /// depend on how the polygon was entered, so one at the lowest cost is enough (and the
    /// polygons round a corner are not walked round and round).
    whole: FxHashMap<([u32; 3], u32), f64>,
    neis: Vec<u32>,
    pieces: Vec<Piece>,
    /// When `scoped`: the clusters of the hierarchy the search may enter, one bit each
    /// (see [`Query::set_scope`]).
    pub(crate) scope: Vec<u64>,
    /// A scoped search may also step from a polygon in its scope into one outside it (the
    /// halo, one polygon deep): a way along the scope's border may cut across the corner of
    /// a cluster beside it.
    pub(crate) scoped: bool,
    /// Within a scope, only the polygons of its corridor (see [`Query::set_corridor`]):
    /// those whose entry of `corridor_polys` is `corridor_stamp`.
    pub(crate) corridor: bool,
    pub(crate) corridor_polys: Vec<u32>,
    pub(crate) corridor_stamp: u32,
    /// A polygon's corner flags with the scope's boundary added.
    flags: Vec<bool>,
    /// [`Goal::Many`]: per target, its length once reached (`INFINITY` until then).
    pub(crate) lengths: Vec<f64>,
    /// A length no way searched for is longer than: nodes whose `f` passes it are dropped
    /// (a scoped search given the length of a way known within its scope).
    pub(crate) bound: Option<f64>,
    /// The areas' and off-mesh links' costs (a query's filter; the baked ones by default).
    pub(crate) costs: Costs,
    /// The most expansions before the search gives up ([`Run::Limit`]); `None`: the limit
    /// for a hostile mesh.
    pub(crate) limit: Option<usize>,
}

impl Search {
    fn clear(&mut self) {
        self.nodes.clear();
        self.fs.clear();
        self.open.clear();
        self.root_g.clear();
        self.whole.clear();
        self.lengths.clear();
    }

    /// Adds node `n` with its `f`.
    fn push_node(&mut self, n: Node, f: f64) {
        self.nodes.push(n);
        self.fs.push(f);
    }

    /// The plan length of the way to node `n`.
    pub(crate) fn length(&self, n: u32) -> f64 {
        self.nodes[n as usize].g
    }

    /// Whether the scope lets the search into cluster `c`.
    #[inline]
    pub(crate) fn allows(&self, c: u32) -> bool {
        !self.scoped
            || self
                .scope
                .get(c as usize / 64)
                .is_some_and(|w| w >> (c % 64) & 1 == 1)
    }

    /// Drops buffers grown past `keep` nodes, so one huge search does not hold its memory.
    pub(crate) fn shrink(&mut self, keep: usize) {
        if self.nodes.capacity() > keep {
            *self = Search::default();
        }
    }
}

/// A piece of an edge to turn into a node: its ends as parameters along the edge.
#[derive(Clone, Copy)]
struct Piece {
    t0: f64,
    t1: f64,
    /// The root it keeps (`None`) or the interval end it bends round (left or right).
    bend: Option<Side>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// What a search looks for.
#[derive(Clone, Copy)]
pub(crate) enum Goal<'t> {
    /// One point on one polygon: an A* towards it, which ends when it is reached.
    Point { poly: u32, at: V3 },
    /// Several points, each `(polygon, point)`, sorted by polygon: a search in order of
    /// distance (no point to aim at), which ends when every one is reached or nothing is
    /// left; each one's length goes to [`Search::lengths`].
    Many(&'t [(u32, V3)]),
}

/// How a search ended.
pub(crate) enum Run {
    /// [`Goal::Point`] reached: its end node.
    Reached(u32),
    /// Every way searched (for [`Goal::Many`], or every target reached).
    Exhausted,
    /// It gave up after the expansion limit.
    Limit,
}

impl Goal<'_> {
    /// A lower bound of the way from `root` through the segment `a..b` to the goal.
    #[inline]
    fn through(&self, root: V3, a: V3, b: V3) -> f64 {
        match *self {
            Goal::Point { at, .. } => through_cost(root, a, b, at),
            Goal::Many(_) => crate::geom::closest_on_segment(root, a, b).1.sqrt(),
        }
    }

    /// A lower bound of the way from `p` to the goal.
    #[inline]
    fn from(&self, p: V3) -> f64 {
        match *self {
            Goal::Point { at, .. } => plan_len(p, at),
            Goal::Many(_) => 0.0,
        }
    }

    /// The point of a link's piece `a..b` a path from `root` takes: on the way to the end,
    /// or (many ends) the piece's middle.
    #[inline]
    fn link_point(&self, root: V3, a: V3, b: V3) -> V3 {
        match *self {
            Goal::Point { at, .. } => crate::path::through(root, at, (a, b)),
            Goal::Many(_) => crate::geom::mid3(a, b),
        }
    }
}

/// How a path from `n`'s root reaches the point `p` of `n`'s polygon: `(root, g)` with `g`
/// the cost to that root, straight from `n`'s root when `p` lies in its cone, else round the
/// interval's end on that side when it is a corner (`None` when it is not: bending there is
/// another node's business).
fn seen_from(n: &Node, p: V3) -> Option<(V3, f64)> {
    let side = if n.sees_all {
        None
    } else if cross2(n.root, n.left, p) > 0.0 {
        Some(Side::Left)
    } else if cross2(n.root, n.right, p) < 0.0 {
        Some(Side::Right)
    } else {
        None
    };
    match side {
        None => Some((n.root, n.g)),
        Some(Side::Left) if n.left_corner => Some((n.left, n.g + plan_len(n.root, n.left))),
        Some(Side::Right) if n.right_corner => Some((n.right, n.g + plan_len(n.root, n.right))),
        Some(_) => None,
    }
}

/// A corridor from its polygons gathered end first and the off-mesh links into them, `(k,
/// link)` with `k` counted from the end.
pub(crate) fn corridor_from_end(
    mut polys: Vec<u32>,
    jumps: Vec<(usize, u32)>,
    found: bool,
) -> Corridor {
    polys.reverse();
    let last = polys.len().saturating_sub(1);
    let jumps = jumps
        .into_iter()
        .rev()
        .map(|(k, link)| ((last - k) as u32, link))
        .collect();
    Corridor {
        polys,
        found,
        jumps,
    }
}

/// The way from `root` through the segment `a..b` to `goal`, in plan: straight when the
/// line crosses the segment, else round the nearer end. `goal` on the root's side of the
/// segment's line is mirrored across it first (a way through the segment must come back).
#[inline]
fn through_cost(root: V3, a: V3, b: V3, goal: V3) -> f64 {
    let goal = mirror_if_same_side(root, a, b, goal);
    let (da, db) = (cross2(root, goal, a), cross2(root, goal, b));
    if (da <= 0.0 && db >= 0.0) || (da >= 0.0 && db <= 0.0) {
        // The line root -> goal passes between the ends (or through one of them).
        return plan_len(root, goal);
    }
    // The way's length along the segment's line is convex, least where the line root -> goal
    // crosses it: past the end nearer that crossing, which is the end nearer the line.
    let near = if da.abs() <= db.abs() { a } else { b };
    plan_len(root, near) + plan_len(near, goal)
}

/// A corner's key among roots: its exact position.
fn key(p: V3) -> [u32; 3] {
    p.map(f32::to_bits)
}

/// `p` mirrored across the line `a..b` when it lies strictly on the same side as `root`.
fn mirror_if_same_side(root: V3, a: V3, b: V3, p: V3) -> V3 {
    let (sr, sp) = (cross2(a, b, root), cross2(a, b, p));
    let len2 = plan_dist2(a, b);
    if len2 == 0.0 || sr * sp <= 0.0 {
        return p;
    }
    let (ax, ay) = (a[0] as f64, a[1] as f64);
    let (dx, dy) = (b[0] as f64 - ax, b[1] as f64 - ay);
    let s = ((p[0] as f64 - ax) * dx + (p[1] as f64 - ay) * dy) / len2;
    let (fx, fy) = (ax + s * dx, ay + s * dy);
    [
        (2.0 * fx - p[0] as f64) as f32,
        (2.0 * fy - p[1] as f64) as f32,
        p[2],
    ]
}

impl Query<'_> {
    /// The any-angle search of [`Query::find_path`] (see the module documentation), over the
    /// buffers `s` (with their scope); `start_poly != end_poly`, both valid, both points
    /// finite. A search that finds no way gives a corridor as [`Query::find_path`] says.
    pub(crate) fn polyanya(&self, ends: Ends, s: &mut Search) -> Corridor {
        let start_poly = ends.start_poly;
        let (end, run) = self.run_to(ends, s);
        match run {
            Run::Reached(node) => self.trace(s, node, true),
            Run::Limit => self.nearest_reached(s, start_poly, end),
            // Every way was searched and none reached the end: on a valid mesh only the
            // tolerance can do that (a cone cut a hair short of the corner it had to bend
            // round). The polygons still join, so a corridor over them stands in, its string
            // pulled as any.
            Run::Exhausted => self
                .corridor_over_polygons(ends, &s.costs)
                .unwrap_or_else(|| self.nearest_reached(s, start_poly, end)),
        }
    }

    /// The search towards the end within the scope of `s`: the end node when it is reached
    /// ([`Search::length`] and [`Query::trace`] read the way to it), `None` otherwise.
    pub(crate) fn polyanya_to(&self, ends: Ends, s: &mut Search) -> Option<u32> {
        match self.run_to(ends, s).1 {
            Run::Reached(node) => Some(node),
            _ => None,
        }
    }

    /// [`Query::polyanya_to`], telling a search that gave up ([`Run::Limit`]) from one that
    /// searched every way it could.
    pub(crate) fn polyanya_run(&self, ends: Ends, s: &mut Search) -> Run {
        self.run_to(ends, s).1
    }

    /// The search of one end from the other: the end as searched for (moved onto its
    /// polygon's boundary when within the tolerance of it) and how the search ended.
    fn run_to(&self, ends: Ends, s: &mut Search) -> (V3, Run) {
        let at = self.onto_boundary(ends.end_poly, ends.end);
        let goal = Goal::Point {
            poly: ends.end_poly,
            at,
        };
        (at, self.run(ends.start_poly, ends.start, goal, s))
    }

    /// The plan lengths of the shortest ways from `start` (on `start_poly`) to each of
    /// `targets` (`(polygon, point)`, sorted by polygon), within the scope of `s`;
    /// `INFINITY` for those not reached. Into `s.lengths`, in the order of `targets`.
    pub(crate) fn polyanya_many(
        &self,
        start_poly: u32,
        start: V3,
        targets: &[(u32, V3)],
        s: &mut Search,
    ) {
        let targets: Vec<(u32, V3)> = targets
            .iter()
            .map(|&(p, t)| (p, self.onto_boundary(p, t)))
            .collect();
        self.run(start_poly, start, Goal::Many(&targets), s);
    }

    /// The search loop: from `start` until `goal` is reached (see [`Goal`]).
    fn run(&self, start_poly: u32, start: V3, goal: Goal, s: &mut Search) -> Run {
        s.clear();
        if let Goal::Many(targets) = goal {
            s.lengths.resize(targets.len(), f64::INFINITY);
        }
        let mut left = match goal {
            Goal::Many(targets) => targets.len(),
            Goal::Point { .. } => 1,
        };
        // An end within the tolerance of its polygon's boundary is searched from the boundary
        // itself: elsewhere the search takes it as on that edge's line (a cone grazing the
        // line from a point a hair off it), so its cones must run along that line exactly.
        let start = self.onto_boundary(start_poly, start);
        // A hostile mesh (polygons that are not convex, overlapping or crossed) must not
        // make the search run forever: it gives up after a number of expansions no valid
        // mesh of this size needs.
        let limit = s
            .limit
            .unwrap_or_else(|| 1_000_000usize.max(self.mesh.polys.len().saturating_mul(64)));
        let f = goal.from(start);
        s.push_node(Node::at(start, 0.0, start_poly, NONE, NONE, false), f);
        s.open.push(f, 0);
        let mut expanded = 0usize;
        while let Some((f, node)) = s.open.pop_keyed() {
            let n = s.nodes[node as usize];
            if n.end {
                match goal {
                    Goal::Point { .. } => return Run::Reached(node),
                    Goal::Many(_) => {
                        // An end node keeps its target's index in `from`.
                        let t = n.from as usize;
                        if s.lengths[t].is_infinite() {
                            s.lengths[t] = n.g;
                            left -= 1;
                            if left == 0 {
                                return Run::Exhausted;
                            }
                        }
                        continue;
                    }
                }
            }
            // A node whose expansion makes a single successor (a cone passing down a row of
            // polygons) has that successor expanded at once, without the open list: it
            // would be taken from it anyway, and the end is only ever taken from the list.
            let mut next = Some((f, node));
            while let Some((f, id)) = next.take() {
                if !self.worth_expanding(s, id) {
                    break;
                }
                expanded += 1;
                if expanded > limit {
                    return Run::Limit;
                }
                let first = s.nodes.len();
                s.parent_f = f;
                self.expand(s, id, goal);
                let made = s.nodes.len() - first;
                let bound = s.bound.unwrap_or(f64::INFINITY);
                if made == 1 && !s.nodes[first].end {
                    let f = s.fs[first];
                    next = (f <= bound).then_some((f, first as u32));
                } else {
                    for k in first..s.nodes.len() {
                        if s.fs[k] <= bound {
                            s.open.push(s.fs[k], k as u32);
                        }
                    }
                }
            }
        }
        Run::Exhausted
    }

    /// `p` moved onto the boundary of `poly` when it lies within the tolerance of it (onto a
    /// corner within the tolerance of one, else onto the nearest edge), else `p`.
    fn onto_boundary(&self, poly: u32, p: V3) -> V3 {
        let pts = self.poly_corners(poly);
        let eps2 = (self.eps as f64).powi(2);
        if let Some(&c) = pts.iter().find(|&&c| plan_dist2(c, p) <= eps2) {
            return [c[0], c[1], p[2]];
        }
        let n = pts.len();
        (0..n)
            .map(|k| (pts[k], pts[(k + 1) % n]))
            .map(|(a, b)| (crate::geom::closest_on_segment(p, a, b), a, b))
            .filter(|&((_, d2), _, _)| d2 <= eps2)
            .min_by(|x, y| x.0 .1.total_cmp(&y.0 .1))
            .map_or(p, |((t, _), a, b)| {
                let q = lerp3(a, b, t);
                [q[0], q[1], p[2]]
            })
    }

    /// Whether node `id` is still worth expanding: its root not reached more cheaply since,
    /// and, for a polygon seen whole from its root, not expanded from that root as cheaply.
    fn worth_expanding(&self, s: &mut Search, id: u32) -> bool {
        let n = s.nodes[id as usize];
        let eps = self.eps as f64;
        if n.root_corner && s.root_g.get(&key(n.root)).is_some_and(|&g| g < n.g - eps) {
            return false;
        }
        if n.sees_all && n.parent != NONE {
            match s.whole.entry((key(n.root), n.poly)) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    if *e.get() <= n.g + eps {
                        return false;
                    }
                    e.insert(n.g);
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(n.g);
                }
            }
        }
        true
    }

    /// The corridor from the start to node `last`, following parents: its polygons, and the
    /// off-mesh links it takes.
    pub(crate) fn trace(&self, s: &Search, last: u32, found: bool) -> Corridor {
        // As many polygons as the way's nodes at most: one walk to count them first.
        let mut count = 0;
        let mut cur = last;
        while cur != NONE && count <= s.nodes.len() {
            count += 1;
            cur = s.nodes[cur as usize].parent;
        }
        let mut polys = Vec::with_capacity(count);
        let mut jumps = Vec::new();
        let mut cur = last;
        while cur != NONE && polys.len() <= s.nodes.len() {
            let n = &s.nodes[cur as usize];
            if polys.last() != Some(&n.poly) {
                polys.push(n.poly);
            }
            if let Some(link) = self.jump_of(s, n) {
                // The step into this polygon, counted from the end.
                jumps.push((polys.len() - 1, link));
            }
            cur = n.parent;
        }
        corridor_from_end(polys, jumps, found)
    }

    /// The off-mesh link node `n` landed by, if it did: the link of its parent's polygon into
    /// `n`'s whose landing is `n`'s root (the first, should two land on one point).
    fn jump_of(&self, s: &Search, n: &Node) -> Option<u32> {
        if !n.jump {
            return None;
        }
        let from = s.nodes[n.parent as usize].poly;
        if from == n.poly {
            return None;
        }
        let first = self.mesh.polys[from as usize].link_first.to_native();
        self.mesh
            .poly_links(from)
            .iter()
            .position(|l| {
                l.off_mesh.to_native() != NONE
                    && l.to.to_native() == n.poly
                    && key(l.b.map(|c| c.to_native())) == key(n.root)
            })
            .map(|k| first + k as u32)
    }

    /// The end not reached: a corridor to the polygon reached whose closest point comes
    /// nearest `end` (ties to the smaller id), found: false.
    fn nearest_reached(&self, s: &Search, start_poly: u32, end: V3) -> Corridor {
        let exact = |poly: u32| {
            self.closest_point(poly, end)
                .map_or(f64::INFINITY, |c| crate::geom::dist3(c, end))
        };
        // The first node that opened into each polygon reached.
        let mut reached: FxHashMap<u32, u32> = FxHashMap::default();
        for (id, n) in s.nodes.iter().enumerate() {
            reached.entry(n.poly).or_insert(id as u32);
        }
        let mut polys: Vec<u32> = reached.keys().copied().collect();
        polys.sort_unstable();
        let mut closest = (exact(start_poly), start_poly);
        for poly in polys {
            if poly == closest.1
                || self.plan_box_distance(poly, end) > closest.0 * (1.0 + 1e-6) + 1e-6
            {
                continue;
            }
            let d = exact(poly);
            if (d, poly) < closest {
                closest = (d, poly);
            }
        }
        let last = reached.get(&closest.1).copied().unwrap_or(0);
        self.trace(s, last, false)
    }

    /// Expands node `id`: the end if its polygon holds it, then every edge and link of its
    /// polygon.
    fn expand(&self, s: &mut Search, id: u32, goal: Goal) {
        let n = s.nodes[id as usize];
        let p = n.poly;
        let mut neis = std::mem::take(&mut s.neis);
        let mut pieces = std::mem::take(&mut s.pieces);
        let mut flags = std::mem::take(&mut s.flags);
        // Round which ends of the interval a path may bend: mesh corners only (a vertex with
        // polygons all round it never holds a shortest path back), and in a scoped search
        // the corners of its scope's boundary too.
        let bends = (!n.sees_all && n.left_corner, !n.sees_all && n.right_corner);
        let pts = self.poly_corners(p);
        let ids = if s.scoped {
            self.scoped_corner_flags(s, p, &mut flags);
            &flags[..]
        } else {
            self.corner_flags(p)
        };
        neis.clear();
        neis.extend(self.mesh.poly_neighbours(p));
        match goal {
            Goal::Point { poly, at } if poly == p => self.push_end(s, id, &n, at, 0),
            Goal::Point { .. } => {}
            Goal::Many(targets) => {
                let first = targets.partition_point(|t| t.0 < p);
                for (t, &(poly, at)) in targets.iter().enumerate().skip(first) {
                    if poly != p {
                        break;
                    }
                    self.push_end(s, id, &n, at, t as u32);
                }
            }
        }
        let count = pts.len();
        for k in 0..count {
            let nb = neis[k];
            if nb == NONE
                || nb == p
                || nb == n.from
                || !self.valid_poly(nb)
                || !self.enters_from(s, p, nb)
            {
                continue;
            }
            let (x, y) = (pts[k], pts[(k + 1) % count]);
            let (vx, vy) = (ids[k], ids[(k + 1) % count]);
            self.pieces(&n, bends, x, y, &mut pieces);
            for &piece in &pieces {
                self.push_piece(s, id, &n, piece, (x, y), (vx, vy), nb, goal);
            }
        }
        for l in self.mesh.poly_links(p) {
            let to = l.to.to_native();
            if to == p || to == n.from || !self.valid_poly(to) || !self.enters_from(s, p, to) {
                continue;
            }
            let (a, b) = (l.a.map(|c| c.to_native()), l.b.map(|c| c.to_native()));
            let off_mesh = l.off_mesh.to_native();
            if off_mesh != NONE {
                if let Some(extra) = s.costs.link(off_mesh, l.cost.to_native()) {
                    let cost = plan_len(a, b) + f64::from(extra);
                    self.push_jump(s, id, &n, (a, b), cost, to, goal);
                }
                continue;
            }
            self.pieces(&n, bends, a, b, &mut pieces);
            for &piece in &pieces {
                self.push_link(s, id, &n, piece, (a, b), to, goal);
            }
        }
        s.pieces = pieces;
        s.neis = neis;
        s.flags = flags;
    }

    /// The end as a node, when it is seen from `n`'s root or round one of its interval's
    /// vertex ends; `target`: its index among the goal's points (kept in the node's `from`,
    /// which an end node, never expanded, has no other use for).
    fn push_end(&self, s: &mut Search, id: u32, n: &Node, end: V3, target: u32) {
        let Some((root, g)) = seen_from(n, end) else {
            return;
        };
        let g = g + plan_len(root, end);
        let mut node = Node::at(end, g, n.poly, target, id, true);
        node.root = root;
        let f = g.max(s.parent_f);
        s.push_node(node, f);
    }

    /// A node for taking an off-mesh link from its take-off point `a` (in `n`'s polygon,
    /// reached as the end is) to its landing point `b` on `to`, a new root that sees all of
    /// `to`; `cost`: the step's plan length and the link's own cost.
    #[allow(clippy::too_many_arguments)]
    fn push_jump(
        &self,
        s: &mut Search,
        id: u32,
        n: &Node,
        (a, b): (V3, V3),
        cost: f64,
        to: u32,
        goal: Goal,
    ) {
        let Some((root, g)) = seen_from(n, a) else {
            return;
        };
        let g = g + plan_len(root, a) + cost;
        let f = (g + goal.from(b)).max(s.parent_f);
        let mut node = Node::at(b, g, to, n.poly, id, false);
        node.jump = true;
        s.push_node(node, f);
    }

    /// The pieces of the segment `x..y` (on the boundary of `n`'s polygon) that `n` reaches:
    /// the part inside its cone, and the parts outside on the left and on the right when the
    /// interval's end on that side is a corner to bend round (`bends`: left, right); into
    /// `out` (cleared first).
    fn pieces(&self, n: &Node, bends: (bool, bool), x: V3, y: V3, out: &mut Vec<Piece>) {
        out.clear();
        let tiny = 1e-9;
        if n.sees_all {
            out.push(Piece {
                t0: 0.0,
                t1: 1.0,
                bend: None,
            });
            return;
        }
        // Along the segment, `cross2(root, left, q(t))` and `cross2(root, right, q(t))` are
        // linear in t: inside the cone the first is at most 0 and the second at least 0.
        let (l0, l1) = (cross2(n.root, n.left, x), cross2(n.root, n.left, y));
        let (r0, r1) = (cross2(n.root, n.right, x), cross2(n.root, n.right, y));
        // The t range where `c0 + t (c1 - c0)` has the sign asked for (`below`: <= 0).
        let range = |c0: f64, c1: f64, below: bool| -> Option<(f64, f64)> {
            let (a0, a1) = if below { (c0, c1) } else { (-c0, -c1) };
            match (a0 <= 0.0, a1 <= 0.0) {
                (true, true) => Some((0.0, 1.0)),
                (false, false) => None,
                (true, false) => Some((0.0, (a0 / (a0 - a1)).clamp(0.0, 1.0))),
                (false, true) => Some(((a0 / (a0 - a1)).clamp(0.0, 1.0), 1.0)),
            }
        };
        // A cut within the tolerance of an end of the segment is that end: a cone through a
        // corner must keep the corner as its end (to bend round), not leave a sliver beside it.
        let near = self.eps as f64 / plan_len(x, y).max(1e-30);
        let snap = |t: f64| {
            if t <= near {
                0.0
            } else if t >= 1.0 - near {
                1.0
            } else {
                t
            }
        };
        let meet = |a: Option<(f64, f64)>, b: Option<(f64, f64)>| match (a, b) {
            (Some(a), Some(b)) => {
                let (t0, t1) = (snap(a.0.max(b.0)), snap(a.1.min(b.1)));
                (t0 < t1 - tiny).then_some((t0, t1))
            }
            _ => None,
        };
        let inside_left = range(l0, l1, true);
        let inside_right = range(r0, r1, false);
        if let Some((t0, t1)) = meet(inside_left, inside_right) {
            out.push(Piece { t0, t1, bend: None });
        }
        // Strictly outside one side of the cone, and not past the other side.
        let outside = [
            (bends.0, range(l0, l1, false), inside_right, Side::Left),
            (bends.1, range(r0, r1, true), inside_left, Side::Right),
        ];
        for (bend, beyond, within, side) in outside {
            if !bend {
                continue;
            }
            if let Some((t0, t1)) = meet(beyond, within) {
                out.push(Piece {
                    t0,
                    t1,
                    bend: Some(side),
                });
            }
        }
    }

    /// The root and its cost for a piece of `n`'s expansion: `n`'s own, or the interval end
    /// bent round; `None` when that vertex was made a root more cheaply before.
    fn piece_root(&self, s: &mut Search, n: &Node, piece: &Piece) -> Option<(V3, bool, f64)> {
        let (root, vertex) = match piece.bend {
            None => return Some((n.root, n.root_corner, n.g)),
            Some(Side::Left) => (n.left, true),
            Some(Side::Right) => (n.right, true),
        };
        let g = n.g + plan_len(n.root, root);
        let eps = self.eps as f64;
        match s.root_g.get_mut(&key(root)) {
            Some(best) if *best < g - eps => None,
            Some(best) => {
                *best = best.min(g);
                Some((root, vertex, g))
            }
            None => {
                s.root_g.insert(key(root), g);
                Some((root, vertex, g))
            }
        }
    }

    /// A node for a piece of the edge `x..y` (whether its ends are mesh corners: `vx`, `vy`),
    /// opening into `nb`.
    #[allow(clippy::too_many_arguments)]
    fn push_piece(
        &self,
        s: &mut Search,
        id: u32,
        n: &Node,
        piece: Piece,
        (x, y): (V3, V3),
        (vx, vy): (bool, bool),
        nb: u32,
        goal: Goal,
    ) {
        let Some((root, root_corner, g)) = self.piece_root(s, n, &piece) else {
            return;
        };
        let (mut a, mut b) = (lerp3(x, y, piece.t0), lerp3(x, y, piece.t1));
        let (mut va, mut vb) = (piece.t0 == 0.0 && vx, piece.t1 == 1.0 && vy);
        // Seen from the root, the left end is the one with the other on its right.
        let c = cross2(root, a, b);
        let mut sees_all = false;
        // Within the tolerance of the line (the mesh is f32: a corner on an edge's line
        // rarely computes exactly on it, and a sliver of a cone would bend round the far end).
        let eps = self.eps as f64;
        if c * c <= eps * eps * plan_dist2(a, b) {
            // The root is on the edge's line. On the edge (an end of it included) it sees
            // all of the polygon beyond; off it, it sees the edge end-on, and the polygon
            // beyond is reached only by bending round the nearer end.
            let (da, db, ab) = (plan_len(root, a), plan_len(root, b), plan_len(a, b));
            if da + db <= ab + eps {
                sees_all = true;
            } else if da <= db {
                (b, vb) = (a, va);
            } else {
                (a, va) = (b, vb);
            }
        }
        let ((left, left_corner), (right, right_corner)) = if c <= 0.0 {
            ((a, va), (b, vb))
        } else {
            ((b, vb), (a, va))
        };
        let f = (g + goal.through(root, left, right)).max(s.parent_f);
        s.push_node(
            Node {
                g,
                root,
                root_corner,
                left,
                right,
                left_corner,
                right_corner,
                sees_all,
                poly: nb,
                from: n.poly,
                parent: id,
                end: false,
                jump: false,
            },
            f,
        );
    }

    /// A node for taking a link across a piece of its segment `a..b`: the string is pulled to
    /// the piece's point on the way to `end`, then steps to the landing, a new root that sees
    /// all of `to`.
    #[allow(clippy::too_many_arguments)]
    fn push_link(
        &self,
        s: &mut Search,
        id: u32,
        n: &Node,
        piece: Piece,
        (a, b): (V3, V3),
        to: u32,
        goal: Goal,
    ) {
        let Some((root, _, g)) = self.piece_root(s, n, &piece) else {
            return;
        };
        let (pa, pb) = (lerp3(a, b, piece.t0), lerp3(a, b, piece.t1));
        let at = goal.link_point(root, pa, pb);
        let landing = self.closest_point(to, at).unwrap_or(at);
        let g = g + plan_len(root, at) + plan_len(at, landing);
        let f = (g + goal.from(landing)).max(s.parent_f);
        s.push_node(Node::at(landing, g, to, n.poly, id, false), f);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::{Costs, Query};

    /// Squares of `side` metres with their corners at `side` times `cells` (x, y), each its own polygon, in that
    /// order, as a navmesh file's bytes.
    pub(crate) fn squares(cells: &[(i32, i32)], side: i32) -> Vec<u8> {
        let input = tessera_test_support::mesh::squares(cells, side);
        let frame = tessera_test_support::mesh::unit_frame([0.0; 3]);
        let mesh = tessera_navgraph::build(frame, &input).expect("valid test mesh");
        tessera_navmesh::encode(&mesh)
    }

    #[test]
    fn the_corridor_over_polygons_joins_what_portals_join() {
        // An L of three squares, and one apart.
        let bytes = tessera_navmesh::aligned(&squares(&[(0, 0), (1, 0), (1, 1), (5, 5)], 2));
        let mesh = tessera_navmesh::access(&bytes, "test.tsn").unwrap();
        let q = Query::new(mesh);
        let ends = |end_poly, end| crate::hier::Ends {
            start_poly: 0,
            start: [1.0, 1.0, 0.0],
            end_poly,
            end,
        };
        let c = q
            .corridor_over_polygons(ends(2, [3.0, 3.0, 0.0]), &Costs::default())
            .expect("joined");
        assert!(c.found);
        assert_eq!(c.polys, [0, 1, 2]);
        assert!(q
            .corridor_over_polygons(ends(3, [11.0, 11.0, 0.0]), &Costs::default())
            .is_none());
    }

    #[test]
    fn an_end_within_the_tolerance_of_the_boundary_is_moved_onto_it() {
        let bytes = tessera_navmesh::aligned(&squares(&[(0, 0)], 2));
        let mesh = tessera_navmesh::access(&bytes, "test.tsn").unwrap();
        let q = Query::new(mesh);
        let eps = q.eps;
        let near_edge = [1.0, 2.0 - eps / 2.0, 0.5];
        assert_eq!(q.onto_boundary(0, near_edge), [1.0, 2.0, 0.5]);
        let near_corner = [2.0 - eps / 2.0, 2.0 - eps / 3.0, 0.5];
        assert_eq!(q.onto_boundary(0, near_corner), [2.0, 2.0, 0.5]);
        let inside = [1.0, 2.0 - 4.0 * eps, 0.5];
        assert_eq!(q.onto_boundary(0, inside), inside);
    }
}
