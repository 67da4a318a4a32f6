//! One bake across many processes (machines), over timely dataflow.
//!
//! Every process runs the same command on the same scene and bake folder (shared storage).
//! Process 0 ingests and bins as a bake of its own does; the others wait for it, open the tile
//! pack it wrote read-only, and voxelize (segment, trace) the tiles a cost-balanced table
//! gives them ([`plan::assign`]); each finished tile travels to process 0, whose writer puts it
//! into the checkpoints and the merge in tile order exactly as a local bake does, then runs the
//! polygon stage. So every file is the one a single process writes.
//!
//! * [`hosts`]: who the processes are (a hostfile, or Slurm's environment).
//! * [`connect`](connect::connect): the startup barrier, bounded by a timeout that names the
//!   processes that never answered.
//! * `net`: the only module that knows timely (pinned to one version in `Cargo.toml`).
//! * Memory: a process other than 0 sends at most [`CREDITS`] tiles ahead of process 0's
//!   writer (a credit comes back for each tile written), in tile order, so process 0 holds at
//!   most that many tiles per process beyond its own budget's work; each process's own work
//!   stays inside its memory budget.
//! * Faults: a lost process ends every other one with an error ([`EXIT_CLUSTER`]); process
//!   0's checkpoints are the only ones, so a rerun with any number of processes resumes.
//!
//! It does not parse command lines, take locks or install signal handlers (the binary does).

mod connect;
pub mod hosts;
mod net;
pub mod plan;

pub use connect::connect;
pub use hosts::Cluster;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use net::{Body, Link, Payload};
use tessera_pipeline::{BakeError, BakeRequest, BakeSummary, PeerRequest, TileShare};

/// Tiles a process other than 0 may send ahead of process 0's writer.
pub const CREDITS: u32 = 8;
/// Exit code of a distributed bake whose processes did not all answer at startup or were lost
/// during it (the binary's "internal error" code: the bake did not fail on its input).
pub const EXIT_CLUSTER: u8 = 7;
/// How long a process waits, once done, for timely to shut down cleanly.
const CLOSE_WAIT: Duration = Duration::from_secs(20);

/// Why a distributed bake failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// The cluster is described wrongly (a hostfile, Slurm's variables, an address).
    #[error("{0}")]
    Config(String),
    /// Some processes never answered within the startup timeout.
    #[error("{} never answered within the startup timeout of {seconds} s", missing.join(", "))]
    StartupTimeout { seconds: f64, missing: Vec<String> },
    /// A process was lost during the bake, or failed.
    #[error("{0}")]
    Lost(String),
    /// This process's own part of the bake failed.
    #[error(transparent)]
    Bake(#[from] BakeError),
}

/// What a process other than 0 did.
pub struct PeerReport {
    pub tiles: usize,
    /// Bytes of finished tiles sent to process 0.
    pub sent_bytes: u64,
}

/// Process 0's [`TileShare`]: the table, the tiles coming in, the credits going back.
struct Farm<'a> {
    link: &'a Link,
}

impl TileShare for Farm<'_> {
    fn assign(&self, tiles_key: u64, todo: &[(u32, u64)]) -> Result<Vec<u32>, BakeError> {
        let costs: Vec<u64> = todo.iter().map(|t| t.1).collect();
        let owners = plan::assign(&costs, self.link.processes as usize);
        for p in 1..self.link.processes {
            let tiles = todo
                .iter()
                .zip(&owners)
                .filter(|(_, &o)| o == p)
                .map(|(t, _)| t.0)
                .collect();
            self.link.send(
                p,
                Body::Plan {
                    tiles_key,
                    tiles,
                    credits: CREDITS,
                },
            );
        }
        Ok(owners)
    }

    fn receive(&self, wait: Duration) -> Result<Option<Vec<u8>>, BakeError> {
        match self.link.recv(wait) {
            Ok(Some(e)) => match e.body {
                Body::Tile { bytes, .. } => Ok(Some(bytes.0)),
                Body::Failed { message } => Err(BakeError::Cluster(format!(
                    "process {} failed: {message}",
                    e.from
                ))),
                _ => Ok(None),
            },
            Ok(None) => Ok(None),
            Err(e) => Err(BakeError::Cluster(e.to_string())),
        }
    }

    fn written(&self, _key: u32, owner: u32) {
        self.link.send(owner, Body::Credit);
    }
}

