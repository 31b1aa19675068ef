//! Ray casts against analytic oracles: ≥100k random rays per scene (sphere, rotated box, box,
//! plane, a small room), thin walls, starts inside solids, misses, per-env batching, thread
//! counts, sensors and bad input.

use rayon::prelude::*;
use trackgen::exec::Launch;
use trackgen::geom::{axes as quat_axes, from_euler, Quat, Vec3, IDENTITY};
use trackgen::rng::LaneRng;
use trackgen::scene::raycast::sdf_at;
use trackgen::scene::CompiledScene;
use trackgen::scene::{
    build_pool, cast_rays, CastOptions, EnvScene, LidarRing, PinholeCamera, Pose, Primitive,
    RayEnvs, RayOutputs, ScenePool, Shape, BUDGET, HIT, MISS,
};

const RES: u32 = 64;
const SIZE_M: f32 = 8.0;
const VOXEL: f32 = SIZE_M / RES as f32;
const ORIGIN: [f32; 3] = [-4.0, -4.0, -4.0];

fn scene(prims: Vec<Primitive>) -> EnvScene {
    EnvScene {
        origin: Vec3::from(ORIGIN),
        size_m: SIZE_M,
        spawn: Vec3::ZERO,
        primitives: prims,
    }
}

fn pool(scenes: &[EnvScene]) -> ScenePool {
    build_pool(scenes, RES, 4.0, &Launch::new()).unwrap()
}

fn sphere() -> Vec<Primitive> {
    vec![Primitive::union(Shape::Sphere {
        center: Vec3::new(0.3, -0.2, 0.1),
        radius: 2.1,
    })]
}

fn boxed(rotation: Quat) -> Vec<Primitive> {
    vec![Primitive::union(Shape::Box {
        center: Vec3::new(0.2, 0.1, -0.3),
        rotation,
        half_extents: Vec3::new(2.3, 1.4, 0.9),
    })]
}

fn plane() -> Vec<Primitive> {
    let n = [0.3f32, -0.2, 1.0];
    let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    vec![Primitive::union(Shape::Plane {
        normal: Vec3::new(n[0] / l, n[1] / l, n[2] / l),
        offset: -0.7,
    })]
}

/// A hollow room (outer box minus inner box: an exact signed distance) with a table.
fn room() -> Vec<Primitive> {
    vec![
        Primitive::union(Shape::Box {
            center: Vec3::new(0.0, 0.0, 0.0),
            rotation: IDENTITY,
            half_extents: Vec3::new(3.2, 2.7, 1.6),
        }),
        Primitive::subtract(Shape::Box {
            center: Vec3::new(0.0, 0.0, 0.0),
            rotation: IDENTITY,
            half_extents: Vec3::new(3.0, 2.5, 1.4),
        }),
        Primitive::union(Shape::Box {
            center: Vec3::new(0.7, -0.4, -1.0),
            rotation: IDENTITY,
            half_extents: Vec3::new(0.6, 0.4, 0.4),
        }),
    ]
}

/// What the exact scene says about a ray: the first `t ∈ [0, t_end]` inside or on the scene
/// (by dense sampling at ¼ voxel and 40 bisections: exact to f32 for every crossing longer than
/// the sampling step), how deep the ray then gets before it leaves that solid (the smallest
/// sampled distance), and, for a miss, the smallest sampled distance along the whole ray.
struct Exact {
    hit: Option<f32>,
    depth: f32,
    clearance: f32,
}

fn exact_hit(s: &CompiledScene, o: [f32; 3], d: [f32; 3], t_end: f32) -> Exact {
    let at = |t: f32| [o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]];
    let step = 0.25 * VOXEL;
    let mut clearance = s.distance(o);
    let mut t0 = 0.0f32;
    let mut hit = (clearance <= 0.0).then_some(0.0);
    while hit.is_none() && t0 < t_end {
        let t1 = (t0 + step).min(t_end);
        let v = s.distance(at(t1));
        clearance = clearance.min(v);
        if v <= 0.0 {
            let (mut lo, mut hi) = (t0, t1);
            for _ in 0..40 {
                let mid = 0.5 * (lo + hi);
                if s.distance(at(mid)) <= 0.0 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            hit = Some(hi);
        }
        t0 = t1;
    }
    let mut depth = 0.0f32;
    if let Some(th) = hit {
        let mut t = th;
        loop {
            let v = s.distance(at(t));
            depth = depth.min(v);
            if v > 0.0 || t >= t_end {
                break;
            }
            t = (t + step).min(t_end);
        }
    }
    Exact {
        hit,
        depth,
        clearance,
    }
}

