// Deterministic lane random numbers: the bit-exact host+device twin of `src/rng/mod.rs`.
//
// One Xoshiro128++ stream per (seed, env, generation, stage): the four words are folded with the
// SplitMix64 finaliser and two SplitMix64 outputs seed the 128-bit state. Integer arithmetic is
// exact by construction; the float helpers use one conversion and exact scalings plus the same
// `lo + (hi − lo)·u` as Rust (compile without FMA contraction, see math.cuh).
// `tests/twin_math_rng.rs` checks this header against the Rust implementation.
#ifndef TG_COMMON_RNG_CUH
#define TG_COMMON_RNG_CUH

#include "common/prelude.cuh"

// The golden-ratio increment of SplitMix64.
#define TG_GOLDEN_GAMMA 0x9e3779b97f4a7c15ull

// The random-stream ids (Rust `rng::stream`, one table): each stage draws from its own stream.
// TG_STREAM_IDS(X) applies X(name, value) to every id in the Rust table's order; the constants
// TG_STREAM_<name> come from it, and the twin test compares it with `rng::stream::ALL`.
#define TG_STREAM_IDS(X)              \
    X(GENERATE, 1u)                   \
    X(ZPROFILE, 2u)                   \
    X(GATES, 0x0300u)                 \
    X(OBSTACLES, 0x0301u)             \
    X(SCENE_ROOMS, 0x5C000001u)       \
    X(SCENE_FOREST, 0x5C000002u)      \
    X(SCENE_GATES, 0x5C000003u)       \
    X(USER, 1u << 16)

// Enumerators (not `static constexpr` variables, which NVRTC reports as unused in every kernel
// that does not read them all).
#define TG_STREAM_CONSTANT(name, value) TG_STREAM_##name = (value),
enum tg_stream_id : tg_u32 { TG_STREAM_IDS(TG_STREAM_CONSTANT) };
#undef TG_STREAM_CONSTANT

// The stream word of id `stage` at retry `attempt` (attempts live in the top byte).
TG_HD inline tg_u32 tg_stage_with_attempt(tg_u32 stage, tg_u32 attempt) {
    return stage ^ (attempt << 24);
}

// The SplitMix64 output finaliser (Stafford's "Mix13").
TG_HD inline tg_u64 tg_mix64(tg_u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// One SplitMix64 step: advances *state and returns the next output.
TG_HD inline tg_u64 tg_splitmix64(tg_u64* state) {
    *state += TG_GOLDEN_GAMMA;
    return tg_mix64(*state);
}

// A Xoshiro128++ state: the stream of one lane of one stage.
struct tg_rng {
    tg_u32 s[4];
};

// The Xoshiro128++ state of (seed, env, generation, stage); an all-zero state (a fixed point)
// is replaced by {0x9e3779b9, 0, 0, 0}.
TG_HD inline tg_rng tg_stream_state(tg_u64 seed, tg_u64 env, tg_u32 generation, tg_u32 stage) {
    tg_u64 h = tg_mix64(seed + TG_GOLDEN_GAMMA);
    h = tg_mix64((h ^ env) + TG_GOLDEN_GAMMA);
    h = tg_mix64((h ^ (tg_u64)generation) + TG_GOLDEN_GAMMA);
    h = tg_mix64((h ^ (tg_u64)stage) + TG_GOLDEN_GAMMA);
    tg_u64 sm = h;
    tg_u64 a = tg_splitmix64(&sm);
    tg_u64 b = tg_splitmix64(&sm);
    tg_rng rng;
    rng.s[0] = (tg_u32)a;
    rng.s[1] = (tg_u32)(a >> 32);
    rng.s[2] = (tg_u32)b;
    rng.s[3] = (tg_u32)(b >> 32);
    if ((rng.s[0] | rng.s[1] | rng.s[2] | rng.s[3]) == 0u) {
        rng.s[0] = 0x9e3779b9u;
    }
    return rng;
}

// The stream of (seed, env, generation, stage) (Rust `LaneRng::new`).
TG_HD inline tg_rng tg_rng_new(tg_u64 seed, tg_u64 env, tg_u32 generation, tg_u32 stage) {
    return tg_stream_state(seed, env, generation, stage);
}

TG_HD inline tg_u32 tg_rotl32(tg_u32 x, tg_u32 k) {
    return (x << k) | (x >> (32u - k));
}

// The next raw 32-bit output (Xoshiro128++).
TG_HD inline tg_u32 tg_rng_next_u32(tg_rng* rng) {
    tg_u32* s = rng->s;
    tg_u32 result = tg_rotl32(s[0] + s[3], 7u) + s[0];
    tg_u32 t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = tg_rotl32(s[3], 11u);
    return result;
}

// A uniform float in [0, 1): the top 24 bits of a draw times 2^-24 (exact).
TG_HD inline float tg_rng_unit(tg_rng* rng) {
    return (float)(tg_rng_next_u32(rng) >> 8) * 0x1p-24f;
}

// A uniform float in [lo, hi) (or lo when hi <= lo), computed as lo + (hi - lo) * u.
TG_HD inline float tg_rng_range(tg_rng* rng, float lo, float hi) {
    float u = tg_rng_unit(rng);
    if (hi > lo) {
        return lo + (hi - lo) * u;
    }
    return lo;
}

// A uniform float in [-1, 1).
TG_HD inline float tg_rng_signed(tg_rng* rng) {
    return tg_rng_unit(rng) * 2.0f - 1.0f;
}

// A uniform integer in [0, n) by Lemire's multiply-shift; 0 when n == 0.
TG_HD inline tg_u32 tg_rng_below(tg_rng* rng, tg_u32 n) {
    return (tg_u32)(((tg_u64)tg_rng_next_u32(rng) * (tg_u64)n) >> 32);
}

#endif // TG_COMMON_RNG_CUH
