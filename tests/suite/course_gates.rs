//! Gate courses of both shipped gate presets at 2048 envs: the yield before fallback is ≥ 0.99,
//! and every env (valid or fallback) passes an independent brute-force check in f64: gate count,
//! finite values and NaN padding, minimum spacing, disjoint frame bounding spheres, maximum grade,
//! maximum turn, roll-free unit quaternions facing along the course, and a racing line that keeps
//! clear of the gates it does not pass through. Plus determinism and preset errors.

use trackgen::course::{GateBatch, GatePipeline};
use trackgen::exec::Launch;
use trackgen::preset::Preset;

type V = [f64; 3];

fn v(p: [f32; 3]) -> V {
    [f64::from(p[0]), f64::from(p[1]), f64::from(p[2])]
}
fn sub(a: V, b: V) -> V {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: V, b: V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn len(a: V) -> f64 {
    dot(a, a).sqrt()
}

/// Why env `e` is not a valid gate course, or `None`.
pub(crate) fn brute_force(b: &GateBatch, e: usize, p: &Preset) -> Option<String> {
    let g = p.gates.as_ref().unwrap();
    let n = b.count[e] as usize;
    if n < g.min_gates as usize || n > g.max_gates as usize {
        return Some(format!("{n} gates"));
    }
    let base = e * b.g_max;
    for i in 0..b.g_max {
        let finite = b.pos[base + i].is_finite()
            && b.quat[base + i].is_finite()
            && b.size[base + i].is_finite();
        if finite != (i < n) {
            return Some(format!("gate {i}: finite = {finite} with count {n}"));
        }
    }
    let pos: Vec<V> = (0..n).map(|i| v(b.pos[base + i].to_array())).collect();
    let t = f64::from(g.thickness_m);
    let radius = |i: usize| {
        let [w, h] = b.size[base + i].to_array();
        let (a, c) = (f64::from(w) / 2.0 + t, f64::from(h) / 2.0 + t);
        (a * a + c * c + t * t / 4.0).sqrt()
    };
    for i in 0..n {
        let [w, h] = b.size[base + i].to_array();
        if w < g.min_width_m || w > g.max_width_m || h < g.min_height_m || h > g.max_height_m {
            return Some(format!("gate {i}: size {w} × {h} out of range"));
        }
        for j in i + 1..n {
            let d = len(sub(pos[j], pos[i]));
            if d < f64::from(g.min_spacing_m) * (1.0 - 1e-5) {
                return Some(format!("gates {i}, {j}: {d} m apart"));
            }
            if d < (radius(i) + radius(j)) * (1.0 - 1e-5) {
                return Some(format!("gates {i}, {j}: frames may intersect ({d} m)"));
            }
        }
        let d = sub(pos[(i + 1) % n], pos[i]);
        let grade = d[2].abs() / (d[0] * d[0] + d[1] * d[1]).sqrt();
        if grade > f64::from(g.max_grade) * (1.0 + 1e-5) {
            return Some(format!("leg {i}: grade {grade}"));
        }
        let u = sub(pos[i], pos[(i + n - 1) % n]);
        let turn = (dot(u, d) / (len(u) * len(d)))
            .clamp(-1.0, 1.0)
            .acos()
            .to_degrees();
        if turn > f64::from(g.max_turn_deg) + 1e-3 {
            return Some(format!("gate {i}: turn {turn}°"));
        }
        // Roll-free unit quaternion whose forward axis is along p[i+1] − p[i−1].
        let [x, y, z, w] = b.quat[base + i].to_array().map(f64::from);
        if ((x * x + y * y + z * z + w * w) - 1.0).abs() > 1e-5 {
            return Some(format!("gate {i}: quaternion not unit"));
        }
        let forward = [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ];
        let left_z: f64 = 2.0 * (y * z + w * x);
        let want = sub(pos[(i + 1) % n], pos[(i + n - 1) % n]);
        if dot(forward, want) / len(want) < 1.0 - 1e-5 || left_z.abs() > 1e-5 {
            return Some(format!("gate {i}: frame not along the course or rolled"));
        }
    }
    // Racing line: uniform Catmull–Rom, `path_samples` per leg, clear of the other gates.
    let s = g.path_samples as usize;
    for i in 0..n {
        let (p0, p1, p2, p3) = (
            pos[(i + n - 1) % n],
            pos[i],
            pos[(i + 1) % n],
            pos[(i + 2) % n],
        );
        for k in 0..s {
            let tau = k as f64 / s as f64;
            let q: V = std::array::from_fn(|c| {
                0.5 * (2.0 * p1[c]
                    + (p2[c] - p0[c]) * tau
                    + (2.0 * p0[c] - 5.0 * p1[c] + 4.0 * p2[c] - p3[c]) * tau * tau
                    + (3.0 * p1[c] - p0[c] - 3.0 * p2[c] + p3[c]) * tau * tau * tau)
            });
            for j in (0..n).filter(|&j| j != i && j != (i + 1) % n) {
                if len(sub(q, pos[j])) < radius(j) * (1.0 - 1e-4) {
                    return Some(format!("racing line of leg {i} grazes gate {j}"));
                }
            }
        }
    }
    None
}

fn generate(preset: &Preset, n: usize, base: u64, gen: u32, threads: usize) -> GateBatch {
    let mut pipe = GatePipeline::new(preset, n, Launch::with_threads(threads).unwrap()).unwrap();
    let mut batch = pipe.new_batch(base).unwrap();
    pipe.generate(9, gen, &mut batch).unwrap();
    batch
}

#[test]
fn gate_presets_are_valid_by_brute_force() {
    for name in ["gates", "gates-indoor"] {
        let p = Preset::load(name).unwrap();
        let b = generate(&p, 2048, 0, 0, 0);
        let valid = b.valid.iter().filter(|&&v| v == 1).count();
        assert!(valid as f64 >= 0.99 * 2048.0, "{name}: yield {valid}/2048");
        for e in 0..b.n_envs {
            if let Some(why) = brute_force(&b, e, &p) {
                panic!("{name} env {e} (valid {}): {why}", b.valid[e]);
            }
        }
        // Gate counts cover the preset's range.
        let g = p.gates.as_ref().unwrap();
        assert!(b.count.contains(&g.min_gates) && b.count.contains(&g.max_gates));
    }
}

#[test]
fn fallback_ring_is_valid_and_flagged() {
    // Gates 60 m apart rarely fit on these tracks: some envs fall back to the ring.
    let p = Preset::parse(
        "[track]\nscale_m = 120\n[gates]\nmin_gates = 4\nmax_gates = 6\nmin_spacing_m = 60\nmax_attempts = 2\n",
        "crowded",
    )
    .unwrap();
    let b = generate(&p, 64, 0, 0, 0);
    assert!(b.valid.contains(&0));
    for e in 0..64 {
        if b.valid[e] == 0 {
            assert_eq!(b.attempts[e], 2);
            assert_eq!(
                b.count[e],
                p.gates.as_ref().unwrap().fallback_gates(&p.track).unwrap()
            );
        }
        assert_eq!(brute_force(&b, e, &p), None, "env {e}");
    }
}

#[test]
fn gate_batches_are_deterministic() {
    let p = Preset::load("gates").unwrap();
    let one = generate(&p, 40, 0, 3, 1);
    let two = generate(&p, 40, 0, 3, 2);
    assert!(one.bytes_eq(&two));
    let shard = generate(&p, 10, 25, 3, 2);
    assert!(one.slice(25..35).bytes_eq(&shard));
    let other = generate(&p, 40, 0, 4, 2);
    assert!((0..40).all(|e| one.gates(&one.pos, e) != other.gates(&other.pos, e)));
}

#[test]
fn gate_masked_regeneration_writes_only_masked_envs() {
    let p = Preset::load("gates-indoor").unwrap();
    let mut pipe = GatePipeline::new(&p, 12, Launch::new()).unwrap();
    let mut b = pipe.new_batch(0).unwrap();
    pipe.generate(9, 0, &mut b).unwrap();
    let before = b.clone();
    let mask: Vec<u8> = (0..12).map(|e| u8::from(e % 3 == 0)).collect();
    for (g, &m) in b.generation.iter_mut().zip(&mask) {
        if m == 1 {
            *g = 5;
        }
    }
    pipe.regenerate(9, &mask, &mut b).unwrap();
    let fresh = generate(&p, 12, 0, 5, 1);
    for (e, &m) in mask.iter().enumerate() {
        let want = if m == 1 {
            fresh.slice(e..e + 1)
        } else {
            before.slice(e..e + 1)
        };
        assert!(b.slice(e..e + 1).bytes_eq(&want), "env {e}");
    }
    let m = pipe.regenerate(9, &[1; 3], &mut b).unwrap_err().to_string();
    assert!(m.contains("3 entries") && m.contains("(12)"), "{m}");
}

#[test]
fn gate_preset_errors_name_the_key() {
    let err = |text: &str| Preset::parse(text, "g.toml").unwrap_err().to_string();
    let m = err("[gates]\nmin_gates = 3\n");
    assert!(
        m.contains("gates.min_gates") && m.contains("[4, 32]"),
        "{m}"
    );
    let m = err("[gates]\nmin_gates = 10\nmax_gates = 8\n");
    assert!(
        m.contains("gates.max_gates") && m.contains("gates.min_gates"),
        "{m}"
    );
    let m = err("[gates]\nmin_width_m = 3.0\nmax_width_m = 2.0\n");
    assert!(m.contains("gates.max_width_m"), "{m}");
    let m = err("[gates]\nposts = 1\n");
    assert!(
        m.contains("gates.posts") && m.contains("true or false"),
        "{m}"
    );
    let m = err("[gates]\ncolour = \"red\"\n");
    assert!(m.contains("gates.colour") && m.contains("min_gates"), "{m}");
    let m = err("[gates]\nmin_gates = 32\nmax_gates = 32\nmin_spacing_m = 100\n");
    assert!(m.contains("fallback ring"), "{m}");
    let m = err("[obstacles]\ncount = 65\n");
    assert!(
        m.contains("obstacles.count") && m.contains("[0, 64]"),
        "{m}"
    );
    let m = err("[gate]\nmin_gates = 4\n");
    assert!(m.contains("[gate]") && m.contains("[gates]"), "{m}");
    // A preset without the optional sections resolves exactly as before they existed.
    let track = Preset::load("track").unwrap();
    assert!(
        !track.resolved_toml().contains("gates") && !track.resolved_toml().contains("obstacles")
    );
    let gates = Preset::load("gates").unwrap();
    let again = Preset::parse(gates.resolved_toml(), "gates").unwrap();
    assert_eq!(again.gates, gates.gates);
}
