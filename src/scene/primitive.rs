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
//! Positions are metres, `z` is up. Rotations are unit quaternions `[w, x, y, z]` (normalised when
//! compiled) mapping local to world axes.
//!
//! # JSON schema (`trackgen-scene-primitives`, version 1)
//!
//! [`export_json`] writes one object:
//!
//! ```text
//! { "format": "trackgen-scene-primitives", "version": 1,
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
//! | `gate_frame` | `center`, `rotation`, `outer_half`, `inner_half`, `half_depth` | a rectangular frame: the local `xz` rectangle `outer_half` minus `inner_half`, `half_depth` thick along local `y` (the flight direction) |

use serde::{Deserialize, Serialize};

use crate::math::sin_cos;
use crate::{Error, Result};

/// A unit quaternion `[w, x, y, z]` (local → world).
pub type Quat = [f32; 4];

/// The identity rotation.
pub const IDENTITY: Quat = [1.0, 0.0, 0.0, 0.0];

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
        normal: [f32; 3],
        /// Signed offset along `normal`, metres.
        offset: f32,
    },
    /// An oriented box.
    Box {
        /// Centre, metres.
        center: [f32; 3],
        /// Rotation.
        rotation: Quat,
        /// Half side lengths along the local axes, metres.
        half_extents: [f32; 3],
    },
    /// An oriented box with rounded edges; `half_extents` is the outer size.
    RoundedBox {
        /// Centre, metres.
        center: [f32; 3],
        /// Rotation.
        rotation: Quat,
        /// Outer half side lengths, metres.
        half_extents: [f32; 3],
        /// Edge radius, metres (at most the smallest half extent).
        radius: f32,
    },
    /// A ball.
    Sphere {
        /// Centre, metres.
        center: [f32; 3],
        /// Radius, metres.
        radius: f32,
    },
    /// All points within `radius` of the segment `a b`.
    Capsule {
        /// First end, metres.
        a: [f32; 3],
        /// Second end, metres.
        b: [f32; 3],
        /// Radius, metres.
        radius: f32,
    },
    /// A capped cylinder along the local `z` axis.
    Cylinder {
        /// Centre, metres.
        center: [f32; 3],
        /// Rotation.
        rotation: Quat,
        /// Radius, metres.
        radius: f32,
        /// Half length along local `z`, metres.
        half_height: f32,
    },
    /// A rectangular gate frame in the local `xz` plane, flown through along local `y`.
    GateFrame {
        /// Centre, metres.
        center: [f32; 3],
        /// Rotation.
        rotation: Quat,
        /// Outer half width (local x) and half height (local z), metres.
        outer_half: [f32; 2],
        /// Opening half width and half height, metres (smaller than `outer_half`).
        inner_half: [f32; 2],
        /// Half thickness along local `y`, metres.
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

/// The quaternion of a yaw (about z), then pitch (about y), then roll (about x) rotation, radians:
/// `q = q_z(yaw) · q_y(pitch) · q_x(roll)`.
pub fn quat_from_euler(yaw: f32, pitch: f32, roll: f32) -> Quat {
    let (sy, cy) = sin_cos(yaw * 0.5);
    let (sp, cp) = sin_cos(pitch * 0.5);
    let (sr, cr) = sin_cos(roll * 0.5);
    [
        cy * cp * cr + sy * sp * sr,
        cy * cp * sr - sy * sp * cr,
        cy * sp * cr + sy * cp * sr,
        sy * cp * cr - cy * sp * sr,
    ]
}

/// The world directions of the local x, y and z axes of unit quaternion `q`.
pub fn quat_axes(q: Quat) -> [[f32; 3]; 3] {
    let [w, x, y, z] = q;
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ],
        [
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
        ],
        [
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

#[inline]
pub(crate) fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
pub(crate) fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
pub(crate) fn len(a: [f32; 3]) -> f32 {
    dot(a, a).sqrt()
}

/// `min` without NaN handling (compiles to one instruction; NaN never reaches it here).
#[inline(always)]
pub(crate) fn fmin(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// `max` without NaN handling.
#[inline(always)]
pub(crate) fn fmax(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// The kind of a compiled primitive (the evaluation formula).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Plane,
    Box,
    Sphere,
    Capsule,
    Cylinder,
    GateFrame,
}

/// A primitive prepared for evaluation: the local frame and the formula's parameters.
///
/// `p` holds, per kind: box `[hx, hy, hz, rounding]` (half extents already shrunk by the
/// rounding); sphere `[r]`; capsule `[bx, by, bz, r, 1/|b-a|²]` with `center = a`; cylinder
/// `[r, half_height]`; gate frame `[ox, oz, ix, iz, half_depth]`; plane: `axes[0]` is the
/// normal and `p[0]` the offset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Compiled {
    pub kind: Kind,
    pub subtract: bool,
    pub center: [f32; 3],
    pub axes: [[f32; 3]; 3],
    pub p: [f32; 6],
}

fn finite3(v: [f32; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

fn rotation_axes(q: Quat, what: &str) -> Result<[[f32; 3]; 3]> {
    let n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if !(n2.is_finite() && n2 > 1e-12) {
        return Err(Error::Invalid(format!(
            "{what}: rotation {q:?} is not a non-zero finite quaternion [w, x, y, z]"
        )));
    }
    let n = n2.sqrt();
    Ok(quat_axes([q[0] / n, q[1] / n, q[2] / n, q[3] / n]))
}

impl Compiled {
    /// Checks the primitive's parameters and prepares it; `index` names it in errors.
    pub fn new(prim: &Primitive, index: usize) -> Result<Self> {
        let what = format!("primitive {index}");
        let bad = |field: &str, value: String, expected: &str| {
            Error::Invalid(format!("{what}: `{field}` = {value}: expected {expected}"))
        };
        let positive = |field: &str, v: f32| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(bad(field, v.to_string(), "a finite number > 0"))
            }
        };
        let point = |field: &str, v: [f32; 3]| {
            if finite3(v) {
                Ok(())
            } else {
                Err(bad(field, format!("{v:?}"), "finite coordinates"))
            }
        };
        let subtract = prim.op == Op::Subtract;
        let mut out = Compiled {
            kind: Kind::Sphere,
            subtract,
            center: [0.0; 3],
            axes: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            p: [0.0; 6],
        };
        match prim.shape {
            Shape::Plane { normal, offset } => {
                let n = len(normal);
                if !(finite3(normal) && n > 1e-6) {
                    return Err(bad("normal", format!("{normal:?}"), "a non-zero vector"));
                }
                if !offset.is_finite() {
                    return Err(bad("offset", offset.to_string(), "a finite number"));
                }
                out.kind = Kind::Plane;
                out.axes[0] = [normal[0] / n, normal[1] / n, normal[2] / n];
                out.p[0] = offset;
            }
            Shape::Box {
                center,
                rotation,
                half_extents,
            } => {
                point("center", center)?;
                for h in half_extents {
                    positive("half_extents", h)?;
                }
                out.kind = Kind::Box;
                out.center = center;
                out.axes = rotation_axes(rotation, &what)?;
                out.p[..3].copy_from_slice(&half_extents);
            }
            Shape::RoundedBox {
                center,
                rotation,
                half_extents,
                radius,
            } => {
                point("center", center)?;
                for h in half_extents {
                    positive("half_extents", h)?;
                }
                let smallest = half_extents[0].min(half_extents[1]).min(half_extents[2]);
                if !(radius.is_finite() && radius >= 0.0 && radius <= smallest) {
                    return Err(bad(
                        "radius",
                        radius.to_string(),
                        &format!("a number in [0, {smallest}] (the smallest half extent)"),
                    ));
                }
                out.kind = Kind::Box;
                out.center = center;
                out.axes = rotation_axes(rotation, &what)?;
                for (p, h) in out.p.iter_mut().zip(half_extents) {
                    *p = h - radius;
                }
                out.p[3] = radius;
            }
            Shape::Sphere { center, radius } => {
                point("center", center)?;
                positive("radius", radius)?;
                out.center = center;
                out.p[0] = radius;
            }
            Shape::Capsule { a, b, radius } => {
                point("a", a)?;
                point("b", b)?;
                positive("radius", radius)?;
                let ba = sub(b, a);
                let l2 = dot(ba, ba);
                out.kind = Kind::Capsule;
                out.center = a;
                out.p = [
                    ba[0],
                    ba[1],
                    ba[2],
                    radius,
                    if l2 > 0.0 { 1.0 / l2 } else { 0.0 },
                    0.0,
                ];
            }
            Shape::Cylinder {
                center,
                rotation,
                radius,
                half_height,
            } => {
                point("center", center)?;
                positive("radius", radius)?;
                positive("half_height", half_height)?;
                out.kind = Kind::Cylinder;
                out.center = center;
                out.axes = rotation_axes(rotation, &what)?;
                out.p[0] = radius;
                out.p[1] = half_height;
            }
            Shape::GateFrame {
                center,
                rotation,
                outer_half,
                inner_half,
                half_depth,
            } => {
                point("center", center)?;
                for (o, i) in outer_half.iter().zip(inner_half) {
                    positive("outer_half", *o)?;
                    positive("inner_half", i)?;
                    if i >= *o {
                        return Err(bad(
                            "inner_half",
                            format!("{inner_half:?}"),
                            &format!("values below `outer_half` = {outer_half:?}"),
                        ));
                    }
                }
                positive("half_depth", half_depth)?;
                out.kind = Kind::GateFrame;
                out.center = center;
                out.axes = rotation_axes(rotation, &what)?;
                out.p = [
                    outer_half[0],
                    outer_half[1],
                    inner_half[0],
                    inner_half[1],
                    half_depth,
                    0.0,
                ];
            }
        }
        Ok(out)
    }

    /// The primitive's own exact signed distance at `q` (metres).
    #[inline(always)]
    pub fn distance(&self, q: [f32; 3]) -> f32 {
        match self.kind {
            Kind::Plane => self.distance_plane(q),
            Kind::Sphere => self.distance_sphere(q),
            Kind::Box => self.distance_box(q),
            Kind::Capsule => self.distance_capsule(q),
            Kind::Cylinder => self.distance_cylinder(q),
            Kind::GateFrame => self.distance_gate(q),
        }
    }

    #[inline(always)]
    pub(crate) fn distance_plane(&self, q: [f32; 3]) -> f32 {
        dot(self.axes[0], q) - self.p[0]
    }

    #[inline(always)]
    pub(crate) fn distance_sphere(&self, q: [f32; 3]) -> f32 {
        len(sub(q, self.center)) - self.p[0]
    }

    #[inline(always)]
    pub(crate) fn distance_box(&self, q: [f32; 3]) -> f32 {
        let l = self.local(q);
        box_distance(l, [self.p[0], self.p[1], self.p[2]]) - self.p[3]
    }

    #[inline(always)]
    pub(crate) fn distance_capsule(&self, q: [f32; 3]) -> f32 {
        let pa = sub(q, self.center);
        let ba = [self.p[0], self.p[1], self.p[2]];
        let h = fmin(fmax(dot(pa, ba) * self.p[4], 0.0), 1.0);
        len([pa[0] - ba[0] * h, pa[1] - ba[1] * h, pa[2] - ba[2] * h]) - self.p[3]
    }

    #[inline(always)]
    pub(crate) fn distance_cylinder(&self, q: [f32; 3]) -> f32 {
        let l = self.local(q);
        let radial = (l[0] * l[0] + l[1] * l[1]).sqrt() - self.p[0];
        extrude(radial, l[2].abs() - self.p[1])
    }

    #[inline(always)]
    pub(crate) fn distance_gate(&self, q: [f32; 3]) -> f32 {
        let l = self.local(q);
        let (x, z) = (l[0].abs(), l[2].abs());
        let outer = rect_distance(x - self.p[0], z - self.p[1]);
        let inner = rect_distance(x - self.p[2], z - self.p[3]);
        extrude(fmax(outer, -inner), l[1].abs() - self.p[4])
    }

    /// `q` in the primitive's local frame.
    #[inline(always)]
    fn local(&self, q: [f32; 3]) -> [f32; 3] {
        let d = sub(q, self.center);
        [
            dot(self.axes[0], d),
            dot(self.axes[1], d),
            dot(self.axes[2], d),
        ]
    }

    /// Folds this term into the accumulated value.
    #[inline(always)]
    pub fn fold(&self, acc: f32, d: f32) -> f32 {
        if self.subtract {
            fmax(acc, -d)
        } else {
            fmin(acc, d)
        }
    }
}

/// Exact distance to the axis-aligned box of half extents `b` centred at the origin.
#[inline(always)]
fn box_distance(l: [f32; 3], b: [f32; 3]) -> f32 {
    let q = [l[0].abs() - b[0], l[1].abs() - b[1], l[2].abs() - b[2]];
    let outside = len([fmax(q[0], 0.0), fmax(q[1], 0.0), fmax(q[2], 0.0)]);
    outside + fmin(fmax(q[0], fmax(q[1], q[2])), 0.0)
}

/// Exact 2D box distance from the per-axis excesses `qx = |x| - hx`, `qz = |z| - hz`.
#[inline(always)]
fn rect_distance(qx: f32, qz: f32) -> f32 {
    let (ox, oz) = (fmax(qx, 0.0), fmax(qz, 0.0));
    (ox * ox + oz * oz).sqrt() + fmin(fmax(qx, qz), 0.0)
}

/// Exact distance of the extrusion of a 2D field `d2` along an axis, given `|y| - half`.
#[inline(always)]
fn extrude(d2: f32, dy: f32) -> f32 {
    rect_distance(d2, dy)
}

/// A compiled scene: the CSG fold of its terms.
#[derive(Clone, Debug)]
pub struct CompiledScene {
    pub(crate) terms: Vec<Compiled>,
}

impl CompiledScene {
    /// Checks and prepares `prims`; an error names the first bad primitive and field.
    pub fn new(prims: &[Primitive]) -> Result<Self> {
        let terms = prims
            .iter()
            .enumerate()
            .map(|(i, p)| Compiled::new(p, i))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { terms })
    }

    /// The scene's signed distance at `q` (metres); `+∞` for an empty scene.
    pub fn distance(&self, q: [f32; 3]) -> f32 {
        fold_terms(self.terms.iter(), q)
    }
}

/// The CSG fold of `terms` at `q`.
#[inline]
pub(crate) fn fold_terms<'a>(terms: impl Iterator<Item = &'a Compiled>, q: [f32; 3]) -> f32 {
    let mut acc = f32::INFINITY;
    for t in terms {
        acc = t.fold(acc, t.distance(q));
    }
    acc
}

