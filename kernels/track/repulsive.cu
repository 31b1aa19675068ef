// The repulsive-curve generator passes: the set-up (pipeline pass 1, `generate_stage` in
// src/track/pipeline.rs) and one window of the flow (pass 2, run by the plan's WHILE loop while
// any env is still active). Lane logic: repulsive.cuh.
#include "common/kernel.cuh"
#include "track/repulsive.cuh"

// Buffers: 0 raw (Vec2, E×raw_max), 1 raw_count (u32, E), 2 gen (f32, E×gen_len), 3 gen_u32
// (u32, E×gen_u32_len), 4 active (u8, E), 5 attempt (u8, E), 6 generation (u32, E).
TG_KERNEL(tg_track_repulsive, tg_repulsive_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) {
        return;
    }
    const unsigned char* active = (const unsigned char*)buf.ptr[4];
    if (active[e] == 0u) {
        return;
    }
    tg_vec2* raw = (tg_vec2*)buf.ptr[0] + (tg_u64)e * p.c.raw_max;
    tg_u32* raw_count = (tg_u32*)buf.ptr[1];
    float* gen = (float*)buf.ptr[2] + (tg_u64)e * p.c.gen_len;
    tg_u32* gen_u32 = (tg_u32*)buf.ptr[3] + (tg_u64)e * p.c.gen_u32_len;
    const unsigned char* attempt = (const unsigned char*)buf.ptr[5];
    const tg_u32* generation = (const tg_u32*)buf.ptr[6];
    tg_u32 stream = tg_stage_with_attempt(TG_STREAM_GENERATE, attempt[e]);
    tg_rng rng = tg_rng_new(p.c.seed, p.c.env_base + e, generation[e], stream);
    tg_u32 n = tg_repulsive_lane(&p, &rng, gen, gen_u32, raw, p.c.raw_max);
    raw_count[e] = n < p.c.raw_max ? n : p.c.raw_max;
}

// Buffers: 0 raw, 1 raw_count, 2 gen, 3 gen_u32 (as above), 4 gen_active (u8, E): the lanes still
// iterating; a lane that converged or reached max_iters clears its flag.
TG_KERNEL(tg_track_repulsive_window, tg_repulsive_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) {
        return;
    }
    unsigned char* gen_active = (unsigned char*)buf.ptr[4];
    if (gen_active[e] == 0u) {
        return;
    }
    tg_vec2* raw = (tg_vec2*)buf.ptr[0] + (tg_u64)e * p.c.raw_max;
    tg_u32* raw_count = (tg_u32*)buf.ptr[1];
    float* gen = (float*)buf.ptr[2] + (tg_u64)e * p.c.gen_len;
    tg_u32* gen_u32 = (tg_u32*)buf.ptr[3] + (tg_u64)e * p.c.gen_u32_len;
    bool still = false;
    tg_u32 n = tg_repulsive_window_lane(&p, gen, gen_u32, raw, p.c.raw_max, &still);
    raw_count[e] = n < p.c.raw_max ? n : p.c.raw_max;
    gen_active[e] = still ? 1u : 0u;
}
