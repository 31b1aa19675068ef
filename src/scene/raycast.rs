//! Batched ray casts over per-env scenes: conservative sphere tracing of the voxel DAG, and the
//! exact first zero of the stored field's interpolant near surfaces.
//!
//! **The surface** a ray meets is the zero set of `I`, the trilinear interpolant of the stored
//! samples (voxel centres; constant across the half-voxel rim of the domain). A hit is the first
//! point of the ray where `I ≤ 0` outside the space the march certifies free of the true
//! surface (below).
//!
//! **Far from surfaces**, sphere tracing (Hart, *Sphere tracing: a geometric method for the
//! antialiased ray tracing of implicit surfaces*, The Visual Computer 12, 1996) skips space by
//! certified lower bounds of the distance to the true surface. The stored field is sampled and
//! quantised, so every bound is built from what is known for sure: each decoded sample exceeds
//! the sampled distance by at most half a code step `q/2` (codes keep the sign; a code saturated
//! at `+T` only under-states a distance), and the distance is 1-Lipschitz. Two bounds are used:
//!
//! 1. **Uniform boxes**: the box's stored bound; the ray jumps to the box's exit, or further by
//!    the bound.
//! 2. **Corner exit** in a brick: each of the eight corners `c_i` of the brick's trilinear cell
//!    around `p` (clamped at the brick's edge) certifies the ball `B(c_i, ρ_i)`,
//!    `ρ_i = k_i − q/2`, free of the true surface (the distance at `c_i` is at least `ρ_i`).
//!    The ray steps to the farthest exit from a ball that holds `p`,
//!    `max_i (δ_i + sqrt(ρ_i² − |p − c_i|² + δ_i²))` with `δ_i = (c_i − p)·d` (`corner_exit`):
//!    eight square roots, one 8-wide vector. A ball is convex, so the segment lies in it, and
//!    the exit is never nearer than the ball's boundary, so the step is never shorter than the
//!    Lipschitz bound `max_i (ρ_i − |p − c_i|)` the march stepped by before (itself never below
//!    the Jensen bound `I(p) − sqrt(Σ_a f_a(1 − f_a) + δ_a²) − q/2` it replaced). Along a surface
//!    and towards corners ahead the exit reaches much further: camera rays take 24–27% fewer
//!    steps (`trackgen bench-scene --rows rays`: rooms 9.6 → 7.2, gates 12.9 → 9.4, forest 14.1
//!    → 10.6 at R = 128).
//!
//! A step by a certified bound never passes a true surface; it may pass a zero of `I` that lies
//! in certified free space (where `I` bulges out of the true solid), which is what the truth says.
//!
//! **Packets.** Each step waits on the one before, so one ray leaves a core mostly idle.
//! [`cast_rays`] marches the rays of one env 32 at a time (module `packet`): a branch-free
//! round takes the uniform jump or far bound step of every lane, with the same operations per
//! lane, and hands a ray near a surface to a near stage, whose rounds cross and walk one cell of
//! the sample grid per lane. The results are [`cast_one`]'s bit for bit.
//!
//! **Near surfaces** (a certified bound below 0.25 voxel) the ray walks the cells of the
//! sample grid one by one (a 3D DDA, computing no bounds while the cells it crosses have a
//! corner below 1.5 voxels): in each, `I` along the ray is a cubic, and its first root
//! is found exactly (split at the derivative's roots into monotone pieces, narrow the first piece
//! that reaches zero to 1/1024 of its length by two rounds of 32 points each; Marmitt et al.,
//! *Fast and accurate ray-voxel intersection techniques for iso-surface ray tracing*, VMV 2004).
//! Nothing is thresholded: a ray passing a surface at any small distance goes on unless `I`
//! reaches zero.
//!
//! **Accuracy.** Where the true field `F` is convex over a cell, Jensen's inequality gives
//! `I ≥ F − q/2`: the stored surface never reaches out of the true solid by more than `q/2`
//! (faces, convex edges and corners seen from outside: no early hits). Where `F` is concave,
//! `I ≤ F + q/2`: it never shrinks into the solid by more than `q/2` (faces, concave corners: no
//! late hits). Only where `F` bends the other way may the stored surface sit off by up to the
//! Jensen gap `√3/2` voxel: a ray clipping a convex edge by less than that may pass it, a ray
//! passing a concave corner that close may stop at its fillet. On faces both hold, so a hit at
//! incidence θ is within `(q/2)/cos θ` voxel of the true one along the ray. Here `F` is the
//! field the grid samples: thin primitives are stored dilated so that they cannot vanish
//! ([`build`](super::build), *Thin solids*): a ray crossing a thin solid's core stops at or before
//! it, at most the dilation `+ q/2` outside its true surface. The test suite holds this against an
//! exact `f64` oracle for every scene preset (`tests/suite/scene_accuracy.rs`).
//!
//! # Contract
//!
//! Per ray: `distance` (metres, along the normalised direction), `hit` and `steps`
//! (march steps taken).
//!
//! - **hit** ([`HIT`]): the first zero of `I` at `distance ≤ max_distance` (see *Accuracy*).
//! - **start inside a solid** (`I ≤ 0` at the start, and no corner's certified ball holding it
//!   reaches a quarter voxel along the ray): distance = where the ray enters the env's domain
//!   (`0` for an origin inside the domain), hit; so a start reports 0 only within `q/2` of a solid
//!   where `F` is convex, and within the Jensen gap only near concave corners. A start where `I`
//!   bulges below zero in certified free space steps on, as the march does past any such zero.
//! - **miss** ([`MISS`]): nothing before `max_distance` or the domain's far side: `no_hit_value`.
//!   Outside its cubic domain an env is empty.
//! - **bad ray** (non-finite origin or direction, zero direction): a miss with 0 steps.
//! - **step budget** ([`BUDGET`]): `max_steps` steps without a decision (a ray running along a
//!   surface walks one cell per step); distance = how far the ray was certified free.

use std::ops::{Add, Mul, Sub};

use rayon::prelude::*;

use super::dag::{
    ref_kind, ref_payload, uniform_bound, EnvEntry, PoolInfo, PoolView, BRICK, CODE_MAX,
    KIND_BRICK, KIND_INSIDE, KIND_NODE, KIND_OUTSIDE,
};
use crate::exec::Launch;
use crate::geom::sdf::{fmax, fmin};
use crate::lanes::{F32x4, F32x8, Mask8};
use crate::{Error, Result};

mod packet;

/// `hit` value: no surface before `max_distance`.
pub const MISS: u8 = 0;
/// `hit` value: a surface (or a start inside a solid).
pub const HIT: u8 = 1;
/// `hit` value: the step budget ran out first.
pub const BUDGET: u8 = 2;

/// The default step budget per ray.
pub const DEFAULT_MAX_STEPS: u32 = 1024;

/// Below this certified bound (voxels) a ray walks the interpolant's cells instead of stepping.
/// With the corner bound, camera rays in `rooms` run fewer instructions at 0.25 than at 0.125,
/// 0.375, 0.5, 0.75 or 1 (callgrind, `trackgen bench-scene --rows rays`, R = 128 and 256; the
/// walk as it is now, see [`WALK_STAY_VOX`]). At 0 a ray grazing a surface would never walk.
const CELL_WALK_VOX: f32 = 0.25;
/// A cell walk goes on to the next cell without computing a bound while the cell just crossed
/// had a corner below this (voxels). The walk finds the first zero of the interpolant whatever
/// it is set to (it visits every cell the ray crosses); it trades bound steps against cells a
/// bound step would have skipped. Camera rays in `rooms` run fewer instructions at 1.5 than at
/// 1 or 2 (callgrind, `trackgen bench-scene --rows rays`).
const WALK_STAY_VOX: f32 = 1.5;
/// How far past a cell's exit the walk resumes, voxels (so a rounded exit never stalls it).
const CELL_NUDGE_VOX: f32 = 1e-4;
/// Points per round of the search placing a root inside its monotone piece (one round narrows
/// the bracket `ROOT_LANES`-fold; see [`bracket_root`]).
const ROOT_LANES: usize = 32;
/// Rounds of that search. A piece lies in one cell of the sample grid, widened along an axis by
/// at most the half-voxel rim of the domain, so it is at most `2√3` voxels long; the search keeps
/// a bracket holding the piece's root at or below its upper end, which is what is reported, so
/// the reported hit is at most `2√3 / ROOT_LANES^ROOT_ROUNDS = 2√3 / 2^10 < 0.0034` voxel past
/// the interpolant's zero: under 1.4% of the quarter-voxel contract.
const ROOT_ROUNDS: u32 = 2;
/// How far past a uniform box's exit a ray is placed, voxels.
const NUDGE_VOX: f32 = 1e-3;
/// What a uniform box is widened by for its exit, per voxel of its bound. Every point within
/// the bound of the box is free, so the box widened by `bound/√3` a side is; `0.57` leaves the
/// rounding and the nudge a margin (`√3 · 0.57 = 0.987`: a landing point stays nearer the box
/// than its bound, every bound being 0 or at least half a voxel).
const BOX_REACH: f32 = 0.57;
/// Rays per parallel work item. The packet's two stages run empty at the end of each item
/// (up to 64 rays in flight): 1024 cast camera rays 1–5% and random rays 3–10% faster than 512
/// (`trackgen bench-scene --rows rays,random`, two sets of three alternating runs).
const CHUNK: usize = 1024;

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
    // A worker's leaf table and queues, kept across its work items.
    let init = || {
        (
            SpareTable::take(view.info.resolution),
            packet::Queues::default(),
        )
    };
    let cast = |(table, queues): &mut (SpareTable, packet::Queues),
                (c, ((dist, hit), steps)): WorkItem<'_>| {
        let first = c * CHUNK;
        match table.0.as_mut() {
            // Runs of rays of one env, a packet at a time.
            Some(table) if packet::fits(view) => {
                let mut j = 0;
                while j < dist.len() {
                    let e = env_of(first + j);
                    let end = (j + 1..dist.len())
                        .find(|&k| env_of(first + k) != e)
                        .unwrap_or(dist.len());
                    let rays = first + j..first + end;
                    packet::cast_run(
                        view,
                        &view.envs[e],
                        &origins[rays.clone()],
                        &dirs[rays],
                        opts,
                        table,
                        queues,
                        (&mut dist[j..end], &mut hit[j..end], &mut steps[j..end]),
                    );
                    j = end;
                }
            }
            mut table => {
                for j in 0..dist.len() {
                    let i = first + j;
                    let env = &view.envs[env_of(i)];
                    let (d, h, s) =
                        cast_in(view, env, origins[i], dirs[i], opts, table.as_deref_mut());
                    dist[j] = d;
                    hit[j] = h;
                    steps[j] = s;
                }
            }
        }
    };
    if launch.threads() == 1 {
        // On the calling thread: handing the work to a one-thread pool's worker (waking it,
        // waiting for it) cost some 45 µs of CPU time per call (a one-ray Python call: 83 →
        // 36 µs).
        let mut worker = init();
        out.distance
            .chunks_mut(CHUNK)
            .zip(out.hit.chunks_mut(CHUNK))
            .zip(out.steps.chunks_mut(CHUNK))
            .enumerate()
            .for_each(|item| cast(&mut worker, item));
    } else {
        launch.install(|| {
            out.distance
                .par_chunks_mut(CHUNK)
                .zip(out.hit.par_chunks_mut(CHUNK))
                .zip(out.steps.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each_init(init, cast)
        });
    }
    Ok(())
}

