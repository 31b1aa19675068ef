// Validity of a track, decided on the plan-view centerline and its two borders: the twin of
// `src/track/validity.rs` (see its module doc for the seven conditions and the bounds behind
// each shortcut).
#ifndef TG_TRACK_VALIDITY_CUH
#define TG_TRACK_VALIDITY_CUH

#include "common/geom.cuh"
#include "track/chunks.cuh"
#include "track/geometry.cuh"
#include "track/grid.cuh"
#include "track/resample.cuh"

// Relative slack of the thickness and turn-radius checks (Rust `validity::SLACK`, 0.02).
#define TG_VALIDITY_SLACK 0x1.47ae14p-6f

// Constants of the validity check (Rust `ValidityConsts`).
struct tg_validity_consts {
    float half_width_m;
    float min_turn_radius_m;
};

// One lane's scratch (Rust `ValidityScratch`): `border` and `mids` hold 2·n points, `next` and
// `cells` 2·n entries, `heads` `buckets` (a power of two) entries.
struct tg_validity_scratch {
    float* arclen;
    tg_vec2* border;
    tg_vec2* mids;
    tg_u32* heads;
    tg_u32 buckets;
    tg_u32* next;
    tg_u64* cells;
};

// Left unit normal of point i of the closed curve pts[0..n) (from the central difference).
TG_HD inline tg_vec2 tg_left_normal(const tg_vec2* pts, tg_u32 n, tg_u32 i) {
    tg_vec2 a = pts[(i + n - 1u) % n];
    tg_vec2 b = pts[(i + 1u) % n];
    float tx = b.x - a.x;
    float ty = b.y - a.y;
    float len = sqrtf(tx * tx + ty * ty);
    if (len > 0.0f) {
        return tg_v2(-ty / len, tx / len);
    }
    return tg_v2(0.0f, 0.0f);
}

// +1 for a counter-clockwise curve, −1 otherwise.
TG_HD inline float tg_orientation(const tg_vec2* pts, tg_u32 n) {
    return tg_signed_area2(pts, n) >= 0.0f ? 1.0f : -1.0f;
}

// Whether the turn at p from a to b (dot = (p − a)·(b − p)) is one a circle of radius
// 1 / max_curvature could make. NaN fails.
TG_HD inline bool tg_turn_complies(tg_vec2 a, tg_vec2 p, tg_vec2 b, float dot, float max_curvature) {
    return dot > 0.0f && !tg_curvature_exceeds(a, p, b, max_curvature);
}

// The largest cyclic index gap g < n with g · longest ≤ arc (in f32); n when every pair is
// within arc, 0 for NaN.
TG_HD inline tg_u64 tg_exempt_gap(float arc, float longest, tg_u32 n) {
    float g = arc / longest;
    if (g >= (float)n) {
        return n;
    }
    tg_u64 gi = tg_f32_to_u64(g);
    // The division rounds: step back while the product overshoots.
    while (gi > 0u && (float)gi * longest > arc) {
        gi -= 1u;
    }
    return gi;
}

// The end point of segment k of `parts` closed polylines of n points each.
TG_HD inline tg_u32 tg_seg_end(tg_u32 k, tg_u32 n) {
    tg_u32 q = k / n;
    return q * n + (k % n + 1u) % n;
}

// Whether the `parts` closed polylines of n = len / parts points each in pts[0..len) are simple
// and disjoint (Rust `simple_polylines`). False for non-finite points.
TG_HD inline bool tg_simple_polylines(const tg_vec2* pts, tg_u32 len, tg_u32 parts,
                                      tg_validity_scratch* s) {
    tg_u32 n = len / parts;
    float longest = 0.0f;
    for (tg_u32 k = 0u; k < len; ++k) {
        longest = tg_max(longest, tg_dist(pts[k], pts[tg_seg_end(k, n)]));
    }
    if (!(longest > 0.0f && tg_is_finite(longest))) {
        return false;
    }
    tg_vec2* mids = s->mids;
    for (tg_u32 k = 0u; k < len; ++k) {
        tg_vec2 a = pts[k];
        tg_vec2 b = pts[tg_seg_end(k, n)];
        mids[k] = tg_v2(0.5f * (a.x + b.x), 0.5f * (a.y + b.y));
    }
    tg_grid grid = tg_grid_build(s->heads, s->buckets, s->next, s->cells, mids, len,
                                 0x1.028f5cp+0f * longest); // 1.01
    return tg_grid_for_pairs(grid, [&](tg_u32 k, tg_u32 m) -> bool {
        tg_u32 ek = tg_seg_end(k, n);
        tg_u32 em = tg_seg_end(m, n);
        if (ek == m || em == k) {
            return true;
        }
        return !tg_segments_intersect(pts[k], pts[ek], pts[m], pts[em]);
    });
}

