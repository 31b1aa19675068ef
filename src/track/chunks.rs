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

use crate::geom::Vec2;

/// Points per chunk.
pub const CHUNK: usize = 4;

/// Children per node of the box tree over the chunk boxes.
const FANOUT: usize = 4;

/// Levels the box tree can have: enough for `FANOUT^(MAX_LEVELS − 1)` chunks, far beyond any
/// addressable point count.
const MAX_LEVELS: usize = 32;

/// Boxes of a tree over `chunks` leaf boxes: the leaves, then each level's `div_ceil(FANOUT)` of
/// the one below, up to a single root.
fn tree_nodes(chunks: usize) -> usize {
    let (mut count, mut total) = (chunks, chunks);
    while count > 1 {
        count = count.div_ceil(FANOUT);
        total += count;
    }
    total
}

/// Scratch points needed for the boxes of `n` points (two per tree node: min and max corners;
/// at most `n` for `n ≥ 8`).
pub fn boxes_len(n: usize) -> usize {
    2 * tree_nodes(n.div_ceil(CHUNK))
}

/// Whether the box `[blo, bhi]` lies apart from `[alo, ahi]` (strictly, on some axis). NaN
/// compares false: a NaN box is never apart.
#[inline(always)]
fn apart(alo: Vec2, ahi: Vec2, blo: Vec2, bhi: Vec2) -> bool {
    blo[0] > ahi[0] || alo[0] > bhi[0] || blo[1] > ahi[1] || alo[1] > bhi[1]
}

/// A tree of axis-aligned boxes over consecutive leaf boxes (`FANOUT` children per node), in
/// caller scratch: `boxes[2k]`, `boxes[2k + 1]` are the min and max corners of node `k`, the
/// leaves first, then each level up to the root.
///
/// A node's box is the `min`/`max` of its children's corners: exact, and `f32::min`/`max` skip
/// NaN, so no node box holds NaN when the leaves do not. A node box apart from a query box
/// therefore proves every leaf under it apart (each leaf corner lies inside the node's, and the
/// comparisons are monotone); a NaN query box is apart from nothing. So [`Self::for_overlapping`]
/// visits exactly the leaves the flat scan `for kb in from..to { if !apart(..) }` visits, in the
/// same order.
pub struct BoxTree<'a> {
    boxes: &'a [Vec2],
    /// First node of each level.
    start: [usize; MAX_LEVELS],
    /// Nodes per level.
    count: [usize; MAX_LEVELS],
    levels: usize,
}

impl<'a> BoxTree<'a> {
    /// Builds the levels above `leaves` leaf boxes already in `boxes[..2·leaves]` (no NaN
    /// corners). `boxes` holds at least `2 · tree_nodes(leaves)` points.
    pub fn build(boxes: &'a mut [Vec2], leaves: usize) -> Self {
        let mut start = [0; MAX_LEVELS];
        let mut count = [0; MAX_LEVELS];
        count[0] = leaves;
        let mut levels = 1;
        let mut next = leaves;
        while count[levels - 1] > 1 {
            let (below, below_count) = (start[levels - 1], count[levels - 1]);
            let nodes = below_count.div_ceil(FANOUT);
            for t in 0..nodes {
                let (mut lo, mut hi) = (
                    boxes[2 * (below + t * FANOUT)],
                    boxes[2 * (below + t * FANOUT) + 1],
                );
                for c in t * FANOUT + 1..((t + 1) * FANOUT).min(below_count) {
                    let (clo, chi) = (boxes[2 * (below + c)], boxes[2 * (below + c) + 1]);
                    lo = Vec2::new(lo[0].min(clo[0]), lo[1].min(clo[1]));
                    hi = Vec2::new(hi[0].max(chi[0]), hi[1].max(chi[1]));
                }
                boxes[2 * (next + t)] = lo;
                boxes[2 * (next + t) + 1] = hi;
            }
            start[levels] = next;
            count[levels] = nodes;
            next += nodes;
            levels += 1;
        }
        Self {
            boxes,
            start,
            count,
            levels,
        }
    }

    /// Leaf `k`'s box.
    #[inline(always)]
    pub fn leaf(&self, k: usize) -> (Vec2, Vec2) {
        (self.boxes[2 * k], self.boxes[2 * k + 1])
    }

    /// Calls `visit(k)` for every leaf `k` in `from..to`, in increasing order, whose box is not
    /// [`apart`] from `[lo, hi]`, until `visit` returns `false`; returns whether all were
    /// visited.
    #[inline]
    pub fn for_overlapping(
        &self,
        lo: Vec2,
        hi: Vec2,
        from: usize,
        to: usize,
        visit: &mut impl FnMut(usize) -> bool,
    ) -> bool {
        if from >= to || self.count[0] == 0 {
            return true;
        }
        let top = self.levels - 1;
        self.descend(top, 0, lo, hi, from, to, visit)
    }

    #[allow(clippy::too_many_arguments)]
    fn descend(
        &self,
        level: usize,
        node: usize,
        lo: Vec2,
        hi: Vec2,
        from: usize,
        to: usize,
        visit: &mut impl FnMut(usize) -> bool,
    ) -> bool {
        if level == 0 {
            let (blo, bhi) = self.leaf(node);
            return apart(lo, hi, blo, bhi) || visit(node);
        }
        // Children of `node` whose leaf ranges meet `from..to`: a level-(l−1) node covers
        // `FANOUT^(l−1)` leaves.
        let span = FANOUT.pow((level - 1) as u32);
        let first = (node * FANOUT).max(from / span);
        let end = ((node + 1) * FANOUT)
            .min(self.count[level - 1])
            .min(to.div_ceil(span));
        let base = self.start[level - 1];
        for c in first..end {
            if level > 1 {
                let (blo, bhi) = (self.boxes[2 * (base + c)], self.boxes[2 * (base + c) + 1]);
                if apart(lo, hi, blo, bhi) {
                    continue;
                }
            }
            if !self.descend(level - 1, c, lo, hi, from, to, visit) {
                return false;
            }
        }
        true
    }
}

