//! `tessera`: the command line. Glue only: parse arguments and the config, call the pipeline,
//! the query library, the export crate or the viewer, print the summary or the answer, map
//! each kind of failure to its exit code. After a bake it writes the preview image and the
//! HTML report (the pipeline does not know about them).
//!
//! Exit codes (stable, for scripts): 0 success (a path query that finds no path included);
//! 2 bad command line; 3 bad input (unreadable or malformed scene, empty scene, nothing
//! walkable; a navmesh that is not one, is corrupt or fails validation); 4 bad config; 5 memory
//! budget too small; 6 I/O failure (a navmesh that cannot be opened or read included),
//! corrupt artifact, or worker threads the system refused; 7 internal error (polygonizing or
//! assembling the navmesh failed: a bug, please report it); 130 interrupted (SIGINT or
//! SIGTERM; checkpoints intact, the same command resumes).

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tessera_config::BakeConfig;
use tessera_export::report::{MemoryTrace, ReportInput};
use tessera_export::{ExportOptions, Format, RenderOptions};
use tessera_geom::UpAxis;
use tessera_navmesh::{NavMeshError, NavMeshFile};
use tessera_pipeline::{BakeError, BakeRequest, LogFormat, Progress, SceneInput};
use tessera_query::{shortest_decimal, Query, Rng};

/// Exit codes.
mod exit {
    pub const USAGE: u8 = 2;
    pub const BAD_INPUT: u8 = 3;
    pub const BAD_CONFIG: u8 = 4;
    pub const OVER_BUDGET: u8 = 5;
    pub const IO: u8 = 6;
    pub const INTERNAL: u8 = 7;
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
    /// Find a path on a baked navmesh between two scene points, or answer seeded random pairs
    /// of points on it. No path is an answer (found: false), not an error.
    Path(PathArgs),
    /// Write a baked navmesh as glTF (.glb, or .gltf with the buffer embedded) or OBJ, in the
    /// scene's coordinates (glTF: converted to its Y-up convention), coloured by region, with
    /// portals and links as lines.
    Export(ExportArgs),
    /// Draw a baked navmesh top-down into a PNG: regions in colour, links, and a path between
    /// two points if asked.
    Render(RenderArgs),
    /// Show a baked navmesh in 3D in a web browser: serves a page on 127.0.0.1 (the address
    /// is printed) until interrupted. Click two points on the mesh for the path between them.
    View(ViewArgs),
    /// Describe a baked navmesh: bounds, counts, walkable area, file size.
    Info {
        /// The navmesh file (navmesh.tsn in a bake folder).
        navmesh: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Gltf,
    Obj,
}

#[derive(clap::Args)]
struct ExportArgs {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// Output format [default: from the --out extension: .glb or .gltf is gltf, .obj is obj].
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Output file. For gltf, a .gltf name gives JSON with an embedded buffer, any other a
    /// binary .glb.
    #[arg(long, short)]
    out: PathBuf,
    /// Export each polygon's detail triangles instead of a fan over its corners.
    #[arg(long)]
    detail: bool,
}

#[derive(clap::Args)]
struct RenderArgs {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// Output PNG file.
    #[arg(long, short)]
    out: PathBuf,
    /// Draw the path from this point X,Y,Z (scene coordinates and up axis).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_point, allow_hyphen_values = true, requires = "to")]
    from: Option<[f64; 3]>,
    /// ... to this point X,Y,Z.
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_point, allow_hyphen_values = true, requires = "from")]
    to: Option<[f64; 3]>,
    /// Longest side of the image in pixels (a large world is scaled down to fit).
    #[arg(long, value_name = "PX", default_value_t = tessera_export::render::DEFAULT_MAX_SIZE,
          value_parser = clap::value_parser!(u32).range(16..=16384))]
    max_size: u32,
}

