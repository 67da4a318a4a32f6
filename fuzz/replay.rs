//! Replays what a fuzz target kept, on stable, inside `cargo test`: every file of
//! `fuzz/corpus/<target>/` (seeds and what the fuzzer added) and `fuzz/regressions/<target>/`
//! (each crash it found, named) goes through the target's entry point.
//!
//! Included with `#[path]` by the regression tests of the crates that own the entry points
//! (`crates/ingest/tests/fuzz_regressions.rs`, `crates/navmesh/tests/fuzz_regressions.rs`),
//! which all sit two folders below the repository root.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The repository's `fuzz/` folder.
pub fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Every input kept for `target`, by name (`corpus/<file>` or `regressions/<file>`).
pub fn inputs(target: &str) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for kind in ["corpus", "regressions"] {
        let dir = fuzz_dir().join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_file() {
                let name = format!("{kind}/{}", path.file_name().unwrap().to_string_lossy());
                out.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// Feeds every input of `target` to `entry` and fails, naming each one, where `entry`
/// panicked. Returns every input's result (`Ok` or the error's message) by name.
pub fn replay<T, E: std::fmt::Display>(
    target: &str,
    mut entry: impl FnMut(&[u8]) -> Result<T, E>,
) -> BTreeMap<String, Result<T, String>> {
    let inputs = inputs(target);
    assert!(
        !inputs.is_empty(),
        "no inputs for fuzz target `{target}` under {}",
        fuzz_dir().display()
    );
    let mut results = BTreeMap::new();
    let mut panicked = Vec::new();
    for (name, bytes) in inputs {
        match catch_unwind(AssertUnwindSafe(|| entry(&bytes))) {
            Ok(result) => {
                results.insert(name, result.map_err(|e| e.to_string()));
            }
            Err(_) => panicked.push(name),
        }
    }
    assert!(
        panicked.is_empty(),
        "fuzz target `{target}`: these inputs panicked: {panicked:?}"
    );
    results
}
