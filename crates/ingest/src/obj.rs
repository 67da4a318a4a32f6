//! Wavefront OBJ, streamed from a memory map.
//!
//! Pass 1 reads `v` lines into a vertex table: a temporary file in the scratch folder, written
//! sequentially and then memory-mapped, so the table never counts against anonymous memory.
//! Pass 2 reads `f` lines and resolves their indices against it. Supported: `v x y z [w | r g b]`
//! (extra components ignored); `f` with `i`, `i/t`, `i//n`, `i/t/n` and negative (relative)
//! indices; polygons fan-triangulated; CRLF; `\` line continuations; comments. Everything else
//! (`vt`, `vn`, `vp`, `o`, `g`, `s`, `usemtl`, `mtllib`, `l`, `p`, unknown keywords) is skipped.

use crate::pages::{release, Behind};
use crate::{IngestError, SceneSource, WorldTriangle};
use memmap2::Mmap;
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use tessera_geom::{UpAxis, WorldBounds};

/// An OBJ file opened for ingest (pass 1 done).
pub struct ObjScene {
    path: PathBuf,
    data: Option<Mmap>,
    vertices: Option<Mmap>,
    vertex_count: u64,
    bounds: WorldBounds,
}

#[allow(unsafe_code)] // maps the input file read-only: see the SAFETY comment inside
fn map_file(file: &File, path: &Path) -> Result<Option<Mmap>, IngestError> {
    let len = file.metadata().map_err(|e| IngestError::io(path, e))?.len();
    if len == 0 {
        return Ok(None);
    }
    // SAFETY: the file is mapped read-only; tessera's inputs and scratch files are not
    // modified by anyone while a bake runs (documented contract of `tessera bake`).
    let map = unsafe { Mmap::map(file) }.map_err(|e| IngestError::io(path, e))?;
    Ok(Some(map))
}

impl ObjScene {
    /// Maps `path` and runs pass 1 (the vertex table). `scratch` receives the table's file.
    pub fn open(path: &Path, up: UpAxis, scratch: &Path) -> Result<ObjScene, IngestError> {
        let file = File::open(path).map_err(|e| IngestError::io(path, e))?;
        let data = map_file(&file, path)?;
        std::fs::create_dir_all(scratch).map_err(|e| IngestError::io(scratch, e))?;
        let table = tempfile::tempfile_in(scratch).map_err(|e| IngestError::io(scratch, e))?;
        let mut writer = BufWriter::with_capacity(1 << 20, &table);
        let mut bounds = WorldBounds::EMPTY;
        let mut vertex_count = 0u64;
        if let Some(data) = &data {
            let mut lines = Lines::new(data);
            let mut behind = Behind::new(data);
            while let Some((line_no, line)) = lines.next() {
                behind.advance(lines.pos);
                let mut tokens = Tokens::new(&line);
                if tokens.next() != Some(b"v") {
                    continue;
                }
                let mut p = [0.0f64; 3];
                for (axis, c) in p.iter_mut().enumerate() {
                    let tok = tokens.next().ok_or_else(|| IngestError::Obj {
                        path: path.to_path_buf(),
                        line: line_no,
                        message: format!("vertex has {axis} coordinates, needs 3"),
                    })?;
                    *c = parse_coordinate(tok).map_err(|message| IngestError::Obj {
                        path: path.to_path_buf(),
                        line: line_no,
                        message,
                    })?;
                }
                let p = up.to_z_up(p);
                bounds.grow(p);
                for c in p {
                    writer
                        .write_all(&c.to_le_bytes())
                        .map_err(|e| IngestError::io(scratch, e))?;
                }
                vertex_count += 1;
            }
            release(data, 0, data.len());
        }
        writer.flush().map_err(|e| IngestError::io(scratch, e))?;
        drop(writer);
        let vertices = map_file(&table, scratch)?;
        Ok(ObjScene {
            path: path.to_path_buf(),
            data,
            vertices,
            vertex_count,
            bounds,
        })
    }

    /// Number of `v` lines.
    pub fn vertex_count(&self) -> u64 {
        self.vertex_count
    }

    fn vertex(&self, i: u64) -> [f64; 3] {
        let bytes = &self
            .vertices
            .as_ref()
            .expect("resolved index implies a vertex")[i as usize * 24..][..24];
        [
            f64::from_le_bytes(bytes[0..8].try_into().unwrap()),
            f64::from_le_bytes(bytes[8..16].try_into().unwrap()),
            f64::from_le_bytes(bytes[16..24].try_into().unwrap()),
        ]
    }
}

impl SceneSource for ObjScene {
    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn bounds(&self) -> WorldBounds {
        self.bounds
    }