// Whether the closed centerline pts[0..n) makes a valid track (Rust `is_valid`).
TG_HD inline bool tg_is_valid(const tg_vec2* pts, tg_u32 n, const tg_validity_consts& c,
                              tg_validity_scratch* s) {
    if (n < TG_MIN_POINTS) {
        return false;
    }
    for (tg_u32 i = 0u; i < n; ++i) {
        if (!(tg_is_finite(pts[i].x) && tg_is_finite(pts[i].y))) {
            return false;
        }
    }
    // 2. closed, even spacing; arc lengths for 5.
    float* arclen = s->arclen;
    float total = 0.0f;
    float shortest = tg_inf();
    float longest_centre = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        arclen[i] = total;
        float l = tg_dist(pts[i], i + 1u < n ? pts[i + 1u] : pts[0]);
        shortest = tg_min(shortest, l);
        longest_centre = tg_max(longest_centre, l);
        total += l;
    }
    float mean = total / (float)n;
    if (!(shortest >= 0x1.99999ap-3f * mean && longest_centre <= 2.5f * mean)) { // 0.2
        return false;
    }
    // 3. turning number and 4. turns.
    float turning = 0.0f;
    float max_curvature = 1.0f / ((1.0f - TG_VALIDITY_SLACK) * c.min_turn_radius_m);
    float hw = c.half_width_m;
    tg_vec2 a = pts[n - 1u];
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 p = pts[i];
        tg_vec2 b = i + 1u < n ? pts[i + 1u] : pts[0];
        float ux = p.x - a.x;
        float uy = p.y - a.y;
        float vx = b.x - p.x;
        float vy = b.y - p.y;
        float cross = ux * vy - uy * vx;
        float dot = ux * vx + uy * vy;
        turning += tg_atan2(cross, dot);
        if (!tg_turn_complies(a, p, b, dot, max_curvature)) {
            return false;
        }
        a = p;
    }
    if (tg_abs(tg_abs(turning) - TG_TAU) >= 0x1.99999ap-5f || tg_is_nan(turning)) { // 0.05
        return false;
    }
    // 5. thickness over pairs more than π·hw apart along the curve.
    float min_sep = 2.0f * (1.0f - TG_VALIDITY_SLACK) * hw;
    float min_sep2 = min_sep * min_sep;
    float neighbour_arc = TG_PI * hw;
    tg_u64 min_gap = tg_exempt_gap(neighbour_arc, longest_centre, n);
    bool thick = tg_for_close_pairs(pts, n, s->mids, 2.0f * hw, min_gap,
                                    [&](tg_u32 i, tg_u32 j) -> bool {
                                        float gap = arclen[j] - arclen[i];
                                        float arc = tg_min(gap, total - gap);
                                        return !(arc > neighbour_arc &&
                                                 tg_dist2(pts[i], pts[j]) < min_sep2);
                                    });
    if (!thick) {
        return false;
    }
    // 6. the centerline is simple, and 7. so are both borders and they do not meet.
    if (!tg_simple_polylines(pts, n, 1u, s)) {
        return false;
    }
    // Borders: outer = centre − σ·hw·left, inner = centre + σ·hw·left.
    float sigma = tg_orientation(pts, n);
    tg_vec2* border = s->border;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 nl = tg_left_normal(pts, n, i);
        tg_vec2 p = pts[i];
        border[i] = tg_v2(p.x - sigma * hw * nl.x, p.y - sigma * hw * nl.y);
        border[n + i] = tg_v2(p.x + sigma * hw * nl.x, p.y + sigma * hw * nl.y);
    }
    return tg_simple_polylines(border, 2u * n, 2u, s);
}

#endif // TG_TRACK_VALIDITY_CUH
