//! PNG previews of track batches: a contact sheet of auto-fitted cells.
//!
//! Each cell shows one env: the road band filled between the outer and inner borders (tinted
//! by height when the shown tracks are not flat: blue low, brown high, on one scale for the
//! whole sheet), both borders in white, a dashed yellow centerline, a chequered start line across
//! the road at point 0, and an orange arrow just past it pointing in the driving direction.
//! Envs that hold the fallback circle (`valid = 0`) get a red frame and a red cross. Cells are
//! fitted to each track's bounding box, so scales differ between cells.
//!
//! [`gate_sheet`] draws gate courses the same way (plan view above an elevation strip), and
//! [`trajectory_sheet`] draws agents' trajectories over their courses.
//!
//! Drawing is done by the small supersampling rasteriser in [`raster`].

mod gates;
pub mod raster;
mod trajectory;

use std::path::Path;

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::RgbImage;

use crate::atomic::write_atomic;
use crate::geom::Vec3;
use crate::track::TrackBatch;
use crate::Result;
use raster::{Canvas, Colour, Px};

pub use gates::gate_sheet;
pub use trajectory::{trajectory_sheet, CoursePanel};

const BACKGROUND: Colour = [226, 234, 220];
const CELL_EDGE: Colour = [188, 196, 182];
const ROAD: Colour = [84, 88, 94];
const ROAD_LOW: Colour = [62, 96, 150];
const ROAD_HIGH: Colour = [150, 100, 58];
const BORDER: Colour = [245, 245, 245];
const CENTERLINE: Colour = [240, 200, 40];
const START_DARK: Colour = [20, 20, 20];
const START_LIGHT: Colour = [250, 250, 250];
const ARROW: Colour = [255, 128, 0];
const INVALID: Colour = [220, 30, 30];

/// Supersampling factor of every cell.
const SUPERSAMPLE: u32 = 3;

/// Smallest cell side, pixels.
pub const MIN_CELL_PX: u32 = 16;

/// A contact sheet of the first `min(max_tracks, batch.n_envs)` envs of `batch`, in a near-square
/// grid of `cell_px × cell_px` cells (row-major, env 0 top left).
///
/// `cell_px` is raised to [`MIN_CELL_PX`]. With no env to show (`max_tracks = 0` or an empty
/// batch) the sheet is one empty cell. Non-finite points are skipped, an env with fewer than
/// 3 points leaves its cell empty.
pub fn contact_sheet(batch: &TrackBatch, max_tracks: usize, cell_px: u32) -> RgbImage {
    let shown = max_tracks.min(batch.n_envs);
    let heights = height_range(batch, shown);
    sheet(shown, cell_px, |e, canvas| {
        draw_track(canvas, batch, e, heights)
    })
}

/// Bytes of memory that drawing a sheet of `shown` cells of `cell_px` pixels takes (the RGB sheet
/// and one supersampled cell canvas), or `None` when a side of the sheet or the canvas overflows
/// `u32`: for a caller to check a size before [`contact_sheet`] or [`gate_sheet`] allocates it.
pub fn sheet_bytes(shown: usize, cell_px: u32) -> Option<u64> {
    let cell = u64::from(cell_px.max(MIN_CELL_PX));
    let cols = (1..=shown.max(1) as u64).find(|c| c * c >= shown as u64)?;
    let rows = (shown as u64).div_ceil(cols).max(1);
    let (w, h) = (cols.checked_mul(cell)?, rows.checked_mul(cell)?);
    let canvas_side = cell.checked_mul(u64::from(SUPERSAMPLE))?;
    if [w, h, canvas_side].iter().any(|&v| v > u64::from(u32::MAX)) {
        return None;
    }
    let colour = std::mem::size_of::<Colour>() as u64;
    w.checked_mul(h)?
        .checked_mul(3)?
        .checked_add(canvas_side.checked_mul(canvas_side)?.checked_mul(colour)?)
}

