//! Fixed scenes and poses that the benchmarks share (`trackgen bench-scene` and
//! `cargo bench --bench scene`): a hand-placed objects scene, a scene turned about the vertical
//! (so no wall is aligned with the voxel grid), and one camera pose per env.

use super::primitive::{EnvScene, Primitive, Shape};
use super::sensor::Pose;
use super::PoolView;
use crate::geom::{self, from_euler, Quat, Vec2, Vec3, IDENTITY};
use crate::math::sin_cos;

/// A fixed test scene in a 16 m domain: a floor, four boxes, two balls, a capsule, a cylinder
/// and a gate frame; `rotated` turns every object by distinct non-axis angles.
pub fn objects_scene(rotated: bool) -> EnvScene {
    let rot = |k: f32| {
        if rotated {
            from_euler(0.52 + 0.31 * k, 0.23 + 0.11 * k, 0.17 * k)
        } else {
            IDENTITY
        }
    };
    let boxed = |c: [f32; 3], h: [f32; 3], k: f32| {
        Primitive::union(Shape::Box {
            center: c.into(),
            rotation: rot(k),
            half_extents: h.into(),
        })
    };
    let primitives = vec![
        Primitive::union(Shape::Plane {
            normal: Vec3::Z,
            offset: 0.0,
        }),
        boxed([-4.0, -3.0, 1.0], [1.0, 1.5, 1.0], 0.0),
        boxed([3.5, -4.0, 0.75], [1.25, 0.75, 0.75], 1.0),
        boxed([-3.0, 4.0, 1.5], [0.5, 2.0, 1.5], 2.0),
        boxed([4.0, 3.5, 0.5], [1.5, 1.5, 0.5], 3.0),
        Primitive::union(Shape::Sphere {
            center: Vec3::new(0.0, 0.0, 1.0),
            radius: 1.0,
        }),
        Primitive::union(Shape::Sphere {
            center: Vec3::new(1.5, -1.0, 3.0),
            radius: 0.6,
        }),
        Primitive::union(Shape::Capsule {
            a: Vec3::new(-1.0, 2.0, 0.5),
            b: if rotated {
                Vec3::new(0.8, 2.6, 2.4)
            } else {
                Vec3::new(-1.0, 2.0, 2.5)
            },
            radius: 0.4,
        }),
        Primitive::union(Shape::Cylinder {
            center: Vec3::new(2.0, 1.0, 1.5),
            rotation: rot(5.0),
            radius: 0.5,
            half_height: 1.5,
        }),
        Primitive::union(Shape::GateFrame {
            center: Vec3::new(-0.5, -4.5, 1.5),
            rotation: rot(6.0),
            outer_half: Vec2::new(1.2, 1.2),
            inner_half: Vec2::new(0.95, 0.95),
            half_depth: 0.1,
        }),
    ];
    EnvScene {
        origin: Vec3::new(-8.0, -8.0, -0.5),
        size_m: 16.0,
        spawn: Vec3::new(0.0, -2.0, 1.5),
        primitives,
    }
}

/// `scene` turned by `yaw` radians about the vertical through its domain's centre.
pub fn rotate_yaw(scene: &EnvScene, yaw: f32) -> EnvScene {
    let c = [
        scene.origin[0] + 0.5 * scene.size_m,
        scene.origin[1] + 0.5 * scene.size_m,
    ];
    let (s, co) = sin_cos(yaw);
    let point = |p: Vec3| {
        let (x, y) = (p.x - c[0], p.y - c[1]);
        Vec3::new(c[0] + co * x - s * y, c[1] + s * x + co * y, p.z)
    };
    let dir = |v: Vec3| Vec3::new(co * v.x - s * v.y, s * v.x + co * v.y, v.z);
    let q = from_euler(yaw, 0.0, 0.0);
    let turn = |r: Quat| geom::compose(q, r);
    let primitives = scene
        .primitives
        .iter()
        .map(|p| {
            let shape = match p.shape.clone() {
                Shape::Plane { normal, offset } => {
                    // The plane through the rotated foot point.
                    let (n, f) = (dir(normal), point(normal * offset));
                    Shape::Plane {
                        normal: n,
                        offset: n.dot(f),
                    }
                }
                Shape::Box {
                    center,
                    rotation,
                    half_extents,
                } => Shape::Box {
                    center: point(center),
                    rotation: turn(rotation),
                    half_extents,
                },
                Shape::RoundedBox {
                    center,
                    rotation,
                    half_extents,
                    radius,
                } => Shape::RoundedBox {
                    center: point(center),
                    rotation: turn(rotation),
                    half_extents,
                    radius,
                },
                Shape::Sphere { center, radius } => Shape::Sphere {
                    center: point(center),
                    radius,
                },
                Shape::Capsule { a, b, radius } => Shape::Capsule {
                    a: point(a),
                    b: point(b),
                    radius,
                },
                Shape::Cylinder {
                    center,
                    rotation,
                    radius,
                    half_height,
                } => Shape::Cylinder {
                    center: point(center),
                    rotation: turn(rotation),
                    radius,
                    half_height,
                },
                Shape::GateFrame {
                    center,
                    rotation,
                    outer_half,
                    inner_half,
                    half_depth,
                } => Shape::GateFrame {
                    center: point(center),
                    rotation: turn(rotation),
                    outer_half,
                    inner_half,
                    half_depth,
                },
            };
            Primitive { op: p.op, shape }
        })
        .collect();
    EnvScene {
        spawn: point(scene.spawn),
        primitives,
        ..scene.clone()
    }
}

/// Per-env camera body poses for `rays` rows: at the spawn, heading `e · 2.4` rad.
pub fn camera_poses(view: &PoolView) -> Vec<Pose> {
    view.envs()
        .iter()
        .enumerate()
        .map(|(e, env)| {
            let (s, c) = sin_cos(e as f32 * 2.4);
            let p = Vec3::from(env.spawn);
            Pose::look_at(p, p + Vec3::new(c, s, 0.0))
        })
        .collect()
}
