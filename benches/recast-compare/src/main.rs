//! `recast-compare`: times tessera's tile stages against Recast's on the same tiles.
//!
//! ```text
//! recast-compare voxelize --scene FILE [--up y|z] [--cell-size 0.05] [--cell-height 0.02]
//!                [--tile-size 256] [--agent-height 2.0] [--agent-radius 0.6]
//!                [--max-climb 0.5] [--max-slope 45] [--repeat N]
//! recast-compare regions --scene FILE [same options as voxelize] [--mode layered|flat|both]
//! recast-compare all [--scenes-dir DIR] [--out FILE] [--regions-out FILE] [--city FILE]
//!                [--repeat N]
//! recast-compare full [--threads N] [--out FILE] [--plot FILE|none] [--settings LIST]
//!                [--cities S,M,L,XL|none] [--repeat N] [--xl-repeat N] [--detail on|off|both]
//!                [--budget 256MiB] [--budget-cities XL] [--tessera BIN] [--citygen BIN] ...
//! recast-compare queries [--pairs N] [--large-pairs N] [--seed S] [--repeat N] [--cities M|none]
//!                [--out FILE] ...
//! ```
//!
//! `voxelize` prints a Markdown table row (and the per-step breakdown) for one scene; `regions`
//! does the same for segmentation, contours and the cross-tile merge beside Recast's region and
//! contour stages. `all` runs the three Recast demo meshes (Y-up) at the comparison's settings
//! and writes `benches/RESULTS-voxelize.md` and `benches/RESULTS-regions.md` (the latter also
//! on a citygen world when `--city` names one). `full` bakes whole scenes on both sides, each in
//! its own process (the real `tessera bake`, and this program's `recast-full` for RecastDemo's
//! tiled build), and writes `benches/RESULTS.md` with a plot. `queries` times path queries
//! (nearest polygon, A*, straight path) with tessera's query crate and with Detour on the same
//! scenes and query set, and writes `benches/RESULTS-queries.md`. See README.md beside
//! Cargo.toml for what is measured.

mod compare;
mod detour;
mod full;
mod full_recast;
mod objmesh;
mod plot;
mod queries;
mod recast;
mod regions_report;
mod report;
mod scene;
mod segment;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tessera_config::SegmentationMode;
use tessera_geom::UpAxis;
use tessera_ingest::SceneFormat;

use crate::compare::{Counts, StageTimes};
use crate::scene::Settings;
use crate::segment::{RecastSettings, RegionsResult};

/// Everything measured on one scene.
pub struct SceneResult {
    pub name: String,
    pub tiles: usize,
    pub triangles: u64,
    pub placements: u64,
    pub tessera: Duration,
    pub recast: Duration,
    pub tessera_stages: StageTimes,
    pub recast_stages: StageTimes,
    pub tessera_counts: Counts,
    pub recast_counts: Counts,
    /// Recast's counts when triangles of either winding may be floors (diagnostic, untimed).
    pub recast_both_counts: Counts,
    /// Columns voxelized over all tiles (core grown by the band).
    pub cells: u64,
}

const USAGE: &str = "usage:
  recast-compare voxelize --scene FILE [--up y|z] [--cell-size M] [--cell-height M]
                 [--tile-size CELLS] [--agent-height M] [--agent-radius M] [--max-climb M]
                 [--max-slope DEG] [--repeat N]
  recast-compare regions --scene FILE [same options as voxelize] [--mode layered|flat|both]
  recast-compare all [--scenes-dir DIR] [--out FILE] [--regions-out FILE] [--city FILE]
                 [--repeat N]
  recast-compare full [--threads N] [--out FILE] [--plot FILE|none] [--repeat N]
                 [--xl-repeat N] [--detail on|off|both]
                 [--settings recast-demo@32,benches/recast-compare/fine.toml@128]
                 [--cities S,M,L,XL|demo|none] [--demo-meshes on|off] [--budget 256MiB|none]
                 [--budget-cities XL|none] [--city-seed 7] [--scenes-dir DIR] [--tessera BIN]
                 [--citygen BIN] [--max-edge-len M] [--font TTF] [--terrain S,M,L|none]
  recast-compare queries [--pairs 2000] [--large-pairs N] [--seed 1] [--repeat 3]
                 [--cities M|none] [--city-seed 7] [--config recast-demo] [--scenes-dir DIR]
                 [--out FILE]
                 [--max-nodes 65535] [--build-threads N] [--terrain S,M,L|none]

