//! Entry points for fuzzing the scene readers: arbitrary bytes in, every triangle read as a
//! bake reads it, the readers' promises checked.
//!
//! The fuzz targets in the repository's `fuzz/` folder and this crate's
//! `tests/fuzz_regressions.rs` call these same functions, so every input the fuzzer kept (its
//! corpus, and each crash it found) is replayed on stable by `cargo test`.
//!
//! The readers run with area rules, so that the statements and names that give areas are
//! read too.
//!
//! A reader may refuse its input with an [`IngestError`]. It must never panic, and what it
//! accepts must be fit for the scene cache: every coordinate of every triangle finite and inside
//! the bounds the reader reported (the world origin is their minimum). These functions panic
//! when that promise is broken, which the fuzzer reports as a crash.

use crate::gltf_scene::GltfScene;
use crate::obj::ObjScene;
use crate::{AreaRules, IngestError, ReadLimits, SceneSource};
use std::path::Path;
use tessera_geom::UpAxis;

/// Reads `bytes` as a Wavefront OBJ file (Z up): writes them to `input.obj` in `scratch` (the
/// reader maps files), opens it, which also puts the vertex table in `scratch`, and reads every
/// triangle. Returns the number of triangles.
pub fn read_obj(bytes: &[u8], scratch: &Path) -> Result<u64, IngestError> {
    let path = scratch.join("input.obj");
    std::fs::write(&path, bytes).map_err(|e| IngestError::io(&path, e))?;
    let mut scene = ObjScene::open_with(&path, UpAxis::Z, scratch, limits())?;
    read_all(&mut scene)
}

/// Reads `bytes` as a glTF scene (Y up), JSON `.gltf` or binary `.glb` as its first bytes say,
/// with no folder to read external buffers from (data URIs and the GLB chunk only). Returns the
/// number of triangles.
pub fn read_gltf(bytes: &[u8]) -> Result<u64, IngestError> {
    let mut scene = GltfScene::from_bytes_with(
        Path::new("input.gltf"),
        bytes.to_vec(),
        UpAxis::Y,
        None,
        limits(),
    )?;
    read_all(&mut scene)
}

/// The default limits, with rules that match some names and not others.
fn limits() -> ReadLimits {
    let rules = [&["*a*", "b?"][..], &["?"], &["*"]];
    ReadLimits::default().with_areas(AreaRules::new(
        rules
            .iter()
            .map(|r| r.iter().map(|p| p.to_string()).collect())
            .collect(),
    ))
}

/// Reads every triangle of `scene`, checking each coordinate against the reported bounds.
fn read_all(scene: &mut dyn SceneSource) -> Result<u64, IngestError> {
    let bounds = scene.bounds();
    let mut triangles = 0u64;
    scene.for_each_triangle(&mut |t| {
        for p in t {
            for (axis, &c) in p.iter().enumerate() {
                assert!(
                    c.is_finite(),
                    "triangle {triangles}: coordinate {c} is not finite"
                );
                assert!(
                    bounds.min[axis] <= c && c <= bounds.max[axis],
                    "triangle {triangles}: coordinate {c} outside the reported bounds {bounds:?}"
                );
            }
        }
        triangles += 1;
        Ok(())
    })?;
    Ok(triangles)
}
