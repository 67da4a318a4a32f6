//! Path queries over a tessera navmesh ([`tessera_navmesh::ArchivedNavMesh`], read zero-copy).
//!
//! A [`Query`] borrows a validated mesh and answers:
//!
//! * [`Query::nearest`]: the polygon closest to a point, within a search box (spatial grid);
//! * [`Query::height`]: the surface height of a plan point on a polygon (detail triangles);
//! * [`Query::find_path`]: A* over polygons, their portals and links, giving a [`Corridor`]:
//!   planned over the mesh's hierarchy of clusters first, then searched within the clusters
//!   planned (or flat, over every polygon: [`Query::find_path_with`], [`Planner`]);
//! * [`Query::straight_path`]: string pulling (the funnel algorithm) along a corridor;
//!   [`Query::straight_path_with_links`] also marks where it steps across a link, from the
//!   link's segment on one side ([`Query::portal`]) to its landing on the other
//!   ([`Query::landing`]), and [`Query::centre_line`] is the corridor's centre line;
//! * [`Query::raycast`]: walks a straight plan segment over the mesh until it leaves it;
//! * [`Query::random_point`]: area-weighted uniform points, from a seeded [`Rng`];
//! * [`Query::costs`]: a [`Filter`] (areas' and off-mesh links' costs by name, names to avoid) resolved
//!   for the searches that take one ([`Query::find_path_costed`], [`Query::path_costed`]);
//! * [`Query::path`]: all of the above in the scene's own coordinates, as a [`PathAnswer`];
//!   [`Query::route`] adds the corridor, and the `scene` module answers the other queries in
//!   scene coordinates too, for the C API and the Python package, which hold a navmesh file
//!   and its queries as one [`QueryFile`].
//!
//! **Conventions.** Points are in the mesh's internal frame (Z up, world units, rebased on the
//! frame's origin) except in [`Query::path`], which converts. Polygons are convex and
//! counter-clockwise seen from above. Neighbouring polygons of different regions may disagree
//! on a shared edge's height by up to the agent's climb, so every containment, crossing and
//! funnel test works in plan (x, y); heights always come from the polygons (their detail
//! triangles, or their own vertices on a portal).
//!
//! **Robustness.** The mesh has passed [`tessera_navmesh::validate`] (indices in range, numbers
//! finite) but its geometry is not trusted: no query panics or loops forever on a hostile
//! mesh, and non-finite query points give empty answers.
//!
//! This crate reads navmesh files only; it depends on no builder crate.

pub mod audit;
mod detail_grid;
pub mod diff;
mod filter;
mod geom;
mod hier;
mod path;
mod radix;
mod random;
mod raycast;
mod scene;
mod search;
mod weighted;

pub use filter::{Costs, Filter, FilterError};
pub use hier::Planner;
pub use path::{Corridor, PathAnswer, StraightPath};
pub use random::Rng;
pub use raycast::Raycast;
pub use scene::{QueryFile, Route, ScenePoint, SceneRaycast};

use geom::{closest_on_segment, dist3, finite3, inside, lerp3, triangle_probe, V3};
use tessera_navmesh::{ArchivedNavMesh, Frame};

/// Queries over one navmesh. Cheap to build (one pass over the polygons for the area table);
/// holds no mutable state, so one `Query` can serve any number of threads.
pub struct Query<'a> {
    mesh: &'a ArchivedNavMesh,
    frame: Frame,
    /// `area_prefix[i]` = total area of polygons `0..=i` (negative areas count as zero).
    area_prefix: Vec<f64>,
    /// Each polygon's bounding box, its detail surface included: `[min xyz, max xyz]`.
    boxes: Vec<[f32; 6]>,
    /// The same boxes in the order of the mesh's grid items, so that [`Query::nearest`]
    /// reads a grid cell's candidates from one run of memory rather than one box at a time
    /// from all over `boxes` (on a 2 km city, a cache miss each).
    grid_boxes: Vec<[f32; 6]>,
    /// Plan distance under which two points are the same and a point on an edge is inside.
    eps: f32,
    /// Grids over the detail triangles of polygons with many, for [`Query::surface`].
    detail_grids: detail_grid::DetailGrids,
    /// Per entry of the mesh's polygon vertex table: whether that corner of that polygon is
    /// a corner of the mesh (in plan, the end of some edge with no polygon across), where a
    /// shortest path may bend (see [`Query::find_path`]).
    corner_slots: Vec<bool>,
    /// Per entry of the mesh's polygon vertex table: that corner's position, so that a
    /// polygon's corners are one run of memory (the search reads them at every expansion;
    /// through the vertex table they are a cache miss each on a large mesh).
    slot_points: Vec<V3>,
    /// The clusters round each vertex on a border between clusters of the hierarchy.
    borders: hier::Borders,
    /// Ends closer than this in plan are searched flat (see [`Query::find_path_with`]).
    flat_within: f64,
    /// The baked cost of each area ([`tessera_navmesh::Poly::area_id`]).
    area_costs: Vec<f32>,
}

