//! Exit codes (listed in the crate documentation), the failure every command returns, and
//! how a failure is printed.

use std::io;
use std::process::ExitCode;

pub const USAGE: u8 = 2;
pub const BAD_INPUT: u8 = 3;
pub const BAD_CONFIG: u8 = 4;
pub const OVER_BUDGET: u8 = 5;
pub const IO: u8 = 6;
pub const INTERNAL: u8 = 7;
/// Another bake holds the bake folder (sysexits' EX_TEMPFAIL: try again later).
pub const BUSY: u8 = 75;
pub const INTERRUPTED: u8 = 130;

/// Why a command failed: the exit code, and the error to print.
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn new(code: u8, error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code,
            error: error.into(),
        }
    }

    /// Writing the answer to stdout failed with `e`.
    ///
    /// A closed pipe (EPIPE: the reader, as `head -1`, has all it wanted and left) is not a
    /// failure of the command: [`report`] ends it quietly with exit 0, as ripgrep and other
    /// Rust command-line tools do. C tools such as `cat` are instead killed by SIGPIPE, which a
    /// shell reports as 141 and `set -o pipefail` as a failed pipeline; exit 0 keeps such
    /// scripts working. Any other write error (a full disk behind a redirection) is an I/O
    /// failure.
    pub fn output(e: io::Error) -> Failure {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::new(0, ClosedOutput)
        } else {
            Failure::new(IO, anyhow::Error::new(e).context("cannot write to stdout"))
        }
    }
}

/// The reader of stdout closed its end before the answer was written whole.
#[derive(Debug)]
struct ClosedOutput;

impl std::fmt::Display for ClosedOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed by its reader")
    }
}

impl std::error::Error for ClosedOutput {}

/// How a failure is printed on stderr.
#[derive(Clone, Copy)]
pub enum Style {
    /// `error: <message>`.
    Text,
    /// One JSON line, `{"event":"error","exit_code":N,"message":...}` (a bake logging JSON).
    Json,
}

/// Prints a failure on stderr and gives its exit code.
pub fn report(result: Result<(), Failure>, style: Style) -> ExitCode {
    let Err(failure) = result else {
        return ExitCode::SUCCESS;
    };
    if failure.error.is::<ClosedOutput>() {
        return ExitCode::SUCCESS;
    }
    let message = format!("{:#}", failure.error);
    match style {
        Style::Text => eprintln!("error: {message}"),
        Style::Json => {
            let line = serde_json::json!({"event": "error", "exit_code": failure.code, "message": message});
            eprintln!("{line}");
        }
    }
    ExitCode::from(failure.code)
}
