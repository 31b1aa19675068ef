// The Voronoi generator's lane: the bit-exact host+device twin of
// `src/track/generators/voronoi.rs` (`Voronoi::run_lane`), with the same scratch layout.
//
// Sites in a disc → exact cells (the 16-gon clipped by bisector half-planes, edges labelled with
// the site across) of the sites a region takes, grown from the site nearest the centre through
// shared edges at least radius / 8 long → the region's outer boundary walked counter-clockwise
// across selected cells, resampled evenly → its turning smoothed by three box-filter passes and
// the curve rebuilt, closed, centred and counter-clockwise. See the Rust module for the method and its bounds.
#ifndef TG_TRACK_VORONOI_CUH
#define TG_TRACK_VORONOI_CUH

#include "common/geom.cuh"
#include "common/rng.cuh"
#include "track/generate.cuh"
#include "track/geometry.cuh"

// `tg_track_voronoi`'s parameters: the common part, then the Rust `Voronoi` fields.
struct tg_voronoi_params {
    tg_generate_common c;
    tg_u32 n_sites;
    tg_u32 n_cells;
    tg_u32 grid;
    float radius_m;
};
static_assert(sizeof(tg_voronoi_params) == 48, "tg_voronoi_params is 48 bytes");

// Largest spacing between consecutive output points, metres (5).
#define TG_VORONOI_MAX_STEP_M 0x1.4p+2f
// σ of the smoothing and the shortest shared edge the region grows through, fractions of
// radius_m (1/8).
#define TG_VORONOI_SMOOTH_FRAC 0x1p-3f
#define TG_VORONOI_NECK_FRAC 0x1p-3f
// Boundary edges shorter than this (squared, m²) write no points.
#define TG_VORONOI_TINY_EDGE2 1.0e-6f
// Margin of the test that skips a site too far to clip a cell, a fraction of the clip polygon's
// circumradius (1e-3).
#define TG_VORONOI_SKIP_SLACK 1.0e-3f
// Sites expected within the first clipping pass's distance: its square is this times
// radius_m² / n_sites (6).
#define TG_VORONOI_NEAR_AREAS 6.0f
// Below this ratio of cross to dot product a turning angle is their quotient (2^-12).
#define TG_VORONOI_STRAIGHT_RATIO 0x1p-12f
// Sides of the clip polygon and its circumradius over the disc's radius (1 / cos(π/16)).
#define TG_VORONOI_CLIP_SIDES 16u
#define TG_VORONOI_CLIP_SEC 1.0195912f
// The label of a cell edge on the clip polygon, and of a site without a slot.
#define TG_VORONOI_OUTSIDE 0xffffffffu
// Site states during the region's growth.
#define TG_VORONOI_FREE 0u
#define TG_VORONOI_CANDIDATE 1u
#define TG_VORONOI_SELECTED 2u

// The generator's derived sizes (Rust `Voronoi::{pixel_m, substeps, ...}`).
struct tg_voronoi_dims {
    float step_m;
    tg_u32 max_points;
    tg_u32 max_verts;
    tg_u32 stride;
    tg_u32 slots;
};

TG_HD inline tg_voronoi_dims tg_voronoi_dims_of(const tg_voronoi_params* p) {
    tg_voronoi_dims d;
    float pixel_m = 2.0f * p->radius_m / (float)p->grid;
    tg_u32 s = tg_f32_to_u32(ceilf(pixel_m / TG_VORONOI_MAX_STEP_M));
    s = s > 1u ? s : 1u;
    d.step_m = pixel_m / (float)s;
    d.max_points = 8u * p->grid * s;
    d.max_verts = TG_VORONOI_CLIP_SIDES + p->n_sites;
    d.stride = (d.max_verts + 7u) / 8u * 8u;
    tg_u32 slots = p->n_cells < p->n_sites ? p->n_cells : p->n_sites;
    d.slots = slots > 1u ? slots : 1u;
    return d;
}

// Half-width of the box filter, points.
TG_HD inline tg_u32 tg_voronoi_box_half(const tg_voronoi_params* p, const tg_voronoi_dims* d) {
    float sigma = TG_VORONOI_SMOOTH_FRAC * p->radius_m / d->step_m;
    tg_u32 h = tg_f32_to_u32(sigma);
    return h > 1u ? h : 1u;
}

