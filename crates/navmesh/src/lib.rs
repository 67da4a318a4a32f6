//! The navmesh file (`navmesh.tsn`): what a bake hands to path-finding.
//!
//! Convex polygons (counter-clockwise seen from above) over shared vertices, each edge naming
//! the polygon across it (a portal) or none; links between polygons that do not share an edge
//! (stairs); per polygon a few detail triangles for point heights; and a uniform grid over the
//! polygons' plan bounding boxes for nearest-polygon lookups.
//!
//! Coordinates are tessera's internal frame: Z up, world units, rebased on [`Frame::origin`].
//! [`Frame::to_internal`] and [`Frame::to_scene`] convert from and to the source scene's own
//! coordinates and up axis.
//!
//! **The file** is a 64-byte header (magic, format version, payload length, xxh3 checksum of
//! everything else) followed by an rkyv archive of [`NavMesh`]. [`NavMeshFile::open`] memory-maps it and
//! checks, in order: the header, the checksum (a flipped byte is refused), rkyv's structural
//! validation (a hostile file cannot make an access go out of bounds), and [`validate`]: every
//! index in range, every number finite. After that, access is zero-copy.
//!
//! [`fuzzing`] runs that loading on arbitrary bytes for the fuzz targets (`fuzz/`) and the
//! regression tests that replay what they found.
//!
//! This crate depends on no builder crate: the query library reads files through it alone.

mod assemble;
mod build;
pub mod fuzzing;
mod links;

use std::fs::File;
use std::path::{Path, PathBuf};

use rkyv::rancor;
use rkyv::util::AlignedVec;
use rkyv::{Archive, Deserialize, Serialize};
use tessera_geom::UpAxis;

pub use assemble::{Assembled, Assembler};
pub use build::{build, build_reachable, BuildError, InputPoly, MeshInput, Pruned};

/// Magic bytes that open every navmesh file.
pub const MAGIC: &[u8; 8] = b"TSNAVMSH";
/// Format version; bumped whenever [`NavMesh`] changes.
pub const VERSION: u32 = 4;
/// Header length; the archive starts here (a multiple of rkyv's alignment).
pub const HEADER_LEN: usize = 64;
/// Marks a detail triangle's corner as an index into [`NavMesh::detail_verts`] (and, in
/// [`MeshInput`], into `detail_verts` there) rather than into the polygon vertices.
pub const DETAIL: u32 = 1 << 31;
/// "No polygon" in [`NavMesh::poly_neis`] and elsewhere.
pub const NONE: u32 = u32::MAX;

/// Where the mesh sits in the scene.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Frame {
    /// The scene point (Z-up, world units) that internal coordinates are relative to.
    pub origin: [f64; 3],
    /// The source scene's up axis ([`UpAxis::code`]).
    pub up: u8,
    /// Voxel size the mesh was baked at (world units).
    pub cell_size: f32,
    pub cell_height: f32,
    /// The agent it was baked for (world units).
    pub agent_height: f32,
    pub agent_radius: f32,
    pub agent_climb: f32,
}

/// A convex polygon.
#[repr(C)]
#[derive(
    Archive,
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    bytemuck::Pod,
    bytemuck::Zeroable,
)]
pub struct Poly {
    /// Its vertices: `poly_verts[first .. first + count]`; edge `i` runs from vertex `i` to
    /// vertex `i + 1`, and `poly_neis[first + i]` names the polygon across it.
    pub first: u32,
    pub count: u32,
    /// Its detail triangles: `detail_tris[tri_first .. tri_first + tri_count]`.
    pub tri_first: u32,
    pub tri_count: u32,
    /// Its links: `links[link_first .. link_first + link_count]`.
    pub link_first: u32,
    pub link_count: u32,
    /// The merged region it belongs to (dense index).
    pub region: u32,
    /// Plan area (world units squared).
    pub area: f32,
}

/// A connection between two polygons that share no edge (a stair step up to the climb height).
/// Stored once per direction; `a`..`b` is the crossing segment, on the `from` side.
#[derive(Archive, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct Link {
    pub from: u32,
    pub to: u32,
    pub a: [f32; 3],
    pub b: [f32; 3],
}

