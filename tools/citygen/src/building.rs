//! Multi-storey buildings.
//!
//! A building is laid out in its own frame: `u` runs along the street front, `v` into the lot,
//! the front wall stands at `v = 0` on the sidewalk's inner edge. Plan, front to back:
//!
//! ```text
//!  v = d  +---------------- back wall ---------------+
//!         |      [band B: flight k = 1, 3, ... ]      |   vertical core: straight flights
//!         |      [band A: flight k = 0, 2, ... ]      |   alternating between two bands
//!         |  hall                                     |
//!         +---door---------- mid wall ------door------+
//!         |  room  |  room   |  room                  |   rooms split by cross walls
//!  v = 0  +-------------door (ground floor)-----------+   with doorways
//!        u = 0                                     u = w
//! ```
//!
//! Every piece is a closed solid (boxes; wedges for ramps): a ground slab reaching below the
//! lowest ground under the footprint; per storey a floor slab (with the stairwell opening of
//! the flight arriving from below), outer walls with windows and sills, the street door and
//! often a back door on the ground floor, interior walls with 1.8 m doorways, one flight of
//! individual steps with a handrail (or a wedge ramp in some buildings), 1 m railings around
//! the opening, tables with chairs; a parapet on the roof.

use crate::builder::{Builder, Frame, Rect};
use crate::rng::Rng;
use crate::terrain::Terrain;

/// Storey height, floor top to floor top.
pub(crate) const STOREY: f64 = 3.0;
/// Outer and inner wall thickness.
const OUTER: f64 = 0.3;
const INNER: f64 = 0.15;
/// Depth of the hall between the mid wall and the core.
const HALL: f64 = 2.0;
/// Steps per storey: rise 3.0 / 17 = 0.176 m, tread 0.3 m.
const STEPS: usize = 17;
const TREAD: f64 = 0.3;
/// Room to stand at either end of a flight.
const LANDING: f64 = 1.8;
/// Narrowest footprint (u) and shallowest (v) a building may have.
pub(crate) const MIN_W: f64 = 12.0;
pub(crate) const MIN_D: f64 = 11.0;
/// Narrowest footprint that fits a ramp core (9 m run plus landings and walls).
pub(crate) const RAMP_MIN_W: f64 = 13.5;

/// The stair or ramp core: two bands along the back wall, `[u0, u0 + len]` long.
#[derive(Clone, Debug)]
pub(crate) struct Core {
    pub ramp: bool,
    pub band_w: f64,
    pub len: f64,
    pub u0: f64,
    /// Low `v` of band A (flights from even storeys, rising +u) and of band B (odd, rising -u).
    pub a_v0: f64,
    pub b_v0: f64,
}

#[derive(Clone, Debug)]
pub(crate) struct Building {
    pub frame: Frame,
    pub w: f64,
    pub d: f64,
    pub floors: u32,
    pub slab: f64,
    /// Top of the ground floor (street-door threshold), and the bottom of the ground slab.
    pub z0: f64,
    pub zb: f64,
    pub core: Option<Core>,
    /// Centre line of the wall between the front rooms and the hall.
    pub vm: f64,
    /// Centre lines of the walls between front rooms.
    pub cross: Vec<f64>,
    pub door_u: f64,
    /// A second street-level door in the back wall, where the core leaves room for one.
    pub back_door_u: Option<f64>,
    pub mid_doors: Vec<f64>,
    pub win_spacing: f64,
    pub seed: u64,
}

/// What a lot asks of [`Building::plan`].
pub(crate) struct Wish {
    pub floors: (u32, u32),
    /// `Some(true)` forces a ramp core (if it fits), `Some(false)` forbids one.
    pub ramp: Option<bool>,
    /// Range of the free strip left on each side of the building within its lot.
    pub gap: (f64, f64),
}

