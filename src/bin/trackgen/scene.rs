//! The scene commands: `scene`, `raycast` and `preview-scene` (`bench-scene` is in
//! [`crate::bench_scene`]). Each prints one summary line (or the
//! benchmark table) on stdout and returns the crate's error for the binary to report; inputs are
//! checked before any work, and every file is written atomically (temporary file + rename).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use trackgen::atomic::{temp_sibling, write_atomic, TempPath};
use trackgen::corpus::npy::{parse_header, Dtype, NpyWriter};
use trackgen::exec::Launch;
use trackgen::scene::generate::FLOOR_MARGIN_M;
use trackgen::scene::raycast::DEFAULT_MAX_STEPS;
use trackgen::scene::{
    build_preset, build_preset_with_progress, cast_rays, export_json, generate_envs, preview,
    write_scene_file, CastOptions, RayEnvs, RayOutputs, SceneFile, ScenePreset, HIT,
};
use trackgen::{Error, Result};

use crate::limits::{check_memory, check_space, human, try_vec};
use crate::output::{check_output, emit, threads_label};
use crate::progress::Progress;

/// `trackgen scene`: generate envs 0..N of a scene preset into one scene file.
#[derive(clap::Args, Debug, Clone)]
pub struct SceneArgs {
    /// Built-in scene preset (rooms, forest, gates) or a path to a scene preset TOML file.
    #[arg(long, value_name = "NAME|PATH")]
    pub preset: String,
    /// Envs 0..N.
    #[arg(long, value_name = "N")]
    pub envs: u64,
    /// Seed of every env's random streams.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Generation counter of every env.
    #[arg(long, default_value_t = 0)]
    pub generation: u32,
    /// Voxels per domain side (power of two, 8..=512; default: the preset's).
    #[arg(long, value_name = "R")]
    pub res: Option<u32>,
    /// Worker threads (0 = all cores; default: RAYON_NUM_THREADS or all cores).
    #[arg(long, value_name = "T")]
    pub threads: Option<usize>,
    /// Output scene file; must not exist unless --force.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Also write every env's primitive list (the analytic ground truth) as JSON.
    #[arg(long, value_name = "FILE")]
    pub primitives_json: Option<PathBuf>,
    /// Replace existing output files.
    #[arg(long)]
    pub force: bool,
    /// Skip the memory and free-space checks of the estimated output size.
    #[arg(long)]
    pub no_space_check: bool,
}

/// `trackgen raycast`: cast a `.npy` of rays against a scene file.
#[derive(clap::Args, Debug, Clone)]
pub struct RaycastArgs {
    /// Scene file.
    pub file: PathBuf,
    /// Rays: float32 `.npy` of shape [E, K, 6] (origin xyz, direction xyz); env = first index.
    #[arg(long, value_name = "RAYS.npy")]
    pub rays: PathBuf,
    /// Output: float32 `.npy` of shape [E, K], distance along each ray in metres; must not exist
    /// unless --force, and never one of the inputs.
    #[arg(long, value_name = "DEPTH.npy")]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
    /// Longest distance searched, metres.
    #[arg(long, default_value_t = 100.0, value_name = "M")]
    pub max_distance: f32,
    /// Value written for a miss (default: --max-distance).
    #[arg(long, value_name = "V", allow_negative_numbers = true)]
    pub no_hit_value: Option<f32>,
    /// Worker threads (0 = all cores; default: RAYON_NUM_THREADS or all cores).
    #[arg(long, value_name = "T")]
    pub threads: Option<usize>,
}

/// `trackgen preview-scene`: a depth image and an SDF slice of one env, as PNG.
#[derive(clap::Args, Debug, Clone)]
pub struct PreviewSceneArgs {
    /// Scene file.
    pub file: PathBuf,
    /// The env to draw.
    #[arg(long, default_value_t = 0, value_name = "E")]
    pub env: usize,
    /// Output PNG file; must not exist unless --force, and never the scene file.
    #[arg(long, value_name = "PNG")]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
    /// Height of the top-down slice, metres (default: 0.6 m above the floor of the built-in
    /// presets, i.e. the domain bottom + 1.1 m).
    #[arg(long, value_name = "M", allow_negative_numbers = true)]
    pub slice_height: Option<f32>,
    /// Image height, pixels (the depth image is 4/3 as wide, the slice square).
    #[arg(long, default_value_t = 384, value_name = "PX")]
    pub size: u32,
}

