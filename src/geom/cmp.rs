//! NaN-failing comparisons.
//!
//! Every check in the course code is written so that a NaN *fails* it: `fails_ge(a, b)` is
//! `!(a >= b)`, true when `a < b` or when either is NaN. Spelled as functions (rather than
//! negated comparisons) so the intent stays visible.

use std::cmp::Ordering;

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
    }
}
