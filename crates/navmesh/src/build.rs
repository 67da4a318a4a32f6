//! Assembling a [`NavMesh`] from polygons on the voxel grid: vertex welding, portals,
//! areas, the spatial grid.

use rustc_hash::FxHashMap as HashMap;

use crate::{Frame, Grid, Link, NavMesh, Poly, Stats, NONE};

/// Polygons on the voxel grid, as the polygonizer makes them.
#[derive(Clone, Debug, Default)]
pub struct MeshInput {
    /// Vertices: `x`, `y` grid points (cell corners), `z` voxel heights.
    pub verts: Vec<[i32; 3]>,
    pub polys: Vec<InputPoly>,
    /// Links between polygons that share no edge, both directions, endpoints in grid units.
    pub links: Vec<(u32, u32, [i32; 3], [i32; 3])>,
    /// Regions (the polygons' `region` are below this).
    pub regions: u32,
    /// Reflex vertices of the region outlines, reported in [`Stats`].
    pub notches: u64,
    /// Two edges that coincide in plan are a portal when their heights differ by at most this
    /// many voxels at both ends.
    pub climb: u32,
}

/// One convex polygon: vertex indices counter-clockwise seen from above, and its detail
/// triangles (vertex indices, counter-clockwise).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputPoly {
    pub verts: Vec<u32>,
    pub region: u32,
    pub tris: Vec<[u32; 3]>,
    /// Per edge (`i` runs from vertex `i` to `i + 1`): true where no portal may be (a wall, a
    /// ledge). Empty means every edge may be a portal.
    pub blocked: Vec<bool>,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("polygon {poly}: {detail}")]
    Poly { poly: usize, detail: String },
    #[error("link {link}: polygon out of range")]
    Link { link: usize },
}

