//! Two bake folders compared file by file, byte for byte.
//!
//! tessera promises the same bytes for the same scene and settings whatever the thread count,
//! the memory budget, or where a bake was interrupted and resumed; and the same navigation
//! mesh whatever the tile size. [`assert_same_bake`] checks that promise on whole bake folders,
//! so that a test of a new variant cannot forget a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What two bakes share, and therefore which bytes must be equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Same {
    /// The same scene, settings and tile size (threads, budget or interruptions differ):
    /// every file is identical, but for [`RUN_FIELDS`] of `summary.json`, `report.html`
    /// (which shows timings and the memory trace), the folder's lock file (which names
    /// the last process that held it) and [`HISTORY_FILES`].
    Tiling,
    /// The same scene and settings but another tile size: the navigation mesh is identical
    /// (`navmesh.tsn` past its header, which holds the stage key), and so is `summary.json`
    /// but for [`RUN_FIELDS`] and [`TILING_FIELDS`]. The checkpoints (the tile pack's parts
    /// among them), `config.toml` (which
    /// names the tile size) and `preview.png` (which draws the tile grid) differ by design.
    Mesh,
}

/// Fields of `summary.json` that describe how a bake ran rather than what it made.
pub const RUN_FIELDS: &[&str] = &[
    "seconds",
    "peak_rss_bytes",
    "peak_anon_bytes",
    "peak_reserved_bytes",
    "threads",
    "memory_budget_bytes",
    "disk_bytes",
    "stages_reused",
    "resumed_tiles",
    "tiles_reused",
    "tiles_rebaked",
    "tiles_remerged",
    "tiles_raster_shared",
    "regions_rebaked",
    "regions_reused",
    "clusters_reused",
    "scene_cache_reused",
    "scene_files",
    "triangle_placements",
    // The merge of a rebake holds only the regions a change reaches.
    "merge_frontier_links",
    "merge_frontier_bytes",
];

/// Fields of `summary.json` that depend on the tile size.
pub const TILING_FIELDS: &[&str] = &[
    "tiles",
    "tiles_with_geometry",
    "tile_size",
    "third_class_removed",
];

/// Files whose bytes depend on the tile size (see [`Same::Mesh`]).
const TILING_FILES: &[&str] = &[
    "config.toml",
    "preview.png",
    "work/tiles.pack",
    "work/voxelized.bin",
    "work/tile-digests.bin",
    "work/region-polygons.pack",
];

/// Files whose bytes depend on the bakes the folder saw before, compared by name only: the
/// region journal's contours as words, kept from one polygon stage to the next, where a
/// rebake appends the changed tiles' words after the last bake's (`polygon_inputs`). What
/// they serve is checked by hash when read back, and the regions' keys made from them are
/// in `work/region-polygons.pack`, which is compared.
const HISTORY_FILES: &[&str] = &["work/contours.words", "work/contours-index.bin"];

/// Folders whose files depend on the tile size, in their bytes and in their number: the tile
/// pack's parts and the stages' journals (segments of so many tiles).
const TILING_DIRS: &[&str] = &[
    "work/bins/",
    "work/spans/",
    "work/floors/",
    "work/regions/",
    "work/tile-regions/",
    "work/tile-hashes/",
];

/// Whether the file `name` of a bake folder depends on the tile size.
fn tiling(name: &str) -> bool {
    let file = stage_file(name);
    TILING_FILES.contains(&file.as_str()) || TILING_DIRS.iter().any(|d| file.starts_with(d))
}

/// Asserts that the bake folders `want` and `got` hold the same files with the same bytes,
/// up to what `same` allows to differ. `what` names the variant in the failure message.
pub fn assert_same_bake(want: &Path, got: &Path, same: Same, what: &str) {
    let a = files(want);
    let b = files(got);
    // (Another tiling may cut the journals in other segments.)
    let names = |m: &BTreeMap<String, PathBuf>| {
        (m.keys().filter(|n| {
            same != Same::Mesh || !TILING_DIRS.iter().any(|d| stage_file(n).starts_with(d))
        }))
        .cloned()
        .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&a),
        names(&b),
        "{what}: the bake folders {} and {} hold different files",
        want.display(),
        got.display()
    );
    for (name, path) in &a {
        if (same == Same::Mesh && tiling(name))
            || HISTORY_FILES.contains(&stage_file(name).as_str())
        {
            continue;
        }
        let other = &b[name];
        match name.as_str() {
            // Names the process that last held the folder (tessera's `lock` module).
            "report.html" | ".tessera.lock" => {}
            "summary.json" => {
                let left = summary_result(path, same);
                let right = summary_result(other, same);
                assert!(
                    left == right,
                    "{what}: summary.json differs:\n  {}\n  {}",
                    serde_json::Value::Object(left),
                    serde_json::Value::Object(right)
                );
            }
            n if same == Same::Mesh && is_navmesh(n) => {
                let skip = tessera_navmesh::HEADER_LEN;
                let (x, y) = (read(path), read(other));
                assert!(
                    x.len() == y.len() && x[skip..] == y[skip..],
                    "{what}: the navmesh differs past its header ({} and {} bytes)",
                    x.len(),
                    y.len()
                );
            }
            _ => {
                let (x, y) = (read(path), read(other));
                if x != y {
                    let at = x.iter().zip(&y).position(|(p, q)| p != q);
                    panic!(
                        "{what}: {name} differs ({} and {} bytes, first difference at {})",
                        x.len(),
                        y.len(),
                        at.map_or("the end of the shorter".to_string(), |i| format!(
                            "byte {i}"
                        ))
                    );
                }
            }
        }
    }
}

