//! A baked navmesh seen outside tessera.
//!
//! * [`gltf`]: the polygons as a glTF 2.0 scene (`.glb`, or `.gltf` with the buffer embedded
//!   as base64), vertex-coloured by region, with portals and links as line primitives.
//! * [`obj`]: the same as Wavefront OBJ, colours as `v x y z r g b`, lines as `l` elements.
//! * [`render`]: a top-down PNG of the plan, region colours, edges, links and an optional path.
//! * [`report`]: the bake's self-contained HTML page (summary table, seconds per stage,
//!   memory over time, the preview).
//!
//! **Coordinates.** The navmesh stores its vertices in tessera's internal frame (Z up, f32,
//! rebased on `Frame::origin`). The OBJ export writes the scene's own coordinates and up axis
//! (`Frame::to_scene`), in full f64 text. glTF is Y-up by its specification, so the glTF export
//! always writes Y-up: a Y-up scene keeps its own coordinates, a Z-up scene `(x, y, z)` is
//! written `(x, z, -y)`, the exact inverse of what a glTF importer (tessera's own ingest with
//! its default `--up y`, Blender) applies, so the export overlays the source. Positions stay
//! f32 relative to the frame's origin and the origin goes into the root node's translation
//! (f64 in the JSON): a world at UTM offsets keeps its centimetres.
//!
//! **Colours** come from [`region_colour`]: a deterministic palette indexed by the polygon's
//! region, so the same region has the same colour in every export and image.
//!
//! Reads navmesh files only (through `tessera-navmesh`); depends on no builder crate. Writes
//! its files through `tessera-store`'s atomic writer, like every other file tessera writes.

pub mod gltf;
pub mod obj;
pub mod render;
pub mod report;

use std::io::Write;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap as HashMap;
use tessera_navmesh::{ArchivedNavMesh, NONE};
use tessera_store::{AtomicFile, StoreError};

pub use render::{render, PlanView, RenderOptions, Rgb, RgbImage};

/// Why an export could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: the export passes the 4 GiB limit of a .glb file; write .gltf or .obj")]
    TooLarge { path: PathBuf },
    #[error("{path}: cannot encode PNG: {message}")]
    Png { path: PathBuf, message: String },
}

/// The two export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// glTF 2.0: binary `.glb`, or `.gltf` JSON with the buffer embedded.
    Gltf,
    /// Wavefront OBJ with vertex colours.
    Obj,
}

impl Format {
    /// The format a file name asks for: `.glb` and `.gltf` are glTF, `.obj` is OBJ.
    pub fn of_path(path: &Path) -> Option<Format> {
        match extension(path).as_deref() {
            Some("glb") | Some("gltf") => Some(Format::Gltf),
            Some("obj") => Some(Format::Obj),
            _ => None,
        }
    }
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

/// What to export.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExportOptions {
    /// Each polygon's detail triangles instead of a fan over its corners (a polygon without
    /// detail triangles falls back to its fan).
    pub detail: bool,
}

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportCounts {
    pub polygons: usize,
    pub triangles: usize,
    /// Distinct surface vertices (a mesh vertex is repeated once per region that uses it, so
    /// that every region keeps its own colour).
    pub vertices: usize,
    /// Portal segments (each shared edge once) and link segments (every stored link).
    pub portals: usize,
    pub links: usize,
}

