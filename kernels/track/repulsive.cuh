// The repulsive-curve generator's lanes: the bit-exact host+device twin of
// `src/track/generators/repulsive.rs` (`Repulsive::run_lane`, the set-up, and
// `Repulsive::window_lane`, one window of the flow), with the same scratch layout.
//
// The flow state lives in the env's generator scratch between windows exactly as in Rust:
// f32: 8 padded arrays of n + 8 words (xs, ys, txs, tys, ws, ms, fxs, fys), edge lengths (n), a
// 2n temporary, the obstacle discs (2·n_obstacles), the spring rest length; u32: the obstacle
// count, the steps taken. See the Rust module for the energy, the discretisation and the fixed
// summation order of the pair loop that this file repeats.
#ifndef TG_TRACK_REPULSIVE_CUH
#define TG_TRACK_REPULSIVE_CUH

#include "common/geom.cuh"
#include "common/rng.cuh"
#include "track/generate.cuh"
#include "track/geometry.cuh"

// `tg_track_repulsive` / `tg_track_repulsive_window`'s parameters: the common part, then the
// Rust `Repulsive` fields.
struct tg_repulsive_params {
    tg_generate_common c;
    tg_u32 n_points;
    tg_u32 max_iters;
    tg_u32 n_obstacles;
    float radius_m;
    float obstacle_radius_m;
    float length_factor;
    float half_width_m;
    tg_u32 pad;
};
static_assert(sizeof(tg_repulsive_params) == 64, "tg_repulsive_params is 64 bytes");

// The Rust module's constants (decimal values in the comments).
#define TG_REP_LANES 8u
#define TG_REP_STEPS_PER_WINDOW 8u
#define TG_REP_MODES 4u
#define TG_REP_DEPTH 0x1.666666p-1f          // 0.7
#define TG_REP_START_LEN 0x1.e66666p-1f      // 0.95
#define TG_REP_BISECT 12u
#define TG_REP_OBSTACLE_TRIES 16u
#define TG_REP_HARD_HW 0x1.8p+0f             // 1.5
#define TG_REP_SOFT_HW 0x1p+1f               // 2.0
#define TG_REP_SEP_HW 0x1.333334p+2f         // 4.8
#define TG_REP_SEP_UNITS 0x1.b33334p+0f      // 1.7
#define TG_REP_SEP_ARC 0x1.333334p-1f        // 0.6
#define TG_REP_OBSTACLE_CLEAR 0x1.4p+0f      // 1.25
#define TG_REP_STEP 0x1p-1f                  // 0.5
#define TG_REP_MAX_MOVE 0x1.99999ap-4f       // 0.1
#define TG_REP_CONVERGED 0x1.eb851ep-6f      // 0.03
#define TG_REP_K_TP 0x1.99999ap-4f           // 0.1
#define TG_REP_K_SEP 0x1.733334p+1f          // 2.9
#define TG_REP_K_BAR 1.0f
#define TG_REP_K_SPRING 1.0f
#define TG_REP_K_BEND 0x1.666666p-2f         // 0.35
#define TG_REP_K_LENGTH 0x1.99999ap-5f       // 0.05
#define TG_REP_MAX_REST 0x1.8p+0f            // 1.5
#define TG_REP_SMOOTH_PASSES 4u
#define TG_REP_TINY 0x1.0c6f7ap-20f         // 1.0e-6 (floor of r² and of edge lengths)
#define TG_REP_FAR 0x1.e848p+19f             // 1.0e6

// Per-lane constants, in segment units (Rust `Consts`), and the target length in metres.
struct tg_rep_consts {
    tg_u32 n;
    float r;
    float ro;
    float hw;
    float hard;
    float soft;
    float dsep;
    float inv_dsep2;
    tg_u32 tp_gap;
    tg_u32 sep_gap;
    float k_tp;
    float max_move;
    float target_m;
};

// Rust `(x.ceil() as usize).clamp(1, hi)`.
TG_HD inline tg_u32 tg_rep_gap(float x, tg_u32 hi) {
    tg_u32 g = tg_f32_to_u32(ceilf(x));
    if (g < 1u) {
        g = 1u;
    }
    return g > hi ? hi : g;
}