// (sin x, cos x) as .a, .b: the Taylor polynomials of tg_voronoi_small_sin_cos.
TG_HD inline tg_f32x2 tg_voronoi_sin_cos_poly(float x) {
    float x2 = x * x;
    tg_f32x2 r;
    r.a = x * (1.0f - x2 / 6.0f * (1.0f - x2 / 20.0f * (1.0f - x2 / 42.0f)));
    r.b = 1.0f - x2 / 2.0f * (1.0f - x2 / 12.0f * (1.0f - x2 / 30.0f));
    return r;
}

// Sites uniform in the disc of radius r: radius r·sqrt(u), angle 2π v as the middle of its
// eighth of the circle, (2k + 1) π / 8, rotated by 2π (v − (2k + 1) / 16) through the Taylor
// polynomials (Rust `draw_sites`).
TG_HD inline void tg_voronoi_draw_sites(tg_rng* rng, float r, tg_vec2* sites, tg_u32 n) {
    // cos and sin of (2k + 1) π / 8 (the clip polygon's odd vertices).
    const float mid_cos[8] = {0.9238795f, 0.38268343f, -0.38268343f, -0.9238795f,
                              -0.9238795f, -0.38268343f, 0.38268343f, 0.9238795f};
    const float mid_sin[8] = {0.38268343f, 0.9238795f, 0.9238795f, 0.38268343f,
                              -0.38268343f, -0.9238795f, -0.9238795f, -0.38268343f};
    for (tg_u32 s = 0u; s < n; ++s) {
        float radius = r * sqrtf(tg_rng_unit(rng));
        float v = tg_rng_unit(rng);
        tg_u32 k = tg_f32_to_u32(v * 8.0f);
        k = k < 7u ? k : 7u;
        float mid = (float)(2u * k + 1u) / 16.0f;
        tg_f32x2 d = tg_voronoi_sin_cos_poly(TG_TAU * (v - mid));
        float s0 = mid_sin[k];
        float c0 = mid_cos[k];
        float sn = s0 * d.b + c0 * d.a;
        float cs = c0 * d.b - s0 * d.a;
        sites[s] = tg_v2(radius * cs, radius * sn);
    }
}

// The index of the site nearest the origin (the first on ties).
TG_HD inline tg_u32 tg_voronoi_nearest_to_origin(const tg_vec2* sites, tg_u32 n) {
    tg_u32 best = 0u;
    float best_d2 = tg_inf();
    for (tg_u32 s = 0u; s < n; ++s) {
        float d2 = sites[s].x * sites[s].x + sites[s].y * sites[s].y;
        if (d2 < best_d2) {
            best_d2 = d2;
            best = s;
        }
    }
    return best;
}

// The growing region's state in the lane's scratch (Rust `Region`): per site its state and
// slot, per slot its site and vertex count, and slots + 1 polygons of at most max_verts vertices
// and their edge labels, each stored in `stride` slots (max_verts rounded up to a multiple of 8,
// as the Rust stage, whose passes over a polygon run in blocks of 8; the first polygon is the
// clipping temporary).
struct tg_voronoi_region {
    tg_u32* state;
    tg_u32* slot_of;
    tg_u32* slot_site;
    tg_u32* counts;
    tg_vec2* verts;
    tg_u32* labels;
};

// (2 R + slack)² with R the largest distance from p to a vertex (Rust `reach_sq`).
TG_HD inline float tg_voronoi_reach_sq(const tg_vec2* verts, tg_u32 count, tg_vec2 p,
                                       float slack) {
    float r2 = 0.0f;
    for (tg_u32 k = 0u; k < count; ++k) {
        float dx = verts[k].x - p.x;
        float dy = verts[k].y - p.y;
        float d2 = dx * dx + dy * dy;
        r2 = d2 > r2 ? d2 : r2;
    }
    float reach = 2.0f * sqrtf(r2) + slack;
    return reach * reach;
}

// The side of v against the bisector of p (inside, <= 0) and q: (v - m) · a.
TG_HD inline float tg_voronoi_side(tg_vec2 v, float mx, float my, float ax, float ay) {
    return (v.x - mx) * ax + (v.y - my) * ay;
}

