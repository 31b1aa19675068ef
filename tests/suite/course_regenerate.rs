//! `Course::regenerate(mask, advance)`: property test over random masks — unmasked envs keep
//! every byte (generation, tracks or gates, geometry, outputs, bound inputs); masked envs equal
//! a fresh course generated at their new generation; `advance = false` rebuilds the same bytes;
//! an all-zero mask changes nothing.

use proptest::prelude::*;
use trackgen::course::{Binding, Course, CourseConfig, Mode, PurePursuit};
use trackgen::exec::Launch;
use trackgen::preset::Preset;

const SEED: u64 = 21;

fn course(mode: Mode, n: usize, threads: usize) -> Course {
    let launch = Launch::with_threads(threads).unwrap();
    let config = CourseConfig::default();
    let mut c = match mode {
        Mode::Track => {
            let p =
                Preset::parse("[track]\nn_max = 128\n[obstacles]\ncount = 3\n", "small").unwrap();
            Course::new(Mode::Track, &p, n, SEED, config, launch).unwrap()
        }
        Mode::Gates => Course::new(
            Mode::Gates,
            &Preset::load("gates-indoor").unwrap(),
            n,
            SEED,
            config,
            launch,
        )
        .unwrap(),
    };
    let spawn = c.geometry().spawn_position.clone();
    let o = c.geometry().spawn_orientation.clone();
    c.bind(Binding::new(spawn).with_orientations(o)).unwrap();
    c
}

/// Every byte of env `e` a caller can see, as one vector.
fn env_bytes(c: &Course, e: usize) -> Vec<u8> {
    fn push<T: bytemuck::NoUninit>(out: &mut Vec<u8>, v: &[T]) {
        out.extend_from_slice(bytemuck::cast_slice(v));
    }
    let mut out = Vec::new();
    push(&mut out, &c.generation()[e..=e]);
    let t = c.track_batch().slice(e..e + 1);
    push(&mut out, &t.center);
    push(&mut out, &t.arclen);
    push(&mut out, &t.count);
    push(&mut out, &t.valid);
    if let Some(g) = c.gate_batch() {
        let g = g.slice(e..e + 1);
        push(&mut out, &g.pos);
        push(&mut out, &g.quat);
        push(&mut out, &g.size);
        push(&mut out, &g.count);
    }
    let o = c.outputs();
    push(&mut out, &o.passed[e..=e]);
    push(&mut out, &o.lap_completed[e..=e]);
    push(&mut out, &o.wrong_way[e..=e]);
    push(&mut out, &o.wrong_checkpoint[e..=e]);
    push(&mut out, &o.next_index[e..=e]);
    push(&mut out, &o.laps[e..=e]);
    push(&mut out, &o.progress[e..=e]);
    push(&mut out, &o.dist_to_next[e..=e]);
    push(&mut out, &o.s[e..=e]);
    push(&mut out, &o.n[e..=e]);
    push(&mut out, &o.n_up[e..=e]);
    push(&mut out, &o.segment[e..=e]);
    push(&mut out, &o.curvature[e..=e]);
    push(&mut out, &o.off_track[e..=e]);
    push(&mut out, &o.hit[e..=e]);
    push(&mut out, &o.penetration[e..=e]);
    let b = c.binding().unwrap();
    push(&mut out, &b.positions()[e..=e]);
    push(&mut out, &b.orientations().unwrap()[e..=e]);
    out
}

/// Drives every env a few steps so that outputs and state are not the reset ones.
fn drive(c: &mut Course, steps: usize) {
    let agent = PurePursuit::for_course(c);
    for _ in 0..steps {
        agent.act(c).unwrap();
        c.step().unwrap();
    }
}

