//! `tessera clean`: removes a bake folder's checkpoints.

use std::path::PathBuf;

use crate::exit::{self, Failure};

#[derive(clap::Args)]
pub struct Args {
    /// The bake folder [default: tessera-out/demo].
    dir: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let dir = args
        .dir
        .unwrap_or_else(|| PathBuf::from("tessera-out").join("demo"));
    let work = tessera_pipeline::BakeLayout::new(&dir).work();
    // A file is no bake folder ("DIR/work: Not a directory" said so only sideways).
    if dir.exists() && !dir.is_dir() {
        return Err(Failure::new(
            exit::BAD_INPUT,
            anyhow::anyhow!("{}: a file, not a bake folder", dir.display()),
        ));
    }
    // Not under a bake at work in the folder.
    let _lock = if dir.is_dir() {
        Some(crate::lock::lock(&dir, false)?)
    } else {
        None
    };
    let said = match std::fs::remove_dir_all(&work) {
        Ok(()) => format!("removed {}", work.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            format!("nothing to remove: {} does not exist", work.display())
        }
        Err(e) => {
            return Err(Failure::new(
                exit::IO,
                anyhow::anyhow!("{}: {e}", work.display()),
            ))
        }
    };
    crate::out::print(|out| Ok(writeln!(out, "{said}")?))
}
