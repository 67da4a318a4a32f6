//! Exact integer predicates on plan points of the voxel grid.
//!
//! After voxelization every plan coordinate is an integer corner of the one global grid, an
//! `i32` ([`GridPoint`]). Every function here widens to `i64` *before* it subtracts, and is
//! exact (no rounding, no overflow) for coordinates within [`COORD_LIMIT`]
//! (`|x|, |y| <= 2^30 - 1`):
//!
//! - a difference of two coordinates ([`vector`]) has magnitude at most `2^31 - 2`;
//! - a product of two such differences stays below `2^62`, so a sum or difference of two
//!   products ([`cross`], [`dot`], [`length2`], [`orient`], [`dist2`]) stays below `2^63` and
//!   fits an `i64`;
//! - a shoelace term `a.x * b.y - b.x * a.y` ([`twice_area`]) stays below `2^61`; the terms
//!   are added modulo `2^64`, so the sum is exact whenever the true area fits an `i64`, which
//!   it does for every simple ring in range (it lies inside a square of side `2^31 - 2`, so
//!   twice its area is below `2^63`).
//!
//! A grid of `2^30` cells is over 100 000 km at 0.1 m cells: bakes are far inside the range.
//! Outside it results may wrap; nothing checks.
//!
//! Signs follow the counter-clockwise convention of the contours (region on the left): a
//! positive [`orient`] means a left turn, a positive [`twice_area`] a counter-clockwise ring
//! (an outer contour), a negative one a clockwise ring (a hole).

/// A plan point on the voxel grid: `(x, y)` in cells.
pub type GridPoint = (i32, i32);

/// A plan vector between two grid points, widened: `(dx, dy)` in cells.
pub type GridVector = (i64, i64);

/// The largest coordinate magnitude for which every function here is exact.
pub const COORD_LIMIT: i32 = (1 << 30) - 1;

/// True when both coordinates are within [`COORD_LIMIT`].
#[inline]
pub fn in_range(p: GridPoint) -> bool {
    p.0.unsigned_abs() <= COORD_LIMIT as u32 && p.1.unsigned_abs() <= COORD_LIMIT as u32
}

/// The vector from `from` to `to`, widened before subtracting (never overflows).
#[inline]
pub fn vector(from: GridPoint, to: GridPoint) -> GridVector {
    (to.0 as i64 - from.0 as i64, to.1 as i64 - from.1 as i64)
}

/// The cross product `u.x * v.y - u.y * v.x`: positive when `v` turns counter-clockwise from
/// `u`, zero when they are parallel (or one is zero), negative when it turns clockwise.
#[inline]
pub fn cross(u: GridVector, v: GridVector) -> i64 {
    u.0 * v.1 - u.1 * v.0
}

/// The dot product `u.x * v.x + u.y * v.y`: positive when the angle between `u` and `v` is
/// below a right angle, zero at a right angle, negative beyond.
#[inline]
pub fn dot(u: GridVector, v: GridVector) -> i64 {
    u.0 * v.0 + u.1 * v.1
}

/// The squared length of `u`.
#[inline]
pub fn length2(u: GridVector) -> i64 {
    dot(u, u)
}

/// Twice the signed area of the triangle `a, b, c`: positive when `c` lies left of the
/// directed line `a -> b` (the three make a counter-clockwise turn), zero when the three are
/// collinear, negative when `c` lies to the right.
#[inline]
pub fn orient(a: GridPoint, b: GridPoint, c: GridPoint) -> i64 {
    cross(vector(a, b), vector(a, c))
}

/// The squared distance between `a` and `b`.
#[inline]
pub fn dist2(a: GridPoint, b: GridPoint) -> i64 {
    length2(vector(a, b))
}

/// Twice the signed area of the closed ring `ring` (the last point joins the first):
/// positive for a counter-clockwise ring, negative for a clockwise one. Zero for fewer than
/// three points.
pub fn twice_area(ring: &[GridPoint]) -> i64 {
    let n = ring.len();
    twice_area_of_edges((0..n).map(|i| (ring[i], ring[(i + 1) % n])))
}

