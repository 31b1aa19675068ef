// Validity of a track, decided on the plan-view centerline and its two borders: the twin of
// `src/track/validity.rs` (see its module doc for the seven conditions and the bounds behind
// each shortcut).
#ifndef TG_TRACK_VALIDITY_CUH
#define TG_TRACK_VALIDITY_CUH

#include "common/geom.cuh"
#include "track/chunks.cuh"
#include "track/geometry.cuh"
#include "track/resample.cuh"

// Relative slack of the thickness and turn-radius checks (Rust `validity::SLACK`, 0.02).
#define TG_VALIDITY_SLACK 0x1.47ae14p-6f

// Constants of the validity check (Rust `ValidityConsts`).
struct tg_validity_consts {
    float half_width_m;
    float min_turn_radius_m;
};

// Words of box scratch per centerline point (Rust `validity::KERNEL_BOX_WORDS`): lo.x, lo.y,
// hi.x, hi.y for each of the centre, the outer and the inner border. The Rust check also keeps
// boxes of blocks of two segments (`BOX_WORDS`); this twin tests the near gaps segment by segment,
// which gives the same all-pairs verdict.
#define TG_BOX_WORDS 12u

// One lane's scratch (Rust `ValidityScratch`) for n points: `arclen` n, `border` 2·n points,
// `seg_boxes` TG_BOX_WORDS·n words, `chunk_boxes` 2·ceil(n / TG_CHUNK) points.
struct tg_validity_scratch {
    float* arclen;
    tg_vec2* border;
    float* seg_boxes;
    tg_vec2* chunk_boxes;
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

// The boxes of the n segments of the closed polyline pts[0..n) (segment k joins point k to
// k + 1 mod n) into words[0..4n): the lo.x, lo.y, hi.x, hi.y arrays (Rust `segment_boxes`).
// Returns the largest squared segment length.
TG_HD inline float tg_segment_boxes(const tg_vec2* pts, tg_u32 n, float* words) {
    float longest2 = 0.0f;
    for (tg_u32 k = 0u; k < n; ++k) {
        tg_vec2 a = pts[k];
        tg_vec2 b = k + 1u < n ? pts[k + 1u] : pts[0];
        float lx = b.x < a.x ? b.x : a.x;
        float hx = b.x < a.x ? a.x : b.x;
        float ly = b.y < a.y ? b.y : a.y;
        float hy = b.y < a.y ? a.y : b.y;
        words[k] = lx;
        words[n + k] = ly;
        words[2u * n + k] = hx;
        words[3u * n + k] = hy;
        float dx = hx - lx;
        float dy = hy - ly;
        float l2 = dx * dx + dy * dy;
        if (l2 > longest2) {
            longest2 = l2;
        }
    }
    return longest2;
}

// Whether segment k of `a` meets segment (k + g) mod n of `b` for some k (g < n), boxes first
// (Rust `crossing_at_shift`).
TG_HD inline bool tg_crossing_at_shift(const tg_vec2* a, const float* aw, const tg_vec2* b,
                                       const float* bw, tg_u32 n, tg_u32 g) {
    for (tg_u32 k = 0u; k < n; ++k) {
        tg_u32 m = k + g < n ? k + g : k + g - n;
        bool meet = aw[2u * n + k] >= bw[m] && bw[2u * n + m] >= aw[k] &&
                    aw[3u * n + k] >= bw[n + m] && bw[3u * n + m] >= aw[n + k];
        if (meet && tg_segments_intersect(a[k], a[k + 1u < n ? k + 1u : 0u], b[m],
                                          b[m + 1u < n ? m + 1u : 0u])) {
            return true;
        }
    }
    return false;
}

// The thickness test's constants (Rust `Thickness`).
struct tg_thickness {
    const float* arclen;
    float total;
    float neighbour_arc;
    float min_sep2;
    tg_u64 min_gap;
};

// Whether points i < j, d2 apart squared, fail thickness (Rust `Thickness::fails`).
TG_HD inline bool tg_thickness_fails(const tg_thickness& t, tg_u32 i, tg_u32 j, float d2) {
    float gap = t.arclen[j] - t.arclen[i];
    float arc = tg_min(gap, t.total - gap);
    return arc > t.neighbour_arc && d2 < t.min_sep2;
}

// Conditions 5–7 on the centre pts[0..n) and its border (outer then inner): true when no pair
// fails (Rust `close_pairs_pass`; see there for which pairs are tested and why). Farther pairs
// go through the flat chunk scan, which visits the same pairs as the Rust sweep.
TG_HD inline bool tg_close_pairs_pass(const tg_vec2* pts, const tg_vec2* border, tg_u32 n, float hw,
                                      const tg_thickness& t, float* seg_boxes,
                                      tg_vec2* chunk_boxes) {
    const tg_vec2* lines[3] = {pts, border, border + n};
    float longest2[3];
    for (tg_u32 q = 0u; q < 3u; ++q) {
        longest2[q] = tg_segment_boxes(lines[q], n, seg_boxes + 4u * q * n);
    }
    float border_longest2 = tg_max(longest2[1], longest2[2]);
    if (!(longest2[0] > 0.0f && tg_is_finite(longest2[0])) ||
        !(border_longest2 > 0.0f && tg_is_finite(border_longest2))) {
        return false;
    }
    float longest = sqrtf(tg_max(longest2[0], border_longest2));
    float reach = 0x1.028f5cp+0f * (2.0f * hw + longest); // 1.01
    float mean = t.total / (float)n;
    tg_u64 near = tg_f32_to_u64(reach / mean);
    near = near > (tg_u64)n ? (tg_u64)n : near;
    near += TG_CHUNK;
    near = near > (tg_u64)n ? (tg_u64)n : near;
    tg_u64 half = n / 2u;
    tg_u64 thick_to = near < half ? near : half;
    for (tg_u64 g = t.min_gap + 1u; g <= thick_to; ++g) {
        for (tg_u32 i = 0u; i < n; ++i) {
            tg_u32 j = i + (tg_u32)g < n ? i + (tg_u32)g : i + (tg_u32)g - n;
            tg_u32 lo = i < j ? i : j;
            tg_u32 hi = i < j ? j : i;
            if (tg_thickness_fails(t, lo, hi, tg_dist2(pts[lo], pts[hi]))) {
                return false;
            }
        }
    }
    tg_u64 seg_near = near + 1u;
    tg_u64 same_to = seg_near < half ? seg_near : half;
    for (tg_u32 q = 0u; q < 3u; ++q) {
        const float* w = seg_boxes + 4u * q * n;
        for (tg_u64 g = 2u; g <= same_to; ++g) {
            if (tg_crossing_at_shift(lines[q], w, lines[q], w, n, (tg_u32)g)) {
                return false;
            }
        }
    }
    const float* ow = seg_boxes + 4u * n;
    const float* iw = seg_boxes + 8u * n;
    for (tg_u32 g = 0u; g < n; ++g) {
        bool near_shift = 2u * seg_near + 1u >= n || g <= seg_near || g >= n - seg_near;
        if (near_shift && tg_crossing_at_shift(lines[1], ow, lines[2], iw, n, g)) {
            return false;
        }
    }
    if (near >= half) {
        return true;
    }
    float reach2 = reach * reach;
    return tg_for_close_pairs(pts, n, chunk_boxes, reach, near, [&](tg_u32 i, tg_u32 j) -> bool {
        float d2 = tg_dist2(pts[i], pts[j]);
        if (!(d2 <= reach2)) {
            return true;
        }
        tg_u32 gap = j - i;
        tg_u32 cyclic = gap < n - gap ? gap : n - gap;
        if ((tg_u64)cyclic > t.min_gap && tg_thickness_fails(t, i, j, d2)) {
            return false;
        }
        tg_u32 ks[2] = {i == 0u ? n - 1u : i - 1u, i};
        tg_u32 ms[2] = {j == 0u ? n - 1u : j - 1u, j};
        const tg_u32 qa[5] = {0u, 1u, 2u, 1u, 2u};
        const tg_u32 qb[5] = {0u, 1u, 2u, 2u, 1u};
        for (tg_u32 x = 0u; x < 2u; ++x) {
            for (tg_u32 y = 0u; y < 2u; ++y) {
                tg_u32 k = ks[x];
                tg_u32 m = ms[y];
                tg_u32 d = k > m ? k - m : m - k;
                bool consecutive = (d < n - d ? d : n - d) <= 1u;
                for (tg_u32 c = 0u; c < 5u; ++c) {
                    if (qa[c] == qb[c] && consecutive) {
                        continue;
                    }
                    const tg_vec2* a = lines[qa[c]];
                    const tg_vec2* b = lines[qb[c]];
                    if (tg_segments_intersect(a[k], a[k + 1u < n ? k + 1u : 0u], b[m],
                                              b[m + 1u < n ? m + 1u : 0u])) {
                        return false;
                    }
                }
            }
        }
        return true;
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
    // 3. turning number (the segment directions' signed crossings of the +x axis; Rust
    // `axis_crossing`) and 4. turns.
    int winding = 0;
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
        winding += (uy < 0.0f && vy >= 0.0f && cross > 0.0f) ? 1 : 0;
        winding -= (uy >= 0.0f && vy < 0.0f && cross < 0.0f) ? 1 : 0;
        if (!tg_turn_complies(a, p, b, dot, max_curvature)) {
            return false;
        }
        a = p;
    }
    if (winding != 1 && winding != -1) {
        return false;
    }
    // 5. thickness, 6. the centerline simple, 7. both borders simple and disjoint.
    float sigma = tg_orientation(pts, n);
    tg_vec2* border = s->border;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 nl = tg_left_normal(pts, n, i);
        tg_vec2 p = pts[i];
        border[i] = tg_v2(p.x - sigma * hw * nl.x, p.y - sigma * hw * nl.y);
        border[n + i] = tg_v2(p.x + sigma * hw * nl.x, p.y + sigma * hw * nl.y);
    }
    float min_sep = 2.0f * (1.0f - TG_VALIDITY_SLACK) * hw;
    tg_thickness t;
    t.arclen = arclen;
    t.total = total;
    t.neighbour_arc = TG_PI * hw;
    t.min_sep2 = min_sep * min_sep;
    t.min_gap = tg_exempt_gap(TG_PI * hw, longest_centre, n);
    return tg_close_pairs_pass(pts, border, n, hw, t, s->seg_boxes, s->chunk_boxes);
}

#endif // TG_TRACK_VALIDITY_CUH
