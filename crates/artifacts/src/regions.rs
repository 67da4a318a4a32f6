//! The outputs of segmentation, the cross-tile merge and contour tracing.

use crate::codec::{self, Reader, Writer};
use crate::{invalid, ArtifactError, TileCoord};

/// A span named by its global cell and its floor height: unique, since a column's spans are
/// disjoint. Ordered by (y, x, zmax).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpanKey {
    pub y: i32,
    pub x: i32,
    pub zmax: u32,
}

/// How floor heights group into regions: spans of 8-neighbouring cells belong together when
/// their labels ([`Levels::label`]) are equal.
///
/// * Flat and layered (`surface: false`): the label is `zmax / step`. A step of 1 gives the
///   seed's flat regions (same `zmax`); a step of `walkable_climb + 1` gives layered regions,
///   in which neighbours differ by at most the climb, so slopes and stairs become a few
///   regions instead of a terrace per voxel, but a hill still becomes a stack of bands.
/// * Surface (`surface: true`): a column's lowest walkable span is its *ground*, and ground
///   has one label; every span above it has its `zmax / step` band, as when layered. Ground
///   that follows the terrain, however it rises, is one region; floors stacked above it
///   (storeys, bridges, roofs) are banded, so they stay flat whatever lies below them. A ground
///   span with an 8-neighbouring ground more than `climb` below it (a drop across a corner,
///   or to a floor under an overhang, which the four-neighbour ledge filter lets through; a
///   roof's rim over its walls) takes its band instead: so one label always means within the
///   climb, and the rim joins the rest of its roof. A column's labels therefore read its 8
///   neighbours (the tiles keep a ring of two cells for that). Labels also carry the parity
///   of the `block`-cell square the column lies in, which cuts regions at that grid.
///
/// In every mode a label's low [`AREA_BITS`] bits are the span's area, so spans of two areas
/// never share a label and regions never cross an area border ([`Levels::area_of_label`]).
///
/// In every mode the step never exceeds the agent's clearance, so a region never holds two
/// spans of one column, and whether two cells belong together is decided by their two columns
/// (and, in surface mode, the columns around them) alone: that is what keeps regions and
/// contours the same for every tiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Levels {
    pub step: u32,
    /// Ground (each column's lowest walkable span) has one label (see above).
    pub surface: bool,
    /// With `surface`: regions are cut at a grid of squares this many cells wide (0: never), so
    /// that no region outgrows what the polygon stage holds at once.
    pub block: u32,
    /// With `surface`: the highest step [voxels]; ground more than this above a neighbour's
    /// ground takes its band.
    pub climb: u32,
}

impl Levels {
    /// The seed's flat regions.
    pub const FLAT: Levels = Levels::layered(1);

    /// Layered regions of `step`-high bands.
    pub const fn layered(step: u32) -> Levels {
        Levels {
            step,
            surface: false,
            block: 0,
            climb: 0,
        }
    }

    /// The label of a floor at `zmax` of area `area` in column (x, y); `ground` when it is the
    /// column's ground and no neighbour's ground lies more than the climb below it. Always below
    /// [`OUT_OF_REACH`].
    #[inline]
    pub fn label(&self, x: i32, y: i32, ground: bool, zmax: u32, area: u8) -> u32 {
        if !self.surface {
            return Levels::band_label(zmax / self.step, area);
        }
        self.surface_label(ground, zmax, self.parity_x(x) | self.parity_y(y), area)
    }

    /// A surface label from its parts: the band (0 for ground), the block parity of its
    /// column ([`Levels::parity_x`] | [`Levels::parity_y`]) and the area.
    #[inline]
    fn surface_label(&self, ground: bool, zmax: u32, parity: u32, area: u8) -> u32 {
        let band = if ground { 0 } else { zmax / self.step + 1 };
        // Labels are compared between neighbouring cells only (and between the walkable
        // spans of one column, which are a clearance apart); bands that far up alias.
        ((band & 0x003F_FFFF) << (2 + AREA_BITS)) | parity << AREA_BITS | area as u32
    }

