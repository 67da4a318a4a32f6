//! OBJ and glTF of the same geometry give the same triangles; glTF node transforms compose in
//! f64; every kind of bad glTF input gives an error naming the file and the part at fault.

use std::path::{Path, PathBuf};
use tessera_geom::{Triangle, UpAxis};
use tessera_ingest::cache::{build_cache, SceneCache, SourceKey};
use tessera_ingest::IngestError;
use tessera_test_support::gltf::Gltf;
use tessera_test_support::mesh::triangles_obj;

/// Positions in the mesh's own space (Y-up), all multiples of 0.25 so every sum is exact.
const LIST: [[f32; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [1.0, 0.0, -1.0],
    [0.0, 0.0, -1.0],
];
const LIST_INDICES: [u16; 6] = [0, 1, 2, 0, 2, 3];
const STRIP: [[f32; 3]; 5] = [
    [2.0, 0.5, 0.0],
    [2.0, 0.5, -1.0],
    [3.0, 0.5, 0.0],
    [3.0, 0.5, -1.0],
    [4.0, 0.75, 0.0],
];
const FAN: [[f32; 3]; 4] = [
    [5.0, 0.25, 0.0],
    [6.0, 0.25, 0.0],
    [6.0, 0.25, -1.0],
    [5.0, 0.25, -1.5],
];
const FAN_INDICES: [u32; 4] = [0, 1, 2, 3];

/// A tiny glTF: one mesh of three primitives (indexed list with u16 indices, a non-indexed
/// strip, a fan with u32 indices) under a node hierarchy given as JSON.
fn build(nodes_json: &str, nan: bool, bad_index: bool) -> Gltf {
    let mut bin = Vec::new();
    let mut views = Vec::new();
    let mut push = |bin: &mut Vec<u8>, bytes: &[u8], target: u32| {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        views.push(format!(
            r#"{{"buffer":0,"byteOffset":{},"byteLength":{},"target":{target}}}"#,
            bin.len(),
            bytes.len()
        ));
        bin.extend_from_slice(bytes);
    };
    let f32s = |v: &[[f32; 3]]| {
        v.iter()
            .flatten()
            .flat_map(|c| c.to_le_bytes())
            .collect::<Vec<u8>>()
    };
    let mut list = LIST;
    if nan {
        list[2][1] = f32::NAN;
    }
    let mut list_idx = LIST_INDICES;
    if bad_index {
        list_idx[4] = 9;
    }
    push(&mut bin, &f32s(&list), 34962);
    push(
        &mut bin,
        &list_idx
            .iter()
            .flat_map(|i| i.to_le_bytes())
            .collect::<Vec<_>>(),
        34963,
    );
    push(&mut bin, &f32s(&STRIP), 34962);
    push(&mut bin, &f32s(&FAN), 34962);
    push(
        &mut bin,
        &FAN_INDICES
            .iter()
            .flat_map(|i| i.to_le_bytes())
            .collect::<Vec<_>>(),
        34963,
    );
    let acc = |view: usize, count: usize, ty: &str, comp: u32| {
        let minmax = if ty == "VEC3" {
            r#","min":[-10,-10,-10],"max":[10,10,10]"#
        } else {
            ""
        };
        format!(
            r#"{{"bufferView":{view},"componentType":{comp},"count":{count},"type":"{ty}"{minmax}}}"#
        )
    };
    let accessors = [
        acc(0, 4, "VEC3", 5126),
        acc(1, 6, "SCALAR", 5123),
        acc(2, 5, "VEC3", 5126),
        acc(3, 4, "VEC3", 5126),
        acc(4, 4, "SCALAR", 5125),
    ];
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":{nodes_json},
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1,"mode":4}},{{"attributes":{{"POSITION":2}},"mode":5}},{{"attributes":{{"POSITION":3}},"indices":4,"mode":6}}]}}],
"buffers":[{{"byteLength":{}}}],"bufferViews":[{}],"accessors":[{}]}}"#,
        bin.len(),
        views.join(","),
        accessors.join(",")
    );
    Gltf { json, bin }
}

/// The world triangles the builder's mesh gives under a pure translation `t` (Y-up).
fn expected_world(t: [f64; 3]) -> Vec<[[f64; 3]; 3]> {
    let w = |p: [f32; 3]| [p[0] as f64 + t[0], p[1] as f64 + t[1], p[2] as f64 + t[2]];
    let mut out = Vec::new();
    for tri in LIST_INDICES.chunks(3) {
        out.push([
            w(LIST[tri[0] as usize]),
            w(LIST[tri[1] as usize]),
            w(LIST[tri[2] as usize]),
        ]);
    }
    for i in 0..STRIP.len() - 2 {
        let (a, b) = if i % 2 == 0 {
            (i + 1, i + 2)
        } else {
            (i + 2, i + 1)
        };
        out.push([w(STRIP[i]), w(STRIP[a]), w(STRIP[b])]);
    }
    for i in 1..FAN.len() - 1 {
        out.push([w(FAN[i]), w(FAN[i + 1]), w(FAN[0])]);
    }
    out
}

