//! Pass 6: the hierarchical graph of the file ([`tessera_navmesh::Hierarchy`]; seed 003,
//! 4.4; issue 17), over the kept polygons in their final numbering.
//!
//! 1. **Squares.** Each polygon is filed under the plan cell of the mean of its corners; the
//!    cells, in Morton order (an external sort), are cut into a quadtree whose leaves hold at
//!    most [`ClusterSettings::max_polygons`] polygons, or are the smallest square allowed
//!    ([`ClusterSettings::min_side_cells`]).
//! 2. **Clusters.** The polygons of one leaf joined by portals and links (either way) form a
//!    part (union-find); a leaf over two floors, or cut by walls, gives several. Parts of
//!    fewer than a quarter of the most a leaf holds are merged, in order, into the
//!    neighbouring part they share the most portals with, up to that most. Then the
//!    borders are smoothed: a polygon that shares more portal length with a neighbouring
//!    cluster than with its own moves there (sweeps in polygon order, while that cluster
//!    holds fewer than the most), so a street along a square's side is not split lengthwise.
//!    The connected pieces of what results are the clusters, numbered by their first
//!    polygon.
//! 3. **Entrances.** The portals between two clusters, seen from the cluster with the smaller
//!    number, are chained end to end (a border may cross a street, leave it and cross the
//!    next); each chain is cut into equal pieces of at most
//!    [`ClusterSettings::entrance_spacing`] times the smaller cluster's extent (that length
//!    no less than [`ClusterSettings::entrance_min_spacing`]), and each piece gets an
//!    entrance on both sides, at its middle. Links between clusters are grouped by
//!    plan distance (half that spacing): each group gets an exit at its first link's middle
//!    and a landing on the far side, a step of the jump's plan length. An off-mesh link is a
//!    group of its own: its take-off, its landing, and a step of its plan length plus its
//!    cost. Each cluster lists its
//!    entrances by neighbour, then its exits, then its landings: both sides compute every
//!    piece from the same edges in the same order, so they agree.
//! 4. **Lengths.** For each cluster, its polygons and its halo (the polygons one portal out
//!    of it, as a refining search may step into them: their other portals cut; links inside
//!    the cluster kept) are written as a small navmesh of their own and searched from each
//!    entrance with the query crate's exact any-angle search towards all the others: the
//!    table of shortest plan lengths within the cluster. Clusters are measured a batch at a
//!    time on the caller's threads and written in order.
//!
//! Memory: the kept arrays are memory-mapped (clean pages), the sort takes the caller's
//! buffer, and per polygon 8 bytes (its leaf, then union-find, then its cluster and the
//! cluster's member list) while the pass runs, as the components pass takes; per cluster and
//! per entrance a few words; per thread one cluster's navmesh. Deterministic: every step
//! depends on the polygons alone, in their order, whatever the threads.

use std::path::Path;

use rustc_hash::FxHashMap as HashMap;
use tessera_geom::union_find;
use tessera_navmesh::{
    Area, Cluster, Component, Entrance, Frame, Grid, Hierarchy, Link, NavMesh, OffMeshLink, Poly,
    Stats, NONE,
};
use tessera_spill::{Sorter, Spill, SpillWriter};

use crate::assemble::{say, tick, tick_record, Report, Step};
use crate::reach::Mapped;
use crate::BuildError;

/// How polygons are grouped into clusters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterSettings {
    /// A square of the quadtree holding more polygons than this is cut in four.
    pub max_polygons: u32,
    /// ... unless its side is this many cells or fewer.
    pub min_side_cells: u32,
    /// The portals between two clusters get an entrance every this fraction of the smaller
    /// cluster's extent (the longer side of its plan box), or closer: the finer, the closer
    /// the plan's lengths to the shortest, the more entrances to plan over.
    pub entrance_spacing: f32,
    /// ... but that length is never taken below this (world units), so a chain of portals
    /// `L` long has at most `ceil(L / entrance_min_spacing)` entrances: on a finely cut mesh,
    /// whose clusters are a few metres across, a fraction alone would put entrances a hand
    /// apart.
    pub entrance_min_spacing: f32,
}

impl Default for ClusterSettings {
    fn default() -> ClusterSettings {
        ClusterSettings {
            max_polygons: 128,
            min_side_cells: 16,
            entrance_spacing: 0.0625,
            entrance_min_spacing: 2.0,
        }
    }
}

/// The kept mesh, as the passes before wrote it (world units, final numbering).
pub(crate) struct MeshView<'a> {
    pub frame: &'a Frame,
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    pub verts: &'a [[f32; 3]],
    pub polys: &'a [Poly],
    pub poly_verts: &'a [u32],
    pub neis: &'a [u32],
    /// Sorted by source polygon.
    pub links: &'a [Link],
    /// The off-mesh links' table ([`Link::off_mesh`]).
    pub off_mesh: &'a [OffMeshLink],
    /// The areas' table ([`Poly::area_id`]).
    pub areas: &'a [Area],
}

impl MeshView<'_> {
    fn corners(&self, p: u32) -> impl Iterator<Item = [f32; 3]> + '_ {
        let poly = &self.polys[p as usize];
        self.poly_verts[poly.first as usize..(poly.first + poly.count) as usize]
            .iter()
            .map(|&v| self.verts[v as usize])
    }

    fn neighbours(&self, p: u32) -> &[u32] {
        let poly = &self.polys[p as usize];
        &self.neis[poly.first as usize..(poly.first + poly.count) as usize]
    }

    fn links_of(&self, p: u32) -> &[Link] {
        let poly = &self.polys[p as usize];
        &self.links[poly.link_first as usize..(poly.link_first + poly.link_count) as usize]
    }
}

/// The hierarchy's tables in spill files.
pub(crate) struct HierarchyColumns {
    pub poly_cluster: Spill<u32>,
    pub clusters: Spill<Cluster>,
    pub entrances: Spill<Entrance>,
    pub costs: Spill<f32>,
    /// Each cluster's key ([`KeptLengths`]), in cluster order.
    pub keys: Vec<u64>,
    /// Clusters whose table was kept rather than searched.
    pub kept: u64,
}

/// Where the hierarchy may take a cluster's table of lengths from an earlier build instead of
/// searching it again (an incremental rebake). A table depends on the cluster's polygons as a
/// navmesh of their own and its entrances alone: their hash is the cluster's key.
pub trait KeptLengths: Send + Sync {
    /// The `n * n` table an earlier build made for a cluster of key `key`, if it kept it.
    fn kept(&self, key: u64, n: usize) -> Option<Vec<f32>>;

