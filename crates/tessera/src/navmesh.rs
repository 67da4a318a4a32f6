//! A navmesh file as the commands open it.

use std::path::Path;

use tessera_navmesh::{NavMeshError, NavMeshFile};

use crate::exit::{self, Failure};

/// Opens and validates a navmesh file. A path that names nothing, or a folder, is bad input
/// (as a missing scene is), and so is a file that is not a sound navmesh (magic, version,
/// length, checksum, structure, indices); a file that exists but cannot be read is an I/O
/// failure.
pub fn open(path: &Path) -> Result<NavMeshFile, Failure> {
    NavMeshFile::open(path)
        .map_err(|e| Failure::new(exit_code(&e), anyhow::anyhow!("cannot use navmesh: {e}")))
}

/// The exit code of a navmesh that could not be opened (see [`open`]).
pub fn exit_code(e: &NavMeshError) -> u8 {
    match e {
        NavMeshError::Io { source, .. } if source.kind() != std::io::ErrorKind::NotFound => {
            exit::IO
        }
        _ => exit::BAD_INPUT,
    }
}