/// Calls `visit(i, j)` (`i < j`) for every pair of points with cyclic index gap > `min_gap` that
/// could be closer than `reach`, until `visit` returns `false`; returns whether all were visited.
/// `boxes` is scratch of at least [`boxes_len`]`(pts.len())` points.
///
/// The pairs come in the order of the flat scan (chunk `a`, then chunk `b ≥ a` whose box meets
/// `a`'s grown by `reach`, then `i`, then `j`); the [`BoxTree`] only skips chunk boxes that scan
/// would find apart, so the order is the kernel twin's (`chunks.cuh`) and callers that
/// accumulate in it get the same sums.
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
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for p in &pts[k * CHUNK..((k + 1) * CHUNK).min(n)] {
            lo = [lo[0].min(p[0]), lo[1].min(p[1])];
            hi = [hi[0].max(p[0]), hi[1].max(p[1])];
        }
        boxes[2 * k] = lo.into();
        boxes[2 * k + 1] = hi.into();
    }
    let tree = BoxTree::build(boxes, chunks);
    // Chunk b after chunk a holds a pair farther than `min_gap` apart only if its far end is
    // more than `min_gap` past a's start (from `first` on) and, going round the loop the other
    // way, if its near end is less than n − `min_gap` past a's end (before `last`).
    let first = (min_gap + 2).div_ceil(CHUNK).saturating_sub(1);
    for ka in 0..chunks {
        let (alo, ahi) = tree.leaf(ka);
        let (alo, ahi) = (
            Vec2::new(alo[0] - reach, alo[1] - reach),
            Vec2::new(ahi[0] + reach, ahi[1] + reach),
        );
        let a_start = ka * CHUNK;
        let a_end = (a_start + CHUNK).min(n);
        let last = (n + a_end - 1)
            .saturating_sub(min_gap)
            .div_ceil(CHUNK)
            .min(chunks);
        let all = tree.for_overlapping(alo, ahi, (ka + first).min(chunks), last, &mut |kb| {
            let b_end = ((kb + 1) * CHUNK).min(n);
            for i in a_start..a_end {
                let j_start = if ka == kb { i + 1 } else { kb * CHUNK };
                for j in j_start..b_end {
                    let gap = j - i;
                    if gap.min(n - gap) > min_gap && !visit(i, j) {
                        return false;
                    }
                }
            }
            true
        });
        if !all {
            return false;
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

    /// The tree bound: `for_overlapping` visits exactly the leaves the flat scan finds not
    /// apart, in increasing order, for random boxes (some infinite, some empty as a chunk of
    /// NaN points makes them), random query boxes (NaN among them) and every leaf range; and
    /// `boxes_len` stays within `n` points from `n = 8` on.
    #[test]
    fn box_tree_matches_the_flat_scan() {
        let mut x = 0x1234_5679_u32;
        let mut unit = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as f32 / u32::MAX as f32
        };
        for leaves in [0usize, 1, 2, 3, 4, 5, 7, 16, 17, 63, 64, 65, 300] {
            let mut boxes = vec![Vec2::ZERO; 2 * tree_nodes(leaves)];
            for k in 0..leaves {
                let (cx, cy) = (100.0 * unit(), 100.0 * unit());
                let (w, h) = (10.0 * unit(), 10.0 * unit());
                let (lo, hi) = match k % 23 {
                    5 => (
                        Vec2::new(f32::INFINITY, f32::INFINITY),
                        Vec2::new(f32::NEG_INFINITY, f32::NEG_INFINITY),
                    ),
                    11 => (
                        Vec2::new(f32::NEG_INFINITY, cy),
                        Vec2::new(cx, f32::INFINITY),
                    ),
                    _ => (Vec2::new(cx, cy), Vec2::new(cx + w, cy + h)),
                };
                boxes[2 * k] = lo;
                boxes[2 * k + 1] = hi;
            }
            let flat: Vec<(Vec2, Vec2)> = (0..leaves)
                .map(|k| (boxes[2 * k], boxes[2 * k + 1]))
                .collect();
            let tree = BoxTree::build(&mut boxes, leaves);
            for q in 0..200 {
                let (cx, cy) = (100.0 * unit(), 100.0 * unit());
                let r = 20.0 * unit();
                let (lo, hi) = if q % 50 == 0 {
                    (Vec2::new(f32::NAN, cy), Vec2::new(cx, cy))
                } else {
                    (Vec2::new(cx - r, cy - r), Vec2::new(cx + r, cy + r))
                };
                let from = (unit() * (leaves + 1) as f32) as usize;
                let to = (unit() * (leaves + 2) as f32) as usize;
                let want: Vec<usize> = (from..to.min(leaves))
                    .filter(|&k| !apart(lo, hi, flat[k].0, flat[k].1))
                    .collect();
                let mut got = Vec::new();
                assert!(
                    tree.for_overlapping(lo, hi, from, to.min(leaves), &mut |k| {
                        got.push(k);
                        true
                    })
                );
                assert_eq!(got, want, "{leaves} leaves, {from}..{to}");
                if let Some(&stop) = want.get(1) {
                    let mut calls = Vec::new();
                    assert!(
                        !tree.for_overlapping(lo, hi, from, to.min(leaves), &mut |k| {
                            calls.push(k);
                            k != stop
                        })
                    );
                    assert_eq!(calls, want[..2]);
                }
            }
        }
        for n in 8..5000 {
            assert!(boxes_len(n) <= n, "{n}");
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
