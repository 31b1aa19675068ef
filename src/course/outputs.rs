//! [`StepOutputs`]: the per-env outputs of [`Course::step`](super::Course::step), and the
//! mutable row views (`OutRows`) the step and reset passes write them through.

use super::step::EnvOutputs;
use crate::exec::layout::soa_batch;

soa_batch! {
    /// The per-env outputs of [`Course::step`](super::Course::step), one entry per env in every buffer.
    ///
    /// `step()` writes every field of every env. Events (`passed`, `lap_completed`, `wrong_way`,
    /// `wrong_checkpoint`) describe the step just taken: the swept segment from the previous
    /// position to the current one. Lengths are metres; the track mode is planar (every output
    /// but `n_up` ignores z).
    ///
    /// **Non-finite positions** (NaN or ±∞ in any coordinate) give, for that env: no events,
    /// `next_index` and `laps` unchanged, `progress` = checkpoints passed (no fraction),
    /// `dist_to_next`, `s`, `n`, `n_up`, `curvature` and `penetration` NaN, `segment` unchanged,
    /// `off_track` 1, `hit` 0; and the previous position becomes the NaN sentinel, so the next
    /// finite step crosses nothing.
    #[derive(Clone, Debug)]
    pub struct StepOutputs {
        per_env {
            /// Checkpoints passed this step (crossed forward inside their window, in order; normally 0 or 1).
            passed: u8 = 0,
            /// 1 when this step passed checkpoint 0 (the start line) after all the others: a lap.
            lap_completed: u8 = 0,
            /// 1 when this step moved backward along the path (plan displacement · path direction <
            /// −`wrong_way_tolerance_m`).
            wrong_way: u8 = 0,
            /// 1 when this step crossed the checkpoint after the next one (the
            /// [`SKIP_WINDOW`](super::SKIP_WINDOW) = 1 checkpoints after it) without passing the next one:
            /// a skipped checkpoint or gate.
            wrong_checkpoint: u8 = 0,
            /// Index of the next checkpoint to pass (1 after a reset: the agent starts on checkpoint 0).
            next_index: u32 = 0,
            /// Laps completed since the last reset.
            laps: u32 = 0,
            /// Checkpoints passed since the last reset + the fraction `[0, 1]` of the leg to the next
            /// one covered (by arc length `s`; 0 behind the previous checkpoint, 1 past the next).
            /// Non-decreasing while the agent drives forward through its checkpoints.
            progress: f32 = 0.0,
            /// Distance to the next checkpoint's centre (plan view in track mode, 3D for gates).
            dist_to_next: f32 = 0.0,
            /// Arc length of the nearest path point (localization), `[0, path_length)`.
            s: f32 = 0.0,
            /// Signed plan-view distance to the path, positive to the left of its direction.
            n: f32 = 0.0,
            /// Height above the nearest path point.
            n_up: f32 = 0.0,
            /// Path segment of the nearest point.
            segment: u32 = 0,
            /// Path curvature at `s` (linear between the segment's points), 1/m, positive turning left.
            curvature: f32 = 0.0,
            /// 1 when `|n| > half_width_m` (or `n` is NaN).
            off_track: u8 = 0,
            /// 1 when `penetration > 0`.
            hit: u8 = 0,
            /// Deepest penetration of the agent into anything it collides with, ≥ 0: track mode the
            /// box footprint out of the band and into obstacles, gate mode the sphere into gate frames,
            /// posts and obstacles.
            penetration: f32 = 0.0,
        }
        rows: pub(super) struct OutRows from EnvOutputs;
    }
}
