//! The course runtime: `Course` (track and gate modes; bind, step, reset, regenerate,
//! lookahead; every output as a zero-copy view).
//!
//! Bound inputs live in Rust buffers that the course reads in place; `bind` copies the given
//! arrays into them once, and `course.position` (`orientation`, `half_extents`) are writable
//! zero-copy views of them: what a simulator writes through such a view is what the next
//! `step()` reads. A view of a binding that was replaced (by another `bind` or `unbind`) keeps
//! the old buffer alive, so no view ever dangles.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use trackgen::course::{Binding, Course as RsCourse, CourseConfig, Mode, PurePursuit};
use trackgen::exec::plan::{Backend, Device};
use trackgen::geom::{Quat, Vec2, Vec3};

use crate::array::{Array, Dtype};
use crate::errors::IntoPy;
use crate::input::{self, Dim};
use crate::{device_arg, launch, preset_arg, views};

/// Keeps a binding's buffers alive for the views made of them: while the binding is the
/// course's, the views also hold the course; once replaced, it moves in here.
#[pyclass(module = "trackgen", frozen)]
struct BindingToken {
    retired: Mutex<Option<Binding>>,
}

/// The lookahead result buffers (reused while `points` is unchanged).
#[pyclass(module = "trackgen")]
struct LookaheadBuffers {
    points: Vec<Vec3>,
    curvature: Vec<f32>,
    k: usize,
}

/// A batch of courses and the sim-time signals to race them:
/// `Course("track", 4096, seed=7)`, or `mode="gates"` on a gate preset.
#[pyclass(module = "trackgen", name = "Course")]
pub struct Course {
    course: RsCourse,
    device: Device,
    token: Option<Py<BindingToken>>,
    lookahead: Option<Py<LookaheadBuffers>>,
}

fn mode_arg(mode: Option<&str>, preset: &trackgen::preset::Preset) -> PyResult<Mode> {
    match mode {
        Some("track") => Ok(Mode::Track),
        Some("gates") => Ok(Mode::Gates),
        None if preset.gates.is_some() => Ok(Mode::Gates),
        None => Ok(Mode::Track),
        Some(other) => Err(PyValueError::new_err(format!(
            "mode = {other:?}: expected \"track\" or \"gates\""
        ))),
    }
}

impl Course {
    /// Replaces the binding (retiring the old one into its token).
    fn set_binding(&mut self, py: Python<'_>, binding: Option<Binding>) -> PyResult<()> {
        let old = self.course.unbind();
        if let Some(token) = self.token.take() {
            *token.get().retired.lock().expect("not poisoned") = old;
        }
        if let Some(b) = binding {
            self.course.bind(b).py_err()?;
            self.token = Some(Py::new(
                py,
                BindingToken {
                    retired: Mutex::new(None),
                },
            )?);
        }
        Ok(())
    }

    /// A writable view of a bound buffer, owned by `(course, token)`.
    fn bound_view<'py, T: bytemuck::Pod>(
        slf: &Bound<'py, Self>,
        pick: impl Fn(&Binding) -> Option<&[T]>,
        width: usize,
    ) -> PyResult<Option<Bound<'py, Array>>> {
        let py = slf.py();
        let this = slf.borrow();
        let (Some(binding), Some(token)) = (this.course.binding(), &this.token) else {
            return Ok(None);
        };
        let Some(values) = pick(binding) else {
            return Ok(None);
        };
        let owner = PyTuple::new(
            py,
            [slf.clone().into_any(), token.bind(py).clone().into_any()],
        )?
        .into_any()
        .unbind();
        let view = Array::of(
            py,
            &owner,
            values,
            vec![values.len(), width],
            Dtype::F32,
            false,
        );
        Ok(Some(Bound::new(py, view)?))
    }
}

