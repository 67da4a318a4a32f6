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
