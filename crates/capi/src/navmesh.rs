//! Navmesh handles and the query objects over them.

use std::ffi::{c_char, CString};
use std::path::PathBuf;
use std::ptr;
use std::sync::Arc;

use tessera_query::{Costs, Filter, Planner, QueryFile, Rng, ScenePoint};

use crate::error::{arg, fill, guard, out, point, Error, TesseraStatus, TESSERA_BUFFER_TOO_SMALL};

/// "No polygon": the polygon of a point that was not found.
pub const TESSERA_NO_POLYGON: u32 = u32::MAX;

/// An open navmesh file: memory-mapped, validated, immutable. Shared by any number of threads.
pub struct TesseraNavMesh {
    file: Arc<QueryFile>,
    path: PathBuf,
}

/// Queries over a navmesh, for one thread at a time (make one per thread).
pub struct TesseraQuery {
    file: Arc<QueryFile>,
    /// The random points' generator, seeded when the query object is made.
    rng: Rng,
    /// Off-mesh links' costs and links to avoid, by name, set on the query object as Detour's
    /// filter is (`tessera_query_set_cost`, `tessera_query_avoid`), and as resolved.
    filter: Filter,
    costs: Costs,
    /// The names of the links the last path found takes (`tessera_query_link_name`).
    link_names: Vec<CString>,
}

/// A point of the mesh, or none.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TesseraPoint {
    /// Whether there is such a point; when false, `polygon` is `TESSERA_NO_POLYGON` and
    /// `point` is zero.
    pub found: bool,
    /// The polygon it lies on.
    pub polygon: u32,
    /// Scene coordinates.
    pub point: [f64; 3],
}

impl From<Option<ScenePoint>> for TesseraPoint {
    fn from(p: Option<ScenePoint>) -> TesseraPoint {
        match p {
            Some(p) => TesseraPoint {
                found: true,
                polygon: p.polygon,
                point: p.point,
            },
            None => TesseraPoint {
                found: false,
                polygon: TESSERA_NO_POLYGON,
                point: [0.0; 3],
            },
        }
    }
}

/// What `tessera_query_find_path` found; the counts are whole even when a buffer was short.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TesseraPath {
    /// Whether both ends snapped onto the mesh and a path joins them (`tessera path`'s
    /// `found`).
    pub found: bool,
    /// The sum of the 3D lengths of the path's segments (0 when not found).
    pub length: f64,
    /// Polygons in the corridor, start polygon first. When no path joins the ends: the
    /// corridor towards the polygon reached nearest the end; 0 when an end is off the mesh.
    pub corridor_count: usize,
    /// Waypoints of the straight path (three doubles each), start first and end last.
    pub waypoint_count: usize,
    /// Link steps: indices `i` such that waypoint `i` to `i + 1` crosses a link (a stair
    /// link, or an off-mesh link from take-off to landing).
    pub link_count: usize,
}

/// What `tessera_query_raycast` found.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TesseraRaycast {
    /// Whether the start lies on the mesh (snapped as a path's ends are); when false nothing
    /// was walked and the rest is zero.
    pub started: bool,
    /// Whether a wall (an edge with no polygon across) stopped the walk before the end.
    pub hit: bool,
    /// The fraction of the plan segment from the (snapped) start to the end walked: 1 when
    /// the end was reached.
    pub t: f64,
    /// Where the walk stopped, on the mesh's surface, scene coordinates.
    pub point: [f64; 3],
    /// The wall's normal in plan, pointing out of the mesh, scene axes (zero when no wall).
    pub normal: [f64; 3],
    /// Polygons walked over, start polygon first.
    pub polygon_count: usize,
}

/// Opens the navmesh file at `path` (memory-mapped, checked: header, checksum, structure,
/// indices) and sets `*mesh` to it, or to NULL on failure (`TESSERA_BAD_INPUT` for a missing
/// or invalid file, `TESSERA_IO` for one that cannot be read). Close it with
/// `tessera_navmesh_close`.
#[no_mangle]
pub unsafe extern "C" fn tessera_navmesh_open(
    path: *const c_char,
    mesh: *mut *mut TesseraNavMesh,
) -> TesseraStatus {
    unsafe {
        handle(mesh, "mesh", || {
            let path = crate::error::path(path, "path")?;
            let file = tessera_cli::navmesh::open(&path)?;
            Ok(TesseraNavMesh {
                file: Arc::new(QueryFile::new(file)),
                path,
            })
        })
    }
}

