//! The C API called as C calls it: a bake, paths checked against the command line's answers,
//! queries from several threads, and hostile inputs (NULL pointers, tiny buffers, corrupt
//! files) that must give errors, never a crash or a write past a buffer.

// Calling a C API from Rust is unsafe by nature: each block says what makes it sound.
#![allow(unsafe_code)]

use std::ffi::{c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::{Mutex, OnceLock};

use tessera::*;
use tessera_query::QueryFile;

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn c_path(p: &Path) -> CString {
    c(p.to_str().unwrap())
}

fn last_error() -> String {
    // SAFETY: never NULL, NUL-terminated, valid until this thread's next call.
    unsafe { CStr::from_ptr(tessera_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// No buffer: (NULL, capacity 0).
const NO_IDS: (*mut u32, usize) = (null_mut(), 0);
const NO_POINTS: (*mut f64, usize) = (null_mut(), 0);

/// `tessera_query_find_path` with its buffers as (pointer, capacity) pairs.
///
/// # Safety
/// As `tessera_query_find_path`.
unsafe fn find_path(
    query: *mut TesseraQuery,
    (from, to): (*const f64, *const f64),
    corridor: (*mut u32, usize),
    waypoints: (*mut f64, usize),
    links: (*mut u32, usize),
    result: *mut TesseraPath,
) -> i32 {
    // SAFETY: the caller's.
    unsafe {
        tessera_query_find_path(
            query,
            from,
            to,
            corridor.0,
            corridor.1,
            waypoints.0,
            waypoints.1,
            links.0,
            links.1,
            result,
        )
    }
}

/// A 20 m x 20 m floor with a box on it (its top a step too high, one side a ramp) and a
/// slab a metre up that nothing fits under: paths bend around them (Z-up OBJ).
fn small_obj(path: &Path) {
    std::fs::write(
        path,
        "v 0 0 0\nv 20 0 0\nv 20 20 0\nv 0 20 0\nf 1 2 3 4\n\
         v 5 5 0\nv 7 5 0\nv 7 7 0\nv 5 7 0\nv 5 5 1\nv 7 5 1\nv 7 7 1\nv 5 7 1\n\
         f 9 10 11 12\nf 5 6 10\nf 5 10 9\n\
         v 12 4 1\nv 16 4 1\nv 16 12 1\nv 12 12 1\nf 13 14 15 16\n",
    )
    .unwrap();
}

/// The progress a bake reported: (kind, stage).
type Seen = Mutex<Vec<(i32, String)>>;

unsafe extern "C" fn record(user: *mut c_void, p: *const TesseraProgress) -> i32 {
    // SAFETY: `user` is the `Seen` the test passed; `p` and its strings live for the call.
    let (seen, p) = unsafe { (&*(user as *const Seen), &*p) };
    let stage = unsafe { CStr::from_ptr(p.stage) }
        .to_string_lossy()
        .into_owned();
    seen.lock().unwrap().push((p.kind, stage));
    0
}

unsafe extern "C" fn cancel_at_once(_: *mut c_void, _: *const TesseraProgress) -> i32 {
    1
}

/// Bakes `scene` (None: the demo world) into `out` through `tessera_bake`.
fn bake(scene: Option<&Path>, out: &Path, edit: impl FnOnce(&mut TesseraBakeOptions)) -> i32 {
    let scene = scene.map(c_path);
    let out = c_path(out);
    let mut options = tessera_bake_options_default();
    options.scene = scene.as_ref().map_or(null(), |s| s.as_ptr());
    options.out_dir = out.as_ptr();
    options.threads = 2;
    edit(&mut options);
    // SAFETY: every pointer in `options` is NULL or lives until the call returns.
    unsafe { tessera_bake(&options) }
}

/// One small bake shared by the tests, with a one-way off-mesh link `hop` from the box's top
/// down to the floor east of it: (its folder, the progress it reported).
fn baked() -> &'static (tempfile::TempDir, Vec<(i32, String)>) {
    static BAKED: OnceLock<(tempfile::TempDir, Vec<(i32, String)>)> = OnceLock::new();
    BAKED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        small_obj(&dir.path().join("s.obj"));
        std::fs::write(
            dir.path().join("hop.toml"),
            "[[links]]\nfrom = [6.4, 6.0, 1.0]\nto = [8.0, 6.0, 0.0]\nbidirectional = false\n\
             name = \"hop\"\n",
        )
        .unwrap();
        let config = c_path(&dir.path().join("hop.toml"));
        let seen: Seen = Mutex::new(Vec::new());
        let status = bake(
            Some(&dir.path().join("s.obj")),
            &dir.path().join("b"),
            |o| {
                o.config = config.as_ptr();
                o.progress = Some(record);
                o.progress_user = &seen as *const Seen as *mut c_void;
            },
        );
        assert_eq!(status, TESSERA_OK, "{}", last_error());
        (dir, seen.into_inner().unwrap())
    })
}

fn navmesh_path() -> PathBuf {
    baked().0.path().join("b/navmesh.tsn")
}

/// An open mesh and a query object over it, freed on drop.
struct Opened {
    mesh: *mut TesseraNavMesh,
    query: *mut TesseraQuery,
}

impl Opened {
    fn new(seed: u64) -> Opened {
        let path = c_path(&navmesh_path());
        let (mut mesh, mut query) = (null_mut(), null_mut());
        // SAFETY: valid string and output pointers.
        unsafe {
            assert_eq!(tessera_navmesh_open(path.as_ptr(), &mut mesh), TESSERA_OK);
            assert_eq!(tessera_query_new(mesh, seed, &mut query), TESSERA_OK);
        }
        Opened { mesh, query }
    }

    fn random(&self) -> [f64; 3] {
        let mut p = TesseraPoint::from(None);
        // SAFETY: a live query object and a result to write.
        assert_eq!(
            unsafe { tessera_query_random_point(self.query, &mut p) },
            TESSERA_OK
        );
        assert!(p.found);
        p.point
    }

    /// The path through the C API: sizes first, then buffers that fit exactly.
    fn path(&self, a: [f64; 3], b: [f64; 3]) -> (TesseraPath, Vec<u32>, Vec<f64>, Vec<u32>) {
        let mut r = TesseraPath::default();
        // SAFETY: live query, three doubles each, no buffers.
        let s = unsafe {
            find_path(
                self.query,
                (a.as_ptr(), b.as_ptr()),
                NO_IDS,
                NO_POINTS,
                NO_IDS,
                &mut r,
            )
        };
        assert_eq!(s, TESSERA_OK, "{}", last_error());
        let mut corridor = vec![0u32; r.corridor_count];
        let mut waypoints = vec![0f64; 3 * r.waypoint_count];
        let mut links = vec![0u32; r.link_count];
        let ptr_or_null = |v: &mut Vec<u32>| {
            if v.is_empty() {
                null_mut()
            } else {
                v.as_mut_ptr()
            }
        };
        let (cp, lp) = (ptr_or_null(&mut corridor), ptr_or_null(&mut links));
        let wp = if waypoints.is_empty() {
            null_mut()
        } else {
            waypoints.as_mut_ptr()
        };
        // SAFETY: buffers of exactly the capacities given.
        let s = unsafe {
            find_path(
                self.query,
                (a.as_ptr(), b.as_ptr()),
                (cp, corridor.len()),
                (wp, r.waypoint_count),
                (lp, links.len()),
                &mut r,
            )
        };
        assert_eq!(s, TESSERA_OK, "{}", last_error());
        (r, corridor, waypoints, links)
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        // SAFETY: made by the calls above, freed once.
        unsafe {
            tessera_query_free(self.query);
            tessera_navmesh_close(self.mesh);
        }
    }
}

#[test]
fn the_status_codes_are_the_command_line_exit_codes() {
    use tessera_cli::exit;
    let pairs = [
        (TESSERA_INVALID_ARGUMENT, exit::USAGE),
        (TESSERA_BAD_INPUT, exit::BAD_INPUT),
        (TESSERA_BAD_CONFIG, exit::BAD_CONFIG),
        (TESSERA_OVER_BUDGET, exit::OVER_BUDGET),
        (TESSERA_IO, exit::IO),
        (TESSERA_INTERNAL, exit::INTERNAL),
        (TESSERA_BUSY, exit::BUSY),
        (TESSERA_INTERRUPTED, exit::INTERRUPTED),
    ];
    for (status, code) in pairs {
        assert_eq!(status, i32::from(code));
    }
    // SAFETY: a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(tessera_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn a_bake_through_c_writes_the_folder_tessera_bake_writes_and_reports_progress() {
    let (dir, seen) = baked();
    for name in [
        "navmesh.tsn",
        "summary.json",
        "config.toml",
        "preview.png",
        "report.html",
    ] {
        assert!(dir.path().join("b").join(name).is_file(), "{name}");
    }
    let started: Vec<&str> = seen
        .iter()
        .filter(|(k, _)| *k == TESSERA_PROGRESS_START)
        .map(|(_, s)| s.as_str())
        .collect();
    for stage in ["ingest", "voxelize", "polygons", "preview"] {
        assert!(started.contains(&stage), "{stage} not among {started:?}");
    }
    assert!(seen
        .iter()
        .any(|(k, s)| *k == TESSERA_PROGRESS_DONE && s == "preview"));
}

#[test]
fn bake_failures_return_the_command_line_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let missing = dir.path().join("missing.obj");
    assert_eq!(bake(Some(&missing), &out, |_| {}), TESSERA_BAD_INPUT);
    assert!(last_error().contains("missing.obj"), "{}", last_error());
    small_obj(&dir.path().join("s.obj"));
    let scene = dir.path().join("s.obj");
    let nope = c("no-such-preset");
    let status = bake(Some(&scene), &out, |o| o.config = nope.as_ptr());
    assert_eq!(status, TESSERA_BAD_CONFIG, "{}", last_error());
    assert_eq!(
        bake(Some(&scene), &out, |o| o.threads = 5000),
        TESSERA_INVALID_ARGUMENT
    );
    assert!(last_error().contains("--threads"), "{}", last_error());
    let sideways = c("x");
    assert_eq!(
        bake(Some(&scene), &out, |o| o.up = sideways.as_ptr()),
        TESSERA_INVALID_ARGUMENT
    );
    assert_eq!(
        bake(Some(&scene), &out, |o| o.memory_budget = 1 << 16),
        TESSERA_OVER_BUDGET,
        "{}",
        last_error()
    );
    assert_eq!(
        bake(Some(&scene), &out, |o| o.out_dir = null()),
        TESSERA_INVALID_ARGUMENT
    );
    // SAFETY: NULL is refused before anything is read.
    assert_eq!(unsafe { tessera_bake(null()) }, TESSERA_INVALID_ARGUMENT);
    assert_eq!(last_error(), "`options` is NULL");
}

