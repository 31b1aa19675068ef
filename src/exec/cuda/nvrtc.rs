//! NVRTC, the CUDA run-time compiler, through cudarc.
//!
//! cudarc opens NVRTC by library *name* at its first call and panics if no candidate loads; its
//! candidates for the `cuda-13000` bindings include `libnvrtc.so.13`, but not the path where the
//! `nvidia-cuda-nvrtc` package from PyPI installs it. So trackgen finds the library itself, opens
//! it by full path with `RTLD_NOW | RTLD_GLOBAL` and keeps it open for the life of the process:
//! the dynamic loader then answers cudarc's `dlopen("libnvrtc.so.13")` with the already-loaded
//! object (a loaded library matches requests for its soname). Before trackgen calls cudarc, it
//! checks that cudarc's library is the one it loaded (the same address of `nvrtcVersion`), so a
//! different `libnvrtc.so` earlier on the search path is reported, not used silently.
//!
//! The library is searched for, in order:
//! 1. the full path in the environment variable `TRACKGEN_NVRTC` (only that path, when set);
//! 2. `libnvrtc.so.13` through the dynamic loader (`LD_LIBRARY_PATH`, the system cache);
//! 3. `<site-packages>/nvidia/cu13/lib/libnvrtc.so.13` for every Python `site-packages`
//!    directory reported by `python3` (the `nvidia-cuda-nvrtc` package from PyPI).
//!
//! The search runs once per process ([`Nvrtc::load`] caches its outcome, error included): cudarc
//! holds one NVRTC for the whole process, so a second, different library cannot be switched to.
//!
//! Kernels are always compiled with [`IEEE_OPTIONS`] first (no fused multiply-add, IEEE division,
//! square root and subnormals): the determinism contract forbids contraction, so that device
//! results equal the CPU's to the bit. Callers cannot turn them off: a later option that
//! contradicts one of them is an [`Error::Invalid`].

// The FFI to NVRTC (through cudarc's raw bindings) and the loader: each block states why it
// holds. The crate root denies unsafe code elsewhere.
#![allow(unsafe_code)]

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use cudarc::nvrtc::{result as nv, sys};

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

/// The output of a successful compile.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The CUBIN image, ready for `cuModuleLoadData`.
    pub cubin: Vec<u8>,
    /// NVRTC's log (warnings; usually empty).
    pub log: String,
}

/// The process's NVRTC: where it was loaded from and its version. Cheap to copy around; every
/// compile goes through cudarc's process-wide library.
#[derive(Clone, Debug)]
pub struct Nvrtc {
    path: PathBuf,
    version: (i32, i32),
}

/// The outcome of the one search per process.
static LOADED: OnceLock<std::result::Result<Nvrtc, String>> = OnceLock::new();

impl Nvrtc {
    /// Finds and loads `libnvrtc.so.13` (see the module doc for the search order), once per
    /// process.
    ///
    /// Returns [`Error::CudaUnavailable`] naming every place tried when none holds a loadable
    /// NVRTC. When `TRACKGEN_NVRTC` is set, only that path is tried: a wrong explicit path is
    /// reported rather than silently replaced by another NVRTC.
    pub fn load() -> Result<Self> {
        LOADED
            .get_or_init(Self::search)
            .clone()
            .map_err(Error::CudaUnavailable)
    }

    /// The search behind [`load`](Self::load); the error names every place tried.
    fn search() -> std::result::Result<Self, String> {
        if let Some(path) = std::env::var_os(PATH_ENV) {
            let path = PathBuf::from(path);
            // An explicit path that fails is an error of its own: silently falling back to
            // another NVRTC would hide the misconfiguration.
            return Self::open(&path).map_err(|e| format!("{PATH_ENV}={}: {e}", path.display()));
        }
        let mut tried = Vec::new();
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
        Err(format!(
            "cannot load NVRTC ({LIBRARY_NAME}); set {PATH_ENV} or `pip install \
             nvidia-cuda-nvrtc`. Tried: {}",
            tried.join("; ")
        ))
    }

