//! What a navmesh must satisfy before queries touch it: every index in range, every number
//! finite.

use crate::{ArchivedNavMesh, DETAIL, NONE};

/// The first broken rule [`validate`] found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidMesh {
    #[error("vertex {vertex} is not finite")]
    VertexNotFinite { vertex: usize },
    #[error("poly_verts and poly_neis differ in length")]
    EdgeTablesDiffer,
    #[error("polygon {poly}: vertex range out of bounds")]
    PolygonVertexRange { poly: usize },
    #[error("polygon {poly}: triangle range out of bounds")]
    PolygonTriangleRange { poly: usize },
    #[error("polygon {poly}: link range out of bounds")]
    PolygonLinkRange { poly: usize },
    #[error("polygon {poly}: area is not finite")]
    PolygonArea { poly: usize },
    #[error("polygon {poly}: vertex index out of range")]
    PolygonVertexIndex { poly: usize },
    #[error("polygon {poly}: neighbour index out of range")]
    PolygonNeighbourIndex { poly: usize },
    #[error("detail vertex {vertex} is not finite")]
    DetailVertexNotFinite { vertex: usize },
    #[error("detail triangle {triangle}: vertex index out of range")]
    DetailTriangleIndex { triangle: usize },
    #[error("link {link}: polygon index out of range")]
    LinkPolygon { link: usize },
    #[error("link {link}: endpoint is not finite")]
    LinkNotFinite { link: usize },
    #[error("link {link}: off-mesh link index out of range, or its cost not finite and >= 0")]
    LinkOffMesh { link: usize },
    #[error("off-mesh link {link}: an end is not finite, or its cost not finite and >= 0")]
    OffMeshNotFinite { link: usize },
    #[error("areas: {count} areas (a mesh has 1 to {max})", max = crate::MAX_AREAS)]
    AreaCount { count: usize },
    #[error("area {area}: cost not finite and > 0")]
    AreaCost { area: usize },
    #[error("polygon {poly}: area id out of range")]
    PolygonAreaId { poly: usize },
    #[error("grid: start table does not match its size")]
    GridSize,
    #[error("grid: no cells")]
    GridEmpty,
    #[error("grid: bad cell size or origin")]
    GridFrame,
    #[error("grid: start table out of order or out of range")]
    GridStart,
    #[error("grid: polygon index out of range")]
    GridItem,
    #[error(
        "polygon {poly}: its {what} do not follow the previous polygon's (each polygon's \
         vertices, triangles and links come in turn, once)"
    )]
    PolygonLayout { poly: usize, what: &'static str },
    #[error(
        "polygon {poly}: not convex counter-clockwise in plan at its vertex {corner} (queries \
         assume convex polygons)"
    )]
    PolygonNotConvex { poly: usize, corner: u32 },
    #[error("the polygons use {used} of {len} entries of {what}")]
    TableLength {
        what: &'static str,
        used: u64,
        len: u64,
    },
    #[error(
        "polygon {poly}: component {component} is out of range or out of order (components \
         are numbered by their first polygon)"
    )]
    ComponentNumber { poly: usize, component: u32 },
    #[error("polygon {poly}: its {across} {other} is in another component")]
    ComponentSplit {
        poly: usize,
        across: &'static str,
        other: u32,
    },
    #[error("component {component}: its polygon count or area differs from its polygons'")]
    ComponentTable { component: usize },
    #[error("hierarchy: {clusters} polygon clusters listed for {polygons} polygons")]
    HierarchyPolygons { clusters: u64, polygons: u64 },
    #[error(
        "hierarchy: polygon {poly}'s cluster {cluster} is out of range or out of order \
         (clusters are numbered by their first polygon)"
    )]
    HierarchyClusterNumber { poly: usize, cluster: u32 },
    #[error(
        "hierarchy: cluster {cluster}: {what} (each cluster's entrances and lengths follow the \
         previous cluster's, and its polygon count is that of its polygons)"
    )]
    HierarchyCluster { cluster: usize, what: &'static str },
    #[error("hierarchy: entrance {entrance}: {what}")]
    HierarchyEntrance { entrance: usize, what: &'static str },
    #[error(
        "hierarchy: cluster {cluster}: a length between its entrances is negative or not a number"
    )]
    HierarchyCost { cluster: usize },
}

