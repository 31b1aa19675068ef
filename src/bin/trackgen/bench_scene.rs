//! `trackgen bench-scene`: the scene benchmark table; `benches/scene.rs` times the same steps
//! with criterion.
//!
//! Rows:
//!
//! - **sdf**: building envs' trees from their primitives on `threads` threads: grid voxels
//!   (`R³` per env) per second per thread, and voxels actually evaluated (512 per brick that had to
//!   be filled; uniform boxes are decided from one evaluation) per second per thread.
//! - **size**: one env's pool (nodes, bricks, env entry) against a dense fp16 grid (`2·R³` bytes)
//!   for an axis-aligned scene and the same scene rotated 30° about the vertical (so no wall is
//!   aligned with the grid): the `objects_scene` test scene and `rooms` env 0, and `forest` env 0.
//! - **dedup**: `envs` envs of `rooms` and `forest` in one pool: bytes if each env had its own pool
//!   over bytes of the shared pool.
//! - **rays**: a 64×64 depth camera per env (at each env's spawn point, heading `e · 2.4` rad) over
//!   `envs` envs of each preset in `--ray-presets` (`rooms`, `gates`, `forest`), one call: rays
//!   per second per thread, mean steps per ray, and the share of rays that hit.
//! - **random**: the same count of rays per env from uniform points of the env's domain whose
//!   stored field is above one voxel, in uniform directions (the random rays of
//!   `examples/python/bench_embree.py`, free points by the stored field instead of the exact
//!   one), timed as the ray row.

use std::fmt::Write as _;
use std::time::Instant;

use trackgen::exec::Launch;
use trackgen::rng::LaneRng;
use trackgen::scene::dag::{PoolView, BRICK_VOXELS, NODE_BYTES};
use trackgen::scene::fixture::{camera_poses, objects_scene, rotate_yaw};
use trackgen::scene::raycast::sdf_at;
use trackgen::scene::{
    build_preset, cast_rays, generate_env, generate_envs, CastOptions, EnvScene, PinholeCamera,
    PoolBuilder, PoolInfo, Pose, RayEnvs, RayOutputs, ScenePreset, HIT,
};
use trackgen::{Error, Result};

use crate::limits::check_memory;
use crate::output::emit;

/// `trackgen bench-scene`: the scene benchmark table.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchSceneArgs {
    /// Resolutions, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "128,256",
        value_name = "R,.."
    )]
    pub res: Vec<u32>,
    /// Envs of the dedup and ray rows.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub envs: u64,
    /// Envs of the SDF build rows.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub sdf_envs: u64,
    /// Threads of the timed rows (rates are per thread).
    #[arg(long, default_value_t = 1, value_name = "T")]
    pub threads: usize,
    /// Camera side, pixels.
    #[arg(long, default_value_t = 64, value_name = "PX")]
    pub camera: u32,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Rows to run, comma-separated (`sdf`, `size`, `dedup`, `rays`, `random`).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "sdf,size,dedup,rays,random",
        value_name = "ROW,.."
    )]
    pub rows: Vec<String>,
    /// Scene presets of the ray rows, comma-separated (`rooms`, `gates`, `forest`).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "rooms,gates,forest",
        value_name = "PRESET,.."
    )]
    pub ray_presets: Vec<String>,
}

/// The rows `--rows` may name.
const ROWS: [&str; 5] = ["sdf", "size", "dedup", "rays", "random"];
/// The presets `--ray-presets` may name.
const RAY_PRESETS: [&str; 3] = ["rooms", "gates", "forest"];

/// An error naming the first of `given` (the values of `flag`) that is not one of `allowed`.
fn check_names(flag: &str, given: &[String], allowed: &[&str]) -> Result<()> {
    match given.iter().find(|g| !allowed.contains(&g.as_str())) {
        Some(bad) => Err(Error::Invalid(format!(
            "{flag} {bad}: expected some of {}",
            allowed.join(",")
        ))),
        None => Ok(()),
    }
}

/// Runs `trackgen bench-scene`: checks the arguments, then prints the table.
pub fn bench_scene(args: BenchSceneArgs) -> Result<()> {
    if let Some(bad) = args
        .res
        .iter()
        .find(|r| !(r.is_power_of_two() && (8..=512).contains(*r)))
    {
        return Err(Error::Invalid(format!(
            "--res {bad}: expected powers of two in [8, 512]"
        )));
    }
    check_names("--rows", &args.rows, &ROWS)?;
    check_names("--ray-presets", &args.ray_presets, &RAY_PRESETS)?;
    // The ray rows hold a camera per env: origin, direction, distance, hit, steps per ray.
    let rays = u128::from(args.camera) * u128::from(args.camera) * u128::from(args.envs);
    check_memory(
        &format!("--camera {} with --envs {}", args.camera, args.envs),
        Some(rays * 33),
    )?;
    emit(&table(&args)?)
}