#[test]
fn a_cancelled_bake_returns_130_and_the_same_bake_then_finishes() {
    let dir = tempfile::tempdir().unwrap();
    small_obj(&dir.path().join("s.obj"));
    let (scene, out) = (dir.path().join("s.obj"), dir.path().join("out"));
    let status = bake(Some(&scene), &out, |o| o.progress = Some(cancel_at_once));
    assert_eq!(status, TESSERA_INTERRUPTED, "{}", last_error());
    // A raised cancel flag stops a bake before it does anything.
    let cancel = tessera_cancel_new();
    // SAFETY: a live cancel flag.
    unsafe { tessera_cancel_request(cancel) };
    let status = bake(Some(&scene), &out, |o| o.cancel = cancel);
    assert_eq!(status, TESSERA_INTERRUPTED);
    // SAFETY: made by tessera_cancel_new, no bake uses it any more.
    unsafe { tessera_cancel_free(cancel) };
    assert_eq!(
        bake(Some(&scene), &out, |_| {}),
        TESSERA_OK,
        "{}",
        last_error()
    );
    assert!(out.join("navmesh.tsn").is_file());
}

#[test]
fn paths_through_c_are_the_command_lines_answers() {
    let opened = Opened::new(3);
    // What `tessera path --json` prints is serde_json of this answer.
    let file = QueryFile::open(navmesh_path()).unwrap();
    let mut found = 0;
    for _ in 0..40 {
        let (a, b) = (opened.random(), opened.random());
        let (r, corridor, waypoints, links) = opened.path(a, b);
        let route = file.query().route(a, b);
        let want = &route.answer;
        assert_eq!(r.found, want.found);
        assert_eq!(r.length.to_bits(), want.length.to_bits());
        let flat: Vec<f64> = want.waypoints.iter().flatten().copied().collect();
        assert_eq!(waypoints, flat);
        assert_eq!(
            links,
            want.links.iter().map(|&i| i as u32).collect::<Vec<_>>()
        );
        assert_eq!(corridor, route.corridor);
        found += usize::from(r.found);
    }
    assert!(found >= 20, "only {found} of 40 pairs joined");
}

