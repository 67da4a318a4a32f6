//! The assembler: regions in, spill files out, then the passes of [`Assembler::finish`].
//!
//! [`Assembler::add_region`] takes one region's polygons at a time (vertices on the voxel grid,
//! indices local to the region) and appends them to spill files: vertices, polygons, their
//! vertex lists, detail triangles. Portals inside the region are matched on the spot; edges on
//! the region's border go to an external sort by their plan endpoints, blocked edges to the
//! stair-link sweep. [`Assembler::finish`] runs the passes (see the crate documentation) over
//! the spill files, which are memory-mapped read-only where a pass needs random access.
//!
//! Memory: the sort buffers (the caller's `memory`), a few words per region, the edge map of
//! the largest region added, and bitsets of one bit per polygon when pruning.

use std::io::{Seek, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use tessera_artifacts::{InputPoly, NotchGroups, DETAIL};
use tessera_navmesh::{Area, Frame, Poly, Stats, NONE};
use tessera_spill::{Sorter, Spill, SpillWriter};

use crate::border::{match_border_edges, BorderEdge};
use crate::grid::build_grid;
use crate::hierarchy::{build_hierarchy, ClusterSettings, KeptLengths, MeshView};
use crate::links::{gather_links, GridLink, StairLinks};
use crate::offmesh::{LinkSpec, Snapper, STAIR};
use crate::reach::{components, prune, Mapped, Pruning};
use crate::renumber::{renumber_links, write_kept_arrays, Renumbering};
use crate::writer::{write_archive, Column, GridOut, HierarchyOut, NavMeshOut};
use crate::BuildError;

/// Where a region's data starts in the spill files.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RegionStart {
    pub vert: u32,
    pub detail: u32,
    pub poly: u32,
    pub edge: u32,
    pub tri: u32,
}

/// Counts of the finished mesh, as written: what [`Assembler::finish`] returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Assembled {
    pub polygons: u64,
    pub vertices: u64,
    /// Points added for height detail.
    pub detail_vertices: u64,
    pub bytes: u64,
    pub stats: Stats,
    /// Seeds (by index) that stand on no polygon.
    pub unplaced_seeds: Vec<usize>,
    /// Each cluster's key ([`KeptLengths`]), in cluster order, and how many clusters' tables
    /// were kept rather than searched.
    pub cluster_keys: Vec<u64>,
    pub clusters_kept: u64,
}

/// Builds a navmesh file from regions given one at a time (see the module docs).
pub struct Assembler {
    frame: Frame,
    climb: u32,
    dir: PathBuf,
    memory: usize,
    verts: SpillWriter<[i32; 3]>,
    detail: SpillWriter<[f32; 3]>,
    polys: SpillWriter<Poly>,
    boxes: SpillWriter<[f32; 4]>,
    poly_verts: SpillWriter<u32>,
    neis: SpillWriter<u32>,
    tris: SpillWriter<[u32; 3]>,
    border: Sorter<BorderEdge>,
    stairs: Option<StairLinks>,
    regions: Vec<RegionStart>,
    links: Vec<GridLink>,
    off_mesh: Snapper,
    areas: Vec<Area>,
    notches: u64,
    by_notches: NotchGroups,
    clusters: ClusterSettings,
    threads: usize,
    kept_lengths: Option<Box<dyn KeptLengths>>,
    /// Scratch of [`Assembler::add_region`], its room kept from region to region.
    scratch: RegionScratch,
}

/// What [`Assembler::add_region`] lays out for one region before writing it.
#[derive(Default)]
struct RegionScratch {
    /// Each polygon's doubled plan area (grid units).
    twice: Vec<i64>,
    /// Detail points, world units.
    detail: Vec<[f32; 3]>,
    /// Per edge of the region, in polygon order: its polygon, whether it is blocked, the
    /// neighbour found across it inside the region.
    owner: Vec<u32>,
    blocked: Vec<bool>,
    neis: Vec<u32>,
    /// Edges by their first vertex: `(last vertex, edge)`, those of vertex `v` from
    /// `from_start[v]` on.
    from_start: Vec<u32>,
    leaving: Vec<(u32, u32)>,
    poly_verts: Vec<u32>,
    tris: Vec<[u32; 3]>,
    boxes: Vec<[f32; 4]>,
    polys: Vec<Poly>,
}

