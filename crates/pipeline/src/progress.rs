//! Progress for people and for build farms.
//!
//! On a terminal: an indicatif bar per stage with counts and ETA (stages that run side by
//! side, voxelize and merge, get a bar each). Otherwise: plain periodic lines. With
//! [`LogFormat::Json`]: one JSON object per line (stage, done, total, bytes written, resident
//! memory, elapsed seconds) for scripts. Everything goes to stderr; stdout carries results.
//!
//! A stage reports `stage_start`, then `advance` as it goes, then `stage_done`. A stage made
//! of steps with counts of their own (the polygon stage: contours, floors, passes over the
//! regions, assembly) announces each with `phase`, which restarts the count.
//!
//! A program that embeds the bake (the C API, the Python package) may also watch every report
//! through an [`Observer`] ([`Progress::observed`]), called on the bake's threads.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tessera_budget::ProcMemory;

/// How progress is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Bars on a terminal, plain lines otherwise.
    Auto,
    /// Plain lines, one every few seconds per stage.
    Plain,
    /// One JSON object per line.
    Json,
    /// Nothing.
    Quiet,
}

/// What a report is: the `event` of a `--log-format json` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A stage begins.
    Start,
    /// A running stage begins a step of its own (its name in `message`); counts restart.
    Phase,
    /// Units of the stage (or of its step) are finished.
    Progress,
    /// The stage is finished.
    Done,
    /// Something worth knowing that does not stop the bake (`message`; no stage).
    Warning,
}

impl EventKind {
    /// The name a JSON log line gives it.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Start => "start",
            EventKind::Phase => "phase",
            EventKind::Progress => "progress",
            EventKind::Done => "done",
            EventKind::Warning => "warning",
        }
    }
}

/// One report, as an [`Observer`] receives it: the fields of a `--log-format json` line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProgressEvent<'a> {
    pub kind: EventKind,
    /// The stage (`""` for a warning).
    pub stage: &'a str,
    /// Units finished (0 at a start or a phase).
    pub done: u64,
    /// Units of the stage or of its current step (0 when unknown).
    pub total: u64,
    /// A phase's name or a warning's text.
    pub message: Option<&'a str>,
    /// In a bake for several agents, the agent whose stage it is (None: a stage shared by all,
    /// or a bake for one).
    pub agent: Option<&'a str>,
}