/// A uniform grid over the plan: `items[start[c] .. start[c + 1]]` are the polygons whose plan
/// bounding box meets cell `c = y * width + x`.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Grid {
    pub min: [f32; 2],
    pub cell: f32,
    pub width: u32,
    pub height: u32,
    pub start: Vec<u32>,
    pub items: Vec<u32>,
}

/// Counts a bake reports and `tessera info` prints.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub regions: u32,
    /// Reflex vertices of the region outlines (what a convex partition must resolve).
    pub notches: u64,
    /// Regions, their polygons and their notches by how many notches a region has.
    pub by_notches: NotchGroups,
    pub portals: u32,
    pub links: u32,
    pub walkable_area: f64,
    /// Polygons dropped as unreachable from the bake's seed points, and the islands they
    /// formed (0 when no seeds were given).
    pub polygons_removed: u64,
    pub islands_removed: u64,
}

/// The notch counts [`NotchGroups`] groups regions by: `[first, last]` (inclusive). A region
/// without a notch is convex with no hole, one polygon whatever the partition; seed 002's
/// floor plans have 15 to 106 notches each, so the last group is the one to set against its
/// Table 1.
pub const NOTCH_GROUPS: [(u64, u64); 6] = [(0, 0), (1, 1), (2, 2), (3, 4), (5, 14), (15, u64::MAX)];

/// Regions, polygons and notches per group of [`NOTCH_GROUPS`] (polygons counted before
/// reachability pruning): cells per notch of a group = `polygons[g] / notches[g]`.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct NotchGroups {
    pub regions: [u64; NOTCH_GROUPS.len()],
    pub polygons: [u64; NOTCH_GROUPS.len()],
    pub notches: [u64; NOTCH_GROUPS.len()],
}

impl NotchGroups {
    /// The group of a region with `notches` notches.
    pub fn group(notches: u64) -> usize {
        NOTCH_GROUPS
            .iter()
            .position(|&(_, last)| notches <= last)
            .expect("the last group is open")
    }

    /// Counts one region.
    pub fn add(&mut self, notches: u64, polygons: u64) {
        let g = Self::group(notches);
        self.regions[g] += 1;
        self.polygons[g] += polygons;
        self.notches[g] += notches;
    }

    /// Adds another count to this one.
    pub fn merge(&mut self, other: &NotchGroups) {
        for (mine, theirs) in [
            (&mut self.regions, &other.regions),
            (&mut self.polygons, &other.polygons),
            (&mut self.notches, &other.notches),
        ] {
            mine.iter_mut().zip(theirs).for_each(|(a, b)| *a += b);
        }
    }
}

impl ArchivedNotchGroups {
    /// The counts, out of the archive.
    pub fn to_native(&self) -> NotchGroups {
        NotchGroups {
            regions: self.regions.map(|x| x.to_native()),
            polygons: self.polygons.map(|x| x.to_native()),
            notches: self.notches.map(|x| x.to_native()),
        }
    }
}

/// The whole navigation mesh.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct NavMesh {
    pub frame: Frame,
    /// Internal-frame bounds of the vertices.
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    pub verts: Vec<[f32; 3]>,
    pub polys: Vec<Poly>,
    pub poly_verts: Vec<u32>,
    pub poly_neis: Vec<u32>,
    /// Detail triangles: corners are indices into `verts`, or, with the [`DETAIL`] bit, into
    /// `detail_verts`.
    pub detail_tris: Vec<[u32; 3]>,
    /// Points added for height detail (seed 004), internal frame.
    pub detail_verts: Vec<[f32; 3]>,
    pub links: Vec<Link>,
    pub grid: Grid,
    pub stats: Stats,
}

impl Frame {
    pub fn up_axis(&self) -> UpAxis {
        UpAxis::from_code(self.up).unwrap_or(UpAxis::Z)
    }

    /// A scene point (its own coordinates and up axis) in the internal frame.
    pub fn to_internal(&self, p: [f64; 3]) -> [f32; 3] {
        let z = self.up_axis().to_z_up(p);
        [
            (z[0] - self.origin[0]) as f32,
            (z[1] - self.origin[1]) as f32,
            (z[2] - self.origin[2]) as f32,
        ]
    }

