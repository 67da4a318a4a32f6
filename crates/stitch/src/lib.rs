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

/// Components of region slots joined by links, of which only the open ones are held: each
/// with its slots, the links still waiting on it and what `P` keeps of it (merged on union).
/// A closed component is taken out whole, its slots with it, so the union-find stays a
/// frontier. Both merges use one: a process's own ([`LocalMatcher`]) and the global one.
struct Frontier<P> {
    parent: HashMap<Slot, Slot>,
    open: HashMap<Slot, Component<P>>,
}

struct Component<P> {
    /// Its slots, dropped from the union-find when it closes.
    slots: Vec<Slot>,
    /// Links of its regions still waiting for their other tile.
    waiting: u64,
    data: P,
}

/// What a [`Frontier`] keeps of a component besides its slots.
trait Absorb {
    fn absorb(&mut self, other: Self);
}

impl Absorb for () {
    fn absorb(&mut self, _: ()) {}
}

/// A region's figures; its members are the component's slots.
impl Absorb for MergedRegion {
    fn absorb(&mut self, other: MergedRegion) {
        self.id = self.id.min(other.id);
        self.spans += other.spans;
        self.zmin = self.zmin.min(other.zmin);
        self.zmax = self.zmax.max(other.zmax);
    }
}

impl<P> Default for Frontier<P> {
    fn default() -> Self {
        Frontier {
            parent: HashMap::default(),
            open: HashMap::default(),
        }
    }
}

impl<P: Absorb> Frontier<P> {
    /// Puts `slot` in as a component of its own, unless it is there.
    fn add(&mut self, slot: Slot, data: impl FnOnce() -> P) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.parent.entry(slot) {
            e.insert(slot);
            let slots = vec![slot];
            let data = data();
            self.open.insert(
                slot,
                Component {
                    slots,
                    waiting: 0,
                    data,
                },
            );
        }
    }

    /// The root of `s`, compressing the path it walks.
    fn find(&mut self, mut s: Slot) -> Slot {
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

    /// Joins the components of `a` and `b` (the one with more slots absorbs the other).
    fn union(&mut self, a: Slot, b: Slot) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return;
        }
        let ca = self.open.remove(&ra).expect("open root");
        let cb = self.open.remove(&rb).expect("open root");
        let (keep, gone, mut big, small) = if ca.slots.len() >= cb.slots.len() {
            (ra, rb, ca, cb)
        } else {
            (rb, ra, cb, ca)
        };
        self.parent.insert(gone, keep);
        big.slots.extend(small.slots);
        big.waiting += small.waiting;
        big.data.absorb(small.data);
        self.open.insert(keep, big);
    }

    /// Whether `a` and `b` are in one component.
    fn same(&mut self, a: Slot, b: Slot) -> bool {
        self.find(a) == self.find(b)
    }

    /// `slot`'s component waits on `links` more links (fewer when negative).
    fn wait(&mut self, slot: Slot, links: i64) {
        let root = self.find(slot);
        let c = self.open.get_mut(&root).expect("open root");
        c.waiting = c.waiting.checked_add_signed(links).expect("waits balance");
    }

    /// Takes out `slot`'s component if nothing waits on it any more (`None` also when it
    /// was taken out already).
    fn close(&mut self, slot: Slot) -> Option<Component<P>> {
        if !self.parent.contains_key(&slot) {
            return None;
        }
        let root = self.find(slot);
        if self.open[&root].waiting != 0 {
            return None;
        }
        let c = self.open.remove(&root).expect("open root");
        for s in &c.slots {
            self.parent.remove(s);
        }
        Some(c)
    }
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

/// One process's merge of the links between its own tiles, fed them in tile order: keeps the
/// links whose first tile it has seen and whose second it has not, and a union-find over the
/// regions they join. A component no link of the process waits on any more is forgotten (no
/// later link of the process can reach it), so it holds a frontier, as the global merge does.
#[derive(Default)]
pub struct LocalMatcher {
    waiting: HashMap<LinkKey, Slot>,
    components: Frontier<()>,
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
        let c = &mut self.components;
        for link in taken {
            let slot = (coord, link.region);
            c.add(slot, || ());
            match self.waiting.remove(&link.key) {
                Some(other) => {
                    c.wait(other, -1);
                    if c.same(slot, other) {
                        // Already one component: the link only ends a wait, counted on a slot
                        // of the component (the global merge has it open too, and finds the
                        // same component from it after any union this tile makes).
                        let root = c.find(other);
                        count(&mut resolved, &mut resolved_at, root);
                    } else {
                        c.union(slot, other);
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
                    c.wait(slot, 1);
                    count(&mut waits, &mut wait_at, link.region);
                }
            }
            touched.push(slot);
        }
        // Components nothing of this process waits on any more are done here.
        for slot in touched {
            c.close(slot);
        }
        let waits = waits
            .into_iter()
            .map(|(region, links)| LocalLink::Waits { region, links });
        let resolved = resolved
            .into_iter()
            .map(|((tile, other), links)| LocalLink::Resolves { tile, other, links });
        (waits.chain(joins).chain(resolved).collect(), positions)
    }

