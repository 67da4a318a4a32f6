//! ANavMG: a region cut into few convex cells, one portal per notch.
//!
//! Based on: R. Oliva and N. Pelechano, "Automatic Generation of Suboptimal NavMeshes",
//! Motion in Games (MIG) 2011, LNCS 7060 (seed 002), section 3: notches and their areas of
//! interest (3.1), one portal per notch to the closest element in that area, vertex-vertex,
//! vertex-edge or vertex-portal (3.2.1 to 3.2.3), removal of portals that became unnecessary
//! (3.2.3), and convexity relaxation by tau (3.3). Seed 000 (G. Saupin et al., WSCG 2013,
//! 5.1.3) points to it for "a more optimal convex partitioning".
//!
//! How this departs from the paper, and why:
//! * Candidates come from the constrained Delaunay triangulation ([`crate::triangulate`]): a
//!   vertex-vertex portal is a diagonal of it, and the closest element is found by a
//!   best-first walk over the triangles of the area of interest ([`sight`]) instead of a
//!   scan of every element (O(n r) in the paper).
//! * The rule: first a diagonal that splits the notch at its other end too (the paper's
//!   vertex-vertex portal that serves two notches, 3.2.1), then the shortest diagonal, and
//!   only then the closest point (`Rule::BothEnds`). The paper's rule, the closest element
//!   whatever it is, gives more cells on our floor plans (benches/RESULTS-polygons.md); it
//!   and the older diagonals-first rule are kept in test builds only, for that measurement.
//! * Vertex-edge portals end at grid points strictly inside a wall (a boundary edge with
//!   nothing walkable across), not at a projection or an extended edge's intersection
//!   (3.2.2): vertices stay integer, and a point on a border shared with another region
//!   would be a T-junction for that region's polygons.
//! * Vertex-portal portals (3.2.3) end at a portal's end, never inside it. Portals to new
//!   points are fixed in rounds ([`ROUNDS`]), each triangulating the region again with them
//!   as edges, so that a later notch sees their ends as vertices. When nothing is found
//!   (the cone ends on a shared border, or the search gives up), the two diagonals around
//!   the cone split the notch, as the paper's two portals to a portal's ends do.
//! * Removal runs once every notch has its portal, longest portal first, and a wall point
//!   left without a portal is taken out again.
//! * Convexity is exact on the grid at tau 0 (integer cross products); with tau, angles are
//!   compared in `f64` ([`cone`]).
//! * A safety net: if a cell does not come out simple (never seen), the region falls back
//!   to [`hertel_mehlhorn`], and the caller counts it.

mod cone;
mod mesh;
mod sight;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tessera_artifacts::Point;
use tessera_geom::predicates::{length2, meet_beyond_shared_end};

use crate::hertel_mehlhorn;
use crate::partition::{edge_key, find, RegionPolygons};
use cone::{within, Cone};
use mesh::{Mesh, Outline, Plan, NONE};
use sight::reach;

/// One corner of the region: a boundary vertex with the rays leaving it into the region,
/// counter-clockwise from the outgoing boundary edge to the incoming one (reversed).
#[derive(Clone, Copy)]
struct Corner<'a> {
    v: u32,
    rays: &'a [u32],
}

/// The corners of a mesh, their rays in one list.
struct Corners {
    /// (vertex, its rays' range in `rays`) per corner.
    list: Vec<(u32, u32, u32)>,
    rays: Vec<u32>,
}

impl Corners {
    fn get(&self, c: usize) -> Corner<'_> {
        let (v, lo, hi) = self.list[c];
        Corner {
            v,
            rays: &self.rays[lo as usize..hi as usize],
        }
    }

    fn iter(&self) -> impl Iterator<Item = Corner<'_>> {
        (0..self.list.len()).map(|c| self.get(c))
    }
}

/// Portals and diagonals chosen (undirected edges, by [`edge_key`]), with how many of them
/// end at each vertex: an edge at a vertex without any is not looked up.
#[derive(Clone)]
struct Chosen {
    set: HashSet<(u32, u32)>,
    ends: Vec<u32>,
}

