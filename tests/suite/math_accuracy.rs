//! Accuracy of `trackgen::math` against an `f64` reference, over the domains that the module doc
//! of `src/math/mod.rs` promises, plus the behaviour it promises outside them.
//!
//! The error unit is the ulp of `f32` at the reference value: `2^(e − 23)` for a reference in
//! `[2^e, 2^(e+1))`, and `2⁻¹⁴⁹` below `f32::MIN_POSITIVE`. The `f64` functions of `std` are
//! accurate to well under an `f64` ulp, i.e. ~2⁻²⁹ `f32` ulp, which is negligible here. Each test
//! prints the measured maximum (`cargo test --test math_accuracy -- --nocapture`).

use trackgen::math;
use trackgen::rng::mix64;

/// The bounds of the module doc's table, in `f32` ulp.
const SIN_COS_ULP: f64 = 1.0;
const ATAN2_ULP: f64 = 2.0;
const EXP_ULP: f64 = 1.0;
const LN_ULP: f64 = 1.0;
const WRAP_ANGLE_ULP: f64 = 1.0;
/// The domain of the sin/cos bound.
const SIN_COS_DOMAIN: f32 = 65_536.0;
/// The domain of the wrap_angle bound.
const WRAP_ANGLE_DOMAIN: f32 = 65_536.0;

