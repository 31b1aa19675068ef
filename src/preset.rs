//! Presets: TOML files that fix every parameter of a pipeline.
//!
//! The shipped presets live in `presets/*.toml` and are embedded in the binary; a user passes a
//! built-in name or a path. Every key has a default (the `track` preset's value), so a user file
//! only states what differs. Unknown sections and keys, wrong types and out-of-range values are
//! errors that name the key, the value and what was expected. A loaded preset keeps its *resolved*
//! form (every key, defaults filled in) as TOML text: corpora record it, and its SHA-256 hash.
//!
//! Two sections are optional and appear in the resolved form only when the file has them:
//! `[gates]` makes the preset a gate-course preset (its track is the guide the gates are placed
//! along; see [`crate::course::gates`]) and `[obstacles]` places disc obstacles on every course.
//! Presets without them resolve (and hash) exactly as before these sections existed.

use std::collections::BTreeSet;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// The built-in presets: `(name, TOML text)`.
pub const BUILTIN: &[(&str, &str)] = &[
    ("track", include_str!("../presets/track.toml")),
    ("f1", include_str!("../presets/f1.toml")),
    ("karting", include_str!("../presets/karting.toml")),
    ("polar", include_str!("../presets/polar.toml")),
    ("bezier", include_str!("../presets/bezier.toml")),
    ("hull", include_str!("../presets/hull.toml")),
    ("voronoi", include_str!("../presets/voronoi.toml")),
    ("checkpoint", include_str!("../presets/checkpoint.toml")),
    ("repulsive", include_str!("../presets/repulsive.toml")),
    ("circuit", include_str!("../presets/circuit.toml")),
    ("gates", include_str!("../presets/gates.toml")),
    ("gates-indoor", include_str!("../presets/gates-indoor.toml")),
];

/// The name of the default preset.
pub const DEFAULT: &str = "track";

/// The generator stage that draws each env's closed control curve.
#[derive(Clone, Debug, PartialEq)]
pub enum GeneratorParams {
    /// Radii jittered around a circle at jittered angles, smoothed by a closed Catmull–Rom spline.
    Polar {
        /// Control points (4..=64).
        n_ctrl: u32,
        /// Relative radius jitter (0..=0.9).
        radius_jitter: f32,
        /// Angle jitter as a fraction of the angular step (0..=0.45).
        angle_jitter: f32,
    },
    /// Random points sorted by angle, joined by closed cubic Bézier segments.
    Bezier {
        /// Control points (4..=32).
        n_ctrl: u32,
        /// Tangent handle length as a fraction of the neighbour distance (0.05..=0.6).
        handle: f32,
        /// Relative radius jitter of the control points (0..=0.9).
        radius_jitter: f32,
    },
    /// Convex hull of random points, midpoints displaced, smoothed by Catmull–Rom.
    Hull {
        /// Random points drawn in the disc (6..=64).
        n_points: u32,
        /// Midpoint displacement as a fraction of the edge length (0..=0.8).
        displacement: f32,
    },
    /// Boundary of a connected union of Voronoi cells of random sites.
    Voronoi {
        /// Random sites (6..=64).
        n_sites: u32,
        /// Cells merged into the region (2..=24).
        n_cells: u32,
        /// Outline resolution: the boundary is resampled at steps of at most `2 · scale_m / grid`
        /// and 5 m (16..=96).
        grid: u32,
    },
    /// CarRacing-style radial checkpoints, bounded-turn steering, closure.
    Checkpoint {
        /// Checkpoints (5..=32).
        n_checkpoints: u32,
        /// Inner radius of the checkpoints as a fraction of `scale_m` (0.1..=0.95).
        min_radius_frac: f32,
        /// Maximum steering per step, degrees (1..=45).
        max_turn_deg: f32,
        /// Steering steps before the curve is closed by force (100..=8000).
        max_steps: u32,
    },
    /// A self-repulsive curve grown inside a disc with obstacle discs (tangent-point energy).
    Repulsive {
        /// Curve points (16..=128).
        n_points: u32,
        /// Gradient steps (10..=2000).
        max_iters: u32,
        /// Obstacle discs (0..=12).
        n_obstacles: u32,
        /// Obstacle radius as a fraction of `scale_m` (0.02..=0.4).
        obstacle_radius_frac: f32,
        /// Target length as a multiple of the disc circumference (0.5..=3).
        length_factor: f32,
    },
    /// Straights joined by hairpins, slow corners, sweepers and chicanes (clothoid transitions),
    /// closed by construction; see `track::generators::Circuit`.
    Circuit {
        /// Fewest corner complexes (3..=40).
        min_corners: u32,
        /// Most corner complexes (min_corners..=40).
        max_corners: u32,
        /// Relative weight of hairpins (0..=1).
        hairpin_weight: f32,
        /// Relative weight of slow corners (0..=1).
        slow_weight: f32,
        /// Relative weight of sweepers (0..=1).
        sweeper_weight: f32,
        /// Relative weight of chicanes (0..=1).
        chicane_weight: f32,
        /// Probability that a single corner is paired with a counter-corner (0..=1).
        reverse_fraction: f32,
        /// Shortest target length, metres (50..=20000).
        min_length_m: f32,
        /// Longest target length, metres (min_length_m..=20000).
        max_length_m: f32,
        /// Largest sweeper radius, metres (at least 3 × `track.min_turn_radius_m`).
        max_radius_m: f32,
        /// Fraction of a corner's turn taken by each clothoid transition (0..=0.45).
        transition: f32,
    },
}

