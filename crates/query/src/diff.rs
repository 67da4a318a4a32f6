//! What changed between two navmeshes of one world (`tessera diff`): walkable surface added and
//! removed, polygons and regions added and removed, connected components that split or joined,
//! and where the changes lie.
//!
//! Both meshes are compared in world coordinates (Z up, their own origins added back: a bake
//! of an edited scene may be rebased elsewhere). Surface is compared on a plan grid of the
//! finer mesh's cell size (coarser when the world would need more than [`MAX_CELLS`]): each
//! mesh puts in each cell the height of every polygon over the cell's centre, and a height of
//! one mesh with none of the other's within the agent's climb is surface added (new) or
//! removed (old). Polygons and regions are matched by their corners' world positions (to the
//! millimetre): a polygon is kept when the other mesh has one with the same corners, a region
//! when the other has one with the same polygons. Components are related through the cells
//! where both meshes have matching surface.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::Query;

/// Grid cells the surface comparison uses at most (the cell grows past this).
pub const MAX_CELLS: u64 = 1 << 26;

/// A change's place: its plan box in world coordinates (Z up) and its area.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    pub min: [f64; 2],
    pub max: [f64; 2],
    pub added_m2: f64,
    pub removed_m2: f64,
}

/// What [`diff`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshDiff {
    /// Plan cell edge of the surface comparison (world units).
    pub cell: f64,
    pub added_m2: f64,
    pub removed_m2: f64,
    /// Polygons of the old and new mesh with no twin in the other.
    pub polygons_removed: u64,
    pub polygons_added: u64,
    /// Regions likewise.
    pub regions_removed: u64,
    pub regions_added: u64,
    /// Old components now over several new ones, and new ones over several old: `(component,
    /// the other mesh's components)`.
    pub split: Vec<(u32, Vec<u32>)>,
    pub joined: Vec<(u32, Vec<u32>)>,
    /// Connected groups of changed cells, largest first.
    pub patches: Vec<Patch>,
    /// Added and removed cells (index `y * width + x` on the grid from `origin`), for pictures.
    pub origin: [f64; 2],
    pub width: u64,
    pub added: Vec<u64>,
    pub removed: Vec<u64>,
}

/// One mesh's surface over the grid: (cell, world height, polygon) for every cell whose centre
/// lies on a polygon's surface (its detail triangles), sorted.
fn surface(
    q: &Query,
    origin: [f64; 2],
    cell: f64,
    width: u64,
    height: u64,
) -> Vec<(u64, f32, u32)> {
    let mesh = q.mesh();
    let o = q.frame().origin;
    let mut out = Vec::new();
    for poly in 0..mesh.polys.len() as u32 {
        for t in mesh.poly_triangles(poly) {
            let w = t.map(|v| [v[0] as f64 + o[0], v[1] as f64 + o[1], v[2] as f64 + o[2]]);
            let area = (w[1][0] - w[0][0]) * (w[2][1] - w[0][1])
                - (w[2][0] - w[0][0]) * (w[1][1] - w[0][1]);
            if area.abs() < 1e-12 {
                continue;
            }
            // Cells whose centre (origin + (i + 0.5) cell) lies in the triangle's box.
            let range = |k: usize, n: u64| {
                let lo = w.iter().map(|v| v[k]).fold(f64::INFINITY, f64::min);
                let hi = w.iter().map(|v| v[k]).fold(f64::NEG_INFINITY, f64::max);
                let first = ((lo - origin[k]) / cell - 0.5).ceil().max(0.0) as i64;
                let last = (((hi - origin[k]) / cell - 0.5).floor() as i64).min(n as i64 - 1);
                first..=last
            };
            for y in range(1, height) {
                let cy = origin[1] + (y as f64 + 0.5) * cell;
                for x in range(0, width) {
                    let cx = origin[0] + (x as f64 + 0.5) * cell;
                    // Barycentric weights, edges included (a centre on a shared edge counts
                    // for both sides, at the same height).
                    let b0 =
                        ((w[1][0] - cx) * (w[2][1] - cy) - (w[2][0] - cx) * (w[1][1] - cy)) / area;
                    let b1 =
                        ((w[2][0] - cx) * (w[0][1] - cy) - (w[0][0] - cx) * (w[2][1] - cy)) / area;
                    let b2 = 1.0 - b0 - b1;
                    if b0 < -1e-9 || b1 < -1e-9 || b2 < -1e-9 {
                        continue;
                    }
                    let z = b0 * w[0][2] + b1 * w[1][2] + b2 * w[2][2];
                    out.push((y as u64 * width + x as u64, z as f32, poly));
                }
            }
        }
    }
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
    out.dedup();
    out
}