/// Closes a navmesh (NULL: nothing). Query objects made over it stay usable.
#[no_mangle]
pub unsafe extern "C" fn tessera_navmesh_close(mesh: *mut TesseraNavMesh) {
    if !mesh.is_null() {
        // SAFETY: made by `Box::into_raw` in `tessera_navmesh_open`, closed once.
        drop(unsafe { Box::from_raw(mesh) });
    }
}

/// Writes what `tessera info --json` prints for the navmesh (one JSON object, NUL-terminated)
/// into `buffer` of `capacity` bytes, and its length without the NUL into `*length`. A
/// buffer shorter than the length plus one gets `TESSERA_BUFFER_TOO_SMALL` (and as much as
/// fits, NUL-terminated); NULL with capacity 0 asks for the length alone.
#[no_mangle]
pub unsafe extern "C" fn tessera_navmesh_info_json(
    mesh: *const TesseraNavMesh,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> TesseraStatus {
    guard(|| {
        let mesh = unsafe { arg(mesh, "mesh") }?;
        let length = unsafe { out(length, "length") }?;
        let json = tessera_cli::info::describe(&mesh.path, mesh.file.file(), mesh.file.query())
            .to_string();
        *length = json.len();
        let mut bytes = json.into_bytes();
        bytes.push(0);
        let whole = unsafe { fill(buffer.cast::<u8>(), capacity, &bytes, "buffer") }?;
        if !whole {
            if capacity > 0 {
                // SAFETY: `fill` wrote `capacity` bytes there: the last one becomes the NUL.
                unsafe { *buffer.add(capacity - 1) = 0 };
            }
            return Err(too_small(&[("buffer", bytes.len(), capacity)]));
        }
        Ok(())
    })
}

/// Makes a query object over `mesh` for one thread, its random points drawn from `seed`, and
/// sets `*query` to it (NULL on failure). Free it with `tessera_query_free`.
#[no_mangle]
pub unsafe extern "C" fn tessera_query_new(
    mesh: *const TesseraNavMesh,
    seed: u64,
    query: *mut *mut TesseraQuery,
) -> TesseraStatus {
    unsafe {
        handle(query, "query", || {
            let mesh = arg(mesh, "mesh")?;
            Ok(TesseraQuery {
                file: Arc::clone(&mesh.file),
                rng: Rng::new(seed),
                filter: Filter::default(),
                costs: Costs::default(),
                link_names: Vec::new(),
            })
        })
    }
}

/// Sets `*slot` (an output named `what`) to a new handle made by `make`, or to NULL when
/// `make` fails.
///
/// # Safety
/// As [`out`]; `make` may read the caller's other arguments.
unsafe fn handle<T>(
    slot: *mut *mut T,
    what: &str,
    make: impl FnOnce() -> Result<T, Error>,
) -> TesseraStatus {
    guard(|| {
        let slot = unsafe { out(slot, what) }?;
        *slot = ptr::null_mut();
        *slot = Box::into_raw(Box::new(make()?));
        Ok(())
    })
}

/// Frees a query object (NULL: nothing).
#[no_mangle]
pub unsafe extern "C" fn tessera_query_free(query: *mut TesseraQuery) {
    if !query.is_null() {
        // SAFETY: made by `Box::into_raw` in `tessera_query_new`, freed once.
        drop(unsafe { Box::from_raw(query) });
    }
}

/// The point of the mesh nearest to `point` (three doubles) within the box `point ± extent`
/// (three doubles, scene axes; NULL: the agent's reach, as a path's ends snap).
#[no_mangle]
pub unsafe extern "C" fn tessera_query_nearest(
    query: *mut TesseraQuery,
    point: *const f64,
    extent: *const f64,
    result: *mut TesseraPoint,
) -> TesseraStatus {
    guard(|| {
        let query = unsafe { arg(query, "query") }?;
        let p = unsafe { crate::error::point(point, "point") }?;
        let extent = if extent.is_null() {
            None
        } else {
            Some(unsafe { crate::error::point(extent, "extent") }?)
        };
        let found = query.file.query().nearest_scene(p, extent);
        *unsafe { out(result, "result") }? = found.into();
        Ok(())
    })
}

/// The mesh's surface at the plan position of `point`: of the polygons over or under it, the
/// one whose surface is nearest `point`'s height, within the agent's height. The result's
/// point is `point` moved onto that surface (its up coordinate is the height).
#[no_mangle]
pub unsafe extern "C" fn tessera_query_height(
    query: *mut TesseraQuery,
    point: *const f64,
    result: *mut TesseraPoint,
) -> TesseraStatus {
    guard(|| {
        let query = unsafe { arg(query, "query") }?;
        let p = unsafe { crate::error::point(point, "point") }?;
        *unsafe { out(result, "result") }? = query.file.query().surface_scene(p).into();
        Ok(())
    })
}

/// A random point of the mesh, uniform over its area, from the query object's generator: the
/// same points in the same order for a seed as `tessera path --random-pairs --seed` draws.
/// Not found only on a mesh with no area.
#[no_mangle]
pub unsafe extern "C" fn tessera_query_random_point(
    query: *mut TesseraQuery,
    result: *mut TesseraPoint,
) -> TesseraStatus {
    guard(|| {
        let result = unsafe { out(result, "result") }?;
        // SAFETY: (the caller's contract) a query object is used by one thread at a time, so
        // this is the only reference to it while the call lasts.
        let query = unsafe { out(query, "query") }?;
        *result = query.file.query().random_scene(&mut query.rng).into();
        Ok(())
    })
}

/// The path between scene points `from` and `to`, as `tessera path --json` answers it: its
/// corridor (polygon ids) into `corridor`, its waypoints (three doubles each) into
/// `waypoints`, its link steps into `links`, each of the given capacity in items (NULL with
/// capacity 0: not wanted), and the whole counts, `found` and the length into `*result`.
/// `TESSERA_BUFFER_TOO_SMALL` when a buffer given could not hold its part.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tessera_query_find_path(
    query: *mut TesseraQuery,
    from: *const f64,
    to: *const f64,
    corridor: *mut u32,
    corridor_capacity: usize,
    waypoints: *mut f64,
    waypoint_capacity: usize,
    links: *mut u32,
    link_capacity: usize,
    result: *mut TesseraPath,
) -> TesseraStatus {
    guard(|| {
        // SAFETY: (the caller's contract) one thread at a time uses a query object.
        let query = unsafe { out(query, "query") }?;
        let (a, b) = unsafe { (point(from, "from")?, point(to, "to")?) };
        let result = unsafe { out(result, "result") }?;
        *result = TesseraPath::default();
        query.link_names.clear();
        let route = query
            .file
            .query()
            .route_costed(a, b, Planner::Hierarchical, &query.costs);
        let answer = &route.answer;
        query.link_names = answer
            .link_names
            .iter()
            .map(|n| CString::new(n.replace('\0', "\u{fffd}")).unwrap_or_default())
            .collect();
        let flat: Vec<f64> = answer.waypoints.iter().flatten().copied().collect();
        let steps: Vec<u32> = answer.links.iter().map(|&i| i as u32).collect();
        *result = TesseraPath {
            found: answer.found,
            length: answer.length,
            corridor_count: route.corridor.len(),
            waypoint_count: answer.waypoints.len(),
            link_count: steps.len(),
        };
        let doubles = waypoint_capacity.saturating_mul(3);
        let short = unsafe {
            [
                ("corridor", route.corridor.len(), corridor_capacity).fits(fill(
                    corridor,
                    corridor_capacity,
                    &route.corridor,
                    "corridor",
                )?),
                ("waypoints", answer.waypoints.len(), waypoint_capacity).fits(fill(
                    waypoints,
                    doubles,
                    &flat,
                    "waypoints",
                )?),
                ("links", steps.len(), link_capacity).fits(fill(
                    links,
                    link_capacity,
                    &steps,
                    "links",
                )?),
            ]
        };
        check_room(&short)
    })
}

