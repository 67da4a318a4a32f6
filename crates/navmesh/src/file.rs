//! Writing a mesh to bytes, and reading a file back: checked, then mapped zero-copy.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rkyv::rancor;
use rkyv::util::AlignedVec;

use crate::{validate, ArchivedNavMesh, Header, InvalidMesh, NavMesh, HEADER_LEN, VERSION};

/// Why a navmesh could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NavMeshError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{what}: not a tessera navmesh (bad magic)")]
    Magic { what: String },
    /// Not a regular file (a folder, a device): nothing to map.
    #[error("{path}: not a navmesh file but a {kind}")]
    NotAFile { path: PathBuf, kind: &'static str },
    /// Fewer bytes than the header, which they begin like.
    #[error("{what}: {found} bytes, too short for a navmesh header ({HEADER_LEN} bytes)")]
    Short { what: String, found: u64 },
    #[error("{what}: navmesh format version {found}, this build reads {VERSION}")]
    Version { what: String, found: u32 },
    #[error("{what}: {}", length_mismatch(*expected, *found))]
    Truncated {
        what: String,
        expected: u64,
        found: u64,
    },
    #[error("{what}: checksum mismatch (the file is corrupt)")]
    Checksum { what: String },
    #[error("{what}: malformed archive: {detail}")]
    Archive { what: String, detail: String },
    #[error("{what}: invalid navmesh: {source}")]
    Invalid { what: String, source: InvalidMesh },
}

/// A payload of `found` bytes where the header says `expected`: cut short, or with bytes
/// after its end (the file was appended to, or two were joined).
fn length_mismatch(expected: u64, found: u64) -> String {
    if found < expected {
        format!("truncated (the header says {expected} payload bytes, {found} present)")
    } else {
        format!(
            "{} bytes past the end of the navmesh (the header says {expected} payload bytes, \
             {found} present)",
            found - expected
        )
    }
}

/// The error for a file of `bytes` too short to hold a header: cut short when what there is
/// begins like a header (an empty file included), otherwise not a navmesh at all.
fn short(bytes: &[u8], what: &str) -> NavMeshError {
    let n = bytes.len().min(crate::MAGIC.len());
    if bytes[..n] == crate::MAGIC[..n] {
        NavMeshError::Short {
            what: what.into(),
            found: bytes.len() as u64,
        }
    } else {
        NavMeshError::Magic { what: what.into() }
    }
}

/// The file's bytes: header, then the archive.
pub fn encode(mesh: &NavMesh) -> Vec<u8> {
    encode_keyed(mesh, 0)
}

/// [`encode`], recording in the header the key of the inputs and settings the mesh was made
/// from (the bake uses it to know when the file can be reused).
pub fn encode_keyed(mesh: &NavMesh, key: u64) -> Vec<u8> {
    let (header, payload) = encode_parts(mesh, key);
    [header.to_bytes().as_slice(), &payload].concat()
}

/// The file as its header and its payload, for writing without a joined copy: the payload
/// is the archive, the header names its length and checksums both.
pub fn encode_parts(mesh: &NavMesh, key: u64) -> (Header, AlignedVec) {
    let payload = rkyv::to_bytes::<rancor::Error>(mesh).expect("serializing to memory cannot fail");
    let digest = xxhash_rust::xxh3::xxh3_64(&payload);
    (Header::new(payload.len() as u64, digest, key, 0), payload)
}

/// The header read from the start of `file`; a file too short to hold one is no navmesh.
fn read_header(file: &mut impl Read, what: &str) -> Result<Header, NavMeshError> {
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    file.take(HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .map_err(|_| NavMeshError::Magic { what: what.into() })?;
    Header::from_bytes(&bytes).ok_or_else(|| short(&bytes, what))
}

/// The key in a file's header (see [`encode_keyed`]), read without checking the rest.
pub fn read_key(path: &Path) -> Result<u64, NavMeshError> {
    let mut bytes = [0u8; HEADER_LEN];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|source| NavMeshError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let header = Header::from_bytes(&bytes).expect("a whole header");
    if &header.magic != crate::MAGIC {
        return Err(NavMeshError::Magic {
            what: path.display().to_string(),
        });
    }
    Ok(header.key)
}

/// Checks a file's header and checksum by reading it through once (no memory map); returns
/// its key. What [`NavMeshFile::open`] checks on top (structure, indices) needs the whole
/// archive in view and is left to readers.
pub fn check_file(path: &Path) -> Result<u64, NavMeshError> {
    let io = |source| NavMeshError::Io {
        path: path.to_path_buf(),
        source,
    };
    let what = path.display().to_string();
    let mut file = std::io::BufReader::with_capacity(1 << 16, File::open(path).map_err(io)?);
    let header = read_header(&mut file, &what)?;
    header.check_kind(&what)?;
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
    header.check_payload(found, h.digest(), &what)?;
    Ok(header.key)
}

/// Checks the header and checksum; returns the header and the archive bytes.
fn payload<'a>(bytes: &'a [u8], what: &str) -> Result<(Header, &'a [u8]), NavMeshError> {
    let header = Header::from_bytes(bytes).ok_or_else(|| short(bytes, what))?;
    header.check_kind(what)?;
    let body = &bytes[HEADER_LEN..];
    header.check_payload(body.len() as u64, xxhash_rust::xxh3::xxh3_64(body), what)?;
    Ok((header, body))
}

