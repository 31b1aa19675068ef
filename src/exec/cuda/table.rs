//! The kernel table on a device: every kernel of the embedded sources, compiled by NVRTC for the
//! device's architecture at first use (through the on-disk CUBIN cache) and loaded once.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{CudaDevice, Kernel, Module, Recorder};
use crate::exec::kernels;
use crate::{Error, Result};

/// A device with its kernels: the modules of the kernel units loaded so far, and the recorder
/// that adds conditional nodes to captures.
#[derive(Debug)]
pub struct CudaKernels {
    device: CudaDevice,
    recorder: Recorder,
    modules: Mutex<HashMap<&'static str, Module>>,
}

impl CudaKernels {
    /// The kernel table of CUDA device `ordinal` (an [`Error::CudaUnavailable`] says why there
    /// is none).
    pub fn new(ordinal: usize) -> Result<Self> {
        let device = CudaDevice::new(ordinal)?;
        let recorder = Recorder::new(&device)?;
        Ok(Self {
            device,
            recorder,
            modules: Mutex::new(HashMap::new()),
        })
    }

    /// The device.
    pub fn device(&self) -> &CudaDevice {
        &self.device
    }

    /// The recorder of conditional nodes.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The module of a kernel unit (compiled or read from the cache, and loaded, at its first
    /// use).
    fn load_unit(&self, unit: &'static kernels::Source) -> Result<Module> {
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = modules.get(unit.path) {
            return Ok(m.clone());
        }
        let cubin = self.device.unit_cubin(unit.path)?;
        let module = self.device.load_module(&cubin.image)?;
        modules.insert(unit.path, module.clone());
        Ok(module)
    }

    /// Kernel `name` (a `TG_KERNEL` of the kernel table), from its unit's module.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let unit = kernels::unit_of(name).ok_or_else(|| {
            Error::Invalid(format!(
                "kernel {name} is not declared by any kernel source"
            ))
        })?;
        self.load_unit(unit)?.kernel(name)
    }

    /// Kernel `name` of the raw CUDA unit `unit` (e.g. `exec/condition.cu`: the condition
    /// setters, which are not `TG_KERNEL`s).
    pub fn raw_kernel(&self, unit: &str, name: &str) -> Result<Kernel> {
        let source = kernels::source(unit)
            .ok_or_else(|| Error::Invalid(format!("no kernel source {unit}")))?;
        self.load_unit(source)?.kernel(name)
    }

    /// Every module loaded so far (what a graph that launches them must keep alive).
    pub fn loaded_modules(&self) -> Vec<Module> {
        let modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        modules.values().cloned().collect()
    }
}
