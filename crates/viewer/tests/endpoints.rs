//! The viewer's HTTP endpoints against a small bake, on a server started on port 0.

mod support;

use support::{baked, get, get_with_host};
use tessera_navmesh::NavMeshFile;
use tessera_query::{Query, Rng};
use tessera_viewer::{chunks, serve, serve_with, ViewOptions};

fn u32_at(b: &[u8], k: usize) -> u32 {
    u32::from_le_bytes(b[4 * k..4 * k + 4].try_into().unwrap())
}

fn f32_at(b: &[u8], offset: usize) -> f32 {
    f32::from_le_bytes(b[offset..offset + 4].try_into().unwrap())
}

#[test]
fn listens_on_loopback_only_and_refuses_other_hosts() {
    let server = serve(&baked().navmesh, None, 0).unwrap();
    let addr = server.addr();
    assert!(addr.ip().is_loopback(), "{addr}");
    assert_eq!(addr.ip().to_string(), "127.0.0.1");
    assert_ne!(addr.port(), 0);
    assert_eq!(server.url(), format!("http://127.0.0.1:{}/", addr.port()));

    let port = addr.port();
    assert_eq!(get(addr, "/api/meta").status, 200);
    let local = format!("localhost:{port}");
    assert_eq!(get_with_host(addr, "/api/meta", Some(&local)).status, 200);
    // A page of another site that resolves its name to 127.0.0.1 (DNS rebinding).
    let other = format!("example.com:{port}");
    assert_eq!(get_with_host(addr, "/api/meta", Some(&other)).status, 403);
    // Dropping the server frees the port (the listener closes as its accept thread ends,
    // which may take a moment after the drop returns).
    drop(server);
    let freed = (0..100).any(|_| {
        let refused = std::net::TcpStream::connect(addr).is_err();
        if !refused {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        refused
    });
    assert!(
        freed,
        "port {port} still accepts connections 2 s after the drop"
    );
}

#[test]
fn serves_the_page_and_the_embedded_three_js() {
    let server = serve(&baked().navmesh, None, 0).unwrap();
    let page = get(server.addr(), "/");
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    let html = String::from_utf8(page.body).unwrap();
    assert!(
        html.contains("importmap") && html.contains("/viewer.js"),
        "{html}"
    );
    for (url, file) in [
        ("/three/three.module.min.js", "three.module.min.js"),
        ("/three/three.core.min.js", "three.core.min.js"),
        ("/three/OrbitControls.js", "OrbitControls.js"),
    ] {
        let r = get(server.addr(), url);
        assert_eq!(r.status, 200, "{url}");
        assert!(r
            .header("content-type")
            .unwrap()
            .starts_with("text/javascript"));
        let want = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("assets/three")
                .join(file),
        )
        .unwrap();
        assert!(r.body == want, "{url} differs from the vendored file");
    }
    assert_eq!(get(server.addr(), "/nothing").status, 404);
}

#[test]
fn meta_describes_the_mesh_and_its_chunks() {
    let b = baked();
    let server = serve(&b.navmesh, None, 0).unwrap();
    let meta = get(server.addr(), "/api/meta").json();
    let file = NavMeshFile::open(&b.navmesh).unwrap();
    let mesh = file.mesh();
    assert_eq!(meta["polygons"], mesh.polys.len());
    assert!(mesh.polys.len() > 4, "{meta}");
    assert_eq!(meta["up"], "z");
    let chunks = meta["chunks"].as_array().unwrap();
    let total: u64 = chunks.iter().map(|c| c[2].as_u64().unwrap()).sum();
    assert_eq!(total as usize, mesh.polys.len());
    let cells = file.tile_cells();
    if cells > 0 {
        let edge = meta["tile_edge"].as_f64().unwrap();
        assert!((edge - cells as f64 * mesh.frame.cell_size.to_native() as f64).abs() < 1e-6);
    } else {
        assert!(meta["tile_edge"].is_null());
    }
    assert!(meta["scene"].is_null());
}

