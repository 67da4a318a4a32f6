//! The one place timely is used: a timely worker per process, on its own thread, moving
//! [`Envelope`]s between processes through one dataflow (an input, an exchange routed by the
//! addressee, and an inspect that hands what arrives to the rest of the process).
//!
//! Timely has no fault tolerance: when a process dies, its peers' receive threads panic on
//! the closed socket and their workers wait forever. A panic hook notices those panics (the
//! threads are named `timely:recv-N` / `timely:send-N`) and marks the link lost, which ends
//! every wait here with an error and raises the bake's interrupt flag; a watchdog ends the
//! process if it has not ended on its own soon after.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::ProcessBuilder;
use timely::communication::{AllocatorBuilder, Hooks};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::{Exchange, Input, Inspect};
use timely::dataflow::InputHandle;

use crate::ClusterError;

/// Bytes carried as one block (bincode writes them with one copy, not byte by byte).
#[derive(Clone, Debug)]
pub(crate) struct Payload(pub Vec<u8>);

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Payload, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Payload;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Payload, E> {
                Ok(Payload(v.to_vec()))
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Payload, E> {
                Ok(Payload(v))
            }
        }
        d.deserialize_byte_buf(Bytes)
    }
}

/// What processes tell each other. A change to any message bumps `connect::MESSAGES`, so that
/// processes of two builds refuse each other at startup instead of misreading each other.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Body {
    /// Process 0 to another: the tiles are binned (every process's part, under this key);
    /// compute these tiles for agent `agent` (its index in the bake's agents), with this many
    /// sent ahead of process 0's writer at most.
    Plan {
        agent: u32,
        tiles_key: u64,
        tiles: Vec<u32>,
        credits: u32,
    },
    /// Process 0 to another: read these scene files (paths as the command line gave them; the
    /// scene's up axis by its code) into their caches in the bake folder.
    Ingest { files: Vec<String>, up: u8 },
    /// A process other than 0 to process 0: its files are read; whether each cache was
    /// reused.
    Ingested { reused: Vec<bool> },
    /// Process 0 to another: read windows `windows` of pass 2 of the OBJ file `path` (the
    /// tables of its pass 1 are in the bake folder) into your part, of `parts`, of its
    /// cache; the file's source key is `key` (size, mtime, content hash, area rules' key)
    /// with `up`.
    IngestPart {
        path: String,
        up: u8,
        key: (u64, u64, u64, u64),
        windows: (u64, u64),
        parts: u32,
    },
    /// A process other than 0 to process 0: its part of the file is read (the triangles),
    /// or the file's first malformed line in it (its number and the message).
    PartRead {
        triangles: u64,
        error: Option<(u64, String)>,
    },
    /// Process 0 to another: bin your part of the scene (every process one part, in process
    /// order) from these scene caches (paths in the bake folder, in order), under `key`.
    Bin { key: u64, caches: Vec<String> },
    /// A process other than 0 to process 0: its part of the binning is written.
    Binned { placements: u64 },
    /// A finished tile, to process 0.
    Tile { key: u32, bytes: Payload },
    /// Process 0 to a tile's sender: it is written; one more may come.
    Credit,
    /// Process 0 to another: polygonize the regions of `part` of agent `agent`'s region
    /// journal made under `regions_key` (region ids as `(y, x, zmax)`).
    Regions {
        agent: u32,
        regions_key: u64,
        first: Option<(i32, i32, u32)>,
        end: Option<(i32, i32, u32)>,
        empty: bool,
    },
    /// To every other process: the points this one's regions asked back in a round of
    /// simplification ([`encode_asked`]).
    Asked { round: u32, points: Payload },
    /// A process other than 0 to process 0: its part of the regions is written (how many,
    /// and how many of them it took from the last bake).
    PartWritten { regions: u64, reused: u64 },
    /// A process other than 0 failed.
    Failed { message: String },
    /// Process 0 to the others: the bake is over (its result).
    End { ok: bool, message: String },
}

/// A round's asked points as bytes: per point its section name (16 bytes) and index (4),
/// little-endian.
pub(crate) fn encode_asked(asked: &[(u128, u32)]) -> Payload {
    let mut bytes = Vec::with_capacity(asked.len() * 20);
    for (name, k) in asked {
        bytes.extend_from_slice(&name.to_le_bytes());
        bytes.extend_from_slice(&k.to_le_bytes());
    }
    Payload(bytes)
}

/// [`encode_asked`] read back; None when the bytes are not whole points.
pub(crate) fn decode_asked(p: &Payload) -> Option<Vec<(u128, u32)>> {
    if !p.0.len().is_multiple_of(20) {
        return None;
    }
    Some(
        p.0.chunks_exact(20)
            .map(|c| {
                let name = u128::from_le_bytes(c[..16].try_into().expect("16 bytes"));
                (
                    name,
                    u32::from_le_bytes(c[16..].try_into().expect("4 bytes")),
                )
            })
            .collect(),
    )
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Envelope {
    pub to: u32,
    pub from: u32,
    pub body: Body,
}

/// Why the link was lost, once it was.
static LOST: OnceLock<Mutex<Option<String>>> = OnceLock::new();

fn lost_slot() -> &'static Mutex<Option<String>> {
    LOST.get_or_init(|| Mutex::new(None))
}

/// The link's loss, if it was lost.
pub(crate) fn lost() -> Option<String> {
    lost_slot().lock().map(|l| l.clone()).unwrap_or(None)
}

