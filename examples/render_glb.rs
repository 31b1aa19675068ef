//! Renders a `.glb` written by `trackgen export` to a PNG: a small software rasteriser
//! (perspective camera, z-buffer, Lambert shading with each material's colour), reading the file
//! the way any glTF loader does — JSON chunk, binary chunk, accessors — so the picture shows what
//! a simulator gets.
//!
//! ```text
//! trackgen generate --preset k.toml --envs 6 --heightfield 160 --heightfield-margin 12 \
//!     --props outer:point:6 --out corpus
//! trackgen export corpus --env 2 --walls 0.8 --kerbs 0.6 --terrain --props --out env2.glb
//! cargo run --release --example render_glb -- env2.glb docs/export.png 3.5
//! ```
//!
//! (`docs/export.png`: `k.toml` is `trackgen presets --show karting` with a `noise` z-profile; see the
//! README.)
//!
//! The optional last argument zooms in (by that factor) towards the road's start line.
//!
//! The file must be `+z` up (the default of `trackgen export`). The camera looks at the mesh's
//! bounding box from the south-west, 35° above the horizon.

use std::path::Path;

use glam::{Vec2, Vec3};
use image::{Rgb, RgbImage};
use serde_json::Value;
use trackgen::math;

const WIDTH: usize = 1600;
const HEIGHT: usize = 1000;
/// Supersampling per axis (the image is rendered this many times larger, then averaged).
const SS: usize = 2;

struct Triangle {
    points: [Vec3; 3],
    color: Vec3,
}