#[derive(clap::Args)]
struct ViewArgs {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// The scene it was baked from (.obj, .gltf, .glb), drawn as a faint overlay (decimated
    /// to at most 400 000 triangles).
    #[arg(long)]
    scene: Option<PathBuf>,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8370)]
    port: u16,
}

#[derive(clap::Args)]
struct PathArgs {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// Start point X,Y,Z in the scene's own coordinates and up axis.
    #[arg(
        long,
        value_name = "X,Y,Z",
        value_parser = parse_point,
        allow_hyphen_values = true,
        requires = "to",
        required_unless_present = "random_pairs"
    )]
    from: Option<[f64; 3]>,
    /// End point X,Y,Z in the scene's own coordinates and up axis.
    #[arg(
        long,
        value_name = "X,Y,Z",
        value_parser = parse_point,
        allow_hyphen_values = true,
        requires = "from"
    )]
    to: Option<[f64; 3]>,
    /// Instead of --from/--to: answer N pairs of random points on the mesh (area-weighted).
    #[arg(long, value_name = "N", conflicts_with_all = ["from", "to"])]
    random_pairs: Option<u32>,
    /// Seed of the random pairs: the same seed gives the same pairs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print JSON: one object for a path, one array for random pairs.
    #[arg(long)]
    json: bool,
}

/// `X,Y,Z`: three finite numbers.
fn parse_point(s: &str) -> Result<[f64; 3], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(format!("expected X,Y,Z (three numbers), got {s:?}"));
    }
    let mut p = [0.0; 3];
    for (v, part) in p.iter_mut().zip(&parts) {
        *v = part
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{part:?} is not a finite number"))?;
    }
    Ok(p)
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
        Command::Path(args) => report(run_path(args)),
        Command::Info { navmesh, json } => report(run_info(&navmesh, json)),
        Command::Export(args) => report(run_export(args)),
        Command::Render(args) => report(run_render(args)),
        Command::View(args) => report(run_view(args)),
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

/// Prints a failure on stderr and gives its exit code.
fn report(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {:#}", failure.error);
            ExitCode::from(failure.code)
        }
    }
}

/// Opens and validates a navmesh file: a file that cannot be read is an I/O failure, one that
/// is not a sound navmesh (magic, version, length, checksum, structure, indices) bad input.
fn open_navmesh(path: &std::path::Path) -> Result<NavMeshFile, Failure> {
    NavMeshFile::open(path).map_err(|e| {
        let code = match e {
            NavMeshError::Io { .. } => exit::IO,
            _ => exit::BAD_INPUT,
        };
        Failure::new(code, anyhow::anyhow!("cannot use navmesh: {e}"))
    })
}

fn run_path(args: PathArgs) -> Result<(), Failure> {
    let file = open_navmesh(&args.navmesh)?;
    let query = Query::new(file.mesh());
    let fmt = |p: [f64; 3]| format!("({:.3}, {:.3}, {:.3})", p[0], p[1], p[2]);
    if let Some(n) = args.random_pairs {
        let mut rng = Rng::new(args.seed);
        let mut answers = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let (Some((_, a)), Some((_, b))) =
                (query.random_point(&mut rng), query.random_point(&mut rng))
            else {
                return Err(Failure::new(
                    exit::BAD_INPUT,
                    anyhow::anyhow!(
                        "{}: the navmesh has no walkable area to draw points from",
                        args.navmesh.display()
                    ),
                ));
            };
            let (from, to) = (query.to_scene(a), query.to_scene(b));
            answers.push((from, to, query.path(from, to)));
        }
        if args.json {
            let list: Vec<serde_json::Value> = answers
                .iter()
                .map(|(from, to, a)| {
                    serde_json::json!({"from": from, "to": to, "found": a.found, "length": a.length})
                })
                .collect();
            println!("{}", serde_json::Value::Array(list));
        } else {
            for (from, to, a) in &answers {
                if a.found {
                    println!("{} -> {}: {:.3} m", fmt(*from), fmt(*to), a.length);
                } else {
                    println!("{} -> {}: no path", fmt(*from), fmt(*to));
                }
            }
            let found = answers.iter().filter(|a| a.2.found).count();
            println!("{found} of {n} pairs joined (seed {})", args.seed);
        }
        return Ok(());
    }
    let (Some(from), Some(to)) = (args.from, args.to) else {
        // clap already requires --from and --to together unless --random-pairs is given.
        return Err(Failure::new(
            exit::USAGE,
            anyhow::anyhow!("give --from and --to, or --random-pairs"),
        ));
    };
    let a = query.path(from, to);
    if args.json {
        let v = serde_json::json!({"found": a.found, "length": a.length, "waypoints": a.waypoints, "links": a.links});
        println!("{v}");
    } else if a.found {
        println!(
            "path from {} to {}: {:.3} m, {} waypoints",
            fmt(from),
            fmt(to),
            a.length,
            a.waypoints.len()
        );
        for w in &a.waypoints {
            println!("  {:.3} {:.3} {:.3}", w[0], w[1], w[2]);
        }
    } else {
        println!(
            "no path from {} to {} (an end is off the mesh, or nothing joins them)",
            fmt(from),
            fmt(to)
        );
    }
    Ok(())
}

