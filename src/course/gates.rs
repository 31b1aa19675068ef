//! Gate courses: 3D sequences of 4–32 gates placed along a generated track.
//!
//! A gate preset is a track preset plus a `[gates]` section ([`GateParams`]). The track
//! pipeline (plan-view generator → resample → relax → validity → z-profile → inflate) draws a
//! closed *guide* track; the gate stages then run over env lanes, like the track stages:
//!
//! 1. **place** (random stream [`stream::GATES`](crate::rng::stream::GATES) at the attempt): the gate
//!    count `G` uniform in `min_gates..=max_gates`; gate `i` at arc length
//!    `(i + spacing_jitter·(u − ½))·L/G` of the guide (gate 0 exactly at the start, `s = 0`),
//!    offset laterally by `±lateral_jitter_m` along the guide's normal and raised to the guide's
//!    height + `altitude_m ± altitude_jitter_m`; inner width and height uniform in their ranges;
//! 2. **relax** (a bounded loop of windows of Jacobi sweeps, [`Launch::bounded_loop`](crate::exec::Launch::bounded_loop)): sphere
//!    self-collision — every pair of gates closer than `(1 + margin)·max(min_spacing_m, r_i + r_j)`
//!    (`r` = the frame's bounding-sphere radius) is pushed apart in plan view, each by half the
//!    overlap; legs steeper than `0.95·max_grade` are levelled; gates whose turn is sharper than
//!    `0.95·max_turn_deg` move toward their neighbours' midpoint by `smoothing`;
//! 3. **validity** ([`is_valid`]) — otherwise the env retries on the next attempt stream, and
//!    after `max_attempts` it gets the deterministic fallback ring ([`fallback_ring`],
//!    `valid = 0`);
//! 4. **frames**: roll-free orientations ([`roll_free`](crate::geom::roll_free)).
//!
//! A gate's frame, in its local axes (x forward through the opening, y left, z up), is the
//! rectangle ring between the opening `|y| ≤ w/2, |z| ≤ h/2` and the outer rectangle
//! `|y| ≤ w/2 + t, |z| ≤ h/2 + t`, extruded over the depth `|x| ≤ t/2` (`t` = thickness).
//! Quaternions are `[x, y, z, w]` (scalar last), rotating local axes into world axes.
//!
//! The *racing line* ([`racing_line`]) is the closed uniform Catmull–Rom spline through the gate
//! centres. Its tangent at gate `i` is `(p_{i+1} − p_{i−1})/2`, which is exactly the gate's
//! forward axis, so the line passes every gate through its centre, perpendicular to its plane.

use crate::geom::{self, catmull_rom, fails_ge, fails_gt, fails_le, Quat, Vec2, Vec3};
use crate::math::{cos, sin_cos, PI, TAU};
use crate::preset::{GateParams, Preset};
use crate::rng::LaneRng;
use crate::{Error, Result};

/// The racing line through the closed gate sequence `pos`: `samples` points per leg, point
/// `i·samples + j` at `tau = j/samples` of leg `i → i+1`, so gate `i` is point `i·samples`.
/// Writes `pos.len()·samples` points into `out` and returns that count.
pub fn racing_line(pos: &[Vec3], samples: usize, out: &mut [Vec3]) -> usize {
    racing_line_each(pos, samples, |k, p| out[k] = p);
    pos.len() * samples
}

/// Calls `visit(k, point)` for every point `k` of the [`racing_line`] through `pos`, in order.
pub fn racing_line_each(pos: &[Vec3], samples: usize, mut visit: impl FnMut(usize, Vec3)) {
    let g = pos.len();
    for i in 0..g {
        let p0 = pos[(i + g - 1) % g];
        let p1 = pos[i];
        let p2 = pos[(i + 1) % g];
        let p3 = pos[(i + 2) % g];
        for j in 0..samples {
            visit(
                i * samples + j,
                catmull_rom(p0, p1, p2, p3, j as f32 / samples as f32),
            );
        }
    }
}

/// Constants of the gate stages, derived once from the preset.
#[derive(Clone, Debug)]
pub struct GateConsts {
    /// The preset's gate parameters.
    pub params: GateParams,
    /// `cos(max_turn)`: a gate turns too sharply when the legs' cosine is below it.
    pub cos_max_turn: f32,
    /// `cos(0.95·max_turn)`, the relaxation's target.
    pub cos_relax_turn: f32,
    /// Gates of the fallback ring.
    pub fallback_gates: u32,
    /// Radius of the fallback ring, metres.
    pub fallback_radius_m: f32,
}

