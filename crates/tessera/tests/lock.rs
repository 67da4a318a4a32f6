//! One bake at a time in a bake folder (issue 21, class 4): a second bake (or `clean`) exits 75
//! naming the holder, or waits with `--wait-lock`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tessera(args: &[&str], cwd: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tessera"));
    c.args(args).current_dir(cwd);
    c
}

/// Takes the folder's lock as another bake would, naming a made-up holder.
fn hold(dir: &std::path::Path) -> std::fs::File {
    std::fs::create_dir_all(dir).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(".tessera.lock"))
        .unwrap();
    f.try_lock().unwrap();
    f.set_len(0).unwrap();
    f.write_all(b"host farm-07 pid 4242\n").unwrap();
    f
}

#[test]
fn a_second_bake_in_a_folder_in_use_exits_75_naming_the_holder_or_waits() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("floor.obj"),
        "v 0 0 0\nv 20 0 0\nv 20 20 0\nv 0 20 0\nf 1 2 3 4\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let held = hold(&out);
    let o = tessera(
        &["bake", "floor.obj", "--out", "out", "--fresh"],
        dir.path(),
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(75), "{err}");
    assert!(err.contains("farm-07") && err.contains("4242"), "{err}");
    assert!(!out.join("work").exists(), "nothing touched");
    let o = tessera(&["clean", "out"], dir.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(75));

    // With --wait-lock it waits for the holder, then bakes.
    let mut child = tessera(
        &[
            "bake",
            "floor.obj",
            "--out",
            "out",
            "--wait-lock",
            "--log-format",
            "quiet",
        ],
        dir.path(),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "it waits");
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the bake never finished");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    assert!(out.join("navmesh.tsn").exists());
    // The lock file names the last holder: this bake.
    let named = std::fs::read_to_string(out.join(".tessera.lock")).unwrap();
    assert!(named.contains(&format!("pid {}", child.id())), "{named}");
}
