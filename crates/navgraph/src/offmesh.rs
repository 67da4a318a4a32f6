//! Off-mesh links (a jump down, a ladder, a gap to leap): the caller gives two points and a
//! radius; each end snaps to the polygon nearest it within the radius, found while regions are
//! added (one pass over the polygons, no second read of the spill files).
//!
//! "Nearest" is in 3D, to the polygon's detail surface (its triangles, as the navmesh stores
//! them); of two polygons equally near, the one added first wins, so the choice is the same
//! for any tiling or thread count (the order regions are added in is). The snapped points are
//! what the navmesh stores ([`tessera_navmesh::OffMeshLink`]): the take-off and the landing
//! of every path across the link.

use rustc_hash::FxHashMap;
use tessera_navmesh::OffMeshLink;

use crate::links::GridLink;

/// An off-mesh link to snap: points in the internal frame (world units), `radius` the
/// farthest each end may be from the mesh (world units).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub link: OffMeshLink,
    pub radius: f32,
}

/// Which end of an off-mesh link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkEnd {
    From,
    To,
}

impl std::fmt::Display for LinkEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LinkEnd::From => "from",
            LinkEnd::To => "to",
        })
    }
}

/// Plan size of the buckets ends are filed in [world units], at the least: twice the largest
/// radius when that is more, so an end is filed in at most 3 x 3 buckets whatever its radius.
const BUCKET: f64 = 4.0;

/// A bounding box spanning more buckets than this is matched against every end instead.
const MOST_BUCKETS: i64 = 64;

/// One end being snapped: the best polygon so far (distance, polygon, point).
#[derive(Clone, Copy)]
struct End {
    at: [f64; 3],
    radius: f64,
    best: Option<(f64, u32, [f64; 3])>,
}

/// The ends of every off-mesh link, and the polygons nearest them so far.
pub(crate) struct Snapper {
    specs: Vec<LinkSpec>,
    /// `2 k`: link `k`'s `from` end; `2 k + 1`: its `to` end.
    ends: Vec<End>,
    buckets: FxHashMap<(i64, i64), Vec<u32>>,
    /// The buckets' plan size.
    size: f64,
}

