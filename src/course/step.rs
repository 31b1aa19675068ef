//! The per-env step kernel: localization, checkpoint crossing, progress, wrong way, off-track
//! and collision of one agent against its course, as one pure function ([`step_env`]) that the
//! runtime runs over env lanes (and that a CUDA kernel mirrors thread per env).

use super::geometry::{signed_curvature, Checkpoint};
use super::localize::locate;
use crate::geom::{self, fails_le, horizontal_left, sdf, Quat, Vec2, Vec3};

/// Checkpoints past the next one that a step tests for crossing: crossing one of them while the
/// next one was not crossed is a `wrong_checkpoint`; crossing the next one and then these in the
/// same step passes them all. One is enough to flag every skip of an agent that crosses at most
/// one checkpoint window per step: after missing the next checkpoint it crosses the one after
/// it, which is then in the window. (Each more costs a cache line per env and step.)
pub const SKIP_WINDOW: usize = 1;

/// Which kind of course an env races.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A closed track: planar checkpoints across the road, box footprint vs the band.
    Track,
    /// A gate course: gate openings as checkpoints, sphere vs gate frames.
    Gates,
}

/// Constants of the step kernel.
#[derive(Clone, Copy, Debug)]
pub struct StepConsts {
    /// Track or gates.
    pub mode: Mode,
    /// Half width of the band around the path, metres.
    pub half_width_m: f32,
    /// Most segments the localization walk takes each way before it scans the whole path.
    pub window: usize,
    /// Squared distance above which localization scans the whole path, m².
    pub relocalize2: f32,
    /// Backward displacement along the path (metres per step) above which `wrong_way` is set.
    pub wrong_way_tolerance_m: f32,
    /// Gate frame thickness, metres (gate mode).
    pub thickness_m: f32,
    /// Whether gates stand on posts (gate mode).
    pub posts: bool,
}

/// One env's course geometry, as the kernel reads it.
pub struct EnvCourse<'a> {
    /// Path points `[x, y, z, s]`.
    pub path: &'a [[f32; 4]],
    /// Closed path length.
    pub length: f32,
    /// Checkpoints (at least 2).
    pub checkpoints: &'a [Checkpoint],
    /// Obstacles `[x, y, top_z, radius]`.
    pub obstacles: &'a [[f32; 4]],
}

/// One agent's inputs.
#[derive(Clone, Copy, Debug)]
pub struct AgentPose {
    /// Position, metres.
    pub position: Vec3,
    /// Orientation `[x, y, z, w]`, if bound.
    pub orientation: Option<Quat>,
    /// Footprint half extents `[half_length, half_width]` (track) or `[radius, _]` (gates).
    pub half_extents: Vec2,
}

/// The runtime state of one env between steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnvState {
    /// Position at the previous step; NaN after a reset (the no-crossing sentinel).
    pub prev: Vec3,
    /// Path segment of the previous localization (the search window's centre).
    pub segment: u32,
    /// Checkpoints passed since the last reset.
    pub passed: u32,
    /// Index of the next checkpoint: `(1 + passed) mod K`, kept to avoid the division.
    pub next: u32,
    /// Laps completed: `passed / K`.
    pub laps: u32,
}

impl EnvState {
    /// The state after a reset: on checkpoint 0, the next one is 1, nothing passed.
    pub const RESET: Self = Self {
        prev: Vec3::NAN,
        segment: 0,
        passed: 0,
        next: 1,
        laps: 0,
    };
}

/// One env's step outputs (see [`StepOutputs`](super::StepOutputs) for the contract).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnvOutputs {
    pub passed: u8,
    pub lap_completed: u8,
    pub wrong_way: u8,
    pub wrong_checkpoint: u8,
    pub next_index: u32,
    pub laps: u32,
    pub progress: f32,
    pub dist_to_next: f32,
    pub s: f32,
    pub n: f32,
    pub n_up: f32,
    pub segment: u32,
    pub curvature: f32,
    pub off_track: u8,
    pub hit: u8,
    pub penetration: f32,
}

