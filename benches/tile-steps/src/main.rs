//! `tile-steps BAKE_DIR [--repeat N] [--tiles N]`: times each per-tile step of the voxelize
//! stage over the tiles of a finished bake (its `work/tiles.pack` or the parts in `work/bins/`,
//! and `config.toml`), on one
//! thread, best of N per step, and prints a digest of every step's output so that a change
//! meant to keep the bytes can be checked against the build before it.
//!
//! Steps: rasterize, low hanging obstacles, ledges, clearance, erosion, crop to the core and
//! its ring, segmentation, contour tracing, encoding and compressing the span field.

use std::hash::Hasher;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tessera_artifacts::{GridFrame, Reach, TileCoord};
use tessera_config::BakeConfig;
use tessera_voxel::{filters, rasterize};
use xxhash_rust::xxh3::Xxh3;

const STEPS: [&str; 9] = [
    "rasterize",
    "low hanging",
    "ledges",
    "clearance",
    "erosion",
    "crop",
    "segment",
    "trace",
    "encode + lz4",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(
        args.first()
            .ok_or("usage: tile-steps BAKE_DIR [--repeat N]")?,
    );
    let opt = |name: &str, default: usize| -> usize {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let repeat = opt("--repeat", 3);
    let max_tiles = opt("--tiles", usize::MAX);
    let config = BakeConfig::load(&dir.join("config.toml").display().to_string())?;
    let params = config.voxel_params();
    // The tile pack, or the parts the scene was binned in, a tile's chunks in part order.
    let packs = tessera_pipeline::TilePacks::open_bake(&tessera_pipeline::BakeLayout::new(&dir))?;
    let frame = GridFrame::decode(&packs.header()[8..])?;
    let coords: std::collections::HashMap<u32, TileCoord> = frame
        .tile_coords()
        .map(|c| (frame.tile_index(c) as u32, c))
        .collect();
    let keys: Vec<u32> = packs.keys().into_iter().take(max_tiles).collect();
    // Each tile's triangles and their areas.
    type Tile = (TileCoord, Vec<[[f32; 3]; 3]>, Vec<u8>);
    let tiles: Vec<Tile> = keys
        .iter()
        .map(|&k| {
            let mut bytes = vec![0u8; packs.raw_len(k) as usize];
            packs.read_into(k, &mut bytes).expect("tile reads");
            let records = tessera_artifacts::triangles_from_bytes(&bytes).expect("tile decodes");
            let (triangles, areas) = records.iter().map(|t| (t.corners, t.area as u8)).unzip();
            (coords[&k], triangles, areas)
        })
        .collect();
    let levels = tessera_voxel::levels(&params);
    let reach = Reach {
        climb: params.walkable_climb,
        height: params.walkable_height,
    };
    let mut best = [Duration::MAX; STEPS.len()];
    let mut digests = [0u64; STEPS.len()];
    let mut spans = 0u64;
    for _ in 0..repeat {
        let mut sums = [Duration::ZERO; STEPS.len()];
        let mut erode_scratch = filters::ErodeScratch::default();
        let mut hashers: Vec<Xxh3> = (0..STEPS.len()).map(|_| Xxh3::new()).collect();
        spans = 0;
        for (coord, triangles, areas) in &tiles {
            let core = frame.tile_core(*coord);
            let rect = core.grown(frame.band);
            let mut t = Instant::now();
            let mut lap = |i: usize, t: &mut Instant| {
                sums[i] += t.elapsed();
                *t = Instant::now();
            };
            let mut field = rasterize::rasterize(&frame, &params, rect, core, triangles, areas);
            lap(0, &mut t);
            hashers[0].write(&field.encode());
            spans += field.spans.len() as u64;
            t = Instant::now();
            filters::filter_low_hanging_obstacles(&mut field, params.walkable_climb);
            lap(1, &mut t);
            // As the bake runs them (`filters::filter_all_in`): the ledge filter records the
            // links erosion walks when the clearance exceeds the climb.
            let linked = params.walkable_height > params.walkable_climb;
            if linked {
                filters::filter_ledges_linking(
                    &mut erode_scratch,
                    &mut field,
                    params.walkable_height,
                    params.walkable_climb,
                );
            } else {
                filters::filter_ledges(&mut field, params.walkable_height, params.walkable_climb);
            }
            lap(2, &mut t);
            filters::filter_low_clearance(&mut field, params.walkable_height);
            lap(3, &mut t);
            hashers[3].write(&field.encode());
            t = Instant::now();
            if linked {
                filters::erode_linked(&mut erode_scratch, &mut field, params.walkable_radius);
            } else {
                filters::erode_in(
                    &mut erode_scratch,
                    &mut field,
                    params.walkable_height,
                    params.walkable_climb,
                    params.walkable_radius,
                );
            }
            lap(4, &mut t);
            let field = field.crop(core.grown(1), core);
            lap(5, &mut t);
            hashers[5].write(&field.encode());
            t = Instant::now();
            let regions = tessera_regions::segment_tile(&field, *coord, levels);
            lap(6, &mut t);
            hashers[6].write(format!("{regions:?}").as_bytes());
            t = Instant::now();
            let contours = tessera_contours::trace_tile(&field, &regions, reach);
            lap(7, &mut t);
            hashers[7].write(format!("{contours:?}").as_bytes());
            t = Instant::now();
            let compressed = tessera_store::compress(&field.encode());
            lap(8, &mut t);
            hashers[8].write(&compressed);
        }
        for i in 0..STEPS.len() {
            best[i] = best[i].min(sums[i]);
            digests[i] = hashers[i].finish();
        }
    }
    println!(
        "{} tiles, {} rasterized spans, best of {repeat}",
        tiles.len(),
        spans
    );
    let total: Duration = best.iter().sum();
    for i in 0..STEPS.len() {
        println!(
            "{:>14} {:>8.3} s  {:>5.1} %  {:016x}",
            STEPS[i],
            best[i].as_secs_f64(),
            100.0 * best[i].as_secs_f64() / total.as_secs_f64(),
            digests[i]
        );
    }
    println!("{:>14} {:>8.3} s", "sum", total.as_secs_f64());
    Ok(())
}