TG_HD inline tg_rep_consts tg_rep_consts_of(const tg_repulsive_params* p) {
    tg_u32 n = p->n_points;
    float hw_m = p->half_width_m;
    float soft_m = TG_REP_SOFT_HW * hw_m;
    float dsep_m = TG_REP_SEP_HW * hw_m;
    float room_m = tg_max(p->radius_m - soft_m, 0.0f);
    float packing_m = TG_PI * room_m * room_m / dsep_m;
    float target_m = tg_min(p->length_factor * TG_TAU * p->radius_m, packing_m);
    float seg = target_m / (float)n;
    float unit = dsep_m / TG_REP_SEP_UNITS / seg;
    float dsep = dsep_m / seg;
    tg_rep_consts c;
    c.n = n;
    c.r = p->radius_m / seg;
    c.ro = p->obstacle_radius_m / seg;
    c.hw = hw_m / seg;
    c.hard = TG_REP_HARD_HW * hw_m / seg;
    c.soft = soft_m / seg;
    c.dsep = dsep;
    c.inv_dsep2 = 1.0f / (dsep * dsep);
    c.tp_gap = tg_rep_gap(unit, n / 2u);
    c.sep_gap = tg_rep_gap(TG_REP_SEP_ARC * dsep, n / 2u);
    c.k_tp = TG_REP_K_TP * unit * unit * unit;
    c.max_move = TG_REP_MAX_MOVE * unit;
    c.target_m = target_m;
    return c;
}

// The lane's views of its scratch (Rust `Work`, the obstacles and the loop state).
struct tg_rep_work {
    float* xs;
    float* ys;
    float* txs;
    float* tys;
    float* ws;
    float* ms;
    float* fxs;
    float* fys;
    float* len;
    float* tmp;
    tg_vec2* obstacles;
    float* state;
};

TG_HD inline tg_rep_work tg_rep_views(const tg_repulsive_params* p, float* scratch) {
    tg_u32 n = p->n_points;
    tg_u32 np = n + TG_REP_LANES;
    tg_rep_work w;
    w.xs = scratch;
    w.ys = w.xs + np;
    w.txs = w.ys + np;
    w.tys = w.txs + np;
    w.ws = w.tys + np;
    w.ms = w.ws + np;
    w.fxs = w.ms + np;
    w.fys = w.fxs + np;
    w.len = w.fys + np;
    w.tmp = w.len + n;
    w.obstacles = (tg_vec2*)(w.tmp + 2u * n);
    w.state = w.tmp + 2u * n + 2u * p->n_obstacles;
    return w;
}

// (i + 1) mod n, (i − 1) mod n.
TG_HD inline tg_u32 tg_rep_next(tg_u32 i, tg_u32 n) {
    return i + 1u == n ? 0u : i + 1u;
}
TG_HD inline tg_u32 tg_rep_prev(tg_u32 i, tg_u32 n) {
    return i == 0u ? n - 1u : i - 1u;
}
// (i + g) mod n and (i − g) mod n for g ≤ n (Rust `around`, in that order).
TG_HD inline tg_u32 tg_rep_up(tg_u32 i, tg_u32 g, tg_u32 n) {
    return i + g >= n ? i + g - n : i + g;
}
TG_HD inline tg_u32 tg_rep_down(tg_u32 i, tg_u32 g, tg_u32 n) {
    return i >= g ? i - g : i + n - g;
}

// Squared distance from p to the segment a b, and the segment parameter of the nearest point.
TG_HD inline tg_f32x2 tg_rep_segment_dist2(tg_vec2 p, tg_vec2 a, tg_vec2 b) {
    float ex = b.x - a.x;
    float ey = b.y - a.y;
    float e2 = ex * ex + ey * ey;
    float t = 0.0f;
    if (e2 > 0.0f) {
        t = tg_clamp(((p.x - a.x) * ex + (p.y - a.y) * ey) / e2, 0.0f, 1.0f);
    }
    float qx = a.x + t * ex - p.x;
    float qy = a.y + t * ey - p.y;
    tg_f32x2 out = {qx * qx + qy * qy, t};
    return out;
}

