//! One bake across many processes (machines), over timely dataflow.
//!
//! Every process runs the same command on the same scene and bake folder (shared storage).
//! Process 0 leads each stage and the others take a share of it:
//!
//! * Ingest: a scene of several files is read file by file (each process its share, by
//!   size); a scene of one OBJ file is read in parts: process 0 runs the vertex pass and
//!   shares its tables, each process parses a run of the face windows into a part of the
//!   scene cache (`Body::IngestPart`, `Body::PartRead`), and process 0 joins the parts into
//!   the one cache a single process writes (same trailer, same checksum). A glTF file is read
//!   by process 0 alone.
//! * Binning: every process bins a run of the scene's triangles into a pack of its own.
//! * Voxelize: each process voxelizes (segments, traces) the tiles a cost-balanced table gives
//!   it ([`plan::assign`]); each finished tile travels to process 0, whose writer puts it
//!   into the checkpoints and the merge in tile order exactly as a local bake does.
//! * Merge: a local union-find per process, then one global merge, as timely's union-find
//!   example does. Each process merges the border links between its own tiles
//!   (`tessera_stitch::LocalMatcher`) and sends, with each tile, what they change there: the
//!   waits they start (counted per region), the unions that join two of its components, and
//!   the waits closed within a component (counted). Process 0's union-find keys only the
//!   links between tiles of different processes and makes only those unions and the
//!   processes' joining ones. How many links a process merges depends on the table, which
//!   spreads tiles along the tile order (so that process 0's writer never waits long):
//!   neighbours often belong to different processes.
//! * Polygons: each process polygonizes a run of regions; process 0 assembles the navmesh.
//! * Agents: a bake for several (`[[agents]]`) runs voxelize and polygons for each agent in
//!   turn, every process taking its share of each (`Body::Plan` and `Body::Regions` name the
//!   agent). The first agent's tiles travel with what they rasterized for the group, which
//!   process 0 keeps in `work/raster-G.pack`; every process voxelizes the next agents' tiles
//!   from those records, as one process does.
//!
//! So every file is the one a single process writes.
//!
//! * [`hosts`]: who the processes are (a hostfile, or Slurm's environment).
//! * [`connect`](connect::connect): the startup barrier, bounded by a timeout that names the
//!   processes that never answered.
//! * `net`: the only module that knows timely (pinned to one version in `Cargo.toml`).
//! * Memory: a process other than 0 sends at most [`CREDITS`] tiles ahead of process 0's
//!   writer (a credit comes back for each tile written), in tile order, so process 0 holds at
//!   most that many tiles per process beyond its own budget's work; each process's own work
//!   stays inside its memory budget.
//! * Faults: a lost process ends every other one with an error ([`EXIT_CLUSTER`]); a process
//!   whose part panics (a bug) tells the others and ends likewise
//!   ([`ClusterError::Panicked`]) rather than unwinding through its connections; process 0's
//!   checkpoints are the only ones, so a rerun with any number of processes resumes.
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

use net::{decode_asked, encode_asked, Body, Envelope, Link, Payload};
use tessera_pipeline::{
    merge_asked, Asked, BakeError, BakeRequest, BakeSummary, BinAssignment, BinShare, IngestShare,
    PartWritten, PeerRequest, RegionAssignment, RegionPart, RegionShare, SourceKey,
    SplitAssignment, TileShare,
};

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
    /// A process of the job was started from another tessera build.
    #[error("{0}")]
    OtherBuild(String),
    /// Some processes never answered within the startup timeout.
    #[error("{} never answered within the startup timeout of {seconds} s", missing.join(", "))]
    StartupTimeout { seconds: f64, missing: Vec<String> },
    /// A process was lost during the bake, or failed.
    #[error("{0}")]
    Lost(String),
    /// This process's own part of the bake failed.
    #[error(transparent)]
    Bake(#[from] BakeError),
    /// This process's part of the bake panicked (a bug): the others were told and it ended
    /// rather than waiting on them.
    #[error("internal error (a bug, please report it): the bake panicked: {0}")]
    Panicked(String),
}

