//! One bake at a time in a bake folder: an exclusive lock on `DIR/.tessera.lock` for as long
//! as a bake (or `clean`) works in it. Two bakes sharing a folder would otherwise read each
//! other's half-written checkpoints and fail with misleading "corrupt" messages.
//!
//! The lock is the kernel's (`flock` through `File::try_lock`), so it is released however the
//! holder ends, SIGKILL included; the file itself stays, holding the host and pid of the last
//! holder for the message a second bake prints.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use crate::exit::{self, Failure};

/// The lock file's name inside a bake folder.
pub const LOCK_NAME: &str = ".tessera.lock";

/// Held for the life of the value.
pub struct FolderLock {
    _file: File,
}

/// Takes the lock on bake folder `dir` (created if missing). When another process holds it:
/// with `wait`, says so on stderr and waits for it; otherwise fails (exit 75, "try again
/// later") naming the holder.
pub fn lock(dir: &Path, wait: bool) -> Result<FolderLock, Failure> {
    lock_file(dir, LOCK_NAME, wait)
}

/// The lock of process `index` (not 0) of a distributed bake in `dir`: its own file, so that
/// it never contends with process 0's [`lock`], which is the bake folder's. A second job
/// started with the same processes is refused at each of them.
pub fn lock_process(dir: &Path, index: usize, wait: bool) -> Result<FolderLock, Failure> {
    lock_file(dir, &format!("{LOCK_NAME}.process-{index}"), wait)
}

fn lock_file(dir: &Path, name: &str, wait: bool) -> Result<FolderLock, Failure> {
    let path = dir.join(name);
    let io = |e: std::io::Error| Failure::new(exit::IO, anyhow::anyhow!("{}: {e}", path.display()));
    // The folder first, named as the folder: its lock file is not what failed.
    let folder = |why: String| {
        Failure::new(
            exit::IO,
            anyhow::anyhow!("cannot create the output folder {}: {why}", dir.display()),
        )
    };
    if dir.exists() && !dir.is_dir() {
        return Err(folder("a file of that name is in the way".to_string()));
    }
    std::fs::create_dir_all(dir).map_err(|e| folder(e.to_string()))?;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let holder = holder(&mut file);
            if !wait {
                return Err(Failure::new(
                    exit::BUSY,
                    anyhow::anyhow!(
                        "{} is in use by another bake ({holder}); wait for it, or pass \
                         --wait-lock to wait",
                        dir.display()
                    ),
                ));
            }
            eprintln!(
                "waiting for the other bake in {} ({holder}) to finish",
                dir.display()
            );
            file.lock().map_err(io)?;
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    // Ours now: say who holds it.
    let me = format!("host {} pid {}\n", host_name(), std::process::id());
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    file.write_all(me.as_bytes()).map_err(io)?;
    Ok(FolderLock { _file: file })
}

/// The holder as its lock file names it.
fn holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.rewind().and_then(|_| file.read_to_string(&mut text));
    let text = text.trim();
    if text.is_empty() {
        "holder unknown".to_string()
    } else {
        text.to_string()
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".to_string())
}