/// A near-square grid of `shown` cells of `cell_px` (raised to [`MIN_CELL_PX`]) pixels, row-major,
/// cell `i` drawn by `draw(i, canvas)`, each cell framed; one empty cell when `shown` is 0.
fn sheet(shown: usize, cell_px: u32, mut draw: impl FnMut(usize, &mut Canvas)) -> RgbImage {
    let cell = cell_px.max(MIN_CELL_PX);
    let cols = (1..=shown.max(1)).find(|c| c * c >= shown).unwrap_or(1);
    let rows = shown.div_ceil(cols).max(1);
    let mut sheet = RgbImage::from_pixel(
        cols as u32 * cell,
        rows as u32 * cell,
        image::Rgb(BACKGROUND),
    );
    for e in 0..shown {
        let mut canvas = Canvas::new(cell, SUPERSAMPLE, BACKGROUND);
        draw(e, &mut canvas);
        let (col, row) = ((e % cols) as u32, (e / cols) as u32);
        canvas.blit(&mut sheet, col * cell, row * cell);
    }
    // Cell edges, drawn last so every cell is framed the same way.
    for y in 0..sheet.height() {
        for x in 0..sheet.width() {
            if (x % cell == 0 || y % cell == 0) && *sheet.get_pixel(x, y) == image::Rgb(BACKGROUND)
            {
                sheet.put_pixel(x, y, image::Rgb(CELL_EDGE));
            }
        }
    }
    sheet
}

/// The z range of the centerlines of envs `0..shown`, or `None` if they are flat (< 1 cm).
fn height_range(batch: &TrackBatch, shown: usize) -> Option<(f32, f32)> {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for e in 0..shown {
        for p in batch.points(&batch.center, e) {
            if p[2].is_finite() {
                lo = lo.min(p[2]);
                hi = hi.max(p[2]);
            }
        }
    }
    (hi - lo > 0.01).then_some((lo, hi))
}

fn mix(a: Colour, b: Colour, t: f32) -> Colour {
    let t = t.clamp(0.0, 1.0);
    [0, 1, 2].map(|k| (f32::from(a[k]) + (f32::from(b[k]) - f32::from(a[k])) * t).round() as u8)
}

/// Maps world `[x, y]` (metres, y up) onto a rectangle of a cell (pixels, y down), fitted to a
/// bounding box.
struct Fit {
    centre: [f32; 2],
    scale: f32,
    origin: Px,
}

impl Fit {
    /// The fit of every finite point of `sets` into a cell of side `cell`, with a margin; `None`
    /// if there is no finite point.
    fn new(sets: &[&[Vec3]], cell: f32) -> Option<Self> {
        Self::rect(
            sets.iter().flat_map(|s| s.iter().map(|p| [p[0], p[1]])),
            [0.0, 0.0, cell, cell],
        )
    }

    /// The fit of every finite point of `points` into the rectangle `[x0, y0, width, height]`
    /// (pixels), with a margin, keeping the aspect ratio; `None` if there is no finite point.
    fn rect(points: impl Iterator<Item = [f32; 2]>, rect: [f32; 4]) -> Option<Self> {
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for p in points {
            if p[0].is_finite() && p[1].is_finite() {
                for k in 0..2 {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
        }
        if lo[0] > hi[0] || lo[1] > hi[1] {
            return None;
        }
        let (w, h) = ((hi[0] - lo[0]).max(1e-6), (hi[1] - lo[1]).max(1e-6));
        Some(Self {
            centre: [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])],
            scale: 0.88 * (rect[2] / w).min(rect[3] / h),
            origin: [rect[0] + 0.5 * rect[2], rect[1] + 0.5 * rect[3]],
        })
    }

    fn px(&self, p: Vec3) -> Px {
        self.px2([p.x, p.y])
    }

    fn px2(&self, p: [f32; 2]) -> Px {
        [
            self.origin[0] + (p[0] - self.centre[0]) * self.scale,
            self.origin[1] - (p[1] - self.centre[1]) * self.scale,
        ]
    }
}

