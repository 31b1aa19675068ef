// The track pipeline's kernels after the generator (passes 3–9 of `src/track/pipeline.rs`):
// resample, relaxation check and window, validity, fallback, z-profile and inflation. One lane
// is one env e; a lane whose `active` / `mask` flag is 0 returns at once. Control flow (retries,
// relaxation windows, masks) is the plan's: these kernels only write their per-env flags.
//
// Each params struct mirrors a `#[repr(C)]` Rust struct of the pipeline field for field; all are
// padded to a multiple of 8 bytes. Per-env rows: env e owns [e·k, (e + 1)·k) of a buffer with k
// elements per env.
#include "common/kernel.cuh"
#include "common/rng.cuh"
#include "track/geometry.cuh"
#include "track/inflate.cuh"
#include "track/relax.cuh"
#include "track/resample.cuh"
#include "track/validity.cuh"
#include "track/zprofile.cuh"

struct tg_resample_params {
    float spacing_m;
    tg_u32 raw_max;
    tg_u32 n_max;
    tg_u32 curvature;
    float max_spacing_m;
    float sagitta_m;
};
static_assert(sizeof(tg_resample_params) == 24, "tg_resample_params is 24 bytes");

struct tg_relax_params {
    tg_relax_consts consts;
    tg_u32 n_max;
    tg_u32 sweeps;
};
static_assert(sizeof(tg_relax_params) == 32, "tg_relax_params is 32 bytes");

struct tg_validate_params {
    float half_width_m;
    float min_turn_radius_m;
    tg_u32 n_max;
    tg_u32 max_attempts;
};
static_assert(sizeof(tg_validate_params) == 16, "tg_validate_params is 16 bytes");

struct tg_fallback_params {
    float scale_m;
    float min_turn_radius_m;
    float spacing_m;
    tg_u32 n_max;
};
static_assert(sizeof(tg_fallback_params) == 16, "tg_fallback_params is 16 bytes");

struct tg_zprofile_params {
    tg_u64 seed;
    tg_u64 env_base;
    tg_u32 kind;
    float amplitude_m;
    float max_grade;
    tg_u32 knots;
    tg_u32 n_max;
    tg_u32 lattice_len;
};
static_assert(sizeof(tg_zprofile_params) == 40, "tg_zprofile_params is 40 bytes");

struct tg_inflate_params {
    float half_width_m;
    tg_u32 max_attempts;
    tg_u32 n_max;
    tg_u32 pad;
};
static_assert(sizeof(tg_inflate_params) == 16, "tg_inflate_params is 16 bytes");

// Buffers: 0 raw (Vec2, E×raw_max), 1 raw_count (u32), 2 pts (Vec2, E×n_max), 3 count (u32),
// 4 active (u8), 5 resample rows (f32, E×TG_RESAMPLE_SCRATCH_ROWS·raw_max when curvature != 0:
// scratch).
TG_KERNEL(tg_track_resample, tg_resample_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    const tg_u8* active = (const tg_u8*)buf.ptr[4];
    if (active[e] == 0u) return;
    const tg_vec2* raw = (const tg_vec2*)buf.ptr[0] + (tg_u64)e * p.raw_max;
    const tg_u32* raw_count = (const tg_u32*)buf.ptr[1];
    tg_vec2* pts = (tg_vec2*)buf.ptr[2] + (tg_u64)e * p.n_max;
    tg_u32* count = (tg_u32*)buf.ptr[3];
    if (p.curvature == 2u) {
        // The generator wrote the final points (`sampling = "generator"`): copied as they are.
        tg_u32 n = raw_count[e] < p.n_max ? raw_count[e] : p.n_max;
        for (tg_u32 i = 0u; i < n; ++i) {
            pts[i] = raw[i];
        }
        count[e] = n;
        return;
    }
    count[e] = p.curvature != 0u
                   ? tg_resample_adaptive(raw, raw_count[e], p.spacing_m, p.max_spacing_m,
                                          p.sagitta_m, pts, p.n_max,
                                          (float*)buf.ptr[5] +
                                              (tg_u64)e * TG_RESAMPLE_SCRATCH_ROWS * p.raw_max)
                   : tg_resample_closed(raw, raw_count[e], p.spacing_m, pts, p.n_max);
}

