//! The navmesh cut into square plan chunks, and each chunk's geometry at three levels of
//! detail, encoded for the page.
//!
//! A polygon belongs to the chunk that holds its plan centroid (the average of its corners),
//! so every polygon is in exactly one chunk. Chunk `(cx, cy)` covers the internal-frame plan
//! square `[cx * edge, (cx + 1) * edge) x [cy * edge, (cy + 1) * edge)`.
//!
//! Levels of detail: level 0 is every polygon as a fan of triangles, with its edges, portals
//! and links. Levels 1 and 2 are vertex clustering (all corners that fall into one cube of
//! side `edge / 64`, resp. `edge / 16`, become the cube's first corner; triangles that
//! collapse are dropped, duplicates kept once), links only: a far chunk costs a fraction of
//! its triangles and no seam opens between regions, since the clustering ignores them.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tessera_export::region_colour;
use tessera_navmesh::{ArchivedNavMesh, NONE};

/// Levels of detail served: 0 (full) to `LEVELS - 1` (coarsest).
pub const LEVELS: u8 = 3;

/// `b"TSCK"`: the first four bytes of an encoded chunk.
pub const CHUNK_MAGIC: [u8; 4] = *b"TSCK";

/// Chunks are never smaller than this (world units) unless asked.
const MIN_AUTO_EDGE: f32 = 32.0;
/// The automatic edge gives at most this many chunks along the longer side of the world.
const MAX_AUTO_CHUNKS: f32 = 16.0;

/// One non-empty chunk.
#[derive(Clone, Debug)]
pub struct Chunk {
    pub cx: i32,
    pub cy: i32,
    /// Its polygons, in mesh order.
    pub polys: Vec<u32>,
    /// Bounds of its polygons' corners (internal frame).
    pub min: [f32; 3],
    pub max: [f32; 3],
}

/// The chunk grid of a navmesh.
#[derive(Debug)]
pub struct Layout {
    /// Chunk edge in world units.
    pub edge: f32,
    /// Non-empty chunks, sorted by (cy, cx).
    pub chunks: Vec<Chunk>,
    index: HashMap<(i32, i32), usize>,
}

/// The chunk edge used when none is asked: at least 32 m, and at most 16 chunks along the
/// longer plan side of the mesh.
pub fn auto_edge(mesh: &ArchivedNavMesh) -> f32 {
    let lo = mesh.bounds_min.map(|c| c.to_native());
    let hi = mesh.bounds_max.map(|c| c.to_native());
    let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]);
    if extent.is_finite() {
        (extent / MAX_AUTO_CHUNKS).max(MIN_AUTO_EDGE)
    } else {
        MIN_AUTO_EDGE
    }
}

impl Layout {
    /// Assigns every polygon of `mesh` to its chunk. `edge` must be positive and finite.
    pub fn new(mesh: &ArchivedNavMesh, edge: f32) -> Layout {
        let mut index: HashMap<(i32, i32), usize> = HashMap::default();
        let mut chunks: Vec<Chunk> = Vec::new();
        for p in 0..mesh.polys.len() as u32 {
            let (mut sum, mut n) = ([0.0f64; 2], 0usize);
            let (mut min, mut max) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
            for v in mesh.poly_vert_ids(p) {
                let q = mesh.vert(v);
                sum[0] += q[0] as f64;
                sum[1] += q[1] as f64;
                n += 1;
                for k in 0..3 {
                    min[k] = min[k].min(q[k]);
                    max[k] = max[k].max(q[k]);
                }
            }
            if n == 0 {
                continue;
            }
            let cell = |s: f64| {
                let c = (s / n as f64 / edge as f64).floor();
                c.clamp(i32::MIN as f64, i32::MAX as f64) as i32
            };
            let key = (cell(sum[0]), cell(sum[1]));
            let slot = *index.entry(key).or_insert_with(|| {
                chunks.push(Chunk {
                    cx: key.0,
                    cy: key.1,
                    polys: Vec::new(),
                    min: [f32::INFINITY; 3],
                    max: [f32::NEG_INFINITY; 3],
                });
                chunks.len() - 1
            });
            let chunk = &mut chunks[slot];
            chunk.polys.push(p);
            for k in 0..3 {
                chunk.min[k] = chunk.min[k].min(min[k]);
                chunk.max[k] = chunk.max[k].max(max[k]);
            }
        }
        chunks.sort_by_key(|c| (c.cy, c.cx));
        let index = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.cx, c.cy), i))
            .collect();
        Layout {
            edge,
            chunks,
            index,
        }
    }

    /// The chunk at `(cx, cy)`, if it holds any polygon.
    pub fn chunk(&self, cx: i32, cy: i32) -> Option<&Chunk> {
        self.index.get(&(cx, cy)).map(|&i| &self.chunks[i])
    }
}

