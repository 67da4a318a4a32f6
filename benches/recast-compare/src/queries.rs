//! `queries`: path-query latency of tessera's query crate next to Detour's, on the same scene
//! at the same settings, with one query set given to both.
//!
//! Per scene:
//!
//! 1. tessera bakes the scene in this process (`tessera_pipeline::bake`, as `tessera bake`
//!    does) and its `navmesh.tsn` is opened with `tessera-navmesh` and queried with
//!    `tessera-query`;
//! 2. Recast builds its tiled polygon mesh as `recast-full` does (`full_recast::TileJobs`), each
//!    tile becomes Detour tile data (`dtCreateNavMeshData`, no detail mesh) and goes into one
//!    `dtNavMesh` (`addTile`);
//! 3. N point pairs are drawn on tessera's mesh (`Query::random_point`, area-weighted, seeded),
//!    converted to scene coordinates, and from there to each side's own frame;
//! 4. each pair is one query on each side, single-threaded: nearest polygon of both ends, A*,
//!    straight path. Not timed: the conversions and the path length. tessera answers each
//!    pair twice: with its default, hierarchical search (a plan over the navmesh's clusters,
//!    then the exact search within the clusters planned) and with the flat one (`--flat`).
//!
//! A first pass over the whole set on each side warms caches and records the answers; then
//! `repeat` timed passes rotate which side goes first, and each query keeps its fastest time.

use crate::detour::{self, Agent, NavMesh, NavQuery};
use crate::full::{Scene, Setting};
use crate::full_recast::TileJobs;
use crate::objmesh;
use std::error::Error;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;
use tessera_geom::UpAxis;
use tessera_navmesh::NavMeshFile;
use tessera_query::{Planner, Query, Rng};

/// Polygons a Detour corridor may hold and corners a straight path may have: far more than any
/// path on these scenes crosses, so neither limit cuts a path.
const MAX_PATH: usize = 1 << 16;
/// The memory budget of the in-process tessera bake.
const BAKE_BUDGET: u64 = 2 << 30;

/// How `queries` runs.
#[derive(Clone, Debug)]
pub struct QueryRun {
    /// Point pairs in the query set.
    pub pairs: usize,
    pub seed: u64,
    /// Timed passes over the set (each query keeps its fastest).
    pub repeat: usize,
    /// Detour's node pool (`dtNavMeshQuery::init`).
    pub max_nodes: i32,
    /// Threads for the two builds (not for the queries, which run on one thread).
    pub build_threads: usize,
}

/// One side's answers and times over the query set.
#[derive(Clone, Debug, Default)]
pub struct SideResult {
    /// Pairs whose two ends both found a polygon within the search box.
    pub snapped: usize,
    /// Pairs with a complete path.
    pub found: usize,
    /// Per pair: the path length when found.
    pub lengths: Vec<Option<f64>>,
    /// Per pair: the plan (horizontal) length of the path when found.
    pub plan_lengths: Vec<Option<f64>>,
    /// Per pair: the steps of the fastest of the timed runs [microseconds].
    pub steps: Vec<Steps>,
    /// Corners of all the straight paths found (start and end included).
    pub corners: usize,
    /// Plan (horizontal) lengths of the paths found, summed.
    pub plan_length: f64,
    /// Pairs whose search ran out of nodes (Detour only).
    pub out_of_nodes: usize,
}

impl SideResult {
    pub fn mean_us(&self) -> f64 {
        self.mean_step(|s| s.total())
    }

    /// The mean over the queries of one figure of their steps.
    pub fn mean_step(&self, f: impl Fn(&Steps) -> f64) -> f64 {
        self.steps.iter().map(f).sum::<f64>() / self.steps.len().max(1) as f64
    }

    /// Mean plan length of the paths found.
    pub fn mean_plan_length(&self) -> f64 {
        self.plan_length / self.found.max(1) as f64
    }

    /// Mean corners per path found.
    pub fn mean_corners(&self) -> f64 {
        self.corners as f64 / self.found.max(1) as f64
    }

    /// The `p`-th percentile of the per-query times (nearest rank).
    pub fn percentile_us(&self, p: f64) -> f64 {
        self.percentile_us_of(p, |_| true)
    }

    /// [`SideResult::percentile_us`] over the pairs `keep` keeps (by index).
    pub fn percentile_us_of(&self, p: f64, keep: impl Fn(usize) -> bool) -> f64 {
        let mut v: Vec<f64> = (0..self.steps.len())
            .filter(|&i| keep(i))
            .map(|i| self.steps[i].total())
            .collect();
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            return 0.0;
        }
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        v[rank.clamp(1, v.len()) - 1]
    }

    /// Mean length of the paths found.
    pub fn mean_length(&self) -> f64 {
        let found: Vec<f64> = self.lengths.iter().flatten().copied().collect();
        found.iter().sum::<f64>() / found.len().max(1) as f64
    }
}

/// Everything `queries` measured on one scene.
#[derive(Clone, Debug)]
pub struct SceneQueries {
    pub scene: String,
    pub tessera_polys: u64,
    pub detour_polys: u64,
    pub detour_tiles: usize,
    /// Recast's tile edge [cells]: the setting's, or larger where Detour's 32-bit references
    /// needed it (see `build_detour`).
    pub detour_tile_size: i32,
    /// tessera's default, hierarchical search.
    pub tessera: SideResult,
    /// tessera's flat search (`Planner::Flat`).
    pub flat: SideResult,
    pub detour: SideResult,
    /// Detour's any-angle search (`DT_FINDPATH_ANY_ANGLE`) on the same pairs: answers only,
    /// untimed, as a second reading of Detour's lengths.
    pub detour_any: SideResult,
    /// The navmesh's hierarchy: clusters, entrances, bytes of its tables.
    pub hierarchy: (usize, usize, usize),
    /// Per pair: whether the hierarchical search planned over clusters (ends in two
    /// clusters, farther apart than a flat search costs), or searched flat.
    pub planned: Vec<bool>,
}