impl RegionScratch {
    fn clear(&mut self) {
        self.twice.clear();
        self.detail.clear();
        self.owner.clear();
        self.blocked.clear();
        self.neis.clear();
        self.from_start.clear();
        self.leaving.clear();
        self.poly_verts.clear();
        self.tris.clear();
        self.boxes.clear();
        self.polys.clear();
    }
}

/// Every region's data in the order added, the spill files closed; what the passes read.
/// `regions` ends with a sentinel: where data after the last region would start.
pub(crate) struct Spilled {
    pub frame: Frame,
    pub dir: PathBuf,
    pub memory: usize,
    /// Vertices on the voxel grid.
    pub verts: Spill<[i32; 3]>,
    /// Detail points, world units.
    pub detail: Spill<[f32; 3]>,
    /// Polygons (link fields unset, region numbers as added).
    pub polys: Spill<Poly>,
    /// Plan bounding box of each polygon, world units: `[x0, y0, x1, y1]`.
    pub boxes: Spill<[f32; 4]>,
    pub poly_verts: Spill<u32>,
    /// Neighbours across each edge found inside regions ([`NONE`] elsewhere).
    pub neis: Spill<u32>,
    pub tris: Spill<[u32; 3]>,
    pub regions: Vec<RegionStart>,
}

impl Spilled {
    pub fn polygons(&self) -> u32 {
        self.polys.len() as u32
    }

    /// Where a region added after the last would start.
    fn end(&self) -> RegionStart {
        RegionStart {
            vert: self.verts.len() as u32,
            detail: self.detail.len() as u32,
            poly: self.polygons(),
            edge: self.poly_verts.len() as u32,
            tri: self.tris.len() as u32,
        }
    }

    /// The scratch file named `name` (a pass's output).
    pub fn scratch(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.final"))
    }

    fn paths(&self) -> [&Path; 7] {
        [
            self.verts.path(),
            self.detail.path(),
            self.polys.path(),
            self.boxes.path(),
            self.poly_verts.path(),
            self.neis.path(),
            self.tris.path(),
        ]
    }
}

/// A grid point (cells, cells, voxels) in world units.
pub(crate) fn to_world(frame: &Frame, v: [i32; 3]) -> [f32; 3] {
    let (cs, ch) = (frame.cell_size as f64, frame.cell_height as f64);
    [
        (v[0] as f64 * cs) as f32,
        (v[1] as f64 * cs) as f32,
        (v[2] as f64 * ch) as f32,
    ]
}

impl Assembler {
    /// Scratch files go to `dir` (created if missing); sorts use about `memory` bytes (while
    /// regions are added, the border edges' and the stair links' half each).
    /// `climb`: two edges that coincide in plan are a portal when their heights differ by at
    /// most this many voxels at both ends.
    pub fn new(
        frame: Frame,
        climb: u32,
        dir: &Path,
        memory: usize,
    ) -> Result<Assembler, BuildError> {
        std::fs::create_dir_all(dir).map_err(|source| BuildError::ScratchDir {
            dir: dir.to_path_buf(),
            source,
        })?;
        let spill = |name: &str| dir.join(format!("{name}.spill"));
        Ok(Assembler {
            frame,
            climb,
            dir: dir.to_path_buf(),
            memory: memory.max(1 << 16),
            verts: SpillWriter::create(spill("verts"))?,
            detail: SpillWriter::create(spill("detail"))?,
            polys: SpillWriter::create(spill("polys"))?,
            boxes: SpillWriter::create(spill("boxes"))?,
            poly_verts: SpillWriter::create(spill("poly_verts"))?,
            neis: SpillWriter::create(spill("neis"))?,
            tris: SpillWriter::create(spill("tris"))?,
            border: Sorter::new(dir, "border", memory.max(1 << 16) / 2),
            stairs: None,
            regions: Vec::new(),
            links: Vec::new(),
            off_mesh: Snapper::new(Vec::new()),
            areas: vec![Area::default_area()],
            notches: 0,
            by_notches: NotchGroups::default(),
            clusters: ClusterSettings::default(),
            threads: 1,
            kept_lengths: None,
            scratch: RegionScratch::default(),
        })
    }

