//! [`Courses`]: a generation pipeline and the batch it fills, tracks or gate courses — what the
//! runtime races and what a corpus stores.

use std::sync::Arc;

use super::gate_batch::GateBatch;
use super::gate_pipeline::GatePipeline;
use super::step::Mode;
use crate::exec::layout::{Field, Layout};
use crate::exec::plan::Backend;
use crate::exec::Launch;
use crate::preset::Preset;
use crate::track::{generators, Pipeline, Stage, TrackBatch};
use crate::Result;

/// The courses of a batch of envs, with the pipeline that (re)generates them.
pub enum Courses {
    /// Closed tracks.
    Track {
        /// The track pipeline.
        pipeline: Box<Pipeline>,
        /// Its batch.
        batch: TrackBatch,
    },
    /// Gate courses (the pipeline also holds their guide tracks).
    Gates {
        /// The gate pipeline.
        pipeline: Box<GatePipeline>,
        /// Its batch.
        batch: GateBatch,
    },
}

impl Courses {
    /// The courses of `n_envs` envs from env `env_base` on, of `mode`, with tracks (or guide
    /// tracks) from generator `stage`. Nothing is generated yet.
    pub fn with_stage(
        mode: Mode,
        preset: &Preset,
        stage: Arc<dyn Stage>,
        n_envs: usize,
        env_base: u64,
        launch: Launch,
    ) -> Result<Self> {
        Self::with_backend(mode, preset, stage, n_envs, env_base, Backend::Cpu(launch))
    }

    /// [`with_stage`](Self::with_stage) with the track pipeline on `backend` (gate stages run
    /// on the backend's host pool).
    pub fn with_backend(
        mode: Mode,
        preset: &Preset,
        stage: Arc<dyn Stage>,
        n_envs: usize,
        env_base: u64,
        backend: Backend,
    ) -> Result<Self> {
        Ok(match mode {
            Mode::Track => {
                let pipeline = Pipeline::on_backend(preset, n_envs, backend, stage)?;
                let batch = pipeline.new_batch(env_base)?;
                Courses::Track {
                    pipeline: Box::new(pipeline),
                    batch,
                }
            }
            Mode::Gates => {
                let pipeline = GatePipeline::on_backend(preset, n_envs, backend, stage)?;
                let batch = pipeline.new_batch(env_base)?;
                Courses::Gates {
                    pipeline: Box::new(pipeline),
                    batch,
                }
            }
        })
    }

    /// The courses the preset describes (gates if it has a `[gates]` section), with its
    /// built-in generator.
    pub fn new(preset: &Preset, n_envs: usize, env_base: u64, launch: Launch) -> Result<Self> {
        Self::on_backend(preset, n_envs, env_base, Backend::Cpu(launch))
    }

    /// [`new`](Self::new) with the track pipeline on `backend`.
    pub fn on_backend(
        preset: &Preset,
        n_envs: usize,
        env_base: u64,
        backend: Backend,
    ) -> Result<Self> {
        let mode = if preset.gates.is_some() {
            Mode::Gates
        } else {
            Mode::Track
        };
        let stage = generators::from_preset(preset);
        Self::with_backend(mode, preset, stage, n_envs, env_base, backend)
    }

    /// Generates every env at `generation`.
    pub fn generate(&mut self, seed: u64, generation: u32) -> Result<()> {
        match self {
            Courses::Track { pipeline, batch } => pipeline.generate(seed, generation, batch),
            Courses::Gates { pipeline, batch } => pipeline.generate(seed, generation, batch),
        }
    }

    /// Regenerates the envs with `mask[e] != 0` at their generation.
    pub fn regenerate(&mut self, seed: u64, mask: &[u8]) -> Result<()> {
        match self {
            Courses::Track { pipeline, batch } => pipeline.regenerate(seed, mask, batch),
            Courses::Gates { pipeline, batch } => pipeline.regenerate(seed, mask, batch),
        }
    }

    /// Each env's generation counter.
    pub fn generation(&self) -> &[u32] {
        match self {
            Courses::Track { batch, .. } => &batch.generation,
            Courses::Gates { batch, .. } => &batch.generation,
        }
    }

    /// Each env's generation counter, to set before [`regenerate`](Self::regenerate).
    pub fn generation_mut(&mut self) -> &mut [u32] {
        match self {
            Courses::Track { batch, .. } => &mut batch.generation,
            Courses::Gates { batch, .. } => &mut batch.generation,
        }
    }

    /// The global index of env 0.
    pub fn env_base(&self) -> u64 {
        match self {
            Courses::Track { batch, .. } => batch.env_base,
            Courses::Gates { batch, .. } => batch.env_base,
        }
    }

    /// Moves the batch to envs `env_base ..` (before generating them).
    pub fn set_env_base(&mut self, env_base: u64) {
        match self {
            Courses::Track { batch, .. } => batch.env_base = env_base,
            Courses::Gates { batch, .. } => batch.env_base = env_base,
        }
    }

    /// The tracks: the batch in track mode, the guide tracks in gate mode.
    pub fn tracks(&self) -> &TrackBatch {
        match self {
            Courses::Track { batch, .. } => batch,
            Courses::Gates { pipeline, .. } => pipeline.guide(),
        }
    }

    /// The gate courses (gate mode only).
    pub fn gates(&self) -> Option<&GateBatch> {
        match self {
            Courses::Track { .. } => None,
            Courses::Gates { batch, .. } => Some(batch),
        }
    }

    /// The batch's buffers ([`TrackBatch::FIELDS`] or [`GateBatch::FIELDS`]).
    pub fn fields(&self) -> &'static [Field] {
        match self {
            Courses::Track { .. } => TrackBatch::FIELDS,
            Courses::Gates { .. } => GateBatch::FIELDS,
        }
    }

    /// Calls `f` with each of the batch's buffers and its bytes, in [`fields`](Self::fields)
    /// order.
    pub fn for_each_field(&self, f: impl FnMut(&'static Field, &[u8])) {
        match self {
            Courses::Track { batch, .. } => Layout::for_each_field(batch, f),
            Courses::Gates { batch, .. } => Layout::for_each_field(batch, f),
        }
    }
}
