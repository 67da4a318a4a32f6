//! `full`: the whole bake on both sides, each in its own process, on the same scenes and
//! settings; writes `benches/RESULTS.md` and a plot.
//!
//! * tessera: the real binary, `tessera bake SCENE --up .. --config .. --threads N --out DIR
//!   --log-format quiet --fresh`, then `DIR/summary.json`.
//! * Recast: this program again, `recast-full` (see `full_recast.rs`): RecastDemo's tiled build
//!   without the detail mesh.
//!
//! Each child is timed from spawn to exit and its peak resident set read from `wait4`'s
//! `rusage` (`ru_maxrss`), so neither figure is estimated. The sides alternate within a repeat,
//! and which one goes first alternates between repeats.

use crate::full_recast::FullSettings;
use serde_json::Value;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tessera_config::BakeConfig;
use tessera_geom::UpAxis;

/// RecastDemo's defaults that tessera's config has no field for.
pub const RECAST_EDGE_MAX_LEN_M: f64 = 12.0;
pub const RECAST_VERTS_PER_POLY: i32 = 6;
/// RecastDemo's region sliders (8 and 20) are sizes it squares into areas.
pub const RECAST_MIN_REGION_SIZE: i32 = 8;
pub const RECAST_MERGE_REGION_SIZE: i32 = 20;

/// One setting both sides bake with.
pub struct Setting {
    /// What the tables call it.
    pub name: String,
    /// What `tessera bake --config` gets: a preset name or a TOML path.
    pub tessera_config: String,
    pub config: BakeConfig,
    pub recast: FullSettings,
    /// Where RecastDemo's own float arithmetic would round the agent differently.
    pub notes: Vec<String>,
}

impl Setting {
    /// `spec` is a preset name or a TOML file; `max_edge_len_m` is Recast's `edgeMaxLen`
    /// (0: no limit).
    pub fn new(spec: &str, max_edge_len_m: f64) -> Result<Setting, Box<dyn Error>> {
        let mut config = BakeConfig::load(spec)?;
        // Neither side builds a detail mesh (Recast's would be most of its time at fine
        // cells): tessera's height detail is turned off here, and the binary gets this
        // config, written next to the temporary files, instead of the preset.
        config.polygons.detail_sample_distance = 0.0;
        let vp = config.voxel_params();
        let a = &config.agent;
        let recast = FullSettings {
            cs: vp.cell_size as f32,
            ch: vp.cell_height as f32,
            tile_size: vp.tile_size as i32,
            walkable_height: vp.walkable_height as i32,
            walkable_climb: vp.walkable_climb as i32,
            walkable_radius: vp.walkable_radius as i32,
            slope: a.max_slope as f32,
            // Recast measures the contour error in cells.
            max_error: (config.polygons.max_error / vp.cell_size) as f32,
            max_edge_len: (max_edge_len_m / vp.cell_size) as i32,
            nvp: RECAST_VERTS_PER_POLY,
            min_region_area: RECAST_MIN_REGION_SIZE * RECAST_MIN_REGION_SIZE,
            merge_region_area: RECAST_MERGE_REGION_SIZE * RECAST_MERGE_REGION_SIZE,
        };
        // RecastDemo computes the voxel units in f32; say so if that would round otherwise.
        let mut notes = Vec::new();
        let (cs, ch) = (vp.cell_size as f32, vp.cell_height as f32);
        let demo = [
            (
                "walkableHeight",
                (a.height as f32 / ch).ceil() as i32,
                recast.walkable_height,
            ),
            (
                "walkableClimb",
                (a.max_climb as f32 / ch).floor() as i32,
                recast.walkable_climb,
            ),
            (
                "walkableRadius",
                (a.radius as f32 / cs).ceil() as i32,
                recast.walkable_radius,
            ),
        ];
        for (field, f32_value, used) in demo {
            if f32_value != used {
                notes.push(format!(
                    "RecastDemo's f32 arithmetic gives {field} = {f32_value}; both sides use \
                     tessera's {used}."
                ));
            }
        }
        let name = Path::new(spec)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| spec.to_string());
        let written = std::env::temp_dir().join(format!(
            "recast-compare-{}-{name}-no-detail.toml",
            std::process::id()
        ));
        std::fs::write(&written, toml::to_string(&config)?)?;
        Ok(Setting {
            name,
            tessera_config: written.display().to_string(),
            config,
            recast,
            notes,
        })
    }

    /// One line with the numbers both sides get.
    pub fn describe(&self) -> String {
        let (v, a, p, r) = (
            &self.config.voxel,
            &self.config.agent,
            &self.config.polygons,
            &self.recast,
        );
        format!(
            "cell {} m, cell height {} m, tile {} cells (border {} cells), agent height {} m \
             ({} voxels), radius {} m ({} cells), climb {} m ({} voxels), slope {} deg; \
             tessera: regions {:?}, partition {:?}, max_error {} m; Recast: maxSimplificationError \
             {} cells, maxEdgeLen {} cells, maxVertsPerPoly {}, minRegionArea {}, \
             mergeRegionArea {}, watershed",
            v.cell_size,
            v.cell_height,
            v.tile_size,
            r.border(),
            a.height,
            r.walkable_height,
            a.radius,
            r.walkable_radius,
            a.max_climb,
            r.walkable_climb,
            a.max_slope,
            self.config.regions.mode,
            p.partition,
            p.max_error,
            r.max_error,
            r.max_edge_len,
            r.nvp,
            r.min_region_area,
            r.merge_region_area,
        )
        .to_lowercase_enums()
    }
}

