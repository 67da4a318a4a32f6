//! The bake folder: where every file of a bake lives. No other code joins a file name onto a
//! bake folder; it asks [`BakeLayout`].
//!
//! ```text
//! OUT/navmesh.tsn                    the navigation mesh (written atomically)
//! OUT/summary.json                   what the bake did (written last, atomically)
//! OUT/config.toml                    the effective settings
//! OUT/preview.png                    top-down picture of the navmesh (the binary, via export)
//! OUT/report.html                    the bake's report page (the binary, via export)
//! OUT/work/scene.cache               the ingested scene (reused by the next bake of the same input)
//! OUT/work/scenes/NAME-HASH.cache    each file's, for a scene of several files
//! OUT/work/scene-parts/              a one-file OBJ scene's cache in parts, one per process
//!                                    of a distributed bake (part-P-of-N.cache, scene.parts)
//! OUT/work/tiles.pack                triangles binned per tile (lz4 chunks)
//! OUT/work/bins/part-P-of-N.pack     in a distributed bake, process P's part of the binning
//! OUT/work/spans/                    voxelized span fields per tile (journals: folders of
//!                                    segments of 64 tiles each, `seg-N`, with `head` and `end`)
//! OUT/work/regions/                  merged regions and their contours, batched by the tile that closed them
//! OUT/work/floors/                   walkable floors per tile, for height detail
//! OUT/work/tile-regions/             per tile, its regions and contours (the merge's input)
//! OUT/work/tile-hashes/              per tile, the hash of the triangles it was voxelized from
//! OUT/work/tile-digests.bin          per tile, a digest of how its triangles were binned
//! OUT/work/previous/                 the span, floor, tile-region and hash journals of the last finished
//!                                    voxelization, kept while the next one (of a changed
//!                                    scene) reuses its unchanged tiles
//! OUT/work/scratch/                  temporary files of a running ingest (and the OBJ
//!                                    tables process 0 shares: scratch/obj-tables/)
//! OUT/work/polygons/                 temporary files of a running polygon stage:
//! OUT/work/polygons/contours.spill     the regions' contours, copied from regions/
//! OUT/work/polygons/*                  the navmesh assembler's spill files and sort runs
//! OUT/work/polygons/part-I.pack        process I's polygons in a distributed bake (and its
//!                                      scratch, process-I/)
//!
//! A bake for several agents (`[[agents]]`) shares the scene caches and the tiles; each agent
//! has the rest of `work/` of its own:
//! OUT/navmesh-NAME.tsn               agent NAME's navigation mesh
//! OUT/navmesh.tsn                    the first agent's (the same file, linked)
//! OUT/work/raster-G.pack            the tiles rasterized once for agents 4G to 4G + 3, read by
//!                                    all but the first of them; removed after the bake
//! OUT/work/agents/NAME/              agent NAME's spans/, regions/, floors/,
//!                                    tile-regions/, tile-hashes/, previous/, region-polygons.pack,
//!                                    cluster-lengths.bin, previous-polygons.pack and polygons/
//! ```

use std::path::{Path, PathBuf};
use tessera_store::StoreError;

/// Paths inside one bake folder.
#[derive(Clone, Debug)]
pub struct BakeLayout {
    pub root: PathBuf,
    /// The agent whose files these are, in a bake for several (None: the one agent).
    agent: Option<String>,
}

impl BakeLayout {
    /// The preview's file name, which is also its URL relative to the report.
    pub const PREVIEW_NAME: &'static str = "preview.png";

    pub fn new(root: &Path) -> BakeLayout {
        BakeLayout {
            root: root.to_path_buf(),
            agent: None,
        }
    }

    /// The same folder as agent `name` of a bake for several sees it: its own stage files and
    /// navmesh, the scene and the tiles shared.
    pub fn of_agent(&self, name: &str) -> BakeLayout {
        BakeLayout {
            root: self.root.clone(),
            agent: Some(name.to_string()),
        }
    }

    /// Creates an agent's folder and removes what a killed or failed bake left in it, as
    /// [`BakeLayout::create`] does for the whole folder.
    pub fn create_agent(&self) -> Result<(), StoreError> {
        let dir = self.stages();
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        tessera_store::remove_stale_temp_files(&dir)?;
        self.tidy_journals()?;
        remove_dir(&self.polygon_scratch())
    }

    /// Where the files of the stages from voxelize on live: `work/`, or the agent's folder.
    fn stages(&self) -> PathBuf {
        match &self.agent {
            None => self.work(),
            Some(name) => self.work().join("agents").join(name),
        }
    }