    /// Opens the library at `path` (a bare file name goes through the dynamic loader's search)
    /// for the rest of the process and checks that cudarc resolves NVRTC to the same object.
    fn open(path: &Path) -> std::result::Result<Self, String> {
        let ours = open_global(path)?;
        // SAFETY: `nvrtcVersion` has this C signature in every NVRTC (nvrtc.h); the symbol is
        // only compared by address here, not called.
        let our_version: unsafe extern "C" fn(*mut i32, *mut i32) -> sys::nvrtcResult =
            unsafe { ours.get(b"nvrtcVersion\0") }
                .map(|s| *s)
                .map_err(|e| format!("not an NVRTC library (no nvrtcVersion): {e}"))?;
        // `ours` stays loaded for the life of the process: cudarc's handle refers to the same
        // object and its function pointers must never dangle.
        std::mem::forget(ours);
        // SAFETY: `is_culib_present` only tries to dlopen cudarc's candidate names.
        if !unsafe { sys::is_culib_present() } {
            return Err(format!(
                "loaded {}, but cudarc finds no NVRTC by name (its candidates include \
                 {LIBRARY_NAME}, whose soname the loaded library must have)",
                path.display()
            ));
        }
        // SAFETY: `is_culib_present` just succeeded, so `culib` loads instead of panicking.
        let theirs = unsafe { sys::culib() };
        // SAFETY: as above: compared by address only.
        let their_version: unsafe extern "C" fn(*mut i32, *mut i32) -> sys::nvrtcResult =
            unsafe { theirs.get(b"nvrtcVersion\0") }
                .map(|s| *s)
                .map_err(|e| format!("cudarc's NVRTC has no nvrtcVersion: {e}"))?;
        if our_version as usize != their_version as usize {
            return Err(format!(
                "loaded {}, but cudarc opened a different NVRTC (an earlier match of its library \
                 names on the loader's path); set {PATH_ENV} to that library or remove it",
                path.display()
            ));
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: nvrtcVersion writes two ints through valid pointers.
        let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
        status
            .result()
            .map_err(|e| format!("nvrtcVersion failed: {e}"))?;
        if major < 13 {
            return Err(format!(
                "{} is NVRTC {major}.{minor}: expected 13 or newer",
                path.display()
            ));
        }
        Ok(Self {
            path: path.to_path_buf(),
            version: (major, minor),
        })
    }

    /// The path the library was loaded from (as given to the loader).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// NVRTC's `(major, minor)` version, e.g. `(13, 0)`.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// Compiles the CUDA C++ `source` to a CUBIN for `arch` (e.g. `"sm_90"`).
    ///
    /// `name` is the file name shown in diagnostics and in the error; the options are
    /// [`options`]`(arch, include_dirs, extra_opts)`. A source NVRTC rejects gives
    /// [`Error::Compile`] with its log; an argument holding a NUL byte, or an option that
    /// contradicts [`IEEE_OPTIONS`], gives [`Error::Invalid`]; any other NVRTC failure gives
    /// [`Error::CudaUnavailable`].
    pub fn compile_cubin(
        &self,
        source: &str,
        name: &str,
        arch: &str,
        include_dirs: &[PathBuf],
        extra_opts: &[&str],
    ) -> Result<Compiled> {
        let opts = options(arch, include_dirs, extra_opts)?;
        self.compile_with(source, name, &opts)
    }

    /// Compiles `source` with exactly `opts` (as made by [`options`]).
    pub(crate) fn compile_with(
        &self,
        source: &str,
        name: &str,
        opts: &[String],
    ) -> Result<Compiled> {
        let c_source = c_string(source, "kernel source")?;
        let c_name = c_string(name, "kernel file name")?;
        for opt in opts {
            c_string(opt, "NVRTC option")?;
        }
        let program = Program::create(&c_source, &c_name)?;
        // SAFETY: `program.0` is a live program; every option was checked above to hold no NUL
        // byte (cudarc converts them to C strings and would panic on one).
        let status = unsafe { nv::compile_program(program.0, opts) };
        let log = program.log()?;
        if let Err(e) = status {
            if e.0 != sys::nvrtcResult::NVRTC_ERROR_COMPILATION {
                return Err(Error::CudaUnavailable(format!(
                    "nvrtcCompileProgram of {name} failed: {}",
                    error_string(e.0)
                )));
            }
            let log = if log.trim().is_empty() {
                error_string(e.0)
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
        let status = unsafe { sys::nvrtcGetCUBINSize(program.0, &mut size) };
        check(status, "nvrtcGetCUBINSize")?;
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` has exactly the `size` bytes nvrtcGetCUBINSize asked for.
        let status = unsafe { sys::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr().cast::<c_char>()) };
        check(status, "nvrtcGetCUBIN")?;
        Ok(Compiled { cubin, log })
    }
}

/// The full option list of a compile: [`IEEE_OPTIONS`], `-arch=<arch>`, `-I<dir>` per include
/// directory, then `extra_opts` as given.
///
/// An `arch` that is not `sm_<digits>`, an include directory that is not UTF-8, or an extra
/// option that would undo one of [`IEEE_OPTIONS`] (`--fmad`, `--ftz`, `--prec-div`,
/// `--prec-sqrt`, `--use_fast_math` in any spelling) or set a second `-arch` is an
/// [`Error::Invalid`] naming it.
pub fn options(arch: &str, include_dirs: &[PathBuf], extra_opts: &[&str]) -> Result<Vec<String>> {
    let digits = arch.strip_prefix("sm_").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::Invalid(format!(
            "GPU architecture `{arch}`: expected sm_<digits>, e.g. sm_90"
        )));
    }
    let mut opts: Vec<String> = IEEE_OPTIONS.iter().map(|o| o.to_string()).collect();
    opts.push(format!("-arch={arch}"));
    for dir in include_dirs {
        let dir = dir
            .to_str()
            .ok_or_else(|| Error::Invalid(format!("include dir {} is not UTF-8", dir.display())))?;
        opts.push(format!("-I{dir}"));
    }
    for opt in extra_opts {
        let flag = opt.trim_start_matches('-');
        let flag = flag.split('=').next().unwrap_or(flag);
        let forbidden = [
            "fmad",
            "ftz",
            "prec-div",
            "prec_div",
            "prec-sqrt",
            "prec_sqrt",
            "use_fast_math",
            "use-fast-math",
            "arch",
            "gpu-architecture",
        ];
        if forbidden.contains(&flag) || flag.starts_with("arch") {
            return Err(Error::Invalid(format!(
                "NVRTC option `{opt}`: trackgen sets {} and -arch itself; expected none of them \
                 among the extra options",
                IEEE_OPTIONS.join(" ")
            )));
        }
        opts.push(opt.to_string());
    }
    Ok(opts)
}

/// An NVRTC program, destroyed when dropped.
struct Program(sys::nvrtcProgram);

impl Program {
    /// Creates a program from a source and its name (no headers passed in memory).
    fn create(source: &CStr, name: &CStr) -> Result<Self> {
        nv::create_program(source, Some(name))
            .map(Self)
            .map_err(|e| {
                Error::CudaUnavailable(format!("nvrtcCreateProgram failed: {}", error_string(e.0)))
            })
    }

    /// The program's compile log, without the trailing NUL.
    fn log(&self) -> Result<String> {
        // SAFETY: `self.0` is a live program.
        let raw = unsafe { nv::get_program_log(self.0) }.map_err(|e| {
            Error::CudaUnavailable(format!("nvrtcGetProgramLog failed: {}", error_string(e.0)))
        })?;
        let bytes: Vec<u8> = raw
            .iter()
            .map(|&c| c as u8)
            .take_while(|&b| b != 0)
            .collect();
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by nvrtcCreateProgram and is destroyed exactly once, here.
        // A failure leaks the program, which is all that can be done.
        let _ = unsafe { nv::destroy_program(self.0) };
    }
}

/// `Ok` for `NVRTC_SUCCESS`, else [`Error::CudaUnavailable`] naming the call and the status.
fn check(status: sys::nvrtcResult, call: &str) -> Result<()> {
    status
        .result()
        .map_err(|e| Error::CudaUnavailable(format!("{call} failed: {}", error_string(e.0))))
}

/// NVRTC's name for a status code, e.g. `NVRTC_ERROR_COMPILATION (6)`.
fn error_string(status: sys::nvrtcResult) -> String {
    // SAFETY: nvrtcGetErrorString accepts any value and returns a pointer to a static
    // NUL-terminated string (or null, handled below). It is only called after NVRTC loaded.
    let ptr = unsafe { sys::nvrtcGetErrorString(status) };
    if ptr.is_null() {
        return format!("{status:?}");
    }
    // SAFETY: `ptr` is non-null and points to a static NUL-terminated string.
    let text = unsafe { CStr::from_ptr(ptr) }.to_string_lossy();
    format!("{text} ({})", status as i32)
}

/// Opens `path` for the rest of the process with `RTLD_NOW | RTLD_GLOBAL`.
#[cfg(unix)]
fn open_global(path: &Path) -> std::result::Result<libloading::Library, String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: loading a shared library runs its initialisers; libnvrtc's have no preconditions
    // on the caller. This is the documented way to use NVRTC dynamically.
    unsafe { Library::open(Some(path.as_os_str()), RTLD_NOW | RTLD_GLOBAL) }
        .map(libloading::Library::from)
        .map_err(|e| e.to_string())
}

/// Opens `path` for the rest of the process.
#[cfg(not(unix))]
fn open_global(path: &Path) -> std::result::Result<libloading::Library, String> {
    // SAFETY: as on unix: NVRTC's initialisers have no preconditions.
    unsafe { libloading::Library::new(path.as_os_str()) }.map_err(|e| e.to_string())
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
    fn nvrtc_or_skip(test: &str) -> Option<Nvrtc> {
        match Nvrtc::load() {
            Ok(nvrtc) => Some(nvrtc),
            Err(e) => {
                crate::exec::cuda::skip(test, &e.to_string(), "TRACKGEN_REQUIRE_NVRTC");
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
    fn a_library_that_is_not_nvrtc_is_rejected() {
        // libc is loadable everywhere and has no nvrtcVersion.
        let err = Nvrtc::open(Path::new("libc.so.6")).unwrap_err();
        assert!(err.contains("not an NVRTC library"), "{err}");
    }

    #[test]
    fn options_start_with_the_ieee_set_and_refuse_to_undo_it() {
        let opts = options("sm_90", &[PathBuf::from("/k")], &["-lineinfo"]).unwrap();
        assert_eq!(
            opts,
            [
                "--fmad=false",
                "--ftz=false",
                "--prec-div=true",
                "--prec-sqrt=true",
                "-arch=sm_90",
                "-I/k",
                "-lineinfo"
            ]
        );
        for bad in [
            "--fmad=true",
            "-ftz=true",
            "--use_fast_math",
            "--prec-div=false",
            "-arch=sm_80",
            "--gpu-architecture=sm_80",
        ] {
            let err = options("sm_90", &[], &[bad]).unwrap_err();
            assert!(
                matches!(&err, Error::Invalid(m) if m.contains(bad)),
                "{bad}: {err}"
            );
        }
        for arch in ["90", "sm_", "sm_9a", "compute_90"] {
            let err = options(arch, &[], &[]).unwrap_err();
            assert!(err.to_string().contains(arch), "{err}");
        }
    }

    #[test]
    fn a_bad_source_gives_a_compile_error_with_the_log() {
        let Some(nvrtc) = nvrtc_or_skip("a_bad_source_gives_a_compile_error_with_the_log") else {
            return;
        };
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
        let Some(nvrtc) = nvrtc_or_skip("a_good_source_gives_a_cubin_and_its_warnings") else {
            return;
        };
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
    fn fmad_false_keeps_multiply_and_add_apart() {
        let Some(nvrtc) = nvrtc_or_skip("fmad_false_keeps_multiply_and_add_apart") else {
            return;
        };
        // With contraction allowed, a*b+c becomes one FFMA, the code of an explicit fmaf;
        // trackgen's options keep it an FMUL and an FADD. The kernels' machine code (the ELF
        // section `.text.k`) is compared; the `--fmad=true` compile shows that the comparison
        // sees fusion.
        let separate = "extern \"C\" __global__ void k(float* x) { x[0] = x[1] * x[2] + x[3]; }";
        let fused = "extern \"C\" __global__ void k(float* x) { x[0] = fmaf(x[1], x[2], x[3]); }";
        let code = |compiled: Compiled| elf_section(&compiled.cubin, ".text.k").unwrap();
        let ieee = code(
            nvrtc
                .compile_cubin(separate, "k.cu", "sm_90", &[], &[])
                .unwrap(),
        );
        let fma = code(
            nvrtc
                .compile_cubin(fused, "k.cu", "sm_90", &[], &[])
                .unwrap(),
        );
        let contracted = ["--fmad=true".to_string(), "-arch=sm_90".to_string()];
        let contracted = code(nvrtc.compile_with(separate, "k.cu", &contracted).unwrap());
        assert_eq!(contracted, fma, "--fmad=true did not fuse a*b+c");
        assert_ne!(ieee, fma, "a*b+c fused under trackgen's options");
    }

    /// The bytes of section `name` of a 64-bit little-endian ELF image.
    fn elf_section(elf: &[u8], name: &str) -> Option<Vec<u8>> {
        let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
        let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap()) as usize;
        let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap()) as usize;
        let (shoff, shentsize, shnum, shstrndx) =
            (u64_at(0x28), u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
        let header = |i: usize| shoff + i * shentsize;
        let names = u64_at(header(shstrndx) + 0x18);
        (0..shnum).find_map(|i| {
            let h = header(i);
            let start = names + u32_at(h);
            let end = start + elf[start..].iter().position(|&b| b == 0)?;
            (&elf[start..end] == name.as_bytes()).then(|| {
                let (offset, size) = (u64_at(h + 0x18), u64_at(h + 0x20));
                elf[offset..offset + size].to_vec()
            })
        })
    }

    #[test]
    fn a_nul_byte_is_an_invalid_argument() {
        let Some(nvrtc) = nvrtc_or_skip("a_nul_byte_is_an_invalid_argument") else {
            return;
        };
        let err = nvrtc
            .compile_cubin("x", "a\0b.cu", "sm_80", &[], &[])
            .unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        let err = nvrtc
            .compile_cubin("x", "a.cu", "sm_80", &[], &["-DX=\0"])
            .unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
    }
}
