//! glTF 2.0 export.
//!
//! Layout of the scene: a root node `navmesh` whose translation is the frame's origin (Y-up,
//! f64 in the JSON) with two children: `polygons` (one triangle primitive: `POSITION`,
//! `COLOR_0` from the region palette, `u32` indices) and `portals and links` (up to two
//! `LINES` primitives, coloured by their materials). Positions are f32 relative to the origin
//! in glTF's Y-up convention: internal `(x, y, z)` (Z up) is written `(x, z, -y)`. The root
//! node's `extras` record the source's up axis, the origin and the bake's cell size and agent.
//!
//! One binary buffer holds every array, each in its own buffer view: in a `.glb` it is the
//! BIN chunk, in a `.gltf` a base64 `data:` URI.

use base64::Engine;
use serde_json::{json, Value};
use tessera_geom::UpAxis;
use tessera_navmesh::ArchivedNavMesh;

use crate::{
    region_colour, ExportCounts, ExportOptions, Lines, Surface, LINK_COLOUR, PORTAL_COLOUR,
};

const FLOAT: u32 = 5126;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const MODE_LINES: u32 = 1;
const MODE_TRIANGLES: u32 = 4;

/// An internal (Z-up) point in glTF's Y-up axes. A signed permutation: exact in f32.
fn y_up(p: [f32; 3]) -> [f32; 3] {
    [p[0], p[2], -p[1]]
}

