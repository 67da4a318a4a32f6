//! `recast-full`: a whole tiled Recast build of one scene, the way RecastDemo's tile mesh sample
//! (`Sample_TileMesh::buildAllTiles` / `buildTileMesh`) builds it, on N threads. `full` runs it
//! as a child process so that its time and peak memory are its own.
//!
//! Per tile, in RecastDemo's order: heightfield over the tile grown by the border
//! (`walkableRadius + 3` cells), `rcMarkWalkableTriangles` and `rcRasterizeTriangles` on the
//! triangles whose bounds overlap it, the three filters, `rcBuildCompactHeightfield` (the solid
//! heightfield is freed right after), `rcErodeWalkableArea`, `rcBuildDistanceField`,
//! `rcBuildRegions` (watershed), `rcBuildContours` (tiles with no contour stop there),
//! `rcBuildPolyMesh`, `rcBuildPolyMeshDetail` (with detail on; the compact heightfield lives
//! until then, and is freed with the contours right after), then `dtCreateNavMeshData` with
//! the tile's parameters filled as RecastDemo fills them. Each tile's navmesh data is kept until
//! the end, standing in for `dtNavMesh::addTile`; its counts are read from the meshes before
//! they are freed. With detail off the detail mesh is skipped and Detour gets none. `queries`
//! builds its Detour navmesh through the same tile loop ([`TileJobs`]).
//!
//! The grid is RecastDemo's: `rcCalcGridSize` over the mesh bounds, `(gw + ts - 1) / ts` tiles a
//! side, tile `(x, y)` covering `bmin + [x, x + 1) * ts * cs`. RecastDemo finds a tile's
//! triangles with its chunky mesh (boxes of 256 triangles); here every triangle is listed under
//! each tile its own bounding box overlaps, which hands Recast the same or fewer triangles.

use crate::detour::{self, Agent, TileData};
use crate::objmesh::{self, ObjMesh};
use crate::recast::{
    self, CompactHeightfield, Context, ContourSet, Heightfield, MeshCounts, PolyMesh,
    PolyMeshDetail, RecastError, CONTOUR_TESS_WALL_EDGES,
};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use tessera_geom::UpAxis;

/// Recast's build settings, in Recast's own units (cells and voxels unless said).
#[derive(Clone, Debug, PartialEq)]
pub struct FullSettings {
    /// Cell size [m].
    pub cs: f32,
    /// Cell height [m].
    pub ch: f32,
    /// Tile edge [cells].
    pub tile_size: i32,
    /// `walkableHeight`, `walkableClimb` [voxels], `walkableRadius` [cells].
    pub walkable_height: i32,
    pub walkable_climb: i32,
    pub walkable_radius: i32,
    /// `walkableSlopeAngle` [degrees].
    pub slope: f32,
    /// `maxSimplificationError` (Recast measures it in cells).
    pub max_error: f32,
    /// `maxEdgeLen` [cells], 0 for no limit.
    pub max_edge_len: i32,
    /// `maxVertsPerPoly`.
    pub nvp: i32,
    /// `minRegionArea`, `mergeRegionArea` [cells].
    pub min_region_area: i32,
    pub merge_region_area: i32,
    /// Build the detail mesh (`rcBuildPolyMeshDetail`) and give it to Detour.
    pub detail: bool,
    /// `detailSampleDist` and `detailSampleMaxError` [m], as RecastDemo passes them (its
    /// sliders times the cell size and the cell height).
    pub detail_sample_dist: f32,
    pub detail_sample_max_error: f32,
    /// The agent in world units [m], for `dtNavMeshCreateParams` (`walkableHeight`,
    /// `walkableRadius`, `walkableClimb`).
    pub agent_height: f32,
    pub agent_radius: f32,
    pub agent_climb: f32,
}

impl FullSettings {
    /// RecastDemo's tile border: `walkableRadius + 3` cells.
    pub fn border(&self) -> i32 {
        self.walkable_radius + 3
    }