/// `{:?}` of the config's enums prints `Layered`, `Anavmg`; the TOML spells them lower case.
trait LowerEnums {
    fn to_lowercase_enums(self) -> String;
}

impl LowerEnums for String {
    fn to_lowercase_enums(self) -> String {
        self.replace("Layered", "layered")
            .replace("Flat", "flat")
            .replace("Anavmg", "anavmg")
            .replace("HertelMehlhorn", "hertel-mehlhorn")
    }
}

/// A scene to bake.
#[derive(Clone)]
pub struct Scene {
    pub name: String,
    pub path: PathBuf,
    pub up: UpAxis,
}

/// A child process's wall time and peak resident set.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub wall: Duration,
    pub max_rss_bytes: u64,
}

/// Runs `cmd` to completion: wall time from spawn to exit, and the child's own `ru_maxrss`
/// from `wait4`. stdout is discarded, stderr goes to `log`.
pub fn run_measured(cmd: &mut Command, log: &Path) -> Result<Measured, Box<dyn Error>> {
    let err = std::fs::File::create(log)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(err));
    let start = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; zero is a valid value for every field.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child; both out-pointers are valid for the call.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4: {e}").into());
        }
    }
    let wall = start.elapsed();
    // `child` was reaped by wait4; dropping it does not wait again.
    drop(child);
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        return Err(format!(
            "{:?} {:?} failed (status {status:#x}): {}",
            cmd.get_program(),
            cmd.get_args().collect::<Vec<_>>(),
            text.trim()
        )
        .into());
    }
    Ok(Measured {
        wall,
        // Linux reports ru_maxrss in KiB.
        max_rss_bytes: usage.ru_maxrss.max(0) as u64 * 1024,
    })
}

/// Best wall time and largest peak memory over the repeats, and the last run's report.
pub struct Side {
    pub walls: Vec<f64>,
    pub max_rss_bytes: u64,
    pub report: Value,
}

impl Side {
    fn new() -> Side {
        Side {
            walls: Vec::new(),
            max_rss_bytes: 0,
            report: Value::Null,
        }
    }

