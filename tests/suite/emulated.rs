//! The emulated-CUDA executor: the kernel sources compiled as host C++ and run through the same
//! plan as the CPU executor must write the same bytes.
//!
//! A pass whose kernel is not in the emulated library runs on the CPU (`cpu_fallback`), so each
//! run reports which passes ran as kernels; the preset test pins that every pass of every preset
//! ran as a kernel.

use std::sync::{Arc, OnceLock};

use trackgen::exec::emulated::EmulatedKernels;
use trackgen::exec::kernels;
use trackgen::exec::plan::{self, Access, Backend, BufId, BufferSet, Op, Pass};
use trackgen::exec::Launch;
use trackgen::preset::Preset;
use trackgen::track::generators;
use trackgen::track::{Pipeline, TrackBatch};

/// The emulated kernel library, compiled once per test process.
pub(crate) fn emulated() -> Option<Arc<EmulatedKernels>> {
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

/// `generate` at generation 0, then `regenerate` for each mask (bumping the masked envs'
/// generation): the batch and the trace after each run.
pub(crate) fn run(
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
        // Every pass launched is timed, under its kernel's name; the control kernels of the
        // plan's `Any` steps are not passes.
        let timed: Vec<&str> = traces[0].pass_time.keys().map(String::as_str).collect();
        let passes: Vec<&str> = traces[0]
            .kernels
            .keys()
            .copied()
            .filter(|k| !["tg_clear_word", "tg_any_u8"].contains(k))
            .collect();
        assert_eq!(timed, passes, "{name}");
        // Every pass has its kernel: the generator's (kernels/track/<generator>.cu) and the
        // stages' after it (kernels/track/stages.cu).
        assert!(
            cpu_run.is_empty(),
            "{name}: passes ran on the CPU: {cpu_run:?}"
        );
        // The all-zero mask runs nothing but the mask's reduction.
        let last = traces.last().unwrap();
        assert_eq!(
            last.passes(),
            0,
            "{name}: an all-zero mask ran passes: {last:?}"
        );
    }
}

/// Variants of the `track` preset that take the paths the built-in presets rarely or never take:
/// the uniform and random-walk height profiles, a capacity that caps the resampled count, and a
/// single short attempt with a wide separation margin (the relaxation's separation pass, failed
/// validity, the fallback circle), curvature-adaptive resampling with a range wide enough to
/// blend toward the mean, and with a capped count. Each is byte-identical on the emulated kernels and the CPU, and
/// each is checked to take its path.
#[test]
fn emulated_kernels_match_the_cpu_off_the_presets_paths() {
    /// Whether a generated batch shows that its variant took the path it is for.
    type TakesPath = fn(&TrackBatch) -> bool;
    let Some(kernels) = emulated() else { return };
    let n = 128;
    let variants: [(&str, &str, TakesPath); 6] = [
        (
            "uniform heights",
            "[zprofile]\nkind = \"uniform\"\namplitude_m = 4.0\n",
            |b| b.center.iter().any(|p| p.z != 0.0 && p.z.is_finite()),
        ),
        (
            "random-walk heights",
            "[zprofile]\nkind = \"random_walk\"\namplitude_m = 4.0\n",
            |b| b.center.iter().any(|p| p.z != 0.0 && p.z.is_finite()),
        ),
        ("capped count", "[track]\nn_max = 16\n", |b| {
            b.count.contains(&16)
        }),
        (
            "one short attempt",
            // Wide tracks: the softened generators draw curves that pass on their first attempt
            // at the default width.
            "[track]\nmax_attempts = 1\nhalf_width_m = 28\nmin_turn_radius_m = 28\n\
             [relax]\nmax_windows = 1\nsweeps_per_window = 1\nmargin = 2.0\n",
            |b| b.valid.contains(&0) && b.valid.contains(&1),
        ),
        (
            "curvature sampling, blended",
            "[track]\nsampling = \"curvature\"\nspacing_m = 1.0\nmax_spacing_m = 200.0\n\
             sagitta_m = 0.05\n[relax]\nmax_windows = 0\n",
            |b| uneven(b, 2.0),
        ),
        (
            "curvature sampling, capped count",
            "[track]\nsampling = \"curvature\"\nn_max = 24\nmax_spacing_m = 25.0\n\
             [relax]\nmax_windows = 0\n",
            |b| b.count.contains(&24) && uneven(b, 1.3),
        ),
    ];
    let mask: Vec<u8> = (0..n as u64)
        .map(|e| u8::from(trackgen::rng::mix64(e) % 2 == 0))
        .collect();
    for (name, text, takes_path) in variants {
        let preset = Preset::parse(text, name).unwrap();
        let cpu = run(
            &preset,
            n,
            Backend::Cpu(Launch::new()),
            11,
            std::slice::from_ref(&mask),
        )
        .0;
        let backend = Backend::Emulated {
            kernels: kernels.clone(),
            launch: Launch::new(),
            cpu_fallback: true,
        };
        let emu = run(&preset, n, backend, 11, std::slice::from_ref(&mask)).0;
        for (i, (a, b)) in cpu.iter().zip(&emu).enumerate() {
            assert!(
                a.bytes_eq(b),
                "{name}: run {i} differs between the CPU and the emulated kernels"
            );
        }
        assert!(takes_path(&cpu[0]), "{name}: the variant misses its path");
    }
}

