//! `ingest-throughput`: how fast tessera turns a large OBJ into its scene cache, in MB/s.
//!
//! ```text
//! ingest-throughput [--triangles N] [--seed S] [--repeat N] [--dir DIR] [--out FILE]
//! ```
//!
//! Writes a seeded synthetic terrain OBJ (default about 2.5 million triangles, some 220 MB) into a
//! temporary folder (or `--dir`), then times, best of `--repeat` (3):
//!
//! * key: `SourceKey::of_file` (xxh3 of the whole file, as a bake does first);
//! * pass 1: `tessera_ingest::open_scene` (maps the file, parses the `v` lines into the vertex
//!   table);
//! * pass 2: `cache::build_cache` (parses the `f` lines, rebases, writes and fsyncs the cache).
//!
//! Throughput is file bytes (MB = 10^6 bytes) over pass 1 + pass 2, per wall second and per CPU
//! second (the process's CPU time over all its threads, from /proc), against the aim of
//! 200 MB/s per core. The file was just written, so it is read from the page cache: this measures
//! parsing, not the disk. Prints a Markdown row and writes `benches/RESULTS-ingest.md`.

mod synth;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tessera_geom::UpAxis;
use tessera_ingest::cache::{build_cache, SourceKey};

/// The aim for OBJ parsing, per core [MB/s].
const AIM_MB_PER_CORE: f64 = 200.0;

const USAGE: &str =
    "usage: ingest-throughput [--triangles N] [--seed S] [--repeat N] [--dir DIR] [--out FILE]";

