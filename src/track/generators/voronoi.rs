//! The Voronoi generator: the outline of a connected union of Voronoi cells.
//!
//! 1. **Sites.** `n_sites` points uniform in the disc of radius `radius_m`.
//! 2. **Cell map.** A `grid × grid` raster over the disc's bounding square holds, per pixel, the
//!    index of the nearest site (the discrete Voronoi diagram); pixels outside the disc (less a
//!    margin of 1.5 pixels, so the raster's border ring is always empty) belong to no cell. Two
//!    cells are adjacent when two 4-neighbouring pixels carry their labels.
//! 3. **Region.** Starting from the site nearest the centre, `n_cells − 1` times one cell
//!    adjacent to the region is added, chosen uniformly (in site order) by the lane's stream.
//! 4. **Clean-up of the pixel mask.** A morphological closing then opening with a square of
//!    half-size ≈ `radius_m / 8` (in pixels, rounded) fills inlets and cuts necks and spurs that
//!    are too narrow for a track; the largest 4-connected component is kept; 2×2
//!    checkerboards (diagonal pinches) are filled; holes are filled (every pixel not 4-reachable
//!    from the raster corner through empty pixels is inside). The mask is then one simply
//!    connected 4-connected region without pinches, whose pixel-edge outline is a simple lattice
//!    polygon.
//! 5. **Outline.** Crack following (square tracing on the pixel corners, interior on the left)
//!    from the bottom-left corner of the lowest, leftmost inside pixel walks that polygon
//!    counter-clockwise; each unit edge is split into `⌈pixel / 2.5 m⌉` steps.
//! 6. **Smoothing.** Three passes of a cyclic box filter over the points (a discrete Gaussian of
//!    standard deviation ≈ `radius_m / 8` along the outline) remove the staircase and round
//!    the corners (a corner of turning angle θ ends with a radius of about 2.5 σ / θ); the curve
//!    is then centred on its point mean and made counter-clockwise.
//!
//! The two scales (`radius_m / 8` = 15 m at the default 120 m) assume the preset's usual ratio
//! of scale to minimum turn radius (10:1): features narrower than about twice the turn radius
//! are removed before the outline is traced. A region that the opening erases entirely (a few
//! small cells) yields no points, which makes the attempt invalid so that the pipeline retries
//! on a fresh stream; so does an outline longer than `8 · grid` pixel edges (never seen for the
//! cleaned masks). Every loop is bounded by the raster size or by [`Stage::max_points`].

use bytemuck::{Pod, Zeroable};

use super::raster::{clear_border, fill_holes, fill_pinches, keep_largest, morph, EMPTY, INSIDE};
use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
use crate::geom::Vec2;
use crate::rng::LaneRng;
use crate::track::geometry::signed_area2;

/// Voronoi generator parameters.
#[derive(Clone, Debug)]
pub struct Voronoi {
    /// Random sites.
    pub n_sites: usize,
    /// Cells merged into the region.
    pub n_cells: usize,
    /// Raster resolution of the cell map.
    pub grid: usize,
    /// Radius of the disc the sites are drawn in, metres.
    pub radius_m: f32,
}

/// The Voronoi fields of `tg_voronoi_params` (`kernels/track/voronoi.cuh`).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct VoronoiParams {
    n_sites: u32,
    n_cells: u32,
    grid: u32,
    radius_m: f32,
}

/// Largest spacing between consecutive output points, metres.
const MAX_STEP_M: f32 = 2.5;
/// Half-size of the morphological square, as a fraction of `radius_m`.
const MORPH_FRAC: f32 = 1.0 / 8.0;
/// Standard deviation of the outline smoothing, as a fraction of `radius_m`.
const SMOOTH_FRAC: f32 = 1.0 / 8.0;

/// The label of a pixel outside the clipped disc.
const OUTSIDE: u32 = u32::MAX;

impl Voronoi {
    /// Side of a raster pixel, metres.
    fn pixel_m(&self) -> f32 {
        2.0 * self.radius_m / self.grid as f32
    }

    /// Output points per pixel edge of the outline.
    fn substeps(&self) -> usize {
        ((self.pixel_m() / MAX_STEP_M).ceil() as usize).max(1)
    }

    /// Most pixel edges of a traced outline.
    fn max_edges(&self) -> usize {
        8 * self.grid
    }

    /// Half-size of the morphological square, pixels.
    fn morph_px(&self) -> usize {
        (MORPH_FRAC * self.radius_m / self.pixel_m() + 0.5) as usize
    }

