//! Stage 4, merge: regions and contours joined across tile borders. It runs on a thread of
//! its own beside the voxelize stage's writer, one tile at a time in tile order as the writer
//! hands them on, while the workers voxelize the next tiles: union-find over border links
//! (`tessera_stitch::RegionMerger`), then open contour chains joined at tile borders with the
//! straight-through vertices the tiling made removed (`tessera_contours::ContourJoiner`).
//!
//! * Input: each tile's `TileRegions` and `TileContours`, from the voxelize workers.
//! * Output: `work/regions/` (a segmented journal), one `RegionBatch` per tile (the regions
//!   and contours that tile closed); the journal is opened and lined up with the span journal
//!   by the voxelize stage, and shares its key: the merge reads no settings of its own.
//! * Memory: the open frontier (links waiting for an unseen tile, open regions and chains) is
//!   held from the budget as it grows and shrinks.
//! * Timer: the merge thread's busy time (stitching, joining, writing the batch). The
//!   voxelize stage's seconds are the rest of the time the two run side by side, so the
//!   stages' seconds add up to the bake's.
//! * Rebakes: in one process, the merge is incremental ([`LastMerge`]): only the regions
//!   with a part in a changed tile are merged again, every other tile's batch is the last
//!   merge's, copied as stored.
//! * Progress: tiles merged.

use rustc_hash::FxHashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera_artifacts::{Closing, Contour, GridFrame, MergedRegion, RegionBatch, TileCoord};
use tessera_artifacts::{TileContours, TileRegions};
use tessera_budget::{MemoryBudget, Reservation};
use tessera_contours::ContourJoiner;
use tessera_stitch::{LocalLink, RegionMerger};
use tessera_store::{Journal, JournalReader};

use crate::{BakeError, Progress};

pub(crate) const STAGE: &str = "merge";
/// Pack kind of the region journal.
pub const REGIONS_KIND: &[u8; 8] = b"TSREGNS\0";

/// What the merge counted.
#[derive(Clone, Default)]
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
    /// Tiles whose batch this merge made (not taken from the journal or the last merge).
    pub remerged: u64,
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
    /// An incremental merge: what it keeps of the last one.
    last: Option<LastMerge>,
}

/// The last bake's merge, for an incremental one (a rebake on the same grid and settings).
/// A region none of whose parts lies in a changed tile is closed at the same tile, with the
/// same members and contours, as the last merge closed it (its tiles' regions, links and
/// chains are the same, and no link joins it to a region of a changed tile: that link would
/// have joined them last time too). So only the regions with a part in a changed tile (the
/// affected ones) are merged again, from the parts they had and the changed tiles' regions;
/// a tile holding none of them takes its batch whole, as stored.
pub(crate) struct LastMerge {
    /// The last merge's batches (`work/previous/regions/`).
    batches: JournalReader,
    path: PathBuf,
    /// Tiles whose records changed (voxelized again, or gone).
    changed: FxHashSet<u32>,
    /// The parts (tile, local region) of the last merge's affected regions.
    affected: FxHashSet<(TileCoord, u32)>,
    /// Tiles whose batch is made again: the changed ones and those holding an affected part.
    touched: FxHashSet<u32>,
    /// The segments of the region journal whose every tile is untouched: taken over whole.
    segments: FxHashSet<u32>,
    /// The last merge's counts, less those of the batches of tiles no longer there.
    counts: Merged,
}

