// Relaxation of a resampled centerline (separation, turn radius, spacing): the twin of
// `src/track/relax.rs` (see its module doc for the three moves).
//
// Each sweep is a Jacobi step: displacements are accumulated from the current positions into
// scratch, then applied. A lane's scratch is 2·n_max points: the displacements in [0, n), then
// the chunk boxes or the segment lengths and tightness flags in [n, 2·n).
#ifndef TG_TRACK_RELAX_CUH
#define TG_TRACK_RELAX_CUH

#include "common/geom.cuh"
#include "track/chunks.cuh"
#include "track/geometry.cuh"
#include "track/resample.cuh"

// Per-pipeline relaxation constants (Rust `RelaxConsts`, same field order).
struct tg_relax_consts {
    float separation_m;
    float converged_separation_m;
    float max_curvature;
    float smooth_curvature;
    float smoothing;
    float neighbour_arc_m;
};

// tg_relax_violation flags (Rust `TOO_TIGHT`, `TOO_CLOSE`).
#define TG_RELAX_TOO_TIGHT 1u
#define TG_RELAX_TOO_CLOSE 2u

// The index gap under which two points of a curve with mean `spacing` are neighbours
// (usize::MAX / 2 for a non-finite or huge ratio).
TG_HD inline tg_u64 tg_neighbour_gap(float neighbour_arc_m, float spacing) {
    float g = neighbour_arc_m / spacing;
    if (tg_is_finite(g) && g < 0x1.e848p+19f) { // 1.0e6
        return tg_f32_to_u64(ceilf(g));
    }
    return 0xffffffffffffffffull / 2u;
}

// Runs `sweeps` relaxation sweeps on the closed curve pts[0..n) with scratch disp[0..2·n); the
// separation pass runs only when `flags` has TG_RELAX_TOO_CLOSE (Rust `relax_sweeps`).
TG_HD inline void tg_relax_sweeps(tg_vec2* pts, tg_u32 n, const tg_relax_consts& c, tg_vec2* scratch,
                                  tg_u32 sweeps, tg_u32 flags) {
    if (n < 4u) {
        return;
    }
    tg_vec2* disp = scratch;
    tg_vec2* rest = scratch + n;
    for (tg_u32 sweep = 0u; sweep < sweeps; ++sweep) {
        for (tg_u32 i = 0u; i < n; ++i) {
            disp[i] = tg_v2(0.0f, 0.0f);
        }
        float sep2 = c.separation_m * c.separation_m;
        if ((flags & TG_RELAX_TOO_CLOSE) != 0u) {
            float spacing = tg_closed_length(pts, n) / (float)n;
            tg_u64 excl = tg_neighbour_gap(c.neighbour_arc_m, spacing);
            tg_for_close_pairs(pts, n, rest, c.separation_m, excl, [&](tg_u32 i, tg_u32 j) -> bool {
                if (tg_dist2(pts[i], pts[j]) < sep2) {
                    float d = tg_dist(pts[i], pts[j]);
                    if (d > 0.0f) {
                        float push = 0.5f * (c.separation_m - d) / d;
                        float vx = (pts[i].x - pts[j].x) * push;
                        float vy = (pts[i].y - pts[j].y) * push;
                        disp[i].x += vx;
                        disp[i].y += vy;
                        disp[j].x -= vx;
                        disp[j].y -= vy;
                    }
                }
                return true;
            });
        }
        // Segment lengths of the current positions, then the tightness flags.
        tg_vec2* lengths = rest;
        for (tg_u32 i = 0u; i < n; ++i) {
            lengths[i].x = tg_dist(pts[i], i + 1u < n ? pts[i + 1u] : pts[0]);
        }
        tg_vec2 a = pts[n - 1u];
        for (tg_u32 i = 0u; i < n; ++i) {
            tg_vec2 b = i + 1u < n ? pts[i + 1u] : pts[0];
            lengths[i].y = tg_curvature_exceeds(a, pts[i], b, c.smooth_curvature) ? 1.0f : 0.0f;
            a = pts[i];
        }
        a = pts[n - 1u];
        float la = lengths[n - 1u].x;
        bool smoothed = false;
        for (tg_u32 i = 0u; i < n; ++i) {
            tg_vec2 p = pts[i];
            tg_vec2 b = i + 1u < n ? pts[i + 1u] : pts[0];
            // A tight point gets the full gain, its neighbours half of it.
            float before = lengths[i == 0u ? n - 1u : i - 1u].y;
            float after = lengths[i + 1u < n ? i + 1u : 0u].y;
            float weight = tg_min(lengths[i].y + 0.5f * (before + after), 1.0f);
            if (weight > 0.0f) {
                smoothed = true;
                float g = c.smoothing * weight;
                float midx = 0.5f * (a.x + b.x);
                float midy = 0.5f * (a.y + b.y);
                disp[i].x += g * (midx - p.x);
                disp[i].y += g * (midy - p.y);
            }
            float lb = lengths[i].x;
            float arm = la + lb;
            if (arm > 0.0f) {
                float slide = 0.25f * (lb - la) / arm;
                disp[i].x += slide * (b.x - a.x);
                disp[i].y += slide * (b.y - a.y);
            }
            a = p;
            la = lb;
        }
        for (tg_u32 i = 0u; i < n; ++i) {
            pts[i].x += disp[i].x;
            pts[i].y += disp[i].y;
        }
        // Nothing smoothed and nothing pushed apart: the rest of the window would only even
        // out the spacing, so the lane stops here.
        if (!smoothed && (flags & TG_RELAX_TOO_CLOSE) == 0u) {
            break;
        }
    }
}