/// Watches a bake's reports. Called from any of the bake's threads, possibly from two at once
/// (stages run side by side), and for every unit: keep it short.
pub type Observer = Arc<dyn Fn(ProgressEvent<'_>) + Send + Sync>;

struct Inner {
    format: LogFormat,
    observer: Option<Observer>,
    /// This process's index in a distributed bake: every line names it.
    process: Option<u32>,
    /// The agent whose stages run, in a bake for several: every line names it.
    agent: Mutex<Option<String>>,
    /// Bytes the bake has written to its checkpoints so far.
    bytes: AtomicU64,
    started: Instant,
    /// Draws the bars of stages running side by side without them overwriting each other.
    multi: MultiProgress,
    bars: Mutex<HashMap<&'static str, ProgressBar>>,
    totals: Mutex<HashMap<&'static str, (u64, Instant)>>,
}

/// A cheap, cloneable progress reporter shared by the bake's threads.
#[derive(Clone)]
pub struct Progress {
    inner: Arc<Inner>,
}

const PLAIN_EVERY: Duration = Duration::from_secs(5);
const JSON_EVERY: Duration = Duration::from_secs(1);

impl Progress {
    pub fn new(format: LogFormat) -> Progress {
        Progress::of_process(format, None)
    }

    /// A reporter for process `process` of a distributed bake (None: a bake of its own):
    /// JSON lines carry `"process"`, plain lines and warnings start with `[process N]`.
    pub fn of_process(format: LogFormat, process: Option<u32>) -> Progress {
        Progress::build(format, process, None)
    }

    /// A reporter in `format` that also hands every report to `observer`.
    pub fn observed(format: LogFormat, observer: Observer) -> Progress {
        Progress::build(format, None, Some(observer))
    }

    fn build(format: LogFormat, process: Option<u32>, observer: Option<Observer>) -> Progress {
        let format = match format {
            LogFormat::Auto if std::io::stderr().is_terminal() => LogFormat::Auto,
            LogFormat::Auto => LogFormat::Plain,
            f => f,
        };
        Progress {
            inner: Arc::new(Inner {
                format,
                observer,
                process,
                agent: Mutex::new(None),
                bytes: AtomicU64::new(0),
                started: Instant::now(),
                multi: MultiProgress::with_draw_target(if format == LogFormat::Auto {
                    ProgressDrawTarget::stderr()
                } else {
                    ProgressDrawTarget::hidden()
                }),
                bars: Mutex::new(HashMap::new()),
                totals: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Hands a report to the observer, if any.
    fn notify(&self, kind: EventKind, stage: &str, done: u64, total: u64, message: Option<&str>) {
        if let Some(observer) = &self.inner.observer {
            let agent = self.inner.agent.lock().unwrap().clone();
            observer(ProgressEvent {
                kind,
                stage,
                done,
                total,
                message,
                agent: agent.as_deref(),
            });
        }
    }

    /// The unit count of `stage` (or of its current step), 0 when unknown.
    fn total(&self, stage: &str) -> u64 {
        self.inner
            .totals
            .lock()
            .unwrap()
            .get(stage)
            .map_or(0, |t| t.0)
    }

    /// A reporter that prints nothing (tests, libraries).
    pub fn quiet() -> Progress {
        Progress::new(LogFormat::Quiet)
    }

    fn json_line(&self, event: &str, stage: &str, done: u64, total: u64, message: Option<&str>) {
        let m = ProcMemory::read();
        let mut obj = serde_json::json!({
            "event": event,
            "stage": stage,
            "done": done,
            "total": total,
            "bytes": self.inner.bytes.load(Ordering::Relaxed),
            "rss_bytes": m.rss,
            "anon_bytes": m.anon,
            "elapsed_s": (self.inner.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        });
        if let Some(msg) = message {
            obj["message"] = serde_json::Value::String(msg.to_string());
        }
        if let Some(p) = self.inner.process {
            obj["process"] = p.into();
        }
        if let Some(a) = &*self.inner.agent.lock().unwrap() {
            obj["agent"] = a.as_str().into();
        }
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{obj}");
    }

    fn plain_line(&self, stage: &str, what: &str) {
        let m = ProcMemory::read();
        eprintln!(
            "{}[{:>8.1}s] {stage}: {what} (written {} MiB, rss {} MiB, anon {} MiB)",
            self.tag(),
            self.inner.started.elapsed().as_secs_f64(),
            self.inner.bytes.load(Ordering::Relaxed) >> 20,
            m.rss >> 20,
            m.anon >> 20
        );
    }

    /// `[process N] ` in a distributed bake, `[agent NAME] ` while an agent's stages run in a
    /// bake for several; nothing otherwise.
    fn tag(&self) -> String {
        let mut tag = self
            .inner
            .process
            .map_or(String::new(), |p| format!("[process {p}] "));
        if let Some(a) = &*self.inner.agent.lock().unwrap() {
            tag += &format!("[agent {a}] ");
        }
        tag
    }

    /// The stages reported from here on are agent `name`'s (a bake for several agents; None:
    /// shared by all). JSON lines carry `"agent"`, plain lines and bars name it.
    pub fn set_agent(&self, name: Option<&str>) {
        *self.inner.agent.lock().unwrap() = name.map(str::to_string);
    }

    /// Counts bytes written to the bake folder.
    pub fn add_bytes(&self, n: u64) {
        self.inner.bytes.fetch_add(n, Ordering::Relaxed);
    }

    /// A stage begins; `total` is its unit count (0 when unknown).
    pub fn stage_start(&self, stage: &'static str, total: u64) {
        self.notify(EventKind::Start, stage, 0, total, None);
        self.inner
            .totals
            .lock()
            .unwrap()
            .insert(stage, (total, Instant::now()));
        match self.inner.format {
            LogFormat::Auto => {
                let bar = if total > 0 {
                    ProgressBar::new(total)
                } else {
                    ProgressBar::new_spinner()
                };
                let bar = self.inner.multi.add(bar);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>9} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                match &*self.inner.agent.lock().unwrap() {
                    Some(a) => bar.set_prefix(format!("{stage} ({a})")),
                    None => bar.set_prefix(stage),
                }
                self.inner.bars.lock().unwrap().insert(stage, bar);
            }
            LogFormat::Plain => self.plain_line(stage, &format!("started ({total} to do)")),
            LogFormat::Json => self.json_line("start", stage, 0, total, None),
            LogFormat::Quiet => {}
        }
    }

    /// `done` units of a stage are finished.
    pub fn advance(&self, stage: &'static str, done: u64) {
        if self.inner.observer.is_some() {
            self.notify(EventKind::Progress, stage, done, self.total(stage), None);
        }
        match self.inner.format {
            LogFormat::Auto => {
                if let Some(bar) = self.inner.bars.lock().unwrap().get(stage) {
                    bar.set_position(done);
                }
            }
            LogFormat::Plain | LogFormat::Json => {
                let mut totals = self.inner.totals.lock().unwrap();
                let Some((total, last)) = totals.get_mut(stage) else {
                    return;
                };
                let every = if self.inner.format == LogFormat::Json {
                    JSON_EVERY
                } else {
                    PLAIN_EVERY
                };
                if last.elapsed() < every {
                    return;
                }
                *last = Instant::now();
                let total = *total;
                drop(totals);
                if self.inner.format == LogFormat::Json {
                    self.json_line("progress", stage, done, total, None);
                } else {
                    self.plain_line(stage, &format!("{done}/{total}"));
                }
            }
            LogFormat::Quiet => {}
        }
    }

    /// A stage finished with `done` units.
    pub fn stage_done(&self, stage: &'static str, done: u64) {
        let total = self.total(stage);
        self.notify(EventKind::Done, stage, done, total, None);
        match self.inner.format {
            LogFormat::Auto => {
                if let Some(bar) = self.inner.bars.lock().unwrap().remove(stage) {
                    bar.set_position(done);
                    bar.finish();
                }
            }
            LogFormat::Plain => self.plain_line(stage, &format!("done ({done})")),
            LogFormat::Json => self.json_line("done", stage, done, total, None),
            LogFormat::Quiet => {}
        }
    }

    /// A running stage begins its step `what`, of `total` units (0 when unknown); `advance`
    /// counts within the step from here on.
    pub fn phase(&self, stage: &'static str, what: &str, total: u64) {
        self.notify(EventKind::Phase, stage, 0, total, Some(what));
        if let Some(t) = self.inner.totals.lock().unwrap().get_mut(stage) {
            *t = (total, Instant::now());
        }
        match self.inner.format {
            LogFormat::Auto => {
                if let Some(bar) = self.inner.bars.lock().unwrap().get(stage) {
                    bar.set_length(total);
                    bar.set_position(0);
                    bar.set_message(what.to_string());
                }
            }
            LogFormat::Plain if total == 0 => self.plain_line(stage, what),
            LogFormat::Plain => self.plain_line(stage, &format!("{what} ({total} to do)")),
            LogFormat::Json => self.json_line("phase", stage, 0, total, Some(what)),
            LogFormat::Quiet => {}
        }
    }

    /// Something worth knowing that does not stop the bake.
    pub fn warn(&self, message: &str) {
        self.notify(EventKind::Warning, "", 0, 0, Some(message));
        match self.inner.format {
            LogFormat::Json => self.json_line("warning", "", 0, 0, Some(message)),
            LogFormat::Quiet => {}
            LogFormat::Auto => self
                .inner
                .multi
                .suspend(|| eprintln!("{}warning: {message}", self.tag())),
            LogFormat::Plain => eprintln!("{}warning: {message}", self.tag()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observer_sees_every_report_in_order_with_its_counts() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let progress = Progress::observed(
            LogFormat::Quiet,
            Arc::new(move |e: ProgressEvent<'_>| {
                let line = format!(
                    "{} {} {}/{} {}",
                    e.kind.name(),
                    e.stage,
                    e.done,
                    e.total,
                    e.message.unwrap_or("-")
                );
                log.lock().unwrap().push(line);
            }),
        );
        progress.stage_start("bin", 3);
        progress.advance("bin", 1);
        progress.phase("bin", "placing", 2);
        progress.advance("bin", 1);
        progress.warn("careful");
        progress.stage_done("bin", 2);
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "start bin 0/3 -",
                "progress bin 1/3 -",
                "phase bin 0/2 placing",
                "progress bin 1/2 -",
                "warning  0/0 careful",
                "done bin 2/2 -",
            ]
        );
    }
}
