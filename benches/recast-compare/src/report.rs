//! Markdown output: the comparison table, the per-step breakdown, and the stamped results file.

use crate::compare::{RECAST_STAGES, STAGES, TESSERA_STAGES};
use crate::scene::Settings;
use crate::SceneResult;
use std::time::{SystemTime, UNIX_EPOCH};

pub fn settings_line(s: &Settings, repeat: usize) -> String {
    format!(
        "Settings: cell {} m, cell height {} m, tile {} cells, agent height {} m, radius {} m, \
         climb {} m, slope {} deg; single thread; best of {repeat}.",
        s.cell_size,
        s.cell_height,
        s.tile_size,
        s.agent_height,
        s.agent_radius,
        s.max_climb,
        s.max_slope
    )
}

pub fn table_header() -> String {
    "| scene | tiles | triangles | placed in tiles | columns (M) | tessera s | Recast s | \
     tessera / Recast | tessera Mtri/s | Recast Mtri/s | tessera Mcol/s | Recast Mcol/s | \
     spans tessera / Recast | walkable tessera / Recast |\n\
     |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        .to_string()
}

/// Millions of things (placed triangles, columns) per second.
fn millions_per_s(n: u64, secs: f64) -> f64 {
    n as f64 / secs / 1e6
}

pub fn table_row(r: &SceneResult) -> String {
    let (t, rc) = (r.tessera.as_secs_f64(), r.recast.as_secs_f64());
    format!(
        "| {} | {} | {} | {} | {:.2} | {:.3} | {:.3} | {:.2} | {:.3} | {:.3} | {:.1} | {:.1} | {} / {} | {} / {} |",
        r.name,
        r.tiles,
        r.triangles,
        r.placements,
        r.cells as f64 / 1e6,
        t,
        rc,
        t / rc,
        millions_per_s(r.placements, t),
        millions_per_s(r.placements, rc),
        millions_per_s(r.cells, t),
        millions_per_s(r.cells, rc),
        r.tessera_counts.spans,
        r.recast_counts.spans,
        r.tessera_counts.walkable,
        r.recast_counts.walkable,
    )
}

/// Per-step seconds (best per step over the repeats, summed over tiles).
pub fn stage_table(r: &SceneResult) -> String {
    let mut s = format!(
        "Steps for {} (seconds summed over tiles, best per step):\n\n\
         | tessera step | s | Recast step | s |\n|---|--:|---|--:|\n",
        r.name
    );
    let cell = |name: &str, d: std::time::Duration| {
        if name == "-" {
            ("-".to_string(), "-".to_string())
        } else {
            (name.to_string(), format!("{:.4}", d.as_secs_f64()))
        }
    };
    for i in 0..STAGES {
        let (tn, tv) = cell(TESSERA_STAGES[i], r.tessera_stages.0[i]);
        let (rn, rv) = cell(RECAST_STAGES[i], r.recast_stages.0[i]);
        s += &format!("| {tn} | {tv} | {rn} | {rv} |\n");
    }
    s += &format!(
        "| **sum** | **{:.4}** | **sum** | **{:.4}** |",
        r.tessera_stages.total().as_secs_f64(),
        r.recast_stages.total().as_secs_f64()
    );
    s
}

/// The sanity check: spans and walkable spans over core columns, before and after erosion.
pub fn counts_table(results: &[SceneResult]) -> String {
    let mut s = String::from(
        "Span counts over core columns (sum over tiles):\n\n\
         | scene | spans tessera | spans Recast | walkable after filters tessera | Recast | \
         walkable after erosion tessera | Recast | Recast, floors of either winding |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in results {
        let (t, c) = (&r.tessera_counts, &r.recast_counts);
        let pct = |a: u64, b: u64| {
            if b == 0 {
                String::new()
            } else {
                format!(" ({:+.1}%)", (a as f64 - b as f64) / b as f64 * 100.0)
            }
        };
        s += &format!(
            "| {} | {}{} | {} | {}{} | {} | {}{} | {} | {}{} |\n",
            r.name,
            t.spans,
            pct(t.spans, c.spans),
            c.spans,
            t.walkable_filtered,
            pct(t.walkable_filtered, c.walkable_filtered),
            c.walkable_filtered,
            t.walkable,
            pct(t.walkable, c.walkable),
            c.walkable,
            r.recast_both_counts.walkable,
            pct(r.recast_both_counts.walkable, c.walkable),
        );
    }
    s.pop();
    s
}

/// UTC date `YYYY-MM-DD` of a Unix time, by the days-to-civil-date conversion (proleptic
/// Gregorian calendar, eras of 400 years).
fn utc_date(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64 + 719_468; // days since 0000-03-01
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153; // month counted from March
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + if month <= 2 { 1 } else { 0 };
    format!("{year:04}-{month:02}-{day:02}")
}

/// UTC date and time `YYYY-MM-DD HH:MM` of a Unix time.
pub fn utc_date_time(unix_secs: u64) -> String {
    let secs = unix_secs % 86_400;
    format!(
        "{} {:02}:{:02}",
        utc_date(unix_secs),
        secs / 3600,
        secs % 3600 / 60
    )
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

/// The tessera revision measured: the commit, and whether `crates/` had uncommitted changes
/// (read-only git queries; "unknown" outside a git checkout).
fn revision() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
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
        Some(head) => {
            let dirty =
                git(&["status", "--porcelain", "--", "crates"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("tessera {head} + uncommitted changes in crates/")
            } else {
                format!("tessera {head}")
            }
        }
        None => "tessera (revision unknown)".to_string(),
    }
}

/// A stamp: date, machine, compiler, revision. Take it before measuring: the revision is read
/// from the working tree, which should be the one the binary was built from.
pub fn stamp() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!(
        "{} UTC; {cores} cores ({}); {}; {}; Recast 1.6.0 (recastnavigation-sys 1.0.3, cmake Release, -O3)",
        utc_date(now),
        cpu_model(),
        env!("BENCH_RUSTC_VERSION"),
        revision()
    )
}

/// The whole results file; `stamp` as from [`stamp`], taken when the run started.
pub fn results_file(
    settings: &Settings,
    repeat: usize,
    results: &[SceneResult],
    stamp: &str,
) -> String {
    let mut s = String::from(
        "# Voxelization: tessera vs Recast, same tiles\n\n\
         Written by `cargo run --release --manifest-path benches/recast-compare/Cargo.toml -- all`; \
         see `benches/recast-compare/README.md` for what is timed and the caveats.\n\n",
    );
    s += &format!("Measured {stamp}.\n\n");
    s += &settings_line(settings, repeat);
    s += " Both sides: rasterize, low hanging obstacles, ledges, clearance, then erosion by the \
          agent radius (Recast: `rcBuildCompactHeightfield` + `rcErodeWalkableArea`), per tile \
          over the tile's core grown by the band. Mtri/s counts triangles placed in tiles \
          (a triangle reaching k tiles counts k times); Mcol/s counts grid columns voxelized \
          (each tile's core grown by its band), the better measure here: these scenes have few, \
          large triangles, so the work is per cell, not per triangle.\n\n";
    s += &table_header();
    s.push('\n');
    for r in results {
        s += &table_row(r);
        s.push('\n');
    }
    s.push('\n');
    s += &counts_table(results);
    s += "\n\n";
    for r in results {
        s += &stage_table(r);
        s += "\n\n";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{utc_date, utc_date_time};

    #[test]
    fn dates() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_700_000_000), "2023-11-14");
        assert_eq!(utc_date_time(1_700_000_000), "2023-11-14 22:13");
    }
}