impl GateConsts {
    /// The constants of `preset`, which must have a `[gates]` section.
    pub fn new(preset: &Preset) -> Result<Self> {
        let params = preset.gates.clone().ok_or_else(|| {
            Error::Invalid(format!(
                "preset {} has no [gates] section: expected a gate preset (e.g. `gates`, `gates-indoor`)",
                preset.source
            ))
        })?;
        let deg = PI / 180.0;
        let fallback_gates = params.fallback_gates(&preset.track).ok_or_else(|| {
            Error::Invalid(format!(
                "preset {}: the fallback ring cannot hold `gates.min_gates` gates",
                preset.source
            ))
        })?;
        Ok(Self {
            cos_max_turn: cos(params.max_turn_deg * deg),
            cos_relax_turn: cos(0.95 * params.max_turn_deg * deg),
            fallback_gates,
            fallback_radius_m: GateParams::fallback_radius_m(&preset.track),
            params,
        })
    }

    #[inline]
    fn bound(&self, size: Vec2) -> f32 {
        self.params.bound_radius_m(size.x, size.y)
    }
}

/// The guide track of one env, as the place stage reads it.
pub struct Guide<'a> {
    /// Centerline points (`count` of them).
    pub center: &'a [Vec3],
    /// Left normals.
    pub normal: &'a [Vec3],
    /// Arc lengths.
    pub arclen: &'a [f32],
    /// Closed length.
    pub length: f32,
}

/// Draws one env's gates along `guide` into `pos` and `size`; returns the gate count.
pub fn place_lane(
    c: &GateConsts,
    rng: &mut LaneRng,
    guide: &Guide<'_>,
    pos: &mut [Vec3],
    size: &mut [Vec2],
) -> usize {
    let p = &c.params;
    let g = (p.min_gates + rng.below(p.max_gates - p.min_gates + 1)) as usize;
    let n = guide.center.len();
    if n < 2 || fails_gt(guide.length, 0.0) {
        // An unusable guide gives an empty (invalid) course: the env retries, then falls back.
        return 0;
    }
    let gap = guide.length / g as f32;
    let mut k = 0usize;
    for i in 0..g {
        let jitter = p.spacing_jitter * (rng.unit() - 0.5);
        let lateral = p.lateral_jitter_m * rng.signed();
        let altitude = p.altitude_m + p.altitude_jitter_m * rng.signed();
        let width = rng.range(p.min_width_m, p.max_width_m);
        let height = rng.range(p.min_height_m, p.max_height_m);
        let s = if i == 0 {
            0.0
        } else {
            (i as f32 + jitter) * gap
        };
        // Gates come in increasing arc length, so one forward walk finds every segment.
        while k + 1 < n && guide.arclen[k + 1] <= s {
            k += 1;
        }
        let a = guide.center[k];
        let b = guide.center[(k + 1) % n];
        let end = if k + 1 < n {
            guide.arclen[k + 1]
        } else {
            guide.length
        };
        let len = end - guide.arclen[k];
        let t = if len > 0.0 {
            ((s - guide.arclen[k]) / len).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let nl = guide.normal[k];
        pos[i] = Vec3::new(
            a[0] + (b[0] - a[0]) * t + lateral * nl[0],
            a[1] + (b[1] - a[1]) * t + lateral * nl[1],
            a[2] + (b[2] - a[2]) * t + altitude,
        );
        size[i] = Vec2::new(width, height);
    }
    g
}

/// [`violation`] flag: two gates are closer than their separation target.
pub const TOO_CLOSE: u8 = 1;
/// [`violation`] flag: a leg is steeper than the grade target.
pub const TOO_STEEP: u8 = 2;
/// [`violation`] flag: a gate turns more sharply than the turn target.
pub const TOO_SHARP: u8 = 4;

/// The separation target of gates `i` and `j` (the relaxation's, with the margin).
#[inline]
fn separation(c: &GateConsts, size: &[Vec2], i: usize, j: usize) -> f32 {
    c.params
        .min_spacing_m
        .max(c.bound(size[i]) + c.bound(size[j]))
}

/// Cosine of the turn at gate `i` and the product of its legs' lengths: `(dot, |u|·|v|)`.
#[inline]
fn turn(pos: &[Vec3], i: usize) -> (f32, f32) {
    let g = pos.len();
    let u = pos[i] - pos[(i + g - 1) % g];
    let v = pos[(i + 1) % g] - pos[i];
    (u.dot(v), u.length() * v.length())
}

/// What the gates still violate against the relaxation's targets: a combination of
/// [`TOO_CLOSE`], [`TOO_STEEP`] and [`TOO_SHARP`]; 0 when converged.
pub fn violation(c: &GateConsts, pos: &[Vec3], size: &[Vec2]) -> u8 {
    let g = pos.len();
    let p = &c.params;
    let mut flags = 0;
    for i in 0..g {
        for j in i + 1..g {
            let d = pos[j] - pos[i];
            let target = separation(c, size, i, j) * (1.0 + 0.5 * p.margin);
            if fails_ge(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], target * target) {
                flags |= TOO_CLOSE;
            }
        }
        let d = pos[(i + 1) % g] - pos[i];
        let h = (d[0] * d[0] + d[1] * d[1]).sqrt();
        if fails_le(d[2].abs(), 0.97 * p.max_grade * h) {
            flags |= TOO_STEEP;
        }
        let (cos_uv, len_uv) = turn(pos, i);
        if fails_ge(cos_uv, c.cos_relax_turn * len_uv) {
            flags |= TOO_SHARP;
        }
    }
    flags
}