    /// Threads the passes may use (the hierarchy's measures of its clusters; 1 by default).
    /// The file is the same for any number.
    pub fn threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Where the hierarchy may take a cluster's table of lengths from an earlier build (see
    /// [`KeptLengths`]); by default every table is searched.
    pub fn kept_lengths(&mut self, kept: Box<dyn KeptLengths>) {
        self.kept_lengths = Some(kept);
    }

    /// How the hierarchy groups polygons into clusters (see [`ClusterSettings`]).
    pub fn cluster_settings(&mut self, settings: ClusterSettings) {
        self.clusters = settings;
    }

    /// Links polygons of different regions whose blocked edges face each other across a plan
    /// gap: ends within `r` [cells] in plan and `climb` [voxels] in height (seed 000, 5.2.2).
    /// Call before adding regions. Its sort shares the assembler's memory evenly with the
    /// border edges' (a sort that fits writes nothing while regions are added).
    pub fn stair_links(&mut self, r: f64, climb: u32) {
        self.stairs = Some(StairLinks::new(&self.dir, self.memory / 2, r, climb));
    }

    /// Regions added so far.
    pub fn regions(&self) -> u32 {
        self.regions.len() as u32
    }

    /// Counts one region's outline for the file's [`Stats`]: its notches (reflex vertices) and the
    /// polygons it was cut into.
    pub fn add_outline(&mut self, notches: u64, polygons: u64) {
        self.notches += notches;
        self.by_notches.add(notches, polygons);
    }

    /// Counts outlines counted elsewhere (see [`Assembler::add_outline`]).
    pub fn add_outlines(&mut self, notches: u64, groups: &NotchGroups) {
        self.notches += notches;
        self.by_notches.merge(groups);
    }

    /// A stair link between two polygons (global indices, in the order regions were added),
    /// grid endpoints. Both directions must be given.
    pub fn add_link(&mut self, from: u32, to: u32, a: [i32; 3], b: [i32; 3]) {
        self.links.push((from, to, a, b, STAIR));
    }

    /// Off-mesh links (points in the internal frame): each end snaps to the polygon nearest
    /// it within the link's radius (in 3D, to the polygon's detail surface; the first added
    /// on a tie), and the link joins the two polygons, both ways if it is bidirectional.
    /// [`Assembler::finish`] fails naming the first end that found no polygon. Call before
    /// adding regions.
    pub fn off_mesh_links(&mut self, links: Vec<LinkSpec>) {
        self.off_mesh = Snapper::new(links);
    }

    /// The mesh's areas (`default` first; at most [`tessera_navmesh::MAX_AREAS`]): each
    /// region's polygons take one of them ([`Assembler::add_region`]). Without this call,
    /// `default` alone. Call before adding regions.
    pub fn set_areas(&mut self, areas: Vec<Area>) {
        assert!(
            !areas.is_empty() && areas.len() <= tessera_navmesh::MAX_AREAS,
            "1 to 64 areas"
        );
        self.areas = areas;
    }

    /// Polygons added so far.
    pub fn polygons(&self) -> u64 {
        self.polys.len()
    }

