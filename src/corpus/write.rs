//! Writing a corpus: chunked generation, streamed NPY rows, atomic rename.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{IsTerminal, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};

use super::manifest::{
    array_shape, ArrayEntry, Manifest, Stats, ARRAYS, FORMAT, FORMAT_VERSION, GATE_ARRAYS,
    KIND_GATES,
};
use super::npy::NpyWriter;
use crate::course::{GateBatch, GatePipeline};
use crate::exec::Launch;
use crate::preset::Preset;
use crate::track::stats::ShapeAccumulator;
use crate::track::{Pipeline, TrackBatch};
use crate::{Error, Result};

/// The name of the manifest file inside a corpus directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The default number of envs generated per pipeline batch.
pub const DEFAULT_CHUNK_ENVS: usize = 4096;

/// Writes the corpus of envs `env_range` of `(preset, seed, generation)` into the new directory
/// `dir`, generating `chunk_envs` envs per batch, and returns its manifest.
///
/// A preset with a `[gates]` section writes a gate corpus (`kind = "gates"`, the arrays of
/// [`GATE_ARRAYS`](super::GATE_ARRAYS)); any other preset a track corpus ([`ARRAYS`](super::ARRAYS)).
///
/// `dir` must not exist (an existing one is an error naming it, never overwritten) and its parent
/// must be a writable directory. The corpus is built in the hidden sibling `.NAME.tmp-<pid>`, every
/// file fsynced, and renamed to `dir` at the end; on any error the temporary directory is
/// removed, so nothing half-written ever appears at `dir`. With `progress`, a progress bar is
/// drawn on stderr if stderr is a terminal. An empty `env_range` or `chunk_envs = 0` is an
/// [`Error::Invalid`].
#[allow(clippy::too_many_arguments)] // The corpus's identity is these values; a struct would only rename them.
pub fn write_corpus(
    dir: &Path,
    preset: &Preset,
    seed: u64,
    generation: u32,
    env_range: Range<u64>,
    chunk_envs: usize,
    launch: Launch,
    progress: bool,
) -> Result<Manifest> {
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
    let tmp_path = parent.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    fs::create_dir(&tmp_path).map_err(|e| {
        Error::io(
            dir,
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot create the temporary directory {}: {e}",
                    tmp_path.display()
                ),
            ),
        )
    })?;
    let tmp = TempDir {
        path: tmp_path,
        keep: false,
    };

    let manifest = write_into(
        &tmp.path, preset, seed, generation, env_range, chunk_envs, launch, progress,
    )?;

    sync_dir(&tmp.path)?;
    // Checked again because `rename` replaces an empty directory that appeared meanwhile.
    if dir.symlink_metadata().is_ok() {
        return Err(already_exists(dir));
    }
    fs::rename(&tmp.path, dir).map_err(|e| Error::io(dir, e))?;
    tmp.disarm();
    sync_dir(&parent)?;
    Ok(manifest)
}

fn already_exists(dir: &Path) -> Error {
    Error::Invalid(format!(
        "output {} already exists: refusing to overwrite it (remove it or choose another directory)",
        dir.display()
    ))
}

/// A directory removed on drop unless disarmed.
struct TempDir {
    path: PathBuf,
    keep: bool,
}

