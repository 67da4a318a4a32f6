//! Checks of a navmesh beyond what loading it validates (`tessera_navmesh::validate`: indices,
//! finite numbers, convex counter-clockwise polygons, components): what `tessera validate`
//! reports. Each check lists what fails it, so that a script can tell a broken mesh from a good
//! one and a person can find the place.
//!
//! * **Degenerate polygons**: no plan area (below the query tolerance squared).
//! * **One-way portals**: an edge naming a neighbour that has no edge back along the same
//!   segment (the same two corners, the other way round). A T-junction (a corner of one polygon
//!   inside an edge of the other) shows up here, or as an open edge.
//! * **Open edges**: two boundary edges (no neighbour) of different polygons that lie on one
//!   line in plan and overlap along it, at heights within the agent's climb where they overlap:
//!   the polygons touch where an agent could step across, but no portal joins them.
//! * **Paths** ([`audit_paths`]): seeded random pairs of points on the mesh, each searched both
//!   ways. A pair found one way only, a path not as long as its reverse (in plan, within a
//!   relative tolerance), or a path leaving the polygons of its corridor (points sampled along
//!   every segment but link crossings) fails. On a mesh with one-way off-mesh links (a jump
//!   down) a path need not have a reverse, and only the last test is made.

use rustc_hash::{FxHashMap, FxHashSet};
use tessera_navmesh::NONE;

use crate::geom::{cross2, inside, plan_dist2, plan_len, V3};
use crate::{Query, Rng};

/// What [`audit_mesh`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshAudit {
    /// Polygons with no plan area.
    pub degenerate: Vec<u32>,
    /// `(polygon, edge, neighbour)`: the neighbour has no edge back along the same segment.
    pub one_way_portals: Vec<(u32, u32, u32)>,
    /// `(polygon, edge, other polygon, its edge)`: boundary edges touching within the climb.
    pub open_edges: Vec<(u32, u32, u32, u32)>,
}

impl MeshAudit {
    /// Whether every check passed.
    pub fn ok(&self) -> bool {
        self.degenerate.is_empty() && self.one_way_portals.is_empty() && self.open_edges.is_empty()
    }
}

/// A boundary edge: its polygon, its index in the polygon, its ends.
#[derive(Clone, Copy)]
struct Edge {
    poly: u32,
    index: u32,
    a: V3,
    b: V3,
}

/// The mesh checks of the module documentation, on `q`'s mesh (internal coordinates).
pub fn audit_mesh(q: &Query) -> MeshAudit {
    let mesh = q.mesh();
    let eps = q.eps as f64;
    let climb = q.frame().agent_climb as f64;
    let mut out = MeshAudit::default();
    let mut boundary: Vec<Edge> = Vec::new();
    for p in 0..mesh.polys.len() as u32 {
        let pts = q.poly_corners(p);
        let n = pts.len();
        let twice_area: f64 = (1..n.saturating_sub(1))
            .map(|k| cross2(pts[0], pts[k], pts[k + 1]))
            .sum();
        if twice_area <= 2.0 * eps * eps {
            out.degenerate.push(p);
        }
        for (k, nb) in mesh.poly_neighbours(p).enumerate() {
            let (a, b) = (pts[k], pts[(k + 1) % n]);
            if nb == NONE {
                boundary.push(Edge {
                    poly: p,
                    index: k as u32,
                    a,
                    b,
                });
                continue;
            }
            let other = q.poly_corners(nb);
            let m = other.len();
            let back = mesh.poly_neighbours(nb).enumerate().any(|(j, to)| {
                to == p
                    && plan_dist2(other[j], b) <= eps * eps
                    && plan_dist2(other[(j + 1) % m], a) <= eps * eps
            });
            if !back {
                out.one_way_portals.push((p, k as u32, nb));
            }
        }
    }
    out.open_edges = touching_boundaries(&boundary, eps, climb);
    out
}

