//! Validity of a track, decided on the plan-view centerline and its two borders.
//!
//! A track is valid when all of these hold (with `hw` the half width):
//! 1. it has at least `MIN_POINTS` points and all are finite;
//! 2. it is closed with even spacing: every segment, the closing one included, lies within
//!    `[0.2, 2.5]` times the mean spacing;
//! 3. its turning number is ±1 (total signed turning ±2π within 0.05 rad);
//! 4. its turn radius (Menger radius of consecutive triples) is ≥ 0.98 · `min_turn_radius`;
//! 5. its thickness is ≥ (1 − 0.02)·hw: points at arc distance > π·hw are ≥ 2·0.98·hw apart;
//! 6. neither border intersects itself, and the borders do not intersect each other.

use super::chunks::for_close_pairs;
use super::generators::P2;
use super::geometry::{curvature_exceeds, dist, dist2, segments_intersect, signed_area2};
use super::grid::Grid;
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
    // 3. turning number and 4. turn radius.
    let mut turning = 0.0f32;
    let max_curvature = 1.0 / ((1.0 - SLACK) * c.min_turn_radius_m);
    let hw = c.half_width_m;
    // Whether every turn radius is ≥ 1.5·hw: then neither border can fold locally.
    let mut no_fold = true;
    let mut a = pts[n - 1];
    for i in 0..n {
        let p = pts[i];
        let b = if i + 1 < n { pts[i + 1] } else { pts[0] };
        let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
        let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
        turning += atan2(ux * vy - uy * vx, ux * vx + uy * vy);
        if curvature_exceeds(a, p, b, max_curvature) {
            return false;
        }
        no_fold &= !curvature_exceeds(a, p, b, 1.0 / (1.5 * hw));
        a = p;
    }
    if (turning.abs() - TAU).abs() >= 0.05 || turning.is_nan() {
        return false;
    }
    // 5. thickness over non-neighbouring pairs. Pairs closer than 2·hw + the longest segment are
    // "near": only then can border chords of distant parts of the track meet.
    let min_sep2 = {
        let m = 2.0 * (1.0 - SLACK) * hw;
        m * m
    };
    let near_m = 2.0 * hw + longest_centre;
    let near2 = near_m * near_m;
    let neighbour_arc = crate::math::PI * hw;
    let mut near = false;
    // Every turn radius is ≥ R' = (1 − SLACK)·min_turn_radius ≥ (1 − SLACK)·hw, so by Schur's
    // comparison theorem two points at arc s ≤ π·R' are at least 2·R'·sin(s / 2R') apart, which is
    // ≥ 2·(1 − SLACK)·hw for s ≥ π·hw: such pairs cannot be thin, and their borders cannot meet
    // unless a border folds (ruled out by `no_fold` below, or tested). Only pairs more than
    // π·R' apart along the curve — more than π·R' / longest segments — need a distance test.
    let schur_arc = crate::math::PI * (1.0 - SLACK) * c.min_turn_radius_m;
    let min_gap = {
        let g = schur_arc.max(neighbour_arc) / longest_centre;
        if g < n as f32 {
            g as usize
        } else {
            n
        }
    };
    let thick = for_close_pairs(pts, s.mids, near_m, min_gap, |i, j| {
        let gap = arclen[j] - arclen[i];
        let arc = gap.min(total - gap);
        if arc > neighbour_arc {
            let d2 = dist2(pts[i], pts[j]);
            if d2 < min_sep2 {
                return false;
            }
            near |= d2 < near2;
        }
        true
    });
    if !thick {
        return false;
    }
    // Every point of a border chord lies within hw of its centre chord, so border chords of
    // distant parts can only meet if their centre points come within 2·hw + the longest segment;
    // and with every turn radius ≥ 1.5·hw the borders of nearby parts cannot fold. When both
    // hold, the border test below cannot fail and is skipped.
    if !near && no_fold {
        return true;
    }
    // 6. borders: outer = centre − σ·hw·left, inner = centre + σ·hw·left.
    let sigma = orientation(pts);
    let border = &mut s.border[..2 * n];
    let mut longest = 0.0f32;
    for i in 0..n {
        let nl = left_normal(pts, i);
        let p = pts[i];
        border[i] = [p[0] - sigma * hw * nl[0], p[1] - sigma * hw * nl[1]];
        border[n + i] = [p[0] + sigma * hw * nl[0], p[1] + sigma * hw * nl[1]];
    }
    // Segment k joins border point k to its successor on the same border; keyed by midpoint.
    let seg_end = |k: usize| {
        if k < n {
            (k + 1) % n
        } else {
            n + (k - n + 1) % n
        }
    };
    for k in 0..2 * n {
        longest = longest.max(dist(border[k], border[seg_end(k)]));
    }
    if !(longest > 0.0 && longest.is_finite()) {
        return false;
    }
    // Segments are keyed by their midpoints: two crossing segments no longer than `longest`
    // have midpoints within `longest` of each other, so that cell size finds every pair.
    let mids = &mut s.mids[..2 * n];
    for (k, m) in mids.iter_mut().enumerate() {
        let (a, b) = (border[k], border[seg_end(k)]);
        *m = [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])];
    }
    let grid = Grid::build(s.heads, s.next, s.cells, mids, longest);
    grid.for_pairs(|k, m| {
        let same_border = (k < n) == (m < n);
        if same_border && (seg_end(k) == m || seg_end(m) == k) {
            return true;
        }
        !segments_intersect(border[k], border[seg_end(k)], border[m], border[seg_end(m)])
    })
}
