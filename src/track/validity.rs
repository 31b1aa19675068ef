//! Validity of a track, decided on the plan-view centerline and its two borders.
//!
//! A track is valid when all of these hold (with `hw` the half width):
//! 1. it has at least `MIN_POINTS` points and all are finite;
//! 2. it is closed with even spacing: every segment, the closing one included, lies within
//!    `[0.2, 2.5]` times the mean spacing;
//! 3. its turning number is ±1 (total signed turning ±2π);
//! 4. every turn is one a circle of radius ≥ 0.98 · `min_turn_radius` could make: the direction
//!    changes by less than 90° between consecutive segments and the Menger radius (the circle
//!    through consecutive triples) is ≥ 0.98 · `min_turn_radius` — see [`turn_complies`] for why
//!    the radius alone lets reversals through;
//! 5. its thickness is ≥ (1 − 0.02)·hw: points at arc distance > π·hw are ≥ 2·0.98·hw apart;
//! 6. the centerline is simple (no two non-consecutive segments meet);
//! 7. neither border intersects itself, and the borders do not intersect each other.
//!
//! Conditions 5–7 test every pair an all-pairs scan would, at about the cost of a few passes over
//! the points: pairs a few points apart along the curve are tested in full, a whole gap at a
//! time over arrays of segment boxes; farther pairs only where their points lie within a
//! written bound of each other, found by the chunk search (`chunks`). The bound, and why no
//! failing pair escapes it, is in `close_pairs_pass`'s doc; a unit test compares the verdict
//! with the all-pairs scan on loops that cross, pinch and fold.

use super::chunks::{any_close_pair_fails, CHUNK};
use super::geometry::{curvature_exceeds, dist, dist2, segments_intersect, signed_area2};
use crate::geom::Vec2;

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

/// Scratch of one lane of a centerline of `n` points.
pub struct ValidityScratch<'a> {
    /// Arc length per point (`n`).
    pub arclen: &'a mut [f32],
    /// Outer then inner border points (`2·n`).
    pub border: &'a mut [Vec2],
    /// Segment boxes of the centre and both borders ([`BOX_WORDS`]` · n`).
    pub seg_boxes: &'a mut [f32],
    /// Chunk boxes of the far-pair search ([`boxes_len`](super::chunks::boxes_len)`(n)`, at
    /// most `n`).
    pub chunk_boxes: &'a mut [Vec2],
}

/// Owned scratch for one lane at a time of centerlines of up to `n_max` points.
pub struct ValidityBuffers {
    arclen: Vec<f32>,
    border: Vec<Vec2>,
    seg_boxes: Vec<f32>,
    chunk_boxes: Vec<Vec2>,
}

impl ValidityBuffers {
    /// Buffers for centerlines of up to `n_max` points.
    pub fn new(n_max: usize) -> Self {
        Self {
            arclen: vec![0.0; n_max],
            border: vec![Vec2::ZERO; 2 * n_max],
            seg_boxes: vec![0.0; BOX_WORDS * n_max],
            chunk_boxes: vec![Vec2::ZERO; super::chunks::boxes_len(n_max)],
        }
    }