    /// Creates the folder and its `work/`, and removes what a killed or failed bake left: the
    /// temporary files of atomic writes in either (those of live processes stay) and the
    /// scratch folders of ingest and of the polygon stage. The caller holds the folder's lock,
    /// so no other bake is using them.
    pub fn create(&self) -> Result<(), StoreError> {
        let work = self.work();
        std::fs::create_dir_all(&work).map_err(|e| StoreError::io(&work, e))?;
        tessera_store::remove_stale_temp_files(&self.root)?;
        tessera_store::remove_stale_temp_files(&work)?;
        if self.bin_parts().is_dir() {
            tessera_store::remove_stale_temp_files(&self.bin_parts())?;
        }
        self.tidy_journals()?;
        remove_dir(&self.scratch())?;
        remove_dir(&self.polygon_scratch())
    }

    /// The stages' journal folders, in the order the voxelize stage opens them.
    pub fn journals(&self) -> [PathBuf; 5] {
        [
            self.spans_journal(),
            self.floors_journal(),
            self.tile_regions_journal(),
            self.tile_hashes_journal(),
            self.regions_journal(),
        ]
    }

    /// Removes the temporary files a killed bake left in the journal folders, and the
    /// one-file journals of an earlier version (`spans.pack` and the like), which no stage
    /// reads any more.
    fn tidy_journals(&self) -> Result<(), StoreError> {
        for journal in self.journals() {
            if journal.is_dir() {
                tessera_store::remove_stale_temp_files(&journal)?;
            }
            let old = journal.with_extension("pack");
            if old.is_file() {
                std::fs::remove_file(&old).map_err(|e| StoreError::io(&old, e))?;
            }
        }
        Ok(())
    }

    /// The checkpoints and scratch files (`tessera clean` and `--fresh` remove it).
    pub fn work(&self) -> PathBuf {
        self.root.join("work")
    }
    pub fn scratch(&self) -> PathBuf {
        self.work().join("scratch")
    }
    pub fn scene_cache(&self) -> PathBuf {
        self.work().join("scene.cache")
    }
    /// The caches of a scene of several files, one per file.
    pub fn part_caches(&self) -> PathBuf {
        self.work().join("scenes")
    }
    /// The cache of one file of a scene of several, named by the file's path (so that a list
    /// given in another order finds its caches again).
    pub fn part_cache(&self, scene_file: &Path) -> PathBuf {
        let canonical = std::fs::canonicalize(scene_file).unwrap_or_else(|_| scene_file.into());
        let hash = xxhash_rust::xxh3::xxh3_64(canonical.as_os_str().as_encoded_bytes());
        let stem = scene_file
            .file_stem()
            .map_or_else(|| "scene".into(), |s| s.to_string_lossy().into_owned());
        let stem: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        self.part_caches().join(format!("{stem}-{hash:016x}.cache"))
    }
    /// A one-file scene's cache in parts, as the processes of a distributed bake read it.
    pub fn split_cache(&self) -> PathBuf {
        self.work().join("scene-parts")
    }
    /// The manifest naming the parts, written once every part is.
    pub fn split_manifest(&self) -> PathBuf {
        self.split_cache().join("scene.parts")
    }
    /// Part `p` of `parts` of a one-file scene's cache.
    pub fn split_part(&self, p: u32, parts: u32) -> PathBuf {
        self.split_cache()
            .join(format!("part-{p}-of-{parts}.cache"))
    }
    /// Where process 0 puts an OBJ file's vertex and window tables for the other processes.
    pub fn obj_tables(&self) -> PathBuf {
        self.scratch().join("obj-tables")
    }
    pub fn tiles_pack(&self) -> PathBuf {
        self.work().join("tiles.pack")
    }
    /// The rasterized fields group `group` of the agents of a bake for several share
    /// (`tessera_artifacts::RasterRecord`; agents `4 * group` to `4 * group + 3`): one per group
    /// for the whole folder.
    pub fn raster_pack(&self, group: usize) -> PathBuf {
        self.work().join(format!("raster-{group}.pack"))
    }
    // The stages' journals: folders of segments (`tessera_store::Journal::open_segmented`).
    pub fn spans_journal(&self) -> PathBuf {
        self.stages().join("spans")
    }
    pub fn regions_journal(&self) -> PathBuf {
        self.stages().join("regions")
    }
    pub fn floors_journal(&self) -> PathBuf {
        self.stages().join("floors")
    }
    /// Per tile, its regions and contours (with its span counts): what the merge takes from
    /// it, kept so that a resumed or rebaked tile is not segmented and traced again.
    pub fn tile_regions_journal(&self) -> PathBuf {
        self.stages().join("tile-regions")
    }
    pub fn tile_hashes_journal(&self) -> PathBuf {
        self.stages().join("tile-hashes")
    }
    /// Each tile's digest of how its triangles were stored when the last voxelize stage
    /// ended ([`crate::bin::TilePacks::digest`]), under that stage's key: the next rebake
    /// takes the hash of a tile stored alike from its record without reading the tile.
    pub fn tile_digests(&self) -> PathBuf {
        self.stages().join("tile-digests.bin")
    }
    /// The counts of the last finished voxelize stage (and its merge), under its key: a stage
    /// whose journals are all complete under that key is not streamed again to count them.
    pub fn voxelized_counts(&self) -> PathBuf {
        self.stages().join("voxelized.bin")
    }
    /// Where the journals of the last finished voxelization wait while the next one reuses
    /// their unchanged tiles.
    pub fn previous(&self) -> PathBuf {
        self.stages().join("previous")
    }
    /// Every region's polygons as the last polygon stage made them, for the next one to reuse
    /// (`region_reuse`).
    pub fn region_polygons(&self) -> PathBuf {
        self.stages().join("region-polygons.pack")
    }
    /// Every cluster's table of lengths under its key, for the next polygon stage to take
    /// unchanged clusters' tables from (`region_reuse`).
    pub fn cluster_lengths(&self) -> PathBuf {
        self.stages().join("cluster-lengths.bin")
    }
    /// [`BakeLayout::region_polygons`] of the last stage while the next one runs.
    pub fn previous_polygons(&self) -> PathBuf {
        self.stages().join("previous-polygons.pack")
    }
    /// The polygon stage's scratch folder, removed when the navmesh is written and at the
    /// start of a polygon stage.
    pub fn polygon_scratch(&self) -> PathBuf {
        self.stages().join("polygons")
    }
    /// The region journal's contours laid out as words, kept from one polygon stage to the
    /// next with their index, so that a rebake lays out again only the tiles whose records
    /// changed (`polygon_inputs`).
    pub fn contours(&self) -> PathBuf {
        self.stages().join("contours.words")
    }
    pub fn contours_index(&self) -> PathBuf {
        self.stages().join("contours-index.bin")
    }
    /// Process `p`'s scratch in a distributed polygon stage (process 0 uses the stage's own).
    pub fn polygon_scratch_of(&self, p: u32) -> PathBuf {
        match p {
            0 => self.polygon_scratch(),
            p => self.polygon_scratch().join(format!("process-{p}")),
        }
    }
    /// The parts of a binning split in parts: one pack per process of a distributed bake, or
    /// per thread of a bake on one machine.
    pub fn bin_parts(&self) -> PathBuf {
        self.work().join("bins")
    }
    /// Part `p` of `parts` of a binning.
    pub fn bin_part(&self, p: u32, parts: u32) -> PathBuf {
        self.bin_parts().join(format!("part-{p}-of-{parts}.pack"))
    }
    /// The polygons process `p` (other than 0) made in a distributed polygon stage.
    pub fn polygon_part(&self, p: u32) -> PathBuf {
        self.polygon_scratch().join(format!("part-{p}.pack"))
    }

