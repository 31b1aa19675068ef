//! Constant-spacing resampling of a closed polyline.
//!
//! The point count is `round(L / spacing)` clamped to `[MIN_POINTS, n_max]`, so a long track on
//! a small `n_max` gets a wider spacing rather than being cut. Points are placed at arc lengths
//! `k · L / count` along the closed polyline, walking it once (sequential per lane).

use crate::geom::Vec2;

/// The fewest points a resampled track has.
pub const MIN_POINTS: usize = 8;

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
}
