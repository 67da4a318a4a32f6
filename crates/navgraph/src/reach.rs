//! What pass 3 drops. Reachability (seed 001): with seed points, the polygons an agent
//! standing on a seed can reach over portals and links are kept and the rest is dropped.
//! Without seeds, islands: a connected component of the polygon graph (over portals and
//! links) whose area is below a minimum is dropped, such as the top of a crate or a prop no
//! agent can climb onto. The polygon graph is read from the spill files memory-mapped
//! read-only (clean pages the kernel can drop); marks are bitsets, one bit per polygon.

use bytemuck::Pod;
use tessera_artifacts::DETAIL;
use tessera_geom::union_find;
use tessera_navmesh::{Component, Frame, Poly, NONE};
use tessera_spill::Spill;

use crate::assemble::{say, tick, tick_record, to_world, Report, Spilled, Step};
use crate::links::GridLink;
use crate::BuildError;

/// Which polygons the navmesh keeps.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pruning<'a> {
    /// Walkable seed points (internal frame). When any are given, only what an agent standing
    /// on one can reach is kept, whatever its size.
    pub seeds: &'a [[f32; 3]],
    /// Without seeds: connected components smaller than this [m² of plan area] are dropped;
    /// 0 keeps every component.
    pub min_island_area: f64,
}

