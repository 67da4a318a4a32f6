//! Portals across region borders: every border edge of every region went to an external sort
//! by its plan endpoints; edges with the same endpoints, running opposite ways, owned by
//! different polygons and within the climb at both ends are paired, cheapest height difference
//! first (ties by edge index), each edge at most once.

use std::io;
use std::path::Path;

use bytemuck::{Pod, Zeroable};
use tessera_spill::{Sorter, Spill, SpillWriter};

use crate::assemble::{tick_record, Report};
use crate::BuildError;

/// An edge on a region's border, waiting for its partner in another region.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Pod, Zeroable)]
pub(crate) struct BorderEdge {
    /// Plan endpoints, smaller point first: `[x0, y0, x1, y1]`.
    pub key: [i32; 4],
    /// 0 when the edge runs from the smaller point, 1 when it runs towards it.
    pub dir: u32,
    /// Heights at the smaller and the larger point.
    pub h: [i32; 2],
    pub edge: u32,
    pub owner: u32,
}

/// Pass 2: matches the sorted border edges group by group (same plan endpoints) into patches
/// `[edge, polygon across]`, sorted by edge. `climb` [voxels]: the largest height difference
/// at either end of a portal.
pub(crate) fn match_border_edges(
    border: Sorter<BorderEdge>,
    climb: u32,
    dir: &Path,
    memory: usize,
    report: &mut Report,
) -> Result<Spill<[u32; 2]>, BuildError> {
    let mut patches = Sorter::<[u32; 2]>::new(dir, "patches", memory / 2);
    let mut sorted = border.finish()?;
    let mut group: Vec<BorderEdge> = Vec::new();
    let mut records = 0;
    while let Some(e) = sorted.next_record()? {
        tick_record(report, &mut records, None)?;
        if group.last().is_some_and(|g| g.key != e.key) {
            pair_group(&mut group, climb, &mut patches)?;
        }
        group.push(e);
    }
    pair_group(&mut group, climb, &mut patches)?;
    drop(sorted);
    let mut w = SpillWriter::<[u32; 2]>::create(dir.join("patches.spill"))?;
    for p in patches.finish()? {
        tick_record(report, &mut records, None)?;
        w.push(&p?)?;
    }
    Ok(w.finish()?)
}

/// Pairs the edges of one group (same plan endpoints) and empties it.
fn pair_group(
    group: &mut Vec<BorderEdge>,
    climb: u32,
    patches: &mut Sorter<[u32; 2]>,
) -> io::Result<()> {
    let mut candidates: Vec<(u32, u32, u32, usize, usize)> = Vec::new();
    for (i, e) in group.iter().enumerate() {
        for (j, f) in group.iter().enumerate() {
            if e.dir != 0 || f.dir != 1 || e.owner == f.owner {
                continue;
            }
            let d0 = (e.h[0] - f.h[0]).unsigned_abs();
            let d1 = (e.h[1] - f.h[1]).unsigned_abs();
            if d0 <= climb && d1 <= climb {
                let (lo, hi) = (e.edge.min(f.edge), e.edge.max(f.edge));
                candidates.push((d0 + d1, lo, hi, i, j));
            }
        }
    }
    candidates.sort_unstable();
    let mut used = vec![false; group.len()];
    for (_, _, _, i, j) in candidates {
        if !used[i] && !used[j] {
            used[i] = true;
            used[j] = true;
            patches.push([group[i].edge, group[j].owner])?;
            patches.push([group[j].edge, group[i].owner])?;
        }
    }
    group.clear();
    Ok(())
}
