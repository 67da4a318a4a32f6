//! The cross-tile region merge (seed 000, section 4.3, Alg. 6), streaming.
//!
//! Based on: seed 000, 4.3 (regions cut apart by the tiling are merged where they share
//! border vertices). Here the shared things are the border links of crate `regions`: each
//! connection between spans of two neighbouring tiles is reported by both tiles under the same
//! key. Tiles arrive in any order; a link seen once waits in the frontier, a link seen twice
//! unites its two regions in a union-find. A region with no waiting link can grow no more: it
//! is closed and handed out at once, and forgotten. Memory therefore holds only the open
//! frontier: waiting links and the regions that own them.
//!
//! A merged region's id is its first span in (y, x, zmax) order, so ids do not depend on tile
//! size, tile order or thread count.
//!
//! Pure: no I/O, no threads.

use rustc_hash::FxHashMap as HashMap;
pub use tessera_artifacts::MergedRegion;
use tessera_artifacts::{LinkKey, TileRegions};

struct Open {
    region: MergedRegion,
    /// Union-find slots of its members, dropped when it closes.
    slots: Vec<u64>,
    /// Links of this region still waiting for their other tile.
    waiting: u64,
}

/// The merge state: only what is still open.
#[derive(Default)]
pub struct RegionMerger {
    parent: HashMap<u64, u64>,
    open: HashMap<u64, Open>,
    waiting: HashMap<LinkKey, u64>,
    next_slot: u64,
    /// Members of the open regions, kept as they come and go.
    open_members: usize,
    /// The largest frontier seen: waiting links, open regions.
    pub peak_frontier: (usize, usize),
}

impl RegionMerger {
    pub fn new() -> RegionMerger {
        RegionMerger::default()
    }

    fn find(&mut self, mut s: u64) -> u64 {
        let mut root = s;
        while let Some(&p) = self.parent.get(&root) {
            if p == root {
                break;
            }
            root = p;
        }
        while s != root {
            let p = self.parent[&s];
            self.parent.insert(s, root);
            s = p;
        }
        root
    }

    fn union(&mut self, a: u64, b: u64) -> u64 {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return ra;
        }
        let oa = self.open.remove(&ra).expect("open root");
        let ob = self.open.remove(&rb).expect("open root");
        // The larger member list absorbs the smaller.
        let (keep, mut big, small) = if oa.region.members.len() >= ob.region.members.len() {
            (ra, oa, ob)
        } else {
            (rb, ob, oa)
        };
        let gone = if keep == ra { rb } else { ra };
        self.parent.insert(gone, keep);
        let r = &mut big.region;
        r.id = r.id.min(small.region.id);
        r.spans += small.region.spans;
        r.zmin = r.zmin.min(small.region.zmin);
        r.zmax = r.zmax.max(small.region.zmax);
        r.members.extend(small.region.members);
        big.slots.extend(small.slots);
        big.waiting += small.waiting;
        self.open.insert(keep, big);
        keep
    }

    /// Adds one tile's regions; returns the regions that this tile closed, sorted by id.
    pub fn add_tile(&mut self, tile: &TileRegions) -> Vec<MergedRegion> {
        let base = self.next_slot;
        self.next_slot += tile.regions.len() as u64;
        for (i, r) in tile.regions.iter().enumerate() {
            let slot = base + i as u64;
            self.parent.insert(slot, slot);
            self.open.insert(
                slot,
                Open {
                    region: MergedRegion {
                        id: r.first,
                        spans: r.spans,
                        zmin: r.zmin,
                        zmax: r.zmax,
                        members: vec![(tile.tile, i as u32)],
                    },
                    slots: vec![slot],
                    waiting: 0,
                },
            );
        }
        self.open_members += tile.regions.len();
        for link in &tile.links {
            let slot = base + link.region as u64;
            match self.waiting.remove(&link.key) {
                Some(other) => {
                    let root = self.find(other);
                    self.open.get_mut(&root).expect("open root").waiting -= 1;
                    self.union(slot, other);
                }
                None => {
                    self.waiting.insert(link.key, slot);
                    let root = self.find(slot);
                    self.open.get_mut(&root).expect("open root").waiting += 1;
                }
            }
        }
        self.peak_frontier.0 = self.peak_frontier.0.max(self.waiting.len());
        self.peak_frontier.1 = self.peak_frontier.1.max(self.open.len());
        // Every root this tile touched is the root of one of its own regions now.
        let mut roots: Vec<u64> = (0..tile.regions.len() as u64)
            .map(|i| self.find(base + i))
            .collect();
        roots.sort_unstable();
        roots.dedup();
        let mut closed = Vec::new();
        for root in roots {
            if self.open[&root].waiting == 0 {
                let mut open = self.open.remove(&root).expect("open root");
                for slot in &open.slots {
                    self.parent.remove(slot);
                }
                self.open_members -= open.region.members.len();
                open.region.members.sort_unstable();
                closed.push(open.region);
            }
        }
        closed.sort_by_key(|r| r.id);
        closed
    }

    /// Regions still open (all of them once every tile was added means a tile is missing).
    pub fn open_regions(&self) -> usize {
        self.open.len()
    }

    /// Links still waiting.
    pub fn waiting_links(&self) -> usize {
        self.waiting.len()
    }

    /// Bytes the frontier holds (about): waiting links, open regions and their members.
    pub fn held_bytes(&self) -> u64 {
        debug_assert_eq!(
            self.open_members,
            self.open
                .values()
                .map(|o| o.region.members.len())
                .sum::<usize>()
        );
        (self.waiting.len() * 48 + self.open.len() * 120 + self.open_members * 28) as u64
    }
}
