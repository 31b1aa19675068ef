//! trackgen: deterministic batched generation of race tracks for parallel RL environments.
//!
//! Layers, lowest first: [`rng`] and [`math`] (deterministic primitives with CUDA twins under
//! `kernels/common`), [`exec`] (the launch context: lanes, `skip_unless`, `bounded_loop`),
//! [`track`] (the batched generation pipeline), [`course`] (gate courses and the sim-time
//! runtime: checkpoints, progress, localization, collision), [`scene`] (per-env SDF scenes in a
//! shared voxel-DAG pool, batched ray casts), [`corpus`] (the on-disk format) and [`render`] (PNG
//! previews). A lower layer never imports a higher one.
//!
//! Every output for env `e` is a pure function of `(preset, seed, e, generation[e])`: it does not
//! depend on the batch size, on the thread count, or on which other envs were regenerated.

pub mod corpus;
pub mod course;
pub mod error;
pub mod exec;
pub mod math;
pub mod preset;
pub mod render;
pub mod rng;
pub mod scene;
pub mod track;

pub use error::{Error, Result};
