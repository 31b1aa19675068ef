//! The circuit generator: a closed sequence of straights and corners, closed by construction.
//!
//! Real race circuits are long straights joined by distinct corners. This generator draws them
//! that way, as a turtle path of `legs`: leg `k` is a straight of length `L_k` at heading `ψ_k`
//! followed by a corner that turns by `θ_k` at radius `r_k`, so `ψ_{k+1} = ψ_k + θ_k`.
//!
//! **Corners.** Each of `n ∈ [min_corners, max_corners]` corner *complexes* is drawn by the
//! preset's weights from four types (angles in degrees, radii in units of the preset's minimum
//! turn radius `R`):
//!
//! | type     | turn `|θ|`  | radius `r`               | legs |
//! |----------|-------------|--------------------------|------|
//! | hairpin  | 140 – 185   | 1.05 – 1.5 `R`           | 1    |
//! | slow     | 60 – 120    | 1.2 – 3 `R`              | 1    |
//! | sweeper  | 15 – 60     | 3 `R` – `max_radius_m`   | 1    |
//! | chicane  | 20 – 50 each, opposite signs | 1.1 – 2.5 `R` | 2, joined by a straight of 0 – 1.5 `R` |
//!
//! A hairpin, slow corner or sweeper turns against the lap direction with probability
//! `reverse_fraction`. Each corner is a circular arc entered and left through clothoid
//! transitions (curvature ramping linearly from 0 to `1/r` and back), each ramp taking a fraction
//! `transition` of the corner's turn; so curvature is continuous and never exceeds `1/r`.
//!
//! **Turning.** The lap-direction turns of the single corners are rescaled by one factor so that
//! the total signed turning is exactly 2π (chicanes add none); when reversed corners leave less
//! than π of net turning, reversed corners become lap-direction ones first. Turns are capped at
//! 200°. The whole track is mirrored (every `θ` negated) with probability ½.
//!
//! **Closure.** A target length is drawn in `[min_length_m, max_length_m]`; the corners take their
//! arc length and the rest is shared among the straights by random weights `0.1 + u²` (a few long
//! straights, many short ones). With the headings fixed, the end point misses the start by
//! `g = Σ L_k·u(ψ_k) + Σ D_k` (`D_k` the corner's displacement, start to end). The
//! straights are corrected by the weighted least-norm solution of `Σ ΔL_k·u(ψ_k) = −g` with
//! weights `L_k` (relative changes, so short straights stay short); a straight driven below 0 is
//! clamped and frozen, and the solve repeats (at most 6 rounds). An attempt whose gap does not
//! close writes no points (the pipeline retries on a fresh stream). The closed path's end heading
//! equals its start heading, so the track is curvature-continuous everywhere. A track that the
//! correction left shorter than its target length is scaled up, as a whole, to that length (its
//! radii grow by the same factor, so the minimum turn radius still holds); one it stretched past
//! [`Circuit::MAX_STRETCH`]` · max_length_m` is drawn again (without that rule about 1 track in 1000 of the
//! `circuit` preset came out over 3 km, up to 8.5 km, for a 1.2–2.4 km range).
//!
//! **Integration.** Each corner is integrated from its entry heading (the exit heading of the
//! corner before it, the first entered along +x) with steps of at most 0.15 rad of turn — on
//! corners tighter than 4·R, of at most 0.6·R in length and at most 0.3 rad of turn: finer
//! steps there would be finer than the resampled points (the circuit presets resample at
//! 0.4–0.8·R), and 0.3 rad a step stays well within the `spacing / R` a point that the validity
//! check's turn-radius condition allows — each step along the heading at its midpoint. The
//! heading is quadratic in the step index on each section (ramp, arc, ramp), so the step
//! directions follow by rotation recurrences (complex products) from the rotations of a few
//! small angles (at most 0.3 rad), each from its Taylor polynomial (`small_cos_sin`), with no
//! call to [`crate::math::sin_cos`]: the first ramp from its first heading and its first turn,
//! the arc from the ramp's end heading (the last ramp direction turned on by half a step) and its
//! step turn; the ramp back is the first ramp reversed and mirrored, its directions those of the
//! first ramp's steps reflected and turned by the arc's end heading and the ramp's
//! (`integrate_corner` derives it). The exit heading is scaled to unit
//! length. IEEE operations only; the directions drift from unit length and the headings from
//! their exact values by rounding only (about 1e-6 rad a corner), far below the closure
//! tolerance. The corner's step points, relative to its start, are kept in scratch and reused,
//! moved to the corner's start, for the output, so the displacement the closure solves with is
//! the one the output walks.
//!
//! **Clearance.** A closed draw is checked before it is accepted, so that the pipeline's
//! validity check (thickness ≥ 0.98·hw at arc distance > π·hw, no crossings) rarely rejects it.
//! The check runs on a *skeleton* of the walk: each straight's two ends and every `stride`-th
//! corner step point (at most 8 pieces per corner), each corner piece padded by the most it can
//! stray from its chord, `(stride·h)²/8r` for steps of at most `h` at curvature ≤ `1/r`. Two
//! skeleton segments must stay `2·hw` plus their pads apart unless the arc distances between
//! their points all lie within π·hw (the validity check's neighbourhood) on one side — any pair
//! touching it is left out, its points being neighbours or continuing each other — or within
//! 2π·R − π·hw (a path of curvature ≤ 1/R cannot come back to within 2·hw inside that arc, since
//! its chord is at least that of a circle of radius R). The exact distance is taken only for
//! pairs whose boxes, inflated by hw and their pads, meet. Pairs of legs whose boxes are disjoint
//! are skipped whole, and so are pairs of legs of which the later ends within 2π·R − π·hw of the
//! earlier's start, or starts within that of the earlier's end the other way round the loop (no
//! segment pair of theirs is in the window). The rest are tested branch-free, eight segments at
//! a time (the searches along the arc they replace cost more time than these comparisons, by
//! their mispredicted branches: see the README's Performance › Tracks): which segments of the
//! earlier leg can pair with the later one at all (their boxes meet its box, its first and last
//! segments reach their window's bounds), then, for each of those, the later leg's segments
//! against the window and its box; only a pair passing both is measured. With final points,
//! pairs of legs along whose path the heading stays within a narrow cone are skipped too: every
//! skeleton segment from the earlier leg's start to the later's end then heads within the cone
//! (a chord heads between the headings of the steps it spans), so along the cone's bisector the
//! path between two points advances by at least `cos(W/2)` times the arc between them, `W` the
//! cone's width, and any pair in the window, more than π·hw apart along the arc, is at least
//! `cos(W/2)·π·hw` apart: skipped where that is at least `2·hw` plus twice the largest pad (the
//! earlier leg's self-pair for a corner of up to about 85° at the preset's pads; a chicane with
//! its neighbours). The verdict is that of testing every pair in the window whose boxes meet,
//! so the decisions do not depend on this order (the kernel twin filters by the leg boxes and
//! the arc, one pair of legs after another, but without the cone or the eight-lane tests).
//! A draw that does not close or does not keep its clearance is drawn again on the same stream,
//! at most 6 times in all, before the lane writes no points (and the pipeline retries on a fresh
//! stream). Scaling up to the target length only increases the distances the check measured.
//!
//! **Final points** (`sampling = "generator"`, [`FinalSpacing`]). The walk then writes the
//! track's own points, which the pipeline keeps as they are (its resample pass copies them):
//! no resampling. The density (points per metre) of a corner of radius `r` is the curvature
//! rule's, `1 / √(8·r·sagitta)` within `[1 / max_spacing_m, 1 / spacing_m]`, times the mean of
//! `√κ` over the corner relative to the arc's (the ramps' curvature rises linearly from 0, so
//! their mean of `√κ` is 2/3 of the arc's: `((1 − 2q) + 4q·2/3) / (1 + 2q)` for transition `q`);
//! a straight's is `1 / max_spacing_m`. Before the closure, with the straights' total the
//! closure starts from, the densities are blended toward their length-weighted mean `w̄` where
//! one lies outside `[w̄ / 2.2, w̄ / 0.3]` (the resampler's blend), and scaled down if the
//! expected count passes 0.9·`n_max`. Each corner is then integrated in `round(length ·
//! density)` equal steps (at least enough that an arc step turns by at most
//! [`EVEN_STEP_TURN`]), each along the exact heading at its midpoint (quadratic in the arc
//! position on the ramps, linear on the arc), turned on from the step before by
//! `small_cos_sin` of the heading's change. After the closure, the straights' pieces are at most
//! the blended `max_spacing_m` long on the scaled track, and short enough that the mean spacing
//! keeps the longest piece within 2.2 times it and every corner step above 0.3 times it (the
//! corners' steps are fixed by then); each straight is cut into `ceil(length / piece)` equal
//! pieces, and one shorter than a quarter of the expected mean joins the corner before it (its
//! start is not written: the chord from the corner's last step runs on to the straight's end).
//! A draw of more than `n_max` points is drawn again. The validity check's even-spacing
//! condition (every segment within `[0.2, 2.5]` times the mean) holds with these margins.

use bytemuck::{Pod, Zeroable};

use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
use crate::geom::Vec2;
use crate::lanes::{lanes_between, F32x8};
use crate::math::{PI, TAU};
use crate::rng::LaneRng;
use crate::track::resample::{MAX_RATIO, MIN_RATIO};

/// Largest turn of one corner after rescaling, radians (200°).
const MAX_TURN: f32 = 200.0 * (PI / 180.0);
/// Largest heading change of one integration step on a wide corner, radians.
const STEP_TURN: f32 = 0.15;
/// Largest heading change of one integration step on the tightest corners, radians.
const TIGHT_STEP_TURN: f32 = 0.3;
/// Longest integration step on a corner whose steps turn by more than [`STEP_TURN`], in units of
/// the preset's minimum turn radius `R`.
const TIGHT_STEP_LENGTH: f32 = 0.6;
/// Most integration steps of one clothoid ramp.
const MAX_RAMP_STEPS: usize = 8;
/// Most integration steps of one arc.
const MAX_ARC_STEPS: usize = 24;
/// Most integration steps of one corner.
const MAX_STEPS: usize = 2 * MAX_RAMP_STEPS + MAX_ARC_STEPS;
/// Largest heading change of one step of a corner written at its final spacing, radians.
const EVEN_STEP_TURN: f32 = 0.45;
/// Rounds of the clamped least-norm closure solve.
const CLOSURE_ROUNDS: usize = 6;
/// The `straight` of a leg whose straight is drawn from the length budget.
const SINGLE: f32 = -1.0;
/// Degrees to radians.
const DEG: f32 = PI / 180.0;
/// Most clearance-skeleton pieces of one corner.
const MAX_PIECES: usize = 8;
/// Most clearance-skeleton vertices of one leg: the straight's two ends and the corner's pieces.
const LEG_VERTICES: usize = 2 + MAX_PIECES;
/// Draws per lane before the attempt is given up (a draw that does not close or keep its
/// clearance is drawn again, on the same stream).
const DRAWS: usize = 6;
/// Most a clearance-skeleton corner piece may stray from its chord, in half widths.
const PIECE_PAD: f32 = 0.15;

