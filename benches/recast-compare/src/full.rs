//! `full`: the whole bake on both sides, each in its own process, on the same scenes and
//! settings; writes `benches/RESULTS.md` and a plot.
//!
//! * tessera: the real binary, `tessera bake SCENE --up .. --config .. --threads N --out DIR
//!   --log-format quiet --fresh`, then `DIR/summary.json`; once at the tile size its config
//!   gives (no `--tile-size`), once at Recast's tile size, and on the scenes named for it once
//!   more under a small `--memory-budget`.
//! * Recast: this program again, `recast-full` (see `full_recast.rs`): RecastDemo's tiled build,
//!   with or without the detail mesh, ending in Detour's tile data.
//!
//! Both modes are measured: height detail on both sides (RecastDemo's 6 cells / 1 voxel), and
//! off on both sides. Each child is timed from spawn to exit and its peak resident set read
//! from `wait4`'s `rusage` (`ru_maxrss`), so neither figure is estimated. The runs of one scene
//! take turns within a repeat, and which one goes first rotates between repeats.

use crate::full_recast::FullSettings;
use serde_json::Value;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tessera_config::BakeConfig;
use tessera_geom::UpAxis;

/// RecastDemo's defaults that tessera's config has no field for.
pub const RECAST_EDGE_MAX_LEN_M: f64 = 12.0;
pub const RECAST_VERTS_PER_POLY: i32 = 6;
/// RecastDemo's region sliders (8 and 20) are sizes it squares into areas.
pub const RECAST_MIN_REGION_SIZE: i32 = 8;
pub const RECAST_MERGE_REGION_SIZE: i32 = 20;
/// RecastDemo's detail sliders: sample distance 6 (cells) and max sample error 1 (cell
/// heights); it passes `6 * cs` and `1 * ch` in world units.
pub const RECAST_DETAIL_SAMPLE_DIST_CELLS: f32 = 6.0;
pub const RECAST_DETAIL_MAX_ERROR_VOXELS: f32 = 1.0;

/// The line after which the results file holds sections written by hand; `full` keeps
/// everything below it when it rewrites the file.
pub const KEEP_MARKER: &str = "<!-- kept below: hand-written sections -->";

/// Height detail on both sides, or off on both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    On,
    Off,
}

impl Detail {
    pub fn is_on(self) -> bool {
        self == Detail::On
    }

    /// `on` / `off`, as the flag and the file names spell it.
    pub fn word(self) -> &'static str {
        match self {
            Detail::On => "on",
            Detail::Off => "off",
        }
    }

    /// The results file's heading for this mode.
    pub fn heading(self) -> &'static str {
        match self {
            Detail::On => "Detail mesh on both sides",
            Detail::Off => "No detail mesh on either side",
        }
    }
}

/// One setting both sides bake with.
pub struct Setting {
    /// What the tables call it.
    pub name: String,
    /// The effective settings with height detail off (what `queries` bakes with).
    pub config: BakeConfig,
    /// What `tessera bake --config` gets, with detail off and on: the setting's own TOML with
    /// only the two `[polygons] detail_*` fields changed, written to a temporary file.
    tessera_configs: [PathBuf; 2],
    /// `[voxel] tile_size` as the setting's TOML spells it, or a note that it gives none.
    pub tessera_tile: String,
    /// Recast's settings with detail off ([`Setting::recast_for`] gives either mode).
    pub recast: FullSettings,
    /// Where RecastDemo's own float arithmetic would round the agent differently, and other
    /// remarks for the results file.
    pub notes: Vec<String>,
}

/// A number for a TOML file: `v` rounded to 1e-9, so that 6 * 0.3 is written as 1.8.
fn clean(v: f64) -> f64 {
    (v * 1e9).round() / 1e9
}

impl Setting {
    /// `spec` is a preset name or a TOML file, optionally followed by `@CELLS`, Recast's tile
    /// size (needed when the TOML sets no integer `[voxel] tile_size`); `max_edge_len_m` is
    /// Recast's `edgeMaxLen` (0: no limit).
    pub fn new(spec: &str, max_edge_len_m: f64) -> Result<Setting, Box<dyn Error>> {
        let (base, recast_tile) = match spec.rsplit_once('@') {
            Some((b, t)) => (
                b,
                Some(
                    t.parse::<i32>()
                        .ok()
                        .filter(|&t| t > 0)
                        .ok_or_else(|| format!("{spec}: `@{t}` is not a tile size in cells"))?,
                ),
            ),
            None => (spec, None),
        };
        let loaded = BakeConfig::load(base)?;
        let name = Path::new(base)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| base.to_string());
        let mut notes = Vec::new();
        // The TOML the setting is written in: a file, or the preset's file in `configs/` (the
        // text compiled into tessera). Only the detail fields are changed, so that the tile
        // size stays as the setting spells it (a number, `auto`, or nothing: the default's).
        let preset_file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../configs")
            .join(format!("{base}.toml"));
        let source = if Path::new(base).is_file() {
            Some(std::fs::read_to_string(base)?)
        } else if preset_file.is_file() {
            Some(std::fs::read_to_string(&preset_file)?)
        } else {
            None
        };
        let table: toml::Table = match &source {
            Some(text) => text
                .parse()
                .map_err(|e| format!("{base}: not a TOML table: {e}"))?,
            None => {
                notes.push(format!(
                    "The preset `{base}` was not found in `configs/`: tessera was given the \
                     effective settings in full, tile size included."
                ));
                match toml::Value::try_from(&loaded)? {
                    toml::Value::Table(t) => t,
                    _ => return Err(format!("{base}: config is not a table").into()),
                }
            }
        };
        let tile_value = table.get("voxel").and_then(|v| v.get("tile_size")).cloned();
        let tessera_tile = match &tile_value {
            Some(v) => format!("`tile_size = {v}`"),
            None => "no `tile_size` (the `default` preset's)".to_string(),
        };
        let recast_tile = match (
            recast_tile,
            tile_value.as_ref().and_then(|v| v.as_integer()),
        ) {
            (Some(t), _) => t,
            (None, Some(t)) if t > 0 && t <= i32::MAX as i64 => t as i32,
            _ => {
                return Err(format!(
                    "{base} sets no tile size in cells ({tessera_tile}): give Recast's as \
                     `{base}@CELLS`"
                )
                .into())
            }
        };

