//! Observations for learning: the path ahead of each env, in the agent's body frame.
//!
//! [`Course::lookahead`] samples `K` points of each env's path (the centerline, or the racing
//! line through the gates) at arc lengths `s + k·spacing_m`, `k = 1..=K`, past the env's last
//! localization (`s` and `segment` of the last [`Course::step`], or of the last reset), wrapping
//! around the closed path. Each point is linear between the two path points around it (by arc
//! length, like the localization), and is returned in the agent's body frame: `R⁻¹ (p − x)`
//! with `x` the bound position and `R` the bound orientation (`+x` forward, `+y` left, `+z` up),
//! or, when no orientations are bound, the yaw-only rotation that faces along the path segment
//! the env is localized on. The path's signed plan-view curvature at each point (1/m, positive
//! turning left) is interpolated the same way from the path's per-point curvature.
//!
//! This is what racing policies observe: a fixed-size, translation- and rotation-invariant view
//! of the road ahead. One lane per env, no allocation; an env whose last `s` is not finite (a
//! non-finite position) gets NaN points and curvatures.

use rayon::prelude::*;

use super::runtime::Course;
use crate::geom::{self, fails_gt, Vec3};
use crate::math::atan2;
use crate::{Error, Result};

impl Course {
    /// Writes `points` path points ahead of each env, in its body frame, into `out_points`
    /// (`[E * points]`, env `e` owning `[e * points, (e + 1) * points)`), and the path's
    /// curvature at them into `out_curvature` (the same shape, 1/m, positive turning left).
    ///
    /// Point `k` (`k = 1..=points`) is the path point at arc length `s + k·spacing_m` past the
    /// env's last localization (`s`, `segment` of the last [`step`](Course::step) or reset),
    /// wrapping around the closed path, linear between path points; it is given as
    /// `R⁻¹ (p − x)`, with `x` the bound position and `R` the bound orientation (`+x` forward,
    /// `+y` left, `+z` up), or, without bound orientations, the yaw that faces along the path
    /// segment the env is localized on.
    ///
    /// Errors (and writes nothing): nothing bound (the frame's origin is the bound position),
    /// `points = 0`, `spacing_m` not a finite number > 0, or an output whose length is not
    /// `n_envs × points` (naming both lengths). Non-finite localizations give NaN rows.
    pub fn lookahead(
        &self,
        points: usize,
        spacing_m: f32,
        out_points: &mut [Vec3],
        out_curvature: &mut [f32],
    ) -> Result<()> {
        let binding = self.binding().ok_or_else(|| {
            Error::Invalid("lookahead() before bind(): bind the per-env positions first".into())
        })?;
        if points == 0 {
            return Err(Error::Invalid(
                "lookahead points = 0: expected at least 1 point per env".into(),
            ));
        }
        if !(spacing_m > 0.0 && spacing_m.is_finite()) {
            return Err(Error::Invalid(format!(
                "lookahead spacing_m = {spacing_m}: expected a finite number > 0"
            )));
        }
        let want = self.n_envs() * points;
        for (name, len) in [
            ("out_points", out_points.len()),
            ("out_curvature", out_curvature.len()),
        ] {
            if len != want {
                return Err(Error::Invalid(format!(
                    "lookahead {name} has {len} entries: expected n_envs × points = {} × {points} = {want}",
                    self.n_envs()
                )));
            }
        }
        let geometry = self.geometry();
        let outputs = self.outputs();
        let positions = binding.positions();
        let orientations = binding.orientations();
        let lanes = out_points
            .par_chunks_mut(points)
            .zip(out_curvature.par_chunks_mut(points));
        self.launch().lanes(lanes, |e, (pts, kappa)| {
            let path = geometry.path_of(e);
            let n = path.len();
            let s = outputs.s[e];
            let length = geometry.path_length[e];
            if n < 2 || !s.is_finite() || fails_gt(length, 0.0) {
                pts.fill(Vec3::NAN);
                kappa.fill(f32::NAN);
                return;
            }
            let curvature = &geometry.curvature[e * geometry.path_max..][..n];
            let origin = positions[e];
            let mut walk = Walk {
                segment: outputs.segment[e] as usize % n,
                at: s,
            };
            let axes = match orientations {
                Some(o) => geom::axes(o[e]),
                None => {
                    let (a, b) = (path[walk.segment], path[(walk.segment + 1) % n]);
                    geom::axes(geom::yaw(atan2(b[1] - a[1], b[0] - a[0])))
                }
            };
            for (p, k) in pts.iter_mut().zip(kappa.iter_mut()) {
                let (point, c) = walk.advance(path, curvature, length, spacing_m);
                let d = point - origin;
                *p = Vec3::new(axes[0].dot(d), axes[1].dot(d), axes[2].dot(d));
                *k = c;
            }
        });
        Ok(())
    }
}

