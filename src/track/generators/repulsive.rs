//! The repulsive-curve generator: a closed curve relaxed by a tangent-point energy inside a disc
//! with obstacle discs, after "Generating Race Tracks With Repulsive Curves" and Yu, Schumacher
//! and Crane, *Repulsive Curves*, ACM Transactions on Graphics 40(2), 2021.
//!
//! **Start.** A random star-shaped curve `r(θ) = ρ (1 + m Σₖ aₖ cos(kθ + φₖ))`, k = 2..5, sampled
//! at `n_points` equal angles, with `ρ` chosen so that it stays `soft` inside the container
//! (radius `radius_m`) and the depth `m ≤ 1` found by bisection so that its length is at most
//! 95 % of the target (shallow random modes leave it shorter; the flow then grows it). Then up
//! to `n_obstacles` obstacle discs of radius `obstacle_radius_m` are placed by bounded rejection
//! (16 tries each; an obstacle that does not fit is dropped) uniformly in the container, at
//! least `obstacle_radius + 1.25 · soft` from the curve and `2 · (obstacle_radius + half_width)`
//! from each other (too close for a track to pass between, so such neighbours act as one
//! obstacle). Placing the obstacles in the curve's free space means that no obstacle ever has
//! to be crossed, so the flow below never meets a topological trap.
//!
//! **Energy.** With vertices `xᵢ`, edge lengths `ℓᵢ`, dual lengths `wᵢ = (ℓᵢ₋₁ + ℓᵢ)/2` and
//! vertex tangents `Tᵢ = (xᵢ₊₁ − xᵢ₋₁)/|·|`, the flow descends
//!
//! ```text
//! E = λ_tp Σᵢ Σⱼ wᵢ wⱼ |Tᵢ × (xᵢ − xⱼ)|² / |xᵢ − xⱼ|⁴        tangent-point, (α, β) = (2, 4)
//!   + λ_sep Σᵢ Σⱼ wᵢ wⱼ ψ(|xᵢ − xⱼ| / d)                   short-range separation
//!   + λ_bar Σ (soft − s)²₊                                   container / obstacle barrier
//!   + λ_len Σᵢ (ℓᵢ − ℓ_rest)²                                length and spacing
//! ```
//!
//! — the discrete tangent-point energy of Yu et al. (their eq. 4, vertex-based, with the
//! tangents frozen while differentiating, which turns the near-diagonal terms into a bending
//! resistance); a penalty `ψ(ρ) = (1 − ρ²)²₊` keeping non-neighbouring points (arc gap above
//! about `0.6 · d`) at least `d = 4.8 · half_width` apart, so that hairpins keep a turn radius
//! above twice the half width; a quadratic barrier on the distance `s` of each point to the
//! container wall and of each edge to each obstacle, active within `soft = 2 · half_width`
//! (the clearance), backed by a hard projection of points (and of edges, for obstacles) out of
//! `1.5 · half_width`; and edge springs whose rest length `ℓ_rest` is raised by an integral
//! controller until the curve's length reaches the target `length_factor · 2π · radius_m`
//! (clamped to the packing bound `π (R − soft)² / d`). When the obstacles and the separation
//! leave too little room the curve stops short of the target (about 85 % of it at the default
//! preset). The springs also keep the points evenly spaced.
//!
//! **Discretisation of the flow.** All lengths are measured in target edge lengths `L / n`. A
//! step computes the gradient above, smooths it with four passes of the `[¼ ½ ¼]` filter along
//! the curve (a cheap stand-in for the paper's Sobolev preconditioner: it removes the zig-zag
//! modes that make explicit steps on stiff terms unstable), adds a Laplacian bending
//! displacement, clamps every point's displacement to a tenth of the physical unit `d / 1.7`,
//! projects points and edges out of the hard zones, and stops after `max_iters` steps or as
//! soon as no point moved more than 3 % of a segment (about 50 steps at the default preset).
//! `run_lane` sets the flow up; the steps run in windows of eight (`window_lane`) inside the
//! pipeline's bounded loop, so on CUDA they map onto one WHILE graph node, and the loop ends
//! for the whole batch as soon as every env has converged.
//! The tangent-point and separation sums run over the pairs `j > i` once, eight lanes at a
//! time (lane `k` takes `j = i + 1 + 8c + k`, and the force on `j` is the opposite of the one on
//! `i`); each row's eight partial sums are added as `((s₀+s₁)+(s₂+s₃))+((s₄+s₅)+(s₆+s₇))`, a
//! fixed order a CUDA thread can repeat. The tangent-point weight scales with `(d / 1.7)³` in
//! segment units, and the separation with `1 / d`, so the flow behaves alike for every
//! `n_points`.
//!
//! **Output.** The closed uniform Catmull–Rom spline through the points (12 samples per segment,
//! so about 1.4 m apart at the default preset), counter-clockwise.

use bytemuck::{Pod, Zeroable};

use super::spline::{catmull_rom_closed, SAMPLES_PER_SEGMENT};
use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
use crate::geom::Vec2;
use crate::math::{sin_cos, PI, TAU};
use crate::rng::LaneRng;
use crate::track::geometry::{next_index, signed_area2};

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

