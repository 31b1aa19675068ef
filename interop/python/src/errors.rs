//! trackgen errors as Python exceptions, with the Rust message.
//!
//! `ValueError` for bad input (presets, arguments, shapes, files that do not hold what was
//! expected), `OSError` for file system failures (`FileNotFoundError` when a named input file or
//! directory does not exist), `RuntimeError` for CUDA.

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::PyErr;

/// The Python exception of a trackgen error.
pub fn to_py(e: trackgen::Error) -> PyErr {
    let message = e.to_string();
    match &e {
        trackgen::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(message)
        }
        trackgen::Error::Io { .. } => PyOSError::new_err(message),
        trackgen::Error::Format { path, .. } if path.symlink_metadata().is_err() => {
            PyFileNotFoundError::new_err(message)
        }
        trackgen::Error::Format { .. }
        | trackgen::Error::Preset { .. }
        | trackgen::Error::Invalid(_) => PyValueError::new_err(message),
        trackgen::Error::CudaUnavailable(_) | trackgen::Error::Compile { .. } => {
            PyRuntimeError::new_err(message)
        }
    }
}

/// `Result<T, trackgen::Error>` → `PyResult<T>`.
pub trait IntoPy<T> {
    /// Converts the error with [`to_py`].
    fn py_err(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPy<T> for trackgen::Result<T> {
    fn py_err(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
