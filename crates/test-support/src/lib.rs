//! Fixtures for tessera's tests, in one place: nothing here runs in a bake.
//!
//! * [`drawing`]: a height map drawn as text (`"0120"`, top row first) as a one-tile
//!   [`SpanField`](tessera_artifacts::SpanField) with an empty ring, for the stage crates'
//!   unit tests (regions, contours, polygons).
//! * [`mesh`]: scenes built from quads and boxes, written as OBJ text; [`gltf`]: glTF and GLB
//!   files from a JSON document and its binary buffer.
//! * [`bake_folder`]: every file of two bake folders compared byte for byte, knowing which
//!   files may differ when only the tiling differs and which fields of `summary.json` describe
//!   the run rather than the result.
//!
//! Depends on the boundary types (`artifacts`) and the navmesh format only, so any stage
//! crate can take it as a dev-dependency.

pub mod bake_folder;
pub mod drawing;
pub mod gltf;
pub mod mesh;
pub mod random;
