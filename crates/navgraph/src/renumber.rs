//! Pass 4: the arrays of the file, written to spill files in their final order: what
//! reachability kept, renumbered densely (polygons, vertices, detail points, regions), in
//! world units; with the bounds, the walkable area and the polygon sizes the grid needs.
//!
//! A region is kept whole (its vertices and detail points) when one of its polygons is kept;
//! inside it, polygons are kept one by one.

use std::path::Path;

use tessera_artifacts::DETAIL;
use tessera_navmesh::{Frame, Link, OffMeshLink, Poly, NONE};
use tessera_spill::{Spill, SpillWriter};

use crate::assemble::{say, tick, tick_record, to_world, RegionStart, Report, Spilled, Step};
use crate::links::GridLink;
use crate::offmesh::decode;
use crate::reach::{Bits, Ranks};
use crate::BuildError;

/// Old numbers to new ones, once reachability has decided what is kept.
pub(crate) struct Renumbering<'a> {
    regions: &'a [RegionStart],
    keep_poly: &'a Bits,
    ranks: Ranks,
    /// Per region (not the sentinel): whether any of its polygons is kept.
    pub keep_region: Vec<bool>,
    /// Per region and the sentinel: where its kept data starts in the new numbering.
    new_start: Vec<RegionStart>,
    /// Per region: its new number (the count of kept regions before it).
    new_region: Vec<u32>,
    /// Regions kept.
    pub kept_regions: u32,
}

impl<'a> Renumbering<'a> {
    /// `regions` ends with the sentinel; `keep_poly` has one bit per polygon.
    pub fn new(regions: &'a [RegionStart], keep_poly: &'a Bits) -> Renumbering<'a> {
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
        Renumbering {
            regions,
            keep_poly,
            ranks: keep_poly.ranks(),
            keep_region,
            new_start,
            new_region,
            kept_regions,
        }
    }

    /// Whether polygon `p` is kept.
    pub fn keeps(&self, p: u32) -> bool {
        self.keep_poly.get(p as usize)
    }

    /// The new number of kept polygon `p`.
    pub fn poly(&self, p: u32) -> u32 {
        self.ranks.rank(self.keep_poly, p as usize) as u32
    }

    /// The new number of a vertex of a kept region, or with the [`DETAIL`] bit of a detail
    /// point (the bit kept).
    pub fn vert(&self, v: u32) -> u32 {
        let regions = self.regions;
        if v & DETAIL != 0 {
            // The owner is the last region starting at or before it (regions without
            // detail points before it share its start).
            let d = v & !DETAIL;
            let r = regions.partition_point(|s| s.detail <= d) - 1;
            return DETAIL | (d - regions[r].detail + self.new_start[r].detail);
        }
        let r = regions.partition_point(|s| s.vert <= v) - 1;
        v - regions[r].vert + self.new_start[r].vert
    }

    /// [`Renumbering::vert`] of a vertex or detail point that is most likely region `r`'s
    /// (a polygon's own): no search when it is.
    #[inline]
    pub fn vert_of_region(&self, r: usize, v: u32) -> u32 {
        let (here, next) = (&self.regions[r], &self.regions[r + 1]);
        if v & DETAIL != 0 {
            let d = v & !DETAIL;
            if here.detail <= d && d < next.detail {
                return DETAIL | (d - here.detail + self.new_start[r].detail);
            }
        } else if here.vert <= v && v < next.vert {
            return v - here.vert + self.new_start[r].vert;
        }
        self.vert(v)
    }
}

/// The links between kept polygons, renumbered, sorted by source polygon, in world units;
/// an off-mesh link's ends and cost from its entry in `off_mesh`.
pub(crate) fn renumber_links(
    mut links: Vec<GridLink>,
    numbering: &Renumbering,
    frame: &Frame,
    off_mesh: &[OffMeshLink],
) -> Vec<Link> {
    links.retain(|l| numbering.keeps(l.0) && numbering.keeps(l.1));
    for l in &mut links {
        l.0 = numbering.poly(l.0);
        l.1 = numbering.poly(l.1);
    }
    links.sort_by_key(|l| (l.0, l.1, l.2, l.3, l.4));
    links
        .iter()
        .map(|l| match decode(l.4) {
            None => Link::stair(l.0, l.1, to_world(frame, l.2), to_world(frame, l.3)),
            Some((k, reversed)) => {
                let o = &off_mesh[k];
                let (a, b) = if reversed {
                    (o.to, o.from)
                } else {
                    (o.from, o.to)
                };
                Link {
                    from: l.0,
                    to: l.1,
                    a,
                    b,
                    off_mesh: k as u32,
                    cost: o.cost,
                }
            }
        })
        .collect()
}

