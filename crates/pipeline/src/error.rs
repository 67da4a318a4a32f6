//! Why a bake failed: one variant per kind of failure, so that the binary can give each its
//! own exit code.

use std::path::PathBuf;
use tessera_budget::OverBudget;
use tessera_ingest::IngestError;
use tessera_polygons::PolygonError;
use tessera_store::StoreError;

/// Why a bake failed. The binary maps each kind to its own exit code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BakeError {
    /// The scene cannot be read, is malformed or is empty: bad input.
    #[error(transparent)]
    Input(#[from] IngestError),
    /// The scene voxelized into nothing an agent can walk on: bad input (or settings).
    #[error("{0}")]
    NoWalkable(String),
    /// The settings cannot be applied to this scene (an off-mesh link's end far from every
    /// walkable polygon): a config error, found during the bake.
    #[error("config: {0}")]
    Config(String),
    /// The world is too large for the grid or for the navmesh format at these settings (a
    /// stray triangle far away, or cells too fine for its size): refused, naming the limit,
    /// as soon as it is known. Bad input (or settings), not a bug.
    #[error("{0}")]
    TooLarge(String),
    /// The memory budget is too small for the bake's smallest unit of work.
    #[error("out of memory budget: {0}")]
    OverBudget(String),
    /// Reading or writing a file of the bake folder failed (a full disk, a missing folder).
    #[error(transparent)]
    Io(#[from] StoreError),
    /// The file system of the bake folder has less free space than the work files still to
    /// be written take at the least ([`crate::disk`]): refused before binning.
    #[error(
        "not enough free disk space for the work files in {}: {} free, they take at least {} \
         (about {} for this scene); free some space or bake into a folder on another disk",
        dir.display(),
        crate::disk::bytes(*free),
        crate::disk::bytes(*least),
        crate::disk::bytes(*typical)
    )]
    DiskSpace {
        dir: PathBuf,
        free: u64,
        least: u64,
        typical: u64,
    },
    /// The interrupt flag was raised; every checkpoint is intact.
    #[error("interrupted: checkpoints are intact; run the same command again to resume")]
    Interrupted,
    /// A file of the bake folder failed its checks (a checksum, a decoder, a validation):
    /// it was damaged after it was written.
    #[error("corrupt artifact {path}: {message}")]
    Corrupt { path: PathBuf, message: String },
    /// Polygonizing the merged regions read from `path` failed: an internal error (the
    /// regions passed their checks, so this is a bug, not bad input).
    #[error("polygonizing the regions of {path}: {source}")]
    Polygons {
        path: PathBuf,
        #[source]
        source: PolygonError,
    },
    /// Assembling the navmesh from the polygons failed (a polygon or link out of range): an
    /// internal error, like [`BakeError::Polygons`].
    #[error("assembling the navmesh: {0}")]
    Assembly(#[source] tessera_navgraph::BuildError),
    /// A distributed bake lost one of its processes, or one of them failed (the message says
    /// which); the checkpoints of process 0 are intact.
    #[error("{0}")]
    Cluster(String),
    /// The worker threads could not be started (the system refused them).
    #[error("cannot start {threads} worker threads: {source}")]
    ThreadPool {
        threads: usize,
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
}

impl BakeError {
    /// The file that failed its checks, when that is the failure.
    pub fn damaged_file(&self) -> Option<&std::path::Path> {
        match self {
            BakeError::Io(StoreError::Corrupt { path, .. })
            | BakeError::Corrupt { path, .. }
            | BakeError::Input(IngestError::Cache { path, .. }) => Some(path),
            _ => None,
        }
    }

    /// The number and message of a malformed line of an OBJ scene, when that is the failure
    /// (a process reading part of the file hands it to the one that reports it).
    pub fn malformed_line(&self) -> Option<(u64, String)> {
        match self {
            BakeError::Input(IngestError::Obj { line, message, .. }) => {
                Some((*line, message.clone()))
            }
            _ => None,
        }
    }
}

impl From<OverBudget> for BakeError {
    fn from(e: OverBudget) -> Self {
        BakeError::OverBudget(e.to_string())
    }
}

/// A rayon pool of `threads` workers named `name-N`.
pub(crate) fn thread_pool(threads: usize, name: &str) -> Result<rayon::ThreadPool, BakeError> {
    let threads = threads.max(1);
    let name = name.to_string();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .map_err(|source| BakeError::ThreadPool { threads, source })
}
