//! `trackgen export`: meshes of a corpus's courses (or of a scene's primitives) as binary glTF
//! or OBJ files, one env or a range of envs.

use std::ops::Range;
use std::path::{Path, PathBuf};

use trackgen::atomic::write_atomic;
use trackgen::corpus::Corpus;
use trackgen::export::course::{gate_mesh, prop_boxes, terrain, track_mesh, MeshOptions};
use trackgen::export::scene::scene_mesh;
use trackgen::export::{glb, obj, Mesh, Up};
use trackgen::preset::Preset;
use trackgen::scene::{import_json, EnvScene};
use trackgen::{Error, Result};

use crate::args::parse_range;
use crate::output::{check_output, emit};

/// The file format of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Binary glTF 2.0 (`.glb`).
    #[value(alias = "glb")]
    Gltf,
    /// Wavefront OBJ.
    Obj,
}

/// The up axis of `--up`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum UpAxis {
    /// `+z` up: the crate's axes (Isaac Sim, MuJoCo, Gazebo).
    Z,
    /// `+y` up: glTF's convention, `(x, y, z) → (x, z, −y)` (three.js, Blender, game engines).
    Y,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// A corpus directory (tracks: the road, optional walls; gate courses: frames and posts),
    /// or a scene primitives JSON file (`trackgen scene --primitives-json`).
    pub input: PathBuf,
    /// The env to export (its global index). Give this or --envs.
    #[arg(long, value_name = "I", conflicts_with = "envs")]
    pub env: Option<u64>,
    /// Export global envs A..B, one file each (`env_000012.glb`) in the directory --out.
    #[arg(long, value_name = "A..B", value_parser = parse_range)]
    pub envs: Option<Range<u64>>,
    /// File format: gltf (binary .glb) or obj.
    #[arg(long, value_enum, default_value_t = Format::Gltf)]
    pub format: Format,
    /// Up axis of the file: z (the crate's axes) or y (glTF's convention).
    #[arg(long, value_enum, default_value_t = UpAxis::Z)]
    pub up: UpAxis,
    /// Track corpora: add walls this tall along both borders, metres.
    #[arg(long, value_name = "H")]
    pub walls: Option<f32>,
    /// Track corpora: add kerbs this wide outside both borders, metres.
    #[arg(long, value_name = "W")]
    pub kerbs: Option<f32>,
    /// Track corpora written with --heightfield: add the heightfield as a terrain mesh.
    #[arg(long)]
    pub terrain: bool,
    /// Track corpora written with --props: add the props as boxes (cones, wall pieces).
    #[arg(long)]
    pub props: bool,
    /// Scene input: marching-tetrahedra cells per side of the env's domain.
    #[arg(long, default_value_t = 96, value_name = "R")]
    pub scene_res: u32,
    /// Output file (one env) or directory (--envs); must not exist unless --force.
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
    /// Replace existing output files.
    #[arg(long)]
    pub force: bool,
}

/// The meshes of a source, by global env index.
enum Source {
    Corpus { corpus: Box<Corpus>, posts: bool },
    Scene(Vec<(u64, EnvScene)>),
}

impl Source {
    fn open(input: &Path) -> Result<Self> {
        if input.is_dir() {
            let corpus = Corpus::open(input)?;
            let m = corpus.manifest();
            let posts = if corpus.is_gates() {
                let preset = Preset::parse(&m.preset_toml, &m.preset_source)?;
                preset.gates.as_ref().is_some_and(|g| g.posts)
            } else {
                false
            };
            return Ok(Source::Corpus {
                corpus: Box::new(corpus),
                posts,
            });
        }
        let text = std::fs::read_to_string(input).map_err(|e| Error::input(input, e))?;
        let scenes = import_json(&text).map_err(|e| Error::Format {
            path: input.to_path_buf(),
            message: format!("not a scene primitives JSON file: {e}"),
        })?;
        Ok(Source::Scene(scenes))
    }

    /// The global envs the source holds.
    fn envs(&self) -> Range<u64> {
        match self {
            Source::Corpus { corpus, .. } => {
                let [a, b] = corpus.manifest().env_range;
                a..b
            }
            Source::Scene(scenes) => {
                let lo = scenes.iter().map(|s| s.0).min().unwrap_or(0);
                let hi = scenes.iter().map(|s| s.0 + 1).max().unwrap_or(0);
                lo..hi
            }
        }
    }