// The start curve at depth m (radius scale r_out); returns its length.
TG_HD inline float tg_rep_place(const tg_rep_work* w, tg_u32 n, float r_out, float m) {
    float rho = r_out / (1.0f + m * TG_REP_DEPTH);
    for (tg_u32 i = 0u; i < n; ++i) {
        float rr = rho * (1.0f + m * w->ws[i]);
        w->xs[i] = rr * w->txs[i];
        w->ys[i] = rr * w->tys[i];
    }
    float total = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 j = tg_rep_next(i, n);
        float dx = w->xs[j] - w->xs[i];
        float dy = w->ys[j] - w->ys[i];
        total += sqrtf(dx * dx + dy * dy);
    }
    return total;
}

// Writes the star-shaped start curve into xs, ys (txs, tys, ws as temporaries).
TG_HD inline void tg_rep_initial_curve(tg_rng* rng, const tg_rep_consts* c, const tg_rep_work* w) {
    tg_u32 n = c->n;
    float amp[TG_REP_MODES];
    float phase[TG_REP_MODES];
    float amp_sum = 0.0f;
    for (tg_u32 k = 0u; k < TG_REP_MODES; ++k) {
        float u = tg_rng_unit(rng);
        amp[k] = u * u + 0x1.99999ap-5f; // 0.05
        phase[k] = TG_TAU * tg_rng_unit(rng);
        amp_sum += amp[k];
    }
    for (tg_u32 k = 0u; k < TG_REP_MODES; ++k) {
        amp[k] *= TG_REP_DEPTH / amp_sum;
    }
    for (tg_u32 i = 0u; i < n; ++i) {
        float t = TG_TAU * (float)i / (float)n;
        tg_f32x2 sc = tg_sin_cos(t);
        w->txs[i] = sc.b;
        w->tys[i] = sc.a;
        float wave = 0.0f;
        for (tg_u32 k = 0u; k < TG_REP_MODES; ++k) {
            wave += amp[k] * tg_sin_cos((float)(k + 2u) * t + phase[k]).b;
        }
        w->ws[i] = wave;
    }
    float want = TG_REP_START_LEN * (float)n;
    float circle = 2.0f * (float)n * tg_sin_cos(TG_PI / (float)n).a;
    float r_out = tg_max(tg_min(c->r - c->soft, want / circle), 0.0f);
    float lo = 0.0f;
    float hi = 1.0f;
    if (tg_rep_place(w, n, r_out, 1.0f) > want) {
        for (tg_u32 b = 0u; b < TG_REP_BISECT; ++b) {
            float mid = 0.5f * (lo + hi);
            if (tg_rep_place(w, n, r_out, mid) > want) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }
    tg_rep_place(w, n, r_out, hi);
}

// Places up to n_slots obstacle centres by bounded rejection; returns how many.
TG_HD inline tg_u32 tg_rep_place_obstacles(tg_rng* rng, const tg_rep_consts* c, const tg_rep_work* w,
                                           tg_vec2* obstacles, tg_u32 n_slots) {
    tg_u32 n = c->n;
    float from_curve = c->ro + TG_REP_OBSTACLE_CLEAR * c->soft;
    float apart = 2.0f * (c->ro + c->hw);
    tg_u32 placed = 0u;
    for (tg_u32 slot = 0u; slot < n_slots; ++slot) {
        for (tg_u32 attempt = 0u; attempt < TG_REP_OBSTACLE_TRIES; ++attempt) {
            float rad = tg_max(c->r - c->ro, 0.0f) * sqrtf(tg_rng_unit(rng));
            tg_f32x2 sc = tg_sin_cos(TG_TAU * tg_rng_unit(rng));
            tg_vec2 p = tg_v2(rad * sc.b, rad * sc.a);
            bool clear_of_others = true;
            for (tg_u32 q = 0u; q < placed && clear_of_others; ++q) {
                float dx = p.x - obstacles[q].x;
                float dy = p.y - obstacles[q].y;
                clear_of_others = dx * dx + dy * dy >= apart * apart;
            }
            bool clear_of_curve = true;
            for (tg_u32 i = 0u; i < n && clear_of_curve; ++i) {
                tg_u32 j = tg_rep_next(i, n);
                tg_vec2 a = tg_v2(w->xs[i], w->ys[i]);
                tg_vec2 b = tg_v2(w->xs[j], w->ys[j]);
                clear_of_curve = tg_rep_segment_dist2(p, a, b).a >= from_curve * from_curve;
            }
            if (clear_of_others && clear_of_curve) {
                obstacles[placed] = p;
                placed += 1u;
                break;
            }
        }
    }
    return placed;
}

// Edge lengths, vertex tangents, dual lengths; clears the forces. Returns the curve length.
TG_HD inline float tg_rep_geometry(const tg_rep_consts* c, const tg_rep_work* w) {
    tg_u32 n = c->n;
    float total = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 j = tg_rep_next(i, n);
        float dx = w->xs[j] - w->xs[i];
        float dy = w->ys[j] - w->ys[i];
        float l = sqrtf(dx * dx + dy * dy);
        w->len[i] = l;
        total += l;
    }
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 a = tg_rep_prev(i, n);
        tg_u32 b = tg_rep_next(i, n);
        float tx = w->xs[b] - w->xs[a];
        float ty = w->ys[b] - w->ys[a];
        float l = sqrtf(tx * tx + ty * ty);
        if (l > 0.0f) {
            tx = tx / l;
            ty = ty / l;
        } else {
            tx = 1.0f;
            ty = 0.0f;
        }
        w->txs[i] = tx;
        w->tys[i] = ty;
        w->ws[i] = 0.5f * (w->len[a] + w->len[i]);
        w->ms[i] = w->ws[i];
        w->fxs[i] = 0.0f;
        w->fys[i] = 0.0f;
    }
    return total;
}