impl Chosen {
    /// The fixed portals of `mesh`.
    fn fixed(mesh: &Mesh) -> Chosen {
        let mut chosen = Chosen {
            set: HashSet::default(),
            ends: vec![0; mesh.verts.len()],
        };
        for &k in &mesh.fixed {
            chosen.insert(k);
        }
        chosen
    }

    /// Whether the edge between `a` and `b` is chosen.
    fn contains(&self, a: u32, b: u32) -> bool {
        self.ends[a as usize] > 0 && self.ends[b as usize] > 0 && self.set.contains(&edge_key(a, b))
    }

    /// Chooses edge `k`; whether it was not chosen yet.
    fn insert(&mut self, k: (u32, u32)) -> bool {
        let new = self.set.insert(k);
        if new {
            self.ends[k.0 as usize] += 1;
            self.ends[k.1 as usize] += 1;
        }
        new
    }

    fn remove(&mut self, k: (u32, u32)) {
        if self.set.remove(&k) {
            self.ends[k.0 as usize] -= 1;
            self.ends[k.1 as usize] -= 1;
        }
    }
}

/// Rounds of portals to new points (each one triangulates the region again) before the notches
/// still open are bracketed by two diagonals.
pub(crate) const ROUNDS: usize = 6;

/// ANavMG (seed 002). Every notch (a corner whose angle exceeds pi + tau) gets one portal
/// inside its area of interest (the cone of directions that split it into two tau-convex
/// angles); a portal already there for an earlier notch counts for it too:
/// * vertex-vertex serving two notches: the shortest diagonal of the triangulation in the
///   cone whose other end is a notch it splits as well;
/// * else vertex-vertex: the shortest diagonal in the cone;
/// * when none: the closest point the notch sees in the cone (the triangles of the whole
///   cone are searched), a vertex or a grid point on a wall (`is_wall`: a boundary edge,
///   region on its left, with nothing walkable across; only there may new points go, since a
///   point on a border shared with another region would be a T-junction for that region's
///   polygons). Points inside existing portals are never used: they are not on the grid in
///   general and would be T-junctions; a portal's ends are vertices and count as such;
/// * when that fails too (the cone ends on a shared border, or out of reach): the two
///   diagonals that bracket the cone.
///
/// Portals to new points are fixed in rounds: the ones accepted in a round (none crossing
/// another) become edges of a new triangulation, and the next round starts over from it, so
/// a later notch can end its portal at a fixed portal's end (the paper's vertex-portal case).
/// Then portals that became unnecessary are removed, longest first, and a point on a wall
/// left with no portal is taken out again. Cells are the pieces the kept portals cut.
/// Falls back to [`hertel_mehlhorn`] if a cell does not come out simple (never seen; a safety
/// net), which the second value reports.
///
/// Seed 002's own rule (the closest point in the cone whatever it is, diagonal or not) is
/// `Rule::Closest`; it is measured, not used (more cells on our plans).
pub fn anavmg(
    verts: Vec<Point>,
    tris: Vec<[u32; 3]>,
    is_wall: &dyn Fn(Point, Point) -> bool,
    tau: f64,
) -> (RegionPolygons, bool) {
    anavmg_with(verts, tris, is_wall, tau, &Settings::default())
}

/// Which portal a notch gets. Only [`Rule::BothEnds`] exists outside test builds; the other
/// rules are experiments, measured by the floor-plan test behind benches/RESULTS-polygons.md
/// and selected by no config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// The shortest diagonal of the triangulation in the cone; the closest point seen there
    /// only when there is none (tessera before the paper's rule, the search now over the whole
    /// cone rather than one triangle). Measured only.
    #[cfg(test)]
    Diagonals,
    /// Seed 002, 3.2: the closest point seen in the cone, whatever it is (a vertex joined by
    /// a diagonal, another vertex, a grid point on a wall). Measured only: on our floor plans
    /// and random rooms it gives more cells than the other two (benches/RESULTS-polygons.md).
    #[cfg(test)]
    Closest,
    /// The shortest diagonal in the cone that also splits the notch at its other end (a
    /// vertex-vertex portal serving two notches, which the paper credits for its low ratios),
    /// else the shortest diagonal in the cone, else the closest point seen there. The default,
    /// and the only rule outside tests.
    BothEnds,
}

