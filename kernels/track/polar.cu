// tg_track_polar: the polar generator pass (one lane per env; see track/generate.cuh).
#include "track/polar.cuh"

TG_KERNEL(tg_track_polar, tg_polar_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) {
        return;
    }
    tg_generate_lane g;
    if (!tg_generate_begin(p.c, buf, e, &g)) {
        return;
    }
    tg_generate_end(&g, tg_polar_lane(p, &g.rng, g.gen, g.raw, g.raw_max));
}
