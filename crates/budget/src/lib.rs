//! Memory accounting for a bake that must stay inside a fixed budget.
//!
//! Large allocations (tile triangles in flight, span fields, binning buffers) take a
//! [`Reservation`] from the [`MemoryBudget`] first; it returns its bytes when dropped. A stage
//! that cannot reserve waits until another frees, which is how back-pressure reaches the tile
//! reader. A request larger than the whole budget is an error up front, not a deadlock.
//!
//! Memory that a stage cannot wait for, because it shrinks only as the bake moves on (the
//! merge frontier, which needs the next tile to close), is accounted with [`MemoryBudget::hold`]:
//! it never waits, and it makes tiles wait instead. So that it can never stall the bake, a
//! request waits only while some other reservation could still free bytes; with none left it
//! is granted past the budget (one tile at a time), and the overshoot shows in
//! [`MemoryBudget::peak_reserved`].
//!
//! Accounting is checked against reality by [`ProcMemory`], read from `/proc/self/status`
//! (`RssAnon` is what the OS cannot reclaim; `VmRSS` adds clean file pages), and
//! [`PeakSampler`], the one thread that samples it, keeps the peaks over a bake and, for the
//! bake report, memory over time ([`MemoryRecord`]: a trace bounded by decimation).
//!
//! [`tune_allocator`] makes the measured number honest on glibc and bounds what the allocator
//! keeps for reuse (see there); it is this crate's one `unsafe` call.
//!
//! This crate knows nothing of stages or files other than `/proc/self/status`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A reservation could never be granted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{what} needs {needed} bytes but the memory budget is {budget} bytes")]
pub struct OverBudget {
    pub what: String,
    pub needed: u64,
    pub budget: u64,
}

#[derive(Debug)]
struct State {
    used: u64,
    peak: u64,
    /// Live reservations that may free bytes by finishing their work (not holds).
    live: usize,
}

/// A fixed number of bytes shared by every stage of a bake.
#[derive(Debug)]
pub struct MemoryBudget {
    total: u64,
    state: Mutex<State>,
    freed: Condvar,
}

impl MemoryBudget {
    pub fn new(total: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            total,
            state: Mutex::new(State {
                used: 0,
                peak: 0,
                live: 0,
            }),
            freed: Condvar::new(),
        })
    }

    /// The budget in bytes.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        self.state.lock().unwrap().used
    }

    /// The most bytes ever reserved at once.
    pub fn peak_reserved(&self) -> u64 {
        self.state.lock().unwrap().peak
    }

    /// Reserves `bytes`, waiting for other reservations to be dropped if needed (but not for
    /// holds alone: see the crate documentation). Fails at once when `bytes` alone exceeds the
    /// budget.
    pub fn reserve(self: &Arc<Self>, bytes: u64, what: &str) -> Result<Reservation, OverBudget> {
        self.check(bytes, what)?;
        let mut state = self.state.lock().unwrap();
        while state.used + bytes > self.total && state.live > 0 {
            state = self.freed.wait(state).unwrap();
        }
        state.used += bytes;
        state.peak = state.peak.max(state.used);
        state.live += 1;
        Ok(Reservation {
            budget: Arc::clone(self),
            bytes,
            counted: true,
        })
    }

    fn check(&self, bytes: u64, what: &str) -> Result<(), OverBudget> {
        if bytes > self.total {
            return Err(OverBudget {
                what: what.to_string(),
                needed: bytes,
                budget: self.total,
            });
        }
        Ok(())
    }

    /// An empty reservation for memory that grows and shrinks with the work and cannot wait
    /// (see the crate documentation): size it with [`Reservation::grow_to`] and
    /// [`Reservation::shrink_to`].
    pub fn hold(self: &Arc<Self>) -> Reservation {
        Reservation {
            budget: Arc::clone(self),
            bytes: 0,
            counted: false,
        }
    }

    /// Reserves `bytes` only if they fit now.
    pub fn try_reserve(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        let mut state = self.state.lock().unwrap();
        if state.used + bytes > self.total {
            return None;
        }
        state.used += bytes;
        state.peak = state.peak.max(state.used);
        state.live += 1;
        Some(Reservation {
            budget: Arc::clone(self),
            bytes,
            counted: true,
        })
    }

    fn release(&self, bytes: u64, ended: bool) {
        let mut state = self.state.lock().unwrap();
        state.used -= bytes;
        if ended {
            state.live -= 1;
        }
        drop(state);
        self.freed.notify_all();
    }
}