// The point where the edge u → v crosses the bisector (Rust `clip`'s `cut`).
TG_HD inline tg_vec2 tg_voronoi_cut(tg_vec2 u, tg_vec2 v, float mx, float my, float ax, float ay) {
    float su = tg_voronoi_side(u, mx, my, ax, ay);
    float sv = tg_voronoi_side(v, mx, my, ax, ay);
    float t = su / (su - sv);
    return tg_v2(u.x + (v.x - u.x) * t, u.y + (v.y - u.y) * t);
}

// Sutherland–Hodgman's loop (any pattern of sides) through (tv, tl) of capacity cap (Rust
// `clip_through`); returns the new count, or cap + 1 when it would exceed the capacity.
TG_HD inline tg_u32 tg_voronoi_clip_through(tg_vec2* verts, tg_u32* labels, tg_u32 count,
                                            float mx, float my, float ax, float ay, tg_u32 label,
                                            tg_vec2* tv, tg_u32* tl, tg_u32 cap) {
    tg_u32 w = 0u;
    for (tg_u32 k = 0u; k < count; ++k) {
        tg_vec2 u = verts[k];
        tg_vec2 v = verts[(k + 1u) % count];
        float su = tg_voronoi_side(u, mx, my, ax, ay);
        float sv = tg_voronoi_side(v, mx, my, ax, ay);
        if (su <= 0.0f) {
            if (w == cap) {
                return cap + 1u;
            }
            tv[w] = u;
            tl[w] = labels[k];
            w += 1u;
            if (sv > 0.0f) {
                float t = su / (su - sv);
                if (w == cap) {
                    return cap + 1u;
                }
                tv[w] = tg_v2(u.x + (v.x - u.x) * t, u.y + (v.y - u.y) * t);
                tl[w] = label;
                w += 1u;
            }
        } else if (sv <= 0.0f) {
            float t = su / (su - sv);
            if (w == cap) {
                return cap + 1u;
            }
            tv[w] = tg_v2(u.x + (v.x - u.x) * t, u.y + (v.y - u.y) * t);
            tl[w] = labels[k];
            w += 1u;
        }
    }
    for (tg_u32 k = 0u; k < w; ++k) {
        verts[k] = tv[k];
        labels[k] = tl[k];
    }
    return w;
}