    /// Appends one region: vertices on the voxel grid, points added for height detail (plan in
    /// cells, height in voxels), polygons over them (indices local to `verts`, or to `detail`
    /// with the [`DETAIL`] bit; their `region` is ignored: regions are numbered in the order
    /// they are added), all of area `area` (an index into [`Assembler::set_areas`]'s table).
    pub fn add_region(
        &mut self,
        verts: &[[i32; 3]],
        detail: &[[f32; 3]],
        polys: &[InputPoly],
        area: u8,
    ) -> Result<(), BuildError> {
        let (cs, ch) = (self.frame.cell_size as f64, self.frame.cell_height as f64);
        // The format's 32-bit indices: refused here, at the first region past one of them,
        // never wrapped (every `as u32` below is in range once this holds).
        check_limits(
            &Totals {
                verts: self.verts.len(),
                detail: self.detail.len(),
                polys: self.polys.len(),
                edges: self.poly_verts.len(),
                tris: self.tris.len(),
                regions: self.regions.len() as u64,
            },
            &Totals {
                verts: verts.len() as u64,
                detail: detail.len() as u64,
                polys: polys.len() as u64,
                edges: polys.iter().map(|p| p.verts.len() as u64).sum(),
                tris: polys.iter().map(|p| p.tris.len() as u64).sum(),
                regions: 1,
            },
        )?;
        let start = RegionStart {
            vert: self.verts.len() as u32,
            detail: self.detail.len() as u32,
            poly: self.polys.len() as u32,
            edge: self.poly_verts.len() as u32,
            tri: self.tris.len() as u32,
        };
        let region = self.regions.len() as u32;
        let n_in = verts.len() as u32;
        if area as usize >= self.areas.len() {
            return Err(BuildError::Poly {
                poly: start.poly as usize,
                detail: "area id out of range",
            });
        }
        // Validate first: nothing is written for a bad region. Each polygon's doubled area
        // is kept for its record.
        let mut sc = std::mem::take(&mut self.scratch);
        sc.clear();
        for (i, p) in polys.iter().enumerate() {
            let bad = |detail| BuildError::Poly {
                poly: start.poly as usize + i,
                detail,
            };
            if p.verts.len() < 3 {
                return Err(bad("fewer than 3 vertices"));
            }
            let corner_ok = |v: u32| {
                if v & DETAIL != 0 {
                    ((v & !DETAIL) as usize) < detail.len()
                } else {
                    v < n_in
                }
            };
            if p.verts.iter().any(|&v| v >= n_in) || !p.tris.iter().flatten().all(|&v| corner_ok(v))
            {
                return Err(bad("vertex index out of range"));
            }
            if !p.blocked.is_empty() && p.blocked.len() != p.verts.len() {
                return Err(bad("blocked flags do not match the edges"));
            }
            let twice = twice_area(verts, &p.verts);
            if twice <= 0 {
                return Err(bad("not counter-clockwise"));
            }
            sc.twice.push(twice);
        }
        self.verts.extend(verts)?;
        sc.detail.extend(
            detail
                .iter()
                .map(|d| [d[0] as f64 * cs, d[1] as f64 * cs, d[2] as f64 * ch].map(|c| c as f32)),
        );
        self.detail.extend(&sc.detail)?;
        // The region's directed edges (numbered from 0 in polygon order) grouped by their
        // first vertex, for portals inside it: edge `a -> b` finds its twin `b -> a` among the
        // edges leaving `b` (a counting sort; of twins alike, the last, as a map keyed by the
        // pair would keep).
        sc.from_start.resize(n_in as usize + 2, 0);
        for (i, p) in polys.iter().enumerate() {
            for k in 0..p.verts.len() {
                sc.from_start[p.verts[k] as usize + 2] += 1;
                sc.owner.push(start.poly + i as u32);
                sc.blocked.push(p.blocked.get(k).copied().unwrap_or(false));
            }
        }
        for v in 2..sc.from_start.len() {
            sc.from_start[v] += sc.from_start[v - 1];
        }
        sc.leaving.resize(sc.owner.len(), (0, 0));
        let mut e = 0u32;
        for p in polys {
            for k in 0..p.verts.len() {
                let (a, b) = (p.verts[k], p.verts[(k + 1) % p.verts.len()]);
                let at = &mut sc.from_start[a as usize + 1];
                sc.leaving[*at as usize] = (b, e);
                *at += 1;
                e += 1;
            }
        }
        // Now `from_start[v]..from_start[v + 1]` are the edges leaving `v`.
        sc.neis.resize(sc.owner.len(), NONE);
        let mut tri_at = start.tri;
        let mut el = 0usize;
        for (i, p) in polys.iter().enumerate() {
            let first = start.edge + el as u32;
            let n = p.verts.len();
            let owner = start.poly + i as u32;
            for k in 0..n {
                let (a, b) = (p.verts[k], p.verts[(k + 1) % n]);
                let e = start.edge + el as u32;
                sc.poly_verts.push(start.vert + a);
                if sc.blocked[el] {
                    if let Some(stairs) = &mut self.stairs {
                        let (va, vb) = (verts[a as usize], verts[b as usize]);
                        stairs.add(e, owner, region, va, vb)?;
                    }
                    el += 1;
                    continue;
                }
                let leaving_b = &sc.leaving
                    [sc.from_start[b as usize] as usize..sc.from_start[b as usize + 1] as usize];
                match leaving_b.iter().rev().find(|&&(to, _)| to == a) {
                    Some(&(_, f)) if !sc.blocked[f as usize] => {
                        if sc.owner[f as usize] != owner {
                            sc.neis[el] = sc.owner[f as usize];
                        }
                    }
                    _ => {
                        let (pa, pb) = (verts[a as usize], verts[b as usize]);
                        let (lo, hi, dir) = if (pa[0], pa[1]) <= (pb[0], pb[1]) {
                            (pa, pb, 0)
                        } else {
                            (pb, pa, 1)
                        };
                        self.border.push(BorderEdge {
                            key: [lo[0], lo[1], hi[0], hi[1]],
                            dir,
                            h: [lo[2], hi[2]],
                            edge: e,
                            owner,
                        })?;
                    }
                }
                el += 1;
            }
            let global = |v: u32| {
                if v & DETAIL != 0 {
                    DETAIL | (start.detail + (v & !DETAIL))
                } else {
                    start.vert + v
                }
            };
            sc.tris.extend(p.tris.iter().map(|t| t.map(global)));
            let mut lo = [f32::INFINITY; 2];
            let mut hi = [f32::NEG_INFINITY; 2];
            for &v in &p.verts {
                let w = verts[v as usize];
                for k in 0..2 {
                    let c = (w[k] as f64 * cs) as f32;
                    lo[k] = lo[k].min(c);
                    hi[k] = hi[k].max(c);
                }
            }
            if !self.off_mesh.is_empty() {
                // The detail surface as the file will hold it (world units, f32).
                let corner = |v: u32| -> [f64; 3] {
                    let w = if v & DETAIL != 0 {
                        sc.detail[(v & !DETAIL) as usize]
                    } else {
                        to_world(&self.frame, verts[v as usize])
                    };
                    w.map(f64::from)
                };
                let tris: Vec<[[f64; 3]; 3]> = p.tris.iter().map(|t| t.map(corner)).collect();
                let bbox = [lo[0], lo[1], hi[0], hi[1]].map(f64::from);
                self.off_mesh.offer(owner, bbox, &tris);
            }
            sc.boxes.push([lo[0], lo[1], hi[0], hi[1]]);
            sc.polys.push(Poly {
                first,
                count: n as u32,
                tri_first: tri_at,
                tri_count: p.tris.len() as u32,
                link_first: 0,
                link_count: 0,
                region,
                area: (sc.twice[i] as f64 * 0.5 * cs * cs) as f32,
                // Known once the mesh is whole (pass 3b).
                component: NONE,
                area_id: area as u32,
            });
            tri_at += p.tris.len() as u32;
        }
        self.poly_verts.extend(&sc.poly_verts)?;
        self.tris.extend(&sc.tris)?;
        self.boxes.extend(&sc.boxes)?;
        self.polys.extend(&sc.polys)?;
        self.neis.extend(&sc.neis)?;
        self.regions.push(start);
        self.scratch = sc;
        Ok(())
    }

