//! The scene commands (`scene`, `raycast`, `preview-scene`, `bench-scene`) as the binary runs
//! them: files written, deterministic bytes, clear errors that write nothing.

use std::path::Path;

use trackgen::corpus::npy::{parse_header, Dtype, NpyWriter};
use trackgen::scene::cli::{
    bench_scene, preview_scene, raycast, scene, BenchSceneArgs, PreviewSceneArgs, RaycastArgs,
    SceneArgs,
};
use trackgen::scene::{import_json, SceneFile};

fn scene_args(dir: &Path, name: &str) -> SceneArgs {
    SceneArgs {
        preset: "rooms".into(),
        envs: 3,
        seed: 7,
        generation: 0,
        res: Some(32),
        threads: None,
        out: dir.join(name),
        primitives_json: Some(dir.join(format!("{name}.json"))),
    }
}

#[test]
fn scene_then_raycast_then_preview() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    scene(scene_args(d, "a.scene")).unwrap();
    // The same command again (other threads) writes the same bytes.
    scene(SceneArgs {
        threads: Some(1),
        ..scene_args(d, "b.scene")
    })
    .unwrap();
    assert_eq!(
        std::fs::read(d.join("a.scene")).unwrap(),
        std::fs::read(d.join("b.scene")).unwrap()
    );
    let json = std::fs::read_to_string(d.join("a.scene.json")).unwrap();
    assert_eq!(import_json(&json).unwrap().len(), 3);

    // Rays [2, 3, 6] from each env's spawn: forward, down at the floor, and a NaN ray.
    let file = SceneFile::open(&d.join("a.scene")).unwrap();
    let mut values = Vec::new();
    for e in 0..2 {
        let s = file.view().envs()[e].spawn;
        for dir in [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [f32::NAN, 0.0, 0.0]] {
            values.extend_from_slice(&s);
            values.extend_from_slice(&dir);
        }
    }
    let rays = d.join("rays.npy");
    let mut w = NpyWriter::create(&rays, Dtype::F4, &[2, 3, 6]).unwrap();
    w.append_f32(&values).unwrap();
    w.finish().unwrap();
    let out = d.join("depth.npy");
    raycast(RaycastArgs {
        file: d.join("a.scene"),
        rays: rays.clone(),
        out: out.clone(),
        max_distance: 50.0,
        no_hit_value: Some(-1.0),
        threads: Some(2),
    })
    .unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let header = parse_header(&bytes, &out).unwrap();
    assert_eq!(
        (header.dtype, header.shape.clone()),
        (Dtype::F4, vec![2, 3])
    );
    let depth: Vec<f32> = bytes[header.data_offset as usize..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for e in 0..2 {
        // Spawn points are 1.2 m above the floor.
        assert!(
            (depth[3 * e + 1] - 1.2).abs() < 0.5,
            "down ray of env {e}: {}",
            depth[3 * e + 1]
        );
        assert!(
            depth[3 * e] > 0.0,
            "forward ray of env {e}: {}",
            depth[3 * e]
        );
        assert_eq!(depth[3 * e + 2], -1.0);
    }

    let png = d.join("preview.png");
    preview_scene(PreviewSceneArgs {
        file: d.join("a.scene"),
        env: 1,
        out: png.clone(),
        slice_height: None,
        size: 64,
    })
    .unwrap();
    let img = image::open(&png).unwrap();
    assert_eq!((img.width(), img.height()), (64 * 4 / 3 + 4 + 64, 64));
}

#[test]
fn bad_input_is_an_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bad = |args: SceneArgs, needle: &str| {
        let err = scene(args).unwrap_err().to_string();
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    };
    bad(
        SceneArgs {
            envs: 0,
            ..scene_args(d, "x.scene")
        },
        "--envs 0",
    );
    bad(
        SceneArgs {
            res: Some(100),
            ..scene_args(d, "x.scene")
        },
        "--res 100",
    );
    bad(
        SceneArgs {
            preset: "no-such-scene".into(),
            ..scene_args(d, "x.scene")
        },
        "no built-in scene preset",
    );
    assert!(!d.join("x.scene").exists());

    scene(scene_args(d, "a.scene")).unwrap();
    // Rays of the wrong shape.
    let rays = d.join("rays.npy");
    let mut w = NpyWriter::create(&rays, Dtype::F4, &[1, 2, 3]).unwrap();
    w.append_f32(&[0.0; 6]).unwrap();
    w.finish().unwrap();
    let args = RaycastArgs {
        file: d.join("a.scene"),
        rays: rays.clone(),
        out: d.join("depth.npy"),
        max_distance: 10.0,
        no_hit_value: None,
        threads: None,
    };
    assert!(raycast(args.clone())
        .unwrap_err()
        .to_string()
        .contains("[E, K, 6]"));
    // More envs of rays than the file holds.
    std::fs::remove_file(&rays).unwrap();
    let mut w = NpyWriter::create(&rays, Dtype::F4, &[4, 1, 6]).unwrap();
    w.append_f32(&[0.0; 24]).unwrap();
    w.finish().unwrap();
    assert!(raycast(args.clone())
        .unwrap_err()
        .to_string()
        .contains("holds 3 envs"));
    assert!(!d.join("depth.npy").exists());
    // A corrupted scene file.
    let mut bytes = std::fs::read(d.join("a.scene")).unwrap();
    bytes[200] ^= 1;
    std::fs::write(d.join("bad.scene"), &bytes).unwrap();
    let err = raycast(RaycastArgs {
        file: d.join("bad.scene"),
        ..args
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("bad.scene") && err.contains("checksum"),
        "{err}"
    );
    let err = preview_scene(PreviewSceneArgs {
        file: d.join("a.scene"),
        env: 3,
        out: d.join("p.png"),
        slice_height: None,
        size: 32,
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("--env 3"), "{err}");
    assert!(!d.join("p.png").exists());
    assert!(bench_scene(BenchSceneArgs {
        res: vec![12],
        envs: 1,
        sdf_envs: 1,
        threads: 1,
        camera: 4,
        seed: 0
    })
    .unwrap_err()
    .to_string()
    .contains("--res 12"));
}

#[test]
fn bench_table_has_every_row() {
    let table = trackgen::scene::bench::bench_scene(&trackgen::scene::bench::BenchOptions {
        resolutions: vec![16],
        envs: 3,
        sdf_envs: 1,
        threads: 1,
        camera_px: 4,
        seed: 0,
    })
    .unwrap();
    for row in [
        "sdf ",
        "size ",
        "dedup ",
        "rays ",
        "objects rotated",
        "rooms#0 rotated 30deg",
    ] {
        assert!(table.contains(row), "table lacks {row:?}:\n{table}");
    }
}
