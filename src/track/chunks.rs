//! Close pairs of a closed polyline by chunk bounding boxes.
//!
//! The points are cut into chunks of [`CHUNK`] consecutive points; each chunk gets an
//! axis-aligned box. A pair of points closer than `reach` lies in two chunks whose boxes,
//! one grown by `reach`, overlap, so only those chunk pairs are searched point by point. Along
//! a track, a chunk's box overlaps its two neighbours and rarely anything else, so a query costs
//! about `n / CHUNK` box tests per chunk plus the point pairs of neighbouring chunks — far less
//! than a hash grid, and with fixed-size scratch (one box per chunk), as a GPU lane needs.
//! Pairs whose cyclic index gap is at most `min_gap` are never visited (callers pass a gap under
//! which points are neighbours along the curve), and chunk pairs made only of such pairs are
//! skipped without a box test.
//!
//! Tests that only ask whether some pair fails ([`any_close_pair_fails`]) do not need that order:
//! they test the chunk pairs a few chunks apart a diagonal (all pairs `k`, `k + d`) at a time,
//! many at once, at about two instructions a pair, and farther ones through boxes of groups of
//! [`GROUP`] chunks, which along a track are rarely near another group but their neighbours.

use crate::geom::Vec2;

/// Points per chunk.
pub const CHUNK: usize = 4;

/// Chunks per group of [`any_close_pair_fails`]'s boxes of groups.
pub const GROUP: usize = 4;

/// Scratch points needed for the boxes of `n` points: two per chunk (min and max corners, or
/// four bounds) and two per group of [`GROUP`] chunks (four bounds); at most `n` for `n ≥ 8`.
pub fn boxes_len(n: usize) -> usize {
    let chunks = n.div_ceil(CHUNK);
    2 * (chunks + chunks.div_ceil(GROUP))
}

/// The least of `b` by compare-and-select from `∞` ([`chunk_box`]'s, NaN left out).
#[inline(always)]
fn least(b: &[f32]) -> f32 {
    b.iter()
        .fold(f32::INFINITY, |m, &v| if v < m { v } else { m })
}

