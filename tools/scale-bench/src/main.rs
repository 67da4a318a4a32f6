//! `scale-bench`: how a bake grows with the world.
//!
//! For each citygen size (S = 250 m, M = 500 m, L = 1 km, XL = 2 km: each 4x the area of the
//! last), writes the world as OBJ, then bakes it with the `tessera` binary built beside this
//! one, in its own process, once under a fixed memory budget and once with the default budget
//! (for the cost of the cap). Reads each bake's `summary.json` (peak anonymous and total
//! resident memory as measured by the bake itself, seconds per stage) and writes a Markdown
//! table: time per km^2 and per million triangles, and how time grows with area.
//!
//! ```text
//! cargo build --release && cargo run --release -p scale-bench -- --sizes S,M,L --budget 256MiB
//! ```

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Parser)]
#[command(about = "Bake growing generated worlds under a fixed budget; record time and memory")]
struct Args {
    /// Sizes to bake, comma-separated (S, M, L, XL).
    #[arg(long, default_value = "S,M,L")]
    sizes: String,
    /// The fixed budget.
    #[arg(long, default_value = "256MiB")]
    budget: String,
    /// tessera config (file or preset).
    #[arg(long, default_value = "default")]
    config: String,
    /// Worker threads for every bake [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// citygen seed.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Folder for the generated worlds and the bakes.
    #[arg(long, default_value = "target/scale-bench")]
    work: PathBuf,
    /// Markdown file to write.
    #[arg(long, default_value = "benches/RESULTS-scale.md")]
    out: PathBuf,
}

struct Row {
    size: String,
    area_km2: f64,
    triangles: u64,
    budget: String,
    wall_s: f64,
    voxelize_s: f64,
    polygons_s: f64,
    polygons: u64,
    peak_anon_mib: f64,
    peak_rss_mib: f64,
    regions: u64,
    walkable_m2: f64,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let exe = std::env::current_exe()?;
    let tessera = exe.with_file_name("tessera");
    if !tessera.exists() {
        bail!(
            "{} not found: run `cargo build --release` first",
            tessera.display()
        );
    }
    std::fs::create_dir_all(&args.work)?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut rows = Vec::new();
    for name in args.sizes.split(',') {
        let size = citygen::Size::parse(name).with_context(|| format!("unknown size `{name}`"))?;
        let scene = args.work.join(format!(
            "city-{}-{}.obj",
            name.to_ascii_lowercase(),
            args.seed
        ));
        if !scene.exists() {
            let mesh = citygen::generate(&citygen::CityParams {
                size,
                seed: args.seed,
                offset: [0.0; 3],
            });
            let mut file = tessera_store::AtomicFile::create(&scene)?;
            citygen::write_obj(&mesh, &mut file)?;
            file.commit()?;
        }
        let area_km2 = size.extent_m() * size.extent_m() / 1e6;
        for budget in [Some(args.budget.as_str()), None] {
            let out = args
                .work
                .join(format!("bake-{name}-{}", budget.unwrap_or("default")));
            let row = bake(
                &tessera,
                &scene,
                &out,
                &args.config,
                threads,
                budget,
                name,
                area_km2,
            )?;
            eprintln!(
                "{name} budget {}: {:.2} s, peak anon {:.1} MiB",
                row.budget, row.wall_s, row.peak_anon_mib
            );
            rows.push(row);
        }
    }
    let report = report(&args, threads, &rows);
    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.out, &report)?;
    print!("{report}");
    eprintln!("written: {}", args.out.display());
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn bake(
    tessera: &Path,
    scene: &Path,
    out: &Path,
    config: &str,
    threads: usize,
    budget: Option<&str>,
    size: &str,
    area_km2: f64,
) -> Result<Row> {
    let mut cmd = Command::new(tessera);
    cmd.arg("bake")
        .arg(scene)
        .args(["--config", config, "--log-format", "quiet", "--fresh"]);
    cmd.arg("--threads")
        .arg(threads.to_string())
        .arg("--out")
        .arg(out);
    if let Some(b) = budget {
        cmd.args(["--memory-budget", b]);
    }
    let start = Instant::now();
    let status = cmd.stdout(std::process::Stdio::null()).status()?;
    let wall_s = start.elapsed().as_secs_f64();
    if !status.success() {
        bail!("bake of {} failed: {status}", scene.display());
    }
    let summary_path = tessera_pipeline::BakeLayout::new(out).summary_json();
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(summary_path)?)?;
    let mib = |k: &str| s[k].as_u64().unwrap_or(0) as f64 / (1024.0 * 1024.0);
    Ok(Row {
        size: size.to_string(),
        area_km2,
        triangles: s["triangles"].as_u64().unwrap_or(0),
        budget: match budget {
            Some(b) => b.to_string(),
            None => format!("default ({:.0} MiB)", mib("memory_budget_bytes")),
        },
        wall_s,
        // Voxelize and the merge beside it (the summary counts them apart).
        voxelize_s: ["voxelize", "merge"]
            .iter()
            .map(|k| s["seconds"][*k].as_f64().unwrap_or(0.0))
            .sum(),
        polygons_s: s["seconds"]["polygons"].as_f64().unwrap_or(0.0),
        polygons: s["polygons"].as_u64().unwrap_or(0),
        peak_anon_mib: mib("peak_anon_bytes"),
        peak_rss_mib: mib("peak_rss_bytes"),
        regions: s["regions"].as_u64().unwrap_or(0),
        walkable_m2: s["walkable_area_m2"].as_f64().unwrap_or(0.0),
    })
}

