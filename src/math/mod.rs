//! Deterministic `f32` math.
//!
//! Generation and runtime paths may use only IEEE-exact operations (`+ - * /`, `sqrt`, `min`,
//! `max`, `abs`, comparisons, conversions) and the functions of this module, which are built from
//! those operations alone, in one fixed order, with no fused multiply-add. The same source is
//! written a second time in `kernels/common/math.cuh` (host + device); the test suite compiles
//! that header as host C++ and checks bit-identical results, so CPU and GPU agree to the bit.
//!
//! The algorithms are the classic Cephes single-precision ones (Moshier, *Methods and Programs
//! for Mathematical Functions*, 1989): Cody–Waite argument reduction followed by a short
//! minimax polynomial. Accuracy, measured against an `f64` reference and pinned by tests:
//!
//! | function | domain of the bound | max error |
//! |---|---|---|
//! | [`sin`], [`cos`] | `|x| ≤ 65536` | 2 ulp, or 2⁻²⁴ absolute near a zero |
//! | [`atan2`] | all finite | 2 ulp, or 2⁻²⁴ absolute |
//! | [`exp`] | normal results | 2 ulp |
//! | [`ln`] | all positive | 2 ulp |
//!
//! Outside the stated domains the results are still deterministic and twin-identical, and
//! special values follow C99 (NaN in → NaN out, `sin(±inf)` = NaN, `exp(-inf)` = 0, ...).

/// π as `f32`.
pub const PI: f32 = std::f32::consts::PI;
/// 2π as `f32`.
pub const TAU: f32 = std::f32::consts::TAU;
/// π/2 as `f32`.
pub const FRAC_PI_2: f32 = std::f32::consts::FRAC_PI_2;
/// π/4 as `f32`.
pub const FRAC_PI_4: f32 = std::f32::consts::FRAC_PI_4;

// Cody–Waite split of π/2: DP1 has 8 significant bits, so k·DP1 is exact for |k| < 2¹⁶.
const DP1: f32 = 1.570_312_5;
const DP2: f32 = 4.837_513e-4;
const DP3: f32 = 7.549_79e-8;
const TWO_OVER_PI: f32 = 0.636_619_77;
/// 1.5·2²³: adding and subtracting it rounds an `f32` of magnitude < 2²² to the nearest integer.
const ROUND_MAGIC: f32 = 12_582_912.0;

/// Rounds to the nearest integer (ties to even) for `|x| < 2²²`; larger `|x|` are returned as is.
#[inline]
pub fn round_small(x: f32) -> f32 {
    if x.abs() < 4_194_304.0 {
        (x + ROUND_MAGIC) - ROUND_MAGIC
    } else {
        x
    }
}

/// Splits `x` into a quadrant `q ∈ 0..4` and a remainder `r ≈ x − q·π/2`, `|r| ≲ π/4`.
#[inline]
fn reduce_quadrant(x: f32) -> (u32, f32) {
    let k = round_small(x * TWO_OVER_PI);
    let q = if k.abs() < 4.611_686e18 {
        ((k as i64) & 3) as u32
    } else {
        0
    };
    let r = ((x - k * DP1) - k * DP2) - k * DP3;
    (q, r)
}

#[inline]
fn sin_poly(r: f32) -> f32 {
    let z = r * r;
    ((-1.951_529_6e-4 * z + 8.332_161e-3) * z - 1.666_665_5e-1) * z * r + r
}

#[inline]
fn cos_poly(r: f32) -> f32 {
    let z = r * r;
    ((2.443_315_7e-5 * z - 1.388_731_6e-3) * z + 4.166_664_6e-2) * z * z - 0.5 * z + 1.0
}

/// Sine and cosine of `x` (radians) from one argument reduction. See the module table for accuracy.
#[inline]
pub fn sin_cos(x: f32) -> (f32, f32) {
    if !x.is_finite() {
        return (f32::NAN, f32::NAN);
    }
    if x == 0.0 {
        // Keeps the sign of zero, which the polynomial would lose.
        return (x, 1.0);
    }
    let (q, r) = reduce_quadrant(x);
    let s = sin_poly(r);
    let c = cos_poly(r);
    let (sin, cos) = match q {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    };
    (sin.clamp(-1.0, 1.0), cos.clamp(-1.0, 1.0))
}

/// Sine of `x` (radians). NaN or ±inf give NaN; `sin(-0) = -0`.
#[inline]
pub fn sin(x: f32) -> f32 {
    sin_cos(x).0
}

/// Cosine of `x` (radians). NaN or ±inf give NaN.
#[inline]
pub fn cos(x: f32) -> f32 {
    sin_cos(x).1
}