impl Snapper {
    pub(crate) fn new(specs: Vec<LinkSpec>) -> Snapper {
        let largest = specs
            .iter()
            .map(|s| f64::from(s.radius))
            .fold(0.0, f64::max);
        let size = BUCKET.max(2.0 * largest);
        let bucket = |c: f64| (c / size).floor() as i64;
        let mut ends = Vec::with_capacity(2 * specs.len());
        let mut buckets: FxHashMap<(i64, i64), Vec<u32>> = FxHashMap::default();
        for s in &specs {
            for p in [s.link.from, s.link.to] {
                let at = p.map(f64::from);
                let radius = f64::from(s.radius);
                let i = ends.len() as u32;
                ends.push(End {
                    at,
                    radius,
                    best: None,
                });
                for y in bucket(at[1] - radius)..=bucket(at[1] + radius) {
                    for x in bucket(at[0] - radius)..=bucket(at[0] + radius) {
                        buckets.entry((x, y)).or_default().push(i);
                    }
                }
            }
        }
        Snapper {
            specs,
            ends,
            buckets,
            size,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Offers polygon `poly`, whose plan box is `[x0, y0, x1, y1]` and whose detail surface is
    /// `tris` (world units), to every end near it.
    pub(crate) fn offer(&mut self, poly: u32, bbox: [f64; 4], tris: &[[[f64; 3]; 3]]) {
        let size = self.size;
        let bucket = |c: f64| (c / size).floor() as i64;
        let (bx0, by0, bx1, by1) = (
            bucket(bbox[0]),
            bucket(bbox[1]),
            bucket(bbox[2]),
            bucket(bbox[3]),
        );
        let mut near: Vec<u32> = Vec::new();
        if (bx1 - bx0 + 1) * (by1 - by0 + 1) > MOST_BUCKETS {
            near.extend(0..self.ends.len() as u32);
        } else {
            for y in by0..=by1 {
                for x in bx0..=bx1 {
                    if let Some(list) = self.buckets.get(&(x, y)) {
                        near.extend_from_slice(list);
                    }
                }
            }
            near.sort_unstable();
            near.dedup();
        }
        for i in near {
            let end = &mut self.ends[i as usize];
            let (p, r) = (end.at, end.radius);
            // Plan distance to the box first: most polygons near a bucket are not near the end.
            let dx = (bbox[0] - p[0]).max(p[0] - bbox[2]).max(0.0);
            let dy = (bbox[1] - p[1]).max(p[1] - bbox[3]).max(0.0);
            if dx * dx + dy * dy > r * r {
                continue;
            }
            for t in tris {
                let q = closest_on_triangle(p, t);
                let d = dist(p, q);
                if d <= r && end.best.is_none_or(|(b, _, _)| d < b) {
                    end.best = Some((d, poly, q));
                }
            }
        }
    }

    /// The links (each way the spec asks for; a link whose ends snapped to one polygon is
    /// dropped) and the table of snapped links, or the first end that found no polygon.
    pub(crate) fn finish(self) -> Result<(Vec<GridLink>, Vec<OffMeshLink>), (usize, LinkEnd)> {
        let mut links = Vec::new();
        let mut table = Vec::with_capacity(self.specs.len());
        for (k, spec) in self.specs.into_iter().enumerate() {
            let snapped = |e: usize, which| self.ends[2 * k + e].best.ok_or((k, which));
            let (_, from, a) = snapped(0, LinkEnd::From)?;
            let (_, to, b) = snapped(1, LinkEnd::To)?;
            if from != to {
                let code = 2 * k as u32;
                links.push((from, to, [0; 3], [0; 3], code));
                if spec.link.bidirectional {
                    links.push((to, from, [0; 3], [0; 3], code + 1));
                }
            }
            table.push(OffMeshLink {
                from: a.map(|c| c as f32),
                to: b.map(|c| c as f32),
                ..spec.link
            });
        }
        Ok((links, table))
    }
}

/// The code of a [`GridLink`] that is no off-mesh link (a stair link).
pub(crate) const STAIR: u32 = u32::MAX;

/// A [`GridLink`]'s off-mesh link and direction: `(index into the table, reversed)`, `None`
/// for a stair link.
pub(crate) fn decode(code: u32) -> Option<(usize, bool)> {
    (code != STAIR).then_some(((code / 2) as usize, code % 2 == 1))
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = [0, 1, 2].map(|k| a[k] - b[k]);
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}

/// The point of triangle `t` nearest `p` in 3D (by the triangle's Voronoi regions: its
/// corners, its edges, its face).
fn closest_on_triangle(p: [f64; 3], t: &[[f64; 3]; 3]) -> [f64; 3] {
    let sub = |u: [f64; 3], v: [f64; 3]| [u[0] - v[0], u[1] - v[1], u[2] - v[2]];
    let dot = |u: [f64; 3], v: [f64; 3]| u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    let along =
        |o: [f64; 3], d: [f64; 3], s: f64| [o[0] + s * d[0], o[1] + s * d[1], o[2] + s * d[2]];
    let [a, b, c] = *t;
    let (ab, ac, ap) = (sub(b, a), sub(c, a), sub(p, a));
    let (d1, d2) = (dot(ab, ap), dot(ac, ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = sub(p, b);
    let (d3, d4) = (dot(ab, bp), dot(ac, bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return along(a, ab, d1 / (d1 - d3));
    }
    let cp = sub(p, c);
    let (d5, d6) = (dot(ab, cp), dot(ac, cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return along(a, ac, d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return along(b, sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = va + vb + vc;
    if denom.abs() < 1e-300 {
        // A degenerate triangle: its nearest corner.
        return *[a, b, c]
            .iter()
            .min_by(|x, y| dist(p, **x).total_cmp(&dist(p, **y)))
            .expect("three corners");
    }
    let (v, w) = (vb / denom, vc / denom);
    [0, 1, 2].map(|k| a[k] + ab[k] * v + ac[k] * w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_point_of_a_triangle_is_found_in_each_region() {
        let t = [[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 4.0, 0.0]];
        // Above the face: straight down.
        assert_eq!(closest_on_triangle([1.0, 1.0, 3.0], &t), [1.0, 1.0, 0.0]);
        // Beyond a corner, an edge and the long edge.
        assert_eq!(closest_on_triangle([-1.0, -2.0, 0.0], &t), [0.0, 0.0, 0.0]);
        assert_eq!(closest_on_triangle([2.0, -3.0, 1.0], &t), [2.0, 0.0, 0.0]);
        assert_eq!(closest_on_triangle([3.0, 3.0, 0.0], &t), [2.0, 2.0, 0.0]);
        assert_eq!(closest_on_triangle([9.0, -1.0, 0.0], &t), [4.0, 0.0, 0.0]);
    }

    fn spec(from: [f32; 3], to: [f32; 3], radius: f32, bidirectional: bool) -> LinkSpec {
        LinkSpec {
            link: OffMeshLink {
                name: "jump".into(),
                from,
                to,
                cost: 1.0,
                bidirectional,
            },
            radius,
        }
    }

    /// A square of `s` at plan `(x, y)` and height `z`, as two triangles.
    fn square(x: f64, y: f64, z: f64, s: f64) -> Vec<[[f64; 3]; 3]> {
        let c = [[x, y, z], [x + s, y, z], [x + s, y + s, z], [x, y + s, z]];
        vec![[c[0], c[1], c[2]], [c[0], c[2], c[3]]]
    }

    #[test]
    fn each_end_snaps_to_the_nearest_polygon_within_its_radius_first_added_on_a_tie() {
        let mut s = Snapper::new(vec![
            spec([1.0, 1.0, 3.2], [5.0, 1.0, 0.1], 0.5, false),
            spec([1.0, 1.0, 3.2], [30.0, 30.0, 0.0], 0.5, true),
        ]);
        // A ledge top at 3 m (polygon 0), the ground below it at 0 (1), a second ground
        // polygon meeting the first along x = 6 (2).
        s.offer(0, [0.0, 0.0, 2.0, 2.0], &square(0.0, 0.0, 3.0, 2.0));
        s.offer(1, [0.0, 0.0, 6.0, 6.0], &square(0.0, 0.0, 0.0, 6.0));
        s.offer(2, [6.0, 0.0, 12.0, 6.0], &square(6.0, 0.0, 0.0, 6.0));
        match s.finish() {
            Err((link, end)) => assert_eq!((link, end), (1, LinkEnd::To)),
            Ok(_) => panic!("the second link's far end has no polygon within its radius"),
        }

        let mut s = Snapper::new(vec![
            spec([1.0, 1.0, 3.2], [5.0, 1.0, 0.1], 0.5, false),
            spec([6.0, 3.0, 0.0], [1.5, 1.5, 2.9], 0.5, true),
        ]);
        s.offer(0, [0.0, 0.0, 2.0, 2.0], &square(0.0, 0.0, 3.0, 2.0));
        s.offer(1, [0.0, 0.0, 6.0, 6.0], &square(0.0, 0.0, 0.0, 6.0));
        s.offer(2, [6.0, 0.0, 12.0, 6.0], &square(6.0, 0.0, 0.0, 6.0));
        let (links, table) = s.finish().expect("every end within its radius");
        // The take-off snaps down onto the ledge top, not the ground 3.2 m below; the landing
        // onto the ground. The second link's start lies on the shared edge of 1 and 2: the
        // first added wins.
        assert_eq!(
            links,
            vec![
                (0, 1, [0; 3], [0; 3], 0),
                (1, 0, [0; 3], [0; 3], 2),
                (0, 1, [0; 3], [0; 3], 3)
            ]
        );
        assert_eq!(table[0].from, [1.0, 1.0, 3.0]);
        assert_eq!(table[0].to, [5.0, 1.0, 0.0]);
        assert_eq!(table[1].from, [6.0, 3.0, 0.0]);
        assert_eq!(decode(3), Some((1, true)));
        assert_eq!(decode(STAIR), None);
    }

    #[test]
    fn an_end_of_any_radius_is_filed_in_a_few_buckets() {
        let s = Snapper::new(vec![spec([0.0; 3], [500.0, 0.0, 0.0], 100.0, true); 10]);
        let filed: usize = s.buckets.values().map(Vec::len).sum();
        assert!(filed <= 20 * 9, "{filed}");
    }

    #[test]
    fn a_polygon_spanning_many_buckets_is_offered_to_every_end() {
        let mut s = Snapper::new(vec![spec([150.0, 150.0, 0.3], [2.0, 2.0, 0.0], 0.5, false)]);
        s.offer(0, [0.0, 0.0, 200.0, 200.0], &square(0.0, 0.0, 0.0, 200.0));
        let (links, table) = s.finish().expect("snapped");
        // Both ends on the one polygon: no link, the table keeps it.
        assert!(links.is_empty());
        assert_eq!(table[0].from, [150.0, 150.0, 0.0]);
    }
}