/// Bytes held from a [`MemoryBudget`] until dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
    /// False for a hold.
    counted: bool,
}

impl Reservation {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes over the bytes of `other` (one reservation instead of two).
    pub fn absorb(&mut self, mut other: Reservation) {
        self.bytes += other.bytes;
        other.bytes = 0;
        if other.counted && self.counted {
            // Two live reservations become one.
            other.counted = false;
            self.budget.state.lock().unwrap().live -= 1;
        }
    }

    /// Adds `extra` bytes, waiting like [`MemoryBudget::reserve`] for reservations other
    /// than this one to free bytes.
    pub fn reserve_more(&mut self, extra: u64, what: &str) -> Result<(), OverBudget> {
        let budget = Arc::clone(&self.budget);
        budget.check(self.bytes + extra, what)?;
        let me = usize::from(self.counted);
        let mut state = budget.state.lock().unwrap();
        while state.used + extra > budget.total && state.live > me {
            state = budget.freed.wait(state).unwrap();
        }
        state.used += extra;
        state.peak = state.peak.max(state.used);
        self.bytes += extra;
        Ok(())
    }

    /// Grows the reservation to `bytes` without waiting, even past the budget: for work already
    /// done that turned out larger than estimated (waiting then could deadlock). The overshoot
    /// shows in [`MemoryBudget::peak_reserved`].
    pub fn grow_to(&mut self, bytes: u64) {
        if bytes > self.bytes {
            let mut state = self.budget.state.lock().unwrap();
            state.used += bytes - self.bytes;
            state.peak = state.peak.max(state.used);
            self.bytes = bytes;
        }
    }

    /// Grows the reservation to `bytes` only if the growth fits in the budget now; false (and
    /// unchanged) otherwise. For memory worth keeping only while there is room, such as
    /// buffers reused from one tile to the next.
    pub fn try_grow_to(&mut self, bytes: u64) -> bool {
        if bytes <= self.bytes {
            return true;
        }
        let mut state = self.budget.state.lock().unwrap();
        let extra = bytes - self.bytes;
        if state.used + extra > self.budget.total {
            return false;
        }
        state.used += extra;
        state.peak = state.peak.max(state.used);
        self.bytes = bytes;
        true
    }

