//! Zero-copy views of Rust-owned buffers: the NumPy array interface and DLPack.
//!
//! An [`Array`] is an address, a shape and a dtype over memory that some Python object (its
//! *owner*: a `Pipeline`, a `Course`, a `Corpus`, ...) keeps alive; the view holds a strong
//! reference to the owner, and so does everything made from it (a NumPy array made through
//! `__array_interface__` keeps the view as its `base`; a DLPack capsule keeps it in its manager
//! context), so the memory outlives every consumer. The owner's buffers never move: they are
//! allocated once, at construction, and written in place by every later call.
//!
//! DLPack (`__dlpack__`, `__dlpack_device__`): a `"dltensor_versioned"` capsule (DLPack 1.x,
//! carrying the read-only flag) when the consumer asks for `max_version >= (1, 0)`, else the
//! legacy `"dltensor"` capsule. The device is the CPU (`kDLCPU`); a CUDA backend would add
//! `kDLCUDA` views of device buffers here without changing the consumers.

use std::ffi::{c_void, CStr};

use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// The element types of the views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `float32`.
    F32,
    /// `uint32`.
    U32,
    /// `uint8`.
    U8,
}

impl Dtype {
    /// The NumPy type string.
    pub fn typestr(self) -> &'static str {
        match self {
            Dtype::F32 => "<f4",
            Dtype::U32 => "<u4",
            Dtype::U8 => "|u1",
        }
    }

    /// The NumPy dtype name.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "float32",
            Dtype::U32 => "uint32",
            Dtype::U8 => "uint8",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::F32 | Dtype::U32 => 4,
            Dtype::U8 => 1,
        }
    }

    /// DLPack `(code, bits)`: kDLFloat = 2, kDLUInt = 1.
    fn dlpack(self) -> (u8, u8) {
        match self {
            Dtype::F32 => (2, 32),
            Dtype::U32 => (1, 32),
            Dtype::U8 => (1, 8),
        }
    }
}

/// A C-contiguous view of a buffer owned by a Python object.
///
/// Supports `numpy.asarray(view)` (the array interface, no copy), `numpy.from_dlpack(view)`
/// and any other DLPack consumer (PyTorch, JAX, CuPy). Views of outputs are read-only; views of
/// bound inputs are writable, and what is written through them is what the next call reads.
#[pyclass(module = "trackgen", name = "Array", frozen)]
pub struct Array {
    addr: usize,
    shape: Vec<usize>,
    dtype: Dtype,
    readonly: bool,
    owner: Py<PyAny>,
}

impl Array {
    /// A view of `bytes` (which `owner` keeps alive and never moves) as `dtype` of `shape`.
    /// The byte length must be the shape's product times the element size.
    pub fn new(
        owner: Py<PyAny>,
        bytes: &[u8],
        shape: Vec<usize>,
        dtype: Dtype,
        readonly: bool,
    ) -> Self {
        assert_eq!(
            bytes.len(),
            shape.iter().product::<usize>() * dtype.size(),
            "view shape {shape:?} of {} does not cover its buffer",
            dtype.name()
        );
        Self {
            addr: bytes.as_ptr() as usize,
            shape,
            dtype,
            readonly,
            owner,
        }
    }

    /// A view of a typed slice.
    pub fn of<T: bytemuck::Pod>(
        py: Python<'_>,
        owner: &Py<PyAny>,
        values: &[T],
        shape: Vec<usize>,
        dtype: Dtype,
        readonly: bool,
    ) -> Self {
        Self::new(
            owner.clone_ref(py),
            bytemuck::cast_slice(values),
            shape,
            dtype,
            readonly,
        )
    }
}

