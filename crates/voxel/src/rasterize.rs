//! Conservative rasterization of triangles into span columns.

use tessera_artifacts::{CellRect, GridFrame, Span, SpanField, Triangle};
use tessera_config::VoxelParams;
use tessera_geom::{ceil_i64, floor_i64};

const NONE: u32 = u32::MAX;

/// What the surface deciding a span's top says: whether it is walkable (by its slope) and
/// its area. Ordered walkable first, then by area id: where two tops are within the climb,
/// the greater decides (walkable if either is; of two alike, the higher area id, so a
/// `[[areas]]` surface over a `default` one it touches wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Top {
    pub walkable: bool,
    pub area: u8,
}

/// A span in the linked columns built during rasterization, with its [`Top`] for each of the
/// `K` agents rasterized at once (their slopes and climbs may differ; its extent does not).
#[derive(Clone, Copy)]
struct Node<const K: usize> {
    zmin: u32,
    zmax: u32,
    top: [Top; K],
    next: u32,
}

/// `Node::zmin` of a column's head slot while the column is empty (never a span's: see
/// [`voxels`]).
const EMPTY: u32 = u32::MAX;

/// Columns as linked lists in one pool (like a heightfield under construction), each
/// column's lowest span kept in place: node `c` of the pool is column `c`'s head, and nodes
/// past the columns hold the spans above. Most columns hold one span, and a row's columns sit
/// side by side, so adding to a column rarely leaves the cache lines of its neighbours.
struct Columns<const K: usize> {
    pool: Vec<Node<K>>,
    cells: usize,
    free: u32,
    /// Each agent's climb: tops this close merge their [`Top`]s.
    merge_thresholds: [u32; K],
    /// Areas that are not walkable (bit `id`): their spans never are.
    blocked: u64,
}

impl<const K: usize> Columns<K> {
    /// Columns over `cells` cells, in the buffer given (cleared first).
    fn new(
        mut pool: Vec<Node<K>>,
        cells: usize,
        merge_thresholds: [u32; K],
        blocked: u64,
    ) -> Columns<K> {
        pool.clear();
        pool.resize(
            cells,
            Node {
                zmin: EMPTY,
                zmax: 0,
                top: [Top {
                    walkable: false,
                    area: 0,
                }; K],
                next: NONE,
            },
        );
        Columns {
            pool,
            cells,
            free: NONE,
            merge_thresholds,
            blocked,
        }
    }

    fn alloc(&mut self, n: Node<K>) -> u32 {
        if self.free != NONE {
            let i = self.free;
            self.free = self.pool[i as usize].next;
            self.pool[i as usize] = n;
            i
        } else {
            self.pool.push(n);
            (self.pool.len() - 1) as u32
        }
    }

    fn release(&mut self, i: u32) {
        self.pool[i as usize].next = self.free;
        self.free = i;
    }

    /// Adds `[zmin, zmax]` to column `col`, merging every span it overlaps or touches. The
    /// merged span's top is the higher of the two tops'; when the tops are within the climb
    /// threshold, the greater [`Top`] (for each agent by its own climb).
    #[inline]
    fn add(&mut self, col: usize, zmin: u32, zmax: u32, top: [Top; K]) {
        let mut s = Node {
            zmin,
            zmax,
            top,
            next: NONE,
        };
        let head = self.pool[col];
        if head.zmin == EMPTY {
            self.pool[col] = s;
            return;
        }
        if head.zmin > s.zmax {
            // Wholly below the lowest span: the head moves up into a node of its own.
            s.next = self.alloc(head);
            self.pool[col] = s;
            return;
        }
        // Past the spans wholly below (columns are sorted and their spans apart).
        let mut prev = NONE;
        let mut cur = col as u32;
        while cur != NONE && self.pool[cur as usize].zmax < s.zmin {
            prev = cur;
            cur = self.pool[cur as usize].next;
        }
        // Merge every span it overlaps or touches; the first one's node takes the result (the
        // head's slot when the head is among them, so the head never moves).
        let mut slot = NONE;
        while cur != NONE {
            let c = self.pool[cur as usize];
            if c.zmin > s.zmax {
                break;
            }
            (s.zmin, s.zmax, s.top) = merged(
                (s.zmin, s.zmax, s.top),
                (c.zmin, c.zmax, c.top),
                &self.merge_thresholds,
            );
            if slot == NONE {
                slot = cur;
            } else {
                self.release(cur);
            }
            cur = c.next;
        }
        s.next = cur;
        let i = if slot == NONE {
            self.alloc(s)
        } else {
            self.pool[slot as usize] = s;
            slot
        };
        // `prev` is set: the head is below the new span or was merged into `slot`.
        if slot == NONE {
            self.pool[prev as usize].next = i;
        }
    }

