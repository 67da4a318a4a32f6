//! Failures are classified and said once (issue 21, class 6): a full disk is an I/O failure
//! (exit 6), not bad input; a folder given as the scene is named as such (exit 3).

use std::process::Command;

/// A 30 x 30 m grid floor: 1 800 triangles, a scene cache of about 64 KiB.
fn grid_obj(path: &std::path::Path) {
    let n = 30;
    let mut s = String::new();
    for y in 0..=n {
        for x in 0..=n {
            s += &format!("v {x} {y} 0\n");
        }
    }
    for y in 0..n {
        for x in 0..n {
            let a = y * (n + 1) + x + 1;
            s += &format!(
                "f {a} {} {}\nf {a} {} {}\n",
                a + 1,
                a + n + 2,
                a + n + 2,
                a + n + 1
            );
        }
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn a_write_failing_during_ingest_is_an_io_failure_said_once() {
    let dir = tempfile::tempdir().unwrap();
    grid_obj(&dir.path().join("g.obj"));
    // Every write past 4 KiB fails (EFBIG), as on a full disk; SIGXFSZ ignored so the write
    // returns the error instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 4; exec {} bake g.obj --out o --log-format quiet",
        env!("CARGO_BIN_EXE_tessera")
    );
    let o = Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(6), "{err}");
    assert!(err.contains("os error 27"), "{err}");
    assert_eq!(err.matches("os error 27").count(), 1, "said once: {err}");
}

#[test]
fn a_folder_given_as_the_scene_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("level.obj")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["bake", "level.obj", "--log-format", "quiet"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("level.obj") && err.contains("not a regular file"),
        "{err}"
    );
    assert!(!err.contains("No such device"), "{err}");
    assert_eq!(
        err.matches("not a regular file").count(),
        1,
        "said once: {err}"
    );
}

/// Runs tessera in `dir`; the exit code and stderr.
fn run(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Asserts exit `code` and that stderr holds each of `says`, once each, and no Rust dump.
fn refused(got: (Option<i32>, String), code: i32, says: &[&str]) {
    let (status, err) = got;
    assert_eq!(status, Some(code), "{err}");
    for s in says {
        assert_eq!(err.matches(s).count(), 1, "{s:?} once in: {err}");
    }
    for dump in ["GridFrame {", "panicked", "os error 19", "untagged enum"] {
        assert!(!err.contains(dump), "{dump:?} in: {err}");
    }
}

#[test]
fn a_world_too_wide_for_the_grid_is_bad_input_said_in_words() {
    // 10^30 m across: the cell count wrapped to zero and the bake ended "corrupt artifact
    // scene.cache" (exit 6) with the grid's debug dump.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("far.obj"),
        "v 0 0 0\nv 1e30 0 0\nv 1e30 1e30 0\nf 1 2 3\n",
    )
    .unwrap();
    let got = run(dir.path(), &["bake", "far.obj", "--log-format", "quiet"]);
    refused(got, 3, &["far.obj", "along x", "more than the grid's"]);
}

#[test]
fn bake_inputs_that_are_the_wrong_kind_of_path_are_named() {
    let dir = tempfile::tempdir().unwrap();
    grid_obj(&dir.path().join("g.obj"));
    let quiet = ["--log-format", "quiet"];
    // An output folder that is a file: the folder is named, not its lock file.
    std::fs::write(dir.path().join("taken"), "a file").unwrap();
    let got = run(
        dir.path(),
        &[&["bake", "g.obj", "--out", "taken"][..], &quiet].concat(),
    );
    refused(got, 6, &["cannot create the output folder taken", "a file"]);
    // A config that is a folder, or a file that is not there, is not an unknown preset.
    std::fs::create_dir(dir.path().join("settings")).unwrap();
    let got = run(
        dir.path(),
        &[&["bake", "g.obj", "-c", "settings"][..], &quiet].concat(),
    );
    refused(got, 4, &["settings", "a folder"]);
    let got = run(
        dir.path(),
        &[&["bake", "g.obj", "-c", "mine.toml"][..], &quiet].concat(),
    );
    refused(got, 4, &["mine.toml", "no such file"]);
    // A glTF whose buffer file is missing names the scene and the buffer (the scene's key
    // used to read the buffer first and name only `missing.bin`).
    std::fs::write(
        dir.path().join("s.gltf"),
        r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":36,"uri":"missing.bin"}]}"#,
    )
    .unwrap();
    let got = run(dir.path(), &[&["bake", "s.gltf"][..], &quiet].concat());
    refused(got, 3, &["s.gltf", "buffer 0", "missing.bin"]);
    // Timeouts that are no number of seconds are command-line errors, said as such.
    for bad in ["nan", "-1", "0"] {
        let got = run(dir.path(), &["bake", "g.obj", "--startup-timeout", bad]);
        refused(got, 2, &["out of range"]);
    }
}

