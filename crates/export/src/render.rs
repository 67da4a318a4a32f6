//! Top-down preview images.
//!
//! The plan (internal x to the right, internal y up the image: north up for a Z-up scene, -Z
//! up for a Y-up one) on a grey background. Every polygon is filled in its region's colour,
//! shaded lighter the higher it stands, painted from the lowest to the highest so that upper
//! floors hide lower ones. Outline edges (no polygon across) are drawn darker, portal edges
//! faintly (only when polygons are big enough on the image for them to mean something, and
//! never over a higher floor). Links are magenta strokes with a dot, a path a thick dark line
//! with a yellow core, its ends green (start) and red (end) discs.
//!
//! Filling is a scanline over pixel centres (a pixel belongs to a polygon when its centre is
//! inside, half-open on edges), so neighbouring polygons tile the image without gaps or
//! double coverage, however far the world is scaled down.
//!
//! Size: the long side is at most `max_size` pixels (the world is scaled down to fit), and no
//! finer than [`RenderOptions::pixels_per_cell`] (default [`PIXELS_PER_CELL`]) pixels per voxel
//! cell (a small world is not blown up to the maximum), but at least 256 pixels when
//! `max_size` allows.

use rayon::prelude::*;
use std::io::Cursor;
use std::path::Path;

use tessera_navmesh::{ArchivedNavMesh, Frame, NONE};

use crate::{region_colour, ExportError, LINK_COLOUR};

/// An 8-bit RGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub [u8; 3]);

/// What is not walkable.
pub const BACKGROUND: Rgb = Rgb([110, 110, 114]);
/// Finest resolution of a picture by default: pixels per voxel cell.
pub const PIXELS_PER_CELL: f64 = 4.0;
/// Finest resolution of the preview every bake writes: a pixel per cell, so that drawing it
/// costs a small world next to nothing.
pub const PREVIEW_PIXELS_PER_CELL: f64 = 1.0;
/// Default long side of a preview.
pub const DEFAULT_MAX_SIZE: u32 = 2048;

const EDGE: Rgb = Rgb([20, 20, 24]);
/// The tile grid (blended faintly).
pub const TILE_GRID: Rgb = Rgb([255, 255, 255]);
const PATH_OUTER: Rgb = Rgb([25, 25, 30]);
const PATH_INNER: Rgb = Rgb([255, 214, 0]);
const START: Rgb = Rgb([20, 190, 60]);
const END: Rgb = Rgb([225, 30, 30]);

/// Mixes `c` into the pixel `px` (three bytes) with opacity `alpha` (0..=1), in 1/256 steps.
fn blend(px: &mut [u8], c: Rgb, alpha: f32) {
    let a = (alpha.clamp(0.0, 1.0) * 256.0) as u32;
    for (old, new) in px.iter_mut().zip(c.0) {
        *old = ((*old as u32 * (256 - a) + new as u32 * a + 128) >> 8) as u8;
    }
}

/// A plain RGB raster, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbImage {
    pub width: u32,
    pub height: u32,
    /// `width * height * 3` bytes.
    pub pixels: Vec<u8>,
}

impl RgbImage {
    pub fn new(width: u32, height: u32, fill: Rgb) -> RgbImage {
        let n = width as usize * height as usize;
        let pixels = fill.0.repeat(n);
        RgbImage {
            width,
            height,
            pixels,
        }
    }

