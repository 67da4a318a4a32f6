//! Grids over the detail triangles of polygons that have many.
//!
//! A surface height is read from the first detail triangle of its polygon that holds the
//! point. Polygons on terrain are large and their height detail has hundreds of triangles,
//! so a scan of them all made a nearest-polygon lookup there about nine times slower than on
//! a city. Each such polygon gets a small uniform grid over its triangles' plan boxes: a
//! triangle is listed, in triangle order, in every cell its box meets; a point's cell holds
//! every triangle whose box holds the point, so the first of them that holds the point is
//! the first of the whole polygon that does. A point no triangle of its cell holds (off the
//! triangles, as a polygon's boundary point can be by a rounding) takes the nearest of the
//! cell within the query tolerance, else the caller scans them all.

use tessera_navmesh::{ArchivedNavMesh, NONE};

use crate::geom::{triangle_probe, V3};

/// Polygons with at least this many detail triangles get a grid.
const MIN_TRIANGLES: u32 = 16;
/// About this many triangles per cell (a triangle's box meets several cells).
const PER_CELL: f32 = 0.5;
/// At most this many cells along each side of a polygon's grid.
const MAX_SIDE: u32 = 64;

/// One polygon's grid: cell `(x, y)` lists `items[starts[first + y * w + x]..][..]`.
struct Grid {
    min: [f32; 2],
    cell: f32,
    w: u32,
    h: u32,
    /// Its first entry in [`DetailGrids::starts`] (it has `w * h + 1`).
    first: u32,
}

impl Grid {
    /// The cell of `v` along an axis of `n` cells from `min` (clamped; monotonic in `v`, so
    /// a point in a box is in a cell between the cells of the box's corners).
    #[inline]
    fn along(&self, v: f32, min: f32, n: u32) -> u32 {
        let c = ((v - min) / self.cell).floor();
        if c.is_nan() || c < 0.0 {
            0
        } else {
            (c as u64).min(u64::from(n - 1)) as u32
        }
    }

    #[inline]
    fn cell_of(&self, p: [f32; 2]) -> (u32, u32) {
        (
            self.along(p[0], self.min[0], self.w),
            self.along(p[1], self.min[1], self.h),
        )
    }
}

/// The grids of a mesh's polygons with many detail triangles.
#[derive(Default)]
pub(crate) struct DetailGrids {
    /// Per polygon, its grid's index in `grids`, or [`NONE`]; empty when no polygon has one.
    of_poly: Vec<u32>,
    grids: Vec<Grid>,
    starts: Vec<u32>,
    /// Triangle numbers within their polygon.
    items: Vec<u32>,
}