impl Building {
    /// Fits a building into `lot`, front on the lot's south edge (or north if `front_north`).
    /// `None` if the lot is too small.
    pub(crate) fn plan(
        lot: &Rect,
        front_north: bool,
        seed: u64,
        wish: &Wish,
        terrain: &Terrain,
    ) -> Option<Building> {
        let mut rng = Rng::derive(seed, 0xB01D);
        let gl = rng.range(wish.gap.0, wish.gap.1);
        let gr = rng.range(wish.gap.0, wish.gap.1);
        let w = (lot.w() - gl - gr).min(40.0);
        let d = (lot.h() - rng.range(2.0, 4.0)).min(rng.range(MIN_D, 22.0));
        if w < MIN_W || d < MIN_D {
            return None;
        }
        let frame = if front_north {
            Frame {
                ox: lot.x1 - gl,
                oy: lot.y1,
                rot: 2,
            }
        } else {
            Frame {
                ox: lot.x0 + gl,
                oy: lot.y0,
                rot: 0,
            }
        };
        let floors = rng.int(wish.floors.0, wish.floors.1);
        let slab = rng.range(0.2, 0.3);
        let want_ramp = rng.chance(0.25);
        let core = (floors >= 2).then(|| {
            let ramp = wish.ramp.unwrap_or(want_ramp) && w >= RAMP_MIN_W;
            // Flights wider than the 1.2 m a 0.6 m-radius agent needs.
            let band_w = if ramp { 2.0 } else { 1.8 };
            // Ramp: 3 m over 9 m, 18.4 degrees.
            let len = if ramp { 9.0 } else { STEPS as f64 * TREAD };
            let core_d = 2.0 * band_w + 0.1;
            Core {
                ramp,
                band_w,
                len,
                u0: rng.range(OUTER + LANDING, w - OUTER - LANDING - len),
                a_v0: d - OUTER - core_d,
                b_v0: d - OUTER - band_w,
            }
        });
        let vm = match &core {
            Some(c) => c.a_v0 - HALL - INNER / 2.0,
            None => d * rng.range(0.5, 0.6),
        };
        // Front rooms.
        let inside = w - 2.0 * OUTER;
        let rooms = ((inside / rng.range(5.0, 8.0)).floor() as usize).clamp(1, 5);
        let cross: Vec<f64> = (1..rooms)
            .map(|k| OUTER + inside * k as f64 / rooms as f64 + rng.range(-0.5, 0.5))
            .collect();
        let spans = room_spans(w, &cross);
        let mid_doors = spans
            .iter()
            .map(|&(a, b)| 0.5 * (a + b) + rng.range(-0.25, 0.25) * (b - a - 2.2).max(0.0))
            .collect();
        let (ra, rb) = spans[rng.int(0, spans.len() as u32 - 1) as usize];
        let door_u = 0.5 * (ra + rb) + rng.range(-0.25, 0.25) * (rb - ra - 2.0).max(0.0);
        // A back door beside the core (or anywhere without one).
        let (lo, hi) = match &core {
            Some(c) => (c.u0 - 0.6, c.u0 + c.len + 0.6),
            None => (0.0, 0.0),
        };
        let pick = rng.range(OUTER + 1.2, w - OUTER - 1.2);
        let back_door_u = (rng.chance(0.6) && (pick + 1.0 < lo || pick - 1.0 > hi)).then_some(pick);
        // The threshold meets the sidewalk (0.15 m above the road) in front of the door.
        let (dx, dy) = frame.pt(door_u, 0.0);
        let z0 = terrain.hills(dx, dy) + 0.15;
        let mut low = z0;
        let (nu, nv) = ((w / 2.0).ceil() as usize, (d / 2.0).ceil() as usize);
        for j in 0..=nv {
            for i in 0..=nu {
                let (x, y) = frame.pt(w * i as f64 / nu as f64, d * j as f64 / nv as f64);
                low = low.min(terrain.hills(x, y));
            }
        }
        Some(Building {
            frame,
            w,
            d,
            floors,
            slab,
            z0,
            zb: (low - 0.3).min(z0 - 0.45),
            core,
            vm,
            cross,
            door_u,
            back_door_u,
            mid_doors,
            win_spacing: rng.range(2.8, 3.8),
            seed,
        })
    }

