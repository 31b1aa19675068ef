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
/// arc length and `length` the closed length (neither is read for [`ZKind::Flat`]). `lattice` is
/// scratch of at least [`lattice_len`] words.
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
            // One pass over the points for all three octaves (the lattices drawn first, in
            // octave order, as three passes would draw them), each octave's cell followed
            // incrementally: the sums and their order are those of three passes adding
            // `amplitude · (lat[i] + (lat[i + 1] − lat[i]) · w)` into `z` in turn.
            let k = p.knots as usize;
            for v in lattice[..7 * k].iter_mut() {
                *v = rng.signed();
            }
            let (l0, rest) = lattice[..7 * k].split_at(k);
            let (l1, l2) = rest.split_at(2 * k);
            let a0 = p.amplitude_m;
            let a1 = a0 * 0.5;
            let a2 = a1 * 0.5;
            // Three locals, not an array, so that their fields stay in registers.
            let mut o0 = NoiseOctave::new(l0, a0);
            let mut o1 = NoiseOctave::new(l1, a1);
            let mut o2 = NoiseOctave::new(l2, a2);
            for (zi, &s) in z.iter_mut().zip(arclen) {
                let q = s / length;
                let mut h = 0.0f32;
                h += o0.at(q);
                h += o1.at(q);
                h += o2.at(q);
                *zi = h;
            }
        }
    }
    // Grade cap: the steepest segment, the closing one (back to point 0) last.
    let mut grade = 0.0f32;
    if n > 0 {
        for (a, h) in arclen[..n].windows(2).zip(z.windows(2)) {
            let ds = a[1] - a[0];
            if ds > 0.0 {
                grade = grade.max((h[1] - h[0]).abs() / ds);
            }
        }
        let ds = length - arclen[n - 1];
        if ds > 0.0 {
            grade = grade.max((z[0] - z[n - 1]).abs() / ds);
        }
    }
    if grade > p.max_grade {
        let k = p.max_grade / grade;
        for zi in z.iter_mut() {
            *zi *= k;
        }
    }
}

/// Lattice scratch words per env for `p`: the three noise octaves' `knots`, `2 · knots` and
/// `4 · knots` values.
pub fn lattice_len(p: &ZProfileParams) -> usize {
    (p.knots as usize) * 7
}

/// One octave of the value noise with its current lattice cell, so that points in the cell of
/// the point before reuse its values (arc lengths rise along a track).
struct NoiseOctave<'a> {
    /// The lattice values, one per cell (`freq` of them).
    lat: &'a [f32],
    /// The octave's amplitude, metres.
    amplitude: f32,
    /// `freq as f32`.
    freq: f32,
    /// The current cell `i`, `i as f32` and the upper end of its range of `u` (`i + 1`, or ∞
    /// for the last cell).
    cell: usize,
    lo: f32,
    hi: f32,
    /// `lat[i]` and `lat[(i + 1) % freq] − lat[i]`.
    base: f32,
    delta: f32,
}

impl<'a> NoiseOctave<'a> {
    fn new(lat: &'a [f32], amplitude: f32) -> Self {
        let mut o = NoiseOctave {
            lat,
            amplitude,
            freq: lat.len() as f32,
            cell: 0,
            lo: 0.0,
            hi: 0.0,
            base: 0.0,
            delta: 0.0,
        };
        o.enter(0);
        o
    }

    fn enter(&mut self, i: usize) {
        let last = self.lat.len() - 1;
        let next = if i == last { 0 } else { i + 1 };
        self.cell = i;
        self.lo = i as f32;
        self.hi = if i == last {
            f32::INFINITY
        } else {
            (i + 1) as f32
        };
        self.base = self.lat[i];
        self.delta = self.lat[next] - self.lat[i];
    }

    /// The octave's height at `q = s / length`: with `u = q · freq`, the cell
    /// `i = min(u as usize, freq − 1)` and `t = u − i`, `amplitude · (lat[i] + (lat[i + 1] −
    /// lat[i]) · w(t))` with the smoothstep `w`. The cell is recomputed only when `u` leaves the
    /// current one (`i ≤ u < i + 1`, or `u ≥ freq − 1` with `u` finite for the last cell; a
    /// negative or NaN `u` always recomputes, to cell 0).
    #[inline(always)]
    fn at(&mut self, q: f32) -> f32 {
        let u = q * self.freq;
        if !(u >= self.lo && u < self.hi) {
            self.enter((u as usize).min(self.lat.len() - 1));
        }
        let t = u - self.lo;
        let w = t * t * (3.0 - 2.0 * t);
        self.amplitude * (self.base + self.delta * w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The noise kind as three passes over the points and the grade cap with a cyclic index:
    /// the plain form [`profile_lane`] is bit-identical to.
    fn noise_plain(p: &ZProfileParams, rng: &mut LaneRng, arclen: &[f32], length: f32) -> Vec<f32> {
        let n = arclen.len();
        let mut z = vec![0.0f32; n];
        let mut lattice = vec![0.0f32; 4 * p.knots as usize];
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
        z
    }

    #[test]
    fn noise_is_the_three_pass_form_bit_for_bit() {
        let mut draw = LaneRng::new(17, 0, 0, 0);
        for case in 0..600u32 {
            let p = ZProfileParams {
                kind: ZKind::Noise,
                amplitude_m: 0.5 + 20.0 * draw.unit(),
                max_grade: if case % 3 == 0 { 1.0 } else { 0.02 },
                knots: 2 + case % 63,
            };
            // Rising arc lengths (repeats included), as the pipeline passes them, and in some
            // cases points out of order, past the length, negative or not finite.
            let n = 1 + (case as usize * 7) % 300;
            let mut s = 0.0f32;
            let mut arclen: Vec<f32> = (0..n)
                .map(|i| {
                    let here = s;
                    if i % 11 != 5 {
                        s += 5.0 * draw.unit();
                    }
                    here
                })
                .collect();
            let length = s + if case % 4 == 0 {
                0.0
            } else {
                3.0 * draw.unit()
            };
            if case % 5 == 2 && n > 3 {
                arclen.swap(1, n - 2);
                arclen[n / 2] = length;
                arclen[n - 1] = length * 1.5;
            }
            if case % 7 == 3 {
                for (k, bad) in [f32::NAN, -4.0, f32::INFINITY, -0.0]
                    .into_iter()
                    .enumerate()
                {
                    let i = (k * 13 + case as usize) % n;
                    arclen[i] = bad;
                }
            }
            let length = if case % 97 == 6 { 0.0 } else { length };
            let mut a = LaneRng::new(3, u64::from(case), 0, 0);
            let mut b = a.clone();
            let want = noise_plain(&p, &mut a, &arclen, length);
            let mut lattice = vec![f32::NAN; lattice_len(&p)];
            let mut z = vec![f32::NAN; n];
            profile_lane(&p, &mut b, &arclen, length, &mut lattice, &mut z);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&z), bits(&want), "case {case}");
        }
    }
}