        let vp = loaded.voxel_params();
        let a = &loaded.agent;
        let (cs, ch) = (vp.cell_size as f32, vp.cell_height as f32);
        // tessera's detail in metres: RecastDemo's 6 cells and 1 cell height.
        let detail_m = (
            clean(vp.cell_size * RECAST_DETAIL_SAMPLE_DIST_CELLS as f64),
            clean(vp.cell_height * RECAST_DETAIL_MAX_ERROR_VOXELS as f64),
        );
        let mut written = Vec::new();
        let mut config = None;
        for detail in [Detail::Off, Detail::On] {
            let mut t = table.clone();
            let polygons = t
                .entry("polygons")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or_else(|| format!("{base}: [polygons] is not a table"))?;
            let distance = if detail.is_on() { detail_m.0 } else { 0.0 };
            polygons.insert(
                "detail_sample_distance".into(),
                toml::Value::Float(distance),
            );
            polygons.insert("detail_max_error".into(), toml::Value::Float(detail_m.1));
            let text = format!(
                "# Written by recast-compare `full` from `{base}`: height detail {}.\n{}",
                detail.word(),
                toml::to_string(&t)?
            );
            // Unique per Setting value: each removes its own files when dropped.
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "recast-compare-{}-{}-{name}-detail-{}.toml",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed),
                detail.word()
            ));
            // The harness's own config crate checks the file before tessera reads it.
            let checked = BakeConfig::from_toml(&text, &path.display().to_string())?;
            if !detail.is_on() {
                config = Some(checked);
            }
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            written.push(path);
        }
        let config = config.expect("the detail-off config was written");

        let recast = FullSettings {
            cs,
            ch,
            tile_size: recast_tile,
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
            detail: false,
            // As RecastDemo computes them, in f32.
            detail_sample_dist: cs * RECAST_DETAIL_SAMPLE_DIST_CELLS,
            detail_sample_max_error: ch * RECAST_DETAIL_MAX_ERROR_VOXELS,
            agent_height: a.height as f32,
            agent_radius: a.radius as f32,
            agent_climb: a.max_climb as f32,
        };
        // RecastDemo computes the voxel units in f32; say so if that would round otherwise.
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
        Ok(Setting {
            name,
            config,
            tessera_configs: [written[0].clone(), written[1].clone()],
            tessera_tile,
            recast,
            notes,
        })
    }

    /// The config file `tessera bake --config` gets in mode `detail`.
    pub fn tessera_config(&self, detail: Detail) -> &Path {
        &self.tessera_configs[detail.is_on() as usize]
    }

    /// Recast's settings in mode `detail`.
    pub fn recast_for(&self, detail: Detail) -> FullSettings {
        FullSettings {
            detail: detail.is_on(),
            ..self.recast.clone()
        }
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
            "cell {} m, cell height {} m, Recast's tile {} cells (border {} cells), tessera's \
             config: {}, agent height {} m ({} voxels), radius {} m ({} cells), climb {} m ({} \
             voxels), slope {} deg; tessera: regions {}, partition {:?}, max_error {} m; \
             Recast: maxSimplificationError {} cells, maxEdgeLen {} cells, maxVertsPerPoly {}, \
             minRegionArea {}, mergeRegionArea {}, watershed",
            v.cell_size,
            v.cell_height,
            r.tile_size,
            r.border(),
            self.tessera_tile,
            a.height,
            r.walkable_height,
            a.radius,
            r.walkable_radius,
            a.max_climb,
            r.walkable_climb,
            a.max_slope,
            crate::segment::mode_name(self.config.regions.mode),
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

    /// The detail distances both sides get when detail is on.
    pub fn detail_note(&self) -> String {
        let v = &self.config.voxel;
        format!(
            "Detail mesh: sample distance {} cells ({} m), max error {} voxel ({} m), on both \
             sides (Recast's `detailSampleDist` and `detailSampleMaxError`, tessera's \
             `detail_sample_distance` and `detail_max_error`).",
            RECAST_DETAIL_SAMPLE_DIST_CELLS,
            clean(v.cell_size * RECAST_DETAIL_SAMPLE_DIST_CELLS as f64),
            RECAST_DETAIL_MAX_ERROR_VOXELS,
            clean(v.cell_height * RECAST_DETAIL_MAX_ERROR_VOXELS as f64),
        )
    }
}

impl Drop for Setting {
    fn drop(&mut self) {
        for p in &self.tessera_configs {
            let _ = std::fs::remove_file(p);
        }
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

/// A child process's wall time and peak resident set, and how it ended.
#[derive(Clone, Debug)]
pub struct Measured {
    pub wall: Duration,
    pub max_rss_bytes: u64,
    /// `None` when it exited with status 0; else what went wrong, with the end of its stderr.
    pub failure: Option<String>,
}

/// Runs `cmd` to completion: wall time from spawn to exit, and the child's own `ru_maxrss`
/// from `wait4`, whether it succeeded or not. stdout is discarded, stderr goes to `log`.
/// Only a child that cannot be started or waited for is an error.
pub fn run_child(cmd: &mut Command, log: &Path) -> Result<Measured, Box<dyn Error>> {
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
    let failure = if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        None
    } else {
        let how = if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            if sig == libc::SIGKILL {
                "killed (signal 9, the kernel's out-of-memory killer or a user)".to_string()
            } else {
                format!("killed by signal {sig}")
            }
        } else {
            format!("exit status {}", libc::WEXITSTATUS(status))
        };
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let tail: Vec<&str> = text.trim().lines().rev().take(3).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Some(if tail.is_empty() {
            how
        } else {
            format!("{how}: {}", tail.join(" / "))
        })
    };
    Ok(Measured {
        wall,
        // Linux reports ru_maxrss in KiB.
        max_rss_bytes: usage.ru_maxrss.max(0) as u64 * 1024,
        failure,
    })
}

/// [`run_child`] where a failure is an error.
pub fn run_measured(cmd: &mut Command, log: &Path) -> Result<Measured, Box<dyn Error>> {
    let m = run_child(cmd, log)?;
    match &m.failure {
        None => Ok(m),
        Some(f) => Err(format!(
            "{:?} {:?} failed: {f}",
            cmd.get_program(),
            cmd.get_args().collect::<Vec<_>>()
        )
        .into()),
    }
}