    /// Gives back the part of the reservation above `bytes` (for example once the real size of
    /// a tile's output is known).
    pub fn shrink_to(&mut self, bytes: u64) {
        if bytes < self.bytes {
            let freed = self.bytes - bytes;
            self.bytes = bytes;
            self.budget.release(freed, false);
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes > 0 || self.counted {
            self.budget.release(self.bytes, self.counted);
        }
    }
}

/// The most memory [`tune_allocator`] lets one allocator arena keep for reuse [bytes].
pub const ARENA_CACHE_CAP: u64 = 32 << 20;

/// What [`tune_allocator`] may keep resident beyond live allocations for `arenas` arenas
/// within a budget of `memory_budget` bytes: each arena keeps at most `cache` bytes free at its
/// top and grows by as much again, so at most `2 * arenas * cache` in all, an eighth of the
/// budget at most. Returns `cache`.
pub fn arena_cache(memory_budget: u64, arenas: usize) -> u64 {
    (memory_budget / (16 * arenas.max(1) as u64)).clamp(128 << 10, ARENA_CACHE_CAP)
}

/// Tunes glibc's allocator for a bake on `arenas` arenas (the bake's threads), each keeping at
/// most `cache` bytes ([`arena_cache`]) for reuse. Call once, before the work starts. No effect
/// off glibc.
///
/// Two things are traded here. glibc raises its mmap threshold each time a large block is
/// freed, after which blocks of that size come from per-thread heaps and stay resident once
/// freed: a bake that allocates and frees tile-sized buffers on several threads would then hold
/// several times its budget in anonymous memory. So the threshold is fixed (256 KiB): large
/// blocks get mappings of their own, returned to the OS on free. Smaller blocks come from the
/// arenas, and glibc's defaults shrink an arena's heap as soon as 128 KiB lie free at its top
/// and grow it again page by page: per-region and per-tile work that frees and allocates a few
/// megabytes over and over then pays a page fault for every page each time (a third of a
/// million faults, a tenth of the CPU, on citygen L). Keeping `cache` bytes at each arena's top
/// (trim threshold and top pad) and as many arenas as threads bounds what stays resident to
/// `2 * arenas * cache` while most of those faults go.
#[allow(unsafe_code)] // glibc's mallopt: see the SAFETY comment inside
pub fn tune_allocator(arenas: usize, cache: u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cache = cache.min(i32::MAX as u64) as i32;
        let arenas = arenas.clamp(1, i32::MAX as usize) as i32;
        // SAFETY: mallopt only changes allocator tuning parameters; it is documented as safe
        // to call at any time, and each of these takes a count (bytes or arenas).
        unsafe {
            if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
            }
            libc::mallopt(libc::M_TRIM_THRESHOLD, cache);
            libc::mallopt(libc::M_TOP_PAD, cache);
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (arenas, cache);
}

/// A default budget: half of the memory available now, at least 64 MiB.
pub fn default_budget() -> u64 {
    let mut sys = sysinfo::System::new();
    sys.refresh_memory();
    let available = sys.available_memory();
    (available / 2).max(64 << 20)
}

/// Resident memory of this process, from `/proc/self/status` (zero where unavailable).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcMemory {
    /// `VmRSS`: all resident pages [bytes].
    pub rss: u64,
    /// `RssAnon`: resident anonymous pages, which the OS cannot drop [bytes].
    pub anon: u64,
    /// `VmHWM`: the kernel's own peak of `VmRSS` [bytes].
    pub rss_peak: u64,
}

impl ProcMemory {
    pub fn read() -> ProcMemory {
        let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        ProcMemory::parse(&text)
    }

    fn parse(text: &str) -> ProcMemory {
        let mut m = ProcMemory::default();
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            let (Some(key), Some(value)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Ok(kib) = value.parse::<u64>() else {
                continue;
            };
            match key {
                "VmRSS:" => m.rss = kib * 1024,
                "RssAnon:" => m.anon = kib * 1024,
                "VmHWM:" => m.rss_peak = kib * 1024,
                _ => {}
            }
        }
        m
    }
}

/// Reads this process's resident memory from `/proc/self/statm` through one open file and a
/// fixed buffer: what the sampling thread reads every few milliseconds, far cheaper than
/// `/proc/self/status` (a page of text for a few numbers) and with no allocation (the
/// thread would otherwise contend for an allocator arena with the workers). It gives no
/// kernel peak (`rss_peak` is 0); the sampler reads `status` for that when it finishes.
struct StatmReader {
    file: std::fs::File,
    page: u64,
    buf: [u8; 256],
}

impl StatmReader {
    fn open() -> Option<StatmReader> {
        Some(StatmReader {
            file: std::fs::File::open("/proc/self/statm").ok()?,
            page: rustix::param::page_size() as u64,
            buf: [0; 256],
        })
    }