/// The kept arrays and what was measured while writing them.
pub(crate) struct Kept {
    pub verts: Spill<[f32; 3]>,
    pub detail: Spill<[f32; 3]>,
    pub polys: Spill<Poly>,
    pub poly_verts: Spill<u32>,
    pub neis: Spill<u32>,
    pub tris: Spill<[u32; 3]>,
    /// Bounds of the kept vertices (zero when there are none).
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    pub regions: u32,
    pub polygons: u64,
    pub walkable_area: f64,
    /// Sum over kept polygons of their plan box's longer side.
    pub box_size_sum: f64,
    /// Portal sides kept (each portal is seen from both of its polygons).
    pub portal_sides: u64,
}

impl Kept {
    pub fn paths(&self) -> [&Path; 6] {
        [
            self.verts.path(),
            self.detail.path(),
            self.polys.path(),
            self.poly_verts.path(),
            self.neis.path(),
            self.tris.path(),
        ]
    }
}

/// Pass 4 (see the module documentation). `patches` are the border portals by edge; `links`
/// the renumbered links, by source polygon (each kept polygon gets its range of them).
pub(crate) fn write_kept_arrays(
    input: &Spilled,
    patches: &Spill<[u32; 2]>,
    numbering: &Renumbering,
    links: &[Link],
    component: &[u32],
    threads: usize,
    report: &mut Report,
) -> Result<Kept, BuildError> {
    let regions = &input.regions;
    let keep_region = &numbering.keep_region;
    // The kept vertices (in world units, with their bounds) and detail points.
    let points = |report: &mut Report| -> Result<_, BuildError> {
        let mut f_verts = SpillWriter::<[f32; 3]>::create(input.scratch("verts"))?;
        let mut bounds_min = [f32::INFINITY; 3];
        let mut bounds_max = [f32::NEG_INFINITY; 3];
        let mut copied = 0;
        let mut v_it = input.verts.iter()?;
        for r in 0..regions.len() - 1 {
            for _ in regions[r].vert..regions[r + 1].vert {
                tick_record(report, &mut copied, Some(0))?;
                let v = v_it.next_record()?.expect("counted");
                if keep_region[r] {
                    let w = to_world(&input.frame, v);
                    for k in 0..3 {
                        bounds_min[k] = bounds_min[k].min(w[k]);
                        bounds_max[k] = bounds_max[k].max(w[k]);
                    }
                    f_verts.push(&w)?;
                }
            }
        }
        if f_verts.is_empty() {
            bounds_min = [0.0; 3];
            bounds_max = [0.0; 3];
        }
        let mut f_detail = SpillWriter::<[f32; 3]>::create(input.scratch("detail"))?;
        let mut d_it = input.detail.iter()?;
        for r in 0..regions.len() - 1 {
            for _ in regions[r].detail..regions[r + 1].detail {
                tick_record(report, &mut copied, Some(0))?;
                let d = d_it.next_record()?.expect("counted");
                if keep_region[r] {
                    f_detail.push(&d)?;
                }
            }
        }
        Ok((
            f_verts.finish()?,
            f_detail.finish()?,
            bounds_min,
            bounds_max,
        ))
    };
    // With a second thread, the points are copied beside the polygons' sweep.
    let ((verts, detail, bounds_min, bounds_max), swept) =
        crate::assemble::side_by_side(threads, report, points, |report| {
            polygons(input, patches, numbering, links, component, report)
        })?;
    Ok(Kept {
        verts,
        detail,
        polys: swept.polys,
        poly_verts: swept.poly_verts,
        neis: swept.neis,
        tris: swept.tris,
        bounds_min,
        bounds_max,
        regions: numbering.kept_regions,
        polygons: swept.polygons,
        walkable_area: swept.walkable_area,
        box_size_sum: swept.box_size_sum,
        portal_sides: swept.portal_sides,
    })
}

