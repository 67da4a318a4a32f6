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