    /// A flat or layered label: the band and the area. Labels stay below [`OUT_OF_REACH`];
    /// bands 2^24 apart alias, as they are never neighbours.
    #[inline]
    fn band_label(band: u32, area: u8) -> u32 {
        (band & 0x00FF_FFFF) << AREA_BITS | area as u32
    }

    /// The area of a span of label `label` (any mode).
    #[inline]
    pub fn area_of_label(label: u32) -> u8 {
        (label & ((1 << AREA_BITS) - 1)) as u8
    }

    /// The x half of a column's block parity (0 without blocks).
    #[inline]
    fn parity_x(&self, x: i32) -> u32 {
        if self.block == 0 {
            0
        } else {
            ((x.div_euclid(self.block as i32) & 1) << 1) as u32
        }
    }

    /// The y half of a column's block parity (0 without blocks).
    #[inline]
    fn parity_y(&self, y: i32) -> u32 {
        if self.block == 0 {
            0
        } else {
            (y.div_euclid(self.block as i32) & 1) as u32
        }
    }

    /// The label of every span of `field`: [`Levels::label`] for a walkable span,
    /// [`NO_LEVEL`] for the others. Computed once per tile, so that segmentation and tracing
    /// compare labels instead of computing them at every neighbour they look at.
    pub fn of_spans(&self, field: &crate::SpanField) -> Vec<u32> {
        let mut out = Vec::new();
        self.of_spans_into(field, &mut out);
        out
    }

    /// [`Levels::of_spans`] into `out` (its buffer reused).
    pub fn of_spans_into(&self, field: &crate::SpanField, out: &mut Vec<u32>) {
        out.clear();
        if !self.surface {
            out.extend(field.spans.iter().map(|s| {
                if s.walkable {
                    Levels::band_label(s.zmax / self.step, s.area)
                } else {
                    NO_LEVEL
                }
            }));
            return;
        }
        // Unwalkable spans keep `NO_LEVEL`; only walkable ones are written below.
        out.resize(field.spans.len(), NO_LEVEL);
        let rect = field.rect;
        let (width, rows) = (rect.width as usize, rect.height as usize);
        if width == 0 || rows == 0 {
            return;
        }
        let starts = &field.column_start;
        // Each column's ground (its lowest walkable floor, `NO_LEVEL` where it has none) and
        // the lowest ground of it and the two columns beside it in its row, kept for three
        // rows at a time: a label reads its own row and the two beside it. Small rings rather
        // than tables for the tile, which the allocator would hand back to the system and
        // fault in again for every tile; then each column's x parity.
        let mut buf = vec![NO_LEVEL; 7 * width];
        let (ground, rest) = buf.split_at_mut(3 * width);
        let (low, xpar) = rest.split_at_mut(3 * width);
        for (cx, p) in xpar.iter_mut().enumerate() {
            *p = self.parity_x(rect.x0 + cx as i32);
        }
        let fill = |ground: &mut [u32], low: &mut [u32], row: usize| {
            let slot = (row % 3) * width..(row % 3 + 1) * width;
            let (g, l) = (&mut ground[slot.clone()], &mut low[slot]);
            for (cx, g) in g.iter_mut().enumerate() {
                let i = row * width + cx;
                *g = field.spans[starts[i] as usize..starts[i + 1] as usize]
                    .iter()
                    .find(|s| s.walkable)
                    .map_or(NO_LEVEL, |s| s.zmax);
            }
            for cx in 0..width {
                let (x0, x1) = (cx.saturating_sub(1), (cx + 1).min(width - 1));
                l[cx] = g[x0].min(g[cx]).min(g[x1]);
            }
        };
        fill(ground, low, 0);
        for cy in 0..rows {
            if cy + 1 < rows {
                fill(ground, low, cy + 1);
            }
            let row = |r: usize| (r % 3) * width..(r % 3 + 1) * width;
            let (y0, y1) = (cy.saturating_sub(1), (cy + 1).min(rows - 1));
            let (g, l0, l, l1) = (
                &ground[row(cy)],
                &low[row(y0)],
                &low[row(cy)],
                &low[row(y1)],
            );
            let ypar = self.parity_y(rect.y0 + cy as i32);
            for cx in 0..width {
                let i = cy * width + cx;
                let (a, b) = (starts[i] as usize, starts[i + 1] as usize);
                let z = g[cx];
                if z == NO_LEVEL {
                    continue; // no walkable span: every label stays NO_LEVEL
                }
                // Ground keeps the ground label unless a neighbour's ground lies more than the
                // climb below it (of two grounds out of each other's climb, the higher is
                // banded). A column with no ground (NO_LEVEL) never is below.
                let lowest = l0[cx].min(l[cx]).min(l1[cx]);
                let mut is_ground = lowest.saturating_add(self.climb) >= z;
                let parity = xpar[cx] | ypar;
                for (s, label) in field.spans[a..b].iter().zip(&mut out[a..b]) {
                    if s.walkable {
                        *label = self.surface_label(is_ground, s.zmax, parity, s.area);
                        is_ground = false;
                    }
                }
            }
        }
    }

