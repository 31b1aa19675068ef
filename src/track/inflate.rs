//! Inflation: from a plan-view centerline and its heights to index-aligned `center`, `outer`,
//! `inner`, with unit `tangent` (3D, central difference), left horizontal `normal`, arc length
//! and closed length. Borders lie at ±half_width along the normal at the centre's height; the
//! outer border is on the side away from the enclosed region.

use super::validity::orientation;
use crate::geom::Vec2;
use crate::geom::Vec3;

/// One env's output slices (each `n_max` long) and scalars.
pub struct InflateOut<'a> {
    /// Centerline points.
    pub center: &'a mut [Vec3],
    /// Outer border.
    pub outer: &'a mut [Vec3],
    /// Inner border.
    pub inner: &'a mut [Vec3],
    /// Unit tangents.
    pub tangent: &'a mut [Vec3],
    /// Left unit normals.
    pub normal: &'a mut [Vec3],
    /// Arc lengths.
    pub arclen: &'a mut [f32],
    /// Closed length.
    pub length: &'a mut f32,
}

/// Inflates the closed curve `pts` with heights `z` into `out`; pads past `pts.len()` with NaN.
pub fn inflate_lane(pts: &[Vec2], z: &[f32], half_width_m: f32, out: InflateOut<'_>) {
    let n = pts.len();
    let z = &z[..n];
    let c3 = |i: usize| Vec3::new(pts[i][0], pts[i][1], z[i]);
    let o = orientation(pts) * half_width_m;
    let mut s = 0.0f32;
    if n > 0 {
        // The previous, current and next points roll along the loop: each is built once.
        let (mut a, mut c) = (c3(n - 1), c3(0));
        let points = out.center[..n].iter_mut().zip(&mut out.tangent[..n]);
        let normals = out.normal[..n].iter_mut().zip(&mut out.arclen[..n]);
        let borders = out.outer[..n].iter_mut().zip(&mut out.inner[..n]);
        for (i, (((center, tangent), (normal, arclen)), (outer, inner))) in
            points.zip(normals).zip(borders).enumerate()
        {
            let b = c3(if i + 1 < n { i + 1 } else { 0 });
            let t = b - a;
            let t = t / t.length();
            let hl = (t.x * t.x + t.y * t.y).sqrt();
            let nl = Vec3::new(-t.y / hl, t.x / hl, 0.0);
            *center = c;
            *tangent = t;
            *normal = nl;
            *outer = Vec3::new(c.x - o * nl.x, c.y - o * nl.y, c.z);
            *inner = Vec3::new(c.x + o * nl.x, c.y + o * nl.y, c.z);
            *arclen = s;
            s += (b - c).length();
            (a, c) = (c, b);
        }
    }
    *out.length = s;
    // Vec3::NAN is three f32 NaNs: filled as floats, the padding takes whole vector stores.
    for buf in [out.center, out.outer, out.inner, out.tangent, out.normal] {
        bytemuck::cast_slice_mut::<Vec3, f32>(&mut buf[n..]).fill(f32::NAN);
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
    out: &mut [Vec2],
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
        *p = Vec2::new(r * c, r * s);
    }
    n
}
