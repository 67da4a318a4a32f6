//! Reading a memory-mapped text in parallel: windows cut at logical-line boundaries, parsed on
//! the current rayon pool, their results handed on in file order.
//!
//! Windows are grouped into batches of a bounded amount of text. While the caller's thread
//! consumes one batch's results (in window order), the pool parses the next batch; so at most
//! two batches' results are held at once, and a reader that knows how many bytes of result a
//! byte of text can make at most (its growth) keeps them under a memory bound. After each batch
//! the caller learns how far the text has been consumed, to give those pages back.
//!
//! Whatever the cut, the pieces read alone give the same logical lines as the whole text
//! (`lines::logical_boundary`), so the windows change no result.

use crate::lines::logical_boundary;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// The smallest window a reader makes unless told otherwise [bytes of text]: small enough to
/// share a 32 MiB budget's bound between threads, large enough that the window table of a
/// gigabyte of text stays small (24 bytes per window).
pub(crate) const MIN_WINDOW: usize = 16 << 10;

/// Windows per thread in a batch: enough that threads finishing unevenly wait little at the
/// end of a batch.
const WINDOWS_PER_THREAD: usize = 4;

/// Text per batch [bytes] for a memory bound of `buffer_bytes` when a byte of text makes at
/// most `growth` bytes of result: two batches are held at once.
pub(crate) fn batch_text(buffer_bytes: usize, growth: usize) -> usize {
    (buffer_bytes / (2 * growth.max(1))).max(1)
}

/// Text per window [bytes] for batches of `batch` bytes: a few windows for each thread of the
/// current pool, none below `min_window`.
pub(crate) fn window_text(batch: usize, min_window: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    (batch / (threads * WINDOWS_PER_THREAD)).max(min_window.max(1))
}

/// Cuts `data` into windows of about `window` bytes, each ending at a logical-line boundary.
pub(crate) fn plan(data: &[u8], window: usize) -> Vec<Range<usize>> {
    let mut windows = Vec::with_capacity(data.len() / window.max(1) + 1);
    let mut start = 0;
    while start < data.len() {
        let end = logical_boundary(data, start.saturating_add(window.max(1)));
        windows.push(start..end);
        start = end;
    }
    windows
}

/// Runs `work` on every window (by index) on the current rayon pool and hands the results to
/// `consume` in window order on the calling thread, a batch of at most `batch` bytes of text
/// (or one window) at a time. After each batch, `consumed_upto` gets the text offset up to
/// which everything has been consumed. Stops at the first error of `consume`.
pub(crate) fn in_order<T: Send, E>(
    windows: &[Range<usize>],
    batch: usize,
    work: impl Fn(usize) -> T + Sync,
    mut consume: impl FnMut(usize, T) -> Result<(), E>,
    mut consumed_upto: impl FnMut(usize),
) -> Result<(), E> {
    let stop = AtomicBool::new(false);
    let mut ready: Vec<(usize, T)> = Vec::new();
    let mut next_window = 0;
    loop {
        // The next batch: windows from `next_window` while the text fits.
        let first = next_window;
        let mut text = 0;
        while next_window < windows.len()
            && (next_window == first || text + windows[next_window].len() <= batch)
        {
            text += windows[next_window].len();
            next_window += 1;
        }
        let mut slots: Vec<Option<T>> = (first..next_window).map(|_| None).collect();
        let mut result = Ok(());
        let consumed_end = ready.last().map(|(i, _)| windows[*i].end);
        if ready.is_empty() && next_window - first == 1 {
            // One window and nothing to consume meanwhile (a small text): no thread hop.
            slots[0] = Some(work(first));
        }
        rayon::in_place_scope(|scope| {
            for (slot, i) in slots.iter_mut().zip(first..next_window) {
                if slot.is_some() {
                    continue;
                }
                let (work, stop) = (&work, &stop);
                scope.spawn(move |_| {
                    if !stop.load(Ordering::Relaxed) {
                        *slot = Some(work(i));
                    }
                });
            }
            for (i, out) in ready.drain(..) {
                if result.is_ok() {
                    result = consume(i, out);
                    if result.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        });
        result?;
        if let Some(end) = consumed_end {
            consumed_upto(end);
        }
        if first == next_window {
            return Ok(());
        }
        ready = (first..next_window)
            .zip(slots)
            .map(|(i, slot)| (i, slot.expect("every window of the batch was worked on")))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_order_and_pages_are_reported_behind() {
        let text: Vec<u8> = (0..500)
            .flat_map(|i| format!("l {i}\n").into_bytes())
            .collect();
        for window in [1, 7, 64, 10_000] {
            let windows = plan(&text, window);
            assert_eq!(windows.first().map(|w| w.start), Some(0));
            assert_eq!(windows.last().map(|w| w.end), Some(text.len()));
            assert!(windows.windows(2).all(|p| p[0].end == p[1].start));
            let mut got = Vec::new();
            let mut upto = Vec::new();
            in_order(
                &windows,
                100,
                |i| text[windows[i].clone()].to_vec(),
                |_, piece: Vec<u8>| -> Result<(), ()> {
                    got.extend(piece);
                    Ok(())
                },
                |end| upto.push(end),
            )
            .unwrap();
            assert_eq!(got, text, "window {window}");
            assert_eq!(upto.last(), Some(&text.len()));
            assert!(upto.windows(2).all(|p| p[0] < p[1]));
        }
    }

    #[test]
    fn the_first_error_in_order_stops() {
        let windows: Vec<Range<usize>> = (0..100).map(|i| i..i + 1).collect();
        let mut seen = Vec::new();
        let r = in_order(
            &windows,
            3,
            |i| i,
            |i, v| {
                seen.push(v);
                if i >= 41 {
                    Err(i)
                } else {
                    Ok(())
                }
            },
            |_| {},
        );
        assert_eq!(r, Err(41));
        assert_eq!(seen, (0..=41).collect::<Vec<_>>());
    }
}