/// The parameter where the ray leaves the domain cube.
fn domain_exit(o: [f32; 3], d: [f32; 3]) -> f32 {
    let mut t = f32::INFINITY;
    for a in 0..3 {
        if d[a] > 0.0 {
            t = t.min((ORIGIN[a] + SIZE_M - o[a]) / d[a]);
        } else if d[a] < 0.0 {
            t = t.min((ORIGIN[a] - o[a]) / d[a]);
        }
    }
    t
}

fn random_rays(n: usize, seed: u64) -> (Vec<[f32; 3]>, Vec<[f32; 3]>) {
    let mut rng = LaneRng::new(seed, 0, 0, 99);
    let mut o = Vec::with_capacity(n);
    let mut d = Vec::with_capacity(n);
    let lo = ORIGIN[0] + VOXEL;
    let hi = ORIGIN[0] + SIZE_M - VOXEL;
    for _ in 0..n {
        o.push([rng.range(lo, hi), rng.range(lo, hi), rng.range(lo, hi)]);
        loop {
            let v = [rng.signed(), rng.signed(), rng.signed()];
            let l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            if l2 > 1e-4 && l2 <= 1.0 {
                let l = l2.sqrt();
                d.push([v[0] / l, v[1] / l, v[2] / l]);
                break;
            }
        }
    }
    (o, d)
}

struct Casts {
    distance: Vec<f32>,
    hit: Vec<u8>,
    steps: Vec<u32>,
}

fn cast(
    pool: &ScenePool,
    envs: RayEnvs,
    o: &[[f32; 3]],
    d: &[[f32; 3]],
    opts: &CastOptions,
    launch: &Launch,
) -> Casts {
    let n = o.len();
    let mut c = Casts {
        distance: vec![f32::NAN; n],
        hit: vec![77; n],
        steps: vec![u32::MAX; n],
    };
    cast_rays(
        &pool.view(),
        envs,
        o,
        d,
        opts,
        RayOutputs {
            distance: &mut c.distance,
            hit: &mut c.hit,
            steps: &mut c.steps,
        },
        launch,
    )
    .unwrap();
    c
}

/// Per ray: within a voxel, started inside, grazing, exact miss, hit flag, counted.
type Outcome = (u8, u8, u8, u8, u8, u8);