// Clips the convex polygon (verts, labels; count vertices, capacity cap) to the half-plane of
// points at least as near p as q (the bisector edge labelled `label`); returns the new count
// and sets *changed, or returns cap + 1 when it would exceed the capacity. One cyclic run of
// outside vertices is replaced in place by the two crossing points, ordered as the general loop
// (through tv, tl) writes them; other patterns run that loop (Rust `clip`).
TG_HD inline tg_u32 tg_voronoi_clip(tg_vec2* verts, tg_u32* labels, tg_u32 count, tg_vec2 p,
                                    tg_vec2 q, tg_u32 label, tg_vec2* tv, tg_u32* tl, tg_u32 cap,
                                    bool* changed) {
    *changed = false;
    if (count == 0u) {
        return 0u;
    }
    float ax = q.x - p.x;
    float ay = q.y - p.y;
    float mx = (p.x + q.x) * 0.5f;
    float my = (p.y + q.y) * 0.5f;
    // Vertex 0's state runs to t1, the other state to t2, vertex 0's again to the end; a vertex
    // of the other state after t2 makes a second run.
    bool in0 = tg_voronoi_side(verts[0], mx, my, ax, ay) <= 0.0f;
    tg_u32 t1 = 1u;
    while (t1 < count && (tg_voronoi_side(verts[t1], mx, my, ax, ay) <= 0.0f) == in0) {
        t1 += 1u;
    }
    if (t1 == count) {
        if (in0) {
            return count;
        }
        *changed = true;
        return 0u;
    }
    *changed = true;
    tg_u32 t2 = t1 + 1u;
    while (t2 < count && (tg_voronoi_side(verts[t2], mx, my, ax, ay) <= 0.0f) != in0) {
        t2 += 1u;
    }
    tg_u32 t3 = t2 + 1u;
    while (t3 < count && (tg_voronoi_side(verts[t3], mx, my, ax, ay) <= 0.0f) == in0) {
        t3 += 1u;
    }
    if (t3 < count) {
        return tg_voronoi_clip_through(verts, labels, count, mx, my, ax, ay, label, tv, tl, cap);
    }
    tg_u32 leave = in0 ? t1 : t2 % count;
    tg_u32 enter = in0 ? t2 % count : t1;
    tg_u32 last = enter == 0u ? count - 1u : enter - 1u;
    tg_u32 first = leave == 0u ? count - 1u : leave - 1u;
    tg_vec2 into = tg_voronoi_cut(verts[first], verts[leave], mx, my, ax, ay);
    tg_vec2 back = tg_voronoi_cut(verts[last], verts[enter], mx, my, ax, ay);
    tg_u32 back_label = labels[last];
    if (!in0) {
        // Vertex 0 is outside: back, the inside run, into.
        tg_u32 kept = first + 1u - enter;
        if (kept + 2u > cap) {
            return cap + 1u;
        }
        for (tg_u32 k = 0u; k < kept; ++k) {
            verts[1u + k] = verts[enter + k];
            labels[1u + k] = labels[enter + k];
        }
        verts[0] = back;
        labels[0] = back_label;
        verts[kept + 1u] = into;
        labels[kept + 1u] = label;
        return kept + 2u;
    }
    // Vertex 0 is inside: the vertices before the outside run, into, back, those after it.
    tg_u32 after = count - 1u - last;
    tg_u32 w = leave + 2u + after;
    if (w > cap) {
        return cap + 1u;
    }
    if (leave + 2u > last + 1u) {
        // The run is one vertex: the vertices after it move one slot up (copied from the end).
        for (tg_u32 k = after; k > 0u; --k) {
            verts[leave + 1u + k] = verts[last + k];
            labels[leave + 1u + k] = labels[last + k];
        }
    } else {
        for (tg_u32 k = 0u; k < after; ++k) {
            verts[leave + 2u + k] = verts[last + 1u + k];
            labels[leave + 2u + k] = labels[last + 1u + k];
        }
    }
    verts[leave] = into;
    labels[leave] = label;
    verts[leave + 1u] = back;
    labels[leave + 1u] = back_label;
    return w;
}

