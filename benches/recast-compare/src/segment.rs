//! The second comparison: what happens to a tile after voxelization. tessera segments it into
//! regions (layered or flat) and traces their contours, then merges regions and joins contours
//! across tiles; Recast builds a distance field, watershed regions and contours per tile, and
//! stops there.
//!
//! | step | tessera | Recast |
//! |---|---|---|
//! | input (untimed) | `voxelize_tile(..).field` | the harness's compact heightfield after erosion |
//! | regions | `tessera_regions::segment_tile` (layered or flat) | `rcBuildDistanceField`, `rcBuildRegions` |
//! | contours | `tessera_contours::trace_tile` | `rcBuildContours` (+ `rcFreeContourSet`) |
//! | across tiles | `RegionMerger::add_tile` + `ContourJoiner::add` per chain, in tile order | none |
//!
//! Each run rebuilds every tile's input just before timing its later stages, one tile at a
//! time, on both sides: the input is as warm in the caches as it is in a real build, and no
//! scene has to keep every tile's voxels in memory. The tessera per-tile outputs are kept until
//! the merge, which runs after the last tile as the pipeline's writer would (the writer
//! interleaves it with the workers; on one thread the sum is the same work).

use crate::compare::{recast_tile, RecastTile};
use crate::recast::{self, Context, ContourCounts, ContourSet, RecastError};
use crate::scene::TiledScene;
use std::time::{Duration, Instant};
use tessera_artifacts::{Levels, TileContours, TileRegions};
use tessera_config::SegmentationMode;
use tessera_contours::ContourJoiner;
use tessera_regions::segment_tile;
use tessera_stitch::RegionMerger;
use tessera_voxel::voxelize_tile;

/// Recast's settings for the region and contour stages.
#[derive(Clone, Copy, Debug)]
pub struct RecastSettings {
    /// `minRegionArea` [cells].
    pub min_region_area: i32,
    /// `mergeRegionArea` [cells].
    pub merge_region_area: i32,
    /// `maxError` of `rcBuildContours` [cells].
    pub max_error: f32,
    /// `maxEdgeLen` [cells], 0 for none.
    pub max_edge_len: i32,
    /// `buildFlags`.
    pub flags: i32,
}

impl Default for RecastSettings {
    /// RecastDemo's region sizes (8 and 20 cells on a side, which it squares into areas of 64
    /// and 400 cells), contours unsimplified (maxError 0, no edge length limit) with the
    /// default flag, which does nothing without an edge length limit.
    fn default() -> Self {
        RecastSettings {
            min_region_area: 8 * 8,
            merge_region_area: 20 * 20,
            max_error: 0.0,
            max_edge_len: 0,
            flags: recast::CONTOUR_TESS_WALL_EDGES,
        }
    }
}

/// tessera's seconds, summed over tiles.
#[derive(Clone, Copy, Debug)]
pub struct TesseraTimes {
    pub segment: Duration,
    pub trace: Duration,
    /// `add_tile` and `add` for every chain, over all tiles.
    pub merge: Duration,
}

impl TesseraTimes {
    pub fn per_tile(&self) -> Duration {
        self.segment + self.trace
    }

    pub fn total(&self) -> Duration {
        self.segment + self.trace + self.merge
    }

    fn min(self, o: TesseraTimes) -> TesseraTimes {
        TesseraTimes {
            segment: self.segment.min(o.segment),
            trace: self.trace.min(o.trace),
            merge: self.merge.min(o.merge),
        }
    }
}

/// What tessera produced (the same on every run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TesseraCounts {
    /// Walkable spans of the tiles' cores.
    pub walkable: u64,
    /// Regions per tile, summed (what a per-tile segmentation alone gives).
    pub tile_regions: u64,
    /// Regions after the merge.
    pub merged_regions: u64,
    /// Cycles closed inside one tile.
    pub tile_cycles: u64,
    /// Chains that leave their tile.
    pub chains: u64,
    /// Contours after the join (tile cycles and joined cycles).
    pub contours: u64,
    pub vertices: u64,
    pub third_class_removed: u64,
    /// Regions and chains still open after the last tile (both should be 0).
    pub left_open: (usize, usize),
}

/// Recast's seconds, summed over tiles.
#[derive(Clone, Copy, Debug)]
pub struct RecastTimes {
    pub distance_field: Duration,
    pub regions: Duration,
    pub contours: Duration,
}

impl RecastTimes {
    pub fn regions_total(&self) -> Duration {
        self.distance_field + self.regions
    }

    pub fn total(&self) -> Duration {
        self.distance_field + self.regions + self.contours
    }

    fn min(self, o: RecastTimes) -> RecastTimes {
        RecastTimes {
            distance_field: self.distance_field.min(o.distance_field),
            regions: self.regions.min(o.regions),
            contours: self.contours.min(o.contours),
        }
    }
}

