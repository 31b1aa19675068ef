#![deny(unsafe_code)]
//! `trackgen` for Python: presets, the batched generation pipelines, the course runtime, scenes
//! and ray casts, corpora — the Rust API's shape in Python's idioms.
//!
//! Every batch array and output is a zero-copy [`array::Array`] view that keeps its owner alive
//! (NumPy array interface and DLPack); inputs are any C-contiguous NumPy array or CPU DLPack
//! tensor of the right dtype and shape ([`input`]). Errors are Python exceptions carrying the
//! Rust message ([`errors`]). Generation, stepping, lookahead and ray casts release the GIL;
//! corpus writing and scene generation check for Ctrl-C between chunks and stop cleanly (the
//! temporary output is removed) with `KeyboardInterrupt`.

mod array;
mod course;
mod data;
mod errors;
mod input;
mod primitives;
mod views;

use pyo3::prelude::*;

use errors::IntoPy;

/// A resolved course preset: a built-in name (`trackgen.presets()`) or a TOML file path.
#[pyclass(module = "trackgen", name = "Preset", frozen)]
pub struct Preset {
    pub(crate) inner: trackgen::preset::Preset,
}

#[pymethods]
impl Preset {
    /// Loads a built-in preset by name, or a user TOML file by path (stating only what differs
    /// from `track`). ValueError for an unknown name or a bad value (naming the key),
    /// FileNotFoundError for a missing file.
    #[new]
    fn new(name_or_path: &str) -> PyResult<Self> {
        Ok(Self {
            inner: trackgen::preset::Preset::load(name_or_path).py_err()?,
        })
    }

    /// Parses preset TOML text; `source` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (text, source = "<string>"))]
    fn from_toml(text: &str, source: &str) -> PyResult<Self> {
        Ok(Self {
            inner: trackgen::preset::Preset::parse(text, source).py_err()?,
        })
    }

    /// Where it came from: a built-in name or a path.
    #[getter]
    fn source(&self) -> &str {
        &self.inner.source
    }

    /// `"gates"` for a preset with a `[gates]` section, else `"track"`.
    #[getter]
    fn kind(&self) -> &'static str {
        if self.inner.gates.is_some() {
            "gates"
        } else {
            "track"
        }
    }

    /// The generator's name.
    #[getter]
    fn generator(&self) -> &'static str {
        self.inner.generator.name()
    }

    /// The resolved TOML (every key, defaults filled in).
    #[getter]
    fn toml(&self) -> &str {
        self.inner.resolved_toml()
    }

    /// SHA-256 of the resolved TOML, lowercase hex (the corpus manifest's `preset_sha256`).
    #[getter]
    fn hash(&self) -> String {
        self.inner.hash()
    }

    /// Points per env (capacity of the per-point arrays).
    #[getter]
    fn n_max(&self) -> u32 {
        self.inner.track.n_max
    }

    /// The track's half width, metres.
    #[getter]
    fn half_width_m(&self) -> f32 {
        self.inner.track.half_width_m
    }

    /// The centerline's point spacing, metres.
    #[getter]
    fn spacing_m(&self) -> f32 {
        self.inner.track.spacing_m
    }

    fn __repr__(&self) -> String {
        format!(
            "trackgen.Preset({:?}, kind={:?}, generator={:?})",
            self.inner.source,
            self.kind(),
            self.generator()
        )
    }
}

/// A preset argument: a `Preset` or a name/path string.
pub(crate) fn preset_arg(obj: &Bound<'_, PyAny>) -> PyResult<trackgen::preset::Preset> {
    if let Ok(p) = obj.cast::<Preset>() {
        return Ok(p.get().inner.clone());
    }
    match obj.extract::<String>() {
        Ok(name) => trackgen::preset::Preset::load(&name).py_err(),
        Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "preset: expected a trackgen.Preset or a preset name or path (str), got {}",
            obj.get_type().name()?
        ))),
    }
}

/// The launch context of a `threads` argument (None: all cores).
pub(crate) fn launch(threads: Option<usize>) -> PyResult<trackgen::exec::Launch> {
    trackgen::exec::Launch::for_threads(threads).py_err()
}

/// The device of a `device` argument: `"cpu"`, `"emulated"`, `"cuda"` or `"cuda:N"`
/// (ValueError naming the argument otherwise).
pub(crate) fn device_arg(device: &str) -> PyResult<trackgen::exec::plan::Device> {
    device.parse().map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "device = {device:?}: expected \"cpu\", \"emulated\", \"cuda\" or \"cuda:N\""
        ))
    })
}

/// The built-in course presets' names.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    trackgen::preset::BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// The built-in scene presets' names.
#[pyfunction]
fn scene_presets() -> Vec<&'static str> {
    trackgen::scene::preset::BUILTIN
        .iter()
        .map(|(n, _)| *n)
        .collect()
}

/// The Python module `trackgen._trackgen` (re-exported by the `trackgen` package).
#[pymodule]
fn _trackgen(m: &Bound<'_, PyModule>) -> PyResult<()> {
    trackgen::os::check_cpu().map_err(|e| pyo3::exceptions::PyImportError::new_err(e.to_string()))?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<array::Array>()?;
    m.add_class::<Preset>()?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(scene_presets, m)?)?;
    data::register(m)?;
    course::register(m)?;
    primitives::register(m)?;
    Ok(())
}