/// One env's analytic scene: its primitives, its cubic domain and a free spawn point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvScene {
    /// Min corner of the cubic domain, metres.
    pub origin: [f32; 3],
    /// Side of the domain, metres.
    pub size_m: f32,
    /// A point in free space (where an agent may start), metres.
    pub spawn: [f32; 3],
    /// The CSG terms, folded in order.
    pub primitives: Vec<Primitive>,
}

/// One env of the JSON export.
#[derive(Serialize)]
struct JsonEnv<'a> {
    env: u64,
    origin: [f32; 3],
    size_m: f32,
    spawn: [f32; 3],
    primitives: &'a [Primitive],
}

/// One env of a JSON document being read back.
#[derive(Deserialize)]
struct JsonEnvOwned {
    env: u64,
    origin: [f32; 3],
    size_m: f32,
    spawn: [f32; 3],
    primitives: Vec<Primitive>,
}

/// The JSON document of the module's schema for `scenes` (env `first_env + i` is `scenes[i]`).
pub fn export_json(
    scenes: &[EnvScene],
    first_env: u64,
    preset: &str,
    preset_sha256: &str,
    seed: u64,
    generation: u32,
) -> String {
    let envs: Vec<JsonEnv> = scenes
        .iter()
        .enumerate()
        .map(|(i, s)| JsonEnv {
            env: first_env + i as u64,
            origin: s.origin,
            size_m: s.size_m,
            spawn: s.spawn,
            primitives: &s.primitives,
        })
        .collect();
    let doc = serde_json::json!({
        "format": "trackgen-scene-primitives",
        "version": 1,
        "preset": preset,
        "preset_sha256": preset_sha256,
        "seed": seed,
        "generation": generation,
        "envs": envs,
    });
    serde_json::to_string_pretty(&doc).expect("scene JSON serialises")
}

