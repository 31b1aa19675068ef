//! Validity of a track, decided on the plan-view centerline and its two borders.
//!
//! A track is valid when all of these hold (with `hw` the half width):
//! 1. it has at least `MIN_POINTS` points and all are finite;
//! 2. it is closed with even spacing: every segment, the closing one included, lies within
//!    `[0.2, 2.5]` times the mean spacing;
//! 3. its turning number is ±1 (total signed turning ±2π);
//! 4. every turn is one a circle of radius ≥ 0.98 · `min_turn_radius` could make: the direction
//!    changes by less than 90° between consecutive segments and the Menger radius (the circle
//!    through consecutive triples) is ≥ 0.98 · `min_turn_radius` — see [`turn_complies`] for why
//!    the radius alone lets reversals through;
//! 5. its thickness is ≥ (1 − 0.02)·hw: points at arc distance > π·hw are ≥ 2·0.98·hw apart;
//! 6. the centerline is simple (no two non-consecutive segments meet);
//! 7. neither border intersects itself, and the borders do not intersect each other.
//!
//! Conditions 5–7 test every pair an all-pairs scan would, at about the cost of a few passes over
//! the points: pairs of one polyline a few segments apart only where no monotone run of the
//! segments between them separates their boxes (`same_line_crosses`: most tracks have none),
//! pairs of the two borders a few points apart in full, a whole gap at a time over boxes of
//! blocks of two segments that stand for every pair of their segments (`near_blocks_cross`) —
//! where segments are longer than the track is wide the nearest of those gaps segment by segment,
//! eight pairs at a time, by the sign bits of the segment test's orientations
//! (`near_segments_cross`);
//! farther pairs only where their points lie within a written bound of each other, found by
//! the chunk search (`chunks`). The bound,
//! and why no failing pair escapes it, is in `close_pairs_pass`'s doc; unit tests compare the
//! verdict with the all-pairs scan on loops that cross, pinch, fold and zig-zag.

use super::chunks::{any_close_pair_fails, CHUNK};
use super::geometry::{curvature_exceeds, dist2, segments_intersect, signed_area2, AREA_BLOCK};
use crate::geom::Vec2;

/// Relative slack of the thickness and turn-radius checks.
pub const SLACK: f32 = 0.02;

/// Constants of the validity check.
#[derive(Clone, Copy, Debug)]
pub struct ValidityConsts {
    /// Half width, metres.
    pub half_width_m: f32,
    /// Minimum turn radius, metres.
    pub min_turn_radius_m: f32,
}

/// Scratch of one lane of a centerline of `n` points.
pub struct ValidityScratch<'a> {
    /// Arc length per point (`n`).
    pub arclen: &'a mut [f32],
    /// Outer then inner border points (`2·n`).
    pub border: &'a mut [Vec2],
    /// Block boxes of both borders and the segments' direction codes ([`BOX_WORDS`]` · n`).
    pub seg_boxes: &'a mut [f32],
    /// Chunk boxes of the far-pair search ([`boxes_len`](super::chunks::boxes_len)`(n)`, at
    /// most `n`).
    pub chunk_boxes: &'a mut [Vec2],
}

/// Owned scratch for one lane at a time of centerlines of up to `n_max` points.
pub struct ValidityBuffers {
    arclen: Vec<f32>,
    border: Vec<Vec2>,
    seg_boxes: Vec<f32>,
    chunk_boxes: Vec<Vec2>,
}

impl ValidityBuffers {
    /// Buffers for centerlines of up to `n_max` points.
    pub fn new(n_max: usize) -> Self {
        Self {
            arclen: vec![0.0; n_max],
            border: vec![Vec2::ZERO; 2 * n_max],
            seg_boxes: vec![0.0; BOX_WORDS * n_max],
            chunk_boxes: vec![Vec2::ZERO; super::chunks::boxes_len(n_max)],
        }
    }

    /// The scratch borrowed from these buffers.
    pub fn scratch(&mut self) -> ValidityScratch<'_> {
        ValidityScratch {
            arclen: &mut self.arclen,
            border: &mut self.border,
            seg_boxes: &mut self.seg_boxes,
            chunk_boxes: &mut self.chunk_boxes,
        }
    }
}

/// Left unit normal of point `i` of a closed curve (from the central difference).
#[inline]
pub fn left_normal(pts: &[Vec2], i: usize) -> Vec2 {
    let n = pts.len();
    let a = pts[(i + n - 1) % n];
    let b = pts[(i + 1) % n];
    let (tx, ty) = (b[0] - a[0], b[1] - a[1]);
    let len = (tx * tx + ty * ty).sqrt();
    if len > 0.0 {
        Vec2::new(-ty / len, tx / len)
    } else {
        Vec2::new(0.0, 0.0)
    }
}

/// +1 for a counter-clockwise curve, −1 otherwise.
#[inline]
pub fn orientation(pts: &[Vec2]) -> f32 {
    if signed_area2(pts) >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// Whether the closed centerline `pts` makes a valid track (see the module doc).
///
/// Two walks over the points gather what conditions 1–4 need and the border offsets: at point
/// `i`, with `a`, `p`, `b` the points `i − 1`, `i`, `i + 1`, the segment `p → b` gives the arc
/// length, the spacing bounds and the signed area (summed in [`signed_area2`]'s order: the
/// first walk, in order), and, each point on its own in the second walk (branch-free, several
/// points at a time), the turn at `p` is checked and the chord `b − a` gives the left normal
/// ([`left_normal`]'s central difference). Each quantity is rounded exactly as the separate
/// functions round it (see `turn_exceeds`), so the verdict is theirs.
pub fn is_valid(pts: &[Vec2], c: &ValidityConsts, s: &mut ValidityScratch<'_>) -> bool {
    let n = pts.len();
    if n < super::resample::MIN_POINTS {
        return false;
    }
    let max_curvature = 1.0 / ((1.0 - SLACK) * c.min_turn_radius_m);
    let k2 = max_curvature * max_curvature;
    let hw = c.half_width_m;
    let arclen = &mut s.arclen[..n];
    let border = &mut s.border[..2 * n];
    let mut total = 0.0f32;
    let mut shortest = f32::INFINITY;
    // The longest segment's squared length: its length too, as `sqrt` is monotone.
    let mut longest_centre2 = 0.0f32;
    let mut area2 = 0.0f32;
    // 2. closed, even spacing; arc lengths for 5; the orientation. The sums in order: each
    // block of up to `AREA_BLOCK` segments (none wrapping) gets its lengths and area terms all
    // at once (many per instruction), then they are added one by one in index order, the
    // closing segment last, so every partial sum is the one a walk point by point makes. The
    // least and greatest are taken per block: `min`/`max` pass NaN over and the lengths are
    // never −0, so any order gives the same bits.
    let mut start = 0;
    while start + 1 < n {
        let m = (n - 1 - start).min(AREA_BLOCK);
        let (a, b) = (&pts[start..start + m], &pts[start + 1..start + 1 + m]);
        let mut lens = [0.0f32; AREA_BLOCK];
        let mut terms = [0.0f32; AREA_BLOCK];
        let mut squares = [0.0f32; AREA_BLOCK];
        for ((((l, t), v2), p), b) in lens
            .iter_mut()
            .zip(terms.iter_mut())
            .zip(squares.iter_mut())
            .zip(a)
            .zip(b)
        {
            (*v2, *t) = segment_walk_terms(*p, *b);
            *l = v2.sqrt();
        }
        for ((arc, &l), &t) in arclen[start..start + m].iter_mut().zip(&lens).zip(&terms) {
            *arc = total;
            total += l;
            area2 += t;
        }
        for (&l, &v2) in lens[..m].iter().zip(&squares) {
            shortest = shortest.min(l);
            longest_centre2 = longest_centre2.max(v2);
        }
        start += m;
    }
    {
        let (v2, t) = segment_walk_terms(pts[n - 1], pts[0]);
        let l = v2.sqrt();
        arclen[n - 1] = total;
        shortest = shortest.min(l);
        longest_centre2 = longest_centre2.max(v2);
        total += l;
        area2 += t;
    }
    // 1. finite, 3. turning number, 4. every turn, and the border offsets `hw · left normal`
    // (the sign of the side comes below), point by point. 3: every turn complies only if it is
    // under 90° (`dot > 0`), and then the exterior angles (each in (−π/2, π/2)) sum to exactly
    // 2π times the winding of the segment directions about the origin: the signed count of
    // their crossings of the +x axis, a crossing's sense being the turn's (the sign of
    // `cross`). The count is exact where a sum of angles rounds (within 0.05 rad of ±2π is the
    // same verdict: n ≤ 4096 roundings of ~10⁻⁷ rad each).
    let inner = &mut border[n..2 * n];
    let (c, w, h) = turn_at(pts[n - 1], pts[0], pts[1], k2, hw);
    let (mut complies, mut winding) = (c & finite_point(pts[0]), w);
    inner[0] = h;
    for (o, t) in inner[1..n - 1].iter_mut().zip(pts.windows(3)) {
        let (c, w, h) = turn_at(t[0], t[1], t[2], k2, hw);
        complies &= c & finite_point(t[1]);
        winding += w;
        *o = h;
    }
    let (c, w, h) = turn_at(pts[n - 2], pts[n - 1], pts[0], k2, hw);
    complies &= c & finite_point(pts[n - 1]);
    winding += w;
    inner[n - 1] = h;
    if !complies {
        return false;
    }
    let mean = total / n as f32;
    let longest_centre = longest_centre2.sqrt();
    if !(shortest >= 0.2 * mean && longest_centre <= 2.5 * mean) || winding.abs() != 1 {
        return false;
    }
    // 5. thickness, 6. the centerline simple, 7. both borders simple and disjoint. Every pair
    // that can fail is tested; which pairs those are is argued in `close_pairs_pass`. The
    // outer border is `p − σ·hw·normal`, the inner `p + σ·hw·normal` (`σ` the orientation):
    // `σ·hw·x` is `±(hw·x)` exactly.
    let (outer, inner) = border.split_at_mut(n);
    if area2 >= 0.0 {
        for ((o, i), &p) in outer.iter_mut().zip(inner.iter_mut()).zip(pts) {
            let h = *i;
            *o = Vec2::new(p[0] - h[0], p[1] - h[1]);
            *i = Vec2::new(p[0] + h[0], p[1] + h[1]);
        }
    } else {
        for ((o, i), &p) in outer.iter_mut().zip(inner.iter_mut()).zip(pts) {
            let h = *i;
            *o = Vec2::new(p[0] + h[0], p[1] + h[1]);
            *i = Vec2::new(p[0] - h[0], p[1] - h[1]);
        }
    }
    let border = &*border;
    let thickness = Thickness {
        arclen,
        total,
        neighbour_arc: crate::math::PI * hw,
        min_sep2: {
            let min_sep = 2.0 * (1.0 - SLACK) * hw;
            min_sep * min_sep
        },
        // A pair whose cyclic index gap is at most `min_gap` is at most `min_gap · longest_centre
        // ≤ π·hw` apart along the curve, so it is exempt by definition.
        min_gap: exempt_gap(crate::math::PI * hw, longest_centre, n),
    };
    close_pairs_pass(
        pts,
        border,
        hw,
        longest_centre2,
        &thickness,
        s.seg_boxes,
        s.chunk_boxes,
    )
}

/// The squared length of segment `p → b` and its term of [`signed_area2`]: `v2` is
/// `dist2(p, b)` exactly (a difference negated is the negated difference), so its root is
/// `dist(p, b)`.
#[inline(always)]
fn segment_walk_terms(p: Vec2, b: Vec2) -> (f32, f32) {
    let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
    (vx * vx + vy * vy, p[0] * b[1] - b[0] * p[1])
}

/// [`curvature_exceeds`]`(a, p, b, k)` from the differences `u = p − a`, `w = b − a` and the
/// squared lengths `u2 = |p − a|²`, `v2 = |b − p|²`, `w2 = |b − a|²` (`k2 = k·k`), rounded
/// the same way: its cross product is `u × w`, and its `dist2(a, p)`, `dist2(b, a)` are `u2`,
/// `w2` exactly (a difference negated is the negated difference, and squares drop the sign).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn turn_exceeds(ux: f32, uy: f32, wx: f32, wy: f32, u2: f32, v2: f32, w2: f32, k2: f32) -> bool {
    let cross = ux * wy - uy * wx;
    let lhs = 4.0 * cross * cross;
    let rhs = k2 * (u2 * v2 * w2);
    // NaN compares unordered: treat it as exceeding.
    !matches!(
        lhs.partial_cmp(&rhs),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    )
}

