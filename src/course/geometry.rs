//! The sim-time geometry of a course, one contract for both modes: a dense closed *path*, an
//! ordered list of *checkpoints*, disc *obstacles* and the *spawn pose*.
//!
//! | mode  | path                                   | checkpoints                                  |
//! |-------|----------------------------------------|----------------------------------------------|
//! | track | the track's centerline                 | the centerline points nearest every `checkpoint_spacing_m` (at most `max_checkpoints`) |
//! | gates | the racing line ([`racing_line`](super::gates::racing_line)) | the gates, in flying order       |
//!
//! Checkpoint 0 is the start line (track point 0, or gate 0); the spawn pose is its centre,
//! facing along its tangent. Every buffer is built by one lane per env from that env's track or
//! gates alone, so it is a pure function of `(preset, seed, env, generation, config)`.

use bytemuck::{Pod, Zeroable};

use super::gate_batch::GateBatch;
use super::gates::racing_line_each;
use crate::geom::{self, fails_gt, horizontal_left, Quat, Vec3};
use crate::math::{atan2, round_small};
use crate::preset::ObstacleParams;
use crate::rng::LaneRng;
use crate::track::TrackBatch;

/// One checkpoint (a *goal*): where it is, its crossing window, and what the runtime needs to
/// score it, packed into one 64-byte row (a `[16]` float row of a torch tensor).
///
/// The crossing window is the rectangle through `center` spanned by `normal` (±`half_width`)
/// and `up = tangent × normal` (±`half_height`); it is passed when an agent's swept segment
/// crosses its plane from the back (`(p − center)·tangent < 0`) to the front (`≥ 0`) inside it.
/// `normal` is always the horizontal unit vector left of the tangent,
/// [`horizontal_left`]`(tangent)`. Track checkpoints are vertical lines across the road:
/// horizontal `tangent`, `half_height` = +∞. Gate checkpoints are the gate openings: `tangent`
/// the gate's forward axis (`normal` is then its left axis, up to rounding), `half_width` and
/// `half_height` half the inner width and height.
/// Padding rows past an env's checkpoint count are all NaN.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct Checkpoint {
    /// Centre of the crossing window, metres.
    pub center: Vec3,
    /// Half of the window's width along `normal`, metres.
    pub half_width: f32,
    /// Unit forward direction: the side a passing agent comes out on.
    pub tangent: Vec3,
    /// Half of the window's height along `up`, metres (+∞ for a track checkpoint).
    pub half_height: f32,
    /// Unit left direction, horizontal: [`horizontal_left`]`(tangent)`.
    pub normal: Vec3,
    /// Arc length of the checkpoint along the path, metres (checkpoint 0: 0).
    pub s: f32,
    /// Path length from the previous checkpoint to this one, metres (checkpoint 0: from the last).
    pub leg: f32,
    /// Gates: the frame's bounding-sphere radius; track: `half_width`. Metres.
    pub bound_radius: f32,
    /// Unused (keeps the row at 16 floats); 0, or NaN in padding rows.
    pub reserved: [f32; 2],
}

impl Checkpoint {
    /// A padding row: every field NaN.
    pub const NAN: Self = Self {
        center: Vec3::NAN,
        half_width: f32::NAN,
        tangent: Vec3::NAN,
        half_height: f32::NAN,
        normal: Vec3::NAN,
        s: f32::NAN,
        leg: f32::NAN,
        bound_radius: f32::NAN,
        reserved: [f32::NAN; 2],
    };

    /// The left end of the crossing segment: `center + half_width·normal`.
    pub fn left(&self) -> Vec3 {
        let (c, n, h) = (self.center, self.normal, self.half_width);
        c + n * h
    }

    /// The right end of the crossing segment: `center − half_width·normal`.
    pub fn right(&self) -> Vec3 {
        let (c, n, h) = (self.center, self.normal, self.half_width);
        c - n * h
    }

    /// The window's up axis, `tangent × normal`.
    #[inline]
    pub fn up(&self) -> Vec3 {
        self.tangent.cross(self.normal)
    }
}

