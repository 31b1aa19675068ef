//! The binary against big arguments, signals, existing outputs and odd input files: every case
//! is a clean `error:` line with exit 2 (nothing aborts, nothing half-written is left behind), and
//! the new `rays` command feeds `raycast`.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use trackgen::corpus::npy::{parse_header, Dtype, NpyWriter};

use crate::cli::{assert_fails, assert_ok, stderr, stdout, trackgen};

/// A small corpus `c` (64 envs), a scene file `s.scene` (2 rooms envs, R = 32) in `dir`.
fn inputs(dir: &Path) {
    assert_ok(&trackgen(&["generate", "--envs", "64", "--out", "c"], dir));
    assert_ok(&trackgen(
        &[
            "scene", "--preset", "rooms", "--envs", "2", "--res", "32", "--out", "s.scene",
        ],
        dir,
    ));
}

fn read_f32(path: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = fs::read(path).unwrap();
    let header = parse_header(&bytes, path).unwrap();
    assert_eq!(header.dtype, Dtype::F4);
    let values = bytes[header.data_offset as usize..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (header.shape, values)
}

#[test]
fn sizes_that_multiply_into_allocations_are_errors_naming_the_argument_and_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    inputs(d);
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "generate",
                "--chunk-envs",
                "100000000",
                "--envs",
                "100000000",
                "--out",
                "x",
            ],
            "--chunk-envs 100000000",
        ),
        (&["bench-course", "--envs", "100000000"], "--envs 100000000"),
        (&["bench", "--envs", "100000000"], "--envs 100000000"),
        (
            &["preview", "c", "--cell", "100000", "--out", "x.png"],
            "--cell 100000",
        ),
        (
            &[
                "preview-scene",
                "s.scene",
                "--size",
                "100000",
                "--out",
                "x.png",
            ],
            "--size 100000",
        ),
        (&["bench-scene", "--camera", "1000000"], "--camera 1000000"),
        (
            &[
                "rays",
                "--scene",
                "s.scene",
                "--camera",
                "1000000,1000000",
                "--out",
                "x.npy",
            ],
            "--camera 1000000,1000000",
        ),
    ];
    for (args, needle) in cases {
        let o = trackgen(args, d);
        assert_fails(&o, 2, &[needle, "bytes", "memory"]);
    }
    assert!(!d.join("x").exists() && !d.join("x.png").exists() && !d.join("x.npy").exists());
}

#[test]
fn thread_counts_are_capped() {
    let tmp = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let o = trackgen(
        &[
            "generate",
            "--envs",
            "8",
            "--threads",
            "100000",
            "--out",
            "x",
        ],
        tmp.path(),
    );
    assert_fails(&o, 2, &["100000", "at most"]);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!tmp.path().join("x").exists());
}

#[test]
fn outputs_larger_than_the_free_space_are_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let o = trackgen(&["generate", "--envs", "10000000000", "--out", "big"], d);
    assert_fails(
        &o,
        2,
        &["10000000000 envs", "TiB", "free", "--no-space-check"],
    );
    let o = trackgen(
        &[
            "scene",
            "--preset",
            "rooms",
            "--envs",
            "4294967295",
            "--res",
            "32",
            "--out",
            "s",
        ],
        d,
    );
    assert_fails(&o, 2, &["--envs 4294967295", "bytes", "--no-space-check"]);
    assert_eq!(fs::read_dir(d).unwrap().count(), 0, "nothing written");
}