fn run_export(args: ExportArgs) -> Result<(), Failure> {
    let format = match args.format {
        Some(FormatArg::Gltf) => Format::Gltf,
        Some(FormatArg::Obj) => Format::Obj,
        None => Format::of_path(&args.out).ok_or_else(|| {
            Failure::new(
                exit::USAGE,
                anyhow::anyhow!(
                    "{}: cannot tell the format from the name: give --format gltf|obj, or name \
                     the file .glb, .gltf or .obj",
                    args.out.display()
                ),
            )
        })?,
    };
    let file = open_navmesh(&args.navmesh)?;
    let options = ExportOptions {
        detail: args.detail,
    };
    let counts = tessera_export::export_file(file.mesh(), &args.out, format, options)
        .map_err(|e| Failure::new(exit::IO, e))?;
    println!(
        "wrote {}: {} polygons as {} triangles ({}), {} vertices, {} portals, {} links",
        args.out.display(),
        counts.polygons,
        counts.triangles,
        if args.detail { "detail" } else { "fans" },
        counts.vertices,
        counts.portals,
        counts.links
    );
    Ok(())
}

/// The bake's tile edge in internal units, when the file records it.
fn tile_edge(file: &NavMeshFile) -> Option<f32> {
    let cells = file.tile_cells();
    (cells > 0).then(|| cells as f32 * file.mesh().frame.cell_size.to_native())
}

fn run_render(args: RenderArgs) -> Result<(), Failure> {
    let file = open_navmesh(&args.navmesh)?;
    let mut options = RenderOptions {
        max_size: args.max_size,
        from: args.from,
        to: args.to,
        tile: tile_edge(&file),
        ..RenderOptions::default()
    };
    let mut path_note = String::new();
    if let (Some(from), Some(to)) = (args.from, args.to) {
        let answer = Query::new(file.mesh()).path(from, to);
        path_note = if answer.found {
            format!(
                "; path {:.3} m, {} waypoints",
                answer.length,
                answer.waypoints.len()
            )
        } else {
            "; no path (an end is off the mesh, or nothing joins them)".to_string()
        };
        options.path = answer.waypoints;
    }
    let view = tessera_export::render::write_preview(file.mesh(), &options, &args.out)
        .map_err(|e| Failure::new(exit::IO, e))?;
    println!(
        "wrote {}: {} x {} px, {:.3} m per pixel{path_note}",
        args.out.display(),
        view.width,
        view.height,
        view.units_per_pixel()
    );
    Ok(())
}

