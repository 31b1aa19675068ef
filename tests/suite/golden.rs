//! Golden output: the SHA-256 of every array of a 64-env corpus of every built-in track and gate
//! preset, and of a small scene file of every built-in scene preset, pinned in `golden.txt`.
//!
//! Refactors keep these bytes. A change that means to change an output (a new convention, a fixed
//! generator) regenerates the table with `TRACKGEN_BLESS=1 cargo test --test suite golden` and says
//! in its commit which lines changed and why.

use std::path::Path;

use trackgen::corpus::write_corpus;
use trackgen::exec::Launch;
use trackgen::preset::{Preset, BUILTIN};
use trackgen::scene::build_preset;
use trackgen::scene::file::encode;
use trackgen::scene::preset::{ScenePreset, BUILTIN as SCENE_BUILTIN};

const SEED: u64 = 2026;
const TABLE: &str = "tests/suite/golden.txt";

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `preset/array sha256` for every array of every track and gate preset, then
/// `scene:preset sha256` for every scene preset, one per line.
fn current() -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    for &(name, _) in BUILTIN {
        let preset = Preset::load(name).unwrap();
        let dir = tmp.path().join(name);
        let manifest = write_corpus(
            &dir,
            &preset,
            SEED,
            0,
            0..64,
            64,
            Launch::new(),
            &mut |_| {},
        )
        .unwrap_or_else(|e| panic!("preset {name}: {e}"));
        for (array, entry) in &manifest.arrays {
            lines.push(format!("{name}/{array} {}", entry.sha256));
        }
    }
    for &(name, _) in SCENE_BUILTIN {
        let preset = ScenePreset::load(name).unwrap();
        let pool = build_preset(&preset, SEED, 0, 4, Some(64), &Launch::new()).unwrap();
        let bytes = encode(&pool.view()).unwrap();
        lines.push(format!("scene:{name} {}", sha256_hex(&bytes)));
    }
    lines.sort();
    lines
}

#[test]
fn outputs_match_the_golden_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let got = current();
    if std::env::var_os("TRACKGEN_BLESS").is_some() {
        std::fs::write(root.join(TABLE), got.join("\n") + "\n").unwrap();
        return;
    }
    let want_text = std::fs::read_to_string(root.join(TABLE)).unwrap();
    let want: Vec<String> = want_text.lines().map(str::to_owned).collect();
    let missing: Vec<&String> = want.iter().filter(|l| !got.contains(l)).collect();
    let extra: Vec<&String> = got.iter().filter(|l| !want.contains(l)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "golden outputs changed.\nexpected (not produced):\n{}\nproduced (not expected):\n{}",
        missing
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        extra
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    );
}