/// Each polygon's key: its corners' world positions in millimetres, from the smallest.
fn polygon_keys(q: &Query) -> Vec<Vec<[i64; 3]>> {
    let o = q.frame().origin;
    (0..q.mesh().polys.len() as u32)
        .map(|poly| {
            let mut key: Vec<[i64; 3]> = q
                .poly_corners(poly)
                .iter()
                .map(|p| [0, 1, 2].map(|k| ((p[k] as f64 + o[k]) * 1000.0).round() as i64))
                .collect();
            let start = (0..key.len()).min_by_key(|&i| key[i]).unwrap_or(0);
            key.rotate_left(start);
            key
        })
        .collect()
}

/// Each region's key: its polygons' keys, sorted; the regions sorted.
fn region_keys<'k>(q: &Query, keys: &'k [Vec<[i64; 3]>]) -> Vec<Vec<&'k Vec<[i64; 3]>>> {
    let mut by: FxHashMap<u32, Vec<&'k Vec<[i64; 3]>>> = FxHashMap::default();
    for (p, k) in keys.iter().enumerate() {
        by.entry(q.mesh().polys[p].region.to_native())
            .or_default()
            .push(k);
    }
    let mut list: Vec<Vec<&Vec<[i64; 3]>>> = by
        .into_values()
        .map(|mut v| {
            v.sort();
            v
        })
        .collect();
    list.sort();
    list
}

/// How many of `a`'s items have no twin in `b`, and of `b`'s none in `a` (multisets).
fn unmatched<T: std::hash::Hash + Eq + Clone>(a: &[T], b: &[T]) -> (u64, u64) {
    let mut count: FxHashMap<&T, i64> = FxHashMap::default();
    for k in a {
        *count.entry(k).or_default() += 1;
    }
    for k in b {
        *count.entry(k).or_default() -= 1;
    }
    let only_a = count.values().filter(|&&c| c > 0).map(|&c| c as u64).sum();
    let only_b = count
        .values()
        .filter(|&&c| c < 0)
        .map(|&c| (-c) as u64)
        .sum();
    (only_a, only_b)
}