fn run_view(args: ViewArgs) -> Result<(), Failure> {
    use tessera_viewer::ViewerError;
    let server =
        tessera_viewer::serve(&args.navmesh, args.scene.as_deref(), args.port).map_err(|e| {
            let code = match &e {
                ViewerError::NavMesh(NavMeshError::Io { .. }) | ViewerError::Bind { .. } => {
                    exit::IO
                }
                _ => exit::BAD_INPUT,
            };
            Failure::new(code, e)
        })?;
    // The address alone on stdout, for scripts; the rest on stderr.
    println!("{}", server.url());
    eprintln!(
        "serving {} on {} (loopback only); Ctrl-C stops",
        args.navmesh.display(),
        server.url()
    );
    server.wait();
    Ok(())
}

fn run_info(path: &std::path::Path, json: bool) -> Result<(), Failure> {
    let file = open_navmesh(path)?;
    let mesh = file.mesh();
    let query = Query::new(mesh);
    let frame = query.frame();
    // The internal box's corners in scene coordinates: a Y-up scene swaps and flips axes.
    let (lo, hi) = (
        mesh.bounds_min.map(|c| c.to_native()),
        mesh.bounds_max.map(|c| c.to_native()),
    );
    let (a, b) = (query.to_scene(lo), query.to_scene(hi));
    let min = [0, 1, 2].map(|k| a[k].min(b[k]));
    let max = [0, 1, 2].map(|k| a[k].max(b[k]));
    let stats = &mesh.stats;
    let (polygons, vertices) = (mesh.polys.len(), mesh.verts.len());
    let (regions, portals, links) = (
        stats.regions.to_native(),
        stats.portals.to_native(),
        stats.links.to_native(),
    );
    let area = stats.walkable_area.to_native();
    let notches = stats.notches.to_native();
    let by_notches = tessera_pipeline::NotchGroup::list(&stats.by_notches.to_native());
    let up = frame.up_axis().to_string();
    if json {
        let v = serde_json::json!({
            "file": path.display().to_string(),
            "file_bytes": file.len(),
            "bounds": {"min": min, "max": max},
            "up": up,
            "polygons": polygons,
            "vertices": vertices,
            "regions": regions,
            "portals": portals,
            "links": links,
            "notches": notches,
            "by_notches": by_notches,
            "walkable_area_m2": area,
            "cell_size": shortest_decimal(frame.cell_size),
            "cell_height": shortest_decimal(frame.cell_height),
            "agent": {
                "height": shortest_decimal(frame.agent_height),
                "radius": shortest_decimal(frame.agent_radius),
                "climb": shortest_decimal(frame.agent_climb),
            },
        });
        println!("{v}");
        return Ok(());
    }
    let fmt = |p: [f64; 3]| format!("({:.3}, {:.3}, {:.3})", p[0], p[1], p[2]);
    println!("navmesh {}", path.display());
    println!(
        "  bounds           {} to {} (scene coordinates, {up} up)",
        fmt(min),
        fmt(max)
    );
    println!("  polygons         {polygons} ({vertices} vertices, {regions} regions)");
    println!("  portals          {portals}, links {links}");
    println!(
        "  partition        {}",
        partition_line(polygons as u64, notches, &by_notches)
    );
    println!("  walkable area    {area:.1} m^2");
    println!(
        "  baked for        cell {} m x {} m, agent height {} m, radius {} m, climb {} m",
        frame.cell_size,
        frame.cell_height,
        frame.agent_height,
        frame.agent_radius,
        frame.agent_climb
    );
    println!("  file size        {} bytes", file.len());
    Ok(())
}

