// The hull generator's lane: the twin of `src/track/generators/hull.rs`.
#ifndef TG_TRACK_HULL_CUH
#define TG_TRACK_HULL_CUH

#include "track/generate.cuh"

// Parameters of tg_track_hull: the common part, then Rust `Hull`'s fields in order.
struct tg_hull_params {
    tg_generate_common c;
    tg_u32 n_points;
    float radius_m;
    float displacement;
    // 1 / (SOFTEN_MARGIN · min_turn_radius_m): the curvature the polygon is softened to.
    float max_curvature;
};
static_assert(sizeof(tg_hull_params) == 48, "tg_hull_params is 48 bytes");

// Insertion sort of pts[0..n) by x, then y (Rust's tuple `>`: the x order unless the x are
// equal, then the y order; NaN compares false).
TG_HD inline void tg_hull_sort_by_x(tg_vec2* pts, tg_u32 n) {
    for (tg_u32 i = 1u; i < n; ++i) {
        tg_u32 j = i;
        while (j > 0u) {
            tg_vec2 a = pts[j - 1u];
            tg_vec2 b = pts[j];
            bool greater = a.x != b.x ? a.x > b.x : a.y > b.y;
            if (!greater) {
                break;
            }
            pts[j - 1u] = b;
            pts[j] = a;
            j -= 1u;
        }
    }
}

TG_HD inline float tg_hull_cross(tg_vec2 o, tg_vec2 a, tg_vec2 b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// Andrew's monotone chain over the x-sorted pts[0..n): writes the counter-clockwise hull into
// hull (room for 2n points), returns its size; 0 for no points (where Rust's would panic).
TG_HD inline tg_u32 tg_hull_monotone_chain(const tg_vec2* pts, tg_u32 n, tg_vec2* hull) {
    if (n == 0u) {
        return 0u;
    }
    tg_u32 k = 0u;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 p = pts[i];
        while (k >= 2u && tg_hull_cross(hull[k - 2u], hull[k - 1u], p) <= 0.0f) {
            k -= 1u;
        }
        hull[k] = p;
        k += 1u;
    }
    tg_u32 lower = k + 1u;
    for (tg_u32 i = n - 1u; i-- > 0u;) {
        tg_vec2 p = pts[i];
        while (k >= lower && tg_hull_cross(hull[k - 2u], hull[k - 1u], p) <= 0.0f) {
            k -= 1u;
        }
        hull[k] = p;
        k += 1u;
    }
    return k - 1u;
}

// The convex hull of n_points random points in a disc, each edge split at a displaced midpoint,
// sampled by the closed Catmull–Rom spline into out[0..out_len) (10·n_points scratch words:
// points, hull, displaced polygon); returns the number of points written.
TG_HD inline tg_u32 tg_hull_lane(const tg_hull_params& p, tg_rng* rng, float* scratch,
                                 tg_vec2* out, tg_u32 out_len) {
    tg_u32 n = p.n_points;
    tg_vec2* pts = reinterpret_cast<tg_vec2*>(scratch);
    tg_vec2* hull = reinterpret_cast<tg_vec2*>(scratch + 2u * n);
    tg_vec2* poly = reinterpret_cast<tg_vec2*>(scratch + 6u * n);
    for (tg_u32 i = 0u; i < n; ++i) {
        float r = p.radius_m * 1.25f * sqrtf(tg_rng_unit(rng));
        tg_f32x2 sc = tg_sin_cos(TG_TAU * tg_rng_unit(rng));
        pts[i] = tg_v2(r * sc.b, r * sc.a);
    }
    tg_hull_sort_by_x(pts, n);
    tg_u32 h = tg_hull_monotone_chain(pts, n, hull);
    tg_u32 m = 0u;
    for (tg_u32 i = 0u; i < h; ++i) {
        tg_vec2 a = hull[i];
        tg_vec2 b = hull[(i + 1u) % h];
        poly[m] = a;
        m += 1u;
        float ex = b.x - a.x;
        float ey = b.y - a.y;
        // Outward normal of a counter-clockwise edge is (e.y, −e.x).
        float d = p.displacement * tg_rng_signed(rng);
        poly[m] = tg_v2(0.5f * (a.x + b.x) + d * ey, 0.5f * (a.y + b.y) - d * ex);
        m += 1u;
    }
    tg_soften_closed(poly, m, p.max_curvature, TG_SOFTEN_ROUNDS, tg_catmull_rom_segments());
    return tg_catmull_rom_closed(poly, m, out, out_len);
}

#endif // TG_TRACK_HULL_CUH
