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
//! chunk pairs whose boxes are farther apart than the separation (`chunks`); the crossing tests
//! skip segment pairs whose midpoints lie in non-adjacent grid cells ([`simple_polylines`]).
//! The border tests are never skipped as a whole.

use super::chunks::any_close_pair_fails;
use super::geometry::{curvature_exceeds, dist, dist2, segments_intersect, signed_area2};
use super::grid::Grid;
use crate::geom::Vec2;
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
    pub border: &'a mut [Vec2],
    /// Border segment midpoints (`2·n`).
    pub mids: &'a mut [Vec2],
    /// Grid buckets.
    pub heads: &'a mut [u32],
    /// Grid links.
    pub next: &'a mut [u32],
    /// Grid cell keys.
    pub cells: &'a mut [u64],
}

/// Left unit normal of point `i` of a closed curve (from the central difference).
#[inline]
pub fn left_normal(pts: &[Vec2], i: usize) -> Vec2 {
    let n = pts.len();
    let a = pts[(i + n - 1) % n];
    let b = pts[(i + 1) % n];
    let (tx, ty) = (b[0] - a[0], b[1] - a[1]);
    let len = (tx * tx + ty * ty).sqrt();
    if len > 0.0 {
        Vec2::new(-ty / len, tx / len)
    } else {
        Vec2::new(0.0, 0.0)
    }
}

