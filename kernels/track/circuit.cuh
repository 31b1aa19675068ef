// The circuit generator's lane: the twin of `src/track/generators/circuit.rs` (straights and
// corners with clothoid transitions, closed by a clamped least-norm correction of the straights;
// the module doc there explains the construction).
#ifndef TG_TRACK_CIRCUIT_CUH
#define TG_TRACK_CIRCUIT_CUH

#include "track/generate.cuh"

// Degrees to radians (Rust `PI / 180.0` in f32: 0.017_453_292).
#define TG_CIRCUIT_DEG 0x1.1df46ap-6f
// Largest turn of one corner after rescaling (Rust `200.0 * DEG`: 3.490_658_5).
#define TG_CIRCUIT_MAX_TURN 0x1.becde6p+1f
// Largest heading change of one integration step on a wide corner, radians (0.15).
#define TG_CIRCUIT_STEP_TURN 0x1.333334p-3f
// Largest heading change of one integration step on the tightest corners, radians (0.3).
#define TG_CIRCUIT_TIGHT_STEP_TURN 0x1.333334p-2f
// Longest integration step on a corner whose steps turn by more than TG_CIRCUIT_STEP_TURN, in
// units of the minimum turn radius (0.6).
#define TG_CIRCUIT_TIGHT_STEP_LENGTH 0x1.333334p-1f
// Most integration steps of one clothoid ramp, of one arc, and of one corner.
#define TG_CIRCUIT_MAX_RAMP_STEPS 8u
#define TG_CIRCUIT_MAX_ARC_STEPS 24u
#define TG_CIRCUIT_MAX_STEPS (2u * TG_CIRCUIT_MAX_RAMP_STEPS + TG_CIRCUIT_MAX_ARC_STEPS)
// Rounds of the clamped least-norm closure solve.
#define TG_CIRCUIT_CLOSURE_ROUNDS 6u
// The `straight` of a leg whose straight is drawn from the length budget.
#define TG_CIRCUIT_SINGLE -1.0f
// Most clearance-skeleton pieces of one corner, and most skeleton vertices of one leg.
#define TG_CIRCUIT_MAX_PIECES 8u
#define TG_CIRCUIT_LEG_VERTICES (2u + TG_CIRCUIT_MAX_PIECES)
// Draws per lane before the attempt is given up.
#define TG_CIRCUIT_DRAWS 6u
// MAX_STRETCH: a draw longer than this many max_length_m is drawn again.
#define TG_CIRCUIT_MAX_STRETCH 1.25f
// Most a skeleton corner piece may stray from its chord, in half widths (0.15).
#define TG_CIRCUIT_PIECE_PAD 0x1.333334p-3f
// Largest heading change of one step of a corner written at its final spacing (0.45).
#define TG_CIRCUIT_EVEN_STEP_TURN 0x1.ccccccp-2f
// The resampler's bounds of a density-implied segment length over the mean (2.2 and 0.3).
#define TG_CIRCUIT_MAX_RATIO 0x1.19999ap+1f
#define TG_CIRCUIT_MIN_RATIO 0x1.333334p-2f

// Parameters of tg_track_circuit: the common part, then Rust `Circuit`'s fields in order.
struct tg_circuit_params {
    tg_generate_common c;
    tg_u32 min_corners;
    tg_u32 max_corners;
    // Relative weights of hairpin, slow corner, sweeper and chicane.
    float weights[4];
    float reverse_fraction;
    float min_length_m;
    float max_length_m;
    float max_radius_m;
    float transition;
    float min_turn_radius_m;
    // The preset's half width, metres (the construction's clearance check).
    float half_width_m;
    // 1 when the walk writes the track's final points (`sampling = "generator"`, Rust
    // `FinalSpacing`), then its finest and coarsest spacing, sagitta and most points.
    tg_u32 final_points;
    float min_spacing_m;
    float max_spacing_m;
    float sagitta_m;
    tg_u32 n_max;
};
static_assert(sizeof(tg_circuit_params) == 104, "tg_circuit_params is 104 bytes");

// One leg in scratch, a straight then a corner (Rust `circuit::Leg`, eight f32 words).
struct tg_circuit_leg {
    // Signed turn of the corner, radians; corner radius, metres.
    float turn;
    float radius;
    // Length of the straight before the corner, metres; its closure weight (0 when frozen).
    float straight;
    float weight;
    // Corner displacement, from its start to its end.
    float dx;
    float dy;
    // Cosine and sine of the heading of the straight.
    float cos_heading;
    float sin_heading;
};
static_assert(sizeof(tg_circuit_leg) == 32, "tg_circuit_leg is eight f32 words");

// f32 words of one leg.
#define TG_CIRCUIT_LEG_WORDS 8u

// A leg with turn, radius and straight, every other word 0 (Rust `..Leg::zeroed()`).
TG_HD inline tg_circuit_leg tg_circuit_new_leg(float turn, float radius, float straight) {
    tg_circuit_leg leg;
    leg.turn = turn;
    leg.radius = radius;
    leg.straight = straight;
    leg.weight = 0.0f;
    leg.dx = 0.0f;
    leg.dy = 0.0f;
    leg.cos_heading = 0.0f;
    leg.sin_heading = 0.0f;
    return leg;
}

// A corner type by the weights, among the first types whose weights sum to `total`.
TG_HD inline tg_u32 tg_circuit_draw_kind(const tg_circuit_params& p, tg_rng* rng, float total) {
    float pick = tg_rng_unit(rng) * total;
    tg_u32 kind = 0u;
    float acc = p.weights[0];
    while (kind < 3u && pick >= acc) {
        kind += 1u;
        acc += p.weights[kind];
    }
    return kind;
}

