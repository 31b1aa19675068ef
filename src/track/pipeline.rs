//! The pipeline: generator (one pass, or set-up plus a bounded loop of windows) → resample → relax → validate (retrying on fresh streams) →
//! fallback → z-profile → inflate, each a stage over env lanes.
//!
//! Every stage is a pass of [`Launch::lanes`] over structure-of-arrays buffers; lanes whose
//! `active` or `mask` flag is 0 return at once (a kernel's early exit), so the host never
//! branches on per-env data. Retries and relaxation are [`Launch::bounded_loop`]s, masked
//! regeneration is [`Launch::skip_unless`]. All scratch is allocated once in [`Pipeline::new`].

use std::sync::Arc;

use rayon::prelude::*;

use super::batch::TrackBatch;
use super::generators::{self, Stage};
use super::grid::buckets_for;
use super::inflate::{fallback_circle, inflate_lane, InflateOut};
use super::relax::{relax_sweeps, violation, RelaxConsts, RelaxScratch, TOO_CLOSE};
use super::resample::resample_closed;
use super::validity::{is_valid, ValidityConsts, ValidityScratch, SLACK};
use super::zprofile::{lattice_len, profile_lane};
use crate::exec::Launch;
use crate::geom::Vec2;
use crate::preset::Preset;
use crate::rng::{stream, LaneRng};
use crate::{Error, Result};

/// A track pipeline built for `n_envs` envs of one preset, with all its scratch.
pub struct Pipeline {
    preset: Preset,
    launch: Launch,
    stage: Arc<dyn Stage>,
    n_envs: usize,
    n_max: usize,
    raw_max: usize,
    gen_scratch_len: usize,
    gen_u32_len: usize,
    buckets: usize,
    lattice_len: usize,
    relax: RelaxConsts,
    validity: ValidityConsts,
    scratch: Scratch,
}

/// Per-env scratch buffers, sized once.
struct Scratch {
    raw: Vec<Vec2>,
    raw_count: Vec<u32>,
    gen: Vec<f32>,
    gen_u32: Vec<u32>,
    pts: Vec<Vec2>,
    count: Vec<u32>,
    z: Vec<f32>,
    arcs: Vec<f32>,
    pair: Vec<Vec2>,
    mids: Vec<Vec2>,
    heads: Vec<u32>,
    next: Vec<u32>,
    cells: Vec<u64>,
    lattice: Vec<f32>,
    active: Vec<u8>,
    gen_active: Vec<u8>,
    /// An all-ones mask: what `generate` regenerates.
    all: Vec<u8>,
    relax_active: Vec<u8>,
    attempt: Vec<u8>,
    ok: Vec<u8>,
}

impl Pipeline {
    /// A pipeline for `n_envs` envs with the preset's built-in generator.
    pub fn new(preset: &Preset, n_envs: usize, launch: Launch) -> Result<Self> {
        Self::with_stage(preset, n_envs, launch, generators::from_preset(preset))
    }

    /// A pipeline whose generator stage is `stage` (a built-in or a user plug-in).
    pub fn with_stage(
        preset: &Preset,
        n_envs: usize,
        launch: Launch,
        stage: Arc<dyn Stage>,
    ) -> Result<Self> {
        if n_envs == 0 {
            return Err(Error::Invalid("n_envs = 0: expected at least 1 env".into()));
        }
        let n_max = preset.track.n_max as usize;
        let raw_max = stage.max_points().max(3);
        let gen_scratch_len = stage.scratch_len().max(1);
        let gen_u32_len = stage.scratch_u32_len().max(1);
        let buckets = buckets_for(2 * n_max);
        let lattice_len = lattice_len(&preset.zprofile).max(1);
        let per_env = |k: usize, what: &str| {
            n_envs
                .checked_mul(k)
                .ok_or_else(|| Error::Invalid(format!("n_envs = {n_envs} × {k} {what} overflows")))
        };
        let scratch = Scratch {
            raw: vec![Vec2::ZERO; per_env(raw_max, "raw points")?],
            raw_count: vec![0; n_envs],
            gen: vec![0.0; per_env(gen_scratch_len, "generator scratch words")?],
            gen_u32: vec![0; per_env(gen_u32_len, "generator integer scratch words")?],
            pts: vec![Vec2::ZERO; per_env(n_max, "points")?],
            count: vec![0; n_envs],
            z: vec![0.0; per_env(n_max, "heights")?],
            arcs: vec![0.0; per_env(n_max, "arc lengths")?],
            pair: vec![Vec2::ZERO; per_env(2 * n_max, "border points")?],
            mids: vec![Vec2::ZERO; per_env(2 * n_max, "border midpoints")?],
            heads: vec![0; per_env(buckets, "grid buckets")?],
            next: vec![0; per_env(2 * n_max, "grid links")?],
            cells: vec![0; per_env(2 * n_max, "grid cell keys")?],
            lattice: vec![0.0; per_env(lattice_len, "lattice words")?],
            active: vec![0; n_envs],
            gen_active: vec![0; n_envs],
            all: vec![1; n_envs],
            relax_active: vec![0; n_envs],
            attempt: vec![0; n_envs],
            ok: vec![0; n_envs],
        };
        let t = &preset.track;
        let separation_m = 2.0 * t.half_width_m * (1.0 + preset.relax.margin);
        let relax = RelaxConsts {
            separation_m,
            converged_separation_m: 2.0 * t.half_width_m * (1.0 + 0.5 * preset.relax.margin),
            max_curvature: 1.0 / t.min_turn_radius_m,
            smooth_curvature: 1.0 / (1.05 * t.min_turn_radius_m),
            smoothing: preset.relax.smoothing,
            neighbour_arc_m: crate::math::PI * 0.5 * separation_m,
        };
        let validity = ValidityConsts {
            half_width_m: t.half_width_m,
            min_turn_radius_m: t.min_turn_radius_m,
        };
        Ok(Self {
            preset: preset.clone(),
            launch,
            stage,
            n_envs,
            n_max,
            raw_max,
            gen_scratch_len,
            gen_u32_len,
            buckets,
            lattice_len,
            relax,
            validity,
            scratch,
        })
    }

