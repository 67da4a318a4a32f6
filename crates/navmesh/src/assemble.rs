//! Assembling the navmesh file out of core: regions in, the archive out, with memory that does
//! not grow with the world.
//!
//! [`Assembler::add_region`] takes one region's polygons at a time (vertices on the voxel grid,
//! indices local to the region) and appends them to spill files: vertices, polygons, their
//! vertex lists, detail triangles. Portals inside the region are matched on the spot; edges on
//! the region's border go to an external sort by their plan endpoints. [`Assembler::finish`]
//! then
//!
//! 1. matches border edges group by group (edges with the same plan endpoints; cheapest height
//!    difference first, ties by edge index) into neighbour patches, sorted by edge;
//! 2. with seed points, floods the polygon graph from them (bitsets, and the spill files
//!    memory-mapped read-only) and drops what no seed reaches, renumbering densely;
//! 3. builds the lookup grid by sorting (cell, polygon) pairs;
//! 4. streams every array into the rkyv archive: the archive of a [`NavMesh`] with the same
//!    contents, byte for byte, without the mesh ever being in memory.
//!
//! Memory: the sort buffers (the caller's `memory`), a few words per region, and bitsets of one
//! bit per polygon when pruning.

use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use bytemuck::{Pod, Zeroable};
use rkyv::rancor::{self, Source};
use rkyv::ser::{Writer, WriterExt};
use rkyv::vec::{ArchivedVec, VecResolver};
use rkyv::{Archive, Place, Serialize};
use rustc_hash::FxHashMap as HashMap;
use tessera_spill::{Sorter, Spill, SpillWriter};

use crate::{
    BuildError, Frame, InputPoly, Link, NotchGroups, Poly, Stats, DETAIL, HEADER_LEN, NONE,
};

/// An edge on a region's border, waiting for its partner in another region.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Pod, Zeroable)]
struct BorderEdge {
    /// Plan endpoints, smaller point first: `[x0, y0, x1, y1]`.
    key: [i32; 4],
    /// 0 when the edge runs from the smaller point, 1 when it runs towards it.
    dir: u32,
    /// Heights at the smaller and the larger point.
    h: [i32; 2],
    edge: u32,
    owner: u32,
}

/// Where a region's data starts in the spill files.
#[derive(Clone, Copy, Debug, Default)]
struct RegionStart {
    vert: u32,
    detail: u32,
    poly: u32,
    edge: u32,
    tri: u32,
}

/// Counts of the finished mesh, as written.
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
    stairs: Option<crate::links::StairLinks>,
    regions: Vec<RegionStart>,
    links: Vec<(u32, u32, [i32; 3], [i32; 3])>,
    notches: u64,
    by_notches: NotchGroups,
}

fn io_err(e: io::Error) -> BuildError {
    BuildError::Io(e.to_string())
}

