//! Validity of a track, decided on the plan-view centerline and its two borders.
//!
//! A track is valid when all of these hold (with `hw` the half width):
//! 1. it has at least `MIN_POINTS` points and all are finite;
//! 2. it is closed with even spacing: every segment, the closing one included, lies within
//!    `[0.2, 2.5]` times the mean spacing;
//! 3. its turning number is ±1 (total signed turning ±2π within 0.05 rad);
//! 4. every turn is one a circle of radius ≥ 0.98 · `min_turn_radius` could make: the direction
//!    changes by less than 90° between consecutive segments and the Menger radius (the circle
//!    through consecutive triples) is ≥ 0.98 · `min_turn_radius` — see [`turn_complies`] for why
//!    the radius alone lets reversals through;
//! 5. its thickness is ≥ (1 − 0.02)·hw: points at arc distance > π·hw are ≥ 2·0.98·hw apart;
//! 6. the centerline is simple (no two non-consecutive segments meet);
//! 7. neither border intersects itself, and the borders do not intersect each other.
//!
//! Each test visits only the pairs a written bound cannot exclude (the bound sits beside the
//! shortcut and a unit test pins it): thickness skips pairs at index gap ≤ [`exempt_gap`] and
//! chunk pairs whose boxes are farther apart than the reach (`chunks`); the crossing tests take
//! every segment pair at small index gap and, beyond it, the segments around every pair of
//! centre points within `2·hw + longest segment` ([`Lane::thin_or_crossing`]). The crossing
//! tests are never skipped as a whole.

use super::chunks::for_close_pairs;
use super::generators::P2;
use super::geometry::{curvature_exceeds, dist, dist2, segments_intersect, signed_area2};
use crate::math::{atan2, TAU};

/// Relative slack of the thickness and turn-radius checks.
pub const SLACK: f32 = 0.02;

/// Constants of the validity check.
#[derive(Clone, Copy, Debug)]
pub struct ValidityConsts {
    /// Half width, metres.
    pub half_width_m: f32,
    /// Minimum turn radius, metres.
    pub min_turn_radius_m: f32,
}

/// Scratch of one lane: `border` and `mids` hold `2·n` points, `next` `2·n` links.
pub struct ValidityScratch<'a> {
    /// Arc length per point.
    pub arclen: &'a mut [f32],
    /// Outer then inner border points (`2·n`).
    pub border: &'a mut [P2],
    /// Border segment midpoints (`2·n`).
    pub mids: &'a mut [P2],
    /// Grid buckets.
    pub heads: &'a mut [u32],
    /// Grid links.
    pub next: &'a mut [u32],
    /// Grid cell keys.
    pub cells: &'a mut [u64],
}

/// Left unit normal of point `i` of a closed curve (from the central difference).
#[inline]
pub fn left_normal(pts: &[P2], i: usize) -> P2 {
    let n = pts.len();
    let a = pts[(i + n - 1) % n];
    let b = pts[(i + 1) % n];
    let (tx, ty) = (b[0] - a[0], b[1] - a[1]);
    let len = (tx * tx + ty * ty).sqrt();
    if len > 0.0 {
        [-ty / len, tx / len]
    } else {
        [0.0, 0.0]
    }
}

