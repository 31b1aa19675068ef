//! Batched ray casts over per-env scenes: conservative sphere tracing of the voxel DAG.
//!
//! Sphere tracing (Hart, *Sphere tracing: a geometric method for the antialiased ray tracing of
//! implicit surfaces*, The Visual Computer 12, 1996) advances a ray by a lower bound of the
//! distance to the nearest surface, so it never steps over one. The stored field is sampled and
//! quantised, so every bound is built from what is known for sure:
//!
//! - each decoded sample `v_i` exceeds the sampled distance by at most half a code step `q/2`
//!   (codes keep the sign; a code saturated at `+T` only under-states a distance);
//! - the distance is 1-Lipschitz, so *any* sample `c` gives `d(p) ≥ v(c) − q/2 − |p − c|`.
//!
//! Three such bounds are used, cheapest first:
//!
//! 1. **Uniform boxes**: the box's stored bound; the ray jumps to the box's exit, or further by
//!    the bound.
//! 2. **Jensen bound** in a brick: averaging the Lipschitz bounds of the eight corners of the
//!    trilinear cell with the trilinear weights, and `Σ w_i |p − c_i| ≤ sqrt(Σ w_i |p − c_i|²)`,
//!    gives `L = I(p) − sqrt(Σ_a f_a(1 − f_a) + δ_a²) − q/2` (`I` the interpolant, `f_a` the cell
//!    fractions, `δ_a` the clamping distance at the brick's edge): one square root per step,
//!    but up to √3/2 voxel short of the surface.
//! 3. Within a voxel of a surface: the bound of **one sample out along the interpolant's
//!    gradient** (2.5 voxels out, inside the truncation band), which is tight to about
//!    `δ²/5` voxel (`δ` the sample's lattice offset from the gradient line) for planar and convex
//!    surfaces, and, when that is not enough (concave creases), the best of the eight **corner**
//!    bounds.
//!
//! A ray whose certified bound falls to 1/20 voxel has hit: the surface is ahead, but no surface
//! lies between the origin and this point. The reported distance is then placed on the first
//! zero of the exact trilinear interpolant of the global grid within one more voxel (linear
//! between half-voxel samples; exact for planar surfaces up to `q/2`), or at the certified point
//! if there is none. So a hit is never more than one voxel beyond the surface, even behind walls
//! thinner than a voxel (no tunnelling), and on planar surfaces it is within `q/2` of exact at any
//! incidence that the certified march reaches.
//!
//! # Contract
//!
//! Per ray: `distance` (metres, along the normalised direction), `hit` and `steps`
//! (march steps taken).
//!
//! - **hit** ([`HIT`]): a surface at `distance ≤ max_distance`; never more than one voxel past the
//!   true surface.
//! - **start inside a solid**: distance = where the ray enters the env's domain (`0` for an
//!   origin inside the domain), hit. Origins within a fraction of a voxel of a surface may also
//!   report 0.
//! - **miss** ([`MISS`]): nothing before `max_distance` or the domain's far side: `no_hit_value`.
//!   Outside its cubic domain an env is empty.
//! - **bad ray** (non-finite origin or direction, zero direction): a miss with 0 steps.
//! - **step budget** ([`BUDGET`]): `max_steps` steps without a decision (a ray running along a
//!   surface closer than a fraction of a voxel); distance = how far the ray was certified free.

use rayon::prelude::*;

use super::dag::{
    ref_kind, ref_payload, uniform_bound, EnvEntry, PoolView, CODE_MAX, KIND_BRICK, KIND_INSIDE,
    KIND_OUTSIDE,
};
use crate::exec::Launch;
use crate::geom::sdf::{fmax, fmin};
use crate::{Error, Result};

/// `hit` value: no surface before `max_distance`.
pub const MISS: u8 = 0;
/// `hit` value: a surface (or a start inside a solid).
pub const HIT: u8 = 1;
/// `hit` value: the step budget ran out first.
pub const BUDGET: u8 = 2;

