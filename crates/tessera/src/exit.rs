//! Exit codes (listed in the crate documentation), the failure every command returns, and
//! how a failure is printed.

use std::io;
use std::process::ExitCode;

/// `tessera validate` ran and a check failed.
pub const CHECKS_FAILED: u8 = 1;
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
    /// One JSON line, `{"event":"error","exit_code":N,"message":...}` (a bake logging JSON),
    /// with `"process":I` for a process of a distributed bake.
    Json(Option<u32>),
}

/// The error and its causes, joined by ": ", leaving out a cause whose text the message
/// already holds (errors that print their source, as `path: {source}` does, would otherwise
/// say it twice).
pub fn message(error: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

/// Prints a failure on stderr and gives its exit code.
pub fn report(result: Result<(), Failure>, style: Style) -> ExitCode {
    let Err(failure) = result else {
        return ExitCode::SUCCESS;
    };
    if failure.error.is::<ClosedOutput>() {
        return ExitCode::SUCCESS;
    }
    let message = message(&failure.error);
    match style {
        Style::Text => eprintln!("error: {message}"),
        Style::Json(process) => {
            let mut line = serde_json::json!({"event": "error", "exit_code": failure.code, "message": message});
            if let Some(p) = process {
                line["process"] = p.into();
            }
            eprintln!("{line}");
        }
    }
    ExitCode::from(failure.code)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cause_the_message_already_names_is_not_repeated() {
        #[derive(Debug)]
        struct Read {
            source: std::io::Error,
        }
        impl std::fmt::Display for Read {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "scene.obj: {}", self.source)
            }
        }
        impl std::error::Error for Read {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.source)
            }
        }
        let io = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left");
        let e = anyhow::Error::new(Read { source: io }).context("baking");
        assert_eq!(super::message(&e), "baking: scene.obj: no space left");
        let plain = anyhow::anyhow!("first").context("second");
        assert_eq!(super::message(&plain), "second: first");
    }
}
