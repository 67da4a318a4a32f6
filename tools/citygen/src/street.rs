//! Street-level geometry: sidewalk rings with kerbs, pedestrian overpasses, and small props
//! (lamp poles, benches, trees, low bumps).
//!
//! Sidewalks are terrain-following closed slabs 0.15 m above the road, one per side of a
//! block; the short end of one strip abuts the tessellated long edge of the next (T-junctions).
//! Props reach 0.3 m into whatever they stand on, as props in real exports do, and a few are
//! emitted twice (duplicate faces).

use crate::builder::{Builder, Frame, Rect};
use crate::rng::Rng;
use crate::terrain::Terrain;

/// Sidewalk width and kerb height.
pub(crate) const SIDEWALK: f64 = 3.0;
pub(crate) const KERB: f64 = 0.15;

/// A terrain-following slab over local `[u0, u1] x [v0, v1]` (long along u), its top `lift`
/// above the hills and its bottom 0.1 m below them; tessellated every 2 m or less along u.
#[allow(clippy::too_many_arguments)]
pub(crate) fn strip(
    b: &mut Builder,
    t: &Terrain,
    f: &Frame,
    u0: f64,
    u1: f64,
    v0: f64,
    v1: f64,
    lift: f64,
) {
    if u1 - u0 < 0.01 || v1 - v0 < 0.01 {
        return;
    }
    let n = ((u1 - u0) / 2.0).ceil().max(1.0) as usize;
    // Per station i: bottom v0, bottom v1, top v0, top v1.
    let mut ids: Vec<[u32; 4]> = Vec::with_capacity(n + 1);
    for i in 0..=n {
        let u = u0 + (u1 - u0) * i as f64 / n as f64;
        let mut s = [0u32; 4];
        for (j, v) in [v0, v1].into_iter().enumerate() {
            let (x, y) = f.pt(u, v);
            let h = t.hills(x, y);
            s[j] = b.v(x, y, h - 0.1);
            s[2 + j] = b.v(x, y, h + lift);
        }
        ids.push(s);
    }
    for i in 0..n {
        let (p, q) = (ids[i], ids[i + 1]);
        b.quad(p[2], q[2], q[3], p[3]); // top
        b.quad(p[0], p[1], q[1], q[0]); // bottom
        b.quad(p[0], q[0], q[2], p[2]); // side at v0 (kerb on the road side for south strips)
        b.quad(q[1], p[1], p[3], q[3]); // side at v1
    }
    let (p, q) = (ids[0], ids[n]);
    b.quad(p[1], p[0], p[2], p[3]); // end at u0
    b.quad(q[0], q[1], q[3], q[2]); // end at u1
}

/// The sidewalk ring of one block: south and north strips full length, west and east strips
/// between them.
pub(crate) fn sidewalk_ring(b: &mut Builder, t: &Terrain, blk: &Rect) {
    let s = SIDEWALK;
    let f0 = Frame {
        ox: 0.0,
        oy: 0.0,
        rot: 0,
    };
    let f1 = Frame {
        ox: 0.0,
        oy: 0.0,
        rot: 1,
    };
    strip(b, t, &f0, blk.x0, blk.x1, blk.y0, blk.y0 + s, KERB);
    strip(b, t, &f0, blk.x0, blk.x1, blk.y1 - s, blk.y1, KERB);
    // Frame rot 1 maps (u, v) to (-v, u): u runs along y.
    strip(
        b,
        t,
        &f1,
        blk.y0 + s,
        blk.y1 - s,
        -(blk.x0 + s),
        -blk.x0,
        KERB,
    );
    strip(
        b,
        t,
        &f1,
        blk.y0 + s,
        blk.y1 - s,
        -blk.x1,
        -(blk.x1 - s),
        KERB,
    );
}

/// A lamp pole: a 0.15 m square post standing 3 m above `z`, its foot 0.3 m below.
pub(crate) fn pole(b: &mut Builder, x: f64, y: f64, z: f64) {
    let h = 0.075;
    b.aabb([x - h, y - h, z - 0.3], [x + h, y + h, z + 3.0]);
}