/// The default step budget per ray.
pub const DEFAULT_MAX_STEPS: u32 = 1024;

/// Below this bound (voxels) a ray also tries the sample out along the gradient.
const NEAR_VOX: f32 = 1.0;
/// How far out along the gradient that sample is taken, voxels, at most (`T − 1.5`, at least 1,
/// keeps it unsaturated for points within a voxel of a surface).
const FAR_VOX: f32 = 2.5;
/// A ray whose certified free distance is at most this (voxels) has hit.
const HIT_EPS_VOX: f32 = 0.05;
/// How far past the certified point a hit is placed at most, voxels.
const REFINE_VOX: f32 = 1.0;
/// Samples of the exact interpolant over that stretch.
const REFINE_SAMPLES: u32 = 2;
/// How far past a uniform box's exit a ray is placed, voxels.
const NUDGE_VOX: f32 = 1e-3;
/// Rays per parallel work item.
const CHUNK: usize = 256;

/// Limits and the miss value of a cast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastOptions {
    /// Longest distance searched, metres (> 0; `+∞` allowed).
    pub max_distance: f32,
    /// The distance reported for a miss.
    pub no_hit_value: f32,
    /// Evaluations per ray before giving up with [`BUDGET`] (≥ 1).
    pub max_steps: u32,
}

impl CastOptions {
    /// `max_distance`, misses reported as `max_distance`, the default step budget.
    pub fn new(max_distance: f32) -> Self {
        Self {
            max_distance,
            no_hit_value: max_distance,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }

    fn check(&self) -> Result<()> {
        if self.max_distance.is_nan() || self.max_distance <= 0.0 {
            return Err(Error::Invalid(format!(
                "max_distance = {}: expected a number > 0",
                self.max_distance
            )));
        }
        if self.max_steps == 0 {
            return Err(Error::Invalid("max_steps = 0: expected at least 1".into()));
        }
        Ok(())
    }
}

/// Which env each ray belongs to.
#[derive(Clone, Copy, Debug)]
pub enum RayEnvs<'a> {
    /// `env[i]` for ray `i`.
    PerRay(&'a [u32]),
    /// Consecutive blocks: ray `i` belongs to env `i / rays_per_env`.
    Blocks {
        /// Rays per env (> 0).
        rays_per_env: usize,
    },
}

/// Caller-owned outputs of a cast, one element per ray.
#[derive(Debug)]
pub struct RayOutputs<'a> {
    /// Distance along the ray, metres, or `no_hit_value`.
    pub distance: &'a mut [f32],
    /// [`MISS`], [`HIT`] or [`BUDGET`].
    pub hit: &'a mut [u8],
    /// Evaluations made.
    pub steps: &'a mut [u32],
}

