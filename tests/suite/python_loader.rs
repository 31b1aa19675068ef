//! The numpy loader (`interop/python/trackgen_corpus.py`) rejects what the Rust reader rejects,
//! with one error type naming the file, and its command line (`python -m trackgen_corpus check`)
//! says so with exit 2. Without numpy the test reports a `SKIP:` line (CI requires numpy).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use trackgen::corpus::Corpus;

use crate::cli::{assert_ok, trackgen};

fn loader_dir() -> PathBuf {
    [env!("CARGO_MANIFEST_DIR"), "interop", "python"]
        .iter()
        .collect()
}

fn check(dir: &Path) -> Output {
    Command::new("python3")
        .args(["-m", "trackgen_corpus", "check"])
        .arg(dir)
        .env("PYTHONPATH", loader_dir())
        .output()
        .unwrap()
}

fn numpy() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::skip::skip(
            "python_loader",
            "numpy not installed (`python3 -c \"import numpy\"` fails)",
            "TRACKGEN_REQUIRE_NUMPY",
        );
    }
    ok
}

#[test]
fn python_loader_rejects_what_the_rust_reader_rejects() {
    if !numpy() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert_ok(&trackgen(&["generate", "--envs", "16", "--out", "good"], d));
    let o = check(&d.join("good"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("ok: "));
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(d.join("good/manifest.json")).unwrap()).unwrap();
    // Each case: a change to the manifest (or its bytes) that both readers must reject.
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "no-array",
            Box::new(|m| drop(m["arrays"].as_object_mut().unwrap().remove("center"))),
        ),
        (
            "no-nmax",
            Box::new(|m| drop(m.as_object_mut().unwrap().remove("n_max"))),
        ),
        ("nmax-0", Box::new(|m| m["n_max"] = json!(0))),
        ("range-wrong", Box::new(|m| m["env_range"] = json!([0, 17]))),
        (
            "range-reversed",
            Box::new(|m| m["env_range"] = json!([16, 0])),
        ),
        ("range-short", Box::new(|m| m["env_range"] = json!([0]))),
        ("gates-kind", Box::new(|m| m["kind"] = json!("gates"))),
        ("other-kind", Box::new(|m| m["kind"] = json!("boats"))),
        (
            "parent-path",
            Box::new(|m| m["arrays"]["center"]["file"] = json!("../good/center.npy")),
        ),
        (
            "hidden-file",
            Box::new(|m| m["arrays"]["center"]["file"] = json!(".center.npy")),
        ),
        ("version", Box::new(|m| m["format_version"] = json!(2))),
    ];
    let copy = |name: &str| {
        let dir = d.join(name);
        fs::create_dir(&dir).unwrap();
        for entry in fs::read_dir(d.join("good")).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
        dir
    };
    let rejected_by_both = |dir: &Path, needle: &str| {
        assert!(
            Corpus::open(dir).is_err(),
            "{}: Rust accepts it",
            dir.display()
        );
        let o = check(dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", dir.display());
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{}: {err}",
            dir.display()
        );
        assert!(!err.contains("Traceback"), "{err}");
    };
    for (name, edit) in &cases {
        let dir = copy(name);
        let mut m = manifest.clone();
        edit(&mut m);
        fs::write(
            dir.join("manifest.json"),
            serde_json::to_string(&m).unwrap(),
        )
        .unwrap();
        rejected_by_both(&dir, "manifest.json");
    }
    // Not JSON, not UTF-8, a truncated array, a missing array file: ValueErrors naming the file.
    let dir = copy("not-json");
    fs::write(dir.join("manifest.json"), "{").unwrap();
    rejected_by_both(&dir, "manifest.json");
    let dir = copy("not-utf8");
    fs::write(dir.join("manifest.json"), b"{\"format\": \"\xff\"}").unwrap();
    rejected_by_both(&dir, "manifest.json");
    let dir = copy("truncated");
    fs::write(
        dir.join("count.npy"),
        &fs::read(dir.join("count.npy")).unwrap()[..70],
    )
    .unwrap();
    rejected_by_both(&dir, "count.npy");
    let dir = copy("missing");
    fs::remove_file(dir.join("valid.npy")).unwrap();
    rejected_by_both(&dir, "valid.npy");
    rejected_by_both(&d.join("nothing-here"), "manifest.json");
}
