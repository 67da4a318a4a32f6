//! Exit codes (listed in the crate documentation), the failure every command returns, and
//! how a failure is printed.

use std::process::ExitCode;

pub const USAGE: u8 = 2;
pub const BAD_INPUT: u8 = 3;
pub const BAD_CONFIG: u8 = 4;
pub const OVER_BUDGET: u8 = 5;
pub const IO: u8 = 6;
pub const INTERNAL: u8 = 7;
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
}

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
