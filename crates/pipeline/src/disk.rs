//! Free disk space against what the bake is about to write, checked once the scene is read
//! and before binning starts: a disk that cannot hold the work files fails the bake in its
//! first seconds (exit 6, the folder, its free bytes and the estimate named), not after hours
//! of voxelizing with "No space left on device"; a disk that may just hold them gets a
//! warning.
//!
//! What the stages after ingest write, per unit, measured on the demo world, citygen S and a
//! citygen terrain (`du` of `work/` and of the polygon stage's scratch at its peak; default
//! settings, 10 cm cells):
//!
//! | file | demo | city S | terrain | unit |
//! |---|---|---|---|---|
//! | `tiles.pack` (lz4 of 36-byte triangles) | 12.5 | 11.5 | 15.6 | bytes per triangle copy |
//! | `tiles.pack` of a small scene (raw, see `bin::stores_raw`) | 36 | 36 | 36 | bytes per triangle copy |
//! | spans, floors and regions journals | 1.09 | 1.03 | 0.75 | bytes per cell of the grid |
//! | polygon scratch at its peak, and the navmesh | 0.2 | 0.5 | 0.03 | bytes per cell of the grid |
//!
//! A triangle is copied into every tile whose core and band it overlaps: about
//! `((tile + 2 band) / tile)^2` copies for triangles small next to a tile (1.11 on the demo
//! world, 1.17 on city S).

use std::path::Path;

use tessera_artifacts::GridFrame;

use crate::{BakeError, BakeLayout, Progress};

/// Bytes per triangle copy in the tile pack, a little above the largest measured.
const TILE_PACK_PER_COPY: f64 = 16.0;
/// The least a triangle copy takes in the tile pack: a quarter of the least measured, for
/// meshes lz4 compresses far better than these (flat grids).
const TILE_PACK_PER_COPY_LEAST: f64 = 3.0;
/// Bytes per triangle copy in a tile pack stored raw: the triangle itself.
const RAW_TILE_PACK_PER_COPY: f64 = std::mem::size_of::<tessera_artifacts::TileTriangle>() as f64;
/// Bytes per grid cell in the voxelize journals, a little above the largest measured.
const JOURNALS_PER_CELL: f64 = 1.2;
/// Bytes per grid cell of the polygon stage's scratch and the navmesh, likewise.
const POLYGONS_PER_CELL: f64 = 0.6;
/// Free space below this many times the typical estimate is worth a warning.
const TIGHT: f64 = 1.5;

/// What the work files still to be written take: `typical` as measured, `least` what they
/// take at the very least (the tile pack alone: a copy of every triangle, at its best
/// compression when it is compressed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Estimate {
    pub typical: u64,
    pub least: u64,
}

impl Estimate {
    /// The files binning, voxelizing and the polygon stage write for `triangles` triangles
    /// on `frame`, less `written` bytes already in the work folder (the checkpoints of an
    /// earlier run, which a resumed bake keeps).
    pub(crate) fn after_ingest(frame: &GridFrame, triangles: u64, written: u64) -> Estimate {
        let tile = f64::from(frame.tile_size.max(1));
        let grown = (tile + 2.0 * f64::from(frame.band)) / tile;
        let copies = triangles as f64 * grown * grown;
        // Cells holding geometry: no more than the grid's, nor than a tile per copy (a far
        // outlier stretches the grid, not the files).
        let cells =
            (f64::from(frame.cells[0]) * f64::from(frame.cells[1])).min(copies * tile * tile);
        let (per_copy, least_per_copy) = if crate::bin::stores_raw(triangles) {
            (RAW_TILE_PACK_PER_COPY, RAW_TILE_PACK_PER_COPY)
        } else {
            (TILE_PACK_PER_COPY, TILE_PACK_PER_COPY_LEAST)
        };
        let typical = copies * per_copy + cells * (JOURNALS_PER_CELL + POLYGONS_PER_CELL);
        let least = triangles as f64 * least_per_copy;
        Estimate {
            typical: (typical as u64).saturating_sub(written),
            least: (least as u64).saturating_sub(written),
        }
    }
}

/// How `free` bytes compare with what is needed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Verdict {
    Enough,
    /// Below the typical need with some margin: the bake may run out.
    Tight,
    /// Below the least the files take: the bake cannot finish.
    Short,
}

pub(crate) fn judge(free: u64, need: Estimate) -> Verdict {
    if free < need.least {
        Verdict::Short
    } else if (free as f64) < need.typical as f64 * TIGHT {
        Verdict::Tight
    } else {
        Verdict::Enough
    }
}

