//! A small safe layer over the Recast calls the benchmark needs.
//!
//! Every raw pointer Recast hands out is owned by one Rust value that frees it in `Drop`
//! (`DeleteContext`, `rcFreeHeightField`, `rcFreeCompactHeightfield`, `rcFreeContourSet`,
//! `rcFreePolyMesh`, `rcFreePolyMeshDetail`).
//! The triangle data Recast reads is held in [`RecastMesh`], whose constructor checks that
//! every index is in range, so the calls below cannot read out of bounds whatever the caller
//! passes.
//!
//! Recast is Y-up: its grid columns are indexed by (x, z) and heights run along y.

use recastnavigation_sys as sys;
use std::fmt;
use std::os::raw::c_int;
use std::ptr::NonNull;

/// Area id of unwalkable spans (`RC_NULL_AREA`).
pub const NULL_AREA: u8 = 0;
/// Area id `rcMarkWalkableTriangles` gives floors (`RC_WALKABLE_AREA`).
#[cfg_attr(not(test), allow(dead_code))]
pub const WALKABLE_AREA: u8 = sys::RC_WALKABLE_AREA;
/// Region id bit of the regions painted over the border (`RC_BORDER_REG`).
pub const BORDER_REG: u16 = 0x8000;
/// `rcBuildContours` flag: split long wall edges (only acts when `maxEdgeLen > 0`).
pub const CONTOUR_TESS_WALL_EDGES: i32 =
    sys::rcBuildContoursFlags_RC_CONTOUR_TESS_WALL_EDGES as i32;
/// Largest span height Recast stores (`RC_SPAN_MAX_HEIGHT`, 13 bits).
pub const SPAN_MAX_HEIGHT: u32 = (1 << 13) - 1;

/// A Recast call that reported failure (allocation, mostly).
#[derive(Debug)]
pub struct RecastError(pub &'static str);

impl fmt::Display for RecastError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Recast: {} failed", self.0)
    }
}

impl std::error::Error for RecastError {}

/// A build context with logging and timers switched off (they would only add overhead).
pub struct Context(NonNull<sys::rcContext>);

impl Context {
    pub fn new() -> Context {
        // SAFETY: plain allocation of a C++ object; ownership passes to the returned value.
        let raw = unsafe { sys::CreateContext(false) };
        Context(NonNull::new(raw).expect("Recast: CreateContext returned null"))
    }

    fn ptr(&self) -> *mut sys::rcContext {
        self.0.as_ptr()
    }
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: created by CreateContext, freed once.
        unsafe { sys::DeleteContext(self.0.as_ptr()) }
    }
}

/// A triangle soup in Recast's frame: vertices `[x, y, z]` (Y up), index triples.
pub struct RecastMesh {
    verts: Vec<f32>,
    tris: Vec<c_int>,
}

impl RecastMesh {
    /// Builds the mesh; panics if an index does not name a vertex.
    pub fn new(verts: Vec<f32>, tris: Vec<c_int>) -> RecastMesh {
        assert_eq!(verts.len() % 3, 0);
        assert_eq!(tris.len() % 3, 0);
        let count = (verts.len() / 3) as c_int;
        assert!(
            tris.iter().all(|&i| (0..count).contains(&i)),
            "triangle index out of range"
        );
        assert!(tris.len() / 3 <= c_int::MAX as usize);
        RecastMesh { verts, tris }
    }

    pub fn vertex_count(&self) -> usize {
        self.verts.len() / 3
    }

    pub fn triangle_count(&self) -> usize {
        self.tris.len() / 3
    }
}

/// `rcMarkWalkableTriangles`: sets `areas[i]` to [`WALKABLE_AREA`] for every triangle whose
/// normal is within `slope_degrees` of +Y (counter-clockwise seen from above); leaves the rest.
pub fn mark_walkable_triangles(
    ctx: &Context,
    slope_degrees: f32,
    mesh: &RecastMesh,
    areas: &mut [u8],
) {
    assert_eq!(areas.len(), mesh.triangle_count());
    // SAFETY: sizes checked above and in RecastMesh::new; Recast writes only areas[..n].
    unsafe {
        sys::rcMarkWalkableTriangles(
            ctx.ptr(),
            slope_degrees,
            mesh.verts.as_ptr(),
            mesh.vertex_count() as c_int,
            mesh.tris.as_ptr(),
            mesh.triangle_count() as c_int,
            areas.as_mut_ptr(),
        )
    }
}

