// Deterministic f32 math: the bit-exact host+device twin of `src/math/mod.rs`.
//
// Every function performs the same IEEE operations, in the same order, as its Rust original, so
// results are identical to the bit as long as the compiler neither contracts `a * b + c` into a
// fused multiply-add nor reassociates: compile host code with `-ffp-contract=off` and without
// fast-math, and device code with NVRTC's `--fmad=false`. Constants are written as hexadecimal
// float literals (the decimal value of the Rust source is in the comment), so that no compiler's
// decimal-to-binary conversion is involved. See `src/math/mod.rs` for the algorithms, their
// accuracy and the reasoning behind each step; `tests/twin_math_rng.rs` checks the twin.
#ifndef TG_COMMON_MATH_CUH
#define TG_COMMON_MATH_CUH

#include "common/prelude.cuh"

// π, 2π, π/2, π/4 as f32 (Rust `std::f32::consts`).
#define TG_PI 0x1.921fb6p+1f
#define TG_TAU 0x1.921fb6p+2f
#define TG_FRAC_PI_2 0x1.921fb6p+0f
#define TG_FRAC_PI_4 0x1.921fb6p-1f

// The rounding errors of the constants above: π − TG_PI, π/2 − TG_FRAC_PI_2, π/4 − TG_FRAC_PI_4.
#define TG_PI_LO -0x1.777a5cp-24f      // -8.742_278e-8
#define TG_FRAC_PI_2_LO -0x1.777a5cp-25f // -4.371_139e-8
#define TG_FRAC_PI_4_LO -0x1.777a5cp-26f // -2.185_569_5e-8
// atan(1/2) as f32 and its rounding error.
#define TG_ATAN_HALF 0x1.dac67p-2f        // 0.463_647_6
#define TG_ATAN_HALF_LO 0x1.586ed4p-28f   // 5.012_158_7e-9

#define TG_TWO_OVER_PI 0x1.45f306p-1f // 2/π, Rust FRAC_2_PI
#define TG_INV_TAU 0x1.45f306p-3f     // 0.159_154_94
#define TG_ROUND_MAGIC 0x1.8p+23f     // 12_582_912.0

// π/2 as a Cody–Waite sum of six f32s (see HALF_PI_PARTS in src/math/mod.rs); 2π is the same
// split scaled by 4.
#define TG_HALF_PI_P0 0x1.92p+0f     // 1.570_312_5
#define TG_HALF_PI_P1 0x1.f8p-12f    // 4.806_518_6e-4
#define TG_HALF_PI_P2 0x1.a8p-19f    // 3.159_046_2e-6
#define TG_HALF_PI_P3 0x1.1p-26f     // 1.583_248_4e-8
#define TG_HALF_PI_P4 0x1.0ap-34f    // 6.048_14e-11
#define TG_HALF_PI_P5 0x1.4611a6p-42f // 2.896_074e-13

// A pair of floats: a value and a second (low part, or a second result).
struct tg_f32x2 {
    float a;
    float b;
};

// Rust `f32::abs`: clears the sign bit (also of -0 and NaN).
TG_HD inline float tg_abs(float x) {
    return tg_f32_from_bits(tg_f32_to_bits(x) & 0x7fffffffu);
}

// Rust `f32::is_nan`.
TG_HD inline bool tg_is_nan(float x) {
    return (tg_f32_to_bits(x) & 0x7fffffffu) > 0x7f800000u;
}

// Rust `f32::is_finite`.
TG_HD inline bool tg_is_finite(float x) {
    return (tg_f32_to_bits(x) & 0x7f800000u) != 0x7f800000u;
}

// Rust `f32::is_sign_negative`.
TG_HD inline bool tg_is_sign_negative(float x) {
    return (tg_f32_to_bits(x) >> 31) != 0u;
}

// Rust `f32::clamp` (NaN passes through).
TG_HD inline float tg_clamp(float x, float lo, float hi) {
    if (x < lo) {
        x = lo;
    }
    if (x > hi) {
        x = hi;
    }
    return x;
}

// Rust `f32::NAN`, `f32::INFINITY`, `f32::NEG_INFINITY`.
TG_HD inline float tg_nan() {
    return tg_f32_from_bits(0x7fc00000u);
}
TG_HD inline float tg_inf() {
    return tg_f32_from_bits(0x7f800000u);
}
TG_HD inline float tg_neg_inf() {
    return tg_f32_from_bits(0xff800000u);
}

// Rounds to the nearest integer (ties to even) for |x| < 2^22; larger |x| are returned as is.
TG_HD inline float tg_round_small(float x) {
    if (tg_abs(x) < 0x1p+22f) {
        return (x + TG_ROUND_MAGIC) - TG_ROUND_MAGIC;
    }
    return x;
}

// Knuth's TwoSum: s = fl(a + b) and the exact error a + b − s.
TG_HD inline tg_f32x2 tg_two_sum(float a, float b) {
    float s = a + b;
    float bv = s - a;
    float av = s - bv;
    tg_f32x2 out = {s, (a - av) + (b - bv)};
    return out;
}

