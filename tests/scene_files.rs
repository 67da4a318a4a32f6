//! A scene of several files (issue 19, point 2): baked as the one file they make together, each
//! file cached on its own, so that a bake after one file changed reads only that one again.

use std::path::{Path, PathBuf};
use tessera_pipeline::{BakeRequest, BakeSummary, Progress, SceneInput};
use tessera_test_support::mesh::MeshBuilder;
use tessera_tests::coarse_config;

/// A floor with two blocks on it, in three parts (the floor, each block), every coordinate a
/// multiple of 0.25 m: a part moved into the scene's frame lands on exactly the coordinates the
/// whole scene's cache holds, so the two bakes can be compared byte for byte.
fn parts(second_block_x: f64) -> [MeshBuilder; 3] {
    let mut floor = MeshBuilder::default();
    floor.floor(0.0, 0.0, 24.0, 18.0, 0.0);
    let mut a = MeshBuilder::default();
    a.block(4.0, 4.0, 8.5, 9.25, 3.0);
    let mut b = MeshBuilder::default();
    b.block(second_block_x, 7.0, second_block_x + 3.0, 12.0, 1.5);
    [floor, a, b]
}

/// The parts as one mesh, in the same order.
fn joined(parts: &[MeshBuilder]) -> MeshBuilder {
    let mut all = MeshBuilder::default();
    for p in parts {
        let base = all.positions.len() as u32;
        all.positions.extend_from_slice(&p.positions);
        all.triangles
            .extend(p.triangles.iter().map(|t| t.map(|i| i + base)));
    }
    all
}

fn bake(scene: SceneInput, out: &Path) -> BakeSummary {
    tessera_tests::bake_columns(scene, &coarse_config(16), out, 2, 256 << 20).0
}

/// The navmesh past its header (which holds the stage key: the scene's identity).
fn payload(out: &Path) -> Vec<u8> {
    let bytes = std::fs::read(out.join("navmesh.tsn")).unwrap();
    bytes[tessera_navmesh::HEADER_LEN..].to_vec()
}

fn write(dir: &Path, name: &str, mesh: &MeshBuilder) -> PathBuf {
    let path = dir.join(name);
    mesh.write_obj(&path);
    path
}

#[test]
fn several_files_bake_as_the_file_they_make_and_only_a_changed_one_is_read_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let files: Vec<PathBuf> = parts(15.0)
        .iter()
        .zip(["floor.obj", "a.obj", "b.obj"])
        .map(|(m, name)| write(dir, name, m))
        .collect();
    let whole = write(dir, "whole.obj", &joined(&parts(15.0)));
    let one = bake(
        SceneInput::File {
            path: whole,
            up: None,
        },
        &dir.join("one"),
    );
    let many_out = dir.join("many");
    let many = bake(
        SceneInput::Files {
            paths: files.clone(),
            up: None,
        },
        &many_out,
    );
    assert_eq!(payload(&dir.join("one")), payload(&many_out));
    assert_eq!(
        (many.triangles, many.polygons),
        (one.triangles, one.polygons)
    );
    assert!(many.polygons > 0);
    let counts: Vec<(u64, bool)> = many
        .scene_files
        .iter()
        .map(|f| (f.triangles, f.cache_reused))
        .collect();
    assert_eq!(counts, [(2, false), (10, false), (10, false)]);
    let caches = |out: &Path| std::fs::read_dir(out.join("work/scenes")).unwrap().count();
    assert_eq!(caches(&many_out), 3);

    // One block moved: its file alone is read again, and the bake is a fresh bake's.
    write(dir, "b.obj", &parts(18.0)[2]);
    let again = bake(
        SceneInput::Files {
            paths: files.clone(),
            up: None,
        },
        &many_out,
    );
    let reused: Vec<bool> = again.scene_files.iter().map(|f| f.cache_reused).collect();
    assert_eq!(reused, [true, true, false]);
    let fresh_out = dir.join("fresh");
    bake(
        SceneInput::Files {
            paths: files.clone(),
            up: None,
        },
        &fresh_out,
    );
    assert_eq!(payload(&fresh_out), payload(&many_out));
    assert_ne!(payload(&fresh_out), payload(&dir.join("one")));

    // Listed in another order and without one file: the caches are found by path, the one
    // no longer listed is removed.
    let fewer = bake(
        SceneInput::Files {
            paths: vec![files[2].clone(), files[0].clone()],
            up: None,
        },
        &many_out,
    );
    let reused: Vec<bool> = fewer.scene_files.iter().map(|f| f.cache_reused).collect();
    assert_eq!(reused, [true, true]);
    assert_eq!(caches(&many_out), 2);
}

#[test]
fn files_with_other_up_axes_are_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let [floor, a, _] = parts(15.0);
    let obj = write(tmp.path(), "floor.obj", &floor);
    drop(a);
    // glTF is Y-up by default, OBJ Z-up: refused before the glTF is read.
    let gltf = tmp.path().join("a.gltf");
    std::fs::write(&gltf, r#"{"asset":{"version":"2.0"}}"#).unwrap();
    let e = tessera_pipeline::bake(BakeRequest {
        scene: SceneInput::Files {
            paths: vec![obj.clone(), gltf.clone()],
            up: None,
        },
        config: coarse_config(16),
        out_dir: tmp.path().join("out"),
        threads: 1,
        memory_budget: 256 << 20,
        progress: Progress::quiet(),
        interrupt: None,
        sampler: None,
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("a.gltf") && e.contains("floor.obj"), "{e}");
    assert!(e.contains("up axis"), "{e}");
}
