//! A small safe layer over the Detour calls `queries` and `recast-full` need: a tile's navmesh
//! data made from a Recast polygon mesh and, when built, its detail mesh
//! (`dtCreateNavMeshData`), a tiled `dtNavMesh`, and a `dtNavMeshQuery` with a default filter
//! for the nearest polygon, A* and the straight path.
//!
//! Every pointer Detour hands out is owned by one Rust value that frees it in `Drop`
//! (`dtFree` for tile data not yet given to a navmesh, `dtFreeNavMesh`, `dtFreeNavMeshQuery`).
//! A query borrows its navmesh, so the mesh outlives it. Detour is Y-up, as Recast is.

use crate::recast::{PolyMesh, PolyMeshDetail, RecastError};
use recastnavigation_sys as sys;
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::ptr::NonNull;

/// The flag every polygon gets (RecastDemo's `SAMPLE_POLYFLAGS_WALK`); the default filter
/// includes every flag, and a polygon with no flag would be skipped.
const WALK_FLAG: u16 = 0x01;
/// The area id every polygon gets (RecastDemo's `SAMPLE_POLYAREA_GROUND`); the default filter
/// costs every area 1.
const GROUND_AREA: u8 = 0;
/// `DT_TILE_FREE_DATA`: the navmesh frees a tile's data with the tile.
const TILE_FREE_DATA: c_int = sys::dtTileFlags_DT_TILE_FREE_DATA as c_int;
/// Most nodes a query's node pool can hold (node indices are 16 bits, 0xffff meaning none).
pub const MAX_NODES: i32 = 0xffff;

/// Whether a `dtStatus` reports failure.
fn failed(status: sys::dtStatus) -> bool {
    status & sys::DT_FAILURE != 0
}

/// What `find_path` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathStatus {
    /// Polygons in the corridor written to the caller's buffer.
    pub len: usize,
    /// The corridor reaches the end polygon (no failure, not a partial result).
    pub complete: bool,
    /// The node pool ran out during the search (`DT_OUT_OF_NODES`).
    pub out_of_nodes: bool,
}

impl PathStatus {
    /// A search's status and the `count` references it wrote to `path`, towards `end_poly`.
    fn of(status: sys::dtStatus, count: c_int, path: &[u32], end_poly: u32) -> PathStatus {
        let len = (count.max(0) as usize).min(path.len());
        PathStatus {
            len,
            complete: !failed(status)
                && status & sys::DT_PARTIAL_RESULT == 0
                && len > 0
                && path[len - 1] == end_poly,
            out_of_nodes: status & sys::DT_OUT_OF_NODES != 0,
        }
    }
}

/// The agent a navmesh is built for, in world units.
#[derive(Clone, Copy, Debug)]
pub struct Agent {
    pub height: f32,
    pub radius: f32,
    pub climb: f32,
}

/// One tile's navmesh data, as `dtCreateNavMeshData` serialises it. Owned until a navmesh
/// takes it with [`NavMesh::add_tile`].
pub struct TileData {
    data: NonNull<u8>,
    len: c_int,
    /// Polygons in the tile.
    pub polys: usize,
}

// SAFETY: a plain heap buffer from dtAlloc, reachable only through this value.
unsafe impl Send for TileData {}

impl TileData {
    /// Size of the serialised tile [bytes].
    pub fn bytes(&self) -> usize {
        self.len.max(0) as usize
    }
}

impl Drop for TileData {
    fn drop(&mut self) {
        // SAFETY: allocated by dtCreateNavMeshData with dtAlloc; freed once (add_tile forgets
        // the value when the navmesh takes the buffer).
        unsafe { sys::dtFree(self.data.as_ptr().cast()) }
    }
}

