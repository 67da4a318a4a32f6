//! `tessera bake`: a scene (or the generated demo world) baked into a bake folder, then the
//! preview image and the HTML report written beside its navmesh, then the summary printed.
//!
//! [`bake`] is the same bake without the printing, for programs that embed tessera (the C
//! API, the Python package): they describe it with the command line's own arguments
//! ([`Args::parse`]) and watch and stop it through [`Hooks`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::ValueEnum;
use tessera_budget::PeakSampler;
use tessera_config::BakeConfig;
use tessera_distributed::{Cluster, ClusterError, PeerReport};
use tessera_export::report::ReportInput;
use tessera_export::{PlanView, RenderOptions};
use tessera_geom::UpAxis;
use tessera_pipeline::{
    BakeError, BakeLayout, BakeRequest, BakeSummary, LogFormat, PeerRequest, Progress, SceneInput,
};

use crate::exit::{self, Failure};

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
pub struct Args {
    /// Scene files (.obj, .gltf, .glb), baked as one scene in the order given; each keeps a
    /// cache of its own, so a bake after one changed reads only that one again. Omit (and
    /// give no --scene-list) to bake the built-in demo world.
    scene: Vec<PathBuf>,
    /// A file listing scene files, one path a line (relative to the list's folder; blank
    /// lines and lines starting with # skipped), baked after those given as arguments.
    #[arg(long, value_name = "FILE")]
    scene_list: Option<PathBuf>,
    /// Config file, or a preset: default, def, S2, S3, S4, S5, recast-demo.
    #[arg(long, short, default_value = "default")]
    config: String,
    /// Output folder [default: tessera-out/<scene name>].
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Tile edge in cells, or auto (overrides the config's voxel.tile_size).
    #[arg(long, allow_negative_numbers = true)]
    tile_size: Option<tessera_config::TileSize>,
    /// Worker threads, 1 to 4096 [default: the machine's cores]; a small memory budget runs
    /// fewer (an eighth of it for their stacks, a MiB each).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096), allow_negative_numbers = true)]
    threads: Option<u32>,
    /// Memory budget, e.g. 256MiB, 2GiB [default: half the available memory].
    #[arg(long, value_parser = tessera_config::parse_size, allow_negative_numbers = true)]
    memory_budget: Option<u64>,
    /// Up axis of the scene [default: z for OBJ, y for glTF].
    #[arg(long, value_enum)]
    up: Option<Up>,
    /// Progress output on stderr: bars on a terminal (auto), plain lines, JSON lines, or none.
    #[arg(long, value_enum, default_value = "auto")]
    log_format: LogArg,
    /// Seed of the generated demo world (when no scene is given).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    demo_seed: u64,
    /// Ignore (and remove) existing checkpoints: bake everything again.
    #[arg(long)]
    fresh: bool,
    /// When another bake works in the output folder, wait for it instead of exiting (75).
    #[arg(long)]
    wait_lock: bool,
    /// Bake across processes (machines): a hostfile (one host:port a line, process I listens
    /// on line I; every process sees the same scene and output folder), or `slurm` (from
    /// SLURM_PROCID, SLURM_NTASKS and SLURM_JOB_NODELIST, ports from --base-port).
    #[arg(long, value_name = "HOSTFILE|slurm")]
    cluster: Option<String>,
    /// This process's index in the hostfile (with --cluster HOSTFILE).
    #[arg(long, value_name = "I", allow_negative_numbers = true)]
    process: Option<usize>,
    /// Seconds to wait for every process to answer before giving up (exit 7).
    #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = seconds, allow_negative_numbers = true)]
    startup_timeout: f64,
    /// With --cluster slurm: the first port a task listens on (the next tasks of a node take
    /// the next ports).
    #[arg(long, default_value_t = 7800, allow_negative_numbers = true)]
    base_port: u16,
}

impl Args {
    /// A bake logging JSON lines reports its failure as one more JSON line.
    pub fn failure_style(&self) -> exit::Style {
        match self.log_format {
            LogArg::Json => exit::Style::Json(self.process_index()),
            _ => exit::Style::Text,
        }
    }
}

/// `tessera bake`'s arguments as a command of their own, for [`Args::parse`].
#[derive(clap::Parser)]
#[command(name = "tessera bake", no_binary_name = true)]
struct BakeCommand {
    #[command(flatten)]
    args: Args,
}

impl Args {
    /// The arguments of `tessera bake` (without those two words), checked as the command line
    /// checks them; a bad one is a usage failure whose message names the option.
    pub fn parse<I, T>(args: I) -> Result<Args, Failure>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        use clap::Parser;
        BakeCommand::try_parse_from(args)
            .map(|c| c.args)
            .map_err(|e| {
                // clap's text ends with a hint about --help, which means nothing to a caller.
                let text = e.to_string();
                let first = text.lines().next().unwrap_or_default();
                let message = first.strip_prefix("error: ").unwrap_or(first).to_string();
                Failure::new(exit::USAGE, anyhow::anyhow!(message))
            })
    }
}