fn check_regenerate(
    mode: Mode,
    n: usize,
    mask_bits: u32,
    advance: bool,
    threads: usize,
) -> Result<(), TestCaseError> {
    let mut c = course(mode, n, threads);
    drive(&mut c, 7);
    let mask: Vec<u8> = (0..n).map(|e| ((mask_bits >> e) & 1) as u8).collect();
    let before: Vec<Vec<u8>> = (0..n).map(|e| env_bytes(&c, e)).collect();
    let gens_before = c.generation().to_vec();
    let geometry_before = c.geometry().clone();
    c.regenerate(&mask, advance).unwrap();
    let mut fresh: Vec<(u32, Course)> = Vec::new();
    for e in 0..n {
        if mask[e] == 0 {
            prop_assert_eq!(&env_bytes(&c, e), &before[e], "unmasked env {} changed", e);
            continue;
        }
        let g = gens_before[e] + u32::from(advance);
        prop_assert_eq!(c.generation()[e], g);
        if !fresh.iter().any(|(fg, _)| *fg == g) {
            let mut f = course(mode, n, 1);
            f.generate(g).unwrap();
            fresh.push((g, f));
        }
        let f = &fresh.iter().find(|(fg, _)| *fg == g).unwrap().1;
        prop_assert!(
            c.geometry().same_env_bytes(e, f.geometry(), e),
            "masked env {} geometry differs from a fresh generation",
            e
        );
        prop_assert!(c
            .track_batch()
            .slice(e..e + 1)
            .bytes_eq(&f.track_batch().slice(e..e + 1)));
        if let (Some(a), Some(b)) = (c.gate_batch(), f.gate_batch()) {
            prop_assert!(a.slice(e..e + 1).bytes_eq(&b.slice(e..e + 1)));
        }
        // Regenerated envs are reset: at the spawn pose, next checkpoint 1, no progress.
        let o = c.outputs();
        prop_assert_eq!((o.next_index[e], o.laps[e], o.progress[e]), (1, 0, 0.0));
        prop_assert_eq!(
            c.binding().unwrap().positions()[e],
            c.geometry().spawn_position[e]
        );
        if !advance {
            // The same generation rebuilt: the course bytes are those from before.
            prop_assert!(c.geometry().same_env_bytes(e, &geometry_before, e));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn regenerate_track(n in 1usize..20, mask_bits in any::<u32>(), advance in any::<bool>(), threads in 1usize..3) {
        check_regenerate(Mode::Track, n, mask_bits, advance, threads)?;
    }

    #[test]
    fn regenerate_gates(n in 1usize..20, mask_bits in any::<u32>(), advance in any::<bool>(), threads in 1usize..3) {
        check_regenerate(Mode::Gates, n, mask_bits, advance, threads)?;
    }
}

#[test]
fn advance_false_rebuilds_the_bytes_eq_and_zero_mask_is_a_no_op() {
    for mode in [Mode::Track, Mode::Gates] {
        let n = 9;
        let mut c = course(mode, n, 2);
        c.regenerate(&[1; 9], true).unwrap();
        c.regenerate(&[1; 9], true).unwrap();
        let geometry = c.geometry().clone();
        let outputs = c.outputs().clone();
        c.regenerate(&[1; 9], false).unwrap();
        assert_eq!(c.generation(), &[2; 9]);
        for e in 0..n {
            assert!(
                c.geometry().same_env_bytes(e, &geometry, e),
                "{mode:?} env {e}"
            );
        }
        drive(&mut c, 5);
        let before: Vec<Vec<u8>> = (0..n).map(|e| env_bytes(&c, e)).collect();
        c.regenerate(&[0; 9], true).unwrap();
        c.reset(&[0; 9]).unwrap();
        for (e, bytes) in before.iter().enumerate() {
            assert_eq!(
                &env_bytes(&c, e),
                bytes,
                "{mode:?} env {e}: an all-zero mask wrote"
            );
        }
        // Regenerated at generation 2 a second time: the reset outputs match too.
        c.regenerate(&[1; 9], false).unwrap();
        assert_eq!(c.outputs().progress, outputs.progress);
        assert_eq!(c.outputs().dist_to_next, outputs.dist_to_next);
    }
}

#[test]
fn thread_count_and_batch_size_do_not_change_a_byte() {
    for mode in [Mode::Track, Mode::Gates] {
        let mut one = course(mode, 24, 1);
        let mut two = course(mode, 24, 2);
        let mut small = course(mode, 5, 2);
        drive(&mut one, 30);
        drive(&mut two, 30);
        drive(&mut small, 30);
        for e in 0..24 {
            assert_eq!(env_bytes(&one, e), env_bytes(&two, e), "{mode:?} env {e}");
        }
        for e in 0..5 {
            assert!(small.geometry().same_env_bytes(e, one.geometry(), e));
            assert_eq!(env_bytes(&small, e), env_bytes(&one, e), "{mode:?} env {e}");
        }
    }
}