    /// Matches the border, prunes as `pruning` says (seeds in the internal frame), builds
    /// the grid and writes the file (header and archive) to `out`, which must be empty.
    /// `key` and `tile_cells` go into the header.
    pub fn finish<W: Write + Seek>(
        self,
        pruning: &Pruning,
        key: u64,
        tile_cells: u32,
        out: &mut W,
    ) -> Result<Assembled, BuildError> {
        self.finish_reporting(pruning, key, tile_cells, out, &mut |_| {
            ControlFlow::Continue(())
        })
    }

    /// [`Assembler::finish`], telling `report` each pass as it begins and, in the passes that
    /// sweep the polygons, how many are done (see [`Step`]): on a large world each pass is a
    /// sort or a sweep over every polygon, long enough to need progress of its own.
    pub fn finish_reporting<W: Write + Seek>(
        self,
        pruning: &Pruning,
        key: u64,
        tile_cells: u32,
        out: &mut W,
        report: &mut Report,
    ) -> Result<Assembled, BuildError> {
        let Assembler {
            frame,
            climb,
            dir,
            memory,
            verts,
            detail,
            polys,
            boxes,
            poly_verts,
            neis,
            tris,
            border,
            stairs,
            regions,
            mut links,
            off_mesh,
            areas,
            notches,
            by_notches,
            clusters,
            threads,
            kept_lengths,
            scratch: _,
        } = self;
        let mut input = Spilled {
            frame,
            dir,
            memory,
            verts: verts.finish()?,
            detail: detail.finish()?,
            polys: polys.finish()?,
            boxes: boxes.finish()?,
            poly_verts: poly_verts.finish()?,
            neis: neis.finish()?,
            tris: tris.finish()?,
            regions,
        };
        input.regions.push(input.end());

        let polygons = u64::from(input.polygons());
        let (snapped, off_mesh) = off_mesh
            .finish()
            .map_err(|(link, end)| BuildError::OffMeshEnd { link, end })?;
        links.extend(snapped);
        // Stair links and portals across regions read different records: with a second
        // thread, the links are gathered beside the portals.
        say(report, Step::Pass("stair links", 0))?;
        let polygon_count = input.polygons();
        let (links, patches) = side_by_side(
            threads,
            report,
            move |quiet| gather_links(links, stairs, polygon_count, threads, quiet),
            |report| {
                say(report, Step::Pass("portals across regions", 0))?;
                match_border_edges(border, climb, &input.dir, input.memory, report)
            },
        )?;
        if !pruning.seeds.is_empty() {
            say(report, Step::Pass("reachability", polygons))?;
        } else if pruning.min_island_area > 0.0 {
            say(report, Step::Pass("islands", polygons))?;
        }
        let reached = prune(&input, &patches, &links, pruning, report)?;
        say(report, Step::Pass("components", polygons))?;
        let components = components(&input, &patches, &links, &reached.keep, report)?;
        say(report, Step::Pass("renumbering", polygons))?;
        let numbering = Renumbering::new(&input.regions, &reached.keep);
        let links = renumber_links(links, &numbering, &input.frame, &off_mesh);
        let kept = write_kept_arrays(
            &input,
            &patches,
            &numbering,
            &links,
            &components.of,
            threads,
            report,
        )?;
        drop(numbering);
        say(report, Step::Pass("lookup grid", polygons))?;
        // The grid and the hierarchy read the kept arrays alone: with a second thread, the
        // grid is built beside the hierarchy (its progress untold).
        let build_the_hierarchy =
            |report: &mut Report| -> Result<crate::hierarchy::HierarchyColumns, BuildError> {
                let (verts, polys) = (Mapped::open(&kept.verts)?, Mapped::open(&kept.polys)?);
                let (poly_verts, neis) =
                    (Mapped::open(&kept.poly_verts)?, Mapped::open(&kept.neis)?);
                let view = MeshView {
                    frame: &input.frame,
                    bounds_min: kept.bounds_min,
                    bounds_max: kept.bounds_max,
                    verts: verts.get(),
                    polys: polys.get(),
                    poly_verts: poly_verts.get(),
                    neis: neis.get(),
                    links: &links,
                    off_mesh: &off_mesh,
                    areas: &areas,
                };
                let scratch = (input.dir.as_path(), input.memory, threads);
                build_hierarchy(&view, &clusters, scratch, kept_lengths.as_deref(), report)
            };
        let (grid, hierarchy) = side_by_side(
            threads,
            report,
            |quiet| build_grid(&input, &reached.keep, &kept, quiet),
            build_the_hierarchy,
        )?;

        let stats = Stats {
            regions: kept.regions,
            notches,
            by_notches,
            portals: (kept.portal_sides / 2) as u32,
            links: links.len() as u32,
            walkable_area: kept.walkable_area,
            polygons_removed: reached.polygons_removed,
            islands_removed: reached.islands,
            area_removed: reached.area_removed,
        };
        let mesh = NavMeshOut {
            frame: input.frame.clone(),
            bounds_min: kept.bounds_min,
            bounds_max: kept.bounds_max,
            verts: Column(kept.verts.clone()),
            polys: Column(kept.polys.clone()),
            poly_verts: Column(kept.poly_verts.clone()),
            poly_neis: Column(kept.neis.clone()),
            detail_tris: Column(kept.tris.clone()),
            detail_verts: Column(kept.detail.clone()),
            links,
            off_mesh,
            areas,
            components: components.table,
            hierarchy: HierarchyOut {
                poly_cluster: Column(hierarchy.poly_cluster.clone()),
                clusters: Column(hierarchy.clusters.clone()),
                entrances: Column(hierarchy.entrances.clone()),
                costs: Column(hierarchy.costs.clone()),
            },
            grid: GridOut {
                min: grid.min,
                cell: grid.cell,
                width: grid.width,
                height: grid.height,
                start: Column(grid.start.clone()),
                items: Column(grid.items.clone()),
            },
            stats: stats.clone(),
        };
        say(report, Step::Pass("writing the archive", 0))?;
        let bytes = write_archive(&mesh, key, tile_cells, out, report)?;
        for path in input
            .paths()
            .into_iter()
            .chain([patches.path()])
            .chain(kept.paths())
            .chain(grid.paths())
            .chain(hierarchy.paths())
        {
            let _ = std::fs::remove_file(path);
        }
        Ok(Assembled {
            polygons: kept.polys.len(),
            vertices: kept.verts.len(),
            detail_vertices: kept.detail.len(),
            bytes,
            stats,
            unplaced_seeds: reached.unplaced_seeds,
            cluster_keys: hierarchy.keys,
            clusters_kept: hierarchy.kept,
        })
    }
}

