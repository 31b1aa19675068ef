//! Curvature-aware generators: the polar, Bézier and hull generators soften their control points
//! against the preset's minimum turn radius, so their first-attempt curves (after resampling)
//! rarely need the pipeline's relaxation, and every track they yield passes validity on its
//! first attempt far more often than it did when relaxation had to fix most curves.

use trackgen::geom::Vec2;
use trackgen::preset::Preset;
use trackgen::rng::{stream, LaneRng};
use trackgen::track::generators;
use trackgen::track::generators::spline::{
    bezier_curvature_exceeds, catmull_rom_closed, catmull_rom_segment, soften_closed,
    SAMPLES_PER_SEGMENT, SOFTEN_MARGIN, SOFTEN_ROUNDS,
};
use trackgen::track::relax::{violation, RelaxConsts, RelaxScratch};
use trackgen::track::resample::resample_closed;

/// The fraction of `envs` first-attempt curves of `name` that the relaxation check flags.
fn relaxed_fraction(name: &str, envs: usize) -> f64 {
    let preset = Preset::load(name).unwrap();
    let t = &preset.track;
    let consts = RelaxConsts::from_preset(&preset);
    let stage = generators::from_preset(&preset);
    let n_max = t.n_max as usize;
    let mut scratch = vec![0.0f32; stage.scratch_len().max(1)];
    let mut scratch_u32 = vec![0u32; stage.scratch_u32_len().max(1)];
    let mut raw = vec![Vec2::ZERO; stage.max_points().max(3)];
    let mut pts = vec![Vec2::ZERO; n_max];
    let mut disp = vec![Vec2::ZERO; 2 * n_max];
    let mut flagged = 0;
    for e in 0..envs {
        let mut rng = LaneRng::new(3, e as u64, 0, stream::with_attempt(stream::GENERATE, 0));
        let n = stage.run_lane(&mut rng, &mut scratch, &mut scratch_u32, &mut raw);
        let count = resample_closed(&raw[..n], t.spacing_m, &mut pts);
        assert!(count >= 3, "{name} env {e}: {count} points");
        let mut s = RelaxScratch { disp: &mut disp };
        flagged += usize::from(violation(&pts[..count], &consts, &mut s, true) != 0);
    }
    flagged as f64 / envs as f64
}

/// Before the softening, 68–95 % of these presets' first attempts needed relaxation (measured on
/// 4096 envs with `examples/first_attempt.rs`); now at most a few percent do.
#[test]
fn softened_generators_rarely_need_relaxation() {
    for (name, at_most) in [("polar", 0.01), ("hull", 0.01), ("bezier", 0.03)] {
        let f = relaxed_fraction(name, 1024);
        assert!(
            f <= at_most,
            "{name}: {f} of first attempts need relaxation"
        );
    }
}

/// The presets of the softened generators run without relaxation (the pipeline plans no
/// relaxation pass at all): their first attempts pass validity as they are, and the rare one that
/// does not is retried, so yield stays whole and attempts stay near one.
#[test]
fn softened_presets_run_without_relaxation_at_full_yield() {
    use trackgen::exec::Launch;
    use trackgen::track::Pipeline;
    let envs = 4096;
    for name in ["polar", "bezier", "hull"] {
        let preset = Preset::load(name).unwrap();
        assert_eq!(preset.relax.max_windows, 0, "{name}");
        let mut pipeline = Pipeline::new(&preset, envs, Launch::new()).unwrap();
        let mut batch = pipeline.new_batch(0).unwrap();
        pipeline.generate(5, 0, &mut batch).unwrap();
        let passes = &pipeline.last_trace().cpu_passes;
        assert!(
            !passes.keys().any(|k| k.contains("relax")),
            "{name}: {passes:?}"
        );
        let valid = batch.valid.iter().filter(|&&v| v == 1).count();
        let attempts: u64 = batch.attempts.iter().map(|&a| u64::from(a)).sum();
        assert!(
            valid * 1000 >= envs * 999,
            "{name}: {valid} of {envs} valid"
        );
        assert!(
            attempts * 100 <= envs as u64 * 101,
            "{name}: {attempts} attempts for {envs} envs"
        );
    }
}

