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
//! When every candidate fit in the sorter's memory, the rows are laid out in place instead
//! (each record swapped into its row, then each row sorted by column) and matched the same
//! way, without sorting the whole and merging its parts.

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

/// Pass 1: the caller's links (stair and off-mesh) and the stair links found by `stairs`,
/// sorted by source polygon (reachability
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
    /// side)`, one per ordered polygon pair (the edge with the smallest index), sorted. Rows
    /// held in memory are matched on up to `threads` threads (the same links for any number).
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
        match self.sorted.into_memory() {
            Ok(mut edges) => match_in_memory(&mut edges, &near, threads, report, &mut found)?,
            Err(sorter) => match_sorted(sorter.finish()?, &near, report, &mut found)?,
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

/// Every candidate in memory: laid out row by row, each row's first ends then its last ends,
/// each in column order ([`by_rows`]), and the first ends of every row matched against the
/// last ends of the rows beside it; the rows in `threads` runs of about as many records, side
/// by side.
fn match_in_memory(
    edges: &mut [GapEdge],
    near: &(impl Fn([i32; 3], [i32; 3]) -> bool + Sync),
    threads: usize,
    report: &mut Report,
    found: &mut Vec<FoundLink>,
) -> Result<(), BuildError> {
    let rows = by_rows(edges, threads);
    let edges = &*edges;
    let match_rows = |ks: std::ops::Range<usize>| {
        let mut found = Vec::new();
        for k in ks {
            let Row { y, ref firsts, .. } = rows[k];
            let around: Vec<&[GapEdge]> = rows[k.saturating_sub(1)..(k + 2).min(rows.len())]
                .iter()
                .filter(|r| (r.y - y).abs() <= 1)
                .map(|r| &edges[r.lasts.clone()])
                .collect();
            match_row(edges[firsts.clone()].iter(), &around, near, &mut found);
        }
        found
    };
    // A heartbeat every so many records as each run is matched, as the sorted sweep gives.
    let mut records = 0;
    let mut matched = |run: std::ops::Range<usize>, links: Vec<FoundLink>| {
        found.extend(links);
        let n = rows[run.clone()].last().map_or(0, |r| r.lasts.end)
            - rows[run].first().map_or(0, |r| r.firsts.start);
        (0..n).try_for_each(|_| tick_record(report, &mut records, None))
    };
    let runs = runs_of(&rows, |r| r.lasts.end, threads);
    if runs.len() <= 1 {
        return matched(0..rows.len(), match_rows(0..rows.len()));
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .iter()
            .map(|run| {
                let (match_rows, run) = (&match_rows, run.clone());
                scope.spawn(move || match_rows(run))
            })
            .collect();
        runs.into_iter()
            .zip(handles)
            .try_for_each(|(run, h)| matched(run, h.join().expect("a stair-link thread panicked")))
    })
}

/// Below this many records a run of rows is not worth a thread (small in tests, so that they
/// cut their rows in runs).
const RUN: usize = if cfg!(test) { 256 } else { 1 << 14 };

/// A row of cells of the candidates laid out in memory: its `y`, and the ranges of its
/// records filed under their first ends and under their last ends, each in column order.
struct Row {
    y: i32,
    firsts: std::ops::Range<usize>,
    lasts: std::ops::Range<usize>,
}

/// Rows cut into at most `threads` runs of whole rows, each of about as many records; `ends`
/// gives each row's end, in records from the first row's start (so the last is the total).
fn runs_of<T>(
    ends: &[T],
    end: impl Fn(&T) -> usize,
    threads: usize,
) -> Vec<std::ops::Range<usize>> {
    let total = ends.last().map_or(0, &end);
    let parts = threads.min(total / RUN).max(1);
    let mut runs = Vec::with_capacity(parts);
    let mut start = 0;
    for p in 1..parts {
        let goal = total * p / parts;
        let cut = ends.partition_point(|e| end(e) <= goal).max(start);
        runs.push(start..cut);
        start = cut;
    }
    runs.push(start..ends.len());
    runs.retain(|r| !r.is_empty());
    runs
}

/// Candidates spilled to disk, read back in order: rows of records held three at a time, each
/// with whether it has been matched; a row is matched once the rows on both sides of it are
/// loaded.
fn match_sorted(
    mut sorted: tessera_spill::Sorted<GapEdge>,
    near: &impl Fn([i32; 3], [i32; 3]) -> bool,
    report: &mut Report,
    found: &mut Vec<FoundLink>,
) -> Result<(), BuildError> {
    let mut rows: VecDeque<(i32, Vec<GapEdge>, bool)> = VecDeque::new();
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
                if let Some((_, row, _)) = rows.iter().find(|(y2, _, _)| *y2 == ry) {
                    let around: Vec<&[GapEdge]> = rows
                        .iter()
                        .filter(|(y2, _, _)| (y2 - ry).abs() <= 1)
                        .map(|(_, other, _)| other.as_slice())
                        .collect();
                    match_row(row.iter().filter(|e| e.role == 0), &around, near, found);
                }
                if let Some(r) = rows.iter_mut().find(|(y2, _, _)| *y2 == ry) {
                    r.2 = true;
                }
            }
            let Some(y) = y else { return Ok(()) };
            while rows.front().is_some_and(|(ry, _, _)| *ry < y - 2) {
                rows.pop_front();
            }
            rows.push_back((y, Vec::new(), false));
        }
        rows.back_mut().unwrap().1.push(rec.unwrap());
    }
}