/// Starts a `generate` of millions of envs into `d/big`, waits for its temporary directory,
/// sends `signal` and returns the exit code and stderr.
#[cfg(unix)]
fn interrupt_generate(d: &Path, signal: &str) -> (Option<i32>, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_trackgen"))
        .args([
            "generate",
            "--envs",
            "50000000",
            "--chunk-envs",
            "256",
            "--threads",
            "1",
            "--no-space-check",
            "--out",
            "big",
        ])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tmp = d.join(format!(".big.tmp-{}", child.id()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !tmp.join("center.npy").exists() {
        assert!(Instant::now() < deadline, "no temporary directory appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let it write a few chunks.
    std::thread::sleep(Duration::from_millis(300));
    // The shell's built-in `kill`: present wherever `sh` is.
    let kill = Command::new("sh")
        .args(["-c", &format!("kill {signal} {}", child.id())])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(unix)]
#[test]
fn sigint_and_sigterm_remove_the_temporary_directory() {
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let tmp = tempfile::tempdir().unwrap();
        let (status, err) = interrupt_generate(tmp.path(), signal);
        assert_eq!(status, Some(code), "{signal}: {err}");
        assert!(
            err.contains("interrupted by SIG") && err.contains(".big.tmp-"),
            "{err}"
        );
        let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "{signal} left {left:?}");
    }
}

#[test]
fn stale_temporary_directories_of_dead_runs_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Process ids stop below 2^22: no process has this one.
    let stale = d.join(".c.tmp-4194999");
    fs::create_dir(&stale).unwrap();
    fs::write(stale.join("center.npy"), vec![0u8; 4096]).unwrap();
    let o = trackgen(&["generate", "--envs", "8", "--out", "c"], d);
    assert_ok(&o);
    assert!(!stale.exists());
    assert!(stderr(&o).contains(".c.tmp-4194999"), "{}", stderr(&o));
}

#[test]
fn every_writer_refuses_an_existing_output_unless_forced_and_an_input_always() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    inputs(d);
    assert_ok(&trackgen(
        &[
            "rays", "--scene", "s.scene", "--camera", "4,3", "--out", "r.npy",
        ],
        d,
    ));
    assert_ok(&trackgen(
        &["raycast", "s.scene", "--rays", "r.npy", "--out", "d.npy"],
        d,
    ));
    assert_ok(&trackgen(
        &[
            "preview", "c", "--out", "c.png", "--max", "4", "--cell", "32",
        ],
        d,
    ));
    assert_ok(&trackgen(
        &["preview-scene", "s.scene", "--out", "s.png", "--size", "32"],
        d,
    ));
    let writers: &[&[&str]] = &[
        &["generate", "--envs", "8", "--out", "c"],
        &[
            "scene", "--preset", "rooms", "--envs", "2", "--res", "32", "--out", "s.scene",
        ],
        &[
            "rays", "--scene", "s.scene", "--camera", "4,3", "--out", "r.npy",
        ],
        &["raycast", "s.scene", "--rays", "r.npy", "--out", "d.npy"],
        &[
            "preview", "c", "--out", "c.png", "--max", "4", "--cell", "32",
        ],
        &["preview-scene", "s.scene", "--out", "s.png", "--size", "32"],
    ];
    for args in writers {
        let before = fs::read_dir(d).unwrap().count();
        assert_fails(&trackgen(args, d), 2, &["already exists", "--force"]);
        assert_eq!(fs::read_dir(d).unwrap().count(), before);
    }
    // --force replaces; the scene file is rewritten with the same bytes.
    let scene = fs::read(d.join("s.scene")).unwrap();
    for args in writers {
        assert_ok(&trackgen(&[args, &["--force"][..]].concat(), d));
    }
    assert_eq!(fs::read(d.join("s.scene")).unwrap(), scene);
    // An output that is an input: refused even with --force, the input untouched.
    let rays = fs::read(d.join("r.npy")).unwrap();
    let into_inputs: &[(&[&str], &str)] = &[
        (
            &[
                "raycast", "s.scene", "--rays", "r.npy", "--out", "r.npy", "--force",
            ],
            "r.npy",
        ),
        (
            &[
                "raycast", "s.scene", "--rays", "r.npy", "--out", "s.scene", "--force",
            ],
            "s.scene",
        ),
        (
            &["preview-scene", "s.scene", "--out", "s.scene", "--force"],
            "s.scene",
        ),
        (
            &["preview", "c", "--out", "c/manifest.json", "--force"],
            "c",
        ),
        (
            &["rays", "--scene", "s.scene", "--out", "s.scene", "--force"],
            "s.scene",
        ),
        // Two outputs of one command are one file: the second is refused before anything.
        (
            &[
                "scene",
                "--preset",
                "rooms",
                "--envs",
                "1",
                "--res",
                "16",
                "--out",
                "n.scene",
                "--primitives-json",
                "./n.scene",
            ],
            "n.scene",
        ),
    ];
    for (args, input) in into_inputs {
        assert_fails(&trackgen(args, d), 2, &["is the input", input]);
    }
    assert_eq!(fs::read(d.join("r.npy")).unwrap(), rays);
    assert_eq!(fs::read(d.join("s.scene")).unwrap(), scene);
    assert!(!d.join("n.scene").exists());
    // --force replaces only a corpus directory.
    fs::create_dir(d.join("notes")).unwrap();
    fs::write(d.join("notes/a.txt"), "keep").unwrap();
    assert_fails(
        &trackgen(&["generate", "--envs", "8", "--out", "notes", "--force"], d),
        2,
        &["not a trackgen corpus"],
    );
    assert_eq!(fs::read_to_string(d.join("notes/a.txt")).unwrap(), "keep");
}

