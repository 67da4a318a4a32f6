//! The viewer's HTTP/1.1 server, on `std` alone: a fixed set of threads, whatever the number
//! of connections.
//!
//! One thread accepts connections and hands them to [`Limits::workers`] worker threads through
//! a queue of [`Limits::queue`] places; when every place is taken, the connection is answered
//! `503` and closed at once, so no client can make the server start a thread. A worker serves
//! one connection at a time, request after request (keep-alive, pipelining); between requests
//! it waits for the next one at most [`Limits::idle`], and gives the connection up after
//! [`Limits::slice`] when other connections are waiting for a worker. An idle connection
//! therefore holds a worker only while nobody else needs it. A last thread closes
//! connections that may still hold unread bytes ([`close_gracefully`]), so that neither the
//! accepting thread nor a worker waits for a client to go.
//!
//! Each response (head and body) is written from one buffer, on a socket with `TCP_NODELAY`:
//! a head sent alone, then a small body, made Nagle's algorithm hold the body until the
//! client's delayed ACK of the head, 40 ms per request on a kept-alive connection.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::Reply;

/// Bounds on threads, connections and waiting.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Threads serving connections.
    pub workers: usize,
    /// Accepted connections waiting for a worker; beyond, `503`.
    pub queue: usize,
    /// A kept-alive connection with no request for this long is closed.
    pub idle: Duration,
    /// A request's head (and small body) must have arrived this long after its first byte.
    pub request: Duration,
    /// Sending one response may take this long.
    pub write: Duration,
    /// How often a waiting worker looks at the stop flag and the queue.
    pub slice: Duration,
}

/// What `tessera view` runs with: more workers than the six connections a browser opens to
/// one host, so one page never waits for a worker.
pub(crate) const LIMITS: Limits = Limits {
    workers: 8,
    queue: 32,
    idle: Duration::from_secs(5),
    request: Duration::from_secs(10),
    write: Duration::from_secs(30),
    slice: Duration::from_millis(50),
};

/// The largest request head read; beyond, `431`.
const MAX_HEAD: usize = 16 << 10;
/// The largest request body read (and dropped) to keep a connection; beyond, it is closed.
const MAX_BODY: u64 = 64 << 10;

/// A request's head.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: String,
    /// The request target as sent (path and query).
    pub target: String,
    /// Names and values as sent, in order.
    pub headers: Vec<(String, String)>,
    /// HTTP/1.1 (or a later 1.x), not 1.0.
    http11: bool,
}

impl Request {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client asks to close after this request (HTTP/1.0 always does here).
    fn wants_close(&self) -> bool {
        !self.http11
            || self.headers.iter().any(|(n, v)| {
                n.eq_ignore_ascii_case("connection")
                    && v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close"))
            })
    }
}

/// `127.0.0.1:port` (0: a free port).
pub(crate) fn bind(port: u16) -> io::Result<TcpListener> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, port))
}

/// Wakes [`run`]'s accept call after `stop` was set, so that it sees the flag.
pub(crate) fn wake(addr: SocketAddr) {
    let _ = TcpStream::connect_timeout(&addr, Duration::from_secs(1));
}