/// Runs `trackgen scene`.
pub fn scene(args: SceneArgs) -> Result<()> {
    if args.envs == 0 {
        return Err(Error::Invalid("--envs 0: expected at least 1 env".into()));
    }
    if let Some(r) = args.res {
        if !(r.is_power_of_two() && (8..=512).contains(&r)) {
            return Err(Error::Invalid(format!(
                "--res {r}: expected a power of two in [8, 512]"
            )));
        }
    }
    if args.envs > u64::from(u32::MAX) {
        return Err(Error::Invalid(format!(
            "--envs {}: expected at most {}",
            args.envs,
            u32::MAX
        )));
    }
    let preset_path = Path::new(&args.preset);
    let inputs: Vec<&Path> = if preset_path.exists() {
        vec![preset_path]
    } else {
        Vec::new()
    };
    check_output("--out", &args.out, &inputs, args.force)?;
    if let Some(json) = &args.primitives_json {
        check_output(
            "--primitives-json",
            json,
            &[&inputs[..], &[&args.out]].concat(),
            args.force,
        )?;
    }
    let preset = ScenePreset::load(&args.preset)?;
    let launch = Launch::for_threads(args.threads)?;
    let started = Instant::now();
    if !args.no_space_check {
        check_scene_size(&args, &preset, &launch)?;
    }
    let mut bar = Progress::new(args.envs, "envs");
    let built = build_preset_with_progress(
        &preset,
        args.seed,
        args.generation,
        args.envs,
        args.res,
        &launch,
        &mut |done, _| bar.update(done),
    );
    bar.finish();
    let pool = built?;
    let view = pool.view();
    let bytes = write_scene_file(&args.out, &view)?;
    if let Some(json) = &args.primitives_json {
        let scenes = generate_envs(&preset, args.seed, args.generation, 0..args.envs, &launch)?;
        let text = export_json(
            &scenes,
            0,
            &preset.source,
            &preset.hash(),
            args.seed,
            args.generation,
        );
        write_atomic(json, |out| out.write_all(text.as_bytes()))?;
    }
    let st = pool.stats();
    emit(&format!(
        "wrote {} envs of scene preset {} (seed {}, generation {}, R = {}) to {}: {} nodes, {} \
         bricks, {:.2} MiB ({:.1} KiB per env, shared {:.1}x), {:.2} s\n",
        args.envs,
        preset.source,
        args.seed,
        args.generation,
        view.info().resolution,
        args.out.display(),
        view.nodes().len(),
        view.bricks().len(),
        bytes as f64 / 1048576.0,
        bytes as f64 / 1024.0 / args.envs as f64,
        st.ratio(),
        started.elapsed().as_secs_f64()
    ))
}

/// Envs of a sample whose pool size estimates a large scene file's.
const SIZE_SAMPLE_ENVS: u64 = 16;

/// For more envs than this, `scene` estimates the file size from a sample before building.
const SIZE_CHECK_ENVS: u64 = 4096;

/// An error unless the estimated pool (held in memory, then written) of `args.envs` envs fits the
/// available memory and the output's free space: the bytes per env of a pool of the first
/// [`SIZE_SAMPLE_ENVS`] envs (an overestimate: a larger pool shares more) times the envs.
fn check_scene_size(args: &SceneArgs, preset: &ScenePreset, launch: &Launch) -> Result<()> {
    if args.envs <= SIZE_CHECK_ENVS {
        return Ok(());
    }
    let sample = build_preset(
        preset,
        args.seed,
        args.generation,
        SIZE_SAMPLE_ENVS,
        args.res,
        launch,
    )?;
    let per_env = sample.view().bytes() as u128 / u128::from(SIZE_SAMPLE_ENVS);
    let bytes = per_env * u128::from(args.envs);
    let arg = format!("--envs {} (about {} per env)", args.envs, human(per_env));
    match check_memory(&arg, Some(bytes)) {
        Err(Error::Invalid(m)) => Err(Error::Invalid(format!(
            "{m} (give --no-space-check to try anyway)"
        ))),
        other => other,
    }?;
    check_space(
        &format!("scene {arg}"),
        &args.out,
        bytes,
        "--no-space-check",
    )
}

/// Writes `values` as a float32 `.npy` of `shape` at `path`, atomically (a temporary sibling,
/// removed on any error or signal, renamed into place).
pub fn write_npy_f32(path: &Path, shape: &[u64], values: &[f32]) -> Result<()> {
    let tmp = TempPath::new(temp_sibling(path)?);
    let mut w = NpyWriter::create(tmp.path(), Dtype::F4, shape)?;
    w.append_f32(values)?;
    w.finish()?;
    std::fs::rename(tmp.path(), path).map_err(|err| Error::io(path, err))?;
    tmp.keep();
    Ok(())
}