    pub(crate) fn footprint(&self) -> Rect {
        self.frame.rect(0.0, 0.0, self.w, self.d)
    }

    pub(crate) fn is_ramp(&self) -> bool {
        self.core.as_ref().is_some_and(|c| c.ramp)
    }

    pub(crate) fn emit(&self, b: &mut Builder) {
        let f = self.frame;
        let mut rng = Rng::derive(self.seed, 0xF00D);
        b.fbox(&f, 0.0, 0.0, self.zb, self.w, self.d, self.z0);
        for k in 0..self.floors {
            let base = self.z0 + STOREY * k as f64;
            let next = base + STOREY;
            let ceiling = next - self.slab;
            let flight = self.core.as_ref().filter(|_| k + 1 < self.floors);
            let hole = flight.map(|c| {
                let v0 = if k & 1 == 0 { c.a_v0 } else { c.b_v0 };
                (c.u0, v0, c.u0 + c.len, v0 + c.band_w)
            });
            slab_with_hole(b, &f, self.w, self.d, ceiling, next, hole);
            self.outer_walls(b, k, base, ceiling);
            self.inner_walls(b, base, ceiling);
            if let Some(c) = flight {
                flight_and_railings(b, &f, c, k, base);
            }
            self.furniture(b, &mut rng, base);
        }
        let roof = self.z0 + STOREY * self.floors as f64;
        let (w, d, t) = (self.w, self.d, 0.2);
        b.fbox(&f, 0.0, 0.0, roof, w, t, roof + 1.0);
        b.fbox(&f, 0.0, d - t, roof, w, d, roof + 1.0);
        b.fbox(&f, 0.0, t, roof, t, d - t, roof + 1.0);
        b.fbox(&f, w - t, t, roof, w, d - t, roof + 1.0);
    }

    fn outer_walls(&self, b: &mut Builder, k: u32, base: f64, top: f64) {
        let f = &self.frame;
        let (w, d) = (self.w, self.d);
        let sill = (base + 0.9, base + 2.1);
        // Front: the street door on the ground floor, windows clear of the cross walls.
        let mut keep_out: Vec<(f64, f64)> =
            self.cross.iter().map(|&c| (c - 0.5, c + 0.5)).collect();
        let mut open = Vec::new();
        if k == 0 {
            keep_out.push((self.door_u - 1.6, self.door_u + 1.6));
            open.push((self.door_u - 1.0, self.door_u + 1.0, base, base + 2.4));
        }
        let win = windows(0.0, w, self.win_spacing, &keep_out, sill);
        sills(b, f, true, &win, -0.06, 0.0);
        open.extend(win);
        wall(b, f, true, 0.0, w, 0.0, OUTER, base, top, &mut open);
        // Back: no windows beside the flights; the back door on the ground floor.
        let mut keep_out: Vec<(f64, f64)> = self
            .core
            .iter()
            .map(|c| (c.u0 - 0.3, c.u0 + c.len + 0.3))
            .collect();
        let mut open = Vec::new();
        if let (0, Some(u)) = (k, self.back_door_u) {
            keep_out.push((u - 1.6, u + 1.6));
            open.push((u - 1.0, u + 1.0, base, base + 2.4));
        }
        let win = windows(0.0, w, self.win_spacing, &keep_out, sill);
        sills(b, f, true, &win, d, d + 0.06);
        open.extend(win);
        wall(b, f, true, 0.0, w, d - OUTER, d, base, top, &mut open);
        // Sides, clear of the mid wall.
        let keep_out = [(self.vm - 0.5, self.vm + 0.5)];
        let mut open = windows(OUTER, d - OUTER, self.win_spacing, &keep_out, sill);
        sills(b, f, false, &open, -0.06, 0.0);
        sills(b, f, false, &open, w, w + 0.06);
        wall(
            b,
            f,
            false,
            OUTER,
            d - OUTER,
            0.0,
            OUTER,
            base,
            top,
            &mut open,
        );
        wall(
            b,
            f,
            false,
            OUTER,
            d - OUTER,
            w - OUTER,
            w,
            base,
            top,
            &mut open,
        );
    }