// Tangent-point and separation forces over the pairs j > i, eight lanes at a time (lane k takes
// j = start + k), each row's lane sums added in the fixed tree order of the Rust code.
TG_HD inline void tg_rep_pair_forces(const tg_rep_consts* c, const tg_rep_work* w) {
    tg_u32 n = c->n;
    float k_sep = TG_REP_K_SEP / c->dsep;
    for (tg_u32 i = 0u; i < n; ++i) {
        float xi = w->xs[i];
        float yi = w->ys[i];
        float txi = w->txs[i];
        float tyi = w->tys[i];
        float wi = w->ws[i];
        for (tg_u32 g = 1u; g <= c->tp_gap; ++g) {
            w->ws[tg_rep_up(i, g, n)] = 0.0f;
            w->ws[tg_rep_down(i, g, n)] = 0.0f;
        }
        for (tg_u32 g = 1u; g <= c->sep_gap; ++g) {
            w->ms[tg_rep_up(i, g, n)] = 0.0f;
            w->ms[tg_rep_down(i, g, n)] = 0.0f;
        }
        float ax[TG_REP_LANES];
        float ay[TG_REP_LANES];
        for (tg_u32 k = 0u; k < TG_REP_LANES; ++k) {
            ax[k] = 0.0f;
            ay[k] = 0.0f;
        }
        for (tg_u32 start = i + 1u; start < n; start += TG_REP_LANES) {
            for (tg_u32 k = 0u; k < TG_REP_LANES; ++k) {
                tg_u32 j = start + k;
                float dx = xi - w->xs[j];
                float dy = yi - w->ys[j];
                float r2 = tg_max(dx * dx + dy * dy, TG_REP_TINY);
                float inv2 = 1.0f / r2;
                float inv4 = inv2 * inv2;
                float ca = txi * dy - tyi * dx;
                float cb = w->txs[j] * dy - w->tys[j] * dx;
                float s2 = 2.0f * inv4;
                float s4 = 4.0f * inv4 * inv2 * (ca * ca + cb * cb);
                float gx = s2 * (ca * -tyi + cb * -w->tys[j]) - s4 * dx;
                float gy = s2 * (ca * txi + cb * w->txs[j]) - s4 * dy;
                float tp = c->k_tp * wi * w->ws[j];
                float sep = k_sep * wi * w->ms[j] * tg_max(1.0f - r2 * c->inv_dsep2, 0.0f);
                float px = sep * dx - tp * gx;
                float py = sep * dy - tp * gy;
                ax[k] += px;
                ay[k] += py;
                w->fxs[j] -= px;
                w->fys[j] -= py;
            }
        }
        tg_u32 gaps = c->tp_gap > c->sep_gap ? c->tp_gap : c->sep_gap;
        for (tg_u32 g = 1u; g <= gaps; ++g) {
            tg_u32 js[2] = {tg_rep_up(i, g, n), tg_rep_down(i, g, n)};
            for (tg_u32 s = 0u; s < 2u; ++s) {
                tg_u32 j = js[s];
                float dual = 0.5f * (w->len[tg_rep_prev(j, n)] + w->len[j]);
                w->ws[j] = dual;
                w->ms[j] = dual;
            }
        }
        w->fxs[i] += ((ax[0] + ax[1]) + (ax[2] + ax[3])) + ((ax[4] + ax[5]) + (ax[6] + ax[7]));
        w->fys[i] += ((ay[0] + ay[1]) + (ay[2] + ay[3])) + ((ay[4] + ay[5]) + (ay[6] + ay[7]));
    }
}

