//! Generation and data: the track and gate pipelines, corpora on disk, scenes and ray casts.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use trackgen::course::{Courses, GateBatch, Mode};
use trackgen::exec::plan::{Backend, Device};
use trackgen::scene::{self, RayEnvs, RayOutputs, SceneFile, ScenePool, ScenePreset};
use trackgen::track::{generators, TrackBatch};

use crate::array::{Array, Dtype};
use crate::errors::IntoPy;
use crate::input::{self, Dim};
use crate::{device_arg, launch, preset_arg, views};

/// Moves the masked envs' generation counters to `generation + 1` (wrapping).
fn advance(generation: &mut [u32], mask: &[u8]) {
    for (g, &m) in generation.iter_mut().zip(mask) {
        if m != 0 {
            *g = g.wrapping_add(1);
        }
    }
}

/// A batched pipeline and the batch it writes: `Pipeline("track", 4096, seed=7)` for tracks;
/// its Python subclass `trackgen.GatePipeline` (`_gates = True`) for the gate courses of a preset
/// with a `[gates]` section. Both are this one type over `trackgen::course::Courses`.
///
/// `arrays` holds zero-copy views of every buffer (tracks: `center [E, N_max, 3]`, ...,
/// `count [E]`, `valid [E]`, `generation [E]`; gates: `pos [E, G, 3]`, `quat [E, G, 4]`
/// (`[x, y, z, w]`), `size [E, G, 2]`, `count`, `valid`, `attempts`, `generation` `[E]`, and
/// `thickness_m`); `generate` and `regenerate` write them in place, so a view taken once always
/// shows the current batch. `device` is where the track pipeline runs: `"cpu"`, `"emulated"`
/// (the CUDA kernels compiled for the host) or `"cuda[:N]"`: every device writes the same bytes.
#[pyclass(module = "trackgen", name = "Pipeline", subclass)]
pub struct Pipeline {
    courses: Courses,
    seed: u64,
    device: Device,
    source: String,
}

