//! Height detail for one convex polygon (seed 004): where the polygon's flat-faced surface strays
//! from the heightfield by more than a tolerance, points sampled from the heightfield are added
//! and the polygon is re-triangulated, so point heights follow ramps, bumps and terrain.
//!
//! Based on: S. Pratt, "Detail Mesh Generation", CritterAI's study of Recast's NMGen
//! (critterai.org, undated; seed 004), all of it: edge sampling, a Delaunay triangulation,
//! interior sampling, worst point first while over the tolerance.
//!
//! 1. Each edge is cut into equal pieces no longer than the sample distance; the piece ends get
//!    their height from the heightfield, and the one farthest (in height) from the edge as it
//!    stands is added while it deviates by more than the tolerance. Edges are sampled from
//!    their smaller end, so two polygons sharing an edge sample it alike. A ground polygon's
//!    edge is walked from its corners in steps of a cell, each to the floor nearest the last
//!    (a column's lowest walkable floor may be a deck overhead where the ground beneath it
//!    has no headroom).
//! 2. The corners and the edge points are Delaunay-triangulated (the polygon is convex, so the
//!    triangulation covers exactly the polygon).
//! 3. A grid of interior points at the sample distance gets heights; the one farthest from the
//!    triangulated surface is inserted while it deviates by more than the tolerance.
//!
//! How this departs from the article: there is no height patch; heights are read through
//! [`HeightAt`] (the region's floor nearest the height expected there), at a point nudged
//! towards the polygon's centre. Points are inserted into one Delaunay triangulation rather
//! than triangulating again, and only the candidates near a new point are measured again.
//! Interior samples keep a quarter step from every edge; a polygon gets at most `max_points`
//! points; slivers of (numerically) zero area are dropped and triangles come out in a fixed
//! order. `add_detail` works a window's polygons in plan order, so that the heightfield is
//! read a tile at a time.
//!
//! Everything here is `f64` (detail points are off the grid): `orient_f64` is rounded.
//!
//! Units are the voxel grid's: plan in cells, heights in voxels.

use rayon::prelude::*;
use spade::{DelaunayTriangulation, HasPosition, Point2, Triangulation};

use crate::RegionOutput;
use tessera_artifacts::DETAIL;

/// Sampling settings, in grid units; a sample distance of 0 turns detail off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DetailParams {
    /// Distance between samples [cells].
    pub sample_distance: f64,
    /// Largest height difference left between the surface and the heightfield [voxels].
    pub max_error: f64,
    /// Most points added to one polygon.
    pub max_points: usize,
    /// Polygons are detailed in plan order by blocks of this many cells (the heightfield's
    /// tile size), so that a tile's heights are read once for all polygons on it.
    pub locality: u32,
    /// Surface regions: a ground region's polygons read the ground (see [`HeightAt`]).
    pub ground: bool,
}

impl DetailParams {
    pub const OFF: DetailParams = DetailParams {
        sample_distance: 0.0,
        max_error: 0.0,
        max_points: 0,
        locality: 1,
        ground: false,
    };

    pub fn is_on(&self) -> bool {
        self.sample_distance > 0.0 && self.max_points > 0
    }
}

/// The floor height [voxels] under cell `(x, y)` of the region being detailed, nearest the
/// given height; `None` where the region has no floor there.
pub type HeightAt<'a> = dyn Fn(i32, i32, Floor) -> Option<f64> + Sync + 'a;

/// Which floor of a column [`HeightAt`] answers with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Floor {
    /// The walkable floor nearest this height [voxels], within the heightfield's reach.
    Near(f64),
    /// The lowest walkable floor: the ground a surface region's polygon stands on, however far
    /// its plane strays from it over a hill.
    Ground,
}

/// A polygon's detail: points added (plan in cells, height in voxels) and triangles over the
/// corners (`0 .. n`) and the added points (`n ..`), counter-clockwise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Detail {
    pub points: Vec<[f64; 3]>,
    pub tris: Vec<[u32; 3]>,
}

