//! The navmesh file (`navmesh.tsn`): what a bake hands to path-finding.
//!
//! Convex polygons (counter-clockwise seen from above) over shared vertices, each edge naming
//! the polygon across it (a portal) or none; links between polygons that do not share an edge
//! (stairs); per polygon a few detail triangles for point heights; and a uniform grid over the
//! polygons' plan bounding boxes for nearest-polygon lookups.
//!
//! Coordinates are tessera's internal frame: Z up, world units, rebased on [`Frame::origin`].
//! [`Frame::to_internal`] and [`Frame::to_scene`] convert from and to the source scene's own
//! coordinates and up axis.
//!
//! **The file** is a 64-byte [`Header`] (magic, format version, payload length, xxh3 checksum
//! of everything else, the bake's key and tile size) followed by an rkyv archive of
//! [`NavMesh`]. [`encode`] writes one from a mesh in memory. [`NavMeshFile::open`] memory-maps
//! a file and checks, in order: the header, the checksum (a flipped byte is refused), rkyv's
//! structural validation (a hostile file cannot make an access go out of bounds), and
//! [`validate`]: every index in range, every number finite ([`InvalidMesh`] says which is
//! not). After that, access is zero-copy.
//!
//! [`fuzzing`] runs that loading on arbitrary bytes for the fuzz targets (`fuzz/`) and the
//! regression tests that replay what they found.
//!
//! This is the format alone: the builder (out-of-core assembly, stair links, reachability, the
//! grid, the streaming writer) is the crate `tessera-navgraph`, which depends on this one,
//! never the reverse. Readers (query, export, viewer) link this crate and so never the spill
//! machinery or `tempfile`. Of the bake's crates it uses only `tessera-artifacts` (pure types,
//! no I/O), for [`DETAIL`] and [`NotchGroups`], which the polygons stage produces.

mod file;
pub mod fuzzing;
mod header;
mod validate;

use bytemuck::{Pod, Zeroable};
use rkyv::{Archive, Deserialize, Serialize};
use tessera_geom::UpAxis;

pub use file::{
    access, aligned, check_file, encode, encode_keyed, encode_parts, read_key, NavMeshError,
    NavMeshFile,
};
pub use header::{Header, HEADER_LEN, MAGIC, VERSION};
// The detail-corner bit (`NavMesh::detail_tris`) and the notch counts (`Stats::by_notches`)
// are declared once, beside the polygons stage's output that they come from.
pub use tessera_artifacts::{ArchivedNotchGroups, NotchGroups, DETAIL, NOTCH_GROUPS};
pub use validate::{validate, InvalidMesh};

/// "No polygon" in [`NavMesh::poly_neis`] and elsewhere.
pub const NONE: u32 = u32::MAX;

/// Where the mesh sits in the scene.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Frame {
    /// The scene point (Z-up, world units) that internal coordinates are relative to.
    pub origin: [f64; 3],
    /// The source scene's up axis ([`UpAxis::code`]).
    pub up: u8,
    /// Voxel size the mesh was baked at (world units).
    pub cell_size: f32,
    pub cell_height: f32,
    /// The agent it was baked for (world units).
    pub agent_height: f32,
    pub agent_radius: f32,
    pub agent_climb: f32,
}

/// A convex polygon.
#[repr(C)]
#[derive(
    Archive,
    Serialize,
    Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    bytemuck::Pod,
    bytemuck::Zeroable,
)]
pub struct Poly {
    /// Its vertices: `poly_verts[first .. first + count]`; edge `i` runs from vertex `i` to
    /// vertex `i + 1`, and `poly_neis[first + i]` names the polygon across it.
    pub first: u32,
    pub count: u32,
    /// Its detail triangles: `detail_tris[tri_first .. tri_first + tri_count]`.
    pub tri_first: u32,
    pub tri_count: u32,
    /// Its links: `links[link_first .. link_first + link_count]`.
    pub link_first: u32,
    pub link_count: u32,
    /// The merged region it belongs to (dense index).
    pub region: u32,
    /// Plan area (world units squared).
    pub area: f32,
    /// Its connected component (over portals and links, either way): an index into
    /// [`NavMesh::components`]. Two polygons of different components have no path between
    /// them. Components are numbered by their first polygon.
    pub component: u32,
    /// Its area (what it is: road, grass...): an index into [`NavMesh::areas`].
    pub area_id: u32,
}

/// A connected component of the mesh: polygons joined by portals and links.
#[derive(Archive, Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Component {
    pub polygons: u64,
    /// Plan area (world units squared).
    pub area: f64,
}

