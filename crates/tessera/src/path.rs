//! `tessera path`: a path between two scene points, or seeded random pairs, on a baked navmesh.

use std::path::PathBuf;

use tessera_geom::parse_point;
use tessera_query::{Costs, Filter, Planner, Query, Rng};

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
        required_unless_present_any = ["random_pairs", "batch"]
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
    #[arg(long, value_name = "N", conflicts_with_all = ["from", "to"], allow_negative_numbers = true)]
    random_pairs: Option<u32>,
    /// Instead of --from/--to: answer every line of PAIRS.jsonl (`{"from": [x,y,z], "to":
    /// [x,y,z]}`, scene coordinates; `-` reads standard input) with one JSON line, the
    /// object `--json` prints, in input order; the pairs are answered in parallel.
    #[arg(
        long,
        value_name = "PAIRS.jsonl",
        conflicts_with_all = ["from", "to", "random_pairs"]
    )]
    batch: Option<PathBuf>,
    /// Threads answering a --batch (default: the machine's cores).
    #[arg(long, value_name = "N", requires = "batch", value_parser = clap::value_parser!(u16).range(1..=4096), allow_negative_numbers = true)]
    threads: Option<u16>,
    /// Seed of the random pairs: the same seed gives the same pairs.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
    /// Print JSON: one object for a path, one array for random pairs.
    #[arg(long)]
    json: bool,
    /// Search every polygon at once (the flat search) instead of planning over the mesh's
    /// hierarchy of clusters first and searching the clusters planned (the default).
    #[arg(long)]
    flat: bool,
    /// The area named NAME costs VALUE (a factor on the length walked through it, > 0), or
    /// the off-mesh links named NAME cost VALUE (metres added to their length), instead of
    /// the baked cost; repeatable. Any filter searches flat (the hierarchy holds baked costs).
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_cost)]
    cost: Vec<(String, f32)>,
    /// Never enter the area, or take the off-mesh links, named NAME; repeatable.
    #[arg(long, value_name = "NAME")]
    avoid: Vec<String>,
}

impl Args {
    fn planner(&self) -> Planner {
        if self.flat {
            Planner::Flat
        } else {
            Planner::Hierarchical
        }
    }

    /// The `--cost` and `--avoid` filter resolved against `query`'s navmesh; a name it does
    /// not have is a usage error.
    fn costs(&self, query: &Query) -> Result<Costs, Failure> {
        let filter = Filter {
            costs: self.cost.clone(),
            avoid: self.avoid.clone(),
        };
        query.costs(&filter).map_err(|e| {
            Failure::new(
                exit::USAGE,
                anyhow::anyhow!("{}: {e}", self.navmesh.display()),
            )
        })
    }
}

