//! Scene presets and generation: parsing with precise errors, determinism per env (batch and
//! thread independent), the JSON export, and what each generator promises (a free spawn point,
//! the forest clearing).

use trackgen::exec::Launch;
use trackgen::scene::dag::PoolInfo;
use trackgen::scene::preset::{SceneKind, BUILTIN};
use trackgen::scene::CompiledScene;
use trackgen::scene::{
    build_preset, export_json, generate_env, import_json, PoolBuilder, ScenePreset, Shape,
};

#[track_caller]
fn preset_err(text: &str, needles: &[&str]) {
    let err = ScenePreset::parse(text, "test.toml")
        .unwrap_err()
        .to_string();
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
}

#[test]
fn builtin_presets_parse_and_resolve() {
    for (name, text) in BUILTIN {
        let p = ScenePreset::parse(text, name).unwrap();
        assert_eq!(p.kind_name(), *name);
        // The resolved TOML parses back to the same preset.
        let again = ScenePreset::parse(p.resolved_toml(), name).unwrap();
        assert_eq!(again.kind, p.kind);
        assert_eq!(again.hash(), p.hash());
        assert_eq!(p.hash().len(), 64);
    }
    assert_eq!(ScenePreset::load("rooms").unwrap().resolution, 128);
}

#[test]
fn bad_presets_name_key_value_and_expectation() {
    preset_err(
        "[scene]\nkind = \"rooms\"\nresolution = 100\n",
        &["scene.resolution", "100", "power of two"],
    );
    preset_err(
        "[scene]\nresolution = 1024\n",
        &["scene.resolution", "[8, 512]"],
    );
    preset_err(
        "[scene]\ntruncation_vox = 1\n",
        &["scene.truncation_vox", "[2, 16]"],
    );
    preset_err(
        "[scene]\nkind = \"gates\"\nsize_m = 20\n",
        &["scene.size_m", "track.scale_m"],
    );
    preset_err(
        "[scene]\nkind = \"gates\"\n[gates]\ncourse = \"f1\"\n",
        &["gates.course", "\"gates-indoor\""],
    );
    preset_err(
        "[scene]\nkind = \"gates\"\n[gates]\npillar_radius_min_m = 2\npillar_radius_max_m = 1\n",
        &["gates.pillar_radius_min_m"],
    );
    preset_err(
        "[scene]\nkind = \"cave\"\n",
        &["scene.kind", "\"rooms\", \"forest\""],
    );
    preset_err("[rooms]\ngrid = 0\n", &["rooms.grid", "[1, 12]"]);
    preset_err("[rooms]\ncolour = 3\n", &["unknown key `rooms.colour`"]);
    preset_err(
        "[forest]\ntrees = 3\n",
        &["unknown section [forest]", "scene.kind"],
    );
    preset_err("[lights]\n", &["unknown section [lights]"]);
    preset_err(
        "[rooms]\ngrid = 9\ncell_m = 3.5\n",
        &["rooms.grid", "scene.size_m"],
    );
    preset_err(
        "[rooms]\ndoor_height_m = 3.0\n",
        &["rooms.door_height_m", "rooms.wall_height_m"],
    );
    preset_err(
        "[rooms]\nceiling = 1\n",
        &["rooms.ceiling", "true or false"],
    );
    preset_err(
        "[scene]\nkind = \"forest\"\n[forest]\ntree_height_min_m = 9.5\n",
        &["forest.tree_height_min_m"],
    );
    preset_err("scene = 3", &["expected a table"]);
    preset_err("[scene", &["not valid TOML"]);
    let err = ScenePreset::load("no-such-scene").unwrap_err().to_string();
    assert!(err.contains("rooms, forest, gates"), "{err}");
}

