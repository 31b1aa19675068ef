//! Eight `f32` lanes compared at once into a bit mask: one AVX compare per test and one
//! `movemask` for all eight where the build enables AVX (x86-64-v3, `.cargo/config.toml`), the
//! same comparisons lane by lane elsewhere. Every comparison is IEEE's (false with a NaN) and
//! every sum one IEEE addition per lane, so both forms give the same bits.
//!
//! The compiler does not turn eight scalar comparisons ANDed into a mask into these
//! instructions by itself (the lane loops of the circuit generator's clearance check compiled to
//! about 90 scalar instructions per block of eight).
//!
//! [`F32x4`] holds a 3D point in four lanes (SSE4.1 where the build enables it): the ray march's
//! per-step arithmetic, which the compiler split into a 2-lane vector and a scalar lane.
//!
//! [`U32x8`] holds eight `u32` (AVX2): the ray packets' integer arithmetic, masks and gathers
//! (the compiler kept per-lane table reads, window loads and byte packing scalar; in vectors,
//! camera rays take 16–18% fewer instructions).

#![allow(unsafe_code)]

#[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
use std::arch::x86_64 as arch;

/// Eight `f32` lanes.
#[derive(Clone, Copy, Debug)]
pub struct F32x8(
    #[cfg(all(target_arch = "x86_64", target_feature = "avx"))] arch::__m256,
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))] [f32; 8],
);

/// A mask of eight lanes (all bits of a lane set where its test held).
#[derive(Clone, Copy, Debug)]
pub struct Mask8(
    #[cfg(all(target_arch = "x86_64", target_feature = "avx"))] arch::__m256,
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))] [bool; 8],
);