// The turn (positive, {a}) and radius ({b}) of a single corner of type `kind` (0 hairpin,
// 1 slow, otherwise sweeper).
TG_HD inline tg_f32x2 tg_circuit_draw_single(const tg_circuit_params& p, tg_rng* rng,
                                             tg_u32 kind) {
    float r_min = p.min_turn_radius_m;
    tg_f32x2 out;
    if (kind == 0u) {
        out.a = tg_rng_range(rng, 140.0f, 185.0f) * TG_CIRCUIT_DEG;
        out.b = r_min * tg_rng_range(rng, 0x1.0cccccp+0f, 1.5f); // 1.05
    } else if (kind == 1u) {
        out.a = tg_rng_range(rng, 60.0f, 120.0f) * TG_CIRCUIT_DEG;
        out.b = r_min * tg_rng_range(rng, 0x1.333334p+0f, 3.0f); // 1.2
    } else {
        out.a = tg_rng_range(rng, 15.0f, 60.0f) * TG_CIRCUIT_DEG;
        out.b = tg_rng_range(rng, 3.0f * r_min, p.max_radius_m);
    }
    return out;
}

// Draws the corners into legs (room for 2·max_corners); returns how many legs were written.
TG_HD inline tg_u32 tg_circuit_draw_corners(const tg_circuit_params& p, tg_rng* rng,
                                            tg_circuit_leg* legs) {
    float r_min = p.min_turn_radius_m;
    tg_u32 span = p.max_corners - p.min_corners + 1u;
    tg_u32 complexes = p.min_corners + tg_rng_below(rng, span);
    // Rust's f32 `sum` folds from -0.0, left to right.
    float total_weight = -0.0f;
    for (tg_u32 i = 0u; i < 4u; ++i) {
        total_weight += p.weights[i];
    }
    tg_u32 n = 0u;
    for (tg_u32 c = 0u; c < complexes; ++c) {
        tg_u32 kind = tg_circuit_draw_kind(p, rng, total_weight);
        if (kind == 3u) {
            float turn = tg_rng_range(rng, 20.0f, 50.0f) * TG_CIRCUIT_DEG;
            float sign = tg_rng_unit(rng) < 0.5f ? 1.0f : -1.0f;
            float between = tg_rng_range(rng, 0.0f, 1.5f * r_min);
            float radius = r_min * tg_rng_range(rng, 0x1.19999ap+0f, 2.5f); // 1.1
            legs[n] = tg_circuit_new_leg(sign * turn, radius, TG_CIRCUIT_SINGLE);
            radius = r_min * tg_rng_range(rng, 0x1.19999ap+0f, 2.5f);
            legs[n + 1u] = tg_circuit_new_leg(-sign * turn, radius, between);
            n += 2u;
            continue;
        }
        tg_f32x2 single = tg_circuit_draw_single(p, rng, kind);
        // A negative straight marks a single corner (its straight is drawn later); the second
        // half of a chicane carries its own short straight.
        tg_circuit_leg forward = tg_circuit_new_leg(single.a, single.b, TG_CIRCUIT_SINGLE);
        if (tg_rng_unit(rng) < p.reverse_fraction) {
            // A counter-corner, no larger than the corner it pairs with, before or after it.
            tg_u32 counter_kind =
                tg_circuit_draw_kind(p, rng, p.weights[0] + p.weights[1] + p.weights[2]);
            tg_f32x2 counter = tg_circuit_draw_single(p, rng, counter_kind);
            tg_circuit_leg reverse =
                tg_circuit_new_leg(-tg_min(counter.a, single.a), counter.b, TG_CIRCUIT_SINGLE);
            if (tg_rng_unit(rng) < 0.5f) {
                legs[n] = forward;
                legs[n + 1u] = reverse;
            } else {
                legs[n] = reverse;
                legs[n + 1u] = forward;
            }
            n += 2u;
        } else {
            legs[n] = forward;
            n += 1u;
        }
    }
    return n;
}

// Whether leg k of legs[0..n) is a single corner (a chicane's first half is followed by a leg
// with a nonnegative straight).
TG_HD inline bool tg_circuit_is_single(const tg_circuit_leg* legs, tg_u32 n, tg_u32 k) {
    bool chicane_first = k + 1u < n && legs[k + 1u].straight >= 0.0f;
    return legs[k].straight < 0.0f && !chicane_first;
}

// The lap-direction ({a}) and reversed ({b}) turning of the single corners.
TG_HD inline tg_f32x2 tg_circuit_turn_sums(const tg_circuit_leg* legs, tg_u32 n) {
    tg_f32x2 sums = {0.0f, 0.0f};
    for (tg_u32 k = 0u; k < n; ++k) {
        if (tg_circuit_is_single(legs, n, k)) {
            float t = legs[k].turn;
            if (t > 0.0f) {
                sums.a += t;
            } else {
                sums.b -= t;
            }
        }
    }
    return sums;
}

// Whether leg k is a lap-direction single corner below the turn cap (one the rescaling scales).
TG_HD inline bool tg_circuit_is_free(const tg_circuit_leg* legs, tg_u32 n, tg_u32 k) {
    return tg_circuit_is_single(legs, n, k) && legs[k].turn > 0.0f &&
           legs[k].turn < TG_CIRCUIT_MAX_TURN;
}

// Rescales the single corners' turns of legs[0..n) so that the total signed turning is 2π;
// false when no rescaling within TG_CIRCUIT_MAX_TURN per corner reaches it.
TG_HD inline bool tg_circuit_close_turning(tg_circuit_leg* legs, tg_u32 n) {
    tg_f32x2 sums = tg_circuit_turn_sums(legs, n);
    // Too much reversed turning: reverse corners join the lap direction, first to last.
    for (tg_u32 k = 0u; k < n; ++k) {
        if (sums.a - sums.b >= TG_PI) {
            break;
        }
        if (tg_circuit_is_single(legs, n, k) && legs[k].turn < 0.0f) {
            legs[k].turn = -legs[k].turn;
            sums = tg_circuit_turn_sums(legs, n);
        }
    }
    float pos = sums.a;
    float neg = sums.b;
    if (pos <= 0.0f) {
        return false;
    }
    // Scale the lap-direction turns so that pos' − neg = 2π; corners that would exceed the cap
    // are pinned at it and the rest rescaled (each round pins at least one or finishes).
    float pinned = 0.0f;
    float free_turn = pos;
    for (tg_u32 round = 0u; round < n + 1u; ++round) {
        float factor = (TG_TAU + neg - pinned) / free_turn;
        if (!(factor > 0.0f && tg_is_finite(factor))) {
            return false;
        }
        bool newly = false;
        for (tg_u32 k = 0u; k < n; ++k) {
            if (tg_circuit_is_free(legs, n, k) && legs[k].turn * factor > TG_CIRCUIT_MAX_TURN) {
                free_turn -= legs[k].turn;
                legs[k].turn = TG_CIRCUIT_MAX_TURN;
                pinned += TG_CIRCUIT_MAX_TURN;
                newly = true;
            }
        }
        if (!newly) {
            for (tg_u32 k = 0u; k < n; ++k) {
                if (tg_circuit_is_free(legs, n, k)) {
                    legs[k].turn *= factor;
                }
            }
            return true;
        }
        if (free_turn <= 0.0f) {
            return false;
        }
    }
    return false;
}