fn draw_track(canvas: &mut Canvas, batch: &TrackBatch, e: usize, heights: Option<(f32, f32)>) {
    let cell = canvas.size() as f32;
    let (center, outer, inner) = (
        batch.points(&batch.center, e),
        batch.points(&batch.outer, e),
        batch.points(&batch.inner, e),
    );
    let n = center.len();
    if n >= 3 {
        if let Some(fit) = Fit::new(&[outer, inner, center], cell) {
            let c: Vec<Px> = center.iter().map(|&p| fit.px(p)).collect();
            let o: Vec<Px> = outer.iter().map(|&p| fit.px(p)).collect();
            let i: Vec<Px> = inner.iter().map(|&p| fit.px(p)).collect();
            // Borders thin out on small cells so that they never hide the road between them.
            let road_px = distance(o[0], i[0]);
            let line_px = (cell / 170.0).max(1.0).min(0.2 * road_px).max(0.35);

            for k in 0..n {
                let j = (k + 1) % n;
                let colour = match heights {
                    Some((lo, hi)) => {
                        let z = 0.5 * (center[k][2] + center[j][2]);
                        let t = (z - lo) / (hi - lo);
                        mix(
                            ROAD,
                            if t < 0.5 { ROAD_LOW } else { ROAD_HIGH },
                            (2.0 * t - 1.0).abs() * 0.85,
                        )
                    }
                    None => ROAD,
                };
                canvas.quad(o[k], o[j], i[j], i[k], colour);
            }
            canvas.closed_polyline(&o, line_px, BORDER);
            canvas.closed_polyline(&i, line_px, BORDER);
            canvas.dashed_closed_polyline(&c, 0.6 * line_px, cell / 60.0, CENTERLINE);
            draw_start(canvas, o[0], i[0]);
            draw_arrow(canvas, &c, road_px);
        }
    }
    if batch.valid[e] == 0 {
        draw_invalid(canvas);
    }
}

/// The red frame and cross of a fallback course.
fn draw_invalid(canvas: &mut Canvas) {
    let cell = canvas.size() as f32;
    let w = (cell / 60.0).max(1.5);
    let (a, b) = (0.5 * w, cell - 0.5 * w);
    let frame = [[a, a], [b, a], [b, b], [a, b]];
    canvas.closed_polyline(&frame, w, INVALID);
    canvas.line([a, a], [b, b], 0.6 * w, INVALID);
    canvas.line([b, a], [a, b], 0.6 * w, INVALID);
}

fn distance(a: Px, b: Px) -> f32 {
    ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt()
}

/// A chequered band across the road at point 0, from a little outside the outer border to a
/// little outside the inner one.
fn draw_start(canvas: &mut Canvas, outer: Px, inner: Px) {
    let road = distance(outer, inner);
    if road.is_nan() || road <= 0.0 {
        return;
    }
    let (dx, dy) = ((inner[0] - outer[0]) / road, (inner[1] - outer[1]) / road);
    let overhang = 0.3 * road;
    let from = [outer[0] - dx * overhang, outer[1] - dy * overhang];
    let span = road + 2.0 * overhang;
    let squares = 5;
    let square = span / squares as f32;
    // Two rows of squares, either side of the line through point 0.
    let (nx, ny) = (-dy * square.max(1.0), dx * square.max(1.0));
    for s in 0..squares {
        let at = |t: f32| [from[0] + dx * span * t, from[1] + dy * span * t];
        let (p, q) = (
            at(s as f32 / squares as f32),
            at((s + 1) as f32 / squares as f32),
        );
        for (row, sign) in [(0, 1.0f32), (1, -1.0)] {
            let colour = if (s + row) % 2 == 0 {
                START_DARK
            } else {
                START_LIGHT
            };
            let off = |r: Px| [r[0] + nx * sign, r[1] + ny * sign];
            canvas.quad(p, q, off(q), off(p), colour);
        }
    }
}