#[pymethods]
impl Pipeline {
    /// Builds the pipeline for `n_envs` envs of `preset` on `device` and generates them at
    /// `generation`: tracks, or gate courses when called as `GatePipeline` (a class whose
    /// `_gates` is true). `env_base` is the global index of env 0 (a shard); `threads` None uses
    /// every core.
    #[new]
    #[classmethod]
    #[pyo3(
        signature = (preset, n_envs, *, seed = 0, generation = 0, env_base = 0, threads = None, device = "cpu"),
        text_signature = "(preset, n_envs, *, seed=0, generation=0, env_base=0, threads=None, device=\"cpu\")"
    )]
    #[allow(clippy::too_many_arguments)] // Keyword arguments.
    fn new(
        cls: &Bound<'_, PyType>,
        preset: &Bound<'_, PyAny>,
        n_envs: usize,
        seed: u64,
        generation: u32,
        env_base: u64,
        threads: Option<usize>,
        device: &str,
    ) -> PyResult<Self> {
        let mode = if cls.getattr("_gates")?.is_truthy()? {
            Mode::Gates
        } else {
            Mode::Track
        };
        let preset = preset_arg(preset)?;
        let launch = launch(threads)?;
        let device = device_arg(device)?;
        cls.py()
            .detach(|| {
                let backend = Backend::new(device, launch)?;
                let stage = generators::from_preset(&preset);
                let mut courses =
                    Courses::with_backend(mode, &preset, stage, n_envs, env_base, backend)?;
                courses.generate(seed, generation)?;
                Ok(Self {
                    courses,
                    seed,
                    device,
                    source: preset.source.clone(),
                })
            })
            .py_err()
    }

    /// Whether this class builds gate courses (true in the `GatePipeline` subclass).
    #[classattr]
    fn _gates() -> bool {
        false
    }

    /// Regenerates every env at `generation` (GIL released).
    #[pyo3(signature = (generation = 0))]
    fn generate(&mut self, py: Python<'_>, generation: u32) -> PyResult<()> {
        let (courses, seed) = (&mut self.courses, self.seed);
        py.detach(|| courses.generate(seed, generation)).py_err()
    }

    /// Regenerates the envs whose `mask` entry is nonzero (uint8 or bool `[E]`): with `advance`
    /// at generation + 1, else their current generation again (the same bytes). Unmasked envs
    /// keep every byte (GIL released).
    #[pyo3(signature = (mask, advance = true))]
    fn regenerate(
        &mut self,
        py: Python<'_>,
        mask: &Bound<'_, PyAny>,
        advance: bool,
    ) -> PyResult<()> {
        let mask = input::mask(mask, "mask", self.courses.generation().len())?;
        if advance {
            self::advance(self.courses.generation_mut(), &mask);
        }
        let (courses, seed) = (&mut self.courses, self.seed);
        py.detach(|| courses.regenerate(seed, &mask)).py_err()
    }

    /// Every buffer of the batch as a read-only zero-copy view, by name.
    #[getter]
    fn arrays<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let owner = slf.clone().into_any().unbind();
        match &slf.borrow().courses {
            Courses::Track { batch, .. } => views::track(slf.py(), &owner, batch),
            Courses::Gates { batch, .. } => views::gates(slf.py(), &owner, batch),
        }
    }

    /// The number of envs.
    #[getter]
    fn n_envs(&self) -> usize {
        self.courses.generation().len()
    }

    /// Points per env (the per-point arrays' second dimension); gates per env, `G`, in a
    /// `GatePipeline`.
    #[getter]
    fn n_max(&self) -> usize {
        match &self.courses {
            Courses::Track { batch, .. } => batch.n_max,
            Courses::Gates { batch, .. } => batch.g_max,
        }
    }

    /// The seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// Where the track pipeline runs: `"cpu"`, `"emulated"` or `"cuda:N"`.
    #[getter]
    fn device(&self) -> String {
        self.device.to_string()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.borrow();
        Ok(format!(
            "trackgen.{}({:?}, n_envs={}, seed={}, device={:?})",
            slf.get_type().name()?,
            this.source,
            this.n_envs(),
            this.seed,
            this.device()
        ))
    }
}

/// Runs `work` with the GIL released, checking for Ctrl-C each time it calls `poll`: a pending
/// `KeyboardInterrupt` unwinds out of `work` (its temporary outputs are removed by their
/// destructors) and is raised here.
fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&mut dyn FnMut()) -> trackgen::Result<T> + Send,
) -> PyResult<T> {
    struct Interrupted(PyErr);
    let result = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let mut poll = || {
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    // `resume_unwind` skips the panic hook: nothing is printed.
                    resume_unwind(Box::new(Interrupted(e)));
                }
            };
            work(&mut poll)
        }))
    });
    match result {
        Ok(r) => r.py_err(),
        Err(payload) => match payload.downcast::<Interrupted>() {
            Ok(i) => Err(i.0),
            Err(other) => resume_unwind(other),
        },
    }
}

