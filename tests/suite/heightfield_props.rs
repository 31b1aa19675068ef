//! Road heightfields and boundary props (`course::heightfield`, `course::props`): the height at
//! centerline points is the road's, the field is continuous across the road edge, the block
//! search equals the full scan bit for bit, invalid envs are NaN; props close the ring with no
//! gap and no doubled prop; and both keep the determinism contract — a masked regenerate leaves
//! unmasked envs untouched, and corpora are the same bytes whatever the thread count, chunk size
//! or shard.

use std::path::Path;

use trackgen::corpus::{write_corpus_with, Corpus, CorpusExtras};
use trackgen::course::heightfield::{heightfield_lane, nearest_height, Band, Blocks};
use trackgen::course::props::{props_lane, PropRow};
use trackgen::course::{
    Course, CourseConfig, HeightfieldConfig, Heightfields, Mode, PropConfig, PropKind, Props, Side,
};
use trackgen::exec::plan::Backend;
use trackgen::exec::Launch;
use trackgen::geom::{forward, Quat, Vec2, Vec3};
use trackgen::preset::Preset;
use trackgen::track::TrackBatch;

const SEED: u64 = 5;

/// Small hilly tracks: a noise profile of ±6 m at most 8 % grade.
fn hilly() -> Preset {
    Preset::parse(
        "[track]\nn_max = 160\n[zprofile]\nkind = \"noise\"\namplitude_m = 6.0\nmax_grade = 0.08\nknots = 5\n",
        "hilly",
    )
    .unwrap()
}

fn config(resolution: u32, props: Option<PropConfig>) -> CourseConfig {
    CourseConfig {
        heightfield: Some(HeightfieldConfig {
            resolution,
            margin_m: 4.0,
        }),
        props,
        ..CourseConfig::default()
    }
}

fn cones() -> PropConfig {
    PropConfig {
        side: Side::Outer,
        kind: PropKind::Point,
        spacing_m: 6.0,
        max_props: 256,
    }
}

fn walls() -> PropConfig {
    PropConfig {
        side: Side::Inner,
        kind: PropKind::Segment,
        spacing_m: 4.0,
        max_props: 256,
    }
}

/// The largest |dz| per metre of horizontal run over env `e`'s centerline segments.
fn max_grade(t: &TrackBatch, e: usize) -> f32 {
    let c = t.points(&t.center, e);
    let n = c.len();
    (0..n)
        .map(|i| {
            let (p, q) = (c[i], c[(i + 1) % n]);
            (q.z - p.z).abs() / (q - p).truncate().length()
        })
        .fold(0.0, f32::max)
}

/// Distance in plan view from `p` to env `e`'s centerline polyline.
fn dist_to_center(t: &TrackBatch, e: usize, p: Vec2) -> f32 {
    let c = t.points(&t.center, e);
    let n = c.len();
    (0..n)
        .map(|i| {
            let (a, b) = (c[i].truncate(), c[(i + 1) % n].truncate());
            let d = b - a;
            let s = ((p - a).dot(d) / d.dot(d)).clamp(0.0, 1.0);
            (p - (a + d * s)).length()
        })
        .fold(f32::INFINITY, f32::min)
}

#[test]
fn heightfield_is_the_road_height_at_centerline_points() {
    let p = hilly();
    let c = Course::new(Mode::Track, &p, 4, SEED, config(96, None), Launch::new()).unwrap();
    let (t, h) = (c.track_batch(), c.heightfields().unwrap());
    let mut hills = 0.0f32;
    for e in 0..4 {
        assert_eq!(t.valid[e], 1);
        let [lo, hi] = h.env_bounds(e);
        let d = (hi.x - lo.x) / 96.0;
        assert!((hi.y - lo.y - (hi.x - lo.x)).abs() < 1e-3, "square bounds");
        let grade = max_grade(t, e);
        for q in t.points(&t.center, e) {
            // Inside the bounds by at least the margin.
            assert!(q.x - lo.x >= 4.0 - 1e-3 && hi.x - q.x >= 4.0 - 1e-3);
            assert!(q.y - lo.y >= 4.0 - 1e-3 && hi.y - q.y >= 4.0 - 1e-3);
            // Exactly at the point (the scan's answer) and bilinearly from the grid: within the
            // slope times a texel diagonal.
            assert!((nearest_height(t.points(&t.center, e), q.truncate()) - q.z).abs() < 1e-4);
            let z = h.sample(e, q.truncate());
            assert!(
                (z - q.z).abs() <= grade * d * 1.5 + 1e-3,
                "env {e}: field {z} at centerline height {} (grade {grade}, texel {d})",
                q.z
            );
            hills = hills.max(q.z.abs());
        }
    }
    assert!(hills > 0.5, "the preset is hilly ({hills} m)");
}

