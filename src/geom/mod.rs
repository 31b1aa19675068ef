//! The geometry vocabulary of every layer above: glam's [`Vec2`], [`Vec3`] and [`Quat`], rigid
//! frames, splines, the primitives' signed distances and NaN-failing comparisons.
//!
//! # Conventions
//! - Metres; world `+z` up; radians inside the crate (degrees only in presets).
//! - Quaternions are stored `[x, y, z, w]` (glam's order, scalar last) and rotate local axes into
//!   world axes. Body axes: `+x` forward, `+y` left, `+z` up. A gate is flown through along its
//!   local `+x`; its opening spans local `y` (width) and `z` (height).
//! - Buffers hold `Vec2`/`Vec3`/`Quat` directly (they are `bytemuck::Pod`: `Vec3` has the bytes
//!   of `[f32; 3]`, `Quat` those of `[f32; 4]`, 16-byte aligned). Never `Vec3A` in a buffer: its
//!   padding makes it 16 bytes.
//!
//! # What lane code may use (the rule the CUDA twins rely on)
//! Lane code — anything that runs per env inside generation or the runtime — must produce the
//! same bits on every machine and in its C++ twin. It therefore uses only:
//! - glam's component-wise operators (`+ − * /` between vectors and with scalars, `neg`),
//!   `dot` (`(x·x' + y·y') + z·z'`, left to right), `cross` (`y·z' − y'·z`, `z·x' − z'·x`,
//!   `x·y' − x'·y`), `length` (`sqrt(dot)`), `length_squared`, `min`/`max`/`abs` per component:
//!   their evaluation order was read in glam 0.29's scalar and SSE2 sources and is the order a
//!   C++ twin writes them in;
//! - the functions of this module, which spell out every quaternion product and rotation with
//!   explicit components (glam's `Quat` arithmetic is SIMD-ordered on x86 and is not used);
//! - [`crate::math`] for anything transcendental.
//!
//! Never glam's or std's `sin`, `cos`, `atan2`, `exp`, …, `Quat::from_axis_angle`, `slerp`,
//! `normalize` (it multiplies by a reciprocal), or `mul_add`: `clippy.toml` lists them under
//! `disallowed-methods`, so `cargo clippy` rejects them anywhere in the crate.

mod cmp;
mod frame;
pub mod sdf;
mod spline;

pub use cmp::{fails_ge, fails_gt, fails_le, fails_lt};
pub use frame::{
    axes, compose, forward, from_axes, from_euler, horizontal_left, roll_free, rotate, yaw,
    IDENTITY,
};
pub use glam::{Quat, Vec2, Vec3};
pub use spline::{bezier, bezier_weighted, bezier_weights, catmull_rom, SplinePoint};