impl<'a> Pruning<'a> {
    /// Keeps what `seeds` reach (and everything when there are none).
    pub fn seeds(seeds: &'a [[f32; 3]]) -> Pruning<'a> {
        Pruning {
            seeds,
            min_island_area: 0.0,
        }
    }
}

/// What pass 3 keeps.
pub(crate) struct Reached {
    /// The polygons kept.
    pub keep: Bits,
    pub polygons_removed: u64,
    /// Connected groups of removed polygons, and their plan area [m²].
    pub islands: u64,
    pub area_removed: f64,
    /// Seeds (by index) that stand on no polygon.
    pub unplaced_seeds: Vec<usize>,
}

/// Pass 3b: the connected components of the polygons `keep` holds (see
/// [`Graph::components`]).
pub(crate) fn components(
    input: &Spilled,
    patches: &Spill<[u32; 2]>,
    links: &[GridLink],
    keep: &Bits,
    report: &mut Report,
) -> Result<Components, BuildError> {
    let graph = Graph::map(&input.polys, &input.neis, patches, links)?;
    graph.components(input.polygons(), keep, report)
}

/// The connected components of the kept polygons.
pub(crate) struct Components {
    /// Per polygon (numbered as added): its component, or [`NONE`] when dropped.
    pub of: Vec<u32>,
    /// Numbered by their first polygon.
    pub table: Vec<Component>,
}

/// Pass 3: floods the polygon graph (edges within regions, the border `patches`, `links`)
/// from the polygons under the seeds (internal frame), and counts the islands of what no seed
/// reaches; without seeds, drops the components smaller than the minimum island area.
pub(crate) fn prune(
    input: &Spilled,
    patches: &Spill<[u32; 2]>,
    links: &[GridLink],
    pruning: &Pruning,
    report: &mut Report,
) -> Result<Reached, BuildError> {
    let np = input.polygons();
    let seeds = pruning.seeds;
    if seeds.is_empty() {
        if pruning.min_island_area > 0.0 && np > 0 {
            // A part is what portals and links join either way: a one-way link (a jump down)
            // joins its two ends' parts as a two-way one does.
            let mut both: Vec<GridLink> = links.iter().map(|l| (l.1, l.0, l.2, l.3, l.4)).collect();
            both.extend_from_slice(links);
            both.sort_unstable_by_key(|l| (l.0, l.1, l.2, l.3, l.4));
            both.dedup();
            let graph = Graph::map(&input.polys, &input.neis, patches, &both)?;
            return drop_small_islands(&graph, np, pruning.min_island_area, report);
        }
        return Ok(Reached {
            keep: Bits::new(np as usize, true),
            polygons_removed: 0,
            islands: 0,
            area_removed: 0.0,
            unplaced_seeds: Vec::new(),
        });
    }
    let graph = Graph::map(&input.polys, &input.neis, patches, links)?;
    let mut starts = Vec::new();
    let mut unplaced_seeds = Vec::new();
    let vmap = Mapped::<[i32; 3]>::open(&input.verts)?;
    let dmap = Mapped::<[f32; 3]>::open(&input.detail)?;
    let tmap = Mapped::<[u32; 3]>::open(&input.tris)?;
    for (i, &s) in seeds.iter().enumerate() {
        match polygon_under(
            &input.frame,
            graph.polys.get(),
            vmap.get(),
            dmap.get(),
            tmap.get(),
            s,
        ) {
            Some(p) => starts.push(p),
            None => unplaced_seeds.push(i),
        }
    }
    let mut reached = Bits::new(np as usize, false);
    graph.flood(starts, &mut reached, (0, report), |_| {})?;
    let mut seen = reached.clone();
    let mut islands = 0;
    let mut area_removed = 0.0;
    for p in 0..np {
        tick(report, p)?;
        if !seen.get(p as usize) {
            islands += 1;
            graph.flood(vec![p], &mut seen, (p, report), |poly| {
                area_removed += poly.area as f64
            })?;
        }
    }
    say(report, Step::Done(u64::from(np)))?;
    Ok(Reached {
        polygons_removed: (np as u64) - reached.count(),
        keep: reached,
        islands,
        area_removed,
        unplaced_seeds,
    })
}

/// Drops every connected component whose plan area is below `min_area` [m²]: one flood per
/// component to measure it, a second over the small ones to mark them (bits only, no label
/// per polygon). Components are found in polygon order, so the result is deterministic.
fn drop_small_islands(
    graph: &Graph,
    np: u32,
    min_area: f64,
    report: &mut Report,
) -> Result<Reached, BuildError> {
    let mut seen = Bits::new(np as usize, false);
    let mut dropped = Bits::new(np as usize, false);
    let (mut islands, mut polygons_removed, mut area_removed) = (0, 0, 0.0);
    for p in 0..np {
        tick(report, p)?;
        if seen.get(p as usize) {
            continue;
        }
        let (mut area, mut count) = (0.0f64, 0u64);
        graph.flood(vec![p], &mut seen, (p, report), |poly| {
            area += poly.area as f64;
            count += 1;
        })?;
        if area < min_area {
            graph.flood(vec![p], &mut dropped, (p, report), |_| {})?;
            islands += 1;
            polygons_removed += count;
            area_removed += area;
        }
    }
    say(report, Step::Done(u64::from(np)))?;
    Ok(Reached {
        keep: dropped.complement(),
        polygons_removed,
        islands,
        area_removed,
        unplaced_seeds: Vec::new(),
    })
}

/// One bit per polygon.
#[derive(Clone)]
pub(crate) struct Bits {
    words: Vec<u64>,
    len: usize,
}

/// Ones before each 64-bit word, for ranks.
pub(crate) struct Ranks(Vec<u32>);

impl Ranks {
    pub fn rank(&self, bits: &Bits, i: usize) -> usize {
        let w = i / 64;
        let below = bits.words[w] & ((1u64 << (i % 64)) - 1);
        self.0[w] as usize + below.count_ones() as usize
    }
}

impl Bits {
    pub fn new(len: usize, value: bool) -> Bits {
        let mut words = vec![if value { u64::MAX } else { 0 }; len.div_ceil(64) + 1];
        if value {
            // Bits past the end stay clear, so counts are exact.
            for (w, word) in words.iter_mut().enumerate() {
                let lo = w * 64;
                if lo >= len {
                    *word = 0;
                } else if lo + 64 > len {
                    *word = (1u64 << (len - lo)) - 1;
                }
            }
        }
        Bits { words, len }
    }
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }
    /// The other bits (those past the end stay clear).
    pub fn complement(&self) -> Bits {
        let mut all = Bits::new(self.len, true);
        for (w, mine) in all.words.iter_mut().zip(&self.words) {
            *w &= !mine;
        }
        all
    }
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| w.count_ones() as u64).sum()
    }
    pub fn ranks(&self) -> Ranks {
        let mut acc = 0u32;
        Ranks(
            self.words
                .iter()
                .map(|w| {
                    let r = acc;
                    acc += w.count_ones();
                    r
                })
                .collect(),
        )
    }
}