/// Writes the corpus of `(preset, seed, generation)` into the new directory `out` and returns
/// its manifest (a dict). Envs `0..n_envs`, or the shard `env_range = (a, b)` (then `n_envs`
/// may be omitted). The same arguments write the same bytes as `trackgen generate`, on every
/// `device` (`"cpu"`, `"emulated"`, `"cuda[:N]"`). Ctrl-C stops it between chunks with
/// KeyboardInterrupt and leaves nothing at `out`.
#[pyfunction]
#[pyo3(signature = (out, preset = None, n_envs = None, *, seed = 0, generation = 0, env_range = None, chunk_envs = 4096, threads = None, device = "cpu"))]
#[allow(clippy::too_many_arguments)] // The keyword arguments of `trackgen generate`.
fn write_corpus<'py>(
    py: Python<'py>,
    out: PathBuf,
    preset: Option<&Bound<'py, PyAny>>,
    n_envs: Option<u64>,
    seed: u64,
    generation: u32,
    env_range: Option<(u64, u64)>,
    chunk_envs: usize,
    threads: Option<usize>,
    device: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let preset = match preset {
        Some(p) => preset_arg(p)?,
        None => trackgen::preset::Preset::default_preset(),
    };
    let range = match (env_range, n_envs) {
        (Some((a, b)), n) => {
            if let Some(n) = n.filter(|&n| n < b) {
                return Err(PyValueError::new_err(format!(
                    "n_envs = {n} with env_range = ({a}, {b}): expected n_envs >= {b} (the whole corpus)"
                )));
            }
            a..b
        }
        (None, Some(n)) => 0..n,
        (None, None) => {
            return Err(PyValueError::new_err(
                "write_corpus: expected n_envs or env_range",
            ))
        }
    };
    let launch = launch(threads)?;
    let device = device_arg(device)?;
    let manifest = interruptible(py, |poll| {
        trackgen::corpus::write_corpus_with(
            &out,
            &preset,
            seed,
            generation,
            range,
            chunk_envs,
            &trackgen::corpus::CorpusExtras::default(),
            Backend::new(device, launch)?,
            // The last report comes after the rename: a complete corpus is not interrupted.
            &mut |p| {
                if p.done_envs < p.total_envs {
                    poll()
                }
            },
        )
    })?;
    json_to_py(py, &manifest)
}

/// Merges shard corpora (`write_corpus(..., env_range=...)` outputs of one preset, seed and
/// generation; any order) into the new corpus directory `out` and returns its manifest (a dict),
/// as `trackgen merge`: byte-identical to writing the whole range at once. ValueError naming the
/// shard when shards disagree or leave a gap or an overlap; nothing is left at `out` on error or
/// Ctrl-C (KeyboardInterrupt, checked between chunks of `chunk_rows` rows).
#[pyfunction]
#[pyo3(signature = (out, shards, *, chunk_rows = 4096))]
fn merge_corpora<'py>(
    py: Python<'py>,
    out: PathBuf,
    shards: Vec<PathBuf>,
    chunk_rows: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let manifest = interruptible(py, |poll| {
        trackgen::corpus::merge_corpora(&out, &shards, chunk_rows, &mut |p| {
            if p.done_envs < p.total_envs {
                poll()
            }
        })
    })?;
    json_to_py(py, &manifest)
}

fn json_to_py<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| PyValueError::new_err(format!("cannot encode the manifest: {e}")))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Rows read from a corpus: a track or a gate batch (immutable; its views are read-only).
#[pyclass(module = "trackgen", frozen)]
struct Rows {
    batch: RowsBatch,
}

enum RowsBatch {
    Track(TrackBatch),
    Gates(GateBatch),
}

/// A corpus on disk, validated like the Rust reader: `Corpus("corpus")`.
#[pyclass(module = "trackgen", name = "Corpus", frozen)]
pub struct Corpus {
    inner: trackgen::corpus::Corpus,
}

#[pymethods]
impl Corpus {
    /// Opens and validates the corpus directory `dir` (manifest, every array's header).
    #[new]
    fn new(dir: PathBuf) -> PyResult<Self> {
        Ok(Self {
            inner: trackgen::corpus::Corpus::open(&dir).py_err()?,
        })
    }