impl GeneratorParams {
    /// The generator's name, as written in presets.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Polar { .. } => "polar",
            Self::Bezier { .. } => "bezier",
            Self::Hull { .. } => "hull",
            Self::Voronoi { .. } => "voronoi",
            Self::Checkpoint { .. } => "checkpoint",
            Self::Repulsive { .. } => "repulsive",
            Self::Circuit { .. } => "circuit",
        }
    }
}

/// The names of the built-in generators.
pub const GENERATORS: &[&str] = &[
    "polar",
    "bezier",
    "hull",
    "voronoi",
    "checkpoint",
    "repulsive",
    "circuit",
];

/// The z-profile of a track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZKind {
    /// z = 0 everywhere.
    Flat,
    /// Knot heights uniform in ±amplitude, interpolated around the loop.
    Uniform,
    /// A closed random walk.
    RandomWalk,
    /// Periodic smooth value noise, several octaves.
    Noise,
}

/// How the resampler spaces the centerline's points ([`crate::track::resample`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Constant spacing `spacing_m`.
    Uniform,
    /// Spacing `√(8·R·sagitta_m)` in `[spacing_m, max_spacing_m]` by local turn radius `R`.
    Curvature,
    /// The generator's own points, written at the curvature rule's spacing from its exact
    /// corner radii (the `circuit` generator only; no resampling).
    Generator,
}

impl Sampling {
    /// The preset's name of this rule.
    pub fn name(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::Curvature => "curvature",
            Self::Generator => "generator",
        }
    }
}

/// Geometry shared by all generators.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackParams {
    /// Capacity of every per-point buffer (points per env).
    pub n_max: u32,
    /// Half the drivable width, metres.
    pub half_width_m: f32,
    /// Target centerline point spacing, metres (grows if the track needs more than `n_max`);
    /// the finest spacing of [`Sampling::Curvature`].
    pub spacing_m: f32,
    /// How the resampler spaces the points.
    pub sampling: Sampling,
    /// The coarsest spacing of [`Sampling::Curvature`], metres (at least `spacing_m`).
    pub max_spacing_m: f32,
    /// The sagitta tolerance of [`Sampling::Curvature`], metres.
    pub sagitta_m: f32,
    /// Typical radius of a track, metres.
    pub scale_m: f32,
    /// Minimum turn radius of the centerline, metres (at least `half_width_m`).
    pub min_turn_radius_m: f32,
    /// Attempts per env before the deterministic fallback shape (1..=32).
    pub max_attempts: u32,
}

/// Relaxation of the resampled centerline.
#[derive(Clone, Debug, PartialEq)]
pub struct RelaxParams {
    /// Windows of the bounded loop (0 disables relaxation).
    pub max_windows: u32,
    /// Sweeps per window.
    pub sweeps_per_window: u32,
    /// Extra separation margin: non-neighbours keep ≥ 2·half_width·(1 + margin).
    pub margin: f32,
    /// Laplacian smoothing gain where the turn radius is below the minimum (0..=0.5).
    pub smoothing: f32,
}

/// The z-profile stage.
#[derive(Clone, Debug, PartialEq)]
pub struct ZProfileParams {
    /// The profile kind.
    pub kind: ZKind,
    /// Height amplitude, metres.
    pub amplitude_m: f32,
    /// Maximum |dz/ds|.
    pub max_grade: f32,
    /// Knots of `uniform`, base wavelength count of `noise`.
    pub knots: u32,
}

