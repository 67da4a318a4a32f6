//! Limits that would break the memory budget or the machine are refused or clamped with the
//! reason (issue 21, class 8).

use std::process::Command;

fn floor_obj(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("floor.obj");
    std::fs::write(&path, "v 0 0 0\nv 20 0 0\nv 20 20 0\nv 0 20 0\nf 1 2 3 4\n").unwrap();
    path
}

fn summary(dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

fn tessera(args: &[&str], cwd: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run tessera")
}

#[test]
fn absurd_thread_counts_and_tiles_narrower_than_the_band_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    floor_obj(dir.path());
    let o = tessera(&["bake", "floor.obj", "--threads", "100000"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("4096"));
    let o = tessera(&["bake", "floor.obj", "--tile-size", "1"], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("voxel.tile_size") && err.contains("band"),
        "{err}"
    );
    assert!(!dir.path().join("tessera-out/floor/work").exists());
}

#[test]
fn more_threads_than_the_budget_runs_are_clamped_and_said() {
    let dir = tempfile::tempdir().unwrap();
    floor_obj(dir.path());
    let o = tessera(
        &[
            "bake",
            "floor.obj",
            "--threads",
            "1000",
            "--memory-budget",
            "64MiB",
            "--log-format",
            "plain",
        ],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("1000 threads asked for, 8 used"), "{err}");
    let s = summary(&dir.path().join("tessera-out/floor"));
    assert_eq!(s["threads"], 8);
    assert_eq!(s["memory_budget_bytes"], 64u64 << 20);
    // The stages share what the threads' overhead (a MiB each) left.
    assert!(s["peak_reserved_bytes"].as_u64().unwrap() <= 56 << 20);
}

#[test]
fn empty_space_between_far_apart_triangles_costs_nothing() {
    // A 40 m floor at UTM-like coordinates and a stray triangle at the origin: the world's
    // bounding rectangle holds three billion 256-cell tiles, seven of which hold triangles.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("utm.obj"),
        "v 500000 4000000 0\nv 500040 4000000 0\nv 500040 4000040 0\nv 500000 4000040 0\n\
         f 1 2 3 4\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 5 6 7\n",
    )
    .unwrap();
    let o = tessera(
        &[
            "bake",
            "utm.obj",
            "--memory-budget",
            "64MiB",
            "--log-format",
            "plain",
        ],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("some triangles lie far from the rest"),
        "{err}"
    );
    // The stray triangle is named by its face's line, in the scene's coordinates.
    assert!(err.contains("utm.obj line 9 at (0, 0, 0)"), "{err}");
    assert!(
        !err.contains("line 5"),
        "the floor is the world, not an outlier: {err}"
    );
    let s = summary(&dir.path().join("tessera-out/utm"));
    assert!(s["tiles"].as_u64().unwrap() > 1_000_000_000, "{s}");
    assert!(s["tiles_with_geometry"].as_u64().unwrap() < 16, "{s}");
    assert!(s["peak_anon_bytes"].as_u64().unwrap() < 64 << 20, "{s}");
    // Farther still, the tiles cannot be numbered: refused, saying why.
    std::fs::write(
        dir.path().join("far.obj"),
        "v 9000000 9000000 0\nv 9000040 9000000 0\nv 9000040 9000040 0\nf 1 2 3\n\
         v 0 0 0\nv 1 0 0\nv 0 1 0\nf 4 5 6\n",
    )
    .unwrap();
    let o = tessera(&["bake", "far.obj", "--log-format", "quiet"], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("stray triangles"), "{err}");
}
