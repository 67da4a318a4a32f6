//! Helpers shared by the cross-crate tests: where the real scenes are, "bake this scene with
//! these settings and give me every core column", and "bake this scene under these variants
//! and demand the same bytes" ([`bake_variants`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
        sampler: None,
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

/// A request to bake `scene` with `config` into `out` on two threads within 256 MiB, quietly,
/// never interrupted: what most of these tests bake with.
pub fn quiet_request(scene: SceneInput, config: BakeConfig, out: &Path) -> BakeRequest {
    BakeRequest {
        scene,
        config,
        out_dir: out.to_path_buf(),
        threads: 2,
        memory_budget: 256 << 20,
        progress: tessera_pipeline::Progress::quiet(),
        interrupt: None,
        sampler: None,
    }
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
    c.voxel.tile_size = tile_size.into();
    c
}

/// The Z-up quad builder of the shared test fixtures.
pub use tessera_test_support::mesh::MeshBuilder;

/// The built-in demo world (citygen's 100 m city, seed 1), as `tessera bake` with no scene
/// bakes it.
pub fn demo_world() -> SceneInput {
    let demo = citygen::generate(&citygen::CityParams {
        size: citygen::Size::Demo,
        seed: 1,
        offset: [0.0; 3],
    });
    SceneInput::Mesh {
        name: "demo world (citygen, seed 1)".into(),
        positions: demo.positions,
        triangles: demo.triangles,
    }
}

/// A built mesh as an in-memory scene.
pub trait IntoScene {
    fn into_scene(self, name: &str) -> SceneInput;
}

impl IntoScene for MeshBuilder {
    fn into_scene(self, name: &str) -> SceneInput {
        SceneInput::Mesh {
            name: name.to_string(),
            positions: self.positions,
            triangles: self.triangles,
        }
    }
}

/// One way of running a bake: what must not change a byte of what it makes.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub tile_size: u32,
    pub threads: usize,
    pub budget: u64,
    /// Interrupt the bake (as SIGTERM does) once its span journal holds at least this many
    /// bytes, then run it again to resume.
    pub interrupt_after_bytes: Option<u64>,
}

impl Variant {
    /// `tile_size` with 2 threads and 256 MiB, uninterrupted.
    pub fn tiles(tile_size: u32) -> Variant {
        Variant {
            tile_size,
            threads: 2,
            budget: 256 << 20,
            interrupt_after_bytes: None,
        }
    }

    /// This variant with `threads` threads and a budget of `budget` bytes.
    pub fn run(self, threads: usize, budget: u64) -> Variant {
        Variant {
            threads,
            budget,
            ..self
        }
    }

    /// This variant, interrupted once the span journal holds `bytes` bytes, then resumed.
    pub fn interrupted(self, bytes: u64) -> Variant {
        Variant {
            interrupt_after_bytes: Some(bytes),
            ..self
        }
    }
}

/// What [`bake_variants`] did.
pub struct VariantBakes {
    /// The summary and folder of each variant's (final) bake, in the order given.
    pub bakes: Vec<(BakeSummary, PathBuf)>,
    /// Variants whose first run was really interrupted before it finished.
    pub interrupted: usize,
}

/// Bakes `scene` with `config` under every variant, each into its own folder under `root`,
/// and asserts that every bake folder is the same as the first variant's, file by file and
/// byte for byte: everything when the tile size is the same
/// ([`Same::Tiling`](tessera_test_support::bake_folder::Same)), the navmesh and the result
/// counts when it differs ([`Same::Mesh`](tessera_test_support::bake_folder::Same)).
pub fn bake_variants(
    scene: &dyn Fn() -> SceneInput,
    config: &BakeConfig,
    variants: &[Variant],
    root: &Path,
) -> VariantBakes {
    use tessera_test_support::bake_folder::{assert_same_bake, Same};
    let mut bakes: Vec<(BakeSummary, PathBuf)> = Vec::new();
    let mut interrupted = 0;
    for (i, v) in variants.iter().enumerate() {
        let out = root.join(format!(
            "v{i}-tile{}-threads{}-budget{}",
            v.tile_size, v.threads, v.budget
        ));
        let mut config = config.clone();
        config.voxel.tile_size = v.tile_size.into();
        let request = |interrupt| BakeRequest {
            scene: scene(),
            config: config.clone(),
            out_dir: out.clone(),
            threads: v.threads,
            memory_budget: v.budget,
            progress: Progress::quiet(),
            interrupt,
            sampler: None,
        };
        if let Some(bytes) = v.interrupt_after_bytes {
            if interrupt_run(request, &out, bytes) {
                interrupted += 1;
            }
        }
        let summary = tessera_pipeline::bake(request(None))
            .unwrap_or_else(|e| panic!("bake of {v:?} into {} failed: {e}", out.display()));
        if let Some((_, first)) = bakes.first() {
            let same = if v.tile_size == variants[0].tile_size {
                Same::Tiling
            } else {
                Same::Mesh
            };
            assert_same_bake(
                first,
                &out,
                same,
                &format!("{v:?} against {:?}", variants[0]),
            );
        }
        bakes.push((summary, out));
    }
    VariantBakes { bakes, interrupted }
}

/// Runs the bake `request` makes, setting its interrupt flag once `out`'s span journal holds
/// `bytes` bytes. Whether the bake was stopped before it finished.
pub fn interrupt_run(
    request: impl Fn(Option<Arc<AtomicBool>>) -> BakeRequest,
    out: &Path,
    bytes: u64,
) -> bool {
    let flag = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let journal = tessera_pipeline::BakeLayout::new(out).spans_journal();
    let watcher = {
        let (flag, done) = (flag.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if tessera_test_support::bake_folder::bytes_under(&journal) >= bytes {
                    flag.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        })
    };
    let result = tessera_pipeline::bake(request(Some(flag)));
    done.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    match result {
        Err(tessera_pipeline::BakeError::Interrupted) => true,
        Ok(_) => false,
        Err(e) => panic!("interrupted bake into {} failed: {e}", out.display()),
    }
}

/// A 20 x 20 m ground floor, a first floor 3 m up over its western 12 m, a 15-step stair
/// (0.2 m risers, 0.3 m treads) down from the first floor's edge eastwards, and a 1.5 m
/// platform with no way up (an island). Z up, minimum at the origin.
pub fn two_storey_building() -> MeshBuilder {
    let mut m = MeshBuilder::default();
    m.floor(0.0, 0.0, 20.0, 20.0, 0.0);
    m.floor(0.0, 0.0, 12.0, 20.0, 3.0);
    for i in 0..15 {
        let x0 = 12.0 + 0.3 * i as f64;
        let z = 3.0 - 0.2 * (i + 1) as f64;
        m.floor(x0, 8.0, x0 + 0.3, 12.0, z);
        // The riser in front of the tread.
        let zt = z + 0.2;
        m.quad([[x0, 8.0, z], [x0, 12.0, z], [x0, 12.0, zt], [x0, 8.0, zt]]);
    }
    m.floor(16.0, 15.0, 19.0, 19.0, 1.5);
    m
}