    /// The manifest, a dict.
    #[getter]
    fn manifest<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, self.inner.manifest())
    }

    /// Rows in every array.
    #[getter]
    fn n_envs(&self) -> u64 {
        self.inner.manifest().n_envs()
    }

    /// `"gates"` or `"track"`.
    #[getter]
    fn kind(&self) -> &'static str {
        if self.inner.is_gates() {
            "gates"
        } else {
            "track"
        }
    }

    /// Reads rows `start..stop` (default all) as a dict of read-only views with the names and
    /// dtypes of `Pipeline.arrays` (or `GatePipeline.arrays`); `count` is uint32.
    #[pyo3(signature = (start = 0, stop = None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        start: u64,
        stop: Option<u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let stop = stop.unwrap_or_else(|| self.inner.manifest().n_envs());
        let inner = &self.inner;
        let batch = py
            .detach(|| {
                if inner.is_gates() {
                    inner.read_gate_rows(start..stop).map(RowsBatch::Gates)
                } else {
                    inner.read_rows(start..stop).map(RowsBatch::Track)
                }
            })
            .py_err()?;
        let rows = Bound::new(py, Rows { batch })?;
        let owner = rows.clone().into_any().unbind();
        match &rows.get().batch {
            RowsBatch::Track(t) => views::track(py, &owner, t),
            RowsBatch::Gates(g) => views::gates(py, &owner, g),
        }
    }

    /// Checks every array file's SHA-256 against the manifest (ValueError naming the file).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        let inner = &self.inner;
        py.detach(|| inner.verify_checksums()).py_err()
    }

    fn __repr__(&self) -> String {
        format!(
            "trackgen.Corpus({:?}, kind={:?}, n_envs={})",
            self.inner.dir().display().to_string(),
            self.kind(),
            self.n_envs()
        )
    }
}

enum SceneSource {
    Pool(ScenePool),
    File(SceneFile),
}

/// Per-env SDF scenes in one shared voxel-DAG pool, and batched ray casts against them.
#[pyclass(module = "trackgen", name = "Scenes", frozen)]
pub struct Scenes {
    source: SceneSource,
}

impl Scenes {
    fn view(&self) -> scene::PoolView<'_> {
        match &self.source {
            SceneSource::Pool(p) => p.view(),
            SceneSource::File(f) => f.view(),
        }
    }
}

/// The result buffers of a ray cast (their views are read-only).
#[pyclass(module = "trackgen", frozen)]
struct CastResult {
    distance: Vec<f32>,
    hit: Vec<u8>,
    steps: Vec<u32>,
}

#[pymethods]
impl Scenes {
    /// Generates envs `0..n_envs` of the scene preset (`trackgen.scene_presets()` or a TOML
    /// path) at `resolution` voxels per side (default: the preset's). Ctrl-C stops it between
    /// batches of envs with KeyboardInterrupt.
    #[staticmethod]
    #[pyo3(signature = (preset, n_envs, *, seed = 0, generation = 0, resolution = None, threads = None))]
    fn generate(
        py: Python<'_>,
        preset: &str,
        n_envs: u64,
        seed: u64,
        generation: u32,
        resolution: Option<u32>,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let preset = ScenePreset::load(preset).py_err()?;
        let launch = launch(threads)?;
        let pool = interruptible(py, |poll| {
            scene::build_preset_with_progress(
                &preset,
                seed,
                generation,
                n_envs,
                resolution,
                &launch,
                &mut |_, _| poll(),
            )
        })?;
        Ok(Self {
            source: SceneSource::Pool(pool),
        })
    }

    /// Maps and validates a scene file (as `trackgen scene` writes).
    #[staticmethod]
    fn open(path: PathBuf) -> PyResult<Self> {
        Ok(Self {
            source: SceneSource::File(SceneFile::open(&path).py_err()?),
        })
    }

    /// Writes the scenes as a scene file at `path` (atomically); returns its size in bytes.
    fn write(&self, py: Python<'_>, path: PathBuf) -> PyResult<u64> {
        py.detach(|| scene::write_scene_file(&path, &self.view()))
            .py_err()
    }

    /// The number of envs.
    #[getter]
    fn n_envs(&self) -> usize {
        self.view().envs().len()
    }

    /// Each env's free spawn point `[x, y, z]`, metres (a list of tuples).
    #[getter]
    fn spawn(&self) -> Vec<(f32, f32, f32)> {
        self.view()
            .envs()
            .iter()
            .map(|e| (e.spawn[0], e.spawn[1], e.spawn[2]))
            .collect()
    }