#[test]
fn a_query_objects_filter_costs_and_avoids_links_by_name() {
    let opened = Opened::new(1);
    // From the box's top (the step up to it too high) to the floor east of it: by `hop` alone.
    let (top, east) = ([6.0, 6.0, 1.0], [9.0, 6.0, 0.0]);
    let (hop, ..) = opened.path(top, east);
    assert!(hop.found && hop.link_count == 1, "{hop:?}");
    let (name, nope) = (c("hop"), c("nope"));
    // SAFETY: a live query object and NUL-terminated names.
    unsafe {
        // The last path's link steps by name, valid until the next call.
        let step = tessera_query_link_name(opened.query, 0);
        assert_eq!(CStr::from_ptr(step).to_str().unwrap(), "hop");
        assert!(tessera_query_link_name(opened.query, 1).is_null());
        assert!(tessera_query_link_name(null(), 0).is_null());
        assert_eq!(tessera_query_avoid(opened.query, name.as_ptr()), TESSERA_OK);
        assert!(!opened.path(top, east).0.found);
        // A name the mesh does not have is refused, naming the ones it has; nothing changes.
        assert_eq!(
            tessera_query_avoid(opened.query, nope.as_ptr()),
            TESSERA_INVALID_ARGUMENT
        );
        assert!(last_error().contains("nope") && last_error().contains("hop"));
        assert!(!opened.path(top, east).0.found);
        assert_eq!(tessera_query_clear_filter(opened.query), TESSERA_OK);
        assert_eq!(opened.path(top, east).0, hop);
        // Costed, the only way is still taken (the cost is not a length); a negative cost
        // is refused.
        assert_eq!(
            tessera_query_set_cost(opened.query, name.as_ptr(), 50.0),
            TESSERA_OK
        );
        assert_eq!(opened.path(top, east).0, hop);
        assert_eq!(
            tessera_query_set_cost(opened.query, name.as_ptr(), -1.0),
            TESSERA_INVALID_ARGUMENT
        );
    }
}

