//! The kernel table's compile cache: CUBIN images on disk, keyed by everything that shapes them.
//!
//! A kernel is compiled by NVRTC for the device's architecture at its first use; the CUBIN is
//! stored under a key that hashes (SHA-256) the source, every header it includes (followed
//! through `#include "…"` lines in the include directories, so that a change in a shared header
//! is a new key), the architecture, NVRTC's version and the full option list. A second process
//! with the same inputs loads the file instead of compiling.
//!
//! The directory is, in order: `$TRACKGEN_KERNEL_CACHE`; `$XDG_CACHE_HOME/trackgen/kernels`;
//! `$HOME/.cache/trackgen/kernels`. Files are `<key>.cubin`: an 8-byte magic `TGCUBIN1`, the
//! image's length (u64, little-endian), the image's SHA-256, then the image. They are written
//! atomically (a unique temporary sibling, fsync, rename), so a reader never sees half a file and
//! concurrent writers of one key leave one whole copy. A file that does not check out (wrong
//! magic, length or hash: truncated, corrupted) is not trusted: the kernel is recompiled and the
//! file replaced.
//!
//! Units of the kernel table ([`crate::exec::kernels`], the sources embedded in the library) are
//! compiled by [`KernelCache::load_or_compile_unit`] against the table's own headers, written
//! once per table content under `<dir>/sources/<hash>/` (NVRTC reads headers from files): the
//! library compiles its kernels without a source tree.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::nvrtc::{self, Nvrtc};
use crate::atomic::TempPath;
use crate::exec::kernels;
use crate::{Error, Result};

/// The environment variable naming the cache directory.
pub const DIR_ENV: &str = "TRACKGEN_KERNEL_CACHE";

/// The first bytes of every cache file (its format version is the trailing digit).
const MAGIC: &[u8; 8] = b"TGCUBIN1";
/// Magic, length, SHA-256.
const HEADER_BYTES: usize = 8 + 8 + 32;

/// Where a CUBIN came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Read from a valid cache file.
    Cache,
    /// Compiled now (no file, or one that did not check out) and stored.
    Compiled,
}

/// A CUBIN and where it came from.
#[derive(Clone, Debug)]
pub struct Cubin {
    /// The image, ready for `cuModuleLoadData`.
    pub image: Vec<u8>,
    /// Whether it was read or compiled.
    pub origin: Origin,
    /// The cache file that holds it.
    pub path: PathBuf,
}

/// One kernel source to compile: its text, its file name (for diagnostics), the directories its
/// `#include "…"` lines resolve against, and options beyond trackgen's IEEE set.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// The CUDA C++ text.
    pub text: &'a str,
    /// Its file name, e.g. `common/selftest.cu`.
    pub name: &'a str,
    /// `-I` directories.
    pub include_dirs: &'a [PathBuf],
    /// Extra NVRTC options (see [`nvrtc::options`] for what is refused).
    pub extra_opts: &'a [&'a str],
}

/// A compile cache in one directory.
#[derive(Clone, Debug)]
pub struct KernelCache {
    dir: PathBuf,
}

