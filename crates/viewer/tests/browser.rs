//! End to end: headless Chromium opens the viewer on a small bake, waits for the mesh, clicks
//! two points on the canvas (real mouse events through the DevTools protocol), and checks
//! that the page shows the path the query library gives for the points it picked. Saves a
//! screenshot as `target/viewer-e2e.png`.
//!
//! Ignored in the fast lane (`cargo test --workspace` lists it as ignored, with the reason): it
//! needs Chromium. Run explicitly (`--include-ignored`, as `.ci/run` does after installing
//! Chromium), a missing Chromium is a failure, never a silent pass.

mod support;

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};
use support::{baked, target_dir};
use tessera_navmesh::NavMeshFile;
use tessera_query::Query;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

const CHROMIUM: &str = "/usr/bin/chromium";

/// The browser, killed when dropped.
struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    /// Gives a browser asked to close (`Browser.close`) five seconds to do so, then kills it.
    fn drop(&mut self) {
        for _ in 0..50 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts headless Chromium with a DevTools port chosen by itself; returns the browser's
/// DevTools websocket address.
fn launch(binary: &Path) -> (Browser, String) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--window-size=1024,768",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    // Chromium prints "DevTools listening on ws://..." on stderr.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !sent {
                if let Some(at) = line.find("ws://") {
                    let _ = tx.send(line[at..].trim().to_string());
                    sent = true;
                }
            }
        }
    });
    let browser = Browser {
        child,
        _profile: profile,
    };
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("Chromium printed no DevTools address within 60 s");
    (browser, url)
}

/// A DevTools protocol connection with one page attached (flattened session).
struct DevTools {
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next: u64,
    session: Option<String>,
}

