use rkyv::rancor;

use super::*;

fn frame() -> Frame {
    Frame {
        origin: [1000.0, 2000.0, 10.0],
        up: b'z',
        cell_size: 0.5,
        cell_height: 0.25,
        agent_height: 2.0,
        agent_radius: 0.5,
        agent_climb: 0.5,
    }
}

/// Two 2 m squares side by side (x 0..2 and 2..4), joined by a portal and by a link each way;
/// the first one's triangles fan around a detail point.
fn mesh() -> NavMesh {
    let poly = |first, tri_first, tri_count, link_first| Poly {
        first,
        count: 4,
        tri_first,
        tri_count,
        link_first,
        link_count: 1,
        region: first / 4,
        area: 4.0,
        component: 0,
        area_id: first / 4,
    };
    let link = |from, to| Link::stair(from, to, [2.0, 0.0, 0.0], [2.0, 2.0, 0.0]);
    NavMesh {
        frame: frame(),
        bounds_min: [0.0; 3],
        bounds_max: [4.0, 2.0, 0.0],
        verts: vec![
            [0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [2.0, 2.0, 0.0],
            [0.0, 2.0, 0.0],
            [4.0, 0.0, 0.0],
            [4.0, 2.0, 0.0],
        ],
        polys: vec![poly(0, 0, 4, 0), poly(4, 4, 2, 1)],
        poly_verts: vec![0, 1, 2, 3, 1, 4, 5, 2],
        poly_neis: vec![NONE, 1, NONE, NONE, NONE, NONE, NONE, 0],
        detail_tris: vec![
            [0, 1, DETAIL],
            [1, 2, DETAIL],
            [2, 3, DETAIL],
            [3, 0, DETAIL],
            [1, 4, 5],
            [1, 5, 2],
        ],
        detail_verts: vec![[1.0, 1.0, 0.5]],
        links: vec![link(0, 1), link(1, 0)],
        off_mesh: Vec::new(),
        areas: vec![
            Area::default_area(),
            Area {
                name: "road".to_string(),
                cost: 0.8,
                walkable: true,
            },
        ],
        components: vec![Component {
            polygons: 2,
            area: 8.0,
        }],
        hierarchy: Hierarchy::default(),
        grid: Grid {
            min: [0.0, 0.0],
            cell: 2.0,
            width: 2,
            height: 1,
            start: vec![0, 1, 2],
            items: vec![0, 1],
        },
        stats: Stats {
            regions: 2,
            portals: 1,
            links: 2,
            walkable_area: 8.0,
            ..Stats::default()
        },
    }
}

fn write(dir: &tempfile::TempDir, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.path().join("navmesh.tsn");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn archive_offsets_and_lengths_are_64_bit() {
    // A 32-bit archive cannot place an array more than 2 GiB away or count more than 4 G
    // entries: a bake of a huge world failed writing its navmesh after an hour (issue 21,
    // class 11). Every array of the archive is a 64-bit offset and a 64-bit length.
    assert_eq!(
        std::mem::size_of::<rkyv::vec::ArchivedVec<u32>>(),
        16,
        "rkyv's pointer_width_64 feature is off"
    );
    assert_eq!(std::mem::size_of::<rkyv::primitive::ArchivedUsize>(), 8);
}

#[test]
fn file_round_trips_through_a_memory_map() {
    let m = mesh();
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, &encode_keyed(&m, 42));
    let file = NavMeshFile::open(&path).unwrap();
    assert_eq!(
        (file.key(), file.tile_cells(), file.tile_edge()),
        (42, 0, None)
    );
    assert_eq!(check_file(&path).unwrap(), 42);
    assert_eq!(read_key(&path).unwrap(), 42);
    assert_eq!(file.len(), encode(&m).len());
    let back: NavMesh = rkyv::deserialize::<NavMesh, rancor::Error>(file.mesh()).unwrap();
    assert_eq!(back, m);
}

#[test]
fn the_tile_edge_is_the_headers_tile_cells_in_world_units() {
    let (header, payload) = encode_parts(&mesh(), 7);
    let digest = xxhash_rust::xxh3::xxh3_64(&payload);
    let header = Header::new(header.payload_len, digest, header.key, 32);
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, &[&header.to_bytes()[..], &payload].concat());
    let file = NavMeshFile::open(&path).unwrap();
    assert_eq!(file.header(), &header);
    assert_eq!((file.key(), file.tile_cells()), (7, 32));
    assert_eq!(file.tile_edge(), Some(16.0));
}

#[test]
fn accessors_read_polygons_triangles_links_and_the_grid() {
    let bytes = aligned(&encode(&mesh()));
    let m = access(&bytes, "t").unwrap();
    assert_eq!(m.poly_vert_ids(1).collect::<Vec<_>>(), [1, 4, 5, 2]);
    assert_eq!(
        m.poly_neighbours(0).collect::<Vec<_>>(),
        [NONE, 1, NONE, NONE]
    );
    let tris: Vec<_> = m.poly_triangles(0).collect();
    assert_eq!(tris.len(), 4);
    assert!(tris.iter().all(|t| t[2] == [1.0, 1.0, 0.5]));
    assert_eq!(m.poly_links(1)[0].to.to_native(), 0);
    assert_eq!(m.grid_cells([3.0, 1.0], [9.0, 9.0]), (1, 0, 1, 0));
    assert_eq!(m.grid_items(1, 0).collect::<Vec<_>>(), [1]);
}