/// Casts every ray against its env's scene in `view`, writing into `out`; rays run in parallel
/// on `launch`, and each ray's result depends only on the ray and its env.
///
/// Errors (before anything is written): buffers of different lengths, an env index past the env
/// table (naming the ray), `rays_per_env = 0` or not dividing the ray count, a bad `opts`.
pub fn cast_rays(
    view: &PoolView,
    envs: RayEnvs,
    origins: &[[f32; 3]],
    dirs: &[[f32; 3]],
    opts: &CastOptions,
    out: RayOutputs,
    launch: &Launch,
) -> Result<()> {
    opts.check()?;
    let n = origins.len();
    let lens = [
        dirs.len(),
        out.distance.len(),
        out.hit.len(),
        out.steps.len(),
    ];
    if lens.iter().any(|&l| l != n) {
        return Err(Error::Invalid(format!(
            "ray buffers differ in length: origins {n}, dirs {}, distance {}, hit {}, steps {}: \
             expected one element per ray in each",
            lens[0], lens[1], lens[2], lens[3]
        )));
    }
    let n_envs = view.envs.len();
    match envs {
        RayEnvs::PerRay(e) => {
            if e.len() != n {
                return Err(Error::Invalid(format!(
                    "env_of_ray has {} entries for {n} rays: expected one per ray",
                    e.len()
                )));
            }
            if let Some((i, &bad)) = e.iter().enumerate().find(|(_, &v)| v as usize >= n_envs) {
                return Err(Error::Invalid(format!(
                    "env_of_ray[{i}] = {bad}: the scene has {n_envs} envs (expected < {n_envs})"
                )));
            }
        }
        RayEnvs::Blocks { rays_per_env } => {
            if rays_per_env == 0 || n % rays_per_env != 0 {
                return Err(Error::Invalid(format!(
                    "rays_per_env = {rays_per_env} with {n} rays: expected a positive divisor"
                )));
            }
            if n / rays_per_env > n_envs {
                return Err(Error::Invalid(format!(
                    "{n} rays of {rays_per_env} per env address {} envs; the scene has {n_envs}",
                    n / rays_per_env
                )));
            }
        }
    }
    let env_of = |i: usize| match envs {
        RayEnvs::PerRay(e) => e[i] as usize,
        RayEnvs::Blocks { rays_per_env } => i / rays_per_env,
    };
    launch.install(|| {
        out.distance
            .par_chunks_mut(CHUNK)
            .zip(out.hit.par_chunks_mut(CHUNK))
            .zip(out.steps.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(c, ((dist, hit), steps))| {
                for j in 0..dist.len() {
                    let i = c * CHUNK + j;
                    let env = &view.envs[env_of(i)];
                    let (d, h, s) = cast_one(view, env, origins[i], dirs[i], opts);
                    dist[j] = d;
                    hit[j] = h;
                    steps[j] = s;
                }
            })
    });
    Ok(())
}

/// `dir` scaled to unit length, or `None` for a zero (or non-finite) vector. Finite directions of
/// any magnitude work: one whose squared length would overflow or underflow `f32` (components
/// near 1e30 or 1e-30) is first divided by its largest component.
pub fn unit(dir: [f32; 3]) -> Option<[f32; 3]> {
    let n2 = dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2];
    let d = if n2.is_finite() && n2 >= 1e-30 {
        dir
    } else {
        let m = dir[0].abs().max(dir[1].abs()).max(dir[2].abs());
        if !(m > 0.0 && m.is_finite()) {
            return None;
        }
        [dir[0] / m, dir[1] / m, dir[2] / m]
    };
    let norm = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    Some([d[0] / norm, d[1] / norm, d[2] / norm])
}

