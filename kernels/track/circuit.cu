// tg_track_circuit: the circuit generator pass (one lane per env; see track/generate.cuh).
#include "track/circuit.cuh"

TG_KERNEL(tg_track_circuit, tg_circuit_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) {
        return;
    }
    tg_generate_lane g;
    if (!tg_generate_begin(p.c, buf, e, &g)) {
        return;
    }
    tg_generate_end(&g, tg_circuit_lane(p, &g.rng, g.gen, g.raw));
}
