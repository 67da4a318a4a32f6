//! glTF 2.0 scenes (`.gltf` with external or embedded buffers, and `.glb`).
//!
//! Every primitive in triangle mode (lists, strips, fans), indexed or not, is read with its
//! node's world transform applied. With area rules ([`ReadLimits::with_areas`]), its
//! triangles' area is that of the names of its material, its mesh, its node and the node's
//! ancestors. Transforms are composed in f64 from the JSON text itself:
//! the `gltf` crate narrows them to f32, which would move a UTM-like node translation (x around
//! 500 000) by centimetres. Accessors are bounds-checked against their buffers before any read,
//! so a hostile or truncated file gives an error naming the accessor, never a panic.
//!
//! Instancing is bounded: the triangles the scene's mesh instances will make are counted from
//! the accessors' counts, an instance at a time, before any vertex is read, and a scene whose
//! copies of meshes make more than [`ReadLimits::instanced_triangles`] is refused.
//!
//! Memory: the file (and each buffer file) is memory-mapped, not read: a GLB's binary chunk is
//! used where it lies. Nothing of a primitive is copied; each triangle is read from the
//! buffers when asked for (its indices, its positions through the instance's transform), in
//! runs of triangles on the caller's rayon pool, taken in file order, and the mapped pages are
//! given back every [`RELEASE_ELEMENTS`] elements, so a scene larger than the memory budget
//! keeps a bounded part of it resident. The checks (finite positions, indices in range) and
//! the bounds pass at opening run the same way.

use crate::areas::{AreaMemo, AreaRules};
use crate::cache::CacheBatch;
use crate::{IngestError, ReadLimits, SceneSource, WorldTriangle};
use base64::Engine;
use gltf::mesh::Mode;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tessera_geom::{UpAxis, WorldBounds};

type Mat4 = [[f64; 4]; 4]; // column-major, as glTF

const IDENTITY: Mat4 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut r = [[0.0; 4]; 4];
    for (c, col) in r.iter_mut().enumerate() {
        for (row, v) in col.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[k][row] * b[c][k]).sum();
        }
    }
    r
}

fn transform_point(m: &Mat4, p: [f32; 3]) -> [f64; 3] {
    let p = [p[0] as f64, p[1] as f64, p[2] as f64];
    let mut out = [0.0; 3];
    for (row, o) in out.iter_mut().enumerate() {
        *o = m[0][row] * p[0] + m[1][row] * p[1] + m[2][row] * p[2] + m[3][row];
    }
    out
}

/// A node's local matrix from its JSON (`matrix`, or `translation` / `rotation` / `scale`), in f64.
fn local_matrix(node: &serde_json::Value) -> Mat4 {
    let nums = |key: &str| -> Option<Vec<f64>> {
        node.get(key)?
            .as_array()?
            .iter()
            .map(|v| v.as_f64())
            .collect()
    };
    if let Some(m) = nums("matrix").filter(|m| m.len() == 16) {
        let mut r = [[0.0; 4]; 4];
        for c in 0..4 {
            for row in 0..4 {
                r[c][row] = m[c * 4 + row];
            }
        }
        return r;
    }
    let t = nums("translation")
        .filter(|v| v.len() == 3)
        .unwrap_or(vec![0.0; 3]);
    let q = nums("rotation")
        .filter(|v| v.len() == 4)
        .unwrap_or(vec![0.0, 0.0, 0.0, 1.0]);
    let s = nums("scale")
        .filter(|v| v.len() == 3)
        .unwrap_or(vec![1.0; 3]);
    let (x, y, z, w) = (q[0], q[1], q[2], q[3]);
    // Rotation matrix of a unit quaternion, columns scaled.
    let rot = [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + z * w),
            2.0 * (x * z - y * w),
        ],
        [
            2.0 * (x * y - z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + x * w),
        ],
        [
            2.0 * (x * z + y * w),
            2.0 * (y * z - x * w),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ];
    let mut r = IDENTITY;
    for c in 0..3 {
        for row in 0..3 {
            r[c][row] = rot[c][row] * s[c];
        }
    }
    r[3] = [t[0], t[1], t[2], 1.0];
    r
}

/// What a primitive reads from an accessor.
#[derive(Clone, Copy)]
enum Role {
    Positions,
    Indices,
}

