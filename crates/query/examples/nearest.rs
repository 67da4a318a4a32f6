//! Nearest-polygon lookups on one navmesh: seeded random surface points, each moved by
//! `UP` metres up and 0.6 and -0.4 times that sideways (0.5 by default; 0 looks up the
//! points themselves), looked up with the path query's search box; prints the mean time.
//!
//! ```sh
//! cargo run --release -p tessera-query --example nearest -- NAV.tsn [POINTS] [SEED] [UP]
//! ```

use std::time::Instant;

use tessera_navmesh::NavMeshFile;
use tessera_query::{Query, Rng};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let file = NavMeshFile::open(&args[1]).unwrap();
    let n: usize = args.get(2).map_or(100_000, |a| a.parse().unwrap());
    let seed: u64 = args.get(3).map_or(1, |a| a.parse().unwrap());
    let up: f32 = args.get(4).map_or(0.5, |a| a.parse().unwrap());
    let q = Query::new(file.mesh());
    let mut rng = Rng::new(seed);
    let ext = q.snap_extent();
    let points: Vec<[f32; 3]> = (0..n)
        .filter_map(|_| q.random_point(&mut rng))
        .map(|(_, p)| [p[0] + 0.6 * up, p[1] - 0.4 * up, p[2] + up])
        .collect();
    let t = Instant::now();
    let mut found = 0usize;
    for &p in &points {
        found += usize::from(q.nearest(p, ext).is_some());
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{} points, {found} snapped, {:.3} us each",
        points.len(),
        s * 1e6 / points.len().max(1) as f64
    );
}
