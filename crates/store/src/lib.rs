//! Files on disk.
//!
//! * [`AtomicFile`] / [`write_atomic`] (`atomic.rs`): every output is written to a temporary
//!   file beside its destination, fsynced, then renamed over it, so a killed or failed bake
//!   never leaves a partial file where a good one was.
//! * [`PackWriter`] / [`PackReader`] (`pack.rs`): a pack is one file holding many
//!   lz4-compressed chunks ([`compress`]), each keyed by a tile index and checked by its own
//!   xxh3 checksum, with the index at the end. A tile may have several chunks (the binner
//!   spills a tile's triangles as its buffer fills); reading a tile concatenates its chunks in
//!   the order they were written.
//! * [`Journal`] / [`JournalReader`] (`journal.rs`): an append-only file of keyed records
//!   written in place, for per-tile outputs that must survive a killed bake. Each record
//!   carries its own xxh3 checksum; the header ties the file to a kind and a stage key (a file
//!   made under another key is started afresh). Appends are made durable when the writer calls
//!   [`Journal::sync`] (the pipeline does so periodically); an end record, checked against the
//!   count and checksums of the records, marks the journal complete. Reopening reads the
//!   records through once with a buffer of one record, keeps the whole ones and cuts the file
//!   at the first record that is short or damaged; writing then resumes there.
//!   [`Journal::snapshot`] gives a reader of the records so far to another thread. A
//!   segmented journal ([`Journal::open_segmented`]) is a folder of such files, one per range
//!   of keys, appended in key order; another journal of the same kind takes a finished segment
//!   over unchanged with [`Journal::adopt`] (a hard link), so that a rebake writes only the
//!   segments whose records changed.
//! * [`StoreError`] (`error.rs`): every failure names its file.
//!
//! This crate knows byte blobs and keys, not what they mean (the artifacts crate does).

mod atomic;
mod error;
mod journal;
mod pack;

pub use atomic::{link_atomic, remove_if_there, remove_stale_temp_files, write_atomic, AtomicFile};
pub use error::StoreError;
pub use journal::{Journal, JournalReader};
pub use pack::{compress, compress_with, decompress, PackReader, PackWriter};
