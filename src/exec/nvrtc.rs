//! NVRTC, the CUDA run-time compiler, loaded at run time.
//!
//! This is the lowest layer of the CUDA backend's compiler path: it opens `libnvrtc.so.13` with
//! `libloading` (so the crate builds and runs with no CUDA toolkit), resolves the handful of
//! entry points trackgen needs, and wraps them into one safe call, [`Nvrtc::compile_cubin`],
//! that turns a kernel source into a CUBIN for one GPU architecture. Every `unsafe` block of the
//! compiler path lives in this file.
//!
//! Kernels are always compiled with `--fmad=false` (and IEEE division, square root and
//! subnormals, see [`IEEE_OPTIONS`]): the determinism contract forbids fused multiply-adds, so
//! that device results equal the CPU's to the bit.
//!
//! The library is searched for, in order:
//! 1. the full path in the environment variable `TRACKGEN_NVRTC`;
//! 2. `libnvrtc.so.13` through the dynamic loader (`LD_LIBRARY_PATH`, the system cache);
//! 3. `<site-packages>/nvidia/cu13/lib/libnvrtc.so.13` for every Python `site-packages`
//!    directory reported by `python3` (the `nvidia-cuda-nvrtc` package from PyPI).

// The FFI to a dynamically loaded library: the one place of the compiler path allowed unsafe
// code (the crate root denies it elsewhere); each block states why it holds.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

use libloading::Library;

use crate::{Error, Result};

/// The file name of the NVRTC shared library trackgen uses (CUDA 13).
pub const LIBRARY_NAME: &str = "libnvrtc.so.13";

/// The environment variable that names the NVRTC library's full path, overriding the search.
pub const PATH_ENV: &str = "TRACKGEN_NVRTC";

/// The options every compile starts with: no fused multiply-add, and (NVRTC's defaults, made
/// explicit) IEEE-rounded division and square root with subnormals kept, so that device float
/// results equal the CPU's to the bit.
pub const IEEE_OPTIONS: [&str; 4] = [
    "--fmad=false",
    "--ftz=false",
    "--prec-div=true",
    "--prec-sqrt=true",
];

/// `nvrtcResult`; `NVRTC_SUCCESS` is 0.
type NvrtcResult = c_int;
/// `nvrtcProgram`: an opaque handle.
type Program = *mut std::ffi::c_void;

type GetErrorStringFn = unsafe extern "C" fn(NvrtcResult) -> *const c_char;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult;
type CreateProgramFn = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> NvrtcResult;
type DestroyProgramFn = unsafe extern "C" fn(*mut Program) -> NvrtcResult;
type CompileProgramFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult;
type GetSizeFn = unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult;
type GetBytesFn = unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult;

/// The output of a successful compile.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The CUBIN image, ready for `cuModuleLoadData`.
    pub cubin: Vec<u8>,
    /// NVRTC's log (warnings; usually empty).
    pub log: String,
}

/// A loaded NVRTC library and its resolved entry points.
///
/// The function pointers stay valid as long as `_lib` is loaded, which is as long as the value
/// lives. NVRTC is thread-safe for distinct programs, so `Nvrtc` is `Send + Sync`.
pub struct Nvrtc {
    path: PathBuf,
    get_error_string: GetErrorStringFn,
    version: VersionFn,
    create_program: CreateProgramFn,
    destroy_program: DestroyProgramFn,
    compile_program: CompileProgramFn,
    get_program_log_size: GetSizeFn,
    get_program_log: GetBytesFn,
    get_cubin_size: GetSizeFn,
    get_cubin: GetBytesFn,
    // Declared last so that it is dropped after nothing else can use the pointers above.
    _lib: Library,
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.path)
            .field("version", &self.version())
            .finish()
    }
}