/// Every index in range and every number finite: what queries rely on to never panic.
pub fn validate(m: &ArchivedNavMesh) -> Result<(), InvalidMesh> {
    use InvalidMesh::*;
    let nv = m.verts.len() as u64;
    let np = m.polys.len() as u64;
    for (i, v) in m.verts.iter().enumerate() {
        if v.iter().any(|c| !c.to_native().is_finite()) {
            return Err(VertexNotFinite { vertex: i });
        }
    }
    if m.poly_verts.len() != m.poly_neis.len() {
        return Err(EdgeTablesDiffer);
    }
    let in_range = |first: u32, count: u32, len: usize| first as u64 + count as u64 <= len as u64;
    // The builder writes each polygon's vertices, triangles and links right after the previous
    // polygon's: a file whose ranges overlap (every polygon listing every vertex, say) would
    // make the work of a query, a render or an export grow far beyond the file's size.
    let (mut next_vert, mut next_tri, mut next_link) = (0u64, 0u64, 0u64);
    if m.areas.is_empty() || m.areas.len() > crate::MAX_AREAS {
        return Err(AreaCount {
            count: m.areas.len(),
        });
    }
    for (area, a) in m.areas.iter().enumerate() {
        let cost = a.cost.to_native();
        if !(cost.is_finite() && cost > 0.0) {
            return Err(AreaCost { area });
        }
    }
    for (poly, p) in m.polys.iter().enumerate() {
        if p.area_id.to_native() as usize >= m.areas.len() {
            return Err(PolygonAreaId { poly });
        }
        let (first, count) = (p.first.to_native(), p.count.to_native());
        for (what, at, n, expected) in [
            ("vertices", first, count, &mut next_vert),
            (
                "triangles",
                p.tri_first.to_native(),
                p.tri_count.to_native(),
                &mut next_tri,
            ),
            (
                "links",
                p.link_first.to_native(),
                p.link_count.to_native(),
                &mut next_link,
            ),
        ] {
            // An empty range may start anywhere.
            if n > 0 && at as u64 != *expected {
                return Err(PolygonLayout { poly, what });
            }
        }
        next_vert += count as u64;
        next_tri += p.tri_count.to_native() as u64;
        next_link += p.link_count.to_native() as u64;
        if count < 3 || !in_range(first, count, m.poly_verts.len()) {
            return Err(PolygonVertexRange { poly });
        }
        if !in_range(
            p.tri_first.to_native(),
            p.tri_count.to_native(),
            m.detail_tris.len(),
        ) {
            return Err(PolygonTriangleRange { poly });
        }
        if !in_range(
            p.link_first.to_native(),
            p.link_count.to_native(),
            m.links.len(),
        ) {
            return Err(PolygonLinkRange { poly });
        }
        if !p.area.to_native().is_finite() {
            return Err(PolygonArea { poly });
        }
        for k in first..first + count {
            if m.poly_verts[k as usize].to_native() as u64 >= nv {
                return Err(PolygonVertexIndex { poly });
            }
            let n = m.poly_neis[k as usize].to_native();
            if n != NONE && n as u64 >= np {
                return Err(PolygonNeighbourIndex { poly });
            }
        }
        if let Some(corner) = reflex_corner(m, first, count) {
            return Err(PolygonNotConvex { poly, corner });
        }
    }
    for (what, used, len) in [
        ("poly_verts", next_vert, m.poly_verts.len()),
        ("detail_tris", next_tri, m.detail_tris.len()),
        ("links", next_link, m.links.len()),
    ] {
        if used != len as u64 {
            return Err(TableLength {
                what,
                used,
                len: len as u64,
            });
        }
    }
    let ndv = m.detail_verts.len() as u64;
    for (i, v) in m.detail_verts.iter().enumerate() {
        if v.iter().any(|c| !c.to_native().is_finite()) {
            return Err(DetailVertexNotFinite { vertex: i });
        }
    }
    for (i, t) in m.detail_tris.iter().enumerate() {
        if t.iter().any(|v| {
            let v = v.to_native();
            if v & DETAIL != 0 {
                (v & !DETAIL) as u64 >= ndv
            } else {
                v as u64 >= nv
            }
        }) {
            return Err(DetailTriangleIndex { triangle: i });
        }
    }
    for (i, l) in m.links.iter().enumerate() {
        if l.from.to_native() as u64 >= np || l.to.to_native() as u64 >= np {
            return Err(LinkPolygon { link: i });
        }
        if l.a
            .iter()
            .chain(l.b.iter())
            .any(|c| !c.to_native().is_finite())
        {
            return Err(LinkNotFinite { link: i });
        }
        let (off_mesh, cost) = (l.off_mesh.to_native(), l.cost.to_native());
        let cost_ok = cost.is_finite() && cost >= 0.0;
        if !cost_ok || (off_mesh != NONE && off_mesh as usize >= m.off_mesh.len()) {
            return Err(LinkOffMesh { link: i });
        }
    }
    for (i, o) in m.off_mesh.iter().enumerate() {
        let cost = o.cost.to_native();
        if !(cost.is_finite() && cost >= 0.0)
            || o.from
                .iter()
                .chain(o.to.iter())
                .any(|c| !c.to_native().is_finite())
        {
            return Err(OffMeshNotFinite { link: i });
        }
    }
    validate_components(m)?;
    validate_hierarchy(m)?;
    let g = &m.grid;
    // A grid has a cell at least: `grid_cells` clamps to the last row and column.
    if g.width.to_native() == 0 || g.height.to_native() == 0 {
        return Err(GridEmpty);
    }
    let cells = g.width.to_native() as u64 * g.height.to_native() as u64;
    if g.start.len() as u64 != cells + 1 {
        return Err(GridSize);
    }
    if g.cell.to_native().partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        || g.min.iter().any(|c| !c.to_native().is_finite())
    {
        return Err(GridFrame);
    }
    let mut prev = 0u32;
    for s in g.start.iter() {
        let s = s.to_native();
        if s < prev || s as usize > g.items.len() {
            return Err(GridStart);
        }
        prev = s;
    }
    if g.items.iter().any(|p| p.to_native() as u64 >= np) {
        return Err(GridItem);
    }
    Ok(())
}

