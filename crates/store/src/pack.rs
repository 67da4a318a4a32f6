//! Packs: many chunks in one file, each keyed by a tile index and checked by its own xxh3
//! checksum, the index at the end; written once through an [`AtomicFile`].
//!
//! A chunk is stored as an lz4 block, shorter than its raw bytes, or as the raw bytes
//! themselves: a stored length equal to the raw length means raw (see [`compress`]).
//!
//! ```text
//! header   "TSPACK\0\x02" | kind [8] | header blob length u64 | xxh3 of the blob u64 | blob
//! chunks   stored chunks, back to back
//! index    per chunk: key u32 | offset u64 | stored len u32 | raw len u32 | xxh3 of stored u64
//! footer   index offset u64 | chunk count u64 | xxh3 of the index u64 | "TSPACKIX"
//! ```

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

use crate::{AtomicFile, StoreError};

const PACK_MAGIC: &[u8; 8] = b"TSPACK\0\x02";
const FOOTER_MAGIC: &[u8; 8] = b"TSPACKIX";
const ENTRY_LEN: usize = 4 + 8 + 4 + 4 + 8;
const FOOTER_LEN: usize = 8 + 8 + 8 + 8;

/// Where one chunk (or journal record) lies and how to check it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub(crate) key: u32,
    pub(crate) offset: u64,
    pub(crate) stored_len: u32,
    pub(crate) raw_len: u32,
    pub(crate) checksum: u64,
}

/// Writes a pack: a header blob, then chunks, then the index.
pub struct PackWriter {
    file: AtomicFile,
    entries: Vec<Entry>,
    offset: u64,
}

impl PackWriter {
    /// Starts a pack at `path`; `kind` (8 bytes) and `header` (any bytes, for example the grid
    /// frame) are stored at the front and given back by the reader.
    pub fn create(
        path: impl AsRef<Path>,
        kind: &[u8; 8],
        header: &[u8],
    ) -> Result<PackWriter, StoreError> {
        let mut file = AtomicFile::create_unsynced(path)?;
        file.write_all(PACK_MAGIC)?;
        file.write_all(kind)?;
        file.write_all(&(header.len() as u64).to_le_bytes())?;
        file.write_all(&xxh3_64(header).to_le_bytes())?;
        file.write_all(header)?;
        let offset = file.position()?;
        Ok(PackWriter {
            file,
            entries: Vec::new(),
            offset,
        })
    }

    /// Appends one chunk for `key`, compressed.
    pub fn append(&mut self, key: u32, raw: &[u8]) -> Result<(), StoreError> {
        self.append_stored(key, &compress(raw), raw.len())
    }

    /// Appends a chunk already stored by [`compress`] (so that workers, not the one writer
    /// thread, pay for compression), or raw (`stored` is then the `raw_len` bytes themselves).
    pub fn append_stored(
        &mut self,
        key: u32,
        stored: &[u8],
        raw_len: usize,
    ) -> Result<(), StoreError> {
        let raw_len = u32::try_from(raw_len).map_err(|_| StoreError::Corrupt {
            path: self.file.path().to_path_buf(),
            what: format!("chunk of {raw_len} bytes is larger than 4 GiB"),
        })?;
        self.file.write_all(stored)?;
        self.entries.push(Entry {
            key,
            offset: self.offset,
            stored_len: stored.len() as u32,
            raw_len,
            checksum: xxh3_64(stored),
        });
        self.offset += stored.len() as u64;
        Ok(())
    }

    /// Writes the index and puts the pack in place atomically, without an fsync: every chunk,
    /// the header and the index carry checksums that readers verify before use, so a pack a
    /// power cut left incomplete is found corrupt and made again (see
    /// [`AtomicFile::commit_unsynced`]). Returns the file size.
    pub fn finish(mut self) -> Result<u64, StoreError> {
        let mut index = Vec::with_capacity(self.entries.len() * ENTRY_LEN);
        for e in &self.entries {
            index.extend_from_slice(&e.key.to_le_bytes());
            index.extend_from_slice(&e.offset.to_le_bytes());
            index.extend_from_slice(&e.stored_len.to_le_bytes());
            index.extend_from_slice(&e.raw_len.to_le_bytes());
            index.extend_from_slice(&e.checksum.to_le_bytes());
        }
        self.file.write_all(&index)?;
        self.file.write_all(&self.offset.to_le_bytes())?;
        self.file
            .write_all(&(self.entries.len() as u64).to_le_bytes())?;
        self.file.write_all(&xxh3_64(&index).to_le_bytes())?;
        self.file.write_all(FOOTER_MAGIC)?;
        let size = self.offset + index.len() as u64 + FOOTER_LEN as u64;
        self.file.commit_unsynced()?;
        Ok(size)
    }
}

