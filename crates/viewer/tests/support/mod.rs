//! What the viewer's tests share: a small world baked once per test binary, and a bare HTTP
//! GET against the loopback server.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use tessera_test_support::mesh::MeshBuilder;

/// Quads of the test world (corners counter-clockwise seen from outside).
pub const WORLD_QUADS: usize = 1 + 5 + 5 + 6 * 5;

/// A 40 x 30 m floor with a 2 m high wall across most of it (x 18..22, y 0..22), so that a
/// path from the west side to the east side goes round the wall's northern end (the wall's
/// top is an unreachable island), six 1 m pillars and a 0.4 m step (x 26..32, y 14..18), in
/// a group `step` (the bake's area `step`). Z up, as OBJ text.
pub fn world_obj() -> String {
    let mut m = MeshBuilder::default();
    m.floor(0.0, 0.0, 40.0, 30.0, 0.0);
    m.block(18.0, 0.0, 22.0, 22.0, 2.0);
    for (x, y) in [
        (5.0, 12.0),
        (11.0, 12.0),
        (14.0, 18.0),
        (26.0, 24.0),
        (33.0, 24.0),
        (35.0, 10.0),
    ] {
        m.block(x, y, x + 1.0, y + 1.0, 2.0);
    }
    m.statement("g step");
    m.block(26.0, 14.0, 32.0, 18.0, 0.4);
    m.obj()
}

/// A bake of [`world_obj`]: the folder, the scene file and the navmesh file.
pub struct Baked {
    pub dir: PathBuf,
    pub scene: PathBuf,
    pub navmesh: PathBuf,
}

/// Bakes [`world_obj`] once per test binary (0.2 m cells, 64-cell tiles).
pub fn baked() -> &'static Baked {
    static BAKED: OnceLock<Baked> = OnceLock::new();
    BAKED.get_or_init(|| {
        // In the target folder, one per test binary: a second run resumes the same bake.
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_stem().unwrap().to_string_lossy().into_owned();
        let root = target_dir().join("viewer-tests").join(name);
        std::fs::create_dir_all(&root).unwrap();
        let scene = root.join("world.obj");
        std::fs::write(&scene, world_obj()).unwrap();
        let mut config = tessera_config::BakeConfig::preset("recast-demo").unwrap();
        config.voxel.cell_size = 0.2;
        config.voxel.cell_height = 0.1;
        config.voxel.tile_size = 64.into();
        config.areas = vec![tessera_config::AreaSettings {
            patterns: vec!["step".into()],
            name: "step".into(),
            walkable: true,
            cost: 1.0,
        }];
        let out = root.join("bake");
        tessera_pipeline::bake(tessera_pipeline::BakeRequest {
            scene: tessera_pipeline::SceneInput::File {
                path: scene.clone(),
                up: Some(tessera_geom::UpAxis::Z),
            },
            config,
            out_dir: out.clone(),
            threads: 1,
            memory_budget: 256 << 20,
            progress: tessera_pipeline::Progress::quiet(),
            interrupt: None,
            sampler: None,
        })
        .expect("the test world bakes");
        Baked {
            navmesh: tessera_pipeline::BakeLayout::new(&out).navmesh(),
            dir: root,
            scene,
        }
    })
}

/// A response: status code, headers (lower-case names) and body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

/// `GET target` over HTTP/1.0 (the server closes the connection after the body), with an
/// optional `Host` header.
pub fn get_with_host(addr: SocketAddr, target: &str, host: Option<&str>) -> Response {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let host = host.map(|h| format!("Host: {h}\r\n")).unwrap_or_default();
    write!(s, "GET {target} HTTP/1.0\r\n{host}\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Response {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// `GET target` naming the server as `Host`.
pub fn get(addr: SocketAddr, target: &str) -> Response {
    get_with_host(addr, target, Some(&addr.to_string()))
}

/// The cargo target folder of this test binary (`target/debug/deps/..` -> `target`).
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        let dir = PathBuf::from(dir);
        return if dir.is_absolute() {
            dir
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(dir)
        };
    }
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}
