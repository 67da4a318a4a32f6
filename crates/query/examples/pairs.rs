//! Seeded random pairs of points on a navmesh, one `{"from": [x, y, z], "to": [x, y, z]}` a
//! line (scene coordinates), for `tessera path --batch`.
//!
//! ```sh
//! cargo run --release -p tessera-query --example pairs -- NAV.tsn N [SEED] [unreachable] > pairs.jsonl
//! ```
//!
//! Points are area-weighted (`Query::random_point`), drawn as `tessera path --random-pairs`
//! draws them. With `unreachable`, only pairs whose ends lie in different connected components
//! are kept, until there are N.

use std::io::Write;

use tessera_navmesh::NavMeshFile;
use tessera_query::{Query, Rng};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: pairs NAV.tsn N [SEED] [unreachable]";
    let file = NavMeshFile::open(args.get(1).expect(usage)).expect("a navmesh");
    let n: usize = args.get(2).expect(usage).parse().expect(usage);
    let seed: u64 = args.get(3).map_or(1, |s| s.parse().expect(usage));
    let unreachable = args.get(4).is_some_and(|a| a == "unreachable");
    let q = Query::new(file.mesh());
    let component = |p: u32| file.mesh().polys[p as usize].component.to_native();
    let mut rng = Rng::new(seed);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut written = 0;
    while written < n {
        let (Some((sp, a)), Some((ep, b))) = (q.random_point(&mut rng), q.random_point(&mut rng))
        else {
            panic!("the navmesh has no walkable area");
        };
        if unreachable && component(sp) == component(ep) {
            continue;
        }
        let pair = format!(
            "{{\"from\": {:?}, \"to\": {:?}}}",
            q.to_scene(a),
            q.to_scene(b)
        );
        writeln!(out, "{pair}").expect("stdout");
        written += 1;
    }
}
