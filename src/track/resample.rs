//! Resampling of a closed polyline: at constant spacing, or curvature-adaptive.
//!
//! **Uniform** ([`resample_closed`]). The point count is `round(L / spacing)` clamped to
//! `[MIN_POINTS, n_max]`, so a long track on a small `n_max` gets a wider spacing rather than
//! being cut. Points are placed at arc lengths `k · L / count` along the closed polyline: the
//! running lengths summed in index order first, then each point's segment found from them
//! (sequential per lane).
//!
//! **Curvature** ([`resample_adaptive`]). A chord of length `h` on a circle of radius `R` strays
//! `h² / 8R` from it (its sagitta), so the spacing that keeps the sagitta at `tol` is
//! `h = √(8·R·tol)`: fine in corners, coarse on straights. Each raw vertex `i` gets a density
//! `w_i = 1 / h = √(κ_i / 8·tol)`, clamped to `[1 / max_spacing, 1 / spacing]`, with the turn
//! curvature `κ_i = sin θ_i / min(|a|, |b|)` of its incoming and outgoing segments `a`, `b`
//! (`θ_i` their turn; 1 for `sin θ` past 90°). The shorter leg, not the Menger circle, sets the
//! scale, so a straight's long segment does not hide the turn at its end, and a kink between two
//! long segments reads as the sharp turn it is. Raw segment `i` (from vertex `i` to `i + 1`)
//! takes the larger density of its two ends, so both sides of a turning vertex are fine.
//!
//! The points sit at equal steps of the warped length `W = Σ w_i·ℓ_i` (`ℓ_i` the segment
//! lengths): `count = round(W)` clamped to `[MIN_POINTS, n_max]` as in uniform mode (a capped
//! count widens every spacing by the same factor), so a point's segment is about
//! `(W / count)·(1 / w)` long and the mean `L / count`: its ratio to the mean is `w̄ / w`, with
//! `w̄ = W / L` the length-weighted mean density. The validity check's condition 2 wants every
//! segment within `[0.2, 2.5]` times the mean; by construction each `w_i` lies within
//! `[w̄ / MAX_RATIO, w̄ / MIN_RATIO]` (`2.2` and `0.3`, a margin for the chords and the segments
//! that straddle two densities): where the clamped densities fall outside, all of them blend
//! toward the mean, `w' = (1 − λ)·w + λ·w̄` with the least `λ` that brings the extremes in. The
//! blend keeps `W`, so the count and the mean do not move. The segment lengths, vertex densities,
//! pieces and warped lengths are computed once, in straight passes over rows of a scratch (one
//! `sqrt` per segment, one `sqrt` and two divisions per vertex); a walk sums `L`, `W` and the
//! density range, and the points are placed by a second walk over the rows (the warped lengths
//! recomputed only where the blend moves them). IEEE operations and `sqrt` only.

use super::geometry::{next_index, ordered_closed_sum};
use crate::geom::Vec2;

/// The fewest points a resampled track has.
pub const MIN_POINTS: usize = 8;

/// Largest ratio of a curvature-sampled segment's density-implied length to the mean.
pub const MAX_RATIO: f32 = 2.2;

/// Smallest ratio of a curvature-sampled segment's density-implied length to the mean.
pub const MIN_RATIO: f32 = 0.3;

/// Spacings (of its own density) that a vertex's density reaches into a long leg: the first
/// points on a straight keep the spacing of the corner's end before the straight's coarse one.
pub const REACH_SPACINGS: f32 = 2.0;

/// The spacing rule of curvature-adaptive resampling ([`resample_adaptive`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveSpacing {
    /// The finest spacing, metres (the preset's `spacing_m`).
    pub min_spacing_m: f32,
    /// The coarsest spacing, metres (before the blend toward the mean and the `n_max` cap).
    pub max_spacing_m: f32,
    /// The sagitta tolerance `tol` of `h = √(8·R·tol)`, metres.
    pub sagitta_m: f32,
}

