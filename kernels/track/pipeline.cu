// The track pipeline's own small kernels (`src/track/pipeline.rs`): starting a masked run and
// copying flags between the plan's loops.
#include "common/kernel.cuh"

struct tg_count_params {
    tg_u32 n;
    tg_u32 pad;
};

// buf: 0 mask (u8), 1 active (u8), 2 attempt (u8), 3 ok (u8). Starts a run: the masked envs are
// active, no attempt made, none valid yet.
TG_KERNEL(tg_track_begin, tg_count_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    ((unsigned char*)buf.ptr[1])[e] = ((const unsigned char*)buf.ptr[0])[e];
    ((unsigned char*)buf.ptr[2])[e] = 0u;
    ((unsigned char*)buf.ptr[3])[e] = 0u;
}

// buf: 0 from (u8), 1 to (u8). to[e] = from[e].
TG_KERNEL(tg_track_copy_flags, tg_count_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    ((unsigned char*)buf.ptr[1])[e] = ((const unsigned char*)buf.ptr[0])[e];
}
