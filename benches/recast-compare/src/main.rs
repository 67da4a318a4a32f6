//! `recast-compare`: times tessera's tile voxelization against Recast's on the same tiles.
//!
//! ```text
//! recast-compare voxelize --scene FILE [--up y|z] [--cell-size 0.05] [--cell-height 0.02]
//!                [--tile-size 256] [--agent-height 2.0] [--agent-radius 0.6]
//!                [--max-climb 0.5] [--max-slope 45] [--repeat N]
//! recast-compare all [--scenes-dir DIR] [--out FILE] [--repeat N]
//! ```
//!
//! `voxelize` prints a Markdown table row (and the per-step breakdown) for one scene; `all` runs
//! the three Recast demo meshes (Y-up) at the comparison's settings and writes
//! `benches/RESULTS-voxelize.md`. See README.md beside Cargo.toml for what is measured.

mod compare;
mod recast;
mod report;
mod scene;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tessera_geom::UpAxis;
use tessera_ingest::SceneFormat;

use crate::compare::{Counts, StageTimes};
use crate::scene::Settings;

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
  recast-compare all [--scenes-dir DIR] [--out FILE] [--repeat N]

defaults: cell 0.05 m, height 0.02 m, tile 256, agent 2.0 / 0.6 / 0.5 m / 45 deg, repeat 3;
--up defaults to the format's convention (z for OBJ); the Recast demo meshes need --up y.";

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
            let o = Options::parse(
                &args[1..],
                &[
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
                ],
            )?;
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
        "all" => {
            let o = Options::parse(&args[1..], &["scenes-dir", "out", "repeat"])?;
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            let scenes_dir = o
                .get("scenes-dir")
                .map(PathBuf::from)
                .unwrap_or_else(|| manifest.join("../../../shared/scenes/recast"));
            let out = o
                .get("out")
                .map(PathBuf::from)
                .unwrap_or_else(|| manifest.join("../RESULTS-voxelize.md"));
            let repeat = o.num("repeat", 3usize)?.max(1);
            let settings = Settings::default();
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
            let text = report::results_file(&settings, repeat, &results);
            std::fs::write(&out, &text).map_err(|e| format!("{}: {e}", out.display()))?;
            println!();
            for r in &results {
                println!("{}\n", report::stage_table(r));
            }
            println!("{}", report::counts_table(&results));
            println!("\nwritten: {}", out.display());
            Ok(())
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}").into()),
    }
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
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string()),
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
