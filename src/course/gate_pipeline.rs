//! The gate-course pipeline: the guide track pipeline, then the gate stages of
//! [`gates`](super::gates) as passes over env lanes — place, the relaxation's bounded loop,
//! validity with retries on fresh streams, the fallback ring, frames — with all scratch sized
//! once for `(n_envs, max_gates)`.

use std::sync::Arc;

use rayon::prelude::*;

use super::gate_batch::GateBatch;
use super::gates::{
    fallback_ring, frames_lane, is_valid, place_lane, relax_sweeps, violation, GateConsts, Guide,
};
use crate::exec::plan::Backend;
use crate::exec::Launch;
use crate::geom::{Quat, Vec2, Vec3};
use crate::preset::Preset;
use crate::rng::stream::{self, with_attempt};
use crate::rng::LaneRng;
use crate::track::{generators, Pipeline, Stage, TrackBatch};
use crate::{Error, Result};

/// The gate-course pipeline for `n_envs` envs of one gate preset, with all its scratch.
pub struct GatePipeline {
    consts: GateConsts,
    launch: Launch,
    n_envs: usize,
    g_max: usize,
    path_len: usize,
    track: Pipeline,
    guide: TrackBatch,
    scratch: Scratch,
}

struct Scratch {
    disp: Vec<Vec3>,
    path: Vec<Vec3>,
    active: Vec<u8>,
    relax_active: Vec<u8>,
    attempt: Vec<u8>,
    ok: Vec<u8>,
}

impl GatePipeline {
    /// A pipeline for `n_envs` envs of `preset`, which must have a `[gates]` section.
    pub fn new(preset: &Preset, n_envs: usize, launch: Launch) -> Result<Self> {
        Self::with_stage(preset, n_envs, launch, generators::from_preset(preset))
    }

    /// A pipeline whose guide tracks come from generator `stage` (a built-in or a plug-in).
    pub fn with_stage(
        preset: &Preset,
        n_envs: usize,
        launch: Launch,
        stage: Arc<dyn Stage>,
    ) -> Result<Self> {
        Self::on_backend(preset, n_envs, Backend::Cpu(launch), stage)
    }

    /// A pipeline whose guide tracks are generated on `backend` (the gate stages run on the
    /// backend's host pool).
    pub fn on_backend(
        preset: &Preset,
        n_envs: usize,
        backend: Backend,
        stage: Arc<dyn Stage>,
    ) -> Result<Self> {
        let consts = GateConsts::new(preset)?;
        let launch = backend.launch().clone();
        let track = Pipeline::on_backend(preset, n_envs, backend, stage)?;
        let guide = track.new_batch(0)?;
        let g_max = consts.params.max_gates as usize;
        let path_len = g_max * consts.params.path_samples as usize;
        let scratch = Scratch {
            disp: vec![Vec3::ZERO; n_envs * g_max],
            path: vec![Vec3::ZERO; n_envs * path_len],
            active: vec![0; n_envs],
            relax_active: vec![0; n_envs],
            attempt: vec![0; n_envs],
            ok: vec![0; n_envs],
        };
        Ok(Self {
            consts,
            launch,
            n_envs,
            g_max,
            path_len,
            track,
            guide,
            scratch,
        })
    }

    /// The constants derived from the preset.
    pub fn consts(&self) -> &GateConsts {
        &self.consts
    }

    /// The number of envs.
    pub fn n_envs(&self) -> usize {
        self.n_envs
    }

    /// The guide tracks of the last (re)generation (env `e`'s row belongs to `generation[e]` of
    /// the gate batch it was generated for).
    pub fn guide(&self) -> &TrackBatch {
        &self.guide
    }

    /// A batch shaped for this pipeline, for envs `env_base ..`.
    pub fn new_batch(&self, env_base: u64) -> Result<GateBatch> {
        GateBatch::new(
            self.n_envs,
            self.g_max,
            env_base,
            self.consts.params.thickness_m,
        )
    }

    /// Generates every env of `batch` at `generation` (overwrites `batch.generation`).
    pub fn generate(&mut self, seed: u64, generation: u32, batch: &mut GateBatch) -> Result<()> {
        self.check_batch(batch)?;
        batch.generation.fill(generation);
        let mask = vec![1u8; self.n_envs];
        self.regenerate(seed, &mask, batch)
    }

    /// Regenerates exactly the envs with `mask[e] != 0`, each at its own `batch.generation[e]`.
    /// Unmasked envs' buffers are not written. An all-zero mask does no per-env work.
    pub fn regenerate(&mut self, seed: u64, mask: &[u8], batch: &mut GateBatch) -> Result<()> {
        self.check_batch(batch)?;
        Launch::check_mask(mask, self.n_envs)?;
        let launch = self.launch.clone();
        let mut result = Ok(());
        launch.skip_unless(mask, || result = self.run_masked(seed, mask, batch));
        result
    }

    fn check_batch(&self, batch: &GateBatch) -> Result<()> {
        if batch.n_envs != self.n_envs || batch.g_max != self.g_max {
            return Err(Error::Invalid(format!(
                "gate batch is {} envs × {} gates: expected {} × {} (the pipeline's shape)",
                batch.n_envs, batch.g_max, self.n_envs, self.g_max
            )));
        }
        Ok(())
    }

