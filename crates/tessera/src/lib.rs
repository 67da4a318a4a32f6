//! `tessera`: the command line, as a library (`tessera_cli`) that the binary (`main.rs`) and
//! programs embedding tessera share. Glue only: parse arguments (here, with clap) and hand each
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
//!
//! The C API (`crates/capi`) and the Python package (`bindings/python`) bake through
//! [`embed`] (which runs [`bake::bake`]) and describe a navmesh with [`info::describe`], so
//! that they answer as the commands do.

pub mod bake;
pub mod clean;
pub mod diff;
pub mod embed;
pub mod exit;
pub mod export;
pub mod info;
mod lock;
pub mod navmesh;
mod out;
pub mod path;
pub mod render;
mod summary;
pub mod validate;
pub mod view;