/// What Recast produced, over the tiles' cores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecastCounts {
    pub walkable: u64,
    /// Regions per tile, summed.
    pub regions: u64,
    /// Spans that belong to a region (the rest were in regions too small to keep).
    pub region_spans: u64,
    pub contours: ContourCounts,
}

/// A Recast setting other than the main one, timed on the same compact heightfields right
/// after the main measurement.
#[derive(Clone, Debug)]
pub struct Variant {
    pub label: String,
    /// Regions rebuilt (distance field reused), when the variant changes them.
    pub regions: Option<Duration>,
    pub contours: Duration,
    pub region_count: Option<u64>,
    pub counts: ContourCounts,
}

/// The variants: RecastDemo's contour error as it passes it (1.3, which Recast compares with
/// distances in cells), the same figure read as metres and converted to cells, and the region
/// sizes 8 / 20 taken as areas rather than squared.
pub fn variant_settings(
    main: &RecastSettings,
    cell_size: f64,
) -> Vec<(String, RecastSettings, bool)> {
    let metres = (1.3 / cell_size) as f32;
    vec![
        (
            "contours, maxError 1.3 cells (RecastDemo's value as Recast uses it)".to_string(),
            RecastSettings {
                max_error: 1.3,
                ..*main
            },
            false,
        ),
        (
            format!("contours, maxError {metres} cells (1.3 m at {cell_size} m cells)"),
            RecastSettings {
                max_error: metres,
                ..*main
            },
            false,
        ),
        (
            "regions with minRegionArea 8, mergeRegionArea 20 cells; contours maxError 0"
                .to_string(),
            RecastSettings {
                min_region_area: 8,
                merge_region_area: 20,
                ..*main
            },
            true,
        ),
    ]
}

/// One tessera run over every tile: per-tile segment + trace, then the merge in tile order.
pub fn tessera_run(scene: &TiledScene, levels: Levels) -> (TesseraTimes, TesseraCounts) {
    let mut times = TesseraTimes {
        segment: Duration::ZERO,
        trace: Duration::ZERO,
        merge: Duration::ZERO,
    };
    let mut counts = TesseraCounts::default();
    let mut tiles: Vec<(TileRegions, TileContours)> = Vec::with_capacity(scene.tiles.len());
    let areas = scene.default_areas();
    for (t, tris) in &scene.tiles {
        let field =
            voxelize_tile(&scene.frame, &scene.params, *t, tris, &areas[..tris.len()]).field;
        let t0 = Instant::now();
        let regions = segment_tile(&field, *t, levels);
        let t1 = Instant::now();
        let contours = tessera_contours::trace_tile(
            &field,
            &regions,
            tessera_artifacts::Reach {
                climb: scene.params.walkable_climb,
                height: scene.params.walkable_height,
            },
        );
        let t2 = Instant::now();
        times.segment += t1 - t0;
        times.trace += t2 - t1;
        counts.walkable += field.core_counts().1;
        counts.tile_regions += regions.regions.len() as u64;
        counts.tile_cycles += contours.cycles.len() as u64;
        counts.chains += contours.chains.len() as u64;
        drop(field);
        tiles.push((regions, contours));
    }
    let mut merger = RegionMerger::new();
    let mut joiner = ContourJoiner::new();
    for (regions, contours) in tiles {
        let TileContours { cycles, chains } = contours;
        let mut joined = Vec::new();
        let t0 = Instant::now();
        let closed = merger.add_tile(&regions);
        for chain in chains {
            joined.extend(joiner.add(chain));
        }
        times.merge += t0.elapsed();
        counts.merged_regions += closed.len() as u64;
        for c in cycles.iter().chain(&joined) {
            counts.contours += 1;
            counts.vertices += c.points.len() as u64;
        }
    }
    counts.third_class_removed = joiner.third_class_removed;
    counts.left_open = (merger.open_regions(), joiner.open_chains());
    (times, counts)
}

