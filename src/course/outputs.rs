//! [`StepOutputs`]: the per-env outputs of [`Course::step`](super::Course::step), and the
//! mutable row views the step and reset passes write them through.

use super::step::EnvOutputs;
use crate::exec::layout::soa_batch;

soa_batch! {
    /// The per-env outputs of [`Course::step`](super::Course::step), one entry per env in every buffer.
    ///
    /// `step()` writes every field of every env. Events (`passed`, `lap_completed`, `wrong_way`,
    /// `wrong_checkpoint`) describe the step just taken: the swept segment from the previous
    /// position to the current one. Lengths are metres; the track mode is planar (every output
    /// but `n_up` ignores z).
    ///
    /// **Non-finite positions** (NaN or ±∞ in any coordinate) give, for that env: no events,
    /// `next_index` and `laps` unchanged, `progress` = checkpoints passed (no fraction),
    /// `dist_to_next`, `s`, `n`, `n_up`, `curvature` and `penetration` NaN, `segment` unchanged,
    /// `off_track` 1, `hit` 0; and the previous position becomes the NaN sentinel, so the next
    /// finite step crosses nothing.
    #[derive(Clone, Debug)]
    pub struct StepOutputs {
        per_env {
            /// Checkpoints passed this step (crossed forward inside their window, in order; normally 0 or 1).
            passed: u8 = 0,
            /// 1 when this step passed checkpoint 0 (the start line) after all the others: a lap.
            lap_completed: u8 = 0,
            /// 1 when this step moved backward along the path (plan displacement · path direction <
            /// −`wrong_way_tolerance_m`).
            wrong_way: u8 = 0,
            /// 1 when this step crossed the checkpoint after the next one (the
            /// [`SKIP_WINDOW`](super::SKIP_WINDOW) = 1 checkpoints after it) without passing the next one:
            /// a skipped checkpoint or gate.
            wrong_checkpoint: u8 = 0,
            /// Index of the next checkpoint to pass (1 after a reset: the agent starts on checkpoint 0).
            next_index: u32 = 0,
            /// Laps completed since the last reset.
            laps: u32 = 0,
            /// Checkpoints passed since the last reset + the fraction `[0, 1]` of the leg to the next
            /// one covered (by arc length `s`; 0 behind the previous checkpoint, 1 past the next).
            /// Non-decreasing while the agent drives forward through its checkpoints.
            progress: f32 = 0.0,
            /// Distance to the next checkpoint's centre (plan view in track mode, 3D for gates).
            dist_to_next: f32 = 0.0,
            /// Arc length of the nearest path point (localization), `[0, path_length)`.
            s: f32 = 0.0,
            /// Signed plan-view distance to the path, positive to the left of its direction.
            n: f32 = 0.0,
            /// Height above the nearest path point.
            n_up: f32 = 0.0,
            /// Path segment of the nearest point.
            segment: u32 = 0,
            /// Path curvature at `s` (linear between the segment's points), 1/m, positive turning left.
            curvature: f32 = 0.0,
            /// 1 when `|n| > half_width_m` (or `n` is NaN).
            off_track: u8 = 0,
            /// 1 when `penetration > 0`.
            hit: u8 = 0,
            /// Deepest penetration of the agent into anything it collides with, ≥ 0: track mode the
            /// box footprint out of the band and into obstacles, gate mode the sphere into gate frames,
            /// posts and obstacles.
            penetration: f32 = 0.0,
        }
    }
}

/// One env range's mutable output rows.
pub(super) struct OutRows<'a> {
    pub(super) passed: &'a mut [u8],
    pub(super) lap_completed: &'a mut [u8],
    pub(super) wrong_way: &'a mut [u8],
    pub(super) wrong_checkpoint: &'a mut [u8],
    pub(super) next_index: &'a mut [u32],
    pub(super) laps: &'a mut [u32],
    pub(super) progress: &'a mut [f32],
    pub(super) dist_to_next: &'a mut [f32],
    pub(super) s: &'a mut [f32],
    pub(super) n: &'a mut [f32],
    pub(super) n_up: &'a mut [f32],
    pub(super) segment: &'a mut [u32],
    pub(super) curvature: &'a mut [f32],
    pub(super) off_track: &'a mut [u8],
    pub(super) hit: &'a mut [u8],
    pub(super) penetration: &'a mut [f32],
}

