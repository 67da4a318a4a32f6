//! Merged regions to convex polygons (seed 000, section 5.1): the input of the navmesh file.
//!
//! 1. Contours are grouped by merged region (ordered by region id, so the result does not
//!    depend on the tiling).
//! 2. [`simplify`] cuts every contour at the points where what lies across it changes and
//!    simplifies the shared sections once (Ramer-Douglas-Peucker, `max_error` in world units;
//!    0 keeps every vertex), then repairs crossings and collapses: neighbouring regions keep
//!    identical borders, so their polygons meet edge to edge with no T-junction.
//! 3. [`partition`] triangulates each region (outer contour and holes, constrained Delaunay)
//!    and cuts it into convex polygons: ANavMG (seed 002; portals end at vertices or at new
//!    grid points on walls, edges with nothing walkable across) or Hertel-Mehlhorn.
//!
//! Vertices stay on the voxel grid (integer corner points); heights come from the contours
//! (each region's own floor at each corner; a point added on a wall gets the wall's end
//! heights interpolated).
//!
//! Pure: no I/O. Regions are processed in parallel and collected in order.

pub mod detail;
mod partition;
mod simplify;

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use tessera_artifacts::{
    Contour, InputPoly, MeshInput, NotchGroups, Point, RegionBatch, SpanKey, TileCoord, DETAIL,
    NO_NEIGHBOUR, OUT_OF_REACH,
};

pub use partition::{anavmg, hertel_mehlhorn, triangulate, RegionPolygons};

/// The convex partition to use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Partition {
    /// Seed 002 with relaxation `tau` [radians], with or without the removal of portals
    /// that became unnecessary.
    Anavmg {
        tau: f64,
        removal: bool,
    },
    HertelMehlhorn,
}

/// A merged region and its contours (outer first, then holes, each group by smallest point).
#[derive(Clone, Debug)]
pub struct RegionContours {
    pub id: SpanKey,
    pub contours: Vec<Contour>,
}

/// What polygonization counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolygonStats {
    pub regions: u64,
    pub polygons: u64,
    pub triangles: u64,
    /// Reflex vertices of the simplified contours (seed 002's notches).
    pub notches: u64,
    /// Regions, polygons and notches by how many notches a region has.
    pub by_notches: NotchGroups,
    /// Contour vertices before and after simplification.
    pub contour_vertices: u64,
    pub simplified_vertices: u64,
    /// Vertices put back to undo a crossing or a collapse.
    pub restored_vertices: u64,
    /// Regions where ANavMG gave up and Hertel-Mehlhorn was used.
    pub partition_fallbacks: u64,
    /// Points added for height detail.
    pub detail_points: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum PolygonError {
    #[error("region at cell ({x}, {y}), height {z}: {detail}")]
    Region {
        x: i32,
        y: i32,
        z: u32,
        detail: String,
    },
    #[error("contour of tile ({tx}, {ty}) local region {local} belongs to no merged region")]
    Orphan { tx: u32, ty: u32, local: u32 },
    #[error("{0}")]
    Source(String),
}

impl RegionContours {
    /// A region from its contours, in any order: each contour rotated to its canonical start,
    /// outer contours first, then by smallest point (the same for every tiling).
    pub fn new(id: SpanKey, contours: Vec<Contour>) -> RegionContours {
        let mut r = RegionContours { id, contours };
        r.order();
        r
    }

    fn order(&mut self) {
        for c in &mut self.contours {
            c.make_canonical();
        }
        self.contours.sort_by_key(|c| {
            (
                !c.is_outer(),
                c.points.iter().min().copied().unwrap_or((0, 0)),
            )
        });
    }
}

/// Groups the contours of region batches by merged region, ordered by region id.
pub fn group_regions(
    batches: impl IntoIterator<Item = RegionBatch>,
) -> Result<Vec<RegionContours>, PolygonError> {
    let mut regions = Vec::new();
    let mut contours = Vec::new();
    for b in batches {
        regions.extend(b.regions);
        contours.extend(b.contours);
    }
    regions.sort_by_key(|r| r.id);
    let mut owner: HashMap<(TileCoord, u32), usize> = HashMap::default();
    for (i, r) in regions.iter().enumerate() {
        for &m in &r.members {
            owner.insert(m, i);
        }
    }
    let mut out: Vec<RegionContours> = regions
        .iter()
        .map(|r| RegionContours {
            id: r.id,
            contours: Vec::new(),
        })
        .collect();
    for c in contours {
        let Some(&i) = owner.get(&(c.tile, c.region)) else {
            return Err(PolygonError::Orphan {
                tx: c.tile.x,
                ty: c.tile.y,
                local: c.region,
            });
        };
        out[i].contours.push(c);
    }
    for r in &mut out {
        r.order();
    }
    out.retain(|r| !r.contours.is_empty());
    Ok(out)
}