/// A solid heightfield (`rcHeightfield`): per column, a linked list of spans.
pub struct Heightfield(NonNull<sys::rcHeightfield>);

impl Heightfield {
    /// `rcAllocHeightfield` + `rcCreateHeightfield`: `width` x `depth` columns over the box
    /// `bmin`..`bmax` (Recast frame).
    pub fn new(
        ctx: &Context,
        width: i32,
        depth: i32,
        bmin: [f32; 3],
        bmax: [f32; 3],
        cell_size: f32,
        cell_height: f32,
    ) -> Result<Heightfield, RecastError> {
        assert!(width > 0 && depth > 0 && cell_size > 0.0 && cell_height > 0.0);
        // SAFETY: allocation; the constructor nulls every pointer, so dropping it is fine even if
        // rcCreateHeightfield fails below.
        let raw = unsafe { sys::rcAllocHeightfield() };
        let hf = Heightfield(NonNull::new(raw).ok_or(RecastError("rcAllocHeightfield"))?);
        // SAFETY: hf is a live heightfield; the bounds arrays hold 3 floats each.
        let ok = unsafe {
            sys::rcCreateHeightfield(
                ctx.ptr(),
                hf.0.as_ptr(),
                width,
                depth,
                bmin.as_ptr(),
                bmax.as_ptr(),
                cell_size,
                cell_height,
            )
        };
        if ok {
            Ok(hf)
        } else {
            Err(RecastError("rcCreateHeightfield"))
        }
    }

    fn raw(&self) -> &sys::rcHeightfield {
        // SAFETY: owned, live, and only mutated through &mut self.
        unsafe { self.0.as_ref() }
    }

    /// `rcRasterizeTriangles` (indexed): spans merge when their tops are within
    /// `merge_threshold` voxels.
    pub fn rasterize(
        &mut self,
        ctx: &Context,
        mesh: &RecastMesh,
        areas: &[u8],
        merge_threshold: i32,
    ) -> Result<(), RecastError> {
        assert_eq!(areas.len(), mesh.triangle_count());
        // SAFETY: index ranges checked by RecastMesh::new, lengths above.
        let ok = unsafe {
            sys::rcRasterizeTriangles(
                ctx.ptr(),
                mesh.verts.as_ptr(),
                mesh.vertex_count() as c_int,
                mesh.tris.as_ptr(),
                areas.as_ptr(),
                mesh.triangle_count() as c_int,
                self.0.as_ptr(),
                merge_threshold,
            )
        };
        if ok {
            Ok(())
        } else {
            Err(RecastError("rcRasterizeTriangles"))
        }
    }

    /// `rcFilterLowHangingWalkableObstacles`.
    pub fn filter_low_hanging_obstacles(&mut self, ctx: &Context, climb: i32) {
        // SAFETY: a live heightfield.
        unsafe { sys::rcFilterLowHangingWalkableObstacles(ctx.ptr(), climb, self.0.as_ptr()) }
    }

    /// `rcFilterLedgeSpans`.
    pub fn filter_ledges(&mut self, ctx: &Context, height: i32, climb: i32) {
        // SAFETY: a live heightfield.
        unsafe { sys::rcFilterLedgeSpans(ctx.ptr(), height, climb, self.0.as_ptr()) }
    }

    /// `rcFilterWalkableLowHeightSpans`.
    pub fn filter_low_clearance(&mut self, ctx: &Context, height: i32) {
        // SAFETY: a live heightfield.
        unsafe { sys::rcFilterWalkableLowHeightSpans(ctx.ptr(), height, self.0.as_ptr()) }
    }

    /// (spans, walkable spans) over columns `x0 .. x0 + w`, `z0 .. z0 + d`.
    pub fn counts(&self, x0: i32, z0: i32, w: i32, d: i32) -> (u64, u64) {
        let hf = self.raw();
        assert!(x0 >= 0 && z0 >= 0 && x0 + w <= hf.width && z0 + d <= hf.height);
        let (mut spans, mut walkable) = (0, 0);
        for z in z0..z0 + d {
            for x in x0..x0 + w {
                // SAFETY: the column array holds width * height heads; the lists are Recast's
                // own, null-terminated, and not modified while `self` is borrowed.
                let mut s = unsafe { *hf.spans.add((x + z * hf.width) as usize) };
                while let Some(span) = unsafe { s.as_ref() } {
                    spans += 1;
                    if span.area() as u8 != NULL_AREA {
                        walkable += 1;
                    }
                    s = span.next;
                }
            }
        }
        (spans, walkable)
    }
}

