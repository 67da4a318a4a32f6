//! `examples/c/path.c` built with the system's C compiler against this crate's static library
//! and run: its bake of the demo world and its paths are what `tessera path --json` answers.

use std::path::{Path, PathBuf};
use std::process::Command;

use tessera_query::{QueryFile, Rng};

/// The static library cargo built beside this test: `cargo test` leaves it in `target/debug/deps`
/// (only `cargo build` copies it up to `target/debug`).
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|dir| dir.join("libtessera.a"))
        .find(|lib| lib.is_file())
        .unwrap_or_else(|| panic!("no libtessera.a in {} or above", deps.display()))
}

fn run(command: &mut Command) -> String {
    let o = command.output().expect("run");
    assert!(
        o.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The example's JSON against the answer serialized as `tessera path --json` does, number by
/// number (the example prints every digit, serde the shortest form of the same double).
fn assert_same_answer(printed: &str, answer: &tessera_query::PathAnswer) {
    fn numbers(v: &serde_json::Value, out: &mut Vec<f64>) {
        match v {
            serde_json::Value::Number(n) => out.push(n.as_f64().unwrap()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| numbers(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| numbers(x, out)),
            serde_json::Value::Bool(b) => out.push(f64::from(u8::from(*b))),
            _ => {}
        }
    }
    let got: serde_json::Value = serde_json::from_str(printed.trim()).expect("JSON");
    let want = serde_json::to_value(answer).unwrap();
    let (mut g, mut w) = (Vec::new(), Vec::new());
    numbers(&got, &mut g);
    numbers(&want, &mut w);
    assert_eq!(g, w, "{printed} vs {want}");
    assert!(answer.found);
}

#[test]
#[ignore = "slow: builds examples/c/path.c with the system cc against libtessera.a and runs it"]
fn the_c_example_bakes_and_answers_as_tessera_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lib = static_library();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("path");
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(root.join("examples/c/path.c"))
        .arg("-I")
        .arg(root.join("crates/capi/include"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"]));

    // Its own bake, then a path between the first two random points of seed 1.
    let out = dir.path().join("demo");
    let printed = run(Command::new(&exe).arg("--bake").arg(&out));
    let navmesh = out.join("navmesh.tsn");
    let file = QueryFile::open(&navmesh).unwrap();
    let q = file.query();
    let mut rng = Rng::new(1);
    let (a, b) = (
        q.random_scene(&mut rng).unwrap(),
        q.random_scene(&mut rng).unwrap(),
    );
    assert_same_answer(&printed, &q.path(a.point, b.point));

    // Two given points: README's example pair.
    let printed = run(Command::new(&exe)
        .arg(&navmesh)
        .args(["27.7", "85.5", "4.2", "64.8", "8.9", "2.3"]));
    assert_same_answer(&printed, &q.path([27.7, 85.5, 4.2], [64.8, 8.9, 2.3]));

    // A file that is no navmesh: the example exits with the status, 3.
    let bad = dir.path().join("bad.tsn");
    std::fs::write(&bad, "nothing").unwrap();
    let status = Command::new(&exe).arg(&bad).output().unwrap().status;
    assert_eq!(status.code(), Some(3));
}