/// A connection between two polygons that share no edge, stored once per direction: a stair
/// step up to the climb height, found by the bake, or an off-mesh link the bake was given (a
/// jump, a ladder).
#[derive(Archive, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct Link {
    pub from: u32,
    pub to: u32,
    /// A stair link: `a`..`b` is the crossing segment on the `from` side (the landing is the
    /// reverse link's segment). An off-mesh link: `a` is its take-off point on `from` and `b`
    /// its landing point on `to`.
    pub a: [f32; 3],
    pub b: [f32; 3],
    /// [`NONE`]: a stair link. Otherwise the off-mesh link's entry in [`NavMesh::off_mesh`].
    pub off_mesh: u32,
    /// Added to the plan length of the step across (world units; 0 for a stair link).
    pub cost: f32,
}

impl Link {
    /// A stair link over the crossing segment `a`..`b` on the `from` side.
    pub fn stair(from: u32, to: u32, a: [f32; 3], b: [f32; 3]) -> Link {
        Link {
            from,
            to,
            a,
            b,
            off_mesh: NONE,
            cost: 0.0,
        }
    }
}

/// An off-mesh link as the bake was given it, its ends snapped onto the mesh (internal
/// frame). Its [`Link`]s (one, or one each way) name it by index.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct OffMeshLink {
    pub name: String,
    pub from: [f32; 3],
    pub to: [f32; 3],
    /// Added to the plan length of the step across (world units).
    pub cost: f32,
    pub bidirectional: bool,
}

/// An area of the mesh ([`Poly::area_id`]): `default` (index 0) or one of the bake's
/// `[[areas]]`, in the config's order.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Area {
    pub name: String,
    /// Multiplies the length of a path through its polygons (> 0).
    pub cost: f32,
    /// False for an area agents do not stand on: it has no polygons.
    pub walkable: bool,
}

impl Area {
    /// The area of every polygon no `[[areas]]` rule claimed: walkable, cost 1.
    pub fn default_area() -> Area {
        Area {
            name: "default".to_string(),
            cost: 1.0,
            walkable: true,
        }
    }
}

/// The most areas a mesh has (`default` and 63 rules).
pub const MAX_AREAS: usize = 64;

/// A uniform grid over the plan: `items[start[c] .. start[c + 1]]` are the polygons whose plan
/// bounding box meets cell `c = y * width + x`.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Grid {
    pub min: [f32; 2],
    pub cell: f32,
    pub width: u32,
    pub height: u32,
    pub start: Vec<u32>,
    pub items: Vec<u32>,
}

/// Counts a bake reports and `tessera info` prints.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub regions: u32,
    /// Reflex vertices of the region outlines (what a convex partition must resolve).
    pub notches: u64,
    /// Regions, their polygons and their notches by how many notches a region has.
    pub by_notches: NotchGroups,
    pub portals: u32,
    pub links: u32,
    pub walkable_area: f64,
    /// Polygons dropped, the islands (connected components) they formed and their plan area
    /// [m²]: unreachable from the bake's seed points or, without seeds, components smaller
    /// than its minimum island area.
    pub polygons_removed: u64,
    pub islands_removed: u64,
    pub area_removed: f64,
}

/// The whole navigation mesh.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct NavMesh {
    pub frame: Frame,
    /// Internal-frame bounds of the vertices.
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    pub verts: Vec<[f32; 3]>,
    pub polys: Vec<Poly>,
    pub poly_verts: Vec<u32>,
    pub poly_neis: Vec<u32>,
    /// Detail triangles: corners are indices into `verts`, or, with the [`DETAIL`] bit, into
    /// `detail_verts`.
    pub detail_tris: Vec<[u32; 3]>,
    /// Points added for height detail (seed 004), internal frame.
    pub detail_verts: Vec<[f32; 3]>,
    pub links: Vec<Link>,
    /// The off-mesh links the bake was given, in the order given ([`Link::off_mesh`]).
    pub off_mesh: Vec<OffMeshLink>,
    /// The areas ([`Poly::area_id`]): at least `default`, at most [`MAX_AREAS`].
    pub areas: Vec<Area>,
    pub grid: Grid,
    /// The connected components, numbered by their first polygon ([`Poly::component`]).
    pub components: Vec<Component>,
    /// The hierarchical graph over the polygons (clusters, entrances, costs between them):
    /// what hierarchical path queries plan on before they search inside a few clusters.
    pub hierarchy: Hierarchy,
    pub stats: Stats,
}

