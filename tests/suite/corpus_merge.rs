//! Merging `--env-range` shards: byte-identical to one run of the whole range (every array file
//! and the manifest with its statistics), for track corpora with and without heightfields and
//! props and for gate corpora; refused shards name the shard and the value; nothing is left at
//! the output on failure.

use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use trackgen::corpus::{
    merge_corpora, read_corpus, read_gate_corpus, write_corpus_with, CorpusExtras, Manifest,
};
use trackgen::course::{HeightfieldConfig, PropConfig, PropKind, Side};
use trackgen::exec::plan::Backend;
use trackgen::exec::Launch;
use trackgen::preset::Preset;

use crate::cli::{stderr, stdout, trackgen};
use crate::dir_listing::{entries, files};

fn write(
    dir: &Path,
    preset: &str,
    seed: u64,
    range: Range<u64>,
    chunk: usize,
    extras: &CorpusExtras,
) -> Manifest {
    write_corpus_with(
        dir,
        &Preset::load(preset).unwrap(),
        seed,
        2,
        range,
        chunk,
        extras,
        Backend::Cpu(Launch::with_threads(1).unwrap()),
        &mut |_| {},
    )
    .unwrap()
}

fn extras() -> CorpusExtras {
    CorpusExtras {
        heightfield: Some(HeightfieldConfig {
            resolution: 8,
            margin_m: 3.0,
        }),
        props: Some(PropConfig {
            side: Side::Outer,
            kind: PropKind::Point,
            spacing_m: 6.0,
            max_props: 128,
        }),
    }
}

/// Writes envs 3..40 in one run and as three shards of other chunk sizes, merges the shards
/// (given out of order, copied 5 rows at a time) and compares every file byte for byte.
fn merged_equals_one_run(preset: &str, extras: &CorpusExtras) -> (PathBuf, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one");
    write(&one, preset, 11, 3..40, 16, extras);
    let shards: Vec<PathBuf> = [(3..14, 4), (14..31, 32), (31..40, 9)]
        .into_iter()
        .map(|(range, chunk)| {
            let dir = tmp.path().join(format!("shard-{}", range.start));
            write(&dir, preset, 11, range, chunk, extras);
            dir
        })
        .collect();
    let merged = tmp.path().join("merged");
    let order = [shards[2].clone(), shards[0].clone(), shards[1].clone()];
    let mut reports = Vec::new();
    let manifest = merge_corpora(&merged, &order, 5, &mut |p| reports.push(*p)).unwrap();
    assert_eq!(manifest.env_range, [3, 40]);
    let expected = files(&one);
    let actual = files(&merged);
    assert_eq!(
        expected.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        actual.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        "the merged corpus holds other files"
    );
    for ((name, a), (_, b)) in expected.iter().zip(&actual) {
        assert!(a == b, "{preset}: {name} differs from the single run's");
    }
    // Progress: per chunk of at most 5 rows within each shard (3 + 4 + 2 chunks), then the end.
    let done: Vec<u64> = reports.iter().map(|p| p.done_envs).collect();
    assert_eq!(done, [5, 10, 11, 16, 21, 26, 28, 33, 37, 37]);
    assert!(reports.iter().all(|p| p.total_envs == 37));
    // Only the merged directory appeared (no temporary sibling left).
    assert_eq!(
        entries(tmp.path()),
        ["merged", "one", "shard-14", "shard-3", "shard-31"]
    );
    (merged, tmp)
}

#[test]
fn merged_track_shards_equal_one_run_byte_for_byte() {
    let (merged, _tmp) = merged_equals_one_run("track", &CorpusExtras::default());
    let (manifest, batch) = read_corpus(&merged).unwrap();
    assert_eq!(batch.env_base, 3);
    assert_eq!(batch.n_envs, 37);
    assert!(manifest.stats.shape.is_some());
}

#[test]
fn merged_shards_with_heightfields_and_props_equal_one_run() {
    merged_equals_one_run("track", &extras());
}

#[test]
fn merged_gate_shards_equal_one_run_byte_for_byte() {
    let (merged, _tmp) = merged_equals_one_run("gates", &CorpusExtras::default());
    let (manifest, batch) = read_gate_corpus(&merged).unwrap();
    assert_eq!(manifest.kind.as_deref(), Some("gates"));
    assert_eq!(batch.n_envs, 37);
}

