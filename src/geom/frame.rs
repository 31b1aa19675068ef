//! Rigid frames: unit quaternions `[x, y, z, w]` (local → world) built, combined and applied
//! with every product spelled out component by component, in the order the C++ twins use.

use super::{Quat, Vec3};
use crate::math::{atan2, sin_cos};

/// The identity rotation.
pub const IDENTITY: Quat = Quat::IDENTITY;

/// The world directions of the local axes of the unit quaternion `q`: `[forward, left, up]`,
/// the images of local `x`, `y` and `z`.
#[inline]
pub fn axes(q: Quat) -> [Vec3; 3] {
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    [
        forward(q),
        Vec3::new(
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
        ),
        Vec3::new(
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ),
    ]
}

/// The forward (local `x`) axis of the unit quaternion `q` in world coordinates: the first of
/// [`axes`].
#[inline]
pub fn forward(q: Quat) -> Vec3 {
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    Vec3::new(
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y + w * z),
        2.0 * (x * z - w * y),
    )
}

/// The local vector `v` in world coordinates: `axes[0]·v.x + axes[1]·v.y + axes[2]·v.z`.
#[inline]
pub fn rotate(q: Quat, v: Vec3) -> Vec3 {
    let [a, b, c] = axes(q);
    Vec3::new(
        a.x * v.x + b.x * v.y + c.x * v.z,
        a.y * v.x + b.y * v.y + c.y * v.z,
        a.z * v.x + b.z * v.y + c.z * v.z,
    )
}

/// The Hamilton product `a · b`: rotation `b` (in `a`'s frame), then `a`.
#[inline]
pub fn compose(a: Quat, b: Quat) -> Quat {
    let (aw, ax, ay, az) = (a.w, a.x, a.y, a.z);
    let (bw, bx, by, bz) = (b.w, b.x, b.y, b.z);
    Quat::from_xyzw(
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )
}

/// The rotation of a yaw (about `z`), then pitch (about `y`), then roll (about `x`), radians:
/// `q = q_z(yaw) · q_y(pitch) · q_x(roll)`.
pub fn from_euler(yaw: f32, pitch: f32, roll: f32) -> Quat {
    let (sy, cy) = sin_cos(yaw * 0.5);
    let (sp, cp) = sin_cos(pitch * 0.5);
    let (sr, cr) = sin_cos(roll * 0.5);
    Quat::from_xyzw(
        cy * cp * sr - sy * sp * cr,
        cy * sp * cr + sy * cp * sr,
        sy * cp * cr - cy * sp * sr,
        cy * cp * cr + sy * sp * sr,
    )
}

/// The yaw-only rotation of heading `yaw` (radians).
pub fn yaw(yaw: f32) -> Quat {
    let (s, c) = sin_cos(0.5 * yaw);
    Quat::from_xyzw(0.0, 0.0, s, c)
}

/// The roll-free rotation whose forward (local `x`) axis is the unit vector `forward`: yaw
/// `ψ = atan2(f_y, f_x)` then pitch `θ = atan2(f_z, |f_xy|)`, `q = q_z(ψ)·q_y(−θ)`. The local
/// `y` axis stays horizontal. A vertical or zero `forward` gives yaw 0.
pub fn roll_free(forward: Vec3) -> Quat {
    let h = (forward.x * forward.x + forward.y * forward.y).sqrt();
    let yaw = if h > 0.0 {
        atan2(forward.y, forward.x)
    } else {
        0.0
    };
    let pitch = atan2(forward.z, h);
    let (sz, cz) = sin_cos(0.5 * yaw);
    let (sp, cp) = sin_cos(0.5 * pitch);
    Quat::from_xyzw(sz * sp, -cz * sp, sz * cp, cz * cp)
}

/// The unit quaternion of the rotation whose columns (local axes in world) are the orthonormal
/// `x`, `y`, `z` (Shepperd's method: the largest of the four squared components decides the
/// branch), normalised.
pub fn from_axes(x: Vec3, y: Vec3, z: Vec3) -> Quat {
    let (m00, m11, m22) = (x.x, y.y, z.z);
    let trace = m00 + m11 + m22;
    // (w, x, y, z)
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        [0.25 * s, (y.z - z.y) / s, (z.x - x.z) / s, (x.y - y.x) / s]
    } else if m00 > m11 && m00 > m22 {
        let s = (1.0 + m00 - m11 - m22).sqrt() * 2.0;
        [(y.z - z.y) / s, 0.25 * s, (y.x + x.y) / s, (z.x + x.z) / s]
    } else if m11 > m22 {
        let s = (1.0 + m11 - m00 - m22).sqrt() * 2.0;
        [(z.x - x.z) / s, (y.x + x.y) / s, 0.25 * s, (z.y + y.z) / s]
    } else {
        let s = (1.0 + m22 - m00 - m11).sqrt() * 2.0;
        [(x.y - y.x) / s, (z.x + x.z) / s, (z.y + y.z) / s, 0.25 * s]
    };
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    Quat::from_xyzw(q[1] / n, q[2] / n, q[3] / n, q[0] / n)
}

/// The horizontal unit vector to the left of direction `t`: `(−t_y, t_x, 0) / |t_xy|`
/// (`(0, 1, 0)` for a vertical or zero `t`).
#[inline]
pub fn horizontal_left(t: Vec3) -> Vec3 {
    let h = (t.x * t.x + t.y * t.y).sqrt();
    if h > 0.0 {
        Vec3::new(-t.y / h, t.x / h, 0.0)
    } else {
        Vec3::Y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Vec3, b: Vec3) -> bool {
        (a - b).abs().max_element() < 1e-6
    }

    #[test]
    fn body_axes_are_x_forward_y_left_z_up() {
        // A quarter turn left (yaw +90°): forward becomes +y, left becomes −x.
        let q = yaw(std::f32::consts::FRAC_PI_2);
        let [f, l, u] = axes(q);
        assert!(close(f, Vec3::Y) && close(l, -Vec3::X) && close(u, Vec3::Z));
        assert!(close(
            rotate(q, Vec3::new(1.0, 2.0, 3.0)),
            Vec3::new(-2.0, 1.0, 3.0)
        ));
    }

    #[test]
    fn euler_roll_free_and_axes_agree() {
        let q = from_euler(0.7, -0.3, 0.0);
        let f = forward(q);
        let r = roll_free(f);
        for (a, b) in axes(q).into_iter().zip(axes(r)) {
            assert!(close(a, b), "{a} vs {b}");
        }
        let [x, y, z] = axes(q);
        let back = from_axes(x, y, z);
        assert!((back.dot(q).abs() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn compose_applies_the_right_factor_first() {
        let a = yaw(0.4);
        let b = from_euler(0.0, 0.3, 0.2);
        let v = Vec3::new(0.3, -1.0, 2.0);
        assert!(close(rotate(compose(a, b), v), rotate(a, rotate(b, v))));
        assert_eq!(horizontal_left(Vec3::new(0.0, 0.0, 1.0)), Vec3::Y);
    }
}
