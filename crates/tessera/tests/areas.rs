//! Areas from the scene's names, end to end: a river (a `water` group) with a bridge over it,
//! and a road with a longer footpath round it, baked by the real binary from `[[areas]]`
//! rules and queried with `tessera path` and `tessera info`.

use std::path::Path;

use tessera_test_support::bake_folder::{assert_same_bake, Same};
use tessera_test_support::mesh::MeshBuilder;

mod common;

use common::{bake_scene, path_json as path, stderr, tessera};

const SETTINGS: &str = "[voxel]\ncell_size = 0.2\ncell_height = 0.1\n\
                        [agent]\nheight = 1.8\nradius = 0.4\nmax_climb = 0.4\n";

/// Bakes `s.obj` with `bake.toml` into `out`, with `more` arguments.
fn bake(dir: &Path, out: &str, more: &[&str]) {
    bake_scene(dir, "bake.toml", out, more);
}

/// `tessera info --json` of `nav`.
fn info(dir: &Path, nav: &str) -> serde_json::Value {
    let o = tessera(&["info", nav, "--json"], dir);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

/// Points every 0.1 m along a path's waypoints, in plan.
fn along(answer: &serde_json::Value) -> Vec<[f64; 2]> {
    let pts: Vec<[f64; 2]> = answer["waypoints"]
        .as_array()
        .expect("waypoints")
        .iter()
        .map(|p| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()])
        .collect();
    let mut out = Vec::new();
    for w in pts.windows(2) {
        let d = ((w[1][0] - w[0][0]).powi(2) + (w[1][1] - w[0][1]).powi(2)).sqrt();
        let n = (d / 0.1).ceil().max(1.0) as usize;
        for k in 0..=n {
            let t = k as f64 / n as f64;
            out.push([
                w[0][0] + t * (w[1][0] - w[0][0]),
                w[0][1] + t * (w[1][1] - w[0][1]),
            ]);
        }
    }
    out
}

/// The area of `info`'s list named `name`.
fn area<'a>(info: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    info["areas"]
        .as_array()
        .expect("areas")
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no area {name} in {info}"))
}

#[test]
fn no_polygon_lies_on_the_water_and_the_path_crosses_by_the_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Banks 12 m wide either side of a river 6 m wide (x 12..18) whose water lies 0.3 m below
    // the banks (within the climb: walkable, were it not water) over a bed 2 m down; a bridge
    // deck 0.3 m above the banks across it at y 8..12.
    let mut m = MeshBuilder::default();
    m.statement("g bank");
    m.floor(0.0, 0.0, 12.0, 20.0, 0.0);
    m.floor(18.0, 0.0, 30.0, 20.0, 0.0);
    m.statement("g bed");
    m.floor(12.0, 0.0, 18.0, 20.0, -2.0);
    m.statement("g River_water");
    m.floor(12.0, 0.0, 18.0, 20.0, -0.3);
    m.statement("g bridge");
    m.floor(11.0, 8.0, 19.0, 12.0, 0.3);
    m.write_obj(&d.join("s.obj"));
    std::fs::write(
        d.join("bake.toml"),
        format!("{SETTINGS}[[areas]]\nmatch = [\"*water*\"]\nname = \"water\"\nwalkable = false\n"),
    )
    .unwrap();
    bake(d, "b", &[]);
    // Areas are tiling-invariant as the rest: tiles of 24 cells cut the river and the bridge.
    bake(d, "t", &["--tile-size", "24", "--threads", "1"]);
    assert_same_bake(&d.join("b"), &d.join("t"), Same::Mesh, "tiles of 24 cells");
    std::fs::write(d.join("plain.toml"), SETTINGS).unwrap();
    bake_scene(d, "plain.toml", "plain", &[]);

    let i = info(d, "b/navmesh.tsn");
    let water = area(&i, "water");
    assert_eq!(water["walkable"], false, "{i}");
    assert_eq!(water["polygons"], 0, "{i}");
    assert!(
        area(&i, "default")["walkable_m2"].as_f64().unwrap() > 400.0,
        "{i}"
    );
    // Without the rule, the water is a floor like any (the plain bake walks it).
    let plain = info(d, "plain/navmesh.tsn");
    let (with, without) = (
        i["walkable_area_m2"].as_f64().unwrap(),
        plain["walkable_area_m2"].as_f64().unwrap(),
    );
    assert!(without > with + 80.0, "{without} vs {with}");

    let across = path(d, "b/navmesh.tsn", "5,3,0", "25,3,0", &[]);
    assert_eq!(across["found"], true, "{across}");
    for p in along(&across) {
        if p[0] > 12.2 && p[0] < 17.8 {
            assert!(
                p[1] > 8.0 && p[1] < 12.0,
                "off the bridge at {p:?}: {across}"
            );
        }
    }
    // The plain bake swims straight across.
    let swim = path(d, "plain/navmesh.tsn", "5,3,0", "25,3,0", &[]);
    assert!(swim["length"].as_f64().unwrap() < 20.5, "{swim}");
    assert!(across["length"].as_f64().unwrap() > 21.0, "{across}");
}

