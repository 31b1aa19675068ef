//! Every CUDA source under `kernels/` compiles with NVRTC, for every architecture trackgen
//! targets, with `--fmad=false` and without a single warning; every `extern "C"` kernel of a
//! `.cu` file is in its CUBIN under its unmangled name.
//!
//! Without NVRTC the test prints one `SKIP:` line and passes, unless `TRACKGEN_REQUIRE_NVRTC=1`
//! (CI sets it), which turns a missing NVRTC into a failure. No GPU is needed: NVRTC compiles
//! for an architecture, not for a device.

use std::path::{Path, PathBuf};

use trackgen::exec::cuda::nvrtc::Nvrtc;

/// The architectures kernels are compiled for: A100 and H100/H200.
const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// The kernel source tree: beside the crate's manifest when built here, else `./kernels` (the
/// device check runs the carried test binary from the repository root).
fn kernels_dir() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    if built.is_dir() {
        built
    } else {
        PathBuf::from("kernels")
    }
}

/// Every `.cu` and `.cuh` file under `dir`, sorted.
fn kernel_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("cu" | "cuh")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The names of the kernels a source defines: `extern "C" __global__ void NAME(` and
/// `TG_KERNEL(NAME, PARAMS)` (`kernels/common/kernel.cuh`) at the start of a line.
fn exported_kernels(source: &str) -> Vec<&str> {
    source
        .lines()
        .filter_map(|line| {
            line.strip_prefix("extern \"C\" __global__ void ")
                .and_then(|rest| rest.split('(').next())
                .or_else(|| {
                    line.strip_prefix("TG_KERNEL(")
                        .and_then(|rest| rest.split(',').next())
                })
        })
        .map(str::trim)
        .collect()
}

#[test]
fn every_kernel_source_compiles_without_warnings() {
    let nvrtc = match Nvrtc::load() {
        Ok(nvrtc) => nvrtc,
        Err(e) => {
            let reason = e.to_string().replace('\n', " ");
            crate::skip::skip(
                "every_kernel_source_compiles_without_warnings",
                &format!("NVRTC unavailable: {reason}"),
                "TRACKGEN_REQUIRE_NVRTC",
            );
            return;
        }
    };
    let root = kernels_dir();
    let files = kernel_files(&root);
    assert!(
        files.iter().any(|f| f.ends_with("common/selftest.cu")),
        "no kernel sources found under {}",
        root.display()
    );
    let mut failures = Vec::new();
    for file in &files {
        let name = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let source = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        for arch in ARCHS {
            match nvrtc.compile_cubin(&source, &name, arch, std::slice::from_ref(&root), &[]) {
                Err(e) => failures.push(format!("{name} ({arch}): {e}")),
                Ok(compiled) => {
                    if compiled.log.to_lowercase().contains("warning") {
                        failures.push(format!("{name} ({arch}) warns:\n{}", compiled.log));
                    }
                    if compiled.cubin.is_empty() {
                        failures.push(format!("{name} ({arch}): empty CUBIN"));
                    }
                    for kernel in exported_kernels(&source) {
                        let found = compiled
                            .cubin
                            .windows(kernel.len())
                            .any(|w| w == kernel.as_bytes());
                        if !found {
                            failures.push(format!("{name} ({arch}): kernel {kernel} not in CUBIN"));
                        }
                    }
                }
            }
        }
    }
    println!(
        "compiled {} kernel files for {ARCHS:?} with NVRTC {:?} from {}",
        files.len(),
        nvrtc.version(),
        nvrtc.path().display()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
