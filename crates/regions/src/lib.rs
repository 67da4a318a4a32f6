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
    BorderLink, LinkKey, LocalRegion, SpanField, TileCoord, TileRegions, NO_REGION,
};
pub use tessera_artifacts::{Levels, SpanKey};

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

/// The walkable span of column (x, y) at `level`, as an index into the field's spans.
#[inline]
fn span_at(field: &SpanField, x: i32, y: i32, level: u32, levels: Levels) -> Option<usize> {
    if !field.rect.contains(x, y) {
        return None;
    }
    let i = field.rect.index(x, y);
    let (a, b) = (
        field.column_start[i] as usize,
        field.column_start[i + 1] as usize,
    );
    (a..b).find(|&k| field.spans[k].walkable && levels.of(field.spans[k].zmax) == level)
}

/// Floods the walkable spans of the field's core into flat regions (same `zmax`,
/// 8-neighbours), labelled in scan order (rows bottom-up, then columns, then spans upward), and
/// lists the links to the ring.
pub fn segment_tile(field: &SpanField, tile: TileCoord, levels: Levels) -> TileRegions {
    let core = field.core;
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
                let level = levels.of(s.zmax);
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
                        let Some(n) = span_at(field, nx, ny, level, levels) else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_artifacts::CellRect;

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
}