/// One variant's runs: best wall time and largest peak memory over the repeats, the last
/// good run's report, and the failure that stopped it, if any.
pub struct Side {
    pub walls: Vec<f64>,
    pub max_rss_bytes: u64,
    pub report: Value,
    pub failure: Option<String>,
}

impl Side {
    fn new() -> Side {
        Side {
            walls: Vec::new(),
            max_rss_bytes: 0,
            report: Value::Null,
            failure: None,
        }
    }

    fn add(&mut self, m: Measured, report: Value) {
        self.walls.push(m.wall.as_secs_f64());
        self.max_rss_bytes = self.max_rss_bytes.max(m.max_rss_bytes);
        self.report = report;
    }

    fn fail(&mut self, m: &Measured, why: String) {
        self.max_rss_bytes = self.max_rss_bytes.max(m.max_rss_bytes);
        self.failure = Some(format!(
            "{why} (after {:.1} s, peak RSS {:.1} MiB)",
            m.wall.as_secs_f64(),
            m.max_rss_bytes as f64 / (1024.0 * 1024.0)
        ));
    }

    /// At least one run succeeded.
    pub fn ok(&self) -> bool {
        !self.walls.is_empty()
    }

    /// The best wall time [s]; NaN when no run succeeded.
    pub fn best(&self) -> f64 {
        if self.ok() {
            self.walls.iter().copied().fold(f64::INFINITY, f64::min)
        } else {
            f64::NAN
        }
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

    /// The best time for a table cell, or `failed` when no run succeeded.
    pub fn time_cell(&self) -> String {
        if self.ok() {
            format!("{:.3}", self.best())
        } else {
            "failed".to_string()
        }
    }

    /// The peak for a table cell (a failed side's is its peak when it stopped).
    fn rss_cell(&self) -> String {
        if self.ok() {
            format!("{:.1}", self.rss_mib())
        } else {
            format!("({:.1} at failure)", self.rss_mib())
        }
    }
}

/// One scene at one setting in one detail mode.
pub struct Row {
    pub scene: String,
    /// Plan area of the scene's bounding box [m^2].
    pub area_m2: f64,
    pub triangles: u64,
    /// tessera at its config's own tile size (no `--tile-size`).
    pub tessera: Side,
    /// tessera with `--tile-size` = Recast's; `None` when its own tile size was already that.
    pub tessera_recast_tile: Option<Side>,
    /// tessera under a small `--memory-budget` (the budget as written), on the scenes asked.
    pub tessera_budget: Option<(String, Side)>,
    pub recast: Side,
}

impl Row {
    /// tessera at Recast's tile size: its own run when it had one, else the default run.
    pub fn at_recast_tile(&self) -> &Side {
        self.tessera_recast_tile.as_ref().unwrap_or(&self.tessera)
    }
}

/// Everything `full` measured at one setting in one mode.
pub struct SettingResult<'a> {
    pub setting: &'a Setting,
    pub detail: Detail,
    pub rows: Vec<Row>,
}

/// How `full` runs.
pub struct FullRun {
    pub tessera: PathBuf,
    pub threads: usize,
    pub repeat: usize,
    /// Repeats for the scene named `citygen XL` (minutes per run).
    pub xl_repeat: usize,
    /// The small memory budget (`tessera --memory-budget`) and the scenes that get a run
    /// under it.
    pub budget: Option<String>,
    pub budget_scenes: Vec<String>,
    pub work: PathBuf,
}

/// The runs of one scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    TesseraOwnTile,
    TesseraRecastTile,
    TesseraBudget,
    Recast,
}

impl FullRun {
    /// Repeats for `scene`.
    pub fn repeat_for(&self, scene: &Scene) -> usize {
        if scene.name == "citygen XL" {
            self.xl_repeat
        } else {
            self.repeat
        }
    }

    /// Bakes `scene` at `setting` in mode `detail`: tessera at its own tile size and at
    /// Recast's (unless they are the same), under the small budget if asked, and Recast; each
    /// `repeat_for(scene)` times. A variant that fails is recorded and not run again.
    pub fn scene(
        &self,
        setting: &Setting,
        detail: Detail,
        scene: &Scene,
    ) -> Result<Row, Box<dyn Error>> {
        let up = match scene.up {
            UpAxis::Y => "y",
            UpAxis::Z => "z",
        };
        let bake_dir = self.work.join("bake");
        let recast_json = self.work.join("recast.json");
        let me = std::env::current_exe()?;
        let recast_settings = setting.recast_for(detail);
        let recast_tile = recast_settings.tile_size;
        let budget = self
            .budget
            .as_ref()
            .filter(|_| self.budget_scenes.contains(&scene.name));
        let mut variants = vec![Variant::TesseraOwnTile, Variant::TesseraRecastTile];
        if budget.is_some() {
            variants.push(Variant::TesseraBudget);
        }
        variants.push(Variant::Recast);
        let mut own = Side::new();
        let mut at_recast = Side::new();
        let mut small = Side::new();
        let mut recast = Side::new();
        // Whether tessera's own tile size turned out to be Recast's (then the second tessera
        // run would repeat the first).
        let mut same_tile = false;
        for i in 0..self.repeat_for(scene) {
            // Rotate the order, so that each variant goes first in turn.
            let mut order = variants.clone();
            order.rotate_left(i % variants.len());
            for v in order {
                let side = match v {
                    Variant::TesseraOwnTile => &mut own,
                    Variant::TesseraRecastTile => &mut at_recast,
                    Variant::TesseraBudget => &mut small,
                    Variant::Recast => &mut recast,
                };
                if side.failure.is_some() || (v == Variant::TesseraRecastTile && same_tile) {
                    continue;
                }
                if v == Variant::Recast {
                    let _ = std::fs::remove_file(&recast_json);
                    let mut cmd = Command::new(&me);
                    cmd.arg("recast-full")
                        .arg("--scene")
                        .arg(&scene.path)
                        .args(["--up", up, "--threads", &self.threads.to_string()])
                        .arg("--json")
                        .arg(&recast_json)
                        .args(recast_settings.to_args());
                    let m = run_child(&mut cmd, &self.work.join("recast.log"))?;
                    match (&m.failure, read_json(&recast_json)) {
                        (None, Ok(report)) => side.add(m, report),
                        (Some(f), _) => side.fail(&m, f.clone()),
                        (None, Err(e)) => side.fail(&m, e.to_string()),
                    }
                    continue;
                }
                let _ = std::fs::remove_dir_all(&bake_dir);
                let mut cmd = Command::new(&self.tessera);
                cmd.arg("bake")
                    .arg(&scene.path)
                    .args(["--up", up])
                    .arg("--config")
                    .arg(setting.tessera_config(detail))
                    .args(["--threads", &self.threads.to_string()])
                    .arg("--out")
                    .arg(&bake_dir)
                    .args(["--log-format", "quiet", "--fresh"]);
                match v {
                    Variant::TesseraRecastTile => {
                        cmd.args(["--tile-size", &recast_tile.to_string()]);
                    }
                    Variant::TesseraBudget => {
                        cmd.args(["--memory-budget", budget.expect("asked for")]);
                    }
                    _ => {}
                }
                let m = run_child(&mut cmd, &self.work.join("tessera.log"))?;
                match (&m.failure, read_json(&bake_dir.join("summary.json"))) {
                    (None, Ok(summary)) => {
                        if v == Variant::TesseraOwnTile {
                            same_tile = summary["tile_size"].as_i64() == Some(recast_tile as i64);
                        }
                        side.add(m, summary);
                    }
                    (Some(f), _) => side.fail(&m, f.clone()),
                    (None, Err(e)) => side.fail(&m, e.to_string()),
                }
            }
        }
        let _ = std::fs::remove_dir_all(&bake_dir);
        let _ = std::fs::remove_file(&recast_json);
        let (area_m2, triangles) = scene_size(&recast, &own, setting);
        Ok(Row {
            scene: scene.name.clone(),
            area_m2,
            triangles,
            tessera: own,
            tessera_recast_tile: (!same_tile).then_some(at_recast),
            tessera_budget: budget.map(|b| (b.clone(), small)),
            recast,
        })
    }
}