impl TempDir {
    fn disarm(mut self) {
        self.keep = true;
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            // Best effort: the error being reported matters more than a failed cleanup.
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// A pipeline and the batch it fills, for one chunk size.
enum Chunker {
    Track {
        pipeline: Box<Pipeline>,
        batch: TrackBatch,
    },
    Gates {
        pipeline: Box<GatePipeline>,
        batch: GateBatch,
    },
}

impl Chunker {
    fn new(preset: &Preset, n: usize, launch: Launch) -> Result<Self> {
        Ok(if preset.gates.is_some() {
            let pipeline = GatePipeline::new(preset, n, launch)?;
            let batch = pipeline.new_batch(0)?;
            Chunker::Gates {
                pipeline: Box::new(pipeline),
                batch,
            }
        } else {
            let pipeline = Pipeline::new(preset, n, launch)?;
            let batch = pipeline.new_batch(0)?;
            Chunker::Track {
                pipeline: Box::new(pipeline),
                batch,
            }
        })
    }

    fn generate(&mut self, seed: u64, generation: u32, env_base: u64) -> Result<()> {
        match self {
            Chunker::Track { pipeline, batch } => {
                batch.env_base = env_base;
                pipeline.generate(seed, generation, batch)
            }
            Chunker::Gates { pipeline, batch } => {
                batch.env_base = env_base;
                pipeline.generate(seed, generation, batch)
            }
        }
    }

    /// Appends the batch's rows to `writers` (one per array of the corpus kind, in order).
    fn append(&self, writers: &mut [NpyWriter], counts_i32: &mut Vec<i32>) -> Result<()> {
        match self {
            Chunker::Track { batch: b, .. } => {
                counts_i32.clear();
                counts_i32.extend(b.count.iter().map(|&c| c as i32));
                for (writer, &(name, _, _)) in writers.iter_mut().zip(ARRAYS) {
                    match name {
                        "center" => writer.append_f32(bytemuck::cast_slice(&b.center))?,
                        "outer" => writer.append_f32(bytemuck::cast_slice(&b.outer))?,
                        "inner" => writer.append_f32(bytemuck::cast_slice(&b.inner))?,
                        "tangent" => writer.append_f32(bytemuck::cast_slice(&b.tangent))?,
                        "normal" => writer.append_f32(bytemuck::cast_slice(&b.normal))?,
                        "arclen" => writer.append_f32(&b.arclen)?,
                        "count" => writer.append_i32(counts_i32)?,
                        "length" => writer.append_f32(&b.length)?,
                        "valid" => writer.append_u8(&b.valid)?,
                        "attempts" => writer.append_u8(&b.attempts)?,
                        other => unreachable!("array {other} has no source buffer"),
                    }
                }
            }
            Chunker::Gates { batch: b, .. } => {
                counts_i32.clear();
                counts_i32.extend(b.count.iter().map(|&c| c as i32));
                for (writer, &(name, _, _)) in writers.iter_mut().zip(GATE_ARRAYS) {
                    match name {
                        "gate_pos" => writer.append_f32(bytemuck::cast_slice(&b.pos))?,
                        "gate_quat" => writer.append_f32(bytemuck::cast_slice(&b.quat))?,
                        "gate_size" => writer.append_f32(bytemuck::cast_slice(&b.size))?,
                        "gate_count" => writer.append_i32(counts_i32)?,
                        "valid" => writer.append_u8(&b.valid)?,
                        "attempts" => writer.append_u8(&b.attempts)?,
                        other => unreachable!("array {other} has no source buffer"),
                    }
                }
            }
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
    launch: Launch,
    progress: bool,
) -> Result<Manifest> {
    let n_envs = env_range.end - env_range.start;
    let (array_list, kind, n_max) = match &preset.gates {
        Some(g) => (
            GATE_ARRAYS,
            Some(KIND_GATES.to_string()),
            u64::from(g.max_gates),
        ),
        None => (ARRAYS, None, u64::from(preset.track.n_max)),
    };
    let mut writers = array_list
        .iter()
        .map(|&(name, dtype, per_point)| {
            let path = tmp.join(format!("{name}.npy"));
            NpyWriter::create(&path, dtype, &array_shape(per_point, n_envs, n_max))
        })
        .collect::<Result<Vec<_>>>()?;

    let chunk = usize::try_from(n_envs).map_or(chunk_envs, |n| n.min(chunk_envs));
    let tail = usize::try_from(n_envs % chunk as u64).expect("the tail is smaller than a chunk");
    let mut full = Chunker::new(preset, chunk, launch.clone())?;
    let mut last = if tail > 0 {
        Some(Chunker::new(preset, tail, launch.clone())?)
    } else {
        None
    };

    let bar = if progress && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(n_envs);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} envs ({per_sec}, eta {eta})",
            )
            .expect("the progress template is valid"),
        );
        bar
    } else {
        ProgressBar::hidden()
    };

    let mut sums = Sums {
        half_width_m: preset.track.half_width_m,
        shape: preset.gates.is_none().then(ShapeAccumulator::default),
        ..Sums::default()
    };
    let mut counts_i32 = Vec::with_capacity(chunk);
    let mut start = env_range.start;
    while start < env_range.end {
        let n = (env_range.end - start).min(chunk as u64) as usize;
        let chunker = if n == chunk {
            &mut full
        } else {
            last.as_mut().expect("a short chunk is the tail")
        };
        chunker.generate(seed, generation, start)?;
        chunker.append(&mut writers, &mut counts_i32)?;
        sums.add(chunker);
        start += n as u64;
        bar.inc(n as u64);
    }
    bar.finish_and_clear();

    let mut arrays = BTreeMap::new();
    for (writer, &(name, dtype, per_point)) in writers.into_iter().zip(array_list) {
        let sha256 = writer.finish()?;
        arrays.insert(
            name.to_string(),
            ArrayEntry {
                file: format!("{name}.npy"),
                dtype: dtype.descr().to_string(),
                shape: array_shape(per_point, n_envs, n_max),
                sha256,
            },
        );
    }
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
    };
    let path = tmp.join(MANIFEST_FILE);
    let mut text = serde_json::to_string_pretty(&manifest).expect("a manifest serialises");
    text.push('\n');
    let mut file = File::options()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&path, e))?;
    Ok(manifest)
}

/// Running sums for [`Stats`], accumulated in env order (so the result is deterministic).
#[derive(Default)]
struct Sums {
    valid: u64,
    count: u64,
    attempts: u64,
    length_m: f64,
    half_width_m: f32,
    /// Per-track shapes of a track corpus.
    shape: Option<ShapeAccumulator>,
}

impl Sums {
    fn add(&mut self, chunker: &Chunker) {
        let (valid, count, attempts) = match chunker {
            Chunker::Track { batch, .. } => (&batch.valid, &batch.count, &batch.attempts),
            Chunker::Gates { batch, .. } => (&batch.valid, &batch.count, &batch.attempts),
        };
        self.valid += valid.iter().map(|&v| u64::from(v != 0)).sum::<u64>();
        self.count += count.iter().map(|&c| u64::from(c)).sum::<u64>();
        self.attempts += attempts.iter().map(|&a| u64::from(a)).sum::<u64>();
        match chunker {
            Chunker::Track { batch, .. } => {
                for &l in &batch.length {
                    self.length_m += f64::from(l);
                }
                if let Some(shape) = &mut self.shape {
                    shape.add_batch(batch, self.half_width_m);
                }
            }
            Chunker::Gates { batch, .. } => {
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
        }
    }

    fn stats(self, n_envs: u64) -> Stats {
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