/// The repulsive fields of `tg_repulsive_params` (`kernels/track/repulsive.cuh`), padded to a
/// multiple of 8 bytes.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct RepulsiveParams {
    n_points: u32,
    max_iters: u32,
    n_obstacles: u32,
    radius_m: f32,
    obstacle_radius_m: f32,
    length_factor: f32,
    half_width_m: f32,
    pad: u32,
}

/// Pair lanes of the vectorised pair loop.
const LANES: usize = 8;
/// Gradient steps per window of the pipeline's bounded loop.
const STEPS_PER_WINDOW: usize = 8;
/// `f32` scratch words of the loop state kept between windows: the spring rest length.
const STATE_WORDS: usize = 1;
/// `u32` scratch words of the loop state kept between windows: the obstacle count, the steps
/// taken.
const STATE_U32_WORDS: usize = 2;
/// Fourier modes of the initial curve (k = 2 ..= MODES + 1).
const MODES: usize = 4;
/// Relative depth `Σ aₖ` of the initial curve's modes.
const DEPTH: f32 = 0.7;
/// Length of the initial curve as a fraction of the target.
const START_LEN: f32 = 0.95;
/// Bisection steps for the initial depth.
const BISECT: usize = 12;
/// Placement tries per obstacle.
const OBSTACLE_TRIES: usize = 16;
/// Hard clearance from the wall and obstacles, in half widths.
const HARD_HW: f32 = 1.5;
/// Barrier onset distance from the wall and obstacles, in half widths.
const SOFT_HW: f32 = 2.0;
/// Separation distance `d` between non-neighbouring points, in half widths.
const SEP_HW: f32 = 4.8;
/// The physical unit is `d / SEP_UNITS` (one segment at the default preset).
const SEP_UNITS: f32 = 1.7;
/// Arc gap (in `d`) under which points are exempt from the separation penalty.
const SEP_ARC: f32 = 0.6;
/// Obstacle distance from the initial curve, in `soft` beyond the obstacle radius.
const OBSTACLE_CLEAR: f32 = 1.25;
/// Step gain: displacement per unit of (smoothed) gradient.
const STEP: f32 = 0.5;
/// Largest displacement of a point per step, in physical units.
const MAX_MOVE: f32 = 0.1;
/// Convergence: every point moved less than this, in segments.
const CONVERGED: f32 = 0.03;
/// Tangent-point weight `λ_tp` at the default scale.
const K_TP: f32 = 0.1;
/// Separation weight `λ_sep`.
const K_SEP: f32 = 2.9;
/// Barrier weight `λ_bar`.
const K_BAR: f32 = 1.0;
/// Spring weight `λ_len`.
const K_SPRING: f32 = 1.0;
/// Laplacian bending gain (a displacement per step).
const K_BEND: f32 = 0.35;
/// Integral gain of the rest-length controller.
const K_LENGTH: f32 = 0.05;
/// Largest rest length, in segments.
const MAX_REST: f32 = 1.5;
/// Passes of the `[¼ ½ ¼]` gradient filter.
const SMOOTH_PASSES: usize = 4;

/// Per-lane constants, in segment units.
struct Consts {
    /// Points.
    n: usize,
    /// Container radius.
    r: f32,
    /// Obstacle radius.
    ro: f32,
    /// Half width.
    hw: f32,
    /// Hard clearance (projection) from the wall and obstacles.
    hard: f32,
    /// Barrier onset distance from the wall and obstacles.
    soft: f32,
    /// Separation distance and its inverse square.
    dsep: f32,
    inv_dsep2: f32,
    /// Neighbours within this index gap skip the tangent-point term.
    tp_gap: usize,
    /// Neighbours within this index gap skip the separation term.
    sep_gap: usize,
    /// Tangent-point weight.
    k_tp: f32,
    /// Largest displacement of a point per step.
    max_move: f32,
}

/// The working arrays of one lane (positions, tangents, weights and forces are padded by
/// [`LANES`] far-away, zero-weight entries so that the pair loop can read whole lanes).
struct Work<'a> {
    /// Positions.
    xs: &'a mut [f32],
    ys: &'a mut [f32],
    /// Unit vertex tangents.
    txs: &'a mut [f32],
    tys: &'a mut [f32],
    /// Dual lengths, zeroed near the current row for the tangent-point term.
    ws: &'a mut [f32],
    /// Dual lengths, zeroed near the current row for the separation term.
    ms: &'a mut [f32],
    /// Forces, then smoothed displacements.
    fxs: &'a mut [f32],
    fys: &'a mut [f32],
    /// Edge lengths (edge `i` joins `i` and `i + 1`).
    len: &'a mut [f32],
    /// `2n` words: filter and bending temporaries, then the output control points.
    tmp: &'a mut [f32],
}

/// `(i − 1) mod n`.
#[inline]
fn prev(i: usize, n: usize) -> usize {
    if i == 0 {
        n - 1
    } else {
        i - 1
    }
}

/// `(i + g) mod n` and `(i − g) mod n` for `g ≤ n`.
#[inline]
fn around(i: usize, g: usize, n: usize) -> [usize; 2] {
    let up = if i + g >= n { i + g - n } else { i + g };
    let down = if i >= g { i - g } else { i + n - g };
    [up, down]
}

