// Plan-view and 3D vectors: the bit-exact host+device twin of the glam operations lane code uses
// (`src/geom`), and of the scalar helpers whose Rust semantics C does not spell the same way.
//
// glam's Vec2/Vec3 operators are component-wise IEEE operations; `dot` sums left to right
// (`x·x' + y·y' (+ z·z')`), `length` is `sqrt(dot(v, v))`. Rust's `f32::min`/`max` (LLVM
// minnum/maxnum as x86 lowers them) return the other operand when the first is NaN and
// otherwise a select on `<`/`>`; `as` casts from float to integer saturate (NaN → 0); C's
// `fminf`/`fmaxf` and casts differ on signed zeros and out-of-range values, so twins use the
// helpers below, never the C functions.
#ifndef TG_COMMON_GEOM_CUH
#define TG_COMMON_GEOM_CUH

#include "common/math.cuh"

#if !defined(__CUDACC__)
#include <math.h>
#endif

struct tg_vec2 {
    float x;
    float y;
};

struct tg_vec3 {
    float x;
    float y;
    float z;
};

TG_HD inline tg_vec2 tg_v2(float x, float y) {
    tg_vec2 v;
    v.x = x;
    v.y = y;
    return v;
}
TG_HD inline tg_vec2 tg_add2(tg_vec2 a, tg_vec2 b) { return tg_v2(a.x + b.x, a.y + b.y); }
TG_HD inline tg_vec2 tg_sub2(tg_vec2 a, tg_vec2 b) { return tg_v2(a.x - b.x, a.y - b.y); }
TG_HD inline tg_vec2 tg_mul2(tg_vec2 a, float s) { return tg_v2(a.x * s, a.y * s); }
TG_HD inline tg_vec2 tg_div2(tg_vec2 a, float s) { return tg_v2(a.x / s, a.y / s); }
TG_HD inline tg_vec2 tg_neg2(tg_vec2 a) { return tg_v2(-a.x, -a.y); }
TG_HD inline float tg_dot2(tg_vec2 a, tg_vec2 b) { return a.x * b.x + a.y * b.y; }
TG_HD inline float tg_length_squared2(tg_vec2 a) { return tg_dot2(a, a); }
TG_HD inline float tg_length2(tg_vec2 a) { return sqrtf(tg_dot2(a, a)); }

TG_HD inline tg_vec3 tg_v3(float x, float y, float z) {
    tg_vec3 v;
    v.x = x;
    v.y = y;
    v.z = z;
    return v;
}
TG_HD inline tg_vec3 tg_add3(tg_vec3 a, tg_vec3 b) { return tg_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
TG_HD inline tg_vec3 tg_sub3(tg_vec3 a, tg_vec3 b) { return tg_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
TG_HD inline tg_vec3 tg_mul3(tg_vec3 a, float s) { return tg_v3(a.x * s, a.y * s, a.z * s); }
TG_HD inline tg_vec3 tg_div3(tg_vec3 a, float s) { return tg_v3(a.x / s, a.y / s, a.z / s); }
TG_HD inline float tg_dot3(tg_vec3 a, tg_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
TG_HD inline float tg_length3(tg_vec3 a) { return sqrtf(tg_dot3(a, a)); }

// Rust `a.min(b)` for f32: b when a is NaN, else (b < a ? b : a).
TG_HD inline float tg_min(float a, float b) {
    if (tg_is_nan(a)) {
        return b;
    }
    return b < a ? b : a;
}

// Rust `a.max(b)` for f32: b when a is NaN, else (b > a ? b : a).
TG_HD inline float tg_max(float a, float b) {
    if (tg_is_nan(a)) {
        return b;
    }
    return b > a ? b : a;
}

// Rust `x as u32`: truncates toward zero, saturating (NaN and negatives → 0, ≥ 2³² → u32::MAX).
TG_HD inline tg_u32 tg_f32_to_u32(float x) {
    if (!(x > -1.0f)) {
        return 0u;
    }
    if (x >= 4294967296.0f) {
        return 0xffffffffu;
    }
    return (tg_u32)x;
}

// Rust `x as i32`: truncates toward zero, saturating (NaN → 0).
TG_HD inline tg_i32 tg_f32_to_i32(float x) {
    if (tg_is_nan(x)) {
        return 0;
    }
    if (x <= -2147483648.0f) {
        return (tg_i32)0x80000000u;
    }
    if (x >= 2147483648.0f) {
        return 0x7fffffff;
    }
    return (tg_i32)x;
}

// The NaN-failing comparisons of `src/geom/cmp.rs`: true when the comparison fails or either
// side is NaN.
TG_HD inline bool tg_fails_ge(float a, float b) { return !(a >= b); }
TG_HD inline bool tg_fails_le(float a, float b) { return !(a <= b); }
TG_HD inline bool tg_fails_lt(float a, float b) { return !(a < b); }
TG_HD inline bool tg_fails_gt(float a, float b) { return !(a > b); }

// `geom::sdf::fmin` / `fmax`: plain selects, no NaN handling.
TG_HD inline float tg_fmin(float a, float b) { return a < b ? a : b; }
TG_HD inline float tg_fmax(float a, float b) { return a > b ? a : b; }

// `geom::spline::bezier` over Vec2: w0·a + w1·b + w2·c + w3·d summed left to right.
TG_HD inline tg_vec2 tg_bezier2(tg_vec2 a, tg_vec2 b, tg_vec2 c, tg_vec2 d, float t) {
    float s = 1.0f - t;
    float w0 = s * s * s;
    float w1 = 3.0f * s * s * t;
    float w2 = 3.0f * s * t * t;
    float w3 = t * t * t;
    return tg_add2(tg_add2(tg_add2(tg_mul2(a, w0), tg_mul2(b, w1)), tg_mul2(c, w2)), tg_mul2(d, w3));
}

// `geom::spline::catmull_rom` over Vec2.
TG_HD inline tg_vec2 tg_catmull_rom2(tg_vec2 p0, tg_vec2 p1, tg_vec2 p2, tg_vec2 p3, float t) {
    tg_vec2 b = tg_add2(p1, tg_div2(tg_sub2(p2, p0), 6.0f));
    tg_vec2 c = tg_sub2(p2, tg_div2(tg_sub2(p3, p1), 6.0f));
    return tg_bezier2(p1, b, c, p2, t);
}

// ---- Track stages after the generator (resample, relax, validity, z-profile, inflation) ----

// Per-env flags (Rust `u8`).
typedef unsigned char tg_u8;

// Rust `x as u64` / `x as usize` (64-bit targets): truncates toward zero, saturating (NaN and
// negatives → 0, ≥ 2⁶⁴ → u64::MAX).
TG_HD inline tg_u64 tg_f32_to_u64(float x) {
    if (!(x > -1.0f)) {
        return 0ull;
    }
    if (x >= 0x1p+64f) {
        return 0xffffffffffffffffull;
    }
    return (tg_u64)x;
}

// glam `Vec3::NAN`.
TG_HD inline tg_vec3 tg_vec3_nan() { return tg_v3(tg_nan(), tg_nan(), tg_nan()); }

#endif // TG_COMMON_GEOM_CUH
