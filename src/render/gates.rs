//! Gate-course cells: the plan view above an elevation strip.
//!
//! Plan view (the top three quarters of a cell, fitted to the course): the racing line through
//! the gate centres in blue, each gate as a bar across its opening (its full outer width, drawn
//! at least a pixel thick) — gate 0 green with an arrow in the flying direction, the others
//! orange. Elevation strip (the bottom quarter): height against arc length along the racing
//! line, the line in blue and each gate as a vertical bar spanning its opening, on one height
//! scale per cell. Fallback courses (`valid = 0`) get the red frame and cross of the track sheet.

use image::RgbImage;

use super::raster::{Canvas, Colour, Px};
use super::{draw_invalid, sheet, Fit};
use crate::course::gates::racing_line_each;
use crate::course::GateBatch;
use crate::geom;
use crate::geom::{Vec2, Vec3};

const LINE: Colour = [40, 110, 200];
const GATE: Colour = [235, 120, 20];
const START_GATE: Colour = [30, 160, 70];
const STRIP: Colour = [205, 214, 200];
const GROUND: Colour = [150, 150, 140];

/// Racing-line samples per leg in the drawings.
const SAMPLES: usize = 12;

/// A sheet of the first `min(max_courses, batch.n_envs)` gate courses of `batch`, in the
/// near-square grid of [`contact_sheet`](super::contact_sheet) (`cell_px` raised to
/// [`MIN_CELL_PX`](super::MIN_CELL_PX); one empty cell when there is nothing to show). Envs with
/// fewer than 2 gates or non-finite gates leave their cell empty.
pub fn gate_sheet(batch: &GateBatch, max_courses: usize, cell_px: u32) -> RgbImage {
    let shown = max_courses.min(batch.n_envs);
    sheet(shown, cell_px, |e, canvas| draw_gates(canvas, batch, e))
}

fn draw_gates(canvas: &mut Canvas, batch: &GateBatch, e: usize) {
    let cell = canvas.size() as f32;
    let pos = batch.gates(&batch.pos, e);
    let quat = batch.gates(&batch.quat, e);
    let size = batch.gates(&batch.size, e);
    let finite = pos.iter().all(|p| p.is_finite()) && quat.iter().all(|q| q.is_finite());
    if pos.len() >= 2 && finite {
        let mut line: Vec<Vec3> = vec![Vec3::ZERO; pos.len() * SAMPLES];
        racing_line_each(pos, SAMPLES, |k, p| line[k] = p);
        let t = batch.thickness_m.max(0.0);
        // Bar ends: the outer edges of each frame, in plan view.
        let bars: Vec<(Vec3, Vec3)> = pos
            .iter()
            .zip(quat)
            .zip(size)
            .map(|((&c, &q), &s)| {
                let left = geom::axes(q)[1];
                let h = 0.5 * s.x + t;
                (
                    Vec3::new(c.x + h * left.x, c.y + h * left.y, c.z),
                    Vec3::new(c.x - h * left.x, c.y - h * left.y, c.z),
                )
            })
            .collect();
        let plan = [0.0, 0.0, cell, 0.75 * cell];
        let points = line
            .iter()
            .chain(bars.iter().flat_map(|(a, b)| [a, b]))
            .map(|p| [p[0], p[1]]);
        if let Some(fit) = Fit::rect(points, plan) {
            let px: Vec<Px> = line.iter().map(|&p| fit.px(p)).collect();
            let width = (cell / 150.0).max(1.0);
            canvas.closed_polyline(&px, width, LINE);
            let bar_px = (t * fit.scale).max(cell / 60.0).max(1.5);
            for (i, (a, b)) in bars.iter().enumerate().rev() {
                let colour = if i == 0 { START_GATE } else { GATE };
                canvas.line(fit.px(*a), fit.px(*b), bar_px, colour);
            }
            // Arrow past gate 0, along its forward axis.
            let forward = geom::forward(quat[0]);
            let (fx, fy) = (forward[0], -forward[1]);
            let fl = (fx * fx + fy * fy).sqrt();
            if fl > 0.0 {
                let (dx, dy) = (fx / fl, fy / fl);
                let p = fit.px(pos[0]);
                let size = cell / 14.0;
                let base = [p[0] + dx * 0.4 * size, p[1] + dy * 0.4 * size];
                let tip = [base[0] + dx * size, base[1] + dy * size];
                let half = 0.4 * size;
                canvas.triangle(
                    tip,
                    [base[0] - dy * half, base[1] + dx * half],
                    [base[0] + dy * half, base[1] - dx * half],
                    START_GATE,
                );
            }
        }
        draw_elevation(canvas, &line, pos, size);
    }
    if batch.valid[e] == 0 {
        draw_invalid(canvas);
    }
}

