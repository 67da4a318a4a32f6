//! Files that appear whole or not at all: written beside their destination, fsynced, renamed.

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use crate::StoreError;

/// A file being written that appears at its path only when [`AtomicFile::commit`] succeeds.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    writer: BufWriter<File>,
}

impl AtomicFile {
    pub fn create(path: impl AsRef<Path>) -> Result<AtomicFile, StoreError> {
        let path = path.as_ref().to_path_buf();
        let tmp = temp_path(&path);
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
