//! The bake: `tessera bake` through C, with progress through a callback and a cancel object.

use std::ffi::{c_char, c_void, CString};
use std::ops::ControlFlow;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tessera_cli::embed::{self, BakeOptions};
use tessera_pipeline::{EventKind, LogFormat, ProgressEvent};

use crate::error::{arg, guard, path, text, Error, TesseraStatus};

/// A stage begins (`total`: its unit count, 0 when unknown).
pub const TESSERA_PROGRESS_START: i32 = 0;
/// A stage begins a step of its own, named in `message`; counts restart.
pub const TESSERA_PROGRESS_PHASE: i32 = 1;
/// `done` units of `total` are finished (at most every 100 ms per stage).
pub const TESSERA_PROGRESS_ADVANCE: i32 = 2;
/// The stage is finished.
pub const TESSERA_PROGRESS_DONE: i32 = 3;
/// A warning (in `message`) that does not stop the bake.
pub const TESSERA_PROGRESS_WARNING: i32 = 4;

/// One progress report; its strings live for the call only.
#[repr(C)]
pub struct TesseraProgress {
    /// One of the `TESSERA_PROGRESS_` kinds.
    pub kind: i32,
    /// The stage: "ingest", "bin", "voxelize", "merge", "polygons", "preview" ("" for a
    /// warning).
    pub stage: *const c_char,
    pub done: u64,
    pub total: u64,
    /// A phase's name or a warning's text; NULL otherwise.
    pub message: *const c_char,
    /// In a bake for several agents (`[[agents]]`), the agent whose stage it is; NULL for a
    /// stage all agents share, and in a bake for one.
    pub agent: *const c_char,
}

/// Called with each progress report, from the bake's threads but never two calls at once.
/// Returning non-zero cancels the bake (it then returns `TESSERA_INTERRUPTED`). NULL: none.
pub type TesseraProgressFn =
    Option<unsafe extern "C" fn(user: *mut c_void, progress: *const TesseraProgress) -> i32>;

/// A cancel flag for bakes, raised from any thread (a signal handler included). Once raised it
/// stays raised: a bake given it stops at its next safe point (within a second) and returns
/// `TESSERA_INTERRUPTED`; make a new one for the next bake.
pub struct TesseraCancel {
    flag: Arc<AtomicBool>,
}

/// What to bake, as `tessera bake`'s arguments of the same names. Start from
/// `tessera_bake_options_default()` and set what differs.
#[repr(C)]
pub struct TesseraBakeOptions {
    /// The scene file (.obj, .gltf, .glb); NULL bakes the generated demo world.
    pub scene: *const c_char,
    /// The output folder (required): navmesh.tsn, summary.json, config.toml, preview.png,
    /// report.html, and the checkpoints a later bake resumes from.
    pub out_dir: *const c_char,
    /// A config file or a preset (default, def, S2..S5, recast-demo); NULL: "default".
    pub config: *const c_char,
    /// Worker threads, 1 to 4096; 0: the machine's cores.
    pub threads: u32,
    /// Memory budget in bytes; 0: half the available memory.
    pub memory_budget: u64,
    /// The scene's up axis, "y" or "z"; NULL: z for OBJ, y for glTF.
    pub up: *const c_char,
    /// Ignore (and remove) existing checkpoints.
    pub fresh: bool,
    /// Progress reports, or NULL.
    pub progress: TesseraProgressFn,
    /// Handed back to `progress`.
    pub progress_user: *mut c_void,
    /// A cancel flag, or NULL.
    pub cancel: *const TesseraCancel,
}

/// Options with every field at its default (all NULL or zero).
#[no_mangle]
pub extern "C" fn tessera_bake_options_default() -> TesseraBakeOptions {
    TesseraBakeOptions {
        scene: ptr::null(),
        out_dir: ptr::null(),
        config: ptr::null(),
        threads: 0,
        memory_budget: 0,
        up: ptr::null(),
        fresh: false,
        progress: None,
        progress_user: ptr::null_mut(),
        cancel: ptr::null(),
    }
}

/// A new cancel flag, lowered. Free it with `tessera_cancel_free` once no bake uses it.
#[no_mangle]
pub extern "C" fn tessera_cancel_new() -> *mut TesseraCancel {
    Box::into_raw(Box::new(TesseraCancel {
        flag: Arc::new(AtomicBool::new(false)),
    }))
}

