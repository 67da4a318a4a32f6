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

use crate::lines::{logical_boundary, text_start};
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

/// Cuts the text of the file `data` (from [`text_start`]: a byte-order mark is left out) into
/// windows of about `window` bytes, each ending at a logical-line boundary. The cuts are found as the windows are asked for, so finding them touches only text about to
/// be read (a page touched early may be mapped in with its neighbours: cutting a whole large
/// file up front would map much of it).
pub(crate) fn cut(data: &[u8], window: usize) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = text_start(data);
    std::iter::from_fn(move || {
        if start >= data.len() {
            return None;
        }
        let end = logical_boundary(data, start.saturating_add(window.max(1)));
        let window = start..end;
        start = end;
        Some(window)
    })
}

/// Runs `work` on every window (its index and text range) on the current rayon pool and hands
/// the results to `consume` in window order on the calling thread, a batch of at most `batch`
/// bytes of text (or one window) at a time. After each batch, `consumed_upto` gets the text
/// offset up to which everything has been consumed. Stops at the first error of `consume`.
pub(crate) fn in_order<T: Send, E>(
    windows: impl Iterator<Item = Range<usize>>,
    batch: usize,
    work: impl Fn(usize, Range<usize>) -> T + Sync,
    mut consume: impl FnMut(usize, Range<usize>, T) -> Result<(), E>,
    mut consumed_upto: impl FnMut(usize),
) -> Result<(), E> {
    let mut windows = windows.enumerate().peekable();
    let stop = AtomicBool::new(false);
    let mut ready: Vec<(usize, Range<usize>, T)> = Vec::new();
    loop {
        // The next batch: windows while their text fits.
        let mut next: Vec<(usize, Range<usize>, Option<T>)> = Vec::new();
        let mut text = 0;
        while let Some((i, window)) =
            windows.next_if(|(_, w)| next.is_empty() || text + w.len() <= batch)
        {
            text += window.len();
            next.push((i, window, None));
        }
        let consumed_end = ready.last().map(|(_, window, _)| window.end);
        if let ([(i, window, slot)], true) = (next.as_mut_slice(), ready.is_empty()) {
            // One window and nothing to consume meanwhile (a small text): no thread hop.
            *slot = Some(work(*i, window.clone()));
        }
        let mut result = Ok(());
        rayon::in_place_scope(|scope| {
            for (i, window, slot) in next.iter_mut().filter(|(_, _, slot)| slot.is_none()) {
                let (i, window, work, stop) = (*i, window.clone(), &work, &stop);
                scope.spawn(move |_| {
                    if !stop.load(Ordering::Relaxed) {
                        *slot = Some(work(i, window));
                    }
                });
            }
            for (i, window, out) in ready.drain(..) {
                if result.is_ok() {
                    result = consume(i, window, out);
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
        if next.is_empty() {
            return Ok(());
        }
        ready = next
            .into_iter()
            .map(|(i, window, slot)| {
                (
                    i,
                    window,
                    slot.expect("every window of the batch was worked on"),
                )
            })
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
            let windows: Vec<Range<usize>> = cut(&text, window).collect();
            assert_eq!(windows.first().map(|w| w.start), Some(0));
            assert_eq!(windows.last().map(|w| w.end), Some(text.len()));
            assert!(windows.windows(2).all(|p| p[0].end == p[1].start));
            let mut got = Vec::new();
            let mut upto = Vec::new();
            let mut order = Vec::new();
            in_order(
                cut(&text, window),
                100,
                |_, w| text[w].to_vec(),
                |i, w, piece: Vec<u8>| -> Result<(), ()> {
                    assert_eq!(piece, &text[w]);
                    order.push(i);
                    got.extend(piece);
                    Ok(())
                },
                |end| upto.push(end),
            )
            .unwrap();
            assert_eq!(order, (0..windows.len()).collect::<Vec<_>>());
            assert_eq!(got, text, "window {window}");
            assert_eq!(upto.last(), Some(&text.len()));
            assert!(upto.windows(2).all(|p| p[0] < p[1]));
        }
    }

    #[test]
    fn the_first_error_in_order_stops() {
        let mut seen = Vec::new();
        let r = in_order(
            (0..100).map(|i| i..i + 1),
            3,
            |i, _| i,
            |i, _, v| {
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
