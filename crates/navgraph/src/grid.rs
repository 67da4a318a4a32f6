//! Pass 5: the lookup grid of the file ([`tessera_navmesh::Grid`]): cells about twice the mean
//! polygon size, at most about four per polygon; each kept polygon listed in every cell its
//! plan bounding box meets, by an external sort of (cell, polygon) pairs.

use std::path::Path;

use tessera_spill::{Sorter, Spill, SpillWriter};

use crate::assemble::{say, tick, tick_record, Report, Spilled, Step};
use crate::reach::Bits;
use crate::renumber::Kept;
use crate::BuildError;

/// The grid, its tables in spill files.
pub(crate) struct GridColumns {
    pub min: [f32; 2],
    pub cell: f32,
    pub width: u32,
    pub height: u32,
    /// `items[start[c] .. start[c + 1]]` are the polygons in cell `c`.
    pub start: Spill<u32>,
    pub items: Spill<u32>,
}

impl GridColumns {
    pub fn paths(&self) -> [&Path; 2] {
        [self.start.path(), self.items.path()]
    }
}

/// Pass 5 (see the module documentation) over the kept polygons' boxes.
pub(crate) fn build_grid(
    input: &Spilled,
    keep: &Bits,
    kept: &Kept,
    report: &mut Report,
) -> Result<GridColumns, BuildError> {
    let (bounds_min, bounds_max) = (kept.bounds_min, kept.bounds_max);
    let mean = if kept.polygons == 0 {
        1.0
    } else {
        kept.box_size_sum / kept.polygons as f64
    };
    let (ex, ey) = (
        (bounds_max[0] - bounds_min[0]).max(0.0),
        (bounds_max[1] - bounds_min[1]).max(0.0),
    );
    let mut cell = (2.0 * mean).max(1e-3) as f32;
    let limit = 4 * kept.polygons + 16;
    loop {
        let w = (ex / cell).floor() as u64 + 1;
        let h = (ey / cell).floor() as u64 + 1;
        if w * h <= limit {
            break;
        }
        cell *= 1.5;
    }
    let width = (ex / cell).floor() as u32 + 1;
    let height = (ey / cell).floor() as u32 + 1;
    let cell_of = |v: f32, o: f32, n: u32| (((v - o) / cell).floor().max(0.0) as u32).min(n - 1);
    let mut items = Sorter::<[u32; 2]>::new(&input.dir, "grid", input.memory / 2);
    {
        let mut b_it = input.boxes.iter()?;
        let mut id = 0u32;
        for p in 0..input.polygons() {
            tick(report, p)?;
            let b = b_it.next_record()?.expect("counted");
            if !keep.get(p as usize) {
                continue;
            }
            let (x0, y0) = (
                cell_of(b[0], bounds_min[0], width),
                cell_of(b[1], bounds_min[1], height),
            );
            let (x1, y1) = (
                cell_of(b[2], bounds_min[0], width),
                cell_of(b[3], bounds_min[1], height),
            );
            for y in y0..=y1 {
                for x in x0..=x1 {
                    items.push([y * width + x, id])?;
                }
            }
            id += 1;
        }
        say(report, Step::Done(u64::from(input.polygons())))?;
    }
    let mut g_start = SpillWriter::<u32>::create(input.scratch("grid_start"))?;
    let mut g_items = SpillWriter::<u32>::create(input.scratch("grid_items"))?;
    let cells = width as u64 * height as u64;
    let mut next_cell = 0u64;
    let mut records = 0;
    for rec in items.finish()? {
        tick_record(report, &mut records, None)?;
        let [c, p] = rec?;
        while next_cell <= c as u64 {
            g_start.push(&(g_items.len() as u32))?;
            next_cell += 1;
        }
        g_items.push(&p)?;
        if g_items.len() > u64::from(u32::MAX) {
            // The grid's start offsets are 32-bit: refused rather than wrapped.
            return Err(BuildError::Limit {
                what: "lookup grid entries",
                limit: u64::from(u32::MAX),
                at: "the lookup grid".into(),
            });
        }
    }
    while next_cell <= cells {
        g_start.push(&(g_items.len() as u32))?;
        next_cell += 1;
    }
    Ok(GridColumns {
        min: [bounds_min[0], bounds_min[1]],
        cell,
        width,
        height,
        start: g_start.finish()?,
        items: g_items.finish()?,
    })
}
