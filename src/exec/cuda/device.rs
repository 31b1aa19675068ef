//! Availability, the device on its primary context, and the deferred-free queue.
//!
//! [`probe`] answers "can CUDA run here?" without letting cudarc panic: the driver library is
//! looked for first (`is_culib_present`), then asked its version (`cuDriverGetVersion`, which
//! needs no initialisation), then initialised and asked for devices. Each failure is an
//! [`Error::CudaUnavailable`] saying which step failed.
//!
//! A [`CudaDevice`] uses the device's primary context — the one the runtime API, and so
//! PyTorch, uses — so that trackgen's buffers and graphs live in the same context as the
//! caller's. trackgen retains it once per process and device and never releases or destroys it
//! (it did not create it; the driver owns it).

// Raw driver calls (through cudarc's bindings) for the probe and the queue: each block states
// why it holds. The crate root denies unsafe code elsewhere.
#![allow(unsafe_code)]

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{result as cu, sys, CudaContext, CudaStream};

use super::cache::KernelCache;
use super::driver_error;
use super::nvrtc::Nvrtc;
use crate::{Error, Result};

/// The oldest driver trackgen runs on: CUDA 12.4 (conditional nodes and
/// `cuStreamBeginCaptureToGraph` came in 12.3, `cuFuncGetParamInfo` in 12.4).
pub const MIN_DRIVER_VERSION: i32 = 12040;

/// What [`probe`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverInfo {
    /// The CUDA version the driver supports, as `1000 × major + 10 × minor` (13000 for 13.0).
    pub version: i32,
    /// The number of CUDA devices.
    pub devices: usize,
}

/// Whether the CUDA driver is usable here: its library loads, it supports CUDA 12.3 or newer,
/// it initialises, and it sees at least one device. Never panics; every failure is an
/// [`Error::CudaUnavailable`] naming the step.
pub fn probe() -> Result<DriverInfo> {
    // SAFETY: `is_culib_present` only tries to dlopen cudarc's candidate names of libcuda.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::CudaUnavailable(
            "no CUDA driver: the dynamic loader finds no libcuda.so (no NVIDIA driver installed)"
                .to_string(),
        ));
    }
    let mut version = 0;
    // SAFETY: the library is present (checked above), so cudarc resolves the symbol instead of
    // panicking; cuDriverGetVersion writes one int and needs no cuInit.
    let status = unsafe { sys::cuDriverGetVersion(&mut version) };
    status
        .result()
        .map_err(|e| driver_error("cuDriverGetVersion", e))?;
    if version < MIN_DRIVER_VERSION {
        return Err(Error::CudaUnavailable(format!(
            "the driver supports CUDA {}.{}: expected 12.4 or newer (conditional graph nodes, kernel parameter info)",
            version / 1000,
            version % 1000 / 10
        )));
    }
    cu::init().map_err(|e| driver_error("cuInit", e))?;
    let devices = cu::device::get_count().map_err(|e| driver_error("cuDeviceGetCount", e))?;
    if devices <= 0 {
        return Err(Error::CudaUnavailable(
            "the CUDA driver sees no device".to_string(),
        ));
    }
    Ok(DriverInfo {
        version,
        devices: devices as usize,
    })
}

/// A resource waiting to be freed.
#[derive(Debug)]
pub(crate) enum Resource {
    /// Device memory from `cuMemAlloc`.
    Memory(sys::CUdeviceptr),
    /// A module from `cuModuleLoadData`.
    Module(sys::CUmodule),
}

// SAFETY: the handles are plain addresses; freeing them is valid from any thread with the
// context current, which `Shared::reclaim` makes so.
unsafe impl Send for Resource {}

/// The per-device state shared process-wide: the primary context and the free queue.
///
/// One per device for the life of the process (see [`shared`]), so that dropping the last
/// buffer or graph never drops the context: a user-object destructor, which may hold the last
/// reference to a buffer, must make no CUDA call.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) ctx: Arc<CudaContext>,
    queue: Mutex<Vec<Resource>>,
}

impl Shared {
    /// Queues `resource` to be freed by the next [`reclaim`](Self::reclaim). Makes no CUDA call.
    pub(crate) fn release(&self, resource: Resource) {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(resource);
    }

    /// Resources queued and not yet freed.
    pub(crate) fn pending(&self) -> usize {
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Frees every queued resource; returns how many. The calling thread's capture mode is
    /// relaxed for the frees, so that a capture open on another stream (in global mode, as
    /// PyTorch's) is not invalidated. Callers never call this while recording.
    pub(crate) fn reclaim(&self) -> Result<usize> {
        let queued = std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()));
        if queued.is_empty() {
            return Ok(0);
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_error("cuCtxSetCurrent", e))?;
        let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        // SAFETY: exchanges the thread's capture mode through a valid pointer; restored below.
        unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) }
            .result()
            .map_err(|e| driver_error("cuThreadExchangeStreamCaptureMode", e))?;
        let mut first_error = None;
        let count = queued.len();
        for resource in queued {
            let status = match resource {
                // SAFETY: the pointer came from cuMemAlloc in this context and its last owner is
                // gone (that is how it got onto the queue), so nothing frees it twice; work
                // still in flight that uses it is waited for by cuMemFree's implicit sync.
                Resource::Memory(ptr) => unsafe { sys::cuMemFree_v2(ptr) },
                // SAFETY: as above, for a module from cuModuleLoadData.
                Resource::Module(module) => unsafe { sys::cuModuleUnload(module) },
            };
            if let Err(e) = status.result() {
                first_error.get_or_insert(driver_error("freeing a device resource", e));
            }
        }
        // SAFETY: restores the mode saved above.
        let restore = unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) };
        if let Some(e) = first_error {
            return Err(e);
        }
        restore
            .result()
            .map_err(|e| driver_error("cuThreadExchangeStreamCaptureMode", e))?;
        Ok(count)
    }
}