/// Whether the segment `a → b` crosses checkpoint `cp`'s window from back to front.
#[inline]
pub fn crosses_forward(cp: &Checkpoint, a: Vec3, b: Vec3) -> bool {
    Crossing::of(cp).crosses_forward(a, b)
}

/// The part of a [`Checkpoint`] a crossing test reads (32 bytes: two per cache line). Its normal
/// is [`horizontal_left`]`(tangent)`, as the checkpoint's.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// Centre of the window.
    pub center: Vec3,
    /// Half width along the normal.
    pub half_width: f32,
    /// Forward direction.
    pub tangent: Vec3,
    /// Half height along `tangent × normal`.
    pub half_height: f32,
}

impl Crossing {
    /// The crossing window of `cp`.
    #[inline]
    pub fn of(cp: &Checkpoint) -> Self {
        Self {
            center: cp.center,
            half_width: cp.half_width,
            tangent: cp.tangent,
            half_height: cp.half_height,
        }
    }

    /// Whether the segment `a → b` crosses the window from back to front.
    #[inline]
    pub fn crosses_forward(&self, a: Vec3, b: Vec3) -> bool {
        let da = (a - self.center).dot(self.tangent);
        let db = (b - self.center).dot(self.tangent);
        if !(da < 0.0 && db >= 0.0) {
            return false;
        }
        let tau = da / (da - db);
        let p = Vec3::new(
            a[0] + tau * (b[0] - a[0]),
            a[1] + tau * (b[1] - a[1]),
            a[2] + tau * (b[2] - a[2]),
        );
        let r = p - self.center;
        let normal = horizontal_left(self.tangent);
        let up = self.tangent.cross(normal);
        r.dot(normal).abs() <= self.half_width && r.dot(up).abs() <= self.half_height
    }
}

/// What a step needs of the checkpoints ahead, cached per env (a stream the runtime reads in env
/// order, rather than random rows of the checkpoint buffer; refreshed from the buffer when
/// checkpoints are passed, and by a reset): the crossing windows of the next checkpoint and the
/// [`SKIP_WINDOW`] after it, and the next one's leg.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Goals {
    /// Crossing windows of checkpoints `next ..= next + SKIP_WINDOW` (mod the count).
    pub crossings: [Crossing; SKIP_WINDOW + 1],
    /// Arc length of the previous checkpoint (`s − leg` of the next one; may be negative).
    pub from_s: f32,
    /// Leg length to the next checkpoint.
    pub leg: f32,
}

impl Goals {
    /// A placeholder before the first reset: every field NaN.
    pub const NAN: Self = Self {
        crossings: [Crossing {
            center: Vec3::NAN,
            half_width: f32::NAN,
            tangent: Vec3::NAN,
            half_height: f32::NAN,
        }; SKIP_WINDOW + 1],
        from_s: f32::NAN,
        leg: f32::NAN,
    };
}

/// The goals of an env whose next checkpoint is `next`.
#[inline]
pub fn goals_at(checkpoints: &[Checkpoint], next: usize) -> Goals {
    let k = checkpoints.len();
    let cp = &checkpoints[next];
    Goals {
        crossings: std::array::from_fn(|j| {
            let i = next + j;
            Crossing::of(&checkpoints[if i < k { i } else { i - k }])
        }),
        from_s: cp.s - cp.leg,
        leg: cp.leg,
    }
}