/// The name of link step `k` of the last path `tessera_query_find_path` found with this query
/// object (`"stair"` for a step the bake found, else the off-mesh link's name), as `tessera
/// path --json` lists them in `link_names`; NULL when `k` is not below its `link_count` (or
/// `query` is NULL). The string lives until the next call on this query object.
#[no_mangle]
pub unsafe extern "C" fn tessera_query_link_name(
    query: *const TesseraQuery,
    k: usize,
) -> *const c_char {
    // SAFETY: (the caller's contract) NULL or a live query object.
    let Ok(query) = (unsafe { arg(query, "query") }) else {
        return ptr::null();
    };
    query
        .link_names
        .get(k)
        .map_or(ptr::null(), |name| name.as_ptr())
}

/// Makes the area named `name` cost `cost` (a factor on the length walked through it, > 0),
/// or the off-mesh links named `name` cost `cost` (metres added to their length, >= 0),
/// instead of the baked cost in this query object's paths, as `tessera path --cost` does.
/// `TESSERA_INVALID_ARGUMENT` when the navmesh has no area or link of that name (the message
/// lists the names it has) or the cost is out of range; the filter is then unchanged.
#[no_mangle]
pub unsafe extern "C" fn tessera_query_set_cost(
    query: *mut TesseraQuery,
    name: *const c_char,
    cost: f64,
) -> TesseraStatus {
    unsafe { change_filter(query, name, |f, name| f.cost(name, cost as f32)) }
}