impl Assembler {
    /// Scratch files go to `dir` (created if missing); sorts use about `memory` bytes each.
    /// `climb`: two edges that coincide in plan are a portal when their heights differ by at
    /// most this many voxels at both ends.
    pub fn new(
        frame: Frame,
        climb: u32,
        dir: &Path,
        memory: usize,
    ) -> Result<Assembler, BuildError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| BuildError::Io(format!("{}: {e}", dir.display())))?;
        let spill = |name: &str| dir.join(format!("{name}.spill"));
        Ok(Assembler {
            frame,
            climb,
            dir: dir.to_path_buf(),
            memory: memory.max(1 << 16),
            verts: SpillWriter::create(spill("verts")).map_err(io_err)?,
            detail: SpillWriter::create(spill("detail")).map_err(io_err)?,
            polys: SpillWriter::create(spill("polys")).map_err(io_err)?,
            boxes: SpillWriter::create(spill("boxes")).map_err(io_err)?,
            poly_verts: SpillWriter::create(spill("poly_verts")).map_err(io_err)?,
            neis: SpillWriter::create(spill("neis")).map_err(io_err)?,
            tris: SpillWriter::create(spill("tris")).map_err(io_err)?,
            border: Sorter::new(dir, "border", memory.max(1 << 16) / 2),
            stairs: None,
            regions: Vec::new(),
            links: Vec::new(),
            notches: 0,
            by_notches: NotchGroups::default(),
        })
    }

    /// Links polygons of different regions whose blocked edges face each other across a plan
    /// gap: ends within `r` [cells] in plan and `climb` [voxels] in height (seed 000, 5.2.2).
    /// Call before adding regions.
    pub fn stair_links(&mut self, r: f64, climb: u32) {
        self.stairs = Some(crate::links::StairLinks::new(
            &self.dir,
            self.memory / 4,
            r,
            climb,
        ));
    }

    /// Regions added so far.
    pub fn regions(&self) -> u32 {
        self.regions.len() as u32
    }

    /// Counts one region's outline for [`Stats`]: its notches (reflex vertices) and the
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

    /// A link between two polygons (global indices, in the order regions were added), grid
    /// endpoints. Both directions must be given.
    pub fn add_link(&mut self, from: u32, to: u32, a: [i32; 3], b: [i32; 3]) {
        self.links.push((from, to, a, b));
    }

    /// Polygons added so far.
    pub fn polygons(&self) -> u64 {
        self.polys.len()
    }

    /// Appends one region: vertices on the voxel grid, points added for height detail (plan in
    /// cells, height in voxels), polygons over them (indices local to `verts`, or to `detail`
    /// with the [`DETAIL`] bit; their `region` is ignored: regions are numbered in the order
    /// they are added).
    pub fn add_region(
        &mut self,
        verts: &[[i32; 3]],
        detail: &[[f32; 3]],
        polys: &[InputPoly],
    ) -> Result<(), BuildError> {
        let (cs, ch) = (self.frame.cell_size as f64, self.frame.cell_height as f64);
        let start = RegionStart {
            vert: self.verts.len() as u32,
            detail: self.detail.len() as u32,
            poly: self.polys.len() as u32,
            edge: self.poly_verts.len() as u32,
            tri: self.tris.len() as u32,
        };
        let region = self.regions.len() as u32;
        let n_in = verts.len() as u32;
        // Validate first: nothing is written for a bad region.
        for (i, p) in polys.iter().enumerate() {
            let bad = |detail: &str| BuildError::Poly {
                poly: start.poly as usize + i,
                detail: detail.into(),
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
            if twice_area(verts, &p.verts) <= 0 {
                return Err(bad("not counter-clockwise"));
            }
        }
        self.verts.extend(verts).map_err(io_err)?;
        for d in detail {
            let w = [d[0] as f64 * cs, d[1] as f64 * cs, d[2] as f64 * ch];
            self.detail.push(&w.map(|c| c as f32)).map_err(io_err)?;
        }
        // Directed edges of the region by their vertices, for portals inside it.
        let mut edge_of: HashMap<(u32, u32), u32> = HashMap::default();
        let mut e = start.edge;
        for p in polys {
            for k in 0..p.verts.len() {
                let (a, b) = (p.verts[k], p.verts[(k + 1) % p.verts.len()]);
                edge_of.insert((a, b), e);
                e += 1;
            }
        }
        let mut neis = vec![NONE; (e - start.edge) as usize];
        let mut owner_of_edge = Vec::with_capacity(neis.len());
        let mut blocked_edge = Vec::with_capacity(neis.len());
        for (i, p) in polys.iter().enumerate() {
            for k in 0..p.verts.len() {
                owner_of_edge.push(start.poly + i as u32);
                blocked_edge.push(p.blocked.get(k).copied().unwrap_or(false));
            }
        }
        let mut tri_at = start.tri;
        for (i, p) in polys.iter().enumerate() {
            let first = self.poly_verts.len() as u32;
            let n = p.verts.len();
            for k in 0..n {
                let (a, b) = (p.verts[k], p.verts[(k + 1) % n]);
                let e = first + k as u32;
                let el = (e - start.edge) as usize;
                self.poly_verts.push(&(start.vert + a)).map_err(io_err)?;
                if blocked_edge[el] {
                    if let Some(stairs) = &mut self.stairs {
                        let owner = start.poly + i as u32;
                        let (va, vb) = (verts[a as usize], verts[b as usize]);
                        stairs.add(e, owner, region, va, vb).map_err(io_err)?;
                    }
                    continue;
                }
                match edge_of.get(&(b, a)) {
                    Some(&f) if !blocked_edge[(f - start.edge) as usize] => {
                        let fl = (f - start.edge) as usize;
                        if owner_of_edge[fl] != owner_of_edge[el] {
                            neis[el] = owner_of_edge[fl];
                        }
                    }
                    _ => {
                        let (pa, pb) = (verts[a as usize], verts[b as usize]);
                        let (lo, hi, dir) = if (pa[0], pa[1]) <= (pb[0], pb[1]) {
                            (pa, pb, 0)
                        } else {
                            (pb, pa, 1)
                        };
                        self.border
                            .push(BorderEdge {
                                key: [lo[0], lo[1], hi[0], hi[1]],
                                dir,
                                h: [lo[2], hi[2]],
                                edge: e,
                                owner: start.poly + i as u32,
                            })
                            .map_err(io_err)?;
                    }
                }
            }
            for t in &p.tris {
                let global = |v: u32| {
                    if v & DETAIL != 0 {
                        DETAIL | (start.detail + (v & !DETAIL))
                    } else {
                        start.vert + v
                    }
                };
                self.tris.push(&t.map(global)).map_err(io_err)?;
            }
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
            self.boxes
                .push(&[lo[0], lo[1], hi[0], hi[1]])
                .map_err(io_err)?;
            self.polys
                .push(&Poly {
                    first,
                    count: n as u32,
                    tri_first: tri_at,
                    tri_count: p.tris.len() as u32,
                    link_first: 0,
                    link_count: 0,
                    region,
                    area: (twice_area(verts, &p.verts) as f64 * 0.5 * cs * cs) as f32,
                })
                .map_err(io_err)?;
            tri_at += p.tris.len() as u32;
        }
        self.neis.extend(&neis).map_err(io_err)?;
        self.regions.push(start);
        Ok(())
    }

    /// Matches the border, prunes from `seeds` (internal frame; none keeps everything), builds
    /// the grid and writes the file (header and archive) to `out`, which must be empty.
    /// `key` and `tile_cells` go into the header.
    pub fn finish<W: Write + Seek>(
        self,
        seeds: &[[f32; 3]],
        key: u64,
        tile_cells: u32,
        out: &mut W,
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
            mut regions,
            mut links,
            notches,
            by_notches,
        } = self;
        let verts = verts.finish().map_err(io_err)?;
        let detail = detail.finish().map_err(io_err)?;
        let polys = polys.finish().map_err(io_err)?;
        let boxes = boxes.finish().map_err(io_err)?;
        let poly_verts = poly_verts.finish().map_err(io_err)?;
        let neis = neis.finish().map_err(io_err)?;
        let tris = tris.finish().map_err(io_err)?;
        let np = polys.len() as u32;
        if let Some(stairs) = stairs {
            links.extend(stairs.finish().map_err(io_err)?);
        }
        // By source polygon (reachability looks links up that way).
        links.sort_by_key(|l| (l.0, l.1, l.2, l.3));
        links.dedup();
        for (i, l) in links.iter().enumerate() {
            if l.0 >= np || l.1 >= np {
                return Err(BuildError::Link { link: i });
            }
        }
        regions.push(RegionStart {
            vert: verts.len() as u32,
            detail: detail.len() as u32,
            poly: np,
            edge: poly_verts.len() as u32,
            tri: tris.len() as u32,
        });

        // 1. Border portals, group by group, into patches sorted by edge.
        let mut patches = Sorter::<[u32; 2]>::new(&dir, "patches", memory / 2);
        {
            let mut sorted = border.finish().map_err(io_err)?;
            let mut group: Vec<BorderEdge> = Vec::new();
            let flush = |group: &mut Vec<BorderEdge>, patches: &mut Sorter<[u32; 2]>| {
                let mut candidates: Vec<(u32, u32, u32, usize, usize)> = Vec::new();
                for (i, e) in group.iter().enumerate() {
                    for (j, f) in group.iter().enumerate() {
                        if e.dir != 0 || f.dir != 1 || e.owner == f.owner {
                            continue;
                        }
                        let d0 = (e.h[0] - f.h[0]).unsigned_abs();
                        let d1 = (e.h[1] - f.h[1]).unsigned_abs();
                        if d0 <= climb && d1 <= climb {
                            let (lo, hi) = (e.edge.min(f.edge), e.edge.max(f.edge));
                            candidates.push((d0 + d1, lo, hi, i, j));
                        }
                    }
                }
                candidates.sort_unstable();
                let mut used = vec![false; group.len()];
                for (_, _, _, i, j) in candidates {
                    if !used[i] && !used[j] {
                        used[i] = true;
                        used[j] = true;
                        patches.push([group[i].edge, group[j].owner])?;
                        patches.push([group[j].edge, group[i].owner])?;
                    }
                }
                group.clear();
                Ok::<(), io::Error>(())
            };
            while let Some(e) = sorted.next_record().map_err(io_err)? {
                if group.last().is_some_and(|g| g.key != e.key) {
                    flush(&mut group, &mut patches).map_err(io_err)?;
                }
                group.push(e);
            }
            flush(&mut group, &mut patches).map_err(io_err)?;
        }
        let mut w = SpillWriter::<[u32; 2]>::create(dir.join("patches.spill")).map_err(io_err)?;
        for p in patches.finish().map_err(io_err)? {
            w.push(&p.map_err(io_err)?).map_err(io_err)?;
        }
        let patches = w.finish().map_err(io_err)?;

        // 2. Reachability.
        let region_of_poly = |p: u32, regions: &[RegionStart]| -> usize {
            regions.partition_point(|r| r.poly <= p) - 1
        };
        let mut keep_poly = Bits::new(np as usize, true);
        let mut pruned_polys = 0u64;
        let mut islands = 0u64;
        let mut unplaced_seeds = Vec::new();
        if !seeds.is_empty() {
            let graph = Graph::map(&polys, &neis, &patches, &links)?;
            let mut starts = Vec::new();
            let vmap = Mapped::<[i32; 3]>::open(&verts)?;
            let dmap = Mapped::<[f32; 3]>::open(&detail)?;
            let tmap = Mapped::<[u32; 3]>::open(&tris)?;
            for (i, &s) in seeds.iter().enumerate() {
                match polygon_under(
                    &frame,
                    graph.polys.get(),
                    vmap.get(),
                    dmap.get(),
                    tmap.get(),
                    s,
                ) {
                    Some(p) => starts.push(p),
                    None => unplaced_seeds.push(i),
                }
            }
            let mut reached = Bits::new(np as usize, false);
            graph.flood(starts, &mut reached);
            let mut seen = reached.clone();
            for p in 0..np {
                if !seen.get(p as usize) {
                    islands += 1;
                    graph.flood(vec![p], &mut seen);
                }
            }
            pruned_polys = (np as u64) - reached.count();
            keep_poly = reached;
        }
        let keep_region: Vec<bool> = (0..regions.len() - 1)
            .map(|r| (regions[r].poly..regions[r + 1].poly).any(|p| keep_poly.get(p as usize)))
            .collect();
        // New numbering: prefix counts per region of what is kept.
        let mut new_start = Vec::with_capacity(regions.len());
        let mut acc = RegionStart::default();
        let mut kept_regions = 0u32;
        let mut new_region = Vec::with_capacity(keep_region.len());
        for r in 0..regions.len() {
            new_start.push(acc);
            if r + 1 == regions.len() {
                break;
            }
            new_region.push(kept_regions);
            if keep_region[r] {
                kept_regions += 1;
                acc.vert += regions[r + 1].vert - regions[r].vert;
                acc.detail += regions[r + 1].detail - regions[r].detail;
                // Inside a kept region, polygons are kept one by one.
                for p in regions[r].poly..regions[r + 1].poly {
                    if keep_poly.get(p as usize) {
                        acc.poly += 1;
                    }
                }
            }
        }
        let poly_rank = keep_poly.ranks();
        let new_poly = |p: u32| poly_rank.rank(&keep_poly, p as usize) as u32;
        let new_vert = |v: u32| -> u32 {
            if v & DETAIL != 0 {
                // The owner is the last region starting at or before it (regions without
                // detail points before it share its start).
                let d = v & !DETAIL;
                let r = regions.partition_point(|s| s.detail <= d) - 1;
                return DETAIL | (d - regions[r].detail + new_start[r].detail);
            }
            let r = regions.partition_point(|s| s.vert <= v) - 1;
            v - regions[r].vert + new_start[r].vert
        };

        // Links, kept and renumbered, grouped by their source polygon.
        links.retain(|l| keep_poly.get(l.0 as usize) && keep_poly.get(l.1 as usize));
        for l in &mut links {
            l.0 = new_poly(l.0);
            l.1 = new_poly(l.1);
        }
        links.sort_by_key(|l| (l.0, l.1, l.2, l.3));
        let (cs, ch) = (frame.cell_size as f64, frame.cell_height as f64);
        let world = |v: [i32; 3]| -> [f32; 3] {
            [
                (v[0] as f64 * cs) as f32,
                (v[1] as f64 * cs) as f32,
                (v[2] as f64 * ch) as f32,
            ]
        };
        let out_links: Vec<Link> = links
            .iter()
            .map(|l| Link {
                from: l.0,
                to: l.1,
                a: world(l.2),
                b: world(l.3),
            })
            .collect();

        // 3. Final arrays, renumbered, in spill files; bounds, area and the grid's cell size.
        let spill = |name: &str| dir.join(format!("{name}.final"));
        let mut f_verts = SpillWriter::<[f32; 3]>::create(spill("verts")).map_err(io_err)?;
        let mut bounds_min = [f32::INFINITY; 3];
        let mut bounds_max = [f32::NEG_INFINITY; 3];
        {
            let mut v_it = verts.iter().map_err(io_err)?;
            for r in 0..regions.len() - 1 {
                for _ in regions[r].vert..regions[r + 1].vert {
                    let v = v_it.next_record().map_err(io_err)?.expect("counted");
                    if keep_region[r] {
                        let w = world(v);
                        for k in 0..3 {
                            bounds_min[k] = bounds_min[k].min(w[k]);
                            bounds_max[k] = bounds_max[k].max(w[k]);
                        }
                        f_verts.push(&w).map_err(io_err)?;
                    }
                }
            }
        }
        if f_verts.is_empty() {
            bounds_min = [0.0; 3];
            bounds_max = [0.0; 3];
        }
        let mut f_detail = SpillWriter::<[f32; 3]>::create(spill("detail")).map_err(io_err)?;
        {
            let mut d_it = detail.iter().map_err(io_err)?;
            for r in 0..regions.len() - 1 {
                for _ in regions[r].detail..regions[r + 1].detail {
                    let d = d_it.next_record().map_err(io_err)?.expect("counted");
                    if keep_region[r] {
                        f_detail.push(&d).map_err(io_err)?;
                    }
                }
            }
        }
        let mut f_polys = SpillWriter::<Poly>::create(spill("polys")).map_err(io_err)?;
        let mut f_pverts = SpillWriter::<u32>::create(spill("poly_verts")).map_err(io_err)?;
        let mut f_neis = SpillWriter::<u32>::create(spill("neis")).map_err(io_err)?;
        let mut f_tris = SpillWriter::<[u32; 3]>::create(spill("tris")).map_err(io_err)?;
        let mut walkable_area = 0.0f64;
        let mut box_size_sum = 0.0f64;
        let mut kept_polys = 0u64;
        // Portal sides kept (each portal is seen from both of its polygons).
        let mut portal_sides = 0u64;
        {
            let mut p_it = polys.iter().map_err(io_err)?;
            let mut b_it = boxes.iter().map_err(io_err)?;
            let mut v_it = poly_verts.iter().map_err(io_err)?;
            let mut n_it = neis.iter().map_err(io_err)?;
            let mut t_it = tris.iter().map_err(io_err)?;
            let mut patch_it = patches.iter().map_err(io_err)?;
            let mut patch = patch_it.next_record().map_err(io_err)?;
            let mut link_at = 0usize;
            for p in 0..np {
                let poly = p_it.next_record().map_err(io_err)?.expect("counted");
                let bx = b_it.next_record().map_err(io_err)?.expect("counted");
                let keep = keep_poly.get(p as usize);
                let new_first = f_pverts.len() as u32;
                for k in 0..poly.count {
                    let e = poly.first + k;
                    let v = v_it.next_record().map_err(io_err)?.expect("counted");
                    let mut n = n_it.next_record().map_err(io_err)?.expect("counted");
                    while let Some([pe, q]) = patch {
                        if pe > e {
                            break;
                        }
                        if pe == e {
                            n = q;
                        }
                        patch = patch_it.next_record().map_err(io_err)?;
                    }
                    if keep {
                        f_pverts.push(&new_vert(v)).map_err(io_err)?;
                        let n = if n == NONE { NONE } else { new_poly(n) };
                        portal_sides += u64::from(n != NONE);
                        f_neis.push(&n).map_err(io_err)?;
                    }
                }
                let new_tri = f_tris.len() as u32;
                for _ in 0..poly.tri_count {
                    let t = t_it.next_record().map_err(io_err)?.expect("counted");
                    if keep {
                        f_tris.push(&t.map(new_vert)).map_err(io_err)?;
                    }
                }
                if !keep {
                    continue;
                }
                let id = kept_polys as u32;
                let link_first = link_at as u32;
                while link_at < links.len() && links[link_at].0 == id {
                    link_at += 1;
                }
                let link_count = link_at as u32 - link_first;
                f_polys
                    .push(&Poly {
                        first: new_first,
                        count: poly.count,
                        tri_first: new_tri,
                        tri_count: poly.tri_count,
                        link_first: if link_count == 0 { 0 } else { link_first },
                        link_count,
                        region: new_region[region_of_poly(p, &regions)],
                        area: poly.area,
                    })
                    .map_err(io_err)?;
                walkable_area += poly.area as f64;
                box_size_sum += (bx[2] - bx[0]).max(bx[3] - bx[1]) as f64;
                kept_polys += 1;
            }
        }
        drop(poly_rank);
        let f_verts = f_verts.finish().map_err(io_err)?;
        let f_polys = f_polys.finish().map_err(io_err)?;
        let f_pverts = f_pverts.finish().map_err(io_err)?;
        let f_neis = f_neis.finish().map_err(io_err)?;
        let f_tris = f_tris.finish().map_err(io_err)?;
        let f_detail = f_detail.finish().map_err(io_err)?;

        // 4. The grid: cells about twice the mean polygon size, at most about four per polygon.
        let mean = if kept_polys == 0 {
            1.0
        } else {
            box_size_sum / kept_polys as f64
        };
        let (ex, ey) = (
            (bounds_max[0] - bounds_min[0]).max(0.0),
            (bounds_max[1] - bounds_min[1]).max(0.0),
        );
        let mut cell = (2.0 * mean).max(1e-3) as f32;
        let limit = 4 * kept_polys + 16;
        loop {
            let w = (ex / cell).floor() as u64 + 1;
            let h = (ey / cell).floor() as u64 + 1;
            if w * h <= limit {
                break;
            }
            cell *= 1.5;
        }
        let width = (ex / cell).floor() as u32 + 1;
        let height = (ey / cell).floor() as u32 + 1;
        let cell_of =
            |v: f32, o: f32, n: u32| (((v - o) / cell).floor().max(0.0) as u32).min(n - 1);
        let mut items = Sorter::<[u32; 2]>::new(&dir, "grid", memory / 2);
        {
            let mut b_it = boxes.iter().map_err(io_err)?;
            let mut id = 0u32;
            for p in 0..np {
                let b = b_it.next_record().map_err(io_err)?.expect("counted");
                if !keep_poly.get(p as usize) {
                    continue;
                }
                let (x0, y0) = (
                    cell_of(b[0], bounds_min[0], width),
                    cell_of(b[1], bounds_min[1], height),
                );
                let (x1, y1) = (
                    cell_of(b[2], bounds_min[0], width),
                    cell_of(b[3], bounds_min[1], height),
                );
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        items.push([y * width + x, id]).map_err(io_err)?;
                    }
                }
                id += 1;
            }
        }
        let mut g_start = SpillWriter::<u32>::create(spill("grid_start")).map_err(io_err)?;
        let mut g_items = SpillWriter::<u32>::create(spill("grid_items")).map_err(io_err)?;
        {
            let cells = width as u64 * height as u64;
            let mut next_cell = 0u64;
            for rec in items.finish().map_err(io_err)? {
                let [c, p] = rec.map_err(io_err)?;
                while next_cell <= c as u64 {
                    g_start.push(&(g_items.len() as u32)).map_err(io_err)?;
                    next_cell += 1;
                }
                g_items.push(&p).map_err(io_err)?;
            }
            while next_cell <= cells {
                g_start.push(&(g_items.len() as u32)).map_err(io_err)?;
                next_cell += 1;
            }
        }
        let g_start = g_start.finish().map_err(io_err)?;
        let g_items = g_items.finish().map_err(io_err)?;

        let stats = Stats {
            regions: kept_regions,
            notches,
            by_notches,
            portals: (portal_sides / 2) as u32,
            links: out_links.len() as u32,
            walkable_area,
            polygons_removed: pruned_polys,
            islands_removed: if seeds.is_empty() { 0 } else { islands },
        };
        let mesh = NavMeshOut {
            frame,
            bounds_min,
            bounds_max,
            verts: Column(f_verts.clone()),
            polys: Column(f_polys.clone()),
            poly_verts: Column(f_pverts.clone()),
            poly_neis: Column(f_neis.clone()),
            detail_tris: Column(f_tris.clone()),
            detail_verts: Column(f_detail.clone()),
            links: out_links,
            grid: GridOut {
                min: [bounds_min[0], bounds_min[1]],
                cell,
                width,
                height,
                start: Column(g_start.clone()),
                items: Column(g_items.clone()),
            },
            stats: stats.clone(),
        };
        let bytes = write_file(&mesh, key, tile_cells, out)?;
        let assembled = Assembled {
            polygons: f_polys.len(),
            vertices: f_verts.len(),
            detail_vertices: f_detail.len(),
            bytes,
            stats,
            unplaced_seeds,
        };
        for s in [
            verts.path(),
            detail.path(),
            f_detail.path(),
            polys.path(),
            boxes.path(),
            poly_verts.path(),
            neis.path(),
            tris.path(),
            patches.path(),
        ]
        .into_iter()
        .chain([
            f_verts.path(),
            f_polys.path(),
            f_pverts.path(),
            f_neis.path(),
            f_tris.path(),
            g_start.path(),
            g_items.path(),
        ]) {
            let _ = std::fs::remove_file(s);
        }
        Ok(assembled)
    }
}