#[test]
fn navmesh_and_batch_inputs_say_what_is_wrong_and_where() {
    let dir = tempfile::tempdir().unwrap();
    grid_obj(&dir.path().join("g.obj"));
    let o = run(
        dir.path(),
        &[
            "bake",
            "g.obj",
            "-c",
            "recast-demo",
            "--out",
            "b",
            "--log-format",
            "quiet",
        ],
    );
    assert_eq!(o.0, Some(0), "{}", o.1);
    let nav = "b/navmesh.tsn";
    // A folder as the navmesh: bad input, named as a folder ("No such device" from the map
    // and exit 6 before); a path naming nothing is bad input too.
    std::fs::create_dir(dir.path().join("nav.tsn")).unwrap();
    refused(
        run(dir.path(), &["info", "nav.tsn"]),
        3,
        &["nav.tsn", "a folder"],
    );
    refused(run(dir.path(), &["info", "none.tsn"]), 3, &["none.tsn"]);
    // --threads without --batch did nothing, silently.
    let got = run(
        dir.path(),
        &[
            "path",
            nav,
            "--from",
            "1,1,0",
            "--to",
            "2,2,0",
            "--threads",
            "2",
        ],
    );
    refused(got, 2, &["give --batch"]);
    // Batch lines: named by file, line and column, in the file's own numbering.
    let good = r#"{"from": [1, 1, 0], "to": [2, 2, 0]}"#;
    let mut not_utf8 = format!("{good}\n").into_bytes();
    not_utf8.extend_from_slice(b"{\"from\": [1, 1, 0], \xff}\n");
    let cases: [(&str, Vec<u8>, &[&str]); 3] = [
        ("utf8.jsonl", not_utf8, &["utf8.jsonl:2:21:", "not UTF-8"]),
        (
            "blank.jsonl",
            format!("{good}\n\n{good}\n").into_bytes(),
            &["blank.jsonl:2:", "empty"],
        ),
        (
            "cut.jsonl",
            format!("{good}\n{good}\n{{\"from\": [1,\n").into_bytes(),
            &["cut.jsonl:3:12:"],
        ),
    ];
    for (name, bytes, says) in cases {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let got = run(dir.path(), &["path", nav, "--batch", name]);
        // serde's own position counts the line alone: line 1, whatever the line.
        assert!(!got.1.contains("line 1 column"), "{}", got.1);
        refused(got, 3, says);
    }
    std::fs::create_dir(dir.path().join("pairs")).unwrap();
    refused(
        run(dir.path(), &["path", nav, "--batch", "pairs"]),
        3,
        &["pairs: a folder"],
    );
}

#[test]
fn negative_numbers_and_a_file_to_clean_are_refused_for_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    grid_obj(&dir.path().join("g.obj"));
    // clap read `-5` as a flag and suggested `-- -5`, which passes it as the scene.
    for (flag, says) in [
        ("--memory-budget", "is not a size"),
        ("--threads", "is not in 1..=4096"),
        ("--demo-seed", "invalid value '-5'"),
    ] {
        let got = run(dir.path(), &["bake", "g.obj", flag, "-5"]);
        assert!(!got.1.contains("unexpected argument"), "{}", got.1);
        refused(got, 2, &[says]);
    }
    let got = run(dir.path(), &["clean", "g.obj"]);
    refused(got, 3, &["g.obj: a file, not a bake folder"]);
}