// Edge springs toward `rest` (length and spacing).
TG_HD inline void tg_rep_spring_forces(const tg_rep_consts* c, const tg_rep_work* w, float rest) {
    tg_u32 n = c->n;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 j = tg_rep_next(i, n);
        float l = tg_max(w->len[i], TG_REP_TINY);
        float f = TG_REP_K_SPRING * (l - rest) / l;
        float fx = f * (w->xs[j] - w->xs[i]);
        float fy = f * (w->ys[j] - w->ys[i]);
        w->fxs[i] += fx;
        w->fys[i] += fy;
        w->fxs[j] -= fx;
        w->fys[j] -= fy;
    }
}

// Quadratic barriers: points near the wall, edges near an obstacle.
TG_HD inline void tg_rep_barrier_forces(const tg_rep_consts* c, const tg_rep_work* w,
                                        const tg_vec2* obstacles, tg_u32 n_obs) {
    tg_u32 n = c->n;
    for (tg_u32 i = 0u; i < n; ++i) {
        float x = w->xs[i];
        float y = w->ys[i];
        float d = sqrtf(x * x + y * y);
        float s = c->r - d;
        if (s < c->soft && d > 0.0f) {
            float g = TG_REP_K_BAR * (c->soft - s) / d;
            w->fxs[i] -= g * x;
            w->fys[i] -= g * y;
        }
    }
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 j = tg_rep_next(i, n);
        tg_vec2 a = tg_v2(w->xs[i], w->ys[i]);
        tg_vec2 b = tg_v2(w->xs[j], w->ys[j]);
        for (tg_u32 q = 0u; q < n_obs; ++q) {
            tg_vec2 o = obstacles[q];
            tg_f32x2 dt = tg_rep_segment_dist2(o, a, b);
            float t = dt.b;
            float d = sqrtf(dt.a);
            float s = d - c->ro;
            if (s < c->soft && d > 0.0f) {
                float qx = a.x + t * (b.x - a.x) - o.x;
                float qy = a.y + t * (b.y - a.y) - o.y;
                float g = TG_REP_K_BAR * (c->soft - s) / d;
                w->fxs[i] += (1.0f - t) * g * qx;
                w->fys[i] += (1.0f - t) * g * qy;
                w->fxs[j] += t * g * qx;
                w->fys[j] += t * g * qy;
            }
        }
    }
}