impl Repulsive {
    /// Length of the padded per-point arrays.
    fn padded(&self) -> usize {
        self.n_points + LANES
    }

    /// The lane constants and the target length in metres.
    fn consts(&self) -> (Consts, f32) {
        let n = self.n_points;
        let hw_m = self.half_width_m;
        let soft_m = SOFT_HW * hw_m;
        let dsep_m = SEP_HW * hw_m;
        let room_m = (self.radius_m - soft_m).max(0.0);
        let packing_m = PI * room_m * room_m / dsep_m;
        let target_m = (self.length_factor * TAU * self.radius_m).min(packing_m);
        let seg = target_m / n as f32;
        let unit = dsep_m / SEP_UNITS / seg;
        let dsep = dsep_m / seg;
        let c = Consts {
            n,
            r: self.radius_m / seg,
            ro: self.obstacle_radius_m / seg,
            hw: hw_m / seg,
            hard: HARD_HW * hw_m / seg,
            soft: soft_m / seg,
            dsep,
            inv_dsep2: 1.0 / (dsep * dsep),
            tp_gap: (unit.ceil() as usize).clamp(1, n / 2),
            sep_gap: ((SEP_ARC * dsep).ceil() as usize).clamp(1, n / 2),
            k_tp: K_TP * unit * unit * unit,
            max_move: MAX_MOVE * unit,
        };
        (c, target_m)
    }
}

impl Stage for Repulsive {
    fn name(&self) -> &str {
        "repulsive"
    }
    fn max_points(&self) -> usize {
        self.n_points * SAMPLES_PER_SEGMENT
    }
    fn scratch_len(&self) -> usize {
        // 8 padded arrays, edge lengths, a 2n temporary, obstacles, then the loop state
        // (spring rest length).
        8 * self.padded() + 3 * self.n_points + 2 * self.n_obstacles + STATE_WORDS
    }
    fn scratch_u32_len(&self) -> usize {
        STATE_U32_WORDS
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        scratch_u32: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let n = self.n_points;
        if n < 3 {
            return 0;
        }
        let np = self.padded();
        let (c, _) = self.consts();
        let (mut w, obstacles, state) = self.views(scratch);
        initial_curve(rng, &c, &mut w);
        let n_obs = place_obstacles(rng, &c, &w, obstacles);
        for i in n..np {
            w.xs[i] = 1.0e6 + i as f32;
            w.ys[i] = 1.0e6;
            w.txs[i] = 1.0;
            w.tys[i] = 0.0;
            w.ws[i] = 0.0;
            w.ms[i] = 0.0;
            w.fxs[i] = 0.0;
            w.fys[i] = 0.0;
        }
        state[0] = 1.0;
        scratch_u32[0] = n_obs as u32;
        scratch_u32[1] = 0;
        self.write_curve(&mut w, out)
    }
    fn max_windows(&self) -> u32 {
        self.max_iters.div_ceil(STEPS_PER_WINDOW) as u32
    }
    fn window_lane(
        &self,
        scratch: &mut [f32],
        scratch_u32: &mut [u32],
        out: &mut [Vec2],
    ) -> (usize, bool) {
        let n = self.n_points;
        if n < 3 {
            return (0, false);
        }
        let (c, _) = self.consts();
        let (mut w, obstacles, state) = self.views(scratch);
        let obstacles = &obstacles[..(scratch_u32[0] as usize).min(self.n_obstacles)];
        let mut rest_len = state[0];
        let mut steps = scratch_u32[1] as usize;
        let mut converged = false;
        let window_end = (steps + STEPS_PER_WINDOW).min(self.max_iters);
        while steps < window_end {
            let total = geometry(&c, &mut w);
            pair_forces(&c, &mut w);
            spring_forces(&c, &mut w, rest_len);
            barrier_forces(&c, &mut w, obstacles);
            smooth_forces(&c, &mut w);
            let moved = step(&c, &mut w, obstacles);
            rest_len =
                (rest_len * (1.0 + K_LENGTH * (1.0 - total / n as f32))).clamp(1.0, MAX_REST);
            steps += 1;
            if moved < CONVERGED {
                converged = true;
                break;
            }
        }
        state[0] = rest_len;
        scratch_u32[1] = steps as u32;
        let count = self.write_curve(&mut w, out);
        (count, !converged && steps < self.max_iters)
    }
    /// `tg_track_repulsive` (the set-up) and `tg_track_repulsive_window`; `None` when a count or
    /// a scratch length exceeds the kernels' 32-bit indices.
    fn kernel(&self) -> Option<StageKernel> {
        for len in [self.scratch_len(), self.max_points()] {
            u32::try_from(len).ok()?;
        }
        Some(StageKernel {
            name: "tg_track_repulsive",
            window: Some("tg_track_repulsive_window"),
            params: params_bytes(&RepulsiveParams {
                n_points: u32::try_from(self.n_points).ok()?,
                max_iters: u32::try_from(self.max_iters).ok()?,
                n_obstacles: u32::try_from(self.n_obstacles).ok()?,
                radius_m: self.radius_m,
                obstacle_radius_m: self.obstacle_radius_m,
                length_factor: self.length_factor,
                half_width_m: self.half_width_m,
                pad: 0,
            }),
        })
    }
}