/// Runs `sweeps` Jacobi relaxation sweeps on one env's gates (see the module doc).
pub fn relax_sweeps(
    c: &GateConsts,
    pos: &mut [Vec3],
    size: &[Vec2],
    disp: &mut [Vec3],
    sweeps: u32,
) {
    let g = pos.len();
    let p = &c.params;
    let disp = &mut disp[..g];
    for _ in 0..sweeps {
        disp.fill(Vec3::ZERO);
        for i in 0..g {
            for j in i + 1..g {
                let target = separation(c, size, i, j) * (1.0 + p.margin);
                let d = pos[j] - pos[i];
                let dist3 = d.length();
                if dist3 < target {
                    let h = (d[0] * d[0] + d[1] * d[1]).sqrt();
                    // Pushed in plan view so that the heights (and grades) stay put; stacked
                    // gates separate along the x axis.
                    let (dx, dy) = if h > 0.0 {
                        (d[0] / h, d[1] / h)
                    } else {
                        (1.0, 0.0)
                    };
                    let push = 0.5 * (target - dist3);
                    disp[i][0] -= dx * push;
                    disp[i][1] -= dy * push;
                    disp[j][0] += dx * push;
                    disp[j][1] += dy * push;
                }
            }
            let j = (i + 1) % g;
            let d = pos[j] - pos[i];
            let h = (d[0] * d[0] + d[1] * d[1]).sqrt();
            let allowed = 0.95 * p.max_grade * h;
            if d[2].abs() > allowed {
                let excess = 0.5 * (d[2].abs() - allowed) * if d[2] > 0.0 { 1.0 } else { -1.0 };
                disp[i][2] += 0.5 * excess;
                disp[j][2] -= 0.5 * excess;
            }
            let (cos_uv, len_uv) = turn(pos, i);
            if fails_ge(cos_uv, c.cos_relax_turn * len_uv) {
                let a = pos[(i + g - 1) % g];
                let b = pos[(i + 1) % g];
                for k in 0..3 {
                    disp[i][k] += p.smoothing * (0.5 * (a[k] + b[k]) - pos[i][k]);
                }
            }
        }
        for (q, d) in pos.iter_mut().zip(disp.iter()) {
            for k in 0..3 {
                q[k] += d[k];
            }
        }
    }
}