/// The navmesh data of tile (`tx`, `tz`) from its Recast polygon mesh and, when given, its
/// detail mesh, with `dtNavMeshCreateParams` filled as RecastDemo's tile sample fills them
/// (`Sample_TileMesh::buildTileMesh`; no off-mesh connections). With no detail mesh Detour
/// triangulates each polygon as a fan of its own vertices for heights. Every polygon gets the
/// same flag and area, so the default filter walks all of them at cost 1 per metre. The
/// tile's bounds are the polygon mesh's (the tile's core: Recast removed the border). `None`
/// when the tile has no polygon.
pub fn tile_data(
    pmesh: &PolyMesh,
    dmesh: Option<&PolyMeshDetail>,
    tx: i32,
    tz: i32,
    agent: &Agent,
) -> Result<Option<TileData>, RecastError> {
    let m = pmesh.raw();
    let npolys = m.npolys.max(0) as usize;
    if npolys == 0 {
        return Ok(None);
    }
    // Detour's limits: 16-bit vertex indices and at most DT_VERTS_PER_POLYGON (6) per polygon.
    if m.nverts >= 0xffff || m.nvp > sys::DT_VERTS_PER_POLYGON as c_int || m.nvp < 3 {
        return Err(RecastError(
            "dtCreateNavMeshData (tile beyond Detour's limits)",
        ));
    }
    let flags = vec![WALK_FLAG; npolys];
    let areas = vec![GROUND_AREA; npolys];
    // SAFETY: dtNavMeshCreateParams is plain data (pointers, numbers, a bool); all zero is
    // "no off-mesh connections, no detail mesh", and every other field Detour reads is set
    // below.
    let mut params: sys::dtNavMeshCreateParams = unsafe { std::mem::zeroed() };
    params.verts = m.verts;
    params.vertCount = m.nverts;
    params.polys = m.polys;
    params.polyFlags = flags.as_ptr();
    params.polyAreas = areas.as_ptr();
    params.polyCount = m.npolys;
    params.nvp = m.nvp;
    if let Some(d) = dmesh {
        let d = d.raw();
        params.detailMeshes = d.meshes;
        params.detailVerts = d.verts;
        params.detailVertsCount = d.nverts;
        params.detailTris = d.tris;
        params.detailTriCount = d.ntris;
    }
    params.tileX = tx;
    params.tileY = tz;
    params.tileLayer = 0;
    params.bmin = m.bmin;
    params.bmax = m.bmax;
    params.walkableHeight = agent.height;
    params.walkableRadius = agent.radius;
    params.walkableClimb = agent.climb;
    params.cs = m.cs;
    params.ch = m.ch;
    params.buildBvTree = true;
    let mut data: *mut u8 = std::ptr::null_mut();
    let mut len: c_int = 0;
    // SAFETY: the arrays behind params (the polygon and detail meshes', `flags`, `areas`) hold
    // what the counts say and live through the call; Detour writes only the two out-pointers.
    let ok = unsafe { sys::dtCreateNavMeshData(&mut params, &mut data, &mut len) };
    match NonNull::new(data) {
        Some(data) if ok && len > 0 => Ok(Some(TileData {
            data,
            len,
            polys: npolys,
        })),
        Some(data) => {
            // SAFETY: a buffer Detour allocated before failing; not kept.
            unsafe { sys::dtFree(data.as_ptr().cast()) };
            Err(RecastError("dtCreateNavMeshData"))
        }
        None => Err(RecastError("dtCreateNavMeshData")),
    }
}

/// A tiled navmesh (`dtNavMesh`).
pub struct NavMesh(NonNull<sys::dtNavMesh>);