impl Drop for Heightfield {
    fn drop(&mut self) {
        // SAFETY: allocated by rcAllocHeightfield, freed once.
        unsafe { sys::rcFreeHeightField(self.0.as_ptr()) }
    }
}

/// The open-space field (`rcCompactHeightfield`) built from a filtered heightfield: one span per
/// walkable floor, with its neighbour links.
pub struct CompactHeightfield(NonNull<sys::rcCompactHeightfield>);

impl CompactHeightfield {
    /// `rcAllocCompactHeightfield` + `rcBuildCompactHeightfield`.
    pub fn build(
        ctx: &Context,
        height: i32,
        climb: i32,
        hf: &Heightfield,
    ) -> Result<CompactHeightfield, RecastError> {
        // SAFETY: allocation; the constructor nulls every pointer, so dropping it is fine.
        let raw = unsafe { sys::rcAllocCompactHeightfield() };
        let chf =
            CompactHeightfield(NonNull::new(raw).ok_or(RecastError("rcAllocCompactHeightfield"))?);
        // SAFETY: both fields are live; Recast only reads `hf`.
        let ok = unsafe {
            sys::rcBuildCompactHeightfield(ctx.ptr(), height, climb, hf.0.as_ptr(), chf.0.as_ptr())
        };
        if ok {
            Ok(chf)
        } else {
            Err(RecastError("rcBuildCompactHeightfield"))
        }
    }

    /// `rcErodeWalkableArea` (radius in cells, 1 ..= 127: Recast keeps distances in a byte).
    pub fn erode(&mut self, ctx: &Context, radius: i32) -> Result<(), RecastError> {
        assert!((1..=127).contains(&radius));
        // SAFETY: a live compact heightfield.
        let ok = unsafe { sys::rcErodeWalkableArea(ctx.ptr(), radius, self.0.as_ptr()) };
        if ok {
            Ok(())
        } else {
            Err(RecastError("rcErodeWalkableArea"))
        }
    }

    /// Walkable spans (area not null) over columns `x0 .. x0 + w`, `z0 .. z0 + d`.
    pub fn walkable(&self, x0: i32, z0: i32, w: i32, d: i32) -> u64 {
        // SAFETY: owned and live.
        let chf = unsafe { self.0.as_ref() };
        assert!(x0 >= 0 && z0 >= 0 && x0 + w <= chf.width && z0 + d <= chf.height);
        let mut walkable = 0;
        for z in z0..z0 + d {
            for x in x0..x0 + w {
                // SAFETY: width * height cells; each cell's index + count stays within the
                // spanCount entries of `areas` (Recast's invariant).
                let cell = unsafe { &*chf.cells.add((x + z * chf.width) as usize) };
                let (first, count) = (cell.index() as usize, cell.count() as usize);
                assert!(first + count <= chf.spanCount as usize);
                for i in first..first + count {
                    if unsafe { *chf.areas.add(i) } != NULL_AREA {
                        walkable += 1;
                    }
                }
            }
        }
        walkable
    }
}

impl CompactHeightfield {
    /// `rcBuildDistanceField`: each span's distance to the nearest boundary, the watershed's
    /// input.
    pub fn build_distance_field(&mut self, ctx: &Context) -> Result<(), RecastError> {
        // SAFETY: a live compact heightfield; Recast frees any previous distance array.
        let ok = unsafe { sys::rcBuildDistanceField(ctx.ptr(), self.0.as_ptr()) };
        if ok {
            Ok(())
        } else {
            Err(RecastError("rcBuildDistanceField"))
        }
    }