fn twice_area(verts: &[[i32; 3]], cycle: &[u32]) -> i64 {
    (0..cycle.len())
        .map(|k| {
            let a = verts[cycle[k] as usize];
            let b = verts[cycle[(k + 1) % cycle.len()] as usize];
            a[0] as i64 * b[1] as i64 - b[0] as i64 * a[1] as i64
        })
        .sum()
}

/// One bit per polygon.
#[derive(Clone)]
struct Bits {
    words: Vec<u64>,
    len: usize,
}

/// Ones before each 64-bit word, for ranks.
struct Ranks(Vec<u32>);

impl Ranks {
    fn rank(&self, bits: &Bits, i: usize) -> usize {
        let w = i / 64;
        let below = bits.words[w] & ((1u64 << (i % 64)) - 1);
        self.0[w] as usize + below.count_ones() as usize
    }
}

impl Bits {
    fn new(len: usize, value: bool) -> Bits {
        let mut words = vec![if value { u64::MAX } else { 0 }; len.div_ceil(64) + 1];
        if value {
            // Bits past the end stay clear, so counts are exact.
            for (w, word) in words.iter_mut().enumerate() {
                let lo = w * 64;
                if lo >= len {
                    *word = 0;
                } else if lo + 64 > len {
                    *word = (1u64 << (len - lo)) - 1;
                }
            }
        }
        Bits { words, len }
    }
    fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }
    fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }
    fn count(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }
    fn ranks(&self) -> Ranks {
        let mut acc = 0u32;
        Ranks(
            self.words
                .iter()
                .map(|w| {
                    let r = acc;
                    acc += w.count_ones();
                    r
                })
                .collect(),
        )
    }
}

