//! The walkable floors of a tile's core: what height detail reads of a span field, a fraction
//! of its size, written by the voxelize stage beside the field itself.

use crate::codec::{self, Reader, Writer};
use crate::{invalid, ArtifactError, CellRect, SpanField};

/// For every column of a tile's core, the floor heights (`zmax`, voxels) of its walkable
/// spans, bottom-up: column `i` (row-major in `core`) holds `floors[start[i]..start[i + 1]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileFloors {
    pub core: CellRect,
    pub start: Vec<u32>,
    pub floors: Vec<u32>,
}

const MAGIC: &[u8; 8] = b"TSFLOORS";
const VERSION: u32 = 1;

impl TileFloors {
    /// The walkable floors of `field`'s core.
    pub fn of(field: &SpanField) -> TileFloors {
        let core = field.core;
        let mut start = Vec::with_capacity(core.area() + 1);
        let mut floors = Vec::new();
        for y in core.y0..core.y1() {
            for x in core.x0..core.x1() {
                start.push(floors.len() as u32);
                floors.extend(
                    field
                        .column(x, y)
                        .iter()
                        .filter(|s| s.walkable)
                        .map(|s| s.zmax),
                );
            }
        }
        start.push(floors.len() as u32);
        TileFloors {
            core,
            start,
            floors,
        }
    }

    /// The floors of global column `(x, y)`; none outside the core.
    #[inline]
    pub fn at(&self, x: i32, y: i32) -> &[u32] {
        if !self.core.contains(x, y) {
            return &[];
        }
        let i = self.core.index(x, y);
        &self.floors[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Bytes held in memory.
    pub fn byte_size(&self) -> usize {
        (self.start.len() + self.floors.len()) * 4
    }

    /// Checks that the column index covers the floors and that each column rises.
    pub fn validate(&self) -> Result<(), ArtifactError> {
        const A: &str = "tile floors";
        if self.start.len() != self.core.area() + 1
            || self.start[0] != 0
            || *self.start.last().unwrap() as usize != self.floors.len()
        {
            return Err(invalid(A, "column index does not cover the floors"));
        }
        for (i, c) in self.start.windows(2).enumerate() {
            if c[0] > c[1] {
                return Err(invalid(A, format!("column {i} has a negative length")));
            }
            if c[1] - c[0] > 1
                && self.floors[c[0] as usize..c[1] as usize]
                    .windows(2)
                    .any(|w| w[0] >= w[1])
            {
                return Err(invalid(A, format!("column {i}: floors do not rise")));
            }
        }
        Ok(())
    }

    /// The sealed byte encoding (see [`codec`]): the core, the floor count, column lengths,
    /// then the floors.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::sealed(16 + 8 + (self.core.area() + self.floors.len()) * 4);
        write_head(&mut w, self.core, self.floors.len());
        // Column lengths rather than offsets: small numbers, and they compress well.
        for i in 0..self.core.area() {
            w.u32(self.start[i + 1] - self.start[i]);
        }
        for &z in &self.floors {
            w.u32(z);
        }
        w.seal(MAGIC, VERSION)
    }

    /// The encoding of `TileFloors::of(field)`, written straight from the field into `out`
    /// (its allocation reused) in one pass over the core: column lengths as they come, the
    /// floors gathered in `floors` (reused too) and appended after them.
    pub fn encode_of(field: &SpanField, out: &mut Vec<u8>, floors: &mut Vec<u32>) {
        let core = field.core;
        floors.clear();
        let mut w = Writer::sealed_in(std::mem::take(out), 16 + 8 + core.area() * 8);
        write_head(&mut w, core, 0);
        for y in core.y0..core.y1() {
            let row = field.rect.index(core.x0, y);
            for i in row..row + core.width as usize {
                let before = floors.len();
                let col = &field.spans
                    [field.column_start[i] as usize..field.column_start[i + 1] as usize];
                floors.extend(col.iter().filter(|s| s.walkable).map(|s| s.zmax));
                w.u32((floors.len() - before) as u32);
            }
        }
        for &z in floors.iter() {
            w.u32(z);
        }
        // The floor count, now known, in the head.
        let at = codec::HEADER_LEN + 16;
        w.bytes[at..at + 8].copy_from_slice(&(floors.len() as u64).to_le_bytes());
        *out = w.seal(MAGIC, VERSION);
    }

    /// Decodes and validates [`TileFloors::encode`] output.
    pub fn decode(bytes: &[u8]) -> Result<TileFloors, ArtifactError> {
        const A: &str = "tile floors";
        let payload = codec::unseal(bytes, MAGIC, VERSION, A)?;
        let mut r = Reader::new(payload, A);
        let core = CellRect {
            x0: r.i32()?,
            y0: r.i32()?,
            width: r.u32()?,
            height: r.u32()?,
        };
        let count = r.u64()? as usize;
        let area = core.area();
        // Refuse sizes the payload cannot hold before allocating for them.
        if area.saturating_add(count).saturating_mul(4) != r.remaining() {
            return Err(invalid(A, "declared sizes do not match the payload"));
        }
        let start = r.column_starts(area, count)?;
        let floors = r.u32s(count)?;
        let out = TileFloors {
            core,
            start,
            floors,
        };
        out.validate()?;
        Ok(out)
    }
}

/// The core and the floor count, ahead of the columns.
fn write_head(w: &mut Writer, core: CellRect, floors: usize) {
    w.i32(core.x0);
    w.i32(core.y0);
    w.u32(core.width);
    w.u32(core.height);
    w.u64(floors as u64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Span;

    fn field() -> SpanField {
        let rect = CellRect {
            x0: 9,
            y0: -3,
            width: 4,
            height: 3,
        };
        let core = CellRect {
            x0: 10,
            y0: -2,
            width: 2,
            height: 1,
        };
        let mut f = SpanField::empty(rect, core);
        // Column (10, -2): a walkable floor under an unwalkable one and a walkable roof.
        let i = rect.index(10, -2);
        let spans = [(0, 4, true), (30, 31, false), (50, 55, true)];
        for (zmin, zmax, walkable) in spans {
            f.spans.push(Span {
                zmin,
                zmax,
                walkable,
                area: 0,
            });
        }
        for c in f.column_start.iter_mut().skip(i + 1) {
            *c = spans.len() as u32;
        }
        f.validate().unwrap();
        f
    }

    #[test]
    fn floors_keep_the_walkable_tops_of_the_core_and_round_trip() {
        let floors = TileFloors::of(&field());
        assert_eq!(floors.at(10, -2), &[4, 55]);
        assert_eq!(floors.at(11, -2), &[] as &[u32]);
        assert_eq!(floors.at(9, -2), &[] as &[u32], "outside the core");
        let bytes = floors.encode();
        assert_eq!(TileFloors::decode(&bytes).unwrap(), floors);
        let mut direct = vec![1, 2, 3];
        TileFloors::encode_of(&field(), &mut direct, &mut vec![7]);
        assert_eq!(direct, bytes);
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(TileFloors::decode(&bad).is_err());
    }
}