/// The `gates` scene holds exactly the env's gate course (same seed, env, generation) as frames:
/// each opening's centre is free space, each frame bar is solid, and pillars keep out of the
/// flight corridor.
#[test]
fn gates_scene_matches_the_gate_course() {
    use trackgen::course::GatePipeline;
    use trackgen::scene::primitive::Shape;
    let preset = ScenePreset::load("gates").unwrap();
    let SceneKind::Gates(p) = &preset.kind else {
        panic!("the gates preset is of kind gates");
    };
    let (seed, generation, envs) = (5u64, 2u32, 6u64);
    let mut course = GatePipeline::new(&p.course_preset, envs as usize, Launch::new()).unwrap();
    let mut batch = course.new_batch(0).unwrap();
    course.generate(seed, generation, &mut batch).unwrap();
    for env in 0..envs {
        let scene = generate_env(&preset, seed, env, generation).unwrap();
        let e = env as usize;
        let n = batch.count[e] as usize;
        let frames = scene
            .primitives
            .iter()
            .filter(|q| matches!(q.shape, Shape::GateFrame { .. }))
            .count();
        assert_eq!(frames, n, "env {env}");
        let sdf = CompiledScene::new(&scene.primitives).unwrap();
        for g in 0..n {
            let pos = batch.pos[e * batch.g_max + g];
            let [w, h] = batch.size[e * batch.g_max + g].to_array();
            let open = sdf.distance(pos);
            assert!(
                open > 0.4 * w.min(h),
                "env {env} gate {g}: opening distance {open}"
            );
            // The top bar sits half a height (plus half a thickness) above the centre.
            let bar = [pos[0], pos[1], pos[2] + 0.5 * h + 0.5 * batch.thickness_m];
            assert!(
                sdf.distance(bar) <= 1e-3,
                "env {env} gate {g}: bar is not solid"
            );
        }
        for prim in &scene.primitives {
            if let Shape::Cylinder { center, radius, .. } = prim.shape {
                for g in 0..n {
                    let a = batch.pos[e * batch.g_max + g];
                    let b = batch.pos[e * batch.g_max + (g + 1) % n];
                    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
                    let len2 = dx * dx + dy * dy;
                    let t = (((center[0] - a[0]) * dx + (center[1] - a[1]) * dy) / len2)
                        .clamp(0.0, 1.0);
                    let d = ((center[0] - a[0] - t * dx).powi(2)
                        + (center[1] - a[1] - t * dy).powi(2))
                    .sqrt();
                    assert!(
                        d >= p.corridor_m + radius - 1e-3,
                        "env {env}: pillar in the corridor"
                    );
                }
            }
        }
        assert!(
            sdf.distance(scene.spawn) > 0.0,
            "env {env}: spawn inside a solid"
        );
    }
}

#[test]
fn an_env_is_a_pure_function_of_preset_seed_env_generation() {
    for name in ["rooms", "forest"] {
        let p = ScenePreset::load(name).unwrap();
        assert_eq!(
            generate_env(&p, 4, 17, 2).unwrap(),
            generate_env(&p, 4, 17, 2).unwrap()
        );
        assert_ne!(
            generate_env(&p, 4, 17, 2).unwrap(),
            generate_env(&p, 5, 17, 2).unwrap()
        );
        assert_ne!(
            generate_env(&p, 4, 17, 2).unwrap(),
            generate_env(&p, 4, 18, 2).unwrap()
        );
        assert_ne!(
            generate_env(&p, 4, 17, 2).unwrap(),
            generate_env(&p, 4, 17, 3).unwrap()
        );
        // Env 3 built in a batch of 6 holds the same field as env 3 built alone.
        let batch = build_preset(&p, 4, 0, 6, Some(32), &Launch::with_threads(2).unwrap()).unwrap();
        let mut alone = PoolBuilder::new(PoolInfo::new(32, p.truncation_vox).unwrap());
        alone
            .add_scenes(
                &[generate_env(&p, 4, 3, 0).unwrap()],
                &Launch::with_threads(1).unwrap(),
            )
            .unwrap();
        let alone = alone.finish();
        for z in 0..32 {
            for y in 0..32 {
                for x in 0..32 {
                    assert_eq!(
                        batch.view().sample(3, [x, y, z]).to_bits(),
                        alone.view().sample(0, [x, y, z]).to_bits()
                    );
                }
            }
        }
        assert_eq!(batch.view().envs()[3].spawn, alone.view().envs()[0].spawn);
    }
}