    /// `rcBuildRegions` (watershed), after [`Self::build_distance_field`]. `border` cells on
    /// each side are painted as border regions (a tile's band); regions smaller than
    /// `min_area` cells that touch no other region are dropped, and regions smaller than
    /// `merge_area` are merged into a neighbour when possible.
    pub fn build_regions(
        &mut self,
        ctx: &Context,
        border: i32,
        min_area: i32,
        merge_area: i32,
    ) -> Result<(), RecastError> {
        assert!(border >= 0 && min_area >= 0 && merge_area >= 0);
        // SAFETY: a live compact heightfield. Recast asserts nothing about `dist` in release
        // builds, so insist on it here: without it the watershed would read a null array.
        assert!(
            !self.raw().dist.is_null(),
            "build_distance_field must run before build_regions"
        );
        let ok = unsafe {
            sys::rcBuildRegions(ctx.ptr(), self.0.as_ptr(), border, min_area, merge_area)
        };
        if ok {
            Ok(())
        } else {
            Err(RecastError("rcBuildRegions"))
        }
    }

    fn raw(&self) -> &sys::rcCompactHeightfield {
        // SAFETY: owned, live, and only mutated through &mut self.
        unsafe { self.0.as_ref() }
    }

    /// After [`Self::build_regions`], over columns `x0 .. x0 + w`, `z0 .. z0 + d`: the distinct
    /// regions (border regions and region 0 left out) and the spans that belong to one.
    pub fn region_counts(&self, x0: i32, z0: i32, w: i32, d: i32) -> (u64, u64) {
        let chf = self.raw();
        assert!(x0 >= 0 && z0 >= 0 && x0 + w <= chf.width && z0 + d <= chf.height);
        let mut seen = vec![false; 1 << 16];
        let (mut regions, mut spans) = (0, 0);
        for z in z0..z0 + d {
            for x in x0..x0 + w {
                // SAFETY: as in `walkable`; `spans` holds spanCount entries.
                let cell = unsafe { &*chf.cells.add((x + z * chf.width) as usize) };
                let (first, count) = (cell.index() as usize, cell.count() as usize);
                assert!(first + count <= chf.spanCount as usize);
                for i in first..first + count {
                    let reg = unsafe { (*chf.spans.add(i)).reg };
                    if reg == 0 || reg & BORDER_REG != 0 {
                        continue;
                    }
                    spans += 1;
                    if !seen[reg as usize] {
                        seen[reg as usize] = true;
                        regions += 1;
                    }
                }
            }
        }
        (regions, spans)
    }
}

impl Drop for CompactHeightfield {
    fn drop(&mut self) {
        // SAFETY: allocated by rcAllocCompactHeightfield, freed once.
        unsafe { sys::rcFreeCompactHeightfield(self.0.as_ptr()) }
    }
}

/// Region outlines (`rcContourSet`) built from a compact heightfield's regions.
pub struct ContourSet(NonNull<sys::rcContourSet>);

/// What a contour set holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContourCounts {
    /// Contours (holes are merged into their outline by Recast, so one per region piece).
    pub contours: u64,
    /// Vertices of the simplified contours.
    pub vertices: u64,
    /// Vertices of the raw contours: one per unit boundary edge.
    pub raw_vertices: u64,
    /// Raw vertices where the outline changes direction (in x, z).
    pub raw_corners: u64,
}

impl std::ops::AddAssign for ContourCounts {
    fn add_assign(&mut self, o: ContourCounts) {
        self.contours += o.contours;
        self.vertices += o.vertices;
        self.raw_vertices += o.raw_vertices;
        self.raw_corners += o.raw_corners;
    }
}

impl ContourSet {
    /// `rcAllocContourSet` + `rcBuildContours`. `max_error` is compared with distances in
    /// cells (whatever the header says about world units), `max_edge_len` is in cells, 0 for
    /// no limit.
    pub fn build(
        ctx: &Context,
        chf: &CompactHeightfield,
        max_error: f32,
        max_edge_len: i32,
        flags: i32,
    ) -> Result<ContourSet, RecastError> {
        assert!(max_error >= 0.0 && max_edge_len >= 0);
        // SAFETY: allocation; the constructor nulls the contour array, so dropping is fine.
        let raw = unsafe { sys::rcAllocContourSet() };
        let cset = ContourSet(NonNull::new(raw).ok_or(RecastError("rcAllocContourSet"))?);
        // SAFETY: both objects are live; Recast only reads `chf`. A fresh set each time, since
        // rcBuildContours overwrites the contour array without freeing an old one.
        let ok = unsafe {
            sys::rcBuildContours(
                ctx.ptr(),
                chf.0.as_ptr(),
                max_error,
                max_edge_len,
                cset.0.as_ptr(),
                flags,
            )
        };
        if ok {
            Ok(cset)
        } else {
            Err(RecastError("rcBuildContours"))
        }
    }

