//! The batched track-generation pipeline.
//!
//! Stages, each a pass over env lanes of structure-of-arrays buffers:
//! [`generators`] (one of six built-in [`Stage`]s, or a user's) → [`resample`] (constant
//! spacing) → [`relax`] (separation, turn radius, spacing; a bounded loop) → [`validity`]
//! (retries on the next attempt stream, a bounded loop) → fallback circle → [`zprofile`] →
//! [`inflate`]. See [`Pipeline`].

mod batch;
pub mod chunks;
pub mod generators;
pub mod geometry;
pub mod inflate;
mod pipeline;
pub mod relax;
pub mod resample;
pub mod stats;
pub mod validity;
pub mod zprofile;

pub use batch::TrackBatch;
pub use generators::Stage;
pub use pipeline::{Pipeline, TILE_ENVS_PER_THREAD, VALIDITY_SLACK};