/// The course geometry of every env (structure of arrays; see the module doc).
///
/// Per-env rows: env `e` owns `[e * cap, (e + 1) * cap)` of each per-item buffer, its first
/// `count[e]` items are the course and the padding past them is NaN.
#[derive(Clone, Debug)]
pub struct CourseGeometry {
    /// Number of envs.
    pub n_envs: usize,
    /// Path points per env (capacity).
    pub path_max: usize,
    /// Checkpoints per env (capacity).
    pub checkpoint_max: usize,
    /// Obstacles per env (capacity).
    pub obstacle_max: usize,
    /// Half width of the band around the path, metres: the track's `half_width_m`, or the gate
    /// preset's `corridor_half_width_m`. `off_track` is `|n| > half_width_m`.
    pub half_width_m: f32,
    /// Path points `[x, y, z, s]`: position (metres) and arc length from point 0 (3D, metres).
    /// The path is closed: point `path_count[e] − 1` joins point 0; segment `k` joins points `k`
    /// and `k + 1`.
    pub path: Vec<[f32; 4]>,
    /// Signed plan-view curvature at each path point, 1/m (positive turning left): the Menger
    /// curvature of the point and its two neighbours.
    pub curvature: Vec<f32>,
    /// Path points per env.
    pub path_count: Vec<u32>,
    /// Closed path length per env, metres.
    pub path_length: Vec<f32>,
    /// Checkpoints, in order ([`Checkpoint`]).
    pub checkpoints: Vec<Checkpoint>,
    /// Checkpoints per env (at least 4).
    pub checkpoint_count: Vec<u32>,
    /// 1 when `max_checkpoints` capped the track-mode count (the spacing was widened to fit).
    pub checkpoints_truncated: Vec<u8>,
    /// Disc obstacles `[x, y, top_z, radius]`: vertical cylinders up to `top_z` (track courses
    /// are planar and ignore `top_z`).
    pub obstacles: Vec<[f32; 4]>,
    /// Obstacles per env.
    pub obstacle_count: Vec<u32>,
    /// Spawn position: the centre of checkpoint 0, metres.
    pub spawn_position: Vec<Vec3>,
    /// Spawn heading: the yaw of checkpoint 0's tangent, radians.
    pub spawn_yaw: Vec<f32>,
    /// Spawn orientation `[x, y, z, w]`: gate 0's orientation, or the yaw-only rotation.
    pub spawn_orientation: Vec<Quat>,
}

impl CourseGeometry {
    /// Empty geometry (NaN padding, zero counts).
    pub(crate) fn new(
        n_envs: usize,
        path_max: usize,
        checkpoint_max: usize,
        obstacle_max: usize,
        half_width_m: f32,
    ) -> Self {
        Self {
            n_envs,
            path_max,
            checkpoint_max,
            obstacle_max,
            half_width_m,
            path: vec![[f32::NAN; 4]; n_envs * path_max],
            curvature: vec![f32::NAN; n_envs * path_max],
            path_count: vec![0; n_envs],
            path_length: vec![0.0; n_envs],
            checkpoints: vec![Checkpoint::NAN; n_envs * checkpoint_max],
            checkpoint_count: vec![0; n_envs],
            checkpoints_truncated: vec![0; n_envs],
            obstacles: vec![[f32::NAN; 4]; n_envs * obstacle_max.max(1)],
            obstacle_count: vec![0; n_envs],
            spawn_position: vec![Vec3::NAN; n_envs],
            spawn_yaw: vec![f32::NAN; n_envs],
            spawn_orientation: vec![Quat::NAN; n_envs],
        }
    }

    /// Env `e`'s path points.
    pub fn path_of(&self, e: usize) -> &[[f32; 4]] {
        let a = e * self.path_max;
        &self.path[a..a + self.path_count[e] as usize]
    }

    /// Env `e`'s checkpoints.
    pub fn checkpoints_of(&self, e: usize) -> &[Checkpoint] {
        let a = e * self.checkpoint_max;
        &self.checkpoints[a..a + self.checkpoint_count[e] as usize]
    }

    /// Env `e`'s obstacles.
    pub fn obstacles_of(&self, e: usize) -> &[[f32; 4]] {
        let a = e * self.obstacle_max.max(1);
        &self.obstacles[a..a + self.obstacle_count[e] as usize]
    }

