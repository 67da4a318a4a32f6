//! `tessera path`: a path between two scene points, or seeded random pairs, on a baked navmesh.

use std::path::PathBuf;

use tessera_geom::parse_point;
use tessera_query::{Query, Rng};

use crate::exit::{self, Failure};
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
    if args.json {
        let json = serde_json::to_string(&a).map_err(|e| Failure::new(exit::IO, e))?;
        println!("{json}");
    } else if a.found {
        println!(
            "path from {} to {}: {:.3} m, {} waypoints",
            scene_point(from),
            scene_point(to),
            a.length,
            a.waypoints.len()
        );
        for w in &a.waypoints {
            println!("  {:.3} {:.3} {:.3}", w[0], w[1], w[2]);
        }
    } else {
        println!(
            "no path from {} to {} (an end is off the mesh, or nothing joins them)",
            scene_point(from),
            scene_point(to)
        );
    }
    Ok(())
}

/// `n` pairs of random points on the mesh from `args.seed`, each with its path's length.
fn random_pairs(args: &Args, query: &Query, n: u32) -> Result<(), Failure> {
    let mut rng = Rng::new(args.seed);
    let mut answers = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (Some((_, a)), Some((_, b))) =
            (query.random_point(&mut rng), query.random_point(&mut rng))
        else {
            return Err(Failure::new(
                exit::BAD_INPUT,
                anyhow::anyhow!(
                    "{}: the navmesh has no walkable area to draw points from",
                    args.navmesh.display()
                ),
            ));
        };
        let (from, to) = (query.to_scene(a), query.to_scene(b));
        answers.push((from, to, query.path(from, to)));
    }
    if args.json {
        let list: Vec<serde_json::Value> = answers
            .iter()
            .map(|(from, to, a)| {
                serde_json::json!({"from": from, "to": to, "found": a.found, "length": a.length})
            })
            .collect();
        println!("{}", serde_json::Value::Array(list));
        return Ok(());
    }
    for (from, to, a) in &answers {
        if a.found {
            println!(
                "{} -> {}: {:.3} m",
                scene_point(*from),
                scene_point(*to),
                a.length
            );
        } else {
            println!("{} -> {}: no path", scene_point(*from), scene_point(*to));
        }
    }
    let found = answers.iter().filter(|a| a.2.found).count();
    println!("{found} of {n} pairs joined (seed {})", args.seed);
    Ok(())
}