impl KernelCache {
    /// The cache in `dir` (created on the first store).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The cache in the default directory (see the module doc); an [`Error::Invalid`] when
    /// neither `TRACKGEN_KERNEL_CACHE`, `XDG_CACHE_HOME` nor `HOME` is set.
    pub fn default_location() -> Result<Self> {
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = non_empty(DIR_ENV) {
            return Ok(Self::at(PathBuf::from(dir)));
        }
        if let Some(xdg) = non_empty("XDG_CACHE_HOME") {
            return Ok(Self::at(
                PathBuf::from(xdg).join("trackgen").join("kernels"),
            ));
        }
        if let Some(home) = non_empty("HOME") {
            return Ok(Self::at(
                PathBuf::from(home)
                    .join(".cache")
                    .join("trackgen")
                    .join("kernels"),
            ));
        }
        Err(Error::Invalid(format!(
            "no kernel cache directory: expected {DIR_ENV}, XDG_CACHE_HOME or HOME to be set"
        )))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of `source` compiled for `arch` by `nvrtc_version`: the hex SHA-256 of the
    /// source, its included headers, the architecture, the version and the option list.
    pub fn key(source: &Source<'_>, arch: &str, nvrtc_version: (i32, i32)) -> Result<String> {
        let opts = nvrtc::options(arch, source.include_dirs, source.extra_opts)?;
        let mut hash = Sha256::new();
        let mut field = |tag: &str, bytes: &[u8]| {
            hash.update(tag.as_bytes());
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        };
        field("source", source.text.as_bytes());
        for (path, text) in included_headers(source)? {
            field("header", path.to_string_lossy().as_bytes());
            field("text", &text);
        }
        field("arch", arch.as_bytes());
        field(
            "nvrtc",
            format!("{}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes(),
        );
        for opt in &opts {
            field("option", opt.as_bytes());
        }
        Ok(hex(&hash.finalize()))
    }

    /// The CUBIN of `source` for `arch`: read from the cache when a valid file exists, else
    /// compiled with `nvrtc` and stored atomically.
    pub fn load_or_compile(&self, nvrtc: &Nvrtc, source: &Source<'_>, arch: &str) -> Result<Cubin> {
        let key = Self::key(source, arch, nvrtc.version())?;
        let path = self.dir.join(format!("{key}.cubin"));
        if let Some(image) = read_valid(&path) {
            return Ok(Cubin {
                image,
                origin: Origin::Cache,
                path,
            });
        }
        let opts = nvrtc::options(arch, source.include_dirs, source.extra_opts)?;
        let compiled = nvrtc.compile_with(source.text, source.name, &opts)?;
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        store(&path, &compiled.cubin)?;
        Ok(Cubin {
            image: compiled.cubin,
            origin: Origin::Compiled,
            path,
        })
    }
}

impl KernelCache {
    /// The CUBIN of the kernel unit `path` (a `.cu` file of the kernel table, e.g.
    /// `"track/polar.cu"`) for `arch`, compiled against the table's headers; a path the table
    /// does not list as a unit is an [`Error::Invalid`] naming the units.
    pub fn load_or_compile_unit(&self, nvrtc: &Nvrtc, path: &str, arch: &str) -> Result<Cubin> {
        let unit = kernels::units().find(|u| u.path == path).ok_or_else(|| {
            let units: Vec<&str> = kernels::units().map(|u| u.path).collect();
            Error::Invalid(format!(
                "kernel unit `{path}`: not in the kernel table; expected one of {}",
                units.join(", ")
            ))
        })?;
        let root = self.table_sources()?;
        self.load_or_compile(
            nvrtc,
            &Source {
                text: unit.text,
                name: unit.path,
                include_dirs: &[root],
                extra_opts: &[],
            },
            arch,
        )
    }

    /// The directory holding the kernel table's sources (the include root), written once per
    /// table content: into a temporary sibling, marked complete, renamed into place (a
    /// concurrent writer that loses the race removes its copy).
    fn table_sources(&self) -> Result<PathBuf> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let mut hash = Sha256::new();
        for source in kernels::SOURCES {
            for bytes in [source.path.as_bytes(), source.text.as_bytes()] {
                hash.update((bytes.len() as u64).to_le_bytes());
                hash.update(bytes);
            }
        }
        let parent = self.dir.join("sources");
        let root = parent.join(&hex(&hash.finalize())[..16]);
        let complete = |dir: &Path| dir.join(".complete").is_file();
        if complete(&root) {
            return Ok(root);
        }
        std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
        let tmp = TempPath::new(parent.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        )));
        kernels::write_tree(tmp.path())?;
        let marker = tmp.path().join(".complete");
        std::fs::write(&marker, b"").map_err(|e| Error::io(&marker, e))?;
        match std::fs::rename(tmp.path(), &root) {
            Ok(()) => tmp.keep(),
            // Another writer got there first (the temporary copy goes with `tmp`).
            Err(_) if complete(&root) => {}
            Err(e) => return Err(Error::io(&root, e)),
        }
        Ok(root)
    }
}

/// The image in the cache file `path`, or `None` if it is absent or does not check out.
fn read_valid(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.len() < HEADER_BYTES || &bytes[..8] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
    let image = &bytes[HEADER_BYTES..];
    if len != image.len() as u64 || Sha256::digest(image).as_slice() != &bytes[16..HEADER_BYTES] {
        return None;
    }
    Some(image.to_vec())
}