// The largest heading change of one integration step of a corner of radius `radius` (Rust
// `Circuit::step_turn`: a `clamp`, the same as max then min on the finite positive ratio).
TG_HD inline float tg_circuit_step_turn(float min_turn_radius_m, float radius) {
    return tg_min(tg_max(TG_CIRCUIT_TIGHT_STEP_LENGTH * min_turn_radius_m / radius,
                         TG_CIRCUIT_STEP_TURN),
                  TG_CIRCUIT_TIGHT_STEP_TURN);
}

// Integration steps for a heading change t at steps of at most step_turn, at most cap (Rust
// `(t / step_turn) as usize + 1`, then `min(cap)`; the saturating cast keeps the minimum exact
// for any t).
TG_HD inline tg_u32 tg_circuit_steps(float t, float step_turn, tg_u32 cap) {
    tg_u64 s = (tg_u64)tg_f32_to_u32(t / step_turn) + 1u;
    return s < cap ? (tg_u32)s : cap;
}

// The state of one corner integration: the point, the points written, and where they go (Rust
// `circuit::Walk`).
struct tg_circuit_walk {
    tg_vec2 p;
    tg_u32 written;
    tg_vec2* pts;
};

// One step of length h along (c, s); its end point is kept (Rust `Walk::step`).
TG_HD inline void tg_circuit_step(tg_circuit_walk* w, float h, float c, float s) {
    w->p.x += h * c;
    w->p.y += h * s;
    w->pts[w->written] = w->p;
    w->written += 1u;
}

// (cos, sin) of a small angle x (|x| <= 0.5) from the Taylor polynomials of degree 7 (sine) and
// 8 (cosine) in Horner form ({a} cos, {b} sin; Rust `circuit::small_cos_sin`).
TG_HD inline tg_f32x2 tg_circuit_small_cos_sin(float x) {
    float x2 = x * x;
    tg_f32x2 out;
    out.b = x + x * x2 *
                    (-0x1.555556p-3f + x2 * (0x1.111112p-7f + x2 * -0x1.a01a02p-13f));
    out.a = 1.0f + x2 * (-0.5f + x2 * (0x1.555556p-5f +
                                       x2 * (-0x1.6c16c2p-10f + x2 * 0x1.a01a02p-16f)));
    return out;
}

// The complex product of two (cos, sin) pairs: direction u turned by the rotation e (Rust
// `circuit::rotate`).
TG_HD inline tg_f32x2 tg_circuit_rotate(tg_f32x2 u, tg_f32x2 e) {
    tg_f32x2 out;
    out.a = u.a * e.a - u.b * e.b;
    out.b = u.b * e.a + u.a * e.b;
    return out;
}

// u scaled to unit length (Rust `circuit::unit`).
TG_HD inline tg_f32x2 tg_circuit_unit(tg_f32x2 u) {
    float r = sqrtf(u.a * u.a + u.b * u.b);
    tg_f32x2 out;
    out.a = u.a / r;
    out.b = u.b / r;
    return out;
}

// n steps of length h, the first along the direction u ({a} cos, {b} sin), each turned from the
// one before by the rotation e, which is itself turned by f after each step when turning; the
// first keep_len directions go to keep as (cos, sin); returns the last step's direction (Rust
// `Walk::section`).
TG_HD inline tg_f32x2 tg_circuit_section(tg_circuit_walk* w, tg_u32 n, float h, tg_f32x2 u,
                                         tg_f32x2 e, bool turning, tg_f32x2 f, tg_vec2* keep,
                                         tg_u32 keep_len) {
    for (tg_u32 i = 0u; i < n; ++i) {
        if (i < keep_len) {
            keep[i] = tg_v2(u.a, u.b);
        }
        tg_circuit_step(w, h, u.a, u.b);
        if (i + 1u < n) {
            u = tg_circuit_rotate(u, e);
            if (turning) {
                e = tg_circuit_rotate(e, f);
            }
        }
    }
    return u;
}

// The ramp back: step i of n along `mirror` ({a} cos, {b} sin) times the conjugate of the first
// ramp's direction dirs[n - 1 - i] (Rust `Walk::mirror`).
TG_HD inline void tg_circuit_mirror(tg_circuit_walk* w, float h, tg_f32x2 mirror,
                                    const tg_vec2* dirs, tg_u32 n) {
    float ct = mirror.a;
    float st = mirror.b;
    for (tg_u32 i = n; i > 0u; --i) {
        tg_vec2 d = dirs[i - 1u];
        tg_circuit_step(w, h, ct * d.x + st * d.y, st * d.x - ct * d.y);
    }
}

