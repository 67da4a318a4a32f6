//! Hierarchical path queries (seed 003, 4.5 and 5): plan over the mesh's hierarchical graph
//! which clusters to cross, then search the polygons of those clusters near the plan's way.
//!
//! The file's [`tessera_navmesh::Hierarchy`] groups the polygons into clusters, lists the
//! entrances between clusters (a point on a portal, one entrance on each side; or a link's
//! segment and its landing) and, per cluster, the plan length of the shortest way between
//! any two of its entrances inside it and its halo (below). A query between two clusters:
//!
//! 1. **plans**: an A* over the entrances, from the start to every entrance of its cluster
//!    and from every entrance of the end's cluster to the end (lengths from the search
//!    below, confined to that one cluster and its halo, measured only when the A* takes
//!    them: first they count at their plan distance, a bound they cannot beat), through the
//!    clusters' tables of lengths and the steps across. The heuristic is the plan distance
//!    to the end, which no step beats, so the plan is the shortest way through entrances;
//! 2. **refines**: the exact any-angle search of [`Query::find_path`]'s flat form, confined
//!    to the clusters the plan crosses and the clusters beside its two ends (the *scope*),
//!    and within them to a *corridor* round the plan's way (see [`Query::set_corridor`]),
//!    plus a *halo*: a step from a polygon of the corridor into one outside it. That is a
//!    shortest path within them, which may pass the borders anywhere, not only at
//!    entrances, and cut across the corner of a cluster beside the way. Within a scope, a
//!    vertex on its boundary is a corner a path may bend round, as a mesh corner is;
//! 3. the polygons the way crosses are string-pulled as any.
//!
//! Both ends in one cluster, or nearer each other than a plan pays for (see [`flat_within`]):
//! the flat search (so the answer is the flat one). A plan that finds no way, or a
//! refinement that does not reach the end (neither happens on a mesh the builder wrote), falls
//! back to the flat search, so the hierarchical answer is found exactly when the flat one is;
//! so does a refinement past its budget of expansions (see [`EXPANSIONS_PER_POLYGON`]). A
//! refinement within the corridor that does not reach the end is run again over the whole
//! scope first.

use rustc_hash::FxHashMap;
use tessera_navmesh::{ArchivedNavMesh, NONE};

use crate::geom::{plan_len, V3};
use crate::path::Corridor;
use crate::radix::RadixHeap;
use crate::search::{Open, Run, Search};
use crate::Query;

/// The two ends of a query: each point and the polygon it is on.
#[derive(Clone, Copy)]
pub(crate) struct Ends {
    pub start_poly: u32,
    pub start: V3,
    pub end_poly: u32,
    pub end: V3,
}

/// Which search [`Query::find_path_with`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Planner {
    /// Plan over the hierarchy, then search the clusters planned (the default).
    #[default]
    Hierarchical,
    /// One search over every polygon.
    Flat,
}

/// The clusters round each vertex on a border between clusters (see [`Query::new`]): what a
/// scoped search reads to tell the boundary of its scope.
#[derive(Default)]
pub(crate) struct Borders {
    /// Per entry of the polygon vertex table: whether that corner lies on a cluster border.
    slots: Vec<bool>,
    /// By plan position: the clusters round that vertex, `lists[first .. first + count]`,
    /// and whether it is a corner of the mesh.
    at: FxHashMap<[u32; 2], (u32, u32, bool)>,
    lists: Vec<u32>,
}

