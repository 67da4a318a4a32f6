//! Flat against hierarchical path queries on one navmesh: lengths and times on seeded
//! random pairs, by distance between the ends; what the cluster settings were chosen with.
//!
//! ```sh
//! cargo run --release -p tessera-query --example hierarchy -- NAV.tsn [PAIRS] [SEED] \
//!     [MAX_POLYGONS MIN_SIDE_CELLS [ENTRANCE_SPACING [MIN_SPACING]]]
//! ```
//!
//! With the cluster settings, the hierarchy is built again with them first
//! (`tessera_navgraph::hierarchy_of`); without, the file's own is used. `DUMP=K` also prints
//! pair K's two answers: their lengths, the clusters they cross and their corners.

use std::time::Instant;

use tessera_navmesh::{NavMesh, NavMeshFile};
use tessera_query::{Planner, Query, Rng};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let pairs: usize = args.get(2).map_or(2000, |a| a.parse().unwrap());
    let seed: u64 = args.get(3).map_or(1, |a| a.parse().unwrap());
    let file = NavMeshFile::open(path).unwrap();
    let bytes = if let (Some(n), Some(side)) = (args.get(4), args.get(5)) {
        let mut mesh: NavMesh =
            rkyv::deserialize::<NavMesh, rkyv::rancor::Error>(file.mesh()).unwrap();
        let defaults = tessera_navgraph::ClusterSettings::default();
        let settings = tessera_navgraph::ClusterSettings {
            max_polygons: n.parse().unwrap(),
            min_side_cells: side.parse().unwrap(),
            entrance_spacing: args
                .get(6)
                .map_or(defaults.entrance_spacing, |a| a.parse().unwrap()),
            entrance_min_spacing: args
                .get(7)
                .map_or(defaults.entrance_min_spacing, |a| a.parse().unwrap()),
        };
        let t = Instant::now();
        mesh.hierarchy = tessera_navgraph::hierarchy_of(&mesh, &settings).unwrap();
        eprintln!("hierarchy built in {:.2} s", t.elapsed().as_secs_f64());
        tessera_navmesh::aligned(&tessera_navmesh::encode(&mesh))
    } else {
        tessera_navmesh::aligned(&std::fs::read(path).unwrap())
    };
    let mesh = tessera_navmesh::access(&bytes, path).unwrap();
    let h = &mesh.hierarchy;
    let sizes: Vec<u32> = h.clusters.iter().map(|c| c.polygons.to_native()).collect();
    let ents: Vec<u32> = h
        .clusters
        .iter()
        .map(|c| c.entrance_count.to_native())
        .collect();
    eprintln!(
        "{} polygons, {} clusters (mean {:.1} polygons, max {}), {} entrances (mean {:.1}, max {}), {} lengths",
        mesh.polys.len(),
        sizes.len(),
        sizes.iter().sum::<u32>() as f64 / sizes.len().max(1) as f64,
        sizes.iter().max().unwrap_or(&0),
        h.entrances.len(),
        ents.iter().sum::<u32>() as f64 / ents.len().max(1) as f64,
        ents.iter().max().unwrap_or(&0),
        h.costs.len()
    );
    let mut hist = [(0u32, 0u32); 12];
    for &n in &sizes {
        let b = (32 - n.leading_zeros()) as usize;
        hist[b.min(11)].0 += 1;
        hist[b.min(11)].1 += n;
    }
    eprintln!("clusters by size (2^(b-1)..2^b): {hist:?}");
    let t = Instant::now();
    let q = Query::new(mesh);
    eprintln!("Query::new {:.3} s", t.elapsed().as_secs_f64());
    let mut rng = Rng::new(seed);
    let mut points = Vec::new();
    for _ in 0..pairs {
        let a = q.random_point(&mut rng).unwrap();
        let b = q.random_point(&mut rng).unwrap();
        points.push((a, b));
    }
    let plan = |pts: &[[f32; 3]]| -> f64 {
        pts.windows(2)
            .map(|w| ((w[1][0] - w[0][0]) as f64).hypot((w[1][1] - w[0][1]) as f64))
            .sum()
    };
    let mut results = Vec::new();
    for planner in [Planner::Flat, Planner::Hierarchical] {
        let mut times = Vec::new();
        let mut lens = Vec::new();
        // A warm-up pass, then the timed one.
        for _ in 0..2 {
            times.clear();
            lens.clear();
            for &((sp, s), (ep, e)) in &points {
                let t = Instant::now();
                let c = q.find_path_with(sp, s, ep, e, planner);
                let pts = if c.found {
                    q.straight_path(s, e, &c.polys)
                } else {
                    Vec::new()
                };
                times.push(t.elapsed().as_secs_f64() * 1e6);
                lens.push(c.found.then(|| plan(&pts)));
            }
        }
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        eprintln!(
            "{planner:?}: mean {:.1} us, p50 {:.1}, p99 {:.1}, max {:.1}",
            mean,
            sorted[sorted.len() / 2],
            sorted[(sorted.len() * 99).div_ceil(100) - 1],
            sorted[sorted.len() - 1]
        );
        results.push((times.clone(), lens.clone()));
    }
    let (flat, hier) = (&results[0], &results[1]);
    // By straight distance between the ends: mean times and pairs over 1 %.
    let mut buckets = [(0usize, 0.0f64, 0.0f64, 0usize); 8];
    for (i, &((_, s), (_, e))) in points.iter().enumerate() {
        let d = ((s[0] - e[0]) as f64).hypot((s[1] - e[1]) as f64);
        let b = ((d / 25.0).max(1.0).log2() as usize).min(7);
        buckets[b].0 += 1;
        buckets[b].1 += flat.0[i];
        buckets[b].2 += hier.0[i];
        if let (Some(f), Some(hl)) = (flat.1[i], hier.1[i]) {
            if hl > f * 1.01 {
                buckets[b].3 += 1;
            }
        }
    }
    for (b, x) in buckets.iter().enumerate() {
        if x.0 > 0 {
            eprintln!(
                "  distance {:>5}-{:<5} m: {:5} pairs, flat {:8.1} us, hier {:8.1} us, over 1 % {}",
                if b == 0 { 0 } else { 25 << b },
                25 << (b + 1),
                x.0,
                x.1 / x.0 as f64,
                x.2 / x.0 as f64,
                x.3
            );
        }
    }
    let mut same_cluster_diff = 0;
    let mut ratios = Vec::new();
    let mut found_diff = 0;
    for (i, &((sp, _), (ep, _))) in points.iter().enumerate() {
        match (flat.1[i], hier.1[i]) {
            (Some(f), Some(hl)) => {
                let same = h.is_empty() || h.cluster_of(sp) == h.cluster_of(ep);
                if same && f != hl {
                    same_cluster_diff += 1;
                }
                if !same {
                    ratios.push((hl / f.max(1e-9), i));
                }
            }
            (None, None) => {}
            _ => found_diff += 1,
        }
    }
    if let Ok(k) = std::env::var("DUMP") {
        let i: usize = k.parse().unwrap();
        let ((sp, s), (ep, e)) = points[i];
        eprintln!(
            "pair {i}: from {s:?} (polygon {sp}, cluster {}) to {e:?} (polygon {ep}, cluster {})",
            h.cluster_of(sp),
            h.cluster_of(ep)
        );
        for planner in [Planner::Flat, Planner::Hierarchical] {
            let c = q.find_path_with(sp, s, ep, e, planner);
            let pts = q.straight_path(s, e, &c.polys);
            let mut cl: Vec<u32> = c.polys.iter().map(|&p| h.cluster_of(p)).collect();
            cl.dedup();
            eprintln!(
                "  {planner:?}: len {:.2}, polys {}, clusters {:?}",
                plan(&pts),
                c.polys.len(),
                cl
            );
            eprintln!(
                "    points {:?}",
                pts.iter()
                    .map(|p| [p[0].round(), p[1].round()])
                    .collect::<Vec<_>>()
            );
        }
    }
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = ratios.len().max(1);
    let over = |x: f64| ratios.iter().filter(|r| r.0 > 1.0 + x).count();
    eprintln!(
        "pairs across clusters: {}; equal (1e-6) {}, over 0.1 % {}, over 1 % {}, over 5 % {}, shorter {}; p50 {:.5} p99 {:.5} max {:.5} (pair {}); same-cluster pairs differing {same_cluster_diff}; found differs {found_diff}",
        ratios.len(),
        ratios.iter().filter(|r| (r.0 - 1.0).abs() <= 1e-6).count(),
        over(0.001),
        over(0.01),
        over(0.05),
        ratios.iter().filter(|r| r.0 < 1.0 - 1e-6).count(),
        ratios[n / 2].0,
        ratios[(n * 99).div_ceil(100) - 1].0,
        ratios[n - 1].0,
        ratios[n - 1].1,
    );
}
