//! Entry points for fuzzing navmesh loading: arbitrary bytes in, checked as
//! [`NavMeshFile::open`](crate::NavMeshFile::open) checks a file (header, checksum, rkyv's
//! validation, [`validate`]), then every polygon read through the accessors queries use.
//!
//! The fuzz targets in the repository's `fuzz/` folder and this crate's
//! `tests/fuzz_regressions.rs` call these same functions, so every input the fuzzer kept (its
//! corpus, and each crash it found) is replayed on stable by `cargo test`. A file may be
//! refused with a [`NavMeshError`]; one that is accepted must not make any accessor panic.

use crate::{access, aligned, ArchivedNavMesh, Header, NavMeshError, HEADER_LEN};

/// Loads `bytes` as a navmesh file and reads all of it; returns the number of polygons.
pub fn load(bytes: &[u8]) -> Result<u32, NavMeshError> {
    let bytes = aligned(bytes);
    let mesh = access(&bytes, "fuzz input")?;
    Ok(read_everything(mesh))
}

/// [`load`] after rewriting the header's payload length and checksum to match the bytes (when
/// there is a whole header), so that a mutated archive gets past the checksum, which would
/// refuse nearly every mutation, to rkyv's validation and [`validate`].
pub fn load_resealed(bytes: &[u8]) -> Result<u32, NavMeshError> {
    let mut bytes = aligned(bytes);
    if let Some(mut header) = Header::from_bytes(&bytes) {
        let payload = &bytes[HEADER_LEN..];
        let digest = xxhash_rust::xxh3::xxh3_64(payload);
        header.payload_len = payload.len() as u64;
        header.checksum = header.resealed(digest);
        bytes[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    }
    let mesh = access(&bytes, "fuzz input")?;
    Ok(read_everything(mesh))
}

/// Reads every polygon of a validated mesh as queries do: its vertices, neighbours, links and
/// detail triangles, and the grid cells of its plan box with their items; then every grid cell.
fn read_everything(mesh: &ArchivedNavMesh) -> u32 {
    let _ = mesh.frame.native();
    let polygons = mesh.polys.len() as u32;
    for p in 0..polygons {
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for v in mesh.poly_vert_ids(p) {
            let v = mesh.vert(v);
            for k in 0..2 {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
        }
        for n in mesh.poly_neighbours(p) {
            assert!(
                n == crate::NONE || n < polygons,
                "polygon {p}: neighbour {n}"
            );
        }
        for l in mesh.poly_links(p) {
            let to = l.to.to_native();
            assert!(to < polygons, "polygon {p}: link to {to}");
        }
        for t in mesh.poly_triangles(p) {
            assert!(
                t.iter().flatten().all(|c| c.is_finite()),
                "polygon {p}: {t:?}"
            );
        }
        // The cells at the corners of its plan box (all of them would make this quadratic).
        let (x0, y0, x1, y1) = mesh.grid_cells(lo, hi);
        for (x, y) in [(x0, y0), (x1, y1)] {
            for q in mesh.grid_items(x, y) {
                assert!(q < polygons, "grid cell {x},{y}: polygon {q}");
            }
        }
    }
    let (width, height) = (mesh.grid.width.to_native(), mesh.grid.height.to_native());
    for y in 0..height {
        for x in 0..width {
            for q in mesh.grid_items(x, y) {
                assert!(q < polygons, "grid cell {x},{y}: polygon {q}");
            }
        }
    }
    polygons
}