#[test]
fn heightfield_is_continuous_across_the_road_edge() {
    let p = hilly();
    let r = 96usize;
    let c = Course::new(
        Mode::Track,
        &p,
        3,
        SEED,
        config(r as u32, None),
        Launch::new(),
    )
    .unwrap();
    let (t, h) = (c.track_batch(), c.heightfields().unwrap());
    let hw = p.track.half_width_m;
    let mut crossings = 0;
    for e in 0..3 {
        let [lo, hi] = h.env_bounds(e);
        let d = (hi.x - lo.x) / r as f32;
        let grade = max_grade(t, e);
        let centre = |i: usize, j: usize| {
            Vec2::new(lo.x + (i as f32 + 0.5) * d, lo.y + (j as f32 + 0.5) * d)
        };
        let heights = h.heights(e);
        for j in 0..r {
            for i in 0..r - 1 {
                let (a, b) = (centre(i, j), centre(i + 1, j));
                let (da, db) = (dist_to_center(t, e, a), dist_to_center(t, e, b));
                // Neighbours on either side of the road edge.
                if (da <= hw) == (db <= hw) || da.min(db) > hw {
                    continue;
                }
                crossings += 1;
                let (ha, hb) = (heights[j * r + i], heights[j * r + i + 1]);
                assert!(
                    (ha - hb).abs() <= grade * d * 2.0 + 1e-3,
                    "env {e}: step {} m across the edge at texels ({i}, {j})-({}, {j})",
                    (ha - hb).abs(),
                    i + 1
                );
            }
        }
    }
    assert!(crossings > 100, "{crossings} edge crossings tested");
}

#[test]
fn heightfield_has_no_cliffs_anywhere() {
    // Between two parts of the track at different heights the ground ramps: no pair of
    // neighbouring texels anywhere differs by more than a quarter of their spacing (the road's
    // grade cap is 0.08; where the nearest part switches, a nearest-segment field jumps by
    // metres).
    let p = hilly();
    let r = 96usize;
    let c = Course::new(
        Mode::Track,
        &p,
        8,
        SEED,
        config(r as u32, None),
        Launch::new(),
    )
    .unwrap();
    let h = c.heightfields().unwrap();
    for e in 0..8 {
        let [lo, hi] = h.env_bounds(e);
        let d = (hi.x - lo.x) / r as f32;
        let z = h.heights(e);
        let (zmin, zmax) = z
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(zmax - zmin > 2.0, "env {e} is hilly");
        for j in 0..r {
            for i in 0..r {
                let here = z[j * r + i];
                for (di, dj) in [(1, 0), (0, 1)] {
                    if i + di < r && j + dj < r {
                        let step = (z[(j + dj) * r + i + di] - here).abs();
                        assert!(step <= 0.25 * d, "env {e}: {step} m step at ({i}, {j})");
                    }
                }
            }
        }
    }
}

