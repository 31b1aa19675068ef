//! Per-env scene generators: an env's primitive list is a pure function of
//! `(preset, seed, env, generation)`, drawn from its own [`LaneRng`] stream.
//!
//! - **rooms**: a `grid × grid` floor plan. A random depth-first spanning tree over the rooms
//!   decides which interior walls get a door (so every room is reachable); other interior walls
//!   are left out with probability `open_wall_fraction`. Walls are boxes, doors are subtracted
//!   boxes, the floor (and optional ceiling) are planes, furniture are boxes, rounded boxes and
//!   cylinders placed by bounded rejection sampling away from room centres and doorways.
//! - **forest**: a ground plane, trees placed by bounded dart throwing (minimum spacing, a clearing
//!   around the spawn point), each a tilted cylinder trunk with a capsule or ball canopy, and rocks
//!   (rotated rounded boxes or balls).
//!
//! - **gates**: each env's gate course (from its course preset, for the same seed, env and
//!   generation as a gate corpus holds it) as gate frames, a ground plane, and pillars outside the
//!   flight corridor. One [`GatePipeline`] generates the courses of all envs of a call.
//!
//! Every draw loop has a fixed cap, so generation time is bounded.

use super::preset::{ForestParams, GatesParams, RoomsParams, SceneKind, ScenePreset};
use super::primitive::{EnvScene, Primitive, Shape};
use crate::course::{GateBatch, GatePipeline};
use crate::exec::Launch;
use crate::geom::{self, from_euler, Vec2, Vec3, IDENTITY};
use crate::math::{sin_cos, PI, TAU};
use crate::rng::{stream, LaneRng};
use crate::Result;

/// Height of each domain's floor above the domain's bottom face, metres.
pub const FLOOR_MARGIN_M: f32 = 0.5;

/// Env `env`'s scene under `preset`, `seed` and `generation`.
pub fn generate_env(
    preset: &ScenePreset,
    seed: u64,
    env: u64,
    generation: u32,
) -> Result<EnvScene> {
    let mut one = generate_envs(preset, seed, generation, env..env + 1, &Launch::new())?;
    Ok(one.remove(0))
}

/// The scenes of envs `envs` under `preset`, `seed` and `generation` (element `i` is env
/// `envs.start + i`), generated in parallel on `launch`. A `gates` preset draws all the envs'
/// gate courses with one [`GatePipeline`] run.
pub fn generate_envs(
    preset: &ScenePreset,
    seed: u64,
    generation: u32,
    envs: std::ops::Range<u64>,
    launch: &Launch,
) -> Result<Vec<EnvScene>> {
    use rayon::prelude::*;
    let s = preset.size_m;
    let origin = Vec3::new(-0.5 * s, -0.5 * s, -FLOOR_MARGIN_M);
    let scene = |(primitives, spawn)| EnvScene {
        origin,
        size_m: s,
        spawn,
        primitives,
    };
    let courses = match &preset.kind {
        SceneKind::Gates(p) => {
            let n = (envs.end - envs.start) as usize;
            let mut pipeline = GatePipeline::new(&p.course_preset, n, launch.clone())?;
            let mut batch = pipeline.new_batch(envs.start)?;
            pipeline.generate(seed, generation, &mut batch)?;
            Some(batch)
        }
        _ => None,
    };
    Ok(launch.install(|| {
        envs.clone()
            .into_par_iter()
            .map(|env| match &preset.kind {
                SceneKind::Rooms(p) => {
                    let mut rng = LaneRng::new(seed, env, generation, stream::SCENE_ROOMS);
                    scene(rooms(p, &mut rng))
                }
                SceneKind::Gates(p) => {
                    let mut rng = LaneRng::new(seed, env, generation, stream::SCENE_GATES);
                    let batch = courses.as_ref().expect("set for a gates preset above");
                    let row = (env - envs.start) as usize;
                    scene(gates(p, batch, row, 0.5 * s, &mut rng))
                }
                SceneKind::Forest(p) => {
                    let mut rng = LaneRng::new(seed, env, generation, stream::SCENE_FOREST);
                    scene((forest(p, 0.5 * s, &mut rng), Vec3::new(0.0, 0.0, 1.5)))
                }
            })
            .collect()
    }))
}

/// `x` rounded to a multiple of `snap` (unchanged when `snap` is 0).
fn snap(x: f32, step: f32) -> f32 {
    if step > 0.0 {
        crate::math::round_small(x / step) * step
    } else {
        x
    }
}

