//! City planning and assembly: roads, blocks, lots, bridges, buildings and parks are decided
//! first (plain data, all from seeded generators), then emitted into one mesh in a fixed order:
//! ground, sidewalks, buildings, bridges, props.
//!
//! Roads run the full width of the world in both directions, ~60-100 m apart (45-50 m in the
//! demo world). The blocks between them are ringed by sidewalks and cut into one or two rows
//! of lots, each row facing its street. A lot holds a building (its back yard, if deep enough,
//! furnished like a park) or is a park: trees, benches, poles, bumps, sometimes an embankment
//! mound. Bridges cross a road between two intersections and reserve their footprint: no
//! building or prop is placed under them.

use crate::builder::{Builder, Frame, Rect};
use crate::building::{Building, Wish, RAMP_MIN_W};
use crate::rng::{mix, Rng};
use crate::street::{self, Bridge, SIDEWALK};
use crate::terrain::{Mound, Pad, Terrain};
use crate::{CityParams, Mesh, Size};

#[derive(Clone, Copy, Debug)]
struct Road {
    /// Centre line (x for roads running along y, y for roads running along x) and half width.
    c: f64,
    hw: f64,
}

pub(crate) struct City {
    extent: f64,
    seed: u64,
    offset: [f64; 3],
    terrain: Terrain,
    /// Roads running along y (at x = c) and along x (at y = c).
    x_roads: Vec<Road>,
    y_roads: Vec<Road>,
    blocks: Vec<Rect>,
    bridges: Vec<Bridge>,
    buildings: Vec<Building>,
    parks: Vec<Rect>,
}

/// The free intervals between roads (and the world's edges) along one axis.
fn intervals(roads: &[Road], extent: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut at = 0.0;
    for r in roads {
        out.push((at, r.c - r.hw));
        at = r.c + r.hw;
    }
    out.push((at, extent));
    out
}

fn place_roads(rng: &mut Rng, extent: f64, demo: bool) -> Vec<Road> {
    if demo {
        return [0.22, 0.72]
            .iter()
            .map(|&t| Road {
                c: extent * t + rng.range(-1.5, 1.5),
                hw: 4.0,
            })
            .collect();
    }
    let mut roads = Vec::new();
    let mut c = rng.range(32.0, 52.0);
    while c < extent - 30.0 {
        let hw = if rng.chance(0.3) { 5.0 } else { 4.0 };
        roads.push(Road { c, hw });
        c += rng.range(64.0, 100.0);
    }
    roads
}

