//! The one error type of the store: which file, and what went wrong with it.

use std::io;
use std::path::{Path, PathBuf};

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