    fn inner_walls(&self, b: &mut Builder, base: f64, top: f64) {
        let f = &self.frame;
        let door = 2.3;
        let mut open: Vec<_> = self
            .mid_doors
            .iter()
            .map(|&c| (c - 0.9, c + 0.9, base, base + door))
            .collect();
        let (m0, m1) = (self.vm - INNER / 2.0, self.vm + INNER / 2.0);
        wall(
            b,
            f,
            true,
            OUTER,
            self.w - OUTER,
            m0,
            m1,
            base,
            top,
            &mut open,
        );
        let front_depth = m0 - OUTER;
        for &c in &self.cross {
            let mid = OUTER + front_depth / 2.0;
            let mut open = if front_depth >= 3.0 {
                vec![(mid - 0.9, mid + 0.9, base, base + door)]
            } else {
                Vec::new()
            };
            let (c0, c1) = (c - INNER / 2.0, c + INNER / 2.0);
            wall(b, f, false, OUTER, m0, c0, c1, base, top, &mut open);
        }
    }

    /// A table (0.75 m top on four legs) in some front rooms.
    fn furniture(&self, b: &mut Builder, rng: &mut Rng, base: f64) {
        let f = &self.frame;
        // Table (0.8 m deep) with a chair on either side, leaving 1.4 m to the walls so no
        // doorway is blocked.
        let v_hi = self.vm - INNER / 2.0 - 1.4 - 1.35;
        let v_lo = OUTER + 1.4 + 0.55;
        for (a, c) in room_spans(self.w, &self.cross) {
            let (u_lo, u_hi) = (a + 1.3, c - 1.3 - 1.2);
            let roll = rng.f64();
            let (pu, pv) = (rng.f64(), rng.f64());
            if roll > 0.7 || u_hi <= u_lo || v_hi <= v_lo {
                continue;
            }
            let (u, v) = (u_lo + pu * (u_hi - u_lo), v_lo + pv * (v_hi - v_lo));
            let top = base + 0.75;
            b.fbox(f, u, v, top - 0.04, u + 1.2, v + 0.8, top);
            for (lu, lv) in [(0.05, 0.05), (1.1, 0.05), (0.05, 0.7), (1.1, 0.7)] {
                b.fbox(
                    f,
                    u + lu,
                    v + lv,
                    base,
                    u + lu + 0.05,
                    v + lv + 0.05,
                    top - 0.04,
                );
            }
            // Two chairs facing each other across the table.
            chair(b, f, u + 0.375, v - 0.55, base, false);
            chair(b, f, u + 0.375, v + 0.9, base, true);
        }
    }
}

/// A chair with its seat (0.45 m square, top at 0.45 m) at local `(u, v)`; the backrest is on
/// the high-v side, or the low-v side if `back_low`.
fn chair(b: &mut Builder, f: &Frame, u: f64, v: f64, base: f64, back_low: bool) {
    let (s, seat) = (0.45, base + 0.45);
    b.fbox(f, u, v, seat - 0.04, u + s, v + s, seat);
    for (lu, lv) in [
        (0.0, 0.0),
        (s - 0.04, 0.0),
        (0.0, s - 0.04),
        (s - 0.04, s - 0.04),
    ] {
        b.fbox(
            f,
            u + lu,
            v + lv,
            base,
            u + lu + 0.04,
            v + lv + 0.04,
            seat - 0.04,
        );
    }
    let bv = if back_low { v } else { v + s - 0.04 };
    b.fbox(f, u, bv, seat, u + s, bv + 0.04, base + 0.9);
}