// SAFETY (every `unsafe` block below): the intrinsics called need AVX, and this code is
// compiled only where the build enables AVX for the whole crate (`cfg(target_feature = "avx")`),
// so the compiler already emits AVX instructions throughout it; the `trackgen` binary and the
// Python module check for the CPU features at start-up (`os::check_cpu`). The loads read eight
// `f32` from a `&[f32; 8]`, in bounds (`loadu` needs no alignment).
#[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
impl F32x8 {
    /// The eight words of `v`.
    #[inline(always)]
    pub fn load(v: &[f32; 8]) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_loadu_ps(v.as_ptr()) })
    }

    /// `x` in every lane.
    #[inline(always)]
    pub fn splat(x: f32) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_set1_ps(x) })
    }

    /// The eight lanes.
    #[inline(always)]
    pub fn to_array(self) -> [f32; 8] {
        let mut v = [0.0f32; 8];
        // SAFETY: see above; the store writes the eight words of `v`.
        unsafe { arch::_mm256_storeu_ps(v.as_mut_ptr(), self.0) };
        v
    }

    /// `self > o` per lane.
    #[inline(always)]
    pub fn gt(self, o: Self) -> Mask8 {
        // SAFETY: see above.
        Mask8(unsafe { arch::_mm256_cmp_ps::<{ arch::_CMP_GT_OQ }>(self.0, o.0) })
    }

    /// `self < o` per lane.
    #[inline(always)]
    pub fn lt(self, o: Self) -> Mask8 {
        // SAFETY: see above.
        Mask8(unsafe { arch::_mm256_cmp_ps::<{ arch::_CMP_LT_OQ }>(self.0, o.0) })
    }

    /// `self >= o` per lane.
    #[inline(always)]
    pub fn ge(self, o: Self) -> Mask8 {
        // SAFETY: see above.
        Mask8(unsafe { arch::_mm256_cmp_ps::<{ arch::_CMP_GE_OQ }>(self.0, o.0) })
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
impl Mask8 {
    /// Both masks' lanes.
    #[inline(always)]
    pub fn and(self, o: Self) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_and_ps(self.0, o.0) })
    }

    /// This mask's lanes that are not `o`'s.
    #[inline(always)]
    pub fn and_not(self, o: Self) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_andnot_ps(o.0, self.0) })
    }

    /// Bit `t` set where lane `t` is.
    #[inline(always)]
    pub fn bits(self) -> u32 {
        // SAFETY: see above.
        (unsafe { arch::_mm256_movemask_ps(self.0) }) as u32
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
impl F32x8 {
    /// The eight words of `v`.
    #[inline(always)]
    pub fn load(v: &[f32; 8]) -> Self {
        Self(*v)
    }

    /// `x` in every lane.
    #[inline(always)]
    pub fn splat(x: f32) -> Self {
        Self([x; 8])
    }

    /// The eight lanes.
    #[inline(always)]
    pub fn to_array(self) -> [f32; 8] {
        self.0
    }

    /// `self > o` per lane.
    #[inline(always)]
    pub fn gt(self, o: Self) -> Mask8 {
        Mask8(std::array::from_fn(|t| self.0[t] > o.0[t]))
    }

    /// `self < o` per lane.
    #[inline(always)]
    pub fn lt(self, o: Self) -> Mask8 {
        Mask8(std::array::from_fn(|t| self.0[t] < o.0[t]))
    }

    /// `self >= o` per lane.
    #[inline(always)]
    pub fn ge(self, o: Self) -> Mask8 {
        Mask8(std::array::from_fn(|t| self.0[t] >= o.0[t]))
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
impl Mask8 {
    /// Both masks' lanes.
    #[inline(always)]
    pub fn and(self, o: Self) -> Self {
        Self(std::array::from_fn(|t| self.0[t] & o.0[t]))
    }

    /// This mask's lanes that are not `o`'s.
    #[inline(always)]
    pub fn and_not(self, o: Self) -> Self {
        Self(std::array::from_fn(|t| self.0[t] & !o.0[t]))
    }

    /// Bit `t` set where lane `t` is.
    #[inline(always)]
    pub fn bits(self) -> u32 {
        self.0
            .iter()
            .enumerate()
            .fold(0, |m, (t, &b)| m | u32::from(b) << t)
    }
}

/// The bits of lanes `lo..hi` of eight (each bound clamped into `0..=8`; none when `lo ≥ hi`).
#[inline(always)]
pub fn lanes_between(lo: i32, hi: i32) -> u32 {
    let (lo, hi) = (lo.clamp(0, 8), hi.clamp(0, 8));
    ((1u32 << hi) - 1) & !((1u32 << lo) - 1)
}

/// Lane-wise arithmetic of a lanes type: one IEEE operation per lane, by the intrinsic where
/// `$simd` holds (the build enables the instructions for the whole crate), lane by lane
/// elsewhere.
macro_rules! lane_ops {
    ($lanes:ident, $simd:meta, $arch:ident,
     [$(($trait:ident, $method:ident, $intrinsic:ident, $op:tt)),*]) => {
        $(
            impl std::ops::$trait for $lanes {
                type Output = Self;

                #[inline(always)]
                fn $method(self, o: Self) -> Self {
                    #[cfg($simd)]
                    // SAFETY: as for the methods of the type (its instructions are enabled for
                    // the whole build here).
                    return Self(unsafe { $arch::$intrinsic(self.0, o.0) });
                    #[cfg(not($simd))]
                    Self(std::array::from_fn(|t| self.0[t] $op o.0[t]))
                }
            }
        )*
    };
}

lane_ops!(
    F32x8,
    all(target_arch = "x86_64", target_feature = "avx"),
    arch,
    [
        (Add, add, _mm256_add_ps, +),
        (Sub, sub, _mm256_sub_ps, -),
        (Mul, mul, _mm256_mul_ps, *),
        (Div, div, _mm256_div_ps, /)
    ]
);

impl F32x8 {
    /// `fmin(self, o)` per lane: `self < o ? self : o` (what `minps` computes).
    #[inline(always)]
    pub fn min(self, o: Self) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        // SAFETY: as for the methods of `F32x8` (AVX is enabled for the whole build here).
        return Self(unsafe { arch::_mm256_min_ps(self.0, o.0) });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        Self(std::array::from_fn(|t| {
            crate::geom::sdf::fmin(self.0[t], o.0[t])
        }))
    }

    /// `fmax(self, o)` per lane: `self > o ? self : o` (what `maxps` computes).
    #[inline(always)]
    pub fn max(self, o: Self) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        // SAFETY: as for the methods of `F32x8` (AVX is enabled for the whole build here).
        return Self(unsafe { arch::_mm256_max_ps(self.0, o.0) });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        Self(std::array::from_fn(|t| {
            crate::geom::sdf::fmax(self.0[t], o.0[t])
        }))
    }

    /// Each lane rounded down to an integer (IEEE's `floor`).
    #[inline(always)]
    pub fn floor(self) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        // SAFETY: as for the methods of `F32x8` (AVX is enabled for the whole build here).
        return Self(unsafe {
            arch::_mm256_round_ps::<{ arch::_MM_FROUND_TO_NEG_INF | arch::_MM_FROUND_NO_EXC }>(
                self.0,
            )
        });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        Self(self.0.map(f32::floor))
    }

    /// `sqrt` per lane (IEEE's, correctly rounded).
    #[inline(always)]
    pub fn sqrt(self) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        // SAFETY: as for the methods of `F32x8` (AVX is enabled for the whole build here).
        return Self(unsafe { arch::_mm256_sqrt_ps(self.0) });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        Self(self.0.map(f32::sqrt))
    }

    /// Each lane rounded toward zero to an integer, for lanes in `[0, 2^31)`.
    #[inline(always)]
    pub fn truncate_u32(self) -> U32x8 {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        // SAFETY: as for the methods of `U32x8` (AVX2 is enabled for the whole build here).
        return U32x8(unsafe { arch::_mm256_cvttps_epi32(self.0) });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        U32x8(self.to_array().map(|x| x as i32 as u32))
    }

    /// `self == o` per lane.
    #[inline(always)]
    pub fn eq(self, o: Self) -> Mask8 {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        // SAFETY: as for the methods of `F32x8` (AVX is enabled for the whole build here).
        return Mask8(unsafe { arch::_mm256_cmp_ps::<{ arch::_CMP_EQ_OQ }>(self.0, o.0) });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        Mask8(std::array::from_fn(|t| self.0[t] == o.0[t]))
    }

    /// `if_true` in the lanes of `mask`, `self` in the others.
    #[inline(always)]
    pub fn select(self, mask: Mask8, if_true: Self) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        // SAFETY: as for the methods of `F32x8` (AVX is enabled for the whole build here).
        return Self(unsafe { arch::_mm256_blendv_ps(self.0, if_true.0, mask.0) });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        Self(std::array::from_fn(|t| {
            if mask.0[t] {
                if_true.0[t]
            } else {
                self.0[t]
            }
        }))
    }
}