/// The quarter-circle Bézier of radius r with handles k·r: at its ends the curvature is
/// (2/3)·(1 − k)/(k²·r) in closed form.
#[test]
fn bezier_curvature_matches_the_closed_form() {
    let (r, k) = (10.0f32, 0.55f32);
    let seg = [
        Vec2::new(r, 0.0),
        Vec2::new(r, k * r),
        Vec2::new(k * r, r),
        Vec2::new(0.0, r),
    ];
    let kappa = (2.0 / 3.0) * (1.0 - k) / (k * k * r);
    for t in [0.0, 1.0] {
        assert!(bezier_curvature_exceeds(seg, t, 0.999 * kappa), "t = {t}");
        assert!(!bezier_curvature_exceeds(seg, t, 1.001 * kappa), "t = {t}");
    }
    // A straight segment has zero curvature; a point segment is degenerate.
    let line = [0.0, 1.0, 2.0, 3.0].map(|x| Vec2::new(x, 0.0));
    assert!(!bezier_curvature_exceeds(line, 0.5, 0.0));
    assert!(bezier_curvature_exceeds([Vec2::ONE; 4], 0.5, 1.0));
}

/// A star polygon whose spline turns far tighter than the limit comes out of the softening
/// with every sampled turn (Menger curvature of the sampled spline, in f64) within it.
#[test]
fn softening_a_star_bounds_the_sampled_curvature() {
    let n = 12;
    let min_radius = 12.0f32;
    let mut ctrl: Vec<Vec2> = (0..n)
        .map(|i| {
            let a = i as f64 * std::f64::consts::TAU / n as f64;
            let r = if i % 2 == 0 { 160.0 } else { 70.0 };
            Vec2::new((r * a.cos()) as f32, (r * a.sin()) as f32)
        })
        .collect();
    let limit = 1.0 / (SOFTEN_MARGIN * min_radius);
    let tight = |ctrl: &[Vec2]| {
        let mut out = vec![Vec2::ZERO; ctrl.len() * SAMPLES_PER_SEGMENT];
        let m = catmull_rom_closed(ctrl, &mut out);
        (0..m)
            .map(|i| {
                let [a, p, b] = [out[(i + m - 1) % m], out[i], out[(i + 1) % m]]
                    .map(|v| (f64::from(v[0]), f64::from(v[1])));
                let cross = (p.0 - a.0) * (b.1 - a.1) - (p.1 - a.1) * (b.0 - a.0);
                let d = |u: (f64, f64), v: (f64, f64)| (u.0 - v.0).hypot(u.1 - v.1);
                2.0 * cross.abs() / (d(a, p) * d(p, b) * d(a, b))
            })
            .fold(0.0f64, f64::max)
    };
    assert!(
        tight(&ctrl) > 1.0 / f64::from(min_radius),
        "the star starts too tight"
    );
    let rounds = soften_closed(&mut ctrl, limit, SOFTEN_ROUNDS, catmull_rom_segment);
    assert!(rounds > 0 && rounds < SOFTEN_ROUNDS, "{rounds} rounds");
    let after = tight(&ctrl);
    assert!(
        after <= 1.0 / f64::from(min_radius),
        "max curvature {after}"
    );
    // Converged: another call moves nothing.
    assert_eq!(
        soften_closed(&mut ctrl, limit, SOFTEN_ROUNDS, catmull_rom_segment),
        0
    );
}

/// The plain Gauss–Seidel softening that [`soften_closed`] must reproduce bit for bit: every
/// round tests every point at the nine parameters with [`bezier_curvature_exceeds`], building
/// both segments afresh.
fn soften_reference(
    ctrl: &mut [Vec2],
    k: f32,
    rounds: usize,
    segment: impl Fn(&[Vec2], usize) -> [Vec2; 4],
) -> usize {
    let n = ctrl.len();
    if n < 3 {
        return 0;
    }
    let ts = [0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0];
    let mut moved_rounds = 0;
    for _ in 0..rounds {
        let mut moved = false;
        for i in 0..n {
            let before = segment(ctrl, (i + n - 1) % n);
            let after = segment(ctrl, i);
            let charged = ts.iter().any(|&t| {
                (t >= 0.5 && bezier_curvature_exceeds(before, t, k))
                    || (t <= 0.5 && bezier_curvature_exceeds(after, t, k))
            });
            if charged {
                let (a, b, p) = (ctrl[(i + n - 1) % n], ctrl[(i + 1) % n], ctrl[i]);
                let mid = Vec2::new(0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]));
                ctrl[i] = Vec2::new(p[0] + 0.25 * (mid[0] - p[0]), p[1] + 0.25 * (mid[1] - p[1]));
                moved = true;
            }
        }
        if !moved {
            break;
        }
        moved_rounds += 1;
    }
    moved_rounds
}

/// The bits of every coordinate of `v`.
fn bits(v: &[Vec2]) -> Vec<u32> {
    v.iter()
        .flat_map(|p| p.to_array().map(f32::to_bits))
        .collect()
}