/// Casts one ray against one env: `(distance, hit, steps)` with the module's contract.
pub fn cast_one(
    view: &PoolView,
    env: &EnvEntry,
    origin: [f32; 3],
    dir: [f32; 3],
    opts: &CastOptions,
) -> (f32, u8, u32) {
    let miss = (opts.no_hit_value, MISS, 0);
    if !(origin.iter().chain(dir.iter()).all(|v| v.is_finite())) {
        return miss;
    }
    let Some(d) = unit(dir) else {
        return miss;
    };
    let h = env.voxel_size;
    let inv_h = 1.0 / h;
    let res = view.info.resolution;
    let rf = res as f32;
    let p = [
        (origin[0] - env.origin[0]) * inv_h,
        (origin[1] - env.origin[1]) * inv_h,
        (origin[2] - env.origin[2]) * inv_h,
    ];
    // Clip to the domain cube [0, R]³ (voxel units).
    let (mut lo, mut hi) = (0.0f32, opts.max_distance * inv_h);
    let mut inv = [f32::INFINITY; 3];
    for a in 0..3 {
        if d[a] != 0.0 {
            inv[a] = 1.0 / d[a];
            let t0 = (0.0 - p[a]) * inv[a];
            let t1 = (rf - p[a]) * inv[a];
            lo = fmax(lo, fmin(t0, t1));
            hi = fmin(hi, fmax(t0, t1));
        } else if !(p[a] >= 0.0 && p[a] <= rf) {
            return miss;
        }
    }
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return miss;
    }
    let mut march = March {
        view,
        p,
        d,
        inv,
        res,
        qerr: 0.5 * view.info.quant_step() + 1e-4,
        far: fmin(FAR_VOX, fmax(1.0, view.info.truncation_vox - 1.5)),
        cursor: Cursor::new(env.root, res),
        aux: Cursor::new(env.root, res),
    };
    let mut t = lo;
    for step in 0..opts.max_steps {
        if t > hi {
            return (opts.no_hit_value, MISS, step);
        }
        let q = march.at(t);
        let v = march.voxel(q);
        march.locate(v);
        let (r, min, size) = march.cursor.leaf();
        match ref_kind(r) {
            KIND_OUTSIDE => {
                let exit = march.exit(min, size);
                t = fmax(exit, t + uniform_bound(r)) + NUDGE_VOX;
                continue;
            }
            KIND_INSIDE => return (t * h, HIT, step + 1),
            _ => {}
        }
        debug_assert_eq!(ref_kind(r), KIND_BRICK);
        let cell = march.brick_cell(ref_payload(r), min, q);
        let mut bound = if cell.solid_near {
            f32::NEG_INFINITY
        } else {
            cell.value - cell.penalty - march.qerr
        };
        if bound < NEAR_VOX {
            bound = fmax(bound, march.far_bound(q, cell.gradient()));
            if bound <= HIT_EPS_VOX {
                // Near concave creases the far sample is loose; the corners may do better.
                bound = fmax(bound, cell.corner_bound() - march.qerr);
            }
            if bound <= HIT_EPS_VOX {
                return (march.refine(t, hi) * h, HIT, step + 1);
            }
        }
        t += bound;
    }
    (t * h, BUDGET, opts.max_steps)
}

/// The trilinear cell of a brick around a point: the interpolant and its Jensen penalty, and
/// what the near-surface bounds need (computed only there).
struct Cell {
    value: f32,
    penalty: f32,
    /// A corner is saturated inside a solid (its true value may be far below the code).
    solid_near: bool,
    /// Decoded corner values, `x + 2y + 4z` order.
    k: [f32; 8],
    /// Fractions within the cell.
    f: [f32; 3],
    /// Offsets of the point from the cell's first corner, voxels (beyond `f` where clamped).
    u: [f32; 3],
}

impl Cell {
    /// The interpolant's gradient (voxels per voxel).
    fn gradient(&self) -> [f32; 3] {
        let (k, f) = (&self.k, &self.f);
        let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
        [
            lerp(
                lerp(k[1] - k[0], k[3] - k[2], f[1]),
                lerp(k[5] - k[4], k[7] - k[6], f[1]),
                f[2],
            ),
            lerp(
                lerp(k[2] - k[0], k[3] - k[1], f[0]),
                lerp(k[6] - k[4], k[7] - k[5], f[0]),
                f[2],
            ),
            lerp(
                lerp(k[4] - k[0], k[5] - k[1], f[0]),
                lerp(k[6] - k[2], k[7] - k[3], f[0]),
                f[1],
            ),
        ]
    }

    /// `max_i (v_i − |q − c_i|)` over the eight corners (voxels); `−∞` next to a saturated solid.
    fn corner_bound(&self) -> f32 {
        if self.solid_near {
            return f32::NEG_INFINITY;
        }
        let mut best = f32::NEG_INFINITY;
        for (corner, &v) in self.k.iter().enumerate() {
            let mut d2 = 0.0;
            for a in 0..3 {
                let off = self.u[a] - ((corner >> a) & 1) as f32;
                d2 += off * off;
            }
            best = fmax(best, v - d2.sqrt());
        }
        best
    }
}