    /// Packs the columns into `field` (its buffers reused), bottom-up within each column, with
    /// the first agent's tops, and the other agents' tops into `others` (one flag byte per
    /// span each, [`Span::flags`]); a span of a blocked area is not walkable.
    fn pack_into(
        &self,
        field: &mut SpanField,
        others: &mut [Vec<u8>],
        rect: CellRect,
        core: CellRect,
    ) {
        for flags in others.iter_mut() {
            flags.clear();
            flags.reserve(self.pool.len());
        }
        let walkable = |t: Top| t.walkable && self.blocked & (1 << t.area) == 0;
        field.rect = rect;
        field.core = core;
        field.column_start.clear();
        field.column_start.reserve(self.cells + 1);
        field.spans.clear();
        field.spans.reserve(self.pool.len());
        field.column_start.push(0);
        for col in 0..self.cells {
            let mut cur = if self.pool[col].zmin == EMPTY {
                NONE
            } else {
                col as u32
            };
            while cur != NONE {
                let n = self.pool[cur as usize];
                field.spans.push(Span {
                    zmin: n.zmin,
                    zmax: n.zmax,
                    walkable: walkable(n.top[0]),
                    area: n.top[0].area,
                });
                for (flags, &t) in others.iter_mut().zip(&n.top[1..]) {
                    flags.push(Span::flags_of(walkable(t), t.area));
                }
                cur = n.next;
            }
            field.column_start.push(field.spans.len() as u32);
        }
    }
}

/// Span `s` (floor, top, its [`Top`]s) grown over span `c`, which it overlaps or touches: for
/// each agent, the higher top's [`Top`]; when the tops are within that agent's `thresholds`,
/// the greater of the two.
#[inline]
fn merged<const K: usize>(
    s: (u32, u32, [Top; K]),
    c: (u32, u32, [Top; K]),
    thresholds: &[u32; K],
) -> (u32, u32, [Top; K]) {
    let gap = c.1.abs_diff(s.1);
    let mut top = s.2;
    for k in 0..K {
        top[k] = if gap <= thresholds[k] {
            s.2[k].max(c.2[k])
        } else if c.1 > s.1 {
            c.2[k]
        } else {
            s.2[k]
        };
    }
    (s.0.min(c.0), s.1.max(c.1), top)
}

/// A vertex in global cell units: x, y in cells, z in voxels.
type P = [f64; 3];

/// Room for a triangle clipped by two parallel half-planes (at most five corners).
const MAX_CORNERS: usize = 8;

/// A small convex polygon kept on the stack.
#[derive(Clone, Copy)]
struct Poly {
    n: usize,
    v: [P; MAX_CORNERS],
}

impl Poly {
    fn triangle(p: &[P; 3]) -> Poly {
        let mut v = [[0.0; 3]; MAX_CORNERS];
        v[..3].copy_from_slice(p);
        Poly { n: 3, v }
    }

    #[inline]
    fn corners(&self) -> &[P] {
        &self.v[..self.n]
    }
}

/// Keeps the part of `poly` with `p[axis] >= bound` (`ABOVE`) or `<= bound`. The intersection
/// point is pinned exactly on the plane. Sutherland-Hodgman on a convex polygon.
#[inline]
fn clip<const ABOVE: bool>(poly: &Poly, out: &mut Poly, axis: usize, bound: f64) {
    out.n = 0;
    let n = poly.n;
    let inside = |p: &P| {
        if ABOVE {
            p[axis] >= bound
        } else {
            p[axis] <= bound
        }
    };
    for i in 0..n {
        let a = poly.v[i];
        let b = poly.v[if i + 1 == n { 0 } else { i + 1 }];
        let ia = inside(&a);
        let ib = inside(&b);
        if ia {
            out.v[out.n] = a;
            out.n += 1;
        }
        if ia != ib {
            let t = (bound - a[axis]) / (b[axis] - a[axis]);
            let mut p = [
                a[0] + (b[0] - a[0]) * t,
                a[1] + (b[1] - a[1]) * t,
                a[2] + (b[2] - a[2]) * t,
            ];
            p[axis] = bound;
            out.v[out.n] = p;
            out.n += 1;
        }
    }
}