#[test]
fn every_flipped_byte_is_refused() {
    let bytes = encode(&mesh());
    for i in (0..bytes.len()).step_by(7) {
        let mut b = aligned(&bytes);
        b[i] ^= 0x10;
        assert!(access(&b, "t").is_err(), "flip at byte {i} accepted");
    }
    assert!(access(&aligned(&bytes[..bytes.len() - 1]), "t").is_err());
    assert!(access(&aligned(&bytes[..HEADER_LEN - 1]), "t").is_err());
    assert!(access(&aligned(&bytes), "t").is_ok());
}

#[test]
fn a_broken_archive_with_a_valid_checksum_says_what_is_broken() {
    // The mesh's archive cut short, under a header whose length and checksum match it.
    let (_, payload) = encode_parts(&mesh(), 0);
    let cut = &payload[..payload.len() - 64];
    let header = Header::new(cut.len() as u64, xxhash_rust::xxh3::xxh3_64(cut), 0, 0);
    let bytes = [header.to_bytes().as_slice(), cut].concat();
    let Err(err) = access(&aligned(&bytes), "cut.tsn") else {
        panic!("accepted")
    };
    let message = err.to_string();
    assert!(matches!(err, NavMeshError::Archive { .. }), "{message}");
    assert!(!message.contains("enable debug assertions"), "{message}");
    assert!(message.starts_with("cut.tsn"), "{message}");
}

#[test]
fn a_polygon_that_is_not_convex_is_refused_and_rounding_is_not() {
    // Issue 21, class 9: queries assume convex polygons. Polygon 0's first corner pulled
    // inside it turns clockwise there (corner 0).
    let mut m = mesh();
    m.verts[0] = [1.5, 1.0, 0.0];
    let Err(err) = access(&aligned(&encode(&m)), "t") else {
        panic!("a concave polygon was accepted")
    };
    assert!(
        matches!(
            err,
            NavMeshError::Invalid {
                source: InvalidMesh::PolygonNotConvex { poly: 0, corner: 0 },
                ..
            }
        ),
        "{err}"
    );
    // Listed clockwise, a convex polygon is refused too.
    let mut m = mesh();
    m.poly_verts[..4].reverse();
    assert!(access(&aligned(&encode(&m)), "t").is_err());
    // A straight corner tilted by f32 rounding far from the origin is still straight: a
    // corner added on the second square's right edge, 2 km out, moved inwards by about four
    // ulps of its coordinate.
    let mut m = mesh();
    let far = 2000.0f32;
    for v in &mut m.verts {
        v[0] += far;
    }
    m.verts
        .push([far + 4.0 - 2.0 * f32::EPSILON * far, 1.0, 0.0]);
    m.poly_verts.insert(6, 6);
    m.poly_neis.insert(6, NONE);
    m.polys[1].count = 5;
    access(&aligned(&encode(&m)), "t").expect("a rounded straight corner is not reflex");
}