impl Nvrtc {
    /// Finds and loads `libnvrtc.so.13` (see the module doc for the search order).
    ///
    /// Returns [`Error::CudaUnavailable`] naming every place tried when none holds a loadable
    /// library with the needed entry points. When `TRACKGEN_NVRTC` is set, only that path is
    /// tried: a wrong explicit path is reported rather than silently replaced by another NVRTC.
    pub fn load() -> Result<Self> {
        let mut tried = Vec::new();
        if let Some(path) = std::env::var_os(PATH_ENV) {
            let path = PathBuf::from(path);
            // An explicit path that fails is an error of its own: silently falling back to
            // another NVRTC would hide the misconfiguration.
            return Self::open(&path).map_err(|e| {
                Error::CudaUnavailable(format!("{PATH_ENV}={}: {e}", path.display()))
            });
        }
        match Self::open(Path::new(LIBRARY_NAME)) {
            Ok(nvrtc) => return Ok(nvrtc),
            Err(e) => tried.push(format!("{LIBRARY_NAME} via the dynamic loader: {e}")),
        }
        for dir in python_site_packages() {
            let path = dir
                .join("nvidia")
                .join("cu13")
                .join("lib")
                .join(LIBRARY_NAME);
            if !path.is_file() {
                tried.push(format!("{} (absent)", path.display()));
                continue;
            }
            match Self::open(&path) {
                Ok(nvrtc) => return Ok(nvrtc),
                Err(e) => tried.push(format!("{}: {e}", path.display())),
            }
        }
        Err(Error::CudaUnavailable(format!(
            "cannot load NVRTC ({LIBRARY_NAME}); set {PATH_ENV} or `pip install \
             nvidia-cuda-nvrtc`. Tried: {}",
            tried.join("; ")
        )))
    }