    /// Half-width of the box filter, points: three passes of width `2m + 1` have variance
    /// `m (m + 1)` points², matched to `(σ / step)²`.
    fn box_half(&self) -> usize {
        let step_m = self.pixel_m() / self.substeps() as f32;
        let sigma = SMOOTH_FRAC * self.radius_m / step_m;
        (sigma as usize).max(1)
    }

    /// The length of the work buffer: the cell map, the flood-fill queue, the morphology
    /// temporary and the unsmoothed outline take turns in it.
    fn work_len(&self) -> usize {
        (self.grid * self.grid).max(2 * self.max_points())
    }
}

impl Stage for Voronoi {
    fn name(&self) -> &str {
        "voronoi"
    }
    fn max_points(&self) -> usize {
        self.max_edges() * self.substeps()
    }
    fn scratch_len(&self) -> usize {
        let n = self.n_sites;
        // sites, adjacency, selection flags, two rows, mask, work
        2 * n + n * n + n + 2 * self.grid + self.grid * self.grid + self.work_len()
    }
    fn scratch_u32_len(&self) -> usize {
        // the pixel labels, then the flood-fill queue
        self.grid * self.grid
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        scratch_u32: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let n = self.n_sites;
        let g = self.grid;
        if n == 0 || g < 4 {
            return 0;
        }
        let (sites, rest) = scratch.split_at_mut(2 * n);
        let (adj, rest) = rest.split_at_mut(n * n);
        let (selected, rest) = rest.split_at_mut(n);
        let (row, rest) = rest.split_at_mut(g);
        let (xs, rest) = rest.split_at_mut(g);
        let (mask, rest) = rest.split_at_mut(g * g);
        let work = &mut rest[..self.work_len()];
        let sites: &mut [Vec2] = bytemuck::cast_slice_mut(sites);

        draw_sites(rng, self.radius_m, sites);
        let labels = &mut scratch_u32[..g * g];
        self.label_pixels(sites, xs, row, labels);
        let seed = nearest_to_origin(sites);
        adjacency(labels, g, n, adj);
        grow_region(rng, adj, n, seed, self.n_cells, selected);
        for (m, &l) in mask.iter_mut().zip(labels.iter()) {
            *m = if l != OUTSIDE && selected[l as usize] != 0.0 {
                INSIDE
            } else {
                EMPTY
            };
        }

        let k = self.morph_px();
        let tmp = &mut work[..g * g];
        morph(mask, tmp, row, g, k, true);
        morph(mask, tmp, row, g, k, false);
        morph(mask, tmp, row, g, k, false);
        morph(mask, tmp, row, g, k, true);
        clear_border(mask, g);
        let queue = &mut scratch_u32[..g * g];
        keep_largest(mask, queue, g);
        fill_pinches(mask, g);
        fill_holes(mask, queue, g);

        let curve = bytemuck::cast_slice_mut::<f32, Vec2>(&mut work[..2 * self.max_points()]);
        let m = self.trace(mask, curve);
        if m < 3 {
            return 0;
        }
        let half = self.box_half().min((m - 1) / 2);
        box_filter(&curve[..m], half, &mut out[..m]);
        box_filter(&out[..m], half, &mut curve[..m]);
        box_filter(&curve[..m], half, &mut out[..m]);
        finish(&mut out[..m]);
        m
    }
    /// `tg_track_voronoi`; `None` when a count or a scratch length exceeds the kernel's 32-bit
    /// indices.
    fn kernel(&self) -> Option<StageKernel> {
        for len in [
            self.scratch_len(),
            self.scratch_u32_len(),
            self.max_points(),
        ] {
            u32::try_from(len).ok()?;
        }
        Some(StageKernel {
            name: "tg_track_voronoi",
            window: None,
            params: params_bytes(&VoronoiParams {
                n_sites: u32::try_from(self.n_sites).ok()?,
                n_cells: u32::try_from(self.n_cells).ok()?,
                grid: u32::try_from(self.grid).ok()?,
                radius_m: self.radius_m,
            }),
        })
    }
}

