//! The bake folder: where every file of a bake lives.
//!
//! ```text
//! OUT/summary.json        what the bake did (written last, atomically)
//! OUT/config.toml         the effective settings
//! OUT/work/scene.cache    the ingested scene (reused by the next bake of the same input)
//! OUT/work/tiles.pack     triangles binned per tile (lz4 chunks)
//! OUT/work/spans.pack     voxelized span fields per tile
//! OUT/work/regions.pack   merged regions and their contours, batched by the tile that closed them
//! OUT/work/scratch/       temporary files of a running ingest
//! ```

use std::path::{Path, PathBuf};
use tessera_store::StoreError;

/// Paths inside one bake folder.
#[derive(Clone, Debug)]
pub struct BakeLayout {
    pub root: PathBuf,
}

impl BakeLayout {
    pub fn new(root: &Path) -> BakeLayout {
        BakeLayout {
            root: root.to_path_buf(),
        }
    }

    /// Creates the folder and its `work` folder.
    pub fn create(&self) -> Result<(), StoreError> {
        let work = self.work();
        std::fs::create_dir_all(&work).map_err(|e| StoreError::io(&work, e))
    }

    pub fn work(&self) -> PathBuf {
        self.root.join("work")
    }
    pub fn scratch(&self) -> PathBuf {
        self.work().join("scratch")
    }
    pub fn scene_cache(&self) -> PathBuf {
        self.work().join("scene.cache")
    }
    pub fn tiles_pack(&self) -> PathBuf {
        self.work().join("tiles.pack")
    }
    pub fn spans_pack(&self) -> PathBuf {
        self.work().join("spans.pack")
    }
    pub fn regions_pack(&self) -> PathBuf {
        self.work().join("regions.pack")
    }
    pub fn navmesh(&self) -> PathBuf {
        self.root.join("navmesh.tsn")
    }

    pub fn summary_json(&self) -> PathBuf {
        self.root.join("summary.json")
    }
    pub fn config_toml(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// Bytes of every file in the folder.
    pub fn disk_bytes(&self) -> u64 {
        fn walk(p: &Path) -> u64 {
            let Ok(entries) = std::fs::read_dir(p) else {
                return 0;
            };
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.root)
    }
}
