//! The corpus format: round trips, chunking invariance, NPY headers, reader errors, numpy.
//!
//! The numpy check loads a corpus with `interop/python/trackgen_corpus.py`; without numpy it
//! prints one `SKIP:` line and passes, unless `TRACKGEN_REQUIRE_NUMPY=1` (CI sets it).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};
use trackgen::corpus::npy::{encode_header, parse_header, Dtype, Header, ALIGN};
use trackgen::corpus::{read_corpus, write_corpus, Corpus, Manifest, FORMAT};
use trackgen::exec::Launch;
use trackgen::preset::Preset;
use trackgen::track::{Pipeline, TrackBatch};
use trackgen::Error;

use crate::dir_listing::{entries, files};

/// The arrays of a track corpus and their dtypes, as the format documents them (written out
/// here, not taken from the crate's table, so a change to that table fails these tests).
const ARRAYS: [(&str, Dtype); 10] = [
    ("center", Dtype::F4),
    ("outer", Dtype::F4),
    ("inner", Dtype::F4),
    ("tangent", Dtype::F4),
    ("normal", Dtype::F4),
    ("arclen", Dtype::F4),
    ("count", Dtype::I4),
    ("length", Dtype::F4),
    ("valid", Dtype::U1),
    ("attempts", Dtype::U1),
];

fn preset() -> Preset {
    Preset::load("track").unwrap()
}

fn write(dir: &Path, range: std::ops::Range<u64>, chunk: usize) -> Manifest {
    write_corpus(
        dir,
        &preset(),
        7,
        3,
        range,
        chunk,
        Launch::new(),
        &mut |_| {},
    )
    .unwrap()
}

#[test]
fn round_trip_equals_direct_generation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("corpus");
    // 40 envs in chunks of 16: two full chunks and a tail of 8.
    let written = write(&dir, 10..50, 16);
    let (manifest, batch) = read_corpus(&dir).unwrap();
    assert_eq!(manifest, written);

    let mut pipe = Pipeline::new(&preset(), 40, Launch::new()).unwrap();
    let mut direct = pipe.new_batch(10).unwrap();
    pipe.generate(7, 3, &mut direct).unwrap();
    assert!(
        batch.bytes_eq(&direct),
        "read-back rows differ from a direct generation"
    );

    assert_eq!(manifest.format, FORMAT);
    assert_eq!(manifest.format_version, 1);
    assert_eq!(manifest.env_range, [10, 50]);
    assert_eq!(
        (manifest.seed, manifest.generation, manifest.n_max),
        (7, 3, 256)
    );
    assert_eq!(manifest.preset_sha256, preset().hash());
    assert_eq!(manifest.preset_toml, preset().resolved_toml());
    let valid = direct.valid.iter().filter(|&&v| v == 1).count() as f64 / 40.0;
    assert_eq!(manifest.stats.valid_fraction, valid);
    let mean_count = direct.count.iter().map(|&c| f64::from(c)).sum::<f64>() / 40.0;
    assert_eq!(manifest.stats.mean_count, mean_count);
    assert_eq!(manifest.arrays["center"].shape, vec![40, 256, 3]);
    assert_eq!(manifest.arrays["arclen"].shape, vec![40, 256]);
    assert_eq!(manifest.arrays["count"].dtype, "<i4");
    assert_eq!(manifest.arrays["valid"].dtype, "|u1");
    let mut names = entries(&dir);
    names.retain(|n| n != "manifest.json");
    let mut expected: Vec<String> = ARRAYS.iter().map(|(n, _)| format!("{n}.npy")).collect();
    expected.sort();
    assert_eq!(names, expected);
    // No temporary directory is left next to the corpus.
    assert_eq!(entries(tmp.path()), vec!["corpus".to_string()]);
}

#[test]
fn chunk_size_and_threads_do_not_change_a_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    write(&a, 0..40, 7);
    write(&b, 0..40, 4096);
    write_corpus(
        &c,
        &preset(),
        7,
        3,
        0..40,
        13,
        Launch::with_threads(1).unwrap(),
        &mut |_| {},
    )
    .unwrap();
    let fa = files(&a);
    assert_eq!(fa, files(&b));
    assert_eq!(fa, files(&c));
}

#[test]
fn read_rows_reads_a_window() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("corpus");
    write(&dir, 100..130, 64);
    let corpus = Corpus::open(&dir).unwrap();
    let all = corpus.read_rows(0..30).unwrap();
    let window = corpus.read_rows(5..12).unwrap();
    assert_eq!(window.env_base, 105);
    assert!(window.bytes_eq(&all.slice(5..12)));
    assert_eq!(corpus.read_rows(30..30).unwrap().n_envs, 0);
    assert!(matches!(corpus.read_rows(20..31), Err(Error::Invalid(_))));
}

