//! `tessera diff OLD NEW`: what changed between two bakes of one world
//! (`tessera_query::diff`): walkable area added and removed, polygons and regions added and
//! removed, components split or joined, and where; `--out` draws the new mesh with the surface
//! added in green and removed in red.

use std::path::PathBuf;

use serde_json::json;
use tessera_export::render::{RenderOptions, Rgb};
use tessera_query::diff::{diff, MeshDiff};
use tessera_query::Query;

use crate::exit::{self, Failure};
use crate::out;

/// At most this many places of change are listed.
const LISTED: usize = 20;

#[derive(clap::Args)]
pub struct Args {
    /// The earlier navmesh file.
    old: PathBuf,
    /// The later navmesh file.
    new: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Draw the new mesh with the surface added (green) and removed (red) into this PNG.
    #[arg(long, value_name = "PNG")]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let (old_file, new_file) = (
        crate::navmesh::open(&args.old)?,
        crate::navmesh::open(&args.new)?,
    );
    let (old, new) = (Query::new(old_file.mesh()), Query::new(new_file.mesh()));
    let d = diff(&old, &new);
    if let Some(png) = &args.out {
        picture(&new, &d, png)?;
    }
    // Plan boxes back in the new mesh's scene axes (a Y-up scene's plan is x and z; the up
    // coordinate is 0).
    let up = new.frame().up_axis();
    let scene = |p: [f64; 2]| up.from_z_up([p[0], p[1], 0.0]);
    let places: Vec<_> = d
        .patches
        .iter()
        .take(LISTED)
        .map(|p| {
            let (a, b) = (scene(p.min), scene(p.max));
            let (min, max) = (
                [0, 1, 2].map(|k| a[k].min(b[k])),
                [0, 1, 2].map(|k| a[k].max(b[k])),
            );
            json!({
                "min": min,
                "max": max,
                "added_m2": p.added_m2,
                "removed_m2": p.removed_m2,
            })
        })
        .collect();
    out::print(|w| {
        if args.json {
            let v = json!({
                "old": args.old.display().to_string(),
                "new": args.new.display().to_string(),
                "cell": d.cell,
                "area_added_m2": d.added_m2,
                "area_removed_m2": d.removed_m2,
                "polygons": {"old": old.poly_count(), "new": new.poly_count(),
                             "added": d.polygons_added, "removed": d.polygons_removed},
                "regions": {"added": d.regions_added, "removed": d.regions_removed},
                "components": {"split": split_json(&d.split), "joined": split_json(&d.joined)},
                "places": places,
                "places_in_all": d.patches.len(),
            });
            writeln!(w, "{v}")?;
        } else {
            writeln!(
                w,
                "walkable area    +{:.1} m^2, -{:.1} m^2 (compared on {:.3} m cells)",
                d.added_m2, d.removed_m2, d.cell
            )?;
            writeln!(
                w,
                "polygons         {} -> {}: {} added, {} removed",
                old.poly_count(),
                new.poly_count(),
                d.polygons_added,
                d.polygons_removed
            )?;
            writeln!(
                w,
                "regions          {} added, {} removed",
                d.regions_added, d.regions_removed
            )?;
            writeln!(
                w,
                "components       {} split, {} joined",
                d.split.len(),
                d.joined.len()
            )?;
            for (p, v) in d.patches.iter().take(LISTED).zip(&places) {
                writeln!(
                    w,
                    "  changed        {} .. {}: +{:.1} m^2, -{:.1} m^2",
                    v["min"], v["max"], p.added_m2, p.removed_m2
                )?;
            }
            if d.patches.len() > LISTED {
                writeln!(w, "  ... and {} more places", d.patches.len() - LISTED)?;
            }
        }
        Ok(())
    })
}

fn split_json(list: &[(u32, Vec<u32>)]) -> serde_json::Value {
    list.iter()
        .map(|(c, others)| json!({"component": c, "into": others}))
        .collect()
}

/// The new mesh drawn as the preview is, the changed cells painted over it.
fn picture(new: &Query, d: &MeshDiff, png: &std::path::Path) -> Result<(), Failure> {
    let (mut img, view) = tessera_export::render(new.mesh(), &RenderOptions::default());
    // The mesh in light greys, so that the two colours of the changes stand out.
    for px in img.pixels.chunks_exact_mut(3) {
        let grey = (px[0] as u32 * 3 + px[1] as u32 * 6 + px[2] as u32) / 10;
        px.fill((128 + grey / 2) as u8);
    }
    let o = new.frame().origin;
    let mut paint = |cells: &[u64], c: Rgb| {
        for &cell in cells {
            let (x, y) = (cell % d.width, cell / d.width);
            // The cell's corners on the image, internal coordinates of the new mesh.
            let corner = |i: u64, j: u64| {
                view.pixel([
                    (d.origin[0] + i as f64 * d.cell - o[0]) as f32,
                    (d.origin[1] + j as f64 * d.cell - o[1]) as f32,
                    0.0,
                ])
            };
            let (a, b) = (corner(x, y + 1), corner(x + 1, y));
            let (x0, y0) = (a[0].floor().max(0.0) as u32, a[1].floor().max(0.0) as u32);
            let (x1, y1) = (
                (b[0].ceil() as u32).min(img.width),
                (b[1].ceil() as u32).min(img.height),
            );
            for py in y0..y1.max(y0 + 1).min(img.height) {
                for px in x0..x1.max(x0 + 1).min(img.width) {
                    let i = (py as usize * img.width as usize + px as usize) * 3;
                    img.pixels[i..i + 3].copy_from_slice(&c.0);
                }
            }
        }
    };
    paint(&d.removed, Rgb([220, 40, 40]));
    paint(&d.added, Rgb([40, 190, 60]));
    let bytes = img
        .to_png(&[("Software", "tessera diff".into())])
        .map_err(|m| Failure::new(exit::IO, anyhow::anyhow!("{}: {m}", png.display())))?;
    tessera_export::write_atomic(png, |w| w.write_all(&bytes))
        .map_err(|e| Failure::new(exit::IO, e))
}