// TG_REP_SMOOTH_PASSES passes of the cyclic [¼ ½ ¼] filter over the forces.
TG_HD inline void tg_rep_smooth_forces(const tg_rep_consts* c, const tg_rep_work* w) {
    tg_u32 n = c->n;
    for (tg_u32 pass = 0u; pass < TG_REP_SMOOTH_PASSES; ++pass) {
        for (tg_u32 i = 0u; i < n; ++i) {
            tg_u32 a = tg_rep_prev(i, n);
            tg_u32 b = tg_rep_next(i, n);
            w->tmp[2u * i] = 0.25f * (w->fxs[a] + w->fxs[b]) + 0.5f * w->fxs[i];
            w->tmp[2u * i + 1u] = 0.25f * (w->fys[a] + w->fys[b]) + 0.5f * w->fys[i];
        }
        for (tg_u32 i = 0u; i < n; ++i) {
            w->fxs[i] = w->tmp[2u * i];
            w->fys[i] = w->tmp[2u * i + 1u];
        }
    }
}

// Moves every point by its clamped displacement plus bending, projects it out of the hard zones
// (points, then edges), and returns the largest distance a point moved.
TG_HD inline float tg_rep_step(const tg_rep_consts* c, const tg_rep_work* w, const tg_vec2* obstacles,
                               tg_u32 n_obs) {
    tg_u32 n = c->n;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 a = tg_rep_prev(i, n);
        tg_u32 b = tg_rep_next(i, n);
        w->tmp[2u * i] = TG_REP_K_BEND * (0.5f * (w->xs[a] + w->xs[b]) - w->xs[i]);
        w->tmp[2u * i + 1u] = TG_REP_K_BEND * (0.5f * (w->ys[a] + w->ys[b]) - w->ys[i]);
    }
    float wall = c->r - c->hard;
    float keep = c->ro + c->hard;
    float moved = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        float dx = TG_REP_STEP * w->fxs[i] + w->tmp[2u * i];
        float dy = TG_REP_STEP * w->fys[i] + w->tmp[2u * i + 1u];
        float m = sqrtf(dx * dx + dy * dy);
        if (m > c->max_move) {
            dx *= c->max_move / m;
            dy *= c->max_move / m;
        }
        float x = w->xs[i] + dx;
        float y = w->ys[i] + dy;
        float d = sqrtf(x * x + y * y);
        if (d > wall) {
            x *= wall / d;
            y *= wall / d;
        }
        for (tg_u32 q = 0u; q < n_obs; ++q) {
            tg_vec2 o = obstacles[q];
            float ox = x - o.x;
            float oy = y - o.y;
            float od = sqrtf(ox * ox + oy * oy);
            if (od < keep && od > 0.0f) {
                x = o.x + ox * (keep / od);
                y = o.y + oy * (keep / od);
            }
        }
        float mx = x - w->xs[i];
        float my = y - w->ys[i];
        moved = tg_max(moved, sqrtf(mx * mx + my * my));
        w->xs[i] = x;
        w->ys[i] = y;
    }
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 j = tg_rep_next(i, n);
        for (tg_u32 q = 0u; q < n_obs; ++q) {
            tg_vec2 o = obstacles[q];
            tg_vec2 a = tg_v2(w->xs[i], w->ys[i]);
            tg_vec2 b = tg_v2(w->xs[j], w->ys[j]);
            tg_f32x2 dt = tg_rep_segment_dist2(o, a, b);
            float d2 = dt.a;
            float t = dt.b;
            if (d2 < keep * keep && d2 > 0.0f) {
                float d = sqrtf(d2);
                float qx = a.x + t * (b.x - a.x) - o.x;
                float qy = a.y + t * (b.y - a.y) - o.y;
                float push = (keep - d) / d;
                w->xs[i] += push * qx;
                w->ys[i] += push * qy;
                w->xs[j] += push * qx;
                w->ys[j] += push * qy;
            }
        }
    }
    return moved;
}

// Writes the closed Catmull–Rom spline through the current points (metres) into out; the
// control points go to the 2n temporary.
TG_HD inline tg_u32 tg_rep_write_curve(const tg_rep_consts* c, const tg_rep_work* w, tg_vec2* out,
                                       tg_u32 out_len) {
    tg_u32 n = c->n;
    float seg = c->target_m / (float)n;
    tg_vec2* ctrl = (tg_vec2*)w->tmp;
    for (tg_u32 i = 0u; i < n; ++i) {
        ctrl[i] = tg_v2(w->xs[i] * seg, w->ys[i] * seg);
    }
    if (tg_signed_area2(ctrl, n) < 0.0f) {
        for (tg_u32 i = 0u, j = n - 1u; i < j; ++i, --j) {
            tg_vec2 t = ctrl[i];
            ctrl[i] = ctrl[j];
            ctrl[j] = t;
        }
    }
    return tg_catmull_rom_closed(ctrl, n, out, out_len);
}

