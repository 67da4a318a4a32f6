//! `tessera bake --cluster`: several processes on 127.0.0.1 bake the bytes one process bakes,
//! a lost process ends the others, a rerun resumes, a peer that never starts ends the bake.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tessera_test_support::bake_folder::{bytes_under, contents};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A hostfile of `n` free loopback ports.
fn hostfile(dir: &Path, n: usize) -> PathBuf {
    let text: String = (0..n)
        .map(|_| format!("127.0.0.1:{}\n", free_port()))
        .collect();
    let path = dir.join(format!("hosts-{n}"));
    std::fs::write(&path, text).unwrap();
    path
}

fn bake(extra: &[&str], out: &Path, threads: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tessera"));
    c.arg("bake")
        .args(extra)
        .args(["--threads", threads, "--memory-budget", "256MiB"])
        .args(["--log-format", "quiet", "--out"])
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Process `i` of the hostfile's bake.
fn process(scene: &[&str], hosts: &Path, i: usize, out: &Path, threads: &str) -> Child {
    let mut c = bake(scene, out, threads);
    c.arg("--cluster")
        .arg(hosts)
        .args(["--process", &i.to_string(), "--startup-timeout", "30"]);
    c.spawn().unwrap()
}

/// Waits for a child at most `limit`; kills it if it overstays (the test then fails).
fn finish(mut child: Child, limit: Duration) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("a process did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `n` processes of one bake and checks they all succeed; their outputs.
fn farm(args: &[&str], n: usize, out: &Path, threads: &str) -> Vec<Output> {
    let hosts = hostfile(out.parent().unwrap(), n);
    let children: Vec<Child> = (0..n)
        .map(|i| process(args, &hosts, i, out, threads))
        .collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| finish(c, Duration::from_secs(120)))
        .collect();
    outputs.iter().for_each(ok);
    outputs
}

/// The summary's counts: everything but how the bake ran (times, memory, reuse).
fn counts(out: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let run = |m: &mut serde_json::Map<String, serde_json::Value>| {
        m.retain(|k, _| !tessera_test_support::bake_folder::RUN_FIELDS.contains(&k.as_str()))
    };
    let m = v.as_object_mut().unwrap();
    run(m);
    // A bake for several agents: each agent's section likewise.
    for agent in m
        .get_mut("agents")
        .and_then(|a| a.as_array_mut())
        .into_iter()
        .flatten()
    {
        run(agent.as_object_mut().unwrap());
    }
    v
}

/// Every tile's triangles in a bake folder: from its tile pack, or from the parts its binning
/// was split in (`work/bins/`), a tile's chunks in part order.
fn binned_tiles(dir: &Path) -> std::collections::BTreeMap<u32, Vec<u8>> {
    let tiles =
        tessera_pipeline::TilePacks::open_bake(&tessera_pipeline::BakeLayout::new(dir)).unwrap();
    tiles
        .keys()
        .into_iter()
        .map(|key| {
            let mut bytes = vec![0u8; tiles.raw_len(key) as usize];
            tiles.read_into(key, &mut bytes).unwrap();
            (key, bytes)
        })
        .collect()
}

/// The navmesh, every checkpoint, the config and every tile's triangles have the same bytes;
/// the summaries the same counts. With several agents, each agent's checkpoints and navmesh
/// (`work/agents/NAME/`, `navmesh-NAME.tsn`).
fn same_bake(a: &Path, b: &Path) {
    assert!(
        binned_tiles(a) == binned_tiles(b),
        "the binned tiles differ"
    );
    let folders: Vec<(String, String)> = match std::fs::read_dir(a.join("work/agents")) {
        Ok(agents) => agents
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .map(|name| (format!("work/agents/{name}"), format!("navmesh-{name}.tsn")))
            .collect(),
        Err(_) => vec![("work".to_string(), "navmesh.tsn".to_string())],
    };
    let files = folders.into_iter().flat_map(|(work, navmesh)| {
        [
            "spans",
            "floors",
            "regions",
            "tile-regions",
            "tile-hashes",
            "voxelized.bin",
            "region-polygons.pack",
        ]
        .map(|f| format!("{work}/{f}"))
        .into_iter()
        .chain([navmesh])
    });
    for file in ["navmesh.tsn".to_string(), "config.toml".to_string()]
        .into_iter()
        .chain(files)
    {
        let file = file.as_str();
        assert!(
            contents(&a.join(file)) == contents(&b.join(file)),
            "{file} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
    let (a, b) = (counts(a), counts(b));
    let differ: Vec<&String> = a
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, v)| b.get(k.as_str()) != Some(*v))
        .map(|(k, _)| k)
        .collect();
    assert!(differ.is_empty(), "the summaries differ in {differ:?}");
}

#[test]
fn two_three_and_four_processes_bake_the_navmesh_of_one() {
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    ok(&finish(
        bake(&[], &one, "1").spawn().unwrap(),
        Duration::from_secs(120),
    ));
    let summary = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
    };
    for (n, threads) in [(2, "1"), (3, "2"), (4, "1")] {
        let out = tmp.path().join(format!("farm-{n}"));
        let outputs = farm(&[], n, &out, threads);
        same_bake(&one, &out);
        // The other processes matched the links between their own tiles (issue 16: a local
        // merge per process), and process 0's merge counted its frontier as one process does.
        let matched: u64 = outputs[1..]
            .iter()
            .map(|o| count_before(o, " border links matched here"))
            .sum();
        assert!(matched > 0, "{n} processes: no link matched by its process");
        // Their own union-finds left process 0 a few unions for many links.
        let unions: u64 = outputs[1..]
            .iter()
            .map(|o| count_before(o, " of them unions"))
            .sum();
        assert!(
            unions > 0 && unions * 4 < matched,
            "{unions} unions of {matched} links"
        );
        for field in ["merge_frontier_links", "merge_frontier_bytes"] {
            assert_eq!(summary(&one)[field], summary(&out)[field], "{field}");
        }
    }
}