/// Runs `work`, a panic in it turned into [`ClusterError::Panicked`]: a process must tell the
/// others it failed and close its connections, where unwinding through them would leave it
/// waiting on peers that wait on it.
fn guarded<T>(work: impl FnOnce() -> Result<T, ClusterError>) -> Result<T, ClusterError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|panic| {
        let what = tessera_geom::panic_message(&*panic).unwrap_or_else(|| "(no message)".into());
        Err(ClusterError::Panicked(what))
    })
}

/// What a process other than 0 did.
pub struct PeerReport {
    /// Scene files read (its share of a scene of several files).
    pub files: usize,
    /// Triangles read of a one-file OBJ scene (its part of the file's faces).
    pub triangles: u64,
    pub tiles: usize,
    /// Regions polygonized (its share of the polygon stage).
    pub regions: u64,
    /// Of them, regions taken from the last bake's polygons (their input unchanged).
    pub regions_reused: u64,
    /// Bytes of finished tiles sent to process 0.
    pub sent_bytes: u64,
    /// Border links between two of its tiles, matched here rather than in process 0's merge
    /// (each counted at both its tiles).
    pub matched_links: u64,
    /// Of them, links that joined two of its components: the only unions of its links that
    /// process 0's merge makes.
    pub unions: u64,
}

/// Messages taken out of order: a process waiting for one kind of message keeps the others
/// (a round's asks may come before the regions they follow, another round's before this
/// one's) until it waits for them.
struct Mailbox<'a> {
    link: &'a Link,
    kept: std::sync::Mutex<Vec<Envelope>>,
    interrupt: Arc<AtomicBool>,
}

impl<'a> Mailbox<'a> {
    fn new(link: &'a Link, interrupt: Arc<AtomicBool>) -> Mailbox<'a> {
        Mailbox {
            link,
            kept: std::sync::Mutex::new(Vec::new()),
            interrupt,
        }
    }

    /// The first message, kept or arriving, that `want` takes (others are kept). A process
    /// that failed, a bake that process 0 ended, an interrupt or a lost link end the wait.
    fn take<T>(&self, mut want: impl FnMut(&Envelope) -> Option<T>) -> Result<T, BakeError> {
        let wait = Duration::from_millis(100);
        {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = kept.iter().position(|e| want(e).is_some()) {
                let e = kept.remove(i);
                return Ok(want(&e).expect("taken once, taken again"));
            }
        }
        loop {
            if self.interrupt.load(Ordering::Relaxed) {
                return Err(BakeError::Interrupted);
            }
            let Some(e) = self
                .link
                .recv(wait)
                .map_err(|e| BakeError::Cluster(e.to_string()))?
            else {
                continue;
            };
            if let Some(t) = want(&e) {
                return Ok(t);
            }
            match &e.body {
                Body::Failed { message } => {
                    return Err(BakeError::Cluster(format!(
                        "process {} failed: {message}",
                        e.from
                    )))
                }
                Body::End { ok, message } => {
                    return Err(BakeError::Cluster(if *ok {
                        "process 0 ended the bake early".to_string()
                    } else {
                        format!("process 0 failed: {message}")
                    }))
                }
                _ => self.kept.lock().unwrap_or_else(|p| p.into_inner()).push(e),
            }
        }
    }

    /// Sends this process's asks of `round` to every other process and gathers theirs.
    fn share_asked(&self, round: u32, asked: Asked) -> Result<Asked, BakeError> {
        let points = encode_asked(&asked);
        for p in (0..self.link.processes).filter(|&p| p != self.link.index) {
            self.link.send(
                p,
                Body::Asked {
                    round,
                    points: points.clone(),
                },
            );
        }
        let mut all = vec![asked];
        for _ in 1..self.link.processes {
            let (from, theirs) = self.take(|e| match &e.body {
                Body::Asked { round: r, points } if *r == round => {
                    Some((e.from, decode_asked(points)))
                }
                _ => None,
            })?;
            all.push(theirs.ok_or_else(|| {
                BakeError::Cluster(format!("process {from} sent asks that do not decode"))
            })?);
        }
        Ok(merge_asked(all))
    }
}

/// Process 0's [`TileShare`] and [`RegionShare`]: the table, the tiles coming in, the credits
/// going back; the regions given out, the rounds' asks, the parts written.
struct Farm<'a> {
    link: &'a Link,
    mail: Mailbox<'a>,
}