/// The cells `first ..= last` an extent `[lo, hi]` covers: half-open cells `[c, c + 1)`, so a
/// polygon ending exactly on a grid line does not spill into the next cell, while a vertical
/// one (zero extent) lying on a line belongs to the cell above that line.
#[inline]
fn cover(lo: f64, hi: f64) -> (i64, i64) {
    let first = floor_i64(lo);
    let last = if hi > lo { ceil_i64(hi) - 1 } else { first };
    (first, last.max(first))
}

/// `max(floor(z), 0)` as a voxel index, saturating: below zero the floor is clamped to 0
/// anyway, and from zero up it is the truncation, one conversion instead of `floor_i64`'s four
/// steps (this runs twice for every cell a triangle covers).
#[inline]
fn voxel_floor(z: f64) -> u32 {
    z as u32
}

/// Height range `[lo, hi]`, empty while `lo > hi`.
#[derive(Clone, Copy)]
struct Range {
    lo: f64,
    hi: f64,
}

impl Range {
    const EMPTY: Range = Range {
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
    };

    /// Widens the range to `z`. Plain comparisons, not `f64::min`: the bounds start infinite
    /// and only ever take a value of `z`, so they are never NaN, and a NaN `z` is ignored
    /// either way; the compiler needs no NaN fix-up.
    #[inline]
    fn add(&mut self, z: f64) {
        if z < self.lo {
            self.lo = z;
        }
        if z > self.hi {
            self.hi = z;
        }
    }

    /// The union of three ranges.
    #[inline]
    fn union3(a: Range, b: Range, c: Range) -> Range {
        let mut r = a;
        if b.lo < r.lo {
            r.lo = b.lo;
        }
        if c.lo < r.lo {
            r.lo = c.lo;
        }
        if b.hi > r.hi {
            r.hi = b.hi;
        }
        if c.hi > r.hi {
            r.hi = c.hi;
        }
        r
    }
}

/// Reusable buffers of [`rasterize`]: the linked columns (for one agent, and for two to
/// [`MAX_AGENTS_AT_ONCE`] at once) and the per-row ranges.
#[derive(Default)]
pub struct Scratch {
    pool: Vec<Node<1>>,
    pool2: Vec<Node<2>>,
    pool3: Vec<Node<3>>,
    pool4: Vec<Node<4>>,
    /// Height range of the row polygon on each vertical grid line `c0 ..= c1 + 1`.
    lines: Vec<Range>,
    /// Height range of the row polygon's vertices in each cell `c0 ..= c1`.
    cells: Vec<Range>,
}

impl Scratch {
    /// Bytes the buffers hold.
    pub fn byte_size(&self) -> usize {
        self.pool.capacity() * std::mem::size_of::<Node<1>>()
            + self.pool2.capacity() * std::mem::size_of::<Node<2>>()
            + self.pool3.capacity() * std::mem::size_of::<Node<3>>()
            + self.pool4.capacity() * std::mem::size_of::<Node<4>>()
            + (self.lines.capacity() + self.cells.capacity()) * std::mem::size_of::<Range>()
    }
}

/// Rasterizes `triangles` into the columns of `rect` (global cells).
///
/// Per triangle: the slope decides walkability; the triangle is clipped to each grid row it
/// covers (two half-plane clips from the original triangle, skipped where the triangle lies
/// wholly on the kept side, which leaves it unchanged); in that row, the polygon's height
/// range over cell `c` is the range over its crossings of the lines `x = c` and `x = c + 1` and
/// its vertices between them, which is exactly the range of the polygon clipped to the cell.
/// Each crossing is computed from one edge and the line's global index alone, so the result
/// never depends on the tile.
pub fn rasterize(
    frame: &GridFrame,
    params: &VoxelParams,
    rect: CellRect,
    core: CellRect,
    triangles: &[Triangle],
    areas: &[u8],
) -> SpanField {
    let mut field = SpanField::empty(CellRect::default(), CellRect::default());
    rasterize_into(
        &mut Scratch::default(),
        &mut field,
        frame,
        params,
        rect,
        core,
        (triangles, areas),
    );
    field
}

