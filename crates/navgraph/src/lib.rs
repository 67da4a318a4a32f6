//! The navmesh builder: polygons of the polygons stage in, the navmesh file out, with memory
//! that does not grow with the world.
//!
//! [`Assembler`] takes one region's polygons at a time ([`tessera_artifacts::InputPoly`], on
//! the voxel grid) and spills them; [`Assembler::finish`] then runs the passes, each in its own
//! module:
//!
//! 1. `links`: stair links between facing blocked edges of different regions (seed 000,
//!    5.2.2), found by an out-of-core sweep, with the links the caller gave and the
//!    off-mesh links, whose ends `offmesh` snapped to polygons as regions were added;
//! 2. `border`: portals across region borders, matched from an external sort of the border
//!    edges;
//! 3. `reach`: with seed points, what an agent on a seed can reach (seed 001); the rest is
//!    dropped;
//! 4. `renumber`: the kept arrays, renumbered densely, in world units;
//! 5. `grid`: the lookup grid, by sorting (cell, polygon) pairs;
//! 6. `hierarchy`: the hierarchical graph (clusters of polygons in squares of a quadtree,
//!    entrances between them, the shortest lengths inside each cluster between its
//!    entrances, measured with the query crate's search);
//! 7. `writer`: the rkyv archive streamed from the spill files, byte for byte the archive of
//!    the same [`tessera_navmesh::NavMesh`], behind its sealed header.
//!
//! [`build`] and [`build_pruned`] do the same for a whole [`tessera_artifacts::MeshInput`]
//! in memory (tests and small tools).
//!
//! The file format, and everything that reads it, is the crate `tessera-navmesh`, which must
//! never depend on this one. This crate depends on no stage crate: only on the format, the
//! stage-boundary types (`tessera-artifacts`) and the spill machinery (`tessera-spill`).

mod assemble;
mod border;
mod build;
mod grid;
mod hierarchy;
mod links;
mod offmesh;
mod reach;
mod renumber;
mod writer;

use std::io;
use std::path::PathBuf;

use tessera_navmesh::NavMeshError;

pub use assemble::{
    check_merged_regions, Assembled, Assembler, Report, Step, REPORT_EVERY, REPORT_EVERY_RECORD,
};
pub use build::{build, build_linked, build_pruned, Pruned};
pub use hierarchy::{hierarchy_of, ClusterSettings, KeptLengths};
pub use offmesh::{LinkEnd, LinkSpec};
pub use reach::Pruning;

/// Why a navmesh could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A polygon given to the builder breaks its contract (index of the polygon in the input).
    #[error("polygon {poly}: {detail}")]
    Poly { poly: usize, detail: &'static str },
    #[error("link {link}: polygon out of range")]
    Link { link: usize },
    /// An end of the caller's off-mesh link `link` (its index) lies farther than the link's
    /// radius from every polygon.
    #[error("off-mesh link {link}: its `{end}` end is farther than its radius from every walkable polygon")]
    OffMeshEnd { link: usize, end: LinkEnd },
    #[error("navmesh scratch folder {dir}: {source}")]
    ScratchDir { dir: PathBuf, source: io::Error },
    /// Reading or writing a scratch file (the error names it) or the output.
    #[error("writing the navmesh: {source}")]
    Io {
        #[from]
        source: io::Error,
    },
    /// The world outgrows a table of the navmesh format (its 32-bit indices), found where
    /// it would cross the limit (`at`), before anything past it is written.
    #[error(
        "the navmesh would hold more than {limit} {what}, the file format's limit (reached at \
         {at}); larger cells, or for detail a larger sample distance, make fewer"
    )]
    Limit {
        what: &'static str,
        limit: u64,
        at: String,
    },
    /// The caller's report asked to stop (an interrupted bake): the output is unfinished.
    #[error("stopped before the navmesh was finished")]
    Stopped,
    /// A mesh built in memory did not read back (a builder bug).
    #[error("reading back the navmesh built in memory: {0}")]
    ReadBack(#[from] NavMeshError),
}

#[cfg(test)]
mod tests;