impl<'a> Query<'a> {
    /// Prepares queries over `mesh`.
    pub fn new(mesh: &'a ArchivedNavMesh) -> Query<'a> {
        let frame = mesh.frame.native();
        let mut sum = 0.0f64;
        let area_prefix = mesh
            .polys
            .iter()
            .map(|p| {
                sum += (p.area.to_native() as f64).max(0.0);
                sum
            })
            .collect();
        // A thousandth of a cell, but never below what f32 resolves at the mesh's extent.
        let cs = frame.cell_size;
        let base = if cs.is_finite() && cs > 0.0 {
            (cs * 1e-3).clamp(1e-6, 1e-2)
        } else {
            1e-4
        };
        let reach = mesh
            .bounds_min
            .iter()
            .chain(mesh.bounds_max.iter())
            .map(|c| c.to_native().abs())
            .filter(|c| c.is_finite())
            .fold(0.0f32, f32::max);
        let eps = base.max(reach * 8.0 * f32::EPSILON);
        let boxes: Vec<[f32; 6]> = (0..mesh.polys.len() as u32)
            .map(|p| {
                let mut b = EMPTY_BOX;
                let corners = mesh
                    .poly_vert_ids(p)
                    .map(|v| mesh.vert(v))
                    .chain(mesh.poly_triangles(p).flatten());
                for v in corners {
                    for k in 0..3 {
                        b[k] = b[k].min(v[k]);
                        b[k + 3] = b[k + 3].max(v[k]);
                    }
                }
                b
            })
            .collect();
        // Corners by plan position first: polygons need not share their corners' entries.
        let mut corners = rustc_hash::FxHashSet::default();
        for p in 0..mesh.polys.len() as u32 {
            let ids: Vec<u32> = mesh.poly_vert_ids(p).collect();
            for (k, nb) in mesh.poly_neighbours(p).enumerate() {
                if nb == tessera_navmesh::NONE || nb as usize >= mesh.polys.len() {
                    for v in [ids[k], ids[(k + 1) % ids.len()]] {
                        corners.insert(plan_key(mesh.vert(v)));
                    }
                }
            }
        }
        let corner_slots: Vec<bool> = mesh
            .poly_verts
            .iter()
            .map(|v| {
                let v = v.to_native();
                (v as usize) < mesh.verts.len() && corners.contains(&plan_key(mesh.vert(v)))
            })
            .collect();
        let slot_points = mesh
            .poly_verts
            .iter()
            .map(|v| {
                let v = v.to_native();
                if (v as usize) < mesh.verts.len() {
                    mesh.vert(v)
                } else {
                    [f32::NAN; 3]
                }
            })
            .collect();
        let borders = hier::Borders::new(mesh, &corner_slots);
        let flat_within = hier::flat_within(mesh);
        let grid_boxes = mesh
            .grid
            .items
            .iter()
            .map(|p| *boxes.get(p.to_native() as usize).unwrap_or(&EMPTY_BOX))
            .collect();
        Query {
            mesh,
            frame,
            area_prefix,
            boxes,
            grid_boxes,
            eps,
            detail_grids: detail_grid::DetailGrids::new(mesh),
            corner_slots,
            slot_points,
            borders,
            flat_within,
            area_costs: mesh.areas.iter().map(|a| a.cost.to_native()).collect(),
        }
    }

    /// Whether each corner of polygon `p`, in order, is a corner of the mesh.
    pub(crate) fn corner_flags(&self, p: u32) -> &[bool] {
        let poly = &self.mesh.polys[p as usize];
        let first = poly.first.to_native() as usize;
        &self.corner_slots[first..first + poly.count.to_native() as usize]
    }

    /// The mesh queried.
    pub fn mesh(&self) -> &'a ArchivedNavMesh {
        self.mesh
    }

    /// The mesh's frame (origin, up axis, cell size, agent).
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The plan distance under which points count as equal and a point on a polygon's edge
    /// as inside it: a thousandth of a cell (at least f32's resolution at the mesh's extent).
    pub fn tolerance(&self) -> f32 {
        self.eps
    }

