// Close pairs of a closed polyline by chunk bounding boxes: the twin of `src/track/chunks.rs`.
//
// The points are cut into chunks of TG_CHUNK consecutive points, each with an axis-aligned box;
// only chunk pairs whose boxes (one grown by `reach`) overlap are searched point by point, and
// pairs whose cyclic index gap is at most `min_gap` are never visited. Index gaps are 64-bit, as
// Rust's `usize` is on the hosts trackgen runs on (callers pass gaps up to usize::MAX / 2).
#ifndef TG_TRACK_CHUNKS_CUH
#define TG_TRACK_CHUNKS_CUH

#include "common/geom.cuh"

// Points per chunk (Rust `chunks::CHUNK`).
#define TG_CHUNK 4u

// Rust `x.div_ceil(TG_CHUNK)` (no overflow near u64::MAX).
TG_HD inline tg_u64 tg_chunk_div_ceil(tg_u64 x) {
    return x / TG_CHUNK + (x % TG_CHUNK != 0u ? 1u : 0u);
}

// Calls visit(i, j) (i < j) for every pair of pts[0..n) with cyclic index gap > min_gap that
// could be closer than `reach`, until visit returns false; returns whether all were visited.
// `boxes` is scratch of at least 2 · ceil(n / TG_CHUNK) points.
template <class Visit>
TG_HD inline bool tg_for_close_pairs(const tg_vec2* pts, tg_u32 n, tg_vec2* boxes, float reach,
                                     tg_u64 min_gap, Visit visit) {
    tg_u32 chunks = (tg_u32)tg_chunk_div_ceil(n);
    for (tg_u32 k = 0u; k < chunks; ++k) {
        tg_vec2 lo = tg_v2(tg_inf(), tg_inf());
        tg_vec2 hi = tg_v2(tg_neg_inf(), tg_neg_inf());
        tg_u32 end = (k + 1u) * TG_CHUNK < n ? (k + 1u) * TG_CHUNK : n;
        for (tg_u32 i = k * TG_CHUNK; i < end; ++i) {
            tg_vec2 p = pts[i];
            lo = tg_v2(tg_min(lo.x, p.x), tg_min(lo.y, p.y));
            hi = tg_v2(tg_max(hi.x, p.x), tg_max(hi.y, p.y));
        }
        boxes[2u * k] = lo;
        boxes[2u * k + 1u] = hi;
    }
    // Chunk b after chunk a holds a pair farther than min_gap apart only from `first` on, and
    // (going round the other way) before `last`.
    tg_u64 first = tg_chunk_div_ceil(min_gap + 2u);
    first = first > 0u ? first - 1u : 0u;
    for (tg_u32 ka = 0u; ka < chunks; ++ka) {
        tg_vec2 alo = boxes[2u * ka];
        tg_vec2 ahi = boxes[2u * ka + 1u];
        alo = tg_v2(alo.x - reach, alo.y - reach);
        ahi = tg_v2(ahi.x + reach, ahi.y + reach);
        tg_u32 a_start = ka * TG_CHUNK;
        tg_u32 a_end = a_start + TG_CHUNK < n ? a_start + TG_CHUNK : n;
        tg_u64 span = (tg_u64)n + a_end - 1u;
        tg_u64 last = tg_chunk_div_ceil(span > min_gap ? span - min_gap : 0u);
        if (last > chunks) {
            last = chunks;
        }
        tg_u64 kb_start = (tg_u64)ka + first;
        if (kb_start > chunks) {
            kb_start = chunks;
        }
        for (tg_u64 kb64 = kb_start; kb64 < last; ++kb64) {
            tg_u32 kb = (tg_u32)kb64;
            tg_vec2 blo = boxes[2u * kb];
            tg_vec2 bhi = boxes[2u * kb + 1u];
            // NaN boxes compare false and are searched: the caller's test decides.
            bool apart = blo.x > ahi.x || alo.x > bhi.x || blo.y > ahi.y || alo.y > bhi.y;
            if (apart) {
                continue;
            }
            tg_u32 b_end = (kb + 1u) * TG_CHUNK < n ? (kb + 1u) * TG_CHUNK : n;
            for (tg_u32 i = a_start; i < a_end; ++i) {
                tg_u32 j_start = ka == kb ? i + 1u : kb * TG_CHUNK;
                for (tg_u32 j = j_start; j < b_end; ++j) {
                    tg_u32 gap = j - i;
                    tg_u32 other = n - gap;
                    tg_u64 cyclic = gap < other ? gap : other;
                    if (cyclic > min_gap && !visit(i, j)) {
                        return false;
                    }
                }
            }
        }
    }
    return true;
}

#endif // TG_TRACK_CHUNKS_CUH
