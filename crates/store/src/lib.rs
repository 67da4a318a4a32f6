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

/// Writes go to the temporary file; seeking lets a writer fill in a header last.
impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.writer.seek(pos)
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
        Ok(())
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

    /// Checks every chunk's checksum (reading the whole file once, decompressing nothing):
    /// the test a checkpoint passes before it is reused.
    pub fn verify(&self) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        let mut buf = Vec::new();
        for e in &self.entries {
            buf.resize(e.stored_len as usize, 0);
            self.file
                .read_exact_at(&mut buf, e.offset)
                .map_err(|err| StoreError::io(&self.path, err))?;
            if xxh3_64(&buf) != e.checksum {
                return Err(StoreError::Corrupt {
                    path: self.path.clone(),
                    what: format!("checksum mismatch in a chunk of key {}", e.key),
                });
            }
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
}

/// A journal's kind, stage key and header blob, read from the front of the file alone (a
/// journal can be far larger than what a bake may hold in memory).
fn read_journal_header(path: &Path) -> Result<([u8; 8], u64, Vec<u8>), StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt {
        path: path.to_path_buf(),
        what: what.to_string(),
    };
    let mut file = File::open(path).map_err(|e| StoreError::io(path, e))?;
    let len = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
    let mut head = [0u8; 32];
    if len < 40 {
        return Err(corrupt("truncated header"));
    }
    file.read_exact(&mut head)
        .map_err(|e| StoreError::io(path, e))?;
    if &head[0..8] != JOURNAL_MAGIC {
        return Err(corrupt("not a journal of this kind"));
    }
    let kind: [u8; 8] = head[8..16].try_into().unwrap();
    let stage_key = u64::from_le_bytes(head[16..24].try_into().unwrap());
    let blob_len = u64::from_le_bytes(head[24..32].try_into().unwrap());
    if 32 + blob_len + 8 > len {
        return Err(corrupt("truncated header"));
    }
    let mut blob = vec![0u8; blob_len as usize];
    file.read_exact(&mut blob)
        .map_err(|e| StoreError::io(path, e))?;
    Ok((kind, stage_key, blob))
}

/// Reads, checks and decompresses chunks, concatenated in the order given.
fn read_entries<'a>(
    path: &Path,
    file: &File,
    entries: impl Iterator<Item = &'a Entry>,
    key: u32,
) -> Result<Vec<u8>, StoreError> {
    use std::os::unix::fs::FileExt;
    let entries: Vec<&Entry> = entries.collect();
    let mut out = Vec::with_capacity(entries.iter().map(|e| e.raw_len as usize).sum());
    let mut stored = Vec::new();
    for e in entries {
        stored.resize(e.stored_len as usize, 0);
        file.read_exact_at(&mut stored, e.offset)
            .map_err(|err| StoreError::io(path, err))?;
        if xxh3_64(&stored) != e.checksum {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                what: format!("checksum mismatch in a chunk of key {key}"),
            });
        }
        let start = out.len();
        out.resize(start + e.raw_len as usize, 0);
        let n = lz4_flex::decompress_into(&stored, &mut out[start..]).map_err(|err| {
            StoreError::Corrupt {
                path: path.to_path_buf(),
                what: format!("chunk of key {key} does not decompress: {err}"),
            }
        })?;
        if n != e.raw_len as usize {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                what: format!(
                    "chunk of key {key} decompresses to {n} bytes, expected {}",
                    e.raw_len
                ),
            });
        }
    }
    Ok(out)
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
    fn journal_recovers_whole_records_after_a_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut j = Journal::open(&path, b"TESTKIND", 7, b"frame").unwrap();
        for k in 0..5u32 {
            let raw = vec![k as u8; 100 + k as usize];
            j.append_compressed(k, &compress(&raw), raw.len()).unwrap();
        }
        j.sync().unwrap();
        drop(j);
        let full = std::fs::read(&path).unwrap();
        // Killed in the middle of record 3.
        let cut = full.len() - 30;
        std::fs::write(&path, &full[..cut]).unwrap();
        let mut j = Journal::open(&path, b"TESTKIND", 7, b"frame").unwrap();
        assert_eq!(j.keys(), vec![0, 1, 2, 3]);
        assert!(!j.is_complete());
        assert_eq!(j.read(2).unwrap(), vec![2u8; 102]);
        let raw = vec![4u8; 104];
        j.append_compressed(4, &compress(&raw), raw.len()).unwrap();
        j.finish().unwrap();
        drop(j);
        // The resumed file is byte-identical to one written in one go.
        let mut again = Journal::open(dir.path().join("k"), b"TESTKIND", 7, b"frame").unwrap();
        for k in 0..5u32 {
            let raw = vec![k as u8; 100 + k as usize];
            again
                .append_compressed(k, &compress(&raw), raw.len())
                .unwrap();
        }
        again.finish().unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            std::fs::read(dir.path().join("k")).unwrap()
        );
        assert!(Journal::open_complete(&path, b"TESTKIND")
            .unwrap()
            .is_complete());
        // Another stage key starts afresh.
        let j = Journal::open(&path, b"TESTKIND", 8, b"frame").unwrap();
        assert!(j.keys().is_empty());
        // A flipped byte in a record: that record and everything after it are recomputed.
        let mut j = Journal::open(dir.path().join("k"), b"TESTKIND", 7, b"frame").unwrap();
        assert!(j.is_complete());
        drop(j);
        let mut bytes = std::fs::read(dir.path().join("k")).unwrap();
        let n = bytes.len();
        bytes[n - 40] ^= 1;
        std::fs::write(dir.path().join("k"), &bytes).unwrap();
        j = Journal::open(dir.path().join("k"), b"TESTKIND", 7, b"frame").unwrap();
        assert_eq!(j.keys(), vec![0, 1, 2, 3]);
        assert!(Journal::open_complete(dir.path().join("k"), b"TESTKIND").is_err());
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

