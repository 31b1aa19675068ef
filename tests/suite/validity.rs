//! The fold-back env of issue 14 as a fixture against the f64 oracle (`track_oracle`). Every
//! preset's envs are checked against the same oracle by `validity_sweep`.

use trackgen::exec::Launch;
use trackgen::preset::Preset;
use trackgen::track::Pipeline;

use crate::track_oracle::brute_force;

/// Issue 14: `hull`, seed 101, env 10789 folded back on itself (points 46 → 47 → 48 nearly
/// reverse, so centerline segments 46 and 47 cross segment 49 and both borders self-intersect)
/// yet was flagged valid, with every Menger radius ≥ 13.8 m against a 12 m minimum. The oracle
/// must see that shape as invalid; the library must now flag the env invalid or regenerate it
/// valid.
#[test]
fn hull_seed_101_env_10789_is_not_a_folded_valid_track() {
    let p = Preset::load("hull").unwrap();
    let mut pipe = Pipeline::new(&p, 1, Launch::new()).unwrap();
    let mut batch = pipe.new_batch(10789).unwrap();
    pipe.generate(101, 0, &mut batch).unwrap();
    if batch.valid[0] == 1 {
        assert_eq!(brute_force(&batch, 0, &p), None);
    } else {
        assert_eq!(batch.attempts[0] as u32, p.track.max_attempts);
    }
}