/// +1 for a counter-clockwise curve, −1 otherwise.
#[inline]
pub fn orientation(pts: &[P2]) -> f32 {
    if signed_area2(pts) >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// Whether the closed centerline `pts` makes a valid track (see the module doc).
pub fn is_valid(pts: &[P2], c: &ValidityConsts, s: &mut ValidityScratch<'_>) -> bool {
    let n = pts.len();
    if n < super::resample::MIN_POINTS || !pts.iter().all(|p| p[0].is_finite() && p[1].is_finite())
    {
        return false;
    }
    // 2. closed, even spacing; arc lengths for 5.
    let arclen = &mut s.arclen[..n];
    let mut total = 0.0f32;
    let mut shortest = f32::INFINITY;
    let mut longest_centre = 0.0f32;
    for i in 0..n {
        arclen[i] = total;
        let l = dist(pts[i], if i + 1 < n { pts[i + 1] } else { pts[0] });
        shortest = shortest.min(l);
        longest_centre = longest_centre.max(l);
        total += l;
    }
    let mean = total / n as f32;
    if !(shortest >= 0.2 * mean && longest_centre <= 2.5 * mean) {
        return false;
    }
    // 3. turning number and 4. turns.
    let mut turning = 0.0f32;
    let max_curvature = 1.0 / ((1.0 - SLACK) * c.min_turn_radius_m);
    let hw = c.half_width_m;
    let mut a = pts[n - 1];
    for i in 0..n {
        let p = pts[i];
        let b = if i + 1 < n { pts[i + 1] } else { pts[0] };
        let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
        let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
        let (cross, dot) = (ux * vy - uy * vx, ux * vx + uy * vy);
        turning += atan2(cross, dot);
        if !turn_complies(a, p, b, dot, max_curvature) {
            return false;
        }
        a = p;
    }
    if (turning.abs() - TAU).abs() >= 0.05 || turning.is_nan() {
        return false;
    }
    // Borders: outer = centre − σ·hw·left, inner = centre + σ·hw·left.
    let sigma = orientation(pts);
    let border = &mut s.border[..2 * n];
    for i in 0..n {
        let nl = left_normal(pts, i);
        let p = pts[i];
        border[i] = [p[0] - sigma * hw * nl[0], p[1] - sigma * hw * nl[1]];
        border[n + i] = [p[0] + sigma * hw * nl[0], p[1] + sigma * hw * nl[1]];
    }
    // 5. thickness, 6. simple centerline, 7. simple, disjoint borders.
    let min_sep = 2.0 * (1.0 - SLACK) * hw;
    let lane = Lane {
        pts,
        border,
        arclen,
        total,
        longest: longest_centre,
        hw,
    };
    !lane.thin_or_crossing(min_sep * min_sep, s.mids)
}

/// A centerline with its borders and arc lengths, as the pair tests see it.
pub struct Lane<'a> {
    /// Centerline points (`n`).
    pub pts: &'a [P2],
    /// Outer then inner border points (`2·n`).
    pub border: &'a [P2],
    /// Arc length at each point (`n`).
    pub arclen: &'a [f32],
    /// Closed length.
    pub total: f32,
    /// Longest centerline segment.
    pub longest: f32,
    /// Half width.
    pub hw: f32,
}

impl Lane<'_> {
    /// Whether the track is thin — two points more than π·hw apart along the curve are closer
    /// than `sqrt(min_sep2)` — or any two segments meet: centre with centre, each border with
    /// itself or with the other, pairs of one polyline that share a point left out. `boxes` is
    /// scratch for [`for_close_pairs`].
    ///
    /// Thickness: a pair whose cyclic index gap is at most `min_gap = exempt_gap(π·hw)` is at
    /// most `min_gap · longest ≤ π·hw` apart along the curve, so it is exempt by definition and
    /// is not visited.
    ///
    /// Crossings, split by the cyclic index gap `g` of the two segments:
    /// - `g ≤ min_gap + 1`: every such pair is tested (`local_crossing`);
    /// - `g > min_gap + 1`: a border point lies hw from the centre point it offsets, and a point
    ///   of a border segment within hw of the matching point of its centre segment (the offset
    ///   is a convex combination of unit normals). So two meeting segments have points of their
    ///   centre segments within 2·hw, hence endpoints `i`, `j` within `2·hw + longest`, at index
    ///   gap ≥ g − 1 > `min_gap`. The pass visits every pair at gap > `min_gap` within
    ///   `near_m = 1.01·(2·hw + longest)` (the 1 % absorbs the rounding of the offsets and of
    ///   the chunk boxes) and tests the segments on both sides of both points.
    pub fn thin_or_crossing(&self, min_sep2: f32, boxes: &mut [P2]) -> bool {
        let (pts, n) = (self.pts, self.pts.len());
        let neighbour_arc = crate::math::PI * self.hw;
        let min_gap = exempt_gap(neighbour_arc, self.longest, n);
        let near_m = 1.01 * (2.0 * self.hw + self.longest);
        let near2 = near_m * near_m;
        let ok = for_close_pairs(pts, boxes, near_m, min_gap, |i, j| {
            let d2 = dist2(pts[i], pts[j]);
            let gap = self.arclen[j] - self.arclen[i];
            let arc = gap.min(self.total - gap);
            if arc > neighbour_arc && d2 < min_sep2 {
                return false;
            }
            if d2 < near2 {
                let (pi, pj) = ((i + n - 1) % n, (j + n - 1) % n);
                return !(self.meet(pi, pj)
                    || self.meet(pi, j)
                    || self.meet(i, pj)
                    || self.meet(i, j));
            }
            true
        });
        !ok || self.local_crossing(min_gap + 1)
    }

    /// Whether any segment `p` meets any segment `q` (centre with centre, each border with
    /// itself and with the other), leaving out pairs of one polyline that share a point.
    #[inline]
    fn meet(&self, p: usize, q: usize) -> bool {
        let n = self.pts.len();
        let (p1, q1) = ((p + 1) % n, (q + 1) % n);
        let (c, o, i) = (self.pts, &self.border[..n], &self.border[n..]);
        let hit = |a: &[P2], b: &[P2]| segments_intersect(a[p], a[p1], b[q], b[q1]);
        let apart = p != q && p1 != q && q1 != p;
        (apart && (hit(c, c) || hit(o, o) || hit(i, i))) || hit(o, i) || hit(i, o)
    }

    /// Whether any two segments whose cyclic index gap is at most `window` meet.
    fn local_crossing(&self, window: usize) -> bool {
        let n = self.pts.len();
        let window = window.min(n / 2);
        (0..n).any(|p| (0..=window).any(|k| self.meet(p, (p + k) % n)))
    }
}