impl DetailGrids {
    pub(crate) fn new(mesh: &ArchivedNavMesh) -> DetailGrids {
        let mut out = DetailGrids::default();
        let mut boxes: Vec<[f32; 4]> = Vec::new();
        let mut cells: Vec<(u32, u32, u32, u32)> = Vec::new();
        for p in 0..mesh.polys.len() as u32 {
            let count = mesh.polys[p as usize].tri_count.to_native();
            if count < MIN_TRIANGLES {
                continue;
            }
            boxes.clear();
            boxes.extend(mesh.poly_triangles(p).map(|t| {
                let mut b = [t[0][0], t[0][1], t[0][0], t[0][1]];
                for v in &t[1..] {
                    b[0] = b[0].min(v[0]);
                    b[1] = b[1].min(v[1]);
                    b[2] = b[2].max(v[0]);
                    b[3] = b[3].max(v[1]);
                }
                b
            }));
            let all = boxes.iter().fold(
                [
                    f32::INFINITY,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    f32::NEG_INFINITY,
                ],
                |a, b| {
                    [
                        a[0].min(b[0]),
                        a[1].min(b[1]),
                        a[2].max(b[2]),
                        a[3].max(b[3]),
                    ]
                },
            );
            let (bw, bh) = (all[2] - all[0], all[3] - all[1]);
            if !(bw.is_finite() && bh.is_finite()) {
                continue;
            }
            let target = (count as f32 / PER_CELL).max(1.0);
            let cell = (bw.max(bh) / target.sqrt())
                .max((bw * bh / target).sqrt())
                .max(f32::MIN_POSITIVE);
            let side = |extent: f32| ((extent / cell).ceil() as u32).clamp(1, MAX_SIDE);
            let (w, h) = (side(bw), side(bh));
            // The cell fits the box in `w` by `h` cells (a clamped side stretches it).
            let cell = (bw / w as f32).max(bh / h as f32).max(cell);
            let grid = Grid {
                min: [all[0], all[1]],
                cell,
                w,
                h,
                first: out.starts.len() as u32,
            };
            // Count, then fill: each triangle in the cells its box meets, in triangle order.
            cells.clear();
            let mut counts = vec![0u32; (w * h) as usize];
            for b in &boxes {
                let (x0, y0) = grid.cell_of([b[0], b[1]]);
                let (x1, y1) = grid.cell_of([b[2], b[3]]);
                cells.push((x0, y0, x1, y1));
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        counts[(y * w + x) as usize] += 1;
                    }
                }
            }
            let base = out.items.len() as u32;
            let mut at = Vec::with_capacity(counts.len());
            let mut sum = base;
            for &c in &counts {
                out.starts.push(sum);
                at.push(sum);
                sum += c;
            }
            out.starts.push(sum);
            out.items.resize(sum as usize, 0);
            for (k, &(x0, y0, x1, y1)) in cells.iter().enumerate() {
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        let slot = &mut at[(y * w + x) as usize];
                        out.items[*slot as usize] = k as u32;
                        *slot += 1;
                    }
                }
            }
            if out.of_poly.is_empty() {
                out.of_poly = vec![NONE; mesh.polys.len()];
            }
            out.of_poly[p as usize] = out.grids.len() as u32;
            out.grids.push(grid);
        }
        out
    }

    /// The surface height at `p` from the first detail triangle of `poly` that holds it in
    /// plan (edges included, as [`triangle_probe`] reads them), when `poly` has a grid and
    /// one does; else, from the nearest of the triangles in `p`'s cell when it is within
    /// `near` in plan (a point on the polygon's boundary, a rounding off its triangles);
    /// `None` otherwise (the caller then scans every triangle).
    pub(crate) fn height(
        &self,
        mesh: &ArchivedNavMesh,
        poly: u32,
        p: V3,
        near: f64,
    ) -> Option<f32> {
        let at = *self.of_poly.get(poly as usize)?;
        let g = self.grids.get(at as usize)?;
        let (x, y) = g.cell_of([p[0], p[1]]);
        let slot = (g.first + y * g.w + x) as usize;
        let (lo, hi) = (self.starts[slot] as usize, self.starts[slot + 1] as usize);
        let first = mesh.polys[poly as usize].tri_first.to_native() as usize;
        let mut best = (f64::INFINITY, f32::NAN);
        for &k in &self.items[lo..hi] {
            let probe = triangle_probe(&mesh.detail_triangle(first + k as usize), p);
            if probe.0 == 0.0 {
                return Some(probe.1);
            }
            if probe.0 < best.0 {
                best = probe;
            }
        }
        // `triangle_probe` gives squared plan distances.
        (best.0 <= near * near).then_some(best.1)
    }
}

#[cfg(test)]
mod tests {
    use tessera_artifacts::{InputPoly, MeshInput};

    use crate::geom::triangle_probe;
    use crate::{Query, Rng};