/// Settings, in grid units.
#[derive(Clone, Copy, Debug)]
pub struct PolygonParams {
    pub partition: Partition,
    /// Simplification tolerance [cells]; 0 keeps every contour vertex.
    pub max_error: f64,
    /// Voxels: portals join edges whose heights differ by at most this (see
    /// [`MeshInput::climb`]).
    pub portal_climb: u32,
    /// Height detail (seed 004); used when the heightfield is given.
    pub detail: detail::DetailParams,
}

/// One region's polygons: vertices on the grid (`x`, `y` corner points, `z` voxel height),
/// polygons over them (local indices; `region` is 0), and what was counted.
#[derive(Clone, Debug, Default)]
pub struct RegionOutput {
    pub verts: Vec<[i32; 3]>,
    /// Points added for height detail (plan in cells, height in voxels); polygon triangles name
    /// them with the [`DETAIL`] bit.
    pub detail: Vec<[f32; 3]>,
    pub polys: Vec<InputPoly>,
    pub notches: u64,
    pub contour_vertices: u64,
    pub simplified_vertices: u64,
    pub fell_back: bool,
}

/// Where the regions come from: windows of consecutive regions, in region order, as many
/// times as asked (simplification makes a few passes; the last one polygonizes).
pub trait RegionSource {
    fn for_each_window(
        &mut self,
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError>;
}

impl RegionSource for &[RegionContours] {
    fn for_each_window(
        &mut self,
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        f(self)
    }
}

/// Polygonizes every region of `source`, handing each region's polygons to `sink` in region
/// order. Regions of a window are worked on in parallel (rayon); memory is what a window and
/// its polygons take, plus the table of restored points.
/// With `height` (the heightfield, see [`detail::HeightAt`]) polygons get height detail.
pub fn polygonize_stream(
    source: &mut dyn RegionSource,
    params: PolygonParams,
    height: Option<&detail::HeightAt>,
    sink: &mut dyn FnMut(RegionOutput) -> Result<(), PolygonError>,
) -> Result<PolygonStats, PolygonError> {
    // Rounds of simplify-and-check over every region until no region asks for a point back.
    let mut restored = simplify::Restored::default();
    let mut stats = PolygonStats::default();
    if params.max_error > 0.0 {
        loop {
            let mut asked: Vec<(u128, u32)> = Vec::new();
            source.for_each_window(&mut |window| {
                let fixes: Vec<Vec<(u128, u32)>> = window
                    .par_iter()
                    .map(|region| {
                        let (mut sections, contours) = simplify::sections_of(region);
                        simplify::simplify(&mut sections, params.max_error, &restored);
                        let outer: Vec<bool> =
                            region.contours.iter().map(|c| c.is_outer()).collect();
                        simplify::repairs(&sections, &contours, &outer)
                    })
                    .collect();
                asked.extend(fixes.into_iter().flatten());
                Ok(())
            })?;
            asked.sort_unstable();
            asked.dedup();
            let mut grew = false;
            for (name, k) in asked {
                let list = restored.entry(name).or_default();
                if let Err(at) = list.binary_search(&k) {
                    list.insert(at, k);
                    stats.restored_vertices += 1;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
    }
    // The polygons, with the final table.
    source.for_each_window(&mut |window| {
        let results: Vec<Result<RegionOutput, PolygonError>> = window
            .par_iter()
            .map(|region| polygonize_region(region, params, &restored))
            .collect();
        let mut outs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
        if let Some(height) = height.filter(|_| params.detail.is_on()) {
            add_detail(&mut outs, &params.detail, height);
        }
        for out in outs {
            stats.regions += 1;
            stats.polygons += out.polys.len() as u64;
            stats.triangles += out.polys.iter().map(|p| p.tris.len() as u64).sum::<u64>();
            stats.notches += out.notches;
            stats.by_notches.add(out.notches, out.polys.len() as u64);
            stats.contour_vertices += out.contour_vertices;
            stats.simplified_vertices += out.simplified_vertices;
            stats.partition_fallbacks += u64::from(out.fell_back);
            stats.detail_points += out.detail.len() as u64;
            sink(out)?;
        }
        Ok(())
    })?;
    Ok(stats)
}

/// Height detail for a window's polygons, worked through in plan order by blocks of
/// `locality` cells (the heightfield is read a tile at a time; regions can be long) and
/// attached to each region in polygon order.
fn add_detail(outs: &mut [RegionOutput], params: &detail::DetailParams, height: &detail::HeightAt) {
    let block = params.locality.max(1) as i32;
    let mut work: Vec<(i32, i32, u32, u32)> = Vec::new();
    for (r, out) in outs.iter().enumerate() {
        for (p, poly) in out.polys.iter().enumerate() {
            let v = out.verts[poly.verts[0] as usize];
            work.push((
                v[1].div_euclid(block),
                v[0].div_euclid(block),
                r as u32,
                p as u32,
            ));
        }
    }
    work.sort_unstable();
    let details: Vec<Option<detail::Detail>> = work
        .par_iter()
        .map(|&(_, _, r, p)| {
            let out = &outs[r as usize];
            let corners: Vec<[f64; 3]> = out.polys[p as usize]
                .verts
                .iter()
                .map(|&v| out.verts[v as usize].map(|c| c as f64))
                .collect();
            detail::detail(&corners, params, height)
        })
        .collect();
    let mut by_poly: Vec<((u32, u32), detail::Detail)> = work
        .iter()
        .zip(details)
        .filter_map(|(&(_, _, r, p), d)| d.map(|d| ((r, p), d)))
        .collect();
    by_poly.sort_unstable_by_key(|(k, _)| *k);
    for ((r, p), d) in by_poly {
        let out = &mut outs[r as usize];
        let base = out.detail.len() as u32;
        out.detail
            .extend(d.points.iter().map(|q| q.map(|c| c as f32)));
        let poly = &mut out.polys[p as usize];
        let n = poly.verts.len() as u32;
        poly.tris = d
            .tris
            .iter()
            .map(|t| {
                t.map(|i| {
                    if i < n {
                        poly.verts[i as usize]
                    } else {
                        DETAIL | (base + i - n)
                    }
                })
            })
            .collect();
    }
}

/// One region's polygons, its sections simplified with the final table of restored points.
fn polygonize_region(
    region: &RegionContours,
    params: PolygonParams,
    restored: &simplify::Restored,
) -> Result<RegionOutput, PolygonError> {
    let (mut sections, parts) = simplify::sections_of(region);
    simplify::simplify(&mut sections, params.max_error, restored);
    // Each point's height in this region (a pinch point has one height).
    let mut height: HashMap<Point, u32> = HashMap::default();
    for c in &region.contours {
        for (p, h) in c.points.iter().zip(&c.heights) {
            height.insert(*p, *h);
        }
    }
    let mut simplified: Vec<Vec<Point>> = Vec::with_capacity(parts.len());
    // Boundary edges no agent may cross: nothing or an out-of-reach floor across.
    let mut blocked: HashMap<(Point, Point), bool> = HashMap::default();
    // Walls: nothing walkable across, no other region's polygon along them; the partition
    // may add vertices there.
    let mut walls: rustc_hash::FxHashSet<(Point, Point)> = Default::default();
    for cs in &parts {
        let mut pts: Vec<Point> = Vec::new();
        for (&(s, reversed), &across) in cs.parts.iter().zip(&cs.across) {
            let closed = across == NO_NEIGHBOUR || across & OUT_OF_REACH != 0;
            let sec = &sections[s as usize];
            let mut kept: Vec<Point> = (0..sec.points.len())
                .filter(|&k| sec.keep[k])
                .map(|k| sec.points[k])
                .collect();
            if reversed {
                kept.reverse();
            }
            for w in kept.windows(2) {
                blocked.insert((w[0], w[1]), closed);
                if across == NO_NEIGHBOUR {
                    walls.insert((w[0], w[1]));
                }
            }
            kept.pop(); // the next part starts there
            pts.extend(kept);
        }
        simplified.push(pts);
    }
    drop(sections);
    let notches = partition::notches(&simplified);
    let kept = simplified.iter().map(|c| c.len() as u64).sum();
    let (verts, tris) = triangulate(&simplified).map_err(|detail| PolygonError::Region {
        x: region.id.x,
        y: region.id.y,
        z: region.id.zmax,
        detail,
    })?;
    let (polys, fell_back) = match params.partition {
        Partition::Anavmg { tau, removal } => partition::anavmg_with(
            verts,
            tris,
            &|a, b| walls.contains(&(a, b)),
            tau,
            &partition::Settings {
                removal,
                ..Default::default()
            },
        ),
        Partition::HertelMehlhorn => (hertel_mehlhorn(verts, tris), false),
    };
    on_walls(&polys, &mut height, &mut blocked);
    let out_verts = polys
        .verts
        .iter()
        .map(|p| [p.0, p.1, height[p] as i32])
        .collect();
    let out_polys = polys
        .polys
        .iter()
        .zip(polys.tris)
        .map(|(cycle, tris)| {
            let n = cycle.len();
            InputPoly {
                blocked: (0..n)
                    .map(|k| {
                        let a = polys.verts[cycle[k] as usize];
                        let b = polys.verts[cycle[(k + 1) % n] as usize];
                        blocked.get(&(a, b)).copied().unwrap_or(false)
                    })
                    .collect(),
                verts: cycle.clone(),
                region: 0,
                tris,
            }
        })
        .collect();
    Ok(RegionOutput {
        verts: out_verts,
        detail: Vec::new(),
        polys: out_polys,
        notches,
        contour_vertices: region.contours.iter().map(|c| c.points.len() as u64).sum(),
        simplified_vertices: kept,
        fell_back,
    })
}

/// Heights for the vertices the partition added on walls (the wall's end heights
/// interpolated, rounded to the voxel), and the wall pieces between them marked blocked.
fn on_walls(
    polys: &RegionPolygons,
    height: &mut HashMap<Point, u32>,
    blocked: &mut HashMap<(Point, Point), bool>,
) {
    let mut by_wall: std::collections::BTreeMap<(Point, Point), Vec<(i64, Point)>> =
        Default::default();
    for &(v, a, b) in &polys.on_walls {
        let q = polys.verts[v as usize];
        let along = |p: Point| {
            (p.0 - a.0) as i64 * (b.0 - a.0) as i64 + (p.1 - a.1) as i64 * (b.1 - a.1) as i64
        };
        let (ha, hb) = (height[&a] as i64, height[&b] as i64);
        let (num, den) = ((hb - ha) * along(q), along(b));
        // Rounded to the nearest voxel, halves away from zero.
        let step = (2 * num + num.signum() * den) / (2 * den);
        height.insert(q, (ha + step) as u32);
        by_wall.entry((a, b)).or_default().push((along(q), q));
    }
    for ((a, b), mut points) in by_wall {
        points.sort_unstable();
        let chain: Vec<Point> = std::iter::once(a)
            .chain(points.into_iter().map(|(_, q)| q))
            .chain(std::iter::once(b))
            .collect();
        for w in chain.windows(2) {
            blocked.insert((w[0], w[1]), true);
        }
    }
}

/// Polygons of every region in memory, ready for `tessera_navgraph::build` (tests and
/// tools; bakes stream through [`polygonize_stream`]).
pub fn polygonize(
    regions: &[RegionContours],
    params: PolygonParams,
) -> Result<(MeshInput, PolygonStats), PolygonError> {
    let mut input = MeshInput {
        regions: regions.len() as u32,
        climb: params.portal_climb,
        ..Default::default()
    };
    let mut region = 0u32;
    let stats = polygonize_stream(&mut { regions }, params, None, &mut |out| {
        let base = input.verts.len() as u32;
        let detail_base = input.detail_verts.len() as u32;
        input.verts.extend(out.verts);
        input.detail_verts.extend(out.detail);
        for mut p in out.polys {
            p.verts.iter_mut().for_each(|v| *v += base);
            p.tris.iter_mut().for_each(|t| {
                t.iter_mut().for_each(|v| {
                    *v = if *v & DETAIL != 0 {
                        *v + detail_base
                    } else {
                        *v + base
                    }
                })
            });
            p.region = region;
            input.polys.push(p);
        }
        region += 1;
        Ok(())
    })?;
    input.notches = stats.notches;
    input.by_notches = stats.by_notches.clone();
    Ok((input, stats))
}

#[cfg(test)]
mod tests;
