//! Queries in the scene's own coordinates and up axis, as programs embedding tessera ask them
//! (the C API, the Python package), and a navmesh file owned together with its [`Query`].
//!
//! Every point given and answered here is a scene point; ends snap onto the mesh as
//! [`Query::path`]'s do, within [`Query::snap_extent`] unless a box is given.

use tessera_navmesh::{NavMeshError, NavMeshFile};

use crate::geom::{finite3, V3};
use crate::{PathAnswer, Query, Rng};

/// A point of the mesh in scene coordinates, and the polygon it lies on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScenePoint {
    pub polygon: u32,
    pub point: [f64; 3],
}

/// A path between two scene points with the corridor it was pulled along.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Route {
    /// What `tessera path --json` answers for the same two points.
    pub answer: PathAnswer,
    /// The polygons crossed, start polygon first. When no path joins the ends, the corridor
    /// towards the polygon reached that comes closest to the end (just the start polygon
    /// when the end lies in another connected component); empty when an end is off the mesh.
    pub corridor: Vec<u32>,
}

/// A straight walk over the mesh between two scene points ([`Query::raycast_scene`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SceneRaycast {
    /// Whether a wall (an edge with no polygon across) stopped the walk before the end.
    pub hit: bool,
    /// The fraction of the plan segment, from the start (snapped onto the mesh) to the end,
    /// walked: 1 when the end was reached.
    pub t: f64,
    /// Where the walk stopped, on the mesh's surface: the end, or the wall's crossing.
    pub point: [f64; 3],
    /// The wall's normal in plan, pointing out of the mesh, in scene axes; `None` when the
    /// end was reached.
    pub normal: Option<[f64; 3]>,
    /// The polygons walked over, in order, the start polygon first.
    pub polygons: Vec<u32>,
}

impl Query<'_> {
    /// A scene box half-size (scene axes) as an internal one.
    fn internal_extent(&self, extent: Option<[f64; 3]>) -> [f32; 3] {
        match extent {
            Some(e) => self.frame.up_axis().to_z_up(e).map(|c| c.abs() as f32),
            None => self.snap_extent(),
        }
    }

    fn scene_point(&self, (polygon, p): (u32, V3)) -> ScenePoint {
        ScenePoint {
            polygon,
            point: self.to_scene(p),
        }
    }

    /// The point of the mesh nearest to scene point `p` ([`Query::nearest`]) within the box
    /// `p ± extent` (scene axes; `None`: [`Query::snap_extent`]).
    pub fn nearest_scene(&self, p: [f64; 3], extent: Option<[f64; 3]>) -> Option<ScenePoint> {
        let found = self.nearest(self.frame.to_internal(p), self.internal_extent(extent))?;
        Some(self.scene_point(found))
    }

    /// The surface of the mesh at the plan position of scene point `p`: of the polygons over
    /// or under it, the one whose surface there is nearest `p`'s height, within the agent's
    /// height. `None` when no polygon holds that plan position within that reach.
    pub fn surface_scene(&self, p: [f64; 3]) -> Option<ScenePoint> {
        let q = self.frame.to_internal(p);
        if !finite3(q) {
            return None;
        }
        let reach = self.snap_extent()[2];
        let mut candidates: Vec<u32> = if self.mesh.grid.width.to_native() == 0 {
            (0..self.poly_count()).collect()
        } else {
            let e = self.eps;
            let (x0, y0, x1, y1) = self
                .mesh
                .grid_cells([q[0] - e, q[1] - e], [q[0] + e, q[1] + e]);
            (y0..=y1)
                .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
                .flat_map(|(x, y)| self.mesh.grid_items(x, y))
                .collect()
        };
        candidates.sort_unstable();
        candidates.dedup();
        let mut best: Option<(f32, u32, f32)> = None;
        for poly in candidates {
            let Some(z) = self.height(poly, q) else {
                continue;
            };
            let d = (z - q[2]).abs();
            if d <= reach && best.is_none_or(|(bd, _, _)| d < bd) {
                best = Some((d, poly, z));
            }
        }
        best.map(|(_, poly, z)| self.scene_point((poly, [q[0], q[1], z])))
    }

    /// A random point of the mesh, uniform over its area ([`Query::random_point`]), in scene
    /// coordinates: the same points, in the same order for a seed, as
    /// `tessera path --random-pairs` draws.
    pub fn random_scene(&self, rng: &mut Rng) -> Option<ScenePoint> {
        let found = self.random_point(rng)?;
        Some(self.scene_point(found))
    }

    /// Walks the plan segment from scene point `from` (snapped onto the mesh) towards `to` over
    /// the mesh ([`Query::raycast`]) until it reaches `to` or a wall; `None` when `from` is off
    /// the mesh.
    pub fn raycast_scene(&self, from: [f64; 3], to: [f64; 3]) -> Option<SceneRaycast> {
        let end = self.frame.to_internal(to);
        if !finite3(end) {
            return None;
        }
        let (poly, start) = self.nearest(self.frame.to_internal(from), self.snap_extent())?;
        let ray = self.raycast(poly, start, end);
        let last = *ray.polys.last()?;
        let t = ray.t.clamp(0.0, 1.0) as f64;
        let along = |k: usize| (start[k] as f64 + t * (end[k] as f64 - start[k] as f64)) as f32;
        let stop = [along(0), along(1), 0.0];
        let stop = [stop[0], stop[1], self.surface(last, stop)];
        let up = self.frame.up_axis();
        Some(SceneRaycast {
            hit: ray.hit_edge_normal.is_some(),
            t,
            point: self.to_scene(stop),
            normal: ray
                .hit_edge_normal
                .map(|[x, y]| up.from_z_up([x as f64, y as f64, 0.0]).map(|c| c + 0.0)),
            polygons: ray.polys,
        })
    }
}

self_cell::self_cell!(
    struct Opened {
        owner: NavMeshFile,
        #[covariant]
        dependent: Query,
    }
);

/// A navmesh file opened with its [`Query`], owned together: a value that can be kept, moved
/// and shared between threads (the handle of the C API and of the Python package).
pub struct QueryFile(Opened);

impl QueryFile {
    /// Maps and validates the file ([`NavMeshFile::open`]) and prepares its queries.
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<QueryFile, NavMeshError> {
        Ok(QueryFile::new(NavMeshFile::open(path)?))
    }

    /// Prepares the queries of an opened file.
    pub fn new(file: NavMeshFile) -> QueryFile {
        QueryFile(Opened::new(file, |file| Query::new(file.mesh())))
    }

    /// The file.
    pub fn file(&self) -> &NavMeshFile {
        self.0.borrow_owner()
    }

    /// The queries over it.
    pub fn query(&self) -> &Query<'_> {
        self.0.borrow_dependent()
    }
}