/// Writes `image` to `path` atomically through a temporary sibling unique to this call.
fn store(path: &Path, image: &[u8]) -> Result<()> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let tmp = TempPath::new(path.with_file_name(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    )));
    let mut file = File::create(tmp.path()).map_err(|e| Error::io(tmp.path(), e))?;
    let mut header = Vec::with_capacity(HEADER_BYTES);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&(image.len() as u64).to_le_bytes());
    header.extend_from_slice(&Sha256::digest(image));
    file.write_all(&header)
        .and_then(|()| file.write_all(image))
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(tmp.path(), e))?;
    std::fs::rename(tmp.path(), path).map_err(|e| Error::io(path, e))?;
    tmp.keep();
    Ok(())
}

/// Every header `source` includes with `#include "…"`, transitively, each once: its resolved
/// path and bytes, in first-inclusion order. A name found in no include directory is skipped
/// (NVRTC reports it when compiling).
fn included_headers(source: &Source<'_>) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut found: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut pending: Vec<String> = quoted_includes(source.text);
    pending.reverse();
    while let Some(name) = pending.pop() {
        let Some(path) = source
            .include_dirs
            .iter()
            .map(|dir| dir.join(&name))
            .find(|p| p.is_file())
        else {
            continue;
        };
        if found.iter().any(|(p, _)| *p == path) {
            continue;
        }
        let text = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let mut nested = quoted_includes(&String::from_utf8_lossy(&text));
        nested.reverse();
        pending.extend(nested);
        found.push((path, text));
    }
    Ok(found)
}