impl Mask8 {
    /// The lanes of either mask.
    #[inline(always)]
    pub fn or(self, o: Self) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        // SAFETY: as for the methods of `F32x8` (AVX is enabled for the whole build here).
        return Self(unsafe { arch::_mm256_or_ps(self.0, o.0) });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        Self(std::array::from_fn(|t| self.0[t] | o.0[t]))
    }

    /// The lanes where `b` holds.
    #[inline(always)]
    pub fn from_bools(b: [bool; 8]) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        // SAFETY: as for the methods of `F32x8` (AVX is enabled for the whole build here); the
        // load reads the eight words of a local array.
        return Self(unsafe {
            let words = b.map(|x| -i32::from(x));
            arch::_mm256_castsi256_ps(arch::_mm256_loadu_si256(words.as_ptr().cast()))
        });
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx")))]
        Self(b)
    }
}

/// Four `f32` lanes for points in 3D (the fourth lane a dummy): one SSE register where the
/// build enables SSE4.1 (x86-64-v3), four scalars elsewhere. Every operation is IEEE's, lane by
/// lane, so both forms give the same bits; [`min`](Self::min) and [`max`](Self::max) are
/// [`crate::geom::sdf::fmin`] and [`fmax`](crate::geom::sdf::fmax) per lane (the second
/// operand where either is NaN), which is what `minps` and `maxps` compute.
#[derive(Clone, Copy, Debug)]
pub struct F32x4(
    #[cfg(all(target_arch = "x86_64", target_feature = "sse4.1"))] arch4::__m128,
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse4.1")))] [f32; 4],
);

#[cfg(all(target_arch = "x86_64", target_feature = "sse4.1"))]
use std::arch::x86_64 as arch4;

