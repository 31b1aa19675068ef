//! The scripted pure-pursuit agent completes at least 3 laps on every valid course of every
//! shipped preset at 1024 envs — track presets as track courses, gate presets as gate courses —
//! with zero wrong-way events, no skipped checkpoint, and monotone progress.

use trackgen::course::{Binding, Course, CourseConfig, Mode, PurePursuit};
use trackgen::exec::Launch;
use trackgen::preset::{Preset, BUILTIN};

const ENVS: usize = 1024;

fn three_laps(name: &str) {
    let preset = Preset::load(name).unwrap();
    let launch = Launch::new();
    let config = CourseConfig::default();
    let mut course = if preset.gates.is_some() {
        Course::new(Mode::Gates, &preset, ENVS, 3, config, launch).unwrap()
    } else {
        Course::new(Mode::Track, &preset, ENVS, 3, config, launch).unwrap()
    };
    let spawn = course.geometry().spawn_position.clone();
    course.bind(Binding::new(spawn)).unwrap();
    let agent = PurePursuit::for_course(&course);
    let valid: Vec<bool> = match course.gate_batch() {
        Some(g) => g.valid.iter().map(|&v| v == 1).collect(),
        None => course.track_batch().valid.iter().map(|&v| v == 1).collect(),
    };
    assert!(
        valid.iter().filter(|&&v| v).count() > ENVS * 9 / 10,
        "{name}: low yield"
    );
    let longest = course
        .geometry()
        .path_length
        .iter()
        .fold(0.0f32, |a, &b| a.max(b));
    let budget = (3.2 * longest / agent.speed_m) as usize + 50;
    let mut last = vec![0.0f32; ENVS];
    let mut done = 0;
    for step in 0..budget {
        agent.act(&mut course).unwrap();
        course.step().unwrap();
        let o = course.outputs();
        done = 0;
        for e in (0..ENVS).filter(|&e| valid[e]) {
            assert_eq!(
                o.wrong_way[e], 0,
                "{name}: env {e} went the wrong way at step {step}"
            );
            assert_eq!(
                o.wrong_checkpoint[e], 0,
                "{name}: env {e} skipped a checkpoint at step {step}"
            );
            assert!(
                o.progress[e] >= last[e],
                "{name}: env {e} progress fell from {} to {} at step {step}",
                last[e],
                o.progress[e]
            );
            last[e] = o.progress[e];
            done += usize::from(o.laps[e] >= 3);
        }
        if done == valid.iter().filter(|&&v| v).count() {
            break;
        }
    }
    let stuck: Vec<usize> = (0..ENVS)
        .filter(|&e| valid[e] && course.outputs().laps[e] < 3)
        .collect();
    assert!(
        stuck.is_empty(),
        "{name}: {} valid envs short of 3 laps after {budget} steps (first: {:?}, laps {:?})",
        stuck.len(),
        &stuck[..stuck.len().min(5)],
        stuck
            .iter()
            .take(5)
            .map(|&e| course.outputs().laps[e])
            .collect::<Vec<_>>()
    );
    assert!(done > 0);
}

#[test]
fn three_laps_on_every_shipped_preset() {
    for (name, _) in BUILTIN {
        three_laps(name);
    }
}
