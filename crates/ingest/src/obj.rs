//! Wavefront OBJ, streamed from a memory map.
//!
//! Pass 1 reads `v` lines into a vertex table: a temporary file in the scratch folder, written
//! sequentially and then memory-mapped, so the table never counts against anonymous memory.
//! Pass 2 reads `f` lines and resolves their indices against it. Supported: `v x y z [w | r g b]`
//! (extra components ignored); `f` with `i`, `i/t`, `i//n`, `i/t/n` and negative (relative)
//! indices; polygons fan-triangulated; line ends `\n`, `\r\n` or `\r`, mixed or not; a leading
//! UTF-8 byte-order mark; `\` line continuations; comments. With area rules
//! ([`ReadLimits::with_areas`]), the names of `usemtl` (the rest of its line), `g` (each
//! whitespace-separated name) and `o` (the rest of its line) in force at a face give its
//! triangles their area; each statement holds until the next of its kind. Everything else
//! (`vt`, `vn`, `vp`, `s`, `mtllib`, `l`, `p`, unknown keywords) is skipped.
//!
//! Both passes parse windows of the map in parallel (`windows`: cut at logical-line
//! boundaries, parsed on the current rayon pool, results taken in file order). Pass 1 learns
//! each window's first line number and first vertex index from the windows before it; pass 2
//! starts every window from them, so relative indices, line numbers in errors and the order of
//! triangles are those of a reading from start to end. With area rules, pass 1 also finds each
//! window's last `usemtl`, `g` and `o` statements, and folds them in file order into the
//! statements in force where each window starts (where their lines start in the file), which
//! pass 2 reads again. The first error in file order is the one reported.
//!
//! Memory: the input and the vertex table are file-backed maps. The text is cut into windows
//! as it is read, and the pages behind the last batch consumed are given back every 64 MiB (in
//! pass 2 the table's with them: faces mostly use recent vertices, the rest are read back from
//! the page cache), so only that much of the text, the batch being parsed and the table are
//! mapped in at once, whatever the file's size. Parsed results wait in anonymous memory, at most
//! two batches of them, sized so that even the densest text (`growth` bytes of result per byte
//! of text: `v 0 0 0`, `f 1 2 3 4 ...`) stays within [`ReadLimits`]. The window table kept
//! between the passes is 64 bytes per window (4 MiB for 1 GB of text cut at 16 KiB).

use crate::areas::{AreaMemo, AreaRules};
use crate::cache::CacheBatch;
use crate::lines::{is_space, Lines, Tokens};
use crate::pages::{release, Behind};
use crate::windows::{batch_text, cut, in_order, window_text};
use crate::{IngestError, Located, ReadLimits, SceneSource, WorldTriangle};
use memmap2::Mmap;
use std::fs::File;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use tessera_geom::{UpAxis, WorldBounds};

/// Bytes of vertex table per byte of text at most: 24 per vertex, a `v` line is at least 7
/// bytes and its newline.
const VERTEX_GROWTH: usize = 4;
/// Bytes of cache batch per byte of text at most: a face of k indices is at least 2k + 1 bytes
/// and makes k - 2 triangles of 37 bytes (36 and an area id).
const CACHE_GROWTH: usize = 19;
/// The same for f64 world triangles (72 bytes).
const WORLD_GROWTH: usize = 36;

/// A window of the text and where it starts in the file's numbering.
#[derive(Clone, Debug)]
struct Window {
    text: Range<usize>,
    /// 1-based number of its first physical line.
    first_line: u64,
    /// Vertices defined before it.
    first_vertex: u64,
    /// Whether it holds an `f` line: pass 2 skips the others (pass 1 checked their `v`
    /// lines, and nothing else in them makes a triangle or an error).
    faces: bool,
    /// The statements in force where it starts (with area rules; else none).
    before: Statements,
}

/// A statement that names the faces after it: `usemtl`, `g` or `o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Naming {
    Material,
    Groups,
    Object,
}

impl Naming {
    fn of(keyword: &[u8]) -> Option<Naming> {
        match keyword {
            b"usemtl" => Some(Naming::Material),
            b"g" => Some(Naming::Groups),
            b"o" => Some(Naming::Object),
            _ => None,
        }
    }
}

/// The `usemtl`, `g` and `o` statements in force at a place in the file: where each one's
/// logical line starts in the file, or [`Statements::NONE`] before the first of its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Statements([u64; 3]);

impl Statements {
    const NONE: u64 = u64::MAX;
    const EMPTY: Statements = Statements([Statements::NONE; 3]);

    fn set(&mut self, kind: Naming, at: u64) {
        self.0[kind as usize] = at;
    }

    /// These statements followed by `later`'s: each kind from `later` where it has one.
    fn then(self, later: Statements) -> Statements {
        Statements([0, 1, 2].map(|k| match later.0[k] {
            Statements::NONE => self.0[k],
            at => at,
        }))
    }
}

/// The area of faces as a window of pass 2 reads on: each kind of statement's own (the first
/// rule matching its names), and the earliest of the three.
struct FaceAreas<'r> {
    memo: AreaMemo<'r>,
    kinds: [u8; 3],
    area: u8,
}