impl NavMesh {
    /// `dtAllocNavMesh` + `dtNavMesh::init` for a grid of square tiles `tile_m` world units a
    /// side from `origin`, for `tiles` tiles of up to `polys_per_tile` polygons. Polygon
    /// references are 32 bits, split as RecastDemo splits them: `ceil(log2(tiles))` bits for
    /// the tile (at most 14), 22 less that for the polygon, 10 for Detour's salt.
    pub fn new(
        origin: [f32; 3],
        tile_m: f32,
        tiles: usize,
        polys_per_tile: usize,
    ) -> Result<NavMesh, RecastError> {
        let tile_bits = tiles.max(1).next_power_of_two().trailing_zeros().min(14);
        let poly_bits = 22 - tile_bits;
        if tiles > 1 << tile_bits || polys_per_tile > 1 << poly_bits {
            return Err(RecastError(
                "dtNavMesh::init (too many tiles or polygons per tile for 32-bit references)",
            ));
        }
        // SAFETY: allocation; the constructor zeroes the object, so freeing it is fine even if
        // init fails below.
        let raw = unsafe { sys::dtAllocNavMesh() };
        let nav = NavMesh(NonNull::new(raw).ok_or(RecastError("dtAllocNavMesh"))?);
        let params = sys::dtNavMeshParams {
            orig: origin,
            tileWidth: tile_m,
            tileHeight: tile_m,
            maxTiles: 1 << tile_bits,
            maxPolys: 1 << poly_bits,
        };
        // SAFETY: a live navmesh; Detour copies the parameters.
        let status = unsafe { sys::dtNavMesh_init(nav.0.as_ptr(), &params) };
        if failed(status) {
            return Err(RecastError("dtNavMesh::init"));
        }
        Ok(nav)
    }

    /// `dtNavMesh::addTile`: the navmesh takes the data (and frees it with the tile) and links
    /// the tile to its neighbours already added.
    pub fn add_tile(&mut self, tile: TileData) -> Result<(), RecastError> {
        let mut tile_ref: sys::dtTileRef = 0;
        // SAFETY: a live navmesh and a buffer made by dtCreateNavMeshData of `len` bytes. With
        // DT_TILE_FREE_DATA the navmesh owns the buffer once the call succeeds.
        let status = unsafe {
            sys::dtNavMesh_addTile(
                self.0.as_ptr(),
                tile.data.as_ptr(),
                tile.len,
                TILE_FREE_DATA,
                0,
                &mut tile_ref,
            )
        };
        if failed(status) {
            // `tile` is dropped here and frees its buffer: the navmesh did not take it.
            return Err(RecastError("dtNavMesh::addTile"));
        }
        std::mem::forget(tile);
        Ok(())
    }
}

impl Drop for NavMesh {
    fn drop(&mut self) {
        // SAFETY: allocated by dtAllocNavMesh, freed once, with the tiles' data.
        unsafe { sys::dtFreeNavMesh(self.0.as_ptr()) }
    }
}

/// A query object (`dtNavMeshQuery`) over one navmesh, with Detour's default filter (every
/// flag included, every area at cost 1). Its node pool is reused from query to query, so the
/// methods take `&mut self`, and a value is never shared between threads.
pub struct NavQuery<'a> {
    query: NonNull<sys::dtNavMeshQuery>,
    filter: Box<sys::dtQueryFilter>,
    _nav: PhantomData<&'a NavMesh>,
}

