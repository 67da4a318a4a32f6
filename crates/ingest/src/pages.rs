//! Reading large memory-mapped files without keeping them resident: the pages behind a
//! sequential reader are given back (`MADV_DONTNEED`) every [`RELEASE_EVERY`] bytes. They are
//! clean, file-backed pages, read again from the file if touched, so a pass over an input or a
//! cache larger than the memory budget keeps only a window of it mapped in. Mapped pages count
//! in a process's resident set: a scene read whole before its first release (64 MiB, once)
//! was most of a mid-sized bake's peak RSS.

use crate::IngestError;
use memmap2::Mmap;
use xxhash_rust::xxh3::Xxh3;

/// How much of a file is read between two page releases: 8 MiB of a sequential read, a few
/// hundred `madvise` calls per GB.
pub(crate) const RELEASE_EVERY: usize = 8 << 20;

/// `file` mapped read-only; `None` when it is empty (an empty file cannot be mapped).
#[allow(unsafe_code)] // maps an input file read-only: see the SAFETY comment inside
pub(crate) fn map_file(file: &std::fs::File) -> std::io::Result<Option<Mmap>> {
    if file.metadata()?.len() == 0 {
        return Ok(None);
    }
    // SAFETY: the file is mapped read-only; tessera's inputs and scratch files are not
    // modified by anyone while a bake runs (documented contract of `tessera bake`).
    Ok(Some(unsafe { Mmap::map(file) }?))
}

/// Gives back the pages of `map` in `from..upto` (whole pages inside it).
#[allow(unsafe_code)] // madvise(DONTNEED) on a read-only file map: see the SAFETY comment inside
pub(crate) fn release(map: &Mmap, from: usize, upto: usize) {
    #[cfg(unix)]
    {
        const PAGE: usize = 4096;
        let lo = from.div_ceil(PAGE) * PAGE;
        let hi = upto.min(map.len()) / PAGE * PAGE;
        if hi > lo {
            // SAFETY: a read-only map of a file nobody writes during the bake (tessera's
            // inputs, and its own files replaced only by rename): dropped pages come back from
            // the file unchanged.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, lo, hi - lo)
            };
        }
    }
}

/// Releases a map's pages behind a sequential reader, every [`RELEASE_EVERY`] bytes.
pub(crate) struct Behind<'m> {
    map: &'m Mmap,
    released: usize,
}

impl<'m> Behind<'m> {
    pub(crate) fn new(map: &'m Mmap) -> Behind<'m> {
        Behind { map, released: 0 }
    }

    /// The reader is at `pos`: true when the pages before it were just given back.
    pub(crate) fn advance(&mut self, pos: usize) -> bool {
        if pos < self.released + RELEASE_EVERY {
            return false;
        }
        release(self.map, self.released, pos);
        self.released = pos;
        true
    }
}

/// Feeds `map[..len]` to `hash` (which may update several hashers) a window at a time,
/// giving each window's pages back once hashed.
pub(crate) fn hash_released(map: &Mmap, len: usize, mut hash: impl FnMut(&[u8])) {
    let mut behind = Behind::new(map);
    let mut at = 0;
    while at < len {
        let end = (at + RELEASE_EVERY).min(len);
        hash(&map[at..end]);
        at = end;
        behind.advance(at);
    }
    release(map, 0, len);
}

/// Pieces [`hash_pieces_released`] hashes on their own.
const PIECE: usize = 1 << 20;

/// Feeds `map[..len]` to `hasher` as the xxh3 digests of its 1 MiB pieces, in order, each
/// window of pieces hashed in parallel on the current pool and its pages given back once
/// hashed. A different digest than [`hash_released`]'s, but as strong a fingerprint, and the
/// same for any thread count (the pieces are fixed).
pub(crate) fn hash_pieces_released(
    map: &Mmap,
    len: usize,
    hasher: &mut Xxh3,
    stop: &dyn Fn() -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    use rayon::prelude::*;
    let mut at = 0;
    while at < len {
        stop()?;
        let end = (at + RELEASE_EVERY).min(len);
        let digests: Vec<u64> = map[at..end]
            .par_chunks(PIECE)
            .map(xxhash_rust::xxh3::xxh3_64)
            .collect();
        for d in digests {
            hasher.update(&d.to_le_bytes());
        }
        release(map, at, end);
        at = end;
    }
    Ok(())
}
