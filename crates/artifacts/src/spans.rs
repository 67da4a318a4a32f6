//! The output of voxelization: per grid column, its solid spans.

use crate::codec::{self, Reader, Writer};
use crate::{invalid, ArtifactError, CellRect};

/// A vertical run of solid voxels in one column, in voxel units above the grid corner:
/// solid from `zmin` up to `zmax`. `zmax` is the potential floor, the next span's `zmin` the
/// ceiling above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub zmin: u32,
    pub zmax: u32,
    /// An agent can stand on top of this span (after slope, climb, clearance and erosion).
    pub walkable: bool,
    /// The area of the surface that decides its top: 0 (`default`) or a `[[areas]]` rule's
    /// id, below [`MAX_AREA_ID`] + 1. Regions never join spans of two areas.
    pub area: u8,
}

impl Span {
    /// Its walkable flag and area in one byte, as encodings store them: bit 0 walkable, the
    /// rest the area.
    pub fn flags_of(walkable: bool, area: u8) -> u8 {
        walkable as u8 | area << 1
    }

    /// Takes its walkable flag and area from `flags` ([`Span::flags_of`]); an area above
    /// [`MAX_AREA_ID`] is refused.
    pub fn set_flags(&mut self, flags: u8) -> Result<(), ArtifactError> {
        let area = flags >> 1;
        if area > MAX_AREA_ID {
            return Err(invalid("span", format!("area {area} above {MAX_AREA_ID}")));
        }
        (self.walkable, self.area) = (flags & 1 == 1, area);
        Ok(())
    }
}

/// The largest area id: 63 rules besides `default` (0).
pub const MAX_AREA_ID: u8 = 63;

/// The spans of a rectangle of columns, stored column by column (compressed sparse rows):
/// column `i` (row-major in `rect`) holds `spans[column_start[i]..column_start[i + 1]]`, sorted
/// bottom-up and disjoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanField {
    /// The columns stored.
    pub rect: CellRect,
    /// The columns this field is authoritative for (a tile's core). The others are context.
    pub core: CellRect,
    pub column_start: Vec<u32>,
    pub spans: Vec<Span>,
}

const MAGIC: &[u8; 8] = b"TSSPANS\0";
const VERSION: u32 = 2;

impl SpanField {
    /// An empty field over `rect`.
    pub fn empty(rect: CellRect, core: CellRect) -> SpanField {
        SpanField {
            rect,
            core,
            column_start: vec![0; rect.area() + 1],
            spans: Vec::new(),
        }
    }

    /// A field of single walkable spans from a height map, for tests and tools:
    /// `floors[row][col]` is the floor (`zmax`) of column `(rect.x0 + col, rect.y0 + row)`,
    /// 0 for an empty column. Rows go up in y.
    pub fn from_floors(rect: CellRect, core: CellRect, floors: &[&[u32]]) -> SpanField {
        assert_eq!(floors.len(), rect.height as usize);
        let mut f = SpanField::empty(rect, core);
        f.column_start.clear();
        f.column_start.push(0);
        for row in floors {
            assert_eq!(row.len(), rect.width as usize);
            for &z in row.iter() {
                if z > 0 {
                    f.spans.push(Span {
                        zmin: z - 1,
                        zmax: z,
                        walkable: true,
                        area: 0,
                    });
                }
                f.column_start.push(f.spans.len() as u32);
            }
        }
        f
    }

    /// A copy of the columns of `rect` (which must lie inside this field) whose authoritative
    /// part is `core`.
    pub fn crop(&self, rect: CellRect, core: CellRect) -> SpanField {
        let mut out = SpanField::empty(rect, core);
        self.crop_into(&mut out, rect, core);
        out
    }

    /// [`SpanField::crop`] into `out`, whose buffers are reused.
    pub fn crop_into(&self, out: &mut SpanField, rect: CellRect, core: CellRect) {
        debug_assert!(self.rect.contains_rect(&rect));
        out.rect = rect;
        out.core = core;
        out.column_start.clear();
        out.column_start.push(0);
        out.spans.clear();
        for y in rect.y0..rect.y1() {
            // A row of `rect` is a run of consecutive columns of this field.
            let first = self.rect.index(rect.x0, y);
            let (a, b) = (
                self.column_start[first] as usize,
                self.column_start[first + rect.width as usize] as usize,
            );
            let base = out.spans.len() as u32;
            out.spans.extend_from_slice(&self.spans[a..b]);
            out.column_start.extend(
                self.column_start[first + 1..=first + rect.width as usize]
                    .iter()
                    .map(|&s| s - a as u32 + base),
            );
        }
    }

    /// The spans of global column `(x, y)`, which must lie in `rect`.
    #[inline]
    pub fn column(&self, x: i32, y: i32) -> &[Span] {
        let i = self.rect.index(x, y);
        &self.spans[self.column_start[i] as usize..self.column_start[i + 1] as usize]
    }

