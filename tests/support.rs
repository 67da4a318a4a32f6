//! Helpers shared by the cross-crate tests: where the real scenes are, and "bake this scene
//! with these settings and give me every core column".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tessera_artifacts::Span;
use tessera_config::BakeConfig;
use tessera_geom::UpAxis;
use tessera_pipeline::{BakeRequest, BakeSummary, Progress, SceneInput};

/// `tests/data/`: the meshes kept in the repository.
pub fn test_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// The Recast demo meshes (all Y-up), in `tests/data/recast/`.
pub fn recast_scenes() -> Vec<PathBuf> {
    ["dungeon.obj", "nav_test.obj", "undulating.obj"]
        .iter()
        .map(|n| test_data().join("recast").join(n))
        .collect()
}

/// Core columns of a bake, keyed by global cell.
pub type Columns = BTreeMap<(i32, i32), Vec<Span>>;

/// Bakes `scene` into `out` and returns the summary and every non-empty core column.
pub fn bake_columns(
    scene: SceneInput,
    config: &BakeConfig,
    out: &Path,
    threads: usize,
    budget: u64,
) -> (BakeSummary, Columns) {
    let summary = tessera_pipeline::bake(BakeRequest {
        scene,
        config: config.clone(),
        out_dir: out.to_path_buf(),
        threads,
        memory_budget: budget,
        progress: Progress::quiet(),
        interrupt: None,
    })
    .unwrap_or_else(|e| panic!("bake into {} failed: {e}", out.display()));
    let (_, fields) = tessera_pipeline::read_span_fields(out).unwrap();
    let mut columns = Columns::new();
    for f in fields {
        f.validate().unwrap();
        for y in f.core.y0..f.core.y1() {
            for x in f.core.x0..f.core.x1() {
                let c = f.column(x, y);
                if !c.is_empty() {
                    assert!(
                        columns.insert((x, y), c.to_vec()).is_none(),
                        "two tiles own cell {x},{y}"
                    );
                }
            }
        }
    }
    (summary, columns)
}

/// Bakes one of the Recast scenes (Y-up) with [`coarse_config`], the given tile size and
/// segmentation mode.
pub fn bake_recast_scene(
    scene: &Path,
    tile_size: u32,
    mode: tessera_config::SegmentationMode,
    out: impl AsRef<Path>,
) -> (BakeSummary, Columns) {
    let mut config = coarse_config(tile_size);
    config.regions.mode = mode;
    bake_columns(file(scene, UpAxis::Y), &config, out.as_ref(), 2, 256 << 20)
}

/// A file scene with an explicit up axis.
pub fn file(path: &Path, up: UpAxis) -> SceneInput {
    SceneInput::File {
        path: path.to_path_buf(),
        up: Some(up),
    }
}

/// Recast's demo settings at a finer grid (0.2 m cells, 0.1 m layers), coarse enough for quick
/// debug-build tests, with the given tile size.
pub fn coarse_config(tile_size: u32) -> tessera_config::BakeConfig {
    let mut c = BakeConfig::preset("recast-demo").unwrap();
    c.voxel.cell_size = 0.2;
    c.voxel.cell_height = 0.1;
    c.voxel.tile_size = tile_size;
    c
}

/// Builds an in-memory Z-up mesh from quads.
#[derive(Default)]
pub struct MeshBuilder {
    pub positions: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
}

impl MeshBuilder {
    /// Adds a quad as two triangles (`a b c`, `a c d`): counter-clockwise from above faces up.
    pub fn quad(&mut self, p: [[f64; 3]; 4]) {
        let b = self.positions.len() as u32;
        self.positions.extend_from_slice(&p);
        self.triangles.push([b, b + 1, b + 2]);
        self.triangles.push([b, b + 2, b + 3]);
    }

    pub fn into_scene(self, name: &str) -> SceneInput {
        SceneInput::Mesh {
            name: name.to_string(),
            positions: self.positions,
            triangles: self.triangles,
        }
    }
}

/// A 20 x 20 m ground floor, a first floor 3 m up over its western 12 m, a 15-step stair
/// (0.2 m risers, 0.3 m treads) down from the first floor's edge eastwards, and a 1.5 m
/// platform with no way up (an island). Z up, minimum at the origin.
pub fn two_storey_building() -> MeshBuilder {
    let mut m = MeshBuilder::default();
    let flat = |m: &mut MeshBuilder, x0: f64, y0: f64, x1: f64, y1: f64, z: f64| {
        m.quad([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]]);
    };
    flat(&mut m, 0.0, 0.0, 20.0, 20.0, 0.0);
    flat(&mut m, 0.0, 0.0, 12.0, 20.0, 3.0);
    for i in 0..15 {
        let x0 = 12.0 + 0.3 * i as f64;
        let z = 3.0 - 0.2 * (i + 1) as f64;
        flat(&mut m, x0, 8.0, x0 + 0.3, 12.0, z);
        // The riser in front of the tread.
        let zt = z + 0.2;
        m.quad([[x0, 8.0, z], [x0, 12.0, z], [x0, 12.0, zt], [x0, 8.0, zt]]);
    }
    flat(&mut m, 16.0, 15.0, 19.0, 19.0, 1.5);
    m
}