/// Parses a document written by [`export_json`] back into `(env, scene)` pairs.
pub fn import_json(text: &str) -> Result<Vec<(u64, EnvScene)>> {
    let bad = |m: String| Error::Invalid(format!("primitives JSON: {m}"));
    let doc: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    if doc.get("format").and_then(|f| f.as_str()) != Some("trackgen-scene-primitives") {
        return Err(bad("`format` is not \"trackgen-scene-primitives\"".into()));
    }
    if doc.get("version").and_then(|v| v.as_u64()) != Some(1) {
        return Err(bad("`version`: expected 1".into()));
    }
    let envs = doc
        .get("envs")
        .cloned()
        .ok_or_else(|| bad("no `envs` array".into()))?;
    let envs: Vec<JsonEnvOwned> =
        serde_json::from_value(envs).map_err(|e| bad(format!("`envs`: {e}")))?;
    Ok(envs
        .into_iter()
        .map(|e| {
            (
                e.env,
                EnvScene {
                    origin: e.origin,
                    size_m: e.size_m,
                    spawn: e.spawn,
                    primitives: e.primitives,
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(shape: Shape, q: [f32; 3]) -> f32 {
        Compiled::new(&Primitive::union(shape), 0)
            .unwrap()
            .distance(q)
    }

    #[test]
    fn hand_computed_distances() {
        let sphere = Shape::Sphere {
            center: [1.0, 0.0, 0.0],
            radius: 0.5,
        };
        assert_eq!(eval(sphere, [3.0, 0.0, 0.0]), 1.5);
        let boxed = Shape::Box {
            center: [0.0; 3],
            rotation: IDENTITY,
            half_extents: [1.0, 2.0, 3.0],
        };
        assert_eq!(eval(boxed.clone(), [0.0, 0.0, 0.0]), -1.0);
        assert_eq!(eval(boxed.clone(), [4.0, 0.0, 0.0]), 3.0);
        assert_eq!(eval(boxed, [4.0, 6.0, 0.0]), 5.0);
        let cyl = Shape::Cylinder {
            center: [0.0; 3],
            rotation: IDENTITY,
            radius: 1.0,
            half_height: 2.0,
        };
        assert_eq!(eval(cyl.clone(), [4.0, 0.0, 0.0]), 3.0);
        assert_eq!(eval(cyl, [0.0, 0.0, 5.0]), 3.0);
        let cap = Shape::Capsule {
            a: [0.0; 3],
            b: [0.0, 0.0, 2.0],
            radius: 0.5,
        };
        assert_eq!(eval(cap.clone(), [0.0, 0.0, 4.0]), 1.5);
        assert_eq!(eval(cap, [2.0, 0.0, 1.0]), 1.5);
        let gate = Shape::GateFrame {
            center: [0.0; 3],
            rotation: IDENTITY,
            outer_half: [2.0, 2.0],
            inner_half: [1.5, 1.5],
            half_depth: 0.1,
        };
        // The opening's centre is 1.5 m from the inner edges.
        assert_eq!(eval(gate.clone(), [0.0, 0.0, 0.0]), 1.5);
        assert_eq!(eval(gate, [1.75, 0.0, 0.0]), -0.1);
        let plane = Shape::Plane {
            normal: [0.0, 0.0, 2.0],
            offset: 1.0,
        };
        assert_eq!(eval(plane, [5.0, 5.0, 3.0]), 2.0);
    }

    #[test]
    fn rotation_maps_local_axes() {
        let q = quat_from_euler(crate::math::FRAC_PI_2, 0.0, 0.0);
        let axes = quat_axes(q);
        assert!((axes[0][1] - 1.0).abs() < 1e-6 && axes[0][0].abs() < 1e-6);
        let rotated = Shape::Box {
            center: [0.0; 3],
            rotation: q,
            half_extents: [3.0, 1.0, 1.0],
        };
        // The long axis now points along y.
        assert!((eval(rotated, [0.0, 5.0, 0.0]) - 2.0).abs() < 1e-5);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let p = Primitive::union(Shape::Sphere {
            center: [0.0; 3],
            radius: -1.0,
        });
        let e = Compiled::new(&p, 7).unwrap_err().to_string();
        assert!(e.contains("primitive 7") && e.contains("radius"), "{e}");
    }

    #[test]
    fn subtraction_cuts() {
        let scene = CompiledScene::new(&[
            Primitive::union(Shape::Sphere {
                center: [0.0; 3],
                radius: 2.0,
            }),
            Primitive::subtract(Shape::Sphere {
                center: [0.0; 3],
                radius: 1.0,
            }),
        ])
        .unwrap();
        assert_eq!(scene.distance([0.0; 3]), 1.0);
        assert_eq!(scene.distance([1.5, 0.0, 0.0]), -0.5);
        assert_eq!(scene.distance([3.0, 0.0, 0.0]), 1.0);
    }
}