    /// One 24 x 24 square whose height detail is a bumpy 25 x 25 lattice (1 152 triangles,
    /// half of them split the other way), built and read back as a file would be.
    fn bumpy_square() -> Vec<u8> {
        let mut input = MeshInput {
            climb: 2,
            regions: 1,
            ..MeshInput::default()
        };
        let n = 24i32;
        for y in 0..=n {
            for x in 0..=n {
                input.verts.push([x, y, (x * 7 + y * 3) % 5 + (x * y) % 3]);
            }
        }
        let id = |x: i32, y: i32| (y * (n + 1) + x) as u32;
        let mut tris = Vec::new();
        for y in 0..n {
            for x in 0..n {
                let (a, b, c, d) = (id(x, y), id(x + 1, y), id(x + 1, y + 1), id(x, y + 1));
                if (x + y) % 2 == 0 {
                    tris.extend([[a, b, c], [a, c, d]]);
                } else {
                    tris.extend([[a, b, d], [b, c, d]]);
                }
            }
        }
        input.polys.push(InputPoly {
            verts: vec![id(0, 0), id(n, 0), id(n, n), id(0, n)],
            region: 0,
            tris,
            ..InputPoly::default()
        });
        let frame = tessera_test_support::mesh::unit_frame([0.0, 0.0, 0.0]);
        let mesh = tessera_navgraph::build(frame, &input).expect("valid test mesh");
        tessera_navmesh::aligned(&tessera_navmesh::encode(&mesh)).to_vec()
    }

    /// What every triangle scanned in order gives: the first that holds `p`, else the nearest
    /// (the first of equals).
    fn scanned(q: &Query, p: [f32; 3]) -> f32 {
        let mut best = (f64::INFINITY, f32::NAN);
        for t in q.mesh().poly_triangles(0) {
            let probe = triangle_probe(&t, p);
            if probe.0 < best.0 {
                best = probe;
                if best.0 == 0.0 {
                    break;
                }
            }
        }
        best.1
    }

    #[test]
    fn heights_through_the_grid_are_those_of_every_triangle_scanned() {
        let bytes = tessera_navmesh::aligned(&bumpy_square());
        let mesh = tessera_navmesh::access(&bytes, "bumpy square").unwrap();
        let q = Query::new(mesh);
        assert_eq!(q.detail_grids.grids.len(), 1, "the square has a grid");
        let mut rng = Rng::new(3);
        let mut points: Vec<[f32; 3]> = (0..4000)
            .map(|_| {
                let x = rng.next_f64() as f32 * 24.0;
                let y = rng.next_f64() as f32 * 24.0;
                [x, y, 0.0]
            })
            .collect();
        // Lattice points and edges (on several triangles), the square's boundary, and points
        // off it (none holds them: the nearest one answers).
        for k in 0..=24 {
            let v = k as f32;
            points.extend([
                [v, v, 0.0],
                [v, 0.0, 0.0],
                [24.0, v, 0.0],
                [v + 0.5, 3.0, 0.0],
            ]);
            points.extend([[v, -0.3, 0.0], [24.2, v, 0.0], [-1e-6, v, 0.0]]);
        }
        let mut exact = 0;
        for (i, p) in points.into_iter().enumerate() {
            let want = scanned(&q, p);
            let from_grid = q.detail_grids.height(mesh, 0, p, q.tolerance() as f64);
            if i < 4000 {
                assert!(
                    from_grid.is_some(),
                    "{p:?} inside, not found through the grid"
                );
            }
            let got = q.surface(0, p);
            assert!(from_grid.is_none_or(|z| z.to_bits() == got.to_bits()));
            let mut nearest = (f64::INFINITY, 0.0f32);
            for t in q.mesh().poly_triangles(0) {
                let probe = triangle_probe(&t, p);
                nearest = if probe.0 < nearest.0 { probe } else { nearest };
            }
            if nearest.0 == 0.0 || nearest.0 > (q.tolerance() as f64).powi(2) {
                // Held by a triangle, or far from all: exactly the scan's answer.
                assert_eq!(got.to_bits(), want.to_bits(), "at {p:?}: {got} vs {want}");
                exact += 1;
            } else {
                // Within the tolerance of a triangle: a height from one that near.
                assert!((got - want).abs() < 1e-3, "at {p:?}: {got} vs {want}");
            }
        }
        assert!(exact > 4000, "{exact} points compared exactly");
    }
}
