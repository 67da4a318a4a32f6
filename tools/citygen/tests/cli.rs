//! The `citygen` binary: writes OBJ or GLB atomically, reports one line, rejects unknown
//! extensions.

use std::process::Command;

fn citygen(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_citygen"))
        .args(args)
        .output()
        .expect("run citygen")
}

#[test]
fn writes_obj_and_glb_and_reports() {
    let dir = std::env::temp_dir().join(format!("citygen-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for ext in ["obj", "glb"] {
        let out = dir.join(format!("demo.{ext}"));
        let run = citygen(&[
            "--size",
            "demo",
            "--seed",
            "4",
            "--offset",
            "-1000,2000.5,-3",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{run:?}");
        let line = String::from_utf8(run.stdout).unwrap();
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(
            line.contains("triangles") && line.contains("vertices"),
            "{line}"
        );
        assert!(line.contains("extent 100.00 x 100.00 x "), "{line}");
        assert!(line.contains(out.to_str().unwrap()), "{line}");
        assert!(std::fs::metadata(&out).unwrap().len() > 100_000);
    }
    let obj = std::fs::read_to_string(dir.join("demo.obj")).unwrap();
    let first_v = obj.lines().find(|l| l.starts_with("v ")).unwrap();
    let x: f64 = first_v.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(x >= -1000.0);
    // Nothing but the two outputs: no temporary file left behind.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["demo.glb", "demo.obj"]);

    let bad = citygen(&[
        "--size",
        "demo",
        "--out",
        dir.join("x.stl").to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains(".obj or .glb"));
    assert!(!dir.join("x.stl").exists());
    let bad = citygen(&["--size", "huge", "--out", "x.obj"]);
    assert!(!bad.status.success());

    let out = dir.join("terrain.obj");
    let run = citygen(&[
        "--terrain",
        "--size",
        "demo",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{run:?}");
    let line = String::from_utf8(run.stdout).unwrap();
    assert!(
        line.starts_with("31250 triangles, 15876 vertices, extent 250.00 x 250.00 x "),
        "{line}"
    );
    std::fs::remove_file(&out).unwrap();
    let bad = citygen(&["--terrain", "--size", "XL", "--out", "x.obj"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("4 km²"));
    assert!(!std::path::Path::new("x.obj").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
