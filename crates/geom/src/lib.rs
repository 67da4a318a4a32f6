//! Geometry shared by every stage: the up-axis convention, floors and ceilings to integers
//! without libm ([`floor_i64`]), axis-aligned bounds in world (f64) and
//! rebased (f32) space, the 2D triangle/rectangle overlap test the tiler uses, points read from
//! `X,Y,Z` text ([`parse_point`]), and [`predicates`]: the exact integer tests on grid points
//! (orientation, distances, ring areas, segment tests) that contours, simplification and the
//! partitions share.
//!
//! Conventions: tessera works Z-up internally. Input that is Y-up is converted once, at ingest,
//! by [`UpAxis::to_z_up`]; outputs go back through [`UpAxis::from_z_up`]. World coordinates are
//! f64 (a city in UTM-like coordinates needs it); after ingest every coordinate is rebased on the
//! world origin and stored as f32, which keeps sub-millimetre precision over several kilometres.
//!
//! This crate does no I/O and depends on nothing but serde and thiserror.

mod point;

pub use point::{parse_point, PointError};

pub mod predicates;
pub mod union_find;

use serde::{Deserialize, Serialize};

/// The message a panic carried (`panic!` with a literal or a formatted string), if any: for
/// the places that turn a panic into an error instead of unwinding further.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
}

/// `x.floor() as i64` for every `x` (saturating, NaN to 0), without the call to libm's `floor`
/// that `f64::floor` is on the baseline x86-64 target (no rounding instruction before SSE4.1):
/// the truncation, one less where it rounded up. Branch-free, since the rasterizer asks it of
/// heights that fall either side of a grid line unpredictably.
#[inline]
pub fn floor_i64(x: f64) -> i64 {
    let t = x as i64;
    t.saturating_sub(((t as f64) > x) as i64)
}

/// `x.ceil() as i64` likewise (saturating, NaN to 0).
#[inline]
pub fn ceil_i64(x: f64) -> i64 {
    let t = x as i64;
    t.saturating_add(((t as f64) < x) as i64)
}
use std::fmt;

/// Which axis points up in a source scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpAxis {
    /// Y up (most game engines, glTF by specification).
    Y,
    /// Z up (the seeds, GIS, many CAD tools). tessera's internal convention.
    Z,
}

impl UpAxis {
    /// Converts a point from this convention to tessera's Z-up, keeping the frame right-handed:
    /// Y-up `(x, y, z)` becomes `(x, -z, y)`.
    #[inline]
    pub fn to_z_up(self, p: [f64; 3]) -> [f64; 3] {
        match self {
            UpAxis::Z => p,
            UpAxis::Y => [p[0], -p[2], p[1]],
        }
    }

    /// The inverse of [`UpAxis::to_z_up`].
    #[inline]
    pub fn from_z_up(self, p: [f64; 3]) -> [f64; 3] {
        match self {
            UpAxis::Z => p,
            UpAxis::Y => [p[0], p[2], -p[1]],
        }
    }

    /// Parses `y` or `z` (case-insensitive).
    pub fn parse(s: &str) -> Option<UpAxis> {
        match s.to_ascii_lowercase().as_str() {
            "y" => Some(UpAxis::Y),
            "z" => Some(UpAxis::Z),
            _ => None,
        }
    }

    /// A stable one-byte code for file headers.
    pub fn code(self) -> u8 {
        match self {
            UpAxis::Y => b'y',
            UpAxis::Z => b'z',
        }
    }

    /// The inverse of [`UpAxis::code`].
    pub fn from_code(c: u8) -> Option<UpAxis> {
        match c {
            b'y' => Some(UpAxis::Y),
            b'z' => Some(UpAxis::Z),
            _ => None,
        }
    }
}

impl fmt::Display for UpAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UpAxis::Y => "y",
            UpAxis::Z => "z",
        })
    }
}

/// Axis-aligned bounds in world coordinates (metres, f64, Z-up).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorldBounds {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

