//! Device memory: byte buffers, and batches declared by `soa_batch!` moved whole to and from the
//! device through their byte views ([`Layout::for_each_field`]).
//!
//! A [`DeviceBuffer`] is a shared handle to one allocation: cloning it (or pinning it to a graph)
//! adds an owner, and the memory goes back to the device's free queue when the last owner goes
//! (see the [module doc](super) on lifetimes). Transfers are whole-buffer and checked: a length
//! that differs is an [`Error::Invalid`] naming both.

// Raw driver calls for allocation and copies: each block states why it holds. The crate root
// denies unsafe code elsewhere.
#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::sync::{Arc, Weak};

use cudarc::driver::{sys, CudaStream};

use super::device::{CudaDevice, Resource, Shared};
use super::driver_error;
use crate::exec::layout::{Field, Layout};
use crate::{Error, Result};

/// One device allocation; queued for freeing when dropped.
#[derive(Debug)]
pub(crate) struct Allocation {
    pub(crate) ptr: sys::CUdeviceptr,
    pub(crate) bytes: usize,
    pub(crate) shared: Arc<Shared>,
}

impl Drop for Allocation {
    fn drop(&mut self) {
        // A zero-byte buffer owns no memory (address 0).
        if self.ptr != 0 {
            self.shared.release(Resource::Memory(self.ptr));
        }
    }
}

/// A buffer of bytes on one device. Clones share the allocation.
#[derive(Clone, Debug)]
pub struct DeviceBuffer {
    pub(crate) alloc: Arc<Allocation>,
}

impl DeviceBuffer {
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.alloc.bytes
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.alloc.bytes == 0
    }

    /// The device address (what a kernel parameter holds), for recording it in a capture key.
    pub fn address(&self) -> u64 {
        self.alloc.ptr
    }

    /// A handle that tells whether every owner of this buffer's memory — its Rust values and the
    /// graphs it is pinned to — is gone, without being one.
    pub fn watch(&self) -> BufferWatch {
        BufferWatch(Arc::downgrade(&self.alloc))
    }
}

/// Whether a buffer's memory has been released by all its owners (see [`DeviceBuffer::watch`]).
#[derive(Clone, Debug)]
pub struct BufferWatch(Weak<Allocation>);

impl BufferWatch {
    /// `true` once no Rust value and no graph owns the memory any more (it is then queued for
    /// freeing, or freed).
    pub fn released(&self) -> bool {
        self.0.strong_count() == 0
    }
}