/// The scene's plan area and triangle count: from Recast's report (the mesh bounds, x-z in
/// its Y-up frame), else from tessera's summary (the grid, a little larger than the bounds).
fn scene_size(recast: &Side, tessera: &Side, setting: &Setting) -> (f64, u64) {
    let r = &recast.report;
    let bound = |key: &str, axis: usize| r[key][axis].as_f64();
    if let (Some(x0), Some(x1), Some(z0), Some(z1)) = (
        bound("bmin", 0),
        bound("bmax", 0),
        bound("bmin", 2),
        bound("bmax", 2),
    ) {
        return ((x1 - x0) * (z1 - z0), r["triangles"].as_u64().unwrap_or(0));
    }
    let t = &tessera.report;
    let cs = setting.config.voxel.cell_size;
    let cells = |axis: usize| t["cells"][axis].as_f64().unwrap_or(0.0);
    let triangles =
        t["triangles"].as_u64().unwrap_or(0) + t["degenerate_triangles"].as_u64().unwrap_or(0);
    (cells(0) * cells(1) * cs * cs, triangles)
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

/// Memory the system had available when asked [bytes] (`MemAvailable`).
pub fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Writes every dirty page of the system to disk and waits for it (`sync(2)`), so that no
/// write-back runs beside the timed runs that follow.
pub fn flush_disk_writes() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// Runs `citygen --size SIZE --seed SEED --out FILE` (with `--terrain` for terrain alone).
pub fn generate_city(
    citygen: &Path,
    size: &str,
    terrain: bool,
    seed: u64,
    out: &Path,
    log: &Path,
) -> Result<(), Box<dyn Error>> {
    let mut cmd = Command::new(citygen);
    cmd.args(["--size", size, "--seed", &seed.to_string()])
        .arg("--out")
        .arg(out);
    if terrain {
        cmd.arg("--terrain");
    }
    run_measured(&mut cmd, log)?;
    Ok(())
}

fn fmt_ratio(a: &Side, b: &Side) -> String {
    if a.ok() && b.ok() && b.best() > 0.0 {
        format!("{:.2}", a.best() / b.best())
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

/// `same` when tessera's own tile size was Recast's, else the cell `f` makes of the run.
fn recast_tile_cell(r: &Row, f: impl Fn(&Side) -> String) -> String {
    match &r.tessera_recast_tile {
        Some(side) => f(side),
        None => "same".to_string(),
    }
}

/// The main table of one setting in one mode.
pub fn main_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| scene | plan area m^2 | triangles | tessera s | tessera s at Recast's tile | \
         Recast s | tessera / Recast | at Recast's tile: tessera / Recast | tessera peak RSS \
         MiB | at Recast's tile: tessera peak RSS MiB | Recast peak RSS MiB | polygons tessera \
         / Recast | vertices tessera / Recast | detail vertices tessera / Recast | walkable m^2 \
         tessera / Recast | regions tessera / Recast | tessera islands dropped |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let (t, c) = (&r.tessera, &r.recast);
        let islands = match t.num(&["unreachable_islands_removed"]) {
            Some(n) if t.report["unreachable_islands_removed"].is_u64() => {
                let polys = t.num(&["unreachable_polygons_removed"]).unwrap_or(0.0);
                if n == 0.0 {
                    "0".to_string()
                } else {
                    format!("{} ({} polygons)", thousands(n), thousands(polys))
                }
            }
            _ => "not reported".to_string(),
        };
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | {} / {} | {} / {} | {} / {} | {} / {} | {} |\n",
            r.scene,
            thousands(r.area_m2),
            thousands(r.triangles as f64),
            t.time_cell(),
            recast_tile_cell(r, Side::time_cell),
            c.time_cell(),
            fmt_ratio(t, c),
            fmt_ratio(r.at_recast_tile(), c),
            t.rss_cell(),
            recast_tile_cell(r, Side::rss_cell),
            c.rss_cell(),
            opt(t.num(&["polygons"])),
            opt(c.num(&["polygons"])),
            opt(t.num(&["polygon_vertices"])),
            opt(c.num(&["polygon_vertices"])),
            opt(t.num(&["detail_vertices"])),
            opt(c.num(&["detail_vertices"])),
            opt(t.num(&["navmesh_area_m2"])),
            opt(c.num(&["walkable_area_m2"])),
            opt(t.num(&["regions"])),
            opt(c.num(&["regions"])),
            islands,
        );
    }
    s
}