    /// `VmRSS` and the anonymous part of it (resident less file-backed and shared pages).
    fn read(&mut self) -> Option<ProcMemory> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(&mut self.buf, 0).ok()?;
        let mut fields = self.buf[..n]
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty())
            .map(|f| std::str::from_utf8(f).ok()?.parse::<u64>().ok());
        let (_size, resident, shared) = (fields.next()??, fields.next()??, fields.next()??);
        Some(ProcMemory {
            rss: resident * self.page,
            anon: resident.saturating_sub(shared) * self.page,
            rss_peak: 0,
        })
    }
}

/// One reading of this process's memory in a [`PeakSampler`]'s trace.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemorySample {
    /// Seconds since the sampler started.
    pub t: f64,
    /// `VmRSS` [bytes].
    pub rss: u64,
    /// `RssAnon` [bytes].
    pub anon: u64,
}

/// The most samples a trace keeps: past it, neighbouring samples are merged (keeping their
/// peaks) and each later sample covers twice as many readings, so an hours-long bake's trace
/// stays under 100 KiB.
pub const TRACE_SAMPLES: usize = 4096;

/// What a [`PeakSampler`] recorded, from [`PeakSampler::finish`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryRecord {
    /// The most anonymous resident memory read (`RssAnon`) [bytes].
    pub peak_anon: u64,
    /// The most resident memory read (`VmRSS`, or the kernel's `VmHWM` when higher) [bytes].
    pub peak_rss: u64,
    /// Memory over time, in time order, at most [`TRACE_SAMPLES`] long; empty unless the
    /// sampler was started by [`PeakSampler::with_trace`].
    pub trace: Vec<MemorySample>,
}

/// Samples [`ProcMemory`] on one background thread and keeps the peaks (the kernel keeps no
/// peak of `RssAnon`) and, if asked, memory over time (a bounded trace, for the bake report).
pub struct PeakSampler {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// What the sampling thread and the handle share.
struct Shared {
    stop: AtomicBool,
    peak_anon: AtomicU64,
    peak_rss: AtomicU64,
    started: Instant,
    trace: Option<Mutex<Trace>>,
}

impl Shared {
    /// Takes one reading (from `status`, or from `statm` when given its reader) into the
    /// peaks and the trace.
    fn sample(&self, statm: Option<&mut StatmReader>) {
        let m = match statm.and_then(|r| r.read()) {
            Some(m) => m,
            None => ProcMemory::read(),
        };
        self.peak_anon.fetch_max(m.anon, Ordering::Relaxed);
        self.peak_rss
            .fetch_max(m.rss.max(m.rss_peak), Ordering::Relaxed);
        if let Some(trace) = &self.trace {
            // The time is read under the lock, so that samples taken by the thread and by
            // `peaks` stay in time order.
            let mut trace = trace.lock().unwrap();
            trace.record(MemorySample {
                t: self.started.elapsed().as_secs_f64(),
                rss: m.rss,
                anon: m.anon,
            });
        }
    }

    fn peaks(&self) -> (u64, u64) {
        (
            self.peak_anon.load(Ordering::Relaxed),
            self.peak_rss.load(Ordering::Relaxed),
        )
    }
}

/// A bounded memory trace: each sample is the largest of `per_sample` consecutive readings
/// (one at first), stamped with the last one's time.
#[derive(Debug)]
struct Trace {
    samples: Vec<MemorySample>,
    /// Readings merged into each new sample; doubles each time the trace is halved.
    per_sample: u32,
    /// The sample being gathered and how many readings it holds.
    pending: Option<(MemorySample, u32)>,
}

impl Trace {
    fn new() -> Trace {
        Trace {
            samples: Vec::new(),
            per_sample: 1,
            pending: None,
        }
    }

    fn record(&mut self, reading: MemorySample) {
        let (merged, count) = match self.pending.take() {
            Some((s, n)) => (merge(s, reading), n + 1),
            None => (reading, 1),
        };
        if count < self.per_sample {
            self.pending = Some((merged, count));
            return;
        }
        self.samples.push(merged);
        if self.samples.len() >= TRACE_SAMPLES {
            self.samples = self
                .samples
                .chunks(2)
                .map(|c| c.iter().copied().reduce(merge).unwrap_or_default())
                .collect();
            self.per_sample *= 2;
        }
    }