impl Borders {
    /// From the mesh's hierarchy: every end of an edge between two clusters.
    pub(crate) fn new(mesh: &ArchivedNavMesh, corner_slots: &[bool]) -> Borders {
        let h = &mesh.hierarchy;
        if h.is_empty() {
            return Borders::default();
        }
        let mut pairs: Vec<([u32; 2], u32)> = Vec::new();
        for p in 0..mesh.polys.len() as u32 {
            let cp = h.cluster_of(p);
            let ids: Vec<u32> = mesh.poly_vert_ids(p).collect();
            for (k, nb) in mesh.poly_neighbours(p).enumerate() {
                if nb == NONE || nb as usize >= mesh.polys.len() {
                    continue;
                }
                let cn = h.cluster_of(nb);
                if cn == cp {
                    continue;
                }
                for v in [ids[k], ids[(k + 1) % ids.len()]] {
                    let key = crate::plan_key(mesh.vert(v));
                    pairs.push((key, cp));
                    pairs.push((key, cn));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut at = FxHashMap::default();
        let mut lists = Vec::with_capacity(pairs.len());
        for run in pairs.chunk_by(|a, b| a.0 == b.0) {
            at.insert(run[0].0, (lists.len() as u32, run.len() as u32, false));
            lists.extend(run.iter().map(|x| x.1));
        }
        let slots = mesh
            .poly_verts
            .iter()
            .zip(corner_slots)
            .map(|(v, &corner)| {
                let v = v.to_native();
                if v as usize >= mesh.verts.len() {
                    return false;
                }
                match at.get_mut(&crate::plan_key(mesh.vert(v))) {
                    Some(e) => {
                        e.2 |= corner;
                        true
                    }
                    None => false,
                }
            })
            .collect();
        Borders { slots, at, lists }
    }
}

/// The plan distance under which a query is searched flat: the diameter of a disc that holds,
/// at the mesh's mean density of polygons, as many polygons as four of its largest clusters.
/// A flat search between ends that close reaches about that many polygons, which costs no
/// more than a plan (its searches in the two end clusters and in the clusters planned), and
/// its answer is the shortest.
pub(crate) fn flat_within(mesh: &ArchivedNavMesh) -> f64 {
    let h = &mesh.hierarchy;
    let largest = h
        .clusters
        .iter()
        .map(|c| c.polygons.to_native())
        .max()
        .unwrap_or(0);
    let area = mesh.stats.walkable_area.to_native();
    let polygons = mesh.polys.len() as f64;
    if area.is_nan() || area <= 0.0 || polygons == 0.0 {
        return 0.0;
    }
    let density = polygons / area;
    (4.0 * 4.0 * f64::from(largest) / (std::f64::consts::PI * density)).sqrt()
}

/// What an open-list entry of the plan stands for: the two low bits of its `node`, above
/// them the entrance (see [`entry`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// An entrance reached at its cost.
    Entrance = 0,
    /// An entrance of the start's cluster, at the plan distance from the start: its leg,
    /// the length of the way there, is measured when the entry is taken.
    StartLeg = 1,
    /// The end, from an entrance of its cluster at the plan distance: the leg is measured
    /// when the entry is taken.
    EndLeg = 2,
    /// The end reached at its cost.
    End = 3,
}

/// The open-list entry for `step` at `node` (an entrance, or the end).
fn entry(f: f64, node: u32, step: Step) -> Open {
    Open {
        f,
        node: node << 2 | step as u32,
    }
}

impl RadixHeap<Open> {
    fn push_entry(&mut self, e: Open) {
        self.push(e.f, e);
    }
}

/// The expansions a refining search makes per polygon of its scope before it gives up and
/// the flat search answers (see [`Query::find_path_planned`]).
const EXPANSIONS_PER_POLYGON: usize = 32;

/// The slack of the corridor round each step of the plan's way (see [`Query::set_corridor`]):
/// this fraction of the step's length, but at least [`CORRIDOR_SLACK_FLOOR`].
const CORRIDOR_SLACK: f64 = 0.05;

/// ... in world units: twice the builder's least spacing of entrances along a border (2 m,
/// `tessera_navgraph::ClusterSettings::entrance_min_spacing`), so the corridor is as wide,
/// at each entrance the way passes, as the gap to the next entrance along the border, where
/// the shortest way may cross instead.
const CORRIDOR_SLACK_FLOOR: f64 = 4.0;

/// The most entrances a plan takes (two bits of an entry's number are its [`Step`]).
const MOST_ENTRANCES: usize = (u32::MAX >> 2) as usize - 1;

/// The buffers of a plan, kept per thread: per entrance (and the end, last) its cost and
/// where it was reached from, valid when its stamp is the current one.
#[derive(Default)]
struct Plan {
    /// Per entrance, one record (a cost looked up is one cache line, not three).
    entries: Vec<PlanEntry>,
    epoch: u32,
    open: RadixHeap<Open>,
    /// The legs measured so far: from the start to each entrance of its cluster, from each
    /// entrance of the end's cluster to the end (`NAN`: not measured yet).
    start_legs: Vec<f64>,
    end_legs: Vec<f64>,
}

#[derive(Clone, Copy)]
struct PlanEntry {
    g: f64,
    parent: u32,
    stamp: u32,
}

impl Plan {
    fn reset(&mut self, nodes: usize) {
        if self.entries.len() != nodes {
            *self = Plan {
                entries: vec![
                    PlanEntry {
                        g: 0.0,
                        parent: NONE,
                        stamp: 0,
                    };
                    nodes
                ],
                ..Plan::default()
            };
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.entries.iter_mut().for_each(|e| e.stamp = 0);
            self.epoch = 1;
        }
        self.open.clear();
    }

    fn cost(&self, v: u32) -> f64 {
        let e = &self.entries[v as usize];
        if e.stamp == self.epoch {
            e.g
        } else {
            f64::INFINITY
        }
    }

    fn parent(&self, v: u32) -> u32 {
        self.entries[v as usize].parent
    }

    fn set(&mut self, v: u32, g: f64, parent: u32) {
        self.entries[v as usize] = PlanEntry {
            g,
            parent,
            stamp: self.epoch,
        };
    }
}

/// What [`Query::plan`] found: the clusters its way crosses (the start's first), its length,
/// and its points (the start, the entrances, the end) each with the cost to it.
struct Planned {
    clusters: Vec<u32>,
    length: f64,
    way: Vec<(V3, f64)>,
}

/// The plan box of the ellipse of foci `a` and `b` whose points lie at most `reach` from
/// the two together (in plan), widened a little for rounding.
fn ellipse_box(a: V3, b: V3, reach: f64) -> ([f32; 2], [f32; 2]) {
    let (major, focal) = (reach / 2.0, plan_len(a, b) / 2.0);
    let minor2 = (major * major - focal * focal).max(0.0);
    let (ux, uy) = if focal > 0.0 {
        (
            f64::from(b[0] - a[0]) / (2.0 * focal),
            f64::from(b[1] - a[1]) / (2.0 * focal),
        )
    } else {
        (1.0, 0.0)
    };
    let half = |along: f64, across: f64| {
        ((major * major * along * along + minor2 * across * across).sqrt() * (1.0 + 1e-6) + 1e-3)
            as f32
    };
    let (hx, hy) = (half(ux, uy), half(uy, ux));
    let c = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
    ([c[0] - hx, c[1] - hy], [c[0] + hx, c[1] + hy])
}

thread_local! {
    static PLAN: std::cell::RefCell<Plan> = std::cell::RefCell::new(Plan::default());
}

impl Query<'_> {
    /// Whether a search with the buffers `s` may enter polygon `p` (always, unless scoped).
    #[inline]
    pub(crate) fn enters(&self, s: &Search, p: u32) -> bool {
        if !s.scoped {
            true
        } else if s.corridor {
            s.corridor_polys[p as usize] == s.corridor_stamp
        } else {
            s.allows(self.mesh.hierarchy.cluster_of(p))
        }
    }

    /// Whether a search with the buffers `s` may step from polygon `from` into `p`: into any
    /// polygon unless scoped; within a scope, into its clusters, and out of them from a
    /// polygon in them (the halo: one polygon deep).
    #[inline]
    pub(crate) fn enters_from(&self, s: &Search, from: u32, p: u32) -> bool {
        self.enters(s, p) || self.enters(s, from)
    }

    /// The corner flags of polygon `p` in a scoped search, into `out`: a mesh corner, or a
    /// vertex with a polygon round it outside the scope (within a corridor: an end of an
    /// edge of `p` with a polygon across outside the corridor).
    pub(crate) fn scoped_corner_flags(&self, s: &Search, p: u32, out: &mut Vec<bool>) {
        out.clear();
        out.extend_from_slice(self.corner_flags(p));
        let poly = &self.mesh.polys[p as usize];
        let first = poly.first.to_native() as usize;
        if s.corridor {
            let n = out.len();
            let neis = &self.mesh.poly_neis[first..first + n];
            let outside = |k: usize| {
                let nb = neis[k].to_native();
                self.valid_poly(nb) && s.corridor_polys[nb as usize] != s.corridor_stamp
            };
            let mut before = outside(n - 1);
            for (k, flag) in out.iter_mut().enumerate() {
                let after = outside(k);
                *flag |= before || after;
                before = after;
            }
            return;
        }
        for (k, flag) in out.iter_mut().enumerate() {
            if *flag || !self.borders.slots[first + k] {
                continue;
            }
            let v = self.mesh.poly_verts[first + k].to_native();
            if let Some(&(at, n, _)) = self.borders.at.get(&crate::plan_key(self.mesh.vert(v))) {
                *flag = self.borders.lists[at as usize..(at + n) as usize]
                    .iter()
                    .any(|&c| !s.allows(c));
            }
        }
    }

    /// Confines the searches over `s` to the clusters `clusters` and their halo (`None`: no
    /// scope).
    pub(crate) fn set_scope(&self, s: &mut Search, clusters: Option<&[u32]>) {
        s.scoped = clusters.is_some();
        if let Some(clusters) = clusters {
            let words = self.mesh.hierarchy.clusters.len().div_ceil(64);
            s.scope.clear();
            s.scope.resize(words, 0);
            for &c in clusters {
                s.scope[c as usize / 64] |= 1 << (c % 64);
            }
        }
    }

    /// The hierarchical search of [`Query::find_path`] between polygons of one component and
    /// of different clusters: the plan, then the search within the clusters it crosses;
    /// `None` when either finds nothing (the caller then searches every polygon).
    pub(crate) fn find_path_planned(&self, ends: Ends, s: &mut Search) -> Option<Corridor> {
        let Planned {
            mut clusters,
            length,
            way,
        } = PLAN.with(|plan| self.plan(ends, s, &mut plan.borrow_mut()))?;
        // The legs were measured within the end clusters alone, and a way may leave a
        // cluster that is not convex and come back to it: the clusters beside the two ends
        // are searched too.
        let h = &self.mesh.hierarchy;
        for c in [clusters[0], clusters[clusters.len() - 1]] {
            for e in h.entrance_range(c) {
                let across = h.entrance(e).across;
                if across != NONE {
                    let beside = h.entrance(across).cluster;
                    if !clusters.contains(&beside) {
                        clusters.push(beside);
                    }
                }
            }
        }
        self.set_scope(s, Some(&clusters));
        // The plan is a way within those clusters, and within the corridor: the shortest one
        // is no longer, and nodes beyond it (with a margin for rounding, and for a link's
        // point, which the search chooses rather than searches) need not be kept.
        s.bound = Some(length * 1.01 + f64::from(self.eps));
        // Bending round the scope's boundary as round the mesh's corners, the search finds
        // the shortest way within the scope. On a finely cut mesh (centimetre cells, no
        // erosion) that boundary is a staircase of vertices, each a root whose cone sweeps
        // the scope: hundreds of times the expansions of the flat search. So the search has
        // a budget of expansions per polygon of its scope (bakes at the usual cell sizes
        // take under a tenth of it), past which the flat search answers.
        // The budget is the scope's: a corridor is narrow and its boundary a row of corners,
        // so it may take more expansions per polygon than the clusters whole (2 of 3 000
        // pairs on citygen XL ran past 32 per polygon of their corridor, and then searched
        // flat for 0.3-0.75 s).
        let polygons: usize = clusters
            .iter()
            .map(|&c| h.clusters[c as usize].polygons.to_native() as usize)
            .sum();
        s.limit = Some(EXPANSIONS_PER_POLYGON * polygons);
        let mut run = match self.set_corridor(s, &way) {
            0 => Run::Exhausted,
            _ => self.polyanya_run(ends, s),
        };
        s.corridor = false;
        // The corridor holds the plan's way, so this is for a search the tolerance stopped
        // short (see [`Query::polyanya`]): the whole scope, before the flat search.
        if let Run::Exhausted = run {
            run = self.polyanya_run(ends, s);
        }
        s.limit = None;
        s.bound = None;
        self.set_scope(s, None);
        match run {
            Run::Reached(node) => Some(self.trace(s, node, true)),
            Run::Exhausted | Run::Limit => None,
        }
    }

    /// The plan: the clusters the shortest way through entrances crosses, start's first
    /// (see the module documentation), and that way's length; `None` when no way joins the
    /// two.
    fn plan(&self, ends: Ends, s: &mut Search, plan: &mut Plan) -> Option<Planned> {
        let Ends {
            start_poly,
            start,
            end_poly,
            end,
        } = ends;
        let h = &self.mesh.hierarchy;
        let (cs, ce) = (h.cluster_of(start_poly), h.cluster_of(end_poly));
        if h.entrances.len() > MOST_ENTRANCES {
            return None;
        }
        let count = h.entrances.len() as u32;
        plan.reset(count as usize + 1);
        let goal = count;
        let h_of = |p: V3| plan_len(p, end);
        let (start_range, end_range) = (h.entrance_range(cs), h.entrance_range(ce));
        plan.start_legs.clear();
        plan.start_legs.resize(start_range.len(), f64::NAN);
        plan.end_legs.clear();
        plan.end_legs.resize(end_range.len(), f64::NAN);
        // The legs inside the end clusters are measured lazily (A* with lazy edges): each is
        // first taken at the plan distance, a bound it cannot beat, and measured (a search
        // within its cluster) only when its entry comes first; so the plan is the one exact
        // legs would give, and only the legs on the way are measured.
        for e in start_range.clone() {
            let p = h.entrance(e).point;
            plan.open
                .push_entry(entry(plan_len(start, p) + h_of(p), e, Step::StartLeg));
        }
        while let Some(Open { f, node: at }) = plan.open.pop() {
            let node = at >> 2;
            let step = [Step::Entrance, Step::StartLeg, Step::EndLeg, Step::End][(at & 3) as usize];
            match step {
                Step::End if f <= plan.cost(goal) => break,
                Step::End => continue,
                Step::StartLeg | Step::EndLeg => {
                    // The leg measured (once), then the entrance or the end it reaches.
                    let at_end = step == Step::EndLeg;
                    let x = h.entrance(node);
                    let (first, c) = if at_end {
                        (end_range.start, ce)
                    } else {
                        (start_range.start, cs)
                    };
                    let legs = if at_end {
                        &mut plan.end_legs
                    } else {
                        &mut plan.start_legs
                    };
                    let k = (node - first) as usize;
                    if legs[k].is_nan() {
                        let way = if at_end {
                            Ends {
                                start_poly: x.poly,
                                start: x.point,
                                ..ends
                            }
                        } else {
                            Ends {
                                end_poly: x.poly,
                                end: x.point,
                                ..ends
                            }
                        };
                        self.set_scope(s, Some(&[c]));
                        legs[k] = self
                            .polyanya_to(way, s)
                            .map_or(f64::INFINITY, |n| s.length(n));
                        self.set_scope(s, None);
                    }
                    let leg = legs[k];
                    let (to, g, parent, f, next) = if at_end {
                        let g = plan.cost(node) + leg;
                        (goal, g, node, g, Step::End)
                    } else {
                        (node, leg, NONE, leg + h_of(x.point), Step::Entrance)
                    };
                    if g < plan.cost(to) {
                        plan.set(to, g, parent);
                        plan.open.push_entry(entry(f, to, next));
                    }
                    continue;
                }
                Step::Entrance => {}
            }
            let g = plan.cost(node);
            let x = h.entrance(node);
            if f > g + h_of(x.point) + 1e-9 * (1.0 + f) {
                continue; // reached again more cheaply since
            }
            let relax = |plan: &mut Plan, to: u32, cost: f64| {
                let g2 = g + cost;
                if g2 < plan.cost(to) {
                    plan.set(to, g2, node);
                    let at = h.entrance(to).point;
                    plan.open
                        .push_entry(entry(g2 + h_of(at), to, Step::Entrance));
                }
            };
            if x.cluster == ce {
                plan.open
                    .push_entry(entry(g + h_of(x.point), node, Step::EndLeg));
            }
            if x.across != NONE {
                relax(plan, x.across, x.cost as f64);
            }
            let range = h.entrance_range(x.cluster);
            let row = h.cost_row(x.cluster, node - range.start);
            for (j, c) in range.zip(row) {
                let c = c.to_native();
                if j != node && c.is_finite() {
                    relax(plan, j, c as f64);
                }
            }
        }
        if plan.cost(goal).is_infinite() {
            return None;
        }
        let mut clusters = vec![ce];
        let mut way = vec![(end, plan.cost(goal))];
        let mut at = plan.parent(goal);
        let mut steps = 0;
        while at != NONE && steps <= count {
            way.push((h.entrance(at).point, plan.cost(at)));
            let c = h.entrance(at).cluster;
            if clusters.last() != Some(&c) {
                clusters.push(c);
            }
            at = plan.parent(at);
            steps += 1;
        }
        if clusters.last() != Some(&cs) {
            clusters.push(cs);
        }
        clusters.reverse();
        way.push((start, 0.0));
        way.reverse();
        Some(Planned {
            clusters,
            length: plan.cost(goal),
            way,
        })
    }

    /// Narrows the scope of `s` to a corridor round the plan's `way` (its points, start to
    /// end, each with the plan's cost to it), and gives the number of polygons in it: the
    /// polygons of the scope whose plan box meets an ellipse round some step of the way.
    ///
    /// A step from `a` to `b` costed `l` by the plan is a way that long, so no point of it
    /// lies farther from `a` plus from `b` than `l`: every point of the plan's way lies in
    /// the ellipse of foci `a` and `b` and major axis `l`, and the refinement always finds a
    /// way no longer than the plan's. The ellipse is widened by a slack ([`CORRIDOR_SLACK`])
    /// for a shorter way that passes a border away from the plan's entrances. The scope's
    /// clusters are whole squares of the plan, most of them far to the side of a way across
    /// them, and the refinement searches nearly every polygon it may enter: the corridor
    /// holds a half to a third as many.
    pub(crate) fn set_corridor(&self, s: &mut Search, way: &[(V3, f64)]) -> usize {
        let n = self.mesh.polys.len();
        if s.corridor_polys.len() != n {
            s.corridor_polys = vec![0; n];
            s.corridor_stamp = 0;
        }
        s.corridor_stamp = s.corridor_stamp.wrapping_add(1);
        if s.corridor_stamp == 0 {
            s.corridor_polys.fill(0);
            s.corridor_stamp = 1;
        }
        let (g, h) = (&self.mesh.grid, &self.mesh.hierarchy);
        let (width, cell) = (g.width.to_native() as usize, g.cell.to_native());
        let origin = [g.min[0].to_native(), g.min[1].to_native()];
        if width == 0 || g.height.to_native() == 0 {
            return 0;
        }
        let mut count = 0;
        for step in way.windows(2) {
            let ((a, ga), (b, gb)) = (step[0], step[1]);
            let length = (gb - ga).max(0.0);
            let reach = length + (CORRIDOR_SLACK * length).max(CORRIDOR_SLACK_FLOOR);
            let meets = |lo: [f32; 2], hi: [f32; 2]| {
                crate::box_distance((lo, hi), a) + crate::box_distance((lo, hi), b) <= reach
            };
            let (lo, hi) = ellipse_box(a, b, reach);
            let (x0, y0, x1, y1) = self.mesh.grid_cells(lo, hi);
            for y in y0 as usize..=y1 as usize {
                for x in x0 as usize..=x1 as usize {
                    // A polygon whose box meets the ellipse is listed in a cell that does.
                    let at = |i: usize, o: f32| o + i as f32 * cell;
                    let cell_lo = [at(x, origin[0]), at(y, origin[1])];
                    let cell_hi = [at(x + 1, origin[0]), at(y + 1, origin[1])];
                    if !meets(cell_lo, cell_hi) {
                        continue;
                    }
                    let c = y * width + x;
                    let (first, last) = (
                        g.start[c].to_native() as usize,
                        g.start[c + 1].to_native() as usize,
                    );
                    for (p, b) in g.items[first..last]
                        .iter()
                        .zip(&self.grid_boxes[first..last])
                    {
                        let p = p.to_native() as usize;
                        if s.corridor_polys[p] != s.corridor_stamp
                            && s.allows(h.cluster_of(p as u32))
                            && meets([b[0], b[1]], [b[3], b[4]])
                        {
                            s.corridor_polys[p] = s.corridor_stamp;
                            count += 1;
                        }
                    }
                }
            }
        }
        s.corridor = count > 0;
        count
    }
}

impl Query<'_> {
    /// The plan lengths of the shortest ways from `start` (on `start_poly`) to each of
    /// `targets` (`(polygon, point)`), in their order: `INFINITY` for a target no way
    /// reaches (or an invalid one). One search in order of distance, which stops once every
    /// target is reached; what the builder measures a cluster's table of lengths with.
    pub fn lengths_from(
        &self,
        start_poly: u32,
        start: [f32; 3],
        targets: &[(u32, [f32; 3])],
    ) -> Vec<f64> {
        let mut out = Vec::new();
        crate::path::SEARCH.with(|search| {
            let mut search = search.borrow_mut();
            self.lengths_into(&mut search, start_poly, start, targets, &mut out);
            search.shrink(1 << 16);
        });
        out
    }

