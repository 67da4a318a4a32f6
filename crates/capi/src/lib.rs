//! tessera's C API: the runtime (open a navmesh, query it) and the bake, for engines and
//! tools that call native code through a C ABI (C and C++, C# through P/Invoke, Godot's
//! GDExtension, Python's ctypes). Built as `libtessera.so` and `libtessera.a`; its header,
//! `include/tessera.h`, is made from this source by cbindgen (`cbindgen.toml`), and a test
//! fails when the checked-in header is not current (`TESSERA_BLESS=1` rewrites it).
//!
//! **Handles.** `tessera_navmesh_open` maps and validates a navmesh file into a
//! `TesseraNavMesh`, immutable and shareable by any number of threads. Each thread that
//! queries makes its own `TesseraQuery` over it (`tessera_query_new`): a query object holds
//! state of its own (its random generator; the area costs when the navmesh has areas) and must
//! be used by one thread at a time. Queries keep the mesh alive: closing it while they live
//! is allowed, and its memory goes with the last of them.
//!
//! **Points** are three doubles in the scene's own coordinates and up axis, as the command
//! line's; ends snap onto the mesh within the agent's reach, as `tessera path` snaps them.
//!
//! **Errors.** Every function that can fail returns a `TesseraStatus`: `TESSERA_OK`, or the
//! code `tessera bake` and the other commands exit with for the same failure (2 a bad argument,
//! 3 bad input, 4 bad config, 5 a budget too small, 6 I/O, 7 internal, 75 the folder is busy,
//! 130 interrupted), or `TESSERA_BUFFER_TOO_SMALL`. `tessera_last_error` gives the message of
//! the thread's last call. No path between two points is an answer (`found` false), not an
//! error. A panic never crosses into C: it becomes `TESSERA_INTERNAL`.
//!
//! **Buffers.** A caller's buffer comes with its capacity in items; nothing is written past
//! it. What did not fit is counted in the result (so a second call with a larger buffer gets
//! it all) and the call returns `TESSERA_BUFFER_TOO_SMALL` after filling what fits. A buffer
//! not wanted is NULL with capacity 0.
//!
//! **Safety.** Every pointer argument is checked for NULL (and alignment) before use; beyond
//! that, a non-NULL pointer must point to what its documentation says (a NUL-terminated
//! string, three doubles, a buffer of its stated capacity), and a handle must come from its
//! `_new`/`_open` and not be freed twice. That contract is the caller's, as in any C library:
//! it is stated once here rather than on every function.

// The C ABI: `#[no_mangle]` functions that take raw pointers. Each dereference is guarded and
// says why it is sound.
#![allow(unsafe_code)]
#![allow(clippy::missing_safety_doc)]

mod bake;
mod error;
mod navmesh;

pub use bake::*;
pub use error::*;
pub use navmesh::*;