// Selects site s into polygon slot `slot`: computes its cell (the 16-gon clipped by every other
// site's bisector, near sites first) there and marks the free sites across its edges at least
// NECK_FRAC · radius_m long as candidates. Returns false when a polygon overflowed.
TG_HD inline bool tg_voronoi_select(const tg_voronoi_params* p, const tg_voronoi_dims* d,
                                    const tg_vec2* sites, tg_u32 s, tg_u32 slot,
                                    tg_voronoi_region* r) {
    const float clip_cos[16] = {1.0f, 0.9238795f, 0.70710677f, 0.38268343f,
                                0.0f, -0.38268343f, -0.70710677f, -0.9238795f,
                                -1.0f, -0.9238795f, -0.70710677f, -0.38268343f,
                                0.0f, 0.38268343f, 0.70710677f, 0.9238795f};
    const float clip_sin[16] = {0.0f, 0.38268343f, 0.70710677f, 0.9238795f,
                                1.0f, 0.9238795f, 0.70710677f, 0.38268343f,
                                0.0f, -0.38268343f, -0.70710677f, -0.9238795f,
                                -1.0f, -0.9238795f, -0.70710677f, -0.38268343f};
    tg_u32 mv = d->max_verts;
    tg_vec2* tv = r->verts;
    tg_u32* tl = r->labels;
    tg_vec2* verts = r->verts + (slot + 1u) * d->stride;
    tg_u32* labels = r->labels + (slot + 1u) * d->stride;
    float rc = p->radius_m * TG_VORONOI_CLIP_SEC;
    for (tg_u32 k = 0u; k < TG_VORONOI_CLIP_SIDES; ++k) {
        verts[k] = tg_v2(rc * clip_cos[k], rc * clip_sin[k]);
        labels[k] = TG_VORONOI_OUTSIDE;
    }
    tg_u32 count = TG_VORONOI_CLIP_SIDES;
    // Two passes in site order, the near sites (squared distance at most near2) first; a site
    // farther than 2 R + slack cannot cut the polygon and is skipped (Rust `Voronoi::cell`).
    // reach2 is (2 R + slack)² of the current polygon (fresh) or of an earlier, larger one.
    tg_vec2 ps = sites[s];
    float near2 = TG_VORONOI_NEAR_AREAS * p->radius_m * p->radius_m / (float)p->n_sites;
    float slack = TG_VORONOI_SKIP_SLACK * rc;
    float reach2 = tg_inf();
    bool fresh = false;
    for (int pass = 0; pass < 2; ++pass) {
        bool near = pass == 0;
        for (tg_u32 j = 0u; j < p->n_sites; ++j) {
            float ax = sites[j].x - ps.x;
            float ay = sites[j].y - ps.y;
            float d2 = ax * ax + ay * ay;
            if (j == s || (d2 <= near2) != near) {
                continue;
            }
            // The near sites clip without the skip test (nearly all cut the polygon; a clip
            // that finds every vertex inside leaves it as it is, so the test only saves work).
            if (!near && d2 > reach2) {
                continue;
            }
            if (!near && !fresh) {
                reach2 = tg_voronoi_reach_sq(verts, count, ps, slack);
                fresh = true;
                if (d2 > reach2) {
                    continue;
                }
            }
            bool changed;
            count = tg_voronoi_clip(verts, labels, count, ps, sites[j], j, tv, tl, mv, &changed);
            if (count > mv) {
                return false;
            }
            if (changed) {
                fresh = false;
            }
        }
    }
    r->state[s] = TG_VORONOI_SELECTED;
    r->slot_of[s] = slot;
    r->slot_site[slot] = s;
    r->counts[slot] = count;
    float neck = TG_VORONOI_NECK_FRAC * p->radius_m;
    float neck2 = neck * neck;
    for (tg_u32 e = 0u; e < count; ++e) {
        tg_u32 l = labels[e];
        if (l == TG_VORONOI_OUTSIDE || r->state[l] != TG_VORONOI_FREE) {
            continue;
        }
        tg_vec2 a = verts[e];
        tg_vec2 b = verts[(e + 1u) % count];
        float dx = b.x - a.x;
        float dy = b.y - a.y;
        if (dx * dx + dy * dy >= neck2) {
            r->state[l] = TG_VORONOI_CANDIDATE;
        }
    }
    return true;
}

// Grows the region from `seed`, each step adding a uniformly chosen candidate (in site order);
// stops early when none is left. Returns the number of selected cells, or 0 when a polygon
// overflowed.
TG_HD inline tg_u32 tg_voronoi_grow_region(const tg_voronoi_params* p, const tg_voronoi_dims* d,
                                           tg_rng* rng, const tg_vec2* sites, tg_u32 seed,
                                           tg_voronoi_region* r) {
    tg_u32 n = p->n_sites;
    for (tg_u32 c = 0u; c < n; ++c) {
        r->state[c] = TG_VORONOI_FREE;
        r->slot_of[c] = TG_VORONOI_OUTSIDE;
    }
    if (!tg_voronoi_select(p, d, sites, seed, 0u, r)) {
        return 0u;
    }
    tg_u32 k = 1u;
    while (k < d->slots) {
        tg_u32 count = 0u;
        for (tg_u32 c = 0u; c < n; ++c) {
            if (r->state[c] == TG_VORONOI_CANDIDATE) {
                count += 1u;
            }
        }
        if (count == 0u) {
            break;
        }
        tg_u32 pick = tg_rng_below(rng, count);
        tg_u32 chosen = 0u;
        tg_u32 seen = 0u;
        for (tg_u32 c = 0u; c < n; ++c) {
            if (r->state[c] == TG_VORONOI_CANDIDATE) {
                if (seen == pick) {
                    chosen = c;
                    break;
                }
                seen += 1u;
            }
        }
        if (!tg_voronoi_select(p, d, sites, chosen, k, r)) {
            return 0u;
        }
        k += 1u;
    }
    return k;
}