/// Checks that every primitive's POSITION names an accessor of the file: the one reference
/// the `gltf` crate's validation follows before checking it. Returns the part at fault and
/// why.
fn check_position_references(root: &gltf::json::Root) -> Result<(), (String, String)> {
    let positions = gltf::json::validation::Checked::Valid(gltf::Semantic::Positions);
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            if let Some(accessor) = primitive.attributes.get(&positions) {
                if accessor.value() >= root.accessors.len() {
                    return Err((
                        format!("mesh {m} primitive {p}"),
                        format!(
                            "POSITION names accessor {}, the file has {}",
                            accessor.value(),
                            root.accessors.len()
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The triangles a primitive with `n` indices (or positions, unindexed) makes in `mode`, as
/// [`GltfScene::visit`] reads them: lists n / 3, strips and fans n - 2, other modes none.
fn triangles_of(mode: Mode, n: usize) -> u64 {
    let n = n as u64;
    match mode {
        Mode::Triangles => n / 3,
        Mode::TriangleStrip | Mode::TriangleFan => n.saturating_sub(2),
        _ => 0,
    }
}

/// The first rule matching the name of item `index` of the JSON's array `list` (`nodes`,
/// `meshes`, `materials`); 0 when none matches or it has no name.
fn first_rule(memo: &mut AreaMemo, json: &serde_json::Value, list: &str, index: usize) -> u8 {
    if memo.rules().is_empty() {
        return 0;
    }
    let name = json
        .get(list)
        .and_then(|l| l.get(index))
        .and_then(|item| item.get("name"))
        .and_then(|n| n.as_str());
    name.map_or(0, |n| memo.first_rule(n.as_bytes()))
}

/// The area of each primitive of `mesh` under a node whose names (its own and its
/// ancestors') have area `nodes`: the earliest of theirs, the mesh's and the material's. Empty
/// without rules.
fn mesh_areas(
    memo: &mut AreaMemo,
    json: &serde_json::Value,
    mesh: &gltf::Mesh,
    nodes: u8,
) -> Vec<u8> {
    if memo.rules().is_empty() {
        return Vec::new();
    }
    let named = AreaRules::earlier(nodes, first_rule(memo, json, "meshes", mesh.index()));
    mesh.primitives()
        .map(|p| {
            let material = p
                .material()
                .index()
                .map_or(0, |m| first_rule(memo, json, "materials", m));
            AreaRules::earlier(named, material)
        })
        .collect()
}

/// One mesh to read (every primitive of it), with its world transform.
struct Instance {
    mesh: usize,
    matrix: Mat4,
    /// The area of each of its primitives' triangles (empty without area rules: all 0).
    areas: Vec<u8>,
}

/// A glTF file loaded for ingest.
pub struct GltfScene {
    path: PathBuf,
    document: gltf::Document,
    buffers: Vec<Buffer>,
    instances: Vec<Instance>,
    up: UpAxis,
    bounds: WorldBounds,
    /// Triangles per batch of runs filled at once for the cache: two batches' results are
    /// held at a time, within the limits' buffer bound.
    batch_triangles: usize,
    /// The key of the area rules the instances' areas were given by.
    areas_key: u64,
}

impl GltfScene {
    /// Reads the `.gltf` or `.glb` at `path`; external buffers are read from its folder.
    pub fn open(path: &Path, up: UpAxis) -> Result<GltfScene, IngestError> {
        GltfScene::open_with(path, up, ReadLimits::default())
    }

    /// [`GltfScene::open`] within `limits` (of which glTF uses the instancing bound).
    pub fn open_with(
        path: &Path,
        up: UpAxis,
        limits: ReadLimits,
    ) -> Result<GltfScene, IngestError> {
        let store = Store::map(path).map_err(|e| IngestError::io(path, e))?;
        let base = path.parent().unwrap_or(Path::new("."));
        guarded(path, || {
            GltfScene::from_store(path, Arc::new(store), up, Some(base), limits)
        })
    }

    /// Reads a `.gltf` or `.glb` held in memory. `path` names it in messages; buffers that
    /// are files (not data URIs or the GLB binary chunk) are read from the folder `base`, and
    /// refused when `base` is `None`.
    pub fn from_bytes(
        path: &Path,
        bytes: Vec<u8>,
        up: UpAxis,
        base: Option<&Path>,
    ) -> Result<GltfScene, IngestError> {
        GltfScene::from_bytes_with(path, bytes, up, base, ReadLimits::default())
    }

    /// [`GltfScene::from_bytes`] within `limits`.
    pub fn from_bytes_with(
        path: &Path,
        bytes: Vec<u8>,
        up: UpAxis,
        base: Option<&Path>,
        limits: ReadLimits,
    ) -> Result<GltfScene, IngestError> {
        GltfScene::from_store(path, Arc::new(Store::Owned(bytes)), up, base, limits)
    }

    /// [`GltfScene::from_bytes_with`] over the bytes of `store`: the binary chunk of a GLB
    /// and the buffer files are read where they lie, not copied.
    fn from_store(
        path: &Path,
        store: Arc<Store>,
        up: UpAxis,
        base: Option<&Path>,
        limits: ReadLimits,
    ) -> Result<GltfScene, IngestError> {
        let bytes = store.bytes();
        let err = |part: &str, message: String| IngestError::Gltf {
            path: path.to_path_buf(),
            part: part.to_string(),
            message,
        };
        let is_glb = bytes.starts_with(b"glTF");
        let named_glb = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("glb"));
        if named_glb && !is_glb {
            // Read as JSON, a binary file would only say "expected value at line 1 column 1".
            let start = &bytes[..bytes.len().min(4)];
            return Err(err(
                "container",
                format!(
                    "not a .glb: it starts with {:?}, a GLB file with \"glTF\"",
                    String::from_utf8_lossy(start)
                ),
            ));
        }
        let (json_bytes, blob): (Vec<u8>, Option<Buffer>) = if is_glb {
            // The `gltf` crate takes the 12-byte header off the declared length unchecked, and
            // says only "could not completely read the object" of a file shorter than it.
            if let Some(declared) = bytes.get(8..12) {
                let declared = u32::from_le_bytes(declared.try_into().expect("4 bytes"));
                if declared < 12 {
                    return Err(err(
                        "container",
                        format!("invalid .glb: declares {declared} bytes, less than its header"),
                    ));
                }
                if declared as usize > bytes.len() {
                    return Err(err(
                        "container",
                        format!(
                            "truncated .glb: its header declares {declared} bytes, the file holds {}",
                            bytes.len()
                        ),
                    ));
                }
            }
            let glb = gltf::Glb::from_slice(bytes)
                .map_err(|e| err("container", format!("invalid or truncated .glb: {e}")))?;
            let bin = glb.bin.map(|b| match b {
                // Where the chunk lies in the file.
                std::borrow::Cow::Borrowed(b) => {
                    let from = b.as_ptr() as usize - bytes.as_ptr() as usize;
                    Buffer {
                        store: Arc::clone(&store),
                        range: from..from + b.len(),
                    }
                }
                std::borrow::Cow::Owned(v) => Buffer::owned(v),
            });
            (glb.json.into_owned(), bin)
        } else {
            (bytes.to_vec(), None)
        };
        let json: serde_json::Value =
            serde_json::from_slice(&json_bytes).map_err(|e| err("JSON", e.to_string()))?;
        // The `gltf` crate's validation indexes the accessors with a primitive's POSITION
        // before checking that index, so that one reference is checked here first.
        let unchecked = gltf::Gltf::from_slice_without_validation(&json_bytes)
            .map_err(|e| err("document", e.to_string()))?
            .document
            .into_json();
        check_position_references(&unchecked).map_err(|(part, message)| err(&part, message))?;
        let document =
            gltf::Document::from_json(unchecked).map_err(|e| err("document", e.to_string()))?;

        // Buffers: the GLB binary chunk, data URIs, or files beside the scene.
        let mut buffers = Vec::new();
        for buffer in document.buffers() {
            let part = format!("buffer {}", buffer.index());
            let data = match buffer.source() {
                gltf::buffer::Source::Bin => blob.clone().ok_or_else(|| {
                    err(
                        &part,
                        "refers to the GLB binary chunk, which is missing".into(),
                    )
                })?,
                gltf::buffer::Source::Uri(uri) => {
                    if let Some(rest) = uri.strip_prefix("data:") {
                        let encoded = rest
                            .split_once(";base64,")
                            .map(|(_, d)| d)
                            .ok_or_else(|| err(&part, "data URI is not base64".into()))?;
                        Buffer::owned(
                            base64::engine::general_purpose::STANDARD
                                .decode(encoded)
                                .map_err(|e| err(&part, format!("bad base64 data: {e}")))?,
                        )
                    } else {
                        let base = base.ok_or_else(|| {
                            err(&part, format!("refers to the file `{uri}`, and no folder was given to read it from"))
                        })?;
                        map_buffer_file(base, uri, buffer.length())
                            .map_err(|message| err(&part, message))?
                    }
                }
            };
            if data.bytes().len() < buffer.length() {
                return Err(err(
                    &part,
                    format!(
                        "declares {} bytes but holds {} (truncated)",
                        buffer.length(),
                        data.bytes().len()
                    ),
                ));
            }
            buffers.push(data);
        }

        let mut scene = GltfScene {
            path: path.to_path_buf(),
            document,
            buffers,
            instances: Vec::new(),
            up,
            bounds: WorldBounds::EMPTY,
            batch_triangles: crate::windows::batch_text(
                limits.buffer_bytes(),
                crate::cache::CacheBatch::TRIANGLE_BYTES + 1,
            ),
            areas_key: limits.areas().key(),
        };
        scene.instances = scene.instances(&json, limits)?;
        scene.bounds = scene.triangle_bounds()?;
        Ok(scene)
    }

    /// The meshes to read: the default scene (or every scene) walked from its roots, every
    /// mesh once when there is no scene, each with its primitives' areas by `limits`' rules.
    /// Refuses a node graph that is not a set of trees, and one whose instances would make too
    /// many triangles (`limits`): counted here, per instance from the accessors' counts,
    /// before any vertex is read.
    fn instances(
        &self,
        json: &serde_json::Value,
        limits: ReadLimits,
    ) -> Result<Vec<Instance>, IngestError> {
        let document = &self.document;
        let err = |part: &str, message: String| self.error(part.to_string(), message);
        let nodes_json = json
            .get("nodes")
            .and_then(|n| n.as_array())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut instances = Vec::new();
        let mut memo = AreaMemo::new(limits.areas());
        let scenes: Vec<gltf::Scene> = match document.default_scene() {
            Some(s) => vec![s],
            None => document.scenes().collect(),
        };
        if scenes.is_empty() {
            // Every mesh once: nothing is copied.
            for mesh in document.meshes() {
                instances.push(Instance {
                    mesh: mesh.index(),
                    matrix: IDENTITY,
                    areas: mesh_areas(&mut memo, json, &mesh, 0),
                });
            }
            return Ok(instances);
        }
        // Each node with its parent's world transform, depth, scene, and the area of its
        // ancestors' names.
        let mut stack: Vec<(gltf::Node, Mat4, usize, usize, u8)> = Vec::new();
        for (s, scene) in scenes.iter().enumerate() {
            for root in scene.nodes() {
                stack.push((root, IDENTITY, 0, s, 0));
            }
        }
        // The triangles of each mesh, once its first instance has checked its accessors.
        let mut mesh_triangles: Vec<Option<u64>> = vec![None; document.meshes().len()];
        // Triangles of every instance, and of the instances after the first of their mesh.
        let (mut triangles, mut copied) = (0u64, 0u64);
        // Each node is reached at most once per scene: the hierarchy is a set of trees (glTF
        // 2.0, 3.5.3). A node with two parents would be read once per path to it, and
        // layers of such nodes multiply the paths (2^30 from 30 nodes). Scenes are walked
        // one after the other (the last first), so one mark per node tells its scene.
        let mut reached_in: Vec<Option<usize>> = vec![None; document.nodes().len()];
        while let Some((node, parent, depth, s, ancestors)) = stack.pop() {
            if depth > 1024 {
                return Err(err(
                    "nodes",
                    "node hierarchy deeper than 1024 (a cycle?)".into(),
                ));
            }
            if reached_in[node.index()].replace(s) == Some(s) {
                return Err(err(
                    &format!("node {}", node.index()),
                    format!(
                        "reached twice in scene {} (a node may have one parent only)",
                        scenes[s].index()
                    ),
                ));
            }
            let local = nodes_json
                .get(node.index())
                .map(local_matrix)
                .unwrap_or(IDENTITY);
            let world = mul(&parent, &local);
            let own = first_rule(&mut memo, json, "nodes", node.index());
            let named = AreaRules::earlier(ancestors, own);
            if let Some(mesh) = node.mesh() {
                // A tree has at most one instance per node, so this loop (not one per
                // triangle) bounds the count's cost by the size of the JSON.
                let made = match mesh_triangles[mesh.index()] {
                    Some(made) => {
                        copied = copied.saturating_add(made);
                        made
                    }
                    None => {
                        let made = self.mesh_triangles(&mesh)?;
                        mesh_triangles[mesh.index()] = Some(made);
                        made
                    }
                };
                triangles = triangles.saturating_add(made);
                instances.push(Instance {
                    mesh: mesh.index(),
                    matrix: world,
                    areas: mesh_areas(&mut memo, json, &mesh, named),
                });
            }
            // Children in reverse so that the stack visits them in file order.
            let children: Vec<_> = node.children().collect();
            for child in children.into_iter().rev() {
                stack.push((child, world, depth + 1, s, named));
            }
        }
        let limit = limits.instanced_triangles();
        if copied > limit {
            return Err(err(
                "nodes",
                format!(
                    "{} mesh instances would make {triangles} triangles, {copied} of them by \
                     instancing a mesh again, more than the {limit} allowed (a mesh's first \
                     instance is not counted)",
                    instances.len()
                ),
            ));
        }
        Ok(instances)
    }

    /// The triangles `mesh` makes once, its primitives' accessors checked first (so the
    /// counts are backed by the file's bytes).
    fn mesh_triangles(&self, mesh: &gltf::Mesh) -> Result<u64, IngestError> {
        let mut made = 0u64;
        for prim in mesh.primitives() {
            if let Some((positions, indices)) = self.checked_accessors(mesh.index(), &prim)? {
                let n = indices.as_ref().unwrap_or(&positions).count();
                made = made.saturating_add(triangles_of(prim.mode(), n));
            }
        }
        Ok(made)
    }

    /// A triangle primitive's positions and indices, checked ([`GltfScene::check_accessor`]);
    /// `None` for a primitive of another mode (points, lines), which is not read.
    fn checked_accessors<'a>(
        &self,
        mesh: usize,
        prim: &gltf::Primitive<'a>,
    ) -> Result<Option<(gltf::Accessor<'a>, Option<gltf::Accessor<'a>>)>, IngestError> {
        if !matches!(
            prim.mode(),
            Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
        ) {
            return Ok(None);
        }
        let Some(positions) = prim.get(&gltf::Semantic::Positions) else {
            return Err(self.error(
                format!("mesh {mesh} primitive {}", prim.index()),
                "has no POSITION attribute".into(),
            ));
        };
        self.check_accessor(&positions, Role::Positions)?;
        let indices = prim.indices();
        if let Some(ind) = &indices {
            self.check_accessor(ind, Role::Indices)?;
        }
        Ok(Some((positions, indices)))
    }

    /// A checked accessor's elements (`check_accessor`) in its buffer.
    fn elements(&self, accessor: &gltf::Accessor) -> Elements<'_> {
        let view = accessor.view().expect("a checked accessor has a view");
        Elements {
            data: self.buffers[view.buffer().index()].bytes(),
            start: view.offset() + accessor.offset(),
            stride: view.stride().unwrap_or(accessor.size()),
            width: accessor.size(),
            count: accessor.count(),
        }
    }

    fn error(&self, part: String, message: String) -> IngestError {
        IngestError::Gltf {
            path: self.path.clone(),
            part,
            message,
        }
    }

    /// Checks that an accessor holds what `role` needs (glTF 2.0, 3.7.2.1: POSITION is VEC3
    /// of floats, indices are unsigned scalars) and that its elements lie inside its buffer
    /// view and buffer: what the `gltf` crate's reader assumes without checking.
    fn check_accessor(&self, accessor: &gltf::Accessor, role: Role) -> Result<(), IngestError> {
        use gltf::accessor::{DataType, Dimensions};
        let part = format!("accessor {}", accessor.index());
        if accessor.sparse().is_some() {
            return Err(self.error(
                part,
                "sparse accessors are not supported for geometry".into(),
            ));
        }
        let (dimensions, data_type) = (accessor.dimensions(), accessor.data_type());
        let fits = match role {
            Role::Positions => dimensions == Dimensions::Vec3 && data_type == DataType::F32,
            Role::Indices => {
                dimensions == Dimensions::Scalar
                    && matches!(data_type, DataType::U8 | DataType::U16 | DataType::U32)
            }
        };
        if !fits {
            return Err(self.error(
                part,
                format!(
                    "{dimensions:?} of {data_type:?} cannot be {}",
                    match role {
                        Role::Positions => "positions (VEC3 of F32)",
                        Role::Indices => "indices (SCALAR of U8, U16 or U32)",
                    }
                ),
            ));
        }
        if accessor.count() == 0 {
            return Err(self.error(part, "holds no element (count 0)".into()));
        }
        let Some(view) = accessor.view() else {
            return Err(self.error(part, "has no buffer view".into()));
        };
        let buffer_len = self.buffers[view.buffer().index()].bytes().len();
        let view_end = view.offset().checked_add(view.length());
        if view_end.is_none_or(|end| end > buffer_len) {
            return Err(self.error(
                part,
                format!(
                    "buffer view {} runs past the end of buffer {}",
                    view.index(),
                    view.buffer().index()
                ),
            ));
        }
        let elem = accessor.size();
        let stride = view.stride().unwrap_or(elem);
        if stride < elem {
            return Err(self.error(
                part,
                format!(
                    "buffer view {} has a stride of {stride} bytes, less than the {elem}-byte element",
                    view.index()
                ),
            ));
        }
        let need = (accessor.count() - 1)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(accessor.offset()))
            .and_then(|v| v.checked_add(elem))
            .unwrap_or(usize::MAX);
        if need > view.length() {
            return Err(self.error(
                part,
                format!(
                    "{} elements need {need} bytes, buffer view {} has {}",
                    accessor.count(),
                    view.index(),
                    view.length()
                ),
            ));
        }
        Ok(())
    }

    /// Every primitive in triangle mode, instance by instance, read ([`Primitive`]), in the
    /// order the scene's triangles are read in.
    fn primitives(
        &self,
        mut each: impl FnMut(&Primitive) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        for inst in &self.instances {
            let mesh = self
                .document
                .meshes()
                .nth(inst.mesh)
                .expect("index from the document");
            for prim in mesh.primitives() {
                if let Some(read) = self.primitive(inst, &prim)? {
                    each(&read)?;
                }
            }
        }
        Ok(())
    }

    /// One primitive of an instance, checked: its accessors (`checked_accessors`), every
    /// position finite and every index in range (on the current rayon pool); `None` for a
    /// primitive in a mode that makes no triangles. Nothing is copied: its triangles are read
    /// from the buffers when asked for ([`Primitive::triangle`]).
    fn primitive<'s>(
        &'s self,
        inst: &'s Instance,
        prim: &gltf::Primitive,
    ) -> Result<Option<Primitive<'s>>, IngestError> {
        let Some((pos_accessor, ind_accessor)) = self.checked_accessors(inst.mesh, prim)? else {
            return Ok(None);
        };
        let read = Primitive {
            area: inst.areas.get(prim.index()).copied().unwrap_or(0),
            mode: prim.mode(),
            positions: self.elements(&pos_accessor),
            indices: ind_accessor.as_ref().map(|a| self.elements(a)),
            matrix: &inst.matrix,
            up: self.up,
        };
        let n = read.positions.count;
        if self.any_in_chunks(n, |k| read.position(k).iter().any(|c| !c.is_finite())) {
            return Err(self.error(
                format!("accessor {}", pos_accessor.index()),
                "position is NaN or infinite".into(),
            ));
        }
        if let Some(indices) = &read.indices {
            let out_of_range = |k: &usize| indices.index(*k) as usize >= n;
            if self.any_in_chunks(indices.count, |k| out_of_range(&k)) {
                let k = (0..indices.count).find(out_of_range).expect("one is");
                let part = ind_accessor
                    .as_ref()
                    .map(|a| format!("accessor {}", a.index()))
                    .unwrap_or_default();
                return Err(self.error(
                    part,
                    format!("index {} out of range ({n} positions)", indices.index(k)),
                ));
            }
        }
        Ok(Some(read))
    }

    /// Whether `test` holds for any of `0..n`, tried on the current rayon pool a chunk of
    /// [`RELEASE_ELEMENTS`] at a time, the buffers' pages given back after each.
    fn any_in_chunks(&self, n: usize, test: impl Fn(usize) -> bool + Sync) -> bool {
        use rayon::prelude::*;
        for from in (0..n).step_by(RELEASE_ELEMENTS) {
            let hit = (from..(from + RELEASE_ELEMENTS).min(n))
                .into_par_iter()
                .with_min_len(PARALLEL_MIN)
                .any(&test);
            self.release();
            if hit {
                return true;
            }
        }
        false
    }

    /// Gives back the mapped pages of every buffer: what a pass touched of the file stays
    /// resident only until the next release, so reading a scene larger than the memory budget
    /// holds a bounded part of it.
    fn release(&self) {
        for b in &self.buffers {
            b.store.release();
        }
    }

    /// [`SceneSource::for_each_cache_batch`]: each primitive's triangles in runs filled on the
    /// current rayon pool, handed on in order a bounded batch of runs at a time.
    fn cache_batches(
        &self,
        origin: [f64; 3],
        emit: &mut dyn FnMut(CacheBatch) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        self.primitives(|prim| {
            let n = prim.triangles();
            let mut released = 0;
            crate::windows::in_order(
                (0..n.div_ceil(RUN)).map(|r| r * RUN..((r + 1) * RUN).min(n)),
                self.batch_triangles,
                |_, run| {
                    let mut batch = CacheBatch::default();
                    for i in run {
                        batch.push(origin, prim.triangle(i), prim.area);
                    }
                    batch
                },
                |_, _, batch| emit(batch),
                |upto| {
                    if upto / RELEASE_ELEMENTS > released {
                        released = upto / RELEASE_ELEMENTS;
                        self.release();
                    }
                },
            )?;
            self.release();
            Ok(())
        })
    }

    /// Every triangle in file order, one at a time.
    fn visit(
        &self,
        emit: &mut dyn FnMut(WorldTriangle) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        self.primitives(|prim| {
            for i in 0..prim.triangles() {
                emit(prim.triangle(i))?;
                if (i + 1).is_multiple_of(RELEASE_ELEMENTS) {
                    self.release();
                }
            }
            self.release();
            Ok(())
        })
    }

    /// The bounds of every triangle's corners: each primitive's triangles in runs on the
    /// current rayon pool, the runs' bounds joined in order.
    fn triangle_bounds(&self) -> Result<WorldBounds, IngestError> {
        use rayon::prelude::*;
        let mut bounds = WorldBounds::EMPTY;
        self.primitives(|prim| {
            let (n, per_release) = (prim.triangles(), RELEASE_ELEMENTS / RUN);
            let runs = n.div_ceil(RUN);
            for first in (0..runs).step_by(per_release) {
                let joined: Vec<WorldBounds> = (first..(first + per_release).min(runs))
                    .into_par_iter()
                    .map(|r| {
                        let mut b = WorldBounds::EMPTY;
                        for i in r * RUN..((r + 1) * RUN).min(n) {
                            for p in prim.triangle(i) {
                                b.grow(p);
                            }
                        }
                        b
                    })
                    .collect();
                self.release();
                for b in &joined {
                    bounds.union(b);
                }
            }
            Ok(())
        })?;
        Ok(bounds)
    }
}

