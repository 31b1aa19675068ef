// tg_track_voronoi: the Voronoi generator pass (one lane per env; buffers and prologue in
// track/generate.cuh, lane logic in track/voronoi.cuh).
#include "track/voronoi.cuh"

TG_KERNEL(tg_track_voronoi, tg_voronoi_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) {
        return;
    }
    tg_generate_lane g;
    if (!tg_generate_begin(p.c, buf, e, &g)) {
        return;
    }
    tg_generate_end(&g, tg_voronoi_lane(&p, &g.rng, g.gen, g.gen_u32, g.raw));
}
