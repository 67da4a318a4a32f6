use super::*;

#[test]
fn percent_decoding() {
    assert_eq!(percent_decode("1%2C2%2c3"), "1,2,3");
    assert_eq!(percent_decode("a+b"), "a b");
    assert_eq!(percent_decode("100%"), "100%");
    assert_eq!(percent_decode("%zz%4"), "%zz%4");
}

#[test]
fn parameters_are_points_and_numbers() {
    let p = Params::parse("from=1,-2.5,3e2&to=&cx=-4&bad=1,2");
    assert_eq!(p.point("from").ok(), Some([1.0, -2.5, 300.0]));
    assert!(p.point("to").is_err());
    assert!(p.point("bad").is_err());
    assert!(p.point("missing").is_err());
    assert_eq!(p.number::<i32>("cx").ok(), Some(-4));
    let e = p.number::<u8>("cx").err().unwrap();
    assert_eq!(e.status, 400);
}

#[test]
fn every_asset_is_served_once_with_a_type() {
    for (i, (path, content_type, bytes)) in ASSETS.iter().enumerate() {
        assert!(path.starts_with('/'));
        assert!(!content_type.is_empty() && !bytes.is_empty(), "{path}");
        assert!(ASSETS[..i].iter().all(|a| a.0 != *path), "{path} twice");
    }
}

/// The HTTP layer alone, on a handler that echoes the target (`/panic` panics), with short
/// timeouts.
mod server {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{SocketAddr, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    use crate::http::{self, Limits, Request};
    use crate::Reply;

    struct Running {
        addr: SocketAddr,
        stop: Arc<AtomicBool>,
        thread: Option<JoinHandle<()>>,
    }

    impl Drop for Running {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            http::wake(self.addr);
            self.thread.take().unwrap().join().unwrap();
        }
    }

    fn limits(workers: usize, queue: usize, idle_ms: u64) -> Limits {
        Limits {
            workers,
            queue,
            idle: Duration::from_millis(idle_ms),
            request: Duration::from_millis(500),
            write: Duration::from_secs(5),
            slice: Duration::from_millis(20),
        }
    }

