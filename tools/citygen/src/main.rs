//! `citygen`: writes a generated city, or with `--terrain` open country, to a `.obj` or `.glb`
//! file.
//!
//! The file is written through `tessera-store`'s atomic writer (a temporary name in the
//! destination folder, fsynced, renamed into place, the folder fsynced), so a failed or
//! interrupted run never leaves a partial output behind.

use citygen::{generate, generate_terrain, write_glb, write_obj, CityParams, Size, TerrainParams};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tessera_geom::PointError;
use tessera_store::{AtomicFile, StoreError};

/// Generate a deterministic procedural city, or terrain alone (Z-up metres), as OBJ or binary
/// glTF.
#[derive(Parser, Debug)]
#[command(name = "citygen", version)]
struct Args {
    /// World size: demo (100 m), S (250 m), M (500 m), L (1 km) or XL (2 km). With --terrain:
    /// demo (250 m), S (1 km²), M (2 km²) or L (4 km²).
    #[arg(long, value_parser = parse_size)]
    size: Size,
    /// Terrain only, no city: rolling hills, valleys, cliffs steeper than 45 degrees and carved
    /// river channels on a 2 m grid.
    #[arg(long)]
    terrain: bool,
    /// Random seed; equal seeds give byte-identical files.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file; the format follows the extension: .obj or .glb.
    #[arg(long)]
    out: PathBuf,
    /// Offset added to every vertex, as X,Y,Z in metres (e.g. 500000,5700000,0).
    #[arg(long, value_parser = parse_offset, allow_hyphen_values = true, default_value = "0,0,0")]
    offset: Offset,
}

#[derive(Clone, Copy, Debug)]
struct Offset([f64; 3]);

fn parse_size(s: &str) -> Result<Size, String> {
    Size::parse(s).ok_or_else(|| format!("unknown size `{s}`: use demo, S, M, L or XL"))
}

fn parse_offset(s: &str) -> Result<Offset, String> {
    tessera_geom::parse_point(s)
        .map(Offset)
        .map_err(|e| match e {
            PointError::Number { part } => format!("`{part}` in `{s}` is not a finite number"),
            _ => format!("`{s}` is not X,Y,Z (three comma-separated numbers)"),
        })
}

#[derive(Clone, Copy)]
enum Format {
    Obj,
    Glb,
}

fn format_of(path: &Path) -> Option<Format> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "obj" => Some(Format::Obj),
        "glb" => Some(Format::Glb),
        _ => None,
    }
}

/// Writes `out` through an [`AtomicFile`]; an error is the I/O error itself (the caller names
/// the file).
fn write_atomically(
    out: &Path,
    fill: impl FnOnce(&mut AtomicFile) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let unwrap = |e: StoreError| match e {
        StoreError::Io { source, .. } => source,
        other => std::io::Error::other(other.to_string()),
    };
    let mut file = AtomicFile::create(out).map_err(unwrap)?;
    fill(&mut file)?;
    file.commit().map_err(unwrap)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(format) = format_of(&args.out) else {
        eprintln!(
            "citygen: cannot tell the output format of `{}`: the file name must end in .obj or .glb",
            args.out.display()
        );
        return ExitCode::from(2);
    };
    let (seed, offset) = (args.seed, args.offset.0);
    let mesh = if args.terrain {
        let Some(params) = TerrainParams::for_size(args.size, seed, offset) else {
            eprintln!("citygen: --terrain takes sizes demo, S (1 km²), M (2 km²) or L (4 km²)");
            return ExitCode::from(2);
        };
        generate_terrain(&params)
    } else {
        generate(&CityParams {
            size: args.size,
            seed,
            offset,
        })
    };
    let written = write_atomically(&args.out, |w| match format {
        Format::Obj => write_obj(&mesh, w),
        Format::Glb => write_glb(&mesh, offset, w),
    });
    if let Err(e) = written {
        eprintln!("citygen: cannot write `{}`: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    let (lo, hi) = mesh.bounds().unwrap_or(([0.0; 3], [0.0; 3]));
    println!(
        "{} triangles, {} vertices, extent {:.2} x {:.2} x {:.2} m, wrote {}",
        mesh.triangles.len(),
        mesh.positions.len(),
        hi[0] - lo[0],
        hi[1] - lo[1],
        hi[2] - lo[2],
        args.out.display()
    );
    ExitCode::SUCCESS
}