/// How far two path lengths may differ and still agree: 5 % of Detour's, plus a centimetre so
/// that two paths of (almost) no length agree.
pub fn lengths_agree(tessera: f64, detour: f64) -> bool {
    (tessera - detour).abs() <= 0.05 * detour + 0.01
}

impl SceneQueries {
    pub fn pairs(&self) -> usize {
        self.tessera.lengths.len()
    }

    /// Per pair both of tessera's searches found: whether the hierarchy planned it, the plan
    /// length of the hierarchical path and of the flat one.
    fn both_searches(&self) -> impl Iterator<Item = (bool, f64, f64)> + '_ {
        self.tessera
            .plan_lengths
            .iter()
            .zip(&self.flat.plan_lengths)
            .zip(&self.planned)
            .filter_map(|((h, f), &planned)| Some((planned, (*h)?, (*f)?)))
    }

    /// Plan length of the hierarchical path over the flat one, for the pairs both found that
    /// the hierarchy planned, sorted.
    pub fn planned_ratios(&self) -> Vec<f64> {
        let mut r: Vec<f64> = self
            .both_searches()
            .filter(|x| x.0)
            .map(|(_, h, f)| if f > 0.0 { h / f } else { 1.0 })
            .collect();
        r.sort_by(f64::total_cmp);
        r
    }

    /// Pairs both of tessera's searches found that the hierarchy did not plan, and how many of
    /// those have the same plan length.
    pub fn unplanned_equal(&self) -> (usize, usize) {
        self.both_searches()
            .filter(|x| !x.0)
            .fold((0, 0), |(n, same), (_, h, f)| {
                (n + 1, same + usize::from(h == f))
            })
    }

    /// Pairs where the hierarchical and the flat search agree on whether there is a path.
    pub fn planners_agree(&self) -> usize {
        self.tessera
            .lengths
            .iter()
            .zip(&self.flat.lengths)
            .filter(|(h, f)| h.is_some() == f.is_some())
            .count()
    }

    /// Pairs where both sides found a path, or neither did.
    pub fn agree_found(&self) -> usize {
        self.pairs_found()
            .filter(|(t, d)| t.is_some() == d.is_some())
            .count()
    }

    /// Pairs with a path on both sides.
    pub fn both_found(&self) -> usize {
        self.pairs_found()
            .filter(|(t, d)| t.is_some() && d.is_some())
            .count()
    }

    /// Pairs with a path on both sides whose lengths agree ([`lengths_agree`]).
    pub fn lengths_within(&self) -> usize {
        self.pairs_found()
            .filter(|(t, d)| matches!((t, d), (Some(t), Some(d)) if lengths_agree(*t, *d)))
            .count()
    }

    /// Of the pairs both tessera and Detour's `findPath` joined, those whose tessera length
    /// agrees with Detour's any-angle length (`any`), and those that agree with either of
    /// Detour's two (`either`).
    pub fn lengths_within_any_angle(&self) -> (usize, usize) {
        let (mut any, mut either) = (0, 0);
        for ((t, d), a) in self.pairs_found().zip(&self.detour_any.lengths) {
            let (Some(t), Some(d)) = (t, d) else {
                continue;
            };
            let by_any = a.is_some_and(|a| lengths_agree(t, a));
            any += by_any as usize;
            either += (by_any || lengths_agree(t, d)) as usize;
        }
        (any, either)
    }

    /// Detour against itself: of the pairs both of Detour's searches joined, those whose
    /// any-angle length agrees with `findPath`'s ([`lengths_agree`]), and how many there are.
    /// Where this is under the bar of issue 15, a shorter search than `findPath` (as Detour's
    /// own any-angle one) misses that bar by being shorter.
    pub fn detour_self_agreement(&self) -> (usize, usize) {
        let (mut agree, mut both) = (0, 0);
        for (d, a) in self.detour.lengths.iter().zip(&self.detour_any.lengths) {
            if let (Some(d), Some(a)) = (d, a) {
                both += 1;
                agree += lengths_agree(*a, *d) as usize;
            }
        }
        (agree, both)
    }

    /// Pairs with a path on both sides whose plan lengths agree ([`lengths_agree`]): the same
    /// test on the horizontal projections, which leaves out the climbing that corners placed
    /// differently over uneven ground add to the 3D lengths.
    pub fn plan_lengths_within(&self) -> usize {
        self.tessera
            .plan_lengths
            .iter()
            .zip(&self.detour.plan_lengths)
            .filter(|(t, d)| matches!((t, d), (Some(t), Some(d)) if lengths_agree(*t, *d)))
            .count()
    }

    /// Pairs with a path on both sides where tessera's is longer than Detour's by more than
    /// [`lengths_agree`] allows (the other disagreements are tessera's paths the shorter).
    pub fn tessera_longer(&self) -> usize {
        self.pairs_found()
            .filter(
                |(t, d)| matches!((t, d), (Some(t), Some(d)) if *t > *d && !lengths_agree(*t, *d)),
            )
            .count()
    }

    /// Mean of tessera's length over Detour's, over the pairs both found.
    pub fn mean_length_ratio(&self) -> f64 {
        let r: Vec<f64> = self
            .pairs_found()
            .filter_map(|(t, d)| match (t, d) {
                (Some(t), Some(d)) if d > 0.0 => Some(t / d),
                _ => None,
            })
            .collect();
        r.iter().sum::<f64>() / r.len().max(1) as f64
    }

    fn pairs_found(&self) -> impl Iterator<Item = (Option<f64>, Option<f64>)> + '_ {
        self.tessera
            .lengths
            .iter()
            .copied()
            .zip(self.detour.lengths.iter().copied())
    }
}