// Integrates one corner (signed turn, radius) from the origin, entered at the heading entry
// ({a} cos, {b} sin): writes its step points, the end point last, into pts (room for
// TG_CIRCUIT_MAX_STEPS) and returns the count; the end point goes to *end and the exit heading,
// scaled to unit length, to *exit_out (Rust `Circuit::integrate_corner`, whose comments derive
// the headings).
TG_HD inline tg_u32 tg_circuit_integrate_corner(float transition, float min_turn_radius_m,
                                                float turn, float radius,
                                                tg_f32x2 entry, tg_vec2* pts, tg_vec2* end,
                                                tg_f32x2* exit_out) {
    float mag = tg_abs(turn);
    float kappa = turn < 0.0f ? -1.0f / radius : 1.0f / radius;
    float ramp_turn = transition * mag;
    float arc_turn = mag - 2.0f * ramp_turn;
    float ramp_len = 2.0f * ramp_turn * radius;
    float arc_len = arc_turn * radius;
    float step_turn = tg_circuit_step_turn(min_turn_radius_m, radius);
    tg_u32 n_ramp = ramp_len > 0.0f
                        ? tg_circuit_steps(2.0f * ramp_turn, step_turn, TG_CIRCUIT_MAX_RAMP_STEPS)
                        : 0u;
    tg_u32 n_arc = tg_circuit_steps(arc_turn, step_turn, TG_CIRCUIT_MAX_ARC_STEPS);
    tg_circuit_walk w;
    w.p = tg_v2(0.0f, 0.0f);
    w.written = 0u;
    w.pts = pts;
    tg_vec2 dirs[TG_CIRCUIT_MAX_RAMP_STEPS];
    tg_f32x2 ramp_end = entry;
    if (n_ramp > 0u) {
        float h = ramp_len / (float)n_ramp;
        float dd = kappa * h * h / ramp_len;
        tg_f32x2 e = tg_circuit_small_cos_sin(dd);
        tg_f32x2 first = tg_circuit_rotate(entry, tg_circuit_small_cos_sin(0.125f * dd));
        tg_f32x2 last = tg_circuit_section(&w, n_ramp, h, first, e, true, e, dirs, n_ramp);
        ramp_end = tg_circuit_rotate(
            last, tg_circuit_small_cos_sin(dd * (0.5f * (float)n_ramp - 0.125f)));
    }
    float h = arc_len / (float)n_arc;
    tg_f32x2 half = tg_circuit_small_cos_sin(kappa * (0.5f * h));
    tg_f32x2 first = tg_circuit_rotate(ramp_end, half);
    tg_f32x2 one = {1.0f, 0.0f};
    tg_f32x2 last = tg_circuit_section(&w, n_arc, h, first, tg_circuit_small_cos_sin(kappa * h),
                                       false, one, dirs, 0u);
    // The ramp back's directions are `mirror` times the conjugates of the first ramp's; the exit
    // heading is `mirror` turned back by the entry.
    tg_f32x2 mirror = tg_circuit_rotate(tg_circuit_rotate(last, half), ramp_end);
    if (n_ramp > 0u) {
        tg_circuit_mirror(&w, ramp_len / (float)n_ramp, mirror, dirs, n_ramp);
    }
    tg_f32x2 back = {entry.a, -entry.b};
    *end = w.p;
    *exit_out = tg_circuit_unit(tg_circuit_rotate(mirror, back));
    return w.written;
}

// The arc length of a leg's corner, its ramps included (Rust `Circuit::corner_length`).
TG_HD inline float tg_circuit_corner_length(const tg_circuit_params& p, const tg_circuit_leg& l) {
    return tg_abs(l.turn) * l.radius * (1.0f + 2.0f * p.transition);
}

// The final points' density of a corner of radius `radius` before the blend (Rust
// `Circuit::corner_density`).
TG_HD inline float tg_circuit_corner_density(const tg_circuit_params& p, float radius) {
    float h = sqrtf(8.0f * radius * p.sagitta_m);
    float q = p.transition;
    float mean = ((1.0f - 2.0f * q) + 4.0f * q * (2.0f / 3.0f)) / (1.0f + 2.0f * q);
    h = h < p.min_spacing_m ? p.min_spacing_m : h;
    h = h > p.max_spacing_m ? p.max_spacing_m : h;
    return mean / h;
}

// The blend of a draw's final-point densities, w' = scale·((1 − λ)·w + λ·w̄) (Rust
// `FinalDensity`).
struct tg_circuit_blend {
    float lambda;
    float mean;
    float scale;
};

TG_HD inline float tg_circuit_blend_of(tg_circuit_blend b, float w) {
    return b.scale * ((1.0f - b.lambda) * w + b.lambda * b.mean);
}

// Rust `Circuit::final_density`.
TG_HD inline tg_circuit_blend tg_circuit_final_density(const tg_circuit_params& p,
                                                       const tg_circuit_leg* legs, tg_u32 n,
                                                       float target) {
    float corners = 0.0f;
    float fixed = 0.0f;
    float points = 0.0f;
    float straight = 1.0f / p.max_spacing_m;
    float lo = straight;
    float hi = straight;
    for (tg_u32 k = 0u; k < n; ++k) {
        float len = tg_circuit_corner_length(p, legs[k]);
        float w = tg_circuit_corner_density(p, legs[k].radius);
        corners += len;
        fixed += tg_max(legs[k].straight, 0.0f);
        points += len * w;
        lo = tg_min(lo, w);
        hi = tg_max(hi, w);
    }
    float straights = tg_max(target - corners - fixed, 0.25f * target) + fixed;
    points += straights * straight;
    float mean = points / (corners + straights);
    float lambda = 0.0f;
    if (lo < mean / TG_CIRCUIT_MAX_RATIO) {
        lambda = tg_max(lambda, (mean / TG_CIRCUIT_MAX_RATIO - lo) / (mean - lo));
    }
    if (hi > mean / TG_CIRCUIT_MIN_RATIO) {
        lambda = tg_max(lambda, (hi - mean / TG_CIRCUIT_MIN_RATIO) / (hi - mean));
    }
    float room = 0.9f * (float)p.n_max;
    tg_circuit_blend b;
    b.lambda = lambda;
    b.mean = mean;
    b.scale = points > room ? room / points : 1.0f;
    return b;
}

