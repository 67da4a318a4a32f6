//! Segmentation of one tile's walkable spans into regions (seed 000, section 3, Alg. 1-2).
//!
//! Based on: seed 000, 3.1 (flood fill; spans are connected when they are 8-neighbours with the
//! same `zmax`, so regions are flat) and seed 001, 6.2.2.2 (layers: neighbours within the climb,
//! never two spans of one column). Both are [`Levels`]: flat is a step of one voxel, layered a
//! step of the climb, and membership is decided by two cells alone (see there).
//!
//! [`segment_tile`] floods the walkable spans of a tile's core and labels them; it also lists
//! the tile's [`BorderLink`]s: every connection between a core span and a span of the one-cell
//! ring, i.e. of a neighbouring tile. Both tiles of a connection produce the same
//! [`LinkKey`], which is how the merge (crate `stitch`) finds the regions that the tiling cut
//! apart. Because connection is local (two cells of one 2x2 block are always 8-neighbours),
//! the regions merged over these links are exactly the regions of a single-tile bake,
//! including regions that only touch diagonally across a tile corner.
//!
//! Pure: no I/O, no threads.

use tessera_artifacts::{
    BorderLink, LinkKey, LocalRegion, SpanField, TileCoord, TileRegions, NO_LEVEL, NO_REGION,
};
pub use tessera_artifacts::{Levels, SpanKey};
use tessera_geom::union_find;