defaults (voxelize, regions, all): cell 0.05 m, height 0.02 m, tile 256, agent 2.0 / 0.6 /
0.5 m / 45 deg, repeat 3;
--up defaults to the format's convention (z for OBJ); the Recast demo meshes need --up y.
all: --city names a citygen OBJ (Z-up) added to the regions comparison only.
full: whole bakes, each side in its own process (tessera's binary from target/release by
default; build it first), detail mesh on and off on both sides, tessera at its own tile size
and at Recast's (a setting's `@CELLS`); writes benches/RESULTS.md (keeping the hand-written
sections below its marker) and benches/results-plot.png. With the default cities (S to XL)
and --xl-repeat 1 it takes a little over an hour on two cores (an estimate).
queries: path-query latency, tessera-query against Detour on one query set per scene (tessera
bakes in this process), writes benches/RESULTS-queries.md.";

/// tessera's segmentation modes the regions comparison measures: the default first.
const MODES: [SegmentationMode; 2] = [SegmentationMode::Layered, SegmentationMode::Flat];

/// The three Recast demo meshes, in the order of the results table.
const DEMO_SCENES: [&str; 3] = ["dungeon.obj", "nav_test.obj", "undulating.obj"];

/// Where the Recast demo meshes are unless `--scenes-dir` says otherwise.
fn default_scenes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/recast")
}

/// The Recast demo meshes in `dir` (Y-up), as scenes for `full` and `queries`.
fn demo_scenes(dir: &Path) -> Vec<full::Scene> {
    DEMO_SCENES
        .iter()
        .map(|n| full::Scene {
            name: n.to_string(),
            path: dir.join(n),
            up: UpAxis::Y,
        })
        .collect()
}

/// The machine's core count.
fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn main() {
    if let Err(e) = run(std::env::args().skip(1).collect()) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// `--name value` options after the subcommand.
struct Options(Vec<(String, String)>);

impl Options {
    fn parse(args: &[String], known: &[&str]) -> Result<Options, String> {
        let mut out = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let name = a
                .strip_prefix("--")
                .filter(|n| known.contains(n))
                .ok_or_else(|| format!("unexpected argument `{a}`\n{USAGE}"))?;
            let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
            out.push((name.to_string(), value.clone()));
        }
        Ok(Options(out))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A file or folder option, or `default` when it is not given.
    fn path(&self, name: &str, default: impl FnOnce() -> PathBuf) -> PathBuf {
        self.get(name).map(PathBuf::from).unwrap_or_else(default)
    }

    fn num<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{name}: `{v}` is not a valid number")),
        }
    }
}

