//! `tessera view`: a baked navmesh in 3D in a web browser, served from this process.
//!
//! [`serve`] maps the navmesh file, binds an HTTP server to the loopback interface only
//! (`127.0.0.1`; requests naming another host are refused, against DNS rebinding) and answers
//! from a fixed set of worker threads until the [`Server`] is dropped ([`http`]: idle
//! connections time out, and when every worker is busy new ones wait in a bounded queue or
//! are answered `503`; no connection starts a thread). The page and three.js (vendored from
//! the npm package `three`, see `assets/three/VERSION.md`) are compiled into the binary:
//! nothing is fetched at run time.
//!
//! Endpoints (all `GET`):
//!
//! * `/`, `/viewer.js`, `/three/...`: the page, its script and three.js.
//! * `/api/meta`: JSON: counts, frame (origin, up axis, cell size, agent), internal bounds,
//!   the chunk grid (edge and every non-empty chunk with its polygon count and bounds), the
//!   tile edge (or null when the file does not record it), the overlay's size.
//! * `/api/chunk?cx=I&cy=J&lod=L[&hide=MASK]`: one plan chunk's geometry, binary
//!   ([`chunks`]): level 0 is every polygon, 1 and 2 are coarser (vertex clustering); the
//!   polygons of the areas whose bit `MASK` sets (bit `id` of the navmesh's area table) are
//!   left out. The page loads coarse chunks first and refines the ones near the camera, so a
//!   2 km world stays interactive.
//! * `/api/scene`: the source scene overlay, binary ([`overlay`]), 404 without `--scene`.
//! * `/api/path?from=X,Y,Z&to=X,Y,Z[&avoid=NAME,...]` (points read by
//!   [`tessera_geom::parse_point`]): the [`tessera_query::PathAnswer`] of
//!   [`tessera_query::Query::path_costed`] as JSON (the areas and links named never entered),
//!   points in the scene's own coordinates, exactly what `tessera path --json` prints.
//!
//! The page lists the navmesh's areas (`/api/meta`'s `areas`) when it has more than
//! `default`: unticking one hides its polygons and keeps paths out of it.
//!
//! The page draws in the navmesh's internal frame (Z up, rebased on the frame's origin) and
//! converts clicked points to scene coordinates itself (origin and up axis from `/api/meta`).
//!
//! Reads navmesh files (and scenes, for the overlay, through `tessera-ingest`); depends on no
//! builder crate.

pub mod chunks;
mod http;
pub mod overlay;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde_json::{json, Value};
use tessera_navmesh::{ArchivedNavMesh, NavMeshError, NavMeshFile};
use tessera_query::{shortest_decimal, Query};

use chunks::Layout;
use overlay::Overlay;

/// Default cap on the overlay's triangles.
pub const DEFAULT_SCENE_TRIANGLES: usize = 400_000;

/// Why the viewer could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ViewerError {
    #[error("cannot use navmesh: {0}")]
    NavMesh(#[from] NavMeshError),
    #[error("cannot read the scene overlay: {0}")]
    Scene(#[from] tessera_ingest::IngestError),
    #[error("cannot listen on 127.0.0.1:{port}: {message}")]
    Bind { port: u16, message: String },
    #[error("invalid viewer option: {0}")]
    Option(String),
}

/// What to serve, and how.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// The navmesh file.
    pub navmesh: PathBuf,
    /// The scene it was baked from, drawn as a faint overlay.
    pub scene: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Chunk edge in world units [default: [`chunks::auto_edge`]].
    pub chunk_edge: Option<f32>,
    /// At most this many overlay triangles.
    pub scene_triangles: usize,
}

impl ViewOptions {
    pub fn new(navmesh: impl Into<PathBuf>) -> ViewOptions {
        ViewOptions {
            navmesh: navmesh.into(),
            scene: None,
            port: 0,
            chunk_edge: None,
            scene_triangles: DEFAULT_SCENE_TRIANGLES,
        }
    }
}