/// Window sills: a thin slab under each window, sticking out `t0..t1` across the wall.
fn sills(
    b: &mut Builder,
    f: &Frame,
    along_u: bool,
    win: &[(f64, f64, f64, f64)],
    t0: f64,
    t1: f64,
) {
    for &(a, c, z, _) in win {
        if along_u {
            b.fbox(f, a - 0.05, t0, z - 0.05, c + 0.05, t1, z);
        } else {
            b.fbox(f, t0, a - 0.05, z - 0.05, t1, c + 0.05, z);
        }
    }
}

/// The free spans (inner faces) of the front rooms between the outer and cross walls.
fn room_spans(w: f64, cross: &[f64]) -> Vec<(f64, f64)> {
    let mut edges = vec![OUTER];
    for &c in cross {
        edges.push(c - INNER / 2.0);
        edges.push(c + INNER / 2.0);
    }
    edges.push(w - OUTER);
    edges.chunks(2).map(|p| (p[0], p[1])).collect()
}

/// Window openings (1.2 m wide, `sill` heights) every `spacing` metres along `[s0, s1]`,
/// clear of the corners and of every `keep_out` span.
fn windows(
    s0: f64,
    s1: f64,
    spacing: f64,
    keep_out: &[(f64, f64)],
    sill: (f64, f64),
) -> Vec<(f64, f64, f64, f64)> {
    let mut out = Vec::new();
    let mut c = s0 + 1.4;
    while c + 0.6 <= s1 - 0.8 {
        let (a, b) = (c - 0.6, c + 0.6);
        if !keep_out.iter().any(|&(x, y)| a < y && x < b) {
            out.push((a, b, sill.0, sill.1));
        }
        c += spacing;
    }
    out
}

/// A straight wall from `s0` to `s1` along u (`along_u`) or v, `t0..t1` thick, from `zb` to
/// `zt`, with rectangular openings `(s_a, s_b, z_a, z_b)`: piers between openings, and boxes
/// below and above each opening.
#[allow(clippy::too_many_arguments)]
fn wall(
    b: &mut Builder,
    f: &Frame,
    along_u: bool,
    s0: f64,
    s1: f64,
    t0: f64,
    t1: f64,
    zb: f64,
    zt: f64,
    openings: &mut [(f64, f64, f64, f64)],
) {
    openings.sort_by(|p, q| p.0.total_cmp(&q.0));
    let piece = |b: &mut Builder, a: f64, c: f64, z0: f64, z1: f64| {
        if along_u {
            b.fbox(f, a, t0, z0, c, t1, z1);
        } else {
            b.fbox(f, t0, a, z0, t1, c, z1);
        }
    };
    let mut at = s0;
    for &(a, c, za, zc) in openings.iter() {
        let (a, c) = (a.max(at), c.min(s1));
        if c <= a {
            continue;
        }
        piece(b, at, a, zb, zt);
        piece(b, a, c, zb, za.max(zb));
        piece(b, a, c, zc.min(zt), zt);
        at = c;
    }
    piece(b, at, s1, zb, zt);
}

/// A floor slab over the whole footprint, `z0..z1`, minus an optional rectangular opening
/// `(u0, v0, u1, v1)`, as up to four boxes.
fn slab_with_hole(
    b: &mut Builder,
    f: &Frame,
    w: f64,
    d: f64,
    z0: f64,
    z1: f64,
    hole: Option<(f64, f64, f64, f64)>,
) {
    match hole {
        None => b.fbox(f, 0.0, 0.0, z0, w, d, z1),
        Some((u0, v0, u1, v1)) => {
            b.fbox(f, 0.0, 0.0, z0, w, v0, z1);
            b.fbox(f, 0.0, v1, z0, w, d, z1);
            b.fbox(f, 0.0, v0, z0, u0, v1, z1);
            b.fbox(f, u1, v0, z0, w, v1, z1);
        }
    }
}