    /// Whether env `e`'s rows equal `other`'s env `f` rows byte for byte (NaN padding included).
    pub fn same_env_bytes(&self, e: usize, other: &Self, f: usize) -> bool {
        fn rows<T: bytemuck::NoUninit>(v: &[T], e: usize, cap: usize) -> &[u8] {
            bytemuck::cast_slice(&v[e * cap..(e + 1) * cap])
        }
        let om = self.obstacle_max.max(1);
        self.path_max == other.path_max
            && self.checkpoint_max == other.checkpoint_max
            && self.obstacle_max == other.obstacle_max
            && rows(&self.path, e, self.path_max) == rows(&other.path, f, self.path_max)
            && rows(&self.curvature, e, self.path_max) == rows(&other.curvature, f, self.path_max)
            && self.path_count[e] == other.path_count[f]
            && self.path_length[e].to_bits() == other.path_length[f].to_bits()
            && rows(&self.checkpoints, e, self.checkpoint_max)
                == rows(&other.checkpoints, f, self.checkpoint_max)
            && self.checkpoint_count[e] == other.checkpoint_count[f]
            && self.checkpoints_truncated[e] == other.checkpoints_truncated[f]
            && rows(&self.obstacles, e, om) == rows(&other.obstacles, f, om)
            && self.obstacle_count[e] == other.obstacle_count[f]
            && rows(&self.spawn_position, e, 1) == rows(&other.spawn_position, f, 1)
            && self.spawn_yaw[e].to_bits() == other.spawn_yaw[f].to_bits()
            && rows(&self.spawn_orientation, e, 1) == rows(&other.spawn_orientation, f, 1)
    }
}

/// The fewest checkpoints of a course.
pub const MIN_CHECKPOINTS: usize = 4;

/// One env's rows of the geometry buffers, as a build lane writes them.
pub(crate) struct GeomRow<'a> {
    pub path: &'a mut [[f32; 4]],
    pub curvature: &'a mut [f32],
    pub path_count: &'a mut u32,
    pub path_length: &'a mut f32,
    pub checkpoints: &'a mut [Checkpoint],
    pub checkpoint_count: &'a mut u32,
    pub truncated: &'a mut u8,
    pub obstacles: &'a mut [[f32; 4]],
    pub obstacle_count: &'a mut u32,
    pub spawn_position: &'a mut Vec3,
    pub spawn_yaw: &'a mut f32,
    pub spawn_orientation: &'a mut Quat,
}

/// The ground line obstacles are placed along: a closed centerline with left normals.
pub(crate) struct Ground<'a> {
    pub center: &'a [Vec3],
    pub normal: &'a [Vec3],
    pub arclen: &'a [f32],
    pub length: f32,
    pub half_width_m: f32,
}

/// Constants of the geometry build.
#[derive(Clone, Debug)]
pub(crate) struct BuildConsts {
    pub half_width_m: f32,
    pub checkpoint_spacing_m: f32,
    pub obstacles: Option<ObstacleParams>,
    pub path_samples: usize,
    pub thickness_m: f32,
    /// Whether the track's centreline is evenly spaced (`track.sampling = "uniform"`): its
    /// checkpoints are then picked by index, otherwise by arc length.
    pub even_spacing: bool,
}

/// Signed plan-view Menger curvature of the path points `a`, `p`, `b` (1/m, positive turning
/// left; 0 for a degenerate triple): `2·p − a.cross(b − p) / √(|p − a|²·|b − p|²·|b − a|²)`.
#[inline]
pub fn signed_curvature(a: [f32; 4], p: [f32; 4], b: [f32; 4]) -> f32 {
    let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
    let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
    let (wx, wy) = (b[0] - a[0], b[1] - a[1]);
    let cross = ux * vy - uy * vx;
    let denom = ((ux * ux + uy * uy) * (vx * vx + vy * vy) * (wx * wx + wy * wy)).sqrt();
    if denom > 0.0 {
        2.0 * cross / denom
    } else {
        0.0
    }
}

