//! Exact signed distances of the primitives (negative inside), shared by course collision, scene
//! voxelisation and rendering.
//!
//! The formulas are Quílez's (<https://iquilezles.org/articles/distfunctions/>). Every function
//! takes the query point in the primitive's local frame (the caller applies the frame), and uses
//! [`fmin`]/[`fmax`], which compile to one instruction each: a NaN query propagates as the
//! callers document (they reject non-finite inputs before the hot loops).

use super::{Vec2, Vec3};

/// `min` without NaN handling: `if a < b { a } else { b }`.
#[inline(always)]
pub fn fmin(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// `max` without NaN handling: `if a > b { a } else { b }`.
#[inline(always)]
pub fn fmax(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// The exact 2D box distance from the per-axis excesses `qx = |x| − hx`, `qy = |y| − hy`:
/// `|max(q, 0)| + min(max(qx, qy), 0)`.
#[inline(always)]
pub fn rect(qx: f32, qy: f32) -> f32 {
    let (ox, oy) = (fmax(qx, 0.0), fmax(qy, 0.0));
    (ox * ox + oy * oy).sqrt() + fmin(fmax(qx, qy), 0.0)
}

/// The exact distance of the extrusion of a 2D field `d2` along an axis, given `|t| − half`
/// along that axis.
#[inline(always)]
pub fn extrude(d2: f32, dt: f32) -> f32 {
    rect(d2, dt)
}

/// Plan-view distance from the local offset `(x, y)` to the axis-aligned rectangle of half
/// extents `half`, centred at the origin.
#[inline(always)]
pub fn box2(p: Vec2, half: Vec2) -> f32 {
    rect(p.x.abs() - half.x, p.y.abs() - half.y)
}

/// Distance from the local point `l` to the axis-aligned box of half extents `half`.
#[inline(always)]
pub fn box3(l: Vec3, half: Vec3) -> f32 {
    let q = Vec3::new(l.x.abs() - half.x, l.y.abs() - half.y, l.z.abs() - half.z);
    let outside = Vec3::new(fmax(q.x, 0.0), fmax(q.y, 0.0), fmax(q.z, 0.0)).length();
    outside + fmin(fmax(q.x, fmax(q.y, q.z)), 0.0)
}

/// Distance from the local point `l` to a gate frame flown through along local `x`: the ring
/// between the opening (half extents `inner_half` along `y`, `z`) and the outer rectangle
/// (`outer_half`), extruded over `|x| ≤ half_depth`. Inside the opening it is the (positive)
/// distance to the nearest bar.
#[inline(always)]
pub fn gate_frame(l: Vec3, outer_half: Vec2, inner_half: Vec2, half_depth: f32) -> f32 {
    let (y, z) = (l.y.abs(), l.z.abs());
    let outer = rect(y - outer_half.x, z - outer_half.y);
    let inner = rect(y - inner_half.x, z - inner_half.y);
    extrude(fmax(outer, -inner), l.x.abs() - half_depth)
}

/// Distance from the local point `l` to the capped cylinder of `radius` along local `z`,
/// `|z| ≤ half_height`.
#[inline(always)]
pub fn cylinder(l: Vec3, radius: f32, half_height: f32) -> f32 {
    let radial = (l.x * l.x + l.y * l.y).sqrt() - radius;
    extrude(radial, l.z.abs() - half_height)
}

/// Distance from `q` to the vertical cylinder of axis `(axis.x, axis.y)` and `radius`, reaching
/// from −∞ up to `top_z` (posts, cones).
#[inline(always)]
pub fn post(q: Vec3, axis: Vec2, radius: f32, top_z: f32) -> f32 {
    let (dx, dy) = (q.x - axis.x, q.y - axis.y);
    let radial = (dx * dx + dy * dy).sqrt() - radius;
    extrude(radial, q.z - top_z)
}

/// Distance from `pa = q − a` to the capsule of `radius` around the segment `a → a + ba`, with
/// `inv_len2 = 1/|ba|²` (0 for a point).
#[inline(always)]
pub fn capsule(pa: Vec3, ba: Vec3, inv_len2: f32, radius: f32) -> f32 {
    let h = fmin(fmax(pa.dot(ba) * inv_len2, 0.0), 1.0);
    (pa - ba * h).length() - radius
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_distance_outside_inside_and_corner() {
        let half = Vec2::new(2.0, 1.0);
        assert_eq!(box2(Vec2::new(3.0, 0.0), half), 1.0);
        assert_eq!(box2(Vec2::new(0.0, -0.25), half), -0.75);
        assert_eq!(box2(Vec2::new(5.0, 5.0), half), 5.0);
        assert_eq!(box3(Vec3::new(0.0, 0.0, 3.0), Vec3::ONE), 2.0);
        assert_eq!(box3(Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0)), -1.0);
    }

    #[test]
    fn gate_frame_hand_values() {
        // Opening 2 × 1 (half 1 × 0.5), bars 0.2 wide and deep.
        let f = |x, y, z| {
            gate_frame(
                Vec3::new(x, y, z),
                Vec2::new(1.2, 0.7),
                Vec2::new(1.0, 0.5),
                0.1,
            )
        };
        // Centre of the opening: nearest bars are top and bottom, 0.5 away.
        assert!((f(0.0, 0.0, 0.0) - 0.5).abs() < 1e-6);
        // Inside the left bar's material: 0.1 from either face of the bar and the depth faces.
        assert!((f(0.0, 1.1, 0.0) + 0.1).abs() < 1e-6);
        // In front of the left bar, 1 m ahead.
        assert!((f(1.1, 1.1, 0.0) - 1.0).abs() < 1e-6);
        // Far outside, beside the frame.
        assert!((f(0.0, 3.2, 0.0) - 2.0).abs() < 1e-6);
        // In the opening's plane but 0.3 in front: distance to the bottom bar's edge.
        let d = f(0.3, 0.0, -0.4);
        assert!((d - (0.2f32 * 0.2 + 0.1 * 0.1).sqrt()).abs() < 1e-6, "{d}");
    }

    #[test]
    fn cylinder_post_and_capsule() {
        let axis = Vec2::ZERO;
        assert!((post(Vec3::new(3.0, 0.0, -5.0), axis, 1.0, 0.0) - 2.0).abs() < 1e-6);
        assert!((post(Vec3::new(0.0, 0.0, 2.0), axis, 1.0, 0.0) - 2.0).abs() < 1e-6);
        assert!((post(Vec3::new(0.5, 0.0, -3.0), axis, 1.0, 0.0) + 0.5).abs() < 1e-6);
        assert!((post(Vec3::new(4.0, 0.0, 4.0), axis, 1.0, 0.0) - 5.0).abs() < 1e-6);
        assert!((cylinder(Vec3::new(0.0, 0.0, 3.0), 1.0, 1.0) - 2.0).abs() < 1e-6);
        let ba = Vec3::new(0.0, 0.0, 2.0);
        assert!((capsule(Vec3::new(1.0, 0.0, 1.0), ba, 0.25, 0.5) - 0.5).abs() < 1e-6);
        assert!((capsule(Vec3::new(0.0, 0.0, -1.0), ba, 0.25, 0.5) - 0.5).abs() < 1e-6);
    }
}