/// The optional `[gates]` section: a gate course of `min_gates..=max_gates` gates placed along
/// the preset's track (the guide), relaxed apart and checked for validity.
#[derive(Clone, Debug, PartialEq)]
pub struct GateParams {
    /// Fewest gates per course (4..=32).
    pub min_gates: u32,
    /// Most gates per course (`min_gates..=32`): the `G` dimension of gate buffers.
    pub max_gates: u32,
    /// Smallest inner (opening) width, metres.
    pub min_width_m: f32,
    /// Largest inner width, metres.
    pub max_width_m: f32,
    /// Smallest inner height, metres.
    pub min_height_m: f32,
    /// Largest inner height, metres.
    pub max_height_m: f32,
    /// Frame thickness (bar width and depth), metres.
    pub thickness_m: f32,
    /// Height of a gate's centre above the guide track, metres.
    pub altitude_m: f32,
    /// Uniform jitter of that height, ± metres.
    pub altitude_jitter_m: f32,
    /// Uniform lateral jitter off the guide track, ± metres.
    pub lateral_jitter_m: f32,
    /// Jitter of each gate's arc position, fraction of the nominal gap (0..=0.9).
    pub spacing_jitter: f32,
    /// Minimum distance between any two gate centres, metres.
    pub min_spacing_m: f32,
    /// Maximum |Δz| / horizontal distance between consecutive gates.
    pub max_grade: f32,
    /// Maximum turn between the incoming and outgoing legs at a gate, degrees.
    pub max_turn_deg: f32,
    /// Extra separation margin of the relaxation (targets are `(1 + margin)` × the minimum).
    pub margin: f32,
    /// Smoothing gain toward the neighbours' midpoint where a turn is too sharp (0..=0.5).
    pub smoothing: f32,
    /// Windows of the bounded relaxation loop (0 disables relaxation).
    pub max_windows: u32,
    /// Relaxation sweeps per window.
    pub sweeps_per_window: u32,
    /// Placement attempts per env before the deterministic fallback ring (1..=32).
    pub max_attempts: u32,
    /// Path samples per leg of the Catmull–Rom racing line through the gates.
    pub path_samples: u32,
    /// Half width of the flight corridor around the racing line (`off_track` threshold), metres.
    pub corridor_half_width_m: f32,
    /// Whether each gate stands on two posts (vertical cylinders down from its bottom corners).
    pub posts: bool,
}

impl GateParams {
    /// Radius of the bounding sphere of a gate frame of inner size `width × height`.
    pub fn bound_radius_m(&self, width_m: f32, height_m: f32) -> f32 {
        let t = self.thickness_m;
        let (a, b) = (0.5 * width_m + t, 0.5 * height_m + t);
        (a * a + b * b + 0.25 * t * t).sqrt()
    }

    /// Radius of the deterministic fallback ring of gates: `max(0.8·scale, 1.25·min_turn_radius)`.
    pub fn fallback_radius_m(track: &TrackParams) -> f32 {
        (0.8 * track.scale_m).max(1.25 * track.min_turn_radius_m)
    }

    /// Gates of the fallback ring: the most gates in `min_gates..=max_gates` that keep the ring
    /// valid (spacing, no overlap, turn), or `None` when even `min_gates` do not fit.
    pub fn fallback_gates(&self, track: &TrackParams) -> Option<u32> {
        let r = Self::fallback_radius_m(track);
        let bound = self.bound_radius_m(self.max_width_m, self.max_height_m);
        let need = self.min_spacing_m.max(2.0 * bound) * (1.0 + self.margin);
        (self.min_gates..=self.max_gates).rev().find(|&g| {
            let chord = 2.0 * r * crate::math::sin(crate::math::PI / g as f32);
            let turn_deg = 360.0 / g as f32;
            chord >= need && turn_deg <= 0.95 * self.max_turn_deg
        })
    }
}

/// The optional `[obstacles]` section: disc obstacles (cones) on the drivable band of every course.
#[derive(Clone, Debug, PartialEq)]
pub struct ObstacleParams {
    /// Obstacles per course (0..=64).
    pub count: u32,
    /// Disc radius, metres.
    pub radius_m: f32,
    /// Height above the path, metres (used by gate courses; track courses are planar).
    pub height_m: f32,
    /// Largest lateral offset as a fraction of the free half width (`half_width − radius`).
    pub lateral_frac: f32,
    /// Arc length kept free of obstacles on either side of the start line, metres.
    pub start_clear_m: f32,
}

