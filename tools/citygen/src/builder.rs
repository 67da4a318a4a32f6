//! Mesh assembly: vertices and triangles pushed into a [`Mesh`], closed solids (boxes, sheared
//! boxes, wedges) with outward-facing counter-clockwise winding, and local frames (a rectangle's
//! corner plus a quarter-turn rotation) so buildings and bridges can be laid out in their own
//! coordinates and placed facing any street.

use crate::Mesh;

/// An axis-aligned rectangle in the ground plane (world metres, before the offset).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Rect {
    pub(crate) fn new(x0: f64, y0: f64, x1: f64, y1: f64) -> Rect {
        Rect {
            x0: x0.min(x1),
            y0: y0.min(y1),
            x1: x0.max(x1),
            y1: y0.max(y1),
        }
    }
    pub(crate) fn w(&self) -> f64 {
        self.x1 - self.x0
    }
    pub(crate) fn h(&self) -> f64 {
        self.y1 - self.y0
    }
    /// Grown by `d` on every side (shrunk for negative `d`).
    pub(crate) fn grow(&self, d: f64) -> Rect {
        Rect {
            x0: self.x0 - d,
            y0: self.y0 - d,
            x1: self.x1 + d,
            y1: self.y1 + d,
        }
    }
    pub(crate) fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
    pub(crate) fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x0 && x <= self.x1 && y >= self.y0 && y <= self.y1
    }
}

/// A local coordinate frame in the ground plane: `u`, `v` measured from `(ox, oy)` and turned by
/// `rot` quarter turns counter-clockwise. Rotations keep handedness, so winding survives.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub ox: f64,
    pub oy: f64,
    pub rot: u8,
}

impl Frame {
    pub(crate) fn pt(&self, u: f64, v: f64) -> (f64, f64) {
        match self.rot & 3 {
            0 => (self.ox + u, self.oy + v),
            1 => (self.ox - v, self.oy + u),
            2 => (self.ox - u, self.oy - v),
            _ => (self.ox + v, self.oy - u),
        }
    }
    /// The world rectangle covered by the local rectangle `[u0, u1] x [v0, v1]`.
    pub(crate) fn rect(&self, u0: f64, v0: f64, u1: f64, v1: f64) -> Rect {
        let (ax, ay) = self.pt(u0, v0);
        let (bx, by) = self.pt(u1, v1);
        Rect::new(ax, ay, bx, by)
    }
}

/// Appends geometry to a mesh, adding the world offset to every vertex.
pub(crate) struct Builder {
    pub mesh: Mesh,
    off: [f64; 3],
}

/// Corner order shared by [`Builder::hexa`] and the callers: index `i + 2j + 4k` is the corner at
/// the low (0) or high (1) end of the first, second and vertical axis.
const HEXA_FACES: [[usize; 4]; 6] = [
    [4, 5, 7, 6], // top
    [0, 2, 3, 1], // bottom
    [1, 3, 7, 5], // +x
    [0, 4, 6, 2], // -x
    [2, 6, 7, 3], // +y
    [0, 1, 5, 4], // -y
];

impl Builder {
    pub(crate) fn new(off: [f64; 3], tri_hint: usize, vert_hint: usize) -> Builder {
        Builder {
            mesh: Mesh {
                positions: Vec::with_capacity(vert_hint),
                triangles: Vec::with_capacity(tri_hint),
            },
            off,
        }
    }

    /// Adds a vertex given in local (un-offset) metres; returns its index.
    pub(crate) fn v(&mut self, x: f64, y: f64, z: f64) -> u32 {
        let i = self.mesh.positions.len();
        assert!(i < u32::MAX as usize, "citygen: more than 2^32 vertices");
        self.mesh
            .positions
            .push([x + self.off[0], y + self.off[1], z + self.off[2]]);
        i as u32
    }

    pub(crate) fn tri(&mut self, a: u32, b: u32, c: u32) {
        self.mesh.triangles.push([a, b, c]);
    }

    /// Two triangles `a b c`, `a c d` (corners counter-clockwise seen from the front).
    pub(crate) fn quad(&mut self, a: u32, b: u32, c: u32, d: u32) {
        self.tri(a, b, c);
        self.tri(a, c, d);
    }

    /// A closed six-sided solid from eight corners in `i + 2j + 4k` order (see [`HEXA_FACES`]);
    /// the corners must form a right-handed (non-inverted) box-like shape.
    pub(crate) fn hexa(&mut self, p: &[[f64; 3]; 8]) {
        let mut id = [0u32; 8];
        for (slot, q) in id.iter_mut().zip(p) {
            *slot = self.v(q[0], q[1], q[2]);
        }
        for f in HEXA_FACES {
            self.quad(id[f[0]], id[f[1]], id[f[2]], id[f[3]]);
        }
    }