// Buffers: 0 pts (Vec2, E×n_max), 1 count (u32), 2 pair (Vec2, E×2·n_max: scratch),
// 3 relax_active (u8), 4 active (u8).
TG_KERNEL(tg_track_relax_check, tg_relax_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    const tg_vec2* pts = (const tg_vec2*)buf.ptr[0] + (tg_u64)e * p.n_max;
    const tg_u32* count = (const tg_u32*)buf.ptr[1];
    tg_vec2* pair = (tg_vec2*)buf.ptr[2] + (tg_u64)e * 2u * p.n_max;
    tg_u8* relax_active = (tg_u8*)buf.ptr[3];
    const tg_u8* active = (const tg_u8*)buf.ptr[4];
    relax_active[e] =
        active[e] != 0u ? (tg_u8)tg_relax_violation(pts, count[e], p.consts, pair, false) : 0u;
}

// Buffers: 0 pts (Vec2, E×n_max), 1 count (u32), 2 pair (Vec2, E×2·n_max: scratch),
// 3 relax_active (u8).
TG_KERNEL(tg_track_relax_window, tg_relax_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    tg_u8* relax_active = (tg_u8*)buf.ptr[3];
    tg_u32 ra = relax_active[e];
    if (ra == 0u) return;
    tg_vec2* pts = (tg_vec2*)buf.ptr[0] + (tg_u64)e * p.n_max;
    const tg_u32* count = (const tg_u32*)buf.ptr[1];
    tg_vec2* pair = (tg_vec2*)buf.ptr[2] + (tg_u64)e * 2u * p.n_max;
    tg_u32 n = count[e];
    tg_relax_sweeps(pts, n, p.consts, pair, p.sweeps, ra);
    relax_active[e] =
        (tg_u8)tg_relax_violation(pts, n, p.consts, pair, (ra & TG_RELAX_TOO_CLOSE) != 0u);
}

// Buffers: 0 pts (Vec2, E×n_max), 1 count (u32), 2 arcs (f32, E×n_max), 3 pair (Vec2,
// E×2·n_max: borders), 4 chunk boxes (Vec2, E×2·n_max), 5 segment boxes (f32,
// E×TG_BOX_WORDS·n_max), 6 active (u8), 7 attempt (u8), 8 ok (u8).
TG_KERNEL(tg_track_validate, tg_validate_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    tg_u8* active = (tg_u8*)buf.ptr[6];
    if (active[e] == 0u) return;
    tg_u64 row = (tg_u64)e * p.n_max;
    const tg_vec2* pts = (const tg_vec2*)buf.ptr[0] + row;
    const tg_u32* count = (const tg_u32*)buf.ptr[1];
    tg_validity_scratch s;
    s.arclen = (float*)buf.ptr[2] + row;
    s.border = (tg_vec2*)buf.ptr[3] + 2u * row;
    s.chunk_boxes = (tg_vec2*)buf.ptr[4] + 2u * row;
    s.seg_boxes = (float*)buf.ptr[5] + TG_BOX_WORDS * row;
    tg_u8* attempt = (tg_u8*)buf.ptr[7];
    tg_u8* ok = (tg_u8*)buf.ptr[8];
    tg_validity_consts c;
    c.half_width_m = p.half_width_m;
    c.min_turn_radius_m = p.min_turn_radius_m;
    ok[e] = tg_is_valid(pts, count[e], c, &s) ? 1u : 0u;
    attempt[e] = (tg_u8)(attempt[e] + 1u);
    active[e] = (ok[e] == 0u && (tg_u32)attempt[e] < p.max_attempts) ? 1u : 0u;
}

// Buffers: 0 pts (Vec2, E×n_max), 1 count (u32), 2 ok (u8), 3 mask (u8).
TG_KERNEL(tg_track_fallback, tg_fallback_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    const tg_u8* ok = (const tg_u8*)buf.ptr[2];
    const tg_u8* mask = (const tg_u8*)buf.ptr[3];
    if (mask[e] == 0u || ok[e] != 0u) return;
    tg_vec2* pts = (tg_vec2*)buf.ptr[0] + (tg_u64)e * p.n_max;
    tg_u32* count = (tg_u32*)buf.ptr[1];
    count[e] = tg_fallback_circle(p.scale_m, p.min_turn_radius_m, p.spacing_m, pts, p.n_max);
}

