//! Deterministic lane random numbers.
//!
//! Every random draw in trackgen comes from a [`LaneRng`]: one Xoshiro128++ stream per
//! `(seed, env, generation, stage)`. The four words are folded together with the SplitMix64
//! finaliser, and two SplitMix64 outputs seed the 128-bit Xoshiro state. Because each stage has
//! its own stream, adding a draw to one stage never shifts the numbers of another, and an env's
//! numbers never depend on which other envs run beside it.
//!
//! `kernels/common/rng.cuh` is the bit-exact CUDA twin; the test suite compiles it as host C++
//! and compares both over millions of draws.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro128PlusPlus;

/// The golden-ratio increment of SplitMix64.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 output finaliser (Stafford's "Mix13").
#[inline]
pub fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One SplitMix64 step: advances `state` and returns the next output.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    mix64(*state)
}

/// Folds `(seed, env, generation, stage)` into the four 32-bit words of a Xoshiro128++ state.
///
/// An all-zero state (a fixed point of Xoshiro) is replaced by `[0x9e3779b9, 0, 0, 0]`.
pub fn stream_state(seed: u64, env: u64, generation: u32, stage: u32) -> [u32; 4] {
    let mut h = mix64(seed.wrapping_add(GOLDEN_GAMMA));
    h = mix64((h ^ env).wrapping_add(GOLDEN_GAMMA));
    h = mix64((h ^ u64::from(generation)).wrapping_add(GOLDEN_GAMMA));
    h = mix64((h ^ u64::from(stage)).wrapping_add(GOLDEN_GAMMA));
    let mut sm = h;
    let a = splitmix64(&mut sm);
    let b = splitmix64(&mut sm);
    let mut s = [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32];
    if s == [0; 4] {
        s[0] = 0x9e37_79b9;
    }
    s
}

/// The random-stream ids: each stage draws from its own stream, `LaneRng::new(seed, env,
/// generation, id)`. This is the one table of them; `kernels/common/rng.cuh` holds the same
/// constants (`TG_STREAM_<NAME>`), and the twin test checks every entry of [`ALL`](stream::ALL)
/// against them.
pub mod stream {
    /// Track generator (control polygon), per attempt (`with_attempt(GENERATE, attempt)`).
    pub const GENERATE: u32 = 1;
    /// Track z-profile.
    pub const ZPROFILE: u32 = 2;
    /// Gate placement, per attempt (`with_attempt(GATES, attempt)`).
    pub const GATES: u32 = 0x0300;
    /// Course obstacle placement.
    pub const OBSTACLES: u32 = 0x0301;
    /// Scene rooms (walls and doors).
    pub const SCENE_ROOMS: u32 = 0x5C00_0001;
    /// Scene forest (trees).
    pub const SCENE_FOREST: u32 = 0x5C00_0002;
    /// Scene gate obstacles.
    pub const SCENE_GATES: u32 = 0x5C00_0003;
    /// User stages start here; a plug-in stage picks `USER + k`, with `k` below
    /// `SCENE_ROOMS - USER` and below 2²⁴ − `USER` if it retries with [`with_attempt`].
    pub const USER: u32 = 1 << 16;

    /// Every id by name, in the order above (the names of the C++ constants without their
    /// `TG_STREAM_` prefix).
    pub const ALL: &[(&str, u32)] = &[
        ("GENERATE", GENERATE),
        ("ZPROFILE", ZPROFILE),
        ("GATES", GATES),
        ("OBSTACLES", OBSTACLES),
        ("SCENE_ROOMS", SCENE_ROOMS),
        ("SCENE_FOREST", SCENE_FOREST),
        ("SCENE_GATES", SCENE_GATES),
        ("USER", USER),
    ];

    /// The stream word of `id` at retry `attempt` (attempts live in the top byte).
    pub const fn with_attempt(id: u32, attempt: u32) -> u32 {
        id ^ (attempt << 24)
    }
}

/// A deterministic random stream for one lane of one stage.
#[derive(Clone, Debug)]
pub struct LaneRng {
    inner: Xoshiro128PlusPlus,
}

impl LaneRng {
    /// The stream of `(seed, env, generation, stage)`.
    pub fn new(seed: u64, env: u64, generation: u32, stage: u32) -> Self {
        let s = stream_state(seed, env, generation, stage);
        let mut bytes = [0u8; 16];
        for (chunk, word) in bytes.chunks_exact_mut(4).zip(s) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        Self {
            inner: Xoshiro128PlusPlus::from_seed(bytes),
        }
    }

    /// The next raw 32-bit output.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }

    /// A uniform float in `[0, 1)`: the top 24 bits of a draw times 2⁻²⁴ (exact).
    #[inline]
    pub fn unit(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// A uniform float in `[lo, hi)` (or `lo` when `hi <= lo`), computed as `lo + (hi - lo) * u`.
    #[inline]
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let u = self.unit();
        if hi > lo {
            lo + (hi - lo) * u
        } else {
            lo
        }
    }

    /// A uniform float in `[-1, 1)`.
    #[inline]
    pub fn signed(&mut self) -> f32 {
        self.unit() * 2.0 - 1.0
    }

    /// A uniform integer in `[0, n)` by Lemire's multiply-shift (no rejection; bias ≤ n/2³²).
    /// Returns 0 when `n == 0`.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        ((u64::from(self.next_u32()) * u64::from(n)) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_per_word() {
        let base = LaneRng::new(1, 2, 3, 4).next_u32();
        assert_ne!(base, LaneRng::new(0, 2, 3, 4).next_u32());
        assert_ne!(base, LaneRng::new(1, 3, 3, 4).next_u32());
        assert_ne!(base, LaneRng::new(1, 2, 4, 4).next_u32());
        assert_ne!(base, LaneRng::new(1, 2, 3, 5).next_u32());
    }

    #[test]
    fn same_words_same_stream() {
        let mut a = LaneRng::new(7, 11, 13, 17);
        let mut b = LaneRng::new(7, 11, 13, 17);
        for _ in 0..1000 {
            assert_eq!(a.next_u32(), b.next_u32());
        }
    }

    #[test]
    fn unit_in_range_and_below_bounded() {
        let mut r = LaneRng::new(3, 0, 0, 0);
        for _ in 0..100_000 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            assert!(r.below(7) < 7);
        }
        assert_eq!(r.below(0), 0);
    }

    #[test]
    fn xoshiro_matches_reference_step() {
        // Xoshiro128++ reference: result = rotl(s0 + s3, 7) + s0, then the state update.
        let s0 = stream_state(5, 6, 7, 8);
        let mut s = s0;
        let mut reference = || {
            let result = s[0].wrapping_add(s[3]).rotate_left(7).wrapping_add(s[0]);
            let t = s[1] << 9;
            s[2] ^= s[0];
            s[3] ^= s[1];
            s[1] ^= s[2];
            s[0] ^= s[3];
            s[2] ^= t;
            s[3] = s[3].rotate_left(11);
            result
        };
        let mut rng = LaneRng::new(5, 6, 7, 8);
        for _ in 0..64 {
            assert_eq!(rng.next_u32(), reference());
        }
    }
}
