//! The polar generator: jittered radii at jittered angles around a circle, smoothed by a closed
//! Catmull–Rom spline.

use super::spline::{catmull_rom_closed, SAMPLES_PER_SEGMENT};
use super::Stage;
use crate::geom::Vec2;
use crate::math::{sin_cos, TAU};
use crate::rng::LaneRng;

/// Polar generator parameters.
#[derive(Clone, Debug)]
pub struct Polar {
    /// Control points.
    pub n_ctrl: usize,
    /// Mean radius, metres.
    pub radius_m: f32,
    /// Relative radius jitter.
    pub radius_jitter: f32,
    /// Angle jitter, fraction of the angular step.
    pub angle_jitter: f32,
}

impl Stage for Polar {
    fn name(&self) -> &str {
        "polar"
    }
    fn max_points(&self) -> usize {
        self.n_ctrl * SAMPLES_PER_SEGMENT
    }
    fn scratch_len(&self) -> usize {
        2 * self.n_ctrl
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        _: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let n = self.n_ctrl;
        let ctrl: &mut [Vec2] = bytemuck::cast_slice_mut(&mut scratch[..2 * n]);
        let step = TAU / n as f32;
        for (i, c) in ctrl.iter_mut().enumerate() {
            let angle = (i as f32 + self.angle_jitter * rng.signed()) * step;
            let r = self.radius_m * (1.0 + self.radius_jitter * rng.signed());
            let (s, co) = sin_cos(angle);
            *c = Vec2::new(r * co, r * s);
        }
        catmull_rom_closed(ctrl, out)
    }
}