/// Arctangent of `x` for `x ∈ [0, 1]`.
#[inline]
fn atan_unit(a: f32) -> f32 {
    // tan(π/8) = 0.414…: above it, atan(a) = π/4 + atan((a − 1)/(a + 1)).
    let (base, t) = if a > 0.414_213_57 {
        (FRAC_PI_4, (a - 1.0) / (a + 1.0))
    } else {
        (0.0, a)
    };
    let z = t * t;
    let p = (((8.053_744_5e-2 * z - 1.387_768_6e-1) * z + 1.997_771_1e-1) * z - 3.333_295e-1) * z * t
        + t;
    base + p
}

/// The angle of the point `(x, y)` in `(-π, π]`, with C99's special cases (signed zeros, infinities).
/// NaN in either argument gives NaN.
#[inline]
pub fn atan2(y: f32, x: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return f32::NAN;
    }
    let ax = x.abs();
    let ay = y.abs();
    let swap = ay > ax;
    let a = if ax == ay {
        // Both zero gives 0 (the sign rules below finish it); both infinite gives π/4.
        if ax == 0.0 {
            0.0
        } else {
            1.0
        }
    } else if swap {
        ax / ay
    } else {
        ay / ax
    };
    let mut r = atan_unit(a);
    if swap {
        r = FRAC_PI_2 - r;
    }
    if x.is_sign_negative() {
        r = PI - r;
    }
    if y.is_sign_negative() {
        -r
    } else {
        r
    }
}

/// `2^n` as an `f32` for `n ∈ [-126, 127]`.
#[inline]
fn pow2i(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

/// `e^x`. Overflows to +inf above 88.72, underflows to 0 below −103.97; NaN gives NaN.
#[inline]
pub fn exp(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x > 88.722_84 {
        return f32::INFINITY;
    }
    if x < -103.972_08 {
        return 0.0;
    }
    let n = round_small(x * std::f32::consts::LOG2_E);
    let r = (x - n * 0.693_359_4) - n * -2.121_944_4e-4;
    let z = r * r;
    let p = (((((1.987_569_1e-4 * r + 1.398_2e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 5.000_000_1e-1)
        * z
        + r
        + 1.0;
    let ni = n as i32;
    // Scale in two steps so that subnormal results and n = 128 stay representable.
    let half = ni / 2;
    p * pow2i(half) * pow2i(ni - half)
}

/// Natural logarithm. `ln(0) = -inf`, `ln(x < 0) = NaN`, `ln(+inf) = +inf`, NaN gives NaN.
#[inline]
pub fn ln(x: f32) -> f32 {
    if x.is_nan() || x < 0.0 {
        return f32::NAN;
    }
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x == f32::INFINITY {
        return x;
    }
    let (x, bias) = if x < f32::MIN_POSITIVE {
        (x * 8_388_608.0, -23)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let mut e = ((bits >> 23) as i32) - 126 + bias;
    // m ∈ [0.5, 1)
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    if m < std::f32::consts::FRAC_1_SQRT_2 {
        e -= 1;
        m = m + m - 1.0;
    } else {
        m -= 1.0;
    }
    let z = m * m;
    let mut y = ((((((((7.037_683_6e-2 * m - 1.151_461e-1) * m + 1.167_699_9e-1) * m
        - 1.242_014_1e-1)
        * m
        + 1.424_932_3e-1)
        * m
        - 1.666_805_8e-1)
        * m
        + 2.000_071_4e-1)
        * m
        - 2.499_999_4e-1)
        * m
        + 3.333_333_1e-1)
        * m
        * z;
    let ef = e as f32;
    y += -2.121_944_4e-4 * ef;
    y += -0.5 * z;
    let mut r = m + y;
    r += 0.693_359_4 * ef;
    r
}

/// Wraps an angle to `(-π, π]` by subtracting the nearest multiple of 2π (in two parts).
#[inline]
pub fn wrap_angle(a: f32) -> f32 {
    let k = round_small(a * (1.0 / TAU));
    let r = (a - k * 6.281_25) - k * 1.935_307_2e-3;
    if r <= -PI {
        r + TAU
    } else if r > PI {
        r - TAU
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values() {
        assert!(sin(f32::NAN).is_nan());
        assert!(sin(f32::INFINITY).is_nan());
        assert!(cos(f32::NEG_INFINITY).is_nan());
        assert_eq!(sin(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(cos(0.0), 1.0);
        assert_eq!(atan2(0.0, -0.0), PI);
        assert_eq!(atan2(-0.0, -0.0), -PI);
        assert_eq!(atan2(-0.0, 0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(atan2(f32::INFINITY, f32::INFINITY), FRAC_PI_4);
        assert_eq!(atan2(1.0, f32::NEG_INFINITY), PI);
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(ln(0.0), f32::NEG_INFINITY);
        assert!(ln(-1.0).is_nan());
    }

    #[test]
    fn wrap_angle_range() {
        for i in -2000..2000 {
            let a = i as f32 * 0.0137;
            let w = wrap_angle(a);
            assert!(w > -PI - 1e-6 && w <= PI + 1e-6, "{a} -> {w}");
            assert!((sin(w) - sin(a)).abs() < 1e-4);
        }
    }
}