/// A [`cast_rays`] work item: its index, and the distance, hit and step outputs of its rays.
type WorkItem<'a> = (usize, ((&'a mut [f32], &'a mut [u8]), &'a mut [u32]));

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
    cast_in(view, env, origin, dir, opts, None)
}

/// [`cast_one`], finding leaves through `table` if given (the same results).
fn cast_in(
    view: &PoolView,
    env: &EnvEntry,
    origin: [f32; 3],
    dir: [f32; 3],
    opts: &CastOptions,
    table: Option<&mut LeafTable>,
) -> (f32, u8, u32) {
    match RayStart::new(view, env, origin, dir, opts) {
        Some(ray) => march(view, env, &ray, opts, table),
        None => (opts.no_hit_value, MISS, 0),
    }
}

/// A ray in its env's voxel space, clipped to the domain: where every march of it starts.
#[derive(Clone, Copy, Debug)]
struct RayStart {
    /// The start, the fourth lane 0.
    p: [f32; 4],
    /// The unit direction, the fourth lane 0.
    d: [f32; 4],
    /// `1 / d` per axis (infinite where `d` is 0).
    inv: [f32; 3],
    /// The ray parameters (voxels) where it enters and leaves the domain cube, or where
    /// `max_distance` ends it.
    lo: f32,
    hi: f32,
}

impl RayStart {
    /// The ray from `origin` along `dir` (metres, any length) in `env`'s voxel space, or `None`
    /// for a miss found before any step: a non-finite or zero ray, or one that does not meet
    /// the domain within `max_distance`.
    #[inline(always)]
    fn new(
        view: &PoolView,
        env: &EnvEntry,
        origin: [f32; 3],
        dir: [f32; 3],
        opts: &CastOptions,
    ) -> Option<Self> {
        if !(origin.iter().chain(dir.iter()).all(|v| v.is_finite())) {
            return None;
        }
        let d = unit(dir)?;
        let inv_h = 1.0 / env.voxel_size;
        let rf = view.info.resolution as f32;
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
                return None;
            }
        }
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return None;
        }
        Some(Self {
            p: [p[0], p[1], p[2], 0.0],
            d: [d[0], d[1], d[2], 0.0],
            inv,
            lo,
            hi,
        })
    }
}

/// What a march subtracts from every corner bound, voxels: half a code step (a decoded sample
/// exceeds the sampled distance by at most that) and a margin for the bound's rounding.
fn bound_error(info: PoolInfo) -> f32 {
    0.5 * info.quant_step() + 1e-4
}

/// The march of `ray` one ray at a time: the cast's result. A march is one sequence of steps,
/// each a function of the ray parameter `t` alone; the packets (module `packet`) take the same
/// steps with the same operations.
#[inline(always)]
fn march(
    view: &PoolView,
    env: &EnvEntry,
    ray: &RayStart,
    opts: &CastOptions,
    table: Option<&mut LeafTable>,
) -> (f32, u8, u32) {
    let h = env.voxel_size;
    let hi = ray.hi;
    let mut table = table;
    if let Some(t) = table.as_deref_mut() {
        t.start(env.root);
    }
    let mut march = March::new(view, env.root, ray, table);
    let mut t = ray.lo;
    let mut step = 0;
    while step < opts.max_steps {
        if t > hi {
            return (opts.no_hit_value, MISS, step);
        }
        step += 1;
        let q = march.at(t);
        let v = march.voxel(q);
        march.locate(v);
        let (r, min, size) = march.cursor.leaf();
        match ref_kind(r) {
            KIND_OUTSIDE => {
                let bound = uniform_bound(r);
                let exit = march.exit(min, size, bound * BOX_REACH);
                t = fmax(exit, t + bound) + NUDGE_VOX;
                continue;
            }
            KIND_INSIDE => return (t * h, HIT, step),
            _ => {}
        }
        debug_assert_eq!(ref_kind(r), KIND_BRICK);
        let bound = march.brick_step(ref_payload(r), min, q);
        if bound >= CELL_WALK_VOX {
            t += bound;
            continue;
        }
        // Near a surface: the first zero of the interpolant in the cell holding the point.
        // `cross_cell` reads that cell's corners from the brick again: handing the eight decoded
        // corners over from `brick_step` kept them alive across every bound step, and cost
        // 3–4% more instructions per camera ray (callgrind) than the second read here.
        let (exit, root, low) = march.cross_cell(t, q.to_array(), hi);
        if let Some(t_hit) = root {
            return (t_hit * h, HIT, step);
        }
        t = fmax(t + bound, exit + CELL_NUDGE_VOX);
        if low < WALK_STAY_VOX {
            // Still near: walk on cell by cell.
            let (walk, taken) = march.walk(t, hi, opts.max_steps - step);
            step += taken;
            match walk {
                Walk::Hit(t_hit) => return (t_hit * h, HIT, step),
                Walk::Miss => return (opts.no_hit_value, MISS, step),
                Walk::Leave(t_next) => t = t_next,
            }
        }
    }
    (t * h, BUDGET, opts.max_steps)
}

/// How a [`March::walk`] ended.
enum Walk {
    /// The first zero of the interpolant, at this ray parameter.
    Hit(f32),
    /// Past `t_end`.
    Miss,
    /// Back to bound steps from this ray parameter (a cell far enough from surfaces, the
    /// clamped rim of the domain, or the step budget spent).
    Leave(f32),
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
    // A ray standing at the point (only its start is read).
    let at = RayStart {
        p: [q[0], q[1], q[2], 0.0],
        d: [1.0, 0.0, 0.0, 0.0],
        inv: [1.0, f32::INFINITY, f32::INFINITY],
        lo: 0.0,
        hi: 0.0,
    };
    let mut march = March::new(view, e.root, &at, None);
    let v = march.voxel(F32x4::load(&march.p));
    march.locate(v);
    Some(march.exact(q).0 * e.voxel_size)
}

/// A worker's [`LeafTable`] for the rest of a [`cast_rays`] call (or `None` past
/// [`TABLE_MAX_LOG_BLOCKS`]): one of the thread's spare tables of that grid, its entries
/// forgotten, or a new one; given back to the thread's spares when dropped. Allocating and
/// zeroing a table per call cost 6–11% of a 4096-ray call at `R = 256`.
struct SpareTable(Option<LeafTable>);