#[test]
fn nearest_height_and_raycast_agree_on_points_of_the_mesh() {
    let opened = Opened::new(5);
    for _ in 0..20 {
        let p = opened.random();
        let (mut near, mut surface) = (TesseraPoint::from(None), TesseraPoint::from(None));
        let mut ray = TesseraRaycast::default();
        let mut polys = [0u32; 64];
        // SAFETY: live query, three doubles, results to write, a buffer of 64.
        unsafe {
            assert_eq!(
                tessera_query_nearest(opened.query, p.as_ptr(), null(), &mut near),
                TESSERA_OK
            );
            assert_eq!(
                tessera_query_height(opened.query, p.as_ptr(), &mut surface),
                TESSERA_OK
            );
            assert_eq!(
                tessera_query_raycast(
                    opened.query,
                    p.as_ptr(),
                    p.as_ptr(),
                    polys.as_mut_ptr(),
                    polys.len(),
                    &mut ray
                ),
                TESSERA_OK
            );
        }
        assert!(near.found && surface.found);
        for k in 0..3 {
            assert!((near.point[k] - p[k]).abs() < 1e-3, "{near:?} {p:?}");
            assert!((surface.point[k] - p[k]).abs() < 1e-3, "{surface:?} {p:?}");
        }
        assert!(ray.started && !ray.hit && ray.t == 1.0, "{ray:?}");
        assert_eq!(ray.polygon_count, 1);
        assert_eq!(polys[0], near.polygon);
    }
    // Far away from the mesh: nothing near, nothing under, no walk.
    let far = [1e4, 1e4, 0.0];
    let mut near = TesseraPoint::from(None);
    let mut ray = TesseraRaycast::default();
    // SAFETY: as above, with no polygon buffer.
    unsafe {
        assert_eq!(
            tessera_query_nearest(opened.query, far.as_ptr(), null(), &mut near),
            TESSERA_OK
        );
        assert_eq!(
            tessera_query_raycast(
                opened.query,
                far.as_ptr(),
                far.as_ptr(),
                null_mut(),
                0,
                &mut ray
            ),
            TESSERA_OK
        );
    }
    assert!(!near.found && near.polygon == TESSERA_NO_POLYGON);
    assert!(!ray.started);
}