    /// The agent in world units, for Detour.
    pub fn agent(&self) -> Agent {
        Agent {
            height: self.agent_height,
            radius: self.agent_radius,
            climb: self.agent_climb,
        }
    }

    /// The command-line arguments `recast-full` reads back with [`FullSettings::from_args`].
    pub fn to_args(&self) -> Vec<String> {
        let pairs: [(&str, String); 18] = [
            ("cs", self.cs.to_string()),
            ("ch", self.ch.to_string()),
            ("tile", self.tile_size.to_string()),
            ("walkable-height", self.walkable_height.to_string()),
            ("walkable-climb", self.walkable_climb.to_string()),
            ("walkable-radius", self.walkable_radius.to_string()),
            ("slope", self.slope.to_string()),
            ("max-error", self.max_error.to_string()),
            ("max-edge-len", self.max_edge_len.to_string()),
            ("nvp", self.nvp.to_string()),
            ("min-region-area", self.min_region_area.to_string()),
            ("merge-region-area", self.merge_region_area.to_string()),
            ("detail", if self.detail { "on" } else { "off" }.to_string()),
            ("detail-sample-dist", self.detail_sample_dist.to_string()),
            (
                "detail-sample-max-error",
                self.detail_sample_max_error.to_string(),
            ),
            ("agent-height", self.agent_height.to_string()),
            ("agent-radius", self.agent_radius.to_string()),
            ("agent-climb", self.agent_climb.to_string()),
        ];
        pairs
            .into_iter()
            .flat_map(|(k, v)| [format!("--{k}"), v])
            .collect()
    }

    /// The option names [`FullSettings::to_args`] writes.
    pub const ARGS: [&'static str; 18] = [
        "cs",
        "ch",
        "tile",
        "walkable-height",
        "walkable-climb",
        "walkable-radius",
        "slope",
        "max-error",
        "max-edge-len",
        "nvp",
        "min-region-area",
        "merge-region-area",
        "detail",
        "detail-sample-dist",
        "detail-sample-max-error",
        "agent-height",
        "agent-radius",
        "agent-climb",
    ];

    pub fn from_args(get: impl Fn(&str) -> Option<String>) -> Result<FullSettings, String> {
        fn num<T: std::str::FromStr>(
            get: &impl Fn(&str) -> Option<String>,
            k: &str,
        ) -> Result<T, String> {
            let v = get(k).ok_or_else(|| format!("--{k} is required"))?;
            v.parse()
                .map_err(|_| format!("--{k}: `{v}` is not a valid number"))
        }
        let s = FullSettings {
            cs: num(&get, "cs")?,
            ch: num(&get, "ch")?,
            tile_size: num(&get, "tile")?,
            walkable_height: num(&get, "walkable-height")?,
            walkable_climb: num(&get, "walkable-climb")?,
            walkable_radius: num(&get, "walkable-radius")?,
            slope: num(&get, "slope")?,
            max_error: num(&get, "max-error")?,
            max_edge_len: num(&get, "max-edge-len")?,
            nvp: num(&get, "nvp")?,
            min_region_area: num(&get, "min-region-area")?,
            merge_region_area: num(&get, "merge-region-area")?,
            detail: match get("detail").as_deref() {
                Some("on") => true,
                Some("off") => false,
                _ => return Err("--detail must be on or off".to_string()),
            },
            detail_sample_dist: num(&get, "detail-sample-dist")?,
            detail_sample_max_error: num(&get, "detail-sample-max-error")?,
            agent_height: num(&get, "agent-height")?,
            agent_radius: num(&get, "agent-radius")?,
            agent_climb: num(&get, "agent-climb")?,
        };
        let ok = s.cs > 0.0
            && s.ch > 0.0
            && s.tile_size > 0
            && (1..=255).contains(&s.walkable_height)
            && s.walkable_climb >= 0
            && (0..=127).contains(&s.walkable_radius)
            && (0.0..90.0).contains(&s.slope)
            && s.max_error >= 0.0
            && s.max_edge_len >= 0
            && (3..=6).contains(&s.nvp)
            && s.min_region_area >= 0
            && s.merge_region_area >= 0
            && s.detail_sample_dist >= 0.0
            && s.detail_sample_max_error >= 0.0
            && s.agent_height > 0.0
            && s.agent_radius >= 0.0
            && s.agent_climb >= 0.0;
        if ok {
            Ok(s)
        } else {
            Err(format!("Recast settings out of Recast's limits: {s:?}"))
        }
    }
}