thread_local! {
    /// The calling thread's spare tables, at most [`SPARE_TABLES`].
    static SPARES: std::cell::RefCell<Vec<LeafTable>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The most spare tables a thread keeps (2 MiB each at `R = 512`).
const SPARE_TABLES: usize = 2;

impl SpareTable {
    fn take(res: u32) -> Self {
        let log_blocks = (res / BRICK).trailing_zeros();
        let spare = SPARES.with_borrow_mut(|spares| {
            let i = spares.iter().position(|t| t.log_blocks == log_blocks)?;
            Some(spares.swap_remove(i))
        });
        Self(match spare {
            Some(mut table) => {
                // A new epoch at the next start: the entries may be another pool's.
                table.root = None;
                Some(table)
            }
            None => LeafTable::new(res),
        })
    }
}

impl Drop for SpareTable {
    fn drop(&mut self) {
        if let Some(table) = self.0.take() {
            SPARES.with_borrow_mut(|spares| {
                if spares.len() < SPARE_TABLES {
                    spares.push(table);
                }
            });
        }
    }
}

/// The largest grid [`cast_rays`] keeps a [`LeafTable`] for, as `log2` of its blocks per axis:
/// `R = 512`, 262 144 entries (2 MiB, its pages touched only where rays go) per worker; finer
/// grids descend the DAG at every move. At `R = 512` the table took camera rays' process CPU
/// time 2.8–3% below the descent (`trackgen raycast`, gates and rooms, five runs each).
const TABLE_MAX_LOG_BLOCKS: u32 = 6;

/// One worker's memo of the leaf holding each brick-sized block (8³ voxels, aligned) of the
/// env it casts in, filled a region of [`FILL_MAX_SIDE`]³ blocks at a time as rays first reach
/// one of its blocks: a ray moving to another leaf reads one entry instead of descending the
/// DAG from the common ancestor (a chain of dependent loads of varying length). Leaves are
/// aligned boxes of at least 8 voxels, so a block lies in exactly one leaf. Entries are stamped
/// with an epoch; one of an older epoch is unknown. The epoch moves on whenever the root changes
/// (envs that share a root share their tree, and with it the table), so switching envs costs
/// nothing, and at the start of every [`cast_rays`] call (a worker keeps its table for the next
/// call, [`SpareTable`], whose pool may differ): the entries serve one call, within which the
/// pool does not change.
struct LeafTable {
    /// `epoch << 8 | log2(leaf side)`, per block (`x + n·y + n²·z`).
    tags: Vec<u32>,
    /// The leaf's reference, per block (valid where the tag's epoch is current).
    refs: Vec<u32>,
    /// The current epoch (`1..2^24`; 0 marks entries never filled).
    epoch: u32,
    /// The root the current epoch's entries belong to.
    root: Option<u32>,
    /// `log2` of the blocks per axis.
    log_blocks: u32,
}

impl LeafTable {
    /// An empty table for grids of `res` voxels per side, or `None` past
    /// [`TABLE_MAX_LOG_BLOCKS`].
    fn new(res: u32) -> Option<Self> {
        let log_blocks = (res / BRICK).trailing_zeros();
        (log_blocks <= TABLE_MAX_LOG_BLOCKS).then(|| Self {
            tags: vec![0; 1 << (3 * log_blocks)],
            refs: vec![0; 1 << (3 * log_blocks)],
            epoch: 0,
            root: None,
            log_blocks,
        })
    }

    /// Makes the entries those of the tree under `root`.
    fn start(&mut self, root: u32) {
        if self.root != Some(root) {
            self.root = Some(root);
            self.epoch += 1;
            if self.epoch == 1 << 24 {
                self.tags.fill(0);
                self.epoch = 1;
            }
        }
    }

    /// The leaf holding voxel `v` (inside the grid): `(reference, log2 of its side)`.
    #[inline(always)]
    fn leaf(&mut self, view: &PoolView, v: [u32; 3]) -> (u32, u32) {
        let lb = self.log_blocks;
        let b = v.map(|c| c / BRICK);
        let i = (b[0] | b[1] << lb | b[2] << (2 * lb)) as usize;
        let tag = self.tags[i];
        if tag >> 8 == self.epoch {
            return (self.refs[i], tag & 0xff);
        }
        self.fill(view, v);
        (self.refs[i], self.tags[i] & 0xff)
    }

    /// Fills the entries of the *region* around voxel `v`: the aligned cube of
    /// [`FILL_MAX_SIDE`] blocks per axis (or the grid, if smaller) that holds it. Where a leaf
    /// covers the region, its blocks there; else every leaf under the region's node. Rays
    /// crossing empty space meet large uniform leaves block after block, and rays near a
    /// surface the bricks beside one another: one descent serves them all.
    #[cold]
    #[inline(never)]
    fn fill(&mut self, view: &PoolView, v: [u32; 3]) {
        let root = self.root.expect("a table is started before use");
        let region = (BRICK * FILL_MAX_SIDE).trailing_zeros();
        let mut r = root;
        let mut shift = self.log_blocks + BRICK.trailing_zeros();
        while ref_kind(r) == KIND_NODE && shift > region {
            shift -= 1;
            let child =
                ((v[0] >> shift) & 1) | ((v[1] >> shift) & 1) << 1 | ((v[2] >> shift) & 1) << 2;
            r = view.nodes[ref_payload(r) as usize].children[child as usize];
        }
        let side = shift.min(region);
        let min = v.map(|c| (c >> side) << side);
        if side == region {
            self.fill_region(view, r, min, shift);
        } else {
            self.fill_under(view, r, min, shift, side);
        }
    }

    /// [`fill_under`](Self::fill_under) of a whole region (its min corner `min`) under `r`,
    /// a box of side `2^shift`, unrolled: a leaf covering the region writes all its blocks,
    /// and a node each child's two blocks per axis, the child's leaf or, under a node child,
    /// each block's leaf (the children of a node two blocks wide are leaves of one block). The
    /// kind of each child is a select, not a branch: children of mixed kinds are the rule
    /// near surfaces.
    fn fill_region(&mut self, view: &PoolView, r: u32, min: [u32; 3], shift: u32) {
        const SIDE: usize = FILL_MAX_SIDE as usize;
        let lb = self.log_blocks;
        let from = min.map(|c| c / BRICK);
        let base = (from[0] | from[1] << lb | from[2] << (2 * lb)) as usize;
        // Block `(x, y, z)` of the region.
        let at = |x: usize, y: usize, z: usize| base + x + (y << lb) + (z << (2 * lb));
        let epoch = self.epoch << 8;
        if ref_kind(r) != KIND_NODE {
            for z in 0..SIDE {
                for y in 0..SIDE {
                    let row = at(0, y, z);
                    self.tags[row..row + SIDE].fill(epoch | shift);
                    self.refs[row..row + SIDE].fill(r);
                }
            }
            return;
        }
        let brick_shift = BRICK.trailing_zeros();
        for (child, &c) in view.nodes[ref_payload(r) as usize]
            .children
            .iter()
            .enumerate()
        {
            let node = ref_kind(c) == KIND_NODE;
            // Not a node: the children of node 0, read and replaced by `c`.
            let kids = view.nodes[if node { ref_payload(c) as usize } else { 0 }].children;
            let tag = epoch | if node { brick_shift } else { brick_shift + 1 };
            for (g, &k) in kids.iter().enumerate() {
                let corner = |a: usize| 2 * ((child >> a) & 1) + ((g >> a) & 1);
                let i = at(corner(0), corner(1), corner(2));
                self.tags[i] = tag;
                self.refs[i] = if node { k } else { c };
            }
        }
    }

    /// Writes the entries of the box at `min` of side `2^side` voxels, which lies in the tree
    /// under `r`, a box of side `2^shift` (`shift ≥ side`; equal where `r` is a node).
    fn fill_under(&mut self, view: &PoolView, r: u32, min: [u32; 3], shift: u32, side: u32) {
        if ref_kind(r) == KIND_NODE {
            let half = shift - 1;
            let node = &view.nodes[ref_payload(r) as usize];
            for (child, &c) in node.children.iter().enumerate() {
                let at: [u32; 3] =
                    std::array::from_fn(|a| min[a] + ((((child as u32) >> a) & 1) << half));
                self.fill_under(view, c, at, half, half);
            }
            return;
        }
        let lb = self.log_blocks;
        let tag = self.epoch << 8 | shift;
        let from = min.map(|c| c / BRICK);
        let blocks = (1u32 << side) / BRICK;
        for z in from[2]..from[2] + blocks {
            for y in from[1]..from[1] + blocks {
                let row = (y << lb | z << (2 * lb)) as usize;
                for x in from[0]..from[0] + blocks {
                    self.tags[row + x as usize] = tag;
                    self.refs[row + x as usize] = r;
                }
            }
        }
    }
}

/// Blocks per axis of the region [`LeafTable::leaf`] fills at once.
const FILL_MAX_SIDE: u32 = 4;

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
    /// `log2` of the current leaf's side (`log_res − depth`).
    shift: u32,
    /// The current leaf's reference (`refs[depth]`).
    leaf: u32,
    /// The current leaf's min corner (`u32::MAX` before the first move).
    min: [u32; 3],
}

impl Cursor {
    fn new(root: u32, res: u32) -> Self {
        let mut refs = [0; MAX_DEPTH + 1];
        refs[0] = root;
        let log_res = res.trailing_zeros();
        Self {
            refs,
            depth: 0,
            log_res,
            shift: log_res,
            leaf: root,
            min: [u32::MAX; 3],
        }
    }

    /// Whether voxel `v` is in the current leaf.
    #[inline(always)]
    fn holds(&self, v: [u32; 3]) -> bool {
        let diff = (v[0] ^ self.min[0]) | (v[1] ^ self.min[1]) | (v[2] ^ self.min[2]);
        diff >> self.shift == 0
    }

    /// The current leaf: `(reference, min corner, side)`.
    #[inline(always)]
    fn leaf(&self) -> (u32, [u32; 3], u32) {
        (self.leaf, self.min, 1u32 << self.shift)
    }

    /// Moves to the leaf holding voxel `v` (inside the grid, not in the current leaf), read
    /// from `table` if given (started at this cursor's root); a cursor is moved with a table
    /// always or never.
    #[inline(always)]
    fn locate(&mut self, view: &PoolView, v: [u32; 3], table: Option<&mut LeafTable>) {
        if let Some(table) = table {
            let (r, shift) = table.leaf(view, v);
            self.shift = shift;
            self.leaf = r;
            self.min = v.map(|c| (c >> shift) << shift);
            return;
        }
        // The highest bit where `v` leaves the current leaf names the deepest common ancestor
        // (the leaf's min corner agrees with its voxels on every bit at and above `shift`).
        let diff = (v[0] ^ self.min[0]) | (v[1] ^ self.min[1]) | (v[2] ^ self.min[2]);
        let bits = 32 - diff.leading_zeros();
        let mut d = self.depth.min(self.log_res.saturating_sub(bits));
        let mut r = self.refs[d as usize];
        let mut shift = self.log_res - d;
        while ref_kind(r) == super::dag::KIND_NODE {
            shift -= 1;
            let child =
                ((v[0] >> shift) & 1) | (((v[1] >> shift) & 1) << 1) | (((v[2] >> shift) & 1) << 2);
            r = view.nodes[ref_payload(r) as usize].children[child as usize];
            d += 1;
            self.refs[d as usize] = r;
        }
        self.depth = d;
        self.shift = shift;
        self.leaf = r;
        self.min = v.map(|c| (c >> shift) << shift);
    }
}

/// One ray's state in voxel space.
struct March<'a, 'v, 't> {
    view: &'a PoolView<'v>,
    /// The start and the unit direction, the fourth lane 0, in the four lanes that
    /// [`voxel`](Self::voxel) and [`brick_step`](Self::brick_step) convert a point in: no
    /// repacking of three lanes into four per step (0.5–0.8% fewer instructions per camera
    /// ray, callgrind).
    p: [f32; 4],
    d: [f32; 4],
    inv: [f32; 3],
    res: u32,
    /// `R − 1`: the last voxel centre's grid coordinate.
    top: f32,
    /// What every corner bound loses ([`bound_error`]).
    qerr: f32,
    /// Voxels per code step.
    step: f32,
    /// The path to the leaf holding the current point.
    cursor: Cursor,
    /// The path to the last neighbour leaf read by [`cell_corners`](Self::cell_corners).
    aux: Cursor,
    /// Where both cursors find leaves, if given.
    table: Option<&'t mut LeafTable>,
}

impl<'a, 'v, 't> March<'a, 'v, 't> {
    /// `ray`'s march in the tree under `root`, both cursors at the root, finding leaves
    /// through `table` if given.
    #[inline(always)]
    fn new(
        view: &'a PoolView<'v>,
        root: u32,
        ray: &RayStart,
        table: Option<&'t mut LeafTable>,
    ) -> Self {
        let res = view.info.resolution;
        March {
            view,
            p: ray.p,
            d: ray.d,
            inv: ray.inv,
            res,
            top: (res - 1) as f32,
            qerr: bound_error(view.info),
            step: view.info.quant_step(),
            cursor: Cursor::new(root, res),
            aux: Cursor::new(root, res),
            table,
        }
    }
}

