//! citygen's worlds load in tessera in both formats it writes, and bake to the same result:
//! the OBJ (Z-up, f64 text) and the GLB (Y-up, f32 positions under an f64 node translation).

use tessera_geom::UpAxis;
use tessera_tests::*;

#[test]
fn demo_world_as_obj_and_glb_bakes_the_same_at_utm_coordinates() {
    let params = citygen::CityParams {
        size: citygen::Size::Demo,
        seed: 3,
        offset: [512_000.0, 5_712_000.0, 250.0],
    };
    let mesh = citygen::generate(&params);
    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("demo.obj");
    let glb = dir.path().join("demo.glb");
    citygen::write_obj(
        &mesh,
        &mut std::io::BufWriter::new(std::fs::File::create(&obj).unwrap()),
    )
    .unwrap();
    citygen::write_glb(
        &mesh,
        params.offset,
        &mut std::io::BufWriter::new(std::fs::File::create(&glb).unwrap()),
    )
    .unwrap();
    let config = coarse_config(64);
    let (from_obj, obj_columns) = bake_columns(
        file(&obj, UpAxis::Z),
        &config,
        &dir.path().join("obj"),
        2,
        128 << 20,
    );
    let (from_glb, glb_columns) = bake_columns(
        file(&glb, UpAxis::Y),
        &config,
        &dir.path().join("glb"),
        2,
        128 << 20,
    );
    assert_eq!(
        from_obj.triangles as usize + from_obj.degenerate_triangles as usize,
        mesh.triangles.len()
    );
    assert_eq!(from_obj.triangles, from_glb.triangles);
    assert!(
        from_obj.walkable_area_m2 > 3000.0,
        "streets, floors, a bridge: {}",
        from_obj.walkable_area_m2
    );
    // The two files round positions differently (0.1 mm text, f32 relative to the node), so
    // compare the voxelized world: almost every column agrees.
    let same = obj_columns
        .iter()
        .filter(|(k, v)| glb_columns.get(k) == Some(v))
        .count();
    assert!(
        same as f64 >= 0.999 * obj_columns.len() as f64,
        "{same} of {} columns agree",
        obj_columns.len()
    );
    assert!(
        (from_obj.walkable_spans as f64 - from_glb.walkable_spans as f64).abs()
            <= 0.001 * from_obj.walkable_spans as f64
    );
}

#[test]
fn terrain_is_a_few_surface_regions_and_keeps_its_area() {
    // citygen's 250 m terrain (hills, cliffs, river channels) at 0.5 m cells: layered
    // regions band every slope, surface regions follow it. Large regions with thin holes once
    // lost a sixth of their area to contour simplification (two sides of a strip simplified
    // onto one line, which the triangulation's inside test cannot take).
    let mesh = citygen::generate_terrain(
        &citygen::TerrainParams::for_size(citygen::Size::Demo, 1, [0.0; 3]).unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("terrain.obj");
    citygen::write_obj(
        &mesh,
        &mut std::io::BufWriter::new(std::fs::File::create(&obj).unwrap()),
    )
    .unwrap();
    let bake = |mode| {
        let mut config = tessera_config::BakeConfig::preset("recast-demo").unwrap();
        config.voxel.cell_size = 0.5;
        config.regions.mode = mode;
        let (summary, _) = bake_columns(
            file(&obj, UpAxis::Z),
            &config,
            &dir.path().join(format!("{mode:?}")),
            2,
            128 << 20,
        );
        summary
    };
    let surface = bake(tessera_config::SegmentationMode::Surface);
    let layered = bake(tessera_config::SegmentationMode::Layered);
    assert!(surface.walkable_area_m2 > 50_000.0, "{surface:?}");
    assert_eq!(surface.walkable_area_m2, layered.walkable_area_m2);
    assert!(
        surface.regions * 10 <= layered.regions,
        "regions: surface {} layered {}",
        surface.regions,
        layered.regions
    );
    assert!(surface.polygons < layered.polygons);
    for s in [&surface, &layered] {
        assert!(
            s.navmesh_area_m2 > 0.99 * s.walkable_area_m2,
            "navmesh {} m² of {} m² walkable",
            s.navmesh_area_m2,
            s.walkable_area_m2
        );
    }
}
