//! Stair links (seed 000, 5.2.2): two polygons of different regions are linked when one edge
//! of each faces the other across a small plan gap: the edges' ends are within `r` of each
//! other in plan (the first end of one near the second end of the other, as facing edges run
//! opposite ways) and within the climb in height. Only edges no portal may cross are
//! candidates (walls, ledges, steps out of reach); a pair that is out of reach stays apart by
//! the height test.
//!
//! Out of core: each candidate edge is sorted twice by the grid cell (of size `r`) of its
//! first and of its last end; a sweep over the sorted cells keeps three rows of last ends and
//! matches every first end against the 3 x 3 cells around it. Memory: three rows of edges.

use std::collections::VecDeque;
use std::io;

use bytemuck::{Pod, Zeroable};
use tessera_spill::Sorter;

use crate::assemble::{tick_record, Report};
use crate::offmesh::STAIR;
use crate::BuildError;

/// A link between two polygons (global indices, in the order regions were added): `(from,
/// to, a, b, code)`. A stair link (`code` [`STAIR`]): the crossing segment `a`..`b` on the
/// `from` side in grid units (x, y in cells, z in voxels). An off-mesh link: `a` and `b`
/// zero, `code` its entry in the snapped table and direction ([`crate::offmesh::decode`]).
pub(crate) type GridLink = (u32, u32, [i32; 3], [i32; 3], u32);

/// A link found over one edge of its source polygon: `(from, to, edge, a, b)`.
type FoundLink = (u32, u32, u32, [i32; 3], [i32; 3]);

/// Pass 1: the caller's links (stair and off-mesh) and the stair links found by `stairs`
/// (their candidates sorted on `threads` threads), sorted by source polygon (reachability
/// looks links up that way), duplicates dropped; every polygon index checked against the
/// `polygons` added.
pub(crate) fn gather_links(
    mut links: Vec<GridLink>,
    stairs: Option<StairLinks>,
    polygons: u32,
    threads: usize,
    report: &mut Report,
) -> Result<Vec<GridLink>, BuildError> {
    if let Some(stairs) = stairs {
        links.extend(stairs.finish(threads, report)?);
    }
    links.sort_by_key(|l| (l.0, l.1, l.2, l.3, l.4));
    links.dedup();
    for (i, l) in links.iter().enumerate() {
        if l.0 >= polygons || l.1 >= polygons {
            return Err(BuildError::Link { link: i });
        }
    }
    Ok(links)
}

/// A candidate edge under one of its ends' cells.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Pod, Zeroable)]
pub(crate) struct GapEdge {
    /// Cell of the end this record is filed under: `[y, x]`.
    pub cell: [i32; 2],
    /// 0: filed under its first end; 1: under its last end.
    pub role: u32,
    pub edge: u32,
    pub owner: u32,
    pub region: u32,
    /// First and last end, grid units (x, y in cells, z in voxels).
    pub a: [i32; 3],
    pub b: [i32; 3],
}

/// Collects candidate edges, then finds the links.
pub(crate) struct StairLinks {
    /// Plan distance [cells] and height difference [voxels] allowed between facing ends.
    r: i64,
    climb: i32,
    sorted: Sorter<GapEdge>,
}

impl StairLinks {
    pub(crate) fn new(dir: &std::path::Path, memory: usize, r: f64, climb: u32) -> StairLinks {
        StairLinks {
            r: r.floor().max(0.0) as i64,
            climb: climb as i32,
            sorted: Sorter::new(dir, "gaps", memory),
        }
    }

    fn cell(&self, p: [i32; 3]) -> [i32; 2] {
        let s = self.r.max(1);
        [
            (p[1] as i64).div_euclid(s) as i32,
            (p[0] as i64).div_euclid(s) as i32,
        ]
    }

    /// A candidate edge `a -> b` of polygon `owner` in `region`.
    pub(crate) fn add(
        &mut self,
        edge: u32,
        owner: u32,
        region: u32,
        a: [i32; 3],
        b: [i32; 3],
    ) -> io::Result<()> {
        if self.r <= 0 {
            return Ok(());
        }
        let rec = GapEdge {
            cell: self.cell(a),
            role: 0,
            edge,
            owner,
            region,
            a,
            b,
        };
        self.sorted.push(rec)?;
        self.sorted.push(GapEdge {
            cell: self.cell(b),
            role: 1,
            ..rec
        })
    }

