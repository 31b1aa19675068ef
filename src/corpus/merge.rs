//! Merging shards: corpora of consecutive env ranges of one `(preset, seed, generation)` into
//! one corpus, byte-identical to the corpus a single run writes for the whole range.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::manifest::Manifest;
use super::read::Corpus;
use super::write::{
    extra_fields, in_new_dir, write_manifest, ArrayWriters, Progress, Sums, MANIFEST_FILE,
};
use crate::exec::layout::Layout;
use crate::preset::Preset;
use crate::{Error, Result};

/// The default number of rows [`merge_corpora`] reads and appends at a time.
pub const DEFAULT_MERGE_ROWS: u64 = 4096;

/// Merges the shard corpora in `shards` (in any order) into the new corpus directory `out` and
/// returns its manifest.
///
/// The shards must be corpora of one `(preset, seed, generation)`, written by one crate version
/// with the same optional arrays, whose env ranges tile one range `[a, b)` without gap or overlap
/// (`trackgen generate --env-range` shards). Every shard is opened and its checksums verified
/// first; a shard that disagrees is an [`Error::Invalid`] naming its directory, the manifest
/// key, its value and the expected one (the first shard's, in env order).
///
/// The merged corpus holds envs `[a, b)` and is byte for byte the corpus that one
/// [`write_corpus_with`](super::write_corpus_with) of `[a, b)` writes — every array file and
/// `manifest.json`, whose statistics are recomputed from the rows in env order as the writer
/// accumulates them. Rows are copied `chunk_rows` at a time (memory: one chunk), and `out` is
/// written like a generated corpus: built in a hidden sibling and renamed into place, so it is
/// complete or absent. `progress` is called after every chunk and once at the end
/// (`done_envs` counts merged rows; `generate_s` is the time spent verifying and reading the
/// shards and accumulating the statistics, `write_s` writing).
pub fn merge_corpora(
    out: &Path,
    shards: &[PathBuf],
    chunk_rows: u64,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Manifest> {
    if shards.is_empty() {
        return Err(Error::Invalid(
            "no shards to merge: expected at least one corpus directory".into(),
        ));
    }
    if chunk_rows == 0 {
        return Err(Error::Invalid(
            "chunk_rows = 0: expected at least 1 row per chunk".into(),
        ));
    }
    let started = Instant::now();
    let mut corpora = shards
        .iter()
        .map(|dir| Corpus::open(dir))
        .collect::<Result<Vec<_>>>()?;
    corpora.sort_by_key(|c| c.manifest().env_range);
    check_shards(&corpora)?;
    let first = corpora[0].manifest();
    let preset =
        Preset::parse(&first.preset_toml, &first.preset_source).map_err(|e| Error::Format {
            path: corpora[0].dir().join(MANIFEST_FILE),
            message: format!("`preset_toml`: {e}"),
        })?;
    let range = [
        first.env_range[0],
        corpora[corpora.len() - 1].manifest().env_range[1],
    ];
    let mut report = Progress {
        total_envs: range[1] - range[0],
        ..Progress::default()
    };
    for corpus in &corpora {
        corpus.verify_checksums()?;
    }
    report.generate_s += started.elapsed().as_secs_f64();

    let (manifest, report) = in_new_dir(out, |tmp| {
        let mut merged = first.clone();
        merged.env_range = range;
        let sets = merged
            .array_sets()
            .expect("opened corpora have a known kind");
        let mut writers = ArrayWriters::create(tmp, &sets, report.total_envs)?;
        let mut sums = Sums::new(&preset);
        for corpus in &corpora {
            let m = corpus.manifest();
            let mut row = 0;
            while row < m.n_envs() {
                let rows = row..(row + chunk_rows).min(m.n_envs());
                let t = Instant::now();
                let tracks = (!corpus.is_gates())
                    .then(|| corpus.read_rows(rows.clone()))
                    .transpose()?;
                let gates = corpus
                    .is_gates()
                    .then(|| corpus.read_gate_rows(rows.clone()))
                    .transpose()?;
                let heightfields = m
                    .heightfield
                    .map(|_| corpus.read_heightfields(rows.clone()))
                    .transpose()?;
                let props = m
                    .props
                    .map(|_| corpus.read_props(rows.clone()))
                    .transpose()?;
                report.generate_s += t.elapsed().as_secs_f64();
                let t = Instant::now();
                writers.append(|write| {
                    if let Some(b) = &tracks {
                        Layout::for_each_field(b, &mut *write);
                    }
                    if let Some(b) = &gates {
                        Layout::for_each_field(b, &mut *write);
                    }
                    extra_fields(heightfields.as_ref(), props.as_ref(), &mut *write);
                })?;
                report.write_s += t.elapsed().as_secs_f64();
                let t = Instant::now();
                if let Some(b) = &tracks {
                    sums.add_tracks(b);
                }
                if let Some(b) = &gates {
                    sums.add_gates(b);
                }
                report.generate_s += t.elapsed().as_secs_f64();
                report.done_envs += rows.end - rows.start;
                row = rows.end;
                progress(&report);
            }
        }
        let t = Instant::now();
        merged.arrays = writers.finish()?;
        merged.stats = sums.stats(report.total_envs);
        write_manifest(tmp, &merged)?;
        report.write_s += t.elapsed().as_secs_f64();
        Ok((merged, report))
    })?;
    progress(&report);
    Ok(manifest)
}

/// Checks that `corpora` (sorted by env range) agree on everything but their env ranges and
/// tile one range without gap or overlap.
fn check_shards(corpora: &[Corpus]) -> Result<()> {
    let first = &corpora[0];
    let m0 = first.manifest();
    for (i, corpus) in corpora.iter().enumerate().skip(1) {
        let m = corpus.manifest();
        let differs = |key: &str, value: String, expected: String| {
            Error::Invalid(format!(
                "shard {}: `{key}` = {value}: expected {expected} (as shard {}); shards of one \
                 corpus share the preset, seed, generation, writer version and optional arrays",
                corpus.dir().display(),
                first.dir().display()
            ))
        };
        macro_rules! same {
            ($($key:ident),*) => {$(
                if m.$key != m0.$key {
                    return Err(differs(
                        stringify!($key),
                        format!("{:?}", m.$key),
                        format!("{:?}", m0.$key),
                    ));
                }
            )*};
        }
        same!(
            format_version,
            crate_version,
            preset_source,
            preset_sha256,
            kind,
            seed,
            generation,
            n_max,
            heightfield,
            props
        );
        if m.preset_toml != m0.preset_toml {
            return Err(differs(
                "preset_toml",
                "a different resolved preset".into(),
                "the same text".into(),
            ));
        }
        let prev = &corpora[i - 1];
        let [a, b] = prev.manifest().env_range;
        let [c, d] = m.env_range;
        if c < b {
            return Err(Error::Invalid(format!(
                "shard {} (envs {c}..{d}) overlaps shard {} (envs {a}..{b}): expected shards \
                 of disjoint env ranges",
                corpus.dir().display(),
                prev.dir().display()
            )));
        }
        if c > b {
            return Err(Error::Invalid(format!(
                "envs {b}..{c} are in no shard: shard {} ends at env {b} and the next, {}, \
                 starts at env {c} (expected consecutive env ranges)",
                prev.dir().display(),
                corpus.dir().display()
            )));
        }
    }
    Ok(())
}