    /// Told every cluster's key and table of this build, made or kept, in cluster order (on
    /// the thread that writes the hierarchy): for the next build to keep.
    fn keep(&self, key: u64, table: &[f32]) -> std::io::Result<()> {
        let _ = (key, table);
        Ok(())
    }
}

impl HierarchyColumns {
    pub fn paths(&self) -> [&Path; 4] {
        [
            self.poly_cluster.path(),
            self.clusters.path(),
            self.entrances.path(),
            self.costs.path(),
        ]
    }
}

/// A portal between two clusters as the cluster with the smaller number sees it (its
/// polygon's edge, counter-clockwise round that polygon), with the polygon on each side.
#[derive(Clone, Copy)]
struct Crossing {
    a: [f32; 3],
    b: [f32; 3],
    /// The polygon on the side of the cluster that found it, and the one across.
    own: u32,
    across: u32,
}

/// A group of links from one cluster into another.
#[derive(Clone, Copy)]
struct LinkGroup {
    from_cluster: u32,
    to_cluster: u32,
    exit_poly: u32,
    exit: [f32; 3],
    land_poly: u32,
    landing: [f32; 3],
    /// The step from exit to landing (plan length, with an off-mesh link's cost).
    cost: f32,
}

/// Pass 6 (see the module documentation), its scratch files in `dir`, sorting in about
/// `memory` bytes, measuring lengths on `threads` threads.
pub(crate) fn build_hierarchy(
    mesh: &MeshView,
    settings: &ClusterSettings,
    (dir, memory, threads): (&Path, usize, usize),
    kept: Option<&dyn KeptLengths>,
    report: &mut Report,
) -> Result<HierarchyColumns, BuildError> {
    let np = mesh.polys.len() as u32;
    let scratch = |name: &str| dir.join(format!("hier_{name}.final"));
    let leaf_of = leaves(mesh, settings, dir, memory, report)?;
    let (cluster_of, nc) = clusters(mesh, leaf_of, settings, report)?;
    // Each cluster's plan extent (the longer side of its box), for the entrances' spacing.
    let mut boxes = vec![
        [
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY
        ];
        nc as usize
    ];
    for p in 0..np {
        let b = &mut boxes[cluster_of[p as usize] as usize];
        for v in mesh.corners(p) {
            b[0] = b[0].min(v[0]);
            b[1] = b[1].min(v[1]);
            b[2] = b[2].max(v[0]);
            b[3] = b[3].max(v[1]);
        }
    }
    let extent: Vec<f32> = boxes
        .iter()
        .map(|b| (b[2] - b[0]).max(b[3] - b[1]).max(mesh.frame.cell_size))
        .collect();
    drop(boxes);
    let mut poly_cluster = SpillWriter::<u32>::create(scratch("poly_cluster"))?;
    poly_cluster.extend(&cluster_of)?;
    // Members of each cluster, in polygon order (a counting sort).
    let mut starts = vec![0u32; nc as usize + 1];
    for &c in &cluster_of {
        starts[c as usize + 1] += 1;
    }
    for c in 0..nc as usize {
        starts[c + 1] += starts[c];
    }
    let mut members = vec![0u32; np as usize];
    {
        let mut at = starts.clone();
        for p in 0..np {
            let c = cluster_of[p as usize] as usize;
            members[at[c] as usize] = p;
            at[c] += 1;
        }
    }
    let members_of =
        |c: u32| &members[starts[c as usize] as usize..starts[c as usize + 1] as usize];
    let spacing = f64::from(settings.entrance_spacing);
    let floor = f64::from(settings.entrance_min_spacing);
    let piece_len = |c: u32, d: u32| {
        (spacing * f64::from(extent[c as usize].min(extent[d as usize]))).max(floor)
    };

    // Links between clusters, grouped, and each cluster's landings in order.
    let groups = link_groups(mesh, &cluster_of, &piece_len);
    let mut exits_start = vec![0u32; nc as usize + 1];
    let mut landings_start = vec![0u32; nc as usize + 1];
    for g in &groups {
        exits_start[g.from_cluster as usize + 1] += 1;
        landings_start[g.to_cluster as usize + 1] += 1;
    }
    for c in 0..nc as usize {
        exits_start[c + 1] += exits_start[c];
        landings_start[c + 1] += landings_start[c];
    }
    // Groups are sorted by source cluster; their rank among their target's landings:
    let mut landing_rank = vec![0u32; groups.len()];
    {
        let mut at = landings_start.clone();
        for (i, g) in groups.iter().enumerate() {
            landing_rank[i] = at[g.to_cluster as usize] - landings_start[g.to_cluster as usize];
            at[g.to_cluster as usize] += 1;
        }
    }
    let mut landings_of: Vec<u32> = vec![0; groups.len()];
    for (i, g) in groups.iter().enumerate() {
        landings_of[(landings_start[g.to_cluster as usize] + landing_rank[i]) as usize] = i as u32;
    }

    // First sweep: how many portal pieces each cluster has with each neighbour.
    say(report, Step::Pass("hierarchy: entrances", u64::from(np)))?;
    let mut pieces_start = vec![0u32; nc as usize + 1];
    let mut pair_counts: Vec<(u32, u32)> = Vec::new();
    // Clusters a batch at a time on `threads` threads (each cluster's counts alone), taken
    // in order.
    let batch = 256 * threads.max(1) as u32;
    for first in (0..nc).step_by(batch as usize) {
        let ids: Vec<u32> = (first..(first + batch).min(nc)).collect();
        let counts = on_threads(threads, &ids, |_, &c| {
            let mut crossings = Vec::new();
            let by_neighbour =
                portal_crossings(mesh, &cluster_of, members_of(c), c, &mut crossings);
            by_neighbour
                .into_iter()
                .map(|(d, run)| (d, pieces(&crossings[run], piece_len(c, d)).len() as u32))
                .collect::<Vec<_>>()
        });
        for (&c, counts) in ids.iter().zip(counts) {
            tick_cluster(report, &starts, c)?;
            pair_counts.extend(counts);
            pieces_start[c as usize + 1] = pair_counts.len() as u32;
        }
    }
    say(report, Step::Done(u64::from(np)))?;
    let portal_total = |c: u32| -> u32 {
        pair_counts[pieces_start[c as usize] as usize..pieces_start[c as usize + 1] as usize]
            .iter()
            .map(|x| x.1)
            .sum()
    };
    let mut entrance_first = vec![0u64; nc as usize + 1];
    for c in 0..nc {
        let n = u64::from(portal_total(c))
            + u64::from(exits_start[c as usize + 1] - exits_start[c as usize])
            + u64::from(landings_start[c as usize + 1] - landings_start[c as usize]);
        entrance_first[c as usize + 1] = entrance_first[c as usize] + n;
    }
    // The first entrance of cluster `d`'s pieces with neighbour `c`.
    let twin_base = |d: u32, c: u32| -> u32 {
        let list =
            &pair_counts[pieces_start[d as usize] as usize..pieces_start[d as usize + 1] as usize];
        let before: u32 = list.iter().take_while(|x| x.0 < c).map(|x| x.1).sum();
        entrance_first[d as usize] as u32 + before
    };
    let total_entrances = entrance_first[nc as usize];
    let total_costs: u64 = (0..nc as usize)
        .map(|c| (entrance_first[c + 1] - entrance_first[c]).pow(2))
        .sum();
    for (what, n) in [
        ("hierarchy entrances", total_entrances),
        ("hierarchy lengths", total_costs),
    ] {
        if n > u64::from(u32::MAX) {
            return Err(BuildError::Limit {
                what,
                limit: u64::from(u32::MAX),
                at: "the hierarchy".into(),
            });
        }
    }

    // Second sweep: each cluster's entrances, then its table of lengths.
    say(report, Step::Pass("hierarchy: lengths", u64::from(np)))?;
    let mut w_clusters = SpillWriter::<Cluster>::create(scratch("clusters"))?;
    let mut w_entrances = SpillWriter::<Entrance>::create(scratch("entrances"))?;
    let mut w_costs = SpillWriter::<f32>::create(scratch("costs"))?;
    let mut cost_first = 0u64;
    // Cluster `c`'s entrances: by neighbour, then its links out, then its landings.
    let entrances_of = |c: u32| {
        let (mut mine, mut crossings) = (Vec::new(), Vec::new());
        let by_neighbour = portal_crossings(mesh, &cluster_of, members_of(c), c, &mut crossings);
        for (d, run) in by_neighbour {
            let twin = twin_base(d, c);
            let cut = pieces(&crossings[run], piece_len(c, d));
            for (k, (point, own, _)) in cut.into_iter().enumerate() {
                mine.push(Entrance {
                    point,
                    poly: own,
                    cluster: c,
                    across: twin + k as u32,
                    cost: 0.0,
                });
            }
        }
        for i in exits_start[c as usize] as usize..exits_start[c as usize + 1] as usize {
            let g = &groups[i];
            let d = g.to_cluster;
            let landing = entrance_first[d as usize] as u32
                + portal_total(d)
                + (exits_start[d as usize + 1] - exits_start[d as usize])
                + landing_rank[i];
            mine.push(Entrance {
                point: g.exit,
                poly: g.exit_poly,
                cluster: c,
                across: landing,
                cost: g.cost,
            });
        }
        for &i in &landings_of
            [landings_start[c as usize] as usize..landings_start[c as usize + 1] as usize]
        {
            let g = &groups[i as usize];
            mine.push(Entrance {
                point: g.landing,
                poly: g.land_poly,
                cluster: c,
                across: NONE,
                cost: 0.0,
            });
        }
        debug_assert_eq!(
            entrance_first[c as usize] + mine.len() as u64,
            entrance_first[c as usize + 1]
        );
        mine
    };
    // Clusters a batch at a time: their entrances and tables on `threads` threads (each
    // cluster's alone: the same bytes for any number), written in order.
    let (mut keys, mut kept_count) = (Vec::with_capacity(nc as usize), 0u64);
    let shared = shared_key(mesh);
    for first in (0..nc).step_by(batch as usize) {
        let ids: Vec<u32> = (first..(first + batch).min(nc)).collect();
        let done = on_threads(threads, &ids, |_, &c| {
            let mine = entrances_of(c);
            let table = lengths(mesh, shared, &cluster_of, members_of(c), c, &mine, kept);
            (mine, table)
        });
        for (&c, (mine, table)) in ids.iter().zip(done) {
            tick_cluster(report, &starts, c)?;
            let (table, key, was_kept) = table?;
            if let Some(kept) = kept {
                kept.keep(key, &table)?;
            }
            keys.push(key);
            kept_count += u64::from(was_kept);
            w_entrances.extend(&mine)?;
            w_costs.extend(&table)?;
            w_clusters.push(&Cluster {
                entrance_first: entrance_first[c as usize] as u32,
                entrance_count: mine.len() as u32,
                cost_first: cost_first as u32,
                polygons: members_of(c).len() as u32,
            })?;
            cost_first += table.len() as u64;
        }
    }
    say(report, Step::Done(u64::from(np)))?;
    Ok(HierarchyColumns {
        poly_cluster: poly_cluster.finish()?,
        clusters: w_clusters.finish()?,
        entrances: w_entrances.finish()?,
        costs: w_costs.finish()?,
        keys,
        kept: kept_count,
    })
}