/// RecastDemo's grid over the mesh bounds.
pub struct Grid {
    pub bmin: [f32; 3],
    pub bmax: [f32; 3],
    /// Tiles along x and z.
    pub tw: i32,
    pub th: i32,
}

impl Grid {
    fn new(mesh: &ObjMesh, s: &FullSettings) -> Grid {
        // rcCalcGridSize.
        let gw = ((mesh.bmax[0] - mesh.bmin[0]) / s.cs + 0.5) as i32;
        let gh = ((mesh.bmax[2] - mesh.bmin[2]) / s.cs + 0.5) as i32;
        let ts = s.tile_size;
        Grid {
            bmin: mesh.bmin,
            bmax: mesh.bmax,
            tw: ((gw + ts - 1) / ts).max(1),
            th: ((gh + ts - 1) / ts).max(1),
        }
    }

    /// Tiles along one axis whose grown range overlaps `lo..=hi` (metres along the axis,
    /// `origin` the grid's minimum there), clamped to `0..n`.
    fn range(lo: f32, hi: f32, origin: f32, s: &FullSettings, n: i32) -> (i32, i32) {
        let tcs = s.tile_size as f64 * s.cs as f64;
        let pad = s.border() as f64 * s.cs as f64;
        let (lo, hi) = ((lo - origin) as f64, (hi - origin) as f64);
        // Tile t spans [t * tcs - pad, (t + 1) * tcs + pad].
        let first = ((lo - pad) / tcs - 1.0).ceil() as i64;
        let last = ((hi + pad) / tcs).floor() as i64;
        (first.max(0) as i32, last.min(n as i64 - 1) as i32)
    }

    /// The tiles each triangle reaches, as offsets into one list of triangle ids (row-major
    /// tiles, triangles in scene order within each).
    fn bin(&self, mesh: &ObjMesh, s: &FullSettings) -> (Vec<usize>, Vec<u32>) {
        let tiles = (self.tw * self.th) as usize;
        let ranges = |t: &[i32]| {
            let v = |i: i32| &mesh.verts[i as usize * 3..i as usize * 3 + 3];
            let (a, b, c) = (v(t[0]), v(t[1]), v(t[2]));
            let (x0, x1) = (a[0].min(b[0]).min(c[0]), a[0].max(b[0]).max(c[0]));
            let (z0, z1) = (a[2].min(b[2]).min(c[2]), a[2].max(b[2]).max(c[2]));
            (
                Grid::range(x0, x1, self.bmin[0], s, self.tw),
                Grid::range(z0, z1, self.bmin[2], s, self.th),
            )
        };
        let mut offsets = vec![0usize; tiles + 1];
        for t in mesh.tris.chunks_exact(3) {
            let ((x0, x1), (z0, z1)) = ranges(t);
            for z in z0..=z1 {
                for x in x0..=x1 {
                    offsets[(z * self.tw + x) as usize + 1] += 1;
                }
            }
        }
        for i in 0..tiles {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut ids = vec![0u32; offsets[tiles]];
        for (id, t) in mesh.tris.chunks_exact(3).enumerate() {
            let ((x0, x1), (z0, z1)) = ranges(t);
            for z in z0..=z1 {
                for x in x0..=x1 {
                    let k = (z * self.tw + x) as usize;
                    ids[fill[k]] = id as u32;
                    fill[k] += 1;
                }
            }
        }
        (offsets, ids)
    }
}

/// One tile that ended with polygons, and what the caller kept of it.
pub struct BuiltTile<T> {
    /// Contours of the tile (`nconts`).
    pub contours: usize,
    pub kept: T,
}

/// The grid of a scene and, for every tile, the triangles whose bounds reach it grown by the
/// border: the work list of a tiled build.
pub struct TileJobs {
    pub grid: Grid,
    offsets: Vec<usize>,
    ids: Vec<u32>,
    /// Tiles (row-major index) that received at least one triangle.
    jobs: Vec<usize>,
}

impl TileJobs {
    pub fn new(mesh: &ObjMesh, s: &FullSettings) -> TileJobs {
        let grid = Grid::new(mesh, s);
        let (offsets, ids) = grid.bin(mesh, s);
        let jobs = (0..offsets.len() - 1)
            .filter(|&k| offsets[k + 1] > offsets[k])
            .collect();
        TileJobs {
            grid,
            offsets,
            ids,
            jobs,
        }
    }