#[test]
fn unreadable_inputs_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    inputs(d);
    fs::write(d.join("latin1.toml"), b"[track]\n# caf\xe9\n").unwrap();
    assert_fails(
        &trackgen(
            &[
                "generate",
                "--envs",
                "8",
                "--preset",
                "latin1.toml",
                "--out",
                "x",
            ],
            d,
        ),
        2,
        &["latin1.toml", "UTF-8"],
    );
    // A manifest that is not UTF-8, and a corpus missing an array file.
    for (name, damage) in [("m", "manifest"), ("n", "npy")] {
        assert_ok(&trackgen(&["generate", "--envs", "8", "--out", name], d));
        if damage == "manifest" {
            let mut bytes = fs::read(d.join(name).join("manifest.json")).unwrap();
            bytes.insert(10, 0xff);
            fs::write(d.join(name).join("manifest.json"), bytes).unwrap();
        } else {
            fs::remove_file(d.join(name).join("center.npy")).unwrap();
        }
        let o = trackgen(&["preview", name, "--out", "x.png"], d);
        assert_fails(&o, 2, &[name]);
    }
    let o = trackgen(&["raycast", "c", "--rays", "r.npy", "--out", "x.npy"], d);
    assert_fails(&o, 2, &["is a directory"]);
    assert!(!stderr(&o).contains("No such device"));
    let o = trackgen(
        &["raycast", "s.scene", "--rays", "none.npy", "--out", "x.npy"],
        d,
    );
    assert_fails(&o, 2, &["none.npy"]);
}

#[test]
fn generate_reports_generation_and_writing_apart_and_progress_without_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_trackgen"))
        .args([
            "generate",
            "--envs",
            "600",
            "--chunk-envs",
            "100",
            "--threads",
            "1",
        ])
        .args(["--out", "c"])
        .current_dir(tmp.path())
        .env("TRACKGEN_PROGRESS_SECS", "0")
        .output()
        .unwrap();
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains("generation") && out.contains("writing"),
        "{out}"
    );
    assert!(out.contains("on 1 thread)"), "{out}");
    let err = stderr(&o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(lines.len() >= 5, "a line per chunk: {err}");
    assert!(
        lines.last().unwrap().contains("600/600 envs (100.0%)"),
        "{err}"
    );
    // Rates are whole numbers with separators, never `17,615.8125/s`.
    assert!(
        !lines.iter().any(|l| l.contains(".")
            && l.contains("/s")
            && l.split("/s")
                .next()
                .unwrap()
                .rsplit(' ')
                .next()
                .unwrap()
                .contains('.')),
        "{err}"
    );
}

#[test]
fn presets_and_help_list_the_scene_presets() {
    let tmp = tempfile::tempdir().unwrap();
    let o = trackgen(&["presets"], tmp.path());
    assert_ok(&o);
    let out = stdout(&o);
    for name in ["rooms", "forest"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.contains("scene")),
            "{out}"
        );
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with("gates ") && l.contains("scene")),
        "{out}"
    );
    let o = trackgen(&["presets", "--show", "rooms"], tmp.path());
    assert_ok(&o);
    assert!(stdout(&o).contains("scene preset `rooms`"));
    let o = trackgen(&["presets", "--show", "scene-gates"], tmp.path());
    assert!(stdout(&o).contains("scene preset `gates`"));
    let o = trackgen(&["scene", "--help"], tmp.path());
    assert!(stdout(&o).contains("gates"), "{}", stdout(&o));
}

