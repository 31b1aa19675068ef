//! Resampling of a closed polyline: at constant spacing, or curvature-adaptive.
//!
//! **Uniform** ([`resample_closed`]). The point count is `round(L / spacing)` clamped to
//! `[MIN_POINTS, n_max]`, so a long track on a small `n_max` gets a wider spacing rather than
//! being cut. Points are placed at arc lengths `k · L / count` along the closed polyline, walking
//! it once (sequential per lane).
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
//! blend keeps `W`, so the count and the mean do not move. Two walks over the raw polyline: one
//! sums `L`, `W` and the density range, the other places the points (both compute the densities
//! with the same operations, so they agree bit for bit). IEEE operations and `sqrt` only.

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

/// The raw polyline's segments in order, each in three pieces with their densities: segment `i`
/// runs from `raw[i]` to `raw[i + 1]` (the closing one last). A vertex's turn `θ` spreads over
/// its shorter leg `m` (`κ = sin θ / m`), so the part of each leg next to the vertex within its
/// [`reach`] (at least `m / 2`, at most half the leg) takes the vertex's density and the rest of
/// the segment, straight, the least density `w_lo`: a long straight is coarse but for a few
/// points at its ends at the spacing of the corners' ends.
struct DensityWalk<'a> {
    raw: &'a [Vec2],
    k: Densities,
    /// Index of the current segment.
    seg: usize,
    /// The current segment's and the next one's vectors and lengths.
    d_cur: Vec2,
    d_next: Vec2,
    len_cur: f32,
    len_next: f32,
    /// Densities at the current segment's start and end vertices.
    w_start: f32,
    w_end: f32,
    /// Lengths of the current segment's first and last pieces (at the start and end vertices'
    /// densities); the middle one, straight at `w_lo`, is `len_cur − e_start − e_end ≥ 0`.
    e_start: f32,
    e_end: f32,
    /// The end vertex's reach.
    r_end: f32,
}

impl<'a> DensityWalk<'a> {
    /// At segment 0 of `raw` (at least 3 points).
    #[inline(always)]
    fn new(raw: &'a [Vec2], rule: &AdaptiveSpacing) -> Self {
        let n = raw.len();
        let k = Densities {
            inv_8tol: 1.0 / (8.0 * rule.sagitta_m),
            w_lo: 1.0 / rule.max_spacing_m,
            w_hi: 1.0 / rule.min_spacing_m,
        };
        let d_last = delta(raw[n - 1], raw[0]);
        let d_cur = delta(raw[0], raw[1]);
        let d_next = delta(raw[1], raw[2]);
        let (len_last, len_cur, len_next) = (norm(d_last), norm(d_cur), norm(d_next));
        let w_start = vertex_density(d_last, d_cur, len_last, len_cur, &k);
        let w_end = vertex_density(d_cur, d_next, len_cur, len_next, &k);
        let r_end = reach(w_end, len_cur, len_next);
        Self {
            raw,
            k,
            seg: 0,
            d_cur,
            d_next,
            len_cur,
            len_next,
            w_start,
            w_end,
            e_start: piece(len_cur, reach(w_start, len_last, len_cur)),
            e_end: piece(len_cur, r_end),
            r_end,
        }
    }

    /// The current segment's warped length with the densities `w_start`, `w_lo`, `w_end` of
    /// its pieces moved to `blend(w)`.
    #[inline(always)]
    fn warped(&self, blend: impl Fn(f32) -> f32) -> f32 {
        let mid = self.len_cur - self.e_start - self.e_end;
        self.e_start * blend(self.w_start)
            + mid * blend(self.k.w_lo)
            + self.e_end * blend(self.w_end)
    }