/// One step of one env: reads the agent's pose, the previous state and the cached goals
/// ([`goals_at`]`(checkpoints, state.next)`), returns the outputs and updates state and goals.
/// `course.checkpoints` must hold at least [`SKIP_WINDOW`] + 2 checkpoints and `course.path` at
/// least 2 points.
#[inline(always)]
pub fn step_env(
    c: &StepConsts,
    course: &EnvCourse<'_>,
    agent: &AgentPose,
    state: &mut EnvState,
    goals: &mut Goals,
) -> EnvOutputs {
    let q = agent.position;
    let k_count = course.checkpoints.len();
    let finite = q[0].is_finite() && q[1].is_finite() && q[2].is_finite();
    if !finite {
        // Defined outputs for a non-finite position: no event, progress frozen at the count of
        // checkpoints passed, NaN geometry, off track, no hit. The NaN previous position makes
        // the next finite step's crossing test fail, as after a reset.
        state.prev = Vec3::NAN;
        return EnvOutputs {
            passed: 0,
            lap_completed: 0,
            wrong_way: 0,
            wrong_checkpoint: 0,
            next_index: state.next,
            laps: state.laps,
            progress: state.passed as f32,
            dist_to_next: f32::NAN,
            s: f32::NAN,
            n: f32::NAN,
            n_up: f32::NAN,
            segment: state.segment,
            curvature: f32::NAN,
            off_track: 1,
            hit: 0,
            penetration: f32::NAN,
        };
    }

    // Localization.
    let path = course.path;
    let n_pts = path.len();
    let loc = locate(path, [q[0], q[1]], state.segment, c.window, c.relocalize2);
    let k = loc.segment as usize;
    let k1 = if k + 1 < n_pts { k + 1 } else { 0 };
    let (a, b, t) = (path[k], path[k1], loc.t);
    let s_end = if k + 1 < n_pts { b[3] } else { course.length };
    let s = a[3] + t * (s_end - a[3]);
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let dl = (dx * dx + dy * dy).sqrt();
    let dir = if dl > 0.0 {
        [dx / dl, dy / dl]
    } else {
        [1.0, 0.0]
    };
    let (cx, cy) = (a[0] + t * dx, a[1] + t * dy);
    let side = dir[0] * (q[1] - cy) - dir[1] * (q[0] - cx);
    let dist = loc.dist2.sqrt();
    let n = if side >= 0.0 { dist } else { -dist };
    let n_up = q[2] - (a[2] + t * (b[2] - a[2]));
    // The curvature of the segment's two points, recomputed from the path (the neighbours are
    // in the search window already) rather than read from the curvature buffer: the same
    // function on the same points, so the same bits, one cache line fewer per step.
    let km = if k > 0 { k - 1 } else { n_pts - 1 };
    let k2 = if k1 + 1 < n_pts { k1 + 1 } else { 0 };
    let kappa_a = signed_curvature(path[km], a, b);
    let kappa_b = signed_curvature(a, b, path[k2]);
    let curvature = kappa_a + t * (kappa_b - kappa_a);

    // Checkpoint crossings of the swept segment prev → q (none when prev is the NaN sentinel).
    let next = state.next as usize;
    let mut passed_now = 0u32;
    let mut chain = true;
    let mut wrong_checkpoint = false;
    let mut lap = false;
    for (j, goal) in goals.crossings.iter().enumerate() {
        if goal.crosses_forward(state.prev, q) {
            if chain {
                passed_now += 1;
                lap |= next + j == k_count || next + j == 0;
            } else {
                wrong_checkpoint = true;
            }
        } else {
            chain = false;
        }
    }
    state.passed += passed_now;
    let mut next = next + passed_now as usize;
    if next >= k_count {
        next -= k_count;
    }
    state.next = next as u32;
    state.laps += u32::from(lap);
    let laps = state.laps;
    if passed_now > 0 {
        *goals = goals_at(course.checkpoints, next);
    }

    // Progress: checkpoints passed + the fraction of the leg to the next one covered along s.
    let (from_s, leg) = (goals.from_s, goals.leg);
    let mut u = s - from_s;
    if u < 0.0 {
        u += course.length;
    }
    if u >= course.length {
        u -= course.length;
    }
    let fraction = if u <= leg {
        u / leg
    } else if u - leg < 0.5 * (course.length - leg) {
        1.0
    } else {
        0.0
    };
    let progress = state.passed as f32 + fraction.clamp(0.0, 1.0);
    let to_next = goals.crossings[0].center - q;
    let dist_to_next = match c.mode {
        Mode::Track => (to_next[0] * to_next[0] + to_next[1] * to_next[1]).sqrt(),
        Mode::Gates => to_next.dot(to_next).sqrt(),
    };

    // Wrong way: this step's plan displacement points backward along the path.
    let along = (q[0] - state.prev[0]) * dir[0] + (q[1] - state.prev[1]) * dir[1];
    let wrong_way = along < -c.wrong_way_tolerance_m;

    let off_track = fails_le(n.abs(), c.half_width_m);

    // Collision.
    let mut worst = f32::NEG_INFINITY;
    match c.mode {
        Mode::Track => {
            let heading = agent
                .orientation
                .and_then(|o| {
                    let f = geom::forward(o);
                    let l = (f[0] * f[0] + f[1] * f[1]).sqrt();
                    (l > 0.0).then(|| [f[0] / l, f[1] / l])
                })
                .unwrap_or(dir);
            let [ha, hb] = agent.half_extents.to_array();
            let nu = [-dir[1], dir[0]];
            let h_nu = heading[0] * nu[0] + heading[1] * nu[1];
            let hp_nu = -heading[1] * nu[0] + heading[0] * nu[1];
            worst = n.abs() + ha * h_nu.abs() + hb * hp_nu.abs() - c.half_width_m;
            for o in course.obstacles {
                let (ox, oy) = (o[0] - q[0], o[1] - q[1]);
                let lx = ox * heading[0] + oy * heading[1];
                let ly = -ox * heading[1] + oy * heading[0];
                worst = worst.max(o[3] - sdf::box2(Vec2::new(lx, ly), Vec2::new(ha, hb)));
            }
        }
        Mode::Gates => {
            let r = agent.half_extents[0];
            let th = c.thickness_m;
            for g in course.checkpoints {
                let (gx, gy) = (q[0] - g.center[0], q[1] - g.center[1]);
                let reach = g.bound_radius + r;
                if gx * gx + gy * gy > reach * reach {
                    continue;
                }
                let rel = q - g.center;
                let up = g.tangent.cross(g.normal);
                let local = Vec3::new(rel.dot(g.tangent), rel.dot(g.normal), rel.dot(up));
                let opening = Vec2::new(g.half_width, g.half_height);
                let d = sdf::gate_frame(local, opening + Vec2::splat(th), opening, 0.5 * th);
                worst = worst.max(r - d);
                if c.posts {
                    let y = g.half_width + 0.5 * th;
                    let z = -(g.half_height + th);
                    for side in [1.0f32, -1.0] {
                        let foot = [
                            g.center[0] + side * y * g.normal[0] + z * up[0],
                            g.center[1] + side * y * g.normal[1] + z * up[1],
                            g.center[2] + side * y * g.normal[2] + z * up[2],
                        ];
                        let d = sdf::post(q, Vec2::new(foot[0], foot[1]), 0.5 * th, foot[2]);
                        worst = worst.max(r - d);
                    }
                }
            }
            for o in course.obstacles {
                worst = worst.max(r - sdf::post(q, Vec2::new(o[0], o[1]), o[3], o[2]));
            }
        }
    }
    let penetration = worst.max(0.0);

    state.prev = q;
    state.segment = loc.segment;
    EnvOutputs {
        passed: passed_now.min(255) as u8,
        lap_completed: u8::from(lap),
        wrong_way: u8::from(wrong_way),
        wrong_checkpoint: u8::from(wrong_checkpoint),
        next_index: next as u32,
        laps,
        progress,
        dist_to_next,
        s,
        n,
        n_up,
        segment: loc.segment,
        curvature,
        off_track: u8::from(off_track),
        hit: u8::from(penetration > 0.0),
        penetration,
    }
}