// The straights' final spacing once the closure has fixed them (Rust
// `Circuit::straight_spacing`): pieces per metre to *density, the length below which a straight
// joins the corner before it to *join.
TG_HD inline void tg_circuit_straight_spacing(const tg_circuit_params& p, tg_circuit_blend b,
                                              const tg_circuit_leg* legs, const float* counts,
                                              tg_u32 n, float target, float* density,
                                              float* join) {
    float corners = 0.0f;
    float straights = 0.0f;
    float steps = 0.0f;
    float shortest = tg_inf();
    for (tg_u32 k = 0u; k < n; ++k) {
        float len = tg_circuit_corner_length(p, legs[k]);
        float m = counts[k] + 1.0f;
        corners += len;
        straights += legs[k].straight;
        steps += m;
        shortest = tg_min(shortest, len / m);
    }
    float length = corners + straights;
    float scale = length < target ? target / length : 1.0f;
    float h = 1.0f / tg_circuit_blend_of(b, 1.0f / p.max_spacing_m) / scale;
    h = tg_min(h, (TG_CIRCUIT_MAX_RATIO * corners + (TG_CIRCUIT_MAX_RATIO - 1.0f) * straights) /
                      steps);
    float over = corners + straights - shortest / TG_CIRCUIT_MIN_RATIO * steps;
    if (over > 0.0f) {
        h = tg_min(h, shortest / TG_CIRCUIT_MIN_RATIO * straights / over);
    }
    float mean = (corners + straights) / (steps + straights / h);
    *density = 1.0f / h;
    *join = 0.25f * mean;
}

// One corner in equal steps at `density` points per metre (Rust
// `Circuit::integrate_corner_even`): the step points into pts, the end point to *end, the exit
// heading to *exit_out; returns the count.
TG_HD inline tg_u32 tg_circuit_integrate_corner_even(float transition, float turn, float radius,
                                                     tg_f32x2 entry, float density, tg_vec2* pts,
                                                     tg_vec2* end, tg_f32x2* exit_out) {
    float mag = tg_abs(turn);
    float kappa = turn < 0.0f ? -1.0f / radius : 1.0f / radius;
    float ramp_turn = transition * mag;
    float ramp_len = 2.0f * ramp_turn * radius;
    float arc_len = (mag - 2.0f * ramp_turn) * radius;
    float total = 2.0f * ramp_len + arc_len;
    tg_u32 fine = tg_f32_to_u32(ceilf(total / (TG_CIRCUIT_EVEN_STEP_TURN * radius)));
    tg_u32 n = tg_f32_to_u32(total * density + 0.5f);
    n = n > fine ? n : fine;
    n = n < 1u ? 1u : n;
    n = n > TG_CIRCUIT_MAX_STEPS ? TG_CIRCUIT_MAX_STEPS : n;
    float h = total / (float)n;
    float ramp = kappa / (2.0f * ramp_len);
    tg_f32x2 u = entry;
    float before = 0.0f;
    tg_vec2 pt = tg_v2(0.0f, 0.0f);
    for (tg_u32 i = 0u; i < n; ++i) {
        float s = ((float)i + 0.5f) * h;
        float back = total - s;
        float psi;
        if (s < ramp_len) {
            psi = ramp * (s * s);
        } else if (back < ramp_len) {
            psi = turn - ramp * (back * back);
        } else {
            psi = kappa * (0.5f * ramp_len + (s - ramp_len));
        }
        u = tg_circuit_rotate(u, tg_circuit_small_cos_sin(psi - before));
        before = psi;
        pt = tg_v2(pt.x + h * u.a, pt.y + h * u.b);
        pts[i] = pt;
    }
    *end = pt;
    *exit_out = tg_circuit_unit(tg_circuit_rotate(u, tg_circuit_small_cos_sin(turn - before)));
    return n;
}

// The gap between the end of the legs' walk and its start.
TG_HD inline tg_vec2 tg_circuit_gap(const tg_circuit_leg* legs, tg_u32 n) {
    tg_vec2 g = tg_v2(0.0f, 0.0f);
    for (tg_u32 k = 0u; k < n; ++k) {
        const tg_circuit_leg& l = legs[k];
        g.x += l.straight * l.cos_heading + l.dx;
        g.y += l.straight * l.sin_heading + l.dy;
    }
    return g;
}

TG_HD inline bool tg_circuit_closed(tg_vec2 g, float tolerance) {
    return tg_abs(g.x) <= tolerance && tg_abs(g.y) <= tolerance;
}

// The clearance skeleton of one drawn track, in scratch (Rust `circuit::Skeleton`): vertices
// (the first repeated after the last), their arc positions (the length after the last), the pad
// of the segment each starts, each leg's first vertex (its bits in an f32, the count after the
// last leg),
// each leg's box (the union of its segments') and each segment's inflated box.
struct tg_circuit_skeleton {
    tg_vec2* pts;
    float* arc;
    float* pad;
    float* first;
    float* boxes;
    float* seg_boxes;
    tg_u32 n;
};

TG_HD inline void tg_circuit_sk_push(tg_circuit_skeleton* sk, tg_vec2 p, float arc, float pad) {
    sk->pts[sk->n] = p;
    sk->arc[sk->n] = arc;
    sk->pad[sk->n] = pad;
    sk->n += 1u;
}

// Squared distance from p to the segment a b (Rust `circuit::point_segment2`).
TG_HD inline float tg_circuit_point_segment2(tg_vec2 p, tg_vec2 a, tg_vec2 b) {
    float dx = b.x - a.x;
    float dy = b.y - a.y;
    float px = p.x - a.x;
    float py = p.y - a.y;
    float l2 = dx * dx + dy * dy;
    float t = 0.0f;
    if (l2 > 0.0f) {
        t = (px * dx + py * dy) / l2;
        t = t < 0.0f ? 0.0f : t;
        t = t > 1.0f ? 1.0f : t;
    }
    float ex = px - t * dx;
    float ey = py - t * dy;
    return ex * ex + ey * ey;
}

TG_HD inline bool tg_circuit_straddles(float a, float b) {
    return (a > 0.0f && b < 0.0f) || (a < 0.0f && b > 0.0f);
}

