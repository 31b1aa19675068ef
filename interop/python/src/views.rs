//! The view tables: every buffer of a batch, geometry or output struct as a named [`Array`],
//! with its in-memory dtype and shape. The batch tables are checked against the batch's own
//! field list (`soa_batch!`'s `FIELDS`), so a buffer added in Rust without a row here is an error,
//! never a silently missing or mistyped array.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use trackgen::course::{CourseGeometry, GateBatch, StepOutputs};
use trackgen::exec::layout::{Field, Layout};
use trackgen::track::TrackBatch;

use crate::array::{Array, Dtype};

/// Adds `views` as read-only (or writable) arrays of `owner` to a new dict.
fn dict<'py>(
    py: Python<'py>,
    owner: &Py<PyAny>,
    views: Vec<(&'static str, &[u8], Vec<usize>, Dtype)>,
    readonly: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, bytes, shape, dtype) in views {
        let view = Array::new(owner.clone_ref(py), bytes, shape, dtype, readonly);
        d.set_item(name, Bound::new(py, view)?)?;
    }
    Ok(d)
}

/// Checks that `names` are exactly the buffers of `fields` (in order).
fn check_fields(batch: &str, fields: &[Field], names: &[&str]) -> PyResult<()> {
    let declared: Vec<&str> = fields.iter().map(|f| f.name).collect();
    if declared != names {
        return Err(PyRuntimeError::new_err(format!(
            "{batch} declares buffers {declared:?} but the Python views cover {names:?}: \
             update interop/python/src/views.rs"
        )));
    }
    Ok(())
}

fn b<T: bytemuck::Pod>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// The arrays of a track batch: per-point `[E, N_max, 3]` / `[E, N_max]`, per-env `[E]`.
pub fn track<'py>(
    py: Python<'py>,
    owner: &Py<PyAny>,
    t: &TrackBatch,
) -> PyResult<Bound<'py, PyDict>> {
    let (e, n) = (t.n_envs, t.n_max);
    let v3 = vec![e, n, 3];
    let views = vec![
        ("center", b(&t.center), v3.clone(), Dtype::F32),
        ("outer", b(&t.outer), v3.clone(), Dtype::F32),
        ("inner", b(&t.inner), v3.clone(), Dtype::F32),
        ("tangent", b(&t.tangent), v3.clone(), Dtype::F32),
        ("normal", b(&t.normal), v3, Dtype::F32),
        ("arclen", b(&t.arclen), vec![e, n], Dtype::F32),
        ("count", b(&t.count), vec![e], Dtype::U32),
        ("length", b(&t.length), vec![e], Dtype::F32),
        ("valid", b(&t.valid), vec![e], Dtype::U8),
        ("attempts", b(&t.attempts), vec![e], Dtype::U8),
        ("generation", b(&t.generation), vec![e], Dtype::U32),
    ];
    let names: Vec<&str> = views.iter().map(|v| v.0).collect();
    check_fields("TrackBatch", <TrackBatch as Layout>::FIELDS, &names)?;
    dict(py, owner, views, true)
}

/// The arrays of a gate batch: `pos [E, G, 3]`, `quat [E, G, 4]`, `size [E, G, 2]`, per-env `[E]`.
pub fn gates<'py>(
    py: Python<'py>,
    owner: &Py<PyAny>,
    g: &GateBatch,
) -> PyResult<Bound<'py, PyDict>> {
    let (e, n) = (g.n_envs, g.g_max);
    let views = vec![
        ("pos", b(&g.pos), vec![e, n, 3], Dtype::F32),
        ("quat", b(&g.quat), vec![e, n, 4], Dtype::F32),
        ("size", b(&g.size), vec![e, n, 2], Dtype::F32),
        ("count", b(&g.count), vec![e], Dtype::U32),
        ("valid", b(&g.valid), vec![e], Dtype::U8),
        ("attempts", b(&g.attempts), vec![e], Dtype::U8),
        ("generation", b(&g.generation), vec![e], Dtype::U32),
    ];
    let names: Vec<&str> = views.iter().map(|v| v.0).collect();
    check_fields("GateBatch", <GateBatch as Layout>::FIELDS, &names)?;
    let d = dict(py, owner, views, true)?;
    d.set_item("thickness_m", g.thickness_m)?;
    Ok(d)
}

