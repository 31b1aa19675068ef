//! The `trackgen` binary: determinism of corpora across runs, threads and shards; errors for
//! bad input (exit 2, one `error:` line, nothing written); preview, presets and bench.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use trackgen::corpus::read_corpus;

use crate::dir_listing::{entries, files};

/// Runs the `trackgen` binary in `cwd` (no `RAYON_NUM_THREADS`).
pub fn trackgen(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trackgen"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RAYON_NUM_THREADS")
        .output()
        .unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[track_caller]
pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr: {}",
        o.status.code(),
        stderr(o)
    );
}

/// Asserts a clean failure: exit `code`, an `error:` line that contains every needle, no panic.
#[track_caller]
pub fn assert_fails(o: &Output, code: i32, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    assert!(err.starts_with("error: "), "stderr: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "stderr: {err}"
    );
    for needle in needles {
        assert!(err.contains(needle), "expected {needle:?} in stderr: {err}");
    }
}

#[test]
fn same_command_twice_gives_identical_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let args = |out: &'static str| {
        vec![
            "generate",
            "--preset",
            "karting",
            "--envs",
            "96",
            "--seed",
            "5",
            "--generation",
            "2",
            "--out",
            out,
        ]
    };
    let a = trackgen(&args("a"), tmp.path());
    assert_ok(&a);
    let line = stdout(&a);
    assert!(
        line.contains("96 envs") && line.contains("valid") && line.contains("tracks/s"),
        "{line}"
    );
    assert_ok(&trackgen(&args("b"), tmp.path()));
    let (fa, fb) = (files(&tmp.path().join("a")), files(&tmp.path().join("b")));
    assert_eq!(fa.len(), 11, "10 arrays and the manifest");
    assert_eq!(fa, fb);
    // Another seed changes the tracks.
    assert_ok(&trackgen(
        &[
            "generate",
            "--preset",
            "karting",
            "--envs",
            "96",
            "--seed",
            "6",
            "--generation",
            "2",
            "--out",
            "c",
        ],
        tmp.path(),
    ));
    let fc = files(&tmp.path().join("c"));
    assert_ne!(
        fa.iter().find(|f| f.0 == "center.npy"),
        fc.iter().find(|f| f.0 == "center.npy")
    );
}

#[test]
fn thread_count_does_not_change_a_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let base = ["generate", "--envs", "128", "--seed", "11", "--out"];
    let one = Command::new(env!("CARGO_BIN_EXE_trackgen"))
        .args(base)
        .arg("one")
        .current_dir(tmp.path())
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert_ok(&one);
    assert!(stdout(&one).contains("on 1 thread)"), "{}", stdout(&one));
    assert_ok(&trackgen(&[&base[..], &["default"]].concat(), tmp.path()));
    assert_ok(&trackgen(
        &[
            &base[..],
            &["three", "--threads", "3", "--chunk-envs", "50"],
        ]
        .concat(),
        tmp.path(),
    ));
    let reference = files(&tmp.path().join("one"));
    assert_eq!(reference, files(&tmp.path().join("default")));
    assert_eq!(reference, files(&tmp.path().join("three")));
}

#[test]
fn env_range_equals_rows_of_the_full_corpus() {
    let tmp = tempfile::tempdir().unwrap();
    assert_ok(&trackgen(
        &["generate", "--envs", "300", "--seed", "3", "--out", "full"],
        tmp.path(),
    ));
    assert_ok(&trackgen(
        &[
            "generate",
            "--env-range",
            "100..200",
            "--seed",
            "3",
            "--chunk-envs",
            "64",
            "--out",
            "part",
        ],
        tmp.path(),
    ));
    // --envs may accompany --env-range when it covers it.
    assert_ok(&trackgen(
        &[
            "generate",
            "--envs",
            "300",
            "--env-range",
            "250..300",
            "--seed",
            "3",
            "--out",
            "tail",
        ],
        tmp.path(),
    ));
    let (full_manifest, full) = read_corpus(&tmp.path().join("full")).unwrap();
    let (part_manifest, part) = read_corpus(&tmp.path().join("part")).unwrap();
    let (_, tail) = read_corpus(&tmp.path().join("tail")).unwrap();
    assert_eq!(part_manifest.env_range, [100, 200]);
    assert_eq!(part_manifest.preset_sha256, full_manifest.preset_sha256);
    assert!(part.bytes_eq(&full.slice(100..200)), "rows 100..200 differ");
    assert!(tail.bytes_eq(&full.slice(250..300)), "rows 250..300 differ");
}

