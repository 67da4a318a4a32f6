//! The `tessera` binary: clap parses the command line and each subcommand goes to its module
//! in the `tessera_cli` library (`lib.rs`, where the modules and the exit codes are
//! described).

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tessera_cli::{bake, clean, diff, exit, export, info, path, render, validate, view};

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
