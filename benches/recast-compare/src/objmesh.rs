//! The Recast side's own scene loader for `full`: a Wavefront OBJ read straight into Recast's
//! frame, the job `rcMeshLoaderObj` does for RecastDemo.
//!
//! Only `v` and `f` lines matter; polygons are cut into triangle fans (as RecastDemo's loader and
//! tessera's ingest do), `i/t/n` forms keep the position index, negative indices count back from
//! the last vertex. The file is read line by line through a buffer, so the loader itself adds
//! next to nothing to the process's peak memory (RecastDemo reads the whole file first).
//!
//! Recast is Y-up. A Z-up scene's point `(x, y, z)` becomes `(x, z, y)` (Recast's column `(x, z)`
//! is then the scene's `(x, y)`, as in the rest of this harness) and, since swapping two axes
//! mirrors, each triangle's second and third vertices are swapped to keep floors facing up.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use tessera_geom::UpAxis;

/// A triangle soup in Recast's frame.
pub struct ObjMesh {
    /// x, y, z per vertex (Y up).
    pub verts: Vec<f32>,
    /// Three vertex indices per triangle, counter-clockwise seen from above for floors.
    pub tris: Vec<i32>,
    pub bmin: [f32; 3],
    pub bmax: [f32; 3],
}

impl ObjMesh {
    pub fn triangles(&self) -> usize {
        self.tris.len() / 3
    }
}

fn bad(path: &Path, line: usize, what: &str) -> String {
    format!("{}:{line}: {what}", path.display())
}

/// A point of a scene whose up axis is `up`, in Recast's frame (Y up): a Z-up scene's y and z
/// swap places, a Y-up scene's point is unchanged.
pub fn to_recast<T>(p: [T; 3], up: UpAxis) -> [T; 3] {
    let [x, y, z] = p;
    match up {
        UpAxis::Y => [x, y, z],
        UpAxis::Z => [x, z, y],
    }
}

/// Reads `path`, whose up axis is `up`.
pub fn load(path: &Path, up: UpAxis) -> Result<ObjMesh, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut verts: Vec<f32> = Vec::new();
    let mut tris: Vec<i32> = Vec::new();
    let mut face: Vec<i32> = Vec::new();
    let mut line = Vec::new();
    let mut number = 0usize;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        number += 1;
        let text = std::str::from_utf8(&line).map_err(|_| bad(path, number, "not UTF-8"))?;
        let mut words = text.split_ascii_whitespace();
        match words.next() {
            Some("v") => {
                let mut p = [0f32; 3];
                for c in &mut p {
                    *c = words
                        .next()
                        .and_then(|w| w.parse::<f32>().ok())
                        .ok_or_else(|| bad(path, number, "a vertex needs three numbers"))?;
                }
                verts.extend_from_slice(&to_recast(p, up));
            }
            Some("f") => {
                face.clear();
                let count = (verts.len() / 3) as i64;
                for w in words {
                    let first = w.split('/').next().unwrap_or("");
                    let i: i64 = first
                        .parse()
                        .map_err(|_| bad(path, number, "bad face index"))?;
                    let i = if i < 0 { count + i } else { i - 1 };
                    if !(0..count).contains(&i) {
                        return Err(bad(path, number, "face index out of range"));
                    }
                    face.push(i as i32);
                }
                for k in 1..face.len().saturating_sub(1) {
                    let (a, b, c) = (face[0], face[k], face[k + 1]);
                    match up {
                        UpAxis::Y => tris.extend_from_slice(&[a, b, c]),
                        UpAxis::Z => tris.extend_from_slice(&[a, c, b]),
                    }
                }
            }
            _ => {}
        }
    }
    if tris.is_empty() {
        return Err(format!("{}: no triangles", path.display()));
    }
    let mut bmin = [f32::INFINITY; 3];
    let mut bmax = [f32::NEG_INFINITY; 3];
    for p in verts.chunks_exact(3) {
        for k in 0..3 {
            bmin[k] = bmin[k].min(p[k]);
            bmax[k] = bmax[k].max(p[k]);
        }
    }
    Ok(ObjMesh {
        verts,
        tris,
        bmin,
        bmax,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_faces_in_both_frames() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.obj");
        // A unit quad in the z = 0 plane of a Z-up scene, counter-clockwise from +Z.
        std::fs::write(
            &path,
            "# quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 -1//1\n",
        )
        .unwrap();
        let m = load(&path, UpAxis::Z).unwrap();
        assert_eq!(m.triangles(), 2);
        assert_eq!(m.tris, vec![0, 2, 1, 0, 3, 2]);
        assert_eq!(&m.verts[3..6], &[1.0, 0.0, 0.0]);
        assert_eq!(&m.verts[6..9], &[1.0, 0.0, 1.0]);
        assert_eq!((m.bmin, m.bmax), ([0.0; 3], [1.0, 0.0, 1.0]));
        // Recast takes the first triangle as a floor (normal along +Y).
        let mut areas = [0u8; 2];
        crate::recast::mark_walkable_indexed(
            &crate::recast::Context::new(),
            45.0,
            &m.verts,
            &m.tris,
            &mut areas,
        );
        assert_eq!(areas, [crate::recast::WALKABLE_AREA; 2]);
        let y = load(&path, UpAxis::Y).unwrap();
        assert_eq!(y.tris, vec![0, 1, 2, 0, 2, 3]);
    }
}