fn report(args: &Args, threads: usize, rows: &[Row]) -> String {
    let mut r = String::new();
    let _ = writeln!(r, "# Scale: bake time and memory against world area\n");
    let _ = writeln!(
        r,
        "Written by `cargo run --release -p scale-bench -- --sizes {} --budget {}` (tools/scale-bench). \
         Measured {} on {} cores; {threads} worker threads; config `{}`; citygen seed {}. Each bake runs in its own \
         process; peak memory is what the bake measured in itself (`/proc/self/status`: `RssAnon` sampled every 5 ms, \
         and `VmHWM`). Bakes start fresh (no checkpoint reuse).\n",
        args.sizes,
        args.budget,
        today(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        args.config,
        args.seed
    );
    let _ = writeln!(
        r,
        "| size | area km^2 | triangles | budget | wall s | voxelize+regions s | polygons s | s per km^2 | s per Mtri | peak anon MiB | peak RSS MiB | regions | polygons | walkable m^2 |"
    );
    let _ = writeln!(
        r,
        "|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    for row in rows {
        let _ = writeln!(
            r,
            "| {} | {:.4} | {} | {} | {:.2} | {:.2} | {:.2} | {:.1} | {:.2} | {:.1} | {:.1} | {} | {} | {:.0} |",
            row.size,
            row.area_km2,
            row.triangles,
            row.budget,
            row.wall_s,
            row.voxelize_s,
            row.polygons_s,
            row.wall_s / row.area_km2,
            row.wall_s / (row.triangles as f64 / 1e6),
            row.peak_anon_mib,
            row.peak_rss_mib,
            row.regions,
            row.polygons,
            row.walkable_m2
        );
    }
    // Growth of time with area under the fixed budget: 1.0 per 4x area is linear.
    let capped: Vec<&Row> = rows
        .iter()
        .filter(|row| row.budget == args.budget)
        .collect();
    if capped.len() > 1 {
        let _ = writeln!(
            r,
            "\nUnder the {} budget, each step is 4x the area:\n",
            args.budget
        );
        for w in capped.windows(2) {
            let _ = writeln!(
                r,
                "- {} -> {}: time x{:.2} for area x{:.0} (linear would be x{:.0}); peak anon {:.1} -> {:.1} MiB",
                w[0].size,
                w[1].size,
                w[1].wall_s / w[0].wall_s,
                w[1].area_km2 / w[0].area_km2,
                w[1].area_km2 / w[0].area_km2,
                w[0].peak_anon_mib,
                w[1].peak_anon_mib
            );
        }
    }
    r
}

/// Today's date (UTC) from the system clock, as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
