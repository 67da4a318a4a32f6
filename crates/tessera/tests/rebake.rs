//! Incremental rebakes: a scene changed and baked again into the same folder voxelizes only
//! the tiles whose triangles changed and polygonizes only the regions whose input changed, and
//! gives the bytes of a fresh bake of the new scene.

mod common;

use std::path::Path;

use common::{stderr, tessera};
use tessera_test_support::bake_folder::{assert_same_bake, Same};
use tessera_test_support::mesh::MeshBuilder;

/// A 60 x 60 m floor with `blocks` blocks (3 m high, so their tops are islands); the block
/// `moved` shifted by `shift` in x; everything shifted by `offset`.
fn city(path: &Path, blocks: usize, (moved, shift): (usize, f64), offset: [f64; 2]) {
    let mut m = MeshBuilder::default();
    let [ox, oy] = offset;
    m.floor(ox, oy, ox + 60.0, oy + 60.0, 0.0);
    for i in 0..blocks {
        let dx = if i == moved { shift } else { 0.0 };
        let (x, y) = (
            ox + 4.0 + 9.0 * (i % 6) as f64 + dx,
            oy + 10.0 + 7.0 * i as f64,
        );
        m.block(x, y, x + 5.0, y + 4.0, 3.0);
    }
    // Written beside and renamed over, as the README asks of a scene changed between bakes.
    let tmp = path.with_extension("tmp");
    m.write_obj(&tmp);
    std::fs::rename(&tmp, path).unwrap();
}

const CONFIG: &str = "[voxel]\ncell_size = 0.2\ncell_height = 0.1\ntile_size = 64\n\
                      [agent]\nheight = 1.8\nradius = 0.4\nmax_climb = 0.4\n";

fn bake(dir: &Path, out: &str) -> serde_json::Value {
    let o = tessera(
        &[
            "bake",
            "s.obj",
            "--config",
            "c.toml",
            "--out",
            out,
            "--threads",
            "2",
            "--log-format",
            "quiet",
        ],
        dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = std::fs::read(dir.join(out).join("summary.json")).unwrap();
    serde_json::from_slice(&summary).unwrap()
}

fn count(summary: &serde_json::Value, field: &str) -> u64 {
    summary[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {summary}"))
}

#[test]
fn a_changed_scene_rebakes_the_tiles_that_changed_only_and_gives_a_fresh_bakes_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("c.toml"), CONFIG).unwrap();
    city(&d.join("s.obj"), 6, (0, 0.0), [0.0, 0.0]);
    let first = bake(d, "b");
    let tiles = count(&first, "tiles_with_geometry");
    assert_eq!(
        (
            count(&first, "tiles_reused"),
            count(&first, "tiles_rebaked")
        ),
        (0, tiles)
    );
    let regions = count(&first, "regions_rebaked");
    assert!(regions > 6, "{first}");
    assert_eq!(count(&first, "regions_reused"), 0, "{first}");

    // Each change in turn, baked into the same folder, then compared with a fresh bake.
    let changes: [(&str, usize, (usize, f64)); 4] = [
        ("a block moved 3 m", 6, (2, 3.0)),
        ("that block nudged by a millimetre", 6, (2, 3.001)),
        ("a block added", 7, (2, 3.001)),
        ("a block removed", 5, (2, 3.001)),
    ];
    for (what, blocks, moved) in changes {
        city(&d.join("s.obj"), blocks, moved, [0.0, 0.0]);
        let again = bake(d, "b");
        let (reused, rebaked) = (
            count(&again, "tiles_reused"),
            count(&again, "tiles_rebaked"),
        );
        assert_eq!(reused + rebaked, tiles, "{what}: {again}");
        assert!(
            rebaked >= 1 && reused >= tiles / 2,
            "{what}: {reused} reused, {rebaked} rebaked"
        );
        // The regions away from the change keep their polygons: the ground's (one region,
        // cut by the block) and the changed block's top are made again, the other tops not.
        let (kept, made) = (
            count(&again, "regions_reused"),
            count(&again, "regions_rebaked"),
        );
        assert!(
            made >= 1 && kept >= 3,
            "{what}: {kept} kept, {made} made: {again}"
        );
        assert!(!d.join("b/work/previous").exists(), "{what}");
        assert!(!d.join("b/work/previous-polygons.pack").exists(), "{what}");
        let _ = std::fs::remove_dir_all(d.join("fresh"));
        bake(d, "fresh");
        assert_same_bake(&d.join("fresh"), &d.join("b"), Same::Tiling, what);
    }

    // The same scene again: every stage reused, nothing rebaked.
    let same = bake(d, "b");
    assert_eq!(count(&same, "tiles_rebaked"), 0, "{same}");

    // The whole scene 0.37 m further: another grid, so every tile is voxelized again.
    city(&d.join("s.obj"), 5, (2, 3.001), [0.37, 0.0]);
    let moved = bake(d, "b");
    assert_eq!(
        (
            count(&moved, "tiles_reused"),
            count(&moved, "tiles_rebaked")
        ),
        (0, tiles),
        "{moved}"
    );
    std::fs::remove_dir_all(d.join("fresh")).unwrap();
    bake(d, "fresh");
    assert_same_bake(
        &d.join("fresh"),
        &d.join("b"),
        Same::Tiling,
        "translated scene",
    );
}
