//! The [`Course`] facade: generation, geometry, and the sim-time signals of a batch of envs.

use std::sync::Arc;

use rayon::prelude::*;

use super::config::{Binding, CourseConfig};
use super::courses::Courses;
use super::gate_batch::GateBatch;
use super::geometry::{build_gates_lane, build_track_lane, BuildConsts, CourseGeometry, GeomRow};
use super::heightfield::Heightfields;
use super::outputs::StepOutputs;
use super::props::Props;
use super::step::{goals_at, step_env, AgentPose, EnvState, Goals, Mode, StepConsts};
use super::step_pass::{env_course, step_chunk, EnvRows, Inputs, CHUNK};
use crate::exec::layout::par_chunks;
use crate::exec::plan::Backend;
use crate::exec::Launch;
use crate::geom::{Quat, Vec2, Vec3};
use crate::preset::Preset;
use crate::rng::LaneRng;
use crate::track::{generators, Stage, TrackBatch};
use crate::{Error, Result};

/// A simulator's view of a bound [`Course`]: its writable inputs beside the read-only geometry
/// and last outputs (what a controller reads to act), from [`Course::sim_view`].
#[derive(Debug)]
pub struct SimView<'a> {
    /// The bound positions.
    pub positions: &'a mut [Vec3],
    /// The bound orientations, if bound.
    pub orientations: Option<&'a mut [Quat]>,
    /// The course geometry.
    pub geometry: &'a CourseGeometry,
    /// The outputs of the last step (or reset).
    pub outputs: &'a StepOutputs,
}

/// A batch of courses and the sim-time signals to race them: the facade of this module.
///
/// Life cycle: build with [`Course::new`] (every env generated at
/// generation 0 and reset), [`bind`](Course::bind) the simulator's per-env buffers, then each
/// sim step write positions ([`positions_mut`](Course::positions_mut)) and call
/// [`step`](Course::step); [`reset`](Course::reset) respawns envs on their course,
/// [`regenerate`](Course::regenerate) gives envs a new course (or rebuilds the same one).
///
/// Every per-env pass is a fixed launch over env lanes (no host branch on per-env data), and
/// masked passes are wrapped in [`Launch::skip_unless`], so a CUDA backend can capture
/// `step()` and `regenerate()` into one graph. Nothing allocates after construction.
pub struct Course {
    mode: Mode,
    preset: Preset,
    config: CourseConfig,
    launch: Launch,
    seed: u64,
    n_envs: usize,
    source: Courses,
    build: BuildConsts,
    guide_half_width_m: f32,
    consts: StepConsts,
    geometry: CourseGeometry,
    state: Vec<EnvState>,
    goals: Vec<Goals>,
    outputs: StepOutputs,
    binding: Option<Binding>,
    heightfields: Option<Heightfields>,
    props: Option<Props>,
    all: Vec<u8>,
}

impl std::fmt::Debug for Course {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Course")
            .field("mode", &self.mode)
            .field("preset", &self.preset.source)
            .field("n_envs", &self.n_envs)
            .field("seed", &self.seed)
            .field("bound", &self.binding.is_some())
            .finish()
    }
}

impl Course {
    /// A course of `mode` for `n_envs` envs of `preset`, generated at generation 0 and reset:
    /// [`Mode::Track`] races the preset's tracks (a gate preset's guide track too),
    /// [`Mode::Gates`] its gate courses (the preset needs a `[gates]` section).
    pub fn new(
        mode: Mode,
        preset: &Preset,
        n_envs: usize,
        seed: u64,
        config: CourseConfig,
        launch: Launch,
    ) -> Result<Self> {
        Self::on_backend(mode, preset, n_envs, seed, config, Backend::Cpu(launch))
    }

    /// [`new`](Self::new) with the track pipeline on `backend` (the CPU, the emulated CUDA
    /// kernels or a GPU: the same bytes); the course's own passes run on the backend's host pool.
    pub fn on_backend(
        mode: Mode,
        preset: &Preset,
        n_envs: usize,
        seed: u64,
        config: CourseConfig,
        backend: Backend,
    ) -> Result<Self> {
        let stage = generators::from_preset(preset);
        Self::with_backend(mode, preset, stage, n_envs, seed, config, backend)
    }