TG_HD inline bool tg_voronoi_boundary(const tg_voronoi_region* r, tg_u32 l) {
    return l == TG_VORONOI_OUTSIDE || r->state[l] != TG_VORONOI_SELECTED;
}

// Walks the region's outer boundary from the lowest start vertex of a boundary edge (then the
// leftmost, then the first in slot and edge order), writing the start vertex of each boundary
// edge at least TINY_EDGE2 long into `poly` (capacity cap). Returns the number of vertices, or 0
// when the walk fails or the outline has more than cap vertices.
TG_HD inline tg_u32 tg_voronoi_trace(const tg_voronoi_dims* d, const tg_voronoi_region* r,
                                     tg_u32 k, tg_vec2* poly, tg_u32 cap) {
    tg_u32 mv = d->stride;
    const tg_vec2* verts = r->verts + mv;
    const tg_u32* labels = r->labels + mv;
    bool found = false;
    tg_u32 sa = 0u;
    tg_u32 se = 0u;
    tg_vec2 low = tg_v2(0.0f, 0.0f);
    tg_u32 edges = 0u;
    for (tg_u32 slot = 0u; slot < k; ++slot) {
        tg_u32 c = r->counts[slot];
        edges += c;
        for (tg_u32 e = 0u; e < c; ++e) {
            tg_vec2 v = verts[slot * mv + e];
            bool lower = v.y < low.y || (v.y == low.y && v.x < low.x);
            if (tg_voronoi_boundary(r, labels[slot * mv + e]) && (!found || lower)) {
                found = true;
                sa = slot;
                se = e;
                low = v;
            }
        }
    }
    if (!found) {
        return 0u;
    }
    tg_u32 a = sa;
    tg_u32 e = se;
    tg_u32 written = 0u;
    for (tg_u32 it = 0u; it < edges; ++it) {
        tg_u32 ca = r->counts[a];
        tg_vec2 p0 = verts[a * mv + e];
        tg_vec2 p1 = verts[a * mv + (e + 1u) % ca];
        float dx = p1.x - p0.x;
        float dy = p1.y - p0.y;
        if (dx * dx + dy * dy >= TG_VORONOI_TINY_EDGE2) {
            if (written == cap) {
                return 0u;
            }
            poly[written] = p0;
            written += 1u;
        }
        // The next boundary edge around the end vertex: cross into selected cells.
        e = (e + 1u) % ca;
        tg_u32 hops = 0u;
        while (!tg_voronoi_boundary(r, labels[a * mv + e])) {
            tg_u32 b = r->slot_of[labels[a * mv + e]];
            tg_u32 site = r->slot_site[a];
            tg_u32 cb = r->counts[b];
            tg_u32 f = cb;
            for (tg_u32 g = 0u; g < cb; ++g) {
                if (labels[b * mv + g] == site) {
                    f = g;
                    break;
                }
            }
            if (f == cb) {
                return 0u;
            }
            a = b;
            e = (f + 1u) % cb;
            hops += 1u;
            if (hops > k) {
                return 0u;
            }
        }
        if (a == sa && e == se) {
            return written;
        }
    }
    return 0u;
}

// Resamples the closed polygon (n vertices) at m = ceil(length / step_m) points evenly spaced
// along it into `out` (capacity cap); returns m, or 0 when m is below 3 or above cap.
TG_HD inline tg_u32 tg_voronoi_resample(const tg_voronoi_dims* d, const tg_vec2* poly, tg_u32 n,
                                        tg_vec2* out, tg_u32 cap) {
    if (n < 3u) {
        return 0u;
    }
    float length = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_vec2 q = poly[(i + 1u) % n];
        float dx = q.x - poly[i].x;
        float dy = q.y - poly[i].y;
        length += sqrtf(dx * dx + dy * dy);
    }
    tg_u32 m = tg_f32_to_u32(ceilf(length / d->step_m));
    if (m < 3u || m > cap) {
        return 0u;
    }
    float h = length / (float)m;
    tg_u32 i = 0u;
    float s0 = 0.0f;
    float dx = poly[1].x - poly[0].x;
    float dy = poly[1].y - poly[0].y;
    float len = sqrtf(dx * dx + dy * dy);
    for (tg_u32 j = 0u; j < m; ++j) {
        float s = (float)j * h;
        while (s >= s0 + len && i + 1u < n) {
            s0 += len;
            i += 1u;
            tg_vec2 q = poly[(i + 1u) % n];
            dx = q.x - poly[i].x;
            dy = q.y - poly[i].y;
            len = sqrtf(dx * dx + dy * dy);
        }
        float f = (s - s0) / len;
        f = f < 1.0f ? f : 1.0f;
        out[j] = tg_v2(poly[i].x + dx * f, poly[i].y + dy * f);
    }
    return m;
}