/// Height against arc length, in the bottom quarter of the cell.
fn draw_elevation(canvas: &mut Canvas, line: &[Vec3], pos: &[Vec3], size: &[Vec2]) {
    let cell = canvas.size() as f32;
    let (top, bottom) = (0.77 * cell, 0.97 * cell);
    let (left, right) = (0.04 * cell, 0.96 * cell);
    canvas.quad(
        [left, top],
        [right, top],
        [right, bottom],
        [left, bottom],
        STRIP,
    );
    let n = line.len();
    let mut s = vec![0.0f32; n + 1];
    for k in 0..n {
        let (a, b) = (line[k], line[(k + 1) % n]);
        s[k + 1] =
            s[k] + ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2) + (b[2] - a[2]).powi(2)).sqrt();
    }
    let length = s[n];
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for (p, sz) in pos.iter().zip(size) {
        lo = lo.min(p[2] - 0.5 * sz[1]);
        hi = hi.max(p[2] + 0.5 * sz[1]);
    }
    for p in line {
        lo = lo.min(p[2]);
        hi = hi.max(p[2]);
    }
    lo = lo.min(0.0);
    if !(length > 0.0 && hi > lo) {
        return;
    }
    let x = |s: f32| left + (right - left) * s / length;
    let y = |z: f32| bottom - (bottom - top) * (0.1 + 0.8 * (z - lo) / (hi - lo));
    let width = (cell / 180.0).max(0.8);
    canvas.line([left, y(0.0)], [right, y(0.0)], width, GROUND);
    for k in 0..n {
        let (a, b) = (line[k], line[(k + 1) % n]);
        canvas.line([x(s[k]), y(a[2])], [x(s[k + 1]), y(b[2])], width, LINE);
    }
    let samples = n / pos.len();
    for (i, (p, sz)) in pos.iter().zip(size).enumerate() {
        let colour = if i == 0 { START_GATE } else { GATE };
        let at = x(s[i * samples]);
        canvas.line(
            [at, y(p[2] - 0.5 * sz[1])],
            [at, y(p[2] + 0.5 * sz[1])],
            (cell / 120.0).max(1.0),
            colour,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(valid: u8) -> GateBatch {
        let mut b = GateBatch::new(2, 8, 0, 0.2).unwrap();
        for e in 0..2 {
            for i in 0..6 {
                let a = i as f32 / 6.0 * std::f32::consts::TAU;
                b.pos[e * 8 + i] = Vec3::new(
                    20.0 * crate::math::cos(a),
                    20.0 * crate::math::sin(a),
                    2.0 + (i % 2) as f32,
                );
                let yaw = a + std::f32::consts::FRAC_PI_2;
                b.quat[e * 8 + i] = geom::yaw(yaw);
                b.size[e * 8 + i] = Vec2::splat(2.0);
            }
            b.count[e] = 6;
            b.valid[e] = if e == 0 { 1 } else { valid };
        }
        b
    }

    /// Within 30 per channel: anti-aliased edges count as the colour they mostly are.
    fn near(a: Colour, b: Colour) -> bool {
        (0..3).all(|k| a[k].abs_diff(b[k]) <= 30)
    }

    fn count(img: &RgbImage, x0: u32, y0: u32, w: u32, h: u32, colour: Colour) -> usize {
        (y0..y0 + h)
            .flat_map(|y| (x0..x0 + w).map(move |x| (x, y)))
            .filter(|&(x, y)| near(img.get_pixel(x, y).0, colour))
            .count()
    }

    #[test]
    fn cells_show_gates_line_and_elevation() {
        let img = gate_sheet(&ring(0), 8, 128);
        assert_eq!(img.dimensions(), (256, 128));
        // Plan view: gates, the start gate and the racing line.
        assert!(count(&img, 0, 0, 128, 96, GATE) > 20);
        assert!(count(&img, 0, 0, 128, 96, START_GATE) > 5);
        assert!(count(&img, 0, 0, 128, 96, LINE) > 20);
        // Elevation strip: gate bars and the line below the plan view.
        assert!(count(&img, 0, 98, 128, 30, GATE) > 5);
        assert!(count(&img, 0, 98, 128, 30, LINE) > 5);
        // Only the fallback course is marked.
        assert_eq!(count(&img, 0, 0, 128, 128, super::super::INVALID), 0);
        assert!(count(&img, 128, 0, 128, 128, super::super::INVALID) > 50);
        // Nothing to show: one empty cell.
        assert_eq!(gate_sheet(&ring(1), 0, 64).dimensions(), (64, 64));
    }
}