#[pymethods]
impl Array {
    /// The shape, a tuple.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    /// The NumPy dtype name (`"float32"`, `"uint32"`, `"uint8"`).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name()
    }

    /// Whether writes through this view are refused (outputs) or allowed (bound inputs).
    #[getter]
    fn readonly(&self) -> bool {
        self.readonly
    }

    /// The object that owns the memory (kept alive by this view).
    #[getter]
    fn owner(&self, py: Python<'_>) -> Py<PyAny> {
        self.owner.clone_ref(py)
    }

    /// The NumPy array interface (version 3): no copy; `numpy.asarray(view)` keeps the view.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", PyTuple::new(py, &self.shape)?)?;
        d.set_item("typestr", self.dtype.typestr())?;
        d.set_item("data", (self.addr, self.readonly))?;
        d.set_item("strides", py.None())?;
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.shape.first().copied().unwrap_or(1)
    }

    fn __repr__(&self) -> String {
        let shape: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        format!(
            "trackgen.Array(shape=({}{}), dtype={}, readonly={})",
            shape.join(", "),
            if shape.len() == 1 { "," } else { "" },
            self.dtype.name(),
            if self.readonly { "True" } else { "False" }
        )
    }

    /// `(device_type, device_id)`: `(1, 0)`, the CPU.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (K_DL_CPU, 0)
    }

    /// A DLPack capsule over this view's memory (no copy); the capsule keeps the view alive
    /// until its consumer calls the deleter. `stream` must be None (CPU memory), `dl_device`
    /// None or `(1, 0)`, `copy` not True.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        slf: &Bound<'_, Self>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        if stream.as_ref().is_some_and(|s| !s.is_none()) {
            return Err(PyValueError::new_err(
                "__dlpack__(stream=...): a CPU array takes no stream (expected None)",
            ));
        }
        if let Some(dev) = dl_device {
            if dev != (K_DL_CPU, 0) {
                return Err(PyBufferError::new_err(format!(
                    "__dlpack__(dl_device={dev:?}): this array lives on the CPU, (1, 0); \
                     copies to other devices are the consumer's"
                )));
            }
        }
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "__dlpack__(copy=True): trackgen exports views only; copy on the consumer side",
            ));
        }
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        dlpack::capsule(slf, versioned)
    }
}

const K_DL_CPU: i32 = 1;

#[allow(unsafe_code)] // The DLPack ABI: raw structs, a capsule and its destructor.
mod dlpack {
    use super::*;

    const NAME: &CStr = c"dltensor";
    const NAME_VERSIONED: &CStr = c"dltensor_versioned";
    const FLAG_READ_ONLY: u64 = 1;

    #[repr(C)]
    struct DLDevice {
        device_type: i32,
        device_id: i32,
    }

    #[repr(C)]
    struct DLDataType {
        code: u8,
        bits: u8,
        lanes: u16,
    }

    #[repr(C)]
    struct DLTensor {
        data: *mut c_void,
        device: DLDevice,
        ndim: i32,
        dtype: DLDataType,
        shape: *mut i64,
        strides: *mut i64,
        byte_offset: u64,
    }

    #[repr(C)]
    struct DLManagedTensor {
        dl_tensor: DLTensor,
        manager_ctx: *mut c_void,
        deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
    }

    #[repr(C)]
    struct DLPackVersion {
        major: u32,
        minor: u32,
    }

    #[repr(C)]
    struct DLManagedTensorVersioned {
        version: DLPackVersion,
        manager_ctx: *mut c_void,
        deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
        flags: u64,
        dl_tensor: DLTensor,
    }

    /// What a capsule owns besides its tensor struct: the shape it points to and the view.
    struct Context {
        shape: Vec<i64>,
        _view: Py<Array>,
    }

    fn tensor(view: &Array, ctx: &mut Context) -> DLTensor {
        let (code, bits) = view.dtype.dlpack();
        DLTensor {
            data: view.addr as *mut c_void,
            device: DLDevice {
                device_type: K_DL_CPU,
                device_id: 0,
            },
            ndim: ctx.shape.len() as i32,
            dtype: DLDataType {
                code,
                bits,
                lanes: 1,
            },
            shape: ctx.shape.as_mut_ptr(),
            // NULL strides: compact row-major (C order), as every view is.
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        }
    }

