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
use tessera_pipeline::{BakeRequest, Progress, SceneInput};
use tessera_tests::{file, recast_scenes};

/// The format version the digests were recorded with.
const FORMAT_VERSION: u32 = 7;

/// (scene, payload length, xxh3 of the payload), recorded with format 7 (each polygon's
/// connected component and the table of components: the same mesh otherwise, its paths and
/// counts checked equal to format 6's) and surface regions by default. dungeon and nav_test
/// re-recorded when a ground polygon's edge heights came to be walked to from its corners
/// (`tessera validate --scene` on them: 6 and 43 of 10 000 points off the scene by up to 7.8
/// and 5.2 m before, 0 and 12, up to 2.2 m, after); the demo world and undulating unchanged.
const GOLDEN: [(&str, u64, u64); 4] = [
    ("demo", 154768, 0x450c418e4bdc01b6),
    ("dungeon.obj", 30728, 0x89aadb13f044d02d),
    ("nav_test.obj", 49496, 0xc4bf8870303cb9bf),
    ("undulating.obj", 169320, 0xb00560fd4849be4e),
];

/// Bakes `scene` with `config` into `out` and returns the navmesh file's bytes.
fn navmesh_bytes(scene: SceneInput, config: BakeConfig, out: &Path) -> Vec<u8> {
    tessera_pipeline::bake(BakeRequest {
        scene,
        config,
        out_dir: out.to_path_buf(),
        threads: 2,
        memory_budget: 256 << 20,
        progress: Progress::quiet(),
        interrupt: None,
        sampler: None,
    })
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

    let demo = citygen::generate(&citygen::CityParams {
        size: citygen::Size::Demo,
        seed: 1,
        offset: [0.0; 3],
    });
    let scene = SceneInput::Mesh {
        name: "demo world (citygen, seed 1)".into(),
        positions: demo.positions,
        triangles: demo.triangles,
    };
    let bytes = navmesh_bytes(scene, default.clone(), &dir.path().join("demo"));
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