/// The binary buffer and the JSON's views and accessors over it.
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    /// Appends a view of `bytes` (4-byte aligned) and returns its index.
    fn view(&mut self, bytes: &[u8], target: u32) -> usize {
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        self.views.push(json!({
            "buffer": 0,
            "byteOffset": self.bin.len(),
            "byteLength": bytes.len(),
            "target": target,
        }));
        self.bin.extend_from_slice(bytes);
        self.views.len() - 1
    }

    /// An accessor over `VEC3` floats, with the bounds glTF requires for positions.
    fn vec3(&mut self, points: &[[f32; 3]], bounds: bool) -> usize {
        let bytes: Vec<u8> = points
            .iter()
            .flatten()
            .flat_map(|c| c.to_le_bytes())
            .collect();
        let view = self.view(&bytes, ARRAY_BUFFER);
        let mut a = json!({
            "bufferView": view,
            "componentType": FLOAT,
            "count": points.len(),
            "type": "VEC3",
        });
        if bounds {
            let mut min = [f32::INFINITY; 3];
            let mut max = [f32::NEG_INFINITY; 3];
            for p in points {
                for k in 0..3 {
                    min[k] = min[k].min(p[k]);
                    max[k] = max[k].max(p[k]);
                }
            }
            a["min"] = json!(min);
            a["max"] = json!(max);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn indices(&mut self, idx: &[u32]) -> usize {
        let bytes: Vec<u8> = idx.iter().flat_map(|i| i.to_le_bytes()).collect();
        let view = self.view(&bytes, ELEMENT_ARRAY_BUFFER);
        self.accessors.push(json!({
            "bufferView": view,
            "componentType": UNSIGNED_INT,
            "count": idx.len(),
            "type": "SCALAR",
        }));
        self.accessors.len() - 1
    }
}

fn colour_f32(c: crate::Rgb) -> [f32; 3] {
    c.0.map(|v| v as f32 / 255.0)
}

/// The glTF JSON document and its binary buffer.
fn document(mesh: &ArchivedNavMesh, options: ExportOptions) -> (Value, Vec<u8>, ExportCounts) {
    let frame = mesh.frame.native();
    let surface = Surface::of(mesh, options);
    let lines = Lines::of(mesh);
    let mut b = Builder {
        bin: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
    };
    let material = |name: &str, colour: [f32; 3]| {
        json!({
            "name": name,
            "doubleSided": true,
            "pbrMetallicRoughness": {
                "baseColorFactor": [colour[0], colour[1], colour[2], 1.0],
                "metallicFactor": 0.0,
                "roughnessFactor": 1.0,
            },
        })
    };
    let mut materials = vec![material("walkable", [1.0, 1.0, 1.0])];

    let mut meshes = Vec::new();
    let mut children = Vec::new();
    let mut nodes = vec![Value::Null];
    if !surface.tris.is_empty() {
        let positions: Vec<[f32; 3]> = surface
            .verts
            .iter()
            .map(|&(v, _)| y_up(mesh.detail_corner(v)))
            .collect();
        let colours: Vec<[f32; 3]> = surface
            .verts
            .iter()
            .map(|&(_, r)| colour_f32(region_colour(r)))
            .collect();
        let idx: Vec<u32> = surface.tris.iter().flatten().copied().collect();
        let (pos, col, ind) = (
            b.vec3(&positions, true),
            b.vec3(&colours, false),
            b.indices(&idx),
        );
        meshes.push(json!({
            "name": "polygons",
            "primitives": [{
                "attributes": {"POSITION": pos, "COLOR_0": col},
                "indices": ind,
                "material": 0,
                "mode": MODE_TRIANGLES,
            }],
        }));
        nodes.push(json!({"name": "polygons", "mesh": meshes.len() - 1}));
        children.push(nodes.len() - 1);
    }
    let mut line_prims = Vec::new();
    for (segments, name, colour) in [
        (&lines.portals, "portals", PORTAL_COLOUR),
        (&lines.links, "links", LINK_COLOUR),
    ] {
        if segments.is_empty() {
            continue;
        }
        materials.push(material(name, colour_f32(colour)));
        let material = materials.len() - 1;
        let points: Vec<[f32; 3]> = segments.iter().flatten().map(|&p| y_up(p)).collect();
        let pos = b.vec3(&points, true);
        line_prims.push(json!({
            "attributes": {"POSITION": pos},
            "material": material,
            "mode": MODE_LINES,
        }));
    }
    if !line_prims.is_empty() {
        meshes.push(json!({"name": "portals and links", "primitives": line_prims}));
        nodes.push(json!({"name": "portals and links", "mesh": meshes.len() - 1}));
        children.push(nodes.len() - 1);
    }
    let origin = UpAxis::Y.from_z_up(frame.origin);
    let mut root = json!({
        "name": "navmesh",
        "translation": origin,
        "extras": {
            "tessera": {
                "source_up": frame.up_axis().to_string(),
                "origin_z_up": frame.origin,
                "cell_size": frame.cell_size,
                "cell_height": frame.cell_height,
                "agent": {
                    "height": frame.agent_height,
                    "radius": frame.agent_radius,
                    "climb": frame.agent_climb,
                },
                "polygons": mesh.polys.len(),
                "regions": mesh.stats.regions.to_native(),
                "detail": options.detail,
            },
        },
    });
    if !children.is_empty() {
        root["children"] = json!(children);
    }
    nodes[0] = root;

    let mut doc = json!({
        "asset": {
            "version": "2.0",
            "generator": concat!("tessera-export ", env!("CARGO_PKG_VERSION")),
        },
        "scene": 0,
        "scenes": [{"name": "navmesh", "nodes": [0]}],
        "nodes": nodes,
        "materials": materials,
    });
    if !meshes.is_empty() {
        b.bin.resize(b.bin.len().next_multiple_of(4), 0);
        doc["meshes"] = json!(meshes);
        doc["accessors"] = json!(b.accessors);
        doc["bufferViews"] = json!(b.views);
        doc["buffers"] = json!([{"byteLength": b.bin.len()}]);
    }
    let counts = ExportCounts {
        polygons: mesh.polys.len(),
        triangles: surface.tris.len(),
        vertices: surface.verts.len(),
        portals: lines.portals.len(),
        links: lines.links.len(),
    };
    (doc, b.bin, counts)
}

/// The mesh as a binary glTF (`.glb`): a 12-byte header, the JSON chunk (space-padded) and
/// the BIN chunk (zero-padded).
/// `None` when the file would pass the format's 4 GiB limit.
pub fn to_glb(mesh: &ArchivedNavMesh, options: ExportOptions) -> Option<(Vec<u8>, ExportCounts)> {
    let (doc, bin, counts) = document(mesh, options);
    let json = serde_json::to_vec(&doc).expect("a JSON value serializes");
    let bin_chunk = if bin.is_empty() { 0 } else { 8 + bin.len() };
    if 12 + 8 + json.len().next_multiple_of(4) + bin_chunk > u32::MAX as usize {
        return None;
    }
    let out = glb(&json, &bin);
    Some((out, counts))
}

/// A GLB container around `json` and `bin` (no BIN chunk when `bin` is empty), by the gltf
/// crate's writer: JSON padded with spaces, BIN with zeros, each chunk 4-byte aligned. The
/// caller checks the 4 GiB limit.
pub fn glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let container = gltf::Glb {
        header: gltf::binary::Header {
            magic: *b"glTF",
            version: 2,
            length: 0, // computed by the writer
        },
        json: json.into(),
        bin: (!bin.is_empty()).then(|| bin.into()),
    };
    container.to_vec().expect("writing to a vector cannot fail")
}

/// The mesh as a `.gltf` JSON document with its buffer embedded as a base64 data URI.
pub fn to_gltf(mesh: &ArchivedNavMesh, options: ExportOptions) -> (String, ExportCounts) {
    let (mut doc, bin, counts) = document(mesh, options);
    if !bin.is_empty() {
        let data = base64::engine::general_purpose::STANDARD.encode(&bin);
        doc["buffers"][0]["uri"] = json!(format!("data:application/octet-stream;base64,{data}"));
    }
    let text = serde_json::to_string_pretty(&doc).expect("a JSON value serializes");
    (text, counts)
}
