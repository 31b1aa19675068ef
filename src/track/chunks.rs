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
//! on long curves they find the chunk pairs through a [`BoxTree`] over the chunk boxes, about
//! `n / CHUNK` box tests in all instead of `(n / CHUNK)² / 2`.

use crate::geom::Vec2;

/// Points per chunk.
pub const CHUNK: usize = 4;

/// Children per node of the box tree over the chunk boxes.
const FANOUT: usize = 4;

/// Levels the box tree can have: enough for `FANOUT^(MAX_LEVELS − 1)` ≈ 10⁹ chunks (4·10⁹
/// points), far beyond any track (`n_max ≤ 4096`, twice that for both borders).
const MAX_LEVELS: usize = 16;

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
/// comparisons are monotone); a NaN query box is apart from nothing. So
/// [`Self::for_meeting_leaves`] visits exactly the leaf pairs the flat scan over all pairs finds
/// not apart.
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

    /// Calls `visit(a, b)` (`a ≤ b`) for every pair of leaves whose boxes meet — leaf `a`'s
    /// grown by `reach` on every side, as [`for_close_pairs`] grows the lower chunk — in an
    /// unspecified order, until `visit` returns `false`; returns whether all were visited.
    ///
    /// A dual descent from the root pair: a pair of nodes (`A` before `B`, or `A` with itself)
    /// is split into its children's pairs only when `A`'s grown box meets `B`'s. Growing and the
    /// comparisons are monotone, so a node pair found apart holds no leaf pair that meets.
    pub fn for_meeting_leaves(
        &self,
        reach: f32,
        mut visit: impl FnMut(usize, usize) -> bool,
    ) -> bool {
        if self.count[0] == 0 {
            return true;
        }
        let meets = |node_a: usize, node_b: usize| {
            let (alo, ahi) = (self.boxes[2 * node_a], self.boxes[2 * node_a + 1]);
            let (alo, ahi) = (
                Vec2::new(alo[0] - reach, alo[1] - reach),
                Vec2::new(ahi[0] + reach, ahi[1] + reach),
            );
            !apart(alo, ahi, self.boxes[2 * node_b], self.boxes[2 * node_b + 1])
        };
        // Depth first: a pop pushes at most FANOUT² − 1 more, once per level.
        let mut stack = [(0u32, 0u32, 0u32); STACK];
        let mut len = 0;
        let top = self.levels - 1;
        if top == 0 {
            return !meets(0, 0) || visit(0, 0);
        }
        stack[len] = (top as u32, 0, 0);
        len += 1;
        while len > 0 {
            len -= 1;
            let (level, a, b) = stack[len];
            let (level, a, b) = (level as usize, a as usize, b as usize);
            let below = level - 1;
            let (base, count) = (self.start[below], self.count[below]);
            let a_children = a * FANOUT..((a + 1) * FANOUT).min(count);
            let b_end = ((b + 1) * FANOUT).min(count);
            // Push in reverse so that pairs pop in increasing order (not needed, but it keeps
            // the walk near the leaves just visited).
            for ca in a_children.rev() {
                let b_start = if a == b { ca } else { b * FANOUT };
                for cb in (b_start..b_end).rev() {
                    if !meets(base + ca, base + cb) {
                        continue;
                    }
                    if below == 0 {
                        if !visit(ca, cb) {
                            return false;
                        }
                    } else {
                        stack[len] = (below as u32, ca as u32, cb as u32);
                        len += 1;
                    }
                }
            }
        }
        true
    }
}

/// Entries of [`BoxTree::for_meeting_leaves`]'s stack: each level on the path leaves at most
/// `FANOUT² − 1` pairs pending.
const STACK: usize = FANOUT * FANOUT * MAX_LEVELS;

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
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for p in &pts[k * CHUNK..((k + 1) * CHUNK).min(n)] {
            lo = [lo[0].min(p[0]), lo[1].min(p[1])];
            hi = [hi[0].max(p[0]), hi[1].max(p[1])];
        }
        boxes[2 * k] = lo.into();
        boxes[2 * k + 1] = hi.into();
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
        }
    }
    true
}