/// `work` applied to every item of `items` (with its index) on up to `threads` threads, each
/// taking the next item not taken yet (clusters differ in cost by orders of magnitude); the
/// results in the items' order.
fn on_threads<T: Sync, R: Send>(
    threads: usize,
    items: &[T],
    work: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().enumerate().map(|(k, x)| work(k, x)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut parts: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (work, next) = (&work, &next);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if k >= items.len() {
                            break done;
                        }
                        done.push((k, work(k, &items[k])));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a hierarchy thread panicked"))
            .collect()
    });
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for part in parts.drain(..) {
        for (k, r) in part {
            out[k] = Some(r);
        }
    }
    out.into_iter()
        .map(|r| r.expect("every item done"))
        .collect()
}

/// Reports the polygons before cluster `c` done when its polygons reach a new stretch of
/// [`crate::REPORT_EVERY`] (clusters sweep the polygons cluster by cluster).
fn tick_cluster(report: &mut Report, starts: &[u32], c: u32) -> Result<(), BuildError> {
    let (lo, hi) = (starts[c as usize], starts[c as usize + 1]);
    if c == 0 || lo / crate::REPORT_EVERY != hi / crate::REPORT_EVERY {
        say(report, Step::Done(u64::from(lo)))?;
    }
    Ok(())
}

/// Plan length between two points.
fn plan_len(a: [f32; 3], b: [f32; 3]) -> f64 {
    (f64::from(b[0]) - f64::from(a[0])).hypot(f64::from(b[1]) - f64::from(a[1]))
}