/// Circuit generator parameters (see the module doc for the distributions).
#[derive(Clone, Debug)]
pub struct Circuit {
    /// Fewest corner complexes.
    pub min_corners: usize,
    /// Most corner complexes.
    pub max_corners: usize,
    /// Relative weights of hairpin, slow corner, sweeper and chicane.
    pub weights: [f32; 4],
    /// Probability that a single corner turns against the lap direction.
    pub reverse_fraction: f32,
    /// Shortest target length, metres.
    pub min_length_m: f32,
    /// Longest target length, metres.
    pub max_length_m: f32,
    /// Largest sweeper radius, metres.
    pub max_radius_m: f32,
    /// Fraction of a corner's turn taken by each clothoid ramp, in `[0, 0.5)`.
    pub transition: f32,
    /// The preset's minimum turn radius `R`, metres.
    pub min_turn_radius_m: f32,
    /// The preset's half width `hw`, metres (the construction's clearance check).
    pub half_width_m: f32,
    /// The spacing of the track's final points when the generator writes them itself
    /// (`sampling = "generator"`); `None` writes the fine integration steps for resampling.
    pub spacing: Option<FinalSpacing>,
}

/// The blend of a draw's final-point densities: `w' = scale · ((1 − λ)·w + λ·w̄)`.
#[derive(Clone, Copy, Debug)]
struct FinalDensity {
    lambda: f32,
    mean: f32,
    scale: f32,
}

impl FinalDensity {
    fn of(&self, w: f32) -> f32 {
        self.scale * ((1.0 - self.lambda) * w + self.lambda * self.mean)
    }
}

/// A corner's signed curvature `κ` on its arc and its sections: each clothoid ramp turns by
/// `ramp_turn` over `ramp_len`, the arc by `arc_turn` over `arc_len`.
#[derive(Clone, Copy, Debug)]
struct CornerShape {
    kappa: f32,
    ramp_turn: f32,
    arc_turn: f32,
    ramp_len: f32,
    arc_len: f32,
}

/// How a draw's straights are cut at the final spacing.
#[derive(Clone, Copy, Debug)]
struct StraightPieces {
    /// Pieces per metre.
    density: f32,
    /// The length below which a straight joins the corner before it (no piece).
    join: f32,
}

impl StraightPieces {
    /// The pieces of a straight `length` long: none below `join`, else `ceil(length · density)`.
    fn of(&self, length: f32) -> usize {
        if length < self.join {
            0
        } else {
            (length * self.density).ceil() as usize
        }
    }
}

/// How the circuit generator spaces the track's final points (`sampling = "generator"`): about
/// `√(8·r·sagitta_m)` apart within `[min_spacing_m, max_spacing_m]` on a corner of radius `r`,
/// in pieces of at most `max_spacing_m` on a straight, both blended toward the mean spacing, at
/// most `n_max` points (the module doc gives the rules).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FinalSpacing {
    /// The finest spacing, metres.
    pub min_spacing_m: f32,
    /// The coarsest spacing, metres.
    pub max_spacing_m: f32,
    /// The largest distance of a corner's chord from its arc, metres.
    pub sagitta_m: f32,
    /// Most points of a track.
    pub n_max: usize,
}

/// One leg in scratch: a straight, then a corner.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
struct Leg {
    /// Signed turn of the corner, radians.
    turn: f32,
    /// Corner radius, metres.
    radius: f32,
    /// Length of the straight before the corner, metres.
    straight: f32,
    /// Closure weight of the straight (0 when frozen).
    weight: f32,
    /// Corner displacement, from its start to its end.
    dx: f32,
    dy: f32,
    /// Cosine and sine of the heading of the straight.
    cos: f32,
    sin: f32,
}

/// The circuit fields of `tg_circuit_params` (`kernels/track/circuit.cuh`).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct CircuitParams {
    min_corners: u32,
    max_corners: u32,
    weights: [f32; 4],
    reverse_fraction: f32,
    min_length_m: f32,
    max_length_m: f32,
    max_radius_m: f32,
    transition: f32,
    min_turn_radius_m: f32,
    half_width_m: f32,
    /// 1 when the walk writes the final points ([`FinalSpacing`]'s fields follow), else 0.
    final_points: u32,
    min_spacing_m: f32,
    max_spacing_m: f32,
    sagitta_m: f32,
    n_max: u32,
}

/// `f32` words of one [`Leg`].
const LEG_WORDS: usize = std::mem::size_of::<Leg>() / 4;

impl Circuit {
    /// Longest track a draw may make, in units of `max_length_m`: a draw whose closure stretched
    /// its straights past it is drawn again.
    pub const MAX_STRETCH: f32 = 1.25;

    fn max_legs(&self) -> usize {
        2 * self.max_corners
    }

    /// A corner type by the weights, among the first types whose weights sum to `total`.
    fn draw_kind(&self, rng: &mut LaneRng, total: f32) -> usize {
        let pick = rng.unit() * total;
        // The running sums of the weights never fall (weights are at least 0), so the type is
        // the number of the first three sums that `pick` reaches: counted, not searched for (a
        // search's exit is a random branch).
        let mut acc = self.weights[0];
        let mut kind = usize::from(pick >= acc);
        acc += self.weights[1];
        kind += usize::from(pick >= acc);
        acc += self.weights[2];
        kind + usize::from(pick >= acc)
    }

    /// The turn (positive) and radius of a single corner of type `kind` (0 hairpin, 1 slow,
    /// 2 sweeper).
    fn draw_single(&self, rng: &mut LaneRng, kind: usize) -> (f32, f32) {
        let r_min = self.min_turn_radius_m;
        // The type's ranges by index rather than by branch (the type is random): turns in
        // degrees, radii as a range scaled by a factor (`R` for the first two types, whose ranges
        // are in units of `R`; 1, which scales exactly, for the sweeper's, in metres).
        let k = kind.min(2);
        let turn = [[140.0, 185.0], [60.0, 120.0], [15.0, 60.0]][k];
        let radius = [[1.05, 1.5], [1.2, 3.0], [3.0 * r_min, self.max_radius_m]][k];
        let scale = [r_min, r_min, 1.0][k];
        let turn = rng.range(turn[0], turn[1]) * DEG;
        (turn, scale * rng.range(radius[0], radius[1]))
    }

    /// Draws the corners into `legs`; returns how many legs were written.
    fn draw_corners(&self, rng: &mut LaneRng, legs: &mut [Leg]) -> usize {
        let r_min = self.min_turn_radius_m;
        let span = (self.max_corners - self.min_corners + 1) as u32;
        let complexes = self.min_corners + rng.below(span) as usize;
        let total_weight: f32 = self.weights.iter().sum();
        let mut n = 0;
        for _ in 0..complexes {
            let kind = self.draw_kind(rng, total_weight);
            if kind == 3 {
                let turn = rng.range(20.0, 50.0) * DEG;
                let sign = if rng.unit() < 0.5 { 1.0 } else { -1.0 };
                let between = rng.range(0.0, 1.5 * r_min);
                legs[n] = Leg {
                    turn: sign * turn,
                    radius: r_min * rng.range(1.1, 2.5),
                    straight: SINGLE,
                    ..Leg::zeroed()
                };
                legs[n + 1] = Leg {
                    turn: -sign * turn,
                    radius: r_min * rng.range(1.1, 2.5),
                    straight: between,
                    ..Leg::zeroed()
                };
                n += 2;
                continue;
            }
            let (turn, radius) = self.draw_single(rng, kind);
            // A negative straight marks a single corner (its straight is drawn later); the
            // second half of a chicane carries its own short straight.
            let forward = Leg {
                turn,
                radius,
                straight: SINGLE,
                ..Leg::zeroed()
            };
            if rng.unit() < self.reverse_fraction {
                // A counter-corner, no larger than the corner it pairs with, before or after it.
                let kind = self.draw_kind(rng, self.weights[0] + self.weights[1] + self.weights[2]);
                let (counter, radius) = self.draw_single(rng, kind);
                let reverse = Leg {
                    turn: -counter.min(turn),
                    radius,
                    straight: SINGLE,
                    ..Leg::zeroed()
                };
                let (a, b) = if rng.unit() < 0.5 {
                    (forward, reverse)
                } else {
                    (reverse, forward)
                };
                legs[n] = a;
                legs[n + 1] = b;
                n += 2;
            } else {
                legs[n] = forward;
                n += 1;
            }
        }
        n
    }

    /// Rescales the single corners' turns so that the total signed turning is 2π; false when no
    /// rescaling within [`MAX_TURN`] per corner reaches it.
    fn close_turning(legs: &mut [Leg]) -> bool {
        // The tests below are combined with `&`, not `&&`, and the sums add 0 rather than
        // branch: these branches would follow random draws.
        let is_single = |k: usize, legs: &[Leg]| {
            // A chicane's first half is followed by a leg with a nonnegative straight.
            let next = legs[(k + 1).min(legs.len() - 1)];
            let chicane_first = (k + 1 < legs.len()) & (next.straight >= 0.0);
            (legs[k].straight < 0.0) & !chicane_first
        };
        // A single corner turning the lap's way below the cap: the turns the rescaling scales.
        let is_free = |k: usize, legs: &[Leg]| {
            let t = legs[k].turn;
            is_single(k, legs) & (t > 0.0) & (t < MAX_TURN)
        };
        let sums = |legs: &[Leg]| {
            // Adding +0 leaves a sum that starts at +0 as it is.
            let (mut pos, mut neg) = (0.0f32, 0.0f32);
            for k in 0..legs.len() {
                let (single, t) = (is_single(k, legs), legs[k].turn);
                let positive = t > 0.0;
                pos += if single & positive { t } else { 0.0 };
                neg -= if single & !positive { t } else { 0.0 };
            }
            (pos, neg)
        };
        let (mut pos, mut neg) = sums(legs);
        // Too much reversed turning: reverse corners join the lap direction, first to last.
        for k in 0..legs.len() {
            if pos - neg >= PI {
                break;
            }
            if is_single(k, legs) && legs[k].turn < 0.0 {
                legs[k].turn = -legs[k].turn;
                (pos, neg) = sums(legs);
            }
        }
        if pos <= 0.0 {
            return false;
        }
        // Scale the lap-direction turns so that pos' − neg = 2π; corners that would exceed the
        // cap are pinned at it and the rest rescaled (each round pins at least one or finishes).
        let mut pinned = 0.0f32;
        let mut free = pos;
        for _ in 0..legs.len() + 1 {
            let factor = (TAU + neg - pinned) / free;
            if !(factor > 0.0 && factor.is_finite()) {
                return false;
            }
            let mut newly = false;
            for k in 0..legs.len() {
                if is_free(k, legs) & (legs[k].turn * factor > MAX_TURN) {
                    free -= legs[k].turn;
                    legs[k].turn = MAX_TURN;
                    pinned += MAX_TURN;
                    newly = true;
                }
            }
            if !newly {
                for k in 0..legs.len() {
                    let t = legs[k].turn;
                    legs[k].turn = if is_free(k, legs) { t * factor } else { t };
                }
                return true;
            }
            if free <= 0.0 {
                return false;
            }
        }
        false
    }

