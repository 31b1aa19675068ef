//! `trackgen rays`: a rays file (`float32 [E, K, 6]`: origin xyz, direction xyz) for `raycast`,
//! from one sensor (a pinhole camera or a lidar ring) at one pose per env: each env's spawn in a
//! scene file, each env's start (checkpoint 0) in a corpus, or one pose given for every env.

use std::path::{Path, PathBuf};

use trackgen::corpus::Corpus;
use trackgen::geom::{self, Quat, Vec3};
use trackgen::math::{sin_cos, PI};
use trackgen::scene::{LidarRing, PinholeCamera, Pose, SceneFile};
use trackgen::{Error, Result};

use crate::limits::{check_memory, try_vec};
use crate::output::{check_output, emit};
use crate::scene::write_npy_f32;

/// `trackgen rays`: sensor rays at per-env poses.
#[derive(clap::Args, Debug, Clone)]
pub struct RaysArgs {
    /// Poses: every env's spawn point in this scene file, looking along +x turned by --yaw-deg.
    #[arg(long, value_name = "FILE", group = "poses")]
    pub scene: Option<PathBuf>,
    /// Poses: every env's start in this corpus (track: centerline point 0, raised by
    /// --height-m, looking along the driving direction; gates: gate 0's centre, looking through
    /// it).
    #[arg(long, value_name = "DIR", group = "poses")]
    pub corpus: Option<PathBuf>,
    /// Poses: this one pose `X,Y,Z,YAW_DEG` (metres, degrees counter-clockwise from +x) for
    /// every one of --envs envs.
    #[arg(
        long,
        value_name = "X,Y,Z,YAW",
        value_delimiter = ',',
        allow_negative_numbers = true,
        group = "poses"
    )]
    pub pose: Option<Vec<f32>>,
    /// Envs of --pose (with --scene or --corpus: at most this many of their envs).
    #[arg(long, value_name = "N")]
    pub envs: Option<u64>,
    /// Heading added to --scene poses, degrees counter-clockwise.
    #[arg(
        long,
        default_value_t = 0.0,
        value_name = "DEG",
        allow_negative_numbers = true
    )]
    pub yaw_deg: f32,
    /// Height added to --corpus track poses, metres.
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "M",
        allow_negative_numbers = true
    )]
    pub height_m: f32,
    /// A pinhole depth camera `WIDTH,HEIGHT` (pixels; row-major rays, top row first). The
    /// default sensor: 64,64.
    #[arg(
        long,
        value_name = "W,H",
        value_delimiter = ',',
        conflicts_with = "lidar"
    )]
    pub camera: Option<Vec<u32>>,
    /// The camera's vertical field of view, degrees.
    #[arg(long, default_value_t = 90.0, value_name = "DEG")]
    pub fov_deg: f32,
    /// A lidar `CHANNELS,SAMPLES`: rings at elevations spread over --elevation-deg, azimuth
    /// samples from forward counter-clockwise (ring-major rays).
    #[arg(long, value_name = "C,S", value_delimiter = ',')]
    pub lidar: Option<Vec<u32>>,
    /// The lidar's lowest and highest elevation, degrees.
    #[arg(
        long,
        value_name = "MIN,MAX",
        value_delimiter = ',',
        allow_negative_numbers = true,
        default_value = "-15,15"
    )]
    pub elevation_deg: Vec<f32>,
    /// Output `.npy` (float32 [E, K, 6]); must not exist unless --force.
    #[arg(long, value_name = "RAYS.npy")]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// The sensor of a `rays` command.
enum Sensor {
    Camera(PinholeCamera),
    Lidar(LidarRing),
}

impl Sensor {
    fn from_args(args: &RaysArgs) -> Result<(Self, String)> {
        if let Some(l) = &args.lidar {
            let [channels, samples] = l[..] else {
                return Err(Error::Invalid(format!(
                    "--lidar {l:?}: expected CHANNELS,SAMPLES, e.g. 16,360"
                )));
            };
            let [lo, hi] = args.elevation_deg[..] else {
                return Err(Error::Invalid(format!(
                    "--elevation-deg {:?}: expected MIN,MAX, e.g. -15,15",
                    args.elevation_deg
                )));
            };
            let ring = LidarRing {
                channels,
                samples,
                elevation_min: lo * (PI / 180.0),
                elevation_max: hi * (PI / 180.0),
            };
            let half_pi = PI / 2.0;
            if channels == 0
                || samples == 0
                || !(-half_pi <= ring.elevation_min
                    && ring.elevation_min <= ring.elevation_max
                    && ring.elevation_max <= half_pi)
            {
                return Err(Error::Invalid(format!(
                    "--lidar {channels},{samples} --elevation-deg {lo},{hi}: expected at least one \
                     channel and sample, and −90 ≤ MIN ≤ MAX ≤ 90"
                )));
            }
            return Ok((Sensor::Lidar(ring), format!("--lidar {channels},{samples}")));
        }
        let (w, h) = match args.camera.as_deref() {
            None => (64, 64),
            Some(&[w, h]) => (w, h),
            Some(c) => {
                return Err(Error::Invalid(format!(
                    "--camera {c:?}: expected WIDTH,HEIGHT, e.g. 64,48"
                )))
            }
        };
        if w == 0 || h == 0 {
            return Err(Error::Invalid(format!(
                "--camera {w},{h}: expected at least 1 pixel each way"
            )));
        }
        let fov = args.fov_deg * (PI / 180.0);
        let camera = PinholeCamera::new(w, h, fov).map_err(|e| {
            Error::Invalid(format!("--camera {w},{h} --fov-deg {}: {e}", args.fov_deg))
        })?;
        Ok((Sensor::Camera(camera), format!("--camera {w},{h}")))
    }