/// Steps 1 (see the module documentation): per polygon its leaf, and per leaf its side as a
/// power of two cells.
fn leaves(
    mesh: &MeshView,
    settings: &ClusterSettings,
    dir: &Path,
    memory: usize,
    report: &mut Report,
) -> Result<Vec<u32>, BuildError> {
    let np = mesh.polys.len() as u32;
    say(report, Step::Pass("hierarchy: squares", u64::from(np)))?;
    let cs = f64::from(mesh.frame.cell_size.max(1e-6));
    let cell = |v: f64, o: f32| ((v - f64::from(o)) / cs).floor().clamp(0.0, 2e9) as u32;
    let mut sorter = Sorter::<[u32; 3]>::new(dir, "hier_keys", memory.max(1 << 16));
    let mut top = 0u32;
    for p in 0..np {
        tick(report, p)?;
        let (mut x, mut y, mut n) = (0.0f64, 0.0f64, 0.0f64);
        for v in mesh.corners(p) {
            x += f64::from(v[0]);
            y += f64::from(v[1]);
            n += 1.0;
        }
        let (cx, cy) = (
            cell(x / n.max(1.0), mesh.bounds_min[0]),
            cell(y / n.max(1.0), mesh.bounds_min[1]),
        );
        top = top.max(cx).max(cy);
        let m = morton(cx, cy);
        sorter.push([(m >> 32) as u32, m as u32, p])?;
    }
    say(report, Step::Done(u64::from(np)))?;
    let mut sorted = SpillWriter::<[u32; 3]>::create(dir.join("hier_keys.final"))?;
    let mut records = 0;
    for r in sorter.finish()? {
        tick_record(report, &mut records, None)?;
        sorted.push(&r?)?;
    }
    let sorted = sorted.finish()?;
    let map = Mapped::<[u32; 3]>::open(&sorted)?;
    let keys = map.get();
    let bits = 32 - top.leading_zeros();
    let min_bits = 32 - settings.min_side_cells.max(1).leading_zeros() - 1;
    let mut leaf_ranges: Vec<(u32, u32)> = Vec::new();
    split(
        keys,
        0,
        bits,
        min_bits,
        settings.max_polygons.max(1),
        &mut leaf_ranges,
    );
    let mut leaf_of = vec![0u32; np as usize];
    for (leaf, &(lo, hi)) in leaf_ranges.iter().enumerate() {
        for k in &keys[lo as usize..hi as usize] {
            leaf_of[k[2] as usize] = leaf as u32;
        }
    }
    drop(map);
    let _ = std::fs::remove_file(sorted.path());
    Ok(leaf_of)
}

/// Cuts `keys[lo..]` (sorted, all in one square of side `2^bits` cells) into leaves.
fn split(
    keys: &[[u32; 3]],
    lo: u32,
    bits: u32,
    min_bits: u32,
    max_polygons: u32,
    out: &mut Vec<(u32, u32)>,
) {
    let n = keys.len() as u32;
    if n == 0 {
        return;
    }
    if n <= max_polygons || bits <= min_bits {
        out.push((lo, lo + n));
        return;
    }
    let shift = 2 * (bits - 1);
    let quadrant = |k: &[u32; 3]| ((u64::from(k[0]) << 32 | u64::from(k[1])) >> shift) & 3;
    let mut at = 0usize;
    for q in 0..4u64 {
        let end = at + keys[at..].partition_point(|k| quadrant(k) <= q);
        split(
            &keys[at..end],
            lo + at as u32,
            bits - 1,
            min_bits,
            max_polygons,
            out,
        );
        at = end;
    }
}

/// The Morton code of a cell: the bits of `x` and `y` interleaved (`x` in the even bits).
fn morton(x: u32, y: u32) -> u64 {
    fn spread(v: u32) -> u64 {
        let mut v = u64::from(v);
        v = (v | v << 16) & 0x0000_ffff_0000_ffff;
        v = (v | v << 8) & 0x00ff_00ff_00ff_00ff;
        v = (v | v << 4) & 0x0f0f_0f0f_0f0f_0f0f;
        v = (v | v << 2) & 0x3333_3333_3333_3333;
        v = (v | v << 1) & 0x5555_5555_5555_5555;
        v
    }
    spread(x) | spread(y) << 1
}