    /// The largest heading change of one integration step of a corner of radius `radius`:
    /// [`STEP_TURN`], or on tighter corners as much as keeps the steps within
    /// [`TIGHT_STEP_LENGTH`]` · R`, at most [`TIGHT_STEP_TURN`].
    fn step_turn(&self, radius: f32) -> f32 {
        (TIGHT_STEP_LENGTH * self.min_turn_radius_m / radius).clamp(STEP_TURN, TIGHT_STEP_TURN)
    }

    /// The arc length of `leg`'s corner: its turn at its radius, grown by the two clothoid
    /// ramps (each as long as an arc of twice its turn).
    fn corner_length(&self, leg: &Leg) -> f32 {
        leg.turn.abs() * leg.radius * (1.0 + 2.0 * self.transition)
    }

    /// The curvature and the sections of a corner that turns by `turn` at `radius`.
    fn corner_shape(&self, turn: f32, radius: f32) -> CornerShape {
        let mag = turn.abs();
        let ramp_turn = self.transition * mag;
        let arc_turn = mag - 2.0 * ramp_turn;
        CornerShape {
            kappa: if turn < 0.0 {
                -1.0 / radius
            } else {
                1.0 / radius
            },
            ramp_turn,
            arc_turn,
            ramp_len: 2.0 * ramp_turn * radius,
            arc_len: arc_turn * radius,
        }
    }

    /// Integrates one corner from the origin, entered at the heading `entry` (`(cos, sin)`):
    /// writes its step points (the end point last) into `pts` and returns `(count, end point,
    /// exit heading)`, the exit heading scaled to unit length.
    fn integrate_corner(
        &self,
        turn: f32,
        radius: f32,
        entry: [f32; 2],
        pts: &mut [Vec2],
    ) -> (usize, Vec2, [f32; 2]) {
        let CornerShape {
            kappa,
            ramp_turn,
            arc_turn,
            ramp_len,
            arc_len,
        } = self.corner_shape(turn, radius);
        let step_turn = self.step_turn(radius);
        let steps = |t: f32, cap: usize| -> usize {
            let s = (t / step_turn) as usize + 1;
            s.min(cap)
        };
        let n_ramp = if ramp_len > 0.0 {
            steps(2.0 * ramp_turn, MAX_RAMP_STEPS)
        } else {
            0
        };
        let n_arc = steps(arc_turn, MAX_ARC_STEPS);
        let mut walk = Walk {
            p: Vec2::ZERO,
            written: 0,
            pts,
        };
        // Headings (relative to the entry) at the step midpoints s_i = (i + ½)·h: on a ramp of
        // n steps from curvature 0 to κ, ψ_i = δδ·(i + ½)²/2 with δδ = κ·h²/L, so ψ_0 = δδ/8 and
        // ψ_{i+1} − ψ_i = (i + 1)·δδ; the ramp ends at heading n²·δδ/2 = ψ_{n−1} + δδ·(n/2 −
        // 1/8). On the arc, ψ = ramp end + (j + ½)·δ with δ = κ·h. Every angle given to
        // `small_cos_sin` here is at most the step turn, 0.3 rad (turns of at most 200°,
        // transitions of at most 0.45). The directions are the entry's turned by these: rotations commute.
        // The first ramp's step directions, cosines and sines apart: each word is stored and
        // read back alone (a pair stored as two words and read as one waits for both stores to
        // reach the cache instead of being forwarded from them).
        let mut dirs = RampDirs::default();
        let mut ramp_end = entry;
        if n_ramp > 0 {
            let h = ramp_len / n_ramp as f32;
            let dd = kappa * h * h / ramp_len;
            let e = small_cos_sin(dd);
            let first = rotate(entry, small_cos_sin(0.125 * dd));
            let last = walk.section(n_ramp, h, first, e, Some(e), Some(&mut dirs));
            ramp_end = rotate(last, small_cos_sin(dd * (0.5 * n_ramp as f32 - 0.125)));
        }
        let h = arc_len / n_arc as f32;
        let half = small_cos_sin(kappa * (0.5 * h));
        let first = rotate(ramp_end, half);
        let last = walk.section(n_arc, h, first, small_cos_sin(kappa * h), None, None);
        // The ramp back is the first ramp reversed and mirrored: its step i of n heads at
        // θ − ψ_{n−1−i}, θ the whole turn, so its direction is the entry's squared, turned by θ,
        // over the first ramp's step direction: `mirror` times its conjugate, with `mirror` the
        // arc's end heading (entry + θ − ramp turn) turned by the ramp's end heading (entry +
        // ramp turn). The exit heading is `mirror` turned back by the entry.
        let mirror = rotate(rotate(last, half), ramp_end);
        if n_ramp > 0 {
            walk.mirror(ramp_len / n_ramp as f32, mirror, &dirs, n_ramp);
        }
        let exit = unit(rotate(mirror, [entry[0], -entry[1]]));
        (walk.written, walk.p, exit)
    }

    /// The density (points per metre) that the curvature rule gives a corner of radius
    /// `radius`, before the blend: `1 / √(8·r·sagitta)` within the spacings' bounds.
    fn corner_density(&self, fs: &FinalSpacing, radius: f32) -> f32 {
        let h = (8.0 * radius * fs.sagitta_m).sqrt();
        // The ramps' curvature rises linearly from 0: their mean of √κ is 2/3 of the arc's.
        let q = self.transition;
        let mean = ((1.0 - 2.0 * q) + 4.0 * q * (2.0 / 3.0)) / (1.0 + 2.0 * q);
        mean / h.clamp(fs.min_spacing_m, fs.max_spacing_m)
    }

    /// The densities of a draw's final points: the corners' and the straights' (`1 /
    /// max_spacing_m`) blended toward their length-weighted mean `w̄` where one lies outside
    /// `[w̄ / MAX_RATIO, w̄ / MIN_RATIO]` (the curvature resampler's rule, so that every segment
    /// lies well within the validity check's `[0.2, 2.5]` times the mean), and all scaled down
    /// where the track would need more than `n_max` points. The straights' total is the one
    /// the closure starts from (`target` less the corners and the chicanes' straights).
    fn final_density(&self, fs: &FinalSpacing, legs: &[Leg], target: f32) -> FinalDensity {
        let (mut corners, mut fixed, mut points) = (0.0f32, 0.0f32, 0.0f32);
        let straight = 1.0 / fs.max_spacing_m;
        let (mut lo, mut hi) = (straight, straight);
        for leg in legs {
            let len = self.corner_length(leg);
            let w = self.corner_density(fs, leg.radius);
            corners += len;
            fixed += leg.straight.max(0.0);
            points += len * w;
            lo = lo.min(w);
            hi = hi.max(w);
        }
        let straights = (target - corners - fixed).max(0.25 * target) + fixed;
        points += straights * straight;
        let mean = points / (corners + straights);
        let mut lambda = 0.0f32;
        if lo < mean / MAX_RATIO {
            lambda = lambda.max((mean / MAX_RATIO - lo) / (mean - lo));
        }
        if hi > mean / MIN_RATIO {
            lambda = lambda.max((hi - mean / MIN_RATIO) / (hi - mean));
        }
        // The blend keeps the expected count; a count over the capacity (less a margin for
        // the rounding of each piece's count) widens every spacing by one factor.
        let room = 0.9 * fs.n_max as f32;
        let scale = if points > room { room / points } else { 1.0 };
        FinalDensity {
            lambda,
            mean,
            scale,
        }
    }

    /// The straights' final spacing, once the closure has fixed their lengths: the blended
    /// density's, shortened where the mean spacing would otherwise leave the corners' steps
    /// (fixed before the closure) outside `[MIN_RATIO, MAX_RATIO]` times it, or the pieces
    /// longer than `MAX_RATIO` times it.
    fn straight_spacing(
        &self,
        fs: &FinalSpacing,
        blend: &FinalDensity,
        legs: &[Leg],
        counts: &[f32],
        target: f32,
    ) -> StraightPieces {
        let (mut corners, mut straights, mut steps) = (0.0f32, 0.0f32, 0.0f32);
        let mut shortest = f32::INFINITY;
        for (leg, &count) in legs.iter().zip(counts) {
            let len = self.corner_length(leg);
            let n = count + 1.0;
            corners += len;
            straights += leg.straight;
            steps += n;
            shortest = shortest.min(len / n);
        }
        // The track is scaled up to its target length after this (see `run_lane`): the pieces'
        // bound holds for the scaled track.
        let length = corners + straights;
        let scale = if length < target {
            target / length
        } else {
            1.0
        };
        let mut h = 1.0 / blend.of(1.0 / fs.max_spacing_m) / scale;
        // Pieces no longer than MAX_RATIO times the mean: h·(steps + straights / h) ≤
        // MAX_RATIO·(corners + straights).
        h = h.min((MAX_RATIO * corners + (MAX_RATIO - 1.0) * straights) / steps);
        // A mean of at most shortest / MIN_RATIO.
        let over = corners + straights - shortest / MIN_RATIO * steps;
        if over > 0.0 {
            h = h.min(shortest / MIN_RATIO * straights / over);
        }
        let mean = (corners + straights) / (steps + straights / h);
        StraightPieces {
            density: 1.0 / h,
            join: 0.25 * mean,
        }
    }

    /// [`integrate_corner`](Self::integrate_corner) in equal steps over the whole corner,
    /// ramps and arc alike, `round(length · density)` of them (at least one, and enough that no
    /// step turns by more than [`EVEN_STEP_TURN`] on the arc): each step along the exact heading
    /// at its midpoint, turned on from the step before by the heading's change.
    fn integrate_corner_even(
        &self,
        turn: f32,
        radius: f32,
        entry: [f32; 2],
        density: f32,
        pts: &mut [Vec2],
    ) -> (usize, Vec2, [f32; 2]) {
        let CornerShape {
            kappa,
            ramp_len,
            arc_len,
            ..
        } = self.corner_shape(turn, radius);
        let total = 2.0 * ramp_len + arc_len;
        let fine = (total / (EVEN_STEP_TURN * radius)).ceil() as usize;
        let n = ((total * density + 0.5) as usize)
            .max(fine)
            .clamp(1, MAX_STEPS);
        let h = total / n as f32;
        // The heading at arc position s from the corner's start (relative to its entry): κ·s²/2L
        // on the first ramp (L its length), θ − κ·b²/2L on the second (b = total − s), and
        // κ·(L/2 + s − L) on the arc. (No midpoint lies on a ramp of length 0.)
        let ramp = kappa / (2.0 * ramp_len);
        let heading = |s: f32| {
            let back = total - s;
            if s < ramp_len {
                ramp * (s * s)
            } else if back < ramp_len {
                turn - ramp * (back * back)
            } else {
                kappa * (0.5 * ramp_len + (s - ramp_len))
            }
        };
        let (mut u, mut before, mut p) = (entry, 0.0f32, Vec2::ZERO);
        for (i, out) in pts[..n].iter_mut().enumerate() {
            let psi = heading((i as f32 + 0.5) * h);
            u = rotate(u, small_cos_sin(psi - before));
            before = psi;
            p = Vec2::new(p[0] + h * u[0], p[1] + h * u[1]);
            *out = p;
        }
        let exit = unit(rotate(u, small_cos_sin(turn - before)));
        (n, p, exit)
    }
}