/// What the polygons' sweep wrote and counted.
struct Swept {
    polys: Spill<Poly>,
    poly_verts: Spill<u32>,
    neis: Spill<u32>,
    tris: Spill<[u32; 3]>,
    polygons: u64,
    walkable_area: f64,
    box_size_sum: f64,
    portal_sides: u64,
}

/// The polygons' sweep of [`write_kept_arrays`]: the kept polygons, their vertex indices,
/// neighbours and detail triangles renumbered (the points are copied apart).
fn polygons(
    input: &Spilled,
    patches: &Spill<[u32; 2]>,
    numbering: &Renumbering,
    links: &[Link],
    component: &[u32],
    report: &mut Report,
) -> Result<Swept, BuildError> {
    let regions = &input.regions;
    let mut f_polys = SpillWriter::<Poly>::create(input.scratch("polys"))?;
    let mut f_pverts = SpillWriter::<u32>::create(input.scratch("poly_verts"))?;
    let mut f_neis = SpillWriter::<u32>::create(input.scratch("neis"))?;
    let mut f_tris = SpillWriter::<[u32; 3]>::create(input.scratch("tris"))?;
    let mut walkable_area = 0.0f64;
    let mut box_size_sum = 0.0f64;
    let mut kept_polys = 0u64;
    let mut portal_sides = 0u64;
    {
        let mut p_it = input.polys.iter()?;
        let mut b_it = input.boxes.iter()?;
        let mut v_it = input.poly_verts.iter()?;
        let mut n_it = input.neis.iter()?;
        let mut t_it = input.tris.iter()?;
        let mut patch_it = patches.iter()?;
        let mut patch = patch_it.next_record()?;
        let mut link_at = 0usize;
        // The region of polygon p (regions hold consecutive polygons).
        let mut r = 0usize;
        for p in 0..input.polygons() {
            tick(report, p)?;
            while regions[r + 1].poly <= p {
                r += 1;
            }
            let poly = p_it.next_record()?.expect("counted");
            let bx = b_it.next_record()?.expect("counted");
            let keep = numbering.keeps(p);
            let new_first = f_pverts.len() as u32;
            for k in 0..poly.count {
                let e = poly.first + k;
                let v = v_it.next_record()?.expect("counted");
                let mut n = n_it.next_record()?.expect("counted");
                while let Some([pe, q]) = patch {
                    if pe > e {
                        break;
                    }
                    if pe == e {
                        n = q;
                    }
                    patch = patch_it.next_record()?;
                }
                if keep {
                    f_pverts.push(&numbering.vert_of_region(r, v))?;
                    let n = if n == NONE { NONE } else { numbering.poly(n) };
                    portal_sides += u64::from(n != NONE);
                    f_neis.push(&n)?;
                }
            }
            let new_tri = f_tris.len() as u32;
            for _ in 0..poly.tri_count {
                let t = t_it.next_record()?.expect("counted");
                if keep {
                    f_tris.push(&t.map(|v| numbering.vert_of_region(r, v)))?;
                }
            }
            if !keep {
                continue;
            }
            let id = kept_polys as u32;
            let link_first = link_at as u32;
            while link_at < links.len() && links[link_at].from == id {
                link_at += 1;
            }
            let link_count = link_at as u32 - link_first;
            f_polys.push(&Poly {
                first: new_first,
                count: poly.count,
                tri_first: new_tri,
                tri_count: poly.tri_count,
                link_first: if link_count == 0 { 0 } else { link_first },
                link_count,
                region: numbering.new_region[r],
                area: poly.area,
                component: component[p as usize],
                area_id: poly.area_id,
            })?;
            walkable_area += poly.area as f64;
            box_size_sum += (bx[2] - bx[0]).max(bx[3] - bx[1]) as f64;
            kept_polys += 1;
        }
        say(report, Step::Done(u64::from(input.polygons())))?;
    }
    Ok(Swept {
        polys: f_polys.finish()?,
        poly_verts: f_pverts.finish()?,
        neis: f_neis.finish()?,
        tris: f_tris.finish()?,
        polygons: kept_polys,
        walkable_area,
        box_size_sum,
        portal_sides,
    })
}
