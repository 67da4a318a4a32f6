//! `tessera render`: a baked navmesh drawn top-down into a PNG, with a path if asked.

use std::path::PathBuf;

use tessera_export::RenderOptions;
use tessera_geom::parse_point;
use tessera_query::Query;

use crate::exit::{self, Failure};

#[derive(clap::Args)]
pub struct Args {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// Output PNG file.
    #[arg(long, short)]
    out: PathBuf,
    /// Draw the path from this point X,Y,Z (scene coordinates and up axis).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_point, allow_hyphen_values = true, requires = "to")]
    from: Option<[f64; 3]>,
    /// ... to this point X,Y,Z.
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_point, allow_hyphen_values = true, requires = "from")]
    to: Option<[f64; 3]>,
    /// Longest side of the image in pixels (a large world is scaled down to fit).
    #[arg(long, value_name = "PX", default_value_t = tessera_export::render::DEFAULT_MAX_SIZE,
          value_parser = clap::value_parser!(u32).range(16..=16384), allow_negative_numbers = true)]
    max_size: u32,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let file = crate::navmesh::open(&args.navmesh)?;
    let mut options = RenderOptions {
        max_size: args.max_size,
        from: args.from,
        to: args.to,
        tile: file.tile_edge(),
        ..RenderOptions::default()
    };
    let mut path_note = String::new();
    if let (Some(from), Some(to)) = (args.from, args.to) {
        let answer = Query::new(file.mesh()).path(from, to);
        path_note = if answer.found {
            format!(
                "; path {:.3} m, {} waypoints",
                answer.length,
                answer.waypoints.len()
            )
        } else {
            "; no path (an end is off the mesh, or nothing joins them)".to_string()
        };
        options.path = answer.waypoints;
    }
    let view = tessera_export::render::write_preview(file.mesh(), &options, &args.out)
        .map_err(|e| Failure::new(exit::IO, e))?;
    crate::out::print(|out| {
        writeln!(
            out,
            "wrote {}: {} x {} px, {:.3} m per pixel{path_note}",
            args.out.display(),
            view.width,
            view.height,
            view.units_per_pixel()
        )?;
        Ok(())
    })
}
