// A fixed-size spatial hash over one env's points in caller-provided scratch: the twin of
// `src/track/grid.rs`.
//
// `heads` has a power-of-two number of buckets, `next` one link per item and `cells` one cell key
// per item. tg_grid_for_pairs visits every unordered pair of items in the same or adjacent cells
// once (the own cell plus four forward neighbours); bucket collisions are filtered by the stored
// cell key, so they cost time but never change a result.
#ifndef TG_TRACK_GRID_CUH
#define TG_TRACK_GRID_CUH

#include "common/geom.cuh"

#define TG_GRID_EMPTY 0xffffffffu

// Rust `grid::floor_i32`: floor(t) by a saturating conversion; the step below i32::MIN wraps as
// Rust's release arithmetic does (only reachable for t = -inf, which callers exclude).
TG_HD inline tg_i32 tg_grid_floor_i32(float t) {
    tg_i32 i = tg_f32_to_i32(t);
    if ((float)i > t) {
        return (tg_i32)((tg_u32)i - 1u);
    }
    return i;
}

// The cell key of (cx, cy).
TG_HD inline tg_u64 tg_grid_key(tg_i32 cx, tg_i32 cy) {
    return ((tg_u64)(tg_u32)cx << 32) | (tg_u64)(tg_u32)cy;
}

// The bucket of cell key k among mask + 1 buckets.
TG_HD inline tg_u32 tg_grid_bucket(tg_u64 k, tg_u32 mask) {
    tg_u32 h = (tg_u32)(k >> 32);
    tg_u32 l = (tg_u32)k;
    h = (h * 0x9e3779b1u) ^ (l * 0x85ebca77u);
    return (h ^ (h >> 15)) & mask;
}

// A grid borrowed from scratch.
struct tg_grid {
    tg_u32* heads;
    tg_u32* next;
    tg_u64* cells;
    tg_u32 buckets;
    tg_u32 len;
};

// Builds the grid of points[0..len) with square cells of side cell_m; `buckets` (the length of
// heads) is a power of two.
TG_HD inline tg_grid tg_grid_build(tg_u32* heads, tg_u32 buckets, tg_u32* next, tg_u64* cells,
                                   const tg_vec2* points, tg_u32 len, float cell_m) {
    for (tg_u32 b = 0u; b < buckets; ++b) {
        heads[b] = TG_GRID_EMPTY;
    }
    float inv_cell = 1.0f / cell_m;
    tg_u32 mask = buckets - 1u;
    for (tg_u32 i = 0u; i < len; ++i) {
        tg_vec2 p = points[i];
        tg_u64 k = tg_grid_key(tg_grid_floor_i32(p.x * inv_cell), tg_grid_floor_i32(p.y * inv_cell));
        cells[i] = k;
        tg_u32 b = tg_grid_bucket(k, mask);
        next[i] = heads[b];
        heads[b] = i;
    }
    tg_grid grid;
    grid.heads = heads;
    grid.next = next;
    grid.cells = cells;
    grid.buckets = buckets;
    grid.len = len;
    return grid;
}

// Calls visit(i, j) once for every unordered pair of items in the same or adjacent cells, until
// visit returns false; returns whether every pair was visited (Rust `Grid::for_pairs`).
template <class Visit>
TG_HD inline bool tg_grid_for_pairs(const tg_grid& g, Visit visit) {
    // Forward neighbour offsets: with the own cell they cover each adjacent pair once.
    const tg_i32 fdx[4] = {1, 1, 0, -1};
    const tg_i32 fdy[4] = {0, 1, 1, 1};
    tg_u32 mask = g.buckets - 1u;
    for (tg_u32 i = 0u; i < g.len; ++i) {
        tg_u64 k = g.cells[i];
        // Own cell: the chain after i holds the items inserted before it.
        tg_u32 j = g.next[i];
        while (j != TG_GRID_EMPTY) {
            if (g.cells[j] == k && !visit(i, j)) {
                return false;
            }
            j = g.next[j];
        }
        tg_u32 cx = (tg_u32)(k >> 32);
        tg_u32 cy = (tg_u32)k;
        for (tg_u32 f = 0u; f < 4u; ++f) {
            // Wrapping adds, as Rust's i32::wrapping_add.
            tg_u64 nk = tg_grid_key((tg_i32)(cx + (tg_u32)fdx[f]), (tg_i32)(cy + (tg_u32)fdy[f]));
            j = g.heads[tg_grid_bucket(nk, mask)];
            while (j != TG_GRID_EMPTY) {
                if (g.cells[j] == nk && !visit(i, j)) {
                    return false;
                }
                j = g.next[j];
            }
        }
    }
    return true;
}

#endif // TG_TRACK_GRID_CUH