    /// An internal point in the scene's coordinates and up axis.
    pub fn to_scene(&self, p: [f32; 3]) -> [f64; 3] {
        self.up_axis().from_z_up([
            p[0] as f64 + self.origin[0],
            p[1] as f64 + self.origin[1],
            p[2] as f64 + self.origin[2],
        ])
    }
}

impl ArchivedFrame {
    /// The native [`Frame`] (a handful of numbers).
    pub fn native(&self) -> Frame {
        Frame {
            origin: self.origin.map(|v| v.to_native()),
            up: self.up,
            cell_size: self.cell_size.to_native(),
            cell_height: self.cell_height.to_native(),
            agent_height: self.agent_height.to_native(),
            agent_radius: self.agent_radius.to_native(),
            agent_climb: self.agent_climb.to_native(),
        }
    }
}

/// Why a navmesh could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum NavMeshError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{what}: not a tessera navmesh (bad magic)")]
    Magic { what: String },
    #[error("{what}: navmesh format version {found}, this build reads {VERSION}")]
    Version { what: String, found: u32 },
    #[error("{what}: truncated (header says {expected} payload bytes, {found} present)")]
    Truncated {
        what: String,
        expected: u64,
        found: u64,
    },
    #[error("{what}: checksum mismatch (the file is corrupt)")]
    Checksum { what: String },
    #[error("{what}: malformed archive: {detail}")]
    Archive { what: String, detail: String },
    #[error("{what}: invalid navmesh: {detail}")]
    Invalid { what: String, detail: String },
}

/// The file's bytes: header, then the archive.
pub fn encode(mesh: &NavMesh) -> Vec<u8> {
    encode_keyed(mesh, 0)
}

/// [`encode`], recording in the header the key of the inputs and settings the mesh was made
/// from (the bake uses it to know when the file can be reused).
pub fn encode_keyed(mesh: &NavMesh, key: u64) -> Vec<u8> {
    let (header, payload) = encode_parts(mesh, key);
    [header.as_slice(), &payload].concat()
}

/// The file as its header and its payload, for writing without a joined copy: the payload
/// is the archive, the header names its length and checksums both.
pub fn encode_parts(mesh: &NavMesh, key: u64) -> ([u8; HEADER_LEN], AlignedVec) {
    let payload = rkyv::to_bytes::<rancor::Error>(mesh).expect("serializing to memory cannot fail");
    let digest = xxhash_rust::xxh3::xxh3_64(&payload);
    (header(payload.len() as u64, digest, key, 0), payload)
}

/// The header of a file whose payload has `len` bytes and xxh3 `digest`.
///
/// Layout (little-endian): magic (0..8), format version (8..12), payload length (16..24),
/// checksum (24..32), key of the inputs and settings (32..40), tile edge in cells (40..44; 0
/// when unknown; tiles start at the internal frame's plan origin). The checksum is the xxh3
/// of the header without its checksum field followed by the payload's own xxh3, so a writer
/// can hash the payload as it streams it out.
pub(crate) fn header(len: u64, digest: u64, key: u64, tile_cells: u32) -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[16..24].copy_from_slice(&len.to_le_bytes());
    header[32..40].copy_from_slice(&key.to_le_bytes());
    header[40..44].copy_from_slice(&tile_cells.to_le_bytes());
    let sum = seal(&header, digest);
    header[24..32].copy_from_slice(&sum.to_le_bytes());
    header
}

fn seal(header: &[u8], payload_digest: u64) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&header[..24]);
    h.update(&header[32..HEADER_LEN]);
    h.update(&payload_digest.to_le_bytes());
    h.digest()
}