#[test]
fn bad_arguments_fail_cleanly_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--preset", "nope", "--envs", "8"],
            &["nope", "track", "karting"],
        ),
        (&["--env-range", "5..3"], &["5..3", "A < B"]),
        (&["--env-range", "a..b"], &["a..b", "\"a\""]),
        (&["--env-range", "7"], &["\"7\"", "A..B"]),
        (&["--envs", "0"], &["--envs 0"]),
        (&["--envs", "-4"], &["-4"]),
        (
            &["--envs", "100", "--env-range", "50..150"],
            &["150", "--envs 100"],
        ),
        (&[], &["--envs"]),
        (&["--envs", "8", "--frobnicate"], &["--frobnicate"]),
        (&["--envs", "8", "--chunk-envs", "0"], &["--chunk-envs 0"]),
    ];
    for (extra, needles) in cases {
        let mut args = vec!["generate", "--out", "out"];
        args.extend_from_slice(extra);
        let o = trackgen(&args, tmp.path());
        assert_fails(&o, 2, needles);
        assert!(
            entries(tmp.path()).is_empty(),
            "{args:?} left {:?}",
            entries(tmp.path())
        );
    }
    assert_fails(&trackgen(&["explode"], tmp.path()), 2, &["explode"]);
    assert_fails(
        &trackgen(&["presets", "--show", "nope"], tmp.path()),
        2,
        &["nope", "track"],
    );
    assert_fails(
        &trackgen(&["bench", "--threads", "many"], tmp.path()),
        2,
        &["many", "all"],
    );
    assert_fails(
        &trackgen(&["bench", "--presets", "nope"], tmp.path()),
        2,
        &["nope"],
    );
}

#[test]
fn existing_output_is_an_error_and_stays_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("corpus");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("notes.txt"), "precious").unwrap();
    let o = trackgen(&["generate", "--envs", "8", "--out", "corpus"], tmp.path());
    assert_fails(&o, 2, &["corpus", "already exists"]);
    assert_eq!(
        files(&out),
        vec![("notes.txt".to_string(), b"precious".to_vec())]
    );
    assert_eq!(entries(tmp.path()), vec!["corpus".to_string()]);
}

#[test]
fn unwritable_output_is_an_error_with_no_partial_corpus() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("plain-file"), "x").unwrap();
    let o = trackgen(
        &["generate", "--envs", "8", "--out", "plain-file/corpus"],
        tmp.path(),
    );
    assert_fails(&o, 1, &["plain-file/corpus"]);
    assert_eq!(entries(tmp.path()), vec!["plain-file".to_string()]);

    let o = trackgen(
        &["generate", "--envs", "8", "--out", "missing/corpus"],
        tmp.path(),
    );
    assert_fails(&o, 1, &["missing/corpus"]);
    assert_eq!(entries(tmp.path()), vec!["plain-file".to_string()]);
}

#[test]
fn bad_preset_files_name_the_key_and_value() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str])] = &[
        (
            "[track]\nn_maxx = 300\n",
            &["bad.toml", "track.n_maxx", "300", "n_max"],
        ),
        (
            "[track]\nn_max = \"big\"\n",
            &["bad.toml", "track.n_max", "\"big\"", "integer"],
        ),
        (
            "[track]\nn_max = 5\n",
            &["bad.toml", "track.n_max", "5", "[16, 4096]"],
        ),
        (
            "[track]\nhalf_width_m = -1.0\n",
            &["track.half_width_m", "-1"],
        ),
        (
            "[track]\ngenerator = \"spiral\"\n",
            &["track.generator", "\"spiral\"", "\"polar\""],
        ),
        ("[polar]\nn_ctrl = 8\n", &["[polar]", "bezier"]),
        ("[track\n", &["bad.toml", "TOML"]),
    ];
    for (text, needles) in cases {
        fs::write(tmp.path().join("bad.toml"), text).unwrap();
        let o = trackgen(
            &[
                "generate", "--preset", "bad.toml", "--envs", "8", "--out", "out",
            ],
            tmp.path(),
        );
        assert_fails(&o, 2, needles);
        assert!(!tmp.path().join("out").exists(), "{text}");
    }
    // A valid user file works and the manifest records it by path.
    fs::write(tmp.path().join("good.toml"), "[track]\nn_max = 128\n").unwrap();
    assert_ok(&trackgen(
        &[
            "generate",
            "--preset",
            "good.toml",
            "--envs",
            "8",
            "--out",
            "out",
        ],
        tmp.path(),
    ));
    let (manifest, batch) = read_corpus(&tmp.path().join("out")).unwrap();
    assert_eq!(manifest.preset_source, "good.toml");
    assert_eq!((manifest.n_max, batch.n_max), (128, 128));
}

