//! The pipeline: generator (one pass, or set-up plus a bounded loop of windows) → resample → relax → validate (retrying on fresh streams) →
//! fallback → z-profile → inflate, each a stage over env lanes.
//!
//! Every stage is a pass of [`Launch::lanes`] over structure-of-arrays buffers; lanes whose
//! `active` or `mask` flag is 0 return at once (a kernel's early exit), so the host never
//! branches on per-env data. Retries and relaxation are [`Launch::bounded_loop`]s, masked
//! regeneration is [`Launch::skip_unless`]. All scratch is allocated once in [`Pipeline::new`].

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use super::batch::TrackBatch;
use super::generators::{self, Stage};
use super::inflate::{fallback_circle, inflate_lane, InflateOut};
use super::relax::{relax_sweeps, violation, RelaxConsts, RelaxScratch, TOO_CLOSE};
use super::resample::{resample_adaptive, resample_closed, AdaptiveSpacing, ADAPTIVE_SCRATCH_ROWS};
use super::validity::{is_valid, ValidityBuffers, ValidityConsts, KERNEL_BOX_WORDS, SLACK};
use super::zprofile::{lattice_len, profile_lane};
use crate::exec::cuda::{CaptureMode, CudaKernels, CudaStream, DeviceBuffer, GraphExec};
use crate::exec::plan::{
    self, params_bytes, Access, Backend, BufId, BufferSet, CpuPass, DeviceBuffers, Op, Pass, Trace,
};
use crate::exec::{Launch, ThreadScratch};
use crate::geom::Vec2;
use crate::preset::{Preset, Sampling, ZKind};
use crate::rng::{stream, LaneRng};
use crate::{Error, Result};

/// A track pipeline built for `n_envs` envs of one preset, with all its scratch.
pub struct Pipeline {
    preset: Preset,
    backend: Backend,
    trace: Trace,
    stage: Arc<dyn Stage>,
    n_envs: usize,
    /// Envs per run of the plan: on the CPU at most [`TILE_ENVS_PER_THREAD`] per thread (the
    /// batch is run tile by tile, so each tile's scratch is still in cache from one pass to the
    /// next), elsewhere `n_envs`. The scratch holds one tile.
    tile: usize,
    n_max: usize,
    raw_max: usize,
    gen_scratch_len: usize,
    gen_u32_len: usize,
    lattice_len: usize,
    relax: RelaxConsts,
    validity: ValidityConsts,
    scratch: Scratch,
    /// Per-thread scratch of the CPU's generator (a stage without windows), resampling,
    /// validity and relaxation-check passes.
    thread_scratch: Arc<ThreadScratches>,
    /// The buffers on the device (the CUDA backend).
    device: Option<DeviceState>,
}

/// The pipeline's buffers on a CUDA device, and the graph recorded for them.
struct DeviceState {
    kernels: Arc<CudaKernels>,
    bufs: HashMap<BufId, DeviceBuffer>,
    /// One window counter per `While` of the plan.
    counters: Vec<DeviceBuffer>,
    graphs: bool,
    /// The graph of the plan for `(seed, env_base)` (the buffers never move, so those are the
    /// whole capture key besides the pipeline itself).
    graph: Option<((u64, u64), GraphExec)>,
}

impl DeviceBuffers for DeviceState {
    fn device_buffer(&self, id: BufId) -> &DeviceBuffer {
        &self.bufs[&id]
    }
}

fn not_on_device() -> Error {
    Error::Invalid("the pipeline is not on a CUDA device (Backend::Cuda)".into())
}

/// The buffers a run uploads (the batch, so that unmasked envs keep their bytes, and the run's
/// inputs) and downloads (the batch).
const BATCH_IDS: [BufId; 11] = [
    buf::CENTER,
    buf::OUTER,
    buf::INNER,
    buf::TANGENT,
    buf::NORMAL,
    buf::ARCLEN,
    buf::COUNT_OUT,
    buf::LENGTH,
    buf::VALID,
    buf::ATTEMPTS,
    buf::GENERATION,
];

impl DeviceState {
    /// Runs `ops` on the device for the host state's mask and batch: uploads them, runs,
    /// downloads the batch.
    fn run(
        &mut self,
        ops: &[Op<TrackState<'_>>],
        seed: u64,
        host: &mut TrackState<'_>,
    ) -> Result<Trace> {
        let device = self.kernels.device();
        for id in BATCH_IDS.into_iter().chain([buf::MASK]) {
            device.upload(&self.bufs[&id], host.bytes_mut(id))?;
        }
        let trace = self.execute(ops, seed, host.batch.env_base)?;
        let device = self.kernels.device();
        for id in BATCH_IDS {
            device.download(&self.bufs[&id], host.bytes_mut(id))?;
        }
        Ok(trace)
    }

    /// Runs `ops` on the device buffers as they are: the graph recorded for `(seed, env_base)`
    /// (recorded now if the key changed), or eagerly; waits for the device.
    fn execute<S>(&mut self, ops: &[Op<S>], seed: u64, env_base: u64) -> Result<Trace> {
        let device = self.kernels.device();
        if !self.graphs {
            return plan::run_cuda(ops, &self.kernels, self);
        }
        let key = (seed, env_base);
        if self.graph.as_ref().map(|(k, _)| *k) != Some(key) {
            self.graph = None;
            plan::load_cuda(ops, &self.kernels)?;
            let stream = device.stream().clone();
            device.begin_capture(&stream, CaptureMode::ThreadLocal)?;
            let buffers: Vec<&DeviceBuffer> = self.bufs.values().collect();
            let recorded =
                plan::record_cuda(ops, &self.kernels, self, &buffers, &self.counters, &stream);
            let graph = device.end_capture(&stream);
            recorded?;
            self.graph = Some((key, graph?.instantiate()?));
        }
        let (_, exec) = self.graph.as_ref().expect("recorded above");
        exec.launch(device.stream())?;
        device.synchronize()?;
        Ok(Trace::default())
    }
}

/// The per-thread scratch of the CPU passes that need it while a lane runs, sized once.
struct ThreadScratches {
    validity: ThreadScratch<ValidityBuffers>,
    relax: ThreadScratch<Vec<Vec2>>,
    /// Curvature resampling's rows ([`ADAPTIVE_SCRATCH_ROWS`] · raw_max words; empty for
    /// constant spacing).
    resample: ThreadScratch<Vec<f32>>,
    /// The generator's scratch words (`f32`, `u32`) of a stage without windows, whose scratch
    /// carries nothing from its pass to another (empty for a stage with windows).
    generator: ThreadScratch<(Vec<f32>, Vec<u32>)>,
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
    chunk_boxes: Vec<Vec2>,
    seg_boxes: Vec<f32>,
    /// The resample kernel's rows for curvature sampling (none on the CPU, one word per env
    /// for constant spacing).
    resample: Vec<f32>,
    lattice: Vec<f32>,
    active: Vec<u8>,
    gen_active: Vec<u8>,
    /// The envs of the current run (a copy of the caller's mask, or all ones).
    mask: Vec<u8>,
    /// The condition words of the plan: mask, attempt, generator windows, relaxation windows.
    words: Vec<u32>,
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
        Self::on_backend(preset, n_envs, Backend::Cpu(launch), stage)
    }