/// A fully resolved track preset.
#[derive(Clone, Debug, PartialEq)]
pub struct Preset {
    /// Where it came from (a built-in name or a path).
    pub source: String,
    /// Shared geometry.
    pub track: TrackParams,
    /// The generator stage.
    pub generator: GeneratorParams,
    /// Relaxation.
    pub relax: RelaxParams,
    /// z-profile.
    pub zprofile: ZProfileParams,
    /// Gate-course parameters: `Some` when the preset has a `[gates]` section (a gate preset is
    /// a track preset whose track guides the gates; see [`crate::course::gates`]).
    pub gates: Option<GateParams>,
    /// Disc obstacles (cones) placed on every course: `Some` when the preset has an
    /// `[obstacles]` section.
    pub obstacles: Option<ObstacleParams>,
    resolved: String,
}

impl Preset {
    /// Loads a built-in preset by name, or a TOML file by path.
    pub fn load(name_or_path: &str) -> Result<Self> {
        let (text, source) = preset_text(name_or_path, BUILTIN, "preset")?;
        Self::parse(&text, &source)
    }

    /// The default preset (`track`).
    pub fn default_preset() -> Self {
        Self::load(DEFAULT).expect("the embedded default preset is valid")
    }

    /// Parses preset TOML text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Self> {
        let err = |message: String| preset_error(source, message);
        let root = parse_root(text, source)?;
        let mut out = toml::Table::new();

        let mut s = Section::new(&root, "track", source)?;
        let generator_name = s.choice("generator", "bezier", GENERATORS)?;
        let track = TrackParams {
            n_max: s.uint("n_max", 256, 16, 4096)?,
            half_width_m: s.float("half_width_m", 6.0, 0.5, 50.0)?,
            spacing_m: s.float("spacing_m", 5.0, 0.25, 100.0)?,
            sampling: match s
                .choice(
                    "sampling",
                    "uniform",
                    &["uniform", "curvature", "generator"],
                )?
                .as_str()
            {
                "uniform" => Sampling::Uniform,
                "curvature" => Sampling::Curvature,
                _ => Sampling::Generator,
            },
            max_spacing_m: s.float("max_spacing_m", 20.0, 0.25, 1000.0)?,
            sagitta_m: s.float("sagitta_m", 0.25, 0.001, 10.0)?,
            scale_m: s.float("scale_m", 120.0, 10.0, 10_000.0)?,
            min_turn_radius_m: s.float("min_turn_radius_m", 12.0, 0.5, 1000.0)?,
            max_attempts: s.uint("max_attempts", 8, 1, 32)?,
        };
        s.finish(&mut out)?;
        if track.min_turn_radius_m < track.half_width_m {
            return Err(err(format!(
                "key `track.min_turn_radius_m` = {}: expected at least `track.half_width_m` = {} \
                 (a tighter turn folds the inner border)",
                track.min_turn_radius_m, track.half_width_m
            )));
        }
        if track.sampling != Sampling::Uniform && track.max_spacing_m < track.spacing_m {
            return Err(err(format!(
                "key `track.max_spacing_m` = {}: expected at least `track.spacing_m` = {} \
                 (the coarsest spacing of `sampling = \"{}\"`)",
                track.max_spacing_m,
                track.spacing_m,
                track.sampling.name()
            )));
        }
        if track.sampling == Sampling::Generator && generator_name != "circuit" {
            return Err(err(format!(
                "key `track.sampling` = \"generator\": expected `track.generator` = \"circuit\" \
                 (only the circuit generator writes its points at their final spacing), not \"{}\"",
                generator_name
            )));
        }
        if track.scale_m < 4.0 * track.min_turn_radius_m {
            return Err(err(format!(
                "key `track.scale_m` = {}: expected at least 4 × `track.min_turn_radius_m` = {}",
                track.scale_m,
                4.0 * track.min_turn_radius_m
            )));
        }