/// Builds the mesh. Deterministic: the output depends only on the input's order.
pub fn build(frame: Frame, input: &MeshInput) -> Result<NavMesh, BuildError> {
    let (cs, ch) = (frame.cell_size as f64, frame.cell_height as f64);
    let world = |v: [i32; 3]| -> [f32; 3] {
        [
            (v[0] as f64 * cs) as f32,
            (v[1] as f64 * cs) as f32,
            (v[2] as f64 * ch) as f32,
        ]
    };
    // Weld exact duplicates, in first-use order.
    let mut ids: HashMap<[i32; 3], u32> = HashMap::default();
    let mut grid_verts: Vec<[i32; 3]> = Vec::new();
    let mut weld = |v: [i32; 3]| -> u32 {
        *ids.entry(v).or_insert_with(|| {
            grid_verts.push(v);
            (grid_verts.len() - 1) as u32
        })
    };
    let np = input.polys.len();
    let mut polys = Vec::with_capacity(np);
    let mut poly_verts = Vec::new();
    let mut detail_tris = Vec::new();
    for (i, p) in input.polys.iter().enumerate() {
        let bad = |detail: &str| BuildError::Poly {
            poly: i,
            detail: detail.into(),
        };
        if p.verts.len() < 3 {
            return Err(bad("fewer than 3 vertices"));
        }
        let n_in = input.verts.len() as u32;
        if p.verts
            .iter()
            .chain(p.tris.iter().flatten())
            .any(|&v| v >= n_in)
        {
            return Err(bad("vertex index out of range"));
        }
        if !p.blocked.is_empty() && p.blocked.len() != p.verts.len() {
            return Err(bad("blocked flags do not match the edges"));
        }
        if p.region >= input.regions {
            return Err(bad("region out of range"));
        }
        let twice: i64 = (0..p.verts.len())
            .map(|k| {
                let a = input.verts[p.verts[k] as usize];
                let b = input.verts[p.verts[(k + 1) % p.verts.len()] as usize];
                a[0] as i64 * b[1] as i64 - b[0] as i64 * a[1] as i64
            })
            .sum();
        if twice <= 0 {
            return Err(bad("not counter-clockwise"));
        }
        let first = poly_verts.len() as u32;
        poly_verts.extend(p.verts.iter().map(|&v| weld(input.verts[v as usize])));
        let tri_first = detail_tris.len() as u32;
        detail_tris.extend(
            p.tris
                .iter()
                .map(|t| t.map(|v| weld(input.verts[v as usize]))),
        );
        polys.push(Poly {
            first,
            count: p.verts.len() as u32,
            tri_first,
            tri_count: p.tris.len() as u32,
            link_first: 0,
            link_count: 0,
            region: p.region,
            area: (twice as f64 * 0.5 * cs * cs) as f32,
        });
    }

    // Portals: an edge a->b meets an edge b->a (same plan points) with heights within the
    // climb at both ends. Candidates are matched cheapest first, each edge at most once.
    // Edges sorted by their plan endpoints (a flat table: 20 bytes an edge).
    let mut by_plan: Vec<([i32; 4], u32)> = Vec::with_capacity(poly_verts.len());
    for p in &polys {
        for k in 0..p.count {
            let e = p.first + k;
            let a = grid_verts[poly_verts[e as usize] as usize];
            let b = grid_verts[poly_verts[(p.first + (k + 1) % p.count) as usize] as usize];
            by_plan.push(([a[0], a[1], b[0], b[1]], e));
        }
    }
    by_plan.sort_unstable();
    let edges_from_to = |key: [i32; 4]| {
        let lo = by_plan.partition_point(|(k, _)| *k < key);
        by_plan[lo..]
            .iter()
            .take_while(move |(k, _)| *k == key)
            .map(|&(_, e)| e)
    };
    let mut is_blocked = vec![false; poly_verts.len()];
    for (p, ip) in polys.iter().zip(&input.polys) {
        for (k, &b) in ip.blocked.iter().enumerate() {
            is_blocked[p.first as usize + k] = b;
        }
    }
    let mut owner = vec![0u32; poly_verts.len()];
    let mut next_of = vec![0u32; poly_verts.len()];
    for (i, p) in polys.iter().enumerate() {
        for k in 0..p.count {
            owner[(p.first + k) as usize] = i as u32;
            next_of[(p.first + k) as usize] = p.first + (k + 1) % p.count;
        }
    }
    let mut candidates: Vec<(u32, u32, u32)> = Vec::new();
    for p in &polys {
        for k in 0..p.count {
            let e = p.first + k;
            if is_blocked[e as usize] {
                continue;
            }
            let a = grid_verts[poly_verts[e as usize] as usize];
            let b = grid_verts[poly_verts[next_of[e as usize] as usize] as usize];
            for f in edges_from_to([b[0], b[1], a[0], a[1]]) {
                if f <= e || owner[f as usize] == owner[e as usize] || is_blocked[f as usize] {
                    continue;
                }
                let fb = grid_verts[poly_verts[f as usize] as usize];
                let fa = grid_verts[poly_verts[next_of[f as usize] as usize] as usize];
                let (da, db) = ((a[2] - fa[2]).unsigned_abs(), (b[2] - fb[2]).unsigned_abs());
                if da <= input.climb && db <= input.climb {
                    candidates.push((da + db, e, f));
                }
            }
        }
    }
    drop(by_plan);
    candidates.sort_unstable();
    let mut poly_neis = vec![NONE; poly_verts.len()];
    let mut portals = 0u32;
    for (_, e, f) in candidates {
        if poly_neis[e as usize] == NONE && poly_neis[f as usize] == NONE {
            poly_neis[e as usize] = owner[f as usize];
            poly_neis[f as usize] = owner[e as usize];
            portals += 1;
        }
    }

    // Links, grouped by their source polygon.
    let mut links: Vec<(u32, u32, [i32; 3], [i32; 3])> = input.links.clone();
    for (i, l) in links.iter().enumerate() {
        if l.0 as usize >= np || l.1 as usize >= np {
            return Err(BuildError::Link { link: i });
        }
    }
    links.sort_by_key(|l| (l.0, l.1, l.2, l.3));
    for (i, l) in links.iter().enumerate() {
        let p = &mut polys[l.0 as usize];
        if p.link_count == 0 {
            p.link_first = i as u32;
        }
        p.link_count += 1;
    }
    let links: Vec<Link> = links
        .iter()
        .map(|l| Link {
            from: l.0,
            to: l.1,
            a: world(l.2),
            b: world(l.3),
        })
        .collect();

    let verts: Vec<[f32; 3]> = grid_verts.iter().map(|&v| world(v)).collect();
    let mut bounds_min = [f32::INFINITY; 3];
    let mut bounds_max = [f32::NEG_INFINITY; 3];
    for v in &verts {
        for k in 0..3 {
            bounds_min[k] = bounds_min[k].min(v[k]);
            bounds_max[k] = bounds_max[k].max(v[k]);
        }
    }
    if verts.is_empty() {
        bounds_min = [0.0; 3];
        bounds_max = [0.0; 3];
    }
    let grid = build_grid(&verts, &polys, &poly_verts, bounds_min, bounds_max);
    let walkable_area = polys.iter().map(|p| p.area as f64).sum();
    let link_count = links.len() as u32;
    Ok(NavMesh {
        frame,
        bounds_min,
        bounds_max,
        verts,
        polys,
        poly_verts,
        poly_neis,
        detail_tris,
        links,
        grid,
        stats: Stats {
            regions: input.regions,
            notches: input.notches,
            portals,
            links: link_count,
            walkable_area,
            polygons_removed: 0,
            islands_removed: 0,
        },
    })
}

