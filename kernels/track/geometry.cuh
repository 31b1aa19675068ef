// Plan-view geometry shared by the track stages: the twin of `src/track/geometry.rs`.
#ifndef TG_TRACK_GEOMETRY_CUH
#define TG_TRACK_GEOMETRY_CUH

#include "common/geom.cuh"

// |a − b|.
TG_HD inline float tg_dist(tg_vec2 a, tg_vec2 b) {
    float dx = a.x - b.x;
    float dy = a.y - b.y;
    return sqrtf(dx * dx + dy * dy);
}

// |a − b|².
TG_HD inline float tg_dist2(tg_vec2 a, tg_vec2 b) {
    float dx = a.x - b.x;
    float dy = a.y - b.y;
    return dx * dx + dy * dy;
}

// Menger curvature of (a, b, c), 0 for a degenerate triangle.
TG_HD inline float tg_menger_curvature(tg_vec2 a, tg_vec2 b, tg_vec2 c) {
    float cross = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    float denom = tg_dist(a, b) * tg_dist(b, c) * tg_dist(c, a);
    if (denom > 0.0f) {
        return 2.0f * tg_abs(cross) / denom;
    }
    return 0.0f;
}

// Whether the Menger curvature of (a, b, c) exceeds k (true for NaN input).
TG_HD inline bool tg_curvature_exceeds(tg_vec2 a, tg_vec2 b, tg_vec2 c, float k) {
    float cross = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    float lhs = 4.0f * cross * cross;
    float rhs = k * k * (tg_dist2(a, b) * tg_dist2(b, c) * tg_dist2(c, a));
    return !(lhs <= rhs);
}

// Twice the signed area of the closed polygon pts[0..n).
TG_HD inline float tg_signed_area2(const tg_vec2* pts, tg_u32 n) {
    float a = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 p = pts[i];
        tg_vec2 q = i + 1u < n ? pts[i + 1u] : pts[0];
        a += p.x * q.y - q.x * p.y;
    }
    return a;
}

TG_HD inline float tg_orient(tg_vec2 a, tg_vec2 b, tg_vec2 c) {
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

TG_HD inline bool tg_on_segment_box(tg_vec2 p, tg_vec2 q, tg_vec2 r) {
    return r.x >= tg_min(p.x, q.x) && r.x <= tg_max(p.x, q.x) && r.y >= tg_min(p.y, q.y) &&
           r.y <= tg_max(p.y, q.y);
}

// Whether the closed segments ab and cd intersect (touching and collinear overlap count).
TG_HD inline bool tg_segments_intersect(tg_vec2 a, tg_vec2 b, tg_vec2 c, tg_vec2 d) {
    if (tg_max(a.x, b.x) < tg_min(c.x, d.x) || tg_max(c.x, d.x) < tg_min(a.x, b.x) ||
        tg_max(a.y, b.y) < tg_min(c.y, d.y) || tg_max(c.y, d.y) < tg_min(a.y, b.y)) {
        return false;
    }
    float o1 = tg_orient(a, b, c);
    float o2 = tg_orient(a, b, d);
    float o3 = tg_orient(c, d, a);
    float o4 = tg_orient(c, d, b);
    if (((o1 > 0.0f && o2 < 0.0f) || (o1 < 0.0f && o2 > 0.0f)) &&
        ((o3 > 0.0f && o4 < 0.0f) || (o3 < 0.0f && o4 > 0.0f))) {
        return true;
    }
    return (o1 == 0.0f && tg_on_segment_box(a, b, c)) || (o2 == 0.0f && tg_on_segment_box(a, b, d)) ||
           (o3 == 0.0f && tg_on_segment_box(c, d, a)) || (o4 == 0.0f && tg_on_segment_box(c, d, b));
}

#endif // TG_TRACK_GEOMETRY_CUH
