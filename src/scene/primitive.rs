//! Primitives and their exact signed distances; the CSG fold; the JSON export schema.
//!
//! A scene is an ordered list of [`Primitive`]s folded left to right: the value starts at `+∞`
//! (empty space), a [`Op::Union`] term takes `min(acc, d)`, an [`Op::Subtract`] term takes
//! `max(acc, -d)`. Each primitive's own distance is exact (the formulas are Quilez's,
//! <https://iquilezles.org/articles/distfunctions/>). The fold is exact outside a union and,
//! elsewhere, a *conservative* signed distance: the sign is right and the magnitude is never
//! larger than the true distance, and the field stays 1-Lipschitz. That is what the voxelisation
//! and the sphere tracer need: a lower bound on the distance to the nearest surface.
//!
//! Positions are metres, `z` is up. Rotations are unit quaternions `[x, y, z, w]` (normalised when
//! compiled) mapping local to world axes ([`crate::geom`]'s convention).
//!
//! # JSON schema (`trackgen-scene-primitives`, version 2)
//!
//! [`export_json`](super::json::export_json) writes one object:
//!
//! ```text
//! { "format": "trackgen-scene-primitives", "version": 2,
//!   "preset": "<name or path>", "preset_sha256": "<hex>", "seed": S, "generation": G,
//!   "envs": [ { "env": E, "origin": [x, y, z], "size_m": S, "spawn": [x, y, z],
//!               "primitives": [ PRIMITIVE, ... ] }, ... ] }
//! ```
//!
//! `origin` is the min corner of the env's cubic domain and `size_m` its side; `spawn` a free
//! point (a start position). Each PRIMITIVE is `{"op": "union" | "subtract", "kind": K, ...}`:
//!
//! | kind | fields | solid where |
//! |---|---|---|
//! | `plane` | `normal` (unit), `offset` | `normal·p < offset` |
//! | `box` | `center`, `rotation`, `half_extents` | inside the oriented box |
//! | `rounded_box` | `center`, `rotation`, `half_extents`, `radius` | box with edges rounded by `radius` (outer size = `half_extents`) |
//! | `sphere` | `center`, `radius` | inside the ball |
//! | `capsule` | `a`, `b`, `radius` | within `radius` of segment `ab` |
//! | `cylinder` | `center`, `rotation`, `radius`, `half_height` | capped cylinder along local `z` |
//! | `gate_frame` | `center`, `rotation`, `outer_half`, `inner_half`, `half_depth` | a rectangular frame: the local `yz` rectangle `outer_half` minus `inner_half` (half width along `y`, half height along `z`), `half_depth` thick along local `x` (the flight direction) |
//!
//! Vectors are JSON arrays `[x, y, z]`, rotations `[x, y, z, w]`. Version 2 changed the
//! rotation order (version 1 wrote `[w, x, y, z]`) and the gate frame's axes (version 1 flew
//! gates along local `y`).
//!
//! The module holds the shapes; [`compiled`](super::compiled) evaluates them and
//! [`json`](super::json) reads and writes the schema.

use serde::{Deserialize, Serialize};

use crate::geom::{Quat, Vec2, Vec3};

/// How a primitive joins the scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `acc = min(acc, d)`.
    Union,
    /// `acc = max(acc, -d)`.
    Subtract,
}

/// A primitive's shape (see the module table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// The half-space `normal·p < offset`.
    Plane {
        /// Unit normal pointing out of the solid.
        normal: Vec3,
        /// Signed offset along `normal`, metres.
        offset: f32,
    },
    /// An oriented box.
    Box {
        /// Centre, metres.
        center: Vec3,
        /// Rotation.
        rotation: Quat,
        /// Half side lengths along the local axes, metres.
        half_extents: Vec3,
    },
    /// An oriented box with rounded edges; `half_extents` is the outer size.
    RoundedBox {
        /// Centre, metres.
        center: Vec3,
        /// Rotation.
        rotation: Quat,
        /// Outer half side lengths, metres.
        half_extents: Vec3,
        /// Edge radius, metres (at most the smallest half extent).
        radius: f32,
    },
    /// A ball.
    Sphere {
        /// Centre, metres.
        center: Vec3,
        /// Radius, metres.
        radius: f32,
    },
    /// All points within `radius` of the segment `a b`.
    Capsule {
        /// First end, metres.
        a: Vec3,
        /// Second end, metres.
        b: Vec3,
        /// Radius, metres.
        radius: f32,
    },
    /// A capped cylinder along the local `z` axis.
    Cylinder {
        /// Centre, metres.
        center: Vec3,
        /// Rotation.
        rotation: Quat,
        /// Radius, metres.
        radius: f32,
        /// Half length along local `z`, metres.
        half_height: f32,
    },
    /// A rectangular gate frame in the local `yz` plane, flown through along local `x`.
    GateFrame {
        /// Centre, metres.
        center: Vec3,
        /// Rotation.
        rotation: Quat,
        /// Outer half width (local y) and half height (local z), metres.
        outer_half: Vec2,
        /// Opening half width and half height, metres (smaller than `outer_half`).
        inner_half: Vec2,
        /// Half thickness along local `x` (the flight direction), metres.
        half_depth: f32,
    },
}

/// One term of a scene's CSG fold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Primitive {
    /// How the term joins the scene.
    pub op: Op,
    /// The shape.
    #[serde(flatten)]
    pub shape: Shape,
}

impl Primitive {
    /// A union term.
    pub fn union(shape: Shape) -> Self {
        Self {
            op: Op::Union,
            shape,
        }
    }

    /// A subtraction term.
    pub fn subtract(shape: Shape) -> Self {
        Self {
            op: Op::Subtract,
            shape,
        }
    }
}

/// One env's analytic scene: its primitives, its cubic domain and a free spawn point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvScene {
    /// Min corner of the cubic domain, metres.
    pub origin: Vec3,
    /// Side of the domain, metres.
    pub size_m: f32,
    /// A point in free space (where an agent may start), metres.
    pub spawn: Vec3,
    /// The CSG terms, folded in order.
    pub primitives: Vec<Primitive>,
}