/// Cells per notch, overall and by how many notches a region has (seed 002's measure; its
/// floor plans have 15 to 106 notches each).
fn partition_line(polygons: u64, notches: u64, groups: &[tessera_pipeline::NotchGroup]) -> String {
    let ratio = |p: u64, n: u64| {
        if n == 0 {
            "-".to_string()
        } else {
            format!("{:.3}", p as f64 / n as f64)
        }
    };
    let mut by = Vec::new();
    let mut convex = 0;
    for g in groups {
        let range = match g.max_notches {
            Some(last) if last == g.min_notches => format!("{last}"),
            Some(last) => format!("{}-{last}", g.min_notches),
            None => format!("{}+", g.min_notches),
        };
        if g.min_notches == 0 {
            convex = g.regions;
        } else {
            by.push(format!("{range}: {}", ratio(g.polygons, g.notches)));
        }
    }
    format!(
        "{} cells per notch ({polygons} / {notches}); by notches per region {}; {convex} regions without a notch",
        ratio(polygons, notches),
        by.join(", ")
    )
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

    // Memory over time for the report, sampled beside the bake.
    let trace = MemoryTrace::start(Duration::from_millis(25));
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
            BakeError::Polygons { .. } | BakeError::Assembly(_) => exit::INTERNAL,
            _ => exit::IO,
        };
        Failure::new(code, e)
    })?;
    let memory = trace.finish();

    // The preview and the report, from the navmesh and the summary the bake just wrote.
    let layout = tessera_pipeline::BakeLayout::new(&out_dir);
    let (navmesh, preview, report_path) =
        (layout.navmesh(), layout.preview_png(), layout.report_html());
    let file = open_navmesh(&navmesh)?;
    // The picture stays inside the budget too: about 8 bytes a pixel while drawing, in at
    // most a quarter of it.
    let side = (((memory_budget / 4) / 8) as f64).sqrt() as u32;
    let options = RenderOptions {
        max_size: side.clamp(256, tessera_export::render::DEFAULT_MAX_SIZE),
        tile: tile_edge(&file),
        ..RenderOptions::default()
    };
    let view = tessera_export::render::write_preview(file.mesh(), &options, &preview)
        .map_err(|e| Failure::new(exit::IO, e))?;
    drop(file);
    let summary_json = serde_json::to_value(&summary).map_err(|e| Failure::new(exit::IO, e))?;
    let html = tessera_export::report::report_html(&ReportInput {
        summary: &summary_json,
        memory: &memory,
        preview: Some(tessera_pipeline::BakeLayout::PREVIEW_NAME),
    });
    tessera_export::write_atomic(&report_path, |w| w.write_all(html.as_bytes()))
        .map_err(|e| Failure::new(exit::IO, e))?;

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
        "  navmesh          {} polygons, {} vertices (+{} for height detail), {} portals, {} links, {} notches, {:.1} m^2, {:.1} MiB",
        summary.polygons,
        summary.polygon_vertices,
        summary.detail_vertices,
        summary.portals,
        summary.links,
        summary.notches,
        summary.navmesh_area_m2,
        mib(summary.navmesh_bytes)
    );
    println!(
        "  partition        {}",
        partition_line(summary.polygons, summary.notches, &summary.by_notches)
    );
    if summary.unreachable_polygons_removed > 0 {
        println!(
            "  unreachable      {} polygons in {} islands removed",
            summary.unreachable_polygons_removed, summary.unreachable_islands_removed
        );
    }
    println!(
        "  memory           peak rss {:.1} MiB, peak anon {:.1} MiB, budget {:.1} MiB, {} threads",
        mib(summary.peak_rss_bytes),
        mib(summary.peak_anon_bytes),
        mib(summary.memory_budget_bytes),
        summary.threads
    );
    // Pipeline order first, then anything a later stage added.
    const ORDER: [&str; 5] = tessera_pipeline::STAGES;
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
    println!("  navmesh file     {}", layout.navmesh().display());
    println!("  summary          {}", layout.summary_json().display());
    println!(
        "  preview          {} ({} x {} px, {:.3} m per pixel)",
        preview.display(),
        view.width,
        view.height,
        view.units_per_pixel()
    );
    println!("  report           {}", report_path.display());
    Ok(())
}
