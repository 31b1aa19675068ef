// The checkpoint generator's lane: the twin of `src/track/generators/checkpoint.rs`.
#ifndef TG_TRACK_CHECKPOINT_CUH
#define TG_TRACK_CHECKPOINT_CUH

#include "track/generate.cuh"

// Parameters of tg_track_checkpoint: the common part, then Rust `Checkpoint`'s fields in order.
struct tg_checkpoint_params {
    tg_generate_common c;
    tg_u32 n_checkpoints;
    float radius_m;
    float min_radius_frac;
    float max_turn_rad;
    float step_m;
    tg_u32 max_steps;
};
static_assert(sizeof(tg_checkpoint_params) == 56, "tg_checkpoint_params is 56 bytes");

// The swept polar angle at which target `dest` counts as passed: its polar angle in [0, 2π),
// except the start (dest = n + 1), which is passed only at the end of the lap (+inf).
TG_HD inline float tg_checkpoint_target_angle(tg_vec2 t, tg_u32 dest, tg_u32 n) {
    if (dest > n) {
        return tg_inf();
    }
    float a = tg_atan2(t.y, t.x);
    if (a < 0.0f) {
        return a + TG_TAU;
    }
    return a;
}

// Radial checkpoints followed by a car with a bounded turn per step (2·(n_checkpoints + 2)
// scratch words of targets) into out[0..out_len) (max_steps points, which the pipeline's raw
// slice holds); returns the number of points written.
TG_HD inline tg_u32 tg_checkpoint_lane(const tg_checkpoint_params& p, tg_rng* rng, float* scratch,
                                       tg_vec2* out, tg_u32 out_len) {
    tg_u32 n = p.n_checkpoints;
    tg_vec2* targets = reinterpret_cast<tg_vec2*>(scratch);
    float r = p.radius_m;
    tg_vec2 start = tg_v2(r, 0.0f);
    // Checkpoints 1..n at jittered angles; 0 is the start.
    for (tg_u32 c = 1u; c < n; ++c) {
        float angle = TG_TAU * ((float)c + 0.5f * tg_rng_unit(rng)) / (float)n;
        float radius = r * tg_rng_range(rng, p.min_radius_frac, 1.0f);
        tg_f32x2 sc = tg_sin_cos(angle);
        targets[c] = tg_v2(radius * sc.b, radius * sc.a);
    }
    // Closing approach: a point behind the start along its tangent, then the start.
    float lead = 4.0f * p.step_m;
    targets[n] = tg_v2(r, -lead);
    targets[n + 1u] = start;
    targets[0] = start;

    tg_vec2 pos = start;
    float heading = TG_FRAC_PI_2;
    tg_u32 dest = 1u;
    float swept = 0.0f;
    float polar = 0.0f;
    tg_u32 written = 0u;
    tg_u32 max_steps = p.max_steps < out_len ? p.max_steps : out_len;
    while (written < max_steps && swept < TG_TAU) {
        out[written] = pos;
        written += 1u;
        while (dest <= n + 1u && swept >= tg_checkpoint_target_angle(targets[dest], dest, n)) {
            dest += 1u;
        }
        tg_vec2 t = targets[dest < n + 1u ? dest : n + 1u];
        float desired = tg_atan2(t.y - pos.y, t.x - pos.x);
        float diff = tg_wrap_angle(desired - heading);
        heading = tg_wrap_angle(heading + tg_clamp(diff, -p.max_turn_rad, p.max_turn_rad));
        tg_f32x2 sc = tg_sin_cos(heading);
        pos = tg_v2(pos.x + p.step_m * sc.b, pos.y + p.step_m * sc.a);
        float now = tg_atan2(pos.y, pos.x);
        swept += tg_wrap_angle(now - polar);
        polar = now;
    }
    if (written == 0u) {
        return 0u;
    }
    // Closure: spread the gap between the last position and the start over the last quarter of
    // the loop (weights rising linearly to 1).
    float gap_x = start.x - pos.x;
    float gap_y = start.y - pos.y;
    tg_u32 tail = written / 4u;
    if (tail < 1u) {
        tail = 1u;
    }
    for (tg_u32 k = 0u; k < tail; ++k) {
        tg_u32 i = written - tail + k;
        float w = (float)(k + 1u) / (float)(tail + 1u);
        out[i] = tg_v2(out[i].x + w * gap_x, out[i].y + w * gap_y);
    }
    return written;
}

#endif // TG_TRACK_CHECKPOINT_CUH
