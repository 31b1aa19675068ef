//! A simulation loop over 4096 envs: a scripted kinematic agent (pure pursuit along the
//! centerline, or through the gates) races every env; each env gets a new course of its own —
//! `regenerate(mask, advance = true)` for that env alone — when it completes a lap or times out,
//! while the others keep racing. Prints env-steps/s (the whole loop, and `step()` alone) and
//! laps/s, and writes a PNG of the first few envs' trajectories over their first courses.
//!
//! Run: `cargo run --release --example sim_loop [-- MODE [PRESET [ENVS [STEPS [PNG]]]]]`
//! with MODE `track` (default) or `gates`; PRESET defaults to `track` or `gates`.

use std::time::Instant;

use trackgen::course::{Binding, Course, CourseConfig, Mode, PurePursuit};
use trackgen::exec::Launch;
use trackgen::geom::{Vec2, Vec3};
use trackgen::preset::Preset;
use trackgen::render::{trajectory_sheet, CoursePanel};

/// Envs whose first course and trajectory are drawn.
const DRAWN: usize = 4;

fn main() -> trackgen::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let mode = match arg(0).unwrap_or("track") {
        "gates" => Mode::Gates,
        _ => Mode::Track,
    };
    let preset_name = arg(1).unwrap_or(if mode == Mode::Gates {
        "gates"
    } else {
        "track"
    });
    let envs: usize = arg(2).and_then(|s| s.parse().ok()).unwrap_or(4096);
    let steps: usize = arg(3).and_then(|s| s.parse().ok()).unwrap_or(3000);
    let png = arg(4).unwrap_or("sim_loop.png").to_string();

    let preset = Preset::load(preset_name)?;
    let (config, half_extents) = match mode {
        // A car: 4.4 m × 2 m box. A drone: a sphere of 0.15 m.
        Mode::Track => (CourseConfig::default(), [2.2, 1.0]),
        Mode::Gates => (CourseConfig::default(), [0.15, 0.0]),
    };
    let started = Instant::now();
    let mut course = match mode {
        Mode::Track => Course::new(Mode::Track, &preset, envs, 7, config, Launch::new())?,
        Mode::Gates => Course::new(Mode::Gates, &preset, envs, 7, config, Launch::new())?,
    };
    println!(
        "{envs} {mode:?} courses of preset {preset_name} generated in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let g = course.geometry();
    course.bind(
        Binding::new(g.spawn_position.clone())
            .with_orientations(g.spawn_orientation.clone())
            .with_half_extents(vec![Vec2::from(half_extents); envs]),
    )?;
    let agent = PurePursuit::for_course(&course);
    // An env that has not finished a lap within 1.5 × its lap time is regenerated.
    let timeout =
        |c: &Course, e: usize| (1.5 * c.geometry().path_length[e] / agent.speed_m) as u32 + 20;

    let mut since = vec![0u32; envs];
    let mut mask = vec![0u8; envs];
    let mut trajectories: Vec<Vec<Vec3>> = vec![Vec::new(); DRAWN.min(envs)];
    let mut panels: Vec<Option<CoursePanel>> = vec![None; DRAWN.min(envs)];
    let (mut laps, mut timeouts, mut hits) = (0u64, 0u64, 0u64);
    let (mut step_s, mut regen_s) = (0.0f64, 0.0f64);
    let loop_start = Instant::now();
    for _ in 0..steps {
        agent.act(&mut course)?;
        let t = Instant::now();
        course.step()?;
        step_s += t.elapsed().as_secs_f64();
        let o = course.outputs();
        for e in 0..envs {
            since[e] += 1;
            let timed_out = since[e] >= timeout(&course, e);
            laps += u64::from(o.lap_completed[e]);
            timeouts += u64::from(timed_out);
            hits += u64::from(o.hit[e]);
            mask[e] = u8::from(o.lap_completed[e] == 1 || timed_out);
            if mask[e] == 1 {
                since[e] = 0;
            }
        }
        for (e, trajectory) in trajectories.iter_mut().enumerate() {
            if panels[e].is_none() {
                trajectory.push(course.binding().expect("bound").positions()[e]);
                if mask[e] == 1 {
                    panels[e] = Some(panel(&course, e, std::mem::take(trajectory)));
                }
            }
        }
        let t = Instant::now();
        course.regenerate(&mask, true)?;
        regen_s += t.elapsed().as_secs_f64();
    }
    let wall = loop_start.elapsed().as_secs_f64();
    let env_steps = (envs * steps) as f64;
    println!(
        "{steps} steps × {envs} envs in {wall:.2} s: {:.3e} env-steps/s for the whole loop \
         (agent + step + regenerate), {:.3e} env-steps/s in step() alone",
        env_steps / wall,
        env_steps / step_s
    );
    println!(
        "{laps} laps ({:.1} laps/s), {timeouts} timeouts, {:.2} ms per regenerate() call on average, \
         {:.3}% of env-steps in contact",
        laps as f64 / wall,
        1e3 * regen_s / steps as f64,
        100.0 * hits as f64 / env_steps
    );
    let drawn: Vec<CoursePanel> = panels
        .into_iter()
        .zip(trajectories)
        .enumerate()
        .map(|(e, (p, t))| p.unwrap_or_else(|| panel(&course, e, t)))
        .collect();
    let image = trajectory_sheet(&drawn, 360);
    image
        .save(&png)
        .map_err(|e| trackgen::Error::io(&png, std::io::Error::other(e)))?;
    println!(
        "trajectories of envs 0..{} over their first courses: {png}",
        drawn.len()
    );
    Ok(())
}

/// A snapshot of env `e`'s current course with `trajectory` over it.
fn panel(course: &Course, e: usize, trajectory: Vec<Vec3>) -> CoursePanel {
    let g = course.geometry();
    let path = g
        .path_of(e)
        .iter()
        .map(|p| Vec3::new(p[0], p[1], p[2]))
        .collect();
    let (gates, thickness_m, half_width_m) = match course.gate_batch() {
        Some(b) => (
            (0..b.count[e] as usize)
                .map(|i| {
                    let k = e * b.g_max + i;
                    (b.pos[k], b.quat[k], b.size[k])
                })
                .collect(),
            b.thickness_m,
            0.0,
        ),
        None => (Vec::new(), 0.0, g.half_width_m),
    };
    CoursePanel {
        path,
        half_width_m,
        gates,
        thickness_m,
        trajectory,
    }
}