    /// Tiles with at least one triangle.
    pub fn tiles_with_triangles(&self) -> usize {
        self.jobs.len()
    }

    /// Triangles listed under tiles, a triangle once per tile it reaches.
    pub fn placements(&self) -> usize {
        self.ids.len()
    }

    /// Builds every tile with triangles on `threads` threads, each taking the next tile from a
    /// shared counter, and hands each tile's polygon mesh and detail mesh (when `s.detail`) to
    /// `keep` on the thread that built them (both are freed when `keep` returns). Stops at the
    /// first failure. The tiles come back grouped by thread, not in grid order.
    pub fn build<T: Send>(
        &self,
        mesh: &ObjMesh,
        s: &FullSettings,
        threads: usize,
        keep: impl Fn(i32, i32, &PolyMesh, Option<&PolyMeshDetail>) -> Result<T, RecastError> + Sync,
    ) -> Result<Vec<BuiltTile<T>>, RecastError> {
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let first_error: Mutex<Option<RecastError>> = Mutex::new(None);
        let per_thread: Vec<Vec<BuiltTile<T>>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads.max(1))
                .map(|_| {
                    scope.spawn(|| {
                        let ctx = Context::new();
                        let mut out = Vec::new();
                        let mut tris: Vec<i32> = Vec::new();
                        let mut areas: Vec<u8> = Vec::new();
                        loop {
                            let j = next.fetch_add(1, Ordering::Relaxed);
                            if j >= self.jobs.len() || failed.load(Ordering::Relaxed) {
                                break;
                            }
                            let k = self.jobs[j];
                            let (tx, tz) = (k as i32 % self.grid.tw, k as i32 / self.grid.tw);
                            tris.clear();
                            for &id in &self.ids[self.offsets[k]..self.offsets[k + 1]] {
                                let id = id as usize * 3;
                                tris.extend_from_slice(&mesh.tris[id..id + 3]);
                            }
                            let built = build_tile(
                                &ctx,
                                s,
                                &self.grid,
                                tx,
                                tz,
                                &mesh.verts,
                                &tris,
                                &mut areas,
                            )
                            .and_then(|tile| match tile {
                                Some((contours, pmesh, dmesh)) => Ok(Some(BuiltTile {
                                    contours,
                                    kept: keep(tx, tz, &pmesh, dmesh.as_ref())?,
                                })),
                                None => Ok(None),
                            });
                            match built {
                                Ok(Some(tile)) => out.push(tile),
                                Ok(None) => {}
                                Err(e) => {
                                    failed.store(true, Ordering::Relaxed);
                                    first_error.lock().unwrap().get_or_insert(e);
                                    break;
                                }
                            }
                        }
                        out
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("a Recast worker panicked"))
                .collect()
        });
        match first_error.into_inner().unwrap() {
            Some(e) => Err(e),
            None => Ok(per_thread.into_iter().flatten().collect()),
        }
    }
}

/// Builds one tile as `Sample_TileMesh::buildTileMesh` does, up to the meshes Detour is given:
/// its contour count, polygon mesh and (when `s.detail`) detail mesh, or `None` when the tile
/// ends with no contour.
#[allow(clippy::too_many_arguments)]
fn build_tile(
    ctx: &Context,
    s: &FullSettings,
    grid: &Grid,
    tx: i32,
    tz: i32,
    verts: &[f32],
    tris: &[i32],
    areas: &mut Vec<u8>,
) -> Result<Option<(usize, PolyMesh, Option<PolyMeshDetail>)>, RecastError> {
    let border = s.border();
    let size = s.tile_size + 2 * border;
    let tcs = s.tile_size as f32 * s.cs;
    let pad = border as f32 * s.cs;
    let bmin = [
        grid.bmin[0] + tx as f32 * tcs - pad,
        grid.bmin[1],
        grid.bmin[2] + tz as f32 * tcs - pad,
    ];
    let bmax = [
        grid.bmin[0] + (tx + 1) as f32 * tcs + pad,
        grid.bmax[1],
        grid.bmin[2] + (tz + 1) as f32 * tcs + pad,
    ];
    let mut hf = Heightfield::new(ctx, size, size, bmin, bmax, s.cs, s.ch)?;
    areas.clear();
    areas.resize(tris.len() / 3, recast::NULL_AREA);
    recast::mark_walkable_indexed(ctx, s.slope, verts, tris, areas);
    hf.rasterize_indexed(ctx, verts, tris, areas, s.walkable_climb)?;
    hf.filter_low_hanging_obstacles(ctx, s.walkable_climb);
    hf.filter_ledges(ctx, s.walkable_height, s.walkable_climb);
    hf.filter_low_clearance(ctx, s.walkable_height);
    let mut chf = CompactHeightfield::build(ctx, s.walkable_height, s.walkable_climb, &hf)?;
    drop(hf);
    if s.walkable_radius > 0 {
        chf.erode(ctx, s.walkable_radius)?;
    }
    chf.build_distance_field(ctx)?;
    chf.build_regions(ctx, border, s.min_region_area, s.merge_region_area)?;
    let cset = ContourSet::build(
        ctx,
        &chf,
        s.max_error,
        s.max_edge_len,
        CONTOUR_TESS_WALL_EDGES,
    )?;
    if cset.len() == 0 {
        return Ok(None);
    }
    let pmesh = PolyMesh::build(ctx, &cset, s.nvp)?;
    // The detail mesh samples heights from the compact heightfield, so RecastDemo frees the
    // field (and the contours) only after it.
    let dmesh = if s.detail {
        Some(PolyMeshDetail::build(
            ctx,
            &pmesh,
            &chf,
            s.detail_sample_dist,
            s.detail_sample_max_error,
        )?)
    } else {
        None
    };
    drop(chf);
    let contours = cset.len();
    drop(cset);
    Ok(Some((contours, pmesh, dmesh)))
}

/// The `recast-full` subcommand: loads `scene`, builds every tile on `threads` threads and
/// writes what it measured to `json_out`.
pub fn run(
    scene: &Path,
    up: UpAxis,
    threads: usize,
    s: &FullSettings,
    json_out: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let mesh = objmesh::load(scene, up)?;
    let loaded = start.elapsed();
    let jobs = TileJobs::new(&mesh, s);
    let binned = start.elapsed();
    // Each tile's navmesh data is kept to the end, standing in for dtNavMesh::addTile, with
    // the tile's counts (a pass over its polygons, small next to building them).
    let agent = s.agent();
    let tiles = jobs.build(&mesh, s, threads, |tx, tz, pmesh, dmesh| {
        let mut counts = pmesh.counts();
        if let Some(d) = dmesh {
            d.add_counts(pmesh, &mut counts);
        }
        let data: Option<TileData> = detour::tile_data(pmesh, dmesh, tx, tz, &agent)?;
        Ok((data, counts))
    })?;
    let built = start.elapsed();
    let cell_area = s.cs as f64 * s.cs as f64;
    let mut counts = MeshCounts::default();
    let (mut contours, mut navmesh_bytes, mut navmesh_tiles) = (0u64, 0u64, 0u64);
    for t in &tiles {
        contours += t.contours as u64;
        let (data, c) = &t.kept;
        counts += *c;
        if let Some(d) = data {
            navmesh_bytes += d.bytes() as u64;
            navmesh_tiles += 1;
        }
    }
    let grid = &jobs.grid;
    let report = json!({
        "triangles": mesh.triangles(),
        "vertices": mesh.verts.len() / 3,
        "bmin": mesh.bmin,
        "bmax": mesh.bmax,
        "tiles": grid.tw * grid.th,
        "tiles_with_triangles": jobs.tiles_with_triangles(),
        "tiles_built": tiles.len(),
        "triangle_placements": jobs.placements(),
        "contours": contours,
        "polygons": counts.polygons,
        "polygon_vertices": counts.vertices,
        "regions": counts.regions,
        "walkable_area_m2": counts.area_cells * cell_area,
        "detail": s.detail,
        "detail_vertices": counts.detail_vertices,
        "detail_triangles": counts.detail_triangles,
        "navmesh_tiles": navmesh_tiles,
        "navmesh_bytes": navmesh_bytes,
        "threads": threads,
        "seconds": {
            "load": loaded.as_secs_f64(),
            "bin": (binned - loaded).as_secs_f64(),
            "build": (built - binned).as_secs_f64(),
            "total": built.as_secs_f64(),
        },
        "peak_rss_bytes": self_peak_rss(),
    });
    drop(tiles);
    std::fs::write(json_out, serde_json::to_string_pretty(&report)?)
        .map_err(|e| format!("{}: {e}", json_out.display()))?;
    Ok(())
}

/// This process's own peak resident set (`VmHWM`), for comparison with what the parent
/// measures from outside.
fn self_peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> FullSettings {
        FullSettings {
            cs: 0.3,
            ch: 0.2,
            tile_size: 32,
            walkable_height: 10,
            walkable_climb: 4,
            walkable_radius: 2,
            slope: 45.0,
            max_error: 1.3,
            max_edge_len: 40,
            nvp: 6,
            min_region_area: 64,
            merge_region_area: 400,
            detail: false,
            detail_sample_dist: 1.8,
            detail_sample_max_error: 0.2,
            agent_height: 2.0,
            agent_radius: 0.6,
            agent_climb: 0.9,
        }
    }