/// The turn at `p` from `a` to `b` (see [`is_valid`]): whether it complies with the curvature
/// bound `k2` (squared) and turns under 90°, its signed crossing of the +x axis
/// ([`axis_crossing`]), and the border offset `hw · left normal` from the chord `b − a`
/// ([`left_normal`]'s rounding). Branch-free, so a loop of it runs several points at a time.
#[inline(always)]
fn turn_at(a: Vec2, p: Vec2, b: Vec2, k2: f32, hw: f32) -> (bool, i32, Vec2) {
    let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
    let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
    let (wx, wy) = (b[0] - a[0], b[1] - a[1]);
    let (u2, v2, w2) = (ux * ux + uy * uy, vx * vx + vy * vy, wx * wx + wy * wy);
    let (cross, dot) = (ux * vy - uy * vx, ux * vx + uy * vy);
    let complies = (dot > 0.0) & !turn_exceeds(ux, uy, wx, wy, u2, v2, w2, k2);
    let len = w2.sqrt();
    let nl = if len > 0.0 {
        Vec2::new(-wy / len, wx / len)
    } else {
        Vec2::new(0.0, 0.0)
    };
    (
        complies,
        axis_crossing(uy, vy, cross),
        Vec2::new(hw * nl[0], hw * nl[1]),
    )
}

/// Whether both coordinates of `p` are finite.
#[inline(always)]
fn finite_point(p: Vec2) -> bool {
    p[0].is_finite() & p[1].is_finite()
}

/// The signed crossing of the +x axis by a turn under 90° from direction `(·, uy)` to `(·, vy)`
/// (`cross` their cross product): +1 counter-clockwise from below the axis to on or above it, −1
/// clockwise back, 0 otherwise (the turns that cross the −x axis included).
#[inline(always)]
fn axis_crossing(uy: f32, vy: f32, cross: f32) -> i32 {
    i32::from((uy < 0.0) & (vy >= 0.0) & (cross > 0.0))
        - i32::from((uy >= 0.0) & (vy < 0.0) & (cross < 0.0))
}

/// The thickness test's constants (condition 5): pairs at cyclic index gap > `min_gap` fail when
/// more than `neighbour_arc` apart along the curve and closer than `√min_sep2`.
struct Thickness<'a> {
    arclen: &'a [f32],
    total: f32,
    neighbour_arc: f32,
    min_sep2: f32,
    min_gap: usize,
}

impl Thickness<'_> {
    /// Whether points `i < j` (cyclic gap `> min_gap`), `d2` apart squared, fail.
    #[inline]
    fn fails(&self, i: usize, j: usize, d2: f32) -> bool {
        self.fails_apart(self.arclen[j] - self.arclen[i], d2)
    }

    /// Whether two points (cyclic gap `> min_gap`) `gap` apart along the arc lengths (the later
    /// one's less the earlier one's) and `d2` apart squared fail.
    #[inline(always)]
    fn fails_apart(&self, gap: f32, d2: f32) -> bool {
        let arc = gap.min(self.total - gap);
        (arc > self.neighbour_arc) & (d2 < self.min_sep2)
    }
}

/// Words of scratch per point of the centerline: the boxes of the blocks of two segments of
/// both borders (4 words, `lo.x`, `lo.y`, `hi.x`, `hi.y`, per block of each: `8·⌈n / 2⌉ ≤
/// 4·n + 4`), then the segments' direction codes of the three polylines (2 bytes per segment,
/// and room for `n / 2` wrapped, each) and the window's (as long as one polyline's codes and
/// a block of `WINDOW_BLOCK` more): `≤ 12·n + 32` bytes, `3·n + 8` words, later (the codes
/// done with) the coordinates of both borders one array per axis (`4·n` words,
/// `near_segments_cross`); before all of these the centre's ring (`Ring`, `3·(n + n / 2 + 8)`
/// words) — within `9·n` for the `n ≥ MIN_POINTS` the check looks at.
pub const BOX_WORDS: usize = 9;

/// Words of box scratch per point of the CUDA twin (`TG_BOX_WORDS` of `validity.cuh`, the row of
/// the plan's segment-box buffer): the 12 words of segment boxes only, as the twin tests the near
/// gaps segment by segment (the same all-pairs verdict).
pub const KERNEL_BOX_WORDS: usize = 12;

/// Consecutive segments per block of the near-gap passes: block `j` holds segments `2j` and
/// `2j + 1` (the last block of an odd `n` only segment `n − 1`).
const BLOCK: usize = 2;

/// Blocks of a closed polyline of `n` segments.
#[inline]
fn blocks_of(n: usize) -> usize {
    n.div_ceil(BLOCK)
}

/// Axis-aligned boxes of one closed polyline, one array per bound: of its blocks of segments
/// ([`block_boxes`]; segment `k` joins point `k` to point `k + 1 mod n`).
#[derive(Clone, Copy)]
struct SegBoxes<'a> {
    lo_x: &'a [f32],
    lo_y: &'a [f32],
    hi_x: &'a [f32],
    hi_y: &'a [f32],
}

impl<'a> SegBoxes<'a> {
    /// The boxes of polyline `q` (0 centre, 1 outer, 2 inner) of `n` points (or blocks) in
    /// `words`.
    fn of(words: &'a [f32], q: usize, n: usize) -> Self {
        let b = &words[4 * q * n..4 * (q + 1) * n];
        let (lo_x, b) = b.split_at(n);
        let (lo_y, b) = b.split_at(n);
        let (hi_x, hi_y) = b.split_at(n);
        Self {
            lo_x,
            lo_y,
            hi_x,
            hi_y,
        }
    }

    fn range(self, r: std::ops::Range<usize>) -> Self {
        Self {
            lo_x: &self.lo_x[r.clone()],
            lo_y: &self.lo_y[r.clone()],
            hi_x: &self.hi_x[r.clone()],
            hi_y: &self.hi_y[r],
        }
    }
}

/// Writes the boxes of the blocks of [`BLOCK`] consecutive segments of the closed polyline
/// `pts` (`n` points, segment `k` from point `k` to point `k + 1 mod n`) into `words`
/// (`4·⌈n / 2⌉`: the `lo.x`, `lo.y`, `hi.x`, `hi.y` arrays): block `j` bounds the points `2j`,
/// `2j + 1` and `2j + 2 mod n` (the last block of an odd `n`, segment `n − 1`, its two points).
/// Each bound is the least or greatest of the segments' points, so it is exactly the union of
/// the boxes [`segments_intersect`] takes for its segments (the `min`/`max` of their ends; a
/// zero's sign aside, which the box tests compare equal): a block box apart from another
/// (strictly, on an axis) has every one of its segments' boxes apart from every one of the
/// other's.
fn block_boxes(pts: &[Vec2], words: &mut [f32]) {
    let n = pts.len();
    let nb = blocks_of(n);
    let (lo_x, rest) = words[..4 * nb].split_at_mut(nb);
    let (lo_y, rest) = rest.split_at_mut(nb);
    let (hi_x, hi_y) = rest.split_at_mut(nb);
    let pairs = n / BLOCK;
    // The blocks whose third point does not wrap first, from the flat coordinates (block `j`'s
    // first two points are floats `4j..4j + 4`, its third the next block's first), so the loop
    // runs several blocks at a time.
    let flat: &[f32] = bytemuck::cast_slice(pts);
    for (((((ab, c), lx), ly), hx), hy) in flat[..4 * (pairs - 1)]
        .chunks_exact(4)
        .zip(flat[4..4 * pairs].chunks_exact(4))
        .zip(lo_x.iter_mut())
        .zip(lo_y.iter_mut())
        .zip(hi_x.iter_mut())
        .zip(hi_y.iter_mut())
    {
        *lx = lesser(lesser(ab[0], ab[2]), c[0]);
        *ly = lesser(lesser(ab[1], ab[3]), c[1]);
        *hx = greater(greater(ab[0], ab[2]), c[0]);
        *hy = greater(greater(ab[1], ab[3]), c[1]);
    }
    let mut put = |j: usize, a: Vec2, b: Vec2, c: Vec2| {
        lo_x[j] = lesser(lesser(a[0], b[0]), c[0]);
        lo_y[j] = lesser(lesser(a[1], b[1]), c[1]);
        hi_x[j] = greater(greater(a[0], b[0]), c[0]);
        hi_y[j] = greater(greater(a[1], b[1]), c[1]);
    };
    let j = pairs - 1;
    let third = if 2 * j + 2 < n { 2 * j + 2 } else { 0 };
    put(j, pts[2 * j], pts[2 * j + 1], pts[third]);
    if pairs < nb {
        put(pairs, pts[n - 1], pts[0], pts[0]);
    }
}

/// The direction of one coordinate along a segment, from the stored values compared: bit 0 if
/// it rises (`b > a`), bit 1 if it falls; neither if they are equal (or one is NaN).
#[inline(always)]
fn rise_fall(a: f32, b: f32) -> u8 {
    u8::from(b > a) | u8::from(b < a) << 1
}

/// Writes the directions of the segments of the closed polyline `line` into `codes[..2·n]`:
/// byte `2k` is [`rise_fall`] of `x` along segment `k` (point `k` to `k + 1 mod n`), byte
/// `2k + 1` that of `y` — read as a little-endian `u16`, the segment's code, 0 when it moves on
/// neither axis one way. One compare per coordinate over the flat coordinates, so the loop runs
/// many at a time.
fn segment_directions(line: &[Vec2], codes: &mut [u8]) {
    let flat: &[f32] = bytemuck::cast_slice(line);
    let m = flat.len();
    let codes = &mut codes[..m];
    for (c, (&a, &b)) in codes[..m - 2]
        .iter_mut()
        .zip(flat[..m - 2].iter().zip(&flat[2..]))
    {
        *c = rise_fall(a, b);
    }
    codes[m - 2] = rise_fall(flat[m - 2], flat[0]);
    codes[m - 1] = rise_fall(flat[m - 1], flat[1]);
}

/// The largest squared segment length ([`dist2`] of its ends, NaN ones passed over) of the
/// closed polyline `line`: the squares are `≥ 0` (or NaN), so their bits order as they do.
fn longest_segment2(line: &[Vec2]) -> f32 {
    let n = line.len();
    let bits = |l2: f32| if l2.is_nan() { 0 } else { l2.to_bits() };
    let mut longest = bits(dist2(line[n - 1], line[0]));
    for (a, b) in line[..n - 1].iter().zip(&line[1..]) {
        longest = longest.max(bits(dist2(*a, *b)));
    }
    f32::from_bits(longest)
}

/// Codes per block of [`same_line_crosses`]'s doubling passes: the passes run whole blocks, no
/// tail one code at a time (whose length changes from pass to pass, a mispredicted exit each).
const WINDOW_BLOCK: usize = 16;

