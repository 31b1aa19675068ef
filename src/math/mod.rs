//! Deterministic `f32` math.
//!
//! Generation and runtime paths may use only IEEE-exact operations (`+ - * /`, `sqrt`, `min`,
//! `max`, `abs`, comparisons, conversions) and the functions of this module, which are built from
//! those operations alone, in one fixed order, with no fused multiply-add. The same source is
//! written a second time in `kernels/common/math.cuh` (host + device); the test suite compiles
//! that header as host C++ and checks bit-identical results, so CPU and GPU agree to the bit.
//!
//! The algorithms are the classic Cephes single-precision ones (Moshier, *Methods and Programs
//! for Mathematical Functions*, 1989): argument reduction followed by a short minimax
//! polynomial, with three refinements that keep every result within about one ulp in `f32`
//! arithmetic alone:
//!
//! - sin/cos and wrap_angle reduce by a six-part Cody–Waite split of π/2 whose leading products
//!   are exact, carrying the remainder as two floats (Knuth's TwoSum), so even results near a
//!   zero of sin or cos keep their relative accuracy;
//! - the sin/cos polynomials are evaluated in fdlibm's arrangement (`__kernel_sin`,
//!   `__kernel_cos`), which folds in the remainder's low part and the rounding error of `1 − z/2`;
//! - atan reduces with fdlibm's `atanf` intervals (bases 0, atan ½, π/4) and adds the rounding
//!   errors of the constants π/4, π/2, π last.
//!
//! Accuracy against an `f64` reference, pinned by `tests/math_accuracy.rs`: the bound, and the
//! largest error measured over every float of the domain (both signs; the `--ignored`
//! exhaustive test) or, for two-argument atan2 and the subnormal range of exp, over a sample of
//! tens of millions of arguments:
//!
//! | function | domain of the bound | bound | measured |
//! |---|---|---|---|
//! | [`sin`], [`cos`], [`sin_cos`] | `|x| ≤ 65536` | 1 ulp | 0.80 ulp |
//! | [`atan2`] | all finite pairs | 2 ulp | 1.81 ulp (sampled) |
//! | [`exp`] | normal results (`−87.34 ≤ x ≤ 88.72`) | 1 ulp | 0.99 ulp |
//! | [`exp`] | subnormal results (`−103.97 ≤ x < −87.34`) | 2⁻¹⁴⁹ | 0.75·2⁻¹⁴⁹ (sampled) |
//! | [`ln`] | all positive floats, subnormals included | 1 ulp | 0.83 ulp |
//! | [`wrap_angle`] | `|a| ≤ 65536` | 1 ulp | 0.50 ulp |
//!
//! Outside the stated domains the results are still deterministic and twin-identical: sin and
//! cos of every finite `x` lie in `[-1, 1]`, `wrap_angle` stays in `(-π, π]`, and special values
//! follow C99 (NaN in → NaN out, `sin(±inf)` = NaN, `sin(-0)` = -0, `exp(-inf)` = 0,
//! `ln(±0)` = -inf, `atan2(±0, -0)` = ±π, ...). Which NaN (payload) comes out is not specified.

/// π as `f32`.
pub const PI: f32 = std::f32::consts::PI;
/// 2π as `f32`.
pub const TAU: f32 = std::f32::consts::TAU;
/// π/2 as `f32`.
pub const FRAC_PI_2: f32 = std::f32::consts::FRAC_PI_2;
/// π/4 as `f32`.
pub const FRAC_PI_4: f32 = std::f32::consts::FRAC_PI_4;

