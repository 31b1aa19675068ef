//! Sensor helpers: poses, a pinhole depth camera and lidar rings, as ray generators.
//!
//! A sensor's rays are written into caller buffers (`origins`, `dirs`, env-major: env `e`'s rays
//! are `e·K .. (e+1)·K`, `K` rays per env), ready for
//! [`cast_rays`](super::cast_rays) with [`RayEnvs::Blocks`](super::RayEnvs::Blocks).
//! Each env's sensor pose is its body pose composed with the sensor's mount pose on the body
//! (`world = body ∘ mount`). Sensor frames follow the robotics convention: `+x` forward,
//! `+y` left, `+z` up.

use crate::geom::{self, Quat, Vec3};
use crate::math::sin_cos;
use crate::{Error, Result};

/// A rigid pose: a position (metres) and a rotation (unit quaternion `[x, y, z, w]`, local →
/// world; body axes `+x` forward, `+y` left, `+z` up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position, metres.
    pub position: Vec3,
    /// Rotation.
    pub rotation: Quat,
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose {
    /// The identity pose.
    pub const IDENTITY: Pose = Pose {
        position: Vec3::ZERO,
        rotation: geom::IDENTITY,
    };

    /// `self ∘ child`: `child` expressed in `self`'s frame, mapped to the world.
    pub fn compose(&self, child: &Pose) -> Pose {
        Pose {
            position: self.position + self.apply_dir(child.position),
            rotation: geom::compose(self.rotation, child.rotation),
        }
    }

    /// The pose at `position` whose `+x` points at `target` and whose `+y` is horizontal
    /// (`+z` as up as it can be); looking straight up or down picks `+y` = world `+y`.
    pub fn look_at(position: Vec3, target: Vec3) -> Pose {
        let norm = |v: Vec3| {
            let n = v.length();
            if n > 0.0 {
                v / n
            } else {
                Vec3::X
            }
        };
        let x = norm(target - position);
        let side = Vec3::Z.cross(x);
        let y = if side.x * side.x + side.y * side.y > 1e-12 {
            norm(side)
        } else {
            Vec3::Y
        };
        let z = x.cross(y);
        Pose {
            position,
            rotation: geom::from_axes(x, y, z),
        }
    }

    /// A local direction in world coordinates.
    pub fn apply_dir(&self, v: Vec3) -> Vec3 {
        geom::rotate(self.rotation, v)
    }
}

fn check_buffers(envs: usize, per_env: usize, origins: usize, dirs: usize) -> Result<()> {
    let want = envs * per_env;
    if origins != want || dirs != want {
        return Err(Error::Invalid(format!(
            "sensor ray buffers hold {origins} origins and {dirs} dirs: expected {envs} envs × \
             {per_env} rays = {want} each"
        )));
    }
    Ok(())
}

/// Writes `local_dirs` of every env, rotated by `bodies[e] ∘ mount`, into the buffers.
fn emit(
    bodies: &[Pose],
    mount: &Pose,
    local_dirs: &[[f32; 3]],
    origins: &mut [[f32; 3]],
    dirs: &mut [[f32; 3]],
) -> Result<()> {
    let k = local_dirs.len();
    check_buffers(bodies.len(), k, origins.len(), dirs.len())?;
    for (e, body) in bodies.iter().enumerate() {
        let pose = body.compose(mount);
        for (j, &l) in local_dirs.iter().enumerate() {
            origins[e * k + j] = pose.position.to_array();
            dirs[e * k + j] = pose.apply_dir(Vec3::from(l)).to_array();
        }
    }
    Ok(())
}

/// A pinhole depth camera looking along its `+x`, image `y` down (= `−z`), image `x` right
/// (= `−y`).
#[derive(Clone, Debug, PartialEq)]
pub struct PinholeCamera {
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Vertical field of view, radians (0, π).
    pub fov_y: f32,
}

impl PinholeCamera {
    /// Checks the parameters.
    pub fn new(width: u32, height: u32, fov_y: f32) -> Result<Self> {
        if width == 0 || height == 0 {
            return Err(Error::Invalid(format!(
                "camera {width}×{height}: expected at least 1×1 pixels"
            )));
        }
        if !(fov_y > 0.0 && fov_y < crate::math::PI) {
            return Err(Error::Invalid(format!(
                "camera fov_y = {fov_y} rad: expected a number in (0, π)"
            )));
        }
        Ok(Self {
            width,
            height,
            fov_y,
        })
    }

