//! The track pipeline on a CUDA device writes the bytes of the CPU backend, recorded into a graph
//! (with IF and WHILE nodes) or launched eagerly. Without a GPU the tests print a `SKIP:` line and
//! pass, unless `TRACKGEN_REQUIRE_CUDA=1` (the device check sets it).

use std::sync::Arc;

use trackgen::exec::cuda::CudaKernels;
use trackgen::exec::plan::Backend;
use trackgen::exec::Launch;
use trackgen::preset::{Preset, BUILTIN};
use trackgen::track::{generators, Pipeline, TrackBatch};

const REQUIRE: &str = "TRACKGEN_REQUIRE_CUDA";

fn kernels_or_skip(test: &str) -> Option<Arc<CudaKernels>> {
    match CudaKernels::new(0) {
        Ok(k) => Some(Arc::new(k)),
        Err(e) => {
            crate::skip::skip(test, &e.to_string().replace('\n', " "), REQUIRE);
            None
        }
    }
}

/// `generate`, two random masked `regenerate`s (advancing the masked envs' generations) and an
/// all-zero one, each batch kept.
fn runs(pipe: &mut Pipeline, n: usize, seed: u64) -> Vec<TrackBatch> {
    let mut batch = pipe.new_batch(0).unwrap();
    pipe.generate(seed, 0, &mut batch).unwrap();
    let mut out = vec![batch.clone()];
    for k in 0..3u64 {
        let mask: Vec<u8> = (0..n as u64)
            .map(|e| u8::from(k < 2 && trackgen::rng::mix64(e ^ (k << 40)) % 4 == 0))
            .collect();
        for (g, &m) in batch.generation.iter_mut().zip(&mask) {
            *g += u32::from(m);
        }
        pipe.regenerate(seed, &mask, &mut batch).unwrap();
        out.push(batch.clone());
    }
    out
}

#[test]
fn the_cuda_pipeline_matches_the_cpu_for_every_preset() {
    let Some(kernels) = kernels_or_skip("the_cuda_pipeline_matches_the_cpu_for_every_preset")
    else {
        return;
    };
    for &(name, _) in BUILTIN {
        let preset = Preset::load(name).unwrap();
        let n = if preset.generator.name() == "repulsive" {
            512
        } else {
            4096
        };
        let stage = generators::from_preset(&preset);
        let mut cpu = Pipeline::with_stage(&preset, n, Launch::new(), stage.clone()).unwrap();
        let expected = runs(&mut cpu, n, 11);
        for graphs in [true, false] {
            let backend = Backend::Cuda {
                kernels: kernels.clone(),
                launch: Launch::new(),
            };
            let mut gpu = Pipeline::on_backend(&preset, n, backend, stage.clone()).unwrap();
            gpu.set_graphs(graphs);
            let got = runs(&mut gpu, n, 11);
            for (i, (a, b)) in expected.iter().zip(&got).enumerate() {
                assert!(
                    a.bytes_eq(b),
                    "{name} (graphs: {graphs}): run {i} differs between the CPU and the GPU"
                );
            }
            if !graphs {
                // Eagerly, an all-zero mask runs no stage kernel (only the mask's reduction).
                assert_eq!(
                    gpu.last_trace().passes(),
                    0,
                    "{name}: {:?}",
                    gpu.last_trace()
                );
            }
        }
    }
}

/// A pipeline's graph is recorded once per seed: a second seed re-records (never replays a
/// stale graph), and going back re-records again with the same result.
#[test]
fn a_changed_seed_re_records_the_graph() {
    let Some(kernels) = kernels_or_skip("a_changed_seed_re_records_the_graph") else {
        return;
    };
    let preset = Preset::load("polar").unwrap();
    let stage = generators::from_preset(&preset);
    let backend = Backend::Cuda {
        kernels,
        launch: Launch::new(),
    };
    let mut gpu = Pipeline::on_backend(&preset, 256, backend, stage.clone()).unwrap();
    let mut cpu = Pipeline::with_stage(&preset, 256, Launch::new(), stage).unwrap();
    for seed in [1u64, 2, 1] {
        let (mut a, mut b) = (cpu.new_batch(0).unwrap(), gpu.new_batch(0).unwrap());
        cpu.generate(seed, 0, &mut a).unwrap();
        gpu.generate(seed, 0, &mut b).unwrap();
        assert!(a.bytes_eq(&b), "seed {seed}");
    }
}