    /// Voxels per side of every env's grid.
    #[getter]
    fn resolution(&self) -> u32 {
        self.view().info().resolution
    }

    /// Casts rays against their envs' scenes (GIL released). `origins` and `directions` are
    /// float32 `[E, K, 3]` (ray `k` of env `e`) or `[N, 3]` with `env_of_ray` uint32 `[N]`.
    /// Returns `(distance, hit, steps)` shaped like the rays: metres (`no_hit_value`, default
    /// `max_distance`, on a miss), 1 hit / 0 miss / 2 budget exhausted, evaluations.
    #[pyo3(signature = (origins, directions, *, max_distance, no_hit_value = None, max_steps = None, env_of_ray = None, threads = None))]
    #[allow(clippy::too_many_arguments)] // Keyword arguments of one call.
    fn cast_rays<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        max_distance: f32,
        no_hit_value: Option<f32>,
        max_steps: Option<u32>,
        env_of_ray: Option<&Bound<'py, PyAny>>,
        threads: Option<usize>,
    ) -> PyResult<(Bound<'py, Array>, Bound<'py, Array>, Bound<'py, Array>)> {
        let ray_shape: &[Dim] = if env_of_ray.is_some() {
            &[Dim::Any, Dim::Is(3)]
        } else {
            &[Dim::Any, Dim::Any, Dim::Is(3)]
        };
        let (o, shape) = input::read::<[f32; 3]>(origins, "origins", input::F32, ray_shape)?;
        let mut dir_shape: Vec<Dim> = shape.iter().map(|&d| Dim::Is(d)).collect();
        dir_shape[shape.len() - 1] = Dim::Is(3);
        let (d, _) = input::read::<[f32; 3]>(directions, "directions", input::F32, &dir_shape)?;
        let envs = match env_of_ray {
            Some(e) => {
                Some(input::read::<u32>(e, "env_of_ray", input::U32, &[Dim::Is(shape[0])])?.0)
            }
            None => None,
        };
        let mut opts = scene::CastOptions::new(max_distance);
        if let Some(v) = no_hit_value {
            opts.no_hit_value = v;
        }
        if let Some(s) = max_steps {
            opts.max_steps = s;
        }
        let launch = launch(threads)?;
        let n = o.len();
        let mut result = CastResult {
            distance: vec![0.0; n],
            hit: vec![0; n],
            steps: vec![0; n],
        };
        let ray_envs = match &envs {
            Some(e) => RayEnvs::PerRay(e),
            None => RayEnvs::Blocks {
                rays_per_env: shape[1].max(1),
            },
        };
        let view = self.view();
        let out = RayOutputs {
            distance: &mut result.distance,
            hit: &mut result.hit,
            steps: &mut result.steps,
        };
        if n > 0 {
            py.detach(|| scene::cast_rays(&view, ray_envs, &o, &d, &opts, out, &launch))
                .py_err()?;
        }
        let out_shape = shape[..shape.len() - 1].to_vec();
        let owner = Bound::new(py, result)?;
        let r = owner.get();
        let any = owner.clone().into_any().unbind();
        Ok((
            Bound::new(
                py,
                Array::of(py, &any, &r.distance, out_shape.clone(), Dtype::F32, true),
            )?,
            Bound::new(
                py,
                Array::of(py, &any, &r.hit, out_shape.clone(), Dtype::U8, true),
            )?,
            Bound::new(
                py,
                Array::of(py, &any, &r.steps, out_shape, Dtype::U32, true),
            )?,
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "trackgen.Scenes(n_envs={}, resolution={})",
            self.n_envs(),
            self.resolution()
        )
    }
}

/// Adds this module's classes and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Pipeline>()?;
    m.add_class::<Corpus>()?;
    m.add_class::<Scenes>()?;
    m.add_function(wrap_pyfunction!(write_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(merge_corpora, m)?)?;
    Ok(())
}