// The set-up lane (Rust `Repulsive::run_lane`): the start curve, the obstacles, the padding and
// the loop state; writes the start curve into out (out_len slots) and returns its point count.
TG_HD inline tg_u32 tg_repulsive_lane(const tg_repulsive_params* p, tg_rng* rng, float* scratch,
                                      tg_u32* scratch_u32, tg_vec2* out, tg_u32 out_len) {
    tg_u32 n = p->n_points;
    if (n < 3u) {
        return 0u;
    }
    tg_u32 np = n + TG_REP_LANES;
    tg_rep_consts c = tg_rep_consts_of(p);
    tg_rep_work w = tg_rep_views(p, scratch);
    tg_rep_initial_curve(rng, &c, &w);
    tg_u32 n_obs = tg_rep_place_obstacles(rng, &c, &w, w.obstacles, p->n_obstacles);
    for (tg_u32 i = n; i < np; ++i) {
        w.xs[i] = TG_REP_FAR + (float)i;
        w.ys[i] = TG_REP_FAR;
        w.txs[i] = 1.0f;
        w.tys[i] = 0.0f;
        w.ws[i] = 0.0f;
        w.ms[i] = 0.0f;
        w.fxs[i] = 0.0f;
        w.fys[i] = 0.0f;
    }
    w.state[0] = 1.0f;
    scratch_u32[0] = n_obs;
    scratch_u32[1] = 0u;
    return tg_rep_write_curve(&c, &w, out, out_len);
}

// One window of the flow (Rust `Repulsive::window_lane`): up to TG_REP_STEPS_PER_WINDOW steps
// from the state in the scratch; writes the current curve into out and returns its point count,
// with *still_active set when the lane has neither converged nor reached max_iters.
TG_HD inline tg_u32 tg_repulsive_window_lane(const tg_repulsive_params* p, float* scratch,
                                             tg_u32* scratch_u32, tg_vec2* out, tg_u32 out_len,
                                             bool* still_active) {
    tg_u32 n = p->n_points;
    *still_active = false;
    if (n < 3u) {
        return 0u;
    }
    tg_rep_consts c = tg_rep_consts_of(p);
    tg_rep_work w = tg_rep_views(p, scratch);
    tg_u32 n_obs = scratch_u32[0] < p->n_obstacles ? scratch_u32[0] : p->n_obstacles;
    float rest_len = w.state[0];
    tg_u64 steps = scratch_u32[1];
    bool converged = false;
    tg_u64 window_end = steps + TG_REP_STEPS_PER_WINDOW;
    if (window_end > p->max_iters) {
        window_end = p->max_iters;
    }
    while (steps < window_end) {
        float total = tg_rep_geometry(&c, &w);
        tg_rep_pair_forces(&c, &w);
        tg_rep_spring_forces(&c, &w, rest_len);
        tg_rep_barrier_forces(&c, &w, w.obstacles, n_obs);
        tg_rep_smooth_forces(&c, &w);
        float moved = tg_rep_step(&c, &w, w.obstacles, n_obs);
        rest_len = tg_clamp(rest_len * (1.0f + TG_REP_K_LENGTH * (1.0f - total / (float)n)), 1.0f,
                            TG_REP_MAX_REST);
        steps += 1u;
        if (moved < TG_REP_CONVERGED) {
            converged = true;
            break;
        }
    }
    w.state[0] = rest_len;
    scratch_u32[1] = (tg_u32)steps;
    tg_u32 count = tg_rep_write_curve(&c, &w, out, out_len);
    *still_active = !converged && steps < p->max_iters;
    return count;
}

#endif // TG_TRACK_REPULSIVE_CUH