/// Whether two segments of the closed polyline `line` at cyclic gap `2..=g_hi` (`g_hi ≤ n / 2`)
/// meet, testing only the pairs that no monotone run separates. `codes` holds the
/// [`segment_directions`] in its first `2·n` of `2·(n + g_hi)` bytes; `window` is scratch of
/// `2·(n + g_hi + WINDOW_BLOCK)` bytes; both start at even addresses.
///
/// A run: if the segments `k..=k + g` (`g ≥ 2`, indices mod `n`) all rise on `x` as the stored
/// points compare, `x_k < x_{k+1} < x_{k+2} ≤ … ≤ x_{k+g} < x_{k+g+1}`, so the box of segment
/// `k` ends at `x_{k+1}` and that of segment `k + g` starts at `x_{k+g} > x_{k+1}`: they are
/// strictly apart on `x`, which is exactly what [`segments_intersect`]'s first test rejects (its
/// `max` and `min` are exact). Falling, and `y`, alike. So with `code[k]` the segment's code,
/// the pair `(k, k + g)` needs no test when `code[k] & … & code[k + g] ≠ 0`; the others are
/// tested in full. The AND over the longest window, `k..=k + g_hi`, is taken for every `k` at
/// once (branch-free, many codes at a time); where it is not 0 no gap needs a test, and tracks
/// turn slowly enough that it rarely is. The AND over `g_hi + 1` codes is built by doubling: the
/// ANDs over spans of `s` codes, ANDed with themselves `t ≤ s` further on, are the ANDs over
/// spans of `s + t` (AND is idempotent, so the overlap is harmless), so `⌈log₂(g_hi + 1)⌉`
/// passes make it, each over at most `n + g_hi` codes, in whole blocks of [`WINDOW_BLOCK`]:
/// the window's entries past a pass's range are ANDs of whatever lies there, and no entry in
/// range reads them (entry `k` of a pass reads `k + t`, in range of the pass before).
fn same_line_crosses(line: &[Vec2], g_hi: usize, codes: &mut [u8], window: &mut [u8]) -> bool {
    let n = line.len();
    if g_hi < 2 {
        return false;
    }
    let codes = &mut codes[..2 * (n + g_hi)];
    codes.copy_within(0..2 * g_hi, 2 * n);
    let codes: &[u16] = bytemuck::cast_slice(&*codes);
    let window: &mut [u16] = bytemuck::cast_slice_mut(&mut window[..2 * (n + g_hi + WINDOW_BLOCK)]);
    window[..n + g_hi].copy_from_slice(codes);
    // `window[k]` is the AND of `codes[k..k + span]` for `k < n + g_hi + 1 − span`.
    let mut span = 1;
    while span <= g_hi {
        let t = span.min(g_hi + 1 - span);
        let len = n + g_hi + 1 - (span + t);
        // In place, forwards: `window[k + t]` is read before it is written (a block at a
        // time, copied out first, so each block runs as whole vectors).
        for k in (0..len).step_by(WINDOW_BLOCK) {
            let ahead: [u16; WINDOW_BLOCK] = window[k + t..k + t + WINDOW_BLOCK]
                .try_into()
                .expect("a block of WINDOW_BLOCK codes");
            for (w, a) in window[k..k + WINDOW_BLOCK].iter_mut().zip(ahead) {
                *w &= a;
            }
        }
        span += t;
    }
    let at = |i: usize| line[if i < n { i } else { i - n }];
    let crosses_from = |k: usize| {
        let mut run = codes[k] & codes[k + 1];
        (2..=g_hi).any(|g| {
            run &= codes[k + g];
            run == 0 && segments_intersect(at(k), at(k + 1), at(k + g), at(k + g + 1))
        })
    };
    // The open windows (0) found 32 at a time as the bits of a mask, so a track's few corners
    // cost a branch each rather than every segment one.
    window[..n].chunks(32).enumerate().any(|(c, block)| {
        let mut open = block
            .iter()
            .enumerate()
            .fold(0u32, |m, (t, &w)| m | u32::from(w == 0) << t);
        while open != 0 {
            if crosses_from(32 * c + open.trailing_zeros() as usize) {
                return true;
            }
            open &= open - 1;
        }
        false
    })
}

/// The lesser of two finite numbers.
#[inline(always)]
fn lesser(a: f32, b: f32) -> f32 {
    if b < a {
        b
    } else {
        a
    }
}

/// The greater of two finite numbers.
#[inline(always)]
fn greater(a: f32, b: f32) -> f32 {
    if b > a {
        b
    } else {
        a
    }
}

/// Whether box `k` of `a` meets box `k` of `b` for some `k` (finite bounds; equal lengths).
/// Branch-free over `k`, so the compiler runs it several boxes at a time.
#[inline]
fn some_boxes_meet(a: SegBoxes<'_>, b: SegBoxes<'_>) -> bool {
    let n = a.lo_x.len();
    let (a_lo_x, a_lo_y, a_hi_x, a_hi_y) = (&a.lo_x[..n], &a.lo_y[..n], &a.hi_x[..n], &a.hi_y[..n]);
    let (b_lo_x, b_lo_y, b_hi_x, b_hi_y) = (&b.lo_x[..n], &b.lo_y[..n], &b.hi_x[..n], &b.hi_y[..n]);
    let mut any = 0u32;
    for k in 0..n {
        any |= u32::from(a_hi_x[k] >= b_lo_x[k])
            & u32::from(b_hi_x[k] >= a_lo_x[k])
            & u32::from(a_hi_y[k] >= b_lo_y[k])
            & u32::from(b_hi_y[k] >= a_lo_y[k]);
    }
    any != 0
}

/// Pairs of polylines whose segments must not meet: each polyline with itself (centre 0, outer 1,
/// inner 2; consecutive segments excepted) and the outer border with the inner.
const POLYLINE_PAIRS: [(usize, usize); 5] = [(0, 0), (1, 1), (2, 2), (1, 2), (2, 1)];

/// Whether box `t` of `a` meets box `t` of `b` (not strictly apart on either axis).
#[inline(always)]
fn boxes_meet_at(a: SegBoxes<'_>, b: SegBoxes<'_>, t: usize) -> bool {
    a.hi_x[t] >= b.lo_x[t]
        && b.hi_x[t] >= a.lo_x[t]
        && a.hi_y[t] >= b.lo_y[t]
        && b.hi_y[t] >= a.lo_y[t]
}

/// Whether `hit(t)` holds for some `t` where box `t` of `a` meets box `t` of `b` (equal
/// lengths): all boxes first, branch-free, then, if some meet, those one by one.
#[inline(always)]
fn some_meeting(a: SegBoxes<'_>, b: SegBoxes<'_>, hit: impl FnMut(usize) -> bool) -> bool {
    some_boxes_meet(a, b) && meeting_one_by_one(a, b, hit)
}

/// [`some_meeting`] one box at a time: for the few pairs across the wrap of a shift.
#[inline(always)]
fn meeting_one_by_one(
    a: SegBoxes<'_>,
    b: SegBoxes<'_>,
    mut hit: impl FnMut(usize) -> bool,
) -> bool {
    (0..a.lo_x.len()).any(|t| boxes_meet_at(a, b, t) && hit(t))
}

/// Whether `cross(k, m)` holds for a segment `k` of `a` in block `j` and a segment `m` of `b`
/// in block `(j + d) mod nb`, for some `j` whose block boxes meet (`d < nb`; `a_blocks`,
/// `b_blocks` the `nb` block boxes of two polylines of `n` segments). With `same` (`a` is
/// `b`), segments at cyclic gap ≤ 1 are not pairs. The block boxes first, branch-free, then,
/// in the blocks whose boxes meet, every pair of their segments.
fn block_crossing(
    n: usize,
    a_blocks: SegBoxes<'_>,
    b_blocks: SegBoxes<'_>,
    d: usize,
    same: bool,
    cross: &mut impl FnMut(usize, usize) -> bool,
) -> bool {
    let nb = a_blocks.lo_x.len();
    let mut descend = |ja: usize| {
        let jb = if ja + d < nb { ja + d } else { ja + d - nb };
        let (ka, kb) = (BLOCK * ja, BLOCK * jb);
        (ka..(ka + BLOCK).min(n)).any(|k| {
            (kb..(kb + BLOCK).min(n)).any(|m| {
                let gap = k.abs_diff(m);
                !(same && gap.min(n - gap) <= 1) && cross(k, m)
            })
        })
    };
    let (a_wrap, b_wrap) = (a_blocks.range(nb - d..nb), b_blocks.range(0..d));
    some_meeting(
        a_blocks.range(0..nb - d),
        b_blocks.range(d..nb),
        &mut descend,
    ) || if 2 * d <= nb {
        meeting_one_by_one(a_wrap, b_wrap, |t| descend(nb - d + t))
    } else {
        some_meeting(a_wrap, b_wrap, |t| descend(nb - d + t))
    }
}