/// Sum of the 3D lengths of a polyline's segments.
fn polyline_length(points: &[[f32; 3]]) -> f64 {
    axes_length(points, &[0, 1, 2])
}

/// Sum of a polyline's segment lengths over the given axes only.
fn axes_length(points: &[[f32; 3]], axes: &[usize]) -> f64 {
    points
        .windows(2)
        .map(|w| {
            axes.iter()
                .map(|&k| (w[1][k] as f64 - w[0][k] as f64).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .sum()
}

/// The time one query spent in each step [microseconds]: snapping both ends, A*, the
/// straight path (0 for a step it did not reach).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Steps(pub [f64; 3]);

impl Steps {
    pub fn total(&self) -> f64 {
        self.0.iter().sum()
    }
}

/// Marks the end of each step of a query.
struct Stopwatch {
    last: Instant,
    steps: Steps,
    next: usize,
}

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch {
            last: Instant::now(),
            steps: Steps::default(),
            next: 0,
        }
    }

    /// Ends the current step.
    fn lap(&mut self) {
        let now = Instant::now();
        self.steps.0[self.next] = (now - self.last).as_secs_f64() * 1e6;
        self.last = now;
        self.next += 1;
    }
}

/// What one query gave on either side.
struct Answer<P> {
    /// Both ends found a polygon in the search box.
    snapped: bool,
    /// The straight path, when a complete path was found.
    path: Option<P>,
    steps: Steps,
}

/// One query on tessera's side: both ends snapped in `ext`, the search `planner` names,
/// string pulling.
fn tessera_path(
    q: &Query,
    (a, b): ([f32; 3], [f32; 3]),
    ext: [f32; 3],
    planner: Planner,
) -> Answer<Vec<[f32; 3]>> {
    let mut clock = Stopwatch::start();
    let ends = (q.nearest(a, ext), q.nearest(b, ext));
    clock.lap();
    let (Some((sp, s)), Some((ep, e))) = ends else {
        return Answer {
            snapped: false,
            path: None,
            steps: clock.steps,
        };
    };
    let corridor = q.find_path_with(sp, s, ep, e, planner);
    clock.lap();
    let path = corridor
        .found
        .then(|| q.straight_path(s, e, &corridor.polys));
    if corridor.found {
        clock.lap();
    }
    Answer {
        snapped: true,
        path: path.filter(|p| !p.is_empty()),
        steps: clock.steps,
    }
}

/// Buffers Detour writes into, allocated once.
struct DetourBuffers {
    path: Vec<u32>,
    corners: Vec<[f32; 3]>,
}

/// One query on Detour's side, the same steps as [`tessera_path`]: `findNearestPoly` for both
/// ends, `findPath`, `findStraightPath` when the corridor reaches the end polygon. The path is
/// the number of corners written to `buf.corners`; the flag says whether A* ran out of nodes.
fn detour_path(
    q: &mut NavQuery,
    a: [f32; 3],
    b: [f32; 3],
    half: [f32; 3],
    buf: &mut DetourBuffers,
    any_angle: bool,
) -> (Answer<usize>, bool) {
    let mut clock = Stopwatch::start();
    let ends = (q.nearest(a, half), q.nearest(b, half));
    clock.lap();
    let (Some((sp, s)), Some((ep, e))) = ends else {
        let answer = Answer {
            snapped: false,
            path: None,
            steps: clock.steps,
        };
        return (answer, false);
    };
    let st = q.find_path((sp, s), (ep, e), &mut buf.path, any_angle);
    clock.lap();
    let corners = if st.complete {
        let n = q.straight_path(s, e, &buf.path[..st.len], &mut buf.corners);
        clock.lap();
        n.filter(|&n| n > 0)
    } else {
        None
    };
    let answer = Answer {
        snapped: true,
        path: corners,
        steps: clock.steps,
    };
    (answer, st.out_of_nodes)
}

/// Detour's navmesh for a scene: Recast's tiled polygon mesh, built as `recast-full` builds it,
/// each tile turned into Detour data on the thread that built it, then added tile by tile.
/// Returns the navmesh, its polygons, its tiles and the tile edge used [cells]: the setting's,
/// or, for a world too large for Detour's 32-bit polygon references at that edge (at most
/// 2^14 tiles, and 2^22 tiles and polygons per tile together), the setting's doubled until it
/// fits.
fn build_detour(
    scene: &Scene,
    setting: &Setting,
    threads: usize,
) -> Result<(NavMesh, u64, usize, i32), Box<dyn Error>> {
    let mut s = setting.recast.clone();
    let a = &setting.config.agent;
    let agent = Agent {
        height: a.height as f32,
        radius: a.radius as f32,
        climb: a.max_climb as f32,
    };
    let mesh = objmesh::load(&scene.path, scene.up)?;
    loop {
        let jobs = TileJobs::new(&mesh, &s);
        let g = &jobs.grid;
        if (g.tw * g.th) as usize > 1 << 14 {
            s.tile_size *= 2;
            continue;
        }
        // `setting.recast` has detail off (see `Setting::new`): no detail mesh is built.
        let tiles = jobs.build(&mesh, &s, threads, |tx, tz, pmesh, dmesh| {
            detour::tile_data(pmesh, dmesh, tx, tz, &agent)
        })?;
        let data: Vec<_> = tiles.into_iter().filter_map(|t| t.kept).collect();
        let polys: u64 = data.iter().map(|d| d.polys as u64).sum();
        let most = data.iter().map(|d| d.polys).max().unwrap_or(1);
        let tile_m = s.tile_size as f32 * s.cs;
        let mut nav = match NavMesh::new(g.bmin, tile_m, (g.tw * g.th) as usize, most) {
            Ok(nav) => nav,
            Err(_) if s.tile_size < 1024 => {
                s.tile_size *= 2;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let count = data.len();
        for d in data {
            nav.add_tile(d)?;
        }
        return Ok((nav, polys, count, s.tile_size));
    }
}

/// A scene point in Recast's and Detour's frame (the scene's own up axis as Y).
fn scene_to_recast(p: [f64; 3], up: UpAxis) -> [f32; 3] {
    objmesh::to_recast(p.map(|c| c as f32), up)
}

/// Measures one scene: both builds, the query set, the warm-up pass and the timed passes.
pub fn measure(
    scene: &Scene,
    setting: &Setting,
    run: &QueryRun,
    work: &Path,
) -> Result<SceneQueries, Box<dyn Error>> {
    // tessera: a fresh bake in this process.
    let out = work.join("bake");
    let _ = std::fs::remove_dir_all(&out);
    let summary = tessera_pipeline::bake(tessera_pipeline::BakeRequest {
        scene: tessera_pipeline::SceneInput::File {
            path: scene.path.clone(),
            up: Some(scene.up),
        },
        config: setting.config.clone(),
        out_dir: out.clone(),
        threads: run.build_threads.max(1),
        memory_budget: BAKE_BUDGET,
        progress: tessera_pipeline::Progress::quiet(),
        interrupt: None,
        sampler: None,
    })
    .map_err(|e| format!("tessera bake of {}: {e}", scene.path.display()))?;
    let file = NavMeshFile::open(tessera_pipeline::BakeLayout::new(&out).navmesh())?;
    let tq = Query::new(file.mesh());

    let (nav, detour_polys, detour_tiles, detour_tile_size) =
        build_detour(scene, setting, run.build_threads)?;
    let mut dq = NavQuery::new(&nav, run.max_nodes)?;

    // The query set: pairs of random points on tessera's mesh, in scene coordinates, then in
    // each side's frame.
    let mut rng = Rng::new(run.seed);
    let mut t_points = Vec::with_capacity(run.pairs);
    let mut d_points = Vec::with_capacity(run.pairs);
    for _ in 0..run.pairs {
        let (Some((_, a)), Some((_, b))) = (tq.random_point(&mut rng), tq.random_point(&mut rng))
        else {
            return Err(format!("{}: tessera's navmesh has no area", scene.name).into());
        };
        let (a, b) = (tq.to_scene(a), tq.to_scene(b));
        t_points.push((tq.frame().to_internal(a), tq.frame().to_internal(b)));
        d_points.push((scene_to_recast(a, scene.up), scene_to_recast(b, scene.up)));
    }
    // The same search box on both sides: tessera's own snap box (2 radius + 1 cell across,
    // the agent height up and down), with Detour's up axis second.
    let ext = tq.snap_extent();
    let half = [ext[0], ext[2], ext[1]];
    let mut buf = DetourBuffers {
        path: vec![0; MAX_PATH],
        corners: vec![[0.0; 3]; MAX_PATH],
    };

    // Warm-up: every query once on each side, untimed; the answers are kept.
    let mut tessera = SideResult::default();
    let mut flat = SideResult::default();
    for (side, planner) in [
        (&mut tessera, Planner::Hierarchical),
        (&mut flat, Planner::Flat),
    ] {
        for &ends in &t_points {
            let r = tessera_path(&tq, ends, ext, planner);
            side.snapped += r.snapped as usize;
            side.found += r.path.is_some() as usize;
            side.corners += r.path.as_ref().map_or(0, Vec::len);
            // tessera's internal frame is Z-up: the plan is x, y.
            let plan = r.path.as_deref().map(|p| axes_length(p, &[0, 1]));
            side.plan_length += plan.unwrap_or(0.0);
            side.plan_lengths.push(plan);
            side.lengths.push(r.path.as_deref().map(polyline_length));
        }
    }
    let planned = t_points
        .iter()
        .map(|&(a, b)| match (tq.nearest(a, ext), tq.nearest(b, ext)) {
            (Some((sp, s)), Some((ep, e))) => tq.plans(sp, s, ep, e),
            _ => false,
        })
        .collect();
    let mut detour = SideResult::default();
    let mut detour_any = SideResult::default();
    for (side, any_angle) in [(&mut detour, false), (&mut detour_any, true)] {
        for &(a, b) in &d_points {
            let (r, out_of_nodes) = detour_path(&mut dq, a, b, half, &mut buf, any_angle);
            side.snapped += r.snapped as usize;
            side.found += r.path.is_some() as usize;
            side.corners += r.path.unwrap_or(0);
            // Detour's frame is Y-up: the plan is x, z.
            let plan = r.path.map(|n| axes_length(&buf.corners[..n], &[0, 2]));
            side.plan_length += plan.unwrap_or(0.0);
            side.plan_lengths.push(plan);
            side.out_of_nodes += out_of_nodes as usize;
            side.lengths
                .push(r.path.map(|n| polyline_length(&buf.corners[..n])));
        }
    }

    // Timed passes; the three sides take turns going first. Each query keeps its fastest run.
    let slowest = Steps([f64::INFINITY; 3]);
    tessera.steps = vec![slowest; run.pairs];
    flat.steps = vec![slowest; run.pairs];
    detour.steps = vec![slowest; run.pairs];
    let keep = |best: &mut Steps, new: Steps| {
        if new.total() < best.total() {
            *best = new;
        }
    };
    for rep in 0..run.repeat.max(1) {
        for turn in 0..3 {
            match (turn + rep) % 3 {
                0 | 1 => {
                    let (side, planner) = if (turn + rep) % 3 == 0 {
                        (&mut tessera, Planner::Hierarchical)
                    } else {
                        (&mut flat, Planner::Flat)
                    };
                    for (i, &ends) in t_points.iter().enumerate() {
                        let r = black_box(tessera_path(&tq, ends, ext, planner));
                        keep(&mut side.steps[i], r.steps);
                    }
                }
                _ => {
                    for (i, &(a, b)) in d_points.iter().enumerate() {
                        let (r, _) = black_box(detour_path(&mut dq, a, b, half, &mut buf, false));
                        keep(&mut detour.steps[i], r.steps);
                    }
                }
            }
        }
    }
    let h = &file.mesh().hierarchy;
    let hierarchy = (
        h.clusters.len(),
        h.entrances.len(),
        4 * h.poly_cluster.len()
            + std::mem::size_of::<tessera_navmesh::Cluster>() * h.clusters.len()
            + std::mem::size_of::<tessera_navmesh::Entrance>() * h.entrances.len()
            + 4 * h.costs.len(),
    );
    drop(dq);
    let _ = std::fs::remove_dir_all(&out);
    Ok(SceneQueries {
        scene: scene.name.clone(),
        tessera_polys: summary.polygons,
        detour_polys,
        detour_tiles,
        detour_tile_size,
        tessera,
        flat,
        detour,
        detour_any,
        hierarchy,
        planned,
    })
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "-".to_string()
    }
}

/// `mean / p50 / p99` of a side's per-query times [microseconds].
fn times(side: &SideResult) -> String {
    format!(
        "{:.1} / {:.1} / {:.1}",
        side.mean_us(),
        side.percentile_us(50.0),
        side.percentile_us(99.0)
    )
}

/// The latency table: one row per scene, tessera's two searches and Detour.
pub fn latency_table(rows: &[SceneQueries]) -> String {
    let mut s = String::from(
        "| scene | pairs | tessera mean / p50 / p99 us | tessera flat mean / p50 / p99 us | \
         Detour mean / p50 / p99 us | tessera / Detour mean | tessera / Detour p99 | \
         tessera / Detour p99, pairs both found | flat / Detour mean | flat / Detour p99 | \
         tessera / flat mean |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let (t, f, d) = (&r.tessera, &r.flat, &r.detour);
        let p99 = |x: &SideResult| x.percentile_us(99.0);
        // Detour's search that runs out of nodes stops early (not found): its time is the
        // node pool's, not the way's. Over the pairs both sides joined:
        let both = |i: usize| {
            t.lengths.get(i).is_some_and(Option::is_some)
                && d.lengths.get(i).is_some_and(Option::is_some)
        };
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.scene,
            r.pairs(),
            times(t),
            times(f),
            times(d),
            ratio(t.mean_us(), d.mean_us()),
            ratio(p99(t), p99(d)),
            ratio(
                t.percentile_us_of(99.0, both),
                d.percentile_us_of(99.0, both)
            ),
            ratio(f.mean_us(), d.mean_us()),
            ratio(p99(f), p99(d)),
            ratio(t.mean_us(), f.mean_us()),
        );
    }
    s
}

/// Where the time goes: the mean of each step over the queries, on each side.
pub fn steps_table(rows: &[SceneQueries]) -> String {
    let mut s = String::from(
        "| scene | tessera nearest x2 / A* / straight path us | tessera flat A* us | Detour \
         findNearestPoly x2 / findPath / findStraightPath us | tessera / Detour nearest | \
         tessera / Detour A* | flat / Detour A* | tessera / Detour straight path |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let (t, f, d) = (&r.tessera, &r.flat, &r.detour);
        let step = |side: &SideResult, k: usize| side.mean_step(|s| s.0[k]);
        s += &format!(
            "| {} | {:.1} / {:.1} / {:.1} | {:.1} | {:.1} / {:.1} / {:.1} | {} | {} | {} | {} |\n",
            r.scene,
            step(t, 0),
            step(t, 1),
            step(t, 2),
            step(f, 1),
            step(d, 0),
            step(d, 1),
            step(d, 2),
            ratio(step(t, 0), step(d, 0)),
            ratio(step(t, 1), step(d, 1)),
            ratio(step(f, 1), step(d, 1)),
            ratio(step(t, 2), step(d, 2)),
        );
    }
    s
}

/// The hierarchy and what it does to lengths: tessera's hierarchical paths against its flat
/// ones on the same pairs (plan lengths, which both searches minimize).
pub fn hierarchy_table(rows: &[SceneQueries]) -> String {
    let mut s = String::from(
        "| scene | clusters / entrances / KiB | found agrees | planned (both found) | \
         equal | over 0.1 % | over 1 % | over 5 % | ratio p50 / p99 / max | not planned: equal |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let ratios = r.planned_ratios();
        let n = ratios.len();
        let over = |x: f64| ratios.iter().filter(|&&q| q > 1.0 + x).count();
        let pct = |k: usize| format!("{k} ({:.1} %)", 100.0 * k as f64 / n.max(1) as f64);
        let at = |p: f64| {
            if n == 0 {
                "-".to_string()
            } else {
                format!(
                    "{:.4}",
                    ratios[(((p / 100.0) * n as f64).ceil() as usize).clamp(1, n) - 1]
                )
            }
        };
        let (unplanned, same) = r.unplanned_equal();
        s += &format!(
            "| {} | {} / {} / {:.0} | {} / {} | {} | {} | {} | {} | {} | {} / {} / {} | {same} / {unplanned} |\n",
            r.scene,
            r.hierarchy.0,
            r.hierarchy.1,
            r.hierarchy.2 as f64 / 1024.0,
            r.planners_agree(),
            r.pairs(),
            n,
            pct(ratios.iter().filter(|&&q| (q - 1.0).abs() <= 1e-6).count()),
            pct(over(0.001)),
            pct(over(0.01)),
            pct(over(0.05)),
            at(50.0),
            at(99.0),
            at(100.0),
        );
    }
    s
}

/// The answers table: how often each side found a path and how the lengths compare.
pub fn answers_table(rows: &[SceneQueries]) -> String {
    let mut s = String::from(
        "| scene | polygons tessera / Detour (tiles of Recast's edge) | both ends snapped tessera / Detour | \
         found tessera / Detour | found agrees | both found | lengths within 5 % | \
         plan lengths within 5 % | tessera longer by more than 5 % | \
         within 5 % of Detour any-angle | within 5 % of either Detour | \
         Detour any-angle within 5 % of findPath | mean length m tessera / Detour | mean plan length m tessera / Detour | mean length \
         ratio (both found) | mean corners tessera / Detour | Detour out of nodes |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let (t, d) = (&r.tessera, &r.detour);
        let (any, either) = r.lengths_within_any_angle();
        let (self_agree, self_both) = r.detour_self_agreement();
        let both = r.both_found().max(1) as f64;
        s += &format!(
            "| {} | {} / {} ({} of {} cells) | {} / {} | {} / {} | {} | {} | {} ({:.1} %) | {} ({:.1} %) | {} ({:.1} %) | {} ({:.1} %) | {} ({:.1} %) | {} of {} ({:.1} %) | {:.2} / {:.2} | {:.2} / {:.2} | {:.3} | {:.1} / {:.1} | {} |\n",
            r.scene,
            r.tessera_polys,
            r.detour_polys,
            r.detour_tiles,
            r.detour_tile_size,
            t.snapped,
            d.snapped,
            t.found,
            d.found,
            r.agree_found(),
            r.both_found(),
            r.lengths_within(),
            100.0 * r.lengths_within() as f64 / r.both_found().max(1) as f64,
            r.plan_lengths_within(),
            100.0 * r.plan_lengths_within() as f64 / r.both_found().max(1) as f64,
            r.tessera_longer(),
            100.0 * r.tessera_longer() as f64 / both,
            any,
            100.0 * any as f64 / both,
            either,
            100.0 * either as f64 / both,
            self_agree,
            self_both,
            100.0 * self_agree as f64 / self_both.max(1) as f64,
            t.mean_length(),
            d.mean_length(),
            t.mean_plan_length(),
            d.mean_plan_length(),
            r.mean_length_ratio(),
            t.mean_corners(),
            d.mean_corners(),
            d.out_of_nodes,
        );
    }
    s
}

/// Inputs of the results file beyond the measurements.
pub struct QueryFileInfo<'a> {
    pub command: &'a str,
    pub stamp: &'a str,
    pub setting: &'a Setting,
    pub run: &'a QueryRun,
    pub scenes_note: &'a str,
}