impl Voronoi {
    /// Writes the nearest-site label of every pixel ([`OUTSIDE`] outside the clipped disc); `xs`
    /// receives the pixel centres' x and `best` one row of squared distances. Sites are visited
    /// in index order with a strict `<`, so ties go to the lower index.
    fn label_pixels(&self, sites: &[Vec2], xs: &mut [f32], best: &mut [f32], labels: &mut [u32]) {
        let g = self.grid;
        let h = self.pixel_m();
        let clip = self.radius_m - 1.5 * h;
        let clip2 = clip * clip;
        for (i, x) in xs.iter_mut().enumerate() {
            *x = -self.radius_m + (i as f32 + 0.5) * h;
        }
        for (j, row) in labels.chunks_exact_mut(g).enumerate() {
            let y = -self.radius_m + (j as f32 + 0.5) * h;
            best.fill(f32::INFINITY);
            for (s, p) in sites.iter().enumerate() {
                let dy = y - p[1];
                let dy2 = dy * dy;
                let label = s as u32;
                for ((b, l), &x) in best.iter_mut().zip(row.iter_mut()).zip(xs.iter()) {
                    let dx = x - p[0];
                    let d2 = dx * dx + dy2;
                    let nearer = d2 < *b;
                    *b = if nearer { d2 } else { *b };
                    *l = if nearer { label } else { *l };
                }
            }
            for (l, &x) in row.iter_mut().zip(xs.iter()) {
                if x * x + y * y > clip2 {
                    *l = OUTSIDE;
                }
            }
        }
    }

    /// Crack-follows the outline of the mask counter-clockwise (interior on the left) from the
    /// bottom-left corner of the first inside pixel, writing `substeps` points per pixel edge
    /// in metres. Returns the number of points, or 0 if the outline is longer than
    /// [`Self::max_edges`] or the mask is empty.
    fn trace(&self, mask: &[f32], curve: &mut [Vec2]) -> usize {
        const DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];
        let g = self.grid as i32;
        let Some(first) = mask.iter().position(|&m| m == INSIDE) else {
            return 0;
        };
        let inside = |x: i32, y: i32| -> bool {
            x >= 0 && y >= 0 && x < g && y < g && mask[(y * g + x) as usize] == INSIDE
        };
        // The pixels around a corner (cx, cy), counter-clockwise from north-east.
        let quadrant = |cx: i32, cy: i32, q: usize| -> bool {
            match q {
                0 => inside(cx, cy),
                1 => inside(cx - 1, cy),
                2 => inside(cx - 1, cy - 1),
                _ => inside(cx, cy - 1),
            }
        };
        let start = ((first % self.grid) as i32, (first / self.grid) as i32);
        let h = self.pixel_m();
        let s = self.substeps();
        let sub = h / s as f32;
        let (mut cx, mut cy) = start;
        let mut d = 0usize;
        let mut written = 0;
        for _ in 0..self.max_edges() {
            let x0 = -self.radius_m + cx as f32 * h;
            let y0 = -self.radius_m + cy as f32 * h;
            let (dx, dy) = DIRS[d];
            for k in 0..s {
                let t = k as f32 * sub;
                curve[written] = Vec2::new(x0 + t * dx as f32, y0 + t * dy as f32);
                written += 1;
            }
            cx += dx;
            cy += dy;
            // Interior on the left: turn right if the pixel ahead-right is inside, go straight
            // if only the one ahead-left is, turn left otherwise.
            let ahead_left = quadrant(cx, cy, d);
            let ahead_right = quadrant(cx, cy, (d + 3) % 4);
            d = if ahead_left && ahead_right {
                (d + 3) % 4
            } else if ahead_left {
                d
            } else {
                (d + 1) % 4
            };
            if (cx, cy) == start && d == 0 {
                return written;
            }
        }
        0
    }
}

/// Draws sites uniform in the disc of radius `r`.
fn draw_sites(rng: &mut LaneRng, r: f32, sites: &mut [Vec2]) {
    for p in sites.iter_mut() {
        let radius = r * rng.unit().sqrt();
        let (s, c) = crate::math::sin_cos(crate::math::TAU * rng.unit());
        *p = Vec2::new(radius * c, radius * s);
    }
}

/// The index of the site nearest the origin (the first on ties).
fn nearest_to_origin(sites: &[Vec2]) -> usize {
    let mut best = 0;
    let mut best_d2 = f32::INFINITY;
    for (s, p) in sites.iter().enumerate() {
        let d2 = p[0] * p[0] + p[1] * p[1];
        if d2 < best_d2 {
            best_d2 = d2;
            best = s;
        }
    }
    best
}