#[test]
fn preview_writes_a_png_contact_sheet() {
    let tmp = tempfile::tempdir().unwrap();
    assert_ok(&trackgen(
        &["generate", "--envs", "64", "--out", "corpus"],
        tmp.path(),
    ));
    let o = trackgen(
        &[
            "preview",
            "corpus",
            "--out",
            "sheet.png",
            "--max",
            "10",
            "--cell",
            "64",
        ],
        tmp.path(),
    );
    assert_ok(&o);
    let bytes = fs::read(tmp.path().join("sheet.png")).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let img = image::load_from_memory(&bytes).unwrap().to_rgb8();
    // 10 tracks: a 4 × 3 grid of 64-pixel cells.
    assert_eq!(img.dimensions(), (256, 192));
    // Every drawn cell holds road pixels (dark grey); the two unused cells are background only.
    let dark = |cx: u32, cy: u32| {
        (0..64)
            .flat_map(|y| (0..64).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                img.get_pixel(cx * 64 + x, cy * 64 + y)
                    .0
                    .iter()
                    .all(|&c| c < 150)
            })
            .count()
    };
    for e in 0..10 {
        assert!(dark(e % 4, e / 4) > 20, "cell {e} has no road");
    }
    assert_eq!(dark(2, 2), 0);
    assert_eq!(dark(3, 2), 0);
    // Leftovers: only the corpus and the sheet.
    assert_eq!(
        entries(tmp.path()),
        vec!["corpus".to_string(), "sheet.png".to_string()]
    );

    assert_fails(
        &trackgen(&["preview", "nowhere", "--out", "x.png"], tmp.path()),
        2,
        &["nowhere", "no such directory"],
    );
    assert_fails(
        &trackgen(
            &["preview", "corpus", "--out", "x.png", "--max", "0"],
            tmp.path(),
        ),
        2,
        &["--max 0"],
    );
    assert!(!tmp.path().join("x.png").exists());
}

#[test]
fn presets_lists_and_shows_the_builtins() {
    let tmp = tempfile::tempdir().unwrap();
    let o = trackgen(&["presets"], tmp.path());
    assert_ok(&o);
    let list = stdout(&o);
    for (name, _) in trackgen::preset::BUILTIN {
        assert!(
            list.lines().any(|l| l.starts_with(name)),
            "{name} missing from:\n{list}"
        );
    }
    let o = trackgen(&["presets", "--show", "f1"], tmp.path());
    assert_ok(&o);
    let f1 = trackgen::preset::BUILTIN
        .iter()
        .find(|(n, _)| *n == "f1")
        .unwrap()
        .1;
    assert_eq!(stdout(&o), f1);
}

/// `bench --passes` adds a table of every pass's time per row: the CPU passes the pipeline ran,
/// slowest first, then the time outside them; the shares of a row add up to its timed wall clock.
#[test]
fn bench_passes_prints_where_each_rows_time_went() {
    let tmp = tempfile::tempdir().unwrap();
    let o = trackgen(
        &[
            "bench",
            "--envs",
            "16",
            "--threads",
            "1",
            "--presets",
            "polar",
            "--reps",
            "2",
            "--passes",
        ],
        tmp.path(),
    );
    assert_ok(&o);
    let out = stdout(&o);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("pass times"))
        .skip(2)
        .collect();
    let names: Vec<&str> = table
        .iter()
        .map(|l| l.split_whitespace().nth(3).unwrap())
        .collect();
    for pass in [
        "tg_track_polar",
        "tg_track_resample",
        "tg_track_validate",
        "tg_track_inflate",
    ] {
        assert!(names.contains(&pass), "{pass} missing: {out}");
    }
    assert_eq!(names.last(), Some(&"(outside"), "{out}");
    let mut shares = 0.0;
    let mut last_us = f64::INFINITY;
    for line in &table[..table.len() - 1] {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols[..3], ["polar", "1", "16"], "{line}");
        let us: f64 = cols[4].parse().unwrap();
        assert!(us <= last_us, "not slowest first: {out}");
        last_us = us;
        shares += cols[5].trim_end_matches('%').parse::<f64>().unwrap();
    }
    let outside: f64 = table
        .last()
        .unwrap()
        .split_whitespace()
        .nth(6)
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap();
    assert!(
        (shares + outside - 100.0).abs() < 0.5,
        "shares add to {}: {out}",
        shares + outside
    );
    // Without the flag there is no such table.
    let o = trackgen(
        &[
            "bench",
            "--envs",
            "8",
            "--threads",
            "1",
            "--presets",
            "polar",
            "--reps",
            "1",
        ],
        tmp.path(),
    );
    assert_ok(&o);
    assert!(!stdout(&o).contains("pass times"));
}