    /// The scratch borrowed from these buffers.
    pub fn scratch(&mut self) -> ValidityScratch<'_> {
        ValidityScratch {
            arclen: &mut self.arclen,
            border: &mut self.border,
            seg_boxes: &mut self.seg_boxes,
            chunk_boxes: &mut self.chunk_boxes,
        }
    }
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
    // 3. turning number and 4. turns. Every turn complies only if it is under 90° (`dot > 0`),
    // and then the exterior angles (each in (−π/2, π/2)) sum to exactly 2π times the winding of
    // the segment directions about the origin: the signed count of their crossings of the +x
    // axis, a crossing's sense being the turn's (the sign of `cross`). The count is exact where
    // a sum of angles rounds (within 0.05 rad of ±2π is the same verdict: n ≤ 4096 roundings of
    // ~10⁻⁷ rad each).
    let mut winding = 0i32;
    let max_curvature = 1.0 / ((1.0 - SLACK) * c.min_turn_radius_m);
    let hw = c.half_width_m;
    let mut a = pts[n - 1];
    for i in 0..n {
        let p = pts[i];
        let b = if i + 1 < n { pts[i + 1] } else { pts[0] };
        let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
        let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
        let (cross, dot) = (ux * vy - uy * vx, ux * vx + uy * vy);
        winding += axis_crossing(uy, vy, cross);
        if !turn_complies(a, p, b, dot, max_curvature) {
            return false;
        }
        a = p;
    }
    if winding.abs() != 1 {
        return false;
    }
    // 5. thickness, 6. the centerline simple, 7. both borders simple and disjoint. Every pair
    // that can fail is tested; which pairs those are is argued in `close_pairs_pass`.
    let sigma = orientation(pts);
    let border = &mut s.border[..2 * n];
    for i in 0..n {
        let nl = left_normal(pts, i);
        let p = pts[i];
        border[i] = Vec2::new(p[0] - sigma * hw * nl[0], p[1] - sigma * hw * nl[1]);
        border[n + i] = Vec2::new(p[0] + sigma * hw * nl[0], p[1] + sigma * hw * nl[1]);
    }
    let thickness = Thickness {
        arclen,
        total,
        neighbour_arc: crate::math::PI * hw,
        min_sep2: {
            let min_sep = 2.0 * (1.0 - SLACK) * hw;
            min_sep * min_sep
        },
        // A pair whose cyclic index gap is at most `min_gap` is at most `min_gap · longest_centre
        // ≤ π·hw` apart along the curve, so it is exempt by definition.
        min_gap: exempt_gap(crate::math::PI * hw, longest_centre, n),
    };
    close_pairs_pass(pts, border, hw, &thickness, s.seg_boxes, s.chunk_boxes)
}

/// The signed crossing of the +x axis by a turn under 90° from direction `(·, uy)` to `(·, vy)`
/// (`cross` their cross product): +1 counter-clockwise from below the axis to on or above it, −1
/// clockwise back, 0 otherwise (the turns that cross the −x axis included).
#[inline(always)]
fn axis_crossing(uy: f32, vy: f32, cross: f32) -> i32 {
    i32::from(uy < 0.0 && vy >= 0.0 && cross > 0.0)
        - i32::from(uy >= 0.0 && vy < 0.0 && cross < 0.0)
}

/// The thickness test's constants (condition 5): pairs at cyclic index gap > `min_gap` fail when
/// more than `neighbour_arc` apart along the curve and closer than `√min_sep2`.
struct Thickness<'a> {
    arclen: &'a [f32],
    total: f32,
    neighbour_arc: f32,
    min_sep2: f32,
    min_gap: usize,
}

impl Thickness<'_> {
    /// Whether points `i < j` (cyclic gap `> min_gap`), `d2` apart squared, fail.
    #[inline]
    fn fails(&self, i: usize, j: usize, d2: f32) -> bool {
        let gap = self.arclen[j] - self.arclen[i];
        let arc = gap.min(self.total - gap);
        (arc > self.neighbour_arc) & (d2 < self.min_sep2)
    }

    /// Whether some pair `(i, i + g mod n)` fails (`min_gap < g ≤ n / 2`).
    fn fails_at_gap(&self, pts: &[Vec2], g: usize) -> bool {
        let n = pts.len();
        let mut thin = false;
        for i in 0..n - g {
            thin |= self.fails(i, i + g, dist2(pts[i], pts[i + g]));
        }
        for i in n - g..n {
            let j = i + g - n;
            thin |= self.fails(j, i, dist2(pts[j], pts[i]));
        }
        thin
    }
}

/// Words of segment boxes per point of the centerline: 4 (`lo.x`, `lo.y`, `hi.x`, `hi.y`) for
/// each of the 3 polylines (centre, outer border, inner border).
pub const BOX_WORDS: usize = 12;

/// The axis-aligned boxes of the `n` segments of one closed polyline, one array per bound
/// (segment `k` joins point `k` to point `k + 1 mod n`).
#[derive(Clone, Copy)]
struct SegBoxes<'a> {
    lo_x: &'a [f32],
    lo_y: &'a [f32],
    hi_x: &'a [f32],
    hi_y: &'a [f32],
}

