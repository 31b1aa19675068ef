// The raster toolkit on square g × g pixel masks: the bit-exact host+device twin of
// `src/track/generators/raster.rs`.
//
// Masks are row-major f32 words holding TG_RASTER_EMPTY, TG_RASTER_INSIDE or TG_RASTER_MARKED
// (small integers, exact in f32); the flood-fill queue is u32 pixel indices. Every loop is bounded
// by the raster size, and every function works in place on the lane's scratch, so the kernels
// need no allocation. See the Rust module for the algorithms.
#ifndef TG_TRACK_RASTER_CUH
#define TG_TRACK_RASTER_CUH

#include "common/prelude.cuh"

// An empty pixel.
#define TG_RASTER_EMPTY 0.0f
// A pixel of the region.
#define TG_RASTER_INSIDE 1.0f
// A pixel marked by a flood fill.
#define TG_RASTER_MARKED 2.0f
// Passes of checkerboard filling.
#define TG_RASTER_PINCH_PASSES 8u

// The pixel value of a count of a (2k+1)-wide window: dilation keeps any hit, erosion only a
// full window.
TG_HD inline float tg_raster_decide(float count, float full, bool grow) {
    bool hit = grow ? count > 0.0f : count == full;
    return hit ? TG_RASTER_INSIDE : TG_RASTER_EMPTY;
}

// Dilates (`grow`) or erodes the 0/1 mask with a (2k+1)² square, separably through `tmp`
// (g·g words) with sliding window counts (`col`: g words of column counts). Pixels off the
// raster count as empty. Rust `raster::morph`.
TG_HD inline void tg_raster_morph(float* mask, float* tmp, float* col, tg_u32 g, tg_u32 k, bool grow) {
    if (k == 0u) {
        return;
    }
    float full = (float)(2u * k + 1u);
    tg_u32 head = k < g ? k : g;
    for (tg_u32 r = 0u; r < g; ++r) {
        const float* src = mask + (tg_u64)r * g;
        float* dst = tmp + (tg_u64)r * g;
        // Rust's f32 `Sum` folds from -0.0.
        float count = -0.0f;
        for (tg_u32 i = 0u; i < head; ++i) {
            count += src[i];
        }
        for (tg_u32 i = 0u; i < g; ++i) {
            if (i + k < g) {
                count += src[i + k];
            }
            if (i > k) {
                count -= src[i - k - 1u];
            }
            dst[i] = tg_raster_decide(count, full, grow);
        }
    }
    for (tg_u32 i = 0u; i < g; ++i) {
        col[i] = 0.0f;
    }
    for (tg_u32 j = 0u; j < head; ++j) {
        const float* t = tmp + (tg_u64)j * g;
        for (tg_u32 i = 0u; i < g; ++i) {
            col[i] += t[i];
        }
    }
    for (tg_u32 j = 0u; j < g; ++j) {
        if (j + k < g) {
            const float* t = tmp + (tg_u64)(j + k) * g;
            for (tg_u32 i = 0u; i < g; ++i) {
                col[i] += t[i];
            }
        }
        if (j > k) {
            const float* t = tmp + (tg_u64)(j - k - 1u) * g;
            for (tg_u32 i = 0u; i < g; ++i) {
                col[i] -= t[i];
            }
        }
        float* m = mask + (tg_u64)j * g;
        for (tg_u32 i = 0u; i < g; ++i) {
            m[i] = tg_raster_decide(col[i], full, grow);
        }
    }
}

// Empties the raster's outermost ring of pixels.
TG_HD inline void tg_raster_clear_border(float* mask, tg_u32 g) {
    for (tg_u32 t = 0u; t < g; ++t) {
        mask[t] = TG_RASTER_EMPTY;
        mask[(tg_u64)(g - 1u) * g + t] = TG_RASTER_EMPTY;
        mask[(tg_u64)t * g] = TG_RASTER_EMPTY;
        mask[(tg_u64)t * g + g - 1u] = TG_RASTER_EMPTY;
    }
}