    pub fn counts(&self) -> ContourCounts {
        // SAFETY: owned and live; `conts` holds `nconts` contours, each with `nverts` and
        // `nrverts` points of 4 ints.
        let set = unsafe { self.0.as_ref() };
        let mut out = ContourCounts::default();
        for k in 0..set.nconts.max(0) as usize {
            let c = unsafe { &*set.conts.add(k) };
            out.contours += 1;
            out.vertices += c.nverts.max(0) as u64;
            let n = c.nrverts.max(0) as usize;
            out.raw_vertices += n as u64;
            if n == 0 || c.rverts.is_null() {
                continue;
            }
            let raw = unsafe { std::slice::from_raw_parts(c.rverts, n * 4) };
            let xz = |i: usize| (raw[i * 4], raw[i * 4 + 2]);
            for i in 0..n {
                let (a, b, d) = (xz((i + n - 1) % n), xz(i), xz((i + 1) % n));
                let (u, v) = ((b.0 - a.0, b.1 - a.1), (d.0 - b.0, d.1 - b.1));
                if u.0 * v.1 - u.1 * v.0 != 0 {
                    out.raw_corners += 1;
                }
            }
        }
        out
    }
}

impl Drop for ContourSet {
    fn drop(&mut self) {
        // SAFETY: allocated by rcAllocContourSet, freed once (with its contours).
        unsafe { sys::rcFreeContourSet(self.0.as_ptr()) }
    }
}

/// `rcMarkWalkableTriangles` over triangles that index a shared vertex array (`verts`: x, y, z
/// per vertex, Recast frame; `tris`: three indices per triangle). Sets `areas[i]` to the
/// walkable area for every triangle no steeper than `slope_degrees` that faces up.
pub fn mark_walkable_indexed(
    ctx: &Context,
    slope_degrees: f32,
    verts: &[f32],
    tris: &[c_int],
    areas: &mut [u8],
) {
    check_indexed(verts, tris);
    assert_eq!(areas.len(), tris.len() / 3);
    // SAFETY: every index names a vertex (checked above); Recast writes only areas[..n].
    unsafe {
        sys::rcMarkWalkableTriangles(
            ctx.ptr(),
            slope_degrees,
            verts.as_ptr(),
            (verts.len() / 3) as c_int,
            tris.as_ptr(),
            (tris.len() / 3) as c_int,
            areas.as_mut_ptr(),
        )
    }
}

/// Panics unless `tris` is whole triangles whose indices all name a vertex of `verts`.
fn check_indexed(verts: &[f32], tris: &[c_int]) {
    assert_eq!(verts.len() % 3, 0);
    assert_eq!(tris.len() % 3, 0);
    let count = (verts.len() / 3).min(c_int::MAX as usize) as c_int;
    assert!(
        tris.iter().all(|&i| (0..count).contains(&i)),
        "triangle index out of range"
    );
}

impl Heightfield {
    /// `rcRasterizeTriangles` over triangles that index a shared vertex array, as
    /// [`mark_walkable_indexed`] takes them.
    pub fn rasterize_indexed(
        &mut self,
        ctx: &Context,
        verts: &[f32],
        tris: &[c_int],
        areas: &[u8],
        merge_threshold: i32,
    ) -> Result<(), RecastError> {
        check_indexed(verts, tris);
        assert_eq!(areas.len(), tris.len() / 3);
        // SAFETY: indices and lengths checked above.
        let ok = unsafe {
            sys::rcRasterizeTriangles(
                ctx.ptr(),
                verts.as_ptr(),
                (verts.len() / 3) as c_int,
                tris.as_ptr(),
                areas.as_ptr(),
                (tris.len() / 3) as c_int,
                self.0.as_ptr(),
                merge_threshold,
            )
        };
        if ok {
            Ok(())
        } else {
            Err(RecastError("rcRasterizeTriangles"))
        }
    }
}

impl ContourSet {
    /// Contours in the set (`nconts`).
    pub fn len(&self) -> usize {
        // SAFETY: owned and live.
        unsafe { self.0.as_ref() }.nconts.max(0) as usize
    }
}