    fn add(&mut self, m: Measured, report: Value) {
        self.walls.push(m.wall.as_secs_f64());
        self.max_rss_bytes = self.max_rss_bytes.max(m.max_rss_bytes);
        self.report = report;
    }

    pub fn best(&self) -> f64 {
        self.walls.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn rss_mib(&self) -> f64 {
        self.max_rss_bytes as f64 / (1024.0 * 1024.0)
    }

    pub fn num(&self, path: &[&str]) -> Option<f64> {
        let mut v = &self.report;
        for k in path {
            v = v.get(k)?;
        }
        v.as_f64()
    }
}

/// One scene at one setting.
pub struct Row {
    pub scene: String,
    /// Plan area of the scene's bounding box [m^2].
    pub area_m2: f64,
    pub triangles: u64,
    pub tessera: Side,
    pub recast: Side,
}

/// Everything `full` measured at one setting.
pub struct SettingResult {
    pub setting: Setting,
    pub rows: Vec<Row>,
}

/// How `full` runs.
pub struct FullRun {
    pub tessera: PathBuf,
    pub threads: usize,
    pub repeat: usize,
    pub work: PathBuf,
}

impl FullRun {
    /// Bakes `scene` at `setting` on both sides, `repeat` times.
    pub fn scene(&self, setting: &Setting, scene: &Scene) -> Result<Row, Box<dyn Error>> {
        let up = match scene.up {
            UpAxis::Y => "y",
            UpAxis::Z => "z",
        };
        let bake_dir = self.work.join("bake");
        let recast_json = self.work.join("recast.json");
        let me = std::env::current_exe()?;
        let mut tessera = Side::new();
        let mut recast = Side::new();
        for i in 0..self.repeat {
            for side in 0..2 {
                // Alternate which side goes first.
                if (side + i) % 2 == 0 {
                    let _ = std::fs::remove_dir_all(&bake_dir);
                    let mut cmd = Command::new(&self.tessera);
                    cmd.arg("bake")
                        .arg(&scene.path)
                        .args(["--up", up, "--config", &setting.tessera_config])
                        .args(["--threads", &self.threads.to_string()])
                        .arg("--out")
                        .arg(&bake_dir)
                        .args(["--log-format", "quiet", "--fresh"]);
                    let m = run_measured(&mut cmd, &self.work.join("tessera.log"))?;
                    let summary = read_json(&bake_dir.join("summary.json"))?;
                    tessera.add(m, summary);
                } else {
                    let _ = std::fs::remove_file(&recast_json);
                    let mut cmd = Command::new(&me);
                    cmd.arg("recast-full")
                        .arg("--scene")
                        .arg(&scene.path)
                        .args(["--up", up, "--threads", &self.threads.to_string()])
                        .arg("--json")
                        .arg(&recast_json)
                        .args(setting.recast.to_args());
                    let m = run_measured(&mut cmd, &self.work.join("recast.log"))?;
                    recast.add(m, read_json(&recast_json)?);
                }
            }
        }
        let _ = std::fs::remove_dir_all(&bake_dir);
        let r = &recast.report;
        // Recast's frame is Y-up: the plan is x-z.
        let area_m2 = (bound(r, "bmax", 0)? - bound(r, "bmin", 0)?)
            * (bound(r, "bmax", 2)? - bound(r, "bmin", 2)?);
        Ok(Row {
            scene: scene.name.clone(),
            area_m2,
            triangles: r["triangles"].as_u64().unwrap_or(0),
            tessera,
            recast,
        })
    }
}

fn bound(v: &Value, key: &str, axis: usize) -> Result<f64, String> {
    v[key][axis]
        .as_f64()
        .ok_or_else(|| format!("recast-full wrote no `{key}`"))
}

fn read_json(path: &Path) -> Result<Value, Box<dyn Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?)
}