impl<'r> FaceAreas<'r> {
    /// The areas where a window starts, after the statements `before` (in `data`, the file).
    fn at(data: &[u8], before: Statements, rules: &'r AreaRules) -> FaceAreas<'r> {
        let mut areas = FaceAreas {
            memo: AreaMemo::new(rules),
            kinds: [0; 3],
            area: 0,
        };
        for at in before.0 {
            let Some(text) = data.get(at as usize..) else {
                continue;
            };
            if let Some((_, line)) = Lines::new(text).next() {
                let mut tokens = Tokens::new(&line);
                if let Some(kind) = tokens.next().and_then(Naming::of) {
                    areas.set(kind, tokens.rest());
                }
            }
        }
        areas
    }

    /// A statement of `kind` whose text after the keyword is `rest`.
    fn set(&mut self, kind: Naming, rest: &[u8]) {
        let area = match kind {
            Naming::Groups => Tokens::new(rest).fold(0, |area, name| {
                AreaRules::earlier(area, self.memo.first_rule(name))
            }),
            Naming::Material | Naming::Object => match trim(rest) {
                [] => 0,
                name => self.memo.first_rule(name),
            },
        };
        self.kinds[kind as usize] = area;
        self.area = self.kinds.into_iter().fold(0, AreaRules::earlier);
    }
}

/// `text` without the whitespace at its ends.
fn trim(text: &[u8]) -> &[u8] {
    let start = text
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(start, |i| i + 1);
    &text[start..end]
}

/// What pass 1 made of one window.
struct VertexWindow {
    /// Vertices, Z-up, as the table stores them (3 f64, little-endian).
    table: Vec<u8>,
    count: u64,
    min: [f64; 3],
    max: [f64; 3],
    /// Physical lines in the window.
    lines: u64,
    /// Whether an `f` line was seen.
    faces: bool,
    /// The first malformed `v` line: its number in the window and the message.
    error: Option<(u64, String)>,
    /// Its last `usemtl`, `g` and `o` statements (when asked for).
    last: Statements,
}

/// An OBJ file opened for ingest (pass 1 done).
pub struct ObjScene {
    path: PathBuf,
    data: Option<Mmap>,
    vertices: Option<Mmap>,
    vertex_count: u64,
    bounds: WorldBounds,
    windows: Vec<Window>,
    /// The windows pass 2 reads (all of them unless [`ObjScene::read_part`] said otherwise).
    part: Range<usize>,
    limits: ReadLimits,
}

/// The file names of pass 1's results shared with other processes ([`ObjScene::open_shared`]).
const VERTEX_TABLE: &str = "vertices.table";
const WINDOW_TABLE: &str = "windows.table";
const WINDOW_TABLE_MAGIC: &[u8; 8] = b"TSOBJWIN";
const WINDOW_TABLE_VERSION: u32 = 2;
/// Bytes per window in the window table: text start and end, first line, first vertex, faces,
/// the statements in force where it starts.
const WINDOW_RECORD: usize = 8 * 4 + 1 + 8 * 3;
/// Bytes of the window table before its records: magic, version, up axis, the text's size
/// and mtime, vertex and window counts, vertex bounds, the area rules' key.
const WINDOW_TABLE_HEAD: usize = 8 + 4 + 1 + 4 * 8 + 6 * 8 + 8;

fn map_file(file: &File, path: &Path) -> Result<Option<Mmap>, IngestError> {
    crate::pages::map_file(file).map_err(|e| IngestError::io(path, e))
}

impl ObjScene {
    /// Maps `path` and runs pass 1 (the vertex table) within the default [`ReadLimits`].
    /// `scratch` receives the table's file.
    pub fn open(path: &Path, up: UpAxis, scratch: &Path) -> Result<ObjScene, IngestError> {
        ObjScene::open_with(path, up, scratch, ReadLimits::default())
    }

    /// [`ObjScene::open`] within `limits`, which also bound pass 2.
    pub fn open_with(
        path: &Path,
        up: UpAxis,
        scratch: &Path,
        limits: ReadLimits,
    ) -> Result<ObjScene, IngestError> {
        std::fs::create_dir_all(scratch).map_err(|e| IngestError::io(scratch, e))?;
        let table = tempfile::tempfile_in(scratch).map_err(|e| IngestError::io(scratch, e))?;
        ObjScene::vertex_pass(path, up, (table, scratch), limits)
    }