/// [`twice_area`] of a ring given as its directed edges `(from, to)`, in any order.
pub fn twice_area_of_edges(edges: impl IntoIterator<Item = (GridPoint, GridPoint)>) -> i64 {
    edges.into_iter().fold(0i64, |sum, (a, b)| {
        sum.wrapping_add(a.0 as i64 * b.1 as i64 - b.0 as i64 * a.1 as i64)
    })
}

/// True when `p` lies on the closed segment `a..b` (its ends included).
#[inline]
pub fn on_segment(p: GridPoint, a: GridPoint, b: GridPoint) -> bool {
    orient(a, b, p) == 0
        && p.0 >= a.0.min(b.0)
        && p.0 <= a.0.max(b.0)
        && p.1 >= a.1.min(b.1)
        && p.1 <= a.1.max(b.1)
}

/// True when `p` lies on the segment `a..b` strictly between its ends.
#[inline]
pub fn strictly_inside_segment(p: GridPoint, a: GridPoint, b: GridPoint) -> bool {
    p != a && p != b && on_segment(p, a, b)
}

/// True when the segments `a..b` and `c..d` cross at one point interior to both: each
/// segment's ends lie strictly on opposite sides of the other's line. Touching (an end on the
/// other segment) and collinear overlaps are not crossings.
#[inline]
pub fn cross_properly(a: GridPoint, b: GridPoint, c: GridPoint, d: GridPoint) -> bool {
    let opposite = |s: i64, t: i64| s > 0 && t < 0 || s < 0 && t > 0;
    opposite(orient(a, b, c), orient(a, b, d)) && opposite(orient(c, d, a), orient(c, d, b))
}