fn write_obj(tris: &[[[f64; 3]; 3]], path: &Path) {
    std::fs::write(path, triangles_obj(tris)).unwrap();
}

fn ingest(path: &Path, up: UpAxis) -> Result<(Vec<Triangle>, [f64; 3]), IngestError> {
    let dir = tempfile::tempdir().unwrap();
    let mut source = tessera_ingest::open_scene(path, up, dir.path())?;
    let cache = dir.path().join("c");
    build_cache(
        source.as_mut(),
        SourceKey::of_file(path, up, &Default::default())?,
        &cache,
    )?;
    let c = SceneCache::open(&cache)?;
    Ok((c.triangles().to_vec(), c.info().origin))
}

#[test]
fn obj_gltf_and_glb_of_the_same_geometry_give_the_same_triangles() {
    let dir = tempfile::tempdir().unwrap();
    let t = [0.5, 2.0, -3.0];
    let g = build(
        &format!(
            r#"[{{"children":[1]}},{{"translation":[{},{},{}],"mesh":0}}]"#,
            t[0], t[1], t[2]
        ),
        false,
        false,
    );
    let glb = dir.path().join("scene.glb");
    let gltf = dir.path().join("scene.gltf");
    let obj = dir.path().join("scene.obj");
    g.write_glb(&glb);
    g.write_gltf(&gltf);
    write_obj(&expected_world(t), &obj);
    let from_obj = ingest(&obj, UpAxis::Y).unwrap();
    assert_eq!(from_obj.0.len(), 2 + 3 + 2);
    assert_eq!(ingest(&glb, UpAxis::Y).unwrap(), from_obj);
    assert_eq!(ingest(&gltf, UpAxis::Y).unwrap(), from_obj);
}

#[test]
fn node_transforms_compose_in_f64() {
    let dir = tempfile::tempdir().unwrap();
    // A UTM-like translation on the parent, a 90 degree turn about Y and a scale on the child.
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let g = build(
        &format!(
            r#"[{{"translation":[512345.678,10.0,-5712345.678],"children":[1]}},{{"rotation":[0,{h},0,{h}],"scale":[2,2,2],"mesh":0}}]"#
        ),
        false,
        false,
    );
    let glb = dir.path().join("utm.glb");
    g.write_glb(&glb);
    let (tris, origin) = ingest(&glb, UpAxis::Y).unwrap();
    // Expected: p' = T + R(2p), R = +90 degrees about Y: (x, y, z) -> (z, y, -x); then Y-up to Z-up.
    let world = |p: [f32; 3]| {
        let s = [2.0 * p[0] as f64, 2.0 * p[1] as f64, 2.0 * p[2] as f64];
        let r = [s[2], s[1], -s[0]];
        UpAxis::Y.to_z_up([512345.678 + r[0], 10.0 + r[1], -5712345.678 + r[2]])
    };
    let first = [world(LIST[0]), world(LIST[1]), world(LIST[2])];
    for k in 0..3 {
        for a in 0..3 {
            let got = origin[a] + tris[0][k][a] as f64;
            assert!(
                (got - first[k][a]).abs() < 1e-4,
                "vertex {k} axis {a}: {got} vs {}",
                first[k][a]
            );
        }
    }
}

fn glb_error(g: &Gltf, mangle: impl Fn(&mut Vec<u8>)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.glb");
    g.write_glb(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    mangle(&mut bytes);
    std::fs::write(&path, bytes).unwrap();
    let err = ingest(&path, UpAxis::Y).unwrap_err().to_string();
    assert!(err.contains("bad.glb"), "{err}");
    err
}

#[test]
fn bad_gltf_inputs_name_the_file_and_the_part() {
    let nodes = r#"[{"mesh":0}]"#;
    let good = build(nodes, false, false);
    let e = glb_error(&good, |b| b.truncate(b.len() - 20));
    assert!(
        e.contains("truncated") || e.contains("container") || e.contains("buffer"),
        "{e}"
    );
    let e = glb_error(&build(nodes, true, false), |_| {});
    assert!(e.contains("accessor 0") && e.contains("NaN"), "{e}");
    let e = glb_error(&build(nodes, false, true), |_| {});
    assert!(
        e.contains("accessor 1") && e.contains("out of range"),
        "{e}"
    );

    // A .gltf whose .bin is missing.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lost.gltf");
    good.write_gltf(&path);
    std::fs::remove_file(dir.path().join("scene.bin")).unwrap();
    let e = ingest(&path, UpAxis::Y).unwrap_err().to_string();
    assert!(e.contains("lost.gltf") && e.contains("scene.bin"), "{e}");
}

#[test]
fn unknown_extension_is_refused() {
    let e = tessera_ingest::open_scene(&PathBuf::from("x.fbx"), UpAxis::Z, Path::new("/tmp"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("x.fbx") && e.contains(".obj"), "{e}");
}