// Squared distance between the segments p0 p1 and q0 q1, 0 when they cross (Rust
// `circuit::segment_segment2`).
TG_HD inline float tg_circuit_segment_segment2(tg_vec2 p0, tg_vec2 p1, tg_vec2 q0, tg_vec2 q1) {
    float ux = p1.x - p0.x;
    float uy = p1.y - p0.y;
    float vx = q1.x - q0.x;
    float vy = q1.y - q0.y;
    float d1 = vx * (p0.y - q0.y) - vy * (p0.x - q0.x);
    float d2 = vx * (p1.y - q0.y) - vy * (p1.x - q0.x);
    float d3 = ux * (q0.y - p0.y) - uy * (q0.x - p0.x);
    float d4 = ux * (q1.y - p0.y) - uy * (q1.x - p0.x);
    if (tg_circuit_straddles(d1, d2) && tg_circuit_straddles(d3, d4)) {
        return 0.0f;
    }
    float d = tg_circuit_point_segment2(p0, q0, q1);
    d = tg_min(d, tg_circuit_point_segment2(p1, q0, q1));
    d = tg_min(d, tg_circuit_point_segment2(q0, p0, p1));
    return tg_min(d, tg_circuit_point_segment2(q1, p0, p1));
}

// Walks the closed legs[0..n): writes each straight's ends and each corner's points moved to its
// start into out (returns how many), and the clearance skeleton into sk (Rust
// `Circuit::walk`).
TG_HD inline tg_u32 tg_circuit_walk_legs(const tg_circuit_params& p, const tg_circuit_leg* legs,
                                         tg_u32 n, const tg_vec2* local, const float* counts,
                                         float density, float join, tg_vec2* out,
                                         tg_circuit_skeleton* sk) {
    bool final_points = p.final_points != 0u;
    // At the final spacing: each straight's pieces (none when it joins the corner before it),
    // and no track of more than n_max points.
    if (final_points) {
        tg_u32 total = 0u;
        for (tg_u32 k = 0u; k < n; ++k) {
            tg_u32 m = legs[k].straight < join
                           ? 0u
                           : tg_f32_to_u32(ceilf(legs[k].straight * density));
            total += m + 1u + tg_f32_to_u32(counts[k]);
        }
        if (total > p.n_max) {
            return 0u;
        }
    }
    tg_vec2 q0 = tg_v2(0.0f, 0.0f);
    tg_u32 written = 0u;
    float arc = 0.0f;
    sk->n = 0u;
    float piece_pad = 8.0f * TG_CIRCUIT_PIECE_PAD * p.half_width_m;
    for (tg_u32 k = 0u; k < n; ++k) {
        const tg_circuit_leg& l = legs[k];
        sk->first[k] = tg_f32_from_bits(sk->n);
        tg_u32 count = tg_f32_to_u32(counts[k]);
        float r = l.radius;
        float corner_len = tg_circuit_corner_length(p, l);
        // The longest step of the corner; a piece of `stride` steps strays from its chord by at
        // most (stride·h)²/(8r).
        float step = corner_len / (float)(count + 1u);
        float h_max = final_points
                          ? step
                          : r * tg_max(tg_circuit_step_turn(p.min_turn_radius_m, r),
                                       0.25f * p.transition * tg_abs(l.turn));
        tg_u32 stride = tg_f32_to_u32(sqrtf(piece_pad * r) / h_max);
        tg_u32 by_count = count / TG_CIRCUIT_MAX_PIECES + 1u;
        stride = stride > by_count ? stride : by_count;
        stride = stride > 1u ? stride : 1u;
        float piece = (float)stride * h_max;
        float pad = piece * piece / (8.0f * r);
        if (!final_points) {
            out[written] = q0;
            written += 1u;
        } else {
            tg_u32 m = l.straight < join ? 0u : tg_f32_to_u32(ceilf(l.straight * density));
            for (tg_u32 i = 0u; i < m; ++i) {
                float t = l.straight * ((float)i / (float)m);
                out[written] = tg_v2(q0.x + t * l.cos_heading, q0.y + t * l.sin_heading);
                written += 1u;
            }
        }
        if (l.straight > 0.0f) {
            tg_circuit_sk_push(sk, q0, arc, 0.0f);
            q0 = tg_v2(q0.x + l.straight * l.cos_heading, q0.y + l.straight * l.sin_heading);
            arc += l.straight;
        }
        if (final_points || l.straight > 0.0f) {
            out[written] = q0;
            written += 1u;
        }
        tg_circuit_sk_push(sk, q0, arc, pad);
        tg_u32 left = stride;
        const tg_vec2* corner = local + k * TG_CIRCUIT_MAX_STEPS;
        for (tg_u32 i = 0u; i < count; ++i) {
            tg_vec2 q = corner[i];
            tg_vec2 w = tg_v2(q0.x + q.x, q0.y + q.y);
            out[written] = w;
            written += 1u;
            left -= 1u;
            if (left == 0u) {
                tg_circuit_sk_push(sk, w, arc + (float)(i + 1u) * step, pad);
                left = stride;
            }
        }
        arc += corner_len;
        q0 = tg_v2(q0.x + l.dx, q0.y + l.dy);
    }
    sk->first[n] = tg_f32_from_bits(sk->n);
    sk->pts[sk->n] = sk->pts[0];
    sk->arc[sk->n] = arc;
    return written;
}

TG_HD inline bool tg_circuit_apart(const float* x, const float* y) {
    return x[2] < y[0] || y[2] < x[0] || x[3] < y[1] || y[3] < x[1];
}