impl Rule {
    /// Whether the closest point seen in the cone is looked for even when a diagonal is there.
    fn closest_first(self) -> bool {
        #[cfg(test)]
        if self == Rule::Closest {
            return true;
        }
        false
    }
}

/// How [`anavmg_with`] runs: at most `rounds` rounds of portals off the triangulation's
/// diagonals (0: diagonals only), the selection `rule`, and with or without the removal of
/// portals that became unnecessary (seed 002, Table 1, first column: without). Bakes set only
/// `removal` (from the config); other `rounds` and `rule`s are for tests and measurements.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub rounds: usize,
    pub rule: Rule,
    pub removal: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            rounds: ROUNDS,
            rule: Rule::BothEnds,
            removal: true,
        }
    }
}

/// [`anavmg`] with explicit [`Settings`].
pub(crate) fn anavmg_with(
    verts: Vec<Point>,
    tris: Vec<[u32; 3]>,
    is_wall: &dyn Fn(Point, Point) -> bool,
    tau: f64,
    settings: &Settings,
) -> (RegionPolygons, bool) {
    let outline = Outline::new(verts, tris, is_wall);
    match partition(&outline, tau, settings) {
        Some(p) => (p, false),
        None => (
            hertel_mehlhorn(outline.verts.clone(), outline.tris.clone()),
            true,
        ),
    }
}

fn partition(outline: &Outline, tau: f64, settings: &Settings) -> Option<RegionPolygons> {
    let mut plan = Plan::default();
    let mut mesh = outline.mesh();
    let mut round = 0;
    let (corners, mut chosen) = loop {
        let corners = corners_of(&mesh)?;
        let (chosen, fresh) = choose(&mesh, &corners, tau, round < settings.rounds, settings.rule)?;
        if fresh.portals.is_empty() {
            break (corners, chosen);
        }
        plan.added.extend(fresh.added);
        plan.portals.extend(fresh.portals);
        mesh = outline.build(&plan).ok()?;
        round += 1;
    };
    // Remove portals that became unnecessary, longest first.
    let corner_of = corner_index(&mesh, &corners);
    let mut order: Vec<(u32, u32)> = chosen.set.iter().copied().collect();
    order.sort_unstable_by_key(|&(a, b)| (-length2(mesh.dir(a, b)), a, b));
    for (a, b) in order.into_iter().filter(|_| settings.removal) {
        chosen.remove((a, b));
        let still_fine =
            [(a, b), (b, a)]
                .iter()
                .all(|&(u, w)| match corner_at(&mesh, &corner_of, u, w) {
                    Some(c) => wide(&mesh, &corners.get(c), &chosen, tau).is_none(),
                    None => true,
                });
        if !still_fine {
            chosen.insert((a, b));
        }
    }
    // A point on a wall whose portals all went: triangulate again without it.
    let first_added = outline.verts.len() as u32;
    if (first_added..mesh.verts.len() as u32).any(|v| chosen.ends[v as usize] == 0) {
        let at = |v: u32| mesh.verts[v as usize];
        let mut order: Vec<(u32, u32)> = chosen.set.iter().copied().collect();
        order.sort_unstable_by_key(|&(a, b)| (at(a), at(b)));
        let plan = Plan {
            added: (first_added..mesh.verts.len() as u32)
                .filter(|&v| chosen.ends[v as usize] > 0)
                .map(|v| (at(v), mesh.added_on[(v - first_added) as usize]))
                .collect(),
            portals: order.iter().map(|&(a, b)| (at(a), at(b))).collect(),
        };
        mesh = outline.build(&plan).ok()?;
        chosen = Chosen::fixed(&mesh);
    }
    let mut out = cells(&mesh, &chosen, tau)?;
    out.on_walls = mesh
        .added_on
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let (a, b) = outline.edges[w];
            (
                first_added + i as u32,
                outline.verts[a as usize],
                outline.verts[b as usize],
            )
        })
        .collect();
    Some(out)
}