        let mut s = Section::new(&root, &generator_name, source)?;
        let generator = match generator_name.as_str() {
            "polar" => GeneratorParams::Polar {
                n_ctrl: s.uint("n_ctrl", 12, 4, 64)?,
                radius_jitter: s.float("radius_jitter", 0.35, 0.0, 0.9)?,
                angle_jitter: s.float("angle_jitter", 0.3, 0.0, 0.45)?,
            },
            "bezier" => GeneratorParams::Bezier {
                n_ctrl: s.uint("n_ctrl", 10, 4, 32)?,
                handle: s.float("handle", 0.35, 0.05, 0.6)?,
                radius_jitter: s.float("radius_jitter", 0.45, 0.0, 0.9)?,
            },
            "hull" => GeneratorParams::Hull {
                n_points: s.uint("n_points", 20, 6, 64)?,
                displacement: s.float("displacement", 0.3, 0.0, 0.8)?,
            },
            "voronoi" => GeneratorParams::Voronoi {
                n_sites: s.uint("n_sites", 24, 6, 64)?,
                n_cells: s.uint("n_cells", 6, 2, 24)?,
                grid: s.uint("grid", 48, 16, 96)?,
            },
            "checkpoint" => GeneratorParams::Checkpoint {
                n_checkpoints: s.uint("n_checkpoints", 12, 5, 32)?,
                min_radius_frac: s.float("min_radius_frac", 0.45, 0.1, 0.95)?,
                max_turn_deg: s.float("max_turn_deg", 6.0, 1.0, 45.0)?,
                max_steps: s.uint("max_steps", 2000, 100, 8000)?,
            },
            "circuit" => GeneratorParams::Circuit {
                min_corners: s.uint("min_corners", 10, 3, 40)?,
                max_corners: s.uint("max_corners", 18, 3, 40)?,
                hairpin_weight: s.float("hairpin_weight", 0.15, 0.0, 1.0)?,
                slow_weight: s.float("slow_weight", 0.35, 0.0, 1.0)?,
                sweeper_weight: s.float("sweeper_weight", 0.3, 0.0, 1.0)?,
                chicane_weight: s.float("chicane_weight", 0.2, 0.0, 1.0)?,
                reverse_fraction: s.float("reverse_fraction", 0.3, 0.0, 1.0)?,
                min_length_m: s.float("min_length_m", 1200.0, 50.0, 20_000.0)?,
                max_length_m: s.float("max_length_m", 2400.0, 50.0, 20_000.0)?,
                max_radius_m: s.float("max_radius_m", 120.0, 1.5, 3000.0)?,
                transition: s.float("transition", 0.2, 0.0, 0.45)?,
            },
            _ => GeneratorParams::Repulsive {
                n_points: s.uint("n_points", 48, 16, 128)?,
                max_iters: s.uint("max_iters", 200, 10, 2000)?,
                n_obstacles: s.uint("n_obstacles", 3, 0, 12)?,
                obstacle_radius_frac: s.float("obstacle_radius_frac", 0.15, 0.02, 0.4)?,
                length_factor: s.float("length_factor", 1.3, 0.5, 3.0)?,
            },
        };
        if let GeneratorParams::Voronoi {
            n_sites, n_cells, ..
        } = generator
        {
            if n_cells > n_sites {
                return Err(err(format!(
                    "key `voronoi.n_cells` = {n_cells}: expected at most `voronoi.n_sites` = {n_sites}"
                )));
            }
        }
        if let GeneratorParams::Circuit {
            min_corners,
            max_corners,
            hairpin_weight,
            slow_weight,
            sweeper_weight,
            chicane_weight,
            min_length_m,
            max_length_m,
            max_radius_m,
            ..
        } = generator
        {
            check_circuit(
                (min_corners, max_corners),
                [hairpin_weight, slow_weight, sweeper_weight, chicane_weight],
                (min_length_m, max_length_m),
                max_radius_m,
                track.min_turn_radius_m,
            )
            .map_err(err)?;
        }
        s.finish(&mut out)?;

        let mut s = Section::new(&root, "relax", source)?;
        let relax = RelaxParams {
            max_windows: s.uint("max_windows", 10, 0, 1000)?,
            sweeps_per_window: s.uint("sweeps_per_window", 10, 1, 100)?,
            margin: s.float("margin", 0.1, 0.0, 2.0)?,
            smoothing: s.float("smoothing", 0.5, 0.0, 0.5)?,
        };
        s.finish(&mut out)?;
        if track.sampling != Sampling::Uniform && relax.max_windows > 0 {
            return Err(err(format!(
                "key `relax.max_windows` = {}: expected 0 with `track.sampling = \"{}\"` \
                 (relaxation evens out the spacing and reads neighbours by index gap at the mean \
                 spacing)",
                relax.max_windows,
                track.sampling.name()
            )));
        }

