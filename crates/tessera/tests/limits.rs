//! Limits that would break the memory budget or the machine are refused or clamped with the
//! reason (issue 21, class 8).

use std::process::Command;

fn floor_obj(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("floor.obj");
    std::fs::write(&path, "v 0 0 0\nv 20 0 0\nv 20 20 0\nv 0 20 0\nf 1 2 3 4\n").unwrap();
    path
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
    let s: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("tessera-out/floor/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["threads"], 8);
    assert_eq!(s["memory_budget_bytes"], 64u64 << 20);
    // The stages share what the threads' overhead (a MiB each) left.
    assert!(s["peak_reserved_bytes"].as_u64().unwrap() <= 56 << 20);
}
