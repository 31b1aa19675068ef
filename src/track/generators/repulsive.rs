//! The repulsive-curve generator (being written).

use super::{Stage, P2};
use crate::rng::LaneRng;

/// Repulsive generator parameters.
#[derive(Clone, Debug)]
pub struct Repulsive {
    /// Curve points.
    pub n_points: usize,
    /// Gradient steps.
    pub max_iters: usize,
    /// Obstacle discs.
    pub n_obstacles: usize,
    /// Radius of the containing disc, metres.
    pub radius_m: f32,
    /// Obstacle radius, metres.
    pub obstacle_radius_m: f32,
    /// Target length as a multiple of the disc circumference.
    pub length_factor: f32,
    /// Half width of the track, metres (the curve keeps 2·half_width from itself and obstacles).
    pub half_width_m: f32,
}

impl Stage for Repulsive {
    fn name(&self) -> &str {
        "repulsive"
    }
    fn max_points(&self) -> usize {
        self.n_points
    }
    fn run_lane(&self, _rng: &mut LaneRng, _scratch: &mut [f32], _out: &mut [P2]) -> usize {
        todo!("repulsive")
    }
}
