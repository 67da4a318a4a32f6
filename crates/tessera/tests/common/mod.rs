//! What the binary's integration tests share: running the real `tessera` in a folder.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

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
