//! The source scene as a faint overlay: read through `tessera-ingest`, moved into the
//! navmesh's internal frame, and decimated by vertex clustering until it holds at most a
//! given number of triangles, so that a city of tens of millions of triangles still loads in
//! a browser.
//!
//! Clustering starts with cubes of a 65536th of the scene's extent (which only merges
//! duplicate corners). Whenever the kept triangles pass twice the limit, the cube side doubles
//! and what is kept is clustered again; at the end it doubles until the limit holds. A
//! cluster's position is the first corner that fell into it.

use std::path::Path;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tessera_ingest::{open_scene, IngestError};
use tessera_navmesh::Frame;

/// `b"TSSC"`: the first four bytes of an encoded overlay.
pub const SCENE_MAGIC: [u8; 4] = *b"TSSC";

/// The overlay the page draws.
#[derive(Debug)]
pub struct Overlay {
    /// Triangles in the source scene (degenerate ones included).
    pub source_triangles: u64,
    /// Vertices and triangles kept (internal frame).
    pub positions: Vec<[f32; 3]>,
    pub triangles: Vec<[u32; 3]>,
    /// The final clustering cube side, world units.
    pub cluster: f64,
}

/// Vertex clustering with a cube side that only grows.
struct Clusters {
    origin: [f64; 3],
    side: f64,
    keys: HashMap<[i64; 3], u32>,
    positions: Vec<[f64; 3]>,
    triangles: Vec<[u32; 3]>,
    seen: HashSet<[u32; 3]>,
}

impl Clusters {
    fn new(origin: [f64; 3], side: f64) -> Clusters {
        Clusters {
            origin,
            side,
            keys: HashMap::default(),
            positions: Vec::new(),
            triangles: Vec::new(),
            seen: HashSet::default(),
        }
    }

    fn vertex(&mut self, p: [f64; 3]) -> u32 {
        let key = [0, 1, 2].map(|k| ((p[k] - self.origin[k]) / self.side).floor() as i64);
        let positions = &mut self.positions;
        *self.keys.entry(key).or_insert_with(|| {
            positions.push(p);
            (positions.len() - 1) as u32
        })
    }

    fn add(&mut self, t: [[f64; 3]; 3]) {
        let ids = t.map(|p| self.vertex(p));
        if ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
            return;
        }
        let mut key = ids;
        key.sort_unstable();
        if self.seen.insert(key) {
            self.triangles.push(ids);
        }
    }

    /// Doubles the cube side and clusters what is kept again.
    fn coarsen(&mut self) {
        let (positions, triangles) = (
            std::mem::take(&mut self.positions),
            std::mem::take(&mut self.triangles),
        );
        self.keys.clear();
        self.seen.clear();
        self.side *= 2.0;
        for t in triangles {
            self.add(t.map(|i| positions[i as usize]));
        }
    }
}

/// Reads the scene at `path` (in the same coordinates and up axis as the bake behind
/// `frame`) and keeps at most `limit` triangles of it.
pub fn load(path: &Path, frame: &Frame, limit: usize) -> Result<Overlay, IngestError> {
    let scratch = tempfile::tempdir().map_err(|source| IngestError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let mut source = open_scene(path, frame.up_axis(), scratch.path())?;
    let bounds = source.bounds();
    let extent = (0..3)
        .map(|k| bounds.max[k] - bounds.min[k])
        .fold(0.0f64, f64::max);
    let side = if extent.is_finite() && extent > 0.0 {
        extent / 65536.0
    } else {
        1.0
    };
    let mut clusters = Clusters::new(bounds.min, side);
    let mut source_triangles = 0u64;
    let limit = limit.max(1);
    source.for_each_triangle(&mut |t| {
        source_triangles += 1;
        clusters.add(t);
        if clusters.triangles.len() > 2 * limit {
            clusters.coarsen();
        }
        Ok(())
    })?;
    while clusters.triangles.len() > limit {
        clusters.coarsen();
    }
    let o = frame.origin;
    let positions = clusters
        .positions
        .iter()
        .map(|p| [0, 1, 2].map(|k| (p[k] - o[k]) as f32))
        .collect();
    Ok(Overlay {
        source_triangles,
        positions,
        triangles: clusters.triangles,
        cluster: clusters.side,
    })
}

/// Encodes an overlay for the page, little-endian: `TSSC`, u32 vertex and triangle counts,
/// positions (3 f32 each), triangle indices (3 u32 each).
pub fn encode_overlay(o: &Overlay) -> Vec<u8> {
    let mut b = Vec::with_capacity(12 + o.positions.len() * 12 + o.triangles.len() * 12);
    b.extend_from_slice(&SCENE_MAGIC);
    b.extend_from_slice(&(o.positions.len() as u32).to_le_bytes());
    b.extend_from_slice(&(o.triangles.len() as u32).to_le_bytes());
    for c in o.positions.iter().flatten() {
        b.extend_from_slice(&c.to_le_bytes());
    }
    for i in o.triangles.iter().flatten() {
        b.extend_from_slice(&i.to_le_bytes());
    }
    b
}