/// +1 for a counter-clockwise curve, −1 otherwise.
#[inline]
pub fn orientation(pts: &[Vec2]) -> f32 {
    if signed_area2(pts) >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// Whether the closed centerline `pts` makes a valid track (see the module doc).
pub fn is_valid(pts: &[Vec2], c: &ValidityConsts, s: &mut ValidityScratch<'_>) -> bool {
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
    // 5. thickness over pairs more than π·hw apart along the curve. A pair whose cyclic index gap
    // is at most `min_gap` is at most `min_gap · longest_centre ≤ π·hw` apart along the curve,
    // so it is exempt by definition and `any_close_pair_fails` need not visit it. Only pairs closer
    // than `min_sep` can fail; `reach = 2·hw` exceeds it by 2·SLACK·hw, far above the rounding
    // of the chunk boxes (see `chunks`).
    let min_sep = 2.0 * (1.0 - SLACK) * hw;
    let min_sep2 = min_sep * min_sep;
    let neighbour_arc = crate::math::PI * hw;
    let min_gap = exempt_gap(neighbour_arc, longest_centre, n);
    let thin = any_close_pair_fails(pts, s.mids, 2.0 * hw, min_gap, |i, j| {
        let gap = arclen[j] - arclen[i];
        let arc = gap.min(total - gap);
        !(arc > neighbour_arc && dist2(pts[i], pts[j]) < min_sep2)
    });
    if thin {
        return false;
    }
    // 6. the centerline is simple, and 7. so are both borders and they do not meet: every
    // segment pair the grid's bound cannot exclude is tested (see `simple_polylines`).
    if !simple_polylines(pts, 1, s) {
        return false;
    }
    // Borders: outer = centre − σ·hw·left, inner = centre + σ·hw·left.
    let sigma = orientation(pts);
    let border = &mut s.border[..2 * n];
    for i in 0..n {
        let nl = left_normal(pts, i);
        let p = pts[i];
        border[i] = Vec2::new(p[0] - sigma * hw * nl[0], p[1] - sigma * hw * nl[1]);
        border[n + i] = Vec2::new(p[0] + sigma * hw * nl[0], p[1] + sigma * hw * nl[1]);
    }
    let border = std::mem::take(&mut s.border);
    let simple = simple_polylines(&border[..2 * n], 2, s);
    s.border = border;
    simple
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
pub fn turn_complies(a: Vec2, p: Vec2, b: Vec2, dot: f32, max_curvature: f32) -> bool {
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

/// Whether `parts` closed polylines of `n = pts.len() / parts` points each (polyline `q` is
/// `pts[q·n .. (q + 1)·n]`, segment `k` joins point `k` to its successor on the same polyline)
/// are simple and disjoint: no two segments intersect, except consecutive ones of one polyline
/// at their shared point. False for non-finite points.
///
/// Every segment pair is tested unless a bound proves it cannot meet: segments are keyed by
/// their midpoints in a grid of cell side `cell = 1.01 · longest` (`longest` the longest
/// segment). Two segments that meet at a point `x` have midpoints within `|ab|/2 + |cd|/2 ≤
/// longest` of each other (each midpoint is within half its length of `x`), so their cells
/// differ by at most 1 on each axis and `Grid::for_pairs` visits them. The 1 % margin absorbs
/// the rounding of the midpoints and of `coordinate / cell`: it only matters once coordinates
/// exceed about 10⁴ cells, and a track's extent is at most `n_max ≤ 4096` segments.
pub fn simple_polylines(pts: &[Vec2], parts: usize, s: &mut ValidityScratch<'_>) -> bool {
    let n = pts.len() / parts;
    // The successor of point `k` on its polyline: `(k / n)·n + (k % n + 1) % n`, without the
    // divisions for one or two polylines (the borders).
    let seg_end = |k: usize| {
        let e = k + 1;
        let wraps = if parts <= 2 {
            e == n || e == 2 * n
        } else {
            e % n == 0
        };
        if wraps {
            e - n
        } else {
            e
        }
    };
    let mut longest = 0.0f32;
    for k in 0..pts.len() {
        longest = longest.max(dist(pts[k], pts[seg_end(k)]));
    }
    if !(longest > 0.0 && longest.is_finite()) {
        return false;
    }
    let mids = &mut s.mids[..pts.len()];
    for (k, m) in mids.iter_mut().enumerate() {
        let (a, b) = (pts[k], pts[seg_end(k)]);
        *m = Vec2::new(0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]));
    }
    let grid = Grid::build(s.heads, s.next, s.cells, mids, 1.01 * longest);
    grid.for_pairs(|k, m| {
        let (ek, em) = (seg_end(k), seg_end(m));
        if ek == m || em == k {
            return true;
        }
        let (a, b, c, d) = (pts[k], pts[ek], pts[m], pts[em]);
        // `segments_intersect`'s own first test with plain comparisons: `a < c && a < d &&
        // b < c && b < d` holds only where `max(a, b) < min(c, d)` does (NaN fails both ways
        // here and falls through to the full test). Most candidate pairs end here, without the
        // NaN-aware `min`/`max`.
        let below = |a: f32, b: f32, c: f32, d: f32| a < c && a < d && b < c && b < d;
        if below(a[0], b[0], c[0], d[0])
            || below(c[0], d[0], a[0], b[0])
            || below(a[1], b[1], c[1], d[1])
            || below(c[1], d[1], a[1], b[1])
        {
            return true;
        }
        !segments_intersect(a, b, c, d)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reversal_on_a_large_circle_is_not_a_turn() {
        // Issue 14's fold back: the circle through the three points has radius 13.8 m.
        let (a, p, b) = ([108.71, -81.63], [111.31, -79.25], [107.86, -82.75]);
        let dot = (p[0] - a[0]) * (b[0] - p[0]) + (p[1] - a[1]) * (b[1] - p[1]);
        assert!(!curvature_exceeds(a.into(), p.into(), b.into(), 1.0 / 13.0));
        assert!(!turn_complies(
            a.into(),
            p.into(),
            b.into(),
            dot,
            1.0 / 13.0
        ));
        // The same three points in turning order are a turn of that circle.
        let (a, p, b) = (b, a, p);
        let dot = (p[0] - a[0]) * (b[0] - p[0]) + (p[1] - a[1]) * (b[1] - p[1]);
        assert!(turn_complies(a.into(), p.into(), b.into(), dot, 1.0 / 13.0));
        assert!(!turn_complies(
            a.into(),
            p.into(),
            b.into(),
            dot,
            1.0 / 14.5
        ));
        // A right angle and NaN fail.
        assert!(!turn_complies(
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(1.0, 1.0),
            0.0,
            1.0
        ));
        assert!(!turn_complies(
            Vec2::new(f32::NAN, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(2.0, 0.0),
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

    /// The grid bound of `simple_polylines` (cells of 1.01 × the longest segment see every
    /// meeting pair): its verdict equals the all-pairs test with the same predicate, on random
    /// loops that cross themselves and each other often, at large and small coordinates.
    #[test]
    fn simple_polylines_matches_all_pairs() {
        let mut x = 0x2545_f491_u32;
        let mut unit = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as f32 / u32::MAX as f32
        };
        let (mut simple, mut crossing) = (0, 0);
        for case in 0..3000 {
            let parts = 1 + case % 3;
            let n = 8 + (case / 2) % 40;
            let offset = if case % 3 == 0 { 3000.0 } else { 0.0 };
            let wobble = 0.3 * (case % 7) as f32 * unit();
            let mut pts: Vec<Vec2> = (0..parts * n)
                .map(|k| {
                    let t = (k % n) as f32 / n as f32 * crate::math::TAU;
                    let r = 20.0 + 4.0 * (k / n) as f32 + 20.0 * wobble * (unit() - 0.5);
                    let (s, c) = crate::math::sin_cos(t);
                    Vec2::new(offset + r * c, offset + r * s)
                })
                .collect();
            if case % 7 == 0 {
                // One long spike: its two segments are the only ones that can cross, often
                // near one end, where midpoints are farthest apart.
                let k = (unit() * (parts * n) as f32) as usize % (parts * n);
                pts[k] = [
                    offset + 70.0 * (unit() - 0.5),
                    offset + 70.0 * (unit() - 0.5),
                ]
                .into();
            }
            let m = parts * n;
            let (mut arclen, mut border, mut mids) =
                (vec![0.0; m], vec![Vec2::ZERO; m], vec![Vec2::ZERO; m]);
            let (mut heads, mut next, mut cells) = (
                vec![0; super::super::grid::buckets_for(m)],
                vec![0; m],
                vec![0; m],
            );
            let mut s = ValidityScratch {
                arclen: &mut arclen,
                border: &mut border,
                mids: &mut mids,
                heads: &mut heads,
                next: &mut next,
                cells: &mut cells,
            };
            let got = simple_polylines(&pts, parts, &mut s);
            let end = |k: usize| (k / n) * n + (k % n + 1) % n;
            let want = (0..m).all(|k| {
                (k + 1..m).all(|j| {
                    end(k) == j
                        || end(j) == k
                        || !segments_intersect(pts[k], pts[end(k)], pts[j], pts[end(j)])
                })
            });
            assert_eq!(got, want, "case {case}: {pts:?}");
            if want {
                simple += 1;
            } else {
                crossing += 1;
            }
        }
        assert!(
            simple > 300 && crossing > 300,
            "{simple} simple, {crossing} crossing"
        );
    }
}