/// The key in a file's header (see [`encode_keyed`]), read without checking the rest.
pub fn read_key(path: &Path) -> Result<u64, NavMeshError> {
    use std::io::Read;
    let mut header = [0u8; HEADER_LEN];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .map_err(|source| NavMeshError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if &header[..8] != MAGIC {
        return Err(NavMeshError::Magic {
            what: path.display().to_string(),
        });
    }
    Ok(u64::from_le_bytes(header[32..40].try_into().unwrap()))
}

/// Checks a file's header and checksum by reading it through once (no memory map); returns
/// its key. What [`NavMeshFile::open`] checks on top (structure, indices) needs the whole
/// archive in view and is left to readers.
pub fn check_file(path: &Path) -> Result<u64, NavMeshError> {
    use std::io::Read;
    let io = |source| NavMeshError::Io {
        path: path.to_path_buf(),
        source,
    };
    let what = path.display().to_string();
    let mut file = std::io::BufReader::with_capacity(1 << 16, File::open(path).map_err(io)?);
    let mut header = [0u8; HEADER_LEN];
    file.read_exact(&mut header)
        .map_err(|_| NavMeshError::Magic { what: what.clone() })?;
    check_kind(&header, &what)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut found = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        found += n as u64;
    }
    check_sum(&header, found, h.digest(), &what)?;
    Ok(u64::from_le_bytes(header[32..40].try_into().unwrap()))
}

/// Magic and format version of a header.
fn check_kind(header: &[u8], what: &str) -> Result<(), NavMeshError> {
    if header.len() < HEADER_LEN || &header[..8] != MAGIC {
        return Err(NavMeshError::Magic { what: what.into() });
    }
    let version = u32::from_le_bytes(header[8..12].try_into().unwrap());
    if version != VERSION {
        return Err(NavMeshError::Version {
            what: what.into(),
            found: version,
        });
    }
    Ok(())
}

/// Payload length and checksum of a header against the payload's `found` length and xxh3.
fn check_sum(header: &[u8], found: u64, digest: u64, what: &str) -> Result<(), NavMeshError> {
    let u64_at = |o: usize| u64::from_le_bytes(header[o..o + 8].try_into().unwrap());
    if found != u64_at(16) {
        return Err(NavMeshError::Truncated {
            what: what.into(),
            expected: u64_at(16),
            found,
        });
    }
    if seal(header, digest) != u64_at(24) {
        return Err(NavMeshError::Checksum { what: what.into() });
    }
    Ok(())
}

/// Checks the header and checksum; returns the archive bytes.
fn payload<'a>(bytes: &'a [u8], what: &str) -> Result<&'a [u8], NavMeshError> {
    check_kind(bytes, what)?;
    let body = &bytes[HEADER_LEN..];
    check_sum(
        bytes,
        body.len() as u64,
        xxhash_rust::xxh3::xxh3_64(body),
        what,
    )?;
    Ok(body)
}

/// Validates bytes (header, checksum, structure, indices) and gives access to the mesh.
/// `bytes` must be 16-byte aligned (a memory map or an [`AlignedVec`] are).
pub fn access<'a>(bytes: &'a [u8], what: &str) -> Result<&'a ArchivedNavMesh, NavMeshError> {
    let body = payload(bytes, what)?;
    let mesh = rkyv::access::<ArchivedNavMesh, rancor::Error>(body).map_err(|e| {
        NavMeshError::Archive {
            what: what.into(),
            detail: e.to_string(),
        }
    })?;
    validate(mesh).map_err(|detail| NavMeshError::Invalid {
        what: what.into(),
        detail,
    })?;
    Ok(mesh)
}

/// Copies bytes into an aligned buffer (for meshes held in memory, as tests do).
pub fn aligned(bytes: &[u8]) -> AlignedVec {
    let mut v = AlignedVec::with_capacity(bytes.len());
    v.extend_from_slice(bytes);
    v
}