/// The hierarchical navigation graph (seed 003, 4.4): the polygons grouped into clusters,
/// places where a path passes from one cluster into the next (entrances, one on each side),
/// and the length of the shortest way inside each cluster between any two of its entrances.
///
/// A query plans on this graph first (which clusters to cross), then searches the polygons
/// of those clusters alone. Empty (no clusters) in a mesh with no polygons; a reader that
/// finds it empty searches the whole mesh.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Hierarchy {
    /// Per polygon: its cluster, an index into `clusters`. Clusters are numbered by their
    /// first polygon.
    pub poly_cluster: Vec<u32>,
    pub clusters: Vec<Cluster>,
    /// Cluster by cluster, each cluster's entrances in turn ([`Cluster::entrance_first`]).
    pub entrances: Vec<Entrance>,
    /// Cluster by cluster, `n * n` lengths for a cluster of `n` entrances, row by row: entry
    /// `i * n + j` is the plan length of the shortest way from its entrance `i` to its
    /// entrance `j` over the cluster's own polygons and links (`INFINITY`: none).
    pub costs: Vec<f32>,
}

/// A cluster of the [`Hierarchy`]: polygons joined by portals and links inside a square of
/// the plan, a few hundred at most unless the square is the smallest allowed.
#[repr(C)]
#[derive(
    Archive, Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable,
)]
pub struct Cluster {
    /// Its entrances: `entrances[entrance_first .. entrance_first + entrance_count]`.
    pub entrance_first: u32,
    pub entrance_count: u32,
    /// Its table of lengths: `costs[cost_first .. cost_first + entrance_count²]`.
    pub cost_first: u32,
    /// Its polygons.
    pub polygons: u32,
}

/// A place where a path leaves one cluster for another: a point on a portal between the two
/// (an entrance on each side, at the same point, each the other's `across`), or a link's
/// segment (the entrance on the far side is the landing, and is nobody's way back).
#[repr(C)]
#[derive(Archive, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct Entrance {
    /// Internal frame, on `poly`'s boundary or inside it.
    pub point: [f32; 3],
    /// The polygon it lies on, in `cluster`.
    pub poly: u32,
    pub cluster: u32,
    /// The entrance in the other cluster this one leads to ([`NONE`]: none, a link's landing).
    pub across: u32,
    /// The plan length of the step to `across` (0 over a portal).
    pub cost: f32,
}

impl Frame {
    pub fn up_axis(&self) -> UpAxis {
        UpAxis::from_code(self.up).unwrap_or(UpAxis::Z)
    }

    /// A scene point (its own coordinates and up axis) in the internal frame.
    pub fn to_internal(&self, p: [f64; 3]) -> [f32; 3] {
        let z = self.up_axis().to_z_up(p);
        [
            (z[0] - self.origin[0]) as f32,
            (z[1] - self.origin[1]) as f32,
            (z[2] - self.origin[2]) as f32,
        ]
    }

    /// An internal point in the scene's coordinates and up axis.
    pub fn to_scene(&self, p: [f32; 3]) -> [f64; 3] {
        self.up_axis().from_z_up([
            p[0] as f64 + self.origin[0],
            p[1] as f64 + self.origin[1],
            p[2] as f64 + self.origin[2],
        ])
    }
}

impl ArchivedFrame {
    /// The native [`Frame`] (a handful of numbers).
    pub fn native(&self) -> Frame {
        Frame {
            origin: self.origin.map(|v| v.to_native()),
            up: self.up,
            cell_size: self.cell_size.to_native(),
            cell_height: self.cell_height.to_native(),
            agent_height: self.agent_height.to_native(),
            agent_radius: self.agent_radius.to_native(),
            agent_climb: self.agent_climb.to_native(),
        }
    }
}

impl ArchivedCluster {
    /// Its entrances' global indices.
    pub fn entrance_range(&self) -> std::ops::Range<usize> {
        let first = self.entrance_first.to_native() as usize;
        first..first + self.entrance_count.to_native() as usize
    }
}

