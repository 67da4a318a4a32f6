//! `citygen`: writes a generated city to a `.obj` or `.glb` file.
//!
//! The file is written to a temporary name in the destination folder and renamed into place
//! only once complete, so a failed or interrupted run never leaves a partial output behind.

use citygen::{generate, write_glb, write_obj, CityParams, Size};
use clap::Parser;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Generate a deterministic procedural city (Z-up metres) as OBJ or binary glTF.
#[derive(Parser, Debug)]
#[command(name = "citygen", version)]
struct Args {
    /// World size: demo (100 m), S (250 m), M (500 m), L (1 km) or XL (2 km).
    #[arg(long, value_parser = parse_size)]
    size: Size,
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
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(format!(
            "`{s}` is not X,Y,Z (three comma-separated numbers)"
        ));
    }
    let mut o = [0.0; 3];
    for (slot, p) in o.iter_mut().zip(&parts) {
        *slot = p
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("`{p}` in `{s}` is not a finite number"))?;
    }
    Ok(Offset(o))
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

/// Writes through a temporary file next to `out`, renamed over it when complete.
fn write_atomically(
    out: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "citygen".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut w = BufWriter::with_capacity(4 << 20, File::create(&tmp)?);
        fill(&mut w)?;
        w.flush()?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, out)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
    let params = CityParams {
        size: args.size,
        seed: args.seed,
        offset: args.offset.0,
    };
    let mesh = generate(&params);
    let written = write_atomically(&args.out, |w| match format {
        Format::Obj => write_obj(&mesh, w),
        Format::Glb => write_glb(&mesh, params.offset, w),
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
