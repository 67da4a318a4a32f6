//! What a bake did: [`BakeSummary`], written last as `summary.json`, assembled from what
//! each stage returned.

use serde::Serialize;
use std::collections::BTreeMap;
use tessera_artifacts::GridFrame;
use tessera_budget::MemoryBudget;

use crate::bin::Binned;
use crate::ingest::Ingested;
use crate::polygons::Polygons;
use crate::voxelize::Voxelized;
#[cfg(doc)]
use crate::STAGES;

/// One group of [`BakeSummary::by_notches`]: regions with `min_notches ..= max_notches`
/// notches (no upper end: `null`), their polygons and notches.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NotchGroup {
    pub min_notches: u64,
    pub max_notches: Option<u64>,
    pub regions: u64,
    pub polygons: u64,
    pub notches: u64,
}

impl NotchGroup {
    /// The groups of `groups`, in order.
    pub fn list(groups: &tessera_artifacts::NotchGroups) -> Vec<NotchGroup> {
        tessera_navmesh::NOTCH_GROUPS
            .iter()
            .enumerate()
            .map(|(g, &(first, last))| NotchGroup {
                min_notches: first,
                max_notches: (last != u64::MAX).then_some(last),
                regions: groups.regions[g],
                polygons: groups.polygons[g],
                notches: groups.notches[g],
            })
            .collect()
    }
}

/// One file of the scene in [`BakeSummary::scene_files`].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SceneFile {
    pub path: String,
    pub triangles: u64,
    /// Its scene cache was made by an earlier bake and reused (the file was not read again).
    pub cache_reused: bool,
}

/// One agent of a bake for several, in [`BakeSummary::agents`]: its settings, its navmesh file
/// and the figures of the stages it ran alone (from voxelize on): the [`BakeSummary`] fields
/// named in [`AGENT_FIELDS`], `stages_reused` and `seconds` kept to those stages.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AgentSummary {
    pub name: String,
    /// Its navmesh's file name in the bake folder.
    pub navmesh: String,
    pub agent: tessera_config::AgentSettings,
    #[serde(flatten)]
    pub figures: serde_json::Map<String, serde_json::Value>,
}

/// The fields of a [`BakeSummary`] that each agent of a bake for several has of its own.
pub const AGENT_FIELDS: [&str; 26] = [
    "stages_reused",
    "resumed_tiles",
    "tiles_reused",
    "tiles_rebaked",
    "tiles_remerged",
    "tiles_raster_shared",
    "regions_rebaked",
    "regions_reused",
    "clusters_reused",
    "walkable_spans",
    "regions",
    "walkable_area_m2",
    "contours",
    "contour_vertices",
    "polygons",
    "polygon_vertices",
    "detail_vertices",
    "portals",
    "links",
    "notches",
    "navmesh_area_m2",
    "navmesh_bytes",
    "unreachable_polygons_removed",
    "unreachable_islands_removed",
    "unreachable_area_removed_m2",
    "seconds",
];

impl AgentSummary {
    /// Agent `name`'s section, from the summary of its bake.
    pub(crate) fn of(
        name: &str,
        navmesh: &str,
        agent: &tessera_config::AgentSettings,
        s: &BakeSummary,
    ) -> AgentSummary {
        let serde_json::Value::Object(mut all) = serde_json::to_value(s).expect("serializes")
        else {
            unreachable!("a summary is an object")
        };
        let mut figures: serde_json::Map<_, _> = AGENT_FIELDS
            .iter()
            .filter_map(|k| all.remove(*k).map(|v| (k.to_string(), v)))
            .collect();
        let own = |stage: &str| !SHARED_STAGES.contains(&stage) && stage != "total";
        if let Some(serde_json::Value::Array(stages)) = figures.get_mut("stages_reused") {
            stages.retain(|stage| stage.as_str().is_some_and(own));
        }
        if let Some(serde_json::Value::Object(seconds)) = figures.get_mut("seconds") {
            seconds.retain(|stage, _| own(stage));
        }
        AgentSummary {
            name: name.to_string(),
            navmesh: navmesh.to_string(),
            agent: agent.clone(),
            figures,
        }
    }