/// The greatest of `b` by compare-and-select from `−∞` ([`chunk_box`]'s, NaN left out).
#[inline(always)]
fn greatest(b: &[f32]) -> f32 {
    b.iter()
        .fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

/// The bounding box `(lo, hi)` of `pts`, NaN coordinates left out (as `f32::min`/`max` do; the
/// box of no finite point is inverted, `lo = ∞`, `hi = −∞`) by one compare-and-select per bound,
/// without `f32::min`'s separate NaN test: only the sign of a zero bound can differ from
/// `f32::min`'s, and the box tests compare −0 and +0 equal.
#[inline(always)]
fn chunk_box(pts: &[Vec2]) -> (Vec2, Vec2) {
    let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
    for p in pts {
        for a in 0..2 {
            lo[a] = if p[a] < lo[a] { p[a] } else { lo[a] };
            hi[a] = if p[a] > hi[a] { p[a] } else { hi[a] };
        }
    }
    (lo.into(), hi.into())
}

/// Calls `visit(i, j)` (`i < j`) for every pair of points with cyclic index gap > `min_gap` that
/// could be closer than `reach`, until `visit` returns `false`; returns whether all were visited.
/// `boxes` is scratch of at least [`boxes_len`]`(pts.len())` points.
///
/// The pairs come in the kernel twin's order (`chunks.cuh`): chunk `a`, then chunk `b ≥ a`, then
/// `i`, then `j`, so callers that accumulate in it get the twin's sums. Callers that only test
/// pairs use [`any_close_pair_fails`], which visits the same pairs, on long curves faster and in
/// another order.
pub fn for_close_pairs(
    pts: &[Vec2],
    boxes: &mut [Vec2],
    reach: f32,
    min_gap: usize,
    mut visit: impl FnMut(usize, usize) -> bool,
) -> bool {
    let n = pts.len();
    let chunks = n.div_ceil(CHUNK);
    for k in 0..chunks {
        let (lo, hi) = chunk_box(&pts[k * CHUNK..((k + 1) * CHUNK).min(n)]);
        boxes[2 * k] = lo;
        boxes[2 * k + 1] = hi;
    }
    // Chunk b after chunk a holds a pair farther than `min_gap` apart only if its far end is
    // more than `min_gap` past a's start (from `first` on) and, going round the loop the other
    // way, if its near end is less than n − `min_gap` past a's end (before `last`).
    let first = (min_gap + 2).div_ceil(CHUNK).saturating_sub(1);
    for ka in 0..chunks {
        let (alo, ahi) = (boxes[2 * ka], boxes[2 * ka + 1]);
        let (alo, ahi) = (
            [alo[0] - reach, alo[1] - reach],
            [ahi[0] + reach, ahi[1] + reach],
        );
        let a_start = ka * CHUNK;
        let a_end = (a_start + CHUNK).min(n);
        let last = (n + a_end - 1)
            .saturating_sub(min_gap)
            .div_ceil(CHUNK)
            .min(chunks);
        for kb in (ka + first).min(chunks)..last {
            let (blo, bhi) = (boxes[2 * kb], boxes[2 * kb + 1]);
            // NaN boxes compare false and are searched: the caller's test decides.
            let apart = blo[0] > ahi[0] || alo[0] > bhi[0] || blo[1] > ahi[1] || alo[1] > bhi[1];
            if apart {
                continue;
            }
            if !chunk_pairs(n, min_gap, ka, kb, &mut visit) {
                return false;
            }
        }
    }
    true
}

/// Whether some pair [`for_close_pairs`] would visit fails `ok` — the same pairs, in an
/// unspecified order. `boxes` is scratch of at least [`boxes_len`]`(pts.len())` points.
///
/// The chunk pairs `(ka, ka + d)` of `for_close_pairs`'s range are those with `first ≤ d <
/// d_end`, the same bounds for every `ka` when `d ≥ 1` (see `d_end` below; `d = 0`, only when
/// `first = 0`, goes chunk by chunk), and they are tested with its box test (chunk `ka` grown by
/// `reach`) in two parts:
/// - `d < NEAR_DIAGONALS`, the chunks a few apart along the curve, a diagonal at a time: the
///   boxes are kept one array per bound, so the pairs of a diagonal are tested all at once,
///   branch-free (many per instruction), into one byte per pair, and only the pairs that meet
///   are searched, found eight bytes at a time (`meeting_pair_fails`);
/// - farther ones through boxes of groups of [`GROUP`] chunks (each bound the least or greatest
///   of its chunks', so exactly their union): a chunk pair `d ≥ 2·GROUP` apart lies in groups
///   at least two apart, and group `ga`, grown by `reach`, is tested against each group
///   `gb ≥ ga + 2` whose chunk pairs reach `d_end` (up to 64 groups at a time, branch-free,
///   into a bit mask); only where the group boxes meet are their chunk pairs tested. Group
///   `gb`'s box apart (strictly, on an axis) from group `ga`'s grown one leaves every chunk box
///   of `gb` apart from every grown chunk box of `ga`: a group's bounds are at least as low
///   (high) as each of its chunks', and `x − reach`, `x + reach` round monotonically in `x`.
///
/// So the chunk pairs searched, and the point pairs visited, are `for_close_pairs`'s. A NaN
/// bound (a NaN reach, or an infinite one against an infinite bound) compares false, never
/// apart, at either level, so those pairs are searched as `for_close_pairs` searches them.
pub fn any_close_pair_fails(
    pts: &[Vec2],
    boxes: &mut [Vec2],
    reach: f32,
    min_gap: usize,
    mut ok: impl FnMut(usize, usize) -> bool,
) -> bool {
    let n = pts.len();
    // No pair of `n` points has a cyclic gap past `n / 2`: a larger gap is the same as `n`.
    let min_gap = min_gap.min(n);
    let chunks = n.div_ceil(CHUNK);
    let groups = chunks.div_ceil(GROUP);
    let bounds: &mut [f32] =
        &mut bytemuck::cast_slice_mut(&mut boxes[..boxes_len(n)])[..4 * (chunks + groups)];
    let (chunk_bounds, group_bounds) = bounds.split_at_mut(4 * chunks);
    let (lo_x, rest) = chunk_bounds.split_at_mut(chunks);
    let (lo_y, rest) = rest.split_at_mut(chunks);
    let (hi_x, hi_y) = rest.split_at_mut(chunks);
    // The boxes of the full chunks one coordinate at a time (`chunk_box`'s compare-and-select,
    // in its order, one `min`/`max` instruction each), then the last chunk's.
    let full = n / CHUNK;
    let flat: &[f32] = bytemuck::cast_slice(&pts[..full * CHUNK]);
    for ((((c, lx), ly), hx), hy) in flat
        .chunks_exact(2 * CHUNK)
        .zip(lo_x.iter_mut())
        .zip(lo_y.iter_mut())
        .zip(hi_x.iter_mut())
        .zip(hi_y.iter_mut())
    {
        let bound = |start: usize, pick: fn(f32, f32) -> bool, init: f32| {
            (start..2 * CHUNK)
                .step_by(2)
                .fold(init, |m, i| if pick(c[i], m) { c[i] } else { m })
        };
        *lx = bound(0, |v, m| v < m, f32::INFINITY);
        *ly = bound(1, |v, m| v < m, f32::INFINITY);
        *hx = bound(0, |v, m| v > m, f32::NEG_INFINITY);
        *hy = bound(1, |v, m| v > m, f32::NEG_INFINITY);
    }
    if full < chunks {
        let (lo, hi) = chunk_box(&pts[full * CHUNK..]);
        (lo_x[full], lo_y[full], hi_x[full], hi_y[full]) = (lo[0], lo[1], hi[0], hi[1]);
    }
    let (lo_x, lo_y, hi_x, hi_y) = (&*lo_x, &*lo_y, &*hi_x, &*hi_y);
    let (g_lo_x, rest) = group_bounds.split_at_mut(groups);
    let (g_lo_y, rest) = rest.split_at_mut(groups);
    let (g_hi_x, g_hi_y) = rest.split_at_mut(groups);
    // Each group's bounds from its chunks' (the same compare-and-select); the last group may
    // hold fewer chunks.
    let full_groups = chunks / GROUP;
    for (g, (((lx, ly), hx), hy)) in lo_x
        .chunks_exact(GROUP)
        .zip(lo_y.chunks_exact(GROUP))
        .zip(hi_x.chunks_exact(GROUP))
        .zip(hi_y.chunks_exact(GROUP))
        .enumerate()
    {
        (g_lo_x[g], g_lo_y[g]) = (least(lx), least(ly));
        (g_hi_x[g], g_hi_y[g]) = (greatest(hx), greatest(hy));
    }
    if full_groups < groups {
        let r = full_groups * GROUP..chunks;
        (g_lo_x[full_groups], g_lo_y[full_groups]) =
            (least(&lo_x[r.clone()]), least(&lo_y[r.clone()]));
        (g_hi_x[full_groups], g_hi_y[full_groups]) =
            (greatest(&hi_x[r.clone()]), greatest(&hi_y[r]));
    }
    let (g_lo_x, g_lo_y, g_hi_x, g_hi_y) = (&*g_lo_x, &*g_lo_y, &*g_hi_x, &*g_hi_y);
    let bounds_of = Bounds {
        lo_x,
        lo_y,
        hi_x,
        hi_y,
    };
    let first = (min_gap + 2).div_ceil(CHUNK).saturating_sub(1);
    if first == 0 {
        for k in 0..chunks {
            let a_end = ((k + 1) * CHUNK).min(n);
            if CHUNK * k + min_gap + 1 < n + a_end
                && bounds_of.meet(k, k, reach)
                && !chunk_pairs(n, min_gap, k, k, &mut ok)
            {
                return true;
            }
        }
    }
    // For `d ≥ 1`, `for_close_pairs`'s bound `CHUNK·kb + min_gap + 1 < n + a_end` reads
    // `CHUNK·d + min_gap + 1 < n + CHUNK` (`a_end = (ka + 1)·CHUNK` for every chunk but the last,
    // which has no `kb > ka`): `d < ⌈(n + CHUNK − 1 − min_gap) / CHUNK⌉`.
    let d_end = (n + CHUNK - 1 - min_gap).div_ceil(CHUNK).min(chunks);
    for d in first.max(1)..d_end.min(NEAR_DIAGONALS) {
        let m = chunks - d;
        if meeting_pair_fails(&bounds_of, m, d, reach, |ka| {
            !chunk_pairs(n, min_gap, ka, ka + d, &mut ok)
        }) {
            return true;
        }
    }
    let d_far = first.max(NEAR_DIAGONALS);
    // Group `gb`'s chunk pairs with group `ga`'s are from `(gb − ga − 1)·GROUP + 1` apart: those
    // below `d_end` lie in `gb < ga + 1 + ⌈(d_end − 1) / GROUP⌉`.
    let g_span = 1 + d_end.saturating_sub(1).div_ceil(GROUP);
    for ga in 0..groups {
        let (alo_x, alo_y) = (g_lo_x[ga] - reach, g_lo_y[ga] - reach);
        let (ahi_x, ahi_y) = (g_hi_x[ga] + reach, g_hi_y[ga] + reach);
        let gb_end = (ga + g_span).min(groups);
        // The group tests of up to 64 groups `gb` at a time, branch-free into a bit mask, then
        // only the groups that meet, in increasing `gb` (the far pairs meet in few places).
        let mut block = ga + 2;
        while block < gb_end {
            let end = (block + 64).min(gb_end);
            let mut meets = 0u64;
            for gb in block..end {
                let apart = (g_lo_x[gb] > ahi_x)
                    | (alo_x > g_hi_x[gb])
                    | (g_lo_y[gb] > ahi_y)
                    | (alo_y > g_hi_y[gb]);
                meets |= u64::from(!apart) << (gb - block);
            }
            while meets != 0 {
                let gb = block + meets.trailing_zeros() as usize;
                meets &= meets - 1;
                // The chunk pairs `d_far ≤ kb − ka < d_end` of the two groups.
                for ka in ga * GROUP..(ga + 1) * GROUP {
                    let b_start = (gb * GROUP).max(ka + d_far);
                    let b_end = ((gb + 1) * GROUP).min(chunks).min(ka + d_end);
                    for kb in b_start..b_end {
                        if bounds_of.meet(ka, kb, reach)
                            && !chunk_pairs(n, min_gap, ka, kb, &mut ok)
                        {
                            return true;
                        }
                    }
                }
            }
            block = end;
        }
    }
    false
}

/// The chunk boxes of [`any_close_pair_fails`], one array per bound.
struct Bounds<'a> {
    lo_x: &'a [f32],
    lo_y: &'a [f32],
    hi_x: &'a [f32],
    hi_y: &'a [f32],
}

