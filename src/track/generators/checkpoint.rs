//! The checkpoint generator, after Gymnasium's CarRacing: radial checkpoints at jittered angles
//! and radii, followed by a car that steers toward the next checkpoint with a bounded turn per
//! step, moving on when its polar angle passes the checkpoint's (so an unreachable checkpoint
//! never traps it in orbit); after the last checkpoint it aims at a point before the start, then
//! at the start. The remaining gap is spread over the last quarter of the loop so it closes.

use bytemuck::{Pod, Zeroable};

use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
use crate::geom::Vec2;
use crate::math::{atan2, sin_cos, wrap_angle, FRAC_PI_2, TAU};
use crate::rng::LaneRng;

/// Checkpoint generator parameters.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// Checkpoints.
    pub n_checkpoints: usize,
    /// Outer checkpoint radius, metres.
    pub radius_m: f32,
    /// Inner checkpoint radius as a fraction of `radius_m`.
    pub min_radius_frac: f32,
    /// Maximum heading change per step, radians.
    pub max_turn_rad: f32,
    /// Step length, metres.
    pub step_m: f32,
    /// Steps before the loop is closed by force.
    pub max_steps: usize,
}

/// The checkpoint fields of `tg_checkpoint_params` (`kernels/track/checkpoint.cuh`).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct CheckpointParams {
    n_checkpoints: u32,
    radius_m: f32,
    min_radius_frac: f32,
    max_turn_rad: f32,
    step_m: f32,
    max_steps: u32,
}

impl Stage for Checkpoint {
    fn name(&self) -> &str {
        "checkpoint"
    }
    fn max_points(&self) -> usize {
        self.max_steps
    }
    fn scratch_len(&self) -> usize {
        2 * (self.n_checkpoints + 2)
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        _: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let n = self.n_checkpoints;
        let targets: &mut [Vec2] = bytemuck::cast_slice_mut(&mut scratch[..2 * (n + 2)]);
        let r = self.radius_m;
        let start = [r, 0.0];
        // Checkpoints 1..n at jittered angles; 0 is the start.
        for (c, target) in targets.iter_mut().enumerate().take(n).skip(1) {
            let angle = TAU * (c as f32 + 0.5 * rng.unit()) / n as f32;
            let radius = r * rng.range(self.min_radius_frac, 1.0);
            let (s, co) = sin_cos(angle);
            *target = Vec2::new(radius * co, radius * s);
        }
        // Closing approach: a point behind the start along its tangent, then the start.
        let lead = 4.0 * self.step_m;
        targets[n] = Vec2::new(r, -lead);
        targets[n + 1] = start.into();
        targets[0] = start.into();

        // Steer toward the current target; move on once the car's polar angle passes the
        // target's (as CarRacing does), so an unreachable target never traps the car in orbit.
        let mut pos = start;
        let mut heading = FRAC_PI_2;
        let mut dest = 1;
        let mut swept = 0.0f32;
        let mut polar = 0.0f32;
        let mut written = 0;
        while written < self.max_steps && swept < TAU {
            out[written] = pos.into();
            written += 1;
            while dest <= n + 1 && swept >= target_angle(targets[dest], dest, n) {
                dest += 1;
            }
            let t = targets[dest.min(n + 1)];
            let desired = atan2(t[1] - pos[1], t[0] - pos[0]);
            let diff = wrap_angle(desired - heading);
            heading = wrap_angle(heading + diff.clamp(-self.max_turn_rad, self.max_turn_rad));
            let (s, c) = sin_cos(heading);
            pos = [pos[0] + self.step_m * c, pos[1] + self.step_m * s];
            let now = atan2(pos[1], pos[0]);
            swept += wrap_angle(now - polar);
            polar = now;
        }
        // Closure: spread the gap between the last position and the start over the last quarter
        // of the loop (weights rising linearly to 1), so the curve closes without a jump.
        let gap = [start[0] - pos[0], start[1] - pos[1]];
        let tail = (written / 4).max(1);
        for k in 0..tail {
            let i = written - tail + k;
            let w = (k + 1) as f32 / (tail + 1) as f32;
            out[i] = Vec2::new(out[i][0] + w * gap[0], out[i][1] + w * gap[1]);
        }
        written
    }
    fn kernel(&self) -> Option<StageKernel> {
        Some(StageKernel {
            name: "tg_track_checkpoint",
            window: None,
            params: params_bytes(&CheckpointParams {
                n_checkpoints: u32::try_from(self.n_checkpoints).ok()?,
                radius_m: self.radius_m,
                min_radius_frac: self.min_radius_frac,
                max_turn_rad: self.max_turn_rad,
                step_m: self.step_m,
                max_steps: u32::try_from(self.max_steps).ok()?,
            }),
        })
    }
}

/// The swept polar angle at which target `dest` counts as passed: its own polar angle in
/// `[0, 2π)`, except the start (`dest = n + 1`), which is passed only at the end of the lap.
fn target_angle(t: Vec2, dest: usize, n: usize) -> f32 {
    if dest > n {
        return f32::INFINITY;
    }
    let a = atan2(t[1], t[0]);
    if a < 0.0 {
        a + TAU
    } else {
        a
    }
}
