use super::*;
use tessera_artifacts::{InputPoly, MeshInput};
use tessera_navmesh::{Frame, NavMesh};

/// A small mesh at UTM-like offsets: a 10 x 10 m floor in two squares (region 0), a pentagon
/// east of it (region 1, sharing its west edge with the floor), a raised 4 x 4 m platform
/// (region 2, 2 m up) north of the floor with a link from the floor up to it, and an island
/// square (region 3). Cell 0.5 m, cell height 0.25 m.
fn sample_mesh(up: u8) -> NavMesh {
    let frame = Frame {
        origin: [500_000.0, 4_000_000.0, 100.0],
        up,
        cell_size: 0.5,
        cell_height: 0.25,
        agent_height: 2.0,
        agent_radius: 0.5,
        agent_climb: 0.5,
    };
    let mut input = MeshInput {
        regions: 4,
        climb: 2,
        ..MeshInput::default()
    };
    let mut poly = |corners: &[[i32; 3]], region: u32| {
        let first = input.verts.len() as u32;
        input.verts.extend_from_slice(corners);
        let verts: Vec<u32> = (first..first + corners.len() as u32).collect();
        let tris = (1..verts.len() - 1)
            .map(|k| [verts[0], verts[k], verts[k + 1]])
            .collect();
        input.polys.push(InputPoly {
            verts,
            region,
            tris,
            ..InputPoly::default()
        });
    };
    // Grid units: 2 per metre in plan, 4 per metre up.
    poly(&[[0, 0, 0], [10, 0, 0], [10, 20, 0], [0, 20, 0]], 0);
    poly(&[[10, 0, 0], [20, 0, 0], [20, 20, 0], [10, 20, 0]], 0);
    poly(
        &[
            [20, 0, 0],
            [30, 0, 0],
            [36, 10, 0],
            [30, 20, 0],
            [20, 20, 0],
        ],
        1,
    );
    poly(&[[0, 24, 8], [8, 24, 8], [8, 32, 8], [0, 32, 8]], 2);
    poly(&[[50, 50, 0], [54, 50, 0], [54, 54, 0], [50, 54, 0]], 3);
    input.links.push((0, 3, [0, 20, 0], [8, 20, 0]));
    input.links.push((3, 0, [0, 24, 8], [8, 24, 8]));
    tessera_navgraph::build(frame, &input).expect("a valid mesh")
}

fn with_mesh<T>(up: u8, f: impl FnOnce(&ArchivedNavMesh) -> T) -> T {
    let bytes = tessera_navmesh::aligned(&tessera_navmesh::encode(&sample_mesh(up)));
    let mesh = tessera_navmesh::access(&bytes, "test").expect("valid");
    f(mesh)
}

fn fan_triangles(mesh: &ArchivedNavMesh) -> usize {
    mesh.polys
        .iter()
        .map(|p| p.count.to_native() as usize - 2)
        .sum()
}

fn plan_area(tris: &[[[f64; 3]; 3]]) -> f64 {
    tris.iter()
        .map(|t| {
            let (a, b, c) = (t[0], t[1], t[2]);
            0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
        })
        .sum()
}

/// Triangles (Z-up world coordinates, node translation applied in f64) and line primitive
/// vertex counts of a glTF document.
fn gltf_contents(doc: &::gltf::Document, blob: &[u8]) -> (Vec<[[f64; 3]; 3]>, Vec<usize>) {
    let root = doc.nodes().next().expect("a root node");
    let t = root.transform().decomposed().0;
    let mut tris = Vec::new();
    let mut lines = Vec::new();
    for node in root.children() {
        let m = node.mesh().expect("children carry meshes");
        for prim in m.primitives() {
            let reader = prim.reader(|_| Some(blob));
            let pos: Vec<[f32; 3]> = reader.read_positions().expect("positions").collect();
            match prim.mode() {
                ::gltf::mesh::Mode::Triangles => {
                    assert!(reader.read_colors(0).is_some(), "COLOR_0");
                    let idx: Vec<u32> =
                        reader.read_indices().expect("indexed").into_u32().collect();
                    for t3 in idx.chunks_exact(3) {
                        tris.push([t3[0], t3[1], t3[2]].map(|i| {
                            let p = pos[i as usize];
                            // glTF Y-up (x, y, z) is Z-up (x, -z, y).
                            let q = [
                                p[0] as f64 + t[0] as f64,
                                p[1] as f64 + t[1] as f64,
                                p[2] as f64 + t[2] as f64,
                            ];
                            [q[0], -q[2], q[1]]
                        }));
                    }
                }
                ::gltf::mesh::Mode::Lines => lines.push(pos.len()),
                other => panic!("unexpected mode {other:?}"),
            }
        }
    }
    (tris, lines)
}