/// Compresses one chunk the way packs and journals store it: an lz4 block when that is
/// shorter, else the raw bytes (which readers tell apart by their length).
pub fn compress(raw: &[u8]) -> Vec<u8> {
    compress_with(raw, &mut Vec::new())
}

/// [`compress`] through the reusable buffer `scratch`: the same bytes, returned in a vector
/// of their own size (so that a large scratch is not allocated afresh for every chunk).
pub fn compress_with(raw: &[u8], scratch: &mut Vec<u8>) -> Vec<u8> {
    scratch.resize(lz4_flex::block::get_maximum_output_size(raw.len()), 0);
    let n = lz4_flex::block::compress_into(raw, scratch).expect("the buffer fits the worst case");
    if n < raw.len() {
        scratch[..n].to_vec()
    } else {
        raw.to_vec()
    }
}

/// Reads chunks back from a pack, verifying every checksum.
pub struct PackReader {
    path: PathBuf,
    file: File,
    header: Vec<u8>,
    /// Entries sorted by key, stable in write order within a key.
    entries: Vec<Entry>,
}

impl PackReader {
    /// Opens a pack written with `kind`.
    pub fn open(path: impl AsRef<Path>, kind: &[u8; 8]) -> Result<PackReader, StoreError> {
        let path = path.as_ref().to_path_buf();
        let corrupt = |what: String| StoreError::Corrupt {
            path: path.clone(),
            what,
        };
        let mut file = File::open(&path).map_err(|e| StoreError::io(&path, e))?;
        let size = file.metadata().map_err(|e| StoreError::io(&path, e))?.len();
        let mut head = [0u8; 32];
        file.read_exact(&mut head)
            .map_err(|_| corrupt("shorter than its header".into()))?;
        if &head[0..8] != PACK_MAGIC {
            return Err(corrupt(
                "not a tessera pack (or another format version)".into(),
            ));
        }
        if &head[8..16] != kind {
            return Err(corrupt(format!(
                "holds `{}`, expected `{}`",
                String::from_utf8_lossy(&head[8..16]).trim_end_matches('\0'),
                String::from_utf8_lossy(kind).trim_end_matches('\0')
            )));
        }
        let header_len = u64::from_le_bytes(head[16..24].try_into().unwrap());
        let header_sum = u64::from_le_bytes(head[24..32].try_into().unwrap());
        if header_len > size {
            return Err(corrupt("header length past the end of the file".into()));
        }
        let mut header = vec![0u8; header_len as usize];
        file.read_exact(&mut header)
            .map_err(|_| corrupt("truncated header".into()))?;
        if xxh3_64(&header) != header_sum {
            return Err(corrupt("header checksum mismatch".into()));
        }
        if size < 32 + header_len + FOOTER_LEN as u64 {
            return Err(corrupt("truncated (no index)".into()));
        }
        let mut footer = [0u8; FOOTER_LEN];
        file.seek(SeekFrom::Start(size - FOOTER_LEN as u64))
            .and_then(|_| file.read_exact(&mut footer))
            .map_err(|e| StoreError::io(&path, e))?;
        if &footer[24..32] != FOOTER_MAGIC {
            return Err(corrupt("truncated (index footer missing)".into()));
        }
        let index_offset = u64::from_le_bytes(footer[0..8].try_into().unwrap());
        let count = u64::from_le_bytes(footer[8..16].try_into().unwrap());
        let index_sum = u64::from_le_bytes(footer[16..24].try_into().unwrap());
        let index_len = count
            .checked_mul(ENTRY_LEN as u64)
            .filter(|&l| index_offset.checked_add(l) == Some(size - FOOTER_LEN as u64))
            .ok_or_else(|| corrupt("index size does not match the file".into()))?;
        let mut index = vec![0u8; index_len as usize];
        file.seek(SeekFrom::Start(index_offset))
            .and_then(|_| file.read_exact(&mut index))
            .map_err(|e| StoreError::io(&path, e))?;
        if xxh3_64(&index) != index_sum {
            return Err(corrupt("index checksum mismatch".into()));
        }
        let mut entries: Vec<Entry> = index
            .chunks_exact(ENTRY_LEN)
            .map(|b| Entry {
                key: u32::from_le_bytes(b[0..4].try_into().unwrap()),
                offset: u64::from_le_bytes(b[4..12].try_into().unwrap()),
                stored_len: u32::from_le_bytes(b[12..16].try_into().unwrap()),
                raw_len: u32::from_le_bytes(b[16..20].try_into().unwrap()),
                checksum: u64::from_le_bytes(b[20..28].try_into().unwrap()),
            })
            .collect();
        for e in &entries {
            if e.offset + e.stored_len as u64 > index_offset {
                return Err(corrupt(format!(
                    "chunk of key {} runs past the data",
                    e.key
                )));
            }
        }
        entries.sort_by_key(|e| e.key);
        Ok(PackReader {
            path,
            file,
            header,
            entries,
        })
    }

