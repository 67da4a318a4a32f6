//! Height maps drawn as text.

use tessera_artifacts::{CellRect, SpanField};

/// A height map drawn as text, one string per row, top row first (as it reads on the page):
/// `'0'` is a cell with no floor, a digit `d > 0` a walkable floor at height `d` (a span from
/// `d - 1` to `d`). The result is one tile whose core is the drawing, cells `(0, 0)` (bottom
/// left) to `(w - 1, h - 1)`, inside a ring of empty cells one wide.
///
/// Panics on rows of different lengths or a character that is not a digit: a fixture is
/// wrong, not an input.
pub fn field(drawing: &[&str]) -> SpanField {
    let h = drawing.len();
    let w = drawing.first().map_or(0, |r| r.len());
    let mut rows = vec![vec![0u32; w + 2]; h + 2];
    for (r, line) in drawing.iter().enumerate() {
        assert_eq!(line.len(), w, "row {r} of the drawing has another length");
        for (c, ch) in line.chars().enumerate() {
            let z = ch
                .to_digit(10)
                .unwrap_or_else(|| panic!("{ch:?} in row {r} of the drawing is not a digit"));
            rows[h - r][c + 1] = z;
        }
    }
    let refs: Vec<&[u32]> = rows.iter().map(|r| r.as_slice()).collect();
    let rect = CellRect {
        x0: -1,
        y0: -1,
        width: w as u32 + 2,
        height: h as u32 + 2,
    };
    let core = CellRect {
        x0: 0,
        y0: 0,
        width: w as u32,
        height: h as u32,
    };
    SpanField::from_floors(rect, core, &refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_row_of_the_drawing_is_the_highest_y() {
        let f = field(&["10", "02"]);
        assert_eq!(f.core.width, 2);
        assert_eq!(f.core.height, 2);
        // Bottom row "02": (0, 0) empty, (1, 0) at height 2.
        assert!(f.column(0, 0).is_empty());
        assert_eq!(f.column(1, 0)[0].zmax, 2);
        // Top row "10": (0, 1) at height 1.
        assert_eq!(f.column(0, 1)[0].zmax, 1);
        assert!(f.column(1, 1).is_empty());
        // The ring is empty.
        assert!(f.column(-1, -1).is_empty() && f.column(2, 2).is_empty());
        f.validate().unwrap();
    }
}
