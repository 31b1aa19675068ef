//! The CLI with gate presets: `generate --preset gates` writes gate corpora (arrays, shapes,
//! manifest kind, determinism, shards equal rows of the full corpus, rows equal to the library's
//! generation, numpy-loadable); `preview` draws them; `bench-course` prints its table; bad input
//! is a clean error.

use std::path::Path;
use std::process::{Command, Output};

use trackgen::corpus::{read_gate_corpus, Corpus};
use trackgen::course::GatePipeline;
use trackgen::exec::Launch;
use trackgen::preset::Preset;

use crate::dir_listing::files;

fn trackgen(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trackgen"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RAYON_NUM_THREADS")
        .output()
        .unwrap()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn gate_corpus_arrays_shapes_and_determinism() {
    let tmp = tempfile::tempdir().unwrap();
    let gen = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "generate", "--preset", "gates", "--envs", "40", "--seed", "4", "--out", out,
        ];
        args.extend_from_slice(extra);
        trackgen(&args, tmp.path())
    };
    let line = ok(&gen("a", &["--chunk-envs", "16"]));
    assert!(
        line.contains("gates") && line.contains("courses/s"),
        "{line}"
    );
    ok(&gen("b", &["--threads", "1", "--chunk-envs", "7"]));
    assert_eq!(files(&tmp.path().join("a")), files(&tmp.path().join("b")));

    let names: Vec<String> = files(&tmp.path().join("a"))
        .into_iter()
        .map(|f| f.0)
        .collect();
    let arrays = [
        "gate_pos",
        "gate_quat",
        "gate_size",
        "gate_count",
        "valid",
        "attempts",
    ];
    let mut expected: Vec<String> = arrays.iter().map(|n| format!("{n}.npy")).collect();
    expected.push("manifest.json".into());
    expected.sort();
    assert_eq!(names, expected);

    let (manifest, batch) = read_gate_corpus(&tmp.path().join("a")).unwrap();
    assert_eq!(manifest.kind.as_deref(), Some("gates"));
    assert_eq!(manifest.n_max, 12);
    assert_eq!(manifest.arrays["gate_pos"].shape, vec![40, 12, 3]);
    assert_eq!(manifest.arrays["gate_quat"].shape, vec![40, 12, 4]);
    assert_eq!(manifest.arrays["gate_size"].shape, vec![40, 12, 2]);
    assert_eq!(manifest.arrays["gate_count"].shape, vec![40]);
    assert_eq!(manifest.arrays["gate_count"].dtype, "<i4");
    assert!(manifest.stats.mean_count >= 6.0 && manifest.stats.mean_count <= 12.0);
    assert_eq!(batch.thickness_m, 0.2);

    // The rows are the library's generation; a shard equals rows of the full corpus.
    let preset = Preset::load("gates").unwrap();
    let mut pipe = GatePipeline::new(&preset, 40, Launch::new()).unwrap();
    let mut lib = pipe.new_batch(0).unwrap();
    pipe.generate(4, 0, &mut lib).unwrap();
    assert!(batch.bytes_eq(&lib));
    ok(&trackgen(
        &[
            "generate",
            "--preset",
            "gates",
            "--env-range",
            "10..25",
            "--seed",
            "4",
            "--out",
            "shard",
        ],
        tmp.path(),
    ));
    let (_, shard) = read_gate_corpus(&tmp.path().join("shard")).unwrap();
    assert!(shard.bytes_eq(&batch.slice(10..25)));

    // A track reader refuses a gate corpus, naming the right reader.
    let m = Corpus::open(&tmp.path().join("a"))
        .unwrap()
        .read_rows(0..1)
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("gate corpus") && m.contains("read_gate_rows"),
        "{m}"
    );
    // Track corpora carry no `kind`.
    ok(&trackgen(
        &["generate", "--envs", "3", "--out", "t"],
        tmp.path(),
    ));
    let text = std::fs::read_to_string(tmp.path().join("t/manifest.json")).unwrap();
    assert!(!text.contains("\"kind\""));
    let m = Corpus::open(&tmp.path().join("t"))
        .unwrap()
        .read_gate_rows(0..1)
        .unwrap_err()
        .to_string();
    assert!(m.contains("track corpus"), "{m}");
}