impl CudaDevice {
    /// A buffer of `bytes` uninitialised bytes (an [`Error::CudaUnavailable`] from the driver,
    /// e.g. out of memory, names the size). Frees queued resources first.
    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer> {
        self.reclaim()?;
        let ptr = if bytes == 0 {
            0
        } else {
            self.bind()?;
            let mut ptr = 0;
            // SAFETY: writes one device address through a valid pointer; the context is current.
            unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) }
                .result()
                .map_err(|e| driver_error(&format!("cuMemAlloc of {bytes} bytes"), e))?;
            ptr
        };
        Ok(DeviceBuffer {
            alloc: Arc::new(Allocation {
                ptr,
                bytes,
                shared: self.shared.clone(),
            }),
        })
    }

    /// A buffer of `bytes` zero bytes (the zeroing is ordered on the library stream).
    pub fn alloc_zeroed(&self, bytes: usize) -> Result<DeviceBuffer> {
        let buffer = self.alloc(bytes)?;
        self.zero(&buffer)?;
        Ok(buffer)
    }

    /// A buffer holding a copy of `bytes`.
    pub fn alloc_from(&self, bytes: &[u8]) -> Result<DeviceBuffer> {
        let buffer = self.alloc(bytes.len())?;
        self.upload(&buffer, bytes)?;
        Ok(buffer)
    }

    /// Sets every byte of `buffer` to zero, in order on the library stream.
    pub fn zero(&self, buffer: &DeviceBuffer) -> Result<()> {
        self.zero_on(self.stream(), buffer)
    }

    /// Sets every byte of `buffer` to zero, in order on `stream` (on a capturing stream: a
    /// memset node, e.g. to reset a window counter at every launch of a graph). A stream of
    /// another context is an [`Error::Invalid`].
    pub fn zero_on(&self, stream: &CudaStream, buffer: &DeviceBuffer) -> Result<()> {
        self.check_owner(buffer)?;
        if stream.context().cu_ctx() != self.context().cu_ctx() {
            return Err(Error::Invalid(format!(
                "zeroing a buffer on a stream of another context than CUDA device {}",
                self.ordinal()
            )));
        }
        if buffer.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: the range lies inside a live allocation of this context (`buffer` owns it for
        // the call; the free queue keeps it until work in flight is done); the stream is live.
        unsafe { sys::cuMemsetD8Async(buffer.alloc.ptr, 0, buffer.len(), stream.cu_stream()) }
            .result()
            .map_err(|e| driver_error("cuMemsetD8Async", e))
    }

    /// Copies `src` into `dst` (whose length must equal it) and waits for the copy, after the
    /// work already on the library stream.
    pub fn upload(&self, dst: &DeviceBuffer, src: &[u8]) -> Result<()> {
        self.check_owner(dst)?;
        check_len("upload", dst.len(), src.len())?;
        self.reclaim()?;
        if src.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `src` is readable for its whole length until the stream is synchronised below,
        // and the destination range lies inside `dst`'s live allocation.
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                dst.alloc.ptr,
                src.as_ptr().cast(),
                src.len(),
                self.stream().cu_stream(),
            )
        }
        .result()
        .map_err(|e| driver_error("cuMemcpyHtoDAsync", e))?;
        self.stream()
            .synchronize()
            .map_err(|e| driver_error("cuStreamSynchronize", e))
    }

    /// Copies `src` into `dst` (whose length must equal it) once the work already on the
    /// library stream is done.
    pub fn download(&self, src: &DeviceBuffer, dst: &mut [u8]) -> Result<()> {
        self.check_owner(src)?;
        check_len("download", src.len(), dst.len())?;
        self.reclaim()?;
        if dst.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `dst` is writable for its whole length and not otherwise accessed until the
        // stream is synchronised below; the source range lies inside `src`'s live allocation.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                dst.as_mut_ptr().cast(),
                src.alloc.ptr,
                dst.len(),
                self.stream().cu_stream(),
            )
        }
        .result()
        .map_err(|e| driver_error("cuMemcpyDtoHAsync", e))?;
        self.stream()
            .synchronize()
            .map_err(|e| driver_error("cuStreamSynchronize", e))
    }

    /// `Ok` if `buffer` was allocated on this device.
    fn check_owner(&self, buffer: &DeviceBuffer) -> Result<()> {
        if Arc::ptr_eq(&buffer.alloc.shared, &self.shared) {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "a device buffer of another device used on CUDA device {}",
                self.ordinal()
            )))
        }
    }

    /// Every buffer of `batch` on the device, in [`Layout::FIELDS`] order.
    pub fn upload_batch<L: Layout>(&self, batch: &L) -> Result<DeviceBatch<L>> {
        let mut buffers = Vec::with_capacity(L::FIELDS.len());
        let mut status = Ok(());
        batch.for_each_field(|_, bytes| {
            if status.is_ok() {
                match self.alloc_from(bytes) {
                    Ok(buffer) => buffers.push(buffer),
                    Err(e) => status = Err(e),
                }
            }
        });
        status?;
        Ok(DeviceBatch {
            buffers,
            marker: PhantomData,
        })
    }

    /// Copies every buffer of `batch` into `dst` (same shapes, else an [`Error::Invalid`]
    /// naming the buffer).
    pub fn upload_batch_into<L: Layout>(&self, batch: &L, dst: &DeviceBatch<L>) -> Result<()> {
        let mut status = Ok(());
        let mut buffers = dst.buffers.iter();
        batch.for_each_field(|field, bytes| {
            let buffer = buffers.next().expect("one device buffer per field");
            if status.is_ok() {
                status = self
                    .upload(buffer, bytes)
                    .map_err(|e| field_error(field, e));
            }
        });
        status
    }

    /// Copies every buffer of `src` into `batch` (same shapes, else an [`Error::Invalid`]
    /// naming the buffer).
    pub fn download_batch<L: Layout>(&self, src: &DeviceBatch<L>, batch: &mut L) -> Result<()> {
        let mut status = Ok(());
        let mut buffers = src.buffers.iter();
        batch.for_each_field_mut(|field, bytes| {
            let buffer = buffers.next().expect("one device buffer per field");
            if status.is_ok() {
                status = self
                    .download(buffer, bytes)
                    .map_err(|e| field_error(field, e));
            }
        });
        status
    }
}

/// `Ok` if a transfer's two lengths agree.
fn check_len(what: &str, device: usize, host: usize) -> Result<()> {
    if device == host {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{what}: the device buffer holds {device} bytes, the host slice {host}: expected equal \
             lengths"
        )))
    }
}

/// `err` with the buffer's name in front.
fn field_error(field: &Field, err: Error) -> Error {
    match err {
        Error::Invalid(m) => Error::Invalid(format!("buffer `{}`: {m}", field.name)),
        other => other,
    }
}

/// A batch of layout `L` on the device: one [`DeviceBuffer`] per field, in [`Layout::FIELDS`]
/// order (header values such as the env count stay on the host, in the batch).
#[derive(Debug)]
pub struct DeviceBatch<L> {
    buffers: Vec<DeviceBuffer>,
    marker: PhantomData<fn() -> L>,
}

impl<L> Clone for DeviceBatch<L> {
    fn clone(&self) -> Self {
        Self {
            buffers: self.buffers.clone(),
            marker: PhantomData,
        }
    }
}

impl<L: Layout> DeviceBatch<L> {
    /// The buffers, in [`Layout::FIELDS`] order.
    pub fn buffers(&self) -> &[DeviceBuffer] {
        &self.buffers
    }

    /// The buffer of field `name`, or an [`Error::Invalid`] listing the fields.
    pub fn buffer(&self, name: &str) -> Result<&DeviceBuffer> {
        L::FIELDS
            .iter()
            .position(|f| f.name == name)
            .map(|i| &self.buffers[i])
            .ok_or_else(|| {
                let names: Vec<&str> = L::FIELDS.iter().map(|f| f.name).collect();
                Error::Invalid(format!(
                    "no buffer `{name}` in this batch: expected one of {}",
                    names.join(", ")
                ))
            })
    }
}
