//! The inputs the `obj` and `gltf` fuzz targets kept (their corpora and every crash found, in
//! the repository's `fuzz/` folder), read through the same entry points as the targets: each
//! is read or refused with an error, never a panic.

#[path = "../../../fuzz/replay.rs"]
mod replay;

use tessera_ingest::fuzzing::{read_gltf, read_obj};

#[test]
fn every_obj_fuzz_input_is_read_or_refused_without_a_panic() {
    let scratch = tempfile::tempdir().unwrap();
    let results = replay::replay("obj", |bytes| read_obj(bytes, scratch.path()));
    // The seeds that are valid scenes stay readable (so they keep seeding the fuzzer deep).
    for (seed, triangles) in [
        ("corpus/nav_test_cut.obj", 168),
        ("corpus/index_forms.obj", 7),
        ("corpus/statements_crlf_continuations.obj", 2),
        ("corpus/hexagon_fan.obj", 4),
        // Issue 21: a leading byte-order mark and old Mac (CR only) line ends.
        (
            "regressions/byte_order_mark_dropped_the_first_vertex.obj",
            1,
        ),
        ("regressions/cr_line_ends_read_as_empty.obj", 2),
    ] {
        assert_eq!(results[seed], Ok(triangles), "{seed}");
    }
}

#[test]
fn every_gltf_fuzz_input_is_read_or_refused_without_a_panic() {
    let results = replay::replay("gltf", read_gltf);
    for (seed, triangles) in [
        ("corpus/three_modes.glb", 14),
        ("corpus/three_modes_data_uri.gltf", 14),
        ("corpus/u8_indices_two_scenes.glb", 2),
        ("corpus/no_scene.gltf", 1),
        ("corpus/strided_points_lines_fan.glb", 2),
    ] {
        assert_eq!(results[seed], Ok(triangles), "{seed}");
    }
    for (seed, error) in [
        ("corpus/external_buffer.gltf", "no folder"),
        (
            "corpus/shared_children.glb",
            "node 2: reached twice in scene 0",
        ),
        (
            "corpus/float_indices.glb",
            "Scalar of F32 cannot be indices",
        ),
        ("corpus/empty_indices.glb", "accessor 1: holds no element"),
        ("corpus/short_stride.glb", "stride of 4 bytes"),
        (
            "regressions/position_names_a_missing_accessor.glb",
            "POSITION names accessor",
        ),
        (
            "regressions/glb_length_less_than_header.glb",
            "less than its header",
        ),
    ] {
        let message = results[seed].as_ref().unwrap_err();
        assert!(message.contains(error), "{seed}: {message}");
    }
}