/// Softens `ctrl` with `soften_closed` and with the plain reference, asserts both take the same
/// rounds and give the same bits (`case` names the failure), and returns the rounds and points.
fn soften_like_the_reference(ctrl: &[Vec2], k: f32, case: u64) -> (usize, Vec<Vec2>) {
    let (mut fast, mut plain) = (ctrl.to_vec(), ctrl.to_vec());
    let rounds = soften_closed(&mut fast, k, SOFTEN_ROUNDS, catmull_rom_segment);
    let expected = soften_reference(&mut plain, k, SOFTEN_ROUNDS, catmull_rom_segment);
    assert_eq!(rounds, expected, "case {case}: rounds");
    assert_eq!(bits(&fast), bits(&plain), "case {case}: softened points");
    (rounds, fast)
}

/// `soften_closed` moves the same points to the same bits as the plain algorithm on jittered
/// polar polygons from gentle to spiky (the shapes the polar generator softens).
#[test]
fn softening_matches_the_plain_algorithm_on_polar_polygons() {
    let mut x = 0x9e37_79b9u32;
    let mut unit = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        (x >> 8) as f32 / 16_777_216.0
    };
    let mut moved = 0;
    for case in 0..2000 {
        let n = 4 + case % 40;
        let jitter = 0.9 * unit();
        let ctrl: Vec<Vec2> = (0..n)
            .map(|i| {
                let angle = (i as f32 + 0.4 * (unit() - 0.5)) * trackgen::math::TAU / n as f32;
                let r = 120.0 * (1.0 + jitter * (unit() - 0.5));
                let (s, c) = trackgen::math::sin_cos(angle);
                Vec2::new(r * c, r * s)
            })
            .collect();
        let (rounds, _) = soften_like_the_reference(&ctrl, 1.0 / (1.15 * 12.0), case as u64);
        moved += usize::from(rounds > 0);
    }
    assert!(moved > 100, "{moved} cases moved a point");
}

/// Softening keeps each segment's verdicts until a point it reads moves (up to 128 segments),
/// and the Catmull–Rom sampler evaluates precomputed Bernstein weights a segment at a time: on
/// random jagged polygons of 3–142 points (past the 128-segment limit of the kept verdicts), with
/// NaN points among them, both give the bits of the plain algorithms.
#[test]
fn softening_and_sampling_match_the_plain_algorithms_bit_for_bit() {
    let mut moved_total = 0;
    for case in 0..600u64 {
        let mut rng = LaneRng::new(11, case, 0, stream::GENERATE);
        let n = 3 + (case as usize % 140);
        let mut ctrl: Vec<Vec2> = (0..n)
            .map(|i| {
                let a = (i as f32 + 0.4 * rng.signed()) * std::f32::consts::TAU / n as f32;
                let r = 100.0 * (1.0 + 0.6 * rng.signed());
                Vec2::new(r * trackgen::math::cos(a), r * trackgen::math::sin(a))
            })
            .collect();
        if case % 50 == 7 {
            ctrl[n / 2] = Vec2::new(f32::NAN, 1.0);
        }
        let k = 1.0 / (5.0 + 40.0 * rng.unit());
        let (rounds, fast) = soften_like_the_reference(&ctrl, k, case);
        moved_total += rounds;

        let mut sampled = vec![Vec2::ZERO; n * SAMPLES_PER_SEGMENT];
        let m = catmull_rom_closed(&fast, &mut sampled);
        assert_eq!(m, sampled.len());
        let mut plain_samples = Vec::with_capacity(m);
        for i in 0..n {
            let [p0, p1, p2, p3] = [(i + n - 1) % n, i, (i + 1) % n, (i + 2) % n].map(|j| fast[j]);
            for s in 0..SAMPLES_PER_SEGMENT {
                let t = s as f32 / SAMPLES_PER_SEGMENT as f32;
                plain_samples.push(trackgen::geom::catmull_rom(p0, p1, p2, p3, t));
            }
        }
        assert_eq!(bits(&sampled), bits(&plain_samples), "case {case}: samples");
        // An output that ends inside a segment takes the samples that fit.
        let short = m - 1 - (case as usize % SAMPLES_PER_SEGMENT);
        let mut cut = vec![Vec2::ZERO; short];
        assert_eq!(catmull_rom_closed(&fast, &mut cut), short, "case {case}");
        assert_eq!(
            bits(&cut),
            bits(&plain_samples[..short]),
            "case {case}: cut"
        );
    }
    // The cases exercise several rounds of moves, not only already-smooth polygons.
    assert!(moved_total > 600, "{moved_total} moved rounds in all");
}