    /// A pipeline whose passes run on `backend` (the CPU, or the emulated-CUDA kernels), with
    /// the generator stage `stage`.
    pub fn on_backend(
        preset: &Preset,
        n_envs: usize,
        backend: Backend,
        stage: Arc<dyn Stage>,
    ) -> Result<Self> {
        if n_envs == 0 {
            return Err(Error::Invalid("n_envs = 0: expected at least 1 env".into()));
        }
        let n_max = preset.track.n_max as usize;
        let raw_max = stage.max_points().max(3);
        let gen_scratch_len = stage.scratch_len().max(1);
        let gen_u32_len = stage.scratch_u32_len().max(1);
        // A stage without windows needs its scratch only while its lane runs: on the CPU each
        // thread reuses one set, which stays in cache, instead of one per env (the circuit
        // generator's is ~26 KB a lane, 13 MB a 512-env tile, which pushed the tile's other
        // buffers out of cache as it filled).
        let windowless = stage.max_windows() == 0;
        let lattice_len = lattice_len(&preset.zprofile).max(1);
        // `rows` rows of `k` elements (`rows` is `n_envs`, or 0 for rows a backend never reads).
        let rows_of = |rows: usize, k: usize, what: &str| {
            rows.checked_mul(k)
                .ok_or_else(|| Error::Invalid(format!("n_envs = {n_envs} × {k} {what} overflows")))
        };
        let tile = if matches!(backend, Backend::Cpu(_)) {
            n_envs.min(TILE_ENVS_PER_THREAD * backend.launch().threads())
        } else {
            n_envs
        };
        let per_env = |k: usize, what: &str| rows_of(tile, k, what);
        // The validity kernel's scratch rows (chunk and segment boxes): the CPU pass uses
        // per-thread sets instead, so a CPU pipeline does not allocate them (at N_max 256 they
        // are 16 KB per env).
        let kernel_rows = if matches!(backend, Backend::Cpu(_)) {
            0
        } else {
            tile
        };
        let per_kernel_env = |k: usize, what: &str| rows_of(kernel_rows, k, what);
        let generator_rows = if windowless { kernel_rows } else { tile };
        let per_generator_env = |k: usize, what: &str| rows_of(generator_rows, k, what);
        // Curvature resampling's rows per env (per thread on the CPU).
        let resample_len = if preset.track.sampling == Sampling::Curvature {
            raw_max.checked_mul(ADAPTIVE_SCRATCH_ROWS).ok_or_else(|| {
                Error::Invalid(format!(
                    "raw_max = {raw_max} resample scratch words overflow"
                ))
            })?
        } else {
            0
        };
        let thread_scratch = Arc::new(ThreadScratches {
            validity: ThreadScratch::new(backend.launch(), || ValidityBuffers::new(n_max)),
            relax: ThreadScratch::new(backend.launch(), || vec![Vec2::ZERO; 2 * n_max]),
            resample: ThreadScratch::new(backend.launch(), || vec![0.0; resample_len]),
            generator: ThreadScratch::new(backend.launch(), || {
                let (len, u32_len) = if windowless {
                    (gen_scratch_len, gen_u32_len)
                } else {
                    (0, 0)
                };
                (vec![0.0; len], vec![0; u32_len])
            }),
        });
        let scratch = Scratch {
            raw: vec![Vec2::ZERO; per_env(raw_max, "raw points")?],
            raw_count: vec![0; tile],
            gen: vec![0.0; per_generator_env(gen_scratch_len, "generator scratch words")?],
            gen_u32: vec![0; per_generator_env(gen_u32_len, "generator integer scratch words")?],
            pts: vec![Vec2::ZERO; per_env(n_max, "points")?],
            count: vec![0; tile],
            z: vec![0.0; per_env(n_max, "heights")?],
            arcs: vec![0.0; per_env(n_max, "arc lengths")?],
            pair: vec![Vec2::ZERO; per_env(2 * n_max, "border points")?],
            chunk_boxes: vec![Vec2::ZERO; per_kernel_env(2 * n_max, "chunk box corners")?],
            seg_boxes: vec![0.0; per_kernel_env(KERNEL_BOX_WORDS * n_max, "segment box words")?],
            resample: vec![0.0; per_kernel_env(resample_len.max(1), "resample scratch words")?],
            lattice: vec![0.0; per_env(lattice_len, "lattice words")?],
            active: vec![0; tile],
            gen_active: vec![0; tile],
            mask: vec![0; tile],
            words: vec![0; 4],
            relax_active: vec![0; tile],
            attempt: vec![0; tile],
            ok: vec![0; tile],
        };
        let t = &preset.track;
        let relax = RelaxConsts::from_preset(preset);
        let validity = ValidityConsts {
            half_width_m: t.half_width_m,
            min_turn_radius_m: t.min_turn_radius_m,
        };
        let mut pipeline = Self {
            preset: preset.clone(),
            backend,
            trace: Trace::default(),
            stage,
            n_envs,
            tile,
            n_max,
            raw_max,
            gen_scratch_len,
            gen_u32_len,
            lattice_len,
            relax,
            validity,
            scratch,
            thread_scratch,
            device: None,
        };
        if let Backend::Cuda { kernels, .. } = &pipeline.backend {
            let kernels = kernels.clone();
            let mut batch = pipeline.new_batch(0)?;
            let mut host = TrackState {
                s: &mut pipeline.scratch,
                batch: &mut batch,
                envs: 0..n_envs,
            };
            let mut bufs = HashMap::new();
            for id in buf::ALL {
                let bytes = host.bytes_mut(id).len();
                bufs.insert(id, kernels.device().alloc_zeroed(bytes)?);
            }
            // Every kernel is compiled (or read from the cache) and loaded now: loading is not
            // allowed while a stream captures, and `record_into` records into captures.
            let ops = pipeline.plan(0, 0);
            plan::load_cuda(&ops, &kernels)?;
            let loops = plan::count_loops(&ops);
            let counters = (0..loops)
                .map(|_| kernels.device().alloc_zeroed(4))
                .collect::<Result<Vec<_>>>()?;
            pipeline.device = Some(DeviceState {
                kernels,
                bufs,
                counters,
                graphs: true,
                graph: None,
            });
        }
        Ok(pipeline)
    }

