//! `tessera`: the command line. Glue only: parse arguments (here, with clap) and hand each
//! subcommand to its module, which reads the config, calls the pipeline, the query library,
//! the export crate or the viewer, and prints the summary or the answer; [`exit`] maps each
//! kind of failure to its exit code. After a bake the `bake` module writes the preview image
//! and the HTML report (the pipeline does not know about them).
//!
//! Modules: [`bake`], [`clean`], [`path`], [`export`], [`render`], [`view`], [`info`],
//! [`validate`], [`diff`] (one per
//! subcommand, each with its arguments and its `run`); [`exit`] (exit codes, the failure type,
//! how a failure is printed); [`lock`] (one bake at a time in a bake folder); [`navmesh`] (opening a navmesh file for a command); [`out`] (stdout
//! for what a command prints, a closed pipe ending it quietly); [`summary`]
//! (the text a bake and `info` print).
//!
//! Exit codes (stable, for scripts): 0 success (a path query that finds no path included, and
//! a reader of stdout that closes it early, as `| head` does); 1 `validate` found a failure;
//! 2 bad command line; 3 bad input (a missing, malformed or empty scene, nothing walkable, a
//! world too large for the grid or the navmesh format at these settings; a navmesh path that
//! names nothing or a folder, or a file that is not a navmesh, is corrupt or fails validation;
//! a `path --batch` line that is not a pair); 4 bad config; 5 memory budget too small; 6 I/O
//! failure (a navmesh that exists but cannot be read included; a full disk, or too little free
//! space for the bake's work files),
//! corrupt artifact, or worker threads the system refused; 7 internal error (polygonizing or
//! assembling the navmesh failed: a bug, please report it); 75 the bake folder is in use by
//! another bake (`--wait-lock` waits instead); 130 interrupted (SIGINT or SIGTERM; checkpoints
//! intact, the same command resumes).

mod bake;
mod clean;
mod diff;
mod exit;
mod export;
mod info;
mod lock;
mod navmesh;
mod out;
mod path;
mod render;
mod summary;
mod validate;
mod view;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "tessera", version, about = "Navigation meshes for huge worlds", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Bake a scene (OBJ, glTF, GLB); with no scene, bake a generated demo world. Re-running
    /// the same bake resumes from its checkpoints.
    Bake(bake::Args),
    /// Remove a bake folder's checkpoints (its `work/` folder), keeping its results.
    Clean(clean::Args),
    /// Find a path on a baked navmesh between two scene points, or answer seeded random pairs
    /// of points on it. No path is an answer (found: false), not an error.
    Path(path::Args),
    /// Write a baked navmesh as glTF (.glb, or .gltf with the buffer embedded) or OBJ, in the
    /// scene's coordinates (glTF: converted to its Y-up convention), coloured by region, with
    /// portals and links as lines.
    Export(export::Args),
    /// Draw a baked navmesh top-down into a PNG: regions in colour, links, and a path between
    /// two points if asked.
    Render(render::Args),
    /// Show a baked navmesh in 3D in a web browser: serves a page on 127.0.0.1 (the address
    /// is printed) until interrupted. Click two points on the mesh for the path between them.
    View(view::Args),
    /// Describe a baked navmesh: bounds, counts, walkable area, file size.
    Info(info::Args),
    /// Check a baked navmesh: the file, polygons, portals, open edges between polygons that
    /// touch, and seeded random paths searched both ways. Exits 1 with the list of failures
    /// when any check fails.
    Validate(validate::Args),
    /// Compare two bakes of one world: walkable area added and removed, polygons, regions and
    /// components that changed, and where (--out draws the changes over the new mesh).
    Diff(diff::Args),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Bake(args) => {
            let style = args.failure_style();
            exit::report(bake::run(args), style)
        }
        Command::Clean(args) => exit::report(clean::run(args), exit::Style::Text),
        Command::Path(args) => exit::report(path::run(args), exit::Style::Text),
        Command::Export(args) => exit::report(export::run(args), exit::Style::Text),
        Command::Render(args) => exit::report(render::run(args), exit::Style::Text),
        Command::View(args) => exit::report(view::run(args), exit::Style::Text),
        Command::Info(args) => exit::report(info::run(args), exit::Style::Text),
        Command::Validate(args) => exit::report(validate::run(args), exit::Style::Text),
        Command::Diff(args) => exit::report(diff::run(args), exit::Style::Text),
    }
}