#[test]
fn npy_headers_round_trip_and_are_aligned() {
    let path = Path::new("x.npy");
    for (dtype, shape) in [
        (Dtype::F4, vec![5u64, 256, 3]),
        (Dtype::F4, vec![1_000_000, 4096]),
        (Dtype::I4, vec![7]),
        (Dtype::U1, vec![0]),
    ] {
        let bytes = encode_header(dtype, &shape);
        assert_eq!(bytes.len() % ALIGN, 0, "{shape:?}");
        assert_eq!(bytes.last(), Some(&b'\n'));
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let header = parse_header(&bytes, path).unwrap();
        assert_eq!(
            header,
            Header {
                dtype,
                shape: shape.clone(),
                data_offset: bytes.len() as u64
            }
        );
    }
    let text = String::from_utf8_lossy(&encode_header(Dtype::I4, &[7])).into_owned();
    assert!(
        text.contains("{'descr': '<i4', 'fortran_order': False, 'shape': (7,), }"),
        "{text}"
    );
}

fn raw_header(major: u8, dict: &str) -> Vec<u8> {
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[major, 0]);
    if major == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out
}

#[test]
fn npy_parser_reads_other_writers_and_rejects_what_is_not_ours() {
    let path = Path::new("data/center.npy");
    // Another key order, double quotes, version 2.0, a 2-d shape without trailing comma.
    let h = parse_header(
        &raw_header(
            2,
            "{\"shape\": (3, 4), \"fortran_order\": False, \"descr\": \"|u1\"}\n",
        ),
        path,
    )
    .unwrap();
    assert_eq!((h.dtype, h.shape.clone()), (Dtype::U1, vec![3, 4]));
    // A 0-d array.
    let h = parse_header(
        &raw_header(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n",
        ),
        path,
    )
    .unwrap();
    assert_eq!(h.shape, Vec::<u64>::new());
    assert_eq!(h.elements(), Some(1));

    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"PK\x03\x04 not npy".to_vec(), "magic"),
        (raw_header(9, "{}"), "version 9"),
        (
            raw_header(
                1,
                "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
            ),
            "'<f8'",
        ),
        (
            raw_header(
                1,
                "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }",
            ),
            "Fortran",
        ),
        (
            raw_header(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3, x), }",
            ),
            "not a dimension",
        ),
        (
            raw_header(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
            )[..20]
                .to_vec(),
            "truncated",
        ),
    ];
    for (bytes, needle) in cases {
        let err = parse_header(&bytes, path).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("data/center.npy"), "{msg}");
        assert!(msg.contains(needle), "expected {needle:?} in {msg}");
    }
}

/// Writes a corpus, applies `damage` to it, and returns the reader's error message.
fn damaged(damage: impl FnOnce(&Path)) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("corpus");
    write(&dir, 0..8, 64);
    damage(&dir);
    read_corpus(&dir).unwrap_err().to_string()
}

#[test]
fn reader_errors_name_the_file_at_fault() {
    let msg = damaged(|d| {
        let p = d.join("manifest.json");
        let text = fs::read_to_string(&p)
            .unwrap()
            .replace("\"format_version\": 1", "\"format_version\": 2");
        fs::write(p, text).unwrap();
    });
    assert!(
        msg.contains("manifest.json") && msg.contains("format_version") && msg.contains('2'),
        "{msg}"
    );

    let msg = damaged(|d| {
        let p = d.join("manifest.json");
        let text = fs::read_to_string(&p)
            .unwrap()
            .replace("trackgen-corpus", "something-else");
        fs::write(p, text).unwrap();
    });
    assert!(
        msg.contains("manifest.json") && msg.contains("something-else"),
        "{msg}"
    );

    let msg = damaged(|d| fs::write(d.join("manifest.json"), "{ not json").unwrap());
    assert!(
        msg.contains("manifest.json") && msg.contains("JSON"),
        "{msg}"
    );

    let msg = damaged(|d| fs::remove_file(d.join("manifest.json")).unwrap());
    assert!(
        msg.contains("manifest.json") && msg.contains("not a trackgen corpus"),
        "{msg}"
    );

    let msg = damaged(|d| {
        let p = d.join("center.npy");
        let bytes = fs::read(&p).unwrap();
        fs::write(&p, &bytes[..bytes.len() - 12]).unwrap();
    });
    assert!(
        msg.contains("center.npy") && msg.contains("truncated"),
        "{msg}"
    );

    let msg = damaged(|d| fs::remove_file(d.join("valid.npy")).unwrap());
    assert!(msg.contains("valid.npy"), "{msg}");

    let msg = damaged(|d| {
        let p = d.join("count.npy");
        let mut bytes = fs::read(&p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        fs::write(&p, bytes).unwrap();
    });
    assert!(
        msg.contains("count.npy") && msg.contains("SHA-256"),
        "{msg}"
    );

    // An array whose header disagrees with the manifest: replace length.npy with a 2-d array.
    let msg = damaged(|d| {
        let mut bytes = encode_header(Dtype::F4, &[4, 2]);
        bytes.extend_from_slice(&[0u8; 32]);
        fs::write(d.join("length.npy"), bytes).unwrap();
    });
    assert!(
        msg.contains("length.npy") && msg.contains("[4, 2]"),
        "{msg}"
    );

    let missing = Path::new("/nonexistent/corpus");
    let msg = read_corpus(missing).unwrap_err().to_string();
    assert!(msg.contains("/nonexistent/corpus"), "{msg}");
}

#[test]
fn writer_refuses_existing_dirs_and_cleans_up_after_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("corpus");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("keep.txt"), "mine").unwrap();
    let err =
        write_corpus(&dir, &preset(), 0, 0, 0..4, 64, Launch::new(), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    assert!(
        err.to_string().contains(&dir.display().to_string()),
        "{err}"
    );
    assert_eq!(entries(&dir), vec!["keep.txt".to_string()]);
    assert_eq!(fs::read_to_string(dir.join("keep.txt")).unwrap(), "mine");

    let file = tmp.path().join("file");
    fs::write(&file, "x").unwrap();
    let out = file.join("corpus");
    let err =
        write_corpus(&out, &preset(), 0, 0, 0..4, 64, Launch::new(), &mut |_| {}).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&out.display().to_string()),
        "{err}"
    );
    assert_eq!(
        entries(tmp.path()),
        vec!["corpus".to_string(), "file".to_string()]
    );

    // Empty, reversed, and no envs per chunk.
    let reversed = std::ops::Range { start: 5, end: 3 };
    for (range, chunk) in [(5..5, 64), (reversed, 64), (0..4, 0)] {
        let out = tmp.path().join("never");
        let err = write_corpus(
            &out,
            &preset(),
            0,
            0,
            range,
            chunk,
            Launch::new(),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err:?}");
        assert!(!out.exists());
    }
    assert_eq!(
        entries(tmp.path()),
        vec!["corpus".to_string(), "file".to_string()]
    );
}