#[test]
fn block_search_equals_the_full_scan_and_invalid_envs_are_nan() {
    let p = hilly();
    let c = Course::new(
        Mode::Track,
        &p,
        2,
        SEED,
        CourseConfig::default(),
        Launch::new(),
    )
    .unwrap();
    let t = c.track_batch();
    let center = t.points(&t.center, 1);
    let blocks = Blocks::new(center);
    let mut hint = 0;
    for k in 0..4000 {
        // A deterministic scatter over and around the track.
        let a = k as f32 * 0.618_034;
        let q = center[k % center.len()].truncate()
            + Vec2::new((a.fract() - 0.5) * 80.0, ((a * 1.7).fract() - 0.5) * 80.0);
        let (z, seg, _) = blocks.nearest(center, q, hint);
        assert_eq!(z.to_bits(), nearest_height(center, q).to_bits(), "at {q}");
        hint = seg;
    }
    let cfg = HeightfieldConfig::new(8);
    let band = Band {
        center,
        inner: t.points(&t.inner, 1),
        outer: t.points(&t.outer, 1),
    };
    let (mut height, mut corners) = (vec![0.0; 64], vec![Vec2::ZERO; 2]);
    heightfield_lane(&cfg, &band, false, &mut height, &mut corners);
    assert!(height
        .iter()
        .chain(corners.iter().flat_map(|c| [&c.x, &c.y]))
        .all(|v| v.is_nan()));
    heightfield_lane(&cfg, &band, true, &mut height, &mut corners);
    assert!(height.iter().all(|v| v.is_finite()));
}

/// The 3D distance from `p` to the closed polyline `b`.
fn border_distance(b: &[Vec3], p: Vec3) -> f32 {
    let n = b.len();
    (0..n)
        .map(|i| {
            let (a, c) = (b[i], b[(i + 1) % n]);
            let d = c - a;
            let s = ((p - a).dot(d) / d.dot(d)).clamp(0.0, 1.0);
            (p - (a + d * s)).length()
        })
        .fold(f32::INFINITY, f32::min)
}

fn closed_length(b: &[Vec3]) -> f32 {
    (0..b.len())
        .map(|i| (b[(i + 1) % b.len()] - b[i]).length())
        .sum()
}

#[test]
fn props_close_the_ring_with_no_gap_or_doubled_prop() {
    let p = hilly();
    for (props, side) in [(cones(), Side::Outer), (walls(), Side::Inner)] {
        let c = Course::new(
            Mode::Track,
            &p,
            4,
            SEED,
            config(8, Some(props)),
            Launch::new(),
        )
        .unwrap();
        let (t, pr) = (c.track_batch(), c.props().unwrap());
        for e in 0..4 {
            let border = match side {
                Side::Inner => t.points(&t.inner, e),
                Side::Outer => t.points(&t.outer, e),
            };
            let (pos, quat, length) = pr.env(e);
            let n = pos.len();
            let total = closed_length(border);
            let step = total / n as f32;
            assert!(n >= 3 && (step / props.spacing_m - 1.0).abs() < 0.5 / n as f32 + 0.1);
            assert!(
                (n as f32 * props.spacing_m - total).abs() <= 0.5 * props.spacing_m + 1e-2,
                "{n} props at {} m on a border of {total} m",
                props.spacing_m
            );
            // Chords: every one between half a step (no doubled prop) and one step (no gap),
            // the closing one included; the lengths sum to about the border length.
            for &l in length {
                assert!(l > 0.5 * step && l <= step * 1.0001 + 1e-4);
            }
            let chord_sum: f32 = length.iter().sum();
            assert!(chord_sum <= total * 1.0001 && chord_sum > 0.95 * total);
            match props.kind {
                PropKind::Point => {
                    for k in 0..n {
                        let next = pos[(k + 1) % n];
                        assert!(((next - pos[k]).length() - length[k]).abs() < 1e-3);
                        assert!(border_distance(border, pos[k]) < 1e-3);
                        // Upright, heading along the border.
                        let f = forward(quat[k]);
                        assert!(f.z.abs() < 1e-5);
                        assert!(f.truncate().dot((next - pos[k]).truncate()) > 0.0);
                    }
                    assert_eq!(pos[0], border[0], "the ring starts at border point 0");
                }
                PropKind::Segment => {
                    let ends = |k: usize| {
                        let half = forward(quat[k]) * (0.5 * length[k]);
                        (pos[k] - half, pos[k] + half)
                    };
                    for k in 0..n {
                        let (_, end) = ends(k);
                        let (start, _) = ends((k + 1) % n);
                        assert!(
                            (end - start).length() < 2e-3,
                            "seam between {k} and {}",
                            k + 1
                        );
                        assert!(border_distance(border, end) < 2e-3);
                    }
                }
            }
            assert!(pr.batch.pos[e * 256 + n..(e + 1) * 256]
                .iter()
                .all(|v| v.is_nan()));
        }
    }
}