/// [`rasterize`] into `field` (its buffers reused), with the working buffers of `scratch`.
pub fn rasterize_into(
    scratch: &mut Scratch,
    field: &mut SpanField,
    frame: &GridFrame,
    params: &VoxelParams,
    rect: CellRect,
    core: CellRect,
    triangles: (&[Triangle], &[u8]),
) {
    rasterize_with::<1>(
        scratch,
        (field, &mut []),
        frame,
        [params],
        (rect, core),
        triangles,
        true,
    );
}

/// The most agents [`rasterize_agents_into`] rasterizes at once.
pub const MAX_AGENTS_AT_ONCE: usize = 4;

/// [`rasterize_into`] for up to [`MAX_AGENTS_AT_ONCE`] agents at once, whose settings differ
/// at most in the slope limit and the climb (the cells, the band and the blocked areas are
/// `params[0]`'s): `field` gets `params[0]`'s tops, `others[i]` the flag bytes
/// ([`Span::flags_of`]) of `params[i + 1]`'s, one per span of `field`. The spans are the same
/// for all (a span's extent does not depend on the agent), and each agent's tops are those
/// [`rasterize_into`] gives it alone.
#[allow(clippy::too_many_arguments)]
pub fn rasterize_agents_into(
    scratch: &mut Scratch,
    field: &mut SpanField,
    others: &mut Vec<Vec<u8>>,
    frame: &GridFrame,
    params: &[&VoxelParams],
    rect: CellRect,
    core: CellRect,
    triangles: (&[Triangle], &[u8]),
) {
    others.resize_with(params.len().saturating_sub(1), Vec::new);
    let out = (field, &mut others[..]);
    let at = (rect, core);
    match *params {
        [a] => rasterize_with::<1>(scratch, out, frame, [a], at, triangles, true),
        [a, b] => rasterize_with::<2>(scratch, out, frame, [a, b], at, triangles, true),
        [a, b, c] => rasterize_with::<3>(scratch, out, frame, [a, b, c], at, triangles, true),
        [a, b, c, d] => rasterize_with::<4>(scratch, out, frame, [a, b, c, d], at, triangles, true),
        _ => panic!(
            "{} agents at once: between 1 and {MAX_AGENTS_AT_ONCE}",
            params.len()
        ),
    }
}

/// The linked columns' buffer for `K` agents in a [`Scratch`].
trait Pooled: Sized {
    fn pool(s: &mut Scratch) -> &mut Vec<Self>;
}

macro_rules! pooled {
    ($($agents:literal => $field:ident),*) => {$(
        impl Pooled for Node<$agents> {
            fn pool(s: &mut Scratch) -> &mut Vec<Self> {
                &mut s.$field
            }
        }
    )*};
}

pooled!(1 => pool, 2 => pool2, 3 => pool3, 4 => pool4);

/// How the rows of one triangle are rasterized.
#[derive(Clone, Copy)]
enum Shape {
    /// Level: the same voxels `zmin .. zmax` in every cell of each row's x extent.
    Level(u32, u32),
    /// Vertical in the plane `x = const`: each row covers the one cell of column `x` (an
    /// index of the rectangle's columns) with its corners' height range.
    Wall(usize),
    /// Anything else: [`rasterize_row`].
    General,
}

