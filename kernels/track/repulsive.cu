// The repulsive-curve generator passes: the set-up `tg_track_repulsive` (pass 1; buffers and
// prologue in track/generate.cuh) and `tg_track_repulsive_window`, one window of the flow (pass
// 2, run by the plan's WHILE loop while any env is still active). Lane logic:
// track/repulsive.cuh.
#include "track/repulsive.cuh"

// The window pass binds the generator pass's first four buffers, then the flags of the lanes
// still iterating (u8; a lane that converged or reached max_iters clears its flag).
#define TG_REPULSIVE_GEN_ACTIVE 4

TG_KERNEL(tg_track_repulsive, tg_repulsive_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) {
        return;
    }
    tg_generate_lane g;
    if (!tg_generate_begin(p.c, buf, e, &g)) {
        return;
    }
    tg_generate_end(&g, tg_repulsive_lane(&p, &g.rng, g.gen, g.gen_u32, g.raw, g.raw_max));
}

TG_KERNEL(tg_track_repulsive_window, tg_repulsive_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) {
        return;
    }
    unsigned char* gen_active = static_cast<unsigned char*>(buf.ptr[TG_REPULSIVE_GEN_ACTIVE]);
    if (gen_active[e] == 0u) {
        return;
    }
    tg_vec2* raw = static_cast<tg_vec2*>(buf.ptr[TG_GENERATE_RAW]) + (tg_u64)e * p.c.raw_max;
    tg_u32* raw_count = static_cast<tg_u32*>(buf.ptr[TG_GENERATE_RAW_COUNT]);
    float* gen = static_cast<float*>(buf.ptr[TG_GENERATE_GEN]) + (tg_u64)e * p.c.gen_len;
    tg_u32* gen_u32 =
        static_cast<tg_u32*>(buf.ptr[TG_GENERATE_GEN_U32]) + (tg_u64)e * p.c.gen_u32_len;
    bool still = false;
    tg_u32 n = tg_repulsive_window_lane(&p, gen, gen_u32, raw, p.c.raw_max, &still);
    raw_count[e] = n < p.c.raw_max ? n : p.c.raw_max;
    gen_active[e] = still ? 1u : 0u;
}