/// A position on a closed path: the segment and the arc length inside it.
struct Walk {
    segment: usize,
    at: f32,
}

impl Walk {
    /// Moves `distance` metres forward along the path and returns the point there and the
    /// curvature, both linear in arc length between the segment's two points. Wraps past the
    /// last point; visits at most every segment once more than `distance / length` laps need.
    fn advance(
        &mut self,
        path: &[[f32; 4]],
        curvature: &[f32],
        length: f32,
        distance: f32,
    ) -> (Vec3, f32) {
        let n = path.len();
        // Whole laps change nothing; `%` is the exact IEEE remainder.
        let mut remaining = distance % length;
        for _ in 0..=n {
            let k = self.segment;
            let end = if k + 1 < n { path[k + 1][3] } else { length };
            let avail = end - self.at;
            if remaining <= avail {
                self.at += remaining;
                break;
            }
            remaining -= avail.max(0.0);
            self.segment = (k + 1) % n;
            self.at = path[self.segment][3];
        }
        let k = self.segment;
        let k1 = (k + 1) % n;
        let (a, b) = (path[k], path[k1]);
        let end = if k + 1 < n { b[3] } else { length };
        let seg = end - a[3];
        let t = if seg > 0.0 {
            ((self.at - a[3]) / seg).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let point = Vec3::new(
            a[0] + t * (b[0] - a[0]),
            a[1] + t * (b[1] - a[1]),
            a[2] + t * (b[2] - a[2]),
        );
        (point, curvature[k] + t * (curvature[k1] - curvature[k]))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::course::{Binding, CourseConfig, Mode};
    use crate::exec::Launch;
    use crate::geom::Vec2;
    use crate::math::{sin_cos, TAU};
    use crate::preset::Preset;
    use crate::rng::LaneRng;
    use crate::track::Stage;

    /// A counter-clockwise circle of radius 50 m, 320 vertices starting at `(50, 0)`.
    struct Circle;

    impl Stage for Circle {
        fn name(&self) -> &str {
            "circle"
        }
        fn max_points(&self) -> usize {
            320
        }
        fn run_lane(
            &self,
            _: &mut LaneRng,
            _: &mut [f32],
            _: &mut [u32],
            out: &mut [Vec2],
        ) -> usize {
            for (i, p) in out.iter_mut().enumerate().take(320) {
                let (s, c) = sin_cos(TAU * i as f32 / 320.0);
                *p = Vec2::new(50.0 * c, 50.0 * s);
            }
            320
        }
    }

    fn circle(n_envs: usize) -> Course {
        let side = 2.0 * 50.0 * (std::f64::consts::PI / 320.0).sin();
        let preset = Preset::parse(
            &format!(
                "[track]\nn_max = 400\nhalf_width_m = 5.0\nspacing_m = {side}\nscale_m = 60.0\n\
                 min_turn_radius_m = 10.0\nmax_attempts = 1\n"
            ),
            "circle",
        )
        .unwrap();
        let config = CourseConfig::default();
        Course::with_stage(
            Mode::Track,
            &preset,
            Arc::new(Circle),
            n_envs,
            0,
            config,
            Launch::new(),
        )
        .unwrap()
    }

    fn run(course: &Course, k: usize, spacing: f32) -> (Vec<Vec3>, Vec<f32>) {
        let n = course.n_envs() * k;
        let (mut p, mut c) = (vec![Vec3::ZERO; n], vec![0.0; n]);
        course.lookahead(k, spacing, &mut p, &mut c).unwrap();
        (p, c)
    }

    /// At the spawn pose on a counter-clockwise circle of radius R, the point at arc length
    /// `a` ahead is at `(R sin(a/R), R (1 − cos(a/R)))` in the tangent frame (f64 oracle; the
    /// polygon's chords sit within R(1 − cos(π/320)) = 2.4 mm of the circle), and the
    /// curvature is 1/R.
    #[test]
    fn circle_points_match_the_analytic_arc_in_the_body_frame() {
        let mut course = circle(2);
        let spawn = course.geometry().spawn_position.clone();
        course.bind(Binding::new(spawn)).unwrap();
        course.step().unwrap();
        let (k, spacing) = (8, 9.0);
        let (p, c) = run(&course, k, spacing);
        let r = 50.0f64;
        // Without bound orientations the frame faces along the segment the agent is on: the
        // chord from vertex 0 to vertex 1, turned π/320 left of the tangent at vertex 0.
        let (sin_phi, cos_phi) = (std::f64::consts::PI / 320.0).sin_cos();
        for e in 0..2 {
            for i in 0..k {
                let a = spacing as f64 * (i + 1) as f64;
                let (x, y) = (r * (a / r).sin(), r * (1.0 - (a / r).cos()));
                let want = [cos_phi * x + sin_phi * y, -sin_phi * x + cos_phi * y];
                let got = p[e * k + i];
                assert!(
                    (got.x as f64 - want[0]).abs() < 0.02 && (got.y as f64 - want[1]).abs() < 0.02,
                    "env {e} point {i}: {got:?}, expected {want:?}"
                );
                assert!(got.z.abs() < 1e-4, "flat track: z {}", got.z);
                assert!(
                    (c[e * k + i] as f64 - 1.0 / r).abs() < 1e-4,
                    "curvature {}",
                    c[e * k + i]
                );
            }
        }
    }

    /// With a bound orientation the frame is the agent's: turning the agent by +90° yaw turns
    /// the points by −90° (body x ← world y), and moving it shifts them.
    #[test]
    fn bound_orientation_defines_the_frame() {
        let mut course = circle(1);
        let spawn = course.geometry().spawn_position.clone();
        let yaw0 = course.geometry().spawn_orientation[0];
        course
            .bind(Binding::new(spawn.clone()).with_orientations(vec![yaw0]))
            .unwrap();
        course.step().unwrap();
        let (p0, _) = run(&course, 4, 5.0);
        // The spawn orientation faces along the tangent at point 0: the first point ahead.
        assert!(p0[0].x > 4.9 && p0[0].y.abs() < 0.3, "{:?}", p0[0]);
        let turned = geom::yaw(TAU / 4.0);
        course
            .bind(Binding::new(spawn).with_orientations(vec![geom::compose(yaw0, turned)]))
            .unwrap();
        course.step().unwrap();
        let (p1, _) = run(&course, 4, 5.0);
        for (a, b) in p0.iter().zip(&p1) {
            assert!(
                (b.x - a.y).abs() < 1e-3 && (b.y + a.x).abs() < 1e-3,
                "{a:?} -> {b:?}"
            );
        }
    }

    /// Spacing past a whole lap wraps: K points 1 lap + d apart equal points d apart.
    #[test]
    fn wraps_around_the_closed_path() {
        let mut course = circle(1);
        let spawn = course.geometry().spawn_position.clone();
        course.bind(Binding::new(spawn)).unwrap();
        course.step().unwrap();
        let length = course.geometry().path_length[0];
        let (near, _) = run(&course, 1, 7.0);
        let (far, _) = run(&course, 1, length + 7.0);
        assert!((near[0] - far[0]).length() < 1e-2, "{near:?} vs {far:?}");
        // Points all the way round come back near the start (the agent's own position).
        let (round, _) = run(&course, 40, length / 40.0);
        assert!(round[39].length() < 1e-2, "{:?}", round[39]);
    }

    #[test]
    fn bad_arguments_and_nan_positions() {
        let mut course = circle(2);
        let mut p = vec![Vec3::ZERO; 6];
        let mut c = vec![0.0; 6];
        let err = course.lookahead(3, 1.0, &mut p, &mut c).unwrap_err();
        assert!(err.to_string().contains("before bind()"), "{err}");
        let spawn = course.geometry().spawn_position.clone();
        course.bind(Binding::new(spawn)).unwrap();
        for (k, s, want) in [
            (0, 1.0, "points = 0"),
            (3, 0.0, "spacing_m = 0"),
            (3, f32::NAN, "spacing_m = NaN"),
            (
                2,
                1.0,
                "out_points has 6 entries: expected n_envs × points = 2 × 2 = 4",
            ),
        ] {
            let err = course.lookahead(k, s, &mut p, &mut c).unwrap_err();
            assert!(err.to_string().contains(want), "{err}");
        }
        let err = course.lookahead(3, 1.0, &mut p, &mut c[..5]).unwrap_err();
        assert!(
            err.to_string().contains("out_curvature has 5 entries"),
            "{err}"
        );
        course.positions_mut().unwrap()[1] = Vec3::NAN;
        course.step().unwrap();
        course.lookahead(3, 1.0, &mut p, &mut c).unwrap();
        assert!(p[..3].iter().all(|v| v.is_finite()) && c[..3].iter().all(|v| v.is_finite()));
        assert!(p[3..].iter().all(|v| v.is_nan()) && c[3..].iter().all(|v| v.is_nan()));
    }
}