    /// Checks every chunk's checksum (reading the whole file once, decompressing nothing):
    /// the test a checkpoint passes before it is reused.
    pub fn verify(&self) -> Result<(), StoreError> {
        let mut buf = Vec::new();
        for e in &self.entries {
            read_checked(&self.path, &self.file, e, &mut buf)?;
        }
        Ok(())
    }

    /// The header blob given to [`PackWriter::create`].
    pub fn header(&self) -> &[u8] {
        &self.header
    }

    fn range(&self, key: u32) -> &[Entry] {
        let lo = self.entries.partition_point(|e| e.key < key);
        let hi = self.entries.partition_point(|e| e.key <= key);
        &self.entries[lo..hi]
    }

    /// The checksum and raw length of each chunk of `key`, in the order written (from the
    /// index: nothing is read). Chunks alike in these hold the same bytes.
    pub fn chunk_sums(&self, key: u32) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.range(key).iter().map(|e| (e.checksum, e.raw_len))
    }

    /// Uncompressed size of everything stored under `key` (known without reading it).
    pub fn raw_len(&self, key: u32) -> u64 {
        self.range(key).iter().map(|e| e.raw_len as u64).sum()
    }

    /// The keys present, ascending, each once.
    pub fn keys(&self) -> Vec<u32> {
        let mut keys: Vec<u32> = self.entries.iter().map(|e| e.key).collect();
        keys.dedup();
        keys
    }

    /// Reads, checks and decompresses every chunk of `key`, concatenated in write order (empty
    /// when the key is absent). Reads with positioned I/O, so one reader serves many threads.
    pub fn read(&self, key: u32) -> Result<Vec<u8>, StoreError> {
        read_entries(&self.path, &self.file, self.range(key).iter(), key)
    }

    /// The chunk of `key` as stored (compressed, or raw when its stored length is its raw
    /// length) with its raw length, its checksum checked: what [`PackWriter::append_stored`]
    /// takes to copy it into another pack as it is. `None` when `key` has no chunk or more
    /// than one.
    pub fn read_stored(&self, key: u32) -> Result<Option<(Vec<u8>, usize)>, StoreError> {
        let [e] = self.range(key) else {
            return Ok(None);
        };
        let mut stored = Vec::new();
        read_checked(&self.path, &self.file, e, &mut stored)?;
        Ok(Some((stored, e.raw_len as usize)))
    }

    /// [`PackReader::read`] into `out`, which must be [`PackReader::raw_len`] bytes long: for
    /// a caller that wants the bytes in a buffer of its own type (no copy).
    pub fn read_into(&self, key: u32, out: &mut [u8]) -> Result<(), StoreError> {
        read_entries_into(&self.path, &self.file, self.range(key).iter(), key, out)
    }
}

