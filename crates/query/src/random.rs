//! Seeded random numbers and area-weighted random points.

use crate::geom::{triangle_area, V3};
use crate::Query;

/// A small deterministic generator (SplitMix64): the same seed gives the same sequence on
/// every platform. Not for cryptography.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, from the top 24 bits (every value exactly representable).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Uniform in `[0, 1)`, from the top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

impl Query<'_> {
    /// A random point on the mesh, uniform over its area: a polygon drawn with probability
    /// proportional to its area (prefix sums of `Poly.area` and a binary search), then one of
    /// its detail triangles by plan area (its vertex fan when it has none), then a uniform
    /// point of that triangle, at the triangle's height. `None` when the mesh has no area.
    pub fn random_point(&self, rng: &mut Rng) -> Option<(u32, [f32; 3])> {
        let total = *self.area_prefix.last()?;
        if total <= 0.0 || !total.is_finite() {
            return None;
        }
        let r = rng.next_f64() * total;
        let poly = self
            .area_prefix
            .partition_point(|&c| c <= r)
            .min(self.area_prefix.len() - 1) as u32;
        let mut tris: Vec<[V3; 3]> = self.mesh.poly_triangles(poly).collect();
        if tris.iter().map(triangle_area).sum::<f64>() <= 0.0 {
            let pts = self.poly_corners(poly);
            tris = (1..pts.len() - 1)
                .map(|k| [pts[0], pts[k], pts[k + 1]])
                .collect();
        }
        let areas: Vec<f64> = tris.iter().map(triangle_area).collect();
        let sum: f64 = areas.iter().sum();
        let pick = rng.next_f64() * sum;
        let mut acc = 0.0;
        let mut chosen = tris.len() - 1;
        for (k, a) in areas.iter().enumerate() {
            acc += a;
            if pick < acc {
                chosen = k;
                break;
            }
        }
        let t = tris[chosen];
        let (mut u, mut v) = (rng.next_f64(), rng.next_f64());
        if u + v > 1.0 {
            // Fold the far half of the parallelogram back onto the triangle.
            (u, v) = (1.0 - u, 1.0 - v);
        }
        let p = [0, 1, 2].map(|k| {
            let (a, b, c) = (t[0][k] as f64, t[1][k] as f64, t[2][k] as f64);
            (a + u * (b - a) + v * (c - a)) as f32
        });
        Some((poly, p))
    }
}