    /// The pixel at column `x`, row `y` (0 at the top).
    pub fn get(&self, x: u32, y: u32) -> Rgb {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        Rgb([self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]])
    }

    fn index(&self, x: i64, y: i64) -> Option<usize> {
        (x >= 0 && y >= 0 && x < self.width as i64 && y < self.height as i64)
            .then(|| y as usize * self.width as usize + x as usize)
    }

    fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if let Some(i) = self.index(x, y) {
            self.pixels[i * 3..i * 3 + 3].copy_from_slice(&c.0);
        }
    }

    /// Mixes `c` into pixel `i` with opacity `alpha` (0..=1), in 1/256 steps.
    fn blend(&mut self, i: usize, c: Rgb, alpha: f32) {
        blend(&mut self.pixels[i * 3..i * 3 + 3], c, alpha);
    }

    /// The PNG file's bytes, with `text` as tEXt chunks (keyword, text).
    pub fn to_png(&self, text: &[(&str, String)]) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            // fdeflate's PNG-tuned mode: several times faster than the default level on these
            // flat-coloured plans, for a file a few percent larger (the preview is written at
            // the end of every bake and must cost it next to nothing).
            enc.set_compression(png::Compression::Fast);
            for (k, v) in text {
                enc.add_text_chunk(k.to_string(), v.clone())
                    .map_err(|e| e.to_string())?;
            }
            let mut w = enc.write_header().map_err(|e| e.to_string())?;
            w.write_image_data(&self.pixels)
                .map_err(|e| e.to_string())?;
            w.finish().map_err(|e| e.to_string())?;
        }
        Ok(out)
    }

    /// Decodes an 8-bit RGB or RGBA PNG (alpha dropped).
    pub fn from_png(bytes: &[u8]) -> Result<RgbImage, String> {
        let mut reader = png::Decoder::new(Cursor::new(bytes))
            .read_info()
            .map_err(|e| e.to_string())?;
        let mut buf = vec![0; reader.output_buffer_size().ok_or("image too large")?];
        let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
        let channels = match (info.color_type, info.bit_depth) {
            (png::ColorType::Rgb, png::BitDepth::Eight) => 3,
            (png::ColorType::Rgba, png::BitDepth::Eight) => 4,
            other => return Err(format!("unsupported PNG layout {other:?}")),
        };
        let pixels = buf[..info.buffer_size()]
            .chunks(info.line_size)
            .flat_map(|row| row[..info.width as usize * channels].chunks(channels))
            .flat_map(|px| [px[0], px[1], px[2]])
            .collect();
        Ok(RgbImage {
            width: info.width,
            height: info.height,
            pixels,
        })
    }
}

/// How the plan maps onto the image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanView {
    /// Internal-frame plan coordinates of the image's left edge and top edge (past the margin).
    pub min_x: f64,
    pub max_y: f64,
    /// Pixels per world unit.
    pub scale: f64,
    /// Empty pixels around the mesh.
    pub margin: f64,
    pub width: u32,
    pub height: u32,
}

impl PlanView {
    /// The view of `mesh` whose long side is at most `max_size` pixels (at least 16).
    pub fn fit(mesh: &ArchivedNavMesh, max_size: u32) -> PlanView {
        PlanView::fit_at(mesh, max_size, PIXELS_PER_CELL)
    }

    /// [`PlanView::fit`] no finer than `pixels_per_cell` pixels per voxel cell.
    pub fn fit_at(mesh: &ArchivedNavMesh, max_size: u32, pixels_per_cell: f64) -> PlanView {
        let lo = mesh.bounds_min.map(|c| c.to_native() as f64);
        let hi = mesh.bounds_max.map(|c| c.to_native() as f64);
        let sane =
            lo.iter().chain(hi.iter()).all(|c| c.is_finite()) && hi[0] >= lo[0] && hi[1] >= lo[1];
        let (lo, hi) = if sane { (lo, hi) } else { ([0.0; 3], [0.0; 3]) };
        let (ex, ey) = ((hi[0] - lo[0]).max(1e-3), (hi[1] - lo[1]).max(1e-3));
        let long = ex.max(ey);
        let max_size = max_size.max(16);
        let margin = (max_size / 64).clamp(2, 16) as f64;
        let room = max_size as f64 - 2.0 * margin;
        let cell = mesh.frame.cell_size.to_native() as f64;
        let mut scale = room / long;
        if cell.is_finite() && cell > 0.0 {
            scale = scale.min(pixels_per_cell / cell);
        }
        let least = (256.min(max_size) as f64 - 2.0 * margin) / long;
        scale = scale.max(least).min(room / long);
        let side = |e: f64| ((e * scale).ceil() + 2.0 * margin).clamp(1.0, max_size as f64) as u32;
        PlanView {
            min_x: lo[0],
            max_y: hi[1],
            scale,
            margin,
            width: side(ex),
            height: side(ey),
        }
    }

    /// An internal point's position on the image (continuous: pixel `(i, j)` covers
    /// `[i, i + 1) x [j, j + 1)`).
    pub fn pixel(&self, p: [f32; 3]) -> [f64; 2] {
        [
            self.margin + (p[0] as f64 - self.min_x) * self.scale,
            self.margin + (self.max_y - p[1] as f64) * self.scale,
        ]
    }