    fn rays_per_env(&self) -> u64 {
        match self {
            Sensor::Camera(c) => u64::from(c.width) * u64::from(c.height),
            Sensor::Lidar(l) => u64::from(l.channels) * u64::from(l.samples),
        }
    }

    fn rays(&self, bodies: &[Pose], origins: &mut [[f32; 3]], dirs: &mut [[f32; 3]]) -> Result<()> {
        match self {
            Sensor::Camera(c) => c.rays(bodies, &Pose::IDENTITY, origins, dirs),
            Sensor::Lidar(l) => l.rays(bodies, &Pose::IDENTITY, origins, dirs),
        }
    }
}

/// The pose at `p` looking horizontally along `yaw` radians.
fn heading(p: [f32; 3], yaw: f32) -> Pose {
    let (s, c) = sin_cos(yaw);
    let p = Vec3::from(p);
    Pose::look_at(p, p + Vec3::new(c, s, 0.0))
}

/// Every env's pose (at most `limit` envs) and what they came from.
fn poses(args: &RaysArgs, limit: Option<u64>) -> Result<(Vec<Pose>, String)> {
    let cap = |n: u64| limit.map_or(n, |l| l.min(n));
    if let Some(path) = &args.scene {
        let file = SceneFile::open(path)?;
        let envs = file.view().envs();
        let n = cap(envs.len() as u64) as usize;
        let yaw = args.yaw_deg * (PI / 180.0);
        let poses = envs[..n].iter().map(|e| heading(e.spawn, yaw)).collect();
        return Ok((poses, format!("the spawns of {}", path.display())));
    }
    if let Some(dir) = &args.corpus {
        let corpus = Corpus::open(dir)?;
        let n = cap(corpus.manifest().n_envs());
        check_memory(
            &format!("--corpus {} ({n} envs)", dir.display()),
            Some(u128::from(n) * 64 * u128::from(corpus.manifest().n_max)),
        )?;
        let poses = if corpus.is_gates() {
            let b = corpus.read_gate_rows(0..n)?;
            (0..b.n_envs)
                .map(|e| {
                    let p = b.gates(&b.pos, e).first().copied().unwrap_or(Vec3::NAN);
                    let q = b.gates(&b.quat, e).first().copied();
                    // The gate's local +x (its flying direction) in the world.
                    let f = geom::forward(q.unwrap_or(Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)));
                    Pose::look_at(p, p + f)
                })
                .collect()
        } else {
            let b = corpus.read_rows(0..n)?;
            (0..b.n_envs)
                .map(|e| {
                    let c = b.points(&b.center, e).first().copied().unwrap_or(Vec3::NAN);
                    let t = b.points(&b.tangent, e).first().copied().unwrap_or(Vec3::X);
                    let p = c + Vec3::new(0.0, 0.0, args.height_m);
                    Pose::look_at(p, p + t)
                })
                .collect()
        };
        return Ok((poses, format!("the starts of {}", dir.display())));
    }
    let Some(pose) = &args.pose else {
        return Err(Error::Invalid(
            "give the poses: --scene FILE, --corpus DIR, or --pose X,Y,Z,YAW_DEG with --envs N"
                .into(),
        ));
    };
    let [x, y, z, yaw_deg] = pose[..] else {
        return Err(Error::Invalid(format!(
            "--pose {pose:?}: expected X,Y,Z,YAW_DEG, e.g. 0,0,1.5,90"
        )));
    };
    if !pose.iter().all(|v| v.is_finite()) {
        return Err(Error::Invalid(format!(
            "--pose {pose:?}: expected finite numbers"
        )));
    }
    let n = limit.ok_or_else(|| Error::Invalid("--pose needs --envs N".into()))?;
    check_memory(&format!("--envs {n}"), Some(u128::from(n) * 28))?;
    let one = heading([x, y, z], yaw_deg * (PI / 180.0));
    Ok((
        vec![one; n as usize],
        format!("--pose {x},{y},{z},{yaw_deg}"),
    ))
}

/// Runs `trackgen rays`.
pub fn rays(args: RaysArgs) -> Result<()> {
    if args.envs == Some(0) {
        return Err(Error::Invalid("--envs 0: expected at least 1 env".into()));
    }
    let inputs: Vec<&Path> = [args.scene.as_deref(), args.corpus.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    check_output("--out", &args.out, &inputs, args.force)?;
    let (sensor, sensor_arg) = Sensor::from_args(&args)?;
    let k = sensor.rays_per_env();
    // Check the per-env ray count before reading any poses.
    check_memory(&sensor_arg, Some(u128::from(k) * 48))?;
    let (bodies, from) = poses(&args, args.envs)?;
    let e = bodies.len() as u64;
    let n = e * k;
    let what = format!("{sensor_arg} for {e} envs ({n} rays)");
    check_memory(&what, Some(u128::from(n) * 48))?;
    let n = usize::try_from(n).map_err(|_| Error::Invalid(format!("{what}: too many rays")))?;
    let (mut origins, mut dirs) = (
        try_vec(n, [0.0f32; 3], &what)?,
        try_vec(n, [0.0f32; 3], &what)?,
    );
    sensor.rays(&bodies, &mut origins, &mut dirs)?;
    let mut values = try_vec(0, 0.0f32, &what)?;
    values
        .try_reserve_exact(6 * n)
        .map_err(|_| Error::Invalid(format!("{what}: cannot allocate the rays")))?;
    for (o, d) in origins.iter().zip(&dirs) {
        values.extend_from_slice(o);
        values.extend_from_slice(d);
    }
    write_npy_f32(&args.out, &[e, k, 6], &values)?;
    emit(&format!(
        "wrote {n} rays ({e} envs x {k}, {sensor_arg}) at {from} into {}\n",
        args.out.display()
    ))
}
