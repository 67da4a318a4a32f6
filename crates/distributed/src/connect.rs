//! The connections between processes, made here rather than by timely: timely's own setup
//! retries forever and prints on stdout, and its listener takes the first eight bytes of any
//! connection for a process index (a stray or stale connection would crash it). Here every
//! connection opens with a hello (magic, the job's fingerprint, the process index, the
//! protocol), answered in kind, so a connection from another job or program is refused without
//! harm, and a process of this job started from another tessera build (whose messages would
//! not decode) ends the bake at once, naming it; the wait is bounded by the startup timeout,
//! whose error names the processes that never answered. The finished sockets (one per other
//! process, as timely expects them) go to timely.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::{Cluster, ClusterError};

const MAGIC: &[u8; 8] = b"TSFARM02";
/// The magic of the hello of builds before the protocol was in it: magic, fingerprint, index.
const MAGIC_BEFORE: &[u8; 8] = b"TSFARM01";
/// The messages processes exchange (`net::Body`), bumped whenever one changes; with the
/// finished tiles' wire version, the protocol processes of one job must share.
const MESSAGES: u32 = 2;
/// This build's protocol.
const PROTOCOL: u64 = (MESSAGES as u64) << 32 | tessera_pipeline::TILE_WIRE_VERSION as u64;
/// Bytes of a hello.
const HELLO: usize = 32;
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

fn hello(fingerprint: u64, index: usize, protocol: u64) -> [u8; HELLO] {
    let mut m = [0u8; HELLO];
    m[..8].copy_from_slice(MAGIC);
    m[8..16].copy_from_slice(&fingerprint.to_le_bytes());
    m[16..24].copy_from_slice(&(index as u64).to_le_bytes());
    m[24..].copy_from_slice(&protocol.to_le_bytes());
    m
}

/// What a hello said.
#[derive(Debug, PartialEq, Eq)]
enum Hello {
    /// Process `index` of this job, of this build.
    Process(usize),
    /// Process `index` of this job, of another build: another protocol, or `None` for a
    /// build from before the protocol was in the hello.
    OtherBuild { index: usize, protocol: Option<u64> },
}

/// Reads a hello; None when it is not one of this job's (another job, another program, a
/// connection that says nothing).
fn read_hello(stream: &mut TcpStream, fingerprint: u64) -> Option<Hello> {
    let mut magic = [0u8; 8];
    stream.read_exact(&mut magic).ok()?;
    let before = match &magic {
        m if m == MAGIC => false,
        m if m == MAGIC_BEFORE => true,
        _ => return None,
    };
    let mut m = [0u8; HELLO - 8];
    let m = &mut m[..if before { 16 } else { HELLO - 8 }];
    stream.read_exact(m).ok()?;
    let word = |k: usize| u64::from_le_bytes(m[k..k + 8].try_into().expect("8 bytes"));
    if word(0) != fingerprint {
        return None;
    }
    let index = word(8) as usize;
    let protocol = (!before).then(|| word(16));
    Some(match protocol == Some(PROTOCOL) {
        true => Hello::Process(index),
        false => Hello::OtherBuild { index, protocol },
    })
}