    /// The samples, the one being gathered included.
    fn finish(mut self) -> Vec<MemorySample> {
        if let Some((s, _)) = self.pending.take() {
            self.samples.push(s);
        }
        self.samples
    }
}

/// Two samples as one: the later time, the larger of each reading.
fn merge(a: MemorySample, b: MemorySample) -> MemorySample {
    MemorySample {
        t: a.t.max(b.t),
        rss: a.rss.max(b.rss),
        anon: a.anon.max(b.anon),
    }
}

impl PeakSampler {
    /// Starts sampling every `every` (the first reading at once), keeping the peaks only.
    pub fn start(every: Duration) -> PeakSampler {
        PeakSampler::spawn(every, false)
    }

    /// Like [`PeakSampler::start`], and also keeps memory over time ([`MemoryRecord::trace`]).
    pub fn with_trace(every: Duration) -> PeakSampler {
        PeakSampler::spawn(every, true)
    }

    fn spawn(every: Duration, trace: bool) -> PeakSampler {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            peak_anon: AtomicU64::new(0),
            peak_rss: AtomicU64::new(0),
            started: Instant::now(),
            trace: trace.then(|| Mutex::new(Trace::new())),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("rss-sampler".into())
            .spawn(move || {
                let mut statm = StatmReader::open();
                loop {
                    s.sample(statm.as_mut());
                    if s.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    std::thread::park_timeout(every);
                }
            })
            .ok();
        PeakSampler { shared, thread }
    }

    /// Takes one more sample now and returns (peak anonymous, peak total) resident bytes.
    pub fn peaks(&self) -> (u64, u64) {
        self.shared.sample(None);
        self.shared.peaks()
    }

