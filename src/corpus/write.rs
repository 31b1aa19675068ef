//! Writing a corpus: chunked generation, streamed NPY rows, atomic rename.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::manifest::{
    arrays_for, stored, ArrayEntry, ArraySet, CorpusExtras, Manifest, Stats, FORMAT,
    FORMAT_VERSION, KIND_GATES,
};
use super::npy::NpyWriter;
use crate::atomic::TempPath;
use crate::course::{Courses, GateBatch, Heightfields, Props};
use crate::exec::layout::{Field, Layout, NpyArray};
use crate::exec::plan::Backend;
use crate::exec::Launch;
use crate::preset::Preset;
use crate::track::stats::ShapeAccumulator;
use crate::track::TrackBatch;
use crate::{Error, Result};

/// The name of the manifest file inside a corpus directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The default number of envs generated per pipeline batch.
pub const DEFAULT_CHUNK_ENVS: usize = 4096;

/// Bytes of the array files of a corpus of `n_envs` envs of `preset` (the small NPY headers and
/// the manifest aside): what [`write_corpus`] will write, known before it starts. Saturates at
/// `u64::MAX`.
pub fn corpus_bytes(preset: &Preset, n_envs: u64) -> u64 {
    let (kind, n_max) = match &preset.gates {
        Some(g) => (Some(KIND_GATES), u64::from(g.max_gates)),
        None => (None, u64::from(preset.track.n_max)),
    };
    let fields = arrays_for(kind).expect("track and gate corpora have array tables");
    stored(fields)
        .map(|(field, array)| {
            field
                .npy_shape(n_envs, n_max)
                .expect("stored fields have an array")
                .iter()
                .fold(array.dtype.size() as u64, |acc, &d| acc.saturating_mul(d))
        })
        .fold(0u64, u64::saturating_add)
}

/// Bytes of the optional arrays `extras` adds to a corpus of `n_envs` envs (headers aside).
/// Saturates at `u64::MAX`.
pub fn extras_bytes(extras: &CorpusExtras, n_envs: u64) -> u64 {
    extras
        .sets()
        .iter()
        .flat_map(|set| {
            stored(set.fields).map(move |(field, array)| {
                set.shape(field, n_envs)
                    .iter()
                    .fold(array.dtype.size() as u64, |acc, &d| acc.saturating_mul(d))
            })
        })
        .fold(0u64, u64::saturating_add)
}

/// How far [`write_corpus`] has come: passed to its progress callback after every chunk, and once
/// more when the corpus is in place (then `done_envs == total_envs` and `write_s` includes the
/// checksums, fsyncs and the rename).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Envs generated and written so far.
    pub done_envs: u64,
    /// Envs of the whole corpus.
    pub total_envs: u64,
    /// Seconds spent generating so far.
    pub generate_s: f64,
    /// Seconds spent writing so far (appending rows, checksums, fsync, rename).
    pub write_s: f64,
}