    /// A course of `mode` whose tracks (or guide tracks) come from generator `stage` instead
    /// of the preset's: a plug-in generator, or an analytic shape for tests.
    pub fn with_stage(
        mode: Mode,
        preset: &Preset,
        stage: Arc<dyn Stage>,
        n_envs: usize,
        seed: u64,
        config: CourseConfig,
        launch: Launch,
    ) -> Result<Self> {
        Self::with_backend(
            mode,
            preset,
            stage,
            n_envs,
            seed,
            config,
            Backend::Cpu(launch),
        )
    }

    /// [`with_stage`](Self::with_stage) with the track pipeline on `backend`.
    pub fn with_backend(
        mode: Mode,
        preset: &Preset,
        stage: Arc<dyn Stage>,
        n_envs: usize,
        seed: u64,
        config: CourseConfig,
        backend: Backend,
    ) -> Result<Self> {
        let launch = backend.launch().clone();
        config.check()?;
        if mode == Mode::Gates && (config.heightfield.is_some() || config.props.is_some()) {
            return Err(Error::Invalid(
                "CourseConfig.heightfield / props: road heightfields and boundary props are for \
                 Mode::Track (a gate course has no road)"
                    .into(),
            ));
        }
        let t = &preset.track;
        let source = Courses::with_backend(mode, preset, stage, n_envs, config.env_base, backend)?;
        let (half_width_m, path_max, checkpoint_max, path_samples, thickness_m, posts) =
            match &source {
                Courses::Track { .. } => {
                    let n_max = t.n_max as usize;
                    let k_max = (config.max_checkpoints as usize).min(n_max);
                    (t.half_width_m, n_max, k_max, 0, 0.0, false)
                }
                Courses::Gates { pipeline, .. } => {
                    let g = &pipeline.consts().params;
                    let samples = g.path_samples as usize;
                    (
                        g.corridor_half_width_m,
                        g.max_gates as usize * samples,
                        g.max_gates as usize,
                        samples,
                        g.thickness_m,
                        g.posts,
                    )
                }
            };
        let obstacle_max = preset.obstacles.as_ref().map_or(0, |o| o.count as usize);
        let relocalize = config.relocalize_m.unwrap_or(half_width_m);
        let consts = StepConsts {
            mode,
            half_width_m,
            window: config.localize_window as usize,
            relocalize2: relocalize * relocalize,
            wrong_way_tolerance_m: config.wrong_way_tolerance_m,
            thickness_m,
            posts,
        };
        let build = BuildConsts {
            half_width_m,
            checkpoint_spacing_m: config.checkpoint_spacing_m,
            obstacles: preset.obstacles.clone(),
            path_samples,
            thickness_m,
            even_spacing: preset.track.sampling == crate::preset::Sampling::Uniform,
        };
        let mut course = Self {
            mode,
            preset: preset.clone(),
            launch,
            seed,
            n_envs,
            source,
            build,
            guide_half_width_m: t.half_width_m,
            consts,
            geometry: CourseGeometry::new(
                n_envs,
                path_max,
                checkpoint_max,
                obstacle_max,
                half_width_m,
            ),
            state: vec![EnvState::RESET; n_envs],
            goals: vec![Goals::NAN; n_envs],
            outputs: StepOutputs::new(n_envs)?,
            binding: None,
            heightfields: config
                .heightfield
                .map(|h| Heightfields::new(h, n_envs, config.env_base))
                .transpose()?,
            props: config
                .props
                .map(|p| Props::new(p, n_envs, config.env_base))
                .transpose()?,
            all: vec![1; n_envs],
            config,
        };
        course.generate(0)?;
        Ok(course)
    }

    /// Track or gates.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The number of envs.
    pub fn n_envs(&self) -> usize {
        self.n_envs
    }

    /// The seed of every env's random streams.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The preset.
    pub fn preset(&self) -> &Preset {
        &self.preset
    }

    /// The sim-time settings.
    pub fn config(&self) -> &CourseConfig {
        &self.config
    }

    /// Each env's generation counter.
    pub fn generation(&self) -> &[u32] {
        self.source.generation()
    }

    /// The tracks: in track mode the courses, in gate mode the guide tracks the gates were
    /// placed along.
    pub fn track_batch(&self) -> &TrackBatch {
        self.source.tracks()
    }