#[test]
fn rays_feed_raycast_from_scenes_corpora_and_poses() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    inputs(d);
    assert_ok(&trackgen(
        &[
            "rays", "--scene", "s.scene", "--camera", "8,6", "--out", "cam.npy",
        ],
        d,
    ));
    let (shape, rays) = read_f32(&d.join("cam.npy"));
    assert_eq!(shape, vec![2, 48, 6]);
    for r in rays.chunks_exact(6) {
        let n = (r[3] * r[3] + r[4] * r[4] + r[5] * r[5]).sqrt();
        assert!((n - 1.0).abs() < 1e-5, "unit directions");
    }
    assert_ok(&trackgen(
        &[
            "raycast",
            "s.scene",
            "--rays",
            "cam.npy",
            "--out",
            "depth.npy",
        ],
        d,
    ));
    let (shape, depth) = read_f32(&d.join("depth.npy"));
    assert_eq!(shape, vec![2, 48]);
    assert!(
        depth.iter().all(|&x| x > 0.0 && x < 100.0),
        "indoor cameras hit walls"
    );

    assert_ok(&trackgen(
        &[
            "rays",
            "--corpus",
            "c",
            "--lidar",
            "4,16",
            "--envs",
            "3",
            "--out",
            "lidar.npy",
        ],
        d,
    ));
    assert_eq!(read_f32(&d.join("lidar.npy")).0, vec![3, 64, 6]);
    assert_ok(&trackgen(
        &[
            "rays",
            "--pose",
            "0,0,1.5,90",
            "--envs",
            "2",
            "--out",
            "pose.npy",
        ],
        d,
    ));
    let (shape, rays) = read_f32(&d.join("pose.npy"));
    assert_eq!(shape, vec![2, 64 * 64, 6]);
    assert_eq!(&rays[..3], &[0.0, 0.0, 1.5]);
    assert_fails(
        &trackgen(&["rays", "--camera", "4,4", "--out", "x.npy"], d),
        2,
        &["--scene"],
    );

    // Directions scaled by 1e30 or 1e-30 hit where the unit ones do.
    let mut scaled = Vec::new();
    let (_, cam) = read_f32(&d.join("cam.npy"));
    for scale in [1e30f32, 1e-30] {
        for r in cam.chunks_exact(6) {
            scaled.extend_from_slice(&r[..3]);
            scaled.extend(r[3..].iter().map(|v| v * scale));
        }
    }
    let mut w = NpyWriter::create(&d.join("scaled.npy"), Dtype::F4, &[2, 96, 6]).unwrap();
    // Env 0: its 48 rays at 1e30 then env 1's at 1e30 ... keep env blocks: rebuild per env.
    let mut per_env = Vec::new();
    for e in 0..2 {
        for s in 0..2 {
            let start = (s * 96 + e * 48) * 6;
            per_env.extend_from_slice(&scaled[start..start + 48 * 6]);
        }
    }
    w.append_f32(&per_env).unwrap();
    w.finish().unwrap();
    assert_ok(&trackgen(
        &[
            "raycast",
            "s.scene",
            "--rays",
            "scaled.npy",
            "--out",
            "ds.npy",
        ],
        d,
    ));
    let (_, ds) = read_f32(&d.join("ds.npy"));
    for e in 0..2 {
        for s in 0..2 {
            for k in 0..48 {
                let (got, want) = (ds[e * 96 + s * 48 + k], depth[e * 48 + k]);
                assert!(
                    (got - want).abs() <= 1e-4 * want.max(1.0),
                    "env {e} ray {k}: {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn readme_quick_start_runs_twice() {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let block = readme
        .split("## Quick start")
        .nth(1)
        .and_then(|s| s.split("```sh\n").nth(1))
        .unwrap();
    let line = block.lines().next().unwrap();
    let commands: Vec<Vec<&str>> = line
        .split("&&")
        .map(|c| {
            let c = c.trim().strip_prefix("cargo run --release -- ").unwrap();
            c.split_whitespace().collect()
        })
        .collect();
    assert_eq!(commands.len(), 2, "{line}");
    let tmp = tempfile::tempdir().unwrap();
    for run in 0..2 {
        for args in &commands {
            let o = trackgen(args, tmp.path());
            assert!(o.status.success(), "run {run}: {args:?}: {}", stderr(&o));
        }
    }
    assert!(tmp.path().join("corpus/manifest.json").is_file());
    assert!(tmp.path().join("sheet.png").is_file());
}
