//! Fuzzes the scene-file loader: any bytes must give a validated file or an error, never a panic
//! or undefined behaviour; whatever validates must be safe to ray-cast.
//!
//! Each input is tried twice: as given (exercising the header and checksum checks), and with its
//! trailing CRC-32 recomputed (so mutations reach the structural checks of envs, nodes and
//! bricks behind the checksum).

#![no_main]

use libfuzzer_sys::fuzz_target;
use trackgen::exec::Launch;
use trackgen::scene::{cast_rays, CastOptions, RayEnvs, RayOutputs, SceneFile};

fn load_and_trace(bytes: &[u8]) {
    let Ok(file) = SceneFile::from_bytes(bytes, "fuzz-input") else {
        return;
    };
    let view = file.view();
    let n = view.envs().len().min(4);
    let origins: Vec<[f32; 3]> = (0..n)
        .map(|e| {
            let env = view.envs()[e];
            let side = env.voxel_size * view.info().resolution as f32;
            [0, 1, 2].map(|a| env.origin[a] + 0.37 * side)
        })
        .collect();
    let dirs = vec![[0.6, -0.48, 0.64]; n];
    let (mut distance, mut hit, mut steps) = (vec![0.0; n], vec![0u8; n], vec![0u32; n]);
    let mut opts = CastOptions::new(f32::INFINITY);
    opts.max_steps = 256;
    let _ = cast_rays(
        &view,
        RayEnvs::Blocks { rays_per_env: 1 },
        &origins,
        &dirs,
        &opts,
        RayOutputs {
            distance: &mut distance,
            hit: &mut hit,
            steps: &mut steps,
        },
        &Launch::new(),
    );
}

fuzz_target!(|data: &[u8]| {
    load_and_trace(data);
    if data.len() >= 4 {
        let mut sealed = data.to_vec();
        let end = sealed.len() - 4;
        let sum = crc32fast::hash(&sealed[..end]);
        sealed[end..].copy_from_slice(&sum.to_le_bytes());
        load_and_trace(&sealed);
    }
});