impl Bounds<'_> {
    /// Whether box `ka` grown by `reach` meets box `kb` (`for_close_pairs`'s test: not strictly
    /// apart on an axis; NaN meets).
    #[inline(always)]
    fn meet(&self, ka: usize, kb: usize, reach: f32) -> bool {
        !((self.lo_x[kb] > self.hi_x[ka] + reach)
            | (self.lo_x[ka] - reach > self.hi_x[kb])
            | (self.lo_y[kb] > self.hi_y[ka] + reach)
            | (self.lo_y[ka] - reach > self.hi_y[kb]))
    }
}

/// Whether `fail(ka)` holds for some `ka < m` whose box, grown by `reach`, meets box `ka + d`
/// ([`Bounds::meet`]), trying those `ka` in increasing order: the box tests of [`MEET_BLOCK`]
/// pairs at a time branch-free into one byte each (many per instruction), then only the pairs
/// whose boxes meet, found eight bytes at a time (`m + d` at most the boxes). Along a track the
/// boxes of a near diagonal meet in a few runs (where the track bends back), so a test pair by
/// pair would branch both ways at every run.
#[inline(always)]
fn meeting_pair_fails(
    b: &Bounds<'_>,
    m: usize,
    d: usize,
    reach: f32,
    mut fail: impl FnMut(usize) -> bool,
) -> bool {
    let mut start = 0;
    while start < m {
        let len = (m - start).min(MEET_BLOCK);
        let mut flags = [0u8; MEET_BLOCK];
        if meet_flags(b, start, d, reach, &mut flags[..len]) {
            for (w, word) in flags.chunks_exact(8).enumerate() {
                // Byte `t` of `bits` is 1 where pair `start + 8·w + t` meets, else 0.
                let mut bits = u64::from_le_bytes(word.try_into().expect("eight flags"));
                while bits != 0 {
                    let ka = start + 8 * w + (bits.trailing_zeros() / 8) as usize;
                    if fail(ka) {
                        return true;
                    }
                    bits &= bits - 1;
                }
            }
        }
        start += len;
    }
    false
}

