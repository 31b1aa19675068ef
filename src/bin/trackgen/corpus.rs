//! The corpus commands: `generate` (a corpus of tracks or gate courses), `merge` (shards into
//! one corpus) and `preview` (a PNG contact sheet of its first envs).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use trackgen::atomic::TempPath;
use trackgen::corpus::{
    corpus_bytes, extras_bytes, merge_corpora, write_corpus_with, Corpus, CorpusExtras,
    DEFAULT_CHUNK_ENVS, DEFAULT_MERGE_ROWS, MANIFEST_FILE,
};
use trackgen::course::{HeightfieldConfig, PropConfig, PropKind, Side};
use trackgen::exec::plan::{Backend, Device};
use trackgen::exec::Launch;
use trackgen::preset::{Preset, DEFAULT};
use trackgen::render::{contact_sheet, gate_sheet, sheet_bytes, write_png};
use trackgen::{Error, Result};

use crate::args::{parse_props, parse_range};
use crate::limits::{check_memory, check_space, parent_dir};
use crate::output::{check_output, emit, grouped, threads_label};
use crate::progress::Progress;

#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// Built-in preset name or path to a preset TOML file.
    #[arg(long, default_value = DEFAULT, value_name = "NAME|PATH")]
    pub preset: String,
    /// Corpus size N: envs 0..N. With --env-range it may be omitted; if given it must be ≥ B.
    #[arg(long, value_name = "N")]
    pub envs: Option<u64>,
    /// Seed of every env's random streams.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Generation counter of every env.
    #[arg(long, default_value_t = 0)]
    pub generation: u32,
    /// Write only global envs A..B (a shard; rows equal those of the full corpus).
    #[arg(long, value_name = "A..B", value_parser = parse_range)]
    pub env_range: Option<Range<u64>>,
    /// Worker threads (0 = all cores; default: RAYON_NUM_THREADS or all cores).
    #[arg(long, value_name = "T")]
    pub threads: Option<usize>,
    /// Envs generated per batch (memory is one batch).
    #[arg(long, default_value_t = DEFAULT_CHUNK_ENVS, value_name = "N")]
    pub chunk_envs: usize,
    /// Where the track pipeline runs: `cpu`, `emulated` (the CUDA kernels compiled for the host)
    /// or `cuda[:N]`; every device writes the same bytes. A device that cannot be used is an
    /// error before anything is written.
    #[arg(long, default_value = "cpu", value_name = "DEVICE")]
    pub device: Device,
    /// Output directory; must not exist unless --force.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace an existing corpus at --out (only a trackgen corpus directory is replaced; the old
    /// one stays in place until the new one is complete).
    #[arg(long)]
    pub force: bool,
    /// Skip the check that the output's file system has room for the corpus.
    #[arg(long)]
    pub no_space_check: bool,
    /// Also bake a road heightfield of R × R texels per env (heightfield.npy [N, R, R],
    /// heightfield_bounds.npy [N, 2, 2]); track presets only.
    #[arg(long, value_name = "R")]
    pub heightfield: Option<u32>,
    /// Margin of the heightfield around the band's bounding box, metres.
    #[arg(
        long,
        default_value_t = 5.0,
        value_name = "M",
        requires = "heightfield"
    )]
    pub heightfield_margin: f32,
    /// Also place boundary props per env: SIDE:KIND:SPACING, e.g. outer:point:5 (cones every
    /// ~5 m on the outer border) or inner:segment:4 (wall pieces); prop_pos, prop_quat,
    /// prop_length, prop_count arrays. Track presets only.
    #[arg(long, value_name = "SIDE:KIND:SPACING", value_parser = parse_props)]
    pub props: Option<(Side, PropKind, f32)>,
    /// Prop capacity per env, P (the spacing widens when a border needs more).
    #[arg(long, default_value_t = 512, value_name = "P", requires = "props")]
    pub props_max: u32,
}

#[derive(clap::Args, Debug)]
pub struct PreviewArgs {
    /// Corpus directory.
    pub dir: PathBuf,
    /// Output PNG file; must not exist unless --force, never inside the corpus.
    #[arg(long, value_name = "PNG")]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
    /// Tracks to draw (the corpus's first rows).
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max: usize,
    /// Side of each cell, pixels.
    #[arg(long, default_value_t = 256, value_name = "PX")]
    pub cell: u32,
}

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// Shard corpus directories, in any order: their env ranges must tile one range without gap
    /// or overlap, and they must share preset, seed, generation and optional arrays.
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// Output directory of the merged corpus; must not exist.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Rows copied at a time (memory is one chunk of rows).
    #[arg(long, default_value_t = DEFAULT_MERGE_ROWS, value_name = "N")]
    pub chunk_rows: u64,
    /// Skip the check that the output's file system has room for the corpus.
    #[arg(long)]
    pub no_space_check: bool,
}

