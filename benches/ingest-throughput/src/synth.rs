//! A seeded synthetic terrain written as a large Wavefront OBJ, the kind of file a GIS export
//! produces: UTM-like coordinates with four decimals, texture coordinates and normals, faces in
//! every index form (`i`, `i/t`, `i//n`, `i/t/n`, some relative), triangles and quads, and the
//! usual `o` / `g` / `usemtl` / `s` statements the parser must skip.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// What was written.
#[derive(Clone, Copy, Debug)]
pub struct Written {
    pub bytes: u64,
    pub vertices: u64,
    pub face_lines: u64,
    /// Triangles the faces make once quads are split.
    pub triangles: u64,
}

/// A small, fast, seeded generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// Writes `value` with exactly `decimals` decimals (rounded), without going through float
/// formatting: an integer part and a zero-padded fraction.
fn fixed(w: &mut impl Write, value: f64, decimals: u32) -> io::Result<()> {
    let scale = 10u64.pow(decimals);
    let scaled = (value.abs() * scale as f64).round() as u64;
    let sign = if value < 0.0 && scaled != 0 { "-" } else { "" };
    write!(
        w,
        "{sign}{}.{:0width$}",
        scaled / scale,
        scaled % scale,
        width = decimals as usize
    )
}

/// Ground height [m] at grid point `(i, j)`: rolling hills, a ridge, and a little roughness.
fn height(i: u32, j: u32, rng: &mut Rng) -> f64 {
    let (x, y) = (i as f64, j as f64);
    120.0
        + 35.0 * (x * 0.0131).sin() * (y * 0.0097).cos()
        + 12.0 * ((x + 0.6 * y) * 0.0370).sin()
        + 4.0 * (x * 0.21).sin() * (y * 0.17).sin()
        + (rng.unit() - 0.5) * 0.4
}

/// Writes a `side` x `side` vertex terrain (`2 (side - 1)^2` triangles) to `path`.
pub fn write_terrain(path: &Path, side: u32, seed: u64) -> io::Result<Written> {
    assert!(side >= 2);
    let file = File::create(path)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut rng = Rng(seed);
    let n = side as u64 * side as u64;
    let spacing = 1.0; // metres between grid points

    writeln!(
        w,
        "# tessera ingest benchmark: synthetic terrain, seed {seed}, {side} x {side} vertices"
    )?;
    writeln!(w, "mtllib terrain.mtl")?;
    writeln!(w, "o terrain")?;

    // Heights first (the normals need neighbours).
    let mut z = Vec::with_capacity(n as usize);
    for j in 0..side {
        for i in 0..side {
            z.push(height(i, j, &mut rng));
        }
    }
    let at = |i: u32, j: u32| z[(j * side + i) as usize];

    for j in 0..side {
        for i in 0..side {
            // UTM-like easting / northing with sub-centimetre jitter so every digit varies.
            let x = 512_345.0 + i as f64 * spacing + (rng.unit() - 0.5) * 0.05;
            let y = 5_712_345.0 + j as f64 * spacing + (rng.unit() - 0.5) * 0.05;
            w.write_all(b"v ")?;
            fixed(&mut w, x, 4)?;
            w.write_all(b" ")?;
            fixed(&mut w, y, 4)?;
            w.write_all(b" ")?;
            fixed(&mut w, at(i, j), 4)?;
            w.write_all(b"\n")?;
        }
    }
    for j in 0..side {
        for i in 0..side {
            w.write_all(b"vt ")?;
            fixed(&mut w, i as f64 / (side - 1) as f64, 6)?;
            w.write_all(b" ")?;
            fixed(&mut w, j as f64 / (side - 1) as f64, 6)?;
            w.write_all(b"\n")?;
        }
    }
    for j in 0..side {
        for i in 0..side {
            // Central differences (one-sided at the border), normalised.
            let dx = at((i + 1).min(side - 1), j) - at(i.saturating_sub(1), j);
            let dy = at(i, (j + 1).min(side - 1)) - at(i, j.saturating_sub(1));
            let (nx, ny, nz) = (-dx, -dy, 2.0 * spacing);
            let len = (nx * nx + ny * ny + nz * nz).sqrt();
            w.write_all(b"vn ")?;
            for (k, c) in [nx / len, ny / len, nz / len].into_iter().enumerate() {
                if k > 0 {
                    w.write_all(b" ")?;
                }
                fixed(&mut w, c, 4)?;
            }
            w.write_all(b"\n")?;
        }
    }

    // Faces: rows of cells, with a group and material every 64 rows.
    let mut face_lines = 0u64;
    let mut triangles = 0u64;
    let index = |i: u32, j: u32| (j as u64) * side as u64 + i as u64 + 1;
    let mut corners: Vec<u64> = Vec::with_capacity(4);
    for j in 0..side - 1 {
        if j % 64 == 0 {
            writeln!(w, "g strip_{}", j / 64)?;
            writeln!(w, "usemtl ground_{}", (j / 64) % 4)?;
            writeln!(w, "s 1")?;
        }
        for i in 0..side - 1 {
            let (a, b, c, d) = (
                index(i, j),
                index(i + 1, j),
                index(i + 1, j + 1),
                index(i, j + 1),
            );
            let quad = rng.chance(0.25);
            let faces: &[&[u64]] = if quad {
                &[&[a, b, c, d]]
            } else {
                &[&[a, b, c], &[a, c, d]]
            };
            for face in faces {
                corners.clear();
                corners.extend_from_slice(face);
                let form = rng.next() % 4;
                let relative = rng.chance(0.05);
                w.write_all(b"f")?;
                for &v in &corners {
                    // Relative indices count back from the last vertex defined (all come first).
                    let shown: i64 = if relative {
                        v as i64 - n as i64 - 1
                    } else {
                        v as i64
                    };
                    match form {
                        0 => write!(w, " {shown}")?,
                        1 => write!(w, " {shown}/{shown}")?,
                        2 => write!(w, " {shown}//{shown}")?,
                        _ => write!(w, " {shown}/{shown}/{shown}")?,
                    }
                }
                w.write_all(b"\n")?;
                face_lines += 1;
                triangles += corners.len() as u64 - 2;
            }
        }
    }
    w.flush()?;
    let bytes = w.get_ref().metadata()?.len();
    Ok(Written {
        bytes,
        vertices: n,
        face_lines,
        triangles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_text() {
        let mut s = Vec::new();
        for (v, d) in [
            (512345.67891, 4),
            (0.5, 6),
            (-0.01234, 4),
            (-0.00001, 4),
            (3.0, 2),
        ] {
            fixed(&mut s, v, d).unwrap();
            s.push(b' ');
        }
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "512345.6789 0.500000 -0.0123 0.0000 3.00 "
        );
    }
}
