//! Voxelisation against analytic oracles (sphere, box, rotated box, plane, a small room, a gate
//! frame): every stored sample within one voxel of the exact distance in the truncation band,
//! correctly signed everywhere (bricks and uniform boxes); culling changes nothing; uniform
//! bounds are conservative; sharing across envs; fast sweeping from occupancy.

use trackgen::exec::Launch;
use trackgen::geom::{from_euler, Vec2, Vec3, IDENTITY};
use trackgen::scene::dag::{
    ref_kind, uniform_bound, KIND_BRICK, KIND_INSIDE, KIND_NODE, KIND_OUTSIDE,
};
use trackgen::scene::CompiledScene;
use trackgen::scene::{
    build_pool, from_occupancy, EnvScene, PoolBuilder, PoolInfo, PoolView, Primitive, Shape,
};

const RES: u32 = 64;

fn scene(prims: Vec<Primitive>) -> EnvScene {
    EnvScene {
        origin: Vec3::new(-4.0, -4.0, -4.0),
        size_m: 8.0,
        spawn: Vec3::ZERO,
        primitives: prims,
    }
}

fn oracles() -> Vec<(&'static str, Vec<Primitive>)> {
    vec![
        (
            "sphere",
            vec![Primitive::union(Shape::Sphere {
                center: Vec3::new(0.3, -0.2, 0.1),
                radius: 2.1,
            })],
        ),
        (
            "box",
            vec![Primitive::union(Shape::Box {
                center: Vec3::new(0.2, 0.1, -0.3),
                rotation: IDENTITY,
                half_extents: Vec3::new(2.3, 1.4, 0.9),
            })],
        ),
        (
            "rotated box",
            vec![Primitive::union(Shape::Box {
                center: Vec3::new(0.2, 0.1, -0.3),
                rotation: from_euler(0.61, 0.37, -0.23),
                half_extents: Vec3::new(2.3, 1.4, 0.9),
            })],
        ),
        (
            "plane",
            vec![Primitive::union(Shape::Plane {
                normal: Vec3::new(0.28, -0.19, 0.94),
                offset: -0.7,
            })],
        ),
        (
            "room",
            vec![
                Primitive::union(Shape::Box {
                    center: Vec3::ZERO,
                    rotation: IDENTITY,
                    half_extents: Vec3::new(3.2, 2.7, 1.6),
                }),
                Primitive::subtract(Shape::Box {
                    center: Vec3::ZERO,
                    rotation: IDENTITY,
                    half_extents: Vec3::new(3.0, 2.5, 1.4),
                }),
                Primitive::union(Shape::Box {
                    center: Vec3::new(0.7, -0.4, -1.0),
                    rotation: IDENTITY,
                    half_extents: Vec3::new(0.6, 0.4, 0.4),
                }),
            ],
        ),
        (
            "gate",
            vec![Primitive::union(Shape::GateFrame {
                center: Vec3::new(0.0, 0.0, 0.5),
                rotation: from_euler(0.4, 0.0, 0.2),
                outer_half: Vec2::new(2.0, 1.5),
                inner_half: Vec2::new(1.6, 1.1),
                half_depth: 0.15,
            })],
        ),
    ]
}

/// Every voxel centre's stored value against `exact` (voxels): within one voxel in the band,
/// the right sign everywhere; counts of voxels checked in bricks and in uniform boxes.
fn check_grid(view: &PoolView, env: usize, exact: &CompiledScene, name: &str) -> (usize, usize) {
    let e = view.envs()[env];
    let info = view.info();
    let t = info.truncation_vox;
    let (mut in_bricks, mut in_uniform) = (0, 0);
    for z in 0..RES {
        for y in 0..RES {
            for x in 0..RES {
                let p = [0, 1, 2].map(|a| e.origin[a] + ([x, y, z][a] as f32 + 0.5) * e.voxel_size);
                let truth = exact.distance(p) / e.voxel_size;
                let stored = view.sample(env, [x, y, z]);
                if truth.abs() > 1e-3 {
                    assert_eq!(
                        stored < 0.0,
                        truth < 0.0,
                        "{name} voxel {x},{y},{z}: stored {stored}, exact {truth}"
                    );
                }
                if truth.abs() < t - 1.0 {
                    assert!(
                        (stored - truth).abs() <= 1.0,
                        "{name} voxel {x},{y},{z}: stored {stored}, exact {truth}"
                    );
                    // Away from CSG seams the codes are exact to half a step.
                    assert!(
                        (stored - truth).abs() <= info.quant_step() || name == "room",
                        "{name}: {stored} vs {truth}"
                    );
                }
                let (r, _, _) = leaf_of(view, env, [x, y, z]);
                if ref_kind(r) == KIND_BRICK {
                    in_bricks += 1;
                } else {
                    in_uniform += 1;
                    // A uniform box's bound never exceeds the true distance.
                    assert!(
                        uniform_bound(r) <= truth.abs() + 1e-3,
                        "{name}: bound {} > {truth}",
                        uniform_bound(r)
                    );
                    assert!(
                        truth.abs() >= t - 1.0,
                        "{name}: uniform voxel only {truth} from a surface"
                    );
                }
            }
        }
    }
    (in_bricks, in_uniform)
}

