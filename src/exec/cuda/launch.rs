//! Modules, kernels and eager launches.
//!
//! A [`Module`] is a CUBIN loaded into the device's primary context; a [`Kernel`] is one of its
//! `extern "C"` entry points, found by name, with its parameter layout read back from the driver
//! (`cuFuncGetParamInfo`). Every launch checks its arguments against that layout — count and
//! byte size of each parameter — so a launch with the wrong argument list is an
//! [`Error::Invalid`] naming the kernel, not undefined behaviour.
//!
//! Two ways to launch:
//! - [`Kernel::launch`]: any grid, any argument list ([`Arg`]), e.g. the self-test kernels;
//! - [`Kernel::launch_lanes`]: trackgen's kernel ABI. A kernel declared
//!   `TG_KERNEL(NAME, PARAMS)` is `extern "C" __global__ void NAME(const PARAMS p, const
//!   tg_buffers buf, const tg_u32 lanes)`, with `PARAMS` a plain C struct mirrored by a
//!   `#[repr(C)]` [`Pod`] Rust struct and `struct tg_buffers { void* ptr[16]; }` holding the
//!   pass's buffers in declaration order; it runs 1-D, [`BLOCK_DIM`] threads per block,
//!   `ceil(lanes / BLOCK_DIM)` blocks, no shared memory.
//!
//! What the host cannot check is what a kernel does with its pointers: kernels are trusted code
//! from `kernels/`, each guarding its lane index and indexing within the buffers its pass
//! declares.

// Raw driver calls for modules and launches: each block states why it holds. The crate root
// denies unsafe code elsewhere.
#![allow(unsafe_code)]

use std::ffi::{c_void, CString};
use std::sync::Arc;

use bytemuck::Pod;
use cudarc::driver::{sys, CudaStream};

use super::device::{CudaDevice, Resource, Shared};
use super::driver_error;
use super::memory::DeviceBuffer;
use crate::{Error, Result};

/// Threads per block of every kernel of trackgen's ABI (`TG_BLOCK_DIM`).
pub const BLOCK_DIM: u32 = 128;

/// The buffer slots of `tg_buffers`.
pub const MAX_BUFFERS: usize = 16;

/// A loaded module; queued for unloading when its last owner goes.
#[derive(Debug)]
pub(crate) struct ModuleHandle {
    pub(crate) module: sys::CUmodule,
    pub(crate) shared: Arc<Shared>,
}

// SAFETY: a CUmodule is a driver handle usable from any thread with its context current.
unsafe impl Send for ModuleHandle {}
// SAFETY: no method mutates the handle; the driver serialises what it must.
unsafe impl Sync for ModuleHandle {}

impl Drop for ModuleHandle {
    fn drop(&mut self) {
        self.shared.release(Resource::Module(self.module));
    }
}

/// A CUBIN loaded on a device. Clones share the module; a [`Kernel`] keeps its module loaded.
#[derive(Clone, Debug)]
pub struct Module {
    pub(crate) handle: Arc<ModuleHandle>,
}

impl CudaDevice {
    /// Loads a CUBIN image (an ELF file, as NVRTC and the kernel cache produce). Anything else
    /// is an [`Error::Invalid`] (the driver would read PTX text up to a NUL byte, past the end of
    /// an image without one).
    pub fn load_module(&self, cubin: &[u8]) -> Result<Module> {
        if !cubin.starts_with(b"\x7fELF") {
            return Err(Error::Invalid(format!(
                "module image of {} bytes: expected a CUBIN (an ELF image)",
                cubin.len()
            )));
        }
        self.reclaim()?;
        self.bind()?;
        let mut module = std::ptr::null_mut();
        // SAFETY: `cubin` is a complete ELF image that lives for the call (the driver copies
        // what it keeps); `module` is a valid out pointer; the context is current.
        unsafe { sys::cuModuleLoadData(&mut module, cubin.as_ptr().cast()) }
            .result()
            .map_err(|e| driver_error("cuModuleLoadData", e))?;
        Ok(Module {
            handle: Arc::new(ModuleHandle {
                module,
                shared: self.shared.clone(),
            }),
        })
    }
}

