//! Courses: gate-course generation, and the sim-time runtime that races tracks and gate
//! courses — checkpoints, progress, localization and collision — with per-env masked
//! regeneration.
//!
//! - [`gates`]: gate courses (4–32 gates per env) placed along a generated guide track, relaxed
//!   apart by sphere self-collision in a bounded loop, validated, with roll-free frames;
//!   [`GatePipeline`] → [`GateBatch`].
//! - [`geometry`]: what an env races, one contract for both modes: a closed path with arc
//!   length and curvature, ordered [`Checkpoint`]s (centre, crossing window, tangent, normal),
//!   disc obstacles and the spawn pose ([`CourseGeometry`]).
//! - [`localize`]: nearest path point by a bounded local search around the previous segment,
//!   with a documented full-scan fallback.
//! - collision (in the step kernel): exact signed distances from [`crate::geom::sdf`] — the
//!   box footprint against the band and disc obstacles (track mode: the farthest corner from
//!   the path is at `|n| + a·|h·ν| + b·|h⊥·ν|`, exact on straights, off by at most `a²/(2R)` on
//!   a bend of radius `R`), the sphere against gate frames, posts and obstacles (gate mode).
//! - [`Course`]: the facade. `Course::new(mode, ..)`, `bind`, `step`, `reset(mask)`,
//!   `regenerate(mask, advance)`; [`CourseConfig`] and [`Binding`] (in `config`) are its
//!   settings and inputs; [`StepOutputs`] documents every output; the step pass (`step_pass`)
//!   is the lane function that `step()` runs.
//! - [`heightfield`]: per-env square grids of the road surface height with their bounds
//!   ([`Heightfields`]), baked for regenerated envs only; [`props`]: poses of cones or wall
//!   pieces along a border at a spacing snapped to close the ring ([`Props`]). Both are optional
//!   ([`CourseConfig::heightfield`], [`CourseConfig::props`]) and stored in corpora on request.
//! - [`Course::lookahead`] (in `lookahead`): the path ahead of each env in its body frame, with
//!   its curvature: the observation of racing policies.
//! - [`PurePursuit`]: a scripted agent for tests, examples and benchmarks.
//!
//! Every per-env pass is a lane function run by [`Launch::lanes`](crate::exec::Launch::lanes);
//! iterative stages are [`bounded_loop`](crate::exec::Launch::bounded_loop)s and masked passes
//! sit under [`skip_unless`](crate::exec::Launch::skip_unless), so the CUDA backend can run the
//! same stages as kernels and capture `step()` and `regenerate()` into one graph. Every output
//! for env `e` is a pure function of `(preset, seed, e, generation[e], config)` and its inputs.

mod agent;
mod config;
mod courses;
mod gate_batch;
mod gate_pipeline;
pub mod gates;
pub mod geometry;
pub mod heightfield;
pub mod localize;
mod lookahead;
mod outputs;
pub mod props;
mod runtime;
mod step;
mod step_pass;

pub use agent::PurePursuit;
pub use config::{Binding, BindingParts, CourseConfig};
pub use courses::Courses;
pub use gate_batch::GateBatch;
pub use gate_pipeline::GatePipeline;
pub use geometry::{Checkpoint, CourseGeometry, MIN_CHECKPOINTS};
pub use heightfield::{HeightfieldBatch, HeightfieldBounds, HeightfieldConfig, Heightfields};
pub use outputs::StepOutputs;
pub use props::{PropBatch, PropConfig, PropKind, Props, Side};
pub use runtime::{Course, SimView};
pub use step::{crosses_forward, Mode, SKIP_WINDOW};
