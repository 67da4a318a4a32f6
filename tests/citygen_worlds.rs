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
