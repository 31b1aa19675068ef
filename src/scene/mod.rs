//! Scenes: per-env signed-distance scenes in one shared voxel DAG, and batched ray casts.
//!
//! The pipeline, one module per step:
//!
//! 1. [`generate`]: each env's scene from a [`ScenePreset`] (`rooms`, `forest`, `gates`: the
//!    env's gate course as frames) as an ordered list of [`Primitive`]s (plane, oriented box,
//!    rounded box, sphere, capsule, cylinder, gate frame; union and subtraction) — the env's
//!    analytic ground truth, exportable as JSON ([`export_json`], schema in [`primitive`]);
//!    [`compiled`] evaluates them.
//! 2. [`build`]: the signed distance at the voxel centres of a cubic grid of `R` voxels per side,
//!    evaluated top down so that provably uniform boxes cost one evaluation and a brick costs
//!    512 × its *nearby* primitives (per-box culling), primitives thinner than about a voxel
//!    stored dilated so that ray casts cannot pass through them; or a dense field from voxel
//!    occupancy by fast sweeping ([`from_occupancy`], Zhao 2005).
//! 3. [`dag`]: an octree of 8³ `i8` bricks (truncation ±T voxels), inner nodes with a child mask
//!    and 32-bit child references, and uniform references carrying a conservative distance bound;
//!    nodes and bricks deduplicated by content hash with an equality check, in **one pool shared
//!    by all envs** with a per-env root table, breadth first (Kämpe et al. 2013).
//! 4. [`file`](mod@file): the versioned, checksummed scene file, validated field by field and loaded
//!    zero-copy (`mmap` + `bytemuck`).
//! 5. [`raycast`]: heterogeneous per-env ray casts in one call, rayon over rays, into caller
//!    buffers; conservative sphere tracing (Hart 1996) with the explicit hit contract; and
//!    [`sensor`]: pinhole depth cameras and lidar rings with per-env attachment poses.
//!
//! 6. [`scenes`]: scenes at run time — a [`Scenes`] batch keeps every env's tree in one live,
//!    reference-counted, deduplicated pool and regenerates the masked envs in it
//!    (`regenerate(mask, advance)`, bounded memory, other envs untouched), in step with the
//!    envs' courses for `gates`.
//!
//! [`preview`] draws a depth image and an SDF slice; [`fixture`] holds the fixed scenes and
//! camera poses the benchmarks share. The `scene`, `raycast`, `preview-scene` and `bench-scene`
//! commands live in the `trackgen` binary (`src/bin/trackgen`), not in the library.
//!
//! Determinism: an env's primitives are a pure function of `(preset, seed, env, generation)`;
//! its tree depends only on its primitives and the grid; the shared pool merges trees in env
//! order and renumbers breadth first, so the same command writes the same bytes whatever the
//! thread count.

pub mod build;
pub mod compiled;
pub mod dag;
pub mod file;
pub mod fixture;
pub mod generate;
pub mod json;
pub mod preset;
pub mod preview;
pub mod primitive;
pub mod raycast;
pub mod scenes;
pub mod sensor;
pub mod sweep;

pub use build::{BuildStats, DenseField};
pub use compiled::CompiledScene;
pub use dag::{DedupStats, EnvEntry, Node, PoolBuilder, PoolInfo, PoolView, ScenePool};
pub use file::{write_scene_file, SceneFile};
pub use generate::{generate_env, generate_envs};
pub use json::{export_json, import_json};
pub use preset::ScenePreset;
pub use primitive::{EnvScene, Op, Primitive, Shape};
pub use raycast::{cast_rays, CastOptions, RayEnvs, RayOutputs, BUDGET, HIT, MISS};
pub use scenes::{LiveStats, Scenes};
pub use sensor::{LidarRing, PinholeCamera, Pose};
pub use sweep::from_occupancy;

use crate::exec::Launch;
use crate::Result;

/// Envs generated per batch by [`build_preset`] (memory holds one batch of primitive lists).
const GENERATE_BATCH: u64 = 256;

/// The pool of `scenes` (env `i` = `scenes[i]`) at `resolution` with the truncation `truncation_vox`.
pub fn build_pool(
    scenes: &[EnvScene],
    resolution: u32,
    truncation_vox: f32,
    launch: &Launch,
) -> Result<ScenePool> {
    let mut builder = PoolBuilder::new(PoolInfo::new(resolution, truncation_vox)?);
    builder.add_scenes(scenes, launch)?;
    Ok(builder.finish())
}

/// The pool of envs `0..n_envs` of `preset` under `seed` and `generation`, at `resolution`
/// (`None`: the preset's), generated and voxelised in batches.
pub fn build_preset(
    preset: &ScenePreset,
    seed: u64,
    generation: u32,
    n_envs: u64,
    resolution: Option<u32>,
    launch: &Launch,
) -> Result<ScenePool> {
    build_preset_with_progress(
        preset,
        seed,
        generation,
        n_envs,
        resolution,
        launch,
        &mut |_, _| {},
    )
}

/// [`build_preset`], calling `progress(done, n_envs)` after every batch of envs is in the pool.
pub fn build_preset_with_progress(
    preset: &ScenePreset,
    seed: u64,
    generation: u32,
    n_envs: u64,
    resolution: Option<u32>,
    launch: &Launch,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ScenePool> {
    if n_envs == 0 {
        return Err(crate::Error::Invalid(
            "n_envs = 0: expected at least 1 env".into(),
        ));
    }
    let info = PoolInfo::new(
        resolution.unwrap_or(preset.resolution),
        preset.truncation_vox,
    )?;
    let mut builder = PoolBuilder::new(info);
    let mut start = 0;
    while start < n_envs {
        let end = (start + GENERATE_BATCH).min(n_envs);
        let scenes = generate_envs(preset, seed, generation, start..end, launch)?;
        builder.add_scenes(&scenes, launch)?;
        start = end;
        progress(start, n_envs);
    }
    Ok(builder.finish())
}
