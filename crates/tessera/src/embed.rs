//! What the programs that embed tessera share (the C API, `crates/capi`; the Python package,
//! `bindings/python`): a bake described by a few options and checked as `tessera bake` checks
//! its arguments, and progress handed to a callback that can stop it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tessera_pipeline::{EventKind, LogFormat, Progress, ProgressEvent};

use crate::bake::{Args, Baked, Hooks, Outcome};
use crate::exit::{self, Failure};

/// A bake as an embedding program describes it; each field is the `tessera bake` argument of
/// the same name, `None` leaving its default.
#[derive(Clone, Debug, Default)]
pub struct BakeOptions {
    /// The scene file; `None` bakes the generated demo world.
    pub scene: Option<PathBuf>,
    /// The output folder.
    pub out_dir: PathBuf,
    /// A config file or a preset (`default`, `def`, `S2`..`S5`, `recast-demo`).
    pub config: Option<String>,
    /// Worker threads, 1 to 4096.
    pub threads: Option<i64>,
    /// Memory budget: bytes, or a size such as `256MiB`.
    pub memory_budget: Option<String>,
    /// The scene's up axis, `y` or `z`.
    pub up: Option<String>,
    /// Ignore (and remove) existing checkpoints.
    pub fresh: bool,
    /// Progress on stderr (`auto`, `plain`, `json`, `quiet`; default `quiet`: an embedding
    /// program says what it prints).
    pub log_format: Option<String>,
}

impl BakeOptions {
    /// The `tessera bake` arguments these options stand for, checked by the command line's
    /// own parser: a value the command line refuses is refused here with its message.
    pub fn args(&self) -> Result<Args, Failure> {
        let mut argv: Vec<OsString> = Vec::new();
        if let Some(scene) = &self.scene {
            // After `--`, a scene named like an option is still a scene.
            argv.extend(["--".into(), scene.clone().into()]);
        }
        let mut option = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                argv.insert(0, format!("--{name}={v}").into());
            }
        };
        option("config", self.config.clone());
        option("threads", self.threads.map(|n| n.to_string()));
        option("memory-budget", self.memory_budget.clone());
        option("up", self.up.clone());
        option(
            "log-format",
            Some(self.log_format.clone().unwrap_or_else(|| "quiet".into())),
        );
        if self.fresh {
            argv.insert(0, "--fresh".into());
        }
        let mut out = OsString::from("--out=");
        out.push(&self.out_dir);
        argv.insert(0, out);
        Args::parse(argv)
    }
}

/// Bakes as `tessera bake` does (the same files in the output folder, the same exit codes on
/// failure), reporting to `progress` (`None`: as the options' log format says) and stopping
/// when `interrupt` is raised (exit code 130, checkpoints intact). No signal handler is
/// installed: stopping is the embedding program's call.
pub fn bake(
    options: &BakeOptions,
    progress: Option<Progress>,
    interrupt: Arc<AtomicBool>,
) -> Result<Box<Baked>, Failure> {
    let hooks = Hooks {
        progress,
        interrupt: Some(interrupt),
    };
    match crate::bake::bake(options.args()?, hooks)? {
        Outcome::Baked(baked) => Ok(baked),
        // Only `--cluster`, which the options never give, makes a process other than 0.
        Outcome::Peer { .. } => Err(Failure::new(
            exit::INTERNAL,
            anyhow::anyhow!("a bake of one process ran as a distributed one"),
        )),
    }
}

/// How often one stage's `progress` reports reach a callback at most (starts, phases, ends and
/// warnings always do; a stage's last count is in its `done` report).
pub const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// A reporter that prints as `format` says and hands reports to `callback`, one call at a time
/// (whichever of the bake's threads reports), each stage's `progress` at most every
/// [`PROGRESS_EVERY`]. When the callback answers `Break`, `interrupt` is raised.
pub fn progress_to<F>(format: LogFormat, interrupt: Arc<AtomicBool>, callback: F) -> Progress
where
    F: FnMut(ProgressEvent<'_>) -> ControlFlow<()> + Send + 'static,
{
    let state = Mutex::new((callback, HashMap::<String, Instant>::new()));
    Progress::observed(
        format,
        Arc::new(move |event: ProgressEvent<'_>| {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            let (callback, last) = &mut *state;
            if event.kind == EventKind::Progress {
                let now = Instant::now();
                match last.get_mut(event.stage) {
                    Some(at) if now.duration_since(*at) < PROGRESS_EVERY => return,
                    Some(at) => *at = now,
                    None => {
                        last.insert(event.stage.to_string(), now);
                    }
                }
            }
            if callback(event).is_break() {
                interrupt.store(true, Ordering::Relaxed);
            }
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked_as_the_command_line_checks_them() {
        let options = BakeOptions {
            out_dir: "out".into(),
            threads: Some(0),
            ..BakeOptions::default()
        };
        let e = options.args().err().expect("0 threads is refused");
        assert_eq!(e.code, exit::USAGE);
        assert!(e.error.to_string().contains("--threads"), "{}", e.error);
        let options = BakeOptions {
            scene: Some("--fresh".into()),
            out_dir: "out".into(),
            memory_budget: Some("64MiB".into()),
            up: Some("y".into()),
            ..BakeOptions::default()
        };
        assert!(options.args().is_ok());
    }

    #[test]
    fn progress_reaches_the_callback_throttled_and_a_break_raises_the_flag() {
        let interrupt = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let progress = progress_to(LogFormat::Quiet, Arc::clone(&interrupt), move |e| {
            log.lock().unwrap().push((e.kind, e.done));
            if e.kind == EventKind::Done {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        progress.stage_start("voxelize", 1000);
        for done in 1..=1000 {
            progress.advance("voxelize", done);
        }
        assert!(!interrupt.load(Ordering::Relaxed));
        progress.stage_done("voxelize", 1000);
        assert!(interrupt.load(Ordering::Relaxed));
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0], (EventKind::Start, 0));
        assert_eq!(seen[1], (EventKind::Progress, 1));
        assert_eq!(*seen.last().unwrap(), (EventKind::Done, 1000));
        // A thousand quick reports are not a thousand calls.
        assert!(seen.len() < 50, "{} calls", seen.len());
    }
}