/// Counts of what a navmesh holds, or of what one region adds to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub verts: u64,
    pub detail: u64,
    pub polys: u64,
    /// Polygon corners (= edges): the length of the corner and neighbour tables.
    pub edges: u64,
    pub tris: u64,
    pub regions: u64,
}

/// The most of each table the navmesh format can index. Vertices and detail points share a
/// 32-bit corner index whose top bit tells them apart ([`DETAIL`]); polygons are numbered
/// below [`NONE`]; the others are 32-bit offsets.
pub(crate) const LIMITS: Totals = Totals {
    verts: DETAIL as u64,
    detail: DETAIL as u64,
    polys: NONE as u64,
    edges: u32::MAX as u64,
    tris: u32::MAX as u64,
    regions: NONE as u64,
};

/// Refuses `add` on top of `had` when a table would outgrow the format ([`LIMITS`]).
pub(crate) fn check_limits(had: &Totals, add: &Totals) -> Result<(), BuildError> {
    let tables = [
        ("vertices", had.verts, add.verts, LIMITS.verts),
        (
            "height detail points",
            had.detail,
            add.detail,
            LIMITS.detail,
        ),
        ("polygons", had.polys, add.polys, LIMITS.polys),
        ("polygon corners", had.edges, add.edges, LIMITS.edges),
        ("detail triangles", had.tris, add.tris, LIMITS.tris),
        ("regions", had.regions, add.regions, LIMITS.regions),
    ];
    for (what, before, more, limit) in tables {
        if before.saturating_add(more) > limit {
            return Err(BuildError::Limit {
                what,
                limit,
                at: format!("region {}", had.regions),
            });
        }
    }
    Ok(())
}

