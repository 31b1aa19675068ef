//! Relaxation of a resampled centerline: separation, turn radius and spacing.
//!
//! Each sweep is a Jacobi step (displacements are accumulated from the current positions, then
//! applied), so a point lane on the GPU computes the same numbers as this sequential loop:
//!
//! - **separation**: points at arc distance ≥ π·d/2 (non-neighbours) closer than
//!   `d = 2·half_width·(1 + margin)` are pushed apart, each by half the overlap;
//! - **turn radius**: where the Menger curvature exceeds `1 / (1.05·min_turn_radius)`, the point
//!   moves toward the midpoint of its neighbours by `smoothing`, and its two neighbours by half
//!   of that (Laplacian smoothing on a stretch that widens by two points per sweep);
//! - **spacing**: each point slides along its tangent toward the middle of its neighbours' arc.
//!
//! Sweeps run in windows of the launch context's bounded loop; after each window
//! [`violation`] decides whether the env is still active.

use super::chunks::{any_close_pair_fails, for_close_pairs};
use super::geometry::{curvature_exceeds, dist, dist2};
use crate::geom::Vec2;
use crate::preset::Preset;

/// Per-pipeline relaxation constants.
#[derive(Clone, Copy, Debug)]
pub struct RelaxConsts {
    /// Target separation of non-neighbouring points, metres.
    pub separation_m: f32,
    /// Separation a converged track must reach, metres.
    pub converged_separation_m: f32,
    /// Largest curvature of a converged track, 1/m.
    pub max_curvature: f32,
    /// Curvature above which smoothing applies, 1/m.
    pub smooth_curvature: f32,
    /// Laplacian gain.
    pub smoothing: f32,
    /// Arc distance under which two points count as neighbours, metres.
    pub neighbour_arc_m: f32,
}

impl RelaxConsts {
    /// The constants of `preset`'s relaxation: separation `2·hw·(1 + margin)` (converged at half
    /// the margin), curvature bounded by the minimum turn radius (smoothing from 1.05 times it).
    pub fn from_preset(preset: &Preset) -> Self {
        let t = &preset.track;
        let separation_m = 2.0 * t.half_width_m * (1.0 + preset.relax.margin);
        Self {
            separation_m,
            converged_separation_m: 2.0 * t.half_width_m * (1.0 + 0.5 * preset.relax.margin),
            max_curvature: 1.0 / t.min_turn_radius_m,
            smooth_curvature: 1.0 / (1.05 * t.min_turn_radius_m),
            smoothing: preset.relax.smoothing,
            neighbour_arc_m: crate::math::PI * 0.5 * separation_m,
        }
    }
}

/// Scratch of one lane.
pub struct RelaxScratch<'a> {
    /// Two words per point: the displacement accumulator, then the chunk boxes or the segment
    /// lengths.
    pub disp: &'a mut [Vec2],
}

/// [`violation`] flag: some turn is tighter than the minimum radius.
pub const TOO_TIGHT: u8 = 1;
/// [`violation`] flag: some non-neighbouring points are too close.
pub const TOO_CLOSE: u8 = 2;