/// A running viewer. Dropping it (or [`Server::stop`]) stops the workers and frees the port.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    host: Option<JoinHandle<()>>,
}

impl Server {
    /// The address listened on (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Blocks until the server stops (it does not stop on its own: for the command line).
    pub fn wait(mut self) {
        if let Some(host) = self.host.take() {
            let _ = host.join();
        }
    }

    /// Stops answering and waits for the workers to finish their requests.
    pub fn stop(self) {
        drop(self)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(host) = self.host.take() {
            // The accepting thread waits in `accept`: a connection wakes it to see the flag.
            http::wake(self.addr);
            let _ = host.join();
        }
    }
}

/// Serves `navmesh` (and `scene` as an overlay) on `127.0.0.1:port` (0: a free port).
pub fn serve(navmesh: &Path, scene: Option<&Path>, port: u16) -> Result<Server, ViewerError> {
    let mut options = ViewOptions::new(navmesh);
    options.scene = scene.map(Path::to_path_buf);
    options.port = port;
    serve_with(&options)
}

/// [`serve`] with every option.
pub fn serve_with(options: &ViewOptions) -> Result<Server, ViewerError> {
    let file = NavMeshFile::open(&options.navmesh)?;
    let mesh = file.mesh();
    let edge = options
        .chunk_edge
        .unwrap_or_else(|| chunks::auto_edge(mesh));
    if !(edge.is_finite() && edge > 0.0) {
        return Err(ViewerError::Option(format!(
            "chunk edge {edge} is not a positive number"
        )));
    }
    let layout = Layout::new(mesh, edge);
    let frame = mesh.frame.native();
    let overlay = match &options.scene {
        Some(path) => Some(overlay::load(path, &frame, options.scene_triangles)?),
        None => None,
    };
    let meta = meta_json(&file, &layout, overlay.as_ref()).to_string();
    let scene_bytes = overlay.as_ref().map(overlay::encode_overlay);

    let bind_error = |e: std::io::Error| ViewerError::Bind {
        port: options.port,
        message: e.to_string(),
    };
    let listener = http::bind(options.port).map_err(bind_error)?;
    let addr = listener.local_addr().map_err(bind_error)?;
    let stop = Arc::new(AtomicBool::new(false));
    let host = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("tessera-view".into())
            .spawn(move || {
                let state = State {
                    query: Query::new(file.mesh()),
                    mesh: file.mesh(),
                    layout,
                    meta,
                    scene: scene_bytes,
                    port: addr.port(),
                };
                http::run(
                    listener,
                    &http::LIMITS,
                    &stop,
                    &|request: &http::Request| state.reply(request),
                );
            })
            .map_err(|e| ViewerError::Bind {
                port: options.port,
                message: format!("cannot start a thread: {e}"),
            })?
    };
    Ok(Server {
        addr,
        stop,
        host: Some(host),
    })
}