/// This process's own peak resident set [bytes]: the floor under what `wait4` reports for a
/// child (Linux carries the parent's high-water mark into a child spawned with a shared address
/// space until it execs).
pub fn own_peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<u64>().ok())
        })
        .map(|k| k * 1024)
        .unwrap_or(0)
}

/// Generates a citygen world (not timed).
pub fn generate_city(
    citygen: &Path,
    size: &str,
    seed: u64,
    out: &Path,
    log: &Path,
) -> Result<(), Box<dyn Error>> {
    let mut cmd = Command::new(citygen);
    cmd.args(["--size", size, "--seed", &seed.to_string()])
        .arg("--out")
        .arg(out);
    run_measured(&mut cmd, log)?;
    Ok(())
}

fn fmt_ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "-".to_string()
    }
}

/// `n` rounded, with commas between thousands.
pub fn thousands(n: f64) -> String {
    let n = n.round() as i64;
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(thousands).unwrap_or_else(|| "-".to_string())
}

/// The main table of one setting.
pub fn main_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| scene | plan area m^2 | triangles | tessera s | Recast s | tessera / Recast | \
         tessera peak RSS MiB | Recast peak RSS MiB | polygons tessera / Recast | \
         vertices tessera / Recast | walkable m^2 tessera / Recast | regions tessera / Recast | \
         tessera unreachable islands |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let (t, c) = (&r.tessera, &r.recast);
        let islands = match t.num(&["unreachable_islands_removed"]) {
            Some(n) if t.report["unreachable_islands_removed"].is_u64() => {
                let polys = t.num(&["unreachable_polygons_removed"]).unwrap_or(0.0);
                if n == 0.0 {
                    "0 (no seeds)".to_string()
                } else {
                    format!("{} ({} polygons)", thousands(n), thousands(polys))
                }
            }
            _ => "not reported".to_string(),
        };
        s += &format!(
            "| {} | {} | {} | {:.3} | {:.3} | {} | {:.1} | {:.1} | {} / {} | {} / {} | {} / {} | {} / {} | {} |\n",
            r.scene,
            thousands(r.area_m2),
            thousands(r.triangles as f64),
            t.best(),
            c.best(),
            fmt_ratio(t.best(), c.best()),
            t.rss_mib(),
            c.rss_mib(),
            opt(t.num(&["polygons"])),
            opt(c.num(&["polygons"])),
            opt(t.num(&["polygon_vertices"])),
            opt(c.num(&["polygon_vertices"])),
            opt(t.num(&["navmesh_area_m2"])),
            opt(c.num(&["walkable_area_m2"])),
            opt(t.num(&["regions"])),
            opt(c.num(&["regions"])),
            islands,
        );
    }
    s
}