/// Makes this query object's paths never enter the area, or take the off-mesh links, named
/// `name`, as `tessera path --avoid` does. `TESSERA_INVALID_ARGUMENT` when the navmesh has no
/// area or link of that name.
#[no_mangle]
pub unsafe extern "C" fn tessera_query_avoid(
    query: *mut TesseraQuery,
    name: *const c_char,
) -> TesseraStatus {
    unsafe { change_filter(query, name, |f, name| f.avoid(name)) }
}

/// Gives this query object the baked costs back (no area or link costed or avoided).
#[no_mangle]
pub unsafe extern "C" fn tessera_query_clear_filter(query: *mut TesseraQuery) -> TesseraStatus {
    guard(|| {
        // SAFETY: (the caller's contract) one thread at a time uses a query object.
        let query = unsafe { out(query, "query") }?;
        query.filter = Filter::default();
        query.costs = Costs::default();
        Ok(())
    })
}

/// Applies `change` to the query object's filter with the link name at `name`, keeping the
/// change only when the navmesh resolves it.
///
/// # Safety
/// As the exported functions: a query object of this library, a NUL-terminated string.
unsafe fn change_filter(
    query: *mut TesseraQuery,
    name: *const c_char,
    change: impl FnOnce(Filter, &str) -> Filter,
) -> TesseraStatus {
    guard(|| {
        let name = unsafe { crate::error::text(name, "name") }?
            .ok_or_else(|| Error::invalid("`name` is NULL".to_string()))?;
        // SAFETY: (the caller's contract) one thread at a time uses a query object.
        let query = unsafe { out(query, "query") }?;
        let filter = change(query.filter.clone(), &name);
        let costs = query
            .file
            .query()
            .costs(&filter)
            .map_err(|e| Error::invalid(e.to_string()))?;
        query.filter = filter;
        query.costs = costs;
        Ok(())
    })
}

/// Walks the plan segment from `from` (snapped onto the mesh) towards `to` over the mesh until
/// it reaches `to` or a wall (Detour's raycast): where it stopped, the wall's normal, and the
/// polygons walked over into `polygons` (capacity in items; NULL with 0: not wanted).
#[no_mangle]
pub unsafe extern "C" fn tessera_query_raycast(
    query: *mut TesseraQuery,
    from: *const f64,
    to: *const f64,
    polygons: *mut u32,
    polygon_capacity: usize,
    result: *mut TesseraRaycast,
) -> TesseraStatus {
    guard(|| {
        let query = unsafe { arg(query, "query") }?;
        let (a, b) = unsafe { (point(from, "from")?, point(to, "to")?) };
        let result = unsafe { out(result, "result") }?;
        *result = TesseraRaycast::default();
        let Some(ray) = query.file.query().raycast_scene(a, b) else {
            return Ok(());
        };
        *result = TesseraRaycast {
            started: true,
            hit: ray.hit,
            t: ray.t,
            point: ray.point,
            normal: ray.normal.unwrap_or([0.0; 3]),
            polygon_count: ray.polygons.len(),
        };
        let fits = unsafe { fill(polygons, polygon_capacity, &ray.polygons, "polygons") }?;
        check_room(&[("polygons", ray.polygons.len(), polygon_capacity).fits(fits)])
    })
}

/// A buffer's name, the items it needed and its capacity.
type Room = (&'static str, usize, usize);

trait Fits {
    /// `Some(self)` when the buffer was short.
    fn fits(self, whole: bool) -> Option<Room>;
}

impl Fits for Room {
    fn fits(self, whole: bool) -> Option<Room> {
        (!whole).then_some(self)
    }
}

/// `TESSERA_BUFFER_TOO_SMALL`, naming each short buffer, when any was.
fn check_room(rooms: &[Option<Room>]) -> Result<(), Error> {
    let short: Vec<Room> = rooms.iter().flatten().copied().collect();
    if short.is_empty() {
        Ok(())
    } else {
        Err(too_small(&short))
    }
}

fn too_small(short: &[Room]) -> Error {
    let parts: Vec<String> = short
        .iter()
        .map(|(what, needed, capacity)| {
            format!("`{what}` needs {needed}, its capacity is {capacity}")
        })
        .collect();
    Error::new(
        TESSERA_BUFFER_TOO_SMALL,
        format!("buffer too small: {}", parts.join("; ")),
    )
}