    /// True for a surface label of ground (see [`Levels`]); meaningless in the other modes.
    #[inline]
    pub fn is_ground_label(label: u32) -> bool {
        label >> (2 + AREA_BITS) == 0
    }
}

/// Bits of a label that hold the span's area (areas are below 64).
pub const AREA_BITS: u32 = 6;

/// The level of a span that is not walkable (no floor height has it: a level is at most
/// `u32::MAX - 1`).
pub const NO_LEVEL: u32 = u32::MAX;

/// A region of the whole world, merged across tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedRegion {
    /// The region's first span in (y, x, zmax) order: a name that no tiling changes.
    pub id: SpanKey,
    /// Walkable spans (cells).
    pub spans: u64,
    /// Floor height range [voxels].
    pub zmin: u32,
    pub zmax: u32,
    /// The tile-local regions it is made of, sorted: the tiles it touches, and how each tile's
    /// labels map to it.
    pub members: Vec<(TileCoord, u32)>,
}

/// A grid point: the corner shared by cells (x-1..x, y-1..y).
pub type Point = (i32, i32);

/// "No neighbour" in [`Contour::neighbours`]: no walkable floor across within the agent's
/// height.
pub const NO_NEIGHBOUR: u32 = u32::MAX;
/// Set in [`Contour::neighbours`] when the floor across is out of the agent's climb (a kerb,
/// a ledge): a border to share, not to cross.
pub const OUT_OF_REACH: u32 = 1 << 31;

/// A closed contour: its vertices in order with the region on the left (outer contours
/// counter-clockwise, holes clockwise). It is named after one member (tile, local region) of its
/// merged region.
///
/// The vertices are the corner points (where the contour turns) and the points where what lies
/// across it changes: every edge between two vertices has one neighbour, the level of the
/// walkable floor across it nearest in height within the agent's height (with [`OUT_OF_REACH`]
/// set when the step exceeds the climb), or [`NO_NEIGHBOUR`]. Two regions that touch therefore
/// list the same vertices along their common border, which keeps later simplification
/// watertight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contour {
    pub tile: TileCoord,
    pub region: u32,
    /// The region's level: the label ([`Levels::label`]) its spans share.
    pub level: u32,
    pub points: Vec<Point>,
    /// Floor height [voxels] at each vertex: the highest floor of the region among the four
    /// cells around it.
    pub heights: Vec<u32>,
    /// For each vertex, the neighbour across the edge that leaves it.
    pub neighbours: Vec<u32>,
}

impl Contour {
    /// Twice the signed area in cells (positive for counter-clockwise: an outer contour).
    pub fn twice_area(&self) -> i64 {
        tessera_geom::predicates::twice_area(&self.points)
    }

    /// True for an outer contour (counter-clockwise), false for a hole.
    pub fn is_outer(&self) -> bool {
        self.twice_area() > 0
    }

    /// The same cycle starting at its smallest (point, next point) pair, for comparisons (a
    /// slash point may appear twice in one cycle).
    pub fn canonical(&self) -> Vec<Point> {
        let n = self.points.len();
        let start = (0..n)
            .min_by_key(|&i| (self.points[i], self.points[(i + 1) % n]))
            .unwrap_or(0);
        (0..n).map(|k| self.points[(start + k) % n]).collect()
    }