#[test]
fn props_of_an_invalid_env_are_empty_and_spacing_snaps_to_the_capacity() {
    let square: Vec<Vec3> = [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)]
        .iter()
        .map(|&(x, y)| Vec3::new(x, y, 0.0))
        .collect();
    let run = |config: &PropConfig, valid: bool| {
        let cap = config.max_props as usize;
        let (mut pos, mut quat, mut length, mut count) = (
            vec![Vec3::ZERO; cap],
            vec![Quat::IDENTITY; cap],
            vec![0.0; cap],
            7u32,
        );
        let row = PropRow {
            pos: &mut pos,
            quat: &mut quat,
            length: &mut length,
            count: &mut count,
        };
        props_lane(config, &square, valid, row);
        (pos, length, count)
    };
    let (pos, _, count) = run(&cones(), false);
    assert_eq!(count, 0);
    assert!(pos.iter().all(|p| p.is_nan()));
    // 40 m of border at 3 m wants 13 props; at 1 m it wants 40 but the capacity is 8.
    let mut c = PropConfig {
        spacing_m: 3.0,
        max_props: 16,
        ..cones()
    };
    let (_, length, count) = run(&c, true);
    assert_eq!(count, 13);
    assert!((length[0] - 40.0 / 13.0).abs() < 1e-4);
    c.spacing_m = 1.0;
    c.max_props = 8;
    let (pos, length, count) = run(&c, true);
    assert_eq!(count, 8);
    assert_eq!(pos[1], Vec3::new(5.0, 0.0, 0.0));
    assert!(length.iter().all(|&l| (l - 5.0).abs() < 1e-5));
}

#[test]
fn masked_regenerate_rebakes_only_masked_envs() {
    let p = hilly();
    let cfg = config(24, Some(walls()));
    let n = 6;
    let mut c = Course::new(Mode::Track, &p, n, SEED, cfg.clone(), Launch::new()).unwrap();
    let (h0, p0) = (
        c.heightfields().unwrap().clone(),
        c.props().unwrap().clone(),
    );
    let mask = [0u8, 1, 0, 0, 1, 0];
    c.regenerate(&mask, true).unwrap();
    let (h1, p1) = (c.heightfields().unwrap(), c.props().unwrap());
    let mut fresh = Course::new(Mode::Track, &p, n, SEED, cfg, Launch::new()).unwrap();
    fresh.generate(1).unwrap();
    let (hf, pf) = (fresh.heightfields().unwrap(), fresh.props().unwrap());
    for (e, &m) in mask.iter().enumerate() {
        let r = e..e + 1;
        let (h_same, p_same) = (
            h1.slice(r.clone()).bytes_eq(&h0.slice(r.clone())),
            p1.batch
                .slice(r.clone())
                .bytes_eq(&p0.batch.slice(r.clone())),
        );
        if m == 0 {
            assert!(h_same && p_same, "unmasked env {e} changed");
        } else {
            assert!(!h_same && !p_same, "masked env {e} kept its old field");
            assert!(h1.slice(r.clone()).bytes_eq(&hf.slice(r.clone())));
            assert!(p1.batch.slice(r.clone()).bytes_eq(&pf.batch.slice(r)));
        }
    }
    // Gate courses have no road.
    let gates = Preset::load("gates-indoor").unwrap();
    let err = Course::new(Mode::Gates, &gates, 2, 0, config(8, None), Launch::new()).unwrap_err();
    assert!(err.to_string().contains("Mode::Track"), "{err}");
}