impl March<'_, '_, '_> {
    /// The point at ray parameter `t` (the fourth lane 0 for a finite `t`).
    #[inline(always)]
    fn at(&self, t: f32) -> F32x4 {
        F32x4::load(&self.p) + F32x4::splat(t) * F32x4::load(&self.d)
    }

    /// The voxel holding `q`, clamped into the grid.
    #[inline(always)]
    fn voxel(&self, q: F32x4) -> [u32; 3] {
        // Clamped into [0, top] (a NaN becomes 0 at `fmax`), `top < 2^16`, so truncating is
        // the floor, exactly. Four lanes, the last a dummy, each step one 4-wide vector (a
        // cast with saturation is three scalar chains; arrays of four compiled to a 2-wide
        // vector beside a scalar lane, and the floor as a round and the bits of `y + 2^23`
        // took three dependent operations more than this conversion).
        let c = q
            .max(F32x4::splat(0.0))
            .min(F32x4::splat(self.top))
            .truncate();
        [c[0] as u32, c[1] as u32, c[2] as u32]
    }

    #[inline(always)]
    fn locate(&mut self, v: [u32; 3]) {
        if !self.cursor.holds(v) {
            self.cursor.locate(self.view, v, self.table.as_deref_mut());
        }
    }

    /// The ray parameter where it leaves the box `[min, min + size)` widened by `reach` a side.
    #[inline(always)]
    fn exit(&self, min: [u32; 3], size: u32, reach: f32) -> f32 {
        let mut t = f32::INFINITY;
        for (a, &lo) in min.iter().enumerate() {
            if self.d[a] != 0.0 {
                let face = if self.d[a] > 0.0 {
                    (lo + size) as f32 + reach
                } else {
                    lo as f32 - reach
                };
                t = fmin(t, (face - self.p[a]) * self.inv[a]);
            }
        }
        t
    }

    /// How far the ray runs certified free from `q` by the corners of the brick's own
    /// trilinear cell around it (clamped at the brick's edges): the [`corner_exit`], or `−∞`
    /// where a corner is saturated inside a solid (its true value may be far below the code).
    #[inline(always)]
    fn brick_step(&self, brick: u32, min: [u32; 3], q: F32x4) -> f32 {
        let b = &self.view.bricks[brick as usize];
        // Four lanes, the last a dummy, so each step below is one 4-wide vector.
        // `min < 2^16`: exact through `i32`, one vector conversion.
        let m4 = F32x4::from_i32([min[0] as i32, min[1] as i32, min[2] as i32, 0]);
        // `q − min` is exact: the point lies in its brick (or on the clamped rim beside it), so
        // `|q − min| ≤ 8`, and the integer `min` is a multiple of `q`'s float spacing, so the
        // difference is too and fits 24 bits. This is thus the one rounding of `q − min − 0.5`
        // that `(q − min) − 0.5` is, bit for bit, with `min + 0.5` off the point's chain of
        // dependent operations (CPU time casting 0–4% lower, the same instructions).
        let x = q - (m4 + F32x4::splat(0.5));
        // The cell's lower corner in the brick: `x` clamped into [0, 6] (never NaN:
        // `fmax(NaN, 0) = 0`), floored; as integers, truncated (the same: it is not negative).
        let clamped = x.max(F32x4::splat(0.0)).min(F32x4::splat(6.0));
        let (lower, i0) = (clamped.floor(), clamped.truncate().map(|v| v as u32));
        // The point's offset from the lower corner (outside `[0, 1]` past a clamped edge).
        let u = x - lower;
        let w = F32x4::splat(1.0) - u;
        // Per axis, the squared offsets of the point from the cell's lower and upper corner,
        // and the ray's progress towards each (the offsets `c − p` times the direction).
        let (uu, ww) = ((u * u).to_array(), (w * w).to_array());
        let sq: [[f32; 2]; 3] = std::array::from_fn(|a| [uu[a], ww[a]]);
        let d = F32x4::load(&self.d);
        let (dn, dp) = (((F32x4::splat(0.0) - u) * d).to_array(), (w * d).to_array());
        let dots: [[f32; 2]; 3] = std::array::from_fn(|a| [dn[a], dp[a]]);
        let base = (i0[0] + (i0[1] << 3) + (i0[2] << 6)) as usize;
        // One bounds check for the eight corners (`base ≤ 6 · 73`, so the window fits).
        let w = &b[base..base + 74];
        let pair = |o: usize| u64::from(u16::from_le_bytes([w[o] as u8, w[o + 1] as u8]));
        let packed = pair(0) | pair(8) << 16 | pair(64) << 32 | pair(72) << 48;
        let step = self.step;
        let k = packed.to_le_bytes().map(|v| f32::from(v as i8) * step);
        if has_byte(packed, -CODE_MAX as u8) {
            f32::NEG_INFINITY
        } else {
            corner_exit(k, sq, dots, self.qerr)
        }
    }

    /// The interpolant along the ray through the cell of the sample grid that holds the point
    /// at `t`: `(exit, root)`, where `exit` is the ray parameter where the ray leaves that cell
    /// (at most `t_end`) and `root` the first `t' ∈ [t, exit]` with a value `≤ 0`, if any.
    ///
    /// A cell is the box between eight neighbouring voxel centres (the half-voxel rim of the
    /// domain is clamped: the value is constant across it along that axis). Along a line the
    /// trilinear interpolant is a cubic in the ray parameter; its first root is found exactly:
    /// the cubic is split at the roots of its derivative into monotone pieces, and the first
    /// piece that ends at or below zero is searched (Marmitt et al., *Fast and accurate
    /// ray-voxel intersection techniques for iso-surface ray tracing*, VMV 2004).
    ///
    /// `q` is the point at `t`. The third value is the cell's smallest corner.
    fn cross_cell(&mut self, t: f32, q: [f32; 4], t_end: f32) -> (f32, Option<f32>, f32) {
        let top = self.top;
        let mut i0 = [0u32; 3];
        let mut f = [0.0f32; 3];
        let mut slope = [0.0f32; 3];
        let mut s_exit = fmax(t_end - t, 0.0);
        for a in 0..3 {
            let g = q[a] - 0.5;
            let d = self.d[a];
            // The ray's next breakpoint along this axis: a cell face, or the clamped rim's edge.
            let (base, fa, moving, next) = if g < 0.0 {
                (0u32, 0.0, false, if d > 0.0 { 0.0 } else { f32::NAN })
            } else if g >= top {
                (
                    self.res - 2,
                    1.0,
                    false,
                    if d < 0.0 { top } else { f32::NAN },
                )
            } else {
                // Ties go to the cell the ray is heading into.
                // `g` is in [0, top), `top < 2^16`: the cheap `u16` cast is exact.
                let mut b = u32::from(fmin(g, top - 1.0) as u16);
                if d < 0.0 && g == b as f32 && b > 0 {
                    b -= 1;
                }
                let next = if d > 0.0 {
                    (b + 1) as f32
                } else if d < 0.0 {
                    b as f32
                } else {
                    f32::NAN
                };
                (b, g - b as f32, true, next)
            };
            i0[a] = base;
            f[a] = fa;
            if moving {
                slope[a] = d;
            }
            if !next.is_nan() {
                s_exit = fmin(s_exit, fmax((next - g) * self.inv[a], 0.0));
            }
        }
        let k = self.grid_corners(i0);
        let low = k.iter().fold(f32::INFINITY, |m, &v| fmin(m, v));
        // Every corner above zero: the interpolant, a convex combination of the corners, stays
        // above the smallest one (at least one code step) across the cell, so it has no root.
        if low > 0.0 {
            return (t + s_exit, None, low);
        }
        let root = first_root(cubic_along(k, f, slope), s_exit);
        (t + s_exit, root.map(|s| t + s), low)
    }

    /// Walks the cells of the sample grid along the ray from `t` (a 3D DDA: Amanatides and Woo,
    /// *A fast voxel traversal algorithm for ray tracing*, Eurographics 1987), one step per
    /// cell and at most `budget` cells, looking for the first zero of the interpolant as
    /// [`cross_cell`](Self::cross_cell) does: `(how it ended, cells walked)`. A cell whose
    /// corners are all above zero has no root; one with a corner at or below zero has its
    /// cubic solved. The walk leaves at a cell whose smallest corner is at least
    /// [`WALK_STAY_VOX`], at the clamped rim of the domain, and when the budget is spent.
    fn walk(&mut self, t: f32, t_end: f32, budget: u32) -> (Walk, u32) {
        let Some(mut i) = walk_cell(self.at(t).to_array(), &self.d, self.top) else {
            return (Walk::Leave(t), 0);
        };
        let last = self.res - 2;
        let face = |m: &Self, a: usize, c: u32| cell_face(m.p[a], m.d[a], m.inv[a], c);
        let mut faces = [
            face(self, 0, i[0]),
            face(self, 1, i[1]),
            face(self, 2, i[2]),
        ];
        let mut t = t;
        let mut taken = 0;
        loop {
            if taken == budget {
                return (Walk::Leave(t), taken);
            }
            if t > t_end {
                return (Walk::Miss, taken);
            }
            taken += 1;
            let exit = fmin(fmin(faces[0], faces[1]), faces[2]);
            let k = self.grid_corners(i);
            let low = k.iter().fold(f32::INFINITY, |m, &v| fmin(m, v));
            if low <= 0.0 {
                let q = self.at(t).to_array();
                let f = [0, 1, 2].map(|a| q[a] - 0.5 - i[a] as f32);
                let s_exit = fmax(fmin(exit, t_end) - t, 0.0);
                if let Some(s) =
                    first_root(cubic_along(k, f, [self.d[0], self.d[1], self.d[2]]), s_exit)
                {
                    return (Walk::Hit(t + s), taken);
                }
            }
            if low >= WALK_STAY_VOX {
                return (Walk::Leave(exit + CELL_NUDGE_VOX), taken);
            }
            let Some(a) = next_cell(&faces, &self.d, &mut i, last) else {
                return (Walk::Leave(exit + CELL_NUDGE_VOX), taken);
            };
            faces[a] = face(self, a, i[a]);
            t = fmax(t, exit);
        }
    }

    /// The decoded samples at the eight corners of the cell whose corner 0 is voxel `i0`
    /// (`x + 2y + 4z` order): read from one brick when the cell lies in the leaf holding `i0`
    /// (the cursor moves there), else by [`cell_corners`](Self::cell_corners).
    #[inline(always)]
    fn grid_corners(&mut self, i0: [u32; 3]) -> [f32; 8] {
        if !self.cursor.holds(i0) {
            self.cursor.locate(self.view, i0, self.table.as_deref_mut());
        }
        let (r, min, size) = self.cursor.leaf();
        // The far corner `i0 + 1` is in the leaf too (`i0 ≥ min` as the leaf holds `i0`).
        let inside = (0..3).all(|a| i0[a] + 1 < min[a] + size);
        if !inside {
            return self.cell_corners(i0);
        }
        match ref_kind(r) {
            KIND_BRICK => {
                let b = &self.view.bricks[ref_payload(r) as usize];
                let base =
                    ((i0[0] - min[0]) + 8 * (i0[1] - min[1]) + 64 * (i0[2] - min[2])) as usize;
                // One bounds check for the eight corners (`base ≤ 6 · 73`).
                let w = &b[base..base + 74];
                let step = self.step;
                [w[0], w[1], w[8], w[9], w[64], w[65], w[72], w[73]].map(|c| f32::from(c) * step)
            }
            _ => [self.view.sample_leaf(r, min, i0); 8],
        }
    }

    /// The exact trilinear interpolant of the global sample grid at `q` and its penalty.
    fn exact(&mut self, q: [f32; 3]) -> (f32, f32) {
        let top = self.top;
        let mut i0 = [0u32; 3];
        let mut f = [0.0f32; 3];
        let mut var = 0.0f32;
        for a in 0..3 {
            let g = q[a] - 0.5;
            let gc = fmin(fmax(g, 0.0), top);
            let base = u32::from(fmin(gc, top - 1.0) as u16);
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
            self.cell_corners(i0)
        };
        (trilinear(corners, f), var.sqrt())
    }

    /// The decoded samples at the eight corners of the cell whose corner 0 is voxel `i0`
    /// (`x + 2y + 4z` order), each leaf they lie in looked up once: from the current leaf, the
    /// last neighbour, or a lookup. Leaves are aligned boxes of at least 8 voxels, so a cell's
    /// corners fall into different leaves only along the axes where it crosses a multiple of 8:
    /// the corners that agree on those axes share a leaf.
    fn cell_corners(&mut self, i0: [u32; 3]) -> [f32; 8] {
        // Bricks are aligned to multiples of 8, so a sample's index in its brick is read off
        // the low three bits of its voxel coordinates, and the cell crosses a brick edge along
        // axis `a` exactly when `i0[a] + 1` is a multiple of 8.
        let lo = [i0[0] & 7, i0[1] & 7, i0[2] & 7];
        let crossing =
            usize::from(lo[0] == 7) | usize::from(lo[1] == 7) << 1 | usize::from(lo[2] == 7) << 2;
        let corner = |c: usize| {
            [
                i0[0] + (c as u32 & 1),
                i0[1] + ((c as u32 >> 1) & 1),
                i0[2] + ((c as u32 >> 2) & 1),
            ]
        };
        let mut k = [0.0f32; 8];
        // Every subset of the crossing axes, in increasing order (`(sub − mask) & mask` is the
        // next subset of `mask` after `sub`), names one leaf.
        let mut sub = 0usize;
        loop {
            let v = corner(sub);
            let (r, min) = if self.cursor.holds(v) {
                let (r, min, _) = self.cursor.leaf();
                (r, min)
            } else {
                if !self.aux.holds(v) {
                    self.aux.locate(self.view, v, self.table.as_deref_mut());
                }
                let (r, min, _) = self.aux.leaf();
                (r, min)
            };
            if ref_kind(r) == KIND_BRICK {
                let b = &self.view.bricks[ref_payload(r) as usize];
                for (c, kc) in k.iter_mut().enumerate() {
                    if c & crossing == sub {
                        let v = corner(c);
                        // `i < 512`: three bits per axis.
                        let i = (v[0] & 7) | (v[1] & 7) << 3 | (v[2] & 7) << 6;
                        *kc = f32::from(b[(i & 511) as usize]) * self.step;
                    }
                }
            } else {
                let value = self.view.sample_leaf(r, min, v);
                for (c, kc) in k.iter_mut().enumerate() {
                    if c & crossing == sub {
                        *kc = value;
                    }
                }
            }
            sub = sub.wrapping_sub(crossing) & crossing;
            if sub == 0 {
                return k;
            }
        }
    }
}