/// The corner each diagonal leaves from: per slot of the mesh's edges (corner vertex -> other
/// end), the index in `corners`, or [`NONE`].
fn corner_index(mesh: &Mesh, corners: &Corners) -> Vec<u32> {
    let mut corner_of = vec![NONE; mesh.edges.len()];
    for (c, corner) in corners.iter().enumerate() {
        for &w in &corner.rays[1..corner.rays.len() - 1] {
            if let Some(s) = mesh.edges.slot(corner.v, w) {
                corner_of[s] = c as u32;
            }
        }
    }
    corner_of
}

/// The corner the diagonal `u -> w` leaves from (see [`corner_index`]).
fn corner_at(mesh: &Mesh, corner_of: &[u32], u: u32, w: u32) -> Option<usize> {
    let c = corner_of[mesh.edges.slot(u, w)?];
    (c != NONE).then_some(c as usize)
}

/// The sub-angle of a corner, between consecutive kept rays (its boundary edges and the
/// portals in `chosen`), that is still wider than pi + tau: indices into its rays.
fn wide(mesh: &Mesh, corner: &Corner, chosen: &Chosen, tau: f64) -> Option<(usize, usize)> {
    wide_with(mesh, corner, chosen, None, tau)
}

/// [`wide`] as if the portal `extra` were chosen too.
fn wide_with(
    mesh: &Mesh,
    corner: &Corner,
    chosen: &Chosen,
    extra: Option<(u32, u32)>,
    tau: f64,
) -> Option<(usize, usize)> {
    let dir = |b: u32| mesh.dir(corner.v, b);
    let last = corner.rays.len() - 1;
    // Consecutive kept rays, the first and the last always kept.
    let mut from = 0;
    for i in 1..=last {
        let w = corner.rays[i];
        if i == last || chosen.contains(corner.v, w) || extra == Some(edge_key(corner.v, w)) {
            if !within(dir(corner.rays[from]), dir(corner.rays[i]), tau) {
                return Some((from, i));
            }
            from = i;
        }
    }
    None
}

/// Portals to new points (or to vertices the triangulation does not join to their notch)
/// accepted in this round, with the triangles each one crosses.
#[derive(Default)]
struct Round {
    portals: Vec<(Point, Point)>,
    added: Vec<(Point, usize)>,
    by_tri: HashMap<u32, Vec<usize>>,
}

impl Round {
    fn clashes(&self, p: Point, q: Point, path: &[u32]) -> bool {
        path.iter().any(|t| {
            self.by_tri.get(t).is_some_and(|ids| {
                ids.iter().any(|&i| {
                    let (r, s) = self.portals[i];
                    meet_beyond_shared_end(p, q, r, s)
                })
            })
        })
    }

    fn accept(&mut self, p: Point, q: Point, wall: Option<usize>, path: Vec<u32>) {
        for t in path {
            self.by_tri.entry(t).or_default().push(self.portals.len());
        }
        self.portals.push((p, q));
        if let Some(w) = wall {
            self.added.push((q, w));
        }
    }
}