/// π/2 as a Cody–Waite sum of six `f32`s. The first five have 8, 6, 6, 5 and 8 significant bits,
/// so `k·part` is exact for `|k| < 2¹⁶`; the first three end at 2⁻⁷, 2⁻¹⁸ and 2⁻²⁴, so for
/// `|x| ≥ 1/2` the differences `x − k·p₀ − k·p₁ − k·p₂` are multiples of 2⁻²⁴ below 1 in magnitude,
/// hence exact too. The last part holds the next 24 bits; π/2 − Σ parts ≈ 2·10⁻²¹.
const HALF_PI_PARTS: [f32; 6] = [
    1.570_312_5,
    4.806_518_6e-4,
    3.159_046_2e-6,
    1.583_248_4e-8,
    6.048_14e-11,
    2.896_074e-13,
];
/// 2π as the same split, scaled by 4 (exactly): the same exactness holds for `|x| ≥ 2`.
const TAU_PARTS: [f32; 6] = [
    4.0 * HALF_PI_PARTS[0],
    4.0 * HALF_PI_PARTS[1],
    4.0 * HALF_PI_PARTS[2],
    4.0 * HALF_PI_PARTS[3],
    4.0 * HALF_PI_PARTS[4],
    4.0 * HALF_PI_PARTS[5],
];
/// The `f32` just above `-PI`: the low end of `wrap_angle`'s range.
const NEXT_ABOVE_NEG_PI: f32 = -3.141_592_5;
/// 1/(2π), rounded to `f32`.
const INV_TAU: f32 = 0.159_154_94;
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

/// `x − k·c` as a two-float `(r, r_lo)`: `r` is the remainder rounded to `f32`, `r_lo` the
/// rounding error. `parts` is one of the splits above and `k` an integer; for `|k| < 2¹⁶` the only
/// other roundings are those of the low-order terms, far below an ulp of `r`, so the remainder
/// stays accurate even when `x` is close to a multiple of `c`.
#[inline]
fn sub_multiple(x: f32, k: f32, parts: &[f32; 6]) -> (f32, f32) {
    let t = ((x - k * parts[0]) - k * parts[1]) - k * parts[2];
    let (s3, e3) = two_sum(t, -(k * parts[3]));
    let (s4, e4) = two_sum(s3, -(k * parts[4]));
    two_sum(s4, (e3 + e4) - k * parts[5])
}

/// Splits `x` into a quadrant `q ∈ 0..4` and a remainder `r + r_lo = x − k·π/2`, `|r| ≲ π/4`.
#[inline]
fn reduce_quadrant(x: f32) -> (u32, f32, f32) {
    let k = round_small(x * std::f32::consts::FRAC_2_PI);
    // `k as i64` is in range (and NaN-free: callers pass finite x), so the cast is exact for
    // integer k and truncates toward zero otherwise, exactly like C's conversion.
    let q = if k.abs() < 4.611_686e18 {
        ((k as i64) & 3) as u32
    } else {
        0
    };
    let (r, r_lo) = sub_multiple(x, k, &HALF_PI_PARTS);
    if r.abs() <= 1.0 {
        (q, r, r_lo)
    } else {
        // Only outside the domain (|k| ≥ 2¹⁶) can the remainder be large; clamping it keeps
        // the kernels finite, so that sin and cos stay in [-1, 1] for every finite x.
        (q, r.clamp(-1.0, 1.0), 0.0)
    }
}

/// Knuth's TwoSum: `s = fl(a + b)` and the exact error `a + b − s` (barring overflow).
#[inline]
fn two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let bv = s - a;
    let av = s - bv;
    (s, (a - av) + (b - bv))
}

/// `sin(r + y)` for `|r| ≲ π/4` and `|y| ≤ ulp(r)/2` (fdlibm's `__kernel_sin` arrangement).
#[inline]
fn sin_kernel(r: f32, y: f32) -> f32 {
    let z = r * r;
    let v = z * r;
    let p = 8.332_161e-3 + z * -1.951_529_6e-4;
    r - ((z * (0.5 * y - v * p) - y) - v * -1.666_665_5e-1)
}

/// `cos(r + y)` for `|r| ≲ π/4` and `|y| ≤ ulp(r)/2` (fdlibm's `__kernel_cos` arrangement).
#[inline]
fn cos_kernel(r: f32, y: f32) -> f32 {
    let z = r * r;
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let q = ((2.443_315_7e-5 * z - 1.388_731_6e-3) * z + 4.166_664_6e-2) * z * z;
    // `(1 − w) − hz` is exactly the rounding error of `w` (Fast2Sum, |1| ≥ |hz|).
    w + (((1.0 - w) - hz) + (q - r * y))
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
    let (q, r, r_lo) = reduce_quadrant(x);
    let s = sin_kernel(r, r_lo);
    let c = cos_kernel(r, r_lo);
    let (sin, cos) = match q {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    };
    (sin.clamp(-1.0, 1.0), cos.clamp(-1.0, 1.0))
}

