// trackgen kernel ABI: how a kernel is declared, what it receives, and how it finds its lane.
//
// Every kernel of the kernel table is declared
//
//     TG_KERNEL(NAME, PARAMS) {
//         tg_u32 e = tg_lane();
//         if (e >= lanes) return;
//         ... p.field ..., (float*)buf.ptr[0] ...
//     }
//
// and receives three values: `p`, its parameter struct (plain data, mirrored by a `#[repr(C)]`
// `bytemuck::Pod` Rust struct; no pointers in it); `buf`, the pass's buffers in the order the
// pass declares them (`tg_buffers`); and `lanes`, the number of lanes of the pass. Launches are
// one-dimensional, TG_BLOCK_DIM threads per block, ceil(lanes / TG_BLOCK_DIM) blocks, with no
// shared memory and no block-level synchronisation, so every lane is independent of every other.
//
// The same source compiles two ways:
// - as CUDA (NVRTC or nvcc): `extern "C" __global__ void NAME(const PARAMS p,
//   const tg_buffers buf, const tg_u32 lanes)`;
// - as host C++ (the emulated-CUDA executor, `src/exec/emulated.rs`: g++ -std=c++17 -O2
//   -ffp-contract=off -fno-fast-math, into a shared library): `extern "C" void NAME(const void*
//   params, const tg_buffers* buf, tg_u32 lanes, tg_u32 block_begin, tg_u32 block_end)`, which
//   runs blocks [block_begin, block_end) one thread after the other, with thread-local
//   blockIdx/threadIdx/blockDim/gridDim; the executor calls it over block ranges from several
//   host threads.
#ifndef TG_COMMON_KERNEL_CUH
#define TG_COMMON_KERNEL_CUH

#include "common/prelude.cuh"

// Threads per block of every launch.
#define TG_BLOCK_DIM 128u
// The most buffers one pass binds.
#define TG_MAX_BUFFERS 16

// A pass's buffers, in the order the pass declares them (device addresses on CUDA, host
// addresses in the emulation).
struct tg_buffers {
    void* ptr[TG_MAX_BUFFERS];
};

#if defined(__CUDACC__)

#define TG_KERNEL(NAME, PARAMS)                                                                    \
    extern "C" __global__ void NAME(const PARAMS p, const tg_buffers buf, const tg_u32 lanes)

// This thread's lane.
__device__ inline tg_u32 tg_lane() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}

// Sets a word shared by many lanes to 1 (a race-free store of the same value).
__device__ inline void tg_flag_word(tg_u32* word) {
    atomicOr(word, 1u);
}

#else // host emulation

struct tg_dim3 {
    tg_u32 x;
    tg_u32 y;
    tg_u32 z;
};

// The emulated thread's coordinates, set by TG_KERNEL's host entry before each lane.
extern thread_local tg_dim3 blockIdx;
extern thread_local tg_dim3 threadIdx;
extern thread_local tg_dim3 blockDim;
extern thread_local tg_dim3 gridDim;

// This thread's lane.
inline tg_u32 tg_lane() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}

// Sets a word shared by many lanes to 1 (blocks run on several host threads).
inline void tg_flag_word(tg_u32* word) {
    __atomic_fetch_or(word, 1u, __ATOMIC_RELAXED);
}

#define TG_KERNEL(NAME, PARAMS)                                                                    \
    static void NAME##_tg_body(const PARAMS& p, const tg_buffers& buf, const tg_u32 lanes);        \
    extern "C" void NAME(const void* params, const tg_buffers* buf, tg_u32 lanes,                  \
                         tg_u32 block_begin, tg_u32 block_end) {                                   \
        const PARAMS* typed = static_cast<const PARAMS*>(params);                                  \
        blockDim = tg_dim3{TG_BLOCK_DIM, 1u, 1u};                                                  \
        gridDim = tg_dim3{(lanes + TG_BLOCK_DIM - 1u) / TG_BLOCK_DIM, 1u, 1u};                     \
        for (tg_u32 b = block_begin; b < block_end; ++b) {                                         \
            blockIdx = tg_dim3{b, 0u, 0u};                                                         \
            for (tg_u32 t = 0u; t < TG_BLOCK_DIM; ++t) {                                           \
                threadIdx = tg_dim3{t, 0u, 0u};                                                    \
                NAME##_tg_body(*typed, *buf, lanes);                                               \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_tg_body(const PARAMS& p, const tg_buffers& buf, const tg_u32 lanes)

#endif

#endif // TG_COMMON_KERNEL_CUH
