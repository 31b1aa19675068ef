//! The scene commands (`scene`, `raycast`, `preview-scene`, `bench-scene`) as the binary runs
//! them: files written, deterministic bytes, clear errors that write nothing.

use std::path::Path;
use std::process::Output;

use trackgen::corpus::npy::{parse_header, Dtype, NpyWriter};
use trackgen::scene::{import_json, SceneFile};

use crate::cli::{assert_fails, assert_ok, stdout, trackgen};

/// `trackgen scene` of 3 `rooms` envs at R = 32 into `name` (+ `name.json`); `extra` flags
/// (`--flag value` pairs or lone flags) replace or add to those.
fn scene(dir: &Path, name: &str, extra: &[&str]) -> Output {
    let json = format!("{name}.json");
    let mut args = vec!["scene"];
    for (flag, value) in [
        ("--preset", "rooms"),
        ("--envs", "3"),
        ("--seed", "7"),
        ("--res", "32"),
        ("--out", name),
        ("--primitives-json", json.as_str()),
    ] {
        if !extra.contains(&flag) {
            args.extend([flag, value]);
        }
    }
    args.extend_from_slice(extra);
    trackgen(&args, dir)
}

#[test]
fn scene_then_raycast_then_preview() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_ok(&scene(d, "a.scene", &[]));
    // The same command again (other threads) writes the same bytes.
    assert_ok(&scene(d, "b.scene", &["--threads", "1"]));
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
    assert_ok(&trackgen(
        &[
            "raycast",
            "a.scene",
            "--rays",
            "rays.npy",
            "--out",
            "depth.npy",
            "--max-distance",
            "50",
            "--no-hit-value",
            "-1",
            "--threads",
            "2",
        ],
        d,
    ));
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
    assert_ok(&trackgen(
        &[
            "preview-scene",
            "a.scene",
            "--env",
            "1",
            "--out",
            "preview.png",
            "--size",
            "64",
        ],
        d,
    ));
    let img = image::open(&png).unwrap();
    assert_eq!((img.width(), img.height()), (64 * 4 / 3 + 4 + 64, 64));
}

#[test]
fn bad_input_is_an_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_fails(&scene(d, "x.scene", &["--envs", "0"]), 2, &["--envs 0"]);
    assert_fails(&scene(d, "x.scene", &["--res", "100"]), 2, &["--res 100"]);
    assert_fails(
        &scene(d, "x.scene", &["--preset", "no-such-scene"]),
        2,
        &["no built-in scene preset"],
    );
    assert!(!d.join("x.scene").exists());

    assert_ok(&scene(d, "a.scene", &[]));
    let raycast = |scene: &str| {
        trackgen(
            &[
                "raycast",
                scene,
                "--rays",
                "rays.npy",
                "--out",
                "depth.npy",
                "--max-distance",
                "10",
            ],
            d,
        )
    };
    // Rays of the wrong shape.
    let rays = d.join("rays.npy");
    let mut w = NpyWriter::create(&rays, Dtype::F4, &[1, 2, 3]).unwrap();
    w.append_f32(&[0.0; 6]).unwrap();
    w.finish().unwrap();
    assert_fails(&raycast("a.scene"), 2, &["[E, K, 6]"]);
    // More envs of rays than the file holds.
    std::fs::remove_file(&rays).unwrap();
    let mut w = NpyWriter::create(&rays, Dtype::F4, &[4, 1, 6]).unwrap();
    w.append_f32(&[0.0; 24]).unwrap();
    w.finish().unwrap();
    assert_fails(&raycast("a.scene"), 2, &["holds 3 envs"]);
    assert!(!d.join("depth.npy").exists());
    // A corrupted scene file.
    let mut bytes = std::fs::read(d.join("a.scene")).unwrap();
    bytes[200] ^= 1;
    std::fs::write(d.join("bad.scene"), &bytes).unwrap();
    assert_fails(&raycast("bad.scene"), 2, &["bad.scene", "checksum"]);
    assert_fails(
        &trackgen(
            &[
                "preview-scene",
                "a.scene",
                "--env",
                "3",
                "--out",
                "p.png",
                "--size",
                "32",
            ],
            d,
        ),
        2,
        &["--env 3"],
    );
    assert!(!d.join("p.png").exists());
    assert_fails(
        &trackgen(&["bench-scene", "--res", "12", "--envs", "1"], d),
        2,
        &["--res 12"],
    );
    assert_fails(
        &trackgen(&["bench-scene", "--rows", "rays,speed"], d),
        2,
        &["--rows speed", "sdf,size,dedup,rays"],
    );
    assert_fails(
        &trackgen(&["bench-scene", "--ray-presets", "gates,tunnel"], d),
        2,
        &["--ray-presets tunnel", "rooms,gates,forest"],
    );
}

#[test]
fn bench_table_runs_only_the_rows_asked() {
    let dir = tempfile::tempdir().unwrap();
    let o = trackgen(
        &[
            "bench-scene",
            "--rows",
            "rays",
            "--res",
            "16",
            "--envs",
            "2",
            "--camera",
            "4",
        ],
        dir.path(),
    );
    assert_ok(&o);
    let table = stdout(&o);
    for scene in ["rooms x2", "gates x2", "forest x2"] {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("rays ") && l.contains(scene)),
            "no ray row for {scene}:\n{table}"
        );
    }
    for row in ["sdf ", "size ", "dedup ", "random "] {
        assert!(!table.contains(row), "table has {row:?}:\n{table}");
    }
}

#[test]
fn bench_table_has_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let o = trackgen(
        &[
            "bench-scene",
            "--res",
            "16",
            "--envs",
            "3",
            "--sdf-envs",
            "1",
            "--threads",
            "1",
            "--camera",
            "4",
        ],
        dir.path(),
    );
    assert_ok(&o);
    let table = stdout(&o);
    for row in [
        "sdf ",
        "size ",
        "dedup ",
        "rays ",
        "random ",
        "objects rotated",
        "rooms#0 rotated 30deg",
    ] {
        assert!(table.contains(row), "table lacks {row:?}:\n{table}");
    }
}