    /// Rotates the cycle in place to start where [`Contour::canonical`] does, so that a
    /// contour's vertex order does not depend on which tile closed it.
    pub fn make_canonical(&mut self) {
        let n = self.points.len();
        let start = (0..n)
            .min_by_key(|&i| (self.points[i], self.points[(i + 1) % n]))
            .unwrap_or(0);
        self.points.rotate_left(start);
        self.heights.rotate_left(start);
        self.neighbours.rotate_left(start);
    }

    /// The vertices where the contour turns (the seed's corner points), dropping the straight
    /// ones that only mark a change of neighbour.
    pub fn corners_only(&self) -> Contour {
        let n = self.points.len();
        let keep: Vec<usize> = (0..n)
            .filter(|&k| {
                let (a, b, d) = (
                    self.points[(k + n - 1) % n],
                    self.points[k],
                    self.points[(k + 1) % n],
                );
                (b.0 - a.0) * (d.1 - b.1) - (b.1 - a.1) * (d.0 - b.0) != 0
            })
            .collect();
        Contour {
            tile: self.tile,
            region: self.region,
            level: self.level,
            points: keep.iter().map(|&k| self.points[k]).collect(),
            heights: keep.iter().map(|&k| self.heights[k]).collect(),
            neighbours: keep.iter().map(|&k| self.neighbours[k]).collect(),
        }
    }

    /// Every edge axis-aligned, and the contour turning or changing neighbour at every vertex.
    pub fn validate(&self) -> Result<(), ArtifactError> {
        let n = self.points.len();
        if n < 4 {
            return Err(invalid("contour", format!("{n} vertices")));
        }
        if self.heights.len() != n || self.neighbours.len() != n {
            return Err(invalid(
                "contour",
                "heights or neighbours do not match the vertices",
            ));
        }
        for k in 0..n {
            let (a, b, d) = (
                self.points[k],
                self.points[(k + 1) % n],
                self.points[(k + 2) % n],
            );
            let (u, v) = ((b.0 - a.0, b.1 - a.1), (d.0 - b.0, d.1 - b.1));
            if (u.0 == 0) == (u.1 == 0) {
                return Err(invalid(
                    "contour",
                    format!("edge {a:?} -> {b:?} is not axis-aligned"),
                ));
            }
            if u.0 * v.1 - u.1 * v.0 == 0 && self.neighbours[k] == self.neighbours[(k + 1) % n] {
                return Err(invalid(
                    "contour",
                    format!("vertex {b:?} neither turns nor changes neighbour"),
                ));
            }
        }
        Ok(())
    }
}

/// What the merge produced while one tile was added: the regions it closed and the contours
/// it completed. The pipeline writes one batch per tile, in tile order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionBatch {
    pub regions: Vec<MergedRegion>,
    pub contours: Vec<Contour>,
    /// How each contour was closed, by index (a contour without one was traced whole in the
    /// tile). An incremental merge puts a rebuilt batch's contours back in this order.
    pub closings: Vec<Closing>,
}

/// How the merge closed a contour of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closing {
    /// The tile's chain (index in its `TileContours::chains`) whose joining closed it, or
    /// [`Closing::TRACED`].
    pub chain: u32,
    /// The tiling-only vertices the joining removed from it.
    pub removed: u32,
}

impl Closing {
    /// The chain of a contour traced whole within its tile: no chain.
    pub const TRACED: u32 = u32::MAX;
}

impl Default for Closing {
    fn default() -> Self {
        Closing {
            chain: Closing::TRACED,
            removed: 0,
        }
    }
}

const MAGIC: &[u8; 8] = b"TSREGNS\0";
const VERSION: u32 = 3;

/// Bytes of a contour with no points in [`write_contour`]'s layout.
pub(crate) const CONTOUR_MIN_BYTES: usize = 24;

/// A contour in the codec: its tile, region and level, then each point with its height and
/// the neighbour across the piece that starts there. The one layout of a contour, in region
/// batches and in the tile contours carried between processes.
pub(crate) fn write_contour(w: &mut Writer, c: &Contour) {
    w.u32(c.tile.x);
    w.u32(c.tile.y);
    w.u32(c.region);
    w.u32(c.level);
    w.u64(c.points.len() as u64);
    for k in 0..c.points.len() {
        w.i32(c.points[k].0);
        w.i32(c.points[k].1);
        w.u32(c.heights[k]);
        w.u32(c.neighbours[k]);
    }
}

