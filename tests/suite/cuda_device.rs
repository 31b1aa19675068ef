//! The CUDA layer (`trackgen::exec::cuda`) on a real device: availability, eager launches of the
//! self-test kernels against the Rust math, trackgen's kernel ABI, batch transfers, a foreign
//! capture joined by IF and WHILE nodes, and a buffer kept alive by a graph alone.
//!
//! Without a usable GPU (no driver, no device, no NVRTC) each GPU test prints one `SKIP:` line
//! and passes, unless `TRACKGEN_REQUIRE_CUDA=1` (`scripts/device-check` sets it on the GPU
//! machine), which turns a skip into a failure. The availability test runs everywhere: no GPU
//! must be an error value with a reason, never a panic.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytemuck::{Pod, Zeroable};
use trackgen::exec::cuda::cache::{KernelCache, Source};
use trackgen::exec::cuda::{
    probe, Arg, CaptureMode, ConditionalKind, CudaDevice, Kernel, Module, Recorder,
};
use trackgen::exec::Launch;
use trackgen::rng::{self, LaneRng};
use trackgen::{math, Error};

const REQUIRE: &str = "TRACKGEN_REQUIRE_CUDA";

/// The kernel source tree: beside the crate's manifest when built here, else `./kernels` (the
/// device check runs the carried binary from the repository root).
fn kernels_dir() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    if built.is_dir() {
        built
    } else {
        PathBuf::from("kernels")
    }
}

/// Device 0 with kernels cached under the temporary directory, or `None` after a `SKIP:` line.
fn device_or_skip(test: &str) -> Option<CudaDevice> {
    let device = CudaDevice::new(0).and_then(|d| {
        trackgen::exec::cuda::nvrtc::Nvrtc::load()?;
        Ok(d.with_cache(KernelCache::at(
            std::env::temp_dir().join("trackgen-test-kernels"),
        )))
    });
    match device {
        Ok(device) => Some(device),
        Err(e) => {
            crate::skip::skip(test, &e.to_string().replace('\n', " "), REQUIRE);
            None
        }
    }
}

/// Loads `kernels/<name>` compiled for the device.
fn load_file(device: &CudaDevice, name: &str) -> Module {
    let dir = kernels_dir();
    let text = std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join(name).display()));
    load_source(device, &text, name)
}

/// Loads a unit of the kernel table (embedded in the library) compiled for the device.
fn load_unit(device: &CudaDevice, path: &str) -> Module {
    let cubin = device.unit_cubin(path).unwrap();
    device.load_module(&cubin.image).unwrap()
}