    /// An internal point in the scene's own coordinates and up axis. Each f32 coordinate is
    /// read as the shortest decimal that rounds to it (0.1 stays 0.1, not 0.10000000149), then
    /// the frame's origin is added and the up axis converted back.
    pub fn to_scene(&self, p: [f32; 3]) -> [f64; 3] {
        let o = self.frame.origin;
        // `+ 0.0` turns the -0.0 a Y-up conversion makes of a zero into 0.0.
        self.frame
            .up_axis()
            .from_z_up([0, 1, 2].map(|k| shortest_decimal(p[k]) + o[k]))
            .map(|c| c + 0.0)
    }

    /// Number of polygons.
    pub fn poly_count(&self) -> u32 {
        self.mesh.polys.len() as u32
    }

    /// The search box half-size [`Query::path`] snaps its ends with, in internal axes:
    /// `2 * agent_radius + cell_size` across (x and y) and `agent_height` up (z). A point
    /// given at an agent's feet, or anywhere up to its head, finds the floor under it.
    pub fn snap_extent(&self) -> [f32; 3] {
        let f = &self.frame;
        let across = 2.0 * f.agent_radius.max(0.0) + f.cell_size.max(0.0);
        [across, across, f.agent_height.max(0.0)]
    }

    /// Polygon `p`'s corners (internal frame), counter-clockwise, as stored beside the mesh.
    #[inline]
    pub(crate) fn poly_corners(&self, p: u32) -> &[V3] {
        let poly = &self.mesh.polys[p as usize];
        let first = poly.first.to_native() as usize;
        &self.slot_points[first..first + poly.count.to_native() as usize]
    }

    /// The plan bounding box of polygon `p`: (min, max).
    pub(crate) fn plan_box(&self, p: u32) -> ([f32; 2], [f32; 2]) {
        let b = &self.boxes[p as usize];
        ([b[0], b[1]], [b[3], b[4]])
    }

    /// The plan distance from `p` to polygon `poly`'s plan box: never more than the distance
    /// to the polygon.
    pub(crate) fn plan_box_distance(&self, poly: u32, p: V3) -> f64 {
        box_distance(self.plan_box(poly), p)
    }

    pub(crate) fn valid_poly(&self, p: u32) -> bool {
        (p as usize) < self.mesh.polys.len()
    }

    /// The surface height of polygon `poly` at the plan point of `p`, from the detail triangle
    /// nearest in plan (or the polygon's own fan when it has none). Never fails.
    pub(crate) fn surface(&self, poly: u32, p: V3) -> f32 {
        if let Some(z) = self
            .detail_grids
            .height(self.mesh, poly, p, self.eps as f64)
        {
            return z;
        }
        let mut best = (f64::INFINITY, f32::NAN);
        for t in self.mesh.poly_triangles(poly) {
            let probe = triangle_probe(&t, p);
            if probe.0 < best.0 {
                best = probe;
                if best.0 == 0.0 {
                    return best.1;
                }
            }
        }
        if best.0.is_finite() {
            return best.1;
        }
        let pts = self.poly_corners(poly);
        for k in 1..pts.len().saturating_sub(1) {
            let probe = triangle_probe(&[pts[0], pts[k], pts[k + 1]], p);
            if probe.0 < best.0 {
                best = probe;
            }
        }
        if best.0.is_finite() {
            best.1
        } else {
            pts.first().map_or(0.0, |v| v[2])
        }
    }

    /// Whether the plan point of `p` lies on polygon `poly` (its boundary included, within
    /// [`Query::tolerance`]). `p`'s height is ignored.
    pub fn contains(&self, poly: u32, p: [f32; 3]) -> bool {
        self.valid_poly(poly) && finite3(p) && inside(self.poly_corners(poly), p, self.eps as f64)
    }

    /// The height of the plan point `p` (its z is ignored) on polygon `poly`, from the
    /// polygon's detail triangles; `None` when `poly` does not exist or `p` is not over it.
    pub fn height(&self, poly: u32, p: [f32; 3]) -> Option<f32> {
        self.contains(poly, p).then(|| self.surface(poly, p))
    }

    /// The point of polygon `poly` closest to `p`: `p` itself (at the surface height) when it
    /// is over the polygon, else the nearest point of its boundary in plan, at the surface
    /// height there. `None` when `poly` does not exist or `p` is not finite.
    pub fn closest_point(&self, poly: u32, p: [f32; 3]) -> Option<[f32; 3]> {
        if !self.valid_poly(poly) || !finite3(p) {
            return None;
        }
        Some(self.closest_on(poly, self.poly_corners(poly), p))
    }

