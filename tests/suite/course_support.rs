//! Shared fixtures of the course tests: analytic generator stages (a circle, a stadium) and the
//! presets that race them.
#![allow(dead_code)]

use std::sync::Arc;

use trackgen::course::{Binding, Course, CourseConfig, Mode};
use trackgen::exec::Launch;
use trackgen::geom::Vec2;
use trackgen::math::{sin_cos, TAU};
use trackgen::preset::Preset;
use trackgen::rng::LaneRng;
use trackgen::track::Stage;

/// A counter-clockwise circle of `points` vertices starting at `(radius, 0)`.
pub struct Circle {
    pub radius_m: f32,
    pub points: usize,
}

impl Stage for Circle {
    fn name(&self) -> &str {
        "circle"
    }
    fn max_points(&self) -> usize {
        self.points
    }
    fn run_lane(&self, _: &mut LaneRng, _: &mut [f32], _: &mut [u32], out: &mut [Vec2]) -> usize {
        for (i, p) in out.iter_mut().enumerate().take(self.points) {
            let (s, c) = sin_cos(TAU * i as f32 / self.points as f32);
            *p = Vec2::new(self.radius_m * c, self.radius_m * s);
        }
        self.points
    }
}

/// A counter-clockwise stadium: the bottom straight from `(0, −r)` to `(straight, −r)`, a half
/// circle of radius `r` around `(straight, 0)`, the top straight back, a half circle around the
/// origin. Vertices every metre on the straights, every degree on the arcs.
pub struct Stadium {
    pub radius_m: f32,
    pub straight_m: f32,
}

impl Stage for Stadium {
    fn name(&self) -> &str {
        "stadium"
    }
    fn max_points(&self) -> usize {
        2 * (self.straight_m as usize) + 2 * 180
    }
    fn run_lane(&self, _: &mut LaneRng, _: &mut [f32], _: &mut [u32], out: &mut [Vec2]) -> usize {
        let (r, l) = (self.radius_m, self.straight_m);
        let mut k = 0;
        let steps = l as usize;
        for i in 0..steps {
            out[k] = Vec2::new(i as f32, -r);
            k += 1;
        }
        for j in 0..180 {
            let (s, c) = sin_cos(TAU * (j as f32 / 360.0 - 0.25));
            out[k] = Vec2::new(l + r * c, r * s);
            k += 1;
        }
        for i in 0..steps {
            out[k] = Vec2::new(l - i as f32, r);
            k += 1;
        }
        for j in 0..180 {
            let (s, c) = sin_cos(TAU * (j as f32 / 360.0 + 0.25));
            out[k] = Vec2::new(r * c, r * s);
            k += 1;
        }
        k
    }
}

/// The circle track of the fixtures: radius 50 m, 320 points (one every 0.98 m), half width 5.
pub fn circle_preset() -> Preset {
    // The spacing is the polygon's side, so resampling keeps the 320 vertices.
    let side = 2.0 * 50.0 * (std::f64::consts::PI / 320.0).sin();
    Preset::parse(
        &format!(
            "[track]\nn_max = 400\nhalf_width_m = 5.0\nspacing_m = {side}\nscale_m = 60.0\n\
             min_turn_radius_m = 10.0\nmax_attempts = 1\n"
        ),
        "circle",
    )
    .unwrap()
}

pub fn circle_course(config: CourseConfig) -> Course {
    Course::with_stage(
        Mode::Track,
        &circle_preset(),
        Arc::new(Circle {
            radius_m: 50.0,
            points: 320,
        }),
        1,
        0,
        config,
        Launch::new(),
    )
    .unwrap()
}

/// The stadium track: straights 100 m, radius 30 m, half width 5 m, 1 m spacing; `extra` is
/// appended to the preset text.
pub fn stadium_course(extra: &str, config: CourseConfig) -> Course {
    let preset = Preset::parse(
        &format!(
            "[track]\nn_max = 512\nhalf_width_m = 5.0\nspacing_m = 1.0\nscale_m = 60.0\n\
             min_turn_radius_m = 10.0\nmax_attempts = 1\n{extra}"
        ),
        "stadium",
    )
    .unwrap();
    Course::with_stage(
        Mode::Track,
        &preset,
        Arc::new(Stadium {
            radius_m: 30.0,
            straight_m: 100.0,
        }),
        1,
        0,
        config,
        Launch::new(),
    )
    .unwrap()
}

/// Eight 2 × 2 m gates (frame 0.2 m) evenly on a circle of radius 30 m at height 3 m, on posts.
pub fn gate_ring_course(config: CourseConfig) -> Course {
    let side = 2.0 * 30.0 * (std::f64::consts::PI / 320.0).sin();
    let preset = Preset::parse(
        &format!(
            "[track]\nn_max = 400\nhalf_width_m = 3.0\nspacing_m = {side}\nscale_m = 40.0\n\
             min_turn_radius_m = 8.0\nmax_attempts = 1\n\
             [gates]\nmin_gates = 8\nmax_gates = 8\nmin_width_m = 2.0\nmax_width_m = 2.0\n\
             min_height_m = 2.0\nmax_height_m = 2.0\nthickness_m = 0.2\naltitude_m = 3.0\n\
             altitude_jitter_m = 0.0\nlateral_jitter_m = 0.0\nspacing_jitter = 0.0\n\
             min_spacing_m = 8.0\nposts = true\ncorridor_half_width_m = 3.0\n"
        ),
        "gate-ring",
    )
    .unwrap();
    Course::with_stage(
        Mode::Gates,
        &preset,
        Arc::new(Circle {
            radius_m: 30.0,
            points: 320,
        }),
        1,
        0,
        config,
        Launch::new(),
    )
    .unwrap()
}

/// Binds one position (and optionally an orientation and half extents) to a one-env course.
pub fn bind_one(course: &mut Course, orientation: Option<[f32; 4]>, half: Option<[f32; 2]>) {
    use trackgen::geom::{Quat, Vec2};
    let mut b = Binding::new(vec![course.geometry().spawn_position[0]]);
    if let Some(o) = orientation {
        b = b.with_orientations(vec![Quat::from_array(o)]);
    }
    if let Some(h) = half {
        b = b.with_half_extents(vec![Vec2::from(h)]);
    }
    course.bind(b).unwrap();
}

/// Moves env 0 to `p` and steps.
pub fn step_to(course: &mut Course, p: [f32; 3]) {
    course.positions_mut().unwrap()[0] = p.into();
    course.step().unwrap();
}

/// `[x, y, z]` at angle `deg` on a circle of radius `r` around the origin.
pub fn on_circle(r: f32, deg: f32, z: f32) -> [f32; 3] {
    let a = deg.to_radians();
    [r * a.cos(), r * a.sin(), z]
}

#[track_caller]
pub fn close(a: f32, b: f32, tol: f32) {
    assert!((a - b).abs() <= tol, "{a} vs {b} (tolerance {tol})");
}