/// Serves `listener` with `handler` until `stop` is set (and [`wake`] called), then waits for
/// the workers to finish the requests they are answering.
pub(crate) fn run<'s, H>(listener: TcpListener, limits: &Limits, stop: &AtomicBool, handler: &H)
where
    H: Fn(&Request) -> Reply<'s> + Sync,
{
    let (tx, rx) = mpsc::sync_channel::<TcpStream>(limits.queue);
    let rx = Mutex::new(rx);
    // Connections accepted and not yet taken by a worker.
    let waiting = AtomicUsize::new(0);
    let (closing, to_close) = mpsc::sync_channel::<TcpStream>(LINGERING);
    std::thread::scope(|s| {
        let closer = std::thread::Builder::new()
            .name("tessera-view-close".into())
            .spawn_scoped(s, move || linger(to_close));
        if closer.is_err() {
            return;
        }
        let mut workers = 0;
        for i in 0..limits.workers {
            let worker = Worker {
                rx: &rx,
                waiting: &waiting,
                stop,
                limits,
                handler,
                closing: closing.clone(),
            };
            let spawned = std::thread::Builder::new()
                .name(format!("tessera-view-{i}"))
                .spawn_scoped(s, move || worker.run());
            workers += usize::from(spawned.is_ok());
        }
        if workers == 0 {
            return;
        }
        for stream in listener.incoming() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let stream = match stream {
                Ok(stream) => stream,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of file descriptors, say: let the workers close some.
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            waiting.fetch_add(1, Ordering::SeqCst);
            match tx.try_send(stream) {
                Ok(()) => {}
                Err(TrySendError::Full(stream)) => {
                    waiting.fetch_sub(1, Ordering::SeqCst);
                    refuse(stream, &closing);
                }
                Err(TrySendError::Disconnected(_)) => break,
            }
        }
        // The workers end once the queue is empty, the closer once they have.
        drop(tx);
        drop(closing);
    });
}

/// Every worker busy and the queue full: `503`, then close, without waiting for the client
/// (this runs on the accepting thread).
fn refuse(mut stream: TcpStream, closing: &SyncSender<TcpStream>) {
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let _ = stream.set_nodelay(true);
    let reply = Reply::error(503, "the viewer is busy; try again");
    // A new socket's send buffer takes these few hundred bytes whole.
    let _ = stream.write_all(&response_bytes(&reply, false, true));
    close_gracefully(stream, closing);
}

/// Sockets closed after a last response and still read for a moment: at most this many,
/// for at most [`LINGER`] each.
const LINGERING: usize = 256;
const LINGER: Duration = Duration::from_millis(200);

/// Closes a connection after a response while the client may still be sending (the rest of
/// a refused request, a body not read): the write side is shut at once, and the closer
/// thread ([`linger`]) reads and drops what arrives until the client closes (or for
/// [`LINGER`]). Closing a socket with unread bytes would reset the connection, and the
/// client could lose the response it has not read yet.
fn close_gracefully(stream: TcpStream, closing: &SyncSender<TcpStream>) {
    let _ = stream.shutdown(Shutdown::Write);
    if stream.set_nonblocking(true).is_ok() {
        // The closer is full: close now.
        let _ = closing.try_send(stream);
    }
}

/// The closer thread: polls its lingering sockets (non-blocking) every few milliseconds,
/// dropping each once the client has closed, failed or had its [`LINGER`].
fn linger(to_close: Receiver<TcpStream>) {
    let mut open: Vec<(TcpStream, Instant)> = Vec::new();
    let mut sink = [0u8; 4096];
    loop {
        let next = if open.is_empty() {
            to_close.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            to_close.recv_timeout(Duration::from_millis(5))
        };
        match next {
            Ok(stream) => open.push((stream, Instant::now())),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        open.retain_mut(|(stream, since)| {
            since.elapsed() < LINGER
                && loop {
                    match stream.read(&mut sink) {
                        Ok(0) => break false,
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break true,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break false,
                    }
                }
        });
    }
}

/// What a worker thread shares with the others.
struct Worker<'a, H> {
    rx: &'a Mutex<Receiver<TcpStream>>,
    waiting: &'a AtomicUsize,
    stop: &'a AtomicBool,
    limits: &'a Limits,
    handler: &'a H,
    closing: SyncSender<TcpStream>,
}

/// How a wait for bytes ended.
enum Wait {
    Bytes,
    /// The client closed, the server stops, the time is up, or the socket failed.
    Gone,
    /// Time is up while a request was half sent.
    Late,
}