/// The stored field of env `env` at world point `point`, metres: the trilinear interpolant of the
/// decoded samples (saturating at ±T voxels), or `None` outside the env's domain or for a bad
/// env index or point.
pub fn sdf_at(view: &PoolView, env: usize, point: [f32; 3]) -> Option<f32> {
    let e = view.envs.get(env)?;
    let inv_h = 1.0 / e.voxel_size;
    let rf = view.info.resolution as f32;
    let q = [0, 1, 2].map(|a| (point[a] - e.origin[a]) * inv_h);
    if !q.iter().all(|&v| (0.0..=rf).contains(&v)) {
        return None;
    }
    let mut march = March {
        view,
        p: q,
        d: [1.0, 0.0, 0.0],
        inv: [1.0, f32::INFINITY, f32::INFINITY],
        res: view.info.resolution,
        qerr: 0.0,
        far: FAR_VOX,
        cursor: Cursor::new(e.root, view.info.resolution),
        aux: Cursor::new(e.root, view.info.resolution),
    };
    let v = march.voxel(q);
    march.locate(v);
    Some(march.exact(q).0 * e.voxel_size)
}

/// Deepest tree: `R = 1024` has 7 node levels above the bricks.
const MAX_DEPTH: usize = 8;

/// A root-to-leaf path that moves to a new voxel by going up only as far as needed. Boxes are
/// aligned to their power-of-two sides, so the common ancestor of two voxels is read off the
/// highest differing bit of their coordinates, and each child index off one bit per axis.
#[derive(Clone, Copy)]
struct Cursor {
    /// The reference at each depth; `refs[0]` is the root.
    refs: [u32; MAX_DEPTH + 1],
    depth: u32,
    /// `log2(R)`.
    log_res: u32,
    /// A voxel of the current leaf (`u32::MAX` before the first move).
    at: [u32; 3],
}

impl Cursor {
    fn new(root: u32, res: u32) -> Self {
        let mut refs = [0; MAX_DEPTH + 1];
        refs[0] = root;
        Self {
            refs,
            depth: 0,
            log_res: res.trailing_zeros(),
            at: [u32::MAX; 3],
        }
    }

    /// Whether voxel `v` is in the current leaf.
    #[inline(always)]
    fn holds(&self, v: [u32; 3]) -> bool {
        let diff = (v[0] ^ self.at[0]) | (v[1] ^ self.at[1]) | (v[2] ^ self.at[2]);
        diff >> (self.log_res - self.depth) == 0
    }

    /// The current leaf: `(reference, min corner, side)`.
    #[inline(always)]
    fn leaf(&self) -> (u32, [u32; 3], u32) {
        let size = 1u32 << (self.log_res - self.depth);
        let mask = !(size - 1);
        (
            self.refs[self.depth as usize],
            self.at.map(|c| c & mask),
            size,
        )
    }

    /// Moves to the leaf holding voxel `v` (inside the grid).
    #[inline(always)]
    fn locate(&mut self, view: &PoolView, v: [u32; 3]) {
        let diff = (v[0] ^ self.at[0]) | (v[1] ^ self.at[1]) | (v[2] ^ self.at[2]);
        let bits = 32 - diff.leading_zeros();
        let mut d = self.depth.min(self.log_res.saturating_sub(bits));
        let mut r = self.refs[d as usize];
        while ref_kind(r) == super::dag::KIND_NODE {
            let shift = self.log_res - d - 1;
            let child =
                ((v[0] >> shift) & 1) | (((v[1] >> shift) & 1) << 1) | (((v[2] >> shift) & 1) << 2);
            r = view.nodes[ref_payload(r) as usize].children[child as usize];
            d += 1;
            self.refs[d as usize] = r;
        }
        self.depth = d;
        self.at = v;
    }
}

/// One ray's state in voxel space.
struct March<'a, 'v> {
    view: &'a PoolView<'v>,
    p: [f32; 3],
    d: [f32; 3],
    inv: [f32; 3],
    res: u32,
    qerr: f32,
    /// How far out the far sample is taken, voxels.
    far: f32,
    /// The path to the leaf holding the current point.
    cursor: Cursor,
    /// The path to the last neighbour leaf read by [`fetch`](Self::fetch).
    aux: Cursor,
}