    fn for_each_triangle(
        &mut self,
        emit: &mut dyn FnMut(WorldTriangle) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        let Some(data) = &self.data else {
            return Ok(());
        };
        let mut seen_vertices = 0u64;
        let mut polygon: Vec<u64> = Vec::with_capacity(8);
        let mut lines = Lines::new(data);
        let mut behind = Behind::new(data);
        while let Some((line_no, line)) = lines.next() {
            // With the text read so far goes the vertex table (faces mostly use recent
            // vertices; the rest are read back from the page cache when needed).
            if behind.advance(lines.pos) {
                if let Some(v) = &self.vertices {
                    release(v, 0, v.len());
                }
            }
            let mut tokens = Tokens::new(&line);
            match tokens.next() {
                Some(b"v") => seen_vertices += 1,
                Some(b"f") => {
                    polygon.clear();
                    for tok in tokens {
                        let index = resolve_index(tok, seen_vertices).map_err(|message| {
                            IngestError::Obj {
                                path: self.path.clone(),
                                line: line_no,
                                message,
                            }
                        })?;
                        polygon.push(index);
                    }
                    if polygon.len() < 3 {
                        return Err(IngestError::Obj {
                            path: self.path.clone(),
                            line: line_no,
                            message: format!(
                                "face has {} vertices, needs at least 3",
                                polygon.len()
                            ),
                        });
                    }
                    let first = self.vertex(polygon[0]);
                    for k in 1..polygon.len() - 1 {
                        emit([first, self.vertex(polygon[k]), self.vertex(polygon[k + 1])])?;
                    }
                }
                _ => {}
            }
        }
        release(data, 0, data.len());
        if let Some(v) = &self.vertices {
            release(v, 0, v.len());
        }
        Ok(())
    }
}

/// Parses one coordinate; refuses text that is not a number and non-finite values.
fn parse_coordinate(tok: &[u8]) -> Result<f64, String> {
    let text = std::str::from_utf8(tok).map_err(|_| "coordinate is not valid UTF-8".to_string())?;
    let v: f64 = text
        .parse()
        .map_err(|_| format!("non-numeric coordinate `{text}`"))?;
    if !v.is_finite() {
        return Err(format!("coordinate `{text}` is not finite"));
    }
    Ok(v)
}

/// Resolves a face vertex token (`i`, `i/t`, `i//n`, `i/t/n`; `i` may be negative) against the
/// `seen` vertices defined so far, to a 0-based index.
fn resolve_index(tok: &[u8], seen: u64) -> Result<u64, String> {
    let head = tok.split(|&b| b == b'/').next().unwrap_or(tok);
    let text = std::str::from_utf8(head).unwrap_or("");
    let i: i64 = text.parse().map_err(|_| {
        format!(
            "face vertex `{}` is not an index",
            String::from_utf8_lossy(tok)
        )
    })?;
    if i == 0 {
        return Err("face vertex index 0 (OBJ indices start at 1)".into());
    }
    let resolved = if i > 0 { i - 1 } else { seen as i64 + i };
    if resolved < 0 || resolved as u64 >= seen {
        return Err(format!(
            "face vertex index {i} out of range ({seen} vertices defined so far)"
        ));
    }
    Ok(resolved as u64)
}

/// Logical lines with their 1-based number: CR stripped, `\`-continued lines joined, comments
/// (from `#`) removed.
struct Lines<'a> {
    data: &'a [u8],
    pos: usize,
    line: u64,
}

impl<'a> Lines<'a> {
    fn new(data: &'a [u8]) -> Self {
        Lines {
            data,
            pos: 0,
            line: 0,
        }
    }

    fn physical(&mut self) -> Option<&'a [u8]> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let end = memchr_newline(rest);
        self.pos += (end + 1).min(rest.len());
        self.line += 1;
        let mut l = &rest[..end];
        if let [head @ .., b'\r'] = l {
            l = head;
        }
        Some(l)
    }
}

#[inline]
fn memchr_newline(s: &[u8]) -> usize {
    memchr::memchr(b'\n', s).unwrap_or(s.len())
}

#[inline]
fn strip_comment(l: &[u8]) -> &[u8] {
    match memchr::memchr(b'#', l) {
        Some(i) => &l[..i],
        None => l,
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u64, Cow<'a, [u8]>);
    fn next(&mut self) -> Option<Self::Item> {
        let first = self.physical()?;
        let number = self.line;
        let first = strip_comment(first);
        if first.last() != Some(&b'\\') {
            return Some((number, Cow::Borrowed(first)));
        }
        let mut joined = first[..first.len() - 1].to_vec();
        joined.push(b' ');
        while let Some(next) = self.physical() {
            let next = strip_comment(next);
            if let Some(body) = next.strip_suffix(b"\\") {
                joined.extend_from_slice(body);
                joined.push(b' ');
            } else {
                joined.extend_from_slice(next);
                break;
            }
        }
        Some((number, Cow::Owned(joined)))
    }
}

/// Whitespace-separated tokens of a line.
struct Tokens<'a> {
    rest: &'a [u8],
}