/// tessera under the small memory budget next to its default-budget run, on the scenes that
/// had one; empty when none did.
pub fn budget_table(rows: &[Row]) -> String {
    let with: Vec<(&Row, &String, &Side)> = rows
        .iter()
        .filter_map(|r| r.tessera_budget.as_ref().map(|(b, s)| (r, b, s)))
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| scene | budget | tessera s | tessera peak RSS MiB | tessera self-reported peak anon \
         MiB | tessera / Recast | default budget: tessera s | default budget: peak RSS MiB | \
         default budget: peak anon MiB | default budget [MiB] | all runs s |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n",
    );
    let mib = |v: Option<f64>| {
        v.map(|b| format!("{:.1}", b / (1024.0 * 1024.0)))
            .unwrap_or_else(|| "-".to_string())
    };
    for (r, budget, b) in with {
        let t = &r.tessera;
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.scene,
            budget,
            b.time_cell(),
            b.rss_cell(),
            mib(b.num(&["peak_anon_bytes"])),
            fmt_ratio(b, &r.recast),
            t.time_cell(),
            t.rss_cell(),
            mib(t.num(&["peak_anon_bytes"])),
            mib(t.num(&["memory_budget_bytes"])),
            runs(b),
        );
    }
    s
}

fn runs(side: &Side) -> String {
    if side.walls.is_empty() {
        return "-".to_string();
    }
    side.walls
        .iter()
        .map(|w| format!("{w:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where the time goes inside each process, and the other counts.
pub fn detail_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| scene | tessera tile (own) | tessera ingest / bin / voxelize / polygons / total s | \
         tessera self-reported peak RSS MiB | Recast load / bin / tiles / total s | Recast \
         self-reported peak RSS MiB | tiles with geometry tessera / Recast | Recast tiles with \
         polygons | navmesh bytes tessera / Recast | Recast detail triangles | tessera walkable \
         cells m^2 | tessera portals | contours tessera / Recast | all runs tessera s | all runs \
         tessera at Recast's tile s | all runs Recast s |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|---|\n",
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
    for r in rows {
        let (t, c) = (&r.tessera, &r.recast);
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} / {} | {} | {} / {} | {} | {} | {} | {} / {} | {} | {} | {} |\n",
            r.scene,
            opt(t.num(&["tile_size"])),
            secs(t, &["ingest", "bin", "voxelize", "polygons", "total"]),
            mib(t.num(&["peak_rss_bytes"])),
            secs(c, &["load", "bin", "build", "total"]),
            mib(c.num(&["peak_rss_bytes"])),
            opt(t.num(&["tiles_with_geometry"])),
            opt(c.num(&["tiles_with_triangles"])),
            opt(c.num(&["tiles_built"])),
            opt(t.num(&["navmesh_bytes"])),
            opt(c.num(&["navmesh_bytes"])),
            opt(c.num(&["detail_triangles"])),
            opt(t.num(&["walkable_area_m2"])),
            opt(t.num(&["portals"])),
            opt(t.num(&["contours"])),
            opt(c.num(&["contours"])),
            runs(t),
            recast_tile_cell(r, runs),
            runs(c),
        );
    }
    s
}