fn run(args: Vec<String>) -> Result<(), Box<dyn Error>> {
    let Some(command) = args.first() else {
        return Err(USAGE.into());
    };
    match command.as_str() {
        "voxelize" => {
            let SceneArgs {
                scene,
                up,
                settings,
                repeat,
                ..
            } = scene_options(&args[1..], &[])?;
            println!("{}", report::settings_line(&settings, repeat));
            println!();
            println!("{}", report::table_header());
            let result = run_scene(&scene, up, &settings, repeat)?;
            println!("{}", report::table_row(&result));
            println!();
            println!("{}", report::stage_table(&result));
            println!();
            println!("{}", report::counts_table(std::slice::from_ref(&result)));
            Ok(())
        }
        "regions" => {
            let SceneArgs {
                scene,
                up,
                settings,
                repeat,
                options: o,
            } = scene_options(&args[1..], &["mode"])?;
            let modes: Vec<SegmentationMode> = match o.get("mode").unwrap_or("both") {
                "both" => MODES.to_vec(),
                "layered" => vec![SegmentationMode::Layered],
                "flat" => vec![SegmentationMode::Flat],
                other => {
                    return Err(
                        format!("--mode must be layered, flat or both, not `{other}`").into(),
                    )
                }
            };
            let recast = RecastSettings::default();
            println!("{}", report::settings_line(&settings, repeat));
            println!(
                "{}",
                regions_report::recast_line(&recast, settings.config()?.voxel_params().band)
            );
            println!();
            println!("{}", regions_report::table_header());
            let result = run_regions(&scene, up, &settings, &modes, &recast, repeat)?;
            println!("{}", regions_report::table_rows(&result));
            print_regions_details(std::slice::from_ref(&result));
            Ok(())
        }
        "all" => {
            let o = Options::parse(
                &args[1..],
                &["scenes-dir", "out", "regions-out", "city", "repeat"],
            )?;
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            let scenes_dir = o.path("scenes-dir", default_scenes_dir);
            let out = o.path("out", || manifest.join("../RESULTS-voxelize.md"));
            let regions_out = o.path("regions-out", || manifest.join("../RESULTS-regions.md"));
            let repeat = o.num("repeat", 3usize)?.max(1);
            let settings = Settings::default();
            // Before measuring: the revision should be that of the tree the binary was built
            // from, not of edits made while it runs.
            let stamp = report::stamp();
            println!("{}", report::settings_line(&settings, repeat));
            println!();
            println!("{}", report::table_header());
            let mut results = Vec::new();
            for name in DEMO_SCENES {
                let path = scenes_dir.join(name);
                let result = run_scene(&path, UpAxis::Y, &settings, repeat)?;
                println!("{}", report::table_row(&result));
                results.push(result);
            }
            let text = report::results_file(&settings, repeat, &results, &stamp);
            std::fs::write(&out, &text).map_err(|e| format!("{}: {e}", out.display()))?;
            println!();
            for r in &results {
                println!("{}\n", report::stage_table(r));
            }
            println!("{}", report::counts_table(&results));
            println!("\nwritten: {}", out.display());

            // Regions and contours on the same scenes, plus the citygen world if given.
            let recast = RecastSettings::default();
            let band = settings.config()?.voxel_params().band;
            println!();
            println!("{}", regions_report::recast_line(&recast, band));
            println!();
            println!("{}", regions_report::table_header());
            let mut scenes: Vec<(PathBuf, UpAxis)> = DEMO_SCENES
                .iter()
                .map(|n| (scenes_dir.join(n), UpAxis::Y))
                .collect();
            let mut notes = Vec::new();
            match o.get("city").map(PathBuf::from) {
                Some(city) if city.is_file() => {
                    notes.push(format!(
                        "`{}` is a citygen world (Z-up) given with `--city`, measured here only \
                         (README: how it is generated).",
                        scene_name(&city)
                    ));
                    scenes.push((city, UpAxis::Z));
                }
                Some(city) => notes.push(format!(
                    "The citygen world `{}` was asked for but not found: not measured.",
                    city.display()
                )),
                None => notes
                    .push("No citygen world measured (run `all` with `--city FILE`).".to_string()),
            }
            let mut results = Vec::new();
            for (path, up) in &scenes {
                let result = run_regions(path, *up, &settings, &MODES, &recast, repeat)?;
                println!("{}", regions_report::table_rows(&result));
                results.push(result);
            }
            print_regions_details(&results);
            let text = regions_report::results_file(
                &settings, &recast, band, repeat, &results, &notes, &stamp,
            );
            std::fs::write(&regions_out, &text)
                .map_err(|e| format!("{}: {e}", regions_out.display()))?;
            println!("\nwritten: {}", regions_out.display());
            Ok(())
        }
        "full" => run_full(&args[1..]),
        "queries" => run_queries(&args[1..]),
        // The Recast side of `full`, run by it as a child process.
        "recast-full" => {
            let mut known = vec!["scene", "up", "threads", "json"];
            known.extend_from_slice(&full_recast::FullSettings::ARGS);
            let o = Options::parse(&args[1..], &known)?;
            let scene = PathBuf::from(o.get("scene").ok_or("--scene FILE is required")?);
            let up = match o.get("up") {
                Some(u) => UpAxis::parse(u).ok_or("--up must be y or z")?,
                None => SceneFormat::of(&scene)?.default_up(),
            };
            let json = PathBuf::from(o.get("json").ok_or("--json FILE is required")?);
            let threads = o.num("threads", 1usize)?.max(1);
            let settings = full_recast::FullSettings::from_args(|k| o.get(k).map(String::from))?;
            full_recast::run(&scene, up, threads, &settings, &json)
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}").into()),
    }
}

/// The options of `voxelize` and `regions`: scene, up axis, settings, repeats.
/// What `voxelize` and `regions` were asked for.
struct SceneArgs {
    scene: PathBuf,
    up: UpAxis,
    settings: Settings,
    repeat: usize,
    /// All the options, the command's own (`extra`) included.
    options: Options,
}