/// `NAME=VALUE` with a number >= 0.
fn parse_cost(text: &str) -> Result<(String, f32), String> {
    let (name, value) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("`{text}` is not NAME=VALUE"))?;
    let cost: f32 = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` in `{text}` is not a number"))?;
    if name.is_empty() || !(cost.is_finite() && cost >= 0.0) {
        return Err(format!("`{text}`: a name, and a cost >= 0"));
    }
    Ok((name.to_string(), cost))
}

pub fn run(args: Args) -> Result<(), Failure> {
    // clap does not enforce `requires = "batch"` once --from or --random-pairs, which
    // conflict with --batch, are given: a --threads that would do nothing is refused here.
    if args.threads.is_some() && args.batch.is_none() {
        return Err(Failure::new(
            exit::USAGE,
            anyhow::anyhow!("--threads sets the threads of a --batch; give --batch PAIRS.jsonl"),
        ));
    }
    let file = crate::navmesh::open(&args.navmesh)?;
    let query = Query::new(file.mesh());
    let costs = args.costs(&query)?;
    if let Some(n) = args.random_pairs {
        return random_pairs(&args, &query, n, &costs);
    }
    if let Some(pairs) = &args.batch {
        return batch(pairs, args.threads, &query, (args.planner(), &costs));
    }
    let (Some(from), Some(to)) = (args.from, args.to) else {
        // clap already requires --from and --to together unless --random-pairs is given.
        return Err(Failure::new(
            exit::USAGE,
            anyhow::anyhow!("give --from and --to, or --random-pairs"),
        ));
    };
    let a = query.path_costed(from, to, args.planner(), &costs);
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
fn random_pairs(args: &Args, query: &Query, n: u32, costs: &Costs) -> Result<(), Failure> {
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
            let answer = query.path_costed(from, to, args.planner(), costs);
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

/// Lines of a batch read, parsed and answered at a time (their answers are written before
/// the next are read: memory stays bounded whatever the batch's length).
const BATCH_LINES: usize = 4096;

/// One pair of a batch.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Pair {
    from: [f64; 3],
    to: [f64; 3],
}

/// Line `number` of batch `name` as a pair; otherwise bad input naming the line and the column
/// where it went wrong (`name:line:column:`) (serde's own position counts the line alone as line 1, so it is left
/// out of its message).
fn parse_pair(line: &[u8], name: &str, number: usize) -> Result<Pair, Failure> {
    let bad = |column: Option<usize>, why: String| {
        let at = column.map_or(String::new(), |c| format!(":{c}"));
        Failure::new(
            exit::BAD_INPUT,
            anyhow::anyhow!(
                "{name}:{number}{at}: not a pair {{\"from\": [x, y, z], \"to\": [x, y, z]}}: {why}"
            ),
        )
    };
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line)
        .map_err(|e| bad(Some(e.valid_up_to() + 1), "not UTF-8 text".to_string()))?;
    if text.trim().is_empty() {
        return Err(bad(None, "the line is empty".to_string()));
    }
    serde_json::from_str::<Pair>(text).map_err(|e| {
        let full = e.to_string();
        let position = format!(" at line {} column {}", e.line(), e.column());
        let why = full.strip_suffix(&position).unwrap_or(&full).to_string();
        bad((e.column() > 0).then_some(e.column()), why)
    })
}

/// `tessera path NAV --batch PAIRS.jsonl`: each line answered as `--json` answers one pair,
/// in input order, on `threads` threads (each with its own search buffers: `Query` is
/// shared). A line that is not a pair stops the batch with its line number, after the
/// answers to the lines before its group.
fn batch(
    pairs: &std::path::Path,
    threads: Option<u16>,
    query: &Query,
    (planner, costs): (Planner, &Costs),
) -> Result<(), Failure> {
    use rayon::prelude::*;
    use std::io::BufRead;
    let name = pairs.display().to_string();
    let reader: Box<dyn BufRead> = if pairs.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let io = |e: std::io::Error| {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                exit::BAD_INPUT
            } else {
                exit::IO
            };
            Failure::new(code, anyhow::anyhow!("{name}: {e}"))
        };
        let file = std::fs::File::open(pairs).map_err(io)?;
        // A folder opens, and fails only when read ("Is a directory"): named as what it is.
        if file.metadata().map_err(io)?.is_dir() {
            return Err(Failure::new(
                exit::BAD_INPUT,
                anyhow::anyhow!("{name}: a folder, not a file of pairs"),
            ));
        }
        Box::new(std::io::BufReader::new(file))
    };
    let threads = threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("path-{i}"))
        .build()
        .map_err(|e| Failure::new(exit::IO, anyhow::anyhow!("cannot start threads: {e}")))?;
    // Lines as bytes: a line that is not UTF-8 is a bad line, named by its number, not a
    // failure to read the file.
    let mut lines = reader.split(b'\n').enumerate();
    out::print(|out| loop {
        let mut group: Vec<(usize, Vec<u8>)> = Vec::with_capacity(BATCH_LINES);
        for (i, line) in lines.by_ref().take(BATCH_LINES) {
            let line = line.map_err(|e| Failure::new(exit::IO, anyhow::anyhow!("{name}: {e}")))?;
            group.push((i + 1, line));
        }
        if group.is_empty() {
            return Ok(());
        }
        let parsed: Vec<Pair> = group
            .iter()
            .map(|(number, line)| parse_pair(line, &name, *number))
            .collect::<Result<_, _>>()?;
        let answers: Vec<String> = pool.install(|| {
            parsed
                .par_iter()
                .map(|p| {
                    serde_json::to_string(&query.path_costed(p.from, p.to, planner, costs))
                        .expect("an answer serializes")
                })
                .collect()
        });
        for a in answers {
            writeln!(out, "{a}")?;
        }
    })
}
