//! The OBJ reader on arbitrary bytes: `tessera_ingest::fuzzing::read_obj`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// One scratch folder for the whole run (the reader maps files and writes its vertex table
/// there).
static SCRATCH: OnceLock<tempfile::TempDir> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let scratch = SCRATCH.get_or_init(|| tempfile::tempdir().expect("a scratch folder"));
    let _ = tessera_ingest::fuzzing::read_obj(data, scratch.path());
});
