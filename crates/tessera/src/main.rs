//! `tessera`: the command line. Glue only: parse arguments and the config, call the pipeline,
//! print the summary, map each kind of failure to its exit code.
//!
//! Exit codes (stable, for scripts): 0 success; 2 bad command line; 3 bad input (unreadable
//! or malformed scene, empty scene, nothing walkable); 4 bad config; 5 memory budget too small;
//! 6 I/O failure or corrupt artifact; 130 interrupted (SIGINT or SIGTERM; checkpoints intact,
//! the same command resumes).

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use tessera_config::BakeConfig;
use tessera_geom::UpAxis;
use tessera_pipeline::{BakeError, BakeRequest, LogFormat, Progress, SceneInput};

/// Exit codes.
mod exit {
    pub const BAD_INPUT: u8 = 3;
    pub const BAD_CONFIG: u8 = 4;
    pub const OVER_BUDGET: u8 = 5;
    pub const IO: u8 = 6;
    pub const INTERRUPTED: u8 = 130;
}

#[derive(Parser)]
#[command(name = "tessera", version, about = "Navigation meshes for huge worlds", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Bake a scene (OBJ, glTF, GLB); with no scene, bake a generated demo world. Re-running
    /// the same bake resumes from its checkpoints.
    Bake(BakeArgs),
    /// Remove a bake folder's checkpoints (its `work/` folder), keeping its results.
    Clean {
        /// The bake folder [default: tessera-out/demo].
        dir: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Up {
    Y,
    Z,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogArg {
    Auto,
    Plain,
    Json,
    Quiet,
}

#[derive(clap::Args)]
struct BakeArgs {
    /// Scene file (.obj, .gltf, .glb). Omit to bake the built-in demo world.
    scene: Option<PathBuf>,
    /// Config file, or a preset: default, def, S2, S3, S4, S5, recast-demo.
    #[arg(long, short, default_value = "default")]
    config: String,
    /// Output folder [default: tessera-out/<scene name>].
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Tile edge in cells (overrides the config's voxel.tile_size).
    #[arg(long)]
    tile_size: Option<u32>,
    /// Worker threads [default: the machine's cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Memory budget, e.g. 256MiB, 2GiB [default: half the available memory].
    #[arg(long, value_parser = parse_size)]
    memory_budget: Option<u64>,
    /// Up axis of the scene [default: z for OBJ, y for glTF].
    #[arg(long, value_enum)]
    up: Option<Up>,
    /// Progress output on stderr: bars on a terminal (auto), plain lines, JSON lines, or none.
    #[arg(long, value_enum, default_value = "auto")]
    log_format: LogArg,
    /// Seed of the generated demo world (when no scene is given).
    #[arg(long, default_value_t = 1)]
    demo_seed: u64,
    /// Ignore (and remove) existing checkpoints: bake everything again.
    #[arg(long)]
    fresh: bool,
}

fn parse_size(s: &str) -> Result<u64, String> {
    tessera_config::parse_size(s)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Clean { dir } => {
            let dir = dir.unwrap_or_else(|| PathBuf::from("tessera-out").join("demo"));
            let work = tessera_pipeline::BakeLayout::new(&dir).work();
            match std::fs::remove_dir_all(&work) {
                Ok(()) => {
                    println!("removed {}", work.display());
                    ExitCode::SUCCESS
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    println!("nothing to remove: {} does not exist", work.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {}: {e}", work.display());
                    ExitCode::from(exit::IO)
                }
            }
        }
        Command::Bake(args) => {
            let json = matches!(args.log_format, LogArg::Json);
            match run_bake(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(failure) => {
                    let message = format!("{:#}", failure.error);
                    if json {
                        let line = serde_json::json!({"event": "error", "exit_code": failure.code, "message": message});
                        eprintln!("{line}");
                    } else {
                        eprintln!("error: {message}");
                    }
                    ExitCode::from(failure.code)
                }
            }
        }
    }
}

struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl Failure {
    fn new(code: u8, error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code,
            error: error.into(),
        }
    }
}

fn run_bake(args: BakeArgs) -> Result<(), Failure> {
    let mut config =
        BakeConfig::load(&args.config).map_err(|e| Failure::new(exit::BAD_CONFIG, e))?;
    if let Some(ts) = args.tile_size {
        config.voxel.tile_size = ts;
    }
    config
        .validate(&format!("{} (with command-line overrides)", args.config))
        .map_err(|e| Failure::new(exit::BAD_CONFIG, e))?;

    let (scene, default_name) = match &args.scene {
        Some(path) => {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scene".into());
            let up = args.up.map(|u| match u {
                Up::Y => UpAxis::Y,
                Up::Z => UpAxis::Z,
            });
            (
                SceneInput::File {
                    path: path.clone(),
                    up,
                },
                name,
            )
        }
        None => {
            let mesh = citygen::generate(&citygen::CityParams {
                size: citygen::Size::Demo,
                seed: args.demo_seed,
                offset: [0.0; 3],
            });
            eprintln!(
                "no scene given: baking the generated demo world ({} triangles, seed {})",
                mesh.triangles.len(),
                args.demo_seed
            );
            (
                SceneInput::Mesh {
                    name: format!("demo world (citygen, seed {})", args.demo_seed),
                    positions: mesh.positions,
                    triangles: mesh.triangles,
                },
                "demo".to_string(),
            )
        }
    };
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("tessera-out").join(default_name));
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let memory_budget = args
        .memory_budget
        .unwrap_or_else(tessera_budget::default_budget);
    let log_format = match args.log_format {
        LogArg::Auto => LogFormat::Auto,
        LogArg::Plain => LogFormat::Plain,
        LogArg::Json => LogFormat::Json,
        LogArg::Quiet => LogFormat::Quiet,
    };

    if args.fresh {
        let work = tessera_pipeline::BakeLayout::new(&out_dir).work();
        if let Err(e) = std::fs::remove_dir_all(&work) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(Failure::new(
                    exit::IO,
                    anyhow::anyhow!("{}: {e}", work.display()),
                ));
            }
        }
    }
    // SIGINT and SIGTERM ask the bake to stop at its next safe point.
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&interrupt)).map_err(|e| {
            Failure::new(
                exit::IO,
                anyhow::anyhow!("cannot install a signal handler: {e}"),
            )
        })?;
    }

    let summary = tessera_pipeline::bake(BakeRequest {
        scene,
        config,
        out_dir: out_dir.clone(),
        threads,
        memory_budget,
        progress: Progress::new(log_format),
        interrupt: Some(interrupt),
    })
    .map_err(|e| {
        let code = match &e {
            BakeError::Input(_) | BakeError::NoWalkable(_) => exit::BAD_INPUT,
            BakeError::OverBudget(_) => exit::OVER_BUDGET,
            BakeError::Interrupted => exit::INTERRUPTED,
            _ => exit::IO,
        };
        Failure::new(code, e)
    })?;

    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!("baked {} into {}", summary.scene, out_dir.display());
    println!(
        "  triangles        {} ({} degenerate skipped{})",
        summary.triangles,
        summary.degenerate_triangles,
        if summary.scene_cache_reused {
            ", scene cache reused"
        } else {
            ""
        }
    );
    println!(
        "  tiles            {} ({} with geometry, {} cells each side, grid {} x {} cells)",
        summary.tiles,
        summary.tiles_with_geometry,
        summary.tile_size,
        summary.cells[0],
        summary.cells[1]
    );
    println!(
        "  spans            {} ({} walkable)",
        summary.spans, summary.walkable_spans
    );
    println!(
        "  regions          {} (walkable area {:.1} m^2), {} contours, {} contour vertices ({} tile-border vertices removed)",
        summary.regions,
        summary.walkable_area_m2,
        summary.contours,
        summary.contour_vertices,
        summary.third_class_removed
    );
    println!(
        "  memory           peak rss {:.1} MiB, peak anon {:.1} MiB, budget {:.1} MiB, {} threads",
        mib(summary.peak_rss_bytes),
        mib(summary.peak_anon_bytes),
        mib(summary.memory_budget_bytes),
        summary.threads
    );
    // Pipeline order first, then anything a later stage added.
    const ORDER: [&str; 3] = ["ingest", "bin", "voxelize"];
    let mut stages: Vec<String> = ORDER
        .iter()
        .filter_map(|k| summary.seconds.get(*k).map(|v| format!("{k} {v:.2}")))
        .collect();
    stages.extend(
        summary
            .seconds
            .iter()
            .filter(|(k, _)| !ORDER.contains(&k.as_str()) && k.as_str() != "total")
            .map(|(k, v)| format!("{k} {v:.2}")),
    );
    if let Some(total) = summary.seconds.get("total") {
        stages.push(format!("total {total:.2}"));
    }
    println!("  seconds          {}", stages.join(", "));
    println!("  disk             {:.1} MiB", mib(summary.disk_bytes));
    if !summary.stages_reused.is_empty() || summary.resumed_tiles > 0 {
        println!(
            "  resumed          stages reused: {}; {} tiles from checkpoints",
            if summary.stages_reused.is_empty() {
                "none".to_string()
            } else {
                summary.stages_reused.join(", ")
            },
            summary.resumed_tiles
        );
    }
    println!(
        "  summary          {}",
        out_dir.join("summary.json").display()
    );
    Ok(())
}
