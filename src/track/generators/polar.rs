//! The polar generator: jittered radii at jittered angles around a circle, smoothed by a closed
//! Catmull–Rom spline.
//!
//! The control points are placed curvature-aware: before sampling, [`soften_closed`] moves each
//! control point whose spline neighbourhood turns tighter than `SOFTEN_MARGIN · min_turn_radius`
//! toward its neighbours, so the curve rarely needs the pipeline's relaxation.

use bytemuck::{Pod, Zeroable};

use super::spline::{
    catmull_rom_closed, catmull_rom_segment, soften_closed, SAMPLES_PER_SEGMENT, SOFTEN_MARGIN,
    SOFTEN_ROUNDS,
};
use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
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
    /// The preset's minimum turn radius, metres: the control points are softened against it.
    pub min_turn_radius_m: f32,
}

/// The polar fields of `tg_polar_params` (`kernels/track/polar.cuh`).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct PolarParams {
    n_ctrl: u32,
    radius_m: f32,
    radius_jitter: f32,
    angle_jitter: f32,
    max_curvature: f32,
    pad: u32,
}

impl Polar {
    /// The curvature the control points are softened to, 1/m.
    fn max_curvature(&self) -> f32 {
        1.0 / (SOFTEN_MARGIN * self.min_turn_radius_m)
    }
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
        soften_closed(
            ctrl,
            self.max_curvature(),
            SOFTEN_ROUNDS,
            catmull_rom_segment,
        );
        catmull_rom_closed(ctrl, out)
    }
    fn kernel(&self) -> Option<StageKernel> {
        Some(StageKernel {
            name: "tg_track_polar",
            window: None,
            params: params_bytes(&PolarParams {
                n_ctrl: u32::try_from(self.n_ctrl).ok()?,
                radius_m: self.radius_m,
                radius_jitter: self.radius_jitter,
                angle_jitter: self.angle_jitter,
                max_curvature: self.max_curvature(),
                pad: 0,
            }),
        })
    }
}