/// Pairs of boundary edges of different polygons on one plan line, overlapping along it by
/// more than `eps`, within `climb` of each other in height at the middle of the overlap; each
/// pair once, in order.
fn touching_boundaries(edges: &[Edge], eps: f64, climb: f64) -> Vec<(u32, u32, u32, u32)> {
    // A uniform grid over the edges' plan boxes, cells as long as a typical edge.
    let mut lengths: Vec<f64> = edges.iter().map(|e| plan_len(e.a, e.b)).collect();
    lengths.sort_unstable_by(f64::total_cmp);
    let cell = lengths
        .get(lengths.len() / 2)
        .copied()
        .unwrap_or(1.0)
        .max(eps * 16.0)
        .max(1e-6);
    let key = |x: f64, y: f64| ((x / cell).floor() as i64, (y / cell).floor() as i64);
    let mut grid: FxHashMap<(i64, i64), Vec<u32>> = FxHashMap::default();
    for (i, e) in edges.iter().enumerate() {
        let (lo, hi) = (
            key(
                (e.a[0].min(e.b[0]) as f64) - eps,
                (e.a[1].min(e.b[1]) as f64) - eps,
            ),
            key(
                (e.a[0].max(e.b[0]) as f64) + eps,
                (e.a[1].max(e.b[1]) as f64) + eps,
            ),
        );
        for x in lo.0..=hi.0 {
            for y in lo.1..=hi.1 {
                grid.entry((x, y)).or_default().push(i as u32);
            }
        }
    }
    let mut found: FxHashSet<(u32, u32)> = FxHashSet::default();
    for list in grid.values() {
        for (n, &i) in list.iter().enumerate() {
            for &j in &list[n + 1..] {
                let (e, f) = (&edges[i as usize], &edges[j as usize]);
                if e.poly != f.poly && touch(e, f, eps, climb) {
                    found.insert((i.min(j), i.max(j)));
                }
            }
        }
    }
    let mut pairs: Vec<(u32, u32, u32, u32)> = found
        .into_iter()
        .map(|(i, j)| {
            let (e, f) = (&edges[i as usize], &edges[j as usize]);
            (e.poly, e.index, f.poly, f.index)
        })
        .collect();
    pairs.sort_unstable();
    pairs
}

/// Whether boundary edges `e` and `f` lie on one plan line, overlap along it by more than
/// `eps`, and are within `climb` in height at the middle of the overlap.
fn touch(e: &Edge, f: &Edge, eps: f64, climb: f64) -> bool {
    let len = plan_len(e.a, e.b);
    if len <= eps {
        return false;
    }
    // Both ends of `f` within `eps` of `e`'s line.
    if cross2(e.a, e.b, f.a).abs() > eps * len || cross2(e.a, e.b, f.b).abs() > eps * len {
        return false;
    }
    // Positions along `e`, in units of its length.
    let along = |p: V3| {
        ((p[0] as f64 - e.a[0] as f64) * (e.b[0] as f64 - e.a[0] as f64)
            + (p[1] as f64 - e.a[1] as f64) * (e.b[1] as f64 - e.a[1] as f64))
            / (len * len)
    };
    let (fa, fb) = (along(f.a), along(f.b));
    let (lo, hi) = (fa.min(fb).max(0.0), fa.max(fb).min(1.0));
    if (hi - lo) * len <= eps {
        return false;
    }
    let mid = (lo + hi) / 2.0;
    let ze = e.a[2] as f64 + (e.b[2] as f64 - e.a[2] as f64) * mid;
    let zf = if (fb - fa).abs() > 0.0 {
        let s = (mid - fa) / (fb - fa);
        f.a[2] as f64 + (f.b[2] as f64 - f.a[2] as f64) * s
    } else {
        f.a[2] as f64
    };
    (ze - zf).abs() <= climb
}