impl March<'_, '_> {
    #[inline(always)]
    fn at(&self, t: f32) -> [f32; 3] {
        [
            self.p[0] + t * self.d[0],
            self.p[1] + t * self.d[1],
            self.p[2] + t * self.d[2],
        ]
    }

    /// The voxel holding `q`, clamped into the grid.
    #[inline(always)]
    fn voxel(&self, q: [f32; 3]) -> [u32; 3] {
        let top = (self.res - 1) as f32;
        [0, 1, 2].map(|a| fmin(fmax(q[a], 0.0), top) as u32)
    }

    #[inline(always)]
    fn locate(&mut self, v: [u32; 3]) {
        if !self.cursor.holds(v) {
            self.cursor.locate(self.view, v);
        }
    }

    /// The ray parameter where it leaves the box `[min, min + size)`.
    #[inline(always)]
    fn exit(&self, min: [u32; 3], size: u32) -> f32 {
        let mut t = f32::INFINITY;
        for (a, &lo) in min.iter().enumerate() {
            if self.d[a] != 0.0 {
                let face = if self.d[a] > 0.0 {
                    (lo + size) as f32
                } else {
                    lo as f32
                };
                t = fmin(t, (face - self.p[a]) * self.inv[a]);
            }
        }
        t
    }

    /// The brick's own trilinear cell at `q` (clamped at the brick's edges, the clamping
    /// distance counted in the penalty).
    #[inline(always)]
    fn brick_cell(&self, brick: u32, min: [u32; 3], q: [f32; 3]) -> Cell {
        let b = &self.view.bricks[brick as usize];
        let mut f = [0.0f32; 3];
        let mut u = [0.0f32; 3];
        let mut base = 0usize;
        let mut var = 0.0f32;
        for a in 0..3 {
            let x = q[a] - min[a] as f32 - 0.5;
            let xc = fmin(fmax(x, 0.0), 7.0);
            let i0 = fmin(xc, 6.0) as usize;
            let fa = xc - i0 as f32;
            let delta = x - xc;
            var += fa * (1.0 - fa) + delta * delta;
            f[a] = fa;
            u[a] = x - i0 as f32;
            base += i0 << (3 * a);
        }
        let c = |o: usize| b[base + o];
        let corners = [c(0), c(1), c(8), c(9), c(64), c(65), c(72), c(73)];
        let solid_near = corners.contains(&-CODE_MAX);
        let step = self.view.info.quant_step();
        let k = corners.map(|v| v as f32 * step);
        Cell {
            value: trilinear(k, f),
            penalty: var.sqrt(),
            solid_near,
            k,
            f,
            u,
        }
    }

    /// A lower bound of the distance at `q` from one sample about [`FAR_VOX`] voxels out along
    /// `gradient`: `v(c) − |q − c| − q/2`. Any sample gives a valid bound (the field is
    /// 1-Lipschitz); one out along the gradient is nearly tight for planar and convex surfaces,
    /// losing about `δ²/(2·FAR_VOX)` for a lattice offset `δ` from the gradient line.
    fn far_bound(&mut self, q: [f32; 3], gradient: [f32; 3]) -> f32 {
        let g2 = gradient[0] * gradient[0] + gradient[1] * gradient[1] + gradient[2] * gradient[2];
        if g2.is_nan() || g2 <= 1e-12 {
            return f32::NEG_INFINITY;
        }
        let scale = self.far / g2.sqrt();
        let top = (self.res - 1) as f32;
        let mut c = [0u32; 3];
        let mut d2 = 0.0f32;
        for a in 0..3 {
            let target = q[a] + gradient[a] * scale - 0.5;
            let ci = fmin(fmax(target + 0.5, 0.0), top) as u32;
            let off = q[a] - (ci as f32 + 0.5);
            d2 += off * off;
            c[a] = ci;
        }
        self.fetch(c) - d2.sqrt() - self.qerr
    }