    /// On the CUDA backend: copies `mask` into the device's mask buffer (the envs the next
    /// [`regenerate_on_device`](Self::regenerate_on_device) regenerates).
    pub fn set_device_mask(&mut self, mask: &[u8]) -> Result<()> {
        Launch::check_mask(mask, self.n_envs)?;
        let device = self.device_state()?;
        device
            .kernels
            .device()
            .upload(&device.bufs[&buf::MASK], mask)
    }

    /// On the CUDA backend: regenerates the envs of the device's mask in the device-resident
    /// batch, with no transfer (the recorded graph replayed; recorded first if `seed` or
    /// `env_base` changed), and waits for it. The device batch holds what the last
    /// `generate`/`regenerate` uploaded and produced; `generation` there is not advanced.
    pub fn regenerate_on_device(&mut self, seed: u64, env_base: u64) -> Result<()> {
        let ops = self.plan(seed, env_base);
        let device = self.device.as_mut().ok_or_else(not_on_device)?;
        self.trace = device.execute::<TrackState<'_>>(&ops, seed, env_base)?;
        Ok(())
    }

    /// On the CUDA backend: records a regenerate of the envs of the device's mask (at the
    /// device batch's generations) into the capture `stream` is already in — one trackgen did not
    /// begin, such as PyTorch's `torch.cuda.graph` — without ending it: its capture id stays the
    /// same, and its graph, once instantiated, regenerates the masked envs at each launch. The
    /// buffers and modules the nodes use are pinned to that graph, so dropping this pipeline
    /// while the graph lives frees nothing it reads. Fill the mask with
    /// [`set_device_mask`](Self::set_device_mask) (or by writing the device buffer) before
    /// launching the graph.
    pub fn record_into(&mut self, stream: &CudaStream, seed: u64, env_base: u64) -> Result<()> {
        let ops = self.plan(seed, env_base);
        let device = self.device.as_ref().ok_or_else(not_on_device)?;
        let buffers: Vec<&DeviceBuffer> = device.bufs.values().collect();
        plan::record_cuda(
            &ops,
            &device.kernels,
            device,
            &buffers,
            &device.counters,
            stream,
        )
    }

    /// On the CUDA backend: copies the device-resident batch into `batch` (after
    /// [`regenerate_on_device`](Self::regenerate_on_device) or a recorded graph's launches).
    pub fn download_device_batch(&self, batch: &mut TrackBatch) -> Result<()> {
        self.check_batch(batch)?;
        let device = self.device_state()?;
        for id in BATCH_IDS {
            let bytes = batch_bytes_mut(batch, id).expect("BATCH_IDS are batch buffers");
            device.kernels.device().download(&device.bufs[&id], bytes)?;
        }
        Ok(())
    }

    fn device_state(&self) -> Result<&DeviceState> {
        self.device.as_ref().ok_or_else(not_on_device)
    }

    /// On the CUDA backend: whether `generate` / `regenerate` record the plan into a CUDA graph
    /// (once per seed and env base; the default) or launch it eagerly, reading each condition
    /// word back. No effect on the host backends.
    pub fn set_graphs(&mut self, graphs: bool) {
        if let Some(d) = &mut self.device {
            d.graphs = graphs;
        }
    }

    /// The preset this pipeline was built for.
    pub fn preset(&self) -> &Preset {
        &self.preset
    }

    /// The number of envs.
    pub fn n_envs(&self) -> usize {
        self.n_envs
    }

    /// What the last `generate` / `regenerate` ran: kernels, CPU passes, loop windows.
    pub fn last_trace(&self) -> &Trace {
        &self.trace
    }

    /// The backend passes run on.
    pub fn backend(&self) -> &Backend {
        &self.backend
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
        self.run(seed, None, batch)
    }

    /// Regenerates exactly the envs with `mask[e] != 0`, each at its own `batch.generation[e]`.
    /// Unmasked envs' buffers are not written. An all-zero mask does no per-env work.
    pub fn regenerate(&mut self, seed: u64, mask: &[u8], batch: &mut TrackBatch) -> Result<()> {
        self.check_batch(batch)?;
        Launch::check_mask(mask, self.n_envs)?;
        self.run(seed, Some(mask), batch)
    }