/// [`rasterize_agents_into`] for `K` agents, with the paths for level triangles and walls or
/// without them (the tests compare them).
fn rasterize_with<const K: usize>(
    scratch: &mut Scratch,
    (field, others): (&mut SpanField, &mut [Vec<u8>]),
    frame: &GridFrame,
    params: [&VoxelParams; K],
    (rect, core): (CellRect, CellRect),
    (triangles, areas): (&[Triangle], &[u8]),
    fast_paths: bool,
) where
    Node<K>: Pooled,
{
    assert_eq!(triangles.len(), areas.len(), "an area per triangle");
    let mut cols = Columns::<K>::new(
        std::mem::take(Node::<K>::pool(scratch)),
        rect.area(),
        params.map(|p| p.walkable_climb),
        params[0].blocked_areas,
    );
    let inv_cs = 1.0 / frame.cell_size;
    let inv_ch = 1.0 / frame.cell_height;
    let (rx0, rx1) = (rect.x0 as f64, rect.x1() as f64);
    let mut clipped = Poly::triangle(&[[0.0; 3]; 3]);
    let mut row_poly = clipped;
    let mut poly3 = clipped;
    for (tri, &area) in triangles.iter().zip(areas) {
        // Slope test in metres (cells are not cubes).
        let w: [[f64; 3]; 3] = tri.map(|v| [v[0] as f64, v[1] as f64, v[2] as f64]);
        let e0 = [w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]];
        let e1 = [w[2][0] - w[0][0], w[2][1] - w[0][1], w[2][2] - w[0][2]];
        let n = [
            e0[1] * e1[2] - e0[2] * e1[1],
            e0[2] * e1[0] - e0[0] * e1[2],
            e0[0] * e1[1] - e0[1] * e1[0],
        ];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        // Counter-clockwise seen from above faces up, as in Recast: the top of a one-sided
        // ceiling is not a floor.
        let top: [Top; K] = std::array::from_fn(|k| Top {
            walkable: len > 0.0 && n[2] / len > params[k].walkable_slope_cos,
            area,
        });

        let p: [P; 3] = w.map(|v| [v[0] * inv_cs, v[1] * inv_cs, v[2] * inv_ch]);
        let xmin = p[0][0].min(p[1][0]).min(p[2][0]);
        let xmax = p[0][0].max(p[1][0]).max(p[2][0]);
        if xmax < rx0 || xmin > rx1 {
            continue;
        }
        let ymin = p[0][1].min(p[1][1]).min(p[2][1]);
        let ymax = p[0][1].max(p[1][1]).max(p[2][1]);
        let (r0, r1) = cover(ymin, ymax);
        let r0 = r0.max(rect.y0 as i64);
        let r1 = r1.min(rect.y1() as i64 - 1);
        let shape = if !fast_paths {
            Shape::General
        } else if p[0][2] == p[1][2] && p[1][2] == p[2][2] {
            // A level triangle (floors, roofs, ground) is at one height everywhere, on every
            // crossing and corner too: each cell it covers gets the same voxels.
            match voxels(Range {
                lo: p[0][2],
                hi: p[0][2],
            }) {
                Some((zmin, zmax)) => Shape::Level(zmin, zmax),
                None => continue,
            }
        } else if p[0][0] == p[1][0] && p[1][0] == p[2][0] {
            // A wall along y: clipping to a row keeps every corner's x (the clip moves along
            // y only), so each row lies on one grid column, and with no edge crossing a
            // vertical grid line that cell's range is its corners' range.
            let c = floor_i64(p[0][0]);
            if c < rect.x0 as i64 || c >= rect.x1() as i64 {
                continue;
            }
            Shape::Wall((c - rect.x0 as i64) as usize)
        } else {
            Shape::General
        };
        poly3.n = 3;
        poly3.v[..3].copy_from_slice(&p);
        let tri = &poly3;
        for row in r0..=r1 {
            let (lo, hi) = (row as f64, row as f64 + 1.0);
            // A clip that keeps every corner returns the polygon unchanged: skip it.
            let above = if ymin >= lo {
                tri
            } else {
                clip::<true>(tri, &mut clipped, 1, lo);
                &clipped
            };
            let poly = if ymax <= hi {
                above
            } else {
                clip::<false>(above, &mut row_poly, 1, hi);
                &row_poly
            };
            if poly.n == 0 {
                continue;
            }
            match shape {
                Shape::Level(zmin, zmax) => {
                    level_row(&mut cols, rect, row as i32, poly.corners(), zmin, zmax, top);
                    continue;
                }
                Shape::Wall(x) => {
                    let mut range = Range::EMPTY;
                    for q in poly.corners() {
                        range.add(q[2]);
                    }
                    if let Some((zmin, zmax)) = voxels(range) {
                        let col = (row - rect.y0 as i64) as usize * rect.width as usize + x;
                        cols.add(col, zmin, zmax, top);
                    }
                    continue;
                }
                Shape::General => {}
            }
            rasterize_row(&mut cols, scratch, rect, row as i32, poly.corners(), top);
        }
    }
    cols.pack_into(field, others, rect, core);
    *Node::<K>::pool(scratch) = cols.pool;
}