/// An append-only, resumable file of keyed chunks: a per-tile output that survives being killed.
///
/// ```text
/// header   "TSJRNL01" | kind [8] | stage key u64 | header blob length u64 | blob | xxh3 of all before
/// record   "TSREC\0\0\0" | key u32 | raw length u32 | stored length u32 | xxh3 of stored u64 | stored (lz4)
/// end      "TSEND\0\0\0" | record count u64 | xxh3 of the record checksums u64
/// ```
///
/// Records carry their own checksums, so reopening a file cut short anywhere (a killed bake)
/// recovers every whole record and drops the partial tail. A file with an end record is
/// complete. The stage key ties the file to the inputs and settings that made it: a file made
/// under another key is started afresh.
pub struct Journal {
    path: PathBuf,
    file: File,
    entries: Vec<Entry>,
    /// Where the next record goes.
    offset: u64,
    complete: bool,
}

/// Reads records of a [`Journal`] from another thread.
pub struct JournalReader {
    path: PathBuf,
    file: File,
    entries: Vec<Entry>,
}

/// The records of `key` among `entries`, read and checked.
fn read_key(path: &Path, file: &File, entries: &[Entry], key: u32) -> Result<Vec<u8>, StoreError> {
    read_entries(path, file, entries.iter().filter(|e| e.key == key), key)
}

impl JournalReader {
    /// Reads and decompresses the record(s) of `key`, checking their checksums.
    pub fn read(&self, key: u32) -> Result<Vec<u8>, StoreError> {
        read_key(&self.path, &self.file, &self.entries, key)
    }

    /// Uncompressed size of the record(s) of `key`.
    pub fn raw_len(&self, key: u32) -> u64 {
        self.entries
            .iter()
            .filter(|e| e.key == key)
            .map(|e| e.raw_len as u64)
            .sum()
    }
}

const JOURNAL_MAGIC: &[u8; 8] = b"TSJRNL01";
const RECORD_MAGIC: &[u8; 8] = b"TSREC\0\0\0";
const END_MAGIC: &[u8; 8] = b"TSEND\0\0\0";
const RECORD_HEAD: usize = 8 + 4 + 4 + 4 + 8;