impl<'a> OutRows<'a> {
    /// The first `n` rows of every buffer (so that the writes below need no bounds checks).
    #[inline]
    pub(super) fn trim(self, n: usize) -> Self {
        Self {
            passed: &mut self.passed[..n],
            lap_completed: &mut self.lap_completed[..n],
            wrong_way: &mut self.wrong_way[..n],
            wrong_checkpoint: &mut self.wrong_checkpoint[..n],
            next_index: &mut self.next_index[..n],
            laps: &mut self.laps[..n],
            progress: &mut self.progress[..n],
            dist_to_next: &mut self.dist_to_next[..n],
            s: &mut self.s[..n],
            n: &mut self.n[..n],
            n_up: &mut self.n_up[..n],
            segment: &mut self.segment[..n],
            curvature: &mut self.curvature[..n],
            off_track: &mut self.off_track[..n],
            hit: &mut self.hit[..n],
            penetration: &mut self.penetration[..n],
        }
    }

    #[inline(always)]
    pub(super) fn set(&mut self, i: usize, o: &EnvOutputs) {
        self.passed[i] = o.passed;
        self.lap_completed[i] = o.lap_completed;
        self.wrong_way[i] = o.wrong_way;
        self.wrong_checkpoint[i] = o.wrong_checkpoint;
        self.next_index[i] = o.next_index;
        self.laps[i] = o.laps;
        self.progress[i] = o.progress;
        self.dist_to_next[i] = o.dist_to_next;
        self.s[i] = o.s;
        self.n[i] = o.n;
        self.n_up[i] = o.n_up;
        self.segment[i] = o.segment;
        self.curvature[i] = o.curvature;
        self.off_track[i] = o.off_track;
        self.hit[i] = o.hit;
        self.penetration[i] = o.penetration;
    }
}

/// Splits every output buffer into chunks of `CHUNK` envs and zips them with `extra`, a
/// parallel iterator of the same number of chunks.
macro_rules! out_chunks {
    ($o:expr) => {
        (
            (
                $o.passed.par_chunks_mut(CHUNK),
                $o.lap_completed.par_chunks_mut(CHUNK),
                $o.wrong_way.par_chunks_mut(CHUNK),
                $o.wrong_checkpoint.par_chunks_mut(CHUNK),
            ),
            (
                $o.next_index.par_chunks_mut(CHUNK),
                $o.laps.par_chunks_mut(CHUNK),
                $o.progress.par_chunks_mut(CHUNK),
                $o.dist_to_next.par_chunks_mut(CHUNK),
            ),
            (
                $o.s.par_chunks_mut(CHUNK),
                $o.n.par_chunks_mut(CHUNK),
                $o.n_up.par_chunks_mut(CHUNK),
                $o.segment.par_chunks_mut(CHUNK),
            ),
            (
                $o.curvature.par_chunks_mut(CHUNK),
                $o.off_track.par_chunks_mut(CHUNK),
                $o.hit.par_chunks_mut(CHUNK),
                $o.penetration.par_chunks_mut(CHUNK),
            ),
        )
    };
}

/// Reassembles the nested chunk tuple of `out_chunks!` into [`OutRows`].
macro_rules! out_rows {
    ($t:expr) => {{
        let ((a, b, c, d), (e, f, g, h), (i, j, k, l), (m, n, o, p)) = $t;
        OutRows {
            passed: a,
            lap_completed: b,
            wrong_way: c,
            wrong_checkpoint: d,
            next_index: e,
            laps: f,
            progress: g,
            dist_to_next: h,
            s: i,
            n: j,
            n_up: k,
            segment: l,
            curvature: m,
            off_track: n,
            hit: o,
            penetration: p,
        }
    }};
}

pub(super) use out_chunks;
pub(super) use out_rows;