/// The cell of the sample grid (its corner 0) that a walk from point `q` starts in, or `None`
/// on the clamped rim of the domain (`top` is `R − 1`). Ties go to the cell the ray `d` is
/// heading into.
#[inline(always)]
fn walk_cell(q: [f32; 4], d: &[f32; 4], top: f32) -> Option<[u32; 3]> {
    let mut i = [0u32; 3];
    for a in 0..3 {
        let g = q[a] - 0.5;
        if !(g >= 0.0 && g < top) {
            return None;
        }
        // `g` is in [0, top), `top < 2^16`: the `u16` cast is exact.
        let mut b = u32::from(fmin(g, top - 1.0) as u16);
        if d[a] < 0.0 && g == b as f32 && b > 0 {
            b -= 1;
        }
        i[a] = b;
    }
    Some(i)
}

/// The ray parameter where a ray from `p` along `d` (`inv = 1 / d`) leaves the cell whose
/// corner 0 is at grid coordinate `c` along one axis (the face at `c` or `c + 1`, voxel
/// coordinate `+ 0.5`); infinite where the ray does not move along the axis.
#[inline(always)]
fn cell_face(p: f32, d: f32, inv: f32, c: u32) -> f32 {
    if d > 0.0 {
        ((c + 1) as f32 + 0.5 - p) * inv
    } else if d < 0.0 {
        (c as f32 + 0.5 - p) * inv
    } else {
        f32::INFINITY
    }
}

/// Moves the walk's cell `i` into its neighbour across the nearest of `faces` (the ray `d`'s
/// exits from the cell per axis): the axis it moved along, or `None` where that neighbour is
/// past the grid's last cell `last`.
#[inline(always)]
fn next_cell(faces: &[f32; 3], d: &[f32; 4], i: &mut [u32; 3], last: u32) -> Option<usize> {
    let a = if faces[0] <= faces[1] && faces[0] <= faces[2] {
        0
    } else if faces[1] <= faces[2] {
        1
    } else {
        2
    };
    if d[a] > 0.0 {
        if i[a] == last {
            return None;
        }
        i[a] += 1;
    } else {
        if i[a] == 0 {
            return None;
        }
        i[a] -= 1;
    }
    Some(a)
}

/// Whether any of the eight bytes of `word` is `byte` (the zero-byte test of Mycroft's
/// `haszero`, exact for whether one exists).
#[inline(always)]
fn has_byte(word: u64, byte: u8) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let y = word ^ (ONES * u64::from(byte));
    y.wrapping_sub(ONES) & !y & (ONES << 7) != 0
}

/// The corner exit of a cell with decoded corners `k` (`x + 2y + 4z` order) at a point `p` on
/// a ray: how far the ray runs from `p` inside one of the corners' certified free balls
/// `B(c_i, ρ_i)`, `ρ_i = k_i − e` (`e` the [`bound_error`]), the farthest exit of a ball holding
/// `p`: `max_i (δ_i + sqrt(ρ_i² − |p − c_i|² + δ_i²))`, `δ_i = (c_i − p)·d`, over the corners
/// with `|p − c_i|² ≤ ρ_i²` and `ρ_i > 0` (`−∞` if none). `sq[a]` holds the squared offsets of
/// `p` from the cell's lower and upper face along axis `a`, `dots[a]` the offsets `c − p` to
/// them times the direction's component. A ball is convex and holds `p`, so the segment to its
/// exit lies in it; the exit is never before the ball's boundary seen from `p`, so the step is
/// at least the Lipschitz bound `max_i (ρ_i − |p − c_i|)` in every direction, and along a
/// surface (a ray grazing a face, a corner ahead of the point) up to twice it and more.
/// Rounding: `e` holds a margin of `10⁻⁴` voxel, and shrinking a ball by it moves every exit
/// back by at least as much, far more than the few ulps of these operations.
#[inline(always)]
fn corner_exit(k: [f32; 8], sq: [[f32; 2]; 3], dots: [[f32; 2]; 3], qerr: f32) -> f32 {
    // Eight lanes (one vector of the x86-64-v3 build), reduced pairwise.
    let s: [f32; 8] = std::array::from_fn(|c| {
        let (x, y, z) = (c & 1, (c >> 1) & 1, c >> 2);
        ball_exit(
            k[c] - qerr,
            sq[0][x] + sq[1][y] + sq[2][z],
            dots[0][x] + dots[1][y] + dots[2][z],
        )
    });
    let s4: [f32; 4] = std::array::from_fn(|c| fmax(s[c], s[c + 4]));
    fmax(fmax(s4[0], s4[2]), fmax(s4[1], s4[3]))
}

/// The exit of a ray from a ball of radius `rho` holding its point (`−∞` where it does not
/// hold it, or has no radius), the point `d2` (squared) from the centre, the centre `dot` ahead
/// along the ray: [`corner_exit`]'s term per corner, of one corner or of a vector of lanes (the
/// same operations per lane).
#[inline(always)]
fn ball_exit<T: Exit>(rho: T, d2: T, dot: T) -> T {
    let rr = rho * rho;
    let disc = (rr - d2) + dot * dot;
    (dot + disc.sqrt()).where_inside(rr, d2, rho)
}

/// What [`ball_exit`] takes besides [`Arith`].
trait Exit: Arith {
    fn sqrt(self) -> Self;
    /// `self` where `rr ≥ d2` and `rho > 0`, else `−∞`.
    fn where_inside(self, rr: Self, d2: Self, rho: Self) -> Self;
}

impl Exit for f32 {
    #[inline(always)]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }

    #[inline(always)]
    fn where_inside(self, rr: f32, d2: f32, rho: f32) -> f32 {
        if rr >= d2 && rho > 0.0 {
            self
        } else {
            f32::NEG_INFINITY
        }
    }
}

impl Exit for F32x8 {
    #[inline(always)]
    fn sqrt(self) -> F32x8 {
        F32x8::sqrt(self)
    }

