//! The Bézier generator: stratified random control points joined by closed cubic Bézier
//! segments whose handles follow the neighbour chord, with random handle lengths.
//!
//! The control points are placed curvature-aware: before sampling, [`soften_closed`] moves each
//! control point whose segments turn tighter than `SOFTEN_MARGIN · min_turn_radius` toward its
//! neighbours, so the curve rarely needs the pipeline's relaxation.

use bytemuck::{Pod, Zeroable};

use super::spline::{
    polar_points8, soften_closed_with, SegmentSampler, SoftenSegments, SAMPLES_PER_SEGMENT,
    SOFTEN_MARGIN, SOFTEN_ROUNDS,
};
use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
use crate::geom::Vec2;
use crate::math::TAU;
use crate::rng::LaneRng;
use crate::track::geometry::next_index;

/// Samples per Bézier segment.
const SAMPLES: usize = SAMPLES_PER_SEGMENT;

/// Bézier generator parameters.
#[derive(Clone, Debug)]
pub struct Bezier {
    /// Control points.
    pub n_ctrl: usize,
    /// Mean radius, metres.
    pub radius_m: f32,
    /// Handle length, fraction of the segment length.
    pub handle: f32,
    /// Relative radius jitter.
    pub radius_jitter: f32,
    /// The preset's minimum turn radius, metres: the control points are softened against it.
    pub min_turn_radius_m: f32,
}

/// The Bézier fields of `tg_bezier_params` (`kernels/track/bezier.cuh`).
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct BezierParams {
    n_ctrl: u32,
    radius_m: f32,
    handle: f32,
    radius_jitter: f32,
    max_curvature: f32,
    pad: u32,
}

impl Bezier {
    /// The curvature the control points are softened to, 1/m.
    fn max_curvature(&self) -> f32 {
        1.0 / (SOFTEN_MARGIN * self.min_turn_radius_m)
    }
}

impl Stage for Bezier {
    fn name(&self) -> &str {
        "bezier"
    }
    fn max_points(&self) -> usize {
        self.n_ctrl * SAMPLES
    }
    fn scratch_len(&self) -> usize {
        // points, handle fractions, unit tangents, chord lengths
        6 * self.n_ctrl
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        _: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let n = self.n_ctrl;
        let (pts, rest) = scratch[..6 * n].split_at_mut(2 * n);
        let (handles, rest) = rest.split_at_mut(n);
        let (tangents, lens) = rest.split_at_mut(2 * n);
        let pts: &mut [Vec2] = bytemuck::cast_slice_mut(pts);
        let step = TAU / n as f32;
        // Eight points at a time: their draws in order, then placed by one `polar_points8`
        // (unused lanes take angle 0).
        for (g, (group, handles)) in pts.chunks_mut(8).zip(handles.chunks_mut(8)).enumerate() {
            let mut radii = [0.0; 8];
            let mut angles = [0.0; 8];
            for l in 0..group.len() {
                let i = 8 * g + l;
                // Stratified angles keep the control polygon simple (sorted by construction).
                angles[l] = (i as f32 + 0.8 * rng.unit()) * step;
                radii[l] = self.radius_m * (1.0 + self.radius_jitter * rng.signed());
                handles[l] = self.handle * (0.5 + rng.unit());
            }
            polar_points8(radii, angles, group);
        }
        let mut segments = Segments::new(pts, handles, bytemuck::cast_slice_mut(tangents), lens);
        soften_closed_with(pts, self.max_curvature(), SOFTEN_ROUNDS, &mut segments);
        // `bezier(a, b, c, d, t)` is `bezier_weighted` of the weights of `t`: computed once per
        // parameter instead of once per sample, a segment's samples at a time, the same bits.
        let sampler = SegmentSampler::new();
        let mut written = 0;
        for (i, dst) in out[..n * SAMPLES].chunks_exact_mut(SAMPLES).enumerate() {
            let dst: &mut [Vec2; SAMPLES] = dst.try_into().expect("a segment's samples");
            sampler.write(segments.segment(pts, i), dst);
            written += SAMPLES;
        }
        written
    }
    fn kernel(&self) -> Option<StageKernel> {
        Some(StageKernel {
            name: "tg_track_bezier",
            window: None,
            params: params_bytes(&BezierParams {
                n_ctrl: u32::try_from(self.n_ctrl).ok()?,
                radius_m: self.radius_m,
                handle: self.handle,
                radius_jitter: self.radius_jitter,
                max_curvature: self.max_curvature(),
                pad: 0,
            }),
        })
    }
}