/// A spill file memory-mapped read-only (clean pages the kernel can drop).
struct Mapped<T> {
    map: Option<memmap2::Mmap>,
    _t: std::marker::PhantomData<T>,
}

impl<T: Pod> Mapped<T> {
    fn open(spill: &Spill<T>) -> Result<Mapped<T>, BuildError> {
        if spill.is_empty() {
            return Ok(Mapped {
                map: None,
                _t: std::marker::PhantomData,
            });
        }
        let file = std::fs::File::open(spill.path()).map_err(io_err)?;
        // SAFETY: a scratch file of this bake, written and closed before, read-only here and
        // not written again while mapped.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
        Ok(Mapped {
            map: Some(map),
            _t: std::marker::PhantomData,
        })
    }
    fn get(&self) -> &[T] {
        match &self.map {
            Some(m) => bytemuck::cast_slice(&m[..]),
            None => &[],
        }
    }
}

/// The polygon graph read from the spill files (for reachability).
struct Graph<'a> {
    polys: Mapped<Poly>,
    neis: Mapped<u32>,
    patches: Mapped<[u32; 2]>,
    links: &'a [(u32, u32, [i32; 3], [i32; 3])],
}

impl<'a> Graph<'a> {
    fn map(
        polys: &Spill<Poly>,
        neis: &Spill<u32>,
        patches: &Spill<[u32; 2]>,
        links: &'a [(u32, u32, [i32; 3], [i32; 3])],
    ) -> Result<Graph<'a>, BuildError> {
        Ok(Graph {
            polys: Mapped::open(polys)?,
            neis: Mapped::open(neis)?,
            patches: Mapped::open(patches)?,
            links,
        })
    }

    fn flood(&self, starts: Vec<u32>, mark: &mut Bits) {
        let (polys, neis, patches) = (self.polys.get(), self.neis.get(), self.patches.get());
        let mut stack = Vec::new();
        for s in starts {
            if !mark.get(s as usize) {
                mark.set(s as usize);
                stack.push(s);
            }
        }
        let push = |q: u32, mark: &mut Bits, stack: &mut Vec<u32>| {
            if q != NONE && !mark.get(q as usize) {
                mark.set(q as usize);
                stack.push(q);
            }
        };
        while let Some(p) = stack.pop() {
            let poly = polys[p as usize];
            for e in poly.first..poly.first + poly.count {
                push(neis[e as usize], mark, &mut stack);
                let at = patches.partition_point(|x| x[0] < e);
                for x in patches[at..].iter().take_while(|x| x[0] == e) {
                    push(x[1], mark, &mut stack);
                }
            }
            let at = self.links.partition_point(|l| l.0 < p);
            for l in self.links[at..].iter().take_while(|l| l.0 == p) {
                push(l.1, mark, &mut stack);
            }
        }
    }
}