    /// A closed axis-aligned box. Empty boxes (any side under 1 mm) are skipped.
    pub(crate) fn aabb(&mut self, lo: [f64; 3], hi: [f64; 3]) {
        if hi[0] - lo[0] < 1e-3 || hi[1] - lo[1] < 1e-3 || hi[2] - lo[2] < 1e-3 {
            return;
        }
        let mut p = [[0.0; 3]; 8];
        for (n, q) in p.iter_mut().enumerate() {
            *q = [
                if n & 1 == 0 { lo[0] } else { hi[0] },
                if n & 2 == 0 { lo[1] } else { hi[1] },
                if n & 4 == 0 { lo[2] } else { hi[2] },
            ];
        }
        self.hexa(&p);
    }

    /// A box given in a local frame: `[u0, u1] x [v0, v1] x [z0, z1]`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fbox(&mut self, f: &Frame, u0: f64, v0: f64, z0: f64, u1: f64, v1: f64, z1: f64) {
        let r = f.rect(u0, v0, u1, v1);
        self.aabb([r.x0, r.y0, z0], [r.x1, r.y1, z1]);
    }

    /// A six-sided solid given in a local frame (corners as for [`Builder::hexa`]).
    pub(crate) fn fhexa(&mut self, f: &Frame, p: &[[f64; 3]; 8]) {
        let mut w = *p;
        for q in w.iter_mut() {
            let (x, y) = f.pt(q[0], q[1]);
            q[0] = x;
            q[1] = y;
        }
        self.hexa(&w);
    }

    /// A closed wedge (ramp) in a local frame over `v0..v1`, whose top rises from `zb` at
    /// `u = ua` to `zt` at `u = ub`; the bottom is flat at `zb`, with a vertical face at `ub`.
    /// `ub` may be below `ua` (a ramp rising towards -u).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fwedge(
        &mut self,
        f: &Frame,
        ua: f64,
        ub: f64,
        v0: f64,
        v1: f64,
        zb: f64,
        zt: f64,
    ) {
        // Running towards -u mirrors u; mirroring v as well keeps the solid right-handed.
        let (v0, v1) = if ub > ua { (v0, v1) } else { (v1, v0) };
        let local = [
            [ua, v0, zb],
            [ub, v0, zb],
            [ua, v1, zb],
            [ub, v1, zb],
            [ub, v0, zt],
            [ub, v1, zt],
        ];
        let mut id = [0u32; 6];
        for (slot, q) in id.iter_mut().zip(local) {
            let (x, y) = f.pt(q[0], q[1]);
            *slot = self.v(x, y, q[2]);
        }
        self.quad(id[0], id[2], id[3], id[1]); // bottom
        self.quad(id[0], id[4], id[5], id[2]); // sloped top
        self.quad(id[1], id[3], id[5], id[4]); // high end
        self.tri(id[0], id[1], id[4]); // side at v0
        self.tri(id[2], id[5], id[3]); // side at v1
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Six times the signed volume enclosed by the triangles (positive when they face outwards).
    pub(crate) fn volume6(m: &Mesh) -> f64 {
        m.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| m.positions[i as usize]);
                a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                    + a[2] * (b[0] * c[1] - b[1] * c[0])
            })
            .sum()
    }

    /// Signed volume (x6) of each connected piece of `m` (pieces share no vertices).
    pub(crate) fn piece_volumes6(m: &Mesh) -> Vec<f64> {
        let mut parent: Vec<usize> = (0..m.positions.len()).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        for t in &m.triangles {
            for k in 1..3 {
                let (a, b) = (
                    root(&mut parent, t[0] as usize),
                    root(&mut parent, t[k] as usize),
                );
                parent[a] = b;
            }
        }
        let mut vol = vec![0.0; m.positions.len()];
        for t in &m.triangles {
            let one = Mesh {
                positions: t.iter().map(|&i| m.positions[i as usize]).collect(),
                triangles: vec![[0, 1, 2]],
            };
            vol[root(&mut parent, t[0] as usize)] += volume6(&one);
        }
        (0..vol.len())
            .filter(|&i| root(&mut parent, i) == i)
            .map(|i| vol[i])
            .collect()
    }

    #[test]
    fn solids_face_outwards_in_every_frame() {
        for rot in 0..4 {
            let f = Frame {
                ox: 3.0,
                oy: -2.0,
                rot,
            };
            let mut b = Builder::new([10.0, 20.0, 30.0], 0, 0);
            b.fbox(&f, 1.0, 2.0, 0.0, 3.0, 5.0, 4.0);
            assert!((volume6(&b.mesh) - 6.0 * 24.0).abs() < 1e-6);
            for (ua, ub) in [(0.0, 4.0), (4.0, 0.0)] {
                let mut b = Builder::new([0.0; 3], 0, 0);
                b.fwedge(&f, ua, ub, 1.0, 3.0, 0.0, 3.0);
                assert!((volume6(&b.mesh) - 6.0 * 12.0).abs() < 1e-6, "rot {rot}");
                // The sloped top faces up.
                let t = b.mesh.triangles[2].map(|i| b.mesh.positions[i as usize]);
                let (e1, e2) = (
                    [t[1][0] - t[0][0], t[1][1] - t[0][1]],
                    [t[2][0] - t[0][0], t[2][1] - t[0][1]],
                );
                assert!(e1[0] * e2[1] - e1[1] * e2[0] > 0.0);
            }
        }
    }
}