impl IngestShare for Farm<'_> {
    fn ingest_processes(&self) -> u32 {
        self.link.processes
    }

    fn assign_files(
        &self,
        files: &[Vec<std::path::PathBuf>],
        up: tessera_geom::UpAxis,
    ) -> Result<(), BakeError> {
        for (p, mine) in files.iter().enumerate().skip(1) {
            if !mine.is_empty() {
                self.link.send(
                    p as u32,
                    Body::Ingest {
                        files: mine.iter().map(|f| f.display().to_string()).collect(),
                        up: up.code(),
                    },
                );
            }
        }
        Ok(())
    }

    fn wait_files(&self, p: u32) -> Result<Vec<bool>, BakeError> {
        self.mail.take(|e| match &e.body {
            Body::Ingested { reused } if e.from == p => Some(reused.clone()),
            _ => None,
        })
    }

    fn assign_split(
        &self,
        path: &std::path::Path,
        key: &SourceKey,
        parts: &[std::ops::Range<usize>],
    ) -> Result<(), BakeError> {
        for (p, windows) in parts.iter().enumerate().skip(1) {
            self.link.send(
                p as u32,
                Body::IngestPart {
                    path: path.display().to_string(),
                    up: key.up.code(),
                    key: (key.size, key.mtime_ns, key.content_hash, key.areas),
                    windows: (windows.start as u64, windows.end as u64),
                    parts: parts.len() as u32,
                },
            );
        }
        Ok(())
    }

    fn wait_split(&self, p: u32) -> Result<Result<u64, (u64, String)>, BakeError> {
        self.mail.take(|e| match &e.body {
            Body::PartRead { triangles, error } if e.from == p => Some(match error {
                None => Ok(*triangles),
                Some(bad) => Err(bad.clone()),
            }),
            _ => None,
        })
    }
}

impl BinShare for Farm<'_> {
    fn assign_bins(&self, key: u64, caches: &[std::path::PathBuf]) -> Result<(), BakeError> {
        let caches: Vec<String> = caches.iter().map(|p| p.display().to_string()).collect();
        for p in 1..self.link.processes {
            self.link.send(
                p,
                Body::Bin {
                    key,
                    caches: caches.clone(),
                },
            );
        }
        Ok(())
    }

    fn wait_bins(&self, p: u32) -> Result<u64, BakeError> {
        self.mail.take(|e| match e.body {
            Body::Binned { placements } if e.from == p => Some(placements),
            _ => None,
        })
    }
}

impl RegionShare for Farm<'_> {
    fn processes(&self) -> u32 {
        self.link.processes
    }

    fn assign_regions(
        &self,
        agent: u32,
        regions_key: u64,
        parts: &[RegionPart],
    ) -> Result<(), BakeError> {
        let id = |k: tessera_artifacts::SpanKey| (k.y, k.x, k.zmax);
        for (p, part) in parts.iter().enumerate().skip(1) {
            self.link.send(
                p as u32,
                Body::Regions {
                    agent,
                    regions_key,
                    first: part.first.map(id),
                    end: part.end.map(id),
                    empty: part.empty,
                },
            );
        }
        Ok(())
    }

    fn share_asked(&self, round: u32, asked: Asked) -> Result<Asked, BakeError> {
        self.mail.share_asked(round, asked)
    }

    fn wait_part(&self, p: u32) -> Result<PartWritten, BakeError> {
        self.mail.take(|e| match e.body {
            Body::PartWritten { regions, reused } if e.from == p => {
                Some(PartWritten { regions, reused })
            }
            _ => None,
        })
    }
}

