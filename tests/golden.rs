//! Navmesh bytes pinned across refactors: the built-in demo world (as `tessera bake` with no
//! argument bakes it) and the three Recast demo meshes (the `default` preset, Y-up) give the
//! navmesh payload they gave when these digests were recorded.
//!
//! The digest covers everything after the 64-byte header: the archive of the mesh. The header
//! also holds the polygon stage key and a checksum over it; the key is a hash of the settings,
//! so a change to how keys are derived changes those two fields and nothing else. The format
//! version and the payload length are checked here too.
//!
//! When a change is meant to alter the navmesh (a format version bump, a new algorithm), update
//! the digests in the same commit and say why in its message.

use std::path::Path;

use tessera_config::BakeConfig;
use tessera_geom::UpAxis;
use tessera_pipeline::SceneInput;
use tessera_tests::{demo_world, file, quiet_request, recast_scenes};

/// The format version the digests were recorded with.
const FORMAT_VERSION: u32 = 10;

/// (scene, payload length, xxh3 of the payload), recorded with format 10: format 9's mesh
/// with each polygon's area id and the table of areas (issue 18); recorded again when the scene
/// cache's origin (and so the grid's) snapped to a 32 m grid below the scene's lowest corner
/// (cache version 3), which moves every cell of a scene whose corner is not on it: polygon
/// counts moved as for any other grid offset (demo 863 -> 864, dungeon 187 -> 203, nav_test
/// 243 -> 228, undulating 202 -> 215), walkable areas by at most 0.2 %; and when the
/// hierarchy's cluster borders were smoothed (polygons moved to the cluster they share the
/// most portal length with; the same polygons, fewer entrances), and when a cluster's
/// lengths were measured with its halo.
const GOLDEN: [(&str, u64, u64); 4] = [
    ("demo", 209560, 0x94c1cbe7839783c4),
    ("dungeon.obj", 34584, 0x344d81147da02574),
    ("nav_test.obj", 52584, 0x236425a7bbd91a8b),
    ("undulating.obj", 194864, 0xeb7e13e23a248f77),
];

/// Bakes `scene` with `config` into `out` and returns the navmesh file's bytes.
fn navmesh_bytes(scene: SceneInput, config: BakeConfig, out: &Path) -> Vec<u8> {
    tessera_pipeline::bake(quiet_request(scene, config, out))
        .unwrap_or_else(|e| panic!("bake into {} failed: {e}", out.display()));
    std::fs::read(out.join("navmesh.tsn")).unwrap()
}

/// (payload length, payload digest) of a navmesh file, after checking its format version.
fn fingerprint(bytes: &[u8], what: &str) -> (u64, u64) {
    let header = tessera_navmesh::HEADER_LEN;
    assert_eq!(&bytes[..8], tessera_navmesh::MAGIC, "{what}");
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    assert_eq!(version, FORMAT_VERSION, "{what}: format version");
    let payload = &bytes[header..];
    (payload.len() as u64, xxhash_rust::xxh3::xxh3_64(payload))
}

#[test]
fn navmesh_bytes_are_unchanged_on_the_demo_world_and_the_recast_scenes() {
    let dir = tempfile::tempdir().unwrap();
    let default = BakeConfig::preset("default").unwrap();
    let mut got = Vec::new();

    let bytes = navmesh_bytes(demo_world(), default.clone(), &dir.path().join("demo"));
    got.push(("demo".to_string(), fingerprint(&bytes, "demo")));

    for path in recast_scenes() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = navmesh_bytes(
            file(&path, UpAxis::Y),
            default.clone(),
            &dir.path().join(&name),
        );
        let print = fingerprint(&bytes, &name);
        got.push((name, print));
    }

    let report: String = got
        .iter()
        .map(|(n, (len, digest))| format!("    (\"{n}\", {len}, {digest:#018x}),\n"))
        .collect();
    for ((name, print), (golden_name, len, digest)) in got.iter().zip(GOLDEN) {
        assert_eq!(name, golden_name);
        assert_eq!(
            *print,
            (len, digest),
            "{name}: navmesh payload changed; the bakes gave\n{report}"
        );
    }
}