    fn start(limits: Limits) -> Running {
        let listener = http::bind(0).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let handler = |r: &Request| {
                    assert!(r.target != "/panic", "asked to panic");
                    let body = format!("{} {}", r.method, r.target).into_bytes();
                    Reply::ok("text/plain", body)
                };
                http::run(listener, &limits, &stop, &handler);
            })
        };
        Running {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn connect(addr: SocketAddr) -> (TcpStream, BufReader<TcpStream>) {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        (s.try_clone().unwrap(), BufReader::new(s))
    }

    /// Status, headers (lower-case names) and body of the next response; `head_only` for
    /// the answer to `HEAD`.
    fn response(
        r: &mut BufReader<TcpStream>,
        head_only: bool,
    ) -> (u16, Vec<(String, String)>, String) {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let status = line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            let Some((n, v)) = line.trim_end().split_once(':') else {
                break;
            };
            headers.push((n.to_ascii_lowercase(), v.trim().to_string()));
        }
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map(|(_, v)| v.parse().unwrap())
            .unwrap();
        let mut body = vec![0; if head_only { 0 } else { length }];
        r.read_exact(&mut body).unwrap();
        (status, headers, String::from_utf8(body).unwrap())
    }

    fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the server closed `r`'s connection (end of stream) within `within`.
    fn closed_within(r: &mut BufReader<TcpStream>, within: Duration) -> bool {
        r.get_ref().set_read_timeout(Some(within)).unwrap();
        let mut rest = Vec::new();
        matches!(r.read_to_end(&mut rest), Ok(0))
    }

    #[test]
    fn pipelined_requests_bodies_and_head_on_one_connection() {
        let server = start(limits(2, 4, 2000));
        let (mut w, mut r) = connect(server.addr);
        w.write_all(
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n\
              POST /b HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello\
              HEAD /c HTTP/1.1\r\n\r\n\
              GET /d?e=f HTTP/1.1\n\n",
        )
        .unwrap();
        let (status, headers, body) = response(&mut r, false);
        assert_eq!((status, body.as_str()), (200, "GET /a"));
        assert_eq!(header(&headers, "content-type"), Some("text/plain"));
        assert_eq!(header(&headers, "connection"), None);
        // The handler decides about methods; the body was read and dropped.
        assert_eq!(response(&mut r, false).2, "POST /b");
        let (status, headers, _) = response(&mut r, true);
        assert_eq!(status, 200);
        assert_eq!(header(&headers, "content-length"), Some("7"));
        assert_eq!(response(&mut r, false).2, "GET /d?e=f");
        w.write_all(b"GET /last HTTP/1.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        let (_, headers, body) = response(&mut r, false);
        assert_eq!(body, "GET /last");
        assert_eq!(header(&headers, "connection"), Some("close"));
        assert!(closed_within(&mut r, Duration::from_secs(2)));
    }

    #[test]
    fn idle_connections_are_closed_after_the_idle_time() {
        let server = start(limits(2, 4, 150));
        let (mut w, mut r) = connect(server.addr);
        w.write_all(b"GET /x HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(response(&mut r, false).0, 200);
        let t = Instant::now();
        assert!(closed_within(&mut r, Duration::from_secs(3)));
        let waited = t.elapsed();
        assert!(
            waited >= Duration::from_millis(100) && waited < Duration::from_secs(2),
            "{waited:?}"
        );
        // A connection that never sends a request goes the same way.
        let (_w, mut r) = connect(server.addr);
        assert!(closed_within(&mut r, Duration::from_secs(3)));
    }

    #[test]
    fn a_full_queue_is_answered_503_and_idle_connections_give_way() {
        let server = start(limits(1, 1, 5000));
        // One worker, one place in the queue: of three silent connections at least one
        // is refused at once.
        let mut silent: Vec<_> = (0..3).map(|_| connect(server.addr)).collect();
        let mut refused = 0;
        for (_, r) in &mut silent {
            r.get_ref()
                .set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            let mut first = String::new();
            if r.read_line(&mut first).is_ok() && first.starts_with("HTTP/1.1 503") {
                refused += 1;
            }
        }
        assert!(refused >= 1, "no connection refused");
        // A silent connection holding the only worker is closed once another waits,
        // long before the 5 s idle time.
        let t = Instant::now();
        let (mut w, mut r) = connect(server.addr);
        w.write_all(b"GET /after HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(response(&mut r, false).2, "GET /after");
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    }

    #[test]
    fn malformed_requests_are_refused_and_closed() {
        let server = start(limits(2, 4, 2000));
        let huge = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000));
        for (request, want) in [
            ("nonsense\r\n\r\n".to_string(), 400),
            ("GET / HTTP/2.0\r\n\r\n".into(), 505),
            ("GET / HTTP/1.1\r\nBad Header: 1\r\n\r\n".into(), 400),
            ("GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n".into(), 400),
            (huge, 431),
        ] {
            let (mut w, mut r) = connect(server.addr);
            w.write_all(request.as_bytes()).unwrap();
            let (status, headers, _) = response(&mut r, false);
            assert_eq!(status, want, "{:.40}", request);
            assert_eq!(header(&headers, "connection"), Some("close"));
            assert!(closed_within(&mut r, Duration::from_secs(2)));
        }
        // Half a request, then silence: 408 after the request time.
        let (mut w, mut r) = connect(server.addr);
        w.write_all(b"GET / HTTP/1.1\r\nHost:").unwrap();
        assert_eq!(response(&mut r, false).0, 408);
    }

    #[test]
    fn a_panicking_handler_answers_500_and_the_worker_lives_on() {
        let server = start(limits(1, 4, 2000));
        for _ in 0..2 {
            let (mut w, mut r) = connect(server.addr);
            w.write_all(b"GET /panic HTTP/1.1\r\n\r\nGET /ok HTTP/1.1\r\n\r\n")
                .unwrap();
            assert_eq!(response(&mut r, false).0, 500);
            assert_eq!(response(&mut r, false).2, "GET /ok");
        }
    }
}
