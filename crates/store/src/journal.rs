//! Journals: append-only files of keyed records, each with its own checksum, that a killed
//! bake resumes from (see [`Journal`] for the layout), in one file or in a folder of segments.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

use crate::atomic::remove_if_there;
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
///
/// A segmented journal ([`Journal::open_segmented`]) is a folder instead: its keys are cut
/// into ranges of `span` keys, each range's records in a file of its own (a segment, in the
/// layout above, the segment's number in place of the stage key), appended in key order:
///
/// ```text
/// FOLDER/head            "TSJSEG01" | kind [8] | stage key u64 | span u32 | blob length u64 | blob | xxh3 of all before
/// FOLDER/seg-NNNNNNNN    the records of keys N * span to (N + 1) * span - 1, then the segment's end record
/// FOLDER/end             the journal's end record (over every segment's records, in order)
/// ```
///
/// A segment holds nothing of the stage key, so a later journal of the same kind and blob can
/// take a finished segment over unchanged ([`Journal::adopt`], a hard link) when the records
/// it holds are still the ones its keys would be given.
pub struct Journal {
    path: PathBuf,
    kind: [u8; 8],
    blob: Vec<u8>,
    /// Keys per segment (None: the journal is one file).
    span: Option<u32>,
    /// The segments in key order (a one-file journal: exactly one, the file itself).
    segs: Vec<Segment>,
    complete: bool,
    /// Segment files were added to the folder since its last sync.
    folder_dirty: bool,
}

/// One file of a journal: its records and where the next one goes.
struct Segment {
    number: u32,
    path: PathBuf,
    file: File,
    entries: Index,
    offset: u64,
    /// It has its end record.
    complete: bool,
    /// Written since the last sync.
    dirty: bool,
}

/// Reads records of a [`Journal`] from another thread.
pub struct JournalReader {
    kind: [u8; 8],
    blob: Vec<u8>,
    span: Option<u32>,
    segs: Vec<ReaderSegment>,
}

struct ReaderSegment {
    number: u32,
    path: PathBuf,
    file: File,
    entries: Index,
    complete: bool,
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

/// The segment of `key` among `segs` (ordered by number); a one-file journal's only one.
fn segment_of<T>(
    segs: &[T],
    number: impl Fn(&T) -> u32,
    span: Option<u32>,
    key: u32,
) -> Option<&T> {
    match span {
        None => segs.first(),
        Some(span) => {
            let n = key / span;
            segs.binary_search_by_key(&n, number).ok().map(|i| &segs[i])
        }
    }
}

impl JournalReader {
    fn segment(&self, key: u32) -> Option<&ReaderSegment> {
        segment_of(&self.segs, |s| s.number, self.span, key)
    }

    /// Reads and decompresses the record(s) of `key`, checking their checksums.
    pub fn read(&self, key: u32) -> Result<Vec<u8>, StoreError> {
        match self.segment(key) {
            Some(s) => s.entries.read(&s.path, &s.file, key),
            None => Ok(Vec::new()),
        }
    }

    /// Uncompressed size of the record(s) of `key`.
    pub fn raw_len(&self, key: u32) -> u64 {
        self.segment(key).map_or(0, |s| s.entries.raw_len(key))
    }

    /// The record of `key` as stored (compressed, or raw when its stored length is its raw
    /// length) with its raw length, its checksum checked: what [`Journal::append_stored`] takes
    /// to copy it into another journal without decompressing it. `None` when `key` has no
    /// record or more than one.
    pub fn read_stored(&self, key: u32) -> Result<Option<(Vec<u8>, usize)>, StoreError> {
        let Some(s) = self.segment(key) else {
            return Ok(None);
        };
        let [e] = s.entries.records_of(key)[..] else {
            return Ok(None);
        };
        let mut stored = Vec::new();
        crate::pack::read_checked(&s.path, &s.file, e, &mut stored)?;
        Ok(Some((stored, e.raw_len as usize)))
    }

    /// Keys of the records, in the order written.
    pub fn keys(&self) -> Vec<u32> {
        self.segs
            .iter()
            .flat_map(|s| s.entries.entries.iter().map(|e| e.key))
            .collect()
    }