/// `RC_MESH_NULL_IDX`: an unused vertex slot of a polygon (or no neighbour across an edge).
pub const MESH_NULL_IDX: u16 = sys::RC_MESH_NULL_IDX;

/// A tile's convex polygons (`rcPolyMesh`), built from its contours.
pub struct PolyMesh(NonNull<sys::rcPolyMesh>);

/// What the tables count of one tile's polygon mesh (and detail mesh, when built).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MeshCounts {
    pub polygons: u64,
    /// `nverts`: a vertex shared by polygons of the tile counts once.
    pub vertices: u64,
    /// Distinct region ids among the polygons.
    pub regions: u64,
    /// Plan area of the polygons, in square cells (shoelace over x, z).
    pub area_cells: f64,
    /// Detail vertices beyond the polygons' own (what Detour stores as detail vertices).
    pub detail_vertices: u64,
    /// Detail triangles.
    pub detail_triangles: u64,
}

impl std::ops::AddAssign for MeshCounts {
    fn add_assign(&mut self, o: MeshCounts) {
        self.polygons += o.polygons;
        self.vertices += o.vertices;
        self.regions += o.regions;
        self.area_cells += o.area_cells;
        self.detail_vertices += o.detail_vertices;
        self.detail_triangles += o.detail_triangles;
    }
}

impl PolyMesh {
    /// `rcAllocPolyMesh` + `rcBuildPolyMesh`, at most `nvp` vertices per polygon.
    pub fn build(ctx: &Context, cset: &ContourSet, nvp: i32) -> Result<PolyMesh, RecastError> {
        assert!((3..=0xfffe).contains(&nvp));
        // SAFETY: allocation; the constructor nulls every array, so dropping it is fine.
        let raw = unsafe { sys::rcAllocPolyMesh() };
        let mesh = PolyMesh(NonNull::new(raw).ok_or(RecastError("rcAllocPolyMesh"))?);
        // SAFETY: both objects are live; Recast only reads the contour set.
        let ok = unsafe { sys::rcBuildPolyMesh(ctx.ptr(), cset.0.as_ptr(), nvp, mesh.0.as_ptr()) };
        if ok {
            Ok(mesh)
        } else {
            Err(RecastError("rcBuildPolyMesh"))
        }
    }

    /// The mesh as Recast holds it (read only), for Detour's tile builder.
    pub fn raw(&self) -> &sys::rcPolyMesh {
        // SAFETY: owned, live, and never mutated after the build.
        unsafe { self.0.as_ref() }
    }

    /// Polygons and vertices per polygon at most.
    fn shape(&self) -> (usize, usize) {
        let m = self.raw();
        (m.npolys.max(0) as usize, m.nvp.max(0) as usize)
    }

    /// The vertices (`3 * nverts`: x, y, z in cells from the tile's origin), the polygons
    /// (`2 * nvp` per polygon: vertex indices padded with [`MESH_NULL_IDX`], then neighbours)
    /// and the region ids (one per polygon), borrowed.
    fn arrays(&self) -> (&[u16], &[u16], &[u16]) {
        let m = self.raw();
        let (npolys, nvp) = self.shape();
        let nverts = m.nverts.max(0) as usize;
        fn slice<'a>(p: *const u16, n: usize) -> &'a [u16] {
            if n == 0 || p.is_null() {
                &[]
            } else {
                // SAFETY: after a successful build Recast's arrays hold at least these counts
                // (it allocates maxpolys >= npolys of each), and they live as long as the mesh.
                unsafe { std::slice::from_raw_parts(p, n) }
            }
        }
        (
            slice(m.verts, nverts * 3),
            slice(m.polys, npolys * 2 * nvp),
            slice(m.regs, npolys),
        )
    }

    /// The polygons' vertex indices, polygon by polygon (the padding left out).
    fn polygon_vertices(&self) -> impl Iterator<Item = impl Iterator<Item = usize> + '_> + '_ {
        let (_, nvp) = self.shape();
        let (_, polys, _) = self.arrays();
        polys.chunks_exact(2 * nvp.max(1)).map(move |p| {
            p[..nvp]
                .iter()
                .take_while(|&&v| v != MESH_NULL_IDX)
                .map(|&v| v as usize)
        })
    }

