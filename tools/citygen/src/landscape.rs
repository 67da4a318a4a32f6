//! Terrain-only worlds: square kilometres of open country with no city on it.
//!
//! The ground is one height function sampled on a regular 2 m grid and tessellated as two
//! triangles per cell, all sharing vertices (no patches, no deliberate flaws). The height is
//! built in layers:
//!
//! * hills: five octaves of value noise, 700 m down to 22 m wavelength, each in its own rotated
//!   and shifted frame so the lattice never shows as straight lines;
//! * escarpments: the zero contour of a smooth noise field becomes a step several metres high
//!   and under a metre wide (so far steeper than 45 degrees across one grid cell); a second,
//!   slower field scales the step, so a cliff line fades out into walkable ground in places;
//! * rivers: a sinuous centre line crossing the map; within 90 m of it the ground is pulled
//!   down towards a floodplain (the broadest octave on the centre line, a few metres lower, so
//!   level across the river), and inside the
//!   channel it drops by the river's depth over a bank about 1.5 m wide. The channel is dry: no
//!   water surface is emitted. The floodplain follows the broad lie of the land, so a bed may
//!   rise and fall along its course.
//!
//! Every input to the arithmetic comes from the crate's seeded hash and portable sine, so a seed
//! gives the same bytes on every platform.

use crate::builder::Builder;
use crate::rng::{dcos, dsin, hash, unit, Rng};
use crate::{Mesh, Size};
use std::f64::consts::TAU;

/// Grid spacing of terrain-only worlds, in metres.
pub const TERRAIN_CELL_M: f64 = 2.0;

/// Height every layer is added to, so the whole world sits well above zero.
const BASE_Z: f64 = 40.0;
/// Hill octaves as (wavelength m, amplitude m), broadest first.
const HILLS: [(f64, f64); 5] = [
    (700.0, 28.0),
    (300.0, 12.0),
    (130.0, 4.5),
    (55.0, 1.5),
    (22.0, 0.4),
];
/// Escarpments as (contour field wavelength m, step height m before jitter).
const ESCARPMENTS: [(f64, f64); 2] = [(420.0, 8.0), (260.0, 5.0)];
/// Horizontal run over which an escarpment's step rises, in metres: under one grid step.
const CLIFF_RUN: f64 = 0.8;
/// Wavelength of the field that makes escarpments fade in and out along their length.
const CLIFF_MASK: f64 = 320.0;
/// How far from a river's centre line its valley reaches, in metres.
const VALLEY_HALF: f64 = 90.0;
/// How far below the broadest hill octave (taken on the centre line) a river's floodplain
/// lies, in metres.
const FLOODPLAIN_DROP: f64 = 6.0;
/// Horizontal width of a river bank, from the floodplain down to the bed, in metres.
const BANK: f64 = 1.5;
/// River bends as (wavelength m, amplitude m at a 1 km map; smaller maps scale it down).
const BENDS: [(f64, f64); 3] = [(700.0, 70.0), (300.0, 25.0), (130.0, 8.0)];

/// A terrain-only world: `cells` x `cells` grid cells of [`TERRAIN_CELL_M`], from the origin
/// (plus `offset`).
#[derive(Clone, Debug, PartialEq)]
pub struct TerrainParams {
    pub cells: u32,
    pub seed: u64,
    /// Added to every vertex, as for cities.
    pub offset: [f64; 3],
}

impl TerrainParams {
    /// The preset for `size`: demo is a 250 m square, S 1 km², M 2 km² (a 1 414 m square),
    /// L 4 km² (2 km square). XL has no terrain preset (`None`).
    pub fn for_size(size: Size, seed: u64, offset: [f64; 3]) -> Option<TerrainParams> {
        let cells = match size {
            Size::Demo => 125,
            Size::S => 500,
            Size::M => 707,
            Size::L => 1000,
            Size::XL => return None,
        };
        Some(TerrainParams {
            cells,
            seed,
            offset,
        })
    }

    /// Edge length of the square world, in metres.
    pub fn extent_m(&self) -> f64 {
        f64::from(self.cells) * TERRAIN_CELL_M
    }
}

/// Generates the terrain described by `params`: `(cells + 1)²` vertices and `2 cells²`
/// triangles, counter-clockwise seen from above, Z up.
pub fn generate_terrain(params: &TerrainParams) -> Mesh {
    let land = Landscape::new(params.seed, params.extent_m());
    let n = params.cells as usize;
    let mut b = Builder::new(params.offset, 2 * n * n, (n + 1) * (n + 1));
    for j in 0..=n {
        let y = j as f64 * TERRAIN_CELL_M;
        for i in 0..=n {
            let x = i as f64 * TERRAIN_CELL_M;
            b.v(x, y, land.height(x, y));
        }
    }
    let row = n as u32 + 1;
    for j in 0..n as u32 {
        for i in 0..n as u32 {
            let a = j * row + i;
            b.quad(a, a + 1, a + row + 1, a + row);
        }
    }
    b.mesh
}