// tg_atan2(cross, dot) bit for bit, the quotient when 0 <= |cross| < 2^-12 · dot (where
// tg_atan2 returns it too; Rust `turn_angle`).
TG_HD inline float tg_voronoi_turn_angle(float cross, float dot) {
    if (fabsf(cross) < dot * TG_VORONOI_STRAIGHT_RATIO) {
        return cross / dot;
    }
    return tg_atan2(cross, dot);
}

// (sin x, cos x) as .a, .b: Taylor polynomials for |x| <= 0.25, tg_sin_cos otherwise (Rust
// `small_sin_cos`).
TG_HD inline tg_f32x2 tg_voronoi_small_sin_cos(float x) {
    if (fabsf(x) > 0.25f) {
        return tg_sin_cos(x);
    }
    float x2 = x * x;
    tg_f32x2 r;
    r.a = x * (1.0f - x2 / 6.0f * (1.0f - x2 / 20.0f * (1.0f - x2 / 42.0f)));
    r.b = 1.0f - x2 / 2.0f * (1.0f - x2 / 12.0f * (1.0f - x2 / 30.0f));
    return r;
}

// One pass of the cyclic box filter of half-width `half` (2 · half < m) over scalars, as a
// running sum: the first window summed in a fixed order, then one sample added and one removed
// per step, in three index ranges that differ in where the added and removed samples wrap.
TG_HD inline void tg_voronoi_box_filter(const float* src, tg_u32 m, tg_u32 half, float* dst) {
    float w = 1.0f / (float)(2u * half + 1u);
    float sum = src[0];
    for (tg_u32 o = 1u; o <= half; ++o) {
        sum += src[m - o] + src[o];
    }
    for (tg_u32 i = 0u; i < half; ++i) {
        dst[i] = sum * w;
        sum += src[i + half + 1u] - src[i + m - half];
    }
    for (tg_u32 i = half; i + half + 1u < m; ++i) {
        dst[i] = sum * w;
        sum += src[i + half + 1u] - src[i - half];
    }
    for (tg_u32 i = m - half - 1u; i < m; ++i) {
        dst[i] = sum * w;
        sum += src[i + half + 1u - m] - src[i - half];
    }
}

// Smooths the closed curve (m evenly spaced points) through its turning (Rust `smooth_turning`):
// the turning angles between consecutive chords are filtered by three box passes through `turn`
// and `tmp`, the curve is rebuilt from the first point and the first chord's heading with the
// mean chord length, and the closing gap is removed linearly in the point index.
TG_HD inline void tg_voronoi_smooth_turning(tg_vec2* pts, tg_u32 m, tg_u32 half, float* turn,
                                            float* tmp) {
    float length = 0.0f;
    tg_vec2 back = pts[m - 1u];
    tg_vec2 here = pts[0];
    for (tg_u32 i = 0u; i < m; ++i) {
        tg_vec2 ahead = i + 1u < m ? pts[i + 1u] : pts[0];
        float ux = here.x - back.x;
        float uy = here.y - back.y;
        float vx = ahead.x - here.x;
        float vy = ahead.y - here.y;
        turn[i] = tg_voronoi_turn_angle(ux * vy - uy * vx, ux * vx + uy * vy);
        length += sqrtf(vx * vx + vy * vy);
        back = here;
        here = ahead;
    }
    float h = length / (float)m;
    tg_vec2 start = pts[0];
    float heading = tg_atan2(pts[1].y - start.y, pts[1].x - start.x);
    tg_voronoi_box_filter(turn, m, half, tmp);
    tg_voronoi_box_filter(tmp, m, half, turn);
    tg_voronoi_box_filter(turn, m, half, tmp);
    // The heading's direction, rotated by each smoothed turn.
    tg_f32x2 sc = tg_sin_cos(heading);
    float s = sc.a;
    float c = sc.b;
    tg_vec2 p = start;
    for (tg_u32 i = 0u; i < m; ++i) {
        if (i > 0u) {
            tg_f32x2 d = tg_voronoi_small_sin_cos(tmp[i]);
            float c2 = c * d.b - s * d.a;
            s = s * d.b + c * d.a;
            c = c2;
        }
        pts[i] = p;
        p = tg_v2(p.x + h * c, p.y + h * s);
    }
    float gx = p.x - start.x;
    float gy = p.y - start.y;
    for (tg_u32 i = 0u; i < m; ++i) {
        float f = (float)i / (float)m;
        pts[i] = tg_v2(pts[i].x - gx * f, pts[i].y - gy * f);
    }
}

