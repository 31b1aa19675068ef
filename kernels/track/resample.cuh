// Constant-spacing resampling of a closed polyline: the twin of `src/track/resample.rs`.
//
// The point count is round(L / spacing) clamped to [TG_MIN_POINTS, n_max]; points are placed at
// arc lengths k · L / count, walking the polyline once.
#ifndef TG_TRACK_RESAMPLE_CUH
#define TG_TRACK_RESAMPLE_CUH

#include "common/geom.cuh"

// The fewest points a resampled track has (Rust `resample::MIN_POINTS`).
#define TG_MIN_POINTS 8u

// Length of segment i of the closed polyline pts[0..n).
TG_HD inline float tg_seg_length(const tg_vec2* pts, tg_u32 n, tg_u32 i) {
    tg_vec2 a = pts[i];
    tg_vec2 b = pts[(i + 1u) % n];
    float dx = b.x - a.x;
    float dy = b.y - a.y;
    return sqrtf(dx * dx + dy * dy);
}

// Length of the closed polyline pts[0..n).
TG_HD inline float tg_closed_length(const tg_vec2* pts, tg_u32 n) {
    float total = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        total += tg_seg_length(pts, n, i);
    }
    return total;
}

// Resamples the closed polyline raw[0..n) at constant spacing into out[0..n_max); returns the
// count (0 when raw has fewer than 3 points, a zero length or non-finite points).
TG_HD inline tg_u32 tg_resample_closed(const tg_vec2* raw, tg_u32 n, float spacing_m, tg_vec2* out,
                                       tg_u32 n_max) {
    if (n < 3u) {
        return 0u;
    }
    float length = tg_closed_length(raw, n);
    if (!(tg_is_finite(length) && length > 0.0f)) {
        return 0u;
    }
    float wanted = tg_round_small(length / spacing_m);
    tg_u32 count;
    if (wanted >= (float)n_max) {
        count = n_max;
    } else {
        // wanted < n_max here, so the saturating u64 conversion fits a u32 after the clamp.
        tg_u64 w = tg_f32_to_u64(wanted);
        if (w < TG_MIN_POINTS) {
            w = TG_MIN_POINTS;
        }
        count = w < n_max ? (tg_u32)w : n_max;
    }
    float step = length / (float)count;
    tg_u32 seg = 0u;
    float seg_start = 0.0f;
    float seg_len = tg_seg_length(raw, n, 0u);
    for (tg_u32 k = 0u; k < count; ++k) {
        float target = (float)k * step;
        while (seg + 1u < n && seg_start + seg_len < target) {
            seg_start += seg_len;
            seg += 1u;
            seg_len = tg_seg_length(raw, n, seg);
        }
        tg_vec2 a = raw[seg];
        tg_vec2 b = raw[(seg + 1u) % n];
        float t = seg_len > 0.0f ? tg_clamp((target - seg_start) / seg_len, 0.0f, 1.0f) : 0.0f;
        out[k] = tg_v2(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t);
    }
    return count;
}

#endif // TG_TRACK_RESAMPLE_CUH