#[test]
fn a_scene_of_several_files_is_read_by_several_processes() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = |name: &str| {
        format!(
            "{}/../../tests/data/recast/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    let (dungeon, nav_test) = (scene("dungeon.obj"), scene("nav_test.obj"));
    let args = [
        dungeon.as_str(),
        nav_test.as_str(),
        "--up",
        "y",
        "--config",
        "recast-demo",
    ];
    let one = tmp.path().join("one");
    ok(&finish(
        bake(&args, &one, "2").spawn().unwrap(),
        Duration::from_secs(120),
    ));
    let out = tmp.path().join("farm");
    let outputs = farm(&args, 2, &out, "1");
    // The larger file is process 0's, the other process 1's.
    let said = String::from_utf8_lossy(&outputs[1].stdout);
    assert!(said.contains("1 scene files read"), "{said}");
    same_bake(&one, &out);
}

#[test]
fn several_agents_are_baked_by_every_process_in_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("agents.toml");
    std::fs::write(
        &config,
        "[[agents]]\nname = \"adult\"\n\
         [[agents]]\nname = \"child\"\nheight = 1.2\nradius = 0.25\nmax_climb = 0.3\n\
         [[agents]]\nname = \"cart\"\nheight = 1.5\nradius = 0.8\nmax_climb = 0.1\n\
         max_slope = 15.0\n",
    )
    .unwrap();
    let args = ["--config", config.to_str().unwrap()];
    let one = tmp.path().join("one");
    ok(&finish(
        bake(&args, &one, "1").spawn().unwrap(),
        Duration::from_secs(120),
    ));
    let agents = |dir: &Path| -> Vec<serde_json::Value> {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
        v["agents"].as_array().unwrap().clone()
    };
    let out = tmp.path().join("farm");
    let outputs = farm(&args, 2, &out, "1");
    same_bake(&one, &out);
    // Every process rasterized its tiles once for the three agents, as one process does.
    let tiles = counts(&out)["tiles_with_geometry"].as_u64().unwrap();
    assert!(tiles > 4, "{tiles} tiles");
    for agent in &agents(&out)[1..] {
        assert_eq!(
            agent["tiles_raster_shared"].as_u64(),
            Some(tiles),
            "{agent}"
        );
    }
    // Process 1 took a share of the agents' tiles and regions.
    assert!(count_before(&outputs[1], " tiles voxelized") > 0);
    assert!(count_before(&outputs[1], " regions polygonized") > 0);

    // Rerun with three processes, one agent's navmesh gone: the others' are reused, and its
    // regions are shared out again.
    std::fs::remove_file(out.join("navmesh-child.tsn")).unwrap();
    let outputs = farm(&args, 3, &out, "1");
    same_bake(&one, &out);
    assert!(count_before(&outputs[1], " regions polygonized") > 0);
}