impl<'a> NavQuery<'a> {
    /// `dtAllocNavMeshQuery` + `init` with a node pool of `max_nodes` (1 ..= [`MAX_NODES`]).
    pub fn new(nav: &'a NavMesh, max_nodes: i32) -> Result<NavQuery<'a>, RecastError> {
        assert!((1..=MAX_NODES).contains(&max_nodes));
        // SAFETY: allocation; freeing a query that was never initialised is fine.
        let raw = unsafe { sys::dtAllocNavMeshQuery() };
        let query = NonNull::new(raw).ok_or(RecastError("dtAllocNavMeshQuery"))?;
        // SAFETY: the constructor writes every field of the filter.
        let filter = Box::new(unsafe { sys::dtQueryFilter::new() });
        let q = NavQuery {
            query,
            filter,
            _nav: PhantomData,
        };
        // SAFETY: a live query and a live navmesh that outlives it ('a).
        let status =
            unsafe { sys::dtNavMeshQuery_init(q.query.as_ptr(), nav.0.as_ptr(), max_nodes) };
        if failed(status) {
            return Err(RecastError("dtNavMeshQuery::init"));
        }
        Ok(q)
    }

    /// `findNearestPoly`: the polygon nearest to `center` within `center ± half_extents`, and
    /// the closest point on it. `None` when no polygon is in the box.
    pub fn nearest(&mut self, center: [f32; 3], half_extents: [f32; 3]) -> Option<(u32, [f32; 3])> {
        let mut poly: sys::dtPolyRef = 0;
        let mut point = [0f32; 3];
        // SAFETY: three floats each in and out; a live query and filter.
        let status = unsafe {
            sys::dtNavMeshQuery_findNearestPoly(
                self.query.as_ptr(),
                center.as_ptr(),
                half_extents.as_ptr(),
                &*self.filter,
                &mut poly,
                point.as_mut_ptr(),
            )
        };
        (!failed(status) && poly != 0).then_some((poly, point))
    }

    /// `findPath` (A*) from `start` on polygon `start_poly` to `end` on `end_poly`; the
    /// corridor goes into `path`, whose whole length is the most it may hold. With
    /// `any_angle`, the same search through `initSlicedFindPath` with Detour's
    /// `DT_FINDPATH_ANY_ANGLE`, run to the end: a polygon is costed from its parent's parent
    /// where a raycast of at most 50 agent radii joins them, which straightens the corridors
    /// `findPath` costs from edge midpoints.
    pub fn find_path(
        &mut self,
        (start_poly, start): (u32, [f32; 3]),
        (end_poly, end): (u32, [f32; 3]),
        path: &mut [u32],
        any_angle: bool,
    ) -> PathStatus {
        let q = self.query.as_ptr();
        let mut count: c_int = 0;
        let max = path.len().min(c_int::MAX as usize) as c_int;
        let status = if any_angle {
            // SAFETY: a live query, filter and positions of three floats; the query keeps the
            // filter pointer until the search ends, within this call.
            let mut status = unsafe {
                sys::dtNavMeshQuery_initSlicedFindPath(
                    q,
                    start_poly,
                    end_poly,
                    start.as_ptr(),
                    end.as_ptr(),
                    &*self.filter,
                    sys::dtFindPathOptions_DT_FINDPATH_ANY_ANGLE as _,
                )
            };
            while status & sys::DT_IN_PROGRESS != 0 {
                // SAFETY: a sliced search in progress on this query; the count is optional.
                status = unsafe {
                    sys::dtNavMeshQuery_updateSlicedFindPath(q, c_int::MAX, std::ptr::null_mut())
                };
            }
            if failed(status) {
                status
            } else {
                // SAFETY: `path` holds `max` references. The result carries the search's
                // detail flags (partial result, out of nodes).
                unsafe {
                    sys::dtNavMeshQuery_finalizeSlicedFindPath(
                        q,
                        path.as_mut_ptr(),
                        &mut count,
                        max,
                    )
                }
            }
        } else {
            // SAFETY: `path` holds `max` references; positions are three floats.
            unsafe {
                sys::dtNavMeshQuery_findPath(
                    q,
                    start_poly,
                    end_poly,
                    start.as_ptr(),
                    end.as_ptr(),
                    &*self.filter,
                    path.as_mut_ptr(),
                    &mut count,
                    max,
                )
            }
        };
        PathStatus::of(status, count, path, end_poly)
    }

    /// `findStraightPath` (no options) along the corridor `path`: the corners go into
    /// `corners` (its length is the most it may hold); returns how many were written, or
    /// `None` on failure.
    pub fn straight_path(
        &mut self,
        start: [f32; 3],
        end: [f32; 3],
        path: &[u32],
        corners: &mut [[f32; 3]],
    ) -> Option<usize> {
        let mut count: c_int = 0;
        let max = corners.len().min(c_int::MAX as usize) as c_int;
        // SAFETY: `path` holds path.len() references, `corners` 3 * max floats (an array of
        // [f32; 3] is contiguous); flags and references are optional outputs.
        let status = unsafe {
            sys::dtNavMeshQuery_findStraightPath(
                self.query.as_ptr(),
                start.as_ptr(),
                end.as_ptr(),
                path.as_ptr(),
                path.len().min(c_int::MAX as usize) as c_int,
                corners.as_mut_ptr().cast(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut count,
                max,
                0,
            )
        };
        (!failed(status)).then_some((count.max(0) as usize).min(corners.len()))
    }
}

impl Drop for NavQuery<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by dtAllocNavMeshQuery, freed once.
        unsafe { sys::dtFreeNavMeshQuery(self.query.as_ptr()) }
    }
}