/// Flight `k` (from the floor at `base` to the one above) and the railings guarding its
/// opening in the floor above.
fn flight_and_railings(b: &mut Builder, f: &Frame, c: &Core, k: u32, base: f64) {
    let up = k & 1 == 0; // band A rising +u; band B rising -u
    let v0 = if up { c.a_v0 } else { c.b_v0 };
    let v1 = v0 + c.band_w;
    let (lo, hi) = (c.u0, c.u0 + c.len);
    if c.ramp {
        let (ua, ub) = if up { (lo, hi) } else { (hi, lo) };
        b.fwedge(f, ua, ub, v0, v1, base, base + STOREY);
    } else {
        let rise = STOREY / STEPS as f64;
        for i in 1..=STEPS {
            let (a, z) = (TREAD * (i - 1) as f64, base + rise * i as f64);
            if up {
                b.fbox(f, lo + a, v0, base, lo + a + TREAD, v1, z);
            } else {
                b.fbox(f, hi - a - TREAD, v0, base, hi - a, v1, z);
            }
        }
    }
    if up {
        // A handrail 0.9 m above the pitch line along the hall side, on posts.
        let pitch = |u: f64| base + STOREY * ((u - lo) / c.len).clamp(0.0, 1.0);
        let tread_top = |u: f64| {
            if c.ramp {
                pitch(u)
            } else {
                let i = ((u - lo) / TREAD).ceil().clamp(1.0, STEPS as f64);
                base + i * STOREY / STEPS as f64
            }
        };
        let (r0, r1) = (v0 - 0.05, v0);
        let mut p = [[0.0; 3]; 8];
        for (n, q) in p.iter_mut().enumerate() {
            let u = if n & 1 == 0 { lo } else { hi };
            let v = if n & 2 == 0 { r0 } else { r1 };
            *q = [u, v, pitch(u) + if n & 4 == 0 { 0.85 } else { 0.9 }];
        }
        b.fhexa(f, &p);
        let mut u = lo + 0.1;
        while u < hi - 0.1 {
            b.fbox(
                f,
                u,
                r0,
                tread_top(u + 0.02) - 0.05,
                u + 0.04,
                r1,
                pitch(u) + 0.85,
            );
            u += 1.2;
        }
    }
    // Railings (1 m, 5 cm thick) on the floor above, around the opening except the exit end.
    let (z0, z1) = (base + STOREY, base + STOREY + 1.0);
    if up {
        b.fbox(f, lo, v0 - 0.05, z0, hi, v0, z1); // hall side
        b.fbox(f, lo - 0.05, v0 - 0.05, z0, lo, v1 + 0.1, z1); // low end
        b.fbox(f, lo, v1 + 0.02, z0, hi, v1 + 0.07, z1); // between the bands
    } else {
        b.fbox(f, hi, v0 - 0.1, z0, hi + 0.05, v1, z1); // low end
        b.fbox(f, lo, v0 - 0.07, z0, hi, v0 - 0.02, z1); // between the bands
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::tests::piece_volumes6;

    #[test]
    fn every_piece_is_a_closed_outward_solid() {
        let t = Terrain::new(5, 250.0);
        for (seed, north, ramp) in [
            (1, false, false),
            (2, true, false),
            (3, false, true),
            (4, true, true),
        ] {
            let lot = Rect::new(60.0, 60.0, 84.0, 85.0);
            let wish = Wish {
                floors: (3, 5),
                ramp: Some(ramp),
                gap: (1.0, 2.0),
            };
            let bld = Building::plan(&lot, north, seed, &wish, &t).expect("fits");
            assert_eq!(bld.is_ramp(), ramp);
            let mut b = Builder::new([0.0; 3], 0, 0);
            bld.emit(&mut b);
            let vols = piece_volumes6(&b.mesh);
            assert!(vols.len() > 200, "{} pieces", vols.len());
            // Thin pieces (railings, handrails) are a few litres; none may be inside out.
            assert!(vols.iter().all(|&v| v > 1e-4), "an inverted or empty piece");
            let fp = bld.footprint();
            assert!(lot.grow(0.1).contains(fp.x0, fp.y0) && lot.grow(0.1).contains(fp.x1, fp.y1));
        }
    }
}
