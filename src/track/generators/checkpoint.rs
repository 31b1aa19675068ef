//! The checkpoint generator, after Gymnasium's CarRacing: radial checkpoints at jittered angles
//! and radii, followed by a car that steers toward the next checkpoint with a bounded turn per
//! step; after the last checkpoint it aims at a point before the start, then at the start, so
//! that the loop closes with a matching heading.

use super::{Stage, P2};
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
    fn run_lane(&self, rng: &mut LaneRng, scratch: &mut [f32], out: &mut [P2]) -> usize {
        let n = self.n_checkpoints;
        let targets: &mut [P2] = bytemuck::cast_slice_mut(&mut scratch[..2 * (n + 2)]);
        let r = self.radius_m;
        let start = [r, 0.0];
        // Checkpoints 1..n at jittered angles; 0 is the start.
        for (c, target) in targets.iter_mut().enumerate().take(n).skip(1) {
            let angle = TAU * (c as f32 + 0.5 * rng.unit()) / n as f32;
            let radius = r * rng.range(self.min_radius_frac, 1.0);
            let (s, co) = sin_cos(angle);
            *target = [radius * co, radius * s];
        }
        // Closing approach: a point behind the start along its tangent, then the start.
        let lead = 4.0 * self.step_m;
        targets[n] = [r, -lead];
        targets[n + 1] = start;
        targets[0] = start;

        let switch_m = 2.0 * self.step_m;
        let mut pos = start;
        let mut heading = FRAC_PI_2;
        let mut dest = 1;
        let mut written = 0;
        while written < self.max_steps {
            out[written] = pos;
            written += 1;
            let t = targets[dest];
            let to = [t[0] - pos[0], t[1] - pos[1]];
            let dist = (to[0] * to[0] + to[1] * to[1]).sqrt();
            if dist < switch_m {
                if dest == n + 1 {
                    break;
                }
                dest += 1;
                continue_steer(&mut heading, targets[dest], pos, self.max_turn_rad);
            } else {
                continue_steer(&mut heading, t, pos, self.max_turn_rad);
            }
            let (s, c) = sin_cos(heading);
            pos = [pos[0] + self.step_m * c, pos[1] + self.step_m * s];
        }
        // Drop the tail that re-enters the start's neighbourhood so the closing segment is short.
        while written > 3 {
            let p = out[written - 1];
            let d = ((p[0] - start[0]) * (p[0] - start[0]) + (p[1] - start[1]) * (p[1] - start[1]))
                .sqrt();
            if d < 0.5 * self.step_m {
                written -= 1;
            } else {
                break;
            }
        }
        written
    }
}

/// Turns `heading` toward `target` by at most `max_turn` radians.
fn continue_steer(heading: &mut f32, target: P2, pos: P2, max_turn: f32) {
    let desired = atan2(target[1] - pos[1], target[0] - pos[0]);
    let diff = wrap_angle(desired - *heading);
    *heading = wrap_angle(*heading + diff.clamp(-max_turn, max_turn));
}