/// Reads, checks and decompresses chunks, concatenated in the order given.
pub(crate) fn read_entries<'a>(
    path: &Path,
    file: &File,
    entries: impl Iterator<Item = &'a Entry> + Clone,
    key: u32,
) -> Result<Vec<u8>, StoreError> {
    let mut out = vec![0; entries.clone().map(|e| e.raw_len as usize).sum()];
    read_entries_into(path, file, entries, key, &mut out)?;
    Ok(out)
}

/// Reads entry `e`'s stored bytes into `buf` (resized to them) and checks their checksum.
pub(crate) fn read_checked(
    path: &Path,
    file: &File,
    e: &Entry,
    buf: &mut Vec<u8>,
) -> Result<(), StoreError> {
    use std::os::unix::fs::FileExt;
    buf.resize(e.stored_len as usize, 0);
    file.read_exact_at(buf, e.offset)
        .map_err(|err| StoreError::io(path, err))?;
    if xxh3_64(buf) != e.checksum {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            what: format!("checksum mismatch in a chunk of key {}", e.key),
        });
    }
    Ok(())
}

/// The raw bytes of a chunk [`compress`] stored as `stored`, `raw_len` bytes long: `stored`
/// itself when it is that long, else its lz4 block decompressed.
pub fn decompress(stored: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    if stored.len() == raw_len {
        return Ok(stored.to_vec());
    }
    let mut out = vec![0; raw_len];
    match lz4_flex::decompress_into(stored, &mut out) {
        Ok(n) if n == raw_len => Ok(out),
        Ok(n) => Err(format!("decompresses to {n} bytes, expected {raw_len}")),
        Err(e) => Err(format!("does not decompress: {e}")),
    }
}

