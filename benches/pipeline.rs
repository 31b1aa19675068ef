//! Criterion benchmarks of the whole pipeline per generator (the `trackgen bench` command prints
//! the same measurement as a table over batch sizes and thread counts).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use trackgen::exec::Launch;
use trackgen::preset::{Preset, GENERATORS};
use trackgen::track::Pipeline;

fn pipeline(c: &mut Criterion) {
    let envs = 512;
    let mut group = c.benchmark_group("generate");
    group.sample_size(10);
    group.throughput(Throughput::Elements(envs as u64));
    for name in GENERATORS {
        let preset = Preset::load(name).expect("built-in preset");
        let mut pipe = Pipeline::new(&preset, envs, Launch::new()).expect("pipeline");
        let mut batch = pipe.new_batch(0).expect("batch");
        let mut generation = 0;
        group.bench_function(BenchmarkId::new(*name, envs), |b| {
            b.iter(|| {
                generation += 1;
                pipe.generate(7, generation, &mut batch).expect("generate");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