    /// The spans of column `i` (row-major index in `rect`).
    #[inline]
    pub fn column_at(&self, i: usize) -> &[Span] {
        &self.spans[self.column_start[i] as usize..self.column_start[i + 1] as usize]
    }

    /// (spans, walkable spans) over the core columns only, so that sums over tiles do not
    /// depend on the tiling.
    pub fn core_counts(&self) -> (u64, u64) {
        let mut spans = 0;
        let mut walkable = 0;
        for y in self.core.y0..self.core.y1() {
            for x in self.core.x0..self.core.x1() {
                let c = self.column(x, y);
                spans += c.len() as u64;
                walkable += c.iter().filter(|s| s.walkable).count() as u64;
            }
        }
        (spans, walkable)
    }

    /// Bytes the buffers have room for.
    pub fn capacity_bytes(&self) -> usize {
        self.column_start.capacity() * 4 + self.spans.capacity() * std::mem::size_of::<Span>()
    }

    /// Bytes held in memory.
    pub fn byte_size(&self) -> usize {
        self.column_start.len() * 4 + self.spans.len() * std::mem::size_of::<Span>()
    }

    /// Checks every invariant: shapes agree, the core lies in the rect, columns are sorted,
    /// disjoint and non-empty spans.
    pub fn validate(&self) -> Result<(), ArtifactError> {
        const A: &str = "span field";
        if self.column_start.len() != self.rect.area() + 1 {
            return Err(invalid(A, "column index does not match the rectangle"));
        }
        if !self.rect.contains_rect(&self.core) {
            return Err(invalid(A, "core lies outside the stored rectangle"));
        }
        if self.column_start[0] != 0
            || *self.column_start.last().unwrap() as usize != self.spans.len()
        {
            return Err(invalid(A, "column index does not cover the spans"));
        }
        for i in 0..self.rect.area() {
            if self.column_start[i] > self.column_start[i + 1] {
                return Err(invalid(A, format!("column {i} has a negative length")));
            }
            let col = self.column_at(i);
            for (k, s) in col.iter().enumerate() {
                if s.zmin >= s.zmax {
                    return Err(invalid(A, format!("column {i}: empty span {s:?}")));
                }
                if k > 0 && col[k - 1].zmax >= s.zmin {
                    return Err(invalid(A, format!("column {i}: spans overlap or touch")));
                }
            }
        }
        Ok(())
    }

    /// The sealed byte encoding (see [`codec`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// [`SpanField::encode`] into `out` (its allocation reused).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let size = 2 * 16 + 8 + self.rect.area() * 4 + self.spans.len() * 9;
        let mut w = Writer::sealed_in(std::mem::take(out), size);
        for r in [self.rect, self.core] {
            w.i32(r.x0);
            w.i32(r.y0);
            w.u32(r.width);
            w.u32(r.height);
        }
        w.u64(self.spans.len() as u64);
        // Column lengths rather than offsets: small numbers, and they compress well.
        for c in self.column_start.windows(2) {
            w.u32(c[1] - c[0]);
        }
        // The spans, 9 bytes each (floor, top, walkable flag and area in one byte), written
        // into room made once.
        let start = w.bytes.len();
        w.bytes.resize(start + self.spans.len() * 9, 0);
        for (s, b) in self.spans.iter().zip(w.bytes[start..].chunks_exact_mut(9)) {
            b[0..4].copy_from_slice(&s.zmin.to_le_bytes());
            b[4..8].copy_from_slice(&s.zmax.to_le_bytes());
            b[8] = Span::flags_of(s.walkable, s.area);
        }
        *out = w.seal(MAGIC, VERSION);
    }

    /// Decodes and validates [`SpanField::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<SpanField, ArtifactError> {
        const A: &str = "span field";
        let payload = codec::unseal(bytes, MAGIC, VERSION, A)?;
        let mut r = Reader::new(payload, A);
        let mut rects = [CellRect {
            x0: 0,
            y0: 0,
            width: 0,
            height: 0,
        }; 2];
        for rect in &mut rects {
            *rect = CellRect {
                x0: r.i32()?,
                y0: r.i32()?,
                width: r.u32()?,
                height: r.u32()?,
            };
        }
        let [rect, core] = rects;
        let span_count = r.u64()? as usize;
        let area = rect.area();
        // Refuse sizes the payload cannot hold before allocating for them.
        if area
            .saturating_mul(4)
            .saturating_add(span_count.saturating_mul(9))
            != r.remaining()
        {
            return Err(invalid(A, "declared sizes do not match the payload"));
        }
        let column_start = r.column_starts(area, span_count)?;
        let mut spans = Vec::with_capacity(span_count);
        for _ in 0..span_count {
            let mut span = Span {
                zmin: r.u32()?,
                zmax: r.u32()?,
                walkable: false,
                area: 0,
            };
            span.set_flags(r.u8()?)
                .map_err(|e| invalid(A, e.to_string()))?;
            spans.push(span);
        }
        let field = SpanField {
            rect,
            core,
            column_start,
            spans,
        };
        field.validate()?;
        Ok(field)
    }
}