/// [`sin_cos`] of eight arguments, lane for lane the same bits: `(sines, cosines)`.
///
/// When every argument is below 2¹⁶ in magnitude (NaN and ±inf are not), the eight run as
/// elementwise passes without branches, which compile to 8-wide vector arithmetic: in that
/// range `round_small` rounds, `|k| < 2¹⁶` keeps the remainder within ±1 (no clamp), and the
/// quadrant `k mod 4` is the low two bits of `x·2/π + 1.5·2²³` (whose last mantissa bit is
/// worth 1); `sin_cos`'s cases become bit selects (the quadrant's swap, its signs as sign-bit
/// flips, which is what negation is, and the zero argument). Otherwise each lane is `sin_cos`.
/// For generators that draw several angles at once instead of one at a time.
#[inline(always)]
pub fn sin_cos8(x: [f32; 8]) -> ([f32; 8], [f32; 8]) {
    if !x.iter().fold(true, |all, v| all & (v.abs() < 65_536.0)) {
        let pairs = x.map(sin_cos);
        return (pairs.map(|p| p.0), pairs.map(|p| p.1));
    }
    let mut sines = [0.0; 8];
    let mut cosines = [0.0; 8];
    for l in 0..8 {
        let x = x[l];
        let t = x * std::f32::consts::FRAC_2_PI + ROUND_MAGIC;
        let k = t - ROUND_MAGIC;
        let q = t.to_bits() & 3;
        let (r, r_lo) = sub_multiple(x, k, &HALF_PI_PARTS);
        let s = sin_kernel(r, r_lo).to_bits();
        let c = cos_kernel(r, r_lo).to_bits();
        // The quadrant's cases: 0 → (s, c), 1 → (c, −s), 2 → (−s, −c), 3 → (−c, s).
        let swap = 0u32.wrapping_sub(q & 1);
        let a = (c & swap) | (s & !swap);
        let b = (s & swap) | (c & !swap);
        let sin = f32::from_bits(a ^ ((q >> 1) << 31)).clamp(-1.0, 1.0);
        let cos = f32::from_bits(b ^ (((q ^ (q >> 1)) & 1) << 31)).clamp(-1.0, 1.0);
        // Zero keeps its sign, which the polynomial would lose.
        let zero = 0u32.wrapping_sub(u32::from(x == 0.0));
        sines[l] = f32::from_bits((x.to_bits() & zero) | (sin.to_bits() & !zero));
        cosines[l] = f32::from_bits((1.0f32.to_bits() & zero) | (cos.to_bits() & !zero));
    }
    (sines, cosines)
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

/// The rounding errors of the `f32` constants: `π − PI`, `π/2 − FRAC_PI_2`, `π/4 − FRAC_PI_4`.
pub(crate) const PI_LO: f32 = -8.742_278e-8;
pub(crate) const FRAC_PI_2_LO: f32 = -4.371_139e-8;
pub(crate) const FRAC_PI_4_LO: f32 = -2.185_569_5e-8;

/// `atan(1/2)` as `f32` and its rounding error.
pub(crate) const ATAN_HALF: f32 = 0.463_647_6;
pub(crate) const ATAN_HALF_LO: f32 = 5.012_158_7e-9;

/// `atan(t)` for `|t| ≤ tan(π/8)`: Cephes' minimax polynomial, the kernel of [`atan2`] (and of
/// the branch-free turn angles that must equal it bit for bit).
#[inline(always)]
pub(crate) fn atan_poly(t: f32) -> f32 {
    let z = t * t;
    (((8.053_744_5e-2 * z - 1.387_768_6e-1) * z + 1.997_771_1e-1) * z - 3.333_295e-1) * z * t + t
}

/// Arctangent of `a ∈ [0, 1]`.
#[inline]
fn atan_unit(a: f32) -> f32 {
    // The polynomial is Cephes' minimax fit on |t| ≤ tan(π/8). Above tan(π/8) two intervals keep
    // |t| ≤ 0.19 with t rounded once: atan(a) = atan(1/2) + atan((2a − 1)/(2 + a)) below 11/16,
    // and π/4 + atan((a − 1)/(a + 1)) above (2a − 1 and a − 1 are exact there, by Sterbenz).
    let (base, base_lo, t) = if a >= 0.6875 {
        (FRAC_PI_4, FRAC_PI_4_LO, (a - 1.0) / (a + 1.0))
    } else if a > 0.414_213_57 {
        (ATAN_HALF, ATAN_HALF_LO, (2.0 * a - 1.0) / (2.0 + a))
    } else {
        (0.0, 0.0, a)
    };
    base + (atan_poly(t) + base_lo)
}

/// The angle of the point `(x, y)` in `[-π, π]`, with C99's special cases (signed zeros,
/// infinities; `-π` only for `y = -0`). NaN in either argument gives NaN.
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
    let t = atan_unit(a);
    // The angle from the x axis (x ≥ +0) or its opposite (x ≤ -0), as one constant ± t. The
    // constants' low parts are added last: they are below half an ulp of the constant, so exact
    // results such as atan2(1, ±0) = FRAC_PI_2 and atan2(0, -1) = PI stay exact.
    let r = match (swap, x.is_sign_negative()) {
        (false, false) => t,
        (false, true) => (PI - t) + PI_LO,
        (true, false) => (FRAC_PI_2 - t) + FRAC_PI_2_LO,
        (true, true) => (FRAC_PI_2 + t) + FRAC_PI_2_LO,
    };
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
        + 0.5)
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
        + 3.333_333e-1)
        * m
        * z;
    let ef = e as f32;
    y += -2.121_944_4e-4 * ef;
    y += -0.5 * z;
    let mut r = m + y;
    r += 0.693_359_4 * ef;
    r
}

