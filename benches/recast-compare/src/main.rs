//! `recast-compare`: times tessera's tile stages against Recast's on the same tiles.
//!
//! ```text
//! recast-compare voxelize --scene FILE [--up y|z] [--cell-size 0.05] [--cell-height 0.02]
//!                [--tile-size 256] [--agent-height 2.0] [--agent-radius 0.6]
//!                [--max-climb 0.5] [--max-slope 45] [--repeat N]
//! recast-compare regions --scene FILE [same options as voxelize] [--mode layered|flat|both]
//! recast-compare all [--scenes-dir DIR] [--out FILE] [--regions-out FILE] [--city FILE]
//!                [--repeat N]
//! ```
//!
//! `voxelize` prints a Markdown table row (and the per-step breakdown) for one scene; `regions`
//! does the same for segmentation, contours and the cross-tile merge beside Recast's region and
//! contour stages. `all` runs the three Recast demo meshes (Y-up) at the comparison's settings
//! and writes `benches/RESULTS-voxelize.md` and `benches/RESULTS-regions.md` (the latter also
//! on a citygen world when `--city` names one). See README.md beside Cargo.toml for what is
//! measured.

mod compare;
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

defaults: cell 0.05 m, height 0.02 m, tile 256, agent 2.0 / 0.6 / 0.5 m / 45 deg, repeat 3;
--up defaults to the format's convention (z for OBJ); the Recast demo meshes need --up y.
all: --city names a citygen OBJ (Z-up) added to the regions comparison only.";

/// tessera's segmentation modes the regions comparison measures: the default first.
const MODES: [SegmentationMode; 2] = [SegmentationMode::Layered, SegmentationMode::Flat];

/// The three Recast demo meshes, in the order of the results table.
const DEMO_SCENES: [&str; 3] = ["dungeon.obj", "nav_test.obj", "undulating.obj"];

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
            let scenes_dir = o
                .get("scenes-dir")
                .map(PathBuf::from)
                .unwrap_or_else(|| manifest.join("../../../shared/scenes/recast"));
            let out = o
                .get("out")
                .map(PathBuf::from)
                .unwrap_or_else(|| manifest.join("../RESULTS-voxelize.md"));
            let regions_out = o
                .get("regions-out")
                .map(PathBuf::from)
                .unwrap_or_else(|| manifest.join("../RESULTS-regions.md"));
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