/// Conditions 5–7 of the module doc on the centre `pts` and its `border` (outer then inner):
/// true when no pair fails.
///
/// Pairs at cyclic index gap at most `near` (points) or `near + 1` (segments) are all tested:
/// of one polyline, all but those a monotone run proves apart (`same_line_crosses`, the pairs
/// [`segments_intersect`]'s box test would reject); of the two borders, box by box over whole
/// arrays of block boxes that stand for all the segment pairs in them (`near_blocks_cross`),
/// or, when the centre's mean segment is longer than the track is wide, the gaps
/// `−NEAR_SEGMENT_GAPS..=NEAR_SEGMENT_GAPS` segment by segment by [`segments_intersect`]'s
/// own orientations (`near_segments_cross`) and the rest by blocks (`near_blocks_cross` from
/// the next gap); farther ones only when their points are within `reach`:
/// - two segments that meet at `x` (of any two of the three polylines) have endpoints within
///   half their length of `x`, and every border point lies `hw·|normal|` from the centre point
///   of its index, so the centre points of those endpoints are within `2·hw + longest` of each
///   other (`longest` the longest segment of the three), at a cyclic gap at least the
///   segments' less one. `reach` is that bound plus 1 % (far above its rounding; the centre's
///   longest squared length, `centre_longest2`, comes from the caller's walk). More closely,
///   with `x` within half its length of the nearer end `i` of the one segment and `j` of the
///   other, the centre points `i`, `j` are within `2·hw + (l_i + l_j) / 2`, `l_k` the longest
///   of the six segments that end at point `k` (of the three polylines), and the pair
///   `(i, j)` tests both segments; a pair found within `reach` is tested only within that
///   bound plus the same `1 % · (2·hw + longest)` as `reach` (`far_pair_ok`), so with the
///   same room for rounding, which on unevenly spaced curves (long straights, short corners)
///   leaves out most of them;
/// - a pair failing thickness is closer than `2·(1 − SLACK)·hw`, under both bounds.
///
/// The gaps from `near + 1` to `searched` (`pass_gaps`; `Ring::far_pairs_fail`) and the chunk
/// search (`chunks`) past it find every point pair within `reach` at a gap past `near`; each
/// such pair tests the thickness of its two points and every segment pair at its ends. So
/// every pair the module doc names is tested, with the same predicates as an all-pairs scan.
fn close_pairs_pass(
    pts: &[Vec2],
    border: &[Vec2],
    hw: f32,
    centre_longest2: f32,
    thickness: &Thickness<'_>,
    seg_boxes: &mut [f32],
    chunk_boxes: &mut [Vec2],
) -> bool {
    let n = pts.len();
    let polylines = [pts, &border[..n], &border[n..2 * n]];
    let longest2 = [
        centre_longest2,
        longest_segment2(polylines[1]),
        longest_segment2(polylines[2]),
    ];
    // A polyline without a segment of positive finite length is not simple (both borders count
    // as one polyline here, as in the all-pairs definition).
    let border_longest2 = longest2[1].max(longest2[2]);
    let positive_finite = |l2: f32| l2 > 0.0 && l2.is_finite();
    if !positive_finite(longest2[0]) || !positive_finite(border_longest2) {
        return false;
    }
    let longest = longest2[0].max(border_longest2).sqrt();
    let reach = 1.01 * (2.0 * hw + longest);
    let reach2 = reach * reach;
    // What `reach` adds to its bound for rounding.
    let slack = 0.01 * (2.0 * hw + longest);
    let (near, searched) = pass_gaps(reach, thickness.total / n as f32, n);
    let half = n / 2;
    let prev = |k: usize| if k == 0 { n - 1 } else { k - 1 };
    let next = |k: usize| if k + 1 == n { 0 } else { k + 1 };
    // The largest squared length of the segments that end at point `k` (`k − 1 → k` and
    // `k → k + 1`) of the three polylines (all finite here, as their longest is).
    let longest_at = |k: usize| {
        let (p, q) = (prev(k), next(k));
        polylines.iter().fold(0.0f32, |m, l| {
            m.max(dist2(l[p], l[k])).max(dist2(l[k], l[q]))
        })
    };
    // A pair `i < j` past the near gaps: thickness and the segment pairs at its ends.
    let far_pair_ok = |i: usize, j: usize| {
        let d2 = dist2(pts[i], pts[j]);
        // Points are finite here, so `d2` is a number.
        if d2 > reach2 {
            return true;
        }
        // The same bound from the segments at hand (`reach` takes the longest of all), with
        // `reach`'s slack: on unevenly spaced curves most pairs within `reach` are out of it,
        // and skip the twenty segment tests below.
        let local_reach = 2.0 * hw + 0.5 * (longest_at(i).sqrt() + longest_at(j).sqrt()) + slack;
        if d2 > local_reach * local_reach {
            return true;
        }
        let gap = j - i;
        if gap.min(n - gap) > thickness.min_gap && thickness.fails(i, j, d2) {
            return false;
        }
        for k in [prev(i), i] {
            for m in [prev(j), j] {
                let gap = k.abs_diff(m);
                let consecutive = gap.min(n - gap) <= 1;
                for (qa, qb) in POLYLINE_PAIRS {
                    if qa == qb && consecutive {
                        continue;
                    }
                    let (a, b) = (polylines[qa], polylines[qb]);
                    if segments_intersect(a[k], a[next(k)], b[m], b[next(m)]) {
                        return false;
                    }
                }
            }
        }
        true
    };
    // The centre's pairs at whole gaps, over the ring (in the words the boxes and codes take
    // next): thickness at gaps min_gap < g ≤ near, and from `near + 1` to `searched` the pairs
    // within `reach` put to `far_pair_ok` (the chunk search takes the gaps past `searched`).
    let (thin_gaps, far_gaps) = (thickness.min_gap + 1..=near.min(half), near + 1..=searched);
    if !thin_gaps.is_empty() || !far_gaps.is_empty() {
        let ring = Ring::of(pts, thickness.arclen, seg_boxes);
        if thin_gaps
            .into_iter()
            .any(|g| ring.thin_at_gap(thickness, g))
            || far_gaps
                .into_iter()
                .any(|g| ring.far_pairs_fail(g, reach2, &far_pair_ok))
        {
            return false;
        }
    }
    let nb = blocks_of(n);
    let (block_words, after_blocks) = seg_boxes.split_at_mut(8 * nb);
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut *after_blocks);
    // Direction codes of each polyline (`2·n` bytes each and room for `n / 2` codes wrapped),
    // then the window's (and its last block's room).
    let stride = 2 * (n + n / 2);
    let (codes, rest) = bytes.split_at_mut(3 * stride);
    let window = &mut rest[..stride + 2 * WINDOW_BLOCK];
    for (q, line) in polylines.iter().enumerate() {
        segment_directions(line, &mut codes[q * stride..(q + 1) * stride]);
    }
    // Segments at gaps ≤ near + 1: each polyline with itself from gap 2 on, only where no
    // monotone run separates the pair (`same_line_crosses`); outer with inner from −(near + 1)
    // to near + 1 (every gap when that covers the loop), block by block (`near_blocks_cross`).
    let seg_near = near + 1;
    let same_to = seg_near.min(half);
    for (q, line) in polylines.iter().enumerate() {
        if same_line_crosses(
            line,
            same_to,
            &mut codes[q * stride..(q + 1) * stride],
            window,
        ) {
            return false;
        }
    }
    let (outer, inner) = (polylines[1], polylines[2]);
    for (q, line) in [outer, inner].iter().enumerate() {
        block_boxes(line, &mut block_words[4 * q * nb..4 * (q + 1) * nb]);
    }
    let block_words = &*block_words;
    let (outer_blocks, inner_blocks) = (
        SegBoxes::of(block_words, 0, nb),
        SegBoxes::of(block_words, 1, nb),
    );
    if 2 * seg_near + 1 >= n {
        // Every pair of blocks, so every pair of segments (outer with inner takes both orders).
        let mut cross = segment_pair(outer, inner);
        if (0..nb).any(|d| block_crossing(n, outer_blocks, inner_blocks, d, false, &mut cross)) {
            return false;
        }
    } else if thickness.total > 2.0 * n as f32 * hw && seg_near > NEAR_SEGMENT_GAPS {
        // Segments longer than the track is wide on average: block boxes a few blocks apart
        // meet more often than not, so the gaps up to `NEAR_SEGMENT_GAPS` go segment by segment
        // (`near_segments_cross`) and only the farther ones by blocks (`near_blocks_cross` from the next gap).
        // Either way every pair of the gaps to `seg_near` is tested (the choice is for speed).
        if near_segments_cross(outer, inner, NEAR_SEGMENT_GAPS, after_blocks)
            || near_blocks_cross(
                outer,
                outer_blocks,
                inner,
                inner_blocks,
                NEAR_SEGMENT_GAPS + 1,
                seg_near,
                false,
            )
        {
            return false;
        }
    } else if near_blocks_cross(outer, outer_blocks, inner, inner_blocks, 0, seg_near, false) {
        return false;
    }
    if near >= half {
        return true;
    }
    // Farther pairs, through the chunk search.
    !any_close_pair_fails(pts, chunk_boxes, reach, searched, far_pair_ok)
}

/// The gaps of `close_pairs_pass` for pairs within `reach` on a closed polyline of `n` points
/// `mean` apart on average: `near`, the gaps tested in full (cheaper than a search: a chunk
/// holds CHUNK points; any `near` is correct, and past `n / 2` every pair is near), and
/// `searched ≥ near`, the gap from which the chunk search takes over: one chunk past the one
/// just below a multiple of CHUNK (at most `n / 2`). Just below a multiple, as a chunk pair
/// whose farthest pair lies a gap or two past the searched one (the next chunk but one along
/// the track, whose boxes always meet) would be searched for those one or two pairs; a chunk
/// further, as the chunk pairs of the first diagonal past that (the next chunk but two) meet
/// more often than not on tracks whose segments are uneven, and the ring's pass over a whole
/// gap (`Ring::far_pairs_fail`, [`LANES`] pairs at a time) costs less than they do.
fn pass_gaps(reach: f32, mean: f32, n: usize) -> (usize, usize) {
    let near = ((reach / mean) as usize).saturating_add(CHUNK).min(n);
    let searched = ((near + 1).next_multiple_of(CHUNK) - 1 + CHUNK).min(n / 2);
    (near, searched)
}

/// Lanes per block of the [`Ring`] passes: one vector of `f32` (AVX2).
const LANES: usize = 8;

/// The centre's coordinates and arc lengths one array per quantity, the first points repeated
/// past the last (point `k` at every index `≡ k mod n`, as far as `n + n / 2 + LANES`), so
/// every pair at a cyclic gap `g ≤ n / 2` is `(k, k + g)` for some `k < n`, with no wrap:
/// the passes over a whole gap run [`LANES`] pairs at a time to the end, no pair one by one.
/// The lanes past `n − 1` repeat pairs of lanes below `n`.
struct Ring<'a> {
    x: &'a [f32],
    y: &'a [f32],
    arc: &'a [f32],
    /// Points of the centre.
    n: usize,
}

impl<'a> Ring<'a> {
    /// The ring of `pts` and their arc lengths `arclen`, in `words` (`3·(n + n / 2 + LANES)`).
    fn of(pts: &[Vec2], arclen: &[f32], words: &'a mut [f32]) -> Self {
        let n = pts.len();
        let len = n + n / 2 + LANES;
        let (x, rest) = words[..3 * len].split_at_mut(len);
        let (y, arc) = rest.split_at_mut(len);
        for ((x, y), p) in x.iter_mut().zip(y.iter_mut()).zip(pts) {
            (*x, *y) = (p[0], p[1]);
        }
        arc[..n].copy_from_slice(arclen);
        for v in [&mut *x, &mut *y, &mut *arc] {
            // The repeats, as many points at a time as are written.
            let mut done = n;
            while done < len {
                let m = (len - done).min(done);
                v.copy_within(0..m, done);
                done += m;
            }
        }
        Self { x, y, arc, n }
    }

    /// `dist2` of the pairs `(k, k + g)` for `k` in the block of [`LANES`] from `start` (the
    /// square of a difference does not see its sign, so either order of the pair gives these
    /// bits).
    #[inline(always)]
    fn block_dist2(&self, start: usize, g: usize) -> [f32; LANES] {
        let at = |v: &[f32], s: usize| -> [f32; LANES] {
            v[s..s + LANES].try_into().expect("a block of LANES")
        };
        let (xa, ya, xb, yb) = (
            at(self.x, start),
            at(self.y, start),
            at(self.x, start + g),
            at(self.y, start + g),
        );
        std::array::from_fn(|t| {
            let (dx, dy) = (xa[t] - xb[t], ya[t] - yb[t]);
            dx * dx + dy * dy
        })
    }

    /// Whether some pair at cyclic gap `g` (`min_gap < g ≤ n / 2`) fails the thickness test —
    /// [`Thickness::fails`], the same bits: the arc lengths of a wrapped pair subtract in the
    /// other order here, and a difference negated is the negated difference, so its magnitude
    /// is the arc length between them (the lengths grow along the centre).
    fn thin_at_gap(&self, t: &Thickness<'_>, g: usize) -> bool {
        // One flag per lane, folded once at the end.
        let mut thin = [0u32; LANES];
        for start in (0..self.n).step_by(LANES) {
            let d2 = self.block_dist2(start, g);
            let (a, b) = (
                &self.arc[start..start + LANES],
                &self.arc[start + g..start + g + LANES],
            );
            for (((thin, &d2), &a), &b) in thin.iter_mut().zip(&d2).zip(a).zip(b) {
                *thin |= u32::from(t.fails_apart((b - a).abs(), d2));
            }
        }
        thin != [0; LANES]
    }

    /// Whether `ok(i, j)` fails for some pair of cyclic gap `g` (`1 ≤ g ≤ n / 2`) whose points
    /// are within `reach2` squared distance, each such pair handed to it once as `(i, j)` with
    /// `i < j`: [`LANES`] pairs are tested on distance at a time, and only those within go to
    /// `ok`.
    fn far_pairs_fail(&self, g: usize, reach2: f32, ok: &impl Fn(usize, usize) -> bool) -> bool {
        let n = self.n;
        // At `g = n / 2` the pairs from `k = n − g` on repeat those below it.
        let end = if 2 * g == n { n - g } else { n };
        (0..end).step_by(LANES).any(|start| {
            let d2 = self.block_dist2(start, g);
            let close = d2.iter().fold(0u32, |m, &d2| m | u32::from(d2 <= reach2));
            close != 0
                && (start..(start + LANES).min(end)).any(|k| {
                    let (i, j) = if k + g < n {
                        (k, k + g)
                    } else {
                        (k + g - n, k)
                    };
                    d2[k - start] <= reach2 && !ok(i, j)
                })
        })
    }
}

