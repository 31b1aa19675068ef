//! The step pass of the [`Course`](super::Course) runtime: the lane function that steps one
//! chunk of envs (the CUDA step kernel's CPU twin), and what it reads per env.

use super::geometry::CourseGeometry;
use super::outputs::OutRows;
use super::step::{step_env, AgentPose, EnvCourse, EnvState, Goals, StepConsts};
use crate::geom::{Quat, Vec2, Vec3};

/// Envs per lane of the runtime passes (a lane runs its envs one after the other).
pub(super) const CHUNK: usize = 256;

/// The optional per-env inputs of a step.
pub(super) struct Inputs<'a> {
    pub(super) orientations: Option<&'a [Quat]>,
    pub(super) half_extents: Option<&'a [Vec2]>,
    pub(super) default_half: Vec2,
}

/// One lane's rows of the per-env inputs and state: envs `base .. base + positions.len()`.
pub(super) struct EnvRows<'a> {
    pub(super) base: usize,
    pub(super) positions: &'a [Vec3],
    pub(super) states: &'a mut [EnvState],
    pub(super) goals: &'a mut [Goals],
}

/// Steps the envs of one lane of [`Course::step`].
#[inline(never)]
pub(super) fn step_chunk(
    consts: &StepConsts,
    geometry: &CourseGeometry,
    inputs: &Inputs<'_>,
    env: EnvRows<'_>,
    mut out: OutRows<'_>,
) {
    let base = env.base;
    // A first pass loads the path lines each env's step will read (independent loads, so the
    // memory system serves many at once), the second does the work.
    let mut warm = 0.0f32;
    for (i, st) in env.states.iter().enumerate() {
        warm += touch(geometry, base + i, st);
    }
    std::hint::black_box(warm);
    let rows = env
        .positions
        .iter()
        .zip(env.states.iter_mut())
        .zip(env.goals.iter_mut());
    for (i, ((&position, state), goals)) in rows.enumerate() {
        let e = base + i;
        let agent = AgentPose {
            position,
            orientation: inputs.orientations.map(|o| o[e]),
            half_extents: inputs.half_extents.map_or(inputs.default_half, |h| h[e]),
        };
        let o = step_env(consts, &env_course(geometry, e), &agent, state, goals);
        out.set(i, &o);
    }
}

/// Reads one word of every cache line of the path env `e`'s next step will most likely read
/// (around its segment) and returns their sum.
#[inline]
fn touch(g: &CourseGeometry, e: usize, state: &EnvState) -> f32 {
    let n = g.path_count[e] as usize;
    let k = state.segment as usize;
    if k >= n {
        return 0.0;
    }
    let pa = e * g.path_max;
    // Points k − 1 ..= k + 3: the segment, its neighbours and their curvature triples, which
    // is what a step that stays on its segment or moves to the next one reads.
    let at = |d: usize| {
        let i = k + n - 1 + d;
        let i = if i >= n { i - n } else { i };
        if i >= n {
            i - n
        } else {
            i
        }
    };
    g.path[pa + at(0)][0] + g.path[pa + at(4)][0]
}

/// Env `e`'s geometry as the step kernel reads it.
#[inline]
pub(super) fn env_course(g: &CourseGeometry, e: usize) -> EnvCourse<'_> {
    let (pa, ka, oa) = (
        e * g.path_max,
        e * g.checkpoint_max,
        e * g.obstacle_max.max(1),
    );
    let n = g.path_count[e] as usize;
    EnvCourse {
        path: &g.path[pa..pa + n],
        length: g.path_length[e],
        checkpoints: &g.checkpoints[ka..ka + g.checkpoint_count[e] as usize],
        obstacles: &g.obstacles[oa..oa + g.obstacle_count[e] as usize],
    }
}