    /// The gates (gate mode), `None` in track mode.
    pub fn gate_batch(&self) -> Option<&GateBatch> {
        self.source.gates()
    }

    /// The course geometry: path, checkpoints, obstacles, spawn poses.
    pub fn geometry(&self) -> &CourseGeometry {
        &self.geometry
    }

    /// The road heightfields ([`super::heightfield`]), if [`CourseConfig::heightfield`] asked
    /// for them: rebaked for exactly the envs [`regenerate`](Self::regenerate) rebuilds.
    pub fn heightfields(&self) -> Option<&Heightfields> {
        self.heightfields.as_ref()
    }

    /// The boundary props ([`super::props`]), if [`CourseConfig::props`] asked for them:
    /// replaced for exactly the envs [`regenerate`](Self::regenerate) rebuilds.
    pub fn props(&self) -> Option<&Props> {
        self.props.as_ref()
    }

    /// The outputs of the last [`step`](Self::step) (and of [`reset`](Self::reset) /
    /// [`regenerate`](Self::regenerate) for the envs they touched).
    pub fn outputs(&self) -> &StepOutputs {
        &self.outputs
    }

    /// The output buffers, writable (e.g. to reuse or poison them): `step()` overwrites every
    /// field of every env, and fails with an error naming the buffer if one was resized.
    pub fn outputs_mut(&mut self) -> &mut StepOutputs {
        &mut self.outputs
    }

    /// Latches the simulator's per-env input buffers. A buffer whose length is not `n_envs` is an
    /// [`Error::Invalid`] naming both lengths (and nothing is bound). Replaces any previous
    /// binding; does not reset any env.
    pub fn bind(&mut self, binding: Binding) -> Result<()> {
        let n = self.n_envs;
        let check = |what: &str, len: usize| {
            if len == n {
                Ok(())
            } else {
                Err(Error::Invalid(format!(
                    "bound {what} buffer has {len} entries: expected one per env ({n})"
                )))
            }
        };
        check("positions", binding.positions.len())?;
        if let Some(o) = &binding.orientations {
            check("orientations", o.len())?;
        }
        if let Some(h) = &binding.half_extents {
            check("half_extents", h.len())?;
        }
        self.binding = Some(binding);
        Ok(())
    }

