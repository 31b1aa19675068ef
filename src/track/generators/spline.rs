//! Closed curves through control points: the uniform Catmull–Rom spline of [`crate::geom`],
//! sampled closed, and the curvature-aware softening of control points that the polar, Bézier
//! and hull generators run before sampling.
//!
//! Both splines are piecewise cubic Béziers, whose curvature has a closed form
//! ([`bezier_curvature_exceeds`]). [`soften_closed`] evaluates it at nine parameters per segment
//! and moves the control points next to a too-tight stretch toward their neighbours until the
//! whole curve turns no tighter than `SOFTEN_MARGIN · min_turn_radius` there. That is the
//! Laplacian step of the pipeline's relaxation, applied to the 10–40 control points instead of
//! the few hundred resampled ones, with an exact curvature instead of a discrete one; the margin
//! covers the gap between the two. Measured on 4096 envs of the presets (`examples/first_attempt.rs`),
//! the share of first attempts that relaxation has to fix falls from 74 % to 0 % (polar), 68 % to
//! 0.5 % (bezier) and 95 % to 0.05 % (hull).

use crate::geom::{catmull_rom, Vec2};

/// Samples per control segment written by [`catmull_rom_closed`].
pub const SAMPLES_PER_SEGMENT: usize = 12;

/// Samples the closed uniform Catmull–Rom spline through `ctrl` into `out`
/// ([`SAMPLES_PER_SEGMENT`] points per control point); returns the number written.
pub fn catmull_rom_closed(ctrl: &[Vec2], out: &mut [Vec2]) -> usize {
    let n = ctrl.len();
    let mut written = 0;
    for i in 0..n {
        let p0 = ctrl[(i + n - 1) % n];
        let p1 = ctrl[i];
        let p2 = ctrl[(i + 1) % n];
        let p3 = ctrl[(i + 2) % n];
        for k in 0..SAMPLES_PER_SEGMENT {
            if written == out.len() {
                return written;
            }
            let t = k as f32 / SAMPLES_PER_SEGMENT as f32;
            out[written] = catmull_rom(p0, p1, p2, p3, t);
            written += 1;
        }
    }
    written
}

/// Target curvature of [`soften_closed`] relative to the preset's limit: the control polygon is
/// softened until the spline's curvature stays under `1 / (SOFTEN_MARGIN · min_turn_radius)`,
/// which leaves room for the resampled curve's discrete (Menger) curvature.
pub const SOFTEN_MARGIN: f32 = 1.15;

/// Most rounds of [`soften_closed`].
pub const SOFTEN_ROUNDS: usize = 24;

/// Gain of one softening move: the fraction of the way to the neighbours' midpoint.
const SOFTEN_GAIN: f32 = 0.25;

/// Parameters at which [`soften_closed`] evaluates each segment's curvature; values up to ½
/// charge the segment's start point, values from ½ its end point.
const SOFTEN_T: [f32; 9] = [0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0];

/// The Bézier control points `[a, b, c, d]` of the closed uniform Catmull–Rom segment from
/// `ctrl[i]` to `ctrl[i + 1]` (indices modulo the length), the segment [`catmull_rom_closed`]
/// samples.
pub fn catmull_rom_segment(ctrl: &[Vec2], i: usize) -> [Vec2; 4] {
    let n = ctrl.len();
    let p0 = ctrl[(i + n - 1) % n];
    let p1 = ctrl[i];
    let p2 = ctrl[(i + 1) % n];
    let p3 = ctrl[(i + 2) % n];
    [p1, p1 + (p2 - p0) / 6.0, p2 - (p3 - p1) / 6.0, p2]
}

/// Whether the curvature of the cubic Bézier segment `seg` at parameter `t` exceeds `k` (1/m);
/// a degenerate point (zero or NaN derivative) counts as exceeding.
///
/// With `u = B'(t)/3` and `v = B''(t)/6`, `κ = |B' × B''| / |B'|³ = (2/3)·|u × v| / |u|³`, so the
/// test is `4·(u × v)² > 9·k²·|u|⁶`, with IEEE operations only.
pub fn bezier_curvature_exceeds(seg: [Vec2; 4], t: f32, k: f32) -> bool {
    let [a, b, c, d] = seg;
    let (d1, d2, d3) = (b - a, c - b, d - c);
    let s = 1.0 - t;
    let u = d1 * (s * s) + d2 * (2.0 * t * s) + d3 * (t * t);
    let v = (d2 - d1) * s + (d3 - d2) * t;
    let cross = u[0] * v[1] - u[1] * v[0];
    let uu = u[0] * u[0] + u[1] * u[1];
    let lhs = 4.0 * cross * cross;
    let rhs = 9.0 * k * k * (uu * uu * uu);
    !(lhs <= rhs && uu > 0.0)
}

/// Softens the closed control polygon `ctrl` in place until the closed cubic spline whose segment
/// `i` is `segment(ctrl, i)` keeps its curvature at or under `max_curvature` at the parameters
/// `t = 0, ⅛, …, 1` of every segment, for at most `rounds` rounds; returns the rounds that moved a
/// point.
///
/// A round visits the points in order (Gauss–Seidel): point `i` is charged when a segment next
/// to it exceeds the curvature on its half, and a charged point moves a quarter of the way
/// to the midpoint of its neighbours — the Laplacian step of the pipeline's relaxation, applied
/// to a dozen control points instead of hundreds of resampled ones, so that the curve the
/// generator hands on rarely needs relaxing.
pub fn soften_closed(
    ctrl: &mut [Vec2],
    max_curvature: f32,
    rounds: usize,
    segment: impl Fn(&[Vec2], usize) -> [Vec2; 4],
) -> usize {
    let n = ctrl.len();
    if n < 3 {
        return 0;
    }
    let mut moved_rounds = 0;
    for _ in 0..rounds {
        let mut moved = false;
        for i in 0..n {
            let before = segment(ctrl, (i + n - 1) % n);
            let after = segment(ctrl, i);
            let mut charged = false;
            for &t in &SOFTEN_T {
                if (t >= 0.5 && bezier_curvature_exceeds(before, t, max_curvature))
                    || (t <= 0.5 && bezier_curvature_exceeds(after, t, max_curvature))
                {
                    charged = true;
                    break;
                }
            }
            if charged {
                let prev = ctrl[(i + n - 1) % n];
                let next = ctrl[(i + 1) % n];
                let p = ctrl[i];
                let mid = Vec2::new(0.5 * (prev[0] + next[0]), 0.5 * (prev[1] + next[1]));
                ctrl[i] = Vec2::new(
                    p[0] + SOFTEN_GAIN * (mid[0] - p[0]),
                    p[1] + SOFTEN_GAIN * (mid[1] - p[1]),
                );
                moved = true;
            }
        }
        if !moved {
            break;
        }
        moved_rounds += 1;
    }
    moved_rounds
}
