//! Wavefront OBJ export.
//!
//! Three objects: `navmesh` (vertices `v x y z r g b` coloured by region, triangle faces),
//! `portals` and `links` (their own coloured vertices and `l` line elements). Coordinates are
//! the scene's own, in its own up axis, written in full (f64) so that a world at UTM offsets
//! keeps its precision. Faces are counter-clockwise seen from above.

use std::io::{self, Write};

use tessera_navmesh::{ArchivedNavMesh, Frame};
use tessera_query::shortest_decimal;

use crate::{
    region_colour, ExportCounts, ExportOptions, Lines, Rgb, Surface, LINK_COLOUR, PORTAL_COLOUR,
};

/// An internal point in the scene's coordinates: each f32 read as its shortest decimal, then
/// the origin added and the up axis converted back.
fn scene(frame: &Frame, p: [f32; 3]) -> [f64; 3] {
    let o = frame.origin;
    frame
        .up_axis()
        .from_z_up([0, 1, 2].map(|k| shortest_decimal(p[k]) + o[k]))
}

fn vertex(w: &mut dyn Write, p: [f64; 3], c: Rgb) -> io::Result<()> {
    let [r, g, b] = c.0.map(|v| v as f64 / 255.0);
    writeln!(w, "v {} {} {} {r:.4} {g:.4} {b:.4}", p[0], p[1], p[2])
}

/// Writes the OBJ text of `mesh` to `w`.
pub fn write_obj(
    mesh: &ArchivedNavMesh,
    options: ExportOptions,
    w: &mut dyn Write,
) -> io::Result<ExportCounts> {
    let frame = mesh.frame.native();
    let surface = Surface::of(mesh, options);
    let lines = Lines::of(mesh);
    writeln!(
        w,
        "# tessera navmesh: {} polygons, {} regions, {} triangles ({})",
        mesh.polys.len(),
        mesh.stats.regions.to_native(),
        surface.tris.len(),
        if options.detail {
            "detail triangles"
        } else {
            "polygon fans"
        }
    )?;
    writeln!(
        w,
        "# scene coordinates, {} up; vertex colours (v x y z r g b) by region",
        frame.up_axis()
    )?;
    writeln!(w, "o navmesh")?;
    for &(v, r) in &surface.verts {
        vertex(w, scene(&frame, mesh.detail_corner(v)), region_colour(r))?;
    }
    for t in &surface.tris {
        writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
    }
    let mut next = surface.verts.len() + 1;
    for (name, segments, colour) in [
        ("portals", &lines.portals, PORTAL_COLOUR),
        ("links", &lines.links, LINK_COLOUR),
    ] {
        if segments.is_empty() {
            continue;
        }
        writeln!(w, "o {name}")?;
        for s in segments {
            vertex(w, scene(&frame, s[0]), colour)?;
            vertex(w, scene(&frame, s[1]), colour)?;
        }
        for _ in segments.iter() {
            writeln!(w, "l {} {}", next, next + 1)?;
            next += 2;
        }
    }
    Ok(ExportCounts {
        polygons: mesh.polys.len(),
        triangles: surface.tris.len(),
        vertices: surface.verts.len(),
        portals: lines.portals.len(),
        links: lines.links.len(),
    })
}