    /// The pixel under a scene point (its own coordinates and up axis), if on the image.
    pub fn scene_pixel(&self, frame: &Frame, p: [f64; 3]) -> Option<[u32; 2]> {
        let q = self.pixel(frame.to_internal(p));
        let (x, y) = (q[0].floor(), q[1].floor());
        (x >= 0.0 && y >= 0.0 && x < self.width as f64 && y < self.height as f64)
            .then_some([x as u32, y as u32])
    }

    /// World units one pixel spans.
    pub fn units_per_pixel(&self) -> f64 {
        1.0 / self.scale
    }
}

/// What to draw besides the mesh.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Long side limit in pixels.
    pub max_size: u32,
    /// A path to draw, in the scene's coordinates (as `Query::path` gives it).
    pub path: Vec<[f64; 3]>,
    /// Start and end markers, in the scene's coordinates.
    pub from: Option<[f64; 3]>,
    pub to: Option<[f64; 3]>,
    /// The bake's tile edge in internal units (tiles start at the internal plan origin), drawn
    /// as a faint grid; `None` draws none.
    pub tile: Option<f32>,
    /// Finest resolution: pixels per voxel cell.
    pub pixels_per_cell: f64,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            max_size: DEFAULT_MAX_SIZE,
            path: Vec::new(),
            from: None,
            to: None,
            tile: None,
            pixels_per_cell: PIXELS_PER_CELL,
        }
    }
}

/// Fills the polygon `pts` (image coordinates) at pixel centres, even-odd, calling `put` with
/// each run of covered pixel indices in a row, for the rows in `rows` of a `w` by `h` image.
fn fill(
    (w, h): (i64, i64),
    rows: std::ops::Range<i64>,
    pts: &[[f64; 2]],
    xs: &mut Vec<f64>,
    mut put: impl FnMut(std::ops::Range<usize>),
) {
    let (ymin, ymax) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p[1]), b.max(p[1]))
        });
    if !(ymin.is_finite() && ymax.is_finite()) {
        return;
    }
    let row0 = ((ymin - 0.5).ceil() as i64).max(0).max(rows.start);
    let row1 = ((ymax - 0.5).floor() as i64).min(h - 1).min(rows.end - 1);
    for row in row0..=row1 {
        let yc = row as f64 + 0.5;
        xs.clear();
        // Each edge from the corner before (the pushes' order does not matter: sorted below).
        let mut a = pts[pts.len() - 1];
        for &b in pts {
            let a = std::mem::replace(&mut a, b);
            if (a[1] <= yc) != (b[1] <= yc) {
                xs.push(a[0] + (yc - a[1]) * (b[0] - a[0]) / (b[1] - a[1]));
            }
        }
        xs.sort_by(f64::total_cmp);
        for span in xs.chunks_exact(2) {
            let c0 = ((span[0] - 0.5).ceil() as i64).max(0);
            let c1 = ((span[1] - 0.5).ceil() as i64 - 1).min(w - 1);
            if c0 <= c1 {
                put((row * w + c0) as usize..(row * w + c1 + 1) as usize);
            }
        }
    }
}

/// The pixels a one-pixel line from `a` to `b` crosses (Bresenham between the pixels holding
/// the ends), each once, clipped to the image.
fn thin_line((width, height): (u32, u32), a: [f64; 2], b: [f64; 2], mut put: impl FnMut(usize)) {
    let limit = 4.0 * (width as f64 + height as f64);
    if a.iter()
        .chain(b.iter())
        .any(|c| !c.is_finite() || c.abs() > limit)
    {
        return;
    }
    let (mut x, mut y) = (a[0].floor() as i64, a[1].floor() as i64);
    let (x1, y1) = (b[0].floor() as i64, b[1].floor() as i64);
    let (dx, dy) = ((x1 - x).abs(), -(y1 - y).abs());
    let (sx, sy) = (if x < x1 { 1 } else { -1 }, if y < y1 { 1 } else { -1 });
    let mut err = dx + dy;
    loop {
        if x >= 0 && y >= 0 && x < width as i64 && y < height as i64 {
            put(y as usize * width as usize + x as usize);
        }
        if x == x1 && y == y1 {
            break;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x += sx;
        }
        if e2 <= dx {
            err += dx;
            y += sy;
        }
    }
}

