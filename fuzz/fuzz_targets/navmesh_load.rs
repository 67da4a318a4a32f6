//! Navmesh loading on arbitrary bytes, checksum included: `tessera_navmesh::fuzzing::load`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tessera_navmesh::fuzzing::load(data);
});