/// The tool's part of the results file, ending with [`crate::full::KEEP_MARKER`] (the
/// sections written by hand below it are kept: [`crate::full::write_keeping`]).
pub fn results_file(info: &QueryFileInfo, rows: &[SceneQueries]) -> String {
    let run = info.run;
    let mut s = String::from("# Path queries: tessera vs Detour, side by side\n\n");
    s += &format!(
        "Written by `{}` (see `benches/recast-compare/README.md`, section *Path queries*). \
         Measured {}. Release builds on both sides, one thread for the queries.\n\n",
        info.command, info.stamp
    );
    s += &format!(
        "Setting `{}`: {}.\n\n",
        info.setting.name,
        info.setting.describe()
    );
    for n in &info.setting.notes {
        s += &format!("{n}\n\n");
    }
    s += &format!(
        "One query set per scene: {} point pairs drawn on tessera's navmesh with seed {} \
         (`tessera-query`'s area-weighted random points), given to both sides in the scene's \
         coordinates. One query = nearest polygon of the start and of the end, A* and the \
         straight path. Latency is per query: the fastest of {} timed passes over the set \
         after one untimed warm-up pass, sides alternating; mean, median and 99th percentile \
         over the pairs, in microseconds. Detour's node pool holds {} nodes.\n\n",
        run.pairs, run.seed, run.repeat, run.max_nodes
    );
    s += "## Latency\n\n";
    s += &latency_table(rows);
    s += "\nWhere the time goes (mean per query of each step; the straight path only for the \
          pairs A* joined):\n\n";
    s += &steps_table(rows);
    s += "\n## Hierarchical against flat\n\n";
    s += HIERARCHY_NOTE;
    s += &hierarchy_table(rows);
    s += "\n## Answers\n\n";
    s += &answers_table(rows);
    s += "\n";
    s += &format!("**Scenes.** {}\n\n", info.scenes_note);
    s += METHOD;
    s += "\n";
    s += crate::full::KEEP_MARKER;
    s.push('\n');
    s
}