/// Density at a raw vertex whose incoming segment is `a` and outgoing `b` (lengths `la`, `lb`):
/// points per metre, `√(κ / 8·tol)` clamped to `[w_lo, w_hi]` (`inv_8tol` = `1 / (8·tol)`), with
/// `κ = |a × b| / (|a|·|b|·min(|a|, |b|))` (`1 / min` past a 90° turn). A zero-length leg (an
/// infinite or NaN curvature) gets `w_hi`. Plain selects, no NaN-aware `min`/`max`.
#[inline(always)]
fn vertex_density(a: Vec2, b: Vec2, la: f32, lb: f32, k: &Densities) -> f32 {
    let cross = a[0] * b[1] - a[1] * b[0];
    let dot = a[0] * b[0] + a[1] * b[1];
    let m = if lb < la { lb } else { la };
    let kappa = if dot < 0.0 {
        1.0 / m
    } else {
        cross.abs() / (la * lb * m)
    };
    let w = (kappa * k.inv_8tol).sqrt();
    let w = if w < k.w_hi { w } else { k.w_hi };
    if w > k.w_lo {
        w
    } else {
        k.w_lo
    }
}

/// The constants of the densities: `1 / (8·tol)` and the clamp `[1 / max, 1 / min spacing]`.
#[derive(Clone, Copy)]
struct Densities {
    inv_8tol: f32,
    w_lo: f32,
    w_hi: f32,
}

/// `b − a`.
#[inline(always)]
fn delta(a: Vec2, b: Vec2) -> Vec2 {
    Vec2::new(b[0] - a[0], b[1] - a[1])
}

/// `|d|`, as `sqrt(dx² + dy²)`.
#[inline(always)]
fn norm(d: Vec2) -> f32 {
    (d[0] * d[0] + d[1] * d[1]).sqrt()
}

/// How far a vertex's density `w` reaches into its legs (lengths `la`, `lb`): half the shorter
/// leg, or [`REACH_SPACINGS`] spacings `1 / w` if that is farther.
#[inline(always)]
fn reach(w: f32, la: f32, lb: f32) -> f32 {
    let half = 0.5 * if lb < la { lb } else { la };
    let r = REACH_SPACINGS / w;
    if r > half {
        r
    } else {
        half
    }
}

/// The piece of a segment of length `len` that a vertex's density with reach `r` covers: at most
/// half the segment.
#[inline(always)]
fn piece(len: f32, r: f32) -> f32 {
    let half = 0.5 * len;
    if r < half {
        r
    } else {
        half
    }
}

/// `f32` words per raw point of [`resample_adaptive`]'s scratch: five rows of `raw.len()`
/// words (segment lengths, vertex densities, the two end pieces, the warped lengths).
pub const ADAPTIVE_SCRATCH_ROWS: usize = 5;

/// The warped length of each segment `i` into `warp[i]`, its pieces' densities `w[i]`, `w_lo`
/// and `w[i + 1]` (`w[0]` for the closing one) moved to `blend(w)`; the middle piece is
/// `len[i] − e_start[i] − e_end[i]`.
#[inline(always)]
fn warped_rows(
    len: &[f32],
    w: &[f32],
    e_start: &[f32],
    e_end: &[f32],
    w_lo: f32,
    warp: &mut [f32],
    blend: impl Fn(f32) -> f32,
) {
    let n = len.len();
    let one = |l: f32, ws: f32, es: f32, ee: f32, we: f32| {
        let mid = l - es - ee;
        es * blend(ws) + mid * blend(w_lo) + ee * blend(we)
    };
    let rows = len[..n - 1]
        .iter()
        .zip(&w[..n - 1])
        .zip(&e_start[..n - 1])
        .zip(&e_end[..n - 1])
        .zip(&w[1..])
        .zip(&mut warp[..n - 1]);
    for (((((&l, &ws), &es), &ee), &we), u) in rows {
        *u = one(l, ws, es, ee, we);
    }
    warp[n - 1] = one(len[n - 1], w[n - 1], e_start[n - 1], e_end[n - 1], w[0]);
}

/// The least and the greatest density of the pieces of positive length of one segment (`w_lo`
/// the least density there is): its start piece `es` at `ws`, its end piece `ee` at `we` and
/// its middle (the rest of `l`) at `w_lo`; `(∞, 0)` when none has a positive length. Every
/// density is at least `w_lo`, so a middle of positive length sets the least to `w_lo`.
#[inline(always)]
fn segment_range(l: f32, es: f32, ee: f32, ws: f32, we: f32, w_lo: f32) -> (f32, f32) {
    let lo_s = if es > 0.0 { ws } else { f32::INFINITY };
    let lo_e = if ee > 0.0 { we } else { f32::INFINITY };
    let hi_s = if es > 0.0 { ws } else { 0.0 };
    let hi_e = if ee > 0.0 { we } else { 0.0 };
    let lo = if lo_e < lo_s { lo_e } else { lo_s };
    let lo = if l - es - ee > 0.0 { w_lo } else { lo };
    let hi = if hi_e > hi_s { hi_e } else { hi_s };
    (lo, hi)
}