/// A tile's rasterized field (before any filter) as each agent of a group rasterized together
/// sees it: the spans once, with the first agent's tops, then each other agent's flag bytes
/// ([`Span::flags_of`]), one per span. Written by the first agent's voxelize stage, read by
/// the others' instead of rasterizing again.
pub struct RasterRecord;

impl RasterRecord {
    /// Encodes `field` (the first agent's tops) and `others` (each other agent's flags, one
    /// byte per span of `field`) into `out` (its allocation reused): the field's encoding, the
    /// flags, then the field encoding's length (u64) and the number of other agents (u32).
    pub fn encode_into(field: &SpanField, others: &[Vec<u8>], out: &mut Vec<u8>) {
        field.encode_into(out);
        let len = out.len() as u64;
        for flags in others {
            assert_eq!(flags.len(), field.spans.len(), "a flag byte per span");
            out.extend_from_slice(flags);
        }
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(others.len() as u32).to_le_bytes());
    }

    /// The field as agent `agent` of the group sees it (0: the first).
    pub fn decode(bytes: &[u8], agent: usize) -> Result<SpanField, ArtifactError> {
        const A: &str = "rasterized field";
        let short = || invalid(A, "shorter than its trailer");
        let (body, trailer) = bytes.split_last_chunk::<12>().ok_or_else(short)?;
        let len = u64::from_le_bytes(trailer[..8].try_into().expect("8 bytes"));
        let others = u32::from_le_bytes(trailer[8..].try_into().expect("4 bytes")) as usize;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= body.len())
            .ok_or_else(|| invalid(A, "field length"))?;
        let (encoded, flags) = body.split_at(len);
        let mut field = SpanField::decode(encoded)?;
        let n = field.spans.len();
        if others.checked_mul(n) != Some(flags.len()) {
            return Err(invalid(A, "declared sizes do not match the payload"));
        }
        if agent > others {
            return Err(invalid(A, format!("agent {agent} of {}", others + 1)));
        }
        if agent > 0 {
            let flags = &flags[(agent - 1) * n..agent * n];
            for (span, &f) in field.spans.iter_mut().zip(flags) {
                span.set_flags(f)?;
            }
        }
        Ok(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SpanField {
        let rect = CellRect {
            x0: -1,
            y0: -1,
            width: 3,
            height: 2,
        };
        let core = CellRect {
            x0: 0,
            y0: 0,
            width: 1,
            height: 1,
        };
        let mut f = SpanField::empty(rect, core);
        f.spans = vec![
            Span {
                zmin: 0,
                zmax: 3,
                walkable: true,
                area: 0,
            },
            Span {
                zmin: 5,
                zmax: 9,
                walkable: false,
                area: 63,
            },
            Span {
                zmin: 1,
                zmax: 2,
                walkable: true,
                area: 0,
            },
        ];
        f.column_start = vec![0, 0, 0, 0, 0, 2, 3];
        f
    }

    #[test]
    fn round_trip() {
        let f = sample();
        f.validate().unwrap();
        assert_eq!(SpanField::decode(&f.encode()).unwrap(), f);
        assert_eq!(f.core_counts(), (2, 1));
    }

    #[test]
    fn broken_invariants_are_refused() {
        let mut f = sample();
        f.spans[1].zmin = 3; // touches the span below
        assert!(f.validate().is_err());
        let mut bytes = sample().encode();
        let n = bytes.len();
        bytes[n - 1] = 1 | 64 << 1; // area 64, with a recomputed checksum below
        let payload = bytes[codec::HEADER_LEN..].to_vec();
        let resealed = codec::seal(MAGIC, VERSION, &payload);
        assert!(SpanField::decode(&resealed).is_err());
    }

    #[test]
    fn a_raster_record_gives_each_agent_its_tops() {
        let field = sample();
        let n = field.spans.len();
        let others = vec![vec![Span::flags_of(true, 2); n], vec![0u8; n]];
        let mut bytes = Vec::new();
        RasterRecord::encode_into(&field, &others, &mut bytes);
        assert_eq!(RasterRecord::decode(&bytes, 0).unwrap(), field);
        let second = RasterRecord::decode(&bytes, 1).unwrap();
        assert!(second.spans.iter().all(|s| s.walkable && s.area == 2));
        assert_eq!(second.column_start, field.column_start);
        let third = RasterRecord::decode(&bytes, 2).unwrap();
        assert!(third.spans.iter().all(|s| !s.walkable && s.area == 0));
        assert!(RasterRecord::decode(&bytes, 3).is_err());
        assert!(RasterRecord::decode(&bytes[..bytes.len() - 1], 1).is_err());
        // A flag byte of an area out of range.
        let mut bad = bytes.clone();
        let at = bad.len() - 13;
        bad[at] = 0xff;
        assert!(RasterRecord::decode(&bad, 2).is_err());
        assert!(RasterRecord::decode(&bytes[..5], 0).is_err());
    }
}