/// The step outputs, one `[E]` array each.
pub fn outputs<'py>(
    py: Python<'py>,
    owner: &Py<PyAny>,
    o: &StepOutputs,
) -> PyResult<Bound<'py, PyDict>> {
    let e = o.passed.len();
    let views = vec![
        ("passed", b(&o.passed), vec![e], Dtype::U8),
        ("lap_completed", b(&o.lap_completed), vec![e], Dtype::U8),
        ("wrong_way", b(&o.wrong_way), vec![e], Dtype::U8),
        (
            "wrong_checkpoint",
            b(&o.wrong_checkpoint),
            vec![e],
            Dtype::U8,
        ),
        ("next_index", b(&o.next_index), vec![e], Dtype::U32),
        ("laps", b(&o.laps), vec![e], Dtype::U32),
        ("progress", b(&o.progress), vec![e], Dtype::F32),
        ("dist_to_next", b(&o.dist_to_next), vec![e], Dtype::F32),
        ("s", b(&o.s), vec![e], Dtype::F32),
        ("n", b(&o.n), vec![e], Dtype::F32),
        ("n_up", b(&o.n_up), vec![e], Dtype::F32),
        ("segment", b(&o.segment), vec![e], Dtype::U32),
        ("curvature", b(&o.curvature), vec![e], Dtype::F32),
        ("off_track", b(&o.off_track), vec![e], Dtype::U8),
        ("hit", b(&o.hit), vec![e], Dtype::U8),
        ("penetration", b(&o.penetration), vec![e], Dtype::F32),
    ];
    let names: Vec<&str> = views.iter().map(|v| v.0).collect();
    check_fields("StepOutputs", <StepOutputs as Layout>::FIELDS, &names)?;
    dict(py, owner, views, true)
}

/// The course geometry: path `[E, P, 4]` (x, y, z, s), checkpoints `[E, K, 16]` (the 64-byte
/// rows), obstacles `[E, O, 4]`, spawn pose, counts.
pub fn geometry<'py>(
    py: Python<'py>,
    owner: &Py<PyAny>,
    g: &CourseGeometry,
) -> PyResult<Bound<'py, PyDict>> {
    let e = g.n_envs;
    let (p, k) = (g.path_max, g.checkpoint_max);
    let o = g.obstacles.len() / e.max(1);
    let views = vec![
        ("path", b(&g.path), vec![e, p, 4], Dtype::F32),
        ("curvature", b(&g.curvature), vec![e, p], Dtype::F32),
        ("path_count", b(&g.path_count), vec![e], Dtype::U32),
        ("path_length", b(&g.path_length), vec![e], Dtype::F32),
        ("checkpoints", b(&g.checkpoints), vec![e, k, 16], Dtype::F32),
        (
            "checkpoint_count",
            b(&g.checkpoint_count),
            vec![e],
            Dtype::U32,
        ),
        (
            "checkpoints_truncated",
            b(&g.checkpoints_truncated),
            vec![e],
            Dtype::U8,
        ),
        ("obstacles", b(&g.obstacles), vec![e, o, 4], Dtype::F32),
        ("obstacle_count", b(&g.obstacle_count), vec![e], Dtype::U32),
        (
            "spawn_position",
            b(&g.spawn_position),
            vec![e, 3],
            Dtype::F32,
        ),
        ("spawn_yaw", b(&g.spawn_yaw), vec![e], Dtype::F32),
        (
            "spawn_orientation",
            b(&g.spawn_orientation),
            vec![e, 4],
            Dtype::F32,
        ),
    ];
    let d = dict(py, owner, views, true)?;
    d.set_item("half_width_m", g.half_width_m)?;
    Ok(d)
}