impl Journal {
    fn header(kind: &[u8; 8], stage_key: u64, blob: &[u8]) -> Vec<u8> {
        let mut h = Vec::with_capacity(40 + blob.len());
        h.extend_from_slice(JOURNAL_MAGIC);
        h.extend_from_slice(kind);
        h.extend_from_slice(&stage_key.to_le_bytes());
        h.extend_from_slice(&(blob.len() as u64).to_le_bytes());
        h.extend_from_slice(blob);
        let sum = xxh3_64(&h);
        h.extend_from_slice(&sum.to_le_bytes());
        h
    }

    /// Opens the journal at `path` for `stage_key`, recovering its whole records, or starts a
    /// new one (when absent, made under another key or kind, or unreadable). Returns the journal
    /// and whether anything was recovered.
    pub fn open(
        path: impl AsRef<Path>,
        kind: &[u8; 8],
        stage_key: u64,
        blob: &[u8],
    ) -> Result<Journal, StoreError> {
        let path = path.as_ref().to_path_buf();
        let header = Journal::header(kind, stage_key, blob);
        if let Ok(mut existing) = File::open(&path) {
            let mut head = vec![0u8; header.len()];
            if existing.read_exact(&mut head).is_ok() && head == header {
                let mut j = Journal {
                    file: OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&path)
                        .map_err(|e| StoreError::io(&path, e))?,
                    path,
                    entries: Vec::new(),
                    offset: header.len() as u64,
                    complete: false,
                };
                j.recover(existing)?;
                return Ok(j);
            }
        }
        // Start afresh.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        file.write_all(&header)
            .map_err(|e| StoreError::io(&path, e))?;
        file.sync_data().map_err(|e| StoreError::io(&path, e))?;
        Ok(Journal {
            path,
            file,
            entries: Vec::new(),
            offset: header.len() as u64,
            complete: false,
        })
    }

    /// Scans the records after the header (`input` is positioned there), reading them through
    /// once with a buffer of one record; keeps the whole ones and cuts the file after them.
    fn recover(&mut self, input: File) -> Result<(), StoreError> {
        let len = input
            .metadata()
            .map_err(|e| StoreError::io(&self.path, e))?
            .len();
        let mut input = std::io::BufReader::with_capacity(1 << 16, input);
        let mut pos = self.offset;
        let mut sums = Vec::new();
        let mut head = [0u8; RECORD_HEAD];
        let mut payload = Vec::new();
        while pos + 8 <= len {
            if input.read_exact(&mut head[..8]).is_err() {
                break;
            }
            if &head[..8] == END_MAGIC && pos + 24 <= len {
                let mut tail = [0u8; 16];
                if input.read_exact(&mut tail).is_err() {
                    break;
                }
                let count = u64::from_le_bytes(tail[0..8].try_into().unwrap());
                let sum = u64::from_le_bytes(tail[8..16].try_into().unwrap());
                if count == self.entries.len() as u64 && sum == xxh3_64(&sums) {
                    self.complete = true;
                    self.offset = pos + 24;
                }
                break;
            }
            if &head[..8] != RECORD_MAGIC
                || pos + RECORD_HEAD as u64 > len
                || input.read_exact(&mut head[8..]).is_err()
            {
                break;
            }
            let key = u32::from_le_bytes(head[8..12].try_into().unwrap());
            let raw_len = u32::from_le_bytes(head[12..16].try_into().unwrap());
            let stored_len = u32::from_le_bytes(head[16..20].try_into().unwrap()) as u64;
            let checksum = u64::from_le_bytes(head[20..28].try_into().unwrap());
            let start = pos + RECORD_HEAD as u64;
            if start + stored_len > len {
                break;
            }
            payload.resize(stored_len as usize, 0);
            if input.read_exact(&mut payload).is_err() || xxh3_64(&payload) != checksum {
                break;
            }
            self.entries.push(Entry {
                key,
                offset: start,
                stored_len: stored_len as u32,
                raw_len,
                checksum,
            });
            sums.extend_from_slice(&checksum.to_le_bytes());
            pos = start + stored_len;
            self.offset = pos;
        }
        if !self.complete {
            self.file
                .set_len(self.offset)
                .map_err(|e| StoreError::io(&self.path, e))?;
        }
        Ok(())
    }

    /// True when the journal was finished (it has its end record).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Drops every record after the first `n` (to line this journal up with another one).
    pub fn truncate(&mut self, n: usize) -> Result<(), StoreError> {
        if n >= self.entries.len() {
            return Ok(());
        }
        self.offset = self.entries[n].offset - RECORD_HEAD as u64;
        self.entries.truncate(n);
        self.complete = false;
        self.file
            .set_len(self.offset)
            .map_err(|e| StoreError::io(&self.path, e))
    }

    /// A reader of the records written so far, usable while this journal keeps appending.
    pub fn snapshot(&self) -> Result<JournalReader, StoreError> {
        Ok(JournalReader {
            path: self.path.clone(),
            file: self
                .file
                .try_clone()
                .map_err(|e| StoreError::io(&self.path, e))?,
            entries: self.entries.clone(),
        })
    }

    /// Keys of the whole records, in the order written.
    pub fn keys(&self) -> Vec<u32> {
        self.entries.iter().map(|e| e.key).collect()
    }

    /// Appends one record (compressed by [`compress`]).
    pub fn append_compressed(
        &mut self,
        key: u32,
        stored: &[u8],
        raw_len: usize,
    ) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        let checksum = xxh3_64(stored);
        let mut rec = Vec::with_capacity(RECORD_HEAD + stored.len());
        rec.extend_from_slice(RECORD_MAGIC);
        rec.extend_from_slice(&key.to_le_bytes());
        rec.extend_from_slice(&(raw_len as u32).to_le_bytes());
        rec.extend_from_slice(&(stored.len() as u32).to_le_bytes());
        rec.extend_from_slice(&checksum.to_le_bytes());
        rec.extend_from_slice(stored);
        self.file
            .write_all_at(&rec, self.offset)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.entries.push(Entry {
            key,
            offset: self.offset + RECORD_HEAD as u64,
            stored_len: stored.len() as u32,
            raw_len: raw_len as u32,
            checksum,
        });
        self.offset += rec.len() as u64;
        Ok(())
    }

    /// Makes what was appended durable (a resume point).
    pub fn sync(&self) -> Result<(), StoreError> {
        self.file
            .sync_data()
            .map_err(|e| StoreError::io(&self.path, e))
    }

    /// Writes the end record and syncs: the journal is complete.
    pub fn finish(&mut self) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        let sums: Vec<u8> = self
            .entries
            .iter()
            .flat_map(|e| e.checksum.to_le_bytes())
            .collect();
        let mut end = Vec::with_capacity(24);
        end.extend_from_slice(END_MAGIC);
        end.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        end.extend_from_slice(&xxh3_64(&sums).to_le_bytes());
        self.file
            .write_all_at(&end, self.offset)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.offset += 24;
        self.file
            .set_len(self.offset)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.sync()?;
        self.complete = true;
        Ok(())
    }

    /// Reads and decompresses the record(s) of `key`, checking their checksums.
    pub fn read(&self, key: u32) -> Result<Vec<u8>, StoreError> {
        read_key(&self.path, &self.file, &self.entries, key)
    }

    /// Opens a complete journal for reading; an incomplete one is an error.
    pub fn open_complete(path: impl AsRef<Path>, kind: &[u8; 8]) -> Result<Journal, StoreError> {
        let path = path.as_ref().to_path_buf();
        let (found_kind, stage_key, blob) = read_journal_header(&path)?;
        if &found_kind != kind {
            return Err(StoreError::Corrupt {
                path: path.clone(),
                what: "not a journal of this kind".to_string(),
            });
        }
        let mut j = Journal::open(&path, kind, stage_key, &blob)?;
        if !j.complete {
            // `open` cut nothing it could keep; say what is missing.
            j.entries.clear();
            return Err(StoreError::Corrupt {
                path: path.clone(),
                what: "incomplete (the bake that wrote it did not finish)".to_string(),
            });
        }
        Ok(j)
    }

    /// The header blob given when the journal was created.
    pub fn blob(path: impl AsRef<Path>) -> Result<Vec<u8>, StoreError> {
        read_journal_header(path.as_ref()).map(|(_, _, blob)| blob)
    }
}