// x − k·c as (remainder, rounding error), for c = (p0 + … + p5)·scale, scale a power of 2.
TG_HD inline tg_f32x2 tg_sub_multiple(float x, float k, float scale) {
    float t = ((x - k * (scale * TG_HALF_PI_P0)) - k * (scale * TG_HALF_PI_P1)) -
              k * (scale * TG_HALF_PI_P2);
    tg_f32x2 s3 = tg_two_sum(t, -(k * (scale * TG_HALF_PI_P3)));
    tg_f32x2 s4 = tg_two_sum(s3.a, -(k * (scale * TG_HALF_PI_P4)));
    return tg_two_sum(s4.a, (s3.b + s4.b) - k * (scale * TG_HALF_PI_P5));
}

// sin(r + y) for |r| ≲ π/4, |y| ≤ ulp(r)/2.
TG_HD inline float tg_sin_kernel(float r, float y) {
    float z = r * r;
    float v = z * r;
    float p = 0x1.11073cp-7f + z * -0x1.9943f2p-13f; // 8.332_161e-3, -1.951_529_6e-4
    return r - ((z * (0x1p-1f * y - v * p) - y) - v * -0x1.555546p-3f); // -1.666_665_5e-1
}

// cos(r + y) for |r| ≲ π/4, |y| ≤ ulp(r)/2.
TG_HD inline float tg_cos_kernel(float r, float y) {
    float z = r * r;
    float hz = 0x1p-1f * z;
    float w = 1.0f - hz;
    // 2.443_315_7e-5, 1.388_731_6e-3, 4.166_664_6e-2
    float q = ((0x1.99eb9cp-16f * z - 0x1.6c0c34p-10f) * z + 0x1.55554ap-5f) * z * z;
    return w + (((1.0f - w) - hz) + (q - r * y));
}

// Sine and cosine of x (radians) from one argument reduction: {sin, cos}.
TG_HD inline tg_f32x2 tg_sin_cos(float x) {
    if (!tg_is_finite(x)) {
        tg_f32x2 out = {tg_nan(), tg_nan()};
        return out;
    }
    if (x == 0.0f) {
        tg_f32x2 out = {x, 1.0f};
        return out;
    }
    float k = tg_round_small(x * TG_TWO_OVER_PI);
    tg_u32 q = 0u;
    if (tg_abs(k) < 0x1p+62f) { // 4.611_686e18
        q = (tg_u32)((tg_u64)(tg_i64)k & 3u);
    }
    tg_f32x2 rem = tg_sub_multiple(x, k, 1.0f);
    float r = rem.a;
    float r_lo = rem.b;
    if (!(tg_abs(r) <= 1.0f)) {
        r = tg_clamp(r, -1.0f, 1.0f);
        r_lo = 0.0f;
    }
    float s = tg_sin_kernel(r, r_lo);
    float c = tg_cos_kernel(r, r_lo);
    float sn;
    float cs;
    if (q == 0u) {
        sn = s;
        cs = c;
    } else if (q == 1u) {
        sn = c;
        cs = -s;
    } else if (q == 2u) {
        sn = -s;
        cs = -c;
    } else {
        sn = -c;
        cs = s;
    }
    tg_f32x2 out = {tg_clamp(sn, -1.0f, 1.0f), tg_clamp(cs, -1.0f, 1.0f)};
    return out;
}

// Sine of x (radians). NaN or ±inf give NaN; sin(-0) = -0.
TG_HD inline float tg_sin(float x) {
    return tg_sin_cos(x).a;
}

// Cosine of x (radians). NaN or ±inf give NaN.
TG_HD inline float tg_cos(float x) {
    return tg_sin_cos(x).b;
}

// Arctangent of a ∈ [0, 1].
TG_HD inline float tg_atan_unit(float a) {
    float base;
    float base_lo;
    float t;
    if (a >= 0x1.6p-1f) { // 0.6875
        base = TG_FRAC_PI_4;
        base_lo = TG_FRAC_PI_4_LO;
        t = (a - 1.0f) / (a + 1.0f);
    } else if (a > 0x1.a8279ap-2f) { // 0.414_213_57
        base = TG_ATAN_HALF;
        base_lo = TG_ATAN_HALF_LO;
        t = (2.0f * a - 1.0f) / (2.0f + a);
    } else {
        base = 0.0f;
        base_lo = 0.0f;
        t = a;
    }
    float z = t * t;
    // 8.053_744_5e-2, 1.387_768_6e-1, 1.997_771_1e-1, 3.333_295e-1
    float p = (((0x1.49e1a2p-4f * z - 0x1.1c370ap-3f) * z + 0x1.9924bep-3f) * z - 0x1.555454p-2f) *
                  z * t +
              t;
    return base + (p + base_lo);
}