/// A bench centred at local (0, 0) of `f`: 1.8 m seat along u at 0.45 m, legs, backrest.
pub(crate) fn bench(b: &mut Builder, f: &Frame, z: f64) {
    b.fbox(f, -0.9, -0.225, z + 0.39, 0.9, 0.225, z + 0.45);
    for u in [-0.8, 0.74] {
        b.fbox(f, u, -0.2, z - 0.3, u + 0.06, 0.2, z + 0.39);
    }
    b.fbox(f, -0.9, 0.19, z + 0.45, 0.9, 0.25, z + 0.9);
}

/// A tree: trunk, and a box canopy from 2.6 m (walkable under) to 5 m.
pub(crate) fn tree(b: &mut Builder, x: f64, y: f64, z: f64, r: f64) {
    b.aabb([x - 0.15, y - 0.15, z - 0.3], [x + 0.15, y + 0.15, z + 2.7]);
    b.aabb([x - r, y - r, z + 2.6], [x + r, y + r, z + 5.0]);
}

/// A low bump following the ground: local `[u0, u1] x [v0, v1]` of `f`, `height` above it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bump(
    b: &mut Builder,
    t: &Terrain,
    f: &Frame,
    u0: f64,
    v0: f64,
    u1: f64,
    v1: f64,
    height: f64,
) {
    let mut p = [[0.0; 3]; 8];
    for (n, q) in p.iter_mut().enumerate() {
        let u = if n & 1 == 0 { u0 } else { u1 };
        let v = if n & 2 == 0 { v0 } else { v1 };
        let (x, y) = f.pt(u, v);
        let g = t.height(x, y);
        *q = [u, v, if n & 4 == 0 { g - 0.1 } else { g + height }];
    }
    b.fhexa(f, &p);
}

/// Poles along the kerb side of a block's sidewalk ring, skipping `avoid` (bridges).
pub(crate) fn ring_props(b: &mut Builder, t: &Terrain, blk: &Rect, rng: &mut Rng, avoid: &[Rect]) {
    let inset = 0.5;
    // (start, end, fixed coordinate, along x?)
    let sides = [
        (blk.x0, blk.x1, blk.y0 + inset, true),
        (blk.x0, blk.x1, blk.y1 - inset, true),
        (blk.y0, blk.y1, blk.x0 + inset, false),
        (blk.y0, blk.y1, blk.x1 - inset, false),
    ];
    for (s0, s1, fixed, along_x) in sides {
        let mut s = s0 + rng.range(3.0, 8.0);
        while s < s1 - 3.0 {
            let (x, y) = if along_x { (s, fixed) } else { (fixed, s) };
            if !avoid.iter().any(|r| r.grow(1.0).contains(x, y)) {
                pole(b, x, y, t.hills(x, y) + KERB);
            }
            s += rng.range(16.0, 24.0);
        }
    }
}

/// Trees, benches, poles and bumps scattered over a park lot (avoiding `avoid`).
pub(crate) fn park_props(b: &mut Builder, t: &Terrain, lot: &Rect, rng: &mut Rng, avoid: &[Rect]) {
    let area = lot.w() * lot.h();
    let inner = lot.grow(-1.5);
    if inner.w() < 2.0 || inner.h() < 2.0 {
        return;
    }
    let free = |x: f64, y: f64| !avoid.iter().any(|r| r.grow(2.0).contains(x, y));
    let spot = |rng: &mut Rng| {
        let x = rng.range(inner.x0, inner.x1);
        let y = rng.range(inner.y0, inner.y1);
        (x, y, free(x, y))
    };
    for _ in 0..(area / 120.0).ceil() as usize {
        let (x, y, ok) = spot(rng);
        let r = rng.range(1.2, 2.2);
        if ok {
            tree(b, x, y, t.height(x, y), r);
        }
    }
    for _ in 0..1 + (area / 200.0) as usize {
        let (x, y, ok) = spot(rng);
        let rot = rng.int(0, 3) as u8;
        let twice = rng.chance(0.05);
        if ok {
            let f = Frame { ox: x, oy: y, rot };
            let z = t.height(x, y);
            bench(b, &f, z);
            if twice {
                bench(b, &f, z); // duplicate faces, as a careless export has them
            }
        }
    }
    for _ in 0..1 + (area / 250.0) as usize {
        let (x, y, ok) = spot(rng);
        if ok {
            pole(b, x, y, t.height(x, y));
        }
    }
    // Low kerb-like bumps (planter edges), 0.1-0.3 m: always climbable.
    for _ in 0..1 + (area / 400.0) as usize {
        let (x, y, ok) = spot(rng);
        let len = rng.range(2.0, 5.0);
        let height = rng.range(0.1, 0.3);
        let rot = rng.int(0, 3) as u8;
        if ok {
            let f = Frame { ox: x, oy: y, rot };
            bump(b, t, &f, -len / 2.0, -0.15, len / 2.0, 0.15, height);
        }
    }
}