impl ArchivedHierarchy {
    /// Whether there is no hierarchy to plan on (readers then search the whole mesh).
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }

    /// The cluster of polygon `p`.
    #[inline]
    pub fn cluster_of(&self, p: u32) -> u32 {
        self.poly_cluster[p as usize].to_native()
    }

    /// The entrances of cluster `c`: global indices `first .. first + count`.
    #[inline]
    pub fn entrance_range(&self, c: u32) -> std::ops::Range<u32> {
        let r = self.clusters[c as usize].entrance_range();
        r.start as u32..r.end as u32
    }

    /// Entrance `e`, native.
    #[inline]
    pub fn entrance(&self, e: u32) -> Entrance {
        let x = &self.entrances[e as usize];
        Entrance {
            point: x.point.map(|v| v.to_native()),
            poly: x.poly.to_native(),
            cluster: x.cluster.to_native(),
            across: x.across.to_native(),
            cost: x.cost.to_native(),
        }
    }

    /// The row of lengths from the `i`-th entrance of cluster `c` to each of its entrances.
    #[inline]
    pub fn cost_row(&self, c: u32, i: u32) -> &[rkyv::Archived<f32>] {
        let cl = &self.clusters[c as usize];
        let n = cl.entrance_count.to_native() as usize;
        let at = cl.cost_first.to_native() as usize + i as usize * n;
        &self.costs[at..at + n]
    }
}

impl ArchivedNavMesh {
    /// Vertex `i` (internal frame).
    #[inline]
    pub fn vert(&self, i: u32) -> [f32; 3] {
        self.verts[i as usize].map(|c| c.to_native())
    }

    /// A detail triangle's corner: a polygon vertex, or with the [`DETAIL`] bit a detail
    /// vertex.
    #[inline]
    pub fn detail_corner(&self, i: u32) -> [f32; 3] {
        if i & DETAIL != 0 {
            self.detail_verts[(i & !DETAIL) as usize].map(|c| c.to_native())
        } else {
            self.vert(i)
        }
    }

    /// The vertex indices of polygon `p`.
    #[inline]
    pub fn poly_vert_ids(&self, p: u32) -> impl Iterator<Item = u32> + '_ {
        let poly = &self.polys[p as usize];
        let first = poly.first.to_native() as usize;
        self.poly_verts[first..first + poly.count.to_native() as usize]
            .iter()
            .map(|v| v.to_native())
    }

    /// The neighbours across polygon `p`'s edges (`NONE` where there is none).
    #[inline]
    pub fn poly_neighbours(&self, p: u32) -> impl Iterator<Item = u32> + '_ {
        let poly = &self.polys[p as usize];
        let first = poly.first.to_native() as usize;
        self.poly_neis[first..first + poly.count.to_native() as usize]
            .iter()
            .map(|v| v.to_native())
    }

    /// The links leaving polygon `p`.
    pub fn poly_links(&self, p: u32) -> &[ArchivedLink] {
        let poly = &self.polys[p as usize];
        let first = poly.link_first.to_native() as usize;
        &self.links[first..first + poly.link_count.to_native() as usize]
    }

    /// Polygon `p`'s detail triangles, as vertex positions.
    pub fn poly_triangles(&self, p: u32) -> impl Iterator<Item = [[f32; 3]; 3]> + '_ {
        let poly = &self.polys[p as usize];
        let first = poly.tri_first.to_native() as usize;
        (first..first + poly.tri_count.to_native() as usize).map(|t| self.detail_triangle(t))
    }

    /// Detail triangle `t` of the whole table, its corners resolved ([`Self::detail_corner`]).
    #[inline]
    pub fn detail_triangle(&self, t: usize) -> [[f32; 3]; 3] {
        self.detail_tris[t].map(|v| self.detail_corner(v.to_native()))
    }

    /// The grid cells `(x0, y0, x1, y1)` (inclusive) that cover the plan box `min..max`,
    /// clamped to the grid.
    pub fn grid_cells(&self, min: [f32; 2], max: [f32; 2]) -> (u32, u32, u32, u32) {
        let g = &self.grid;
        let cell = g.cell.to_native();
        let (gx, gy) = (g.min[0].to_native(), g.min[1].to_native());
        let (w, h) = (g.width.to_native() as i64, g.height.to_native() as i64);
        let clamp = |v: f32, n: i64| ((v.floor() as i64).clamp(0, n - 1)) as u32;
        (
            clamp((min[0] - gx) / cell, w),
            clamp((min[1] - gy) / cell, h),
            clamp((max[0] - gx) / cell, w),
            clamp((max[1] - gy) / cell, h),
        )
    }

    /// The polygons listed in grid cell `(x, y)`.
    pub fn grid_items(&self, x: u32, y: u32) -> impl Iterator<Item = u32> + '_ {
        let g = &self.grid;
        let c = (y * g.width.to_native() + x) as usize;
        let (s, e) = (
            g.start[c].to_native() as usize,
            g.start[c + 1].to_native() as usize,
        );
        g.items[s..e].iter().map(|v| v.to_native())
    }
}

#[cfg(test)]
mod tests;
