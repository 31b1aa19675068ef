//! Closed curves through control points: centripetal-free uniform Catmull–Rom and cubic Bézier.

use crate::geom::Vec2;

/// Samples per control segment written by [`catmull_rom_closed`].
pub const SAMPLES_PER_SEGMENT: usize = 12;

/// Evaluates a cubic Bézier `(a, b, c, d)` at `t ∈ [0, 1]`.
#[inline]
pub fn bezier(a: Vec2, b: Vec2, c: Vec2, d: Vec2, t: f32) -> Vec2 {
    let s = 1.0 - t;
    let w0 = s * s * s;
    let w1 = 3.0 * s * s * t;
    let w2 = 3.0 * s * t * t;
    let w3 = t * t * t;
    [
        w0 * a[0] + w1 * b[0] + w2 * c[0] + w3 * d[0],
        w0 * a[1] + w1 * b[1] + w2 * c[1] + w3 * d[1],
    ]
    .into()
}

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
        // Catmull–Rom as a Bézier: inner handles at p1 + (p2 − p0)/6 and p2 − (p3 − p1)/6.
        let b = [p1[0] + (p2[0] - p0[0]) / 6.0, p1[1] + (p2[1] - p0[1]) / 6.0];
        let c = [p2[0] - (p3[0] - p1[0]) / 6.0, p2[1] - (p3[1] - p1[1]) / 6.0];
        for k in 0..SAMPLES_PER_SEGMENT {
            if written == out.len() {
                return written;
            }
            let t = k as f32 / SAMPLES_PER_SEGMENT as f32;
            out[written] = bezier(p1, b.into(), c.into(), p2, t);
            written += 1;
        }
    }
    written
}
