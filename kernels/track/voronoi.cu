// The Voronoi generator pass (pipeline pass 1, `generate_stage` in src/track/pipeline.rs): one
// lane per env draws the env's closed outline into its raw slice. Lane logic: voronoi.cuh.
#include "common/kernel.cuh"
#include "track/voronoi.cuh"

// Buffers: 0 raw (Vec2, E×raw_max), 1 raw_count (u32, E), 2 gen (f32, E×gen_len), 3 gen_u32
// (u32, E×gen_u32_len), 4 active (u8, E), 5 attempt (u8, E), 6 generation (u32, E).
TG_KERNEL(tg_track_voronoi, tg_voronoi_params) {
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
    tg_u32 n = tg_voronoi_lane(&p, &rng, gen, gen_u32, raw);
    raw_count[e] = n < p.c.raw_max ? n : p.c.raw_max;
}