/// Fills the path's arc lengths (`w` of each point) and curvature from its positions; writes
/// `path_length`, NaN-pads both rows past `n`.
fn finish_path(row: &mut GeomRow<'_>, n: usize) {
    let mut total = 0.0f32;
    for i in 0..n {
        row.path[i][3] = total;
        let a = row.path[i];
        let b = row.path[(i + 1) % n];
        let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        total += (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    }
    for i in 0..n {
        let a = row.path[(i + n - 1) % n];
        let p = row.path[i];
        let b = row.path[(i + 1) % n];
        let cross = (p[0] - a[0]) * (b[1] - p[1]) - (p[1] - a[1]) * (b[0] - p[0]);
        let d = |u: [f32; 4], v: [f32; 4]| {
            let (dx, dy) = (u[0] - v[0], u[1] - v[1]);
            (dx * dx + dy * dy).sqrt()
        };
        let denom = d(a, p) * d(p, b) * d(a, b);
        row.curvature[i] = if denom > 0.0 {
            2.0 * cross / denom
        } else {
            0.0
        };
    }
    row.path[n..].fill([f32::NAN; 4]);
    row.curvature[n..].fill(f32::NAN);
    *row.path_count = n as u32;
    *row.path_length = total;
}

/// Sets the `leg` of every checkpoint from the arc lengths and NaN-pads past `k`; writes the
/// spawn pose from checkpoint 0 (`orientation`, or the yaw-only rotation when `None`).
fn finish_checkpoints(row: &mut GeomRow<'_>, k: usize, length: f32, orientation: Option<Quat>) {
    for i in 0..k {
        let prev = if i == 0 {
            row.checkpoints[k - 1].s - length
        } else {
            row.checkpoints[i - 1].s
        };
        row.checkpoints[i].leg = row.checkpoints[i].s - prev;
    }
    row.checkpoints[k..].fill(Checkpoint::NAN);
    *row.checkpoint_count = k as u32;
    let c0 = row.checkpoints[0];
    let yaw = atan2(c0.tangent[1], c0.tangent[0]);
    *row.spawn_position = c0.center;
    *row.spawn_yaw = yaw;
    *row.spawn_orientation = orientation.unwrap_or_else(|| geom::yaw(yaw));
}

/// Places the preset's obstacles along `ground` (random stream `rng`); NaN-pads the row.
fn place_obstacles(
    p: Option<&ObstacleParams>,
    rng: &mut LaneRng,
    ground: &Ground<'_>,
    row: &mut GeomRow<'_>,
) {
    let mut m = 0;
    if let Some(p) = p {
        let n = ground.center.len();
        let free = (ground.half_width_m - p.radius_m).max(0.0) * p.lateral_frac;
        let (lo, hi) = (p.start_clear_m, ground.length - p.start_clear_m);
        for _ in 0..p.count {
            let s = rng.range(lo, hi);
            let lateral = free * rng.signed();
            if fails_gt(hi, lo) || n < 2 {
                continue;
            }
            // Binary search of the segment holding s: a fixed ⌈log2 n⌉ steps.
            let (mut a, mut b) = (0usize, n);
            while b - a > 1 {
                let mid = (a + b) / 2;
                if ground.arclen[mid] <= s {
                    a = mid;
                } else {
                    b = mid;
                }
            }
            let end = if a + 1 < n {
                ground.arclen[a + 1]
            } else {
                ground.length
            };
            let len = end - ground.arclen[a];
            let t = if len > 0.0 {
                ((s - ground.arclen[a]) / len).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (pa, pb) = (ground.center[a], ground.center[(a + 1) % n]);
            let nl = ground.normal[a];
            let z = pa[2] + (pb[2] - pa[2]) * t;
            row.obstacles[m] = [
                pa[0] + (pb[0] - pa[0]) * t + lateral * nl[0],
                pa[1] + (pb[1] - pa[1]) * t + lateral * nl[1],
                z + p.height_m,
                p.radius_m,
            ];
            m += 1;
        }
    }
    row.obstacles[m..].fill([f32::NAN; 4]);
    *row.obstacle_count = m as u32;
}

/// Builds one env's geometry from its track (row `e` of `track`).
pub(crate) fn build_track_lane(
    c: &BuildConsts,
    track: &TrackBatch,
    e: usize,
    rng: &mut LaneRng,
    mut row: GeomRow<'_>,
) {
    let n = track.count[e] as usize;
    let base = e * track.n_max;
    let center = &track.center[base..base + n];
    for (p, q) in row.path.iter_mut().zip(center) {
        *p = [q[0], q[1], q[2], 0.0];
    }
    finish_path(&mut row, n);
    let length = *row.path_length;
    // Checkpoints: the points nearest `k·length / K` along the path. On an evenly spaced
    // centreline that is every ⌊k·n/K⌋-th point; one sampled by curvature is searched by arc
    // length (the indices kept increasing, with room left for the rest).
    let cap = row.checkpoints.len().min(n);
    let wanted = round_small(length / c.checkpoint_spacing_m);
    let k_count = if wanted >= cap as f32 {
        cap
    } else {
        (wanted as usize).max(MIN_CHECKPOINTS)
    };
    *row.truncated = u8::from(wanted > row.checkpoints.len() as f32);
    let mut next = 0;
    for k in 0..k_count {
        let i = if c.even_spacing {
            k * n / k_count
        } else {
            let i = nearest_at_arc(&row.path[..n], next, k as f32 * length / k_count as f32);
            i.clamp(next, n - (k_count - k))
        };
        next = i + 1;
        let t = track.tangent[base + i];
        let h = (t[0] * t[0] + t[1] * t[1]).sqrt();
        let tangent = Vec3::new(t[0] / h, t[1] / h, 0.0);
        row.checkpoints[k] = Checkpoint {
            center: center[i],
            half_width: c.half_width_m,
            tangent,
            half_height: f32::INFINITY,
            normal: horizontal_left(tangent),
            s: row.path[i][3],
            leg: 0.0,
            bound_radius: c.half_width_m,
            reserved: [0.0; 2],
        };
    }
    finish_checkpoints(&mut row, k_count, length, None);
    let ground = Ground {
        center,
        normal: &track.normal[base..base + n],
        arclen: &track.arclen[base..base + n],
        length: track.length[e],
        half_width_m: c.half_width_m,
    };
    place_obstacles(c.obstacles.as_ref(), rng, &ground, &mut row);
}

/// The path point from `from` on whose arc length (`path[i][3]`, increasing) is nearest `s`.
fn nearest_at_arc(path: &[[f32; 4]], from: usize, s: f32) -> usize {
    let n = path.len();
    let mut j = from;
    while j < n && path[j][3] < s {
        j += 1;
    }
    if j == n || (j > from && s - path[j - 1][3] <= path[j][3] - s) {
        j - 1
    } else {
        j
    }
}

/// Builds one env's geometry from its gates (row `e` of `gates`) and its guide track (row `e`
/// of `guide`, the ground the obstacles stand on).
pub(crate) fn build_gates_lane(
    c: &BuildConsts,
    gates: &GateBatch,
    guide: &TrackBatch,
    guide_half_width_m: f32,
    e: usize,
    rng: &mut LaneRng,
    mut row: GeomRow<'_>,
) {
    let g = gates.count[e] as usize;
    let base = e * gates.g_max;
    let pos = &gates.pos[base..base + g];
    let samples = c.path_samples;
    let n = g * samples;
    racing_line_each(pos, samples, |k, q| row.path[k] = [q[0], q[1], q[2], 0.0]);
    finish_path(&mut row, n);
    let length = *row.path_length;
    for (i, &center) in pos.iter().enumerate() {
        let q = gates.quat[base + i];
        let size = gates.size[base + i];
        let forward = geom::forward(q);
        let (a, b) = (0.5 * size[0] + c.thickness_m, 0.5 * size[1] + c.thickness_m);
        row.checkpoints[i] = Checkpoint {
            center,
            half_width: 0.5 * size[0],
            tangent: forward,
            half_height: 0.5 * size[1],
            normal: horizontal_left(forward),
            s: row.path[i * samples][3],
            leg: 0.0,
            bound_radius: (a * a + b * b + 0.25 * c.thickness_m * c.thickness_m).sqrt(),
            reserved: [0.0; 2],
        };
    }
    *row.truncated = 0;
    finish_checkpoints(&mut row, g, length, Some(gates.quat[base]));
    let gn = guide.count[e] as usize;
    let gb = e * guide.n_max;
    let ground = Ground {
        center: &guide.center[gb..gb + gn],
        normal: &guide.normal[gb..gb + gn],
        arclen: &guide.arclen[gb..gb + gn],
        length: guide.length[e],
        half_width_m: guide_half_width_m,
    };
    place_obstacles(c.obstacles.as_ref(), rng, &ground, &mut row);
}
