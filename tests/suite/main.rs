//! The integration test suite: one test binary with a module per area, so a fresh `cargo test`
//! compiles and links the crate into as few executables as possible. (`course_alloc` stays its own
//! binary: it installs a counting global allocator.)

// Fixtures and oracles compare the library with tolerances, so they may use std's f32 math,
// which `clippy.toml` keeps out of the library.
#![allow(clippy::disallowed_methods)]

mod circuit;
mod cli;
mod cli_hardening;
mod corpus;
mod corpus_merge;
mod course_cli;
mod course_contracts;
mod course_fixtures;
mod course_gates;
mod course_laps;
mod course_regenerate;
mod course_support;
mod cuda_device;
mod cuda_pipeline;
mod curvature_gen;
mod determinism;
mod dir_listing;
mod emulated;
mod emulated_generators;
mod examples_sim;
mod export;
mod golden;
mod heightfield_props;
mod layout;
mod math_accuracy;
mod nvrtc_kernels;
mod presets;
mod python_loader;
mod scene_accuracy;
mod scene_cli;
mod scene_file;
mod scene_presets;
mod scene_raycast;
mod scene_regenerate;
mod scene_sdf;
mod skip;
mod stage_plugin;
mod stats;
mod track_oracle;
mod twin_math_rng;
mod validity;
mod validity_props;
mod validity_sweep;
mod zprofile;