    /// The keys of segment `number`'s records, in order, when the journal is segmented and
    /// that segment is finished (has its end record); None otherwise.
    pub fn segment_keys(&self, number: u32) -> Option<Vec<u32>> {
        let span = self.span?;
        let s = segment_of(&self.segs, |s| s.number, Some(span), number * span)?;
        s.complete
            .then(|| s.entries.entries.iter().map(|e| e.key).collect())
    }
}

const JOURNAL_MAGIC: &[u8; 8] = b"TSJRNL02";
const SEGMENTED_MAGIC: &[u8; 8] = b"TSJSEG01";
const RECORD_MAGIC: &[u8; 8] = b"TSREC\0\0\0";
const END_MAGIC: &[u8; 8] = b"TSEND\0\0\0";
const RECORD_HEAD: usize = 8 + 4 + 4 + 4 + 8;
const END_LEN: u64 = 24;
const HEAD_FILE: &str = "head";
const END_FILE: &str = "end";

/// A one-file journal's header, or a segment's (`key`: the segment's number).
fn header(kind: &[u8; 8], key: u64, blob: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(40 + blob.len());
    h.extend_from_slice(JOURNAL_MAGIC);
    h.extend_from_slice(kind);
    h.extend_from_slice(&key.to_le_bytes());
    h.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    h.extend_from_slice(blob);
    let sum = xxh3_64(&h);
    h.extend_from_slice(&sum.to_le_bytes());
    h
}

/// A segmented journal's head file.
fn segmented_head(kind: &[u8; 8], stage_key: u64, span: u32, blob: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(44 + blob.len());
    h.extend_from_slice(SEGMENTED_MAGIC);
    h.extend_from_slice(kind);
    h.extend_from_slice(&stage_key.to_le_bytes());
    h.extend_from_slice(&span.to_le_bytes());
    h.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    h.extend_from_slice(blob);
    let sum = xxh3_64(&h);
    h.extend_from_slice(&sum.to_le_bytes());
    h
}

/// An end record over records with these checksums.
fn end_record<'a>(count: usize, checksums: impl Iterator<Item = &'a u64>) -> Vec<u8> {
    let sums: Vec<u8> = checksums.flat_map(|c| c.to_le_bytes()).collect();
    let mut end = Vec::with_capacity(END_LEN as usize);
    end.extend_from_slice(END_MAGIC);
    end.extend_from_slice(&(count as u64).to_le_bytes());
    end.extend_from_slice(&xxh3_64(&sums).to_le_bytes());
    end
}

fn segment_path(folder: &Path, number: u32) -> PathBuf {
    folder.join(format!("seg-{number:08}"))
}