#[test]
fn gate_corpus_loads_in_numpy() {
    let has_numpy = Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has_numpy {
        crate::skip::skip(
            "gate_corpus_loads_in_numpy",
            "numpy not installed (`python3 -c \"import numpy\"` fails)",
            "TRACKGEN_REQUIRE_NUMPY",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    ok(&trackgen(
        &[
            "generate",
            "--preset",
            "gates-indoor",
            "--envs",
            "9",
            "--out",
            "g",
        ],
        tmp.path(),
    ));
    let (_, batch) = read_gate_corpus(&tmp.path().join("g")).unwrap();
    let script = r#"
import json, sys
import numpy as np
d = sys.argv[1]
pos, quat, size = (np.load(f"{d}/gate_{k}.npy") for k in ("pos", "quat", "size"))
count = np.load(f"{d}/gate_count.npy")
assert pos.dtype == np.float32 and pos.shape == (9, 8, 3), pos.shape
assert quat.shape == (9, 8, 4) and size.shape == (9, 8, 2) and count.dtype == np.int32
for i, n in enumerate(count):
    assert np.isfinite(pos[i, :n]).all() and np.isnan(pos[i, n:]).all(), i
    assert np.allclose(np.linalg.norm(quat[i, :n], axis=1), 1.0, atol=1e-5), i
print(json.dumps([int(n) for n in count] + [float(pos[0, 0, 2])]))
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(tmp.path().join("g"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Vec<f64> = serde_json::from_slice(&out.stdout).unwrap();
    let mut want: Vec<f64> = batch.count.iter().map(|&c| f64::from(c)).collect();
    want.push(f64::from(batch.pos[0][2]));
    assert_eq!(seen, want);
}

#[test]
fn preview_draws_gate_courses() {
    let tmp = tempfile::tempdir().unwrap();
    ok(&trackgen(
        &["generate", "--preset", "gates", "--envs", "5", "--out", "g"],
        tmp.path(),
    ));
    let line = ok(&trackgen(
        &["preview", "g", "--out", "g.png", "--cell", "96"],
        tmp.path(),
    ));
    assert!(line.contains("5 gate courses"), "{line}");
    let img = image::open(tmp.path().join("g.png")).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (3 * 96, 2 * 96));
    // Orange gate bars are drawn.
    let orange = img
        .pixels()
        .filter(|p| p.0[0] > 200 && (100..150).contains(&p.0[1]) && p.0[2] < 60)
        .count();
    assert!(orange > 50, "{orange} orange pixels");
}

#[test]
fn bench_course_prints_its_table_and_rejects_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    for preset in ["karting", "gates-indoor"] {
        let out = ok(&trackgen(
            &[
                "bench-course",
                "--preset",
                preset,
                "--envs",
                "32",
                "--threads",
                "1",
                "--reps",
                "1",
                "--steps",
                "2",
                "--regen-reps",
                "1",
            ],
            tmp.path(),
        ));
        for needle in [
            "step env-steps/s",
            "regenerate 100%",
            "regenerate 1%",
            "regenerate 0%",
        ] {
            assert!(out.contains(needle), "{preset}: {out}");
        }
        assert_eq!(out.lines().count(), 5, "{out}");
    }
    let out = ok(&trackgen(
        &[
            "bench-course",
            "--preset",
            "gates",
            "--mode",
            "track",
            "--envs",
            "8",
            "--threads",
            "1",
            "--reps",
            "1",
            "--steps",
            "1",
            "--regen-reps",
            "1",
        ],
        tmp.path(),
    ));
    assert!(out.contains(" track "), "{out}");
    for (args, needle) in [
        (vec!["bench-course", "--footprint", "1"], "--footprint"),
        (vec!["bench-course", "--reps", "0"], "--reps 0"),
        (
            vec![
                "bench-course",
                "--preset",
                "track",
                "--mode",
                "gates",
                "--envs",
                "4",
            ],
            "[gates]",
        ),
    ] {
        let o = trackgen(&args, tmp.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
    }
}
