//! Inflation: from a plan-view centerline and its heights to index-aligned `center`, `outer`,
//! `inner`, with unit `tangent` (3D, central difference), left horizontal `normal`, arc length
//! and closed length. Borders lie at ±half_width along the normal at the centre's height; the
//! outer border is on the side away from the enclosed region.

use super::generators::P2;
use super::validity::orientation;

/// One env's output slices (each `n_max` long) and scalars.
pub struct InflateOut<'a> {
    /// Centerline points.
    pub center: &'a mut [[f32; 3]],
    /// Outer border.
    pub outer: &'a mut [[f32; 3]],
    /// Inner border.
    pub inner: &'a mut [[f32; 3]],
    /// Unit tangents.
    pub tangent: &'a mut [[f32; 3]],
    /// Left unit normals.
    pub normal: &'a mut [[f32; 3]],
    /// Arc lengths.
    pub arclen: &'a mut [f32],
    /// Closed length.
    pub length: &'a mut f32,
}

/// Inflates the closed curve `pts` with heights `z` into `out`; pads past `pts.len()` with NaN.
pub fn inflate_lane(pts: &[P2], z: &[f32], half_width_m: f32, out: InflateOut<'_>) {
    let n = pts.len();
    let sigma = orientation(pts);
    let c3 = |i: usize| [pts[i][0], pts[i][1], z[i]];
    let mut s = 0.0f32;
    for i in 0..n {
        let c = c3(i);
        let a = c3((i + n - 1) % n);
        let b = c3((i + 1) % n);
        let t = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let tl = (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]).sqrt();
        let t = [t[0] / tl, t[1] / tl, t[2] / tl];
        let hl = (t[0] * t[0] + t[1] * t[1]).sqrt();
        let nl = [-t[1] / hl, t[0] / hl, 0.0];
        out.center[i] = c;
        out.tangent[i] = t;
        out.normal[i] = nl;
        let o = sigma * half_width_m;
        out.outer[i] = [c[0] - o * nl[0], c[1] - o * nl[1], c[2]];
        out.inner[i] = [c[0] + o * nl[0], c[1] + o * nl[1], c[2]];
        out.arclen[i] = s;
        let d = [b[0] - c[0], b[1] - c[1], b[2] - c[2]];
        s += (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    }
    *out.length = s;
    let nan3 = [f32::NAN; 3];
    for buf in [out.center, out.outer, out.inner, out.tangent, out.normal] {
        buf[n..].fill(nan3);
    }
    out.arclen[n..].fill(f32::NAN);
}

/// The deterministic fallback track: a circle of radius `max(0.8·scale, 1.25·min_turn_radius)`
/// at the preset's spacing (its count capped by `out.len()`); returns the count. It passes every
/// validity check for any preset the preset parser accepts.
pub fn fallback_circle(
    scale_m: f32,
    min_turn_radius_m: f32,
    spacing_m: f32,
    out: &mut [P2],
) -> usize {
    let r = (0.8 * scale_m).max(1.25 * min_turn_radius_m);
    let wanted = crate::math::round_small(crate::math::TAU * r / spacing_m);
    let n = if wanted >= out.len() as f32 {
        out.len()
    } else {
        (wanted as usize).max(super::resample::MIN_POINTS)
    };
    for (i, p) in out.iter_mut().enumerate().take(n) {
        let (s, c) = crate::math::sin_cos(crate::math::TAU * i as f32 / n as f32);
        *p = [r * c, r * s];
    }
    n
}