/// The number of a segment file's name.
fn segment_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("seg-")?;
    (digits.len() == 8 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Makes the entries of a folder durable; not every file system allows opening a folder.
fn sync_folder(path: &Path) {
    if let Ok(d) = File::open(path) {
        let _ = d.sync_all();
    }
}

impl Segment {
    /// A new, empty segment file (or one-file journal) with `header`.
    fn create(number: u32, path: PathBuf, header: &[u8]) -> Result<Segment, StoreError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        file.write_all(header)
            .map_err(|e| StoreError::io(&path, e))?;
        Ok(Segment {
            number,
            path,
            file,
            entries: Index::new(),
            offset: header.len() as u64,
            complete: false,
            dirty: true,
        })
    }

    /// The file at `path` when it starts with `header`, its whole records recovered and the
    /// rest cut off; None when it is absent or starts otherwise.
    fn reopen(number: u32, path: PathBuf, header: &[u8]) -> Result<Option<Segment>, StoreError> {
        let Ok(mut existing) = File::open(&path) else {
            return Ok(None);
        };
        let mut head = vec![0u8; header.len()];
        if existing.read_exact(&mut head).is_err() || head != header {
            return Ok(None);
        }
        let mut s = Segment {
            file: OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| StoreError::io(&path, e))?,
            number,
            path,
            entries: Index::new(),
            offset: header.len() as u64,
            complete: false,
            dirty: false,
        };
        s.recover(existing)?;
        Ok(Some(s))
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
        let mut head = [0u8; RECORD_HEAD];
        let mut payload = Vec::new();
        while pos + 8 <= len {
            if input.read_exact(&mut head[..8]).is_err() {
                break;
            }
            if &head[..8] == END_MAGIC && pos + END_LEN <= len {
                let mut tail = [0u8; 16];
                if input.read_exact(&mut tail).is_err() {
                    break;
                }
                let n = self.entries.len();
                let want = end_record(n, self.entries.entries.iter().map(|e| &e.checksum));
                if want[8..] == tail[..] {
                    self.complete = true;
                    self.offset = pos + END_LEN;
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

    fn append(&mut self, key: u32, stored: &[u8], raw_len: usize) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        if self.complete {
            // Over the end record: a new one is written when the file is finished again.
            self.offset -= END_LEN;
            self.complete = false;
        }
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
        self.dirty = true;
        Ok(())
    }

    /// Writes the end record (durable at the next sync).
    fn end(&mut self) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        let end = end_record(
            self.entries.len(),
            self.entries.entries.iter().map(|e| &e.checksum),
        );
        self.file
            .write_all_at(&end, self.offset)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.offset += END_LEN;
        self.file
            .set_len(self.offset)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.complete = true;
        self.dirty = true;
        Ok(())
    }

    fn sync(&mut self) -> Result<(), StoreError> {
        if self.dirty {
            self.file
                .sync_data()
                .map_err(|e| StoreError::io(&self.path, e))?;
            self.dirty = false;
        }
        Ok(())
    }

    fn reader(&self) -> Result<ReaderSegment, StoreError> {
        Ok(ReaderSegment {
            number: self.number,
            path: self.path.clone(),
            file: self
                .file
                .try_clone()
                .map_err(|e| StoreError::io(&self.path, e))?,
            entries: self.entries.clone(),
            complete: self.complete,
        })
    }
}

impl Journal {
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
        let header = header(kind, stage_key, blob);
        let seg = match Segment::reopen(0, path.clone(), &header)? {
            Some(seg) => seg,
            None => {
                if path.is_dir() {
                    std::fs::remove_dir_all(&path).map_err(|e| StoreError::io(&path, e))?;
                }
                let mut seg = Segment::create(0, path.clone(), &header)?;
                seg.sync()?;
                seg
            }
        };
        Ok(Journal {
            path,
            kind: *kind,
            blob: blob.to_vec(),
            span: None,
            complete: seg.complete,
            segs: vec![seg],
            folder_dirty: false,
        })
    }

    /// Opens the segmented journal in the folder `path` for `stage_key`, `span` keys to a
    /// segment, recovering its whole records, or starts a new one (when absent, made under
    /// another key, kind or span, or unreadable). The records kept are those of the segments
    /// up to the first unfinished or damaged one (its whole records); later ones are removed.
    pub fn open_segmented(
        path: impl AsRef<Path>,
        kind: &[u8; 8],
        stage_key: u64,
        blob: &[u8],
        span: u32,
    ) -> Result<Journal, StoreError> {
        assert!(span > 0, "a segment spans at least one key");
        let path = path.as_ref().to_path_buf();
        let head = segmented_head(kind, stage_key, span, blob);
        let mut j = Journal {
            path: path.clone(),
            kind: *kind,
            blob: blob.to_vec(),
            span: Some(span),
            segs: Vec::new(),
            complete: false,
            folder_dirty: false,
        };
        if std::fs::read(path.join(HEAD_FILE)).ok().as_deref() == Some(&head[..]) {
            let mut numbers: Vec<u32> = std::fs::read_dir(&path)
                .map_err(|e| StoreError::io(&path, e))?
                .filter_map(|e| e.ok())
                .filter_map(|e| segment_number(&e.file_name().to_string_lossy()))
                .collect();
            numbers.sort_unstable();
            let mut ended = false;
            for n in numbers {
                let seg_path = segment_path(&path, n);
                if !ended {
                    let h = header(kind, u64::from(n), blob);
                    let range = u64::from(n) * u64::from(span)..u64::from(n + 1) * u64::from(span);
                    match Segment::reopen(n, seg_path.clone(), &h)? {
                        Some(seg)
                            if !seg.entries.entries.is_empty()
                                && seg.entries.in_order
                                && seg
                                    .entries
                                    .entries
                                    .iter()
                                    .all(|e| range.contains(&u64::from(e.key))) =>
                        {
                            ended = !seg.complete;
                            j.segs.push(seg);
                            continue;
                        }
                        _ => ended = true,
                    }
                }
                std::fs::remove_file(&seg_path).map_err(|e| StoreError::io(&seg_path, e))?;
            }
            let all: Vec<u64> = j.entries().map(|e| e.checksum).collect();
            let end = end_record(all.len(), all.iter());
            j.complete =
                !ended && std::fs::read(path.join(END_FILE)).ok().as_deref() == Some(&end[..]);
            if !j.complete {
                remove_if_there(&path.join(END_FILE))?;
            }
            return Ok(j);
        }
        // Start afresh.
        if path.is_dir() {
            std::fs::remove_dir_all(&path).map_err(|e| StoreError::io(&path, e))?;
        } else {
            remove_if_there(&path)?;
        }
        std::fs::create_dir_all(&path).map_err(|e| StoreError::io(&path, e))?;
        crate::write_atomic(path.join(HEAD_FILE), &head)?;
        Ok(j)
    }

    /// Every record's entry, in order.
    fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.segs.iter().flat_map(|s| s.entries.entries.iter())
    }

    fn segment(&self, key: u32) -> Option<&Segment> {
        segment_of(&self.segs, |s| s.number, self.span, key)
    }

    /// True when the journal was finished (it has its end record).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Drops every record after the first `n` (to line this journal up with another one).
    pub fn truncate(&mut self, n: usize) -> Result<(), StoreError> {
        let total: usize = self.segs.iter().map(|s| s.entries.len()).sum();
        if n >= total {
            return Ok(());
        }
        self.complete = false;
        if self.span.is_none() {
            let seg = &mut self.segs[0];
            seg.offset = seg.entries.entries[n].offset - RECORD_HEAD as u64;
            seg.entries.truncate(n);
            seg.complete = false;
            return seg
                .file
                .set_len(seg.offset)
                .map_err(|e| StoreError::io(&seg.path, e));
        }
        remove_if_there(&self.path.join(END_FILE))?;
        // The segments wholly kept, and how many records of the next one.
        let (mut whole, mut left) = (0, n);
        while left >= self.segs[whole].entries.len() {
            left -= self.segs[whole].entries.len();
            whole += 1;
        }
        for seg in self.segs.drain(whole + 1..) {
            std::fs::remove_file(&seg.path).map_err(|e| StoreError::io(&seg.path, e))?;
        }
        let seg = self.segs.pop().expect("the segment cut");
        std::fs::remove_file(&seg.path).map_err(|e| StoreError::io(&seg.path, e))?;
        if left > 0 {
            // Written anew rather than cut in place: a finished segment may be shared with
            // another journal (a hard link, see `adopt`).
            let h = header(&self.kind, u64::from(seg.number), &self.blob);
            let mut cut = Segment::create(seg.number, seg.path.clone(), &h)?;
            for e in &seg.entries.entries[..left] {
                let mut stored = Vec::new();
                crate::pack::read_checked(&seg.path, &seg.file, e, &mut stored)?;
                cut.append(e.key, &stored, e.raw_len as usize)?;
            }
            self.segs.push(cut);
        }
        self.folder_dirty = true;
        Ok(())
    }

    /// A reader of the records written so far, usable while this journal keeps appending.
    pub fn snapshot(&self) -> Result<JournalReader, StoreError> {
        Ok(JournalReader {
            kind: self.kind,
            blob: self.blob.clone(),
            span: self.span,
            segs: self
                .segs
                .iter()
                .map(Segment::reader)
                .collect::<Result<_, _>>()?,
        })
    }

    /// Keys of the whole records, in the order written.
    pub fn keys(&self) -> Vec<u32> {
        self.entries().map(|e| e.key).collect()
    }

    /// Whether a record of `key` is here.
    pub fn contains(&self, key: u32) -> bool {
        self.segment(key)
            .is_some_and(|s| !s.entries.records_of(key).is_empty())
    }

    /// Appends one record, stored by [`compress`](crate::compress) (or raw: `stored` is then
    /// the `raw_len` bytes themselves). A segmented journal takes keys in rising order of
    /// their segments: a key of a segment before the last one is an error.
    pub fn append_stored(
        &mut self,
        key: u32,
        stored: &[u8],
        raw_len: usize,
    ) -> Result<(), StoreError> {
        if let Some(span) = self.span {
            let n = key / span;
            let open = self
                .segs
                .last()
                .is_some_and(|s| s.number == n && !s.complete);
            if !open {
                if let Some(last) = self.segs.last_mut() {
                    if last.number >= n {
                        return Err(StoreError::Corrupt {
                            path: self.path.clone(),
                            what: format!("key {key} appended after segment {}", last.number),
                        });
                    }
                    if !last.complete {
                        last.end()?;
                    }
                }
                let h = header(&self.kind, u64::from(n), &self.blob);
                self.segs
                    .push(Segment::create(n, segment_path(&self.path, n), &h)?);
                self.folder_dirty = true;
            }
            if self.complete {
                remove_if_there(&self.path.join(END_FILE))?;
            }
        }
        self.complete = false;
        let seg = self.segs.last_mut().expect("a segment to append to");
        seg.append(key, stored, raw_len)
    }

    /// Takes over segment `number` of the segmented journal `from` (of the same kind, blob and
    /// span), when it is finished and holds the records of exactly `keys`: the file is linked
    /// into this journal's folder, unchanged (copied where the file system has no hard
    /// links). Returns false, with nothing changed, when it cannot (the segment is not there
    /// or holds other keys, or this journal already reached that segment): the caller then
    /// appends the records itself.
    pub fn adopt(
        &mut self,
        from: &JournalReader,
        number: u32,
        keys: &[u32],
    ) -> Result<bool, StoreError> {
        let Some(span) = self.span else {
            return Ok(false);
        };
        if from.span != Some(span) || from.kind != self.kind || from.blob != self.blob {
            return Ok(false);
        }
        let Some(src) = segment_of(&from.segs, |s| s.number, Some(span), number * span) else {
            return Ok(false);
        };
        if !src.complete
            || !src
                .entries
                .entries
                .iter()
                .map(|e| e.key)
                .eq(keys.iter().copied())
            || self.segs.last().is_some_and(|s| s.number >= number)
        {
            return Ok(false);
        }
        let dest = segment_path(&self.path, number);
        remove_if_there(&dest)?;
        // A file system without hard links: a copy (made durable with the next sync).
        let copied = std::fs::hard_link(&src.path, &dest).is_err();
        if copied {
            std::fs::copy(&src.path, &dest).map_err(|e| StoreError::io(&dest, e))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&dest)
            .map_err(|e| StoreError::io(&dest, e))?;
        let len = file.metadata().map_err(|e| StoreError::io(&dest, e))?.len();
        if let Some(last) = self.segs.last_mut() {
            if !last.complete {
                last.end()?;
            }
        }
        if self.complete {
            remove_if_there(&self.path.join(END_FILE))?;
            self.complete = false;
        }
        self.segs.push(Segment {
            number,
            path: dest,
            file,
            entries: src.entries.clone(),
            offset: len,
            complete: true,
            dirty: copied,
        });
        self.folder_dirty = true;
        Ok(true)
    }

    /// Makes what was appended durable (a resume point).
    pub fn sync(&mut self) -> Result<(), StoreError> {
        for seg in &mut self.segs {
            seg.sync()?;
        }
        if self.folder_dirty {
            sync_folder(&self.path);
            self.folder_dirty = false;
        }
        Ok(())
    }

    /// Writes the end record and syncs: the journal is complete.
    pub fn finish(&mut self) -> Result<(), StoreError> {
        if self.span.is_none() {
            let seg = &mut self.segs[0];
            seg.end()?;
            seg.sync()?;
            self.complete = true;
            return Ok(());
        }
        if let Some(last) = self.segs.last_mut() {
            if !last.complete {
                last.end()?;
            }
        }
        self.sync()?;
        let all: Vec<u64> = self.entries().map(|e| e.checksum).collect();
        crate::write_atomic(self.path.join(END_FILE), &end_record(all.len(), all.iter()))?;
        self.complete = true;
        Ok(())
    }

    /// Reads and decompresses the record(s) of `key`, checking their checksums.
    pub fn read(&self, key: u32) -> Result<Vec<u8>, StoreError> {
        match self.segment(key) {
            Some(s) => s.entries.read(&s.path, &s.file, key),
            None => Ok(Vec::new()),
        }
    }

    /// Uncompressed size of the record(s) of `key` (0: none).
    pub fn raw_len(&self, key: u32) -> u64 {
        self.segment(key).map_or(0, |s| s.entries.raw_len(key))
    }

    /// A digest of the record(s) of `key` from their checksums and lengths, known without
    /// reading them (0: none): records alike in it hold the same bytes, so what was made from
    /// one may be taken for the other.
    pub fn digest(&self, key: u32) -> u64 {
        let records = self.segment(key).map(|s| s.entries.records_of(key));
        let Some(records) = records.filter(|r| !r.is_empty()) else {
            return 0;
        };
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for e in records {
            h.update(&e.checksum.to_le_bytes());
            h.update(&e.stored_len.to_le_bytes());
            h.update(&e.raw_len.to_le_bytes());
        }
        h.digest()
    }

    /// Opens a complete journal (a file, or a segmented journal's folder) for reading; an
    /// incomplete one is an error.
    pub fn open_complete(path: impl AsRef<Path>, kind: &[u8; 8]) -> Result<Journal, StoreError> {
        let path = path.as_ref().to_path_buf();
        let found = read_journal_header(&path)?;
        if &found.kind != kind {
            return Err(StoreError::Corrupt {
                path: path.clone(),
                what: "not a journal of this kind".to_string(),
            });
        }
        let j = match found.span {
            None => Journal::open(&path, kind, found.stage_key, &found.blob)?,
            Some(span) => Journal::open_segmented(&path, kind, found.stage_key, &found.blob, span)?,
        };
        if !j.complete {
            return Err(StoreError::Corrupt {
                path: path.clone(),
                what: "incomplete (the bake that wrote it did not finish)".to_string(),
            });
        }
        Ok(j)
    }

    /// The header blob given when the journal was created.
    pub fn blob(path: impl AsRef<Path>) -> Result<Vec<u8>, StoreError> {
        read_journal_header(path.as_ref()).map(|h| h.blob)
    }

    /// The stage key the journal was created under.
    pub fn stage_key_of(path: impl AsRef<Path>) -> Result<u64, StoreError> {
        read_journal_header(path.as_ref()).map(|h| h.stage_key)
    }
}