/// `(cos, sin)` of a small angle `x` (|x| ≤ 0.5) from the Taylor polynomials of degree 7 (sine)
/// and 8 (cosine) in Horner form, IEEE operations only (the twin `tg_circuit_small_cos_sin`
/// evaluates the same expressions); the truncation error is below 1e-8 on that range.
fn small_cos_sin(x: f32) -> [f32; 2] {
    let x2 = x * x;
    let s = x + x * x2 * (-0.166_666_67 + x2 * (0.008_333_334 + x2 * -0.000_198_412_7));
    let c =
        1.0 + x2 * (-0.5 + x2 * (0.041_666_668 + x2 * (-0.001_388_888_9 + x2 * 2.480_158_8e-5)));
    [c, s]
}

/// The complex product of two `(cos, sin)` pairs: direction `u` turned by the rotation `e`.
fn rotate(u: [f32; 2], e: [f32; 2]) -> [f32; 2] {
    [u[0] * e[0] - u[1] * e[1], u[1] * e[0] + u[0] * e[1]]
}

/// `u` scaled to unit length.
fn unit(u: [f32; 2]) -> [f32; 2] {
    let r = (u[0] * u[0] + u[1] * u[1]).sqrt();
    [u[0] / r, u[1] / r]
}

/// The step directions of a corner's first ramp, `(cos, sin)` kept in two arrays.
#[derive(Default)]
struct RampDirs {
    cos: [f32; MAX_RAMP_STEPS],
    sin: [f32; MAX_RAMP_STEPS],
}

/// The state of one corner integration: the point, the points written, and where they go.
struct Walk<'a> {
    p: Vec2,
    written: usize,
    pts: &'a mut [Vec2],
}

impl Walk<'_> {
    /// `n` steps of length `h`, the first along the direction `u` (`(cos, sin)`), each turned
    /// from the one before by the rotation `e`, which is itself turned by `f` after each step
    /// (when given: a heading quadratic in the step index). The directions go to `keep` when
    /// given (`n` at most [`MAX_RAMP_STEPS`]); returns the last step's direction.
    fn section(
        &mut self,
        n: usize,
        h: f32,
        mut u: [f32; 2],
        mut e: [f32; 2],
        f: Option<[f32; 2]>,
        mut keep: Option<&mut RampDirs>,
    ) -> [f32; 2] {
        // Each step turns the direction on for the next one, the last too (its turn is not
        // used): a test for the last step would be a branch that mispredicts once a section.
        let mut last = u;
        for i in 0..n {
            if let Some(keep) = keep.as_deref_mut() {
                keep.cos[i] = u[0];
                keep.sin[i] = u[1];
            }
            self.step(h, u[0], u[1]);
            last = u;
            u = rotate(u, e);
            if let Some(f) = f {
                e = rotate(e, f);
            }
        }
        last
    }

    /// The ramp back: step `i` of `n` along `mirror` times the conjugate of the first ramp's
    /// direction `n − 1 − i` (see [`Circuit::integrate_corner`]).
    fn mirror(&mut self, h: f32, mirror: [f32; 2], dirs: &RampDirs, n: usize) {
        let [ct, st] = mirror;
        for k in (0..n).rev() {
            let (c, s) = (dirs.cos[k], dirs.sin[k]);
            self.step(h, ct * c + st * s, st * c - ct * s);
        }
    }

    /// One step of length `h` along `(c, s)`; its end point is kept.
    fn step(&mut self, h: f32, c: f32, s: f32) {
        self.p[0] += h * c;
        self.p[1] += h * s;
        self.pts[self.written] = self.p;
        self.written += 1;
    }
}

/// The clearance skeleton of one drawn track, in scratch: a closed polyline through the
/// straights' ends and every `stride`-th corner step point (at most [`MAX_PIECES`] pieces per
/// corner), with the arc position of each vertex and the pad of the segment it starts (how far the
/// drawn path may stray from that segment: 0 on a straight).
struct Skeleton<'a> {
    /// Vertices, the first repeated after the last.
    pts: &'a mut [Vec2],
    /// Arc position of each vertex, the track's length after the last; [`LANES`] words more
    /// than the vertices (read, never used, by the last block of the pair test).
    arc: &'a mut [f32],
    /// Pad of the segment that starts at each vertex, metres.
    pad: &'a mut [f32],
    /// Index of each leg's first vertex (its bits in an `f32`, see [`vertex`]), the vertex count
    /// after the last leg.
    first: &'a mut [f32],
    /// Five equal rows of one word a leg: each leg's box, the union of its segments' boxes (lo
    /// x, lo y, hi x, hi y), and the arc position of its first vertex (the track's length after
    /// the last leg); each row [`LANES`] words longer than that, like `arc`.
    legs: &'a mut [f32],
    /// Each segment's box, inflated by half the clearance and its pad: four equal rows (lo x,
    /// lo y, hi x, hi y), each [`LANES`] words longer than the vertices like `arc`.
    seg_boxes: &'a mut [f32],
    /// Vertices written.
    n: usize,
}

impl Skeleton<'_> {
    fn push(&mut self, p: Vec2, arc: f32, pad: f32) {
        self.pts[self.n] = p;
        self.arc[self.n] = arc;
        self.pad[self.n] = pad;
        self.n += 1;
    }
}