    #[inline(always)]
    fn where_inside(self, rr: F32x8, d2: F32x8, rho: F32x8) -> F32x8 {
        let inside = rr.ge(d2).and(rho.gt(F32x8::splat(0.0)));
        F32x8::splat(f32::NEG_INFINITY).select(inside, self)
    }
}

/// The arithmetic [`trilinear`] and [`cubic_along`] take: one `f32`, or a vector of lanes
/// (the same IEEE operations per lane, so the same bits).
trait Arith: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {}

impl<T: Copy + Add<Output = T> + Sub<Output = T> + Mul<Output = T>> Arith for T {}

/// Trilinear interpolation of corners in `x + 2y + 4z` order at fractions `f`.
#[inline(always)]
fn trilinear<T: Arith>(c: [T; 8], f: [T; 3]) -> T {
    let lerp = |a: T, b: T, t: T| a + (b - a) * t;
    let x00 = lerp(c[0], c[1], f[0]);
    let x10 = lerp(c[2], c[3], f[0]);
    let x01 = lerp(c[4], c[5], f[0]);
    let x11 = lerp(c[6], c[7], f[0]);
    lerp(lerp(x00, x10, f[1]), lerp(x01, x11, f[1]), f[2])
}

/// The trilinear interpolant of corners `k` (`x + 2y + 4z` order) along the line
/// `f + s·slope` (cell fractions), as cubic coefficients `[c0, c1, c2, c3]` in `s`.
#[inline(always)]
fn cubic_along<T: Arith>(k: [T; 8], f: [T; 3], slope: [T; 3]) -> [T; 4] {
    // I(x, y, z) = a0 + a1 x + a2 y + a3 z + a4 xy + a5 yz + a6 xz + a7 xyz.
    let a1 = k[1] - k[0];
    let a2 = k[2] - k[0];
    let a3 = k[4] - k[0];
    let a4 = k[3] - k[2] - k[1] + k[0];
    let a5 = k[6] - k[4] - k[2] + k[0];
    let a6 = k[5] - k[4] - k[1] + k[0];
    let a7 = k[7] - k[6] - k[5] - k[3] + k[4] + k[2] + k[1] - k[0];
    let [ox, oy, oz] = f;
    let [dx, dy, dz] = slope;
    let c0 = trilinear(k, f);
    let c1 = a1 * dx
        + a2 * dy
        + a3 * dz
        + a4 * (ox * dy + oy * dx)
        + a5 * (oy * dz + oz * dy)
        + a6 * (ox * dz + oz * dx)
        + a7 * (ox * oy * dz + ox * oz * dy + oy * oz * dx);
    let c2 = a4 * dx * dy
        + a5 * dy * dz
        + a6 * dx * dz
        + a7 * (ox * dy * dz + oy * dx * dz + oz * dx * dy);
    let c3 = a7 * dx * dy * dz;
    [c0, c1, c2, c3]
}

/// The cubic `c` at `s`, as `(c0 + c1 s) + s² (c2 + c3 s)` (Estrin's scheme: four dependent
/// operations instead of Horner's six, which matters where a search waits on each value).
#[inline(always)]
fn cubic<T: Arith>(c: [T; 4], s: T) -> T {
    let s2 = s * s;
    (c[0] + c[1] * s) + s2 * (c[2] + c[3] * s)
}

/// The first `s ∈ [0, s_end]` where the cubic `c` is `≤ 0`, if any: the cubic is monotone
/// between the roots of its derivative, so it is checked at those and at `s_end`, and the first
/// piece that reaches zero is searched by [`ROOT_ROUNDS`] rounds of [`ROOT_LANES`] points each.
fn first_root(c: [f32; 4], s_end: f32) -> Option<f32> {
    if c[0] <= 0.0 {
        return Some(0.0);
    }
    match shape(c, s_end) {
        Shape::Positive => None,
        // One monotone piece, the whole range: what the search would take, without placing
        // the derivative's roots (a square root and divisions in the chain of every hit).
        Shape::Decreasing => {
            (s_end > 0.0 && cubic(c, s_end) <= 0.0).then(|| bracket_root(c, 0.0, s_end))
        }
        Shape::Unknown => search_root(c, s_end),
    }
}

/// [`first_root`] of a cubic positive at 0, found by placing the derivative's roots.
#[inline(always)]
fn search_root(c: [f32; 4], s_end: f32) -> Option<f32> {
    // Roots of 3 c3 s² + 2 c2 s + c1 (the numerically stable pair of quadratic formulas), both
    // cases computed and one chosen, without branches (which case holds, and whether the roots
    // are real, depend on the data): a negative discriminant gives NaN roots through its square
    // root, and a `m = 0` a NaN second root.
    let (qa, qb, qc) = (3.0 * c[3], 2.0 * c[2], c[1]);
    let linear = if qb != 0.0 { -qc / qb } else { f32::NAN };
    let disc = qb * qb - 4.0 * qa * qc;
    let sq = disc.sqrt();
    let m = -0.5 * (qb + if qb >= 0.0 { sq } else { -sq });
    let quadratic = [m / qa, if m != 0.0 { qc / m } else { f32::NAN }];
    let mut split = if qa == 0.0 {
        [linear, f32::NAN]
    } else {
        quadratic
    };
    if split[1] < split[0] {
        split.swap(0, 1);
    }
    // The pieces end at the splits inside (0, s_end] (NaN and out-of-range splits drop out:
    // comparisons with NaN are false) and at `s_end`; those ends are in increasing order. The
    // first end where the cubic is `≤ 0` closes the piece holding the first root, which starts
    // at the last end before it (or 0). Chosen by masks, not branches: which piece it is
    // depends on the data.
    let ends = [split[0], split[1], s_end];
    let values = ends.map(|e| cubic(c, e));
    let inside = ends.map(|e| e > 0.0 && e <= s_end);
    let reached = (0..3).fold(0u32, |m, k| {
        m | u32::from(inside[k] && values[k] <= 0.0) << k
    });
    if reached == 0 {
        return None;
    }
    let piece = reached.trailing_zeros() as usize;
    let before = |k: usize| if inside[k] { ends[k] } else { 0.0 };
    let starts = [0.0, before(0), fmax(before(0), before(1))];
    Some(bracket_root(c, starts[piece], ends[piece]))
}

/// What the Bernstein coefficients of a cubic on a range tell for sure (see [`shape`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// Positive over the whole range: no root.
    Positive,
    /// Decreasing over the whole range: the derivative has no root in it.
    Decreasing,
    /// Neither for sure.
    Unknown,
}

/// The [`Shape`] of the cubic `c` over `[0, s_end]`, from the Bernstein coefficients of the
/// cubic and of its derivative on that range (the convex hull of a polynomial's Bernstein
/// coefficients holds its graph): positive where every coefficient of the cubic exceeds
/// [`HULL_MARGIN`] times the sum of the magnitudes of the power coefficients, decreasing where
/// every coefficient of the derivative is below minus that. The margin dwarfs the rounding of
/// these few operations, of the cubic's evaluation and of the placing of the derivative's roots
/// (backward stable formulas), so where the cubic is positive every value [`first_root`] would
/// compute is positive too, and where it decreases the derivative's roots it would place lie
/// outside the range: either way it returns what the full search would, after a short chain of
/// operations (most cells a ray walks near a surface have no root on it; most that have one
/// hold one monotone piece). NaN and infinite coefficients give `Unknown`.
#[inline(always)]
fn shape(c: [f32; 4], s_end: f32) -> Shape {
    let s2 = s_end * s_end;
    let (a1, a2, a3) = (c[1] * s_end, c[2] * s2, c[3] * (s2 * s_end));
    let margin = HULL_MARGIN * ((c[0].abs() + a1.abs()) + (a2.abs() + a3.abs()));
    let third = 1.0 / 3.0;
    let b1 = c[0] + a1 * third;
    let b2 = c[0] + (a1 + a1 + a2) * third;
    let b3 = (c[0] + a1) + (a2 + a3);
    if b1 > margin && b2 > margin && b3 > margin {
        return Shape::Positive;
    }
    // The derivative in the range's unit, `a1 + 2 a2 u + 3 a3 u²`: Bernstein coefficients
    // `a1`, `a1 + a2`, `a1 + 2 a2 + 3 a3`.
    let d1 = a1 + a2;
    let d2 = d1 + (a2 + 3.0 * a3);
    if a1 < -margin && d1 < -margin && d2 < -margin {
        return Shape::Decreasing;
    }
    Shape::Unknown
}

/// [`shape`] of eight cubics at once (lane `l` of each coefficient and of `s_end`), with the
/// same operations per lane: the lanes where it is [`Shape::Positive`], and those where it is
/// [`Shape::Decreasing`] or positive (a lane in neither is [`Shape::Unknown`]).
#[inline(always)]
fn shape_lanes(c: [F32x8; 4], s_end: F32x8) -> (Mask8, Mask8) {
    let zero = F32x8::splat(0.0);
    // `|x|` per lane: `fmax(x, 0 − x)` (both zeros give `+0`).
    let abs = |x: F32x8| x.max(zero - x);
    let s2 = s_end * s_end;
    let (a1, a2, a3) = (c[1] * s_end, c[2] * s2, c[3] * (s2 * s_end));
    let margin = F32x8::splat(HULL_MARGIN) * ((abs(c[0]) + abs(a1)) + (abs(a2) + abs(a3)));
    let third = F32x8::splat(1.0 / 3.0);
    let b1 = c[0] + a1 * third;
    let b2 = c[0] + (a1 + a1 + a2) * third;
    let b3 = (c[0] + a1) + (a2 + a3);
    let positive = b1.gt(margin).and(b2.gt(margin)).and(b3.gt(margin));
    let d1 = a1 + a2;
    let d2 = d1 + (a2 + F32x8::splat(3.0) * a3);
    let below = zero - margin;
    let decreasing = a1.lt(below).and(d1.lt(below)).and(d2.lt(below));
    (positive, decreasing.or(positive))
}

/// The relative margin of [`shape`]: some 2000 times the rounding error (a few units
/// of `2^-24`) of the cubic's evaluation and of the Bernstein coefficients, and still small
/// beside the values of a cubic that stays clear of zero.
const HULL_MARGIN: f32 = 1e-4;