/// The 8 neighbours (dx, dy).
const NEIGHBOURS: [(i32, i32); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// The walkable span of column (x, y) at `level`, as an index into the field's spans (`lv`:
/// [`Levels::of_spans`]). A column holds at most one walkable span per level: two walkable spans of
/// one column are an agent's height apart, more than a level's step.
#[inline]
fn span_at(field: &SpanField, lv: &[u32], x: i32, y: i32, level: u32) -> Option<usize> {
    if !field.rect.contains(x, y) {
        return None;
    }
    let i = field.rect.index(x, y);
    let (a, b) = (
        field.column_start[i] as usize,
        field.column_start[i + 1] as usize,
    );
    (a..b).find(|&k| lv[k] == level)
}

/// Labels the walkable spans of the field's core by region (8-neighbours at one level),
/// regions numbered in scan order of their first span (rows bottom-up, then columns, then
/// spans upward), and lists the links to the ring.
///
/// One pass in scan order joins each span to its neighbours already seen (west, south-west,
/// south, south-east) in a union-find whose root is always the earliest span; a second pass
/// numbers the roots as they first appear. That is the numbering a flood fill started from
/// each unlabelled span in scan order gives (kept in the tests as the oracle), with memory
/// read in order instead of wherever the flood wanders.
pub fn segment_tile(field: &SpanField, tile: TileCoord, levels: Levels) -> TileRegions {
    let lv = levels.of_spans(field);
    segment_tile_in(&mut Scratch::default(), field, &lv, tile, levels)
}

/// The union-find's buffers, reused from one tile to the next, and a label buffer handed
/// back ([`Scratch::recycle`]) for the next tile's [`TileRegions::labels`].
#[derive(Default)]
pub struct Scratch {
    parent: Vec<u32>,
    number: Vec<u32>,
    labels: Vec<u32>,
}

impl Scratch {
    /// Bytes the buffers hold.
    pub fn byte_size(&self) -> u64 {
        (self.parent.capacity() + self.number.capacity() + self.labels.capacity()) as u64 * 4
    }

    /// Takes a [`TileRegions::labels`] back once nothing reads it, to label the next tile in.
    pub fn recycle(&mut self, labels: Vec<u32>) {
        if labels.capacity() > self.labels.capacity() {
            self.labels = labels;
        }
    }
}

/// [`segment_tile`] with the level of every span given (`lv`: [`Levels::of_spans`]) and the
/// working buffers of `scratch`.
pub fn segment_tile_in(
    scratch: &mut Scratch,
    field: &SpanField,
    lv: &[u32],
    tile: TileCoord,
    levels: Levels,
) -> TileRegions {
    let core = field.core;
    // Pass 1: provisional ids (in scan order) in `labels`, joined in `parent`.
    let mut labels = std::mem::take(&mut scratch.labels);
    labels.clear();
    labels.resize(field.spans.len(), NO_REGION);
    let parent = &mut scratch.parent;
    parent.clear();
    let starts = &field.column_start;
    let width = field.rect.width as usize;
    for y in core.y0..core.y1() {
        for x in core.x0..core.x1() {
            let i = field.rect.index(x, y);
            // The neighbours already seen, as column indices: west, south-west, south,
            // south-east, those inside the core.
            let (west, south, east) = (x > core.x0, y > core.y0, x + 1 < core.x1());
            let before = [
                west.then(|| i - 1),
                (west && south).then(|| i - width - 1),
                south.then(|| i - width),
                (south && east).then(|| i - width + 1),
            ];
            for k in starts[i] as usize..starts[i + 1] as usize {
                let level = lv[k];
                if level == NO_LEVEL {
                    continue;
                }
                let mut id = NO_REGION;
                for n in before.into_iter().flatten() {
                    let column = starts[n] as usize..starts[n + 1] as usize;
                    let Some(n) = column.into_iter().find(|&j| lv[j] == level) else {
                        continue;
                    };
                    // Most neighbours are already joined to this span's id: no walk.
                    if labels[n] == id {
                        continue;
                    }
                    let root = union_find::root(parent, labels[n]);
                    if id == NO_REGION {
                        id = root;
                    } else if root != id {
                        // Keep the earlier root.
                        let (lo, hi) = (id.min(root), id.max(root));
                        parent[hi as usize] = lo;
                        id = lo;
                    }
                }
                if id == NO_REGION {
                    id = parent.len() as u32;
                    parent.push(id);
                }
                labels[k] = id;
            }
        }
    }
    // Pass 2: final labels in order of first appearance, region sizes and heights.
    let number = &mut scratch.number;
    number.clear();
    number.resize(parent.len(), NO_REGION);
    let mut regions: Vec<LocalRegion> = Vec::new();
    for y in core.y0..core.y1() {
        for x in core.x0..core.x1() {
            let i = field.rect.index(x, y);
            for k in field.column_start[i] as usize..field.column_start[i + 1] as usize {
                if labels[k] == NO_REGION {
                    continue;
                }
                let root = union_find::root(parent, labels[k]) as usize;
                let z = field.spans[k].zmax;
                if number[root] == NO_REGION {
                    number[root] = regions.len() as u32;
                    // The first span seen in scan order is the smallest key.
                    regions.push(LocalRegion {
                        spans: 0,
                        first: SpanKey { y, x, zmax: z },
                        zmin: z,
                        zmax: z,
                    });
                }
                let label = number[root];
                labels[k] = label;
                let r = &mut regions[label as usize];
                r.spans += 1;
                r.zmin = r.zmin.min(z);
                r.zmax = r.zmax.max(z);
            }
        }
    }
    let links = ring_links(field, lv, &labels);
    TileRegions {
        tile,
        levels,
        core,
        labels,
        regions,
        links,
    }
}

/// Every connection between a span of the core's outermost cells and a span of the ring at
/// its level, once per pair, sorted by key.
fn ring_links(field: &SpanField, lv: &[u32], labels: &[u32]) -> Vec<BorderLink> {
    let core = field.core;
    let mut links = Vec::new();
    let on_border =
        |x: i32, y: i32| x == core.x0 || y == core.y0 || x + 1 == core.x1() || y + 1 == core.y1();
    for y in core.y0..core.y1() {
        for x in core.x0..core.x1() {
            if !on_border(x, y) {
                continue;
            }
            let i = field.rect.index(x, y);
            for k in field.column_start[i] as usize..field.column_start[i + 1] as usize {
                if labels[k] == NO_REGION {
                    continue;
                }
                let key = SpanKey {
                    y,
                    x,
                    zmax: field.spans[k].zmax,
                };
                for (dx, dy) in NEIGHBOURS {
                    let (nx, ny) = (x + dx, y + dy);
                    if core.contains(nx, ny) {
                        continue;
                    }
                    if let Some(n) = span_at(field, lv, nx, ny, lv[k]) {
                        links.push(BorderLink {
                            key: LinkKey::new(
                                key,
                                SpanKey {
                                    y: ny,
                                    x: nx,
                                    zmax: field.spans[n].zmax,
                                },
                            ),
                            region: labels[k],
                        });
                    }
                }
            }
        }
    }
    links.sort_unstable_by_key(|l| l.key);
    links
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tessera_artifacts::CellRect;

    /// The flood fill segmentation was first written as (the oracle): floods the walkable spans of the field's core into flat regions (same `zmax`,
    /// 8-neighbours), labelled in scan order (rows bottom-up, then columns, then spans upward), and
    /// lists the links to the ring.
    fn segment_by_flood(field: &SpanField, tile: TileCoord, levels: Levels) -> TileRegions {
        let core = field.core;
        let lv = levels.of_spans(field);
        let mut labels = vec![NO_REGION; field.spans.len()];
        let mut regions = Vec::new();
        let mut links = Vec::new();
        let mut stack: Vec<(i32, i32, usize)> = Vec::new();
        for y in core.y0..core.y1() {
            for x in core.x0..core.x1() {
                let i = field.rect.index(x, y);
                for k in field.column_start[i] as usize..field.column_start[i + 1] as usize {
                    let s = field.spans[k];
                    if !s.walkable || labels[k] != NO_REGION {
                        continue;
                    }
                    let label = regions.len() as u32;
                    let mut region = LocalRegion {
                        spans: 0,
                        first: SpanKey { y, x, zmax: s.zmax },
                        zmin: s.zmax,
                        zmax: s.zmax,
                    };
                    labels[k] = label;
                    stack.push((x, y, k));
                    let level = lv[k];
                    while let Some((cx, cy, ck)) = stack.pop() {
                        let z = field.spans[ck].zmax;
                        region.spans += 1;
                        region.zmin = region.zmin.min(z);
                        region.zmax = region.zmax.max(z);
                        let key = SpanKey {
                            y: cy,
                            x: cx,
                            zmax: z,
                        };
                        region.first = region.first.min(key);
                        for (dx, dy) in NEIGHBOURS {
                            let (nx, ny) = (cx + dx, cy + dy);
                            let Some(n) = span_at(field, &lv, nx, ny, level) else {
                                continue;
                            };
                            if core.contains(nx, ny) {
                                if labels[n] == NO_REGION {
                                    labels[n] = label;
                                    stack.push((nx, ny, n));
                                }
                            } else {
                                links.push(BorderLink {
                                    key: LinkKey::new(
                                        key,
                                        SpanKey {
                                            y: ny,
                                            x: nx,
                                            zmax: field.spans[n].zmax,
                                        },
                                    ),
                                    region: label,
                                });
                            }
                        }
                    }
                    regions.push(region);
                }
            }
        }
        links.sort_unstable_by_key(|l| l.key);
        TileRegions {
            tile,
            levels,
            core,
            labels,
            regions,
            links,
        }
    }

    /// A field from a height map (0 = no span); the core is all but a one-cell ring.
    fn field(heights: &[&[u32]]) -> SpanField {
        let (h, w) = (heights.len() as u32, heights[0].len() as u32);
        let rect = CellRect {
            x0: -1,
            y0: -1,
            width: w,
            height: h,
        };
        SpanField::from_floors(
            rect,
            CellRect {
                x0: 0,
                y0: 0,
                width: w - 2,
                height: h - 2,
            },
            heights,
        )
    }

    #[test]
    fn same_height_diagonal_neighbours_connect_and_steps_split() {
        let f = field(&[
            &[0, 0, 0, 0, 0],
            &[0, 5, 0, 0, 0],
            &[0, 0, 5, 6, 0],
            &[0, 0, 0, 6, 0],
            &[0, 0, 0, 0, 0],
        ]);
        let r = segment_tile(&f, TileCoord { x: 0, y: 0 }, Levels::FLAT);
        assert_eq!(r.regions.len(), 2);
        assert_eq!(r.regions[0].spans, 2); // the diagonal pair at height 5
        assert_eq!(r.regions[1].spans, 2);
        assert!(r.links.is_empty());
    }

    #[test]
    fn links_to_the_ring_are_listed_once_per_pair() {
        let f = field(&[&[0, 0, 0, 0], &[3, 3, 3, 3], &[0, 0, 0, 3], &[0, 0, 0, 0]]);
        let r = segment_tile(&f, TileCoord { x: 0, y: 0 }, Levels::FLAT);
        assert_eq!(r.regions.len(), 1);
        // (0,0) links to (-1,0); (1,0) links to (2,0), (2,1) diagonally and... (2,1) also to (1,0)'s
        // right-up neighbour: every (core span, ring span) pair once.
        let keys: Vec<_> = r.links.iter().map(|l| l.key).collect();
        let mut dedup = keys.clone();
        dedup.dedup();
        assert_eq!(keys, dedup);
        assert_eq!(keys.len(), 3);
    }

    proptest! {
        #[test]
        fn scan_order_union_find_equals_the_flood_fill(
            field in tessera_test_support::random::span_fields(4, 3),
            step in 1u32..4,
        ) {
            let levels = Levels::layered(step);
            let tile = TileCoord { x: 0, y: 0 };
            prop_assert_eq!(segment_tile(&field, tile, levels), segment_by_flood(&field, tile, levels));
        }

        /// Surface labels: one region never holds two spans of a column, 8-neighbours in one
        /// region are within the climb, and the union-find still equals the flood.
        #[test]
        fn surface_regions_hold_one_floor_per_column_and_no_step_beyond_the_climb(
            field in tessera_test_support::random::span_fields(4, 3),
            step in 1u32..5,
            block in 0u32..4,
        ) {
            let levels = Levels { step, surface: true, block, climb: step - 1 };
            let tile = TileCoord { x: 0, y: 0 };
            let r = segment_tile(&field, tile, levels);
            prop_assert_eq!(&r, &segment_by_flood(&field, tile, levels));
            let core = field.core;
            let spans_of = |x: i32, y: i32| {
                let i = field.rect.index(x, y);
                field.column_start[i] as usize..field.column_start[i + 1] as usize
            };
            for y in core.y0..core.y1() {
                for x in core.x0..core.x1() {
                    let mine: Vec<usize> =
                        spans_of(x, y).filter(|&k| r.labels[k] != NO_REGION).collect();
                    for (i, &a) in mine.iter().enumerate() {
                        for &b in &mine[i + 1..] {
                            prop_assert_ne!(r.labels[a], r.labels[b], "two floors of ({}, {})", x, y);
                        }
                        for (dx, dy) in NEIGHBOURS {
                            let (nx, ny) = (x + dx, y + dy);
                            if !core.contains(nx, ny) {
                                continue;
                            }
                            for n in spans_of(nx, ny) {
                                if r.labels[n] == r.labels[a] {
                                    let (za, zn) = (field.spans[a].zmax, field.spans[n].zmax);
                                    prop_assert!(za.abs_diff(zn) <= levels.climb, "{} to {}", za, zn);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