        let mut s = Section::new(&root, "zprofile", source)?;
        let kind = match s
            .choice("kind", "flat", &["flat", "uniform", "random_walk", "noise"])?
            .as_str()
        {
            "flat" => ZKind::Flat,
            "uniform" => ZKind::Uniform,
            "random_walk" => ZKind::RandomWalk,
            _ => ZKind::Noise,
        };
        let zprofile = ZProfileParams {
            kind,
            amplitude_m: s.float("amplitude_m", 0.0, 0.0, 1000.0)?,
            max_grade: s.float("max_grade", 0.08, 0.0, 1.0)?,
            knots: s.uint("knots", 6, 2, 64)?,
        };
        s.finish(&mut out)?;

        let gates = if root.contains_key("gates") {
            let mut s = Section::new(&root, "gates", source)?;
            let g = GateParams {
                min_gates: s.uint("min_gates", 6, 4, 32)?,
                max_gates: s.uint("max_gates", 12, 4, 32)?,
                min_width_m: s.float("min_width_m", 1.6, 0.2, 50.0)?,
                max_width_m: s.float("max_width_m", 2.4, 0.2, 50.0)?,
                min_height_m: s.float("min_height_m", 1.6, 0.2, 50.0)?,
                max_height_m: s.float("max_height_m", 2.4, 0.2, 50.0)?,
                thickness_m: s.float("thickness_m", 0.2, 0.01, 5.0)?,
                altitude_m: s.float("altitude_m", 2.5, 0.0, 1000.0)?,
                altitude_jitter_m: s.float("altitude_jitter_m", 1.0, 0.0, 100.0)?,
                lateral_jitter_m: s.float("lateral_jitter_m", 1.0, 0.0, 100.0)?,
                spacing_jitter: s.float("spacing_jitter", 0.3, 0.0, 0.9)?,
                min_spacing_m: s.float("min_spacing_m", 8.0, 0.5, 1000.0)?,
                max_grade: s.float("max_grade", 0.3, 0.0, 2.0)?,
                max_turn_deg: s.float("max_turn_deg", 100.0, 10.0, 170.0)?,
                margin: s.float("margin", 0.1, 0.0, 1.0)?,
                smoothing: s.float("smoothing", 0.3, 0.0, 0.5)?,
                max_windows: s.uint("max_windows", 10, 0, 1000)?,
                sweeps_per_window: s.uint("sweeps_per_window", 10, 1, 100)?,
                max_attempts: s.uint("max_attempts", 8, 1, 32)?,
                path_samples: s.uint("path_samples", 8, 2, 32)?,
                corridor_half_width_m: s.float("corridor_half_width_m", 3.0, 0.1, 100.0)?,
                posts: s.boolean("posts", true)?,
            };
            s.finish(&mut out)?;
            for (lo, hi, lo_v, hi_v) in [
                (
                    "min_gates",
                    "max_gates",
                    g.min_gates as f32,
                    g.max_gates as f32,
                ),
                ("min_width_m", "max_width_m", g.min_width_m, g.max_width_m),
                (
                    "min_height_m",
                    "max_height_m",
                    g.min_height_m,
                    g.max_height_m,
                ),
            ] {
                if hi_v < lo_v {
                    return Err(err(format!(
                        "key `gates.{hi}` = {hi_v}: expected at least `gates.{lo}` = {lo_v}"
                    )));
                }
            }
            if g.fallback_gates(&track).is_none() {
                return Err(err(format!(
                    "key `gates.min_gates` = {}: the fallback ring (radius {} m, from \
                     `track.scale_m` and `track.min_turn_radius_m`) cannot hold that many gates \
                     {} m apart (`gates.min_spacing_m`, or twice the largest gate's bounding \
                     radius) with turns under `gates.max_turn_deg` = {}",
                    g.min_gates,
                    GateParams::fallback_radius_m(&track),
                    g.min_spacing_m
                        .max(2.0 * g.bound_radius_m(g.max_width_m, g.max_height_m)),
                    g.max_turn_deg
                )));
            }
            Some(g)
        } else {
            None
        };