/// What a program embedding the bake sets instead of the command line's ways.
#[derive(Default)]
pub struct Hooks {
    /// Where progress goes; `None`: the reporter `--log-format` asks for, on stderr.
    pub progress: Option<Progress>,
    /// The flag that stops the bake at its next safe point (exit code 130, checkpoints
    /// intact); `None`: one that SIGINT and SIGTERM raise, as on the command line.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// What a finished [`bake`] did.
pub enum Outcome {
    /// A bake folder made (or brought up to date) by this process.
    Baked(Box<Baked>),
    /// This process (not process 0) of a distributed bake did its share.
    Peer {
        index: usize,
        processes: usize,
        report: PeerReport,
    },
}

/// A bake folder with its outputs.
pub struct Baked {
    pub summary: BakeSummary,
    pub out_dir: PathBuf,
    pub preview: PathBuf,
    pub preview_view: PlanView,
    pub report: PathBuf,
    /// In a distributed bake: the processes, and the bytes of finished tiles received.
    pub received: Option<(usize, u64)>,
}

impl Args {
    /// This process's index in a distributed bake, as far as the arguments tell it.
    fn process_index(&self) -> Option<u32> {
        match self.cluster.as_deref() {
            None => None,
            Some("slurm") => std::env::var("SLURM_PROCID").ok()?.parse().ok(),
            Some(_) => self.process.map(|p| p as u32),
        }
    }

    /// The processes of a distributed bake, if asked for.
    fn cluster(&self) -> Result<Option<Cluster>, Failure> {
        let usage = |e: ClusterError| Failure::new(exit::USAGE, e);
        let Some(source) = self.cluster.as_deref() else {
            if self.process.is_some() {
                return Err(Failure::new(
                    exit::USAGE,
                    anyhow::anyhow!("--process needs --cluster"),
                ));
            }
            return Ok(None);
        };
        if source == "slurm" {
            let env = |name: &str| std::env::var(name).ok();
            return Cluster::from_slurm(&env, self.base_port)
                .map(Some)
                .map_err(usage);
        }
        let index = self.process.ok_or_else(|| {
            Failure::new(
                exit::USAGE,
                anyhow::anyhow!("--cluster {source} needs --process I (this process's line)"),
            )
        })?;
        let text = std::fs::read_to_string(source)
            .map_err(|e| Failure::new(exit::USAGE, anyhow::anyhow!("{source}: {e}")))?;
        Cluster::from_hostfile(&text, index)
            .map(Some)
            .map_err(usage)
    }
}

/// A timeout in seconds: a positive number of at most a day (NaN, infinities, zero and
/// negative numbers said as such, where a `Duration` could not be made of them).
fn seconds(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(v)
    } else {
        Err(format!(
            "{text} is out of range (more than 0, at most 86400 seconds)"
        ))
    }
}

/// The exit code of a failed bake.
fn bake_failure(e: BakeError) -> Failure {
    let code = match &e {
        BakeError::Input(e) if e.is_io_failure() => exit::IO,
        BakeError::Input(_) | BakeError::NoWalkable(_) | BakeError::TooLarge(_) => exit::BAD_INPUT,
        BakeError::Config(_) => exit::BAD_CONFIG,
        BakeError::OverBudget(_) => exit::OVER_BUDGET,
        BakeError::Interrupted => exit::INTERRUPTED,
        BakeError::Polygons { .. } | BakeError::Assembly(_) => exit::INTERNAL,
        BakeError::Cluster(_) => tessera_distributed::EXIT_CLUSTER,
        // Io, Corrupt, DiskSpace, ThreadPool: the machine, not the scene.
        _ => exit::IO,
    };
    Failure::new(code, e)
}

/// The exit code of a failed distributed bake.
fn cluster_failure(e: ClusterError) -> Failure {
    match e {
        ClusterError::Bake(e) => bake_failure(e),
        ClusterError::Config(_) => Failure::new(exit::USAGE, e),
        ClusterError::Panicked(_) => Failure::new(exit::INTERNAL, e),
        e => Failure::new(tessera_distributed::EXIT_CLUSTER, e),
    }
}