#[test]
fn a_rebake_across_processes_reuses_the_unchanged_tiles_and_regions_on_every_process() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (scene, config) = (d.join("s.obj"), d.join("c.toml"));
    std::fs::write(
        &config,
        "[voxel]\ncell_size = 0.2\ncell_height = 0.1\ntile_size = 64\n",
    )
    .unwrap();
    // A 60 x 60 m floor with six blocks, the third `shift` further in x.
    let write = |shift: f64| {
        let mut m = tessera_test_support::mesh::MeshBuilder::default();
        m.floor(0.0, 0.0, 60.0, 60.0, 0.0);
        for i in 0..6 {
            let x = 4.0 + 9.0 * (i % 6) as f64 + if i == 2 { shift } else { 0.0 };
            let y = 10.0 + 7.0 * i as f64;
            m.block(x, y, x + 5.0, y + 4.0, 3.0);
        }
        let part = d.join("s.tmp");
        m.write_obj(&part);
        std::fs::rename(&part, &scene).unwrap();
    };
    let args = [
        scene.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ];
    let summary = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
    };
    // The scene baked, then a block moved and baked again into the same folders: by one
    // process, and by two.
    let (one, farmed) = (d.join("one"), d.join("farm"));
    let mut outputs = Vec::new();
    for shift in [0.0, 3.0] {
        write(shift);
        ok(&finish(
            bake(&args, &one, "1").spawn().unwrap(),
            Duration::from_secs(120),
        ));
        outputs = farm(&args, 2, &farmed, "1");
    }
    let fresh = d.join("fresh");
    ok(&finish(
        bake(&args, &fresh, "1").spawn().unwrap(),
        Duration::from_secs(120),
    ));
    same_bake(&fresh, &farmed);
    // Process 1 reused its unchanged tiles and regions as process 0 did: as many reused as
    // by one process.
    let (alone, farmed) = (summary(&one), summary(&farmed));
    let reused = alone["tiles_reused"].as_u64().unwrap();
    let tiles = alone["tiles_with_geometry"].as_u64().unwrap();
    assert!(reused > tiles / 2 && reused < tiles, "{alone}");
    assert!(alone["regions_reused"].as_u64().unwrap() > 0, "{alone}");
    for field in ["tiles_reused", "regions_reused", "regions_rebaked"] {
        assert_eq!(farmed[field], alone[field], "{field}: {farmed}");
    }
    assert!(count_before(&outputs[1], " of them kept from the last bake") > 0);
}