    /// Runs the plan for the envs of `mask` (every env for `None`), one tile of envs at a time
    /// (the whole batch at once off the CPU). Each env's lane depends on nothing but its own
    /// data, and a lane outside the mask does nothing, so the tiles give the bytes one run would.
    ///
    /// The tiles run inside one entry into the pool (the plan's own entry then finds itself in
    /// it already): each entry from outside hands the work to a worker and puts the caller to
    /// sleep until it is done, and one such round trip per run instead of one per tile took 3%
    /// off the wall time of circuit's 4096 envs on one thread.
    fn run(&mut self, seed: u64, mask: Option<&[u8]>, batch: &mut TrackBatch) -> Result<()> {
        let launch = self.backend.launch().clone();
        launch.install(|| self.run_tiles(seed, mask, batch))
    }

    /// [`run`](Self::run)'s tiles, on the calling thread.
    fn run_tiles(&mut self, seed: u64, mask: Option<&[u8]>, batch: &mut TrackBatch) -> Result<()> {
        let mut trace = Trace::default();
        for start in (0..self.n_envs).step_by(self.tile) {
            let envs = start..(start + self.tile).min(self.n_envs);
            let lanes = envs.len();
            match mask {
                Some(mask) => self.scratch.mask[..lanes].copy_from_slice(&mask[envs.clone()]),
                None => self.scratch.mask[..lanes].fill(1),
            }
            // Past the last tile's envs, the scratch's lanes sit out.
            self.scratch.mask[lanes..].fill(0);
            let ops = self.plan(seed, batch.env_base + start as u64);
            let mut state = TrackState {
                s: &mut self.scratch,
                batch: &mut *batch,
                envs,
            };
            let tile_trace = match &mut self.device {
                None => plan::run(&ops, &self.backend, &mut state)?,
                Some(device) => device.run(&ops, seed, &mut state)?,
            };
            trace.add(tile_trace);
        }
        self.trace = trace;
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

    /// The plan of a masked run: for the envs of the mask, attempts (generate, resample, relax,
    /// validate) while any env is still invalid, at most `max_attempts`; then fallback, z-profile
    /// and inflation. `seed` and `env_base` are the run's parameters.
    fn plan<'a>(&self, seed: u64, env_base: u64) -> Vec<Op<TrackState<'a>>> {
        let t = &self.preset.track;
        // A run of the plan covers one tile of envs (the whole batch off the CPU).
        let lanes = self.tile as u32;
        let n_max = self.n_max;
        let pass = |kernel: Option<&'static str>,
                    name: &str,
                    params: Vec<u8>,
                    buffers: &[(BufId, Access)],
                    cpu: CpuPass<TrackState<'a>>| {
            Op::Pass(Pass {
                kernel,
                name: name.to_string(),
                params,
                buffers: buffers.to_vec(),
                lanes,
                cpu,
            })
        };
        let (r, w) = (Access::Read, Access::Write);
        let mut attempt_body = Vec::new();

        // The generator: one pass, or a set-up pass plus windows while any lane is active.
        let stage = self.stage.clone();
        let stage_name = stage.name().to_string();
        let kernel = stage.kernel();
        let common = GenerateCommon {
            seed,
            env_base,
            raw_max: self.raw_max as u32,
            gen_len: self.gen_scratch_len as u32,
            gen_u32_len: self.gen_u32_len as u32,
            pad: 0,
        };
        let mut gen_params = bytemuck::bytes_of(&common).to_vec();
        if let Some(k) = &kernel {
            gen_params.extend_from_slice(&k.params);
        }
        gen_params.resize(gen_params.len().div_ceil(8) * 8, 0);
        let (raw_max, gen_len, gen_u32_len) =
            (self.raw_max, self.gen_scratch_len, self.gen_u32_len);
        let windows = self.stage.max_windows();
        let generator_scratch = self.thread_scratch.clone();
        attempt_body.push(pass(
            kernel.as_ref().map(|k| k.name),
            &stage_name,
            gen_params.clone(),
            &[
                (buf::RAW, w),
                (buf::RAW_COUNT, w),
                (buf::GEN, w),
                (buf::GEN_U32, w),
                (buf::ACTIVE, r),
                (buf::ATTEMPT, r),
                (buf::GENERATION, r),
            ],
            Arc::new(move |st, launch| {
                let s = &mut *st.s;
                let run = |e: usize,
                           raw: &mut [Vec2],
                           raw_count: &mut u32,
                           scratch: &mut [f32],
                           scratch_u32: &mut [u32],
                           attempt: u8,
                           generation: u32| {
                    let stream = stream::with_attempt(stream::GENERATE, u32::from(attempt));
                    let mut rng = LaneRng::new(seed, env_base + e as u64, generation, stream);
                    let n = stage.run_lane(&mut rng, scratch, scratch_u32, raw);
                    *raw_count = n.min(raw.len()) as u32;
                };
                let lanes = (
                    s.raw.par_chunks_mut(raw_max),
                    s.raw_count.par_iter_mut(),
                    s.active.par_iter(),
                    s.attempt.par_iter(),
                    st.batch.generation[st.envs.clone()].par_iter(),
                );
                if windows == 0 {
                    launch.lanes_with_scratch(
                        lanes.into_par_iter(),
                        &generator_scratch.generator,
                        |(scratch, scratch_u32), e, (raw, raw_count, &act, &attempt, &gen)| {
                            if act != 0 {
                                run(e, raw, raw_count, scratch, scratch_u32, attempt, gen);
                            }
                        },
                    );
                    return;
                }
                let scratch = (
                    s.gen.par_chunks_mut(gen_len),
                    s.gen_u32.par_chunks_mut(gen_u32_len),
                );
                launch.lanes(
                    (lanes, scratch).into_par_iter(),
                    |e, ((raw, raw_count, &act, &attempt, &gen), (scratch, scratch_u32))| {
                        if act != 0 {
                            run(e, raw, raw_count, scratch, scratch_u32, attempt, gen);
                        }
                    },
                );
            }),
        ));
        if windows > 0 {
            attempt_body.push(pass(
                Some("tg_track_copy_flags"),
                "copy flags",
                params_bytes(&CountParams { n: lanes, pad: 0 }),
                &[(buf::ACTIVE, r), (buf::GEN_ACTIVE, w)],
                Arc::new(|st, _| st.s.gen_active.copy_from_slice(&st.s.active)),
            ));
            let stage = self.stage.clone();
            let window = pass(
                kernel.as_ref().and_then(|k| k.window),
                &stage_name,
                gen_params,
                &[
                    (buf::RAW, w),
                    (buf::RAW_COUNT, w),
                    (buf::GEN, w),
                    (buf::GEN_U32, w),
                    (buf::GEN_ACTIVE, w),
                ],
                Arc::new(move |st, launch| {
                    let s = &mut *st.s;
                    let lanes = (
                        s.raw.par_chunks_mut(raw_max),
                        s.raw_count.par_iter_mut(),
                        s.gen.par_chunks_mut(gen_len),
                        s.gen_u32.par_chunks_mut(gen_u32_len),
                        s.gen_active.par_iter_mut(),
                    );
                    launch.lanes(
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
                }),
            );
            attempt_body.extend(while_any(
                buf::GEN_ACTIVE,
                buf::COND_GENERATE,
                windows,
                vec![window],
            ));
        }

        // Resampling to the preset's spacing: constant, or by curvature.
        let spacing = t.spacing_m;
        let adaptive = (t.sampling == Sampling::Curvature).then_some(AdaptiveSpacing {
            min_spacing_m: spacing,
            max_spacing_m: t.max_spacing_m,
            sagitta_m: t.sagitta_m,
        });
        let resample_scratch = self.thread_scratch.clone();
        let copy = t.sampling == Sampling::Generator;
        attempt_body.push(pass(
            Some("tg_track_resample"),
            "resample",
            params_bytes(&ResampleParams {
                spacing_m: spacing,
                raw_max: raw_max as u32,
                n_max: n_max as u32,
                curvature: match t.sampling {
                    Sampling::Uniform => 0,
                    Sampling::Curvature => 1,
                    Sampling::Generator => 2,
                },
                max_spacing_m: t.max_spacing_m,
                sagitta_m: t.sagitta_m,
            }),
            &[
                (buf::RAW, r),
                (buf::RAW_COUNT, r),
                (buf::PTS, w),
                (buf::COUNT, w),
                (buf::ACTIVE, r),
                (buf::RESAMPLE, w),
            ],
            Arc::new(move |st, launch| {
                // The kernel takes its rows from the plan's per-env buffer; on the CPU each
                // thread reuses one set.
                let s = &mut *st.s;
                let lanes = (
                    s.raw.par_chunks(raw_max),
                    s.raw_count.par_iter(),
                    s.pts.par_chunks_mut(n_max),
                    s.count.par_iter_mut(),
                    s.active.par_iter(),
                );
                launch.lanes_with_scratch(
                    lanes.into_par_iter(),
                    &resample_scratch.resample,
                    |rows, _, (raw, &raw_count, pts, count, &act)| {
                        if act == 0 {
                            return;
                        }
                        let raw = &raw[..raw_count as usize];
                        if copy {
                            // The generator wrote the final points (at most `n_max`; the
                            // kernel's bound too).
                            let n = raw.len().min(pts.len());
                            pts[..n].copy_from_slice(&raw[..n]);
                            *count = n as u32;
                            return;
                        }
                        *count = match &adaptive {
                            None => resample_closed(raw, spacing, pts),
                            Some(rule) => resample_adaptive(raw, rule, pts, rows),
                        } as u32;
                    },
                );
            }),
        ));

        // Relaxation: a curve that already meets the constraints is not relaxed at all; the
        // others sweep in windows while any still violates them. Off (no windows) for
        // generators valid by construction: nothing would read the flags.
        let relax_windows = self.preset.relax.max_windows;
        if relax_windows > 0 {
            let consts = self.relax;
            let sweeps = self.preset.relax.sweeps_per_window;
            let relax_params = params_bytes(&RelaxParams {
                separation_m: consts.separation_m,
                converged_separation_m: consts.converged_separation_m,
                max_curvature: consts.max_curvature,
                smooth_curvature: consts.smooth_curvature,
                smoothing: consts.smoothing,
                neighbour_arc_m: consts.neighbour_arc_m,
                n_max: n_max as u32,
                sweeps,
            });
            let relax_scratch = self.thread_scratch.clone();
            attempt_body.push(pass(
                Some("tg_track_relax_check"),
                "relax check",
                relax_params.clone(),
                &[
                    (buf::PTS, r),
                    (buf::COUNT, r),
                    (buf::PAIR, w),
                    (buf::RELAX_ACTIVE, w),
                    (buf::ACTIVE, r),
                ],
                Arc::new(move |st, launch| {
                    // Per-thread scratch on the CPU, as in the validity pass (the kernel uses the
                    // per-env `pair` rows).
                    let s = &mut *st.s;
                    let lanes = (
                        s.pts.par_chunks(n_max),
                        s.count.par_iter(),
                        s.relax_active.par_iter_mut(),
                        s.active.par_iter(),
                    );
                    launch.lanes_with_scratch(
                        lanes.into_par_iter(),
                        &relax_scratch.relax,
                        |disp, _, (pts, &count, ra, &act)| {
                            let mut scratch = RelaxScratch { disp };
                            *ra = if act != 0 {
                                violation(&pts[..count as usize], &consts, &mut scratch, false)
                            } else {
                                0
                            };
                        },
                    );
                }),
            ));
            let window = pass(
                Some("tg_track_relax_window"),
                "relax window",
                relax_params,
                &[
                    (buf::PTS, w),
                    (buf::COUNT, r),
                    (buf::PAIR, w),
                    (buf::RELAX_ACTIVE, w),
                ],
                Arc::new(move |st, launch| {
                    let s = &mut *st.s;
                    let lanes = (
                        s.pts.par_chunks_mut(n_max),
                        s.count.par_iter(),
                        s.pair.par_chunks_mut(2 * n_max),
                        s.relax_active.par_iter_mut(),
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
                }),
            );
            attempt_body.extend(while_any(
                buf::RELAX_ACTIVE,
                buf::COND_RELAX,
                relax_windows,
                vec![window],
            ));
        }

        // Validity; an env that fails stays active for the next attempt.
        let consts = self.validity;
        let max_attempts = t.max_attempts;
        let thread_scratch = self.thread_scratch.clone();
        attempt_body.push(pass(
            Some("tg_track_validate"),
            "validate",
            params_bytes(&ValidateParams {
                half_width_m: consts.half_width_m,
                min_turn_radius_m: consts.min_turn_radius_m,
                n_max: n_max as u32,
                max_attempts,
            }),
            &[
                (buf::PTS, r),
                (buf::COUNT, r),
                (buf::ARCS, w),
                (buf::PAIR, w),
                (buf::CHUNK_BOXES, w),
                (buf::SEG_BOXES, w),
                (buf::ACTIVE, w),
                (buf::ATTEMPT, w),
                (buf::OK, w),
            ],
            Arc::new(move |st, launch| {
                // The kernel takes its scratch from the plan's per-env buffers (arcs, pair,
                // chunk and segment boxes); on the CPU each thread reuses one set instead, which
                // stays in cache (nothing in it outlives a lane).
                let s = &mut *st.s;
                let lanes = (
                    s.pts.par_chunks(n_max),
                    s.count.par_iter(),
                    s.active.par_iter_mut(),
                    s.attempt.par_iter_mut(),
                    s.ok.par_iter_mut(),
                );
                launch.lanes_with_scratch(
                    lanes.into_par_iter(),
                    &thread_scratch.validity,
                    |b, _, (pts, &count, act, attempt, ok)| {
                        if *act == 0 {
                            return;
                        }
                        let mut scratch = b.scratch();
                        *ok = u8::from(is_valid(&pts[..count as usize], &consts, &mut scratch));
                        *attempt += 1;
                        *act = u8::from(*ok == 0 && u32::from(*attempt) < max_attempts);
                    },
                );
            }),
        ));

        let mut body = vec![pass(
            Some("tg_track_begin"),
            "begin",
            params_bytes(&CountParams { n: lanes, pad: 0 }),
            &[
                (buf::MASK, r),
                (buf::ACTIVE, w),
                (buf::ATTEMPT, w),
                (buf::OK, w),
            ],
            Arc::new(|st, _| {
                let s = &mut *st.s;
                s.active.copy_from_slice(&s.mask);
                s.attempt.fill(0);
                s.ok.fill(0);
            }),
        )];
        body.extend(while_any(
            buf::ACTIVE,
            buf::COND_ATTEMPT,
            max_attempts,
            attempt_body,
        ));

        // Envs that failed every attempt get the fallback circle.
        let (scale, radius) = (t.scale_m, t.min_turn_radius_m);
        body.push(pass(
            Some("tg_track_fallback"),
            "fallback",
            params_bytes(&FallbackParams {
                scale_m: scale,
                min_turn_radius_m: radius,
                spacing_m: spacing,
                n_max: n_max as u32,
            }),
            &[(buf::PTS, w), (buf::COUNT, w), (buf::OK, r), (buf::MASK, r)],
            Arc::new(move |st, launch| {
                let s = &mut *st.s;
                let lanes = (
                    s.pts.par_chunks_mut(n_max),
                    s.count.par_iter_mut(),
                    s.ok.par_iter(),
                    s.mask.par_iter(),
                );
                launch.lanes(lanes.into_par_iter(), |_, (pts, count, &ok, &m)| {
                    if m == 0 || ok != 0 {
                        return;
                    }
                    *count = fallback_circle(scale, radius, spacing, pts) as u32;
                });
            }),
        ));

        // The z-profile.
        let zp = self.preset.zprofile.clone();
        let lattice_len = self.lattice_len;
        body.push(pass(
            Some("tg_track_zprofile"),
            "zprofile",
            params_bytes(&ZProfileKernelParams {
                seed,
                env_base,
                kind: zp.kind as u32,
                amplitude_m: zp.amplitude_m,
                max_grade: zp.max_grade,
                knots: zp.knots,
                n_max: n_max as u32,
                lattice_len: lattice_len as u32,
            }),
            &[
                (buf::PTS, r),
                (buf::COUNT, r),
                (buf::ARCS, w),
                (buf::Z, w),
                (buf::LATTICE, w),
                (buf::MASK, r),
                (buf::GENERATION, r),
            ],
            Arc::new(move |st, launch| {
                let s = &mut *st.s;
                let lanes = (
                    s.pts.par_chunks(n_max),
                    s.count.par_iter(),
                    s.arcs.par_chunks_mut(n_max),
                    s.z.par_chunks_mut(n_max),
                    s.lattice.par_chunks_mut(lattice_len),
                    s.mask.par_iter(),
                    st.batch.generation[st.envs.clone()].par_iter(),
                );
                launch.lanes(
                    lanes.into_par_iter(),
                    |e, (pts, &count, arclen, z, lattice, &m, &generation)| {
                        if m == 0 {
                            return;
                        }
                        let n = count as usize;
                        if zp.kind == ZKind::Flat {
                            // Flat heights read no arc lengths and draw nothing.
                            z[..n].fill(0.0);
                            return;
                        }
                        let pts = &pts[..n];
                        let mut total = 0.0f32;
                        for i in 0..n {
                            arclen[i] = total;
                            total += super::geometry::dist(pts[i], pts[(i + 1) % n]);
                        }
                        let mut rng =
                            LaneRng::new(seed, env_base + e as u64, generation, stream::ZPROFILE);
                        profile_lane(&zp, &mut rng, &arclen[..n], total, lattice, &mut z[..n]);
                    },
                );
            }),
        ));

        // Inflation into the batch.
        let hw = t.half_width_m;
        let max_attempts_u8 = max_attempts as u8;
        body.push(pass(
            Some("tg_track_inflate"),
            "inflate",
            params_bytes(&InflateParams {
                half_width_m: hw,
                max_attempts,
                n_max: n_max as u32,
                pad: 0,
            }),
            &[
                (buf::CENTER, w),
                (buf::OUTER, w),
                (buf::INNER, w),
                (buf::TANGENT, w),
                (buf::NORMAL, w),
                (buf::ARCLEN, w),
                (buf::COUNT_OUT, w),
                (buf::LENGTH, w),
                (buf::VALID, w),
                (buf::ATTEMPTS, w),
                (buf::PTS, r),
                (buf::Z, r),
                (buf::COUNT, r),
                (buf::OK, r),
                (buf::ATTEMPT, r),
                (buf::MASK, r),
            ],
            Arc::new(move |st, launch| {
                let (s, batch, envs) = (&*st.s, &mut *st.batch, st.envs.clone());
                let rows = envs.start * n_max..envs.end * n_max;
                let points = (
                    batch.center[rows.clone()].par_chunks_mut(n_max),
                    batch.outer[rows.clone()].par_chunks_mut(n_max),
                    batch.inner[rows.clone()].par_chunks_mut(n_max),
                    batch.tangent[rows.clone()].par_chunks_mut(n_max),
                    batch.normal[rows.clone()].par_chunks_mut(n_max),
                    batch.arclen[rows].par_chunks_mut(n_max),
                );
                let scalars = (
                    batch.count[envs.clone()].par_iter_mut(),
                    batch.length[envs.clone()].par_iter_mut(),
                    batch.valid[envs.clone()].par_iter_mut(),
                    batch.attempts[envs].par_iter_mut(),
                );
                let inputs = (
                    s.pts.par_chunks(n_max),
                    s.z.par_chunks(n_max),
                    s.count.par_iter(),
                    s.ok.par_iter(),
                    s.attempt.par_iter(),
                    s.mask.par_iter(),
                );
                launch.lanes((points, scalars, inputs).into_par_iter(), |_, (p, o, i)| {
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
                            stale: *count_out as usize,
                        },
                    );
                    *count_out = count;
                    *valid = ok;
                    *attempts = if ok != 0 { attempt } else { max_attempts_u8 };
                });
            }),
        ));

        vec![
            Op::Any {
                flags: buf::MASK,
                cond: buf::COND_MASK,
            },
            Op::If {
                cond: buf::COND_MASK,
                body,
            },
        ]
    }
}