pub fn run(args: Args) -> Result<(), Failure> {
    let baked = match bake(args, Hooks::default())? {
        Outcome::Baked(baked) => baked,
        Outcome::Peer {
            index,
            processes,
            report,
        } => {
            return crate::out::print(|w| {
                writeln!(
                    w,
                    "process {index} of {processes}: {} scene files read, {} triangles of a scene file \
                     read, {} tiles voxelized and sent to process 0 ({} bytes, {} border links \
                     matched here, {} of them unions), {} regions polygonized ({} of them kept \
                     from the last bake)",
                    report.files,
                    report.triangles,
                    report.tiles,
                    report.sent_bytes,
                    report.matched_links,
                    report.unions,
                    report.regions,
                    report.regions_reused
                )?;
                Ok(())
            })
        }
    };
    let outputs = crate::summary::Outputs {
        dir: &baked.out_dir,
        preview: &baked.preview,
        preview_view: &baked.preview_view,
        report: &baked.report,
    };
    crate::out::print(|w| {
        crate::summary::print_bake(w, &baked.summary, &outputs)?;
        if let Some((processes, bytes)) = baked.received {
            writeln!(
                w,
                "distributed over {processes} processes: {bytes} bytes of finished tiles received"
            )?;
        }
        Ok(())
    })
}

/// `tessera bake` without the printing: the bake, then the preview and the report (or, in a
/// process other than 0 of a distributed bake, its share of the tiles).
pub fn bake(args: Args, hooks: Hooks) -> Result<Outcome, Failure> {
    let mut config =
        BakeConfig::load(&args.config).map_err(|e| Failure::new(exit::BAD_CONFIG, e))?;
    if let Some(ts) = args.tile_size {
        config.voxel.tile_size = ts;
    }
    config
        .validate(&format!("{} (with command-line overrides)", args.config))
        .map_err(|e| Failure::new(exit::BAD_CONFIG, e))?;

    let (scene, default_name) = scene(&args)?;
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("tessera-out").join(default_name));
    let threads = args
        .threads
        .map(|n| n as usize)
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
    let cluster = args.cluster()?;
    let startup_timeout = std::time::Duration::from_secs_f64(args.startup_timeout);
    let progress = hooks.progress.unwrap_or_else(|| {
        Progress::of_process(log_format, cluster.as_ref().map(|c| c.index as u32))
    });

    // One bake at a time in a folder, taken before anything in it is touched. The processes
    // of a distributed bake other than 0 write nothing there: each takes a lock of its own.
    let peer = cluster.as_ref().filter(|c| c.index > 0);
    let _lock = match peer {
        Some(c) => crate::lock::lock_process(&out_dir, c.index, args.wait_lock)?,
        None => crate::lock::lock(&out_dir, args.wait_lock)?,
    };
    let interrupt = match hooks.interrupt {
        Some(flag) => flag,
        None => interrupt_on_signals()?,
    };
    if let Some(cluster) = peer {
        let report = tessera_distributed::run_peer(
            cluster,
            startup_timeout,
            PeerRequest {
                config,
                out_dir,
                threads,
                memory_budget,
                progress,
                interrupt: Some(interrupt),
                tiles_key: 0,
                tiles: Vec::new(),
                bin_parts: 0,
                agent: 0,
            },
        )
        .map_err(cluster_failure)?;
        return Ok(Outcome::Peer {
            index: cluster.index,
            processes: cluster.processes(),
            report,
        });
    }
    if args.fresh {
        let work = BakeLayout::new(&out_dir).work();
        if let Err(e) = std::fs::remove_dir_all(&work) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(Failure::new(
                    exit::IO,
                    anyhow::anyhow!("{}: {e}", work.display()),
                ));
            }
        }
    }
    // One sampler for the bake's peaks and the report's memory over time.
    let sampler = Arc::new(PeakSampler::with_trace(tessera_pipeline::SAMPLE_EVERY));
    let request = BakeRequest {
        scene,
        config,
        out_dir: out_dir.clone(),
        threads,
        memory_budget,
        progress: progress.clone(),
        interrupt: Some(interrupt),
        sampler: Some(Arc::clone(&sampler)),
    };
    let (summary, received) = match &cluster {
        Some(cluster) => tessera_distributed::run_process0(cluster, startup_timeout, request)
            .map(|(summary, received)| (summary, Some((cluster.processes(), received))))
            .map_err(cluster_failure)?,
        None => (tessera_pipeline::bake(request).map_err(bake_failure)?, None),
    };
    let memory = Arc::into_inner(sampler)
        .expect("the bake keeps no handle on the sampler once it returns")
        .finish()
        .trace;

    // The preview and the report, from the navmesh and the summary the bake just wrote (on a
    // large world, reading the file back and drawing it take a while: they say so).
    progress.stage_start(PREVIEW_STAGE, 0);
    progress.phase(PREVIEW_STAGE, "checking the navmesh file", 0);
    let layout = BakeLayout::new(&out_dir);
    let (navmesh, preview, report_path) =
        (layout.navmesh(), layout.preview_png(), layout.report_html());
    let file = crate::navmesh::open(&navmesh)?;
    progress.phase(PREVIEW_STAGE, "drawing the preview", 0);
    // The picture stays inside the budget too: about 8 bytes a pixel while drawing, in at
    // most a quarter of it.
    let side = (((memory_budget / 4) / 8) as f64).sqrt() as u32;
    let options = RenderOptions {
        max_size: side.clamp(256, tessera_export::render::DEFAULT_MAX_SIZE),
        pixels_per_cell: tessera_export::render::PREVIEW_PIXELS_PER_CELL,
        tile: file.tile_edge(),
        ..RenderOptions::default()
    };
    // Drawn in bands of rows on the bake's threads, no more.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("preview-{i}"))
        .build()
        .map_err(|e| Failure::new(exit::IO, anyhow::anyhow!("cannot start threads: {e}")))?;
    let view = pool
        .install(|| tessera_export::render::write_preview(file.mesh(), &options, &preview))
        .map_err(|e| Failure::new(exit::IO, e))?;
    drop(file);
    let summary_json = serde_json::to_value(&summary).map_err(|e| Failure::new(exit::IO, e))?;
    let html = tessera_export::report::report_html(&ReportInput {
        summary: &summary_json,
        memory: &memory,
        preview: Some(BakeLayout::PREVIEW_NAME),
        stages: &tessera_pipeline::STAGES,
    });
    tessera_export::write_atomic(&report_path, |w| w.write_all(html.as_bytes()))
        .map_err(|e| Failure::new(exit::IO, e))?;
    progress.stage_done(PREVIEW_STAGE, 0);

    Ok(Outcome::Baked(Box::new(Baked {
        summary,
        out_dir,
        preview,
        preview_view: view,
        report: report_path,
        received,
    })))
}