/// A file's bytes, or a folder's files (a segmented journal), each by its name with its
/// bytes, in name order: what two bakes compare equal when they hold the same.
pub fn contents(path: &Path) -> Vec<(String, Vec<u8>)> {
    if !path.is_dir() {
        return vec![(String::new(), read(path))];
    }
    files(path)
        .into_iter()
        .map(|(name, file)| (name, read(&file)))
        .collect()
}

/// The bytes of a file, or of every file under a folder (0 when there is none).
pub fn bytes_under(path: &Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => files(path)
            .values()
            .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
            .sum(),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// A navmesh: `navmesh.tsn`, or an agent's `navmesh-NAME.tsn` in a bake for several.
fn is_navmesh(name: &str) -> bool {
    name == "navmesh.tsn" || (name.starts_with("navmesh-") && name.ends_with(".tsn"))
}

/// The name an agent's stage file `work/agents/NAME/FILE` has in a bake for one agent
/// (`work/FILE`); any other name as it is.
fn stage_file(name: &str) -> String {
    match name.strip_prefix("work/agents/") {
        Some(rest) => match rest.split_once('/') {
            Some((_, file)) => format!("work/{file}"),
            None => name.to_string(),
        },
        None => name.to_string(),
    }
}

/// Every file under `root`, by its path relative to `root` with `/` separators.
fn files(root: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, PathBuf>) {
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading the folder {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let rel = path.strip_prefix(root).unwrap();
                let name = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                out.insert(name, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// `summary.json` without the fields that `same` lets differ.
fn summary_result(path: &Path, same: Same) -> serde_json::Map<String, serde_json::Value> {
    let value: serde_json::Value = serde_json::from_slice(&read(path))
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let serde_json::Value::Object(mut fields) = value else {
        panic!("{} is not a JSON object", path.display());
    };
    strip(&mut fields, same);
    // A bake for several agents: each agent's section likewise.
    if let Some(serde_json::Value::Array(agents)) = fields.get_mut("agents") {
        for agent in agents {
            if let serde_json::Value::Object(section) = agent {
                strip(section, same);
            }
        }
    }
    fields
}

/// `fields` without those `same` lets differ.
fn strip(fields: &mut serde_json::Map<String, serde_json::Value>, same: Same) {
    for k in RUN_FIELDS {
        fields.remove(*k);
    }
    if same == Same::Mesh {
        for k in TILING_FIELDS {
            fields.remove(*k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        dir
    }

    const HEADER: usize = tessera_navmesh::HEADER_LEN;

    fn navmesh(header: u8, body: u8) -> Vec<u8> {
        let mut v = vec![header; HEADER];
        v.extend_from_slice(&[body; 16]);
        v
    }

    #[test]
    fn run_fields_may_differ_and_results_may_not() {
        let a = folder(&[
            ("summary.json", br#"{"polygons": 5, "threads": 1}"#),
            ("work/spans/seg-00000000", b"xyz"),
        ]);
        let b = folder(&[
            ("summary.json", br#"{"polygons": 5, "threads": 8}"#),
            ("work/spans/seg-00000000", b"xyz"),
        ]);
        assert_same_bake(a.path(), b.path(), Same::Tiling, "threads");
        let c = folder(&[
            ("summary.json", br#"{"polygons": 6, "threads": 1}"#),
            ("work/spans/seg-00000000", b"xyz"),
        ]);
        let r =
            std::panic::catch_unwind(|| assert_same_bake(a.path(), c.path(), Same::Tiling, "x"));
        assert!(r.is_err(), "a different polygon count must fail");
    }

    #[test]
    fn another_tiling_may_change_checkpoints_and_the_header_only() {
        let a = folder(&[
            ("navmesh.tsn", &navmesh(1, 7)),
            ("work/spans/seg-00000000", b"tiled one way"),
        ]);
        let b = folder(&[
            ("navmesh.tsn", &navmesh(2, 7)),
            ("work/spans/seg-00000000", b"another"),
            ("work/spans/seg-00000001", b"in more segments"),
        ]);
        assert_same_bake(a.path(), b.path(), Same::Mesh, "tile size");
        let r =
            std::panic::catch_unwind(|| assert_same_bake(a.path(), b.path(), Same::Tiling, "x"));
        assert!(r.is_err(), "the same tiling must give the same checkpoints");
        let c = folder(&[
            ("navmesh.tsn", &navmesh(1, 8)),
            ("work/spans/seg-00000000", b"tiled one way"),
        ]);
        let r = std::panic::catch_unwind(|| assert_same_bake(a.path(), c.path(), Same::Mesh, "x"));
        assert!(r.is_err(), "a different navmesh payload must fail");
    }

    #[test]
    fn a_missing_file_fails() {
        let a = folder(&[("navmesh.tsn", b"x"), ("config.toml", b"y")]);
        let b = folder(&[("navmesh.tsn", b"x")]);
        let r = std::panic::catch_unwind(|| assert_same_bake(a.path(), b.path(), Same::Mesh, "x"));
        assert!(r.is_err());
    }
}