/// Loads a kernel source compiled for the device.
fn load_source(device: &CudaDevice, text: &str, name: &str) -> Module {
    let dirs = [kernels_dir()];
    let cubin = device
        .cubin(&Source {
            text,
            name,
            include_dirs: &dirs,
            extra_opts: &[],
        })
        .unwrap();
    device.load_module(&cubin.image).unwrap()
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn download_words(device: &CudaDevice, buffer: &trackgen::exec::cuda::DeviceBuffer) -> Vec<u32> {
    let mut bytes = vec![0u8; buffer.len()];
    device.download(buffer, &mut bytes).unwrap();
    words(&bytes)
}

/// Whether two float bit patterns are equal under the parity rule (any NaN equals any NaN).
fn same_f32(a: u32, b: u32) -> bool {
    a == b || (f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}

#[test]
fn cuda_unavailable_is_an_error_with_a_reason() {
    match probe() {
        Ok(info) => {
            assert!(info.devices > 0 && info.version >= 12040, "{info:?}");
            assert!(
                CudaDevice::new(info.devices).is_err(),
                "an ordinal past the last"
            );
        }
        Err(Error::CudaUnavailable(reason)) => {
            assert!(!reason.is_empty());
            match CudaDevice::new(0) {
                Err(Error::CudaUnavailable(again)) => assert_eq!(again, reason),
                other => panic!("probe failed but CudaDevice::new gave {other:?}"),
            }
            crate::skip::skip(
                "cuda_unavailable_is_an_error_with_a_reason (device half)",
                &reason,
                REQUIRE,
            );
        }
        Err(other) => panic!("expected CudaUnavailable, got {other}"),
    }
}

#[test]
fn selftest_kernels_match_the_rust_math_and_rng() {
    let Some(device) = device_or_skip("selftest_kernels_match_the_rust_math_and_rng") else {
        return;
    };
    let module = load_file(&device, "common/selftest.cu");
    let math_kernel = module.kernel("tg_selftest_math_kernel").unwrap();
    let stream = device.stream().clone();
    // Structured values and random bit patterns: 2^16 arguments per op.
    let mut xs: Vec<f32> = vec![0.0, -0.0, f32::INFINITY, f32::NAN, f32::MAX, 1.0, math::PI];
    xs.extend((-300..300).map(|i| i as f32 * 0.25));
    xs.extend((0..1u64 << 16).map(|i| f32::from_bits(rng::mix64(i) as u32)));
    xs.truncate(1 << 16);
    let n = xs.len() as u32;
    let ys: Vec<f32> = (0..n as u64)
        .map(|i| f32::from_bits(rng::mix64(i + (1 << 40)) as u32))
        .collect();
    let a = device.alloc_from(bytemuck::cast_slice(&xs)).unwrap();
    let b = device.alloc_from(bytemuck::cast_slice(&ys)).unwrap();
    let out = device.alloc(xs.len() * 4).unwrap();
    type Op = (u32, &'static str, fn(f32, f32) -> f32);
    let ops: [Op; 9] = [
        (0, "sin", |x, _| math::sin(x)),
        (1, "cos", |x, _| math::cos(x)),
        (2, "sin_cos().0", |x, _| math::sin_cos(x).0),
        (3, "sin_cos().1", |x, _| math::sin_cos(x).1),
        (4, "atan2", math::atan2),
        (5, "exp", |x, _| math::exp(x)),
        (6, "ln", |x, _| math::ln(x)),
        (7, "wrap_angle", |x, _| math::wrap_angle(x)),
        (8, "round_small", |x, _| math::round_small(x)),
    ];
    let mut failures = Vec::new();
    for (op, name, f) in ops {
        math_kernel
            .launch(
                &stream,
                n.div_ceil(128),
                128,
                &[
                    Arg::U32(op),
                    Arg::Buffer(&a),
                    Arg::Buffer(&b),
                    Arg::Buffer(&out),
                    Arg::U32(n),
                ],
            )
            .unwrap();
        let got = download_words(&device, &out);
        let bad: Vec<usize> = (0..xs.len())
            .filter(|&i| !same_f32(f(xs[i], ys[i]).to_bits(), got[i]))
            .collect();
        if let Some(&i) = bad.first() {
            failures.push(format!(
                "{name}: {} of {n} differ, e.g. x = {:#010x}: rust {:#010x}, device {:#010x}",
                bad.len(),
                xs[i].to_bits(),
                f(xs[i], ys[i]).to_bits(),
                got[i]
            ));
        }
    }
    // Draws: 1024 lanes × 32 rounds of next_u32, unit, below, signed, range.
    let lanes = 1024u32;
    let rounds = 32u32;
    let mut params = Vec::new();
    let mut want = Vec::new();
    for i in 0..u64::from(lanes) {
        let (seed, env, generation, stage) = (rng::mix64(i), i, i as u32 * 7, (i % 5) as u32);
        let (below_n, lo, hi) = (1 + (i as u32 % 1000), -1.5f32, 2.5f32);
        params.extend([
            seed as u32,
            (seed >> 32) as u32,
            env as u32,
            (env >> 32) as u32,
            generation,
            stage,
            below_n,
            lo.to_bits(),
            hi.to_bits(),
        ]);
        let mut lane = LaneRng::new(seed, env, generation, stage);
        for _ in 0..rounds {
            want.push(lane.next_u32());
            want.push(lane.unit().to_bits());
            want.push(lane.below(below_n));
            want.push(lane.signed().to_bits());
            want.push(lane.range(lo, hi).to_bits());
        }
    }
    let params = device.alloc_from(bytemuck::cast_slice(&params)).unwrap();
    let draws = device.alloc(want.len() * 4).unwrap();
    module
        .kernel("tg_selftest_draws_kernel")
        .unwrap()
        .launch(
            &stream,
            lanes.div_ceil(128),
            128,
            &[
                Arg::Buffer(&params),
                Arg::U32(rounds),
                Arg::Buffer(&draws),
                Arg::U32(lanes),
            ],
        )
        .unwrap();
    let got = download_words(&device, &draws);
    let bad = (0..want.len()).filter(|&i| want[i] != got[i]).count();
    if bad > 0 {
        failures.push(format!("draws: {bad} of {} differ", want.len()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The parameters of the ABI test kernel (mirrors `struct scale_params`).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ScaleParams {
    scale: f32,
    offset: u32,
}

/// A kernel of trackgen's ABI, declared with `TG_KERNEL` (`kernels/common/kernel.cuh`).
const ABI_KERNEL: &str = r#"
#include "common/kernel.cuh"
struct scale_params { float scale; tg_u32 offset; };
TG_KERNEL(tg_test_scale, scale_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    const float* in = (const float*)buf.ptr[0];
    float* out = (float*)buf.ptr[1];
    out[e] = in[e] * p.scale + (float)(p.offset + e);
}
"#;

#[test]
fn an_abi_kernel_runs_over_its_lanes_and_checks_its_arguments() {
    let Some(device) = device_or_skip("an_abi_kernel_runs_over_its_lanes_and_checks_its_arguments")
    else {
        return;
    };
    let module = load_source(&device, ABI_KERNEL, "abi_test.cu");
    let kernel = module.kernel("tg_test_scale").unwrap();
    assert_eq!(kernel.param_sizes(), [8, 128, 4]);
    // 1000 lanes: not a multiple of the block, so the lane guard matters; the buffers hold
    // 1024 and the tail must stay untouched.
    let lanes = 1000u32;
    let input: Vec<f32> = (0..1024).map(|i| i as f32 * 0.37 - 11.0).collect();
    let sentinel = vec![f32::from_bits(0x7fc0_1234); 1024];
    let a = device.alloc_from(bytemuck::cast_slice(&input)).unwrap();
    let b = device.alloc_from(bytemuck::cast_slice(&sentinel)).unwrap();
    let params = ScaleParams {
        scale: 1.75,
        offset: 3,
    };
    kernel
        .launch_lanes(device.stream(), &params, &[&a, &b], lanes)
        .unwrap();
    let got = download_words(&device, &b);
    for (i, &g) in got.iter().enumerate() {
        let want = if i < lanes as usize {
            (input[i] * params.scale + (params.offset + i as u32) as f32).to_bits()
        } else {
            sentinel[i].to_bits()
        };
        assert_eq!(g, want, "lane {i}");
    }
    // Zero lanes launch nothing.
    device.zero(&b).unwrap();
    kernel
        .launch_lanes(device.stream(), &params, &[&a, &b], 0)
        .unwrap();
    assert!(download_words(&device, &b).iter().all(|&w| w == 0));
    // A parameter struct of another size, too many buffers, a wrong raw argument list.
    let err = kernel
        .launch_lanes(device.stream(), &[0u32; 3], &[&a, &b], lanes)
        .unwrap_err();
    assert!(err.to_string().contains("tg_test_scale"), "{err}");
    let many: Vec<&_> = std::iter::repeat(&a).take(17).collect();
    assert!(kernel
        .launch_lanes(device.stream(), &params, &many, lanes)
        .is_err());
    assert!(kernel
        .launch(device.stream(), 1, 128, &[Arg::U32(1)])
        .is_err());
    assert!(module.kernel("no_such_kernel").is_err());

    // The plan's reduction kernels, from the kernel table: the condition word is set iff a flag
    // is.
    #[repr(C)]
    #[derive(Clone, Copy, Pod, Zeroable)]
    struct ControlParams {
        unused: u32,
        pad: u32,
    }
    let control = load_unit(&device, "exec/control.cu");
    let (clear, any) = (
        control.kernel("tg_clear_word").unwrap(),
        control.kernel("tg_any_u8").unwrap(),
    );
    let word = device.alloc_from(&7u32.to_ne_bytes()).unwrap();
    let none = ControlParams::zeroed();
    for (flags, want) in [
        (vec![0u8; 1000], 0u32),
        (
            {
                let mut f = vec![0u8; 1000];
                f[777] = 1;
                f
            },
            1,
        ),
    ] {
        let flags = device.alloc_from(&flags).unwrap();
        clear
            .launch_lanes(device.stream(), &none, &[&word], 1)
            .unwrap();
        any.launch_lanes(device.stream(), &none, &[&flags, &word], 1000)
            .unwrap();
        assert_eq!(download_words(&device, &word), [want]);
    }
}

#[test]
fn a_track_batch_goes_to_the_device_and_back_byte_identical() {
    let Some(device) = device_or_skip("a_track_batch_goes_to_the_device_and_back_byte_identical")
    else {
        return;
    };
    let preset = trackgen::preset::Preset::load("track").unwrap();
    let mut pipeline = trackgen::track::Pipeline::new(&preset, 16, Launch::new()).unwrap();
    let mut batch = pipeline.new_batch(0).unwrap();
    pipeline.generate(7, 0, &mut batch).unwrap();
    let on_device = device.upload_batch(&batch).unwrap();
    let mut back = pipeline.new_batch(0).unwrap();
    assert!(!back.bytes_eq(&batch));
    device.download_batch(&on_device, &mut back).unwrap();
    assert!(back.bytes_eq(&batch));
    assert!(on_device.buffer("center").is_ok());
    assert!(on_device.buffer("nope").is_err());
}

/// A trivial body kernel: counter[0] += 1 (one thread).
const BUMP_KERNEL: &str = r#"
extern "C" __global__ void tg_test_bump(unsigned int* counter) { counter[0] += 1u; }
extern "C" __global__ void tg_test_copy(const unsigned int* from, unsigned int* to) { to[0] = from[0]; }
"#;

#[test]
fn a_foreign_capture_is_joined_by_if_and_while_nodes() {
    let Some(device) = device_or_skip("a_foreign_capture_is_joined_by_if_and_while_nodes") else {
        return;
    };
    let conditions = load_unit(&device, "exec/condition.cu");
    let set = conditions.kernel("tg_set_condition").unwrap();
    let end_window = conditions.kernel("tg_end_window").unwrap();
    let bump = load_source(&device, BUMP_KERNEL, "bump.cu")
        .kernel("tg_test_bump")
        .unwrap();
    let recorder = Recorder::new(&device).unwrap();
    let word = |v: u32| device.alloc_from(&v.to_ne_bytes()).unwrap();
    let (one, zero) = (word(1), word(0));
    let (if_runs, skipped_runs, while_runs, windows, after) =
        (word(0), word(0), word(0), word(0), word(0));
    let max_windows = 5u32;

    // The test owns the stream and begins the capture itself, as PyTorch would (global mode).
    let stream = device.context().new_stream().unwrap();
    device.begin_capture(&stream, CaptureMode::Global).unwrap();
    let id = device.capture_id(&stream).unwrap().expect("capturing");

    let bump_on = |s: &trackgen::exec::cuda::CudaStream, counter| {
        bump.launch(s, 1, 1, &[Arg::Buffer(counter)])
    };
    let if_true = recorder.condition(&stream, None).unwrap();
    set.launch(&stream, 1, 1, &[if_true.arg(), Arg::Buffer(&one)])
        .unwrap();
    recorder
        .conditional(&stream, if_true, ConditionalKind::If, |s| {
            bump_on(s, &if_runs)
        })
        .unwrap();
    let if_false = recorder.condition(&stream, None).unwrap();
    set.launch(&stream, 1, 1, &[if_false.arg(), Arg::Buffer(&zero)])
        .unwrap();
    recorder
        .conditional(&stream, if_false, ConditionalKind::If, |s| {
            bump_on(s, &skipped_runs)
        })
        .unwrap();
    device.zero_on(&stream, &windows).unwrap();
    let more = recorder.condition(&stream, None).unwrap();
    set.launch(&stream, 1, 1, &[more.arg(), Arg::Buffer(&one)])
        .unwrap();
    recorder
        .conditional(&stream, more, ConditionalKind::While, |s| {
            bump_on(s, &while_runs)?;
            end_window.launch(
                s,
                1,
                1,
                &[
                    more.arg(),
                    Arg::Buffer(&one),
                    Arg::Buffer(&windows),
                    Arg::U32(max_windows),
                ],
            )
        })
        .unwrap();
    // The capture goes on after the nodes, under the same id.
    bump_on(&stream, &after).unwrap();
    assert_eq!(device.capture_id(&stream).unwrap(), Some(id));
    let graph = device.end_capture(&stream).unwrap();
    assert_eq!(device.capture_id(&stream).unwrap(), None);
    // set, IF, set, IF, memset, set, WHILE, bump.
    assert_eq!(graph.node_count().unwrap(), 8);
    let exec = graph.instantiate().unwrap();
    for launch in 1..=2u32 {
        exec.launch(&stream).unwrap();
        stream.synchronize().unwrap();
        let read = |b| download_words(&device, b)[0];
        assert_eq!(read(&if_runs), launch, "IF on a set condition");
        assert_eq!(read(&skipped_runs), 0, "IF on a clear condition");
        assert_eq!(read(&while_runs), launch * max_windows, "WHILE at its cap");
        assert_eq!(read(&windows), max_windows);
        assert_eq!(read(&after), launch, "work after the nodes");
    }
    // Not capturing: recording is refused with a reason.
    let err = recorder.condition(&stream, None).unwrap_err();
    assert!(err.to_string().contains("not capturing"), "{err}");
}

#[test]
fn a_buffer_held_only_by_a_graph_survives_100_replays() {
    let Some(device) = device_or_skip("a_buffer_held_only_by_a_graph_survives_100_replays") else {
        return;
    };
    let module = load_source(&device, BUMP_KERNEL, "bump.cu");
    let (bump, copy): (Kernel, Kernel) = (
        module.kernel("tg_test_bump").unwrap(),
        module.kernel("tg_test_copy").unwrap(),
    );
    let recorder = Recorder::new(&device).unwrap();
    let counter = device.alloc_zeroed(4).unwrap();
    let seen = device.alloc_zeroed(4).unwrap();
    device.synchronize().unwrap();
    let stream = device.context().new_stream().unwrap();
    device.begin_capture(&stream, CaptureMode::Global).unwrap();
    bump.launch(&stream, 1, 1, &[Arg::Buffer(&counter)])
        .unwrap();
    copy.launch(&stream, 1, 1, &[Arg::Buffer(&counter), Arg::Buffer(&seen)])
        .unwrap();
    recorder.pin(&stream, &[&counter], &[&module]).unwrap();
    let graph = device.end_capture(&stream).unwrap();
    let exec = graph.instantiate().unwrap();
    // As PyTorch does: the graph goes, its instantiation stays; then every Rust owner of the
    // counter and the module goes too.
    drop(graph);
    let address = counter.address();
    let watch = counter.watch();
    drop((counter, module, bump, copy));
    assert!(!watch.released(), "released while a graph holds it");
    // Churn the allocator: a freed counter's address would come back.
    let churn: Vec<_> = (0..64)
        .map(|_| device.alloc_from(&[0xab; 4]).unwrap())
        .collect();
    assert!(churn.iter().all(|b| b.address() != address));
    for _ in 0..100 {
        exec.launch(&stream).unwrap();
    }
    stream.synchronize().unwrap();
    assert_eq!(download_words(&device, &seen), [100]);
    assert!(!watch.released());
    // The last graph goes: the user object's destructor (run by the driver, asynchronously)
    // releases the counter and the module onto the free queue, which the next call frees.
    drop(exec);
    let start = Instant::now();
    while !watch.released() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(watch.released(), "the user object's destructor did not run");
    device.reclaim().unwrap();
    drop(churn);
}

#[test]
fn two_recorders_capture_on_two_streams_at_once() {
    let Some(device) = device_or_skip("two_recorders_capture_on_two_streams_at_once") else {
        return;
    };
    let bump = load_source(&device, BUMP_KERNEL, "bump.cu")
        .kernel("tg_test_bump")
        .unwrap();
    let device = &device;
    let bump = &bump;
    let counts: Vec<u32> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(move || {
                    let recorder = Recorder::new(device).unwrap();
                    let runs = device.alloc_zeroed(4).unwrap();
                    device.synchronize().unwrap();
                    let stream = device.context().new_stream().unwrap();
                    device
                        .begin_capture(&stream, CaptureMode::ThreadLocal)
                        .unwrap();
                    let id = device.capture_id(&stream).unwrap();
                    for _ in 0..20 {
                        let always = recorder.condition(&stream, Some(true)).unwrap();
                        recorder
                            .conditional(&stream, always, ConditionalKind::If, |s| {
                                bump.launch(s, 1, 1, &[Arg::Buffer(&runs)])
                            })
                            .unwrap();
                    }
                    assert_eq!(device.capture_id(&stream).unwrap(), id);
                    let exec = device.end_capture(&stream).unwrap().instantiate().unwrap();
                    exec.launch(&stream).unwrap();
                    stream.synchronize().unwrap();
                    download_words(device, &runs)[0]
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(counts, [20, 20]);
}

/// The GPU tests' own kernel sources compile (checked here, where NVRTC runs without a GPU, so
/// that the device check does not fail on a typo).
#[test]
fn the_test_kernels_compile_with_nvrtc() {
    let nvrtc = match trackgen::exec::cuda::nvrtc::Nvrtc::load() {
        Ok(nvrtc) => nvrtc,
        Err(e) => {
            crate::skip::skip(
                "the_test_kernels_compile_with_nvrtc",
                &e.to_string(),
                "TRACKGEN_REQUIRE_NVRTC",
            );
            return;
        }
    };
    let dirs = [kernels_dir()];
    for (name, text) in [("abi_test.cu", ABI_KERNEL), ("bump.cu", BUMP_KERNEL)] {
        let compiled = nvrtc
            .compile_cubin(text, name, "sm_90", &dirs, &[])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            !compiled.log.contains("warning"),
            "{name}: {}",
            compiled.log
        );
    }
}