/// The polygon under a seed point (internal frame): one whose detail triangles hold the plan
/// point, with the surface within the agent's height, nearest in height.
fn polygon_under(
    frame: &Frame,
    polys: &[Poly],
    verts: &[[i32; 3]],
    detail: &[[f32; 3]],
    tris: &[[u32; 3]],
    p: [f32; 3],
) -> Option<u32> {
    let (cs, ch) = (frame.cell_size as f64, frame.cell_height as f64);
    let world = |v: [i32; 3]| {
        [
            (v[0] as f64 * cs) as f32,
            (v[1] as f64 * cs) as f32,
            (v[2] as f64 * ch) as f32,
        ]
    };
    let mut best: Option<(f32, u32)> = None;
    for (i, poly) in polys.iter().enumerate() {
        for t in &tris[poly.tri_first as usize..(poly.tri_first + poly.tri_count) as usize] {
            let [a, b, c] = t.map(|v| {
                if v & DETAIL != 0 {
                    detail[(v & !DETAIL) as usize]
                } else {
                    world(verts[v as usize])
                }
            });
            let d = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
            if d == 0.0 {
                continue;
            }
            let u = ((b[0] - p[0]) * (c[1] - p[1]) - (b[1] - p[1]) * (c[0] - p[0])) / d;
            let v = ((c[0] - p[0]) * (a[1] - p[1]) - (c[1] - p[1]) * (a[0] - p[0])) / d;
            let w = 1.0 - u - v;
            if u < -1e-5 || v < -1e-5 || w < -1e-5 {
                continue;
            }
            let dz = (u * a[2] + v * b[2] + w * c[2] - p[2]).abs();
            if dz <= frame.agent_height && best.is_none_or(|(bd, _)| dz < bd) {
                best = Some((dz, i as u32));
            }
        }
    }
    best.map(|(_, i)| i)
}