/// The bounded loop of a plan over per-env flags: `cond = any(flags)`, then `body` repeated
/// while `cond` is set, at most `max_windows` times, each window recomputing `cond` from the
/// flags the body updated.
fn while_any<S>(flags: BufId, cond: BufId, max_windows: u32, mut body: Vec<Op<S>>) -> [Op<S>; 2] {
    body.push(Op::Any { flags, cond });
    [
        Op::Any { flags, cond },
        Op::While {
            cond,
            max_windows,
            body,
        },
    ]
}

/// The pipeline's buffers as plan buffer ids: the scratch, the batch, and the condition words.
mod buf {
    use crate::exec::plan::BufId;

    /// Every buffer of the state.
    pub const ALL: [BufId; 34] = [
        RAW,
        RAW_COUNT,
        GEN,
        GEN_U32,
        PTS,
        COUNT,
        Z,
        ARCS,
        PAIR,
        CHUNK_BOXES,
        SEG_BOXES,
        RESAMPLE,
        LATTICE,
        ACTIVE,
        GEN_ACTIVE,
        RELAX_ACTIVE,
        ATTEMPT,
        OK,
        MASK,
        COND_MASK,
        COND_ATTEMPT,
        COND_GENERATE,
        COND_RELAX,
        CENTER,
        OUTER,
        INNER,
        TANGENT,
        NORMAL,
        ARCLEN,
        COUNT_OUT,
        LENGTH,
        VALID,
        ATTEMPTS,
        GENERATION,
    ];