/// A pedestrian overpass across one road, in its own frame: `u` along the bridge (0 on the
/// road's centre line), `v` across it.
#[derive(Clone, Debug)]
pub(crate) struct Bridge {
    pub frame: Frame,
    /// Half length of the level deck, deck width, deck top height.
    pub half: f64,
    pub width: f64,
    pub top: f64,
    /// Ramp runs and foot heights on the -u and +u sides.
    pub runs: [f64; 2],
    pub feet: [f64; 2],
}

/// Clear height under the deck, deck thickness, steepest ramp (tan 22 degrees).
const CLEARANCE: f64 = 4.2;
const DECK: f64 = 0.4;
const RAMP_TAN: f64 = 0.404_026_225_835_156_8;

impl Bridge {
    /// Plans a bridge across a road of half width `hw` whose centre line passes through the
    /// frame origin along local v. `None` if it would leave the world.
    pub(crate) fn plan(t: &Terrain, frame: Frame, hw: f64, extent: f64) -> Option<Bridge> {
        let half = hw + SIDEWALK + 1.0;
        let width = 3.0;
        let ground = |u: f64| {
            [-width / 2.0, 0.0, width / 2.0]
                .iter()
                .map(|&v| {
                    let (x, y) = frame.pt(u, v);
                    t.hills(x, y)
                })
                .fold(f64::MIN, f64::max)
        };
        let mut under = f64::MIN;
        let mut u = -half;
        while u <= half {
            under = under.max(ground(u));
            u += 1.0;
        }
        let top = under + CLEARANCE + DECK;
        let mut runs = [0.0; 2];
        let mut feet = [0.0; 2];
        for (k, sign) in [-1.0, 1.0].into_iter().enumerate() {
            let mut run = (top - ground(sign * half)) / RAMP_TAN;
            for _ in 0..4 {
                let foot = ground(sign * (half + run));
                run = ((top - foot) / RAMP_TAN).max(run);
            }
            runs[k] = run.ceil();
            feet[k] = ground(sign * (half + runs[k]));
        }
        let bridge = Bridge {
            frame,
            half,
            width,
            top,
            runs,
            feet,
        };
        let r = bridge.footprint();
        (r.x0 >= 1.0 && r.y0 >= 1.0 && r.x1 <= extent - 1.0 && r.y1 <= extent - 1.0)
            .then_some(bridge)
    }

    pub(crate) fn footprint(&self) -> Rect {
        self.frame.rect(
            -self.half - self.runs[0],
            -self.width / 2.0,
            self.half + self.runs[1],
            self.width / 2.0,
        )
    }

    /// The run (along u) from the deck's far end at -u to its far end at +u with both ramps.
    pub(crate) fn span(&self) -> (f64, f64) {
        (-self.half - self.runs[0], self.half + self.runs[1])
    }