/// Fills the symmetric cell adjacency matrix (1 where two cells share a pixel edge).
fn adjacency(labels: &[u32], g: usize, n: usize, adj: &mut [f32]) {
    adj.fill(0.0);
    let mut link = |a: u32, b: u32| {
        if a != OUTSIDE && b != OUTSIDE && a != b {
            let (a, b) = (a as usize, b as usize);
            adj[a * n + b] = 1.0;
            adj[b * n + a] = 1.0;
        }
    };
    for j in 0..g {
        for i in 0..g {
            let l = labels[j * g + i];
            if i + 1 < g {
                link(l, labels[j * g + i + 1]);
            }
            if j + 1 < g {
                link(l, labels[(j + 1) * g + i]);
            }
        }
    }
}

/// Grows a connected set of `n_cells` cells from `seed`: each step adds a uniformly chosen
/// cell (in index order) among the unselected neighbours of the set. Stops early when none is
/// left.
fn grow_region(
    rng: &mut LaneRng,
    adj: &[f32],
    n: usize,
    seed: usize,
    n_cells: usize,
    selected: &mut [f32],
) {
    selected.fill(0.0);
    selected[seed] = 1.0;
    let is_candidate = |selected: &[f32], c: usize| {
        selected[c] == 0.0 && (0..n).any(|s| selected[s] != 0.0 && adj[s * n + c] != 0.0)
    };
    for _ in 1..n_cells.min(n) {
        let count = (0..n).filter(|&c| is_candidate(selected, c)).count();
        if count == 0 {
            return;
        }
        let pick = rng.below(count as u32) as usize;
        if let Some(c) = (0..n).filter(|&c| is_candidate(selected, c)).nth(pick) {
            selected[c] = 1.0;
        }
    }
}

/// One pass of the cyclic box filter of half-width `half` (`half < src.len()`), summed in a
/// fixed order.
fn box_filter(src: &[Vec2], half: usize, dst: &mut [Vec2]) {
    let m = src.len();
    let w = 1.0 / (2 * half + 1) as f32;
    for (i, d) in dst.iter_mut().enumerate() {
        let mut sx = src[i][0];
        let mut sy = src[i][1];
        for o in 1..=half {
            let a = src[(i + m - o) % m];
            let b = src[(i + o) % m];
            sx += a[0] + b[0];
            sy += a[1] + b[1];
        }
        *d = Vec2::new(sx * w, sy * w);
    }
}

