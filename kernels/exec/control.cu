// Control-flow kernels of the execution plan (`src/exec/plan.rs`): the reduction that turns
// per-env flags into a condition word, which an IF or WHILE graph node (or the host, on the
// emulated executor) reads.
#include "common/kernel.cuh"

struct tg_control_params {
    tg_u32 unused;
    tg_u32 pad;
};

// buf: 0 the condition word (u32). One lane: clears it.
TG_KERNEL(tg_clear_word, tg_control_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    ((tg_u32*)buf.ptr[0])[0] = 0u;
}

// buf: 0 flags (u8, one per lane), 1 the condition word (u32, cleared before). Sets the word to 1
// if any lane's flag is non-zero.
TG_KERNEL(tg_any_u8, tg_control_params) {
    tg_u32 e = tg_lane();
    if (e >= lanes) return;
    if (((const unsigned char*)buf.ptr[0])[e] != 0u) {
        tg_flag_word((tg_u32*)buf.ptr[1]);
    }
}
