//! The hull generator: the convex hull of random points in a disc, each edge split at a
//! displaced midpoint, smoothed by a closed Catmull–Rom spline (the classic procedural
//! race-track recipe).
//!
//! The displaced polygon is softened curvature-aware before sampling ([`soften_closed`]): a
//! vertex whose spline neighbourhood turns tighter than `SOFTEN_MARGIN · min_turn_radius` moves
//! toward its neighbours, so the curve rarely needs the pipeline's relaxation.

use bytemuck::{Pod, Zeroable};

use super::spline::{
    catmull_rom_closed, catmull_rom_segment, polar_points8, soften_closed, SAMPLES_PER_SEGMENT,
    SOFTEN_MARGIN, SOFTEN_ROUNDS,
};
use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
use crate::geom::Vec2;
use crate::math::TAU;
use crate::rng::LaneRng;

/// Hull generator parameters.
#[derive(Clone, Debug)]
pub struct Hull {
    /// Random points drawn in the disc.
    pub n_points: usize,
    /// Disc radius, metres.
    pub radius_m: f32,
    /// Midpoint displacement, fraction of the edge length.
    pub displacement: f32,
    /// The preset's minimum turn radius, metres: the polygon is softened against it.
    pub min_turn_radius_m: f32,
}

/// The hull fields of `tg_hull_params` (`kernels/track/hull.cuh`).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct HullParams {
    n_points: u32,
    radius_m: f32,
    displacement: f32,
    max_curvature: f32,
}

impl Hull {
    /// The curvature the polygon is softened to, 1/m.
    fn max_curvature(&self) -> f32 {
        1.0 / (SOFTEN_MARGIN * self.min_turn_radius_m)
    }
}

impl Stage for Hull {
    fn name(&self) -> &str {
        "hull"
    }
    fn max_points(&self) -> usize {
        2 * self.n_points * SAMPLES_PER_SEGMENT
    }
    fn scratch_len(&self) -> usize {
        // points (n), hull (up to 2n), displaced polygon (up to 2n), two words each
        10 * self.n_points
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        _: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let n = self.n_points;
        let (pts, rest) = scratch.split_at_mut(2 * n);
        let (hull, rest) = rest.split_at_mut(4 * n);
        let poly = &mut rest[..4 * n];
        let pts: &mut [Vec2] = bytemuck::cast_slice_mut(pts);
        let hull: &mut [Vec2] = bytemuck::cast_slice_mut(hull);
        let poly: &mut [Vec2] = bytemuck::cast_slice_mut(poly);
        // Eight points at a time: their radii and angles drawn in order, then placed by one
        // `polar_points8` (unused lanes take angle 0).
        for group in pts.chunks_mut(8) {
            let mut radii = [0.0; 8];
            let mut angles = [0.0; 8];
            for l in 0..group.len() {
                radii[l] = self.radius_m * 1.25 * rng.unit().sqrt();
                angles[l] = TAU * rng.unit();
            }
            polar_points8(radii, angles, group);
        }
        // The x-sorted points go to `poly`'s space, which is written only after the hull is taken.
        let sorted = &mut poly[..n];
        sort_by_x_into(pts, sorted);
        let h = monotone_chain(sorted, hull);
        let mut m = 0;
        for i in 0..h {
            let a = hull[i];
            let b = hull[(i + 1) % h];
            poly[m] = a;
            m += 1;
            let e = [b[0] - a[0], b[1] - a[1]];
            // Outward normal of a counter-clockwise edge is (e.y, −e.x).
            let d = self.displacement * rng.signed();
            poly[m] = [
                0.5 * (a[0] + b[0]) + d * e[1],
                0.5 * (a[1] + b[1]) - d * e[0],
            ]
            .into();
            m += 1;
        }
        let poly = &mut poly[..m];
        soften_closed(
            poly,
            self.max_curvature(),
            SOFTEN_ROUNDS,
            catmull_rom_segment,
        );
        catmull_rom_closed(poly, out)
    }
    fn kernel(&self) -> Option<StageKernel> {
        Some(StageKernel {
            name: "tg_track_hull",
            window: None,
            params: params_bytes(&HullParams {
                n_points: u32::try_from(self.n_points).ok()?,
                radius_m: self.radius_m,
                displacement: self.displacement,
                max_curvature: self.max_curvature(),
            }),
        })
    }
}

/// The largest point count that [`sort_by_x_into`] ranks without branches.
const RANK_MAX: usize = 64;

/// `pts` sorted by x, then y, into `out` (of the same length): the order of [`sort_by_x`], whose
/// insertion sort is stable, for points without NaN (the generator's are finite).
///
/// Each point's place is its rank, the count of points before it in that order (those whose
/// `(x, y)` is smaller, and the equal ones of a lower index): comparisons of every point with
/// every other, counted eight at a time without a branch, where the insertion sort spends a
/// mispredicted loop exit on every point. Up to [`RANK_MAX`] points; more are copied and
/// sorted by [`sort_by_x`].
fn sort_by_x_into(pts: &[Vec2], out: &mut [Vec2]) {
    let n = pts.len();
    if n > RANK_MAX {
        out.copy_from_slice(pts);
        sort_by_x(out);
        return;
    }
    // Coordinates and indices apart, as floats (all comparisons 8-wide float compares), padded
    // to a multiple of eight with NaN, which compares false with everything.
    let mut xs = [f32::NAN; RANK_MAX];
    let mut ys = [f32::NAN; RANK_MAX];
    let mut idx = [f32::NAN; RANK_MAX];
    for (j, p) in pts.iter().enumerate() {
        xs[j] = p[0];
        ys[j] = p[1];
        idx[j] = j as f32;
    }
    let padded = n.div_ceil(8) * 8;
    for (i, &p) in pts.iter().enumerate() {
        let (x, y, fi) = (p[0], p[1], i as f32);
        let mut rank = 0u32;
        for j in 0..padded {
            let before =
                (xs[j] < x) | ((xs[j] == x) & ((ys[j] < y) | ((ys[j] == y) & (idx[j] < fi))));
            rank += u32::from(before);
        }
        out[rank as usize] = p;
    }
}

