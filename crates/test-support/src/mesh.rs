//! Scenes built from quads and boxes, in memory or as OBJ text.

use std::fmt::Write as _;
use std::path::Path;

/// A Z-up mesh built from quads, each split into two triangles.
#[derive(Clone, Debug, Default)]
pub struct MeshBuilder {
    pub positions: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
    /// OBJ statements (`g road`, `usemtl Water`...) and the triangle they come before.
    pub statements: Vec<(usize, String)>,
}

impl MeshBuilder {
    /// Adds a quad as two triangles (`a b c`, `a c d`): counter-clockwise from above faces up.
    pub fn quad(&mut self, p: [[f64; 3]; 4]) {
        let b = self.positions.len() as u32;
        self.positions.extend_from_slice(&p);
        self.triangles.push([b, b + 1, b + 2]);
        self.triangles.push([b, b + 2, b + 3]);
    }

    /// An OBJ statement (`g road`, `usemtl Water`, `o bridge`) before the next triangles:
    /// what names them, for `[[areas]]`.
    pub fn statement(&mut self, line: &str) {
        self.statements
            .push((self.triangles.len(), line.to_string()));
    }

    /// Adds a horizontal rectangle at height `z`, facing up.
    pub fn floor(&mut self, x0: f64, y0: f64, x1: f64, y1: f64, z: f64) {
        self.quad([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]]);
    }

    /// Adds a box standing on `z = 0` with its top at `h`: the top and four sides, no bottom.
    pub fn block(&mut self, x0: f64, y0: f64, x1: f64, y1: f64, h: f64) {
        self.floor(x0, y0, x1, y1, h);
        self.quad([[x0, y0, 0.0], [x1, y0, 0.0], [x1, y0, h], [x0, y0, h]]);
        self.quad([[x1, y0, 0.0], [x1, y1, 0.0], [x1, y1, h], [x1, y0, h]]);
        self.quad([[x1, y1, 0.0], [x0, y1, 0.0], [x0, y1, h], [x1, y1, h]]);
        self.quad([[x0, y1, 0.0], [x0, y0, 0.0], [x0, y0, h], [x0, y1, h]]);
    }

    /// The mesh as Wavefront OBJ text (Z up, as built; `v` lines then 1-based `f` lines).
    pub fn obj(&self) -> String {
        let mut s = String::new();
        for p in &self.positions {
            writeln!(s, "v {} {} {}", p[0], p[1], p[2]).unwrap();
        }
        let mut said = self.statements.iter().peekable();
        for (i, t) in self.triangles.iter().enumerate() {
            while let Some((_, line)) = said.next_if(|(at, _)| *at <= i) {
                writeln!(s, "{line}").unwrap();
            }
            writeln!(s, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1).unwrap();
        }
        s
    }

    /// Writes [`MeshBuilder::obj`] to `path`.
    pub fn write_obj(&self, path: &Path) {
        std::fs::write(path, self.obj())
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

/// Triangle soup (three corners each) as OBJ text: three `v` lines and one `f` line per
/// triangle, no vertex shared.
pub fn triangles_obj(tris: &[[[f64; 3]; 3]]) -> String {
    let mut s = String::new();
    for t in tris {
        for v in t {
            writeln!(s, "v {} {} {}", v[0], v[1], v[2]).unwrap();
        }
    }
    for i in 0..tris.len() {
        writeln!(s, "f {} {} {}", 3 * i + 1, 3 * i + 2, 3 * i + 3).unwrap();
    }
    s
}

/// The frame of the hand-made navmeshes of the query and CLI tests: cells of 1 m (grid units
/// are metres in plan), heights in quarter metres, an agent 2 m tall with a 0.5 m radius and
/// climb, Z up, the grid's origin at `origin` in the scene.
pub fn unit_frame(origin: [f64; 3]) -> tessera_navmesh::Frame {
    tessera_navmesh::Frame {
        origin,
        up: b'z',
        cell_size: 1.0,
        cell_height: 0.25,
        agent_height: 2.0,
        agent_radius: 0.5,
        agent_climb: 0.5,
    }
}

/// Squares of `side` cells, one polygon each, with their lower-left corners at `side` times
/// `cells` (x, y), in that order, all in region 0 at height 0; triangles as two halves. The
/// input of the builder's hand-made meshes (`tessera_navgraph::build`).
pub fn squares(cells: &[(i32, i32)], side: i32) -> tessera_artifacts::MeshInput {
    let mut input = tessera_artifacts::MeshInput {
        regions: 1,
        climb: 2,
        ..Default::default()
    };
    for &(x, y) in cells {
        let (x0, y0) = (side * x, side * y);
        let first = input.verts.len() as u32;
        input.verts.extend([
            [x0, y0, 0],
            [x0 + side, y0, 0],
            [x0 + side, y0 + side, 0],
            [x0, y0 + side, 0],
        ]);
        input.polys.push(tessera_artifacts::InputPoly {
            verts: (first..first + 4).collect(),
            tris: vec![[first, first + 1, first + 2], [first, first + 2, first + 3]],
            ..Default::default()
        });
    }
    input
}
