//! A small raster toolkit on square `g × g` pixel masks (row-major `f32` words holding
//! [`EMPTY`], [`INSIDE`] or [`MARKED`]; every value a small integer, exact in `f32`): separable
//! morphology with a square structuring element, flood fill with an explicit queue, the
//! largest 4-connected component, checkerboard-pinch filling and hole filling. Every loop is
//! bounded by the raster size. The Voronoi generator cleans its cell-union mask with it.

/// An empty pixel.
pub(super) const EMPTY: f32 = 0.0;
/// A pixel of the region.
pub(super) const INSIDE: f32 = 1.0;
/// A pixel marked by a flood fill.
pub(super) const MARKED: f32 = 2.0;

/// Passes of checkerboard filling (one almost always suffices).
const PINCH_PASSES: usize = 8;

/// Dilates (`grow`) or erodes the 0/1 mask with a `(2k+1)²` square, separably through `tmp`
/// with sliding window counts (`col` holds one row of column counts; all sums are small
/// integers, exact in `f32`). Pixels off the raster count as empty.
pub(super) fn morph(
    mask: &mut [f32],
    tmp: &mut [f32],
    col: &mut [f32],
    g: usize,
    k: usize,
    grow: bool,
) {
    if k == 0 {
        return;
    }
    let full = (2 * k + 1) as f32;
    let decide = |count: f32| {
        let hit = if grow { count > 0.0 } else { count == full };
        if hit {
            INSIDE
        } else {
            EMPTY
        }
    };
    for (src, dst) in mask.chunks_exact(g).zip(tmp.chunks_exact_mut(g)) {
        let mut count: f32 = src[..k.min(g)].iter().sum();
        for i in 0..g {
            if i + k < g {
                count += src[i + k];
            }
            if i > k {
                count -= src[i - k - 1];
            }
            dst[i] = decide(count);
        }
    }
    col.fill(0.0);
    for j in 0..k.min(g) {
        for (c, &t) in col.iter_mut().zip(&tmp[j * g..(j + 1) * g]) {
            *c += t;
        }
    }
    for j in 0..g {
        if j + k < g {
            for (c, &t) in col.iter_mut().zip(&tmp[(j + k) * g..(j + k + 1) * g]) {
                *c += t;
            }
        }
        if j > k {
            for (c, &t) in col.iter_mut().zip(&tmp[(j - k - 1) * g..(j - k) * g]) {
                *c -= t;
            }
        }
        for (m, &c) in mask[j * g..(j + 1) * g].iter_mut().zip(col.iter()) {
            *m = decide(c);
        }
    }
}

/// Empties the raster's outermost ring of pixels.
pub(super) fn clear_border(mask: &mut [f32], g: usize) {
    for t in 0..g {
        mask[t] = EMPTY;
        mask[(g - 1) * g + t] = EMPTY;
        mask[t * g] = EMPTY;
        mask[t * g + g - 1] = EMPTY;
    }
}

/// Sets to `to` every pixel equal to `from` that is 4-reachable from `start` through such
/// pixels (breadth first; `queue` holds pixel indices, each pushed once). Returns how many.
pub(super) fn flood(
    mask: &mut [f32],
    queue: &mut [u32],
    g: usize,
    start: usize,
    from: f32,
    to: f32,
) -> usize {
    if mask[start] != from {
        return 0;
    }
    mask[start] = to;
    queue[0] = start as u32;
    let (mut head, mut tail) = (0, 1);
    while head < tail {
        let p = queue[head] as usize;
        head += 1;
        let (i, j) = (p % g, p / g);
        let neighbours = [
            (i > 0).then(|| p - 1),
            (i + 1 < g).then(|| p + 1),
            (j > 0).then(|| p - g),
            (j + 1 < g).then(|| p + g),
        ];
        for q in neighbours.into_iter().flatten() {
            if mask[q] == from {
                mask[q] = to;
                queue[tail] = q as u32;
                tail += 1;
            }
        }
    }
    tail
}

/// Keeps only the largest 4-connected component of inside pixels (the first found, in raster
/// order, on ties). Components are numbered from `MARKED + 1` while they are measured.
pub(super) fn keep_largest(mask: &mut [f32], queue: &mut [u32], g: usize) {
    let mut id = MARKED;
    let mut best_id = EMPTY;
    let mut best_size = 0;
    for p in 0..g * g {
        if mask[p] == INSIDE {
            id += 1.0;
            let size = flood(mask, queue, g, p, INSIDE, id);
            if size > best_size {
                best_size = size;
                best_id = id;
            }
        }
    }
    for m in mask.iter_mut() {
        *m = if best_id != EMPTY && *m == best_id {
            INSIDE
        } else {
            EMPTY
        };
    }
}

/// Fills both empty pixels of every 2×2 block whose inside pixels touch only diagonally, so that
/// the outline never meets itself at a corner. Repeats (bounded) while a pass filled something.
pub(super) fn fill_pinches(mask: &mut [f32], g: usize) {
    for _ in 0..PINCH_PASSES {
        let mut changed = false;
        for j in 0..g - 1 {
            for i in 0..g - 1 {
                let a = j * g + i;
                let (b, c, d) = (a + 1, a + g, a + g + 1);
                let diag = mask[a] == INSIDE && mask[d] == INSIDE;
                let anti = mask[b] == INSIDE && mask[c] == INSIDE;
                if diag != anti {
                    let (e0, e1) = if diag { (b, c) } else { (a, d) };
                    if mask[e0] == EMPTY && mask[e1] == EMPTY {
                        mask[e0] = INSIDE;
                        mask[e1] = INSIDE;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return;
        }
    }
}

/// Makes every pixel not 4-reachable from the raster corner through empty pixels inside.
pub(super) fn fill_holes(mask: &mut [f32], queue: &mut [u32], g: usize) {
    flood(mask, queue, g, 0, EMPTY, MARKED);
    for m in mask.iter_mut() {
        *m = if *m == MARKED { EMPTY } else { INSIDE };
    }
}
