#![warn(missing_docs)]
#![deny(unsafe_code)]
//! trackgen: deterministic batched generation of race tracks for parallel RL environments.
//!
//! Layers, lowest first: [`rng`] and [`math`] (deterministic primitives with CUDA twins under
//! `kernels/common`), [`geom`] (glam `Vec2`/`Vec3`/`Quat`, frames `[x, y, z, w]` with `+x`
//! forward, `+y` left, `+z` up, splines, the primitives' signed distances), [`exec`] (the launch
//! context: lanes, `skip_unless`, `bounded_loop`; batch layouts declared once),
//! [`track`] (the batched generation pipeline), [`course`] (gate courses and the sim-time
//! runtime: checkpoints, progress, localization, collision), [`scene`] (per-env SDF scenes in a
//! shared voxel-DAG pool, batched ray casts), [`corpus`] (the on-disk format) and [`render`] (PNG
//! previews) and [`export`] (meshes of courses as glTF and OBJ). A lower layer never imports a higher one. [`atomic`] (atomic writes, the registry of
//! temporary outputs in progress) and [`os`] (free space, process existence, available memory)
//! serve them all. The library parses no arguments, draws no progress and installs no signal
//! handler: the `trackgen` binary does, over callbacks and registries the library offers.
//!
//! Every output for env `e` is a pure function of `(preset, seed, e, generation[e])`: it does not
//! depend on the batch size, on the thread count, or on which other envs were regenerated.
//!
//! ```
//! use trackgen::{exec::Launch, preset::Preset, track::Pipeline};
//!
//! let preset = Preset::load("track")?;
//! let mut pipeline = Pipeline::new(&preset, 8, Launch::new())?;
//! let mut batch = pipeline.new_batch(0)?;
//! pipeline.generate(42, 0, &mut batch)?;
//! assert!(batch.valid.iter().all(|&v| v == 1));
//!
//! // Regenerate env 3 alone, at its next generation: the other envs keep every byte.
//! let before = batch.clone();
//! batch.generation[3] += 1;
//! let mut mask = vec![0u8; 8];
//! mask[3] = 1;
//! pipeline.regenerate(42, &mask, &mut batch)?;
//! assert!(batch.slice(0..3).bytes_eq(&before.slice(0..3)));
//! assert!(!batch.slice(3..4).bytes_eq(&before.slice(3..4)));
//! # Ok::<(), trackgen::Error>(())
//! ```

pub mod atomic;
pub mod corpus;
pub mod course;
pub mod error;
pub mod exec;
pub mod export;
pub mod geom;
pub mod lanes;
pub mod math;
pub mod os;
pub mod preset;
pub mod render;
pub mod rng;
pub mod scene;
pub mod track;

pub use error::{Error, Result};