/// Process 0: connects to the others, runs the bake sharing its tiles, and tells them how it
/// ended. Returns the summary and the bytes of tiles received.
pub fn run_process0(
    cluster: &Cluster,
    startup_timeout: Duration,
    req: BakeRequest,
) -> Result<(BakeSummary, u64), ClusterError> {
    let interrupt = req
        .interrupt
        .clone()
        .unwrap_or_else(|| Arc::new(AtomicBool::new(false)));
    let sockets = connect(cluster, startup_timeout)?;
    let link = Link::start(cluster.index, &cluster.addresses, sockets, interrupt)?;
    let result = tessera_pipeline::bake_shared(req, &Farm { link: &link });
    let (ok, message) = match &result {
        Ok(_) => (true, String::new()),
        Err(e) => (false, e.to_string()),
    };
    for p in 1..link.processes {
        link.send(
            p,
            Body::End {
                ok,
                message: message.clone(),
            },
        );
    }
    let received = link
        .received_bytes
        .load(std::sync::atomic::Ordering::Relaxed);
    link.close(CLOSE_WAIT);
    match (result, net::lost()) {
        (Ok(summary), _) => Ok((summary, received)),
        // Stopped because a process was lost: say so rather than "interrupted".
        (Err(_), Some(why)) => Err(ClusterError::Lost(why)),
        (Err(e), None) => Err(e.into()),
    }
}

/// A process other than 0: connects, waits for process 0's table, voxelizes its tiles and
/// sends them, then waits for process 0 to end the bake. `req.tiles` and `req.tiles_key` are
/// filled in from the table.
pub fn run_peer(
    cluster: &Cluster,
    startup_timeout: Duration,
    mut req: PeerRequest,
) -> Result<PeerReport, ClusterError> {
    let interrupt = req
        .interrupt
        .clone()
        .unwrap_or_else(|| Arc::new(AtomicBool::new(false)));
    let sockets = connect(cluster, startup_timeout)?;
    let link = Link::start(
        cluster.index,
        &cluster.addresses,
        sockets,
        Arc::clone(&interrupt),
    )?;
    let result = peer_work(&link, &interrupt, &mut req);
    if let Err(e) = &result {
        link.send(
            0,
            Body::Failed {
                message: e.to_string(),
            },
        );
    }
    link.close(CLOSE_WAIT);
    result.map_err(|e| match net::lost() {
        Some(why) => ClusterError::Lost(why),
        None => e,
    })
}

fn peer_work(
    link: &Link,
    interrupt: &AtomicBool,
    req: &mut PeerRequest,
) -> Result<PeerReport, ClusterError> {
    let wait = Duration::from_millis(100);
    let ended = |ok: bool, message: String| {
        if ok {
            Ok(())
        } else {
            Err(ClusterError::Lost(format!("process 0 failed: {message}")))
        }
    };
    // The barrier: process 0 ingests and bins first.
    let mut credits = loop {
        if interrupt.load(Ordering::Relaxed) {
            return Err(BakeError::Interrupted.into());
        }
        match link.recv(wait)?.map(|e| e.body) {
            Some(Body::Plan {
                tiles_key,
                tiles,
                credits,
            }) => {
                req.tiles_key = tiles_key;
                req.tiles = tiles;
                break credits;
            }
            Some(Body::End { ok, message }) => {
                ended(ok, message)?;
                return Ok(PeerReport {
                    tiles: 0,
                    sent_bytes: 0,
                });
            }
            _ => {}
        }
    };
    let tiles = req.tiles.len();
    let mut end = None;
    let request = PeerRequest {
        config: req.config.clone(),
        out_dir: req.out_dir.clone(),
        threads: req.threads,
        memory_budget: req.memory_budget,
        progress: req.progress.clone(),
        interrupt: req.interrupt.clone(),
        tiles_key: req.tiles_key,
        tiles: std::mem::take(&mut req.tiles),
    };
    let sent_bytes = tessera_pipeline::voxelize_for_peer(request, &mut |key, bytes| {
        while credits == 0 {
            match link.recv(wait) {
                Ok(Some(e)) => match e.body {
                    Body::Credit => credits += 1,
                    Body::End { ok, message } => {
                        end = Some((ok, message.clone()));
                        return Err(BakeError::Cluster(format!(
                            "process 0 ended the bake early: {message}"
                        )));
                    }
                    _ => {}
                },
                Ok(None) => {}
                Err(e) => return Err(BakeError::Cluster(e.to_string())),
            }
        }
        credits -= 1;
        link.send(
            0,
            Body::Tile {
                key,
                bytes: Payload(bytes),
            },
        );
        Ok(())
    });
    if let Some((ok, message)) = end {
        ended(ok, message)?;
    }
    let sent_bytes = sent_bytes?;
    // Done here; the bake is over when process 0 says so.
    loop {
        match link.recv(wait)?.map(|e| e.body) {
            Some(Body::End { ok, message }) => {
                ended(ok, message)?;
                return Ok(PeerReport { tiles, sent_bytes });
            }
            _ => continue,
        }
    }
}