/// Whether some pair [`for_close_pairs`] would visit fails `ok` — the same pairs, on long curves
/// visited in an unspecified order through a [`BoxTree`] (about `n` box tests instead of
/// `n² / 2 CHUNK²`). The chunk-range bound of `for_close_pairs` only skips pairs the gap filter
/// rejects, so the pair set is the same.
pub fn any_close_pair_fails(
    pts: &[Vec2],
    boxes: &mut [Vec2],
    reach: f32,
    min_gap: usize,
    mut ok: impl FnMut(usize, usize) -> bool,
) -> bool {
    let n = pts.len();
    if n.div_ceil(CHUNK) <= FLAT_CHUNKS {
        return !for_close_pairs(pts, boxes, reach, min_gap, ok);
    }
    let chunks = chunk_boxes(pts, boxes);
    let tree = BoxTree::build(boxes, chunks);
    !tree.for_meeting_leaves(reach, |ka, kb| chunk_pairs(n, min_gap, ka, kb, &mut ok))
}

/// Chunk counts up to which [`any_close_pair_fails`] scans chunk pairs flat. Measured with
/// callgrind (`trackgen bench --envs 512 --threads 1 --reps 1`): at about 43 chunks (polar) the
/// tree and the flat scan cost the same; at about 125 (f1) the tree halves the thickness test.
const FLAT_CHUNKS: usize = 64;

/// Fills `boxes` with the boxes of the chunks of `pts`; returns the chunk count.
fn chunk_boxes(pts: &[Vec2], boxes: &mut [Vec2]) -> usize {
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
    chunks
}

/// The point pairs `(i, j)`, `i < j`, of chunks `ka ≤ kb` with cyclic gap > `min_gap`, in order.
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

    /// The tree bound: `for_meeting_leaves` visits exactly the leaf pairs `a ≤ b` the flat scan
    /// finds not apart (`a`'s box grown), each once, for random boxes (some infinite, some empty
    /// as a chunk of NaN points makes them) and reaches (negative and NaN among them); and
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
            for round in 0..20 {
                let mut boxes = vec![Vec2::ZERO; 2 * tree_nodes(leaves)];
                let spread = if round % 2 == 0 { 100.0 } else { 30.0 };
                for k in 0..leaves {
                    let (cx, cy) = (spread * unit(), spread * unit());
                    let (w, h) = (10.0 * unit(), 10.0 * unit());
                    let (lo, hi) = match k % 23 {
                        5 => (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
                        11 => (
                            Vec2::new(f32::NEG_INFINITY, cy),
                            Vec2::new(cx, f32::INFINITY),
                        ),
                        _ => (Vec2::new(cx, cy), Vec2::new(cx + w, cy + h)),
                    };
                    boxes[2 * k] = lo;
                    boxes[2 * k + 1] = hi;
                }
                let reach = match round {
                    3 => f32::NAN,
                    5 => -2.0,
                    _ => 8.0 * unit(),
                };
                let flat = boxes.clone();
                let want: std::collections::BTreeSet<(usize, usize)> = (0..leaves)
                    .flat_map(|a| (a..leaves).map(move |b| (a, b)))
                    .filter(|&(a, b)| {
                        let (alo, ahi) = (flat[2 * a], flat[2 * a + 1]);
                        let (alo, ahi) = (alo - Vec2::splat(reach), ahi + Vec2::splat(reach));
                        !apart(alo, ahi, flat[2 * b], flat[2 * b + 1])
                    })
                    .collect();
                let tree = BoxTree::build(&mut boxes, leaves);
                let mut got = std::collections::BTreeSet::new();
                assert!(tree.for_meeting_leaves(reach, |a, b| {
                    assert!(got.insert((a, b)), "{a},{b} twice");
                    true
                }));
                assert_eq!(got, want, "{leaves} leaves, reach {reach}");
                if !want.is_empty() {
                    let mut calls = 0;
                    assert!(!tree.for_meeting_leaves(reach, |_, _| {
                        calls += 1;
                        false
                    }));
                    assert_eq!(calls, 1);
                }
            }
        }
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