#[test]
fn path_answers_equal_the_query_library() {
    let b = baked();
    let server = serve(&b.navmesh, None, 0).unwrap();
    let file = NavMeshFile::open(&b.navmesh).unwrap();
    let query = Query::new(file.mesh());
    let ask = |from: [f64; 3], to: [f64; 3]| {
        let target = format!(
            "/api/path?from={},{},{}&to={},{},{}",
            from[0], from[1], from[2], to[0], to[1], to[2]
        );
        let r = get(server.addr(), &target);
        assert_eq!(r.status, 200, "{target}");
        assert_eq!(r.header("content-type"), Some("application/json"));
        // Byte for byte what `tessera path --json` prints (serde_json's parser may be a unit
        // in the last place off, so the text is compared, not parsed numbers).
        let want = serde_json::to_string(&query.path(from, to)).unwrap();
        assert_eq!(String::from_utf8(r.body.clone()).unwrap(), want, "{target}");
        r.json()
    };

    // Round the wall: from the west side to the east side.
    let (from, to) = ([8.0, 4.0, 0.0], [32.0, 4.0, 0.0]);
    let v = ask(from, to);
    assert_eq!(v["found"], true, "{v}");
    let length = v["length"].as_f64().unwrap();
    assert!(length > 40.0 && length < 50.0, "{v}");

    // Random pairs on the mesh, and a point off it.
    let mut rng = Rng::new(7);
    for _ in 0..20 {
        let (_, a) = query.random_point(&mut rng).unwrap();
        let (_, c) = query.random_point(&mut rng).unwrap();
        let (from, to) = (query.to_scene(a), query.to_scene(c));
        ask(from, to);
    }
    let off = ask([8.0, 4.0, 0.0], [500.0, 500.0, 0.0]);
    assert_eq!(
        off,
        serde_json::json!({"found": false, "length": 0.0, "waypoints": [], "links": [], "link_names": []})
    );

    // Percent-encoded commas are points too; malformed points are refused.
    let encoded = get(server.addr(), "/api/path?from=8%2C4%2C0&to=32%2C4%2C0").json();
    assert_eq!(encoded, v);
    for bad in [
        "/api/path?from=1,2&to=3,4,5",
        "/api/path?from=1,2,x&to=3,4,5",
        "/api/path?from=1,2,3",
        "/api/path?from=nan,2,3&to=3,4,5",
    ] {
        let r = get(server.addr(), bad);
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.json()["error"].is_string());
    }
}

/// Decodes an encoded chunk: (level, triangles as corner positions, portals, links).
struct Decoded {
    lod: u32,
    triangles: Vec<[[f32; 3]; 3]>,
    edges: usize,
    portals: usize,
    links: usize,
}

fn decode(b: &[u8]) -> Decoded {
    assert_eq!(&b[..4], &chunks::CHUNK_MAGIC);
    let (lod, nv, nt) = (u32_at(b, 2), u32_at(b, 3) as usize, u32_at(b, 4) as usize);
    let (ne, np, nl) = (
        u32_at(b, 5) as usize,
        u32_at(b, 6) as usize,
        u32_at(b, 7) as usize,
    );
    let pos = 36;
    let idx = pos + nv * 12;
    let segs = idx + nt * 12;
    let colours = segs + (ne + np + nl) * 24;
    assert_eq!(b.len(), colours + nv * 4);
    let vertex = |i: usize| [0, 1, 2].map(|k| f32_at(b, pos + 12 * i + 4 * k));
    let triangles = (0..nt)
        .map(|t| {
            [0, 1, 2].map(|k| {
                let i = u32_at(&b[idx..], 3 * t + k) as usize;
                assert!(i < nv);
                vertex(i)
            })
        })
        .collect();
    Decoded {
        lod,
        triangles,
        edges: ne,
        portals: np,
        links: nl,
    }
}

fn plan_area(t: &[[f32; 3]; 3]) -> f64 {
    let (a, b, c) = (
        t[0].map(f64::from),
        t[1].map(f64::from),
        t[2].map(f64::from),
    );
    0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
}