/// Runs `sweeps` relaxation sweeps on the closed curve `pts`. The separation pass runs only when
/// `flags` (from [`violation`] at the end of the previous window) has [`TOO_CLOSE`].
pub fn relax_sweeps(
    pts: &mut [Vec2],
    c: &RelaxConsts,
    s: &mut RelaxScratch<'_>,
    sweeps: u32,
    flags: u8,
) {
    let n = pts.len();
    if n < 4 {
        return;
    }
    for _ in 0..sweeps {
        let disp = &mut s.disp[..n];
        disp.fill(Vec2::new(0.0, 0.0));
        let sep2 = c.separation_m * c.separation_m;
        if flags & TOO_CLOSE != 0 {
            let spacing = super::resample::closed_length(pts) / n as f32;
            let excl = neighbour_gap(c.neighbour_arc_m, spacing);
            let (disp, boxes) = s.disp.split_at_mut(n);
            for_close_pairs(pts, boxes, c.separation_m, excl, |i, j| {
                if dist2(pts[i], pts[j]) < sep2 {
                    let d = dist(pts[i], pts[j]);
                    if d > 0.0 {
                        let push = 0.5 * (c.separation_m - d) / d;
                        let v = [
                            (pts[i][0] - pts[j][0]) * push,
                            (pts[i][1] - pts[j][1]) * push,
                        ];
                        disp[i][0] += v[0];
                        disp[i][1] += v[1];
                        disp[j][0] -= v[0];
                        disp[j][1] -= v[1];
                    }
                }
                true
            });
        }
        // Segment lengths of the current positions (Jacobi: every move reads the same state).
        let (disp, lengths) = s.disp.split_at_mut(n);
        for i in 0..n {
            lengths[i][0] = dist(pts[i], if i + 1 < n { pts[i + 1] } else { pts[0] });
        }
        // Flag the points whose turn is too tight (kept in the lengths' second word). Each point
        // reads both neighbours by index, as a point lane does: with a previous point carried
        // from one iteration to the next, LLVM keeps it as two pointer recurrences (one per `Vec2`
        // component; an `[f32; 2]` was one 8-byte load) and the loop vectorizer gives up on the
        // loop, which made relaxation cost about a fifth more instructions.
        for i in 0..n {
            let a = pts[if i == 0 { n - 1 } else { i - 1 }];
            let b = if i + 1 < n { pts[i + 1] } else { pts[0] };
            lengths[i][1] = if curvature_exceeds(a, pts[i], b, c.smooth_curvature) {
                1.0
            } else {
                0.0
            };
        }
        let mut a = pts[n - 1];
        let mut la = lengths[n - 1][0];
        let mut smoothed = false;
        for i in 0..n {
            let p = pts[i];
            let b = if i + 1 < n { pts[i + 1] } else { pts[0] };
            // A tight point gets the full gain, its neighbours half of it: the smoothed stretch
            // widens by two points per sweep instead of one.
            let before = lengths[if i == 0 { n - 1 } else { i - 1 }][1];
            let after = lengths[if i + 1 < n { i + 1 } else { 0 }][1];
            let weight = (lengths[i][1] + 0.5 * (before + after)).min(1.0);
            if weight > 0.0 {
                smoothed = true;
                let g = c.smoothing * weight;
                let mid = [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])];
                disp[i][0] += g * (mid[0] - p[0]);
                disp[i][1] += g * (mid[1] - p[1]);
            }
            let lb = lengths[i][0];
            let arm = la + lb;
            if arm > 0.0 {
                let slide = 0.25 * (lb - la) / arm;
                disp[i][0] += slide * (b[0] - a[0]);
                disp[i][1] += slide * (b[1] - a[1]);
            }
            a = p;
            la = lb;
        }
        for (p, d) in pts.iter_mut().zip(disp.iter()) {
            p[0] += d[0];
            p[1] += d[1];
        }
        // Every turn is already within the smoothing threshold and nothing is being pushed
        // apart: the rest of the window would only even out the spacing, so the lane stops here.
        if !smoothed && flags & TOO_CLOSE == 0 {
            break;
        }
    }
}

/// The index gap under which two points of a curve with mean `spacing` are neighbours.
#[inline]
pub fn neighbour_gap(neighbour_arc_m: f32, spacing: f32) -> usize {
    let g = neighbour_arc_m / spacing;
    if g.is_finite() && g < 1.0e6 {
        g.ceil() as usize
    } else {
        usize::MAX / 2
    }
}