#[test]
fn an_avoided_road_sends_the_path_round_by_the_footpath_and_costs_decide_between_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Plazas A (x 0..6) and B (x 30..36) over y 0..6 joined by a road (x 6..30); a footpath
    // from A's north side round to B's (y 6..16 above each plaza, y 12..16 between them),
    // with nothing between road and footpath.
    let mut m = MeshBuilder::default();
    m.statement("usemtl Stone");
    m.floor(0.0, 0.0, 6.0, 6.0, 0.0);
    m.floor(30.0, 0.0, 36.0, 6.0, 0.0);
    m.statement("usemtl Asphalt_worn");
    m.floor(6.0, 0.0, 30.0, 6.0, 0.0);
    m.statement("usemtl Path");
    m.floor(0.0, 6.0, 6.0, 16.0, 0.0);
    m.floor(6.0, 12.0, 30.0, 16.0, 0.0);
    m.floor(30.0, 6.0, 36.0, 16.0, 0.0);
    m.write_obj(&d.join("s.obj"));
    std::fs::write(
        d.join("bake.toml"),
        format!(
            "{SETTINGS}[[areas]]\nmatch = [\"Asphalt*\", \"road*\"]\nname = \"road\"\n\
             [[areas]]\nmatch = [\"Path\"]\nname = \"footpath\"\n"
        ),
    )
    .unwrap();
    bake(d, "b", &[]);
    let i = info(d, "b/navmesh.tsn");
    for name in ["default", "road", "footpath"] {
        assert!(
            area(&i, name)["walkable_m2"].as_f64().unwrap() > 50.0,
            "{name}: {i}"
        );
    }
    let nav = "b/navmesh.tsn";
    let (from, to) = ("3,3,0", "33,3,0");
    let road = path(d, nav, from, to, &[]);
    assert_eq!(road["found"], true, "{road}");
    let straight = road["length"].as_f64().unwrap();
    assert!(straight < 30.5, "{road}");
    let round = path(d, nav, from, to, &["--avoid", "road"]);
    assert_eq!(round["found"], true, "{round}");
    let detour = round["length"].as_f64().unwrap();
    assert!(detour > 40.0, "{round}");
    assert!(along(&round)
        .iter()
        .all(|p| p[1] > 5.0 || p[0] < 6.5 || p[0] > 29.5));
    // The way round is about 13 m longer: a road costing 1.2 (24 m of it: +4.8) is still
    // cheaper, one costing 2 (+24) is not.
    let a = path(d, nav, from, to, &["--cost", "road=1.2"]);
    assert!(
        (a["length"].as_f64().unwrap() - straight).abs() < 1e-6,
        "{a}"
    );
    let b = path(d, nav, from, to, &["--cost", "road=2"]);
    assert!((b["length"].as_f64().unwrap() - detour).abs() < 0.5, "{b}");
    // An unknown name is refused, listing the names there are.
    let o = tessera(
        &["path", nav, "--from", from, "--to", to, "--avoid", "lava"],
        d,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("lava") && e.contains("footpath"), "{e}");
}