/// True when the closed segments `p..q` and `r..s` (each of non-zero length) have a common
/// point other than an end they share: they cross, one ends on the other, or, collinear,
/// they overlap in more than a point. Two segments from one shared end in different
/// directions, or end to end on one line, do not meet beyond it.
pub fn meet_beyond_shared_end(p: GridPoint, q: GridPoint, r: GridPoint, s: GridPoint) -> bool {
    let (d1, d2) = (orient(r, s, p).signum(), orient(r, s, q).signum());
    if d1 == 0 && d2 == 0 {
        // Collinear: positions along p -> q; they meet beyond a shared end when the open
        // ranges overlap.
        let along = |x: GridPoint| dot(vector(p, x), vector(p, q));
        let (lo, hi) = (along(r).min(along(s)), along(r).max(along(s)));
        return lo < along(q) && hi > 0;
    }
    if p == r || p == s || q == r || q == s {
        return false;
    }
    let (d3, d4) = (orient(p, q, r).signum(), orient(p, q, s).signum());
    d1 * d2 <= 0 && d3 * d4 <= 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: i32 = COORD_LIMIT;

    #[test]
    fn orient_is_positive_for_a_left_turn_and_zero_on_a_line() {
        assert_eq!(orient((0, 0), (4, 0), (0, 3)), 12);
        assert_eq!(orient((0, 0), (4, 0), (0, -3)), -12);
        assert_eq!(orient((0, 0), (4, 0), (9, 0)), 0);
        assert_eq!(orient((1, 1), (1, 1), (5, 7)), 0);
    }

    #[test]
    fn extreme_coordinates_give_exact_results() {
        // The largest magnitudes the range allows, worked out in i128.
        let corners = [(-M, -M), (M, -M), (M, M), (-M, M)];
        for &a in &corners {
            for &b in &corners {
                for &c in &corners {
                    let exact = (b.0 as i128 - a.0 as i128) * (c.1 as i128 - a.1 as i128)
                        - (b.1 as i128 - a.1 as i128) * (c.0 as i128 - a.0 as i128);
                    assert_eq!(orient(a, b, c) as i128, exact, "{a:?} {b:?} {c:?}");
                }
                let exact = (b.0 as i128 - a.0 as i128).pow(2) + (b.1 as i128 - a.1 as i128).pow(2);
                assert_eq!(dist2(a, b) as i128, exact);
            }
        }
        // The worst cross product: opposite diagonals of the whole range.
        let d = 2 * M as i64;
        assert_eq!(cross((d, -d), (d, d)), 2 * d * d);
        assert_eq!(dot((d, d), (d, d)), 2 * d * d);
        assert_eq!(length2((-d, d)), 2 * d * d);
        // The whole range as a ring, both ways round, and a long thin sliver.
        let side = d as i128;
        assert_eq!(twice_area(&corners) as i128, 2 * side * side);
        let mut cw = corners;
        cw.reverse();
        assert_eq!(twice_area(&cw) as i128, -2 * side * side);
        assert_eq!(twice_area(&[(-M, -M), (M, M), (M - 1, M)]), d);
        assert!(in_range((M, -M)) && !in_range((M + 1, 0)) && !in_range((0, i32::MIN)));
    }

    #[test]
    fn twice_area_is_signed_by_orientation_and_degenerate_rings_are_zero() {
        let square = [(0, 0), (2, 0), (2, 2), (0, 2)];
        assert_eq!(twice_area(&square), 8);
        let edges = (0..4).map(|k| (square[(k + 1) % 4], square[k]));
        assert_eq!(twice_area_of_edges(edges), -8);
        assert_eq!(twice_area(&[]), 0);
        assert_eq!(twice_area(&[(3, 4)]), 0);
        assert_eq!(twice_area(&[(0, 0), (5, 5)]), 0);
    }

    #[test]
    fn segment_membership_includes_or_excludes_the_ends() {
        assert!(on_segment((2, 0), (0, 0), (4, 0)));
        assert!(on_segment((0, 0), (0, 0), (4, 0)));
        assert!(!on_segment((5, 0), (0, 0), (4, 0)));
        assert!(!on_segment((2, 1), (0, 0), (4, 0)));
        assert!(strictly_inside_segment((2, 2), (0, 0), (4, 4)));
        assert!(!strictly_inside_segment((4, 4), (0, 0), (4, 4)));
        assert!(strictly_inside_segment((0, 0), (-M, -M), (M, M)));
        assert!(!strictly_inside_segment((1, 0), (-M, -M), (M, M)));
    }

    #[test]
    fn proper_crossings_exclude_touches_and_overlaps() {
        assert!(cross_properly((0, 0), (4, 4), (0, 4), (4, 0)));
        assert!(!cross_properly((0, 0), (4, 0), (2, 0), (2, 3)));
        assert!(!cross_properly((0, 0), (4, 0), (2, 0), (6, 0)));
        assert!(!cross_properly((0, 0), (4, 0), (0, 1), (4, 1)));
        assert!(cross_properly((-M, -M), (M, M), (-M, M), (M, -M)));
    }

    #[test]
    fn segments_meet_beyond_a_shared_end_only_when_they_overlap_or_cross() {
        // Crossing, and an end on the other's interior.
        assert!(meet_beyond_shared_end((0, 0), (4, 4), (0, 4), (4, 0)));
        assert!(meet_beyond_shared_end((0, 0), (4, 0), (2, 0), (2, 3)));
        // A shared end in two directions, or end to end on one line: no.
        assert!(!meet_beyond_shared_end((0, 0), (4, 0), (0, 0), (0, 3)));
        assert!(!meet_beyond_shared_end((0, 0), (2, 0), (2, 0), (4, 0)));
        // Collinear overlap, identical and reversed segments: yes.
        assert!(meet_beyond_shared_end((0, 0), (4, 0), (0, 0), (2, 0)));
        assert!(meet_beyond_shared_end((0, 0), (4, 0), (4, 0), (0, 0)));
        // Apart.
        assert!(!meet_beyond_shared_end((0, 0), (4, 0), (5, 0), (9, 0)));
        assert!(!meet_beyond_shared_end((0, 0), (4, 0), (0, 1), (4, 1)));
        // At the range's ends.
        assert!(meet_beyond_shared_end((-M, -M), (M, M), (-M, M), (M, -M)));
        assert!(!meet_beyond_shared_end((-M, -M), (0, 0), (0, 0), (M, M)));
    }
}
