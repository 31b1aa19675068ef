//! The emulated-CUDA executor: the kernel sources compiled as host C++ and run through the same
//! plan as the CPU executor must write the same bytes.
//!
//! Kernels not yet in the emulated library run on the CPU (`cpu_fallback`), so each test also
//! reports which passes ran as kernels; `every_pass_is_a_kernel` pins the set that must.

use std::sync::{Arc, OnceLock};

use trackgen::exec::emulated::EmulatedKernels;
use trackgen::exec::kernels;
use trackgen::exec::plan::Backend;
use trackgen::exec::Launch;
use trackgen::preset::Preset;
use trackgen::track::generators;
use trackgen::track::{Pipeline, TrackBatch};

/// The emulated kernel library, compiled once per test process.
fn emulated() -> Option<Arc<EmulatedKernels>> {
    static KERNELS: OnceLock<Result<Arc<EmulatedKernels>, String>> = OnceLock::new();
    match KERNELS.get_or_init(|| {
        EmulatedKernels::build()
            .map(Arc::new)
            .map_err(|e| e.to_string())
    }) {
        Ok(k) => Some(k.clone()),
        Err(e) => {
            // A missing compiler is the only acceptable reason; a compile error fails.
            assert!(e.contains("needs a C++ compiler"), "{e}");
            crate::skip::skip("emulated", e, "TRACKGEN_REQUIRE_CXX");
            None
        }
    }
}

fn run(
    preset: &Preset,
    n: usize,
    backend: Backend,
    seed: u64,
    masks: &[Vec<u8>],
) -> (Vec<TrackBatch>, Vec<trackgen::exec::plan::Trace>) {
    let stage = generators::from_preset(preset);
    let mut pipe = Pipeline::on_backend(preset, n, backend, stage).unwrap();
    let mut batch = pipe.new_batch(0).unwrap();
    let mut out = Vec::new();
    let mut traces = Vec::new();
    pipe.generate(seed, 0, &mut batch).unwrap();
    out.push(batch.clone());
    traces.push(pipe.last_trace().clone());
    for mask in masks {
        for (g, &m) in batch.generation.iter_mut().zip(mask) {
            *g += u32::from(m);
        }
        pipe.regenerate(seed, mask, &mut batch).unwrap();
        out.push(batch.clone());
        traces.push(pipe.last_trace().clone());
    }
    (out, traces)
}

#[test]
fn emulated_kernels_match_the_cpu_for_every_preset() {
    let Some(kernels) = emulated() else { return };
    for &(name, _) in trackgen::preset::BUILTIN {
        let preset = Preset::load(name).unwrap();
        let n = if preset.generator.name() == "repulsive" {
            64
        } else {
            512
        };
        let masks: Vec<Vec<u8>> = (0..2u64)
            .map(|k| {
                (0..n as u64)
                    .map(|e| u8::from(trackgen::rng::mix64(e ^ (k << 32)) % 3 == 0))
                    .collect()
            })
            .chain(std::iter::once(vec![0; n]))
            .collect();
        let cpu = run(&preset, n, Backend::Cpu(Launch::new()), 7, &masks).0;
        let backend = Backend::Emulated {
            kernels: kernels.clone(),
            launch: Launch::new(),
            cpu_fallback: true,
        };
        let (emu, traces) = run(&preset, n, backend, 7, &masks);
        for (i, (a, b)) in cpu.iter().zip(&emu).enumerate() {
            assert!(
                a.bytes_eq(b),
                "{name}: run {i} differs between the CPU and the emulated kernels"
            );
        }
        let kernels_run: Vec<_> = traces[0].kernels.keys().collect();
        let cpu_run: Vec<_> = traces[0].cpu_passes.keys().collect();
        eprintln!("{name}: kernels {kernels_run:?}; on the CPU {cpu_run:?}");
        // The all-zero mask runs nothing but the mask's reduction.
        let last = traces.last().unwrap();
        assert_eq!(
            last.passes(),
            0,
            "{name}: an all-zero mask ran passes: {last:?}"
        );
    }
}

#[test]
fn the_source_table_lists_every_kernel_file() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut on_disk = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("cu" | "cuh")
            ) {
                on_disk.push(
                    path.strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = kernels::SOURCES
        .iter()
        .map(|s| s.path.to_string())
        .collect();
    listed.sort();
    assert_eq!(
        listed, on_disk,
        "src/exec/kernels.rs must list exactly the files under kernels/"
    );
    for s in kernels::SOURCES {
        let text = std::fs::read_to_string(root.join(s.path)).unwrap();
        assert_eq!(text, s.text, "{}: the embedded text is stale", s.path);
    }
}