fn meta_json(file: &NavMeshFile, layout: &Layout, overlay: Option<&Overlay>) -> Value {
    let mesh = file.mesh();
    let frame = mesh.frame.native();
    let stats = &mesh.stats;
    let chunks: Vec<Value> = layout
        .chunks
        .iter()
        .map(|c| json!([c.cx, c.cy, c.polys.len(), c.min, c.max]))
        .collect();
    json!({
        "file": file.path().file_name().map(|n| n.to_string_lossy().into_owned()),
        "polygons": mesh.polys.len(),
        "vertices": mesh.verts.len(),
        "regions": stats.regions.to_native(),
        "portals": stats.portals.to_native(),
        "links": stats.links.to_native(),
        "walkable_area_m2": stats.walkable_area.to_native(),
        "areas": mesh.areas.iter().map(|a| json!({
            "name": a.name.as_str(),
            "cost": a.cost.to_native(),
            "walkable": a.walkable,
        })).collect::<Vec<_>>(),
        "origin": frame.origin,
        "up": frame.up_axis().to_string(),
        "cell_size": shortest_decimal(frame.cell_size),
        "agent": {
            "height": shortest_decimal(frame.agent_height),
            "radius": shortest_decimal(frame.agent_radius),
            "climb": shortest_decimal(frame.agent_climb),
        },
        "bounds": {
            "min": mesh.bounds_min.map(|c| c.to_native()),
            "max": mesh.bounds_max.map(|c| c.to_native()),
        },
        "tile_edge": file.tile_edge(),
        "chunk_edge": layout.edge,
        "lods": chunks::LEVELS,
        // [cx, cy, polygons, [min x, y, z], [max x, y, z]] per non-empty chunk.
        "chunks": chunks,
        "scene": overlay.map(|o| json!({
            "source_triangles": o.source_triangles,
            "triangles": o.triangles.len(),
            "vertices": o.positions.len(),
            "cluster": o.cluster,
        })),
    })
}

/// What the workers share.
struct State<'a> {
    mesh: &'a ArchivedNavMesh,
    query: Query<'a>,
    layout: Layout,
    meta: String,
    scene: Option<Vec<u8>>,
    port: u16,
}

/// A response before it is sent: its body borrowed (assets, the meta, the overlay) or made
/// for the request.
struct Reply<'a> {
    status: u16,
    content_type: &'static str,
    body: http::Body<'a>,
}

impl<'a> Reply<'a> {
    fn ok(content_type: &'static str, body: impl Into<http::Body<'a>>) -> Reply<'a> {
        Reply {
            status: 200,
            content_type,
            body: body.into(),
        }
    }

    fn json(status: u16, v: &Value) -> Reply<'a> {
        Reply {
            status,
            content_type: "application/json",
            body: v.to_string().into_bytes().into(),
        }
    }

    fn error(status: u16, message: impl Into<String>) -> Reply<'a> {
        Reply::json(status, &json!({ "error": message.into() }))
    }
}

/// The files compiled in: path, content type, bytes.
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_bytes!("../assets/index.html"),
    ),
    (
        "/index.html",
        "text/html; charset=utf-8",
        include_bytes!("../assets/index.html"),
    ),
    (
        "/viewer.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/viewer.js"),
    ),
    (
        "/three/three.module.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/three/three.module.min.js"),
    ),
    (
        "/three/three.core.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/three/three.core.min.js"),
    ),
    (
        "/three/OrbitControls.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/three/OrbitControls.js"),
    ),
    (
        "/three/LICENSE",
        "text/plain; charset=utf-8",
        include_bytes!("../assets/three/LICENSE"),
    ),
];