// Sets to `to` every pixel equal to `from` that is 4-reachable from `start` through such pixels
// (breadth first; `queue` holds pixel indices, each pushed once). Returns how many.
TG_HD inline tg_u32 tg_raster_flood(float* mask, tg_u32* queue, tg_u32 g, tg_u32 start, float from,
                                    float to) {
    if (mask[start] != from) {
        return 0u;
    }
    mask[start] = to;
    queue[0] = start;
    tg_u32 head = 0u;
    tg_u32 tail = 1u;
    while (head < tail) {
        tg_u32 p = queue[head];
        head += 1u;
        tg_u32 i = p % g;
        tg_u32 j = p / g;
        // The neighbours in Rust's order: west, east, south, north.
        tg_u32 nb[4];
        bool has[4] = {i > 0u, i + 1u < g, j > 0u, j + 1u < g};
        nb[0] = p - 1u;
        nb[1] = p + 1u;
        nb[2] = p - g;
        nb[3] = p + g;
        for (int s = 0; s < 4; ++s) {
            if (has[s] && mask[nb[s]] == from) {
                mask[nb[s]] = to;
                queue[tail] = nb[s];
                tail += 1u;
            }
        }
    }
    return tail;
}

// Keeps only the largest 4-connected component of inside pixels (the first found, in raster
// order, on ties). Components are numbered from MARKED + 1 while they are measured.
TG_HD inline void tg_raster_keep_largest(float* mask, tg_u32* queue, tg_u32 g) {
    float id = TG_RASTER_MARKED;
    float best_id = TG_RASTER_EMPTY;
    tg_u32 best_size = 0u;
    tg_u32 pixels = g * g;
    for (tg_u32 p = 0u; p < pixels; ++p) {
        if (mask[p] == TG_RASTER_INSIDE) {
            id += 1.0f;
            tg_u32 size = tg_raster_flood(mask, queue, g, p, TG_RASTER_INSIDE, id);
            if (size > best_size) {
                best_size = size;
                best_id = id;
            }
        }
    }
    for (tg_u32 p = 0u; p < pixels; ++p) {
        mask[p] = (best_id != TG_RASTER_EMPTY && mask[p] == best_id) ? TG_RASTER_INSIDE
                                                                     : TG_RASTER_EMPTY;
    }
}

// Fills both empty pixels of every 2×2 block whose inside pixels touch only diagonally; repeats
// (bounded) while a pass filled something.
TG_HD inline void tg_raster_fill_pinches(float* mask, tg_u32 g) {
    for (tg_u32 pass = 0u; pass < TG_RASTER_PINCH_PASSES; ++pass) {
        bool changed = false;
        for (tg_u32 j = 0u; j + 1u < g; ++j) {
            for (tg_u32 i = 0u; i + 1u < g; ++i) {
                tg_u32 a = j * g + i;
                tg_u32 b = a + 1u;
                tg_u32 c = a + g;
                tg_u32 d = a + g + 1u;
                bool diag = mask[a] == TG_RASTER_INSIDE && mask[d] == TG_RASTER_INSIDE;
                bool anti = mask[b] == TG_RASTER_INSIDE && mask[c] == TG_RASTER_INSIDE;
                if (diag != anti) {
                    tg_u32 e0 = diag ? b : a;
                    tg_u32 e1 = diag ? c : d;
                    if (mask[e0] == TG_RASTER_EMPTY && mask[e1] == TG_RASTER_EMPTY) {
                        mask[e0] = TG_RASTER_INSIDE;
                        mask[e1] = TG_RASTER_INSIDE;
                        changed = true;
                    }
                }
            }
        }
        if (!changed) {
            return;
        }
    }
}

// Makes every pixel not 4-reachable from the raster corner through empty pixels inside.
TG_HD inline void tg_raster_fill_holes(float* mask, tg_u32* queue, tg_u32 g) {
    tg_raster_flood(mask, queue, g, 0u, TG_RASTER_EMPTY, TG_RASTER_MARKED);
    tg_u32 pixels = g * g;
    for (tg_u32 p = 0u; p < pixels; ++p) {
        mask[p] = mask[p] == TG_RASTER_MARKED ? TG_RASTER_EMPTY : TG_RASTER_INSIDE;
    }
}

#endif // TG_TRACK_RASTER_CUH
