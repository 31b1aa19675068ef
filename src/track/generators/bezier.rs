//! The Bézier generator: stratified random control points joined by closed cubic Bézier
//! segments whose handles follow the neighbour chord, with random handle lengths.
//!
//! The control points are placed curvature-aware: before sampling, [`soften_closed`] moves each
//! control point whose segments turn tighter than `SOFTEN_MARGIN · min_turn_radius` toward its
//! neighbours, so the curve rarely needs the pipeline's relaxation.

use bytemuck::{Pod, Zeroable};

use super::spline::{
    soften_closed, SegmentSampler, SAMPLES_PER_SEGMENT, SOFTEN_MARGIN, SOFTEN_ROUNDS,
};
use super::{Stage, StageKernel};
use crate::exec::plan::params_bytes;
use crate::geom::Vec2;
use crate::math::{sin_cos, TAU};
use crate::rng::LaneRng;

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
        3 * self.n_ctrl
    }
    fn run_lane(
        &self,
        rng: &mut LaneRng,
        scratch: &mut [f32],
        _: &mut [u32],
        out: &mut [Vec2],
    ) -> usize {
        let n = self.n_ctrl;
        let (pts, handles) = scratch[..3 * n].split_at_mut(2 * n);
        let pts: &mut [Vec2] = bytemuck::cast_slice_mut(pts);
        let step = TAU / n as f32;
        for i in 0..n {
            // Stratified angles keep the control polygon simple (sorted by construction).
            let angle = (i as f32 + 0.8 * rng.unit()) * step;
            let r = self.radius_m * (1.0 + self.radius_jitter * rng.signed());
            let (s, c) = sin_cos(angle);
            pts[i] = Vec2::new(r * c, r * s);
            handles[i] = self.handle * (0.5 + rng.unit());
        }
        let handles: &[f32] = handles;
        let segment = |pts: &[Vec2], i: usize| segment(pts, handles, i);
        soften_closed(pts, self.max_curvature(), SOFTEN_ROUNDS, segment);
        // `bezier(a, b, c, d, t)` is `bezier_weighted` of the weights of `t`: computed once per
        // parameter instead of once per sample, a segment's samples at a time, the same bits.
        let sampler = SegmentSampler::new();
        let mut written = 0;
        for (i, dst) in out[..n * SAMPLES].chunks_exact_mut(SAMPLES).enumerate() {
            let dst: &mut [Vec2; SAMPLES] = dst.try_into().expect("a segment's samples");
            sampler.write(segment(pts, i), dst);
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

/// The cubic Bézier `[a, b, c, d]` from `pts[i]` to `pts[i + 1]` (indices modulo the length): its
/// handles follow the neighbour chords, `handles[i]` and `handles[i + 1]` of the segment long.
fn segment(pts: &[Vec2], handles: &[f32], i: usize) -> [Vec2; 4] {
    let n = pts.len();
    // Neighbours by compare-and-wrap (callers pass i < n; others are reduced once).
    let i = if i < n { i } else { i % n };
    let wrap = |j: usize| if j < n { j } else { j - n };
    let prev = pts[if i == 0 { n - 1 } else { i - 1 }];
    let a = pts[i];
    let d = pts[wrap(i + 1)];
    let next = pts[wrap(i + 2)];
    let seg = [d[0] - a[0], d[1] - a[1]];
    let seg_len = (seg[0] * seg[0] + seg[1] * seg[1]).sqrt();
    let ta = unit(Vec2::new(d[0] - prev[0], d[1] - prev[1]));
    let td = unit(Vec2::new(next[0] - a[0], next[1] - a[1]));
    let ha = handles[i] * seg_len;
    let hd = handles[wrap(i + 1)] * seg_len;
    let b = Vec2::new(a[0] + ta[0] * ha, a[1] + ta[1] * ha);
    let c = Vec2::new(d[0] - td[0] * hd, d[1] - td[1] * hd);
    [a, b, c, d]
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
