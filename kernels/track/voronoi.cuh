// The Voronoi generator's lane: the bit-exact host+device twin of
// `src/track/generators/voronoi.rs` (`Voronoi::run_lane`), with the same scratch layout.
//
// Sites in a disc → nearest-site pixel labels → a region grown through adjacent cells → a
// cleaned pixel mask (closing, opening, largest component, pinches, holes; `raster.cuh`) → its
// crack-traced outline → three box-filter passes, centred and counter-clockwise. See the Rust
// module for the method and its bounds.
#ifndef TG_TRACK_VORONOI_CUH
#define TG_TRACK_VORONOI_CUH

#include "common/geom.cuh"
#include "common/rng.cuh"
#include "track/generate.cuh"
#include "track/geometry.cuh"
#include "track/raster.cuh"

// `tg_track_voronoi`'s parameters: the common part, then the Rust `Voronoi` fields.
struct tg_voronoi_params {
    tg_generate_common c;
    tg_u32 n_sites;
    tg_u32 n_cells;
    tg_u32 grid;
    float radius_m;
};
static_assert(sizeof(tg_voronoi_params) == 48, "tg_voronoi_params is 48 bytes");

// Largest spacing between consecutive output points, metres (2.5).
#define TG_VORONOI_MAX_STEP_M 0x1.4p+1f
// Half-size of the morphological square and σ of the smoothing, fractions of radius_m (1/8).
#define TG_VORONOI_MORPH_FRAC 0x1p-3f
#define TG_VORONOI_SMOOTH_FRAC 0x1p-3f
// The label of a pixel outside the clipped disc.
#define TG_VORONOI_OUTSIDE 0xffffffffu

// The generator's derived sizes (Rust `Voronoi::{pixel_m, substeps, ...}`).
struct tg_voronoi_dims {
    float pixel_m;
    tg_u32 substeps;
    tg_u32 max_edges;
    tg_u32 max_points;
    tg_u32 work_len;
};

TG_HD inline tg_voronoi_dims tg_voronoi_dims_of(const tg_voronoi_params* p) {
    tg_voronoi_dims d;
    d.pixel_m = 2.0f * p->radius_m / (float)p->grid;
    tg_u32 s = tg_f32_to_u32(ceilf(d.pixel_m / TG_VORONOI_MAX_STEP_M));
    d.substeps = s > 1u ? s : 1u;
    d.max_edges = 8u * p->grid;
    d.max_points = d.max_edges * d.substeps;
    tg_u32 area = p->grid * p->grid;
    d.work_len = area > 2u * d.max_points ? area : 2u * d.max_points;
    return d;
}

// Half-size of the morphological square, pixels.
TG_HD inline tg_u32 tg_voronoi_morph_px(const tg_voronoi_params* p, const tg_voronoi_dims* d) {
    return tg_f32_to_u32(TG_VORONOI_MORPH_FRAC * p->radius_m / d->pixel_m + 0.5f);
}

// Half-width of the box filter, points.
TG_HD inline tg_u32 tg_voronoi_box_half(const tg_voronoi_params* p, const tg_voronoi_dims* d) {
    float step_m = d->pixel_m / (float)d->substeps;
    float sigma = TG_VORONOI_SMOOTH_FRAC * p->radius_m / step_m;
    tg_u32 h = tg_f32_to_u32(sigma);
    return h > 1u ? h : 1u;
}

// Sites uniform in the disc of radius r.
TG_HD inline void tg_voronoi_draw_sites(tg_rng* rng, float r, tg_vec2* sites, tg_u32 n) {
    for (tg_u32 s = 0u; s < n; ++s) {
        float radius = r * sqrtf(tg_rng_unit(rng));
        tg_f32x2 sc = tg_sin_cos(TG_TAU * tg_rng_unit(rng));
        sites[s] = tg_v2(radius * sc.b, radius * sc.a);
    }
}

