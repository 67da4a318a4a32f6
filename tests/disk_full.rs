//! A write that fails mid-bake (the disk fills up) is a clear I/O error naming the file, and
//! leaves a state the next run resumes from, to the same bytes as an uninterrupted bake.
//!
//! The failure is made with the file-size limit (`RLIMIT_FSIZE`, SIGXFSZ ignored): every
//! write past it fails with EFBIG, as a write to a full disk fails with ENOSPC. No root or
//! special file system needed. This binary holds this one test, since the limit is per
//! process.

use std::path::Path;

use tessera_pipeline::BakeError;
use tessera_tests::{coarse_config, file, quiet_request, recast_scenes};

#[allow(unsafe_code)] // setrlimit and signal on this test process: see the SAFETY comment inside
fn set_file_size_limit(bytes: u64) {
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain libc calls on this process's own limits and signal disposition.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    }
}

fn bake(out: &Path) -> Result<tessera_pipeline::BakeSummary, BakeError> {
    let scene = &recast_scenes()[0];
    // Fine enough that the span journal outgrows the scene cache and the tile pack, with
    // tiles large enough that it is one segment.
    let mut config = coarse_config(256);
    config.voxel.cell_size = 0.1;
    config.voxel.cell_height = 0.05;
    tessera_pipeline::bake(quiet_request(
        file(scene, tessera_geom::UpAxis::Y),
        config,
        out,
    ))
}

#[test]
fn a_full_disk_is_an_io_error_and_the_bake_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    bake(&whole).unwrap();
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    // The tile pack, or its parts: the largest of them.
    let bins = whole.join("work/bins");
    let tiles = std::fs::read_dir(&bins)
        .map(|d| d.map(|e| size(&e.unwrap().path())).max().unwrap_or(0))
        .unwrap_or_else(|_| size(&whole.join("work/tiles.pack")));
    let (cache, spans) = (
        size(&whole.join("work/scene.cache")),
        // Its largest segment (the limit is on each file's size).
        std::fs::read_dir(whole.join("work/spans"))
            .unwrap()
            .map(|e| size(&e.unwrap().path()))
            .max()
            .unwrap(),
    );
    // Room for the scene cache and the tile pack, not for the span journal.
    let limit = cache.max(tiles) + 4096;
    assert!(
        limit < spans,
        "the scene is too small for this test: cache {cache}, tiles {tiles}, spans {spans}"
    );

    let out = dir.path().join("full");
    set_file_size_limit(limit);
    let err = bake(&out).unwrap_err();
    set_file_size_limit(u64::MAX);
    let BakeError::Io(e) = &err else {
        panic!("expected an I/O error, got {err}");
    };
    let message = e.to_string();
    assert!(
        message.contains("work/spans") || message.contains("work/regions"),
        "{message}"
    );
    assert!(!out.join("summary.json").exists() && !out.join("navmesh.tsn").exists());

    // The next run resumes from what was written and ends where an uninterrupted bake does.
    let resumed = bake(&out).unwrap();
    assert!(resumed.stages_reused.contains(&"ingest".to_string()));
    for name in ["navmesh.tsn", "work/spans", "work/regions"] {
        use tessera_test_support::bake_folder::contents;
        assert!(
            contents(&out.join(name)) == contents(&whole.join(name)),
            "{name} differs after the resume"
        );
    }
}