/// `bench --interleave` times the presets' repetitions in turn and adds a table of each preset
/// against the first, repetition by repetition; the batches, and so the shape statistics, are
/// those of separate runs.
#[test]
fn bench_interleave_pairs_each_preset_with_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "bench",
            "--envs",
            "16",
            "--threads",
            "1",
            "--presets",
            "polar,checkpoint,hull",
            "--reps",
            "3",
        ];
        a.extend_from_slice(extra);
        let o = trackgen(&a, tmp.path());
        assert_ok(&o);
        stdout(&o)
    };
    let out = run(&["--interleave"]);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("paired against the first preset"))
        .skip(2)
        .collect();
    assert_eq!(table.len(), 2, "{out}");
    for (line, preset) in table.iter().zip(["checkpoint", "hull"]) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols[..3], [preset, "1", "16"], "{line}");
        for (ratio, count) in [(cols[3], cols[4]), (cols[5], cols[6])] {
            let r: f64 = ratio.parse().unwrap();
            assert!(r.is_finite() && r > 0.0, "{line}");
            let below: u32 = count
                .trim_start_matches('(')
                .trim_end_matches("/3)")
                .parse()
                .unwrap();
            assert!(below <= 3, "{line}");
        }
    }
    let speed: Vec<&str> = out.lines().skip(2).take_while(|l| !l.is_empty()).collect();
    assert_eq!(speed.len(), 3, "{out}");
    let shapes = |out: &str| -> String {
        out.lines()
            .skip_while(|l| !l.starts_with("shape statistics"))
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let apart = run(&[]);
    assert!(!apart.contains("paired against"), "{apart}");
    assert_eq!(shapes(&out), shapes(&apart));
}

#[test]
fn bench_prints_one_row_per_combination() {
    let tmp = tempfile::tempdir().unwrap();
    let o = trackgen(
        &[
            "bench",
            "--envs",
            "8,16",
            "--threads",
            "1,all",
            "--presets",
            "polar,checkpoint",
            "--reps",
            "2",
        ],
        tmp.path(),
    );
    assert_ok(&o);
    let out = stdout(&o);
    // The device, the speed table, then after a blank line the shape statistics: a title, a
    // header and six rows per preset.
    let all: Vec<&str> = out.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(all.first(), Some(&"device: cpu"), "{out}");
    let lines = &all[1..];
    assert_eq!(lines.len(), 1 + 2 * 2 * 2, "{out}");
    let shape: Vec<&str> = out.lines().skip(all.len() + 1).collect();
    assert_eq!(shape.len(), 2 + 2 * 6, "{out}");
    assert!(shape[2].starts_with("polar") && shape[8].starts_with("checkpoint"));
    assert!(
        lines[0].contains("tracks/s")
            && lines[0].contains("µs/track")
            && lines[0].contains("cpu-µs/track")
            && lines[0].contains("yield")
    );
    for line in &lines[1..] {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols.len(), 8, "{line}");
        let tracks_per_s: f64 = cols[4].parse().unwrap();
        // The process's CPU time per track (all threads): a clock every Unix has.
        let cpu_us: f64 = cols[6].parse().unwrap();
        assert!(cpu_us > 0.0, "{line}");
        let yield_fraction: f64 = cols[7].parse().unwrap();
        assert!(
            tracks_per_s > 0.0 && (0.0..=1.0).contains(&yield_fraction),
            "{line}"
        );
    }
    assert!(
        lines[1].starts_with("polar") && lines[8].starts_with("checkpoint"),
        "{out}"
    );
}