/// Raises the flag (NULL: nothing).
#[no_mangle]
pub unsafe extern "C" fn tessera_cancel_request(cancel: *const TesseraCancel) {
    // SAFETY: NULL, or (the caller's contract) a live cancel flag.
    if let Some(cancel) = unsafe { cancel.as_ref() } {
        cancel.flag.store(true, Ordering::Relaxed);
    }
}

/// Frees a cancel flag (NULL: nothing).
#[no_mangle]
pub unsafe extern "C" fn tessera_cancel_free(cancel: *mut TesseraCancel) {
    if !cancel.is_null() {
        // SAFETY: made by `Box::into_raw` in `tessera_cancel_new`, freed once.
        drop(unsafe { Box::from_raw(cancel) });
    }
}

/// The progress callback and its user pointer, carried to the bake's threads.
struct Callback {
    call: unsafe extern "C" fn(*mut c_void, *const TesseraProgress) -> i32,
    user: *mut c_void,
}

// SAFETY: the C caller hands the callback and its pointer over to be called from the bake's
// threads (the documented contract of `TesseraBakeOptions::progress`); calls are serialized.
unsafe impl Send for Callback {}

impl Callback {
    fn report(&self, event: ProgressEvent<'_>) -> ControlFlow<()> {
        let c = |s: &str| CString::new(s.replace('\0', "\u{fffd}")).unwrap_or_default();
        let stage = c(event.stage);
        let message = event.message.map(c);
        let agent = event.agent.map(c);
        let kind = match event.kind {
            EventKind::Start => TESSERA_PROGRESS_START,
            EventKind::Phase => TESSERA_PROGRESS_PHASE,
            EventKind::Progress => TESSERA_PROGRESS_ADVANCE,
            EventKind::Done => TESSERA_PROGRESS_DONE,
            EventKind::Warning => TESSERA_PROGRESS_WARNING,
        };
        let report = TesseraProgress {
            kind,
            stage: stage.as_ptr(),
            done: event.done,
            total: event.total,
            message: message.as_ref().map_or(ptr::null(), |m| m.as_ptr()),
            agent: agent.as_ref().map_or(ptr::null(), |a| a.as_ptr()),
        };
        // SAFETY: a C function pointer given for this purpose; `report` and its strings live
        // until it returns.
        if unsafe { (self.call)(self.user, &report) } != 0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// Bakes as `tessera bake` does: the same files in the output folder, the same checks of the
/// options (a value the command line refuses is `TESSERA_INVALID_ARGUMENT`, naming it), and
/// the command line's exit code as the status on failure. Progress goes to the callback only
/// (nothing is printed); the bake stops when the cancel flag is raised or the callback
/// answers non-zero. No signal handler is installed.
#[no_mangle]
pub unsafe extern "C" fn tessera_bake(options: *const TesseraBakeOptions) -> TesseraStatus {
    guard(|| {
        let o = unsafe { arg(options, "options") }?;
        let bake = unsafe {
            BakeOptions {
                scene: if o.scene.is_null() {
                    None
                } else {
                    Some(path(o.scene, "scene")?)
                },
                out_dir: path(o.out_dir, "out_dir")?,
                config: text(o.config, "config")?,
                threads: (o.threads > 0).then_some(i64::from(o.threads)),
                memory_budget: (o.memory_budget > 0).then(|| o.memory_budget.to_string()),
                up: text(o.up, "up")?,
                fresh: o.fresh,
                log_format: None,
            }
        };
        // SAFETY: NULL, or (the caller's contract) a live cancel flag.
        let flag = match unsafe { o.cancel.as_ref() } {
            Some(cancel) => Arc::clone(&cancel.flag),
            None => Arc::new(AtomicBool::new(false)),
        };
        let progress = o.progress.map(|call| {
            let callback = Callback {
                call,
                user: o.progress_user,
            };
            embed::progress_to(LogFormat::Quiet, Arc::clone(&flag), move |event| {
                callback.report(event)
            })
        });
        embed::bake(&bake, progress, flag).map_err(Error::from)?;
        Ok(())
    })
}
