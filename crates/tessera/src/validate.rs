//! `tessera validate`: checks a navmesh and exits 1 when any check fails, with the list of
//! what failed (text, or one JSON object whose layout scripts may rely on).
//!
//! The checks, in order: the file (magic, version, checksum, structure, indices, convex
//! polygons, components: what loading it validates), degenerate polygons, one-way portals,
//! open edges (`tessera_query::audit`), seeded random paths searched both ways, and with
//! `--scene` seeded random points against the scene's surface. Places are given in the
//! scene's coordinates.

use std::path::PathBuf;

use serde_json::{json, Value};
use tessera_query::audit::{audit_heights, audit_mesh, audit_paths};
use tessera_query::Query;

use crate::exit::{self, Failure};
use crate::out;

/// At most this many failures of one check are listed (all are counted).
const LISTED: usize = 100;

#[derive(clap::Args)]
pub struct Args {
    /// The navmesh file (navmesh.tsn in a bake folder).
    navmesh: PathBuf,
    /// Random pairs of points searched both ways (0: no path check).
    #[arg(long, default_value_t = 1000)]
    pairs: u64,
    /// Seed of the random pairs: the same seed gives the same pairs and the same report.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Forward and backward paths may differ in plan length by this fraction of the longer.
    #[arg(long, default_value_t = 0.001)]
    tolerance: f64,
    /// The scene the navmesh was baked from: random points on the mesh must lie on its
    /// surface (read with the up axis the navmesh records).
    #[arg(long, value_name = "SCENE")]
    scene: Option<PathBuf>,
    /// Random points checked against the scene's surface.
    #[arg(long, default_value_t = 10_000)]
    height_samples: u64,
    /// How far a point's height may be from the scene's surface [m] (default: twice the
    /// agent's climb: a mesh over a flight of steps is a ramp, up to about a climb off the
    /// steps beside and below it, on top of a voxel and the height detail's error).
    #[arg(long)]
    height_tolerance: Option<f64>,
    /// How far in plan the surface is looked for around a point [m] (default: the agent's
    /// radius plus a cell, beyond the simplification's error at any preset).
    #[arg(long)]
    reach: Option<f64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// One check's outcome: its name, how many failed, the first [`LISTED`] failures.
struct Check {
    name: &'static str,
    failed: usize,
    listed: Vec<Value>,
    /// Counts besides (the path check's pairs).
    extra: Value,
}

impl Check {
    fn new(name: &'static str, failures: impl ExactSizeIterator<Item = Value>) -> Check {
        let failed = failures.len();
        Check {
            name,
            failed,
            listed: failures.take(LISTED).collect(),
            extra: Value::Null,
        }
    }

    fn json(&self) -> Value {
        let mut v = json!({
            "name": self.name,
            "ok": self.failed == 0,
            "failed": self.failed,
            "failures": self.listed,
        });
        if let (Value::Object(v), Value::Object(extra)) = (&mut v, &self.extra) {
            v.extend(extra.clone());
        }
        v
    }
}

pub fn run(args: Args) -> Result<(), Failure> {
    let given = [
        ("--tolerance", Some(args.tolerance)),
        ("--height-tolerance", args.height_tolerance),
        ("--reach", args.reach),
    ];
    for (flag, value) in given {
        if let Some(v) = value.filter(|v| v.is_nan() || *v < 0.0 || v.is_infinite()) {
            return Err(Failure::new(
                exit::USAGE,
                anyhow::anyhow!("{flag} must be a finite number, 0 or more, got {v}"),
            ));
        }
    }
    let path = args.navmesh.as_path();
    let checks = match crate::navmesh::open(path) {
        // A file that is there but is no sound navmesh fails the first check; one that
        // cannot be found or read is not something to validate.
        Err(failure) if failure.code == exit::BAD_INPUT && path.is_file() => {
            vec![Check::new(
                "file",
                std::iter::once(json!({"message": format!("{:#}", failure.error)})),
            )]
        }
        Err(failure) => return Err(failure),
        Ok(file) => checks(&Query::new(file.mesh()), &args)?,
    };
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| c.failed > 0)
        .map(|c| c.name)
        .collect();
    out::print(|w| {
        if args.json {
            let report = json!({
                "file": path.display().to_string(),
                "ok": failed.is_empty(),
                "checks": checks.iter().map(Check::json).collect::<Vec<_>>(),
            });
            writeln!(w, "{report}")?;
        } else {
            for c in &checks {
                let verdict = if c.failed == 0 { "ok" } else { "FAILED" };
                writeln!(w, "{:<22} {verdict} ({} failed)", c.name, c.failed)?;
                for f in &c.listed {
                    writeln!(w, "  {f}")?;
                }
            }
        }
        Ok(())
    })?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::new(
            exit::CHECKS_FAILED,
            anyhow::anyhow!("{}: failed {}", path.display(), failed.join(", ")),
        ))
    }
}

