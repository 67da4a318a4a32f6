//! What the binary's integration tests share: running the real `tessera` in a folder.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use tessera_test_support::bake_folder::{assert_same_bake, Same};

/// Runs `tessera args` in `cwd` and waits for it.
pub fn tessera(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run tessera")
}

/// A run's standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `tessera bake s.obj --config CONFIG --out OUT MORE.. --log-format quiet` in `dir`, which
/// must succeed.
pub fn bake_scene(dir: &Path, config: &str, out: &str, more: &[&str]) {
    let args = ["bake", "s.obj", "--config", config, "--out", out];
    let o = tessera(&[&args[..], more, &["--log-format", "quiet"]].concat(), dir);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `tessera path NAV --from FROM --to TO --json MORE..` in `dir`, which must succeed: its one
/// JSON answer.
pub fn path_json(dir: &Path, nav: &str, from: &str, to: &str, more: &[&str]) -> serde_json::Value {
    let args = ["path", nav, "--from", from, "--to", to, "--json"];
    let o = tessera(&[&args[..], more].concat(), dir);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("one JSON answer")
}

/// Runs `tessera args.. quiet --out whole` (`args` ending in `--log-format`), then the same
/// bake into `killed`, killed with SIGKILL at four moments and resumed each time, then once
/// to its end: both folders must hold the same bytes.
pub fn kill_and_resume(dir: &Path, args: &[&str]) {
    let start = std::time::Instant::now();
    let o = tessera(&[args, &["quiet", "--out", "whole"]].concat(), dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = start.elapsed();
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut kills = 0;
    for _ in 0..4 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let fraction = 0.1 + 0.8 * ((state >> 40) as f64 / (1u64 << 24) as f64);
        let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args([args, &["quiet", "--out", "killed"]].concat())
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(whole.mul_f64(fraction));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(kills > 0, "no run was killed before it finished");
    let o = tessera(&[args, &["quiet", "--out", "killed"]].concat(), dir);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_bake(
        &dir.join("whole"),
        &dir.join("killed"),
        Same::Tiling,
        "killed and resumed",
    );
}
