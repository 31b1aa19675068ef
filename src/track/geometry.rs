//! Small plan-view geometry shared by the stages: curvature, segment intersection, signed area.

use std::cmp::Ordering;

use crate::geom::Vec2;

/// `(i + 1) mod n` for `i < n`, without a division: the next index around a closed polyline.
#[inline(always)]
pub(crate) fn next_index(i: usize, n: usize) -> usize {
    if i + 1 < n {
        i + 1
    } else {
        0
    }
}

/// `|a − b|`.
#[inline]
pub fn dist(a: Vec2, b: Vec2) -> f32 {
    let (dx, dy) = (a[0] - b[0], a[1] - b[1]);
    (dx * dx + dy * dy).sqrt()
}

/// Menger curvature of the triangle `(a, b, c)`: `4·area / (|ab|·|bc|·|ca|)`, 0 for a degenerate one.
#[inline]
pub fn menger_curvature(a: Vec2, b: Vec2, c: Vec2) -> f32 {
    let cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    let denom = dist(a, b) * dist(b, c) * dist(c, a);
    if denom > 0.0 {
        2.0 * cross.abs() / denom
    } else {
        0.0
    }
}

/// `|a − b|²`.
#[inline]
pub fn dist2(a: Vec2, b: Vec2) -> f32 {
    let (dx, dy) = (a[0] - b[0], a[1] - b[1]);
    dx * dx + dy * dy
}

/// Whether the Menger curvature of `(a, b, c)` exceeds `k` (true for NaN input), without square
/// roots or divisions: `κ > k ⟺ 4·cross² > k²·|ab|²·|bc|²·|ca|²`.
#[inline]
pub fn curvature_exceeds(a: Vec2, b: Vec2, c: Vec2, k: f32) -> bool {
    let cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    let lhs = 4.0 * cross * cross;
    let rhs = k * k * (dist2(a, b) * dist2(b, c) * dist2(c, a));
    // NaN compares unordered: treat it as exceeding.
    !matches!(
        lhs.partial_cmp(&rhs),
        Some(Ordering::Less | Ordering::Equal)
    )
}

/// Twice the signed area of the closed polygon `pts` (positive when counter-clockwise): the sum,
/// in index order from 0, of `p × q` for each point `p` and the next `q` (`pts[0]` after the
/// last; the kernel twin's order and rounding), as [`ordered_closed_sum`] adds it.
pub fn signed_area2(pts: &[Vec2]) -> f32 {
    ordered_closed_sum(pts, |p, q| p[0] * q[1] - q[0] * p[1])
}

/// The sum of `term(p, q)` over each point `p` of the closed polyline `pts` and the next `q`
/// (`pts[0]` after the last), in index order from 0, the closing term last (0 for no points).
/// The terms are computed [`AREA_BLOCK`] at a time (many per instruction) and then added one by
/// one, in that order, so the sum is the same to the bit as adding each term as it comes.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing arrays of one fixed length: whole vectors
pub fn ordered_closed_sum(pts: &[Vec2], term: impl Fn(Vec2, Vec2) -> f32) -> f32 {
    let Some(&last) = pts.last() else {
        return 0.0;
    };
    // The points whose successor does not wrap, whole blocks first.
    let body = pts.len() - 1;
    let full = body / AREA_BLOCK * AREA_BLOCK;
    let mut a = 0.0f32;
    for (p, q) in pts[..full]
        .chunks_exact(AREA_BLOCK)
        .zip(pts[1..=full].chunks_exact(AREA_BLOCK))
    {
        let mut t = [0.0f32; AREA_BLOCK];
        for k in 0..AREA_BLOCK {
            t[k] = term(p[k], q[k]);
        }
        for v in t {
            a += v;
        }
    }
    for (&p, &q) in pts[full..body].iter().zip(&pts[full + 1..]) {
        a += term(p, q);
    }
    a + term(last, pts[0])
}

/// Terms per block of [`signed_area2`] (and of the walks that sum in its order).
pub const AREA_BLOCK: usize = 32;

