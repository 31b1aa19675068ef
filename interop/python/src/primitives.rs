//! One env's analytic scene (its primitives, before voxelisation): exact signed distances and
//! its triangle mesh, the reference geometry that other ray casters are compared on (the Embree
//! benchmark, `examples/python/bench_embree.py`).

use pyo3::prelude::*;
use trackgen::export::scene::scene_mesh;
use trackgen::scene::{self, CompiledScene, EnvScene, ScenePreset};

use crate::array::{Array, Dtype};
use crate::errors::IntoPy;
use crate::input::{self, Dim};

/// One env's scene primitives under a scene preset, seed and generation: the analytic shapes
/// that `Scenes.generate` voxelises for that env.
#[pyclass(module = "trackgen", name = "ScenePrimitives", frozen)]
pub struct ScenePrimitives {
    scene: EnvScene,
    compiled: CompiledScene,
}

/// The buffers behind the views `ScenePrimitives` returns (read-only).
#[pyclass(module = "trackgen", frozen)]
struct Buffers {
    floats: Vec<f32>,
    indices: Vec<u32>,
}

fn xyz(v: trackgen::geom::Vec3) -> (f32, f32, f32) {
    (v.x, v.y, v.z)
}

#[pymethods]
impl ScenePrimitives {
    /// Env `env`'s primitives of the scene preset (`trackgen.scene_presets()` or a TOML path).
    #[new]
    #[pyo3(signature = (preset, env, *, seed = 0, generation = 0))]
    fn new(py: Python<'_>, preset: &str, env: u64, seed: u64, generation: u32) -> PyResult<Self> {
        let preset = ScenePreset::load(preset).py_err()?;
        let scene = py
            .detach(|| scene::generate_env(&preset, seed, env, generation))
            .py_err()?;
        let compiled = CompiledScene::new(&scene.primitives).py_err()?;
        Ok(Self { scene, compiled })
    }

    /// Min corner `(x, y, z)` of the env's cubic domain, metres.
    #[getter]
    fn origin(&self) -> (f32, f32, f32) {
        xyz(self.scene.origin)
    }

    /// Side of the env's cubic domain, metres.
    #[getter]
    fn size_m(&self) -> f32 {
        self.scene.size_m
    }

    /// The env's free spawn point `(x, y, z)`, metres.
    #[getter]
    fn spawn(&self) -> (f32, f32, f32) {
        xyz(self.scene.spawn)
    }

    /// The number of CSG terms.
    #[getter]
    fn n_primitives(&self) -> usize {
        self.scene.primitives.len()
    }

    /// The signed distance of the CSG fold at float32 `points [N, 3]` (metres; negative inside;
    /// exact for a union of shapes, a lower bound of the distance where subtractions cut them).
    /// Returns float32 `[N]` (GIL released).
    fn distance<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Array>> {
        let (p, shape) =
            input::read::<[f32; 3]>(points, "points", input::F32, &[Dim::Any, Dim::Is(3)])?;
        let floats = py.detach(|| p.iter().map(|&q| self.compiled.distance(q)).collect());
        let owner = Bound::new(
            py,
            Buffers {
                floats,
                indices: Vec::new(),
            },
        )?;
        let any = owner.clone().into_any().unbind();
        Bound::new(
            py,
            Array::of(
                py,
                &any,
                &owner.get().floats,
                vec![shape[0]],
                Dtype::F32,
                true,
            ),
        )
    }

    /// The zero level set of the CSG fold by marching tetrahedra over `cells`³ cells of the
    /// domain (2..=512; `trackgen export --scene-res`): `(vertices, triangles)`, float32
    /// `[V, 3]` metres and uint32 `[T, 3]` indices, wound to face out of the solid.
    fn mesh<'py>(
        &self,
        py: Python<'py>,
        cells: u32,
    ) -> PyResult<(Bound<'py, Array>, Bound<'py, Array>)> {
        let mesh = py.detach(|| scene_mesh(&self.scene, cells)).py_err()?;
        let mut floats = Vec::with_capacity(3 * mesh.vertices());
        let mut indices = Vec::with_capacity(3 * mesh.triangles());
        for part in &mesh.parts {
            let base = (floats.len() / 3) as u32;
            floats.extend(part.positions.iter().flat_map(|v| [v.x, v.y, v.z]));
            indices.extend(part.indices.iter().map(|&i| base + i));
        }
        let (v, t) = (floats.len() / 3, indices.len() / 3);
        let owner = Bound::new(py, Buffers { floats, indices })?;
        let any = owner.clone().into_any().unbind();
        let b = owner.get();
        Ok((
            Bound::new(
                py,
                Array::of(py, &any, &b.floats, vec![v, 3], Dtype::F32, true),
            )?,
            Bound::new(
                py,
                Array::of(py, &any, &b.indices, vec![t, 3], Dtype::U32, true),
            )?,
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "trackgen.ScenePrimitives(n_primitives={}, size_m={})",
            self.scene.primitives.len(),
            self.scene.size_m
        )
    }
}

/// Adds this module's classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ScenePrimitives>()?;
    Ok(())
}