impl Repulsive {
    /// The scratch split into the flow's arrays, the obstacle discs and the loop state.
    fn views<'a>(&self, scratch: &'a mut [f32]) -> (Work<'a>, &'a mut [Vec2], &'a mut [f32]) {
        let n = self.n_points;
        let np = self.padded();
        let (xs, rest) = scratch.split_at_mut(np);
        let (ys, rest) = rest.split_at_mut(np);
        let (txs, rest) = rest.split_at_mut(np);
        let (tys, rest) = rest.split_at_mut(np);
        let (ws, rest) = rest.split_at_mut(np);
        let (ms, rest) = rest.split_at_mut(np);
        let (fxs, rest) = rest.split_at_mut(np);
        let (fys, rest) = rest.split_at_mut(np);
        let (len, rest) = rest.split_at_mut(n);
        let (tmp, rest) = rest.split_at_mut(2 * n);
        let (obstacles, rest) = rest.split_at_mut(2 * self.n_obstacles);
        let work = Work {
            xs,
            ys,
            txs,
            tys,
            ws,
            ms,
            fxs,
            fys,
            len,
            tmp,
        };
        (
            work,
            bytemuck::cast_slice_mut(obstacles),
            &mut rest[..STATE_WORDS],
        )
    }

    /// Writes the closed Catmull–Rom spline through the current points (metres) into `out`.
    fn write_curve(&self, w: &mut Work<'_>, out: &mut [Vec2]) -> usize {
        let (_, target_m) = self.consts();
        let seg = target_m / self.n_points as f32;
        let ctrl: &mut [Vec2] = bytemuck::cast_slice_mut(&mut w.tmp[..]);
        for (i, p) in ctrl.iter_mut().enumerate() {
            *p = Vec2::new(w.xs[i] * seg, w.ys[i] * seg);
        }
        // The flow keeps the start curve's orientation; this only guards the contract.
        if signed_area2(ctrl) < 0.0 {
            ctrl.reverse();
        }
        catmull_rom_closed(ctrl, out)
    }
}