/// The log's name for what follows the bake: the navmesh read back, the preview and the report.
const PREVIEW_STAGE: &str = "preview";

/// SIGINT and SIGTERM ask the bake to stop at its next safe point.
fn interrupt_on_signals() -> Result<Arc<AtomicBool>, Failure> {
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&interrupt)).map_err(|e| {
            Failure::new(
                exit::IO,
                anyhow::anyhow!("cannot install a signal handler: {e}"),
            )
        })?;
    }
    Ok(interrupt)
}

/// The files of `--scene-list FILE`: one path a line, relative to the list's folder; blank
/// lines and `#` comments skipped. A missing or unreadable list is bad input (exit 3).
fn scene_list(list: &Path) -> Result<Vec<PathBuf>, Failure> {
    let text = std::fs::read_to_string(list).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            exit::BAD_INPUT
        } else {
            exit::IO
        };
        Failure::new(code, anyhow::anyhow!("{}: {e}", list.display()))
    })?;
    let base = list.parent().unwrap_or(Path::new(""));
    let files: Vec<PathBuf> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| base.join(l))
        .collect();
    if files.is_empty() {
        return Err(Failure::new(
            exit::BAD_INPUT,
            anyhow::anyhow!("{}: lists no scene file", list.display()),
        ));
    }
    Ok(files)
}

/// What to bake, and the output folder's default name: the scene files, or the demo world.
fn scene(args: &Args) -> Result<(SceneInput, String), Failure> {
    let mut paths = args.scene.clone();
    if let Some(list) = &args.scene_list {
        paths.extend(scene_list(list)?);
    }
    let up = args.up.map(|u| match u {
        Up::Y => UpAxis::Y,
        Up::Z => UpAxis::Z,
    });
    let stem = |p: &Path| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scene".into())
    };
    Ok(match paths.len() {
        1 => {
            let path = paths.swap_remove(0);
            let name = stem(&path);
            (SceneInput::File { path, up }, name)
        }
        2.. => {
            // The folder is named by the list, else by the first file.
            let name = args
                .scene_list
                .as_deref()
                .map_or_else(|| stem(&paths[0]), stem);
            (SceneInput::Files { paths, up }, name)
        }
        0 => {
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
    })
}