/// The cells `c0 ..= c1` of `rect` that the row polygon `poly` spans in x (None: none).
#[inline]
fn row_cells(rect: CellRect, poly: &[P]) -> Option<(i64, i64)> {
    let mut xmin = f64::INFINITY;
    let mut xmax = f64::NEG_INFINITY;
    for q in poly {
        xmin = xmin.min(q[0]);
        xmax = xmax.max(q[0]);
    }
    let (c0, c1) = cover(xmin, xmax);
    let c0 = c0.max(rect.x0 as i64);
    let c1 = c1.min(rect.x1() as i64 - 1);
    (c0 <= c1).then_some((c0, c1))
}

/// [`rasterize_row`] for a level polygon, whose voxels are `zmin ..zmax` in every cell. Every
/// cell of its x extent gets them: a cell strictly inside the extent has crossings on its
/// grid lines, and each end cell holds the corner at that end (on a grid line, the cell to its
/// left does), so none of them would have an empty range in [`rasterize_row`].
#[inline]
fn level_row<const K: usize>(
    cols: &mut Columns<K>,
    rect: CellRect,
    row: i32,
    poly: &[P],
    zmin: u32,
    zmax: u32,
    top: [Top; K],
) {
    let Some((c0, c1)) = row_cells(rect, poly) else {
        return;
    };
    let base = rect.index(c0 as i32, row);
    for col in base..=base + (c1 - c0) as usize {
        cols.add(col, zmin, zmax, top);
    }
}

/// Adds the spans of the row polygon `poly` to the columns of `row`.
#[inline]
fn rasterize_row<const K: usize>(
    cols: &mut Columns<K>,
    s: &mut Scratch,
    rect: CellRect,
    row: i32,
    poly: &[P],
    top: [Top; K],
) {
    let Some((c0, c1)) = row_cells(rect, poly) else {
        return;
    };
    let cells = (c1 - c0 + 1) as usize;
    s.lines.clear();
    s.lines.resize(cells + 1, Range::EMPTY);
    s.cells.clear();
    s.cells.resize(cells, Range::EMPTY);
    let (lines, cell_range) = (&mut s.lines[..], &mut s.cells[..]);
    let n = poly.len();
    let (fc0, fc1) = (c0 as f64, (c1 + 1) as f64);
    for i in 0..n {
        let a = poly[i];
        let b = poly[if i + 1 == n { 0 } else { i + 1 }];
        // Vertices: in every cell whose closed extent holds them, that is cell floor(x), and
        // also the cell to its left when x lies on a grid line.
        if a[0] >= fc0 && a[0] <= fc1 {
            let f = floor_i64(a[0]);
            if f <= c1 {
                cell_range[(f - c0) as usize].add(a[2]);
            }
            if f > c0 && a[0] == f as f64 {
                cell_range[(f - 1 - c0) as usize].add(a[2]);
            }
        }
        // Edge crossings with the vertical grid lines strictly inside its x range.
        if a[0] == b[0] {
            continue;
        }
        let (lo, hi) = if a[0] < b[0] {
            (a[0], b[0])
        } else {
            (b[0], a[0])
        };
        let first = ceil_i64(lo).max(c0);
        let last = floor_i64(hi).min(c1 + 1);
        if first > last {
            continue; // an edge within one cell crosses no grid line: no division
        }
        let inv = 1.0 / (b[0] - a[0]);
        let slots = &mut lines[(first - c0) as usize..=(last - c0) as usize];
        for (line, slot) in (first..).zip(slots) {
            let t = (line as f64 - a[0]) * inv;
            slot.add(a[2] + (b[2] - a[2]) * t);
        }
    }
    let base = rect.index(c0 as i32, row);
    for (k, (&cell, sides)) in cell_range.iter().zip(lines.windows(2)).enumerate() {
        // An empty range: the polygon only grazes this cell's extent.
        if let Some((zmin, zmax)) = voxels(Range::union3(cell, sides[0], sides[1])) {
            cols.add(base + k, zmin, zmax, top);
        }
    }
}