/// A filled disc of `radius` pixels centred at `c`.
fn disc(img: &mut RgbImage, c: [f64; 2], radius: f64, colour: Rgb) {
    let r = radius.ceil() as i64 + 1;
    let (cx, cy) = (c[0].floor() as i64, c[1].floor() as i64);
    for y in cy - r..=cy + r {
        for x in cx - r..=cx + r {
            let (px, py) = (x as f64 + 0.5 - c[0], y as f64 + 0.5 - c[1]);
            if px * px + py * py <= radius * radius {
                img.set(x, y, colour);
            }
        }
    }
}

/// A stroke `radius` pixels either side of the segment `a`..`b`, round ends: discs stamped
/// along it at most half a radius apart.
fn thick_line(img: &mut RgbImage, a: [f64; 2], b: [f64; 2], radius: f64, colour: Rgb) {
    let limit = 4.0 * (img.width as f64 + img.height as f64);
    if a.iter()
        .chain(b.iter())
        .any(|c| !c.is_finite() || c.abs() > limit)
    {
        return;
    }
    let len = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
    let steps = (len / (radius * 0.5).max(0.5)).ceil().max(1.0) as usize;
    for s in 0..=steps {
        let t = s as f64 / steps as f64;
        disc(
            img,
            [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t],
            radius,
            colour,
        );
    }
}

/// Rows in a band of the picture drawn by one thread at a time.
const BAND_ROWS: usize = 32;

/// A drawing thread's scratch, kept from one band to the next.
#[derive(Default)]
struct BandScratch {
    top: Vec<f32>,
    pts: Vec<[f64; 2]>,
    xs: Vec<f64>,
    ids: Vec<u32>,
}

/// Draws `mesh` top-down as [`RenderOptions`] say; returns the image and its view.
pub fn render(mesh: &ArchivedNavMesh, options: &RenderOptions) -> (RgbImage, PlanView) {
    render_in_bands(mesh, options, BAND_ROWS)
}