/// The first corner (0-based, in the polygon's order) where the polygon at `first..first +
/// count` of `poly_verts` turns clockwise in plan, if any: the builder writes convex
/// polygons counter-clockwise (collinear corners allowed), and point location, portals and
/// the funnel rely on it. The builder's corners are grid corners, convex exactly; stored as
/// `f32` metres they move by up to half an ulp of their coordinates, which can tilt a
/// straight corner either way, so a turn counts only beyond four ulps of the largest
/// coordinate times the two edges' lengths (a turn of a degree at a metre is a thousand
/// times that at 2 km from the origin).
fn reflex_corner(m: &ArchivedNavMesh, first: u32, count: u32) -> Option<u32> {
    let plan = |k: u32| {
        let v = &m.verts[m.poly_verts[(first + k % count) as usize].to_native() as usize];
        [v[0].to_native() as f64, v[1].to_native() as f64]
    };
    (0..count)
        .find(|&k| {
            let (a, b, c) = (plan(k), plan(k + 1), plan(k + 2));
            let (e, f) = ([b[0] - a[0], b[1] - a[1]], [c[0] - b[0], c[1] - b[1]]);
            let cross = e[0] * f[1] - e[1] * f[0];
            // A left turn or a straight corner is no reflex one: the bound below is never
            // above zero (most corners end here, without the square roots).
            if cross >= 0.0 {
                return false;
            }
            let reach = [a, b, c]
                .iter()
                .flatten()
                .fold(1.0f64, |m, c| m.max(c.abs()));
            let ulp = reach * f64::from(f32::EPSILON);
            cross < -4.0 * ulp * (e[0].hypot(e[1]) + f[0].hypot(f[1]))
        })
        .map(|k| (k + 1) % count)
}

/// Components: numbered by their first polygon, the same on both sides of every portal and
/// link, and the table's counts and areas those of their polygons (summed in polygon order,
/// as the builder does). Runs after the polygon and link ranges are checked.
fn validate_components(m: &ArchivedNavMesh) -> Result<(), InvalidMesh> {
    use InvalidMesh::*;
    let nc = m.components.len();
    let mut sums = vec![(0u64, 0f64); nc];
    let mut next = 0usize;
    for (poly, p) in m.polys.iter().enumerate() {
        let component = p.component.to_native();
        let c = component as usize;
        if c > next || c >= nc {
            return Err(ComponentNumber { poly, component });
        }
        next = next.max(c + 1);
        sums[c].0 += 1;
        sums[c].1 += p.area.to_native() as f64;
        let (first, count) = (p.first.to_native(), p.count.to_native());
        let across = (first..first + count)
            .map(|k| ("neighbour", m.poly_neis[k as usize].to_native()))
            .chain(
                m.links[p.link_first.to_native() as usize..][..p.link_count.to_native() as usize]
                    .iter()
                    .map(|l| ("link to", l.to.to_native())),
            );
        for (what, other) in across {
            if other != NONE && m.polys[other as usize].component.to_native() != component {
                return Err(ComponentSplit {
                    poly,
                    across: what,
                    other,
                });
            }
        }
    }
    if next != nc {
        // A component no polygon is in.
        return Err(ComponentTable { component: next });
    }
    for (component, (c, &(polygons, area))) in m.components.iter().zip(&sums).enumerate() {
        if c.polygons.to_native() != polygons || c.area.to_native().to_bits() != area.to_bits() {
            return Err(ComponentTable { component });
        }
    }
    Ok(())
}