#[test]
fn glb_holds_every_fan_triangle_with_the_plan_area() {
    with_mesh(b'z', |mesh| {
        let (bytes, counts) = gltf::to_glb(mesh, ExportOptions::default()).unwrap();
        assert_eq!(&bytes[..4], b"glTF");
        assert_eq!(
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
            bytes.len()
        );
        let g = ::gltf::Gltf::from_slice(&bytes).expect("a valid glb");
        let blob = g.blob.clone().expect("a BIN chunk");
        let (tris, lines) = gltf_contents(&g.document, &blob);
        assert_eq!(tris.len(), fan_triangles(mesh));
        assert_eq!(counts.triangles, tris.len());
        let area: f64 = mesh.polys.iter().map(|p| p.area.to_native() as f64).sum();
        let got = plan_area(&tris);
        assert!((got - area).abs() <= 1e-3 * area, "{got} vs {area}");
        // Portals once each, links as stored: two vertices a segment.
        assert_eq!(counts.portals, mesh.stats.portals.to_native() as usize);
        assert_eq!(lines, vec![2 * counts.portals, 2 * mesh.links.len()]);
        // The origin survives in f64: the first corner is at the scene's (500000, 4000000, 100).
        let min = tris
            .iter()
            .flatten()
            .fold([f64::INFINITY; 3], |m, p| [0, 1, 2].map(|k| m[k].min(p[k])));
        assert_eq!(min, [500_000.0, 4_000_000.0, 100.0]);
        // Every region's vertices carry its colour; a vertex shared by two regions is copied.
        assert_eq!(counts.vertices, 4 + 2 + 5 + 4 + 4);
    });
}

#[test]
fn gltf_json_embeds_the_same_buffer() {
    with_mesh(b'z', |mesh| {
        let (text, _) = gltf::to_gltf(mesh, ExportOptions::default());
        let (glb, _) = gltf::to_glb(mesh, ExportOptions::default()).unwrap();
        let g = ::gltf::Gltf::from_slice(text.as_bytes()).expect("valid glTF JSON");
        let uri = match g.document.buffers().next().unwrap().source() {
            ::gltf::buffer::Source::Uri(u) => u.to_string(),
            _ => panic!("an embedded buffer"),
        };
        let data = uri
            .strip_prefix("data:application/octet-stream;base64,")
            .unwrap();
        let blob =
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data).unwrap();
        assert_eq!(
            Some(blob.clone()),
            ::gltf::Gltf::from_slice(&glb).unwrap().blob
        );
        let (tris, _) = gltf_contents(&g.document, &blob);
        assert_eq!(tris.len(), fan_triangles(mesh));
    });
}

#[test]
fn a_y_up_scene_keeps_its_own_coordinates_in_gltf() {
    with_mesh(b'y', |mesh| {
        let frame = mesh.frame.native();
        let (bytes, _) = gltf::to_glb(mesh, ExportOptions { detail: true }).unwrap();
        let g = ::gltf::Gltf::from_slice(&bytes).unwrap();
        let root = g.document.nodes().next().unwrap();
        let t = root.transform().decomposed().0;
        let poly = root.children().next().unwrap().mesh().unwrap();
        let prim = poly.primitives().next().unwrap();
        let blob = g.blob.clone().unwrap();
        let pos: Vec<[f32; 3]> = prim
            .reader(|_| Some(&blob))
            .read_positions()
            .unwrap()
            .collect();
        // Each glTF point plus the translation is a scene point; its internal position is a
        // mesh vertex.
        for p in pos {
            let scene = [0, 1, 2].map(|k| p[k] as f64 + t[k] as f64);
            let internal = frame.to_internal(scene);
            assert!(
                mesh.verts.iter().any(|v| {
                    let v = v.map(|c| c.to_native());
                    (0..3).all(|k| (v[k] - internal[k]).abs() < 1e-3)
                }),
                "{scene:?}"
            );
        }
    });
}