#[test]
fn spawn_points_are_free_and_scenes_are_inside_their_domain() {
    for name in ["rooms", "forest"] {
        let p = ScenePreset::load(name).unwrap();
        for e in 0..40 {
            let s = generate_env(&p, 1, e, 0).unwrap();
            let d = CompiledScene::new(&s.primitives).unwrap().distance(s.spawn);
            assert!(
                d > 0.3,
                "{name} env {e}: spawn {:?} only {d} m from a surface",
                s.spawn
            );
            for a in 0..3 {
                assert!(s.spawn[a] > s.origin[a] && s.spawn[a] < s.origin[a] + s.size_m);
            }
            if let SceneKind::Forest(f) = &p.kind {
                for prim in &s.primitives {
                    if let Shape::Cylinder { center, .. } = prim.shape {
                        let r = (center[0] * center[0] + center[1] * center[1]).sqrt();
                        assert!(
                            r >= f.clearing_radius_m - 1.0,
                            "{name} env {e}: trunk at {r} m"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn rooms_use_every_primitive_kind_they_promise() {
    let p = ScenePreset::load("rooms").unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    let mut subtract = 0;
    for e in 0..20 {
        for prim in generate_env(&p, 0, e, 0).unwrap().primitives {
            let json = serde_json::to_value(&prim).unwrap();
            kinds.insert(json["kind"].as_str().unwrap().to_string());
            subtract += usize::from(prim.op == trackgen::scene::Op::Subtract);
        }
    }
    for k in ["box", "rounded_box", "cylinder", "plane"] {
        assert!(kinds.contains(k), "{kinds:?}");
    }
    assert!(subtract > 0, "no door was cut");
}

#[test]
fn json_export_round_trips_with_the_documented_schema() {
    let p = ScenePreset::load("forest").unwrap();
    let scenes: Vec<_> = (5..8).map(|e| generate_env(&p, 2, e, 1).unwrap()).collect();
    let text = export_json(&scenes, 5, &p.source, &p.hash(), 2, 1);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["format"], "trackgen-scene-primitives");
    assert_eq!(doc["version"], 2);
    assert_eq!(doc["seed"], 2);
    assert_eq!(doc["generation"], 1);
    assert_eq!(doc["envs"][0]["env"], 5);
    let prim = &doc["envs"][0]["primitives"][1];
    assert!(
        prim["op"] == "union" && prim["kind"] == "cylinder",
        "{prim}"
    );
    for key in ["center", "rotation", "radius", "half_height"] {
        assert!(prim.get(key).is_some(), "cylinder lacks {key}: {prim}");
    }
    // Rotations are [x, y, z, w]: the trunk is tilted about a horizontal axis after its yaw, so
    // its rotation is the one the scene holds, scalar last.
    let Shape::Cylinder { rotation, .. } = &scenes[0].primitives[1].shape else {
        panic!("primitive 1 of a forest env is a trunk");
    };
    let json_rot: Vec<f32> = prim["rotation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(json_rot, rotation.to_array().to_vec());
    let old = text.replacen("\"version\": 2", "\"version\": 1", 1);
    let e = import_json(&old).unwrap_err().to_string();
    assert!(e.contains("version") && e.contains("[x, y, z, w]"), "{e}");
    let back = import_json(&text).unwrap();
    assert_eq!(back.len(), 3);
    for ((env, scene), (i, orig)) in back.iter().zip(scenes.iter().enumerate()) {
        assert_eq!(*env, 5 + i as u64);
        assert_eq!(scene, orig);
    }
    assert!(import_json("{\"format\": \"other\"}")
        .unwrap_err()
        .to_string()
        .contains("format"));
    assert!(import_json("[").is_err());
}