/// Step 2: per polygon its cluster, and the number of clusters. The polygons of a leaf
/// joined by portals and links form a part; a part of fewer than a quarter of the most
/// polygons a leaf holds is then merged, part by part in order, into the neighbouring part it
/// shares the most portals with (ties: the smaller), when the two hold no more than that
/// most together. After [`smooth_borders`], the connected pieces are the clusters, numbered
/// by their first polygon.
fn clusters(
    mesh: &MeshView,
    leaf_of: Vec<u32>,
    settings: &ClusterSettings,
    report: &mut Report,
) -> Result<(Vec<u32>, u32), BuildError> {
    let np = mesh.polys.len() as u32;
    say(report, Step::Pass("hierarchy: clusters", u64::from(np)))?;
    let across = |p: u32| {
        mesh.neighbours(p)
            .iter()
            .copied()
            .chain(mesh.links_of(p).iter().map(|l| l.to))
            .filter(move |&q| q != NONE && q < np)
    };
    let mut parent: Vec<u32> = (0..np).collect();
    for p in 0..np {
        tick(report, p)?;
        let leaf = leaf_of[p as usize];
        for q in across(p) {
            if leaf_of[q as usize] == leaf {
                union_find::join(&mut parent, p, q);
            }
        }
    }
    say(report, Step::Done(u64::from(np)))?;
    // Parts numbered by first polygon: a root is its set's smallest polygon, and comes
    // before its members. The leaf table becomes the part table in place.
    let mut part_of = leaf_of;
    let mut size: Vec<u32> = Vec::new();
    for p in 0..np {
        let r = union_find::root(&mut parent, p);
        let part = if r == p {
            size.push(0);
            (size.len() - 1) as u32
        } else {
            part_of[r as usize]
        };
        part_of[p as usize] = part;
        size[part as usize] += 1;
    }
    drop(parent);
    // Portals (and links) between parts, each pair `(smaller, larger)` with its count.
    let mut shared: HashMap<(u32, u32), u32> = HashMap::default();
    for p in 0..np {
        let a = part_of[p as usize];
        for q in across(p) {
            let b = part_of[q as usize];
            if a != b {
                *shared.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
    }
    let mut pairs: Vec<((u32, u32), u32)> = shared.into_iter().collect();
    pairs.sort_unstable();
    let parts = size.len();
    let mut adjacent: Vec<Vec<(u32, u32)>> = vec![Vec::new(); parts];
    for &((a, b), n) in &pairs {
        adjacent[a as usize].push((b, n));
        adjacent[b as usize].push((a, n));
    }
    drop(pairs);
    let most = settings.max_polygons.max(1);
    let small = (most / 4).max(1);
    let mut up: Vec<u32> = (0..parts as u32).collect();
    let mut weights: Vec<(u32, u32)> = Vec::new();
    for part in 0..parts as u32 {
        let own = union_find::root(&mut up, part);
        if size[own as usize] >= small {
            continue;
        }
        weights.clear();
        for &(other, n) in &adjacent[part as usize] {
            let r = union_find::root(&mut up, other);
            if r != own && size[own as usize] + size[r as usize] <= most {
                weights.push((r, n));
            }
        }
        weights.sort_unstable();
        let best = weights
            .chunk_by(|a, b| a.0 == b.0)
            .map(|run| (run.iter().map(|x| x.1).sum::<u32>(), run[0].0))
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        if let Some((_, r)) = best {
            let total = size[own as usize] + size[r as usize];
            let kept = union_find::join(&mut up, own, r);
            size[kept as usize] = total;
        }
    }
    drop(adjacent);
    let mut group_of = part_of;
    for p in 0..np {
        group_of[p as usize] = union_find::root(&mut up, group_of[p as usize]);
    }
    drop(up);
    smooth_borders(mesh, &mut group_of, size, most, report)?;
    // Clusters: the groups' connected pieces (a polygon moved off may have cut its group),
    // numbered by first polygon.
    let mut parent: Vec<u32> = (0..np).collect();
    for p in 0..np {
        for q in across(p) {
            if group_of[q as usize] == group_of[p as usize] {
                union_find::join(&mut parent, p, q);
            }
        }
    }
    let mut clusters = 0u32;
    for p in 0..np {
        let r = union_find::root(&mut parent, p);
        group_of[p as usize] = if r == p {
            clusters += 1;
            clusters - 1
        } else {
            group_of[r as usize]
        };
    }
    Ok((group_of, clusters))
}

/// Moves polygons across cluster borders to shorten them. The quadtree's squares cut through
/// polygons wherever their centres fall: a street that runs along a square's side is split
/// lengthwise, its polygons alternating between the two clusters, and a plan over entrances
/// costs a way along it badly. In sweeps over the polygons in order, a polygon moves to the
/// neighbouring group it shares the most portal length with (ties: the smaller group), when
/// that is more than it shares with its own and the group holds fewer polygons than a leaf's
/// most. Every move shortens the borders, so the sweeps end (in three or four on citygen
/// worlds); at most [`SMOOTHING_SWEEPS`].
fn smooth_borders(
    mesh: &MeshView,
    group_of: &mut [u32],
    mut size: Vec<u32>,
    most: u32,
    report: &mut Report,
) -> Result<(), BuildError> {
    let np = mesh.polys.len() as u32;
    let mut shared: Vec<(u32, f64)> = Vec::new();
    let mut corners: Vec<[f32; 3]> = Vec::new();
    // The polygons a sweep weighs: at first all; then those it found on a border between
    // groups, or beside a polygon that moved. Any other polygon is inside its group when its
    // turn comes (a move ahead of it in the sweep marks it), as a sweep over all would find.
    let mut weigh = vec![true; np as usize];
    let mut next = vec![false; np as usize];
    for _ in 0..SMOOTHING_SWEEPS {
        say(report, Step::Pass("hierarchy: borders", u64::from(np)))?;
        let mut moved = 0u64;
        for p in 0..np {
            if !weigh[p as usize] {
                continue;
            }
            tick(report, p)?;
            let own = group_of[p as usize];
            // Inside its group (most polygons): nothing to weigh.
            let across = |&q: &u32| q != NONE && q < np && group_of[q as usize] != own;
            if !mesh.neighbours(p).iter().any(across) {
                continue;
            }
            next[p as usize] = true;
            shared.clear();
            corners.clear();
            corners.extend(mesh.corners(p));
            for (k, &q) in mesh.neighbours(p).iter().enumerate() {
                if q != NONE && q < np {
                    let len = plan_len(corners[k], corners[(k + 1) % corners.len()]);
                    shared.push((group_of[q as usize], len));
                }
            }
            if shared.iter().all(|s| s.0 == own) {
                continue;
            }
            shared.sort_unstable_by_key(|s| s.0);
            let mut own_len = 0.0;
            let mut best: Option<(f64, u32)> = None;
            for run in shared.chunk_by(|a, b| a.0 == b.0) {
                let len: f64 = run.iter().map(|s| s.1).sum();
                let g = run[0].0;
                if g == own {
                    own_len = len;
                } else if best.is_none_or(|b| len > b.0) {
                    best = Some((len, g));
                }
            }
            if let Some((len, g)) = best {
                if len > own_len + 1e-6 && size[g as usize] < most {
                    group_of[p as usize] = g;
                    size[g as usize] += 1;
                    size[own as usize] -= 1;
                    moved += 1;
                    for &q in mesh.neighbours(p).iter().filter(|&&q| q != NONE && q < np) {
                        // Weighed later in this sweep when its turn is still to come.
                        weigh[q as usize] |= q > p;
                        next[q as usize] = true;
                    }
                }
            }
        }
        say(report, Step::Done(u64::from(np)))?;
        if moved == 0 {
            break;
        }
        std::mem::swap(&mut weigh, &mut next);
        next.fill(false);
    }
    Ok(())
}

/// The most sweeps [`smooth_borders`] makes.
const SMOOTHING_SWEEPS: usize = 8;

/// The portals of cluster `c`'s polygons `members` into other clusters, as the cluster with
/// the smaller number sees them, into `out`, grouped by neighbour (ascending) and sorted by
/// their ends' plan positions: per neighbour, its range of `out`.
fn portal_crossings(
    mesh: &MeshView,
    cluster_of: &[u32],
    members: &[u32],
    c: u32,
    out: &mut Vec<Crossing>,
) -> Vec<(u32, std::ops::Range<usize>)> {
    let mut found: Vec<(u32, Crossing)> = Vec::new();
    for &p in members {
        let corners: Vec<[f32; 3]> = mesh.corners(p).collect();
        let n = corners.len();
        for (k, &nb) in mesh.neighbours(p).iter().enumerate() {
            if nb == NONE || nb as usize >= cluster_of.len() {
                continue;
            }
            let d = cluster_of[nb as usize];
            if d == c {
                continue;
            }
            let (a, b) = (corners[k], corners[(k + 1) % n]);
            // Counter-clockwise round the smaller cluster's polygon: as found from it, else
            // reversed (the same edge, seen from the polygon across).
            let (a, b) = if c < d { (a, b) } else { (b, a) };
            found.push((
                d,
                Crossing {
                    a,
                    b,
                    own: p,
                    across: nb,
                },
            ));
        }
    }
    found.sort_by(|x, y| {
        x.0.cmp(&y.0)
            .then(plan_cmp(x.1.a, y.1.a))
            .then(plan_cmp(x.1.b, y.1.b))
    });
    out.clear();
    out.extend(found.iter().map(|x| x.1));
    let mut runs = Vec::new();
    let mut at = 0;
    while at < found.len() {
        let d = found[at].0;
        let end = at + found[at..].partition_point(|x| x.0 == d);
        runs.push((d, at..end));
        at = end;
    }
    runs
}

/// Orders plan points by x, then y (exact, as stored).
fn plan_cmp(a: [f32; 3], b: [f32; 3]) -> std::cmp::Ordering {
    a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1]))
}

