//! `tessera path`: a path between two scene points, or seeded random pairs, on a baked navmesh.

use std::path::PathBuf;

use tessera_geom::parse_point;
use tessera_query::{Query, Rng};

use crate::exit::{self, Failure};
use crate::out;
use crate::summary::scene_point;

#[derive(clap::Args)]
pub struct Args {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// Start point X,Y,Z in the scene's own coordinates and up axis.
    #[arg(
        long,
        value_name = "X,Y,Z",
        value_parser = parse_point,
        allow_hyphen_values = true,
        requires = "to",
        required_unless_present = "random_pairs"
    )]
    from: Option<[f64; 3]>,
    /// End point X,Y,Z in the scene's own coordinates and up axis.
    #[arg(
        long,
        value_name = "X,Y,Z",
        value_parser = parse_point,
        allow_hyphen_values = true,
        requires = "from"
    )]
    to: Option<[f64; 3]>,
    /// Instead of --from/--to: answer N pairs of random points on the mesh (area-weighted).
    #[arg(long, value_name = "N", conflicts_with_all = ["from", "to"])]
    random_pairs: Option<u32>,
    /// Seed of the random pairs: the same seed gives the same pairs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print JSON: one object for a path, one array for random pairs.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let file = crate::navmesh::open(&args.navmesh)?;
    let query = Query::new(file.mesh());
    if let Some(n) = args.random_pairs {
        return random_pairs(&args, &query, n);
    }
    let (Some(from), Some(to)) = (args.from, args.to) else {
        // clap already requires --from and --to together unless --random-pairs is given.
        return Err(Failure::new(
            exit::USAGE,
            anyhow::anyhow!("give --from and --to, or --random-pairs"),
        ));
    };
    let a = query.path(from, to);
    out::print(|out| {
        if args.json {
            let json = serde_json::to_string(&a).map_err(|e| Failure::new(exit::IO, e))?;
            writeln!(out, "{json}")?;
        } else if a.found {
            writeln!(
                out,
                "path from {} to {}: {:.3} m, {} waypoints",
                scene_point(from),
                scene_point(to),
                a.length,
                a.waypoints.len()
            )?;
            for w in &a.waypoints {
                writeln!(out, "  {:.3} {:.3} {:.3}", w[0], w[1], w[2])?;
            }
        } else {
            writeln!(
                out,
                "no path from {} to {} (an end is off the mesh, or nothing joins them)",
                scene_point(from),
                scene_point(to)
            )?;
        }
        Ok(())
    })
}

/// `n` pairs of random points on the mesh from `args.seed`, each with its path's length,
/// printed as each is answered (a million pairs never wait in memory); then, as text, how many
/// were joined. As JSON, one array with an element per line.
fn random_pairs(args: &Args, query: &Query, n: u32) -> Result<(), Failure> {
    let mut rng = Rng::new(args.seed);
    let mut found = 0u32;
    out::print(|out| {
        for i in 0..n {
            let (Some((_, a)), Some((_, b))) =
                (query.random_point(&mut rng), query.random_point(&mut rng))
            else {
                // Only a mesh with no area has no point: the first pair, before any output.
                return Err(Failure::new(
                    exit::BAD_INPUT,
                    anyhow::anyhow!(
                        "{}: the navmesh has no walkable area to draw points from",
                        args.navmesh.display()
                    ),
                )
                .into());
            };
            let (from, to) = (query.to_scene(a), query.to_scene(b));
            let answer = query.path(from, to);
            found += u32::from(answer.found);
            if args.json {
                let pair = serde_json::json!({
                    "from": from,
                    "to": to,
                    "found": answer.found,
                    "length": answer.length,
                });
                let open = if i == 0 { "[" } else { "," };
                writeln!(out, "{open}{pair}")?;
            } else if answer.found {
                writeln!(
                    out,
                    "{} -> {}: {:.3} m",
                    scene_point(from),
                    scene_point(to),
                    answer.length
                )?;
            } else {
                writeln!(out, "{} -> {}: no path", scene_point(from), scene_point(to))?;
            }
        }
        if args.json {
            writeln!(out, "{}", if n == 0 { "[]" } else { "]" })?;
        } else {
            writeln!(out, "{found} of {n} pairs joined (seed {})", args.seed)?;
        }
        Ok(())
    })
}