/// The ray rows' line: `o`, `d` (`k` rays per env of `view`) cast in one call on `launch`, the
/// best of three.
#[allow(clippy::too_many_arguments)]
fn ray_row(
    row: &str,
    name: &str,
    r: u32,
    view: &PoolView,
    k: usize,
    o: &[[f32; 3]],
    d: &[[f32; 3]],
    launch: &Launch,
) -> Result<String> {
    let n = o.len();
    let copts = CastOptions::new(100.0);
    let (mut dist, mut hit, mut steps) = (vec![0.0; n], vec![0u8; n], vec![0u32; n]);
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        cast_rays(
            view,
            RayEnvs::Blocks { rays_per_env: k },
            o,
            d,
            &copts,
            RayOutputs {
                distance: &mut dist,
                hit: &mut hit,
                steps: &mut steps,
            },
            launch,
        )?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    let hits = hit.iter().filter(|&&h| h == HIT).count() as f64 / n as f64;
    let mean_steps = steps.iter().map(|&s| f64::from(s)).sum::<f64>() / n as f64;
    Ok(format!(
        "{:<6} {:<22} {:>5} {:>9.2} Mr/s/thr {:>9.1} steps {:>10.3} hit",
        row,
        name,
        r,
        n as f64 / best / launch.threads() as f64 / 1e6,
        mean_steps,
        hits
    ))
}

/// Writes `k` random rays per env of `view` to `o`, `d`: each from a uniform point of the env's
/// domain whose stored field is above one voxel (the first of 64 draws that is; the spawn point
/// if none), in a uniform direction (the first of 64 draws in the unit ball; straight up if
/// none), drawn from the stream of `(seed, env)`.
fn random_rays(view: &PoolView, k: usize, seed: u64, o: &mut [[f32; 3]], d: &mut [[f32; 3]]) {
    /// The random stream's stage (`"RAYS"`).
    const STAGE: u32 = 0x5241_5953;
    let res = view.info().resolution as f32;
    for (e, env) in view.envs().iter().enumerate() {
        let mut rng = LaneRng::new(seed, e as u64, 0, STAGE);
        let side = env.voxel_size * res;
        for i in e * k..(e + 1) * k {
            o[i] = (0..64)
                .map(|_| std::array::from_fn(|a| env.origin[a] + side * rng.unit()))
                .find(|&p| sdf_at(view, e, p).is_some_and(|v| v > env.voxel_size))
                .unwrap_or(env.spawn);
            d[i] = (0..64)
                .map(|_| std::array::from_fn(|_| rng.signed()))
                .find(|v: &[f32; 3]| {
                    let n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
                    n2 > 1e-4 && n2 <= 1.0
                })
                .unwrap_or([0.0, 0.0, 1.0]);
        }
    }
}

/// Bytes of a one-env pool: nodes, bricks and the env entry.
fn env_bytes(scene: &EnvScene, info: PoolInfo, launch: &Launch) -> Result<(u64, u64, u64)> {
    let mut b = PoolBuilder::new(info);
    b.add_scenes(std::slice::from_ref(scene), launch)?;
    let pool = b.finish();
    let v = pool.view();
    Ok((
        v.bytes() as u64,
        v.nodes().len() as u64,
        v.bricks().len() as u64,
    ))
}