// Whether the skeleton of n legs keeps its clearance (Rust `Circuit::clear`, whose doc explains
// the pairs it skips).
TG_HD inline bool tg_circuit_clear(const tg_circuit_params& p, tg_u32 n, tg_circuit_skeleton* sk) {
    float clearance = 2.0f * p.half_width_m;
    float near_arc = TG_PI * p.half_width_m;
    float safe = TG_TAU * p.min_turn_radius_m - near_arc;
    tg_u32 verts = sk->n;
    const tg_vec2* pts = sk->pts;
    const float* arc = sk->arc;
    const float* pad = sk->pad;
    const float* first = sk->first;
    float total = arc[verts];
    // Segment boxes inflated by half the clearance and their pads; leg boxes, their unions.
    for (tg_u32 v = 0u; v < verts; ++v) {
        tg_vec2 q0 = pts[v];
        tg_vec2 q1 = pts[v + 1u];
        float inflate = 0.5f * clearance + pad[v];
        float* seg = sk->seg_boxes + 4u * v;
        seg[0] = tg_min(q0.x, q1.x) - inflate;
        seg[1] = tg_min(q0.y, q1.y) - inflate;
        seg[2] = tg_max(q0.x, q1.x) + inflate;
        seg[3] = tg_max(q0.y, q1.y) + inflate;
    }
    for (tg_u32 k = 0u; k < n; ++k) {
        tg_u32 a = tg_f32_to_bits(first[k]);
        tg_u32 b = tg_f32_to_bits(first[k + 1u]);
        float leg[4] = {tg_inf(), tg_inf(), tg_neg_inf(), tg_neg_inf()};
        for (tg_u32 v = a; v < b; ++v) {
            const float* seg = sk->seg_boxes + 4u * v;
            leg[0] = tg_min(leg[0], seg[0]);
            leg[1] = tg_min(leg[1], seg[1]);
            leg[2] = tg_max(leg[2], seg[2]);
            leg[3] = tg_max(leg[3], seg[3]);
        }
        for (tg_u32 c = 0u; c < 4u; ++c) {
            sk->boxes[4u * k + c] = leg[c];
        }
    }
    for (tg_u32 a = 0u; a < n; ++a) {
        const float* ba = sk->boxes + 4u * a;
        tg_u32 i0 = tg_f32_to_bits(first[a]);
        tg_u32 i1 = tg_f32_to_bits(first[a + 1u]);
        for (tg_u32 b = a; b < n; ++b) {
            const float* bb = sk->boxes + 4u * b;
            if (tg_circuit_apart(ba, bb)) {
                continue;
            }
            tg_u32 j_lo = tg_f32_to_bits(first[b]);
            tg_u32 j1 = tg_f32_to_bits(first[b + 1u]);
            // No segment of leg b ends more than `safe` ahead of leg a's start.
            if (arc[j1] <= arc[i0] + safe) {
                continue;
            }
            // The first segment of leg b far enough ahead of segment i; it never moves back.
            tg_u32 start = j_lo;
            for (tg_u32 i = i0; i < i1; ++i) {
                const float* ib = sk->seg_boxes + 4u * i;
                if (tg_circuit_apart(ib, bb)) {
                    continue;
                }
                float a0 = arc[i];
                float a1 = arc[i + 1u];
                float ahead0 = a1 + near_arc;
                float ahead1 = a0 + safe;
                float behind1 = a0 + (total - near_arc);
                float behind0 = a1 + (total - safe);
                tg_u32 j = start;
                if (a == b && i + 1u > j) {
                    j = i + 1u;
                }
                while (j < j1 && !(arc[j] > ahead0 && arc[j + 1u] > ahead1)) {
                    j += 1u;
                }
                start = j;
                while (j < j1 && arc[j + 1u] < behind1 && arc[j] < behind0) {
                    if (!tg_circuit_apart(ib, sk->seg_boxes + 4u * j)) {
                        float need = clearance + pad[i] + pad[j];
                        float d2 =
                            tg_circuit_segment_segment2(pts[i], pts[i + 1u], pts[j], pts[j + 1u]);
                        if (d2 < need * need) {
                            return false;
                        }
                    }
                    j += 1u;
                }
            }
        }
    }
    return true;
}

// One draw (Rust `Circuit::draw`): corners, turning, headings, closure, then the walk into out
// and sk. Returns the points written (0 when the straights cannot close the gap); the leg count
// goes to *legs_out and the target length to *target_out.
TG_HD inline tg_u32 tg_circuit_draw(const tg_circuit_params& p, tg_rng* rng, tg_circuit_leg* legs,
                                    tg_vec2* local, float* counts, tg_vec2* out,
                                    tg_circuit_skeleton* sk, tg_u32* legs_out,
                                    float* target_out) {
    tg_u32 n = tg_circuit_draw_corners(p, rng, legs);
    *legs_out = n;
    *target_out = 0.0f;
    if (!tg_circuit_close_turning(legs, n)) {
        return 0u;
    }
    if (tg_rng_unit(rng) < 0.5f) {
        for (tg_u32 k = 0u; k < n; ++k) {
            legs[k].turn = -legs[k].turn;
        }
    }
    // Corner shapes, lengths and headings.
    float target = tg_rng_range(rng, p.min_length_m, p.max_length_m);
    *target_out = target;
    tg_circuit_blend blend = {0.0f, 0.0f, 1.0f};
    if (p.final_points != 0u) {
        blend = tg_circuit_final_density(p, legs, n, target);
    }
    float fixed = 0.0f;
    // Each straight's heading ({a} cos, {b} sin) is the exit heading of the corner before it.
    tg_f32x2 heading = {1.0f, 0.0f};
    for (tg_u32 k = 0u; k < n; ++k) {
        tg_circuit_leg* leg = &legs[k];
        tg_vec2 end;
        tg_f32x2 exit_heading;
        tg_vec2* pts = local + k * TG_CIRCUIT_MAX_STEPS;
        tg_u32 count;
        if (p.final_points != 0u) {
            float w = tg_circuit_blend_of(blend, tg_circuit_corner_density(p, leg->radius));
            count = tg_circuit_integrate_corner_even(p.transition, leg->turn, leg->radius,
                                                     heading, w, pts, &end, &exit_heading);
        } else {
            count = tg_circuit_integrate_corner(p.transition, p.min_turn_radius_m, leg->turn,
                                                leg->radius, heading, pts, &end, &exit_heading);
        }
        // The points but the last (the next leg's start).
        counts[k] = (float)(count - 1u);
        leg->dx = end.x;
        leg->dy = end.y;
        fixed += tg_circuit_corner_length(p, *leg);
        fixed += tg_max(leg->straight, 0.0f);
        leg->cos_heading = heading.a;
        leg->sin_heading = heading.b;
        heading = exit_heading;
    }
    float budget = tg_max(target - fixed, 0.25f * target);
    float weight_sum = 0.0f;
    for (tg_u32 k = 0u; k < n; ++k) {
        if (legs[k].straight < 0.0f) {
            float u = tg_rng_unit(rng);
            legs[k].weight = 0x1.99999ap-4f + u * u; // 0.1
            weight_sum += legs[k].weight;
        }
    }
    for (tg_u32 k = 0u; k < n; ++k) {
        if (legs[k].straight < 0.0f) {
            legs[k].straight = budget * legs[k].weight / weight_sum;
        }
        legs[k].weight = legs[k].straight;
    }
    // Closure: clamped weighted least-norm correction of the straights.
    float tolerance = 0x1.4f8b58p-17f * target + 0x1.0624dep-10f; // 1e-5, 1e-3
    tg_vec2 g = tg_circuit_gap(legs, n);
    for (tg_u32 round = 0u; round < TG_CIRCUIT_CLOSURE_ROUNDS; ++round) {
        if (tg_circuit_closed(g, tolerance)) {
            break;
        }
        float mxx = 0.0f;
        float mxy = 0.0f;
        float myy = 0.0f;
        for (tg_u32 k = 0u; k < n; ++k) {
            const tg_circuit_leg& l = legs[k];
            mxx += l.weight * l.cos_heading * l.cos_heading;
            mxy += l.weight * l.cos_heading * l.sin_heading;
            myy += l.weight * l.sin_heading * l.sin_heading;
        }
        float det = mxx * myy - mxy * mxy;
        if (tg_is_nan(det) || det <= 0x1.0c6f7ap-20f * (mxx + myy) * (mxx + myy)) { // 1e-6
            return 0u;
        }
        float cx = -(myy * g.x - mxy * g.y) / det;
        float cy = -(mxx * g.y - mxy * g.x) / det;
        for (tg_u32 k = 0u; k < n; ++k) {
            tg_circuit_leg* leg = &legs[k];
            float l = leg->straight + leg->weight * (leg->cos_heading * cx + leg->sin_heading * cy);
            if (l <= 0.0f) {
                leg->straight = 0.0f;
                leg->weight = 0.0f;
            } else {
                leg->straight = l;
            }
        }
        g = tg_circuit_gap(legs, n);
    }
    if (!tg_circuit_closed(g, tolerance)) {
        return 0u;
    }
    float density = 0.0f;
    float join = 0.0f;
    if (p.final_points != 0u) {
        tg_circuit_straight_spacing(p, blend, legs, counts, n, target, &density, &join);
    }
    return tg_circuit_walk_legs(p, legs, n, local, counts, density, join, out, sk);
}

