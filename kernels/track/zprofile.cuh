// The optional 2.5D height profile of a track: the twin of `src/track/zprofile.rs` (see its
// module doc for the four kinds and the grade cap).
#ifndef TG_TRACK_ZPROFILE_CUH
#define TG_TRACK_ZPROFILE_CUH

#include "common/geom.cuh"
#include "common/rng.cuh"

// Rust `ZKind`, by index in declaration order.
#define TG_ZKIND_FLAT 0u
#define TG_ZKIND_UNIFORM 1u
#define TG_ZKIND_RANDOM_WALK 2u
#define TG_ZKIND_NOISE 3u

// The z-profile parameters a lane reads (Rust `ZProfileParams`).
struct tg_zprofile_consts {
    tg_u32 kind;
    float amplitude_m;
    float max_grade;
    tg_u32 knots;
};

// Catmull–Rom through four heights at t ∈ [0, 1] between b and c.
TG_HD inline float tg_catmull_rom_1d(float a, float b, float c, float d, float t) {
    float t2 = t * t;
    float t3 = t2 * t;
    return 0.5f * ((2.0f * b) + (c - a) * t + (2.0f * a - 5.0f * b + 4.0f * c - d) * t2 +
                   (3.0f * b - a - 3.0f * c + d) * t3);
}

// The lattice cell of arc length s on a loop of `length` with `freq` cells: (i, t) with
// i = min(floor(s / length · freq), freq − 1) as Rust's saturating `as usize`.
TG_HD inline tg_u32 tg_zprofile_cell(float u, tg_u32 freq) {
    tg_u64 i = tg_f32_to_u64(u);
    return i < (tg_u64)(freq - 1u) ? (tg_u32)i : freq - 1u;
}

// One octave of the value noise with its current cell (Rust `NoiseOctave`): lat[0..freq), the
// cell i, (float)i, the upper end of its range of u (i + 1, or infinity for the last cell),
// lat[i] and lat[(i + 1) % freq] - lat[i].
struct tg_noise_octave {
    const float* lat;
    tg_u32 freq;
    float amplitude;
    float freq_f;
    float lo;
    float hi;
    float base;
    float delta;
};

TG_HD inline void tg_noise_octave_enter(tg_noise_octave* o, tg_u32 i) {
    tg_u32 last = o->freq - 1u;
    tg_u32 next = i == last ? 0u : i + 1u;
    o->lo = (float)i;
    o->hi = i == last ? tg_inf() : (float)(i + 1u);
    o->base = o->lat[i];
    o->delta = o->lat[next] - o->lat[i];
}

TG_HD inline void tg_noise_octave_init(tg_noise_octave* o, const float* lat, tg_u32 freq,
                                       float amplitude) {
    o->lat = lat;
    o->freq = freq;
    o->amplitude = amplitude;
    o->freq_f = (float)freq;
    tg_noise_octave_enter(o, 0u);
}

// The octave's height at q = s / length; the cell is recomputed only when u = q * freq leaves
// the current one (Rust `NoiseOctave::at`).
TG_HD inline float tg_noise_octave_at(tg_noise_octave* o, float q) {
    float u = q * o->freq_f;
    if (!(u >= o->lo && u < o->hi)) {
        tg_noise_octave_enter(o, tg_zprofile_cell(u, o->freq));
    }
    float t = u - o->lo;
    float w = t * t * (3.0f - 2.0f * t);
    return o->amplitude * (o->base + o->delta * w);
}

// Writes the heights z[0..n) of one env; arclen[0..n) holds each point's arc length and
// `length` the closed length; `lattice` is scratch of 7·knots words (Rust `profile_lane`).
TG_HD inline void tg_profile_lane(const tg_zprofile_consts& p, tg_rng* rng, const float* arclen,
                                  float length, float* lattice, float* z, tg_u32 n) {
    if (p.kind == TG_ZKIND_UNIFORM) {
        tg_u32 k = p.knots;
        for (tg_u32 v = 0u; v < k; ++v) {
            lattice[v] = p.amplitude_m * tg_rng_signed(rng);
        }
        for (tg_u32 e = 0u; e < n; ++e) {
            float u = arclen[e] / length * (float)k;
            tg_u32 i = tg_zprofile_cell(u, k);
            float t = u - (float)i;
            // Rust `(i + j).rem_euclid(k)` for j ∈ {-1, 0, 1, 2} and i < k.
            float h0 = lattice[(i + k - 1u) % k];
            float h1 = lattice[i % k];
            float h2 = lattice[(i + 1u) % k];
            float h3 = lattice[(i + 2u) % k];
            z[e] = tg_catmull_rom_1d(h0, h1, h2, h3, t);
        }
    } else if (p.kind == TG_ZKIND_RANDOM_WALK) {
        float step = p.amplitude_m * 2.0f / sqrtf((float)n);
        float h = 0.0f;
        for (tg_u32 e = 0u; e < n; ++e) {
            z[e] = h;
            h += step * tg_rng_signed(rng);
        }
        // h is now the height the walk would reach at s = L; remove the drift linearly.
        for (tg_u32 e = 0u; e < n; ++e) {
            z[e] -= h * (arclen[e] / length);
        }
    } else if (p.kind == TG_ZKIND_NOISE) {
        // One pass for the three octaves, each following its cell (Rust `NoiseOctave`).
        tg_u32 k = p.knots;
        for (tg_u32 v = 0u; v < 7u * k; ++v) {
            lattice[v] = tg_rng_signed(rng);
        }
        float a0 = p.amplitude_m;
        float a1 = a0 * 0.5f;
        float a2 = a1 * 0.5f;
        tg_noise_octave oct[3];
        tg_noise_octave_init(&oct[0], lattice, k, a0);
        tg_noise_octave_init(&oct[1], lattice + k, 2u * k, a1);
        tg_noise_octave_init(&oct[2], lattice + 3u * k, 4u * k, a2);
        for (tg_u32 e = 0u; e < n; ++e) {
            float q = arclen[e] / length;
            float h = 0.0f;
            for (tg_u32 o = 0u; o < 3u; ++o) {
                h += tg_noise_octave_at(&oct[o], q);
            }
            z[e] = h;
        }
    } else {
        // Flat: all zero, which the grade cap would keep (Rust returns here too).
        for (tg_u32 e = 0u; e < n; ++e) {
            z[e] = 0.0f;
        }
        return;
    }
    // Grade cap: the steepest segment, the closing one (back to point 0) last.
    float grade = 0.0f;
    if (n > 0u) {
        for (tg_u32 i = 0u; i + 1u < n; ++i) {
            float ds = arclen[i + 1u] - arclen[i];
            if (ds > 0.0f) {
                grade = tg_max(grade, tg_abs(z[i + 1u] - z[i]) / ds);
            }
        }
        float ds = length - arclen[n - 1u];
        if (ds > 0.0f) {
            grade = tg_max(grade, tg_abs(z[0] - z[n - 1u]) / ds);
        }
    }
    if (grade > p.max_grade) {
        float k = p.max_grade / grade;
        for (tg_u32 i = 0u; i < n; ++i) {
            z[i] *= k;
        }
    }
}

#endif // TG_TRACK_ZPROFILE_CUH