#[test]
fn chunks_hold_every_polygon_once_at_every_level() {
    let b = baked();
    let mut options = ViewOptions::new(&b.navmesh);
    options.chunk_edge = Some(8.0);
    let server = serve_with(&options).unwrap();
    let meta = get(server.addr(), "/api/meta").json();
    assert_eq!(meta["chunk_edge"], 8.0);
    let file = NavMeshFile::open(&b.navmesh).unwrap();
    let mesh = file.mesh();
    let want_area: f64 = mesh.polys.iter().map(|p| p.area.to_native() as f64).sum();
    let want_triangles: usize = mesh
        .polys
        .iter()
        .map(|p| p.count.to_native() as usize - 2)
        .sum();
    let want_portals = mesh.stats.portals.to_native() as usize;

    let list = meta["chunks"].as_array().unwrap();
    assert!(list.len() >= 10, "{meta}");
    let mut area = [0.0f64; 3];
    let mut triangles = [0usize; 3];
    let (mut portals, mut links, mut edges) = (0, 0, 0);
    for c in list {
        let (cx, cy) = (c[0].as_i64().unwrap(), c[1].as_i64().unwrap());
        for lod in 0..3u32 {
            let r = get(
                server.addr(),
                &format!("/api/chunk?cx={cx}&cy={cy}&lod={lod}"),
            );
            assert_eq!(r.status, 200);
            assert_eq!(r.header("content-type"), Some("application/octet-stream"));
            let d = decode(&r.body);
            assert_eq!(d.lod, lod);
            // Level 0: within its chunk's bounds from the meta.
            if lod == 0 {
                let (lo, hi) = (&c[3], &c[4]);
                for p in d.triangles.iter().flatten() {
                    for k in 0..3 {
                        let v = p[k] as f64;
                        assert!(v >= lo[k].as_f64().unwrap() - 1e-4);
                        assert!(v <= hi[k].as_f64().unwrap() + 1e-4);
                    }
                }
                portals += d.portals;
                edges += d.edges;
            } else {
                assert_eq!(d.portals + d.edges, 0);
            }
            links += d.links;
            area[lod as usize] += d.triangles.iter().map(plan_area).sum::<f64>();
            triangles[lod as usize] += d.triangles.len();
        }
    }
    assert_eq!(triangles[0], want_triangles);
    assert!(
        (area[0] - want_area).abs() < 1e-3 * want_area,
        "{area:?} {want_area}"
    );
    assert_eq!(portals, want_portals);
    assert!(edges >= portals);
    assert_eq!(links, 3 * mesh.links.len());
    // Coarser levels: no more triangles, and roughly the same surface.
    assert!(triangles[1] <= triangles[0] && triangles[2] <= triangles[1]);
    for lod in 1..3 {
        assert!((area[lod] - want_area).abs() < 0.25 * want_area, "{area:?}");
    }

    assert_eq!(get(server.addr(), "/api/chunk?cx=-50&cy=-50").status, 404);
    assert_eq!(get(server.addr(), "/api/chunk?cx=0&cy=0&lod=3").status, 400);
    assert_eq!(get(server.addr(), "/api/chunk?cx=zero&cy=0").status, 400);
}

#[test]
fn areas_are_listed_hidden_from_chunks_and_avoided_by_paths() {
    let b = baked();
    let server = serve(&b.navmesh, None, 0).unwrap();
    let meta = get(server.addr(), "/api/meta").json();
    assert_eq!(
        meta["areas"],
        serde_json::json!([
            {"name": "default", "cost": 1.0, "walkable": true},
            {"name": "step", "cost": 1.0, "walkable": true},
        ])
    );
    let file = NavMeshFile::open(&b.navmesh).unwrap();
    let mesh = file.mesh();
    let on_step = |p: &tessera_navmesh::ArchivedPoly| p.area_id.to_native() == 1;
    let step_triangles: usize = mesh
        .polys
        .iter()
        .filter(|p| on_step(p))
        .map(|p| p.count.to_native() as usize - 2)
        .sum();
    assert!(step_triangles > 0);
    // Hiding area 1 (bit 1) leaves out exactly the step's polygons.
    let triangles = |hide: u64| -> usize {
        meta["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let target = format!("/api/chunk?cx={}&cy={}&lod=0&hide={hide}", c[0], c[1]);
                let r = get(server.addr(), &target);
                assert_eq!(r.status, 200, "{target}");
                decode(&r.body).triangles.len()
            })
            .sum()
    };
    assert_eq!(triangles(0), triangles(2) + step_triangles);
    // A path across the step (which costs as the floor does) goes round it when the step is
    // avoided.
    let ask = |extra: &str| {
        let r = get(
            server.addr(),
            &format!("/api/path?from=24,16,0&to=34,16,0{extra}"),
        );
        (r.status, r.json())
    };
    let (status, over) = ask("");
    assert_eq!(status, 200);
    assert_eq!(over["found"], true, "{over}");
    let (status, round) = ask("&avoid=step");
    assert_eq!(status, 200);
    assert_eq!(round["found"], true, "{round}");
    let (a, c) = (
        over["length"].as_f64().unwrap(),
        round["length"].as_f64().unwrap(),
    );
    assert!(c > a + 1.0, "{a} {c}");
    // Along the step's rim at most: no segment's middle strictly over it.
    let over_step = |answer: &serde_json::Value| {
        let w = answer["waypoints"].as_array().unwrap();
        w.windows(2).any(|s| {
            let mid = |k: usize| (s[0][k].as_f64().unwrap() + s[1][k].as_f64().unwrap()) / 2.0;
            (26.01..31.99).contains(&mid(0)) && (14.01..17.99).contains(&mid(1))
        })
    };
    assert!(over_step(&over) && !over_step(&round), "{over} {round}");
    let (status, bad) = ask("&avoid=lava");
    assert_eq!(status, 400);
    assert!(bad["error"].as_str().unwrap().contains("lava"), "{bad}");
}