/// Every index in range and every number finite: what queries rely on to never panic.
pub fn validate(m: &ArchivedNavMesh) -> Result<(), String> {
    let nv = m.verts.len() as u64;
    let np = m.polys.len() as u64;
    for (i, v) in m.verts.iter().enumerate() {
        if v.iter().any(|c| !c.to_native().is_finite()) {
            return Err(format!("vertex {i} is not finite"));
        }
    }
    if m.poly_verts.len() != m.poly_neis.len() {
        return Err("poly_verts and poly_neis differ in length".into());
    }
    let in_range = |first: u32, count: u32, len: usize| first as u64 + count as u64 <= len as u64;
    for (i, p) in m.polys.iter().enumerate() {
        let (first, count) = (p.first.to_native(), p.count.to_native());
        if count < 3 || !in_range(first, count, m.poly_verts.len()) {
            return Err(format!("polygon {i}: vertex range out of bounds"));
        }
        if !in_range(
            p.tri_first.to_native(),
            p.tri_count.to_native(),
            m.detail_tris.len(),
        ) {
            return Err(format!("polygon {i}: triangle range out of bounds"));
        }
        if !in_range(
            p.link_first.to_native(),
            p.link_count.to_native(),
            m.links.len(),
        ) {
            return Err(format!("polygon {i}: link range out of bounds"));
        }
        if !p.area.to_native().is_finite() {
            return Err(format!("polygon {i}: area is not finite"));
        }
        for k in first..first + count {
            if m.poly_verts[k as usize].to_native() as u64 >= nv {
                return Err(format!("polygon {i}: vertex index out of range"));
            }
            let n = m.poly_neis[k as usize].to_native();
            if n != NONE && n as u64 >= np {
                return Err(format!("polygon {i}: neighbour index out of range"));
            }
        }
    }
    let ndv = m.detail_verts.len() as u64;
    for (i, v) in m.detail_verts.iter().enumerate() {
        if v.iter().any(|c| !c.to_native().is_finite()) {
            return Err(format!("detail vertex {i} is not finite"));
        }
    }
    for (i, t) in m.detail_tris.iter().enumerate() {
        if t.iter().any(|v| {
            let v = v.to_native();
            if v & DETAIL != 0 {
                (v & !DETAIL) as u64 >= ndv
            } else {
                v as u64 >= nv
            }
        }) {
            return Err(format!("detail triangle {i}: vertex index out of range"));
        }
    }
    for (i, l) in m.links.iter().enumerate() {
        if l.from.to_native() as u64 >= np || l.to.to_native() as u64 >= np {
            return Err(format!("link {i}: polygon index out of range"));
        }
        if l.a
            .iter()
            .chain(l.b.iter())
            .any(|c| !c.to_native().is_finite())
        {
            return Err(format!("link {i}: endpoint is not finite"));
        }
    }
    let g = &m.grid;
    // A grid has a cell at least: `grid_cells` clamps to the last row and column.
    if g.width.to_native() == 0 || g.height.to_native() == 0 {
        return Err("grid: no cells".into());
    }
    let cells = g.width.to_native() as u64 * g.height.to_native() as u64;
    if g.start.len() as u64 != cells + 1 {
        return Err("grid: start table does not match its size".into());
    }
    if g.cell.to_native().partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        || g.min.iter().any(|c| !c.to_native().is_finite())
    {
        return Err("grid: bad cell size or origin".into());
    }
    let mut prev = 0u32;
    for s in g.start.iter() {
        let s = s.to_native();
        if s < prev || s as usize > g.items.len() {
            return Err("grid: start table out of order or out of range".into());
        }
        prev = s;
    }
    if g.items.iter().any(|p| p.to_native() as u64 >= np) {
        return Err("grid: polygon index out of range".into());
    }
    Ok(())
}

/// A navmesh file, memory-mapped and validated.
pub struct NavMeshFile {
    map: memmap2::Mmap,
    path: PathBuf,
}

impl NavMeshFile {
    /// Maps and validates a file; a corrupt or hostile file is refused with the reason.
    pub fn open(path: impl AsRef<Path>) -> Result<NavMeshFile, NavMeshError> {
        let path = path.as_ref().to_path_buf();
        let io = |source| NavMeshError::Io {
            path: path.clone(),
            source,
        };
        let file = File::open(&path).map_err(io)?;
        // SAFETY: the map is read-only and private to this process. A file changed underneath
        // it would be a concurrent writer ignoring tessera's atomic-rename protocol; the bake
        // never rewrites a navmesh in place.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        access(&map, &path.display().to_string())?;
        Ok(NavMeshFile { map, path })
    }