    fn run_json(obj: &Path, up: UpAxis, s: &FullSettings) -> serde_json::Value {
        let out = obj.with_extension("json");
        run(obj, up, 2, s, &out).unwrap();
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
    }

    #[test]
    fn settings_round_trip_through_arguments() {
        for detail in [false, true] {
            let s = FullSettings {
                detail,
                ..settings()
            };
            let args = s.to_args();
            let get = |k: &str| {
                args.iter()
                    .position(|a| a == &format!("--{k}"))
                    .map(|i| args[i + 1].clone())
            };
            assert_eq!(FullSettings::from_args(get).unwrap(), s);
        }
        let s = settings();
        let args = s.to_args();
        assert!(FullSettings::ARGS
            .iter()
            .all(|k| args.contains(&format!("--{k}"))));
    }

    #[test]
    fn tile_ranges_cover_the_grown_tiles() {
        let s = settings();
        // Tiles are 9.6 m, grown by 5 cells = 1.5 m on each side.
        assert_eq!(Grid::range(0.0, 0.0, 0.0, &s, 10), (0, 0));
        assert_eq!(Grid::range(9.7, 9.7, 0.0, &s, 10), (0, 1));
        assert_eq!(Grid::range(11.2, 11.2, 0.0, &s, 10), (1, 1));
        assert_eq!(Grid::range(8.0, 8.0, 0.0, &s, 10), (0, 0));
        assert_eq!(Grid::range(8.2, 8.2, 0.0, &s, 10), (0, 1));
        assert_eq!(Grid::range(-5.0, 500.0, 0.0, &s, 10), (0, 9));
    }