    pub const RAW: BufId = BufId(0);
    pub const RAW_COUNT: BufId = BufId(1);
    pub const GEN: BufId = BufId(2);
    pub const GEN_U32: BufId = BufId(3);
    pub const PTS: BufId = BufId(4);
    pub const COUNT: BufId = BufId(5);
    pub const Z: BufId = BufId(6);
    pub const ARCS: BufId = BufId(7);
    pub const PAIR: BufId = BufId(8);
    pub const CHUNK_BOXES: BufId = BufId(9);
    pub const SEG_BOXES: BufId = BufId(10);
    pub const RESAMPLE: BufId = BufId(24);
    pub const LATTICE: BufId = BufId(13);
    pub const ACTIVE: BufId = BufId(14);
    pub const GEN_ACTIVE: BufId = BufId(15);
    pub const RELAX_ACTIVE: BufId = BufId(16);
    pub const ATTEMPT: BufId = BufId(17);
    pub const OK: BufId = BufId(18);
    pub const MASK: BufId = BufId(19);
    pub const COND_MASK: BufId = BufId(20);
    pub const COND_ATTEMPT: BufId = BufId(21);
    pub const COND_GENERATE: BufId = BufId(22);
    pub const COND_RELAX: BufId = BufId(23);
    pub const CENTER: BufId = BufId(32);
    pub const OUTER: BufId = BufId(33);
    pub const INNER: BufId = BufId(34);
    pub const TANGENT: BufId = BufId(35);
    pub const NORMAL: BufId = BufId(36);
    pub const ARCLEN: BufId = BufId(37);
    pub const COUNT_OUT: BufId = BufId(38);
    pub const LENGTH: BufId = BufId(39);
    pub const VALID: BufId = BufId(40);
    pub const ATTEMPTS: BufId = BufId(41);
    pub const GENERATION: BufId = BufId(42);
}