/// Whether one env's gates make a valid course. All of these must hold:
/// 1. `min_gates ≤ G ≤ max_gates`, and every position and size is finite;
/// 2. spacing: every two gate centres are at least `min_spacing_m` apart;
/// 3. no gate intersects another: the frames' bounding spheres are disjoint (`d ≥ r_i + r_j`),
///    which is conservative (disjoint spheres imply disjoint frames);
/// 4. grade: every leg (the closing one included) has `|Δz| ≤ max_grade · |Δxy|`;
/// 5. turn: at every gate the angle between the incoming and outgoing legs is ≤ `max_turn_deg`;
/// 6. the racing line ([`racing_line`], `path_samples` per leg) is flyable: consecutive path
///    segments turn by less than 60°, and every sample of leg `i → i+1` is at least `r_j` (the
///    bounding radius) from every gate `j ∉ {i, i+1}`, so the line never threads a gate out of
///    order or grazes one.
///
/// `path` is scratch of at least `G · path_samples` points.
pub fn is_valid(c: &GateConsts, pos: &[Vec3], size: &[Vec2], path: &mut [Vec3]) -> bool {
    let g = pos.len();
    let p = &c.params;
    if g < p.min_gates as usize || g > p.max_gates as usize {
        return false;
    }
    if !pos.iter().all(|q| q.is_finite()) || !size.iter().all(|s| s.is_finite()) {
        return false;
    }
    let min_spacing2 = p.min_spacing_m * p.min_spacing_m;
    for i in 0..g {
        for j in i + 1..g {
            let d = pos[j] - pos[i];
            let d2 = d.dot(d);
            let bound = c.bound(size[i]) + c.bound(size[j]);
            if d2 < min_spacing2 || d2 < bound * bound {
                return false;
            }
        }
        let d = pos[(i + 1) % g] - pos[i];
        let h = (d[0] * d[0] + d[1] * d[1]).sqrt();
        if d[2].abs() > p.max_grade * h {
            return false;
        }
        let (cos_uv, len_uv) = turn(pos, i);
        if fails_ge(cos_uv, c.cos_max_turn * len_uv) {
            return false;
        }
    }
    let s = p.path_samples as usize;
    let n = racing_line(pos, s, path);
    let path = &path[..n];
    // cos 60° = 0.5.
    for k in 0..n {
        let u = path[k] - path[(k + n - 1) % n];
        let v = path[(k + 1) % n] - path[k];
        if fails_ge(u.dot(v), 0.5 * u.length() * v.length()) {
            return false;
        }
    }
    for (k, q) in path.iter().enumerate() {
        let leg = k / s;
        for j in 0..g {
            if j == leg || j == (leg + 1) % g {
                continue;
            }
            let d = *q - pos[j];
            let r = c.bound(size[j]);
            if d.dot(d) < r * r {
                return false;
            }
        }
    }
    true
}

/// The deterministic fallback course: `fallback_gates` gates evenly on a flat counter-clockwise
/// ring of `fallback_radius_m` at height `altitude_m`, each of the mean inner size. It passes
/// [`is_valid`] for every preset the parser accepts. Returns the gate count.
pub fn fallback_ring(c: &GateConsts, pos: &mut [Vec3], size: &mut [Vec2]) -> usize {
    let g = c.fallback_gates as usize;
    let p = &c.params;
    let r = c.fallback_radius_m;
    let mean = Vec2::new(
        0.5 * (p.min_width_m + p.max_width_m),
        0.5 * (p.min_height_m + p.max_height_m),
    );
    for i in 0..g {
        let (s, co) = sin_cos(TAU * i as f32 / g as f32);
        pos[i] = Vec3::new(r * co, r * s, p.altitude_m);
        size[i] = mean;
    }
    g
}

/// Writes the roll-free orientation of every gate of one env: forward along
/// `p_{i+1} − p_{i−1}` (the racing line's tangent at the gate).
pub fn frames_lane(pos: &[Vec3], quat: &mut [Quat]) {
    let g = pos.len();
    for i in 0..g {
        let d = pos[(i + 1) % g] - pos[(i + g - 1) % g];
        let l = d.length();
        let f = if l > 0.0 { d / l } else { Vec3::X };
        quat[i] = geom::roll_free(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn racing_line_passes_through_gates_along_their_axis() {
        let pos = [
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(10.0, 1.0, 2.0),
            Vec3::new(12.0, 12.0, 2.5),
            Vec3::new(-1.0, 9.0, 1.5),
        ];
        let mut path = [Vec3::ZERO; 32];
        let n = racing_line(&pos, 8, &mut path);
        assert_eq!(n, 32);
        let mut quat = [Quat::IDENTITY; 4];
        frames_lane(&pos, &mut quat);
        for i in 0..4 {
            assert_eq!(path[i * 8], pos[i]);
            // The line's direction through the gate is the gate's forward axis.
            let d = path[(i * 8 + 1) % n] - path[(i * 8 + n - 1) % n];
            let c = d.dot(geom::forward(quat[i])) / d.length();
            assert!(c > 0.995, "gate {i}: cos {c}");
            // Roll-free: the left axis stays level.
            assert!(geom::axes(quat[i])[1].z.abs() < 1e-6);
        }
    }
}
