//! Files that appear whole or not at all: written beside their destination, fsynced, renamed.
//!
//! While a large file to be committed durably is written, the kernel is asked every
//! [`WRITEBACK_EVERY`] bytes to start writing them to disk (Linux: `sync_file_range`), so that the fsync of the commit waits for
//! the last few MiB rather than for the whole file (a 32 MB navmesh: 17-22 ms of waiting
//! before, 2-3 ms after, on a virtual disk).

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use crate::StoreError;

/// A file being written that appears at its path only when [`AtomicFile::commit`] succeeds.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    writer: BufWriter<File>,
    /// Where the writer is, and up to where the kernel was asked to write back (`None`: it
    /// is not asked, the file being for [`AtomicFile::commit_unsynced`]).
    at: u64,
    written_back: Option<u64>,
}

/// Bytes written between two requests that the kernel start writing them back.
pub const WRITEBACK_EVERY: u64 = 4 << 20;

impl AtomicFile {
    /// A file for [`AtomicFile::commit`]: written back to disk as it is written.
    pub fn create(path: impl AsRef<Path>) -> Result<AtomicFile, StoreError> {
        Self::create_with(path.as_ref(), Some(0))
    }

    /// A file for [`AtomicFile::commit_unsynced`]: left to the kernel's own pace of writing
    /// back, as nothing waits for the disk.
    pub fn create_unsynced(path: impl AsRef<Path>) -> Result<AtomicFile, StoreError> {
        Self::create_with(path.as_ref(), None)
    }

    fn create_with(path: &Path, written_back: Option<u64>) -> Result<AtomicFile, StoreError> {
        let path = path.to_path_buf();
        let tmp = temp_path(&path);
        let file = File::create(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
        Ok(AtomicFile {
            path,
            tmp,
            writer: BufWriter::with_capacity(1 << 16, file),
            at: 0,
            written_back,
        })
    }

    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        Write::write_all(self, bytes).map_err(|e| StoreError::io(&self.tmp, e))
    }

    /// Where the next byte goes (bytes written so far, unless the writer sought back).
    pub fn position(&mut self) -> Result<u64, StoreError> {
        Ok(self.at)
    }

    /// Flushes, fsyncs and renames the file into place, then fsyncs the folder.
    pub fn commit(self) -> Result<(), StoreError> {
        self.finish(true)
    }

    /// Flushes and renames the file into place without waiting for the disk: for files that
    /// every reader verifies by checksum before trusting them (the scene cache, the tile pack),
    /// where a file that a power cut left incomplete is detected and made again. A kill of the
    /// process loses nothing either way (the data is in the page cache); the rename still
    /// makes the file appear whole or not at all to other processes.
    pub fn commit_unsynced(self) -> Result<(), StoreError> {
        self.finish(false)
    }

    fn finish(mut self, durable: bool) -> Result<(), StoreError> {
        self.writer
            .flush()
            .map_err(|e| StoreError::io(&self.tmp, e))?;
        if durable {
            self.writer
                .get_ref()
                .sync_all()
                .map_err(|e| StoreError::io(&self.tmp, e))?;
        }
        std::fs::rename(&self.tmp, &self.path).map_err(|e| StoreError::io(&self.path, e))?;
        if durable {
            sync_parent(&self.path);
        }
        // Nothing left to clean up in Drop.
        self.tmp = PathBuf::new();
        Ok(())
    }
}

/// The temporary name of a file on its way to `path`: `.NAME.PID.tmp` beside it.
/// Removes the file at `path`; its absence is no error.
pub fn remove_if_there(path: &Path) -> Result<(), StoreError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(StoreError::io(path, e)),
        _ => Ok(()),
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Makes a rename into `path`'s folder durable; not every file system allows opening a folder.
fn sync_parent(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

/// Makes `to` the same file as the finished file `from` (in the same folder or file system),
/// atomically: a hard link under a temporary name renamed into place, or where the file system
/// has no hard links a copy, fsynced first.
pub fn link_atomic(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<(), StoreError> {
    let (from, to) = (from.as_ref(), to.as_ref());
    let tmp = temp_path(to);
    let _ = std::fs::remove_file(&tmp);
    if std::fs::hard_link(from, &tmp).is_err() {
        std::fs::copy(from, &tmp).map_err(|e| StoreError::io(&tmp, e))?;
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| StoreError::io(&tmp, e))?;
    }
    let renamed = std::fs::rename(&tmp, to);
    // A rename onto a link of the same file does nothing and leaves the temporary name.
    let _ = std::fs::remove_file(&tmp);
    renamed.map_err(|e| StoreError::io(to, e))?;
    sync_parent(to);
    Ok(())
}

/// Asks the kernel to start writing `len` bytes of `file` from `offset` to disk, without
/// waiting for them (advisory: a failure changes nothing but the time a later fsync takes).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // sync_file_range on a file of ours: see the SAFETY comment inside
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: a system call on a descriptor this `File` keeps open, with plain integers; it
    // reads and writes no memory of this process.
    let _ = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File, _: u64, _: u64) {}