impl City {
    pub(crate) fn plan(params: &CityParams) -> City {
        let extent = params.size.extent_m();
        let demo = params.size == Size::Demo;
        let seed = params.seed;
        let mut terrain = Terrain::new(seed, extent);
        let mut rng = Rng::derive(seed, 0x20AD);
        let x_roads = place_roads(&mut rng, extent, demo);
        let y_roads = place_roads(&mut rng, extent, demo);
        let xs = intervals(&x_roads, extent);
        let ys = intervals(&y_roads, extent);

        // Bridges: about one per 250 m x 250 m, each across a road midway between crossings.
        let wanted = if demo {
            1
        } else {
            ((extent * extent) / (250.0 * 250.0)).round().max(1.0) as usize
        };
        let mut candidates = Vec::new();
        for (along_y, roads, segs) in [(true, &x_roads, &ys), (false, &y_roads, &xs)] {
            for ri in 0..roads.len() {
                for si in 0..segs.len() {
                    // The demo keeps its one full block for buildings: bridge at an edge.
                    if !demo || si == 0 || si + 1 == segs.len() {
                        candidates.push((along_y, ri, si));
                    }
                }
            }
        }
        let mut brng = Rng::derive(seed, 0xB21D);
        brng.shuffle(&mut candidates);
        let mut bridges: Vec<Bridge> = Vec::new();
        for (along_y, ri, si) in candidates {
            if bridges.len() >= wanted {
                break;
            }
            let (roads, segs) = if along_y {
                (&x_roads, &ys)
            } else {
                (&y_roads, &xs)
            };
            let road = roads[ri];
            let (lo, hi) = segs[si];
            if hi - lo < 14.0 {
                continue;
            }
            let at = 0.5 * (lo + hi) + brng.range(-0.2, 0.2) * (hi - lo - 14.0);
            let frame = if along_y {
                Frame {
                    ox: road.c,
                    oy: at,
                    rot: 0,
                }
            } else {
                Frame {
                    ox: at,
                    oy: road.c,
                    rot: 1,
                }
            };
            let Some(bridge) = Bridge::plan(&terrain, frame, road.hw, extent) else {
                continue;
            };
            // It must not reach across a parallel road, nor touch another bridge.
            let (a, b) = bridge.span();
            let crosses = roads.iter().enumerate().any(|(k, r)| {
                k != ri && r.c - r.hw - 2.0 < road.c + b && road.c + a < r.c + r.hw + 2.0
            });
            let fp = bridge.footprint().grow(3.0);
            if crosses || bridges.iter().any(|o| o.footprint().overlaps(&fp)) {
                continue;
            }
            bridges.push(bridge);
        }
        let reserved: Vec<Rect> = bridges.iter().map(|b| b.footprint().grow(2.0)).collect();

        // Blocks and lots.
        let mut blocks = Vec::new();
        let mut buildings = Vec::new();
        let mut parks = Vec::new();
        for (j, &(y0, y1)) in ys.iter().enumerate() {
            for (i, &(x0, x1)) in xs.iter().enumerate() {
                let blk = Rect::new(x0, y0, x1, y1);
                let bi = (j * xs.len() + i) as u64;
                if blk.w() < 2.0 * SIDEWALK + 2.0 || blk.h() < 2.0 * SIDEWALK + 2.0 {
                    continue;
                }
                blocks.push(blk);
                let inner = blk.grow(-SIDEWALK);
                let surrounded = i > 0 && j > 0 && i + 1 < xs.len() && j + 1 < ys.len();
                let mut lrng = Rng::derive(seed, 0x1075_0000 + bi);
                let rows = if inner.h() >= 28.0 { 2 } else { 1 };
                let ysplit = inner.y0 + inner.h() * lrng.range(0.42, 0.58);
                let cols = if demo {
                    2
                } else {
                    ((inner.w() / lrng.range(20.0, 30.0)).round() as usize).max(1)
                };
                let mut xcuts = vec![inner.x0];
                for k in 1..cols {
                    xcuts.push(
                        inner.x0 + inner.w() * k as f64 / cols as f64 + lrng.range(-1.5, 1.5),
                    );
                }
                xcuts.push(inner.x1);
                for row in 0..rows {
                    let (ly0, ly1, north) = match (rows, row) {
                        (1, _) => (inner.y0, inner.y1, y0 <= 0.0),
                        (_, 0) => (inner.y0, ysplit, false),
                        _ => (ysplit, inner.y1, true),
                    };
                    for col in 0..cols {
                        let lot = Rect::new(xcuts[col], ly0, xcuts[col + 1], ly1);
                        let lot_seed = mix(seed ^ mix(bi << 8 | (row * cols + col) as u64));
                        let wants_building = lrng.chance(0.82);
                        let allowed = if demo { surrounded } else { wants_building };
                        let wish = Wish {
                            floors: if demo { (2, 3) } else { (1, 6) },
                            // The demo gets exactly one ramp core, chosen below.
                            ramp: if demo { Some(false) } else { None },
                            gap: if demo { (0.8, 1.5) } else { (1.0, 2.5) },
                        };
                        let planned = allowed
                            .then(|| Building::plan(&lot, north, lot_seed, &wish, &terrain))
                            .flatten()
                            .filter(|b| {
                                !reserved
                                    .iter()
                                    .any(|r| r.overlaps(&b.footprint().grow(1.0)))
                            });
                        match planned {
                            Some(b) => buildings.push((lot, north, lot_seed, b)),
                            None => parks.push(lot),
                        }
                    }
                }
            }
        }
        if demo {
            // Two or three buildings: keep three, one of them with a ramp core.
            while buildings.len() > 3 {
                let (lot, ..) = buildings.pop().expect("non-empty");
                parks.push(lot);
            }
            if !buildings.iter().any(|b| b.3.is_ramp()) {
                let order = [1usize, 0, 2];
                if let Some(&k) = order
                    .iter()
                    .find(|&&k| k < buildings.len() && buildings[k].3.w >= RAMP_MIN_W)
                {
                    let (lot, north, lot_seed, _) = &buildings[k];
                    let wish = Wish {
                        floors: (2, 3),
                        ramp: Some(true),
                        gap: (0.8, 1.5),
                    };
                    if let Some(b) = Building::plan(lot, *north, *lot_seed, &wish, &terrain) {
                        buildings[k].3 = b;
                    }
                }
            }
        }
        let buildings: Vec<Building> = buildings
            .into_iter()
            .map(|(lot, north, _, b)| {
                // The back yard behind the building, if deep enough, is furnished like a park.
                let fp = b.footprint();
                let (yard, depth) = if north {
                    (
                        Rect::new(lot.x0, lot.y0, lot.x1, fp.y0 - 1.0),
                        fp.y0 - 1.0 - lot.y0,
                    )
                } else {
                    (
                        Rect::new(lot.x0, fp.y1 + 1.0, lot.x1, lot.y1),
                        lot.y1 - fp.y1 - 1.0,
                    )
                };
                if depth >= 5.0 {
                    parks.push(yard);
                }
                b
            })
            .collect();

        // Ground edits: level pads under buildings (reaching 0.8 m beyond the walls, so no
        // ground triangle pokes through a floor), and embankment mounds in some parks.
        for b in &buildings {
            terrain.pads.push(Pad {
                rect: b.footprint().grow(0.8),
                z_max: b.z0 - 0.35,
            });
        }
        let mut mrng = Rng::derive(seed, 0x30D);
        let mut need_mound = demo;
        for p in &parks {
            let roll = mrng.chance(0.3);
            let plan = plan_mound(&mut mrng, p);
            if (roll || need_mound) && !reserved.iter().any(|r| r.overlaps(p)) {
                if let Some(m) = plan {
                    terrain.mounds.push(m);
                    need_mound = false;
                }
            }
        }

        City {
            extent,
            seed,
            offset: params.offset,
            terrain,
            x_roads,
            y_roads,
            blocks,
            bridges,
            buildings,
            parks,
        }
    }