/// Reads a float32 `[E, K, 6]` rays `.npy`: `(E, K, values)`.
fn read_rays(path: &Path) -> Result<(usize, usize, Vec<f32>)> {
    let bytes = std::fs::read(path).map_err(|e| Error::input(path, e))?;
    let header = parse_header(&bytes, path)?;
    let bad = |message: String| Error::Format {
        path: path.to_path_buf(),
        message,
    };
    if header.dtype != Dtype::F4 {
        return Err(bad(format!(
            "rays dtype {}: expected '<f4' (float32)",
            header.dtype.descr()
        )));
    }
    if header.shape.len() != 3 || header.shape[2] != 6 {
        return Err(bad(format!(
            "rays shape {:?}: expected [E, K, 6] (origin xyz, direction xyz per ray)",
            header.shape
        )));
    }
    let (e, k) = (header.shape[0] as usize, header.shape[1] as usize);
    let data = &bytes[header.data_offset as usize..];
    let want = header
        .data_bytes()
        .ok_or_else(|| bad("rays shape overflows".into()))?;
    if data.len() as u64 != want {
        return Err(bad(format!(
            "rays data is {} bytes: the header promises {want}",
            data.len()
        )));
    }
    let values = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((e, k, values))
}

/// Runs `trackgen raycast`.
pub fn raycast(args: RaycastArgs) -> Result<()> {
    check_output("--out", &args.out, &[&args.file, &args.rays], args.force)?;
    let file = SceneFile::open(&args.file)?;
    let view = file.view();
    let (e, k, values) = read_rays(&args.rays)?;
    if e > view.envs().len() {
        return Err(Error::Invalid(format!(
            "{}: rays for {e} envs, but {} holds {} envs",
            args.rays.display(),
            args.file.display(),
            view.envs().len()
        )));
    }
    let opts = CastOptions {
        max_distance: args.max_distance,
        no_hit_value: args.no_hit_value.unwrap_or(args.max_distance),
        max_steps: DEFAULT_MAX_STEPS,
    };
    let n = e * k;
    let origins: Vec<[f32; 3]> = values.chunks_exact(6).map(|r| [r[0], r[1], r[2]]).collect();
    let dirs: Vec<[f32; 3]> = values.chunks_exact(6).map(|r| [r[3], r[4], r[5]]).collect();
    let what = format!("{} ({e} x {k} rays)", args.rays.display());
    let (mut dist, mut hit, mut steps) = (
        try_vec(n, 0.0f32, &what)?,
        try_vec(n, 0u8, &what)?,
        try_vec(n, 0u32, &what)?,
    );
    let launch = Launch::for_threads(args.threads)?;
    let started = Instant::now();
    if n > 0 {
        cast_rays(
            &view,
            RayEnvs::Blocks { rays_per_env: k },
            &origins,
            &dirs,
            &opts,
            RayOutputs {
                distance: &mut dist,
                hit: &mut hit,
                steps: &mut steps,
            },
            &launch,
        )?;
    }
    let secs = started.elapsed().as_secs_f64();
    write_npy_f32(&args.out, &[e as u64, k as u64], &dist)?;
    let hits = hit.iter().filter(|&&h| h == HIT).count();
    emit(&format!(
        "cast {n} rays ({e} envs x {k}) against {} into {}: {hits} hits ({:.1}%), {:.1} mean \
         steps, {:.3} s, {:.2} Mrays/s on {}\n",
        args.file.display(),
        args.out.display(),
        100.0 * hits as f64 / n.max(1) as f64,
        steps.iter().map(|&s| f64::from(s)).sum::<f64>() / n.max(1) as f64,
        secs,
        n as f64 / secs.max(1e-9) / 1e6,
        threads_label(launch.threads())
    ))
}

/// Runs `trackgen preview-scene`.
pub fn preview_scene(args: PreviewSceneArgs) -> Result<()> {
    check_output("--out", &args.out, &[&args.file], args.force)?;
    // The depth image (4/3 as wide) and its rays (origin, direction, distance, hit, steps), the
    // slice and the RGB picture.
    let side = u128::from(args.size);
    check_memory(
        &format!("--size {}", args.size),
        Some((side * side * 4 / 3) * 40 + side * side * 8 + (side * 4 / 3 + 4 + side) * side * 3),
    )?;
    let file = SceneFile::open(&args.file)?;
    let view = file.view();
    let entry = view.envs().get(args.env).ok_or_else(|| {
        Error::Invalid(format!(
            "--env {}: {} holds {} envs (expected < {})",
            args.env,
            args.file.display(),
            view.envs().len(),
            view.envs().len()
        ))
    })?;
    let height = args
        .slice_height
        .unwrap_or(entry.origin[2] + FLOOR_MARGIN_M + 0.6);
    if !height.is_finite() {
        return Err(Error::Invalid(format!(
            "--slice-height {height}: expected a finite number"
        )));
    }
    let image = preview::preview(&view, args.env, height, args.size, &Launch::new())?;
    trackgen::render::write_png(&args.out, &image)?;
    emit(&format!(
        "drew env {} of {} into {} ({}x{} px: depth from the default camera | slice z = {height} m)\n",
        args.env,
        args.file.display(),
        args.out.display(),
        image.width(),
        image.height()
    ))
}