/// What [`audit_paths`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathAudit {
    /// Pairs tried (none on a mesh without area).
    pub pairs: u64,
    /// Pairs found both ways.
    pub found: u64,
    /// Whether paths were checked against their reverse (not on a mesh with one-way links).
    pub reversible: bool,
    /// Pairs found one way only: `(pair, found forward)`.
    pub one_way: Vec<(u64, bool)>,
    /// Pairs whose paths differ in plan length more than the tolerance: `(pair, forward m,
    /// backward m)`.
    pub unequal: Vec<(u64, f64, f64)>,
    /// Pairs whose path leaves its corridor: `(pair, the first point off it)`, internal
    /// coordinates.
    pub off_corridor: Vec<(u64, [f32; 3])>,
}

impl PathAudit {
    /// Whether every pair passed.
    pub fn ok(&self) -> bool {
        self.one_way.is_empty() && self.unequal.is_empty() && self.off_corridor.is_empty()
    }
}

/// `pairs` seeded random pairs of points on the mesh (area-weighted), each searched both ways
/// by the flat search (the shortest path, which a plan over the hierarchy may miss by a
/// little, differently each way); forward and backward plan lengths may differ by `relative`
/// of the longer (and the query tolerance). The same seed gives the same pairs and the same
/// report.
pub fn audit_paths(q: &Query, pairs: u64, seed: u64, relative: f64) -> PathAudit {
    let reversible = q.mesh.off_mesh.iter().all(|l| l.bidirectional);
    let mut out = PathAudit {
        reversible,
        ..PathAudit::default()
    };
    let mut rng = Rng::new(seed);
    for pair in 0..pairs {
        let (Some((sp, s)), Some((ep, e))) = (q.random_point(&mut rng), q.random_point(&mut rng))
        else {
            break; // a mesh with no area has no points to draw
        };
        out.pairs += 1;
        let flat = crate::Planner::Flat;
        let (fw, bw) = (
            q.find_path_with(sp, s, ep, e, flat),
            q.find_path_with(ep, e, sp, s, flat),
        );
        if fw.found != bw.found && reversible {
            out.one_way.push((pair, fw.found));
            continue;
        }
        if !(fw.found && bw.found) {
            // Found one way only (one-way links): the way found still stays on its corridor.
            for (c, s, e) in [(&fw, s, e), (&bw, e, s)] {
                if c.found {
                    let path = q.straight_path_of(s, e, c);
                    if let Some(p) = off_corridor(q, &path, &c.polys) {
                        out.off_corridor.push((pair, p));
                    }
                }
            }
            continue;
        }
        out.found += 1;
        let (a, b) = (q.straight_path_of(s, e, &fw), q.straight_path_of(e, s, &bw));
        let plan = |pts: &[[f32; 3]]| pts.windows(2).map(|w| plan_len(w[0], w[1])).sum::<f64>();
        let (la, lb) = (plan(&a.points), plan(&b.points));
        if (la - lb).abs() > relative * la.max(lb) + q.eps as f64 {
            out.unequal.push((pair, la, lb));
        }
        if let Some(p) = off_corridor(q, &a, &fw.polys) {
            out.off_corridor.push((pair, p));
        }
    }
    out
}

/// The first point, sampled along the path's segments (link crossings skipped) at most a cell
/// apart, that lies in none of the corridor's polygons from the one the last point lay in on.
fn off_corridor(q: &Query, path: &crate::StraightPath, corridor: &[u32]) -> Option<[f32; 3]> {
    let step = (q.frame().cell_size as f64).max(1e-3);
    let eps = q.eps as f64 * 4.0;
    let mut at = 0usize;
    let holds = |p: V3, at: &mut usize| {
        for (k, &poly) in corridor.iter().enumerate().skip(*at) {
            if inside(q.poly_corners(poly), p, eps) {
                *at = k;
                return true;
            }
        }
        false
    };
    for (i, w) in path.points.windows(2).enumerate() {
        if path.links.contains(&i) {
            // Across a link: the landing lies in a later polygon of the corridor.
            at += 1;
            continue;
        }
        let n = (plan_len(w[0], w[1]) / step).ceil().max(1.0) as usize;
        for k in 0..=n {
            let p = crate::geom::lerp3(w[0], w[1], k as f64 / n as f64);
            if !holds(p, &mut at) {
                return Some(p);
            }
        }
    }
    None
}