/// [`read_entries`] into `out`, which must be as long as the chunks decompressed.
fn read_entries_into<'a>(
    path: &Path,
    file: &File,
    entries: impl Iterator<Item = &'a Entry>,
    key: u32,
    out: &mut [u8],
) -> Result<(), StoreError> {
    use std::os::unix::fs::FileExt;
    let mut stored = Vec::new();
    let mut start = 0;
    let checksum_mismatch = || StoreError::Corrupt {
        path: path.to_path_buf(),
        what: format!("checksum mismatch in a chunk of key {key}"),
    };
    for e in entries {
        let end = start + e.raw_len as usize;
        if end > out.len() {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                what: format!("chunks of key {key} hold more than {} bytes", out.len()),
            });
        }
        let n = if e.stored_len == e.raw_len {
            // Stored raw: read straight into place, then checked there.
            let place = &mut out[start..end];
            file.read_exact_at(place, e.offset)
                .map_err(|err| StoreError::io(path, err))?;
            if xxh3_64(place) != e.checksum {
                return Err(checksum_mismatch());
            }
            place.len()
        } else if e.stored_len > e.raw_len {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                what: format!(
                    "chunk of key {key} is stored in {} bytes, more than its {} raw bytes",
                    e.stored_len, e.raw_len
                ),
            });
        } else {
            read_checked(path, file, e, &mut stored)?;
            lz4_flex::decompress_into(&stored, &mut out[start..end]).map_err(|err| {
                StoreError::Corrupt {
                    path: path.to_path_buf(),
                    what: format!("chunk of key {key} does not decompress: {err}"),
                }
            })?
        };
        if n != e.raw_len as usize {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                what: format!(
                    "chunk of key {key} decompresses to {n} bytes, expected {}",
                    e.raw_len
                ),
            });
        }
        start = end;
    }
    if start != out.len() {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            what: format!(
                "chunks of key {key} hold {start} bytes, expected {}",
                out.len()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decompress_undoes_compress_whether_stored_raw_or_as_lz4() {
        let repetitive = vec![7u8; 4096];
        let noise: Vec<u8> = (0u32..64)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for raw in [&repetitive, &noise] {
            let stored = compress(raw);
            assert_eq!(&decompress(&stored, raw.len()).unwrap(), raw);
        }
        assert!(compress(&repetitive).len() < repetitive.len());
        assert!(decompress(&compress(&repetitive), 100).is_err());
    }

    #[test]
    fn pack_round_trip_keeps_chunk_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pack");
        let mut w = PackWriter::create(&path, b"TESTKIND", b"frame").unwrap();
        w.append(7, b"abc").unwrap();
        w.append(2, b"zz").unwrap();
        w.append(7, b"def").unwrap();
        w.append(7, &[]).unwrap();
        w.finish().unwrap();
        let r = PackReader::open(&path, b"TESTKIND").unwrap();
        assert_eq!(r.header(), b"frame");
        assert_eq!(r.read(7).unwrap(), b"abcdef");
        assert_eq!(r.read(2).unwrap(), b"zz");
        assert_eq!(r.read(3).unwrap(), b"");
        assert_eq!(r.raw_len(7), 6);
        assert_eq!(r.keys(), vec![2, 7]);
        assert!(PackReader::open(&path, b"OTHERKND").is_err());
    }

    #[test]
    fn corruption_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pack");
        let mut w = PackWriter::create(&path, b"TESTKIND", b"").unwrap();
        w.append(1, &vec![42u8; 1000]).unwrap();
        w.finish().unwrap();
        let good = std::fs::read(&path).unwrap();
        // A flipped byte in the chunk data.
        let mut bad = good.clone();
        bad[40] ^= 0x10;
        std::fs::write(&path, &bad).unwrap();
        let r = PackReader::open(&path, b"TESTKIND").unwrap();
        assert!(matches!(r.read(1), Err(StoreError::Corrupt { .. })));
        // Truncation.
        std::fs::write(&path, &good[..good.len() - 5]).unwrap();
        assert!(PackReader::open(&path, b"TESTKIND").is_err());
    }

    #[test]
    fn raw_chunks_and_incompressible_ones_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pack");
        // Bytes lz4 cannot shorten are stored raw by `compress`; a caller may store any raw.
        let mut noise = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..4096 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            noise.push(x as u8);
        }
        let stored = compress(&noise);
        assert_eq!(stored, noise);
        let plain = vec![7u8; 5000];
        assert!(compress(&plain).len() < plain.len());
        let mut w = PackWriter::create(&path, b"TESTKIND", b"").unwrap();
        w.append_stored(1, &stored, noise.len()).unwrap();
        w.append_stored(1, &plain, plain.len()).unwrap();
        w.append(2, &plain).unwrap();
        w.finish().unwrap();
        let r = PackReader::open(&path, b"TESTKIND").unwrap();
        assert_eq!(r.read(1).unwrap(), [noise.as_slice(), &plain].concat());
        assert_eq!(r.read(2).unwrap(), plain);
    }

    #[test]
    fn a_flipped_byte_in_a_raw_chunk_is_caught_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pack");
        let raw: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut w = PackWriter::create(&path, b"TESTKIND", b"").unwrap();
        w.append_stored(5, &raw, raw.len()).unwrap();
        w.append_stored(5, &raw, raw.len()).unwrap();
        w.finish().unwrap();
        let r = PackReader::open(&path, b"TESTKIND").unwrap();
        let mut out = vec![0u8; 6000];
        r.read_into(5, &mut out).unwrap();
        assert_eq!(out, [raw.as_slice(), &raw].concat());
        // The second chunk's last byte: read straight into the caller's buffer, then refused.
        let mut bad = std::fs::read(&path).unwrap();
        let at = bad.windows(raw.len()).rposition(|w| w == raw).unwrap() + raw.len() - 1;
        bad[at] ^= 0x01;
        std::fs::write(&path, &bad).unwrap();
        let r = PackReader::open(&path, b"TESTKIND").unwrap();
        let e = r.read_into(5, &mut out).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch in a chunk of key 5"), "{e}");
        // A buffer of the wrong size is refused before anything is read past it.
        assert!(r.read_into(5, &mut vec![0u8; 4000]).is_err());
    }

    #[test]
    fn a_chunk_stored_longer_than_raw_is_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pack");
        let mut w = PackWriter::create(&path, b"TESTKIND", b"").unwrap();
        w.append_stored(3, b"abcdef", 4).unwrap();
        w.finish().unwrap();
        let r = PackReader::open(&path, b"TESTKIND").unwrap();
        let e = r.read(3).unwrap_err().to_string();
        assert!(e.contains("more than its 4 raw bytes"), "{e}");
    }
}
