// trackgen kernel prelude: fixed-width integer types, the host+device marker and bit casts.
//
// Every header under kernels/common compiles three ways: as host C++ (g++/clang, C++17, used by
// the test suite's twin checks), as CUDA device code with NVRTC (no system headers available),
// and with nvcc. This header hides the differences; everything it defines is prefixed `tg_`/`TG_`.
#ifndef TG_COMMON_PRELUDE_CUH
#define TG_COMMON_PRELUDE_CUH

#if defined(__CUDACC__)
#define TG_HD __host__ __device__
#else
#define TG_HD
#endif

// NVRTC has no system headers, so the integer types are spelled out; the asserts pin their widths
// (LP64 and LLP64 hosts and the CUDA device all agree on these).
typedef unsigned int tg_u32;
typedef int tg_i32;
typedef unsigned long long tg_u64;
typedef long long tg_i64;
static_assert(sizeof(tg_u32) == 4, "tg_u32 must be 32 bits");
static_assert(sizeof(tg_i32) == 4, "tg_i32 must be 32 bits");
static_assert(sizeof(tg_u64) == 8, "tg_u64 must be 64 bits");
static_assert(sizeof(tg_i64) == 8, "tg_i64 must be 64 bits");
static_assert(sizeof(float) == 4, "float must be IEEE binary32");

#if !defined(__CUDACC_RTC__)
#include <string.h>
#endif

// The bit pattern of an f32 (Rust `f32::to_bits`).
TG_HD inline tg_u32 tg_f32_to_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    tg_u32 bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
#endif
}

// The f32 with a bit pattern (Rust `f32::from_bits`).
TG_HD inline float tg_f32_from_bits(tg_u32 bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
#endif
}

#endif // TG_COMMON_PRELUDE_CUH
