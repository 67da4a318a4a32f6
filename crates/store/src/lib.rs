//! Files on disk.
//!
//! * [`AtomicFile`] / [`write_atomic`]: every output is written to a temporary file beside its
//!   destination, fsynced, then renamed over it, so a killed or failed bake never leaves a
//!   partial file where a good one was.
//! * [`PackWriter`] / [`PackReader`]: a pack is one file holding many lz4-compressed chunks,
//!   each keyed by a tile index and checked by its own xxh3 checksum, with the index at the end.
//!   A tile may have several chunks (the binner spills a tile's triangles as its buffer fills);
//!   reading a tile concatenates its chunks in the order they were written.
//!
//! This crate knows byte blobs and keys, not what they mean (the artifacts crate does).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// A failure reading or writing a file, with the file named.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: corrupt pack: {what}")]
    Corrupt { path: PathBuf, what: String },
}

impl StoreError {
    pub fn io(path: &Path, source: io::Error) -> StoreError {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A file being written that appears at its path only when [`AtomicFile::commit`] succeeds.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    writer: BufWriter<File>,
}

impl AtomicFile {
    pub fn create(path: impl AsRef<Path>) -> Result<AtomicFile, StoreError> {
        let path = path.as_ref().to_path_buf();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let file = File::create(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
        Ok(AtomicFile {
            path,
            tmp,
            writer: BufWriter::with_capacity(1 << 16, file),
        })
    }

    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.writer
            .write_all(bytes)
            .map_err(|e| StoreError::io(&self.tmp, e))
    }

    /// Bytes written so far.
    pub fn position(&mut self) -> Result<u64, StoreError> {
        self.writer
            .stream_position()
            .map_err(|e| StoreError::io(&self.tmp, e))
    }

    /// Flushes, fsyncs and renames the file into place, then fsyncs the folder.
    pub fn commit(mut self) -> Result<(), StoreError> {
        self.writer
            .flush()
            .map_err(|e| StoreError::io(&self.tmp, e))?;
        self.writer
            .get_ref()
            .sync_all()
            .map_err(|e| StoreError::io(&self.tmp, e))?;
        std::fs::rename(&self.tmp, &self.path).map_err(|e| StoreError::io(&self.path, e))?;
        if let Some(dir) = self.path.parent() {
            // Make the rename itself durable; not every file system allows opening a folder.
            if let Ok(d) = File::open(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            }) {
                let _ = d.sync_all();
            }
        }
        // Nothing left to clean up in Drop.
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), StoreError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

const PACK_MAGIC: &[u8; 8] = b"TSPACK\0\x01";
const FOOTER_MAGIC: &[u8; 8] = b"TSPACKIX";
const ENTRY_LEN: usize = 4 + 8 + 4 + 4 + 8;
const FOOTER_LEN: usize = 8 + 8 + 8 + 8;

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u32,
    offset: u64,
    stored_len: u32,
    raw_len: u32,
    checksum: u64,
}

/// Writes a pack: a header blob, then chunks, then the index.
pub struct PackWriter {
    file: AtomicFile,
    entries: Vec<Entry>,
    offset: u64,
    raw_bytes: u64,
}

impl PackWriter {
    /// Starts a pack at `path`; `kind` (8 bytes) and `header` (any bytes, for example the grid
    /// frame) are stored at the front and given back by the reader.
    pub fn create(
        path: impl AsRef<Path>,
        kind: &[u8; 8],
        header: &[u8],
    ) -> Result<PackWriter, StoreError> {
        let mut file = AtomicFile::create(path)?;
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
            raw_bytes: 0,
        })
    }

    /// Appends one chunk for `key`, compressed.
    pub fn append(&mut self, key: u32, raw: &[u8]) -> Result<(), StoreError> {
        self.append_compressed(key, &compress(raw), raw.len())
    }

    /// Appends a chunk already compressed by [`compress`] (so that workers, not the one writer
    /// thread, pay for compression). `raw_len` is its uncompressed size.
    pub fn append_compressed(
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
        self.raw_bytes += raw_len as u64;
        Ok(())
    }

    /// Bytes written so far (compressed).
    pub fn stored_bytes(&self) -> u64 {
        self.offset
    }

    /// Uncompressed bytes appended so far.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    /// Writes the index and puts the pack in place atomically. Returns the file size.
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
        self.file.commit()?;
        Ok(size)
    }
}

/// Compresses one chunk the way packs store it (lz4 block).
pub fn compress(raw: &[u8]) -> Vec<u8> {
    lz4_flex::compress(raw)
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

    /// The header blob given to [`PackWriter::create`].
    pub fn header(&self) -> &[u8] {
        &self.header
    }

    fn range(&self, key: u32) -> &[Entry] {
        let lo = self.entries.partition_point(|e| e.key < key);
        let hi = self.entries.partition_point(|e| e.key <= key);
        &self.entries[lo..hi]
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
        use std::os::unix::fs::FileExt;
        let range = self.range(key);
        let mut out = Vec::with_capacity(range.iter().map(|e| e.raw_len as usize).sum());
        let mut stored = Vec::new();
        for e in range {
            stored.resize(e.stored_len as usize, 0);
            self.file
                .read_exact_at(&mut stored, e.offset)
                .map_err(|err| StoreError::io(&self.path, err))?;
            if xxh3_64(&stored) != e.checksum {
                return Err(StoreError::Corrupt {
                    path: self.path.clone(),
                    what: format!("checksum mismatch in a chunk of key {key}"),
                });
            }
            let start = out.len();
            out.resize(start + e.raw_len as usize, 0);
            let n = lz4_flex::decompress_into(&stored, &mut out[start..]).map_err(|err| {
                StoreError::Corrupt {
                    path: self.path.clone(),
                    what: format!("chunk of key {key} does not decompress: {err}"),
                }
            })?;
            if n != e.raw_len as usize {
                return Err(StoreError::Corrupt {
                    path: self.path.clone(),
                    what: format!(
                        "chunk of key {key} decompresses to {n} bytes, expected {}",
                        e.raw_len
                    ),
                });
            }
        }
        Ok(out)
    }
}

/// Opens a file for appending, creating its folder (used for logs).
pub fn open_append(path: &Path) -> Result<File, StoreError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| StoreError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn failed_write_leaves_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomic(&path, b"good").unwrap();
        {
            let mut f = AtomicFile::create(&path).unwrap();
            f.write_all(b"partial").unwrap();
            // Dropped without commit: the bake failed.
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"good");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