/// The acceptance contract on `n` random rays against `prims`.
fn check_oracle(name: &str, prims: Vec<Primitive>, n: usize) {
    let s = scene(prims);
    let exact = CompiledScene::new(&s.primitives).unwrap();
    let pool = pool(std::slice::from_ref(&s));
    let (o, d) = random_rays(n, name.len() as u64);
    let no_hit = -7.0;
    let opts = CastOptions {
        max_distance: 100.0,
        no_hit_value: no_hit,
        max_steps: 4096,
    };
    let c = cast(
        &pool,
        RayEnvs::Blocks { rays_per_env: n },
        &o,
        &d,
        &opts,
        &Launch::new(),
    );
    let results: Vec<Outcome> = (0..n)
        .into_par_iter()
        .map(|i| {
            let (oi, di) = (o[i], d[i]);
            let t_end = domain_exit(oi, di);
            let ex = exact_hit(&exact, oi, di, t_end);
            let (hit_t, min_sdf) = (ex.hit, ex.clearance);
            let (t, h) = (c.distance[i], c.hit[i]);
            assert_ne!(h, BUDGET, "{name} ray {i}: step budget ran out");
            let mut within = 0u8;
            let mut inside = 0u8;
            let mut grazing = 0u8;
            let mut miss = 0u8;
            let start = exact.distance(oi);
            if start < -VOXEL {
                inside = 1;
                assert!(h == HIT && t == 0.0, "{name} ray {i}: starts {start} m inside, got ({t}, {h})");
            }
            if h == HIT {
                // Wherever a hit lands, it is within a voxel of the surface.
                let p = [oi[0] + t * di[0], oi[1] + t * di[1], oi[2] + t * di[2]];
                let sd = exact.distance(p);
                // A hit at 0 is a start inside (or within a voxel of) a solid.
                let ok = if t == 0.0 { sd <= VOXEL } else { sd.abs() <= VOXEL };
                assert!(ok, "{name} ray {i}: hit at {t} is {sd} m from the surface");
            } else {
                assert_eq!((h, t), (MISS, no_hit), "{name} ray {i}");
            }
            match hit_t {
                Some(te) if ex.depth > -0.5 * VOXEL => {
                    // The ray only nicks a solid (less than half a voxel deep), below the grid's
                    // resolution: a miss, or a hit anywhere within a voxel of the surface.
                    if h == HIT && (t - te).abs() <= VOXEL {
                        within = 1;
                    } else {
                        grazing = 1;
                    }
                }
                Some(te) => {
                    // A real hit: never a miss, never beyond the exact hit by more than a voxel
                    // unless the ray runs nearly along the surface (it gets less than ¼ voxel
                    // deep in the voxel after entering: incidence below ~15°), where a
                    // sub-voxel error of the field moves the hit far along the ray.
                    let p = [oi[0] + (te + VOXEL) * di[0], oi[1] + (te + VOXEL) * di[1], oi[2] + (te + VOXEL) * di[2]];
                    let steep = te == 0.0 || exact.distance(p) < -0.25 * VOXEL;
                    assert!(
                        h == HIT && (t <= te + VOXEL || !steep),
                        "{name} ray {i}: exact hit at {te} (depth {}), cast ({t}, {h}); o {oi:?} d {di:?}",
                        ex.depth
                    );
                    if (t - te).abs() <= VOXEL {
                        within = 1;
                    } else {
                        grazing = 1;
                        // Otherwise the ray either runs along a surface, or passes within a voxel
                        // of one before its hit (an early hit there is within a voxel of a
                        // surface, checked above), or starts within a voxel of one.
                        let clear = ex.clearance > VOXEL && start > VOXEL;
                        assert!(
                            !(steep && clear),
                            "{name} ray {i}: exact hit at {te}, cast at {t}; o {oi:?} d {di:?}"
                        );
                    }
                }
                None => {
                    miss = 1;
                    if min_sdf > 1.25 * VOXEL {
                        assert_eq!(
                            (h, t),
                            (MISS, no_hit),
                            "{name} ray {i}: misses every surface by {min_sdf} m; o {oi:?} d {di:?}"
                        );
                    }
                    if h == MISS {
                        within = 1;
                    }
                }
            }
            // Rays starting within a voxel of a surface may legitimately report 0.
            let counted = u8::from(start.abs() > VOXEL);
            (within * counted, inside, grazing, miss, h, counted)
        })
        .collect();
    let sum = |f: fn(&Outcome) -> u8| results.iter().map(|r| f(r) as usize).sum::<usize>();
    let within = sum(|r| r.0);
    let counted = sum(|r| r.5);
    let inside = sum(|r| r.1);
    let misses = sum(|r| r.3);
    let hits = c.hit.iter().filter(|&&h| h == HIT).count();
    let mean_steps = c.steps.iter().map(|&s| s as f64).sum::<f64>() / n as f64;
    eprintln!(
        "{name}: {n} rays, {hits} hits, {misses} exact misses, {inside} inside starts, \
         {within} of {counted} starting clear of surfaces within 1 voxel ({:.4}), mean steps \
         {mean_steps:.1}",
        within as f64 / counted as f64
    );
    assert!(
        inside > 0 || name == "plane" || name == "room",
        "{name}: no ray started inside"
    );
    assert!(
        within as f64 >= 0.99 * counted as f64,
        "{name}: only {within} of {counted} within a voxel"
    );
}

