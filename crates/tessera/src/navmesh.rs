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

/// The bake's tile edge in internal units, when the file records it.
// TODO(merge): `NavMeshFile::tile_edge()` in tessera-navmesh replaces this.
pub fn tile_edge(file: &NavMeshFile) -> Option<f32> {
    let cells = file.tile_cells();
    (cells > 0).then(|| cells as f32 * file.mesh().frame.cell_size.to_native())
}