    pub(crate) fn build(&self) -> Mesh {
        // Rough size, so the big vectors are allocated once.
        let area = self.extent * self.extent;
        let mut b = Builder::new(self.offset, (area * 7.0) as usize, (area * 5.0) as usize);
        let reserved: Vec<Rect> = self
            .bridges
            .iter()
            .map(|b| b.footprint().grow(2.0))
            .collect();
        self.terrain.emit(&mut b, self.seed, &reserved);
        for blk in &self.blocks {
            street::sidewalk_ring(&mut b, &self.terrain, blk);
        }
        for bld in &self.buildings {
            bld.emit(&mut b);
        }
        for br in &self.bridges {
            br.emit(&mut b, &self.terrain);
        }
        let mut rng = Rng::derive(self.seed, 0x960B);
        for blk in &self.blocks {
            street::ring_props(&mut b, &self.terrain, blk, &mut rng, &reserved);
        }
        for park in &self.parks {
            street::park_props(&mut b, &self.terrain, park, &mut rng, &reserved);
        }
        self.road_bumps(&mut b, &mut rng, &reserved);
        b.mesh
    }

    /// Speed bumps (0.1-0.15 m) across roads, between intersections.
    fn road_bumps(&self, b: &mut Builder, rng: &mut Rng, avoid: &[Rect]) {
        let xs = intervals(&self.x_roads, self.extent);
        let ys = intervals(&self.y_roads, self.extent);
        for (along_y, roads, segs) in [(true, &self.x_roads, &ys), (false, &self.y_roads, &xs)] {
            for road in roads.iter() {
                for &(lo, hi) in segs.iter() {
                    let roll = rng.f64();
                    let at = rng.range(lo + 8.0, (hi - 8.0).max(lo + 8.0));
                    let height = rng.range(0.1, 0.15);
                    if hi - lo < 30.0 || roll > 0.5 {
                        continue;
                    }
                    let frame = if along_y {
                        Frame {
                            ox: road.c,
                            oy: at,
                            rot: 0,
                        }
                    } else {
                        Frame {
                            ox: at,
                            oy: road.c,
                            rot: 1,
                        }
                    };
                    let (x, y) = frame.pt(0.0, 0.0);
                    if avoid.iter().any(|r| r.grow(2.0).contains(x, y)) {
                        continue;
                    }
                    let w = road.hw - 0.2;
                    street::bump(b, &self.terrain, &frame, -w, -0.3, w, 0.3, height);
                }
            }
        }
    }
}

