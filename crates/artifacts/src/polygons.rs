//! The output of polygonization: convex polygons on the voxel grid, region by region, and the
//! notch counts that measure how hard the regions were to partition. Produced by `polygons`,
//! assembled into the navmesh file by `navgraph`; the counts are recorded in the file
//! (`tessera-navmesh` archives [`NotchGroups`] in its statistics) and in the bake summary.

use rkyv::{Archive, Deserialize, Serialize};

/// Marks a detail triangle's corner as an index into the detail points (in [`MeshInput`],
/// `detail_verts`; in the navmesh file, its `detail_verts`) rather than into the polygon
/// vertices. The navmesh file uses the same bit, so the builder copies corners through.
pub const DETAIL: u32 = 1 << 31;

/// Polygons on the voxel grid, as the polygonizer makes them.
#[derive(Clone, Debug, Default)]
pub struct MeshInput {
    /// Vertices: `x`, `y` grid points (cell corners), `z` voxel heights.
    pub verts: Vec<[i32; 3]>,
    /// Points added for height detail: plan in cells, height in voxels (see [`DETAIL`]).
    pub detail_verts: Vec<[f32; 3]>,
    pub polys: Vec<InputPoly>,
    /// Links between polygons that share no edge, both directions, endpoints in grid units.
    pub links: Vec<(u32, u32, [i32; 3], [i32; 3])>,
    /// Regions (the polygons' `region` are below this).
    pub regions: u32,
    /// Reflex vertices of the region outlines, reported in the file's statistics.
    pub notches: u64,
    /// Regions, polygons and notches by notch count, reported in the file's statistics.
    pub by_notches: NotchGroups,
    /// Two edges that coincide in plan are a portal when their heights differ by at most this
    /// many voxels at both ends.
    pub climb: u32,
}

/// One convex polygon: vertex indices counter-clockwise seen from above, and its detail
/// triangles (counter-clockwise; corners are vertex indices, or detail points with the
/// [`DETAIL`] bit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputPoly {
    pub verts: Vec<u32>,
    pub region: u32,
    pub tris: Vec<[u32; 3]>,
    /// Per edge (`i` runs from vertex `i` to `i + 1`): true where no portal may be (a wall, a
    /// ledge). Empty means every edge may be a portal.
    pub blocked: Vec<bool>,
}

/// The notch counts [`NotchGroups`] groups regions by: `[first, last]` (inclusive). A region
/// without a notch is convex with no hole, one polygon whatever the partition; seed 002's
/// floor plans have 15 to 106 notches each, so the last group is the one to set against its
/// Table 1.
pub const NOTCH_GROUPS: [(u64, u64); 6] = [(0, 0), (1, 1), (2, 2), (3, 4), (5, 14), (15, u64::MAX)];

/// Regions, polygons and notches per group of [`NOTCH_GROUPS`] (polygons counted before
/// reachability pruning): cells per notch of a group = `polygons[g] / notches[g]`.
///
/// Archived (rkyv) inside the navmesh file's statistics: its layout is part of that format.
#[derive(Archive, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct NotchGroups {
    pub regions: [u64; NOTCH_GROUPS.len()],
    pub polygons: [u64; NOTCH_GROUPS.len()],
    pub notches: [u64; NOTCH_GROUPS.len()],
}

impl NotchGroups {
    /// The group of a region with `notches` notches.
    pub fn group(notches: u64) -> usize {
        NOTCH_GROUPS
            .iter()
            .position(|&(_, last)| notches <= last)
            .expect("the last group is open")
    }

    /// Counts one region.
    pub fn add(&mut self, notches: u64, polygons: u64) {
        let g = Self::group(notches);
        self.regions[g] += 1;
        self.polygons[g] += polygons;
        self.notches[g] += notches;
    }

    /// Adds another count to this one.
    pub fn merge(&mut self, other: &NotchGroups) {
        for (mine, theirs) in [
            (&mut self.regions, &other.regions),
            (&mut self.polygons, &other.polygons),
            (&mut self.notches, &other.notches),
        ] {
            mine.iter_mut().zip(theirs).for_each(|(a, b)| *a += b);
        }
    }
}

impl ArchivedNotchGroups {
    /// The counts, out of the archive.
    pub fn to_native(&self) -> NotchGroups {
        NotchGroups {
            regions: self.regions.map(|x| x.to_native()),
            polygons: self.polygons.map(|x| x.to_native()),
            notches: self.notches.map(|x| x.to_native()),
        }
    }
}