/// Resamples the closed polyline `raw` into `out` with curvature-adaptive spacing (the module
/// doc's rule); returns the count (0 when `raw` has fewer than 3 points, a zero length or
/// non-finite points). `scratch` holds at least [`ADAPTIVE_SCRATCH_ROWS`]` · raw.len()` words;
/// nothing in it outlives the call.
pub fn resample_adaptive(
    raw: &[Vec2],
    rule: &AdaptiveSpacing,
    out: &mut [Vec2],
    scratch: &mut [f32],
) -> usize {
    let n = raw.len();
    if n < 3 {
        return 0;
    }
    let k = Densities {
        inv_8tol: 1.0 / (8.0 * rule.sagitta_m),
        w_lo: 1.0 / rule.max_spacing_m,
        w_hi: 1.0 / rule.min_spacing_m,
    };
    // Segment i runs from raw[i] to raw[i + 1] (the closing one last). Its rows: its length,
    // the density of its start vertex i (incoming segment i − 1, outgoing i), its first and
    // last pieces (each the piece of the end vertex's reach) and its warped length. Straight
    // passes over the rows, each value by the rule's operations.
    let (len, rest) = scratch[..ADAPTIVE_SCRATCH_ROWS * n].split_at_mut(n);
    let (w, rest) = rest.split_at_mut(n);
    let (e_start, rest) = rest.split_at_mut(n);
    let (e_end, warp) = rest.split_at_mut(n);
    for ((a, b), l) in raw.iter().zip(&raw[1..]).zip(len.iter_mut()) {
        *l = norm(delta(*a, *b));
    }
    len[n - 1] = norm(delta(raw[n - 1], raw[0]));
    let legs = raw
        .iter()
        .zip(&raw[1..])
        .zip(&raw[2..])
        .zip(len.iter().zip(&len[1..]))
        .zip(&mut w[1..n - 1]);
    for ((((a, b), c), (&la, &lb)), d) in legs {
        *d = vertex_density(delta(*a, *b), delta(*b, *c), la, lb, &k);
    }
    let ends = [(n - 1, 0, 1), (n - 2, n - 1, 0)];
    for (prev, i, nxt) in ends {
        w[i] = vertex_density(
            delta(raw[prev], raw[i]),
            delta(raw[i], raw[nxt]),
            len[prev],
            len[i],
            &k,
        );
    }
    // Vertex i's reach covers the start of segment i and the end of segment i − 1.
    let r0 = reach(w[0], len[n - 1], len[0]);
    e_start[0] = piece(len[0], r0);
    e_end[n - 1] = piece(len[n - 1], r0);
    let pieces = len
        .iter()
        .zip(&len[1..])
        .zip(&w[1..])
        .zip(e_start[1..].iter_mut().zip(e_end[..n - 1].iter_mut()));
    for (((&la, &lb), &wv), (es, ee)) in pieces {
        let r = reach(wv, la, lb);
        *es = piece(lb, r);
        *ee = piece(la, r);
    }
    warped_rows(len, w, e_start, e_end, k.w_lo, warp, |x| x);
    // The length, the warped length and the range of the densities of the pieces of positive
    // length. Each segment's own range is taken first, with selects, so the running minimum
    // and maximum each take one operation a segment, as the sums do (a chain of two or three
    // per segment held the walk back); the order of a `min` or `max` does not change it.
    let (mut length, mut warped) = (0.0f32, 0.0f32);
    let (mut w_min, mut w_max) = (f32::INFINITY, 0.0f32);
    for i in 0..n {
        length += len[i];
        warped += warp[i];
        let w_end = w[next_index(i, n)];
        let (lo, hi) = segment_range(len[i], e_start[i], e_end[i], w[i], w_end, k.w_lo);
        w_min = if lo < w_min { lo } else { w_min };
        w_max = if hi > w_max { hi } else { w_max };
    }
    if !(length.is_finite() && length > 0.0 && warped.is_finite()) {
        return 0;
    }
    // The least blend toward the mean density that keeps every density within
    // [w̄ / MAX_RATIO, w̄ / MIN_RATIO].
    let w_mean = warped / length;
    let (w_floor, w_ceil) = (w_mean / MAX_RATIO, w_mean / MIN_RATIO);
    let mut lambda = 0.0f32;
    if w_min < w_floor {
        lambda = (w_floor - w_min) / (w_mean - w_min);
    }
    if w_max > w_ceil {
        let l = (w_max - w_ceil) / (w_max - w_mean);
        lambda = if l > lambda { l } else { lambda };
    }
    let count = point_count(warped, out.len());
    let step = warped / count as f32;
    // The warped lengths at the blended densities. `w + 0 · (w̄ − w)` is `w` for the finite
    // densities and a finite mean, so without a blend the rows stand as they are.
    let blend = |x: f32| x + lambda * (w_mean - x);
    if lambda != 0.0 || !w_mean.is_finite() {
        warped_rows(len, w, e_start, e_end, k.w_lo, warp, blend);
    }
    // The points at warped lengths k · step.
    let w_m = blend(k.w_lo);
    let mut seg = 0;
    let mut seg_start = 0.0f32;
    let mut seg_len = warp[0];
    for (j, o) in out[..count].iter_mut().enumerate() {
        let target = j as f32 * step;
        while seg + 1 < n && seg_start + seg_len < target {
            seg_start += seg_len;
            seg += 1;
            seg_len = warp[seg];
        }
        // The arc length into the segment of the warped length `u` into it, piece by piece.
        let u = target - seg_start;
        let b = next_index(seg, n);
        let (w_s, w_e) = (blend(w[seg]), blend(w[b]));
        let (l, es) = (len[seg], e_start[seg]);
        let mid = l - es - e_end[seg];
        let (u0, u1) = (es * w_s, mid * w_m);
        let s = if u < u0 {
            u / w_s
        } else if u < u0 + u1 {
            es + (u - u0) / w_m
        } else {
            es + mid + (u - u0 - u1) / w_e
        };
        let t = if l > 0.0 {
            (s / l).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let a = raw[seg];
        let d = delta(a, raw[b]);
        *o = Vec2::new(a[0] + d[0] * t, a[1] + d[1] * t);
    }
    count
}

/// Length of the closed polyline `pts`: the segments' lengths in index order, the closing one
/// last (the same sum as `seg_length` over `0..n`), as [`ordered_closed_sum`] adds them.
pub fn closed_length(pts: &[Vec2]) -> f32 {
    ordered_closed_sum(pts, distance)
}

/// Raw points up to which [`resample_closed`] keeps the running lengths on the stack (4 KB);
/// longer polylines are walked segment by segment ([`resample_walk`]).
const ENDS_MAX: usize = 1022;

/// Raw points up to which [`resample_closed`] takes a 1 KB array for them (the rest up to
/// [`ENDS_MAX`] the 4 KB one): an array is zeroed whole on every call.
const ENDS_SMALL: usize = 254;

/// Resamples the closed polyline `raw` at constant spacing into `out`; returns the count
/// (0 when `raw` has fewer than 3 points, a zero length or non-finite points).
///
/// The same points as walking the polyline (`resample_walk`), found another way: the running
/// lengths at the segments' ends are summed first, in index order (the walk's own sums, so the
/// same bits, and their last the closed length), and each point moves its segment on by up to
/// two of them with no branch, one by one past that (a segment shorter than the step), so the
/// walk's data-dependent exit, which the points' lengths make a coin toss where raw segments
/// and points are about as long, no longer stalls the pass.
pub fn resample_closed(raw: &[Vec2], spacing_m: f32, out: &mut [Vec2]) -> usize {
    let n = raw.len();
    if n < 3 {
        return 0;
    }
    if n <= ENDS_SMALL {
        resample_by_ends(raw, spacing_m, out, &mut [0.0f32; ENDS_SMALL + 2])
    } else if n <= ENDS_MAX {
        resample_by_ends(raw, spacing_m, out, &mut [0.0f32; ENDS_MAX + 2])
    } else {
        resample_walk(raw, spacing_m, out)
    }
}

/// [`resample_closed`] for `3 ≤ raw.len() ≤ ends.len() − 2`, the running lengths in `ends`.
#[inline(always)]
fn resample_by_ends(raw: &[Vec2], spacing_m: f32, out: &mut [Vec2], ends: &mut [f32]) -> usize {
    let n = raw.len();
    // `ends[i]` the length up to point `i`: the start of segment `i` (the closing one last),
    // `ends[n]` the closed length, summed as `closed_length` sums it.
    let ends = &mut ends[..n + 2];
    for (e, (a, b)) in ends[1..n].iter_mut().zip(raw.iter().zip(&raw[1..])) {
        *e = distance(*a, *b);
    }
    ends[n] = distance(raw[n - 1], raw[0]);
    let mut length = 0.0f32;
    for e in &mut ends[1..=n] {
        length += *e;
        *e = length;
    }
    if !(length.is_finite() && length > 0.0) {
        return 0;
    }
    let count = point_count(length / spacing_m, out.len());
    let step = length / count as f32;
    // The walk steps past segment `seg < n − 1` while its end is below the target, and never
    // past the last: its end reads as infinite.
    ends[n] = f32::INFINITY;
    ends[n + 1] = f32::INFINITY;
    let ends = &*ends;
    let mut seg = 0;
    for (k, o) in out[..count].iter_mut().enumerate() {
        let target = k as f32 * step;
        let one = usize::from(ends[seg + 1] < target);
        let two = one & usize::from(ends[seg + 2] < target);
        seg += one + two;
        while ends[seg + 1] < target {
            seg += 1;
        }
        let a = raw[seg];
        let b = raw[next_index(seg, n)];
        let seg_len = distance(a, b);
        let t = if seg_len > 0.0 {
            ((target - ends[seg]) / seg_len).clamp(0.0, 1.0)
        } else {
            0.0
        };
        *o = Vec2::new(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t);
    }
    count
}

/// [`resample_closed`] by walking the polyline: the current segment rolls along it, each point
/// read once and each length computed as `seg_length` does (the kernel twin's walk).
fn resample_walk(raw: &[Vec2], spacing_m: f32, out: &mut [Vec2]) -> usize {
    let n = raw.len();
    if n < 3 {
        return 0;
    }
    let length = closed_length(raw);
    if !(length.is_finite() && length > 0.0) {
        return 0;
    }
    let count = point_count(length / spacing_m, out.len());
    let step = length / count as f32;
    let mut seg = 0;
    let mut seg_start = 0.0f32;
    let (mut a, mut b) = (raw[0], raw[1]);
    let mut seg_len = seg_length(raw, 0);
    for (k, o) in out[..count].iter_mut().enumerate() {
        let target = k as f32 * step;
        while seg + 1 < n && seg_start + seg_len < target {
            seg_start += seg_len;
            seg += 1;
            a = b;
            b = raw[next_index(seg, n)];
            seg_len = distance(a, b);
        }
        let t = if seg_len > 0.0 {
            ((target - seg_start) / seg_len).clamp(0.0, 1.0)
        } else {
            0.0
        };
        *o = Vec2::new(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t);
    }
    count
}

/// The point count for `units` spacings' worth of curve: `round(units)` clamped to
/// `[MIN_POINTS, n_max]` (a negative or NaN `units` gives `MIN_POINTS`).
fn point_count(units: f32, n_max: usize) -> usize {
    let wanted = crate::math::round_small(units);
    if wanted >= n_max as f32 {
        n_max
    } else {
        (wanted as usize).max(MIN_POINTS).min(n_max)
    }
}

/// The length of the segment from `pts[i]` to the next point (`pts[0]` after the last).
#[inline(always)]
fn seg_length(pts: &[Vec2], i: usize) -> f32 {
    distance(pts[i], pts[next_index(i, pts.len())])
}

/// `|b − a|`, as `sqrt(dx² + dy²)` of `b − a`.
#[inline(always)]
fn distance(a: Vec2, b: Vec2) -> f32 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    (dx * dx + dy * dy).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `closed_length` sums its blocks of lengths to the same bits as adding each segment's
    /// length in index order, the closing one last, for every count around the block size.
    #[test]
    fn closed_length_is_the_ordered_sum() {
        let mut unit = crate::track::geometry::test_unit(0x6c07_8965);
        for n in 0..=4 * crate::track::geometry::AREA_BLOCK + 3 {
            let pts: Vec<Vec2> = (0..n)
                .map(|_| Vec2::new(50.0 * unit(), 0.01 * unit()))
                .collect();
            let mut want = 0.0f32;
            for i in 0..n {
                want += seg_length(&pts, i);
            }
            assert_eq!(closed_length(&pts).to_bits(), want.to_bits(), "n {n}");
        }
    }

    /// `resample_closed` places the walk's points to the bit: polylines of 3 to past
    /// `ENDS_SMALL` and `ENDS_MAX` points whose segments run from far shorter than the spacing to far longer,
    /// with repeated points, far from the origin, and counts capped by the output.
    #[test]
    fn resample_closed_is_the_walk() {
        let mut unit = crate::track::geometry::test_unit(0x1b87_3593);
        let mut placed = 0;
        for case in 0..3000 {
            let n = if case % 50 == 0 {
                ENDS_MAX - 2 + case % 7
            } else if case % 50 == 1 {
                ENDS_SMALL - 2 + case % 7
            } else {
                3 + case % 400
            };
            let offset = [0.0f32, 700.0, -20000.0][case % 3];
            let radius = 100.0 * (0.2 + unit());
            let mut raw: Vec<Vec2> = (0..n)
                .map(|i| {
                    let t = (i as f32 + 0.8 * unit()) / n as f32;
                    let (s, c) = crate::math::sin_cos(crate::math::TAU * t);
                    let r = radius * (1.0 + 0.3 * unit());
                    Vec2::new(offset + r * c, offset + r * s)
                })
                .collect();
            if case % 5 == 0 {
                for _ in 0..1 + n / 10 {
                    let i = (unit() * (n - 1) as f32) as usize;
                    raw[i + 1] = raw[i];
                }
            }
            let spacing = radius * [0.002f32, 0.02, 0.05, 0.2, 1.0][case % 5] * (0.5 + unit());
            let cap = [4096, 256, 16][case % 3];
            let (mut got, mut want) = (vec![Vec2::NAN; cap], vec![Vec2::NAN; cap]);
            let count = resample_closed(&raw, spacing, &mut got);
            assert_eq!(
                count,
                resample_walk(&raw, spacing, &mut want),
                "case {case}"
            );
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g[0].to_bits(), w[0].to_bits(), "case {case} point {k}");
                assert_eq!(g[1].to_bits(), w[1].to_bits(), "case {case} point {k}");
            }
            placed += count;
        }
        assert!(placed > 100_000, "{placed}");
    }

    #[test]
    fn square_resamples_evenly() {
        let sq = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]].map(Vec2::from);
        let mut out = [Vec2::NAN; 64];
        let n = resample_closed(&sq, 1.0, &mut out);
        assert_eq!(n, 40);
        for i in 0..n {
            let a = out[i];
            let b = out[(i + 1) % n];
            let d = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            assert!((d - 1.0).abs() < 1e-4, "segment {i}: {d}");
        }
    }

    #[test]
    fn count_capped_by_capacity_and_degenerate_inputs() {
        let sq = [[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]].map(Vec2::from);
        let mut out = [Vec2::ZERO; 16];
        assert_eq!(resample_closed(&sq, 1.0, &mut out), 16);
        assert_eq!(resample_closed(&sq[..2], 1.0, &mut out), 0);
        let same = [Vec2::ONE; 5];
        assert_eq!(resample_closed(&same, 1.0, &mut out), 0);
        let nan = [[0.0, 0.0], [f32::NAN, 0.0], [1.0, 1.0]].map(Vec2::from);
        assert_eq!(resample_closed(&nan, 1.0, &mut out), 0);
    }

    /// `segment_range` is the range of the densities of a segment's pieces of positive length,
    /// as taking each piece in turn finds it: pieces of zero length (each end alone, both, the
    /// middle) and densities at and above `w_lo`.
    #[test]
    fn segment_range_takes_the_pieces_of_positive_length() {
        let mut unit = crate::track::geometry::test_unit(0x2f6b_1d3c);
        let w_lo = 0.04f32;
        for case in 0..4000 {
            let l = [0.0f32, 1.0, 7.5, 30.0][case % 4];
            let half = 0.5 * l;
            let pick = |c: usize, u: f32| match c % 3 {
                0 => 0.0,
                1 => half,
                _ => half * u,
            };
            let (es, ee) = (pick(case / 4, unit()), pick(case / 12, unit()));
            let (ws, we) = (w_lo + 0.3 * unit(), [w_lo, w_lo + 0.3 * unit()][case % 2]);
            let (mut lo, mut hi) = (f32::INFINITY, 0.0f32);
            for (e, d) in [(es, ws), (ee, we)] {
                if e > 0.0 {
                    lo = lo.min(d);
                    hi = hi.max(d);
                }
            }
            if l - es - ee > 0.0 {
                lo = w_lo;
            }
            let got = segment_range(l, es, ee, ws, we, w_lo);
            assert_eq!(
                (got.0.to_bits(), got.1.to_bits()),
                (lo.to_bits(), hi.to_bits()),
                "case {case}"
            );
        }
    }

    /// Segment lengths of the closed polyline `pts`, the closing one last.
    fn segments(pts: &[Vec2]) -> Vec<f32> {
        let n = pts.len();
        (0..n).map(|i| distance(pts[i], pts[(i + 1) % n])).collect()
    }

    /// The condition-2 ratios of `pts`: shortest and longest segment over the mean.
    fn ratios(pts: &[Vec2]) -> (f32, f32) {
        let seg = segments(pts);
        let mean = seg.iter().sum::<f32>() / seg.len() as f32;
        let lo = seg.iter().cloned().fold(f32::INFINITY, f32::min);
        let hi = seg.iter().cloned().fold(0.0, f32::max);
        (lo / mean, hi / mean)
    }

    /// A scratch for [`resample_adaptive`] on `raw`.
    fn scratch(raw: &[Vec2]) -> Vec<f32> {
        vec![f32::NAN; ADAPTIVE_SCRATCH_ROWS * raw.len()]
    }

    /// A circle of radius `r` as a polyline of `n` points.
    fn circle(r: f32, n: usize) -> Vec<Vec2> {
        (0..n)
            .map(|i| {
                let a = std::f64::consts::TAU * i as f64 / n as f64;
                Vec2::new((r as f64 * a.cos()) as f32, (r as f64 * a.sin()) as f32)
            })
            .collect()
    }

    /// A stadium: two straights of length `len` (each one raw segment) joined by half circles
    /// of radius `r` in `steps` raw steps each.
    fn stadium(len: f32, r: f32, steps: usize) -> Vec<Vec2> {
        let mut pts = Vec::new();
        for (cx, a0) in [
            (len, -std::f64::consts::FRAC_PI_2),
            (0.0, std::f64::consts::FRAC_PI_2),
        ] {
            for k in 0..=steps {
                let a = a0 + std::f64::consts::PI * k as f64 / steps as f64;
                pts.push(Vec2::new(
                    (cx as f64 + r as f64 * a.cos()) as f32,
                    (r as f64 * a.sin()) as f32,
                ));
            }
        }
        pts
    }

    const RULE: AdaptiveSpacing = AdaptiveSpacing {
        min_spacing_m: 5.0,
        max_spacing_m: 30.0,
        sagitta_m: 0.25,
    };

    #[test]
    fn circle_gets_uniform_spacing_from_its_radius() {
        // R = 50: h = √(8 · 50 · 0.25) = 10, so 2π·50 / 10 ≈ 31.4 → 31 points.
        let raw = circle(50.0, 400);
        let mut out = [Vec2::NAN; 256];
        let n = resample_adaptive(&raw, &RULE, &mut out, &mut scratch(&raw));
        assert_eq!(n, 31);
        let (lo, hi) = ratios(&out[..n]);
        assert!(lo > 0.999 && hi < 1.001, "{lo} {hi}");
        // Tighter than the finest spacing allows: the spacing is the finest, 5 m.
        let raw = circle(8.0, 400);
        let n = resample_adaptive(&raw, &RULE, &mut out, &mut scratch(&raw));
        assert_eq!(n, 10);
    }

    #[test]
    fn stadium_is_coarse_on_straights_and_fine_on_arcs() {
        // Straights of 400 m, half circles of R = 20 (h = √(8 · 20 · 0.25) ≈ 6.3 m).
        let raw = stadium(400.0, 20.0, 40);
        let mut out = [Vec2::NAN; 512];
        let n = resample_adaptive(&raw, &RULE, &mut out, &mut scratch(&raw));
        let pts = &out[..n];
        let (lo, hi) = ratios(pts);
        assert!(lo >= 0.3 * 0.99 && hi <= MAX_RATIO * 1.01, "{lo} {hi}");
        // Fewer points than uniform sampling at the finest spacing.
        let uniform = crate::math::round_small(closed_length(&raw) / 5.0);
        assert!((n as f32) < 0.6 * uniform, "{n} vs {uniform}");
        // Segments with both ends on a straight (|y| = 20), past the few points at the arcs'
        // spacing next to them, are coarser than those on the arcs.
        let seg = segments(pts);
        let on_straight = |p: Vec2| (p[1].abs() - 20.0).abs() < 1e-3 && p[0] > 20.0 && p[0] < 380.0;
        let (mut straight, mut arc) = (Vec::new(), Vec::new());
        for i in 0..n {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            if on_straight(a) && on_straight(b) {
                straight.push(seg[i]);
            } else if (a[0] < 0.0 && b[0] < 0.0) || (a[0] > 400.0 && b[0] > 400.0) {
                arc.push(seg[i]);
            }
        }
        let min_straight = straight.iter().cloned().fold(f32::INFINITY, f32::min);
        let max_arc = arc.iter().cloned().fold(0.0, f32::max);
        assert!(!straight.is_empty() && !arc.is_empty());
        assert!(min_straight > 2.0 * max_arc, "{min_straight} vs {max_arc}");
        // The arcs at the sagitta spacing, within the chord's rounding.
        assert!(max_arc < 6.4 && max_arc > 5.5, "{max_arc}");
    }

    #[test]
    fn blend_keeps_condition_two_when_the_range_is_wide() {
        // Straights of 2 km at 200 m and arcs of R = 100 at √(8 · 100 · 0.05) ≈ 6.3 m: the arcs
        // would be 0.16 × the mean; the blend brings them to MIN_RATIO × the mean.
        let rule = AdaptiveSpacing {
            min_spacing_m: 1.0,
            max_spacing_m: 200.0,
            sagitta_m: 0.05,
        };
        let raw = stadium(2000.0, 100.0, 200);
        let mut out = [Vec2::NAN; 4096];
        let n = resample_adaptive(&raw, &rule, &mut out, &mut scratch(&raw));
        let (lo, hi) = ratios(&out[..n]);
        assert!(lo >= MIN_RATIO * 0.97 && hi <= MAX_RATIO, "{lo} {hi}");
        assert!(
            lo < MIN_RATIO * 1.03,
            "the blend stops at the bound: {lo} {hi}"
        );
    }

    #[test]
    fn adaptive_count_capped_by_capacity_widens_every_spacing() {
        let raw = stadium(400.0, 20.0, 40);
        let mut wide = [Vec2::NAN; 512];
        let n_wide = resample_adaptive(&raw, &RULE, &mut wide, &mut scratch(&raw));
        let mut out = [Vec2::NAN; 32];
        assert!(n_wide > 32);
        assert_eq!(
            resample_adaptive(&raw, &RULE, &mut out, &mut scratch(&raw)),
            32
        );
        let (lo, hi) = ratios(&out);
        assert!(lo >= 0.3 * 0.99 && hi <= MAX_RATIO * 1.01, "{lo} {hi}");
    }

    #[test]
    fn adaptive_degenerate_inputs() {
        let mut out = [Vec2::ZERO; 16];
        let sq = [[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]].map(Vec2::from);
        assert_eq!(
            resample_adaptive(&sq[..2], &RULE, &mut out, &mut scratch(&sq[..2])),
            0
        );
        let same = [Vec2::ONE; 5];
        assert_eq!(
            resample_adaptive(&same, &RULE, &mut out, &mut scratch(&same)),
            0
        );
        let nan = [[0.0, 0.0], [f32::NAN, 0.0], [1.0, 1.0]].map(Vec2::from);
        assert_eq!(
            resample_adaptive(&nan, &RULE, &mut out, &mut scratch(&nan)),
            0
        );
        // Repeated points (zero-length segments) are stepped over.
        let dup = [
            [0.0, 0.0],
            [100.0, 0.0],
            [100.0, 0.0],
            [100.0, 100.0],
            [0.0, 100.0],
        ]
        .map(Vec2::from);
        let n = resample_adaptive(&dup, &RULE, &mut out, &mut scratch(&dup));
        assert!(n >= MIN_POINTS && out[..n].iter().all(|p| p.is_finite()));
        // A tiny loop still gets MIN_POINTS.
        let tiny = circle(0.5, 16);
        assert_eq!(
            resample_adaptive(&tiny, &RULE, &mut out, &mut scratch(&tiny)),
            MIN_POINTS
        );
    }
}
