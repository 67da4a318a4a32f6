//! A navmesh file as the commands open it.

use std::path::Path;

use tessera_navmesh::{NavMeshError, NavMeshFile};

use crate::exit::{self, Failure};

/// Opens and validates a navmesh file: a file that cannot be read is an I/O failure, one that
/// is not a sound navmesh (magic, version, length, checksum, structure, indices) bad input.
pub fn open(path: &Path) -> Result<NavMeshFile, Failure> {
    NavMeshFile::open(path).map_err(|e| {
        let code = match e {
            NavMeshError::Io { .. } => exit::IO,
            _ => exit::BAD_INPUT,
        };
        Failure::new(code, anyhow::anyhow!("cannot use navmesh: {e}"))
    })
}
