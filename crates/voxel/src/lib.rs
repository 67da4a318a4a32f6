//! Tiled 2.5D voxelization (seed 000, sections 2.2-2.3).
//!
//! Based on: seed 000 (tiled voxelization into span columns, slope filtering, clearance
//! tagging), with the walkable-climb filters and agent-radius erosion that users of Recast
//! expect.
//!
//! [`voxelize_tile`] turns one tile's triangles into a [`SpanField`]:
//!
//! 1. [`rasterize`]: each triangle is clipped to every grid row, then every column, it touches;
//!    the clipped polygon's height range becomes a span; overlapping spans of a column merge.
//!    A triangle whose slope exceeds the limit makes unwalkable spans.
//! 2. [`filters`]: low hanging obstacles (a step up within the climb stays walkable), ledges
//!    (a drop deeper than the climb to a neighbour, or neighbours too uneven), clearance (less
//!    than the agent height to the span above), then erosion by the agent radius.
//!
//! **Tiling invariance.** Every clip is computed from the triangle and the global row or column
//! number alone, in f64 global cell units, never from tile-relative coordinates or from
//! earlier clips, so a column's spans are bit-for-bit the same whichever tile computes them.
//! Filters look at most `radius + 1` cells away; tiles are voxelized with a band of
//! `radius + 3` cells, and the field returned keeps the core plus a ring of [`RING`] cells.
//!
//! Pure: no I/O, no threads.

pub mod filters;
pub mod rasterize;

use tessera_artifacts::{
    ArtifactError, CellRect, GridFrame, Levels, RasterRecord, SpanField, TileCoord, Triangle,
};
use tessera_config::VoxelParams;
use tessera_geom::floor_i64;

/// The grid a bake voxelizes on: its corner at the rebased origin `origin` (world coordinates),
/// cells covering the rebased extent up to `bounds_max`, tiles and band from the settings (an
/// `auto` tile edge evened out over the world's longer side).
pub fn grid_frame(origin: [f64; 3], bounds_max: [f32; 3], params: &VoxelParams) -> GridFrame {
    let mut frame = GridFrame::new(
        origin,
        bounds_max.map(|v| v.max(0.0) as f64),
        params.cell_size,
        params.cell_height,
        params.tile_size,
        params.band,
    );
    if params.tile_even {
        let longer = frame.cells[0].max(frame.cells[1]);
        frame.tile_size = tessera_config::even_tile_edge(longer, params.tile_size);
    }
    frame
}

/// Cells kept around a tile's core in the field [`voxelize_tile`] returns. Segmentation and
/// tracing read the core and the ring's inner cells (a core cell's neighbours); surface labels
/// ([`Levels`]) of those cells look one cell further. Both rings are exact: they lie
/// `band - 1` and `band - 2` cells inside the voxelized rectangle, beyond the reach of
/// the filters (`radius + 1`).
pub const RING: u32 = 2;

/// How this bake's floors group into regions ([`Levels`]), from the settings alone.
pub fn levels(params: &VoxelParams) -> Levels {
    Levels {
        step: params.region_step,
        surface: params.region_surface,
        block: params.region_block,
        climb: params.walkable_climb,
    }
}

/// A voxelized tile (or part of one) and what it cost.
pub struct VoxelizedTile {
    /// The core plus a ring of [`RING`] cells.
    pub field: SpanField,
    /// Spans in the whole voxelized rectangle (core and band) before cropping: what the
    /// working memory grew with.
    pub rasterized_spans: u64,
}

/// Voxelizes one tile: rasterize the triangles (`areas`: the area id of each) over the tile
/// grown by its band, filter, and return the core plus a ring of [`RING`] cells.
pub fn voxelize_tile(
    frame: &GridFrame,
    params: &VoxelParams,
    tile: TileCoord,
    triangles: &[Triangle],
    areas: &[u8],
) -> VoxelizedTile {
    voxelize_part(frame, params, frame.tile_core(tile), triangles, areas)
}

/// Voxelizes any rectangle of cells `core` (a tile or a part of one) the same way. By tiling
/// invariance, the parts of a tile give exactly the tile's columns.
pub fn voxelize_part(
    frame: &GridFrame,
    params: &VoxelParams,
    core: CellRect,
    triangles: &[Triangle],
    areas: &[u8],
) -> VoxelizedTile {
    let mut ws = Workspace::default();
    let rasterized_spans = voxelize_in(&mut ws, frame, params, core, triangles, areas);
    VoxelizedTile {
        rasterized_spans,
        field: std::mem::replace(&mut ws.output, empty_field()),
    }
}

