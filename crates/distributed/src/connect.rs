//! The connections between processes, made here rather than by timely: timely's own setup
//! retries forever and prints on stdout, and its listener takes the first eight bytes of any
//! connection for a process index (a stray or stale connection would crash it). Here every
//! connection opens with a hello (magic, the job's fingerprint, the process index), answered
//! in kind, so a connection from another job or program is refused without harm; the wait is
//! bounded by the startup timeout, whose error names the processes that never answered. The
//! finished sockets (one per other process, as timely expects them) go to timely.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::{Cluster, ClusterError};

const MAGIC: &[u8; 8] = b"TSFARM01";
/// How long a hello or its answer may take once connected.
const HELLO_WAIT: Duration = Duration::from_secs(10);
/// Pause between two attempts to reach a process not listening yet.
const RETRY_EVERY: Duration = Duration::from_millis(250);

/// A hash of the process addresses, in order: two jobs with different hostfiles never mix.
fn fingerprint(cluster: &Cluster) -> u64 {
    // FNV-1a: the same in every build.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for a in &cluster.addresses {
        for b in a.bytes().chain([b'\n']) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn hello(fingerprint: u64, index: usize) -> [u8; 24] {
    let mut m = [0u8; 24];
    m[..8].copy_from_slice(MAGIC);
    m[8..16].copy_from_slice(&fingerprint.to_le_bytes());
    m[16..].copy_from_slice(&(index as u64).to_le_bytes());
    m
}

/// Reads a hello; the index it names when it is one of this job's.
fn read_hello(stream: &mut TcpStream, fingerprint: u64) -> Option<usize> {
    let mut m = [0u8; 24];
    stream.read_exact(&mut m).ok()?;
    let fp = u64::from_le_bytes(m[8..16].try_into().ok()?);
    (&m[..8] == MAGIC && fp == fingerprint)
        .then(|| u64::from_le_bytes(m[16..].try_into().unwrap()) as usize)
}

fn resolve(address: &str) -> std::io::Result<Vec<SocketAddr>> {
    Ok(address.to_socket_addrs()?.collect())
}

/// Binds this process's address (or every interface on its port when the name resolves to
/// an address this machine does not hold).
fn listen(address: &str) -> Result<TcpListener, ClusterError> {
    let fail = |e: std::io::Error| ClusterError::Config(format!("cannot listen on {address}: {e}"));
    let addrs = resolve(address).map_err(fail)?;
    let listener = match TcpListener::bind(&addrs[..]) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::AddrNotAvailable => {
            let port = addrs.first().map_or(0, |a| a.port());
            TcpListener::bind(("0.0.0.0", port)).map_err(fail)?
        }
        Err(e) => return Err(fail(e)),
    };
    listener.set_nonblocking(true).map_err(fail)?;
    Ok(listener)
}

/// One attempt to reach process `to` and be acknowledged by it.
fn reach(address: &str, fp: u64, me: usize, to: usize) -> Option<TcpStream> {
    let addr = *resolve(address).ok()?.first()?;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    s.set_read_timeout(Some(HELLO_WAIT)).ok()?;
    s.set_write_timeout(Some(HELLO_WAIT)).ok()?;
    s.write_all(&hello(fp, me)).ok()?;
    (read_hello(&mut s, fp)? == to).then_some(s)
}

/// Connects this process with every other one, within `timeout`. Returns one stream per
/// process (None at this one's place), blocking, with no timeouts left on them.
pub fn connect(
    cluster: &Cluster,
    timeout: Duration,
) -> Result<Vec<Option<TcpStream>>, ClusterError> {
    let (me, n) = (cluster.index, cluster.processes());
    let fp = fingerprint(cluster);
    let listener = listen(&cluster.addresses[me])?;
    let deadline = Instant::now() + timeout;
    let mut streams: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    let mut last_try = vec![None::<Instant>; n];
    // Processes below this one are called; those above call in.
    while streams
        .iter()
        .enumerate()
        .any(|(i, s)| i != me && s.is_none())
    {
        if Instant::now() >= deadline {
            let missing: Vec<String> = (0..n)
                .filter(|&i| i != me && streams[i].is_none())
                .map(|i| format!("process {i} ({})", cluster.addresses[i]))
                .collect();
            return Err(ClusterError::StartupTimeout {
                seconds: timeout.as_secs_f64(),
                missing,
            });
        }
        let mut busy = false;
        loop {
            match listener.accept() {
                Ok((mut s, _)) => {
                    busy = true;
                    let answered = s.set_nonblocking(false).is_ok()
                        && s.set_read_timeout(Some(HELLO_WAIT)).is_ok();
                    // A connection that is not from one of this job's processes is dropped.
                    let from = answered.then(|| read_hello(&mut s, fp)).flatten();
                    if let Some(from) = from.filter(|&f| f > me && f < n) {
                        if s.write_all(&hello(fp, me)).is_ok() {
                            streams[from] = Some(s);
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => break,
            }
        }
        for to in 0..me {
            if streams[to].is_some() || last_try[to].is_some_and(|t| t.elapsed() < RETRY_EVERY) {
                continue;
            }
            last_try[to] = Some(Instant::now());
            if let Some(s) = reach(&cluster.addresses[to], fp, me, to) {
                streams[to] = Some(s);
                busy = true;
            }
        }
        if !busy {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    for s in streams.iter().flatten() {
        let ready = s
            .set_read_timeout(None)
            .and_then(|_| s.set_write_timeout(None));
        ready
            .and_then(|_| s.set_nodelay(true))
            .map_err(|e| ClusterError::Config(format!("cannot set up a connection: {e}")))?;
    }
    Ok(streams)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn processes_connect_pairwise_and_a_missing_one_is_named() {
        let addresses: Vec<String> = (0..3)
            .map(|_| format!("127.0.0.1:{}", free_port()))
            .collect();
        let cluster = |index| Cluster {
            index,
            addresses: addresses.clone(),
        };
        // Only processes 0 and 1 start: both give up on 2, naming it.
        let (a, b) = (cluster(0), cluster(1));
        let other = std::thread::spawn(move || connect(&b, Duration::from_millis(800)));
        let started = Instant::now();
        let mine = connect(&a, Duration::from_millis(800));
        for result in [mine, other.join().unwrap()] {
            match result {
                Err(ClusterError::StartupTimeout { missing, .. }) => {
                    assert_eq!(missing, [format!("process 2 ({})", addresses[2])]);
                }
                _ => panic!("expected a startup timeout"),
            }
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        // All three: every pair connected.
        let handles: Vec<_> = (1..3)
            .map(|i| {
                let c = cluster(i);
                std::thread::spawn(move || connect(&c, Duration::from_secs(10)))
            })
            .collect();
        let zero = connect(&cluster(0), Duration::from_secs(10)).unwrap();
        assert!(zero[0].is_none() && zero[1].is_some() && zero[2].is_some());
        for h in handles {
            assert_eq!(h.join().unwrap().unwrap().iter().flatten().count(), 2);
        }
    }
}