/// Plan bounding box of a polygon.
fn plan_box(verts: &[[f32; 3]], poly_verts: &[u32], p: &Poly) -> ([f32; 2], [f32; 2]) {
    let mut lo = [f32::INFINITY; 2];
    let mut hi = [f32::NEG_INFINITY; 2];
    for &v in &poly_verts[p.first as usize..(p.first + p.count) as usize] {
        let v = verts[v as usize];
        for k in 0..2 {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    (lo, hi)
}

/// A grid with cells about twice the mean polygon size, at most about four cells per polygon.
fn build_grid(
    verts: &[[f32; 3]],
    polys: &[Poly],
    poly_verts: &[u32],
    min: [f32; 3],
    max: [f32; 3],
) -> Grid {
    let boxes: Vec<_> = polys
        .iter()
        .map(|p| plan_box(verts, poly_verts, p))
        .collect();
    let mean = if boxes.is_empty() {
        1.0
    } else {
        boxes
            .iter()
            .map(|(lo, hi)| (hi[0] - lo[0]).max(hi[1] - lo[1]) as f64)
            .sum::<f64>()
            / boxes.len() as f64
    };
    let (ex, ey) = ((max[0] - min[0]).max(0.0), (max[1] - min[1]).max(0.0));
    let mut cell = (2.0 * mean).max(1e-3) as f32;
    let limit = 4 * polys.len() as u64 + 16;
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
    let mut counts = vec![0u32; (width * height) as usize + 1];
    let ranges: Vec<_> = boxes
        .iter()
        .map(|(lo, hi)| {
            (
                cell_of(lo[0], min[0], width),
                cell_of(lo[1], min[1], height),
                cell_of(hi[0], min[0], width),
                cell_of(hi[1], min[1], height),
            )
        })
        .collect();
    for &(x0, y0, x1, y1) in &ranges {
        for y in y0..=y1 {
            for x in x0..=x1 {
                counts[(y * width + x) as usize + 1] += 1;
            }
        }
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    let start = counts.clone();
    let mut fill = counts;
    let mut items = vec![0u32; *start.last().unwrap() as usize];
    for (p, &(x0, y0, x1, y1)) in ranges.iter().enumerate() {
        for y in y0..=y1 {
            for x in x0..=x1 {
                let c = (y * width + x) as usize;
                items[fill[c] as usize] = p as u32;
                fill[c] += 1;
            }
        }
    }
    Grid {
        min: [min[0], min[1]],
        cell,
        width,
        height,
        start,
        items,
    }
}

/// What [`keep_reachable`] removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    pub polygons: u64,
    /// Connected groups of removed polygons.
    pub islands: u64,
    /// Seeds (by index) that stand on no polygon.
    pub unplaced_seeds: Vec<usize>,
}

/// The polygon under a seed point (internal frame): one whose detail triangles hold the plan
/// point, with the surface within the agent's height below or above it, nearest in height.
fn polygon_under(mesh: &NavMesh, p: [f32; 3]) -> Option<u32> {
    let mut best: Option<(f32, u32)> = None;
    for (i, poly) in mesh.polys.iter().enumerate() {
        let tris =
            &mesh.detail_tris[poly.tri_first as usize..(poly.tri_first + poly.tri_count) as usize];
        for t in tris {
            let [a, b, c] = t.map(|v| mesh.verts[v as usize]);
            let d = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
            if d == 0.0 {
                continue;
            }
            let u = ((b[0] - p[0]) * (c[1] - p[1]) - (b[1] - p[1]) * (c[0] - p[0])) / d;
            let v = ((c[0] - p[0]) * (a[1] - p[1]) - (c[1] - p[1]) * (a[0] - p[0])) / d;
            let w = 1.0 - u - v;
            if u < -1e-5 || v < -1e-5 || w < -1e-5 {
                continue;
            }
            let dz = (u * a[2] + v * b[2] + w * c[2] - p[2]).abs();
            if dz <= mesh.frame.agent_height && best.is_none_or(|(bd, _)| dz < bd) {
                best = Some((dz, i as u32));
            }
        }
    }
    best.map(|(_, i)| i)
}

/// Reachability from seed points (seed 001): keeps the polygons an agent standing on one of
/// `seeds` (internal frame) can reach over portals and links, and rebuilds the input without
/// the rest. `mesh` is `input` built.
pub fn keep_reachable(
    input: &MeshInput,
    mesh: &NavMesh,
    seeds: &[[f32; 3]],
) -> (MeshInput, Pruned) {
    let n = mesh.polys.len();
    let neighbours = |p: usize| -> Vec<usize> {
        let poly = &mesh.polys[p];
        let edges = &mesh.poly_neis[poly.first as usize..(poly.first + poly.count) as usize];
        let links =
            &mesh.links[poly.link_first as usize..(poly.link_first + poly.link_count) as usize];
        edges
            .iter()
            .filter(|&&q| q != NONE)
            .map(|&q| q as usize)
            .chain(links.iter().map(|l| l.to as usize))
            .collect()
    };
    let flood = |starts: Vec<usize>, mark: &mut Vec<bool>| {
        let mut stack = starts;
        for &s in &stack {
            mark[s] = true;
        }
        while let Some(p) = stack.pop() {
            for q in neighbours(p) {
                if !mark[q] {
                    mark[q] = true;
                    stack.push(q);
                }
            }
        }
    };
    let mut pruned = Pruned::default();
    let mut starts = Vec::new();
    for (i, &s) in seeds.iter().enumerate() {
        match polygon_under(mesh, s) {
            Some(p) => starts.push(p as usize),
            None => pruned.unplaced_seeds.push(i),
        }
    }
    let mut keep = vec![false; n];
    flood(starts, &mut keep);
    let mut seen = keep.clone();
    for p in 0..n {
        if !seen[p] {
            pruned.islands += 1;
            flood(vec![p], &mut seen);
        }
    }
    pruned.polygons = keep.iter().filter(|k| !**k).count() as u64;
    // Polygons and links renumbered densely; regions too.
    let mut new_id = vec![u32::MAX; n];
    let mut region_id: HashMap<u32, u32> = HashMap::default();
    let mut out = MeshInput {
        verts: input.verts.clone(),
        climb: input.climb,
        ..Default::default()
    };
    for (p, ip) in input.polys.iter().enumerate() {
        if keep[p] {
            new_id[p] = out.polys.len() as u32;
            let next = region_id.len() as u32;
            let region = *region_id.entry(ip.region).or_insert(next);
            out.polys.push(InputPoly {
                region,
                ..ip.clone()
            });
        }
    }
    out.regions = region_id.len() as u32;
    out.links = input
        .links
        .iter()
        .filter(|l| keep[l.0 as usize] && keep[l.1 as usize])
        .map(|l| (new_id[l.0 as usize], new_id[l.1 as usize], l.2, l.3))
        .collect();
    out.notches = input.notches;
    (out, pruned)
}
