//! Cubic curves over 2D and 3D points: Bézier segments and the uniform Catmull–Rom spline.

use std::ops::{Add, Div, Mul, Sub};

use super::{Vec2, Vec3};

/// A point type the splines evaluate over ([`Vec2`] or [`Vec3`]): component-wise IEEE operators.
pub trait SplinePoint:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<f32, Output = Self> + Div<f32, Output = Self>
{
}

impl SplinePoint for Vec2 {}
impl SplinePoint for Vec3 {}

/// The cubic Bézier `(a, b, c, d)` at `t ∈ [0, 1]`: `w0·a + w1·b + w2·c + w3·d` with the
/// Bernstein weights `w0 = s³, w1 = 3s²t, w2 = 3st², w3 = t³` (`s = 1 − t`), summed left to
/// right.
#[inline]
pub fn bezier<P: SplinePoint>(a: P, b: P, c: P, d: P, t: f32) -> P {
    bezier_weighted([a, b, c, d], bezier_weights(t))
}

/// The Bernstein weights `[s³, 3s²t, 3st², t³]` (`s = 1 − t`) of [`bezier`] at `t`, for callers
/// that evaluate many segments at the same parameters.
#[inline]
pub fn bezier_weights(t: f32) -> [f32; 4] {
    let s = 1.0 - t;
    [s * s * s, 3.0 * s * s * t, 3.0 * s * t * t, t * t * t]
}

/// The cubic Bézier `[a, b, c, d]` at the parameter of the weights `w` ([`bezier_weights`]):
/// `a·w0 + b·w1 + c·w2 + d·w3`, summed left to right — the same bits as [`bezier`].
#[inline]
pub fn bezier_weighted<P: SplinePoint>([a, b, c, d]: [P; 4], w: [f32; 4]) -> P {
    a * w[0] + b * w[1] + c * w[2] + d * w[3]
}

/// Point `t ∈ [0, 1]` of the uniform Catmull–Rom segment from `p1` to `p2` (`p0`, `p3` its
/// outer neighbours), evaluated as the Bézier with inner handles `p1 + (p2 − p0)/6` and
/// `p2 − (p3 − p1)/6`. Its tangent at `p1` is `(p2 − p0)/2`.
#[inline]
pub fn catmull_rom<P: SplinePoint>(p0: P, p1: P, p2: P, p3: P, t: f32) -> P {
    let b = p1 + (p2 - p0) / 6.0;
    let c = p2 - (p3 - p1) / 6.0;
    bezier(p1, b, c, p2, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catmull_rom_interpolates_its_inner_points() {
        let p = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 2.0, 0.5),
            Vec3::new(3.0, 2.0, 1.0),
            Vec3::new(4.0, 0.0, 0.0),
        ];
        assert_eq!(catmull_rom(p[0], p[1], p[2], p[3], 0.0), p[1]);
        assert!((catmull_rom(p[0], p[1], p[2], p[3], 1.0) - p[2]).length() < 1e-6);
        let q = [
            Vec2::ZERO,
            Vec2::X,
            Vec2::new(2.0, 0.0),
            Vec2::new(3.0, 0.0),
        ];
        assert!((catmull_rom(q[0], q[1], q[2], q[3], 0.5) - Vec2::new(1.5, 0.0)).length() < 1e-6);
    }
}