#[test]
fn query_objects_on_several_threads_share_one_mesh_and_agree() {
    let opened = Opened::new(9);
    let pairs: Vec<([f64; 3], [f64; 3])> = (0..10)
        .map(|_| (opened.random(), opened.random()))
        .collect();
    let want: Vec<_> = pairs.iter().map(|&(a, b)| opened.path(a, b)).collect();
    let mesh = opened.mesh as usize;
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut query = null_mut();
                // SAFETY: the mesh is shared read-only; each thread makes its own query object.
                assert_eq!(
                    unsafe { tessera_query_new(mesh as *const TesseraNavMesh, 1, &mut query) },
                    TESSERA_OK
                );
                let mine = Opened {
                    mesh: null_mut(),
                    query,
                };
                for (&(a, b), want) in pairs.iter().zip(&want) {
                    assert_eq!(&mine.path(a, b), want);
                }
            });
        }
    });
}

#[test]
fn info_json_is_what_tessera_info_prints() {
    let opened = Opened::new(1);
    let mut length = 0usize;
    // SAFETY: a live mesh; NULL with capacity 0 asks for the length.
    let s = unsafe { tessera_navmesh_info_json(opened.mesh, null_mut(), 0, &mut length) };
    assert_eq!(s, TESSERA_OK);
    let mut buf = vec![0u8; length + 1];
    // SAFETY: a buffer of `length + 1` bytes.
    let s = unsafe {
        tessera_navmesh_info_json(opened.mesh, buf.as_mut_ptr().cast(), buf.len(), &mut length)
    };
    assert_eq!(s, TESSERA_OK);
    let text = CStr::from_bytes_with_nul(&buf).unwrap().to_str().unwrap();
    let file = QueryFile::open(navmesh_path()).unwrap();
    let want = tessera_cli::info::describe(&navmesh_path(), file.file(), file.query());
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(text).unwrap(),
        want
    );
    // Too small: as much as fits, NUL-terminated, and the length still whole.
    let mut small = [0xAAu8; 12];
    // SAFETY: a buffer of 8 bytes (the rest is a fence that must stay untouched).
    let s = unsafe {
        tessera_navmesh_info_json(opened.mesh, small.as_mut_ptr().cast(), 8, &mut length)
    };
    assert_eq!(s, TESSERA_BUFFER_TOO_SMALL);
    assert_eq!(length, text.len());
    assert_eq!(&small[..8], &[&text.as_bytes()[..7], &[0]].concat()[..]);
    assert_eq!(&small[8..], &[0xAA; 4]);
}