/// Insertion sort by x, then y (small n; deterministic, no allocation). Each point is lifted
/// once and the greater ones shifted up behind it (the order of swapping it down step by step);
/// `a > b` is the order of the `(x, y)` tuples, NaN included.
fn sort_by_x(pts: &mut [Vec2]) {
    let greater = |a: Vec2, b: Vec2| a[0] > b[0] || (a[0] == b[0] && a[1] > b[1]);
    for i in 1..pts.len() {
        let p = pts[i];
        let mut j = i;
        while j > 0 && greater(pts[j - 1], p) {
            pts[j] = pts[j - 1];
            j -= 1;
        }
        pts[j] = p;
    }
}

fn cross(o: Vec2, a: Vec2, b: Vec2) -> f32 {
    (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
}

/// Andrew's monotone chain over x-sorted points; writes the counter-clockwise hull, returns its size.
fn monotone_chain(pts: &[Vec2], hull: &mut [Vec2]) -> usize {
    let mut k = 0;
    for &p in pts {
        while k >= 2 && cross(hull[k - 2], hull[k - 1], p) <= 0.0 {
            k -= 1;
        }
        hull[k] = p;
        k += 1;
    }
    let lower = k + 1;
    for &p in pts.iter().rev().skip(1) {
        while k >= lower && cross(hull[k - 2], hull[k - 1], p) <= 0.0 {
            k -= 1;
        }
        hull[k] = p;
        k += 1;
    }
    k - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift32 stream of indices from `seed`.
    fn xorshift(seed: u32) -> impl FnMut() -> usize {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as usize
        }
    }

    /// The points' coordinates as bits (so `-0.0`, `0.0` and NaNs compare as stored).
    fn bits(v: &[Vec2]) -> Vec<[u32; 2]> {
        v.iter().map(|p| p.to_array().map(f32::to_bits)).collect()
    }

    /// `sort_by_x` orders like the insertion sort that swaps each point down while the tuple
    /// `(x, y)` before it is greater, to the bit: on small arrays of values with ties, ±0,
    /// infinities and NaN.
    #[test]
    fn sort_matches_the_swapping_insertion_sort() {
        let reference = |pts: &mut [Vec2]| {
            for i in 1..pts.len() {
                let mut j = i;
                while j > 0 && (pts[j - 1][0], pts[j - 1][1]) > (pts[j][0], pts[j][1]) {
                    pts.swap(j - 1, j);
                    j -= 1;
                }
            }
        };
        let values = [0.0, -0.0, 1.0, -1.0, f32::NAN, 2.5, f32::INFINITY, 1.0];
        let mut next = xorshift(0x2545_f491);
        for _ in 0..20_000 {
            let n = next() % 12;
            let pts: Vec<Vec2> = (0..n)
                .map(|_| Vec2::new(values[next() % 8], values[next() % 8]))
                .collect();
            let (mut got, mut want) = (pts.clone(), pts);
            sort_by_x(&mut got);
            reference(&mut want);
            assert_eq!(bits(&got), bits(&want));
        }
    }

    /// `sort_by_x_into` orders like `sort_by_x`, to the bit, on arrays of up to 70 points
    /// without NaN (ties, ±0 and infinities included).
    #[test]
    fn ranked_sort_matches_the_insertion_sort() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1.0,
        ];
        let mut next = xorshift(0x9e37_79b9);
        for round in 0..20_000 {
            let n = next() % 71;
            let pts: Vec<Vec2> = (0..n)
                .map(|_| {
                    if round % 2 == 0 {
                        Vec2::new(values[next() % 8], values[next() % 8])
                    } else {
                        // Distinct-looking coordinates with a few exact ties.
                        Vec2::new((next() % 64) as f32 * 0.37, (next() % 5) as f32 - 2.0)
                    }
                })
                .collect();
            let mut want = pts.clone();
            sort_by_x(&mut want);
            let mut got = vec![Vec2::ZERO; n];
            sort_by_x_into(&pts, &mut got);
            assert_eq!(bits(&got), bits(&want), "{n} points");
        }
    }

    #[test]
    fn hull_of_square_with_interior_point() {
        let mut pts = [
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 1.0),
            Vec2::new(0.5, 0.5),
            Vec2::new(1.0, 0.0),
            Vec2::new(0.0, 1.0),
        ];
        sort_by_x(&mut pts);
        let mut hull = [Vec2::ZERO; 6];
        let h = monotone_chain(&pts, &mut hull);
        assert_eq!(h, 4);
        assert_eq!(
            &hull[..4],
            &[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]].map(Vec2::from)
        );
    }
}
