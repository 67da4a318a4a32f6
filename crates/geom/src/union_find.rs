//! Union-find over dense ids `0..n` kept in a plain `Vec<u32>` (`parent[i] == i` for a root).
//! Joining keeps the smaller root, so a set's root is its smallest id whatever the order of the
//! joins: labels taken from roots are deterministic.

/// The root of `id`, halving the path on the way.
#[inline]
pub fn root(parent: &mut [u32], mut id: u32) -> u32 {
    while parent[id as usize] != id {
        let up = parent[parent[id as usize] as usize];
        parent[id as usize] = up;
        id = up;
    }
    id
}

/// Joins the sets of `a` and `b`; returns the root kept, the smaller.
#[inline]
pub fn join(parent: &mut [u32], a: u32, b: u32) -> u32 {
    let (ra, rb) = (root(parent, a), root(parent, b));
    let (lo, hi) = (ra.min(rb), ra.max(rb));
    parent[hi as usize] = lo;
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_s_root_is_its_smallest_id_whatever_the_order_of_joins() {
        for order in [[(4, 2), (2, 7), (7, 5)], [(7, 5), (5, 2), (4, 7)]] {
            let mut parent: Vec<u32> = (0..8).collect();
            for (a, b) in order {
                join(&mut parent, a, b);
            }
            let roots: Vec<u32> = (0..8).map(|i| root(&mut parent, i)).collect();
            assert_eq!(roots, [0, 1, 2, 3, 2, 2, 6, 2]);
        }
    }
}
