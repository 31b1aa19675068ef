// The polar generator's lane: the twin of `src/track/generators/polar.rs`.
#ifndef TG_TRACK_POLAR_CUH
#define TG_TRACK_POLAR_CUH

#include "track/generate.cuh"

// Parameters of tg_track_polar: the common part, then Rust `Polar`'s fields in order.
struct tg_polar_params {
    tg_generate_common c;
    tg_u32 n_ctrl;
    float radius_m;
    float radius_jitter;
    float angle_jitter;
    // 1 / (SOFTEN_MARGIN · min_turn_radius_m): the curvature the control points are softened to.
    float max_curvature;
    tg_u32 pad;
};
static_assert(sizeof(tg_polar_params) == 56, "tg_polar_params is 56 bytes");

// Jittered radii at jittered angles (2·n_ctrl scratch words of control points), softened against
// max_curvature, sampled by the closed Catmull–Rom spline into out[0..out_len); returns the number of points written.
TG_HD inline tg_u32 tg_polar_lane(const tg_polar_params& p, tg_rng* rng, float* scratch,
                                  tg_vec2* out, tg_u32 out_len) {
    tg_u32 n = p.n_ctrl;
    tg_vec2* ctrl = reinterpret_cast<tg_vec2*>(scratch);
    float step = TG_TAU / (float)n;
    for (tg_u32 i = 0u; i < n; ++i) {
        float angle = ((float)i + p.angle_jitter * tg_rng_signed(rng)) * step;
        float r = p.radius_m * (1.0f + p.radius_jitter * tg_rng_signed(rng));
        tg_f32x2 sc = tg_sin_cos(angle);
        ctrl[i] = tg_v2(r * sc.b, r * sc.a);
    }
    tg_soften_closed(ctrl, n, p.max_curvature, TG_SOFTEN_ROUNDS, tg_catmull_rom_segments());
    return tg_catmull_rom_closed(ctrl, n, out, out_len);
}

#endif // TG_TRACK_POLAR_CUH