/// Where the time goes inside each process, and the other counts.
pub fn detail_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| scene | tessera ingest / bin / voxelize / polygons / total s | tessera self-reported \
         peak RSS MiB | Recast load / bin / tiles / total s | Recast self-reported peak RSS MiB | \
         tiles with geometry tessera / Recast | Recast tiles with polygons | tessera walkable \
         cells m^2 | tessera portals | contours tessera / Recast | all runs tessera s | all runs \
         Recast s |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n",
    );
    let secs = |side: &Side, keys: &[&str]| {
        keys.iter()
            .map(|k| {
                side.num(&["seconds", k])
                    .map(|v| format!("{v:.3}"))
                    .unwrap_or_else(|| "-".to_string())
            })
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let mib = |v: Option<f64>| {
        v.map(|b| format!("{:.1}", b / (1024.0 * 1024.0)))
            .unwrap_or_else(|| "-".to_string())
    };
    let runs = |side: &Side| {
        side.walls
            .iter()
            .map(|w| format!("{w:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for r in rows {
        let (t, c) = (&r.tessera, &r.recast);
        s += &format!(
            "| {} | {} | {} | {} | {} | {} / {} | {} | {} | {} | {} / {} | {} | {} |\n",
            r.scene,
            secs(t, &["ingest", "bin", "voxelize", "polygons", "total"]),
            mib(t.num(&["peak_rss_bytes"])),
            secs(c, &["load", "bin", "build", "total"]),
            mib(c.num(&["peak_rss_bytes"])),
            opt(t.num(&["tiles_with_geometry"])),
            opt(c.num(&["tiles_with_triangles"])),
            opt(c.num(&["tiles_built"])),
            opt(t.num(&["walkable_area_m2"])),
            opt(t.num(&["portals"])),
            opt(t.num(&["contours"])),
            opt(c.num(&["contours"])),
            runs(t),
            runs(c),
        );
    }
    s
}

/// A few figures computed from one setting's rows: time and memory ratios, area agreement.
pub fn summary_lines(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let ratios: Vec<f64> = rows
        .iter()
        .filter(|r| r.recast.best() > 0.0)
        .map(|r| r.tessera.best() / r.recast.best())
        .collect();
    if let (Some(lo), Some(hi)) = (
        ratios.iter().copied().reduce(f64::min),
        ratios.iter().copied().reduce(f64::max),
    ) {
        out.push(format!(
            "Wall time, tessera / Recast: {lo:.2} to {hi:.2} over the scenes."
        ));
    }
    if let Some(big) = rows.iter().max_by(|a, b| a.area_m2.total_cmp(&b.area_m2)) {
        out.push(format!(
            "On the largest scene ({}): tessera {:.2}x Recast's wall time and {:.1}x its peak \
             RSS ({:.1} vs {:.1} MiB).",
            big.scene,
            big.tessera.best() / big.recast.best(),
            big.tessera.rss_mib() / big.recast.rss_mib(),
            big.tessera.rss_mib(),
            big.recast.rss_mib()
        ));
    }
    let diffs: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            let t = r.tessera.num(&["navmesh_area_m2"])?;
            let c = r.recast.num(&["walkable_area_m2"])?;
            (c > 0.0).then(|| (t - c) / c * 100.0)
        })
        .collect();
    if let Some(worst) = diffs
        .iter()
        .copied()
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))
    {
        out.push(format!(
            "Walkable (polygon) area: the two sides agree within {:.1} % on every scene \
             (largest difference {worst:+.1} %, tessera against Recast).",
            worst.abs()
        ));
    }
    out
}

/// Warnings when the two sides do not describe about the same walkable surface.
pub fn sanity(results: &[SettingResult]) -> Vec<String> {
    let mut out = Vec::new();
    for res in results {
        for r in &res.rows {
            let t = r.tessera.num(&["navmesh_area_m2"]).unwrap_or(0.0);
            let c = r.recast.num(&["walkable_area_m2"]).unwrap_or(0.0);
            if c > 0.0 && ((t - c) / c).abs() > 0.1 {
                out.push(format!(
                    "{} ({}): walkable areas differ by {:+.1}% (tessera {t:.0} m^2, Recast {c:.0} m^2)",
                    r.scene,
                    res.setting.name,
                    (t - c) / c * 100.0
                ));
            }
            let tp = r.tessera.num(&["polygons"]).unwrap_or(0.0);
            let cp = r.recast.num(&["polygons"]).unwrap_or(0.0);
            if cp > 0.0 && !(0.2..=5.0).contains(&(tp / cp)) {
                out.push(format!(
                    "{} ({}): polygon counts differ by more than 5x (tessera {tp}, Recast {cp})",
                    r.scene, res.setting.name
                ));
            }
        }
    }
    out
}

/// Inputs of the results file beyond the measurements.
pub struct FileInfo<'a> {
    pub command: &'a str,
    pub stamp: &'a str,
    pub tessera_binary: &'a str,
    pub threads: usize,
    pub repeat: usize,
    pub plot: Option<&'a str>,
    pub plot_has_text: bool,
    pub parent_rss_bytes: u64,
    pub city_note: &'a str,
    pub warnings: &'a [String],
}