/// Whether segment `k` of `a` meets segment `(k ± g) mod n` of `b` for some `k` and some gap
/// `g` in `lo..=hi` (`hi ≤ n / 2`; only `+g` with `same`, where `a` is `b` and `lo ≥ 2`), by
/// blocks of [`BLOCK`] segments (`a_blocks`, `b_blocks`, `nb = ⌈n / 2⌉` each), every such pair
/// tested with the same predicate as segment by segment.
///
/// Segment `k` lies in block `⌊k / 2⌋`. For `m = k + g` without a wrap round the loop, the
/// blocks differ by `⌊g / 2⌋` (even `k`) or `⌈g / 2⌉` (odd `k`); for `m = k + g ∓ n` with a
/// wrap, by the same modulo `nb` when `n` is even, and when `n` is odd (the last block holds
/// only segment `n − 1`) by `⌈g / 2⌉` or `⌊g / 2⌋ + 1` for `g > 0` and by `−⌈|g| / 2⌉` or
/// `−⌊|g| / 2⌋ − 1` for `g < 0`. So every such pair lies in a block pair `(j, (j + d) mod nb)`
/// with `d` from `⌊lo / 2⌋` to `d_hi = ⌈hi / 2⌉` (`⌊hi / 2⌋ + 1` for odd `n`) — for two
/// polylines, where `−g` gives `−⌈g / 2⌉`, `−⌊g / 2⌋` or `−⌊g / 2⌋ − 1`, with `|d|` in that
/// range — and [`block_crossing`] tests all of those, each block pair's boxes first. A block's box is
/// the exact union of its segments' boxes, so block boxes apart leave every segment pair in them
/// apart — rejected by [`segments_intersect`]'s own first test — and block boxes that meet have
/// all their segment pairs tested. The pairs tested besides (other gaps between segments of the
/// same block pairs) are pairs of the all-pairs scan as well: a pair of one polyline at cyclic
/// gap ≤ 1 is never tested.
fn near_blocks_cross(
    a: &[Vec2],
    a_blocks: SegBoxes<'_>,
    b: &[Vec2],
    b_blocks: SegBoxes<'_>,
    lo: usize,
    hi: usize,
    same: bool,
) -> bool {
    near_block_pairs(
        a.len(),
        a_blocks,
        b_blocks,
        lo,
        hi,
        same,
        &mut segment_pair(a, b),
    )
}

/// Whether segment `k` of the closed polyline `a` meets segment `m` of `b` (as long as `a`).
fn segment_pair<'p>(a: &'p [Vec2], b: &'p [Vec2]) -> impl Fn(usize, usize) -> bool + 'p {
    let n = a.len();
    let next = move |k: usize| if k + 1 == n { 0 } else { k + 1 };
    move |k, m| segments_intersect(a[k], a[next(k)], b[m], b[next(m)])
}

/// Segment gaps of the outer border with the inner that [`near_segments_cross`] tests when
/// segments are long for the width: `−1..=1`, where the blocks' boxes meet most. From gap 2
/// on the blocks' boxes are apart often enough that the block pass (whose shifts `|d| ≥ 1`
/// test each block pair's four segment pairs only where the boxes meet) costs less than
/// segment by segment: on curvature-sampled circuits, whose straights have segments twice
/// the track's width, `−3..=3` made the whole check about 10 % slower.
const NEAR_SEGMENT_GAPS: usize = 1;

/// `orient` of [`segments_intersect`] (twice the signed area of `a, b, c`), the same
/// operations in the same order on the coordinates, so the same bits.
#[inline(always)]
fn orient_xy(ax: f32, ay: f32, bx: f32, by: f32, cx: f32, cy: f32) -> f32 {
    (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
}

/// Whether [`segments_intersect`]`(a0, a1, b0, b1)` is false for certain, branch-free (1 when
/// not certain): none of its four orientations (`orient_xy`, the same bits) is 0 and the pair
/// does not straddle both ways. Its touching tests each need an orientation equal to 0, and
/// its box test can only turn a true verdict false, so with no orientation 0 its verdict is
/// exactly its straddle test: `o1`, `o2` of opposite strict signs and `o3`, `o4` alike. Here a
/// straddle is read off the sign bits (`o1 ^ o2` negative), which for two nonzero numbers is
/// the same; a NaN may read either way, and the verdict is still false, as the straddle test
/// fails on a NaN. The other pairs (an orientation exactly 0, or a crossing) are left to
/// [`segments_intersect`] itself.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn not_surely_apart(
    a0x: f32,
    a0y: f32,
    a1x: f32,
    a1y: f32,
    b0x: f32,
    b0y: f32,
    b1x: f32,
    b1y: f32,
) -> u32 {
    let o1 = orient_xy(a0x, a0y, a1x, a1y, b0x, b0y);
    let o2 = orient_xy(a0x, a0y, a1x, a1y, b1x, b1y);
    let o3 = orient_xy(b0x, b0y, b1x, b1y, a0x, a0y);
    let o4 = orient_xy(b0x, b0y, b1x, b1y, a1x, a1y);
    let some_zero =
        u32::from(o1 == 0.0) | u32::from(o2 == 0.0) | u32::from(o3 == 0.0) | u32::from(o4 == 0.0);
    let both_straddle = ((o1.to_bits() ^ o2.to_bits()) & (o3.to_bits() ^ o4.to_bits())) >> 31;
    some_zero | both_straddle
}

/// Whether segment `k` of `a` meets segment `(k ± g) mod n` of `b` for some `k` and some gap
/// `g ≤ hi` (`2·hi + 1 < n`; `a`, `b` of `n` points each, segment `k` from point `k` to `k + 1
/// mod n`): every such pair is put to [`not_surely_apart`], eight at a time over the coordinates
/// copied into `words` (`4·n`, one array per axis of each polyline), and the pairs it does not
/// clear to [`segments_intersect`] — so the verdict is exactly that of testing each pair with
/// [`segments_intersect`]. For the gap `+g` the pairs are (segment `k` of `a`, `k + g` of `b`),
/// for `−g` (`k + g` of `a`, `k` of `b`); the `g + 1` pairs whose indices wrap go one by one.
fn near_segments_cross(a: &[Vec2], b: &[Vec2], hi: usize, words: &mut [f32]) -> bool {
    let n = a.len();
    let (ax, rest) = words[..4 * n].split_at_mut(n);
    let (ay, rest) = rest.split_at_mut(n);
    let (bx, by) = rest.split_at_mut(n);
    for (k, (p, q)) in a.iter().zip(b).enumerate() {
        (ax[k], ay[k], bx[k], by[k]) = (p[0], p[1], q[0], q[1]);
    }
    let (ax, ay, bx, by) = (&*ax, &*ay, &*bx, &*by);
    let cross = segment_pair(a, b);
    // Segment `k + sa` of `a` with `k + sb` of `b` for every `k` (one of `sa`, `sb` is 0).
    let shifted = |sa: usize, sb: usize| {
        let s = sa.max(sb);
        let m = n - s - 1;
        let (a0x, a1x, a0y, a1y) = (
            &ax[sa..sa + m],
            &ax[sa + 1..sa + 1 + m],
            &ay[sa..sa + m],
            &ay[sa + 1..sa + 1 + m],
        );
        let (b0x, b1x, b0y, b1y) = (
            &bx[sb..sb + m],
            &bx[sb + 1..sb + 1 + m],
            &by[sb..sb + m],
            &by[sb + 1..sb + 1 + m],
        );
        let mut open = 0u32;
        for t in 0..m {
            open |= not_surely_apart(
                a0x[t], a0y[t], a1x[t], a1y[t], b0x[t], b0y[t], b1x[t], b1y[t],
            );
        }
        (open != 0 && (0..m).any(|t| cross(t + sa, t + sb)))
            || (m..n).any(|t| {
                let (k, l) = (t + sa, t + sb);
                cross(if k < n { k } else { k - n }, if l < n { l } else { l - n })
            })
    };
    (0..=hi).any(|g| shifted(0, g) || (g > 0 && shifted(g, 0)))
}

/// [`near_blocks_cross`] with the segment test `cross(k, m)` (segment `k` of the first
/// polyline, `m` of the second) for polylines of `n` segments.
fn near_block_pairs(
    n: usize,
    a_blocks: SegBoxes<'_>,
    b_blocks: SegBoxes<'_>,
    lo: usize,
    hi: usize,
    same: bool,
    cross: &mut impl FnMut(usize, usize) -> bool,
) -> bool {
    let nb = a_blocks.lo_x.len();
    let d_hi = if n % BLOCK == 0 {
        hi.div_ceil(BLOCK)
    } else {
        hi / BLOCK + 1
    } as isize;
    let d_lo = if same { (lo / BLOCK) as isize } else { -d_hi };
    if d_hi - d_lo + 1 >= nb as isize {
        return (0..nb).any(|d| block_crossing(n, a_blocks, b_blocks, d, same, cross));
    }
    // Two polylines: the gaps `±g`, `g ≥ lo`, lie in shifts `|d| ≥ ⌊lo / 2⌋` (see
    // `near_blocks_cross`).
    let d_min = (lo / BLOCK) as isize;
    (d_lo..=d_hi).filter(|d| d.abs() >= d_min).any(|d| {
        let d = d.rem_euclid(nb as isize) as usize;
        block_crossing(n, a_blocks, b_blocks, d, same, cross)
    })
}

/// Whether the turn at `p` from `a` to `b` (`dot = (p − a)·(b − p)`) is one a circle of radius
/// `1 / max_curvature` could make: the direction change is under 90° (`dot > 0`) and the Menger
/// curvature (the circle through the three points) is at most `max_curvature`.
///
/// The circle alone cannot tell a turn from a reversal: `a, p, b` and a fold back `a, p, b'`
/// with `b'` near `a` can lie on equally large circles, because the Menger curvature is
/// `2·sin(∠apb) / |ab|` and `sin` does not see whether the interior angle `∠apb` is near 0 (a
/// reversal) or near π (a gentle turn). With `dot > 0` the interior angle exceeds 90°, so `p`
/// lies on the minor arc between `a` and `b` and both chords subtend minor arcs: then a
/// curvature ≤ `k` is the same as a turning angle ≤ `asin(k·|ap| / 2) + asin(k·|pb| / 2)`,
/// the turn of a circle of radius `1/k` through chords of those lengths. NaN fails.
#[inline]
pub fn turn_complies(a: Vec2, p: Vec2, b: Vec2, dot: f32, max_curvature: f32) -> bool {
    dot > 0.0 && !curvature_exceeds(a, p, b, max_curvature)
}

