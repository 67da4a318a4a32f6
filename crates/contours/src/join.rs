//! Joining open chains across tiles into contours.
//!
//! Based on: seed 000, 4.3 (regions merging; Alg. 6 removes the third-class vertices of
//! 4.1.4, those that exist only because of the tiling). Here the merge works on chains rather
//! than whole regions: chains are joined edge to edge in any tile order, and a meeting point
//! where the contour neither turns nor changes neighbour is a third-class vertex and dropped.

use rustc_hash::FxHashMap as HashMap;

use tessera_artifacts::{Chain, Contour, EdgeKey, Point, TileCoord};

/// A chain being joined: its pieces so far (points, heights and neighbours as in [`Chain`]).
struct Open {
    tile: TileCoord,
    region: u32,
    first: EdgeKey,
    next: EdgeKey,
    points: Vec<Point>,
    heights: Vec<u32>,
    neighbours: Vec<u32>,
    last_heading: u8,
    /// Tiling-only vertices removed from it so far.
    removed: u64,
}

/// Joins chains from any number of tiles, in any order, into cycles.
#[derive(Default)]
pub struct ContourJoiner {
    /// Open chains by the edge they start with.
    by_first: HashMap<EdgeKey, Open>,
    /// First edge of the open chain that ends into each edge.
    by_next: HashMap<EdgeKey, EdgeKey>,
    /// Tiling-only vertices removed so far.
    pub third_class_removed: u64,
    /// The most chains open at once.
    pub peak_open: usize,
    /// Points held by open chains.
    held_points: u64,
}

impl ContourJoiner {
    pub fn new() -> ContourJoiner {
        ContourJoiner::default()
    }

    /// Chains still open.
    pub fn open_chains(&self) -> usize {
        self.by_first.len()
    }

    /// Bytes the open chains hold (about).
    pub fn held_bytes(&self) -> u64 {
        self.held_points * (std::mem::size_of::<Point>() + 8) as u64
            + self.by_first.len() as u64 * 128
    }

    /// Adds one chain; returns the cycle it closes, if any. The cycle is named after the
    /// (tile, region) of the chain that closed it; every chain of a cycle belongs to the same
    /// merged region.
    pub fn add(&mut self, chain: Chain) -> Option<Contour> {
        self.add_counted(chain).map(|(contour, _)| contour)
    }

    /// [`ContourJoiner::add`], with the cycle the tiling-only vertices removed from it (of
    /// [`ContourJoiner::third_class_removed`], those that were its).
    pub fn add_counted(&mut self, chain: Chain) -> Option<(Contour, u64)> {
        let mut cur = Open {
            tile: chain.tile,
            region: chain.region,
            first: chain.first,
            next: chain.next,
            points: chain.points,
            heights: chain.heights,
            neighbours: chain.neighbours,
            last_heading: chain.last_heading,
            removed: 0,
        };
        // Append what follows it.
        if let Some(after) = self.by_first.remove(&cur.next) {
            self.held_points -= after.points.len() as u64;
            self.by_next.remove(&after.next);
            cur = self.concat(cur, after);
        }
        // Prepend what leads into it.
        if let Some(before_first) = self.by_next.remove(&cur.first) {
            let before = self.by_first.remove(&before_first).expect("indexed chain");
            self.held_points -= before.points.len() as u64;
            cur = self.concat(before, cur);
        }
        if cur.next == cur.first {
            // Closed: the end point repeats the start point, which is a vertex only if the
            // contour turns or changes neighbour there.
            let Open {
                mut points,
                mut heights,
                mut neighbours,
                mut removed,
                ..
            } = cur;
            points.pop();
            heights.pop();
            if cur.last_heading == cur.first.heading && neighbours.last() == neighbours.first() {
                points.remove(0);
                heights.remove(0);
                neighbours.remove(0);
                self.third_class_removed += 1;
                removed += 1;
            }
            let contour = Contour {
                tile: cur.tile,
                region: cur.region,
                level: cur.first.level,
                points,
                heights,
                neighbours,
            };
            return Some((contour, removed));
        }
        self.by_next.insert(cur.next, cur.first);
        self.held_points += cur.points.len() as u64;
        self.by_first.insert(cur.first, cur);
        self.peak_open = self.peak_open.max(self.by_first.len());
        None
    }

    /// `a` followed by `b` (`a.next == b.first`).
    fn concat(&mut self, mut a: Open, b: Open) -> Open {
        debug_assert_eq!(a.next, b.first);
        // The shared point ends `a` and starts `b`; it stays a vertex where the contour turns
        // or its neighbour changes. Otherwise it existed only because of the tiling.
        let straight =
            a.last_heading == b.first.heading && a.neighbours.last() == b.neighbours.first();
        a.points.pop();
        a.heights.pop();
        a.removed += b.removed;
        let skip = if straight {
            self.third_class_removed += 1;
            a.removed += 1;
            a.neighbours.pop();
            1
        } else {
            0
        };
        a.points.extend(b.points.into_iter().skip(skip));
        a.heights.extend(b.heights.into_iter().skip(skip));
        a.neighbours.extend(b.neighbours);
        Open {
            tile: a.tile,
            region: a.region,
            first: a.first,
            next: b.next,
            points: a.points,
            heights: a.heights,
            neighbours: a.neighbours,
            last_heading: b.last_heading,
            removed: a.removed,
        }
    }
}
