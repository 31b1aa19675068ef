// Self-test kernels: evaluate the math and RNG twins per lane into output buffers, for the
// device-parity tests (the device must produce the bytes the Rust CPU implementation produces).
// One thread per lane; lanes at or past `n` do nothing.
#include "common/selftest.cuh"

// out[i] = tg_selftest_math(op, a[i], b[i]) for i < n (b is read only by atan2, and may then be
// the same buffer as a for one-argument ops).
extern "C" __global__ void tg_selftest_math_kernel(tg_u32 op, const float* a, const float* b,
                                                   float* out, tg_u32 n) {
    tg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = tg_selftest_math(op, a[i], b[i]);
    }
}

// out[4i .. 4i+4] = the Xoshiro128++ state of lane i's stream words words[6i .. 6i+6].
extern "C" __global__ void tg_selftest_stream_state_kernel(const tg_u32* words, tg_u32* out,
                                                           tg_u32 n) {
    tg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        tg_rng rng = tg_selftest_stream(words + TG_SELFTEST_WORDS * i);
        for (tg_u32 j = 0u; j < 4u; ++j) {
            out[4u * i + j] = rng.s[j];
        }
    }
}

// Lane i draws `rounds` rounds (see tg_selftest_draws) with parameters params[9i .. 9i+9] into
// out[5·rounds·i ..].
extern "C" __global__ void tg_selftest_draws_kernel(const tg_u32* params, tg_u32 rounds,
                                                    tg_u32* out, tg_u32 n) {
    tg_u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        tg_selftest_draws(params + TG_SELFTEST_DRAW_PARAMS * i, rounds,
                          out + (tg_u64)TG_SELFTEST_DRAWS_PER_ROUND * rounds * i);
    }
}
