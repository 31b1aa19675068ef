//! The CUDA layer a CUDA executor stands on: availability, NVRTC, the compile cache, device
//! buffers, eager kernel launches, and the graph primitives that join a capture.
//!
//! Built on `cudarc` (driver API and NVRTC, both opened at run time), so the crate builds and
//! runs on machines without CUDA: there every entry point returns [`Error::CudaUnavailable`]
//! with the reason, found by probing before cudarc is called (cudarc panics when a library is
//! missing). The layers, lowest first, in the shape of cudarc's own `sys → result → safe`:
//!
//! - [`device`]: [`probe`] (driver present, new enough, a GPU), [`CudaDevice`] on the device's
//!   **primary context** (the one PyTorch uses; retained, never destroyed) with a
//!   library-owned stream; the deferred-free queue every resource goes through;
//! - [`nvrtc`] and [`cache`]: kernel sources to CUBIN with the IEEE options, cached on disk by
//!   (source and headers hash, arch, NVRTC version, options);
//! - [`memory`]: [`DeviceBuffer`] (alloc, upload, download, zero) and [`DeviceBatch`], a batch
//!   declared by `soa_batch!` on the device, buffer by buffer through its byte views;
//! - [`launch`]: [`Module`] (a CUBIN loaded) and [`Kernel`] (an entry point with its parameter
//!   layout read back from the driver), launched with arguments checked against that layout:
//!   raw argument lists, or trackgen's kernel ABI ([`Kernel::launch_lanes`]);
//! - [`graph`]: captures trackgen begins, and joining any capture already open on a stream —
//!   IF and WHILE conditional nodes added to the capturing graph without ending it, bodies
//!   captured on a library-owned side stream, and user objects that keep buffers and modules
//!   alive for as long as a graph may run.
//!
//! **Resource lifetimes.** A buffer or module is freed when its last owner goes: its Rust value,
//! or a graph that pinned it (see [`graph::Recorder::pin`]). Neither path makes a CUDA call: the
//! resource goes onto its device's queue, which the next allocation, transfer, synchronisation or
//! graph launch frees (with the thread's capture mode relaxed, so that a capture open elsewhere
//! is not invalidated). This is what lets a CUDA user-object destructor — which must not call
//! CUDA — release memory.
//!
//! **No global capture state.** Every recording call works on the stream it is given and a
//! side stream of its own [`graph::Recorder`]; two recorders capture on two streams at once.
//! The per-device state shared process-wide is the primary context and the free queue.
//!
//! Every `unsafe` block of the crate's CUDA code lives in this module's files, each with a
//! `// SAFETY:` comment.

pub mod cache;
pub mod device;
pub mod graph;
pub mod launch;
pub mod memory;
pub mod nvrtc;
pub mod table;

pub use device::{probe, CudaDevice, DriverInfo};
pub use graph::{CaptureMode, Condition, ConditionalKind, Graph, GraphExec, Recorder};
pub use launch::{Arg, Kernel, Module, BLOCK_DIM, MAX_BUFFERS};
pub use memory::{BufferWatch, DeviceBatch, DeviceBuffer};
pub use table::CudaKernels;

/// cudarc's stream type: the library's own streams, and foreign ones wrapped with
/// `CudaContext::wrap_borrowed_stream`.
pub use cudarc::driver::CudaStream;

use crate::Error;

/// An [`Error::CudaUnavailable`] for a failed driver call: its name and the driver's message.
pub(crate) fn driver_error(call: &str, err: cudarc::driver::DriverError) -> Error {
    let name = err
        .error_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", err.0));
    let text = err
        .error_string()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Error::CudaUnavailable(format!("{call} failed: {name} ({text})"))
}

/// Reports that a unit test skips for `reason`, unless `require` is `1` (then it fails). Writes to
/// the process's stderr, past the test harness's capture (see `tests/suite/skip.rs`).
#[cfg(test)]
pub(crate) fn skip(test: &str, reason: &str, require: &str) {
    use std::io::Write;
    if std::env::var(require).as_deref() == Ok("1") {
        panic!("{require}=1 but {test} would skip: {reason}");
    }
    let reason = reason.replace('\n', " ");
    let _ = writeln!(std::io::stderr().lock(), "SKIP: {test}: {reason}");
}