/// Installs (once) the panic hook that turns a timely network thread's panic into a lost
/// link; other panics go to the previous hook.
fn watch_network_panics(addresses: Vec<String>, interrupt: Arc<AtomicBool>) {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let name = std::thread::current().name().unwrap_or("").to_string();
            let Some(peer) = name
                .strip_prefix("timely:recv-")
                .or(name.strip_prefix("timely:send-"))
            else {
                return previous(info);
            };
            let who = peer
                .parse::<usize>()
                .ok()
                .and_then(|p| addresses.get(p).map(|a| format!("process {p} ({a})")))
                .unwrap_or_else(|| format!("process {peer}"));
            let message = format!("lost the connection to {who}: it ended or its machine failed");
            let mut slot = lost_slot().lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = Some(message);
                interrupt.store(true, Ordering::Relaxed);
                // Everything waiting here ends with an error at once; should a thread stay
                // stuck in timely, the process still ends.
                std::thread::spawn(|| {
                    std::thread::sleep(WATCHDOG);
                    eprintln!("error: {}; exiting", lost().unwrap_or_default());
                    std::process::exit(crate::EXIT_CLUSTER.into());
                });
            }
        }));
    });
}

/// How long after a loss the process may take to end on its own.
const WATCHDOG: Duration = Duration::from_secs(15);

/// This process's end of the exchange.
pub(crate) struct Link {
    pub index: u32,
    pub processes: u32,
    out: Sender<Envelope>,
    incoming: Receiver<Envelope>,
    closing: Arc<AtomicBool>,
    /// In a mutex only to make the link shareable between threads.
    guards: Mutex<Option<timely::communication::WorkerGuards<()>>>,
    pub sent_bytes: AtomicU64,
    pub received_bytes: AtomicU64,
}

impl Link {
    /// Starts timely's network threads on `sockets` and one worker thread.
    pub fn start(
        index: usize,
        addresses: &[String],
        sockets: Vec<Option<TcpStream>>,
        interrupt: Arc<AtomicBool>,
    ) -> Result<Link, ClusterError> {
        watch_network_panics(addresses.to_vec(), interrupt);
        let hooks = Hooks::default();
        let local = ProcessBuilder::new_typed_vector(1, hooks.refill.clone(), hooks.spill.clone());
        let (builders, comms) = initialize_networking_from_sockets(local, sockets, index, 1, hooks)
            .map_err(|e| ClusterError::Config(format!("cannot start the network threads: {e}")))?;
        let builders = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
        let (out, out_rx) = unbounded::<Envelope>();
        let (in_tx, incoming) = unbounded::<Envelope>();
        let closing = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&closing);
        let guards = timely::execute::execute_from(
            builders,
            Box::new(comms),
            timely::WorkerConfig::default(),
            move |worker| {
                let mut input = InputHandle::<u64, CapacityContainerBuilder<Vec<Envelope>>>::new();
                let deliver = in_tx.clone();
                worker.dataflow::<u64, _, _>(|scope| {
                    scope
                        .input_from(&mut input)
                        .container::<Vec<_>>()
                        .exchange(|e: &Envelope| e.to as u64)
                        .inspect(move |e: &Envelope| {
                            let _ = deliver.send(e.clone());
                        });
                });
                loop {
                    let mut sent = false;
                    while let Ok(e) = out_rx.try_recv() {
                        input.send(e);
                        sent = true;
                    }
                    if sent {
                        // A new epoch flushes the exchange's buffers to the network: a
                        // message goes out at once, not when a buffer fills.
                        let next = *input.time() + 1;
                        input.advance_to(next);
                    }
                    worker.step_or_park(Some(Duration::from_millis(2)));
                    if lost().is_some() {
                        return;
                    }
                    if stop.load(Ordering::Relaxed) && out_rx.is_empty() {
                        break;
                    }
                }
                // Closing the input lets the dataflow end once every process has closed its.
                drop(input);
            },
        )
        .map_err(|e| ClusterError::Config(format!("cannot start timely: {e}")))?;
        Ok(Link {
            index: index as u32,
            processes: addresses.len() as u32,
            out,
            incoming,
            closing,
            guards: Mutex::new(Some(guards)),
            sent_bytes: AtomicU64::new(0),
            received_bytes: AtomicU64::new(0),
        })
    }

    pub fn send(&self, to: u32, body: Body) {
        if let Body::Tile { bytes, .. } = &body {
            self.sent_bytes
                .fetch_add(bytes.0.len() as u64, Ordering::Relaxed);
        }
        let _ = self.out.send(Envelope {
            to,
            from: self.index,
            body,
        });
    }

    /// The next message for this process, waiting at most `wait`; an error once the link is
    /// lost.
    pub fn recv(&self, wait: Duration) -> Result<Option<Envelope>, ClusterError> {
        if let Some(why) = lost() {
            return Err(ClusterError::Lost(why));
        }
        match self.incoming.recv_timeout(wait) {
            Ok(e) => {
                if let Body::Tile { bytes, .. } = &e.body {
                    self.received_bytes
                        .fetch_add(bytes.0.len() as u64, Ordering::Relaxed);
                }
                Ok(Some(e))
            }
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(ClusterError::Lost(
                lost().unwrap_or_else(|| "the timely worker ended".into()),
            )),
        }
    }

    /// Closes this process's side and waits (at most `wait`) for timely to finish: it ends
    /// once every process has closed. A lost link is left as it is.
    pub fn close(self, wait: Duration) -> bool {
        self.closing.store(true, Ordering::Relaxed);
        let guards = self.guards.lock().ok().and_then(|mut g| g.take());
        let Some(guards) = guards else {
            return true;
        };
        if lost().is_some() {
            std::mem::forget(guards);
            return false;
        }
        let (done_tx, done_rx) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || {
            let _ = guards.join();
            let _ = done_tx.send(());
        });
        done_rx.recv_timeout(wait).is_ok()
    }
}