impl TileShare for Farm<'_> {
    fn assign(
        &self,
        agent: u32,
        tiles_key: u64,
        todo: &[(u32, u64)],
    ) -> Result<Vec<u32>, BakeError> {
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
                    agent,
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

/// Connects to every other process (the startup barrier) and starts the link, whose loss
/// raises the bake's interrupt flag (a new one when the bake has none).
fn start(
    cluster: &Cluster,
    startup_timeout: Duration,
    interrupt: Option<&Arc<AtomicBool>>,
) -> Result<(Link, Arc<AtomicBool>), ClusterError> {
    let interrupt = interrupt
        .cloned()
        .unwrap_or_else(|| Arc::new(AtomicBool::new(false)));
    let sockets = connect(cluster, startup_timeout)?;
    let link = Link::start(
        cluster.index,
        &cluster.addresses,
        sockets,
        Arc::clone(&interrupt),
    )?;
    Ok((link, interrupt))
}

/// Process 0: connects to the others, runs the bake sharing its tiles, and tells them how it
/// ended. Returns the summary and the bytes of tiles received.
pub fn run_process0(
    cluster: &Cluster,
    startup_timeout: Duration,
    req: BakeRequest,
) -> Result<(BakeSummary, u64), ClusterError> {
    let (link, interrupt) = start(cluster, startup_timeout, req.interrupt.as_ref())?;
    let farm = Farm {
        link: &link,
        mail: Mailbox::new(&link, interrupt),
    };
    let result = guarded(|| Ok(tessera_pipeline::bake_shared(req, &farm)?));
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
        (Err(e @ ClusterError::Panicked(_)), _) => Err(e),
        // Stopped because a process was lost: say so rather than "interrupted".
        (Err(_), Some(why)) => Err(ClusterError::Lost(why)),
        (Err(e), None) => Err(e),
    }
}

/// A process other than 0: connects, then takes process 0's tasks until it ends the bake
/// (its share of reading and binning the scene, then for each agent a share of its tiles,
/// voxelized and sent, and of its regions). `req.tiles`, `req.tiles_key` and `req.agent` are
/// filled in from process 0's tables.
pub fn run_peer(
    cluster: &Cluster,
    startup_timeout: Duration,
    mut req: PeerRequest,
) -> Result<PeerReport, ClusterError> {
    let (link, interrupt) = start(cluster, startup_timeout, req.interrupt.as_ref())?;
    let result = guarded(|| peer_work(&link, &interrupt, &mut req));
    if let Err(e) = &result {
        link.send(
            0,
            Body::Failed {
                message: e.to_string(),
            },
        );
    }
    link.close(CLOSE_WAIT);
    result.map_err(|e| match (e, net::lost()) {
        (e @ ClusterError::Panicked(_), _) => e,
        (_, Some(why)) => ClusterError::Lost(why),
        (e, None) => e,
    })
}