/// A chunk's geometry, ready to encode. Positions are in the internal frame.
#[derive(Debug, Default)]
pub struct ChunkGeometry {
    pub positions: Vec<[f32; 3]>,
    /// Per position: the region colour (RGB).
    pub colours: Vec<[u8; 3]>,
    /// Triangles over `positions`, counter-clockwise from above.
    pub triangles: Vec<[u32; 3]>,
    /// Every polygon edge once (level 0 only).
    pub edges: Vec<[[f32; 3]; 2]>,
    /// Every portal once, listed by its lower-numbered polygon (level 0 only).
    pub portals: Vec<[[f32; 3]; 2]>,
    /// Links leaving the chunk's polygons.
    pub links: Vec<[[f32; 3]; 2]>,
}

/// Vertex clustering cube side at `lod` for chunks of `edge` (0: none).
fn cluster_size(edge: f32, lod: u8) -> f32 {
    match lod {
        0 => 0.0,
        1 => edge / 64.0,
        _ => edge / 16.0,
    }
}

/// The geometry of `polys` at level of detail `lod` (clamped to the coarsest level).
pub fn chunk_geometry(mesh: &ArchivedNavMesh, polys: &[u32], edge: f32, lod: u8) -> ChunkGeometry {
    let lod = lod.min(LEVELS - 1);
    let q = cluster_size(edge, lod);
    let mut g = ChunkGeometry::default();
    // Mesh vertex -> cluster (at level 0, its own), cluster -> representative position,
    // (cluster, region) -> output vertex.
    let mut cluster_of: HashMap<u32, u32> = HashMap::default();
    let mut cluster_key: HashMap<[i64; 3], u32> = HashMap::default();
    let mut cluster_pos: Vec<[f32; 3]> = Vec::new();
    let mut out: HashMap<(u32, u32), u32> = HashMap::default();
    let mut seen: HashSet<[u32; 3]> = HashSet::default();
    let mut corners: Vec<u32> = Vec::new();
    for &p in polys {
        let region = mesh.polys[p as usize].region.to_native();
        let rgb = region_colour(region).0;
        corners.clear();
        for v in mesh.poly_vert_ids(p) {
            let cluster = *cluster_of.entry(v).or_insert_with(|| {
                let pos = mesh.vert(v);
                let key = if q > 0.0 {
                    pos.map(|c| (c as f64 / q as f64).floor() as i64)
                } else {
                    [v as i64, 0, 0]
                };
                *cluster_key.entry(key).or_insert_with(|| {
                    cluster_pos.push(pos);
                    (cluster_pos.len() - 1) as u32
                })
            });
            let id = *out.entry((cluster, region)).or_insert_with(|| {
                g.positions.push(cluster_pos[cluster as usize]);
                g.colours.push(rgb);
                (g.positions.len() - 1) as u32
            });
            corners.push(id);
        }
        for k in 1..corners.len().saturating_sub(1) {
            let t = [corners[0], corners[k], corners[k + 1]];
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                continue;
            }
            if lod > 0 {
                let mut key = t;
                key.sort_unstable();
                if !seen.insert(key) {
                    continue;
                }
            }
            g.triangles.push(t);
        }
        if lod == 0 {
            let ids: Vec<u32> = mesh.poly_vert_ids(p).collect();
            for (k, n) in mesh.poly_neighbours(p).enumerate() {
                let seg = [mesh.vert(ids[k]), mesh.vert(ids[(k + 1) % ids.len()])];
                if n == NONE || n > p {
                    g.edges.push(seg);
                }
                if n != NONE && n > p {
                    g.portals.push(seg);
                }
            }
        }
        for l in mesh.poly_links(p) {
            g.links
                .push([l.a.map(|c| c.to_native()), l.b.map(|c| c.to_native())]);
        }
    }
    g
}

/// Encodes a chunk for the page, little-endian: `TSCK`, then eight u32 (format version 1,
/// level of detail, vertices, triangles, edges, portals, links, 0), positions (3 f32 each),
/// triangle indices (3 u32 each), edge, portal and link segments (6 f32 each), colours
/// (RGBA bytes, alpha 255). Every section starts at a multiple of 4 bytes.
pub fn encode_chunk(g: &ChunkGeometry, lod: u8) -> Vec<u8> {
    let segments = g.edges.len() + g.portals.len() + g.links.len();
    let mut b =
        Vec::with_capacity(36 + g.positions.len() * 16 + g.triangles.len() * 12 + segments * 24);
    b.extend_from_slice(&CHUNK_MAGIC);
    for v in [
        1,
        lod as u32,
        g.positions.len() as u32,
        g.triangles.len() as u32,
        g.edges.len() as u32,
        g.portals.len() as u32,
        g.links.len() as u32,
        0,
    ] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    let floats = |b: &mut Vec<u8>, xs: &mut dyn Iterator<Item = f32>| {
        for x in xs {
            b.extend_from_slice(&x.to_le_bytes());
        }
    };
    floats(&mut b, &mut g.positions.iter().flatten().copied());
    for i in g.triangles.iter().flatten() {
        b.extend_from_slice(&i.to_le_bytes());
    }
    for segs in [&g.edges, &g.portals, &g.links] {
        floats(&mut b, &mut segs.iter().flatten().flatten().copied());
    }
    for c in &g.colours {
        b.extend_from_slice(&[c[0], c[1], c[2], 255]);
    }
    b
}