/// The buffers a worker reuses from one tile to the next: the rasterizer's linked columns,
/// the field over the tile and its band, erosion's links and distances, and the output (the
/// core plus its ring). Reusing them spares the kernel faulting in and zeroing fresh
/// pages for every tile.
pub struct Workspace {
    raster: rasterize::Scratch,
    field: SpanField,
    /// The other agents' tops of `field`, when a group of agents is rasterized at once.
    others: Vec<Vec<u8>>,
    erode: filters::ErodeScratch,
    output: SpanField,
}

impl Default for Workspace {
    fn default() -> Workspace {
        Workspace {
            raster: rasterize::Scratch::default(),
            field: empty_field(),
            others: Vec::new(),
            erode: filters::ErodeScratch::default(),
            output: empty_field(),
        }
    }
}

impl Workspace {
    /// The field [`voxelize_in`] left: the core plus its ring.
    pub fn output(&self) -> &SpanField {
        &self.output
    }

    /// Bytes the buffers hold (their capacity, not what the last tile used).
    pub fn byte_size(&self) -> u64 {
        (self.raster.byte_size()
            + self.field.capacity_bytes()
            + self.others.iter().map(Vec::capacity).sum::<usize>()
            + self.erode.byte_size()
            + self.output.capacity_bytes()) as u64
    }
}

fn empty_field() -> SpanField {
    SpanField::empty(CellRect::default(), CellRect::default())
}

/// [`voxelize_part`] in the buffers of `ws`: the output is left in [`Workspace::output`].
/// Returns the spans rasterized in the whole voxelized rectangle (core and band).
pub fn voxelize_in(
    ws: &mut Workspace,
    frame: &GridFrame,
    params: &VoxelParams,
    core: CellRect,
    triangles: &[Triangle],
    areas: &[u8],
) -> u64 {
    voxelize_group_in(ws, frame, &[params], core, (triangles, areas), None)
}

/// [`voxelize_in`] for `group[0]`, rasterizing for the whole group of agents at once (at most
/// [`rasterize::MAX_AGENTS_AT_ONCE`], their settings alike but for the slope and the climb):
/// the rasterized field, with every agent's tops, is encoded into `record` (a
/// [`RasterRecord`]), from which [`voxelize_from_record`] voxelizes the others.
pub fn voxelize_agents_in(
    ws: &mut Workspace,
    frame: &GridFrame,
    group: &[&VoxelParams],
    core: CellRect,
    triangles: (&[Triangle], &[u8]),
    record: &mut Vec<u8>,
) -> u64 {
    voxelize_group_in(ws, frame, group, core, triangles, Some(record))
}

fn voxelize_group_in(
    ws: &mut Workspace,
    frame: &GridFrame,
    group: &[&VoxelParams],
    core: CellRect,
    triangles: (&[Triangle], &[u8]),
    record: Option<&mut Vec<u8>>,
) -> u64 {
    let rect = core.grown(frame.band);
    rasterize::rasterize_agents_into(
        &mut ws.raster,
        &mut ws.field,
        &mut ws.others,
        frame,
        group,
        rect,
        core,
        triangles,
    );
    if let Some(record) = record {
        RasterRecord::encode_into(&ws.field, &ws.others, record);
    }
    filter_and_crop(ws, group[0], core)
}

/// [`voxelize_in`] for agent `agent` of a group rasterized by [`voxelize_agents_in`], from
/// its `record` instead of the triangles: the same output.
pub fn voxelize_from_record(
    ws: &mut Workspace,
    frame: &GridFrame,
    params: &VoxelParams,
    core: CellRect,
    record: &[u8],
    agent: usize,
) -> Result<u64, ArtifactError> {
    ws.field = RasterRecord::decode(record, agent)?;
    if ws.field.rect != core.grown(frame.band) || ws.field.core != core {
        return Err(ArtifactError::Invalid {
            artifact: "rasterized field",
            what: format!(
                "it covers {:?}, not the tile {core:?} and its band",
                ws.field.rect
            ),
        });
    }
    Ok(filter_and_crop(ws, params, core))
}