/// The names of a text's `#include "NAME"` lines, in order.
fn quoted_includes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest
                .strip_prefix("include")?
                .trim_start()
                .strip_prefix('"')?;
            Some(rest.split('"').next()?.to_string())
        })
        .collect()
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str =
        "#include \"inc/a.cuh\"\nextern \"C\" __global__ void k(float* x) { x[0] = A; }\n";

    /// A kernel directory with `inc/a.cuh` (which includes `inc/b.cuh`).
    fn kernel_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("inc")).unwrap();
        std::fs::write(
            dir.path().join("inc/a.cuh"),
            "#include \"inc/b.cuh\"\n#define A B\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("inc/b.cuh"), "#define B 2.0f\n").unwrap();
        dir
    }

    #[test]
    fn the_key_covers_source_headers_arch_version_and_options() {
        let dir = kernel_dir();
        let dirs = [dir.path().to_path_buf()];
        let source = Source {
            text: KERNEL,
            name: "k.cu",
            include_dirs: &dirs,
            extra_opts: &[],
        };
        let key = KernelCache::key(&source, "sm_90", (13, 0)).unwrap();
        assert_eq!(key.len(), 64);
        assert_eq!(key, KernelCache::key(&source, "sm_90", (13, 0)).unwrap());
        let mut others = vec![
            KernelCache::key(&source, "sm_80", (13, 0)).unwrap(),
            KernelCache::key(&source, "sm_90", (13, 1)).unwrap(),
            KernelCache::key(
                &Source {
                    extra_opts: &["-lineinfo"],
                    ..source
                },
                "sm_90",
                (13, 0),
            )
            .unwrap(),
            KernelCache::key(
                &Source {
                    text: &KERNEL.replace("x[0]", "x[1]"),
                    ..source
                },
                "sm_90",
                (13, 0),
            )
            .unwrap(),
        ];
        // A change in a header two levels down is a new key.
        std::fs::write(dir.path().join("inc/b.cuh"), "#define B 3.0f\n").unwrap();
        others.push(KernelCache::key(&source, "sm_90", (13, 0)).unwrap());
        for other in &others {
            assert_ne!(*other, key);
        }
        let mut unique = others.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), others.len());
    }

    #[test]
    fn the_default_directory_follows_the_environment_order() {
        // Only the explicit-directory case is safe to test in a multi-threaded test process
        // (the others read HOME/XDG_CACHE_HOME, which other tests do not set either).
        let cache = KernelCache::at("/some/dir");
        assert_eq!(cache.dir(), Path::new("/some/dir"));
        if std::env::var_os(DIR_ENV).is_none() {
            if let Ok(cache) = KernelCache::default_location() {
                assert!(
                    cache.dir().ends_with("trackgen/kernels"),
                    "{:?}",
                    cache.dir()
                );
            }
        }
    }

    #[test]
    fn a_file_that_does_not_check_out_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.cubin");
        store(&path, b"\x7fELF image").unwrap();
        assert_eq!(read_valid(&path).unwrap(), b"\x7fELF image");
        let good = std::fs::read(&path).unwrap();
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let mut bad_magic = good.clone();
        bad_magic[0] = b'X';
        for bad in [
            &good[..good.len() - 1],
            &flipped,
            &bad_magic,
            &good[..10],
            b"",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(read_valid(&path).is_none(), "{bad:?} was trusted");
        }
        // Only the stored file remains: no temporary siblings.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn kernel_table_units_compile_against_the_table_headers() {
        let nvrtc = match Nvrtc::load() {
            Ok(n) => n,
            Err(e) => {
                crate::exec::cuda::skip(
                    "kernel_table_units_compile_against_the_table_headers",
                    &e.to_string(),
                    "TRACKGEN_REQUIRE_NVRTC",
                );
                return;
            }
        };
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(cache_dir.path());
        let first = cache
            .load_or_compile_unit(&nvrtc, "exec/control.cu", "sm_90")
            .unwrap();
        assert_eq!(first.origin, Origin::Compiled);
        let again = cache
            .load_or_compile_unit(&nvrtc, "exec/control.cu", "sm_90")
            .unwrap();
        assert_eq!((again.origin, again.image), (Origin::Cache, first.image));
        // One copy of the table's sources, complete, and no temporary left.
        let sources: Vec<_> = std::fs::read_dir(cache_dir.path().join("sources"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(sources.len(), 1, "{sources:?}");
        assert!(sources[0].join(".complete").is_file());
        assert!(sources[0].join("common/kernel.cuh").is_file());
        let err = cache
            .load_or_compile_unit(&nvrtc, "common/kernel.cuh", "sm_90")
            .unwrap_err();
        assert!(err.to_string().contains("exec/control.cu"), "{err}");
    }

    #[test]
    fn a_second_load_hits_the_cache_and_a_corrupt_file_is_recompiled() {
        let nvrtc = match Nvrtc::load() {
            Ok(n) => n,
            Err(e) => {
                crate::exec::cuda::skip(
                    "a_second_load_hits_the_cache_and_a_corrupt_file_is_recompiled",
                    &e.to_string(),
                    "TRACKGEN_REQUIRE_NVRTC",
                );
                return;
            }
        };
        let kernels = kernel_dir();
        let dirs = [kernels.path().to_path_buf()];
        let source = Source {
            text: KERNEL,
            name: "k.cu",
            include_dirs: &dirs,
            extra_opts: &[],
        };
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = KernelCache::at(cache_dir.path().join("kernels"));
        let first = cache.load_or_compile(&nvrtc, &source, "sm_90").unwrap();
        assert_eq!(first.origin, Origin::Compiled);
        assert_eq!(&first.image[..4], b"\x7fELF");
        let second = cache.load_or_compile(&nvrtc, &source, "sm_90").unwrap();
        assert_eq!(second.origin, Origin::Cache);
        assert_eq!(second.image, first.image);
        assert_eq!(second.path, first.path);
        // Corrupt one byte of the image: recompiled, and the file repaired.
        let mut bytes = std::fs::read(&first.path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&first.path, &bytes).unwrap();
        let third = cache.load_or_compile(&nvrtc, &source, "sm_90").unwrap();
        assert_eq!(third.origin, Origin::Compiled);
        assert_eq!(third.image, first.image);
        assert_eq!(
            cache
                .load_or_compile(&nvrtc, &source, "sm_90")
                .unwrap()
                .origin,
            Origin::Cache
        );
        // Another architecture is another file.
        let other = cache.load_or_compile(&nvrtc, &source, "sm_80").unwrap();
        assert_eq!(other.origin, Origin::Compiled);
        assert_ne!(other.path, first.path);
    }
}