fn leaf_of(view: &PoolView, env: usize, v: [u32; 3]) -> (u32, [u32; 3], u32) {
    let mut r = view.envs()[env].root;
    let mut min = [0u32; 3];
    let mut size = view.info().resolution;
    while ref_kind(r) == KIND_NODE {
        let n = &view.nodes()[(r & 0x3fff_ffff) as usize];
        size /= 2;
        let mut c = 0;
        for a in 0..3 {
            if v[a] >= min[a] + size {
                min[a] += size;
                c |= 1 << a;
            }
        }
        r = n.children[c];
    }
    (r, min, size)
}

#[test]
fn analytic_oracles_within_a_voxel_and_signed() {
    for (name, prims) in oracles() {
        let s = scene(prims);
        let exact = CompiledScene::new(&s.primitives).unwrap();
        let pool = build_pool(std::slice::from_ref(&s), RES, 4.0, &Launch::new()).unwrap();
        let (bricks, uniform) = check_grid(&pool.view(), 0, &exact, name);
        assert!(
            bricks > 0 && uniform > 0,
            "{name}: {bricks} brick voxels, {uniform} uniform"
        );
    }
}

#[test]
fn culling_changes_no_code() {
    // Many far-apart spheres: each brick sees only its neighbours; compare with one-sphere pools.
    let spheres: Vec<Primitive> = (0..27)
        .map(|i| {
            let c = [
                (i % 3) as f32 * 2.5 - 2.5,
                ((i / 3) % 3) as f32 * 2.5 - 2.5,
                (i / 9) as f32 * 2.5 - 2.5,
            ];
            Primitive::union(Shape::Sphere {
                center: c.into(),
                radius: 0.6 + 0.02 * i as f32,
            })
        })
        .collect();
    let s = scene(spheres);
    let exact = CompiledScene::new(&s.primitives).unwrap();
    let pool = build_pool(std::slice::from_ref(&s), RES, 4.0, &Launch::new()).unwrap();
    let view = pool.view();
    let q = view.info().quant_step();
    for z in 0..RES {
        for y in 0..RES {
            for x in 0..RES {
                let e = view.envs()[0];
                let p = [0, 1, 2].map(|a| e.origin[a] + ([x, y, z][a] as f32 + 0.5) * e.voxel_size);
                let truth = (exact.distance(p) / e.voxel_size).clamp(-4.0, 4.0);
                let stored = view.sample(0, [x, y, z]);
                // Nearest code, or one step more negative for tiny negative distances (codes keep the sign).
                assert!(
                    (stored - truth).abs() <= q + 1e-4,
                    "voxel {x},{y},{z}: {stored} vs {truth}"
                );
            }
        }
    }
}

#[test]
fn identical_envs_share_everything_and_counts_add_up() {
    let s = scene(oracles()[2].1.clone());
    let one = build_pool(std::slice::from_ref(&s), RES, 4.0, &Launch::new()).unwrap();
    let many = build_pool(&vec![s; 5], RES, 4.0, &Launch::new()).unwrap();
    assert_eq!(one.view().nodes().len(), many.view().nodes().len());
    assert_eq!(one.view().bricks().len(), many.view().bricks().len());
    assert!(many
        .view()
        .envs()
        .iter()
        .all(|e| e.root == many.view().envs()[0].root));
    let st = many.stats();
    assert_eq!(st.env_bricks, 5 * st.bricks);
    assert!((st.ratio() - 5.0).abs() < 1e-9);
    // Breadth-first: children after parents, levels non-increasing.
    let nodes = many.view().nodes();
    for (i, n) in nodes.iter().enumerate() {
        for &c in &n.children {
            if ref_kind(c) == KIND_NODE {
                assert!((c & 0x3fff_ffff) as usize > i);
            }
        }
        if i > 0 {
            assert!(n.level() <= nodes[i - 1].level());
        }
    }
}