    #[test]
    fn a_citygen_world_loads_and_bakes_in_the_recast_harness() {
        // The demo size (the smallest citygen world), Z-up OBJ as `citygen --out` writes it.
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().join("demo.obj");
        crate::write_city(citygen::Size::Demo, 7, &obj).unwrap();
        let out = dir.path().join("r.json");
        run(&obj, UpAxis::Z, 2, &settings(), &out).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert!(v["polygons"].as_u64().unwrap() > 100, "{v}");
        // Streets, sidewalks and floors: thousands of square metres walkable in a 100 m world.
        let area = v["walkable_area_m2"].as_f64().unwrap();
        assert!(area > 3000.0 && area < 10_000.0, "{area}");
    }

    #[test]
    fn a_flat_square_becomes_polygons_of_its_area() {
        // A 30 m x 30 m floor, Y-up, counter-clockwise seen from above (+Y).
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().join("floor.obj");
        std::fs::write(&obj, "v 0 0 0\nv 0 0 30\nv 30 0 30\nv 30 0 0\nf 1 2 3 4\n").unwrap();
        let out = dir.path().join("r.json");
        run(&obj, UpAxis::Y, 2, &settings(), &out).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert!(v["polygons"].as_u64().unwrap() > 0);
        // The outermost ring of cells is a ledge (nothing beside it), then erosion by the radius
        // (2 cells) takes two more: 3 cells of 0.3 m off each side, (30 - 1.8)^2 = 795.2 m^2,
        // less a little contour simplification at the corners.
        let area = v["walkable_area_m2"].as_f64().unwrap();
        assert!((area - 795.24).abs() < 10.0, "{area}");
        assert_eq!(v["tiles"].as_u64(), Some(16));
    }

