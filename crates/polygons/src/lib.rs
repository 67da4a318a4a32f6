//! Merged regions to convex polygons (seed 000, section 5.1): the input of the navmesh file.
//!
//! 1. Contours are grouped by merged region (ordered by region id, so the result does not
//!    depend on the tiling).
//! 2. [`simplify`] cuts every contour at the points where what lies across it changes and
//!    simplifies the shared sections once (Ramer-Douglas-Peucker, `max_error` in world units;
//!    0 keeps every vertex), then repairs crossings and collapses: neighbouring regions keep
//!    identical borders, so their polygons meet edge to edge with no T-junction.
//! 3. [`partition`] triangulates each region (outer contour and holes, constrained Delaunay)
//!    and merges triangles into convex polygons (Hertel-Mehlhorn).
//!
//! Vertices stay on the voxel grid (integer corner points); heights come from the contours
//! (each region's own floor at each corner).
//!
//! Pure: no I/O. Regions are processed in parallel and collected in order.

mod partition;
mod simplify;

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use tessera_artifacts::{
    Contour, Point, RegionBatch, SpanKey, TileCoord, NO_NEIGHBOUR, OUT_OF_REACH,
};
use tessera_navmesh::{InputPoly, MeshInput};

pub use partition::{anavmg, hertel_mehlhorn, triangulate, RegionPolygons};

/// The convex partition to use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Partition {
    /// Seed 002 with relaxation `tau` [radians].
    Anavmg {
        tau: f64,
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
    /// Contour vertices before and after simplification.
    pub contour_vertices: u64,
    pub simplified_vertices: u64,
    /// Vertices put back to undo a crossing or a collapse.
    pub restored_vertices: u64,
    /// Regions where ANavMG gave up and Hertel-Mehlhorn was used.
    pub partition_fallbacks: u64,
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
        for c in &mut r.contours {
            c.make_canonical();
        }
        // Outer contours first; then by smallest point: the same for every tiling.
        r.contours.sort_by_key(|c| {
            (
                !c.is_outer(),
                c.points.iter().min().copied().unwrap_or((0, 0)),
            )
        });
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
}

/// Polygons of every region, ready for [`tessera_navmesh::build`].
pub fn polygonize(
    regions: &[RegionContours],
    params: PolygonParams,
) -> Result<(MeshInput, PolygonStats), PolygonError> {
    let outer: Vec<Vec<bool>> = regions
        .iter()
        .map(|r| r.contours.iter().map(|c| c.is_outer()).collect())
        .collect();
    let (mut sections, parts) = simplify::sections_of(regions);
    let restored = simplify::simplify_all(&mut sections, &parts, &outer, params.max_error);

    // Per region: its vertices (grid x, y and height), its polygons over them, notches and
    // simplified vertices. Maps used on the way are dropped before the region is collected.
    type Done = (Vec<[i32; 3]>, Vec<InputPoly>, u64, u64, bool);
    let results: Vec<Result<Done, PolygonError>> = regions
        .par_iter()
        .zip(parts.par_iter())
        .map(|(region, parts)| {
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
            for cs in parts {
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
                    }
                    kept.pop(); // the next part starts there
                    pts.extend(kept);
                }
                simplified.push(pts);
            }
            let notches = simplified
                .iter()
                .map(|c| {
                    let n = c.len();
                    (0..n)
                        .filter(|&k| {
                            partition::orient(c[(k + n - 1) % n], c[k], c[(k + 1) % n]) < 0
                        })
                        .count() as u64
                })
                .sum();
            let kept = simplified.iter().map(|c| c.len() as u64).sum();
            let (verts, tris) =
                triangulate(&simplified).map_err(|detail| PolygonError::Region {
                    x: region.id.x,
                    y: region.id.y,
                    z: region.id.zmax,
                    detail,
                })?;
            let (polys, fell_back) = match params.partition {
                Partition::Anavmg { tau } => anavmg(verts, tris, tau),
                Partition::HertelMehlhorn => (hertel_mehlhorn(verts, tris), false),
            };
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
            Ok((out_verts, out_polys, notches, kept, fell_back))
        })
        .collect();

    let mut input = MeshInput {
        regions: regions.len() as u32,
        climb: params.portal_climb,
        ..Default::default()
    };
    let mut stats = PolygonStats {
        regions: regions.len() as u64,
        restored_vertices: restored,
        contour_vertices: regions
            .iter()
            .flat_map(|r| &r.contours)
            .map(|c| c.points.len() as u64)
            .sum(),
        ..Default::default()
    };
    for (ri, result) in results.into_iter().enumerate() {
        let (verts, polys, notches, kept, fell_back) = result?;
        stats.partition_fallbacks += u64::from(fell_back);
        stats.notches += notches;
        stats.simplified_vertices += kept;
        let base = input.verts.len() as u32;
        input.verts.extend(verts);
        for mut p in polys {
            stats.polygons += 1;
            stats.triangles += p.tris.len() as u64;
            p.verts.iter_mut().for_each(|v| *v += base);
            p.tris
                .iter_mut()
                .for_each(|t| t.iter_mut().for_each(|v| *v += base));
            p.region = ri as u32;
            input.polys.push(p);
        }
    }
    input.notches = stats.notches;
    Ok((input, stats))
}

#[cfg(test)]
mod tests;