/// Writes the corpus of envs `env_range` of `(preset, seed, generation)` into the new directory
/// `dir`, generating `chunk_envs` envs per batch, and returns its manifest.
///
/// A preset with a `[gates]` section writes a gate corpus (`kind = "gates"`, the `npy` arrays of
/// [`GateBatch`](crate::course::GateBatch)); any other preset a track corpus (those of
/// [`TrackBatch`](crate::track::TrackBatch)).
///
/// `dir` must not exist (an existing one is an error naming it, never overwritten) and its parent
/// must be a writable directory. The corpus is built in the hidden sibling `.NAME.tmp-<pid>`, every
/// file fsynced, and renamed to `dir` at the end; on any error the temporary directory is
/// removed, so nothing half-written ever appears at `dir`. `progress` is called after every chunk
/// and once at the end ([`Progress`]); the library draws nothing itself. An empty `env_range` or
/// `chunk_envs = 0` is an [`Error::Invalid`].
#[allow(clippy::too_many_arguments)] // The corpus's identity is these values; a struct would only rename them.
pub fn write_corpus(
    dir: &Path,
    preset: &Preset,
    seed: u64,
    generation: u32,
    env_range: Range<u64>,
    chunk_envs: usize,
    launch: Launch,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Manifest> {
    write_corpus_with(
        dir,
        preset,
        seed,
        generation,
        env_range,
        chunk_envs,
        &CorpusExtras::default(),
        Backend::Cpu(launch),
        progress,
    )
}

/// [`write_corpus`] with the optional arrays `extras` asks for (heightfields, props; see the
/// [module](super) table), each env's a pure function of `(preset, seed, env, generation)` and
/// the extras' settings like every other array, with the track pipeline on `backend` (the CPU,
/// the emulated CUDA kernels or a GPU: the same bytes). Extras on a gate preset are an
/// [`Error::Invalid`] (a gate course has no road).
#[allow(clippy::too_many_arguments)] // As `write_corpus`, plus the extras.
pub fn write_corpus_with(
    dir: &Path,
    preset: &Preset,
    seed: u64,
    generation: u32,
    env_range: Range<u64>,
    chunk_envs: usize,
    extras: &CorpusExtras,
    backend: Backend,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Manifest> {
    if preset.gates.is_some() && !extras.is_empty() {
        return Err(Error::Invalid(format!(
            "preset {} is a gate preset: heightfields and props are for track corpora (a gate \
             course has no road)",
            preset.source
        )));
    }
    if let Some(h) = &extras.heightfield {
        h.check()?;
    }
    if let Some(p) = &extras.props {
        p.check()?;
    }
    if env_range.start >= env_range.end {
        return Err(Error::Invalid(format!(
            "env range {}..{} is empty: expected start < end",
            env_range.start, env_range.end
        )));
    }
    if chunk_envs == 0 {
        return Err(Error::Invalid(
            "chunk_envs = 0: expected at least 1 env per chunk".into(),
        ));
    }
    let (manifest, report) = in_new_dir(dir, |tmp| {
        write_into(
            tmp, preset, seed, generation, env_range, chunk_envs, extras, backend, progress,
        )
    })?;
    progress(&report);
    Ok(manifest)
}

/// Builds a corpus with `build` in the hidden sibling `.NAME.tmp-<pid>` of the new directory
/// `dir` and renames it into place (after fsyncing the directory; the time this takes is added
/// to the returned [`Progress::write_s`]). `dir` must not exist; on any error the temporary
/// directory is removed, so nothing half-written ever appears at `dir`.
pub(super) fn in_new_dir(
    dir: &Path,
    build: impl FnOnce(&Path) -> Result<(Manifest, Progress)>,
) -> Result<(Manifest, Progress)> {
    let name = dir.file_name().ok_or_else(|| {
        Error::Invalid(format!(
            "output path {:?} has no final directory name",
            dir.display().to_string()
        ))
    })?;
    if dir.symlink_metadata().is_ok() {
        return Err(already_exists(dir));
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = TempPath::new(parent.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    )));
    fs::create_dir(tmp.path()).map_err(|e| {
        Error::io(
            dir,
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot create the temporary directory {}: {e}",
                    tmp.path().display()
                ),
            ),
        )
    })?;

    let (manifest, mut report) = build(tmp.path())?;

    let started = Instant::now();
    sync_dir(tmp.path())?;
    // Checked again because `rename` replaces an empty directory that appeared meanwhile.
    if dir.symlink_metadata().is_ok() {
        return Err(already_exists(dir));
    }
    fs::rename(tmp.path(), dir).map_err(|e| Error::io(dir, e))?;
    tmp.keep();
    sync_dir(&parent)?;
    report.write_s += started.elapsed().as_secs_f64();
    Ok((manifest, report))
}