    pub(crate) fn emit(&self, b: &mut Builder, t: &Terrain) {
        let f = &self.frame;
        let (h, w2, top) = (self.half, self.width / 2.0, self.top);
        let rail = 0.06;
        // Deck and its railings.
        b.fbox(f, -h, -w2, top - DECK, h, w2, top);
        b.fbox(f, -h, -w2, top, h, -w2 + rail, top + 1.0);
        b.fbox(f, -h, w2 - rail, top, h, w2, top + 1.0);
        // Ramps: sloped slabs with railings, from the deck ends down to the feet.
        for k in 0..2 {
            let (ua, za, ub, zb) = if k == 0 {
                (-h - self.runs[0], self.feet[0], -h, top)
            } else {
                (h, top, h + self.runs[1], self.feet[1])
            };
            let sloped = |v0: f64, v1: f64, lo: f64, hi: f64| {
                let mut p = [[0.0; 3]; 8];
                for (n, q) in p.iter_mut().enumerate() {
                    let (u, z) = if n & 1 == 0 { (ua, za) } else { (ub, zb) };
                    let v = if n & 2 == 0 { v0 } else { v1 };
                    *q = [u, v, z + if n & 4 == 0 { lo } else { hi }];
                }
                p
            };
            b.fhexa(f, &sloped(-w2, w2, -DECK, 0.0));
            b.fhexa(f, &sloped(-w2, -w2 + rail, 0.0, 1.0));
            b.fhexa(f, &sloped(w2 - rail, w2, 0.0, 1.0));
            // A pier under the middle of the ramp.
            let um = 0.5 * (ua + ub);
            let (x, y) = f.pt(um, 0.0);
            let zr = 0.5 * (za + zb) - DECK;
            let g = t.hills(x, y);
            if zr - g > 1.0 {
                b.fbox(f, um - 0.25, -0.25, g - 0.5, um + 0.25, 0.25, zr);
            }
        }
        // Piers under the deck ends, just beyond the sidewalks.
        for u in [-h + 0.2, h - 0.6] {
            for v in [-w2 + 0.2, w2 - 0.6] {
                let (x, y) = f.pt(u + 0.2, v + 0.2);
                let g = t.hills(x, y);
                b.fbox(f, u, v, g - 0.5, u + 0.4, v + 0.4, top - DECK);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::tests::{piece_volumes6, volume6};

    #[test]
    fn sidewalk_strips_are_closed_and_outward() {
        let t = Terrain::new(3, 100.0);
        for rot in 0..4 {
            let f = Frame {
                ox: 50.0,
                oy: 50.0,
                rot,
            };
            let mut b = Builder::new([0.0; 3], 0, 0);
            strip(&mut b, &t, &f, -10.0, 7.0, 1.0, 4.0, KERB);
            // 17 m x 3 m x 0.25 m, give or take the ground's curvature.
            let v = volume6(&b.mesh) / 6.0;
            assert!((v - 17.0 * 3.0 * 0.25).abs() < 0.05, "rot {rot}: {v}");
            // Every edge is shared by exactly two triangles, in opposite directions.
            let mut edges: Vec<(u32, u32)> = b
                .mesh
                .triangles
                .iter()
                .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
                .collect();
            edges.sort();
            for &(a, c) in &edges {
                assert!(edges.binary_search(&(c, a)).is_ok());
            }
        }
    }

    #[test]
    fn bridges_have_clearance_and_gentle_ramps() {
        let t = Terrain::new(9, 250.0);
        for (x, y, rot) in [(60.0, 120.0, 0), (130.0, 70.0, 1)] {
            let f = Frame { ox: x, oy: y, rot };
            let br = Bridge::plan(&t, f, 4.0, 250.0).expect("fits");
            for u in [-br.half, 0.0, br.half] {
                let (x, y) = f.pt(u, 0.0);
                assert!(br.top - DECK - t.hills(x, y) > 3.0);
            }
            let mut b = Builder::new([0.0; 3], 0, 0);
            br.emit(&mut b, &t);
            bench(&mut b, &f, 3.0);
            bump(&mut b, &t, &f, -2.0, -0.2, 2.0, 0.2, 0.2);
            assert!(piece_volumes6(&b.mesh).iter().all(|&v| v > 1e-4));
            for k in 0..2 {
                let slope = (br.top - br.feet[k]) / br.runs[k];
                assert!(slope < 0.466, "ramp steeper than 25 degrees: {slope}");
                // tan 25
            }
        }
    }
}