/// Runs `trackgen merge`.
pub fn merge(args: MergeArgs) -> Result<()> {
    if args.chunk_rows == 0 {
        return Err(Error::Invalid("--chunk-rows 0: expected at least 1".into()));
    }
    let inputs: Vec<&Path> = args.shards.iter().map(PathBuf::as_path).collect();
    check_output("--out", &args.out, &inputs, false)?;
    let mut total = 0u64;
    let mut row_bytes = 0u128;
    for dir in &args.shards {
        let m = Corpus::open(dir)?.manifest().clone();
        total += m.n_envs();
        row_bytes = row_bytes.max(u128::from(bytes_written(&m)) / u128::from(m.n_envs().max(1)));
    }
    check_memory(
        &format!("--chunk-rows {}", args.chunk_rows),
        Some(row_bytes * u128::from(args.chunk_rows.min(total)) * 2),
    )?;
    if !args.no_space_check {
        check_space(
            &format!("merge of {total} envs"),
            &args.out,
            row_bytes * u128::from(total),
            "--no-space-check",
        )?;
    }
    let started = Instant::now();
    let mut bar = Progress::new(total, "envs");
    let mut last = trackgen::corpus::Progress::default();
    let merged = merge_corpora(&args.out, &args.shards, args.chunk_rows, &mut |p| {
        last = *p;
        bar.update(p.done_envs);
    });
    bar.finish();
    let manifest = merged?;
    let [a, b] = manifest.env_range;
    emit(&format!(
        "merged {} shards into {} (envs {a}..{b}): valid {:.4}; {:.2} s: verifying, reading and \
         statistics {:.2} s, writing {:.2} s ({:.0} MB/s, fsync included)\n",
        args.shards.len(),
        args.out.display(),
        manifest.stats.valid_fraction,
        started.elapsed().as_secs_f64(),
        last.generate_s,
        last.write_s,
        bytes_written(&manifest) as f64 / 1e6 / last.write_s.max(1e-9),
    ))
}

