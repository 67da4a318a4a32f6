//! Markdown output of the region and contour comparison: timing, breakdown, counts, Recast
//! variants, and the stamped `RESULTS-regions.md`.

use crate::report::settings_line;
use crate::scene::Settings;
use crate::segment::{mode_name, RecastSettings, RegionsResult};

/// What Recast was asked to do, in one paragraph.
pub fn recast_line(r: &RecastSettings, band: u32) -> String {
    format!(
        "Recast: watershed partition (`rcBuildDistanceField` + `rcBuildRegions`) with \
         borderSize = the band = {band} cells, minRegionArea {} and mergeRegionArea {} cells \
         (RecastDemo's region sizes 8 and 20, squared into areas as RecastDemo does); \
         `rcBuildContours` with maxError {}, maxEdgeLen {} and the flag \
         RC_CONTOUR_TESS_WALL_EDGES (Recast's default, inert without an edge length limit).",
        r.min_region_area, r.merge_region_area, r.max_error, r.max_edge_len
    )
}

pub fn table_header() -> String {
    "| scene | tiles | tessera regions | tessera segment + trace s | tessera merge s | Recast \
     distance field + regions s | Recast contours s | per tile: tessera / Recast | with merge: \
     tessera / Recast | tessera tiles/s | Recast tiles/s |\n\
     |---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"
        .to_string()
}

/// One row per tessera mode; Recast's columns are the same run on every row of a scene.
pub fn table_rows(r: &RegionsResult) -> String {
    let recast = r.recast.total().as_secs_f64();
    let rows: Vec<String> = r
        .tessera
        .iter()
        .map(|side| {
            let per_tile = side.times.per_tile().as_secs_f64();
            let all = side.times.total().as_secs_f64();
            format!(
                "| {} | {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.2} | {:.2} | {:.0} | {:.0} |",
                r.name,
                r.tiles,
                mode_name(side.mode),
                per_tile,
                side.times.merge.as_secs_f64(),
                r.recast.regions_total().as_secs_f64(),
                r.recast.contours.as_secs_f64(),
                per_tile / recast,
                all / recast,
                r.tiles as f64 / all,
                r.tiles as f64 / recast,
            )
        })
        .collect();
    rows.join("\n")
}

/// Seconds per step, each the best over the repeats.
pub fn breakdown_table(results: &[RegionsResult]) -> String {
    let mut s = String::from(
        "Steps (seconds summed over tiles, best per step):\n\n\
         | scene | tessera regions | tessera segment | tessera trace | tessera merge | Recast \
         distance field | Recast regions | Recast contours |\n|---|---|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in results {
        for side in &r.tessera {
            s += &format!(
                "| {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} |\n",
                r.name,
                mode_name(side.mode),
                side.times.segment.as_secs_f64(),
                side.times.trace.as_secs_f64(),
                side.times.merge.as_secs_f64(),
                r.recast.distance_field.as_secs_f64(),
                r.recast.regions.as_secs_f64(),
                r.recast.contours.as_secs_f64(),
            );
        }
    }
    s.pop();
    s
}

pub fn tessera_counts_table(results: &[RegionsResult]) -> String {
    let mut s = String::from(
        "tessera's counts (tiles' cores):\n\n\
         | scene | regions | level step (voxels) | walkable spans | regions per tile (sum) | \
         regions merged | contours | contour vertices | third-class vertices removed |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in results {
        for side in &r.tessera {
            let t = &side.counts;
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                r.name,
                mode_name(side.mode),
                side.step,
                t.walkable,
                t.tile_regions,
                t.merged_regions,
                t.contours,
                t.vertices,
                t.third_class_removed,
            );
        }
    }
    s.pop();
    s
}

pub fn recast_counts_table(results: &[RegionsResult]) -> String {
    let mut s = String::from(
        "Recast's counts (tiles' cores, summed over tiles):\n\n\
         | scene | walkable spans | regions | spans in regions | contours | vertices (maxError \
         0) | raw corners | raw vertices |\n|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in results {
        let c = &r.recast_counts;
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.name,
            c.walkable,
            c.regions,
            c.region_spans,
            c.contours.contours,
            c.contours.vertices,
            c.contours.raw_corners,
            c.contours.raw_vertices,
        );
    }
    s.pop();
    s
}

