// The Bézier generator's lane: the twin of `src/track/generators/bezier.rs`.
#ifndef TG_TRACK_BEZIER_CUH
#define TG_TRACK_BEZIER_CUH

#include "track/generate.cuh"

// Samples per Bézier segment (Rust `bezier::SAMPLES`).
#define TG_BEZIER_SAMPLES 12u

// Parameters of tg_track_bezier: the common part, then Rust `Bezier`'s fields in order.
struct tg_bezier_params {
    tg_generate_common c;
    tg_u32 n_ctrl;
    float radius_m;
    float handle;
    float radius_jitter;
    // 1 / (SOFTEN_MARGIN · min_turn_radius_m): the curvature the control points are softened to.
    float max_curvature;
    tg_u32 pad;
};
static_assert(sizeof(tg_bezier_params) == 56, "tg_bezier_params is 56 bytes");

// v / |v|, or zero for a zero vector (Rust `bezier::unit`).
TG_HD inline tg_vec2 tg_bezier_unit(tg_vec2 v) {
    float len = sqrtf(v.x * v.x + v.y * v.y);
    if (len > 0.0f) {
        return tg_v2(v.x / len, v.y / len);
    }
    return tg_v2(0.0f, 0.0f);
}

// The cubic Bézier from pts[i] to pts[i + 1] (indices modulo n), its handles along the neighbour
// chords (Rust `bezier::segment`).
TG_HD inline void tg_bezier_segment(const tg_vec2* pts, const float* handles, tg_u32 n, tg_u32 i,
                                    tg_vec2 seg[4]) {
    tg_vec2 prev = pts[(i + n - 1u) % n];
    tg_vec2 a = pts[i];
    tg_vec2 d = pts[(i + 1u) % n];
    tg_vec2 next = pts[(i + 2u) % n];
    float seg_x = d.x - a.x;
    float seg_y = d.y - a.y;
    float seg_len = sqrtf(seg_x * seg_x + seg_y * seg_y);
    tg_vec2 ta = tg_bezier_unit(tg_v2(d.x - prev.x, d.y - prev.y));
    tg_vec2 td = tg_bezier_unit(tg_v2(next.x - a.x, next.y - a.y));
    float ha = handles[i] * seg_len;
    float hd = handles[(i + 1u) % n] * seg_len;
    seg[0] = a;
    seg[1] = tg_v2(a.x + ta.x * ha, a.y + ta.y * ha);
    seg[2] = tg_v2(d.x - td.x * hd, d.y - td.y * hd);
    seg[3] = d;
}

// The Bézier segments as a functor of tg_soften_closed.
struct tg_bezier_segments {
    const float* handles;
    TG_HD void operator()(const tg_vec2* pts, tg_u32 n, tg_u32 i, tg_vec2 seg[4]) const {
        tg_bezier_segment(pts, handles, n, i, seg);
    }
};

// Stratified control points, softened against max_curvature, joined by closed cubic Bézier
// segments (3·n_ctrl scratch words: points, then handle fractions) into out[0..out_len)
// (n_ctrl · TG_BEZIER_SAMPLES points, which the pipeline's raw slice holds; a shorter out stops the lane where Rust's would panic); returns
// the number of points written.
TG_HD inline tg_u32 tg_bezier_lane(const tg_bezier_params& p, tg_rng* rng, float* scratch,
                                   tg_vec2* out, tg_u32 out_len) {
    tg_u32 n = p.n_ctrl;
    tg_vec2* pts = reinterpret_cast<tg_vec2*>(scratch);
    float* handles = scratch + 2u * n;
    float step = TG_TAU / (float)n;
    for (tg_u32 i = 0u; i < n; ++i) {
        float angle = ((float)i + 0x1.99999ap-1f * tg_rng_unit(rng)) * step; // 0.8
        float r = p.radius_m * (1.0f + p.radius_jitter * tg_rng_signed(rng));
        tg_f32x2 sc = tg_sin_cos(angle);
        pts[i] = tg_v2(r * sc.b, r * sc.a);
        handles[i] = p.handle * (0.5f + tg_rng_unit(rng));
    }
    tg_bezier_segments segments = {handles};
    tg_soften_closed(pts, n, p.max_curvature, TG_SOFTEN_ROUNDS, segments);
    tg_u32 written = 0u;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 seg[4];
        tg_bezier_segment(pts, handles, n, i, seg);
        for (tg_u32 k = 0u; k < TG_BEZIER_SAMPLES; ++k) {
            if (written == out_len) {
                return written;
            }
            float t = (float)k / (float)TG_BEZIER_SAMPLES;
            out[written] = tg_bezier2(seg[0], seg[1], seg[2], seg[3], t);
            written += 1u;
        }
    }
    return written;
}

#endif // TG_TRACK_BEZIER_CUH