/// Pairs per block of [`meeting_pair_fails`]'s box tests.
const MEET_BLOCK: usize = 64;

/// `flags[k] = 1` where box `start + k` (grown by `reach`) meets box `start + k + d`
/// ([`Bounds::meet`]'s test), else 0, for every `k < flags.len()`; whether some meet.
#[inline(always)]
fn meet_flags(b: &Bounds<'_>, start: usize, d: usize, reach: f32, flags: &mut [u8]) -> bool {
    let (ra, rb) = (
        start..start + flags.len(),
        start + d..start + d + flags.len(),
    );
    let (a_lo_x, a_lo_y) = (&b.lo_x[ra.clone()], &b.lo_y[ra.clone()]);
    let (a_hi_x, a_hi_y) = (&b.hi_x[ra.clone()], &b.hi_y[ra]);
    let (b_lo_x, b_lo_y) = (&b.lo_x[rb.clone()], &b.lo_y[rb.clone()]);
    let (b_hi_x, b_hi_y) = (&b.hi_x[rb.clone()], &b.hi_y[rb]);
    let mut some = 0u8;
    for (k, f) in flags.iter_mut().enumerate() {
        let apart = (b_lo_x[k] > a_hi_x[k] + reach)
            | (a_lo_x[k] - reach > b_hi_x[k])
            | (b_lo_y[k] > a_hi_y[k] + reach)
            | (a_lo_y[k] - reach > b_hi_y[k]);
        *f = u8::from(!apart);
        some |= *f;
    }
    some != 0
}