    /// The counts of this mesh (no detail mesh).
    pub fn counts(&self) -> MeshCounts {
        let (verts, _, regs) = self.arrays();
        let mut area = 0.0;
        for poly in self.polygon_vertices() {
            let idx: Vec<usize> = poly.collect();
            let mut twice = 0i64;
            for k in 0..idx.len() {
                let (a, b) = (idx[k], idx[(k + 1) % idx.len()]);
                let (ax, az) = (verts[a * 3] as i64, verts[a * 3 + 2] as i64);
                let (bx, bz) = (verts[b * 3] as i64, verts[b * 3 + 2] as i64);
                twice += ax * bz - bx * az;
            }
            area += twice.unsigned_abs() as f64 / 2.0;
        }
        let mut r = regs.to_vec();
        r.sort_unstable();
        r.dedup();
        MeshCounts {
            polygons: self.shape().0 as u64,
            vertices: (verts.len() / 3) as u64,
            regions: r.len() as u64,
            area_cells: area,
            detail_vertices: 0,
            detail_triangles: 0,
        }
    }
}

impl Drop for PolyMesh {
    fn drop(&mut self) {
        // SAFETY: allocated by rcAllocPolyMesh, freed once.
        unsafe { sys::rcFreePolyMesh(self.0.as_ptr()) }
    }
}

/// A tile's height detail (`rcPolyMeshDetail`): per polygon, a small triangle mesh whose
/// vertices are the polygon's own plus heights sampled from the compact heightfield.
pub struct PolyMeshDetail(NonNull<sys::rcPolyMeshDetail>);

impl PolyMeshDetail {
    /// `rcAllocPolyMeshDetail` + `rcBuildPolyMeshDetail`: `sample_dist` between samples and
    /// `sample_max_error` of height error left, both in world units, as RecastDemo passes
    /// them (`detailSampleDist`, `detailSampleMaxError`).
    pub fn build(
        ctx: &Context,
        pmesh: &PolyMesh,
        chf: &CompactHeightfield,
        sample_dist: f32,
        sample_max_error: f32,
    ) -> Result<PolyMeshDetail, RecastError> {
        // SAFETY: allocation; the constructor nulls every array, so dropping it is fine.
        let raw = unsafe { sys::rcAllocPolyMeshDetail() };
        let dmesh = PolyMeshDetail(NonNull::new(raw).ok_or(RecastError("rcAllocPolyMeshDetail"))?);
        // SAFETY: all three objects are live; Recast only reads the polygon mesh and the field.
        let ok = unsafe {
            sys::rcBuildPolyMeshDetail(
                ctx.ptr(),
                pmesh.0.as_ptr(),
                chf.0.as_ptr(),
                sample_dist,
                sample_max_error,
                dmesh.0.as_ptr(),
            )
        };
        if ok {
            Ok(dmesh)
        } else {
            Err(RecastError("rcBuildPolyMeshDetail"))
        }
    }

    /// The mesh as Recast holds it (read only), for Detour's tile builder.
    pub fn raw(&self) -> &sys::rcPolyMeshDetail {
        // SAFETY: owned, live, and never mutated after the build.
        unsafe { self.0.as_ref() }
    }

    /// `counts` of the polygon mesh this detail mesh was built from, with the detail figures
    /// added: triangles, and vertices beyond each polygon's own.
    pub fn add_counts(&self, pmesh: &PolyMesh, counts: &mut MeshCounts) {
        let d = self.raw();
        let nmeshes = d.nmeshes.max(0) as usize;
        let meshes: &[u32] = if nmeshes == 0 || d.meshes.is_null() {
            &[]
        } else {
            // SAFETY: `meshes` holds 4 entries per sub-mesh, one sub-mesh per polygon.
            unsafe { std::slice::from_raw_parts(d.meshes, 4 * nmeshes) }
        };
        let mut extra = 0u64;
        for (m, poly) in meshes.chunks_exact(4).zip(pmesh.polygon_vertices()) {
            // Each sub-mesh starts with its polygon's own vertices.
            extra += (m[1] as u64).saturating_sub(poly.count() as u64);
        }
        counts.detail_vertices += extra;
        counts.detail_triangles += d.ntris.max(0) as u64;
    }
}

impl Drop for PolyMeshDetail {
    fn drop(&mut self) {
        // SAFETY: allocated by rcAllocPolyMeshDetail, freed once.
        unsafe { sys::rcFreePolyMeshDetail(self.0.as_ptr()) }
    }
}
