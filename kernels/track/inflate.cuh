// Inflation of a centerline into the batch's per-point buffers, and the fallback circle: the
// twin of `src/track/inflate.rs`.
//
// From a plan-view centerline and its heights: index-aligned center, outer, inner, unit 3D
// tangent (central difference), left horizontal normal, arc length and closed length; the
// borders lie at ±half_width along the normal at the centre's height, the outer one away from
// the enclosed region. Padding past the count is NaN.
#ifndef TG_TRACK_INFLATE_CUH
#define TG_TRACK_INFLATE_CUH

#include "common/geom.cuh"
#include "track/resample.cuh"
#include "track/validity.cuh"

// One env's output rows (each n_max long) and its closed length (Rust `InflateOut`).
struct tg_inflate_out {
    tg_vec3* center;
    tg_vec3* outer;
    tg_vec3* inner;
    tg_vec3* tangent;
    tg_vec3* normal;
    float* arclen;
    float* length;
};

// Inflates the closed curve pts[0..n) with heights z[0..n) into `out`, padding [n, n_max) with
// NaN (Rust `inflate_lane`).
TG_HD inline void tg_inflate_lane(const tg_vec2* pts, const float* z, tg_u32 n, tg_u32 n_max,
                                  float half_width_m, const tg_inflate_out& out) {
    float sigma = tg_orientation(pts, n);
    float s = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 ia = (i + n - 1u) % n;
        tg_u32 ib = (i + 1u) % n;
        tg_vec3 c = tg_v3(pts[i].x, pts[i].y, z[i]);
        tg_vec3 a = tg_v3(pts[ia].x, pts[ia].y, z[ia]);
        tg_vec3 b = tg_v3(pts[ib].x, pts[ib].y, z[ib]);
        tg_vec3 t = tg_sub3(b, a);
        t = tg_div3(t, tg_length3(t));
        float hl = sqrtf(t.x * t.x + t.y * t.y);
        tg_vec3 nl = tg_v3(-t.y / hl, t.x / hl, 0.0f);
        out.center[i] = c;
        out.tangent[i] = t;
        out.normal[i] = nl;
        float o = sigma * half_width_m;
        out.outer[i] = tg_v3(c.x - o * nl.x, c.y - o * nl.y, c.z);
        out.inner[i] = tg_v3(c.x + o * nl.x, c.y + o * nl.y, c.z);
        out.arclen[i] = s;
        s += tg_length3(tg_sub3(b, c));
    }
    *out.length = s;
    for (tg_u32 i = n; i < n_max; ++i) {
        out.center[i] = tg_vec3_nan();
        out.outer[i] = tg_vec3_nan();
        out.inner[i] = tg_vec3_nan();
        out.tangent[i] = tg_vec3_nan();
        out.normal[i] = tg_vec3_nan();
        out.arclen[i] = tg_nan();
    }
}

// The deterministic fallback track into out[0..n_max): a circle of radius
// max(0.8·scale, 1.25·min_turn_radius) at the preset's spacing; returns the count, which (as in
// Rust) is not capped to n_max when n_max < TG_MIN_POINTS, while the points written are.
TG_HD inline tg_u32 tg_fallback_circle(float scale_m, float min_turn_radius_m, float spacing_m,
                                       tg_vec2* out, tg_u32 n_max) {
    float r = tg_max(0x1.99999ap-1f * scale_m, 1.25f * min_turn_radius_m); // 0.8
    float wanted = tg_round_small(TG_TAU * r / spacing_m);
    tg_u64 n;
    if (wanted >= (float)n_max) {
        n = n_max;
    } else {
        n = tg_f32_to_u64(wanted);
        if (n < TG_MIN_POINTS) {
            n = TG_MIN_POINTS;
        }
    }
    tg_u32 written = n < (tg_u64)n_max ? (tg_u32)n : n_max;
    for (tg_u32 i = 0u; i < written; ++i) {
        tg_f32x2 sc = tg_sin_cos(TG_TAU * (float)i / (float)n);
        out[i] = tg_v2(r * sc.b, r * sc.a);
    }
    return (tg_u32)n;
}

#endif // TG_TRACK_INFLATE_CUH