/// Writes `mesh` to `path` in `format` (for glTF, `.gltf` gives JSON with an embedded base64
/// buffer, any other name a binary `.glb`). The file appears only once complete.
pub fn export_file(
    mesh: &ArchivedNavMesh,
    path: &Path,
    format: Format,
    options: ExportOptions,
) -> Result<ExportCounts, ExportError> {
    let mut counts = ExportCounts::default();
    let mut too_large = false;
    let written = write_atomic(path, |w| {
        counts = match format {
            Format::Gltf if extension(path).as_deref() == Some("gltf") => {
                let (text, counts) = gltf::to_gltf(mesh, options);
                w.write_all(text.as_bytes())?;
                counts
            }
            Format::Gltf => {
                let Some((bytes, counts)) = gltf::to_glb(mesh, options) else {
                    too_large = true;
                    return Err(std::io::Error::other("too large"));
                };
                w.write_all(&bytes)?;
                counts
            }
            Format::Obj => obj::write_obj(mesh, options, w)?,
        };
        Ok(())
    });
    if too_large {
        return Err(ExportError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    written.map(|()| counts)
}

/// Writes a file through [`tessera_store::AtomicFile`] (a temporary name in the same folder,
/// fsynced, renamed into place, the folder fsynced) once `fill` succeeds: a failed or
/// interrupted write never leaves a partial file. Errors name `path`, not the temporary file.
pub fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), ExportError> {
    let io = |e: StoreError| ExportError::Io {
        path: path.to_path_buf(),
        source: match e {
            StoreError::Io { source, .. } => source,
            other => std::io::Error::other(other.to_string()),
        },
    };
    let mut file = AtomicFile::create(path).map_err(io)?;
    fill(&mut file).map_err(|e| io(StoreError::io(path, e)))?;
    file.commit().map_err(io)
}

/// The colour of region `r`: hues spread by the golden angle so that neighbouring indices
/// differ strongly, saturation and brightness alternating in three steps. Never grey.
pub fn region_colour(r: u32) -> Rgb {
    const GOLDEN: f64 = 0.618_033_988_749_895;
    let hue = (r as f64 * GOLDEN).fract();
    let sat = [0.55, 0.70, 0.45][(r % 3) as usize];
    let val = [0.92, 0.80, 0.98][((r / 3) % 3) as usize];
    hsv(hue, sat, val)
}

/// HSV (each 0..1) to 8-bit RGB.
fn hsv(h: f64, s: f64, v: f64) -> Rgb {
    let h6 = (h.rem_euclid(1.0)) * 6.0;
    let sector = h6.floor() as u32 % 6;
    let f = h6 - h6.floor();
    let (p, q, t) = (v * (1.0 - s), v * (1.0 - s * f), v * (1.0 - s * (1.0 - f)));
    let (r, g, b) = match sector {
        0 => (v, t, p),
        1 => (q, v, p),
        2 => (p, v, t),
        3 => (p, q, v),
        4 => (t, p, v),
        _ => (v, p, q),
    };
    let to8 = |c: f64| (c * 255.0).round().clamp(0.0, 255.0) as u8;
    Rgb([to8(r), to8(g), to8(b)])
}

/// Colour of portal lines in the exports.
pub const PORTAL_COLOUR: Rgb = Rgb([40, 200, 230]);
/// Colour of link lines in the exports and the preview.
pub const LINK_COLOUR: Rgb = Rgb([230, 40, 200]);

/// The walkable surface as triangles over per-region vertex copies, in the internal frame.
pub(crate) struct Surface {
    /// Per surface vertex: the mesh vertex it copies and the region it is coloured by.
    pub verts: Vec<(u32, u32)>,
    /// Triangles over surface vertices, counter-clockwise seen from above.
    pub tris: Vec<[u32; 3]>,
}

impl Surface {
    pub fn of(mesh: &ArchivedNavMesh, options: ExportOptions) -> Surface {
        let mut ids: HashMap<(u32, u32), u32> = HashMap::default();
        let mut verts = Vec::new();
        let mut tris = Vec::new();
        let mut corners: Vec<u32> = Vec::new();
        for (p, poly) in mesh.polys.iter().enumerate() {
            let region = poly.region.to_native();
            let mut local = |v: u32| -> u32 {
                *ids.entry((v, region)).or_insert_with(|| {
                    verts.push((v, region));
                    (verts.len() - 1) as u32
                })
            };
            let (tri_first, tri_count) = (
                poly.tri_first.to_native() as usize,
                poly.tri_count.to_native() as usize,
            );
            if options.detail && tri_count > 0 {
                for t in &mesh.detail_tris[tri_first..tri_first + tri_count] {
                    let t = t.map(|v| v.to_native());
                    tris.push([local(t[0]), local(t[1]), local(t[2])]);
                }
            } else {
                corners.clear();
                corners.extend(mesh.poly_vert_ids(p as u32));
                let c: Vec<u32> = corners.iter().map(|&v| local(v)).collect();
                for k in 1..c.len().saturating_sub(1) {
                    tris.push([c[0], c[k], c[k + 1]]);
                }
            }
        }
        Surface { verts, tris }
    }
}

/// Line segments in the internal frame: each portal once (from the polygon with the lower
/// index, at its edge's heights) and each stored link's crossing segment.
pub(crate) struct Lines {
    pub portals: Vec<[[f32; 3]; 2]>,
    pub links: Vec<[[f32; 3]; 2]>,
}

impl Lines {
    pub fn of(mesh: &ArchivedNavMesh) -> Lines {
        let mut portals = Vec::new();
        for p in 0..mesh.polys.len() as u32 {
            let ids: Vec<u32> = mesh.poly_vert_ids(p).collect();
            for (k, n) in mesh.poly_neighbours(p).enumerate() {
                if n != NONE && n > p {
                    let a = mesh.vert(ids[k]);
                    let b = mesh.vert(ids[(k + 1) % ids.len()]);
                    portals.push([a, b]);
                }
            }
        }
        let links = mesh
            .links
            .iter()
            .map(|l| [l.a.map(|c| c.to_native()), l.b.map(|c| c.to_native())])
            .collect();
        Lines { portals, links }
    }
}

#[cfg(test)]
mod tests;
