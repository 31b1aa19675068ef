//! The scene benchmark table (`trackgen bench-scene`); `benches/scene.rs` times the same steps
//! with criterion.
//!
//! Rows:
//!
//! - **sdf**: building envs' trees from their primitives on `threads` threads: grid voxels
//!   (`R³` per env) per second per thread, and voxels actually evaluated (512 per brick that had to
//!   be filled; uniform boxes are decided from one evaluation) per second per thread.
//! - **size**: one env's pool (nodes, bricks, env entry) against a dense fp16 grid (`2·R³` bytes)
//!   for an axis-aligned scene and the same scene rotated 30° about the vertical (so no wall is
//!   aligned with the grid): the [`objects_scene`] test scene and `rooms` env 0, and `forest` env 0.
//! - **dedup**: `envs` envs of `rooms` and `forest` in one pool: bytes if each env had its own pool
//!   over bytes of the shared pool.
//! - **rays**: a 64×64 depth camera per env (at each env's spawn point, heading `e · 2.4` rad) over
//!   `envs` envs of `rooms`, one call: rays per second per thread.

use std::fmt::Write as _;
use std::time::Instant;

use super::dag::{PoolBuilder, PoolInfo, BRICK_VOXELS, NODE_BYTES};
use super::primitive::{EnvScene, Primitive, Shape};
use super::raycast::{cast_rays, CastOptions, RayEnvs, RayOutputs, HIT};
use super::sensor::{PinholeCamera, Pose};
use super::{build_preset, generate_env, generate_envs, ScenePreset};
use crate::exec::Launch;
use crate::geom::{self, from_euler, Quat, Vec2, Vec3, IDENTITY};
use crate::math::sin_cos;
use crate::{Error, Result};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Resolutions (powers of two).
    pub resolutions: Vec<u32>,
    /// Envs of the dedup and ray rows.
    pub envs: u64,
    /// Envs of the SDF rows.
    pub sdf_envs: u64,
    /// Worker threads of the timed rows (per-thread rates divide by this).
    pub threads: usize,
    /// Camera side, pixels.
    pub camera_px: u32,
    /// Seed of the generated envs.
    pub seed: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            resolutions: vec![128, 256],
            envs: 1024,
            sdf_envs: 16,
            threads: 1,
            camera_px: 64,
            seed: 0,
        }
    }
}

/// A fixed test scene in a 16 m domain: a floor, four boxes, two balls, a capsule, a cylinder
/// and a gate frame; `rotated` turns every object by distinct non-axis angles.
pub fn objects_scene(rotated: bool) -> EnvScene {
    let rot = |k: f32| {
        if rotated {
            from_euler(0.52 + 0.31 * k, 0.23 + 0.11 * k, 0.17 * k)
        } else {
            IDENTITY
        }
    };
    let boxed = |c: [f32; 3], h: [f32; 3], k: f32| {
        Primitive::union(Shape::Box {
            center: c.into(),
            rotation: rot(k),
            half_extents: h.into(),
        })
    };
    let primitives = vec![
        Primitive::union(Shape::Plane {
            normal: Vec3::Z,
            offset: 0.0,
        }),
        boxed([-4.0, -3.0, 1.0], [1.0, 1.5, 1.0], 0.0),
        boxed([3.5, -4.0, 0.75], [1.25, 0.75, 0.75], 1.0),
        boxed([-3.0, 4.0, 1.5], [0.5, 2.0, 1.5], 2.0),
        boxed([4.0, 3.5, 0.5], [1.5, 1.5, 0.5], 3.0),
        Primitive::union(Shape::Sphere {
            center: Vec3::new(0.0, 0.0, 1.0),
            radius: 1.0,
        }),
        Primitive::union(Shape::Sphere {
            center: Vec3::new(1.5, -1.0, 3.0),
            radius: 0.6,
        }),
        Primitive::union(Shape::Capsule {
            a: Vec3::new(-1.0, 2.0, 0.5),
            b: if rotated {
                Vec3::new(0.8, 2.6, 2.4)
            } else {
                Vec3::new(-1.0, 2.0, 2.5)
            },
            radius: 0.4,
        }),
        Primitive::union(Shape::Cylinder {
            center: Vec3::new(2.0, 1.0, 1.5),
            rotation: rot(5.0),
            radius: 0.5,
            half_height: 1.5,
        }),
        Primitive::union(Shape::GateFrame {
            center: Vec3::new(-0.5, -4.5, 1.5),
            rotation: rot(6.0),
            outer_half: Vec2::new(1.2, 1.2),
            inner_half: Vec2::new(0.95, 0.95),
            half_depth: 0.1,
        }),
    ];
    EnvScene {
        origin: Vec3::new(-8.0, -8.0, -0.5),
        size_m: 16.0,
        spawn: Vec3::new(0.0, -2.0, 1.5),
        primitives,
    }
}