#[test]
fn a_checksummed_but_hostile_file_is_refused() {
    let mut m = mesh();
    m.poly_verts[2] = 999;
    let Err(err) = access(&aligned(&encode(&m)), "hostile.tsn") else {
        panic!("accepted")
    };
    assert!(
        matches!(
            err,
            NavMeshError::Invalid {
                source: InvalidMesh::PolygonVertexIndex { poly: 0 },
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "hostile.tsn: invalid navmesh: polygon 0: vertex index out of range"
    );
    let mut m = mesh();
    m.grid.start[1] = 1_000_000;
    assert!(matches!(
        access(&aligned(&encode(&m)), "t"),
        Err(NavMeshError::Invalid {
            source: InvalidMesh::GridStart,
            ..
        })
    ));
    let mut m = mesh();
    m.detail_tris[0][2] = DETAIL | 5;
    assert!(matches!(
        access(&aligned(&encode(&m)), "t"),
        Err(NavMeshError::Invalid {
            source: InvalidMesh::DetailTriangleIndex { triangle: 0 },
            ..
        })
    ));
    // Every polygon listing the same (here: every) vertex: all indices in range, but the
    // work of a query or a render would grow with polygons times vertices.
    let refused = |m: &NavMesh| match access(&aligned(&encode(m)), "t") {
        Err(NavMeshError::Invalid { source, .. }) => source,
        other => panic!("accepted: {:?}", other.map(|_| ())),
    };
    let mut m = mesh();
    m.polys[1].first = 0;
    assert_eq!(
        refused(&m),
        InvalidMesh::PolygonLayout {
            poly: 1,
            what: "vertices"
        }
    );
    let mut m = mesh();
    m.polys[1].tri_first = 0;
    assert_eq!(
        refused(&m),
        InvalidMesh::PolygonLayout {
            poly: 1,
            what: "triangles"
        }
    );
    // Entries no polygon uses.
    let mut m = mesh();
    m.poly_verts.extend([0, 1, 2]);
    m.poly_neis.extend([NONE; 3]);
    assert_eq!(
        refused(&m),
        InvalidMesh::TableLength {
            what: "poly_verts",
            used: 8,
            len: 11
        }
    );
}

#[test]
fn another_version_or_kind_of_file_is_named_as_such() {
    let bytes = encode(&mesh());
    let mut other = Header::from_bytes(&bytes).unwrap();
    other.version = VERSION + 1;
    let b = aligned(&[&other.to_bytes()[..], &bytes[HEADER_LEN..]].concat());
    assert!(matches!(
        access(&b, "t"),
        Err(NavMeshError::Version { found, .. }) if found == VERSION + 1
    ));
    let mut b = aligned(&bytes);
    b[0] = b'X';
    assert!(matches!(access(&b, "t"), Err(NavMeshError::Magic { .. })));
}

#[test]
fn a_file_of_the_wrong_length_or_kind_says_which() {
    let bytes = encode(&mesh());
    // Cut inside the header: too short, not "bad magic" (its bytes are a navmesh's).
    for n in [0, 30, HEADER_LEN - 1] {
        let e = access(&aligned(&bytes[..n]), "t").err().unwrap();
        assert!(
            matches!(e, NavMeshError::Short { found, .. } if found == n as u64),
            "{n}: {e}"
        );
        assert!(e.to_string().contains("too short"), "{e}");
    }
    // Something else that is short is not a navmesh at all.
    let e = access(&aligned(b"v 1 2 3\n"), "t").err().unwrap();
    assert!(matches!(e, NavMeshError::Magic { .. }), "{e}");
    // Bytes after the payload are not a truncation.
    let longer = aligned(&[&bytes[..], &[0u8; 64]].concat());
    let e = access(&longer, "t").err().unwrap().to_string();
    assert!(e.contains("64 bytes past the end"), "{e}");
    assert!(!e.contains("truncated"), "{e}");
    let cut = aligned(&bytes[..bytes.len() - 8]);
    let e = access(&cut, "t").err().unwrap().to_string();
    assert!(e.contains("truncated"), "{e}");
    // The streaming check reads the same way.
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.tsn");
    std::fs::write(&short, &bytes[..30]).unwrap();
    assert!(matches!(
        check_file(&short),
        Err(NavMeshError::Short { found: 30, .. })
    ));
    // A folder is named as one, not "No such device" from the map.
    let e = NavMeshFile::open(dir.path())
        .err()
        .expect("a folder is refused");
    assert!(
        matches!(e, NavMeshError::NotAFile { kind: "folder", .. }),
        "{e}"
    );
}

#[test]
fn scene_coordinates_round_trip_through_the_frame() {
    let mut f = frame();
    f.up = b'y';
    let p = [1003.5, 12.25, -2001.0];
    let q = f.to_scene(f.to_internal(p));
    for k in 0..3 {
        assert!((p[k] - q[k]).abs() < 1e-4);
    }
}

#[test]
fn components_that_disagree_with_the_polygons_are_refused() {
    // Issue 17: queries answer "no path" from the component ids alone, so a file whose ids
    // split a portal or a link, skip a number, or whose table does not count its polygons
    // would give wrong answers: refused on load.
    let refused = |m: &NavMesh| match access(&aligned(&encode(m)), "t") {
        Err(NavMeshError::Invalid { source, .. }) => source,
        Ok(_) => panic!("accepted"),
        Err(e) => panic!("{e}"),
    };
    assert!(access(&aligned(&encode(&mesh())), "t").is_ok());
    // The two squares share a portal and links: one component.
    let mut m = mesh();
    m.polys[1].component = 1;
    m.components = vec![
        Component {
            polygons: 1,
            area: 4.0,
        };
        2
    ];
    assert!(matches!(
        refused(&m),
        InvalidMesh::ComponentSplit {
            poly: 0,
            across: "neighbour",
            other: 1
        }
    ));
    // Without the portal, the links still join them.
    m.poly_neis = vec![NONE; 8];
    assert!(matches!(
        refused(&m),
        InvalidMesh::ComponentSplit {
            poly: 0,
            across: "link to",
            other: 1
        }
    ));
    let mut m = mesh();
    m.polys[0].component = 1;
    assert!(matches!(
        refused(&m),
        InvalidMesh::ComponentNumber {
            poly: 0,
            component: 1
        }
    ));
    let mut m = mesh();
    m.components[0].polygons = 3;
    assert!(matches!(
        refused(&m),
        InvalidMesh::ComponentTable { component: 0 }
    ));
    let mut m = mesh();
    m.components[0].area = 8.5;
    assert!(matches!(
        refused(&m),
        InvalidMesh::ComponentTable { component: 0 }
    ));
    // A table longer than the polygons use.
    let mut m = mesh();
    m.components.push(Component::default());
    assert!(matches!(
        refused(&m),
        InvalidMesh::ComponentTable { component: 1 }
    ));
}
