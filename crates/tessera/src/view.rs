//! `tessera view`: serves a baked navmesh to a web browser until interrupted.

use std::path::PathBuf;

use tessera_viewer::ViewerError;

use crate::exit::{self, Failure};

#[derive(clap::Args)]
pub struct Args {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// The scene it was baked from (.obj, .gltf, .glb), drawn as a faint overlay (decimated
    /// to at most 400 000 triangles).
    #[arg(long)]
    scene: Option<PathBuf>,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8370, allow_negative_numbers = true)]
    port: u16,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let server =
        tessera_viewer::serve(&args.navmesh, args.scene.as_deref(), args.port).map_err(|e| {
            let code = match &e {
                ViewerError::NavMesh(e) => crate::navmesh::exit_code(e),
                ViewerError::Bind { .. } => exit::IO,
                _ => exit::BAD_INPUT,
            };
            Failure::new(code, e)
        })?;
    // The address alone on stdout, for scripts; the rest on stderr.
    crate::out::print(|out| Ok(writeln!(out, "{}", server.url())?))?;
    eprintln!(
        "serving {} on {} (loopback only); Ctrl-C stops",
        args.navmesh.display(),
        server.url()
    );
    server.wait();
    Ok(())
}