#[test]
fn obj_has_the_triangles_lines_and_scene_coordinates() {
    with_mesh(b'z', |mesh| {
        let mut out = Vec::new();
        let counts = obj::write_obj(mesh, ExportOptions::default(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let verts: Vec<Vec<f64>> = text
            .lines()
            .filter_map(|l| l.strip_prefix("v "))
            .map(|l| l.split(' ').map(|t| t.parse().unwrap()).collect())
            .collect();
        let faces: Vec<Vec<usize>> = text
            .lines()
            .filter_map(|l| l.strip_prefix("f "))
            .map(|l| l.split(' ').map(|t| t.parse().unwrap()).collect())
            .collect();
        let lines = text.lines().filter(|l| l.starts_with("l ")).count();
        assert_eq!(faces.len(), fan_triangles(mesh));
        assert_eq!(lines, counts.portals + counts.links);
        assert!(verts
            .iter()
            .all(|v| v.len() == 6 && v[3..].iter().all(|c| (0.0..=1.0).contains(c))));
        let tris: Vec<[[f64; 3]; 3]> = faces
            .iter()
            .map(|f| {
                [0, 1, 2].map(|k| {
                    let v = &verts[f[k] - 1];
                    [v[0], v[1], v[2]]
                })
            })
            .collect();
        let area: f64 = mesh.polys.iter().map(|p| p.area.to_native() as f64).sum();
        assert!((plan_area(&tris) - area).abs() <= 1e-6 * area);
        // Exact scene coordinates: the platform's corner is 2 m up at (500000, 4000012).
        assert!(text.contains("\nv 500000 4000012 102 "), "{text}");
    });
}

#[test]
fn preview_fills_polygons_and_leaves_the_rest_grey() {
    with_mesh(b'z', |mesh| {
        let frame = mesh.frame.native();
        let options = RenderOptions {
            max_size: 300,
            path: vec![
                [500_001.0, 4_000_001.0, 100.0],
                [500_016.0, 4_000_005.0, 100.0],
            ],
            from: Some([500_001.0, 4_000_001.0, 100.0]),
            to: Some([500_016.0, 4_000_005.0, 100.0]),
            tile: None,
            pixels_per_cell: crate::render::PIXELS_PER_CELL,
        };
        let (img, view) = render(mesh, &options);
        assert!(img.width <= 300 && img.height <= 300);
        assert!(
            img.width.max(img.height) >= 256,
            "small worlds are not tiny images"
        );
        let at = |p: [f64; 3]| {
            let [x, y] = view.scene_pixel(&frame, p).expect("on the image");
            img.get(x, y)
        };
        // Inside the floor (region 0), away from the path and the edges.
        assert_ne!(at([500_004.0, 4_000_008.0, 100.0]), render::BACKGROUND);
        // The island, and the platform.
        assert_ne!(at([500_026.0, 4_000_026.0, 100.0]), render::BACKGROUND);
        assert_ne!(at([500_002.0, 4_000_014.0, 102.0]), render::BACKGROUND);
        // Between the floor and the island: nothing walkable.
        assert_eq!(at([500_020.0, 4_000_020.0, 100.0]), render::BACKGROUND);
        // The pentagon's region colour differs from the floor's.
        assert_ne!(
            at([500_004.0, 4_000_008.0, 100.0]),
            at([500_014.0, 4_000_008.0, 100.0])
        );
        // PNG round trip.
        let png = img.to_png(&[]).unwrap();
        assert_eq!(RgbImage::from_png(&png).unwrap(), img);
    });
}

#[test]
fn the_preview_is_the_same_in_any_bands_on_any_number_of_threads() {
    // Bands of rows are drawn in parallel, each passing over the polygons wholly outside it,
    // with scratch kept from one band to the next: any band height on any number of threads
    // must give the pixels of the whole picture drawn as one band on one thread.
    with_mesh(b'z', |mesh| {
        let options = RenderOptions {
            max_size: 300,
            tile: Some(4.0),
            ..RenderOptions::default()
        };
        let on = |threads: usize, band_rows: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| render::render_in_bands(mesh, &options, band_rows).0)
        };
        let one = on(1, usize::MAX / 4);
        assert!(one
            .pixels
            .chunks_exact(3)
            .any(|p| p != render::BACKGROUND.0));
        for (threads, band_rows) in [(1, 1), (2, 7), (3, 32), (7, 5), (64, 2), (2, 300)] {
            assert!(
                on(threads, band_rows) == one,
                "{threads} threads, bands of {band_rows} rows"
            );
        }
    });
}

#[test]
fn a_large_world_is_scaled_down_to_the_limit() {
    // The same mesh at 100 m cells is a 2.7 km world.
    let mut m = sample_mesh(b'z');
    for v in &mut m.verts {
        for c in v.iter_mut().take(2) {
            *c *= 200.0;
        }
    }
    for k in 0..2 {
        m.bounds_min[k] *= 200.0;
        m.bounds_max[k] *= 200.0;
    }
    let bytes = tessera_navmesh::aligned(&tessera_navmesh::encode(&m));
    let mesh = tessera_navmesh::access(&bytes, "test").unwrap();
    let (img, view) = render(
        mesh,
        &RenderOptions {
            max_size: 128,
            ..RenderOptions::default()
        },
    );
    assert_eq!(img.width.max(img.height), 128);
    assert!(view.units_per_pixel() > 20.0);
}

