//! The crate's one error type.

use std::path::PathBuf;

/// Everything that can go wrong in trackgen. Messages name the offending key, value, file or
/// index, and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A preset could not be parsed or holds a bad value.
    #[error("preset {source_name}: {message}")]
    Preset {
        /// The preset's name or path.
        source_name: String,
        /// What is wrong, naming the key, the value and what was expected.
        message: String,
    },
    /// A caller passed an argument that does not fit (shape, range, mask length).
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// A file or directory operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file exists but does not hold what was expected.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A CUDA library (driver or NVRTC) is missing or failed.
    #[error("CUDA unavailable: {0}")]
    CudaUnavailable(String),
    /// NVRTC rejected a kernel source.
    #[error("NVRTC compile of {file} failed:\n{log}")]
    Compile {
        /// The kernel file.
        file: String,
        /// The compiler log.
        log: String,
    },
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

impl Error {
    /// The error of reading the input file `path`: a missing file, a directory or text that is
    /// not UTF-8 is an [`Error::Format`] (the input is not what was expected: a usage error),
    /// any other failure an [`Error::Io`].
    pub fn input(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        let path = path.into();
        let message = match source.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::InvalidData => format!("not UTF-8 text ({source})"),
            std::io::ErrorKind::IsADirectory => "is a directory: expected a file".to_string(),
            _ if path.is_dir() => "is a directory: expected a file".to_string(),
            _ => return Error::Io { path, source },
        };
        Error::Format { path, message }
    }
}

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