/// One round of portal choices over `mesh`: the diagonals chosen (with the fixed portals),
/// and the portals to points off the triangulation's diagonals accepted (`fresh`, when
/// allowed). When `fresh` is not empty the diagonals are only provisional.
fn choose(
    mesh: &Mesh,
    corners: &Corners,
    tau: f64,
    fresh_allowed: bool,
    rule: Rule,
) -> Option<(Chosen, Round)> {
    let dir = |a: u32, b: u32| mesh.dir(a, b);
    let corner_of = corner_index(mesh, corners);
    let mut chosen = Chosen::fixed(mesh);
    let mut fresh = Round::default();
    'corners: for corner in corners.iter() {
        while let Some((i, j)) = wide(mesh, &corner, &chosen, tau) {
            let (v, rays) = (corner.v, corner.rays);
            let (a, b) = (dir(v, rays[i]), dir(v, rays[j]));
            // Inside the area of interest: both new angles within pi + tau.
            let in_cone = |m: &usize| {
                let r = dir(v, rays[*m]);
                within(a, r, tau) && within(r, b, tau)
            };
            let shortest = |ms: &mut dyn Iterator<Item = usize>| {
                ms.min_by_key(|&m| {
                    let r = dir(v, rays[m]);
                    (length2(r), rays[m])
                })
            };
            let best = shortest(&mut (i + 1..j).filter(in_cone));
            if rule == Rule::BothEnds {
                // A diagonal to a notch whose own wide angle it splits too.
                let mut both = (i + 1..j).filter(in_cone).filter(|&m| {
                    let Some(c) = corner_at(mesh, &corner_of, rays[m], v) else {
                        return false;
                    };
                    let other = corners.get(c);
                    if wide(mesh, &other, &chosen, tau).is_none() {
                        return false;
                    }
                    wide_with(mesh, &other, &chosen, Some(edge_key(v, rays[m])), tau).is_none()
                });
                if let Some(m) = shortest(&mut both) {
                    chosen.insert(edge_key(v, rays[m]));
                    continue;
                }
            }
            // The closest point the notch sees in its cone (for the paper's rule, even when a
            // diagonal is there).
            if fresh_allowed && (rule.closest_first() || best.is_none()) {
                let cone = Cone::new(a, b, tau);
                if let Some((q, wall, path)) = reach(mesh, v, &rays[i..=j], &cone) {
                    let p = mesh.verts[v as usize];
                    let joined = rays[i + 1..j]
                        .iter()
                        .find(|&&w| mesh.verts[w as usize] == q);
                    if let (true, Some(&w)) = (path.is_empty(), joined) {
                        chosen.insert(edge_key(v, w));
                        continue;
                    }
                    if !path.is_empty() {
                        if !fresh.clashes(p, q, &path) {
                            fresh.accept(p, q, wall, path);
                        }
                        // Either way this corner waits for the next round.
                        continue 'corners;
                    }
                }
            }
            if let Some(m) = best {
                chosen.insert(edge_key(v, rays[m]));
                continue;
            }
            // The cone lies inside one triangle's angle, between rays l and f.
            let l = (i..j).filter(|&m| within(a, dir(v, rays[m]), tau)).max()?;
            let f = (i + 1..=j)
                .filter(|&m| within(dir(v, rays[m]), b, tau))
                .min()?;
            let new_l = chosen.insert(edge_key(v, rays[l]));
            if !(chosen.insert(edge_key(v, rays[f])) || new_l) {
                return None;
            }
        }
    }
    Some((chosen, fresh))
}

/// The corners of the mesh (see [`Corner`]); None if the triangles do not close around a
/// boundary vertex.
fn corners_of(mesh: &Mesh) -> Option<Corners> {
    let boundary = mesh.edges.boundary();
    let mut corners = Corners {
        list: Vec::with_capacity(boundary.len()),
        rays: Vec::with_capacity(mesh.edges.len() + boundary.len()),
    };
    let rays = &mut corners.rays;
    for &(v, n) in &boundary {
        let lo = rays.len();
        rays.push(n);
        // Turn counter-clockwise around v through the triangles until the boundary edge
        // p -> v: the triangle t holding v -> (the last ray) has the edge x -> v; x is the
        // next ray.
        let mut t = mesh.tri_of(v, n)?;
        loop {
            let tri = mesh.tris[t as usize];
            let k = tri.iter().position(|&w| w == v)?;
            let x = tri[(k + 2) % 3];
            rays.push(x);
            match mesh.tri_of(v, x) {
                Some(u) => t = u,
                None => break,
            }
            if rays.len() - lo > mesh.tris.len() + 2 {
                return None;
            }
        }
        corners.list.push((v, lo as u32, rays.len() as u32));
    }
    Some(corners)
}

