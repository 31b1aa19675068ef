//! Fixed scenes and poses that the benchmarks share (`trackgen bench-scene` and
//! `cargo bench --bench scene`): a hand-placed objects scene, a scene turned about the vertical
//! (so no wall is aligned with the voxel grid), and one camera pose per env.

use super::primitive::{quat_from_euler, EnvScene, Primitive, Shape, IDENTITY};
use super::sensor::Pose;
use super::PoolView;
use crate::math::sin_cos;

/// A fixed test scene in a 16 m domain: a floor, four boxes, two balls, a capsule, a cylinder
/// and a gate frame; `rotated` turns every object by distinct non-axis angles.
pub fn objects_scene(rotated: bool) -> EnvScene {
    let rot = |k: f32| {
        if rotated {
            quat_from_euler(0.52 + 0.31 * k, 0.23 + 0.11 * k, 0.17 * k)
        } else {
            IDENTITY
        }
    };
    let boxed = |c: [f32; 3], h: [f32; 3], k: f32| {
        Primitive::union(Shape::Box {
            center: c,
            rotation: rot(k),
            half_extents: h,
        })
    };
    let primitives = vec![
        Primitive::union(Shape::Plane {
            normal: [0.0, 0.0, 1.0],
            offset: 0.0,
        }),
        boxed([-4.0, -3.0, 1.0], [1.0, 1.5, 1.0], 0.0),
        boxed([3.5, -4.0, 0.75], [1.25, 0.75, 0.75], 1.0),
        boxed([-3.0, 4.0, 1.5], [0.5, 2.0, 1.5], 2.0),
        boxed([4.0, 3.5, 0.5], [1.5, 1.5, 0.5], 3.0),
        Primitive::union(Shape::Sphere {
            center: [0.0, 0.0, 1.0],
            radius: 1.0,
        }),
        Primitive::union(Shape::Sphere {
            center: [1.5, -1.0, 3.0],
            radius: 0.6,
        }),
        Primitive::union(Shape::Capsule {
            a: [-1.0, 2.0, 0.5],
            b: if rotated {
                [0.8, 2.6, 2.4]
            } else {
                [-1.0, 2.0, 2.5]
            },
            radius: 0.4,
        }),
        Primitive::union(Shape::Cylinder {
            center: [2.0, 1.0, 1.5],
            rotation: rot(5.0),
            radius: 0.5,
            half_height: 1.5,
        }),
        Primitive::union(Shape::GateFrame {
            center: [-0.5, -4.5, 1.5],
            rotation: rot(6.0),
            outer_half: [1.2, 1.2],
            inner_half: [0.95, 0.95],
            half_depth: 0.1,
        }),
    ];
    EnvScene {
        origin: [-8.0, -8.0, -0.5],
        size_m: 16.0,
        spawn: [0.0, -2.0, 1.5],
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
    let point = |p: [f32; 3]| {
        let (x, y) = (p[0] - c[0], p[1] - c[1]);
        [c[0] + co * x - s * y, c[1] + s * x + co * y, p[2]]
    };
    let dir = |v: [f32; 3]| [co * v[0] - s * v[1], s * v[0] + co * v[1], v[2]];
    let q = quat_from_euler(yaw, 0.0, 0.0);
    let turn = |r: [f32; 4]| {
        let ([aw, ax, ay, az], [bw, bx, by, bz]) = (q, r);
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    };
    let primitives = scene
        .primitives
        .iter()
        .map(|p| {
            let shape = match p.shape.clone() {
                Shape::Plane { normal, offset } => {
                    // The plane through the rotated foot point.
                    let foot = [normal[0] * offset, normal[1] * offset, normal[2] * offset];
                    let (n, f) = (dir(normal), point(foot));
                    Shape::Plane {
                        normal: n,
                        offset: n[0] * f[0] + n[1] * f[1] + n[2] * f[2],
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
            let p = env.spawn;
            Pose::look_at(p, [p[0] + c, p[1] + s, p[2]])
        })
        .collect()
}