/// Positions or indices below which a primitive is read on the calling thread alone.
const PARALLEL_MIN: usize = 1 << 14;

/// Triangles of a primitive a thread takes at a time (bounds, cache batches).
const RUN: usize = 1 << 14;

/// Elements (positions, indices) or triangles read between two releases of the buffers'
/// pages ([`GltfScene::release`]): a primitive's triangles read anywhere in its positions,
/// which are then mapped in again at most once per this many triangles.
const RELEASE_ELEMENTS: usize = 1 << 21;

/// The elements of an accessor that `check_accessor` let through: element `k` is `width`
/// bytes at `start + k * stride` of `data`, all inside it.
struct Elements<'s> {
    data: &'s [u8],
    start: usize,
    stride: usize,
    width: usize,
    count: usize,
}

impl Elements<'_> {
    /// Element `k`'s bytes.
    #[inline]
    fn at(&self, k: usize) -> &[u8] {
        let from = self.start + k * self.stride;
        &self.data[from..from + self.width]
    }

    /// Element `k` of an index accessor (unsigned 8, 16 or 32 bits).
    #[inline]
    fn index(&self, k: usize) -> u32 {
        match *self.at(k) {
            [a] => u32::from(a),
            [a, b] => u32::from(u16::from_le_bytes([a, b])),
            [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
            _ => unreachable!("indices are 1, 2 or 4 bytes (checked)"),
        }
    }
}