impl WorldBounds {
    /// Bounds that contain nothing; growing them by a point makes them that point.
    pub const EMPTY: WorldBounds = WorldBounds {
        min: [f64::INFINITY; 3],
        max: [f64::NEG_INFINITY; 3],
    };

    /// Grows the bounds to contain `p`.
    #[inline]
    pub fn grow(&mut self, p: [f64; 3]) {
        for (axis, &v) in p.iter().enumerate() {
            self.min[axis] = self.min[axis].min(v);
            self.max[axis] = self.max[axis].max(v);
        }
    }

    /// Grows the bounds to contain `other`.
    pub fn union(&mut self, other: &WorldBounds) {
        if !other.is_empty() {
            self.grow(other.min);
            self.grow(other.max);
        }
    }

    /// True when no point was ever added.
    pub fn is_empty(&self) -> bool {
        self.min[0] > self.max[0]
    }

    /// Size along each axis (zero for empty bounds).
    pub fn extent(&self) -> [f64; 3] {
        if self.is_empty() {
            return [0.0; 3];
        }
        [
            self.max[0] - self.min[0],
            self.max[1] - self.min[1],
            self.max[2] - self.min[2],
        ]
    }
}

/// A rebased triangle: three Z-up vertices in metres relative to the world origin, as stored in
/// the scene cache and the tile files.
pub type Triangle = [[f32; 3]; 3];

/// True when the triangle has (numerically) zero area in f64 or repeats a vertex. Such
/// triangles carry no surface and are skipped and counted at ingest.
pub fn is_degenerate(t: &[[f64; 3]; 3]) -> bool {
    if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
        return true;
    }
    let n = normal(t);
    let len2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    // Compare with the squared edge scale so that the test is unit-free.
    let scale = edge_len2(t[0], t[1])
        .max(edge_len2(t[1], t[2]))
        .max(edge_len2(t[2], t[0]));
    len2 <= scale * scale * 1e-24
}

#[inline]
fn edge_len2(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
}

/// The (unnormalised) normal `(b - a) x (c - a)`: its direction follows the winding.
#[inline]
pub fn normal(t: &[[f64; 3]; 3]) -> [f64; 3] {
    let e0 = [t[1][0] - t[0][0], t[1][1] - t[0][1], t[1][2] - t[0][2]];
    let e1 = [t[2][0] - t[0][0], t[2][1] - t[0][1], t[2][2] - t[0][2]];
    [
        e0[1] * e1[2] - e0[2] * e1[1],
        e0[2] * e1[0] - e0[0] * e1[2],
        e0[0] * e1[1] - e0[1] * e1[0],
    ]
}