/// What a run of the plan works on: the pipeline's scratch and the caller's batch, whose envs
/// `envs` the scratch's lanes stand for (a tile of it on the CPU, all of it elsewhere: the
/// device paths read and write the whole batch).
struct TrackState<'a> {
    s: &'a mut Scratch,
    batch: &'a mut TrackBatch,
    envs: Range<usize>,
}

/// Envs per thread in one run of the plan on the CPU: a pipeline runs its batch in tiles of
/// this many envs per thread of its launch. A 4096-env batch's scratch and outputs (~160 MB
/// and 64 MB at N_max 256) do not stay in cache from one pass to the next; a tile's largely
/// do (`circuit`, 4096 envs, 1 thread: 74–76k tracks/s untiled, 87–89k in tiles of 512; 256
/// and 1024 measured slower).
pub const TILE_ENVS_PER_THREAD: usize = 512;

impl BufferSet for TrackState<'_> {
    fn bytes_mut(&mut self, id: BufId) -> &mut [u8] {
        use bytemuck::cast_slice_mut as bytes;
        let (s, b) = (&mut *self.s, &mut *self.batch);
        match id {
            buf::RAW => bytes(&mut s.raw),
            buf::RAW_COUNT => bytes(&mut s.raw_count),
            buf::GEN => bytes(&mut s.gen),
            buf::GEN_U32 => bytes(&mut s.gen_u32),
            buf::PTS => bytes(&mut s.pts),
            buf::COUNT => bytes(&mut s.count),
            buf::Z => bytes(&mut s.z),
            buf::ARCS => bytes(&mut s.arcs),
            buf::PAIR => bytes(&mut s.pair),
            buf::CHUNK_BOXES => bytes(&mut s.chunk_boxes),
            buf::SEG_BOXES => bytes(&mut s.seg_boxes),
            buf::RESAMPLE => bytes(&mut s.resample),
            buf::LATTICE => bytes(&mut s.lattice),
            buf::ACTIVE => &mut s.active,
            buf::GEN_ACTIVE => &mut s.gen_active,
            buf::RELAX_ACTIVE => &mut s.relax_active,
            buf::ATTEMPT => &mut s.attempt,
            buf::OK => &mut s.ok,
            buf::MASK => &mut s.mask,
            buf::COND_MASK => bytes(&mut s.words[0..1]),
            buf::COND_ATTEMPT => bytes(&mut s.words[1..2]),
            buf::COND_GENERATE => bytes(&mut s.words[2..3]),
            buf::COND_RELAX => bytes(&mut s.words[3..4]),
            other => batch_bytes_mut(b, other)
                .unwrap_or_else(|| panic!("the track pipeline has no buffer {}", other.0)),
        }
    }
}

