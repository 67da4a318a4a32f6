//! The text the commands print beyond one line: the summary after a bake, the partition line
//! (also in `info`), and points in scene coordinates.

use std::io::{self, Write};
use std::path::Path;

use tessera_export::PlanView;
use tessera_pipeline::{BakeLayout, BakeSummary, NotchGroup};

/// A scene point as `(x, y, z)`, millimetres.
pub fn scene_point(p: [f64; 3]) -> String {
    format!("({:.3}, {:.3}, {:.3})", p[0], p[1], p[2])
}

/// Where a bake wrote its outputs, for the summary's last lines.
pub struct Outputs<'a> {
    pub dir: &'a Path,
    pub preview: &'a Path,
    pub preview_view: &'a PlanView,
    pub report: &'a Path,
}

/// Writes what a bake did to `w` (stdout).
pub fn print_bake(w: &mut dyn Write, summary: &BakeSummary, out: &Outputs) -> io::Result<()> {
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    writeln!(w, "baked {} into {}", summary.scene, out.dir.display())?;
    writeln!(
        w,
        "  triangles        {} ({} degenerate skipped{})",
        summary.triangles,
        summary.degenerate_triangles,
        if summary.scene_cache_reused {
            ", scene cache reused"
        } else {
            ""
        }
    )?;
    writeln!(
        w,
        "  tiles            {} ({} with geometry, {} cells each side, grid {} x {} cells)",
        summary.tiles,
        summary.tiles_with_geometry,
        summary.tile_size,
        summary.cells[0],
        summary.cells[1]
    )?;
    writeln!(
        w,
        "  spans            {} ({} walkable)",
        summary.spans, summary.walkable_spans
    )?;
    writeln!(
        w,
        "  regions          {} (walkable area {:.1} m^2), {} contours, {} contour vertices ({} tile-border vertices removed)",
        summary.regions,
        summary.walkable_area_m2,
        summary.contours,
        summary.contour_vertices,
        summary.third_class_removed
    )?;
    writeln!(
        w,
        "  navmesh          {} polygons, {} vertices (+{} for height detail), {} portals, {} links, {} notches, {:.1} m^2, {:.1} MiB",
        summary.polygons,
        summary.polygon_vertices,
        summary.detail_vertices,
        summary.portals,
        summary.links,
        summary.notches,
        summary.navmesh_area_m2,
        mib(summary.navmesh_bytes)
    )?;
    writeln!(
        w,
        "  partition        {}",
        partition_line(summary.polygons, summary.notches, &summary.by_notches)
    )?;
    if summary.unreachable_polygons_removed > 0 {
        writeln!(
            w,
            "  islands          {} removed: {} polygons, {:.1} m^2",
            summary.unreachable_islands_removed,
            summary.unreachable_polygons_removed,
            summary.unreachable_area_removed_m2
        )?;
    }
    if let Some(first) = summary.agents.first() {
        writeln!(
            w,
            "  agents           {}: the lines above are the first's, `{}` (navmesh.tsn)",
            summary.agents.len(),
            first.name
        )?;
        for a in &summary.agents {
            writeln!(
                w,
                "    {:<14} height {} m, radius {} m, climb {} m, slope {} deg: {} polygons, \
                 {:.1} m^2, {} islands removed, {:.2} s; {}",
                a.name,
                a.agent.height,
                a.agent.radius,
                a.agent.max_climb,
                a.agent.max_slope,
                a.figure("polygons"),
                a.figure("navmesh_area_m2"),
                a.figure("unreachable_islands_removed"),
                a.seconds("voxelize") + a.seconds("merge") + a.seconds("polygons"),
                out.dir.join(&a.navmesh).display()
            )?;
        }
    }
    writeln!(
        w,
        "  memory           peak rss {:.1} MiB, peak anon {:.1} MiB, budget {:.1} MiB, {} threads",
        mib(summary.peak_rss_bytes),
        mib(summary.peak_anon_bytes),
        mib(summary.memory_budget_bytes),
        summary.threads
    )?;
    writeln!(w, "  seconds          {}", seconds_line(summary))?;
    writeln!(w, "  disk             {:.1} MiB", mib(summary.disk_bytes))?;
    if summary.tiles_reused > 0 || summary.regions_reused > 0 {
        writeln!(
            w,
            "  rebaked          {} tiles voxelized, {} unchanged since the last bake and reused; \
             {} tiles merged again; {} regions polygonized, {} reused; {} clusters' lengths \
             reused",
            summary.tiles_rebaked,
            summary.tiles_reused,
            summary.tiles_remerged,
            summary.regions_rebaked,
            summary.regions_reused,
            summary.clusters_reused
        )?;
    }
    if !summary.stages_reused.is_empty() || summary.resumed_tiles > 0 {
        writeln!(
            w,
            "  resumed          stages reused: {}; {} tiles from checkpoints",
            if summary.stages_reused.is_empty() {
                "none".to_string()
            } else {
                summary.stages_reused.join(", ")
            },
            summary.resumed_tiles
        )?;
    }
    writeln!(
        w,
        "  navmesh file     {}",
        BakeLayout::new(out.dir).navmesh().display()
    )?;
    writeln!(
        w,
        "  summary          {}",
        BakeLayout::new(out.dir).summary_json().display()
    )?;
    writeln!(
        w,
        "  preview          {} ({} x {} px, {:.3} m per pixel)",
        out.preview.display(),
        out.preview_view.width,
        out.preview_view.height,
        out.preview_view.units_per_pixel()
    )?;
    writeln!(w, "  report           {}", out.report.display())?;
    Ok(())
}

/// Seconds per stage: pipeline order first, then anything a later stage added, total last.
fn seconds_line(summary: &BakeSummary) -> String {
    let mut stages: Vec<String> = tessera_pipeline::STAGES
        .iter()
        .filter_map(|k| summary.seconds.get(*k).map(|v| format!("{k} {v:.2}")))
        .collect();
    stages.extend(
        summary
            .seconds
            .iter()
            .filter(|(k, _)| {
                !tessera_pipeline::STAGES.contains(&k.as_str()) && k.as_str() != "total"
            })
            .map(|(k, v)| format!("{k} {v:.2}")),
    );
    if let Some(total) = summary.seconds.get("total") {
        stages.push(format!("total {total:.2}"));
    }
    stages.join(", ")
}

/// Cells per notch, overall and by how many notches a region has (seed 002's measure; its
/// floor plans have 15 to 106 notches each).
pub fn partition_line(polygons: u64, notches: u64, groups: &[NotchGroup]) -> String {
    let ratio = |p: u64, n: u64| {
        if n == 0 {
            "-".to_string()
        } else {
            format!("{:.3}", p as f64 / n as f64)
        }
    };
    let mut by = Vec::new();
    let mut convex = 0;
    for g in groups {
        let range = match g.max_notches {
            Some(last) if last == g.min_notches => format!("{last}"),
            Some(last) => format!("{}-{last}", g.min_notches),
            None => format!("{}+", g.min_notches),
        };
        if g.min_notches == 0 {
            convex = g.regions;
        } else {
            by.push(format!("{range}: {}", ratio(g.polygons, g.notches)));
        }
    }
    format!(
        "{} cells per notch ({polygons} / {notches}); by notches per region {}; {convex} regions without a notch",
        ratio(polygons, notches),
        by.join(", ")
    )
}