// What the closed curve pts[0..n) still violates: TG_RELAX_TOO_TIGHT | TG_RELAX_TOO_CLOSE, 0
// when converged; the separation test is deferred while the curve is too tight and check_close
// is false (Rust `violation`). `scratch` is 2·n points (the boxes use [n, 2·n)).
TG_HD inline tg_u32 tg_relax_violation(const tg_vec2* pts, tg_u32 n, const tg_relax_consts& c,
                                       tg_vec2* scratch, bool check_close) {
    if (n < 4u) {
        return 0u;
    }
    tg_u32 flags = 0u;
    tg_vec2 a = pts[n - 1u];
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 b = i + 1u < n ? pts[i + 1u] : pts[0];
        if (tg_curvature_exceeds(a, pts[i], b, c.max_curvature)) {
            flags |= TG_RELAX_TOO_TIGHT;
            break;
        }
        a = pts[i];
    }
    if (flags != 0u && !check_close) {
        return flags;
    }
    float total = 0.0f;
    float longest = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        float l = tg_dist(pts[i], i + 1u < n ? pts[i + 1u] : pts[0]);
        total += l;
        longest = tg_max(longest, l);
    }
    tg_u64 min_gap = tg_neighbour_gap(c.neighbour_arc_m, total / (float)n);
    if (flags == 0u) {
        // Schur's comparison theorem: only pairs more than π·R apart along the curve can be too
        // close once every turn radius is ≥ R (see relax.rs).
        tg_u64 schur = tg_neighbour_gap(TG_PI / c.max_curvature, longest);
        tg_u64 schur_gap = schur > 0u ? schur - 1u : 0u;
        if (schur_gap > min_gap) {
            min_gap = schur_gap;
        }
    }
    float converged2 = c.converged_separation_m * c.converged_separation_m;
    bool all_apart = tg_for_close_pairs(pts, n, scratch + n, c.converged_separation_m, min_gap,
                                        [&](tg_u32 i, tg_u32 j) -> bool {
                                            return tg_dist2(pts[i], pts[j]) >= converged2;
                                        });
    if (!all_apart) {
        flags |= TG_RELAX_TOO_CLOSE;
    }
    return flags;
}

#endif // TG_TRACK_RELAX_CUH
