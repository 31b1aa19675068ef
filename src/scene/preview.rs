//! PNG previews of one env of a pool: a depth image from a default camera beside a top-down
//! slice of the stored signed distance.
//!
//! The default camera stands outside the env's domain at a high corner (`origin + size ·
//! (−0.25, −0.25, 0.9)`) and looks at the point 5% of the domain above the middle of its floor,
//! with a 60° vertical field of view. Depth is shaded from near (light) to far (dark); misses are
//! the background colour. The slice is the plane `z = slice height` over the whole domain:
//! solids brown, free space blue with a band every voxel-truncation, surfaces black.

use image::{Rgb, RgbImage};

use super::raycast::{cast_rays, sdf_at, CastOptions, RayEnvs, RayOutputs, HIT};
use super::sensor::{PinholeCamera, Pose};
use super::PoolView;
use crate::exec::Launch;
use crate::geom::Vec3;
use crate::{Error, Result};

const MISS_COLOUR: [u8; 3] = [40, 44, 52];

/// The default camera's pose for env `env`.
pub fn default_camera(view: &PoolView, env: usize) -> Result<Pose> {
    let e = env_entry(view, env)?;
    let size = e.voxel_size * view.info().resolution as f32;
    let at = |f: [f32; 3]| Vec3::from([0, 1, 2].map(|a| e.origin[a] + size * f[a]));
    Ok(Pose::look_at(at([-0.25, -0.25, 0.9]), at([0.5, 0.5, 0.05])))
}

fn env_entry<'a>(view: &PoolView<'a>, env: usize) -> Result<&'a super::EnvEntry> {
    view.envs().get(env).ok_or_else(|| {
        Error::Invalid(format!(
            "env {env}: the scene has {} envs (expected < {})",
            view.envs().len(),
            view.envs().len()
        ))
    })
}

/// The depth image of env `env` from `pose` (`width × height`, vertical field of view 60°).
pub fn depth_image(
    view: &PoolView,
    env: usize,
    pose: &Pose,
    width: u32,
    height: u32,
    launch: &Launch,
) -> Result<RgbImage> {
    let e = env_entry(view, env)?;
    let cam = PinholeCamera::new(width, height, crate::math::PI / 3.0)?;
    let k = cam.rays_per_env();
    let (mut o, mut d) = (vec![[0.0; 3]; k], vec![[0.0; 3]; k]);
    cam.rays(&[*pose], &Pose::IDENTITY, &mut o, &mut d)?;
    let reach = 4.0 * e.voxel_size * view.info().resolution as f32;
    let opts = CastOptions::new(reach);
    let (mut dist, mut hit, mut steps) = (vec![0.0; k], vec![0u8; k], vec![0u32; k]);
    let env_ids = vec![env as u32; k];
    cast_rays(
        view,
        RayEnvs::PerRay(&env_ids),
        &o,
        &d,
        &opts,
        RayOutputs {
            distance: &mut dist,
            hit: &mut hit,
            steps: &mut steps,
        },
        launch,
    )?;
    let hits: Vec<f32> = dist
        .iter()
        .zip(&hit)
        .filter(|(_, &h)| h == HIT)
        .map(|(&t, _)| t)
        .collect();
    let lo = hits.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = hits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let span = (hi - lo).max(1e-6);
    let mut img = RgbImage::new(width, height);
    for (i, px) in img.pixels_mut().enumerate() {
        *px = if hit[i] == HIT {
            let s = 1.0 - 0.85 * ((dist[i] - lo) / span).clamp(0.0, 1.0);
            Rgb([
                (235.0 * s + 20.0) as u8,
                (225.0 * s + 20.0) as u8,
                (200.0 * s + 25.0) as u8,
            ])
        } else {
            Rgb(MISS_COLOUR)
        };
    }
    Ok(img)
}

/// The slice `z = height_m` of env `env`'s stored field, `side × side` pixels over the domain
/// (north up: `+y` is the top of the image).
pub fn slice_image(view: &PoolView, env: usize, height_m: f32, side: u32) -> Result<RgbImage> {
    let e = env_entry(view, env)?;
    let size = e.voxel_size * view.info().resolution as f32;
    let band = view.info().truncation_vox * e.voxel_size;
    let mut img = RgbImage::new(side, side);
    for y in 0..side {
        for x in 0..side {
            let p = [
                e.origin[0] + size * (x as f32 + 0.5) / side as f32,
                e.origin[1] + size * (1.0 - (y as f32 + 0.5) / side as f32),
                height_m,
            ];
            let v = sdf_at(view, env, p).unwrap_or(f32::NAN);
            let c = if !v.is_finite() {
                MISS_COLOUR
            } else if v.abs() < 0.35 * e.voxel_size {
                [0, 0, 0]
            } else if v < 0.0 {
                [150, 100, 60]
            } else {
                let f = (v / band).clamp(0.0, 1.0);
                let stripe = if ((v / (0.25 * band)) as i32) % 2 == 0 {
                    1.0
                } else {
                    0.92
                };
                [
                    ((90.0 + 140.0 * f) * stripe) as u8,
                    ((150.0 + 90.0 * f) * stripe) as u8,
                    ((220.0 + 30.0 * f) * stripe) as u8,
                ]
            };
            img.put_pixel(x, y, Rgb(c));
        }
    }
    Ok(img)
}

/// The preview of env `env`: the default camera's depth image (`4/3·side × side`) and the slice
/// at `slice_height_m` (`side × side`) side by side.
pub fn preview(
    view: &PoolView,
    env: usize,
    slice_height_m: f32,
    side: u32,
    launch: &Launch,
) -> Result<RgbImage> {
    let side = side.max(16);
    let pose = default_camera(view, env)?;
    let depth = depth_image(view, env, &pose, side * 4 / 3, side, launch)?;
    let slice = slice_image(view, env, slice_height_m, side)?;
    let gap = 4;
    let mut out = RgbImage::from_pixel(depth.width() + gap + side, side, Rgb([255, 255, 255]));
    image::imageops::replace(&mut out, &depth, 0, 0);
    image::imageops::replace(&mut out, &slice, i64::from(depth.width() + gap), 0);
    Ok(out)
}