/// Runs the benchmark and returns the table as text.
fn table(opts: &BenchSceneArgs) -> Result<String> {
    if opts.envs == 0 || opts.sdf_envs == 0 || opts.camera == 0 {
        return Err(Error::Invalid(
            "bench-scene: envs, sdf envs and camera pixels must be at least 1".into(),
        ));
    }
    let launch = Launch::with_threads(opts.threads)?;
    let threads = launch.threads() as f64;
    let all = Launch::new();
    let rooms = ScenePreset::load("rooms")?;
    let forest = ScenePreset::load("forest")?;
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "# trackgen bench-scene: {} timing thread(s) (per-thread rates divide by it), \
         {} envs, {}x{} camera",
        launch.threads(),
        opts.envs,
        opts.camera,
        opts.camera
    );
    let _ = writeln!(
        w,
        "{:<6} {:<22} {:>5} {:>14} {:>14} {:>12}",
        "row", "scene", "R", "value", "value", "ratio/extra"
    );
    let row = |name: &str| opts.rows.iter().any(|r| r == name);
    for &r in opts.res.iter().filter(|_| row("sdf")) {
        for preset in [&rooms, &forest] {
            let info = PoolInfo::new(r, preset.truncation_vox)?;
            let scenes = generate_envs(preset, opts.seed, 0, 0..opts.sdf_envs, &launch)?;
            let mut b = PoolBuilder::new(info);
            let t = Instant::now();
            let stats = b.add_scenes(&scenes, &launch)?;
            let secs = t.elapsed().as_secs_f64().max(1e-9);
            let grid = opts.sdf_envs as f64 * f64::from(r).powi(3);
            let _ = writeln!(
                w,
                "{:<6} {:<22} {:>5} {:>10.1} Mv/s {:>10.1} Mv/s {:>12}",
                "sdf",
                preset.source,
                r,
                grid / secs / threads / 1e6,
                stats.voxels_evaluated as f64 / secs / threads / 1e6,
                "grid|eval"
            );
        }
    }
    for &r in opts.res.iter().filter(|_| row("size")) {
        let dense = 2.0 * f64::from(r).powi(3);
        let room0 = generate_env(&rooms, opts.seed, 0, 0)?;
        let cases = [
            ("objects axis-aligned", objects_scene(false), 4.0),
            ("objects rotated", objects_scene(true), 4.0),
            ("rooms#0 axis-aligned", room0.clone(), rooms.truncation_vox),
            (
                "rooms#0 rotated 30deg",
                rotate_yaw(&room0, 30f32.to_radians()),
                rooms.truncation_vox,
            ),
            (
                "forest#0",
                generate_env(&forest, opts.seed, 0, 0)?,
                forest.truncation_vox,
            ),
        ];
        for (name, scene, trunc) in cases {
            let (bytes, nodes, bricks) = env_bytes(&scene, PoolInfo::new(r, trunc)?, &all)?;
            let _ = writeln!(
                w,
                "{:<6} {:<22} {:>5} {:>11.1} KiB {:>8}n/{:<5}b {:>10.1}x",
                "size",
                name,
                r,
                bytes as f64 / 1024.0,
                nodes,
                bricks,
                dense / bytes as f64
            );
        }
    }
    let gates = ScenePreset::load("gates")?;
    for &r in opts
        .res
        .iter()
        .filter(|_| row("dedup") || row("rays") || row("random"))
    {
        for preset in [&rooms, &gates, &forest] {
            let dedup = row("dedup") && preset.source != "gates";
            let rays = row("rays") && opts.ray_presets.contains(&preset.source);
            let random = row("random") && opts.ray_presets.contains(&preset.source);
            if !dedup && !rays && !random {
                continue;
            }
            let t = Instant::now();
            let pool = build_preset(preset, opts.seed, 0, opts.envs, Some(r), &all)?;
            let build_s = t.elapsed().as_secs_f64();
            let st = pool.stats();
            if dedup {
                let _ = writeln!(
                w,
                "{:<6} {:<22} {:>5} {:>10.1} MiB {:>10.1} MiB {:>10.1}x   ({:.1} s to build on all threads)",
                "dedup",
                format!("{} x{}", preset.source, opts.envs),
                r,
                st.env_bytes() as f64 / 1048576.0,
                st.pool_bytes() as f64 / 1048576.0,
                st.ratio(),
                build_s
                );
            }
            if !rays && !random {
                continue;
            }
            let view = pool.view();
            let k = (opts.camera * opts.camera) as usize;
            let n = k * view.envs().len();
            let (mut o, mut d) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
            let name = format!("{} x{}", preset.source, opts.envs);
            if rays {
                let cam = PinholeCamera::new(opts.camera, opts.camera, 90f32.to_radians())?;
                cam.rays(&camera_poses(&view), &Pose::IDENTITY, &mut o, &mut d)?;
                let line = ray_row("rays", &name, r, &view, k, &o, &d, &launch)?;
                let _ = writeln!(w, "{line}");
            }
            if random {
                random_rays(&view, k, opts.seed, &mut o, &mut d);
                let line = ray_row("random", &name, r, &view, k, &o, &d, &launch)?;
                let _ = writeln!(w, "{line}");
            }
        }
    }
    let _ = writeln!(
        w,
        "# bytes per node {NODE_BYTES}, per brick {BRICK_VOXELS}; dense fp16 = 2*R^3 bytes per env"
    );
    Ok(out)
}