/// An arrow on the centerline a little past point 0, pointing in the driving direction.
fn draw_arrow(canvas: &mut Canvas, center: &[Px], road_px: f32) {
    let n = center.len();
    let k = (n / 24).clamp(1, n - 2);
    let (p, q) = (center[k], center[k + 1]);
    let len = distance(p, q);
    if len.is_nan() || len <= 0.0 {
        return;
    }
    let (dx, dy) = ((q[0] - p[0]) / len, (q[1] - p[1]) / len);
    let size = (road_px * 1.3).max(canvas.size() as f32 / 16.0);
    let tip = [p[0] + dx * size, p[1] + dy * size];
    let half = 0.45 * size;
    let left = [p[0] - dy * half, p[1] + dx * half];
    let right = [p[0] + dy * half, p[1] - dx * half];
    canvas.triangle(tip, left, right, ARROW);
}

/// Writes `image` as PNG to `path` atomically ([`crate::atomic::write_atomic`]).
pub fn write_png(path: &Path, image: &RgbImage) -> Result<()> {
    write_atomic(path, |out| {
        let encoder =
            PngEncoder::new_with_quality(out, CompressionType::Best, FilterType::Adaptive);
        image
            .write_with_encoder(encoder)
            .map_err(std::io::Error::other)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of `n` circles of radius 50 m with a 10 m wide road; env `e` is valid iff `valid[e]`.
    fn circles(valid: &[u8]) -> TrackBatch {
        let (n, n_max, points) = (valid.len(), 40, 32);
        let mut b = TrackBatch::new(n, n_max, 0).unwrap();
        for (e, &v) in valid.iter().enumerate() {
            for k in 0..points {
                let a = k as f32 / points as f32 * std::f32::consts::TAU;
                let at = |r: f32| Vec3::new(r * crate::math::cos(a), r * crate::math::sin(a), 0.0);
                b.center[e * n_max + k] = at(50.0);
                b.outer[e * n_max + k] = at(55.0);
                b.inner[e * n_max + k] = at(45.0);
            }
            b.count[e] = points as u32;
            b.valid[e] = v;
        }
        b
    }

    fn count(img: &RgbImage, x0: u32, y0: u32, cell: u32, colour: Colour) -> usize {
        (y0..y0 + cell)
            .flat_map(|y| (x0..x0 + cell).map(move |x| (x, y)))
            .filter(|&(x, y)| img.get_pixel(x, y).0 == colour)
            .count()
    }

    #[test]
    fn cells_show_road_and_mark_only_invalid_tracks() {
        let img = contact_sheet(&circles(&[1, 0, 1]), 64, 64);
        // Three tracks: a 2 × 2 grid, the last cell empty.
        assert_eq!(img.dimensions(), (128, 128));
        for (x0, y0) in [(0, 0), (64, 0), (0, 64)] {
            assert!(
                count(&img, x0, y0, 64, ROAD) > 100,
                "cell at {x0},{y0} has no road"
            );
        }
        assert_eq!(count(&img, 0, 0, 64, INVALID), 0);
        assert!(count(&img, 0, 0, 64, ARROW) > 5, "no direction arrow");
        assert!(count(&img, 0, 0, 64, START_DARK) > 2, "no start line");
        assert!(count(&img, 64, 0, 64, INVALID) > 50);
        assert_eq!(count(&img, 0, 64, 64, INVALID), 0);
        assert_eq!(count(&img, 64, 64, 64, ROAD), 0);
        // The road is a ring: the cell's centre is background.
        assert_eq!(img.get_pixel(32, 32).0, BACKGROUND);
    }

    #[test]
    fn max_tracks_limits_the_sheet_and_nothing_to_show_is_one_empty_cell() {
        let batch = circles(&[1, 1, 1, 1, 1]);
        assert_eq!(contact_sheet(&batch, 2, 32).dimensions(), (64, 32));
        let empty = contact_sheet(&batch, 0, 32);
        assert_eq!(empty.dimensions(), (32, 32));
        assert_eq!(count(&empty, 0, 0, 32, ROAD), 0);
        assert_eq!(
            contact_sheet(&batch, 1, 1).dimensions(),
            (MIN_CELL_PX, MIN_CELL_PX)
        );
    }
}