impl Module {
    /// The kernel `name` (an `extern "C"` entry point), with its parameter layout; a name the
    /// module does not define is an [`Error::Invalid`].
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let c_name = CString::new(name)
            .map_err(|_| Error::Invalid(format!("kernel name {name:?} contains a NUL byte")))?;
        self.handle
            .shared
            .ctx
            .bind_to_thread()
            .map_err(|e| driver_error("cuCtxSetCurrent", e))?;
        let mut func = std::ptr::null_mut();
        // SAFETY: the module is loaded (this handle keeps it), the name is NUL-terminated and
        // `func` is a valid out pointer.
        let status =
            unsafe { sys::cuModuleGetFunction(&mut func, self.handle.module, c_name.as_ptr()) };
        match status {
            sys::CUresult::CUDA_SUCCESS => {}
            sys::CUresult::CUDA_ERROR_NOT_FOUND => {
                return Err(Error::Invalid(format!(
                    "kernel `{name}`: not an entry point of this module"
                )))
            }
            other => {
                return Err(driver_error(
                    "cuModuleGetFunction",
                    other.result().unwrap_err(),
                ))
            }
        }
        let mut params = Vec::new();
        loop {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: `func` is a live function; the out pointers are valid. An index past the
            // last parameter returns CUDA_ERROR_INVALID_VALUE, which ends the loop.
            let status =
                unsafe { sys::cuFuncGetParamInfo(func, params.len(), &mut offset, &mut size) };
            match status {
                sys::CUresult::CUDA_SUCCESS => params.push(size),
                sys::CUresult::CUDA_ERROR_INVALID_VALUE => break,
                other => {
                    return Err(driver_error(
                        "cuFuncGetParamInfo",
                        other.result().unwrap_err(),
                    ))
                }
            }
        }
        Ok(Kernel {
            func,
            module: self.clone(),
            name: name.to_string(),
            params,
        })
    }
}

/// One argument of a [`Kernel::launch`].
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// A 32-bit unsigned value.
    U32(u32),
    /// A 32-bit signed value.
    I32(i32),
    /// A 64-bit unsigned value (e.g. a conditional handle).
    U64(u64),
    /// A 32-bit float.
    F32(f32),
    /// A device buffer's address (a pointer parameter).
    Buffer(&'a DeviceBuffer),
}

impl Arg<'_> {
    /// The argument's bytes (8 bytes of storage, `size` of them used).
    fn bytes(&self) -> ([u8; 8], usize) {
        let mut out = [0u8; 8];
        let size = match *self {
            Arg::U32(v) => {
                out[..4].copy_from_slice(&v.to_ne_bytes());
                4
            }
            Arg::I32(v) => {
                out[..4].copy_from_slice(&v.to_ne_bytes());
                4
            }
            Arg::F32(v) => {
                out[..4].copy_from_slice(&v.to_ne_bytes());
                4
            }
            Arg::U64(v) => {
                out.copy_from_slice(&v.to_ne_bytes());
                8
            }
            Arg::Buffer(b) => {
                out.copy_from_slice(&b.address().to_ne_bytes());
                8
            }
        };
        (out, size)
    }
}

/// A kernel entry point of a loaded [`Module`] (which it keeps loaded).
#[derive(Clone, Debug)]
pub struct Kernel {
    func: sys::CUfunction,
    module: Module,
    name: String,
    params: Vec<usize>,
}

// SAFETY: a CUfunction is a driver handle usable from any thread with its context current (each
// launch binds it); the module it belongs to is kept loaded by `module`.
unsafe impl Send for Kernel {}
// SAFETY: launching does not mutate the handle.
unsafe impl Sync for Kernel {}

impl Kernel {
    /// The entry point's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The byte size of each parameter, in order, as the driver records them.
    pub fn param_sizes(&self) -> &[usize] {
        &self.params
    }