    /// Moves to the next segment (`seg + 1 < n`).
    #[inline(always)]
    fn advance(&mut self) {
        let n = self.raw.len();
        self.seg += 1;
        let i = next(self.seg, n);
        self.d_cur = self.d_next;
        self.len_cur = self.len_next;
        self.d_next = delta(self.raw[i], self.raw[next(i, n)]);
        self.len_next = norm(self.d_next);
        self.w_start = self.w_end;
        self.w_end = vertex_density(
            self.d_cur,
            self.d_next,
            self.len_cur,
            self.len_next,
            &self.k,
        );
        self.e_start = piece(self.len_cur, self.r_end);
        self.r_end = reach(self.w_end, self.len_cur, self.len_next);
        self.e_end = piece(self.len_cur, self.r_end);
    }
}

/// Resamples the closed polyline `raw` into `out` with curvature-adaptive spacing (the module
/// doc's rule); returns the count (0 when `raw` has fewer than 3 points, a zero length or
/// non-finite points).
pub fn resample_adaptive(raw: &[Vec2], rule: &AdaptiveSpacing, out: &mut [Vec2]) -> usize {
    let n = raw.len();
    if n < 3 {
        return 0;
    }
    // Walk 1: the length, the warped length and the range of the densities of the pieces of
    // positive length (`w_lo` is the least density there is).
    let mut walk = DensityWalk::new(raw, rule);
    let (mut length, mut warped) = (0.0f32, 0.0f32);
    let (mut w_min, mut w_max) = (f32::INFINITY, 0.0f32);
    loop {
        length += walk.len_cur;
        warped += walk.warped(|w| w);
        for (e, w) in [(walk.e_start, walk.w_start), (walk.e_end, walk.w_end)] {
            if e > 0.0 {
                w_min = if w < w_min { w } else { w_min };
                w_max = if w > w_max { w } else { w_max };
            }
        }
        if walk.len_cur - walk.e_start - walk.e_end > 0.0 {
            w_min = walk.k.w_lo;
        }
        if walk.seg + 1 >= n {
            break;
        }
        walk.advance();
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
    let n_max = out.len();
    let wanted = crate::math::round_small(warped);
    let count = if wanted >= n_max as f32 {
        n_max
    } else {
        (wanted as usize).max(MIN_POINTS).min(n_max)
    };
    let step = warped / count as f32;
    // Walk 2: the points at warped lengths k · step.
    let blend = |w: f32| w + lambda * (w_mean - w);
    let mut walk = DensityWalk::new(raw, rule);
    let mut seg_start = 0.0f32;
    let mut seg_len = walk.warped(blend);
    for (k, o) in out[..count].iter_mut().enumerate() {
        let target = k as f32 * step;
        while walk.seg + 1 < n && seg_start + seg_len < target {
            seg_start += seg_len;
            walk.advance();
            seg_len = walk.warped(blend);
        }
        // The arc length into the segment of the warped length `u` into it, piece by piece.
        let u = target - seg_start;
        let (w_s, w_m, w_e) = (blend(walk.w_start), blend(walk.k.w_lo), blend(walk.w_end));
        let mid = walk.len_cur - walk.e_start - walk.e_end;
        let (u0, u1) = (walk.e_start * w_s, mid * w_m);
        let s = if u < u0 {
            u / w_s
        } else if u < u0 + u1 {
            walk.e_start + (u - u0) / w_m
        } else {
            walk.e_start + mid + (u - u0 - u1) / w_e
        };
        let t = if walk.len_cur > 0.0 {
            (s / walk.len_cur).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let a = raw[walk.seg];
        let d = walk.d_cur;
        *o = Vec2::new(a[0] + d[0] * t, a[1] + d[1] * t);
    }
    count
}

/// Length of the closed polyline `pts`.
pub fn closed_length(pts: &[Vec2]) -> f32 {
    // The segments in index order, the closing one last: the same sum as `seg_length` over
    // `0..n`, without a wrap test per point.
    let mut total = 0.0;
    for (&a, &b) in pts.iter().zip(pts.iter().skip(1)) {
        total += distance(a, b);
    }
    if let (Some(&last), Some(&first)) = (pts.last(), pts.first()) {
        total += distance(last, first);
    }
    total
}

/// Resamples the closed polyline `raw` at constant spacing into `out`; returns the count
/// (0 when `raw` has fewer than 3 points, a zero length or non-finite points).
pub fn resample_closed(raw: &[Vec2], spacing_m: f32, out: &mut [Vec2]) -> usize {
    let n = raw.len();
    if n < 3 {
        return 0;
    }
    let length = closed_length(raw);
    if !(length.is_finite() && length > 0.0) {
        return 0;
    }
    let n_max = out.len();
    let wanted = crate::math::round_small(length / spacing_m);
    let count = if wanted >= n_max as f32 {
        n_max
    } else {
        (wanted as usize).max(MIN_POINTS).min(n_max)
    };
    let step = length / count as f32;
    // The current segment `a → b` (from raw[seg]) rolls along the polyline: each point is read
    // once and each length computed as `seg_length` does.
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
            b = raw[next(seg, n)];
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

/// `i + 1` modulo `n` for `i < n`, without a division.
#[inline(always)]
fn next(i: usize, n: usize) -> usize {
    if i + 1 < n {
        i + 1
    } else {
        0
    }
}

/// The length of the segment from `pts[i]` to the next point (`pts[0]` after the last).
#[inline(always)]
fn seg_length(pts: &[Vec2], i: usize) -> f32 {
    distance(pts[i], pts[next(i, pts.len())])
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
        let n = resample_adaptive(&raw, &RULE, &mut out);
        assert_eq!(n, 31);
        let (lo, hi) = ratios(&out[..n]);
        assert!(lo > 0.999 && hi < 1.001, "{lo} {hi}");
        // Tighter than the finest spacing allows: the spacing is the finest, 5 m.
        let raw = circle(8.0, 400);
        let n = resample_adaptive(&raw, &RULE, &mut out);
        assert_eq!(n, 10);
    }

    #[test]
    fn stadium_is_coarse_on_straights_and_fine_on_arcs() {
        // Straights of 400 m, half circles of R = 20 (h = √(8 · 20 · 0.25) ≈ 6.3 m).
        let raw = stadium(400.0, 20.0, 40);
        let mut out = [Vec2::NAN; 512];
        let n = resample_adaptive(&raw, &RULE, &mut out);
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
        let n = resample_adaptive(&raw, &rule, &mut out);
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
        let n_wide = resample_adaptive(&raw, &RULE, &mut wide);
        let mut out = [Vec2::NAN; 32];
        assert!(n_wide > 32);
        assert_eq!(resample_adaptive(&raw, &RULE, &mut out), 32);
        let (lo, hi) = ratios(&out);
        assert!(lo >= 0.3 * 0.99 && hi <= MAX_RATIO * 1.01, "{lo} {hi}");
    }

    #[test]
    fn adaptive_degenerate_inputs() {
        let mut out = [Vec2::ZERO; 16];
        let sq = [[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]].map(Vec2::from);
        assert_eq!(resample_adaptive(&sq[..2], &RULE, &mut out), 0);
        let same = [Vec2::ONE; 5];
        assert_eq!(resample_adaptive(&same, &RULE, &mut out), 0);
        let nan = [[0.0, 0.0], [f32::NAN, 0.0], [1.0, 1.0]].map(Vec2::from);
        assert_eq!(resample_adaptive(&nan, &RULE, &mut out), 0);
        // Repeated points (zero-length segments) are stepped over.
        let dup = [
            [0.0, 0.0],
            [100.0, 0.0],
            [100.0, 0.0],
            [100.0, 100.0],
            [0.0, 100.0],
        ]
        .map(Vec2::from);
        let n = resample_adaptive(&dup, &RULE, &mut out);
        assert!(n >= MIN_POINTS && out[..n].iter().all(|p| p.is_finite()));
        // A tiny loop still gets MIN_POINTS.
        let tiny = circle(0.5, 16);
        assert_eq!(resample_adaptive(&tiny, &RULE, &mut out), MIN_POINTS);
    }
}