    fn mesh(&self, env: u64, args: &ExportArgs) -> Result<Mesh> {
        match self {
            Source::Corpus { corpus, posts } => {
                let row = env - corpus.manifest().env_range[0];
                if corpus.is_gates() {
                    Ok(gate_mesh(&corpus.read_gate_rows(row..row + 1)?, 0, *posts))
                } else {
                    let options = MeshOptions {
                        wall_height_m: args.walls,
                        kerb_width_m: args.kerbs,
                    };
                    let mut mesh = track_mesh(&corpus.read_rows(row..row + 1)?, 0, &options);
                    if args.terrain {
                        mesh.parts
                            .push(terrain(&corpus.read_heightfields(row..row + 1)?, 0));
                    }
                    if args.props {
                        mesh.parts
                            .push(prop_boxes(&corpus.read_props(row..row + 1)?, 0));
                    }
                    Ok(mesh)
                }
            }
            Source::Scene(scenes) => {
                let scene = scenes
                    .iter()
                    .find(|s| s.0 == env)
                    .map(|s| &s.1)
                    .ok_or_else(|| {
                        Error::Invalid(format!(
                            "--env {env}: {} holds no scene of env {env}",
                            args.input.display()
                        ))
                    })?;
                scene_mesh(scene, args.scene_res)
            }
        }
    }
}

/// Runs `trackgen export`.
pub fn export(args: ExportArgs) -> Result<()> {
    for (flag, value) in [("--walls", args.walls), ("--kerbs", args.kerbs)] {
        if let Some(v) = value {
            if !(v > 0.0 && v.is_finite()) {
                return Err(Error::Invalid(format!("{flag} {v}: expected metres > 0")));
            }
        }
    }
    let source = Source::open(&args.input)?;
    let held = source.envs();
    let (envs, single) = match (args.env, &args.envs) {
        (Some(i), None) => (i..i + 1, true),
        (None, Some(r)) => (r.clone(), false),
        _ => {
            return Err(Error::Invalid(
                "give --env I (one file) or --envs A..B (a directory of files)".into(),
            ))
        }
    };
    if envs.start < held.start || envs.end > held.end {
        return Err(Error::Invalid(format!(
            "envs {}..{}: {} holds envs {}..{}",
            envs.start,
            envs.end,
            args.input.display(),
            held.start,
            held.end
        )));
    }
    if args.walls.is_some()
        && !matches!(&source, Source::Corpus { corpus, .. } if !corpus.is_gates())
    {
        return Err(Error::Invalid(
            "--walls: walls line the borders of a track corpus's road; this input has none".into(),
        ));
    }
    check_output("--out", &args.out, &[&args.input], args.force)?;
    let up = match args.up {
        UpAxis::Z => Up::Z,
        UpAxis::Y => Up::Y,
    };
    let extension = match args.format {
        Format::Gltf => "glb",
        Format::Obj => "obj",
    };
    if !single && !args.out.is_dir() {
        std::fs::create_dir(&args.out).map_err(|e| Error::io(&args.out, e))?;
    }
    let (mut vertices, mut triangles) = (0usize, 0usize);
    for env in envs.clone() {
        let mesh = source.mesh(env, &args)?;
        let path = if single {
            args.out.clone()
        } else {
            args.out.join(format!("env_{env:06}.{extension}"))
        };
        if !single && path.exists() && !args.force {
            return Err(Error::Invalid(format!(
                "{} already exists: refusing to overwrite it (remove it or pass --force)",
                path.display()
            )));
        }
        let bytes = match args.format {
            Format::Gltf => glb::to_glb(&mesh, up),
            Format::Obj => obj::to_obj(&mesh, up).into_bytes(),
        };
        write_atomic(&path, |out| std::io::Write::write_all(out, &bytes))?;
        vertices += mesh.vertices();
        triangles += mesh.triangles();
    }
    emit(&format!(
        "exported {} env(s) {}..{} of {} into {} ({extension}, +{} up): {vertices} vertices, \
         {triangles} triangles\n",
        envs.end - envs.start,
        envs.start,
        envs.end,
        args.input.display(),
        args.out.display(),
        match up {
            Up::Z => "z",
            Up::Y => "y",
        }
    ))
}