/// The pieces of the crossings between two clusters (sorted as [`portal_crossings`] sorts
/// them): the edges chained end to end (a chain starts at an edge no other edge ends at, in
/// their order; then what is left, closed loops, from their first edge), each chain cut into
/// pieces of at most `len` of equal length; per piece its middle, the polygon there on the
/// side that found it and the one across.
fn pieces(run: &[Crossing], len: f64) -> Vec<([f32; 3], u32, u32)> {
    let key = |p: [f32; 3]| [p[0].to_bits(), p[1].to_bits()];
    let mut starting: HashMap<[u32; 2], usize> = HashMap::default();
    for (i, x) in run.iter().enumerate() {
        starting.entry(key(x.a)).or_insert(i);
    }
    let next = |i: usize| starting.get(&key(run[i].b)).copied();
    let mut has_pred = vec![false; run.len()];
    for i in 0..run.len() {
        if let Some(j) = next(i) {
            if j != i {
                has_pred[j] = true;
            }
        }
    }
    let mut used = vec![false; run.len()];
    let mut out = Vec::new();
    let firsts: Vec<usize> = (0..run.len())
        .filter(|&i| !has_pred[i])
        .chain(0..run.len())
        .collect();
    for first in firsts {
        if used[first] {
            continue;
        }
        let mut chain = Vec::new();
        let mut at = Some(first);
        while let Some(i) = at {
            if used[i] {
                break;
            }
            used[i] = true;
            chain.push(i);
            at = next(i);
        }
        let lens: Vec<f64> = chain
            .iter()
            .map(|&i| plan_len(run[i].a, run[i].b))
            .collect();
        let total: f64 = lens.iter().sum();
        let count = (total / len.max(1e-9)).ceil().max(1.0) as usize;
        for k in 0..count {
            let want = total * (k as f64 + 0.5) / count as f64;
            let mut walked = 0.0;
            let mut pick = (chain[chain.len() - 1], 1.0);
            for (j, &i) in chain.iter().enumerate() {
                if walked + lens[j] >= want || j + 1 == chain.len() {
                    let t = if lens[j] > 0.0 {
                        ((want - walked) / lens[j]).clamp(0.0, 1.0)
                    } else {
                        0.5
                    };
                    pick = (i, t);
                    break;
                }
                walked += lens[j];
            }
            let x = &run[pick.0];
            let t = pick.1;
            let point =
                [0, 1, 2].map(|k| (f64::from(x.a[k]) * (1.0 - t) + f64::from(x.b[k]) * t) as f32);
            out.push((point, x.own, x.across));
        }
    }
    out
}

/// Links between clusters, grouped (see the module documentation), sorted by source cluster,
/// then target cluster, then stair groups by plan position, then off-mesh links in the
/// table's order.
fn link_groups(
    mesh: &MeshView,
    cluster_of: &[u32],
    piece_len: &dyn Fn(u32, u32) -> f64,
) -> Vec<LinkGroup> {
    let np = cluster_of.len() as u32;
    let mut cross: Vec<(u32, u32, [f32; 3], u32, u32)> = Vec::new();
    let mut jumps: Vec<(u32, LinkGroup)> = Vec::new();
    for l in mesh.links {
        if l.from >= np || l.to >= np {
            continue;
        }
        let (c, d) = (cluster_of[l.from as usize], cluster_of[l.to as usize]);
        if c == d {
            continue;
        }
        if l.off_mesh != NONE {
            let group = LinkGroup {
                from_cluster: c,
                to_cluster: d,
                exit_poly: l.from,
                exit: l.a,
                land_poly: l.to,
                landing: l.b,
                cost: (plan_len(l.a, l.b) + f64::from(l.cost)) as f32,
            };
            jumps.push((l.off_mesh, group));
            continue;
        }
        let mid = [0, 1, 2].map(|k| 0.5 * (l.a[k] + l.b[k]));
        cross.push((c, d, mid, l.from, l.to));
    }
    cross.sort_by(|x, y| {
        (x.0, x.1)
            .cmp(&(y.0, y.1))
            .then(plan_cmp(x.2, y.2))
            .then((x.3, x.4).cmp(&(y.3, y.4)))
    });
    let mut groups = Vec::new();
    let mut taken = vec![false; cross.len()];
    let mut at = 0;
    while at < cross.len() {
        let end = at + cross[at..].partition_point(|x| (x.0, x.1) == (cross[at].0, cross[at].1));
        for i in at..end {
            if taken[i] {
                continue;
            }
            let (c, d, mid, from, to) = cross[i];
            let reach = 0.5 * piece_len(c, d);
            for j in i..end {
                if !taken[j] && plan_len(cross[j].2, mid) <= reach {
                    taken[j] = true;
                }
            }
            let landing = closest_point(mesh, to, mid);
            groups.push(LinkGroup {
                from_cluster: c,
                to_cluster: d,
                exit_poly: from,
                exit: mid,
                land_poly: to,
                landing,
                cost: plan_len(mid, landing) as f32,
            });
        }
        at = end;
    }
    // A stable sort: each pair of clusters keeps its stair groups in order, then its off-mesh
    // links by table entry (and the direction's source polygon).
    jumps.sort_by_key(|(k, g)| (g.from_cluster, g.to_cluster, *k, g.exit_poly));
    groups.extend(jumps.into_iter().map(|(_, g)| g));
    groups.sort_by_key(|g| (g.from_cluster, g.to_cluster));
    groups
}

