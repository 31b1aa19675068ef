//! The optional 2.5D height profile of a track.
//!
//! Heights are a closed function of arc length `s ∈ [0, L)`:
//! - `flat`: z = 0;
//! - `uniform`: `knots` heights uniform in ±amplitude, joined by a periodic Catmull–Rom;
//! - `random_walk`: a walk of ±amplitude·2/√n steps with its drift removed so that it closes;
//! - `noise`: three octaves of periodic value noise (smoothstep-interpolated lattice values),
//!   base frequency `knots`, amplitude halving per octave.
//!
//! Finally the profile is scaled down, if needed, so that no segment is steeper than `max_grade`;
//! scaling keeps it closed.

use crate::preset::{ZKind, ZProfileParams};
use crate::rng::LaneRng;

/// Catmull–Rom through four heights at `t ∈ [0, 1]` between `b` and `c`.
#[inline]
fn catmull_rom_1d(a: f32, b: f32, c: f32, d: f32, t: f32) -> f32 {
    let t2 = t * t;
    let t3 = t2 * t;
    0.5 * ((2.0 * b)
        + (c - a) * t
        + (2.0 * a - 5.0 * b + 4.0 * c - d) * t2
        + (3.0 * b - a - 3.0 * c + d) * t3)
}

/// Writes the heights of one env into `z` (`z.len()` = point count); `arclen` holds each point's
/// arc length and `length` the closed length (neither is read for [`ZKind::Flat`]). `lattice` is scratch of at least 2·`knots`·4 words.
pub fn profile_lane(
    p: &ZProfileParams,
    rng: &mut LaneRng,
    arclen: &[f32],
    length: f32,
    lattice: &mut [f32],
    z: &mut [f32],
) {
    let n = z.len();
    match p.kind {
        // All zero: the grade cap below would find grade 0 and keep them.
        ZKind::Flat => {
            z.fill(0.0);
            return;
        }
        ZKind::Uniform => {
            let k = p.knots as usize;
            for v in lattice[..k].iter_mut() {
                *v = p.amplitude_m * rng.signed();
            }
            for (zi, &s) in z.iter_mut().zip(arclen) {
                let u = s / length * k as f32;
                let i = (u as usize).min(k - 1);
                let t = u - i as f32;
                let h = |j: isize| lattice[((i as isize + j).rem_euclid(k as isize)) as usize];
                *zi = catmull_rom_1d(h(-1), h(0), h(1), h(2), t);
            }
        }
        ZKind::RandomWalk => {
            let step = p.amplitude_m * 2.0 / (n as f32).sqrt();
            let mut h = 0.0f32;
            for zi in z.iter_mut() {
                *zi = h;
                h += step * rng.signed();
            }
            // h is now the height the walk would reach at s = L; remove the drift linearly.
            for (zi, &s) in z.iter_mut().zip(arclen) {
                *zi -= h * (s / length);
            }
        }
        ZKind::Noise => {
            z.fill(0.0);
            let mut amplitude = p.amplitude_m;
            let mut freq = p.knots as usize;
            for _ in 0..3 {
                let lat = &mut lattice[..freq];
                for v in lat.iter_mut() {
                    *v = rng.signed();
                }
                for (zi, &s) in z.iter_mut().zip(arclen) {
                    let u = s / length * freq as f32;
                    let i = (u as usize).min(freq - 1);
                    let t = u - i as f32;
                    let w = t * t * (3.0 - 2.0 * t);
                    *zi += amplitude * (lat[i] + (lat[(i + 1) % freq] - lat[i]) * w);
                }
                amplitude *= 0.5;
                freq *= 2;
            }
        }
    }
    // Grade cap.
    let mut grade = 0.0f32;
    for i in 0..n {
        let j = (i + 1) % n;
        let ds = if j == 0 {
            length - arclen[i]
        } else {
            arclen[j] - arclen[i]
        };
        if ds > 0.0 {
            grade = grade.max((z[j] - z[i]).abs() / ds);
        }
    }
    if grade > p.max_grade {
        let k = p.max_grade / grade;
        for zi in z.iter_mut() {
            *zi *= k;
        }
    }
}

/// Lattice scratch words per env for `p`.
pub fn lattice_len(p: &ZProfileParams) -> usize {
    (p.knots as usize) * 4
}