impl LastMerge {
    /// The last merge in `work/previous/` (`regions`, with the stage's counts in `counts`),
    /// when whole and of the same stage key as the other previous journals (`key`), for a
    /// stage over the tiles `keys` of which `changed` are not taken from the last bake.
    /// None when anything is missing or damaged, or when the change reaches so much of the
    /// world that merging it all is as cheap, or that the parts it reaches would not be
    /// small next to the memory budget (`budget` bytes).
    pub(crate) fn open(
        (regions, counts): (PathBuf, PathBuf),
        (key, budget): (u64, u64),
        frame: &GridFrame,
        keys: &[u32],
        mut changed: FxHashSet<u32>,
    ) -> Option<LastMerge> {
        use rayon::prelude::*;
        let (stage_key, last) = crate::voxelize::read_counts(&counts)?;
        if stage_key != key || Journal::stage_key_of(&regions).ok()? != key {
            return None;
        }
        let journal = Journal::open_complete(&regions, REGIONS_KIND).ok()?;
        let batches = journal.snapshot().ok()?;
        let old: Vec<u32> = journal.keys();
        let now: FxHashSet<u32> = keys.iter().copied().collect();
        changed.extend(old.iter().filter(|k| !now.contains(k)));
        // A region closes at its last part's tile (in tile order): one with a part in a
        // changed tile closes at or after the first of them. The batches from there are read
        // a group at a time, in parallel, their region lists alone decoded.
        let first = changed.iter().min().copied().unwrap_or(u32::MAX);
        let from = old.partition_point(|&k| k < first);
        let tile_of = |t: TileCoord| frame.tile_index(t) as u32;
        let mut affected = FxHashSet::default();
        let mut touched: FxHashSet<u32> = changed.clone();
        // Bytes a part held in the sets, about (as a hash set holds it).
        const PART_BYTES: u64 = 32;
        for group in old[from..].chunks(256) {
            let scanned: Vec<Vec<MergedRegion>> = group
                .par_iter()
                .map(|&k| {
                    let bytes = batches.read(k).ok()?;
                    RegionBatch::decode_regions(&bytes).ok()
                })
                .collect::<Option<_>>()?;
            for r in scanned.iter().flatten() {
                if r.members.iter().any(|m| changed.contains(&tile_of(m.0))) {
                    for &m in &r.members {
                        affected.insert(m);
                        touched.insert(tile_of(m.0));
                    }
                }
            }
            if touched.len() * 2 > keys.len() || affected.len() as u64 * PART_BYTES > budget / 8 {
                return None;
            }
        }
        let mut counts = Merged {
            regions: last[3],
            region_spans: last[4],
            contours: last[5],
            contour_vertices: last[6],
            third_class_removed: last[7],
            ..Merged::default()
        };
        // The batches of tiles gone: all they held was affected.
        for k in old.iter().filter(|k| !now.contains(k)) {
            let batch = RegionBatch::decode(&batches.read(*k).ok()?).ok()?;
            counts.take(&batch.regions, &batch.contours, &batch.closings, -1);
        }
        let segments = crate::voxelize::whole_segments(keys, &batches, |k| !touched.contains(&k));
        Some(LastMerge {
            batches,
            path: regions,
            changed,
            affected,
            touched,
            segments,
            counts,
        })
    }

    /// Whether the merge takes tile `key`'s batch whole, as the last merge made it.
    pub(crate) fn untouched(&self, key: u32) -> bool {
        !self.touched.contains(&key)
    }

    fn corrupt(&self, key: u32, message: String) -> BakeError {
        BakeError::Corrupt {
            path: self.path.clone(),
            message: format!("tile {key}: {message}"),
        }
    }
}

impl Merged {
    /// Adds (`sign` 1) or takes off (-1) the counts of regions and contours.
    fn take(
        &mut self,
        regions: &[MergedRegion],
        contours: &[Contour],
        closings: &[Closing],
        sign: i64,
    ) {
        let add = |v: &mut u64, d: u64| *v = v.wrapping_add_signed(sign * d as i64);
        add(&mut self.regions, regions.len() as u64);
        add(
            &mut self.region_spans,
            regions.iter().map(|r| r.spans).sum(),
        );
        add(&mut self.contours, contours.len() as u64);
        let vertices = contours.iter().map(|c| c.points.len() as u64).sum();
        add(&mut self.contour_vertices, vertices);
        let removed = closings.iter().map(|c| u64::from(c.removed)).sum();
        add(&mut self.third_class_removed, removed);
    }
}

impl Merge {
    /// A merge of `tiles` tiles; with `last`, an incremental one.
    pub(crate) fn start(
        budget: &Arc<MemoryBudget>,
        tiles: u64,
        progress: &Progress,
        last: Option<LastMerge>,
    ) -> Merge {
        progress.stage_start(STAGE, tiles);
        Merge {
            merger: RegionMerger::new(),
            joiner: ContourJoiner::new(),
            frontier: budget.hold(),
            counts: last.as_ref().map(|l| l.counts.clone()).unwrap_or_default(),
            busy: Duration::ZERO,
            tiles: 0,
            progress: progress.clone(),
            last,
        }
    }