    /// The preset this pipeline was built for.
    pub fn preset(&self) -> &Preset {
        &self.preset
    }

    /// The number of envs.
    pub fn n_envs(&self) -> usize {
        self.n_envs
    }

    /// The generator stage's name.
    pub fn stage_name(&self) -> &str {
        self.stage.name()
    }

    /// A batch shaped for this pipeline, for envs `env_base ..`.
    pub fn new_batch(&self, env_base: u64) -> Result<TrackBatch> {
        TrackBatch::new(self.n_envs, self.n_max, env_base)
    }

    /// Generates every env of `batch` at `generation` (overwrites `batch.generation`).
    pub fn generate(&mut self, seed: u64, generation: u32, batch: &mut TrackBatch) -> Result<()> {
        self.check_batch(batch)?;
        batch.generation.fill(generation);
        let all = std::mem::take(&mut self.scratch.all);
        let result = self.regenerate(seed, &all, batch);
        self.scratch.all = all;
        result
    }

    /// Regenerates exactly the envs with `mask[e] != 0`, each at its own `batch.generation[e]`.
    /// Unmasked envs' buffers are not written. An all-zero mask does no per-env work.
    pub fn regenerate(&mut self, seed: u64, mask: &[u8], batch: &mut TrackBatch) -> Result<()> {
        self.check_batch(batch)?;
        Launch::check_mask(mask, self.n_envs)?;
        let launch = self.launch.clone();
        launch.skip_unless(mask, || self.run_masked(seed, mask, batch));
        Ok(())
    }

    fn check_batch(&self, batch: &TrackBatch) -> Result<()> {
        if batch.n_envs != self.n_envs || batch.n_max != self.n_max {
            return Err(Error::Invalid(format!(
                "batch is {} envs × {} points: expected {} × {} (the pipeline's shape)",
                batch.n_envs, batch.n_max, self.n_envs, self.n_max
            )));
        }
        Ok(())
    }

    fn run_masked(&mut self, seed: u64, mask: &[u8], batch: &mut TrackBatch) {
        let launch = self.launch.clone();
        let max_attempts = self.preset.track.max_attempts;
        {
            let s = &mut self.scratch;
            s.active.copy_from_slice(mask);
            s.attempt.fill(0);
            s.ok.fill(0);
        }
        let mut active = std::mem::take(&mut self.scratch.active);
        launch.bounded_loop(max_attempts, &mut active, |_, active| {
            self.generate_stage(seed, active, batch);
            self.resample_stage(active);
            self.relax_stage(active);
            self.validate_stage(active, max_attempts);
        });
        self.scratch.active = active;
        self.fallback_stage(mask);
        self.zprofile_stage(seed, mask, batch);
        self.inflate_stage(mask, batch);
    }