/// `extra` names options beyond the common ones; their values are in `options`.
fn scene_options(args: &[String], extra: &[&str]) -> Result<SceneArgs, Box<dyn Error>> {
    let mut known = vec![
        "scene",
        "up",
        "cell-size",
        "cell-height",
        "tile-size",
        "agent-height",
        "agent-radius",
        "max-climb",
        "max-slope",
        "repeat",
    ];
    known.extend_from_slice(extra);
    let o = Options::parse(args, &known)?;
    let scene = PathBuf::from(o.get("scene").ok_or("--scene FILE is required")?);
    let up = match o.get("up") {
        Some(u) => UpAxis::parse(u).ok_or("--up must be y or z")?,
        None => SceneFormat::of(&scene)?.default_up(),
    };
    let d = Settings::default();
    let settings = Settings {
        cell_size: o.num("cell-size", d.cell_size)?,
        cell_height: o.num("cell-height", d.cell_height)?,
        tile_size: o.num("tile-size", d.tile_size)?,
        agent_height: o.num("agent-height", d.agent_height)?,
        agent_radius: o.num("agent-radius", d.agent_radius)?,
        max_climb: o.num("max-climb", d.max_climb)?,
        max_slope: o.num("max-slope", d.max_slope)?,
    };
    let repeat = o.num("repeat", 3usize)?.max(1);
    Ok(SceneArgs {
        scene,
        up,
        settings,
        repeat,
        options: o,
    })
}

/// The file name of a scene, for the tables.
fn scene_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Loads, tiles and times one scene's regions and contours on both sides.
fn run_regions(
    path: &Path,
    up: UpAxis,
    settings: &Settings,
    modes: &[SegmentationMode],
    recast: &RecastSettings,
    repeat: usize,
) -> Result<RegionsResult, Box<dyn Error>> {
    let modes = modes
        .iter()
        .map(|&m| Ok((m, settings.levels(m)?)))
        .collect::<Result<Vec<_>, Box<dyn Error>>>()?;
    let scene = scene::load(path, up, settings).map_err(|e| format!("{}: {e}", path.display()))?;
    let tiles = compare::prepare_recast(&scene, compare::Winding::Up)?;
    Ok(segment::run(
        scene_name(path),
        &scene,
        &tiles,
        &modes,
        recast,
        repeat,
    )?)
}

fn print_regions_details(results: &[RegionsResult]) {
    println!();
    println!("{}", regions_report::breakdown_table(results));
    println!();
    println!("{}", regions_report::tessera_counts_table(results));
    println!();
    println!("{}", regions_report::recast_counts_table(results));
    println!();
    println!("{}", regions_report::variants_table(results));
}

/// Loads, tiles and times one scene on both sides.
fn run_scene(
    path: &Path,
    up: UpAxis,
    settings: &Settings,
    repeat: usize,
) -> Result<SceneResult, Box<dyn Error>> {
    let scene = scene::load(path, up, settings).map_err(|e| format!("{}: {e}", path.display()))?;
    let recast_tiles = compare::prepare_recast(&scene, compare::Winding::Up)?;
    let ctx = recast::Context::new();

    // A first, untimed pass: warms caches and the allocators, takes the counts, and checks that
    // the step-by-step tessera run is still what voxelize_tile does.
    let (mut t_stages, tessera_counts) = compare::tessera_stages(&scene, true);
    let (mut r_stages, recast_counts) = compare::recast_stages(&ctx, &scene, &recast_tiles)?;
    let (_, recast_both_counts) = compare::recast_stages(
        &ctx,
        &scene,
        &compare::prepare_recast(&scene, compare::Winding::Both)?,
    )?;
    let mut tessera = Duration::MAX;
    let mut recast = Duration::MAX;
    for i in 0..repeat {
        // Alternate the sides so that slow drifts of a shared machine hit both.
        tessera = tessera.min(compare::tessera_total(&scene));
        recast = recast.min(compare::recast_total(&ctx, &scene, &recast_tiles)?);
        let (ts, _) = compare::tessera_stages(&scene, false);
        let (rs, _) = compare::recast_stages(&ctx, &scene, &recast_tiles)?;
        if i == 0 {
            (t_stages, r_stages) = (ts, rs);
        } else {
            t_stages = t_stages.min(ts);
            r_stages = r_stages.min(rs);
        }
    }
    Ok(SceneResult {
        name: scene_name(path),
        tiles: scene.tiles.len(),
        triangles: scene.triangles,
        placements: scene.placements(),
        tessera,
        recast,
        tessera_stages: t_stages,
        recast_stages: r_stages,
        tessera_counts,
        recast_counts,
        recast_both_counts,
        cells: scene.cells(),
    })
}

