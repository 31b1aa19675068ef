//! Collision queries of the runtime: signed distances, exact for each primitive, from which the
//! penetration depth of an agent follows as `max(0, −distance)` (box) or
//! `max(0, radius − distance)` (sphere).
//!
//! - **box vs band** (track mode): the oriented box footprint against the drivable band
//!   `|n| ≤ half_width`, in the frame of the localized path segment: the box's farthest corner
//!   from the path is at `|n| + a·|h·ν| + b·|h⊥·ν|` (`h` the heading, `ν` the segment's left
//!   normal, `a`, `b` the half length and half width). This is exact where the path is straight;
//!   on a bend of radius `R` it errs by at most `a²/(2R)`;
//! - **box vs disc** (track mode): the plan-view signed distance from a disc centre to the
//!   oriented box, minus the disc radius;
//! - **sphere vs gate frame** (gate mode): the exact signed distance to the frame — the
//!   rectangle ring between the opening and the outer rectangle, extruded over the frame's
//!   depth — in the gate's local axes;
//! - **sphere vs capped cylinder** (gate mode): posts under the gates and disc obstacles are
//!   vertical cylinders from −∞ up to a top height.
//!
//! The 2D box distance and the extrusion are the standard exact forms (Quílez, "distance
//! functions", iquilezles.org/articles/distfunctions).

/// Plan-view signed distance from a point at local offset `(x, y)` to the axis-aligned box of
/// half extents `(a, b)` centred at the origin (negative inside).
#[inline]
pub fn box2_distance(x: f32, y: f32, a: f32, b: f32) -> f32 {
    let qx = x.abs() - a;
    let qy = y.abs() - b;
    let (ox, oy) = (qx.max(0.0), qy.max(0.0));
    (ox * ox + oy * oy).sqrt() + qx.max(qy).min(0.0)
}

/// Signed distance from a point at local coordinates `(x, y, z)` of a gate (x forward, y left,
/// z up) to its frame: opening half extents `(half_width, half_height)`, bar width and depth
/// `thickness`. Negative inside the frame's material; inside the opening it is the (positive)
/// distance to the nearest bar.
#[inline]
pub fn frame_distance(
    x: f32,
    y: f32,
    z: f32,
    half_width: f32,
    half_height: f32,
    thickness: f32,
) -> f32 {
    let outer = box2_distance(y, z, half_width + thickness, half_height + thickness);
    let inner = box2_distance(y, z, half_width, half_height);
    let ring = outer.max(-inner);
    let depth = x.abs() - 0.5 * thickness;
    let (ox, oy) = (ring.max(0.0), depth.max(0.0));
    ring.max(depth).min(0.0) + (ox * ox + oy * oy).sqrt()
}

/// Signed distance from `q` to the vertical cylinder of axis `(cx, cy)`, radius `radius`,
/// reaching from −∞ up to `top_z`.
#[inline]
pub fn capped_cylinder_distance(q: [f32; 3], cx: f32, cy: f32, radius: f32, top_z: f32) -> f32 {
    let (dx, dy) = (q[0] - cx, q[1] - cy);
    let radial = (dx * dx + dy * dy).sqrt() - radius;
    let vertical = q[2] - top_z;
    let (ox, oy) = (radial.max(0.0), vertical.max(0.0));
    radial.max(vertical).min(0.0) + (ox * ox + oy * oy).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_distance_outside_inside_and_corner() {
        assert_eq!(box2_distance(3.0, 0.0, 2.0, 1.0), 1.0);
        assert_eq!(box2_distance(0.0, -0.25, 2.0, 1.0), -0.75);
        assert_eq!(box2_distance(5.0, 5.0, 2.0, 1.0), 5.0);
    }

    #[test]
    fn frame_distance_hand_values() {
        // Opening 2 × 1 (half 1 × 0.5), thickness 0.2.
        let f = |x, y, z| frame_distance(x, y, z, 1.0, 0.5, 0.2);
        // Centre of the opening: nearest bars are top and bottom, 0.5 away.
        assert!((f(0.0, 0.0, 0.0) - 0.5).abs() < 1e-6);
        // Inside the left bar's material: 0.1 from either face of the bar, 0.1 from the depth faces.
        assert!((f(0.0, 1.1, 0.0) + 0.1).abs() < 1e-6);
        // In front of the left bar, 1 m ahead.
        assert!((f(1.1, 1.1, 0.0) - 1.0).abs() < 1e-6);
        // Far outside, beside the frame.
        assert!((f(0.0, 3.2, 0.0) - 2.0).abs() < 1e-6);
        // In the opening's plane but 0.3 in front: distance to the bottom bar edge.
        let d = f(0.3, 0.0, -0.4);
        assert!((d - (0.2f32 * 0.2 + 0.1 * 0.1).sqrt()).abs() < 1e-6, "{d}");
    }

    #[test]
    fn cylinder_distance_side_top_and_inside() {
        assert!(
            (capped_cylinder_distance([3.0, 0.0, -5.0], 0.0, 0.0, 1.0, 0.0) - 2.0).abs() < 1e-6
        );
        assert!((capped_cylinder_distance([0.0, 0.0, 2.0], 0.0, 0.0, 1.0, 0.0) - 2.0).abs() < 1e-6);
        assert!(
            (capped_cylinder_distance([0.5, 0.0, -3.0], 0.0, 0.0, 1.0, 0.0) + 0.5).abs() < 1e-6
        );
        assert!((capped_cylinder_distance([4.0, 0.0, 4.0], 0.0, 0.0, 1.0, 0.0) - 5.0).abs() < 1e-6);
    }
}