/// Runs `trackgen generate`.
pub fn generate(args: GenerateArgs) -> Result<()> {
    let range = match (args.env_range, args.envs) {
        (_, Some(0)) => return Err(Error::Invalid("--envs 0: expected at least 1 env".into())),
        (Some(r), Some(n)) if r.end > n => {
            return Err(Error::Invalid(format!(
                "--env-range {}..{} ends past --envs {n}: expected B ≤ N",
                r.start, r.end
            )))
        }
        (Some(r), _) => r,
        (None, Some(n)) => 0..n,
        (None, None) => {
            return Err(Error::Invalid(
                "give --envs N (envs 0..N) or --env-range A..B".into(),
            ))
        }
    };
    if args.chunk_envs == 0 {
        return Err(Error::Invalid("--chunk-envs 0: expected at least 1".into()));
    }
    let preset_path = Path::new(&args.preset);
    let inputs: Vec<&Path> = if preset_path.exists() {
        vec![preset_path]
    } else {
        Vec::new()
    };
    check_output("--out", &args.out, &inputs, args.force)?;
    let replaced = args.out.symlink_metadata().is_ok();
    if replaced && !args.out.join(MANIFEST_FILE).is_file() {
        return Err(Error::Invalid(format!(
            "--force: {} is not a trackgen corpus directory (no {MANIFEST_FILE}): refusing to \
             replace it",
            args.out.display()
        )));
    }
    let preset = Preset::load(&args.preset)?;
    let extras = CorpusExtras {
        heightfield: args.heightfield.map(|resolution| HeightfieldConfig {
            resolution,
            margin_m: args.heightfield_margin,
        }),
        props: args.props.map(|(side, kind, spacing_m)| PropConfig {
            side,
            kind,
            spacing_m,
            max_props: args.props_max,
        }),
    };
    if let Some(h) = &extras.heightfield {
        h.check()
            .map_err(|e| Error::Invalid(format!("--heightfield / --heightfield-margin: {e}")))?;
    }
    if let Some(p) = &extras.props {
        p.check()
            .map_err(|e| Error::Invalid(format!("--props / --props-max: {e}")))?;
    }
    let n_envs = range.end - range.start;
    let chunk = n_envs.min(args.chunk_envs as u64);
    let bytes = |n: u64| corpus_bytes(&preset, n).saturating_add(extras_bytes(&extras, n));
    // The pipeline's scratch for one chunk: a few times the chunk's rows.
    let chunk_bytes = u128::from(bytes(chunk)) * 4;
    check_memory(&format!("--chunk-envs {chunk}"), Some(chunk_bytes))?;
    if !args.no_space_check {
        check_space(
            &format!("generate of {n_envs} envs"),
            &args.out,
            u128::from(bytes(n_envs)),
            "--no-space-check",
        )?;
    }
    let launch = Launch::for_threads(args.threads)?;
    let threads = launch.threads();
    let backend = Backend::new(args.device, launch)?;
    // With --force the new corpus is written next to the old one, which is replaced only once
    // the new one is complete.
    let name = args
        .out
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let sibling = |what: &str| {
        TempPath::new(parent_dir(&args.out).join(format!(".{name}.{what}-{}", std::process::id())))
    };
    let new = replaced.then(|| sibling("new"));
    let target = new.as_ref().map_or(args.out.as_path(), |t| t.path());
    let started = Instant::now();
    let mut bar = Progress::new(range.end - range.start, "envs");
    let mut last = trackgen::corpus::Progress::default();
    let written = write_corpus_with(
        target,
        &preset,
        args.seed,
        args.generation,
        range.clone(),
        args.chunk_envs,
        &extras,
        backend,
        &mut |p| {
            last = *p;
            bar.update(p.done_envs);
        },
    );
    bar.finish();
    let manifest = written?;
    if let Some(new) = new {
        let old = sibling("old");
        std::fs::rename(&args.out, old.path()).map_err(|e| Error::io(&args.out, e))?;
        if let Err(e) = std::fs::rename(new.path(), &args.out) {
            // Best effort: the rename error is what the user needs to see.
            if std::fs::rename(old.path(), &args.out).is_ok() {
                old.keep();
            }
            return Err(Error::io(&args.out, e));
        }
        new.keep();
    }
    let seconds = started.elapsed().as_secs_f64();
    let n = manifest.n_envs();
    let (items, what) = if manifest.kind.is_some() {
        ("gates", "courses")
    } else {
        ("points", "tracks")
    };
    emit(&format!(
        "generated {n} envs {}..{} of preset {} (seed {}, generation {}) into {}: valid {:.4}, \
         mean {:.1} {items}; {seconds:.2} s: generation {:.2} s ({} {what}/s on {}), writing \
         {:.2} s ({:.0} MB/s, fsync included)\n",
        range.start,
        range.end,
        preset.source,
        args.seed,
        args.generation,
        args.out.display(),
        manifest.stats.valid_fraction,
        manifest.stats.mean_count,
        last.generate_s,
        grouped(n as f64 / last.generate_s.max(1e-9)),
        threads_label(threads),
        last.write_s,
        bytes_written(&manifest) as f64 / 1e6 / last.write_s.max(1e-9),
    ))
}

/// Runs `trackgen preview`.
pub fn preview(args: PreviewArgs) -> Result<()> {
    if args.max == 0 {
        return Err(Error::Invalid("--max 0: expected at least 1 track".into()));
    }
    check_output("--out", &args.out, &[&args.dir], args.force)?;
    let corpus = Corpus::open(&args.dir)?;
    let rows = (args.max as u64).min(corpus.manifest().n_envs());
    let row_bytes = u128::from(bytes_written(corpus.manifest()))
        / u128::from(corpus.manifest().n_envs().max(1));
    check_memory(
        &format!("--max {} ({rows} rows of {})", args.max, args.dir.display()),
        Some(row_bytes * u128::from(rows)),
    )?;
    let cell_arg = format!("--cell {} with {rows} cells", args.cell);
    check_memory(
        &cell_arg,
        sheet_bytes(rows as usize, args.cell).map(u128::from),
    )?;
    let (sheet, what) = if corpus.is_gates() {
        let batch = corpus.read_gate_rows(0..rows)?;
        (gate_sheet(&batch, args.max, args.cell), "gate courses")
    } else {
        let batch = corpus.read_rows(0..rows)?;
        (contact_sheet(&batch, args.max, args.cell), "tracks")
    };
    write_png(&args.out, &sheet)?;
    emit(&format!(
        "drew {rows} {what} of {} into {} ({}×{} px)\n",
        args.dir.display(),
        args.out.display(),
        sheet.width(),
        sheet.height()
    ))
}

/// Bytes of a corpus's array files (headers aside): what `generate` wrote.
fn bytes_written(manifest: &trackgen::corpus::Manifest) -> u64 {
    manifest
        .arrays
        .values()
        .map(|a| {
            let size = trackgen::corpus::npy::Dtype::from_descr(&a.dtype).map_or(0, |d| d.size());
            a.shape.iter().product::<u64>() * size as u64
        })
        .sum()
}