/// `full`: whole bakes of every scene at every setting, in each detail mode, both sides; then
/// the results file (keeping its hand-written sections) and the plot.
fn run_full(args: &[String]) -> Result<(), Box<dyn Error>> {
    let o = Options::parse(
        args,
        &[
            "threads",
            "out",
            "plot",
            "settings",
            "cities",
            "city-seed",
            "scenes-dir",
            "tessera",
            "citygen",
            "repeat",
            "xl-repeat",
            "max-edge-len",
            "font",
            "detail",
            "budget",
            "budget-cities",
            "demo-meshes",
            "terrain",
        ],
    )?;
    let started = std::time::Instant::now();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.join("../..");
    let threads = o.num("threads", cores())?.max(1);
    let repeat = o.num("repeat", 3usize)?.max(1);
    let xl_repeat = o.num("xl-repeat", repeat)?.max(1);
    let out = o.path("out", || manifest.join("../RESULTS.md"));
    let plot_path = match o.get("plot") {
        Some("none") => None,
        Some(p) => Some(PathBuf::from(p)),
        None => Some(
            out.parent()
                .unwrap_or(Path::new("."))
                .join("results-plot.png"),
        ),
    };
    let scenes_dir = o.path("scenes-dir", default_scenes_dir);
    let tessera_src = o.path("tessera", || root.join("target/release/tessera"));
    let citygen = o.path("citygen", || root.join("target/release/citygen"));
    let max_edge_len = o.num("max-edge-len", full::RECAST_EDGE_MAX_LEN_M)?;
    let city_seed = o.num("city-seed", 7u64)?;
    let modes = match o.get("detail").unwrap_or("both") {
        "both" => vec![full::Detail::On, full::Detail::Off],
        "on" => vec![full::Detail::On],
        "off" => vec![full::Detail::Off],
        other => return Err(format!("--detail must be on, off or both, not `{other}`").into()),
    };
    let demo_meshes = match o.get("demo-meshes").unwrap_or("on") {
        "on" => true,
        "off" => false,
        other => return Err(format!("--demo-meshes must be on or off, not `{other}`").into()),
    };
    let budget = match o.get("budget").unwrap_or("256MiB") {
        "none" | "" => None,
        b => Some(b.to_string()),
    };
    // Recast's tile sizes are stated (`@CELLS`): tessera's own come from the configs.
    let default_settings = format!(
        "recast-demo@32,{}@128",
        manifest.join("fine.toml").display()
    );
    let settings = o
        .get("settings")
        .unwrap_or(&default_settings)
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| full::Setting::new(s, max_edge_len))
        .collect::<Result<Vec<_>, _>>()?;
    // citygen sizes, as the tables name them.
    let city_list = |list: &str| -> Result<Vec<String>, String> {
        match list {
            "none" | "" => Ok(Vec::new()),
            list => list
                .split(',')
                .map(|s| match citygen::Size::parse(s) {
                    Some(citygen::Size::Demo) => Ok("demo".to_string()),
                    Some(size) => Ok(format!("{size:?}")),
                    None => Err(format!("unknown citygen size `{s}`")),
                })
                .collect(),
        }
    };
    let cities = city_list(o.get("cities").unwrap_or("S,M,L,XL"))?;
    let terrains = terrain_list(o.get("terrain").unwrap_or("S"))?;
    let budget_scenes: Vec<String> = city_list(o.get("budget-cities").unwrap_or("XL"))?
        .into_iter()
        .map(|c| format!("citygen {c}"))
        .collect();
    if !tessera_src.is_file() {
        return Err(format!(
            "no tessera binary at {}: run `cargo build --release -p tessera` in the repository \
             root first, or pass --tessera BIN",
            tessera_src.display()
        )
        .into());
    }

    // Before measuring: the revision of the tree the binaries were built from.
    let stamp = report::stamp();
    let mem_available = full::mem_available();
    let work = tempfile::tempdir()?;
    // A private copy, so that a rebuild of target/release during the run changes nothing.
    let tessera = work.path().join("tessera");
    std::fs::copy(&tessera_src, &tessera).map_err(|e| format!("{}: {e}", tessera_src.display()))?;
    let built = std::fs::metadata(&tessera_src)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| format!("{} UTC", report::utc_date_time(d.as_secs())))
        .unwrap_or_else(|| "unknown time".to_string());
    let version = std::process::Command::new(&tessera)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let tessera_binary = format!(
        "`{}` ({version}, built {built}, release profile)",
        tessera_src
            .strip_prefix(&root)
            .map(|p| format!("target/{}", p.strip_prefix("target").unwrap_or(p).display()))
            .unwrap_or_else(|_| tessera_src.display().to_string())
    );

    let mut scenes = if demo_meshes {
        demo_scenes(&scenes_dir)
    } else {
        Vec::new()
    };
    let worlds = cities
        .iter()
        .map(|size| (size, false))
        .chain(terrains.iter().map(|size| (size, true)));
    for (size, terrain) in worlds {
        let kind = if terrain { "terrain" } else { "city" };
        let path = work
            .path()
            .join(format!("{kind}-{}.obj", size.to_lowercase()));
        let name = if terrain {
            format!("terrain {size}")
        } else {
            format!("citygen {size}")
        };
        println!("generating {name} (seed {city_seed}) ...");
        full::generate_city(
            &citygen,
            size,
            terrain,
            city_seed,
            &path,
            &work.path().join("citygen.log"),
        )?;
        scenes.push(full::Scene {
            name,
            path,
            up: UpAxis::Z,
        });
    }
    // The scenes just written (a gigabyte for XL) are flushed to disk before anything is
    // timed: their write-back would otherwise run beside the first bakes and slow the side
    // that writes files (tessera fsyncs its checkpoints; Recast writes nothing).
    full::flush_disk_writes();
    let demo_note = if demo_meshes {
        "The three Recast demo meshes from `tests/data/recast/` (Y-up)"
    } else {
        "No Recast demo mesh (`--demo-meshes off`)"
    };
    let city_note = if cities.is_empty() {
        format!("{demo_note}; no citygen world (`--cities none`)")
    } else {
        format!(
            "{demo_note}, and citygen worlds generated for the run with `citygen --size SIZE \
             --seed {city_seed}` (sizes {}; Z-up OBJ)",
            cities.join(", ")
        )
    };
    let city_note = if terrains.is_empty() {
        format!("{city_note}.")
    } else {
        format!(
            "{city_note}; terrain worlds (hills, valleys, cliffs past the slope limit, river \
             channels) from `citygen --terrain --size SIZE --seed {city_seed}` (sizes {}: \
             S 1 km^2, M 2 km^2, L 4 km^2).",
            terrains.join(", ")
        )
    };
    if scenes.is_empty() {
        return Err("no scene to bake (--demo-meshes off and --cities none)".into());
    }

    let run = full::FullRun {
        tessera,
        threads,
        repeat,
        xl_repeat,
        budget: budget.clone(),
        budget_scenes: budget_scenes.clone(),
        work: work.path().to_path_buf(),
    };
    let mut results = Vec::new();
    for &detail in &modes {
        for setting in &settings {
            println!(
                "\nsetting {}, detail {}: {}",
                setting.name,
                detail.word(),
                setting.describe()
            );
            let mut rows = Vec::new();
            for scene in &scenes {
                let row = run.scene(setting, detail, scene)?;
                let rt = match &row.tessera_recast_tile {
                    Some(side) => format!("{} s", side.time_cell()),
                    None => "same".to_string(),
                };
                println!(
                    "  {:<14} tessera {:>8} s {:>7.1} MiB | at Recast's tile {rt:>10} | Recast \
                     {:>8} s {:>7.1} MiB   [{:.0} s elapsed]",
                    row.scene,
                    row.tessera.time_cell(),
                    row.tessera.rss_mib(),
                    row.recast.time_cell(),
                    row.recast.rss_mib(),
                    started.elapsed().as_secs_f64()
                );
                if let Some((b, side)) = &row.tessera_budget {
                    println!(
                        "  {:<14} tessera at {b}: {:>8} s {:>7.1} MiB",
                        "",
                        side.time_cell(),
                        side.rss_mib()
                    );
                }
                rows.push(row);
            }
            results.push(full::SettingResult {
                setting,
                detail,
                rows,
            });
        }
    }
    let parent_rss = full::own_peak_rss();
    let warnings = full::sanity(&results);
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    for res in &results {
        for line in full::failures(&res.rows) {
            eprintln!(
                "failed ({}, detail {}): {line}",
                res.setting.name,
                res.detail.word()
            );
        }
    }

    // The plot shows the first mode (the headline: detail on, unless only off was run).
    let plot_detail = modes.first().copied();
    let mut plot_has_text = false;
    if let (Some(path), Some(detail)) = (&plot_path, plot_detail) {
        let font = plot::find_font(o.get("font").map(Path::new));
        plot_has_text = font.as_deref().is_some_and(plot::use_font);
        let shown: Vec<&full::SettingResult> =
            results.iter().filter(|r| r.detail == detail).collect();
        plot::draw(path, &shown, plot_has_text)?;
        println!("\nwritten: {}", path.display());
    }
    let plot_link = plot_path
        .as_ref()
        .map(|p| match (p.parent(), out.parent()) {
            (Some(a), Some(b)) if a == b => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            _ => p.display().to_string(),
        });
    let command = format!(
        "cargo run --release --manifest-path benches/recast-compare/Cargo.toml -- full {}",
        args.join(" ")
    );
    let info = full::FileInfo {
        command: command.trim_end(),
        stamp: &stamp,
        tessera_binary: &tessera_binary,
        threads,
        repeat,
        xl_repeat,
        budget: budget.as_deref(),
        budget_scenes: &budget_scenes,
        plot: plot_link.as_deref(),
        plot_has_text,
        plot_detail,
        parent_rss_bytes: parent_rss,
        mem_available_bytes: mem_available,
        city_note: &city_note,
        warnings: &warnings,
        elapsed: started.elapsed(),
    };
    // The sections a person added below the tool's part are carried over unchanged.
    full::write_keeping(&out, full::results_file(&info, &results))?;
    println!("written: {}", out.display());
    Ok(())
}