#[test]
fn sphere_oracle() {
    check_oracle("sphere", sphere(), 100_000);
}

#[test]
fn box_oracle() {
    check_oracle("box", boxed(IDENTITY), 100_000);
}

#[test]
fn rotated_box_oracle() {
    check_oracle("rotated box", boxed(from_euler(0.61, 0.37, -0.23)), 100_000);
}

#[test]
fn plane_oracle() {
    check_oracle("plane", plane(), 100_000);
}

#[test]
fn room_oracle() {
    check_oracle("room", room(), 100_000);
}

/// Walls one voxel thick at random orientations: rays aimed at a wall's middle from either side
/// always hit it, never later than a voxel past the exact hit.
#[test]
fn thin_walls_are_not_tunnelled() {
    let mut rng = LaneRng::new(5, 0, 0, 7);
    let mut checked = 0;
    for w in 0..12 {
        let rotation = from_euler(
            rng.range(-3.1, 3.1),
            rng.range(-1.5, 1.5),
            rng.range(-3.1, 3.1),
        );
        let center = [
            rng.range(-0.5, 0.5),
            rng.range(-0.5, 0.5),
            rng.range(-0.5, 0.5),
        ];
        let wall = vec![Primitive::union(Shape::Box {
            center: center.into(),
            rotation,
            half_extents: Vec3::new(2.0, 2.0, 0.5 * VOXEL),
        })];
        let s = scene(wall);
        let exact = CompiledScene::new(&s.primitives).unwrap();
        let pool = pool(std::slice::from_ref(&s));
        let axes = quat_axes(rotation);
        let n = 2000;
        let mut o = Vec::with_capacity(n);
        let mut d = Vec::with_capacity(n);
        for _ in 0..n {
            // A target on the wall's middle plane, away from its rim; a start 1–3 m off the wall.
            let (u, v) = (rng.range(-1.5, 1.5), rng.range(-1.5, 1.5));
            let target: [f32; 3] =
                std::array::from_fn(|a| center[a] + u * axes[0][a] + v * axes[1][a]);
            let side = if rng.unit() < 0.5 { 1.0 } else { -1.0 };
            let off = rng.range(1.0, 3.0);
            // Incidence between 0° and ~70° from the normal.
            let (a, b) = (rng.range(-1.2, 1.2), rng.range(-1.2, 1.2));
            let start: [f32; 3] = std::array::from_fn(|k| {
                target[k] + off * (side * axes[2][k] + 0.5 * a * axes[0][k] + 0.5 * b * axes[1][k])
            });
            let dir: [f32; 3] = std::array::from_fn(|k| target[k] - start[k]);
            let l = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt();
            o.push(start);
            d.push(dir.map(|x| x / l));
        }
        let c = cast(
            &pool,
            RayEnvs::Blocks { rays_per_env: n },
            &o,
            &d,
            &CastOptions::new(50.0),
            &Launch::new(),
        );
        for i in 0..n {
            if o[i]
                .iter()
                .any(|&x| !(ORIGIN[0] + VOXEL..ORIGIN[0] + SIZE_M - VOXEL).contains(&x))
            {
                continue;
            }
            let ex = exact_hit(&exact, o[i], d[i], domain_exit(o[i], d[i]));
            let te = ex.hit.expect("aimed at the wall");
            assert!(
                c.hit[i] == HIT && c.distance[i] <= te + VOXEL,
                "wall {w} ray {i}: exact {te}, cast ({}, {}); o {:?} d {:?} rot {rotation:?} c {center:?}",
                c.distance[i],
                c.hit[i],
                o[i],
                d[i]
            );
            checked += 1;
        }
    }
    assert!(checked > 15_000, "only {checked} rays inside the domain");
}

