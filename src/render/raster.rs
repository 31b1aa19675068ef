//! A tiny supersampled rasteriser: filled triangles, thick lines, discs.
//!
//! A [`Canvas`] draws at `ss`× the target resolution and [`Canvas::blit`] box-filters it down,
//! which anti-aliases every edge without per-primitive coverage math. Coordinates are in
//! target pixels (x right, y down); primitives are clipped to the canvas.

use image::{Rgb, RgbImage};

/// A point in target-pixel coordinates.
pub type Px = [f32; 2];

/// An RGB colour.
pub type Colour = [u8; 3];

/// A square drawing surface of `size × size` target pixels, stored at `ss`× resolution.
pub struct Canvas {
    size: u32,
    ss: u32,
    pixels: Vec<Colour>,
}

impl Canvas {
    /// A `size × size` canvas at `ss`× supersampling, filled with `background`.
    pub fn new(size: u32, ss: u32, background: Colour) -> Self {
        let side = (size * ss) as usize;
        Self {
            size,
            ss,
            pixels: vec![background; side * side],
        }
    }

    /// Side length in target pixels.
    pub fn size(&self) -> u32 {
        self.size
    }

    fn side(&self) -> usize {
        (self.size * self.ss) as usize
    }

    /// Fills the triangle `a b c` (either winding). Degenerate or non-finite triangles draw nothing.
    pub fn triangle(&mut self, a: Px, b: Px, c: Px, colour: Colour) {
        let s = self.ss as f32;
        let (a, b, c) = (scale(a, s), scale(b, s), scale(c, s));
        if ![a, b, c]
            .iter()
            .all(|p| p[0].is_finite() && p[1].is_finite())
        {
            return;
        }
        let area = cross(a, b, c);
        if area == 0.0 {
            return;
        }
        let side = self.side();
        let lo = |v: f32| (v.floor().max(0.0) as usize).min(side);
        let hi = |v: f32| ((v.ceil().max(0.0)) as usize).min(side);
        let (x0, x1) = (lo(a[0].min(b[0]).min(c[0])), hi(a[0].max(b[0]).max(c[0])));
        let (y0, y1) = (lo(a[1].min(b[1]).min(c[1])), hi(a[1].max(b[1]).max(c[1])));
        let sign = area.signum();
        for y in y0..y1 {
            let py = y as f32 + 0.5;
            let row = y * side;
            for x in x0..x1 {
                let p = [x as f32 + 0.5, py];
                if cross(a, b, p) * sign >= 0.0
                    && cross(b, c, p) * sign >= 0.0
                    && cross(c, a, p) * sign >= 0.0
                {
                    self.pixels[row + x] = colour;
                }
            }
        }
    }

    /// Fills the quad `a b c d` (a convex or mildly bent strip piece) as two triangles.
    pub fn quad(&mut self, a: Px, b: Px, c: Px, d: Px, colour: Colour) {
        self.triangle(a, b, c, colour);
        self.triangle(a, c, d, colour);
    }

    /// A disc of `radius` target pixels around `centre`.
    pub fn disc(&mut self, centre: Px, radius: f32, colour: Colour) {
        let s = self.ss as f32;
        let (c, r) = (scale(centre, s), radius * s);
        if !(c[0].is_finite() && c[1].is_finite() && r > 0.0) {
            return;
        }
        let side = self.side();
        let clamp = |v: f32| (v.max(0.0) as usize).min(side);
        let (x0, x1) = (clamp(c[0] - r), clamp(c[0] + r + 1.0));
        let (y0, y1) = (clamp(c[1] - r), clamp(c[1] + r + 1.0));
        for y in y0..y1 {
            let dy = y as f32 + 0.5 - c[1];
            for x in x0..x1 {
                let dx = x as f32 + 0.5 - c[0];
                if dx * dx + dy * dy <= r * r {
                    self.pixels[y * side + x] = colour;
                }
            }
        }
    }

    /// A line from `a` to `b`, `width` target pixels wide, with round ends; nothing if an end is
    /// not finite.
    pub fn line(&mut self, a: Px, b: Px, width: f32, colour: Colour) {
        if !a.iter().chain(&b).all(|v| v.is_finite()) {
            return;
        }
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = (dx * dx + dy * dy).sqrt();
        let half = 0.5 * width;
        if len > 0.0 {
            let (nx, ny) = (-dy / len * half, dx / len * half);
            self.quad(
                [a[0] + nx, a[1] + ny],
                [b[0] + nx, b[1] + ny],
                [b[0] - nx, b[1] - ny],
                [a[0] - nx, a[1] - ny],
                colour,
            );
        }
        self.disc(a, half, colour);
        self.disc(b, half, colour);
    }

    /// The closed polyline through `points`.
    pub fn closed_polyline(&mut self, points: &[Px], width: f32, colour: Colour) {
        for (i, &a) in points.iter().enumerate() {
            self.line(a, points[(i + 1) % points.len()], width, colour);
        }
    }

