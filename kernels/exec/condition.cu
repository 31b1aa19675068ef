// Condition setters of CUDA graph conditional nodes (IF / WHILE), captured by the CUDA executor
// next to the nodes it adds (src/exec/cuda/graph.rs). Condition words are u32 device words that
// a reduction pass writes; one thread of one block sets the node's condition from them.
//
// cudaGraphSetConditional is declared here rather than included (NVRTC has no runtime headers);
// the driver resolves it when the module loads, no device runtime library is linked. CUDA only:
// the file declares no TG_KERNEL, so the emulated executor (which evaluates conditions on the
// host) does not compile it.
#include "common/prelude.cuh"

extern "C" __device__ void cudaGraphSetConditional(tg_u64 handle, unsigned int value);

// Before an IF node (or a WHILE node's first window): the condition is *cond != 0.
extern "C" __global__ void tg_set_condition(tg_u64 handle, const tg_u32* cond) {
    if (blockIdx.x == 0u && threadIdx.x == 0u) {
        cudaGraphSetConditional(handle, *cond != 0u ? 1u : 0u);
    }
}

// Last kernel of a WHILE body: counts the window in *windows (reset to 0 before the node) and
// continues while *cond != 0 and fewer than max_windows windows ran.
extern "C" __global__ void tg_end_window(tg_u64 handle, const tg_u32* cond, tg_u32* windows,
                                         tg_u32 max_windows) {
    if (blockIdx.x == 0u && threadIdx.x == 0u) {
        tg_u32 ran = *windows + 1u;
        *windows = ran;
        cudaGraphSetConditional(handle, (*cond != 0u && ran < max_windows) ? 1u : 0u);
    }
}
