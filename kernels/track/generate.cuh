// The generator passes (pass 1 of the track plan, `tg_track_<generator>`): their common
// parameters, the lane prologue and epilogue of `generate_stage` (`src/track/pipeline.rs`), and
// the twin of the closed Catmull–Rom sampler the generators share
// (`src/track/generators/spline.rs`).
//
// A generator pass binds, in this order: 0 raw (tg_vec2, raw_max per env), 1 raw_count (u32),
// 2 gen (f32 scratch, gen_len per env), 3 gen_u32 (u32 scratch, gen_u32_len per env), 4 active
// (u8), 5 attempt (u8), 6 generation (u32). Its parameter struct starts with tg_generate_common
// and continues with the generator's own fields (the `#[repr(C)]` struct its `Stage` returns).
#ifndef TG_TRACK_GENERATE_CUH
#define TG_TRACK_GENERATE_CUH

#include "common/geom.cuh"
#include "common/kernel.cuh"
#include "common/rng.cuh"

// The parameters every generator pass starts with (filled in by the pipeline).
struct tg_generate_common {
    tg_u64 seed;
    tg_u64 env_base;
    // Points of one env's raw slice (the stage's max_points, at least 3).
    tg_u32 raw_max;
    // f32 and u32 scratch words of one env (the stage's scratch lengths, at least 1).
    tg_u32 gen_len;
    tg_u32 gen_u32_len;
    tg_u32 pad;
};
static_assert(sizeof(tg_generate_common) == 32, "tg_generate_common is 32 bytes");

// The buffer slots of a generator pass.
#define TG_GENERATE_RAW 0
#define TG_GENERATE_RAW_COUNT 1
#define TG_GENERATE_GEN 2
#define TG_GENERATE_GEN_U32 3
#define TG_GENERATE_ACTIVE 4
#define TG_GENERATE_ATTEMPT 5
#define TG_GENERATE_GENERATION 6

// One env's view of a generator pass: its slices, its raw count and its random stream.
struct tg_generate_lane {
    tg_vec2* raw;
    float* gen;
    tg_u32* gen_u32;
    tg_u32* raw_count;
    tg_u32 raw_max;
    tg_rng rng;
};

// The prologue of a generator lane for env e: false when the env is inactive (the lane does
// nothing); otherwise fills *lane with e's slices and the stream of (seed, env_base + e,
// generation[e], GENERATE at attempt[e]).
TG_HD inline bool tg_generate_begin(const tg_generate_common& c, const tg_buffers& buf, tg_u32 e,
                                    tg_generate_lane* lane) {
    const unsigned char* active = static_cast<const unsigned char*>(buf.ptr[TG_GENERATE_ACTIVE]);
    if (active[e] == 0u) {
        return false;
    }
    const unsigned char* attempt = static_cast<const unsigned char*>(buf.ptr[TG_GENERATE_ATTEMPT]);
    const tg_u32* generation = static_cast<const tg_u32*>(buf.ptr[TG_GENERATE_GENERATION]);
    lane->raw = static_cast<tg_vec2*>(buf.ptr[TG_GENERATE_RAW]) + (tg_u64)e * c.raw_max;
    lane->gen = static_cast<float*>(buf.ptr[TG_GENERATE_GEN]) + (tg_u64)e * c.gen_len;
    lane->gen_u32 = static_cast<tg_u32*>(buf.ptr[TG_GENERATE_GEN_U32]) + (tg_u64)e * c.gen_u32_len;
    lane->raw_count = static_cast<tg_u32*>(buf.ptr[TG_GENERATE_RAW_COUNT]) + e;
    lane->raw_max = c.raw_max;
    tg_u32 stream = tg_stage_with_attempt(TG_STREAM_GENERATE, attempt[e]);
    lane->rng = tg_rng_new(c.seed, c.env_base + e, generation[e], stream);
    return true;
}

// The epilogue: the env's raw count is the points the generator wrote, at most raw_max.
TG_HD inline void tg_generate_end(tg_generate_lane* lane, tg_u32 written) {
    *lane->raw_count = written < lane->raw_max ? written : lane->raw_max;
}

// Samples per control segment of tg_catmull_rom_closed (Rust `spline::SAMPLES_PER_SEGMENT`).
#define TG_SAMPLES_PER_SEGMENT 12u

// Samples the closed uniform Catmull–Rom spline through ctrl[0..n) into out[0..out_len)
// (TG_SAMPLES_PER_SEGMENT points per control point, stopping when out is full); returns the
// number written. Twin of `spline::catmull_rom_closed`.
TG_HD inline tg_u32 tg_catmull_rom_closed(const tg_vec2* ctrl, tg_u32 n, tg_vec2* out,
                                          tg_u32 out_len) {
    tg_u32 written = 0u;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 p0 = ctrl[(i + n - 1u) % n];
        tg_vec2 p1 = ctrl[i];
        tg_vec2 p2 = ctrl[(i + 1u) % n];
        tg_vec2 p3 = ctrl[(i + 2u) % n];
        for (tg_u32 k = 0u; k < TG_SAMPLES_PER_SEGMENT; ++k) {
            if (written == out_len) {
                return written;
            }
            float t = (float)k / (float)TG_SAMPLES_PER_SEGMENT;
            out[written] = tg_catmull_rom2(p0, p1, p2, p3, t);
            written += 1u;
        }
    }
    return written;
}

#endif // TG_TRACK_GENERATE_CUH