#[derive(Clone, Copy, Debug)]
struct Vertex {
    pos: Point2<f64>,
    index: u32,
}

impl HasPosition for Vertex {
    type Scalar = f64;
    fn position(&self) -> Point2<f64> {
        self.pos
    }
}

/// The detail of a convex, counter-clockwise polygon with corners `poly` (plan in cells,
/// height in voxels). `None` when detail adds nothing (no point deviates): the caller keeps the
/// polygon's own triangulation.
pub fn detail(
    poly: &[[f64; 3]],
    params: &DetailParams,
    ground: bool,
    height: &HeightAt,
) -> Option<Detail> {
    if !params.is_on() || poly.len() < 3 {
        return None;
    }
    let n = poly.len();
    let centre = {
        let s = poly
            .iter()
            .fold([0.0; 2], |a, p| [a[0] + p[0], a[1] + p[1]]);
        [s[0] / n as f64, s[1] / n as f64]
    };
    // The cell under a point, nudged towards the centre so that points on an edge or a corner
    // read the polygon's own side.
    let read = |x: f64, y: f64, floor: Floor| -> Option<f64> {
        let (dx, dy) = (centre[0] - x, centre[1] - y);
        let d = (dx * dx + dy * dy).sqrt().max(1e-9);
        let (x, y) = (x + dx / d * 1e-3, y + dy / d * 1e-3);
        height(x.floor() as i32, y.floor() as i32, floor)
    };
    let sample = |x: f64, y: f64, near: f64| -> Option<f64> {
        read(
            x,
            y,
            if ground {
                Floor::Ground
            } else {
                Floor::Near(near)
            },
        )
    };
    let tol = params.max_error.max(0.0);
    let mut points: Vec<[f64; 3]> = Vec::new();

    // 1. Edges.
    let mut boundary: Vec<[f64; 3]> = Vec::new();
    for k in 0..n {
        let (a, b) = (poly[k], poly[(k + 1) % n]);
        let forward = (a[0], a[1]) <= (b[0], b[1]);
        let (p, q) = if forward { (a, b) } else { (b, a) };
        let len = ((q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2)).sqrt();
        let pieces = (len / params.sample_distance).floor() as usize;
        if pieces < 2 {
            continue;
        }
        // On the ground, the floor under an edge is walked to from its ends, cell by cell
        // (each step to the floor nearest the last): the column's lowest walkable floor
        // could be a deck overhead where the ground under it has no headroom.
        let walked = ground.then(|| walk_edge(&p, &q, pieces, &read));
        let samples: Vec<[f64; 3]> = (0..=pieces)
            .map(|i| {
                let t = i as f64 / pieces as f64;
                let (x, y) = (p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t);
                let near = p[2] + (q[2] - p[2]) * t;
                let h = match &walked {
                    Some(w) => w[i],
                    None => sample(x, y, near),
                };
                [x, y, h.unwrap_or(near)]
            })
            .collect();
        // Kept sample positions, ends first; insert the worst until all are within tolerance.
        let mut kept = vec![0usize, pieces];
        loop {
            let mut worst: Option<(f64, usize)> = None;
            for w in kept.windows(2) {
                let (i, j) = (w[0], w[1]);
                let (hi, hj) = (
                    if i == 0 { p[2] } else { samples[i][2] },
                    if j == pieces { q[2] } else { samples[j][2] },
                );
                for (m, s) in samples.iter().enumerate().take(j).skip(i + 1) {
                    let t = (m - i) as f64 / (j - i) as f64;
                    let d = (s[2] - (hi + (hj - hi) * t)).abs();
                    if d > tol && worst.is_none_or(|(wd, _)| d > wd) {
                        worst = Some((d, m));
                    }
                }
            }
            match worst {
                Some((_, m)) if points.len() + kept.len() - 2 < params.max_points => {
                    let at = kept.partition_point(|&x| x < m);
                    kept.insert(at, m);
                }
                _ => break,
            }
        }
        boundary.extend(kept[1..kept.len() - 1].iter().map(|&m| samples[m]));
    }
    points.extend(boundary);

    // The interior sample positions: a grid at the sample distance, a quarter step clear of
    // every edge.
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in poly {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let step = params.sample_distance;
    let inset = step * 0.5;
    let mut grid: Vec<[f64; 2]> = Vec::new();
    let mut y = lo[1] + inset;
    while y < hi[1] - inset * 0.5 {
        let mut x = lo[0] + inset;
        while x < hi[0] - inset * 0.5 {
            if inside(poly, [x, y], inset * 0.5) {
                grid.push([x, y]);
            }
            x += step;
        }
        y += step;
    }

    // A level polygon whose edges needed no point and whose every interior sample finds its
    // own floor height: the surface there is that height to within rounding (barycentric
    // weights summing to one, off by a few ulps of the height, far below any tolerance), so
    // the floor read near it is the same, no sample deviates and the detail below would add
    // nothing. Decided without building the triangulation; anything else takes the full path.
    let z0 = poly[0][2];
    let clear = tol > 1e-6 * (1.0 + z0.abs());
    if points.is_empty() && clear && poly.iter().all(|p| p[2] == z0) {
        let level = grid.iter().all(|&[x, y]| sample(x, y, z0) == Some(z0));
        if level {
            return None;
        }
    }

    // 2. Triangulate corners and edge points.
    let mut dt: DelaunayTriangulation<Vertex> = DelaunayTriangulation::new();
    let all = |points: &[[f64; 3]], i: u32| -> [f64; 3] {
        if (i as usize) < n {
            poly[i as usize]
        } else {
            points[i as usize - n]
        }
    };
    for (i, p) in poly.iter().chain(points.iter()).enumerate() {
        dt.insert(Vertex {
            pos: Point2::new(p[0], p[1]),
            index: i as u32,
        })
        .ok()?;
    }

    // 3. Interior samples, the worst first, while any deviates. Each candidate's deviation
    // from the surface as it stands (the surface read once, for both the height lookup and
    // the deviation); an insertion changes the surface only inside the triangles around the
    // new point, so only candidates in their bounding box are measured again.
    let mut candidates: Vec<[f64; 3]> = Vec::new();
    let mut dev: Vec<Option<f64>> = Vec::new();
    for &[x, y] in &grid {
        let at = surface(&dt, &points, &all, [x, y]);
        if let Some(h) = sample(x, y, at.unwrap_or(poly[0][2])) {
            candidates.push([x, y, h]);
            dev.push(at.map(|s| (h - s).abs()));
        }
    }
    let deviation = |dt: &DelaunayTriangulation<Vertex>, points: &[[f64; 3]], c: &[f64; 3]| {
        surface(dt, points, &all, [c[0], c[1]]).map(|s| (c[2] - s).abs())
    };
    while points.len() < params.max_points && !candidates.is_empty() {
        let mut worst: Option<(f64, usize)> = None;
        for (i, d) in dev.iter().enumerate() {
            if let Some(d) = *d {
                if d > tol && worst.is_none_or(|(wd, _)| d > wd) {
                    worst = Some((d, i));
                }
            }
        }
        let Some((_, i)) = worst else { break };
        let c = candidates.swap_remove(i);
        dev.swap_remove(i);
        let handle = dt
            .insert(Vertex {
                pos: Point2::new(c[0], c[1]),
                index: (n + points.len()) as u32,
            })
            .ok()?;
        points.push(c);
        let (mut blo, mut bhi) = ([c[0], c[1]], [c[0], c[1]]);
        for e in dt.vertex(handle).out_edges() {
            let q = e.to().position();
            blo = [blo[0].min(q.x), blo[1].min(q.y)];
            bhi = [bhi[0].max(q.x), bhi[1].max(q.y)];
        }
        for (k, cand) in candidates.iter().enumerate() {
            if cand[0] >= blo[0] && cand[0] <= bhi[0] && cand[1] >= blo[1] && cand[1] <= bhi[1] {
                dev[k] = deviation(&dt, &points, cand);
            }
        }
    }
    if points.is_empty() {
        return None;
    }
    let mut tris: Vec<[u32; 3]> = dt
        .inner_faces()
        .map(|f| f.vertices().map(|v| v.data().index))
        .filter(|t| {
            let [a, b, c] = t.map(|i| all(&points, i));
            orient_f64(&a, &b, &c) > 1e-12
        })
        .collect();
    // A fixed order, whatever the triangulation's internal one.
    for t in &mut tris {
        let m = (0..3).min_by_key(|&k| t[k]).unwrap();
        t.rotate_left(m);
    }
    tris.sort_unstable();
    Some(Detail { points, tris })
}

/// The height detail an earlier run attached to a region's polygons, by their corners (an
/// incremental rebake): a polygon's detail depends on its corners, on whether its region is a
/// ground region, on the settings and on the heightfield under it alone, so a polygon of a
/// region polygonized again whose corners an earlier polygon had, over an unchanged
/// heightfield, takes that polygon's detail instead of reading the heightfield.
#[derive(Clone, Debug, Default)]
pub struct KeptDetails {
    ground: bool,
    /// By corners (plan in cells, height in voxels, in polygon order): the detail, or None
    /// where detail added nothing.
    by_corners: rustc_hash::FxHashMap<Vec<[i32; 3]>, Option<Detail>>,
}

impl KeptDetails {
    /// The detail [`add_detail`] attached to `out`'s polygons, for those whose corners `keep`
    /// accepts (the caller's check of the heightfield under them). None when `out`'s detail
    /// points cannot be told apart by polygon (a point no triangle names).
    pub fn of_output(out: &RegionOutput, keep: impl Fn(&[[i32; 3]]) -> bool) -> Option<Self> {
        let mut by_corners = rustc_hash::FxHashMap::default();
        // Each polygon's points follow the last polygon's, in polygon order; told apart only
        // when every polygon's triangles name its first point and, together, every point.
        let mut base = 0u32;
        for poly in &out.polys {
            let named = || {
                poly.tris
                    .iter()
                    .flatten()
                    .filter(|&&v| v & DETAIL != 0)
                    .map(|&v| v & !DETAIL)
            };
            let end = match (named().min(), named().max()) {
                (Some(first), Some(last)) if first == base => last + 1,
                (None, None) => base,
                _ => return None,
            };
            let corners: Vec<[i32; 3]> =
                poly.verts.iter().map(|&v| out.verts[v as usize]).collect();
            if keep(&corners) {
                let n = poly.verts.len() as u32;
                let local = |v: u32| -> Option<u32> {
                    if v & DETAIL != 0 {
                        (v & !DETAIL).checked_sub(base).map(|k| n + k)
                    } else {
                        poly.verts.iter().position(|&c| c == v).map(|i| i as u32)
                    }
                };
                let detail = if end == base {
                    None
                } else {
                    let tris = poly
                        .tris
                        .iter()
                        .map(|t| Some([local(t[0])?, local(t[1])?, local(t[2])?]))
                        .collect::<Option<Vec<_>>>()?;
                    let points = out.detail.get(base as usize..end as usize)?;
                    Some(Detail {
                        points: points.iter().map(|q| q.map(f64::from)).collect(),
                        tris,
                    })
                };
                by_corners.insert(corners, detail);
            }
            base = end;
        }
        (base as usize == out.detail.len()).then_some(KeptDetails {
            ground: out.ground,
            by_corners,
        })
    }

    /// The detail of a polygon with these corners in a region that is (`ground`) or is not a
    /// ground region, when kept: `Some(None)` where detail added nothing.
    fn get(&self, ground: bool, corners: &[[i32; 3]]) -> Option<Option<Detail>> {
        if ground != self.ground {
            return None;
        }
        self.by_corners.get(corners).cloned()
    }
}

/// Height detail for a window's polygons, worked through in plan order by blocks of
/// `locality` cells (the heightfield is read a tile at a time; regions can be long) and
/// attached to each region in polygon order. `known[r]`, when given, holds detail an earlier
/// run made for region `r`'s polygons ([`KeptDetails`]).
pub(crate) fn add_detail(
    outs: &mut [RegionOutput],
    params: &DetailParams,
    height: &HeightAt,
    known: &[Option<KeptDetails>],
) {
    let block = params.locality.max(1) as i32;
    let mut work: Vec<(u64, u32, u32)> = Vec::new();
    for (r, out) in outs.iter().enumerate() {
        for (p, poly) in out.polys.iter().enumerate() {
            let v = out.verts[poly.verts[0] as usize];
            let (bx, by) = (v[0].div_euclid(block), v[1].div_euclid(block));
            work.push((z_order(bx as u32, by as u32), r as u32, p as u32));
        }
    }
    work.sort_unstable();
    // A chunk of polygons at a time, nearby blocks first (Z order), each chunk's polygons in
    // parallel: the threads read the same few tiles of the heightfield (a chunk's blocks and
    // their neighbours) rather than each its own part of the world, so a small cache of tiles
    // serves them.
    const CHUNK: usize = 1024;
    let mut details: Vec<Option<Detail>> = Vec::with_capacity(work.len());
    for chunk in work.chunks(CHUNK) {
        details.par_extend(chunk.par_iter().map(|&(_, r, p)| {
            let out = &outs[r as usize];
            let poly = &out.polys[p as usize];
            if let Some(Some(kept)) = known.get(r as usize) {
                let corners: Vec<[i32; 3]> =
                    poly.verts.iter().map(|&v| out.verts[v as usize]).collect();
                if let Some(d) = kept.get(out.ground, &corners) {
                    return d;
                }
            }
            let corners: Vec<[f64; 3]> = poly
                .verts
                .iter()
                .map(|&v| out.verts[v as usize].map(|c| c as f64))
                .collect();
            detail(&corners, params, out.ground, height)
        }));
    }
    let mut by_poly: Vec<((u32, u32), Detail)> = work
        .iter()
        .zip(details)
        .filter_map(|(&(_, r, p), d)| d.map(|d| ((r, p), d)))
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

/// The Z-order (Morton) index of block `(x, y)`: blocks close in the plane are close in it.
fn z_order(x: u32, y: u32) -> u64 {
    fn spread(v: u32) -> u64 {
        let mut v = v as u64;
        v = (v | (v << 16)) & 0x0000_ffff_0000_ffff;
        v = (v | (v << 8)) & 0x00ff_00ff_00ff_00ff;
        v = (v | (v << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
        v = (v | (v << 2)) & 0x3333_3333_3333_3333;
        (v | (v << 1)) & 0x5555_5555_5555_5555
    }
    spread(x) | (spread(y) << 1)
}

/// A point of the polygon being detailed by its index: a corner (`0 .. n`) or, from `n` on,
/// one of the added points given.
type PointAt<'a> = dyn Fn(&[[f64; 3]], u32) -> [f64; 3] + 'a;

/// Height of the triangulated surface at a plan point, if the point is on it.
fn surface(
    dt: &DelaunayTriangulation<Vertex>,
    points: &[[f64; 3]],
    all: &PointAt,
    p: [f64; 2],
) -> Option<f64> {
    use spade::PositionInTriangulation as P;
    let face = match dt.locate(Point2::new(p[0], p[1])) {
        P::OnFace(f) => dt.face(f),
        P::OnEdge(e) => {
            let e = dt.directed_edge(e);
            e.face().as_inner().or_else(|| e.rev().face().as_inner())?
        }
        P::OnVertex(v) => return Some(all(points, dt.vertex(v).data().index)[2]),
        _ => return None,
    };
    let [a, b, c] = face.vertices().map(|v| all(points, v.data().index));
    let d = orient_f64(&a, &b, &c);
    if d.abs() < 1e-12 {
        return None;
    }
    let u = orient_f64(&p, &b, &c) / d;
    let v = orient_f64(&p, &c, &a) / d;
    Some(u * a[2] + v * b[2] + (1.0 - u - v) * c[2])
}

/// Twice the signed plan area of the triangle `a, b, c` (the first two coordinates of each):
/// positive counter-clockwise. `f64`, rounded: the exact grid version is
/// [`tessera_geom::predicates::orient`].
fn orient_f64(a: &[f64], b: &[f64], c: &[f64]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// `p` inside the convex counter-clockwise polygon, at least `margin` from every edge.
/// The floor at each of the `pieces + 1` evenly spaced points of the edge `p..q`, walked to
/// from `p` and, where that walk finds none, from `q`: steps of at most a cell, each reading
/// the floor nearest the last height (`read` with [`Floor::Near`]). `None` where neither walk
/// finds one.
fn walk_edge(
    p: &[f64; 3],
    q: &[f64; 3],
    pieces: usize,
    read: &dyn Fn(f64, f64, Floor) -> Option<f64>,
) -> Vec<Option<f64>> {
    let len = ((q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2)).sqrt();
    let per_piece = (len / pieces as f64).ceil().max(1.0) as usize;
    let steps = pieces * per_piece;
    // The heights reached at every piece end walking from `from` towards `to`.
    let walk = |from: &[f64; 3], to: &[f64; 3]| -> Vec<Option<f64>> {
        let mut out = vec![None; pieces + 1];
        let mut h = from[2];
        out[0] = Some(h);
        for k in 1..=steps {
            let t = k as f64 / steps as f64;
            let (x, y) = (
                from[0] + (to[0] - from[0]) * t,
                from[1] + (to[1] - from[1]) * t,
            );
            // A column with no floor within reach (a post, a bank too steep) is stepped over,
            // the walk going on from the last floor.
            let found = read(x, y, Floor::Near(h));
            if let Some(next) = found {
                h = next;
            }
            if k % per_piece == 0 {
                out[k / per_piece] = found;
            }
        }
        out
    };
    let mut forward = walk(p, q);
    if forward.iter().any(Option::is_none) {
        let mut backward = walk(q, p);
        backward.reverse();
        for (f, b) in forward.iter_mut().zip(backward) {
            *f = f.or(b);
        }
    }
    forward
}

fn inside(poly: &[[f64; 3]], p: [f64; 2], margin: f64) -> bool {
    let n = poly.len();
    (0..n).all(|k| {
        let (a, b) = (poly[k], poly[(k + 1) % n]);
        let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
        let len = (ex * ex + ey * ey).sqrt();
        len == 0.0 || orient_f64(&a, &b, &p) / len >= margin
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(size: f64, z: f64) -> Vec<[f64; 3]> {
        vec![
            [0.0, 0.0, z],
            [size, 0.0, z],
            [size, size, z],
            [0.0, size, z],
        ]
    }

    const PARAMS: DetailParams = DetailParams {
        ground: false,
        sample_distance: 2.0,
        max_error: 1.0,
        max_points: 256,
        locality: 64,
    };

    fn area(d: &Detail, poly: &[[f64; 3]]) -> f64 {
        let n = poly.len();
        let at = |i: u32| {
            if (i as usize) < n {
                poly[i as usize]
            } else {
                d.points[i as usize - n]
            }
        };
        d.tris
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(at);
                0.5 * orient_f64(&a, &b, &c)
            })
            .sum()
    }

    /// A ground polygon's edge passing under a deck: there the ground has no headroom, so a
    /// column's lowest walkable floor is the deck, 40 voxels up. Walked from the corners, the
    /// edge keeps to the ground and steps over the columns under the deck.
    #[test]
    fn a_ground_edge_under_a_deck_keeps_to_the_ground() {
        let deck = |x: i32, y: i32, floor: Floor| {
            let under = y < 1 && (8..12).contains(&x);
            match floor {
                Floor::Ground => Some(if under { 40.0 } else { 0.0 }),
                Floor::Near(near) => {
                    let z = if under { 40.0 } else { 0.0 };
                    ((z - near).abs() <= 5.0).then_some(z)
                }
            }
        };
        let poly = square(20.0, 0.0);
        let on_the_ground = |d: &Option<Detail>| {
            d.as_ref()
                .is_none_or(|d| d.points.iter().all(|p| p[2].abs() < 1e-9))
        };
        assert!(on_the_ground(&detail(&poly, &PARAMS, true, &deck)));
        // Read column by column as before, the edge points would have climbed onto the deck.
        let lowest = |x: i32, y: i32, _: Floor| deck(x, y, Floor::Ground);
        assert!(!on_the_ground(&detail(&poly, &PARAMS, true, &lowest)));
    }

    #[test]
    fn a_flat_floor_needs_no_detail() {
        let poly = square(20.0, 4.0);
        assert_eq!(detail(&poly, &PARAMS, false, &|_, _, _| Some(4.0)), None);
        assert_eq!(
            detail(&poly, &DetailParams::OFF, false, &|_, _, _| Some(9.0)),
            None
        );
    }

    #[test]
    fn a_bump_gets_points_and_the_surface_follows_it() {
        // A floor at 0 with a 6-voxel hill around (10, 10).
        let hill = |x: i32, y: i32, _: Floor| {
            let (dx, dy) = (x as f64 + 0.5 - 10.0, y as f64 + 0.5 - 10.0);
            Some((6.0 - (dx * dx + dy * dy).sqrt()).max(0.0))
        };
        let poly = square(20.0, 0.0);
        let d = detail(&poly, &PARAMS, false, &hill).expect("the hill needs detail");
        assert!(!d.points.is_empty());
        // Exact cover of the square, counter-clockwise triangles.
        assert!((area(&d, &poly) - 400.0).abs() < 1e-9);
        assert!(d
            .tris
            .iter()
            .all(|t| t.iter().all(|&i| (i as usize) < 4 + d.points.len())));
        // The top of the hill is within the tolerance (plus the cell quantisation).
        let n = poly.len();
        let top = d.points.iter().map(|p| p[2]).fold(0.0f64, f64::max);
        assert!(top >= 6.0 - PARAMS.max_error - 1.0, "top {top}");
        // Deterministic.
        assert_eq!(detail(&poly, &PARAMS, false, &hill), Some(d.clone()));
        // Every added point is on the polygon.
        assert!(d
            .points
            .iter()
            .all(|p| p[0] >= 0.0 && p[0] <= 20.0 && p[1] >= 0.0 && p[1] <= 20.0));
        assert_eq!(n, 4);
    }

    #[test]
    fn a_shared_edge_is_sampled_alike_from_both_sides() {
        // A raised band across both squares (y 6..14): the edge x = 10 between them climbs
        // it, and both add the same points on it.
        let band = |_: i32, y: i32, _: Floor| Some(if (6..14).contains(&y) { 5.0 } else { 0.0 });
        let left = vec![
            [0.0, 0.0, 0.0],
            [10.0, 0.0, 0.0],
            [10.0, 20.0, 0.0],
            [0.0, 20.0, 0.0],
        ];
        let right = vec![
            [10.0, 0.0, 0.0],
            [20.0, 0.0, 0.0],
            [20.0, 20.0, 0.0],
            [10.0, 20.0, 0.0],
        ];
        let on_edge = |d: &Option<Detail>| -> Vec<[i64; 3]> {
            let mut v: Vec<[i64; 3]> = d
                .iter()
                .flat_map(|d| d.points.iter())
                .filter(|p| (p[0] - 10.0).abs() < 1e-9)
                .map(|p| p.map(|c| (c * 1000.0).round() as i64))
                .collect();
            v.sort_unstable();
            v
        };
        let (l, r) = (
            detail(&left, &PARAMS, false, &band),
            detail(&right, &PARAMS, false, &band),
        );
        assert!(!on_edge(&l).is_empty());
        assert_eq!(on_edge(&l), on_edge(&r));
    }
}