fn main() {
    if let Err(e) = run(std::env::args().skip(1).collect()) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// CPU time of this process so far, all threads: the sum of each task's time on CPU
/// (`/proc/self/task/*/schedstat`, nanoseconds). None where /proc does not have it.
fn cpu_time() -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let text = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// Wall and CPU time of one step.
#[derive(Clone, Copy, Debug)]
struct Timing {
    wall: Duration,
    cpu: Option<Duration>,
}

impl Timing {
    fn measure<T>(f: impl FnOnce() -> T) -> (T, Timing) {
        let cpu0 = cpu_time();
        let t0 = Instant::now();
        let out = f();
        let wall = t0.elapsed();
        let cpu = match (cpu0, cpu_time()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        (out, Timing { wall, cpu })
    }

    fn plus(self, o: Timing) -> Timing {
        Timing {
            wall: self.wall + o.wall,
            cpu: self.cpu.zip(o.cpu).map(|(a, b)| a + b),
        }
    }
}

/// One repetition: key, pass 1, pass 2.
#[derive(Clone, Copy, Debug)]
struct Run {
    key: Timing,
    pass1: Timing,
    pass2: Timing,
    triangles: u64,
    degenerate: u64,
}

impl Run {
    fn total(&self) -> Timing {
        self.pass1.plus(self.pass2)
    }
}

fn ingest_once(obj: &Path, work: &Path) -> Result<Run, Box<dyn Error>> {
    let scratch = tempfile::tempdir_in(work)?;
    let (key, key_t) = Timing::measure(|| SourceKey::of_file(obj, UpAxis::Z, &Default::default()));
    let key = key?;
    let (source, pass1) = Timing::measure(|| {
        tessera_ingest::open_scene(obj, UpAxis::Z, &scratch.path().join("scratch"))
    });
    let mut source = source?;
    let cache = scratch.path().join("scene.cache");
    let (stats, pass2) = Timing::measure(|| build_cache(source.as_mut(), key, &cache));
    let (stats, _) = stats?;
    drop(source);
    Ok(Run {
        key: key_t,
        pass1,
        pass2,
        triangles: stats.triangles,
        degenerate: stats.degenerate,
    })
}

fn run(args: Vec<String>) -> Result<(), Box<dyn Error>> {
    let mut triangles: u64 = 2_500_000;
    let mut seed: u64 = 20_240_601;
    let mut repeat: usize = 3;
    let mut dir: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--triangles" => triangles = value()?.parse()?,
            "--seed" => seed = value()?.parse()?,
            "--repeat" => repeat = value()?.parse::<usize>()?.max(1),
            "--dir" => dir = Some(PathBuf::from(value()?)),
            "--out" => out = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unexpected argument `{other}`\n{USAGE}").into()),
        }
    }
    let out =
        out.unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../RESULTS-ingest.md"));

    // The folder for the OBJ, the vertex tables and the caches.
    let temp;
    let work: &Path = match &dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d
        }
        None => {
            temp = tempfile::tempdir()?;
            temp.path()
        }
    };
    let side = ((triangles as f64 / 2.0).sqrt().ceil() as u32 + 1).max(2);
    let obj = work.join("terrain.obj");
    let t = Instant::now();
    let written = synth::write_terrain(&obj, side, seed)?;
    eprintln!(
        "wrote {} ({:.1} MB, {} vertices, {} face lines, {} triangles) in {:.1} s",
        obj.display(),
        written.bytes as f64 / 1e6,
        written.vertices,
        written.face_lines,
        written.triangles,
        t.elapsed().as_secs_f64()
    );

    let mut best: Option<Run> = None;
    for r in 0..repeat {
        let run = ingest_once(&obj, work)?;
        if run.triangles != written.triangles || run.degenerate != 0 {
            return Err(format!(
                "ingest found {} triangles ({} degenerate), the file has {}",
                run.triangles, run.degenerate, written.triangles
            )
            .into());
        }
        eprintln!(
            "run {}: key {:.3} s, pass 1 {:.3} s, pass 2 {:.3} s",
            r + 1,
            run.key.wall.as_secs_f64(),
            run.pass1.wall.as_secs_f64(),
            run.pass2.wall.as_secs_f64()
        );
        best = Some(match best {
            Some(b) if b.total().wall <= run.total().wall => b,
            _ => run,
        });
    }
    let best = best.expect("at least one run");

    let mb = written.bytes as f64 / 1e6;
    let total = best.total();
    let wall = total.wall.as_secs_f64();
    let per_core = total.cpu.map(|c| mb / c.as_secs_f64());
    let mb_s = mb / wall;
    let row = format!(
        "| {} | {:.1} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} | {} | {:.2} | {:.0} / {:.0} | {} |",
        utc_date(),
        mb,
        written.triangles,
        best.key.wall.as_secs_f64(),
        best.pass1.wall.as_secs_f64(),
        best.pass2.wall.as_secs_f64(),
        wall,
        mb_s,
        per_core.map_or("n/a".to_string(), |v| format!("{v:.0}")),
        written.triangles as f64 / wall / 1e6,
        mb / best.pass1.wall.as_secs_f64(),
        mb / best.pass2.wall.as_secs_f64(),
        aim_verdict(per_core, mb_s)
    );
    let header = "| date | OBJ MB | triangles | key (xxh3) s | pass 1 s | pass 2 s | pass 1 + 2 s | MB/s | MB/s per core | Mtri/s | MB/s pass 1 / pass 2 | aim 200 MB/s per core |\n\
                  |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--|";
    println!("{header}");
    println!("{row}");

    let cpu_note = match (total.cpu, per_core) {
        (Some(c), Some(_)) => format!(
            "CPU time over pass 1 + 2: {:.3} s for {:.3} s of wall time ({:.2} cores busy).",
            c.as_secs_f64(),
            wall,
            c.as_secs_f64() / wall
        ),
        _ => "CPU time not available (no /proc): MB/s per core is not shown.".to_string(),
    };
    let text = format!(
        "# OBJ ingest throughput\n\n\
         Written by `cargo run --release --manifest-path benches/ingest-throughput/Cargo.toml`; see \
         `benches/ingest-throughput/README.md`.\n\n\
         Measured {}.\n\n\
         Input: synthetic terrain, seed {seed}, {side} x {side} vertices at UTM-like coordinates \
         (`v 512345.6789 5712345.6789 123.4567`), with `vt` and `vn` per vertex, faces in the forms \
         `i`, `i/t`, `i//n`, `i/t/n` (5% relative), 25% of cells as quads; {} bytes, {} face lines, \
         {} triangles. Best of {repeat} by pass 1 + pass 2; the file is in the page cache.\n\n\
         Pass 1 is `open_scene` (vertex table), pass 2 `build_cache` (faces, rebasing, writing and \
         fsyncing the cache); the key (xxh3 of the file) is shown apart and not in MB/s. MB = 10^6 \
         bytes of OBJ. {cpu_note}\n\n{header}\n{row}\n",
        stamp(),
        written.bytes,
        written.face_lines,
        written.triangles
    );
    // The sections a person added below the tool's own part (`## ...`) are kept.
    let kept = std::fs::read_to_string(&out)
        .ok()
        .and_then(|old| old.find("\n## ").map(|at| old[at..].to_string()))
        .unwrap_or_default();
    std::fs::write(&out, text + &kept).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("written: {}", out.display());
    Ok(())
}

/// The aim, judged both ways: per CPU second over all threads (per core) and per wall second
/// (the parse runs on every core, and this also counts waiting on I/O, such as the cache's fsync).
fn aim_verdict(per_cpu: Option<f64>, per_wall: f64) -> String {
    let judge = |v: f64| {
        let mark = if v >= AIM_MB_PER_CORE {
            "met"
        } else {
            "missed"
        };
        format!("{mark}, {:.0}%", v / AIM_MB_PER_CORE * 100.0)
    };
    match per_cpu {
        Some(c) => format!("CPU: {}; wall: {}", judge(c), judge(per_wall)),
        None => format!("wall: {}", judge(per_wall)),
    }
}

/// Today's UTC date, `YYYY-MM-DD` (days-to-civil-date conversion, eras of 400 years).
fn utc_date() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The tessera commit measured, flagged when `crates/` has uncommitted changes (read-only git
/// queries).
fn revision() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(head)
            if git(&["status", "--porcelain", "--", "crates"]).is_some_and(|s| !s.is_empty()) =>
        {
            format!("tessera {head} + uncommitted changes in crates/")
        }
        Some(head) => format!("tessera {head}"),
        None => "tessera (revision unknown)".to_string(),
    }
}

/// Date, machine, compiler and revision.
fn stamp() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    format!(
        "{} UTC; {cores} cores ({cpu}); {}; {}",
        utc_date(),
        env!("BENCH_RUSTC_VERSION"),
        revision()
    )
}