fn read_glb(path: &Path) -> Vec<Triangle> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let word = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    assert_eq!(&bytes[0..4], b"glTF", "{}: not a .glb file", path.display());
    let json_len = word(12);
    let doc: Value = serde_json::from_slice(&bytes[20..20 + json_len]).expect("glTF JSON");
    let bin = &bytes[20 + json_len + 8..];
    let floats = |accessor: &Value| -> Vec<f32> {
        let view = &doc["bufferViews"][accessor["bufferView"].as_u64().unwrap() as usize];
        let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
        let comps = match accessor["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            other => panic!("accessor type {other}"),
        };
        let n = accessor["count"].as_u64().unwrap() as usize * comps;
        (0..n)
            .map(|k| {
                let b: [u8; 4] = bin[offset + 4 * k..offset + 4 * k + 4].try_into().unwrap();
                if accessor["componentType"] == 5125 {
                    u32::from_le_bytes(b) as f32
                } else {
                    f32::from_le_bytes(b)
                }
            })
            .collect()
    };
    let mut triangles = Vec::new();
    for mesh in doc["meshes"].as_array().unwrap() {
        for prim in mesh["primitives"].as_array().unwrap() {
            let accessor = |i: &Value| &doc["accessors"][i.as_u64().unwrap() as usize];
            let pos = floats(accessor(&prim["attributes"]["POSITION"]));
            let idx = floats(accessor(&prim["indices"]));
            let material = &doc["materials"][prim["material"].as_u64().unwrap() as usize];
            let c = &material["pbrMetallicRoughness"]["baseColorFactor"];
            let color = Vec3::new(
                c[0].as_f64().unwrap() as f32,
                c[1].as_f64().unwrap() as f32,
                c[2].as_f64().unwrap() as f32,
            );
            let vertex = |i: f32| {
                let i = i as usize * 3;
                Vec3::new(pos[i], pos[i + 1], pos[i + 2])
            };
            for t in idx.chunks_exact(3) {
                triangles.push(Triangle {
                    points: [vertex(t[0]), vertex(t[1]), vertex(t[2])],
                    color,
                });
            }
        }
    }
    triangles
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (input, output, zoom) = match &args[..] {
        [i, o] => (i, o, 1.0),
        [i, o, z] => (i, o, z.parse::<f32>().expect("ZOOM: a number ≥ 1")),
        _ => {
            eprintln!("usage: render_glb IN.glb OUT.png [ZOOM]");
            std::process::exit(2);
        }
    };
    let triangles = read_glb(Path::new(input));
    let (lo, hi) = triangles.iter().flat_map(|t| t.points).fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(lo, hi), p| (lo.min(p), hi.max(p)),
    );
    // Zoomed in, the camera looks at the first vertex (the road's start line).
    let centre = (lo + hi) * 0.5;
    let first = triangles[0].points[0];
    let target = centre + (first - centre) * (1.0 - 1.0 / zoom);
    let radius = (hi - lo).length() * 0.5 / zoom;
    // Camera: from the south-west, 35° up; vertical field of view 40°.
    let (elevation, azimuth) = (35f32.to_radians(), 225f32.to_radians());
    let (se, ce) = math::sin_cos(elevation);
    let (sa, ca) = math::sin_cos(azimuth);
    let dir = Vec3::new(ce * ca, ce * sa, se);
    let fov = 40f32.to_radians();
    let (s_half, c_half) = math::sin_cos(0.5 * fov);
    let distance = radius / s_half * 0.82;
    let eye = target + dir * distance;
    let forward = (target - eye) / (target - eye).length();
    let right = forward.cross(Vec3::Z) / forward.cross(Vec3::Z).length();
    let up = right.cross(forward);
    let (w, h) = (WIDTH * SS, HEIGHT * SS);
    let focal = 0.5 * h as f32 * c_half / s_half;
    let project = |p: Vec3| {
        let q = p - eye;
        let z = q.dot(forward);
        Vec3::new(
            0.5 * w as f32 + focal * q.dot(right) / z,
            0.5 * h as f32 - focal * q.dot(up) / z,
            z,
        )
    };
    let light = Vec3::new(-0.7, -0.2, 0.6) / Vec3::new(-0.7, -0.2, 0.6).length();
    let mut depth = vec![f32::INFINITY; w * h];
    let mut color = vec![Vec3::new(0.82, 0.88, 0.95); w * h];
    for t in &triangles {
        let n = (t.points[1] - t.points[0]).cross(t.points[2] - t.points[0]);
        let l = n.length();
        if l == 0.0 {
            continue;
        }
        let n = n / l;
        let shade = t.color * (0.3 + 0.7 * n.dot(light).max(0.0));
        // The terrain runs through the road at the centreline: draw it a little behind.
        let bias = if t.color.y > t.color.x && t.color.y > t.color.z {
            1.0 + 2e-4
        } else {
            1.0
        };
        let p = t.points.map(project);
        if p.iter().any(|q| q.z <= 0.0) {
            continue;
        }
        let min = p
            .iter()
            .fold(Vec2::splat(f32::INFINITY), |m, q| m.min(q.truncate()));
        let max = p
            .iter()
            .fold(Vec2::splat(f32::NEG_INFINITY), |m, q| m.max(q.truncate()));
        let (x0, y0) = (min.x.max(0.0) as usize, min.y.max(0.0) as usize);
        let (x1, y1) = (
            (max.x.ceil() as usize).min(w),
            (max.y.ceil() as usize).min(h),
        );
        let edge =
            |a: Vec3, b: Vec3, x: f32, y: f32| (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
        let area = edge(p[0], p[1], p[2].x, p[2].y);
        if area == 0.0 {
            continue;
        }
        for y in y0..y1 {
            for x in x0..x1 {
                let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
                let w0 = edge(p[1], p[2], fx, fy) / area;
                let w1 = edge(p[2], p[0], fx, fy) / area;
                let w2 = 1.0 - w0 - w1;
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                // Perspective-correct depth: interpolate 1/z.
                let z = 1.0 / (w0 / p[0].z + w1 / p[1].z + w2 / p[2].z) * bias;
                let k = y * w + x;
                if z < depth[k] {
                    depth[k] = z;
                    color[k] = shade;
                }
            }
        }
    }
    let mut image = RgbImage::new(WIDTH as u32, HEIGHT as u32);
    for (x, y, px) in image.enumerate_pixels_mut() {
        let mut sum = Vec3::ZERO;
        for sy in 0..SS {
            for sx in 0..SS {
                sum += color[(y as usize * SS + sy) * w + x as usize * SS + sx];
            }
        }
        let c = sum / (SS * SS) as f32;
        *px = Rgb([c.x, c.y, c.z].map(|v| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8));
    }
    image
        .save(output)
        .unwrap_or_else(|e| panic!("{output}: {e}"));
    println!(
        "rendered {} triangles of {input} into {output}",
        triangles.len()
    );
}