/// Wraps an angle to `(-π, π]` (bounds as `f32`: `-PI < w <= PI`) by subtracting the nearest
/// multiple of 2π. NaN or ±inf give NaN. See the module table for accuracy.
#[inline]
pub fn wrap_angle(a: f32) -> f32 {
    if !a.is_finite() {
        // Explicit, so that the NaN is the canonical one on every backend.
        return f32::NAN;
    }
    let k = round_small(a * INV_TAU);
    let r = sub_multiple(a, k, &TAU_PARTS).0;
    // Only when `a` is within rounding of an odd multiple of π can `k` be one off; the neighbour
    // is then reduced exactly too (rather than adding ±TAU, which would round twice).
    let r = if r <= -PI {
        sub_multiple(a, k - 1.0, &TAU_PARTS).0
    } else if r > PI {
        sub_multiple(a, k + 1.0, &TAU_PARTS).0
    } else {
        r
    };
    // Within the domain this never binds; far outside it (|k| ≥ 2¹⁶) the remainder is no longer
    // exact, and the clamp keeps the promised range for every finite `a`.
    r.clamp(NEXT_ABOVE_NEG_PI, PI)
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

    /// `sin_cos8` is `sin_cos` lane by lane, to the bit: on arguments across and past its
    /// vector range (near multiples of π/2, ±0, tiny, up to 2¹⁶ and beyond), NaN and ±inf.
    #[test]
    fn sin_cos8_matches_sin_cos() {
        let mut state = 0x2545_f491u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let special = [
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            1e-30,
            FRAC_PI_2,
            -FRAC_PI_2,
            PI,
            TAU,
            -TAU,
            65_535.99,
            -65_535.99,
            65_536.0,
            1e9,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let bits = |v: (f32, f32)| (v.0.to_bits(), v.1.to_bits());
        for round in 0..200_000 {
            let x: [f32; 8] = std::array::from_fn(|_| {
                let u = next();
                match round % 4 {
                    0 => (u >> 8) as f32 / 16_777_216.0 * TAU,
                    1 => ((u >> 8) as f32 / 16_777_216.0 - 0.5) * 131_000.0,
                    2 => (u % 200) as f32 * FRAC_PI_4 * if u & 1 == 0 { 1.0 } else { -1.0 },
                    _ if u % 16 == 0 => special[(u >> 4) as usize % special.len()],
                    _ => f32::from_bits(u) % 70_000.0,
                }
            });
            let (s, c) = sin_cos8(x);
            for l in 0..8 {
                let want = sin_cos(x[l]);
                let got = (s[l], c[l]);
                if want.0.is_nan() {
                    assert!(got.0.is_nan() && got.1.is_nan(), "{}", x[l]);
                } else {
                    assert_eq!(bits(got), bits(want), "sin_cos({:e})", x[l]);
                }
            }
        }
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
