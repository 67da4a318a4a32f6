//! Status codes, the last error message, the guard every function runs in, and the checks on
//! the pointers C hands over.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use tessera_cli::exit::{self, Failure};

/// What a call did: `TESSERA_OK` or why it failed. The codes are the command line's exit codes
/// for the same failures, so a bake through the C API reports as `tessera bake` exits.
pub type TesseraStatus = i32;

/// Success.
pub const TESSERA_OK: TesseraStatus = 0;
/// A bad argument: a NULL or misaligned pointer, a number out of range, an option the
/// command line would refuse (its exit code 2).
pub const TESSERA_INVALID_ARGUMENT: TesseraStatus = 2;
/// Bad input: a scene or navmesh file missing, malformed, corrupt or not valid; nothing
/// walkable; a world too large.
pub const TESSERA_BAD_INPUT: TesseraStatus = 3;
/// A bad config: a field out of its limits, an unknown preset.
pub const TESSERA_BAD_CONFIG: TesseraStatus = 4;
/// The memory budget is too small for one tile.
pub const TESSERA_OVER_BUDGET: TesseraStatus = 5;
/// An I/O failure: a file that exists but cannot be read, a full disk, a corrupt checkpoint,
/// threads the system refused.
pub const TESSERA_IO: TesseraStatus = 6;
/// An internal error (a bug: please report it), a panic caught at the boundary included.
pub const TESSERA_INTERNAL: TesseraStatus = 7;
/// A buffer was too small: it holds what fitted, and the result counts everything.
pub const TESSERA_BUFFER_TOO_SMALL: TesseraStatus = 10;
/// The output folder is in use by another bake.
pub const TESSERA_BUSY: TesseraStatus = 75;
/// The bake was cancelled; its checkpoints are intact and the same bake resumes from them.
pub const TESSERA_INTERRUPTED: TesseraStatus = 130;

/// A failed call: its status and its message.
#[derive(Debug)]
pub(crate) struct Error {
    pub status: TesseraStatus,
    pub message: String,
}

impl Error {
    pub fn new(status: TesseraStatus, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(TESSERA_INVALID_ARGUMENT, message)
    }
}

impl From<Failure> for Error {
    fn from(f: Failure) -> Error {
        Error::new(TesseraStatus::from(f.code), exit::message(&f.error))
    }
}

thread_local! {
    /// The message of this thread's last call (empty when it succeeded).
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // A message holding a NUL would end early in C: the NUL is replaced.
    let text = CString::new(message.replace('\0', "\u{fffd}")).unwrap_or_default();
    LAST_ERROR.with(|m| *m.borrow_mut() = text);
}

/// The message of the calling thread's last call to a tessera function that returns a status:
/// why it failed, or "" when it succeeded. Never NULL. Valid until that thread's next such call.
#[no_mangle]
pub extern "C" fn tessera_last_error() -> *const c_char {
    LAST_ERROR.with(|m| m.borrow().as_ptr())
}

/// tessera's version, e.g. "0.1.0". A static string.
#[no_mangle]
pub extern "C" fn tessera_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Runs the body of an exported function: its error becomes the status and the last error
/// message, and a panic becomes `TESSERA_INTERNAL` instead of unwinding into C.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Error>) -> TesseraStatus {
    let (status, message) = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => (TESSERA_OK, String::new()),
        Ok(Err(e)) => (e.status, e.message),
        Err(panic) => {
            let what = tessera_geom::panic_message(&*panic).unwrap_or_else(|| "a panic".into());
            (
                TESSERA_INTERNAL,
                format!("internal error (a bug, please report it): {what}"),
            )
        }
    };
    set_last_error(&message);
    status
}

/// The value behind `ptr`, an argument named `what`: refused when NULL or misaligned.
///
/// # Safety
/// A non-NULL `ptr` must point to a valid `T` that outlives the call.
pub(crate) unsafe fn arg<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, Error> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("`{what}` is NULL")));
    }
    if !ptr.is_aligned() {
        return Err(Error::invalid(format!("`{what}` is not aligned")));
    }
    // SAFETY: not NULL, aligned, and (the caller's contract) pointing to a valid T.
    Ok(unsafe { &*ptr })
}

