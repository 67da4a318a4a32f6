//! Off-mesh links from the config, end to end: a ledge 3 m above the ground with no way down
//! but a one-way link, baked by the real binary and queried with `tessera path`.

use std::path::Path;

use tessera_test_support::bake_folder::{assert_same_bake, Same};
use tessera_test_support::mesh::MeshBuilder;

mod common;

use common::{bake_scene, path_json, stderr, tessera};

/// A 30 x 12 m ground with a 10 x 8 m block 3 m high on it (Z up).
fn ledge_scene(path: &Path) {
    let mut m = MeshBuilder::default();
    m.floor(0.0, 0.0, 30.0, 12.0, 0.0);
    m.block(2.0, 2.0, 12.0, 10.0, 3.0);
    m.write_obj(path);
}

const SETTINGS: &str = "[voxel]\ncell_size = 0.2\ncell_height = 0.1\n\
                        [agent]\nheight = 1.8\nradius = 0.4\nmax_climb = 0.4\n";

/// Bakes `s.obj` with `cfg/bake.toml` into `out`, with `more` arguments.
fn bake(dir: &Path, out: &str, more: &[&str]) {
    bake_scene(dir, "cfg/bake.toml", out, more);
}

/// `tessera path` on `b/navmesh.tsn` between two scene points, with `more` arguments.
fn path_with(dir: &Path, from: &str, to: &str, more: &[&str]) -> serde_json::Value {
    path_json(dir, "b/navmesh.tsn", from, to, more)
}

/// [`path_with`] without more arguments.
fn path(dir: &Path, from: &str, to: &str) -> serde_json::Value {
    path_with(dir, from, to, &[])
}

#[test]
fn a_one_way_link_from_a_links_file_takes_paths_down_the_ledge_and_never_up() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ledge_scene(&d.join("s.obj"));
    std::fs::create_dir(d.join("cfg")).unwrap();
    // The links file sits beside the config, which names it relative to itself.
    std::fs::write(
        d.join("cfg/bake.toml"),
        format!("links_file = \"jumps.toml\"\n{SETTINGS}"),
    )
    .unwrap();
    std::fs::write(
        d.join("cfg/jumps.toml"),
        "[[links]]\nfrom = [11.4, 6.0, 3.1]\nto = [12.8, 6.0, 0.0]\nbidirectional = false\n\
         cost = 1.5\nname = \"jump\"\n",
    )
    .unwrap();
    bake(d, "b", &[]);
    // The effective config lists the link itself.
    let effective = std::fs::read_to_string(d.join("b/config.toml")).unwrap();
    assert!(
        effective.contains("[[links]]") && !effective.contains("links_file"),
        "{effective}"
    );

    let down = path(d, "5,6,3", "25,6,0");
    assert_eq!(down["found"], true, "{down}");
    assert_eq!(down["link_names"], serde_json::json!(["jump"]), "{down}");
    let i = down["links"][0].as_u64().unwrap() as usize;
    let take_off = &down["waypoints"][i];
    let landing = &down["waypoints"][i + 1];
    assert!((take_off[2].as_f64().unwrap() - 3.0).abs() < 0.2, "{down}");
    assert!(landing[2].as_f64().unwrap().abs() < 0.2, "{down}");
    // Up is not found: the block's walls are 3 m, the link is one way.
    let up = path(d, "25,6,0", "5,6,3");
    assert_eq!(up["found"], false, "{up}");
    // Avoided, there is no way down either; costed, the same way costs more but is found.
    let avoided = path_with(d, "5,6,3", "25,6,0", &["--avoid", "jump"]);
    assert_eq!(avoided["found"], false, "{avoided}");
    let costed = path_with(d, "5,6,3", "25,6,0", &["--cost", "jump=40"]);
    assert_eq!(costed["waypoints"], down["waypoints"], "{costed}");
    let o = tessera(
        &[
            "path",
            "b/navmesh.tsn",
            "--from",
            "5,6,3",
            "--to",
            "25,6,0",
            "--avoid",
            "rope",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rope") && stderr(&o).contains("jump"),
        "{}",
        stderr(&o)
    );

    // `tessera info` lists it, its ends where they snapped (onto the mesh, in scene terms).
    let o = tessera(&["info", "b/navmesh.tsn", "--json"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let links = info["off_mesh_links"].as_array().expect("a list");
    assert_eq!(links.len(), 1, "{info}");
    assert_eq!(links[0]["name"], "jump");
    assert_eq!(links[0]["bidirectional"], false);
    for k in 0..3 {
        let (a, b) = (links[0]["from"][k].as_f64(), take_off[k].as_f64());
        assert!((a.unwrap() - b.unwrap()).abs() < 1e-5, "{info}");
    }

    // Small tiles on one thread: the same navmesh, links and all.
    bake(d, "t", &["--tile-size", "24", "--threads", "1"]);
    assert_same_bake(&d.join("b"), &d.join("t"), Same::Mesh, "tiles of 24 cells");
}

#[test]
fn a_link_end_off_the_mesh_fails_the_bake_naming_the_link_and_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ledge_scene(&d.join("s.obj"));
    std::fs::write(
        d.join("bake.toml"),
        format!(
            "{SETTINGS}[[links]]\nfrom = [11.4, 6.0, 3.0]\nto = [12.8, 6.0, 0.0]\n\
             [[links]]\nfrom = [11.4, 4.0, 3.0]\nto = [40.0, 4.0, 0.0]\nname = \"far\"\n"
        ),
    )
    .unwrap();
    let o = tessera(&["bake", "s.obj", "--config", "bake.toml", "--out", "b"], d);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("links[1]") && e.contains("\"far\"") && e.contains("`to` end"),
        "{e}"
    );
    assert!(!d.join("b/navmesh.tsn").exists());

    // A radius out of range is refused with the config's other errors, before any work.
    std::fs::write(
        d.join("bad.toml"),
        "[[links]]\nfrom = [1.0, 1.0, 0.0]\nto = [2.0, 1.0, 0.0]\nradius = 0.0\n",
    )
    .unwrap();
    let o = tessera(&["bake", "s.obj", "--config", "bad.toml", "--out", "c"], d);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("links") && stderr(&o).contains("radius"),
        "{}",
        stderr(&o)
    );
}