/// The device table of the README (run by `scripts/device-check`, ignored otherwise): tracks/s
/// per generator at E = 4096 and 65536 (a full regenerate replayed from its graph, device-resident,
/// no transfers), and the replay time of a regenerate with 100%, 1% and 0% of the envs masked
/// (the 0% row is the cost of launching the graph and skipping its IF body). Medians.
#[test]
#[ignore = "a measurement for the device check; prints a table"]
fn cuda_throughput_table() {
    let Some(kernels) = kernels_or_skip("cuda_throughput_table") else {
        return;
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("| preset | E | tracks/s (100%) | 100% ms | 1% ms | 0% µs |");
    println!("|---|---|---|---|---|---|");
    for name in [
        "polar",
        "bezier",
        "hull",
        "voronoi",
        "checkpoint",
        "repulsive",
        "circuit",
    ] {
        let preset = Preset::load(name).unwrap();
        for n in [4096usize, 65536] {
            let stage = generators::from_preset(&preset);
            let backend = Backend::Cuda {
                kernels: kernels.clone(),
                launch: Launch::new(),
            };
            let mut gpu = Pipeline::on_backend(&preset, n, backend, stage).unwrap();
            let mut batch = gpu.new_batch(0).unwrap();
            gpu.generate(3, 0, &mut batch).unwrap();
            let mut time = |mask: &[u8], reps: usize| {
                gpu.set_device_mask(mask).unwrap();
                let samples = (0..reps)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        gpu.regenerate_on_device(3, 0).unwrap();
                        t.elapsed().as_secs_f64()
                    })
                    .collect();
                median(samples)
            };
            let full = time(&vec![1; n], 5);
            let one: Vec<u8> = (0..n).map(|e| u8::from(e % 100 == 0)).collect();
            let one = time(&one, 9);
            let zero = time(&vec![0; n], 21);
            println!(
                "| {name} | {n} | {:.0} | {:.3} | {:.3} | {:.1} |",
                n as f64 / full,
                full * 1e3,
                one * 1e3,
                zero * 1e6
            );
        }
    }
}

/// A masked regenerate recorded into a capture the test began with a raw `cuStreamBeginCapture`
/// on its own stream (standing in for PyTorch's): the capture id is the same before and after,
/// the capture ends normally, and each launch of its graph regenerates exactly the masked envs
/// — the CPU's bytes — also after the pipeline that recorded it is dropped.
#[test]
fn a_foreign_capture_records_a_masked_regenerate() {
    use trackgen::exec::cuda::CaptureMode;
    let Some(kernels) = kernels_or_skip("a_foreign_capture_records_a_masked_regenerate") else {
        return;
    };
    let (preset, n, seed) = (Preset::load("polar").unwrap(), 512usize, 9u64);
    let stage = generators::from_preset(&preset);
    let backend = Backend::Cuda {
        kernels: kernels.clone(),
        launch: Launch::new(),
    };
    let mut gpu = Pipeline::on_backend(&preset, n, backend, stage.clone()).unwrap();
    let mut cpu = Pipeline::with_stage(&preset, n, Launch::new(), stage).unwrap();
    let mut expected = cpu.new_batch(0).unwrap();
    cpu.generate(seed, 0, &mut expected).unwrap();
    let mut batch = expected.clone();
    // The masked envs move to generation 1 on both sides (the GPU through an all-zero regenerate,
    // which uploads the batch and changes nothing else).
    let mask: Vec<u8> = (0..n).map(|e| u8::from(e % 3 == 1)).collect();
    for (g, &m) in batch.generation.iter_mut().zip(&mask) {
        *g += u32::from(m);
    }
    gpu.regenerate(seed, &vec![0; n], &mut batch).unwrap();
    expected.generation.clone_from(&batch.generation);
    cpu.regenerate(seed, &mask, &mut expected).unwrap();

    let device = kernels.device();
    let stream = device.context().new_stream().unwrap();
    device.begin_capture(&stream, CaptureMode::Global).unwrap();
    let id = device.capture_id(&stream).unwrap();
    assert!(id.is_some());
    gpu.record_into(&stream, seed, 0).unwrap();
    assert_eq!(
        device.capture_id(&stream).unwrap(),
        id,
        "the capture was restarted"
    );
    let graph = device.end_capture(&stream).unwrap();
    let exec = graph.instantiate().unwrap();
    gpu.set_device_mask(&mask).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    let mut got = gpu.new_batch(0).unwrap();
    gpu.download_device_batch(&mut got).unwrap();
    assert!(
        got.bytes_eq(&expected),
        "the captured regenerate differs from the CPU's"
    );
    // The graph holds what it reads: drop the pipeline, replay.
    drop(gpu);
    for _ in 0..100 {
        exec.launch(&stream).unwrap();
    }
    stream.synchronize().unwrap();
}