impl<'s, H> Worker<'_, H>
where
    H: Fn(&Request) -> Reply<'s> + Sync,
{
    fn run(&self) {
        loop {
            // A poisoned lock only means another worker panicked while waiting: go on.
            let next = self.rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
            let Ok(stream) = next else { return };
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            if !self.stop.load(Ordering::SeqCst) {
                self.serve(stream);
            }
        }
    }

    /// Answers requests on `stream` until it closes, idles out or must give way.
    fn serve(&self, mut stream: TcpStream) {
        let limits = self.limits;
        if stream.set_nodelay(true).is_err() || stream.set_read_timeout(Some(limits.slice)).is_err()
        {
            return;
        }
        // Bytes received and not yet used: the start of the next request(s).
        let mut pending = Vec::with_capacity(4096);
        loop {
            let idle_since = Instant::now();
            let mut first_byte = None;
            let head_len = loop {
                let complete = head_end(&pending);
                if complete.unwrap_or(pending.len()) > MAX_HEAD {
                    let reply = Reply::error(431, "request head too large");
                    return self.send_and_close(stream, &reply);
                }
                if let Some(n) = complete {
                    break n;
                }
                if !pending.is_empty() {
                    first_byte.get_or_insert_with(Instant::now);
                }
                match self.wait_for_bytes(&mut stream, &mut pending, idle_since, first_byte) {
                    Wait::Bytes => {}
                    Wait::Gone => return,
                    Wait::Late => {
                        let reply = Reply::error(408, "request not received in time");
                        return self.send_and_close(stream, &reply);
                    }
                }
            };
            let head = pending.drain(..head_len).collect::<Vec<u8>>();
            let request = match parse_head(&head) {
                Ok(request) => request,
                Err(reply) => return self.send_and_close(stream, &reply),
            };
            // A body: read and dropped when small and of known length, else the connection
            // closes after the response.
            let mut close = request.wants_close();
            match body_length(&request) {
                Ok(0) => {}
                Ok(n) if n <= MAX_BODY && request.header("expect").is_none() => {
                    let start = first_byte.unwrap_or_else(Instant::now);
                    while (pending.len() as u64) < n {
                        match self.wait_for_bytes(&mut stream, &mut pending, start, Some(start)) {
                            Wait::Bytes => {}
                            Wait::Gone | Wait::Late => return,
                        }
                    }
                    pending.drain(..n as usize);
                }
                Ok(_) => close = true,
                Err(reply) => return self.send_and_close(stream, &reply),
            }
            let reply = self.answer(&request);
            close |= self.stop.load(Ordering::SeqCst);
            let bytes = response_bytes(&reply, request.method == "HEAD", close);
            if write_before(&mut stream, &bytes, Instant::now() + limits.write).is_err() {
                return;
            }
            if close {
                return close_gracefully(stream, &self.closing);
            }
        }
    }

    /// The handler's reply; a panic in it is a `500` (and the worker lives on).
    fn answer(&self, request: &Request) -> Reply<'s> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.handler)(request)))
            .unwrap_or_else(|_| Reply::error(500, "the viewer failed on this request"))
    }

    /// Reads what arrives into `pending`, one slice at a time, until some bytes came or the
    /// wait must end: the server stops; no request started and the idle time is over (or
    /// one slice is over while other connections wait for a worker); a request started
    /// `first_byte` and its time is over.
    fn wait_for_bytes(
        &self,
        stream: &mut TcpStream,
        pending: &mut Vec<u8>,
        idle_since: Instant,
        first_byte: Option<Instant>,
    ) -> Wait {
        let limits = self.limits;
        let mut buf = [0u8; 8192];
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return Wait::Gone;
            }
            match first_byte {
                Some(t) if t.elapsed() >= limits.request => return Wait::Late,
                Some(_) => {}
                None => {
                    let idle = idle_since.elapsed();
                    let others_wait = self.waiting.load(Ordering::SeqCst) > 0;
                    if idle >= limits.idle || (others_wait && idle >= limits.slice) {
                        return Wait::Gone;
                    }
                }
            }
            match stream.read(&mut buf) {
                Ok(0) => return Wait::Gone,
                Ok(n) => {
                    pending.extend_from_slice(&buf[..n]);
                    return Wait::Bytes;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => return Wait::Gone,
            }
        }
    }

    fn send_and_close(&self, mut stream: TcpStream, reply: &Reply) {
        let bytes = response_bytes(reply, false, true);
        if write_before(&mut stream, &bytes, Instant::now() + self.limits.write).is_ok() {
            close_gracefully(stream, &self.closing);
        }
    }
}