    /// A tile's batch, merged again in an incremental merge: the last merge's batch less its
    /// affected regions and contours, with those the affected regions' parts close here now.
    fn merge_again(
        &mut self,
        key: u32,
        regions: &TileRegions,
        contours: TileContours,
    ) -> Result<RegionBatch, BakeError> {
        let last = self.last.as_ref().expect("an incremental merge");
        let coord = regions.tile;
        let changed = last.changed.contains(&key);
        let old = match last.batches.raw_len(key) {
            0 => RegionBatch::default(),
            _ => {
                let bytes = last.batches.read(key)?;
                RegionBatch::decode(&bytes).map_err(|e| last.corrupt(key, e.to_string()))?
            }
        };
        let affected = |m: &(TileCoord, u32)| last.affected.contains(m);
        let keep = |r: u32| changed || last.affected.contains(&(coord, r));
        let mut batch = RegionBatch::default();
        let mut gone = RegionBatch::default();
        for r in old.regions {
            match r.members.first().is_some_and(affected) {
                true => gone.regions.push(r),
                false => batch.regions.push(r),
            }
        }
        // What this merge makes here is counted as it is made.
        let new = self.merger.add_part(regions, &[], &keep);
        self.counts.take(&new, &[], &[], 1);
        batch.regions.extend(new);
        batch.regions.sort_by_key(|r| r.id);
        // The contours traced whole in the tile first, then those the tile's chains closed,
        // in the order of those chains: as a whole merge lists them.
        let mut joined: Vec<(Contour, Closing)> = Vec::new();
        for (c, closing) in old.contours.into_iter().zip(old.closings) {
            let traced = closing.chain == Closing::TRACED;
            if changed || (!traced && affected(&(c.tile, c.region))) {
                gone.contours.push(c);
                gone.closings.push(closing);
            } else if traced {
                batch.contours.push(c);
                batch.closings.push(closing);
            } else {
                joined.push((c, closing));
            }
        }
        let cycles = vec![Closing::default(); contours.cycles.len()];
        if changed {
            self.counts.take(&[], &contours.cycles, &cycles, 1);
            batch.closings.extend(cycles);
            batch.contours.extend(contours.cycles);
        }
        for (i, chain) in contours.chains.into_iter().enumerate() {
            if !keep(chain.region) {
                continue;
            }
            if let Some((contour, removed)) = self.joiner.add_counted(chain) {
                let closing = Closing {
                    chain: i as u32,
                    removed: removed as u32,
                };
                self.counts
                    .take(&[], std::slice::from_ref(&contour), &[closing], 1);
                joined.push((contour, closing));
            }
        }
        joined.sort_by_key(|(_, closing)| closing.chain);
        for (c, closing) in joined {
            batch.contours.push(c);
            batch.closings.push(closing);
        }
        self.counts
            .take(&gone.regions, &gone.contours, &gone.closings, -1);
        Ok(batch)
    }

    /// Merges the next tile in tile order (its regions, and the links to other tiles of the
    /// process that computed it, matched there), and appends what it closed to `out` under
    /// `key` (`None` when the journal holds the tile already).
    pub(crate) fn add(
        &mut self,
        key: u32,
        (regions, local): (&TileRegions, &[LocalLink]),
        contours: TileContours,
        mut out: Option<&mut Journal>,
    ) -> Result<(), BakeError> {
        let started = Instant::now();
        let batch = match &self.last {
            // A tile no affected region reaches: its batch as the last merge stored it.
            Some(last) if last.untouched(key) => {
                if let Some(out) = out.as_deref_mut() {
                    // Its segment's first tile takes the whole segment over (when it can).
                    let n = key / crate::voxelize::JOURNAL_SEGMENT;
                    if last.segments.contains(&n) && !out.contains(key) {
                        if let Some(keys) = last.batches.segment_keys(n) {
                            if keys.first() == Some(&key) {
                                out.adopt(&last.batches, n, &keys)?;
                            }
                        }
                    }
                    if !out.contains(key) {
                        let (stored, raw_len) =
                            last.batches.read_stored(key)?.ok_or_else(|| {
                                last.corrupt(key, "no batch of the last merge".into())
                            })?;
                        out.append_stored(key, &stored, raw_len)?;
                    }
                }
                None
            }
            Some(_) => Some(self.merge_again(key, regions, contours)?),
            None => {
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
                self.counts
                    .take(&batch.regions, &batch.contours, &batch.closings, 1);
                Some(batch)
            }
        };
        // Past a table's limit here, the world cannot fit, and the bake stops now rather than
        // after the rest of the tiles.
        let c = &mut self.counts;
        crate::polygons::check_merged(c.regions, c.contours, || {
            format!("tile {key} of the merge")
        })?;
        if let (Some(out), Some(batch)) = (out, batch) {
            c.remerged += 1;
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
            seconds: self.busy.as_secs_f64(),
            ..self.counts
        }
    }

    /// After every tile: an incremental merge that left a region or contour open met a link
    /// from a changed tile to a region the last merge did not reach. Not expected; its
    /// batches cannot be trusted.
    pub(crate) fn check(&self) -> Result<(), BakeError> {
        let (regions, chains) = (self.merger.open_regions(), self.joiner.open_chains());
        match (&self.last, regions + chains) {
            (Some(last), 1..) => Err(BakeError::Corrupt {
                path: last.path.clone(),
                message: format!(
                    "the incremental merge left {regions} regions and {chains} contours open \
                     (the next bake starts afresh)"
                ),
            }),
            _ => Ok(()),
        }
    }
}