    /// Where the hit lies, given that the ray is certified free up to `t` and stalled there:
    /// the first zero of the exact interpolant within [`REFINE_VOX`] further (placed on the
    /// line through the last two quarter-voxel samples), else `t` itself. Never more than
    /// `REFINE_VOX` past `t`, hence never more than that past the surface.
    fn refine(&mut self, t: f32, t_end: f32) -> f32 {
        let (mut t_prev, mut v_prev) = (t, self.exact(self.at(t)).0);
        if v_prev <= 0.0 {
            return t;
        }
        for k in 1..=REFINE_SAMPLES {
            let tk = fmin(t + REFINE_VOX * k as f32 / REFINE_SAMPLES as f32, t_end);
            let v = self.exact(self.at(tk)).0;
            if v <= 0.0 {
                return t_prev + (tk - t_prev) * (v_prev / (v_prev - v));
            }
            (t_prev, v_prev) = (tk, v);
        }
        t
    }

    /// The exact trilinear interpolant of the global sample grid at `q` and its penalty.
    fn exact(&mut self, q: [f32; 3]) -> (f32, f32) {
        let top = (self.res - 1) as f32;
        let mut i0 = [0u32; 3];
        let mut f = [0.0f32; 3];
        let mut var = 0.0f32;
        for a in 0..3 {
            let g = q[a] - 0.5;
            let gc = fmin(fmax(g, 0.0), top);
            let base = fmin(gc, top - 1.0) as u32;
            let fa = gc - base as f32;
            let delta = g - gc;
            var += fa * (1.0 - fa) + delta * delta;
            f[a] = fa;
            i0[a] = base;
        }
        let (r, min, size) = self.cursor.leaf();
        let inside_leaf = ref_kind(r) == KIND_BRICK
            && (0..3).all(|a| i0[a] >= min[a] && i0[a] + 1 < min[a] + size);
        let corners: [f32; 8] = if inside_leaf {
            let b = &self.view.bricks[ref_payload(r) as usize];
            let base = ((i0[0] - min[0]) + 8 * (i0[1] - min[1]) + 64 * (i0[2] - min[2])) as usize;
            let c = |o: usize| b[base + o] as f32 * self.view.info.quant_step();
            [c(0), c(1), c(8), c(9), c(64), c(65), c(72), c(73)]
        } else {
            std::array::from_fn(|k| {
                let v = [
                    i0[0] + (k as u32 & 1),
                    i0[1] + ((k as u32 >> 1) & 1),
                    i0[2] + ((k as u32 >> 2) & 1),
                ];
                self.fetch(v)
            })
        };
        (trilinear(corners, f), var.sqrt())
    }

    /// The decoded sample at voxel `v`, from the current leaf, the last neighbour, or a lookup.
    fn fetch(&mut self, v: [u32; 3]) -> f32 {
        if self.cursor.holds(v) {
            let (r, min, _) = self.cursor.leaf();
            return self.view.sample_leaf(r, min, v);
        }
        if !self.aux.holds(v) {
            self.aux.locate(self.view, v);
        }
        let (r, min, _) = self.aux.leaf();
        self.view.sample_leaf(r, min, v)
    }
}

/// Trilinear interpolation of corners in `x + 2y + 4z` order at fractions `f`.
#[inline(always)]
fn trilinear(c: [f32; 8], f: [f32; 3]) -> f32 {
    let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
    let x00 = lerp(c[0], c[1], f[0]);
    let x10 = lerp(c[2], c[3], f[0]);
    let x01 = lerp(c[4], c[5], f[0]);
    let x11 = lerp(c[6], c[7], f[0]);
    lerp(lerp(x00, x10, f[1]), lerp(x01, x11, f[1]), f[2])
}
