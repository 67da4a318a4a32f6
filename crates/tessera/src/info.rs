//! `tessera info`: what a baked navmesh holds.

use std::path::PathBuf;

use tessera_query::{shortest_decimal, Query};

use crate::exit::Failure;
use crate::out;
use crate::summary::{partition_line, scene_point};

#[derive(clap::Args)]
pub struct Args {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let path = args.navmesh.as_path();
    let file = crate::navmesh::open(path)?;
    let mesh = file.mesh();
    let query = Query::new(mesh);
    let frame = query.frame();
    // The internal box's corners in scene coordinates: a Y-up scene swaps and flips axes.
    let (lo, hi) = (
        mesh.bounds_min.map(|c| c.to_native()),
        mesh.bounds_max.map(|c| c.to_native()),
    );
    let (a, b) = (query.to_scene(lo), query.to_scene(hi));
    let min = [0, 1, 2].map(|k| a[k].min(b[k]));
    let max = [0, 1, 2].map(|k| a[k].max(b[k]));
    let stats = &mesh.stats;
    let (polygons, vertices) = (mesh.polys.len(), mesh.verts.len());
    let (regions, portals, links) = (
        stats.regions.to_native(),
        stats.portals.to_native(),
        stats.links.to_native(),
    );
    let area = stats.walkable_area.to_native();
    let notches = stats.notches.to_native();
    let by_notches = tessera_pipeline::NotchGroup::list(&stats.by_notches.to_native());
    let up = frame.up_axis().to_string();
    // Connected components, largest area first (then by number).
    let mut components: Vec<(usize, u64, f64)> = mesh
        .components
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.polygons.to_native(), c.area.to_native()))
        .collect();
    components.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let h = &mesh.hierarchy;
    let (clusters, entrances, lengths) = (h.clusters.len(), h.entrances.len(), h.costs.len());
    // The hierarchy's tables as stored (their records' sizes; the archive adds a few bytes).
    let hierarchy_bytes = 4 * h.poly_cluster.len()
        + std::mem::size_of::<tessera_navmesh::Cluster>() * clusters
        + std::mem::size_of::<tessera_navmesh::Entrance>() * entrances
        + 4 * lengths;
    if args.json {
        let v = serde_json::json!({
            "file": path.display().to_string(),
            "file_bytes": file.len(),
            "bounds": {"min": min, "max": max},
            "up": up,
            "polygons": polygons,
            "vertices": vertices,
            "regions": regions,
            "portals": portals,
            "links": links,
            "notches": notches,
            "by_notches": by_notches,
            "walkable_area_m2": area,
            "components": components
                .iter()
                .map(|&(id, polygons, area)| serde_json::json!({
                    "id": id,
                    "polygons": polygons,
                    "area_m2": area,
                }))
                .collect::<Vec<_>>(),
            "hierarchy": {
                "clusters": clusters,
                "entrances": entrances,
                "lengths": lengths,
                "bytes": hierarchy_bytes,
            },
            "islands_removed": stats.islands_removed.to_native(),
            "polygons_removed": stats.polygons_removed.to_native(),
            "area_removed_m2": stats.area_removed.to_native(),
            "cell_size": shortest_decimal(frame.cell_size),
            "cell_height": shortest_decimal(frame.cell_height),
            "agent": {
                "height": shortest_decimal(frame.agent_height),
                "radius": shortest_decimal(frame.agent_radius),
                "climb": shortest_decimal(frame.agent_climb),
            },
        });
        return out::print(|out| Ok(writeln!(out, "{v}")?));
    }
    out::print(|out| {
        writeln!(out, "navmesh {}", path.display())?;
        writeln!(
            out,
            "  bounds           {} to {} (scene coordinates, {up} up)",
            scene_point(min),
            scene_point(max)
        )?;
        writeln!(
            out,
            "  polygons         {polygons} ({vertices} vertices, {regions} regions)"
        )?;
        writeln!(out, "  portals          {portals}, links {links}")?;
        writeln!(
            out,
            "  partition        {}",
            partition_line(polygons as u64, notches, &by_notches)
        )?;
        writeln!(out, "  walkable area    {area:.1} m^2")?;
        let largest = components.first().map_or(0.0, |c| c.2);
        writeln!(
            out,
            "  components       {} (the largest {largest:.1} m^2; no path joins two)",
            components.len()
        )?;
        writeln!(
            out,
            "  hierarchy        {clusters} clusters, {entrances} entrances, {lengths} lengths \
             ({hierarchy_bytes} bytes)"
        )?;
        writeln!(
            out,
            "  baked for        cell {} m x {} m, agent height {} m, radius {} m, climb {} m",
            frame.cell_size,
            frame.cell_height,
            frame.agent_height,
            frame.agent_radius,
            frame.agent_climb
        )?;
        writeln!(out, "  file size        {} bytes", file.len())?;
        Ok(())
    })
}