/// A few figures computed from one setting's rows: time and memory ratios, area agreement.
pub fn summary_lines(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let span = |f: &dyn Fn(&Row) -> &Side| {
        let ratios: Vec<f64> = rows
            .iter()
            .filter(|r| f(r).ok() && r.recast.ok() && r.recast.best() > 0.0)
            .map(|r| f(r).best() / r.recast.best())
            .collect();
        ratios
            .iter()
            .copied()
            .reduce(f64::min)
            .zip(ratios.iter().copied().reduce(f64::max))
    };
    if let Some((lo, hi)) = span(&|r| &r.tessera) {
        out.push(format!(
            "Wall time, tessera at its own tile size / Recast: {lo:.2} to {hi:.2} over the \
             scenes."
        ));
    }
    if rows.iter().any(|r| r.tessera_recast_tile.is_some()) {
        if let Some((lo, hi)) = span(&|r| r.at_recast_tile()) {
            out.push(format!(
                "Wall time, tessera at Recast's tile size / Recast: {lo:.2} to {hi:.2}."
            ));
        }
    } else if !rows.is_empty() {
        out.push(
            "tessera's own tile size was Recast's on every scene: one tessera run per scene."
                .to_string(),
        );
    }
    if let Some(big) = rows
        .iter()
        .filter(|r| r.tessera.ok() && r.recast.ok())
        .max_by(|a, b| a.area_m2.total_cmp(&b.area_m2))
    {
        out.push(format!(
            "On the largest scene both sides finished ({}): tessera {:.2}x Recast's wall time \
             ({:.2}x at Recast's tile size) and {:.1}x its peak RSS ({:.1} vs {:.1} MiB).",
            big.scene,
            big.tessera.best() / big.recast.best(),
            big.at_recast_tile().best() / big.recast.best(),
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
    out.extend(failures(rows));
    out
}

/// One line per run variant that failed: who, where, and how.
pub fn failures(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        let sides = [
            ("tessera", Some(&r.tessera)),
            (
                "tessera at Recast's tile size",
                r.tessera_recast_tile.as_ref(),
            ),
            (
                "tessera under the small budget",
                r.tessera_budget.as_ref().map(|(_, s)| s),
            ),
            ("Recast", Some(&r.recast)),
        ];
        for (who, side) in sides {
            if let Some(f) = side.and_then(|s| s.failure.as_ref()) {
                out.push(format!("{who} on {} failed: {f}.", r.scene));
            }
        }
    }
    out
}

/// Seconds per million triangles and per square kilometre on the citygen worlds, smallest to
/// largest: the scale figure. Empty when fewer than one city was measured.
pub fn scale_table(rows: &[Row]) -> String {
    let mut cities: Vec<&Row> = rows
        .iter()
        .filter(|r| r.scene.starts_with("citygen"))
        .collect();
    if cities.is_empty() {
        return String::new();
    }
    cities.sort_by(|a, b| a.area_m2.total_cmp(&b.area_m2));
    let mut s = String::from(
        "| world | km^2 | M triangles | tessera s | tessera s / M tri | tessera s / km^2 | at \
         Recast's tile: s / M tri | at Recast's tile: s / km^2 | Recast s | Recast s / M tri | \
         Recast s / km^2 | tessera / Recast |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    let per = |side: &Side, by: f64| {
        if side.ok() && by > 0.0 {
            format!("{:.2}", side.best() / by)
        } else {
            "-".to_string()
        }
    };
    for r in &cities {
        let (km2, mtri) = (r.area_m2 / 1e6, r.triangles as f64 / 1e6);
        let at = r.at_recast_tile();
        s += &format!(
            "| {} | {:.4} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.scene,
            km2,
            mtri,
            r.tessera.time_cell(),
            per(&r.tessera, mtri),
            per(&r.tessera, km2),
            per(at, mtri),
            per(at, km2),
            r.recast.time_cell(),
            per(&r.recast, mtri),
            per(&r.recast, km2),
            fmt_ratio(&r.tessera, &r.recast),
        );
    }
    // Flatness: the largest world's seconds per million triangles over the smallest's.
    let spread = |f: &dyn Fn(&Row) -> &Side| {
        let v: Vec<f64> = cities
            .iter()
            .filter(|r| f(r).ok() && r.triangles > 0)
            .map(|r| f(r).best() / (r.triangles as f64 / 1e6))
            .collect();
        match (v.first(), v.last()) {
            (Some(a), Some(b)) if v.len() > 1 && *a > 0.0 => format!("x{:.2}", b / a),
            _ => "-".to_string(),
        }
    };
    if cities.len() > 1 {
        s += &format!(
            "\nSeconds per million triangles, largest world measured over smallest (1.00: \
             flat): tessera {}, tessera at Recast's tile {}, Recast {}.\n",
            spread(&|r| &r.tessera),
            spread(&|r| r.at_recast_tile()),
            spread(&|r| &r.recast)
        );
    }
    s
}

/// Warnings when the two sides do not describe about the same walkable surface.
pub fn sanity(results: &[SettingResult]) -> Vec<String> {
    let mut out = Vec::new();
    for res in results {
        for r in &res.rows {
            if !(r.tessera.ok() && r.recast.ok()) {
                continue;
            }
            let t = r.tessera.num(&["navmesh_area_m2"]).unwrap_or(0.0);
            let c = r.recast.num(&["walkable_area_m2"]).unwrap_or(0.0);
            if c > 0.0 && ((t - c) / c).abs() > 0.1 {
                out.push(format!(
                    "{} ({}, detail {}): walkable areas differ by {:+.1}% (tessera {t:.0} m^2, \
                     Recast {c:.0} m^2)",
                    r.scene,
                    res.setting.name,
                    res.detail.word(),
                    (t - c) / c * 100.0
                ));
            }
            let tp = r.tessera.num(&["polygons"]).unwrap_or(0.0);
            let cp = r.recast.num(&["polygons"]).unwrap_or(0.0);
            if cp > 0.0 && !(0.2..=5.0).contains(&(tp / cp)) {
                out.push(format!(
                    "{} ({}, detail {}): polygon counts differ by more than 5x (tessera {tp}, \
                     Recast {cp})",
                    r.scene,
                    res.setting.name,
                    res.detail.word()
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
    pub xl_repeat: usize,
    pub budget: Option<&'a str>,
    pub budget_scenes: &'a [String],
    pub plot: Option<&'a str>,
    pub plot_has_text: bool,
    pub plot_detail: Option<Detail>,
    pub parent_rss_bytes: u64,
    pub mem_available_bytes: Option<u64>,
    pub city_note: &'a str,
    pub warnings: &'a [String],
    pub elapsed: Duration,
}

/// The tool's part of the results file. It ends with [`KEEP_MARKER`]; the caller appends the
/// hand-written sections of the previous file ([`kept_sections`]).
pub fn results_file(info: &FileInfo, results: &[SettingResult]) -> String {
    let mut s = String::from("# Full bakes: tessera vs Recast, side by side\n\n");
    let xl = if info.xl_repeat != info.repeat {
        format!(" ({} on citygen XL)", info.xl_repeat)
    } else {
        String::new()
    };
    s += &format!(
        "Written by `{}` (see `benches/recast-compare/README.md`). Measured {}. tessera binary: \
         {}. Each side ran in its own process, {} threads each, {} run(s) per scene and \
         variant{xl}, the variants of a scene taking turns (the order rotating between \
         repeats); times are the best run, memory the largest peak over the runs. The whole \
         run took {}{}.\n\n",
        info.command,
        info.stamp,
        info.tessera_binary,
        info.threads,
        info.repeat,
        match info.elapsed.as_secs_f64() {
            t if t < 120.0 => format!("{t:.0} s"),
            t => format!("{:.0} minutes", t / 60.0),
        },
        info.mem_available_bytes
            .map(|b| format!(
                "; {:.1} GiB of memory were available when it started",
                b as f64 / (1u64 << 30) as f64
            ))
            .unwrap_or_default(),
    );
    s += "**Two modes.** *Detail mesh on both sides* (the headline): Recast runs \
          `rcBuildPolyMeshDetail` with RecastDemo's 6-cell sample distance and 1-voxel error and \
          hands the detail mesh to `dtCreateNavMeshData`; tessera samples its height detail at \
          the same distances (`[polygons] detail_sample_distance` = 6 cells, \
          `detail_max_error` = 1 cell height). *No detail mesh on either side*: Recast skips \
          `rcBuildPolyMeshDetail` and Detour gets no detail mesh; tessera's \
          `detail_sample_distance` is 0. In both modes Recast ends each tile with \
          `dtCreateNavMeshData` and tessera with its navmesh file.\n\n\
          **Two tessera tile sizes.** tessera's output does not depend on its tile size, so it \
          runs at the tile size its config gives (*tessera*) and at Recast's \
          (`--tile-size`, *at Recast's tile*); `same` in a column means the two were equal and \
          it ran once. Recast always runs at its own tile size.\n\n";
    let mut modes: Vec<Detail> = Vec::new();
    for r in results {
        if !modes.contains(&r.detail) {
            modes.push(r.detail);
        }
    }
    for mode in &modes {
        s += &format!("## {}\n\n", mode.heading());
        for res in results.iter().filter(|r| r.detail == *mode) {
            s += &format!(
                "### Setting `{}`, detail {}\n\n",
                res.setting.name,
                mode.word()
            );
            s += &format!("{}.\n\n", res.setting.describe());
            if mode.is_on() {
                s += &format!("{}\n\n", res.setting.detail_note());
            }
            for n in &res.setting.notes {
                s += &format!("{n}\n\n");
            }
            s += &main_table(&res.rows);
            s.push('\n');
            for line in summary_lines(&res.rows) {
                s += &format!("* {line}\n");
            }
            let budget = budget_table(&res.rows);
            if !budget.is_empty() {
                s += "\ntessera under a small memory budget (`--memory-budget`), next to its run \
                      at the default budget (half the available memory):\n\n";
                s += &budget;
            }
            s += "\nWhere the time goes (each process's own clock), and more counts:\n\n";
            s += &detail_table(&res.rows);
            s.push('\n');
        }
    }
    let any_city = results
        .iter()
        .any(|r| r.rows.iter().any(|row| row.scene.starts_with("citygen")));
    if any_city {
        s += "## Scale: seconds per million triangles and per km^2\n\n\
              From the same run: each citygen world's best wall time divided by its triangles \
              (millions) and by its plan area (km^2). Flat columns from the smallest world to \
              the largest mean the time grows linearly with the world.\n\n";
        for mode in &modes {
            for res in results.iter().filter(|r| r.detail == *mode) {
                s += &format!(
                    "### Setting `{}`, detail {}\n\n",
                    res.setting.name,
                    mode.word()
                );
                s += &scale_table(&res.rows);
                s.push('\n');
            }
        }
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
    if let (Some(plot), Some(detail)) = (info.plot, info.plot_detail) {
        s += "## Plot\n\n";
        s += &format!("![wall time, peak RSS and seconds per million triangles]({plot})\n\n");
        s += &format!(
            "Detail {} (the first mode of the run), tessera at its own tile size. Left: wall \
             time [s] against the scene's plan area [m^2]; middle: peak RSS [MiB] against the \
             same area; right: seconds per million triangles against the area, citygen worlds \
             only (flat is linear scaling); all axes logarithmic. tessera is blue, Recast red; \
             filled circles are the first setting, open triangles the second (if run).",
            detail.word()
        );
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
           which its own `seconds.total` leaves out. The *where the time goes* tables split \
           the time by each process's own clock.\n\
         * **tessera / Recast**: the ratio of the best wall times, tessera at its own tile \
           size, and at Recast's.\n\
         * **peak RSS**: `ru_maxrss` of the child from `wait4`, i.e. the largest resident set \
           the process had, file-backed pages included (tessera memory-maps its scene and \
           cache). Linux carries the parent's own high-water mark into a child until it execs, \
           so the floor of this figure is the harness's own peak, {:.1} MiB here. The \
           self-reported columns are `VmHWM` (and tessera's sampled anonymous memory) read by \
           each process itself; tessera reads them at the end of its pipeline, before the \
           preview and the report, so on small scenes they are below `ru_maxrss`. A run that \
           failed shows its peak when it stopped.\n\
         * **polygons, vertices**: tessera's navmesh (`polygons`, `polygon_vertices`: distinct \
           vertices of the whole mesh). Recast: `npolys` and `nverts` of every tile's \
           `rcPolyMesh`, summed: a vertex on a tile border counts once per tile.\n\
         * **detail vertices**: vertices the height detail adds beyond the polygons' own \
           (tessera's `detail_vertices`; Recast: each polygon's detail sub-mesh vertices less \
           its own, summed, which is what Detour stores). 0 with detail off.\n\
         * **walkable m^2**: plan area of the polygons on both sides (tessera's \
           `navmesh_area_m2`; Recast: shoelace over each polygon's x-z vertices). tessera's \
           area of walkable cells before simplification is in the second table.\n\
         * **regions**: tessera's regions merged across tiles (layered mode); Recast's distinct \
           region ids among each tile's polygons, summed over tiles (a region cut by tile \
           borders counts once per tile).\n\
         * **navmesh bytes**: tessera's `navmesh.tsn`; Recast: the Detour tile data of every \
           tile (`dtCreateNavMeshData`), summed.\n\
         * **islands dropped**: tessera's connected parts of the navmesh (over portals and \
           links) smaller than `[polygons] min_island_area` (30 m^2 by default: crate, kiosk and \
           canopy tops no agent can climb onto), dropped with their polygons; no seeds are \
           given. Recast drops regions under `minRegionArea` instead (not counted here).\n\n",
        info.parent_rss_bytes as f64 / (1024.0 * 1024.0)
    );
    let budget_note = match info.budget {
        Some(b) if !info.budget_scenes.is_empty() => format!(
            "tessera runs with its default memory budget (half the available memory), and on \
             {} once more under `--memory-budget {b}`",
            info.budget_scenes.join(", ")
        ),
        _ => "tessera runs with its default memory budget (half the available memory)".to_string(),
    };
    s += "## What is and is not compared\n\n\
          * **Same input, same grid settings.** Both read the same OBJ files; cell size, cell \
            height, agent height, radius, climb and slope come from the same tessera config, \
            converted once to voxel units by tessera's config crate (`ceil` for height and \
            radius, `floor` for the climb, as RecastDemo rounds) and handed to Recast as those \
            integers. Recast's tile border is RecastDemo's (`walkableRadius + 3` cells), which \
            is also tessera's band. Recast's tile size is the setting's; tessera runs at its \
            own and at Recast's.\n\
          * **Recast runs as RecastDemo's tile mesh sample builds a tile** \
            (`Sample_TileMesh::buildTileMesh`): heightfield over the tile grown by the border, \
            mark walkable triangles, rasterize, the three filters, compact heightfield, \
            erosion, distance field, watershed regions, contours, `rcBuildPolyMesh`, then (detail \
            on) `rcBuildPolyMeshDetail` with `detailSampleDist` = 6 x cell size and \
            `detailSampleMaxError` = 1 x cell height, the compact heightfield freed only after \
            it, and `dtCreateNavMeshData` with the tile's parameters filled as RecastDemo fills \
            them (polygon and detail meshes, agent height, radius and climb in metres, tile x \
            and y, the polygon mesh's bounds, cell size and height, `buildBvTree`; every \
            polygon area 0 and flag 1, RecastDemo's ground and walk; no off-mesh links). Tiles \
            run on N threads (a shared tile counter). Its grid is RecastDemo's \
            (`rcCalcGridSize` on the mesh bounds). RecastDemo's chunky triangle mesh is \
            replaced by a list of triangles per tile whose bounding boxes overlap the grown \
            tile, which gives Recast the same or fewer triangles to rasterize. Its OBJ reader \
            streams the file instead of reading it whole as RecastDemo's does. Each tile's \
            navmesh data is kept until the end, standing in for `dtNavMesh::addTile` (which \
            would also link the tiles); the counts in the tables are read from each tile's \
            meshes before they are freed, inside the timed build; nothing is written to \
            disk.\n\
          * **Height detail.** Both sides sample heights at the same distances, but not the \
            same way: Recast samples each polygon's edges and interior and triangulates the \
            samples per polygon (its detail meshes stop at tile borders); tessera's detail \
            (seed 004) is sampled from its own heightfield along polygon edges and across \
            their surface and is shared across tiles. The detail vertex counts show the order \
            of magnitude, not the same surface.\n\
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
            tile pack, span and region journals; fsynced checkpoints) and writes its navmesh \
            file, preview and report, so a bake can resume and stay within a memory budget; \
            Recast keeps everything in memory and holds the whole mesh.\n";
    s += &format!(
        "* **Memory budget.** {budget_note}; Recast has no budget: it needs the whole mesh and \
         every tile's navmesh data in memory, and a run the system could not hold would show \
         as failed with its peak when it stopped.\n\
         * **Not measured**: linking Detour's tiles (`addTile`), path queries (see \
           `RESULTS-queries.md`), off-mesh links.\n\n"
    );
    s += &format!("**Scenes.** {}\n\n", info.city_note);
    s += KEEP_MARKER;
    s.push('\n');
    s
}

/// The headings `full` writes at level 2, by their start: any other `## ` section of an old
/// results file was written by hand.
const TOOL_HEADINGS: [&str; 9] = [
    "Setting `",
    "Detail mesh on both sides",
    "No detail mesh on either side",
    "Scale: ",
    "Warnings from the sanity checks",
    "Plot",
    "What the columns are",
    "What is and is not compared",
    "tessera under a",
];

/// Writes `text` (a tool's part, ending with [`KEEP_MARKER`]) to `out`, followed by the
/// sections a person added below the marker of the file it replaces.
pub fn write_keeping(out: &std::path::Path, text: String) -> Result<(), String> {
    let kept = std::fs::read_to_string(out)
        .map(|old| kept_sections(&old))
        .unwrap_or_default();
    let text = if kept.is_empty() {
        text
    } else {
        format!("{text}\n{kept}")
    };
    std::fs::write(out, text).map_err(|e| format!("{}: {e}", out.display()))
}

/// The hand-written part of a previous results file: everything after [`KEEP_MARKER`] if it
/// has one; else (a file from before the marker) every `## ` section whose heading is not one
/// `full` writes, in their order. Lines inside code fences are never taken for headings.
pub fn kept_sections(old: &str) -> String {
    if let Some(at) = old.find(KEEP_MARKER) {
        let rest = &old[at + KEEP_MARKER.len()..];
        return rest.trim_start_matches(['\r', '\n']).to_string();
    }
    let mut kept = String::new();
    let mut keeping = false;
    let mut fenced = false;
    for line in old.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced {
            if let Some(h) = line.strip_prefix("## ") {
                keeping = !TOOL_HEADINGS.iter().any(|t| h.starts_with(t));
            } else if line.starts_with("# ") {
                keeping = false;
            }
        }
        if keeping {
            kept += line;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_written_sections_are_kept_below_the_marker() {
        let old = format!(
            "# Full bakes\n\nold tables\n\n## Plot\n\npicture\n\n{KEEP_MARKER}\n\n\
             ## A profile\n\nby hand\n\n## Changes\n\nmore\n"
        );
        assert_eq!(
            kept_sections(&old),
            "## A profile\n\nby hand\n\n## Changes\n\nmore\n"
        );
    }

    #[test]
    fn hand_written_sections_of_an_older_file_are_found_by_heading() {
        let old = "# Full bakes: tessera vs Recast\n\nintro\n\n## A profile (2026)\n\n\
                   ```sh\n## not a heading\n```\n\ntext\n\n## Setting `recast-demo`\n\n\
                   | table |\n\n## Plot\n\n![p](p.png)\n\n## Notes\n\nkeep me\n";
        assert_eq!(
            kept_sections(old),
            "## A profile (2026)\n\n```sh\n## not a heading\n```\n\ntext\n\n\
             ## Notes\n\nkeep me\n"
        );
        assert_eq!(kept_sections("# Title\n\n## Plot\n\nx\n"), "");
    }

    #[test]
    fn settings_take_recast_tile_and_detail_distances() {
        let s = Setting::new("recast-demo@48", RECAST_EDGE_MAX_LEN_M).unwrap();
        assert_eq!(s.name, "recast-demo");
        assert_eq!(s.recast.tile_size, 48);
        assert!(!s.recast.detail && s.recast_for(Detail::On).detail);
        assert!((s.recast.detail_sample_dist - 1.8).abs() < 1e-6);
        assert!((s.recast.detail_sample_max_error - 0.2).abs() < 1e-6);
        // The detail-off config is what `config` holds; the files differ only in detail.
        assert_eq!(s.config.polygons.detail_sample_distance, 0.0);
        let on = BakeConfig::load(&s.tessera_config(Detail::On).display().to_string()).unwrap();
        assert_eq!(on.polygons.detail_sample_distance, 1.8);
        assert_eq!(on.polygons.detail_max_error, 0.2);
        assert_eq!(on.voxel, s.config.voxel);
        assert_eq!(on.agent, s.config.agent);
        // The tile size is written as the preset spells it, not copied from Recast's.
        let text = std::fs::read_to_string(s.tessera_config(Detail::On)).unwrap();
        let table: toml::Table = text.parse().unwrap();
        let preset: toml::Table = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../configs/recast-demo.toml"
        ))
        .unwrap()
        .parse()
        .unwrap();
        assert_eq!(
            table["voxel"].get("tile_size"),
            preset["voxel"].get("tile_size")
        );
        // Without `@`, Recast's tile is the preset's when it is a number.
        if let Some(t) = preset["voxel"]
            .get("tile_size")
            .and_then(|v| v.as_integer())
        {
            let plain = Setting::new("recast-demo", RECAST_EDGE_MAX_LEN_M).unwrap();
            assert_eq!(plain.recast.tile_size as i64, t);
        }
        assert!(Setting::new("recast-demo@x", RECAST_EDGE_MAX_LEN_M).is_err());
    }
}