        let obstacles = if root.contains_key("obstacles") {
            let mut s = Section::new(&root, "obstacles", source)?;
            let o = ObstacleParams {
                count: s.uint("count", 8, 0, 64)?,
                radius_m: s.float("radius_m", 0.3, 0.05, 10.0)?,
                height_m: s.float("height_m", 0.7, 0.05, 100.0)?,
                lateral_frac: s.float("lateral_frac", 0.8, 0.0, 1.0)?,
                start_clear_m: s.float("start_clear_m", 10.0, 0.0, 1000.0)?,
            };
            s.finish(&mut out)?;
            Some(o)
        } else {
            None
        };

        let known: BTreeSet<&str> = [
            "track",
            "relax",
            "zprofile",
            "gates",
            "obstacles",
            generator_name.as_str(),
        ]
        .into();
        for key in root.keys() {
            if !known.contains(key.as_str()) {
                let hint = if GENERATORS.contains(&key.as_str()) {
                    format!("it configures generator `{key}`, but `track.generator` = \"{generator_name}\"")
                } else {
                    "expected one of [track], [relax], [zprofile] and the generator's section \
                     (or the optional [gates], [obstacles])"
                        .into()
                };
                return Err(err(format!("unknown section [{key}]: {hint}")));
            }
        }

        let resolved = toml::to_string(&out).expect("a TOML table serialises");
        Ok(Self {
            source: source.to_string(),
            track,
            generator,
            relax,
            zprofile,
            gates,
            obstacles,
            resolved,
        })
    }

    /// The resolved preset as TOML text: every key, defaults filled in.
    pub fn resolved_toml(&self) -> &str {
        &self.resolved
    }

    /// SHA-256 of [`resolved_toml`](Self::resolved_toml), lowercase hex.
    pub fn hash(&self) -> String {
        sha256_hex(&self.resolved)
    }
}

/// The one preset loader of track and scene presets: the text of the built-in `name_or_path`
/// (from `builtin`), or of the file at that path, with the name that errors cite. `kind`
/// ("preset", "scene preset") names the built-in list in the error for neither.
pub(crate) fn preset_text(
    name_or_path: &str,
    builtin: &[(&str, &str)],
    kind: &str,
) -> Result<(String, String)> {
    if let Some((name, text)) = builtin.iter().find(|(n, _)| *n == name_or_path) {
        return Ok((text.to_string(), name.to_string()));
    }
    let path = Path::new(name_or_path);
    if path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| Error::input(path, e))?;
        return Ok((text, name_or_path.to_string()));
    }
    let names: Vec<&str> = builtin.iter().map(|(n, _)| *n).collect();
    Err(preset_error(
        name_or_path,
        format!(
            "no built-in {kind} of that name and no such file; built-in {kind}s: {}",
            names.join(", ")
        ),
    ))
}

/// The error of preset `source` with `message`.
pub(crate) fn preset_error(source: &str, message: String) -> Error {
    Error::Preset {
        source_name: source.to_string(),
        message,
    }
}

/// The TOML table of preset text `text` (from `source`), or an error naming the source.
pub(crate) fn parse_root(text: &str, source: &str) -> Result<toml::Table> {
    text.parse()
        .map_err(|e: toml::de::Error| preset_error(source, format!("not valid TOML: {e}")))
}

/// SHA-256 of `text`, lowercase hex: the hash of a resolved preset.
/// The cross-key checks of a `[circuit]` section: a message naming the offending key, or `Ok`.
fn check_circuit(
    corners: (u32, u32),
    weights: [f32; 4],
    length_m: (f32, f32),
    max_radius_m: f32,
    min_turn_radius_m: f32,
) -> std::result::Result<(), String> {
    if corners.0 > corners.1 {
        return Err(format!(
            "key `circuit.max_corners` = {}: expected at least `circuit.min_corners` = {}",
            corners.1, corners.0
        ));
    }
    if weights.iter().sum::<f32>() <= 0.0 {
        return Err("keys `circuit.*_weight` are all 0: expected a positive sum".into());
    }
    if length_m.0 > length_m.1 {
        return Err(format!(
            "key `circuit.max_length_m` = {}: expected at least `circuit.min_length_m` = {}",
            length_m.1, length_m.0
        ));
    }
    if max_radius_m < 3.0 * min_turn_radius_m {
        return Err(format!(
            "key `circuit.max_radius_m` = {max_radius_m}: expected at least 3 × \
             `track.min_turn_radius_m` = {}",
            3.0 * min_turn_radius_m
        ));
    }
    Ok(())
}