    /// The mesh, zero-copy.
    pub fn mesh(&self) -> &ArchivedNavMesh {
        let body = &self.map[HEADER_LEN..];
        // SAFETY: `open` ran rkyv's validation and `validate` on exactly these bytes, and the
        // map is immutable for as long as `self` lives.
        unsafe { rkyv::access_unchecked::<ArchivedNavMesh>(body) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The key given to [`encode_keyed`].
    pub fn key(&self) -> u64 {
        u64::from_le_bytes(self.map[32..40].try_into().unwrap())
    }

    /// Tile edge in cells of the bake that wrote the file (0 when unknown); tiles start at the
    /// internal frame's plan origin.
    pub fn tile_cells(&self) -> u32 {
        u32::from_le_bytes(self.map[40..44].try_into().unwrap())
    }

    /// File size in bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl ArchivedNavMesh {
    /// Vertex `i` (internal frame).
    #[inline]
    pub fn vert(&self, i: u32) -> [f32; 3] {
        self.verts[i as usize].map(|c| c.to_native())
    }

    /// A detail triangle's corner: a polygon vertex, or with the [`DETAIL`] bit a detail
    /// vertex.
    #[inline]
    pub fn detail_corner(&self, i: u32) -> [f32; 3] {
        if i & DETAIL != 0 {
            self.detail_verts[(i & !DETAIL) as usize].map(|c| c.to_native())
        } else {
            self.vert(i)
        }
    }

    /// The vertex indices of polygon `p`.
    #[inline]
    pub fn poly_vert_ids(&self, p: u32) -> impl Iterator<Item = u32> + '_ {
        let poly = &self.polys[p as usize];
        let first = poly.first.to_native() as usize;
        self.poly_verts[first..first + poly.count.to_native() as usize]
            .iter()
            .map(|v| v.to_native())
    }

    /// The neighbours across polygon `p`'s edges (`NONE` where there is none).
    #[inline]
    pub fn poly_neighbours(&self, p: u32) -> impl Iterator<Item = u32> + '_ {
        let poly = &self.polys[p as usize];
        let first = poly.first.to_native() as usize;
        self.poly_neis[first..first + poly.count.to_native() as usize]
            .iter()
            .map(|v| v.to_native())
    }

    /// The links leaving polygon `p`.
    pub fn poly_links(&self, p: u32) -> &[ArchivedLink] {
        let poly = &self.polys[p as usize];
        let first = poly.link_first.to_native() as usize;
        &self.links[first..first + poly.link_count.to_native() as usize]
    }

    /// Polygon `p`'s detail triangles, as vertex positions.
    pub fn poly_triangles(&self, p: u32) -> impl Iterator<Item = [[f32; 3]; 3]> + '_ {
        let poly = &self.polys[p as usize];
        let first = poly.tri_first.to_native() as usize;
        self.detail_tris[first..first + poly.tri_count.to_native() as usize]
            .iter()
            .map(|t| t.map(|v| self.detail_corner(v.to_native())))
    }

    /// The grid cells `(x0, y0, x1, y1)` (inclusive) that cover the plan box `min..max`,
    /// clamped to the grid.
    pub fn grid_cells(&self, min: [f32; 2], max: [f32; 2]) -> (u32, u32, u32, u32) {
        let g = &self.grid;
        let cell = g.cell.to_native();
        let (gx, gy) = (g.min[0].to_native(), g.min[1].to_native());
        let (w, h) = (g.width.to_native() as i64, g.height.to_native() as i64);
        let clamp = |v: f32, n: i64| ((v.floor() as i64).clamp(0, n - 1)) as u32;
        (
            clamp((min[0] - gx) / cell, w),
            clamp((min[1] - gy) / cell, h),
            clamp((max[0] - gx) / cell, w),
            clamp((max[1] - gy) / cell, h),
        )
    }

    /// The polygons listed in grid cell `(x, y)`.
    pub fn grid_items(&self, x: u32, y: u32) -> impl Iterator<Item = u32> + '_ {
        let g = &self.grid;
        let c = (y * g.width.to_native() + x) as usize;
        let (s, e) = (
            g.start[c].to_native() as usize,
            g.start[c + 1].to_native() as usize,
        );
        g.items[s..e].iter().map(|v| v.to_native())
    }
}

#[cfg(test)]
mod tests;