// The angle of the point (x, y) in [-π, π], with C99's special cases. NaN in gives NaN.
TG_HD inline float tg_atan2(float y, float x) {
    if (tg_is_nan(x) || tg_is_nan(y)) {
        return tg_nan();
    }
    float ax = tg_abs(x);
    float ay = tg_abs(y);
    bool swap = ay > ax;
    float a;
    if (ax == ay) {
        a = ax == 0.0f ? 0.0f : 1.0f;
    } else if (swap) {
        a = ax / ay;
    } else {
        a = ay / ax;
    }
    float t = tg_atan_unit(a);
    float r;
    if (!swap) {
        r = tg_is_sign_negative(x) ? (TG_PI - t) + TG_PI_LO : t;
    } else {
        r = tg_is_sign_negative(x) ? (TG_FRAC_PI_2 + t) + TG_FRAC_PI_2_LO
                                   : (TG_FRAC_PI_2 - t) + TG_FRAC_PI_2_LO;
    }
    return tg_is_sign_negative(y) ? -r : r;
}

// 2^n as an f32 for n ∈ [-126, 127].
TG_HD inline float tg_pow2i(tg_i32 n) {
    return tg_f32_from_bits((tg_u32)(n + 127) << 23);
}

// e^x. Overflows to +inf above 88.72, underflows to 0 below −103.97; NaN gives NaN.
TG_HD inline float tg_exp(float x) {
    if (tg_is_nan(x)) {
        return x;
    }
    if (x > 0x1.62e43p+6f) { // 88.722_84
        return tg_inf();
    }
    if (x < -0x1.9fe368p+6f) { // -103.972_08
        return 0.0f;
    }
    float n = tg_round_small(x * 0x1.715476p+0f); // LOG2_E
    float r = (x - n * 0x1.63p-1f) - n * -0x1.bd0106p-13f; // 0.693_359_4, -2.121_944_4e-4
    float z = r * r;
    // 1.987_569_1e-4, 1.398_2e-3, 8.333_452e-3, 4.166_579_6e-2, 1.666_666_5e-1, 0.5
    float p = (((((0x1.a0d2cep-13f * r + 0x1.6e879ep-10f) * r + 0x1.11121p-7f) * r + 0x1.555382p-5f) *
                    r +
                0x1.555554p-3f) *
                   r +
               0x1p-1f) *
                  z +
              r + 1.0f;
    tg_i32 ni = (tg_i32)n;
    tg_i32 half = ni / 2;
    return p * tg_pow2i(half) * tg_pow2i(ni - half);
}

// Natural logarithm. ln(±0) = -inf, ln(x < 0) = NaN, ln(+inf) = +inf, NaN gives NaN.
TG_HD inline float tg_ln(float x) {
    if (tg_is_nan(x) || x < 0.0f) {
        return tg_nan();
    }
    if (x == 0.0f) {
        return tg_neg_inf();
    }
    if (x == tg_inf()) {
        return x;
    }
    tg_i32 bias = 0;
    if (x < 0x1p-126f) { // f32::MIN_POSITIVE
        x = x * 0x1p+23f;
        bias = -23;
    }
    tg_u32 bits = tg_f32_to_bits(x);
    tg_i32 e = (tg_i32)(bits >> 23) - 126 + bias;
    float m = tg_f32_from_bits((bits & 0x007fffffu) | 0x3f000000u);
    if (m < 0x1.6a09e6p-1f) { // FRAC_1_SQRT_2
        e -= 1;
        m = m + m - 1.0f;
    } else {
        m -= 1.0f;
    }
    float z = m * m;
    // 7.037_683_6e-2, 1.151_461e-1, 1.167_699_9e-1, 1.242_014_1e-1, 1.424_932_3e-1,
    // 1.666_805_8e-1, 2.000_071_4e-1, 2.499_999_4e-1, 3.333_333e-1
    float y = ((((((((0x1.204376p-4f * m - 0x1.d7a37p-4f) * m + 0x1.de4a36p-4f) * m - 0x1.fcba9ep-4f) *
                       m +
                   0x1.23d37ep-3f) *
                      m -
                  0x1.555cap-3f) *
                     m +
                 0x1.999d58p-3f) *
                    m -
                0x1.fffff8p-3f) *
                   m +
               0x1.555554p-2f) *
              m * z;
    float ef = (float)e;
    y += -0x1.bd0106p-13f * ef; // -2.121_944_4e-4
    y += -0x1p-1f * z;
    float r = m + y;
    r += 0x1.63p-1f * ef; // 0.693_359_4
    return r;
}

// Wraps an angle to (-π, π] (as f32: -TG_PI < w <= TG_PI). NaN or ±inf give NaN.
TG_HD inline float tg_wrap_angle(float a) {
    if (!tg_is_finite(a)) {
        return tg_nan();
    }
    float k = tg_round_small(a * TG_INV_TAU);
    float r = tg_sub_multiple(a, k, 4.0f).a;
    if (r <= -TG_PI) {
        r = tg_sub_multiple(a, k - 1.0f, 4.0f).a;
    } else if (r > TG_PI) {
        r = tg_sub_multiple(a, k + 1.0f, 4.0f).a;
    }
    return tg_clamp(r, -0x1.921fb4p+1f, TG_PI); // the float just above -TG_PI
}

#endif // TG_COMMON_MATH_CUH