/// The checks after the file's own.
fn checks(q: &Query, args: &Args) -> Result<Vec<Check>, Failure> {
    let scene = |p: [f32; 3]| q.to_scene(p);
    let mesh = q.mesh();
    let corner = |poly: u32, edge: u32| {
        let v = mesh.poly_vert_ids(poly).nth(edge as usize);
        v.map(|v| scene(mesh.vert(v)))
    };
    let audit = audit_mesh(q);
    let mut checks = vec![
        Check::new("file", std::iter::empty()),
        Check::new(
            "degenerate_polygons",
            audit.degenerate.iter().map(|&p| json!({"polygon": p})),
        ),
        Check::new(
            "one_way_portals",
            audit.one_way_portals.iter().map(|&(p, k, nb)| {
                json!({"polygon": p, "edge": k, "neighbour": nb, "at": corner(p, k)})
            }),
        ),
        Check::new(
            "open_edges",
            audit.open_edges.iter().map(|&(p, k, o, j)| {
                json!({"polygon": p, "edge": k, "other": o, "other_edge": j, "at": corner(p, k)})
            }),
        ),
    ];
    if args.pairs > 0 {
        let paths = audit_paths(q, args.pairs, args.seed, args.tolerance);
        let one_way = paths.one_way.iter().map(|&(pair, forward)| {
            json!({"pair": pair, "kind": "found one way only", "found_forward": forward})
        });
        let unequal = paths.unequal.iter().map(|&(pair, f, b)| {
            json!({"pair": pair, "kind": "lengths differ", "forward_m": f, "backward_m": b})
        });
        let off = paths
            .off_corridor
            .iter()
            .map(|&(pair, p)| json!({"pair": pair, "kind": "leaves its corridor", "at": scene(p)}));
        let all: Vec<Value> = one_way.chain(unequal).chain(off).collect();
        let mut check = Check::new("paths", all.into_iter());
        check.extra = json!({
            "pairs": paths.pairs,
            "found": paths.found,
            "reversible": paths.reversible,
            "seed": args.seed
        });
        checks.push(check);
    }
    if let Some(scene_file) = &args.scene {
        let frame = q.frame();
        let triangles = scene_triangles(scene_file, frame)?;
        let reach = args
            .reach
            .unwrap_or((frame.agent_radius + frame.cell_size) as f64);
        let tolerance = args
            .height_tolerance
            .unwrap_or(2.0 * frame.agent_climb as f64);
        let heights = audit_heights(
            q,
            &triangles,
            args.height_samples,
            args.seed,
            reach,
            tolerance,
        );
        let failures = heights
            .off_surface
            .iter()
            .map(|&(p, dz)| json!({"at": scene(p), "nearest_height_difference_m": dz}));
        let mut check = Check::new("heights", failures.collect::<Vec<_>>().into_iter());
        let d = &heights.differences;
        let at = |q: f64| {
            d.get(((d.len() as f64 - 1.0) * q).round() as usize)
                .copied()
        };
        check.extra = json!({
            "samples": heights.samples,
            "height_difference_m": {"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": d.last()},
            "scene_triangles": triangles.len(),
            "reach_m": reach,
            "tolerance_m": tolerance,
        });
        checks.push(check);
    }
    Ok(checks)
}

/// The triangles of `scene` in `frame`'s internal coordinates (Z up, rebased), read with the
/// up axis the navmesh records.
fn scene_triangles(
    scene: &std::path::Path,
    frame: &tessera_navmesh::Frame,
) -> Result<Vec<[[f32; 3]; 3]>, Failure> {
    let bad = |e: tessera_ingest::IngestError| {
        Failure::new(
            exit::BAD_INPUT,
            anyhow::anyhow!("cannot read the scene: {e}"),
        )
    };
    let scratch = tempfile::tempdir().map_err(|e| Failure::new(exit::IO, e))?;
    let mut source =
        tessera_ingest::open_scene(scene, frame.up_axis(), scratch.path()).map_err(bad)?;
    let mut out = Vec::new();
    let o = frame.origin;
    source
        .for_each_triangle(&mut |t| {
            out.push(t.map(|v| {
                [
                    (v[0] - o[0]) as f32,
                    (v[1] - o[1]) as f32,
                    (v[2] - o[2]) as f32,
                ]
            }));
            Ok(())
        })
        .map_err(bad)?;
    Ok(out)
}