/// The number a process's report (its stdout) gives just before `what`.
fn count_before(o: &Output, what: &str) -> u64 {
    let said = String::from_utf8_lossy(&o.stdout);
    said.split(what)
        .next()
        .and_then(|head| head.rsplit([' ', '(']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count before {what:?} in {said:?}"))
}

/// The triangles process `i`'s report says it read of a one-file scene.
fn triangles_read(o: &Output) -> u64 {
    count_before(o, " triangles of a scene file read")
}

#[test]
fn a_single_obj_file_is_read_in_parts_by_every_process() {
    // A Recast scene on 2 and 3 processes bakes the bytes of one process (of 2 threads).
    // Process 0 runs the vertex pass and shares its tables; every process reads a run of the
    // face windows into a part of the scene cache; the parts, in order, are the one cache.
    let tmp = tempfile::tempdir().unwrap();
    let scene = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/recast/dungeon.obj"
    );
    let args = [scene, "--up", "y", "--config", "recast-demo"];
    let one = tmp.path().join("one");
    ok(&finish(
        bake(&args, &one, "2").spawn().unwrap(),
        Duration::from_secs(120),
    ));
    let total = counts(&one)["triangles"].as_u64().unwrap();
    for n in [2, 3] {
        let out = tmp.path().join(format!("farm-{n}"));
        let outputs = farm(&args, n, &out, "1");
        same_bake(&one, &out);
        // Every other process read a share of the faces, and together less than all of them:
        // process 0 read its own share.
        let theirs: Vec<u64> = outputs[1..].iter().map(triangles_read).collect();
        assert!(theirs.iter().all(|&t| t > 0), "{n} processes: {theirs:?}");
        assert!(
            theirs.iter().sum::<u64>() < total,
            "{n} processes: {theirs:?}"
        );
        for p in 0..n {
            let part = out.join(format!("work/scene-parts/part-{p}-of-{n}.cache"));
            assert!(part.exists(), "{} is missing", part.display());
        }
    }
    // A rerun with another number of processes reuses the cache in parts, and a one-process
    // bake reuses it too.
    let out = tmp.path().join("farm-3");
    let outputs = farm(&args, 2, &out, "2");
    assert_eq!(triangles_read(&outputs[1]), 0, "the cache was read again");
    let reused = |dir: &Path| {
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
        summary["scene_cache_reused"].as_bool().unwrap()
    };
    assert!(reused(&out));
    same_bake(&one, &out);
    ok(&finish(
        bake(&args, &out, "1").spawn().unwrap(),
        Duration::from_secs(120),
    ));
    assert!(reused(&out));
    same_bake(&one, &out);
}

#[test]
fn a_malformed_face_in_another_process_part_is_reported_by_process_0_naming_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("bad.obj");
    // A floor of quads, then one face naming a vertex that does not exist, near the end
    // (another process's part), and a second bad one after it: the first is reported.
    let mut text = String::new();
    let side = 60;
    for y in 0..=side {
        for x in 0..=side {
            text.push_str(&format!("v {x} {y} 0\n"));
        }
    }
    let row = side + 1;
    let quads = side * side;
    let bad_at = quads * 9 / 10;
    // After the vertices and the faces up to `bad_at`.
    let bad_line = row * row + bad_at + 2;
    for q in 0..quads {
        let (x, y) = (q % side, q / side);
        let v = y * row + x + 1;
        text.push_str(&format!("f {} {} {} {}\n", v, v + 1, v + row + 1, v + row));
        if q == bad_at || q == bad_at + 50 {
            text.push_str("f 1 2 999999\n");
        }
    }
    std::fs::write(&scene, text).unwrap();
    let scene = scene.to_str().unwrap().to_string();
    let args = [scene.as_str(), "--up", "z"];
    let hosts = hostfile(tmp.path(), 2);
    let out = tmp.path().join("farm");
    let children: Vec<Child> = (0..2)
        .map(|i| process(&args, &hosts, i, &out, "2"))
        .collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| finish(c, Duration::from_secs(60)))
        .collect();
    // The one-process message and exit code (3: bad input).
    let one = finish(
        bake(&args, &tmp.path().join("one"), "2").spawn().unwrap(),
        Duration::from_secs(60),
    );
    assert_eq!(one.status.code(), Some(3));
    let want = String::from_utf8_lossy(&one.stderr).into_owned();
    assert!(want.contains(&format!("bad.obj:{bad_line}:")), "{want}");
    assert_eq!(outputs[0].status.code(), Some(3));
    let got = String::from_utf8_lossy(&outputs[0].stderr);
    assert!(got.contains(&format!("bad.obj:{bad_line}:")), "{got}");
    assert!(!outputs[1].status.success());
}