/// A primitive of an instance, checked, read from its buffers when asked: its indices (or
/// `0..n` unindexed) as its mode takes them, each position through the instance's transform.
struct Primitive<'s> {
    /// Its triangles' area.
    area: u8,
    mode: Mode,
    positions: Elements<'s>,
    indices: Option<Elements<'s>>,
    matrix: &'s Mat4,
    up: UpAxis,
}

impl Primitive<'_> {
    /// How many triangles it makes ([`triangles_of`]).
    fn triangles(&self) -> usize {
        let n = self
            .indices
            .as_ref()
            .map_or(self.positions.count, |i| i.count);
        triangles_of(self.mode, n) as usize
    }

    /// Position `k` in the world, Z-up.
    #[inline]
    fn position(&self, k: usize) -> [f64; 3] {
        let e = self.positions.at(k);
        let c = |i: usize| f32::from_le_bytes([e[4 * i], e[4 * i + 1], e[4 * i + 2], e[4 * i + 3]]);
        self.up
            .to_z_up(transform_point(self.matrix, [c(0), c(1), c(2)]))
    }

    /// The position its `k`-th index names.
    #[inline]
    fn corner(&self, k: usize) -> [f64; 3] {
        let i = self.indices.as_ref().map_or(k as u32, |i| i.index(k));
        self.position(i as usize)
    }

    /// Its triangle `i` (strips alternate their winding so that every triangle faces the
    /// same way; fans turn round the first index).
    #[inline]
    fn triangle(&self, i: usize) -> WorldTriangle {
        let v = |k: usize| self.corner(k);
        match self.mode {
            Mode::Triangles => [v(3 * i), v(3 * i + 1), v(3 * i + 2)],
            Mode::TriangleStrip if i.is_multiple_of(2) => [v(i), v(i + 1), v(i + 2)],
            Mode::TriangleStrip => [v(i), v(i + 2), v(i + 1)],
            Mode::TriangleFan => [v(i + 1), v(i + 2), v(0)],
            _ => unreachable!("only triangle modes are read"),
        }
    }
}