/// Matches every first end of `firsts` (records filed under their first ends, in column
/// order) against the last ends filed in the rows `around` (this one and those beside it,
/// each in column order; records filed under their first ends among them are passed over) in
/// the 3 x 3 cells around it: a link for each facing edge of another region whose ends are
/// `near` this edge's.
fn match_row<'a>(
    firsts: impl Iterator<Item = &'a GapEdge>,
    around: &[&[GapEdge]],
    near: &impl Fn([i32; 3], [i32; 3]) -> bool,
    found: &mut Vec<FoundLink>,
) {
    // A cursor per row at the first record of the three columns round the record matched:
    // the records of a row come in column order, so the cursors only move on.
    let mut cursors: Vec<(&[GapEdge], usize)> = around.iter().map(|&r| (r, 0)).collect();
    for e in firsts {
        for (other, lo) in cursors.iter_mut() {
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
}

/// Reorders `edges` by rows of cells, each row its records filed under their first ends
/// then those filed under their last ends, each in column order; returns the rows that hold
/// any, ascending. Rows are placed in place (a counting sort that swaps each record into its
/// row) when there are no more rows between the first and the last than records, and their
/// records sorted on up to `threads` threads; otherwise all are sorted by cell and role.
fn by_rows(edges: &mut [GapEdge], threads: usize) -> Vec<Row> {
    let Some((lo, hi)) = edges.iter().map(|e| e.cell[0]).fold(None, |m, y| match m {
        None => Some((y, y)),
        Some((lo, hi)) => Some((y.min(lo), y.max(hi))),
    }) else {
        return Vec::new();
    };
    let in_row = |e: &GapEdge| (e.role, e.cell[1]);
    let span = (i64::from(hi) - i64::from(lo) + 1) as u64;
    if span > edges.len() as u64 {
        edges.sort_unstable_by_key(|e| (e.cell[0], e.role, e.cell[1]));
    } else {
        let row = |e: &GapEdge| (e.cell[0] - lo) as usize;
        let mut start = vec![0usize; span as usize + 1];
        for e in edges.iter() {
            start[row(e) + 1] += 1;
        }
        for r in 0..span as usize {
            start[r + 1] += start[r];
        }
        // Each row's next free slot; a record taken from a slot is swapped along into its
        // own row until the one that belongs in the slot comes back.
        let mut next = start.clone();
        for r in 0..span as usize {
            while next[r] < start[r + 1] {
                let mut e = edges[next[r]];
                let mut t = row(&e);
                while t != r {
                    std::mem::swap(&mut e, &mut edges[next[t]]);
                    next[t] += 1;
                    t = row(&e);
                }
                edges[next[r]] = e;
                next[r] += 1;
            }
        }
        // Each row sorted on its own; runs of whole rows side by side.
        let sort_rows = |edges: &mut [GapEdge], rows: std::ops::Range<usize>| {
            let base = start[rows.start];
            for r in rows {
                edges[start[r] - base..start[r + 1] - base].sort_unstable_by_key(in_row);
            }
        };
        let runs = runs_of(&start[1..], |&end| end, threads);
        if let [rows] = &runs[..] {
            sort_rows(edges, rows.clone());
        } else {
            std::thread::scope(|scope| {
                let mut rest = &mut *edges;
                for rows in runs {
                    let (mine, others) =
                        std::mem::take(&mut rest).split_at_mut(start[rows.end] - start[rows.start]);
                    rest = others;
                    let sort_rows = &sort_rows;
                    scope.spawn(move || sort_rows(mine, rows));
                }
            });
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    for (i, e) in edges.iter().enumerate() {
        match rows.last_mut() {
            Some(r) if r.y == e.cell[0] => {
                if e.role == 0 {
                    r.firsts.end = i + 1;
                    r.lasts = i + 1..i + 1;
                } else {
                    r.lasts.end = i + 1;
                }
            }
            _ if e.role == 0 => rows.push(Row {
                y: e.cell[0],
                firsts: i..i + 1,
                lasts: i + 1..i + 1,
            }),
            _ => rows.push(Row {
                y: e.cell[0],
                firsts: i..i,
                lasts: i..i + 1,
            }),
        }
    }
    rows
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
        // Spilled in small runs, or all in memory (laid out by rows).
        for (r, memory) in [
            (1.0, 1 << 10),
            (2.0, 1 << 10),
            (3.5, 1 << 10),
            (2.0, 1 << 24),
            (3.5, 1 << 24),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let got = |threads: usize| {
                let mut s = StairLinks::new(dir.path(), memory, r, 1);
                for &(e, owner, region, a, b) in &edges {
                    s.add(e, owner, region, a, b).unwrap();
                }
                s.finish(threads, &mut |_| std::ops::ControlFlow::Continue(()))
                    .unwrap()
            };
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
            // In memory, rows are sorted and matched in runs on each thread.
            for threads in [1, 2, 3, 8] {
                assert_eq!(got(threads), want, "r {r}, {threads} threads");
            }
        }
    }
}
