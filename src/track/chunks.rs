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
//! they find the chunk pairs by a sweep over the boxes sorted along x, testing only the chunks
//! whose x ranges come within reach of each other instead of all `(n / CHUNK)² / 2` pairs.

use crate::geom::Vec2;

/// Points per chunk.
pub const CHUNK: usize = 4;

/// Scratch points needed for the boxes of `n` points: two per chunk (min and max corners), and
/// the sweep's sort keys (one `u64` per chunk); at most `n` for `n ≥ 8`.
pub fn boxes_len(n: usize) -> usize {
    3 * n.div_ceil(CHUNK)
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

/// Whether the box `[blo, bhi]` lies apart from `[alo, ahi]` (strictly, on some axis). NaN
/// compares false: a NaN box is never apart.
#[inline(always)]
fn apart(alo: Vec2, ahi: Vec2, blo: Vec2, bhi: Vec2) -> bool {
    blo[0] > ahi[0] || alo[0] > bhi[0] || blo[1] > ahi[1] || alo[1] > bhi[1]
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
/// The chunk boxes are sorted by their low x; a sweep pairs each box with the boxes after it in
/// that order until their low x passes its high x by more than `|reach|` plus 8 ε relative
/// (past that every box is apart from it on x whichever of the two is grown, however the sums
/// round: a few roundings of ε relative each); boxes that far apart on y are passed over the
/// same way. Each pair met is put to `for_close_pairs`'s own tests — the chunk-range bound and the
/// box test with the lower-index chunk grown by `reach` — so the chunk pairs searched, and the
/// point pairs visited, are the same. Boxes with NaN bounds (and a NaN reach) fall back to the
/// flat scan's order: they never break the sweep.
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
    let (corners, rest) = boxes[..boxes_len(n)].split_at_mut(2 * chunks);
    for k in 0..chunks {
        let (lo, hi) = chunk_box(&pts[k * CHUNK..((k + 1) * CHUNK).min(n)]);
        corners[2 * k] = lo;
        corners[2 * k + 1] = hi;
    }
    // Sort keys: the low x as ordered bits (`f32::total_cmp`'s order) above the chunk index.
    let order: &mut [u64] = &mut bytemuck::cast_slice_mut(rest)[..chunks];
    for (k, o) in order.iter_mut().enumerate() {
        let bits = corners[2 * k][0].to_bits();
        let ordered = bits ^ ((((bits as i32) >> 31) as u32) >> 1) ^ 0x8000_0000;
        *o = (u64::from(ordered) << 32) | k as u64;
    }
    order.sort_unstable();
    let first = (min_gap + 2).div_ceil(CHUNK).saturating_sub(1);
    // The chunk pairs (ka, kb), ka ≤ kb, that `for_close_pairs` searches: `kb < last` there is
    // `kb < ⌈(n + a_end − 1 − min_gap)⁺ / CHUNK⌉` (and `kb < chunks`, always true here), that
    // is `CHUNK·kb + min_gap + 1 < n + a_end`, without the division (no overflow: `min_gap ≤ n`).
    let in_range = |ka: usize, kb: usize| {
        let a_end = ((ka + 1) * CHUNK).min(n);
        kb >= ka + first && CHUNK * kb + min_gap + 1 < n + a_end
    };
    let meet = |ka: usize, kb: usize| {
        let (alo, ahi) = (corners[2 * ka], corners[2 * ka + 1]);
        let (alo, ahi) = (
            Vec2::new(alo[0] - reach, alo[1] - reach),
            Vec2::new(ahi[0] + reach, ahi[1] + reach),
        );
        !apart(alo, ahi, corners[2 * kb], corners[2 * kb + 1])
    };
    if first == 0 {
        for k in 0..chunks {
            if in_range(k, k) && meet(k, k) && !chunk_pairs(n, min_gap, k, k, &mut ok) {
                return true;
            }
        }
    }
    let slack = reach.abs();
    for (r, &a) in order.iter().enumerate() {
        let a = a as u32 as usize;
        let (lo_a, hi_a) = (corners[2 * a], corners[2 * a + 1]);
        let grown = |v: f32| slack + (v.abs() + slack) * (8.0 * f32::EPSILON);
        let limit = hi_a[0] + grown(hi_a[0]);
        // The same margin on y, both ways: a box past these is apart from a's on y.
        let (above, below) = (hi_a[1] + grown(hi_a[1]), lo_a[1] - grown(lo_a[1]));
        for &b in &order[r + 1..] {
            let b = b as u32 as usize;
            let lo_b = corners[2 * b];
            if lo_b[0] > limit {
                break;
            }
            if lo_b[1] > above || corners[2 * b + 1][1] < below {
                continue;
            }
            let (ka, kb) = (a.min(b), a.max(b));
            if in_range(ka, kb) && meet(ka, kb) && !chunk_pairs(n, min_gap, ka, kb, &mut ok) {
                return true;
            }
        }
    }
    false
}

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

    /// `any_close_pair_fails` sees exactly the pairs `for_close_pairs` visits.
    #[test]
    fn unordered_pairs_are_the_ordered_ones() {
        for n in [8usize, 9, 17, 64, 203, 517] {
            for min_gap in [0usize, 1, 3, 6, 9] {
                let pts: Vec<Vec2> = (0..n)
                    .map(|i| {
                        let t = i as f32 / n as f32 * std::f32::consts::TAU;
                        let r = 50.0 + 40.0 * crate::math::sin(5.0 * t);
                        Vec2::new(r * crate::math::cos(t), r * crate::math::sin(t))
                    })
                    .collect();
                let mut boxes = vec![Vec2::ZERO; boxes_len(n)];
                for reach in [0.5f32, 6.0, 30.0] {
                    let mut ordered = std::collections::BTreeSet::new();
                    for_close_pairs(&pts, &mut boxes, reach, min_gap, |i, j| {
                        ordered.insert((i, j));
                        true
                    });
                    let mut unordered = std::collections::BTreeSet::new();
                    assert!(!any_close_pair_fails(
                        &pts,
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