    /// The capsule of `view`: a boxed managed tensor whose context holds a reference to the
    /// view; the capsule's destructor frees it unless a consumer took it (renamed the capsule).
    pub(super) fn capsule(view: &Bound<'_, Array>, versioned: bool) -> PyResult<Py<PyAny>> {
        let py = view.py();
        let arr = view.get();
        let mut ctx = Box::new(Context {
            shape: arr.shape.iter().map(|&d| d as i64).collect(),
            _view: view.clone().unbind(),
        });
        let dl_tensor = tensor(arr, &mut ctx);
        let manager_ctx = Box::into_raw(ctx) as *mut c_void;
        let (ptr, name, destructor): (*mut c_void, &CStr, Option<ffi::PyCapsule_Destructor>) =
            if versioned {
                let t = Box::new(DLManagedTensorVersioned {
                    version: DLPackVersion { major: 1, minor: 0 },
                    manager_ctx,
                    deleter: Some(delete_versioned),
                    flags: if arr.readonly { FLAG_READ_ONLY } else { 0 },
                    dl_tensor,
                });
                (
                    Box::into_raw(t) as *mut c_void,
                    NAME_VERSIONED,
                    Some(destroy_versioned),
                )
            } else {
                let t = Box::new(DLManagedTensor {
                    dl_tensor,
                    manager_ctx,
                    deleter: Some(delete_legacy),
                });
                (Box::into_raw(t) as *mut c_void, NAME, Some(destroy_legacy))
            };
        // SAFETY: `ptr` is a live, boxed managed tensor and `name` a static C string; on
        // failure (NULL, a Python error set) nothing took ownership, so we free it here.
        let capsule = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), destructor) };
        if capsule.is_null() {
            // SAFETY: the capsule was not created, so the deleter runs exactly once, here.
            unsafe {
                if versioned {
                    delete_versioned(ptr as *mut DLManagedTensorVersioned)
                } else {
                    delete_legacy(ptr as *mut DLManagedTensor)
                }
            }
            return Err(PyErr::fetch(py));
        }
        // SAFETY: `capsule` is a new, non-NULL reference that we own.
        Ok(unsafe { Py::from_owned_ptr(py, capsule) })
    }

    /// The DLPack deleter of a legacy tensor: frees it, its context and the view reference.
    unsafe extern "C" fn delete_legacy(t: *mut DLManagedTensor) {
        if t.is_null() {
            return;
        }
        // SAFETY: `t` and its context were made by `Box::into_raw` in `capsule`, and DLPack
        // calls the deleter once (the consumer, or the capsule destructor if nobody consumed).
        let t = unsafe { Box::from_raw(t) };
        let ctx = unsafe { Box::from_raw(t.manager_ctx as *mut Context) };
        Python::attach(|_| drop(ctx));
    }

    /// The DLPack deleter of a versioned tensor.
    unsafe extern "C" fn delete_versioned(t: *mut DLManagedTensorVersioned) {
        if t.is_null() {
            return;
        }
        // SAFETY: as in `delete_legacy`.
        let t = unsafe { Box::from_raw(t) };
        let ctx = unsafe { Box::from_raw(t.manager_ctx as *mut Context) };
        Python::attach(|_| drop(ctx));
    }

    /// Capsule destructor: a capsule still named `dltensor` was never consumed; free it.
    unsafe extern "C" fn destroy_legacy(capsule: *mut ffi::PyObject) {
        // SAFETY: called by Python with the capsule alive; the name check tells whether a
        // consumer took ownership (it renames the capsule to `used_dltensor`).
        unsafe {
            if ffi::PyCapsule_IsValid(capsule, NAME.as_ptr()) == 1 {
                let t = ffi::PyCapsule_GetPointer(capsule, NAME.as_ptr()) as *mut DLManagedTensor;
                delete_legacy(t);
            }
        }
    }

    /// Capsule destructor of the versioned capsule.
    unsafe extern "C" fn destroy_versioned(capsule: *mut ffi::PyObject) {
        // SAFETY: as in `destroy_legacy` (`used_dltensor_versioned` once consumed).
        unsafe {
            if ffi::PyCapsule_IsValid(capsule, NAME_VERSIONED.as_ptr()) == 1 {
                let t = ffi::PyCapsule_GetPointer(capsule, NAME_VERSIONED.as_ptr())
                    as *mut DLManagedTensorVersioned;
                delete_versioned(t);
            }
        }
    }
}