/// Merges `shards` into `tmp/out`, expecting an error containing every one of `needles`, and
/// checks that nothing appeared at the output.
#[track_caller]
fn refused(tmp: &Path, shards: &[&Path], needles: &[&str]) {
    let out = tmp.join("out");
    let before = entries(tmp);
    let shards: Vec<PathBuf> = shards.iter().map(|p| p.to_path_buf()).collect();
    let err = merge_corpora(&out, &shards, 4, &mut |_| {})
        .unwrap_err()
        .to_string();
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in: {err}");
    }
    assert_eq!(entries(tmp), before, "a failed merge left something behind");
}

#[test]
fn disagreeing_or_untiled_shards_are_refused_naming_the_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let none = CorpusExtras::default();
    let a = t.join("a");
    let b = t.join("b");
    let c = t.join("c");
    write(&a, "track", 1, 0..4, 8, &none);
    write(&b, "track", 1, 4..7, 8, &none);
    write(&c, "track", 1, 7..9, 8, &none);
    let a_dir = a.display().to_string();
    let b_dir = b.display().to_string();
    let c_dir = c.display().to_string();

    // A gap, an overlap, a shard given twice.
    refused(t, &[&a, &c], &["envs 4..7 are in no shard", &a_dir, &c_dir]);
    let ab = t.join("ab");
    write(&ab, "track", 1, 2..6, 8, &none);
    refused(t, &[&a, &ab], &["overlaps", "envs 2..6", "envs 0..4"]);
    refused(t, &[&a, &b, &b], &["overlaps", &b_dir]);
    fs::remove_dir_all(&ab).unwrap();

    // Another seed, generation, preset or set of optional arrays.
    let other = t.join("other");
    write(&other, "track", 2, 4..7, 8, &none);
    refused(t, &[&a, &other, &c], &["`seed` = 2: expected 1", "other"]);
    fs::remove_dir_all(&other).unwrap();
    write_corpus_with(
        &other,
        &Preset::load("track").unwrap(),
        1,
        3,
        4..7,
        8,
        &none,
        Backend::Cpu(Launch::with_threads(1).unwrap()),
        &mut |_| {},
    )
    .unwrap();
    refused(t, &[&a, &other], &["`generation` = 3: expected 2"]);
    fs::remove_dir_all(&other).unwrap();
    write(&other, "karting", 1, 4..7, 8, &none);
    refused(
        t,
        &[&a, &other],
        &["`preset_source` = \"karting\"", "other"],
    );
    fs::remove_dir_all(&other).unwrap();
    write(&other, "track", 1, 4..7, 8, &extras());
    refused(
        t,
        &[&a, &other],
        &["`heightfield` = Some(", "expected None"],
    );
    fs::remove_dir_all(&other).unwrap();

    // A shard that is not a corpus, and one whose array was modified after it was written.
    refused(
        t,
        &[&a, &t.join("missing")],
        &["missing", "no such directory"],
    );
    let mut bytes = fs::read(b.join("length.npy")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(b.join("length.npy"), bytes).unwrap();
    refused(t, &[&a, &b, &c], &["length.npy", "SHA-256"]);

    // An existing output is never replaced.
    fs::create_dir(t.join("out")).unwrap();
    let err = merge_corpora(&t.join("out"), std::slice::from_ref(&a), 4, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
}

#[test]
fn cli_merge_writes_the_single_run_corpus() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let gen = |range: &str, out: &str| {
        let o = trackgen(
            &[
                "generate",
                "--preset",
                "karting",
                "--env-range",
                range,
                "--seed",
                "4",
                "--threads",
                "1",
                "--out",
                out,
            ],
            t,
        );
        assert!(o.status.success(), "{}", stderr(&o));
    };
    gen("0..21", "one");
    gen("0..8", "s0");
    gen("8..21", "s1");
    let o = trackgen(&["merge", "s1", "s0", "--out", "merged"], t);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("merged 2 shards into merged (envs 0..21)"),
        "{}",
        stdout(&o)
    );
    assert_eq!(files(&t.join("one")), files(&t.join("merged")));

    // Errors: exit 2, one `error:` line naming the problem, nothing written.
    let o = trackgen(&["merge", "s0", "--out", "merged"], t);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    let o = trackgen(&["merge", "s1", "--out", "s1/inside"], t);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is the input"), "{}", stderr(&o));
    let o = trackgen(&["merge", "s0", "s0", "--out", "twice"], t);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("overlaps"), "{}", stderr(&o));
    let o = trackgen(&["merge", "--out", "none"], t);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(entries(t), ["merged", "one", "s0", "s1"]);
}