#[test]
fn the_tile_grid_is_drawn_faintly_at_tile_borders_only() {
    with_mesh(b'z', |mesh| {
        let frame = mesh.frame.native();
        // 4 m tiles from the internal origin (the scene's 500000, 4000000).
        let plain = RenderOptions {
            max_size: 300,
            ..RenderOptions::default()
        };
        let gridded = RenderOptions {
            tile: Some(4.0),
            ..plain.clone()
        };
        let (a, view) = render(mesh, &plain);
        let (b, _) = render(mesh, &gridded);
        let px = |p: [f64; 3]| view.scene_pixel(&frame, p).expect("on the image");
        // On the tile border x = 8 m, inside the floor: lighter than without the grid.
        let [x, y] = px([500_008.0, 4_000_006.0, 100.0]);
        let (before, after) = (a.get(x, y), b.get(x, y));
        assert!(
            (0..3).all(|k| after.0[k] >= before.0[k]) && after != before,
            "{before:?} -> {after:?}"
        );
        // Mid-tile (x = 6 m, y = 6 m): untouched; the background between tiles too.
        let [x, y] = px([500_006.0, 4_000_006.0, 100.0]);
        assert_eq!(a.get(x, y), b.get(x, y));
        let [x, y] = px([500_022.0, 4_000_022.0, 100.0]);
        assert_eq!(b.get(x, y), render::BACKGROUND);
        // Tiles closer than 8 pixels are not drawn at all.
        let (c, _) = render(
            mesh,
            &RenderOptions {
                tile: Some(0.01),
                ..plain
            },
        );
        assert_eq!(c, a);
    });
}

#[test]
fn palette_is_deterministic_distinct_and_never_grey() {
    let colours: Vec<Rgb> = (0..64).map(region_colour).collect();
    assert_eq!(colours, (0..64).map(region_colour).collect::<Vec<_>>());
    for (i, c) in colours.iter().enumerate() {
        let (lo, hi) = (*c.0.iter().min().unwrap(), *c.0.iter().max().unwrap());
        assert!(hi - lo >= 40, "region {i}: {c:?} is too grey");
        if i > 0 {
            assert_ne!(*c, colours[i - 1]);
        }
    }
}

#[test]
fn report_is_self_contained_with_table_and_charts() {
    let summary = serde_json::json!({
        "scene": "a <small> scene",
        "polygons": 1234,
        "regions": 7,
        "peak_rss_bytes": 50u64 << 20,
        "memory_budget_bytes": 64u64 << 20,
        "stages_reused": [],
        "seconds": {"ingest": 0.5, "bin": 0.25, "voxelize": 2.0, "polygons": 1.0, "total": 3.8},
    });
    let memory: Vec<report::MemorySample> = (0..50)
        .map(|i| report::MemorySample {
            t: i as f64 * 0.08,
            rss: (10 + i) << 20,
            anon: (5 + i / 2) << 20,
        })
        .collect();
    let html = report::report_html(&report::ReportInput {
        summary: &summary,
        memory: &memory,
        preview: Some("preview.png"),
        stages: &["ingest", "bin", "voxelize", "merge", "polygons"],
    });
    assert!(html.contains("1234 polygons"));
    assert!(html.contains("<td>polygons</td><td class=\"n\">1234</td>"));
    assert!(html.contains("a &lt;small&gt; scene"));
    assert!(html.contains("src=\"preview.png\""));
    assert_eq!(html.matches("<svg").count(), 2);
    assert!(html.contains("budget 64 MiB"));
    assert!(!html.contains("http:") && !html.contains("https:") && !html.contains("<script"));
    // Stages in pipeline order.
    let pos = |s: &str| html.find(&format!(">{s}</text>")).unwrap();
    assert!(pos("ingest") < pos("bin") && pos("bin") < pos("voxelize"));
}

#[test]
fn formats_follow_the_extension() {
    assert_eq!(Format::of_path(Path::new("a.GLB")), Some(Format::Gltf));
    assert_eq!(Format::of_path(Path::new("a.gltf")), Some(Format::Gltf));
    assert_eq!(Format::of_path(Path::new("a.obj")), Some(Format::Obj));
    assert_eq!(Format::of_path(Path::new("a.fbx")), None);
}

#[test]
fn export_file_writes_atomically() {
    let dir = tempfile::tempdir().unwrap();
    with_mesh(b'z', |mesh| {
        for name in ["m.glb", "m.gltf", "m.obj"] {
            let path = dir.path().join(name);
            let format = Format::of_path(&path).unwrap();
            let counts = export_file(mesh, &path, format, ExportOptions::default()).unwrap();
            assert_eq!(counts.triangles, fan_triangles(mesh));
            assert!(std::fs::metadata(&path).unwrap().len() > 0);
        }
        let missing = dir.path().join("no/such/folder/m.glb");
        // The error names the file asked for, not the temporary one.
        assert!(matches!(
            export_file(mesh, &missing, Format::Gltf, ExportOptions::default()),
            Err(ExportError::Io { path, .. }) if path == missing
        ));
    });
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}