// The nearest-site label of every pixel (OUTSIDE outside the clipped disc); `xs` receives the
// pixel centres' x and `best` one row of squared distances. Ties go to the lower site index.
TG_HD inline void tg_voronoi_label_pixels(const tg_voronoi_params* p, const tg_voronoi_dims* d,
                                          const tg_vec2* sites, float* xs, float* best,
                                          tg_u32* labels) {
    tg_u32 g = p->grid;
    float h = d->pixel_m;
    float clip = p->radius_m - 1.5f * h;
    float clip2 = clip * clip;
    for (tg_u32 i = 0u; i < g; ++i) {
        xs[i] = -p->radius_m + ((float)i + 0.5f) * h;
    }
    for (tg_u32 j = 0u; j < g; ++j) {
        tg_u32* row = labels + j * g;
        float y = -p->radius_m + ((float)j + 0.5f) * h;
        for (tg_u32 i = 0u; i < g; ++i) {
            best[i] = tg_inf();
        }
        for (tg_u32 s = 0u; s < p->n_sites; ++s) {
            float dy = y - sites[s].y;
            float dy2 = dy * dy;
            for (tg_u32 i = 0u; i < g; ++i) {
                float dx = xs[i] - sites[s].x;
                float d2 = dx * dx + dy2;
                bool nearer = d2 < best[i];
                best[i] = nearer ? d2 : best[i];
                row[i] = nearer ? s : row[i];
            }
        }
        for (tg_u32 i = 0u; i < g; ++i) {
            if (xs[i] * xs[i] + y * y > clip2) {
                row[i] = TG_VORONOI_OUTSIDE;
            }
        }
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

TG_HD inline void tg_voronoi_link(float* adj, tg_u32 n, tg_u32 a, tg_u32 b) {
    if (a != TG_VORONOI_OUTSIDE && b != TG_VORONOI_OUTSIDE && a != b) {
        adj[a * n + b] = 1.0f;
        adj[b * n + a] = 1.0f;
    }
}

// The symmetric cell adjacency matrix (1 where two cells share a pixel edge).
TG_HD inline void tg_voronoi_adjacency(const tg_u32* labels, tg_u32 g, tg_u32 n, float* adj) {
    for (tg_u32 q = 0u; q < n * n; ++q) {
        adj[q] = 0.0f;
    }
    for (tg_u32 j = 0u; j < g; ++j) {
        for (tg_u32 i = 0u; i < g; ++i) {
            tg_u32 l = labels[j * g + i];
            if (i + 1u < g) {
                tg_voronoi_link(adj, n, l, labels[j * g + i + 1u]);
            }
            if (j + 1u < g) {
                tg_voronoi_link(adj, n, l, labels[(j + 1u) * g + i]);
            }
        }
    }
}

// Whether cell c is unselected and adjacent to a selected cell.
TG_HD inline bool tg_voronoi_is_candidate(const float* selected, const float* adj, tg_u32 n, tg_u32 c) {
    if (selected[c] != 0.0f) {
        return false;
    }
    for (tg_u32 s = 0u; s < n; ++s) {
        if (selected[s] != 0.0f && adj[s * n + c] != 0.0f) {
            return true;
        }
    }
    return false;
}

// Grows a connected set of n_cells cells from `seed`, each step adding a uniformly chosen
// candidate (in index order); stops early when none is left.
TG_HD inline void tg_voronoi_grow_region(tg_rng* rng, const float* adj, tg_u32 n, tg_u32 seed,
                                         tg_u32 n_cells, float* selected) {
    for (tg_u32 c = 0u; c < n; ++c) {
        selected[c] = 0.0f;
    }
    selected[seed] = 1.0f;
    tg_u32 steps = n_cells < n ? n_cells : n;
    for (tg_u32 step = 1u; step < steps; ++step) {
        tg_u32 count = 0u;
        for (tg_u32 c = 0u; c < n; ++c) {
            if (tg_voronoi_is_candidate(selected, adj, n, c)) {
                count += 1u;
            }
        }
        if (count == 0u) {
            return;
        }
        tg_u32 pick = tg_rng_below(rng, count);
        tg_u32 seen = 0u;
        for (tg_u32 c = 0u; c < n; ++c) {
            if (tg_voronoi_is_candidate(selected, adj, n, c)) {
                if (seen == pick) {
                    selected[c] = 1.0f;
                    break;
                }
                seen += 1u;
            }
        }
    }
}

TG_HD inline bool tg_voronoi_inside(const float* mask, tg_i32 g, tg_i32 x, tg_i32 y) {
    return x >= 0 && y >= 0 && x < g && y < g &&
           mask[(tg_u32)y * (tg_u32)g + (tg_u32)x] == TG_RASTER_INSIDE;
}

// The pixels around a corner (cx, cy), counter-clockwise from north-east.
TG_HD inline bool tg_voronoi_quadrant(const float* mask, tg_i32 g, tg_i32 cx, tg_i32 cy, tg_u32 q) {
    if (q == 0u) {
        return tg_voronoi_inside(mask, g, cx, cy);
    }
    if (q == 1u) {
        return tg_voronoi_inside(mask, g, cx - 1, cy);
    }
    if (q == 2u) {
        return tg_voronoi_inside(mask, g, cx - 1, cy - 1);
    }
    return tg_voronoi_inside(mask, g, cx, cy - 1);
}

// Crack-follows the mask's outline counter-clockwise (interior on the left) from the
// bottom-left corner of the first inside pixel, writing `substeps` points per pixel edge in
// metres. Returns the number of points, or 0 if the outline is longer than max_edges or the mask
// is empty.
TG_HD inline tg_u32 tg_voronoi_trace(const tg_voronoi_params* p, const tg_voronoi_dims* d,
                                     const float* mask, tg_vec2* curve) {
    const tg_i32 dir_x[4] = {1, 0, -1, 0};
    const tg_i32 dir_y[4] = {0, 1, 0, -1};
    tg_u32 pixels = p->grid * p->grid;
    tg_u32 first = pixels;
    for (tg_u32 q = 0u; q < pixels; ++q) {
        if (mask[q] == TG_RASTER_INSIDE) {
            first = q;
            break;
        }
    }
    if (first == pixels) {
        return 0u;
    }
    tg_i32 g = (tg_i32)p->grid;
    tg_i32 sx = (tg_i32)(first % p->grid);
    tg_i32 sy = (tg_i32)(first / p->grid);
    float h = d->pixel_m;
    tg_u32 s = d->substeps;
    float sub = h / (float)s;
    tg_i32 cx = sx;
    tg_i32 cy = sy;
    tg_u32 dir = 0u;
    tg_u32 written = 0u;
    for (tg_u32 edge = 0u; edge < d->max_edges; ++edge) {
        float x0 = -p->radius_m + (float)cx * h;
        float y0 = -p->radius_m + (float)cy * h;
        tg_i32 dx = dir_x[dir];
        tg_i32 dy = dir_y[dir];
        for (tg_u32 k = 0u; k < s; ++k) {
            float t = (float)k * sub;
            curve[written] = tg_v2(x0 + t * (float)dx, y0 + t * (float)dy);
            written += 1u;
        }
        cx += dx;
        cy += dy;
        bool ahead_left = tg_voronoi_quadrant(mask, g, cx, cy, dir);
        bool ahead_right = tg_voronoi_quadrant(mask, g, cx, cy, (dir + 3u) % 4u);
        if (ahead_left && ahead_right) {
            dir = (dir + 3u) % 4u;
        } else if (!ahead_left) {
            dir = (dir + 1u) % 4u;
        }
        if (cx == sx && cy == sy && dir == 0u) {
            return written;
        }
    }
    return 0u;
}

// One pass of the cyclic box filter of half-width `half` (< m), summed in a fixed order.
TG_HD inline void tg_voronoi_box_filter(const tg_vec2* src, tg_u32 m, tg_u32 half, tg_vec2* dst) {
    float w = 1.0f / (float)(2u * half + 1u);
    for (tg_u32 i = 0u; i < m; ++i) {
        float sx = src[i].x;
        float sy = src[i].y;
        for (tg_u32 o = 1u; o <= half; ++o) {
            tg_vec2 a = src[(i + m - o) % m];
            tg_vec2 b = src[(i + o) % m];
            sx += a.x + b.x;
            sy += a.y + b.y;
        }
        dst[i] = tg_v2(sx * w, sy * w);
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
// f32 sites (2n), adjacency (n·n), selection flags (n), two rows (g, g), mask (g·g), work;
// u32 pixel labels, then the flood-fill queue (g·g).
TG_HD inline tg_u32 tg_voronoi_lane(const tg_voronoi_params* p, tg_rng* rng, float* scratch,
                                    tg_u32* scratch_u32, tg_vec2* out) {
    tg_u32 n = p->n_sites;
    tg_u32 g = p->grid;
    if (n == 0u || g < 4u) {
        return 0u;
    }
    tg_voronoi_dims d = tg_voronoi_dims_of(p);
    tg_vec2* sites = (tg_vec2*)scratch;
    float* adj = scratch + 2u * n;
    float* selected = adj + n * n;
    float* row = selected + n;
    float* xs = row + g;
    float* mask = xs + g;
    float* work = mask + g * g;

    tg_voronoi_draw_sites(rng, p->radius_m, sites, n);
    tg_u32* labels = scratch_u32;
    tg_voronoi_label_pixels(p, &d, sites, xs, row, labels);
    tg_u32 seed = tg_voronoi_nearest_to_origin(sites, n);
    tg_voronoi_adjacency(labels, g, n, adj);
    tg_voronoi_grow_region(rng, adj, n, seed, p->n_cells, selected);
    for (tg_u32 q = 0u; q < g * g; ++q) {
        tg_u32 l = labels[q];
        mask[q] = (l != TG_VORONOI_OUTSIDE && selected[l] != 0.0f) ? TG_RASTER_INSIDE
                                                                   : TG_RASTER_EMPTY;
    }

    tg_u32 k = tg_voronoi_morph_px(p, &d);
    float* tmp = work;
    tg_raster_morph(mask, tmp, row, g, k, true);
    tg_raster_morph(mask, tmp, row, g, k, false);
    tg_raster_morph(mask, tmp, row, g, k, false);
    tg_raster_morph(mask, tmp, row, g, k, true);
    tg_raster_clear_border(mask, g);
    tg_u32* queue = scratch_u32;
    tg_raster_keep_largest(mask, queue, g);
    tg_raster_fill_pinches(mask, g);
    tg_raster_fill_holes(mask, queue, g);

    tg_vec2* curve = (tg_vec2*)work;
    tg_u32 m = tg_voronoi_trace(p, &d, mask, curve);
    if (m < 3u) {
        return 0u;
    }
    tg_u32 half = tg_voronoi_box_half(p, &d);
    if ((m - 1u) / 2u < half) {
        half = (m - 1u) / 2u;
    }
    tg_voronoi_box_filter(curve, m, half, out);
    tg_voronoi_box_filter(out, m, half, curve);
    tg_voronoi_box_filter(curve, m, half, out);
    tg_voronoi_finish(out, m);
    return m;
}

#endif // TG_TRACK_VORONOI_CUH