    fn generate_stage(&mut self, seed: u64, active: &[u8], batch: &TrackBatch) {
        let s = &mut self.scratch;
        let stage = &*self.stage;
        let env_base = batch.env_base;
        let lanes = (
            s.raw.par_chunks_mut(self.raw_max),
            s.raw_count.par_iter_mut(),
            (
                s.gen.par_chunks_mut(self.gen_scratch_len),
                s.gen_u32.par_chunks_mut(self.gen_u32_len),
            ),
            active.par_iter(),
            s.attempt.par_iter(),
            batch.generation.par_iter(),
        );
        self.launch.lanes(
            lanes.into_par_iter(),
            |e, (raw, raw_count, (scratch, scratch_u32), &act, &attempt, &generation)| {
                if act == 0 {
                    return;
                }
                let stream = stream::with_attempt(stream::GENERATE, u32::from(attempt));
                let mut rng = LaneRng::new(seed, env_base + e as u64, generation, stream);
                let n = stage.run_lane(&mut rng, scratch, scratch_u32, raw);
                *raw_count = n.min(raw.len()) as u32;
            },
        );
        // An iterative generator continues in windows while any of its lanes is still active.
        let windows = stage.max_windows();
        let mut gen_active = std::mem::take(&mut s.gen_active);
        gen_active.copy_from_slice(active);
        self.launch.bounded_loop(windows, &mut gen_active, |_, ga| {
            let lanes = (
                s.raw.par_chunks_mut(self.raw_max),
                s.raw_count.par_iter_mut(),
                s.gen.par_chunks_mut(self.gen_scratch_len),
                s.gen_u32.par_chunks_mut(self.gen_u32_len),
                ga.par_iter_mut(),
            );
            self.launch.lanes(
                lanes.into_par_iter(),
                |_, (raw, raw_count, scratch, scratch_u32, ga)| {
                    if *ga == 0 {
                        return;
                    }
                    let (n, still) = stage.window_lane(scratch, scratch_u32, raw);
                    *raw_count = n.min(raw.len()) as u32;
                    *ga = u8::from(still);
                },
            );
        });
        s.gen_active = gen_active;
    }

    fn resample_stage(&mut self, active: &[u8]) {
        let s = &mut self.scratch;
        let spacing = self.preset.track.spacing_m;
        let lanes = (
            s.raw.par_chunks(self.raw_max),
            s.raw_count.par_iter(),
            s.pts.par_chunks_mut(self.n_max),
            s.count.par_iter_mut(),
            active.par_iter(),
        );
        self.launch.lanes(
            lanes.into_par_iter(),
            |_, (raw, &raw_count, pts, count, &act)| {
                if act == 0 {
                    return;
                }
                *count = resample_closed(&raw[..raw_count as usize], spacing, pts) as u32;
            },
        );
    }

    fn relax_stage(&mut self, active: &[u8]) {
        let windows = self.preset.relax.max_windows;
        if windows == 0 {
            // Relaxation is off (e.g. generators valid by construction): nothing would read the
            // violation flags, so they are not computed.
            return;
        }
        let sweeps = self.preset.relax.sweeps_per_window;
        let consts = self.relax;
        let n_max = self.n_max;
        let launch = self.launch.clone();
        let s = &mut self.scratch;
        let mut relax_active = std::mem::take(&mut s.relax_active);
        // A curve that already meets the constraints is not relaxed at all. Separation is tested
        // once the turns comply (see `violation`).
        let lanes = (
            s.pts.par_chunks(n_max),
            s.count.par_iter(),
            s.pair.par_chunks_mut(2 * n_max),
            relax_active.par_iter_mut(),
            active.par_iter(),
        );
        launch.lanes(lanes.into_par_iter(), |_, (pts, &count, disp, ra, &act)| {
            let mut scratch = RelaxScratch { disp };
            *ra = if act != 0 {
                violation(&pts[..count as usize], &consts, &mut scratch, false)
            } else {
                0
            };
        });
        launch.bounded_loop(windows, &mut relax_active, |_, ra| {
            let lanes = (
                s.pts.par_chunks_mut(n_max),
                s.count.par_iter(),
                s.pair.par_chunks_mut(2 * n_max),
                ra.par_iter_mut(),
            );
            launch.lanes(lanes.into_par_iter(), |_, (pts, &count, disp, ra)| {
                if *ra == 0 {
                    return;
                }
                let pts = &mut pts[..count as usize];
                let mut scratch = RelaxScratch { disp };
                relax_sweeps(pts, &consts, &mut scratch, sweeps, *ra);
                *ra = violation(pts, &consts, &mut scratch, *ra & TOO_CLOSE != 0);
            });
        });
        s.relax_active = relax_active;
    }