/// `scene` turned by `yaw` radians about the vertical through its domain's centre.
pub fn rotate_yaw(scene: &EnvScene, yaw: f32) -> EnvScene {
    let c = [
        scene.origin[0] + 0.5 * scene.size_m,
        scene.origin[1] + 0.5 * scene.size_m,
    ];
    let (s, co) = sin_cos(yaw);
    let point = |p: Vec3| {
        let (x, y) = (p.x - c[0], p.y - c[1]);
        Vec3::new(c[0] + co * x - s * y, c[1] + s * x + co * y, p.z)
    };
    let dir = |v: Vec3| Vec3::new(co * v.x - s * v.y, s * v.x + co * v.y, v.z);
    let q = from_euler(yaw, 0.0, 0.0);
    let turn = |r: Quat| geom::compose(q, r);
    let primitives = scene
        .primitives
        .iter()
        .map(|p| {
            let shape = match p.shape.clone() {
                Shape::Plane { normal, offset } => {
                    // The plane through the rotated foot point.
                    let (n, f) = (dir(normal), point(normal * offset));
                    Shape::Plane {
                        normal: n,
                        offset: n.dot(f),
                    }
                }
                Shape::Box {
                    center,
                    rotation,
                    half_extents,
                } => Shape::Box {
                    center: point(center),
                    rotation: turn(rotation),
                    half_extents,
                },
                Shape::RoundedBox {
                    center,
                    rotation,
                    half_extents,
                    radius,
                } => Shape::RoundedBox {
                    center: point(center),
                    rotation: turn(rotation),
                    half_extents,
                    radius,
                },
                Shape::Sphere { center, radius } => Shape::Sphere {
                    center: point(center),
                    radius,
                },
                Shape::Capsule { a, b, radius } => Shape::Capsule {
                    a: point(a),
                    b: point(b),
                    radius,
                },
                Shape::Cylinder {
                    center,
                    rotation,
                    radius,
                    half_height,
                } => Shape::Cylinder {
                    center: point(center),
                    rotation: turn(rotation),
                    radius,
                    half_height,
                },
                Shape::GateFrame {
                    center,
                    rotation,
                    outer_half,
                    inner_half,
                    half_depth,
                } => Shape::GateFrame {
                    center: point(center),
                    rotation: turn(rotation),
                    outer_half,
                    inner_half,
                    half_depth,
                },
            };
            Primitive { op: p.op, shape }
        })
        .collect();
    EnvScene {
        spawn: point(scene.spawn),
        primitives,
        ..scene.clone()
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

/// Per-env camera body poses for `rays` rows: at the spawn, heading `e · 2.4` rad.
pub fn camera_poses(view: &super::PoolView) -> Vec<Pose> {
    view.envs()
        .iter()
        .enumerate()
        .map(|(e, env)| {
            let (s, c) = sin_cos(e as f32 * 2.4);
            let p = Vec3::from(env.spawn);
            Pose::look_at(p, p + Vec3::new(c, s, 0.0))
        })
        .collect()
}

/// Runs the benchmark and returns the table as text.
pub fn bench_scene(opts: &BenchOptions) -> Result<String> {
    if opts.envs == 0 || opts.sdf_envs == 0 || opts.camera_px == 0 {
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
        opts.camera_px,
        opts.camera_px
    );
    let _ = writeln!(
        w,
        "{:<6} {:<22} {:>5} {:>14} {:>14} {:>12}",
        "row", "scene", "R", "value", "value", "ratio/extra"
    );
    for &r in &opts.resolutions {
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
    for &r in &opts.resolutions {
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
    for &r in &opts.resolutions {
        for preset in [&rooms, &forest] {
            let t = Instant::now();
            let pool = build_preset(preset, opts.seed, 0, opts.envs, Some(r), &all)?;
            let build_s = t.elapsed().as_secs_f64();
            let st = pool.stats();
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
            if preset.source != "rooms" {
                continue;
            }
            let view = pool.view();
            let cam = PinholeCamera::new(opts.camera_px, opts.camera_px, 90f32.to_radians())?;
            let k = cam.rays_per_env();
            let n = k * view.envs().len();
            let (mut o, mut d) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
            cam.rays(&camera_poses(&view), &Pose::IDENTITY, &mut o, &mut d)?;
            let copts = CastOptions::new(100.0);
            let (mut dist, mut hit, mut steps) = (vec![0.0; n], vec![0u8; n], vec![0u32; n]);
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let t = Instant::now();
                cast_rays(
                    &view,
                    RayEnvs::Blocks { rays_per_env: k },
                    &o,
                    &d,
                    &copts,
                    RayOutputs {
                        distance: &mut dist,
                        hit: &mut hit,
                        steps: &mut steps,
                    },
                    &launch,
                )?;
                best = best.min(t.elapsed().as_secs_f64());
            }
            let hits = hit.iter().filter(|&&h| h == HIT).count() as f64 / n as f64;
            let mean_steps = steps.iter().map(|&s| f64::from(s)).sum::<f64>() / n as f64;
            let _ = writeln!(
                w,
                "{:<6} {:<22} {:>5} {:>9.2} Mr/s/thr {:>9.1} steps {:>10.3} hit",
                "rays",
                format!("{} x{}", preset.source, opts.envs),
                r,
                n as f64 / best / threads / 1e6,
                mean_steps,
                hits
            );
        }
    }
    let _ = writeln!(
        w,
        "# bytes per node {NODE_BYTES}, per brick {BRICK_VOXELS}; dense fp16 = 2*R^3 bytes per env"
    );
    Ok(out)
}
