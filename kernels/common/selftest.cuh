// Per-lane evaluation of every function of math.cuh and rng.cuh, selected by an op code.
//
// The self-test kernels (selftest.cu) and the host twin driver (tests/twin/driver.cpp) both call
// these, so the device-parity tests and the host twin tests exercise the same code paths with
// the same op numbering; `tests/twin_math_rng.rs` holds the Rust side of the numbering.
#ifndef TG_COMMON_SELFTEST_CUH
#define TG_COMMON_SELFTEST_CUH

#include "common/math.cuh"
#include "common/rng.cuh"

// Math op codes for tg_selftest_math.
#define TG_OP_SIN 0u
#define TG_OP_COS 1u
#define TG_OP_SIN_COS_SIN 2u
#define TG_OP_SIN_COS_COS 3u
#define TG_OP_ATAN2 4u
#define TG_OP_EXP 5u
#define TG_OP_LN 6u
#define TG_OP_WRAP_ANGLE 7u
#define TG_OP_ROUND_SMALL 8u
#define TG_OP_COUNT 9u

// The result of math op `op` on a (and b, for two-argument ops: atan2(y = a, x = b)).
// An unknown op gives NaN.
TG_HD inline float tg_selftest_math(tg_u32 op, float a, float b) {
    switch (op) {
    case TG_OP_SIN:
        return tg_sin(a);
    case TG_OP_COS:
        return tg_cos(a);
    case TG_OP_SIN_COS_SIN:
        return tg_sin_cos(a).a;
    case TG_OP_SIN_COS_COS:
        return tg_sin_cos(a).b;
    case TG_OP_ATAN2:
        return tg_atan2(a, b);
    case TG_OP_EXP:
        return tg_exp(a);
    case TG_OP_LN:
        return tg_ln(a);
    case TG_OP_WRAP_ANGLE:
        return tg_wrap_angle(a);
    case TG_OP_ROUND_SMALL:
        return tg_round_small(a);
    default:
        return tg_nan();
    }
}

// The number of u32 words of one lane's stream words: seed (lo, hi), env (lo, hi), generation,
// stage.
#define TG_SELFTEST_WORDS 6u
// The number of u32 words of one lane's draw parameters: its stream words, then n (for
// below), lo and hi (f32 bit patterns, for range).
#define TG_SELFTEST_DRAW_PARAMS 9u
// The number of values one round of tg_selftest_draws writes.
#define TG_SELFTEST_DRAWS_PER_ROUND 5u

// The stream of a lane's stream words (see TG_SELFTEST_WORDS).
TG_HD inline tg_rng tg_selftest_stream(const tg_u32* words) {
    tg_u64 seed = (tg_u64)words[0] | ((tg_u64)words[1] << 32);
    tg_u64 env = (tg_u64)words[2] | ((tg_u64)words[3] << 32);
    return tg_rng_new(seed, env, words[4], words[5]);
}

// Draws `rounds` rounds from a lane's stream into out[0 .. 5·rounds): each round is next_u32,
// unit, below(n), signed, range(lo, hi), floats as bit patterns.
TG_HD inline void tg_selftest_draws(const tg_u32* params, tg_u32 rounds, tg_u32* out) {
    tg_rng rng = tg_selftest_stream(params);
    tg_u32 n = params[6];
    float lo = tg_f32_from_bits(params[7]);
    float hi = tg_f32_from_bits(params[8]);
    for (tg_u32 i = 0u; i < rounds; ++i) {
        tg_u32* o = out + TG_SELFTEST_DRAWS_PER_ROUND * i;
        o[0] = tg_rng_next_u32(&rng);
        o[1] = tg_f32_to_bits(tg_rng_unit(&rng));
        o[2] = tg_rng_below(&rng, n);
        o[3] = tg_f32_to_bits(tg_rng_signed(&rng));
        o[4] = tg_f32_to_bits(tg_rng_range(&rng, lo, hi));
    }
}

#endif // TG_COMMON_SELFTEST_CUH