/// The buffer file `uri` names, read from the scene's folder `base`: a relative path that
/// stays inside that folder, to a regular file holding at least `declared` bytes, of which
/// `declared` are read. A scene names any path it likes: `/etc/passwd`, `../../secrets` or
/// `/dev/zero` (read until memory runs out) are refused, not read.
fn map_buffer_file(base: &Path, uri: &str, declared: usize) -> Result<Buffer, String> {
    let file = buffer_file(base, uri).ok_or_else(|| {
        format!("refers to `{uri}`: buffer files must be relative paths inside the scene's folder")
    })?;
    let meta =
        std::fs::metadata(&file).map_err(|e| format!("cannot read `{}`: {e}", file.display()))?;
    if !meta.is_file() {
        return Err(format!("`{}` is not a regular file", file.display()));
    }
    if meta.len() < declared as u64 {
        return Err(format!(
            "declares {declared} bytes but `{}` holds {} (truncated)",
            file.display(),
            meta.len()
        ));
    }
    let store = Store::map(&file).map_err(|e| format!("cannot read `{}`: {e}", file.display()))?;
    let declared = declared.min(store.bytes().len());
    Ok(Buffer {
        store: Arc::new(store),
        range: 0..declared,
    })
}

/// The bytes a scene is read from: a file mapped read-only, or bytes in memory (a scene given
/// in memory, a data URI's content).
enum Store {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Store {
    /// The file at `path` mapped (an empty file as no bytes: it cannot be mapped).
    fn map(path: &Path) -> std::io::Result<Store> {
        let file = std::fs::File::open(path)?;
        if file.metadata()?.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "is a folder, not a scene file",
            ));
        }
        Ok(crate::pages::map_file(&file)?.map_or(Store::Owned(Vec::new()), Store::Mapped))
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Store::Mapped(m) => m,
            Store::Owned(v) => v,
        }
    }

    /// Gives back the mapped pages (read again from the file if touched).
    fn release(&self) {
        if let Store::Mapped(m) = self {
            crate::pages::release(m, 0, m.len());
        }
    }
}