#[test]
fn hostile_inputs_get_errors_never_a_crash() {
    let opened = Opened::new(2);
    let (q, mesh) = (opened.query, opened.mesh);
    let p = opened.random();
    let mut point = TesseraPoint::from(None);
    let mut path = TesseraPath::default();
    let mut ray = TesseraRaycast::default();
    let mut length = 0usize;
    let nan = [f64::NAN, 0.0, 0.0];
    // SAFETY: every pointer is NULL, a live handle, or a valid local: the calls must refuse
    // what is wrong without touching anything else.
    unsafe {
        let invalid = TESSERA_INVALID_ARGUMENT;
        assert_eq!(tessera_navmesh_open(null(), &mut null_mut()), invalid);
        let path_c = c_path(&navmesh_path());
        assert_eq!(tessera_navmesh_open(path_c.as_ptr(), null_mut()), invalid);
        assert_eq!(
            tessera_navmesh_open(c("").as_ptr(), &mut null_mut()),
            invalid
        );
        assert_eq!(tessera_query_new(null(), 1, &mut null_mut()), invalid);
        assert_eq!(tessera_query_new(mesh, 1, null_mut()), invalid);
        assert_eq!(
            tessera_query_nearest(null_mut(), p.as_ptr(), null(), &mut point),
            invalid
        );
        assert_eq!(
            tessera_query_nearest(q, null(), null(), &mut point),
            invalid
        );
        assert_eq!(
            tessera_query_nearest(q, p.as_ptr(), null(), null_mut()),
            invalid
        );
        assert_eq!(
            tessera_query_nearest(q, nan.as_ptr(), null(), &mut point),
            invalid
        );
        assert!(last_error().contains("finite"), "{}", last_error());
        assert_eq!(tessera_query_height(q, null(), &mut point), invalid);
        assert_eq!(
            tessera_query_height(null_mut(), p.as_ptr(), &mut point),
            invalid
        );
        assert_eq!(tessera_query_random_point(q, null_mut()), invalid);
        assert_eq!(tessera_query_random_point(null_mut(), &mut point), invalid);
        assert_eq!(
            find_path(
                q,
                (p.as_ptr(), null()),
                NO_IDS,
                NO_POINTS,
                NO_IDS,
                &mut path
            ),
            invalid
        );
        assert_eq!(
            find_path(
                q,
                (p.as_ptr(), p.as_ptr()),
                NO_IDS,
                NO_POINTS,
                NO_IDS,
                null_mut()
            ),
            invalid
        );
        // A NULL buffer with a capacity is a lie, refused.
        assert_eq!(
            find_path(
                q,
                (p.as_ptr(), p.as_ptr()),
                (null_mut(), 4),
                NO_POINTS,
                NO_IDS,
                &mut path
            ),
            invalid
        );
        assert_eq!(
            tessera_query_raycast(q, null(), p.as_ptr(), null_mut(), 0, &mut ray),
            invalid
        );
        assert_eq!(
            tessera_query_raycast(q, p.as_ptr(), p.as_ptr(), null_mut(), 3, &mut ray),
            invalid
        );
        assert_eq!(
            tessera_navmesh_info_json(null(), null_mut(), 0, &mut length),
            invalid
        );
        assert_eq!(
            tessera_navmesh_info_json(mesh, null_mut(), 0, null_mut()),
            invalid
        );
        // A misaligned output.
        let mut bytes = [0u8; 64];
        let odd = bytes.as_mut_ptr().add(1).cast::<TesseraPoint>();
        assert_eq!(tessera_query_nearest(q, p.as_ptr(), null(), odd), invalid);
        assert!(last_error().contains("aligned"), "{}", last_error());
        // Freeing and closing NULL is nothing.
        tessera_query_free(null_mut());
        tessera_navmesh_close(null_mut());
        tessera_cancel_free(null_mut());
        tessera_cancel_request(null());
        // A success clears the message.
        assert_eq!(
            tessera_query_nearest(q, p.as_ptr(), null(), &mut point),
            TESSERA_OK
        );
        assert_eq!(last_error(), "");
    }

    // Tiny buffers: filled up to their capacity, never past it, the counts whole.
    let mut found = None;
    for _ in 0..50 {
        let (a, b) = (opened.random(), opened.random());
        let (r, ..) = opened.path(a, b);
        if r.found && r.waypoint_count >= 3 && r.corridor_count >= 3 {
            found = Some((a, b, r));
            break;
        }
    }
    let (a, b, whole) = found.expect("a pair with a bending path");
    let fence = 0xDEAD_BEEFu32;
    let mut corridor = [fence; 4];
    let mut waypoints = [f64::MAX; 6];
    let mut links = [fence; 2];
    // SAFETY: buffers larger than the capacities given; the rest is a fence.
    let s = unsafe {
        find_path(
            q,
            (a.as_ptr(), b.as_ptr()),
            (corridor.as_mut_ptr(), 1),
            (waypoints.as_mut_ptr(), 1),
            (links.as_mut_ptr(), 0),
            &mut path,
        )
    };
    assert_eq!(s, TESSERA_BUFFER_TOO_SMALL);
    assert!(
        last_error().contains("`corridor` needs"),
        "{}",
        last_error()
    );
    assert_eq!(path, whole);
    assert_ne!(corridor[0], fence);
    assert_eq!(&corridor[1..], &[fence; 3]);
    assert!(waypoints[..3].iter().all(|&w| w != f64::MAX));
    assert_eq!(&waypoints[3..], &[f64::MAX; 3]);
    assert_eq!(links, [fence; 2]);

    // Files that are not navmeshes: bad input, with the file named; nothing opened.
    let dir = tempfile::tempdir().unwrap();
    let mut corrupt = std::fs::read(navmesh_path()).unwrap();
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 0x5A;
    let cases: [(&str, Vec<u8>); 3] = [
        ("corrupt.tsn", corrupt),
        ("garbage.tsn", b"not a navmesh at all".to_vec()),
        ("empty.tsn", Vec::new()),
    ];
    for (name, bytes) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        let mut handle = std::ptr::dangling_mut::<TesseraNavMesh>();
        // SAFETY: a valid string and output.
        let s = unsafe { tessera_navmesh_open(c_path(&file).as_ptr(), &mut handle) };
        assert_eq!(s, TESSERA_BAD_INPUT, "{name}: {}", last_error());
        assert!(handle.is_null());
        assert!(last_error().contains(name), "{}", last_error());
    }
    for missing in [dir.path().join("missing.tsn"), dir.path().to_path_buf()] {
        let mut handle = null_mut();
        // SAFETY: a valid string and output.
        let s = unsafe { tessera_navmesh_open(c_path(&missing).as_ptr(), &mut handle) };
        assert_eq!(s, TESSERA_BAD_INPUT, "{}", last_error());
    }
}

#[test]
fn a_query_outlives_the_closed_mesh_it_was_made_over() {
    let mut opened = Opened::new(4);
    let a = opened.random();
    // SAFETY: closed once; the query object keeps what it needs.
    unsafe { tessera_navmesh_close(opened.mesh) };
    opened.mesh = null_mut();
    let (r, ..) = opened.path(a, a);
    assert!(r.found);
}