fn corpus(dir: &Path, range: std::ops::Range<u64>, chunk: usize, threads: usize) -> Corpus {
    let extras = CorpusExtras {
        heightfield: Some(HeightfieldConfig {
            resolution: 20,
            margin_m: 3.0,
        }),
        props: Some(cones()),
    };
    write_corpus_with(
        dir,
        &hilly(),
        SEED,
        0,
        range,
        chunk,
        &extras,
        Backend::Cpu(Launch::with_threads(threads).unwrap()),
        &mut |_| {},
    )
    .unwrap();
    Corpus::open(dir).unwrap()
}

#[test]
fn corpus_arrays_are_the_same_bytes_for_any_threads_chunks_and_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let one = corpus(&tmp.path().join("one"), 0..7, 7, 1);
    let two = corpus(&tmp.path().join("two"), 0..7, 3, 2);
    let shard = corpus(&tmp.path().join("shard"), 2..6, 2, 2);
    one.verify_checksums().unwrap();
    for name in [
        "heightfield",
        "heightfield_bounds",
        "prop_pos",
        "prop_quat",
        "prop_length",
        "prop_count",
    ] {
        let file = |c: &Corpus| std::fs::read(c.dir().join(format!("{name}.npy"))).unwrap();
        assert_eq!(
            file(&one),
            file(&two),
            "{name}: 1 thread vs 2, chunk 7 vs 3"
        );
    }
    let m = one.manifest();
    assert_eq!(m.arrays["heightfield"].shape, vec![7, 20, 20]);
    assert_eq!(m.arrays["heightfield_bounds"].shape, vec![7, 2, 2]);
    assert_eq!(m.arrays["prop_quat"].shape, vec![7, 256, 4]);
    let (h, hs) = (
        one.read_heightfields(2..6).unwrap(),
        shard.read_heightfields(0..4).unwrap(),
    );
    assert!(h.bytes_eq(&hs), "shard rows equal the full corpus's");
    let (p, ps) = (
        one.read_props(2..6).unwrap(),
        shard.read_props(0..4).unwrap(),
    );
    assert!(p.batch.bytes_eq(&ps.batch));
    // The corpus holds what a Course of the same envs bakes.
    let cfg = CourseConfig {
        heightfield: Some(m.heightfield.unwrap()),
        props: Some(cones()),
        ..CourseConfig::default()
    };
    let c = Course::new(Mode::Track, &hilly(), 7, SEED, cfg, Launch::new()).unwrap();
    let all = one.read_heightfields(0..7).unwrap();
    assert!(all
        .grid
        .height
        .iter()
        .zip(&c.heightfields().unwrap().grid.height)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let props: &Props = c.props().unwrap();
    assert_eq!(one.read_props(0..7).unwrap().batch.count, props.batch.count);
    let _: &Heightfields = &all;
}

#[test]
fn generate_rejects_bad_heightfield_and_prop_options_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let fails = |args: &[&str], needles: &[&str]| {
        let o = crate::cli::trackgen(args, d);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        for needle in needles {
            assert!(stderr.contains(needle), "{args:?}: {stderr}");
        }
        assert!(!d.join("out").exists());
    };
    fails(
        &[
            "generate",
            "--envs",
            "2",
            "--heightfield",
            "1",
            "--out",
            "out",
        ],
        &["--heightfield", "2..=4096"],
    );
    fails(
        &[
            "generate",
            "--envs",
            "2",
            "--heightfield",
            "8",
            "--heightfield-margin=-1",
            "--out",
            "out",
        ],
        &["margin_m", "≥ 0"],
    );
    fails(
        &[
            "generate",
            "--envs",
            "2",
            "--props",
            "outer:cone:5",
            "--out",
            "out",
        ],
        &["cone", "point or segment"],
    );
    fails(
        &[
            "generate",
            "--envs",
            "2",
            "--props",
            "outer:point:0",
            "--out",
            "out",
        ],
        &["spacing", "> 0"],
    );
    fails(
        &[
            "generate",
            "--envs",
            "2",
            "--props",
            "left:point:5",
            "--out",
            "out",
        ],
        &["inner or outer"],
    );
    fails(
        &[
            "generate",
            "--preset",
            "gates",
            "--envs",
            "2",
            "--heightfield",
            "8",
            "--out",
            "out",
        ],
        &["gate preset", "track corpora"],
    );
}