/// Writes the star-shaped start curve into `xs, ys` (uses `txs, tys, ws` as temporaries).
fn initial_curve(rng: &mut LaneRng, c: &Consts, w: &mut Work<'_>) {
    let n = c.n;
    let mut amp = [0.0f32; MODES];
    let mut phase = [0.0f32; MODES];
    let mut amp_sum = 0.0f32;
    for k in 0..MODES {
        let u = rng.unit();
        amp[k] = u * u + 0.05;
        phase[k] = TAU * rng.unit();
        amp_sum += amp[k];
    }
    for a in amp.iter_mut() {
        *a *= DEPTH / amp_sum;
    }
    for i in 0..n {
        let t = TAU * i as f32 / n as f32;
        let (s, co) = sin_cos(t);
        w.txs[i] = co;
        w.tys[i] = s;
        let mut wave = 0.0f32;
        for (k, (&a, &p)) in amp.iter().zip(phase.iter()).enumerate() {
            wave += a * sin_cos((k + 2) as f32 * t + p).1;
        }
        w.ws[i] = wave;
    }
    let want = START_LEN * n as f32;
    // A circle already longer than wanted shrinks to the wanted length instead.
    let circle = 2.0 * n as f32 * sin_cos(PI / n as f32).0;
    let r_out = (c.r - c.soft).min(want / circle).max(0.0);
    let (xs, ys) = (&mut *w.xs, &mut *w.ys);
    let place = |m: f32, xs: &mut [f32], ys: &mut [f32]| -> f32 {
        let rho = r_out / (1.0 + m * DEPTH);
        for i in 0..n {
            let rr = rho * (1.0 + m * w.ws[i]);
            xs[i] = rr * w.txs[i];
            ys[i] = rr * w.tys[i];
        }
        let mut total = 0.0f32;
        for i in 0..n {
            let j = next_index(i, n);
            let dx = xs[j] - xs[i];
            let dy = ys[j] - ys[i];
            total += (dx * dx + dy * dy).sqrt();
        }
        total
    };
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    if place(1.0, xs, ys) > want {
        for _ in 0..BISECT {
            let mid = 0.5 * (lo + hi);
            if place(mid, xs, ys) > want {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }
    place(hi, xs, ys);
}

/// Squared distance from `p` to the segment `a b`, and the segment parameter of the nearest
/// point.
#[inline]
fn segment_dist2(p: Vec2, a: Vec2, b: Vec2) -> (f32, f32) {
    let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
    let e2 = ex * ex + ey * ey;
    let t = if e2 > 0.0 {
        (((p[0] - a[0]) * ex + (p[1] - a[1]) * ey) / e2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let qx = a[0] + t * ex - p[0];
    let qy = a[1] + t * ey - p[1];
    (qx * qx + qy * qy, t)
}

/// Places up to `obstacles.len()` obstacle centres by bounded rejection; returns how many.
fn place_obstacles(rng: &mut LaneRng, c: &Consts, w: &Work<'_>, obstacles: &mut [Vec2]) -> usize {
    let n = c.n;
    let from_curve = c.ro + OBSTACLE_CLEAR * c.soft;
    let apart = 2.0 * (c.ro + c.hw);
    let mut placed = 0;
    for _ in 0..obstacles.len() {
        for _ in 0..OBSTACLE_TRIES {
            let rad = (c.r - c.ro).max(0.0) * rng.unit().sqrt();
            let (s, co) = sin_cos(TAU * rng.unit());
            let p = [rad * co, rad * s];
            let clear_of_others = obstacles[..placed].iter().all(|q| {
                let (dx, dy) = (p[0] - q[0], p[1] - q[1]);
                dx * dx + dy * dy >= apart * apart
            });
            let clear_of_curve = (0..n).all(|i| {
                let j = next_index(i, n);
                let a = [w.xs[i], w.ys[i]];
                let b = [w.xs[j], w.ys[j]];
                segment_dist2(p.into(), a.into(), b.into()).0 >= from_curve * from_curve
            });
            if clear_of_others && clear_of_curve {
                obstacles[placed] = p.into();
                placed += 1;
                break;
            }
        }
    }
    placed
}

/// Edge lengths, vertex tangents, dual lengths; clears the forces. Returns the curve length.
fn geometry(c: &Consts, w: &mut Work<'_>) -> f32 {
    let n = c.n;
    let mut total = 0.0f32;
    for i in 0..n {
        let j = next_index(i, n);
        let dx = w.xs[j] - w.xs[i];
        let dy = w.ys[j] - w.ys[i];
        let l = (dx * dx + dy * dy).sqrt();
        w.len[i] = l;
        total += l;
    }
    for i in 0..n {
        let (a, b) = (prev(i, n), next_index(i, n));
        let tx = w.xs[b] - w.xs[a];
        let ty = w.ys[b] - w.ys[a];
        let l = (tx * tx + ty * ty).sqrt();
        let (tx, ty) = if l > 0.0 {
            (tx / l, ty / l)
        } else {
            (1.0, 0.0)
        };
        w.txs[i] = tx;
        w.tys[i] = ty;
        w.ws[i] = 0.5 * (w.len[a] + w.len[i]);
        w.ms[i] = w.ws[i];
        w.fxs[i] = 0.0;
        w.fys[i] = 0.0;
    }
    total
}

/// Tangent-point and separation forces over the pairs `j > i` (see the module doc for the lane
/// order). Neighbours are exempted by zeroing their weights for the row and restoring them.
fn pair_forces(c: &Consts, w: &mut Work<'_>) {
    let n = c.n;
    let k_sep = K_SEP / c.dsep;
    for i in 0..n {
        let (xi, yi, txi, tyi, wi) = (w.xs[i], w.ys[i], w.txs[i], w.tys[i], w.ws[i]);
        for g in 1..=c.tp_gap {
            for j in around(i, g, n) {
                w.ws[j] = 0.0;
            }
        }
        for g in 1..=c.sep_gap {
            for j in around(i, g, n) {
                w.ms[j] = 0.0;
            }
        }
        let mut ax = [0.0f32; LANES];
        let mut ay = [0.0f32; LANES];
        let mut start = i + 1;
        while start < n {
            let lanes = start..start + LANES;
            let xj: &[f32; LANES] = w.xs[lanes.clone()].try_into().unwrap();
            let yj: &[f32; LANES] = w.ys[lanes.clone()].try_into().unwrap();
            let txj: &[f32; LANES] = w.txs[lanes.clone()].try_into().unwrap();
            let tyj: &[f32; LANES] = w.tys[lanes.clone()].try_into().unwrap();
            let wj: &[f32; LANES] = w.ws[lanes.clone()].try_into().unwrap();
            let mj: &[f32; LANES] = w.ms[lanes.clone()].try_into().unwrap();
            let mut px = [0.0f32; LANES];
            let mut py = [0.0f32; LANES];
            for k in 0..LANES {
                let dx = xi - xj[k];
                let dy = yi - yj[k];
                let r2 = (dx * dx + dy * dy).max(1.0e-6);
                let inv2 = 1.0 / r2;
                let inv4 = inv2 * inv2;
                // c = T × d for both tangents; ∂/∂d of c²/r⁴ is 2c T⊥/r⁴ − 4c² d/r⁶.
                let ca = txi * dy - tyi * dx;
                let cb = txj[k] * dy - tyj[k] * dx;
                let s2 = 2.0 * inv4;
                let s4 = 4.0 * inv4 * inv2 * (ca * ca + cb * cb);
                let gx = s2 * (ca * -tyi + cb * -tyj[k]) - s4 * dx;
                let gy = s2 * (ca * txi + cb * txj[k]) - s4 * dy;
                let tp = c.k_tp * wi * wj[k];
                let sep = k_sep * wi * mj[k] * (1.0 - r2 * c.inv_dsep2).max(0.0);
                px[k] = sep * dx - tp * gx;
                py[k] = sep * dy - tp * gy;
                ax[k] += px[k];
                ay[k] += py[k];
            }
            let fxj: &mut [f32; LANES] = (&mut w.fxs[lanes.clone()]).try_into().unwrap();
            for k in 0..LANES {
                fxj[k] -= px[k];
            }
            let fyj: &mut [f32; LANES] = (&mut w.fys[lanes]).try_into().unwrap();
            for k in 0..LANES {
                fyj[k] -= py[k];
            }
            start += LANES;
        }
        let gaps = c.tp_gap.max(c.sep_gap);
        for g in 1..=gaps {
            for j in around(i, g, n) {
                let dual = 0.5 * (w.len[prev(j, n)] + w.len[j]);
                w.ws[j] = dual;
                w.ms[j] = dual;
            }
        }
        w.fxs[i] += ((ax[0] + ax[1]) + (ax[2] + ax[3])) + ((ax[4] + ax[5]) + (ax[6] + ax[7]));
        w.fys[i] += ((ay[0] + ay[1]) + (ay[2] + ay[3])) + ((ay[4] + ay[5]) + (ay[6] + ay[7]));
    }
}

/// Edge springs toward `rest` (length and spacing).
fn spring_forces(c: &Consts, w: &mut Work<'_>, rest: f32) {
    let n = c.n;
    for i in 0..n {
        let j = next_index(i, n);
        let l = w.len[i].max(1.0e-6);
        let f = K_SPRING * (l - rest) / l;
        let fx = f * (w.xs[j] - w.xs[i]);
        let fy = f * (w.ys[j] - w.ys[i]);
        w.fxs[i] += fx;
        w.fys[i] += fy;
        w.fxs[j] -= fx;
        w.fys[j] -= fy;
    }
}

/// Quadratic barriers: points near the wall, edges near an obstacle.
fn barrier_forces(c: &Consts, w: &mut Work<'_>, obstacles: &[Vec2]) {
    let n = c.n;
    for i in 0..n {
        let (x, y) = (w.xs[i], w.ys[i]);
        let d = (x * x + y * y).sqrt();
        let s = c.r - d;
        if s < c.soft && d > 0.0 {
            let g = K_BAR * (c.soft - s) / d;
            w.fxs[i] -= g * x;
            w.fys[i] -= g * y;
        }
    }
    for i in 0..n {
        let j = next_index(i, n);
        let a = [w.xs[i], w.ys[i]];
        let b = [w.xs[j], w.ys[j]];
        for o in obstacles {
            let (d2, t) = segment_dist2(*o, a.into(), b.into());
            let d = d2.sqrt();
            let s = d - c.ro;
            if s < c.soft && d > 0.0 {
                // Away from the obstacle, shared between the edge's ends by the lever rule.
                let qx = a[0] + t * (b[0] - a[0]) - o[0];
                let qy = a[1] + t * (b[1] - a[1]) - o[1];
                let g = K_BAR * (c.soft - s) / d;
                w.fxs[i] += (1.0 - t) * g * qx;
                w.fys[i] += (1.0 - t) * g * qy;
                w.fxs[j] += t * g * qx;
                w.fys[j] += t * g * qy;
            }
        }
    }
}

/// [`SMOOTH_PASSES`] passes of the cyclic `[¼ ½ ¼]` filter over the forces.
fn smooth_forces(c: &Consts, w: &mut Work<'_>) {
    let n = c.n;
    for _ in 0..SMOOTH_PASSES {
        for i in 0..n {
            let (a, b) = (prev(i, n), next_index(i, n));
            w.tmp[2 * i] = 0.25 * (w.fxs[a] + w.fxs[b]) + 0.5 * w.fxs[i];
            w.tmp[2 * i + 1] = 0.25 * (w.fys[a] + w.fys[b]) + 0.5 * w.fys[i];
        }
        for i in 0..n {
            w.fxs[i] = w.tmp[2 * i];
            w.fys[i] = w.tmp[2 * i + 1];
        }
    }
}

/// Moves every point by its clamped displacement plus bending, projects it out of the hard
/// zones, and returns the largest distance a point moved.
fn step(c: &Consts, w: &mut Work<'_>, obstacles: &[Vec2]) -> f32 {
    let n = c.n;
    // Bending displacements from the positions before the step (Jacobi).
    for i in 0..n {
        let (a, b) = (prev(i, n), next_index(i, n));
        w.tmp[2 * i] = K_BEND * (0.5 * (w.xs[a] + w.xs[b]) - w.xs[i]);
        w.tmp[2 * i + 1] = K_BEND * (0.5 * (w.ys[a] + w.ys[b]) - w.ys[i]);
    }
    let wall = c.r - c.hard;
    let keep = c.ro + c.hard;
    let mut moved = 0.0f32;
    for i in 0..n {
        let mut dx = STEP * w.fxs[i] + w.tmp[2 * i];
        let mut dy = STEP * w.fys[i] + w.tmp[2 * i + 1];
        let m = (dx * dx + dy * dy).sqrt();
        if m > c.max_move {
            dx *= c.max_move / m;
            dy *= c.max_move / m;
        }
        let mut x = w.xs[i] + dx;
        let mut y = w.ys[i] + dy;
        let d = (x * x + y * y).sqrt();
        if d > wall {
            x *= wall / d;
            y *= wall / d;
        }
        for o in obstacles {
            let (ox, oy) = (x - o[0], y - o[1]);
            let d = (ox * ox + oy * oy).sqrt();
            if d < keep && d > 0.0 {
                x = o[0] + ox * (keep / d);
                y = o[1] + oy * (keep / d);
            }
        }
        let (mx, my) = (x - w.xs[i], y - w.ys[i]);
        moved = moved.max((mx * mx + my * my).sqrt());
        w.xs[i] = x;
        w.ys[i] = y;
    }
    // An edge whose middle dips into an obstacle's hard zone is shifted out as a whole.
    for i in 0..n {
        let j = next_index(i, n);
        for o in obstacles {
            let a = [w.xs[i], w.ys[i]];
            let b = [w.xs[j], w.ys[j]];
            let (d2, t) = segment_dist2(*o, a.into(), b.into());
            if d2 < keep * keep && d2 > 0.0 {
                let d = d2.sqrt();
                let qx = a[0] + t * (b[0] - a[0]) - o[0];
                let qy = a[1] + t * (b[1] - a[1]) - o[1];
                let push = (keep - d) / d;
                w.xs[i] += push * qx;
                w.ys[i] += push * qy;
                w.xs[j] += push * qx;
                w.ys[j] += push * qy;
            }
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::super::voronoi::tests::check_loop;
    use super::*;

    fn preset() -> Repulsive {
        Repulsive {
            n_points: 48,
            max_iters: 200,
            n_obstacles: 3,
            radius_m: 100.0,
            obstacle_radius_m: 15.0,
            length_factor: 1.3,
            half_width_m: 6.0,
        }
    }

    /// Runs `r` for `env` with a scratch buffer poisoned by `poison`; returns the curve and the
    /// obstacle centres in metres (unplaced obstacle slots keep the poison).
    fn run(r: &Repulsive, env: u64, poison: f32) -> (Vec<Vec2>, Vec<Vec2>) {
        let mut scratch = vec![poison; r.scratch_len()];
        let mut scratch_u32 = vec![poison.to_bits(); r.scratch_u32_len()];
        let mut out = vec![Vec2::NAN; r.max_points()];
        let mut rng = LaneRng::new(11, env, 0, crate::rng::stream::GENERATE);
        // As the pipeline runs it: set-up, then windows while the lane is active.
        let mut m = r.run_lane(&mut rng, &mut scratch, &mut scratch_u32, &mut out);
        for _ in 0..r.max_windows() {
            let (count, active) = r.window_lane(&mut scratch, &mut scratch_u32, &mut out);
            m = count;
            if !active {
                break;
            }
        }
        assert!(m <= r.max_points());
        out.truncate(m);
        let seg = r.consts().1 / r.n_points as f32;
        let at = 8 * r.padded() + 3 * r.n_points;
        let obstacles = scratch[at..at + 2 * r.n_obstacles]
            .chunks_exact(2)
            .map(|o| Vec2::new(o[0] * seg, o[1] * seg))
            .collect();
        (out, obstacles)
    }

    fn length(pts: &[Vec2]) -> f32 {
        let n = pts.len();
        (0..n)
            .map(|i| crate::track::geometry::dist(pts[i], pts[(i + 1) % n]))
            .sum()
    }

    #[test]
    fn curves_are_simple_counter_clockwise_loops() {
        let r = preset();
        for env in 0..150 {
            let (pts, _) = run(&r, env, 0.0);
            assert_eq!(pts.len(), r.max_points());
            if let Err(why) = check_loop(&pts, 2.5) {
                panic!("env {env}: {why}");
            }
        }
    }

    #[test]
    fn curves_keep_a_half_width_from_the_wall_and_obstacles() {
        for r in [
            preset(),
            Repulsive {
                n_obstacles: 12,
                obstacle_radius_m: 5.0,
                ..preset()
            },
        ] {
            let mut placed = 0;
            for env in 0..100 {
                let (pts, obstacles) = run(&r, env, f32::NAN);
                let obstacles: Vec<Vec2> =
                    obstacles.into_iter().filter(|o| o[0].is_finite()).collect();
                placed += obstacles.len();
                for p in &pts {
                    let wall = r.radius_m - (p[0] * p[0] + p[1] * p[1]).sqrt();
                    assert!(
                        wall >= r.half_width_m,
                        "env {env}: {wall:.2} m from the wall"
                    );
                    for o in &obstacles {
                        let gap = crate::track::geometry::dist(*p, *o) - r.obstacle_radius_m;
                        assert!(
                            gap >= r.half_width_m,
                            "env {env}: {gap:.2} m from an obstacle"
                        );
                    }
                }
            }
            assert!(placed >= 100, "only {placed} obstacles placed");
        }
    }

    #[test]
    fn output_is_a_pure_function_of_the_stream() {
        let r = preset();
        let bytes = |v: &[Vec2]| bytemuck::cast_slice::<Vec2, u8>(v).to_vec();
        for env in 0..10 {
            let a = run(&r, env, 0.0).0;
            assert_eq!(bytes(&a), bytes(&run(&r, env, f32::NAN).0));
            assert_eq!(bytes(&a), bytes(&run(&r, env, -1.0e30).0));
        }
        assert_ne!(run(&r, 0, 0.0).0, run(&r, 1, 0.0).0);
    }

    #[test]
    fn obstacles_keep_apart_and_clear_of_the_start_curve() {
        let r = Repulsive {
            n_obstacles: 8,
            obstacle_radius_m: 8.0,
            ..preset()
        };
        let (c, _) = r.consts();
        let n = r.n_points;
        let np = r.padded();
        let mut buf = vec![0.0f32; 5 * np + 5 * n];
        let (xs, rest) = buf.split_at_mut(np);
        let (ys, rest) = rest.split_at_mut(np);
        let (txs, rest) = rest.split_at_mut(np);
        let (tys, rest) = rest.split_at_mut(np);
        let (ws, rest) = rest.split_at_mut(np);
        let (len, tmp) = rest.split_at_mut(n);
        let (mut ms, mut fxs, mut fys) = (vec![0.0; np], vec![0.0; np], vec![0.0; np]);
        let mut w = Work {
            xs,
            ys,
            txs,
            tys,
            ws,
            ms: &mut ms,
            fxs: &mut fxs,
            fys: &mut fys,
            len,
            tmp,
        };
        let mut total = 0;
        for env in 0..50 {
            let mut rng = LaneRng::new(3, env, 0, 1);
            initial_curve(&mut rng, &c, &mut w);
            let mut obstacles = [Vec2::ZERO; 8];
            let k = place_obstacles(&mut rng, &c, &w, &mut obstacles);
            total += k;
            for (a, o) in obstacles[..k].iter().enumerate() {
                assert!((o[0] * o[0] + o[1] * o[1]).sqrt() <= c.r - c.ro + 1e-4);
                for q in &obstacles[a + 1..k] {
                    let d = crate::track::geometry::dist(*o, *q);
                    assert!(d >= 2.0 * (c.ro + c.hw) - 1e-4);
                }
                for i in 0..n {
                    let j = next_index(i, n);
                    let d2 =
                        segment_dist2(*o, Vec2::new(w.xs[i], w.ys[i]), Vec2::new(w.xs[j], w.ys[j]))
                            .0;
                    assert!(d2.sqrt() >= c.ro + OBSTACLE_CLEAR * c.soft - 1e-4);
                }
            }
        }
        assert!(total >= 50, "only {total} obstacles placed");
    }

    #[test]
    fn iterations_are_capped_and_pull_the_length_toward_the_target() {
        let target = preset().consts().1;
        let start = Repulsive {
            max_iters: 0,
            ..preset()
        };
        let one = Repulsive {
            max_iters: 1,
            ..preset()
        };
        let (mut start_len, mut end_len) = (0.0, 0.0);
        for env in 0..20 {
            let (a, _) = run(&start, env, 0.0);
            let (b, _) = run(&one, env, 0.0);
            assert_ne!(a, b, "env {env}: one step changed nothing");
            check_loop(&a, 2.5).unwrap();
            start_len += length(&a) / target / 20.0;
            end_len += length(&run(&preset(), env, 0.0).0) / target / 20.0;
        }
        // The start curve has at most 95 % of the target length (less when its modes are
        // shallow); the length controller grows it, against bending and the clearances.
        assert!(start_len < 0.97, "start {start_len}");
        assert!(
            end_len > start_len + 0.1,
            "start {start_len}, end {end_len}"
        );
        assert!((0.75..1.0).contains(&end_len), "end {end_len}");
    }

    #[test]
    fn other_parameters_give_closed_loops() {
        let cases = [
            Repulsive {
                n_points: 16,
                ..preset()
            },
            Repulsive {
                n_points: 128,
                ..preset()
            },
            Repulsive {
                length_factor: 0.5,
                ..preset()
            },
            Repulsive {
                length_factor: 3.0,
                ..preset()
            },
            Repulsive {
                n_obstacles: 12,
                obstacle_radius_m: 2.0,
                ..preset()
            },
            Repulsive {
                obstacle_radius_m: 40.0,
                ..preset()
            },
        ];
        for r in cases {
            let seg = r.consts().1 / r.n_points as f32;
            for env in 0..10 {
                let (pts, _) = run(&r, env, 0.0);
                assert_eq!(pts.len(), r.max_points());
                assert!(pts.iter().all(|p| p[0].is_finite() && p[1].is_finite()));
                assert!(crate::track::geometry::signed_area2(&pts) > 0.0);
                let longest = (0..pts.len())
                    .map(|i| crate::track::geometry::dist(pts[i], pts[(i + 1) % pts.len()]))
                    .fold(0.0f32, f32::max);
                assert!(longest <= seg, "{r:?} env {env}: step {longest}");
            }
        }
        let tiny = Repulsive {
            n_points: 2,
            ..preset()
        };
        let mut out = vec![Vec2::ZERO; tiny.max_points()];
        let mut scratch = vec![0.0; tiny.scratch_len()];
        let mut scratch_u32 = vec![0; tiny.scratch_u32_len()];
        assert_eq!(
            tiny.run_lane(
                &mut LaneRng::new(0, 0, 0, 0),
                &mut scratch,
                &mut scratch_u32,
                &mut out
            ),
            0
        );
    }

    #[test]
    fn around_wraps_both_ways() {
        assert_eq!(around(0, 1, 5), [1, 4]);
        assert_eq!(around(4, 2, 5), [1, 2]);
        assert_eq!(around(2, 2, 5), [4, 0]);
        assert_eq!((next_index(4, 5), prev(0, 5)), (0, 4));
    }
}
