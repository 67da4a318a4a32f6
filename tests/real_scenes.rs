//! The real meshes of `tests/data/recast/` through the whole bake: tiling invariance (the
//! oracle), the scene cache reused, and plausible walkable coverage. (Every byte the same for any
//! thread count, budget or interruption: `navmesh.rs`.)

use tessera_geom::UpAxis;
use tessera_tests::*;

#[test]
#[ignore = "slow: every Recast scene at four tilings (about 5 s)"]
fn recast_scenes_are_tiling_invariant() {
    use tessera_config::SegmentationMode::{Layered, Surface};
    for (scene, mode) in recast_scenes()
        .into_iter()
        .flat_map(|s| [(s.clone(), Surface), (s, Layered)])
    {
        let dir = tempfile::tempdir().unwrap();
        let (single_summary, single) =
            bake_recast_scene(&scene, 8192, mode, dir.path().join("single"));
        assert_eq!(single_summary.tiles, 1);
        assert!(
            single_summary.walkable_spans > 1000,
            "{}: {single_summary:?}",
            scene.display()
        );
        for tile in [16, 64, 256] {
            let mut config = coarse_config(tile);
            config.regions.mode = mode;
            let (summary, tiled) = bake_columns(
                file(&scene, UpAxis::Y),
                &config,
                &dir.path().join(format!("t{tile}")),
                2,
                256 << 20,
            );
            assert!(summary.tiles > 1 || tile == 256, "{tile}");
            assert_eq!(
                (summary.spans, summary.walkable_spans),
                (single_summary.spans, single_summary.walkable_spans)
            );
            assert!(
                tiled == single,
                "{}: tile size {tile} differs from a single tile",
                scene.display()
            );
        }
    }
}

#[test]
fn second_bake_reuses_the_scene_cache() {
    let scene = recast_scenes()[1].clone();
    let dir = tempfile::tempdir().unwrap();
    let (first, a) = bake_columns(
        file(&scene, UpAxis::Y),
        &coarse_config(64),
        dir.path(),
        2,
        128 << 20,
    );
    let (second, b) = bake_columns(
        file(&scene, UpAxis::Y),
        &coarse_config(64),
        dir.path(),
        2,
        128 << 20,
    );
    assert!(!first.scene_cache_reused && second.scene_cache_reused);
    assert_eq!(a, b);
    // Another up axis is another scene: the cache is rebuilt (whether or not that bake then
    // finds anything walkable).
    let _ = tessera_pipeline::bake(tessera_pipeline::BakeRequest {
        scene: file(&scene, UpAxis::Z),
        config: coarse_config(64),
        out_dir: dir.path().to_path_buf(),
        threads: 2,
        memory_budget: 128 << 20,
        progress: tessera_pipeline::Progress::quiet(),
        interrupt: None,
        sampler: None,
    });
    let cache =
        tessera_ingest::cache::SceneCache::open(&dir.path().join("work/scene.cache")).unwrap();
    assert_eq!(cache.info().key.up, UpAxis::Z);
}
