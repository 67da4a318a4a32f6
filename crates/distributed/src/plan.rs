//! Which process computes which tile: a deterministic, cost-balanced table.

/// What a tile costs besides its triangles [bytes of triangles]: its grid is rasterized,
/// filtered and segmented even when few triangles touch it.
pub const TILE_BASE_COST: u64 = 64 << 10;

/// Process 0's writer receives, checks, merges and writes every tile whoever computed it;
/// beside its own tiles that costs it about `1 / WRITER_SHARE` of each tile's cost (on citygen L
/// the merge took 1.2-2.2 s beside 16-34 s of voxelizing, 4-7 %; RESULTS-distributed.md).
pub const WRITER_SHARE: u64 = 16;

/// The process of each tile of `costs` (triangle bytes, in tile order) among `processes`:
/// each tile in turn goes to the process with the least cost so far (the lowest index on a
/// tie), and with other processes, process 0 is also charged its writer's share of every
/// tile ([`WRITER_SHARE`]), so that it computes fewer tiles itself the more processes send it
/// theirs. Every process's share grows evenly along the tile order, so the tiles process 0's
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
            let cost = c + TILE_BASE_COST;
            load[p] += cost;
            if processes > 1 {
                load[0] += cost / WRITER_SHARE;
            }
            p as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cost each process carries under `owners`: its tiles, and for process 0 (with others)
    /// the writer's share of every tile.
    fn loads(costs: &[u64], owners: &[u32], processes: usize) -> Vec<u64> {
        let mut load = vec![0u64; processes];
        for (&c, &p) in costs.iter().zip(owners) {
            load[p as usize] += c + TILE_BASE_COST;
            if processes > 1 {
                load[0] += (c + TILE_BASE_COST) / WRITER_SHARE;
            }
        }
        load
    }

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
        let load = loads(&costs, &a, 3);
        let (max, min) = (load.iter().max().unwrap(), load.iter().min().unwrap());
        assert!(max - min <= (1 << 20) + TILE_BASE_COST, "{load:?}");
    }

    #[test]
    fn process_0_computes_less_the_more_processes_send_it_tiles() {
        let costs = vec![1u64 << 20; 1600];
        let count = |owners: &[u32], p: u32| owners.iter().filter(|&&q| q == p).count();
        // Alone, it computes everything; beside others, less than their share, and less
        // the more of them there are (its writer handles every tile).
        assert_eq!(count(&assign(&costs, 1), 0), 1600);
        let mut last = 1.0;
        for processes in [2, 4, 16] {
            let owners = assign(&costs, processes);
            let own = count(&owners, 0) as f64 / (1600.0 / processes as f64);
            assert!(own < last && own < 1.0, "{processes}: {own}");
            last = own;
            // Everyone's load, process 0's writer included, within a tile of the others.
            let load = loads(&costs, &owners, processes);
            let (max, min) = (load.iter().max().unwrap(), load.iter().min().unwrap());
            assert!(
                max - min <= (1 << 20) + TILE_BASE_COST,
                "{processes}: {load:?}"
            );
        }
        // With 16 processes, process 0's writer alone is worth a whole share: it computes
        // (almost) nothing itself.
        assert!(count(&assign(&costs, 16), 0) <= 1600 / 16 / 8);
    }
}
