//! Small 3D vector arithmetic and NaN-aware comparisons shared by the course stages.
//!
//! Every check of the course code is written so that a NaN *fails* it: `fails_ge(a, b)` is
//! `!(a >= b)`, true when `a < b` or when either is NaN. Spelled as functions (rather than
//! negated comparisons) so the intent stays visible.

use std::cmp::Ordering;

/// A 3D point or vector, metres.
pub type V3 = [f32; 3];

/// `a − b`.
#[inline]
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a · b`.
#[inline]
pub fn dot(a: V3, b: V3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `|a|`.
#[inline]
pub fn norm(a: V3) -> f32 {
    dot(a, a).sqrt()
}

/// `a × b`.
#[inline]
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The horizontal unit vector to the left of direction `t`: `(−t_y, t_x, 0) / |t_xy|`
/// (`[0, 1, 0]` for a vertical or zero `t`).
#[inline]
pub fn horizontal_left(t: V3) -> V3 {
    let h = (t[0] * t[0] + t[1] * t[1]).sqrt();
    if h > 0.0 {
        [-t[1] / h, t[0] / h, 0.0]
    } else {
        [0.0, 1.0, 0.0]
    }
}

/// `!(a >= b)`: `a < b`, or either is NaN.
#[inline]
pub fn fails_ge(a: f32, b: f32) -> bool {
    !matches!(a.partial_cmp(&b), Some(Ordering::Greater | Ordering::Equal))
}

/// `!(a <= b)`: `a > b`, or either is NaN.
#[inline]
pub fn fails_le(a: f32, b: f32) -> bool {
    !matches!(a.partial_cmp(&b), Some(Ordering::Less | Ordering::Equal))
}

/// `!(a < b)`: `a >= b`, or either is NaN.
#[inline]
pub fn fails_lt(a: f32, b: f32) -> bool {
    !matches!(a.partial_cmp(&b), Some(Ordering::Less))
}

/// `!(a > b)`: `a <= b`, or either is NaN.
#[inline]
pub fn fails_gt(a: f32, b: f32) -> bool {
    !matches!(a.partial_cmp(&b), Some(Ordering::Greater))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_fails_every_check() {
        assert!(fails_ge(1.0, 2.0) && !fails_ge(2.0, 2.0) && fails_ge(f32::NAN, 0.0));
        assert!(fails_le(3.0, 2.0) && !fails_le(2.0, 2.0) && fails_le(0.0, f32::NAN));
        assert!(fails_gt(2.0, 2.0) && !fails_gt(3.0, 2.0) && fails_gt(f32::NAN, 0.0));
        assert!(fails_lt(2.0, 2.0) && !fails_lt(1.0, 2.0) && fails_lt(f32::NAN, 0.0));
        assert_eq!(cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]), [0.0, 0.0, 1.0]);
        assert_eq!(norm([3.0, 4.0, 0.0]), 5.0);
    }
}
