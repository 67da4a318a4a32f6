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
//! Across processes (a distributed bake), each process first merges the links between its
//! own tiles in a union-find of its own ([`LocalMatcher`], fed its tiles in tile order), as
//! timely's union-find example does: a link both of whose tiles it computed never reaches the
//! global merge as a key. What reaches it, per tile, is what those links change there: how
//! many links each region starts waiting on ([`LocalLink::Waits`]), the unions that join two
//! of the process's components ([`LocalLink::Joins`]: a spanning forest of its links), and,
//! for the links that close within a component already joined, how many waits they end
//! ([`LocalLink::Resolves`]). A region crossing a tile border has a link per pair of border
//! spans, so most of a process's links come to a count. The global merge
//! ([`RegionMerger::add_matched`]) applies them in place of the keys: the same waiting
//! counts and the same components in tile order, so every region, id and batch is the one of
//! a merge of the whole links. Only links between tiles of different processes wait in its
//! frontier.
//!
//! Pure: no I/O, no threads.

use rustc_hash::FxHashMap as HashMap;
pub use tessera_artifacts::MergedRegion;
use tessera_artifacts::{BorderLink, LinkKey, TileCoord, TileRegions};

/// A union-find slot: a tile's local region.
type Slot = (TileCoord, u32);

struct Open {
    region: MergedRegion,
    /// Union-find slots of its members, dropped when it closes.
    slots: Vec<Slot>,
    /// Links of this region still waiting for their other tile.
    waiting: u64,
}

/// What links between two tiles of one process change at a tile, as that process's
/// [`LocalMatcher`] hands it to the global merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalLink {
    /// The tile's region `region` waits for `links` links to later tiles of the same process.
    Waits { region: u32, links: u32 },
    /// A link from the tile's region `region` to region `other` of the earlier tile `tile`,
    /// which waited for it, joins their two components.
    Joins {
        region: u32,
        tile: TileCoord,
        other: u32,
    },
    /// `links` links from this tile reach the component of region `other` of tile `tile`,
    /// which waited for them, from regions already in it: each ends a wait and joins nothing.
    Resolves {
        tile: TileCoord,
        other: u32,
        links: u32,
    },
}

impl LocalLink {
    /// The links it stands for.
    pub fn links(&self) -> u32 {
        match *self {
            LocalLink::Waits { links, .. } | LocalLink::Resolves { links, .. } => links,
            LocalLink::Joins { .. } => 1,
        }
    }
}

/// A component of a process's own links that some of them still wait on.
struct LocalComponent {
    slots: Vec<Slot>,
    waiting: u64,
}

/// One process's merge of the links between its own tiles, fed them in tile order: keeps the
/// links whose first tile it has seen and whose second it has not, and a union-find over the
/// regions they join. A component no link of the process waits on any more is forgotten (no
/// later link of the process can reach it), so it holds a frontier, as the global merge does.
#[derive(Default)]
pub struct LocalMatcher {
    waiting: HashMap<LinkKey, Slot>,
    parent: HashMap<Slot, Slot>,
    open: HashMap<Slot, LocalComponent>,
}

impl LocalMatcher {
    pub fn new() -> LocalMatcher {
        LocalMatcher::default()
    }