/// One octave of value noise, in a frame turned by an angle (`c`, `s` its cosine and sine) and
/// shifted by `shift`.
#[derive(Clone, Debug)]
struct Octave {
    tag: u64,
    wavelength: f64,
    amp: f64,
    c: f64,
    s: f64,
    shift: [f64; 2],
}

impl Octave {
    fn new(rng: &mut Rng, tag: u64, wavelength: f64, amp: f64) -> Octave {
        let angle = rng.range(0.0, TAU);
        Octave {
            tag,
            wavelength,
            amp,
            c: dcos(angle),
            s: dsin(angle),
            shift: [rng.range(0.0, 1.0e4), rng.range(0.0, 1.0e4)],
        }
    }

    /// The octave's value at `(x, y)` and its gradient in world axes.
    fn sample(&self, seed: u64, x: f64, y: f64) -> [f64; 3] {
        let u = self.c * x - self.s * y + self.shift[0];
        let v = self.s * x + self.c * y + self.shift[1];
        let [n, gu, gv] = value_noise(seed, self.tag, u / self.wavelength, v / self.wavelength);
        let k = self.amp / self.wavelength;
        [
            self.amp * n,
            k * (gu * self.c + gv * self.s),
            k * (gv * self.c - gu * self.s),
        ]
    }
}

/// Quintic fade `6t^5 - 15t^4 + 10t^3` and its derivative.
fn fade(t: f64) -> (f64, f64) {
    let t2 = t * t;
    (
        t2 * t * (t * (6.0 * t - 15.0) + 10.0),
        30.0 * t2 * (t - 1.0) * (t - 1.0),
    )
}

/// Value noise with a unit lattice: a random value in [-1, 1] at each integer point, blended
/// with the quintic fade. Returns the value and its derivatives along both axes.
fn value_noise(seed: u64, tag: u64, u: f64, v: f64) -> [f64; 3] {
    let (iu, iv) = (u.floor(), v.floor());
    let (fu, fv) = (u - iu, v - iv);
    // Lattice coordinates go through i64 so negative ones hash to distinct values too.
    let (i, j) = (iu as i64 as u64, iv as i64 as u64);
    let corner = |di: u64, dj: u64| {
        2.0 * unit(hash(seed, tag, i.wrapping_add(di), j.wrapping_add(dj))) - 1.0
    };
    let (a, b, c, d) = (corner(0, 0), corner(1, 0), corner(0, 1), corner(1, 1));
    let (su, du) = fade(fu);
    let (sv, dv) = fade(fv);
    let twist = a - b - c + d;
    [
        a + (b - a) * su + (c - a) * sv + twist * su * sv,
        du * ((b - a) + twist * sv),
        dv * ((c - a) + twist * su),
    ]
}

/// Sum of octaves: value and gradient.
fn sum(octaves: &[Octave], seed: u64, x: f64, y: f64) -> [f64; 3] {
    octaves.iter().fold([0.0; 3], |acc, o| {
        let s = o.sample(seed, x, y);
        [acc[0] + s[0], acc[1] + s[1], acc[2] + s[2]]
    })
}

