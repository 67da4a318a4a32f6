//! `tessera info`: what a baked navmesh holds.

use std::path::{Path, PathBuf};

use tessera_navmesh::NavMeshFile;
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

/// What `info` tells about a navmesh, gathered once for the text and the JSON.
struct Facts {
    /// The mesh's box in scene coordinates.
    min: [f64; 3],
    max: [f64; 3],
    /// Connected components, largest area first (then by number): (id, polygons, area).
    components: Vec<(usize, u64, f64)>,
    by_notches: Vec<tessera_pipeline::NotchGroup>,
    /// The hierarchy's clusters, entrances, lengths between entrances, and its tables' bytes
    /// as stored (their records' sizes; the archive adds a few).
    hierarchy: [usize; 4],
    /// Per area of the mesh's table: its polygons and their plan area [m²].
    areas: Vec<(u64, f64)>,
}

fn facts(query: &Query) -> Facts {
    let mesh = query.mesh();
    // The internal box's corners in scene coordinates: a Y-up scene swaps and flips axes.
    let (lo, hi) = (
        mesh.bounds_min.map(|c| c.to_native()),
        mesh.bounds_max.map(|c| c.to_native()),
    );
    let (a, b) = (query.to_scene(lo), query.to_scene(hi));
    let mut components: Vec<(usize, u64, f64)> = mesh
        .components
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.polygons.to_native(), c.area.to_native()))
        .collect();
    components.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let h = &mesh.hierarchy;
    let (clusters, entrances, lengths) = (h.clusters.len(), h.entrances.len(), h.costs.len());
    let bytes = 4 * h.poly_cluster.len()
        + std::mem::size_of::<tessera_navmesh::Cluster>() * clusters
        + std::mem::size_of::<tessera_navmesh::Entrance>() * entrances
        + 4 * lengths;
    let mut areas = vec![(0u64, 0f64); mesh.areas.len()];
    for p in mesh.polys.iter() {
        if let Some(a) = areas.get_mut(p.area_id.to_native() as usize) {
            a.0 += 1;
            a.1 += f64::from(p.area.to_native());
        }
    }
    Facts {
        areas,
        min: [0, 1, 2].map(|k| a[k].min(b[k])),
        max: [0, 1, 2].map(|k| a[k].max(b[k])),
        components,
        by_notches: tessera_pipeline::NotchGroup::list(&mesh.stats.by_notches.to_native()),
        hierarchy: [clusters, entrances, lengths, bytes],
    }
}

/// The object `tessera info --json` prints for the navmesh `file` (opened from `path`, with
/// `query` over it): bounds in scene coordinates, counts, the partition's notches, walkable
/// area, the connected components (largest first), what was pruned, and the cell and agent
/// it was baked for.
pub fn describe(path: &Path, file: &NavMeshFile, query: &Query) -> serde_json::Value {
    json(path, file, query, &facts(query))
}

fn json(path: &Path, file: &NavMeshFile, query: &Query, facts: &Facts) -> serde_json::Value {
    let mesh = query.mesh();
    let frame = query.frame();
    let stats = &mesh.stats;
    serde_json::json!({
        "file": path.display().to_string(),
        "file_bytes": file.len(),
        "bounds": {"min": facts.min, "max": facts.max},
        "up": frame.up_axis().to_string(),
        "polygons": mesh.polys.len(),
        "vertices": mesh.verts.len(),
        "regions": stats.regions.to_native(),
        "portals": stats.portals.to_native(),
        "links": stats.links.to_native(),
        "off_mesh_links": mesh.off_mesh
            .iter()
            .map(|l| serde_json::json!({
                "name": l.name.as_str(),
                "from": query.to_scene(l.from.map(|c| c.to_native())),
                "to": query.to_scene(l.to.map(|c| c.to_native())),
                "bidirectional": l.bidirectional,
                "cost": l.cost.to_native(),
            }))
            .collect::<Vec<_>>(),
        "areas": mesh.areas
            .iter()
            .zip(&facts.areas)
            .map(|(a, &(polygons, area))| serde_json::json!({
                "name": a.name.as_str(),
                "cost": a.cost.to_native(),
                "walkable": a.walkable,
                "polygons": polygons,
                "walkable_m2": area,
            }))
            .collect::<Vec<_>>(),
        "notches": stats.notches.to_native(),
        "by_notches": facts.by_notches,
        "walkable_area_m2": stats.walkable_area.to_native(),
        "components": facts.components
            .iter()
            .map(|&(id, polygons, area)| serde_json::json!({
                "id": id,
                "polygons": polygons,
                "area_m2": area,
            }))
            .collect::<Vec<_>>(),
        "hierarchy": {
            "clusters": facts.hierarchy[0],
            "entrances": facts.hierarchy[1],
            "lengths": facts.hierarchy[2],
            "bytes": facts.hierarchy[3],
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
    })
}

pub fn run(args: Args) -> Result<(), Failure> {
    let path = args.navmesh.as_path();
    let file = crate::navmesh::open(path)?;
    let mesh = file.mesh();
    let query = Query::new(mesh);
    let facts = facts(&query);
    if args.json {
        let v = json(path, &file, &query, &facts);
        return out::print(|out| Ok(writeln!(out, "{v}")?));
    }
    let frame = query.frame();
    let stats = &mesh.stats;
    let (polygons, vertices) = (mesh.polys.len(), mesh.verts.len());
    let regions = stats.regions.to_native();
    let area = stats.walkable_area.to_native();
    let up = frame.up_axis().to_string();
    let components = &facts.components;
    out::print(|out| {
        writeln!(out, "navmesh {}", path.display())?;
        writeln!(
            out,
            "  bounds           {} to {} (scene coordinates, {up} up)",
            scene_point(facts.min),
            scene_point(facts.max)
        )?;
        writeln!(
            out,
            "  polygons         {polygons} ({vertices} vertices, {regions} regions)"
        )?;
        writeln!(
            out,
            "  portals          {}, links {} ({} off-mesh links given)",
            stats.portals.to_native(),
            stats.links.to_native(),
            mesh.off_mesh.len()
        )?;
        writeln!(
            out,
            "  partition        {}",
            partition_line(
                polygons as u64,
                stats.notches.to_native(),
                &facts.by_notches
            )
        )?;
        writeln!(out, "  walkable area    {area:.1} m^2")?;
        if mesh.areas.len() > 1 {
            let list: Vec<String> = mesh
                .areas
                .iter()
                .zip(&facts.areas)
                .map(|(a, &(_, m2))| {
                    let walk = if a.walkable { "" } else { ", not walkable" };
                    format!("{} {m2:.1} m^2 (cost {}{walk})", a.name, a.cost)
                })
                .collect();
            writeln!(out, "  areas            {}", list.join("; "))?;
        }
        let largest = components.first().map_or(0.0, |c| c.2);
        writeln!(
            out,
            "  components       {} (the largest {largest:.1} m^2; no path joins two)",
            components.len()
        )?;
        let [clusters, entrances, lengths, bytes] = facts.hierarchy;
        writeln!(
            out,
            "  hierarchy        {clusters} clusters, {entrances} entrances, {lengths} lengths \
             ({bytes} bytes)"
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