    /// [`ObjScene::open_with`], its vertex table and its window table written to `dir` (a
    /// folder every process of a distributed bake sees), so that other processes can read
    /// parts of pass 2 ([`ObjScene::open_tables`]) without a pass 1 of their own. The window
    /// table names the text's size and modification time and the area rules' key, and is
    /// checksummed.
    pub fn open_shared(
        path: &Path,
        up: UpAxis,
        dir: &Path,
        limits: ReadLimits,
    ) -> Result<ObjScene, IngestError> {
        std::fs::create_dir_all(dir).map_err(|e| IngestError::io(dir, e))?;
        let at = dir.join(VERTEX_TABLE);
        let table = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&at)
            .map_err(|e| IngestError::io(&at, e))?;
        // The vertex table's file is closed when the pass ends (its map stays), which on a
        // network file system sends its data to the server before the window table, written
        // after it, names it (close-to-open consistency); nothing needs it on the disk itself.
        let scene = ObjScene::vertex_pass(path, up, (table, &at), limits)?;
        let (size, mtime_ns) = crate::cache::size_and_mtime(path)?;
        let mut b = Vec::with_capacity(WINDOW_TABLE_HEAD + 8 + scene.windows.len() * WINDOW_RECORD);
        b.extend_from_slice(WINDOW_TABLE_MAGIC);
        b.extend_from_slice(&WINDOW_TABLE_VERSION.to_le_bytes());
        b.push(up.code());
        for v in [
            size,
            mtime_ns,
            scene.vertex_count,
            scene.windows.len() as u64,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for v in scene.bounds.min.iter().chain(&scene.bounds.max) {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&scene.limits.areas().key().to_le_bytes());
        for w in &scene.windows {
            for v in [
                w.text.start as u64,
                w.text.end as u64,
                w.first_line,
                w.first_vertex,
            ] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.push(u8::from(w.faces));
            for at in w.before.0 {
                b.extend_from_slice(&at.to_le_bytes());
            }
        }
        b.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&b).to_le_bytes());
        tessera_store::write_atomic(dir.join(WINDOW_TABLE), &b)?;
        Ok(scene)
    }

    /// The OBJ file `path` whose pass 1 another process ran into `dir`
    /// ([`ObjScene::open_shared`]): maps the text and the vertex table and reads the window
    /// table, refusing one made from another file or version of it, with other area rules
    /// than `limits`', or damaged.
    pub fn open_tables(
        path: &Path,
        up: UpAxis,
        dir: &Path,
        limits: ReadLimits,
    ) -> Result<ObjScene, IngestError> {
        let at = dir.join(WINDOW_TABLE);
        let b = std::fs::read(&at).map_err(|e| IngestError::io(&at, e))?;
        let bad = |message: &str| IngestError::Cache {
            path: at.clone(),
            message: message.to_string(),
        };
        let head = WINDOW_TABLE_HEAD;
        if b.len() < head + 8 || &b[..8] != WINDOW_TABLE_MAGIC {
            return Err(bad("not an OBJ window table"));
        }
        let (body, sum) = b.split_at(b.len() - 8);
        if xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() != sum {
            return Err(bad("window table checksum mismatch (damaged)"));
        }
        let u64_at = |o: usize| u64::from_le_bytes(body[o..o + 8].try_into().expect("8 bytes"));
        let f64_at = |o: usize| f64::from_bits(u64_at(o));
        if body[8..12] != WINDOW_TABLE_VERSION.to_le_bytes() || body[12] != up.code() {
            return Err(bad(
                "made by another version of tessera or with another up axis",
            ));
        }
        if (u64_at(13), u64_at(21)) != crate::cache::size_and_mtime(path)? {
            return Err(bad(
                "made from another version of the scene file (is the bake folder shared, and \
                 the scene the same file on every machine?)",
            ));
        }
        let (vertex_count, count) = (u64_at(29), u64_at(37) as usize);
        if body.len() != head + count * WINDOW_RECORD {
            return Err(bad("window table has the wrong length"));
        }
        let bounds = WorldBounds {
            min: [f64_at(45), f64_at(53), f64_at(61)],
            max: [f64_at(69), f64_at(77), f64_at(85)],
        };
        if u64_at(93) != limits.areas().key() {
            return Err(bad("made with other area rules"));
        }
        let windows: Vec<Window> = body[head..]
            .chunks_exact(WINDOW_RECORD)
            .map(|r| {
                let at = |k: usize| u64::from_le_bytes(r[k * 8..k * 8 + 8].try_into().unwrap());
                Window {
                    text: at(0) as usize..at(1) as usize,
                    first_line: at(2),
                    first_vertex: at(3),
                    faces: r[32] != 0,
                    before: Statements([0, 1, 2].map(|k| {
                        u64::from_le_bytes(r[33 + 8 * k..41 + 8 * k].try_into().unwrap())
                    })),
                }
            })
            .collect();
        let file = File::open(path).map_err(|e| IngestError::io(path, e))?;
        let data = map_file(&file, path)?;
        let len = data.as_ref().map_or(0, |d| d.len());
        if windows
            .iter()
            .any(|w| w.text.start > w.text.end || w.text.end > len)
        {
            return Err(bad("a window lies outside the scene file"));
        }
        let table_at = dir.join(VERTEX_TABLE);
        let table = File::open(&table_at).map_err(|e| IngestError::io(&table_at, e))?;
        let vertices = map_file(&table, &table_at)?;
        if vertices.as_ref().map_or(0, |v| v.len() as u64) != vertex_count * 24 {
            return Err(bad("the vertex table does not hold the vertices it names"));
        }
        Ok(ObjScene::of_pass_one(
            path,
            (data, vertices),
            (vertex_count, bounds, windows),
            limits,
        ))
    }

    /// The scene of `path` (its text and vertex table mapped) once pass 1 has counted its
    /// vertices, bounded them and cut the windows; pass 2 reads every window.
    fn of_pass_one(
        path: &Path,
        (data, vertices): (Option<Mmap>, Option<Mmap>),
        (vertex_count, bounds, windows): (u64, WorldBounds, Vec<Window>),
        limits: ReadLimits,
    ) -> ObjScene {
        ObjScene {
            path: path.to_path_buf(),
            data,
            vertices,
            vertex_count,
            bounds,
            part: 0..windows.len(),
            windows,
            limits,
        }
    }

    /// Pass 1 of `path`: its vertices into `table` (a new, empty file; `at` names it in
    /// messages), the windows of both passes cut and numbered.
    fn vertex_pass(
        path: &Path,
        up: UpAxis,
        (mut table, table_path): (File, &Path),
        limits: ReadLimits,
    ) -> Result<ObjScene, IngestError> {
        let file = File::open(path).map_err(|e| IngestError::io(path, e))?;
        let data = map_file(&file, path)?;
        let mut bounds = WorldBounds::EMPTY;
        let mut vertex_count = 0u64;
        let mut windows = Vec::new();
        if let Some(data) = &data {
            // The windows serve both passes; pass 2's results are the larger.
            let window = window_text(
                batch_text(limits.buffer_bytes, CACHE_GROWTH),
                limits.min_window,
            );
            let mut line = 1u64;
            let mut behind = Behind::new(data);
            // Statements are looked for only when they give areas.
            let names = !limits.areas().is_empty();
            let mut statements = Statements::EMPTY;
            in_order(
                cut(data, window),
                batch_text(limits.buffer_bytes, VERTEX_GROWTH),
                |_, text| vertex_window(&data[text.clone()], (text.start, names), up),
                |_, text, w: VertexWindow| {
                    limits.stop.check(path)?;
                    windows.push(Window {
                        text,
                        first_line: line,
                        first_vertex: vertex_count,
                        faces: w.faces,
                        before: statements,
                    });
                    statements = statements.then(w.last);
                    table
                        .write_all(&w.table)
                        .map_err(|e| IngestError::io(table_path, e))?;
                    vertex_count += w.count;
                    for axis in 0..3 {
                        bounds.min[axis] = bounds.min[axis].min(w.min[axis]);
                        bounds.max[axis] = bounds.max[axis].max(w.max[axis]);
                    }
                    if let Some((at, message)) = w.error {
                        return Err(IngestError::Obj {
                            path: path.to_path_buf(),
                            line: line + at - 1,
                            message,
                        });
                    }
                    line += w.lines;
                    Ok(())
                },
                |upto| {
                    behind.advance(upto);
                },
            )?;
            release(data, 0, data.len());
        }
        let vertices = map_file(&table, table_path)?;
        Ok(ObjScene::of_pass_one(
            path,
            (data, vertices),
            (vertex_count, bounds, windows),
            limits,
        ))
    }

    /// Number of `v` lines.
    pub fn vertex_count(&self) -> u64 {
        self.vertex_count
    }

    /// Pass 2's windows cut into `parts` runs, in file order, of about equal text among the
    /// windows that hold faces (the others cost nothing): each window goes to the run its
    /// middle falls in. A run may be empty (fewer face windows than runs). The same for the
    /// same windows.
    pub fn face_parts(&self, parts: u32) -> Vec<Range<usize>> {
        let parts = parts.max(1) as usize;
        let bytes = |w: &Window| if w.faces { w.text.len() as u64 } else { 0 };
        let total: u64 = self.windows.iter().map(bytes).sum::<u64>().max(1);
        let mut ends = vec![0usize; parts];
        let mut before = 0u64;
        for (i, w) in self.windows.iter().enumerate() {
            let middle = 2 * before + bytes(w);
            let k = (middle as u128 * parts as u128 / (2 * total as u128)) as usize;
            ends[k.min(parts - 1)] = i + 1;
            before += bytes(w);
        }
        // A run that got no window ends where the one before it does.
        for k in 1..parts {
            ends[k] = ends[k].max(ends[k - 1]);
        }
        (0..parts)
            .map(|k| if k == 0 { 0 } else { ends[k - 1] }..ends[k])
            .collect()
    }

    /// Pass 2 reads only `windows` from now on (one of [`ObjScene::face_parts`]): the
    /// triangles of that part of the file, in file order.
    pub fn read_part(&mut self, windows: Range<usize>) {
        let end = windows.end.min(self.windows.len());
        self.part = windows.start.min(end)..end;
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

    /// Pass 2 over window `w`: its triangles to `sink` in order (each with its face's line
    /// and area), until its first bad face.
    fn face_window(
        &self,
        data: &[u8],
        w: &Window,
        sink: &mut impl FnMut(WorldTriangle, u64, u8),
    ) -> Result<(), IngestError> {
        let mut seen_vertices = w.first_vertex;
        let mut polygon: Vec<u64> = Vec::with_capacity(8);
        let rules = self.limits.areas();
        let mut areas = (!rules.is_empty()).then(|| FaceAreas::at(data, w.before, rules));
        for (at, line) in Lines::new(&data[w.text.clone()]) {
            let mut tokens = Tokens::new(&line);
            match tokens.next() {
                Some(b"v") => seen_vertices += 1,
                Some(b"f") => {
                    let bad = |message| IngestError::Obj {
                        path: self.path.clone(),
                        line: w.first_line + at - 1,
                        message,
                    };
                    if !plain_face(tokens.rest(), seen_vertices, &mut polygon) {
                        polygon.clear();
                        for tok in tokens {
                            polygon.push(resolve_index(tok, seen_vertices).map_err(bad)?);
                        }
                    }
                    if polygon.len() < 3 {
                        return Err(bad(format!(
                            "face has {} vertices, needs at least 3",
                            polygon.len()
                        )));
                    }
                    let first = self.vertex(polygon[0]);
                    let line = w.first_line + at - 1;
                    let area = areas.as_ref().map_or(0, |a| a.area);
                    for k in 1..polygon.len() - 1 {
                        let t = [first, self.vertex(polygon[k]), self.vertex(polygon[k + 1])];
                        sink(t, line, area);
                    }
                }
                Some(word) => {
                    if let (Some(areas), Some(kind)) = (&mut areas, Naming::of(word)) {
                        areas.set(kind, tokens.rest());
                    }
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Pass 2: every window's triangles (with their line and area) gathered by `push` into a
    /// `T` on the pool, the `T`s handed to `emit` in file order; `growth` bounds the bytes of
    /// `T` per byte of text.
    fn faces<T: Send + Default>(
        &self,
        growth: usize,
        push: impl Fn(&mut T, WorldTriangle, u64, u8) + Sync,
        mut emit: impl FnMut(T) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        let Some(data) = &self.data else {
            return Ok(());
        };
        let mut behind = Behind::new(data);
        // The vertex table is read anywhere (faces name any earlier vertex): given back less
        // often than the text, every VERTICES_RELEASE_EVERY of text.
        const VERTICES_RELEASE_EVERY: usize = 64 << 20;
        let mut vertices_released = 0;
        let windows = &self.windows[self.part.clone()];
        in_order(
            windows.iter().map(|w| w.text.clone()),
            batch_text(self.limits.buffer_bytes, growth),
            |i, _| {
                let mut out = T::default();
                if !windows[i].faces {
                    return (out, Ok(()));
                }
                let result = self.face_window(data, &windows[i], &mut |t, line, area| {
                    push(&mut out, t, line, area)
                });
                (out, result)
            },
            |_, _, (out, result)| {
                emit(out)?;
                result
            },
            |upto| {
                behind.advance(upto);
                if upto / VERTICES_RELEASE_EVERY > vertices_released {
                    vertices_released = upto / VERTICES_RELEASE_EVERY;
                    if let Some(v) = &self.vertices {
                        release(v, 0, v.len());
                    }
                }
            },
        )?;
        release(data, 0, data.len());
        if let Some(v) = &self.vertices {
            release(v, 0, v.len());
        }
        Ok(())
    }
}

/// Pass 1 over one window of text (at `start` in the file): its vertices, Z-up, until its
/// first bad `v` line; with `names`, its last `usemtl`, `g` and `o` statements.
fn vertex_window(text: &[u8], (start, names): (usize, bool), up: UpAxis) -> VertexWindow {
    let mut out = VertexWindow {
        table: Vec::new(),
        count: 0,
        min: [f64::INFINITY; 3],
        max: [f64::NEG_INFINITY; 3],
        lines: 0,
        faces: false,
        error: None,
        last: Statements::EMPTY,
    };
    // Text without a `v` holds no vertex (the faces of a file mostly follow its vertices):
    // without a `\r` either, its physical lines are its line feeds, and the one after the last
    // when the text does not end with one. An `f` anywhere may be a face. Statements are
    // looked for only in text that has the first letter of one.
    if memchr::memchr2(b'v', b'\r', text).is_none()
        && !(names && memchr::memchr3(b'u', b'g', b'o', text).is_some())
    {
        out.faces = memchr::memchr(b'f', text).is_some();
        out.lines = memchr::memchr_iter(b'\n', text).count() as u64
            + u64::from(text.last().is_some_and(|&b| b != b'\n'));
        return out;
    }
    let mut lines = Lines::new(text);
    loop {
        let line_start = lines.position();
        let Some((at, line)) = lines.next() else {
            break;
        };
        let mut tokens = Tokens::new(&line);
        match tokens.next() {
            Some(b"v") => {}
            Some(b"f") => {
                out.faces = true;
                continue;
            }
            Some(word) if names => {
                if let Some(kind) = Naming::of(word) {
                    out.last.set(kind, (start + line_start) as u64);
                }
                continue;
            }
            _ => continue,
        }
        let mut p = [0.0f64; 3];
        for (axis, c) in p.iter_mut().enumerate() {
            let parsed = match tokens.next() {
                None => Err(format!("vertex has {axis} coordinates, needs 3")),
                Some(tok) => parse_coordinate(tok),
            };
            match parsed {
                Ok(v) => *c = v,
                Err(message) => {
                    out.error = Some((at, message));
                    return out;
                }
            }
        }
        let p = up.to_z_up(p);
        for axis in 0..3 {
            out.min[axis] = out.min[axis].min(p[axis]);
            out.max[axis] = out.max[axis].max(p[axis]);
        }
        for c in p {
            out.table.extend_from_slice(&c.to_le_bytes());
        }
        out.count += 1;
    }
    out.lines = lines.physical_lines();
    out
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
        self.faces(
            WORLD_GROWTH,
            |out: &mut Vec<WorldTriangle>, t, _, _| out.push(t),
            |out| out.into_iter().try_for_each(&mut *emit),
        )
    }

    fn locate(
        &mut self,
        inside: &(dyn Fn(&WorldTriangle) -> bool + Sync),
        max: usize,
    ) -> Result<Vec<Located>, IngestError> {
        let mut found = Vec::new();
        self.faces(
            WORLD_GROWTH,
            |out: &mut Vec<(u64, WorldTriangle)>, t, line, _| {
                if inside(&t) {
                    out.push((line, t));
                }
            },
            |out| {
                let room = max.saturating_sub(found.len());
                found.extend(out.into_iter().take(room).map(|(line, triangle)| Located {
                    place: format!("line {line}"),
                    triangle,
                }));
                Ok(())
            },
        )?;
        Ok(found)
    }

    fn for_each_cache_batch(
        &mut self,
        origin: [f64; 3],
        emit: &mut dyn FnMut(CacheBatch) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        self.faces(
            CACHE_GROWTH,
            |out: &mut CacheBatch, t, _, area| out.push(origin, t, area),
            emit,
        )
    }

    fn areas_key(&self) -> Option<u64> {
        Some(self.limits.areas().key())
    }
}

/// Parses one coordinate; refuses text that is not a number and non-finite values.
fn parse_coordinate(tok: &[u8]) -> Result<f64, String> {
    if let Some(v) = plain_decimal(tok) {
        return Ok(v);
    }
    let text = std::str::from_utf8(tok).map_err(|_| "coordinate is not valid UTF-8".to_string())?;
    let v: f64 = text
        .parse()
        .map_err(|_| format!("non-numeric coordinate `{}`", shown(tok)))?;
    if !v.is_finite() {
        return Err(format!("coordinate `{}` is not finite", shown(tok)));
    }
    Ok(v)
}

/// Longest token quoted whole in a message.
const SHOWN_BYTES: usize = 40;

/// A token as a message quotes it: control characters escaped (a NUL or an escape sequence
/// would be invisible, or act on the terminal), and cut after [`SHOWN_BYTES`] bytes (a
/// hostile line may be megabytes long).
fn shown(tok: &[u8]) -> String {
    let cut = &tok[..tok.len().min(SHOWN_BYTES)];
    let text: String = String::from_utf8_lossy(cut).escape_debug().collect();
    if tok.len() > SHOWN_BYTES {
        format!("{text}... ({} bytes)", tok.len())
    } else {
        text
    }
}

/// The value of `-?[0-9]+(.[0-9]+)?` text with at most 19 digits whose digits, read as one
/// integer, stay below 2^53, and whose fraction has at most 22 digits; None for any other text
/// (left to `str::parse`). Such an integer and the power of ten are both exact in f64, and
/// one division rounds correctly, so the result is the correctly rounded value `str::parse`
/// gives (the exact fast path of W. D. Clinger, "How to read floating point numbers
/// accurately", PLDI 1990), without its general machinery: coordinates are written this way.
#[inline]
fn plain_decimal(tok: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (negative, mut text) = match tok {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, tok),
    };
    // One pass: the integer's digits, then a point and the fraction's.
    let (mut m, mut digits) = (0u64, 0usize);
    while let [d @ b'0'..=b'9', rest @ ..] = text {
        m = m.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
        digits += 1;
        text = rest;
    }
    let int_digits = digits;
    if let [b'.', rest @ ..] = text {
        text = rest;
        while let [d @ b'0'..=b'9', rest @ ..] = text {
            m = m.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            digits += 1;
            text = rest;
        }
        if digits == int_digits {
            return None;
        }
    }
    // Up to 19 digits read without wrapping.
    if !text.is_empty() || int_digits == 0 || digits > 19 || m >= 1 << 53 {
        return None;
    }
    let v = m as f64 / POW10[digits - int_digits];
    Some(if negative { -v } else { v })
}

/// The vertices of a face line's `text` (after its `f`) in the plain form nearly every file
/// writes, resolved against the `seen` vertices into `out`: whitespace-separated tokens, each
/// an optional `-` and 1 to 18 digits, then nothing or a `/` and anything up to the next
/// whitespace. One pass over the text, no token split. False (with `out` in any state) on
/// anything else, an index 0 or out of range included: [`resolve_index`] then reads the line
/// token by token, to the same vertices or to the error message.
#[inline]
fn plain_face(mut text: &[u8], seen: u64, out: &mut Vec<u64>) -> bool {
    use crate::lines::is_space;
    out.clear();
    loop {
        while let [b, rest @ ..] = text {
            if !is_space(*b) {
                break;
            }
            text = rest;
        }
        let [first, ..] = text else {
            return true;
        };
        let negative = *first == b'-';
        if negative {
            text = &text[1..];
        }
        let (mut value, mut digits) = (0u64, 0);
        while let [d @ b'0'..=b'9', rest @ ..] = text {
            value = value * 10 + u64::from(d - b'0');
            digits += 1;
            text = rest;
            if digits > 18 {
                return false;
            }
        }
        match text {
            [] => {}
            [b, ..] if is_space(*b) => {}
            [b'/', ..] => {
                while let [b, rest @ ..] = text {
                    if is_space(*b) {
                        break;
                    }
                    text = rest;
                }
            }
            _ => return false,
        }
        let resolved = match (digits, negative) {
            (0, _) => return false,
            (_, false) => value.wrapping_sub(1),
            (_, true) => seen.wrapping_sub(value),
        };
        // Index 0 is refused; an index before the first vertex wraps past any table.
        if value == 0 || resolved >= seen {
            return false;
        }
        out.push(resolved);
    }
}

/// Resolves a face vertex token (`i`, `i/t`, `i//n`, `i/t/n`; `i` may be negative) against the
/// `seen` vertices defined so far, to a 0-based index.
fn resolve_index(tok: &[u8], seen: u64) -> Result<u64, String> {
    let head = tok.split(|&b| b == b'/').next().unwrap_or(tok);
    let i =
        parse_i64(head).ok_or_else(|| format!("face vertex `{}` is not an index", shown(tok)))?;
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

/// `str::parse::<i64>` on bytes, without the UTF-8 check: an optional sign, then at least one
/// ASCII digit; None on anything else or on overflow.
#[inline]
fn parse_i64(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value = 0i64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        // Negative numbers are accumulated downwards so that i64::MIN parses.
        value = value.checked_mul(10)?;
        value = if negative {
            value.checked_sub(d)?
        } else {
            value.checked_add(d)?
        };
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_decimals_parse_as_std_parses_them() {
        for text in [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1",
            "-1.5",
            "0.1",
            "3.4232",
            "-1234.5678",
            "9007199254740991",
            "9007199254740992",
            "0.30000000000000004",
            "123456789.123456789",
            "00012.500",
            "1.",
            ".5",
            "1e5",
            "+1",
            "--1",
            "1.2.3",
            "",
            "-",
            "0x10",
            "1_0",
        ] {
            if let Some(v) = plain_decimal(text.as_bytes()) {
                let want: f64 = text.parse().unwrap();
                assert_eq!(v.to_bits(), want.to_bits(), "{text}");
            }
        }
        assert!(plain_decimal(b"1e5").is_none() && plain_decimal(b"1.").is_none());
        assert_eq!(plain_decimal(b"3.4232"), Some(3.4232));
    }

    proptest::proptest! {
        #[test]
        fn any_plain_decimal_parses_as_std_parses_it(
            text in "-?[0-9]{1,12}(\\.[0-9]{1,12})?",
        ) {
            let want: f64 = text.parse().unwrap();
            let got = parse_coordinate(text.as_bytes()).unwrap();
            proptest::prop_assert_eq!(got.to_bits(), want.to_bits(), "{}", text);
        }
    }

    #[test]
    fn indices_parse_as_std_parses_them() {
        for text in [
            "1",
            "-1",
            "+7",
            "0",
            "-0",
            "007",
            "",
            "+",
            "-",
            "+-1",
            "--1",
            "1a",
            " 1",
            "1.0",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999999",
            "１",
        ] {
            assert_eq!(
                parse_i64(text.as_bytes()),
                text.parse::<i64>().ok(),
                "{text:?}"
            );
        }
        assert_eq!(parse_i64(b"\xff1"), None);
    }

    proptest::proptest! {
        #[test]
        fn any_index_text_parses_as_std_parses_it(text in "[+-]{0,2}[0-9]{0,21}[x/]?") {
            proptest::prop_assert_eq!(parse_i64(text.as_bytes()), text.parse::<i64>().ok());
        }
    }

    /// The general reading of a face line's text: token by token.
    fn face_by_tokens(text: &str, seen: u64) -> Result<Vec<u64>, String> {
        Tokens::new(text.as_bytes())
            .map(|tok| resolve_index(tok, seen))
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn plain_faces_read_as_token_by_token(
            tokens in proptest::collection::vec(proptest::prop_oneof![
                4 => "-?[1-3]?[0-9](/[0-9]{0,2}){0,2}",
                1 => "[+-]{0,1}[0-9]{0,20}(/[0-9x]{0,2}){0,2}[x#]{0,1}",
            ], 0..6),
            spaces in proptest::collection::vec("[ \t\x0b\x0c]{1,2}", 6),
            seen in 0u64..40,
        ) {
            let text: String = tokens
                .iter()
                .zip(&spaces)
                .map(|(t, s)| format!("{s}{t}"))
                .collect();
            let mut fast = Vec::new();
            let general = face_by_tokens(&text, seen);
            if plain_face(text.as_bytes(), seen, &mut fast) {
                proptest::prop_assert_eq!(Ok(fast), general, "{:?}", text);
            }
        }
    }

    #[test]
    fn plain_faces_are_taken_and_the_rest_left_to_the_tokens() {
        let mut out = Vec::new();
        for (text, seen, want) in [
            (" 1 2 3", 3, Some(vec![0, 1, 2])),
            ("\t-1/4/2 -2//9 1/x", 5, Some(vec![4, 3, 0])),
            (" 4 5 6 ", 5, None),
            (" 0 1 2", 5, None),
            (" -0 1 2", 5, None),
            (" +1 2 3", 5, None),
            (" 1a 2 3", 5, None),
            (" 1234567890123456789 1 2", 5, None),
            ("", 5, Some(vec![])),
        ] {
            let taken = plain_face(text.as_bytes(), seen, &mut out);
            assert_eq!(taken.then(|| out.clone()), want, "{text:?}");
        }
    }

    #[test]
    fn text_without_vertices_counts_its_lines_as_the_line_reader_does() {
        for text in [
            "",
            "\n",
            "f 1 2 3",
            "f 1 2 3\n",
            "f 1 2 3\n\nf 1 2 \\\n3 # c\n",
            "# only a comment",
            "g group\nf 1 2 3\n\n",
        ] {
            let mut lines = Lines::new(text.as_bytes());
            let faces = lines
                .by_ref()
                .any(|(_, l)| Tokens::new(&l).next() == Some(b"f"));
            lines.by_ref().for_each(drop);
            let w = vertex_window(text.as_bytes(), (0, false), UpAxis::Z);
            assert_eq!(
                (w.lines, w.count, w.faces || !faces),
                (lines.physical_lines(), 0, true),
                "{text:?}"
            );
        }
    }

    /// Limits that cut a small text everywhere: one logical line per window and batch; a few
    /// lines per window, several windows per batch.
    fn cut_everywhere() -> [ReadLimits; 2] {
        [
            ReadLimits::new(1).with_min_window(1),
            ReadLimits::new(3000).with_min_window(1),
        ]
    }

    #[test]
    fn located_triangles_name_their_faces_lines_whatever_the_windows() {
        // Issue 21, class 1: a warning about a few stray triangles names their lines.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.obj");
        let text = "# a floor far away, then a stray quad\n\
                    v 500 500 0\nv 501 500 0\nv 501 501 0\nv 500 501 0\n\
                    f 1 2 3\n\nf 1 3 4\n\
                    v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n\
                    # the stray one\n\
                    f 5 6 7 8\n";
        std::fs::write(&path, text).unwrap();
        let near_origin = |t: &WorldTriangle| t.iter().all(|p| p[0] < 100.0);
        for limits in cut_everywhere() {
            let scratch = tempfile::tempdir().unwrap();
            let mut scene = ObjScene::open_with(&path, UpAxis::Z, scratch.path(), limits).unwrap();
            let found = scene.locate(&near_origin, 8).unwrap();
            let places: Vec<&str> = found.iter().map(|l| l.place.as_str()).collect();
            assert_eq!(places, ["line 14", "line 14"], "a quad is two triangles");
            assert_eq!(found[0].triangle[0], [0.0, 0.0, 0.0]);
            let scratch = tempfile::tempdir().unwrap();
            let mut scene = ObjScene::open(&path, UpAxis::Z, scratch.path()).unwrap();
            let first = scene.locate(&|_| true, 1).unwrap();
            assert_eq!(first[0].place, "line 6", "at most `max`, in file order");
        }
    }

    #[test]
    fn a_raised_stop_ends_the_hash_and_the_vertex_pass() {
        // Issue 21, class 5: an interrupted bake stopped only once the triangles were read;
        // the scene's hash and its vertex pass (seconds on a large scene) ran to their end.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.obj");
        let text: String = (0..2000)
            .map(|i| format!("v {i} 0 0\nv {i} 1 0\nv {i} 0 1\nf -3 -2 -1\n"))
            .collect();
        std::fs::write(&path, text).unwrap();
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = crate::Stop::on(flag.clone());
        let limits = ReadLimits::new(1)
            .with_min_window(1)
            .with_stop(stop.clone());
        // Down: both read to the end.
        crate::cache::SourceKey::of_file(&path, UpAxis::Z, &limits).unwrap();
        assert_eq!(read_triangles(&path, limits.clone()).unwrap().len(), 2000);
        // Raised: each stops, naming the file.
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
        for e in [
            crate::cache::SourceKey::of_file(&path, UpAxis::Z, &limits).unwrap_err(),
            read_triangles(&path, limits).unwrap_err(),
        ] {
            assert!(matches!(e, IngestError::Stopped { .. }), "{e}");
            assert!(e.to_string().contains("s.obj"), "{e}");
        }
    }

    fn read_triangles(path: &Path, limits: ReadLimits) -> Result<Vec<WorldTriangle>, IngestError> {
        let scratch = tempfile::tempdir().unwrap();
        let mut scene = ObjScene::open_with(path, UpAxis::Z, scratch.path(), limits)?;
        let mut out = Vec::new();
        scene.for_each_triangle(&mut |t| {
            out.push(t);
            Ok(())
        })?;
        Ok(out)
    }

    /// The triangles of `text` read whole, after checking that windows change nothing.
    fn triangles(text: &str) -> Result<Vec<WorldTriangle>, IngestError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.obj");
        std::fs::write(&path, text).unwrap();
        let whole = read_triangles(&path, ReadLimits::default());
        for limits in cut_everywhere() {
            let cut = read_triangles(&path, limits.clone());
            assert_eq!(format!("{cut:?}"), format!("{whole:?}"), "{limits:?}");
        }
        whole
    }

    /// Everything a bake keeps of `path`: the bounds and the cache's bytes, or the error.
    fn cache_of(path: &Path, limits: ReadLimits) -> Result<(WorldBounds, Vec<u8>), String> {
        let scratch = tempfile::tempdir().unwrap();
        let key = crate::cache::SourceKey::of_file(path, UpAxis::Z, &limits).unwrap();
        let mut scene = ObjScene::open_with(path, UpAxis::Z, scratch.path(), limits)
            .map_err(|e| format!("{e:?}"))?;
        let cache = scratch.path().join("scene.cache");
        crate::cache::build_cache(&mut scene, key, &cache).map_err(|e| format!("{e:?}"))?;
        Ok((scene.bounds(), std::fs::read(&cache).unwrap()))
    }

    /// [`cache_of`] by `parts` readers: pass 1 shared through its tables, each part of pass 2
    /// read by a scene opened from them, the parts joined; the first error in file order.
    fn cache_in_parts(
        path: &Path,
        limits: ReadLimits,
        parts: u32,
    ) -> Result<(WorldBounds, Vec<u8>), String> {
        use crate::cache::{build_cache_part, write_split};
        let dir = tempfile::tempdir().unwrap();
        let key = crate::cache::SourceKey::of_file(path, UpAxis::Z, &limits).unwrap();
        let tables = dir.path().join("tables");
        let first = ObjScene::open_shared(path, UpAxis::Z, &tables, limits.clone())
            .map_err(|e| format!("{e:?}"))?;
        let runs = first.face_parts(parts);
        assert_eq!(runs.len(), parts as usize);
        assert_eq!(runs.first().map(|r| r.start), Some(0));
        assert_eq!(runs.last().map(|r| r.end), Some(first.windows.len()));
        assert!(runs.windows(2).all(|r| r[0].end == r[1].start));
        let bounds = first.bounds();
        let mut paths = Vec::new();
        for (p, run) in runs.into_iter().enumerate() {
            let mut scene = ObjScene::open_tables(path, UpAxis::Z, &tables, limits.clone())
                .map_err(|e| format!("{e:?}"))?;
            scene.read_part(run);
            let at = dir.path().join(format!("part-{p}.cache"));
            build_cache_part(&mut scene, key, &at).map_err(|e| format!("{e:?}"))?;
            paths.push(at);
        }
        let name = path.display().to_string();
        let manifest = dir.path().join("scene.parts");
        let split = write_split(&manifest, &paths, key, &name).map_err(|e| format!("{e:?}"))?;
        let reopened = crate::cache::open_split(&manifest, Some(key))
            .unwrap()
            .expect("the same key");
        assert_eq!(reopened.whole, split.whole);
        // The one cache's bytes: the parts' triangles end to end, their areas end to end,
        // zeros to a multiple of 8, then the whole's trailer.
        let mut bytes: Vec<u8> = split
            .parts
            .iter()
            .flat_map(|p| bytemuck::cast_slice::<_, u8>(p.triangles()).to_vec())
            .collect();
        for p in &split.parts {
            bytes.extend_from_slice(p.areas());
        }
        bytes.resize(bytes.len().next_multiple_of(8), 0);
        bytes.extend_from_slice(&split.whole.encode());
        Ok((bounds, bytes))
    }

    fn coordinate() -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::sample::select(vec!["0", "-0", "1", "-1.5", "2e1", "0.1", "-0.0"])
    }

    /// One line of a random OBJ: vertices with signed zeros, faces in every index form (some
    /// out of range, some degenerate), comments, continuations, line ends of another
    /// convention inside, the odd bad line.
    fn obj_line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let coordinate = coordinate();
        let index = (-12i32..15, 0usize..4).prop_map(|(i, form)| {
            let i = if i == 0 { 1 } else { i };
            [
                format!("{i}"),
                format!("{i}/1"),
                format!("{i}//2"),
                format!("{i}/3/4"),
            ][form]
                .clone()
        });
        prop_oneof![
            8 => prop::collection::vec(coordinate, 3..5).prop_map(|c| format!("v {}", c.join(" "))),
            6 => prop::collection::vec(index, 3..7).prop_map(|i| format!("f {}", i.join(" "))),
            1 => Just("f 1 2 \\\n 3 # continued".to_string()),
            1 => Just("# comment \\".to_string()),
            1 => Just("vt 0 0".to_string()),
            1 => Just(String::new()),
            1 => Just("v 1 \\\r\n2 3".to_string()),
            1 => Just("v 1 \\\r2 3\rf -1 -2 -3".to_string()),
            2 => proptest::sample::select(vec![
                "usemtl Water",
                "usemtl Stone # a comment",
                "usemtl",
                "g road street",
                "g grass \\\n myroad",
                "g",
                "  o  thing  ",
                "o",
                "o my road",
            ]).prop_map(str::to_string),
        ]
    }

    /// Rules for the names [`obj_line`] writes.
    fn test_rules() -> AreaRules {
        let rule = |p: &[&str]| p.iter().map(|s| s.to_string()).collect();
        AreaRules::new(vec![
            rule(&["Water*"]),
            rule(&["road*", "str??t"]),
            rule(&["*road"]),
            rule(&["thing"]),
        ])
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn windows_change_no_byte_and_no_error(
            head in proptest::collection::vec(proptest::collection::vec(coordinate(), 3), 12),
            lines in proptest::collection::vec(obj_line(), 0..60),
            end in proptest::sample::select(vec!["\n", "\r\n", "\r"]),
            bad in proptest::option::weighted(0.2, 0usize..72),
            named in proptest::bool::ANY,
        ) {
            let mut lines: Vec<String> = head.iter().map(|c| format!("v {}", c.join(" "))).chain(lines).collect();
            if let Some(at) = bad.filter(|&at| at < lines.len()) {
                lines[at] = "v 1 x 2".to_string();
            }
            let text = lines.join(end);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.obj");
            std::fs::write(&path, &text).unwrap();
            let rules = if named { test_rules() } else { AreaRules::default() };
            let whole = cache_of(&path, ReadLimits::default().with_areas(rules.clone()));
            for limits in cut_everywhere() {
                let limits = limits.with_areas(rules.clone());
                proptest::prop_assert_eq!(&cache_of(&path, limits.clone()), &whole, "{:?}", limits);
                for parts in [2, 3] {
                    let split = cache_in_parts(&path, limits.clone(), parts);
                    proptest::prop_assert_eq!(&split, &whole, "{} parts, {:?}", parts, limits);
                }
            }
        }
    }

    /// The areas of `path`'s cache read within `limits`.
    fn areas_of(path: &Path, limits: ReadLimits) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let key = crate::cache::SourceKey::of_file(path, UpAxis::Z, &limits).unwrap();
        let mut scene = ObjScene::open_with(path, UpAxis::Z, dir.path(), limits).unwrap();
        let at = dir.path().join("scene.cache");
        crate::cache::build_cache(&mut scene, key, &at).unwrap();
        let cache = crate::cache::SceneCache::open(&at).unwrap();
        assert_eq!(cache.areas().len(), cache.triangles().len());
        cache.areas().to_vec()
    }

    #[test]
    fn statements_give_faces_their_areas_whatever_the_windows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("named.obj");
        let text = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n\
                    f 1 2 3\n\
                    usemtl Water\nf 1 2 3\n\
                    g road street\nf 1 3 4\n\
                    o thing\nf 1 2 3 4\n\
                    usemtl Stone # first rule of road and thing: road's\nf 1 2 3\n\
                    g\nf 1 2 3\n\
                    o\nf 1 2 3\n\
                    g grass \\\n  myroad\nf 1 2 3\n\
                    f 1 1 2\n\
                    usemtl Water\r\nf 1 2 3\n";
        std::fs::write(&path, text).unwrap();
        // By line: none; Water; Water road street; + thing (a quad: two triangles); Stone
        // road street thing; Stone thing; Stone; Stone grass myroad; (degenerate, skipped);
        // Water grass myroad.
        let want = [0, 1, 1, 1, 1, 2, 4, 0, 3, 1];
        let rules = test_rules();
        let whole = areas_of(&path, ReadLimits::default().with_areas(rules.clone()));
        assert_eq!(whole, want);
        for limits in cut_everywhere() {
            let limits = limits.with_areas(rules.clone());
            assert_eq!(areas_of(&path, limits.clone()), want, "{limits:?}");
            for parts in [2, 3, 5] {
                assert_eq!(
                    cache_in_parts(&path, limits.clone(), parts),
                    cache_of(&path, ReadLimits::default().with_areas(rules.clone())),
                    "{parts} parts, {limits:?}"
                );
            }
        }
        // Without rules, or with rules no name matches, every triangle is area 0.
        assert_eq!(areas_of(&path, ReadLimits::default()), [0; 10]);
        let none = AreaRules::new(vec![vec!["water".into(), "?".into()]]);
        assert_eq!(
            areas_of(&path, ReadLimits::default().with_areas(none)),
            [0; 10]
        );
        // The order of the rules decides.
        let rule = |p: &[&str]| p.iter().map(|s| s.to_string()).collect();
        let reversed = AreaRules::new(vec![rule(&["thing"]), rule(&["*"])]);
        let got = areas_of(
            &path,
            ReadLimits::new(1).with_min_window(1).with_areas(reversed),
        );
        assert_eq!(got, [0, 2, 2, 1, 1, 1, 1, 2, 2, 2]);
    }

    #[test]
    fn shared_tables_made_with_other_rules_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.obj");
        std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl Water\nf 1 2 3\n").unwrap();
        let tables = dir.path().join("tables");
        let named = ReadLimits::default().with_areas(test_rules());
        ObjScene::open_shared(&path, UpAxis::Z, &tables, named.clone()).unwrap();
        assert!(ObjScene::open_tables(&path, UpAxis::Z, &tables, named).is_ok());
        let e = ObjScene::open_tables(&path, UpAxis::Z, &tables, ReadLimits::default())
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("other area rules"), "{e}");
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
    fn a_byte_order_mark_keeps_the_first_vertex() {
        let quad = vec![[QUAD[0], QUAD[1], QUAD[2]], [QUAD[0], QUAD[2], QUAD[3]]];
        let body = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n";
        assert_eq!(triangles(&format!("\u{feff}{body}")).unwrap(), quad);
        // The mark counts for nothing: errors still name the line they are on.
        let err = triangles("\u{feff}v 0 0 0\nv 1 0\n").unwrap_err();
        assert!(matches!(err, IngestError::Obj { line: 2, .. }), "{err}");
        // Only a mark at the very start is one: elsewhere the bytes are text as before.
        let err = triangles("v 0 0 0\nv 1 0 0\n\u{feff}v 1 1 0\nf 1 2 3\n").unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
    }

    #[test]
    fn bad_tokens_are_quoted_visibly_and_briefly() {
        // A NUL glued to an index printed as `3`, which looks like a fine index.
        let err = triangles("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\0\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":4:") && err.contains("`3\\0`"), "{err}");
        // An escape sequence is shown, not sent to the terminal.
        let err = triangles("v 0 0 \x1b[2J\n").unwrap_err().to_string();
        assert!(err.contains("\\u{1b}[2J") && !err.contains('\x1b'), "{err}");
        // A long token is cut, with its length said.
        let long = format!("v 0 0 {}x\n", "9".repeat(10_000));
        let err = triangles(&long).unwrap_err().to_string();
        assert!(err.len() < 200 && err.contains("10001 bytes"), "{err}");
    }

    #[test]
    fn every_line_end_convention_reads_the_same() {
        let quad = vec![[QUAD[0], QUAD[1], QUAD[2]], [QUAD[0], QUAD[2], QUAD[3]]];
        let lines = [
            "# corners",
            "v 0 0 0",
            "v 1 0 0",
            "v 1 1 \\",
            "0",
            "v 0 1 0",
            "f 1 2 3 4",
        ];
        for end in ["\n", "\r\n", "\r"] {
            let text = lines.join(end);
            assert_eq!(triangles(&text).unwrap(), quad, "{end:?}");
            assert_eq!(triangles(&format!("{text}{end}")).unwrap(), quad, "{end:?}");
        }
        // Mixed in one file, and line numbers count old Mac line ends too.
        assert_eq!(
            triangles("v 0 0 0\rv 1 0 0\r\nv 1 1 0\nv 0 1 0\r\rf 1 2 3 4").unwrap(),
            quad
        );
        let err = triangles("v 0 0 0\rv 1 0 0\r\rv 1 x 0\r").unwrap_err();
        assert!(matches!(err, IngestError::Obj { line: 4, .. }), "{err}");
    }

    #[test]
    fn empty_file_has_no_triangles() {
        assert!(triangles("").unwrap().is_empty());
        assert!(triangles("# nothing\n").unwrap().is_empty());
    }
}