/// What changed from `old` to `new`.
pub fn diff(old: &Query, new: &Query) -> MeshDiff {
    // The grid over both meshes' plan boxes, world coordinates.
    let bounds = |q: &Query| {
        let (m, o) = (q.mesh(), q.frame().origin);
        let lo = [0, 1].map(|k| m.bounds_min[k].to_native() as f64 + o[k]);
        let hi = [0, 1].map(|k| m.bounds_max[k].to_native() as f64 + o[k]);
        (lo, hi)
    };
    let ((lo_a, hi_a), (lo_b, hi_b)) = (bounds(old), bounds(new));
    let origin = [lo_a[0].min(lo_b[0]), lo_a[1].min(lo_b[1])];
    let extent = [
        hi_a[0].max(hi_b[0]) - origin[0],
        hi_a[1].max(hi_b[1]) - origin[1],
    ];
    let mut cell = (old.frame().cell_size.min(new.frame().cell_size) as f64).max(1e-3);
    let cells = |cell: f64| {
        ((extent[0] / cell).ceil().max(1.0) as u64) * ((extent[1] / cell).ceil().max(1.0) as u64)
    };
    while cells(cell) > MAX_CELLS {
        cell *= 2.0;
    }
    let (width, height) = (
        (extent[0] / cell).ceil().max(1.0) as u64,
        (extent[1] / cell).ceil().max(1.0) as u64,
    );
    let a = surface(old, origin, cell, width, height);
    let b = surface(new, origin, cell, width, height);
    let climb = old.frame().agent_climb.max(new.frame().agent_climb);

    let mut out = MeshDiff {
        cell,
        origin,
        width,
        ..MeshDiff::default()
    };
    // Walk both sorted lists cell by cell.
    let comp = |q: &Query, poly: u32| q.mesh().polys[poly as usize].component.to_native();
    let mut links: FxHashSet<(u32, u32)> = FxHashSet::default();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let c = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.min(y.0),
            (Some(x), None) => x.0,
            (None, Some(y)) => y.0,
            (None, None) => break,
        };
        let i1 = i + a[i..].iter().take_while(|e| e.0 == c).count();
        let j1 = j + b[j..].iter().take_while(|e| e.0 == c).count();
        let (here_a, here_b) = (&a[i..i1], &b[j..j1]);
        let near = |z: f32, other: &[(u64, f32, u32)]| {
            other.iter().find(|e| (e.1 - z).abs() <= climb).map(|e| e.2)
        };
        if here_a.iter().any(|e| near(e.1, here_b).is_none()) {
            out.removed.push(c);
        }
        if here_b.iter().any(|e| near(e.1, here_a).is_none()) {
            out.added.push(c);
        }
        for e in here_a {
            if let Some(p) = near(e.1, here_b) {
                links.insert((comp(old, e.2), comp(new, p)));
            }
        }
        (i, j) = (i1, j1);
    }
    let area = cell * cell;
    out.added_m2 = out.added.len() as f64 * area;
    out.removed_m2 = out.removed.len() as f64 * area;

    let (ka, kb) = (polygon_keys(old), polygon_keys(new));
    (out.polygons_removed, out.polygons_added) = unmatched(&ka, &kb);
    let (ra, rb) = (region_keys(old, &ka), region_keys(new, &kb));
    (out.regions_removed, out.regions_added) = unmatched(&ra, &rb);

    let mut forward: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut backward: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut links: Vec<(u32, u32)> = links.into_iter().collect();
    links.sort_unstable();
    for &(o, n) in &links {
        forward.entry(o).or_default().push(n);
        backward.entry(n).or_default().push(o);
    }
    let several = |m: FxHashMap<u32, Vec<u32>>| {
        let mut v: Vec<(u32, Vec<u32>)> = m.into_iter().filter(|(_, l)| l.len() > 1).collect();
        v.sort();
        v
    };
    out.split = several(forward);
    out.joined = several(backward);
    out.patches = patches(&out, height);
    out
}

/// Connected groups (8-neighbours) of added and removed cells, largest first.
fn patches(d: &MeshDiff, height: u64) -> Vec<Patch> {
    let w = d.width;
    let mut kind: FxHashMap<u64, (bool, bool)> = FxHashMap::default();
    for &c in &d.added {
        kind.entry(c).or_default().0 = true;
    }
    for &c in &d.removed {
        kind.entry(c).or_default().1 = true;
    }
    let mut cells: Vec<u64> = kind.keys().copied().collect();
    cells.sort_unstable();
    let mut seen: FxHashSet<u64> = FxHashSet::default();
    let mut out = Vec::new();
    let area = d.cell * d.cell;
    for &start in &cells {
        if !seen.insert(start) {
            continue;
        }
        let (mut lo, mut hi) = ([u64::MAX; 2], [0u64; 2]);
        let (mut added, mut removed) = (0u64, 0u64);
        let mut stack = vec![start];
        while let Some(c) = stack.pop() {
            let (x, y) = (c % w, c / w);
            lo = [lo[0].min(x), lo[1].min(y)];
            hi = [hi[0].max(x), hi[1].max(y)];
            let (a, r) = kind[&c];
            added += a as u64;
            removed += r as u64;
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                    if nx < 0 || ny < 0 || nx >= w as i64 || ny >= height as i64 {
                        continue;
                    }
                    let n = ny as u64 * w + nx as u64;
                    if kind.contains_key(&n) && seen.insert(n) {
                        stack.push(n);
                    }
                }
            }
        }
        out.push(Patch {
            min: [
                d.origin[0] + lo[0] as f64 * d.cell,
                d.origin[1] + lo[1] as f64 * d.cell,
            ],
            max: [
                d.origin[0] + (hi[0] + 1) as f64 * d.cell,
                d.origin[1] + (hi[1] + 1) as f64 * d.cell,
            ],
            added_m2: added as f64 * area,
            removed_m2: removed as f64 * area,
        });
    }
    out.sort_by(|a, b| {
        (b.added_m2 + b.removed_m2)
            .total_cmp(&(a.added_m2 + a.removed_m2))
            .then(a.min[0].total_cmp(&b.min[0]))
            .then(a.min[1].total_cmp(&b.min[1]))
    });
    out
}
