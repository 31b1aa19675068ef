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
//! Every draw loop has a fixed cap, so generation time is bounded.

use super::preset::{ForestParams, GatesParams, RoomsParams, SceneKind, ScenePreset};
use super::primitive::{quat_from_euler, EnvScene, Primitive, Shape, IDENTITY};
use crate::course::GatePipeline;
use crate::exec::Launch;
use crate::math::{sin_cos, PI, TAU};
use crate::rng::{stream, LaneRng};

/// Height of each domain's floor above the domain's bottom face, metres.
pub const FLOOR_MARGIN_M: f32 = 0.5;

/// Env `env`'s scene under `preset`, `seed` and `generation`.
pub fn generate_env(preset: &ScenePreset, seed: u64, env: u64, generation: u32) -> EnvScene {
    let s = preset.size_m;
    let origin = [-0.5 * s, -0.5 * s, -FLOOR_MARGIN_M];
    match &preset.kind {
        SceneKind::Rooms(p) => {
            let mut rng = LaneRng::new(seed, env, generation, stream::SCENE_ROOMS);
            let (primitives, spawn) = rooms(p, &mut rng);
            EnvScene {
                origin,
                size_m: s,
                spawn,
                primitives,
            }
        }
        SceneKind::Gates(p) => {
            let mut rng = LaneRng::new(seed, env, generation, stream::SCENE_GATES);
            let (primitives, spawn) = gates(p, seed, env, generation, 0.5 * s, &mut rng);
            EnvScene {
                origin,
                size_m: s,
                spawn,
                primitives,
            }
        }
        SceneKind::Forest(p) => {
            let mut rng = LaneRng::new(seed, env, generation, stream::SCENE_FOREST);
            let half = 0.5 * s;
            EnvScene {
                origin,
                size_m: s,
                spawn: [0.0, 0.0, 1.5],
                primitives: forest(p, half, &mut rng),
            }
        }
    }
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
        center,
        rotation: IDENTITY,
        half_extents: half,
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
fn rooms(p: &RoomsParams, rng: &mut LaneRng) -> (Vec<Primitive>, [f32; 3]) {
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
        normal: [0.0, 0.0, 1.0],
        offset: 0.0,
    }));
    if p.ceiling {
        prims.push(Primitive::union(Shape::Plane {
            normal: [0.0, 0.0, -1.0],
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
                            center: [x, y, hz],
                            rotation: IDENTITY,
                            half_extents: [hx, hy, hz],
                            radius: 0.08f32.min(hx).min(hy).min(hz),
                        },
                        _ => Shape::Cylinder {
                            center: [x, y, hz],
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
    let spawn = [
        x0 + ((room % n) as f32 + 0.5) * cell,
        x0 + ((room / n) as f32 + 0.5) * cell,
        1.2f32.min(0.5 * p.wall_height_m),
    ];
    (prims, spawn)
}

fn forest(p: &ForestParams, half: f32, rng: &mut LaneRng) -> Vec<Primitive> {
    let mut prims = vec![Primitive::union(Shape::Plane {
        normal: [0.0, 0.0, 1.0],
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
            let rotation = quat_from_euler(yaw, tilt, 0.0);
            let axis = super::primitive::quat_axes(rotation)[2];
            let base = [x, y, -0.2];
            let along = |s: f32| {
                [
                    base[0] + axis[0] * s,
                    base[1] + axis[1] * s,
                    base[2] + axis[2] * s,
                ]
            };
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
            let half_extents = [
                0.5 * size,
                0.5 * size * (0.6 + 0.4 * s.abs()),
                0.35 * size * (0.6 + 0.4 * c.abs()),
            ];
            prims.push(Primitive::union(Shape::RoundedBox {
                center: [x, y, 0.1 * size],
                rotation: quat_from_euler(
                    rng.range(-PI, PI),
                    rng.range(-0.5, 0.5),
                    rng.range(-0.5, 0.5),
                ),
                half_extents,
                radius: 0.3 * half_extents[2],
            }));
        } else {
            prims.push(Primitive::union(Shape::Sphere {
                center: [x, y, -0.1 * size],
                radius: 0.5 * size,
            }));
        }
    }
    prims
}

/// The course's `[x, y, z, w]` orientation (local x forward) as the scene's `[w, x, y, z]` gate
/// rotation (the frame lies in local xz and is flown along local y): `q_course · q_z(−90°)`.
fn gate_rotation(q: [f32; 4]) -> [f32; 4] {
    let [ax, ay, az, aw] = q;
    let h = std::f32::consts::FRAC_1_SQRT_2;
    [h * (aw + az), h * (ax - ay), h * (ax + ay), h * (az - aw)]
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

/// One env of the `gates` scene: its gate course's frames (generated for the same seed, env and
/// generation as a gate corpus would hold them), a ground plane at z = 0, and pillars outside the
/// corridor around the closed flight line through the gates. Spawn: 2 m before gate 0.
fn gates(
    p: &GatesParams,
    seed: u64,
    env: u64,
    generation: u32,
    half: f32,
    rng: &mut LaneRng,
) -> (Vec<Primitive>, [f32; 3]) {
    let mut pipeline = GatePipeline::new(&p.course_preset, 1, Launch::new())
        .expect("a built-in gate preset builds a pipeline");
    let mut batch = pipeline
        .new_batch(env)
        .expect("a one-env batch is representable");
    pipeline
        .generate(seed, generation, &mut batch)
        .expect("the batch matches its pipeline");
    let n = batch.count[0] as usize;
    let t = batch.thickness_m;
    let mut prims = vec![Primitive::union(Shape::Plane {
        normal: [0.0, 0.0, 1.0],
        offset: 0.0,
    })];
    for g in 0..n {
        let [w, h] = batch.size[g];
        prims.push(Primitive::union(Shape::GateFrame {
            center: batch.pos[g],
            rotation: gate_rotation(batch.quat[g]),
            outer_half: [0.5 * w + t, 0.5 * h + t],
            inner_half: [0.5 * w, 0.5 * h],
            half_depth: 0.5 * t,
        }));
    }
    let reach = half - 1.0f32.min(0.2 * half);
    for _ in 0..p.pillars {
        for _attempt in 0..16 {
            let r = rng.range(p.pillar_radius_min_m, p.pillar_radius_max_m);
            let xy = [rng.range(-reach, reach), rng.range(-reach, reach)];
            let clear = (0..n).all(|g| {
                plan_distance(xy, batch.pos[g], batch.pos[(g + 1) % n]) >= p.corridor_m + r
            });
            if clear {
                prims.push(Primitive::union(Shape::Cylinder {
                    center: [xy[0], xy[1], 0.5 * p.pillar_height_m],
                    rotation: IDENTITY,
                    radius: r,
                    half_height: 0.5 * p.pillar_height_m,
                }));
                break;
            }
        }
    }
    let spawn = if n > 0 {
        let f = crate::course::gates::forward_axis(batch.quat[0]);
        let g = batch.pos[0];
        [g[0] - 2.0 * f[0], g[1] - 2.0 * f[1], g[2] - 2.0 * f[2]]
    } else {
        [0.0, 0.0, 1.5]
    };
    (prims, spawn)
}