/// What the hierarchy table shows.
const HIERARCHY_NOTE: &str = "tessera's default search is hierarchical: a plan over the \
navmesh's clusters, then its exact any-angle search confined to the clusters planned and \
those beside the two ends, and one polygon beyond them; pairs in one cluster, or closer than a flat search costs, are searched flat (*not planned*). The \
flat search (`tessera path --flat`) searches every polygon and finds the shortest path in \
plan. Per scene: the hierarchy (clusters, entrances, the size of its tables), the pairs where \
both searches agree on whether there is a path, and for the pairs both found that the \
hierarchy planned, the plan length of the hierarchical path over the flat one: how many are \
equal (to 1e-6), longer by more than 0.1, 1 and 5 %, and the ratio's median, 99th percentile \
and largest. Last, the pairs not planned whose lengths are equal (they should all be).\n\n";

/// How the comparison is made and what it does not cover; the README says the same.
const METHOD: &str = "## Method\n\n\
* **Meshes.** tessera: `tessera_pipeline::bake` in this process with the setting above (what \
  `tessera bake` runs), its `navmesh.tsn` opened with `tessera-navmesh` (memory-mapped, \
  validated) and queried with `tessera-query`. Detour: Recast's tiled polygon mesh built as \
  `recast-full` builds it (RecastDemo's tile sample: watershed regions, at most 6 vertices \
  per polygon, `maxEdgeLen` 12 m), each tile through `dtCreateNavMeshData` **with no detail \
  mesh** (Detour then triangulates each polygon as a fan of its own vertices for heights; \
  tessera's detail triangles are likewise its polygons' own triangulation, so neither side \
  samples the heightfield) and `addTile` into one `dtNavMesh` with 32-bit references. Every \
  Detour polygon has the same flag and area, so the default `dtQueryFilter` walks all of \
  them at cost 1 per metre, as tessera's A* does.\n\
* **Query points.** Points drawn on tessera's mesh lie on Detour's mesh too, up to the \
  differences between the two meshes (simplification, region rules). Each side snaps both \
  ends to its own mesh with the same search box, tessera's own `snap_extent`: 2 agent radii \
  plus one cell across (1.5 m each way at recast-demo settings) and the agent height up and \
  down (`findNearestPoly`'s half-extents on Detour's side).\n\
* **Timed on each side**, per query: tessera `Query::nearest` twice, `find_path` \
  (hierarchical) or `find_path_with(.., Planner::Flat)` (flat), `straight_path` (it \
  allocates its results per call); Detour `findNearestPoly` twice, \
  `findPath` into a corridor buffer of 65,536 polygons, `findStraightPath` (no options) into \
  65,536 corners, with buffers allocated once. The straight path runs only when A* reached \
  the end polygon (a partial Detour corridor counts as not found, as tessera's \
  `found: false`). Not timed: converting points, measuring lengths.\n\
* **Lengths** are the 3D lengths of the straight paths (plan lengths: their horizontal \
  projection). They agree when they differ by at most 5 % of Detour's length (plus 1 cm). \
  Corners sit on the surface, so a path with more corners over uneven ground also climbs \
  and descends more in 3D; the column *plan lengths within 5 %* applies the same test to \
  the plan lengths, as a reading aid. The path-quality bar of issue 15 (97 % within 5 %, \
  mean ratio at most 1.0) is read on the 3D columns (*lengths within 5 %*, *mean length \
  ratio*). Detour's A* is not exactly shortest: it costs a polygon from the midpoint of the \
  edge it was entered by. tessera's is (in plan, links aside): an any-angle search over \
  intervals of edges seen from mesh corners (Polyanya), so where tessera is shorter by more \
  than 5 % the difference is Detour's search or the meshes, and where it is longer, the \
  meshes. The meshes differ, so some pairs take different corridors.\n\
* **Detour any-angle** (untimed, answers only): the same pairs through Detour's sliced \
  search with `DT_FINDPATH_ANY_ANGLE` (a polygon costed from its grandparent wherever a \
  raycast of at most 50 agent radii joins them), then `findStraightPath`. Of the pairs both \
  tessera and `findPath` joined, *within 5 % of Detour any-angle* counts those whose tessera \
  length agrees with that search's, and *within 5 % of either Detour* those that agree with \
  at least one of Detour's two searches: the two are Detour's own readings of the shortest \
  way on its mesh, and where they differ from each other by more than 5 % neither is it. \
  *Detour any-angle within 5 % of findPath* applies the same test to Detour alone, on the \
  pairs both its searches joined, on the same mesh: how far the 5 % bar can be met by a \
  search that finds shorter ways than `findPath`.\n\n\
## Caveats\n\n\
* **Spatial lookup.** Detour finds candidate polygons for `findNearestPoly` through its tile \
  grid and each tile's bounding-volume tree (`buildBvTree`); tessera through one uniform \
  grid over the whole mesh, then a closest-point test on the candidates, nearest plan box \
  first, until no box can beat the best point.\n\
* **Different polygons.** Detour's polygons stop at tile borders (tiles are linked at run \
  time) and have at most 6 vertices; tessera's cross tile borders and have no vertex limit. \
  The polygon counts differ, so A* expands different numbers of nodes for the same pair.\n\
* **Node pool.** Detour's A* allocates nothing per query but clears a node pool and hash \
  table sized for the pool; tessera's keeps its node list, heap and tables per thread from \
  query to query, with no node limit on a valid mesh. Its nodes are intervals seen from \
  corners, several per polygon: on a city of long streets and many corners it expands about \
  ten times as many nodes as polygons reached, most of them ways of nearly the same length. A search that runs out of Detour's nodes returns a partial corridor (counted \
  as not found; the count is in the last column), in the time the pool takes to fill, \
  however far the end: the latency table's *pairs both found* column reads the 99th \
  percentiles over the pairs both sides joined. A search that does not reach the end \
  leads, on tessera's side, to the polygon reached whose closest point is nearest the end \
  (a pass over the polygons reached), on Detour's to the node with the smallest heuristic.\n\
* **Pairs found by one side only.** Recast drops regions under 64 cells and tessera keeps \
  every region, so an end on a small tessera island can snap onto Detour's main surface \
  (within the search box) and be joined there; tessera's mesh can also hold small islands \
  that no portal or link joins to their surroundings where Detour's mesh is connected. \
  Ends that snap on one side only count as not found there.\n\
* **Terrain without height detail.** Neither mesh has height detail here, so a polygon's \
  surface is the fan of its corners. On terrain tessera's polygons are few and large (its \
  regions follow the ground), so a point drawn on one can lie farther above or below \
  Detour's smaller polygons than the search box reaches (the agent height): there Detour \
  snaps fewer ends, and the pairs both sides join are a biased sample. With height detail \
  on (as `tessera bake` and RESULTS.md run) tessera's surface follows the ground.\n\
* **Float types.** Detour computes in f32; tessera's queries mix f32 points with f64 \
  distances and costs.\n\
* **Noise.** On a 2-core machine shared with builds, runs differ by 10-30 %; compare the \
  ratio columns and rerun before drawing conclusions.\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::full::RECAST_EDGE_MAX_LEN_M;

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let side = SideResult {
            steps: (1..=100).map(|k| Steps([k as f64, 0.0, 0.0])).collect(),
            ..SideResult::default()
        };
        assert_eq!(side.percentile_us(50.0), 50.0);
        assert_eq!(side.percentile_us(99.0), 99.0);
        assert_eq!(side.percentile_us(100.0), 100.0);
        assert_eq!(side.mean_us(), 50.5);
        assert!(lengths_agree(104.9, 100.0) && !lengths_agree(105.2, 100.0));
        assert!(lengths_agree(0.0, 0.005));
    }

    #[test]
    fn detour_and_tessera_find_the_same_paths_on_a_small_city() {
        // citygen's demo world (100 m: streets, buildings with stairs, a footbridge), baked at
        // RecastDemo's settings on both sides, 200 pairs.
        let dir = tempfile::tempdir().unwrap();
        let obj = dir.path().join("demo.obj");
        crate::write_city(citygen::Size::Demo, 7, &obj).unwrap();
        let scene = Scene {
            name: "citygen demo".to_string(),
            path: obj,
            up: UpAxis::Z,
        };
        let setting = Setting::new("recast-demo@32", RECAST_EDGE_MAX_LEN_M).unwrap();
        let run = QueryRun {
            pairs: 200,
            seed: 3,
            repeat: 1,
            max_nodes: detour::MAX_NODES,
            build_threads: 2,
        };
        let r = measure(&scene, &setting, &run, dir.path()).unwrap();
        let summary = format!(
            "found {} / {}, agree {}, both {}, lengths within 5 % {}, ratio {:.3}",
            r.tessera.found,
            r.detour.found,
            r.agree_found(),
            r.both_found(),
            r.lengths_within(),
            r.mean_length_ratio()
        );
        assert_eq!(r.pairs(), 200);
        assert!(r.tessera_polys > 100 && r.detour_polys > 100, "{summary}");
        // Most pairs are joined on both sides (the rest start or end on a roof or a prop
        // that no stair reaches), and the two sides agree on which.
        assert!(r.tessera.found >= 140 && r.detour.found >= 140, "{summary}");
        assert!(r.agree_found() >= 190, "{summary}");
        // The same walkable surface gives about the same shortest paths.
        assert!(
            r.lengths_within() * 10 >= r.both_found() * 8,
            "fewer than 80 % of the lengths within 5 %: {summary}"
        );
        let ratio = r.mean_length_ratio();
        assert!((0.97..=1.03).contains(&ratio), "{summary}");
        // Every timed query has its three steps' times.
        assert!(r
            .tessera
            .steps
            .iter()
            .all(|s| s.total().is_finite() && s.total() > 0.0));
        assert!(r
            .detour
            .steps
            .iter()
            .all(|s| s.total().is_finite() && s.total() > 0.0));
        assert_eq!(r.detour.out_of_nodes, 0, "{summary}");
        // Detour's any-angle search joins the same pairs as its `findPath`, and its lengths
        // are a second reading: agreeing with either of the two is at least as common.
        assert_eq!(r.detour_any.found, r.detour.found, "{summary}");
        let (any, either) = r.lengths_within_any_angle();
        assert!(any * 10 >= r.both_found() * 8, "{summary}, any-angle {any}");
        assert!(
            either >= r.lengths_within().max(any),
            "{summary}, either {either}"
        );
    }
}
