//! The ground: a smooth heightfield of gentle hills, local edits (embankment mounds with
//! steeper-than-walkable sides, pads cut level under buildings) and its tessellation.
//!
//! The ground mesh is cut into 16 m patches of 1 m cells. Patches are not stitched: each owns its
//! vertices, a few plain patches are tessellated at 4 m (their long edges meet four short ones
//! of the neighbours: T-junctions), and plain patches also carry the deliberate flaws of real
//! exports: a missing quad here and there (holes), duplicated triangles and near-degenerate
//! slivers.

use crate::builder::{Builder, Rect};
use crate::rng::{dcos, dsin, hash, unit, Rng};
use std::f64::consts::TAU;

/// Ground patch edge, in cells.
const PATCH: usize = 16;
/// Chance that a plain patch is tessellated coarsely (4 cells per quad).
const COARSE: f64 = 0.12;
/// Per-quad chances, in plain fine patches, of a hole, a sliver split and a duplicated quad.
const HOLE: f64 = 0.0004;
const SLIVER: f64 = 0.002;
const DUPLICATE: f64 = 0.0008;

/// One hill component: `amp * sin(k1 * along + p1) * cos(k2 * across + p2)` in a rotated frame.
#[derive(Clone, Debug)]
struct Wave {
    c: f64,
    s: f64,
    k1: f64,
    k2: f64,
    p1: f64,
    p2: f64,
    amp: f64,
}

/// A raised plateau: flat over `top`, falling to the surrounding ground over `fall` metres on
/// the west, east, south and north sides. A fall of under a metre gives an embankment far
/// steeper than 45 degrees; a long fall gives a walkable ramp.
#[derive(Clone, Debug)]
pub(crate) struct Mound {
    pub top: Rect,
    pub height: f64,
    pub fall: [f64; 4],
}

impl Mound {
    pub(crate) fn bounds(&self) -> Rect {
        Rect {
            x0: self.top.x0 - self.fall[0],
            x1: self.top.x1 + self.fall[1],
            y0: self.top.y0 - self.fall[2],
            y1: self.top.y1 + self.fall[3],
        }
    }

    fn lift(&self, x: f64, y: f64) -> f64 {
        let t = &self.top;
        let side = |d: f64, fall: f64| (1.0 - d / fall).clamp(0.0, 1.0);
        let fx = if x < t.x0 {
            side(t.x0 - x, self.fall[0])
        } else if x > t.x1 {
            side(x - t.x1, self.fall[1])
        } else {
            1.0
        };
        let fy = if y < t.y0 {
            side(t.y0 - y, self.fall[2])
        } else if y > t.y1 {
            side(y - t.y1, self.fall[3])
        } else {
            1.0
        };
        self.height * fx.min(fy)
    }
}

/// Ground vertices inside `rect` are lowered to at most `z_max` (under a building's floor).
#[derive(Clone, Debug)]
pub(crate) struct Pad {
    pub rect: Rect,
    pub z_max: f64,
}

pub(crate) struct Terrain {
    extent: f64,
    base: f64,
    waves: Vec<Wave>,
    pub mounds: Vec<Mound>,
    pub pads: Vec<Pad>,
}

impl Terrain {
    pub(crate) fn new(seed: u64, extent: f64) -> Terrain {
        let mut rng = Rng::derive(seed, 0x007E_44A1);
        // (amplitude m, wavelength m): the steepest combined gradient stays around 6 degrees.
        let waves = [(2.5, 520.0), (1.0, 240.0), (0.3, 100.0)]
            .iter()
            .map(|&(amp, len)| {
                let angle = rng.range(0.0, TAU);
                Wave {
                    c: dcos(angle),
                    s: dsin(angle),
                    k1: TAU / (len * rng.range(0.85, 1.15)),
                    k2: TAU / (len * rng.range(0.85, 1.15)),
                    p1: rng.range(0.0, TAU),
                    p2: rng.range(0.0, TAU),
                    amp,
                }
            })
            .collect();
        Terrain {
            extent,
            base: 4.0,
            waves,
            mounds: Vec::new(),
            pads: Vec::new(),
        }
    }

    /// The undisturbed hills: what roads, sidewalks, buildings and bridges are built on.
    pub(crate) fn hills(&self, x: f64, y: f64) -> f64 {
        let mut z = self.base;
        for w in &self.waves {
            let along = w.c * x + w.s * y;
            let across = w.c * y - w.s * x;
            z += w.amp * dsin(w.k1 * along + w.p1) * dcos(w.k2 * across + w.p2);
        }
        z
    }