/// Whether the turn at `p` from `a` to `b` (`dot = (p − a)·(b − p)`) is one a circle of radius
/// `1 / max_curvature` could make: the direction change is under 90° (`dot > 0`) and the Menger
/// curvature (the circle through the three points) is at most `max_curvature`.
///
/// The circle alone cannot tell a turn from a reversal: `a, p, b` and a fold back `a, p, b'`
/// with `b'` near `a` can lie on equally large circles, because the Menger curvature is
/// `2·sin(∠apb) / |ab|` and `sin` does not see whether the interior angle `∠apb` is near 0 (a
/// reversal) or near π (a gentle turn). With `dot > 0` the interior angle exceeds 90°, so `p`
/// lies on the minor arc between `a` and `b` and both chords subtend minor arcs: then a
/// curvature ≤ `k` is the same as a turning angle ≤ `asin(k·|ap| / 2) + asin(k·|pb| / 2)`,
/// the turn of a circle of radius `1/k` through chords of those lengths. NaN fails.
#[inline]
pub fn turn_complies(a: P2, p: P2, b: P2, dot: f32, max_curvature: f32) -> bool {
    dot > 0.0 && !curvature_exceeds(a, p, b, max_curvature)
}

/// The largest cyclic index gap `g < n` with `g · longest ≤ arc`, in f32 as the caller's arc
/// lengths are: pairs of a closed polyline whose segments are at most `longest` long and whose
/// index gap is at most `g` are at most `arc` apart along the curve. `n` when every pair is,
/// 0 for NaN.
#[inline]
pub fn exempt_gap(arc: f32, longest: f32, n: usize) -> usize {
    let g = arc / longest;
    if g >= n as f32 {
        return n;
    }
    // NaN converts to 0: nothing is exempt.
    let mut g = g as usize;
    // The division rounds: step back while the product overshoots.
    while g > 0 && g as f32 * longest > arc {
        g -= 1;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reversal_on_a_large_circle_is_not_a_turn() {
        // Issue 14's fold back: the circle through the three points has radius 13.8 m.
        let (a, p, b) = ([108.71, -81.63], [111.31, -79.25], [107.86, -82.75]);
        let dot = (p[0] - a[0]) * (b[0] - p[0]) + (p[1] - a[1]) * (b[1] - p[1]);
        assert!(!curvature_exceeds(a, p, b, 1.0 / 13.0));
        assert!(!turn_complies(a, p, b, dot, 1.0 / 13.0));
        // The same three points in turning order are a turn of that circle.
        let (a, p, b) = (b, a, p);
        let dot = (p[0] - a[0]) * (b[0] - p[0]) + (p[1] - a[1]) * (b[1] - p[1]);
        assert!(turn_complies(a, p, b, dot, 1.0 / 13.0));
        assert!(!turn_complies(a, p, b, dot, 1.0 / 14.5));
        // A right angle and NaN fail.
        assert!(!turn_complies([0.0, 0.0], [1.0, 0.0], [1.0, 1.0], 0.0, 1.0));
        assert!(!turn_complies(
            [f32::NAN, 0.0],
            [1.0, 0.0],
            [2.0, 0.0],
            f32::NAN,
            1.0
        ));
    }

    /// The bound thickness relies on: `g · longest ≤ arc` for the gap returned, and it is the
    /// largest such gap (so no pair needing a test is exempt, and none is tested needlessly).
    #[test]
    fn exempt_gap_is_the_largest_gap_within_the_arc() {
        let mut x = 0x9e37_79b9_u32;
        let mut unit = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as f32 / u32::MAX as f32
        };
        for _ in 0..100_000 {
            let longest = 0.1 + 20.0 * unit();
            let arc = 60.0 * unit();
            let n = 8 + (300.0 * unit()) as usize;
            let g = exempt_gap(arc, longest, n);
            if g < n {
                assert!(g as f32 * longest <= arc, "{arc} {longest}: {g}");
                assert!((g + 1) as f32 * longest > arc, "{arc} {longest}: {g}");
            } else {
                assert!((n - 1) as f32 * longest <= arc);
            }
        }
        // Exact multiples stay exempt; NaN exempts nothing.
        assert_eq!(exempt_gap(15.0, 5.0, 100), 3);
        assert_eq!(exempt_gap(15.0, 5.0, 3), 3);
        assert_eq!(exempt_gap(0.0, 5.0, 100), 0);
        assert_eq!(exempt_gap(f32::NAN, 5.0, 100), 0);
    }

    /// The bounds of `Lane::thin_or_crossing` (every pair at index gap ≤ `min_gap + 1` tested,
    /// farther pairs through centre points within `1.01·(2·hw + longest)`): with thickness off,
    /// its verdict equals the all-pairs test with the same predicate, on random wobbly loops, at
    /// small and large coordinates and half widths, on loops with a waist about as wide as the
    /// track (borders meet only across it) and on loops with one long spike.
    #[test]
    fn crossings_match_all_pairs() {
        let mut x = 0x2545_f491_u32;
        let mut unit = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as f32 / u32::MAX as f32
        };
        let (mut clear, mut crossing) = (0, 0);
        for case in 0..4000 {
            let n = 8 + (case / 2) % 60;
            let offset = if case % 3 == 0 { 3000.0 } else { 0.0 };
            let wobble = 0.1 * (case % 5) as f32 * unit();
            let hw = 0.5 + 6.0 * unit();
            let waist = 0.6 + 0.8 * unit();
            let mut pts: Vec<P2> = (0..n)
                .map(|k| {
                    let t = k as f32 / n as f32 * crate::math::TAU;
                    let mut r = 30.0 * (1.0 + wobble * (unit() - 0.5));
                    if case % 4 == 1 {
                        // A waist of half width `w` near the half width: only borders across
                        // it can meet, at centre points about 2·w apart.
                        let c8 = crate::math::cos(2.0 * t).powi(8);
                        r = 30.0 - (30.0 - waist * hw) * c8;
                    }
                    let (s, c) = crate::math::sin_cos(t);
                    [offset + r * c, offset + r * s]
                })
                .collect();
            if case % 4 == 0 {
                let k = (unit() * n as f32) as usize % n;
                pts[k] = [
                    offset + 80.0 * (unit() - 0.5),
                    offset + 80.0 * (unit() - 0.5),
                ];
            }
            let sigma = orientation(&pts);
            let mut border = vec![[0.0; 2]; 2 * n];
            let (mut arclen, mut total, mut longest) = (vec![0.0; n], 0.0f32, 0.0f32);
            for i in 0..n {
                let nl = left_normal(&pts, i);
                border[i] = [
                    pts[i][0] - sigma * hw * nl[0],
                    pts[i][1] - sigma * hw * nl[1],
                ];
                border[n + i] = [
                    pts[i][0] + sigma * hw * nl[0],
                    pts[i][1] + sigma * hw * nl[1],
                ];
                arclen[i] = total;
                let l = dist(pts[i], pts[(i + 1) % n]);
                total += l;
                longest = longest.max(l);
            }
            let lane = Lane {
                pts: &pts,
                border: &border,
                arclen: &arclen,
                total,
                longest,
                hw,
            };
            let mut boxes = vec![[0.0; 2]; super::super::chunks::boxes_len(n)];
            let got = lane.thin_or_crossing(0.0, &mut boxes);
            let polys = [&pts[..], &border[..n], &border[n..]];
            let end = |k: usize| (k + 1) % n;
            // Centre with centre, each border with itself and with the other.
            let want = [(0, 0), (1, 1), (2, 2), (1, 2)].iter().any(|&(a, b)| {
                (0..n).any(|p| {
                    (0..n).any(|q| {
                        let shares = p == q || end(p) == q || end(q) == p;
                        !(a == b && shares)
                            && segments_intersect(
                                polys[a][p],
                                polys[a][end(p)],
                                polys[b][q],
                                polys[b][end(q)],
                            )
                    })
                })
            });
            assert_eq!(got, want, "case {case}: hw {hw}, {pts:?}");
            if want {
                crossing += 1;
            } else {
                clear += 1;
            }
        }
        assert!(
            clear > 400 && crossing > 400,
            "{clear} clear, {crossing} crossing"
        );
    }
}
