//! Navmesh loading on arbitrary bytes with the header's length and checksum rewritten to
//! match, so mutations reach rkyv's validation and `validate`:
//! `tessera_navmesh::fuzzing::load_resealed`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tessera_navmesh::fuzzing::load_resealed(data);
});