/// One Recast run over every tile, with the variants (`variants` as from
/// [`variant_settings`]).
pub fn recast_run(
    ctx: &Context,
    scene: &TiledScene,
    tiles: &[RecastTile],
    settings: &RecastSettings,
    variants: &[(String, RecastSettings, bool)],
) -> Result<(RecastTimes, RecastCounts, Vec<Variant>), RecastError> {
    let border = scene.params.band as i32;
    let mut times = RecastTimes {
        distance_field: Duration::ZERO,
        regions: Duration::ZERO,
        contours: Duration::ZERO,
    };
    let mut counts = RecastCounts::default();
    let mut out: Vec<Variant> = variants
        .iter()
        .map(|(label, _, regions)| Variant {
            label: label.clone(),
            regions: regions.then_some(Duration::ZERO),
            contours: Duration::ZERO,
            region_count: regions.then_some(0),
            counts: ContourCounts::default(),
        })
        .collect();
    let contours = |chf: &recast::CompactHeightfield, s: &RecastSettings| {
        let t0 = Instant::now();
        let set = ContourSet::build(ctx, chf, s.max_error, s.max_edge_len, s.flags)?;
        let built = t0.elapsed();
        let c = set.counts();
        let t1 = Instant::now();
        drop(set);
        Ok::<_, RecastError>((built + t1.elapsed(), c))
    };
    for tile in tiles {
        let [x0, z0, w, d] = tile.core;
        let mut chf = recast_tile(ctx, tile, scene, |_, _| {})?.chf;
        counts.walkable += chf.walkable(x0, z0, w, d);
        let t0 = Instant::now();
        chf.build_distance_field(ctx)?;
        let t1 = Instant::now();
        chf.build_regions(
            ctx,
            border,
            settings.min_region_area,
            settings.merge_region_area,
        )?;
        let t2 = Instant::now();
        times.distance_field += t1 - t0;
        times.regions += t2 - t1;
        let (regions, spans) = chf.region_counts(x0, z0, w, d);
        counts.regions += regions;
        counts.region_spans += spans;
        let (s, c) = contours(&chf, settings)?;
        times.contours += s;
        counts.contours += c;
        // Contour variants first, while the main regions are in place; then region variants.
        for (v, (_, vs, rebuild)) in out.iter_mut().zip(variants) {
            if *rebuild {
                continue;
            }
            let (s, c) = contours(&chf, vs)?;
            v.contours += s;
            v.counts += c;
        }
        for (v, (_, vs, rebuild)) in out.iter_mut().zip(variants) {
            if !*rebuild {
                continue;
            }
            let t0 = Instant::now();
            chf.build_regions(ctx, border, vs.min_region_area, vs.merge_region_area)?;
            if let Some(r) = &mut v.regions {
                *r += t0.elapsed();
            }
            if let Some(n) = &mut v.region_count {
                *n += chf.region_counts(x0, z0, w, d).0;
            }
            let (s, c) = contours(&chf, vs)?;
            v.contours += s;
            v.counts += c;
        }
    }
    Ok((times, counts, out))
}

/// The name of a segmentation mode, as tessera's config spells it.
pub fn mode_name(mode: SegmentationMode) -> &'static str {
    match mode {
        SegmentationMode::Flat => "flat",
        SegmentationMode::Layered => "layered",
        SegmentationMode::Surface => "surface",
    }
}

/// tessera in one segmentation mode.
pub struct TesseraSide {
    pub mode: SegmentationMode,
    /// Floors per region level [voxels].
    pub step: u32,
    pub times: TesseraTimes,
    pub counts: TesseraCounts,
}

/// Everything measured on one scene.
pub struct RegionsResult {
    pub name: String,
    pub tiles: usize,
    /// One per mode asked for, in that order.
    pub tessera: Vec<TesseraSide>,
    pub recast: RecastTimes,
    pub recast_counts: RecastCounts,
    pub variants: Vec<Variant>,
}

/// Best of `repeat` runs of each side (tessera once per mode), alternating; every figure is
/// its own best.
pub fn run(
    name: String,
    scene: &TiledScene,
    tiles: &[RecastTile],
    modes: &[(SegmentationMode, Levels)],
    settings: &RecastSettings,
    repeat: usize,
) -> Result<RegionsResult, RecastError> {
    let ctx = Context::new();
    let variants = variant_settings(settings, scene.frame.cell_size);
    let mut best: Option<RegionsResult> = None;
    for _ in 0..repeat.max(1) {
        let sides: Vec<TesseraSide> = modes
            .iter()
            .map(|&(mode, levels)| {
                let (times, counts) = tessera_run(scene, levels);
                TesseraSide {
                    mode,
                    step: levels.step,
                    times,
                    counts,
                }
            })
            .collect();
        let (rt, rc, vs) = recast_run(&ctx, scene, tiles, settings, &variants)?;
        best = Some(match best {
            None => RegionsResult {
                name: name.clone(),
                tiles: scene.tiles.len(),
                tessera: sides,
                recast: rt,
                recast_counts: rc,
                variants: vs,
            },
            Some(mut b) => {
                for (bs, s) in b.tessera.iter_mut().zip(sides) {
                    if bs.counts != s.counts {
                        eprintln!("warning: {name}: tessera's counts differ between runs");
                    }
                    bs.times = bs.times.min(s.times);
                }
                if b.recast_counts != rc {
                    eprintln!("warning: {name}: Recast's counts differ between runs");
                }
                b.recast = b.recast.min(rt);
                for (bv, v) in b.variants.iter_mut().zip(vs) {
                    bv.contours = bv.contours.min(v.contours);
                    bv.regions = bv.regions.zip(v.regions).map(|(a, b)| a.min(b));
                }
                b
            }
        });
    }
    let result = best.expect("at least one run");
    for side in &result.tessera {
        let (regions, chains) = side.counts.left_open;
        if (regions, chains) != (0, 0) {
            eprintln!(
                "warning: {} ({}): {regions} regions and {chains} contour chains still open after the last tile",
                result.name,
                mode_name(side.mode)
            );
        }
    }
    Ok(result)
}
