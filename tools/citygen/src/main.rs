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
    /// Write the world as N x N files instead of one, the way a city is exported by district:
    /// each triangle goes to the file of the square of the plan its centroid is in,
    /// `STEM-ROW-COL.EXT` beside `--out` (empty squares get none), and `STEM.scenes` lists
    /// them for `tessera bake --scene-list`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    split: u32,
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
    let write = |path: &Path, mesh: &citygen::Mesh| {
        write_atomically(path, |w| match format {
            Format::Obj => write_obj(mesh, w),
            Format::Glb => write_glb(mesh, offset, w),
        })
        .map_err(|e| eprintln!("citygen: cannot write `{}`: {e}", path.display()))
    };
    if args.split > 1 {
        let parts = citygen::split(&mesh, args.split as usize);
        let stem = args.out.file_stem().unwrap_or_default().to_string_lossy();
        let ext = args.out.extension().unwrap_or_default().to_string_lossy();
        let mut list = String::new();
        for ((row, col), part) in &parts {
            let name = format!("{stem}-{row}-{col}.{ext}");
            if write(&args.out.with_file_name(&name), part).is_err() {
                return ExitCode::FAILURE;
            }
            list.push_str(&name);
            list.push('\n');
        }
        let list_path = args.out.with_extension("scenes");
        if let Err(e) = tessera_store::write_atomic(&list_path, list.as_bytes()) {
            eprintln!("citygen: {e}");
            return ExitCode::FAILURE;
        }
        println!(
            "{} files of {} squares, listed in {}",
            parts.len(),
            args.split * args.split,
            list_path.display()
        );
    } else if write(&args.out, &mesh).is_err() {
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
        if args.split > 1 {
            format!("{} split", args.out.display())
        } else {
            args.out.display().to_string()
        }
    );
    ExitCode::SUCCESS
}