/// `queries`: path-query latency on both sides, every scene, then the results file.
fn run_queries(args: &[String]) -> Result<(), Box<dyn Error>> {
    let o = Options::parse(
        args,
        &[
            "pairs",
            "seed",
            "repeat",
            "cities",
            "city-seed",
            "config",
            "scenes-dir",
            "out",
            "max-nodes",
            "build-threads",
            "terrain",
            "large-pairs",
        ],
    )?;
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let large_pairs: Option<usize> = o
        .get("large-pairs")
        .map(|_| o.num("large-pairs", 0usize))
        .transpose()?;
    let run = queries::QueryRun {
        pairs: o.num("pairs", 2000usize)?.max(1),
        seed: o.num("seed", 1u64)?,
        repeat: o.num("repeat", 3usize)?.max(1),
        max_nodes: o.num("max-nodes", detour::MAX_NODES)?,
        build_threads: o.num("build-threads", cores())?.max(1),
    };
    if !(1..=detour::MAX_NODES).contains(&run.max_nodes) {
        return Err(format!("--max-nodes must be 1 ..= {}", detour::MAX_NODES).into());
    }
    let out = o.path("out", || manifest.join("../RESULTS-queries.md"));
    let scenes_dir = o.path("scenes-dir", default_scenes_dir);
    let city_seed = o.num("city-seed", 7u64)?;
    let setting = full::Setting::new(
        o.get("config").unwrap_or("recast-demo"),
        full::RECAST_EDGE_MAX_LEN_M,
    )?;
    let cities: Vec<citygen::Size> = match o.get("cities").unwrap_or("M") {
        "none" | "" => Vec::new(),
        list => list
            .split(',')
            .map(|s| citygen::Size::parse(s).ok_or(format!("--cities: unknown size `{s}`")))
            .collect::<Result<_, _>>()?,
    };

    // Before measuring: the revision of the tree this binary was built from.
    let stamp = report::stamp();
    let work = tempfile::tempdir()?;
    let mut scenes = demo_scenes(&scenes_dir);
    let mut city_names = Vec::new();
    let mut large = Vec::new();
    for size in cities {
        let name = format!("{size:?}");
        if matches!(size, citygen::Size::L | citygen::Size::XL) {
            large.push(format!("citygen {name}"));
        }
        let path = work
            .path()
            .join(format!("city-{}.obj", name.to_lowercase()));
        println!("generating citygen {name} (seed {city_seed}) ...");
        write_city(size, city_seed, &path)?;
        scenes.push(full::Scene {
            name: format!("citygen {name}"),
            path,
            up: UpAxis::Z,
        });
        city_names.push(name);
    }
    let terrains = terrain_list(o.get("terrain").unwrap_or("S"))?;
    for name in &terrains {
        let size = citygen::Size::parse(name).expect("checked by terrain_list");
        let path = work
            .path()
            .join(format!("terrain-{}.obj", name.to_lowercase()));
        println!("generating citygen terrain {name} (seed {city_seed}) ...");
        let params = citygen::TerrainParams::for_size(size, city_seed, [0.0; 3])
            .ok_or(format!("--terrain: no terrain of size {name}"))?;
        write_mesh(&citygen::generate_terrain(&params), &path)?;
        scenes.push(full::Scene {
            name: format!("terrain {name}"),
            path,
            up: UpAxis::Z,
        });
    }
    let scenes_note = if city_names.is_empty() {
        "The three Recast demo meshes from `tests/data/recast/` (Y-up); no citygen world."
            .to_string()
    } else {
        format!(
            "The three Recast demo meshes from `tests/data/recast/` (Y-up) and citygen \
             worlds generated for the run (sizes {}, seed {city_seed}; Z-up OBJ).",
            city_names.join(", ")
        )
    };
    let scenes_note = match large_pairs {
        Some(n) if !large.is_empty() => format!(
            "{scenes_note} On {} the query set is {n} pairs (`--large-pairs`): a flat search \
             across a 1-2 km city takes tens of milliseconds.",
            large.join(" and ")
        ),
        _ => scenes_note,
    };
    let scenes_note = if terrains.is_empty() {
        scenes_note
    } else {
        format!(
            "{scenes_note} Terrain worlds from `citygen --terrain --size SIZE --seed \
             {city_seed}` (sizes {}; S is 1 km^2).",
            terrains.join(", ")
        )
    };

    println!("setting {}: {}", setting.name, setting.describe());
    let mut rows = Vec::new();
    for scene in &scenes {
        let run = match large_pairs {
            Some(pairs) if large.contains(&scene.name) => queries::QueryRun {
                pairs: pairs.max(1),
                ..run.clone()
            },
            _ => run.clone(),
        };
        let row = queries::measure(scene, &setting, &run, work.path())?;
        let (t, f, d) = (&row.tessera, &row.flat, &row.detour);
        println!(
            "  {:<14} tessera mean {:>8.1} us p99 {:>9.1} found {:>5} | flat mean {:>8.1} us \
             p99 {:>9.1} | Detour mean {:>8.1} us p99 {:>9.1} found {:>5} | lengths within 5 \
             %: {}/{}",
            row.scene,
            t.mean_us(),
            t.percentile_us(99.0),
            t.found,
            f.mean_us(),
            f.percentile_us(99.0),
            d.mean_us(),
            d.percentile_us(99.0),
            d.found,
            row.lengths_within(),
            row.both_found()
        );
        rows.push(row);
    }
    println!("\n{}", queries::latency_table(&rows));
    println!("{}", queries::steps_table(&rows));
    println!("{}", queries::hierarchy_table(&rows));
    println!("{}", queries::answers_table(&rows));
    let command = format!(
        "cargo run --release --manifest-path benches/recast-compare/Cargo.toml -- queries {}",
        args.join(" ")
    );
    let info = queries::QueryFileInfo {
        command: command.trim_end(),
        stamp: &stamp,
        setting: &setting,
        run: &run,
        scenes_note: &scenes_note,
    };
    full::write_keeping(&out, queries::results_file(&info, &rows))?;
    println!("written: {}", out.display());
    Ok(())
}

/// Generates a citygen world into `path` as a Z-up OBJ, as `citygen --out` writes it.
fn write_city(size: citygen::Size, seed: u64, path: &Path) -> Result<(), Box<dyn Error>> {
    let mesh = citygen::generate(&citygen::CityParams {
        size,
        seed,
        offset: [0.0; 3],
    });
    write_mesh(&mesh, path)
}

/// Terrain sizes from `--terrain` (S, M, L or none), as the tables name them.
fn terrain_list(list: &str) -> Result<Vec<String>, String> {
    match list {
        "none" | "" => Ok(Vec::new()),
        list => list
            .split(',')
            .map(|s| match citygen::Size::parse(s) {
                Some(size @ (citygen::Size::S | citygen::Size::M | citygen::Size::L)) => {
                    Ok(format!("{size:?}"))
                }
                _ => Err(format!("--terrain: `{s}` is not S, M or L")),
            })
            .collect(),
    }
}

/// Writes `mesh` as OBJ to `path`.
fn write_mesh(mesh: &citygen::Mesh, path: &Path) -> Result<(), Box<dyn Error>> {
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?,
    );
    citygen::write_obj(mesh, &mut file)?;
    use std::io::Write;
    file.flush()?;
    Ok(())
}
