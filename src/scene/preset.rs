//! Scene presets: TOML files (`presets/scene-*.toml`) that fix every parameter of a scene kind.
//!
//! The parser follows the track presets' rules ([`crate::preset`]): every key has a default,
//! unknown sections and keys, wrong types and out-of-range values are errors naming the key, the
//! value and what was expected, and a loaded preset keeps its resolved TOML (every key) and its
//! SHA-256 hash. `[scene]` holds the domain and grid; the section named by `scene.kind` holds the
//! generator's parameters.
//!
//! The `gates` kind builds, for each env, the gate frames of that env's gate course (a built-in
//! gate preset of [`crate::course`], generated for the same seed, env and generation), a ground
//! plane, and pillars kept out of the flight corridor.

use std::collections::BTreeSet;

use crate::preset::{parse_root, preset_error, preset_text, sha256_hex, Section};
use crate::Result;

/// The built-in scene presets: `(name, TOML text)`.
pub const BUILTIN: &[(&str, &str)] = &[
    ("rooms", include_str!("../../presets/scene-rooms.toml")),
    ("forest", include_str!("../../presets/scene-forest.toml")),
    ("gates", include_str!("../../presets/scene-gates.toml")),
];

/// The scene kinds a preset can name.
pub const KINDS: &[&str] = &["rooms", "forest", "gates"];

/// The gate presets a `gates` scene can take its courses from.
pub const GATE_COURSES: &[&str] = &["gates", "gates-indoor"];

/// Course-aligned scenes: each env's gate course as gate frames, a ground plane, and pillars kept
/// out of the flight corridor.
#[derive(Clone, Debug, PartialEq)]
pub struct GatesParams {
    /// The built-in gate preset the courses come from.
    pub course: String,
    /// That preset, resolved.
    pub course_preset: crate::preset::Preset,
    /// Pillars (vertical cylinders) placed outside the corridor.
    pub pillars: u32,
    /// Smallest pillar radius, metres.
    pub pillar_radius_min_m: f32,
    /// Largest pillar radius, metres.
    pub pillar_radius_max_m: f32,
    /// Pillar height, metres.
    pub pillar_height_m: f32,
    /// Clearance between a pillar and the flight line through the gates, metres.
    pub corridor_m: f32,
}

/// Indoor floors: rooms on a grid, doors along a spanning tree, some walls left open,
/// furniture along the walls.
#[derive(Clone, Debug, PartialEq)]
pub struct RoomsParams {
    /// Rooms per side of the floor plan (1..=12).
    pub grid: u32,
    /// Side of one grid cell, metres.
    pub cell_m: f32,
    /// Wall height, metres.
    pub wall_height_m: f32,
    /// Wall thickness, metres.
    pub wall_thickness_m: f32,
    /// Door opening width, metres.
    pub door_width_m: f32,
    /// Door opening height, metres (below `wall_height_m`).
    pub door_height_m: f32,
    /// Chance that an interior wall is left out entirely (open plan, corridors).
    pub open_wall_fraction: f32,
    /// Fewest furniture pieces per room.
    pub furniture_min: u32,
    /// Most furniture pieces per room.
    pub furniture_max: u32,
    /// Smallest furniture footprint side, metres.
    pub furniture_size_min_m: f32,
    /// Largest furniture footprint side, metres.
    pub furniture_size_max_m: f32,
    /// Tallest furniture, metres.
    pub furniture_height_max_m: f32,
    /// Every position and size is a multiple of this, metres (0 = no snapping).
    pub snap_m: f32,
    /// Close the rooms with a ceiling at `wall_height_m`.
    pub ceiling: bool,
}