/// [`render`], the picture drawn in bands of `band_rows` rows (any height gives the same
/// pixels).
pub(crate) fn render_in_bands(
    mesh: &ArchivedNavMesh,
    options: &RenderOptions,
    band_rows: usize,
) -> (RgbImage, PlanView) {
    let view = PlanView::fit_at(mesh, options.max_size, options.pixels_per_cell);
    let frame = mesh.frame.native();
    let np = mesh.polys.len() as u32;

    // Each polygon's mean corner height and the image rows it spans (fill and edges, with a
    // row to spare either side), in one pass over the corners in the file's order.
    let spans: Vec<(f32, i64, i64)> = (0..np)
        .into_par_iter()
        .map(|p| {
            let (mut sum, mut n) = (0.0f32, 0u32);
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for v in mesh.poly_vert_ids(p) {
                let c = mesh.vert(v);
                sum += c[2];
                n += 1;
                let y = view.pixel(c)[1];
                (lo, hi) = (lo.min(y), hi.max(y));
            }
            let z = sum / n.max(1) as f32;
            if lo.is_finite() && hi.is_finite() {
                (z, lo.floor() as i64 - 1, hi.floor() as i64 + 1)
            } else {
                // A point the pixel mapping cannot place: let every band look at it.
                (z, i64::MIN, i64::MAX)
            }
        })
        .collect();
    // Polygons lowest first (ties by number): a key per polygon, its height's bits made to
    // sort as `total_cmp` orders the heights, then its number.
    let mut keys: Vec<u64> = spans
        .par_iter()
        .enumerate()
        .map(|(p, &(z, _, _))| {
            let bits = z.to_bits();
            let ordered = if bits >> 31 == 1 {
                !bits
            } else {
                bits | 1 << 31
            };
            (ordered as u64) << 32 | p as u64
        })
        .collect();
    keys.par_sort_unstable();
    let order: Vec<u32> = keys.into_iter().map(|k| k as u32).collect();
    let (zlo, zhi) = spans
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &(z, _, _)| {
            (a.min(z), b.max(z))
        });
    let shade = |z: f32| -> f32 {
        if zhi - zlo > 1e-3 {
            0.72 + 0.28 * (z - zlo) / (zhi - zlo)
        } else {
            1.0
        }
    };

    // Polygons, then their edges, in bands of rows drawn in parallel: a pixel sees the same
    // polygons and edges in the same order whatever the bands, so the picture is the same.
    let total_area: f64 = mesh
        .polys
        .iter()
        .map(|p| p.area.to_native().max(0.0) as f64)
        .sum();
    let px_per_poly = total_area * view.scale * view.scale / np.max(1) as f64;
    // Edges: outlines always, portals when a polygon averages at least 30 pixels.
    let inner_edges = px_per_poly >= 30.0;
    let hidden_above = (frame.agent_height * 0.5).max(0.25);
    let (w, h) = (view.width as usize, view.height as usize);
    let colours: Vec<Rgb> = order
        .par_iter()
        .map(|&p| {
            let base = region_colour(mesh.polys[p as usize].region.to_native());
            let k = shade(spans[p as usize].0);
            Rgb(base.0.map(|c| (c as f32 * k).round() as u8))
        })
        .collect();
    // Which polygons (drawing positions, in drawing order) each band of rows must look at:
    // the bands are short, so that a thread's scratch for a band stays in its cache.
    let band_rows = band_rows.clamp(1, h.max(1));
    let bands = h.div_ceil(band_rows);
    let band_range = |&(_, lo, hi): &(f32, i64, i64)| {
        let last = bands as i64 - 1;
        let first = lo.div_euclid(band_rows as i64).clamp(0, last) as usize;
        (
            first,
            hi.div_euclid(band_rows as i64).clamp(0, last) as usize,
        )
    };
    let mut starts = vec![0usize; bands + 1];
    for &p in &order {
        let (a, b) = band_range(&spans[p as usize]);
        for s in &mut starts[a + 1..=b + 1] {
            *s += 1;
        }
    }
    for b in 0..bands {
        starts[b + 1] += starts[b];
    }
    let mut in_band = vec![0u32; starts[bands]];
    let mut next = starts.clone();
    for (i, &p) in order.iter().enumerate() {
        let (a, b) = band_range(&spans[p as usize]);
        for n in &mut next[a..=b] {
            in_band[*n] = i as u32;
            *n += 1;
        }
    }
    // The image starts as zeroed memory the bands fill themselves, so that its pages are
    // first touched by the threads drawing them.
    let mut img = RgbImage {
        width: view.width,
        height: view.height,
        pixels: vec![0; w * h * 3],
    };
    img.pixels
        .par_chunks_mut(band_rows * w * 3)
        .enumerate()
        .for_each_init(BandScratch::default, |scratch, (b, pixels)| {
            for px in pixels.chunks_exact_mut(3) {
                px.copy_from_slice(&BACKGROUND.0);
            }
            let first = b * band_rows;
            let rows = first as i64..(first + pixels.len() / (3 * w)) as i64;
            let offset = first * w;
            let BandScratch { top, pts, xs, ids } = scratch;
            // The height of what each pixel shows, so edges are not drawn over higher floors.
            top.clear();
            top.resize(pixels.len() / 3, f32::NEG_INFINITY);
            let drawn = &in_band[starts[b]..starts[b + 1]];
            for &i in drawn {
                let p = order[i as usize];
                let (z, colour) = (spans[p as usize].0, colours[i as usize]);
                pts.clear();
                pts.extend(mesh.poly_vert_ids(p).map(|v| view.pixel(mesh.vert(v))));
                fill((w as i64, h as i64), rows.clone(), pts, xs, |run| {
                    let run = run.start - offset..run.end - offset;
                    for px in pixels[run.start * 3..run.end * 3].chunks_exact_mut(3) {
                        px.copy_from_slice(&colour.0);
                    }
                    top[run].fill(z);
                });
            }
            let band = offset..offset + top.len();
            for &i in drawn {
                let p = order[i as usize];
                let z = spans[p as usize].0;
                ids.clear();
                ids.extend(mesh.poly_vert_ids(p));
                for (k, n) in mesh.poly_neighbours(p).enumerate() {
                    let alpha = if n == NONE {
                        0.55
                    } else if inner_edges && n > p {
                        0.14
                    } else {
                        continue;
                    };
                    let a = view.pixel(mesh.vert(ids[k]));
                    let b = view.pixel(mesh.vert(*ids.get(k + 1).unwrap_or(&ids[0])));
                    thin_line((view.width, view.height), a, b, |i| {
                        if band.contains(&i) && top[i - offset] <= z + hidden_above {
                            let i = i - offset;
                            blend(&mut pixels[i * 3..i * 3 + 3], EDGE, alpha);
                        }
                    });
                }
            }
        });

    // The tile grid, faint, under links and the path; only when tiles are at least 8 pixels
    // apart.
    if let Some(t) = options
        .tile
        .map(f64::from)
        .filter(|&t| t > 0.0 && t * view.scale >= 8.0)
    {
        let (w, h) = (view.width as f64, view.height as f64);
        // Internal coordinates at the image's edges.
        let x_lo = view.min_x - view.margin / view.scale;
        let y_hi = view.max_y + view.margin / view.scale;
        // The columns and rows the lines fall on, each pixel of them blended once.
        let on_image = |c: f64, n: u32| {
            let c = c.floor();
            (c >= 0.0 && c < n as f64).then_some(c as usize)
        };
        let mut columns: Vec<usize> = ((x_lo / t).ceil() as i64
            ..=((x_lo + w / view.scale) / t).floor() as i64)
            .filter_map(|k| {
                on_image(
                    view.margin + (k as f64 * t - view.min_x) * view.scale,
                    view.width,
                )
            })
            .collect();
        let mut rows: Vec<usize> = (((y_hi - h / view.scale) / t).ceil() as i64
            ..=(y_hi / t).floor() as i64)
            .filter_map(|k| {
                on_image(
                    view.margin + (view.max_y - k as f64 * t) * view.scale,
                    view.height,
                )
            })
            .collect();
        for lines in [&mut columns, &mut rows] {
            lines.sort_unstable();
            lines.dedup();
        }
        let width = view.width as usize;
        let mut on_row = vec![false; view.height as usize];
        for &r in &rows {
            on_row[r] = true;
            for i in r * width..(r + 1) * width {
                img.blend(i, TILE_GRID, 0.25);
            }
        }
        for &c in &columns {
            for r in (0..view.height as usize).filter(|&r| !on_row[r]) {
                img.blend(r * width + c, TILE_GRID, 0.25);
            }
        }
    }

    // Links, then the path and its ends on top of everything.
    let stroke = (view.width.max(view.height) as f64 / 500.0).clamp(1.5, 5.0);
    for l in mesh.links.iter() {
        let a = view.pixel(l.a.map(|c| c.to_native()));
        let b = view.pixel(l.b.map(|c| c.to_native()));
        thick_line(&mut img, a, b, stroke * 0.6, LINK_COLOUR);
        disc(
            &mut img,
            [(a[0] + b[0]) * 0.5, (a[1] + b[1]) * 0.5],
            stroke * 1.5,
            LINK_COLOUR,
        );
    }
    let scene_px = |p: [f64; 3]| view.pixel(frame.to_internal(p));
    let path: Vec<[f64; 2]> = options.path.iter().map(|&p| scene_px(p)).collect();
    for (radius, colour) in [(stroke * 1.8, PATH_OUTER), (stroke * 0.9, PATH_INNER)] {
        for w in path.windows(2) {
            thick_line(&mut img, w[0], w[1], radius, colour);
        }
    }
    for (end, colour) in [(options.from, START), (options.to, END)] {
        if let Some(p) = end {
            let c = scene_px(p);
            disc(&mut img, c, stroke * 3.6, PATH_OUTER);
            disc(&mut img, c, stroke * 2.7, colour);
        }
    }
    (img, view)
}

/// Renders `mesh` and writes the PNG to `path` (atomically). The PNG's `tessera-view` text
/// chunk says how plan coordinates map to pixels.
pub fn write_preview(
    mesh: &ArchivedNavMesh,
    options: &RenderOptions,
    path: &Path,
) -> Result<PlanView, ExportError> {
    let (img, view) = render(mesh, options);
    let frame = mesh.frame.native();
    let about = serde_json::json!({
        "units_per_pixel": view.units_per_pixel(),
        "margin_px": view.margin,
        "internal_min_x": view.min_x,
        "internal_max_y": view.max_y,
        "origin_z_up": frame.origin,
        "source_up": frame.up_axis().to_string(),
    })
    .to_string();
    let bytes = img
        .to_png(&[("Software", "tessera".into()), ("tessera-view", about)])
        .map_err(|message| ExportError::Png {
            path: path.to_path_buf(),
            message,
        })?;
    crate::write_atomic(path, |w| w.write_all(&bytes))?;
    Ok(view)
}