    /// The links, both directions: `(from polygon, to polygon, crossing segment on the from
    /// side)`, one per ordered polygon pair (the edge with the smallest index), sorted. The
    /// candidates, when they fit in memory, are sorted on `threads` threads.
    pub(crate) fn finish(
        self,
        threads: usize,
        report: &mut Report,
    ) -> Result<Vec<GridLink>, BuildError> {
        let (r, climb) = (self.r, self.climb);
        let mut found: Vec<FoundLink> = Vec::new();
        if r <= 0 {
            return Ok(Vec::new());
        }
        let near = |p: [i32; 3], q: [i32; 3]| {
            let (dx, dy) = ((p[0] - q[0]) as i64, (p[1] - q[1]) as i64);
            dx * dx + dy * dy < r * r && (p[2] - q[2]).abs() <= climb
        };
        // Rows of records in order, each with whether it has been matched; a row is matched
        // once the rows on both sides of it are loaded.
        type Rows = VecDeque<(i32, Vec<GapEdge>, bool)>;
        let mut rows: Rows = VecDeque::new();
        let mut match_row = |rows: &Rows, y: i32| {
            let Some((_, row, _)) = rows.iter().find(|(ry, _, _)| *ry == y) else {
                return;
            };
            // The rows around (this one included), each sorted by cell, with a cursor at the
            // first record of the three columns round the record matched: the records of a
            // row come in column order, so the cursors only move on.
            let mut around: [(&[GapEdge], usize); 3] = [(&[], 0); 3];
            for (slot, (_, other, _)) in around
                .iter_mut()
                .zip(rows.iter().filter(|(ry, _, _)| (ry - y).abs() <= 1))
            {
                *slot = (other, 0);
            }
            for e in row.iter().filter(|e| e.role == 0) {
                for (other, lo) in around.iter_mut() {
                    while other.get(*lo).is_some_and(|f| f.cell[1] < e.cell[1] - 1) {
                        *lo += 1;
                    }
                    for f in other[*lo..]
                        .iter()
                        .take_while(|f| f.cell[1] <= e.cell[1] + 1)
                    {
                        if f.role == 1 && f.region != e.region && near(e.a, f.b) && near(e.b, f.a) {
                            found.push((e.owner, f.owner, e.edge, e.a, e.b));
                        }
                    }
                }
            }
        };
        let mut sorted = self.sorted.finish_on(threads)?;
        let mut records = 0;
        loop {
            tick_record(report, &mut records, None)?;
            let rec = sorted.next_record()?;
            let y = rec.map(|r| r.cell[0]);
            if y.is_none() || rows.back().is_none_or(|(ry, _, _)| Some(*ry) != y) {
                // A new row (or the end): rows two or more before it have both neighbours.
                let ready: Vec<i32> = rows
                    .iter()
                    .filter(|(ry, _, done)| !done && y.is_none_or(|y| *ry < y - 1))
                    .map(|(ry, _, _)| *ry)
                    .collect();
                for ry in ready {
                    match_row(&rows, ry);
                    if let Some(r) = rows.iter_mut().find(|(y2, _, _)| *y2 == ry) {
                        r.2 = true;
                    }
                }
                let Some(y) = y else { break };
                while rows.front().is_some_and(|(ry, _, _)| *ry < y - 2) {
                    rows.pop_front();
                }
                rows.push_back((y, Vec::new(), false));
            }
            rows.back_mut().unwrap().1.push(rec.unwrap());
        }
        // One link per ordered pair of polygons: the one over the smallest edge.
        found.sort_unstable();
        found.dedup_by_key(|l| (l.0, l.1));
        Ok(found
            .into_iter()
            .map(|(from, to, _, a, b)| (from, to, a, b, STAIR))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_finds_what_comparing_every_pair_finds() {
        // Short edges scattered over a 60 x 60 cell field; small runs force spilling.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: i32| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % n as u64) as i32
        };
        let mut edges = Vec::new();
        for i in 0..3000u32 {
            let a = [next(60), next(60), next(6)];
            let b = [a[0] + next(5) - 2, a[1] + next(5) - 2, a[2] + next(3) - 1];
            edges.push((i, i / 2, i % 7, a, b));
        }
        // Spilled in small runs, or sorted in memory on one thread or two.
        for (r, memory, threads) in [
            (1.0, 1 << 10, 1),
            (2.0, 1 << 10, 1),
            (3.5, 1 << 10, 1),
            (2.0, 1 << 24, 1),
            (3.5, 1 << 24, 2),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let mut s = StairLinks::new(dir.path(), memory, r, 1);
            for &(e, owner, region, a, b) in &edges {
                s.add(e, owner, region, a, b).unwrap();
            }
            let got = s
                .finish(threads, &mut |_| std::ops::ControlFlow::Continue(()))
                .unwrap();
            let ri = r.floor() as i64;
            let near = |p: [i32; 3], q: [i32; 3]| {
                let (dx, dy) = ((p[0] - q[0]) as i64, (p[1] - q[1]) as i64);
                dx * dx + dy * dy < ri * ri && (p[2] - q[2]).abs() <= 1
            };
            let mut want = Vec::new();
            for e in &edges {
                for f in &edges {
                    if e.2 != f.2 && near(e.3, f.4) && near(e.4, f.3) {
                        want.push((e.1, f.1, e.0, e.3, e.4));
                    }
                }
            }
            want.sort_unstable();
            want.dedup_by_key(|l| (l.0, l.1));
            let want: Vec<_> = want
                .into_iter()
                .map(|(a, b, _, p, q)| (a, b, p, q, STAIR))
                .collect();
            assert!(!want.is_empty());
            assert_eq!(got, want, "r {r}");
        }
    }
}
