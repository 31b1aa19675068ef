//! Localization on a closed path: the nearest point in plan view, found by a bounded local
//! search from the previous segment.
//!
//! The path is a closed polyline of `n` points; segment `k` joins points `k` and `k + 1 mod n`.
//! [`locate`] starts at the previous step's segment and walks to the next segment while that one
//! is strictly nearer to the query (plan-view x, y distance); if the first step forward is not
//! nearer it walks backward the same way. The walk is bounded: at most `window` segments each
//! way. It ends at a local minimum of the distance along the path, which is the global nearest
//! point whenever no other local minimum lies between the old and the new foot point — true for
//! an agent that stays closer to the path than its turn radius and the path's clearance (for a
//! valid track, points more than π·half_width apart along it are at least 2·0.98·half_width
//! apart) and moves less than `window` segments per step. When the walk cannot vouch for its
//! answer it **falls back** to a scan of all `n` segments (the first global minimum in index
//! order): when it hits its bound (the agent may have jumped), or when the nearest distance
//! exceeds `relocalize_m` (the agent may be nearer another part of the path). So an agent that
//! moves smoothly along the path costs about three segment tests per step; a teleported or
//! far-off agent costs `n`. Ties between two segments (at a vertex) keep the one reached first.

use crate::geom::{fails_gt, fails_lt};

/// The nearest point of the path to a query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Located {
    /// Segment index `k` (from point `k` to point `k + 1 mod n`).
    pub segment: u32,
    /// Position along the segment, `[0, 1]`.
    pub t: f32,
    /// Squared plan-view distance, m².
    pub dist2: f32,
    /// Whether the window fell back to the full scan.
    pub scanned: bool,
}

/// Squared plan distance from `q` to segment `k` of `path`, and the clamped parameter.
#[inline]
pub fn segment_dist2(path: &[[f32; 4]], k: usize, q: [f32; 2]) -> (f32, f32) {
    let n = path.len();
    let a = path[k];
    let b = path[if k + 1 < n { k + 1 } else { 0 }];
    let (abx, aby) = (b[0] - a[0], b[1] - a[1]);
    let (aqx, aqy) = (q[0] - a[0], q[1] - a[1]);
    let l2 = abx * abx + aby * aby;
    let along = aqx * abx + aqy * aby;
    // Clamped ends need no division (the common case in a search window).
    let t = if along <= 0.0 || fails_gt(l2, 0.0) {
        0.0
    } else if along >= l2 {
        1.0
    } else {
        along / l2
    };
    let (dx, dy) = (aqx - t * abx, aqy - t * aby);
    (dx * dx + dy * dy, t)
}

/// The nearest point of the closed path `path` (at least 2 points) to `q`: a bounded local
/// search from segment `hint` (taken mod `n`), then, if it cannot vouch for its answer, all
/// segments (see the module doc). Non-finite `q` gives `segment = hint mod n`, `t` and `dist2`
/// NaN.
#[inline]
pub fn locate(
    path: &[[f32; 4]],
    q: [f32; 2],
    hint: u32,
    window: usize,
    relocalize2: f32,
) -> Located {
    let n = path.len();
    let hint = hint as usize;
    let hint = if hint < n { hint } else { hint % n.max(1) };
    if !(q[0].is_finite() && q[1].is_finite()) || n < 2 {
        return Located {
            segment: hint as u32,
            t: f32::NAN,
            dist2: f32::NAN,
            scanned: false,
        };
    }
    if 2 * window + 1 < n {
        let (mut best_d, mut best_t) = segment_dist2(path, hint, q);
        let mut best_k = hint;
        let mut bounded = false;
        // Forward while the next segment is strictly nearer.
        for step in 0..=window {
            let k = if best_k + 1 < n { best_k + 1 } else { 0 };
            let (d, t) = segment_dist2(path, k, q);
            if fails_lt(d, best_d) {
                break;
            }
            if step == window {
                bounded = true;
                break;
            }
            (best_d, best_t, best_k) = (d, t, k);
        }
        // Backward, if forward did not move.
        if best_k == hint {
            for step in 0..=window {
                let k = if best_k > 0 { best_k - 1 } else { n - 1 };
                let (d, t) = segment_dist2(path, k, q);
                if fails_lt(d, best_d) {
                    break;
                }
                if step == window {
                    bounded = true;
                    break;
                }
                (best_d, best_t, best_k) = (d, t, k);
            }
        }
        if !bounded && best_d <= relocalize2 {
            return Located {
                segment: best_k as u32,
                t: best_t,
                dist2: best_d,
                scanned: false,
            };
        }
    }
    let (mut best_d, mut best_t, mut best_k) = (f32::INFINITY, 0.0, 0);
    for (k, pair) in path.windows(2).enumerate() {
        let (d, t) = segment_dist2(pair, 0, q);
        if d < best_d {
            (best_d, best_t, best_k) = (d, t, k);
        }
    }
    let (d, t) = segment_dist2(path, n - 1, q);
    if d < best_d {
        (best_d, best_t, best_k) = (d, t, n - 1);
    }
    Located {
        segment: best_k as u32,
        t: best_t,
        dist2: best_d,
        scanned: 2 * window + 1 < n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn circle(n: usize, r: f32) -> Vec<[f32; 4]> {
        (0..n)
            .map(|i| {
                let a = i as f32 / n as f32 * std::f32::consts::TAU;
                [r * crate::math::cos(a), r * crate::math::sin(a), 0.0, 0.0]
            })
            .collect()
    }

    fn brute(path: &[[f32; 4]], q: [f32; 2]) -> (usize, f32) {
        (0..path.len())
            .map(|k| (k, segment_dist2(path, k, q).0))
            .fold((0, f32::INFINITY), |b, x| if x.1 < b.1 { x } else { b })
    }

    #[test]
    fn local_search_agrees_with_brute_force_near_the_path() {
        let path = circle(100, 50.0);
        for i in 0..400 {
            let a = i as f32 * 0.0157;
            let r = 50.0 + ((i * 7) % 11) as f32 - 5.0;
            let q = [r * crate::math::cos(a), r * crate::math::sin(a)];
            let hint = (a / std::f32::consts::TAU * 100.0) as u32;
            let l = locate(&path, q, hint, 3, 36.0);
            // The global minimum (a tie between two segments may pick either).
            let (_, d) = brute(&path, q);
            assert_eq!(l.dist2, d, "query {i}");
            assert_eq!(segment_dist2(&path, l.segment as usize, q).0, d);
            assert!(!l.scanned);
        }
    }

    #[test]
    fn falls_back_when_teleported_or_far() {
        let path = circle(100, 50.0);
        // Hint far from the agent: the walk hits its bound, so it scans.
        let q = [-50.0, 0.5];
        let l = locate(&path, q, 0, 3, 36.0);
        assert!(l.scanned);
        assert_eq!(l.segment as usize, brute(&path, q).0);
        // Far from the path (the centre of the circle): scans too.
        let l = locate(&path, [0.0, 1.0], 25, 3, 36.0);
        assert!(l.scanned);
        let l = locate(&path, [f32::NAN, 0.0], 7, 3, 36.0);
        assert_eq!((l.segment, l.t.is_nan(), l.dist2.is_nan()), (7, true, true));
        // A bogus hint is taken mod n.
        let l = locate(&path, [50.0, 0.1], 100 + 1, 3, 36.0);
        assert_eq!(l.segment, 0);
    }
}
