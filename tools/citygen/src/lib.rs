//! citygen: a deterministic procedural city, built as a test world for the tessera navmesh
//! baker.
//!
//! [`generate`] turns a size preset and a seed into one triangle soup (Z-up, metres): gentle
//! hills with a few embankments steeper than 45 degrees, a street grid with kerbs and
//! sidewalks, multi-storey buildings with doors, rooms, stairs or ramps and stairwell openings,
//! pedestrian overpasses with ramps and railings, street furniture, and the flaws real exports
//! have (props poking into the ground, duplicate faces, slivers, T-junctions, small holes).
//! [`generate_terrain`] makes open country instead, with no city: rolling hills and valleys,
//! cliffs steeper than 45 degrees and carved river channels, on a 2 m grid over 1 to 4 km²
//! ([`TerrainParams::for_size`]). [`write_obj`] and [`write_glb`] save either. The same parameters always give the same bytes:
//! randomness comes from a built-in seeded generator, never from a crate or a hash map.

mod builder;
mod building;
mod city;
mod export;
mod landscape;
mod rng;
mod street;
mod terrain;

pub use export::{write_glb, write_obj};
pub use landscape::{generate_terrain, TerrainParams, TERRAIN_CELL_M};

/// World size presets. Demo is the tiny built-in world `tessera bake` uses with no arguments.
/// Terrain-only worlds read them as areas instead: see [`TerrainParams::for_size`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// 100 m square: four streets, two or three buildings with stairs (one with a ramp
    /// instead), a footbridge, an embankment, props.
    Demo,
    /// 250 m square.
    S,
    /// 500 m square.
    M,
    /// 1 km square.
    L,
    /// 2 km square.
    XL,
}

impl Size {
    /// Edge length of the square world, in metres.
    pub fn extent_m(self) -> f64 {
        match self {
            Size::Demo => 100.0,
            Size::S => 250.0,
            Size::M => 500.0,
            Size::L => 1000.0,
            Size::XL => 2000.0,
        }
    }

    /// Parses `demo`, `s`, `m`, `l` or `xl`, ignoring case.
    pub fn parse(s: &str) -> Option<Size> {
        match s.trim().to_ascii_lowercase().as_str() {
            "demo" => Some(Size::Demo),
            "s" => Some(Size::S),
            "m" => Some(Size::M),
            "l" => Some(Size::L),
            "xl" => Some(Size::XL),
            _ => None,
        }
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct CityParams {
    pub size: Size,
    pub seed: u64,
    /// Added to every vertex: UTM-like, e.g. `[500000.0, 5700000.0, 0.0]`.
    pub offset: [f64; 3],
}

/// Z-up, metres. Triangles index positions, counter-clockwise seen from above for upward-facing
/// surfaces.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    pub positions: Vec<[f64; 3]>,
    pub triangles: Vec<[u32; 3]>,
}

impl Mesh {
    /// The smallest and largest coordinate on each axis, or `None` for a mesh with no vertices.
    pub fn bounds(&self) -> Option<([f64; 3], [f64; 3])> {
        let first = *self.positions.first()?;
        Some(self.positions.iter().fold((first, first), |(lo, hi), p| {
            (
                [lo[0].min(p[0]), lo[1].min(p[1]), lo[2].min(p[2])],
                [hi[0].max(p[0]), hi[1].max(p[1]), hi[2].max(p[2])],
            )
        }))
    }
}

/// `mesh` cut into `n` x `n` squares of its plan bounds, each triangle to the square its
/// centroid is in: the non-empty squares' meshes by (row, column), row 0 at the lowest y, each
/// holding only the vertices its triangles use, in their first use's order.
pub fn split(mesh: &Mesh, n: usize) -> Vec<((usize, usize), Mesh)> {
    let Some((lo, hi)) = mesh.bounds() else {
        return Vec::new();
    };
    let cell = |k: usize, v: f64| {
        let extent = (hi[k] - lo[k]).max(f64::MIN_POSITIVE);
        (((v - lo[k]) / extent * n as f64) as usize).min(n - 1)
    };
    type Part = (Mesh, std::collections::HashMap<u32, u32>);
    let mut parts: std::collections::BTreeMap<(usize, usize), Part> =
        std::collections::BTreeMap::new();
    for t in &mesh.triangles {
        let centroid = |k: usize| {
            t.iter()
                .map(|&i| mesh.positions[i as usize][k])
                .sum::<f64>()
                / 3.0
        };
        let at = (cell(1, centroid(1)), cell(0, centroid(0)));
        let (part, index) = parts.entry(at).or_default();
        let triangle = t.map(|i| {
            *index.entry(i).or_insert_with(|| {
                part.positions.push(mesh.positions[i as usize]);
                part.positions.len() as u32 - 1
            })
        });
        part.triangles.push(triangle);
    }
    parts
        .into_iter()
        .map(|(at, (part, _))| (at, part))
        .collect()
}

/// Generates the city described by `params`. The world covers
/// `[0, extent] x [0, extent]` (plus `params.offset`) horizontally; the same `params` always
/// give an identical mesh.
pub fn generate(params: &CityParams) -> Mesh {
    city::City::plan(params).build()
}
