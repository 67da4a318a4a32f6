//! The checks `tessera validate` reports, on meshes built to pass them and meshes edited (or
//! built) to fail each one.

mod common;

use common::{frame, Builder};
use tessera_navmesh::NONE;
use tessera_query::audit::{audit_heights, audit_mesh, audit_paths, MeshAudit};
use tessera_query::Query;

/// `mesh` encoded and read back, audited.
fn audit(mesh: &tessera_navmesh::NavMesh) -> (MeshAudit, bool) {
    let bytes = tessera_navmesh::aligned(&tessera_navmesh::encode(mesh));
    let archived = tessera_navmesh::access(&bytes, "test.tsn").expect("valid");
    let q = Query::new(archived);
    (audit_mesh(&q), audit_paths(&q, 200, 3, 0.001).ok())
}

/// A row of three 2 m squares, one region each: portals between them.
fn row() -> Builder {
    let mut b = Builder::new();
    b.rect(0, 0, 2, 2, 0, 0);
    b.rect(2, 0, 4, 2, 0, 1);
    b.rect(4, 0, 6, 2, 0, 2);
    b
}

#[test]
fn a_sound_mesh_passes_every_check() {
    let mesh = tessera_navgraph::build(frame(), &row().input).unwrap();
    let (found, paths_ok) = audit(&mesh);
    assert_eq!(found, MeshAudit::default());
    assert!(paths_ok);
}

#[test]
fn a_portal_removed_on_one_side_is_one_way_and_paths_disagree() {
    let mut mesh = tessera_navgraph::build(frame(), &row().input).unwrap();
    // The middle square forgets its portal to the first: the first still names it.
    let first = mesh.polys[1].first as usize;
    let k = (0..4)
        .find(|&k| mesh.poly_neis[first + k] == 0)
        .expect("the middle square has a portal to the first");
    mesh.poly_neis[first + k] = NONE;
    let bytes = tessera_navmesh::aligned(&tessera_navmesh::encode(&mesh));
    let archived = tessera_navmesh::access(&bytes, "test.tsn").expect("still valid");
    let q = Query::new(archived);
    let found = audit_mesh(&q);
    assert_eq!(found.one_way_portals.len(), 1, "{found:?}");
    assert_eq!(found.one_way_portals[0].0, 0);
    assert_eq!(found.one_way_portals[0].2, 1);
    // Only boundary edges pair up as open edges, and the first square's edge is a portal.
    assert!(found.open_edges.is_empty(), "{found:?}");
    let paths = audit_paths(&q, 200, 3, 0.001);
    assert!(!paths.one_way.is_empty(), "{paths:?}");
    assert!(!paths.ok());
}

#[test]
fn squares_that_touch_without_a_portal_have_open_edges() {
    // A T-junction: the left square's right edge meets two half-height rectangles, whose
    // corners at (2, 1) lie inside it, so no edge matches another end to end.
    let mut b = Builder::new();
    b.rect(0, 0, 2, 2, 0, 0);
    b.rect(2, 0, 4, 1, 0, 1);
    b.rect(2, 1, 4, 2, 0, 2);
    let mesh = tessera_navgraph::build(frame(), &b.input).unwrap();
    let (found, _) = audit(&mesh);
    let pairs: Vec<(u32, u32)> = found.open_edges.iter().map(|e| (e.0, e.2)).collect();
    assert!(
        pairs.contains(&(0, 1)) && pairs.contains(&(0, 2)),
        "{found:?}"
    );
    // Beyond the climb (0.5 m; heights in quarter metres), touching in plan is a ledge.
    let mut b = Builder::new();
    b.rect(0, 0, 2, 2, 0, 0);
    b.rect(2, 0, 4, 2, 8, 1);
    let mesh = tessera_navgraph::build(frame(), &b.input).unwrap();
    let (found, _) = audit(&mesh);
    assert!(found.open_edges.is_empty(), "{found:?}");
}

#[test]
fn a_polygon_flattened_to_a_sliver_is_degenerate() {
    let mut b = row();
    b.rect(0, 4, 2, 6, 0, 3);
    let mut mesh = tessera_navgraph::build(frame(), &b.input).unwrap();
    // Its top corners moved down onto its bottom edge, less a hair: no area left.
    let first = mesh.polys[3].first as usize;
    let ids: Vec<usize> = (0..4)
        .map(|k| mesh.poly_verts[first + k] as usize)
        .collect();
    let bottom = ids
        .iter()
        .map(|&v| mesh.verts[v][1])
        .fold(f32::INFINITY, f32::min);
    for &v in &ids {
        if mesh.verts[v][1] > bottom {
            mesh.verts[v][1] = bottom + 1e-7;
        }
    }
    let bytes = tessera_navmesh::aligned(&tessera_navmesh::encode(&mesh));
    let archived = tessera_navmesh::access(&bytes, "test.tsn").expect("still loads");
    let found = audit_mesh(&Query::new(archived));
    assert_eq!(found.degenerate, [3], "{found:?}");
}

#[test]
fn points_on_the_mesh_must_lie_on_the_scene_surface() {
    // The row of squares lies at z = 0 (internal metres) over x 0..6, y 0..2.
    let mesh = tessera_navgraph::build(frame(), &row().input).unwrap();
    let bytes = tessera_navmesh::aligned(&tessera_navmesh::encode(&mesh));
    let q = Query::new(tessera_navmesh::access(&bytes, "test.tsn").unwrap());
    let floor = |z: f32| {
        vec![
            [[-1.0, -1.0, z], [7.0, -1.0, z], [7.0, 3.0, z]],
            [[-1.0, -1.0, z], [7.0, 3.0, z], [-1.0, 3.0, z]],
        ]
    };
    let on = audit_heights(&q, &floor(0.1), 500, 5, 0.5, 0.5);
    assert!(
        on.ok(),
        "{:?}",
        &on.off_surface[..3.min(on.off_surface.len())]
    );
    assert_eq!(on.samples, 500);
    assert!(on.differences.iter().all(|&d| (d - 0.1).abs() < 1e-4));
    // The scene's floor 3 m above the mesh: every point is off it, by 3 m.
    let off = audit_heights(&q, &floor(3.0), 500, 5, 0.5, 0.5);
    assert_eq!(off.off_surface.len(), 500);
    assert!(off
        .off_surface
        .iter()
        .all(|(_, d)| d.is_some_and(|d| (d - 3.0).abs() < 1e-4)));
    // A wall (flat in plan) is no surface; nothing within reach is reported as such.
    let wall = vec![[[3.0, -1.0, 0.0], [3.0, 3.0, 0.0], [3.0, 3.0, 2.0]]];
    let none = audit_heights(&q, &wall, 100, 5, 0.5, 0.5);
    assert!(none.off_surface.iter().all(|(_, d)| d.is_none()));
    assert_eq!(none.off_surface.len(), 100);
}