/// Writes all of `bytes`, failing once `deadline` passes (a client that reads too slowly
/// does not keep a worker for long).
fn write_before(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The length of the request head in `bytes` up to its blank line (included), if complete.
/// Lines end with CRLF or a bare LF.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let mut start = 0;
    while let Some(i) = bytes[start..].iter().position(|&b| b == b'\n') {
        let line = &bytes[start..start + i];
        start += i + 1;
        if line.is_empty() || line == b"\r" {
            // Blank lines before the request line are skipped (RFC 9112, 2.2).
            if bytes[..start].iter().any(|&b| b != b'\r' && b != b'\n') {
                return Some(start);
            }
        }
    }
    None
}

/// The request line and the headers.
fn parse_head(head: &[u8]) -> Result<Request, Reply<'static>> {
    let bad = |what: &str| Reply::error(400, format!("malformed request: {what}"));
    let text = std::str::from_utf8(head).map_err(|_| bad("not UTF-8"))?;
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .skip_while(|l| l.is_empty());
    let line = lines.next().ok_or_else(|| bad("no request line"))?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("request line"));
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(bad("method"));
    }
    if target.is_empty() || target.bytes().any(|b| b.is_ascii_control()) {
        return Err(bad("target"));
    }
    let http11 = match version {
        "HTTP/1.0" => false,
        "HTTP/1.1" => true,
        v if v.starts_with("HTTP/") => {
            return Err(Reply::error(
                505,
                format!("{v} is not served, only HTTP/1.x"),
            ))
        }
        _ => return Err(bad("version")),
    };
    let mut headers = Vec::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or_else(|| bad("header line"))?;
        // No space before the colon, no folded lines (RFC 9112, 5.1 and 5.2).
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(bad("header name"));
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }
    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
        headers,
        http11,
    })
}

/// The body's length by `Content-Length`; `u64::MAX` for one of unknown length
/// (`Transfer-Encoding`), which is never read.
fn body_length(request: &Request) -> Result<u64, Reply<'static>> {
    if request.header("transfer-encoding").is_some() {
        return Ok(u64::MAX);
    }
    let mut length = None;
    for (name, value) in &request.headers {
        if name.eq_ignore_ascii_case("content-length") {
            let n: u64 = value
                .parse()
                .map_err(|_| Reply::error(400, "malformed request: Content-Length"))?;
            if length.is_some_and(|l| l != n) {
                return Err(Reply::error(400, "malformed request: two Content-Lengths"));
            }
            length = Some(n);
        }
    }
    Ok(length.unwrap_or(0))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

/// Status line, headers and (but for `HEAD`) body, in one buffer.
pub(crate) fn response_bytes(reply: &Reply, head_only: bool, close: bool) -> Vec<u8> {
    let body: &[u8] = &reply.body;
    let mut out = Vec::with_capacity(256 + if head_only { 0 } else { body.len() });
    let _ = write!(
        out,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        body.len()
    );
    if reply.status == 405 {
        out.extend_from_slice(b"Allow: GET, HEAD\r\n");
    }
    if reply.status == 503 {
        out.extend_from_slice(b"Retry-After: 1\r\n");
    }
    out.extend_from_slice(if close {
        &b"Connection: close\r\n\r\n"[..]
    } else {
        &b"\r\n"[..]
    });
    if !head_only {
        out.extend_from_slice(body);
    }
    out
}

/// A body borrowed or owned.
pub(crate) type Body<'a> = Cow<'a, [u8]>;