/// Outdoor clutter: a ground plane, trees (trunk cylinders, capsule or sphere canopies), rocks.
#[derive(Clone, Debug, PartialEq)]
pub struct ForestParams {
    /// Trees per env (tried; placement may give up on some).
    pub trees: u32,
    /// Smallest trunk radius, metres.
    pub trunk_radius_min_m: f32,
    /// Largest trunk radius, metres.
    pub trunk_radius_max_m: f32,
    /// Shortest tree, metres.
    pub tree_height_min_m: f32,
    /// Tallest tree, metres.
    pub tree_height_max_m: f32,
    /// Smallest canopy radius, metres.
    pub canopy_radius_min_m: f32,
    /// Largest canopy radius, metres.
    pub canopy_radius_max_m: f32,
    /// Largest trunk tilt from vertical, degrees.
    pub tilt_max_deg: f32,
    /// Rocks per env.
    pub rocks: u32,
    /// Smallest rock size, metres.
    pub rock_size_min_m: f32,
    /// Largest rock size, metres.
    pub rock_size_max_m: f32,
    /// Least distance between trunks, metres.
    pub min_spacing_m: f32,
    /// Radius of the tree-free clearing around the spawn point (the domain centre), metres.
    pub clearing_radius_m: f32,
}

/// A scene kind and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum SceneKind {
    /// See [`RoomsParams`].
    Rooms(RoomsParams),
    /// See [`ForestParams`].
    Forest(ForestParams),
    /// See [`GatesParams`].
    Gates(Box<GatesParams>),
}

/// A fully resolved scene preset.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenePreset {
    /// Where it came from (a built-in name or a path).
    pub source: String,
    /// Side of each env's cubic domain, metres.
    pub size_m: f32,
    /// Default voxels per side (a power of two, 8..=512).
    pub resolution: u32,
    /// Truncation band, voxels.
    pub truncation_vox: f32,
    /// The generator.
    pub kind: SceneKind,
    resolved: String,
}

impl ScenePreset {
    /// Loads a built-in scene preset by name (`rooms`, `forest`, `gates`), or a TOML file by path.
    pub fn load(name_or_path: &str) -> Result<Self> {
        let (text, source) = preset_text(name_or_path, BUILTIN, "scene preset")?;
        Self::parse(&text, &source)
    }

    /// Parses scene preset TOML text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Self> {
        let err = |message: String| preset_error(source, message);
        let root = parse_root(text, source)?;
        let mut out = toml::Table::new();

        let mut s = Section::new(&root, "scene", source)?;
        let kind_name = s.choice("kind", "rooms", KINDS)?;
        let size_m = s.float("size_m", 16.0, 1.0, 10_000.0)?;
        let resolution = s.uint("resolution", 128, 8, 512)?;
        if !resolution.is_power_of_two() {
            return Err(err(format!(
                "key `scene.resolution` = {resolution}: expected a power of two in [8, 512]"
            )));
        }
        let truncation_vox = s.float("truncation_vox", 4.0, 2.0, 16.0)?;
        s.finish(&mut out)?;