/// The point of polygon `p` nearest `q` in plan (`q` itself when over it), at the height of
/// the polygon's boundary there, or `q`'s height inside.
fn closest_point(mesh: &MeshView, p: u32, q: [f32; 3]) -> [f32; 3] {
    let pts: Vec<[f32; 3]> = mesh.corners(p).collect();
    let n = pts.len();
    let cross = |a: [f32; 3], b: [f32; 3]| {
        (f64::from(b[0]) - f64::from(a[0])) * (f64::from(q[1]) - f64::from(a[1]))
            - (f64::from(b[1]) - f64::from(a[1])) * (f64::from(q[0]) - f64::from(a[0]))
    };
    if (0..n).all(|k| cross(pts[k], pts[(k + 1) % n]) >= 0.0) {
        return q;
    }
    let mut best = (f64::INFINITY, q);
    for k in 0..n {
        let (a, b) = (pts[k], pts[(k + 1) % n]);
        let (ex, ey) = (f64::from(b[0] - a[0]), f64::from(b[1] - a[1]));
        let len2 = ex * ex + ey * ey;
        let t = if len2 > 0.0 {
            (((f64::from(q[0]) - f64::from(a[0])) * ex + (f64::from(q[1]) - f64::from(a[1])) * ey)
                / len2)
                .clamp(0.0, 1.0)
        } else {
            0.0
        };
        let c =
            [0, 1, 2].map(|k| (f64::from(a[k]) + t * (f64::from(b[k]) - f64::from(a[k]))) as f32);
        let d = plan_len(c, q);
        if d < best.0 {
            best = (d, c);
        }
    }
    best.1
}

/// Step 4 for cluster `c`: the table of shortest plan lengths between its `entrances` (row
/// by row), searched on a navmesh of the cluster's polygons alone, or taken from `kept` under
/// the cluster's key ([`cluster_key`]; `shared` is [`shared_key`] of `mesh`); the table, the
/// key, and whether it was kept.
fn lengths(
    mesh: &MeshView,
    shared: u64,
    cluster_of: &[u32],
    members: &[u32],
    c: u32,
    entrances: &[Entrance],
    kept: Option<&dyn KeptLengths>,
) -> Result<(Vec<f32>, u64, bool), BuildError> {
    let n = entrances.len();
    if n == 0 {
        return Ok((Vec::new(), 0, false));
    }
    let (sub, local) = cluster_mesh(mesh, cluster_of, members, c);
    let targets: Vec<(u32, [f32; 3])> = entrances
        .iter()
        .map(|e| (local[&e.poly], e.point))
        .collect();
    let key = cluster_key(&sub, shared, &targets);
    if let Some(table) = kept.and_then(|k| k.kept(key, n)) {
        return Ok((table, key, true));
    }
    // Searched: the cluster's navmesh encoded (a kept table needs its key alone).
    let bytes = tessera_navmesh::aligned(&tessera_navmesh::encode(&sub));
    let archived = tessera_navmesh::access(&bytes, "a cluster of the hierarchy")?;
    let query = tessera_query::Query::new(archived);
    // Without links the shortest way between two points is as long either way, so each pair
    // is searched once, and a search ends when its last target is reached. Searching from the
    // entrances farthest from the middle of them all first leaves later searches targets
    // nearer the middle, reached sooner (measured: 4.5 % fewer instructions than table order;
    // nearest-the-middle first, 12 % more; each time from an end of the widest span left, the
    // same as table order). A link's crossing lies on its own side, so a cluster with links
    // searches every row whole.
    let mut table = vec![0.0f32; n * n];
    if !sub.links.is_empty() {
        for (i, &(poly, at)) in targets.iter().enumerate() {
            let row = query.lengths_from(poly, at, &targets);
            for (j, &l) in row.iter().enumerate() {
                if j != i {
                    table[i * n + j] = l as f32;
                }
            }
        }
        return Ok((table, key, false));
    }
    let mid = [0, 1].map(|k| targets.iter().map(|t| f64::from(t.1[k])).sum::<f64>() / n as f64);
    let off = |i: usize| {
        let p = targets[i].1;
        (f64::from(p[0]) - mid[0]).hypot(f64::from(p[1]) - mid[1])
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| off(b).total_cmp(&off(a)).then(a.cmp(&b)));
    let ordered: Vec<(u32, [f32; 3])> = order.iter().map(|&i| targets[i]).collect();
    for k in 0..n - 1 {
        let (poly, at) = ordered[k];
        let row = query.lengths_from(poly, at, &ordered[k + 1..]);
        let i = order[k];
        for (m, &l) in row.iter().enumerate() {
            let j = order[k + 1 + m];
            table[i * n + j] = l as f32;
            table[j * n + i] = l as f32;
        }
    }
    Ok((table, key, false))
}

/// What every cluster's navmesh ([`cluster_mesh`]) takes from the whole mesh alike (its frame,
/// bounds and areas; no hierarchy, no statistics), hashed once for all their keys.
fn shared_key(mesh: &MeshView) -> u64 {
    let shared = NavMesh {
        frame: mesh.frame.clone(),
        bounds_min: mesh.bounds_min,
        bounds_max: mesh.bounds_max,
        verts: Vec::new(),
        polys: Vec::new(),
        poly_verts: Vec::new(),
        poly_neis: Vec::new(),
        detail_tris: Vec::new(),
        detail_verts: Vec::new(),
        off_mesh: Vec::new(),
        areas: mesh.areas.to_vec(),
        links: Vec::new(),
        grid: Grid {
            min: [0.0; 2],
            cell: 0.0,
            width: 0,
            height: 0,
            start: Vec::new(),
            items: Vec::new(),
        },
        components: Vec::new(),
        hierarchy: Hierarchy::default(),
        stats: Stats::default(),
    };
    xxhash_rust::xxh3::xxh3_64(&tessera_navmesh::encode(&shared))
}