impl<'a> Tokens<'a> {
    fn new(line: &'a [u8]) -> Self {
        Tokens { rest: line }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let rest = &self.rest[start..];
        let end = rest
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(&rest[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triangles(text: &str) -> Result<Vec<WorldTriangle>, IngestError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.obj");
        std::fs::write(&path, text).unwrap();
        let mut scene = ObjScene::open(&path, UpAxis::Z, dir.path())?;
        let mut out = Vec::new();
        scene.for_each_triangle(&mut |t| {
            out.push(t);
            Ok(())
        })?;
        Ok(out)
    }

    const QUAD: [[f64; 3]; 4] = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];

    #[test]
    fn all_index_forms_give_the_same_triangles() {
        let head = "v 0 0 0\nv 1 0 0 1.0\nv 1 1 0 0.5 0.5 0.5\nv 0 1 0\nvt 0 0\nvn 0 0 1\n";
        let expected = vec![[QUAD[0], QUAD[1], QUAD[2]], [QUAD[0], QUAD[2], QUAD[3]]];
        for face in [
            "f 1 2 3 4",
            "f 1/1 2/1 3/1 4/1",
            "f 1//1 2//1 3//1 4//1",
            "f 1/1/1 2/1/1 3/1/1 4/1/1",
            "f -4 -3 -2 -1",
            "f 1 2 3\nf 1 3 4",
        ] {
            assert_eq!(
                triangles(&format!("{head}{face}\n")).unwrap(),
                expected,
                "{face}"
            );
        }
    }

    #[test]
    fn skips_other_statements_and_handles_crlf_and_continuations() {
        let text = "# comment\r\nmtllib a.mtl\r\no thing\r\ng group\r\ns 1\r\nusemtl m\r\n\
                    v 0 0 0\r\nv 1 0 0 # trailing comment\r\nv 1 1 \\\r\n 0\r\nv 0 1 0\r\n\
                    l 1 2\r\np 1\r\nvp 0.1\r\nf 1 2 \\\r\n3 4\r\n";
        let t = triangles(text).unwrap();
        assert_eq!(
            t,
            vec![[QUAD[0], QUAD[1], QUAD[2]], [QUAD[0], QUAD[2], QUAD[3]]]
        );
    }

    #[test]
    fn relative_indices_refer_to_vertices_so_far() {
        let t = triangles("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 5 5 5\nf -4 -3 -2\n").unwrap();
        assert_eq!(t[0], t[1]);
    }

    #[test]
    fn bad_input_names_the_line() {
        let cases = [
            ("v 0 0 0\nv 1 0 0\nf 1 2 3\n", 3, "out of range"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", 4, "index 0"),
            ("v 0 0 0\nv 1 zero 0\n", 2, "non-numeric"),
            ("v 0 0 0\nv 1 NaN 0\n", 2, "not finite"),
            ("v 0 0 0\nv inf 0 0\n", 2, "not finite"),
            ("v 0 0\n", 1, "needs 3"),
            ("v 0 0 0\nv 1 0 0\nf 1 2\n", 3, "at least 3"),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 x 2\n", 4, "not an index"),
            ("v 0 0 0\nf -2 -1 1\n", 2, "out of range"),
        ];
        for (text, line, what) in cases {
            let err = triangles(text).unwrap_err();
            let msg = err.to_string();
            assert!(
                matches!(err, IngestError::Obj { line: l, .. } if l == line) && msg.contains(what),
                "{text:?}: {msg}"
            );
            assert!(msg.contains("t.obj"), "{msg}");
        }
    }

    #[test]
    fn y_up_is_converted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("y.obj");
        std::fs::write(&path, "v 1 2 3\nv 2 2 3\nv 1 2 4\nf 1 2 3\n").unwrap();
        let scene = ObjScene::open(&path, UpAxis::Y, dir.path()).unwrap();
        assert_eq!(scene.bounds().min, [1.0, -4.0, 2.0]);
    }

    #[test]
    fn empty_file_has_no_triangles() {
        assert!(triangles("").unwrap().is_empty());
        assert!(triangles("# nothing\n").unwrap().is_empty());
    }
}