    /// `navmesh.tsn`, or for an agent of several `navmesh-NAME.tsn`.
    pub fn navmesh(&self) -> PathBuf {
        match &self.agent {
            None => self.root.join("navmesh.tsn"),
            Some(name) => self.root.join(format!("navmesh-{name}.tsn")),
        }
    }
    pub fn summary_json(&self) -> PathBuf {
        self.root.join("summary.json")
    }
    pub fn config_toml(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    pub fn preview_png(&self) -> PathBuf {
        self.root.join(Self::PREVIEW_NAME)
    }
    pub fn report_html(&self) -> PathBuf {
        self.root.join("report.html")
    }

    /// Bytes of every file in the folder.
    pub fn disk_bytes(&self) -> u64 {
        bytes_under(&self.root)
    }
}

/// Removes folder `dir` and what it holds, if it is there.
fn remove_dir(dir: &Path) -> Result<(), StoreError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StoreError::io(dir, e)),
        _ => Ok(()),
    }
}

/// Bytes of every file under `p` (0 for what cannot be read).
pub(crate) fn bytes_under(p: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(p) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => bytes_under(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_removes_what_a_killed_bake_left_and_keeps_checkpoints() {
        // Issue 21, class 5: a bake killed in ingest or in the polygon stage leaves scratch
        // files and temporary files behind; the next bake into the folder removes them.
        let dir = tempfile::tempdir().unwrap();
        let layout = BakeLayout::new(dir.path());
        layout.create().unwrap();
        let dead_pid = u32::MAX - 1;
        let left = [
            layout.scratch().join("vertices.table"),
            layout.polygon_scratch().join("polys.spill"),
            layout.work().join(format!(".tiles.pack.{dead_pid}.tmp")),
            layout.root.join(format!(".navmesh.tsn.{dead_pid}.tmp")),
        ];
        for f in &left {
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, b"left by a killed bake").unwrap();
        }
        let kept = [
            layout.tiles_pack(),
            layout.spans_journal(),
            layout.navmesh(),
        ];
        for f in &kept {
            std::fs::write(f, b"a checkpoint").unwrap();
        }
        layout.create().unwrap();
        for f in &left {
            assert!(!f.exists(), "{} was left", f.display());
        }
        assert!(!layout.scratch().exists() && !layout.polygon_scratch().exists());
        for f in &kept {
            assert!(f.exists(), "{} was removed", f.display());
        }
    }
}