fn four_envs() -> (Vec<EnvScene>, ScenePool) {
    let scenes = vec![
        scene(sphere()),
        scene(boxed(from_euler(0.3, 0.2, 0.1))),
        scene(room()),
        scene(plane()),
    ];
    let pool = pool(&scenes);
    (scenes, pool)
}

#[test]
fn one_call_over_envs_equals_one_call_per_env() {
    let (_, pool) = four_envs();
    let n = 20_000;
    let (o, d) = random_rays(n, 11);
    let mut rng = LaneRng::new(3, 0, 0, 1);
    let env: Vec<u32> = (0..n).map(|_| rng.below(4)).collect();
    let opts = CastOptions::new(20.0);
    let all = cast(&pool, RayEnvs::PerRay(&env), &o, &d, &opts, &Launch::new());
    for e in 0..4u32 {
        let idx: Vec<usize> = (0..n).filter(|&i| env[i] == e).collect();
        let oe: Vec<_> = idx.iter().map(|&i| o[i]).collect();
        let de: Vec<_> = idx.iter().map(|&i| d[i]).collect();
        let ones = vec![e; idx.len()];
        let single = cast(
            &pool,
            RayEnvs::PerRay(&ones),
            &oe,
            &de,
            &opts,
            &Launch::new(),
        );
        for (j, &i) in idx.iter().enumerate() {
            assert_eq!(
                all.distance[i].to_bits(),
                single.distance[j].to_bits(),
                "ray {i}"
            );
            assert_eq!(
                (all.hit[i], all.steps[i]),
                (single.hit[j], single.steps[j]),
                "ray {i}"
            );
        }
    }
    // Blocks layout: env e owns rays e·K..(e+1)·K.
    let k = n / 4;
    let blocks = cast(
        &pool,
        RayEnvs::Blocks { rays_per_env: k },
        &o,
        &d,
        &opts,
        &Launch::new(),
    );
    let env_blocks: Vec<u32> = (0..n).map(|i| (i / k) as u32).collect();
    let per_ray = cast(
        &pool,
        RayEnvs::PerRay(&env_blocks),
        &o,
        &d,
        &opts,
        &Launch::new(),
    );
    assert_eq!(
        blocks
            .distance
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>(),
        per_ray
            .distance
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    );
    // Different envs really see different scenes.
    assert!((0..k).any(|i| blocks.hit[i] != blocks.hit[i + k]));
}