pub fn variants_table(results: &[RegionsResult]) -> String {
    let mut s = String::from(
        "Recast with other settings (same compact heightfields, timed right after the main \
         run; a regions variant reuses the distance field):\n\n\
         | scene | variant | regions s | contours s | regions | contours | vertices |\n\
         |---|---|--:|--:|--:|--:|--:|\n",
    );
    for r in results {
        for v in &r.variants {
            s += &format!(
                "| {} | {} | {} | {:.4} | {} | {} | {} |\n",
                r.name,
                v.label,
                v.regions
                    .map(|d| format!("{:.4}", d.as_secs_f64()))
                    .unwrap_or_else(|| "-".into()),
                v.contours.as_secs_f64(),
                v.region_count
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "-".into()),
                v.counts.contours,
                v.counts.vertices,
            );
        }
    }
    s.pop();
    s
}

/// The whole results file. `scene_notes` says where scenes beyond the demo meshes come from
/// (or why one asked for was not run); `stamp` is taken when the run started.
pub fn results_file(
    settings: &Settings,
    recast: &RecastSettings,
    band: u32,
    repeat: usize,
    results: &[RegionsResult],
    scene_notes: &[String],
    stamp: &str,
) -> String {
    let mut s = String::from(
        "# Regions and contours: tessera vs Recast, same tiles\n\n\
         Written by `cargo run --release --manifest-path benches/recast-compare/Cargo.toml -- all`; \
         see `benches/recast-compare/README.md` for what is timed and the caveats.\n\n",
    );
    s += &format!("Measured {stamp}.\n\n");
    s += &settings_line(settings, repeat);
    s += " Input of both sides: each tile's voxelization as in `RESULTS-voxelize.md`, rebuilt \
          untimed just before its later stages. tessera: `segment_tile` + `trace_tile` per \
          tile, then `RegionMerger::add_tile` and `ContourJoiner::add` for every chain, over \
          all tiles in tile order.\n\n";
    s += &recast_line(recast, band);
    s += "\n\n";
    s += &table_header();
    s.push('\n');
    for r in results {
        s += &table_rows(r);
        s.push('\n');
    }
    s += "\n\
        * Recast builds regions and contours per tile and has **no cross-tile merge**: its \
          regions and contours are summed over tiles, a region cut by a tile border counts \
          once per tile, and its contours run along the tile edges. tessera's merged counts \
          are those of the whole world.\n\
        * \"per tile\" compares tessera's segment + trace with Recast's three steps; \"with \
          merge\" adds tessera's merge, which Recast does not have. Tiles per second count \
          every stage of a side. Recast's columns are one run, repeated on both rows of a \
          scene.\n\
        * The sides do not cut the same regions. tessera groups 8-connected walkable spans by \
          level, `zmax / step`, with no minimum size: *layered* (tessera's default) takes the \
          climb plus one voxel as the step, *flat* (seed 000) one voxel, so a slope or a \
          staircase becomes one region per voxel step. Recast's watershed follows the \
          distance field across any step within the climb, and drops or merges small \
          regions.\n\
        * tessera's contours are unsimplified: every vertex is a corner of the region. \
          Recast's maxError 0 keeps every corner of a wall edge but only the end points of \
          an edge shared with another region, and merges holes into their outline (tessera \
          keeps them as separate clockwise contours). Recast's *raw corners* count the \
          corners of its unsimplified outlines, the figure closest to tessera's vertices.\n\
        * Both sides start from the same walkable spans (the walkable columns of the count \
          tables). tessera's *regions per tile (sum)* is what per-tile segmentation alone \
          gives, the figure to set beside Recast's sum over tiles; *merged* is after the \
          cross-tile merge.\n\n";
    for note in scene_notes {
        s += &format!("{note}\n\n");
    }
    s += &breakdown_table(results);
    s += "\n\n";
    s += &tessera_counts_table(results);
    s += "\n\n";
    s += &recast_counts_table(results);
    s += "\n\n";
    s += &variants_table(results);
    s.push('\n');
    s
}
