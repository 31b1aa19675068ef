//! Criterion benchmarks of the course runtime: `step()` (track mode, 4.4 m × 2 m box footprint
//! against the band) at 4096 and 65536 envs on one thread and on all threads, and masked
//! `regenerate()` with 0%, 1% and 100% of 4096 envs masked. `trackgen bench-course` prints the
//! same measurements as a table of medians.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use trackgen::course::{Binding, Course, CourseConfig, Mode, PurePursuit};
use trackgen::exec::Launch;
use trackgen::preset::Preset;

fn course(envs: usize, launch: Launch) -> Course {
    let preset = Preset::load("track").expect("built-in preset");
    let mut c = Course::new(
        Mode::Track,
        &preset,
        envs,
        0,
        CourseConfig::default(),
        launch,
    )
    .expect("course");
    let g = c.geometry();
    let binding = Binding::new(g.spawn_position.clone())
        .with_orientations(g.spawn_orientation.clone())
        .with_half_extents(vec![trackgen::geom::Vec2::new(2.2, 1.0); envs]);
    c.bind(binding).expect("bind");
    c
}

fn step(c: &mut Criterion) {
    let mut group = c.benchmark_group("course_step");
    group.sample_size(10);
    for envs in [4096usize, 65536] {
        group.throughput(Throughput::Elements(envs as u64));
        for threads in [1usize, 0] {
            let launch = Launch::with_threads(threads).expect("pool");
            let label = if threads == 0 {
                "all".to_string()
            } else {
                threads.to_string()
            };
            let mut course = course(envs, launch);
            let agent = PurePursuit::for_course(&course);
            group.bench_function(BenchmarkId::new(format!("threads={label}"), envs), |b| {
                b.iter_custom(|iters| {
                    let mut total = std::time::Duration::ZERO;
                    for _ in 0..iters {
                        agent.act(&mut course).expect("act");
                        let t = std::time::Instant::now();
                        course.step().expect("step");
                        total += t.elapsed();
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

fn regenerate(c: &mut Criterion) {
    let envs = 4096;
    let mut group = c.benchmark_group("course_regenerate");
    group.sample_size(10);
    let mut course = course(envs, Launch::new());
    for (label, every) in [("100%", 1usize), ("1%", 100), ("0%", 0)] {
        let mask: Vec<u8> = (0..envs)
            .map(|e| u8::from(every != 0 && e % every == 0))
            .collect();
        group.bench_function(BenchmarkId::new(label, envs), |b| {
            b.iter(|| course.regenerate(&mask, true).expect("regenerate"))
        });
    }
    group.finish();
}

criterion_group!(benches, step, regenerate);
criterion_main!(benches);