/// Squared distance from `p` to the segment `a b`.
fn point_segment2(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let (px, py) = (p[0] - a[0], p[1] - a[1]);
    let l2 = dx * dx + dy * dy;
    let t = if l2 > 0.0 {
        ((px * dx + py * dy) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (ex, ey) = (px - t * dx, py - t * dy);
    ex * ex + ey * ey
}

/// Squared distance between the segments `p0 p1` and `q0 q1` (0 when they cross).
fn segment_segment2(p0: Vec2, p1: Vec2, q0: Vec2, q1: Vec2) -> f32 {
    let (ux, uy) = (p1[0] - p0[0], p1[1] - p0[1]);
    let (vx, vy) = (q1[0] - q0[0], q1[1] - q0[1]);
    let d1 = vx * (p0[1] - q0[1]) - vy * (p0[0] - q0[0]);
    let d2 = vx * (p1[1] - q0[1]) - vy * (p1[0] - q0[0]);
    let d3 = ux * (q0[1] - p0[1]) - uy * (q0[0] - p0[0]);
    let d4 = ux * (q1[1] - p0[1]) - uy * (q1[0] - p0[0]);
    let straddles = |a: f32, b: f32| (a > 0.0 && b < 0.0) || (a < 0.0 && b > 0.0);
    if straddles(d1, d2) && straddles(d3, d4) {
        return 0.0;
    }
    point_segment2(p0, q0, q1)
        .min(point_segment2(p1, q0, q1))
        .min(point_segment2(q0, p0, p1))
        .min(point_segment2(q1, p0, p1))
}

impl Circuit {
    /// One draw: corners, turning, headings, closure, then the walk that writes the points into
    /// `out` and the clearance skeleton into `sk`. Returns `(points, legs, target length)`, no
    /// points when the straights cannot close the gap.
    fn draw(
        &self,
        rng: &mut LaneRng,
        legs: &mut [Leg],
        local: &mut [Vec2],
        counts: &mut [f32],
        out: &mut [Vec2],
        sk: &mut Skeleton<'_>,
    ) -> (usize, usize, f32) {
        let n = self.draw_corners(rng, legs);
        let legs = &mut legs[..n];
        if !Self::close_turning(legs) {
            return (0, n, 0.0);
        }
        if rng.unit() < 0.5 {
            for leg in legs.iter_mut() {
                leg.turn = -leg.turn;
            }
        }
        // Corner shapes, lengths and headings.
        let target = rng.range(self.min_length_m, self.max_length_m);
        let final_spacing = self
            .spacing
            .as_ref()
            .map(|fs| (fs, self.final_density(fs, legs, target)));
        let mut fixed = 0.0f32;
        // Each straight's heading is the exit heading of the corner before it.
        let mut heading = [1.0f32, 0.0];
        for (k, leg) in legs.iter_mut().enumerate() {
            let pts = &mut local[k * MAX_STEPS..(k + 1) * MAX_STEPS];
            let (count, end, exit) = match &final_spacing {
                None => self.integrate_corner(leg.turn, leg.radius, heading, pts),
                Some((fs, blend)) => {
                    let w = blend.of(self.corner_density(fs, leg.radius));
                    self.integrate_corner_even(leg.turn, leg.radius, heading, w, pts)
                }
            };
            // The points but the last (the next leg's start).
            counts[k] = (count - 1) as f32;
            leg.dx = end[0];
            leg.dy = end[1];
            fixed += self.corner_length(leg);
            fixed += leg.straight.max(0.0);
            [leg.cos, leg.sin] = heading;
            heading = exit;
        }
        let budget = (target - fixed).max(0.25 * target);
        let mut weight_sum = 0.0f32;
        for leg in legs.iter_mut() {
            if leg.straight < 0.0 {
                let u = rng.unit();
                leg.weight = 0.1 + u * u;
                weight_sum += leg.weight;
            }
        }
        for leg in legs.iter_mut() {
            let share = budget * leg.weight / weight_sum;
            leg.straight = if leg.straight < 0.0 {
                share
            } else {
                leg.straight
            };
            leg.weight = leg.straight;
        }
        // Closure: clamped weighted least-norm correction of the straights.
        let gap = |legs: &[Leg]| {
            let mut g = [0.0f32; 2];
            for leg in legs {
                g[0] += leg.straight * leg.cos + leg.dx;
                g[1] += leg.straight * leg.sin + leg.dy;
            }
            g
        };
        let tolerance = 1e-5 * target + 1e-3;
        let mut g = gap(legs);
        for _ in 0..CLOSURE_ROUNDS {
            if g[0].abs() <= tolerance && g[1].abs() <= tolerance {
                break;
            }
            let (mut mxx, mut mxy, mut myy) = (0.0f32, 0.0f32, 0.0f32);
            for leg in legs.iter() {
                mxx += leg.weight * leg.cos * leg.cos;
                mxy += leg.weight * leg.cos * leg.sin;
                myy += leg.weight * leg.sin * leg.sin;
            }
            let det = mxx * myy - mxy * mxy;
            if det.is_nan() || det <= 1e-6 * (mxx + myy) * (mxx + myy) {
                return (0, n, target);
            }
            let cx = -(myy * g[0] - mxy * g[1]) / det;
            let cy = -(mxx * g[1] - mxy * g[0]) / det;
            for leg in legs.iter_mut() {
                let l = leg.straight + leg.weight * (leg.cos * cx + leg.sin * cy);
                // Selected, not branched on: which straights clamp follows the draw.
                let clamp = l <= 0.0;
                leg.straight = if clamp { 0.0 } else { l };
                leg.weight = if clamp { 0.0 } else { leg.weight };
            }
            g = gap(legs);
        }
        if !(g[0].abs() <= tolerance && g[1].abs() <= tolerance) {
            return (0, n, target);
        }
        let straight = final_spacing
            .map(|(fs, blend)| self.straight_spacing(fs, &blend, legs, counts, target));
        (self.walk(legs, local, counts, straight, out, sk), n, target)
    }

    /// Walks the closed legs: writes each straight's ends and each corner's points moved to its
    /// start into `out` (returns how many), and the clearance skeleton into `sk`.
    fn walk(
        &self,
        legs: &[Leg],
        local: &[Vec2],
        counts: &[f32],
        straight: Option<StraightPieces>,
        out: &mut [Vec2],
        sk: &mut Skeleton<'_>,
    ) -> usize {
        // At the final spacing: each straight's pieces (none when it joins the corner before
        // it), and no track of more than `n_max` points.
        if let (Some(fs), Some(pieces)) = (&self.spacing, &straight) {
            let mut total = 0;
            for (leg, &count) in legs.iter().zip(counts) {
                total += pieces.of(leg.straight) + 1 + count as usize;
            }
            if total > fs.n_max {
                return 0;
            }
        }
        let mut p = Vec2::ZERO;
        let mut written = 0;
        let mut arc = 0.0f32;
        sk.n = 0;
        let piece_pad = 8.0 * PIECE_PAD * self.half_width_m;
        for (k, leg) in legs.iter().enumerate() {
            sk.first[k] = f32::from_bits(sk.n as u32);
            let count = counts[k] as usize;
            let r = leg.radius;
            let corner_len = self.corner_length(leg);
            // The longest step of the corner (a ramp's steps are longer when its step count is
            // capped); a piece of `stride` steps strays from its chord by at most
            // (stride·h)²/(8r), curvature being at most 1/r.
            let step = corner_len / (count + 1) as f32;
            let h_max = match straight {
                None => {
                    r * self
                        .step_turn(r)
                        .max(0.25 * self.transition * leg.turn.abs())
                }
                Some(_) => step,
            };
            let stride = (((piece_pad * r).sqrt() / h_max) as usize)
                .max(count / MAX_PIECES + 1)
                .max(1);
            let piece = stride as f32 * h_max;
            let pad = piece * piece / (8.0 * r);
            match straight {
                None => {
                    out[written] = p;
                    written += 1;
                }
                Some(pieces) => {
                    let m = pieces.of(leg.straight);
                    for i in 0..m {
                        let t = leg.straight * (i as f32 / m as f32);
                        out[written] = Vec2::new(p[0] + t * leg.cos, p[1] + t * leg.sin);
                        written += 1;
                    }
                }
            }
            if leg.straight > 0.0 {
                sk.push(p, arc, 0.0);
                p = Vec2::new(p[0] + leg.straight * leg.cos, p[1] + leg.straight * leg.sin);
                arc += leg.straight;
            }
            if straight.is_some() || leg.straight > 0.0 {
                out[written] = p;
                written += 1;
            }
            sk.push(p, arc, pad);
            let mut left = stride;
            for (j, q) in local[k * MAX_STEPS..k * MAX_STEPS + count]
                .iter()
                .enumerate()
            {
                let w = Vec2::new(p[0] + q[0], p[1] + q[1]);
                out[written] = w;
                written += 1;
                left -= 1;
                if left == 0 {
                    sk.push(w, arc + (j + 1) as f32 * step, pad);
                    left = stride;
                }
            }
            arc += corner_len;
            p = Vec2::new(p[0] + leg.dx, p[1] + leg.dy);
        }
        sk.first[legs.len()] = f32::from_bits(sk.n as u32);
        sk.pts[sk.n] = sk.pts[0];
        sk.arc[sk.n] = arc;
        written
    }

    /// The widest cone of headings (radians) within which a path's points more than `near`
    /// apart along the arc are at least `need` apart: `W` with `cos(W/2)·near ≥ need`, less
    /// [`CONE_MARGIN`] and a relative 1e-3 of `near` for rounding; negative (no cone) where even
    /// a straight path falls short, and without final points (the skeleton's arc positions
    /// then spread a corner's length evenly over its steps, which the integration does not).
    fn cone(&self, need: f32, near: f32) -> f32 {
        let c = need / ((1.0 - 1e-3) * near);
        if self.spacing.is_none() || c.is_nan() || c >= 1.0 {
            return -1.0;
        }
        // acos(c), c in [0, 1).
        2.0 * crate::math::atan2((1.0 - c * c).sqrt(), c) - CONE_MARGIN
    }

    /// Whether the skeleton of `legs` legs keeps its clearance: every two segments whose points
    /// are all farther apart along the track than the validity check's neighbourhood (π·hw) and
    /// than the arc within which a path of curvature ≤ 1/R cannot come back to within 2·hw
    /// (2π·R − π·hw), both ways round the loop, stay at least 2·hw plus their pads apart where
    /// their inflated boxes meet. Pairs of legs are tested only where their inflated boxes meet
    /// and some pair of their segments can lie that far apart along the track; a pair of legs is
    /// tested [`LANES`] segments at a time, branch-free, and its segments' exact distances are
    /// taken only where some pair's boxes meet in that window.
    fn clear(&self, drawn: &[Leg], sk: &mut Skeleton<'_>) -> bool {
        let legs = drawn.len();
        let clearance = 2.0 * self.half_width_m;
        let near = PI * self.half_width_m;
        let safe = TAU * self.min_turn_radius_m - near;
        let n = sk.n;
        let pts = &sk.pts[..=n];
        let arc = &*sk.arc;
        let pad = &sk.pad[..n];
        let first = &sk.first[..=legs];
        let total = arc[n];
        let (behind_near, behind_safe) = (total - near, total - safe);
        let row = sk.seg_boxes.len() / 4;
        let (lo_x, rest) = sk.seg_boxes.split_at_mut(row);
        let (lo_y, rest) = rest.split_at_mut(row);
        let (hi_x, hi_y) = rest.split_at_mut(row);
        let leg_row = sk.legs.len() / 5;
        let (leg_lo_x, rest) = sk.legs.split_at_mut(leg_row);
        let (leg_lo_y, rest) = rest.split_at_mut(leg_row);
        let (leg_hi_x, rest) = rest.split_at_mut(leg_row);
        let (leg_hi_y, leg_arc) = rest.split_at_mut(leg_row);
        // Segment boxes inflated by half the clearance and their pads; leg boxes, their unions.
        let mut pad_max = 0.0f32;
        for v in 0..n {
            let (p, q) = (pts[v], pts[v + 1]);
            let inflate = 0.5 * clearance + pad[v];
            lo_x[v] = p[0].min(q[0]) - inflate;
            lo_y[v] = p[1].min(q[1]) - inflate;
            hi_x[v] = p[0].max(q[0]) + inflate;
            hi_y[v] = p[1].max(q[1]) + inflate;
            pad_max = pad_max.max(pad[v]);
        }
        let cone = self.cone(clearance + 2.0 * pad_max, near);
        for k in 0..legs {
            let mut leg = [
                f32::INFINITY,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NEG_INFINITY,
            ];
            for v in vertex(first[k])..vertex(first[k + 1]) {
                leg = [
                    leg[0].min(lo_x[v]),
                    leg[1].min(lo_y[v]),
                    leg[2].max(hi_x[v]),
                    leg[3].max(hi_y[v]),
                ];
            }
            [leg_lo_x[k], leg_lo_y[k], leg_hi_x[k], leg_hi_y[k]] = leg;
            leg_arc[k] = arc[vertex(first[k])];
        }
        leg_arc[legs] = total;
        let (lo_x, lo_y, hi_x, hi_y) = (&*lo_x, &*lo_y, &*hi_x, &*hi_y);
        let (leg_lo_x, leg_lo_y, leg_hi_x, leg_hi_y) =
            (&*leg_lo_x, &*leg_lo_y, &*leg_hi_x, &*leg_hi_y);
        let leg_arc = &*leg_arc;
        // The window of the pairs of segment i (with its box).
        let window = |i: usize| {
            let bx = [lo_x[i], lo_y[i], hi_x[i], hi_y[i]];
            PairWindow::new(i, arc, near, safe, behind_near, behind_safe, bx)
        };
        for a in 0..legs {
            let (i0, i1) = (vertex(first[a]), vertex(first[a + 1]));
            // The legs from a on whose boxes meet leg a's and of which some segment pair can lie
            // in the window: one ending more than `safe` ahead of leg a's start, and one starting
            // less than `total − safe` ahead of leg a's end (the window's bounds grow with
            // both ends of a segment, so no pair of legs failing either has a pair in it); from
            // the first the cone does not exempt, eight legs at a time.
            let (ahead, behind) = (leg_arc[a] + safe, leg_arc[a + 1] + behind_safe);
            let (ax0, ay0, ax1, ay1) = (leg_lo_x[a], leg_lo_y[a], leg_hi_x[a], leg_hi_y[a]);
            let mut base = cone_end(drawn, a, cone);
            while base < legs {
                let tested = F32x8::load(words(leg_hi_x, base))
                    .ge(F32x8::splat(ax0))
                    .and(F32x8::splat(ax1).ge(F32x8::load(words(leg_lo_x, base))))
                    .and(F32x8::load(words(leg_hi_y, base)).ge(F32x8::splat(ay0)))
                    .and(F32x8::splat(ay1).ge(F32x8::load(words(leg_lo_y, base))))
                    .and(F32x8::load(words(leg_arc, base + 1)).gt(F32x8::splat(ahead)))
                    .and(F32x8::load(words(leg_arc, base)).lt(F32x8::splat(behind)));
                let mut partners = tested.bits() & lanes_between(0, (legs - base) as i32);
                base += LANES;
                while partners != 0 {
                    let b = base - LANES + partners.trailing_zeros() as usize;
                    partners &= partners - 1;
                    let (j0, j1) = (vertex(first[b]), vertex(first[b + 1]));
                    // Segments of leg a that may pair with some segment of leg b: their boxes meet
                    // leg b's, and leg b's last segment starts and ends past their window's near
                    // bounds, its first before the far ones (each bound is the window's own sum).
                    let (end0, end1) = (arc[j1 - 1], arc[j1]);
                    let (start0, start1) = (arc[j0], arc[j0 + 1]);
                    let (bx0, by0, bx1, by1) = (leg_lo_x[b], leg_lo_y[b], leg_hi_x[b], leg_hi_y[b]);
                    let mut any = 0u32;
                    let mut block = i0;
                    while block < i1 {
                        let count = (i1 - block) as i32;
                        let lx: &[f32; LANES] = words(lo_x, block);
                        let ly: &[f32; LANES] = words(lo_y, block);
                        let hx: &[f32; LANES] = words(hi_x, block);
                        let hy: &[f32; LANES] = words(hi_y, block);
                        // The lanes' tests eight at a time (one compare each, `F32x8`).
                        let a0 = F32x8::load(words(arc, block));
                        let a1 = F32x8::load(words(arc, block + 1));
                        let may = F32x8::splat(end1)
                            .gt(a0 + F32x8::splat(safe))
                            .and(F32x8::splat(end0).gt(a1 + F32x8::splat(near)))
                            .and(F32x8::splat(start0).lt(a1 + F32x8::splat(behind_safe)))
                            .and(F32x8::splat(start1).lt(a0 + F32x8::splat(behind_near)))
                            .and(F32x8::load(hx).ge(F32x8::splat(bx0)))
                            .and(F32x8::splat(bx1).ge(F32x8::load(lx)))
                            .and(F32x8::load(hy).ge(F32x8::splat(by0)))
                            .and(F32x8::splat(by1).ge(F32x8::load(ly)));
                        let mut lanes = may.bits() & lanes_between(0, count);
                        while lanes != 0 {
                            let i = block + lanes.trailing_zeros() as usize;
                            lanes &= lanes - 1;
                            let w = window(i);
                            any |= w.any_in(i, j0, j1, arc, [lo_x, lo_y, hi_x, hi_y]);
                        }
                        block += LANES;
                    }
                    if any == 0 {
                        continue;
                    }
                    // Some pair of boxes meets in the window: the exact distances of those pairs.
                    for i in i0..i1 {
                        let w = window(i);
                        for j in j0.max(i + 1)..j1 {
                            if w.holds(arc[j], arc[j + 1], [lo_x[j], lo_y[j], hi_x[j], hi_y[j]]) {
                                let need = clearance + pad[i] + pad[j];
                                let d2 = segment_segment2(pts[i], pts[i + 1], pts[j], pts[j + 1]);
                                if d2 < need * need {
                                    return false;
                                }
                            }
                        }
                    }
                }
            }
        }
        true
    }
}

/// What the clearance check's cone of headings gives up for rounding, radians (the headings
/// drift by about 1e-6 rad a corner).
const CONE_MARGIN: f32 = 0.01;

/// Lanes of the clearance check's branch-free pair test.
const LANES: usize = 8;

/// The `K` words of `row` from `at` (the skeleton's rows hold [`LANES`] words past their last
/// segment, so a block of lanes never runs off them).
#[inline(always)]
fn words<const K: usize>(row: &[f32], at: usize) -> &[f32; K] {
    row[at..at + K]
        .try_into()
        .expect("a slice of K words is an array of K words")
}

/// What the clearance check asks of a segment paired with segment `i` of the skeleton (the bounds
/// of its arc positions, `i`'s inflated box).
struct PairWindow {
    /// Its start must lie past `arc(i + 1) + π·hw`, its end past `arc(i) + safe`.
    ahead0: f32,
    ahead1: f32,
    /// Its end must lie before `arc(i) + total − π·hw`, its start before
    /// `arc(i + 1) + total − safe`.
    behind1: f32,
    behind0: f32,
    /// Segment `i`'s inflated box, `[lo x, lo y, hi x, hi y]`.
    seg: [f32; 4],
}

impl PairWindow {
    #[inline(always)]
    fn new(
        i: usize,
        arc: &[f32],
        near: f32,
        safe: f32,
        behind_near: f32,
        behind_safe: f32,
        seg: [f32; 4],
    ) -> Self {
        let (a0, a1) = (arc[i], arc[i + 1]);
        Self {
            ahead0: a1 + near,
            ahead1: a0 + safe,
            behind1: a0 + behind_near,
            behind0: a1 + behind_safe,
            seg,
        }
    }

    /// Whether a segment from arc position `s0` to `s1` with the inflated box `b` lies in the
    /// window and its box meets segment `i`'s (branch-free).
    #[inline(always)]
    fn holds(&self, s0: f32, s1: f32, b: [f32; 4]) -> bool {
        let x = &self.seg;
        (s0 > self.ahead0)
            & (s1 > self.ahead1)
            & (s1 < self.behind1)
            & (s0 < self.behind0)
            & (x[2] >= b[0])
            & (b[2] >= x[0])
            & (x[3] >= b[1])
            & (b[3] >= x[1])
    }

    /// [`holds`](Self::holds) for eight segments at once (their arc positions `s0`, `s1` and
    /// box rows `[lo x, lo y, hi x, hi y]`): bit `t` for lane `t`, the same comparisons.
    #[inline(always)]
    fn holds_lanes(&self, s0: F32x8, s1: F32x8, b: [F32x8; 4]) -> u32 {
        let x = self.seg.map(F32x8::splat);
        s0.gt(F32x8::splat(self.ahead0))
            .and(s1.gt(F32x8::splat(self.ahead1)))
            .and(s1.lt(F32x8::splat(self.behind1)))
            .and(s0.lt(F32x8::splat(self.behind0)))
            .and(x[2].ge(b[0]))
            .and(b[2].ge(x[0]))
            .and(x[3].ge(b[1]))
            .and(b[3].ge(x[1]))
            .bits()
    }

    /// Whether some segment `j` of `j0..j1` after segment `i` (whose window this is) lies in
    /// the window with a box that meets `i`'s: 1 or 0, [`LANES`] segments at a time,
    /// branch-free (`arc` and the box rows `[lo x, lo y, hi x, hi y]` hold [`LANES`] words past
    /// the last segment).
    #[inline(always)]
    fn any_in(&self, i: usize, j0: usize, j1: usize, arc: &[f32], rows: [&[f32]; 4]) -> u32 {
        let [lo_x, lo_y, hi_x, hi_y] = rows;
        let mut any = 0u32;
        let mut base = j0;
        while base < j1 {
            // Lanes past the range or not after segment i hold no pair.
            let (after, end) = (i as i32 - base as i32, (j1 - base) as i32);
            let lx: &[f32; LANES] = words(lo_x, base);
            let ly: &[f32; LANES] = words(lo_y, base);
            let hx: &[f32; LANES] = words(hi_x, base);
            let hy: &[f32; LANES] = words(hi_y, base);
            let held = self.holds_lanes(
                F32x8::load(words(arc, base)),
                F32x8::load(words(arc, base + 1)),
                [lx, ly, hx, hy].map(F32x8::load),
            );
            any |= u32::from(held & lanes_between(after + 1, end) != 0);
            base += LANES;
        }
        any
    }
}

/// The first leg from `a` on whose pair with leg `a` the cone does not exempt: the headings
/// from leg `a`'s straight to leg `b`'s corner's end (relative to the straight's: the running
/// sums of the turns) span more than `cone`. `a` itself when there is no cone.
fn cone_end(legs: &[Leg], a: usize, cone: f32) -> usize {
    if cone <= 0.0 {
        return a;
    }
    let (mut heading, mut lo, mut hi) = (0.0f32, 0.0f32, 0.0f32);
    for (b, leg) in legs.iter().enumerate().skip(a) {
        heading += leg.turn;
        lo = lo.min(heading);
        hi = hi.max(heading);
        if hi - lo > cone {
            return b;
        }
    }
    legs.len()
}

/// A skeleton vertex index kept in an `f32` scratch word by its bits ([`Skeleton::first`]).
fn vertex(word: f32) -> usize {
    word.to_bits() as usize
}

impl Circuit {
    /// The lane's scratch ([`Stage::scratch_len`] words) as its legs, corner step points, corner
    /// point counts and clearance skeleton.
    fn scratch_parts<'a>(
        &self,
        scratch: &'a mut [f32],
    ) -> (&'a mut [Leg], &'a mut [Vec2], &'a mut [f32], Skeleton<'a>) {
        let max_legs = self.max_legs();
        let vertices = max_legs * LEG_VERTICES + 1;
        let (leg_words, rest) = scratch.split_at_mut(max_legs * LEG_WORDS);
        let (pt_words, rest) = rest.split_at_mut(max_legs * 2 * MAX_STEPS);
        let (counts, rest) = rest.split_at_mut(max_legs);
        let (sk_pts, rest) = rest.split_at_mut(2 * vertices);
        let (sk_arc, rest) = rest.split_at_mut(vertices + LANES);
        let (sk_pad, rest) = rest.split_at_mut(vertices);
        let (sk_seg_boxes, rest) = rest.split_at_mut(4 * (vertices + LANES));
        let (sk_first, rest) = rest.split_at_mut(max_legs + 1);
        let sk_legs = &mut rest[..5 * (max_legs + 1 + LANES)];
        let sk = Skeleton {
            pts: bytemuck::cast_slice_mut(sk_pts),
            arc: sk_arc,
            pad: sk_pad,
            first: sk_first,
            legs: sk_legs,
            seg_boxes: sk_seg_boxes,
            n: 0,
        };
        (
            bytemuck::cast_slice_mut(leg_words),
            bytemuck::cast_slice_mut(pt_words),
            counts,
            sk,
        )
    }
}

impl Stage for Circuit {
    fn name(&self) -> &str {
        "circuit"
    }
    fn max_points(&self) -> usize {
        match &self.spacing {
            None => self.max_legs() * (MAX_STEPS + 1),
            Some(fs) => fs.n_max,
        }
    }
    fn scratch_len(&self) -> usize {
        let legs = self.max_legs();
        let vertices = legs * LEG_VERTICES + 1;
        legs * (LEG_WORDS + 2 * MAX_STEPS + 1)
            + 8 * vertices
            + 5 * LANES
            + (legs + 1)
            + 5 * (legs + 1 + LANES)
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        _scratch_u32: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let (legs, local, counts, mut sk) = self.scratch_parts(scratch);
        for _ in 0..DRAWS {
            let (written, n, target) = self.draw(rng, legs, local, counts, out, &mut sk);
            if written == 0 || !self.clear(&legs[..n], &mut sk) {
                continue;
            }
            // A track the closure left shorter than its target is scaled up to it (radii grow
            // with it, which keeps every turn within the minimum radius, and distances, which
            // keeps the clearance); and the bounding box is centred on the origin, like the
            // other generators' shapes.
            let mut length = 0.0f32;
            for leg in legs[..n].iter() {
                length += leg.straight + self.corner_length(leg);
            }
            if length > Self::MAX_STRETCH * self.max_length_m {
                continue;
            }
            let scale = if length < target {
                target / length
            } else {
                1.0
            };
            // The box by eight independent running minima and maxima (four points at a time,
            // x in the even lanes, y in the odd), then their own: min and max are exact, so
            // any order gives the same box.
            let words: &[f32] = bytemuck::cast_slice(&out[..written]);
            let (mut lo8, mut hi8) = ([f32::INFINITY; 8], [f32::NEG_INFINITY; 8]);
            let blocks = words.chunks_exact(8);
            let tail = blocks.remainder();
            for block in blocks {
                for t in 0..8 {
                    lo8[t] = lo8[t].min(block[t]);
                    hi8[t] = hi8[t].max(block[t]);
                }
            }
            for (t, &w) in tail.iter().enumerate() {
                lo8[t] = lo8[t].min(w);
                hi8[t] = hi8[t].max(w);
            }
            let (mut lo, mut hi) = ([lo8[0], lo8[1]], [hi8[0], hi8[1]]);
            for t in 2..8 {
                lo[t % 2] = lo[t % 2].min(lo8[t]);
                hi[t % 2] = hi[t % 2].max(hi8[t]);
            }
            let centre = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
            for q in &mut out[..written] {
                *q = Vec2::new((q[0] - centre[0]) * scale, (q[1] - centre[1]) * scale);
            }
            return written;
        }
        0
    }
    fn kernel(&self) -> Option<StageKernel> {
        Some(StageKernel {
            name: "tg_track_circuit",
            window: None,
            params: params_bytes(&CircuitParams {
                min_corners: u32::try_from(self.min_corners).ok()?,
                max_corners: u32::try_from(self.max_corners).ok()?,
                weights: self.weights,
                reverse_fraction: self.reverse_fraction,
                min_length_m: self.min_length_m,
                max_length_m: self.max_length_m,
                max_radius_m: self.max_radius_m,
                transition: self.transition,
                min_turn_radius_m: self.min_turn_radius_m,
                half_width_m: self.half_width_m,
                final_points: u32::from(self.spacing.is_some()),
                min_spacing_m: self.spacing.map_or(0.0, |fs| fs.min_spacing_m),
                max_spacing_m: self.spacing.map_or(0.0, |fs| fs.max_spacing_m),
                sagitta_m: self.spacing.map_or(0.0, |fs| fs.sagitta_m),
                n_max: u32::try_from(self.spacing.map_or(0, |fs| fs.n_max)).ok()?,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f1_like() -> Circuit {
        Circuit {
            min_corners: 10,
            max_corners: 18,
            weights: [0.15, 0.35, 0.3, 0.2],
            reverse_fraction: 0.3,
            min_length_m: 3300.0,
            max_length_m: 7000.0,
            max_radius_m: 250.0,
            transition: 0.2,
            min_turn_radius_m: 12.0,
            half_width_m: 6.0,
            spacing: None,
        }
    }

    /// Squared distance between two segments by dense sampling, in f64 (an upper bound that
    /// converges to the exact value).
    fn sampled_segment2(p0: Vec2, p1: Vec2, q0: Vec2, q1: Vec2) -> f64 {
        let at = |a: Vec2, b: Vec2, t: f64| {
            (
                f64::from(a[0]) + t * f64::from(b[0] - a[0]),
                f64::from(a[1]) + t * f64::from(b[1] - a[1]),
            )
        };
        let mut best = f64::INFINITY;
        let k = 400;
        for i in 0..=k {
            let (x, y) = at(p0, p1, f64::from(i) / f64::from(k));
            for j in 0..=k {
                let (u, v) = at(q0, q1, f64::from(j) / f64::from(k));
                best = best.min((x - u) * (x - u) + (y - v) * (y - v));
            }
        }
        best
    }

    #[test]
    fn small_angle_rotations_match_f64() {
        for k in -500..=500 {
            let x = k as f32 * 0.001;
            let [c, s] = small_cos_sin(x);
            let (es, ec) = f64::from(x).sin_cos();
            assert!((f64::from(s) - es).abs() < 1.2e-7, "sin {x}: {s} vs {es}");
            assert!((f64::from(c) - ec).abs() < 1.2e-7, "cos {x}: {c} vs {ec}");
        }
    }

    /// Case `case` of the corner tests: transitions from none to the widest in turn, a turn up
    /// to the cap either way, a radius in 12–250 m.
    fn corner_case(rng: &mut LaneRng, case: usize) -> (Circuit, f32, f32) {
        let c = Circuit {
            transition: [0.0, 0.2, 0.45][case % 3],
            ..f1_like()
        };
        let turn = rng.range(-MAX_TURN, MAX_TURN);
        (c, turn, rng.range(12.0, 250.0))
    }

    /// A random entry heading: its angle (f64) and its `(cos, sin)`.
    fn entry_case(rng: &mut LaneRng) -> (f64, [f32; 2]) {
        let angle = f64::from(rng.range(-3.0, 3.0));
        (angle, [angle.cos() as f32, angle.sin() as f32])
    }

    /// The exit heading against f64 cos/sin of the entry angle plus the turn.
    fn assert_exit(case: usize, turn: f32, entry_angle: f64, exit: [f32; 2]) {
        let want = entry_angle + f64::from(turn);
        let err = (f64::from(exit[0]) - want.cos()).abs() + (f64::from(exit[1]) - want.sin()).abs();
        assert!(
            err < 1e-5,
            "case {case}: turn {turn} exit {exit:?} error {err}"
        );
    }

    #[test]
    fn corners_turn_by_their_turn_and_end_on_their_last_point() {
        // Exit heading against f64 cos/sin of entry + turn, over turns up to the cap, both
        // signs, and transitions from none to the widest.
        let mut rng = LaneRng::new(5, 0, 0, 1);
        let mut pts = vec![Vec2::NAN; MAX_STEPS];
        for case in 0..400 {
            let (c, turn, radius) = corner_case(&mut rng, case);
            let (entry_angle, entry) = entry_case(&mut rng);
            let (count, end, exit) = c.integrate_corner(turn, radius, entry, &mut pts);
            assert_exit(case, turn, entry_angle, exit);
            assert_eq!(pts[count - 1], end, "case {case}");
        }
    }

    #[test]
    fn even_corners_turn_by_their_turn_in_equal_steps() {
        // The final-spacing integration: exit heading and end point as above, equal steps
        // (length · density rounded, or more where an arc step would turn too far), and every
        // point within the step's sagitta of the corner the fine integration draws.
        let mut rng = LaneRng::new(6, 0, 0, 1);
        let (mut pts, mut fine) = (vec![Vec2::NAN; MAX_STEPS], vec![Vec2::NAN; MAX_STEPS]);
        for case in 0..400 {
            let (c, turn, radius) = corner_case(&mut rng, case);
            let density = 1.0 / rng.range(2.0, 30.0);
            let (entry_angle, entry) = entry_case(&mut rng);
            let (count, end, exit) =
                c.integrate_corner_even(turn, radius, entry, density, &mut pts);
            assert_exit(case, turn, entry_angle, exit);
            assert_eq!(pts[count - 1], end, "case {case}");
            let total = turn.abs() * radius * (1.0 + 2.0 * c.transition);
            let h = total / count as f32;
            assert!(
                h <= EVEN_STEP_TURN * radius * 1.0001,
                "case {case}: step {h}"
            );
            let by_density = ((total * density + 0.5) as usize).max(1);
            assert!(count >= by_density.min(MAX_STEPS), "case {case}");
            let mut from = Vec2::ZERO;
            for p in &pts[..count] {
                let step = ((p[0] - from[0]).powi(2) + (p[1] - from[1]).powi(2)).sqrt();
                assert!(
                    (step - h).abs() < 1e-3 * h.max(1.0),
                    "case {case}: {step} vs {h}"
                );
                from = *p;
            }
            let (n_fine, fine_end, _) = c.integrate_corner(turn, radius, entry, &mut fine);
            let (dx, dy) = (end[0] - fine_end[0], end[1] - fine_end[1]);
            let apart = (dx * dx + dy * dy).sqrt();
            // Both are chords of the same curve: their ends differ by the chords' shortening,
            // at most a step's turn squared over 24 of the corner's length, and rounding.
            let bound = total * (h / radius).powi(2) / 24.0 * 2.0 + 1e-3 * radius;
            assert!(
                apart < bound,
                "case {case}: ends {apart} apart (bound {bound}, {n_fine})"
            );
        }
    }

    #[test]
    fn segment_distance_matches_sampling() {
        let mut rng = LaneRng::new(3, 0, 0, 1);
        let point = |rng: &mut LaneRng| Vec2::new(rng.range(-10.0, 10.0), rng.range(-10.0, 10.0));
        for case in 0..200 {
            let (p0, p1, q0, q1) = (
                point(&mut rng),
                point(&mut rng),
                point(&mut rng),
                point(&mut rng),
            );
            let exact = f64::from(segment_segment2(p0, p1, q0, q1));
            let sampled = sampled_segment2(p0, p1, q0, q1);
            // Sampling at 1/400 of segments up to 28 m long misses the minimum by < 0.1 m.
            assert!(exact <= sampled + 1e-3, "case {case}: {exact} > {sampled}");
            assert!(
                sampled.sqrt() - exact.sqrt() < 0.1,
                "case {case}: {exact} vs {sampled}"
            );
        }
    }

    #[test]
    fn accepted_draws_keep_their_clearance() {
        // Independent of the skeleton: on the lane's own points, every two points farther apart
        // along the track than π·hw are at least 2·hw apart (f64, all pairs).
        let c = f1_like();
        let hw = f64::from(c.half_width_m);
        let mut scratch = vec![f32::NAN; c.scratch_len()];
        let mut out = vec![Vec2::NAN; c.max_points()];
        let mut written = 0;
        for e in 0..60 {
            let mut rng = LaneRng::new(11, e, 0, 1);
            let n = c.run_lane(&mut rng, &mut scratch, &mut [], &mut out);
            if n == 0 {
                continue;
            }
            written += 1;
            let pts: Vec<(f64, f64)> = out[..n]
                .iter()
                .map(|p| (f64::from(p[0]), f64::from(p[1])))
                .collect();
            let mut arc = vec![0.0f64; n + 1];
            for i in 0..n {
                let (a, b) = (pts[i], pts[(i + 1) % n]);
                arc[i + 1] = arc[i] + ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
            }
            let total = arc[n];
            for i in 0..n {
                for j in i + 1..n {
                    let d = arc[j] - arc[i];
                    if d.min(total - d) <= std::f64::consts::PI * hw {
                        continue;
                    }
                    let (a, b) = (pts[i], pts[j]);
                    let dist = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
                    assert!(dist >= 2.0 * hw, "env {e}: points {i}, {j} {dist} m apart");
                }
            }
        }
        assert!(written >= 59, "{written} of 60 lanes wrote a track");
    }

    #[test]
    fn clearance_verdicts_equal_the_all_pairs_test() {
        // The leg-pair and lane filters only skip pairs that cannot fail: the verdict equals that
        // of testing every pair in the window whose boxes meet, on skeletons of real draws, at
        // half widths from the preset's to ones at which most draws fail.
        // With final points the cone of headings skips leg pairs too.
        let mut refused = 0;
        let mut kept = 0;
        let cases = [6.0f32, 12.0, 20.0, 30.0]
            .into_iter()
            .flat_map(|hw| [None, Some(final_spacing())].map(|spacing| (hw, spacing)));
        for (case, (hw, spacing)) in cases.enumerate() {
            let c = Circuit {
                half_width_m: hw,
                min_turn_radius_m: 12.0f32.max(hw),
                spacing,
                ..f1_like()
            };
            let mut scratch = vec![f32::NAN; c.scratch_len()];
            let mut out = vec![Vec2::NAN; c.max_points()];
            for e in 0..150 {
                let mut rng = LaneRng::new(13, e, case as u32, 1);
                let (legs, local, counts, mut sk) = c.scratch_parts(&mut scratch);
                let (written, n, _) = c.draw(&mut rng, legs, local, counts, &mut out, &mut sk);
                if written == 0 {
                    continue;
                }
                let verdict = c.clear(&legs[..n], &mut sk);
                let clearance = 2.0 * c.half_width_m;
                let near = PI * c.half_width_m;
                let safe = TAU * c.min_turn_radius_m - near;
                let m = sk.n;
                let (pts, arc, pad) = (&sk.pts[..=m], &sk.arc[..=m], &sk.pad[..m]);
                let boxed = |v: usize| {
                    let (p, q) = (pts[v], pts[v + 1]);
                    let inflate = 0.5 * clearance + pad[v];
                    [
                        p[0].min(q[0]) - inflate,
                        p[1].min(q[1]) - inflate,
                        p[0].max(q[0]) + inflate,
                        p[1].max(q[1]) + inflate,
                    ]
                };
                let mut all_pairs = true;
                for i in 0..m {
                    for j in i + 1..m {
                        let in_window = window_holds(arc, i, j, near, safe);
                        let (x, y) = (boxed(i), boxed(j));
                        let meet = x[2] >= y[0] && y[2] >= x[0] && x[3] >= y[1] && y[3] >= x[1];
                        if in_window && meet {
                            let need = clearance + pad[i] + pad[j];
                            if segment_segment2(pts[i], pts[i + 1], pts[j], pts[j + 1])
                                < need * need
                            {
                                all_pairs = false;
                            }
                        }
                    }
                }
                assert_eq!(verdict, all_pairs, "half width {hw}, env {e}");
                if verdict {
                    kept += 1;
                } else {
                    refused += 1;
                }
            }
        }
        assert!(
            refused >= 60 && kept >= 200,
            "{refused} refused, {kept} kept"
        );
    }

    /// Whether skeleton segments `i < j` lie in the clearance check's window, written out from
    /// its definition: farther apart along the track than `near` and than `safe`, both ways
    /// round the loop (`arc` holds the track's length after the last vertex).
    fn window_holds(arc: &[f32], i: usize, j: usize, near: f32, safe: f32) -> bool {
        let total = arc[arc.len() - 1];
        let (a0, a1) = (arc[i], arc[i + 1]);
        arc[j] > a1 + near
            && arc[j + 1] > a0 + safe
            && arc[j + 1] < a0 + (total - near)
            && arc[j] < a1 + (total - safe)
    }

    /// The exact distance between the segments `p0 p1` and `q0 q1`, in f64: 0 where they cross,
    /// else the least of the four endpoint-to-segment distances.
    fn segment_distance_f64(p0: Vec2, p1: Vec2, q0: Vec2, q1: Vec2) -> f64 {
        let f = |p: Vec2| (f64::from(p[0]), f64::from(p[1]));
        let (p0, p1, q0, q1) = (f(p0), f(p1), f(q0), f(q1));
        let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| {
            (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
        };
        let (d1, d2) = (cross(q0, q1, p0), cross(q0, q1, p1));
        let (d3, d4) = (cross(p0, p1, q0), cross(p0, p1, q1));
        if d1 * d2 < 0.0 && d3 * d4 < 0.0 {
            return 0.0;
        }
        let to_segment = |p: (f64, f64), a: (f64, f64), b: (f64, f64)| {
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let l2 = dx * dx + dy * dy;
            let t = if l2 > 0.0 {
                (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / l2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (p.0 - a.0 - t * dx).hypot(p.1 - a.1 - t * dy)
        };
        to_segment(p0, q0, q1)
            .min(to_segment(p1, q0, q1))
            .min(to_segment(q0, p0, p1))
            .min(to_segment(q1, p0, p1))
    }

    /// The spacing of the `circuit` preset's final points.
    fn final_spacing() -> FinalSpacing {
        FinalSpacing {
            min_spacing_m: 5.0,
            max_spacing_m: 25.0,
            sagitta_m: 0.25,
            n_max: 512,
        }
    }

    #[test]
    fn leg_pairs_in_a_narrow_cone_keep_their_clearance() {
        // The premise of the cone's skip, on the skeletons of real draws with final points: every
        // segment pair of the leg pairs it skips that lies in the window is at least 2·hw plus
        // both pads apart (f64 distances), and it skips at least a fifth of all leg pairs.
        let mut skipped = 0;
        let mut pairs = 0;
        let mut closest = f64::INFINITY;
        for (case, hw) in [4.0f32, 6.0, 9.0].into_iter().enumerate() {
            let c = Circuit {
                half_width_m: hw,
                spacing: Some(final_spacing()),
                ..f1_like()
            };
            let mut scratch = vec![f32::NAN; c.scratch_len()];
            let mut out = vec![Vec2::NAN; c.max_points()];
            for e in 0..200 {
                let mut rng = LaneRng::new(17, e, case as u32, 1);
                let (legs, local, counts, mut sk) = c.scratch_parts(&mut scratch);
                let (written, n, _) = c.draw(&mut rng, legs, local, counts, &mut out, &mut sk);
                if written == 0 {
                    continue;
                }
                let m = sk.n;
                let (pts, arc, pad) = (&sk.pts[..=m], &sk.arc[..=m], &sk.pad[..m]);
                let first: Vec<usize> = sk.first[..=n].iter().map(|&w| vertex(w)).collect();
                let clearance = 2.0 * hw;
                let near = PI * hw;
                let safe = TAU * c.min_turn_radius_m - near;
                let pad_max = pad.iter().fold(0.0f32, |a, &b| a.max(b));
                let cone = c.cone(clearance + 2.0 * pad_max, near);
                assert!(cone > 0.0, "hw {hw}, env {e}: no cone");
                for a in 0..n {
                    let end = cone_end(&legs[..n], a, cone);
                    pairs += n - a;
                    skipped += end - a;
                    for b in a..end {
                        for i in first[a]..first[a + 1] {
                            for j in first[b].max(i + 1)..first[b + 1] {
                                if !window_holds(arc, i, j, near, safe) {
                                    continue;
                                }
                                let need = f64::from(clearance + pad[i] + pad[j]);
                                let d =
                                    segment_distance_f64(pts[i], pts[i + 1], pts[j], pts[j + 1]);
                                closest = closest.min(d / need);
                                assert!(
                                    d >= need,
                                    "hw {hw}, env {e}: legs {a}, {b}, segments {i}, {j}: {d} m"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert!(
            skipped * 5 >= pairs,
            "the cone skipped {skipped} of {pairs} leg pairs"
        );
        assert!(closest.is_finite(), "no skipped pair lay in the window");
    }

    #[test]
    fn a_track_passing_too_close_to_itself_is_refused() {
        // A loop whose return leg runs back along its first straight at distance `gap`, far
        // from it along the track: refused under 2·hw, kept above.
        let c = f1_like();
        let hw = c.half_width_m;
        for (gap, keeps) in [(2.0 * hw - 0.5, false), (2.0 * hw + 1.0, true)] {
            let corners = [
                (0.0, 0.0),
                (400.0, 0.0),
                (400.0, 100.0),
                (200.0, 100.0),
                (200.0, gap),
                (100.0, gap),
                (100.0, 100.0),
                (0.0, 100.0),
            ];
            let mut pts = vec![Vec2::ZERO; 9];
            let mut arc = vec![0.0f32; 9 + LANES];
            let mut pad = vec![0.0f32; 9];
            let mut first: Vec<f32> = [0u32, 4, 8].into_iter().map(f32::from_bits).collect();
            let mut legs = vec![0.0f32; 5 * (3 + LANES)];
            let mut seg_boxes = vec![0.0f32; 4 * (9 + LANES)];
            let mut sk = Skeleton {
                pts: &mut pts,
                arc: &mut arc,
                pad: &mut pad,
                first: &mut first,
                legs: &mut legs,
                seg_boxes: &mut seg_boxes,
                n: 0,
            };
            let mut s = 0.0f32;
            for (k, &(x, y)) in corners.iter().enumerate() {
                let p = Vec2::new(x, y);
                if k > 0 {
                    s += (p - sk.pts[k - 1]).length();
                }
                sk.push(p, s, 0.0);
            }
            sk.pts[8] = sk.pts[0];
            sk.arc[8] = s + (sk.pts[0] - sk.pts[7]).length();
            // Two legs, each turning by π (the turns matter only to the cone, which needs
            // final points).
            let drawn = [PI, PI].map(|turn| Leg {
                turn,
                ..Leg::zeroed()
            });
            assert_eq!(c.clear(&drawn, &mut sk), keeps, "gap {gap}");
        }
    }

    #[test]
    fn closes_with_total_turning_two_pi() {
        let c = f1_like();
        let mut scratch = vec![f32::NAN; c.scratch_len()];
        let mut out = vec![Vec2::NAN; c.max_points()];
        let mut closed = 0;
        for e in 0..200 {
            let mut rng = LaneRng::new(7, e, 0, 1);
            let n = c.run_lane(&mut rng, &mut scratch, &mut [], &mut out);
            if n == 0 {
                continue;
            }
            closed += 1;
            let pts = &out[..n];
            let mut turning = 0.0f64;
            let mut longest = 0.0f64;
            for i in 0..n {
                let a = pts[(i + n - 1) % n];
                let p = pts[i];
                let b = pts[(i + 1) % n];
                let (ux, uy) = (f64::from(p[0] - a[0]), f64::from(p[1] - a[1]));
                let (vx, vy) = (f64::from(b[0] - p[0]), f64::from(b[1] - p[1]));
                if ux * ux + uy * uy > 0.0 && vx * vx + vy * vy > 0.0 {
                    turning += (ux * vy - uy * vx).atan2(ux * vx + uy * vy);
                }
                longest = longest.max((vx * vx + vy * vy).sqrt());
            }
            assert!(
                (turning.abs() - std::f64::consts::TAU).abs() < 1e-3,
                "env {e}: turning {turning}"
            );
            // The closing segment is a straight's or a corner step's, not a gap.
            let (a, b) = (pts[n - 1], pts[0]);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let close = f64::from((dx * dx + dy * dy).sqrt());
            assert!(close <= longest + 1e-6, "env {e}: closing segment {close}");
        }
        assert!(closed >= 190, "{closed} of 200 attempts closed");
    }
}