/// Validates bytes (header, checksum, structure, indices) and gives access to the mesh.
/// `bytes` must be 16-byte aligned (a memory map or an [`AlignedVec`] are).
pub fn access<'a>(bytes: &'a [u8], what: &str) -> Result<&'a ArchivedNavMesh, NavMeshError> {
    access_with_header(bytes, what).map(|(_, mesh)| mesh)
}

fn access_with_header<'a>(
    bytes: &'a [u8],
    what: &str,
) -> Result<(Header, &'a ArchivedNavMesh), NavMeshError> {
    let (header, body) = payload(bytes, what)?;
    // BoxedError keeps what bytecheck found (rancor::Error drops it in release builds).
    let mesh = rkyv::access::<ArchivedNavMesh, rancor::BoxedError>(body).map_err(|e| {
        NavMeshError::Archive {
            what: what.into(),
            detail: e.to_string(),
        }
    })?;
    validate(mesh).map_err(|source| NavMeshError::Invalid {
        what: what.into(),
        source,
    })?;
    Ok((header, mesh))
}

/// Copies bytes into an aligned buffer (for meshes held in memory, as tests do).
pub fn aligned(bytes: &[u8]) -> AlignedVec {
    let mut v = AlignedVec::with_capacity(bytes.len());
    v.extend_from_slice(bytes);
    v
}

/// A navmesh file, memory-mapped and validated.
pub struct NavMeshFile {
    map: memmap2::Mmap,
    header: Header,
    path: PathBuf,
}

impl NavMeshFile {
    /// Maps and validates a file; a corrupt or hostile file is refused with the reason.
    #[allow(unsafe_code)] // maps the navmesh file read-only: see the SAFETY comment inside
    pub fn open(path: impl AsRef<Path>) -> Result<NavMeshFile, NavMeshError> {
        let path = path.as_ref().to_path_buf();
        let io = |source| NavMeshError::Io {
            path: path.clone(),
            source,
        };
        let file = File::open(&path).map_err(io)?;
        // A folder opens, but cannot be mapped ("No such device"): say what it is instead.
        let kind = file.metadata().map_err(io)?.file_type();
        if !kind.is_file() {
            return Err(NavMeshError::NotAFile {
                path,
                kind: if kind.is_dir() {
                    "folder"
                } else {
                    "special file"
                },
            });
        }
        // SAFETY: the map is read-only and private to this process. A file changed underneath
        // it would be a concurrent writer ignoring tessera's atomic-rename protocol; the bake
        // never rewrites a navmesh in place.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        let (header, _) = access_with_header(&map, &path.display().to_string())?;
        Ok(NavMeshFile { map, header, path })
    }

    /// The mesh, zero-copy.
    #[allow(unsafe_code)] // zero-copy access after validation: see the SAFETY comment inside
    pub fn mesh(&self) -> &ArchivedNavMesh {
        let body = &self.map[HEADER_LEN..];
        // SAFETY: `open` ran rkyv's validation and `validate` on exactly these bytes, and the
        // map is immutable for as long as `self` lives.
        unsafe { rkyv::access_unchecked::<ArchivedNavMesh>(body) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's header (checked by [`NavMeshFile::open`]).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The key given to [`encode_keyed`].
    pub fn key(&self) -> u64 {
        self.header.key
    }

    /// Tile edge in cells of the bake that wrote the file (0 when unknown); tiles start at the
    /// internal frame's plan origin.
    pub fn tile_cells(&self) -> u32 {
        self.header.tile_cells
    }

    /// Tile edge of the bake that wrote the file in world units (the internal frame's), when
    /// the file records it: its tile cells times the frame's cell size.
    pub fn tile_edge(&self) -> Option<f32> {
        let cells = self.tile_cells();
        (cells > 0).then(|| cells as f32 * self.mesh().frame.cell_size.to_native())
    }

    /// File size in bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
