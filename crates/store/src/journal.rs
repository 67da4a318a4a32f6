//! Journals: append-only files of keyed records, each with its own checksum, that a killed
//! bake resumes from (see [`Journal`] for the layout).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

use crate::pack::{read_entries, Entry};
use crate::StoreError;

/// An append-only, resumable file of keyed chunks: a per-tile output that survives being killed.
///
/// ```text
/// header   "TSJRNL02" | kind [8] | stage key u64 | header blob length u64 | blob | xxh3 of all before
/// record   "TSREC\0\0\0" | key u32 | raw length u32 | stored length u32 | xxh3 of stored u64 | stored (lz4, or raw when as long)
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
    entries: Index,
    /// Where the next record goes.
    offset: u64,
    complete: bool,
}

/// Reads records of a [`Journal`] from another thread.
pub struct JournalReader {
    path: PathBuf,
    file: File,
    entries: Index,
}

/// A journal's record index: its entries in the order written, and whether their keys rose
/// all along (as every stage writes them: in tile order), so that a key is found by binary
/// search.
#[derive(Clone, Default)]
struct Index {
    entries: Vec<Entry>,
    in_order: bool,
}

impl Index {
    fn new() -> Index {
        Index {
            entries: Vec::new(),
            in_order: true,
        }
    }

    fn push(&mut self, e: Entry) {
        if self.entries.last().is_some_and(|last| last.key > e.key) {
            self.in_order = false;
        }
        self.entries.push(e);
    }

    fn truncate(&mut self, n: usize) {
        self.entries.truncate(n);
        self.in_order = self.entries.is_sorted_by_key(|e| e.key);
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.in_order = true;
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    /// The records of `key`, in the order written.
    fn records_of(&self, key: u32) -> Vec<&Entry> {
        if self.in_order {
            let lo = self.entries.partition_point(|e| e.key < key);
            let hi = lo + self.entries[lo..].partition_point(|e| e.key <= key);
            self.entries[lo..hi].iter().collect()
        } else {
            self.entries.iter().filter(|e| e.key == key).collect()
        }
    }

    /// Uncompressed size of the record(s) of `key`.
    fn raw_len(&self, key: u32) -> u64 {
        self.records_of(key).iter().map(|e| e.raw_len as u64).sum()
    }

    /// The records of `key`, read and checked.
    fn read(&self, path: &Path, file: &File, key: u32) -> Result<Vec<u8>, StoreError> {
        read_entries(path, file, self.records_of(key).into_iter(), key)
    }
}

impl JournalReader {
    /// Reads and decompresses the record(s) of `key`, checking their checksums.
    pub fn read(&self, key: u32) -> Result<Vec<u8>, StoreError> {
        self.entries.read(&self.path, &self.file, key)
    }

    /// Uncompressed size of the record(s) of `key`.
    pub fn raw_len(&self, key: u32) -> u64 {
        self.entries.raw_len(key)
    }

    /// The record of `key` as stored (compressed, or raw when its stored length is its raw
    /// length) with its raw length, its checksum checked: what [`Journal::append_stored`] takes
    /// to copy it into another journal without decompressing it. `None` when `key` has no
    /// record or more than one.
    pub fn read_stored(&self, key: u32) -> Result<Option<(Vec<u8>, usize)>, StoreError> {
        let [e] = self.entries.records_of(key)[..] else {
            return Ok(None);
        };
        let mut stored = Vec::new();
        crate::pack::read_checked(&self.path, &self.file, e, &mut stored)?;
        Ok(Some((stored, e.raw_len as usize)))
    }
}

const JOURNAL_MAGIC: &[u8; 8] = b"TSJRNL02";
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
                    entries: Index::new(),
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
            entries: Index::new(),
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
        self.offset = self.entries.entries[n].offset - RECORD_HEAD as u64;
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
        self.entries.entries.iter().map(|e| e.key).collect()
    }

    /// Appends one record, stored by [`compress`](crate::compress) (or raw: `stored` is then
    /// the `raw_len` bytes themselves).
    pub fn append_stored(
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
        self.entries.read(&self.path, &self.file, key)
    }

    /// Uncompressed size of the record(s) of `key` (0: none).
    pub fn raw_len(&self, key: u32) -> u64 {
        self.entries.raw_len(key)
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

    /// The stage key the journal was created under.
    pub fn stage_key_of(path: impl AsRef<Path>) -> Result<u64, StoreError> {
        read_journal_header(path.as_ref()).map(|(_, key, _)| key)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compress;

    #[test]
    fn journal_recovers_whole_records_after_a_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut j = Journal::open(&path, b"TESTKIND", 7, b"frame").unwrap();
        for k in 0..5u32 {
            let raw = vec![k as u8; 100 + k as usize];
            j.append_stored(k, &compress(&raw), raw.len()).unwrap();
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
        j.append_stored(4, &compress(&raw), raw.len()).unwrap();
        j.finish().unwrap();
        drop(j);
        // The resumed file is byte-identical to one written in one go.
        let mut again = Journal::open(dir.path().join("k"), b"TESTKIND", 7, b"frame").unwrap();
        for k in 0..5u32 {
            let raw = vec![k as u8; 100 + k as usize];
            again.append_stored(k, &compress(&raw), raw.len()).unwrap();
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
}