    /// [`Query::closest_point`] of a valid polygon whose vertices are `pts`.
    fn closest_on(&self, poly: u32, pts: &[V3], p: V3) -> V3 {
        let q = self.plan_closest(pts, p).1;
        [q[0], q[1], self.surface(poly, q)]
    }

    /// The point of the polygon with vertices `pts` nearest to `p` in plan (`p` itself when
    /// it is over the polygon, within the tolerance), with its squared plan distance; its
    /// height is not read (the third coordinate is `p`'s or a corner's).
    fn plan_closest(&self, pts: &[V3], p: V3) -> (f64, V3) {
        if inside(pts, p, self.eps as f64) {
            return (0.0, p);
        }
        let n = pts.len();
        let mut best = (f64::INFINITY, pts[0]);
        for i in 0..n {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            let (s, d2) = closest_on_segment(p, a, b);
            if d2 < best.0 {
                best = (d2, lerp3(a, b, s));
            }
        }
        best
    }

    /// The polygon nearest to `p` within the box `p ± extent`, and the point on it.
    ///
    /// Candidates come from the mesh's spatial grid; each one's closest point is
    /// [`Query::closest_point`], and only closest points inside the box count. The smallest 3D
    /// distance wins; equal distances go to the smaller polygon id, so the answer is
    /// deterministic. `None` when no polygon comes within the box.
    pub fn nearest(&self, p: [f32; 3], extent: [f32; 3]) -> Option<(u32, [f32; 3])> {
        if !finite3(p) || !finite3(extent) || self.mesh.polys.is_empty() {
            return None;
        }
        let ext = extent.map(f32::abs);
        let lo = [0, 1, 2].map(|k| p[k] - ext[k]);
        let hi = [0, 1, 2].map(|k| p[k] + ext[k]);
        NEAREST.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let (near, pending) = &mut *scratch;
            self.nearest_in(p, lo, hi, near, pending)
        })
    }

    /// [`Query::nearest`] in the search box `lo..hi` around `p`, over the given buffers.
    fn nearest_in(
        &self,
        p: V3,
        lo: V3,
        hi: V3,
        near: &mut Vec<(f64, u32)>,
        pending: &mut Vec<NearCandidate>,
    ) -> Option<(u32, [f32; 3])> {
        let g = &self.mesh.grid;
        let eps = self.eps;
        // Bounding boxes (the detail surface in them) against the search box first: cheap
        // and rejects most, floors above and below included. The distance from `p` to a box
        // bounds the distance to its polygon's closest point from below, so the rest are
        // tried nearest box first, until no box can beat the best point found.
        near.clear();
        let mut consider = |poly: u32, b: &[f32; 6]| {
            if (0..3).any(|k| b[k + 3] < lo[k] - eps || b[k] > hi[k] + eps) {
                return;
            }
            let gap = |k: usize| (b[k] - p[k]).max(p[k] - b[k + 3]).max(0.0) as f64;
            near.push((
                (gap(0) * gap(0) + gap(1) * gap(1) + gap(2) * gap(2)).sqrt(),
                poly,
            ));
        };
        if g.width.to_native() == 0 || g.height.to_native() == 0 {
            for (poly, b) in self.boxes.iter().enumerate() {
                consider(poly as u32, b);
            }
        } else {
            // Widened by the tolerance the boxes and points are tested with below: a polygon
            // just past the search box's edge may sit in the next grid cell.
            let (x0, y0, x1, y1) = self
                .mesh
                .grid_cells([lo[0] - eps, lo[1] - eps], [hi[0] + eps, hi[1] + eps]);
            let width = g.width.to_native() as usize;
            for y in y0 as usize..=y1 as usize {
                // The cells x0..=x1 of a row are one run of items.
                let (s, e) = (
                    g.start[y * width + x0 as usize].to_native() as usize,
                    g.start[y * width + x1 as usize + 1].to_native() as usize,
                );
                for (poly, b) in g.items[s..e].iter().zip(&self.grid_boxes[s..e]) {
                    consider(poly.to_native(), b);
                }
            }
        }
        // A polygon in several grid cells is listed once per cell: the same (bound, poly).
        near.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        near.dedup_by_key(|e| e.1);
        // Then each one's closest point in plan, which bounds its 3D distance from below as
        // its box does, and better on terrain, whose large polygons overlap in their boxes.
        // The heights (a walk of the detail triangles, the costly part there) are read
        // smallest bound first: a candidate's closest point in plan is taken when its box
        // comes next, and the pending candidate with the smallest bound is read once no box
        // still to come is nearer; none is read that cannot beat the best point found.
        let mut best: Option<(f64, u32, V3)> = None;
        pending.clear();
        // Margins for rounding (the closest point is computed in f32), and for the
        // tolerance: a point within it outside a polygon counts as inside, its closest point
        // itself, nearer than the polygon's box by up to the tolerance.
        let beaten = |bound: f64, best: Option<(f64, u32, V3)>| {
            best.is_some_and(|(bd, _, _)| bound - eps as f64 > bd + 1e-5 * (1.0 + bd))
        };
        let mut next = 0;
        loop {
            let more = next < near.len() && !beaten(near[next].0, best);
            let next_bound = if more { near[next].0 } else { f64::INFINITY };
            let smallest = (0..pending.len()).min_by(|&a, &b| {
                let (x, y) = (&pending[a], &pending[b]);
                x.bound.total_cmp(&y.bound).then(x.poly.cmp(&y.poly))
            });
            match smallest {
                Some(k) if pending[k].bound <= next_bound => {
                    let NearCandidate {
                        plan_d,
                        box_d: bound,
                        poly,
                        at: q,
                        ..
                    } = pending.swap_remove(k);
                    if beaten(bound, best)
                        || best.is_some_and(|(bd, _, _)| plan_d > bd + 2.0 * eps as f64)
                    {
                        continue;
                    }
                    let q = [q[0], q[1], self.surface(poly, q)];
                    if q[2] < lo[2] - eps || q[2] > hi[2] + eps {
                        continue;
                    }
                    let d = dist3(p, q);
                    if best.is_none_or(|(bd, bp, _)| d < bd || (d == bd && poly < bp)) {
                        best = Some((d, poly, q));
                    }
                }
                _ if more => {
                    let (bound, poly) = near[next];
                    next += 1;
                    let (d2, q) = self.plan_closest(self.poly_corners(poly), p);
                    if (0..2).all(|k| q[k] >= lo[k] - eps && q[k] <= hi[k] + eps) {
                        let plan_d = d2.sqrt();
                        pending.push(NearCandidate {
                            bound: plan_d.max(bound),
                            plan_d,
                            box_d: bound,
                            poly,
                            at: q,
                        });
                    }
                }
                _ => break,
            }
        }
        best.map(|(_, poly, q)| (poly, q))
    }
}

