// The generator passes (pass 1 of the track plan, `tg_track_<generator>`): their common
// parameters, the lane prologue and epilogue of `generate_stage` (`src/track/pipeline.rs`), and
// the twins of the closed Catmull–Rom sampler and the control-point softening the generators
// share (`src/track/generators/spline.rs`).
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

// Rust `spline::SOFTEN_ROUNDS`.
#define TG_SOFTEN_ROUNDS 24u

// The Bézier points of the closed uniform Catmull–Rom segment from ctrl[i] to ctrl[i + 1]
// (indices modulo n). Twin of `spline::catmull_rom_segment`.
TG_HD inline void tg_catmull_rom_segment(const tg_vec2* ctrl, tg_u32 n, tg_u32 i, tg_vec2 seg[4]) {
    tg_vec2 p0 = ctrl[(i + n - 1u) % n];
    tg_vec2 p1 = ctrl[i];
    tg_vec2 p2 = ctrl[(i + 1u) % n];
    tg_vec2 p3 = ctrl[(i + 2u) % n];
    seg[0] = p1;
    seg[1] = tg_add2(p1, tg_div2(tg_sub2(p2, p0), 6.0f));
    seg[2] = tg_sub2(p2, tg_div2(tg_sub2(p3, p1), 6.0f));
    seg[3] = p2;
}

// The Catmull–Rom segments as a functor of tg_soften_closed.
struct tg_catmull_rom_segments {
    TG_HD void operator()(const tg_vec2* ctrl, tg_u32 n, tg_u32 i, tg_vec2 seg[4]) const {
        tg_catmull_rom_segment(ctrl, n, i, seg);
    }
};

// Whether the curvature of the cubic Bézier seg at t exceeds k (degenerate: exceeds). Twin of
// `spline::bezier_curvature_exceeds`.
TG_HD inline bool tg_bezier_curvature_exceeds(const tg_vec2 seg[4], float t, float k) {
    tg_vec2 d1 = tg_sub2(seg[1], seg[0]);
    tg_vec2 d2 = tg_sub2(seg[2], seg[1]);
    tg_vec2 d3 = tg_sub2(seg[3], seg[2]);
    float s = 1.0f - t;
    tg_vec2 u = tg_add2(tg_add2(tg_mul2(d1, s * s), tg_mul2(d2, 2.0f * t * s)), tg_mul2(d3, t * t));
    tg_vec2 v = tg_add2(tg_mul2(tg_sub2(d2, d1), s), tg_mul2(tg_sub2(d3, d2), t));
    float cross = u.x * v.y - u.y * v.x;
    float uu = u.x * u.x + u.y * u.y;
    float lhs = 4.0f * cross * cross;
    float rhs = 9.0f * k * k * (uu * uu * uu);
    return !(lhs <= rhs && uu > 0.0f);
}

// Softens the closed control polygon ctrl[0..n) in place against max_curvature, at most rounds
// rounds, segment i given by segment(ctrl, n, i, seg); returns the rounds that moved a point.
// Twin of `spline::soften_closed`.
template <typename Segment>
TG_HD inline tg_u32 tg_soften_closed(tg_vec2* ctrl, tg_u32 n, float max_curvature, tg_u32 rounds,
                                     const Segment& segment) {
    if (n < 3u) {
        return 0u;
    }
    const float ts[9] = {0.0f, 0.125f, 0.25f, 0.375f, 0.5f, 0.625f, 0.75f, 0.875f, 1.0f};
    tg_u32 moved_rounds = 0u;
    for (tg_u32 r = 0u; r < rounds; ++r) {
        bool moved = false;
        for (tg_u32 i = 0u; i < n; ++i) {
            tg_vec2 before[4];
            tg_vec2 after[4];
            segment(ctrl, n, (i + n - 1u) % n, before);
            segment(ctrl, n, i, after);
            bool charged = false;
            for (tg_u32 j = 0u; j < 9u; ++j) {
                float t = ts[j];
                if ((t >= 0.5f && tg_bezier_curvature_exceeds(before, t, max_curvature)) ||
                    (t <= 0.5f && tg_bezier_curvature_exceeds(after, t, max_curvature))) {
                    charged = true;
                    break;
                }
            }
            if (charged) {
                tg_vec2 prev = ctrl[(i + n - 1u) % n];
                tg_vec2 next = ctrl[(i + 1u) % n];
                tg_vec2 p = ctrl[i];
                float mx = 0.5f * (prev.x + next.x);
                float my = 0.5f * (prev.y + next.y);
                ctrl[i] = tg_v2(p.x + 0.25f * (mx - p.x), p.y + 0.25f * (my - p.y));
                moved = true;
            }
        }
        if (!moved) {
            break;
        }
        moved_rounds += 1u;
    }
    return moved_rounds;
}

#endif // TG_TRACK_GENERATE_CUH