/// A spill file memory-mapped read-only (clean pages the kernel can drop).
pub(crate) struct Mapped<T> {
    map: Option<memmap2::Mmap>,
    _t: std::marker::PhantomData<T>,
}

impl<T: Pod> Mapped<T> {
    #[allow(unsafe_code)] // maps a spill file read-only: see the SAFETY comment inside
    pub(crate) fn open(spill: &Spill<T>) -> Result<Mapped<T>, BuildError> {
        if spill.is_empty() {
            return Ok(Mapped {
                map: None,
                _t: std::marker::PhantomData,
            });
        }
        let file = std::fs::File::open(spill.path())?;
        // SAFETY: a scratch file of this bake, written and closed before, read-only here and
        // not written again while mapped.
        let map = unsafe { memmap2::Mmap::map(&file) }?;
        Ok(Mapped {
            map: Some(map),
            _t: std::marker::PhantomData,
        })
    }
    pub(crate) fn get(&self) -> &[T] {
        match &self.map {
            Some(m) => bytemuck::cast_slice(&m[..]),
            None => &[],
        }
    }
}

/// The polygon graph read from the spill files (for reachability).
struct Graph<'a> {
    polys: Mapped<Poly>,
    neis: Mapped<u32>,
    patches: Mapped<[u32; 2]>,
    links: &'a [GridLink],
}

