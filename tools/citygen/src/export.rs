//! Writers: Wavefront OBJ (Z-up, as generated) and binary glTF 2.0 (Y-up, as the glTF
//! specification requires, with large offsets kept in an f64 node translation).
//!
//! Both are streamed through a 1 MiB staging buffer and hand-format numbers (fixed point for
//! OBJ, shortest round-trip decimals for the glTF JSON), so equal meshes give identical bytes.

use crate::Mesh;
use std::io::{self, Write};

const FLUSH_AT: usize = 1 << 20;

fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// `x` rounded to four decimals (0.1 mm), e.g. `-12.3400`.
fn push_fixed4(buf: &mut Vec<u8>, x: f64) {
    let scaled = (x * 10_000.0).round();
    let n = scaled.abs() as u64;
    if scaled < 0.0 && n != 0 {
        buf.push(b'-');
    }
    push_u64(buf, n / 10_000);
    buf.push(b'.');
    let frac = n % 10_000;
    for div in [1000, 100, 10, 1] {
        buf.push(b'0' + (frac / div % 10) as u8);
    }
}

/// Writes `mesh` as Wavefront OBJ: a comment line, `v x y z` lines (Z-up, metres, four
/// decimals, which keeps 0.1 mm at UTM-sized coordinates), then `f a b c` lines (1-based).
pub fn write_obj(mesh: &Mesh, w: &mut impl Write) -> io::Result<()> {
    let mut buf = Vec::with_capacity(FLUSH_AT + 256);
    buf.extend_from_slice(
        format!(
            "# citygen: {} vertices, {} triangles, Z-up, metres\n",
            mesh.positions.len(),
            mesh.triangles.len()
        )
        .as_bytes(),
    );
    for p in &mesh.positions {
        buf.extend_from_slice(b"v ");
        push_fixed4(&mut buf, p[0]);
        buf.push(b' ');
        push_fixed4(&mut buf, p[1]);
        buf.push(b' ');
        push_fixed4(&mut buf, p[2]);
        buf.push(b'\n');
        if buf.len() >= FLUSH_AT {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    for t in &mesh.triangles {
        buf.push(b'f');
        for &i in t {
            buf.push(b' ');
            push_u64(&mut buf, u64::from(i) + 1);
        }
        buf.push(b'\n');
        if buf.len() >= FLUSH_AT {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)
}

/// Z-up `(x, y, z)` to glTF's Y-up `(x, z, -y)`.
fn y_up(p: [f64; 3]) -> [f64; 3] {
    [p[0], p[2], -p[1]]
}

/// A Z-up position relative to the Z-up point `t`, as Y-up f32.
fn relative(p: [f64; 3], t: [f64; 3]) -> [f32; 3] {
    y_up([p[0] - t[0], p[1] - t[1], p[2] - t[2]]).map(|c| c as f32)
}

/// Writes `mesh` as binary glTF 2.0 (`.glb`): one node, one mesh, one triangle primitive with
/// FLOAT VEC3 positions (with min/max) and UNSIGNED_INT indices, Y-up.
///
/// `translation` is a Z-up point in the mesh's own coordinates, normally the world offset the
/// mesh was generated with (`CityParams::offset`). It is written, converted to Y-up, as the
/// node's f64 `translation`, and the f32 positions are stored relative to it, so a reader that
/// applies node transforms recovers the world coordinates to well under a centimetre even at
/// UTM-sized offsets. An empty mesh gives a file with one empty node and no buffers.
pub fn write_glb(mesh: &Mesh, translation: [f64; 3], w: &mut impl Write) -> io::Result<()> {
    let nv = mesh.positions.len();
    let nt = mesh.triangles.len();
    let t = translation;
    let ty = y_up(t);
    let empty = nv == 0 || nt == 0;

    let json = if empty {
        format!(
            concat!(
                r#"{{"asset":{{"version":"2.0","generator":"citygen"}},"scene":0,"#,
                r#""scenes":[{{"nodes":[0]}}],"nodes":[{{"translation":[{},{},{}]}}]}}"#
            ),
            ty[0], ty[1], ty[2]
        )
    } else {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for &p in &mesh.positions {
            let q = relative(p, t);
            for k in 0..3 {
                lo[k] = lo[k].min(q[k]);
                hi[k] = hi[k].max(q[k]);
            }
        }
        let pos_len = nv * 12;
        let idx_len = nt * 12;
        format!(
            concat!(
                r#"{{"asset":{{"version":"2.0","generator":"citygen"}},"scene":0,"#,
                r#""scenes":[{{"nodes":[0]}}],"#,
                r#""nodes":[{{"mesh":0,"translation":[{},{},{}]}}],"#,
                r#""meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1,"mode":4}}]}}],"#,
                r#""buffers":[{{"byteLength":{}}}],"#,
                r#""bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":{},"byteStride":12,"target":34962}},"#,
                r#"{{"buffer":0,"byteOffset":{},"byteLength":{},"target":34963}}],"#,
                r#""accessors":[{{"bufferView":0,"componentType":5126,"count":{},"type":"VEC3","#,
                r#""min":[{},{},{}],"max":[{},{},{}]}},"#,
                r#"{{"bufferView":1,"componentType":5125,"count":{},"type":"SCALAR"}}]}}"#
            ),
            ty[0],
            ty[1],
            ty[2],
            pos_len + idx_len,
            pos_len,
            pos_len,
            idx_len,
            nv,
            lo[0],
            lo[1],
            lo[2],
            hi[0],
            hi[1],
            hi[2],
            nt * 3
        )
    };
    let mut json = json.into_bytes();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let bin_len = if empty { 0 } else { nv * 12 + nt * 12 };
    let total = 12 + 8 + json.len() + if empty { 0 } else { 8 + bin_len };
    let total = u32::try_from(total).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("mesh too large for one .glb file ({total} bytes; the limit is 4 GiB)"),
        )
    })?;

    let mut buf = Vec::with_capacity(FLUSH_AT + 64);
    buf.extend_from_slice(b"glTF");
    buf.extend_from_slice(&2u32.to_le_bytes());
    buf.extend_from_slice(&total.to_le_bytes());
    buf.extend_from_slice(&(json.len() as u32).to_le_bytes());
    buf.extend_from_slice(b"JSON");
    buf.extend_from_slice(&json);
    if !empty {
        buf.extend_from_slice(&(bin_len as u32).to_le_bytes());
        buf.extend_from_slice(b"BIN\0");
        // Both parts are multiples of 4 bytes already, so the chunk needs no padding.
        for &p in &mesh.positions {
            for c in relative(p, t) {
                buf.extend_from_slice(&c.to_le_bytes());
            }
            if buf.len() >= FLUSH_AT {
                w.write_all(&buf)?;
                buf.clear();
            }
        }
        for tri in &mesh.triangles {
            for &i in tri {
                buf.extend_from_slice(&i.to_le_bytes());
            }
            if buf.len() >= FLUSH_AT {
                w.write_all(&buf)?;
                buf.clear();
            }
        }
    }
    w.write_all(&buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(x: f64) -> String {
        let mut b = Vec::new();
        push_fixed4(&mut b, x);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn fixed_point_formatting() {
        assert_eq!(fixed(0.0), "0.0000");
        assert_eq!(fixed(-0.00001), "0.0000");
        assert_eq!(fixed(1.5), "1.5000");
        assert_eq!(fixed(-12.34), "-12.3400");
        assert_eq!(fixed(5_700_000.123_44), "5700000.1234");
        assert_eq!(fixed(0.00996), "0.0100");
        for x in [3.25, -7.0625, 123_456.789, 0.1, -0.9999] {
            assert_eq!(fixed(x), format!("{x:.4}"));
        }
    }

    #[test]
    fn obj_text() {
        let m = Mesh {
            positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.5]],
            triangles: vec![[0, 1, 2]],
        };
        let mut out = Vec::new();
        write_obj(&m, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with(
            "v 0.0000 0.0000 0.0000\nv 1.0000 0.0000 0.0000\nv 0.0000 1.0000 0.5000\nf 1 2 3\n"
        ));
    }

    #[test]
    fn empty_glb_is_framed() {
        let mut out = Vec::new();
        write_glb(&Mesh::default(), [1.0, 2.0, 3.0], &mut out).unwrap();
        assert_eq!(&out[0..4], b"glTF");
        assert_eq!(
            u32::from_le_bytes(out[8..12].try_into().unwrap()) as usize,
            out.len()
        );
        assert_eq!(out.len() % 4, 0);
    }
}