impl DevTools {
    fn connect(url: &str) -> DevTools {
        let (ws, _) = tungstenite::connect(url).expect("DevTools websocket");
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        }
        DevTools {
            ws,
            next: 1,
            session: None,
        }
    }

    /// Sends a command and waits for its answer (events in between are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let m = self.ws.read().expect("DevTools connection");
            let Message::Text(text) = m else { continue };
            let v: Value = serde_json::from_str(text.as_str()).unwrap();
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    panic!("{method} failed: {e}");
                }
                return v["result"].clone();
            }
        }
    }

    /// Asks the whole browser to close (no answer awaited: it may not come).
    fn close_browser(&mut self) {
        let msg = json!({"id": self.next, "method": "Browser.close", "params": {}});
        let _ = self.ws.send(Message::text(msg.to_string()));
    }

    /// Evaluates a JavaScript expression in the page; its value as JSON.
    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expression}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Evaluates `expression` every 100 ms until it is true; panics with `what` after
    /// `seconds`.
    fn wait_for(&mut self, expression: &str, seconds: u64, what: &str) {
        let start = Instant::now();
        while self.eval(expression) != json!(true) {
            if start.elapsed() > Duration::from_secs(seconds) {
                let t = self.eval("JSON.stringify({...window.__tessera, meta: undefined})");
                panic!("{what}: not after {seconds} s; page state {t}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A left click at CSS pixel `(x, y)`: move, press, release.
    fn click(&mut self, x: f64, y: f64) {
        for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
            let mut p = json!({"type": kind, "x": x, "y": y, "buttons": buttons});
            if kind != "mouseMoved" {
                p["button"] = json!("left");
                p["clickCount"] = json!(1);
            }
            self.call("Input.dispatchMouseEvent", p);
        }
    }
}

/// The Chromium to use: `TESSERA_CHROMIUM`, else `/usr/bin/chromium`. Missing is a failure.
fn chromium() -> PathBuf {
    let path = std::env::var_os("TESSERA_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(CHROMIUM));
    assert!(
        path.exists(),
        "{} is missing: install Chromium (apt-get install chromium) or name one in \
         TESSERA_CHROMIUM",
        path.display()
    );
    path
}

#[test]
#[ignore = "slow: drives headless Chromium (apt-get install chromium); .ci/run installs it and runs this"]
fn chromium_clicks_two_points_and_sees_the_path() {
    let binary = chromium();
    let b = baked();
    let server = tessera_viewer::serve(&b.navmesh, Some(&b.scene), 0).unwrap();
    let (_browser, ws_url) = launch(&binary);
    let mut dt = DevTools::connect(&ws_url);
    let target = dt.call("Target.createTarget", json!({"url": "about:blank"}));
    let attached = dt.call(
        "Target.attachToTarget",
        json!({"targetId": target["targetId"], "flatten": true}),
    );
    dt.session = Some(attached["sessionId"].as_str().unwrap().to_string());
    dt.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1024, "height": 768, "deviceScaleFactor": 1, "mobile": false}),
    );
    dt.call("Page.enable", json!({}));
    dt.call("Page.navigate", json!({"url": server.url()}));
    dt.wait_for(
        "!!(window.__tessera && window.__tessera.loaded && window.__tessera.frames > 0)",
        90,
        "the mesh loads",
    );
    let error = dt.eval("window.__tessera.error");
    assert!(error.is_null(), "page error: {error}");
    assert!(dt.eval("window.__tessera.triangles").as_u64().unwrap() > 0);

    // West and east of the wall, in the internal frame (the scene's minimum is its origin,
    // so these are also scene coordinates); the floor is at height 0.
    let targets = [[8.0, 4.0, 0.0], [32.0, 4.0, 0.0]];
    for (k, p) in targets.iter().enumerate() {
        let xy = dt.eval(&format!(
            "window.__tessera.project({}, {}, {})",
            p[0], p[1], p[2]
        ));
        let (x, y) = (xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap());
        assert!(
            (0.0..1024.0).contains(&x) && (0.0..768.0).contains(&y),
            "{p:?} at {xy}"
        );
        dt.click(x, y);
        dt.wait_for(
            &format!("window.__tessera.picks === {}", k + 1),
            10,
            "the click hits the mesh",
        );
    }
    dt.wait_for("window.__tessera.paths === 1", 30, "the path is shown");
    let shown = dt.eval("window.__tessera.lastPath");

    // The page's answer is the query library's for the points it picked, and those points
    // are where we clicked.
    let point = |v: &Value| -> [f64; 3] { [0, 1, 2].map(|k| v[k].as_f64().unwrap()) };
    let (from, to) = (point(&shown["from"]), point(&shown["to"]));
    for (picked, want) in [(from, targets[0]), (to, targets[1])] {
        let d = (0..3)
            .map(|k| (picked[k] - want[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(d < 0.5, "picked {picked:?}, aimed at {want:?}");
    }
    let file = NavMeshFile::open(&b.navmesh).unwrap();
    let query = Query::new(file.mesh());
    let expected = query.path(from, to);
    assert!(expected.found);
    assert_eq!(shown["found"], true, "{shown}");
    let length = shown["length"].as_f64().unwrap();
    assert!(
        (length - expected.length).abs() < 1e-9,
        "{length} vs {}",
        expected.length
    );
    // Round the wall, about as long as between the aimed points.
    let aimed = query.path(targets[0], targets[1]).length;
    assert!((length - aimed).abs() < 1.0, "{length} vs {aimed}");
    assert!(length > 40.0, "{length}");
    assert_eq!(
        shown["shown"].as_u64().unwrap() as usize,
        expected.waypoints.len()
    );
    let text = dt.eval("document.getElementById('path-info').textContent");
    assert_eq!(
        text.as_str().unwrap(),
        format!(
            "path {:.3} m, {} waypoints",
            expected.length,
            expected.waypoints.len()
        )
    );

    // The toggles: portals and tiles on (the tile grid only if the file records its tile
    // size), regions off and on again.
    let before = dt.eval("window.__tessera.layers()");
    assert_eq!(before["portals"]["visible"], false, "{before}");
    assert_eq!(before["scene"]["objects"], 1, "{before}");
    for id in ["show-portals", "show-tiles", "show-regions", "show-regions"] {
        dt.eval(&format!("document.getElementById('{id}').click()"));
    }
    let after = dt.eval("window.__tessera.layers()");
    assert_eq!(after["portals"]["visible"], true, "{after}");
    assert!(after["portals"]["objects"].as_u64().unwrap() > 0, "{after}");
    let tiles = NavMeshFile::open(&b.navmesh).unwrap().tile_cells() > 0;
    assert_eq!(after["tiles"]["visible"], tiles, "{after}");
    assert_eq!(
        after["tiles"]["objects"],
        if tiles { 1 } else { 0 },
        "{after}"
    );

    // The area `step` unticked: the chunks come again without its polygons, and paths keep
    // out of it (the page sends `avoid`).
    let drawn = dt.eval("window.__tessera.triangles").as_u64().unwrap();
    dt.eval("document.getElementById('area-1').click()");
    assert_eq!(dt.eval("window.__tessera.hiddenAreas"), 2);
    dt.wait_for(
        &format!("window.__tessera.idle && window.__tessera.triangles < {drawn}"),
        30,
        "the chunks reload without the step",
    );
    dt.eval("document.getElementById('area-1').click()");
    dt.wait_for(
        &format!("window.__tessera.idle && window.__tessera.triangles === {drawn}"),
        30,
        "the step comes back",
    );
    dt.eval("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))");

    // Screenshot for CI: the rendered navmesh, overlay and path.
    let shot = dt.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let out = target_dir().join("viewer-e2e.png");
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());
    dt.close_browser();
}
