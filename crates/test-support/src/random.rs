//! Random span fields for property tests: checks of a fast implementation against the
//! straightforward one it replaced.

use proptest::prelude::*;
use tessera_artifacts::{CellRect, Span, SpanField};

/// Fields of 3 to 11 columns a side whose core is all but the outer ring; each column holds
/// up to `max_spans` spans of 1 to 5 voxels, walkable or not, each at least `min_gap` voxels
/// above the one below (at least 1: spans of a column never touch) plus up to 8 more.
/// `min_gap` models clearance: floors of one column further apart than a level's step.
pub fn span_fields(min_gap: u32, max_spans: usize) -> impl Strategy<Value = SpanField> {
    let min_gap = min_gap.max(1);
    (3u32..12, 3u32..12).prop_flat_map(move |(w, h)| {
        proptest::collection::vec(
            proptest::collection::vec((0u32..9, 1u32..6, any::<bool>()), 0..=max_spans),
            (w * h) as usize,
        )
        .prop_map(move |columns| {
            let rect = CellRect {
                x0: -1,
                y0: -1,
                width: w,
                height: h,
            };
            let core = CellRect {
                x0: 0,
                y0: 0,
                width: w - 2,
                height: h - 2,
            };
            let mut f = SpanField::empty(rect, core);
            f.column_start.clear();
            f.column_start.push(0);
            for col in columns {
                let mut z = 0;
                for (k, (extra, len, walkable)) in col.into_iter().enumerate() {
                    let zmin = if k == 0 { extra } else { z + min_gap + extra };
                    f.spans.push(Span {
                        zmin,
                        zmax: zmin + len,
                        walkable,
                        area: 0,
                    });
                    z = zmin + len;
                }
                f.column_start.push(f.spans.len() as u32);
            }
            f
        })
    })
}