// SAFETY (every `unsafe` block below): the intrinsics called need SSE4.1 at most, and this code
// is compiled only where the build enables SSE4.1 for the whole crate
// (`cfg(target_feature = "sse4.1")`; x86-64-v3 implies it), whose binaries check the CPU at
// start-up (`os::check_cpu`). The load and store touch the four words of a `[f32; 4]` or
// `[i32; 4]` (`loadu`/`storeu` need no alignment).
#[cfg(all(target_arch = "x86_64", target_feature = "sse4.1"))]
impl F32x4 {
    /// The four words of `v`.
    #[inline(always)]
    pub fn load(v: &[f32; 4]) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch4::_mm_loadu_ps(v.as_ptr()) })
    }

    /// `x` in every lane.
    #[inline(always)]
    pub fn splat(x: f32) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch4::_mm_set1_ps(x) })
    }

    /// The integers `v` (each below 2^24 in magnitude: exact) as floats.
    #[inline(always)]
    pub fn from_i32(v: [i32; 4]) -> Self {
        // SAFETY: see above; the load reads the four words of `v`.
        Self(unsafe { arch4::_mm_cvtepi32_ps(arch4::_mm_loadu_si128(v.as_ptr().cast())) })
    }

    /// The four lanes.
    #[inline(always)]
    pub fn to_array(self) -> [f32; 4] {
        let mut v = [0.0f32; 4];
        // SAFETY: see above.
        unsafe { arch4::_mm_storeu_ps(v.as_mut_ptr(), self.0) };
        v
    }

    /// `fmin(self, o)` per lane: `self < o ? self : o`.
    #[inline(always)]
    pub fn min(self, o: Self) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch4::_mm_min_ps(self.0, o.0) })
    }

    /// `fmax(self, o)` per lane: `self > o ? self : o`.
    #[inline(always)]
    pub fn max(self, o: Self) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch4::_mm_max_ps(self.0, o.0) })
    }

    /// `floor` per lane.
    #[inline(always)]
    pub fn floor(self) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch4::_mm_floor_ps(self.0) })
    }

    /// Each lane rounded toward zero to an integer, for lanes in `(−2^31, 2^31)` (one
    /// conversion instruction).
    #[inline(always)]
    pub fn truncate(self) -> [i32; 4] {
        let mut v = [0i32; 4];
        // SAFETY: see above; the store writes the four words of `v`.
        unsafe {
            arch4::_mm_storeu_si128(v.as_mut_ptr().cast(), arch4::_mm_cvttps_epi32(self.0));
        }
        v
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse4.1")))]
impl F32x4 {
    /// The four words of `v`.
    #[inline(always)]
    pub fn load(v: &[f32; 4]) -> Self {
        Self(*v)
    }

    /// `x` in every lane.
    #[inline(always)]
    pub fn splat(x: f32) -> Self {
        Self([x; 4])
    }

    /// The integers `v` (each below 2^24 in magnitude: exact) as floats.
    #[inline(always)]
    pub fn from_i32(v: [i32; 4]) -> Self {
        Self(v.map(|x| x as f32))
    }

    /// The four lanes.
    #[inline(always)]
    pub fn to_array(self) -> [f32; 4] {
        self.0
    }

    /// `fmin(self, o)` per lane: `self < o ? self : o`.
    #[inline(always)]
    pub fn min(self, o: Self) -> Self {
        Self(std::array::from_fn(|t| {
            crate::geom::sdf::fmin(self.0[t], o.0[t])
        }))
    }

    /// `fmax(self, o)` per lane: `self > o ? self : o`.
    #[inline(always)]
    pub fn max(self, o: Self) -> Self {
        Self(std::array::from_fn(|t| {
            crate::geom::sdf::fmax(self.0[t], o.0[t])
        }))
    }

    /// `floor` per lane.
    #[inline(always)]
    pub fn floor(self) -> Self {
        Self(self.0.map(f32::floor))
    }

    /// Each lane rounded toward zero to an integer, for lanes in `(−2^31, 2^31)`.
    #[inline(always)]
    pub fn truncate(self) -> [i32; 4] {
        self.0.map(|x| x as i32)
    }
}

lane_ops!(
    F32x4,
    all(target_arch = "x86_64", target_feature = "sse4.1"),
    arch4,
    [
        (Add, add, _mm_add_ps, +),
        (Sub, sub, _mm_sub_ps, -),
        (Mul, mul, _mm_mul_ps, *)
    ]
);

/// Eight `u32` lanes: one AVX2 register where the build enables AVX2 (x86-64-v3), eight words
/// elsewhere; the same values. Shifts by 32 or more give 0 (what `vpsllvd`/`vpsrlvd` do); sums
/// are for lanes whose sum is below 2^32.
#[derive(Clone, Copy, Debug)]
pub struct U32x8(
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))] arch::__m256i,
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))] [u32; 8],
);