/// The spacing of `f32` values at the magnitude of `reference` (from its exponent bits, so that
/// values just below a power of two get the right binade).
fn ulp_f32(reference: f64) -> f64 {
    let exponent = ((reference.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let e = exponent.clamp(-126, 127) - 23;
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// `|got − reference|` in ulp of `f32` at `reference`; infinite when `got` is not finite.
fn ulp_error(got: f32, reference: f64) -> f64 {
    if !got.is_finite() {
        return f64::INFINITY;
    }
    (f64::from(got) - reference).abs() / ulp_f32(reference)
}

/// The largest error seen and where.
#[derive(Default)]
struct Worst {
    ulp: f64,
    at: String,
    count: u64,
}

impl Worst {
    fn see(&mut self, err: f64, at: impl FnOnce() -> String) {
        self.count += 1;
        if err > self.ulp || err.is_nan() {
            self.ulp = err;
            self.at = at();
        }
    }

    fn check(&self, name: &str, bound: f64) {
        println!(
            "{name}: max {:.4} ulp over {} inputs (at {})",
            self.ulp, self.count, self.at
        );
        assert!(
            self.ulp <= bound,
            "{name}: {} ulp at {} exceeds the documented {bound} ulp",
            self.ulp,
            self.at
        );
    }
}

/// Every `stride`-th `f32` with bit pattern in `[lo, hi]`, by bit pattern.
fn sweep(lo: f32, hi: f32, stride: u32) -> impl Iterator<Item = f32> {
    assert!(lo >= 0.0 && hi >= lo);
    (lo.to_bits()..=hi.to_bits())
        .step_by(stride as usize)
        .map(f32::from_bits)
}

/// A deterministic pseudo-random 32-bit pattern per index.
fn random_bits(i: u64) -> u32 {
    mix64(i ^ 0x5eed_0000_0000_0000) as u32
}

/// A pseudo-random finite `f32` per index (any sign and exponent).
fn random_finite(i: u64) -> f32 {
    let x = f32::from_bits(random_bits(i));
    if x.is_finite() {
        x
    } else {
        f32::from_bits(random_bits(i) & 0xbf7f_ffff)
    }
}

#[test]
fn sin_cos_within_bound_on_domain() {
    let mut ws = Worst::default();
    let mut wc = Worst::default();
    let mut check = |x: f32| {
        let (s, c) = math::sin_cos(x);
        assert_eq!(s.to_bits(), math::sin(x).to_bits());
        assert_eq!(c.to_bits(), math::cos(x).to_bits());
        let x64 = f64::from(x);
        ws.see(ulp_error(s, x64.sin()), || format!("sin({x:e})"));
        wc.see(ulp_error(c, x64.cos()), || format!("cos({x:e})"));
    };
    // Every 61st float of [0, 2¹⁶] and every 211th of [−2¹⁶, 0]: ~20 M + 6 M inputs.
    sweep(0.0, SIN_COS_DOMAIN, 61).for_each(&mut check);
    sweep(0.0, SIN_COS_DOMAIN, 211).for_each(|x| check(-x));
    // The hard cases: the floats nearest to each multiple of π/2 in the domain, where the result
    // is tiny (sin near kπ, cos near kπ + π/2) and only an exact reduction keeps it accurate.
    let k_max = (f64::from(SIN_COS_DOMAIN) / std::f64::consts::FRAC_PI_2) as i64;
    for k in -k_max..=k_max {
        let x = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
        let mut bits = x.to_bits().wrapping_sub(4);
        for _ in 0..9 {
            let x = f32::from_bits(bits);
            if x.abs() <= SIN_COS_DOMAIN {
                check(x);
            }
            bits = bits.wrapping_add(1);
        }
    }
    ws.check("sin", SIN_COS_ULP);
    wc.check("cos", SIN_COS_ULP);
}

#[test]
fn sin_cos_outside_domain_stay_in_unit_range() {
    // Every 1013th finite float above the domain, both signs: bounded results, never NaN.
    for x in sweep(SIN_COS_DOMAIN, f32::MAX, 1013).chain([f32::MAX]) {
        for x in [x, -x] {
            let (s, c) = math::sin_cos(x);
            assert!((-1.0..=1.0).contains(&s), "sin({x:e}) = {s}");
            assert!((-1.0..=1.0).contains(&c), "cos({x:e}) = {c}");
        }
    }
}

#[test]
fn sin_cos_special_values() {
    assert_eq!(math::sin(0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(math::sin(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(math::cos(0.0), 1.0);
    assert_eq!(math::cos(-0.0), 1.0);
    for x in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let (s, c) = math::sin_cos(x);
        assert!(s.is_nan() && c.is_nan(), "sin_cos({x}) = ({s}, {c})");
    }
    // Tiny arguments: sin x = x and cos x = 1 to the bit (subnormals included).
    for x in [f32::from_bits(1), 1e-30, -1e-20, f32::MIN_POSITIVE, 1e-4] {
        assert_eq!(math::sin(x), x, "sin({x:e})");
        assert_eq!(math::cos(x), 1.0, "cos({x:e})");
    }
}

/// `atan2` over pairs whose reference is computed in `f64`.
fn atan2_pairs(mut f: impl FnMut(f32, f32)) {
    // Random finite pairs of any exponents (2 M), and pairs with nearby exponents (2 M), where
    // the ratio is near 1 and both branches of the reduction run.
    for i in 0..2_000_000u64 {
        f(random_finite(2 * i), random_finite(2 * i + 1));
        let y = random_finite(4_000_000 + 2 * i);
        let x_bits = (random_bits(4_000_000 + 2 * i + 1) & 0x81ff_ffff)
            | (y.to_bits() & 0x7e00_0000).max(0x0100_0000);
        let x = f32::from_bits(x_bits);
        if x.is_finite() {
            f(y, x);
        }
    }
    // A dense sweep of ratios in [2⁻¹², 2¹²] (every 53rd float), in all four quadrants.
    for r in sweep(2f32.powi(-12), 2f32.powi(12), 53) {
        f(r, 1.0);
        f(-r, -1.0);
        f(1.0, -r);
        f(-1.0, r);
    }
    // Tiny and huge ratios, subnormal operands.
    for y in sweep(0.0, 2f32.powi(-12), 211) {
        f(y, 1.0);
        f(-y, -1.0);
        f(1.0, y);
        f(y, f32::MAX);
        f(f32::MAX, -y);
    }
}

#[test]
fn atan2_within_bound_on_finite_pairs() {
    let mut w = Worst::default();
    atan2_pairs(|y, x| {
        let got = math::atan2(y, x);
        w.see(ulp_error(got, f64::from(y).atan2(f64::from(x))), || {
            format!("atan2({y:e}, {x:e})")
        });
        assert!(got.abs() <= math::PI, "atan2({y:e}, {x:e}) = {got}");
    });
    w.check("atan2", ATAN2_ULP);
}

#[test]
fn atan2_special_values() {
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    let bits = |v: f32| v.to_bits();
    // C99 F.9.1.4, with the results rounded as the function returns them.
    assert_eq!(bits(math::atan2(0.0, 0.0)), bits(0.0));
    assert_eq!(bits(math::atan2(-0.0, 0.0)), bits(-0.0));
    assert_eq!(math::atan2(0.0, -0.0), PI);
    assert_eq!(math::atan2(-0.0, -0.0), -PI);
    assert_eq!(math::atan2(0.0, -1.0), PI);
    assert_eq!(math::atan2(-0.0, -1.0), -PI);
    assert_eq!(bits(math::atan2(0.0, 1.0)), bits(0.0));
    assert_eq!(bits(math::atan2(-0.0, 1.0)), bits(-0.0));
    assert_eq!(math::atan2(1.0, 0.0), FRAC_PI_2);
    assert_eq!(math::atan2(1.0, -0.0), FRAC_PI_2);
    assert_eq!(math::atan2(-1.0, 0.0), -FRAC_PI_2);
    assert_eq!(math::atan2(2.0, f32::NEG_INFINITY), PI);
    assert_eq!(math::atan2(-2.0, f32::NEG_INFINITY), -PI);
    assert_eq!(bits(math::atan2(2.0, f32::INFINITY)), bits(0.0));
    assert_eq!(bits(math::atan2(-2.0, f32::INFINITY)), bits(-0.0));
    assert_eq!(math::atan2(f32::INFINITY, 5.0), FRAC_PI_2);
    assert_eq!(math::atan2(f32::NEG_INFINITY, -5.0), -FRAC_PI_2);
    assert_eq!(math::atan2(f32::INFINITY, f32::INFINITY), FRAC_PI_4);
    assert_eq!(math::atan2(-f32::INFINITY, f32::INFINITY), -FRAC_PI_4);
    let three_quarters = math::atan2(f32::INFINITY, f32::NEG_INFINITY);
    assert!(ulp_error(three_quarters, 3.0 * std::f64::consts::FRAC_PI_4) <= ATAN2_ULP);
    assert_eq!(
        math::atan2(f32::NEG_INFINITY, f32::NEG_INFINITY),
        -three_quarters
    );
    for (y, x) in [(f32::NAN, 1.0), (1.0, f32::NAN), (f32::NAN, f32::INFINITY)] {
        assert!(math::atan2(y, x).is_nan());
    }
}

#[test]
fn exp_within_bound_on_domain() {
    let mut w = Worst::default();
    // Normal results: x from ln(f32::MIN_POSITIVE) to the overflow threshold.
    let lo = -87.336_54f32;
    // The largest float whose exponential rounds to a finite f32 (the next one is 88.72284).
    let hi = 88.722_83f32;
    assert!(f64::from(lo).exp() >= f64::from(f32::MIN_POSITIVE));
    assert!((f64::from(hi).exp() as f32).is_finite());
    assert!((f64::from(f32::from_bits(hi.to_bits() + 1)).exp() as f32).is_infinite());
    let mut check = |x: f32| {
        w.see(ulp_error(math::exp(x), f64::from(x).exp()), || {
            format!("exp({x:e})")
        });
    };
    sweep(0.0, hi, 97).for_each(&mut check);
    sweep(0.0, -lo, 97).for_each(|x| check(-x));
    // Every 17th float of ±[2⁻¹², 1/4], where exp(x) ≈ 1 + x.
    sweep(2f32.powi(-12), 0.25, 17).for_each(|x| {
        check(x);
        check(-x);
    });
    w.check("exp", EXP_ULP);
}

#[test]
fn exp_outside_domain() {
    assert_eq!(math::exp(0.0), 1.0);
    assert_eq!(math::exp(-0.0), 1.0);
    assert_eq!(math::exp(f32::INFINITY), f32::INFINITY);
    assert_eq!(math::exp(f32::NEG_INFINITY), 0.0);
    assert!(math::exp(f32::NAN).is_nan());
    for x in sweep(88.722_85, f32::MAX, 4099) {
        assert_eq!(math::exp(x), f32::INFINITY, "exp({x:e})");
    }
    for x in sweep(103.972_09, f32::MAX, 4099) {
        assert_eq!(math::exp(-x).to_bits(), 0, "exp(-{x:e})");
    }
    // Subnormal results: within one subnormal step (2⁻¹⁴⁹) of the reference, and monotone.
    let mut w = Worst::default();
    let mut previous = 0.0f32;
    for x in sweep(87.336_55, 103.972_08, 17) {
        let got = math::exp(-x);
        w.see(ulp_error(got, f64::from(-x).exp()), || {
            format!("exp(-{x:e})")
        });
        assert!(
            previous == 0.0 || got <= previous,
            "exp not monotone at -{x:e}"
        );
        previous = got;
    }
    w.check("exp (subnormal results)", 1.0);
}

#[test]
fn ln_within_bound_on_positive_floats() {
    let mut w = Worst::default();
    let mut check = |x: f32| {
        w.see(ulp_error(math::ln(x), f64::from(x).ln()), || {
            format!("ln({x:e})")
        });
    };
    // Every 127th positive finite float (subnormals included), and every 5th one of [1/2, 2],
    // where ln x ≈ x − 1 is small and cancellation is hardest.
    sweep(f32::from_bits(1), f32::MAX, 127).for_each(&mut check);
    sweep(0.5, 2.0, 5).for_each(&mut check);
    [f32::MAX, f32::MIN_POSITIVE, f32::from_bits(1)]
        .into_iter()
        .for_each(&mut check);
    w.check("ln", LN_ULP);
}

#[test]
fn ln_special_values() {
    assert_eq!(math::ln(1.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(math::ln(0.0), f32::NEG_INFINITY);
    assert_eq!(math::ln(-0.0), f32::NEG_INFINITY);
    assert_eq!(math::ln(f32::INFINITY), f32::INFINITY);
    for x in [-1.0, -f32::MIN_POSITIVE, f32::NEG_INFINITY, f32::NAN] {
        assert!(math::ln(x).is_nan(), "ln({x})");
    }
}

/// `a − 2π·round(a/2π)` from an `f64` two-part 2π (the fused multiply-add makes the first term
/// exact; this is test code, not a generation path).
fn wrap_reference(a: f32, k: f64) -> f64 {
    const TAU_HI: f64 = std::f64::consts::TAU;
    const TAU_LO: f64 = 2.449_293_598_294_706_4e-16;
    (-k).mul_add(TAU_HI, f64::from(a)) - k * TAU_LO
}

#[test]
fn wrap_angle_within_bound_on_domain() {
    let mut w = Worst::default();
    let mut check = |a: f32| {
        let got = math::wrap_angle(a);
        assert!(
            got > -math::PI && got <= math::PI,
            "wrap_angle({a:e}) = {got}"
        );
        // Near an odd multiple of π either neighbouring k is a correct wrap.
        let k = (f64::from(a) / std::f64::consts::TAU).round();
        let err = [k - 1.0, k, k + 1.0]
            .into_iter()
            .map(|k| ulp_error(got, wrap_reference(a, k)))
            .fold(f64::INFINITY, f64::min);
        w.see(err, || format!("wrap_angle({a:e})"));
    };
    sweep(0.0, WRAP_ANGLE_DOMAIN, 97).for_each(|a| {
        check(a);
        check(-a);
    });
    // The floats nearest to multiples of π (near 0 and near the ±π boundary).
    let k_max = (f64::from(WRAP_ANGLE_DOMAIN) / std::f64::consts::PI) as i64;
    for k in -k_max..=k_max {
        let a = (k as f64 * std::f64::consts::PI) as f32;
        let mut bits = a.to_bits().wrapping_sub(3);
        for _ in 0..7 {
            let a = f32::from_bits(bits);
            if a.abs() <= WRAP_ANGLE_DOMAIN {
                check(a);
            }
            bits = bits.wrapping_add(1);
        }
    }
    w.check("wrap_angle", WRAP_ANGLE_ULP);
    for a in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert!(math::wrap_angle(a).is_nan());
    }
}

#[test]
fn wrap_angle_outside_domain_stays_in_range() {
    for a in sweep(WRAP_ANGLE_DOMAIN, f32::MAX, 1013).chain([f32::MAX]) {
        for a in [a, -a] {
            let w = math::wrap_angle(a);
            assert!(w > -math::PI && w <= math::PI, "wrap_angle({a:e}) = {w}");
        }
    }
}

#[test]
fn round_small_rounds_half_to_even() {
    for (x, want) in [
        (0.5f32, 0.0f32),
        (1.5, 2.0),
        (2.5, 2.0),
        (-2.5, -2.0),
        (-0.49, -0.0),
        (4_194_303.5, 4_194_304.0),
        (4_194_304.5, 4_194_304.5),
        (1e30, 1e30),
    ] {
        assert_eq!(math::round_small(x), want, "round_small({x})");
    }
    assert!(math::round_small(f32::NAN).is_nan());
    // Exhaustively against `f32::round_ties_even` below 2²² (every 7th float).
    for x in sweep(0.0, 4_194_303.5, 7) {
        assert_eq!(
            math::round_small(x),
            x.round_ties_even(),
            "round_small({x})"
        );
        assert_eq!(
            math::round_small(-x),
            (-x).round_ties_even(),
            "round_small(-{x})"
        );
    }
}

/// Every float of each function's domain (sin, cos, exp, ln, wrap_angle; atan2 has two
/// arguments and is only sampled). Takes about ten minutes on two cores; run it after changing
/// `src/math`: `cargo test --release --test math_accuracy -- --ignored --nocapture`.
#[test]
#[ignore = "exhaustive, minutes"]
fn exhaustive_domains() {
    /// The largest `err(x)` over ±every float of `[lo, hi]`, and its argument.
    fn each(lo: f32, hi: f32, err: impl Fn(f32) -> f64 + Sync) -> (f64, f32) {
        let (lo, hi) = (lo.to_bits(), hi.to_bits());
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let chunk = (hi - lo) / threads + 1;
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let err = &err;
                    scope.spawn(move || {
                        let mut worst = (0.0, 0.0);
                        let start = lo.saturating_add(t * chunk);
                        let end = start.saturating_add(chunk).min(hi.saturating_add(1));
                        for bits in start..end {
                            let x = f32::from_bits(bits);
                            for x in [x, -x] {
                                let e = err(x);
                                if e > worst.0 || e.is_nan() {
                                    worst = (e, x);
                                }
                            }
                        }
                        worst
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
        })
    }
    let report = |name: &str, (err, x): (f64, f32), bound: f64| {
        println!("{name}: exhaustive max {err:.4} ulp at {x:e}");
        assert!(err <= bound, "{name}: {err} ulp at {x:e}");
    };
    report(
        "sin",
        each(0.0, SIN_COS_DOMAIN, |x| {
            ulp_error(math::sin(x), f64::from(x).sin())
        }),
        SIN_COS_ULP,
    );
    report(
        "cos",
        each(0.0, SIN_COS_DOMAIN, |x| {
            ulp_error(math::cos(x), f64::from(x).cos())
        }),
        SIN_COS_ULP,
    );
    report(
        "exp",
        each(0.0, 88.722_83, |x| {
            if x < -87.336_54 {
                0.0
            } else {
                ulp_error(math::exp(x), f64::from(x).exp())
            }
        }),
        EXP_ULP,
    );
    report(
        "ln",
        each(f32::from_bits(1), f32::MAX, |x| {
            if x < 0.0 {
                0.0
            } else {
                ulp_error(math::ln(x), f64::from(x).ln())
            }
        }),
        LN_ULP,
    );
    report(
        "wrap_angle",
        each(0.0, WRAP_ANGLE_DOMAIN, |a| {
            let got = math::wrap_angle(a);
            let k = (f64::from(a) / std::f64::consts::TAU).round();
            [k - 1.0, k, k + 1.0]
                .into_iter()
                .map(|k| ulp_error(got, wrap_reference(a, k)))
                .fold(f64::INFINITY, f64::min)
        }),
        WRAP_ANGLE_ULP,
    );
}