impl State<'_> {
    /// The answer to `request` (`HEAD` gets the same head, without the body).
    fn reply(&self, request: &http::Request) -> Reply<'_> {
        if !matches!(request.method.as_str(), "GET" | "HEAD") {
            return Reply::error(405, "only GET");
        }
        if !self.host_allowed(request) {
            return Reply::error(403, "the viewer answers only to 127.0.0.1 and localhost");
        }
        let target = request.target.as_str();
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if let Some((_, content_type, bytes)) = ASSETS.iter().find(|a| a.0 == path) {
            return Reply::ok(content_type, *bytes);
        }
        let params = Params::parse(query);
        let result = match path {
            "/api/meta" => Ok(Reply::ok("application/json", self.meta.as_bytes())),
            "/api/chunk" => self.chunk(&params),
            "/api/path" => self.path(&params),
            "/api/scene" => match &self.scene {
                Some(bytes) => Ok(Reply::ok("application/octet-stream", bytes.as_slice())),
                None => Err(Reply::error(404, "no scene overlay (start with --scene)")),
            },
            _ => Err(Reply::error(404, format!("nothing at {path}"))),
        };
        result.unwrap_or_else(|e| e)
    }

    /// The `Host` header must name the loopback address or `localhost` (with our port).
    fn host_allowed(&self, request: &http::Request) -> bool {
        let Some(host) = request.header("Host").map(str::to_ascii_lowercase) else {
            // HTTP/1.0 clients may send none.
            return true;
        };
        let port = self.port.to_string();
        let (name, p) = host.rsplit_once(':').unwrap_or((host.as_str(), "80"));
        p == port && matches!(name, "127.0.0.1" | "localhost")
    }

    fn chunk(&self, params: &Params) -> Result<Reply<'static>, Reply<'static>> {
        let cx: i32 = params.number("cx")?;
        let cy: i32 = params.number("cy")?;
        let lod: u8 = match params.get("lod") {
            Some(_) => params.number("lod")?,
            None => 0,
        };
        if lod >= chunks::LEVELS {
            return Err(Reply::error(
                400,
                format!("lod must be below {}", chunks::LEVELS),
            ));
        }
        let chunk = self
            .layout
            .chunk(cx, cy)
            .ok_or_else(|| Reply::error(404, format!("no polygon in chunk {cx},{cy}")))?;
        let hide: u64 = match params.get("hide") {
            Some(_) => params.number("hide")?,
            None => 0,
        };
        let shown: Vec<u32>;
        let polys = if hide == 0 {
            &chunk.polys
        } else {
            let hidden = |p: u32| {
                let id = self.mesh.polys[p as usize].area_id.to_native();
                id < 64 && hide & (1 << id) != 0
            };
            shown = chunk
                .polys
                .iter()
                .copied()
                .filter(|&p| !hidden(p))
                .collect();
            &shown
        };
        let g = chunks::chunk_geometry(self.mesh, polys, self.layout.edge, lod);
        Ok(Reply::ok(
            "application/octet-stream",
            chunks::encode_chunk(&g, lod),
        ))
    }

    fn path(&self, params: &Params) -> Result<Reply<'static>, Reply<'static>> {
        let from = params.point("from")?;
        let to = params.point("to")?;
        let mut filter = tessera_query::Filter::default();
        for name in params.get("avoid").unwrap_or("").split(',') {
            if !name.is_empty() {
                filter = filter.avoid(name);
            }
        }
        let costs = self
            .query
            .costs(&filter)
            .map_err(|e| Reply::error(400, e.to_string()))?;
        let answer = self
            .query
            .path_costed(from, to, tessera_query::Planner::Hierarchical, &costs);
        let body = serde_json::to_vec(&answer)
            .map_err(|e| Reply::error(500, format!("cannot encode the answer: {e}")))?;
        Ok(Reply::ok("application/json", body))
    }
}

/// A request's query string, percent-decoded.
struct Params(Vec<(String, String)>);

impl Params {
    fn parse(query: &str) -> Params {
        Params(
            query
                .split('&')
                .filter(|s| !s.is_empty())
                .map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    (percent_decode(k), percent_decode(v))
                })
                .collect(),
        )
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn required(&self, key: &str) -> Result<&str, Reply<'static>> {
        self.get(key)
            .ok_or_else(|| Reply::error(400, format!("missing parameter {key}")))
    }

    fn number<T: std::str::FromStr>(&self, key: &str) -> Result<T, Reply<'static>> {
        let v = self.required(key)?;
        v.trim()
            .parse()
            .map_err(|_| Reply::error(400, format!("{key}={v:?} is not a valid number")))
    }

    /// `X,Y,Z`: three finite numbers ([`tessera_geom::parse_point`]).
    fn point(&self, key: &str) -> Result<[f64; 3], Reply<'static>> {
        let v = self.required(key)?;
        tessera_geom::parse_point(v)
            .map_err(|_| Reply::error(400, format!("{key}={v:?}: expected X,Y,Z")))
    }
}

/// `%XX` escapes and `+` decoded; invalid escapes are kept as they are.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