    /// The bound inputs (writable) beside the geometry and the last outputs, `None` before
    /// [`bind`](Self::bind).
    pub fn sim_view(&mut self) -> Option<SimView<'_>> {
        let b = self.binding.as_mut()?;
        Some(SimView {
            positions: &mut b.positions,
            orientations: b.orientations.as_deref_mut(),
            geometry: &self.geometry,
            outputs: &self.outputs,
        })
    }

    /// The launch context every pass runs on.
    pub fn launch(&self) -> &Launch {
        &self.launch
    }

    /// Gives the bound buffers back (`None` if nothing is bound).
    pub fn unbind(&mut self) -> Option<Binding> {
        self.binding.take()
    }

    /// The bound buffers, if any.
    pub fn binding(&self) -> Option<&Binding> {
        self.binding.as_ref()
    }

    /// The bound positions, for the simulator to write (`None` before [`bind`](Self::bind)).
    pub fn positions_mut(&mut self) -> Option<&mut [Vec3]> {
        self.binding.as_mut().map(|b| &mut b.positions[..])
    }

    /// The bound orientations, if bound.
    pub fn orientations_mut(&mut self) -> Option<&mut [Quat]> {
        self.binding
            .as_mut()
            .and_then(|b| b.orientations.as_deref_mut())
    }

    /// The bound half extents, if bound.
    pub fn half_extents_mut(&mut self) -> Option<&mut [Vec2]> {
        self.binding
            .as_mut()
            .and_then(|b| b.half_extents.as_deref_mut())
    }

    /// Advances every env by one step from the bound inputs, writing every field of
    /// [`StepOutputs`] for every env (see its doc for each field and for non-finite positions).
    ///
    /// Localization walks from the previous segment to nearer neighbours ([`super::localize`]);
    /// crossings use the swept segment from the previous position (the NaN sentinel after a
    /// reset: the first step after a reset never crosses anything). One fixed pass over env
    /// lanes; no allocation. Errors (and changes nothing) when nothing is bound or an output
    /// buffer was resized.
    pub fn step(&mut self) -> Result<()> {
        let binding = self.binding.as_ref().ok_or_else(|| {
            Error::Invalid("step() before bind(): bind the per-env positions first".into())
        })?;
        self.outputs.check(self.n_envs)?;
        let consts = self.consts;
        let geometry = &self.geometry;
        let lanes = (
            binding.positions.par_chunks(CHUNK),
            self.state.par_chunks_mut(CHUNK),
            self.goals.par_chunks_mut(CHUNK),
            par_chunks(self.outputs.rows_mut(), CHUNK),
        );
        let inputs = Inputs {
            orientations: binding.orientations.as_deref(),
            half_extents: binding.half_extents.as_deref(),
            default_half: self.config.footprint_half_extents_m,
        };
        self.launch.lanes(
            lanes.into_par_iter(),
            |chunk, (positions, states, goals, out)| {
                let out = out.trim(positions.len());
                let env = EnvRows {
                    base: chunk * CHUNK,
                    positions,
                    states,
                    goals,
                };
                step_chunk(&consts, geometry, &inputs, env, out);
            },
        );
        Ok(())
    }

    /// Respawns the envs with `mask[e] != 0` on their current course: checkpoints passed and laps
    /// to 0, next checkpoint 1, previous position the NaN sentinel, and — if positions are bound
    /// — the bound position (and orientation, if bound) set to the spawn pose
    /// ([`CourseGeometry::spawn_position`], [`CourseGeometry::spawn_orientation`]). Their
    /// outputs become those of a step at the spawn pose (no events, progress 0). Unmasked envs
    /// are not written; an all-zero mask does no per-env work. A mask whose length is not
    /// `n_envs` is an [`Error::Invalid`] naming both lengths.
    pub fn reset(&mut self, mask: &[u8]) -> Result<()> {
        self.check_mask(mask)?;
        let launch = self.launch.clone();
        launch.skip_unless(mask, || self.reset_masked(mask));
        Ok(())
    }

    /// Gives the envs with `mask[e] != 0` a course: with `advance` their generation counter moves
    /// to `generation + 1` (wrapping) and they get a new course; without, their current
    /// generation is rebuilt (the same bytes). Then their geometry (path, checkpoints,
    /// obstacles, spawn pose) is rebuilt and they are [`reset`](Self::reset). Every buffer of an
    /// unmasked env stays byte-identical; an all-zero mask does no per-env work
    /// ([`Launch::skip_unless`]). A masked env's course equals that env's course in a fresh
    /// `Course` generated at its new generation.
    pub fn regenerate(&mut self, mask: &[u8], advance: bool) -> Result<()> {
        self.check_mask(mask)?;
        let launch = self.launch.clone();
        let mut result = Ok(());
        launch.skip_unless(mask, || {
            if advance {
                let generation = self.source.generation_mut();
                launch.lanes(
                    generation.par_iter_mut().zip(mask.par_iter()),
                    |_, (g, &m)| {
                        if m != 0 {
                            *g = g.wrapping_add(1);
                        }
                    },
                );
            }
            result = self.rebuild_masked(mask);
        });
        result
    }

    /// Generates every env at `generation` and resets it (what construction does at 0).
    pub fn generate(&mut self, generation: u32) -> Result<()> {
        self.source.generation_mut().fill(generation);
        let all = std::mem::take(&mut self.all);
        let result = self.rebuild_masked(&all);
        self.all = all;
        result
    }

    fn check_mask(&self, mask: &[u8]) -> Result<()> {
        Launch::check_mask(mask, self.n_envs)
    }

    /// Regenerates the masked envs at their generation, rebuilds their geometry, resets them.
    fn rebuild_masked(&mut self, mask: &[u8]) -> Result<()> {
        self.source.regenerate(self.seed, mask)?;
        self.build_geometry(mask);
        let tracks = self.source.tracks();
        if let Some(h) = self.heightfields.as_mut() {
            h.bake(tracks, mask, &self.launch)?;
        }
        if let Some(p) = self.props.as_mut() {
            p.place(tracks, mask, &self.launch)?;
        }
        self.reset_masked(mask);
        Ok(())
    }

    fn build_geometry(&mut self, mask: &[u8]) {
        let g = &mut self.geometry;
        let (pm, km, om) = (g.path_max, g.checkpoint_max, g.obstacle_max.max(1));
        let (seed, build, guide_hw) = (self.seed, &self.build, self.guide_half_width_m);
        let source = &self.source;
        let (generation, env_base) = (source.generation(), source.env_base());
        let lanes = (
            (
                g.path.par_chunks_mut(pm),
                g.curvature.par_chunks_mut(pm),
                g.path_count.par_iter_mut(),
                g.path_length.par_iter_mut(),
            ),
            (
                g.checkpoints.par_chunks_mut(km),
                g.checkpoint_count.par_iter_mut(),
                g.checkpoints_truncated.par_iter_mut(),
            ),
            (
                g.obstacles.par_chunks_mut(om),
                g.obstacle_count.par_iter_mut(),
            ),
            (
                g.spawn_position.par_iter_mut(),
                g.spawn_yaw.par_iter_mut(),
                g.spawn_orientation.par_iter_mut(),
            ),
            mask.par_iter(),
        );
        self.launch
            .lanes(lanes.into_par_iter(), |e, (p, k, o, sp, &m)| {
                if m == 0 {
                    return;
                }
                let row = GeomRow {
                    path: p.0,
                    curvature: p.1,
                    path_count: p.2,
                    path_length: p.3,
                    checkpoints: k.0,
                    checkpoint_count: k.1,
                    truncated: k.2,
                    obstacles: o.0,
                    obstacle_count: o.1,
                    spawn_position: sp.0,
                    spawn_yaw: sp.1,
                    spawn_orientation: sp.2,
                };
                let mut rng = LaneRng::new(
                    seed,
                    env_base + e as u64,
                    generation[e],
                    crate::rng::stream::OBSTACLES,
                );
                match source {
                    Courses::Track { batch, .. } => {
                        build_track_lane(build, batch, e, &mut rng, row)
                    }
                    Courses::Gates { pipeline, batch } => {
                        build_gates_lane(build, batch, pipeline.guide(), guide_hw, e, &mut rng, row)
                    }
                }
            });
    }

    fn reset_masked(&mut self, mask: &[u8]) {
        let consts = self.consts;
        let default_half = self.config.footprint_half_extents_m;
        let geometry = &self.geometry;
        let binding = self.binding.as_ref();
        let has_orientations = binding.is_some_and(|b| b.orientations.is_some());
        let half_extents = binding.and_then(|b| b.half_extents.as_deref());
        let lanes = (
            mask.par_chunks(CHUNK),
            self.state.par_chunks_mut(CHUNK),
            self.goals.par_chunks_mut(CHUNK),
            par_chunks(self.outputs.rows_mut(), CHUNK),
        );
        self.launch.lanes(
            lanes.into_par_iter(),
            |chunk, (mask, states, goals, mut out)| {
                let base = chunk * CHUNK;
                let rows = mask.iter().zip(states.iter_mut()).zip(goals.iter_mut());
                for (i, ((&m, state), goals)) in rows.enumerate() {
                    if m == 0 {
                        continue;
                    }
                    let e = base + i;
                    let agent = AgentPose {
                        position: geometry.spawn_position[e],
                        orientation: has_orientations.then(|| geometry.spawn_orientation[e]),
                        half_extents: half_extents.map_or(default_half, |h| h[e]),
                    };
                    *state = EnvState::RESET;
                    let course = env_course(geometry, e);
                    *goals = goals_at(course.checkpoints, state.next as usize);
                    let o = step_env(&consts, &course, &agent, state, goals);
                    // The outputs are those of the spawn pose; the sentinel stays.
                    state.prev = Vec3::NAN;
                    out.set(i, &o);
                }
            },
        );
        if let Some(b) = self.binding.as_mut() {
            self.launch.lanes(
                b.positions
                    .par_iter_mut()
                    .zip(geometry.spawn_position.par_iter())
                    .zip(mask.par_iter()),
                |_, ((p, s), &m)| {
                    if m != 0 {
                        *p = *s;
                    }
                },
            );
            if let Some(o) = b.orientations.as_mut() {
                self.launch.lanes(
                    o.par_iter_mut()
                        .zip(geometry.spawn_orientation.par_iter())
                        .zip(mask.par_iter()),
                    |_, ((p, s), &m)| {
                        if m != 0 {
                            *p = *s;
                        }
                    },
                );
            }
        }
    }
}