#[test]
fn results_do_not_depend_on_threads() {
    let (_, pool) = four_envs();
    let n = 20_000;
    let (o, d) = random_rays(n, 12);
    let opts = CastOptions::new(20.0);
    let env: Vec<u32> = (0..n as u32).map(|i| i % 4).collect();
    let one = cast(
        &pool,
        RayEnvs::PerRay(&env),
        &o,
        &d,
        &opts,
        &Launch::with_threads(1).unwrap(),
    );
    let two = cast(
        &pool,
        RayEnvs::PerRay(&env),
        &o,
        &d,
        &opts,
        &Launch::with_threads(2).unwrap(),
    );
    assert_eq!(
        one.distance.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        two.distance.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(one.hit, two.hit);
    assert_eq!(one.steps, two.steps);
}

#[test]
fn contract_edge_cases() {
    let (_, pool) = four_envs();
    let opts = CastOptions {
        max_distance: 10.0,
        no_hit_value: -1.0,
        max_steps: 1024,
    };
    let rays: Vec<([f32; 3], [f32; 3], &str)> = vec![
        ([0.3, -0.2, 0.1], [1.0, 0.0, 0.0], "inside the sphere"),
        ([3.5, 3.5, 3.5], [1.0, 1.0, 1.0], "away from the sphere"),
        ([f32::NAN, 0.0, 0.0], [1.0, 0.0, 0.0], "NaN origin"),
        ([3.5, 0.0, 0.0], [0.0, 0.0, 0.0], "zero direction"),
        (
            [3.5, 0.0, 0.0],
            [f32::INFINITY, 0.0, 0.0],
            "infinite direction",
        ),
        (
            [3.5, -0.2, 0.1],
            [-2.0, 0.0, 0.0],
            "towards the sphere, unnormalised",
        ),
        (
            [-20.0, -0.2, 0.1],
            [1.0, 0.0, 0.0],
            "from outside the domain, 10 m short",
        ),
        (
            [-9.0, -0.2, 0.1],
            [1.0, 0.0, 0.0],
            "from outside the domain",
        ),
    ];
    let o: Vec<_> = rays.iter().map(|r| r.0).collect();
    let d: Vec<_> = rays.iter().map(|r| r.1).collect();
    let env = vec![0u32; rays.len()];
    let c = cast(&pool, RayEnvs::PerRay(&env), &o, &d, &opts, &Launch::new());
    let expect = |i: usize, dist: f32, hit: u8| {
        assert_eq!(c.hit[i], hit, "{}", rays[i].2);
        assert!(
            (c.distance[i] - dist).abs() <= VOXEL,
            "{}: {} vs {dist}",
            rays[i].2,
            c.distance[i]
        );
    };
    expect(0, 0.0, HIT);
    assert_eq!(c.distance[0], 0.0);
    expect(1, -1.0, MISS);
    for (i, ray) in rays.iter().enumerate().take(5).skip(2) {
        assert_eq!(
            (c.distance[i], c.hit[i], c.steps[i]),
            (-1.0, MISS, 0),
            "{}",
            ray.2
        );
    }
    // Sphere surface at x = 0.3 + 2.1 = 2.4 along -x from 3.5: 1.1 m.
    expect(5, 1.1, HIT);
    expect(6, -1.0, MISS);
    // From x = -9 the sphere's near side is at 0.3 - 2.1 = -1.8: 7.2 m.
    expect(7, 7.2, HIT);

    // A step budget of 1 ends a long ray with BUDGET.
    let tight = CastOptions {
        max_steps: 1,
        ..opts
    };
    let c = cast(
        &pool,
        RayEnvs::PerRay(&[0]),
        &[[-3.9, -3.9, -3.9]],
        &[[1.0, 0.0, 0.0]],
        &tight,
        &Launch::new(),
    );
    assert_eq!((c.hit[0], c.steps[0]), (BUDGET, 1));
}

#[test]
fn bad_arguments_are_errors() {
    let (_, pool) = four_envs();
    let view = pool.view();
    let o = [[0.0f32; 3]; 4];
    let d = [[1.0f32, 0.0, 0.0]; 4];
    let (mut dist, mut hit, mut steps) = ([0.0f32; 4], [0u8; 4], [0u32; 4]);
    let mut run = |envs: RayEnvs, opts: CastOptions, n: usize| {
        cast_rays(
            &view,
            envs,
            &o[..n],
            &d[..4],
            &opts,
            RayOutputs {
                distance: &mut dist[..n],
                hit: &mut hit[..n],
                steps: &mut steps[..n],
            },
            &Launch::new(),
        )
        .unwrap_err()
        .to_string()
    };
    let ok = CastOptions::new(5.0);
    assert!(run(RayEnvs::PerRay(&[0, 1, 2, 4]), ok, 4).contains("env_of_ray[3] = 4"));
    assert!(run(RayEnvs::PerRay(&[0, 1]), ok, 4).contains("env_of_ray has 2 entries"));
    assert!(run(RayEnvs::Blocks { rays_per_env: 3 }, ok, 4).contains("rays_per_env = 3"));
    assert!(run(RayEnvs::Blocks { rays_per_env: 0 }, ok, 4).contains("rays_per_env = 0"));
    assert!(run(RayEnvs::PerRay(&[0; 4]), CastOptions::new(f32::NAN), 4).contains("max_distance"));
    assert!(run(RayEnvs::PerRay(&[0; 3]), ok, 3).contains("differ in length"));
}

#[test]
fn stored_field_matches_the_exact_one_in_the_band() {
    let (scenes, pool) = four_envs();
    let view = pool.view();
    let mut rng = LaneRng::new(1, 2, 3, 4);
    for (e, s) in scenes.iter().enumerate() {
        let exact = CompiledScene::new(&s.primitives).unwrap();
        for _ in 0..20_000 {
            let p = [0, 1, 2].map(|_| rng.range(ORIGIN[0] + VOXEL, ORIGIN[0] + SIZE_M - VOXEL));
            let truth = exact.distance(p);
            let stored = sdf_at(&view, e, p).unwrap();
            if truth.abs() < 3.0 * VOXEL {
                assert!(
                    (stored - truth).abs() <= VOXEL,
                    "env {e} at {p:?}: {stored} vs {truth}"
                );
            }
            if truth.abs() > VOXEL {
                assert_eq!(
                    stored < 0.0,
                    truth < 0.0,
                    "env {e} at {p:?}: {stored} vs {truth}"
                );
            }
        }
    }
    assert_eq!(sdf_at(&view, 9, [0.0; 3]), None);
    assert_eq!(sdf_at(&view, 0, [99.0, 0.0, 0.0]), None);
}

#[test]
fn camera_sees_a_wall_at_its_depth() {
    // A wall at x = 2 facing -x; the camera at x = -1 looks along +x.
    let wall = vec![Primitive::union(Shape::Plane {
        normal: Vec3::new(-1.0, 0.0, 0.0),
        offset: -2.0,
    })];
    let pool = pool(&[scene(wall.clone()), scene(wall)]);
    let cam = PinholeCamera::new(16, 12, 1.2).unwrap();
    let k = cam.rays_per_env();
    // Env 1's body is 0.5 m further back; both cameras are mounted 0.25 m ahead of the body.
    let bodies = [
        Pose {
            position: Vec3::from([-1.25, 0.0, 0.0]),
            rotation: IDENTITY,
        },
        Pose {
            position: Vec3::from([-1.75, 0.1, 0.2]),
            rotation: IDENTITY,
        },
    ];
    let mount = Pose {
        position: Vec3::from([0.25, 0.0, 0.0]),
        rotation: IDENTITY,
    };
    let mut o = vec![[0.0; 3]; 2 * k];
    let mut d = vec![[0.0; 3]; 2 * k];
    cam.rays(&bodies, &mount, &mut o, &mut d).unwrap();
    let opts = CastOptions::new(10.0);
    let mut c = cast(
        &pool,
        RayEnvs::Blocks { rays_per_env: k },
        &o,
        &d,
        &opts,
        &Launch::new(),
    );
    cam.distance_to_depth(&mut c.distance, opts.no_hit_value)
        .unwrap();
    for i in 0..2 * k {
        let want = if i < k { 3.0 } else { 3.5 };
        assert_eq!(c.hit[i], HIT);
        assert!(
            (c.distance[i] - want).abs() < 0.02,
            "pixel {i}: depth {}",
            c.distance[i]
        );
    }
    // Buffers of the wrong size are an error.
    assert!(cam.rays(&bodies, &mount, &mut o[..k], &mut d[..k]).is_err());
}

#[test]
fn lidar_ring_in_a_spherical_cavity_reads_the_radius() {
    let cavity = vec![
        Primitive::union(Shape::Box {
            center: Vec3::ZERO,
            rotation: IDENTITY,
            half_extents: Vec3::splat(3.9),
        }),
        Primitive::subtract(Shape::Sphere {
            center: Vec3::new(0.5, 0.0, 0.0),
            radius: 3.0,
        }),
    ];
    let pool = pool(&[scene(cavity)]);
    let lidar = LidarRing {
        channels: 5,
        samples: 90,
        elevation_min: -0.4,
        elevation_max: 0.4,
    };
    let k = lidar.rays_per_env();
    let mut o = vec![[0.0; 3]; k];
    let mut d = vec![[0.0; 3]; k];
    // Mounted at the sphere's centre, upside down (a 180° roll): ranges are the radius anyway.
    let body = Pose {
        position: Vec3::from([0.5, 0.0, -0.3]),
        rotation: IDENTITY,
    };
    let mount = Pose {
        position: Vec3::from([0.0, 0.0, 0.3]),
        rotation: from_euler(0.0, 0.0, std::f32::consts::PI),
    };
    lidar.rays(&[body], &mount, &mut o, &mut d).unwrap();
    assert!(o
        .iter()
        .all(|p| (p[0] - 0.5).abs() < 1e-6 && p[2].abs() < 1e-6));
    let c = cast(
        &pool,
        RayEnvs::Blocks { rays_per_env: k },
        &o,
        &d,
        &CastOptions::new(10.0),
        &Launch::new(),
    );
    for i in 0..k {
        assert_eq!(c.hit[i], HIT);
        assert!(
            (c.distance[i] - 3.0).abs() < VOXEL,
            "beam {i}: {}",
            c.distance[i]
        );
    }
    assert!(LidarRing {
        channels: 0,
        ..lidar
    }
    .local_dirs()
    .is_err());
}

#[test]
fn look_at_points_the_camera() {
    let pose = Pose::look_at(Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 6.0, 3.0));
    let fwd = pose.apply_dir(Vec3::from([1.0, 0.0, 0.0]));
    assert!((fwd[0] - 0.6).abs() < 1e-5 && (fwd[1] - 0.8).abs() < 1e-5 && fwd[2].abs() < 1e-5);
    let up = pose.apply_dir(Vec3::from([0.0, 0.0, 1.0]));
    assert!((up[2] - 1.0).abs() < 1e-5);
    let down =
        Pose::look_at(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0)).apply_dir(Vec3::from([1.0, 0.0, 0.0]));
    assert!((down[2] + 1.0).abs() < 1e-5);
}