pub(crate) fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// One `[section]` of a preset being read: tracks which keys were used and records resolved values.
/// Shared by the track presets and the scene presets ([`crate::scene::preset`]).
pub(crate) struct Section<'a> {
    name: String,
    table: Option<&'a toml::Table>,
    used: BTreeSet<String>,
    resolved: toml::Table,
    source: &'a str,
}

impl<'a> Section<'a> {
    pub(crate) fn new(root: &'a toml::Table, name: &str, source: &'a str) -> Result<Self> {
        let table = match root.get(name) {
            None => None,
            Some(toml::Value::Table(t)) => Some(t),
            Some(other) => {
                return Err(Error::Preset {
                    source_name: source.to_string(),
                    message: format!("`{name}` = {other}: expected a table ([{name}])"),
                })
            }
        };
        Ok(Self {
            name: name.to_string(),
            table,
            used: BTreeSet::new(),
            resolved: toml::Table::new(),
            source,
        })
    }

    pub(crate) fn error(&self, key: &str, value: &toml::Value, expected: &str) -> Error {
        Error::Preset {
            source_name: self.source.to_string(),
            message: format!("key `{}.{key}` = {value}: expected {expected}", self.name),
        }
    }

    pub(crate) fn raw(&mut self, key: &str) -> Option<&'a toml::Value> {
        self.used.insert(key.to_string());
        self.table.and_then(|t| t.get(key))
    }

    pub(crate) fn float(&mut self, key: &str, default: f32, lo: f32, hi: f32) -> Result<f32> {
        let expected = format!("a number in [{lo}, {hi}]");
        let v = match self.raw(key) {
            None => default,
            Some(value) => {
                let x = match value {
                    toml::Value::Float(f) => *f,
                    toml::Value::Integer(i) => *i as f64,
                    _ => return Err(self.error(key, value, &expected)),
                };
                // Compare in f32 so that a documented bound such as 0.9 is itself accepted.
                let xf = x as f32;
                if !(xf >= lo && xf <= hi) {
                    return Err(self.error(key, value, &expected));
                }
                xf
            }
        };
        self.resolved
            .insert(key.to_string(), toml::Value::Float(f64::from(v)));
        Ok(v)
    }

    pub(crate) fn uint(&mut self, key: &str, default: u32, lo: u32, hi: u32) -> Result<u32> {
        let expected = format!("an integer in [{lo}, {hi}]");
        let v = match self.raw(key) {
            None => default,
            Some(value) => match value {
                toml::Value::Integer(i) if *i >= i64::from(lo) && *i <= i64::from(hi) => *i as u32,
                _ => return Err(self.error(key, value, &expected)),
            },
        };
        self.resolved
            .insert(key.to_string(), toml::Value::Integer(i64::from(v)));
        Ok(v)
    }

    pub(crate) fn boolean(&mut self, key: &str, default: bool) -> Result<bool> {
        let v = match self.raw(key) {
            None => default,
            Some(toml::Value::Boolean(b)) => *b,
            Some(value) => return Err(self.error(key, value, "true or false")),
        };
        self.resolved
            .insert(key.to_string(), toml::Value::Boolean(v));
        Ok(v)
    }

    pub(crate) fn choice(&mut self, key: &str, default: &str, allowed: &[&str]) -> Result<String> {
        let v = match self.raw(key) {
            None => default.to_string(),
            Some(value) => match value {
                toml::Value::String(s) if allowed.contains(&s.as_str()) => s.clone(),
                _ => {
                    let list: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                    return Err(self.error(key, value, &format!("one of {}", list.join(", "))));
                }
            },
        };
        self.resolved
            .insert(key.to_string(), toml::Value::String(v.clone()));
        Ok(v)
    }

    /// Rejects unknown keys and adds the resolved section to `out`.
    pub(crate) fn finish(self, out: &mut toml::Table) -> Result<()> {
        if let Some(t) = self.table {
            for (key, value) in t {
                if !self.used.contains(key) {
                    let known: Vec<&str> = self.used.iter().map(String::as_str).collect();
                    return Err(Error::Preset {
                        source_name: self.source.to_string(),
                        message: format!(
                            "unknown key `{}.{key}` = {value}: expected one of {}",
                            self.name,
                            known.join(", ")
                        ),
                    });
                }
            }
        }
        out.insert(self.name, toml::Value::Table(self.resolved));
        Ok(())
    }
}