pub fn results_file(info: &FileInfo, results: &[SettingResult]) -> String {
    let mut s = String::from("# Full bakes: tessera vs Recast, side by side\n\n");
    s += &format!(
        "Written by `{}` (see `benches/recast-compare/README.md`). Measured {}. tessera binary: \
         {}. Each side ran in its own process, {} threads each, {} run(s) per scene and side \
         (sides alternating); times are the best run, memory the largest peak over the runs.\n\n",
        info.command, info.stamp, info.tessera_binary, info.threads, info.repeat
    );
    s += "**Not compared: the detail mesh.** Neither side builds one: Recast's \
          `rcBuildPolyMeshDetail` is not run (nor Detour's `dtCreateNavMeshData`), and \
          tessera's height detail is turned off (`[polygons] detail_sample_distance = 0` in \
          the config the harness hands it), so its detail triangles are its polygons' own \
          triangulation.\n\n";
    for res in results {
        s += &format!("## Setting `{}`\n\n", res.setting.name);
        s += &format!("{}.\n\n", res.setting.describe());
        for n in &res.setting.notes {
            s += &format!("{n}\n\n");
        }
        s += &main_table(&res.rows);
        s.push('\n');
        for line in summary_lines(&res.rows) {
            s += &format!("* {line}\n");
        }
        s += "\nWhere the time goes (each process's own clock), and more counts:\n\n";
        s += &detail_table(&res.rows);
        s.push('\n');
    }
    if !info.warnings.is_empty() {
        s += "## Warnings from the sanity checks\n\n\
              Flagged when the walkable areas differ by more than 10 % or the polygon counts by \
              more than 5x. A flag marks a difference between the two meshes to look at, not \
              necessarily a fault of either.\n\n";
        for w in info.warnings {
            s += &format!("* {w}\n");
        }
        s.push('\n');
    }
    if let Some(plot) = info.plot {
        s += "## Plot\n\n";
        s += &format!("![wall time and peak RSS against scene area]({plot})\n\n");
        s += "Left: wall time [s] against the scene's plan area [m^2]; right: peak RSS [MiB] \
              against the same area; both axes logarithmic. tessera is blue, Recast red; filled \
              circles are the first setting, open triangles the second (if run).";
        if !info.plot_has_text {
            s += " No TrueType font was found when it was drawn, so the picture has no \
                  labels.";
        }
        s += "\n\n";
    }
    s += &format!(
        "## What the columns are\n\n\
         * **plan area**: the scene's bounding box seen from above (Recast's x-z extent).\n\
         * **triangles**: triangles in the OBJ after fan triangulation (tessera drops \
           degenerate ones; its count is in its `summary.json`).\n\
         * **s**: wall time of the whole child process, from spawn to exit: reading the OBJ, \
           binning triangles into tiles, all tiles, and for tessera also writing its scene \
           cache, checkpoints, `navmesh.tsn` and `summary.json` to disk (`--fresh`, so nothing \
           is reused) and, after the bake, rendering `preview.png` and writing `report.html`, \
           which its own `seconds.total` leaves out. The second table splits the time by each \
           process's own clock.\n\
         * **peak RSS**: `ru_maxrss` of the child from `wait4`, i.e. the largest resident set \
           the process had, file-backed pages included (tessera memory-maps its scene and \
           cache). Linux carries the parent's own high-water mark into a child until it execs, \
           so the floor of this figure is the harness's own peak, {:.1} MiB here. The \
           self-reported columns are `VmHWM` read by each process itself; tessera reads it at \
           the end of its pipeline, before the preview and the report, so on small scenes it \
           is below `ru_maxrss`.\n\
         * **polygons, vertices**: tessera's navmesh (`polygons`, `polygon_vertices`: distinct \
           vertices of the whole mesh). Recast: `npolys` and `nverts` of every tile's \
           `rcPolyMesh`, summed: a vertex on a tile border counts once per tile.\n\
         * **walkable m^2**: plan area of the polygons on both sides (tessera's \
           `navmesh_area_m2`; Recast: shoelace over each polygon's x-z vertices). tessera's \
           area of walkable cells before simplification is in the second table.\n\
         * **regions**: tessera's regions merged across tiles (layered mode); Recast's distinct \
           region ids among each tile's polygons, summed over tiles (a region cut by tile \
           borders counts once per tile).\n\
         * **unreachable islands**: tessera drops polygons no seed reaches only when \
           `[polygons] reachable_from` has seeds; these configs have none, so nothing is dropped \
           on either side.\n\n",
        info.parent_rss_bytes as f64 / (1024.0 * 1024.0)
    );
    s += "## What is and is not compared\n\n\
          * **Same input, same grid settings.** Both read the same OBJ files; cell size, cell \
            height, tile size (in cells), agent height, radius, climb and slope come from the \
            same tessera config, converted once to voxel units by tessera's config crate \
            (`ceil` for height and radius, `floor` for the climb, as RecastDemo rounds) and \
            handed to Recast as those integers. Recast's tile border is RecastDemo's \
            (`walkableRadius + 3` cells), which is also tessera's band.\n\
          * **Recast runs as RecastDemo's tile mesh sample builds a tile**: heightfield over \
            the tile grown by the border, mark walkable triangles, rasterize, the three \
            filters, compact heightfield, erosion, distance field, watershed regions, contours, \
            `rcBuildPolyMesh`; tiles over N threads (a shared tile counter). Its grid is \
            RecastDemo's (`rcCalcGridSize` on the mesh bounds). RecastDemo's chunky triangle \
            mesh is replaced by a list of triangles per tile whose bounding boxes overlap the \
            grown tile, which gives Recast the same or fewer triangles to rasterize. Its OBJ \
            reader streams the file instead of reading it whole as RecastDemo's does. Each \
            tile's polygon mesh is copied out and kept until the end, standing in for the \
            navmesh tiles RecastDemo keeps; nothing is written to disk.\n\
          * **Recast settings with no tessera counterpart** are RecastDemo's defaults: \
            `maxEdgeLen` = 12 m / cell size (long wall edges are split; tessera never splits \
            edges, so this adds vertices and polygons on Recast's side), `maxVertsPerPoly` 6 \
            (tessera's polygons have no vertex limit), `minRegionArea` 64 and \
            `mergeRegionArea` 400 cells (RecastDemo's 8 and 20, squared). \
            `maxSimplificationError` is tessera's `[polygons] max_error` in cells (1.3 cells, \
            RecastDemo's figure: Recast measures it in cells).\n\
          * **No cross-tile merge in Recast.** Recast's polygons stop at tile borders (Detour \
            links tiles at run time), so its polygon, vertex and region counts grow with the \
            number of tiles; tessera merges regions and contours across tiles before making \
            polygons, so its polygons cross tile borders and its counts do not depend on the \
            tiling.\n\
          * **Different regions and partitions.** Recast: watershed regions, small ones \
            dropped or merged, polygons by ear-clipping triangulation and greedy merging up to \
            6 vertices. tessera: layered regions (floors within climb-high bands), contours \
            simplified by RDP, constrained Delaunay triangulation and an ANavMG convex \
            partition. Counts show the order of magnitude, not the same mesh.\n\
          * **tessera does more I/O.** It streams tiles through files on disk (scene cache, \
            tile pack, span and region journals; fsynced checkpoints), so a bake can resume and \
            stay within a memory budget; Recast keeps everything in memory.\n\
          * **Not measured**: Detour navmesh creation, path queries, detail meshes, \
            off-mesh links, the memory budget (tessera runs with its default, half the \
            available memory).\n\n";
    s += &format!("**Scenes.** {}\n", info.city_note);
    s
}
