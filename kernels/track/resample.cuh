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

// Rust `DensityWalk`: the raw segments in order, each in three pieces with their densities.
struct tg_density_walk {
    const tg_vec2* raw;
    tg_u32 n;
    tg_densities k;
    tg_u32 seg;
    tg_vec2 d_cur;
    tg_vec2 d_next;
    float len_cur;
    float len_next;
    float w_start;
    float w_end;
    float e_start;
    float e_end;
    float r_end;
};

TG_HD inline tg_density_walk tg_density_walk_new(const tg_vec2* raw, tg_u32 n, float min_spacing_m,
                                                 float max_spacing_m, float sagitta_m) {
    tg_density_walk w;
    w.raw = raw;
    w.n = n;
    w.k.inv_8tol = 1.0f / (8.0f * sagitta_m);
    w.k.w_lo = 1.0f / max_spacing_m;
    w.k.w_hi = 1.0f / min_spacing_m;
    w.seg = 0u;
    tg_vec2 d_last = tg_sub2(raw[0], raw[n - 1u]);
    w.d_cur = tg_sub2(raw[1], raw[0]);
    w.d_next = tg_sub2(raw[2], raw[1]);
    float len_last = tg_resample_norm(d_last);
    w.len_cur = tg_resample_norm(w.d_cur);
    w.len_next = tg_resample_norm(w.d_next);
    w.w_start = tg_vertex_density(d_last, w.d_cur, len_last, w.len_cur, w.k);
    w.w_end = tg_vertex_density(w.d_cur, w.d_next, w.len_cur, w.len_next, w.k);
    w.r_end = tg_density_reach(w.w_end, w.len_cur, w.len_next);
    w.e_start = tg_density_piece(w.len_cur, tg_density_reach(w.w_start, len_last, w.len_cur));
    w.e_end = tg_density_piece(w.len_cur, w.r_end);
    return w;
}

// Rust `blend`: w + lambda · (w_mean − w) (lambda = 0 leaves w as it is).
TG_HD inline float tg_density_blend(float w, float lambda, float w_mean) {
    return w + lambda * (w_mean - w);
}

// Rust `DensityWalk::warped`: the current segment's warped length at blended densities.
TG_HD inline float tg_density_walk_warped(const tg_density_walk* w, float lambda, float w_mean) {
    float mid = w->len_cur - w->e_start - w->e_end;
    return w->e_start * tg_density_blend(w->w_start, lambda, w_mean) +
           mid * tg_density_blend(w->k.w_lo, lambda, w_mean) +
           w->e_end * tg_density_blend(w->w_end, lambda, w_mean);
}

TG_HD inline void tg_density_walk_advance(tg_density_walk* w) {
    w->seg += 1u;
    tg_u32 i = w->seg + 1u < w->n ? w->seg + 1u : 0u;
    tg_u32 j = i + 1u < w->n ? i + 1u : 0u;
    w->d_cur = w->d_next;
    w->len_cur = w->len_next;
    w->d_next = tg_sub2(w->raw[j], w->raw[i]);
    w->len_next = tg_resample_norm(w->d_next);
    w->w_start = w->w_end;
    w->w_end = tg_vertex_density(w->d_cur, w->d_next, w->len_cur, w->len_next, w->k);
    w->e_start = tg_density_piece(w->len_cur, w->r_end);
    w->r_end = tg_density_reach(w->w_end, w->len_cur, w->len_next);
    w->e_end = tg_density_piece(w->len_cur, w->r_end);
}

// Rust `resample_adaptive`: resamples raw[0..n) into out[0..n_max) with curvature-adaptive
// spacing; returns the count (0 when raw has fewer than 3 points, a zero length or non-finite
// points).
TG_HD inline tg_u32 tg_resample_adaptive(const tg_vec2* raw, tg_u32 n, float min_spacing_m,
                                         float max_spacing_m, float sagitta_m, tg_vec2* out,
                                         tg_u32 n_max) {
    if (n < 3u) {
        return 0u;
    }
    tg_density_walk walk = tg_density_walk_new(raw, n, min_spacing_m, max_spacing_m, sagitta_m);
    float length = 0.0f;
    float warped = 0.0f;
    float w_min = tg_inf();
    float w_max = 0.0f;
    for (;;) {
        length += walk.len_cur;
        warped += tg_density_walk_warped(&walk, 0.0f, 0.0f);
        float e2[2] = {walk.e_start, walk.e_end};
        float w2[2] = {walk.w_start, walk.w_end};
        for (int q = 0; q < 2; ++q) {
            if (e2[q] > 0.0f) {
                w_min = w2[q] < w_min ? w2[q] : w_min;
                w_max = w2[q] > w_max ? w2[q] : w_max;
            }
        }
        if (walk.len_cur - walk.e_start - walk.e_end > 0.0f) {
            w_min = walk.k.w_lo;
        }
        if (walk.seg + 1u >= n) {
            break;
        }
        tg_density_walk_advance(&walk);
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
    float wanted = tg_round_small(warped);
    tg_u32 count;
    if (wanted >= (float)n_max) {
        count = n_max;
    } else {
        tg_u64 c = tg_f32_to_u64(wanted);
        if (c < TG_MIN_POINTS) {
            c = TG_MIN_POINTS;
        }
        count = c < n_max ? (tg_u32)c : n_max;
    }
    float step = warped / (float)count;
    walk = tg_density_walk_new(raw, n, min_spacing_m, max_spacing_m, sagitta_m);
    float seg_start = 0.0f;
    float seg_len = tg_density_walk_warped(&walk, lambda, w_mean);
    for (tg_u32 k = 0u; k < count; ++k) {
        float target = (float)k * step;
        while (walk.seg + 1u < n && seg_start + seg_len < target) {
            seg_start += seg_len;
            tg_density_walk_advance(&walk);
            seg_len = tg_density_walk_warped(&walk, lambda, w_mean);
        }
        float u = target - seg_start;
        float w_s = tg_density_blend(walk.w_start, lambda, w_mean);
        float w_m = tg_density_blend(walk.k.w_lo, lambda, w_mean);
        float w_e = tg_density_blend(walk.w_end, lambda, w_mean);
        float mid = walk.len_cur - walk.e_start - walk.e_end;
        float u0 = walk.e_start * w_s;
        float u1 = mid * w_m;
        float s;
        if (u < u0) {
            s = u / w_s;
        } else if (u < u0 + u1) {
            s = walk.e_start + (u - u0) / w_m;
        } else {
            s = walk.e_start + mid + (u - u0 - u1) / w_e;
        }
        float t = walk.len_cur > 0.0f ? tg_clamp(s / walk.len_cur, 0.0f, 1.0f) : 0.0f;
        tg_vec2 a = raw[walk.seg];
        out[k] = tg_v2(a.x + walk.d_cur.x * t, a.y + walk.d_cur.y * t);
    }
    return count;
}

#endif // TG_TRACK_RESAMPLE_CUH
