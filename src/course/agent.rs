//! A scripted kinematic agent for tests, examples and benchmarks: pure pursuit along the
//! course's path (the centerline, or the racing line through the gates).
//!
//! Each call moves every env's bound position `speed_m` straight toward the path point
//! `lookahead_m` ahead (by arc length) of its last localization (`s`, `segment` of the last
//! [`Course::step`], or of the last reset), and, if orientations are bound, turns it to face that
//! way (roll-free). It is deterministic and uses only the crate's math, like the runtime.

use rayon::prelude::*;

use super::runtime::Course;
use super::step::Mode;
use crate::geom::{self, fails_gt, Vec3};
use crate::{Error, Result};

/// Pure pursuit at a constant speed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PurePursuit {
    /// Distance moved per call, metres (keep it below `lookahead_m`).
    pub speed_m: f32,
    /// Arc length ahead of the agent's localization that it steers toward, metres.
    pub lookahead_m: f32,
}

impl PurePursuit {
    /// Settings that complete laps on the shipped presets: track mode 0.8 × and 2.5 × the
    /// preset's point spacing; gate mode 0.1 × and 0.25 × the minimum gate spacing.
    pub fn for_course(course: &Course) -> Self {
        let p = course.preset();
        match (course.mode(), &p.gates) {
            (Mode::Gates, Some(g)) => Self {
                speed_m: 0.1 * g.min_spacing_m,
                lookahead_m: 0.25 * g.min_spacing_m,
            },
            _ => Self {
                speed_m: 0.8 * p.track.spacing_m,
                lookahead_m: 2.5 * p.track.spacing_m,
            },
        }
    }

    /// Moves every env's bound position one step (see the module doc). Envs whose last `s` is
    /// not finite stay put. Errors when no positions are bound.
    pub fn act(&self, course: &mut Course) -> Result<()> {
        let launch = course.launch().clone();
        let (speed, lookahead) = (self.speed_m, self.lookahead_m);
        let view = course.sim_view().ok_or_else(|| {
            Error::Invalid(
                "PurePursuit::act before bind(): bind the per-env positions first".into(),
            )
        })?;
        let (geometry, outputs) = (view.geometry, view.outputs);
        let target = |e: usize| -> Option<Vec3> {
            let path = geometry.path_of(e);
            let n = path.len();
            let s = outputs.s[e];
            if n < 2 || !s.is_finite() {
                return None;
            }
            let length = geometry.path_length[e];
            let mut k = outputs.segment[e] as usize % n;
            let mut at = s;
            let mut remaining = lookahead;
            for _ in 0..=n {
                let end = if k + 1 < n { path[k + 1][3] } else { length };
                let avail = end - at;
                if remaining <= avail {
                    let (a, b) = (path[k], path[(k + 1) % n]);
                    let len = end - a[3];
                    let t = if len > 0.0 {
                        ((at + remaining - a[3]) / len).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    return Some(Vec3::new(
                        a[0] + t * (b[0] - a[0]),
                        a[1] + t * (b[1] - a[1]),
                        a[2] + t * (b[2] - a[2]),
                    ));
                }
                remaining -= avail.max(0.0);
                k = if k + 1 < n { k + 1 } else { 0 };
                at = path[k][3];
            }
            None
        };
        let mv = |e: usize, q: &mut Vec3| -> Option<Vec3> {
            let t = target(e)?;
            let d = [t[0] - q[0], t[1] - q[1], t[2] - q[2]];
            let l = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            if fails_gt(l, 0.0) {
                return None;
            }
            let f = Vec3::new(d[0] / l, d[1] / l, d[2] / l);
            for k in 0..3 {
                q[k] += speed * f[k];
            }
            Some(f)
        };
        match view.orientations {
            Some(orientations) => launch.lanes(
                view.positions
                    .par_iter_mut()
                    .zip(orientations.par_iter_mut()),
                |e, (q, o)| {
                    if let Some(f) = mv(e, q) {
                        *o = geom::roll_free(f);
                    }
                },
            ),
            None => launch.lanes(view.positions.par_iter_mut(), |e, q| {
                mv(e, q);
            }),
        }
        Ok(())
    }
}