/// The process-wide state of device `ordinal`, created at first use (retaining the primary
/// context).
fn shared(ordinal: usize) -> Result<Arc<Shared>> {
    static DEVICES: OnceLock<Mutex<Vec<Option<Arc<Shared>>>>> = OnceLock::new();
    let mut devices = DEVICES
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if devices.len() <= ordinal {
        devices.resize(ordinal + 1, None);
    }
    if let Some(shared) = &devices[ordinal] {
        return Ok(shared.clone());
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| driver_error("cuDevicePrimaryCtxRetain", e))?;
    // SAFETY: event tracking serves cudarc's own `CudaSlice`, which trackgen does not use; left
    // on, creating a stream when none exists synchronises the whole context, which would fail
    // (and invalidate it) while a capture is open on any stream.
    unsafe { ctx.disable_event_tracking() };
    let shared = Arc::new(Shared {
        ctx,
        queue: Mutex::new(Vec::new()),
    });
    devices[ordinal] = Some(shared.clone());
    Ok(shared)
}

/// One CUDA device on its primary context, with a library-owned stream for eager work and the
/// kernel compile cache.
#[derive(Debug)]
pub struct CudaDevice {
    pub(crate) shared: Arc<Shared>,
    stream: Arc<CudaStream>,
    ordinal: usize,
    arch: String,
    cache: KernelCache,
}

impl CudaDevice {
    /// Device `ordinal`: [`probe`]s first (an [`Error::CudaUnavailable`] says why CUDA cannot
    /// run), then an ordinal past the last device is an [`Error::Invalid`] naming the count.
    /// Kernels are cached in [`KernelCache::default_location`].
    pub fn new(ordinal: usize) -> Result<Self> {
        let info = probe()?;
        if ordinal >= info.devices {
            return Err(Error::Invalid(format!(
                "CUDA device {ordinal}: expected an ordinal below {} (the devices the driver sees)",
                info.devices
            )));
        }
        let shared = shared(ordinal)?;
        let (major, minor) = shared
            .ctx
            .compute_capability()
            .map_err(|e| driver_error("cuDeviceGetAttribute", e))?;
        let stream = shared
            .ctx
            .new_stream()
            .map_err(|e| driver_error("cuStreamCreate", e))?;
        Ok(Self {
            shared,
            stream,
            ordinal,
            arch: format!("sm_{major}{minor}"),
            cache: KernelCache::default_location()?,
        })
    }

    /// The same device with kernels cached in `cache` instead.
    pub fn with_cache(mut self, cache: KernelCache) -> Self {
        self.cache = cache;
        self
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The architecture kernels are compiled for, e.g. `sm_90`.
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(&self) -> Result<String> {
        self.shared
            .ctx
            .name()
            .map_err(|e| driver_error("cuDeviceGetName", e))
    }

    /// The primary context (for wrapping a foreign stream with
    /// `CudaContext::wrap_borrowed_stream`, or creating streams of one's own).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.shared.ctx
    }

    /// The library-owned stream eager transfers and launches go to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The kernel compile cache.
    pub fn cache(&self) -> &KernelCache {
        &self.cache
    }

    /// The CUBIN of `source` for this device's architecture, from the cache or compiled (NVRTC
    /// missing is an [`Error::CudaUnavailable`]).
    pub fn cubin(&self, source: &super::cache::Source<'_>) -> Result<super::cache::Cubin> {
        self.cache
            .load_or_compile(&Nvrtc::load()?, source, &self.arch)
    }

    /// Makes the primary context current on the calling thread (before a raw driver call).
    pub(crate) fn bind(&self) -> Result<()> {
        self.shared
            .ctx
            .bind_to_thread()
            .map_err(|e| driver_error("cuCtxSetCurrent", e))
    }

    /// The CUBIN of kernel unit `path` of the kernel table for this device's architecture (see
    /// [`KernelCache::load_or_compile_unit`]).
    pub fn unit_cubin(&self, path: &str) -> Result<super::cache::Cubin> {
        self.cache
            .load_or_compile_unit(&Nvrtc::load()?, path, &self.arch)
    }

    /// Waits for the library stream's work, then frees what is queued.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| driver_error("cuStreamSynchronize", e))?;
        self.reclaim().map(|_| ())
    }

    /// Frees every buffer and module whose last owner (a Rust value or a graph) is gone; returns
    /// how many. Allocation, transfers, [`synchronize`](Self::synchronize) and graph launches
    /// call it; it is public so that a caller can release memory at a point of its choosing.
    pub fn reclaim(&self) -> Result<usize> {
        self.shared.reclaim()
    }

    /// Buffers and modules released by their owners and not yet freed.
    pub fn pending_frees(&self) -> usize {
        self.shared.pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_every_entry_point_says_why() {
        // SAFETY: as in `probe`.
        if unsafe { sys::is_culib_present() } {
            crate::exec::cuda::skip(
                "without_a_driver_every_entry_point_says_why",
                "a CUDA driver library is present on this machine",
                "TRACKGEN_REQUIRE_NO_CUDA",
            );
            return;
        }
        for err in [probe().unwrap_err(), CudaDevice::new(0).unwrap_err()] {
            match err {
                Error::CudaUnavailable(reason) => {
                    assert!(reason.contains("libcuda"), "{reason}")
                }
                other => panic!("expected CudaUnavailable, got {other}"),
            }
        }
    }
}