fn numpy_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        crate::skip::skip(
            "corpus numpy interop",
            "numpy not installed (`python3 -c \"import numpy\"` fails)",
            "TRACKGEN_REQUIRE_NUMPY",
        );
    }
    ok
}

/// `(dtype, shape, sha256 of the C-order bytes)` of every array of `batch`, as numpy would see it.
fn rust_view(batch: &TrackBatch, manifest: &Manifest) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    let counts: Vec<i32> = batch.count.iter().map(|&c| c as i32).collect();
    for (name, dtype) in ARRAYS {
        let bytes: &[u8] = match name {
            "center" => bytemuck::cast_slice(&batch.center),
            "outer" => bytemuck::cast_slice(&batch.outer),
            "inner" => bytemuck::cast_slice(&batch.inner),
            "tangent" => bytemuck::cast_slice(&batch.tangent),
            "normal" => bytemuck::cast_slice(&batch.normal),
            "arclen" => bytemuck::cast_slice(&batch.arclen),
            "count" => bytemuck::cast_slice(&counts),
            "length" => bytemuck::cast_slice(&batch.length),
            "valid" => &batch.valid,
            "attempts" => &batch.attempts,
            other => panic!("unknown array {other}"),
        };
        let digest: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.insert(
            name.to_string(),
            serde_json::json!([dtype.descr(), manifest.arrays[name].shape, digest]),
        );
    }
    serde_json::Value::Object(out)
}

#[test]
fn numpy_loads_every_array_as_the_rust_reader_does() {
    if !numpy_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("corpus");
    write(&dir, 3..35, 10);
    let (manifest, batch) = read_corpus(&dir).unwrap();
    let loader: PathBuf = [env!("CARGO_MANIFEST_DIR"), "interop", "python"]
        .iter()
        .collect();
    let script = r#"
import hashlib, json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import trackgen_corpus
c = trackgen_corpus.load(sys.argv[2], verify=True)
m = trackgen_corpus.load(sys.argv[2], mmap=True)
out = {}
for name in c["manifest"]["arrays"]:
    a = c[name]
    assert np.array_equal(a, m[name], equal_nan=a.dtype.kind == "f"), name
    assert np.array_equal(a, np.load(sys.argv[2] + "/" + name + ".npy"), equal_nan=a.dtype.kind == "f"), name
    out[name] = [a.dtype.str, list(a.shape), hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()]
# NaN exactly past count, finite before.
for i, n in enumerate(c["count"]):
    assert np.isfinite(c["center"][i, :n]).all() and np.isnan(c["center"][i, n:]).all(), i
out["_seed"] = c["manifest"]["seed"]
print(json.dumps(out))
"#;
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&loader)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut seen: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["_seed"], 7);
    seen.as_object_mut().unwrap().remove("_seed");
    assert_eq!(seen, rust_view(&batch, &manifest));
}
