//! Arrays passed in from Python: any C-contiguous NumPy array, or any DLPack tensor on the CPU
//! (PyTorch, JAX, ...), checked for dtype and shape with errors naming the argument, the
//! expected and the given dtype and shape, then copied once into a Rust buffer.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// One dimension of an expected shape.
#[derive(Clone, Copy, Debug)]
pub enum Dim {
    /// Exactly this size.
    Is(usize),
    /// Any size.
    Any,
}

impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Is(n) => write!(f, "{n}"),
            Dim::Any => f.write_str("*"),
        }
    }
}

fn shape_text<T: std::fmt::Display>(dims: &[T]) -> String {
    let inner: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!(
        "({}{})",
        inner.join(", "),
        if dims.len() == 1 { "," } else { "" }
    )
}

/// The NumPy array behind `obj`: `obj` itself, `numpy.from_dlpack(obj)` for a DLPack tensor,
/// `numpy.asarray(obj)` for an object with the array interface; anything else is a TypeError.
fn as_ndarray<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let np = obj.py().import("numpy")?;
    if obj.is_instance(&np.getattr("ndarray")?)? {
        return Ok(obj.clone());
    }
    if obj.hasattr("__array_interface__")? {
        return np.call_method1("asarray", (obj,));
    }
    if obj.hasattr("__dlpack__")? {
        return np.call_method1("from_dlpack", (obj,));
    }
    Err(PyTypeError::new_err(format!(
        "{name}: expected a NumPy array or a DLPack tensor, got {}",
        obj.get_type().name()?
    )))
}

/// Reads `obj` as a C-contiguous array of one of `dtypes` (NumPy type strings; the first names
/// the expected dtype in errors) and of `shape`, and copies its elements into a new buffer of
/// `T` (whose size must be the dtype's times the product of the dims past the first).
/// Returns the buffer and the array's shape.
pub fn read<T: bytemuck::Pod>(
    obj: &Bound<'_, PyAny>,
    name: &str,
    dtypes: &[(&str, &str)],
    shape: &[Dim],
) -> PyResult<(Vec<T>, Vec<usize>)> {
    let arr = as_ndarray(obj, name)?;
    let dtype = arr.getattr("dtype")?;
    let typestr: String = dtype.getattr("str")?.extract()?;
    let expected = dtypes[0].1;
    if !dtypes.iter().any(|(t, _)| *t == typestr) {
        let given: String = dtype.getattr("name")?.extract()?;
        return Err(PyValueError::new_err(format!(
            "{name}: expected dtype {expected}, got {given}"
        )));
    }
    let given: Vec<usize> = arr.getattr("shape")?.extract()?;
    let fits = given.len() == shape.len()
        && given.iter().zip(shape).all(|(&g, d)| match d {
            Dim::Is(n) => g == *n,
            Dim::Any => true,
        });
    if !fits {
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape {}, got {}",
            shape_text(shape),
            shape_text(&given)
        )));
    }
    let contiguous: bool = arr.getattr("flags")?.getattr("c_contiguous")?.extract()?;
    if !contiguous {
        return Err(PyValueError::new_err(format!(
            "{name}: expected a C-contiguous array (numpy.ascontiguousarray makes one)"
        )));
    }
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    let n_bytes = given.iter().product::<usize>() * itemsize;
    if n_bytes % std::mem::size_of::<T>() != 0 {
        return Err(PyValueError::new_err(format!(
            "{name}: {n_bytes} bytes do not make whole elements of {} bytes",
            std::mem::size_of::<T>()
        )));
    }
    let mut out = vec![T::zeroed(); n_bytes / std::mem::size_of::<T>()];
    if n_bytes > 0 {
        let interface = arr.getattr("__array_interface__")?;
        let (addr, _readonly): (usize, bool) = interface.get_item("data")?.extract()?;
        copy_from(addr, bytemuck::cast_slice_mut(&mut out));
    }
    Ok((out, given))
}

#[allow(unsafe_code)] // Reading a NumPy array's memory by the address it publishes.
fn copy_from(addr: usize, out: &mut [u8]) {
    // SAFETY: `addr` is the data pointer of a live, C-contiguous NumPy array whose byte size
    // was checked to be `out.len()`; the caller holds a reference to the array and the GIL, so
    // the memory stays valid and no Python code runs (and writes it) during the copy.
    unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), out.len()) }
}

/// Float32 type strings.
pub const F32: &[(&str, &str)] = &[("<f4", "float32")];
/// A mask: uint8 or bool (the same bytes: 0 or 1).
pub const MASK: &[(&str, &str)] = &[("|u1", "uint8 (or bool)"), ("|b1", "uint8 (or bool)")];
/// Unsigned 32-bit integers.
pub const U32: &[(&str, &str)] = &[("<u4", "uint32")];

/// A per-env mask of `n_envs` entries (uint8 or bool; nonzero selects the env).
pub fn mask(obj: &Bound<'_, PyAny>, name: &str, n_envs: usize) -> PyResult<Vec<u8>> {
    Ok(read::<u8>(obj, name, MASK, &[Dim::Is(n_envs)])?.0)
}