/// One buffer of a scene: `range` of a store (a GLB's binary chunk is a part of its file).
#[derive(Clone)]
struct Buffer {
    store: Arc<Store>,
    range: std::ops::Range<usize>,
}

impl Buffer {
    fn owned(bytes: Vec<u8>) -> Buffer {
        let range = 0..bytes.len();
        Buffer {
            store: Arc::new(Store::Owned(bytes)),
            range,
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.store.bytes()[self.range.clone()]
    }
}

/// The file a buffer's `uri` names in the scene's folder `base`, when it is a relative path
/// that stays inside it (no root, no `..`); `None` for any other path, which is never read.
pub(crate) fn buffer_file(base: &Path, uri: &str) -> Option<PathBuf> {
    use std::path::Component;
    let relative = Path::new(uri);
    relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| base.join(relative))
}

/// Runs `f`, turning a panic inside the `gltf` crate (an input its validation lets through)
/// into an error naming the file: a bug in a dependency must not abort the bake.
fn guarded<T>(path: &Path, f: impl FnOnce() -> Result<T, IngestError>) -> Result<T, IngestError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = tessera_geom::panic_message(&*panic).unwrap_or_else(|| "no message".into());
        Err(IngestError::Gltf {
            path: path.to_path_buf(),
            part: "reader".into(),
            message: format!("the glTF reader failed on this input ({what})"),
        })
    })
}

impl SceneSource for GltfScene {
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
        let path = self.path.clone();
        guarded(&path, || self.visit(emit))
    }
    fn for_each_cache_batch(
        &mut self,
        origin: [f64; 3],
        emit: &mut dyn FnMut(CacheBatch) -> Result<(), IngestError>,
    ) -> Result<(), IngestError> {
        let path = self.path.clone();
        guarded(&path, || self.cache_batches(origin, emit))
    }
    fn areas_key(&self) -> Option<u64> {
        Some(self.areas_key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One triangle whose 36 bytes of positions come from the buffer `uri`; `stride` sets the
    /// buffer view's byteStride.
    fn one_triangle(uri: &str, stride: Option<u32>) -> String {
        let stride = stride.map_or(String::new(), |s| format!(r#","byteStride":{s}"#));
        format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"mode":4}}]}}],
"buffers":[{{"byteLength":36,"uri":"{uri}"}}],
"bufferViews":[{{"buffer":0,"byteLength":36{stride}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}}]}}"#
        )
    }

    fn bin() -> Vec<u8> {
        [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect()
    }

    /// Opens `json` written as `scene.gltf` in `dir` and reads its triangles.
    fn read(dir: &Path, json: &str) -> Result<usize, IngestError> {
        read_within(dir, json, ReadLimits::default())
    }

    /// [`read`] within `limits`.
    fn read_within(dir: &Path, json: &str, limits: ReadLimits) -> Result<usize, IngestError> {
        let path = dir.join("scene.gltf");
        std::fs::write(&path, json).unwrap();
        let mut scene = GltfScene::open_with(&path, UpAxis::Z, limits)?;
        let mut n = 0;
        scene.for_each_triangle(&mut |_| {
            n += 1;
            Ok(())
        })?;
        Ok(n)
    }

    /// Asserts that the message `e` says each of `parts`.
    fn assert_says(e: &str, parts: &[&str]) {
        for says in parts {
            assert!(e.contains(says), "{says}: {e}");
        }
    }

    /// `copies` + 1 nodes, children of one root, each instancing mesh 0: a triangle list and a
    /// strip over the same three positions (1 triangle each) and a point list (none). With
    /// `nan_first`, a node listed before them instances mesh 1, one triangle whose positions
    /// are NaN (read first, it fails the read).
    fn instancing(copies: usize, nan_first: bool) -> String {
        let mut children: Vec<String> = (1..=copies + 1).map(|i| i.to_string()).collect();
        let mut nodes = vec![String::new(); copies + 1].join(r#"{"mesh":0},"#);
        if nan_first {
            children.insert(0, (copies + 2).to_string());
            nodes.push_str(r#"{"mesh":0},{"mesh":1}"#);
        } else {
            nodes.push_str(r#"{"mesh":0}"#);
        }
        format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],
"nodes":[{{"children":[{}]}},{nodes}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"mode":4}},{{"attributes":{{"POSITION":0}},"mode":5}},{{"attributes":{{"POSITION":0}},"mode":0}}]}},
{{"primitives":[{{"attributes":{{"POSITION":1}}}}]}}],
"buffers":[{{"byteLength":72,"uri":"instanced.bin"}}],
"bufferViews":[{{"buffer":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":36}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
{{"bufferView":1,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[0,0,0]}}]}}"#,
            children.join(",")
        )
    }

    /// Reads a scene through the default, one-triangle-at-a-time batching of
    /// [`SceneSource::for_each_cache_batch`].
    struct OneByOne<'a>(&'a mut GltfScene);

    impl SceneSource for OneByOne<'_> {
        fn name(&self) -> String {
            self.0.name()
        }
        fn bounds(&self) -> WorldBounds {
            self.0.bounds()
        }
        fn for_each_triangle(
            &mut self,
            emit: &mut dyn FnMut(WorldTriangle) -> Result<(), IngestError>,
        ) -> Result<(), IngestError> {
            self.0.for_each_triangle(emit)
        }
    }

    #[test]
    fn batches_filled_in_parallel_hold_the_triangles_read_one_by_one() {
        // A 160 x 160 grid as a triangle list (more triangles than a run), two nodes with
        // different transforms; a strip and a fan over the same positions; and a zero-area
        // triangle (counted as degenerate either way).
        let n = 160u32;
        let mut bin: Vec<u8> = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                let z = ((x * 7 + y * 3) % 5) as f32 * 0.1;
                for c in [x as f32 * 0.5, y as f32 * 0.5, z] {
                    bin.extend(c.to_le_bytes());
                }
            }
        }
        let positions = (n + 1) * (n + 1);
        let at = |x: u32, y: u32| y * (n + 1) + x;
        let mut list: Vec<u32> = Vec::new();
        for y in 0..n {
            for x in 0..n {
                list.extend([at(x, y), at(x + 1, y), at(x + 1, y + 1)]);
                list.extend([at(x, y), at(x + 1, y + 1), at(x, y + 1)]);
            }
        }
        list.extend([0, 0, 1]);
        let strip: Vec<u32> = (0..400).map(|k| at(k / 2, k % 2)).collect();
        let fan: Vec<u32> = [at(5, 5)]
            .into_iter()
            .chain((0..9).map(|k| at(k, 0)))
            .collect();
        let views_start = bin.len();
        let mut views = Vec::new();
        for ind in [&list, &strip, &fan] {
            let offset = bin.len();
            for i in ind.iter() {
                bin.extend(i.to_le_bytes());
            }
            views.push((offset, ind.len()));
        }
        let json = format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0,1]}}],