/// Compares the free space of the bake folder's file system with what binning, voxelizing
/// and the polygon stage will write for `triangles` on `frame`: too little fails the bake,
/// a little more than needed is warned about. A file system that cannot say how much is
/// free is not checked.
pub(crate) fn check(
    layout: &BakeLayout,
    frame: &GridFrame,
    triangles: u64,
    progress: &Progress,
) -> Result<(), BakeError> {
    let work = layout.work();
    let Ok(free) = free_bytes(&work) else {
        return Ok(());
    };
    let cache = std::fs::metadata(layout.scene_cache()).map_or(0, |m| m.len());
    let written = crate::layout::bytes_under(&work).saturating_sub(cache);
    let need = Estimate::after_ingest(frame, triangles, written);
    match judge(free, need) {
        Verdict::Enough => Ok(()),
        Verdict::Tight => {
            progress.warn(&format!(
                "{} has {} free; the work files of this scene take about {}: the bake may \
                 run out of space",
                work.display(),
                bytes(free),
                bytes(need.typical)
            ));
            Ok(())
        }
        Verdict::Short => Err(BakeError::DiskSpace {
            dir: work,
            free,
            least: need.least,
            typical: need.typical,
        }),
    }
}

/// Bytes an unprivileged writer may still use on the file system of `dir`.
pub(crate) fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    let s = rustix::fs::statvfs(dir)?;
    Ok(s.f_bavail.saturating_mul(s.f_frsize))
}

/// `n` bytes for a message: `123 MiB (129 000 000 bytes)`.
pub(crate) fn bytes(n: u64) -> String {
    format!("{:.1} MiB ({n} bytes)", n as f64 / (1u64 << 20) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(cells: u32, tile: u32, band: u32) -> GridFrame {
        GridFrame {
            world_origin: [0.0; 3],
            cell_size: 0.1,
            cell_height: 0.05,
            cells: [cells, cells],
            tile_size: tile,
            band,
        }
    }

    #[test]
    fn the_estimate_covers_the_measured_bakes_and_follows_the_geometry() {
        // City S: 364 660 triangles, 2501 x 2501 cells in tiles of 251 with a band of 7;
        // the work files after ingest took 11.4 MB with an lz4 tile pack of 4 992 378 bytes,
        // and 13 MB at the polygon stage's peak; its tile pack is now stored raw, 15 700 252
        // bytes.
        let city = Estimate::after_ingest(&frame(2501, 251, 7), 364_660, 0);
        let measured = 26_126_939 - 13_127_880 - 4_992_378 + 15_700_252;
        assert!(city.typical >= measured, "{city:?}");
        assert!(city.typical < 2 * measured, "{city:?}");
        assert!(city.least < measured, "{city:?}");
        // A scene too large for a raw pack: the lz4 figures (with 4 992 378 bytes for the
        // 436 036 copies of city S, scaled to a scene 1000 times larger).
        let large = Estimate::after_ingest(&frame(25010, 251, 7), 364_660_000, 0);
        assert!(large.typical as f64 >= 4_992_378.0 * 1000.0, "{large:?}");
        assert!(large.least < 4_992_378 * 1000 / 4, "{large:?}");
        // A far outlier stretches the grid to 10^9 cells a side, not the estimate.
        let sparse = Estimate::after_ingest(&frame(1 << 30, 256, 7), 2, 0);
        assert!(sparse.typical < 1 << 20, "{sparse:?}");
        // What an earlier run wrote is not needed again.
        let resumed = Estimate::after_ingest(&frame(2501, 251, 7), 364_660, city.typical);
        assert_eq!(resumed.typical, 0);
        assert_eq!(resumed.least, 0);
    }

    #[test]
    fn too_little_free_space_is_short_a_little_more_is_tight() {
        let need = Estimate {
            typical: 1000,
            least: 200,
        };
        assert_eq!(judge(0, need), Verdict::Short);
        assert_eq!(judge(199, need), Verdict::Short);
        assert_eq!(judge(200, need), Verdict::Tight);
        assert_eq!(judge(1499, need), Verdict::Tight);
        assert_eq!(judge(1500, need), Verdict::Enough);
        assert_eq!(judge(u64::MAX, need), Verdict::Enough);
        let nothing = Estimate {
            typical: 0,
            least: 0,
        };
        assert_eq!(judge(0, nothing), Verdict::Enough);
    }

    #[test]
    fn free_bytes_reads_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).unwrap() > 0);
        assert!(free_bytes(&dir.path().join("missing")).is_err());
    }
}
