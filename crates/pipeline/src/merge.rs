//! Stage 4, merge: regions and contours joined across tile borders. It runs on a thread of
//! its own beside the voxelize stage's writer, one tile at a time in tile order as the writer
//! hands them on, while the workers voxelize the next tiles: union-find over border links
//! (`tessera_stitch::RegionMerger`), then open contour chains joined at tile borders with the
//! straight-through vertices the tiling made removed (`tessera_contours::ContourJoiner`).
//!
//! * Input: each tile's `TileRegions` and `TileContours`, from the voxelize workers.
//! * Output: `work/regions.pack`, one `RegionBatch` per tile (the regions and contours that
//!   tile closed); the journal is opened and lined up with the span journal by the voxelize
//!   stage, and shares its key: the merge reads no settings of its own.
//! * Memory: the open frontier (links waiting for an unseen tile, open regions and chains) is
//!   held from the budget as it grows and shrinks.
//! * Timer: the merge thread's busy time (stitching, joining, writing the batch). The
//!   voxelize stage's seconds are the rest of the time the two run side by side, so the
//!   stages' seconds add up to the bake's.
//! * Progress: tiles merged.

use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera_artifacts::TileContours;
use tessera_artifacts::TileRegions;
use tessera_artifacts::{Closing, RegionBatch};
use tessera_budget::{MemoryBudget, Reservation};
use tessera_contours::ContourJoiner;
use tessera_stitch::{LocalLink, RegionMerger};
use tessera_store::Journal;

use crate::{BakeError, Progress};

pub(crate) const STAGE: &str = "merge";
/// Pack kind of the region journal.
pub const REGIONS_KIND: &[u8; 8] = b"TSREGNS\0";

/// What the merge counted.
#[derive(Default)]
pub(crate) struct Merged {
    /// Merged regions.
    pub regions: u64,
    /// Spans in them.
    pub region_spans: u64,
    pub contours: u64,
    pub contour_vertices: u64,
    /// Contour vertices that only the tiling made, removed.
    pub third_class_removed: u64,
    /// Largest frontier: links waiting for a tile not yet seen.
    pub frontier_links: u64,
    /// Largest memory the frontier held [bytes, estimated].
    pub frontier_bytes: u64,
    pub seconds: f64,
}

/// The merge in progress.
pub(crate) struct Merge {
    merger: RegionMerger,
    joiner: ContourJoiner,
    /// The frontier's memory. It shrinks only as tiles arrive, so it never waits; tiles wait
    /// for it instead, and the budget never lets that stall the bake.
    frontier: Reservation,
    counts: Merged,
    busy: Duration,
    tiles: u64,
    progress: Progress,
}

impl Merge {
    /// A merge of `tiles` tiles.
    pub(crate) fn start(budget: &Arc<MemoryBudget>, tiles: u64, progress: &Progress) -> Merge {
        progress.stage_start(STAGE, tiles);
        Merge {
            merger: RegionMerger::new(),
            joiner: ContourJoiner::new(),
            frontier: budget.hold(),
            counts: Merged::default(),
            busy: Duration::ZERO,
            tiles: 0,
            progress: progress.clone(),
        }
    }

    /// Merges the next tile in tile order (its regions, and the links to other tiles of the
    /// process that computed it, matched there), and appends what it closed to `out` under
    /// `key` (`None` when the journal holds the tile already).
    pub(crate) fn add(
        &mut self,
        key: u32,
        (regions, local): (&TileRegions, &[LocalLink]),
        contours: TileContours,
        out: Option<&mut Journal>,
    ) -> Result<(), BakeError> {
        let started = Instant::now();
        let mut batch = RegionBatch {
            regions: self.merger.add_matched(regions, local),
            closings: vec![Closing::default(); contours.cycles.len()],
            contours: contours.cycles,
        };
        for (i, chain) in contours.chains.into_iter().enumerate() {
            if let Some((contour, removed)) = self.joiner.add_counted(chain) {
                batch.contours.push(contour);
                batch.closings.push(Closing {
                    chain: i as u32,
                    removed: removed as u32,
                });
            }
        }
        let c = &mut self.counts;
        c.regions += batch.regions.len() as u64;
        c.region_spans += batch.regions.iter().map(|r| r.spans).sum::<u64>();
        c.contours += batch.contours.len() as u64;
        c.contour_vertices += batch
            .contours
            .iter()
            .map(|c| c.points.len() as u64)
            .sum::<u64>();
        // The counts only grow: past a table's limit here, the world cannot fit, and the
        // bake stops now rather than after the rest of the tiles.
        crate::polygons::check_merged(c.regions, c.contours, || {
            format!("tile {key} of the merge")
        })?;
        if let Some(out) = out {
            let encoded = batch.encode();
            out.append_stored(key, &tessera_store::compress(&encoded), encoded.len())?;
        }
        let held = self.merger.held_bytes() + self.joiner.held_bytes();
        c.frontier_bytes = c.frontier_bytes.max(held);
        if held > self.frontier.bytes() {
            self.frontier.grow_to(held);
        } else {
            self.frontier.shrink_to(held);
        }
        self.busy += started.elapsed();
        self.tiles += 1;
        self.progress.advance(STAGE, self.tiles);
        Ok(())
    }

    /// Ends a merge that saw every tile.
    pub(crate) fn finish(self) -> Merged {
        debug_assert_eq!(self.merger.open_regions(), 0, "every tile was merged");
        debug_assert_eq!(self.joiner.open_chains(), 0, "every contour was closed");
        self.progress.stage_done(STAGE, self.tiles);
        Merged {
            frontier_links: self.merger.peak_frontier.0 as u64,
            third_class_removed: self.joiner.third_class_removed,
            seconds: self.busy.as_secs_f64(),
            ..self.counts
        }
    }
}
