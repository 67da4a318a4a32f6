#!/usr/bin/env python3
"""Writes the hand-made seed inputs of the `obj` and `gltf` fuzz targets into corpus/.

Run from anywhere: `python3 fuzz/make_seeds.py`. Deterministic; rerunning rewrites the same
files. The navmesh seeds are written by crates/navmesh/tests/fuzz_regressions.rs (see
README.md), since only Rust can encode a navmesh.
"""

import base64
import json
import pathlib
import struct

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent


def write(target, name, data):
    path = FUZZ / "corpus" / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)


# ---- OBJ -----------------------------------------------------------------------------------

def nav_test_cut(vertex_limit):
    """The first `vertex_limit` vertices of Recast's nav_test.obj and every face that uses only
    them (normals and texture coordinates kept, so every index form of the file stays)."""
    out = []
    seen = 0
    for line in (ROOT / "tests/data/recast/nav_test.obj").read_text().splitlines():
        if line.startswith("v "):
            if seen < vertex_limit:
                out.append(line)
            seen += 1
        elif line.startswith("f "):
            indices = [int(tok.split("/")[0]) for tok in line.split()[1:]]
            if all(0 < i <= vertex_limit for i in indices):
                out.append(line)
        elif line.startswith(("vn ", "vt ")) and len(out) < 40:
            out.append(line)
        elif not line.startswith(("vn ", "vt ")):
            out.append(line)
    return "\n".join(out) + "\n"


def obj_seeds():
    write("obj", "nav_test_cut.obj", nav_test_cut(96))
    quad = "v 0 0 0\nv 1 0 0 1.0\nv 1 1 0 0.5 0.5 0.5\nv 0 1 0\nvt 0 0\nvn 0 0 1\n"
    write("obj", "index_forms.obj", quad + "f 1 2 3\nf 1/1 2/1 3/1\nf 1//1 3//1 4//1\n"
          "f 1/1/1 2/1/1 3/1/1 4/1/1\nf -4 -3 -2 -1\n")
    write("obj", "statements_crlf_continuations.obj",
          "# comment\r\nmtllib a.mtl\r\no thing\r\ng group\r\ns 1\r\nusemtl m\r\n"
          "v 0 0 0\r\nv 1 0 0 # trailing comment\r\nv 1 1 \\\r\n 0\r\nv 0 1 0\r\n"
          "l 1 2\r\np 1\r\nvp 0.1\r\nf 1 2 \\\r\n3 4\r\n")
    write("obj", "relative_after_more_vertices.obj",
          "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 5 5 5\nf -4 -3 -2\n")
    write("obj", "hexagon_fan.obj",
          "v 2 0 0\nv 1 1.7 0\nv -1 1.7 0\nv -2 0 0\nv -1 -1.7 0\nv 1 -1.7 0\n"
          "f 1 2 3 4 5 6\n")
    write("obj", "far_coordinates.obj",
          "v 512345.678 5712345.678 312.5\nv 512345.688 5712345.678 312.5\n"
          "v 512345.678 5712345.688 312.51\nv -1e300 0 0\nf 1 2 3\n")
    write("obj", "exponents_and_signs.obj",
          "v +1.5e2 -0.0 .5\nv 1E-3 2. -7\nv 0x1 3 4\nf 1 2 3\n")
    write("obj", "degenerate_faces.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 1 1 1\n")
    write("obj", "empty.obj", "")
    write("obj", "index_zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n")
    write("obj", "index_out_of_range.obj", "v 0 0 0\nv 1 0 0\nf 1 2 3\n")
    write("obj", "not_finite.obj", "v 0 0 0\nv 1 NaN 0\nv inf 0 0\n")
    write("obj", "short_vertex_and_face.obj", "v 0 0\nf 1 2\n")
    write("obj", "bad_utf8.obj", b"v 0 0 \xff\xfe\nf 1 \xc3 2\n")
    write("obj", "unterminated_continuation.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 \\")


# ---- glTF ----------------------------------------------------------------------------------

def f32s(points):
    return b"".join(struct.pack("<3f", *p) for p in points)


def pad4(b, fill=b"\0"):
    while len(b) % 4:
        b += fill
    return b