"nodes":[{{"mesh":0}},{{"mesh":0,"translation":[100.5,-3.25,2.0],"rotation":[0,0,0.38268343,0.9238795]}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1,"mode":4}},{{"attributes":{{"POSITION":0}},"indices":2,"mode":5}},{{"attributes":{{"POSITION":0}},"indices":3,"mode":6}}]}}],
"buffers":[{{"byteLength":{len},"uri":"grid.bin"}}],
"bufferViews":[{{"buffer":0,"byteLength":{vlen}}},{{"buffer":0,"byteOffset":{o1},"byteLength":{l1}}},{{"buffer":0,"byteOffset":{o2},"byteLength":{l2}}},{{"buffer":0,"byteOffset":{o3},"byteLength":{l3}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":{positions},"type":"VEC3","min":[0,0,0],"max":[80,80,0.4]}},
{{"bufferView":1,"componentType":5125,"count":{c1},"type":"SCALAR"}},{{"bufferView":2,"componentType":5125,"count":{c2},"type":"SCALAR"}},{{"bufferView":3,"componentType":5125,"count":{c3},"type":"SCALAR"}}]}}"#,
            len = bin.len(),
            vlen = views_start,
            o1 = views[0].0,
            l1 = views[0].1 * 4,
            c1 = views[0].1,
            o2 = views[1].0,
            l2 = views[1].1 * 4,
            c2 = views[1].1,
            o3 = views[2].0,
            l3 = views[2].1 * 4,
            c3 = views[2].1,
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("grid.bin"), &bin).unwrap();
        let path = dir.path().join("scene.gltf");
        std::fs::write(&path, json).unwrap();
        let key = crate::cache::SourceKey::of_mesh(&[], &[], UpAxis::Z, &AreaRules::default());
        let read = |source: &mut dyn SceneSource, name: &str| {
            let out = dir.path().join(name);
            let (stats, _) = crate::cache::build_cache(source, key, &out).unwrap();
            (
                std::fs::read(&out).unwrap(),
                stats.triangles,
                stats.degenerate,
            )
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        // A small buffer bound: a batch is a run or less, so many batches.
        let mut scene = GltfScene::open_with(&path, UpAxis::Z, ReadLimits::new(1 << 20)).unwrap();
        assert!(scene.batch_triangles < RUN);
        let want = read(&mut OneByOne(&mut scene), "one-by-one.cache");
        let got = pool.install(|| read(&mut scene, "parallel.cache"));
        assert_eq!(2 * (2 * n * n + 1 + 398 + 8) as u64, got.1 + got.2);
        assert_eq!(got.2, 2, "the two zero-area triangles");
        assert!(got == want, "the same cache");
        // And the bounds: those of every triangle read one by one.
        let mut bounds = WorldBounds::EMPTY;
        scene
            .for_each_triangle(&mut |t| {
                t.iter().for_each(|&p| bounds.grow(p));
                Ok(())
            })
            .unwrap();
        assert_eq!(bounds, scene.bounds());
    }

    /// The areas of the cache of the glTF `json` (in memory) read with `rules`.
    fn areas_of(json: &str, rules: &AreaRules) -> Vec<u8> {
        let limits = ReadLimits::default().with_areas(rules.clone());
        let mut scene = GltfScene::from_bytes_with(
            Path::new("named.gltf"),
            json.as_bytes().to_vec(),
            UpAxis::Y,
            None,
            limits,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("scene.cache");
        let key = crate::cache::SourceKey::of_mesh(&[], &[], UpAxis::Y, rules);
        crate::cache::build_cache(&mut scene, key, &at).unwrap();
        crate::cache::SceneCache::open(&at)
            .unwrap()
            .areas()
            .to_vec()
    }

    #[test]
    fn material_mesh_node_and_ancestor_names_give_areas() {
        let data = base64::engine::general_purpose::STANDARD.encode(bin());
        // Level > [Bridge_1 (deck: a Road primitive, one without material), props (rock:
        // Water_mat), Other (plain), Bridge_1's child Sub (rock again)]; a triangle per
        // primitive.
        let json = format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],
"nodes":[{{"name":"Level","children":[1,2,3]}},{{"name":"Bridge_1","mesh":0,"children":[4]}},
{{"name":"props","mesh":1}},{{"name":"Other","mesh":2}},{{"name":"Sub","mesh":1}}],
"materials":[{{"name":"Road"}},{{"name":"Water_mat"}},{{}}],
"meshes":[{{"name":"deck","primitives":[{{"attributes":{{"POSITION":0}},"material":0}},{{"attributes":{{"POSITION":0}}}}]}},
{{"name":"rock","primitives":[{{"attributes":{{"POSITION":0}},"material":1}}]}},
{{"name":"plain","primitives":[{{"attributes":{{"POSITION":0}},"material":2}}]}}],
"buffers":[{{"byteLength":36,"uri":"data:application/octet-stream;base64,{data}"}}],
"bufferViews":[{{"buffer":0,"byteLength":36}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}}]}}"#
        );
        let rule = |p: &[&str]| p.iter().map(|s| s.to_string()).collect();
        let rules = AreaRules::new(vec![
            rule(&["Water*"]),
            rule(&["Road"]),
            rule(&["Bridge*"]),
            rule(&["Lev?l"]),
            rule(&["rock", "deck"]),
        ]);
        // In reading order: Bridge_1's two primitives (Road; deck under Bridge_1), Sub's
        // (Water_mat), props' (Water_mat), Other's (an ancestor: Level).
        assert_eq!(areas_of(&json, &rules), [2, 3, 1, 1, 4]);
        // Names only the mesh matches: rock and deck.
        let meshes = AreaRules::new(vec![rule(&["nothing"]), rule(&["rock", "deck"])]);
        assert_eq!(areas_of(&json, &meshes), [2, 2, 2, 2, 0]);
        assert_eq!(areas_of(&json, &AreaRules::default()), [0; 5]);
        // Without a scene, every mesh once, named by its mesh and material alone.
        let no_scene = json.replace(r#""scene":0,"scenes":[{"nodes":[0]}],"#, "");
        assert_eq!(areas_of(&no_scene, &rules), [2, 5, 1, 0]);
    }

    #[test]
    fn instancing_past_the_limit_is_refused_before_any_vertex_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut buffer = bin();
        buffer.extend(std::iter::repeat_n(f32::NAN.to_le_bytes(), 9).flatten());
        std::fs::write(dir.path().join("instanced.bin"), buffer).unwrap();
        // 2 triangles per instance of mesh 0; its first instance is not counted.
        let limits = ReadLimits::default().with_instanced_triangles(98);
        let limited = |json: &str| read_within(dir.path(), json, limits.clone());
        // 50 instances: 49 copies of 2 triangles, at the limit.
        assert_eq!(limited(&instancing(49, false)).unwrap(), 100);
        // One more copy is refused, counted before any position is read: the NaN positions
        // of the mesh read first are never seen.
        let e = limited(&instancing(50, true)).unwrap_err().to_string();
        assert_says(
            &e,
            &[
                "scene.gltf",
                "52 mesh instances would make 103 triangles",
                "100 of them by instancing",
                "the 98 allowed",
            ],
        );
        // Under the limit, the NaN positions are read and refused.
        let e = limited(&instancing(49, true)).unwrap_err().to_string();
        assert!(e.contains("NaN"), "{e}");
        // The default limit takes any of these.
        assert_eq!(read(dir.path(), &instancing(50, false)).unwrap(), 102);
    }

    #[test]
    fn ten_billion_instanced_triangles_from_a_small_file_are_refused_by_default() {
        // 100 000 nodes instancing a strip of 100 000 triangles (u8 indices over 3 positions):
        // 10^10 triangles, 360 GB of scene cache, from a file of under 3 MB.
        let (nodes, strip) = (100_000, 100_002);
        let mut buffer = bin();
        buffer.extend((0..strip).map(|i| (i % 3) as u8));
        let json = format!(
            r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],
"nodes":[{{"children":[{}]}}{}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1,"mode":5}}]}}],
"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}],
"bufferViews":[{{"buffer":0,"byteLength":36}},{{"buffer":0,"byteOffset":36,"byteLength":{strip}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}},
{{"bufferView":1,"componentType":5121,"count":{strip},"type":"SCALAR"}}]}}"#,
            (1..=nodes)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(","),
            r#",{"mesh":0}"#.repeat(nodes),
            buffer.len(),
            base64::engine::general_purpose::STANDARD.encode(&buffer),
        );
        assert!(json.len() < 3 << 20, "{} bytes", json.len());
        let started = std::time::Instant::now();
        let e = GltfScene::from_bytes(Path::new("city.gltf"), json.into_bytes(), UpAxis::Y, None)
            .err()
            .expect("refused")
            .to_string();
        assert_says(
            &e,
            &[
                "city.gltf",
                "100000 mesh instances would make 10000000000 triangles",
                "9999900000 of them by instancing",
                "the 4294967296 allowed",
            ],
        );
        // Counted per instance, not per triangle: refused as fast as the JSON is parsed.
        eprintln!("refused in {:?}", started.elapsed());
    }

    #[test]
    fn buffer_files_stay_inside_the_scene_folder_and_are_regular_files() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("scene");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("tri.bin"), bin()).unwrap();
        std::fs::write(root.path().join("outside.bin"), bin()).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero.bin")).unwrap();
        assert_eq!(read(&dir, &one_triangle("tri.bin", None)).unwrap(), 1);
        for (uri, says) in [
            ("/etc/passwd", "relative paths inside"),
            ("../outside.bin", "relative paths inside"),
            ("zero.bin", "not a regular file"),
            ("missing.bin", "cannot read"),
        ] {
            let e = read(&dir, &one_triangle(uri, None))
                .unwrap_err()
                .to_string();
            assert!(e.contains("scene.gltf") && e.contains(says), "{uri}: {e}");
        }
        // A file shorter than the buffer it backs.
        std::fs::write(dir.join("short.bin"), &bin()[..20]).unwrap();
        let e = read(&dir, &one_triangle("short.bin", None)).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }

    #[test]
    fn a_glb_that_is_not_one_or_is_cut_short_says_so() {
        let open = |name: &str, bytes: Vec<u8>| {
            GltfScene::from_bytes(Path::new(name), bytes, UpAxis::Y, None)
                .err()
                .expect("refused")
                .to_string()
        };
        // Another magic: not parsed as JSON ("expected value at line 1 column 1").
        let e = open("level.glb", b"glTX\x02\0\0\0\x40\0\0\0garbage".to_vec());
        assert!(e.contains("level.glb") && e.contains("not a .glb"), "{e}");
        assert!(!e.contains("line 1 column 1"), "{e}");
        // A header declaring 1000 bytes over a file of 100.
        let mut cut = b"glTF\x02\0\0\0".to_vec();
        cut.extend_from_slice(&1000u32.to_le_bytes());
        cut.resize(100, 0);
        let e = open("level.glb", cut);
        assert!(
            e.contains("truncated .glb") && e.contains("1000") && e.contains("100"),
            "{e}"
        );
    }

    #[test]
    fn float_indices_are_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tri.bin"), bin()).unwrap();
        // The positions read again as three float "indices".
        let json = one_triangle("tri.bin", None)
            .replace(r#""mode":4"#, r#""indices":1,"mode":4"#)
            .replace(
                r#""accessors":["#,
                r#""accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"SCALAR"},"#,
            )
            .replace(r#""POSITION":0"#, r#""POSITION":1"#);
        let e = read(dir.path(), &json).unwrap_err();
        assert!(matches!(e, IngestError::Gltf { .. }), "{e}");
    }

    #[test]
    fn a_panic_in_the_reader_is_an_error_naming_the_file() {
        let e = guarded::<()>(Path::new("level.glb"), || panic!("index out of bounds"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("level.glb") && e.contains("index out of bounds"),
            "{e}"
        );
    }

    #[test]
    fn a_stride_shorter_than_the_element_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tri.bin"), bin()).unwrap();
        let e = read(dir.path(), &one_triangle("tri.bin", Some(4))).unwrap_err();
        assert!(
            matches!(e, IngestError::Gltf { .. }) && e.to_string().contains("scene.gltf"),
            "{e}"
        );
    }
}