fn already_exists(dir: &Path) -> Error {
    Error::Invalid(format!(
        "output {} already exists: refusing to overwrite it (remove it or choose another directory)",
        dir.display()
    ))
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// The array files of a corpus being written: one NPY writer per stored array of its array
/// sets, in order, each with its array and shape.
pub(super) struct ArrayWriters {
    writers: Vec<NpyWriter>,
    arrays: Vec<(NpyArray, Vec<u64>)>,
}

impl ArrayWriters {
    /// Creates the files of every stored array of `sets` in a corpus of `n_envs` rows in `tmp`
    /// (each header with its final shape).
    pub(super) fn create(tmp: &Path, sets: &[ArraySet], n_envs: u64) -> Result<Self> {
        let arrays: Vec<_> = sets
            .iter()
            .flat_map(|set| {
                stored(set.fields).map(move |(field, array)| (array, set.shape(field, n_envs)))
            })
            .collect();
        let writers = arrays
            .iter()
            .map(|(array, shape)| {
                let path = tmp.join(format!("{}.npy", array.name));
                NpyWriter::create(&path, array.dtype, shape)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { writers, arrays })
    }

    /// Appends the stored buffers that `batches` passes to its callback (field by field, in
    /// the order of the array sets), one per stored array.
    pub(super) fn append(
        &mut self,
        batches: impl FnOnce(&mut dyn FnMut(&'static Field, &[u8])),
    ) -> Result<()> {
        let mut writers = self.writers.iter_mut();
        let mut result = Ok(());
        batches(&mut |field, bytes| {
            if field.npy.is_some() && result.is_ok() {
                let writer = writers.next().expect("one writer per stored array");
                result = writer.append_native(bytes);
            }
        });
        result
    }

    /// Appends one chunk's courses and extras.
    fn append_chunk(&mut self, courses: &Courses, extras: &Extras) -> Result<()> {
        self.append(|write| {
            courses.for_each_field(&mut *write);
            extra_fields(
                extras.heightfields.as_ref(),
                extras.props.as_ref(),
                &mut *write,
            );
        })
    }

    /// Finishes every file (flush, fsync) and returns the manifest's array entries.
    pub(super) fn finish(self) -> Result<BTreeMap<String, ArrayEntry>> {
        let mut entries = BTreeMap::new();
        for (writer, (array, shape)) in self.writers.into_iter().zip(self.arrays) {
            let sha256 = writer.finish()?;
            entries.insert(
                array.name.to_string(),
                ArrayEntry {
                    file: format!("{}.npy", array.name),
                    dtype: array.dtype.descr().to_string(),
                    shape,
                    sha256,
                },
            );
        }
        Ok(entries)
    }
}

/// Writes `manifest` as `manifest.json` (pretty JSON, a final newline) into `tmp`, fsynced.
pub(super) fn write_manifest(tmp: &Path, manifest: &Manifest) -> Result<()> {
    let path = tmp.join(MANIFEST_FILE);
    let mut text = serde_json::to_string_pretty(manifest).expect("a manifest serialises");
    text.push('\n');
    let mut file = File::options()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&path, e))
}

/// Hands the optional arrays' fields to `write`, in the order of the corpus's array set.
pub(super) fn extra_fields(
    heightfields: Option<&Heightfields>,
    props: Option<&Props>,
    write: &mut dyn FnMut(&'static Field, &[u8]),
) {
    if let Some(h) = heightfields {
        Layout::for_each_field(&h.grid, &mut *write);
        Layout::for_each_field(&h.bounds, &mut *write);
    }
    if let Some(p) = props {
        Layout::for_each_field(&p.batch, &mut *write);
    }
}

/// The optional batches of one chunk, computed from its tracks.
struct Extras {
    heightfields: Option<Heightfields>,
    props: Option<Props>,
    all: Vec<u8>,
}

impl Extras {
    fn new(extras: &CorpusExtras, n_envs: usize) -> Result<Self> {
        Ok(Self {
            heightfields: extras
                .heightfield
                .map(|h| Heightfields::new(h, n_envs, 0))
                .transpose()?,
            props: extras.props.map(|p| Props::new(p, n_envs, 0)).transpose()?,
            all: vec![1; n_envs],
        })
    }

    /// Computes every env's extras from `courses` (envs from `env_base`).
    fn compute(&mut self, courses: &Courses, env_base: u64, launch: &Launch) -> Result<()> {
        let tracks = courses.tracks();
        if let Some(h) = self.heightfields.as_mut() {
            h.set_env_base(env_base);
            h.bake(tracks, &self.all, launch)?;
        }
        if let Some(p) = self.props.as_mut() {
            p.batch.env_base = env_base;
            p.place(tracks, &self.all, launch)?;
        }
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)] // Same values as `write_corpus`.
fn write_into(
    tmp: &Path,
    preset: &Preset,
    seed: u64,
    generation: u32,
    env_range: Range<u64>,
    chunk_envs: usize,
    extras: &CorpusExtras,
    backend: Backend,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(Manifest, Progress)> {
    let launch = backend.launch().clone();
    let n_envs = env_range.end - env_range.start;
    let (kind, n_max) = match &preset.gates {
        Some(g) => (Some(KIND_GATES.to_string()), u64::from(g.max_gates)),
        None => (None, u64::from(preset.track.n_max)),
    };
    let chunk = usize::try_from(n_envs).map_or(chunk_envs, |n| n.min(chunk_envs));
    let tail = usize::try_from(n_envs % chunk as u64).expect("the tail is smaller than a chunk");
    let mut full = Courses::on_backend(preset, chunk, 0, backend.clone())?;
    let mut last = if tail > 0 {
        Some((
            Courses::on_backend(preset, tail, 0, backend.clone())?,
            Extras::new(extras, tail)?,
        ))
    } else {
        None
    };
    let mut full_extras = Extras::new(extras, chunk)?;
    let mut sets = vec![ArraySet {
        fields: full.fields(),
        capacity: n_max,
        grid: None,
    }];
    sets.extend(extras.sets());
    let mut writers = ArrayWriters::create(tmp, &sets, n_envs)?;

    let mut report = Progress {
        total_envs: n_envs,
        ..Progress::default()
    };
    let mut sums = Sums::new(preset);
    let mut start = env_range.start;
    while start < env_range.end {
        let n = (env_range.end - start).min(chunk as u64) as usize;
        let (courses, extra) = if n == chunk {
            (&mut full, &mut full_extras)
        } else {
            let (c, x) = last.as_mut().expect("a short chunk is the tail");
            (c, x)
        };
        courses.set_env_base(start);
        let t = Instant::now();
        courses.generate(seed, generation)?;
        extra.compute(courses, start, &launch)?;
        report.generate_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        writers.append_chunk(courses, extra)?;
        report.write_s += t.elapsed().as_secs_f64();
        sums.add(courses);
        start += n as u64;
        report.done_envs += n as u64;
        progress(&report);
    }
    let finishing = Instant::now();

    let arrays = writers.finish()?;
    let manifest = Manifest {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        crate_version: env!("CARGO_PKG_VERSION").to_string(),
        preset_source: preset.source.clone(),
        preset_toml: preset.resolved_toml().to_string(),
        preset_sha256: preset.hash(),
        kind,
        seed,
        generation,
        env_range: [env_range.start, env_range.end],
        n_max,
        arrays,
        stats: sums.stats(n_envs),
        heightfield: extras.heightfield,
        props: extras.props,
    };
    write_manifest(tmp, &manifest)?;
    report.write_s += finishing.elapsed().as_secs_f64();
    Ok((manifest, report))
}

/// Running sums for [`Stats`], accumulated env by env in env order (so the result is
/// deterministic, and the same whatever the chunks the envs come in).
#[derive(Default)]
pub(super) struct Sums {
    valid: u64,
    count: u64,
    attempts: u64,
    length_m: f64,
    half_width_m: f32,
    /// Per-track shapes of a track corpus.
    shape: Option<ShapeAccumulator>,
}

impl Sums {
    /// Empty sums for a corpus of `preset`.
    pub(super) fn new(preset: &Preset) -> Self {
        Self {
            half_width_m: preset.track.half_width_m,
            shape: preset.gates.is_none().then(ShapeAccumulator::default),
            ..Self::default()
        }
    }

    fn add(&mut self, courses: &Courses) {
        match courses {
            Courses::Track { batch, .. } => self.add_tracks(batch),
            Courses::Gates { batch, .. } => self.add_gates(batch),
        }
    }

    fn add_counts(&mut self, valid: &[u8], count: &[u32], attempts: &[u8]) {
        self.valid += valid.iter().map(|&v| u64::from(v != 0)).sum::<u64>();
        self.count += count.iter().map(|&c| u64::from(c)).sum::<u64>();
        self.attempts += attempts.iter().map(|&a| u64::from(a)).sum::<u64>();
    }

    /// Adds the envs of a track batch, in order.
    pub(super) fn add_tracks(&mut self, batch: &TrackBatch) {
        self.add_counts(&batch.valid, &batch.count, &batch.attempts);
        for &l in &batch.length {
            self.length_m += f64::from(l);
        }
        if let Some(shape) = &mut self.shape {
            shape.add_batch(batch, self.half_width_m);
        }
    }

    /// Adds the envs of a gate batch, in order.
    pub(super) fn add_gates(&mut self, batch: &GateBatch) {
        self.add_counts(&batch.valid, &batch.count, &batch.attempts);
        for e in 0..batch.n_envs {
            let pos = batch.gates(&batch.pos, e);
            let mut length = 0.0f64;
            for (i, p) in pos.iter().enumerate() {
                let q = pos[(i + 1) % pos.len()];
                let d: f64 = (0..3).map(|k| f64::from(q[k] - p[k]).powi(2)).sum();
                length += d.sqrt();
            }
            self.length_m += length;
        }
    }

    /// The statistics of the `n_envs` envs added.
    pub(super) fn stats(self, n_envs: u64) -> Stats {
        let n = n_envs as f64;
        Stats {
            valid_fraction: self.valid as f64 / n,
            mean_count: self.count as f64 / n,
            mean_length_m: self.length_m / n,
            mean_attempts: self.attempts as f64 / n,
            shape: self.shape.map(ShapeAccumulator::finish),
        }
    }
}