fn peer_work(
    link: &Link,
    interrupt: &Arc<AtomicBool>,
    req: &mut PeerRequest,
) -> Result<PeerReport, ClusterError> {
    // Process 0 leads and this process takes each task in the order it comes: scene files or
    // a part of one to read, its part of the binning, then for each agent of the bake a share
    // of its tiles and a share of its regions (either left out when process 0 could reuse
    // them), until process 0 ends the bake.
    let mail = Mailbox::new(link, Arc::clone(interrupt));
    enum Next {
        Ingest(Vec<String>, u8),
        IngestPart(Body),
        Bin(u64, Vec<String>),
        Plan(u32, u64, Vec<u32>, u32),
        Regions(u32, RegionPart, u64),
        /// A credit for a tile of an agent done with (its last tiles' came after them).
        Credit,
        End(bool, String),
    }
    let key = |(y, x, zmax)| tessera_artifacts::SpanKey { y, x, zmax };
    let mut report = PeerReport {
        files: 0,
        triangles: 0,
        tiles: 0,
        regions: 0,
        regions_reused: 0,
        sent_bytes: 0,
        matched_links: 0,
        unions: 0,
    };
    loop {
        let next = mail.take(|e| match &e.body {
            Body::Ingest { files, up } => Some(Next::Ingest(files.clone(), *up)),
            Body::IngestPart { .. } => Some(Next::IngestPart(e.body.clone())),
            Body::Bin { key, caches } => Some(Next::Bin(*key, caches.clone())),
            Body::Plan {
                agent,
                tiles_key,
                tiles,
                credits,
            } => Some(Next::Plan(*agent, *tiles_key, tiles.clone(), *credits)),
            Body::Regions {
                agent,
                regions_key,
                first,
                end,
                empty,
            } => Some(Next::Regions(
                *agent,
                RegionPart {
                    first: first.map(key),
                    end: end.map(key),
                    empty: *empty,
                },
                *regions_key,
            )),
            Body::Credit => Some(Next::Credit),
            Body::End { ok, message } => Some(Next::End(*ok, message.clone())),
            _ => None,
        })?;
        match next {
            Next::Ingest(files, up) => {
                let up = tessera_geom::UpAxis::from_code(up).ok_or_else(|| {
                    ClusterError::Lost("process 0 sent an unknown up axis".into())
                })?;
                let files: Vec<std::path::PathBuf> =
                    files.into_iter().map(std::path::PathBuf::from).collect();
                let reused = tessera_pipeline::ingest_for_peer(req, link.index, &files, up)?;
                link.send(0, Body::Ingested { reused });
                report.files += files.len();
            }
            Next::IngestPart(Body::IngestPart {
                path,
                up,
                key,
                windows,
                parts,
            }) => {
                let up = tessera_geom::UpAxis::from_code(up).ok_or_else(|| {
                    ClusterError::Lost("process 0 sent an unknown up axis".into())
                })?;
                let assigned = SplitAssignment {
                    process: link.index,
                    parts,
                    path: path.into(),
                    key: SourceKey {
                        size: key.0,
                        mtime_ns: key.1,
                        content_hash: key.2,
                        up,
                        areas: key.3,
                    },
                    windows: windows.0 as usize..windows.1 as usize,
                };
                // A malformed line goes to process 0, which reports the file's first; this
                // process then waits for the end of the bake.
                let (triangles, error) =
                    match tessera_pipeline::ingest_split_for_peer(req, &assigned) {
                        Ok(n) => (n, None),
                        Err(e) => match e.malformed_line() {
                            Some(bad) => (0, Some(bad)),
                            None => return Err(e.into()),
                        },
                    };
                link.send(0, Body::PartRead { triangles, error });
                report.triangles += triangles;
            }
            Next::IngestPart(_) => unreachable!("only IngestPart is taken as Next::IngestPart"),
            Next::Bin(key, caches) => {
                let assigned = BinAssignment {
                    process: link.index,
                    parts: link.processes,
                    key,
                    caches: caches.into_iter().map(std::path::PathBuf::from).collect(),
                };
                let placements = tessera_pipeline::bin_for_peer(req, &assigned)?;
                link.send(0, Body::Binned { placements });
                req.bin_parts = link.processes;
            }
            Next::Plan(agent, tiles_key, tiles, credits) => {
                req.agent = agent as usize;
                req.tiles_key = tiles_key;
                req.tiles = tiles;
                let sent = send_tiles(link, req, credits)?;
                report.tiles += req.tiles.len();
                report.sent_bytes += sent.bytes;
                report.matched_links += sent.matched_links;
                report.unions += sent.unions;
            }
            Next::Regions(agent, part, regions_key) => {
                req.agent = agent as usize;
                let assigned = RegionAssignment {
                    process: link.index,
                    regions_key,
                    part,
                };
                let part =
                    tessera_pipeline::polygons_for_peer(req, assigned, &mut |round, asked| {
                        mail.share_asked(round, asked)
                    })?;
                link.send(
                    0,
                    Body::PartWritten {
                        regions: part.regions,
                        reused: part.reused,
                    },
                );
                report.regions += part.regions;
                report.regions_reused += part.reused;
            }
            Next::Credit => {}
            Next::End(ok, message) => {
                return match ok {
                    true => Ok(report),
                    false => Err(ClusterError::Lost(format!("process 0 failed: {message}"))),
                };
            }
        }
    }
}

/// Voxelizes `req.tiles` and sends each, in tile order, at most `credits` ahead of process
/// 0's writer (a credit comes back for each tile it writes).
fn send_tiles(
    link: &Link,
    req: &PeerRequest,
    mut credits: u32,
) -> Result<tessera_pipeline::PeerTiles, ClusterError> {
    let wait = Duration::from_millis(100);
    let mut end = None;
    let sent = tessera_pipeline::voxelize_for_peer(req, &mut |key, bytes| {
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
    if let Some((false, message)) = end {
        return Err(ClusterError::Lost(format!("process 0 failed: {message}")));
    }
    Ok(sent?)
}