#[inline]
fn orient(a: Vec2, b: Vec2, c: Vec2) -> f32 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// Whether the closed segments `ab` and `cd` intersect (touching and collinear overlap count).
#[inline]
pub fn segments_intersect(a: Vec2, b: Vec2, c: Vec2, d: Vec2) -> bool {
    // Exact early out: segments whose bounding boxes are apart cannot meet (min and max are
    // exact, so a touching pair still reaches the orientation tests).
    if a[0].max(b[0]) < c[0].min(d[0])
        || c[0].max(d[0]) < a[0].min(b[0])
        || a[1].max(b[1]) < c[1].min(d[1])
        || c[1].max(d[1]) < a[1].min(b[1])
    {
        return false;
    }
    let o1 = orient(a, b, c);
    let o2 = orient(a, b, d);
    let o3 = orient(c, d, a);
    let o4 = orient(c, d, b);
    if ((o1 > 0.0 && o2 < 0.0) || (o1 < 0.0 && o2 > 0.0))
        && ((o3 > 0.0 && o4 < 0.0) || (o3 < 0.0 && o4 > 0.0))
    {
        return true;
    }
    let on = |p: Vec2, q: Vec2, r: Vec2| {
        r[0] >= p[0].min(q[0])
            && r[0] <= p[0].max(q[0])
            && r[1] >= p[1].min(q[1])
            && r[1] <= p[1].max(q[1])
    };
    (o1 == 0.0 && on(a, b, c))
        || (o2 == 0.0 && on(a, b, d))
        || (o3 == 0.0 && on(c, d, a))
        || (o4 == 0.0 && on(c, d, b))
}

/// A xorshift stream of floats in `[0, 1]` from `seed`, for unit tests that need many
/// arbitrary coordinates.
#[cfg(test)]
pub(crate) fn test_unit(seed: u32) -> impl FnMut() -> f32 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as f32 / u32::MAX as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `signed_area2` sums its blocks of terms to the same bits as adding each term as it comes,
    /// in index order, the closing term last: for every count around the block size and past
    /// it, with coordinates far from the origin (large terms that cancel, so any other order
    /// rounds differently).
    #[test]
    fn signed_area_is_the_ordered_sum() {
        let mut unit = test_unit(0x2545_f491);
        for n in 0..=4 * AREA_BLOCK + 3 {
            for offset in [0.0f32, 3000.0] {
                let pts: Vec<Vec2> = (0..n)
                    .map(|_| Vec2::new(offset + 200.0 * unit(), -offset + 200.0 * unit()))
                    .collect();
                let mut want = 0.0f32;
                for i in 0..n {
                    let (p, q) = (pts[i], pts[(i + 1) % n]);
                    want += p[0] * q[1] - q[0] * p[1];
                }
                assert_eq!(signed_area2(&pts).to_bits(), want.to_bits(), "n {n}");
            }
        }
    }

    #[test]
    fn curvature_of_circle_points() {
        let r = 10.0f32;
        let p = |t: f32| [r * crate::math::cos(t), r * crate::math::sin(t)];
        let k = menger_curvature(p(0.0).into(), p(0.1).into(), p(0.2).into());
        assert!((k - 0.1).abs() < 1e-4);
        assert_eq!(
            menger_curvature(
                Vec2::new(0.0, 0.0),
                Vec2::new(1.0, 0.0),
                Vec2::new(2.0, 0.0)
            ),
            0.0
        );
        assert!(curvature_exceeds(
            p(0.0).into(),
            p(0.1).into(),
            p(0.2).into(),
            0.099
        ));
        assert!(!curvature_exceeds(
            p(0.0).into(),
            p(0.1).into(),
            p(0.2).into(),
            0.101
        ));
        assert!(curvature_exceeds(
            Vec2::new(f32::NAN, 0.0),
            p(0.1).into(),
            p(0.2).into(),
            0.1
        ));
    }

    #[test]
    fn intersections() {
        assert!(segments_intersect(
            Vec2::new(0.0, 0.0),
            Vec2::new(2.0, 2.0),
            Vec2::new(0.0, 2.0),
            Vec2::new(2.0, 0.0)
        ));
        assert!(!segments_intersect(
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(0.0, 1.0),
            Vec2::new(1.0, 1.0)
        ));
        assert!(segments_intersect(
            Vec2::new(0.0, 0.0),
            Vec2::new(2.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(3.0, 0.0)
        ));
        assert!(segments_intersect(
            Vec2::new(0.0, 0.0),
            Vec2::new(2.0, 0.0),
            Vec2::new(2.0, 0.0),
            Vec2::new(2.0, 5.0)
        ));
        assert!(
            signed_area2(&[
                Vec2::new(0.0, 0.0),
                Vec2::new(1.0, 0.0),
                Vec2::new(0.0, 1.0)
            ]) > 0.0
        );
    }
}
