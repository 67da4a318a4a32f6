//! The real `tessera` binary, driven in temporary folders: what scripts and newcomers rely on
//! (exit codes, messages naming the file and line or field, summary.json, JSON logs, the
//! memory budget).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tessera_test_support::bake_folder::{assert_same_bake, Same};

mod common;

use common::{stderr, tessera};

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).expect("summary.json")).unwrap()
}

/// A small walkable OBJ: a 20 m x 20 m floor with a box on it (Z-up).
fn small_obj(path: &Path) {
    std::fs::write(
        path,
        "v 0 0 0\nv 20 0 0\nv 20 20 0\nv 0 20 0\nf 1 2 3 4\n\
         v 5 5 0\nv 7 5 0\nv 7 7 0\nv 5 7 0\nv 5 5 1\nv 7 5 1\nv 7 7 1\nv 5 7 1\n\
         f 9 10 11 12\nf 5 6 10\nf 5 10 9\n",
    )
    .unwrap();
}

/// Writes [`small_obj`] as `s.obj` in `dir` and bakes it into `dir/b`.
fn bake_small(dir: &Path) -> Output {
    small_obj(&dir.join("s.obj"));
    let o = tessera(
        &["bake", "s.obj", "--out", "b", "--log-format", "quiet"],
        dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

#[test]
fn bake_without_arguments_bakes_the_demo_world() {
    let dir = tempfile::tempdir().unwrap();
    let o = tessera(&["bake", "--log-format", "quiet"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("tessera-out/demo");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("tessera-out/demo"),
        "the summary names the folder: {stdout}"
    );
    let s = summary(&out);
    for field in [
        "triangles",
        "tiles",
        "spans",
        "walkable_spans",
        "regions",
        "contours",
        "contour_vertices",
        "peak_rss_bytes",
        "peak_anon_bytes",
        "threads",
        "memory_budget_bytes",
    ] {
        assert!(s[field].as_u64().is_some_and(|v| v > 0), "{field} in {s}");
    }
    assert!(
        s["seconds"]["voxelize"].as_f64().is_some() && s["seconds"]["total"].as_f64().is_some()
    );
    assert!(s["walkable_spans"].as_u64() < s["spans"].as_u64());
    assert!(
        s["walkable_area_m2"].as_f64().unwrap() > 1000.0,
        "the demo world has streets: {s}"
    );
}

#[test]
fn malformed_obj_is_refused_with_path_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("broken.obj");
    std::fs::write(&obj, "v 0 0 0\nv 1 0 0\nv 1 1 0\n# fine so far\nf 1 2 7\n").unwrap();
    let o = tessera(&["bake", "broken.obj", "--log-format", "quiet"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    let e = stderr(&o);
    assert!(
        e.contains("broken.obj:5") && e.contains("out of range"),
        "{e}"
    );
}

#[test]
fn empty_and_unwalkable_scenes_say_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.obj"), "# nothing here\n").unwrap();
    let o = tessera(&["bake", "empty.obj", "--log-format", "quiet"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("empty"), "{}", stderr(&o));

    std::fs::write(
        dir.path().join("degenerate.obj"),
        "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n",
    )
    .unwrap();
    let o = tessera(
        &["bake", "degenerate.obj", "--log-format", "quiet"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("empty") && stderr(&o).contains("1 degenerate"),
        "{}",
        stderr(&o)
    );

    // A wall alone: geometry, but nothing to stand on.
    std::fs::write(
        dir.path().join("wall.obj"),
        "v 0 0 0\nv 5 0 0\nv 5 0 3\nv 0 0 3\nf 1 2 3 4\n",
    )
    .unwrap();
    let o = tessera(&["bake", "wall.obj", "--log-format", "quiet"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("no walkable"), "{}", stderr(&o));
}

#[test]
fn bad_config_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    small_obj(&dir.path().join("s.obj"));
    std::fs::write(dir.path().join("bad.toml"), "[voxel]\ncell_size = 0.0\n").unwrap();
    let o = tessera(&["bake", "s.obj", "--config", "bad.toml"], dir.path());
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).contains("bad.toml") && stderr(&o).contains("voxel.cell_size"),
        "{}",
        stderr(&o)
    );

    let o = tessera(&["bake", "s.obj", "--tile-size", "0"], dir.path());
    assert_eq!(o.status.code(), Some(4));
    assert!(stderr(&o).contains("voxel.tile_size"), "{}", stderr(&o));

    let o = tessera(&["bake", "s.obj", "--config", "S9"], dir.path());
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).contains("S9") && stderr(&o).contains("recast-demo"),
        "{}",
        stderr(&o)
    );

    let o = tessera(&["bake", "s.obj", "--memory-budget", "lots"], dir.path());
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_failed_bake_leaves_the_previous_outputs_alone() {
    let dir = tempfile::tempdir().unwrap();
    small_obj(&dir.path().join("good.obj"));
    let o = tessera(
        &["bake", "good.obj", "--out", "out", "--log-format", "quiet"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(dir.path().join("out/summary.json")).unwrap();
    std::fs::write(dir.path().join("bad.obj"), "v 0 0 0\nv 1 nope 0\n").unwrap();
    let o = tessera(
        &["bake", "bad.obj", "--out", "out", "--log-format", "quiet"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        std::fs::read(dir.path().join("out/summary.json")).unwrap(),
        before
    );
    // No temporary files left behind in the output folder.
    let leftovers: Vec<PathBuf> = walk(&dir.path().join("out"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn json_log_lines_parse_and_carry_the_fields() {
    let dir = tempfile::tempdir().unwrap();
    small_obj(&dir.path().join("s.obj"));
    let o = tessera(
        &["bake", "s.obj", "--log-format", "json", "--tile-size", "32"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stderr(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect();
    assert!(lines.len() >= 6, "{lines:?}");
    for l in &lines {
        for f in [
            "event",
            "stage",
            "done",
            "total",
            "rss_bytes",
            "anon_bytes",
            "elapsed_s",
        ] {
            assert!(l.get(f).is_some(), "{f} missing in {l}");
        }
    }
    let stages: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"] == "done")
        .map(|l| l["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        stages,
        ["ingest", "bin", "voxelize", "merge", "polygons", "preview"]
    );

    // A failure is a JSON line too, with the exit code.
    let o = tessera(&["bake", "missing.obj", "--log-format", "json"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    let last: serde_json::Value = serde_json::from_str(stderr(&o).lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "error");
    assert_eq!(last["exit_code"], 3);
    assert!(last["message"].as_str().unwrap().contains("missing.obj"));
}

#[test]
fn a_budget_too_small_for_one_tile_is_refused_with_the_minimum() {
    let dir = tempfile::tempdir().unwrap();
    small_obj(&dir.path().join("s.obj"));
    let o = tessera(
        &[
            "bake",
            "s.obj",
            "--memory-budget",
            "64KiB",
            "--log-format",
            "quiet",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(5));
    assert!(stderr(&o).contains("minimum"), "{}", stderr(&o));
}

/// Writes a rolling terrain of `n x n` quads (2 n^2 triangles), 0.5 m apart, as OBJ.
fn terrain_obj(path: &Path, n: usize) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for y in 0..=n {
        for x in 0..=n {
            let (fx, fy) = (x as f64 * 0.5, y as f64 * 0.5);
            let z = (fx * 0.05).sin() * 2.0 + (fy * 0.07).cos() * 1.5;
            writeln!(w, "v {fx:.3} {fy:.3} {z:.4}").unwrap();
        }
    }
    let id = |x: usize, y: usize| y * (n + 1) + x + 1;
    for y in 0..n {
        for x in 0..n {
            writeln!(w, "f {} {} {}", id(x, y), id(x + 1, y), id(x + 1, y + 1)).unwrap();
            writeln!(w, "f {} {} {}", id(x, y), id(x + 1, y + 1), id(x, y + 1)).unwrap();
        }
    }
}

#[test]
#[ignore = "slow: a generated scene larger than the budget (about 8 s)"]
fn a_32_mib_budget_holds_on_a_scene_larger_than_it() {
    let dir = tempfile::tempdir().unwrap();
    let n = 720; // 1 036 800 triangles: 37 MB as f32 triangles alone
    terrain_obj(&dir.path().join("big.obj"), n);
    let triangles = bake_big_at_32_mib(dir.path(), "big.obj", n);
    assert!(
        triangles * 36 > 32 << 20,
        "the triangles alone exceed the budget"
    );
}

/// Bakes `file` (in `dir`, [`terrain_obj`]'s grid of `n` cells a side) at a 32 MiB budget and
/// checks the summary: every triangle read, peak anonymous memory within the budget and its
/// margin, nothing reserved past it. Returns the triangles.
fn bake_big_at_32_mib(dir: &Path, file: &str, n: usize) -> u64 {
    let o = tessera(
        &[
            "bake",
            file,
            "--memory-budget",
            "32MiB",
            "--threads",
            "2",
            "--tile-size",
            "128",
            "--log-format",
            "quiet",
        ],
        dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let s = summary(&dir.join("tessera-out").join(stem));
    let triangles = s["triangles"].as_u64().unwrap();
    assert_eq!(triangles, 2 * (n * n) as u64);
    let anon = s["peak_anon_bytes"].as_u64().unwrap();
    assert!(
        anon > 0 && anon <= (32 + 16) << 20,
        "peak anonymous memory {} MiB",
        anon >> 20
    );
    assert!(s["peak_reserved_bytes"].as_u64().unwrap() <= 32 << 20);
    triangles
}

/// [`terrain_obj`]'s grid as a GLB: one indexed triangle list (f32 positions, u32 indices).
fn terrain_glb(path: &Path, n: usize) {
    let mut bin: Vec<u8> = Vec::new();
    for y in 0..=n {
        for x in 0..=n {
            let (fx, fy) = (x as f64 * 0.5, y as f64 * 0.5);
            let z = (fx * 0.05).sin() * 2.0 + (fy * 0.07).cos() * 1.5;
            // glTF is Y-up: the terrain's up (z) goes to y, its y to -z.
            for c in [fx as f32, z as f32, -fy as f32] {
                bin.extend(c.to_le_bytes());
            }
        }
    }
    let positions = bin.len();
    let id = |x: usize, y: usize| (y * (n + 1) + x) as u32;
    for y in 0..n {
        for x in 0..n {
            for i in [id(x, y), id(x + 1, y), id(x + 1, y + 1)] {
                bin.extend(i.to_le_bytes());
            }
            for i in [id(x, y), id(x + 1, y + 1), id(x, y + 1)] {
                bin.extend(i.to_le_bytes());
            }
        }
    }
    let vertices = (n + 1) * (n + 1);
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1,"mode":4}}]}}],
"buffers":[{{"byteLength":{len}}}],
"bufferViews":[{{"buffer":0,"byteLength":{positions}}},{{"buffer":0,"byteOffset":{positions},"byteLength":{indices}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":{vertices},"type":"VEC3","min":[0,-2,-{side}],"max":[{side},2,0]}},
{{"bufferView":1,"componentType":5125,"count":{count},"type":"SCALAR"}}]}}"#,
        len = bin.len(),
        indices = bin.len() - positions,
        count = 6 * n * n,
        side = n as f64 * 0.5,
    );
    tessera_test_support::gltf::Gltf { json, bin }.write_glb(path);
}

#[test]
#[ignore = "slow: a generated glTF scene larger than the budget (about 8 s)"]
fn a_32_mib_budget_holds_on_a_gltf_scene_larger_than_it() {
    // The file is mapped and read in place: its buffer is never copied, nor a primitive's
    // positions and indices (which alone would take the budget).
    let dir = tempfile::tempdir().unwrap();
    let n = 720; // 1 036 800 triangles, 519 841 vertices: an 18.7 MB GLB
    terrain_glb(&dir.path().join("big.glb"), n);
    bake_big_at_32_mib(dir.path(), "big.glb", n);
}

/// A copy of the bake folder `from` at `to`, to compare a later bake into `from` against.
fn snapshot(from: &Path, to: &Path) -> PathBuf {
    for entry in walk(from) {
        let target = to.join(entry.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &target).unwrap();
    }
    to.to_path_buf()
}

fn flip_middle_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    std::fs::write(path, &bytes).unwrap();
}

/// The largest file in `dir` (a segment of a journal).
fn largest_file(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap()
}

const RESUME_ARGS: [&str; 6] = [
    "bake",
    "--config",
    "def",
    "--tile-size",
    "48",
    "--log-format",
];

#[test]
#[ignore = "slow: kills and resumes bakes at many points (about 20 s)"]
fn killed_bakes_resume_to_identical_bytes() {
    let dir = tempfile::tempdir().unwrap();
    common::kill_and_resume(dir.path(), &RESUME_ARGS);
}

#[test]
#[ignore = "slow: bakes interrupted by SIGTERM and resumed (about 10 s)"]
fn sigterm_stops_with_checkpoints_that_resume() {
    let dir = tempfile::tempdir().unwrap();
    let o = tessera(
        &[&RESUME_ARGS[..], &["quiet", "--out", "whole"]].concat(),
        dir.path(),
    );
    assert!(o.status.success());
    let want = dir.path().join("whole");
    let child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args([&RESUME_ARGS[..], &["json", "--out", "term"]].concat())
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until voxelization is under way, then ask it to stop.
    let pid = child.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !dir.path().join("term/work/spans").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(130) {
        assert!(err.contains("interrupted"), "{err}");
        assert!(
            !dir.path().join("term/summary.json").exists(),
            "an interrupted bake writes no summary"
        );
    } else {
        // It finished before the signal arrived: still a valid bake.
        assert!(o.status.success(), "{err}");
    }
    let o = tessera(
        &[&RESUME_ARGS[..], &["quiet", "--out", "term"]].concat(),
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let got = dir.path().join("term");
    assert_same_bake(&want, &got, Same::Tiling, "stopped by SIGTERM and resumed");
}

/// Runs `tessera args` in `cwd` with JSON logs, sends SIGTERM when a log line on stderr
/// satisfies `now`, and returns its exit status and the whole log.
fn sigterm_when(
    args: &[&str],
    cwd: &Path,
    now: impl Fn(&str) -> bool,
) -> (std::process::ExitStatus, String) {
    let (status, log, _) = sigterm_timed(args, cwd, now);
    (status, log)
}

/// [`sigterm_when`], also returning how long the process took to end after the signal
/// (None: no line asked for it).
fn sigterm_timed(
    args: &[&str],
    cwd: &Path,
    now: impl Fn(&str) -> bool,
) -> (
    std::process::ExitStatus,
    String,
    Option<std::time::Duration>,
) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = String::new();
    let mut sent = None;
    for line in std::io::BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if sent.is_none() && now(&line) {
            Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .unwrap();
            sent = Some(std::time::Instant::now());
        }
        log.push_str(&line);
        log.push('\n');
    }
    let status = child.wait().unwrap();
    (status, log, sent.map(|t| t.elapsed()))
}

#[test]
#[ignore = "slow: the demo world baked six times, stopped in each stage (about 25 s)"]
fn sigterm_in_every_stage_stops_within_a_second_and_the_bake_resumes() {
    // Issue 21, class 5: every stage stops within a second of SIGTERM with exit 130 and its
    // checkpoints intact; the bake resumed after a stop in each stage in turn gives the bytes
    // of one never stopped. (Ingest: `sigterm_while_the_scene_is_read_stops_ingest`.)
    let dir = tempfile::tempdir().unwrap();
    let args =
        |log: &'static str, out: &'static str| [&RESUME_ARGS[..], &[log, "--out", out]].concat();
    let o = tessera(&args("quiet", "whole"), dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    // Each signal goes when its stage (or phase) announces itself; the stages before it are
    // reused from the last stop's checkpoints or redone.
    let stops: [(&str, &[&str]); 5] = [
        ("binning", &["\"event\":\"start\"", "\"stage\":\"bin\""]),
        (
            "voxelizing",
            &["\"event\":\"start\"", "\"stage\":\"voxelize\""],
        ),
        ("polygonizing", &["\"message\":\"regions, pass 1\""]),
        ("matching portals", &["\"message\":\"navmesh file: portals"]),
        (
            "renumbering",
            &["\"message\":\"navmesh file: renumbering\""],
        ),
    ];
    let mut lags = Vec::new();
    for (stage, marks) in stops {
        let (status, log, lag) = sigterm_timed(&args("json", "term"), dir.path(), |line| {
            marks.iter().all(|m| line.contains(m))
        });
        let lag = lag.unwrap_or_else(|| panic!("{stage}: never announced\n{log}"));
        assert_eq!(status.code(), Some(130), "{stage}: {log}");
        assert!(log.contains("interrupted"), "{stage}: {log}");
        assert!(
            !dir.path().join("term/summary.json").exists(),
            "{stage}: an interrupted bake writes no summary"
        );
        lags.push((stage, lag));
    }
    eprintln!("time from SIGTERM to exit: {lags:?}");
    for (stage, lag) in &lags {
        assert!(
            *lag < std::time::Duration::from_secs(1),
            "stopped {lag:?} after SIGTERM while {stage} (all: {lags:?})"
        );
    }
    let o = tessera(&args("quiet", "term"), dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_bake(
        &dir.path().join("whole"),
        &dir.path().join("term"),
        Same::Tiling,
        "stopped in every stage in turn and resumed",
    );
}

#[test]
#[ignore = "slow: a generated 1 M-triangle scene read until a signal (about 5 s)"]
fn sigterm_while_the_scene_is_read_stops_ingest() {
    let dir = tempfile::tempdir().unwrap();
    terrain_obj(&dir.path().join("big.obj"), 720);
    // The signal goes as soon as the triangles are being read.
    let (status, log, lag) = sigterm_timed(
        &["bake", "big.obj", "--log-format", "json", "--out", "o"],
        dir.path(),
        |line| line.contains("\"message\":\"triangles\""),
    );
    assert_eq!(status.code(), Some(130), "{log}");
    let lag = lag.expect("the triangles were announced");
    assert!(lag < std::time::Duration::from_secs(1), "{lag:?}");
    assert!(
        !log.contains("\"stage\":\"bin\""),
        "stopped in ingest, before binning: {log}"
    );
    assert!(!dir.path().join("o/work/scene.cache").exists());
}

#[test]
#[ignore = "slow: two bakes of the demo world through the CLI (about 8 s)"]
fn sigterm_in_the_polygon_stage_stops_it_and_the_bake_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let o = tessera(
        &[&RESUME_ARGS[..], &["quiet", "--out", "whole"]].concat(),
        dir.path(),
    );
    assert!(o.status.success());
    // The signal goes as soon as the polygon stage announces itself.
    let (status, log) = sigterm_when(
        &[&RESUME_ARGS[..], &["json", "--out", "term"]].concat(),
        dir.path(),
        |line| line.contains("\"event\":\"start\"") && line.contains("\"stage\":\"polygons\""),
    );
    assert_eq!(status.code(), Some(130), "{log}");
    assert!(log.contains("interrupted"), "{log}");
    let term = dir.path().join("term");
    assert!(!term.join("navmesh.tsn").exists() && !term.join("summary.json").exists());
    let o = tessera(
        &[&RESUME_ARGS[..], &["quiet", "--out", "term"]].concat(),
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let resumed = summary(&term);
    assert!(
        resumed["stages_reused"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("voxelize")),
        "{resumed}"
    );
    assert_same_bake(
        &dir.path().join("whole"),
        &term,
        Same::Tiling,
        "stopped in the polygon stage and resumed",
    );
}

#[test]
#[ignore = "slow: about 40 s of bakes and rebakes through the CLI"]
fn checkpoints_are_reused_checked_and_invalidated_by_what_they_depend_on() {
    let dir = tempfile::tempdir().unwrap();
    let bake = |extra: &[&str]| {
        let o = tessera(
            &[&RESUME_ARGS[..], &["quiet", "--out", "b"], extra].concat(),
            dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        summary(&dir.path().join("b"))
    };
    let first = bake(&[]);
    assert_eq!(first["stages_reused"], serde_json::json!([]));
    let b = dir.path().join("b");
    let want = snapshot(&b, &dir.path().join("first"));
    let same = |what: &str| assert_same_bake(&want, &b, Same::Tiling, what);
    // The same bake again: every stage is reused.
    let again = bake(&[]);
    assert_eq!(
        again["stages_reused"],
        serde_json::json!(["ingest", "bin", "voxelize", "polygons"])
    );
    same("everything reused");
    // A flipped byte in a span checkpoint record is detected; that tile on is recomputed.
    flip_middle_byte(&largest_file(&dir.path().join("b/work/spans")));
    let repaired = bake(&[]);
    assert!(
        repaired["resumed_tiles"].as_u64().unwrap()
            < first["tiles_with_geometry"].as_u64().unwrap()
    );
    same("a corrupt span record recomputed");
    // A flipped byte in the tile pack (or in one of the parts it was binned in): each chunk
    // is checked when it is read, so a bake that reads no tile does not read the pack through
    // (the bake that reads the damaged chunk bins again, below).
    let part = dir.path().join("b/work/bins/part-1-of-2.pack");
    flip_middle_byte(&if part.is_file() {
        part
    } else {
        dir.path().join("b/work/tiles.pack")
    });
    let unread = bake(&[]);
    assert_eq!(
        unread["stages_reused"],
        serde_json::json!(["ingest", "bin", "voxelize", "polygons"])
    );
    // The damaged pack stays as it is, unread: the results are compared, not the packs.
    assert_same_bake(&want, &b, Same::Mesh, "a corrupt tile pack left unread");
    // The memory budget changes no output: everything is reused.
    let budgeted = bake(&["--memory-budget", "64MiB"]);
    assert_eq!(
        budgeted["stages_reused"],
        serde_json::json!(["ingest", "bin", "voxelize", "polygons"])
    );
    // A config change invalidates exactly the stages it affects: a new agent height
    // re-voxelizes on the same tiles; a new radius widens the tiles' band, so it re-bins too.
    let def = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/def.toml"
    ))
    .unwrap();
    std::fs::write(
        dir.path().join("taller.toml"),
        def.replace("height = 2.0", "height = 2.2"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("wider.toml"),
        def.replace("radius = 0.0", "radius = 0.3"),
    )
    .unwrap();
    // A bake of `config` into `out`, and a fresh one compared with `b`.
    let bake_into = |config: &str, out: &str| {
        let args = [
            "bake",
            "--config",
            config,
            "--tile-size",
            "48",
            "--log-format",
            "quiet",
            "--out",
            out,
        ];
        let o = tessera(&args, dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        summary(&dir.path().join(out))
    };
    let bake_with = |config: &str| bake_into(config, "b");
    let fresh_is_the_same = |config: &str, out: &str, what: &str| {
        bake_into(config, out);
        assert_same_bake(&b, &dir.path().join(out), Same::Tiling, what);
    };
    // The taller agent reads every tile again: the damaged chunk is found, its pack binned
    // again, and the bake goes on to what a fresh bake of that config gives.
    assert_eq!(
        bake_with("taller.toml")["stages_reused"],
        serde_json::json!(["ingest"])
    );
    fresh_is_the_same("taller.toml", "t", "a damaged tile pack binned again");
    // Read whole this time: the pack is reused.
    assert_eq!(
        bake_with("taller.toml")["stages_reused"],
        serde_json::json!(["ingest", "bin", "voxelize", "polygons"])
    );
    assert_eq!(
        bake_with("wider.toml")["stages_reused"],
        serde_json::json!(["ingest"])
    );
    // A fresh bake with the new config gives what the resumed one gave.
    fresh_is_the_same("wider.toml", "c", "a fresh bake of the new config");
    // --fresh recomputes everything, to the same bytes.
    let fresh = bake(&["--fresh"]);
    assert_eq!(fresh["stages_reused"], serde_json::json!([]));
    same("--fresh");
    // `tessera clean` removes the checkpoints and keeps the results.
    let o = tessera(&["clean", "b"], dir.path());
    assert!(o.status.success());
    assert!(!dir.path().join("b/work").exists() && dir.path().join("b/summary.json").exists());
}

#[test]
fn an_unwritable_output_is_a_clear_io_error() {
    let dir = tempfile::tempdir().unwrap();
    small_obj(&dir.path().join("s.obj"));
    // The output path is an existing file: nothing can be created under it.
    std::fs::write(dir.path().join("taken"), "not a folder").unwrap();
    let o = tessera(
        &[
            "bake",
            "s.obj",
            "--out",
            "taken/bake",
            "--log-format",
            "quiet",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(6));
    assert!(stderr(&o).contains("taken"), "{}", stderr(&o));
}

/// The navmesh the query tests use: an L-shaped corridor 2 m wide (east along y 0..2 to
/// x 10, then north along x 8..10 to y 10; inner corner at (8, 2)) in six convex polygons,
/// and a 2 m square island at x 20..22 that nothing reaches. Cell size 1 m, the scene's
/// origin at (1000, 2000, 10), Z up.
fn query_navmesh(path: &Path) {
    std::fs::write(path, tessera_navmesh::encode(&query_mesh())).unwrap();
}

/// The mesh [`query_navmesh`] writes.
fn query_mesh() -> tessera_navmesh::NavMesh {
    use tessera_artifacts::{InputPoly, MeshInput};
    let frame = tessera_test_support::mesh::unit_frame([1000.0, 2000.0, 10.0]);
    let mut input = MeshInput {
        regions: 4,
        climb: 2,
        ..MeshInput::default()
    };
    let mut poly = |corners: &[[i32; 2]], region: u32| {
        let first = input.verts.len() as u32;
        input.verts.extend(corners.iter().map(|c| [c[0], c[1], 0]));
        let verts: Vec<u32> = (first..first + corners.len() as u32).collect();
        let tris = (1..verts.len() - 1)
            .map(|k| [verts[0], verts[k], verts[k + 1]])
            .collect();
        input.polys.push(InputPoly {
            verts,
            region,
            tris,
            ..InputPoly::default()
        });
    };
    let rect = |x0, y0, x1, y1| [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
    poly(&rect(0, 0, 4, 2), 0);
    poly(&rect(4, 0, 8, 2), 0);
    poly(&[[8, 0], [10, 0], [10, 2]], 1);
    poly(&[[8, 0], [10, 2], [8, 2]], 1);
    poly(&rect(8, 2, 10, 6), 2);
    poly(&rect(8, 6, 10, 10), 2);
    poly(&rect(20, 0, 22, 2), 3);
    tessera_navgraph::build(frame, &input).expect("a valid mesh")
}

#[test]
fn validate_passes_a_sound_navmesh_and_lists_what_fails_in_a_broken_one() {
    let dir = tempfile::tempdir().unwrap();
    query_navmesh(&dir.path().join("nav.tsn"));
    let o = tessera(
        &["validate", "nav.tsn", "--json", "--pairs", "200"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["ok"], true, "{v}");
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let all = [
        "file",
        "degenerate_polygons",
        "one_way_portals",
        "open_edges",
        "paths",
    ];
    assert_eq!(names, all);
    assert!(v["checks"][4]["found"].as_u64().unwrap() > 0, "{v}");

    // Edited through the builder's output: polygon 1 forgets its portal back to polygon 0.
    let mut mesh = query_mesh();
    let first = mesh.polys[1].first as usize;
    let count = mesh.polys[1].count as usize;
    let k = (0..count)
        .find(|&k| mesh.poly_neis[first + k] == 0)
        .expect("polygon 1 borders polygon 0");
    mesh.poly_neis[first + k] = tessera_navmesh::NONE;
    std::fs::write(
        dir.path().join("broken.tsn"),
        tessera_navmesh::encode(&mesh),
    )
    .unwrap();
    let o = tessera(
        &["validate", "broken.tsn", "--json", "--pairs", "200"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("one_way_portals"), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["ok"], false);
    let portals = &v["checks"][2];
    assert_eq!(portals["failed"], 1, "{v}");
    assert_eq!(portals["failures"][0]["polygon"], 0, "{v}");
    assert_eq!(portals["failures"][0]["neighbour"], 1, "{v}");
    // Its place in scene coordinates: on the shared edge x = 4 (scene x 1004).
    let at = portals["failures"][0]["at"][0].as_f64().unwrap();
    assert!((at - 1004.0).abs() < 1e-3, "{v}");
    // Searches from either side now disagree about the pairs across that edge.
    assert_eq!(v["checks"][4]["ok"], false, "{v}");

    // A damaged file fails the first check; a missing one is not a navmesh to validate.
    let mut bytes = std::fs::read(dir.path().join("nav.tsn")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(dir.path().join("damaged.tsn"), bytes).unwrap();
    let o = tessera(&["validate", "damaged.tsn", "--json"], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["checks"][0]["name"], "file", "{v}");
    assert_eq!(v["checks"][0]["ok"], false, "{v}");
    let o = tessera(&["validate", "missing.tsn"], dir.path());
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
}

#[test]
fn validate_with_the_scene_checks_heights_against_it() {
    let dir = tempfile::tempdir().unwrap();
    bake_small(dir.path());
    let args = |scene: &'static str| {
        [
            "validate",
            "b/navmesh.tsn",
            "--json",
            "--pairs",
            "50",
            "--height-samples",
            "300",
            "--scene",
            scene,
        ]
    };
    let o = tessera(&args("s.obj"), dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v = stdout_json(&o);
    let heights = &v["checks"][5];
    assert_eq!(heights["name"], "heights", "{v}");
    assert_eq!(heights["samples"], 300, "{v}");
    assert!(
        heights["height_difference_m"]["max"].as_f64().unwrap() < 0.5,
        "{v}"
    );
    // The same scene 3 m higher: every point of the mesh lies 3 m under its floor.
    let raised: String = std::fs::read_to_string(dir.path().join("s.obj"))
        .unwrap()
        .lines()
        .map(|l| match l.strip_prefix("v ") {
            Some(xyz) => {
                let c: Vec<f64> = xyz.split(' ').map(|t| t.parse().unwrap()).collect();
                format!("v {} {} {}\n", c[0], c[1], c[2] + 3.0)
            }
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(dir.path().join("raised.obj"), raised).unwrap();
    let o = tessera(&args("raised.obj"), dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["checks"][5]["ok"], false, "{v}");
    assert!(v["checks"][5]["failed"].as_u64().unwrap() > 250, "{v}");
    // A scene that cannot be read is bad input.
    let o = tessera(&args("nothing.obj"), dir.path());
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
}

fn stdout_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON value ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

/// A path query on `query_navmesh` around the corridor's inner corner.
const CORNER_PATH: [&str; 6] = [
    "path",
    "nav.tsn",
    "--from",
    "1001,2001,10.5",
    "--to",
    "1009,2009,10",
];

#[test]
fn navmesh_path_json_gives_the_shortest_path() {
    let dir = tempfile::tempdir().unwrap();
    query_navmesh(&dir.path().join("nav.tsn"));
    let args = [CORNER_PATH.as_slice(), &["--json"]].concat();
    let o = tessera(&args, dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["found"], true, "{v}");
    // Around the inner corner: (1, 1) -> (8, 2) -> (9, 9).
    let want = 2.0 * 50f64.sqrt();
    let length = v["length"].as_f64().unwrap();
    assert!((length - want).abs() < 1e-4 * want, "{length}");
    let waypoints = v["waypoints"].as_array().unwrap();
    assert_eq!(waypoints.len(), 3, "{v}");
    let corner: Vec<f64> = waypoints[1]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_f64().unwrap())
        .collect();
    assert!((corner[0] - 1008.0).abs() < 1e-3 && (corner[1] - 2002.0).abs() < 1e-3);
    assert!((corner[2] - 10.0).abs() < 1e-3);

    // The same as text: the length and the waypoints.
    let o = tessera(&args[..6], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("14.142 m") && text.contains("1008.000 2002.000 10.000"),
        "{text}"
    );
}

#[test]
fn navmesh_path_without_a_way_is_an_answer_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    query_navmesh(&dir.path().join("nav.tsn"));
    // To the island, and to a point off the mesh altogether.
    for to in ["1021,2001,10", "1050,2050,10"] {
        let o = tessera(
            &[
                "path",
                "nav.tsn",
                "--from",
                "1001,2001,10",
                "--to",
                to,
                "--json",
            ],
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v = stdout_json(&o);
        assert_eq!(v["found"], false);
        assert_eq!(v["length"], 0.0);
        assert_eq!(v["waypoints"], serde_json::json!([]));
    }
    let o = tessera(
        &[
            "path",
            "nav.tsn",
            "--from",
            "1001,2001,10",
            "--to",
            "1021,2001,10",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no path"));
}

#[test]
fn navmesh_random_pairs_are_seeded() {
    let dir = tempfile::tempdir().unwrap();
    query_navmesh(&dir.path().join("nav.tsn"));
    let run = |seed: &str| {
        let o = tessera(
            &[
                "path",
                "nav.tsn",
                "--random-pairs",
                "5",
                "--seed",
                seed,
                "--json",
            ],
            dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    let first = run("7");
    let v: serde_json::Value = serde_json::from_slice(&first).unwrap();
    let pairs = v.as_array().expect("an array");
    assert_eq!(pairs.len(), 5);
    for p in pairs {
        for f in ["from", "to"] {
            let pt = p[f].as_array().unwrap();
            assert_eq!(pt.len(), 3);
            // On the mesh: the floor is at the origin's height.
            assert!((pt[2].as_f64().unwrap() - 10.0).abs() < 1e-3, "{p}");
        }
        let length = p["length"].as_f64().unwrap();
        if !p["found"].as_bool().unwrap() {
            assert_eq!(length, 0.0, "{p}");
        }
    }
    assert_eq!(first, run("7"), "the same seed gives the same answers");
    assert_ne!(first, run("8"));
}

#[test]
fn a_path_of_zero_length_prints_no_negative_zero() {
    let dir = tempfile::tempdir().unwrap();
    query_navmesh(&dir.path().join("nav.tsn"));
    let at = "1001,2001,10";
    let args = ["path", "nav.tsn", "--from", at, "--to", at, "--json"];
    let o = tessera(&args, dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["found"], true, "{v}");
    let length = v["length"].as_f64().unwrap();
    assert!(length == 0.0 && length.is_sign_positive(), "{v}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("-0"), "{v}");
    let o = tessera(&args[..6], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(": 0.000 m") && !text.contains("-0"), "{text}");
}

/// Runs `tessera args` in `cwd` with stdout a pipe whose reader takes `lines` lines (none:
/// closes it before the command writes) and then closes it; the command must end within a
/// minute. Returns its exit status and stderr.
fn with_early_closing_reader(
    args: &[&str],
    cwd: &Path,
    lines: usize,
) -> (std::process::ExitStatus, String) {
    use std::io::{BufRead, Read};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tessera");
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    for _ in 0..lines {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "{args:?}: no line"
        );
    }
    drop(reader); // the only read end: the command's next write fails with EPIPE
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?}: still running a minute after its reader left");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, err)
}

#[test]
fn a_reader_that_leaves_early_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    query_navmesh(&dir.path().join("nav.tsn"));
    let path = CORNER_PATH;
    // Four billion pairs: held before printing they would take hours (and far more memory
    // than the machine has); streamed, the command stops as soon as its reader has gone.
    let pairs = ["path", "nav.tsn", "--random-pairs", "4000000000"];
    let pairs_json = ["path", "nav.tsn", "--random-pairs", "4000000000", "--json"];
    let cases: [(&[&str], usize); 6] = [
        (&["info", "nav.tsn"], 0),
        (&["info", "nav.tsn", "--json"], 0),
        (&path, 0),
        (&path, 1),
        (&pairs, 1),
        (&pairs_json, 2),
    ];
    for (args, lines) in cases {
        let (status, err) = with_early_closing_reader(args, dir.path(), lines);
        assert!(
            status.success(),
            "{args:?} ({lines} lines read): {status}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: quiet, but said: {err}");
    }
}

#[test]
fn navmesh_info_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nav.tsn");
    query_navmesh(&path);
    let o = tessera(&["info", "nav.tsn", "--json"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["polygons"], 7, "{v}");
    assert_eq!(v["regions"], 4);
    assert_eq!(v["portals"], 5);
    assert_eq!(v["links"], 0);
    assert_eq!(v["walkable_area_m2"], 8.0 + 8.0 + 4.0 + 8.0 + 8.0 + 4.0);
    assert_eq!(v["file_bytes"], std::fs::metadata(&path).unwrap().len());
    assert_eq!(
        v["bounds"]["min"],
        serde_json::json!([1000.0, 2000.0, 10.0])
    );
    assert_eq!(
        v["bounds"]["max"],
        serde_json::json!([1022.0, 2010.0, 10.0])
    );
    let o = tessera(&["info", "nav.tsn"], dir.path());
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("polygons         7"), "{text}");
}

#[test]
fn navmesh_that_fails_to_open_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nav.tsn");
    query_navmesh(&path);
    flip_middle_byte(&path);
    for args in [
        &["info", "nav.tsn"][..],
        &[
            "path",
            "nav.tsn",
            "--from",
            "1001,2001,10",
            "--to",
            "1009,2009,10",
            "--json",
        ],
    ] {
        let o = tessera(args, dir.path());
        assert_eq!(o.status.code(), Some(3), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains("nav.tsn") && e.contains("checksum"), "{e}");
        assert!(o.stdout.is_empty());
    }
    // Not a navmesh at all, and no file.
    std::fs::write(dir.path().join("scene.obj"), "v 0 0 0\n").unwrap();
    let o = tessera(&["info", "scene.obj"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("not a tessera navmesh"),
        "{}",
        stderr(&o)
    );
    let o = tessera(&["info", "missing.tsn"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("missing.tsn"), "{}", stderr(&o));
    // A malformed point is a command-line error.
    let o = tessera(
        &["path", "nav.tsn", "--from", "1,2", "--to", "1,2,3"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn navmesh_of_a_real_bake_answers_queries() {
    let dir = tempfile::tempdir().unwrap();
    bake_small(dir.path());
    let o = tessera(&["info", "b/navmesh.tsn", "--json"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let info = stdout_json(&o);
    let polygons = info["polygons"].as_u64().unwrap();
    assert!(polygons > 0, "{info}");
    if let Some(baked) = summary(&dir.path().join("b"))["polygons"].as_u64() {
        assert_eq!(polygons, baked);
    }
    // Its connected components: largest first, every polygon in one, the areas summing to
    // the walkable area.
    let components = info["components"].as_array().unwrap();
    assert!(!components.is_empty(), "{info}");
    let sum = |f: &str| -> f64 { components.iter().map(|c| c[f].as_f64().unwrap()).sum() };
    assert_eq!(sum("polygons") as u64, polygons);
    let walkable = info["walkable_area_m2"].as_f64().unwrap();
    assert!(
        (sum("area_m2") - walkable).abs() < 1e-3 * walkable,
        "{info}"
    );
    let areas: Vec<f64> = components
        .iter()
        .map(|c| c["area_m2"].as_f64().unwrap())
        .collect();
    assert!(areas.windows(2).all(|w| w[0] >= w[1]), "{areas:?}");
    // Corner to corner of the floor, around the box in the middle of the diagonal.
    let o = tessera(
        &[
            "path",
            "b/navmesh.tsn",
            "--from",
            "1,1,0",
            "--to",
            "19,19,0",
            "--json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = stdout_json(&o);
    assert_eq!(v["found"], true, "{v}");
    let length = v["length"].as_f64().unwrap();
    let direct = 18.0 * 2f64.sqrt();
    assert!(length > direct && length < direct * 1.05, "{length}");
    let o = tessera(
        &["path", "b/navmesh.tsn", "--random-pairs", "20", "--json"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout_json(&o).as_array().unwrap().len(), 20);
}

/// Triangles of a scene file as tessera's own ingest reads it (Z-up world coordinates).
fn ingest_triangles(path: &Path, up: tessera_ingest::UpAxis) -> Vec<[[f64; 3]; 3]> {
    let scratch = tempfile::tempdir().unwrap();
    let mut scene = tessera_ingest::open_scene(path, up, scratch.path()).expect("readable");
    let mut tris = Vec::new();
    scene
        .for_each_triangle(&mut |t| {
            tris.push(t);
            Ok(())
        })
        .unwrap();
    tris
}

fn plan_area(tris: &[[[f64; 3]; 3]]) -> f64 {
    tris.iter()
        .map(|[a, b, c]| 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])))
        .sum()
}

/// Per axis, the smallest and largest coordinate of the triangles' corners.
fn corner_bounds(tris: &[[[f64; 3]; 3]]) -> ([f64; 3], [f64; 3]) {
    tris.iter().flatten().fold(
        ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
        |(lo, hi), p| {
            (
                [0, 1, 2].map(|k| lo[k].min(p[k])),
                [0, 1, 2].map(|k| hi[k].max(p[k])),
            )
        },
    )
}

fn json_point(v: &serde_json::Value) -> [f64; 3] {
    [0, 1, 2].map(|k| v[k].as_f64().unwrap())
}

fn assert_close(a: [f64; 3], b: [f64; 3], what: &str) {
    assert!(
        (0..3).all(|k| (a[k] - b[k]).abs() < 1e-3),
        "{what}: {a:?} vs {b:?}"
    );
}

/// What an exported navmesh must match: its fan triangle count, plan area and bounds.
struct Expected {
    fan_triangles: usize,
    area: f64,
    min: [f64; 3],
    max: [f64; 3],
}

fn expected(dir: &Path, navmesh: &str) -> Expected {
    let file = tessera_navmesh::NavMeshFile::open(dir.join(navmesh)).unwrap();
    let mesh = file.mesh();
    let fan_triangles = mesh
        .polys
        .iter()
        .map(|p| p.count.to_native() as usize - 2)
        .sum();
    let o = tessera(&["info", navmesh, "--json"], dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let info = stdout_json(&o);
    Expected {
        fan_triangles,
        area: info["walkable_area_m2"].as_f64().unwrap(),
        min: json_point(&info["bounds"]["min"]),
        max: json_point(&info["bounds"]["max"]),
    }
}

fn check_export(tris: &[[[f64; 3]; 3]], want: &Expected, what: &str) {
    assert_eq!(tris.len(), want.fan_triangles, "{what}");
    let area = plan_area(tris);
    assert!(
        (area - want.area).abs() <= 1e-3 * want.area,
        "{what}: area {area} vs {}",
        want.area
    );
    let (lo, hi) = corner_bounds(tris);
    assert_close(lo, want.min, what);
    assert_close(hi, want.max, what);
}

#[test]
fn export_gltf_and_obj_overlay_the_scene() {
    let dir = tempfile::tempdir().unwrap();
    query_navmesh(&dir.path().join("nav.tsn"));
    let want = expected(dir.path(), "nav.tsn");
    assert_eq!(want.fan_triangles, 12);

    // glb: read back as glTF is read (Y up), it lands on the Z-up scene it came from.
    let o = tessera(&["export", "nav.tsn", "--out", "nav.glb"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("12 triangles"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let tris = ingest_triangles(&dir.path().join("nav.glb"), tessera_ingest::UpAxis::Y);
    check_export(&tris, &want, "glb");
    // Its structure: region colours on the triangles, portals and no links as lines.
    let g = gltf::Gltf::open(dir.path().join("nav.glb")).unwrap();
    let prims: Vec<(gltf::mesh::Mode, bool)> = g
        .meshes()
        .flat_map(|m| m.primitives().collect::<Vec<_>>())
        .map(|p| (p.mode(), p.get(&gltf::Semantic::Colors(0)).is_some()))
        .collect();
    assert_eq!(
        prims,
        [
            (gltf::mesh::Mode::Triangles, true),
            (gltf::mesh::Mode::Lines, false)
        ]
    );

    // .gltf with --detail (the detail triangles are the fans here), and OBJ.
    let o = tessera(
        &[
            "export", "nav.tsn", "--format", "gltf", "--out", "nav.gltf", "--detail",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let tris = ingest_triangles(&dir.path().join("nav.gltf"), tessera_ingest::UpAxis::Y);
    check_export(&tris, &want, "gltf");
    let o = tessera(&["export", "nav.tsn", "--out", "nav.obj"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let tris = ingest_triangles(&dir.path().join("nav.obj"), tessera_ingest::UpAxis::Z);
    check_export(&tris, &want, "obj");
    let text = std::fs::read_to_string(dir.path().join("nav.obj")).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("f ")).count(), 12);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("l ")).count(),
        5,
        "5 portals"
    );
    assert!(
        text.contains("\nv 1000 2000 10 "),
        "colours follow the position"
    );

    // Bad requests: an unknown extension, a missing navmesh.
    let o = tessera(&["export", "nav.tsn", "--out", "nav.fbx"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--format"), "{}", stderr(&o));
    let o = tessera(&["export", "missing.tsn", "--out", "x.glb"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    let o = tessera(
        &["export", "nav.tsn", "--out", "no/such/dir/x.glb"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(6));
}

#[test]
fn export_of_real_bakes_in_both_up_axes() {
    let dir = tempfile::tempdir().unwrap();
    small_obj(&dir.path().join("s.obj"));
    // The same floor and box, written Y up: (x, y, z) Z-up is (x, z, -y) Y-up.
    let text = std::fs::read_to_string(dir.path().join("s.obj")).unwrap();
    let y_up: String = text
        .lines()
        .map(|l| match l.strip_prefix("v ") {
            Some(v) => {
                let c: Vec<f64> = v.split(' ').map(|t| t.parse().unwrap()).collect();
                format!("v {} {} {}\n", c[0], c[2], -c[1])
            }
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(dir.path().join("y.obj"), y_up).unwrap();
    for (scene, up) in [("s.obj", "z"), ("y.obj", "y")] {
        let out = format!("b-{up}");
        let o = tessera(
            &[
                "bake",
                scene,
                "--up",
                up,
                "--out",
                &out,
                "--log-format",
                "quiet",
            ],
            dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let nav = format!("{out}/navmesh.tsn");
        let want = expected(dir.path(), &nav);
        assert!(want.fan_triangles > 0);
        // OBJ: the scene's own coordinates and up axis.
        let obj = format!("{out}/nav.obj");
        let o = tessera(&["export", &nav, "--out", &obj], dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let axis = if up == "y" {
            tessera_ingest::UpAxis::Y
        } else {
            tessera_ingest::UpAxis::Z
        };
        let tris = ingest_triangles(&dir.path().join(&obj), axis);
        // Ingest gives Z-up; info's bounds are in the scene's axes: compare in the scene's.
        let scene_tris: Vec<[[f64; 3]; 3]> =
            tris.iter().map(|t| t.map(|p| axis.from_z_up(p))).collect();
        let (lo, hi) = corner_bounds(&scene_tris);
        assert_close(lo, want.min, "obj min");
        assert_close(hi, want.max, "obj max");
        assert_eq!(tris.len(), want.fan_triangles);
        assert!((plan_area(&tris) - want.area).abs() <= 1e-3 * want.area);
        // glb: read as glTF always is (Y up), it gives the same Z-up world as the source.
        let glb = format!("{out}/nav.glb");
        let o = tessera(&["export", &nav, "--out", &glb], dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let tris_glb = ingest_triangles(&dir.path().join(&glb), tessera_ingest::UpAxis::Y);
        assert_eq!(tris_glb.len(), want.fan_triangles);
        assert!((plan_area(&tris_glb) - want.area).abs() <= 1e-3 * want.area);
        let (glo, ghi) = corner_bounds(&tris_glb);
        let (olo, ohi) = corner_bounds(&tris);
        assert_close(glo, olo, "glb min");
        assert_close(ghi, ohi, "glb max");
    }
}

fn read_png(path: &Path) -> tessera_export::RgbImage {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    tessera_export::RgbImage {
        width: info.width,
        height: info.height,
        pixels: buf,
    }
}

#[test]
fn render_draws_the_mesh_the_path_and_respects_the_size() {
    let dir = tempfile::tempdir().unwrap();
    bake_small(dir.path());
    let o = tessera(
        &[
            "render",
            "b/navmesh.tsn",
            "--out",
            "map.png",
            "--max-size",
            "300",
            "--from",
            "1,1,0",
            "--to",
            "19,19,0",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("map.png") && stdout.contains("path"),
        "{stdout}"
    );
    let img = read_png(&dir.path().join("map.png"));
    assert!(
        img.width <= 300 && img.height <= 300,
        "{}x{}",
        img.width,
        img.height
    );
    assert!(img.width.max(img.height) >= 256);

    let file = tessera_navmesh::NavMeshFile::open(dir.path().join("b/navmesh.tsn")).unwrap();
    let view = tessera_export::PlanView::fit(file.mesh(), 300);
    assert_eq!((view.width, view.height), (img.width, img.height));
    let frame = file.mesh().frame.native();
    let at = |p: [f64; 3]| {
        let [x, y] = view.scene_pixel(&frame, p).expect("on the image");
        img.get(x, y)
    };
    let background = tessera_export::render::BACKGROUND;
    // On the floor, far from the path; and beside the box, within the agent's radius of
    // its wall (0.4 m), where nothing is walkable.
    assert_ne!(at([17.0, 3.0, 0.0]), background);
    assert_eq!(at([4.85, 6.0, 0.0]), background);
    assert_eq!(img.get(0, 0), background, "the margin");
    // The path's yellow core is drawn, and the start marker sits on the start.
    let yellow = img.pixels.chunks(3).filter(|p| *p == [255, 214, 0]).count();
    assert!(yellow > 50, "{yellow} path pixels");
    assert_eq!(at([1.0, 1.0, 0.0]).0, [20, 190, 60]);

    // The default size fits 2048, a tiny one is refused.
    let o = tessera(&["render", "b/navmesh.tsn", "--out", "big.png"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let big = read_png(&dir.path().join("big.png"));
    assert!(big.width.max(big.height) <= 2048);
    let o = tessera(
        &[
            "render",
            "b/navmesh.tsn",
            "--out",
            "x.png",
            "--max-size",
            "8",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_bake_writes_its_preview_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let o = bake_small(dir.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("b/preview.png") && stdout.contains("b/report.html"),
        "the summary names them: {stdout}"
    );
    let out = dir.path().join("b");
    let img = read_png(&out.join("preview.png"));
    assert!(img.width.max(img.height) <= 2048 && img.width > 0 && img.height > 0);
    let background = tessera_export::render::BACKGROUND;
    assert!(img.pixels.chunks(3).any(|p| p != background.0));

    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let polygons = summary(&out)["polygons"].as_u64().unwrap();
    assert!(html.contains(&format!("{polygons} polygons")), "{html}");
    assert!(html.contains(&format!("<td>polygons</td><td class=\"n\">{polygons}</td>")));
    assert!(html.contains("<img class=\"preview\" src=\"preview.png\""));
    assert_eq!(
        html.matches("<svg").count(),
        2,
        "stage bars and memory plot"
    );
    for stage in ["ingest", "bin", "voxelize", "polygons"] {
        assert!(html.contains(&format!(">{stage}</text>")), "{stage}");
    }
    assert!(
        !html.contains("http:") && !html.contains("https:"),
        "self-contained"
    );
}

#[test]
fn view_prints_its_loopback_address_and_serves_the_navmesh() {
    use std::io::{BufRead, Read};
    let dir = tempfile::tempdir().unwrap();
    query_navmesh(&dir.path().join("nav.tsn"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["view", "nav.tsn", "--port", "0"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run tessera view");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_string();
    let port = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix('/'))
        .and_then(|p| p.parse::<u16>().ok());
    let answer = port.map(|port| {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(b"GET /api/meta HTTP/1.0\r\n\r\n").unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let answer = answer.unwrap_or_else(|| panic!("not a loopback address: {line:?}"));
    // An HTTP/1.1 server answers a 1.0 request in its own version (RFC 9110, 6.2).
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"polygons\":7"), "{answer}");

    // A missing navmesh is bad input, as a missing scene is, for every command.
    let o = tessera(&["view", "missing.tsn", "--port", "0"], dir.path());
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("missing.tsn"), "{}", stderr(&o));
}

#[test]
fn a_batch_of_pairs_is_answered_in_input_order_as_single_paths_are() {
    // Issue 17, crowds: one JSON line per input line, in order, on several threads, each the
    // object `path --json` prints for that pair.
    let dir = tempfile::tempdir().unwrap();
    bake_small(dir.path());
    let nav = "b/navmesh.tsn";
    let o = tessera(
        &["path", nav, "--random-pairs", "60", "--seed", "3", "--json"],
        dir.path(),
    );
    let random = stdout_json(&o);
    let mut pairs: Vec<([f64; 3], [f64; 3])> = random
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let point = |v: &serde_json::Value| {
                let a: Vec<f64> = v
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_f64().unwrap())
                    .collect();
                [a[0], a[1], a[2]]
            };
            (point(&p["from"]), point(&p["to"]))
        })
        .collect();
    // An end off the mesh: answered too, `found: false`.
    pairs.insert(7, ([1.0, 1.0, 0.0], [500.0, 500.0, 0.0]));
    let text: String = pairs
        .iter()
        .map(|(a, b)| format!("{}\n", serde_json::json!({"from": a, "to": b})))
        .collect();
    std::fs::write(dir.path().join("pairs.jsonl"), &text).unwrap();
    let o = tessera(
        &[
            "path",
            nav,
            "--batch",
            "pairs.jsonl",
            "--threads",
            "3",
            "--json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), pairs.len());
    assert_eq!(lines[7]["found"], false);
    let mut joined = 0;
    for (i, (a, b)) in pairs.iter().enumerate() {
        let coords = |p: &[f64; 3]| format!("{},{},{}", p[0], p[1], p[2]);
        if i % 10 == 7 {
            // Exactly what one query prints.
            let o = tessera(
                &[
                    "path",
                    nav,
                    "--from",
                    &coords(a),
                    "--to",
                    &coords(b),
                    "--json",
                ],
                dir.path(),
            );
            assert_eq!(stdout_json(&o), lines[i], "pair {i}");
        }
        joined += usize::from(lines[i]["found"] == true);
    }
    let random_joined = random
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["found"] == true)
        .count();
    assert_eq!(joined, random_joined);
    // The same answers on one thread, and from standard input.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["path", nav, "--batch", "-", "--threads", "1"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let one = child.wait_with_output().unwrap();
    let many = tessera(
        &["path", nav, "--batch", "pairs.jsonl", "--threads", "3"],
        dir.path(),
    );
    assert_eq!(one.stdout, many.stdout);
    // `--flat`: the flat search over every polygon, the same pairs found, lengths within a
    // percent of the hierarchical ones (the flat are the shortest).
    let flat = tessera(
        &[
            "path",
            nav,
            "--batch",
            "pairs.jsonl",
            "--threads",
            "2",
            "--flat",
        ],
        dir.path(),
    );
    assert!(flat.status.success(), "{}", stderr(&flat));
    let flat: Vec<serde_json::Value> = String::from_utf8(flat.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (f, h) in flat.iter().zip(&lines) {
        assert_eq!(f["found"], h["found"]);
        let (f, h) = (f["length"].as_f64().unwrap(), h["length"].as_f64().unwrap());
        assert!(f <= h * 1.0001 + 1e-6 && h <= f * 1.01 + 1e-6, "{f} {h}");
    }
    // A line that is not a pair: exit 3, naming the file and the line.
    std::fs::write(
        dir.path().join("bad.jsonl"),
        format!(
            "{}{}{{\"from\": [1, 2]}}\n",
            &text[..text.find('\n').unwrap() + 1],
            &text[..text.find('\n').unwrap() + 1]
        ),
    )
    .unwrap();
    let o = tessera(&["path", nav, "--batch", "bad.jsonl"], dir.path());
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.jsonl:3"), "{}", stderr(&o));
}

#[test]
fn diff_tells_what_an_edit_of_the_scene_changed() {
    let dir = tempfile::tempdir().unwrap();
    let floor = "v 0 0 0\nv 20 0 0\nv 20 20 0\nv 0 20 0\nf 1 2 3 4\n";
    // A 4 m block standing on it, and a wall across it (x 9.75..10.25, 3 m high).
    let block = |x0: f64, y0: f64, x1: f64, y1: f64| {
        let mut b = tessera_test_support::mesh::MeshBuilder::default();
        b.block(x0, y0, x1, y1, 3.0);
        b.obj()
            .lines()
            .map(|l| match l.strip_prefix("f ") {
                Some(ids) => {
                    let shifted: Vec<String> = ids
                        .split(' ')
                        .map(|i| (i.parse::<u32>().unwrap() + 4).to_string())
                        .collect();
                    format!("f {}\n", shifted.join(" "))
                }
                None => format!("{l}\n"),
            })
            .collect::<String>()
    };
    std::fs::write(dir.path().join("a.obj"), floor).unwrap();
    let b = format!("{floor}{}", block(5.0, 5.0, 9.0, 9.0));
    std::fs::write(dir.path().join("b.obj"), b).unwrap();
    let c = format!("{floor}{}", block(9.75, -1.0, 10.25, 21.0));
    std::fs::write(dir.path().join("c.obj"), c).unwrap();
    for name in ["a", "b", "c"] {
        let scene = format!("{name}.obj");
        let o = tessera(
            &["bake", &scene, "--out", name, "--log-format", "quiet"],
            dir.path(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let diff = |old: &str, new: &str, more: &[&str]| {
        let (old, new) = (format!("{old}/navmesh.tsn"), format!("{new}/navmesh.tsn"));
        let args = [&["diff", old.as_str(), new.as_str(), "--json"], more].concat();
        let o = tessera(&args, dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        stdout_json(&o)
    };
    // The same bake: nothing changed.
    let v = diff("a", "a", &[]);
    assert_eq!(v["area_added_m2"], 0.0, "{v}");
    assert_eq!(v["area_removed_m2"], 0.0, "{v}");
    assert_eq!(v["polygons"]["added"], 0, "{v}");
    assert_eq!(v["places_in_all"], 0, "{v}");
    // The block takes its footprint and the agent's radius around it (4.8 m square, less the
    // rounded corners), in one place around it; and back the other way.
    let v = diff("a", "b", &["--out", "d.png"]);
    let removed = v["area_removed_m2"].as_f64().unwrap();
    assert!((20.0..26.0).contains(&removed), "{v}");
    assert_eq!(v["area_added_m2"], 0.0, "{v}");
    assert_eq!(v["places_in_all"], 1, "{v}");
    let (min, max) = (&v["places"][0]["min"], &v["places"][0]["max"]);
    assert!(
        min[0].as_f64().unwrap() > 4.0 && max[0].as_f64().unwrap() < 10.0,
        "{v}"
    );
    assert!(v["polygons"]["removed"].as_u64().unwrap() >= 1, "{v}");
    let png = std::fs::read(dir.path().join("d.png")).unwrap();
    let img = tessera_export::RgbImage::from_png(&png).unwrap();
    let red = (0..img.height)
        .flat_map(|y| (0..img.width).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get(x, y).0 == [220, 40, 40])
        .count();
    assert!(red > 100, "{red} red pixels");
    let back = diff("b", "a", &[]);
    assert_eq!(back["area_added_m2"], v["area_removed_m2"], "{back}");
    // The wall cuts the floor in two: its one component splits.
    let v = diff("a", "c", &[]);
    assert_eq!(v["components"]["split"][0]["component"], 0, "{v}");
    assert_eq!(
        v["components"]["split"][0]["into"],
        serde_json::json!([0, 1]),
        "{v}"
    );
    let v = diff("c", "a", &[]);
    assert_eq!(
        v["components"]["joined"][0]["into"],
        serde_json::json!([0, 1]),
        "{v}"
    );
}

#[test]
fn several_scene_files_and_a_scene_list_bake_as_one_scene() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("parts")).unwrap();
    let mut floor = tessera_test_support::mesh::MeshBuilder::default();
    floor.floor(0.0, 0.0, 20.0, 20.0, 0.0);
    floor.write_obj(&dir.path().join("parts/floor.obj"));
    let mut block = tessera_test_support::mesh::MeshBuilder::default();
    block.block(5.0, 5.0, 9.0, 9.0, 3.0);
    block.write_obj(&dir.path().join("parts/block.obj"));
    // Paths in a list are relative to the list's folder; comments and blank lines skipped.
    std::fs::write(
        dir.path().join("parts/city.txt"),
        "# the district\nfloor.obj\n\nblock.obj\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let o = tessera(args, dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let summary: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join(args[args.len() - 2]).join("summary.json")).unwrap(),
        )
        .unwrap();
        summary
    };
    let listed = run(&[
        "bake",
        "--scene-list",
        "parts/city.txt",
        "--log-format",
        "quiet",
        "--out",
        "listed",
        "--fresh",
    ]);
    let given = run(&[
        "bake",
        "parts/floor.obj",
        "parts/block.obj",
        "--log-format",
        "quiet",
        "--out",
        "given",
        "--fresh",
    ]);
    assert_eq!(listed["triangles"], 12);
    assert_eq!(listed["scene_files"].as_array().unwrap().len(), 2);
    assert_eq!(listed["polygons"], given["polygons"]);
    assert_eq!(
        std::fs::read(dir.path().join("listed/navmesh.tsn")).unwrap(),
        std::fs::read(dir.path().join("given/navmesh.tsn")).unwrap()
    );
    // A list that is not there is bad input, named.
    let o = tessera(
        &[
            "bake",
            "--scene-list",
            "nowhere.txt",
            "--log-format",
            "quiet",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("nowhere.txt"), "{}", stderr(&o));
}
