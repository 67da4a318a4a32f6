//! A command's answer on stdout.
//!
//! Every command writes what it prints through [`print`]: stdout locked once and buffered, and
//! a failed write returned as an error instead of the panic `println!` gives (exit 101 under
//! `tessera path ... | head -1`). A reader that closes its end early ends the command quietly
//! with success; see [`crate::exit::Failure::output`] for why.

use std::io::{self, BufWriter, Write};

use crate::exit::Failure;

/// Why the body of [`print`] stopped: stdout refused a write, or the command failed.
pub enum Stop {
    Write(io::Error),
    Fail(Failure),
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        Stop::Write(e)
    }
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Stop {
        Stop::Fail(f)
    }
}

/// Runs `body` with stdout (buffered: what it writes reaches the reader in blocks of a few
/// KiB as it goes, so an answer of any length streams in bounded memory), then flushes.
pub fn print(body: impl FnOnce(&mut dyn Write) -> Result<(), Stop>) -> Result<(), Failure> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = body(&mut out).and_then(|()| out.flush().map_err(Stop::Write));
    match result {
        Ok(()) => Ok(()),
        Err(Stop::Write(e)) => Err(Failure::output(e)),
        Err(Stop::Fail(failure)) => Err(failure),
    }
}