/// Refuses a world whose merged regions outgrow the navmesh's region table, before any of
/// them is polygonized: each merged region becomes one entry of that table, so `regions`
/// (counted by the merge, `at` saying where, made only for the error) is exactly what the
/// table would hold.
pub fn check_merged_regions(regions: u64, at: impl FnOnce() -> String) -> Result<(), BuildError> {
    if regions > LIMITS.regions {
        return Err(BuildError::Limit {
            what: "regions",
            limit: LIMITS.regions,
            at: at(),
        });
    }
    Ok(())
}

/// What [`Assembler::finish_reporting`] reports as it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A pass begins, over this many polygons (0: a pass not counted, a sort or the file).
    Pass(&'static str, u64),
    /// In a counted pass: this many polygons done. Reported at the pass's first polygon,
    /// every [`REPORT_EVERY`] polygons after it and when the pass ends (the total). In an
    /// uncounted pass, how far it got in its own unit: the records a sort's merge took
    /// (every [`REPORT_EVERY_RECORD`]), the bytes of the archive written (every 64 MiB).
    Done(u64),
}

/// Polygons between two [`Step::Done`] reports of a pass.
pub const REPORT_EVERY: u32 = 1 << 16;

/// Records of a sort's merge between two [`Step::Done`] reports of an uncounted pass.
pub const REPORT_EVERY_RECORD: u64 = 1 << 20;