/// The closed Bézier spline's segments over the control points: the cubic `[a, b, c, d]` from
/// `pts[i]` to `pts[i + 1]` (indices modulo the length) has handles along the neighbour chords,
/// `handles[i]` and `handles[i + 1]` of the segment long.
///
/// The unit chord directions (`tangents[j]`, of `pts[j + 1] − pts[j − 1]`) and the segment
/// lengths (`lens[j]`, of `pts[j + 1] − pts[j]`) are kept per point and recomputed only for the
/// points a move changes, by the same operations as computing them per segment: the segments
/// are the same bits, and softening's segment tests (tens per track) take no square root or
/// division.
struct Segments<'a> {
    handles: &'a [f32],
    tangents: &'a mut [Vec2],
    lens: &'a mut [f32],
}

impl<'a> Segments<'a> {
    fn new(
        pts: &[Vec2],
        handles: &'a [f32],
        tangents: &'a mut [Vec2],
        lens: &'a mut [f32],
    ) -> Self {
        let mut segments = Self {
            handles,
            tangents,
            lens,
        };
        for j in 0..pts.len() {
            segments.update_tangent(pts, j);
            segments.update_length(pts, j);
        }
        segments
    }

    /// Recomputes point `j`'s unit tangent (of the chord `pts[j + 1] − pts[j − 1]`).
    #[inline(always)]
    fn update_tangent(&mut self, pts: &[Vec2], j: usize) {
        let n = pts.len();
        let prev = pts[if j == 0 { n - 1 } else { j - 1 }];
        let next = pts[next_index(j, n)];
        self.tangents[j] = unit(Vec2::new(next[0] - prev[0], next[1] - prev[1]));
    }

    /// Recomputes segment `j`'s length (of `pts[j + 1] − pts[j]`).
    #[inline(always)]
    fn update_length(&mut self, pts: &[Vec2], j: usize) {
        let n = pts.len();
        let a = pts[j];
        let next = pts[next_index(j, n)];
        let seg = [next[0] - a[0], next[1] - a[1]];
        self.lens[j] = (seg[0] * seg[0] + seg[1] * seg[1]).sqrt();
    }
}

impl SoftenSegments for Segments<'_> {
    #[inline(always)]
    fn segment(&self, pts: &[Vec2], i: usize) -> [Vec2; 4] {
        let n = pts.len();
        // The next index by compare-and-wrap (callers pass i < n; others are reduced once).
        let i = if i < n { i } else { i % n };
        let i1 = next_index(i, n);
        let a = pts[i];
        let d = pts[i1];
        let seg_len = self.lens[i];
        let ta = self.tangents[i];
        let td = self.tangents[i1];
        let ha = self.handles[i] * seg_len;
        let hd = self.handles[i1] * seg_len;
        let b = Vec2::new(a[0] + ta[0] * ha, a[1] + ta[1] * ha);
        let c = Vec2::new(d[0] - td[0] * hd, d[1] - td[1] * hd);
        [a, b, c, d]
    }

    /// Point `i` moved: the tangents of its neighbours and the lengths of its two segments.
    #[inline(always)]
    fn moved(&mut self, pts: &[Vec2], i: usize) {
        let n = pts.len();
        let prev = if i == 0 { n - 1 } else { i - 1 };
        let next = next_index(i, n);
        // The tangents either side and the two segments' lengths (tangent `i` reads the
        // neighbours only and stays).
        self.update_tangent(pts, prev);
        self.update_tangent(pts, next);
        self.update_length(pts, prev);
        self.update_length(pts, i);
    }
}

/// `v / |v|`, or zero for a zero vector.
pub(crate) fn unit(v: Vec2) -> Vec2 {
    let len = (v[0] * v[0] + v[1] * v[1]).sqrt();
    if len > 0.0 {
        Vec2::new(v[0] / len, v[1] / len)
    } else {
        Vec2::new(0.0, 0.0)
    }
}