/// Where to write an output named `what`: refused when NULL or misaligned.
///
/// # Safety
/// A non-NULL `ptr` must point to memory for a `T` that outlives the call.
pub(crate) unsafe fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, Error> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("`{what}` is NULL")));
    }
    if !ptr.is_aligned() {
        return Err(Error::invalid(format!("`{what}` is not aligned")));
    }
    // SAFETY: not NULL, aligned, and (the caller's contract) writable for a T. The value
    // there may be uninitialised: callers only ever assign to it whole.
    Ok(unsafe { &mut *ptr })
}

/// A scene point: three finite doubles at `ptr`.
///
/// # Safety
/// A non-NULL `ptr` must point to three doubles.
pub(crate) unsafe fn point(ptr: *const f64, what: &str) -> Result<[f64; 3], Error> {
    // SAFETY: the caller's contract: three doubles, the first checked by `arg`.
    let p = *unsafe { arg(ptr.cast::<[f64; 3]>(), what) }?;
    if p.iter().all(|c| c.is_finite()) {
        Ok(p)
    } else {
        Err(Error::invalid(format!(
            "`{what}` ({}, {}, {}) is not three finite numbers",
            p[0], p[1], p[2]
        )))
    }
}

/// The NUL-terminated string at `ptr`, named `what`, as a path (its bytes as they are).
///
/// # Safety
/// A non-NULL `ptr` must point to a NUL-terminated string.
pub(crate) unsafe fn path(ptr: *const c_char, what: &str) -> Result<PathBuf, Error> {
    let bytes = unsafe { c_string(ptr, what) }?.to_bytes();
    if bytes.is_empty() {
        return Err(Error::invalid(format!("`{what}` is empty")));
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes)
            .map(PathBuf::from)
            .map_err(|_| Error::invalid(format!("`{what}` is not UTF-8")))
    }
}

/// The NUL-terminated UTF-8 string at `ptr`, named `what`; `None` when NULL.
///
/// # Safety
/// A non-NULL `ptr` must point to a NUL-terminated string.
pub(crate) unsafe fn text(ptr: *const c_char, what: &str) -> Result<Option<String>, Error> {
    if ptr.is_null() {
        return Ok(None);
    }
    let s = unsafe { c_string(ptr, what) }?;
    s.to_str()
        .map(|s| Some(s.to_string()))
        .map_err(|_| Error::invalid(format!("`{what}` is not UTF-8")))
}

/// # Safety
/// A non-NULL `ptr` must point to a NUL-terminated string.
unsafe fn c_string<'a>(ptr: *const c_char, what: &str) -> Result<&'a CStr, Error> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("`{what}` is NULL")));
    }
    // SAFETY: not NULL and (the caller's contract) NUL-terminated.
    Ok(unsafe { CStr::from_ptr(ptr) })
}

/// Copies `items` into the caller's buffer `buf` of `capacity` items (`what` names it): as
/// many as fit. A NULL buffer is one not wanted (its capacity must be 0). Returns whether all
/// fitted.
///
/// # Safety
/// A non-NULL `buf` must be writable for `capacity` items of `T`.
pub(crate) unsafe fn fill<T: Copy>(
    buf: *mut T,
    capacity: usize,
    items: &[T],
    what: &str,
) -> Result<bool, Error> {
    if buf.is_null() {
        if capacity != 0 {
            return Err(Error::invalid(format!(
                "`{what}` is NULL but its capacity is {capacity}"
            )));
        }
        return Ok(true);
    }
    if !buf.is_aligned() {
        return Err(Error::invalid(format!("`{what}` is not aligned")));
    }
    let n = items.len().min(capacity);
    // SAFETY: `buf` is aligned and (the caller's contract) holds `capacity >= n` items; the
    // source is a Rust slice, so the two cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), buf, n) };
    Ok(n == items.len())
}