    #[test]
    fn a_flat_square_with_detail_gives_a_detail_mesh_and_navmesh_data() {
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().join("floor.obj");
        std::fs::write(&obj, "v 0 0 0\nv 0 0 30\nv 30 0 30\nv 30 0 0\nf 1 2 3 4\n").unwrap();
        let off = run_json(&obj, UpAxis::Y, &settings());
        let on = run_json(
            &obj,
            UpAxis::Y,
            &FullSettings {
                detail: true,
                ..settings()
            },
        );
        // Detail changes neither the polygons nor their area.
        for key in ["polygons", "polygon_vertices", "walkable_area_m2"] {
            assert_eq!(on[key], off[key], "{key}");
        }
        assert_eq!(off["detail_triangles"].as_u64(), Some(0));
        assert_eq!(on["detail"].as_bool(), Some(true));
        // Every polygon has at least one detail triangle; a flat floor needs no extra vertex.
        let polygons = on["polygons"].as_u64().unwrap();
        assert!(on["detail_triangles"].as_u64().unwrap() >= polygons, "{on}");
        assert_eq!(on["detail_vertices"].as_u64(), Some(0), "{on}");
        // Every tile with polygons became navmesh data, on both runs.
        for v in [&on, &off] {
            assert_eq!(v["navmesh_tiles"], v["tiles_built"], "{v}");
            assert!(v["navmesh_bytes"].as_u64().unwrap() > 0, "{v}");
        }
    }

    #[test]
    fn undulating_ground_gets_detail_vertices() {
        // Recast's demo terrain: heights the polygons alone do not follow.
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().join("undulating.obj");
        std::fs::copy(crate::default_scenes_dir().join("undulating.obj"), &obj).unwrap();
        let s = FullSettings {
            detail: true,
            ..settings()
        };
        let v = run_json(&obj, UpAxis::Y, &s);
        assert!(v["detail_vertices"].as_u64().unwrap() > 100, "{v}");
        assert!(
            v["detail_triangles"].as_u64().unwrap() > v["polygons"].as_u64().unwrap(),
            "{v}"
        );
    }
}
