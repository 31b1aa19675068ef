//! Criterion benchmarks of the scene pipeline: the SDF/DAG build of one env, the shared pool of
//! a batch of envs, and a 64×64 depth camera per env (`trackgen bench-scene` prints the full
//! table of the issue: rates per thread, bytes per env, dedup at 1024 envs).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use trackgen::exec::Launch;
use trackgen::scene::fixture::{camera_poses, objects_scene};
use trackgen::scene::{
    build_preset, cast_rays, generate_env, CastOptions, PinholeCamera, PoolBuilder, PoolInfo, Pose,
    RayEnvs, RayOutputs, ScenePreset,
};

fn sdf(c: &mut Criterion) {
    let one = Launch::with_threads(1).expect("pool");
    let rooms = ScenePreset::load("rooms").expect("preset");
    let mut group = c.benchmark_group("sdf_build_1thread");
    group.sample_size(10);
    for res in [128u32, 256] {
        let scenes = vec![generate_env(&rooms, 0, 0, 0).unwrap(), objects_scene(true)];
        group.throughput(Throughput::Elements(2 * u64::from(res).pow(3)));
        group.bench_function(BenchmarkId::new("rooms0+objects", res), |b| {
            b.iter(|| {
                let mut builder = PoolBuilder::new(PoolInfo::new(res, 4.0).expect("info"));
                builder.add_scenes(&scenes, &one).expect("build");
                builder.finish()
            })
        });
    }
    group.finish();
}

fn rays(c: &mut Criterion) {
    let one = Launch::with_threads(1).expect("pool");
    let rooms = ScenePreset::load("rooms").expect("preset");
    let envs = 64;
    let pool = build_preset(&rooms, 0, 0, envs, Some(256), &Launch::new()).expect("pool");
    let view = pool.view();
    let cam = PinholeCamera::new(64, 64, 90f32.to_radians()).expect("camera");
    let k = cam.rays_per_env();
    let n = k * envs as usize;
    let (mut o, mut d) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
    cam.rays(&camera_poses(&view), &Pose::IDENTITY, &mut o, &mut d)
        .expect("rays");
    let (mut dist, mut hit, mut steps) = (vec![0.0; n], vec![0u8; n], vec![0u32; n]);
    let opts = CastOptions::new(100.0);
    let mut group = c.benchmark_group("raycast_1thread");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("rooms_r256_cam64", envs), |b| {
        b.iter(|| {
            cast_rays(
                &view,
                RayEnvs::Blocks { rays_per_env: k },
                &o,
                &d,
                &opts,
                RayOutputs {
                    distance: &mut dist,
                    hit: &mut hit,
                    steps: &mut steps,
                },
                &one,
            )
            .expect("cast")
        })
    });
    group.finish();
}

criterion_group!(benches, sdf, rays);
criterion_main!(benches);
