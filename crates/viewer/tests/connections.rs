//! The viewer under connection load (issue 21, class 12): idle connections must not each
//! cost a thread, and requests on a kept-alive connection must answer as fast as on a fresh
//! one (no Nagle / delayed-ACK stall between a response's pieces).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use support::{baked, get};
use tessera_viewer::serve;

/// Threads of this process (Linux: entries of `/proc/self/task`).
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task (Linux)")
        .count()
}

/// One HTTP/1.1 response read from a kept-alive connection: status and body (by
/// `Content-Length`, or chunked).
fn read_response(r: &mut BufReader<TcpStream>) -> (u16, Vec<u8>) {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("a status line, not {line:?}"));
    let (mut length, mut chunked) = (None, false);
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (name, value) = l.split_once(':').unwrap();
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "content-length" {
            length = Some(value.parse::<usize>().unwrap());
        } else if name == "transfer-encoding" && value.eq_ignore_ascii_case("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap(), 16).unwrap();
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..]).unwrap();
            line.clear();
            r.read_line(&mut line).unwrap();
            if size == 0 {
                break;
            }
        }
    } else {
        body.resize(length.expect("a Content-Length"), 0);
        r.read_exact(&mut body).unwrap();
    }
    (status, body)
}

/// Times `rounds` requests for each target on one kept-alive connection; returns, per target,
/// the body's size and the median and worst times.
fn keep_alive_times(
    addr: SocketAddr,
    targets: &[&str],
    rounds: usize,
) -> Vec<(usize, Duration, Duration)> {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    targets
        .iter()
        .map(|target| {
            let mut times = Vec::new();
            let mut size = 0;
            for _ in 0..rounds {
                let t = Instant::now();
                w.write_all(format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
                    .unwrap();
                let (status, body) = read_response(&mut r);
                times.push(t.elapsed());
                assert_eq!(status, 200, "{target}");
                size = body.len();
            }
            times.sort();
            (size, times[times.len() / 2], times[times.len() - 1])
        })
        .collect()
}

#[test]
fn idle_connections_do_not_each_hold_a_thread() {
    let server = serve(&baked().navmesh, None, 0).unwrap();
    let addr = server.addr();
    assert_eq!(get(addr, "/api/meta").status, 200);
    let before = threads();
    let idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    // Let the server accept them all.
    std::thread::sleep(Duration::from_millis(300));
    let during = threads();
    // Another test of this binary may start a server meanwhile: a margin of 32.
    assert!(
        during < before + 32,
        "{} idle connections: {before} threads before, {during} with them open",
        idle.len()
    );
    // The server still answers a new client while they stay open (idle ones give way).
    let t = Instant::now();
    let status = loop {
        let status = std::panic::catch_unwind(|| get(addr, "/api/meta").status).unwrap_or(0);
        if status == 200 || t.elapsed() > Duration::from_secs(3) {
            break status;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        status, 200,
        "no answer within 3 s beside 200 idle connections"
    );
    drop(idle);
}

#[test]
fn keep_alive_requests_answer_without_delay() {
    let server = serve(&baked().navmesh, None, 0).unwrap();
    let targets = ["/api/meta", "/viewer.js", "/api/chunk?cx=0&cy=0&lod=0", "/"];
    for ((size, median, worst), target) in keep_alive_times(server.addr(), &targets, 20)
        .into_iter()
        .zip(targets)
    {
        eprintln!("{target}: {size} bytes, median {median:?}, worst {worst:?}");
        // Nagle's algorithm meeting the client's delayed ACK costs 40 ms per request.
        assert!(
            median < Duration::from_millis(20),
            "{target} ({size} bytes) on a kept-alive connection: median {median:?}"
        );
    }
}