    /// [`Query::lengths_from`] over the buffers `s` (within their scope), into `out`.
    fn lengths_into(
        &self,
        s: &mut Search,
        start_poly: u32,
        start: V3,
        targets: &[(u32, V3)],
        out: &mut Vec<f64>,
    ) {
        out.clear();
        out.resize(targets.len(), f64::INFINITY);
        if !self.valid_poly(start_poly) || !crate::geom::finite3(start) {
            return;
        }
        let mut order: Vec<usize> = (0..targets.len())
            .filter(|&i| self.valid_poly(targets[i].0) && crate::geom::finite3(targets[i].1))
            .collect();
        order.sort_by_key(|&i| targets[i].0);
        if order.is_empty() {
            return;
        }
        let sorted: Vec<(u32, V3)> = order.iter().map(|&i| targets[i]).collect();
        self.polyanya_many(start_poly, start, &sorted, s);
        for (k, &i) in order.iter().enumerate() {
            out[i] = s.lengths[k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Ends, Planned, Planner, PLAN};
    use crate::geom::plan_len;
    use crate::Query;

    /// A 256 x 256 m field of 4 m squares with rows of 24 x 24 m blocks cut out of it
    /// (streets 16 m wide): several clusters of the hierarchy, and ways that bend round the
    /// blocks.
    fn blocks() -> Vec<u8> {
        let cells: Vec<(i32, i32)> = (0..64)
            .flat_map(|y| (0..64).map(move |x| (x, y)))
            .filter(|&(x, y)| x % 10 < 4 || y % 10 < 4)
            .collect();
        crate::search::tests::squares(&cells, 4)
    }

    #[test]
    fn the_corridor_holds_the_plans_way_and_narrows_its_clusters() {
        let bytes = tessera_navmesh::aligned(&blocks());
        let mesh = tessera_navmesh::access(&bytes, "test.tsn").unwrap();
        let q = Query::new(mesh);
        let h = &mesh.hierarchy;
        assert!(h.clusters.len() >= 8, "{} clusters", h.clusters.len());
        let mut rng = crate::Rng::new(7);
        let (mut planned, mut narrower) = (0, 0);
        for _ in 0..200 {
            let (sp, s) = q.random_point(&mut rng).unwrap();
            let (ep, e) = q.random_point(&mut rng).unwrap();
            if !q.plans(sp, s, ep, e) {
                continue;
            }
            planned += 1;
            let ends = Ends {
                start_poly: sp,
                start: s,
                end_poly: ep,
                end: e,
            };
            crate::path::SEARCH.with(|search| {
                let search = &mut *search.borrow_mut();
                let Planned {
                    clusters,
                    length,
                    way,
                } = PLAN
                    .with(|plan| q.plan(ends, search, &mut plan.borrow_mut()))
                    .expect("one component");
                assert_eq!((way[0].0, way[way.len() - 1].0), (s, e));
                assert_eq!(way[way.len() - 1].1, length);
                q.set_scope(search, Some(&clusters));
                let polygons = q.set_corridor(search, &way);
                assert!(search.corridor && polygons > 0);
                let inside = |p: u32| search.corridor_polys[p as usize] == search.corridor_stamp;
                // The polygons of the way's points: the ends' and the entrances'.
                assert!(inside(sp) && inside(ep));
                for (k, &(point, _)) in way.iter().enumerate().skip(1).take(way.len() - 2) {
                    let poly = (0..h.entrances.len() as u32)
                        .map(|x| h.entrance(x))
                        .find(|x| x.point == point)
                        .expect("an entrance")
                        .poly;
                    assert!(inside(poly), "entrance {k} of the way outside its corridor");
                }
                // Only polygons of the scope, and those near the way.
                let scope: usize = (0..mesh.polys.len() as u32)
                    .filter(|&p| clusters.contains(&h.cluster_of(p)))
                    .count();
                for p in 0..mesh.polys.len() as u32 {
                    if !inside(p) {
                        continue;
                    }
                    assert!(clusters.contains(&h.cluster_of(p)));
                    let near = way.windows(2).any(|w| {
                        let reach = (w[1].1 - w[0].1) * 1.05 + 4.0 + 4.0 * 2f64.sqrt();
                        let c = q.closest_point(p, w[0].0).unwrap();
                        plan_len(c, w[0].0) + plan_len(c, w[1].0) <= reach
                    });
                    assert!(near, "polygon {p} far from every step of the way");
                }
                assert!(polygons <= scope);
                if polygons < scope {
                    narrower += 1;
                }
                search.corridor = false;
                q.set_scope(search, None);
            });
            // And the path the corridor gives is the flat one's length within a percent.
            let plan = q.find_path_with(sp, s, ep, e, Planner::Hierarchical);
            let flat = q.find_path_with(sp, s, ep, e, Planner::Flat);
            let len = |c: &crate::Corridor| {
                q.straight_path(s, e, &c.polys)
                    .windows(2)
                    .map(|w| plan_len(w[0], w[1]))
                    .sum::<f64>()
            };
            assert!(plan.found && flat.found);
            assert!(len(&plan) <= len(&flat) * 1.01 + 1e-4);
        }
        assert!(
            planned >= 50 && narrower * 4 >= planned * 3,
            "{narrower} of {planned}"
        );
    }
}