/// Who hears [`Step`]s: it answers whether to go on. A break stops the file where it is
/// ([`BuildError::Stopped`]); the output is then unfinished and must not be committed.
pub type Report<'a> = dyn FnMut(Step) -> ControlFlow<()> + 'a;

/// `first` and `second`, two passes that read different arrays: with a second thread side by
/// side, `first` on a thread of its own with its progress untold; else one after the other,
/// both telling theirs (and `second` not run once `first` failed).
pub(crate) fn side_by_side<A: Send, B>(
    threads: usize,
    report: &mut Report,
    first: impl FnOnce(&mut Report) -> Result<A, BuildError> + Send,
    second: impl FnOnce(&mut Report) -> Result<B, BuildError>,
) -> Result<(A, B), BuildError> {
    if threads > 1 {
        std::thread::scope(|scope| {
            let first = scope.spawn(|| first(&mut |_| ControlFlow::Continue(())));
            let second = second(report);
            let first = first.join().expect("a pass beside another panicked");
            Ok((first?, second?))
        })
    } else {
        let first = first(report)?;
        Ok((first, second(report)?))
    }
}

/// Tells `report` of `step`; an error when it asks to stop.
pub(crate) fn say(report: &mut Report, step: Step) -> Result<(), BuildError> {
    match report(step) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(()) => Err(BuildError::Stopped),
    }
}

/// Reports `p` done when it starts a new stretch of [`REPORT_EVERY`].
#[inline]
pub(crate) fn tick(report: &mut Report, p: u32) -> Result<(), BuildError> {
    if p.is_multiple_of(REPORT_EVERY) {
        say(report, Step::Done(u64::from(p)))?;
    }
    Ok(())
}

/// Counts one more record of work between two of a pass's own reports and, every
/// [`REPORT_EVERY_RECORD`], reports `Done(at)`, or the count itself when `at` is None (a
/// sort's merge, an uncounted pass): a heartbeat, and a point where the work may stop.
#[inline]
pub(crate) fn tick_record(
    report: &mut Report,
    records: &mut u64,
    at: Option<u64>,
) -> Result<(), BuildError> {
    *records += 1;
    if records.is_multiple_of(REPORT_EVERY_RECORD) {
        say(report, Step::Done(at.unwrap_or(*records)))?;
    }
    Ok(())
}

/// Twice the signed plan area of the polygon `cycle` (indices into `verts`), exactly.
fn twice_area(verts: &[[i32; 3]], cycle: &[u32]) -> i64 {
    let plan = |k: usize| {
        let v = verts[cycle[k % cycle.len()] as usize];
        (v[0], v[1])
    };
    tessera_geom::predicates::twice_area_of_edges((0..cycle.len()).map(|k| (plan(k), plan(k + 1))))
}