#[pymethods]
impl Course {
    /// A course of `mode` (`"track"` or `"gates"`; default: gates for a gate preset) for
    /// `n_envs` envs of `preset`, generated at generation 0 and reset. The keyword settings are
    /// `CourseConfig`'s (see the README's course runtime section); `device` is where the track
    /// pipeline runs (`"cpu"`, `"emulated"` or `"cuda[:N]"`; the same bytes on each).
    #[new]
    #[pyo3(signature = (preset, n_envs, *, mode = None, seed = 0, threads = None, env_base = 0,
        checkpoint_spacing_m = 25.0, max_checkpoints = 64, localize_window = 3, relocalize_m = None,
        footprint_half_extents_m = (0.0, 0.0), wrong_way_tolerance_m = 0.0, device = "cpu"))]
    #[allow(clippy::too_many_arguments)] // CourseConfig's fields as keyword arguments.
    fn new(
        py: Python<'_>,
        preset: &Bound<'_, PyAny>,
        n_envs: usize,
        mode: Option<&str>,
        seed: u64,
        threads: Option<usize>,
        env_base: u64,
        checkpoint_spacing_m: f32,
        max_checkpoints: u32,
        localize_window: u32,
        relocalize_m: Option<f32>,
        footprint_half_extents_m: (f32, f32),
        wrong_way_tolerance_m: f32,
        device: &str,
    ) -> PyResult<Self> {
        let preset = preset_arg(preset)?;
        let device = device_arg(device)?;
        let mode = mode_arg(mode, &preset)?;
        let config = CourseConfig {
            env_base,
            checkpoint_spacing_m,
            max_checkpoints,
            localize_window,
            relocalize_m,
            footprint_half_extents_m: Vec2::new(
                footprint_half_extents_m.0,
                footprint_half_extents_m.1,
            ),
            wrong_way_tolerance_m,
            ..CourseConfig::default()
        };
        let launch = launch(threads)?;
        let course = py
            .detach(|| {
                let backend = Backend::new(device, launch)?;
                RsCourse::on_backend(mode, &preset, n_envs, seed, config, backend)
            })
            .py_err()?;
        Ok(Self {
            course,
            device,
            token: None,
            lookahead: None,
        })
    }

    /// Binds the per-env inputs the course reads each step: `position` float32 `[E, 3]`
    /// (default: the spawn positions), `orientation` float32 `[E, 4]` (`[x, y, z, w]`; True:
    /// the spawn orientations), `half_extents` float32 `[E, 2]`. The arrays are copied once into
    /// the course's buffers; write through `course.position` (a zero-copy view) between steps.
    #[pyo3(signature = (position = None, orientation = None, half_extents = None))]
    fn bind(
        &mut self,
        py: Python<'_>,
        position: Option<&Bound<'_, PyAny>>,
        orientation: Option<&Bound<'_, PyAny>>,
        half_extents: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let n = self.course.n_envs();
        let g = self.course.geometry();
        let positions = match position {
            Some(p) => input::read::<Vec3>(p, "position", input::F32, &[Dim::Is(n), Dim::Is(3)])?.0,
            None => g.spawn_position.clone(),
        };
        let mut binding = Binding::new(positions);
        let orientations = match orientation {
            None => None,
            Some(o) if o.is_instance_of::<pyo3::types::PyBool>() => {
                o.extract::<bool>()?.then(|| g.spawn_orientation.clone())
            }
            Some(o) => Some(
                input::read::<Quat>(o, "orientation", input::F32, &[Dim::Is(n), Dim::Is(4)])?.0,
            ),
        };
        if let Some(q) = orientations {
            binding = binding.with_orientations(q);
        }
        if let Some(h) = half_extents {
            let h =
                input::read::<Vec2>(h, "half_extents", input::F32, &[Dim::Is(n), Dim::Is(2)])?.0;
            binding = binding.with_half_extents(h);
        }
        self.set_binding(py, Some(binding))
    }

    /// Releases the bound buffers (views of them stay valid, detached from the course).
    fn unbind(&mut self, py: Python<'_>) -> PyResult<()> {
        self.set_binding(py, None)
    }

    /// The bound positions, float32 `[E, 3]`, writable (None before `bind`).
    #[getter]
    fn position<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, Array>>> {
        Self::bound_view(slf, |b| Some(b.positions()), 3)
    }

    /// The bound orientations, float32 `[E, 4]`, writable (None if not bound).
    #[getter]
    fn orientation<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, Array>>> {
        Self::bound_view(slf, |b| b.orientations(), 4)
    }

    /// The bound half extents, float32 `[E, 2]`, writable (None if not bound).
    #[getter]
    fn half_extents<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, Array>>> {
        Self::bound_view(slf, |b| b.half_extents(), 2)
    }

    /// Advances every env one step from the bound inputs and writes every output (GIL
    /// released). ValueError before `bind`.
    fn step(&mut self, py: Python<'_>) -> PyResult<()> {
        let course = &mut self.course;
        py.detach(|| course.step()).py_err()
    }

    /// Respawns the masked envs (uint8 or bool `[E]`) on their current course.
    fn reset(&mut self, py: Python<'_>, mask: &Bound<'_, PyAny>) -> PyResult<()> {
        let mask = input::mask(mask, "mask", self.course.n_envs())?;
        let course = &mut self.course;
        py.detach(|| course.reset(&mask)).py_err()
    }

    /// Gives the masked envs a new course (`advance`: generation + 1) or rebuilds their current
    /// one, then resets them; unmasked envs keep every byte (GIL released).
    #[pyo3(signature = (mask, advance = true))]
    fn regenerate(
        &mut self,
        py: Python<'_>,
        mask: &Bound<'_, PyAny>,
        advance: bool,
    ) -> PyResult<()> {
        let mask = input::mask(mask, "mask", self.course.n_envs())?;
        let course = &mut self.course;
        py.detach(|| course.regenerate(&mask, advance)).py_err()
    }

    /// Generates every env at `generation` and resets it.
    fn generate(&mut self, py: Python<'_>, generation: u32) -> PyResult<()> {
        let course = &mut self.course;
        py.detach(|| course.generate(generation)).py_err()
    }

    /// `points` path points ahead of each env, `spacing_m` apart, in its body frame (float32
    /// `[E, points, 3]`), and the path's curvature there (`[E, points]`, 1/m, positive left):
    /// see `Course::lookahead` in Rust. Read-only views, rewritten by the next call with the
    /// same `points` (GIL released).
    fn lookahead<'py>(
        slf: &Bound<'py, Self>,
        points: usize,
        spacing_m: f32,
    ) -> PyResult<(Bound<'py, Array>, Bound<'py, Array>)> {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        let n = this.course.n_envs();
        let reuse = this
            .lookahead
            .as_ref()
            .is_some_and(|b| b.borrow(py).k == points);
        if !reuse {
            let len = n.checked_mul(points).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "lookahead points = {points}: too many for {n} envs"
                ))
            })?;
            this.lookahead = Some(Py::new(
                py,
                LookaheadBuffers {
                    points: vec![Vec3::NAN; len],
                    curvature: vec![f32::NAN; len],
                    k: points,
                },
            )?);
        }
        let buffers = this.lookahead.as_ref().expect("set above").clone_ref(py);
        {
            let mut b = buffers.borrow_mut(py);
            let b = &mut *b;
            let course = &this.course;
            py.detach(|| course.lookahead(points, spacing_m, &mut b.points, &mut b.curvature))
                .py_err()?;
        }
        let b = buffers.borrow(py);
        let owner = buffers.clone_ref(py).into_any();
        Ok((
            Bound::new(
                py,
                Array::of(py, &owner, &b.points, vec![n, points, 3], Dtype::F32, true),
            )?,
            Bound::new(
                py,
                Array::of(py, &owner, &b.curvature, vec![n, points], Dtype::F32, true),
            )?,
        ))
    }

    /// Diagnostics: runs `step()` `n` times inside Rust (GIL released, no Python between the
    /// calls) and returns each call's wall time in seconds: the Rust cost that a Python
    /// `course.step()` adds its call overhead to (`examples/python/bench_step.py`).
    fn _rust_step_times(&mut self, py: Python<'_>, n: usize) -> PyResult<Vec<f64>> {
        let course = &mut self.course;
        py.detach(|| {
            let mut times = Vec::with_capacity(n);
            for _ in 0..n {
                let start = std::time::Instant::now();
                course.step()?;
                times.push(start.elapsed().as_secs_f64());
            }
            Ok(times)
        })
        .py_err()
    }

    /// Moves every bound position one pure-pursuit step along the path (the scripted agent of
    /// the Rust examples; defaults: `PurePursuit::for_course`). For tests and baselines.
    #[pyo3(signature = (speed_m = None, lookahead_m = None))]
    fn pure_pursuit(
        &mut self,
        py: Python<'_>,
        speed_m: Option<f32>,
        lookahead_m: Option<f32>,
    ) -> PyResult<()> {
        let mut agent = PurePursuit::for_course(&self.course);
        if let Some(s) = speed_m {
            agent.speed_m = s;
        }
        if let Some(l) = lookahead_m {
            agent.lookahead_m = l;
        }
        let course = &mut self.course;
        py.detach(|| agent.act(course)).py_err()
    }

    /// The outputs of the last step (and of reset/regenerate for the envs they touched): a
    /// dict of read-only `[E]` views (`progress`, `lap_completed`, `s`, `n`, ...).
    #[getter]
    fn outputs<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let owner = slf.clone().into_any().unbind();
        views::outputs(slf.py(), &owner, slf.borrow().course.outputs())
    }

    /// The course geometry: `path [E, P, 4]` (x, y, z, s), `curvature`, `checkpoints [E, K, 16]`,
    /// `obstacles`, spawn pose, counts, `half_width_m`.
    #[getter]
    fn geometry<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let owner = slf.clone().into_any().unbind();
        views::geometry(slf.py(), &owner, slf.borrow().course.geometry())
    }

    /// The tracks (track mode) or guide tracks (gate mode), as `Pipeline.arrays`.
    #[getter]
    fn track<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let owner = slf.clone().into_any().unbind();
        views::track(slf.py(), &owner, slf.borrow().course.track_batch())
    }

    /// The gates (gate mode, as `GatePipeline.arrays`), None in track mode.
    #[getter]
    fn gates<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let owner = slf.clone().into_any().unbind();
        let this = slf.borrow();
        match this.course.gate_batch() {
            Some(g) => Ok(Some(views::gates(slf.py(), &owner, g)?)),
            None => Ok(None),
        }
    }

    /// Each env's generation counter, uint32 `[E]` (a read-only view).
    #[getter]
    fn generation<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Array>> {
        let py = slf.py();
        let owner = slf.clone().into_any().unbind();
        let this = slf.borrow();
        let g = this.course.generation();
        Bound::new(
            py,
            Array::of(py, &owner, g, vec![g.len()], Dtype::U32, true),
        )
    }

    /// The number of envs.
    #[getter]
    fn n_envs(&self) -> usize {
        self.course.n_envs()
    }

    /// `"track"` or `"gates"`.
    #[getter]
    fn mode(&self) -> &'static str {
        match self.course.mode() {
            Mode::Track => "track",
            Mode::Gates => "gates",
        }
    }

    /// The seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.course.seed()
    }

    /// Where the track pipeline runs: `"cpu"`, `"emulated"` or `"cuda:N"`.
    #[getter]
    fn device(&self) -> String {
        self.device.to_string()
    }

    /// The preset, resolved.
    #[getter]
    fn preset(&self) -> crate::Preset {
        crate::Preset {
            inner: self.course.preset().clone(),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "trackgen.Course({:?}, n_envs={}, mode={:?}, seed={}, bound={})",
            self.course.preset().source,
            self.course.n_envs(),
            self.mode(),
            self.course.seed(),
            if self.course.binding().is_some() {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// Adds this module's classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Course>()?;
    Ok(())
}