// Centres the curve on its point mean and makes it counter-clockwise.
TG_HD inline void tg_voronoi_finish(tg_vec2* curve, tg_u32 m) {
    float cx = 0.0f;
    float cy = 0.0f;
    for (tg_u32 i = 0u; i < m; ++i) {
        cx += curve[i].x;
        cy += curve[i].y;
    }
    cx /= (float)m;
    cy /= (float)m;
    for (tg_u32 i = 0u; i < m; ++i) {
        curve[i] = tg_v2(curve[i].x - cx, curve[i].y - cy);
    }
    if (tg_signed_area2(curve, m) < 0.0f) {
        for (tg_u32 i = 0u, j = m - 1u; i < j; ++i, --j) {
            tg_vec2 t = curve[i];
            curve[i] = curve[j];
            curve[j] = t;
        }
    }
}

// One env's outline into `out` (at least max_points slots); returns the number of points.
// `scratch` / `scratch_u32` are the env's generator scratch, laid out as the Rust stage's:
// f32 sites (2n), cell vertices (2 · (slots + 1) · stride), the boundary polygon (2 ·
// max_points; later the turning angles and their temporary, max_points each);
// u32 site states (n), site slots (n), slot sites (slots), slot vertex counts (slots), cell edge
// labels ((slots + 1) · stride).
TG_HD inline tg_u32 tg_voronoi_lane(const tg_voronoi_params* p, tg_rng* rng, float* scratch,
                                    tg_u32* scratch_u32, tg_vec2* out) {
    tg_u32 n = p->n_sites;
    if (n == 0u || p->grid < 4u) {
        return 0u;
    }
    tg_voronoi_dims d = tg_voronoi_dims_of(p);
    tg_vec2* sites = (tg_vec2*)scratch;
    tg_voronoi_region r;
    r.verts = (tg_vec2*)(scratch + 2u * n);
    float* words = scratch + 2u * n + 2u * (d.slots + 1u) * d.stride;
    r.state = scratch_u32;
    r.slot_of = r.state + n;
    r.slot_site = r.slot_of + n;
    r.counts = r.slot_site + d.slots;
    r.labels = r.counts + d.slots;

    tg_voronoi_draw_sites(rng, p->radius_m, sites, n);
    tg_u32 seed = tg_voronoi_nearest_to_origin(sites, n);
    tg_u32 k = tg_voronoi_grow_region(p, &d, rng, sites, seed, &r);
    if (k == 0u) {
        return 0u;
    }
    // The boundary polygon, then (once resampled) the turning angles and their temporary.
    tg_vec2* poly = (tg_vec2*)words;
    tg_u32 n_poly = tg_voronoi_trace(&d, &r, k, poly, d.max_points);
    tg_u32 m = tg_voronoi_resample(&d, poly, n_poly, out, d.max_points);
    if (m == 0u) {
        return 0u;
    }
    tg_u32 half = tg_voronoi_box_half(p, &d);
    if ((m - 1u) / 2u < half) {
        half = (m - 1u) / 2u;
    }
    tg_voronoi_smooth_turning(out, m, half, words, words + d.max_points);
    tg_voronoi_finish(out, m);
    return m;
}

#endif // TG_TRACK_VORONOI_CUH