// Buffers: 0 pts (Vec2, E×n_max), 1 count (u32), 2 arcs (f32, E×n_max), 3 z (f32, E×n_max),
// 4 lattice (f32, E×lattice_len), 5 mask (u8), 6 generation (u32).
TG_KERNEL(tg_track_zprofile, tg_zprofile_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    const tg_u8* mask = (const tg_u8*)buf.ptr[5];
    if (mask[e] == 0u) return;
    tg_u64 row = (tg_u64)e * p.n_max;
    const tg_vec2* pts = (const tg_vec2*)buf.ptr[0] + row;
    const tg_u32* count = (const tg_u32*)buf.ptr[1];
    float* arclen = (float*)buf.ptr[2] + row;
    float* z = (float*)buf.ptr[3] + row;
    float* lattice = (float*)buf.ptr[4] + (tg_u64)e * p.lattice_len;
    const tg_u32* generation = (const tg_u32*)buf.ptr[6];
    tg_u32 n = count[e];
    if (p.kind == TG_ZKIND_FLAT) {
        // Twin of the pipeline's flat shortcut: no arc lengths, no draws.
        for (tg_u32 i = 0u; i < n; ++i) {
            z[i] = 0.0f;
        }
        return;
    }
    float total = 0.0f;
    for (tg_u32 i = 0u; i < n; ++i) {
        arclen[i] = total;
        total += tg_dist(pts[i], pts[(i + 1u) % n]);
    }
    tg_rng rng = tg_rng_new(p.seed, p.env_base + e, generation[e], TG_STREAM_ZPROFILE);
    tg_zprofile_consts zc;
    zc.kind = p.kind;
    zc.amplitude_m = p.amplitude_m;
    zc.max_grade = p.max_grade;
    zc.knots = p.knots;
    tg_profile_lane(zc, &rng, arclen, total, lattice, z, n);
}

// Buffers: 0 center, 1 outer, 2 inner, 3 tangent, 4 normal (Vec3, E×n_max), 5 arclen (f32,
// E×n_max), 6 count_out (u32: the batch's count), 7 length (f32), 8 valid (u8), 9 attempts (u8),
// 10 pts (Vec2, E×n_max), 11 z (f32, E×n_max), 12 count (u32: the scratch count), 13 ok (u8),
// 14 attempt (u8), 15 mask (u8).
TG_KERNEL(tg_track_inflate, tg_inflate_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    const tg_u8* mask = (const tg_u8*)buf.ptr[15];
    if (mask[e] == 0u) return;
    tg_u64 row = (tg_u64)e * p.n_max;
    tg_inflate_out out;
    out.center = (tg_vec3*)buf.ptr[0] + row;
    out.outer = (tg_vec3*)buf.ptr[1] + row;
    out.inner = (tg_vec3*)buf.ptr[2] + row;
    out.tangent = (tg_vec3*)buf.ptr[3] + row;
    out.normal = (tg_vec3*)buf.ptr[4] + row;
    out.arclen = (float*)buf.ptr[5] + row;
    out.length = (float*)buf.ptr[7] + e;
    tg_u32* count_out = (tg_u32*)buf.ptr[6];
    tg_u8* valid = (tg_u8*)buf.ptr[8];
    tg_u8* attempts = (tg_u8*)buf.ptr[9];
    const tg_vec2* pts = (const tg_vec2*)buf.ptr[10] + row;
    const float* z = (const float*)buf.ptr[11] + row;
    const tg_u32* count = (const tg_u32*)buf.ptr[12];
    const tg_u8* ok = (const tg_u8*)buf.ptr[13];
    const tg_u8* attempt = (const tg_u8*)buf.ptr[14];
    tg_u32 n = count[e];
    tg_inflate_lane(pts, z, n, p.n_max, p.half_width_m, out);
    count_out[e] = n;
    valid[e] = ok[e];
    // Rust `max_attempts as u8` (truncating).
    attempts[e] = ok[e] != 0u ? attempt[e] : (tg_u8)(p.max_attempts & 0xffu);
}