class Builder:
    """Buffer views and accessors over one binary buffer."""

    def __init__(self):
        self.bin = b""
        self.views = []
        self.accessors = []

    def view(self, data, target=None):
        self.bin = pad4(self.bin)
        v = {"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)}
        if target:
            v["target"] = target
        self.views.append(v)
        self.bin += data
        return len(self.views) - 1

    def positions(self, points):
        view = self.view(f32s(points), 34962)
        lo = [min(p[k] for p in points) for k in range(3)]
        hi = [max(p[k] for p in points) for k in range(3)]
        self.accessors.append({"bufferView": view, "componentType": 5126,
                               "count": len(points), "type": "VEC3", "min": lo, "max": hi})
        return len(self.accessors) - 1

    def indices(self, values, component):
        fmt = {5121: "B", 5123: "H", 5125: "I"}[component]
        view = self.view(struct.pack("<%d%s" % (len(values), fmt), *values), 34963)
        self.accessors.append({"bufferView": view, "componentType": component,
                               "count": len(values), "type": "SCALAR"})
        return len(self.accessors) - 1

    def document(self, meshes, nodes, scenes, scene=0, uri=None):
        buffer = {"byteLength": len(self.bin)}
        if uri is not None:
            buffer["uri"] = uri
        doc = {"asset": {"version": "2.0"}, "buffers": [buffer], "bufferViews": self.views,
               "accessors": self.accessors, "meshes": meshes, "nodes": nodes,
               "scenes": scenes}
        if scene is not None:
            doc["scene"] = scene
        return doc


def glb(doc, blob):
    js = pad4(json.dumps(doc, separators=(",", ":")).encode(), b" ")
    blob = pad4(blob)
    total = 12 + 8 + len(js) + 8 + len(blob)
    return (b"glTF" + struct.pack("<II", 2, total) + struct.pack("<I", len(js)) + b"JSON" + js
            + struct.pack("<I", len(blob)) + b"BIN\0" + blob)


def data_uri(blob):
    return "data:application/octet-stream;base64," + base64.b64encode(blob).decode()


SQUARE = [(0, 0, 0), (1, 0, 0), (1, 0, -1), (0, 0, -1)]
STRIP = [(2, 0.5, 0), (3, 0.5, 0), (2, 0.5, -1), (3, 0.5, -1), (2, 0.5, -2)]
FAN = [(5, 0.25, 0), (6, 0.25, 0), (6, 0.25, -1), (5, 0.25, -1.5)]


def three_modes():
    """A list (u16 indices), a strip (no indices) and a fan (u32 indices) in one mesh, under a
    node hierarchy that uses a matrix, translation, rotation and scale."""
    b = Builder()
    list_pos = b.positions(SQUARE)
    list_idx = b.indices([0, 1, 2, 0, 2, 3], 5123)
    strip_pos = b.positions(STRIP)
    fan_pos = b.positions(FAN)
    fan_idx = b.indices([0, 1, 2, 3], 5125)
    meshes = [{"primitives": [
        {"attributes": {"POSITION": list_pos}, "indices": list_idx, "mode": 4},
        {"attributes": {"POSITION": strip_pos}, "mode": 5},
        {"attributes": {"POSITION": fan_pos}, "indices": fan_idx, "mode": 6},
    ]}]
    nodes = [
        {"children": [1, 2], "translation": [500000.25, 0, -4000000.5]},
        {"mesh": 0, "rotation": [0, 0.7071068, 0, 0.7071068], "scale": [2, 1, 2]},
        {"mesh": 0, "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 10, 0, 0, 1]},
    ]
    return b, meshes, nodes


def gltf_seeds():
    b, meshes, nodes = three_modes()
    doc = b.document(meshes, nodes, [{"nodes": [0]}])
    write("gltf", "three_modes.glb", glb(doc, b.bin))
    doc = b.document(meshes, nodes, [{"nodes": [0]}], uri=data_uri(b.bin))
    write("gltf", "three_modes_data_uri.gltf", json.dumps(doc, indent=1))

    # One triangle with u8 indices, no default scene and two scenes sharing the node.
    b = Builder()
    pos = b.positions([(0, 0, 0), (1, 0, 0), (0, 0, 1)])
    idx = b.indices([0, 1, 2], 5121)
    meshes = [{"primitives": [{"attributes": {"POSITION": pos}, "indices": idx}]}]
    doc = b.document(meshes, [{"mesh": 0}], [{"nodes": [0]}, {"nodes": [0]}], scene=None)
    write("gltf", "u8_indices_two_scenes.glb", glb(doc, b.bin))

    # Meshes but no scene at all: every mesh read once, untransformed.
    doc = b.document(meshes, [], [], scene=None)
    del doc["scenes"], doc["nodes"]
    doc["buffers"][0]["uri"] = data_uri(b.bin)
    write("gltf", "no_scene.gltf", json.dumps(doc))

    # Points and lines are skipped; a strided view.
    b = Builder()
    interleaved = b"".join(struct.pack("<3f", *p) + b"\xaa" * 4 for p in SQUARE)
    view = b.view(interleaved, 34962)
    b.views[view]["byteStride"] = 16
    b.accessors.append({"bufferView": view, "componentType": 5126, "count": 4, "type": "VEC3",
                        "min": [0, 0, -1], "max": [1, 0, 0]})
    meshes = [{"primitives": [{"attributes": {"POSITION": 0}, "mode": 0},
                              {"attributes": {"POSITION": 0}, "mode": 1},
                              {"attributes": {"POSITION": 0}, "mode": 6}]}]
    doc = b.document(meshes, [{"mesh": 0}], [{"nodes": [0]}])
    write("gltf", "strided_points_lines_fan.glb", glb(doc, b.bin))

    # Refused: an index out of range, an accessor past its view, a missing BIN chunk, a
    # sparse accessor, an external buffer file, a truncated container, not JSON.
    b = Builder()
    pos = b.positions(SQUARE)
    idx = b.indices([0, 1, 9], 5123)
    meshes = [{"primitives": [{"attributes": {"POSITION": pos}, "indices": idx}]}]
    doc = b.document(meshes, [{"mesh": 0}], [{"nodes": [0]}])
    write("gltf", "index_out_of_range.glb", glb(doc, b.bin))
    doc["accessors"][0]["count"] = 400
    write("gltf", "accessor_past_view.glb", glb(doc, b.bin))
    doc["accessors"][0]["count"] = 4
    js = pad4(json.dumps(doc).encode(), b" ")
    write("gltf", "missing_bin_chunk.glb",
          b"glTF" + struct.pack("<II", 2, 20 + len(js)) + struct.pack("<I", len(js)) + b"JSON"
          + js)
    sparse = json.loads(json.dumps(doc))
    sparse["accessors"][0]["sparse"] = {
        "count": 1, "indices": {"bufferView": 1, "componentType": 5123},
        "values": {"bufferView": 0}}
    write("gltf", "sparse_positions.glb", glb(sparse, b.bin))
    # Refused too: node layers that share children (2^k paths from k nodes), float indices,
    # an empty accessor, a stride shorter than the element.
    doc = b.document(meshes, [{"children": [1, 1]}, {"children": [2, 2]}, {"mesh": 0}],
                     [{"nodes": [0]}])
    doc["accessors"][1]["count"] = 3
    write("gltf", "shared_children.glb", glb(doc, b.bin))
    floats = json.loads(json.dumps(doc))
    floats["nodes"] = [{"mesh": 0}]
    floats["accessors"][1]["componentType"] = 5126
    write("gltf", "float_indices.glb", glb(floats, b.bin))
    empty = json.loads(json.dumps(floats))
    empty["accessors"][1]["componentType"] = 5123
    empty["accessors"][1]["count"] = 0
    write("gltf", "empty_indices.glb", glb(empty, b.bin))
    short = json.loads(json.dumps(empty))
    short["accessors"][1]["count"] = 3
    short["bufferViews"][0]["byteStride"] = 4
    write("gltf", "short_stride.glb", glb(short, b.bin))

    doc = b.document(meshes, [{"mesh": 0}], [{"nodes": [0]}], uri="scene.bin")
    write("gltf", "external_buffer.gltf", json.dumps(doc))
    write("gltf", "truncated.glb", glb(doc, b.bin)[:40])
    write("gltf", "not_json.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [")


if __name__ == "__main__":
    obj_seeds()
    gltf_seeds()
