//! ANavMG's area of interest (seed 002, 3.1 and 3.3): the cone of directions from a notch that
//! split its angle into two tau-convex angles, the exact test of a direction against it, and
//! the float searches along a segment that find candidates in it.
//!
//! The exact tests ([`within`] at tau 0, [`Cone::holds`] at tau 0) are integer cross products
//! ([`tessera_geom::predicates::cross`]); with tau above 0 angles are compared in `f64`
//! ([`ccw_angle`], rounded). The searches ([`Cone::meets`], [`Cone::closest_on`]) are `f64`
//! and generous by a relative slack; every point they offer is checked with [`Cone::holds`].

use tessera_geom::predicates::{cross, dot, length2, GridVector};

/// The counter-clockwise angle from direction `a` to direction `b`, in `[0, 2 pi)`; `f64`,
/// rounded.
fn ccw_angle(a: GridVector, b: GridVector) -> f64 {
    let t = (cross(a, b) as f64).atan2(dot(a, b) as f64);
    if t < 0.0 {
        t + std::f64::consts::TAU
    } else {
        t
    }
}

/// True when turning counter-clockwise from `a` to `b` is at most `pi + tau`. Exact (integer)
/// when `tau` is 0.
pub(super) fn within(a: GridVector, b: GridVector, tau: f64) -> bool {
    if tau == 0.0 {
        cross(a, b) >= 0
    } else {
        ccw_angle(a, b) <= std::f64::consts::PI + tau + 1e-12
    }
}

/// The cross product of two `f64` vectors (rounded).
fn cross_f64(a: (f64, f64), b: (f64, f64)) -> f64 {
    a.0 * b.1 - a.1 * b.0
}

/// The largest `s` range inside `range` where `c0 + s * c1 >= -slack`.
fn clip(range: (f64, f64), c0: f64, c1: f64, slack: f64) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = range;
    if c1.abs() <= f64::EPSILON * c0.abs().max(1.0) {
        return (c0 >= -slack).then_some(range);
    }
    let root = (-slack - c0) / c1;
    if c1 > 0.0 {
        lo = lo.max(root);
    } else {
        hi = hi.min(root);
    }
    (lo <= hi).then_some((lo, hi))
}

/// A notch's area of interest: the directions `w` from it that split its too-wide angle
/// (from direction `a` counter-clockwise to `b`) into two tau-convex angles. `lo` and `hi`
/// bound a convex part of it (all of it unless it is wider than pi) for float searches;
/// [`Cone::holds`] is the exact test.
pub(super) struct Cone {
    a: GridVector,
    b: GridVector,
    tau: f64,
    lo: (f64, f64),
    hi: (f64, f64),
}

impl Cone {
    pub(super) fn new(a: GridVector, b: GridVector, tau: f64) -> Cone {
        let unit = |d: GridVector| {
            let n = (d.0 as f64).hypot(d.1 as f64);
            (d.0 as f64 / n, d.1 as f64 / n)
        };
        let (lo, hi) = if tau == 0.0 {
            (unit(a), unit(b))
        } else {
            let pi = std::f64::consts::PI;
            let theta = ccw_angle(a, b);
            let (mut from, mut to) = (theta - pi - tau, pi + tau);
            if to - from > pi {
                (from, to) = (theta / 2.0 - pi / 2.0, theta / 2.0 + pi / 2.0);
            }
            let u = unit(a);
            let turn = |t: f64| (u.0 * t.cos() - u.1 * t.sin(), u.0 * t.sin() + u.1 * t.cos());
            (turn(from), turn(to))
        };
        Cone { a, b, tau, lo, hi }
    }

    /// Whether direction `w` (relative to the notch) lies in the cone: exact at tau 0.
    pub(super) fn holds(&self, w: GridVector) -> bool {
        w != (0, 0) && within(self.a, w, self.tau) && within(w, self.b, self.tau)
    }

    /// The parameters `s` in `range` where `p + s * d` (relative to the notch) lies in the
    /// convex part, widened by `slack` (relative).
    fn span(
        &self,
        p: (f64, f64),
        d: (f64, f64),
        range: (f64, f64),
        slack: f64,
    ) -> Option<(f64, f64)> {
        let scale = slack * (p.0.abs() + p.1.abs() + d.0.abs() + d.1.abs() + 1.0);
        let r = clip(range, cross_f64(self.lo, p), cross_f64(self.lo, d), scale)?;
        clip(r, cross_f64(p, self.hi), cross_f64(d, self.hi), scale)
    }

    /// Whether the segment `p`..`q` (relative to the notch) may meet the cone (generous).
    pub(super) fn meets(&self, p: GridVector, q: GridVector) -> bool {
        let p = (p.0 as f64, p.1 as f64);
        let d = (q.0 as f64 - p.0, q.1 as f64 - p.1);
        self.span(p, d, (0.0, 1.0), 1e-6).is_some()
    }

    /// The grid point strictly inside the wall piece `s`..`t` (relative to the notch) that is
    /// in the cone and closest to the notch, if any.
    pub(super) fn closest_on(&self, s: GridVector, t: GridVector) -> Option<GridVector> {
        let d = (t.0 - s.0, t.1 - s.1);
        let g = gcd(d.0.unsigned_abs(), d.1.unsigned_abs()) as i64;
        if g < 2 {
            return None;
        }
        let step = (d.0 / g, d.1 / g);
        let at = |k: i64| (s.0 + k * step.0, s.1 + k * step.1);
        let sf = (s.0 as f64, s.1 as f64);
        let df = (step.0 as f64, step.1 as f64);
        let (lo, hi) = self.span(sf, df, (1.0, (g - 1) as f64), 1e-9)?;
        let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
        let foot = -(sf.0 * df.0 + sf.1 * df.1) / (df.0 * df.0 + df.1 * df.1);
        let k0 = (foot.round() as i64).clamp(lo.min(hi), hi.max(lo));
        (k0 - 1..=k0 + 1)
            .filter(|&k| k >= 1 && k < g && self.holds(at(k)))
            .map(at)
            .min_by_key(|&w| (length2(w), w))
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