    /// Links whose second tile has not come yet.
    pub fn waiting_links(&self) -> usize {
        self.waiting.len()
    }

    /// Regions held in the union-find (those of components still waited on).
    pub fn held_regions(&self) -> usize {
        self.components.parent.len()
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

/// The side of `core` that link `key` crosses, as `(dy + 1) * 3 + (dx + 1)` for the step
/// `(dx, dy)` from the core to the cell of its span outside the core (4: both spans inside,
/// which a border link never has).
fn side(core: &tessera_artifacts::CellRect, key: &LinkKey) -> u8 {
    let outside = if core.contains(key.0.x, key.0.y) {
        key.1
    } else {
        key.0
    };
    let step = |v: i32, lo: i32, len: u32| -> u8 {
        if v < lo {
            0
        } else if i64::from(v) >= i64::from(lo) + i64::from(len) {
            2
        } else {
            1
        }
    };
    step(outside.y, core.y0, core.height) * 3 + step(outside.x, core.x0, core.width)
}

/// The merge state: only what is still open.
#[derive(Default)]
pub struct RegionMerger {
    /// The open regions; each one's `members` are its component's slots, filled in when it
    /// closes.
    regions: Frontier<MergedRegion>,
    /// Links waiting for their other tile: those across one side of a tile's core (see
    /// [`side`]), in the order of their keys, with that tile, under the first key. The other
    /// tile sends the same keys across its opposite side.
    waiting: HashMap<LinkKey, (TileCoord, Vec<BorderLink>)>,
    /// Links in `waiting`.
    waiting_count: usize,
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

    /// Adds one tile's regions; returns the regions that this tile closed, sorted by id.
    pub fn add_tile(&mut self, tile: &TileRegions) -> Vec<MergedRegion> {
        self.add_matched(tile, &[])
    }

    /// [`RegionMerger::add_tile`] for a tile whose links to tiles of its own process were
    /// matched by that process (`local`, from [`LocalMatcher::split`]; `tile.links` holds the
    /// others): the same regions, closed at the same tiles.
    pub fn add_matched(&mut self, tile: &TileRegions, local: &[LocalLink]) -> Vec<MergedRegion> {
        self.add_part(tile, local, &|_| true)
    }

    /// [`RegionMerger::add_matched`] for the regions of `tile` that `keep` takes, with their
    /// links; the others are left out. A merge of part of the world (an incremental rebake
    /// merges again only the regions a change reached) gives each of its regions as the
    /// whole merge does when no link joins a region taken to one left out.
    pub fn add_part(
        &mut self,
        tile: &TileRegions,
        local: &[LocalLink],
        keep: &dyn Fn(u32) -> bool,
    ) -> Vec<MergedRegion> {
        let coord = tile.tile;
        let mut taken = 0;
        for (i, r) in tile.regions.iter().enumerate() {
            if !keep(i as u32) {
                continue;
            }
            taken += 1;
            self.regions.add((coord, i as u32), || MergedRegion {
                id: r.first,
                spans: r.spans,
                zmin: r.zmin,
                zmax: r.zmax,
                members: Vec::new(),
            });
        }
        self.open_members += taken;
        // A region crossing a tile border has a link per pair of border spans, nearly all of
        // them, one after the other, to the same region across. A run of links between the
        // same two regions is one union and one count of waits ended, and a run of links
        // left waiting from one region one count of waits begun: the components and counts
        // are those of the links one by one (a union's result does not depend on the order of
        // unions, nor a count on the order of its steps).
        //
        // A link crosses one side of the tile's core (or a corner) into the neighbouring
        // tile, which sends the same link across its opposite side: the links across one
        // side are the links between the two tiles, and the same keys come from both. So the
        // links across a side wait together, under their first key; the neighbour's links
        // across the opposite side find them by their own first key and are matched by
        // walking the two lists in order of their keys (no hash of a link).
        let mut joins: Option<(Slot, Slot, i64)> = None;
        let mut waits: Option<(Slot, i64)> = None;
        let mut by_side: [Vec<BorderLink>; 9] = Default::default();
        for link in tile.links.iter().filter(|l| keep(l.region)) {
            by_side[side(&tile.core, &link.key) as usize].push(*link);
        }
        for mine in by_side {
            let Some(first) = mine.first().map(|l| l.key) else {
                continue;
            };
            let Some((other_tile, theirs)) = self.waiting.remove(&first) else {
                self.waiting_count += mine.len();
                for link in &mine {
                    let slot = (coord, link.region);
                    match &mut waits {
                        Some((s, n)) if *s == slot => *n += 1,
                        run => {
                            if let Some((s, n)) = run.replace((slot, 1)) {
                                self.regions.wait(s, n);
                            }
                        }
                    }
                }
                self.waiting.insert(first, (coord, mine));
                continue;
            };
            self.waiting_count -= theirs.len();
            // Both lists sorted by key: every key of one is in the other (a link is sent by
            // both its tiles); any that is not waits on, on its side.
            let (mut i, mut j) = (0, 0);
            let (mut left_mine, mut left_theirs) = (Vec::new(), Vec::new());
            while i < mine.len() || j < theirs.len() {
                let order = match (mine.get(i), theirs.get(j)) {
                    (Some(a), Some(b)) => a.key.cmp(&b.key),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    _ => std::cmp::Ordering::Greater,
                };
                match order {
                    std::cmp::Ordering::Less => {
                        left_mine.push(mine[i]);
                        i += 1;
                    }
                    std::cmp::Ordering::Greater => {
                        left_theirs.push(theirs[j]);
                        j += 1;
                    }
                    std::cmp::Ordering::Equal => {
                        let (slot, other) =
                            ((coord, mine[i].region), (other_tile, theirs[j].region));
                        match &mut joins {
                            Some((s, o, n)) if *s == slot && *o == other => *n += 1,
                            run => {
                                if let Some((s, o, n)) = run.replace((slot, other, 1)) {
                                    self.join(s, o, n);
                                }
                            }
                        }
                        i += 1;
                        j += 1;
                    }
                }
            }
            // (Keys on one side only, which a tiling into a grid never makes, wait on.)
            if let Some(l) = left_theirs.first() {
                self.waiting_count += left_theirs.len();
                self.waiting.insert(l.key, (other_tile, left_theirs));
            }
            if let Some(l) = left_mine.first() {
                self.waiting_count += left_mine.len();
                for link in &left_mine {
                    self.regions.wait((coord, link.region), 1);
                }
                self.waiting.insert(l.key, (coord, left_mine));
            }
        }
        if let Some((s, o, n)) = joins {
            self.join(s, o, n);
        }
        if let Some((s, n)) = waits {
            self.regions.wait(s, n);
        }
        for link in local {
            match *link {
                LocalLink::Waits { region, links } => {
                    self.matched_waiting += links as usize;
                    self.regions.wait((coord, region), i64::from(links));
                }
                LocalLink::Joins {
                    region,
                    tile,
                    other,
                } => {
                    self.matched_waiting -= 1;
                    self.join((coord, region), (tile, other), 1);
                }
                LocalLink::Resolves { tile, other, links } => {
                    self.matched_waiting -= links as usize;
                    self.regions.wait((tile, other), -i64::from(links));
                }
            }
        }
        self.peak_frontier.0 = self.peak_frontier.0.max(self.waiting_links());
        self.peak_frontier.1 = self.peak_frontier.1.max(self.regions.open.len());
        // Every component this tile touched holds one of its own regions now.
        let mut closed = Vec::new();
        for i in (0..tile.regions.len() as u32).filter(|&i| keep(i)) {
            if let Some(c) = self.regions.close((coord, i)) {
                self.open_members -= c.slots.len();
                let mut region = c.data;
                region.members = c.slots;
                region.members.sort_unstable();
                closed.push(region);
            }
        }
        closed.sort_by_key(|r| r.id);
        closed
    }

    /// `links` links from `slot` reached `other`, whose region waited for them: that many
    /// waits fewer, and the two regions united.
    fn join(&mut self, slot: Slot, other: Slot, links: i64) {
        self.regions.wait(other, -links);
        self.regions.union(slot, other);
    }

    /// Regions still open (all of them once every tile was added means a tile is missing).
    pub fn open_regions(&self) -> usize {
        self.regions.open.len()
    }

    /// Links still waiting (matched by another process or not).
    pub fn waiting_links(&self) -> usize {
        self.waiting_count + self.matched_waiting
    }

    /// Bytes the frontier holds (about): waiting links, open regions and their members.
    pub fn held_bytes(&self) -> u64 {
        debug_assert_eq!(
            self.open_members,
            self.regions
                .open
                .values()
                .map(|c| c.slots.len())
                .sum::<usize>()
        );
        (self.waiting_links() * 48 + self.regions.open.len() * 120 + self.open_members * 28) as u64
    }
}