/// The bytes of the batch buffer `id`, or `None` for an id that is not the batch's.
fn batch_bytes_mut(b: &mut TrackBatch, id: BufId) -> Option<&mut [u8]> {
    use bytemuck::cast_slice_mut as bytes;
    Some(match id {
        buf::CENTER => bytes(&mut b.center),
        buf::OUTER => bytes(&mut b.outer),
        buf::INNER => bytes(&mut b.inner),
        buf::TANGENT => bytes(&mut b.tangent),
        buf::NORMAL => bytes(&mut b.normal),
        buf::ARCLEN => bytes(&mut b.arclen),
        buf::COUNT_OUT => bytes(&mut b.count),
        buf::LENGTH => bytes(&mut b.length),
        buf::VALID => &mut b.valid,
        buf::ATTEMPTS => &mut b.attempts,
        buf::GENERATION => bytes(&mut b.generation),
        _ => return None,
    })
}

/// The parameters every generator kernel starts with (`tg_generate_common`).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GenerateCommon {
    /// The run's seed.
    pub seed: u64,
    /// The global index of lane 0.
    pub env_base: u64,
    /// Raw points per env.
    pub raw_max: u32,
    /// `f32` scratch words per env.
    pub gen_len: u32,
    /// `u32` scratch words per env.
    pub gen_u32_len: u32,
    /// Zero.
    pub pad: u32,
}

/// `tg_count_params`: a lane count (the flag-copying kernels).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct CountParams {
    n: u32,
    pad: u32,
}

/// `tg_resample_params`: `curvature` 0 for constant spacing, 1 for curvature-adaptive spacing
/// (then `max_spacing_m` and `sagitta_m` apply), 2 for the generator's own points (copied).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ResampleParams {
    spacing_m: f32,
    raw_max: u32,
    n_max: u32,
    curvature: u32,
    max_spacing_m: f32,
    sagitta_m: f32,
}

/// `tg_relax_params`: [`RelaxConsts`] in field order, then `n_max` and the sweeps per window.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct RelaxParams {
    separation_m: f32,
    converged_separation_m: f32,
    max_curvature: f32,
    smooth_curvature: f32,
    smoothing: f32,
    neighbour_arc_m: f32,
    n_max: u32,
    sweeps: u32,
}

/// `tg_validate_params`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ValidateParams {
    half_width_m: f32,
    min_turn_radius_m: f32,
    n_max: u32,
    max_attempts: u32,
}

/// `tg_fallback_params`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct FallbackParams {
    scale_m: f32,
    min_turn_radius_m: f32,
    spacing_m: f32,
    n_max: u32,
}

/// `tg_zprofile_params` (`kind`: the index of [`crate::preset::ZKind`] in declaration order).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct ZProfileKernelParams {
    seed: u64,
    env_base: u64,
    kind: u32,
    amplitude_m: f32,
    max_grade: f32,
    knots: u32,
    n_max: u32,
    lattice_len: u32,
}

/// `tg_inflate_params`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct InflateParams {
    half_width_m: f32,
    max_attempts: u32,
    n_max: u32,
    pad: u32,
}

/// The slack of the validity checks, re-exported for tests and docs.
pub const VALIDITY_SLACK: f32 = SLACK;
