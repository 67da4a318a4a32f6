//! Which process computes which tile: a deterministic, cost-balanced table.

/// What a tile costs besides its triangles [bytes of triangles]: its grid is rasterized,
/// filtered and segmented even when few triangles touch it.
pub const TILE_BASE_COST: u64 = 64 << 10;

/// The process of each tile of `costs` (triangle bytes, in tile order) among `processes`:
/// each tile in turn goes to the process with the least cost so far (the lowest index on a
/// tie). Every process's share grows evenly along the tile order, so the tiles process 0's
/// writer needs next are being computed everywhere at once. Depends on nothing else: every
/// run with the same checkpoints and processes makes the same table.
pub fn assign(costs: &[u64], processes: usize) -> Vec<u32> {
    let mut load = vec![0u64; processes.max(1)];
    costs
        .iter()
        .map(|&c| {
            let (p, _) = load
                .iter()
                .enumerate()
                .min_by_key(|&(i, &l)| (l, i))
                .expect("at least one process");
            load[p] += c + TILE_BASE_COST;
            p as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_are_shared_by_cost_and_the_same_every_time() {
        let costs = [1 << 20, 10, 10, 10, 1 << 20, 10, 10];
        let a = assign(&costs, 3);
        assert_eq!(a, assign(&costs, 3));
        assert_eq!(a[..3], [0, 1, 2]);
        // The heavy first tile keeps process 0 out of the next few.
        assert!(!a[3..6].contains(&0));
        let one = assign(&costs, 1);
        assert!(one.iter().all(|&p| p == 0));
        let load = |p: u32| -> u64 {
            costs
                .iter()
                .zip(&a)
                .filter(|(_, &q)| q == p)
                .map(|(c, _)| c + TILE_BASE_COST)
                .sum()
        };
        let (max, min) = (
            (0..3).map(load).max().unwrap(),
            (0..3).map(load).min().unwrap(),
        );
        assert!(max - min <= (1 << 20) + TILE_BASE_COST);
    }
}
