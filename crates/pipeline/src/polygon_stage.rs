//! The polygon stage, out of core: merged regions from the region journal to `navmesh.tsn`.
//!
//! 1. The journal's contours are copied once into a flat scratch file (`work/polygons/`), and
//!    an index of where each region's contours are is kept in memory (a few words a contour).
//! 2. [`tessera_polygons::polygonize_stream`] reads regions back in windows, in region order,
//!    simplifies them (a few passes, each a window at a time) and polygonizes them.
//! 3. Each region's polygons go straight to a [`tessera_navmesh::Assembler`], which spills them
//!    and writes the archive from its spill files.
//!
//! What is in memory at once is one window of regions and its polygons, the index, the sort
//! buffers of the assembler, and the table of restored simplification points: all sized from
//! the budget, except a single region larger than a window, which is taken whole.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use tessera_artifacts::{Contour, RegionBatch, SpanKey, TileCoord};
use tessera_polygons::{PolygonError, RegionContours, RegionSource};
use tessera_spill::{Spill, SpillWriter};
use tessera_store::{Journal, StoreError};

use crate::BakeError;

/// Words of a contour's header in the scratch file: tile x, tile y, local region, level,
/// vertex count.
const HEADER_WORDS: u64 = 5;
/// Words per contour vertex: x, y, height, neighbour.
const VERTEX_WORDS: u64 = 4;

/// The regions of a finished region journal, served in windows of about `window_bytes` of
/// contour data.
pub(crate) struct JournalRegions {
    file: File,
    path: PathBuf,
    /// Regions in id order: id, and their contours' `(offset, words)` in `locations`.
    regions: Vec<(SpanKey, u32, u32)>,
    locations: Vec<(u64, u32)>,
    window_bytes: u64,
}

impl JournalRegions {
    /// Indexes `journal_path` (a complete region journal), copying its contours to
    /// `dir/contours.spill`.
    pub(crate) fn open(
        journal_path: &Path,
        dir: &Path,
        window_bytes: u64,
    ) -> Result<JournalRegions, BakeError> {
        let journal = Journal::open_complete(journal_path, crate::REGIONS_KIND)?;
        let corrupt = |message: String| BakeError::Corrupt {
            path: journal_path.to_path_buf(),
            message,
        };
        let io = |e: std::io::Error| BakeError::Io(StoreError::io(dir, e));
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join("contours.spill");
        let mut out = SpillWriter::<u32>::create(&path).map_err(io)?;
        let mut owner: HashMap<(TileCoord, u32), SpanKey> = HashMap::new();
        let mut ids: Vec<SpanKey> = Vec::new();
        let mut found: Vec<(TileCoord, u32, u64, u32)> = Vec::new();
        for key in journal.keys() {
            let batch = RegionBatch::decode(&journal.read(key)?)
                .map_err(|e| corrupt(format!("tile {key}: {e}")))?;
            for r in batch.regions {
                ids.push(r.id);
                for m in r.members {
                    owner.insert(m, r.id);
                }
            }
            for c in batch.contours {
                let at = out.len();
                let n = c.points.len() as u32;
                out.extend(&[c.tile.x, c.tile.y, c.region, c.level, n])
                    .map_err(io)?;
                for k in 0..c.points.len() {
                    out.extend(&[
                        c.points[k].0 as u32,
                        c.points[k].1 as u32,
                        c.heights[k],
                        c.neighbours[k],
                    ])
                    .map_err(io)?;
                }
                found.push((
                    c.tile,
                    c.region,
                    at,
                    (HEADER_WORDS + VERTEX_WORDS * n as u64) as u32,
                ));
            }
        }
        let spill: Spill<u32> = out.finish().map_err(io)?;
        // Contours by region id, then by where they were written (the order they were made in).
        let mut placed: Vec<(SpanKey, u64, u32)> = Vec::with_capacity(found.len());
        for (tile, local, at, words) in found {
            let Some(&id) = owner.get(&(tile, local)) else {
                return Err(corrupt(
                    PolygonError::Orphan {
                        tx: tile.x,
                        ty: tile.y,
                        local,
                    }
                    .to_string(),
                ));
            };
            placed.push((id, at, words));
        }
        drop(owner);
        placed.sort_unstable();
        let mut regions: Vec<(SpanKey, u32, u32)> = Vec::new();
        let mut locations = Vec::with_capacity(placed.len());
        for (id, at, words) in placed {
            match regions.last_mut() {
                Some(last) if last.0 == id => last.2 += 1,
                _ => regions.push((id, locations.len() as u32, 1)),
            }
            locations.push((at, words));
        }
        let file = File::open(spill.path()).map_err(io)?;
        Ok(JournalRegions {
            file,
            path: spill.path().to_path_buf(),
            regions,
            locations,
            window_bytes: window_bytes.max(1),
        })
    }

    /// Regions with at least one contour.
    pub(crate) fn len(&self) -> usize {
        self.regions.len()
    }

    fn read_region(&self, r: usize) -> Result<RegionContours, PolygonError> {
        let (id, first, count) = self.regions[r];
        let mut contours = Vec::with_capacity(count as usize);
        for &(at, words) in &self.locations[first as usize..(first + count) as usize] {
            let mut buf = vec![0u32; words as usize];
            self.file
                .read_exact_at(bytemuck::cast_slice_mut(&mut buf), at * 4)
                .map_err(|e| PolygonError::Source(format!("{}: {e}", self.path.display())))?;
            let n = buf[4] as usize;
            let v = &buf[HEADER_WORDS as usize..];
            contours.push(Contour {
                tile: TileCoord {
                    x: buf[0],
                    y: buf[1],
                },
                region: buf[2],
                level: buf[3],
                points: (0..n)
                    .map(|k| (v[4 * k] as i32, v[4 * k + 1] as i32))
                    .collect(),
                heights: (0..n).map(|k| v[4 * k + 2]).collect(),
                neighbours: (0..n).map(|k| v[4 * k + 3]).collect(),
            });
        }
        Ok(RegionContours::new(id, contours))
    }

    /// Deletes the scratch file.
    pub(crate) fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl RegionSource for JournalRegions {
    fn for_each_window(
        &mut self,
        f: &mut dyn FnMut(&[RegionContours]) -> Result<(), PolygonError>,
    ) -> Result<(), PolygonError> {
        let mut window = Vec::new();
        let mut bytes = 0u64;
        for r in 0..self.regions.len() {
            let (_, first, count) = self.regions[r];
            let size: u64 = self.locations[first as usize..(first + count) as usize]
                .iter()
                .map(|&(_, w)| w as u64 * 4)
                .sum();
            if !window.is_empty() && bytes + size > self.window_bytes {
                f(&window)?;
                window.clear();
                bytes = 0;
            }
            window.push(self.read_region(r)?);
            bytes += size;
        }
        if !window.is_empty() {
            f(&window)?;
        }
        Ok(())
    }
}