/// Chunk distances `d` below which [`any_close_pair_fails`] tests the chunk pairs `(k, k + d)` a
/// diagonal at a time rather than through the groups: the pairs of groups less than two apart.
const NEAR_DIAGONALS: usize = 2 * GROUP;

/// The point pairs `(i, j)`, `i < j`, of chunks `ka ≤ kb` with cyclic gap > `min_gap`, in order.
///
/// For `i < j < n` the cyclic gap `min(j − i, n − (j − i))` exceeds `min_gap` exactly when
/// `i + min_gap < j < i + n − min_gap`, so each `i` visits one range of `j` with no per-pair
/// test: chunk pairs at the edge of the skipped gap (most of the pairs searched on long
/// curves) hold only a few pairs past it.
#[inline(always)]
fn chunk_pairs(
    n: usize,
    min_gap: usize,
    ka: usize,
    kb: usize,
    visit: &mut impl FnMut(usize, usize) -> bool,
) -> bool {
    let (a_start, a_end) = (ka * CHUNK, ((ka + 1) * CHUNK).min(n));
    let b_end = ((kb + 1) * CHUNK).min(n);
    // Only the `i` whose range can be non-empty: `i + min_gap + 1 < b_end`, and
    // `kb·CHUNK ≤ j < i + n − min_gap` (`j ≥ kb·CHUNK` also when `ka = kb`). A chunk pair just
    // past the skipped gap (along a track, the next chunk but one or two) keeps one or two `i`.
    let i_start = a_start.max(
        (kb * CHUNK)
            .saturating_add(min_gap)
            .saturating_add(1)
            .saturating_sub(n),
    );
    let i_end = a_end.min(b_end.saturating_sub(min_gap).saturating_sub(1));
    for i in i_start..i_end {
        let j_start = if ka == kb { i + 1 } else { kb * CHUNK };
        // Saturating: a `min_gap` of `n / 2` or more leaves the range empty, never wraps.
        let j_lo = j_start.max(i.saturating_add(min_gap).saturating_add(1));
        let j_hi = b_end.min((i + n).saturating_sub(min_gap));
        for j in j_lo..j_hi {
            if !visit(i, j) {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_close_pair_of_a_wiggly_loop() {
        for n in [9usize, 17, 64, 203] {
            for min_gap in [0usize, 1, 3, 6, 9] {
                check(n, min_gap);
            }
        }
    }

    /// The chunk-range bound (`first`, `last`): with every pair in reach, exactly the pairs of
    /// cyclic gap > `min_gap` are visited, for every small `n` and gap, so the skipped chunk
    /// pairs never hold a pair that needs a test.
    #[test]
    fn chunk_range_skips_only_neighbour_pairs() {
        for n in 1usize..=70 {
            let pts: Vec<Vec2> = (0..n).map(|i| Vec2::new(i as f32, 0.0)).collect();
            let mut boxes = vec![Vec2::ZERO; boxes_len(n)];
            for min_gap in 0..=n / 2 + 1 {
                let mut seen = std::collections::BTreeSet::new();
                for_close_pairs(&pts, &mut boxes, f32::INFINITY, min_gap, |i, j| {
                    assert!(seen.insert((i, j)), "n {n}, gap {min_gap}: {i},{j} twice");
                    true
                });
                let want: std::collections::BTreeSet<_> = (0..n)
                    .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                    .filter(|&(i, j)| (j - i).min(n - (j - i)) > min_gap)
                    .collect();
                assert_eq!(seen, want, "n {n}, gap {min_gap}");
            }
        }
    }

    /// `boxes_len` stays within `n` points from `n = 8` on (the callers' scratch).
    #[test]
    fn boxes_fit_in_n_points() {
        for n in 8..5000 {
            assert!(boxes_len(n) <= n, "{n}");
        }
    }

    /// `any_close_pair_fails` sees exactly the pairs `for_close_pairs` visits: on loops of every
    /// chunk count modulo a group, with gaps that leave both levels (the diagonals and the
    /// groups) work or only one, with reaches that make the group boxes meet everywhere
    /// (infinite, NaN) or only near, and with a NaN point.
    #[test]
    fn unordered_pairs_are_the_ordered_ones() {
        for n in [8usize, 9, 17, 33, 46, 64, 79, 203, 517] {
            for min_gap in [0usize, 1, 3, 6, 9, 29, 31, 40, 70] {
                let pts: Vec<Vec2> = (0..n)
                    .map(|i| {
                        let t = i as f32 / n as f32 * std::f32::consts::TAU;
                        let r = 50.0 + 40.0 * crate::math::sin(5.0 * t);
                        Vec2::new(r * crate::math::cos(t), r * crate::math::sin(t))
                    })
                    .collect();
                let mut boxes = vec![Vec2::ZERO; boxes_len(n)];
                let mut with_nan = pts.clone();
                with_nan[n / 3] = Vec2::new(f32::NAN, 1.0);
                for (pts, reach) in [
                    (&pts, 0.5f32),
                    (&pts, 6.0),
                    (&pts, 30.0),
                    (&pts, f32::INFINITY),
                    (&pts, f32::NAN),
                    (&with_nan, 6.0),
                    (&with_nan, f32::NAN),
                ] {
                    let mut ordered = std::collections::BTreeSet::new();
                    for_close_pairs(pts, &mut boxes, reach, min_gap, |i, j| {
                        ordered.insert((i, j));
                        true
                    });
                    let mut unordered = std::collections::BTreeSet::new();
                    assert!(!any_close_pair_fails(
                        pts,
                        &mut boxes,
                        reach,
                        min_gap,
                        |i, j| {
                            assert!(unordered.insert((i, j)), "{i},{j} twice");
                            true
                        }
                    ));
                    assert_eq!(ordered, unordered, "n {n}, gap {min_gap}, reach {reach}");
                }
            }
        }
    }

    fn check(n: usize, min_gap: usize) {
        let pts: Vec<Vec2> = (0..n)
            .map(|i| {
                let t = i as f32 / n as f32 * std::f32::consts::TAU;
                let r = 50.0 + 40.0 * crate::math::sin(5.0 * t);
                Vec2::new(r * crate::math::cos(t), r * crate::math::sin(t))
            })
            .collect();
        let mut boxes = vec![Vec2::ZERO; boxes_len(n)];
        // Reach a few points past the gap, so that the pairs at the gap's edge are close.
        let step = (0..n)
            .map(|i| {
                let (a, b) = (pts[i], pts[(i + 1) % n]);
                ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
            })
            .fold(0.0f32, f32::max);
        let reach = (min_gap as f32 + 2.5) * step;
        let mut seen = std::collections::BTreeSet::new();
        assert!(for_close_pairs(&pts, &mut boxes, reach, min_gap, |i, j| {
            assert!(
                i < j && seen.insert((i, j)),
                "pair {i},{j} twice or unordered"
            );
            true
        }));
        for i in 0..n {
            for j in i + 1..n {
                let gap = (j - i).min(n - (j - i));
                let d = ((pts[i][0] - pts[j][0]).powi(2) + (pts[i][1] - pts[j][1]).powi(2)).sqrt();
                if gap > min_gap && d < reach {
                    assert!(
                        seen.contains(&(i, j)),
                        "n {n}, gap {min_gap}: pair {i},{j} missed"
                    );
                }
                if gap <= min_gap {
                    assert!(!seen.contains(&(i, j)));
                }
            }
        }
        if !seen.is_empty() {
            let mut calls = 0;
            assert!(!for_close_pairs(
                &pts,
                &mut boxes,
                reach,
                min_gap,
                |_, _| {
                    calls += 1;
                    false
                }
            ));
            assert_eq!(calls, 1);
        }
    }
}