/// Reads what [`write_contour`] wrote (not validated: the caller decides).
pub(crate) fn read_contour(r: &mut Reader) -> Result<Contour, ArtifactError> {
    let tile = TileCoord {
        x: r.u32()?,
        y: r.u32()?,
    };
    let (region, level) = (r.u32()?, r.u32()?);
    let n = r.count(16)?;
    let (mut points, mut heights, mut neighbours) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for _ in 0..n {
        points.push((r.i32()?, r.i32()?));
        heights.push(r.u32()?);
        neighbours.push(r.u32()?);
    }
    Ok(Contour {
        tile,
        region,
        level,
        points,
        heights,
        neighbours,
    })
}

impl RegionBatch {
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty() && self.contours.is_empty()
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u64(self.regions.len() as u64);
        for r in &self.regions {
            w.i32(r.id.y);
            w.i32(r.id.x);
            w.u32(r.id.zmax);
            w.u64(r.spans);
            w.u32(r.zmin);
            w.u32(r.zmax);
            w.u64(r.members.len() as u64);
            for (t, l) in &r.members {
                w.u32(t.x);
                w.u32(t.y);
                w.u32(*l);
            }
        }
        w.u64(self.contours.len() as u64);
        for (i, c) in self.contours.iter().enumerate() {
            write_contour(&mut w, c);
            let closing = self.closings.get(i).copied().unwrap_or_default();
            w.u32(closing.chain);
            w.u32(closing.removed);
        }
        codec::seal(MAGIC, VERSION, &w.bytes)
    }

    pub fn decode(bytes: &[u8]) -> Result<RegionBatch, ArtifactError> {
        let payload = codec::unseal(bytes, MAGIC, VERSION, BATCH)?;
        let r = &mut Reader::new(payload, BATCH);
        let mut batch = RegionBatch {
            regions: read_regions(r)?,
            ..RegionBatch::default()
        };
        for _ in 0..r.count(CONTOUR_MIN_BYTES + 8)? {
            let c = read_contour(r)?;
            c.validate()?;
            batch.contours.push(c);
            batch.closings.push(Closing {
                chain: r.u32()?,
                removed: r.u32()?,
            });
        }
        if r.remaining() != 0 {
            return Err(invalid(BATCH, "trailing bytes"));
        }
        Ok(batch)
    }

    /// The regions of an encoded batch, its contours left undecoded (the whole batch's
    /// checksum is checked all the same).
    pub fn decode_regions(bytes: &[u8]) -> Result<Vec<MergedRegion>, ArtifactError> {
        let payload = codec::unseal(bytes, MAGIC, VERSION, BATCH)?;
        read_regions(&mut Reader::new(payload, BATCH))
    }
}

const BATCH: &str = "region batch";