/// What the curve still violates: a combination of [`TOO_TIGHT`] and [`TOO_CLOSE`], 0 when it
/// has converged (the window's `active` flag). While the curve is too tight and `check_close` is
/// false, the separation test (a grid pass) is deferred to the window where the turns converge.
pub fn violation(pts: &[Vec2], c: &RelaxConsts, s: &mut RelaxScratch<'_>, check_close: bool) -> u8 {
    let n = pts.len();
    if n < 4 {
        return 0;
    }
    // The turn test over every point at once (branch-free: it vectorizes, and the verdict is
    // the same as stopping at the first tight turn), then the segment lengths into the scratch,
    // then their sum in index order (the order of the sum fixes `total` to the bit).
    let k = c.max_curvature;
    let mut tight = curvature_exceeds(pts[n - 2], pts[n - 1], pts[0], k)
        | curvature_exceeds(pts[n - 1], pts[0], pts[1], k);
    for ((&a, &p), &b) in pts.iter().zip(&pts[1..]).zip(&pts[2..]) {
        tight |= curvature_exceeds(a, p, b, k);
    }
    let mut flags = 0;
    if tight {
        flags |= TOO_TIGHT;
        if !check_close {
            return flags;
        }
    }
    let (lengths, boxes) = s.disp.split_at_mut(n);
    let lengths: &mut [f32] = &mut bytemuck::cast_slice_mut(lengths)[..n];
    for ((l, &p), &b) in lengths.iter_mut().zip(pts).zip(&pts[1..]) {
        *l = dist(p, b);
    }
    lengths[n - 1] = dist(pts[n - 1], pts[0]);
    let (mut total, mut longest) = (0.0f32, 0.0f32);
    for &l in &*lengths {
        total += l;
        longest = longest.max(l);
    }
    let mut min_gap = neighbour_gap(c.neighbour_arc_m, total / n as f32);
    if flags == 0 {
        // With every turn radius ≥ R = min_turn_radius, Schur's comparison theorem keeps points
        // at arc s ∈ [π·d/2, π·R] at least 2·R·sin(s / 2R) ≥ d apart (d = the separation): only
        // pairs more than π·R apart along the curve can be too close.
        let schur = neighbour_gap(crate::math::PI / c.max_curvature, longest);
        min_gap = min_gap.max(schur.saturating_sub(1));
    }
    let converged2 = c.converged_separation_m * c.converged_separation_m;
    let too_close = any_close_pair_fails(pts, boxes, c.converged_separation_m, min_gap, |i, j| {
        dist2(pts[i], pts[j]) >= converged2
    });
    if too_close {
        flags |= TOO_CLOSE;
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict of the former walk (the turn test up to the first tight turn, the lengths
    /// summed in the same loop) with the close pairs found by testing every pair.
    fn reference(pts: &[Vec2], c: &RelaxConsts, check_close: bool) -> u8 {
        let n = pts.len();
        let mut flags = 0;
        let (mut total, mut longest) = (0.0f32, 0.0f32);
        let mut a = pts[n - 1];
        for i in 0..n {
            let (p, b) = (pts[i], pts[(i + 1) % n]);
            if flags == 0 && curvature_exceeds(a, p, b, c.max_curvature) {
                flags |= TOO_TIGHT;
                if !check_close {
                    return flags;
                }
            }
            let l = dist(p, b);
            total += l;
            longest = longest.max(l);
            a = p;
        }
        let mut min_gap = neighbour_gap(c.neighbour_arc_m, total / n as f32);
        if flags == 0 {
            let schur = neighbour_gap(crate::math::PI / c.max_curvature, longest);
            min_gap = min_gap.max(schur.saturating_sub(1));
        }
        let converged2 = c.converged_separation_m * c.converged_separation_m;
        for i in 0..n {
            for j in i + 1..n {
                let gap = (j - i).min(n - (j - i));
                if gap > min_gap && dist2(pts[i], pts[j]) < converged2 {
                    return flags | TOO_CLOSE;
                }
            }
        }
        flags
    }

    /// `violation` returns the reference's flags on wobbly loops: smooth, tight, pinched and
    /// with a stray point, both with and without the close test under tight turns.
    #[test]
    fn violation_matches_the_reference() {
        let mut x = 0x9e37_79b9_u32;
        let mut unit = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as f32 / u32::MAX as f32
        };
        let c = RelaxConsts {
            separation_m: 13.2,
            converged_separation_m: 12.6,
            max_curvature: 1.0 / 12.0,
            smooth_curvature: 1.0 / 12.6,
            smoothing: 0.5,
            neighbour_arc_m: crate::math::PI * 0.5 * 13.2,
        };
        let mut seen = [0usize; 4];
        for case in 0..3000 {
            let n = 8 + (case / 3) % 200;
            let r0 = n as f32 * 5.0 / crate::math::TAU;
            let wobble = 0.6 * (case % 4) as f32 * unit();
            let lobes = 2.0 + (case % 5) as f32;
            let mut pts: Vec<Vec2> = (0..n)
                .map(|k| {
                    let t = k as f32 / n as f32 * crate::math::TAU;
                    let r = r0 * (1.0 + wobble * crate::math::sin(lobes * t))
                        + 0.2 * (case % 3) as f32 * (unit() - 0.5);
                    let (s, co) = crate::math::sin_cos(t);
                    Vec2::new(300.0 + r * co, -50.0 + r * s)
                })
                .collect();
            if case % 7 == 0 {
                let k = (unit() * n as f32) as usize % n;
                pts[k] = Vec2::new(300.0 + 2.0 * r0 * (unit() - 0.5), -50.0 + r0 * unit());
            }
            let mut disp = vec![Vec2::ZERO; 2 * n];
            for check_close in [false, true] {
                let want = reference(&pts, &c, check_close);
                let got = violation(&pts, &c, &mut RelaxScratch { disp: &mut disp }, check_close);
                assert_eq!(got, want, "case {case}, n {n}, check_close {check_close}");
                seen[usize::from(want)] += 1;
            }
        }
        // Every combination of flags occurs, so the test covers each verdict.
        assert!(seen.iter().all(|&s| s > 0), "{seen:?}");
    }
}
