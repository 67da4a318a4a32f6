//! Small plan (x, y) geometry on `[f32; 3]` points, computed in f64.
//!
//! The navmesh stores f32; products of differences are formed in f64 so that orientation
//! tests on points a few kilometres from the origin keep their sign.

/// A point in the internal frame (Z up).
pub(crate) type V3 = [f32; 3];

/// Twice the signed plan area of `o, a, b`: positive when `b` lies to the left of `o -> a`
/// (counter-clockwise seen from above).
#[inline]
pub(crate) fn cross2(o: V3, a: V3, b: V3) -> f64 {
    let (ax, ay) = (a[0] as f64 - o[0] as f64, a[1] as f64 - o[1] as f64);
    let (bx, by) = (b[0] as f64 - o[0] as f64, b[1] as f64 - o[1] as f64);
    ax * by - ay * bx
}

/// Squared plan distance.
#[inline]
pub(crate) fn plan_dist2(a: V3, b: V3) -> f64 {
    let (dx, dy) = (b[0] as f64 - a[0] as f64, b[1] as f64 - a[1] as f64);
    dx * dx + dy * dy
}

/// 3D distance.
#[inline]
pub(crate) fn dist3(a: V3, b: V3) -> f64 {
    let d = [
        b[0] as f64 - a[0] as f64,
        b[1] as f64 - a[1] as f64,
        b[2] as f64 - a[2] as f64,
    ];
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}

/// The point `a + s (b - a)`.
#[inline]
pub(crate) fn lerp3(a: V3, b: V3, s: f64) -> V3 {
    [0, 1, 2].map(|k| (a[k] as f64 + s * (b[k] as f64 - a[k] as f64)) as f32)
}

/// The 3D midpoint of `a` and `b`.
#[inline]
pub(crate) fn mid3(a: V3, b: V3) -> V3 {
    lerp3(a, b, 0.5)
}

/// Where the plan projection of `p` falls on segment `a..b`: the parameter `s` in `[0, 1]`
/// of the closest point and the squared plan distance to it.
pub(crate) fn closest_on_segment(p: V3, a: V3, b: V3) -> (f64, f64) {
    let (ex, ey) = (b[0] as f64 - a[0] as f64, b[1] as f64 - a[1] as f64);
    let (px, py) = (p[0] as f64 - a[0] as f64, p[1] as f64 - a[1] as f64);
    let len2 = ex * ex + ey * ey;
    let s = if len2 > 0.0 {
        ((px * ex + py * ey) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (dx, dy) = (px - s * ex, py - s * ey);
    (s, dx * dx + dy * dy)
}

/// Plan length of `a..b`.
#[inline]
pub(crate) fn plan_len(a: V3, b: V3) -> f64 {
    plan_dist2(a, b).sqrt()
}

/// Whether the plan point `p` lies in the convex counter-clockwise polygon `pts`, allowing
/// `eps` (a distance) outside each edge.
pub(crate) fn inside(pts: &[V3], p: V3, eps: f64) -> bool {
    let n = pts.len();
    (0..n).all(|i| {
        let (a, b) = (pts[i], pts[(i + 1) % n]);
        // A point on the inner side needs no edge length (`eps` is never negative).
        let c = cross2(a, b, p);
        c >= 0.0 || c >= -eps * plan_len(a, b)
    })
}

/// The squared plan distance from `p` to triangle `t` and the height of the triangle's plane
/// at the closest plan point (interpolated inside, along the nearest edge outside). Works for
/// either winding; a triangle flat in plan is treated as its three edges.
pub(crate) fn triangle_probe(t: &[V3; 3], p: V3) -> (f64, f32) {
    let area = cross2(t[0], t[1], t[2]);
    if area.abs() > 1e-12 {
        let w0 = cross2(p, t[1], t[2]) / area;
        let w1 = cross2(p, t[2], t[0]) / area;
        let w2 = 1.0 - w0 - w1;
        if w0 >= 0.0 && w1 >= 0.0 && w2 >= 0.0 {
            let z = w0 * t[0][2] as f64 + w1 * t[1][2] as f64 + w2 * t[2][2] as f64;
            return (0.0, z as f32);
        }
    }
    let mut best = (f64::INFINITY, t[0][2]);
    for k in 0..3 {
        let (a, b) = (t[k], t[(k + 1) % 3]);
        let (s, d2) = closest_on_segment(p, a, b);
        if d2 < best.0 {
            best = (d2, lerp3(a, b, s)[2]);
        }
    }
    best
}

/// Plan area of a triangle (absolute).
#[inline]
pub(crate) fn triangle_area(t: &[V3; 3]) -> f64 {
    0.5 * cross2(t[0], t[1], t[2]).abs()
}

#[inline]
pub(crate) fn finite3(p: V3) -> bool {
    p.iter().all(|c| c.is_finite())
}
