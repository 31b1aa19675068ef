//! Closed curves through control points: the uniform Catmull–Rom spline of [`crate::geom`],
//! sampled closed.

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