impl<'a> SegBoxes<'a> {
    /// The boxes of polyline `q` (0 centre, 1 outer, 2 inner) of `n` points in `words`.
    fn of(words: &'a [f32], q: usize, n: usize) -> Self {
        let b = &words[4 * q * n..4 * (q + 1) * n];
        let (lo_x, b) = b.split_at(n);
        let (lo_y, b) = b.split_at(n);
        let (hi_x, hi_y) = b.split_at(n);
        Self {
            lo_x,
            lo_y,
            hi_x,
            hi_y,
        }
    }

    fn range(self, r: std::ops::Range<usize>) -> Self {
        Self {
            lo_x: &self.lo_x[r.clone()],
            lo_y: &self.lo_y[r.clone()],
            hi_x: &self.hi_x[r.clone()],
            hi_y: &self.hi_y[r],
        }
    }
}

/// Writes the boxes of the segments of the closed polyline `pts` into `words` (`4·n`: the
/// `lo.x`, `lo.y`, `hi.x`, `hi.y` arrays); returns the largest squared segment length. The
/// bounds are the `min`/`max` [`segments_intersect`] takes, so a pair of boxes apart here is
/// a pair it rejects in its first test, and `(hi − lo)²` summed over the axes is the segment's
/// squared length as [`dist`] rounds it.
fn segment_boxes(pts: &[Vec2], words: &mut [f32]) -> f32 {
    let n = pts.len();
    let (lo_x, rest) = words[..4 * n].split_at_mut(n);
    let (lo_y, rest) = rest.split_at_mut(n);
    let (hi_x, hi_y) = rest.split_at_mut(n);
    let mut longest2 = 0.0f32;
    for k in 0..n {
        let (a, b) = (pts[k], if k + 1 < n { pts[k + 1] } else { pts[0] });
        // Finite points: plain comparisons give `f32::min`/`max`'s values (±0 compare equal).
        let ((lx, hx), (ly, hy)) = (order(a[0], b[0]), order(a[1], b[1]));
        (lo_x[k], lo_y[k], hi_x[k], hi_y[k]) = (lx, ly, hx, hy);
        let (dx, dy) = (hx - lx, hy - ly);
        let l2 = dx * dx + dy * dy;
        if l2 > longest2 {
            longest2 = l2;
        }
    }
    longest2
}

/// `(min, max)` of two finite numbers.
#[inline(always)]
fn order(a: f32, b: f32) -> (f32, f32) {
    if b < a {
        (b, a)
    } else {
        (a, b)
    }
}

/// Whether box `k` of `a` meets box `k` of `b` for some `k` (finite bounds; equal lengths).
/// Branch-free over `k`, so the compiler runs it several boxes at a time.
#[inline]
fn some_boxes_meet(a: SegBoxes<'_>, b: SegBoxes<'_>) -> bool {
    let n = a.lo_x.len();
    let (a_lo_x, a_lo_y, a_hi_x, a_hi_y) = (&a.lo_x[..n], &a.lo_y[..n], &a.hi_x[..n], &a.hi_y[..n]);
    let (b_lo_x, b_lo_y, b_hi_x, b_hi_y) = (&b.lo_x[..n], &b.lo_y[..n], &b.hi_x[..n], &b.hi_y[..n]);
    let mut any = 0u32;
    for k in 0..n {
        any |= u32::from(a_hi_x[k] >= b_lo_x[k])
            & u32::from(b_hi_x[k] >= a_lo_x[k])
            & u32::from(a_hi_y[k] >= b_lo_y[k])
            & u32::from(b_hi_y[k] >= a_lo_y[k]);
    }
    any != 0
}

/// Pairs of polylines whose segments must not meet: each polyline with itself (centre 0, outer 1,
/// inner 2; consecutive segments excepted) and the outer border with the inner.
const POLYLINE_PAIRS: [(usize, usize); 5] = [(0, 0), (1, 1), (2, 2), (1, 2), (2, 1)];