    /// Loads the library at `path` (a bare file name goes through the dynamic loader's search)
    /// and resolves its entry points. The error string says what failed.
    fn open(path: &Path) -> std::result::Result<Self, String> {
        // SAFETY: loading a shared library runs its initialisers. libnvrtc's initialisers have no
        // preconditions on the caller; this is the documented way to use NVRTC dynamically.
        let lib = unsafe { Library::new(path.as_os_str()) }.map_err(|e| e.to_string())?;
        /// Resolves one symbol as the function pointer type `T`.
        ///
        /// # Safety
        /// `T` must be the exact C signature of `name` in `nvrtc.h` (CUDA 13).
        unsafe fn sym<T: Copy>(lib: &Library, name: &str) -> std::result::Result<T, String> {
            // SAFETY: the caller guarantees that `T` matches the symbol's C signature.
            unsafe { lib.get::<T>(name.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| format!("missing symbol {name}: {e}"))
        }
        // SAFETY: each type alias above transcribes the prototype of the same-named function in
        // CUDA 13's nvrtc.h (nvrtcResult is an int-sized C enum, nvrtcProgram a pointer), and the
        // pointers are stored next to `lib`, which outlives every use of them.
        unsafe {
            Ok(Self {
                path: path.to_path_buf(),
                get_error_string: sym(&lib, "nvrtcGetErrorString")?,
                version: sym(&lib, "nvrtcVersion")?,
                create_program: sym(&lib, "nvrtcCreateProgram")?,
                destroy_program: sym(&lib, "nvrtcDestroyProgram")?,
                compile_program: sym(&lib, "nvrtcCompileProgram")?,
                get_program_log_size: sym(&lib, "nvrtcGetProgramLogSize")?,
                get_program_log: sym(&lib, "nvrtcGetProgramLog")?,
                get_cubin_size: sym(&lib, "nvrtcGetCUBINSize")?,
                get_cubin: sym(&lib, "nvrtcGetCUBIN")?,
                _lib: lib,
            })
        }
    }

    /// The path the library was loaded from (as given to the loader).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// NVRTC's `(major, minor)` version, e.g. `(13, 0)`; `(0, 0)` if the query fails.
    pub fn version(&self) -> (i32, i32) {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: `version` is nvrtcVersion, which writes two ints through valid pointers.
        let status = unsafe { (self.version)(&mut major, &mut minor) };
        if status == 0 {
            (major, minor)
        } else {
            (0, 0)
        }
    }

    /// Compiles the CUDA C++ `source` to a CUBIN for `arch` (e.g. `"sm_90"`).
    ///
    /// `name` is the file name shown in diagnostics and in the error; `include_dirs` become `-I`
    /// options; `extra_opts` are passed as given after them. [`IEEE_OPTIONS`] (among them
    /// `--fmad=false`) and `-arch=<arch>` are always passed first. A source NVRTC rejects gives [`Error::Compile`] with its log;
    /// an argument holding a NUL byte gives [`Error::Invalid`]; any other NVRTC failure gives
    /// [`Error::CudaUnavailable`].
    pub fn compile_cubin(
        &self,
        source: &str,
        name: &str,
        arch: &str,
        include_dirs: &[PathBuf],
        extra_opts: &[&str],
    ) -> Result<Compiled> {
        let c_source = c_string(source, "kernel source")?;
        let c_name = c_string(name, "kernel file name")?;
        let mut opts: Vec<String> = IEEE_OPTIONS.iter().map(|o| o.to_string()).collect();
        opts.push(format!("-arch={arch}"));
        for dir in include_dirs {
            let dir = dir.to_str().ok_or_else(|| {
                Error::Invalid(format!("include dir {} is not UTF-8", dir.display()))
            })?;
            opts.push(format!("-I{dir}"));
        }
        opts.extend(extra_opts.iter().map(|o| o.to_string()));
        let c_opts = opts
            .iter()
            .map(|o| c_string(o, "NVRTC option"))
            .collect::<Result<Vec<_>>>()?;
        let opt_ptrs: Vec<*const c_char> = c_opts.iter().map(|o| o.as_ptr()).collect();
        let num_opts = c_int::try_from(opt_ptrs.len())
            .map_err(|_| Error::Invalid(format!("{} NVRTC options", opt_ptrs.len())))?;

        let program = self.create(&c_source, &c_name)?;
        // SAFETY: `program.0` is a live program; `opt_ptrs` holds `num_opts` pointers to
        // NUL-terminated strings (`c_opts`) that outlive the call.
        let status = unsafe { (self.compile_program)(program.0, num_opts, opt_ptrs.as_ptr()) };
        let log = self.log(&program)?;
        if status != 0 {
            let log = if log.trim().is_empty() {
                self.error_string(status)
            } else {
                log
            };
            return Err(Error::Compile {
                file: name.to_string(),
                log,
            });
        }
        let mut size = 0usize;
        // SAFETY: `program.0` is a live, compiled program; `size` is a valid out pointer.
        let status = unsafe { (self.get_cubin_size)(program.0, &mut size) };
        self.check(status, "nvrtcGetCUBINSize")?;
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` has exactly the `size` bytes nvrtcGetCUBINSize asked for.
        let status = unsafe { (self.get_cubin)(program.0, cubin.as_mut_ptr().cast()) };
        self.check(status, "nvrtcGetCUBIN")?;
        Ok(Compiled { cubin, log })
    }

    /// Creates a program from a source and its name (no headers passed in memory).
    fn create(&self, source: &CStr, name: &CStr) -> Result<ProgramGuard<'_>> {
        let mut program: Program = std::ptr::null_mut();
        // SAFETY: `program` is a valid out pointer; `source` and `name` are NUL-terminated and
        // live for the call; zero headers with null arrays is allowed by nvrtcCreateProgram.
        let status = unsafe {
            (self.create_program)(
                &mut program,
                source.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        self.check(status, "nvrtcCreateProgram")?;
        Ok(ProgramGuard(program, self))
    }

    /// The program's compile log, without the trailing NUL.
    fn log(&self, program: &ProgramGuard<'_>) -> Result<String> {
        let mut size = 0usize;
        // SAFETY: `program.0` is a live program; `size` is a valid out pointer.
        let status = unsafe { (self.get_program_log_size)(program.0, &mut size) };
        self.check(status, "nvrtcGetProgramLogSize")?;
        let mut bytes = vec![0u8; size.max(1)];
        // SAFETY: `bytes` holds at least the `size` bytes (NUL included) NVRTC writes.
        let status = unsafe { (self.get_program_log)(program.0, bytes.as_mut_ptr().cast()) };
        self.check(status, "nvrtcGetProgramLog")?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
    }

    /// `Ok` for `NVRTC_SUCCESS`, else [`Error::CudaUnavailable`] naming the call and the status.
    fn check(&self, status: NvrtcResult, call: &str) -> Result<()> {
        if status == 0 {
            Ok(())
        } else {
            Err(Error::CudaUnavailable(format!(
                "{call} failed: {}",
                self.error_string(status)
            )))
        }
    }

    /// NVRTC's name for a status code, e.g. `NVRTC_ERROR_COMPILATION (6)`.
    fn error_string(&self, status: NvrtcResult) -> String {
        // SAFETY: nvrtcGetErrorString accepts any value and returns a pointer to a static
        // NUL-terminated string (or null, handled below).
        let ptr = unsafe { (self.get_error_string)(status) };
        if ptr.is_null() {
            return format!("NVRTC status {status}");
        }
        // SAFETY: `ptr` is non-null and points to a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(ptr) }.to_string_lossy();
        format!("{text} ({status})")
    }
}

// SAFETY: `Nvrtc` holds a library handle and plain function pointers into it, all immutable after
// `open`; NVRTC's API is thread-safe for calls on distinct programs, and every program is created
// and destroyed within one `compile_cubin` call.
unsafe impl Send for Nvrtc {}
// SAFETY: see `Send`: no method mutates shared state.
unsafe impl Sync for Nvrtc {}

/// Destroys an NVRTC program when dropped.
struct ProgramGuard<'a>(Program, &'a Nvrtc);

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by nvrtcCreateProgram of the same library and is destroyed
        // exactly once, here. A failure leaks the program, which is all that can be done.
        unsafe { (self.1.destroy_program)(&mut self.0) };
    }
}

/// `text` as a C string, or [`Error::Invalid`] naming `what` if it holds a NUL byte.
fn c_string(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::Invalid(format!("{what} contains a NUL byte")))
}

/// Python's `site-packages` directories (global and user), or none if `python3` fails.
fn python_site_packages() -> Vec<PathBuf> {
    let output = Command::new("python3")
        .arg("-c")
        .arg("import site,sys; print('\\n'.join(site.getsitepackages()+[site.getusersitepackages()]))")
        .output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVRTC, or `None` after printing why the calling test is skipped.
    fn nvrtc_or_skip() -> Option<Nvrtc> {
        match Nvrtc::load() {
            Ok(nvrtc) => Some(nvrtc),
            Err(e) => {
                println!("SKIP: {}", e.to_string().replace('\n', " "));
                None
            }
        }
    }

    #[test]
    fn a_missing_library_is_an_error_naming_it() {
        let err = Nvrtc::open(Path::new("/nonexistent/libnvrtc.so.13")).unwrap_err();
        assert!(err.contains("/nonexistent/libnvrtc.so.13"), "{err}");
    }

    #[test]
    fn a_bad_source_gives_a_compile_error_with_the_log() {
        let Some(nvrtc) = nvrtc_or_skip() else { return };
        let err = nvrtc
            .compile_cubin("this is not CUDA", "bad.cu", "sm_80", &[], &[])
            .unwrap_err();
        match err {
            Error::Compile { file, log } => {
                assert_eq!(file, "bad.cu");
                assert!(log.contains("bad.cu") && log.contains("error"), "{log}");
            }
            other => panic!("expected Error::Compile, got {other}"),
        }
    }

    #[test]
    fn a_good_source_gives_a_cubin_and_its_warnings() {
        let Some(nvrtc) = nvrtc_or_skip() else { return };
        let source = "extern \"C\" __global__ void k(float* x) { int unused; x[0] = 1.0f; }";
        let compiled = nvrtc
            .compile_cubin(source, "warn.cu", "sm_90", &[], &[])
            .unwrap();
        // An ELF image, with the warning about `unused` in the log.
        assert_eq!(&compiled.cubin[..4], b"\x7fELF");
        assert!(compiled.log.contains("unused"), "{}", compiled.log);
        assert!(nvrtc.version().0 >= 13, "{:?}", nvrtc.version());
    }

    #[test]
    fn a_nul_byte_is_an_invalid_argument() {
        let Some(nvrtc) = nvrtc_or_skip() else { return };
        let err = nvrtc
            .compile_cubin("x", "a\0b.cu", "sm_80", &[], &[])
            .unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
    }
}