/// The largest cyclic index gap `g < n` with `g · longest ≤ arc`, in f32 as the caller's arc
/// lengths are: pairs of a closed polyline whose segments are at most `longest` long and whose
/// index gap is at most `g` are at most `arc` apart along the curve. `n` when every pair is,
/// 0 for NaN.
#[inline]
pub fn exempt_gap(arc: f32, longest: f32, n: usize) -> usize {
    let g = arc / longest;
    if g >= n as f32 {
        return n;
    }
    // NaN converts to 0: nothing is exempt.
    let mut g = g as usize;
    // The division rounds: step back while the product overshoots.
    while g > 0 && g as f32 * longest > arc {
        g -= 1;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::geometry::{dist, test_unit as uniform};

    #[test]
    fn a_reversal_on_a_large_circle_is_not_a_turn() {
        // Issue 14's fold back: the circle through the three points has radius 13.8 m.
        let (a, p, b) = ([108.71, -81.63], [111.31, -79.25], [107.86, -82.75]);
        let dot = (p[0] - a[0]) * (b[0] - p[0]) + (p[1] - a[1]) * (b[1] - p[1]);
        assert!(!curvature_exceeds(a.into(), p.into(), b.into(), 1.0 / 13.0));
        assert!(!turn_complies(
            a.into(),
            p.into(),
            b.into(),
            dot,
            1.0 / 13.0
        ));
        // The same three points in turning order are a turn of that circle.
        let (a, p, b) = (b, a, p);
        let dot = (p[0] - a[0]) * (b[0] - p[0]) + (p[1] - a[1]) * (b[1] - p[1]);
        assert!(turn_complies(a.into(), p.into(), b.into(), dot, 1.0 / 13.0));
        assert!(!turn_complies(
            a.into(),
            p.into(),
            b.into(),
            dot,
            1.0 / 14.5
        ));
        // A right angle and NaN fail.
        assert!(!turn_complies(
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(1.0, 1.0),
            0.0,
            1.0
        ));
        assert!(!turn_complies(
            Vec2::new(f32::NAN, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(2.0, 0.0),
            f32::NAN,
            1.0
        ));
    }

    /// The bound thickness relies on: `g · longest ≤ arc` for the gap returned, and it is the
    /// largest such gap (so no pair needing a test is exempt, and none is tested needlessly).
    #[test]
    fn exempt_gap_is_the_largest_gap_within_the_arc() {
        let mut unit = uniform(0x9e37_79b9_u32);
        for _ in 0..100_000 {
            let longest = 0.1 + 20.0 * unit();
            let arc = 60.0 * unit();
            let n = 8 + (300.0 * unit()) as usize;
            let g = exempt_gap(arc, longest, n);
            if g < n {
                assert!(g as f32 * longest <= arc, "{arc} {longest}: {g}");
                assert!((g + 1) as f32 * longest > arc, "{arc} {longest}: {g}");
            } else {
                assert!((n - 1) as f32 * longest <= arc);
            }
        }
        // Exact multiples stay exempt; NaN exempts nothing.
        assert_eq!(exempt_gap(15.0, 5.0, 100), 3);
        assert_eq!(exempt_gap(15.0, 5.0, 3), 3);
        assert_eq!(exempt_gap(0.0, 5.0, 100), 0);
        assert_eq!(exempt_gap(f32::NAN, 5.0, 100), 0);
    }

    /// The axis-crossing count is the turning number the sum of the turns' angles rounds to, on
    /// closed polylines of turning number −2..=3 (epicycles, figure eights, wobbly loops at large
    /// offsets) whose every turn is under 90°.
    #[test]
    fn axis_crossings_count_the_turning_number() {
        let mut unit = uniform(0x7f4a_7c15_u32);
        let mut seen = std::collections::BTreeSet::new();
        for case in 0..3000 {
            let n = 24 + case % 200;
            let (k1, k2) = (
                [1.0f32, -1.0, 2.0, 3.0, -2.0][case % 5],
                [0.0f32, 2.0, -3.0][case % 3],
            );
            let a2 = 0.6 * unit();
            let offset = if case % 4 == 0 { 5000.0 } else { 0.0 };
            let pts: Vec<Vec2> = (0..n)
                .map(|i| {
                    let t = i as f32 / n as f32 * crate::math::TAU + 0.3 * unit() / n as f32;
                    let (s1, c1) = crate::math::sin_cos(k1 * t);
                    let (s2, c2) = crate::math::sin_cos(k2 * t);
                    Vec2::new(
                        offset + 100.0 * c1 + 100.0 * a2 * c2,
                        offset + 100.0 * s1 + 100.0 * a2 * s2,
                    )
                })
                .collect();
            let (mut sum, mut count, mut sharp) = (0.0f32, 0i32, false);
            for i in 0..n {
                let (a, p, b) = (pts[(i + n - 1) % n], pts[i], pts[(i + 1) % n]);
                let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
                let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
                let (cross, dot) = (ux * vy - uy * vx, ux * vx + uy * vy);
                sharp |= dot <= 0.0;
                sum += crate::math::atan2(cross, dot);
                count += axis_crossing(uy, vy, cross);
            }
            if sharp {
                continue;
            }
            let turns = sum / crate::math::TAU;
            assert!((turns - turns.round()).abs() < 1e-3, "case {case}: {turns}");
            assert_eq!(count, turns.round() as i32, "case {case}");
            seen.insert(count);
        }
        assert!(seen.len() >= 4, "{seen:?}");
    }

    /// Asserts that more than `least` of the `verdicts` passed and more than `least` failed, so
    /// that a comparison exercised both outcomes.
    fn assert_both_verdicts(verdicts: &[bool], least: usize) {
        let pass = verdicts.iter().filter(|&&v| v).count();
        let fail = verdicts.len() - pass;
        assert!(pass > least && fail > least, "{pass} pass, {fail} fail");
    }

    /// `close_pairs_pass`'s verdict on `pts` with half width `hw`, asserted equal to the
    /// all-pairs scan's with the same predicates; returns it.
    fn check_against_all_pairs(pts: &[Vec2], hw: f32, what: &str) -> bool {
        all_pairs_scan(pts, hw, what).verdict
    }

    /// What the all-pairs scan finds on a loop, next to `close_pairs_pass`'s gaps.
    struct AllPairs {
        /// The verdict (asserted equal to `close_pairs_pass`'s).
        verdict: bool,
        /// The cyclic gaps of the pairs that fail the thickness test.
        thin_gaps: std::collections::BTreeSet<usize>,
        /// Whether some pair of segments meets.
        crossing: bool,
        /// `close_pairs_pass`'s `near` and `searched` gaps (`pass_gaps`).
        near: usize,
        searched: usize,
        /// Pairs past `near` within `reach` but farther apart than the bound from their own
        /// segments (`far_pair_ok`'s local reach).
        outside_local: usize,
    }

    /// [`check_against_all_pairs`], with what the scan found.
    fn all_pairs_scan(pts: &[Vec2], hw: f32, what: &str) -> AllPairs {
        let n = pts.len();
        let sigma = orientation(pts);
        let mut border = vec![Vec2::ZERO; 2 * n];
        for i in 0..n {
            let nl = left_normal(pts, i);
            let p = pts[i];
            border[i] = Vec2::new(p[0] - sigma * hw * nl[0], p[1] - sigma * hw * nl[1]);
            border[n + i] = Vec2::new(p[0] + sigma * hw * nl[0], p[1] + sigma * hw * nl[1]);
        }
        let mut arclen = vec![0.0f32; n];
        let (mut total, mut longest) = (0.0f32, 0.0f32);
        for i in 0..n {
            arclen[i] = total;
            let l = dist(pts[i], pts[(i + 1) % n]);
            longest = longest.max(l);
            total += l;
        }
        let min_sep = 2.0 * (1.0 - SLACK) * hw;
        let thickness = Thickness {
            arclen: &arclen,
            total,
            neighbour_arc: crate::math::PI * hw,
            min_sep2: min_sep * min_sep,
            min_gap: exempt_gap(crate::math::PI * hw, longest, n),
        };
        let mut seg_boxes = vec![0.0; BOX_WORDS * n];
        let mut chunk_boxes = vec![Vec2::ZERO; crate::track::chunks::boxes_len(n)];
        let centre_longest2 = (0..n).fold(0.0f32, |m, i| m.max(dist2(pts[i], pts[(i + 1) % n])));
        let got = close_pairs_pass(
            pts,
            &border,
            hw,
            centre_longest2,
            &thickness,
            &mut seg_boxes,
            &mut chunk_boxes,
        );
        let lines = [pts, &border[..n], &border[n..]];
        let end = |k: usize| (k + 1) % n;
        let thin_gaps: std::collections::BTreeSet<usize> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| {
                let gap = (j - i).min(n - (j - i));
                gap > thickness.min_gap && thickness.fails(i, j, dist2(pts[i], pts[j]))
            })
            .map(|(i, j)| (j - i).min(n - (j - i)))
            .collect();
        let crossing = !POLYLINE_PAIRS.iter().all(|&(qa, qb)| {
            (0..n).all(|k| {
                (0..n).all(|m| {
                    let gap = k.abs_diff(m).min(n - k.abs_diff(m));
                    (qa == qb && gap <= 1)
                        || !segments_intersect(
                            lines[qa][k],
                            lines[qa][end(k)],
                            lines[qb][m],
                            lines[qb][end(m)],
                        )
                })
            })
        });
        let want = thin_gaps.is_empty() && !crossing;
        assert_eq!(got, want, "{what}, hw {hw}: {pts:?}");
        let longest = centre_longest2
            .max(longest_segment2(&border[..n]))
            .max(longest_segment2(&border[n..]))
            .sqrt();
        let reach = 1.01 * (2.0 * hw + longest);
        let slack = 0.01 * (2.0 * hw + longest);
        let (near, searched) = pass_gaps(reach, total / n as f32, n);
        let longest_at = |k: usize| {
            let prev = (k + n - 1) % n;
            lines
                .iter()
                .map(|l| dist(l[prev], l[k]).max(dist(l[k], l[end(k)])))
                .fold(0.0f32, f32::max)
        };
        let outside_local = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| {
                let d = dist(pts[i], pts[j]);
                (j - i).min(n - (j - i)) > near
                    && d <= reach
                    && d > 2.0 * hw + 0.5 * (longest_at(i) + longest_at(j)) + slack
            })
            .count();
        AllPairs {
            verdict: want,
            thin_gaps,
            crossing,
            near,
            searched,
            outside_local,
        }
    }

    /// A pinch that only the gaps between the near passes and the chunk search
    /// (`Ring::far_pairs_fail`) can see: thin stadiums whose straight sides run between 1.96 and 2
    /// half widths apart (each inner border crosses over past the other side's, parallel to
    /// it, and round the ends the inner border curls back inside: every polyline stays simple),
    /// with one point of a side dented towards the other, so that the thickness fails at a pair
    /// or two across the dent and nothing else fails. The dent moves along the side, so the
    /// failing gaps sweep from the near gaps through `far_pairs_fail`'s into the chunk
    /// search's; the loops whose every failing pair lies in `far_pairs_fail`'s gaps must be
    /// among them, each decided as the all-pairs scan decides.
    #[test]
    fn pinch_between_the_near_gaps_and_the_chunk_search() {
        let hw = 6.0f32;
        let mut between = 0;
        let mut verdicts = Vec::new();
        for (spacing, width) in [
            (1.8f32, 11.85f32),
            (2.0, 11.9),
            (2.0, 11.95),
            (2.2, 11.9),
            (1.6, 11.9),
        ] {
            for step in 0..40 {
                let dent_at = 2.0 + 0.25 * step as f32;
                for offset in [0.0f32, 1.0e3] {
                    let pts = dented_stadium(40.0, 0.5 * width, spacing, dent_at, offset);
                    let what = format!("spacing {spacing}, width {width}, dent at {dent_at}");
                    let scan = all_pairs_scan(&pts, hw, &what);
                    let only_there = scan
                        .thin_gaps
                        .iter()
                        .all(|&g| scan.near < g && g <= scan.searched);
                    if !scan.thin_gaps.is_empty() && only_there && !scan.crossing {
                        between += 1;
                    }
                    verdicts.push(scan.verdict);
                }
            }
        }
        assert!(between >= 8, "{between} loops fail only between the passes");
        assert!(verdicts.iter().any(|&v| v) && verdicts.iter().any(|&v| !v));
    }

    /// A stadium of straight sides `length` long and ends of radius `r`, points about `spacing`
    /// apart from the start of its right side (walked up), which is dented 0.3 m towards the
    /// left side around `dent_at` metres from its start (a parabola 0.8 m wide each way).
    fn dented_stadium(length: f32, r: f32, spacing: f32, dent_at: f32, offset: f32) -> Vec<Vec2> {
        let pi = crate::math::PI;
        let perimeter = 2.0 * length + 2.0 * pi * r;
        let n = (perimeter / spacing).round() as usize;
        (0..n)
            .map(|k| {
                let s = k as f32 * perimeter / n as f32;
                let (x, y) = if s < length {
                    let u = (s - dent_at) / 0.8;
                    (2.0 * r - 0.3 * (1.0 - u * u).max(0.0), s - 0.5 * length)
                } else if s < length + pi * r {
                    let (sn, cs) = crate::math::sin_cos((s - length) / r);
                    (r + r * cs, 0.5 * length + r * sn)
                } else if s < 2.0 * length + pi * r {
                    (0.0, 0.5 * length - (s - length - pi * r))
                } else {
                    let (sn, cs) = crate::math::sin_cos((s - 2.0 * length - pi * r) / r);
                    (r - r * cs, -0.5 * length - r * sn)
                };
                Vec2::new(offset + x, offset + y)
            })
            .collect()
    }

    /// The single walk of `is_valid` rounds as the separate functions do: its turn test is
    /// `curvature_exceeds` bit for bit on random triples (near and far from the origin, near
    /// the limit), and the borders it writes are `p ∓ σ·hw·left_normal` exactly.
    #[test]
    fn the_walk_rounds_as_the_separate_functions() {
        let mut unit = uniform(0x1b87_3593_u32);
        for case in 0..200_000 {
            let offset = [0.0f32, 1.0e3, 1.0e5][case % 3];
            let mut pt = || Vec2::new(offset + 40.0 * unit() - 20.0, offset + 40.0 * unit() - 20.0);
            let (a, p, b) = (pt(), pt(), pt());
            let k = 0.01 + 0.5 * unit();
            let (ux, uy) = (p[0] - a[0], p[1] - a[1]);
            let (vx, vy) = (b[0] - p[0], b[1] - p[1]);
            let (wx, wy) = (b[0] - a[0], b[1] - a[1]);
            let (u2, v2, w2) = (ux * ux + uy * uy, vx * vx + vy * vy, wx * wx + wy * wy);
            // The curvature at its limit: exactly on the boundary, both ways of rounding.
            let limit = {
                let cross = ux * wy - uy * wx;
                (4.0 * cross * cross / (u2 * v2 * w2)).sqrt()
            };
            for k in [
                k,
                limit,
                limit * (1.0 + f32::EPSILON),
                limit * (1.0 - f32::EPSILON),
            ] {
                assert_eq!(
                    turn_exceeds(ux, uy, wx, wy, u2, v2, w2, k * k),
                    curvature_exceeds(a, p, b, k),
                    "{a:?} {p:?} {b:?} {k}"
                );
            }
        }
        for case in 0..300 {
            let n = 40 + case % 90;
            let offset = if case % 2 == 0 { 2.0e4 } else { 0.0 };
            let r0 = n as f32 * 5.0 / crate::math::TAU;
            let sense = if case % 3 == 0 { -1.0 } else { 1.0 };
            let wobble = 0.1 * unit();
            let pts: Vec<Vec2> = (0..n)
                .map(|k| {
                    let t = sense * k as f32 / n as f32 * crate::math::TAU;
                    let (s2, _) = crate::math::sin_cos(2.0 * t);
                    let (s, c) = crate::math::sin_cos(t);
                    let r = r0 * (1.0 + wobble * s2);
                    Vec2::new(offset + r * c, offset + r * s)
                })
                .collect();
            let hw = 2.0 + 4.0 * unit();
            let consts = ValidityConsts {
                half_width_m: hw,
                min_turn_radius_m: 0.5 * r0,
            };
            let mut buffers = ValidityBuffers::new(n);
            let valid = is_valid(&pts, &consts, &mut buffers.scratch());
            assert!(valid, "case {case}");
            let sigma = orientation(&pts);
            for i in 0..n {
                let nl = left_normal(&pts, i);
                let p = pts[i];
                let outer = Vec2::new(p[0] - sigma * hw * nl[0], p[1] - sigma * hw * nl[1]);
                let inner = Vec2::new(p[0] + sigma * hw * nl[0], p[1] + sigma * hw * nl[1]);
                for (got, want) in [(buffers.border[i], outer), (buffers.border[n + i], inner)] {
                    assert_eq!(
                        got[0].to_bits(),
                        want[0].to_bits(),
                        "case {case}, point {i}"
                    );
                    assert_eq!(
                        got[1].to_bits(),
                        want[1].to_bits(),
                        "case {case}, point {i}"
                    );
                }
            }
        }
    }

    /// The block passes reach every pair they stand for: with every block box meeting, each pair
    /// `(k, k ± g mod n)`, `lo ≤ g ≤ hi`, is handed to the segment test (across the wrap of the
    /// indices too, for odd and even `n`), and no pair of one polyline at cyclic gap ≤ 1 is.
    #[test]
    fn near_block_pairs_reach_every_gap() {
        for n in 8usize..=75 {
            let nb = blocks_of(n);
            let words = vec![0.0f32; 4 * nb];
            let blocks = SegBoxes::of(&words, 0, nb);
            let half = n / 2;
            for same in [true, false] {
                for hi in 0..=half {
                    if same && hi < 4 || !same && 2 * hi + 1 >= n {
                        continue;
                    }
                    // Two polylines take a lower bound too (the pass from the next gap).
                    for &lo in if same { &[4usize][..] } else { &[0, 4][..] } {
                        let mut seen = std::collections::BTreeSet::new();
                        let found =
                            near_block_pairs(n, blocks, blocks, lo, hi, same, &mut |k, m| {
                                seen.insert((k, m));
                                false
                            });
                        assert!(!found);
                        for k in 0..n {
                            for g in lo..=hi {
                                let m = (k + g) % n;
                                assert!(
                                    seen.contains(&(k, m)) || same && seen.contains(&(m, k)),
                                    "n {n}, gaps {lo}..={hi}, same {same}: {k},{m} missed"
                                );
                                if !same {
                                    let m = (k + n - g) % n;
                                    assert!(seen.contains(&(k, m)), "n {n}, {hi}: {k},{m} missed");
                                }
                            }
                        }
                        if same {
                            for &(k, m) in &seen {
                                let gap = k.abs_diff(m).min(n - k.abs_diff(m));
                                assert!(gap > 1, "n {n}: {k},{m} are neighbours");
                            }
                        }
                    }
                }
            }
        }
    }

    /// The near-gap passes by blocks of segments decide as the all-pairs scan where they work
    /// hardest: long near-straight runs (block boxes apart on one axis, barely), zig-zags and
    /// hairpins that fold the borders onto themselves a few segments apart (block boxes that
    /// meet), single sharp bumps next to the wrap of the indices, odd and even point counts (the
    /// block pairs across the wrap), and coordinates far from the origin (coarse f32 steps).
    #[test]
    fn near_blocks_match_all_pairs() {
        let mut unit = uniform(0x68e3_1da4_u32);
        let mut verdicts = Vec::new();
        for case in 0..3000 {
            let n = 8 + (case / 3) % 97;
            let offset = [0.0f32, 3.0e3, 2.0e5][case % 3];
            let spacing = 5.0;
            let r0 = n as f32 * spacing / crate::math::TAU;
            let shape = (case / 7) % 5;
            // Where shape 4 bends sharply: near the wrap of the indices (the block pairs
            // across it) or anywhere.
            let k0 = if case % 2 == 0 {
                (n - 2 + case / 2 % 5) % n
            } else {
                (unit() * n as f32) as usize % n
            };
            let amp = spacing * (0.05 + 1.5 * unit());
            let lobes = (2 + case % 5) as f32;
            let pts: Vec<Vec2> = (0..n)
                .map(|k| {
                    let t = k as f32 / n as f32 * crate::math::TAU;
                    let (s, c) = crate::math::sin_cos(t);
                    let (x, y) = match shape {
                        // A rounded oblong: long near-straight sides, tight ends.
                        0 => {
                            let (sx, sy) = (c.signum() * c.abs().sqrt(), s * 0.5);
                            (2.0 * r0 * sx, r0 * sy)
                        }
                        // A zig-zag round a circle: every other point pushed out.
                        1 => {
                            let r = r0 + if k % 2 == 0 { amp } else { -amp };
                            (r * c, r * s)
                        }
                        // Lobes whose inner bends are hairpins a few points long.
                        2 => {
                            let (sl, _) = crate::math::sin_cos(lobes * t);
                            let r = r0 * (1.0 + 0.7 * sl);
                            (r * c, r * s)
                        }
                        // A near-straight loop: long and thin, nearly a double segment.
                        3 => (1.8 * r0 * c, 0.15 * r0 * s + 0.02 * amp * (unit() - 0.5)),
                        // A circle with one sharp bump (three points pushed out or in).
                        _ => {
                            let gap = k.abs_diff(k0).min(n - k.abs_diff(k0));
                            let push = match gap {
                                0 => 2.0 * amp,
                                1 => amp,
                                _ => 0.0,
                            };
                            let r = r0 + if case % 4 < 2 { push } else { -push };
                            (r * c, r * s)
                        }
                    };
                    let jitter = 0.01 * spacing * (unit() - 0.5);
                    Vec2::new(offset + x + jitter, offset + y - jitter)
                })
                .collect();
            let hw = spacing * (0.1 + 2.0 * unit() * unit());
            verdicts.push(check_against_all_pairs(
                &pts,
                hw,
                &format!("case {case}, shape {shape}"),
            ));
        }
        assert_both_verdicts(&verdicts, 200);
    }

    /// `not_surely_apart` clears only pairs `segments_intersect` rejects: on segments with ends
    /// on a small integer grid (touching ends, ends on the other segment, collinear overlaps:
    /// orientations exactly 0), crossing and apart ones, near and far from the origin; and it
    /// leaves the touching pairs (no straddle, an orientation 0) to the exact test.
    #[test]
    fn surely_apart_pairs_do_not_meet() {
        let mut unit = uniform(0x7f4a_7c15_u32);
        let (mut touching, mut cleared) = (0, 0);
        for case in 0..200_000 {
            let offset = [0.0f32, 1.5e3, -2.0e5][case % 3];
            let scale = [1.0f32, 0.5, 3.0][case / 3 % 3];
            let mut p = || {
                let c = |u: f32| offset + scale * (u * 5.0).floor();
                Vec2::new(c(unit()), c(unit()))
            };
            let (a0, a1, b0, b1) = (p(), p(), p(), p());
            let open = not_surely_apart(a0[0], a0[1], a1[0], a1[1], b0[0], b0[1], b1[0], b1[1]);
            let meet = segments_intersect(a0, a1, b0, b1);
            assert!(
                open == 1 || !meet,
                "case {case}: {a0:?} {a1:?} {b0:?} {b1:?}"
            );
            cleared += usize::from(open == 0);
            let o = [
                orient_xy(a0[0], a0[1], a1[0], a1[1], b0[0], b0[1]),
                orient_xy(a0[0], a0[1], a1[0], a1[1], b1[0], b1[1]),
            ];
            touching += usize::from(meet && o.contains(&0.0));
        }
        assert!(
            touching > 1000 && cleared > 1000,
            "{touching} touching, {cleared} cleared"
        );
    }

    /// The outer-with-inner gaps taken segment by segment (`near_segments_cross`, for segments
    /// longer on average than the track is wide) decide as the all-pairs scan: half widths from a
    /// twentieth to under half the spacing, zig-zags and lobes that fold the borders across each
    /// other a few segments apart (crossings at every near gap), and coordinates snapped to a
    /// metre grid (orientations exactly 0: collinear and touching pairs), near and far from the
    /// origin, odd and even point counts (the pairs across the wrap of the indices).
    #[test]
    fn near_segments_match_all_pairs() {
        let mut unit = uniform(0x1b87_3593_u32);
        let mut verdicts = Vec::new();
        let mut by_segments = 0;
        for case in 0..3000 {
            let n = 16 + (case / 4) % 90;
            let offset = [0.0f32, 2.0e3, 1.0e5, -4.0e4][case % 4];
            let spacing = 5.0;
            let r0 = n as f32 * spacing / crate::math::TAU;
            let shape = (case / 5) % 3;
            let amp = spacing * (0.02 + 0.6 * unit());
            let lobes = (2 + case % 4) as f32;
            let snap = case % 3 == 0;
            let pts: Vec<Vec2> = (0..n)
                .map(|k| {
                    let t = k as f32 / n as f32 * crate::math::TAU;
                    let (s, c) = crate::math::sin_cos(t);
                    let r = match shape {
                        // A zig-zag round a circle: every other point pushed out.
                        0 => r0 + if k % 2 == 0 { amp } else { -amp },
                        // Lobes whose inner bends fold a few points long.
                        1 => {
                            let (sl, _) = crate::math::sin_cos(lobes * t);
                            r0 * (1.0 + 0.7 * sl)
                        }
                        // A circle with points pushed in or out at random.
                        _ => r0 + amp * (unit() - 0.5),
                    };
                    let (x, y) = (r * c, r * s);
                    let (x, y) = if snap { (x.round(), y.round()) } else { (x, y) };
                    Vec2::new(offset + x, offset + y)
                })
                .collect();
            let hw = spacing * (0.05 + 0.4 * unit());
            let scan = all_pairs_scan(&pts, hw, &format!("case {case}, shape {shape}"));
            let total: f32 = (0..n).map(|k| dist(pts[k], pts[(k + 1) % n])).sum();
            if total > 2.0 * n as f32 * hw && 2 * (scan.near + 1) + 1 < n {
                by_segments += 1;
            }
            verdicts.push(scan.verdict);
        }
        assert!(by_segments > 2000, "{by_segments} cases by segments");
        assert_both_verdicts(&verdicts, 300);
    }

    /// The monotone-run shortcut of the same-polyline near gaps (`same_line_crosses`) decides as
    /// the all-pairs scan where the runs are hardest to read: sides parallel to an axis (segments
    /// with `dx == 0` or `dy == 0`), staircases (no two consecutive segments move on one axis the
    /// same way), coordinates snapped to a coarse grid (repeated values, zero-length segments),
    /// small curls that cross or just miss a few segments on, and zig-zags round a circle, near
    /// and far from the origin.
    #[test]
    fn monotone_runs_match_all_pairs() {
        let mut unit = uniform(0x3c6e_f372_u32);
        let mut verdicts = Vec::new();
        for case in 0..3000 {
            let n = 12 + (case / 5) % 90;
            let offset = [0.0f32, 1.0e3, 1.0e5, -3.0e4][case % 4];
            let spacing = 5.0;
            let r0 = n as f32 * spacing / crate::math::TAU;
            let shape = case % 5;
            let k0 = (unit() * n as f32) as usize % n;
            let pts: Vec<Vec2> = (0..n)
                .map(|k| {
                    let t = k as f32 / n as f32 * crate::math::TAU;
                    let (s, c) = crate::math::sin_cos(t);
                    let (x, y) = match shape {
                        // A square walked side by side: each side parallel to an axis.
                        0 => {
                            let side = n / 4;
                            let (q, r) = (
                                (k / side.max(1)).min(3),
                                k - (k / side.max(1)).min(3) * side,
                            );
                            let u = r as f32 * spacing;
                            let l = side as f32 * spacing;
                            match q {
                                0 => (u, 0.0),
                                1 => (l, u),
                                2 => (l - u, l),
                                _ => (0.0, l - u),
                            }
                        }
                        // A staircase round a circle: x and y move in turns.
                        1 => {
                            let j = k - k % 2;
                            let t0 = j as f32 / n as f32 * crate::math::TAU;
                            let t1 = (j + 2) as f32 / n as f32 * crate::math::TAU;
                            let (s0, c0) = crate::math::sin_cos(t0);
                            let (_, c1) = crate::math::sin_cos(t1);
                            if k % 2 == 0 {
                                (r0 * c0, r0 * s0)
                            } else {
                                (r0 * c1, r0 * s0)
                            }
                        }
                        // A circle snapped to a grid of about a spacing.
                        2 => {
                            let q = spacing * (0.3 + 1.2 * unit());
                            ((r0 * c / q).round() * q, (r0 * s / q).round() * q)
                        }
                        // A circle with a curl: a few points round a small circle that may
                        // cross the path a few segments on.
                        3 => {
                            let gap = (k + n - k0) % n;
                            if (1..=6).contains(&gap) {
                                let a = gap as f32 / 6.0 * crate::math::TAU;
                                let (sa, ca) = crate::math::sin_cos(a);
                                let rc = spacing * (0.3 + 1.5 * unit());
                                (r0 * c + rc * (ca - 1.0) * c, r0 * s + rc * sa)
                            } else {
                                (r0 * c, r0 * s)
                            }
                        }
                        // A zig-zag round a circle, small enough that some windows stay
                        // monotone.
                        _ => {
                            let amp = spacing * 0.3 * unit();
                            let r = r0 + if k % 2 == 0 { amp } else { -amp };
                            (r * c, r * s)
                        }
                    };
                    Vec2::new(offset + x, offset + y)
                })
                .collect();
            let hw = spacing * (0.05 + 1.5 * unit() * unit());
            verdicts.push(check_against_all_pairs(
                &pts,
                hw,
                &format!("case {case}, shape {shape}"),
            ));
        }
        assert_both_verdicts(&verdicts, 200);
    }

    /// `Ring::far_pairs_fail` hands every pair of cyclic gap `g` within the reach to its test
    /// exactly once, each as `(i, j)` with `i < j`, and no other pair.
    #[test]
    fn gap_pairs_are_each_pair_of_the_gap_once() {
        for n in 2usize..=40 {
            let pts: Vec<Vec2> = (0..n)
                .map(|k| {
                    let t = k as f32 / n as f32 * crate::math::TAU;
                    let (s, c) = crate::math::sin_cos(t);
                    Vec2::new(10.0 * c + 0.5 * (k % 3) as f32, 6.0 * s)
                })
                .collect();
            let arclen = vec![0.0; n];
            let mut words = vec![0.0; 3 * (n + n / 2 + LANES)];
            let ring = Ring::of(&pts, &arclen, &mut words);
            for g in 1..=n / 2 {
                for reach2 in [f32::INFINITY, 4.0, 25.0] {
                    let seen = std::cell::RefCell::new(std::collections::BTreeSet::new());
                    assert!(!ring.far_pairs_fail(g, reach2, &|i, j| {
                        assert!(
                            i < j && seen.borrow_mut().insert((i, j)),
                            "n {n}, g {g}: {i},{j}"
                        );
                        true
                    }));
                    let seen = seen.into_inner();
                    for i in 0..n {
                        for j in i + 1..n {
                            let gap = (j - i).min(n - (j - i));
                            let within = dist2(pts[i], pts[j]) <= reach2;
                            if gap == g && within {
                                assert!(seen.contains(&(i, j)), "n {n}, g {g}: {i},{j} missed");
                            }
                            if gap != g {
                                assert!(!seen.contains(&(i, j)), "n {n}, g {g}: {i},{j}");
                            }
                        }
                    }
                    // The first failing pair stops the pass.
                    if !seen.is_empty() {
                        let calls = std::cell::Cell::new(0);
                        assert!(ring.far_pairs_fail(g, reach2, &|_, _| {
                            calls.set(calls.get() + 1);
                            false
                        }));
                        assert_eq!(calls.get(), 1);
                    }
                }
            }
        }
    }

    /// `close_pairs_pass` (local gaps in full, farther pairs through the chunk search within
    /// `reach`) decides exactly as the all-pairs scan with the same predicates: on random loops
    /// that cross themselves, pinch and fold their borders, at large and small coordinates and
    /// half widths from a tenth of the spacing to several spacings.
    #[test]
    fn close_pairs_pass_matches_all_pairs() {
        let mut unit = uniform(0x2545_f491_u32);
        let mut verdicts = Vec::new();
        for case in 0..4000 {
            let n = 8 + (case / 2) % 120;
            let offset = if case % 3 == 0 { 3000.0 } else { 0.0 };
            let wobble = 0.25 * (case % 5) as f32 * unit();
            let r0 = n as f32 * 5.0 / crate::math::TAU;
            let mut pts: Vec<Vec2> = (0..n)
                .map(|k| {
                    let t = k as f32 / n as f32 * crate::math::TAU;
                    let (s3, c3) = crate::math::sin_cos(3.0 * t);
                    let r =
                        r0 * (1.0 + wobble * (0.6 * c3 + 0.4 * s3) + 0.3 * wobble * (unit() - 0.5));
                    let (s, c) = crate::math::sin_cos(t);
                    Vec2::new(offset + r * c, offset + r * s)
                })
                .collect();
            if case % 7 == 0 {
                let k = (unit() * n as f32) as usize % n;
                pts[k] = Vec2::new(
                    offset + 2.5 * r0 * (unit() - 0.5),
                    offset + 2.5 * r0 * (unit() - 0.5),
                );
            }
            let hw = 5.0 * (0.1 + 3.0 * unit() * unit());
            verdicts.push(check_against_all_pairs(&pts, hw, &format!("case {case}")));
        }
        assert_both_verdicts(&verdicts, 400);
    }

    /// The far pairs' bound from their own segments (`far_pair_ok`) decides as the all-pairs
    /// scan does on unevenly spaced loops, as curvature sampling makes them: stadiums whose
    /// straights have segments longer than the track is wide and whose ends are dense, with a
    /// point pulled across towards the other side (pinching the track or crossing it) or
    /// thrown anywhere. Across the dense ends many pairs lie within `reach`, which takes the
    /// longest segment, but outside their own bound: those must be many, and both verdicts
    /// must come out often.
    #[test]
    fn uneven_spacing_matches_all_pairs() {
        let mut unit = uniform(0x68e3_1da4_u32);
        let (mut verdicts, mut outside_local) = (Vec::new(), 0);
        for case in 0..600 {
            let hw = 2.0 + 6.0 * unit();
            let long = (2.2 + 2.0 * unit()) * hw;
            let r = (0.9 + 2.0 * unit()) * hw;
            let short = (0.2 + 0.6 * unit()) * r;
            let offset = if case % 3 == 0 { 2000.0 } else { 0.0 };
            let length = (3 + case % 7) as f32 * long;
            let mut pts = uneven_stadium(length, long, r, short, offset);
            let n = pts.len();
            let k = (unit() * n as f32) as usize % n;
            match case % 4 {
                // Towards the other straight (x = offset) by up to twice the width apart.
                1 | 2 => pts[k][0] -= 4.0 * r * unit(),
                3 => {
                    pts[k] = Vec2::new(
                        offset + 2.0 * r * unit(),
                        offset + (length + 2.0 * r) * (unit() - 0.5),
                    )
                }
                _ => {}
            }
            let scan = all_pairs_scan(&pts, hw, &format!("case {case}"));
            outside_local += scan.outside_local;
            verdicts.push(scan.verdict);
        }
        assert!(
            outside_local > 1000,
            "{outside_local} pairs outside the local bound"
        );
        assert_both_verdicts(&verdicts, 60);
        // The sharpest case: two long segments of the centre crossing square at their
        // midpoints, far apart along the loop (joined by dense quarter circles), their nearest
        // ends `√2 / 2` of a length apart — within the bound, and found only through it.
        for (quarter, hw) in [(12usize, 0.5f32), (20, 2.0), (40, 1.0)] {
            let length = 100.0f32;
            let mut pts = Vec::new();
            for (start, from) in [(Vec2::new(-0.5, 0.0), 0.0f32), (Vec2::new(0.0, -0.5), 1.0)] {
                pts.push(start * length);
                // The quarter circle from the segment's far end to the next one's start:
                // clockwise below the right, counter-clockwise above the left.
                for k in 0..quarter {
                    let t = 0.5 * crate::math::PI * k as f32 / quarter as f32;
                    let a = if from == 0.0 {
                        -t
                    } else {
                        0.5 * crate::math::PI + t
                    };
                    let (sn, cs) = crate::math::sin_cos(a);
                    pts.push(Vec2::new(0.5 * length * cs, 0.5 * length * sn));
                }
            }
            let scan = all_pairs_scan(&pts, hw, &format!("square crossing, {quarter}"));
            assert!(scan.crossing && scan.thin_gaps.is_empty(), "{quarter}");
            assert!(
                scan.near + 1 < pts.len() / 2,
                "{quarter}: near {}",
                scan.near
            );
        }
    }

    /// A stadium of straights `length` long, points `long` apart, and ends of radius `r`,
    /// points about `short` apart, counter-clockwise from the start of its right side.
    fn uneven_stadium(length: f32, long: f32, r: f32, short: f32, offset: f32) -> Vec<Vec2> {
        let pi = crate::math::PI;
        let sides = (length / long).round().max(1.0) as usize;
        let arcs = (pi * r / short).round().max(2.0) as usize;
        let mut pts = Vec::new();
        for (x, sign) in [(2.0 * r, 1.0f32), (0.0, -1.0)] {
            for k in 0..sides {
                let y = sign * (k as f32 * length / sides as f32 - 0.5 * length);
                pts.push(Vec2::new(offset + x, offset + y));
            }
            for k in 0..arcs {
                let (sn, cs) = crate::math::sin_cos(k as f32 * pi / arcs as f32);
                let (x, y) = (r + r * cs, 0.5 * length + r * sn);
                pts.push(Vec2::new(offset + sign * (x - r) + r, offset + sign * y));
            }
        }
        pts
    }
}