/// Filters the rasterized field of `ws` for `params` and crops it to the core and its ring.
fn filter_and_crop(ws: &mut Workspace, params: &VoxelParams, core: CellRect) -> u64 {
    filters::filter_all_in(&mut ws.erode, &mut ws.field, params);
    ws.field.crop_into(&mut ws.output, core.grown(RING), core);
    ws.field.spans.len() as u64
}

/// An upper bound on the spans rasterizing `triangles` into `rect` can create: each triangle
/// adds at most one span per cell of its bounding box.
pub fn span_bound(frame: &GridFrame, rect: CellRect, triangles: &[Triangle]) -> u64 {
    let inv = 1.0 / frame.cell_size;
    let mut total = 0u64;
    for t in triangles {
        let lo = |a: usize| floor_i64(t[0][a].min(t[1][a]).min(t[2][a]) as f64 * inv);
        let hi = |a: usize| floor_i64(t[0][a].max(t[1][a]).max(t[2][a]) as f64 * inv);
        let w = hi(0).min(rect.x1() as i64 - 1) - lo(0).max(rect.x0 as i64) + 1;
        let h = hi(1).min(rect.y1() as i64 - 1) - lo(1).max(rect.y0 as i64) + 1;
        if w > 0 && h > 0 {
            total += (w * h) as u64;
        }
    }
    total
}

/// Splits `core` into parts (recursive halving of the longer side) until `cost(part)` is at
/// most `cap` or a part is down to `min_side` cells. Parts are returned in a fixed order.
pub fn split_parts(
    core: CellRect,
    cap: u64,
    min_side: u32,
    cost: &mut dyn FnMut(CellRect) -> u64,
) -> Vec<CellRect> {
    if cost(core) <= cap || (core.width <= min_side && core.height <= min_side) {
        return vec![core];
    }
    let (a, b) = if core.width >= core.height {
        let w = core.width / 2;
        (
            CellRect { width: w, ..core },
            CellRect {
                x0: core.x0 + w as i32,
                width: core.width - w,
                ..core
            },
        )
    } else {
        let h = core.height / 2;
        (
            CellRect { height: h, ..core },
            CellRect {
                y0: core.y0 + h as i32,
                height: core.height - h,
                ..core
            },
        )
    };
    let mut out = split_parts(a, cap, min_side, cost);
    out.extend(split_parts(b, cap, min_side, cost));
    out
}

/// Puts the parts of a tile back together: the field over `core` grown by one cell, each
/// column taken from a part whose output holds it (parts agree on shared ring columns).
pub fn assemble(core: CellRect, parts: &[SpanField]) -> SpanField {
    if let [only] = parts {
        if only.core == core {
            return only.clone();
        }
    }
    let rect = core.grown(RING);
    let mut out = SpanField::empty(rect, core);
    out.column_start.clear();
    out.column_start.push(0);
    for y in rect.y0..rect.y1() {
        for x in rect.x0..rect.x1() {
            let part = parts
                .iter()
                .find(|p| p.core.contains(x, y))
                .or_else(|| parts.iter().find(|p| p.rect.contains(x, y)))
                .expect("parts cover the tile and its ring");
            out.spans.extend_from_slice(part.column(x, y));
            out.column_start.push(out.spans.len() as u32);
        }
    }
    out
}

/// Working memory of voxelizing one tile, by the sizes of its structures.
pub mod memory {
    /// Bytes per cell of the voxelized rectangle: the rasterizer's head node of each column
    /// (16), column offsets of the field and of its cropped copy.
    pub const PER_CELL: u64 = 16 + 4 + 4;
    /// Bytes per rasterized span: the linked pool (16) and the packed field (12) alive together
    /// while packing, erosion's links, distance, queue entry and span-to-column map (16), the
    /// cropped copy (12) and its encoding (13), then what segmentation and contour tracing keep
    /// per span of the tile's field (labels 4, edge flags 12, cell of each span 8).
    pub const PER_SPAN: u64 = 16 + 12 + 16 + 12 + 13 + 4 + 12 + 8;

    /// The estimate for a tile of `cells` cells, `triangle_bytes` of triangles and `spans`
    /// rasterized spans.
    pub fn estimate(cells: u64, triangle_bytes: u64, spans: u64) -> u64 {
        cells * PER_CELL + triangle_bytes + spans * PER_SPAN
    }
}
