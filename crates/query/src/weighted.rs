//! The search over polygons: an A* whose nodes are polygons, as Detour's `findPath` is, for
//! meshes whose areas cost other than 1 (or a filter that avoids or re-prices areas), and as
//! the fallback of the any-angle search.
//!
//! A polygon is entered at one point of the way it was reached by: on a shared edge or a
//! stair link's segment, the point on the way from where the walk entered the polygon before
//! to the end ([`crate::path::through`]); over an off-mesh link, its landing point (entered at
//! its take-off point, exactly). A step across polygon `p` costs its plan length times `p`'s
//! area cost; a link adds its plan length and its cost. A polygon reached again more cheaply
//! is opened again (Detour does), and the heuristic is the plan distance to the end times the
//! cheapest area's cost, so the first time the end is taken from the open list its cost is
//! the least over these entry points. The corridor's string is then pulled as any.
//!
//! Unlike the any-angle search this is not the shortest path: entry points are chosen, not
//! searched, and an area's cost bends the shortest way at its border (refraction) where a
//! pulled string does not. Detour answers the same way.

use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;
use tessera_navmesh::NONE;

use crate::filter::Costs;
use crate::geom::plan_len;
use crate::hier::Ends;
use crate::path::{through, Corridor, WayScratch};
use crate::search::{corridor_from_end, Open};
use crate::Query;

/// A polygon reached: its cost, where it was entered, the polygon before and the link taken
/// into it ([`NONE`]: a shared edge or none).
#[derive(Clone, Copy)]
struct Reached {
    g: f64,
    at: [f32; 3],
    from: u32,
    link: u32,
}

/// The polygons a search reached, and whether it reached the end.
type Searched = (FxHashMap<u32, Reached>, bool);

impl Query<'_> {
    /// A corridor from `ends.start_poly` to `ends.end_poly` over portals and links at `costs`
    /// (areas and off-mesh links; see the module documentation); None when none joins them
    /// (avoided areas and links count as absent; a walk may start in an avoided area, and
    /// leaves it at its plain length).
    pub(crate) fn corridor_over_polygons(&self, ends: Ends, costs: &Costs) -> Option<Corridor> {
        let (best, found) = self.search_polygons(ends, costs);
        found.then(|| trace(&best, ends.end_poly, true))
    }

    /// [`Query::corridor_over_polygons`] as [`Query::find_path`] answers: when the end is not
    /// reached, the corridor to the polygon reached whose closest point comes nearest the end
    /// (the first in id order on a tie), `found` false.
    pub(crate) fn weighted_corridor(&self, ends: Ends, costs: &Costs) -> Corridor {
        let (best, found) = self.search_polygons(ends, costs);
        if found {
            return trace(&best, ends.end_poly, true);
        }
        let distance = |p: u32| {
            self.closest_point(p, ends.end)
                .map_or(f64::INFINITY, |c| crate::geom::dist3(c, ends.end))
        };
        let mut reached: Vec<u32> = best.keys().copied().collect();
        reached.sort_unstable();
        let nearest = reached
            .into_iter()
            .map(|p| (distance(p), p))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map_or(ends.start_poly, |(_, p)| p);
        trace(&best, nearest, false)
    }

    /// The search of the module documentation: every polygon reached, and whether the end was.
    fn search_polygons(&self, ends: Ends, costs: &Costs) -> Searched {
        let areas = costs.areas(self);
        let area_cost = |p: u32| {
            let id = self.mesh.polys[p as usize].area_id.to_native() as usize;
            areas.get(id).copied().unwrap_or(1.0)
        };
        // The cheapest factor any step can have: the heuristic stays below the true cost.
        let cheapest = areas
            .iter()
            .copied()
            .filter(|c| c.is_finite() && *c > 0.0)
            .fold(f32::INFINITY, f32::min);
        let cheapest = if cheapest.is_finite() {
            f64::from(cheapest.min(1.0))
        } else {
            1.0
        };
        let (end_poly, end) = (ends.end_poly, ends.end);
        let mut best: FxHashMap<u32, Reached> = FxHashMap::default();
        let mut open = BinaryHeap::new();
        best.insert(
            ends.start_poly,
            Reached {
                g: 0.0,
                at: ends.start,
                from: NONE,
                link: NONE,
            },
        );
        open.push(Open {
            f: plan_len(ends.start, end) * cheapest,
            node: ends.start_poly,
        });
        // The end's cost includes the walk from where it was entered to the end point.
        let mut end_cost = f64::INFINITY;
        let mut scratch = WayScratch::default();
        while let Some(Open { f, node: p }) = open.pop() {
            if p == end_poly {
                return (best, true);
            }
            let here = best[&p];
            // A stale entry: the polygon was reached more cheaply since it was pushed.
            if f > here.g + plan_len(here.at, end) * cheapest + 1e-9 * (1.0 + f) {
                continue;
            }
            // The start may lie in an avoided area (NaN): walking out of it costs its length.
            let factor = match f64::from(area_cost(p)) {
                c if c.is_nan() => 1.0,
                c => c,
            };
            self.ways_into(p, &mut scratch);
            for w in &scratch.out {
                let nb = w.to;
                if nb == p || !self.valid_poly(nb) || area_cost(nb).is_nan() {
                    continue;
                }
                let (take_off, landing, extra) = if w.off_mesh != NONE {
                    let l = &self.mesh.links[w.index as usize];
                    let Some(cost) = costs.link(w.off_mesh, l.cost.to_native()) else {
                        continue;
                    };
                    (w.left, w.land, plan_len(w.left, w.land) + f64::from(cost))
                } else {
                    let at = through(here.at, end, (w.left, w.right));
                    let landing = if w.link {
                        self.closest_point(nb, at).unwrap_or(at)
                    } else {
                        at
                    };
                    (at, landing, plan_len(at, landing))
                };
                let mut g = here.g + plan_len(here.at, take_off) * factor + extra;
                let h = if nb == end_poly {
                    g += plan_len(landing, end) * f64::from(area_cost(nb));
                    if g >= end_cost {
                        continue;
                    }
                    end_cost = g;
                    0.0
                } else {
                    plan_len(landing, end) * cheapest
                };
                if best.get(&nb).is_some_and(|r| r.g <= g) {
                    continue;
                }
                // The corridor names the off-mesh links it takes; a stair is the first way.
                let link = if w.off_mesh != NONE { w.index } else { NONE };
                best.insert(
                    nb,
                    Reached {
                        g,
                        at: landing,
                        from: p,
                        link,
                    },
                );
                open.push(Open { f: g + h, node: nb });
            }
        }
        (best, false)
    }
}

/// The corridor from the start to `last`, a polygon `best` reached.
fn trace(best: &FxHashMap<u32, Reached>, last: u32, found: bool) -> Corridor {
    let (mut polys, mut jumps) = (vec![last], Vec::new());
    while let Some(r) = best.get(polys.last().expect("not empty")) {
        if r.from == NONE {
            break;
        }
        if r.link != NONE {
            jumps.push((polys.len() - 1, r.link));
        }
        polys.push(r.from);
    }
    corridor_from_end(polys, jumps, found)
}
