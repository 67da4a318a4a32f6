//! `tessera export`: a baked navmesh as glTF or OBJ.

use std::path::PathBuf;

use clap::ValueEnum;
use tessera_export::{ExportOptions, Format};

use crate::exit::{self, Failure};

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Gltf,
    Obj,
}

#[derive(clap::Args)]
pub struct Args {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// Output format [default: from the --out extension: .glb or .gltf is gltf, .obj is obj].
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Output file. For gltf, a .gltf name gives JSON with an embedded buffer, any other a
    /// binary .glb.
    #[arg(long, short)]
    out: PathBuf,
    /// Export each polygon's detail triangles instead of a fan over its corners.
    #[arg(long)]
    detail: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let format = match args.format {
        Some(FormatArg::Gltf) => Format::Gltf,
        Some(FormatArg::Obj) => Format::Obj,
        None => Format::of_path(&args.out).ok_or_else(|| {
            Failure::new(
                exit::USAGE,
                anyhow::anyhow!(
                    "{}: cannot tell the format from the name: give --format gltf|obj, or name \
                     the file .glb, .gltf or .obj",
                    args.out.display()
                ),
            )
        })?,
    };
    let file = crate::navmesh::open(&args.navmesh)?;
    let options = ExportOptions {
        detail: args.detail,
    };
    let counts = tessera_export::export_file(file.mesh(), &args.out, format, options)
        .map_err(|e| Failure::new(exit::IO, e))?;
    crate::out::print(|out| {
        writeln!(
            out,
            "wrote {}: {} polygons as {} triangles ({}), {} vertices, {} portals, {} links",
            args.out.display(),
            counts.polygons,
            counts.triangles,
            if args.detail { "detail" } else { "fans" },
            counts.vertices,
            counts.portals,
            counts.links
        )?;
        Ok(())
    })
}
