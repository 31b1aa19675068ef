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

// Writes the heights z[0..n) of one env; arclen[0..n) holds each point's arc length and
// `length` the closed length; `lattice` is scratch of 4·knots words (Rust `profile_lane`).
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
        for (tg_u32 e = 0u; e < n; ++e) {
            z[e] = 0.0f;
        }
        float amplitude = p.amplitude_m;
        tg_u32 freq = p.knots;
        for (tg_u32 octave = 0u; octave < 3u; ++octave) {
            for (tg_u32 v = 0u; v < freq; ++v) {
                lattice[v] = tg_rng_signed(rng);
            }
            for (tg_u32 e = 0u; e < n; ++e) {
                float u = arclen[e] / length * (float)freq;
                tg_u32 i = tg_zprofile_cell(u, freq);
                float t = u - (float)i;
                float w = t * t * (3.0f - 2.0f * t);
                z[e] += amplitude * (lattice[i] + (lattice[(i + 1u) % freq] - lattice[i]) * w);
            }
            amplitude *= 0.5f;
            freq *= 2u;
        }
    } else {
        // Flat: all zero, which the grade cap would keep (Rust returns here too).
        for (tg_u32 e = 0u; e < n; ++e) {
            z[e] = 0.0f;
        }
        return;
    }
    // Grade cap.
    float grade = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        tg_u32 j = (i + 1u) % n;
        float ds = j == 0u ? length - arclen[i] : arclen[j] - arclen[i];
        if (ds > 0.0f) {
            grade = tg_max(grade, tg_abs(z[j] - z[i]) / ds);
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