/// What a journal's header says.
struct Head {
    kind: [u8; 8],
    stage_key: u64,
    /// Keys per segment, for a segmented journal.
    span: Option<u32>,
    blob: Vec<u8>,
}

/// A journal's kind, stage key, span and header blob, read from the front of the file (or a
/// segmented journal's head file) alone (a journal can be far larger than what a bake may
/// hold in memory).
fn read_journal_header(path: &Path) -> Result<Head, StoreError> {
    let segmented = path.is_dir();
    let file_path = if segmented {
        path.join(HEAD_FILE)
    } else {
        path.to_path_buf()
    };
    let corrupt = |what: &str| StoreError::Corrupt {
        path: file_path.clone(),
        what: what.to_string(),
    };
    let mut file = File::open(&file_path).map_err(|e| StoreError::io(&file_path, e))?;
    let len = file
        .metadata()
        .map_err(|e| StoreError::io(&file_path, e))?
        .len();
    let fixed = if segmented { 36 } else { 32 };
    let mut head = vec![0u8; fixed];
    if len < fixed as u64 + 8 {
        return Err(corrupt("truncated header"));
    }
    file.read_exact(&mut head)
        .map_err(|e| StoreError::io(&file_path, e))?;
    let magic = if segmented {
        SEGMENTED_MAGIC
    } else {
        JOURNAL_MAGIC
    };
    if &head[0..8] != magic {
        return Err(corrupt("not a journal of this kind"));
    }
    let kind: [u8; 8] = head[8..16].try_into().unwrap();
    let stage_key = u64::from_le_bytes(head[16..24].try_into().unwrap());
    let span = segmented.then(|| u32::from_le_bytes(head[24..28].try_into().unwrap()));
    let blob_len = u64::from_le_bytes(head[fixed - 8..fixed].try_into().unwrap());
    if fixed as u64 + blob_len + 8 > len {
        return Err(corrupt("truncated header"));
    }
    let mut blob = vec![0u8; blob_len as usize];
    file.read_exact(&mut blob)
        .map_err(|e| StoreError::io(&file_path, e))?;
    if segmented && span == Some(0) {
        return Err(corrupt("a segment span of 0"));
    }
    Ok(Head {
        kind,
        stage_key,
        span,
        blob,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compress;

    #[test]
    fn a_records_digest_follows_its_bytes_not_its_journal() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, records: &[(u32, Vec<u8>)]| {
            let mut j = Journal::open(dir.path().join(name), b"TESTKIND", 7, b"f").unwrap();
            for (k, raw) in records {
                j.append_stored(*k, &compress(raw), raw.len()).unwrap();
            }
            j.finish().unwrap();
            Journal::open_complete(dir.path().join(name), b"TESTKIND").unwrap()
        };
        let a = write(
            "a",
            &[(1, vec![5; 300]), (2, vec![6; 40]), (4, vec![7; 40])],
        );
        // Other records before it, under another stage key: the same bytes, the same digest.
        let mut j = Journal::open(dir.path().join("b"), b"TESTKIND", 9, b"g").unwrap();
        for (k, raw) in [(0u32, vec![1u8; 10]), (2, vec![6; 40]), (4, vec![7; 41])] {
            j.append_stored(k, &compress(&raw), raw.len()).unwrap();
        }
        j.finish().unwrap();
        let b = Journal::open_complete(dir.path().join("b"), b"TESTKIND").unwrap();
        assert_eq!(a.digest(2), b.digest(2));
        assert_ne!(a.digest(4), b.digest(4), "one byte more");
        assert_ne!(a.digest(1), a.digest(2));
        assert_eq!((a.digest(3), b.digest(1)), (0, 0), "no record");
        assert_ne!(a.digest(2), 0);
    }

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

    /// Every file under `dir`, by name, with its bytes.
    fn folder(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect();
        files.sort();
        files
    }

    fn record(k: u32) -> Vec<u8> {
        vec![(k % 251) as u8; 50 + (k as usize * 7) % 40]
    }

    fn write_all(j: &mut Journal, keys: &[u32]) {
        for &k in keys {
            let raw = record(k);
            j.append_stored(k, &compress(&raw), raw.len()).unwrap();
        }
    }

    #[test]
    fn a_segmented_journal_resumes_from_its_whole_records() {
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<u32> = (0..40).filter(|k| k % 3 != 1).collect();
        let whole = dir.path().join("whole");
        let mut j = Journal::open_segmented(&whole, b"TESTKIND", 7, b"grid", 8).unwrap();
        write_all(&mut j, &keys);
        j.finish().unwrap();
        let want = folder(&whole);
        // Segments 0..=4, each its own file, then the head and the end.
        assert_eq!(want.len(), 5 + 2);
        let j = Journal::open_complete(&whole, b"TESTKIND").unwrap();
        assert_eq!(j.keys(), keys);
        assert_eq!(j.read(20).unwrap(), record(20));
        assert!(j.read(22).unwrap().is_empty() && !j.contains(22) && j.contains(20));
        assert_eq!(Journal::stage_key_of(&whole).unwrap(), 7);
        assert_eq!(Journal::blob(&whole).unwrap(), b"grid");

        // Killed in the middle of segment 2: segments 0 and 1 and segment 2's whole records
        // are kept, later files removed; resuming gives the same folder.
        let cut = dir.path().join("cut");
        let mut j = Journal::open_segmented(&cut, b"TESTKIND", 7, b"grid", 8).unwrap();
        write_all(&mut j, &keys);
        j.sync().unwrap();
        drop(j);
        let seg2 = segment_path(&cut, 2);
        let bytes = std::fs::read(&seg2).unwrap();
        std::fs::write(&seg2, &bytes[..bytes.len() - 30]).unwrap();
        let mut j = Journal::open_segmented(&cut, b"TESTKIND", 7, b"grid", 8).unwrap();
        assert!(!j.is_complete());
        let kept = j.keys();
        assert!(kept.len() < keys.len() && kept[..] == keys[..kept.len()]);
        assert!(kept.iter().all(|&k| k < 24) && kept.contains(&17));
        assert!(!segment_path(&cut, 3).exists());
        write_all(&mut j, &keys[kept.len()..]);
        j.finish().unwrap();
        assert_eq!(folder(&cut), want);

        // Lined up with a shorter journal: cut to its first 9 records, then written again.
        let mut j = Journal::open_segmented(&cut, b"TESTKIND", 7, b"grid", 8).unwrap();
        assert!(j.is_complete());
        j.truncate(9).unwrap();
        assert_eq!(j.keys(), keys[..9]);
        assert!(!j.is_complete() && !cut.join(END_FILE).exists());
        write_all(&mut j, &keys[9..]);
        j.finish().unwrap();
        assert_eq!(folder(&cut), want);

        // A flipped byte in segment 1: the journal keeps segment 0 and is not complete.
        let seg1 = segment_path(&cut, 1);
        let mut bytes = std::fs::read(&seg1).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        std::fs::write(&seg1, &bytes).unwrap();
        assert!(Journal::open_complete(&cut, b"TESTKIND").is_err());
        let j = Journal::open_segmented(&cut, b"TESTKIND", 7, b"grid", 8).unwrap();
        assert!(j.keys().iter().all(|&k| k < 16));
        assert!(!segment_path(&cut, 4).exists());

        // Another stage key, or a span, starts afresh; so does a one-file journal there.
        let j = Journal::open_segmented(&whole, b"TESTKIND", 7, b"grid", 4).unwrap();
        assert!(j.keys().is_empty());
        let j = Journal::open_segmented(&whole, b"TESTKIND", 8, b"grid", 4).unwrap();
        assert!(j.keys().is_empty());
        let file = dir.path().join("file");
        Journal::open(&file, b"TESTKIND", 7, b"grid").unwrap();
        assert!(Journal::open_segmented(&file, b"TESTKIND", 7, b"grid", 8)
            .unwrap()
            .keys()
            .is_empty());
        assert!(file.is_dir());
        // Keys out of segment order are refused.
        let mut j = Journal::open_segmented(&file, b"TESTKIND", 7, b"grid", 8).unwrap();
        write_all(&mut j, &[9]);
        let raw = record(3);
        assert!(j.append_stored(3, &compress(&raw), raw.len()).is_err());
    }

    #[test]
    fn a_journal_adopts_the_finished_segments_of_another_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<u32> = (0..40).collect();
        let old = dir.path().join("old");
        let mut j = Journal::open_segmented(&old, b"TESTKIND", 1, b"grid", 8).unwrap();
        write_all(&mut j, &keys);
        j.finish().unwrap();
        let old_files = folder(&old);
        let from = Journal::open_complete(&old, b"TESTKIND")
            .unwrap()
            .snapshot()
            .unwrap();
        assert_eq!(from.segment_keys(2).unwrap(), (16..24).collect::<Vec<_>>());
        assert!(from.segment_keys(5).is_none());
        // The same records under a new stage key, written in one go.
        let fresh = dir.path().join("fresh");
        let mut j = Journal::open_segmented(&fresh, b"TESTKIND", 2, b"grid", 8).unwrap();
        write_all(&mut j, &keys);
        j.finish().unwrap();
        // Segments 1 and 3 adopted, the others written: the same folder.
        let new = dir.path().join("new");
        let mut j = Journal::open_segmented(&new, b"TESTKIND", 2, b"grid", 8).unwrap();
        for segment in 0..5u32 {
            let range: Vec<u32> = (segment * 8..segment * 8 + 8).collect();
            if segment % 2 == 1 {
                // Not with other keys, nor a kind of another journal.
                assert!(!j.adopt(&from, segment, &range[1..]).unwrap());
                assert!(j.adopt(&from, segment, &range).unwrap());
            } else {
                write_all(&mut j, &range);
            }
        }
        // Not behind the last segment.
        assert!(!j.adopt(&from, 2, &(16..24).collect::<Vec<_>>()).unwrap());
        j.finish().unwrap();
        assert_eq!(folder(&new), folder(&fresh));
        let j = Journal::open_complete(&new, b"TESTKIND").unwrap();
        assert_eq!(j.keys(), keys);
        assert_eq!(j.read(13).unwrap(), record(13));
        // Cutting into an adopted segment leaves the journal it came from as it was.
        let mut j = Journal::open_segmented(&new, b"TESTKIND", 2, b"grid", 8).unwrap();
        j.truncate(12).unwrap();
        write_all(&mut j, &[12]);
        j.finish().unwrap();
        assert_eq!(folder(&old), old_files);
        assert_eq!(
            Journal::open_complete(&new, b"TESTKIND").unwrap().keys(),
            (0..13).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_segment_is_copied_where_it_cannot_be_linked() {
        // Across file systems (memory-backed /dev/shm and the temporary folder's) a hard
        // link fails: the segment is copied, and the journal is the same.
        let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
            return; // no /dev/shm here: nothing to cross
        };
        let dir = tempfile::tempdir().unwrap();
        let probe = shm.path().join("probe");
        std::fs::write(&probe, b"x").unwrap();
        if std::fs::hard_link(&probe, dir.path().join("probe")).is_ok() {
            return; // one file system: the link test above covers it
        }
        let keys: Vec<u32> = (0..16).collect();
        let old = shm.path().join("old");
        let mut j = Journal::open_segmented(&old, b"TESTKIND", 1, b"grid", 8).unwrap();
        write_all(&mut j, &keys);
        j.finish().unwrap();
        let from = Journal::open_complete(&old, b"TESTKIND")
            .unwrap()
            .snapshot()
            .unwrap();
        let new = dir.path().join("new");
        let mut j = Journal::open_segmented(&new, b"TESTKIND", 2, b"grid", 8).unwrap();
        write_all(&mut j, &keys[..8]);
        assert!(j.adopt(&from, 1, &keys[8..]).unwrap());
        j.finish().unwrap();
        let fresh = dir.path().join("fresh");
        let mut j = Journal::open_segmented(&fresh, b"TESTKIND", 2, b"grid", 8).unwrap();
        write_all(&mut j, &keys);
        j.finish().unwrap();
        assert_eq!(folder(&new), folder(&fresh));
        assert_eq!(
            Journal::open_complete(&new, b"TESTKIND")
                .unwrap()
                .read(12)
                .unwrap(),
            record(12)
        );
    }

    #[test]
    fn records_appended_to_a_finished_journal_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut j = Journal::open(&path, b"TESTKIND", 7, b"frame").unwrap();
        write_all(&mut j, &[0, 1]);
        j.finish().unwrap();
        write_all(&mut j, &[2]);
        j.finish().unwrap();
        let j = Journal::open_complete(&path, b"TESTKIND").unwrap();
        assert_eq!(j.keys(), vec![0, 1, 2]);
    }
}