    /// Takes out of `tile.links` the links whose other tile is this process's (`local`, which
    /// must answer alike for both tiles of a link), merges them, and returns what they change
    /// at this tile (the waits, then the joins, then the waits ended in a component, each in
    /// the order of the links) with where each link taken was in `tile.links`; the other links
    /// stay for the global merge.
    pub fn split(
        &mut self,
        tile: &mut TileRegions,
        local: impl Fn(&LinkKey) -> bool,
    ) -> (Vec<LocalLink>, Vec<u32>) {
        let mut positions = Vec::new();
        let coord = tile.tile;
        let mut taken = Vec::new();
        let mut at = 0;
        tile.links.retain(|link: &BorderLink| {
            at += 1;
            if !local(&link.key) {
                return true;
            }
            positions.push(at - 1);
            taken.push(*link);
            false
        });
        // Counted per region (waits) and per component (resolved), in first-seen order.
        let mut waits: Vec<(u32, u32)> = Vec::new();
        let mut joins = Vec::new();
        let mut resolved: Vec<(Slot, u32)> = Vec::new();
        let (mut wait_at, mut resolved_at) = (HashMap::default(), HashMap::default());
        let mut touched = Vec::new();
        for link in taken {
            let slot = (coord, link.region);
            self.add(slot);
            match self.waiting.remove(&link.key) {
                Some(other) => {
                    let root = self.find(other);
                    self.open.get_mut(&root).expect("open root").waiting -= 1;
                    if self.find(slot) == root {
                        // Already one component: the link only ends a wait, counted on a slot
                        // of the component (the global merge has it open too, and finds the
                        // same component from it after any union this tile makes).
                        count(&mut resolved, &mut resolved_at, root);
                    } else {
                        self.union(slot, other);
                        joins.push(LocalLink::Joins {
                            region: link.region,
                            tile: other.0,
                            other: other.1,
                        });
                    }
                    touched.push(other);
                }
                None => {
                    self.waiting.insert(link.key, slot);
                    let root = self.find(slot);
                    self.open.get_mut(&root).expect("open root").waiting += 1;
                    count(&mut waits, &mut wait_at, link.region);
                }
            }
            touched.push(slot);
        }
        // Components nothing of this process waits on any more are done here.
        for slot in touched {
            let root = self.find(slot);
            if self.open.get(&root).is_some_and(|c| c.waiting == 0) {
                for s in self.open.remove(&root).expect("open root").slots {
                    self.parent.remove(&s);
                }
            }
        }
        let waits = waits
            .into_iter()
            .map(|(region, links)| LocalLink::Waits { region, links });
        let resolved = resolved
            .into_iter()
            .map(|((tile, other), links)| LocalLink::Resolves { tile, other, links });
        (waits.chain(joins).chain(resolved).collect(), positions)
    }

    /// Puts `slot` in the union-find, a component of its own, unless it is there.
    fn add(&mut self, slot: Slot) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.parent.entry(slot) {
            e.insert(slot);
            self.open.insert(
                slot,
                LocalComponent {
                    slots: vec![slot],
                    waiting: 0,
                },
            );
        }
    }

    fn find(&mut self, s: Slot) -> Slot {
        find(&mut self.parent, s)
    }

    fn union(&mut self, a: Slot, b: Slot) {
        let (ra, rb) = (self.find(a), self.find(b));
        let oa = self.open.remove(&ra).expect("open root");
        let ob = self.open.remove(&rb).expect("open root");
        let (keep, gone, mut big, small) = if oa.slots.len() >= ob.slots.len() {
            (ra, rb, oa, ob)
        } else {
            (rb, ra, ob, oa)
        };
        self.parent.insert(gone, keep);
        big.slots.extend(small.slots);
        big.waiting += small.waiting;
        self.open.insert(keep, big);
    }

    /// Links whose second tile has not come yet.
    pub fn waiting_links(&self) -> usize {
        self.waiting.len()
    }

    /// Regions held in the union-find (those of components still waited on).
    pub fn held_regions(&self) -> usize {
        self.parent.len()
    }
}

/// Adds one to `key`'s count in `counts` (in first-seen order; `at` indexes them).
fn count<K: std::hash::Hash + Eq + Copy>(
    counts: &mut Vec<(K, u32)>,
    at: &mut HashMap<K, usize>,
    key: K,
) {
    let i = *at.entry(key).or_insert_with(|| {
        counts.push((key, 0));
        counts.len() - 1
    });
    counts[i].1 += 1;
}

/// The root of `s` in the union-find `parent`, compressing the path it walks.
fn find(parent: &mut HashMap<Slot, Slot>, mut s: Slot) -> Slot {
    let mut root = s;
    while let Some(&p) = parent.get(&root) {
        if p == root {
            break;
        }
        root = p;
    }
    while s != root {
        let p = parent[&s];
        parent.insert(s, root);
        s = p;
    }
    root
}

