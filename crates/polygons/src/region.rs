//! One region from its contours to its polygons: sections simplified with the final table of
//! restored points ([`crate::simplify`]), the simplified contours with their blocked edges and
//! walls, the triangulation ([`crate::triangulate`]), the convex partition the settings name
//! ([`crate::anavmg`] or [`crate::hertel_mehlhorn`]), then heights for the points the
//! partition added on walls.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tessera_artifacts::{Point, NO_NEIGHBOUR, OUT_OF_REACH};
use tessera_geom::predicates::{dot, vector};

use crate::anavmg::{anavmg_with, Settings};
use crate::partition::{notches, RegionPolygons};
use crate::{
    hertel_mehlhorn, simplify, triangulate, InputPoly, Partition, PolygonError, PolygonParams,
    RegionContours, RegionOutput,
};

/// One region's polygons, its sections simplified with the final table of restored points.
pub(crate) fn polygonize_region(
    region: &RegionContours,
    params: PolygonParams,
    restored: &simplify::Restored,
) -> Result<RegionOutput, PolygonError> {
    let (mut sections, parts) = simplify::sections_of(region);
    simplify::simplify(&mut sections, params.max_error, restored);
    // Each point's height in this region (a pinch point has one height).
    let points: usize = region.contours.iter().map(|c| c.points.len()).sum();
    let mut height: HashMap<Point, u32> = HashMap::default();
    height.reserve(points);
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
    let mut walls: HashSet<(Point, Point)> = Default::default();
    let kept_points: usize = sections
        .iter()
        .map(|s| s.keep.iter().filter(|&&k| k).count())
        .sum();
    blocked.reserve(kept_points);
    walls.reserve(kept_points);
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
    let notches = notches(&simplified);
    let kept = simplified.iter().map(|c| c.len() as u64).sum();
    let (verts, tris) = triangulate(&simplified).map_err(|source| PolygonError::Region {
        x: region.id.x,
        y: region.id.y,
        z: region.id.zmax,
        source,
    })?;
    let (polys, fell_back) = match params.partition {
        Partition::Anavmg { tau, removal } => anavmg_with(
            verts,
            tris,
            &|a, b| walls.contains(&(a, b)),
            tau,
            &Settings {
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
        ground: params.detail.ground
            && region
                .contours
                .first()
                .is_some_and(|c| tessera_artifacts::Levels::is_ground_label(c.level)),
        area: region
            .contours
            .first()
            .map_or(0, |c| tessera_artifacts::Levels::area_of_label(c.level)),
        key: 0,
        extent: region.extent(),
        reused: false,
        sealed: None,
        id: region.id,
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
        let along = |p: Point| dot(vector(a, p), vector(a, b));
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