/// Conservative 2D overlap test between a triangle's XY projection and the closed rectangle
/// `[min, max]`, by the separating axis theorem (rectangle axes, then the triangle's edge
/// normals). Touching counts as overlap: a triangle on a shared border goes to both sides.
pub fn triangle_overlaps_rect(t: &[[f64; 2]; 3], min: [f64; 2], max: [f64; 2]) -> bool {
    for axis in 0..2 {
        let lo = t[0][axis].min(t[1][axis]).min(t[2][axis]);
        let hi = t[0][axis].max(t[1][axis]).max(t[2][axis]);
        if hi < min[axis] || lo > max[axis] {
            return false;
        }
    }
    let corners = [
        [min[0], min[1]],
        [max[0], min[1]],
        [max[0], max[1]],
        [min[0], max[1]],
    ];
    for i in 0..3 {
        let a = t[i];
        let b = t[(i + 1) % 3];
        let c = t[(i + 2) % 3];
        // Edge normal (not normalised); the triangle lies on the side of `c`.
        let n = [b[1] - a[1], a[0] - b[0]];
        let side_c = n[0] * (c[0] - a[0]) + n[1] * (c[1] - a[1]);
        if side_c == 0.0 {
            // Degenerate in plan (a vertical triangle): the bounding-box test above is the
            // honest answer for a segment, and it is conservative.
            return true;
        }
        let all_outside = corners.iter().all(|q| {
            let s = n[0] * (q[0] - a[0]) + n[1] * (q[1] - a[1]);
            if side_c > 0.0 {
                s < 0.0
            } else {
                s > 0.0
            }
        });
        if all_outside {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_tells_its_message() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let literal = std::panic::catch_unwind(|| panic!("a literal")).unwrap_err();
        let formatted = std::panic::catch_unwind(|| panic!("{} formatted", 1)).unwrap_err();
        let other = std::panic::catch_unwind(|| std::panic::panic_any(7u8)).unwrap_err();
        std::panic::set_hook(hook);
        assert_eq!(panic_message(&*literal).as_deref(), Some("a literal"));
        assert_eq!(panic_message(&*formatted).as_deref(), Some("1 formatted"));
        assert_eq!(panic_message(&*other), None);
    }

    #[test]
    fn floor_and_ceil_are_libms_then_cast() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.999_999_999,
            -2.000_000_001,
            f64::EPSILON,
            -f64::EPSILON,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            4503599627370495.5,
            -4503599627370495.5,
            9007199254740993.0,
            9.223372036854775e18,
            -9.223372036854775e18,
            9.3e18,
            -9.3e18,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(f64::from_bits(state));
            values.push((state % 2_000_001) as f64 / 1000.0 - 1000.0);
        }
        for x in values {
            assert_eq!(floor_i64(x), x.floor() as i64, "{x:e}");
            // As the first tile of a range takes it.
            assert_eq!(floor_i64(x).max(0), x.floor().max(0.0) as i64, "{x:e}");
            assert_eq!(ceil_i64(x), x.ceil() as i64, "{x:e}");
        }
    }

    #[test]
    fn up_axis_round_trip_and_handedness() {
        let p = [1.0, 2.0, 3.0];
        assert_eq!(UpAxis::Y.to_z_up(p), [1.0, -3.0, 2.0]);
        assert_eq!(UpAxis::Y.from_z_up(UpAxis::Y.to_z_up(p)), p);
        assert_eq!(UpAxis::Z.to_z_up(p), p);
        // A Y-up floor facing +Y must face +Z after conversion (the winding is kept).
        let tri = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]];
        let y_up_normal = normal(&tri);
        assert!(y_up_normal[1] > 0.0);
        let converted = tri.map(|v| UpAxis::Y.to_z_up(v));
        assert!(normal(&converted)[2] > 0.0);
    }

    #[test]
    fn degenerate_triangles() {
        assert!(is_degenerate(&[[0.0; 3], [0.0; 3], [1.0, 0.0, 0.0]]));
        assert!(is_degenerate(&[[0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]));
        assert!(!is_degenerate(&[
            [0.0; 3],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0]
        ]));
        // Tiny but real at UTM scale.
        assert!(!is_degenerate(&[
            [500000.0, 0.0, 0.0],
            [500000.01, 0.0, 0.0],
            [500000.0, 0.01, 0.0]
        ]));
    }

    #[test]
    fn triangle_rect_overlap() {
        let t = [[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]];
        assert!(triangle_overlaps_rect(&t, [1.0, 1.0], [2.0, 2.0]));
        // Beyond the hypotenuse, inside the bounding box.
        assert!(!triangle_overlaps_rect(&t, [8.0, 8.0], [9.0, 9.0]));
        // Touching the hypotenuse at a corner counts.
        assert!(triangle_overlaps_rect(&t, [5.0, 5.0], [6.0, 6.0]));
        assert!(!triangle_overlaps_rect(&t, [11.0, 0.0], [12.0, 1.0]));
        // Rectangle fully inside a huge triangle.
        let big = [[-1e4, -1e4], [1e4, -1e4], [0.0, 1e4]];
        assert!(triangle_overlaps_rect(&big, [0.0, 0.0], [1.0, 1.0]));
    }
}