/// The voxels `[zmin, zmax)` a height range touches (voxel k spans `[k, k + 1)`), None for an
/// empty range. Heights below the grid's floor clamp to voxel 0, so truncation serves as the
/// floor here.
#[inline]
fn voxels(Range { lo, hi }: Range) -> Option<(u32, u32)> {
    if lo > hi {
        return None;
    }
    let zmin = voxel_floor(lo).min(u32::MAX - 2);
    let zmax = voxel_floor(hi)
        .saturating_add(1)
        .clamp(zmin + 1, u32::MAX - 1);
    Some((zmin, zmax))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Level triangles and walls along y mixed with others, corners anywhere (on grid
        /// lines too), cut by the rectangle's edges: the paths for level triangles and walls
        /// give every span the general path gives.
        #[test]
        fn levels_and_walls_rasterize_as_the_general_path_does(
            tris in proptest::collection::vec(
                (
                    proptest::array::uniform3((-3i32..44, -3i32..44, 0i32..4)),
                    0u32..40,
                    0u8..3,
                ),
                1..12,
            ),
        ) {
            let frame = GridFrame::new([0.0; 3], [20.0, 20.0, 10.0], 0.5, 0.25, 16, 2);
            let params = tessera_config::BakeConfig::default().voxel_params();
            // Corners on a quarter-cell lattice, so that many lie on grid lines.
            let triangles: Vec<Triangle> = tris
                .iter()
                .map(|(c, z, kind)| {
                    let corner = |(x, y, q): (i32, i32, i32)| {
                        let x = x as f32 * 0.25 + q as f32 * 0.0625;
                        match kind {
                            // Level.
                            0 => [x, y as f32 * 0.25, *z as f32 * 0.1],
                            // A wall along y: every corner at the first one's x.
                            1 => [c[0].0 as f32 * 0.25 + c[0].2 as f32 * 0.0625, y as f32 * 0.25, (*z as i32 + q * 7 + x as i32) as f32 * 0.1],
                            _ => [x, y as f32 * 0.25, (*z as i32 + q * 5) as f32 * 0.1],
                        }
                    };
                    c.map(corner)
                })
                .collect();
            let rect = CellRect { x0: 3, y0: -1, width: 30, height: 25 };
            let areas: Vec<u8> = (0..triangles.len()).map(|i| (i % 3) as u8).collect();
            let run = |fast_paths| {
                let mut field = SpanField::empty(CellRect::default(), CellRect::default());
                rasterize_with::<1>(&mut Scratch::default(), (&mut field, &mut []), &frame, [&params], (rect, rect), (&triangles, &areas), fast_paths);
                field
            };
            let (fast, general) = (run(true), run(false));
            proptest::prop_assert_eq!(&fast.column_start, &general.column_start);
            proptest::prop_assert_eq!(&fast.spans, &general.spans);

            // Agents of other slopes and climbs at once: each gets the tops it gets alone.
            let mut agents = vec![params];
            for (slope, climb) in [(10.0, 0.0), (60.0, 1.0), (30.0, 3.0)] {
                let mut c = tessera_config::BakeConfig::default();
                c.agent.max_slope = slope;
                c.agent.max_climb = climb;
                agents.push(c.voxel_params());
            }
            let scratch = &mut Scratch::default();
            for n in 1..=MAX_AGENTS_AT_ONCE {
                let group: Vec<&VoxelParams> = agents[..n].iter().collect();
                let mut field = SpanField::empty(CellRect::default(), CellRect::default());
                let mut others = Vec::new();
                rasterize_agents_into(scratch, &mut field, &mut others, &frame, &group, rect, rect, (&triangles, &areas));
                proptest::prop_assert_eq!(&field, &fast);
                for (agent, flags) in group[1..].iter().zip(&others) {
                    let alone = rasterize(&frame, agent, rect, rect, &triangles, &areas);
                    let mut theirs = field.clone();
                    for (s, &f) in theirs.spans.iter_mut().zip(flags) {
                        s.set_flags(f).unwrap();
                    }
                    proptest::prop_assert_eq!(flags.len(), field.spans.len());
                    proptest::prop_assert_eq!(&theirs, &alone);
                }
            }
        }
    }

    #[test]
    fn cover_is_half_open() {
        assert_eq!(cover(0.0, 1.0), (0, 0));
        assert_eq!(cover(0.5, 1.0), (0, 0));
        assert_eq!(cover(0.5, 1.5), (0, 1));
        assert_eq!(cover(2.0, 2.0), (2, 2));
        assert_eq!(cover(-0.5, 0.0), (-1, -1));
    }

    #[test]
    fn voxel_floor_is_the_floor_clamped_at_zero() {
        for z in [
            -3.5, -1.0, -0.25, 0.0, 0.25, 1.0, 7.999, 8.0, 1e9, 4.3e9, 1e300,
        ] {
            let want = floor_i64(z).clamp(0, u32::MAX as i64) as u32;
            assert_eq!(voxel_floor(z), want, "{z}");
        }
        assert_eq!(voxel_floor(f64::NAN), 0);
    }

    fn top(walkable: bool, area: u8) -> Top {
        Top { walkable, area }
    }

    #[test]
    fn merging_spans() {
        let mut c = Columns::new(Vec::new(), 1, [1], 0);
        c.add(0, 10, 12, [top(false, 2)]);
        c.add(0, 0, 3, [top(true, 0)]);
        c.add(0, 20, 25, [top(true, 1)]);
        // Bridges the first two (touching at 3 and overlapping at 10): top 12, from the
        // unwalkable span whose top is higher by more than the threshold.
        c.add(0, 3, 10, [top(true, 0)]);
        let mut f = SpanField::empty(CellRect::default(), CellRect::default());
        c.pack_into(
            &mut f,
            &mut [],
            CellRect {
                x0: 0,
                y0: 0,
                width: 1,
                height: 1,
            },
            CellRect {
                x0: 0,
                y0: 0,
                width: 1,
                height: 1,
            },
        );
        assert_eq!(
            f.spans,
            vec![
                Span {
                    zmin: 0,
                    zmax: 12,
                    walkable: false,
                    area: 2
                },
                Span {
                    zmin: 20,
                    zmax: 25,
                    walkable: true,
                    area: 1
                }
            ]
        );
        // Tops within the threshold: walkable if either is, the walkable one's area.
        let mut c = Columns::new(Vec::new(), 1, [2], 0);
        c.add(0, 0, 10, [top(false, 3)]);
        c.add(0, 5, 11, [top(true, 1)]);
        assert_eq!(c.pool[0].top, [top(true, 1)]);
        // Both walkable: the higher area id; a blocked area's span is packed unwalkable.
        let mut c = Columns::new(Vec::new(), 1, [2], 1 << 4);
        c.add(0, 0, 10, [top(true, 4)]);
        c.add(0, 5, 11, [top(true, 0)]);
        assert_eq!(c.pool[0].top, [top(true, 4)]);
        let one = CellRect {
            x0: 0,
            y0: 0,
            width: 1,
            height: 1,
        };
        let mut f = SpanField::empty(one, one);
        c.pack_into(&mut f, &mut [], one, one);
        assert_eq!(
            f.spans,
            vec![Span {
                zmin: 0,
                zmax: 11,
                walkable: false,
                area: 4
            }]
        );
    }

    /// The columns against a plain sorted list per column (the same rule for two spans that
    /// meet, [`merged`]), over many random adds (below, between, over and above what is there), with nodes reused.
    #[test]
    fn columns_agree_with_sorted_lists() {
        let cells = 5;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as u32
        };
        for round in 0..200 {
            let mut columns = Columns::new(Vec::new(), cells, [2], 0);
            let mut lists: Vec<Vec<Span>> = vec![Vec::new(); cells];
            for _ in 0..(round % 40) {
                let (col, zmin) = (next(cells as u32) as usize, next(60));
                let zmax = zmin + 1 + next(6);
                let t = top(next(2) == 1, next(3) as u8);
                columns.add(col, zmin, zmax, [t]);
                let list = &mut lists[col];
                let mut s = Span {
                    zmin,
                    zmax,
                    walkable: t.walkable,
                    area: t.area,
                };
                list.retain(|c| {
                    if c.zmax < s.zmin || c.zmin > s.zmax {
                        return true;
                    }
                    let merged_top;
                    (s.zmin, s.zmax, merged_top) = merged(
                        (s.zmin, s.zmax, [top(s.walkable, s.area)]),
                        (c.zmin, c.zmax, [top(c.walkable, c.area)]),
                        &[2],
                    );
                    (s.walkable, s.area) = (merged_top[0].walkable, merged_top[0].area);
                    false
                });
                list.push(s);
                list.sort_by_key(|c| c.zmin);
            }
            let rect = CellRect {
                x0: 0,
                y0: 0,
                width: cells as u32,
                height: 1,
            };
            let mut f = SpanField::empty(CellRect::default(), CellRect::default());
            columns.pack_into(&mut f, &mut [], rect, rect);
            let expected: Vec<Span> = lists.concat();
            assert_eq!(f.spans, expected, "round {round}");
        }
    }
}