/// The error for process `who`, of another build.
fn other_build(cluster: &Cluster, who: usize, protocol: Option<u64>) -> ClusterError {
    let theirs = protocol.map_or("an older farm protocol".to_string(), |p| {
        format!("farm protocol {p:#x}")
    });
    ClusterError::OtherBuild(format!(
        "process {who} ({}) runs another tessera build ({theirs}; this one speaks \
         {PROTOCOL:#x}): start every process of the job from the same build",
        cluster.addresses[who]
    ))
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

/// One attempt to reach process `to` and be acknowledged by it: the stream, or what it said
/// instead of its own hello of this build.
fn reach(address: &str, fp: u64, me: usize, to: usize) -> Option<Result<TcpStream, Hello>> {
    let addr = *resolve(address).ok()?.first()?;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    s.set_read_timeout(Some(HELLO_WAIT)).ok()?;
    s.set_write_timeout(Some(HELLO_WAIT)).ok()?;
    s.write_all(&hello(fp, me, PROTOCOL)).ok()?;
    match read_hello(&mut s, fp)? {
        Hello::Process(i) if i == to => Some(Ok(s)),
        Hello::Process(_) => None,
        other => Some(Err(other)),
    }
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
                    // A connection that is not from one of this job's processes is dropped; one
                    // from another build is answered (so that it knows too) and ends the bake.
                    match answered.then(|| read_hello(&mut s, fp)).flatten() {
                        Some(Hello::Process(from))
                            if from > me
                                && from < n
                                && s.write_all(&hello(fp, me, PROTOCOL)).is_ok() =>
                        {
                            streams[from] = Some(s);
                        }
                        Some(Hello::OtherBuild { index, protocol }) if index < n && index != me => {
                            let _ = s.write_all(&hello(fp, me, PROTOCOL));
                            return Err(other_build(cluster, index, protocol));
                        }
                        _ => {}
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
            match reach(&cluster.addresses[to], fp, me, to) {
                Some(Ok(s)) => {
                    streams[to] = Some(s);
                    busy = true;
                }
                Some(Err(Hello::OtherBuild { protocol, .. })) => {
                    return Err(other_build(cluster, to, protocol))
                }
                _ => {}
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

    /// `n` processes on free loopback ports: their addresses, and process `i` of them.
    fn loopback(n: usize) -> (Vec<String>, impl Fn(usize) -> Cluster) {
        let addresses: Vec<String> = (0..n)
            .map(|_| format!("127.0.0.1:{}", free_port()))
            .collect();
        let all = addresses.clone();
        let cluster = move |index| Cluster {
            index,
            addresses: all.clone(),
        };
        (addresses, cluster)
    }

    #[test]
    fn processes_connect_pairwise_and_a_missing_one_is_named() {
        let (addresses, cluster) = loopback(3);
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

    #[test]
    fn a_process_of_another_build_ends_the_startup_naming_it() {
        let (addresses, cluster) = loopback(2);
        let fp = fingerprint(&cluster(0));
        let named = |result: Result<Vec<Option<TcpStream>>, ClusterError>, who: usize| match result
        {
            Err(ClusterError::OtherBuild(m)) => {
                assert!(
                    m.contains(&format!("process {who} ({})", addresses[who])),
                    "{m}"
                );
                assert!(m.contains("another tessera build"), "{m}");
            }
            other => panic!("expected another build, got {other:?}"),
        };
        let another = PROTOCOL + 1;
        // Process 0 hears from a process 1 of another protocol, and answers before it ends.
        let zero = cluster(0);
        let waiting = std::thread::spawn(move || connect(&zero, Duration::from_secs(10)));
        let mut s = loop {
            match TcpStream::connect(&addresses[0]) {
                Ok(s) => break s,
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        s.write_all(&hello(fp, 1, another)).unwrap();
        s.set_read_timeout(Some(HELLO_WAIT)).unwrap();
        let mut answer = [0u8; HELLO];
        s.read_exact(&mut answer).unwrap();
        assert_eq!(answer, hello(fp, 0, PROTOCOL));
        named(waiting.join().unwrap(), 1);
        // Process 1 reaches a process 0 that answers with another protocol, then one whose
        // hello is of an older form (its magic alone is read).
        let before: Vec<u8> = [&MAGIC_BEFORE[..], &fp.to_le_bytes(), &0u64.to_le_bytes()].concat();
        for answer in [hello(fp, 0, another).to_vec(), before] {
            let listener = TcpListener::bind(&addresses[0]).unwrap();
            let one = cluster(1);
            let reaching = std::thread::spawn(move || connect(&one, Duration::from_secs(10)));
            let (mut s, _) = listener.accept().unwrap();
            let mut said = [0u8; HELLO];
            s.read_exact(&mut said).unwrap();
            assert_eq!(said, hello(fp, 1, PROTOCOL));
            s.write_all(&answer).unwrap();
            named(reaching.join().unwrap(), 0);
        }
    }
}
