//! Incremental rebakes: a scene changed and baked again into the same folder voxelizes only
//! the tiles whose triangles changed and polygonizes only the regions whose input changed, and
//! gives the bytes of a fresh bake of the new scene.

mod common;

use std::os::unix::fs::MetadataExt;
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
    write_scene(&m, path);
}

/// `m` written beside `path` and renamed over it, as the README asks of a scene changed
/// between bakes.
fn write_scene(m: &MeshBuilder, path: &Path) {
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
    let mut last = serde_json::Value::Null;
    for (what, blocks, moved) in changes {
        city(&d.join("s.obj"), blocks, moved, [0.0, 0.0]);
        let again = bake(d, "b");
        last = again.clone();
        let (reused, rebaked) = (
            count(&again, "tiles_reused"),
            count(&again, "tiles_rebaked"),
        );
        assert_eq!(reused + rebaked, tiles, "{what}: {again}");
        assert!(
            rebaked >= 1 && reused >= tiles / 2,
            "{what}: {reused} reused, {rebaked} rebaked"
        );
        // The ground is one region over every tile: a change reaches all of them, and the
        // merge joins them all again rather than a part.
        assert_eq!(count(&again, "tiles_remerged"), tiles, "{what}: {again}");
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

    // The same bytes written again later (a re-export, a checkout): the file's cache and
    // every stage are kept, and the summary counts what the stages made (as the last change's
    // bake counted it, the stages running).
    city(&d.join("s.obj"), 5, (2, 3.001), [0.0, 0.0]);
    std::fs::File::options()
        .write(true)
        .open(d.join("s.obj"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .unwrap();
    let rewritten = bake(d, "b");
    assert_eq!(rewritten["scene_cache_reused"], true, "{rewritten}");
    assert_eq!(
        rewritten["stages_reused"],
        serde_json::json!(["ingest", "bin", "voxelize", "polygons"]),
        "{rewritten}"
    );
    for field in [
        "tiles_with_geometry",
        "spans",
        "walkable_spans",
        "regions",
        "contours",
        "contour_vertices",
        "third_class_removed",
        "polygons",
    ] {
        assert_eq!(rewritten[field], last[field], "{field}: {rewritten}");
        assert_eq!(same[field], last[field], "{field}: {same}");
    }

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

/// Flips a byte in the middle of every chunk of the pack at `path` whose key `which` takes,
/// leaving its header, index and footer readable; returns how many it flipped.
fn flip_a_byte_in_chunks(path: &Path, which: impl Fn(u32) -> bool) -> usize {
    let mut bytes = std::fs::read(path).unwrap();
    // The pack's footer (index offset, chunk count, the index's hash, magic) and index
    // (key, offset, stored length, raw length, hash: 28 bytes a chunk).
    let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let footer = bytes.len() - 32;
    let (index, chunks) = (
        word(&bytes, footer) as usize,
        word(&bytes, footer + 8) as usize,
    );
    let mut flipped = 0;
    for c in 0..chunks {
        let e = index + 28 * c;
        let key = u32::from_le_bytes(bytes[e..e + 4].try_into().unwrap());
        let (at, len) = (
            word(&bytes, e + 4) as usize,
            u32::from_le_bytes(bytes[e + 12..e + 16].try_into().unwrap()) as usize,
        );
        if which(key) {
            bytes[at + len / 2] ^= 0x10;
            flipped += 1;
        }
    }
    std::fs::write(path, bytes).unwrap();
    flipped
}

#[test]
fn a_damaged_record_of_kept_polygons_is_made_again_not_taken() {
    // Every region's record in the kept polygons gets a flipped byte (the index and the pack
    // stay readable): a rebake finds each by its checksum, takes none and makes them all
    // again, and its folder is that of a rebake from the sound records.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("c.toml"), CONFIG).unwrap();
    city(&d.join("s.obj"), 6, (0, 0.0), [0.0, 0.0]);
    bake(d, "b");
    let copied = std::process::Command::new("cp")
        .args(["-a", "b", "damaged"])
        .current_dir(d)
        .status()
        .unwrap();
    assert!(copied.success());
    // Region records are keyed by their number; the first rounds and the index by the two
    // highest keys.
    let flipped = flip_a_byte_in_chunks(&d.join("damaged/work/region-polygons.pack"), |key| {
        key < u32::MAX - 1
    });
    assert!(flipped > 6, "{flipped} records");

    city(&d.join("s.obj"), 6, (2, 3.0), [0.0, 0.0]);
    let sound = bake(d, "b");
    assert!(count(&sound, "regions_reused") >= 3, "{sound}");
    let damaged = bake(d, "damaged");
    assert_eq!(count(&damaged, "regions_reused"), 0, "{damaged}");
    assert_eq!(
        count(&damaged, "regions_rebaked"),
        count(&sound, "regions_rebaked") + count(&sound, "regions_reused"),
        "{damaged}"
    );
    assert_same_bake(
        &d.join("b"),
        &d.join("damaged"),
        Same::Tiling,
        "damaged records",
    );
}

/// A ground of `x0..x0 + 30` by `0..60` m in 32 768 quads (65 536 triangles: a file large
/// enough to be binned in a part of its own), with `blocks` (x, y) corners of 4 x 4 x 3 m
/// blocks on it; written beside and renamed over `path`.
fn district(path: &Path, x0: f64, blocks: &[(f64, f64)]) {
    let mut m = MeshBuilder::default();
    let (nx, ny) = (128, 256);
    let (dx, dy) = (30.0 / nx as f64, 60.0 / ny as f64);
    for i in 0..nx {
        for j in 0..ny {
            let (x, y) = (x0 + i as f64 * dx, j as f64 * dy);
            m.floor(x, y, x + dx, y + dy, 0.0);
        }
    }
    for &(x, y) in blocks {
        m.block(x, y, x + 4.0, y + 4.0, 3.0);
    }
    write_scene(&m, path);
}

#[test]
fn a_scene_of_several_files_bins_again_only_the_files_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("c.toml"), CONFIG).unwrap();
    district(&d.join("w.obj"), 0.0, &[(5.0, 10.0), (12.0, 40.0)]);
    district(&d.join("e.obj"), 30.0, &[(35.0, 10.0), (45.0, 30.0)]);
    let list = |files: &[&str]| {
        std::fs::write(d.join("scenes.txt"), files.join("\n")).unwrap();
    };
    list(&["w.obj", "e.obj"]);
    let bake = |out: &str| -> serde_json::Value {
        let args = ["bake", "--scene-list", "scenes.txt", "--config", "c.toml"];
        let more = ["--out", out, "--threads", "2", "--log-format", "quiet"];
        let o = tessera(&[&args[..], &more].concat(), d);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&std::fs::read(d.join(out).join("summary.json")).unwrap()).unwrap()
    };
    let fresh_is_the_same = |what: &str| {
        let _ = std::fs::remove_dir_all(d.join("fresh"));
        bake("fresh");
        assert_same_bake(&d.join("fresh"), &d.join("b"), Same::Tiling, what);
    };
    let first = count(&bake("b"), "triangle_placements");
    assert!(first > 2 * 65_536, "{first}");

    // A block moved in the east file: only its part is binned again. (Packs of another form
    // of binning, as a bake of one file leaves them, go.)
    for stale in ["part-0-of-2.pack", "part-1-of-2.pack"] {
        std::fs::write(d.join("b/work/bins").join(stale), b"stale").unwrap();
    }
    district(&d.join("e.obj"), 30.0, &[(35.0, 10.0), (47.0, 30.0)]);
    let again = bake("b");
    let east = count(&again, "triangle_placements");
    assert!(
        east > 0 && east < first * 2 / 3,
        "{east} of {first}: {again}"
    );
    assert!(count(&again, "tiles_reused") > 0, "{again}");
    fresh_is_the_same("a block moved in one file");

    // A file added after them: the two parts are kept (their packs renamed to their new
    // places), the new file binned alone.
    let mut m = MeshBuilder::default();
    m.block(20.0, 50.0, 24.0, 54.0, 2.0);
    m.write_obj(&d.join("n.obj"));
    list(&["w.obj", "e.obj", "n.obj"]);
    let added = count(&bake("b"), "triangle_placements");
    assert!(added > 0 && added < 100, "{added}");
    fresh_is_the_same("a file added");
    let packs = std::fs::read_dir(d.join("b/work/bins")).unwrap().count();
    assert_eq!(packs, 3);

    // Every chunk of the west file's pack damaged (its index sound), and a byte of its
    // scene cache's triangles, then a block added in the east file by the files' border: the
    // tiles it changes are read, the west pack's chunks of them among them; the damage is
    // found then and that pack binned again, which reads the west cache, found damaged in
    // turn and made again from the file; the rebake goes on to the fresh bake's bytes.
    let starting = |dir: &str, prefix: &str| {
        std::fs::read_dir(d.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
            .unwrap()
    };
    let west = starting("b/work/bins", "part-0-");
    assert!(flip_a_byte_in_chunks(&west, |_| true) > 4);
    let cache = starting("b/work/scenes", "w-");
    let mut bytes = std::fs::read(&cache).unwrap();
    bytes[1000] ^= 0x10;
    std::fs::write(&cache, bytes).unwrap();
    district(
        &d.join("e.obj"),
        30.0,
        &[(35.0, 10.0), (47.0, 30.0), (30.5, 20.0)],
    );
    let repaired = bake("b");
    let both = count(&repaired, "triangle_placements");
    assert!(both > first, "{both} of {first}: {repaired}");
    let reused: Vec<bool> = (repaired["scene_files"].as_array().unwrap().iter())
        .map(|f| f["cache_reused"].as_bool().unwrap())
        .collect();
    assert_eq!(reused, [false, false, true], "{repaired}");
    fresh_is_the_same("a damaged pack of another file");
}

/// `n` x `n` islands 10 m wide, 2 m apart, each with a 4 x 4 x 3 m block in its middle;
/// `moved`: that island's block shifted in x; `gone`: islands left out.
fn islands(path: &Path, n: usize, moved: (usize, f64), gone: &[usize]) {
    let mut m = MeshBuilder::default();
    for i in (0..n * n).filter(|i| !gone.contains(i)) {
        let (x, y) = (12.0 * (i % n) as f64, 12.0 * (i / n) as f64);
        m.floor(x, y, x + 10.0, y + 10.0, 0.0);
        let dx = if i == moved.0 { moved.1 } else { 0.0 };
        m.block(x + 3.0 + dx, y + 3.0, x + 7.0 + dx, y + 7.0, 3.0);
    }
    write_scene(&m, path);
}

#[test]
fn a_change_on_one_island_merges_again_only_the_tiles_its_regions_reach() {
    // No region crosses from one island to another: a change on one reaches its regions
    // and those of the islands sharing its tiles, and the merge takes every other tile's
    // batch as the last bake made it. The bytes are still a fresh bake's.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("c.toml"), CONFIG).unwrap();
    islands(&d.join("s.obj"), 10, (0, 0.0), &[]);
    let first = bake(d, "b");
    let tiles = count(&first, "tiles_with_geometry");
    assert_eq!(count(&first, "tiles_remerged"), tiles, "{first}");
    // The tile journals' segments of the tiles far from every change (keys 64 on: the top
    // rows) are taken over as they are, hard links to the same files; the near ones are
    // written. So is the region journal's for the block moved (the islands taken away share
    // tiles with those of row 6, whose batches are then made again).
    let file = |name: &str| {
        std::fs::metadata(d.join("b/work").join(name))
            .unwrap()
            .ino()
    };
    let far: Vec<String> = ["spans", "floors", "tile-regions", "tile-hashes", "regions"]
        .iter()
        .map(|j| format!("{j}/seg-00000001"))
        .collect();
    let far_files: Vec<u64> = far.iter().map(|f| file(f)).collect();
    assert!(tiles > 64, "{tiles} tiles: one segment");
    // The islands changed are inside the world: its bounds, and so its grid, do not move.
    let changes: [(&str, (usize, f64), &[usize]); 3] = [
        ("a block moved on an island", (33, 2.0), &[]),
        ("four islands taken away", (33, 2.0), &[44, 45, 54, 55]),
        ("the islands put back", (33, 2.0), &[]),
    ];
    for (step, (what, moved, gone)) in changes.into_iter().enumerate() {
        islands(&d.join("s.obj"), 10, moved, gone);
        let near = file("spans/seg-00000000");
        let again = bake(d, "b");
        assert_ne!(file("spans/seg-00000000"), near, "{what}");
        for (name, was) in far.iter().zip(&far_files) {
            if step == 0 || !name.starts_with("regions") {
                assert_eq!(file(name), *was, "{what}: {name} was written again");
            }
        }
        let remerged = count(&again, "tiles_remerged");
        if gone.len() == 4 {
            // A tile that only those islands covered is gone: its batch with it.
            assert!(
                count(&again, "tiles_with_geometry") < tiles,
                "{what}: {again}"
            );
        }
        assert!(
            remerged >= 1 && remerged * 3 <= tiles,
            "{what}: {remerged} of {tiles} tiles merged again"
        );
        let _ = std::fs::remove_dir_all(d.join("fresh"));
        let fresh = bake(d, "fresh");
        let made = count(&fresh, "tiles_with_geometry");
        assert_eq!(count(&fresh, "tiles_remerged"), made, "{what}");
        assert_same_bake(&d.join("fresh"), &d.join("b"), Same::Tiling, what);
    }
}