    fn validate_stage(&mut self, active: &mut [u8], max_attempts: u32) {
        let consts = self.validity;
        let s = &mut self.scratch;
        let lanes = (
            s.pts.par_chunks(self.n_max),
            s.count.par_iter(),
            s.arcs.par_chunks_mut(self.n_max),
            s.pair.par_chunks_mut(2 * self.n_max),
            s.mids.par_chunks_mut(2 * self.n_max),
            s.heads.par_chunks_mut(self.buckets),
            s.next.par_chunks_mut(2 * self.n_max),
            s.cells.par_chunks_mut(2 * self.n_max),
            active.par_iter_mut(),
            s.attempt.par_iter_mut(),
            s.ok.par_iter_mut(),
        );
        self.launch.lanes(
            lanes.into_par_iter(),
            |_, (pts, &count, arclen, border, mids, heads, next, cells, act, attempt, ok)| {
                if *act == 0 {
                    return;
                }
                let mut scratch = ValidityScratch {
                    arclen,
                    border,
                    mids,
                    heads,
                    next,
                    cells,
                };
                *ok = u8::from(is_valid(&pts[..count as usize], &consts, &mut scratch));
                *attempt += 1;
                *act = u8::from(*ok == 0 && u32::from(*attempt) < max_attempts);
            },
        );
    }

    fn fallback_stage(&mut self, mask: &[u8]) {
        let t = &self.preset.track;
        let (scale, radius, spacing) = (t.scale_m, t.min_turn_radius_m, t.spacing_m);
        let s = &mut self.scratch;
        let lanes = (
            s.pts.par_chunks_mut(self.n_max),
            s.count.par_iter_mut(),
            s.ok.par_iter(),
            mask.par_iter(),
        );
        self.launch
            .lanes(lanes.into_par_iter(), |_, (pts, count, &ok, &m)| {
                if m == 0 || ok != 0 {
                    return;
                }
                *count = fallback_circle(scale, radius, spacing, pts) as u32;
            });
    }

    fn zprofile_stage(&mut self, seed: u64, mask: &[u8], batch: &TrackBatch) {
        let params = self.preset.zprofile.clone();
        let env_base = batch.env_base;
        let s = &mut self.scratch;
        let lanes = (
            s.pts.par_chunks(self.n_max),
            s.count.par_iter(),
            s.arcs.par_chunks_mut(self.n_max),
            s.z.par_chunks_mut(self.n_max),
            s.lattice.par_chunks_mut(self.lattice_len),
            mask.par_iter(),
            batch.generation.par_iter(),
        );
        self.launch.lanes(
            lanes.into_par_iter(),
            |e, (pts, &count, arclen, z, lattice, &m, &generation)| {
                if m == 0 {
                    return;
                }
                let n = count as usize;
                let pts = &pts[..n];
                let mut total = 0.0f32;
                for i in 0..n {
                    arclen[i] = total;
                    total += super::geometry::dist(pts[i], pts[(i + 1) % n]);
                }
                let mut rng = LaneRng::new(seed, env_base + e as u64, generation, stream::ZPROFILE);
                profile_lane(&params, &mut rng, &arclen[..n], total, lattice, &mut z[..n]);
            },
        );
    }

    fn inflate_stage(&mut self, mask: &[u8], batch: &mut TrackBatch) {
        let hw = self.preset.track.half_width_m;
        let max_attempts = self.preset.track.max_attempts as u8;
        let n_max = self.n_max;
        let s = &self.scratch;
        let points = (
            batch.center.par_chunks_mut(n_max),
            batch.outer.par_chunks_mut(n_max),
            batch.inner.par_chunks_mut(n_max),
            batch.tangent.par_chunks_mut(n_max),
            batch.normal.par_chunks_mut(n_max),
            batch.arclen.par_chunks_mut(n_max),
        );
        let scalars = (
            batch.count.par_iter_mut(),
            batch.length.par_iter_mut(),
            batch.valid.par_iter_mut(),
            batch.attempts.par_iter_mut(),
        );
        let inputs = (
            s.pts.par_chunks(n_max),
            s.z.par_chunks(n_max),
            s.count.par_iter(),
            s.ok.par_iter(),
            s.attempt.par_iter(),
            mask.par_iter(),
        );
        self.launch
            .lanes((points, scalars, inputs).into_par_iter(), |_, (p, o, i)| {
                let (center, outer, inner, tangent, normal, arclen) = p;
                let (count_out, length, valid, attempts) = o;
                let (pts, z, &count, &ok, &attempt, &m) = i;
                if m == 0 {
                    return;
                }
                let n = count as usize;
                inflate_lane(
                    &pts[..n],
                    &z[..n],
                    hw,
                    InflateOut {
                        center,
                        outer,
                        inner,
                        tangent,
                        normal,
                        arclen,
                        length,
                    },
                );
                *count_out = count;
                *valid = ok;
                *attempts = if ok != 0 { attempt } else { max_attempts };
            });
    }
}

/// The slack of the validity checks, re-exported for tests and docs.
pub const VALIDITY_SLACK: f32 = SLACK;