impl<'a> Graph<'a> {
    fn map(
        polys: &Spill<Poly>,
        neis: &Spill<u32>,
        patches: &Spill<[u32; 2]>,
        links: &'a [GridLink],
    ) -> Result<Graph<'a>, BuildError> {
        Ok(Graph {
            polys: Mapped::open(polys)?,
            neis: Mapped::open(neis)?,
            patches: Mapped::open(patches)?,
            links,
        })
    }

    /// The connected components of the polygons kept in `keep` over portals, border patches
    /// and links (either way: a one-way link still joins them), by union-find over the
    /// polygons (8 bytes a polygon while it runs), numbered by their first polygon.
    fn components(
        &self,
        np: u32,
        keep: &Bits,
        report: &mut Report,
    ) -> Result<Components, BuildError> {
        let (polys, neis, patches) = (self.polys.get(), self.neis.get(), self.patches.get());
        let mut parent: Vec<u32> = (0..np).collect();
        let join = |parent: &mut Vec<u32>, a: u32, b: u32| {
            if b != NONE && keep.get(a as usize) && keep.get(b as usize) {
                union_find::join(parent, a, b);
            }
        };
        // Patches are sorted by edge, and edges are numbered polygon after polygon.
        let mut patch = 0;
        for p in 0..np {
            tick(report, p)?;
            let poly = polys[p as usize];
            for e in poly.first..poly.first + poly.count {
                join(&mut parent, p, neis[e as usize]);
                while patch < patches.len() && patches[patch][0] < e {
                    patch += 1;
                }
                while patch < patches.len() && patches[patch][0] == e {
                    join(&mut parent, p, patches[patch][1]);
                    patch += 1;
                }
            }
        }
        for l in self.links {
            join(&mut parent, l.0, l.1);
        }
        // Numbered by first polygon: a root is its component's smallest polygon.
        let mut of = vec![NONE; np as usize];
        let mut table: Vec<Component> = Vec::new();
        for p in 0..np {
            if !keep.get(p as usize) {
                continue;
            }
            let r = union_find::root(&mut parent, p);
            let id = if r == p {
                table.push(Component::default());
                (table.len() - 1) as u32
            } else {
                of[r as usize]
            };
            of[p as usize] = id;
            let c = &mut table[id as usize];
            c.polygons += 1;
            c.area += polys[p as usize].area as f64;
        }
        say(report, Step::Done(u64::from(np)))?;
        Ok(Components { of, table })
    }

    /// Marks in `mark` every polygon connected to `starts` and not marked yet, handing each
    /// to `visit`. A flood may cover most of the world: every [`crate::REPORT_EVERY_RECORD`]
    /// polygons it repeats `Done(at)` (where the pass's sweep stands) to `report`.
    fn flood(
        &self,
        starts: Vec<u32>,
        mark: &mut Bits,
        (at, report): (u32, &mut Report),
        mut visit: impl FnMut(&Poly),
    ) -> Result<(), BuildError> {
        let mut visited = 0u64;
        let (polys, neis, patches) = (self.polys.get(), self.neis.get(), self.patches.get());
        let mut stack = Vec::new();
        for s in starts {
            if !mark.get(s as usize) {
                mark.set(s as usize);
                stack.push(s);
            }
        }
        let push = |q: u32, mark: &mut Bits, stack: &mut Vec<u32>| {
            if q != NONE && !mark.get(q as usize) {
                mark.set(q as usize);
                stack.push(q);
            }
        };
        while let Some(p) = stack.pop() {
            tick_record(report, &mut visited, Some(u64::from(at)))?;
            let poly = polys[p as usize];
            visit(&poly);
            // The patches are sorted by edge and a polygon's edges are consecutive: one search
            // for its first edge, then a walk along them.
            let mut patch = patches.partition_point(|x| x[0] < poly.first);
            for e in poly.first..poly.first + poly.count {
                push(neis[e as usize], mark, &mut stack);
                while let Some(x) = patches.get(patch).filter(|x| x[0] == e) {
                    push(x[1], mark, &mut stack);
                    patch += 1;
                }
            }
            let at = self.links.partition_point(|l| l.0 < p);
            for l in self.links[at..].iter().take_while(|l| l.0 == p) {
                push(l.1, mark, &mut stack);
            }
        }
        Ok(())
    }
}

/// The polygon under a seed point (internal frame): one whose detail triangles hold the plan
/// point, with the surface within the agent's height, nearest in height.
fn polygon_under(
    frame: &Frame,
    polys: &[Poly],
    verts: &[[i32; 3]],
    detail: &[[f32; 3]],
    tris: &[[u32; 3]],
    p: [f32; 3],
) -> Option<u32> {
    let mut best: Option<(f32, u32)> = None;
    for (i, poly) in polys.iter().enumerate() {
        for t in &tris[poly.tri_first as usize..(poly.tri_first + poly.tri_count) as usize] {
            let [a, b, c] = t.map(|v| {
                if v & DETAIL != 0 {
                    detail[(v & !DETAIL) as usize]
                } else {
                    to_world(frame, verts[v as usize])
                }
            });
            let d = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
            if d == 0.0 {
                continue;
            }
            let u = ((b[0] - p[0]) * (c[1] - p[1]) - (b[1] - p[1]) * (c[0] - p[0])) / d;
            let v = ((c[0] - p[0]) * (a[1] - p[1]) - (c[1] - p[1]) * (a[0] - p[0])) / d;
            let w = 1.0 - u - v;
            if u < -1e-5 || v < -1e-5 || w < -1e-5 {
                continue;
            }
            let dz = (u * a[2] + v * b[2] + w * c[2] - p[2]).abs();
            if dz <= frame.agent_height && best.is_none_or(|(bd, _)| dz < bd) {
                best = Some((dz, i as u32));
            }
        }
    }
    best.map(|(_, i)| i)
}
