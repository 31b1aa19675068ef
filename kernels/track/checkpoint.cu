// tg_track_checkpoint: the checkpoint generator pass (one lane per env; see
// track/generate.cuh).
#include "track/checkpoint.cuh"

TG_KERNEL(tg_track_checkpoint, tg_checkpoint_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) {
        return;
    }
    tg_generate_lane g;
    if (!tg_generate_begin(p.c, buf, e, &g)) {
        return;
    }
    tg_generate_end(&g, tg_checkpoint_lane(p, &g.rng, g.gen, g.raw, g.raw_max));
}
