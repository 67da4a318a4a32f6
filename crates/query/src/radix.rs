//! The searches' open lists: a radix heap over the bits of `f`.
//!
//! A search's keys never fall below the last one taken (a node's `f` is at least its
//! parent's, and the parent was the smallest when taken; the plan's heuristic is consistent,
//! up to the rounding of its f32 tables, and a key a rounding below the last is taken as
//! equal to it), and they are non-negative floats,
//! whose bit patterns order as the floats do. A radix heap uses both: an entry goes into the
//! bucket of the highest bit in which its key differs from the last key taken, so a push is
//! an append, and a bucket is sorted out only when every lower one is empty. Most nodes a
//! search makes are never taken (their `f` is past the length of the way found), and here
//! they cost one append each instead of a climb up a binary heap.
//!
//! Among equal keys the entry added last comes first (deeper nodes first, as the binary
//! heap's order by node number had it, for the nodes of one expansion).

/// Entries `(key bits, item)`; bucket 0 holds the keys equal to the last taken, bucket `b`
/// those whose highest bit differing from it is bit `b - 1`.
pub(crate) struct RadixHeap<T> {
    last: u64,
    /// Bit `b` set: bucket `b` holds entries (a pop finds the first such bucket in one
    /// instruction, and a clear touches only those).
    filled: u128,
    buckets: Vec<Vec<(u64, T)>>,
}

impl<T> Default for RadixHeap<T> {
    fn default() -> Self {
        RadixHeap {
            last: 0,
            filled: 0,
            buckets: Vec::new(),
        }
    }
}

impl<T> RadixHeap<T> {
    pub(crate) fn clear(&mut self) {
        self.last = 0;
        while self.filled != 0 {
            self.buckets[self.filled.trailing_zeros() as usize].clear();
            self.filled &= self.filled - 1;
        }
    }

    fn bucket(last: u64, key: u64) -> usize {
        (u64::BITS - (key ^ last).leading_zeros()) as usize
    }

    fn key(f: f64) -> u64 {
        // +0.0 for -0.0: the bits of a negative zero would order it last.
        let bits = (f + 0.0).to_bits();
        // (A NaN, from a hostile mesh, has the largest bits: taken last, as `total_cmp`
        // ordered it in a binary heap.)
        debug_assert!(
            f.is_nan() || f >= 0.0,
            "the search's costs are not negative: {f}"
        );
        bits
    }

    /// Adds `item` with cost `f`, which must be at least the last cost taken (one below it
    /// counts as equal to it).
    #[inline]
    pub(crate) fn push(&mut self, f: f64, item: T) {
        if self.buckets.is_empty() {
            self.buckets.resize_with(u64::BITS as usize + 1, Vec::new);
        }
        let key = Self::key(f).max(self.last);
        let b = Self::bucket(self.last, key);
        self.buckets[b].push((key, item));
        self.filled |= 1 << b;
    }

    /// The item of least cost, the last added among equals.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        self.pop_keyed().map(|e| e.1)
    }

    /// [`RadixHeap::pop`] with the item's cost (as pushed, or the last cost taken then if
    /// that was higher).
    #[inline]
    pub(crate) fn pop_keyed(&mut self) -> Option<(f64, T)> {
        if self.filled == 0 {
            return None;
        }
        if self.filled & 1 == 0 {
            let i = self.filled.trailing_zeros() as usize;
            // Every key of bucket `i` goes to a lower bucket once the least of them is the
            // last key taken; the bucket keeps its allocation.
            let mut moved = std::mem::take(&mut self.buckets[i]);
            self.filled &= !(1 << i);
            self.last = moved.iter().map(|e| e.0).min().expect("non-empty");
            for (key, item) in moved.drain(..) {
                let b = Self::bucket(self.last, key);
                self.buckets[b].push((key, item));
                self.filled |= 1 << b;
            }
            self.buckets[i] = moved;
        }
        let top = self.buckets[0].pop();
        if self.buckets[0].is_empty() {
            self.filled &= !1;
        }
        top.map(|e| (f64::from_bits(e.0), e.1))
    }
}

#[cfg(test)]
mod tests {
    use super::RadixHeap;
    use proptest::prelude::*;

    proptest! {
        /// Against a sorted list: the same costs in the same order, whatever is pushed between
        /// pops (never below the last cost taken).
        #[test]
        fn takes_costs_in_order(steps in proptest::collection::vec((0u8..4, 0.0f64..100.0), 1..300)) {
            let mut heap = RadixHeap::<u32>::default();
            let mut reference: Vec<(f64, u32)> = Vec::new();
            let mut last = 0.0f64;
            for (k, (pops, extra)) in steps.into_iter().enumerate() {
                let f = last + extra * f64::from(u8::from(k % 3 != 0));
                heap.push(f, k as u32);
                reference.push((f, k as u32));
                for _ in 0..pops {
                    // The reference: least cost, the last added among equals.
                    let best = reference
                        .iter()
                        .enumerate()
                        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(b.1 .1.cmp(&a.1 .1)))
                        .map(|(i, _)| i);
                    let want = best.map(|i| reference.remove(i));
                    let got = heap.pop();
                    prop_assert_eq!(got, want.map(|w| w.1));
                    if let Some((f, _)) = want {
                        last = f;
                    }
                }
            }
        }
    }
}