/// The upper end of a bracket of the root of the cubic `c` in `[lo, hi]`, where `c` is monotone
/// with `c(lo) > 0` and `c(hi) ≤ 0`, narrowed [`ROOT_LANES`]-fold per round for [`ROOT_ROUNDS`]
/// rounds. Each round evaluates the cubic at the bracket's `ROOT_LANES − 1` interior division
/// points at once (independent values: vector lanes) and keeps the division where it crosses
/// zero: the piece is monotone, so the values are positive up to the crossing and `≤ 0` from
/// there, and the number of positive values names the division (a compare, a mask and a
/// population count): the rounds wait on no data-dependent branch. Where rounding makes values
/// within rounding of zero disagree in sign with the monotone order, the count still lands
/// among them, so the kept bracket stays within rounding of the crossing.
#[inline(always)]
fn bracket_root(c: [f32; 4], mut lo: f32, mut hi: f32) -> f32 {
    const N: usize = ROOT_LANES;
    // `(j + 1) / N`, exact.
    const FRACTION: [f32; N] = {
        let mut f = [0.0f32; N];
        let mut j = 0;
        while j < N {
            f[j] = (j + 1) as f32 / N as f32;
            j += 1;
        }
        f
    };
    for _ in 0..ROOT_ROUNDS {
        let w = hi - lo;
        // The upper ends of the `N` divisions; the last is the bracket's own.
        let mut at = FRACTION.map(|f| lo + w * f);
        at[N - 1] = hi;
        let v = at.map(|s| cubic(c, s));
        // Divisions whose upper end is still positive: the crossing is in division `j`.
        let j = v[..N - 1].iter().fold(0u32, |n, &x| n + u32::from(x > 0.0)) as usize;
        let below = at[j.wrapping_sub(1) & (N - 1)];
        lo = if j == 0 { lo } else { below };
        hi = at[j & (N - 1)];
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cubic at `s` in `f64`.
    fn cubic64(c: [f32; 4], s: f64) -> f64 {
        let c = c.map(f64::from);
        ((c[3] * s + c[2]) * s + c[1]) * s + c[0]
    }

    /// The first root of `c` in `[0, s_end]` in `f64`: a scan at 1/4096 of the range for the
    /// first value `≤ 0`, then bisection of that step. `None` when every scanned value is `> 0`.
    fn first_root64(c: [f32; 4], s_end: f64) -> Option<f64> {
        const SCAN: usize = 4096;
        let mut lo = 0.0;
        for i in 1..=SCAN {
            let hi = s_end * i as f64 / SCAN as f64;
            if cubic64(c, hi) <= 0.0 {
                let (mut a, mut b) = (lo, hi);
                for _ in 0..60 {
                    let m = 0.5 * (a + b);
                    if cubic64(c, m) <= 0.0 {
                        b = m;
                    } else {
                        a = m;
                    }
                }
                return Some(b);
            }
            lo = hi;
        }
        None
    }

    /// The roots found for the cubics of random cells (trilinear corners in ±2 voxels, a random
    /// point and direction, the cell's exit) lie at or just past the exact first root: at most a
    /// 1/1024 of the range past it (the documented bound: a piece is never longer than the range),
    /// and at most rounding before it. A cubic that only touches zero may go either way.
    #[test]
    fn first_root_is_within_its_bound_of_the_exact_root() {
        let mut rand = crate::track::geometry::test_unit(0x9e37_79b9);
        let (mut roots, mut misses) = (0, 0);
        for _ in 0..20_000 {
            let k: [f32; 8] = std::array::from_fn(|_| 4.0 * rand() - 2.0);
            let f = [rand(), rand(), rand()];
            let Some(d) = unit([2.0 * rand() - 1.0, 2.0 * rand() - 1.0, 2.0 * rand() - 1.0]) else {
                continue;
            };
            let s_end = (0..3)
                .map(|a| {
                    let to = if d[a] > 0.0 { 1.0 - f[a] } else { -f[a] };
                    to / d[a]
                })
                .fold(f32::INFINITY, f32::min);
            let c = cubic_along(k, f, d);
            let scale = c.iter().map(|v| f64::from(v.abs())).sum::<f64>();
            let got = first_root(c, s_end);
            let want = first_root64(c, f64::from(s_end));
            match (got, want) {
                (Some(g), Some(w)) => {
                    roots += 1;
                    let g = f64::from(g);
                    // How far rounding of the values (`~1e-6` of their scale) moves a root.
                    let slope = (cubic64(c, w + 1e-3) - cubic64(c, w - 1e-3)).abs() / 2e-3;
                    let slack = 1e-5 * scale / slope.max(1e-9) + 1e-6;
                    let bound = f64::from(s_end) / 1024.0;
                    assert!(
                        g >= w - slack && g <= w + bound + slack,
                        "cubic {c:?} on [0, {s_end}]: root {g}, exact {w} (bound {bound}, \
                         slack {slack})"
                    );
                }
                (None, None) => misses += 1,
                // Only a cubic that comes within rounding of zero may disagree.
                (Some(g), None) => {
                    let v = cubic64(c, f64::from(g));
                    assert!(v <= 1e-5 * scale, "cubic {c:?}: root {g} where it is {v}");
                }
                (None, Some(w)) => {
                    let min = (0..=4096)
                        .map(|i| cubic64(c, f64::from(s_end) * i as f64 / 4096.0))
                        .fold(f64::INFINITY, f64::min);
                    assert!(
                        min >= -1e-5 * scale,
                        "cubic {c:?} on [0, {s_end}]: no root, exact {w} (min {min})"
                    );
                }
            }
        }
        // Both cases are exercised.
        assert!(
            roots > 1000 && misses > 1000,
            "{roots} roots, {misses} misses"
        );
    }

    /// Where `shape` lets `first_root` skip the search, it returns what the search finds, bit
    /// for bit: no root where the cubic is positive, the same root where it decreases. Over
    /// random cubics, cubics lowered until their minimum on the range lies within 1e-9 to 1e-2
    /// of their scale above zero (or below it), and cubics whose slope at an end of the range
    /// is as close to zero.
    #[test]
    fn a_cubic_shape_skips_only_what_the_search_would_find() {
        let mut rand = crate::track::geometry::test_unit(0x85eb_ca6b);
        let mut seen = [0usize; 3];
        let mut batch = Vec::with_capacity(8);
        // Cubics `shape` cannot place, and an empty range, beside a plain one.
        assert_shape_lanes(&[
            ([f32::NAN, 1.0, 0.0, 0.0], 1.0),
            ([1.0, f32::INFINITY, 0.0, 0.0], 1.0),
            ([1.0, -1.0, 0.0, 0.0], 0.0),
            ([-0.0, 0.0, -0.0, 0.0], 1.0),
            ([1.0, -3.0, 0.0, 0.0], f32::NAN),
            ([1.0, -3.0, 0.5, 0.1], 0.25),
            ([1.0, -3.0, 0.5, 0.1], 1.0),
            ([2.0, 1.0, 0.5, 0.1], 1.0),
        ]);
        for n in 0..300_000 {
            let mut c: [f32; 4] = std::array::from_fn(|_| 8.0 * rand() - 4.0);
            let s_end = 2.0 * rand();
            let scale = c.iter().map(|v| f64::from(v.abs())).sum::<f64>();
            let gap = scale * 10f64.powf(-9.0 + 7.0 * f64::from(rand()));
            let sign = if n % 5 < 2 { -1.0 } else { 1.0 };
            match n % 3 {
                // The minimum on the range just above (or below) zero.
                1 => {
                    let min = (0..=256)
                        .map(|i| cubic64(c, f64::from(s_end) * i as f64 / 256.0))
                        .fold(f64::INFINITY, f64::min);
                    c[0] = (f64::from(c[0]) - min + sign * gap) as f32;
                }
                // The slope at 0 or at `s_end` just below (or above) zero.
                2 => {
                    let at = if n % 2 == 0 { 0.0 } else { f64::from(s_end) };
                    let rest = 2.0 * f64::from(c[2]) * at + 3.0 * f64::from(c[3]) * at * at;
                    c[1] = (-rest - sign * gap) as f32;
                }
                _ => {}
            }
            batch.push((c, s_end));
            if batch.len() == 8 {
                assert_shape_lanes(&batch);
                batch.clear();
            }
            if c[0] <= 0.0 {
                continue;
            }
            let got = first_root(c, s_end);
            let want = search_root(c, s_end);
            let kind = shape(c, s_end);
            seen[kind as usize] += 1;
            assert_eq!(
                got.map(f32::to_bits),
                want.map(f32::to_bits),
                "cubic {c:?} on [0, {s_end}], {kind:?}: {got:?}, the search {want:?}"
            );
        }
        // Every shape is exercised.
        assert!(seen.iter().all(|&k| k > 10_000), "{seen:?}");
    }

    /// `shape_lanes` of eight cubics gives `shape` of each.
    fn assert_shape_lanes(batch: &[([f32; 4], f32)]) {
        let c: [F32x8; 4] =
            std::array::from_fn(|i| F32x8::load(&std::array::from_fn(|l| batch[l].0[i])));
        let s_end = F32x8::load(&std::array::from_fn(|l| batch[l].1));
        let (positive, decreasing) = shape_lanes(c, s_end);
        for (l, &(c, s_end)) in batch.iter().enumerate() {
            let lanes = match ((positive.bits() >> l) & 1, (decreasing.bits() >> l) & 1) {
                (1, _) => Shape::Positive,
                (0, 1) => Shape::Decreasing,
                _ => Shape::Unknown,
            };
            assert_eq!(lanes, shape(c, s_end), "cubic {c:?} on [0, {s_end}]");
        }
    }

    /// A uniform jump lands nearer its box than the box's bound: past the widened box's face
    /// by at most the nudge along the unit direction, for every bound a reference can hold
    /// (0 widens nothing), with room for the rounding of the exit.
    #[test]
    fn widened_boxes_stay_within_their_bound() {
        use crate::scene::dag::{make_ref, PAYLOAD_MAX};
        assert_eq!(uniform_bound(make_ref(KIND_OUTSIDE, 0)) * BOX_REACH, 0.0);
        for units in (1..=PAYLOAD_MAX)
            .step_by(9973)
            .chain([1, 2, 3, PAYLOAD_MAX])
        {
            let bound = uniform_bound(make_ref(KIND_OUTSIDE, units));
            let reach = f64::from(bound * BOX_REACH);
            let farthest = 3f64.sqrt() * reach + f64::from(NUDGE_VOX);
            let room = f64::from(bound) - farthest;
            assert!(
                room > 1e-3 * f64::from(bound).max(1.0),
                "bound {bound}: {farthest}"
            );
        }
    }

    /// The corner exit is certified and never shorter than the Lipschitz bound: for codes of
    /// every sign and truncation, points inside the cell and past a clamped brick edge
    /// (offsets in [−0.5, 1.5]) and directions of every kind, the segment to the exit lies in
    /// a corner's ball that holds the point (in `f64`, within a tenth of the rounding margin of
    /// its radius), the exit is at least `max_i (ρ_i − |p − c_i|)`, it is `−∞` only where no
    /// ball holds the point, and the vector form gives the one-corner form's bits per lane.
    #[test]
    fn corner_exit_stays_in_a_certified_ball() {
        let mut rand = crate::track::geometry::test_unit(0x5eed_0127);
        let mut longer = 0;
        for i in 0..200_000 {
            let step = (2.0 + 14.0 * rand()) / f32::from(CODE_MAX);
            let qerr = 0.5 * step + 1e-4;
            let k: [f32; 8] = std::array::from_fn(|_| {
                let code = if i % 3 == 0 {
                    CODE_MAX
                } else {
                    ((2.0 * rand() - 1.0) * f32::from(CODE_MAX)) as i8
                };
                f32::from(code) * step
            });
            let u: [f32; 3] = std::array::from_fn(|_| 2.0 * rand() - 0.5);
            // Points on cell faces and corners as well.
            let u = if i % 4 == 0 { u.map(|x| x.round()) } else { u };
            let mut d: [f32; 3] = std::array::from_fn(|_| 2.0 * rand() - 1.0);
            if i % 5 == 0 {
                d[i % 3] = 0.0;
            }
            let Some(d) = unit(d) else { continue };
            let w = u.map(|u| 1.0 - u);
            let sq = std::array::from_fn(|a| [u[a] * u[a], w[a] * w[a]]);
            let dots = std::array::from_fn(|a| [(0.0 - u[a]) * d[a], w[a] * d[a]]);
            let exit = corner_exit(k, sq, dots, qerr);
            // The corner offsets `c − p` and radii in `f64`.
            let corner = |c: usize| -> [f64; 3] {
                std::array::from_fn(|a| f64::from((c >> a) as u8 & 1) - f64::from(u[a]))
            };
            let rho = |c: usize| f64::from(k[c]) - f64::from(qerr);
            let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            let lipschitz = (0..8)
                .map(|c| rho(c) - norm(corner(c)))
                .fold(f64::NEG_INFINITY, f64::max);
            if exit == f32::NEG_INFINITY {
                assert!(
                    lipschitz < 1e-5,
                    "{k:?} {u:?} {d:?}: no ball, bound {lipschitz}"
                );
                continue;
            }
            let e = f64::from(exit);
            assert!(
                e >= lipschitz - 1e-5,
                "{k:?} {u:?} {d:?}: {e} < {lipschitz}"
            );
            longer += usize::from(e > lipschitz + 0.1);
            let end = |c: usize| -> [f64; 3] {
                std::array::from_fn(|a| corner(c)[a] - e * f64::from(d[a]))
            };
            let slack = 1e-5;
            assert!(
                (0..8).any(|c| rho(c) > 0.0
                    && norm(corner(c)) <= rho(c) + slack
                    && norm(end(c)) <= rho(c) + slack),
                "{k:?} {u:?} {d:?}: exit {e} leaves every ball"
            );
            // The vector form, the eight corners in lanes.
            let lanes = |f: &dyn Fn(usize) -> f32| F32x8::load(&std::array::from_fn(f));
            let pick =
                |v: &[[f32; 2]; 3], c: usize| v[0][c & 1] + v[1][(c >> 1) & 1] + v[2][c >> 2];
            let vector = ball_exit(
                lanes(&|c| k[c] - qerr),
                lanes(&|c| pick(&sq, c)),
                lanes(&|c| pick(&dots, c)),
            )
            .to_array();
            for c in 0..8 {
                let one = ball_exit(k[c] - qerr, pick(&sq, c), pick(&dots, c));
                assert_eq!(
                    vector[c].to_bits(),
                    one.to_bits(),
                    "{k:?} {u:?} {d:?} corner {c}"
                );
            }
        }
        // Most exits pass the Lipschitz bound by more than a tenth of a voxel.
        assert!(longer > 50_000, "{longer}");
    }

    /// A worker's table serves the next call on another pool whose env has the same root
    /// reference without reading the first pool's leaves: rays cast through the rooms pool,
    /// then through a forest pool (the same root) on the same thread, give `cast_one`'s bits.
    #[test]
    fn spare_tables_forget_another_pools_leaves() {
        use crate::scene::{build_preset, preset::ScenePreset};
        let launch = Launch::for_threads(Some(1)).unwrap();
        let pools = ["rooms", "forest"].map(|name| {
            let preset = ScenePreset::load(name).unwrap();
            build_preset(&preset, 5, 0, 1, Some(64), &launch).unwrap()
        });
        let roots = pools.each_ref().map(|p| p.view().envs()[0].root);
        assert_eq!(
            roots[0], roots[1],
            "the test needs pools with one root reference"
        );
        let mut rand = crate::track::geometry::test_unit(0x5a1e_7ab1);
        for pool in &pools {
            let view = pool.view();
            let e = &view.envs()[0];
            let side = e.voxel_size * 64.0;
            let n = 3000;
            let origins: Vec<[f32; 3]> = (0..n)
                .map(|_| std::array::from_fn(|a| e.origin[a] + side * rand()))
                .collect();
            let dirs: Vec<[f32; 3]> = (0..n)
                .map(|_| std::array::from_fn(|_| 2.0 * rand() - 1.0))
                .collect();
            let opts = CastOptions::new(1e3);
            let (mut dist, mut hit, mut steps) = (vec![0.0; n], vec![0; n], vec![0; n]);
            let out = RayOutputs {
                distance: &mut dist,
                hit: &mut hit,
                steps: &mut steps,
            };
            let envs = RayEnvs::Blocks { rays_per_env: n };
            cast_rays(&view, envs, &origins, &dirs, &opts, out, &launch).unwrap();
            for i in 0..n {
                let want = cast_one(&view, e, origins[i], dirs[i], &opts);
                assert_eq!(
                    (dist[i].to_bits(), hit[i], steps[i]),
                    (want.0.to_bits(), want.1, want.2),
                    "ray {i}"
                );
            }
        }
    }

    /// [`cast_rays`], which finds leaves through a [`LeafTable`], gives every ray the bits of
    /// [`cast_one`], which descends the DAG: over the three scene presets' envs at two grids,
    /// rays from each spawn and from random points, in env blocks and interleaved (every ray a
    /// new root for the table), and with the epoch about to wrap.
    #[test]
    fn leaf_table_casts_equal_the_descent() {
        use crate::scene::{build_preset, preset::ScenePreset};
        let launch = Launch::for_threads(Some(1)).unwrap();
        let mut rand = crate::track::geometry::test_unit(0x7ab1_e5ed);
        for name in ["rooms", "gates", "forest"] {
            let preset = ScenePreset::load(name).unwrap();
            for res in [32, 64] {
                let pool = build_preset(&preset, 3, 0, 3, Some(res), &launch).unwrap();
                let view = pool.view();
                let per_env = 300;
                let mut origins = Vec::new();
                let mut dirs = Vec::new();
                for e in view.envs() {
                    let side = e.voxel_size * res as f32;
                    for k in 0..per_env {
                        let o = if k % 2 == 0 {
                            e.spawn
                        } else {
                            std::array::from_fn(|a| e.origin[a] + side * rand())
                        };
                        origins.push(o);
                        dirs.push(std::array::from_fn(|_| 2.0 * rand() - 1.0));
                    }
                }
                let n = origins.len();
                let opts = CastOptions::new(1e3);
                let blocks: Vec<u32> = (0..n).map(|i| (i / per_env) as u32).collect();
                let interleaved: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
                for env_of in [&blocks, &interleaved] {
                    let (mut dist, mut hit, mut steps) = (vec![0.0; n], vec![0; n], vec![0; n]);
                    let out = RayOutputs {
                        distance: &mut dist,
                        hit: &mut hit,
                        steps: &mut steps,
                    };
                    let envs = RayEnvs::PerRay(env_of);
                    cast_rays(&view, envs, &origins, &dirs, &opts, out, &launch).unwrap();
                    let mut table = LeafTable::new(res).unwrap();
                    table.epoch = (1 << 24) - 2;
                    for i in 0..n {
                        let env = &view.envs()[env_of[i] as usize];
                        let want = cast_one(&view, env, origins[i], dirs[i], &opts);
                        let tabled =
                            cast_in(&view, env, origins[i], dirs[i], &opts, Some(&mut table));
                        let got = (dist[i], hit[i], steps[i]);
                        for g in [got, tabled] {
                            assert_eq!(
                                (g.0.to_bits(), g.1, g.2),
                                (want.0.to_bits(), want.1, want.2),
                                "{name} R = {res}, ray {i}: {g:?}, descent {want:?}"
                            );
                        }
                    }
                    assert!(
                        table.epoch < (1 << 24) - 2,
                        "no wrap: epoch {}",
                        table.epoch
                    );
                }
            }
        }
    }

    /// The four-lane floor and truncation that [`March::voxel`] and [`March::brick_step`] take
    /// agree with `floor` and the saturating casts they replaced on every float at and around
    /// each integer up to the largest grid (`R = 1024`) and on a sweep between them.
    #[test]
    fn lane_floor_and_truncation_match_floor_and_the_cast() {
        let mut xs = vec![0.0f32, -0.0, f32::MIN_POSITIVE, 0.5, 6.0, 1023.0, 65_535.0];
        for i in 0..=1100u32 {
            let x = i as f32;
            xs.extend([x, x.next_up(), x.next_down().max(0.0), x + 0.5, x + 0.999_9]);
        }
        for x in xs {
            let v = F32x4::splat(x);
            assert_eq!(
                v.floor().to_array().map(f32::to_bits),
                [x.floor().to_bits(); 4],
                "floor of {x}"
            );
            assert_eq!(v.truncate(), [i32::from(x as u16); 4], "integer of {x}");
        }
    }
}