/// Cells: triangles joined across every diagonal that is not a portal, each traced as one
/// counter-clockwise cycle; None if one does not come out simple (or convex when tau is 0).
fn cells(mesh: &Mesh, chosen: &Chosen, tau: f64) -> Option<RegionPolygons> {
    let tris = &mesh.tris;
    let dir = |a: u32, b: u32| mesh.dir(a, b);
    let mut parent: Vec<u32> = (0..tris.len() as u32).collect();
    for (a, b, t) in mesh.edges.iter() {
        if a < b && !chosen.contains(a, b) {
            if let Some(u) = mesh.tri_of(b, a) {
                let (ra, rb) = (find(&mut parent, t), find(&mut parent, u));
                if ra != rb {
                    parent[ra.max(rb) as usize] = ra.min(rb);
                }
            }
        }
    }
    let mut out = RegionPolygons {
        verts: mesh.verts.clone(),
        ..Default::default()
    };
    // Cells in the order of their first triangle; each triangle's root.
    let mut index = vec![NONE; tris.len()];
    let mut groups: Vec<Vec<u32>> = Vec::new();
    let mut root_of = Vec::with_capacity(tris.len());
    for t in 0..tris.len() as u32 {
        let root = find(&mut parent, t);
        if index[root as usize] == NONE {
            index[root as usize] = groups.len() as u32;
            groups.push(Vec::new());
        }
        groups[index[root as usize] as usize].push(t);
        root_of.push(root);
    }
    // The border's next vertex after each vertex of the cell being traced ([`NONE`] outside it).
    let mut next = vec![NONE; mesh.verts.len()];
    let mut starts: Vec<u32> = Vec::new();
    for group in &groups {
        let root = root_of[group[0] as usize];
        // The cell's border: its triangles' edges whose twin is not in the cell.
        let mut edges = 0;
        for &t in group {
            let tri = tris[t as usize];
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let inside = mesh
                    .tri_of(b, a)
                    .is_some_and(|u| root_of[u as usize] == root);
                if !inside {
                    edges += 1;
                    if next[a as usize] != NONE {
                        return None;
                    }
                    next[a as usize] = b;
                    starts.push(a);
                }
            }
        }
        let start = *starts.iter().min()?;
        let mut cycle = vec![start];
        let mut cur = next[start as usize];
        while cur != start {
            cycle.push(cur);
            if cycle.len() > edges {
                return None;
            }
            cur = next[cur as usize];
            if cur == NONE {
                return None;
            }
        }
        for a in starts.drain(..) {
            next[a as usize] = NONE;
        }
        let n = cycle.len();
        let convex = (0..n).all(|k| {
            let (p, v, q) = (cycle[k], cycle[(k + 1) % n], cycle[(k + 2) % n]);
            within(dir(p, v), dir(v, q), 0.0) || tau > 0.0
        });
        if n != edges || !convex {
            return None;
        }
        out.polys.push(cycle);
        out.tris
            .push(group.iter().map(|&t| tris[t as usize]).collect());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::convex_cover;
    use crate::triangulate;

    fn no_walls(_: Point, _: Point) -> bool {
        false
    }

    #[test]
    fn anavmg_splits_each_notch_once() {
        // An L: one notch, two cells.
        let l = vec![(0, 0), (6, 0), (6, 2), (2, 2), (2, 6), (0, 6)];
        let (verts, tris) = triangulate(&[l]).unwrap();
        let (p, fell_back) = anavmg(verts, tris, &no_walls, 0.0);
        assert!(!fell_back);
        assert_eq!(p.polys.len(), 2);
        convex_cover(&p, 2 * 20);
        // A square ring: four notches (the hole's corners), four cells.
        let outer = vec![(0, 0), (10, 0), (10, 10), (0, 10)];
        let hole = vec![(4, 4), (4, 6), (6, 6), (6, 4)];
        let (verts, tris) = triangulate(&[outer, hole]).unwrap();
        let (p, fell_back) = anavmg(verts.clone(), tris.clone(), &no_walls, 0.0);
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
        let (strict, _) = anavmg(verts.clone(), tris.clone(), &no_walls, 0.0);
        let (relaxed, fell_back) = anavmg(verts, tris, &no_walls, 10f64.to_radians());
        assert!(!fell_back);
        assert!(strict.polys.len() >= 2);
        assert_eq!(relaxed.polys.len(), 1);
    }
}
