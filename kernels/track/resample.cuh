// Resampling of a closed polyline, at constant spacing or curvature-adaptive: the twin of
// `src/track/resample.rs` (its module doc has the rule).
//
// Uniform: the point count is round(L / spacing) clamped to [TG_MIN_POINTS, n_max]; points are
// placed at arc lengths k · L / count, walking the polyline once. Curvature: densities
// w = sqrt(kappa / 8 tol) per raw vertex, clamped to [1 / max_spacing, 1 / spacing], blended
// toward their mean where they leave [mean / TG_RESAMPLE_MAX_RATIO, mean / TG_RESAMPLE_MIN_RATIO];
// points at equal steps of the warped length.
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

// The point count for `units` spacings' worth of curve: round(units) clamped to
// [TG_MIN_POINTS, n_max] (negative or NaN: TG_MIN_POINTS).
TG_HD inline tg_u32 tg_point_count(float units, tg_u32 n_max) {
    float wanted = tg_round_small(units);
    if (wanted >= (float)n_max) {
        return n_max;
    }
    // wanted < n_max here, so the saturating u64 conversion fits a u32 after the clamp.
    tg_u64 w = tg_f32_to_u64(wanted);
    if (w < TG_MIN_POINTS) {
        w = TG_MIN_POINTS;
    }
    return w < n_max ? (tg_u32)w : n_max;
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
    tg_u32 count = tg_point_count(length / spacing_m, n_max);
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

// Rust `resample::MAX_RATIO` and `MIN_RATIO`.
#define TG_RESAMPLE_MAX_RATIO 2.2f
#define TG_RESAMPLE_MIN_RATIO 0.3f

// Rust `Densities`.
struct tg_densities {
    float inv_8tol;
    float w_lo;
    float w_hi;
};

// Rust `vertex_density`: points per metre at a raw vertex with incoming a and outgoing b
// (lengths la, lb); plain selects.
TG_HD inline float tg_vertex_density(tg_vec2 a, tg_vec2 b, float la, float lb, tg_densities k) {
    float cross = a.x * b.y - a.y * b.x;
    float dot = a.x * b.x + a.y * b.y;
    float m = lb < la ? lb : la;
    float kappa = dot < 0.0f ? 1.0f / m : tg_abs(cross) / (la * lb * m);
    float w = sqrtf(kappa * k.inv_8tol);
    w = w < k.w_hi ? w : k.w_hi;
    return w > k.w_lo ? w : k.w_lo;
}

// Rust `norm`.
TG_HD inline float tg_resample_norm(tg_vec2 d) { return sqrtf(d.x * d.x + d.y * d.y); }

// Rust `resample::REACH_SPACINGS`.
#define TG_RESAMPLE_REACH_SPACINGS 2.0f

// Rust `reach`: how far a vertex's density w reaches into its legs (lengths la, lb).
TG_HD inline float tg_density_reach(float w, float la, float lb) {
    float half = 0.5f * (lb < la ? lb : la);
    float r = TG_RESAMPLE_REACH_SPACINGS / w;
    return r > half ? r : half;
}

// Rust `piece`: the part of a segment of length len that a reach r covers (at most half).
TG_HD inline float tg_density_piece(float len, float r) {
    float half = 0.5f * len;
    return r < half ? r : half;
}

// Rust `resample::ADAPTIVE_SCRATCH_ROWS`: float rows of raw_count words in the scratch of
// tg_resample_adaptive.
#define TG_RESAMPLE_SCRATCH_ROWS 5u

// Rust `blend`: w + lambda · (w_mean − w) (lambda = 0 leaves w as it is).
TG_HD inline float tg_density_blend(float w, float lambda, float w_mean) {
    return w + lambda * (w_mean - w);
}

// Rust `warped_rows`: the warped length of each segment i into warp[i], its pieces' densities
// moved to blend(w) (blend = 0 leaves them; the Rust identity closure gives the same bits).
TG_HD inline void tg_warped_rows(const float* len, const float* w, const float* e_start,
                                 const float* e_end, float w_lo, float* warp, tg_u32 n,
                                 float lambda, float w_mean) {
    for (tg_u32 i = 0u; i < n; ++i) {
        float we = w[i + 1u < n ? i + 1u : 0u];
        float mid = len[i] - e_start[i] - e_end[i];
        warp[i] = e_start[i] * tg_density_blend(w[i], lambda, w_mean) +
                  mid * tg_density_blend(w_lo, lambda, w_mean) +
                  e_end[i] * tg_density_blend(we, lambda, w_mean);
    }
}

// Rust `resample_adaptive`: resamples raw[0..n) into out[0..n_max) with curvature-adaptive
// spacing; returns the count (0 when raw has fewer than 3 points, a zero length or non-finite
// points). scratch holds TG_RESAMPLE_SCRATCH_ROWS · n floats: rows of segment lengths, vertex
// densities, first and last pieces, warped lengths.
TG_HD inline tg_u32 tg_resample_adaptive(const tg_vec2* raw, tg_u32 n, float min_spacing_m,
                                         float max_spacing_m, float sagitta_m, tg_vec2* out,
                                         tg_u32 n_max, float* scratch) {
    if (n < 3u) {
        return 0u;
    }
    tg_densities k;
    k.inv_8tol = 1.0f / (8.0f * sagitta_m);
    k.w_lo = 1.0f / max_spacing_m;
    k.w_hi = 1.0f / min_spacing_m;
    float* len = scratch;
    float* w = scratch + n;
    float* e_start = scratch + 2u * n;
    float* e_end = scratch + 3u * n;
    float* warp = scratch + 4u * n;
    for (tg_u32 i = 0u; i < n; ++i) {
        len[i] = tg_resample_norm(tg_sub2(raw[i + 1u < n ? i + 1u : 0u], raw[i]));
    }
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 prev = i > 0u ? i - 1u : n - 1u;
        tg_u32 nxt = i + 1u < n ? i + 1u : 0u;
        w[i] = tg_vertex_density(tg_sub2(raw[i], raw[prev]), tg_sub2(raw[nxt], raw[i]), len[prev],
                                 len[i], k);
    }
    // Vertex i's reach covers the start of segment i and the end of segment i − 1.
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 prev = i > 0u ? i - 1u : n - 1u;
        float r = tg_density_reach(w[i], len[prev], len[i]);
        e_start[i] = tg_density_piece(len[i], r);
        e_end[prev] = tg_density_piece(len[prev], r);
    }
    tg_warped_rows(len, w, e_start, e_end, k.w_lo, warp, n, 0.0f, 0.0f);
    float length = 0.0f;
    float warped = 0.0f;
    float w_min = tg_inf();
    float w_max = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        length += len[i];
        warped += warp[i];
        float e2[2] = {e_start[i], e_end[i]};
        float w2[2] = {w[i], w[i + 1u < n ? i + 1u : 0u]};
        for (int q = 0; q < 2; ++q) {
            if (e2[q] > 0.0f) {
                w_min = w2[q] < w_min ? w2[q] : w_min;
                w_max = w2[q] > w_max ? w2[q] : w_max;
            }
        }
        if (len[i] - e_start[i] - e_end[i] > 0.0f) {
            w_min = k.w_lo;
        }
    }
    if (!(tg_is_finite(length) && length > 0.0f && tg_is_finite(warped))) {
        return 0u;
    }
    float w_mean = warped / length;
    float w_floor = w_mean / TG_RESAMPLE_MAX_RATIO;
    float w_ceil = w_mean / TG_RESAMPLE_MIN_RATIO;
    float lambda = 0.0f;
    if (w_min < w_floor) {
        lambda = (w_floor - w_min) / (w_mean - w_min);
    }
    if (w_max > w_ceil) {
        float l = (w_max - w_ceil) / (w_max - w_mean);
        lambda = l > lambda ? l : lambda;
    }
    tg_u32 count = tg_point_count(warped, n_max);
    float step = warped / (float)count;
    if (lambda != 0.0f || !tg_is_finite(w_mean)) {
        tg_warped_rows(len, w, e_start, e_end, k.w_lo, warp, n, lambda, w_mean);
    }
    float w_m = tg_density_blend(k.w_lo, lambda, w_mean);
    tg_u32 seg = 0u;
    float seg_start = 0.0f;
    float seg_len = warp[0];
    for (tg_u32 j = 0u; j < count; ++j) {
        float target = (float)j * step;
        while (seg + 1u < n && seg_start + seg_len < target) {
            seg_start += seg_len;
            seg += 1u;
            seg_len = warp[seg];
        }
        float u = target - seg_start;
        tg_u32 b = seg + 1u < n ? seg + 1u : 0u;
        float w_s = tg_density_blend(w[seg], lambda, w_mean);
        float w_e = tg_density_blend(w[b], lambda, w_mean);
        float l = len[seg];
        float es = e_start[seg];
        float mid = l - es - e_end[seg];
        float u0 = es * w_s;
        float u1 = mid * w_m;
        float s;
        if (u < u0) {
            s = u / w_s;
        } else if (u < u0 + u1) {
            s = es + (u - u0) / w_m;
        } else {
            s = es + mid + (u - u0 - u1) / w_e;
        }
        float t = l > 0.0f ? tg_clamp(s / l, 0.0f, 1.0f) : 0.0f;
        tg_vec2 a = raw[seg];
        tg_vec2 d = tg_sub2(raw[b], a);
        out[j] = tg_v2(a.x + d.x * t, a.y + d.y * t);
    }
    return count;
}

#endif // TG_TRACK_RESAMPLE_CUH
