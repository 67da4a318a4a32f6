//! Hand-made meshes for the query tests, built, encoded and read back as a file would be.

#![allow(dead_code)]

use std::ops::Deref;

use tessera_artifacts::{InputPoly, MeshInput};
use tessera_navmesh::{ArchivedNavMesh, Frame};

/// Cell size 1 m (grid units are metres in plan), heights in quarter metres.
pub fn frame() -> Frame {
    tessera_test_support::mesh::unit_frame([1000.0, 2000.0, 10.0])
}

/// The encoded file's bytes, aligned for zero-copy access.
pub struct Bytes(Box<dyn Deref<Target = [u8]>>);

impl Bytes {
    pub fn new(frame: Frame, input: &MeshInput) -> Bytes {
        let mesh = tessera_navgraph::build(frame, input).expect("valid test mesh");
        Bytes(Box::new(tessera_navmesh::aligned(
            &tessera_navmesh::encode(&mesh),
        )))
    }

    /// [`Bytes::new`] with off-mesh links.
    pub fn linked(
        frame: Frame,
        input: &MeshInput,
        links: Vec<tessera_navgraph::LinkSpec>,
    ) -> Bytes {
        let pruning = tessera_navgraph::Pruning::default();
        let (mesh, _) =
            tessera_navgraph::build_linked(frame, input, &pruning, links).expect("valid test mesh");
        Bytes(Box::new(tessera_navmesh::aligned(
            &tessera_navmesh::encode(&mesh),
        )))
    }

    /// A mesh in memory, encoded.
    pub fn of(mesh: &tessera_navmesh::NavMesh) -> Bytes {
        Bytes(Box::new(tessera_navmesh::aligned(
            &tessera_navmesh::encode(mesh),
        )))
    }

    pub fn mesh(&self) -> &ArchivedNavMesh {
        tessera_navmesh::access(&self.0, "test.tsn").expect("the mesh reads back")
    }
}

/// Builds inputs polygon by polygon, vertices given in grid units.
#[derive(Default)]
pub struct Builder {
    pub input: MeshInput,
}

impl Builder {
    pub fn new() -> Builder {
        let mut b = Builder::default();
        b.input.climb = 2;
        b
    }

    fn vert(&mut self, v: [i32; 3]) -> u32 {
        self.input.verts.push(v);
        (self.input.verts.len() - 1) as u32
    }

    /// A convex counter-clockwise polygon with a fan of detail triangles; returns its id.
    pub fn poly(&mut self, verts: &[[i32; 3]], region: u32) -> u32 {
        let ids: Vec<u32> = verts.iter().map(|&v| self.vert(v)).collect();
        let tris = (1..ids.len() - 1)
            .map(|k| [ids[0], ids[k], ids[k + 1]])
            .collect();
        self.input.polys.push(InputPoly {
            verts: ids,
            region,
            tris,
            ..InputPoly::default()
        });
        self.input.regions = self.input.regions.max(region + 1);
        (self.input.polys.len() - 1) as u32
    }

    /// An axis-aligned rectangle at height `z` (voxels).
    pub fn rect(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, z: i32, region: u32) -> u32 {
        self.poly(
            &[[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]],
            region,
        )
    }

    /// A link both ways between `a` and `b`, crossing segment `p..q` (grid units) on each
    /// side at that side's height.
    pub fn link(&mut self, a: u32, b: u32, p: [i32; 2], q: [i32; 2], za: i32, zb: i32) {
        self.input
            .links
            .push((a, b, [p[0], p[1], za], [q[0], q[1], za]));
        self.input
            .links
            .push((b, a, [p[0], p[1], zb], [q[0], q[1], zb]));
    }

    /// A link both ways between `a` and `b` that do not meet in plan: `a`'s side crosses at its
    /// segment `sa` and `b`'s at its segment `sb` (grid units, each at its own height).
    pub fn link_across(&mut self, a: u32, b: u32, sa: [[i32; 3]; 2], sb: [[i32; 3]; 2]) {
        self.input.links.push((a, b, sa[0], sa[1]));
        self.input.links.push((b, a, sb[0], sb[1]));
    }

    pub fn bytes(&self, frame: Frame) -> Bytes {
        Bytes::new(frame, &self.input)
    }
}

/// Sum of 3D segment lengths.
pub fn length(pts: &[[f32; 3]]) -> f64 {
    pts.windows(2)
        .map(|w| {
            let d = [0, 1, 2].map(|k| w[1][k] as f64 - w[0][k] as f64);
            (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
        })
        .sum()
}

/// The corridor's centre line (portal midpoints; a link's segment and then its landing).
pub fn centre_line(
    q: &tessera_query::Query,
    start: [f32; 3],
    end: [f32; 3],
    polys: &[u32],
) -> Vec<[f32; 3]> {
    q.centre_line(start, end, polys).points
}

/// An L-shaped corridor 2 m wide: east along y 0..2 from x 0 to 10, then north along x 8..10
/// up to y 10. Six convex polygons, the corner square cut into two triangles; the inner corner
/// is (8, 2).
pub fn l_corridor() -> Builder {
    let mut b = Builder::new();
    b.rect(0, 0, 4, 2, 0, 0); // 0
    b.rect(4, 0, 8, 2, 0, 0); // 1
    b.poly(&[[8, 0, 0], [10, 0, 0], [10, 2, 0]], 1); // 2
    b.poly(&[[8, 0, 0], [10, 2, 0], [8, 2, 0]], 1); // 3
    b.rect(8, 2, 10, 6, 0, 2); // 4
    b.rect(8, 6, 10, 10, 0, 2); // 5
    b
}