    /// Rays per env (`width · height`).
    pub fn rays_per_env(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Unit ray directions in the camera frame, row-major from the top-left pixel.
    pub fn local_dirs(&self) -> Vec<[f32; 3]> {
        let (s, c) = sin_cos(0.5 * self.fov_y);
        let focal = 0.5 * self.height as f32 * c / s;
        let (w, h) = (self.width as f32, self.height as f32);
        let mut out = Vec::with_capacity(self.rays_per_env());
        for v in 0..self.height {
            for u in 0..self.width {
                let right = (u as f32 + 0.5 - 0.5 * w) / focal;
                let down = (v as f32 + 0.5 - 0.5 * h) / focal;
                let n = (1.0 + right * right + down * down).sqrt();
                out.push([1.0 / n, -right / n, -down / n]);
            }
        }
        out
    }

    /// Writes every env's rays (env-major, row-major pixels) for body poses `bodies` and the
    /// camera's `mount` on the body.
    pub fn rays(
        &self,
        bodies: &[Pose],
        mount: &Pose,
        origins: &mut [[f32; 3]],
        dirs: &mut [[f32; 3]],
    ) -> Result<()> {
        emit(bodies, mount, &self.local_dirs(), origins, dirs)
    }

    /// Turns ray distances (metres along each ray) into depth along the optical axis, in place;
    /// values that are not finite or equal `no_hit_value` are left as they are.
    pub fn distance_to_depth(&self, distances: &mut [f32], no_hit_value: f32) -> Result<()> {
        let local = self.local_dirs();
        if distances.len() % local.len() != 0 {
            return Err(Error::Invalid(format!(
                "{} distances: expected a multiple of {} (one image per env)",
                distances.len(),
                local.len()
            )));
        }
        for image in distances.chunks_exact_mut(local.len()) {
            for (d, l) in image.iter_mut().zip(&local) {
                if d.is_finite() && d.to_bits() != no_hit_value.to_bits() {
                    *d *= l[0];
                }
            }
        }
        Ok(())
    }
}

/// A spinning lidar: `channels` rings at elevations evenly spaced over
/// `[elevation_min, elevation_max]`, `samples` azimuths each from 0 (forward) counter-clockwise.
#[derive(Clone, Debug, PartialEq)]
pub struct LidarRing {
    /// Rings (≥ 1).
    pub channels: u32,
    /// Azimuth samples per ring (≥ 1).
    pub samples: u32,
    /// Lowest elevation, radians.
    pub elevation_min: f32,
    /// Highest elevation, radians.
    pub elevation_max: f32,
}

impl LidarRing {
    /// Rays per env (`channels · samples`).
    pub fn rays_per_env(&self) -> usize {
        self.channels as usize * self.samples as usize
    }

    /// Unit ray directions in the sensor frame, ring-major.
    pub fn local_dirs(&self) -> Result<Vec<[f32; 3]>> {
        if self.channels == 0 || self.samples == 0 {
            return Err(Error::Invalid(format!(
                "lidar {} channels × {} samples: expected at least 1 of each",
                self.channels, self.samples
            )));
        }
        let half_pi = crate::math::FRAC_PI_2;
        if !(self.elevation_min >= -half_pi
            && self.elevation_max <= half_pi
            && self.elevation_min <= self.elevation_max)
        {
            return Err(Error::Invalid(format!(
                "lidar elevations [{}, {}] rad: expected −π/2 ≤ min ≤ max ≤ π/2",
                self.elevation_min, self.elevation_max
            )));
        }
        let mut out = Vec::with_capacity(self.rays_per_env());
        for c in 0..self.channels {
            let f = if self.channels > 1 {
                c as f32 / (self.channels - 1) as f32
            } else {
                0.5
            };
            let el = self.elevation_min + (self.elevation_max - self.elevation_min) * f;
            let (se, ce) = sin_cos(el);
            for s in 0..self.samples {
                let az = crate::math::TAU * s as f32 / self.samples as f32;
                let (sa, ca) = sin_cos(az);
                out.push([ce * ca, ce * sa, se]);
            }
        }
        Ok(out)
    }

    /// Writes every env's rays (env-major, ring-major) for body poses `bodies` and the lidar's
    /// `mount` on the body.
    pub fn rays(
        &self,
        bodies: &[Pose],
        mount: &Pose,
        origins: &mut [[f32; 3]],
        dirs: &mut [[f32; 3]],
    ) -> Result<()> {
        emit(bodies, mount, &self.local_dirs()?, origins, dirs)
    }
}
