//! The glTF reader on arbitrary bytes (`.gltf` JSON or `.glb`):
//! `tessera_ingest::fuzzing::read_gltf`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tessera_ingest::fuzzing::read_gltf(data);
});