        let mut s = Section::new(&root, &kind_name, source)?;
        let kind = if kind_name == "rooms" {
            let p = RoomsParams {
                grid: s.uint("grid", 4, 1, 12)?,
                cell_m: s.float("cell_m", 3.5, 1.5, 50.0)?,
                wall_height_m: s.float("wall_height_m", 2.8, 0.5, 50.0)?,
                wall_thickness_m: s.float("wall_thickness_m", 0.2, 0.01, 2.0)?,
                door_width_m: s.float("door_width_m", 1.0, 0.3, 10.0)?,
                door_height_m: s.float("door_height_m", 2.1, 0.3, 50.0)?,
                open_wall_fraction: s.float("open_wall_fraction", 0.2, 0.0, 1.0)?,
                furniture_min: s.uint("furniture_min", 1, 0, 16)?,
                furniture_max: s.uint("furniture_max", 3, 0, 16)?,
                furniture_size_min_m: s.float("furniture_size_min_m", 0.4, 0.05, 10.0)?,
                furniture_size_max_m: s.float("furniture_size_max_m", 1.4, 0.05, 10.0)?,
                furniture_height_max_m: s.float("furniture_height_max_m", 1.2, 0.1, 50.0)?,
                snap_m: s.float("snap_m", 0.25, 0.0, 5.0)?,
                ceiling: s.boolean("ceiling", false)?,
            };
            let need = |cond: bool, message: String| if cond { Ok(()) } else { Err(err(message)) };
            let span = p.grid as f32 * p.cell_m + p.wall_thickness_m;
            need(
                span <= size_m,
                format!(
                    "`rooms.grid` × `rooms.cell_m` + `rooms.wall_thickness_m` = {span} m: \
                     expected at most `scene.size_m` = {size_m}"
                ),
            )?;
            need(
                p.wall_height_m < size_m - 0.5,
                format!(
                    "key `rooms.wall_height_m` = {}: expected below `scene.size_m` − 0.5 = {}",
                    p.wall_height_m,
                    size_m - 0.5
                ),
            )?;
            need(
                p.door_height_m < p.wall_height_m,
                format!(
                    "key `rooms.door_height_m` = {}: expected below `rooms.wall_height_m` = {}",
                    p.door_height_m, p.wall_height_m
                ),
            )?;
            let free = p.cell_m - 2.0 * p.wall_thickness_m - 0.4;
            need(
                p.door_width_m <= free,
                format!(
                    "key `rooms.door_width_m` = {}: expected at most `rooms.cell_m` − 2 × \
                     `rooms.wall_thickness_m` − 0.4 = {free}",
                    p.door_width_m
                ),
            )?;
            need(
                p.furniture_min <= p.furniture_max,
                format!(
                    "key `rooms.furniture_min` = {}: expected at most `rooms.furniture_max` = {}",
                    p.furniture_min, p.furniture_max
                ),
            )?;
            need(
                p.furniture_size_min_m <= p.furniture_size_max_m,
                format!(
                    "key `rooms.furniture_size_min_m` = {}: expected at most \
                     `rooms.furniture_size_max_m` = {}",
                    p.furniture_size_min_m, p.furniture_size_max_m
                ),
            )?;
            need(
                p.furniture_height_max_m < p.wall_height_m,
                format!(
                    "key `rooms.furniture_height_max_m` = {}: expected below \
                     `rooms.wall_height_m` = {}",
                    p.furniture_height_max_m, p.wall_height_m
                ),
            )?;
            SceneKind::Rooms(p)
        } else if kind_name == "gates" {
            let course = s.choice("course", "gates-indoor", GATE_COURSES)?;
            let course_preset = crate::preset::Preset::load(&course)?;
            let p = GatesParams {
                course,
                course_preset,
                pillars: s.uint("pillars", 12, 0, 1000)?,
                pillar_radius_min_m: s.float("pillar_radius_min_m", 0.3, 0.05, 20.0)?,
                pillar_radius_max_m: s.float("pillar_radius_max_m", 0.8, 0.05, 20.0)?,
                pillar_height_m: s.float("pillar_height_m", 6.0, 0.5, 1000.0)?,
                corridor_m: s.float("corridor_m", 2.5, 0.0, 1000.0)?,
            };
            if p.pillar_radius_min_m > p.pillar_radius_max_m {
                return Err(err(format!(
                    "key `gates.pillar_radius_min_m` = {}: expected at most \
                     `gates.pillar_radius_max_m` = {}",
                    p.pillar_radius_min_m, p.pillar_radius_max_m
                )));
            }
            // The course spans about ±2·scale around the origin; it must fit the domain.
            let span = 4.0 * p.course_preset.track.scale_m;
            if span > size_m {
                return Err(err(format!(
                    "`scene.size_m` = {size_m}: expected at least 4 × the course preset's \
                     `track.scale_m` = {span} m, so that `{}` courses fit the domain",
                    p.course
                )));
            }
            if p.pillar_height_m > size_m - 0.5 {
                return Err(err(format!(
                    "key `gates.pillar_height_m` = {}: expected below `scene.size_m` − 0.5 = {}",
                    p.pillar_height_m,
                    size_m - 0.5
                )));
            }
            SceneKind::Gates(Box::new(p))
        } else {
            let p = ForestParams {
                trees: s.uint("trees", 28, 0, 1000)?,
                trunk_radius_min_m: s.float("trunk_radius_min_m", 0.15, 0.01, 10.0)?,
                trunk_radius_max_m: s.float("trunk_radius_max_m", 0.35, 0.01, 10.0)?,
                tree_height_min_m: s.float("tree_height_min_m", 4.0, 0.5, 100.0)?,
                tree_height_max_m: s.float("tree_height_max_m", 9.0, 0.5, 100.0)?,
                canopy_radius_min_m: s.float("canopy_radius_min_m", 1.0, 0.1, 50.0)?,
                canopy_radius_max_m: s.float("canopy_radius_max_m", 2.2, 0.1, 50.0)?,
                tilt_max_deg: s.float("tilt_max_deg", 6.0, 0.0, 45.0)?,
                rocks: s.uint("rocks", 14, 0, 1000)?,
                rock_size_min_m: s.float("rock_size_min_m", 0.3, 0.05, 20.0)?,
                rock_size_max_m: s.float("rock_size_max_m", 1.2, 0.05, 20.0)?,
                min_spacing_m: s.float("min_spacing_m", 2.5, 0.0, 100.0)?,
                clearing_radius_m: s.float("clearing_radius_m", 3.0, 0.0, 100.0)?,
            };
            for (lo_name, lo, hi_name, hi) in [
                (
                    "trunk_radius_min_m",
                    p.trunk_radius_min_m,
                    "trunk_radius_max_m",
                    p.trunk_radius_max_m,
                ),
                (
                    "tree_height_min_m",
                    p.tree_height_min_m,
                    "tree_height_max_m",
                    p.tree_height_max_m,
                ),
                (
                    "canopy_radius_min_m",
                    p.canopy_radius_min_m,
                    "canopy_radius_max_m",
                    p.canopy_radius_max_m,
                ),
                (
                    "rock_size_min_m",
                    p.rock_size_min_m,
                    "rock_size_max_m",
                    p.rock_size_max_m,
                ),
            ] {
                if lo > hi {
                    return Err(err(format!(
                        "key `forest.{lo_name}` = {lo}: expected at most `forest.{hi_name}` = {hi}"
                    )));
                }
            }
            if p.tree_height_max_m + p.canopy_radius_max_m > size_m - 0.5 {
                return Err(err(format!(
                    "`forest.tree_height_max_m` + `forest.canopy_radius_max_m` = {} m: expected \
                     below `scene.size_m` − 0.5 = {}",
                    p.tree_height_max_m + p.canopy_radius_max_m,
                    size_m - 0.5
                )));
            }
            SceneKind::Forest(p)
        };
        s.finish(&mut out)?;

        let known: BTreeSet<&str> = ["scene", kind_name.as_str()].into();
        for key in root.keys() {
            if !known.contains(key.as_str()) {
                let hint = if KINDS.contains(&key.as_str()) {
                    format!("it configures kind `{key}`, but `scene.kind` = \"{kind_name}\"")
                } else {
                    "expected [scene] and the section of `scene.kind`".into()
                };
                return Err(err(format!("unknown section [{key}]: {hint}")));
            }
        }
        let resolved = toml::to_string(&out).expect("a TOML table serialises");
        Ok(Self {
            source: source.to_string(),
            size_m,
            resolution,
            truncation_vox,
            kind,
            resolved,
        })
    }

    /// The kind's name, as written in presets.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            SceneKind::Rooms(_) => "rooms",
            SceneKind::Forest(_) => "forest",
            SceneKind::Gates(_) => "gates",
        }
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