/// A candidate of [`Query::nearest`] whose closest point in plan is known.
struct NearCandidate {
    /// The larger of its two lower bounds, `plan_d` and `box_d`: candidates are read in its
    /// order.
    bound: f64,
    /// The plan distance to its closest point.
    plan_d: f64,
    /// The distance to its bounding box.
    box_d: f64,
    poly: u32,
    /// Its closest point in plan (the height not read yet).
    at: V3,
}

/// A box that holds nothing (every test against it fails): `[min xyz, max xyz]`.
const EMPTY_BOX: [f32; 6] = [
    f32::INFINITY,
    f32::INFINITY,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NEG_INFINITY,
    f32::NEG_INFINITY,
];

thread_local! {
    /// [`Query::nearest`]'s buffers, one set per thread: the boxes near enough with their
    /// distance bounds, the candidates with their closest points in plan, a polygon's points.
    #[allow(clippy::type_complexity)]
    static NEAREST: std::cell::RefCell<(Vec<(f64, u32)>, Vec<NearCandidate>)> =
        std::cell::RefCell::new(Default::default());
}

/// The plan distance from `p` to the box `(lo, hi)` (0 inside).
/// A point's plan position as a key: its exact x and y.
fn plan_key(p: V3) -> [u32; 2] {
    [p[0].to_bits(), p[1].to_bits()]
}

fn box_distance((lo, hi): ([f32; 2], [f32; 2]), p: V3) -> f64 {
    let gap = |k: usize| (lo[k] - p[k]).max(p[k] - hi[k]).max(0.0) as f64;
    gap(0).hypot(gap(1))
}

/// `v` as the f64 nearest the shortest decimal that reads back as `v` (f32's Display).
pub fn shortest_decimal(v: f32) -> f64 {
    if v.is_finite() {
        v.to_string().parse().unwrap_or(v as f64)
    } else {
        v as f64
    }
}