/// The key of a cluster's table of lengths: a hash of the navmesh [`cluster_mesh`] made of it
/// (`sub`; what it takes from the whole mesh alike is in `shared`, [`shared_key`]) and of its
/// entrances (`targets`: local polygon, point). A table depends on these alone. Every field of
/// the navmesh is named here, so that one added to it cannot be left out of the key.
pub(crate) fn cluster_key(sub: &NavMesh, shared: u64, targets: &[(u32, [f32; 3])]) -> u64 {
    let NavMesh {
        // In `shared`.
        frame: _,
        bounds_min: _,
        bounds_max: _,
        areas: _,
        hierarchy: _,
        stats: _,
        verts,
        polys,
        poly_verts,
        poly_neis,
        detail_tris,
        detail_verts,
        links,
        off_mesh,
        grid,
        components,
    } = sub;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut put = |bytes: &[u8]| {
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    put(&shared.to_le_bytes());
    put(bytemuck::cast_slice(verts));
    put(bytemuck::cast_slice(polys));
    put(bytemuck::cast_slice(poly_verts));
    put(bytemuck::cast_slice(poly_neis));
    put(bytemuck::cast_slice(detail_tris));
    put(bytemuck::cast_slice(detail_verts));
    let words = |w: &[f32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    for &Link {
        from,
        to,
        a,
        b,
        off_mesh,
        cost,
    } in links
    {
        put(&[from, to, off_mesh].map(u32::to_le_bytes).concat());
        put(&words(&[a[0], a[1], a[2], b[0], b[1], b[2], cost]));
    }
    for OffMeshLink {
        name,
        from,
        to,
        cost,
        bidirectional,
    } in off_mesh
    {
        put(name.as_bytes());
        put(&words(&[
            from[0], from[1], from[2], to[0], to[1], to[2], *cost,
        ]));
        put(&[u8::from(*bidirectional)]);
    }
    let Grid {
        min,
        cell,
        width,
        height,
        start,
        items,
    } = grid;
    put(&words(&[min[0], min[1], *cell]));
    put(&[*width, *height].map(u32::to_le_bytes).concat());
    put(bytemuck::cast_slice(start));
    put(bytemuck::cast_slice(items));
    for &Component { polygons, area } in components {
        put(&polygons.to_le_bytes());
        put(&area.to_le_bytes());
    }
    for (poly, at) in targets {
        put(&poly.to_le_bytes());
        put(&words(at));
    }
    h.digest()
}

/// Cluster `c`'s polygons `members` and its halo as a navmesh of their own, and each
/// polygon's number in it. The halo is the polygons across a portal from the cluster, as a
/// refining search steps into them (one step out of its scope, no further): their portals
/// to the cluster kept, all others cut. Links inside the cluster are kept; one component, no
/// detail, one grid cell; the whole mesh's bounds, so that queries on it take the same
/// tolerance; the off-mesh links it keeps in a table of its own.
fn cluster_mesh(
    mesh: &MeshView,
    cluster_of: &[u32],
    members: &[u32],
    c: u32,
) -> (NavMesh, HashMap<u32, u32>) {
    // The halo: the polygons across a portal from the cluster, in polygon order.
    let mut halo: Vec<u32> = members
        .iter()
        .flat_map(|&p| mesh.neighbours(p).iter().copied())
        .filter(|&q| q != NONE && cluster_of.get(q as usize).is_some_and(|&d| d != c))
        .collect();
    halo.sort_unstable();
    halo.dedup();
    let local: HashMap<u32, u32> = members
        .iter()
        .chain(&halo)
        .enumerate()
        .map(|(i, &p)| (p, i as u32))
        .collect();
    let inside = |p: u32| cluster_of.get(p as usize) == Some(&c);
    let mut vert_of: HashMap<u32, u32> = HashMap::default();
    let (mut off_mesh, mut off_mesh_of) = (Vec::new(), HashMap::<u32, u32>::default());
    let (mut verts, mut polys, mut poly_verts, mut poly_neis, mut links) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut area = 0.0f64;
    for &p in members.iter().chain(&halo) {
        let poly = mesh.polys[p as usize];
        let first = poly_verts.len() as u32;
        for k in 0..poly.count {
            let v = mesh.poly_verts[(poly.first + k) as usize];
            let id = *vert_of.entry(v).or_insert_with(|| {
                verts.push(mesh.verts[v as usize]);
                verts.len() as u32 - 1
            });
            poly_verts.push(id);
            // Portals within the cluster, and between it and its halo.
            let nb = mesh.neis[(poly.first + k) as usize];
            poly_neis.push(match local.get(&nb) {
                Some(&q) if inside(p) || inside(nb) => q,
                _ => NONE,
            });
        }
        let link_first = links.len() as u32;
        for l in mesh.links_of(p).iter().filter(|_| inside(p)) {
            if let Some(&to) = local.get(&l.to).filter(|_| inside(l.to)) {
                // An off-mesh link names its entry in the cluster's own table.
                let off_mesh = if l.off_mesh == NONE {
                    NONE
                } else {
                    *off_mesh_of.entry(l.off_mesh).or_insert_with(|| {
                        off_mesh.push(mesh.off_mesh[l.off_mesh as usize].clone());
                        off_mesh.len() as u32 - 1
                    })
                };
                links.push(Link {
                    from: local[&p],
                    to,
                    off_mesh,
                    ..*l
                });
            }
        }
        let link_count = links.len() as u32 - link_first;
        polys.push(Poly {
            first,
            count: poly.count,
            tri_first: 0,
            tri_count: 0,
            link_first: if link_count == 0 { 0 } else { link_first },
            link_count,
            region: 0,
            area: poly.area,
            component: 0,
            area_id: poly.area_id,
        });
        area += f64::from(poly.area);
    }
    let np = polys.len() as u32;
    let extent = (0..2)
        .map(|k| mesh.bounds_max[k] - mesh.bounds_min[k])
        .fold(1.0f32, f32::max);
    let sub = NavMesh {
        frame: mesh.frame.clone(),
        bounds_min: mesh.bounds_min,
        bounds_max: mesh.bounds_max,
        verts,
        polys,
        poly_verts,
        poly_neis,
        detail_tris: Vec::new(),
        detail_verts: Vec::new(),
        off_mesh,
        areas: mesh.areas.to_vec(),
        links,
        grid: Grid {
            min: [mesh.bounds_min[0], mesh.bounds_min[1]],
            cell: extent + 1.0,
            width: 1,
            height: 1,
            start: vec![0, np],
            items: (0..np).collect(),
        },
        components: vec![Component {
            polygons: u64::from(np),
            area,
        }],
        hierarchy: Hierarchy::default(),
        stats: Stats::default(),
    };
    (sub, local)
}

/// The hierarchy of a whole mesh held in memory, its clusters grouped as `settings` says
/// (tests and tools; a bake builds it in [`crate::Assembler::finish`]). Deterministic: the
/// hierarchy a bake writes is `hierarchy_of` its mesh with the default settings.
pub fn hierarchy_of(mesh: &NavMesh, settings: &ClusterSettings) -> Result<Hierarchy, BuildError> {
    let dir = tempfile::tempdir()?;
    let view = MeshView {
        frame: &mesh.frame,
        bounds_min: mesh.bounds_min,
        bounds_max: mesh.bounds_max,
        verts: &mesh.verts,
        polys: &mesh.polys,
        poly_verts: &mesh.poly_verts,
        neis: &mesh.poly_neis,
        links: &mesh.links,
        off_mesh: &mesh.off_mesh,
        areas: &mesh.areas,
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let columns = build_hierarchy(
        &view,
        settings,
        (dir.path(), 1 << 20, threads),
        None,
        &mut |_| std::ops::ControlFlow::Continue(()),
    )?;
    fn read<T: bytemuck::Pod>(spill: &Spill<T>) -> Result<Vec<T>, BuildError> {
        Ok(spill.iter()?.collect::<std::io::Result<Vec<T>>>()?)
    }
    Ok(Hierarchy {
        poly_cluster: read(&columns.poly_cluster)?,
        clusters: read(&columns.clusters)?,
        entrances: read(&columns.entrances)?,
        costs: read(&columns.costs)?,
    })
}