fn smoothstep(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// A cliff line: where `field` crosses zero the ground steps up by `height` (times the mask's
/// strength) towards the positive side.
#[derive(Clone, Debug)]
struct Escarpment {
    field: Vec<Octave>,
    mask: Octave,
    height: f64,
}

impl Escarpment {
    fn lift(&self, seed: u64, x: f64, y: f64) -> f64 {
        let [m, gx, gy] = sum(&self.field, seed, x, y);
        // Value over slope: to first order, the signed distance to the zero contour in metres.
        let slope = (gx * gx + gy * gy).sqrt().max(1e-12);
        let t = (m / slope / CLIFF_RUN + 0.5).clamp(0.0, 1.0);
        if t == 0.0 {
            return 0.0;
        }
        let strength = (self.mask.sample(seed, x, y)[0] * 1.6 + 0.6).clamp(0.0, 1.0);
        self.height * strength * t
    }
}

/// A river running across the map along x (`along_x`) or y: its centre line is
/// `across = centre + sum(amp * sin(k * along + phase))`.
#[derive(Clone, Debug)]
pub(crate) struct River {
    along_x: bool,
    centre: f64,
    bends: Vec<[f64; 3]>,
    pub half_width: f64,
    pub depth: f64,
}

impl River {
    /// The centre line at `along`: the across coordinate and its derivative.
    fn line(&self, along: f64) -> (f64, f64) {
        self.bends
            .iter()
            .fold((self.centre, 0.0), |(c, dc), &[k, amp, phase]| {
                let a = k * along + phase;
                (c + amp * dsin(a), dc + amp * k * dcos(a))
            })
    }

    /// Horizontal distance from `(x, y)` to the centre line, to first order, and the world
    /// point of the centre line level with `(x, y)` (same along coordinate).
    pub(crate) fn distance(&self, x: f64, y: f64) -> (f64, [f64; 2]) {
        let (along, across) = if self.along_x { (x, y) } else { (y, x) };
        let (c, dc) = self.line(along);
        let d = (across - c).abs() / (1.0 + dc * dc).sqrt();
        (d, if self.along_x { [x, c] } else { [c, y] })
    }

    /// The centre point at `along` and the unit normal there, as world `(x, y)` pairs.
    #[cfg(test)]
    pub(crate) fn centre_and_normal(&self, along: f64) -> ([f64; 2], [f64; 2]) {
        let (c, dc) = self.line(along);
        let len = (1.0 + dc * dc).sqrt();
        let (n_along, n_across) = (-dc / len, 1.0 / len);
        if self.along_x {
            ([along, c], [n_along, n_across])
        } else {
            ([c, along], [n_across, n_along])
        }
    }
}

/// The height function of one terrain-only world.
pub(crate) struct Landscape {
    seed: u64,
    hills: Vec<Octave>,
    escarpments: Vec<Escarpment>,
    pub rivers: Vec<River>,
}

impl Landscape {
    pub(crate) fn new(seed: u64, extent: f64) -> Landscape {
        let mut rng = Rng::derive(seed, 0x1A4D_5CA9);
        let hills = HILLS
            .iter()
            .zip(0u64..)
            .map(|(&(len, amp), k)| Octave::new(&mut rng, 0x4111 + k, len, amp))
            .collect();
        let escarpments = ESCARPMENTS
            .iter()
            .zip(0u64..)
            .map(|(&(len, height), k)| Escarpment {
                field: vec![
                    Octave::new(&mut rng, 0xC11F + 16 * k, len, 1.0),
                    Octave::new(&mut rng, 0xC11F + 16 * k + 1, len / 2.3, 0.4),
                ],
                mask: Octave::new(&mut rng, 0xC11F + 16 * k + 2, CLIFF_MASK, 1.0),
                height: height * rng.range(0.8, 1.25),
            })
            .collect();
        // About one river per 900 m of edge: one up to 1 km², two at 2 and 4 km².
        let count = (extent / 900.0).round().max(1.0) as usize;
        let first_along_x = rng.chance(0.5);
        let scale = (extent / 1000.0).min(1.0);
        let rivers = (0..count)
            .map(|r| River {
                along_x: first_along_x ^ (r % 2 == 1),
                centre: extent * rng.range(0.3, 0.7),
                bends: BENDS
                    .iter()
                    .map(|&(len, amp)| {
                        [
                            TAU / (len * rng.range(0.85, 1.15)),
                            amp * scale * rng.range(0.7, 1.0),
                            rng.range(0.0, TAU),
                        ]
                    })
                    .collect(),
                half_width: rng.range(5.0, 10.0),
                depth: rng.range(2.5, 4.0),
            })
            .collect();
        Landscape {
            seed,
            hills,
            escarpments,
            rivers,
        }
    }

    /// Ground height at `(x, y)` (metres, before the offset).
    pub(crate) fn height(&self, x: f64, y: f64) -> f64 {
        let mut z = BASE_Z + sum(&self.hills, self.seed, x, y)[0];
        for e in &self.escarpments {
            z += e.lift(self.seed, x, y);
        }
        for r in &self.rivers {
            let (d, [cx, cy]) = r.distance(x, y);
            if d >= VALLEY_HALF {
                continue;
            }
            // Level across the river: the broadest octave taken on the centre line.
            let floodplain = BASE_Z + self.hills[0].sample(self.seed, cx, cy)[0] - FLOODPLAIN_DROP;
            let inner = r.half_width + BANK;
            // The valley: 1 from the bank inwards, easing to 0 at VALLEY_HALF.
            let valley = smoothstep((VALLEY_HALF - d) / (VALLEY_HALF - inner));
            z -= valley * (z - floodplain);
            // The channel: the full depth within half_width, a straight bank down to it.
            z -= r.depth * ((inner - d) / BANK).clamp(0.0, 1.0);
        }
        z
    }

    #[cfg(test)]
    fn without_rivers(mut self) -> Landscape {
        self.rivers.clear();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steepest slope (rise over run) of the grid cell at `(x, y)` of a 2 m grid, over its
    /// two triangles.
    fn cell_slope(l: &Landscape, x: f64, y: f64) -> f64 {
        let h = TERRAIN_CELL_M;
        let (a, b, c, d) = (
            l.height(x, y),
            l.height(x + h, y),
            l.height(x + h, y + h),
            l.height(x, y + h),
        );
        // Triangles (a, b, c) and (a, c, d) of the grid.
        let s1 = ((b - a).powi(2) + (c - b).powi(2)).sqrt() / h;
        let s2 = ((c - d).powi(2) + (d - a).powi(2)).sqrt() / h;
        s1.max(s2)
    }

    #[test]
    fn value_noise_gradient_matches_differences() {
        let o = Octave {
            tag: 9,
            wavelength: 37.0,
            amp: 3.0,
            c: dcos(0.7),
            s: dsin(0.7),
            shift: [12.5, -40.0],
        };
        let mut worst: f64 = 0.0;
        for k in 0..400 {
            let (x, y) = (-300.0 + 1.37 * k as f64, 55.0 - 0.91 * k as f64);
            let [v, gx, gy] = o.sample(5, x, y);
            assert!(v.abs() <= 3.0);
            let e = 1e-4;
            let nx = (o.sample(5, x + e, y)[0] - o.sample(5, x - e, y)[0]) / (2.0 * e);
            let ny = (o.sample(5, x, y + e)[0] - o.sample(5, x, y - e)[0]) / (2.0 * e);
            worst = worst.max((nx - gx).abs()).max((ny - gy).abs());
        }
        assert!(worst < 1e-6, "gradient off by {worst}");
    }

    #[test]
    fn rivers_are_channels_below_their_banks() {
        for seed in [1, 2, 3, 4] {
            let extent = 1000.0;
            let l = Landscape::new(seed, extent);
            assert!(!l.rivers.is_empty());
            for r in &l.rivers {
                let (mut checked, mut deep) = (0, 0);
                for k in 1..100 {
                    let (p, nrm) = r.centre_and_normal(extent * k as f64 / 100.0);
                    let out = r.half_width + BANK + 3.0;
                    let side = |s: f64| [p[0] + s * out * nrm[0], p[1] + s * out * nrm[1]];
                    let (a, b) = (side(1.0), side(-1.0));
                    let inside = |q: [f64; 2]| q.iter().all(|c| (0.0..=extent).contains(c));
                    if !inside(p) || !inside(a) || !inside(b) {
                        continue;
                    }
                    checked += 1;
                    let bed = l.height(p[0], p[1]);
                    let banks = l.height(a[0], a[1]).min(l.height(b[0], b[1]));
                    // Another river crossing here may lower a bank top; allow a few.
                    if banks - bed >= 0.6 * r.depth {
                        deep += 1;
                    }
                }
                assert!(checked >= 50, "seed {seed}: river mostly off the map");
                assert!(
                    deep * 10 >= checked * 9,
                    "seed {seed}: {deep} of {checked} samples sunk"
                );
            }
        }
    }

    #[test]
    fn escarpments_make_cliffs_away_from_rivers() {
        for seed in [1, 2, 3] {
            let l = Landscape::new(seed, 600.0).without_rivers();
            let (mut cells, mut cliffs, mut gentle) = (0, 0, 0);
            for j in 0..150 {
                for i in 0..150 {
                    let s = cell_slope(&l, i as f64 * 4.0, j as f64 * 4.0);
                    cells += 1;
                    // tan 45 = 1, tan 30 = 0.577.
                    cliffs += usize::from(s > 1.0);
                    gentle += usize::from(s < 0.577);
                }
            }
            assert!(cliffs >= 20, "seed {seed}: {cliffs} cliff cells");
            assert!(gentle * 10 >= cells * 9, "seed {seed}: {gentle} of {cells}");
        }
    }

    #[test]
    fn presets_cover_one_to_four_square_kilometres() {
        let area = |s| {
            let p = TerrainParams::for_size(s, 1, [0.0; 3]).unwrap();
            p.extent_m() * p.extent_m() / 1e6
        };
        for (size, km2) in [(Size::S, 1.0), (Size::M, 2.0), (Size::L, 4.0)] {
            let a = area(size);
            assert!((a - km2).abs() <= 0.01 * km2, "{size:?}: {a} km²");
        }
        assert!(area(Size::Demo) < 0.1);
        assert_eq!(TerrainParams::for_size(Size::XL, 1, [0.0; 3]), None);
    }
}