/// An embankment in a park lot: a plateau 2-3.5 m high with three sides falling over 0.5 m
/// (far steeper than 45 degrees even on a 1 m ground grid) and one walkable side (~16 degrees).
fn plan_mound(rng: &mut Rng, lot: &Rect) -> Option<Mound> {
    let avail = lot.grow(-1.5);
    let height = rng.range(2.0, 3.5);
    let gentle = rng.int(0, 3) as usize;
    let mut fall = [0.5; 4];
    fall[gentle] = height * 3.5;
    let mut top = Rect {
        x0: avail.x0 + fall[0],
        x1: avail.x1 - fall[1],
        y0: avail.y0 + fall[2],
        y1: avail.y1 - fall[3],
    };
    let (sw, sh) = (rng.range(4.0, 14.0), rng.range(4.0, 14.0));
    let (px, py) = (rng.f64(), rng.f64());
    if top.w() < 3.0 || top.h() < 3.0 {
        return None;
    }
    if top.w() > sw {
        top.x0 += px * (top.w() - sw);
        top.x1 = top.x0 + sw;
    }
    if top.h() > sh {
        top.y0 += py * (top.h() - sh);
        top.y1 = top.y0 + sh;
    }
    Some(Mound { top, height, fall })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(size: Size, seed: u64) -> City {
        City::plan(&CityParams {
            size,
            seed,
            offset: [0.0; 3],
        })
    }

    #[test]
    fn demo_always_has_its_features() {
        for seed in 0..200 {
            let c = plan(Size::Demo, seed);
            let n = c.buildings.len();
            let ramps = c.buildings.iter().filter(|b| b.is_ramp()).count();
            let stairs = c
                .buildings
                .iter()
                .filter(|b| b.core.is_some() && !b.is_ramp())
                .count();
            assert!((2..=3).contains(&n), "seed {seed}: {n} buildings");
            assert!(
                ramps >= 1 && stairs >= 1,
                "seed {seed}: {ramps} ramps, {stairs} stairs"
            );
            assert_eq!(c.bridges.len(), 1, "seed {seed}");
            assert!(!c.terrain.mounds.is_empty(), "seed {seed}: no embankment");
            assert!(c.x_roads.len() + c.y_roads.len() >= 4);
        }
    }

    #[test]
    fn larger_worlds_have_bridges_and_embankments() {
        for seed in 0..40 {
            let c = plan(Size::S, seed);
            assert!(!c.bridges.is_empty(), "seed {seed}: no bridge");
            assert!(!c.terrain.mounds.is_empty(), "seed {seed}: no embankment");
            assert!(
                c.buildings.iter().any(|b| b.is_ramp()),
                "seed {seed}: no ramp"
            );
            for b in &c.bridges {
                let r = b.footprint();
                assert!(r.x0 >= 0.0 && r.y0 >= 0.0 && r.x1 <= 250.0 && r.y1 <= 250.0);
            }
        }
        for seed in 0..4 {
            let c = plan(Size::M, seed);
            assert!(
                c.bridges.len() >= 3,
                "seed {seed}: {} bridges",
                c.bridges.len()
            );
        }
    }
}