/// The hierarchy: empty, or a cluster per polygon numbered by first polygon, each cluster's
/// entrances and table of lengths laid one after the other, every entrance on a polygon of
/// its own cluster and leading (if anywhere) to an entrance of another, every number finite
/// (lengths may be `INFINITY`, never negative or NaN). Runs after the polygons are checked.
fn validate_hierarchy(m: &ArchivedNavMesh) -> Result<(), InvalidMesh> {
    use InvalidMesh::*;
    let h = &m.hierarchy;
    let np = m.polys.len();
    let nc = h.clusters.len();
    if nc == 0 {
        if !h.poly_cluster.is_empty() || !h.entrances.is_empty() || !h.costs.is_empty() {
            return Err(HierarchyPolygons {
                clusters: 0,
                polygons: np as u64,
            });
        }
        return Ok(());
    }
    if h.poly_cluster.len() != np {
        return Err(HierarchyPolygons {
            clusters: h.poly_cluster.len() as u64,
            polygons: np as u64,
        });
    }
    let mut polygons = vec![0u64; nc];
    let mut next = 0usize;
    for (poly, c) in h.poly_cluster.iter().enumerate() {
        let cluster = c.to_native();
        let c = cluster as usize;
        if c > next || c >= nc {
            return Err(HierarchyClusterNumber { poly, cluster });
        }
        next = next.max(c + 1);
        polygons[c] += 1;
    }
    let (mut entrance_at, mut cost_at) = (0u64, 0u64);
    for (cluster, c) in h.clusters.iter().enumerate() {
        let bad = |what| Err(HierarchyCluster { cluster, what });
        if u64::from(c.polygons.to_native()) != polygons[cluster] {
            return bad("its polygon count differs");
        }
        let n = u64::from(c.entrance_count.to_native());
        if u64::from(c.entrance_first.to_native()) != entrance_at {
            return bad("its entrances do not follow");
        }
        if u64::from(c.cost_first.to_native()) != cost_at {
            return bad("its lengths do not follow");
        }
        entrance_at += n;
        cost_at += n * n;
        if entrance_at > h.entrances.len() as u64 || cost_at > h.costs.len() as u64 {
            return bad("its entrances or lengths run past the end of their table");
        }
        let costs = &h.costs[(cost_at - n * n) as usize..cost_at as usize];
        // Not negative and not NaN: `INFINITY` (no way) is a length.
        if costs
            .iter()
            .any(|v| v.to_native().is_nan() || v.to_native() < 0.0)
        {
            return Err(HierarchyCost { cluster });
        }
    }
    if entrance_at != h.entrances.len() as u64 || cost_at != h.costs.len() as u64 {
        return Err(TableLength {
            what: "hierarchy entrances or lengths",
            used: entrance_at + cost_at,
            len: (h.entrances.len() + h.costs.len()) as u64,
        });
    }
    for (entrance, e) in h.entrances.iter().enumerate() {
        let bad = |what| Err(HierarchyEntrance { entrance, what });
        let (poly, cluster) = (e.poly.to_native() as usize, e.cluster.to_native() as usize);
        if cluster >= nc || !h.clusters[cluster].entrance_range().contains(&entrance) {
            return bad("its cluster does not list it");
        }
        if poly >= np || h.poly_cluster[poly].to_native() as usize != cluster {
            return bad("its polygon is out of range or in another cluster");
        }
        if e.point.iter().any(|v| !v.to_native().is_finite()) {
            return bad("its point is not finite");
        }
        let across = e.across.to_native();
        if across != NONE {
            let other = h.entrances.get(across as usize);
            if other.is_none_or(|o| o.cluster.to_native() as usize == cluster) {
                return bad("it leads out of range or into its own cluster");
            }
        }
        let cost = e.cost.to_native();
        if !(cost.is_finite() && cost >= 0.0) {
            return bad("the length of its step across is negative or not finite");
        }
    }
    Ok(())
}