    /// The module this kernel belongs to.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Launches `grid` blocks of `block` threads on `stream` with `args`. The argument count and
    /// each argument's size must match the kernel's parameters, buffers and stream must belong
    /// to the kernel's device, and `grid` and `block` must be non-zero and `block` at most 1024;
    /// otherwise an [`Error::Invalid`] says what differs. Asynchronous: the kernel runs in
    /// stream order (or, on a capturing stream, is recorded).
    pub fn launch(
        &self,
        stream: &CudaStream,
        grid: u32,
        block: u32,
        args: &[Arg<'_>],
    ) -> Result<()> {
        if grid == 0 || block == 0 || block > 1024 {
            return Err(Error::Invalid(format!(
                "kernel `{}`: grid {grid} × block {block}: expected non-zero sizes and at most \
                 1024 threads per block",
                self.name
            )));
        }
        if args.len() != self.params.len() {
            return Err(Error::Invalid(format!(
                "kernel `{}` takes {} parameters: {} arguments given",
                self.name,
                self.params.len(),
                args.len()
            )));
        }
        let mut storage = Vec::with_capacity(args.len());
        for (i, (arg, &size)) in args.iter().zip(&self.params).enumerate() {
            if let Arg::Buffer(buffer) = arg {
                self.check_device(buffer)?;
            }
            let (bytes, arg_size) = arg.bytes();
            if arg_size != size {
                return Err(Error::Invalid(format!(
                    "kernel `{}` parameter {i} has {size} bytes: argument {arg:?} has {arg_size}",
                    self.name
                )));
            }
            storage.push(bytes);
        }
        let mut pointers: Vec<*mut c_void> = storage
            .iter_mut()
            .map(|b| b.as_mut_ptr().cast::<c_void>())
            .collect();
        self.raw_launch(stream, grid, block, &mut pointers)
    }

    /// Launches a kernel of trackgen's ABI over `lanes` lanes on `stream`: parameters
    /// `(params, tg_buffers{buffers}, lanes)`, [`BLOCK_DIM`] threads per block,
    /// `ceil(lanes / BLOCK_DIM)` blocks. `lanes == 0` launches nothing. More than
    /// [`MAX_BUFFERS`] buffers, a kernel whose parameter sizes are not
    /// `(size_of::<P>(), 8 × MAX_BUFFERS, 4)`, or a buffer or stream of another device is an
    /// [`Error::Invalid`].
    pub fn launch_lanes<P: Pod>(
        &self,
        stream: &CudaStream,
        params: &P,
        buffers: &[&DeviceBuffer],
        lanes: u32,
    ) -> Result<()> {
        let size = std::mem::size_of::<P>();
        if self.params.first() != Some(&size) {
            return Err(Error::Invalid(format!(
                "kernel `{}` has parameters of {:?} bytes: expected a {size}-byte parameter \
                 struct first",
                self.name, self.params
            )));
        }
        self.launch_params(stream, bytemuck::bytes_of(params), buffers, lanes)
    }

    /// [`launch_lanes`](Self::launch_lanes) with the parameter struct given as its bytes (what an
    /// execution plan's pass holds): `params` may carry up to 7 bytes of padding past the struct
    /// the kernel declares, never fewer bytes than it.
    pub fn launch_params(
        &self,
        stream: &CudaStream,
        params: &[u8],
        buffers: &[&DeviceBuffer],
        lanes: u32,
    ) -> Result<()> {
        let size = self.params.first().copied().unwrap_or(0);
        let expected = [size, 8 * MAX_BUFFERS, 4];
        if self.params != expected || params.len() < size || params.len() >= size + 8 {
            return Err(Error::Invalid(format!(
                "kernel `{}` has parameters of {:?} bytes: expected (params, tg_buffers of {}, \
                 lanes of 4) with {} parameter bytes given",
                self.name,
                self.params,
                8 * MAX_BUFFERS,
                params.len()
            )));
        }
        if buffers.len() > MAX_BUFFERS {
            return Err(Error::Invalid(format!(
                "kernel `{}`: {} buffers: expected at most {MAX_BUFFERS}",
                self.name,
                buffers.len()
            )));
        }
        let mut table = [0u64; MAX_BUFFERS];
        for (slot, buffer) in table.iter_mut().zip(buffers) {
            self.check_device(buffer)?;
            *slot = buffer.address();
        }
        if lanes == 0 {
            return Ok(());
        }
        // The parameter bytes in an 8-aligned copy (a struct's alignment is at most 8).
        let mut aligned = vec![0u64; size.div_ceil(8).max(1)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut aligned)[..size].copy_from_slice(&params[..size]);
        let mut lanes_copy = lanes;
        let mut pointers: [*mut c_void; 3] = [
            aligned.as_mut_ptr().cast(),
            table.as_mut_ptr().cast(),
            (&mut lanes_copy as *mut u32).cast(),
        ];
        self.raw_launch(stream, lanes.div_ceil(BLOCK_DIM), BLOCK_DIM, &mut pointers)
    }

    /// `Ok` if `buffer` lives on this kernel's device.
    fn check_device(&self, buffer: &DeviceBuffer) -> Result<()> {
        if Arc::ptr_eq(&buffer.alloc.shared, &self.module.handle.shared) {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "kernel `{}`: a buffer of another device passed as an argument",
                self.name
            )))
        }
    }

    /// `cuLaunchKernel` with argument pointers already checked against the parameter layout.
    fn raw_launch(
        &self,
        stream: &CudaStream,
        grid: u32,
        block: u32,
        pointers: &mut [*mut c_void],
    ) -> Result<()> {
        let ctx = &self.module.handle.shared.ctx;
        if stream.context().cu_ctx() != ctx.cu_ctx() {
            return Err(Error::Invalid(format!(
                "kernel `{}`: launched on a stream of another context",
                self.name
            )));
        }
        ctx.bind_to_thread()
            .map_err(|e| driver_error("cuCtxSetCurrent", e))?;
        // SAFETY: `func` belongs to a module this kernel keeps loaded; `pointers` holds one
        // pointer per kernel parameter, each to a value of exactly the parameter's size (checked
        // by the callers against cuFuncGetParamInfo) that lives until this call returns (the
        // driver copies the values at launch or capture); pointer arguments are live
        // allocations of this context, whose free is deferred past the work that uses them.
        unsafe {
            sys::cuLaunchKernel(
                self.func,
                grid,
                1,
                1,
                block,
                1,
                1,
                0,
                stream.cu_stream(),
                pointers.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .map_err(|e| driver_error(&format!("cuLaunchKernel of `{}`", self.name), e))
    }
}