#[test]
fn empty_and_solid_envs_are_one_uniform_root() {
    let empty = scene(vec![]);
    let solid = scene(vec![Primitive::union(Shape::Box {
        center: Vec3::ZERO,
        rotation: IDENTITY,
        half_extents: Vec3::splat(9.0),
    })]);
    let pool = build_pool(&[empty, solid], RES, 4.0, &Launch::new()).unwrap();
    let v = pool.view();
    assert_eq!(ref_kind(v.envs()[0].root), KIND_OUTSIDE);
    assert_eq!(ref_kind(v.envs()[1].root), KIND_INSIDE);
    assert!(v.nodes().is_empty() && v.bricks().is_empty());
}

#[test]
fn bad_scenes_and_parameters_are_errors() {
    let bad = scene(vec![Primitive::union(Shape::Sphere {
        center: Vec3::ZERO,
        radius: f32::NAN,
    })]);
    let err = build_pool(&[scene(vec![]), bad], RES, 4.0, &Launch::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("env 1") && err.contains("radius"), "{err}");
    assert!(PoolInfo::new(100, 4.0)
        .unwrap_err()
        .to_string()
        .contains("resolution 100"));
    assert!(PoolInfo::new(64, 1.0)
        .unwrap_err()
        .to_string()
        .contains("truncation"));
    let mut s = scene(vec![]);
    s.size_m = -1.0;
    assert!(build_pool(&[s], RES, 4.0, &Launch::new()).is_err());
}

#[test]
fn fast_sweeping_is_within_one_and_a_half_voxels() {
    let r = RES as usize;
    let h = 8.0 / RES as f32;
    let origin = [-4.0f32; 3];
    let shapes = [oracles()[0].1.clone(), oracles()[2].1.clone()];
    for prims in shapes {
        let exact = CompiledScene::new(&prims).unwrap();
        let centre = |x: usize, y: usize, z: usize| {
            [
                origin[0] + (x as f32 + 0.5) * h,
                origin[1] + (y as f32 + 0.5) * h,
                origin[2] + (z as f32 + 0.5) * h,
            ]
        };
        let mut occ = vec![0u8; r * r * r];
        for z in 0..r {
            for y in 0..r {
                for x in 0..r {
                    occ[x + r * (y + r * z)] = u8::from(exact.distance(centre(x, y, z)) < 0.0);
                }
            }
        }
        let field = from_occupancy(&occ, RES, origin, h, [0.0; 3]).unwrap();
        let mut worst = 0.0f32;
        for z in 0..r {
            for y in 0..r {
                for x in 0..r {
                    let truth = exact.distance(centre(x, y, z));
                    let got = field.values[x + r * (y + r * z)];
                    assert_eq!(got < 0.0, truth < 0.0);
                    if truth.abs() < 4.0 * h {
                        worst = worst.max((got - truth).abs() / h);
                    }
                }
            }
        }
        assert!(worst <= 1.5, "fast sweeping off by {worst} voxels");
        // The field voxelises like primitives do.
        let mut b = PoolBuilder::new(PoolInfo::new(RES, 4.0).unwrap());
        b.add_dense(&field).unwrap();
        let pool = b.finish();
        assert!(!pool.view().bricks().is_empty());
        assert!(
            (pool.view().sample(0, [32, 32, 32])
                - (field.values[32 + r * (32 + r * 32)] / h).clamp(-4.0, 4.0))
            .abs()
                < 0.05
        );
    }
    assert!(from_occupancy(&[0; 10], RES, origin, h, [0.0; 3]).is_err());
    assert!(from_occupancy(&vec![0; r * r * r], RES, origin, 0.0, [0.0; 3]).is_err());
}