/// Whether segment `k` of `a` meets segment `(k + g) mod n` of `b` for some `k` (`g < n`): the
/// boxes first, branch-free, then the exact test only where some pair of boxes meets.
fn crossing_at_shift(
    a: &[Vec2],
    a_boxes: SegBoxes<'_>,
    b: &[Vec2],
    b_boxes: SegBoxes<'_>,
    g: usize,
) -> bool {
    let n = a.len();
    let meet = some_boxes_meet(a_boxes.range(0..n - g), b_boxes.range(g..n))
        || some_boxes_meet(a_boxes.range(n - g..n), b_boxes.range(0..g));
    meet && (0..n).any(|k| {
        let m = (k + g) % n;
        segments_intersect(a[k], a[(k + 1) % n], b[m], b[(m + 1) % n])
    })
}

/// Conditions 5–7 of the module doc on the centre `pts` and its `border` (outer then inner):
/// true when no pair fails.
///
/// Pairs at cyclic index gap at most `near` (points) or `near + 1` (segments) are all tested,
/// box by box over whole arrays; farther ones only when their points are within `reach`:
/// - two segments that meet at `x` (of any two of the three polylines) have endpoints within
///   half their length of `x`, and every border point lies `hw·|normal|` from the centre point
///   of its index, so the centre points of those endpoints are within `2·hw + longest` of each
///   other (`longest` the longest segment of the three), at a cyclic gap at least the
///   segments' less one. `reach` is that bound plus 1 % (far above its rounding);
/// - a pair failing thickness is closer than `2·(1 − SLACK)·hw < reach`.
///
/// The chunk search (`chunks`) finds every point pair within `reach` at gap > `near`; each such
/// pair tests the thickness of its two points and every segment pair at its ends. So every
/// pair the module doc names is tested, with the same predicates as an all-pairs scan.
fn close_pairs_pass(
    pts: &[Vec2],
    border: &[Vec2],
    hw: f32,
    thickness: &Thickness<'_>,
    seg_boxes: &mut [f32],
    chunk_boxes: &mut [Vec2],
) -> bool {
    let n = pts.len();
    let polylines = [pts, &border[..n], &border[n..2 * n]];
    let words = &mut seg_boxes[..BOX_WORDS * n];
    let mut longest2 = [0.0f32; 3];
    for (q, line) in polylines.iter().enumerate() {
        longest2[q] = segment_boxes(line, &mut words[4 * q * n..4 * (q + 1) * n]);
    }
    // A polyline without a segment of positive finite length is not simple (both borders count
    // as one polyline here, as in the all-pairs definition).
    let border_longest2 = longest2[1].max(longest2[2]);
    let positive_finite = |l2: f32| l2 > 0.0 && l2.is_finite();
    if !positive_finite(longest2[0]) || !positive_finite(border_longest2) {
        return false;
    }
    let words = &*words;
    let boxes = [0, 1, 2].map(|q| SegBoxes::of(words, q, n));
    let longest = longest2[0].max(border_longest2).sqrt();
    let reach = 1.01 * (2.0 * hw + longest);
    let mean = thickness.total / n as f32;
    // Gaps up to `near` are cheaper to test in full than to search: a chunk holds CHUNK points.
    // (Any `near` is correct; past `n / 2` every pair is near.)
    let near = ((reach / mean) as usize).saturating_add(CHUNK).min(n);
    let half = n / 2;
    // Thickness at gaps min_gap < g ≤ near.
    for g in thickness.min_gap + 1..=near.min(half) {
        if thickness.fails_at_gap(pts, g) {
            return false;
        }
    }
    // Segments at gaps ≤ near + 1: each polyline with itself from gap 2 on, outer with inner
    // from −(near + 1) to near + 1 (every gap when that covers the loop).
    let seg_near = near + 1;
    for (qa, qb) in &POLYLINE_PAIRS[..4] {
        let (qa, qb) = (*qa, *qb);
        let (a, b) = (polylines[qa], polylines[qb]);
        // Outer with inner takes both signs of the gap, so (2, 1) is not needed here.
        let shifts: &mut dyn Iterator<Item = usize> = if qa == qb {
            &mut (2..=seg_near.min(half))
        } else if 2 * seg_near + 1 >= n {
            &mut (0..n)
        } else {
            &mut (0..=seg_near).chain(n - seg_near..n)
        };
        for g in shifts {
            if crossing_at_shift(a, boxes[qa], b, boxes[qb], g) {
                return false;
            }
        }
    }
    if near >= half {
        return true;
    }
    // Farther pairs, through the chunk search.
    let reach2 = reach * reach;
    let prev = |k: usize| if k == 0 { n - 1 } else { k - 1 };
    let next = |k: usize| if k + 1 == n { 0 } else { k + 1 };
    !any_close_pair_fails(pts, chunk_boxes, reach, near, |i, j| {
        let d2 = dist2(pts[i], pts[j]);
        // Points are finite here, so `d2` is a number.
        if d2 > reach2 {
            return true;
        }
        let gap = j - i;
        if gap.min(n - gap) > thickness.min_gap && thickness.fails(i, j, d2) {
            return false;
        }
        for k in [prev(i), i] {
            for m in [prev(j), j] {
                let gap = k.abs_diff(m);
                let consecutive = gap.min(n - gap) <= 1;
                for (qa, qb) in POLYLINE_PAIRS {
                    if qa == qb && consecutive {
                        continue;
                    }
                    let (a, b) = (polylines[qa], polylines[qb]);
                    if segments_intersect(a[k], a[next(k)], b[m], b[next(m)]) {
                        return false;
                    }
                }
            }
        }
        true
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift stream of uniform numbers in [0, 1] from `seed`.
    fn uniform(seed: u32) -> impl FnMut() -> f32 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as f32 / u32::MAX as f32
        }
    }

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
        let mut unit = uniform(0x9e37_79b9_u32);
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

    /// The axis-crossing count is the turning number the sum of the turns' angles rounds to, on
    /// closed polylines of turning number −2..=3 (epicycles, figure eights, wobbly loops at large
    /// offsets) whose every turn is under 90°.
    #[test]
    fn axis_crossings_count_the_turning_number() {
        let mut unit = uniform(0x7f4a_7c15_u32);
        let mut seen = std::collections::BTreeSet::new();
        for case in 0..3000 {
            let n = 24 + case % 200;
            let (k1, k2) = (
                [1.0f32, -1.0, 2.0, 3.0, -2.0][case % 5],
                [0.0f32, 2.0, -3.0][case % 3],
            );
            let a2 = 0.6 * unit();
            let offset = if case % 4 == 0 { 5000.0 } else { 0.0 };
            let pts: Vec<Vec2> = (0..n)
                .map(|i| {
                    let t = i as f32 / n as f32 * crate::math::TAU + 0.3 * unit() / n as f32;
                    let (s1, c1) = crate::math::sin_cos(k1 * t);
                    let (s2, c2) = crate::math::sin_cos(k2 * t);
                    Vec2::new(
                        offset + 100.0 * c1 + 100.0 * a2 * c2,
                        offset + 100.0 * s1 + 100.0 * a2 * s2,
                    )
                })
                .collect();
            let (mut sum, mut count, mut sharp) = (0.0f32, 0i32, false);
            for i in 0..n {
                let (a, p, b) = (pts[(i + n - 1) % n], pts[i], pts[(i + 1) % n]);
                let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
                let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
                let (cross, dot) = (ux * vy - uy * vx, ux * vx + uy * vy);
                sharp |= dot <= 0.0;
                sum += crate::math::atan2(cross, dot);
                count += axis_crossing(uy, vy, cross);
            }
            if sharp {
                continue;
            }
            let turns = sum / crate::math::TAU;
            assert!((turns - turns.round()).abs() < 1e-3, "case {case}: {turns}");
            assert_eq!(count, turns.round() as i32, "case {case}");
            seen.insert(count);
        }
        assert!(seen.len() >= 4, "{seen:?}");
    }

    /// `close_pairs_pass` (local gaps in full, farther pairs through the chunk search within
    /// `reach`) decides exactly as the all-pairs scan with the same predicates: on random loops
    /// that cross themselves, pinch and fold their borders, at large and small coordinates and
    /// half widths from a tenth of the spacing to several spacings.
    #[test]
    fn close_pairs_pass_matches_all_pairs() {
        let mut unit = uniform(0x2545_f491_u32);
        let (mut pass, mut fail) = (0, 0);
        for case in 0..4000 {
            let n = 8 + (case / 2) % 120;
            let offset = if case % 3 == 0 { 3000.0 } else { 0.0 };
            let wobble = 0.25 * (case % 5) as f32 * unit();
            let r0 = n as f32 * 5.0 / crate::math::TAU;
            let mut pts: Vec<Vec2> = (0..n)
                .map(|k| {
                    let t = k as f32 / n as f32 * crate::math::TAU;
                    let (s3, c3) = crate::math::sin_cos(3.0 * t);
                    let r =
                        r0 * (1.0 + wobble * (0.6 * c3 + 0.4 * s3) + 0.3 * wobble * (unit() - 0.5));
                    let (s, c) = crate::math::sin_cos(t);
                    Vec2::new(offset + r * c, offset + r * s)
                })
                .collect();
            if case % 7 == 0 {
                let k = (unit() * n as f32) as usize % n;
                pts[k] = Vec2::new(
                    offset + 2.5 * r0 * (unit() - 0.5),
                    offset + 2.5 * r0 * (unit() - 0.5),
                );
            }
            let hw = 5.0 * (0.1 + 3.0 * unit() * unit());
            let sigma = orientation(&pts);
            let mut border = vec![Vec2::ZERO; 2 * n];
            for i in 0..n {
                let nl = left_normal(&pts, i);
                let p = pts[i];
                border[i] = Vec2::new(p[0] - sigma * hw * nl[0], p[1] - sigma * hw * nl[1]);
                border[n + i] = Vec2::new(p[0] + sigma * hw * nl[0], p[1] + sigma * hw * nl[1]);
            }
            let mut arclen = vec![0.0f32; n];
            let (mut total, mut longest) = (0.0f32, 0.0f32);
            for i in 0..n {
                arclen[i] = total;
                let l = dist(pts[i], pts[(i + 1) % n]);
                longest = longest.max(l);
                total += l;
            }
            let min_sep = 2.0 * (1.0 - SLACK) * hw;
            let thickness = Thickness {
                arclen: &arclen,
                total,
                neighbour_arc: crate::math::PI * hw,
                min_sep2: min_sep * min_sep,
                min_gap: exempt_gap(crate::math::PI * hw, longest, n),
            };
            let mut seg_boxes = vec![0.0; BOX_WORDS * n];
            let mut chunk_boxes = vec![Vec2::ZERO; crate::track::chunks::boxes_len(n)];
            let got = close_pairs_pass(
                &pts,
                &border,
                hw,
                &thickness,
                &mut seg_boxes,
                &mut chunk_boxes,
            );
            let lines = [&pts[..], &border[..n], &border[n..]];
            let end = |k: usize| (k + 1) % n;
            let want = (0..n).all(|i| {
                (i + 1..n).all(|j| {
                    let gap = (j - i).min(n - (j - i));
                    gap <= thickness.min_gap || !thickness.fails(i, j, dist2(pts[i], pts[j]))
                })
            }) && POLYLINE_PAIRS.iter().all(|&(qa, qb)| {
                (0..n).all(|k| {
                    (0..n).all(|m| {
                        let gap = k.abs_diff(m).min(n - k.abs_diff(m));
                        (qa == qb && gap <= 1)
                            || !segments_intersect(
                                lines[qa][k],
                                lines[qa][end(k)],
                                lines[qb][m],
                                lines[qb][end(m)],
                            )
                    })
                })
            });
            assert_eq!(got, want, "case {case}, hw {hw}: {pts:?}");
            if want {
                pass += 1;
            } else {
                fail += 1;
            }
        }
        assert!(pass > 400 && fail > 400, "{pass} pass, {fail} fail");
    }
}
