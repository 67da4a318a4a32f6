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
//! [`PeakSampler`] keeps the peaks over a bake.
//!
//! [`return_freed_memory_to_os`] makes the measured number honest on glibc (see there); it is
//! this crate's one `unsafe` call.
//!
//! This crate knows nothing of stages or files other than `/proc/self/status`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

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

/// Makes the allocator give freed memory back to the OS.
///
/// glibc raises its mmap threshold each time a large block is freed, after which blocks of that
/// size come from per-thread heaps and stay resident once freed: a bake that allocates and
/// frees tile-sized buffers on several threads then holds several times its budget in
/// anonymous memory. Fixing the threshold (256 KiB) keeps large blocks in their own mappings,
/// returned to the OS on free. Call once, before the work starts. No effect off glibc.
pub fn return_freed_memory_to_os() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes allocator tuning parameters; it is documented as safe
        // to call at any time, and M_MMAP_THRESHOLD / M_TRIM_THRESHOLD take byte counts.
        unsafe {
            if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
            }
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1024 * 1024);
        }
    }
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

/// Samples [`ProcMemory`] on a background thread and keeps the peaks (the kernel keeps no peak
/// of `RssAnon`).
pub struct PeakSampler {
    stop: Arc<AtomicBool>,
    peak_anon: Arc<AtomicU64>,
    peak_rss: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl PeakSampler {
    pub fn start(every: Duration) -> PeakSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let peak_anon = Arc::new(AtomicU64::new(0));
        let peak_rss = Arc::new(AtomicU64::new(0));
        let (s, a, r) = (stop.clone(), peak_anon.clone(), peak_rss.clone());
        let thread = std::thread::Builder::new()
            .name("rss-sampler".into())
            .spawn(move || loop {
                let m = ProcMemory::read();
                a.fetch_max(m.anon, Ordering::Relaxed);
                r.fetch_max(m.rss.max(m.rss_peak), Ordering::Relaxed);
                if s.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(every);
            })
            .ok();
        PeakSampler {
            stop,
            peak_anon,
            peak_rss,
            thread,
        }
    }

    /// Takes one more sample now and returns (peak anonymous, peak total) resident bytes.
    pub fn peaks(&self) -> (u64, u64) {
        let m = ProcMemory::read();
        self.peak_anon.fetch_max(m.anon, Ordering::Relaxed);
        self.peak_rss
            .fetch_max(m.rss.max(m.rss_peak), Ordering::Relaxed);
        (
            self.peak_anon.load(Ordering::Relaxed),
            self.peak_rss.load(Ordering::Relaxed),
        )
    }
}

impl Drop for PeakSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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
}