/// What [`audit_heights`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeightAudit {
    /// Points drawn on the mesh.
    pub samples: u64,
    /// Each point's smallest height difference to a scene surface within reach, ascending
    /// (points with none left out).
    pub differences: Vec<f64>,
    /// `(point, the smallest height difference to a scene surface within reach, if any)`:
    /// the points with none within the tolerance (internal coordinates, metres).
    pub off_surface: Vec<([f32; 3], Option<f64>)>,
}

impl HeightAudit {
    /// Whether every point lay on the scene's surface.
    pub fn ok(&self) -> bool {
        self.off_surface.is_empty()
    }
}

/// `samples` seeded random points on the mesh (area-weighted), each checked against the scene's
/// triangles (internal coordinates; walls, flat in plan, left out): some triangle within
/// `reach` of it in plan must pass within `tolerance` of its height there. The mesh's surface
/// lies above the voxelized one by up to a voxel and the height detail's error, and its edges
/// beyond the walkable area by up to the simplification's: `reach` and `tolerance` allow for
/// both.
pub fn audit_heights(
    q: &Query,
    triangles: &[[V3; 3]],
    samples: u64,
    seed: u64,
    reach: f64,
    tolerance: f64,
) -> HeightAudit {
    let cell = (4.0 * reach).max(1.0);
    let key = |x: f64, y: f64| ((x / cell).floor() as i64, (y / cell).floor() as i64);
    let mut grid: FxHashMap<(i64, i64), Vec<u32>> = FxHashMap::default();
    for (i, t) in triangles.iter().enumerate() {
        if cross2(t[0], t[1], t[2]).abs() <= 1e-9 {
            continue;
        }
        let lo = key(
            t.iter().map(|v| v[0] as f64).fold(f64::INFINITY, f64::min),
            t.iter().map(|v| v[1] as f64).fold(f64::INFINITY, f64::min),
        );
        let hi = key(
            t.iter()
                .map(|v| v[0] as f64)
                .fold(f64::NEG_INFINITY, f64::max),
            t.iter()
                .map(|v| v[1] as f64)
                .fold(f64::NEG_INFINITY, f64::max),
        );
        for x in lo.0..=hi.0 {
            for y in lo.1..=hi.1 {
                grid.entry((x, y)).or_default().push(i as u32);
            }
        }
    }
    let mut out = HeightAudit::default();
    let mut rng = Rng::new(seed);
    for _ in 0..samples {
        let Some((_, p)) = q.random_point(&mut rng) else {
            break;
        };
        out.samples += 1;
        let (lo, hi) = (
            key(p[0] as f64 - reach, p[1] as f64 - reach),
            key(p[0] as f64 + reach, p[1] as f64 + reach),
        );
        let mut nearest: Option<f64> = None;
        for x in lo.0..=hi.0 {
            for y in lo.1..=hi.1 {
                for &i in grid.get(&(x, y)).map_or(&[][..], Vec::as_slice) {
                    let (d2, z) = crate::geom::triangle_probe(&triangles[i as usize], p);
                    if d2 <= reach * reach {
                        let dz = (z as f64 - p[2] as f64).abs();
                        nearest = Some(nearest.map_or(dz, |n| n.min(dz)));
                    }
                }
            }
        }
        if nearest.is_none_or(|dz| dz > tolerance) {
            out.off_surface.push((p, nearest));
        }
        out.differences.extend(nearest);
    }
    out.differences.sort_unstable_by(f64::total_cmp);
    out
}