    /// A number of [`AgentSummary::figures`] (0 when absent).
    pub fn figure(&self, field: &str) -> f64 {
        self.figures
            .get(field)
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    }

    /// The seconds of one of its stages (0 when absent).
    pub fn seconds(&self, stage: &str) -> f64 {
        self.figures
            .get("seconds")
            .and_then(|s| s.get(stage))
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The stages a bake for several agents runs once for all of them.
const SHARED_STAGES: [&str; 2] = ["ingest", "bin"];

/// What a bake did, written as `summary.json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BakeSummary {
    pub scene: String,
    pub up: String,
    pub triangles: u64,
    pub degenerate_triangles: u64,
    pub scene_cache_reused: bool,
    /// The scene's files in order (one for a single file or the built-in world), each with
    /// whether its cache was reused.
    pub scene_files: Vec<SceneFile>,
    pub tiles: u64,
    pub tiles_with_geometry: u64,
    pub tile_size: u32,
    pub cells: [u32; 2],
    /// Triangle copies written to tiles (a triangle overlapping k tiles counts k times; 0 when
    /// the tile pack was reused).
    pub triangle_placements: u64,
    /// Stages whose checkpoint was valid for this input and config and was reused whole.
    pub stages_reused: Vec<String>,
    /// Tiles whose voxelization was recovered from a checkpoint rather than recomputed.
    pub resumed_tiles: u64,
    /// Tiles whose triangles were the same as in the last finished bake in this folder (of a
    /// scene since changed): their voxelization was taken from it.
    pub tiles_reused: u64,
    /// Tiles voxelized by this run (neither resumed nor reused).
    pub tiles_rebaked: u64,
    /// Tiles whose batch of the merge this run made (not resumed): every tile in a whole
    /// merge; in an incremental rebake, the changed tiles and those holding a part of a region
    /// that reaches one (the others' batches are the last merge's).
    pub tiles_remerged: u64,
    /// A bake for several agents: tiles an agent voxelized from the rasterization the first
    /// agent of its group of four made for the group (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub tiles_raster_shared: u64,
    /// Regions polygonized by this run, and regions whose polygons it took from the last
    /// polygon stage in this folder (their contours, the simplification points restored on
    /// them and, with height detail, the tiles under them unchanged).
    pub regions_rebaked: u64,
    pub regions_reused: u64,
    /// Clusters of the navmesh's hierarchy whose table of lengths this run took from the last
    /// navmesh in this folder (the cluster's polygons and entrances unchanged).
    pub clusters_reused: u64,
    pub spans: u64,
    pub walkable_spans: u64,
    /// Merged regions (flat: 8-connected spans of one floor height), across tile borders.
    pub regions: u64,
    /// Walkable area: cells in regions times the cell area [m^2].
    pub walkable_area_m2: f64,
    /// Contours (outer and holes) of the merged regions.
    pub contours: u64,
    /// Corner points on those contours, after the merge.
    pub contour_vertices: u64,
    /// Vertices that existed only because of the tiling (straight through a tile border),
    /// removed by the merge.
    pub third_class_removed: u64,
    /// Convex polygons in the navmesh, their distinct vertices, the edges two of them share
    /// (portals), links between polygons that share no edge, and the reflex vertices of the
    /// simplified region outlines (cells per notch = polygons / notches).
    pub polygons: u64,
    pub polygon_vertices: u64,
    /// Points added for height detail (seed 004).
    pub detail_vertices: u64,
    pub portals: u64,
    pub links: u64,
    pub notches: u64,
    /// Regions, their polygons and their notches (as partitioned, before islands or
    /// unreachable polygons are dropped), grouped by the notches a region has
    /// (seed 002's measure per group; its floor plans have 15 to 106 notches).
    pub by_notches: Vec<NotchGroup>,
    /// Plan area of the polygons [m^2] (differs from `walkable_area_m2` by simplification).
    pub navmesh_area_m2: f64,
    /// Size of `navmesh.tsn`.
    pub navmesh_bytes: u64,
    /// Polygons dropped, the islands (connected parts) they formed and their plan area [m^2]:
    /// with `polygons.reachable_from` seeds, what no seed reaches; without, the parts smaller
    /// than `polygons.min_island_area`.
    pub unreachable_polygons_removed: u64,
    pub unreachable_islands_removed: u64,
    pub unreachable_area_removed_m2: f64,
    /// Largest merge frontier of this run: links waiting for a tile not yet seen (an
    /// incremental rebake merges only the regions a change reaches: its frontier is theirs).
    pub merge_frontier_links: u64,
    /// Largest memory the merge frontier held (waiting links, open regions, open contour
    /// chains), estimated [bytes]. Outside the budget's reservations.
    pub merge_frontier_bytes: u64,
    pub peak_rss_bytes: u64,
    pub peak_anon_bytes: u64,
    /// Peak bytes reserved from the budget by the stages (the worker threads' overhead,
    /// `THREAD_OVERHEAD` and their allocator arena's cache each, comes off the top of the
    /// budget first).
    pub peak_reserved_bytes: u64,
    pub threads: usize,
    pub memory_budget_bytes: u64,
    /// Bytes the bake folder holds.
    pub disk_bytes: u64,
    /// Seconds per stage ([`STAGES`]) and `total`. The merge runs beside voxelization, in its
    /// writer: `merge` is the writer's time in it and `voxelize` the rest of that time, so the
    /// stages add up to the total less the set-up between them. With several agents, each
    /// stage's seconds are its runs' for all of them.
    pub seconds: BTreeMap<String, f64>,
    /// A bake for several agents (`[[agents]]`): one section each, in order. The fields above
    /// from `stages_reused` to `unreachable_area_removed_m2` are then the first agent's (its
    /// navmesh is also `navmesh.tsn`), and the merge frontier the largest of any. Absent for
    /// one agent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentSummary>,
}

/// What the summary is made from: each stage's result and what the bake measured.
pub(crate) struct Parts<'a> {
    /// The bake's whole budget (the stages' `budget` is what the threads left of it).
    pub memory_budget: u64,
    pub ingested: &'a Ingested,
    pub frame: &'a GridFrame,
    pub binned: &'a Binned,
    pub voxelized: &'a Voxelized,
    pub polygons: &'a Polygons,
    pub threads: usize,
    pub budget: &'a MemoryBudget,
    /// (peak anonymous, peak resident) [bytes].
    pub peaks: (u64, u64),
    pub disk_bytes: u64,
    pub total_seconds: f64,
}