fn axis_box(center: [f32; 3], half: [f32; 3]) -> Shape {
    Shape::Box {
        center: Vec3::from(center),
        rotation: IDENTITY,
        half_extents: Vec3::from(half),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Wall {
    Solid,
    Door(f32),
    Open,
}

// The loops index walls by grid coordinates, which also place them.
#[allow(clippy::needless_range_loop)]
fn rooms(p: &RoomsParams, rng: &mut LaneRng) -> (Vec<Primitive>, Vec3) {
    let n = p.grid as usize;
    let cell = p.cell_m;
    let t = p.wall_thickness_m;
    let x0 = -0.5 * n as f32 * cell;
    let hh = 0.5 * p.wall_height_m;
    // Interior walls: `vertical[i][j]` separates rooms (i, j) and (i + 1, j) (constant x);
    // `horizontal[i][j]` separates (i, j) and (i, j + 1) (constant y).
    let mut vertical = vec![vec![Wall::Solid; n]; n.saturating_sub(1)];
    let mut horizontal = vec![vec![Wall::Solid; n.saturating_sub(1)]; n];
    let door_room = 0.5 * cell - t - 0.5 * p.door_width_m - 0.1;
    let door = |rng: &mut LaneRng| {
        if rng.unit() < p.open_wall_fraction {
            Wall::Open
        } else {
            Wall::Door(snap(rng.range(-door_room, door_room), p.snap_m))
        }
    };
    // Depth-first spanning tree over the rooms (iterative, at most n² pushes).
    let mut seen = vec![false; n * n];
    let start = rng.below((n * n) as u32) as usize;
    let mut stack = vec![start];
    seen[start] = true;
    while let Some(&at) = stack.last() {
        let (i, j) = (at % n, at / n);
        let mut next = Vec::with_capacity(4);
        if i > 0 && !seen[at - 1] {
            next.push(at - 1);
        }
        if i + 1 < n && !seen[at + 1] {
            next.push(at + 1);
        }
        if j > 0 && !seen[at - n] {
            next.push(at - n);
        }
        if j + 1 < n && !seen[at + n] {
            next.push(at + n);
        }
        if next.is_empty() {
            stack.pop();
            continue;
        }
        let to = next[rng.below(next.len() as u32) as usize];
        let (ti, tj) = (to % n, to / n);
        if tj == j {
            vertical[i.min(ti)][j] = door(rng);
        } else {
            horizontal[i][j.min(tj)] = door(rng);
        }
        seen[to] = true;
        stack.push(to);
    }
    for row in vertical.iter_mut().chain(horizontal.iter_mut()) {
        for w in row.iter_mut() {
            if *w == Wall::Solid && rng.unit() < p.open_wall_fraction {
                *w = Wall::Open;
            }
        }
    }

    let mut prims = Vec::new();
    let mut cuts = Vec::new();
    let mut doors: Vec<[f32; 2]> = Vec::new();
    let seg_half = 0.5 * (cell + t);
    // Walls of constant x at line index `i` (0..=n), segment `j`.
    for i in 0..=n {
        for j in 0..n {
            let w = if i == 0 || i == n {
                Wall::Solid
            } else {
                vertical[i - 1][j]
            };
            let (x, y) = (x0 + i as f32 * cell, x0 + (j as f32 + 0.5) * cell);
            if w != Wall::Open {
                prims.push(Primitive::union(axis_box(
                    [x, y, hh],
                    [0.5 * t, seg_half, hh],
                )));
            }
            if let Wall::Door(off) = w {
                let dh = 0.5 * p.door_height_m;
                cuts.push(Primitive::subtract(axis_box(
                    [x, y + off, dh],
                    [t, 0.5 * p.door_width_m, dh],
                )));
                doors.push([x, y + off]);
            }
        }
    }
    // Walls of constant y at line index `j`, segment `i`.
    for j in 0..=n {
        for i in 0..n {
            let w = if j == 0 || j == n {
                Wall::Solid
            } else {
                horizontal[i][j - 1]
            };
            let (x, y) = (x0 + (i as f32 + 0.5) * cell, x0 + j as f32 * cell);
            if w != Wall::Open {
                prims.push(Primitive::union(axis_box(
                    [x, y, hh],
                    [seg_half, 0.5 * t, hh],
                )));
            }
            if let Wall::Door(off) = w {
                let dh = 0.5 * p.door_height_m;
                cuts.push(Primitive::subtract(axis_box(
                    [x + off, y, dh],
                    [0.5 * p.door_width_m, t, dh],
                )));
                doors.push([x + off, y]);
            }
        }
    }
    prims.extend(cuts);
    prims.push(Primitive::union(Shape::Plane {
        normal: Vec3::Z,
        offset: 0.0,
    }));
    if p.ceiling {
        prims.push(Primitive::union(Shape::Plane {
            normal: -Vec3::Z,
            offset: -p.wall_height_m,
        }));
    }

    // Furniture: bounded rejection sampling per room.
    let clear = 0.6f32;
    let inner = 0.5 * cell - 0.5 * t - 0.05;
    for j in 0..n {
        for i in 0..n {
            let (cx, cy) = (x0 + (i as f32 + 0.5) * cell, x0 + (j as f32 + 0.5) * cell);
            let count = p.furniture_min + rng.below(p.furniture_max - p.furniture_min + 1);
            let mut placed: Vec<[f32; 4]> = Vec::new();
            for _ in 0..count {
                for _attempt in 0..8 {
                    let hx = 0.5
                        * snap(
                            rng.range(p.furniture_size_min_m, p.furniture_size_max_m),
                            p.snap_m,
                        )
                        .max(p.furniture_size_min_m);
                    let hy = 0.5
                        * snap(
                            rng.range(p.furniture_size_min_m, p.furniture_size_max_m),
                            p.snap_m,
                        )
                        .max(p.furniture_size_min_m);
                    let height = snap(rng.range(0.4, p.furniture_height_max_m), p.snap_m)
                        .clamp(0.1, p.furniture_height_max_m);
                    let style = rng.below(3);
                    let (rx, ry) = (inner - hx, inner - hy);
                    if rx <= 0.0 || ry <= 0.0 {
                        continue;
                    }
                    let x = cx + snap(rng.range(-rx, rx), p.snap_m).clamp(-rx, rx);
                    let y = cy + snap(rng.range(-ry, ry), p.snap_m).clamp(-ry, ry);
                    let overlaps = |a: [f32; 4], margin: f32| {
                        (x - a[0]).abs() < hx + a[2] + margin
                            && (y - a[1]).abs() < hy + a[3] + margin
                    };
                    if overlaps([cx, cy, clear, clear], 0.0)
                        || placed.iter().any(|&a| overlaps(a, 0.1))
                        || doors.iter().any(|d| {
                            overlaps(
                                [d[0], d[1], 0.5 * p.door_width_m, 0.5 * p.door_width_m],
                                0.3,
                            )
                        })
                    {
                        continue;
                    }
                    placed.push([x, y, hx, hy]);
                    let hz = 0.5 * height;
                    let shape = match style {
                        0 => axis_box([x, y, hz], [hx, hy, hz]),
                        1 => Shape::RoundedBox {
                            center: Vec3::new(x, y, hz),
                            rotation: IDENTITY,
                            half_extents: Vec3::new(hx, hy, hz),
                            radius: 0.08f32.min(hx).min(hy).min(hz),
                        },
                        _ => Shape::Cylinder {
                            center: Vec3::new(x, y, hz),
                            rotation: IDENTITY,
                            radius: hx.min(hy),
                            half_height: hz,
                        },
                    };
                    prims.push(Primitive::union(shape));
                    break;
                }
            }
        }
    }
    let room = rng.below((n * n) as u32) as usize;
    let spawn = Vec3::new(
        x0 + ((room % n) as f32 + 0.5) * cell,
        x0 + ((room / n) as f32 + 0.5) * cell,
        1.2f32.min(0.5 * p.wall_height_m),
    );
    (prims, spawn)
}

fn forest(p: &ForestParams, half: f32, rng: &mut LaneRng) -> Vec<Primitive> {
    let mut prims = vec![Primitive::union(Shape::Plane {
        normal: Vec3::Z,
        offset: 0.0,
    })];
    let margin = 1.0f32.min(0.2 * half);
    let reach = half - margin;
    let mut trunks: Vec<[f32; 2]> = Vec::new();
    for _ in 0..p.trees {
        for _attempt in 0..16 {
            let x = rng.range(-reach, reach);
            let y = rng.range(-reach, reach);
            let d2 = |a: [f32; 2]| (x - a[0]) * (x - a[0]) + (y - a[1]) * (y - a[1]);
            if d2([0.0, 0.0]) < p.clearing_radius_m * p.clearing_radius_m
                || trunks
                    .iter()
                    .any(|&a| d2(a) < p.min_spacing_m * p.min_spacing_m)
            {
                continue;
            }
            trunks.push([x, y]);
            let radius = rng.range(p.trunk_radius_min_m, p.trunk_radius_max_m);
            let height = rng.range(p.tree_height_min_m, p.tree_height_max_m);
            let yaw = rng.range(-PI, PI);
            let tilt = rng.range(0.0, p.tilt_max_deg) * (PI / 180.0);
            let rotation = from_euler(yaw, tilt, 0.0);
            let axis = geom::axes(rotation)[2];
            let base = Vec3::new(x, y, -0.2);
            let along = |s: f32| base + axis * s;
            prims.push(Primitive::union(Shape::Cylinder {
                center: along(0.5 * height),
                rotation,
                radius,
                half_height: 0.5 * height,
            }));
            let canopy = rng.range(p.canopy_radius_min_m, p.canopy_radius_max_m);
            let shape = if rng.below(3) == 0 {
                Shape::Sphere {
                    center: along(height),
                    radius: canopy,
                }
            } else {
                Shape::Capsule {
                    a: along(0.6 * height),
                    b: along(height),
                    radius: canopy,
                }
            };
            prims.push(Primitive::union(shape));
            break;
        }
    }
    for _ in 0..p.rocks {
        let x = rng.range(-reach, reach);
        let y = rng.range(-reach, reach);
        if x * x + y * y < p.clearing_radius_m * p.clearing_radius_m {
            continue;
        }
        let size = rng.range(p.rock_size_min_m, p.rock_size_max_m);
        if rng.below(2) == 0 {
            let (s, c) = sin_cos(rng.range(0.0, TAU));
            let half_extents = Vec3::new(
                0.5 * size,
                0.5 * size * (0.6 + 0.4 * s.abs()),
                0.35 * size * (0.6 + 0.4 * c.abs()),
            );
            prims.push(Primitive::union(Shape::RoundedBox {
                center: Vec3::new(x, y, 0.1 * size),
                rotation: from_euler(
                    rng.range(-PI, PI),
                    rng.range(-0.5, 0.5),
                    rng.range(-0.5, 0.5),
                ),
                half_extents,
                radius: 0.3 * half_extents.z,
            }));
        } else {
            prims.push(Primitive::union(Shape::Sphere {
                center: Vec3::new(x, y, -0.1 * size),
                radius: 0.5 * size,
            }));
        }
    }
    prims
}

/// Distance from `p` to the segment `a`–`b` in plan view.
fn plan_distance(p: [f32; 2], a: [f32; 3], b: [f32; 3]) -> f32 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (ex, ey) = (p[0] - (a[0] + t * dx), p[1] - (a[1] + t * dy));
    (ex * ex + ey * ey).sqrt()
}

/// One env of the `gates` scene: the gate course in `batch` row `row` as gate frames (flown
/// along their local `x`, the course's own orientation), a ground plane at z = 0, and pillars
/// outside the corridor around the closed flight line through the gates. Spawn: 2 m before gate 0.
fn gates(
    p: &GatesParams,
    batch: &GateBatch,
    row: usize,
    half: f32,
    rng: &mut LaneRng,
) -> (Vec<Primitive>, Vec3) {
    let first = row * batch.g_max;
    let n = batch.count[row] as usize;
    let pos = |g: usize| batch.pos[first + g];
    let t = batch.thickness_m;
    let mut prims = vec![Primitive::union(Shape::Plane {
        normal: Vec3::Z,
        offset: 0.0,
    })];
    for g in 0..n {
        let [w, h] = batch.size[first + g].to_array();
        prims.push(Primitive::union(Shape::GateFrame {
            center: pos(g),
            rotation: batch.quat[first + g],
            outer_half: Vec2::new(0.5 * w + t, 0.5 * h + t),
            inner_half: Vec2::new(0.5 * w, 0.5 * h),
            half_depth: 0.5 * t,
        }));
    }
    let reach = half - 1.0f32.min(0.2 * half);
    for _ in 0..p.pillars {
        for _attempt in 0..16 {
            let r = rng.range(p.pillar_radius_min_m, p.pillar_radius_max_m);
            let xy = [rng.range(-reach, reach), rng.range(-reach, reach)];
            let clear = (0..n).all(|g| {
                plan_distance(xy, pos(g).to_array(), pos((g + 1) % n).to_array())
                    >= p.corridor_m + r
            });
            if clear {
                prims.push(Primitive::union(Shape::Cylinder {
                    center: Vec3::new(xy[0], xy[1], 0.5 * p.pillar_height_m),
                    rotation: IDENTITY,
                    radius: r,
                    half_height: 0.5 * p.pillar_height_m,
                }));
                break;
            }
        }
    }
    let spawn = if n > 0 {
        let f = geom::forward(batch.quat[first]);
        pos(0) - f * 2.0
    } else {
        Vec3::new(0.0, 0.0, 1.5)
    };
    (prims, spawn)
}