/// Whether some env of `b` has a longest segment over `ratio` times its shortest.
fn uneven(b: &TrackBatch, ratio: f32) -> bool {
    (0..b.n_envs).any(|e| {
        let pts = b.points(&b.center, e);
        let n = pts.len();
        let seg: Vec<f32> = (0..n)
            .map(|i| (pts[(i + 1) % n].truncate() - pts[i].truncate()).length())
            .collect();
        let lo = seg.iter().cloned().fold(f32::INFINITY, f32::min);
        let hi = seg.iter().cloned().fold(0.0, f32::max);
        n > 0 && hi > ratio * lo
    })
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

/// A toy state: per-env flags, a condition word, and a count of body runs per env.
struct Toy {
    flags: Vec<u8>,
    cond: Vec<u32>,
    runs: Vec<u32>,
}

impl BufferSet for Toy {
    fn bytes_mut(&mut self, id: BufId) -> &mut [u8] {
        match id.0 {
            0 => &mut self.flags,
            1 => bytemuck::cast_slice_mut(&mut self.cond),
            _ => bytemuck::cast_slice_mut(&mut self.runs),
        }
    }
}

/// `While` over a body that clears env e's flag after e + 1 windows (env 7 never clears), and
/// `If` over a flag set: the loop stops at its cap, or when every flag is clear; the `If` runs
/// its body only for a set flag.
#[test]
fn loops_stop_at_their_cap_and_ifs_skip_on_a_clear_word() {
    let mut backends = vec![Backend::Cpu(Launch::new())];
    if let Some(kernels) = emulated() {
        backends.push(Backend::Emulated {
            kernels,
            launch: Launch::new(),
            cpu_fallback: true,
        });
    }
    let (flags, cond) = (BufId(0), BufId(1));
    let count_and_clear = |limit: u32| -> Op<Toy> {
        Op::Pass(Pass {
            kernel: None,
            name: "count".into(),
            params: Vec::new(),
            buffers: vec![(flags, Access::Write), (BufId(2), Access::Write)],
            lanes: 8,
            cpu: Arc::new(move |t: &mut Toy, _: &Launch| {
                for (e, (f, r)) in t.flags.iter_mut().zip(&mut t.runs).enumerate() {
                    if *f != 0 {
                        *r += 1;
                        *f = u8::from(e as u32 == 7 || *r < (e as u32 + 1).min(limit));
                    }
                }
            }),
        })
    };
    for backend in &backends {
        for (cap, first_flags, expect_windows) in [
            (3u32, vec![1u8; 8], 3u32),
            (20, vec![1, 1, 1, 0, 0, 0, 0, 0], 3),
            (20, vec![0; 8], 0),
        ] {
            let mut toy = Toy {
                flags: first_flags.clone(),
                cond: vec![0],
                runs: vec![0; 8],
            };
            let ops = vec![
                Op::Any { flags, cond },
                Op::While {
                    cond,
                    max_windows: cap,
                    body: vec![count_and_clear(u32::MAX), Op::Any { flags, cond }],
                },
            ];
            let trace = plan::run(&ops, backend, &mut toy).unwrap();
            assert_eq!(trace.windows, vec![expect_windows], "{backend:?} cap {cap}");
            let most = toy.runs.iter().max().copied().unwrap();
            assert_eq!(
                most, expect_windows,
                "{backend:?} cap {cap}: {:?}",
                toy.runs
            );
        }
        for set in [0u8, 1] {
            let mut toy = Toy {
                flags: vec![0, 0, set, 0, 0, 0, 0, 0],
                cond: vec![7],
                runs: vec![0; 8],
            };
            let ops = vec![
                Op::Any { flags, cond },
                Op::If {
                    cond,
                    body: vec![count_and_clear(1)],
                },
            ];
            let trace = plan::run(&ops, backend, &mut toy).unwrap();
            assert_eq!(trace.passes(), u32::from(set), "{backend:?}");
            assert_eq!(toy.runs[2], u32::from(set));
        }
    }
}

/// A pass without a kernel is a clear error on a kernel backend without CPU fallback.
#[test]
fn a_pass_without_a_kernel_is_refused_by_the_emulated_backend() {
    let Some(kernels) = emulated() else { return };
    let backend = Backend::Emulated {
        kernels,
        launch: Launch::new(),
        cpu_fallback: false,
    };
    let ops = vec![Op::Pass(Pass {
        kernel: None,
        name: "my-stage".into(),
        params: Vec::new(),
        buffers: vec![],
        lanes: 1,
        cpu: Arc::new(|_: &mut Toy, _: &Launch| {}),
    })];
    let mut toy = Toy {
        flags: vec![0],
        cond: vec![0],
        runs: vec![0],
    };
    let err = plan::run(&ops, &backend, &mut toy).unwrap_err().to_string();
    assert!(
        err.contains("my-stage") && err.contains("no kernel"),
        "{err}"
    );
}

/// `trackgen generate --device emulated` writes the CPU's corpus byte for byte (a track and a
/// gate preset); `--device cuda` without a usable GPU is an error that says why and writes
/// nothing.
#[test]
fn generate_on_the_emulated_device_writes_the_cpu_corpus() {
    use crate::cli::{assert_ok, stderr, trackgen};
    use crate::dir_listing::files;
    if emulated().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for preset in ["polar", "gates"] {
        for device in ["cpu", "emulated"] {
            let out = format!("{preset}-{device}");
            let args = [
                "generate",
                "--preset",
                preset,
                "--envs",
                "40",
                "--seed",
                "3",
                "--chunk-envs",
                "16",
                "--device",
                device,
                "--out",
                &out,
            ];
            assert_ok(&trackgen(&args, tmp.path()));
        }
        let cpu = files(&tmp.path().join(format!("{preset}-cpu")));
        let emulated = files(&tmp.path().join(format!("{preset}-emulated")));
        assert!(cpu.len() > 3);
        assert_eq!(
            cpu, emulated,
            "{preset}: the emulated device wrote other bytes"
        );
    }
    if trackgen::exec::cuda::probe().is_err() {
        let o = trackgen(
            &[
                "generate", "--envs", "8", "--device", "cuda", "--out", "gpu",
            ],
            tmp.path(),
        );
        assert!(!o.status.success());
        let err = stderr(&o);
        assert!(err.contains("CUDA unavailable"), "{err}");
        assert!(
            !tmp.path().join("gpu").exists(),
            "a failed --device cuda wrote output"
        );
    }
}