    fn run_masked(&mut self, seed: u64, mask: &[u8], batch: &mut GateBatch) -> Result<()> {
        let launch = self.launch.clone();
        // The guide of env e is the track of (seed, e, generation[e]) of this preset.
        self.guide.env_base = batch.env_base;
        launch.lanes(
            (
                self.guide.generation.par_iter_mut(),
                batch.generation.par_iter(),
                mask.par_iter(),
            )
                .into_par_iter(),
            |_, (guide_gen, &gen, &m)| {
                if m != 0 {
                    *guide_gen = gen;
                }
            },
        );
        self.track.regenerate(seed, mask, &mut self.guide)?;
        let max_attempts = self.consts.params.max_attempts;
        {
            let s = &mut self.scratch;
            s.active.copy_from_slice(mask);
            s.attempt.fill(0);
            s.ok.fill(0);
        }
        let mut active = std::mem::take(&mut self.scratch.active);
        launch.bounded_loop(max_attempts, &mut active, |_, active| {
            self.place_stage(seed, active, batch);
            self.relax_stage(active, batch);
            self.validate_stage(active, batch, max_attempts);
        });
        self.scratch.active = active;
        self.finish_stage(mask, batch);
        Ok(())
    }

    fn place_stage(&mut self, seed: u64, active: &[u8], batch: &mut GateBatch) {
        let consts = &self.consts;
        let (g_max, n_max) = (self.g_max, self.guide.n_max);
        let env_base = batch.env_base;
        let guide = &self.guide;
        let lanes = (
            batch.pos.par_chunks_mut(g_max),
            batch.size.par_chunks_mut(g_max),
            batch.count.par_iter_mut(),
            batch.generation.par_iter(),
            active.par_iter(),
            self.scratch.attempt.par_iter(),
        );
        self.launch.lanes(
            lanes.into_par_iter(),
            |e, (pos, size, count, &generation, &act, &attempt)| {
                if act == 0 {
                    return;
                }
                let n = guide.count[e] as usize;
                let base = e * n_max;
                let view = Guide {
                    center: &guide.center[base..base + n],
                    normal: &guide.normal[base..base + n],
                    arclen: &guide.arclen[base..base + n],
                    length: guide.length[e],
                };
                let stream = with_attempt(stream::GATES, u32::from(attempt));
                let mut rng = LaneRng::new(seed, env_base + e as u64, generation, stream);
                *count = place_lane(consts, &mut rng, &view, pos, size) as u32;
            },
        );
    }

    fn relax_stage(&mut self, active: &[u8], batch: &mut GateBatch) {
        let consts = &self.consts;
        let g_max = self.g_max;
        let sweeps = consts.params.sweeps_per_window;
        let launch = self.launch.clone();
        let s = &mut self.scratch;
        let mut relax_active = std::mem::take(&mut s.relax_active);
        let lanes = (
            batch.pos.par_chunks(g_max),
            batch.size.par_chunks(g_max),
            batch.count.par_iter(),
            relax_active.par_iter_mut(),
            active.par_iter(),
        );
        launch.lanes(lanes.into_par_iter(), |_, (pos, size, &count, ra, &act)| {
            let g = count as usize;
            *ra = if act != 0 {
                violation(consts, &pos[..g], &size[..g])
            } else {
                0
            };
        });
        launch.bounded_loop(consts.params.max_windows, &mut relax_active, |_, ra| {
            let lanes = (
                batch.pos.par_chunks_mut(g_max),
                batch.size.par_chunks(g_max),
                batch.count.par_iter(),
                s.disp.par_chunks_mut(g_max),
                ra.par_iter_mut(),
            );
            launch.lanes(lanes.into_par_iter(), |_, (pos, size, &count, disp, ra)| {
                if *ra == 0 {
                    return;
                }
                let g = count as usize;
                relax_sweeps(consts, &mut pos[..g], &size[..g], disp, sweeps);
                *ra = violation(consts, &pos[..g], &size[..g]);
            });
        });
        s.relax_active = relax_active;
    }

    fn validate_stage(&mut self, active: &mut [u8], batch: &GateBatch, max_attempts: u32) {
        let consts = &self.consts;
        let (g_max, path_len) = (self.g_max, self.path_len);
        let s = &mut self.scratch;
        let lanes = (
            batch.pos.par_chunks(g_max),
            batch.size.par_chunks(g_max),
            batch.count.par_iter(),
            s.path.par_chunks_mut(path_len),
            active.par_iter_mut(),
            s.attempt.par_iter_mut(),
            s.ok.par_iter_mut(),
        );
        self.launch.lanes(
            lanes.into_par_iter(),
            |_, (pos, size, &count, path, act, attempt, ok)| {
                if *act == 0 {
                    return;
                }
                let g = count as usize;
                *ok = u8::from(is_valid(consts, &pos[..g], &size[..g], path));
                *attempt += 1;
                *act = u8::from(*ok == 0 && u32::from(*attempt) < max_attempts);
            },
        );
    }

    fn finish_stage(&mut self, mask: &[u8], batch: &mut GateBatch) {
        let consts = &self.consts;
        let g_max = self.g_max;
        let max_attempts = consts.params.max_attempts as u8;
        let s = &self.scratch;
        let lanes = (
            batch.pos.par_chunks_mut(g_max),
            batch.size.par_chunks_mut(g_max),
            batch.quat.par_chunks_mut(g_max),
            batch.count.par_iter_mut(),
            batch.valid.par_iter_mut(),
            batch.attempts.par_iter_mut(),
            (s.ok.par_iter(), s.attempt.par_iter(), mask.par_iter()),
        );
        self.launch.lanes(
            lanes.into_par_iter(),
            |_, (pos, size, quat, count, valid, attempts, (&ok, &attempt, &m))| {
                if m == 0 {
                    return;
                }
                if ok == 0 {
                    *count = fallback_ring(consts, pos, size) as u32;
                }
                let g = *count as usize;
                frames_lane(&pos[..g], &mut quat[..g]);
                pos[g..].fill(Vec3::NAN);
                size[g..].fill(Vec2::NAN);
                quat[g..].fill(Quat::NAN);
                *valid = ok;
                *attempts = if ok != 0 { attempt } else { max_attempts };
            },
        );
    }
}