    /// Stops the thread, takes a last sample, and returns the peaks and the trace.
    pub fn finish(mut self) -> MemoryRecord {
        self.stop();
        self.shared.sample(None);
        let (peak_anon, peak_rss) = self.shared.peaks();
        let trace = self
            .shared
            .trace
            .as_ref()
            .map(|t| std::mem::replace(&mut *t.lock().unwrap(), Trace::new()).finish())
            .unwrap_or_default();
        MemoryRecord {
            peak_anon,
            peak_rss,
            trace,
        }
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl Drop for PeakSampler {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_free_on_drop_and_block_when_full() {
        let budget = MemoryBudget::new(100);
        let a = budget.reserve(60, "a").unwrap();
        assert!(budget.try_reserve(50).is_none());
        assert_eq!(budget.reserve(101, "too big").unwrap_err().needed, 101);
        let b2 = Arc::clone(&budget);
        let waiter = std::thread::spawn(move || b2.reserve(50, "b").map(|r| r.bytes()));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished());
        drop(a);
        assert_eq!(waiter.join().unwrap().unwrap(), 50);
        assert_eq!(budget.used(), 0);
        assert_eq!(budget.peak_reserved(), 60);
    }

    #[test]
    fn shrink_returns_bytes() {
        let budget = MemoryBudget::new(100);
        let mut r = budget.reserve(80, "x").unwrap();
        r.shrink_to(30);
        assert_eq!(budget.used(), 30);
        assert!(budget.try_reserve(70).is_some());
        let other = budget.reserve(10, "y").unwrap();
        r.absorb(other);
        assert_eq!((r.bytes(), budget.used()), (40, 40));
        r.grow_to(90);
        assert_eq!((budget.used(), budget.peak_reserved()), (90, 100));
        let mut kept = budget.hold();
        assert!(kept.try_grow_to(10));
        assert!(!kept.try_grow_to(11));
        assert_eq!((kept.bytes(), budget.used()), (10, 100));
    }

    #[test]
    fn holds_never_wait_and_never_stall_a_reservation() {
        let budget = MemoryBudget::new(100);
        let mut frontier = budget.hold();
        frontier.grow_to(90);
        // Another reservation is live: a request that does not fit waits for it.
        let tile = budget.reserve(5, "tile").unwrap();
        let b2 = Arc::clone(&budget);
        let waiter = std::thread::spawn(move || b2.reserve(40, "next").map(|r| r.bytes()));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished());
        drop(tile);
        // Only the hold is left, which waiting cannot shrink: granted past the budget.
        assert_eq!(waiter.join().unwrap().unwrap(), 40);
        assert_eq!(budget.used(), 90);
        assert_eq!(budget.peak_reserved(), 130);
        // Growing a reservation waits for others but not for itself.
        let mut r = budget.reserve(5, "r").unwrap();
        r.reserve_more(20, "r more").unwrap();
        assert_eq!(r.bytes(), 25);
        frontier.shrink_to(0);
        drop(r);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn statm_agrees_with_status() {
        // 48 MiB touched, so that both readings are well above the noise of a test process.
        let touched = vec![1u8; 48 << 20];
        let mut reader = StatmReader::open().expect("/proc/self/statm opens");
        let (a, status, b) = (
            reader.read().unwrap(),
            ProcMemory::read(),
            reader.read().unwrap(),
        );
        let near = |x: u64, y: u64| x.abs_diff(y) < 16 << 20;
        assert!(
            near(a.rss, status.rss) && near(b.rss, status.rss),
            "{a:?} {status:?}"
        );
        assert!(
            near(a.anon, status.anon) && near(b.anon, status.anon),
            "{a:?} {status:?}"
        );
        assert!(a.anon >= 48 << 20, "{a:?}");
        assert_eq!(a.rss_peak, 0);
        drop(touched);
    }

    #[test]
    fn parses_proc_status() {
        let m = ProcMemory::parse(
            "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nRssAnon:\t 512 kB\n",
        );
        assert_eq!(
            m,
            ProcMemory {
                rss: 1 << 20,
                anon: 512 << 10,
                rss_peak: 2 << 20
            }
        );
        if cfg!(target_os = "linux") {
            assert!(ProcMemory::read().anon > 0);
        }
    }

    #[test]
    fn a_sampler_keeps_peaks_and_a_trace_in_time_order() {
        let sampler = PeakSampler::with_trace(Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(30));
        let (anon, rss) = sampler.peaks();
        let record = sampler.finish();
        assert!(record.trace.len() >= 2);
        assert!(record.trace.windows(2).all(|w| w[0].t <= w[1].t));
        if cfg!(target_os = "linux") {
            assert!(record.trace.iter().all(|s| s.rss > 0));
            assert!(anon > 0 && rss > 0);
        }
        assert!(record.peak_anon >= anon && record.peak_rss >= rss);
        assert!(record.trace.iter().all(|s| s.anon <= record.peak_anon));
        // Without a trace: peaks only.
        let record = PeakSampler::start(Duration::from_millis(1)).finish();
        assert!(record.trace.is_empty());
    }

    #[test]
    fn a_long_trace_is_decimated_keeping_its_peaks() {
        let mut trace = Trace::new();
        let n = 5 * TRACE_SAMPLES as u64;
        for i in 0..n {
            // One spike, late, between two samples of a decimated trace.
            let anon = if i == n - 7 { 1 << 30 } else { i };
            trace.record(MemorySample {
                t: i as f64,
                rss: i,
                anon,
            });
        }
        let samples = trace.finish();
        assert!(samples.len() <= TRACE_SAMPLES, "{}", samples.len());
        assert!(samples.len() >= TRACE_SAMPLES / 4, "{}", samples.len());
        assert!(samples.windows(2).all(|w| w[0].t < w[1].t));
        assert_eq!(samples.last().unwrap().t, (n - 1) as f64);
        assert_eq!(samples.iter().map(|s| s.anon).max(), Some(1 << 30));
        assert_eq!(samples.iter().map(|s| s.rss).max(), Some(n - 1));
    }
}