/// The merge state: only what is still open.
#[derive(Default)]
pub struct RegionMerger {
    parent: HashMap<Slot, Slot>,
    open: HashMap<Slot, Open>,
    waiting: HashMap<LinkKey, Slot>,
    /// Links another process matched whose second tile has not come yet: counted as waiting
    /// links (the frontier's figures are those of a merge of the whole links).
    matched_waiting: usize,
    /// Members of the open regions, kept as they come and go.
    open_members: usize,
    /// The largest frontier seen: waiting links, open regions.
    pub peak_frontier: (usize, usize),
}

impl RegionMerger {
    pub fn new() -> RegionMerger {
        RegionMerger::default()
    }

    fn find(&mut self, s: Slot) -> Slot {
        find(&mut self.parent, s)
    }

    fn union(&mut self, a: Slot, b: Slot) -> Slot {
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
        self.add_matched(tile, &[])
    }

    /// [`RegionMerger::add_tile`] for a tile whose links to tiles of its own process were
    /// matched by that process (`local`, from [`LocalMatcher::split`]; `tile.links` holds the
    /// others): the same regions, closed at the same tiles.
    pub fn add_matched(&mut self, tile: &TileRegions, local: &[LocalLink]) -> Vec<MergedRegion> {
        let coord = tile.tile;
        for (i, r) in tile.regions.iter().enumerate() {
            let slot = (coord, i as u32);
            self.parent.insert(slot, slot);
            self.open.insert(
                slot,
                Open {
                    region: MergedRegion {
                        id: r.first,
                        spans: r.spans,
                        zmin: r.zmin,
                        zmax: r.zmax,
                        members: vec![(coord, i as u32)],
                    },
                    slots: vec![slot],
                    waiting: 0,
                },
            );
        }
        self.open_members += tile.regions.len();
        for link in &tile.links {
            let slot = (coord, link.region);
            match self.waiting.remove(&link.key) {
                Some(other) => self.join(slot, other),
                None => {
                    self.waiting.insert(link.key, slot);
                    self.wait(slot);
                }
            }
        }
        for link in local {
            match *link {
                LocalLink::Waits { region, links } => {
                    self.matched_waiting += links as usize;
                    let root = self.find((coord, region));
                    self.open.get_mut(&root).expect("open root").waiting += u64::from(links);
                }
                LocalLink::Joins {
                    region,
                    tile,
                    other,
                } => {
                    self.matched_waiting -= 1;
                    self.join((coord, region), (tile, other));
                }
                LocalLink::Resolves { tile, other, links } => {
                    self.matched_waiting -= links as usize;
                    let root = self.find((tile, other));
                    self.open.get_mut(&root).expect("open root").waiting -= u64::from(links);
                }
            }
        }
        self.peak_frontier.0 = self.peak_frontier.0.max(self.waiting_links());
        self.peak_frontier.1 = self.peak_frontier.1.max(self.open.len());
        // Every root this tile touched is the root of one of its own regions now.
        let mut roots: Vec<Slot> = (0..tile.regions.len() as u32)
            .map(|i| self.find((coord, i)))
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

    /// `slot`'s region waits for one more link.
    fn wait(&mut self, slot: Slot) {
        let root = self.find(slot);
        self.open.get_mut(&root).expect("open root").waiting += 1;
    }

    /// A link from `slot` reached `other`, whose region waited for it: one wait fewer, and the
    /// two regions united.
    fn join(&mut self, slot: Slot, other: Slot) {
        let root = self.find(other);
        self.open.get_mut(&root).expect("open root").waiting -= 1;
        self.union(slot, other);
    }

    /// Regions still open (all of them once every tile was added means a tile is missing).
    pub fn open_regions(&self) -> usize {
        self.open.len()
    }

    /// Links still waiting (matched by another process or not).
    pub fn waiting_links(&self) -> usize {
        self.waiting.len() + self.matched_waiting
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
        (self.waiting_links() * 48 + self.open.len() * 120 + self.open_members * 28) as u64
    }
}