// f32 scratch words of the lane: legs, corner step points, corner point counts, then the
// clearance skeleton (points, arcs, pads, segment boxes, leg firsts, leg boxes).
TG_HD inline tg_u32 tg_circuit_scratch_len(tg_u32 max_corners) {
    tg_u32 max_legs = 2u * max_corners;
    tg_u32 vertices = max_legs * TG_CIRCUIT_LEG_VERTICES + 1u;
    return max_legs * (TG_CIRCUIT_LEG_WORDS + 2u * TG_CIRCUIT_MAX_STEPS + 1u) + 8u * vertices +
           (max_legs + 1u) + 4u * max_legs;
}

// One circuit into out (room for 2·max_corners·(TG_CIRCUIT_MAX_STEPS + 1) points, or n_max
// when it writes the final points: the pipeline's raw slice), with tg_circuit_scratch_len words of scratch; returns the number
// of points written, 0 when no draw of TG_CIRCUIT_DRAWS closes and keeps its clearance.
TG_HD inline tg_u32 tg_circuit_lane(const tg_circuit_params& p, tg_rng* rng, float* scratch,
                                    tg_vec2* out) {
    tg_u32 max_legs = 2u * p.max_corners;
    tg_u32 vertices = max_legs * TG_CIRCUIT_LEG_VERTICES + 1u;
    tg_circuit_leg* legs = reinterpret_cast<tg_circuit_leg*>(scratch);
    float* words = scratch + max_legs * TG_CIRCUIT_LEG_WORDS;
    tg_vec2* local = reinterpret_cast<tg_vec2*>(words);
    words += max_legs * 2u * TG_CIRCUIT_MAX_STEPS;
    float* counts = words;
    words += max_legs;
    tg_circuit_skeleton sk;
    sk.pts = reinterpret_cast<tg_vec2*>(words);
    words += 2u * vertices;
    sk.arc = words;
    words += vertices;
    sk.pad = words;
    words += vertices;
    sk.seg_boxes = words;
    words += 4u * vertices;
    sk.first = words;
    words += max_legs + 1u;
    sk.boxes = words;
    sk.n = 0u;
    for (tg_u32 draw = 0u; draw < TG_CIRCUIT_DRAWS; ++draw) {
        tg_u32 n = 0u;
        float target = 0.0f;
        tg_u32 written = tg_circuit_draw(p, rng, legs, local, counts, out, &sk, &n, &target);
        if (written == 0u || !tg_circuit_clear(p, n, &sk)) {
            continue;
        }
        // A track the closure stretched past MAX_STRETCH · max_length_m is drawn again; one it
        // left shorter than its target is scaled up to it, and the bounding box is centred on
        // the origin.
        float length = 0.0f;
        for (tg_u32 k = 0u; k < n; ++k) {
            length += legs[k].straight + tg_circuit_corner_length(p, legs[k]);
        }
        if (length > TG_CIRCUIT_MAX_STRETCH * p.max_length_m) {
            continue;
        }
        float scale = length < target ? target / length : 1.0f;
        float lo_x = tg_inf();
        float lo_y = tg_inf();
        float hi_x = tg_neg_inf();
        float hi_y = tg_neg_inf();
        for (tg_u32 i = 0u; i < written; ++i) {
            lo_x = tg_min(lo_x, out[i].x);
            hi_x = tg_max(hi_x, out[i].x);
            lo_y = tg_min(lo_y, out[i].y);
            hi_y = tg_max(hi_y, out[i].y);
        }
        float centre_x = 0.5f * (lo_x + hi_x);
        float centre_y = 0.5f * (lo_y + hi_y);
        for (tg_u32 i = 0u; i < written; ++i) {
            out[i] = tg_v2((out[i].x - centre_x) * scale, (out[i].y - centre_y) * scale);
        }
        return written;
    }
    return 0u;
}

#endif // TG_TRACK_CIRCUIT_CUH