impl BakeSummary {
    pub(crate) fn assemble(p: Parts) -> BakeSummary {
        let (ingest, frame, bin, vox, poly) =
            (p.ingested, p.frame, p.binned, p.voxelized, p.polygons);
        let merged = &vox.merged;
        let stages_reused = [
            ("ingest", ingest.stats.reused),
            ("bin", bin.reused),
            ("voxelize", vox.reused),
            ("polygons", poly.reused),
        ]
        .iter()
        .filter(|(_, reused)| *reused)
        .map(|(name, _)| name.to_string())
        .collect();
        let seconds = [
            ("ingest", ingest.seconds),
            ("bin", bin.seconds),
            ("voxelize", vox.seconds),
            ("merge", merged.seconds),
            ("polygons", poly.seconds),
            ("total", p.total_seconds),
        ]
        .iter()
        .map(|&(k, v)| (k.to_string(), v))
        .collect();
        BakeSummary {
            scene: ingest.name.clone(),
            up: ingest.up.to_string(),
            triangles: ingest.stats.triangles,
            degenerate_triangles: ingest.stats.degenerate,
            scene_cache_reused: ingest.stats.reused,
            scene_files: match ingest.scene.is_split() {
                // One file, whose cache is in parts.
                true => vec![SceneFile {
                    path: ingest.name.clone(),
                    triangles: ingest.stats.triangles,
                    cache_reused: ingest.stats.reused,
                }],
                false => ingest
                    .scene
                    .parts()
                    .iter()
                    .map(|part| SceneFile {
                        path: part.name.clone(),
                        triangles: part.cache.info().triangles,
                        cache_reused: part.reused,
                    })
                    .collect(),
            },
            tiles: frame.tile_count() as u64,
            tiles_with_geometry: vox.tiles_with_geometry,
            tile_size: frame.tile_size,
            cells: frame.cells,
            triangle_placements: bin.placements,
            stages_reused,
            resumed_tiles: vox.resumed_tiles,
            tiles_reused: vox.reused_tiles,
            tiles_rebaked: vox.tiles_with_geometry - vox.resumed_tiles - vox.reused_tiles,
            tiles_remerged: merged.remerged,
            tiles_raster_shared: vox.raster_shared,
            regions_rebaked: poly.regions_rebaked,
            regions_reused: poly.regions_reused,
            clusters_reused: poly.clusters_reused,
            spans: vox.spans,
            walkable_spans: vox.walkable_spans,
            regions: merged.regions,
            // Grid to world, for the reader: cells times the cell area.
            walkable_area_m2: merged.region_spans as f64 * frame.cell_size * frame.cell_size,
            contours: merged.contours,
            contour_vertices: merged.contour_vertices,
            third_class_removed: merged.third_class_removed,
            polygons: poly.polygons,
            polygon_vertices: poly.vertices,
            detail_vertices: poly.detail_vertices,
            portals: poly.portals,
            links: poly.links,
            notches: poly.notches,
            by_notches: NotchGroup::list(&poly.by_notches),
            navmesh_area_m2: poly.area,
            navmesh_bytes: poly.bytes,
            unreachable_polygons_removed: poly.polygons_removed,
            unreachable_islands_removed: poly.islands_removed,
            unreachable_area_removed_m2: poly.area_removed,
            merge_frontier_links: merged.frontier_links,
            merge_frontier_bytes: merged.frontier_bytes,
            peak_rss_bytes: p.peaks.1,
            peak_anon_bytes: p.peaks.0,
            peak_reserved_bytes: p.budget.peak_reserved(),
            threads: p.threads,
            memory_budget_bytes: p.memory_budget,
            disk_bytes: p.disk_bytes,
            seconds,
            agents: Vec::new(),
        }
    }

    /// The summary of a bake for several agents, from each agent's (`(name, settings, navmesh
    /// file name, summary)`, in order, as [`BakeSummary::assemble`] made them): the first's,
    /// each stage's seconds summed, the largest frontier, and a section per agent.
    pub(crate) fn of_agents(
        agents: Vec<(String, tessera_config::AgentSettings, String, BakeSummary)>,
    ) -> BakeSummary {
        let mut summary = agents[0].3.clone();
        for (_, _, _, s) in &agents[1..] {
            for (stage, seconds) in &s.seconds {
                if !SHARED_STAGES.contains(&stage.as_str()) && stage != "total" {
                    *summary.seconds.entry(stage.clone()).or_default() += seconds;
                }
            }
            summary.merge_frontier_links = summary.merge_frontier_links.max(s.merge_frontier_links);
            summary.merge_frontier_bytes = summary.merge_frontier_bytes.max(s.merge_frontier_bytes);
        }
        summary.agents = agents
            .iter()
            .map(|(name, agent, file, s)| AgentSummary::of(name, file, agent, s))
            .collect();
        summary
    }
}
