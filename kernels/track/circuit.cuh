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
// Largest heading change of one integration step, radians (0.15).
#define TG_CIRCUIT_STEP_TURN 0x1.333334p-3f
// Most integration steps of one clothoid ramp, of one arc, and of one corner.
#define TG_CIRCUIT_MAX_RAMP_STEPS 8u
#define TG_CIRCUIT_MAX_ARC_STEPS 24u
#define TG_CIRCUIT_MAX_STEPS (2u * TG_CIRCUIT_MAX_RAMP_STEPS + TG_CIRCUIT_MAX_ARC_STEPS)
// Rounds of the clamped least-norm closure solve.
#define TG_CIRCUIT_CLOSURE_ROUNDS 6u
// The `straight` of a leg whose straight is drawn from the length budget.
#define TG_CIRCUIT_SINGLE -1.0f

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
};
static_assert(sizeof(tg_circuit_params) == 80, "tg_circuit_params is 80 bytes");

// One leg in scratch, a straight then a corner (Rust `circuit::Leg`, eight f32 words).
struct tg_circuit_leg {
    // Signed turn of the corner, radians; corner radius, metres.
    float turn;
    float radius;
    // Length of the straight before the corner, metres; its closure weight (0 when frozen).
    float straight;
    float weight;
    // Corner displacement in its own frame (entry heading along +x).
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

// Integration steps for a heading change t, at most cap (Rust `(t / STEP_TURN) as usize + 1`,
// then `min(cap)`; the saturating cast keeps the minimum exact for any t).
TG_HD inline tg_u32 tg_circuit_steps(float t, tg_u32 cap) {
    tg_u64 s = (tg_u64)tg_f32_to_u32(t / TG_CIRCUIT_STEP_TURN) + 1u;
    return s < cap ? (tg_u32)s : cap;
}

// The state of one corner integration: the point, the steps taken, the points written, the
// step count, and where the points go (Rust `circuit::Walk`).
struct tg_circuit_walk {
    tg_vec2 p;
    tg_u32 k;
    tg_u32 written;
    tg_u32 total;
    tg_vec2* pts;
};

// n steps of length h, step i at heading psi0 + sum_{j<i} (d0 + j·dd), the directions turned by
// rotation recurrences; each step's end point is kept unless it is the corner's last (Rust
// `Walk::section`).
TG_HD inline void tg_circuit_section(tg_circuit_walk* w, tg_u32 n, float h, float psi0, float d0,
                                     float dd) {
    tg_f32x2 u = tg_sin_cos(psi0);
    // A section of one step needs no turn, of two no change of turn.
    tg_f32x2 e = n >= 2u ? tg_sin_cos(d0) : tg_f32x2{0.0f, 1.0f};
    tg_f32x2 f = n >= 3u ? tg_sin_cos(dd) : tg_f32x2{0.0f, 1.0f};
    float s = u.a;
    float c = u.b;
    float es = e.a;
    float ec = e.b;
    for (tg_u32 i = 0u; i < n; ++i) {
        w->p.x += h * c;
        w->p.y += h * s;
        if (w->k + 1u < w->total) {
            w->pts[w->written] = w->p;
            w->written += 1u;
        }
        w->k += 1u;
        if (i + 1u < n) {
            float c2 = c * ec - s * es;
            float s2 = s * ec + c * es;
            c = c2;
            s = s2;
            if (i + 2u < n) {
                float ec2 = ec * f.b - es * f.a;
                float es2 = es * f.b + ec * f.a;
                ec = ec2;
                es = es2;
            }
        }
    }
}

// Integrates one corner (signed turn, radius) from the origin at heading 0: writes its step
// points but the last into pts (room for TG_CIRCUIT_MAX_STEPS) and returns the count; the end
// point goes to *end.
TG_HD inline tg_u32 tg_circuit_integrate_corner(float transition, float turn, float radius,
                                                tg_vec2* pts, tg_vec2* end) {
    float mag = tg_abs(turn);
    float kappa = turn < 0.0f ? -1.0f / radius : 1.0f / radius;
    float ramp_turn = transition * mag;
    float arc_turn = mag - 2.0f * ramp_turn;
    float ramp_len = 2.0f * ramp_turn * radius;
    float arc_len = arc_turn * radius;
    tg_u32 n_ramp = ramp_len > 0.0f ? tg_circuit_steps(2.0f * ramp_turn, TG_CIRCUIT_MAX_RAMP_STEPS)
                                    : 0u;
    tg_u32 n_arc = tg_circuit_steps(arc_turn, TG_CIRCUIT_MAX_ARC_STEPS);
    tg_circuit_walk w;
    w.p = tg_v2(0.0f, 0.0f);
    w.k = 0u;
    w.written = 0u;
    w.total = 2u * n_ramp + n_arc;
    w.pts = pts;
    float ramp_end = 0.5f * kappa * ramp_len;
    if (n_ramp > 0u) {
        float h = ramp_len / (float)n_ramp;
        float s0 = 0.5f * h;
        float dd = kappa * h * h / ramp_len;
        tg_circuit_section(&w, n_ramp, h, kappa * s0 * s0 / (2.0f * ramp_len), dd, dd);
    }
    float h = arc_len / (float)n_arc;
    tg_circuit_section(&w, n_arc, h, ramp_end + kappa * (0.5f * h), kappa * h, 0.0f);
    float arc_end = ramp_end + kappa * arc_len;
    if (n_ramp > 0u) {
        float hr = ramp_len / (float)n_ramp;
        float s0 = 0.5f * hr;
        float dd = kappa * hr * hr / ramp_len;
        tg_circuit_section(&w, n_ramp, hr, arc_end + kappa * (s0 - s0 * s0 / (2.0f * ramp_len)),
                           kappa * hr - dd, -dd);
    }
    *end = w.p;
    return w.written;
}

// The gap between the end of the legs' walk and its start.
TG_HD inline tg_vec2 tg_circuit_gap(const tg_circuit_leg* legs, tg_u32 n) {
    tg_vec2 g = tg_v2(0.0f, 0.0f);
    for (tg_u32 k = 0u; k < n; ++k) {
        const tg_circuit_leg& l = legs[k];
        g.x += l.straight * l.cos_heading + (l.cos_heading * l.dx - l.sin_heading * l.dy);
        g.y += l.straight * l.sin_heading + (l.sin_heading * l.dx + l.cos_heading * l.dy);
    }
    return g;
}

TG_HD inline bool tg_circuit_closed(tg_vec2 g, float tolerance) {
    return tg_abs(g.x) <= tolerance && tg_abs(g.y) <= tolerance;
}

// f32 scratch words of the lane: legs, corner step points, corner point counts.
TG_HD inline tg_u32 tg_circuit_scratch_len(tg_u32 max_corners) {
    tg_u32 max_legs = 2u * max_corners;
    return max_legs * (TG_CIRCUIT_LEG_WORDS + 2u * TG_CIRCUIT_MAX_STEPS + 1u);
}

// One circuit into out (room for 2·max_corners·(TG_CIRCUIT_MAX_STEPS + 1) points, which the
// pipeline's raw slice holds), with tg_circuit_scratch_len words of scratch; returns the number
// of points written, 0 when the attempt does not close.
TG_HD inline tg_u32 tg_circuit_lane(const tg_circuit_params& p, tg_rng* rng, float* scratch,
                                    tg_vec2* out) {
    tg_u32 max_legs = 2u * p.max_corners;
    tg_circuit_leg* legs = reinterpret_cast<tg_circuit_leg*>(scratch);
    tg_vec2* local = reinterpret_cast<tg_vec2*>(scratch + max_legs * TG_CIRCUIT_LEG_WORDS);
    float* counts = scratch + max_legs * (TG_CIRCUIT_LEG_WORDS + 2u * TG_CIRCUIT_MAX_STEPS);

    tg_u32 n = tg_circuit_draw_corners(p, rng, legs);
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
    float fixed = 0.0f;
    float heading = 0.0f;
    for (tg_u32 k = 0u; k < n; ++k) {
        tg_circuit_leg* leg = &legs[k];
        tg_vec2 end;
        tg_u32 count = tg_circuit_integrate_corner(p.transition, leg->turn, leg->radius,
                                                   local + k * TG_CIRCUIT_MAX_STEPS, &end);
        counts[k] = (float)count;
        leg->dx = end.x;
        leg->dy = end.y;
        fixed += tg_abs(leg->turn) * leg->radius * (1.0f + 2.0f * p.transition);
        fixed += tg_max(leg->straight, 0.0f);
        tg_f32x2 sc = tg_sin_cos(heading);
        leg->cos_heading = sc.b;
        leg->sin_heading = sc.a;
        heading += leg->turn;
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
    // Output: walk the legs, placing each corner's points rotated to its entry heading.
    tg_vec2 q0 = tg_v2(0.0f, 0.0f);
    tg_u32 written = 0u;
    for (tg_u32 k = 0u; k < n; ++k) {
        const tg_circuit_leg& l = legs[k];
        out[written] = q0;
        written += 1u;
        if (l.straight > 0.0f) {
            q0 = tg_v2(q0.x + l.straight * l.cos_heading, q0.y + l.straight * l.sin_heading);
            out[written] = q0;
            written += 1u;
        }
        tg_u32 count = tg_f32_to_u32(counts[k]);
        const tg_vec2* corner = local + k * TG_CIRCUIT_MAX_STEPS;
        for (tg_u32 i = 0u; i < count; ++i) {
            tg_vec2 q = corner[i];
            out[written] = tg_v2(q0.x + (l.cos_heading * q.x - l.sin_heading * q.y),
                                 q0.y + (l.sin_heading * q.x + l.cos_heading * q.y));
            written += 1u;
        }
        q0 = tg_v2(q0.x + (l.cos_heading * l.dx - l.sin_heading * l.dy),
                   q0.y + (l.sin_heading * l.dx + l.cos_heading * l.dy));
    }
    // A track the closure left shorter than its target is scaled up to it, and the bounding box
    // is centred on the origin.
    float length = 0.0f;
    for (tg_u32 k = 0u; k < n; ++k) {
        length += legs[k].straight +
                  tg_abs(legs[k].turn) * legs[k].radius * (1.0f + 2.0f * p.transition);
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

#endif // TG_TRACK_CIRCUIT_CUH