    /// The closed polyline through `points`, dashed: `dash` pixels drawn, `dash` pixels skipped,
    /// measured along the line.
    pub fn dashed_closed_polyline(&mut self, points: &[Px], width: f32, dash: f32, colour: Colour) {
        let mut along = 0.0f32;
        for (i, &a) in points.iter().enumerate() {
            let b = points[(i + 1) % points.len()];
            let len = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            if len.is_nan() || len <= 0.0 {
                continue;
            }
            // Split the segment where the dash pattern switches.
            let mut t0 = 0.0f32;
            while t0 < len {
                let phase = (along + t0) % (2.0 * dash);
                let on = phase < dash;
                let step = (if on { dash - phase } else { 2.0 * dash - phase }).min(len - t0);
                if on {
                    let p = |t: f32| {
                        [
                            a[0] + (b[0] - a[0]) * t / len,
                            a[1] + (b[1] - a[1]) * t / len,
                        ]
                    };
                    self.line(p(t0), p(t0 + step), width, colour);
                }
                t0 += step.max(1e-3);
            }
            along += len;
        }
    }

    /// Box-filters the canvas down to target resolution and copies it into `image` with its
    /// top-left corner at `(x0, y0)`; pixels outside `image` are dropped.
    pub fn blit(&self, image: &mut RgbImage, x0: u32, y0: u32) {
        let (ss, side) = (self.ss as usize, self.side());
        let norm = (ss * ss) as u32;
        for y in 0..self.size {
            for x in 0..self.size {
                let (ix, iy) = (x0 + x, y0 + y);
                if ix >= image.width() || iy >= image.height() {
                    continue;
                }
                let mut sum = [0u32; 3];
                for sy in 0..ss {
                    let row = (y as usize * ss + sy) * side + x as usize * ss;
                    for p in &self.pixels[row..row + ss] {
                        for k in 0..3 {
                            sum[k] += u32::from(p[k]);
                        }
                    }
                }
                let avg = sum.map(|v| ((v + norm / 2) / norm) as u8);
                image.put_pixel(ix, iy, Rgb(avg));
            }
        }
    }
}

fn scale(p: Px, s: f32) -> Px {
    [p[0] * s, p[1] * s]
}

/// Twice the signed area of `a b c` (positive when counter-clockwise in x-right, y-up terms).
fn cross(a: Px, b: Px, c: Px) -> f32 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    const BG: Colour = [0, 0, 0];
    const FG: Colour = [255, 255, 255];

    fn render(c: &Canvas) -> RgbImage {
        let mut img = RgbImage::new(c.size(), c.size());
        c.blit(&mut img, 0, 0);
        img
    }

    #[test]
    fn triangle_covers_inside_not_outside_either_winding() {
        for (b, c) in [([10.0, 0.0], [0.0, 10.0]), ([0.0, 10.0], [10.0, 0.0])] {
            let mut canvas = Canvas::new(12, 2, BG);
            canvas.triangle([0.0, 0.0], b, c, FG);
            let img = render(&canvas);
            assert_eq!(img.get_pixel(1, 1).0, FG);
            assert_eq!(img.get_pixel(9, 9).0, BG);
        }
    }

    #[test]
    fn line_has_its_width_and_edges_are_blended() {
        let mut canvas = Canvas::new(20, 4, BG);
        canvas.line([2.0, 10.0], [18.0, 10.0], 4.0, FG);
        let img = render(&canvas);
        assert_eq!(img.get_pixel(10, 9).0, FG);
        assert_eq!(img.get_pixel(10, 10).0, FG);
        assert_eq!(img.get_pixel(10, 13).0, BG);
        assert_eq!(img.get_pixel(10, 5).0, BG);
        // A half-covered pixel is grey, not black or white.
        let mut canvas = Canvas::new(4, 4, BG);
        canvas.triangle([0.0, 0.0], [4.0, 0.0], [4.0, 4.0], FG);
        let diagonal = render(&canvas).get_pixel(1, 1).0[0];
        assert!(diagonal > 40 && diagonal < 215, "diagonal pixel {diagonal}");
    }

    #[test]
    fn dashes_leave_gaps_and_non_finite_input_draws_nothing() {
        let mut canvas = Canvas::new(40, 2, BG);
        let pts = [[0.0, 20.0], [40.0, 20.0], [40.0, 21.0], [0.0, 21.0]];
        canvas.dashed_closed_polyline(&pts, 1.0, 5.0, FG);
        let img = render(&canvas);
        let lit = (0..40).filter(|&x| img.get_pixel(x, 20).0[0] > 128).count();
        assert!(lit > 10 && lit < 30, "{lit} of 40 pixels lit");

        let mut canvas = Canvas::new(8, 2, BG);
        canvas.triangle([f32::NAN, 0.0], [8.0, 0.0], [0.0, 8.0], FG);
        canvas.line([0.0, 0.0], [f32::NAN, 4.0], 3.0, FG);
        let img = render(&canvas);
        assert!(img.pixels().all(|p| p.0 == BG));
    }
}
