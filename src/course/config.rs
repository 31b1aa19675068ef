//! The sim-time settings of a [`Course`](super::Course) and the inputs a caller binds to it.

use super::heightfield::HeightfieldConfig;
use super::props::PropConfig;
use crate::geom::{fails_ge, Quat, Vec2, Vec3};
use crate::{Error, Result};

/// Sim-time settings of a [`Course`](super::Course) (generation settings live in the [`Preset`](crate::preset::Preset)).
#[derive(Clone, Debug, PartialEq)]
pub struct CourseConfig {
    /// Global index of env 0 (a shard of a bigger run starts past 0). Default 0.
    pub env_base: u64,
    /// Track mode: target arc length between checkpoints, metres (> 0). Default 25.
    pub checkpoint_spacing_m: f32,
    /// Track mode: the most checkpoints per course (≥ 4); more wanted are reported in
    /// [`CourseGeometry::checkpoints_truncated`](super::CourseGeometry::checkpoints_truncated) and the spacing widens. Default 64.
    pub max_checkpoints: u32,
    /// Localization walks at most this many path segments each way from the previous one before
    /// falling back to a full scan (≥ 1; see [`localize`](super::localize)). Default 3.
    pub localize_window: u32,
    /// Localization scans the whole path when the windowed nearest point is farther than this,
    /// metres; `None` means the band half width. Default `None`.
    pub relocalize_m: Option<f32>,
    /// Footprint half extents used when none are bound: track `[half_length, half_width]` of
    /// the box, gates `[radius, unused]` of the sphere; metres, ≥ 0. Default `[0, 0]` (a point).
    pub footprint_half_extents_m: Vec2,
    /// `wrong_way` is set when a step moves backward along the path by more than this, metres
    /// (≥ 0). Default 0: any backward motion.
    pub wrong_way_tolerance_m: f32,
    /// Track mode: bake a road heightfield per env ([`Course::heightfields`](super::Course::heightfields);
    /// [`super::heightfield`]). Default `None`.
    pub heightfield: Option<HeightfieldConfig>,
    /// Track mode: place boundary props per env ([`Course::props`](super::Course::props);
    /// [`super::props`]). Default `None`.
    pub props: Option<PropConfig>,
}

impl Default for CourseConfig {
    fn default() -> Self {
        Self {
            env_base: 0,
            checkpoint_spacing_m: 25.0,
            max_checkpoints: 64,
            localize_window: 3,
            relocalize_m: None,
            footprint_half_extents_m: Vec2::ZERO,
            wrong_way_tolerance_m: 0.0,
            heightfield: None,
            props: None,
        }
    }
}

impl CourseConfig {
    pub(super) fn check(&self) -> Result<()> {
        let bad = |field: &str, value: String, expected: &str| {
            Err(Error::Invalid(format!(
                "CourseConfig.{field} = {value}: expected {expected}"
            )))
        };
        if !(self.checkpoint_spacing_m > 0.0 && self.checkpoint_spacing_m.is_finite()) {
            return bad(
                "checkpoint_spacing_m",
                self.checkpoint_spacing_m.to_string(),
                "a finite number > 0",
            );
        }
        if self.max_checkpoints < 4 {
            return bad(
                "max_checkpoints",
                self.max_checkpoints.to_string(),
                "at least 4",
            );
        }
        if self.localize_window < 1 {
            return bad("localize_window", "0".into(), "at least 1");
        }
        if let Some(r) = self.relocalize_m {
            if fails_ge(r, 0.0) {
                return bad("relocalize_m", r.to_string(), "a number ≥ 0 (or None)");
            }
        }
        let [a, b] = self.footprint_half_extents_m.to_array();
        if !(a >= 0.0 && b >= 0.0 && a.is_finite() && b.is_finite()) {
            return bad(
                "footprint_half_extents_m",
                format!("[{a}, {b}]"),
                "two finite numbers ≥ 0",
            );
        }
        if fails_ge(self.wrong_way_tolerance_m, 0.0) {
            return bad(
                "wrong_way_tolerance_m",
                self.wrong_way_tolerance_m.to_string(),
                "a number ≥ 0",
            );
        }
        if let Some(h) = &self.heightfield {
            h.check()
                .map_err(|e| Error::Invalid(format!("CourseConfig.heightfield: {e}")))?;
        }
        if let Some(p) = &self.props {
            p.check()
                .map_err(|e| Error::Invalid(format!("CourseConfig.props: {e}")))?;
        }
        Ok(())
    }
}

/// The buffers of a [`Binding`]: `(positions, orientations, half_extents)`.
pub type BindingParts = (Vec<Vec3>, Option<Vec<Quat>>, Option<Vec<Vec2>>);

/// The per-env input buffers a simulator writes in place between steps: positions, and
/// optionally orientations and footprint half extents. Each holds one entry per env.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub(super) positions: Vec<Vec3>,
    pub(super) orientations: Option<Vec<Quat>>,
    pub(super) half_extents: Option<Vec<Vec2>>,
}

impl Binding {
    /// A binding of per-env positions `[x, y, z]`, metres.
    pub fn new(positions: Vec<Vec3>) -> Self {
        Self {
            positions,
            orientations: None,
            half_extents: None,
        }
    }

    /// Adds per-env orientations `[x, y, z, w]` (unit quaternions; local x is forward). In track
    /// mode they orient the box footprint (its heading is local x projected on the ground);
    /// without them the box is aligned with the path.
    pub fn with_orientations(mut self, orientations: Vec<Quat>) -> Self {
        self.orientations = Some(orientations);
        self
    }

    /// Adds per-env footprint half extents: track `[half_length, half_width]` of the box, gates
    /// `[radius, unused]` of the sphere; metres. Without them every env uses
    /// [`CourseConfig::footprint_half_extents_m`].
    pub fn with_half_extents(mut self, half_extents: Vec<Vec2>) -> Self {
        self.half_extents = Some(half_extents);
        self
    }

    /// The positions.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// The orientations, if bound.
    pub fn orientations(&self) -> Option<&[Quat]> {
        self.orientations.as_deref()
    }

    /// The half extents, if bound.
    pub fn half_extents(&self) -> Option<&[Vec2]> {
        self.half_extents.as_deref()
    }

    /// The buffers, given back: `(positions, orientations, half_extents)`.
    pub fn into_parts(self) -> BindingParts {
        (self.positions, self.orientations, self.half_extents)
    }
}