#[test]
fn the_scene_overlay_is_the_source_scene_in_the_internal_frame() {
    let b = baked();
    let server = serve(&b.navmesh, None, 0).unwrap();
    assert_eq!(get(server.addr(), "/api/scene").status, 404);
    drop(server);

    let server = serve(&b.navmesh, Some(&b.scene), 0).unwrap();
    let meta = get(server.addr(), "/api/meta").json();
    // Every quad, fan-triangulated.
    let want = 2 * support::WORLD_QUADS;
    assert_eq!(meta["scene"]["source_triangles"], want, "{meta}");
    assert_eq!(meta["scene"]["triangles"], want, "{meta}");
    let r = get(server.addr(), "/api/scene");
    assert_eq!(r.status, 200);
    assert_eq!(&r.body[..4], b"TSSC");
    let (nv, nt) = (u32_at(&r.body, 1) as usize, u32_at(&r.body, 2) as usize);
    assert_eq!(nt, want);
    assert_eq!(r.body.len(), 12 + nv * 12 + nt * 12);
    // The floor's corners: the scene's minimum is the frame's origin, so (0, 0, 0) and
    // (40, 30, 0) in the scene are themselves in the internal frame.
    let pts: Vec<[f32; 3]> = (0..nv)
        .map(|i| [0, 1, 2].map(|k| f32_at(&r.body, 12 + 12 * i + 4 * k)))
        .collect();
    assert!(
        pts.contains(&[0.0, 0.0, 0.0]) && pts.contains(&[40.0, 30.0, 0.0]),
        "{pts:?}"
    );
    drop(server);

    // A limit below the scene's size decimates it.
    let mut options = ViewOptions::new(&b.navmesh);
    options.scene = Some(b.scene.clone());
    options.scene_triangles = 12;
    let server = serve_with(&options).unwrap();
    let meta = get(server.addr(), "/api/meta").json();
    assert!(meta["scene"]["triangles"].as_u64().unwrap() <= 12, "{meta}");
    assert_eq!(meta["scene"]["source_triangles"], want);
}

#[test]
fn refuses_what_it_cannot_serve() {
    let b = baked();
    let missing = b.dir.join("missing.tsn");
    assert!(matches!(
        serve(&missing, None, 0),
        Err(tessera_viewer::ViewerError::NavMesh(_))
    ));
    let not_a_scene = b.dir.join("scene.txt");
    std::fs::write(&not_a_scene, "hello").unwrap();
    assert!(matches!(
        serve(&b.navmesh, Some(&not_a_scene), 0),
        Err(tessera_viewer::ViewerError::Scene(_))
    ));
    // The port is taken: a clear error, not a panic.
    let first = serve(&b.navmesh, None, 0).unwrap();
    let again = serve(&b.navmesh, None, first.addr().port());
    assert!(matches!(
        again,
        Err(tessera_viewer::ViewerError::Bind { .. })
    ));
}