// SAFETY (every `unsafe` block below): the intrinsics called need AVX2, and this code is
// compiled only where the build enables AVX2 for the whole crate (`cfg(target_feature =
// "avx2")`); the loads and stores touch the eight words of a `[u32; 8]`, and the gathers read
// only in-bounds elements (each checked first).
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
impl U32x8 {
    /// The eight words of `v`.
    #[inline(always)]
    pub fn load(v: &[u32; 8]) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_loadu_si256(v.as_ptr().cast()) })
    }

    /// `x` in every lane.
    #[inline(always)]
    pub fn splat(x: u32) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_set1_epi32(x as i32) })
    }

    /// The eight lanes.
    #[inline(always)]
    pub fn to_array(self) -> [u32; 8] {
        let mut v = [0u32; 8];
        // SAFETY: see above.
        unsafe { arch::_mm256_storeu_si256(v.as_mut_ptr().cast(), self.0) };
        v
    }

    /// Each lane shifted left by the same lane of `by`.
    #[inline(always)]
    pub fn shift_left(self, by: Self) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_sllv_epi32(self.0, by.0) })
    }

    /// Each lane shifted right (logically) by the same lane of `by`.
    #[inline(always)]
    pub fn shift_right(self, by: Self) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_srlv_epi32(self.0, by.0) })
    }

    /// Each lane shifted right (arithmetically: the sign bit repeated) by the same lane of
    /// `by` (below 32).
    #[inline(always)]
    pub fn shift_right_signed(self, by: Self) -> Self {
        // SAFETY: see above.
        Self(unsafe { arch::_mm256_srav_epi32(self.0, by.0) })
    }

    /// `self == o` per lane.
    #[inline(always)]
    pub fn eq(self, o: Self) -> Mask8 {
        // SAFETY: see above.
        Mask8(unsafe { arch::_mm256_castsi256_ps(arch::_mm256_cmpeq_epi32(self.0, o.0)) })
    }

    /// Each lane as a signed integer, as a float (rounded to nearest; exact below 2^24).
    #[inline(always)]
    pub fn to_f32(self) -> F32x8 {
        // SAFETY: see above.
        F32x8(unsafe { arch::_mm256_cvtepi32_ps(self.0) })
    }

    /// `if_true` in the lanes of `mask`, `self` in the others.
    #[inline(always)]
    pub fn select(self, mask: Mask8, if_true: Self) -> Self {
        // SAFETY: see above.
        Self(unsafe {
            arch::_mm256_blendv_epi8(self.0, if_true.0, arch::_mm256_castps_si256(mask.0))
        })
    }

    /// Whether every lane is below `n`.
    #[inline(always)]
    fn all_below(self, n: usize) -> bool {
        let Ok(n) = u32::try_from(n) else {
            return true;
        };
        if n == 0 {
            return false;
        }
        // SAFETY: see above.
        unsafe {
            let top = arch::_mm256_set1_epi32((n - 1) as i32);
            let within = arch::_mm256_cmpeq_epi32(arch::_mm256_min_epu32(self.0, top), self.0);
            arch::_mm256_movemask_epi8(within) == -1
        }
    }

    /// `v[i]` for each lane `i` (every lane below `v.len()` and `2^31`; panics otherwise).
    #[inline(always)]
    pub fn gather(v: &[u32], index: Self) -> Self {
        assert!(
            index.all_below(v.len().min(1 << 31)),
            "gather: an index past {}",
            v.len()
        );
        // SAFETY: see above; every index is below `v.len()` (checked) and `2^31`, so the
        // signed 32-bit offsets, scaled by 4, address elements of `v`.
        Self(unsafe { arch::_mm256_i32gather_epi32::<4>(v.as_ptr().cast(), index.0) })
    }

    /// The four bytes `bytes[o..o + 4]` (little-endian) for each lane `o` (every lane at most
    /// `bytes.len() − 4` and below `2^31`; panics otherwise).
    #[inline(always)]
    pub fn gather_words(bytes: &[i8], at: Self) -> Self {
        assert!(
            bytes.len() >= 4 && at.all_below((bytes.len() - 3).min(1 << 31)),
            "gather_words: an offset past {}",
            bytes.len()
        );
        // SAFETY: see above; each lane's four bytes lie in `bytes` (checked), and the offsets
        // are below `2^31`, so the signed 32-bit offsets, scaled by 1, address them.
        Self(unsafe { arch::_mm256_i32gather_epi32::<1>(bytes.as_ptr().cast(), at.0) })
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
impl U32x8 {
    /// The eight words of `v`.
    #[inline(always)]
    pub fn load(v: &[u32; 8]) -> Self {
        Self(*v)
    }

    /// `x` in every lane.
    #[inline(always)]
    pub fn splat(x: u32) -> Self {
        Self([x; 8])
    }

    /// The eight lanes.
    #[inline(always)]
    pub fn to_array(self) -> [u32; 8] {
        self.0
    }

    /// Each lane shifted left by the same lane of `by`.
    #[inline(always)]
    pub fn shift_left(self, by: Self) -> Self {
        Self(std::array::from_fn(|t| {
            self.0[t].checked_shl(by.0[t]).unwrap_or(0)
        }))
    }

    /// Each lane shifted right (logically) by the same lane of `by`.
    #[inline(always)]
    pub fn shift_right(self, by: Self) -> Self {
        Self(std::array::from_fn(|t| {
            self.0[t].checked_shr(by.0[t]).unwrap_or(0)
        }))
    }

    /// Each lane shifted right (arithmetically: the sign bit repeated) by the same lane of
    /// `by` (below 32).
    #[inline(always)]
    pub fn shift_right_signed(self, by: Self) -> Self {
        Self(std::array::from_fn(|t| {
            ((self.0[t] as i32) >> (by.0[t] & 31)) as u32
        }))
    }

    /// `self == o` per lane.
    #[inline(always)]
    pub fn eq(self, o: Self) -> Mask8 {
        Mask8::from_bools(std::array::from_fn(|t| self.0[t] == o.0[t]))
    }

    /// Each lane as a signed integer, as a float (rounded to nearest; exact below 2^24).
    #[inline(always)]
    pub fn to_f32(self) -> F32x8 {
        F32x8::load(&self.0.map(|x| x as i32 as f32))
    }

    /// `if_true` in the lanes of `mask`, `self` in the others.
    #[inline(always)]
    pub fn select(self, mask: Mask8, if_true: Self) -> Self {
        let m = mask.bits();
        Self(std::array::from_fn(|t| {
            if (m >> t) & 1 == 1 {
                if_true.0[t]
            } else {
                self.0[t]
            }
        }))
    }

    /// `v[i]` for each lane `i` (every lane below `v.len()`; panics otherwise).
    #[inline(always)]
    pub fn gather(v: &[u32], index: Self) -> Self {
        Self(index.0.map(|i| v[i as usize]))
    }

    /// The four bytes `bytes[o..o + 4]` (little-endian) for each lane `o` (every lane at most
    /// `bytes.len() − 4`; panics otherwise).
    #[inline(always)]
    pub fn gather_words(bytes: &[i8], at: Self) -> Self {
        Self(at.0.map(|o| {
            let o = o as usize;
            u32::from_le_bytes([0, 1, 2, 3].map(|k| bytes[o + k] as u8))
        }))
    }
}

lane_ops!(
    U32x8,
    all(target_arch = "x86_64", target_feature = "avx2"),
    arch,
    [
        (Add, add, _mm256_add_epi32, +),
        (BitAnd, bitand, _mm256_and_si256, &),
        (BitOr, bitor, _mm256_or_si256, |)
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    /// IEEE special values, drawn one time in three by [`Draws::float`].
    const SPECIALS: [f32; 11] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        1.5,
        -2.5,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        3.4e38,
    ];

    /// A xorshift stream of test values.
    struct Draws(u32);

    impl Draws {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            self.0
        }

        /// A special value one time in three, else a multiple of `scale` below
        /// `modulus · scale` in magnitude.
        fn float(&mut self, modulus: i32, scale: f32) -> f32 {
            let r = self.next();
            if r % 3 == 0 {
                SPECIALS[(r / 3) as usize % SPECIALS.len()]
            } else {
                (r as i32 % modulus) as f32 * scale
            }
        }
    }

    #[test]
    fn lanes_between_are_the_lanes_in_range() {
        for lo in -2..11 {
            for hi in -2..11 {
                let want = (0..8).fold(0u32, |m, t| m | u32::from(lo <= t && t < hi) << t);
                assert_eq!(lanes_between(lo, hi), want, "{lo}..{hi}");
            }
        }
    }

    /// Every test and sum equals the scalar one lane by lane, NaN, infinities, ±0 and ties
    /// included.
    #[test]
    fn lanes_equal_scalar_comparisons() {
        let mut draws = Draws(0x9e37_79b9);
        for _ in 0..2000 {
            let mut pick = || draws.float(1000, 0.25);
            let a: [f32; 8] = std::array::from_fn(|_| pick());
            let b: [f32; 8] = std::array::from_fn(|_| pick());
            let s = pick();
            let (va, vb) = (F32x8::load(&a), F32x8::load(&b));
            let bits =
                |f: &dyn Fn(usize) -> bool| (0..8).fold(0u32, |m, t| m | u32::from(f(t)) << t);
            assert_eq!(va.gt(vb).bits(), bits(&|t| a[t] > b[t]));
            assert_eq!(va.lt(vb).bits(), bits(&|t| a[t] < b[t]));
            assert_eq!(va.ge(vb).bits(), bits(&|t| a[t] >= b[t]));
            assert_eq!(
                va.gt(vb).and(va.ge(F32x8::splat(s))).bits(),
                bits(&|t| (a[t] > b[t]) & (a[t] >= s))
            );
            let ge_s = |t: usize| a[t] >= s;
            assert_eq!(
                va.gt(vb).and_not(va.ge(F32x8::splat(s))).bits(),
                bits(&|t| (a[t] > b[t]) & !ge_s(t))
            );
            let sum = (va + F32x8::splat(s)).to_array();
            for t in 0..8 {
                assert_eq!(
                    sum[t].to_bits(),
                    (a[t] + s).to_bits(),
                    "lane {t}: {} + {s}",
                    a[t]
                );
            }
        }
    }

    /// Every arithmetic operation and selection of `F32x8` equals the scalar one lane by lane
    /// (`min` is `fmin`), NaN, infinities, ±0 and ties included.
    #[test]
    fn eight_lanes_equal_scalar_operations() {
        use crate::geom::sdf::fmin;
        let mut draws = Draws(0x51ed_2701);
        let bits = |v: [f32; 8]| v.map(f32::to_bits);
        for _ in 0..4000 {
            let mut pick = || draws.float(100_000, 0.017);
            let a: [f32; 8] = std::array::from_fn(|_| pick());
            let b: [f32; 8] = std::array::from_fn(|_| pick());
            let (va, vb) = (F32x8::load(&a), F32x8::load(&b));
            let lanes = |f: &dyn Fn(f32, f32) -> f32| bits(std::array::from_fn(|t| f(a[t], b[t])));
            assert_eq!(bits((va + vb).to_array()), lanes(&|x, y| x + y));
            assert_eq!(bits((va - vb).to_array()), lanes(&|x, y| x - y));
            assert_eq!(bits((va * vb).to_array()), lanes(&|x, y| x * y));
            assert_eq!(bits((va / vb).to_array()), lanes(&|x, y| x / y));
            assert_eq!(bits(va.min(vb).to_array()), lanes(&fmin), "{a:?} {b:?}");
            let eq = va.eq(vb);
            assert_eq!(
                eq.bits(),
                (0..8).fold(0, |m, t| m | u32::from(a[t] == b[t]) << t)
            );
            assert_eq!(
                bits(va.select(va.gt(vb), vb).to_array()),
                lanes(&|x, y| if x > y { y } else { x })
            );
        }
    }

    /// The `F32x8` operations added for the ray packets (`max` is `fmax`, `floor`, `sqrt`, the
    /// truncation to `U32x8`) and every `U32x8` operation equal the scalar ones lane by lane;
    /// the gathers read the elements and words they name.
    #[test]
    fn integer_lanes_equal_scalar_operations() {
        use crate::geom::sdf::fmax;
        let mut draws = Draws(0x3c6e_f372);
        let bits = |v: [f32; 8]| v.map(f32::to_bits);
        let table: Vec<u32> = (0..1000).map(|_| draws.next()).collect();
        let bytes: Vec<i8> = (0..700).map(|_| draws.next() as i8).collect();
        for _ in 0..4000 {
            let mut pick = || draws.float(100_000, 0.021);
            let a: [f32; 8] = std::array::from_fn(|_| pick());
            let b: [f32; 8] = std::array::from_fn(|_| pick());
            let (va, vb) = (F32x8::load(&a), F32x8::load(&b));
            let lanes = |f: &dyn Fn(f32, f32) -> f32| bits(std::array::from_fn(|t| f(a[t], b[t])));
            assert_eq!(bits(va.max(vb).to_array()), lanes(&fmax), "{a:?} {b:?}");
            assert_eq!(bits(va.floor().to_array()), lanes(&|x, _| x.floor()));
            assert_eq!(bits(va.sqrt().to_array()), lanes(&|x, _| x.sqrt()));
            let small = a.map(|x| if (0.0..2.0e9).contains(&x) { x } else { 7.5 });
            assert_eq!(
                F32x8::load(&small).truncate_u32().to_array(),
                small.map(|x| x as u32)
            );
            let x: [u32; 8] = std::array::from_fn(|_| draws.next());
            let y: [u32; 8] = std::array::from_fn(|_| draws.next());
            let by: [u32; 8] = std::array::from_fn(|_| draws.next() % 40);
            let (vx, vy, vby) = (U32x8::load(&x), U32x8::load(&y), U32x8::load(&by));
            let each = |f: &dyn Fn(usize) -> u32| -> [u32; 8] { std::array::from_fn(f) };
            assert_eq!(U32x8::splat(x[3]).to_array(), [x[3]; 8]);
            assert_eq!(
                vx.shift_left(vby).to_array(),
                each(&|t| x[t].checked_shl(by[t]).unwrap_or(0))
            );
            assert_eq!(
                vx.shift_right(vby).to_array(),
                each(&|t| x[t].checked_shr(by[t]).unwrap_or(0))
            );
            let by31 = U32x8::load(&by.map(|b| b % 32));
            assert_eq!(
                vx.shift_right_signed(by31).to_array(),
                each(&|t| ((x[t] as i32) >> (by[t] % 32)) as u32)
            );
            let half = U32x8::load(&x.map(|v| v >> 1));
            let other = U32x8::load(&y.map(|v| v >> 1));
            assert_eq!(
                (half + other).to_array(),
                each(&|t| (x[t] >> 1) + (y[t] >> 1))
            );
            assert_eq!((vx & vy).to_array(), each(&|t| x[t] & y[t]));
            assert_eq!((vx | vy).to_array(), each(&|t| x[t] | y[t]));
            // Equal in about half the lanes.
            let z = U32x8::load(&std::array::from_fn(|t| {
                if by[t] % 2 == 0 {
                    x[t]
                } else {
                    y[t]
                }
            }));
            let eq = vx.eq(z);
            let want = (0..8).fold(0, |m, t| m | u32::from(by[t] % 2 == 0 || x[t] == y[t]) << t);
            assert_eq!(eq.bits(), want);
            assert_eq!(
                vx.select(eq, vy).to_array(),
                each(&|t| if (want >> t) & 1 == 1 { y[t] } else { x[t] })
            );
            let lanes_mask = Mask8::from_bools(std::array::from_fn(|t| by[t] < 20));
            assert_eq!(
                lanes_mask.or(eq).bits(),
                want | (0..8).fold(0, |m, t| m | u32::from(by[t] < 20) << t)
            );
            let ints = x.map(|v| v >> 8);
            assert_eq!(
                bits(U32x8::load(&ints).to_f32().to_array()),
                ints.map(|i| (i as i32 as f32).to_bits())
            );
            let index = x.map(|v| v % table.len() as u32);
            assert_eq!(
                U32x8::gather(&table, U32x8::load(&index)).to_array(),
                index.map(|i| table[i as usize])
            );
            let at = x.map(|v| v % (bytes.len() as u32 - 3));
            assert_eq!(
                U32x8::gather_words(&bytes, U32x8::load(&at)).to_array(),
                at.map(|o| {
                    let o = o as usize;
                    u32::from_le_bytes([0, 1, 2, 3].map(|k| bytes[o + k] as u8))
                })
            );
        }
    }

    /// A gather past the end panics instead of reading out of bounds.
    #[test]
    #[should_panic]
    fn gathers_check_their_indices() {
        let v = [1u32, 2, 3];
        U32x8::gather(&v, U32x8::load(&[0, 1, 2, 3, 0, 0, 0, 0]));
    }

    /// A word gather reaching past the end panics.
    #[test]
    #[should_panic]
    fn word_gathers_check_their_offsets() {
        let v = [0i8; 12];
        U32x8::gather_words(&v, U32x8::load(&[0, 1, 2, 9, 0, 0, 0, 0]));
    }

    /// Every operation of `F32x4` equals the scalar one lane by lane (`min` and `max` are
    /// `fmin` and `fmax`), NaN, infinities, ±0 and ties included; `from_i32` and `truncate`
    /// convert exactly where their docs say.
    #[test]
    fn four_lanes_equal_scalar_operations() {
        use crate::geom::sdf::{fmax, fmin};
        let mut draws = Draws(0x2545_f491);
        let bits = |v: [f32; 4]| v.map(f32::to_bits);
        for _ in 0..4000 {
            let mut pick = || draws.float(100_000, 0.013);
            let a: [f32; 4] = std::array::from_fn(|_| pick());
            let b: [f32; 4] = std::array::from_fn(|_| pick());
            let (va, vb) = (F32x4::load(&a), F32x4::load(&b));
            let lanes = |f: &dyn Fn(f32, f32) -> f32| bits(std::array::from_fn(|t| f(a[t], b[t])));
            assert_eq!(bits((va + vb).to_array()), lanes(&|x, y| x + y));
            assert_eq!(bits((va - vb).to_array()), lanes(&|x, y| x - y));
            assert_eq!(bits((va * vb).to_array()), lanes(&|x, y| x * y));
            assert_eq!(bits(va.min(vb).to_array()), lanes(&fmin), "{a:?} {b:?}");
            assert_eq!(bits(va.max(vb).to_array()), lanes(&fmax), "{a:?} {b:?}");
            assert_eq!(bits(va.floor().to_array()), lanes(&|x, _| x.floor()));
            assert_eq!(bits(F32x4::splat(a[1]).to_array()), [a[1].to_bits(); 4]);
            let small = a.map(|x| if x.abs() < 2.0e9 { x } else { 0.5 });
            assert_eq!(
                F32x4::load(&small).truncate(),
                small.map(|x| x as i32),
                "{small:?}"
            );
            let ints: [i32; 4] = std::array::from_fn(|_| (draws.next() as i32) >> 8);
            assert_eq!(
                bits(F32x4::from_i32(ints).to_array()),
                ints.map(|i| (i as f32).to_bits())
            );
        }
    }
}