/// A ray grazing a plane walks many cells near it: under every step budget it stops at or
/// before the hit, with the budget spent (`BUDGET`, steps = budget) or with the full run's own
/// result, and more budget never moves it back.
#[test]
fn grazing_walk_respects_the_step_budget() {
    let pool = pool(&[scene(plane())]);
    let n = {
        let n = [0.3f32, -0.2, 1.0];
        let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        Vec3::new(n[0] / l, n[1] / l, n[2] / l)
    };
    // A tangent of the plane, and a start 0.6 voxel above it descending 1 in 25.
    let tangent = n.cross(Vec3::Y);
    let tangent = tangent / tangent.length();
    let origin = n * -0.7 + n * (0.6 * VOXEL) - tangent * 1.0;
    let dir = tangent - n * 0.04;
    let o = [origin.to_array()];
    let d = [dir.to_array()];
    let full_opts = CastOptions {
        max_distance: 20.0,
        no_hit_value: -1.0,
        max_steps: 4096,
    };
    let full = cast(
        &pool,
        RayEnvs::PerRay(&[0]),
        &o,
        &d,
        &full_opts,
        &Launch::new(),
    );
    assert_eq!(full.hit[0], HIT);
    // The plane is 0.6 voxel away at a slope of 0.04: 15 voxels along the ray.
    let expected = 0.6 * VOXEL * dir.length() / 0.04;
    assert!(
        (full.distance[0] - expected).abs() < 2.0 * VOXEL / 0.04,
        "{} vs {expected}",
        full.distance[0]
    );
    assert!(
        full.steps[0] > 8,
        "a grazing ray walks cells: {}",
        full.steps[0]
    );
    let mut last = 0.0f32;
    for budget in 1..=full.steps[0] + 2 {
        let opts = CastOptions {
            max_steps: budget,
            ..full_opts
        };
        let c = cast(&pool, RayEnvs::PerRay(&[0]), &o, &d, &opts, &Launch::new());
        if c.hit[0] == BUDGET {
            assert_eq!(c.steps[0], budget, "budget {budget}");
            assert!(c.distance[0] <= full.distance[0], "budget {budget}");
            assert!(
                c.distance[0] >= last,
                "budget {budget}: {} < {last}",
                c.distance[0]
            );
            last = c.distance[0];
        } else {
            assert_eq!(
                (c.distance[0].to_bits(), c.hit[0], c.steps[0]),
                (full.distance[0].to_bits(), full.hit[0], full.steps[0]),
                "budget {budget}"
            );
        }
    }
}
