//! Generator stages: each draws one env's closed plan-view curve.
//!
//! A generator is a lane function: given the env's random stream for the current attempt it
//! writes a dense closed polyline (metres, no repeated end point) into its slice of the raw
//! buffer and returns the number of points. The pipeline then resamples, relaxes, validates
//! and inflates it. Implement [`Stage`] to plug in your own generator
//! (see `examples/custom_stage.rs`).

mod bezier;
mod checkpoint;
mod circuit;
mod hull;
mod polar;
mod repulsive;
pub mod spline;
mod voronoi;

use std::sync::Arc;

use crate::geom::Vec2;
use crate::preset::{GeneratorParams, Preset, Sampling};
use crate::rng::LaneRng;

pub use bezier::Bezier;
pub use checkpoint::Checkpoint;
pub use circuit::{Circuit, FinalSpacing};
pub use hull::Hull;
pub use polar::Polar;
pub use repulsive::Repulsive;
pub use voronoi::Voronoi;

/// A generator stage of the track pipeline, run once per env and attempt.
///
/// Contract: `run_lane` writes at most [`max_points`](Stage::max_points) points into `out` and
/// returns how many it wrote (at least 3 for a usable curve; fewer makes the attempt invalid).
/// It must be a pure function of its arguments: draw randomness only from `rng`, keep state only
/// in its scratch (`f32` words in `scratch`, integers — labels, indices, counters — in
/// `scratch_u32`, never in an `f32` word; the contents of both on entry are unspecified), and use
/// only IEEE-exact operations and [`crate::math`] so that the CUDA twin can reproduce it bit for
/// bit.
pub trait Stage: Send + Sync {
    /// A short name, shown in errors and benchmarks.
    fn name(&self) -> &str;
    /// The most points `run_lane` writes for one env.
    fn max_points(&self) -> usize;
    /// `f32` scratch words per env (sized once when the pipeline is built).
    fn scratch_len(&self) -> usize {
        0
    }
    /// `u32` scratch words per env (sized once when the pipeline is built).
    fn scratch_u32_len(&self) -> usize {
        0
    }
    /// Draws one env's closed curve into `out`; returns the number of points written. For an
    /// iterative stage this is the set-up: it also leaves its state in the scratch.
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        scratch_u32: &mut [u32],
        out: &mut [Vec2],
    ) -> usize;
    /// For an iterative stage, the most windows of [`window_lane`](Stage::window_lane) (a hard
    /// cap); 0, the default, makes `run_lane` the whole stage.
    fn max_windows(&self) -> u32 {
        0
    }
    /// One window of an iterative stage: continues from the state in the scratch, writes the
    /// current curve into `out` and returns `(count, still_active)`. The pipeline runs windows in
    /// a bounded loop while any env is active (on CUDA, a WHILE graph node).
    fn window_lane(
        &self,
        scratch: &mut [f32],
        scratch_u32: &mut [u32],
        out: &mut [Vec2],
    ) -> (usize, bool) {
        let _ = (scratch, scratch_u32, out);
        (0, false)
    }
    /// The stage's CUDA kernel, if it has one (a plug-in without one runs on the CPU backend
    /// only; on a kernel backend it is a clear error).
    fn kernel(&self) -> Option<StageKernel> {
        None
    }
}

/// A generator stage's kernels (`kernels/track/<name>.cu`): the set-up kernel, the window kernel
/// of an iterative stage, and the bytes of the stage's own parameter struct, which follows the
/// common generator parameters (`tg_generate_common`) in the kernels' parameter struct.
#[derive(Clone, Debug)]
pub struct StageKernel {
    /// The set-up (or whole-stage) kernel, e.g. `tg_track_polar`.
    pub name: &'static str,
    /// The window kernel of an iterative stage, e.g. `tg_track_repulsive_window`.
    pub window: Option<&'static str>,
    /// The bytes of the stage's `#[repr(C)]` parameter struct.
    pub params: Vec<u8>,
}

/// The built-in generator stage a preset selects.
pub fn from_preset(preset: &Preset) -> Arc<dyn Stage> {
    let scale = preset.track.scale_m;
    let spacing = preset.track.spacing_m;
    match preset.generator {
        GeneratorParams::Polar {
            n_ctrl,
            radius_jitter,
            angle_jitter,
        } => Arc::new(Polar {
            n_ctrl: n_ctrl as usize,
            radius_m: scale,
            radius_jitter,
            angle_jitter,
            min_turn_radius_m: preset.track.min_turn_radius_m,
        }),
        GeneratorParams::Bezier {
            n_ctrl,
            handle,
            radius_jitter,
        } => Arc::new(Bezier {
            n_ctrl: n_ctrl as usize,
            radius_m: scale,
            handle,
            radius_jitter,
            min_turn_radius_m: preset.track.min_turn_radius_m,
        }),
        GeneratorParams::Hull {
            n_points,
            displacement,
        } => Arc::new(Hull {
            n_points: n_points as usize,
            radius_m: scale,
            displacement,
            min_turn_radius_m: preset.track.min_turn_radius_m,
        }),
        GeneratorParams::Voronoi {
            n_sites,
            n_cells,
            grid,
        } => Arc::new(Voronoi {
            n_sites: n_sites as usize,
            n_cells: n_cells as usize,
            grid: grid as usize,
            radius_m: scale,
        }),
        GeneratorParams::Checkpoint {
            n_checkpoints,
            min_radius_frac,
            max_turn_deg,
            max_steps,
        } => Arc::new(Checkpoint {
            n_checkpoints: n_checkpoints as usize,
            radius_m: scale,
            min_radius_frac,
            max_turn_rad: max_turn_deg * (crate::math::PI / 180.0),
            step_m: spacing,
            max_steps: max_steps as usize,
        }),
        GeneratorParams::Repulsive {
            n_points,
            max_iters,
            n_obstacles,
            obstacle_radius_frac,
            length_factor,
        } => Arc::new(Repulsive {
            n_points: n_points as usize,
            max_iters: max_iters as usize,
            n_obstacles: n_obstacles as usize,
            radius_m: scale,
            obstacle_radius_m: obstacle_radius_frac * scale,
            length_factor,
            half_width_m: preset.track.half_width_m,
        }),
        GeneratorParams::Circuit {
            min_corners,
            max_corners,
            hairpin_weight,
            slow_weight,
            sweeper_weight,
            chicane_weight,
            reverse_fraction,
            min_length_m,
            max_length_m,
            max_radius_m,
            transition,
        } => Arc::new(Circuit {
            min_corners: min_corners as usize,
            max_corners: max_corners as usize,
            weights: [hairpin_weight, slow_weight, sweeper_weight, chicane_weight],
            reverse_fraction,
            min_length_m,
            max_length_m,
            max_radius_m,
            transition,
            min_turn_radius_m: preset.track.min_turn_radius_m,
            half_width_m: preset.track.half_width_m,
            spacing: (preset.track.sampling == Sampling::Generator).then_some(FinalSpacing {
                min_spacing_m: preset.track.spacing_m,
                max_spacing_m: preset.track.max_spacing_m,
                sagitta_m: preset.track.sagitta_m,
                n_max: preset.track.n_max as usize,
            }),
        }),
    }
}