    /// The ground a prop stands on: hills plus mounds (pads only exist under buildings).
    pub(crate) fn height(&self, x: f64, y: f64) -> f64 {
        let mut z = self.hills(x, y);
        for m in &self.mounds {
            if m.bounds().contains(x, y) {
                z += m.lift(x, y);
            }
        }
        z
    }

    /// Tessellates the ground. Patches touching `keep_clean` (bridges) get no flaws.
    pub(crate) fn emit(&self, b: &mut Builder, seed: u64, keep_clean: &[Rect]) {
        let n = self.extent.round().max(1.0) as usize;
        let cell = self.extent / n as f64;
        let mut local: Vec<[f64; 3]> = Vec::new();
        for pj in (0..n).step_by(PATCH) {
            for pi in (0..n).step_by(PATCH) {
                let (i1, j1) = ((pi + PATCH).min(n), (pj + PATCH).min(n));
                let rect = Rect::new(
                    pi as f64 * cell,
                    pj as f64 * cell,
                    i1 as f64 * cell,
                    j1 as f64 * cell,
                );
                let mounds: Vec<&Mound> = self
                    .mounds
                    .iter()
                    .filter(|m| m.bounds().grow(cell).overlaps(&rect))
                    .collect();
                let pads: Vec<&Pad> = self
                    .pads
                    .iter()
                    .filter(|p| p.rect.grow(cell).overlaps(&rect))
                    .collect();
                let plain = mounds.is_empty()
                    && pads.is_empty()
                    && !keep_clean.iter().any(|r| r.overlaps(&rect));
                let coarse = plain
                    && (i1 - pi) % 4 == 0
                    && (j1 - pj) % 4 == 0
                    && unit(hash(seed, 0xC0A2, pi as u64, pj as u64)) < COARSE;
                let step = if coarse { 4 } else { 1 };
                let (nu, nv) = ((i1 - pi) / step, (j1 - pj) / step);

                local.clear();
                let first = b.mesh.positions.len() as u32;
                for jj in 0..=nv {
                    for ii in 0..=nu {
                        let x = (pi + ii * step) as f64 * cell;
                        let y = (pj + jj * step) as f64 * cell;
                        let mut z = self.hills(x, y);
                        for m in &mounds {
                            if m.bounds().contains(x, y) {
                                z += m.lift(x, y);
                            }
                        }
                        for p in &pads {
                            if p.rect.contains(x, y) {
                                z = z.min(p.z_max);
                            }
                        }
                        local.push([x, y, z]);
                        b.v(x, y, z);
                    }
                }
                let row = nu as u32 + 1;
                for jj in 0..nv {
                    for ii in 0..nu {
                        let a = first + jj as u32 * row + ii as u32;
                        let (bb, c, d) = (a + 1, a + row + 1, a + row);
                        if plain && !coarse {
                            let r = unit(hash(seed, 0x0F1A, (pi + ii) as u64, (pj + jj) as u64));
                            if r < HOLE {
                                continue;
                            }
                            if r < HOLE + SLIVER {
                                // Split along the diagonal through a point 1 mm off it: the
                                // third triangle is a sliver of almost no area.
                                let pa = local[(a - first) as usize];
                                let pc = local[(c - first) as usize];
                                let e = b.v(
                                    0.5 * (pa[0] + pc[0]) + 0.001,
                                    0.5 * (pa[1] + pc[1]) - 0.001,
                                    0.5 * (pa[2] + pc[2]),
                                );
                                b.tri(a, bb, e);
                                b.tri(e, bb, c);
                                b.tri(a, e, c);
                                b.tri(a, c, d);
                                continue;
                            }
                            if r < HOLE + SLIVER + DUPLICATE {
                                b.quad(a, bb, c, d);
                            }
                        }
                        b.quad(a, bb, c, d);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hills_are_gentle() {
        let t = Terrain::new(42, 2000.0);
        let mut steepest: f64 = 0.0;
        for j in 0..200 {
            for i in 0..200 {
                let (x, y) = (i as f64 * 10.0, j as f64 * 10.0);
                let gx = t.hills(x + 0.5, y) - t.hills(x - 0.5, y);
                let gy = t.hills(x, y + 0.5) - t.hills(x, y - 0.5);
                steepest = steepest.max((gx * gx + gy * gy).sqrt());
            }
        }
        assert!(steepest < 0.13, "steepest hill gradient {steepest}");
    }

    #[test]
    fn mound_sides() {
        let m = Mound {
            top: Rect::new(10.0, 10.0, 20.0, 20.0),
            height: 2.0,
            fall: [0.5, 0.5, 0.5, 7.0],
        };
        assert_eq!(m.lift(15.0, 15.0), 2.0);
        assert_eq!(m.lift(9.0, 15.0), 0.0);
        assert!((m.lift(15.0, 23.5) - 1.0).abs() < 1e-12);
    }
}