/// Centres the curve on its point mean and makes it counter-clockwise.
fn finish(curve: &mut [Vec2]) {
    let m = curve.len();
    let (mut cx, mut cy) = (0.0f32, 0.0f32);
    for p in curve.iter() {
        cx += p[0];
        cy += p[1];
    }
    cx /= m as f32;
    cy /= m as f32;
    for p in curve.iter_mut() {
        *p = Vec2::new(p[0] - cx, p[1] - cy);
    }
    // The tracing already walks counter-clockwise; this only guards the contract.
    if signed_area2(curve) < 0.0 {
        curve.reverse();
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Checks that `pts` is a closed, counter-clockwise, simple polyline with finite points and
    /// consecutive spacing (closing segment included) in `(0, max_step_m]`. Orientations are
    /// computed in `f64`, where they are exact for `f32` inputs up to rounding of the final sum,
    /// so collinear neighbours on a smoothed staircase are not reported as crossings.
    pub(in crate::track::generators) fn check_loop(
        pts: &[Vec2],
        max_step_m: f32,
    ) -> Result<(), String> {
        let m = pts.len();
        if m < 4 {
            return Err(format!("{m} points"));
        }
        if let Some(i) = pts
            .iter()
            .position(|p| !(p[0].is_finite() && p[1].is_finite()))
        {
            return Err(format!("point {i} is not finite"));
        }
        let p: Vec<[f64; 2]> = pts
            .iter()
            .map(|q| [f64::from(q[0]), f64::from(q[1])])
            .collect();
        let mut area2 = 0.0;
        for i in 0..m {
            let (a, b) = (p[i], p[(i + 1) % m]);
            let step = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            if !(step > 0.0 && step <= f64::from(max_step_m) + 1e-4) {
                return Err(format!("step {i} is {step:.3} m"));
            }
            area2 += a[0] * b[1] - a[1] * b[0];
        }
        if area2 <= 0.0 {
            return Err(format!("signed area {:.1} is not positive", area2 / 2.0));
        }
        let orient = |a: [f64; 2], b: [f64; 2], c: [f64; 2]| {
            (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        };
        for i in 0..m {
            let (a, b) = (p[i], p[(i + 1) % m]);
            for j in i + 2..m {
                if i == 0 && j == m - 1 {
                    continue;
                }
                let (c, d) = (p[j], p[(j + 1) % m]);
                if a[0].max(b[0]) < c[0].min(d[0])
                    || c[0].max(d[0]) < a[0].min(b[0])
                    || a[1].max(b[1]) < c[1].min(d[1])
                    || c[1].max(d[1]) < a[1].min(b[1])
                {
                    continue;
                }
                if orient(a, b, c) * orient(a, b, d) <= 0.0
                    && orient(c, d, a) * orient(c, d, b) <= 0.0
                {
                    return Err(format!("segments {i} and {j} cross"));
                }
            }
        }
        Ok(())
    }

    fn preset() -> Voronoi {
        Voronoi {
            n_sites: 24,
            n_cells: 6,
            grid: 48,
            radius_m: 120.0,
        }
    }

    /// Runs `v` for `(seed, env)` with a scratch buffer poisoned by `poison`.
    fn run(v: &Voronoi, env: u64, poison: f32) -> Vec<Vec2> {
        let mut scratch = vec![poison; v.scratch_len()];
        let mut scratch_u32 = vec![poison.to_bits(); v.scratch_u32_len()];
        let mut out = vec![Vec2::NAN; v.max_points()];
        let mut rng = LaneRng::new(7, env, 0, crate::rng::stream::GENERATE);
        let m = v.run_lane(&mut rng, &mut scratch, &mut scratch_u32, &mut out);
        assert!(m <= v.max_points());
        out.truncate(m);
        out
    }

    #[test]
    fn outlines_are_simple_counter_clockwise_loops() {
        let v = preset();
        for env in 0..300 {
            let pts = run(&v, env, 0.0);
            if let Err(why) = check_loop(&pts, MAX_STEP_M) {
                panic!("env {env}: {why}");
            }
            let n = pts.len() as f32;
            let mean = pts
                .iter()
                .fold([0.0f32; 2], |s, p| [s[0] + p[0] / n, s[1] + p[1] / n]);
            assert!(
                mean[0].abs() < 1e-3 && mean[1].abs() < 1e-3,
                "env {env}: mean {mean:?}"
            );
        }
    }

    #[test]
    fn other_parameters_give_simple_loops_or_nothing() {
        // (sites, cells, grid, fewest loops out of 40): a region of one or two small cells may
        // be erased entirely by the opening.
        let cases = [
            (24, 6, 16, 38),
            (24, 6, 96, 40),
            (6, 6, 48, 40),
            (64, 24, 48, 40),
            (12, 1, 32, 20),
            (64, 2, 48, 1),
        ];
        for (n_sites, n_cells, grid, fewest) in cases {
            let v = Voronoi {
                n_sites,
                n_cells,
                grid,
                radius_m: 120.0,
            };
            let mut loops = 0;
            for env in 0..40 {
                let pts = run(&v, env, 0.0);
                if pts.is_empty() {
                    continue;
                }
                loops += 1;
                let step = v.pixel_m() / v.substeps() as f32;
                if let Err(why) = check_loop(&pts, step) {
                    panic!("{n_sites}/{n_cells}/{grid} env {env}: {why}");
                }
            }
            assert!(loops >= fewest, "{n_sites}/{n_cells}/{grid}: {loops} loops");
        }
    }

    #[test]
    fn output_is_a_pure_function_of_the_stream() {
        let v = preset();
        for env in 0..20 {
            let a = run(&v, env, 0.0);
            let b = run(&v, env, f32::NAN);
            let c = run(&v, env, -1.0e30);
            assert_eq!(
                bytemuck::cast_slice::<Vec2, u8>(&a),
                bytemuck::cast_slice::<Vec2, u8>(&b)
            );
            assert_eq!(
                bytemuck::cast_slice::<Vec2, u8>(&a),
                bytemuck::cast_slice::<Vec2, u8>(&c)
            );
        }
        assert_ne!(run(&v, 0, 0.0), run(&v, 1, 0.0));
    }

    /// A mask from rows of text (`#` inside), the first row at the top.
    fn mask_of(rows: &[&str]) -> (Vec<f32>, usize) {
        let g = rows.len();
        let mut mask = vec![EMPTY; g * g];
        for (r, line) in rows.iter().enumerate() {
            assert_eq!(line.len(), g);
            for (i, ch) in line.chars().enumerate() {
                if ch == '#' {
                    mask[(g - 1 - r) * g + i] = INSIDE;
                }
            }
        }
        (mask, g)
    }

    #[test]
    fn crack_tracing_walks_the_pixel_outline_counter_clockwise() {
        // An L of 4 pixels: perimeter 10 pixel edges.
        let (mask, g) = mask_of(&["......", "......", ".#....", ".#....", ".##...", "......"]);
        let v = Voronoi {
            n_sites: 1,
            n_cells: 1,
            grid: g,
            radius_m: 3.0 * MAX_STEP_M,
        };
        assert_eq!(v.substeps(), 1);
        let mut curve = vec![Vec2::ZERO; v.max_points()];
        let m = v.trace(&mask, &mut curve);
        assert_eq!(m, 10);
        let h = v.pixel_m();
        let corner = |i: f32, j: f32| Vec2::new(-v.radius_m + i * h, -v.radius_m + j * h);
        let expected = [
            corner(1.0, 1.0),
            corner(2.0, 1.0),
            corner(3.0, 1.0),
            corner(3.0, 2.0),
            corner(2.0, 2.0),
            corner(2.0, 3.0),
            corner(2.0, 4.0),
            corner(1.0, 4.0),
            corner(1.0, 3.0),
            corner(1.0, 2.0),
        ];
        assert_eq!(&curve[..m], &expected);
        check_loop(&curve[..m], h).unwrap();
    }

    #[test]
    fn pinches_and_holes_are_filled() {
        let (mut mask, g) = mask_of(&[
            "........", ".###....", ".#.#....", ".###....", "....##..", "....##..", "........",
            "........",
        ]);
        fill_pinches(&mut mask, g);
        let mut queue = vec![0; g * g];
        fill_holes(&mut mask, &mut queue, g);
        let (want, _) = mask_of(&[
            "........", ".###....", ".###....", ".####...", "...###..", "....##..", "........",
            "........",
        ]);
        assert_eq!(mask, want);
    }

    #[test]
    fn opening_cuts_thin_necks() {
        let (mut mask, g) = mask_of(&[
            "..............",
            "..............",
            "...###...###..",
            "...#########..",
            "...###...###..",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
        ]);
        let mut tmp = vec![0.0; g * g];
        let mut col = vec![0.0; g];
        // Opening with a 3×3 square removes the one-pixel neck and restores both blocks.
        morph(&mut mask, &mut tmp, &mut col, g, 1, false);
        morph(&mut mask, &mut tmp, &mut col, g, 1, true);
        let (want, _) = mask_of(&[
            "..............",
            "..............",
            "...###...###..",
            "...###...###..",
            "...###...###..",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
        ]);
        assert_eq!(mask, want);
        // Closing with a 5×5 square fills the three-pixel gap between the blocks.
        morph(&mut mask, &mut tmp, &mut col, g, 2, true);
        morph(&mut mask, &mut tmp, &mut col, g, 2, false);
        let (closed, _) = mask_of(&[
            "..............",
            "..............",
            "...#########..",
            "...#########..",
            "...#########..",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
            "..............",
        ]);
        assert_eq!(mask, closed);
    }

    #[test]
    fn only_the_largest_component_is_kept() {
        let (mut mask, g) = mask_of(&[
            "........", ".##.....", ".##.....", "........", "...####.", "...####.", "...####.",
            "........",
        ]);
        let mut queue = vec![0; g * g];
        keep_largest(&mut mask, &mut queue, g);
        let (want, _) = mask_of(&[
            "........", "........", "........", "........", "...####.", "...####.", "...####.",
            "........",
        ]);
        assert_eq!(mask, want);
    }

    #[test]
    fn region_grows_through_adjacent_cells_only() {
        // Three cells in a row: 0 | 1 | 2; from 0, two more cells must be 1 then 2.
        let g = 6;
        let labels: Vec<u32> = (0..g * g).map(|p| ((p % g) / 2) as u32).collect();
        let mut adj = vec![0.0; 9];
        adjacency(&labels, g, 3, &mut adj);
        assert_eq!(adj, vec![0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
        let mut selected = vec![0.0; 3];
        let mut rng = LaneRng::new(1, 2, 3, 4);
        grow_region(&mut rng, &adj, 3, 0, 2, &mut selected);
        assert_eq!(selected, vec![1.0, 1.0, 0.0]);
        grow_region(&mut rng, &adj, 3, 0, 3, &mut selected);
        assert_eq!(selected, vec![1.0, 1.0, 1.0]);
    }
}