#[test]
fn a_process_that_never_starts_ends_the_bake_with_exit_7_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let hosts = hostfile(tmp.path(), 3);
    let out = tmp.path().join("out");
    let started = Instant::now();
    let mut c = bake(&[], &out, "1");
    c.arg("--cluster")
        .arg(&hosts)
        .args(["--process", "0", "--startup-timeout", "1.5"]);
    let o = finish(c.spawn().unwrap(), Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(7));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("process 1 (127.0.0.1:"), "{err}");
    assert!(err.contains("process 2 (127.0.0.1:"), "{err}");
    assert!(err.contains("never answered"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
#[ignore = "slow: bakes a citygen S world three times (ten seconds or more)"]
fn a_process_killed_mid_bake_ends_the_others_and_a_rerun_gives_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = tmp.path().join("city-s.obj");
    let mesh = citygen::generate(&citygen::CityParams {
        size: citygen::Size::S,
        seed: 7,
        offset: [0.0; 3],
    });
    let mut file = std::io::BufWriter::new(std::fs::File::create(&scene).unwrap());
    citygen::write_obj(&mesh, &mut file).unwrap();
    drop(file);
    let scene = scene.to_str().unwrap().to_string();
    let args = [scene.as_str(), "--up", "z"];
    let one = tmp.path().join("one");
    ok(&finish(
        bake(&args, &one, "1").spawn().unwrap(),
        Duration::from_secs(300),
    ));

    // Three processes; process 1 is killed once the voxelize stage has run a while.
    let out = tmp.path().join("farm");
    let hosts = hostfile(tmp.path(), 3);
    let mut children: Vec<Child> = (0..3)
        .map(|i| process(&args, &hosts, i, &out, "1"))
        .collect();
    let spans = out.join("work/spans");
    let wait = Instant::now();
    while bytes_under(&spans) < 64 << 10 {
        assert!(
            wait.elapsed() < Duration::from_secs(120),
            "voxelize never began"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    children[1].kill().unwrap();
    let killed = Instant::now();
    for (i, child) in children.into_iter().enumerate() {
        let o = finish(child, Duration::from_secs(30));
        if i != 1 {
            assert!(!o.status.success(), "process {i} did not fail");
        }
    }
    assert!(killed.elapsed() < Duration::from_secs(30));

    // The same command with two processes resumes from process 0's checkpoints.
    farm(&args, 2, &out, "1");
    same_bake(&one, &out);

    // Again, process 2 killed in the polygon stage, once it has begun its share of the
    // regions (its scratch folder is there).
    let out = tmp.path().join("farm-polygons");
    let mut children: Vec<Child> = (0..3)
        .map(|i| process(&args, &hosts, i, &out, "1"))
        .collect();
    let scratch = out.join("work/polygons/process-2");
    let part = out.join("work/polygons/part-2.pack");
    let wait = Instant::now();
    while !scratch.exists() {
        assert!(
            wait.elapsed() < Duration::from_secs(120),
            "the polygon stage never began"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    children[2].kill().unwrap();
    let killed = Instant::now();
    // Killed before its part was written, the others cannot finish; either way none hangs.
    let in_time = !part.exists();
    eprintln!(
        "process 2 killed {} its part was written",
        if in_time { "before" } else { "after" }
    );
    for (i, child) in children.into_iter().enumerate() {
        let o = finish(child, Duration::from_secs(30));
        if i != 2 && in_time {
            assert!(!o.status.success(), "process {i} did not fail");
        }
    }
    assert!(killed.elapsed() < Duration::from_secs(30));
    farm(&args, 2, &out, "1");
    same_bake(&one, &out);
}
