//! Primitives prepared for evaluation: checked parameters, local frames, and the CSG fold.
//!
//! The distances themselves are [`crate::geom::sdf`]'s; this module applies each primitive's
//! frame and folds the terms (`min` for a union, `max(acc, −d)` for a subtraction).

use super::primitive::{Op, Primitive, Shape};
use crate::geom::sdf::{self, fmax, fmin};
use crate::geom::{self, Quat, Vec2, Vec3};
use crate::{Error, Result};

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
/// `[r, half_height]`; gate frame `[outer_y, outer_z, inner_y, inner_z, half_depth]`; plane:
/// `axes[0]` is the normal and `p[0]` the offset.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Compiled {
    pub kind: Kind,
    pub subtract: bool,
    pub center: Vec3,
    pub axes: [Vec3; 3],
    pub p: [f32; 6],
}

fn rotation_axes(q: Quat, what: &str) -> Result<[Vec3; 3]> {
    let n2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if !(n2.is_finite() && n2 > 1e-12) {
        return Err(Error::Invalid(format!(
            "{what}: rotation {:?} is not a non-zero finite quaternion [x, y, z, w]",
            q.to_array()
        )));
    }
    let n = n2.sqrt();
    Ok(geom::axes(Quat::from_xyzw(
        q.x / n,
        q.y / n,
        q.z / n,
        q.w / n,
    )))
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
        let point = |field: &str, v: Vec3| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(bad(
                    field,
                    format!("{:?}", v.to_array()),
                    "finite coordinates",
                ))
            }
        };
        let subtract = prim.op == Op::Subtract;
        let mut out = Compiled {
            kind: Kind::Sphere,
            subtract,
            center: Vec3::ZERO,
            axes: [Vec3::X, Vec3::Y, Vec3::Z],
            p: [0.0; 6],
        };
        match prim.shape {
            Shape::Plane { normal, offset } => {
                let n = normal.length();
                if !(normal.is_finite() && n > 1e-6) {
                    return Err(bad(
                        "normal",
                        format!("{:?}", normal.to_array()),
                        "a non-zero vector",
                    ));
                }
                if !offset.is_finite() {
                    return Err(bad("offset", offset.to_string(), "a finite number"));
                }
                out.kind = Kind::Plane;
                out.axes[0] = normal / n;
                out.p[0] = offset;
            }
            Shape::Box {
                center,
                rotation,
                half_extents,
            } => {
                point("center", center)?;
                for h in half_extents.to_array() {
                    positive("half_extents", h)?;
                }
                out.kind = Kind::Box;
                out.center = center;
                out.axes = rotation_axes(rotation, &what)?;
                out.p[..3].copy_from_slice(&half_extents.to_array());
            }
            Shape::RoundedBox {
                center,
                rotation,
                half_extents,
                radius,
            } => {
                point("center", center)?;
                for h in half_extents.to_array() {
                    positive("half_extents", h)?;
                }
                let smallest = half_extents.x.min(half_extents.y).min(half_extents.z);
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
                for (p, h) in out.p.iter_mut().zip(half_extents.to_array()) {
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
                let ba = b - a;
                let l2 = ba.dot(ba);
                out.kind = Kind::Capsule;
                out.center = a;
                out.p = [
                    ba.x,
                    ba.y,
                    ba.z,
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
                for (o, i) in outer_half.to_array().into_iter().zip(inner_half.to_array()) {
                    positive("outer_half", o)?;
                    positive("inner_half", i)?;
                    if i >= o {
                        return Err(bad(
                            "inner_half",
                            format!("{:?}", inner_half.to_array()),
                            &format!("values below `outer_half` = {:?}", outer_half.to_array()),
                        ));
                    }
                }
                positive("half_depth", half_depth)?;
                out.kind = Kind::GateFrame;
                out.center = center;
                out.axes = rotation_axes(rotation, &what)?;
                out.p = [
                    outer_half.x,
                    outer_half.y,
                    inner_half.x,
                    inner_half.y,
                    half_depth,
                    0.0,
                ];
            }
        }
        Ok(out)
    }

    /// The primitive's own exact signed distance at `q` (metres).
    #[inline(always)]
    pub fn distance(&self, q: Vec3) -> f32 {
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
    pub(crate) fn distance_plane(&self, q: Vec3) -> f32 {
        self.axes[0].dot(q) - self.p[0]
    }

    #[inline(always)]
    pub(crate) fn distance_sphere(&self, q: Vec3) -> f32 {
        (q - self.center).length() - self.p[0]
    }

    #[inline(always)]
    pub(crate) fn distance_box(&self, q: Vec3) -> f32 {
        let half = Vec3::new(self.p[0], self.p[1], self.p[2]);
        sdf::box3(self.local(q), half) - self.p[3]
    }

    #[inline(always)]
    pub(crate) fn distance_capsule(&self, q: Vec3) -> f32 {
        let ba = Vec3::new(self.p[0], self.p[1], self.p[2]);
        sdf::capsule(q - self.center, ba, self.p[4], self.p[3])
    }

    #[inline(always)]
    pub(crate) fn distance_cylinder(&self, q: Vec3) -> f32 {
        sdf::cylinder(self.local(q), self.p[0], self.p[1])
    }

    #[inline(always)]
    pub(crate) fn distance_gate(&self, q: Vec3) -> f32 {
        sdf::gate_frame(
            self.local(q),
            Vec2::new(self.p[0], self.p[1]),
            Vec2::new(self.p[2], self.p[3]),
            self.p[4],
        )
    }

    /// `q` in the primitive's local frame.
    #[inline(always)]
    fn local(&self, q: Vec3) -> Vec3 {
        let d = q - self.center;
        Vec3::new(
            self.axes[0].dot(d),
            self.axes[1].dot(d),
            self.axes[2].dot(d),
        )
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

    /// The scene's signed distance at `q` (metres; a [`Vec3`] or `[f32; 3]`); `+∞` for an empty
    /// scene.
    pub fn distance(&self, q: impl Into<Vec3>) -> f32 {
        fold_terms(self.terms.iter(), q.into())
    }
}

/// The CSG fold of `terms` at `q`.
#[inline]
pub(crate) fn fold_terms<'a>(terms: impl Iterator<Item = &'a Compiled>, q: Vec3) -> f32 {
    let mut acc = f32::INFINITY;
    for t in terms {
        acc = t.fold(acc, t.distance(q));
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::{from_euler, IDENTITY};
    use crate::scene::primitive::{Primitive, Shape};

    fn eval(shape: Shape, q: Vec3) -> f32 {
        Compiled::new(&Primitive::union(shape), 0)
            .unwrap()
            .distance(q)
    }

    #[test]
    fn hand_computed_distances() {
        let sphere = Shape::Sphere {
            center: Vec3::new(1.0, 0.0, 0.0),
            radius: 0.5,
        };
        assert_eq!(eval(sphere, Vec3::new(3.0, 0.0, 0.0)), 1.5);
        let boxed = Shape::Box {
            center: Vec3::ZERO,
            rotation: IDENTITY,
            half_extents: Vec3::new(1.0, 2.0, 3.0),
        };
        assert_eq!(eval(boxed.clone(), Vec3::new(0.0, 0.0, 0.0)), -1.0);
        assert_eq!(eval(boxed.clone(), Vec3::new(4.0, 0.0, 0.0)), 3.0);
        assert_eq!(eval(boxed, Vec3::new(4.0, 6.0, 0.0)), 5.0);
        let cyl = Shape::Cylinder {
            center: Vec3::ZERO,
            rotation: IDENTITY,
            radius: 1.0,
            half_height: 2.0,
        };
        assert_eq!(eval(cyl.clone(), Vec3::new(4.0, 0.0, 0.0)), 3.0);
        assert_eq!(eval(cyl, Vec3::new(0.0, 0.0, 5.0)), 3.0);
        let cap = Shape::Capsule {
            a: Vec3::ZERO,
            b: Vec3::new(0.0, 0.0, 2.0),
            radius: 0.5,
        };
        assert_eq!(eval(cap.clone(), Vec3::new(0.0, 0.0, 4.0)), 1.5);
        assert_eq!(eval(cap, Vec3::new(2.0, 0.0, 1.0)), 1.5);
        let gate = Shape::GateFrame {
            center: Vec3::ZERO,
            rotation: IDENTITY,
            outer_half: Vec2::new(2.0, 2.0),
            inner_half: Vec2::new(1.5, 1.5),
            half_depth: 0.1,
        };
        // The opening's centre is 1.5 m from the inner edges.
        assert_eq!(eval(gate.clone(), Vec3::new(0.0, 0.0, 0.0)), 1.5);
        assert_eq!(eval(gate, Vec3::new(0.0, 1.75, 0.0)), -0.1);
        let plane = Shape::Plane {
            normal: Vec3::new(0.0, 0.0, 2.0),
            offset: 1.0,
        };
        assert_eq!(eval(plane, Vec3::new(5.0, 5.0, 3.0)), 2.0);
    }

    #[test]
    fn rotation_maps_local_axes() {
        let q = from_euler(crate::math::FRAC_PI_2, 0.0, 0.0);
        let axes = crate::geom::axes(q);
        assert!((axes[0].y - 1.0).abs() < 1e-6 && axes[0].x.abs() < 1e-6);
        let rotated = Shape::Box {
            center: Vec3::ZERO,
            rotation: q,
            half_extents: Vec3::new(3.0, 1.0, 1.0),
        };
        // The long axis now points along y.
        assert!((eval(rotated, Vec3::new(0.0, 5.0, 0.0)) - 2.0).abs() < 1e-5);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let p = Primitive::union(Shape::Sphere {
            center: Vec3::ZERO,
            radius: -1.0,
        });
        let e = Compiled::new(&p, 7).unwrap_err().to_string();
        assert!(e.contains("primitive 7") && e.contains("radius"), "{e}");
    }

    #[test]
    fn subtraction_cuts() {
        let scene = CompiledScene::new(&[
            Primitive::union(Shape::Sphere {
                center: Vec3::ZERO,
                radius: 2.0,
            }),
            Primitive::subtract(Shape::Sphere {
                center: Vec3::ZERO,
                radius: 1.0,
            }),
        ])
        .unwrap();
        assert_eq!(scene.distance(Vec3::ZERO), 1.0);
        assert_eq!(scene.distance(Vec3::new(1.5, 0.0, 0.0)), -0.5);
        assert_eq!(scene.distance(Vec3::new(3.0, 0.0, 0.0)), 1.0);
    }
}