/// Writes go to the temporary file; seeking lets a writer fill in a header last.
impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.writer.write(buf)?;
        self.at += n as u64;
        if let Some(from) = self
            .written_back
            .filter(|&b| self.at >= b + WRITEBACK_EVERY)
        {
            self.writer.flush()?;
            start_writeback(self.writer.get_ref(), from, self.at - from);
            self.written_back = Some(self.at);
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.at = self.writer.seek(pos)?;
        Ok(self.at)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Removes from `dir` the temporary files that [`AtomicFile`]s of processes no longer running
/// left behind (`.NAME.PID.tmp`: a process killed before it committed or dropped its file).
/// A temporary file of a live process is left alone, so that a bake never deletes the file
/// another process is writing. Returns how many were removed. Off Linux (no `/proc`), nothing
/// is removed.
pub fn remove_stale_temp_files(dir: &Path) -> Result<usize, StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = temp_file_owner(&name) else {
            continue;
        };
        if Path::new("/proc").is_dir() && !Path::new(&format!("/proc/{pid}")).exists() {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// The process id in an [`AtomicFile`]'s temporary name `.NAME.PID.tmp`, if `name` is one.
fn temp_file_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, pid) = rest.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    pid.parse().ok()
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), StoreError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_large_file_with_its_header_filled_in_last_is_written_whole() {
        // Past several write-back points, then back to the front and on at the end again, as
        // the navmesh writer does; both kinds of file.
        let dir = tempfile::tempdir().unwrap();
        let body: Vec<u8> = (0..(2 * WRITEBACK_EVERY + 12_345) as u32)
            .map(|i| (i % 251) as u8)
            .collect();
        for durable in [true, false] {
            let path = dir.path().join(format!("big-{durable}"));
            let mut f = match durable {
                true => AtomicFile::create(&path),
                false => AtomicFile::create_unsynced(&path),
            }
            .unwrap();
            f.write_all(&[0; 8]).unwrap();
            for chunk in body.chunks(70_000) {
                Write::write_all(&mut f, chunk).unwrap();
            }
            assert_eq!(f.seek(io::SeekFrom::Start(0)).unwrap(), 0);
            f.write_all(b"HEADER!!").unwrap();
            let end = f.seek(io::SeekFrom::End(0)).unwrap();
            assert_eq!(end, 8 + body.len() as u64);
            f.write_all(b"tail").unwrap();
            match durable {
                true => f.commit().unwrap(),
                false => f.commit_unsynced().unwrap(),
            }
            let got = std::fs::read(&path).unwrap();
            assert_eq!(&got[..8], b"HEADER!!");
            assert!(got[8..8 + body.len()] == body[..]);
            assert_eq!(&got[8 + body.len()..], b"tail");
        }
    }

    #[test]
    fn temp_files_of_dead_processes_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        // A process id that cannot be running (above Linux's pid_max limit of 2^22).
        let dead = dir.path().join(".navmesh.tsn.4999999.tmp");
        let live = dir
            .path()
            .join(format!(".summary.json.{}.tmp", std::process::id()));
        let other = dir.path().join(".hidden.tmp");
        for p in [&dead, &live, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        assert_eq!(remove_stale_temp_files(dir.path()).unwrap(), 1);
        assert!(!dead.exists() && live.exists() && other.exists());
        assert_eq!(
            remove_stale_temp_files(&dir.path().join("missing")).unwrap(),
            0
        );
    }

    #[test]
    fn a_link_replaces_the_file_and_outlives_the_next_write_of_its_source() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("a.tsn"), dir.path().join("b.tsn"));
        write_atomic(&from, b"first").unwrap();
        write_atomic(&to, b"old").unwrap();
        link_atomic(&from, &to).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"first");
        // The source written again (a new file renamed over it): the link keeps the last.
        write_atomic(&from, b"second").unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"first");
        link_atomic(&from, &to).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        // Linked again while already the same file: nothing left behind.
        link_atomic(&from, &to).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        assert!(link_atomic(dir.path().join("missing"), &to).is_err());
        assert_eq!(std::fs::read(&to).unwrap(), b"second");
    }
}