/// The regions of a batch, as [`RegionBatch::encode`] wrote them.
fn read_regions(r: &mut Reader) -> Result<Vec<MergedRegion>, ArtifactError> {
    // Every count is checked against the bytes left before anything is allocated for it.
    let mut regions = Vec::new();
    for _ in 0..r.count(40)? {
        let id = SpanKey {
            y: r.i32()?,
            x: r.i32()?,
            zmax: r.u32()?,
        };
        let spans = r.u64()?;
        let (zmin, zmax) = (r.u32()?, r.u32()?);
        let mut members = Vec::new();
        for _ in 0..r.count(12)? {
            members.push((
                TileCoord {
                    x: r.u32()?,
                    y: r.u32()?,
                },
                r.u32()?,
            ));
        }
        regions.push(MergedRegion {
            id,
            spans,
            zmin,
            zmax,
            members,
        });
    }
    Ok(regions)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Surface labels as defined, cell by cell: a column's ground keeps the ground label when
    /// no ground of the nine cells around it (itself included) lies more than the climb below.
    fn surface_labels_by_definition(levels: &Levels, field: &crate::SpanField) -> Vec<u32> {
        let rect = field.rect;
        let column = |x: i32, y: i32| {
            let i = rect.index(x, y);
            &field.spans[field.column_start[i] as usize..field.column_start[i + 1] as usize]
        };
        let ground = |x: i32, y: i32| column(x, y).iter().find(|s| s.walkable).map(|s| s.zmax);
        let mut out = Vec::new();
        for y in rect.y0..rect.y1() {
            for x in rect.x0..rect.x1() {
                let level_ground = ground(x, y).is_some_and(|z| {
                    (y - 1..=y + 1).all(|ny| {
                        (x - 1..=x + 1).all(|nx| {
                            !rect.contains(nx, ny)
                                || ground(nx, ny)
                                    .is_none_or(|n| n.saturating_add(levels.climb) >= z)
                        })
                    })
                });
                let mut first = true;
                for s in column(x, y) {
                    if !s.walkable {
                        out.push(NO_LEVEL);
                        continue;
                    }
                    out.push(levels.label(x, y, first && level_ground, s.zmax, s.area));
                    first = false;
                }
            }
        }
        out
    }

    #[test]
    fn surface_labels_follow_their_definition() {
        // Random fields from a fixed xorshift sequence: narrow and wide, grounds a little
        // and a lot apart, columns without ground, spans above the ground.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..400 {
            let rect = crate::CellRect {
                x0: next(5) as i32 - 2,
                y0: next(5) as i32 - 2,
                width: 1 + next(12) as u32,
                height: 1 + next(12) as u32,
            };
            let mut field = crate::SpanField::empty(rect, rect);
            field.column_start.clear();
            field.column_start.push(0);
            for _ in 0..rect.area() {
                let mut z = next(4) as u32;
                for _ in 0..next(4) {
                    let zmax = z + 1 + next(12) as u32;
                    field.spans.push(crate::Span {
                        zmin: z,
                        zmax,
                        walkable: next(5) != 0,
                        area: 0,
                    });
                    z = zmax + 1 + next(20) as u32;
                }
                field.column_start.push(field.spans.len() as u32);
            }
            let levels = Levels {
                step: 1 + next(6) as u32,
                surface: true,
                block: [0, 3][next(2) as usize],
                climb: next(7) as u32,
            };
            assert_eq!(
                levels.of_spans(&field),
                surface_labels_by_definition(&levels, &field),
                "{rect:?} {levels:?}"
            );
        }
    }

    #[test]
    fn batch_round_trip() {
        let b = RegionBatch {
            regions: vec![MergedRegion {
                id: SpanKey {
                    y: -1,
                    x: 3,
                    zmax: 9,
                },
                spans: 4,
                zmin: 9,
                zmax: 9,
                members: vec![(TileCoord { x: 0, y: 1 }, 2)],
            }],
            contours: vec![Contour {
                tile: TileCoord { x: 0, y: 1 },
                region: 2,
                level: 9,
                points: vec![(0, 0), (1, 0), (2, 0), (2, 2), (0, 2)],
                heights: vec![9, 9, 9, 9, 9],
                neighbours: vec![NO_NEIGHBOUR, 3, NO_NEIGHBOUR, NO_NEIGHBOUR, NO_NEIGHBOUR],
            }],
            closings: vec![Closing {
                chain: 7,
                removed: 2,
            }],
        };
        assert_eq!(RegionBatch::decode(&b.encode()).unwrap(), b);
        assert_eq!(RegionBatch::decode_regions(&b.encode()).unwrap(), b.regions);
        // A contour listed without its closing was traced whole.
        let traced = RegionBatch {
            closings: Vec::new(),
            ..b.clone()
        };
        let back = RegionBatch::decode(&traced.encode()).unwrap();
        assert_eq!(back.closings, vec![Closing::default()]);
        assert_eq!(back.closings[0].chain, Closing::TRACED);
        assert_eq!(b.contours[0].twice_area(), 8);
        b.contours[0].validate().unwrap();
        // A straight vertex with the same neighbour on both sides is not a vertex.
        let mut bad = b.contours[0].clone();
        bad.neighbours[1] = NO_NEIGHBOUR;
        assert!(bad.validate().is_err());
        assert_eq!(b.contours[0].corners_only().points.len(), 4);
    }
}