/// A vector archived from a spill file: the records are copied into the archive as they are
/// (their archived form has the same bytes on a little-endian machine).
struct Column<T>(Spill<T>);

#[cfg(not(target_endian = "little"))]
compile_error!("the navmesh writer copies records as they are: little-endian machines only");

impl<T: Archive + Pod> Archive for Column<T> {
    type Archived = ArchivedVec<T::Archived>;
    type Resolver = VecResolver;

    fn resolve(&self, resolver: VecResolver, out: Place<Self::Archived>) {
        ArchivedVec::resolve_from_len(self.0.len() as usize, resolver, out);
    }
}

impl<T, S> Serialize<S> for Column<T>
where
    T: Archive + Pod,
    S: rancor::Fallible + Writer + ?Sized,
    S::Error: Source,
{
    fn serialize(&self, s: &mut S) -> Result<VecResolver, S::Error> {
        assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<T::Archived>());
        let pos = s.align_for::<T::Archived>()?;
        let mut failed: Option<S::Error> = None;
        let res = self.0.for_each_chunk(1 << 14, |chunk| {
            if let Err(e) = s.write(bytemuck::cast_slice(chunk)) {
                failed = Some(e);
                return Err(io::Error::other("archive write failed"));
            }
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        res.map_err(S::Error::new)?;
        Ok(VecResolver::from_pos(pos))
    }
}

/// [`crate::Grid`] with its tables in spill files.
#[derive(Archive, Serialize)]
struct GridOut {
    min: [f32; 2],
    cell: f32,
    width: u32,
    height: u32,
    start: Column<u32>,
    items: Column<u32>,
}

/// [`crate::NavMesh`] with its arrays in spill files: field for field the same archive.
#[derive(Archive, Serialize)]
struct NavMeshOut {
    frame: Frame,
    bounds_min: [f32; 3],
    bounds_max: [f32; 3],
    verts: Column<[f32; 3]>,
    polys: Column<Poly>,
    poly_verts: Column<u32>,
    poly_neis: Column<u32>,
    detail_tris: Column<[u32; 3]>,
    detail_verts: Column<[f32; 3]>,
    links: Vec<Link>,
    grid: GridOut,
    stats: Stats,
}

/// Hashes what passes through.
struct Hashing<'w, W> {
    inner: &'w mut W,
    hash: xxhash_rust::xxh3::Xxh3,
    len: u64,
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn write_file<W: Write + Seek>(
    mesh: &NavMeshOut,
    key: u64,
    tile_cells: u32,
    out: &mut W,
) -> Result<u64, BuildError> {
    out.write_all(&[0u8; HEADER_LEN]).map_err(io_err)?;
    let mut hashing = Hashing {
        inner: out,
        hash: xxhash_rust::xxh3::Xxh3::new(),
        len: 0,
    };
    let writer = rkyv::ser::writer::IoWriter::new(&mut hashing);
    rkyv::api::high::to_bytes_in::<_, rancor::Error>(mesh, writer)
        .map_err(|e| BuildError::Io(e.to_string()))?;
    let (len, digest) = (hashing.len, hashing.hash.digest());
    let header = crate::header(len, digest, key, tile_cells);
    out.seek(SeekFrom::Start(0)).map_err(io_err)?;
    out.write_all(&header).map_err(io_err)?;
    out.seek(SeekFrom::End(0)).map_err(io_err)?;
    Ok(HEADER_LEN as u64 + len)
}
