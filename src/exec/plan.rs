//! The execution plan: a pipeline described once, run by every backend.
//!
//! A plan is a list of [`Op`]s over the buffers of a state `S`:
//!
//! - a kernel [`Pass`]: the kernel's name (its CUDA entry symbol), the bytes of its `#[repr(C)]`
//!   parameter struct, the buffers it binds (in binding order, with their access), its lane count
//!   and its CPU lane function;
//! - [`Op::Any`]: the reduction that writes a condition word — 1 if any per-env flag is set;
//! - [`Op::If`]: run a body if a condition word is non-zero (a CUDA IF graph node);
//! - [`Op::While`]: run a body while a condition word is non-zero, at most `max_windows` times
//!   (a CUDA WHILE node; the body's last op recomputes the word, the window cap is a counter).
//!
//! Condition words and flags live in the state's buffers (device words on CUDA), so nothing of a
//! plan branches on per-env data in host code, and bodies are infallible: everything is checked
//! before a plan runs. The [`Backend`] decides how passes run: on the CPU (the lane functions on
//! rayon), or as kernels of the emulated-CUDA library ([`super::emulated`]) on host memory.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::emulated::{EmulatedKernels, MAX_BUFFERS};
use super::Launch;
use crate::{Error, Result};

/// A buffer of a plan's state, by index (the state maps it to its storage).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BufId(pub u32);

/// How a pass uses a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Read,
    /// Written (and maybe read).
    Write,
}

/// The state a plan runs over: its buffers as bytes, by id.
pub trait BufferSet {
    /// The bytes of buffer `id` (panics on an id the state does not have: plans are built
    /// against their state).
    fn bytes_mut(&mut self, id: BufId) -> &mut [u8];
}

/// A CPU lane function: runs a pass's lanes over the state on the context's pool.
pub type CpuPass<S> = Arc<dyn Fn(&mut S, &Launch) + Send + Sync>;

/// One kernel pass.
pub struct Pass<S> {
    /// The kernel (its CUDA entry symbol); `None` for a pass that has only a CPU lane function
    /// (a user plug-in without a kernel source), which is an error on a kernel backend.
    pub kernel: Option<&'static str>,
    /// A name for errors when there is no kernel (e.g. the plug-in stage's name).
    pub name: String,
    /// The bytes of the kernel's parameter struct.
    pub params: Vec<u8>,
    /// The bound buffers, in binding order.
    pub buffers: Vec<(BufId, Access)>,
    /// Lanes.
    pub lanes: u32,
    /// The CPU lane function.
    pub cpu: CpuPass<S>,
}

/// One step of a plan.
pub enum Op<S> {
    /// A kernel pass.
    Pass(Pass<S>),
    /// `cond = any(flags != 0)` (`flags` are `u8`, `cond` one `u32` word).
    Any {
        /// The per-env flags.
        flags: BufId,
        /// The condition word written.
        cond: BufId,
    },
    /// Runs `body` if the word `cond` is non-zero.
    If {
        /// The condition word.
        cond: BufId,
        /// The body.
        body: Vec<Op<S>>,
    },
    /// Runs `body` while the word `cond` is non-zero, at most `max_windows` times; the body
    /// recomputes `cond` (its last op is an [`Op::Any`]).
    While {
        /// The condition word.
        cond: BufId,
        /// The window cap.
        max_windows: u32,
        /// The body (one window).
        body: Vec<Op<S>>,
    },
}

/// The bytes of a parameter struct, padded with zeros to a multiple of 8 (the alignment of the
/// widest field a parameter struct may have).
pub fn params_bytes<P: bytemuck::Pod>(p: &P) -> Vec<u8> {
    let mut v = bytemuck::bytes_of(p).to_vec();
    v.resize(v.len().div_ceil(8) * 8, 0);
    v
}

/// Where a plan's passes run.
#[derive(Clone, Debug)]
pub enum Backend {
    /// The CPU lane functions on a rayon pool.
    Cpu(Launch),
    /// The emulated-CUDA kernels on host memory (blocks on the context's pool).
    Emulated {
        /// The compiled kernel library.
        kernels: Arc<EmulatedKernels>,
        /// The pool blocks run on (and CPU passes, with `cpu_fallback`).
        launch: Launch,
        /// Run a pass whose kernel is not in the library on the CPU instead of failing (for
        /// testing kernels one at a time against the CPU).
        cpu_fallback: bool,
    },
}

impl Default for Backend {
    fn default() -> Self {
        Backend::Cpu(Launch::new())
    }
}

impl Backend {
    /// The CPU context passes and blocks run on.
    pub fn launch(&self) -> &Launch {
        match self {
            Backend::Cpu(l) => l,
            Backend::Emulated { launch, .. } => launch,
        }
    }
}

/// What a run did: kernels launched (by name, with counts), CPU passes, and windows per loop.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Kernel launches by kernel name (the emulated backend; control kernels included).
    pub kernels: BTreeMap<&'static str, u32>,
    /// Passes run by their CPU lane function, by kernel name (or pass name without a kernel).
    pub cpu_passes: BTreeMap<String, u32>,
    /// Windows run by each `While`, in the order the loops ran.
    pub windows: Vec<u32>,
}

impl Trace {
    /// The number of passes run, by kernel or on the CPU (control kernels not counted).
    pub fn passes(&self) -> u32 {
        let kernels: u32 = self
            .kernels
            .iter()
            .filter(|(k, _)| !CONTROL_KERNELS.contains(k))
            .map(|(_, n)| n)
            .sum();
        kernels + self.cpu_passes.values().sum::<u32>()
    }
}

/// The control-flow kernels (`kernels/exec/control.cu`).
const CONTROL_KERNELS: [&str; 2] = ["tg_clear_word", "tg_any_u8"];

/// Runs `ops` over `state` on `backend`.
pub fn run<S: BufferSet + Send>(ops: &[Op<S>], backend: &Backend, state: &mut S) -> Result<Trace> {
    check(ops, backend)?;
    let mut trace = Trace::default();
    backend
        .launch()
        .install(|| run_ops(ops, backend, state, &mut trace));
    Ok(trace)
}

/// Checks, before anything runs, that every pass can run on `backend`.
fn check<S>(ops: &[Op<S>], backend: &Backend) -> Result<()> {
    for op in ops {
        match op {
            Op::Pass(p) => {
                if p.buffers.len() > MAX_BUFFERS {
                    return Err(Error::Invalid(format!(
                        "pass {} binds {} buffers: expected at most {MAX_BUFFERS}",
                        p.name,
                        p.buffers.len()
                    )));
                }
                if let Backend::Emulated {
                    kernels,
                    cpu_fallback: false,
                    ..
                } = backend
                {
                    match p.kernel {
                        None => {
                            return Err(Error::Invalid(format!(
                                "stage {} has no kernel source: it runs on the CPU backend only",
                                p.name
                            )))
                        }
                        Some(k) if !kernels.has(k) => {
                            return Err(Error::CudaUnavailable(format!(
                                "kernel {k} (pass {}) is not in the emulated kernel library",
                                p.name
                            )))
                        }
                        Some(_) => {}
                    }
                }
            }
            Op::Any { .. } => {}
            Op::If { body, .. } | Op::While { body, .. } => check(body, backend)?,
        }
    }
    if let Backend::Emulated { kernels, .. } = backend {
        for k in CONTROL_KERNELS {
            if !kernels.has(k) {
                return Err(Error::CudaUnavailable(format!(
                    "control kernel {k} is not in the emulated kernel library"
                )));
            }
        }
    }
    Ok(())
}

fn word<S: BufferSet>(state: &mut S, id: BufId) -> u32 {
    let b = state.bytes_mut(id);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn run_ops<S: BufferSet>(ops: &[Op<S>], backend: &Backend, state: &mut S, trace: &mut Trace) {
    for op in ops {
        match op {
            Op::Pass(p) => run_pass(p, backend, state, trace),
            Op::Any { flags, cond } => match backend {
                Backend::Cpu(_) => {
                    let any = state.bytes_mut(*flags).iter().any(|&f| f != 0);
                    state
                        .bytes_mut(*cond)
                        .copy_from_slice(&u32::from(any).to_le_bytes());
                }
                Backend::Emulated { kernels, .. } => {
                    let lanes = state.bytes_mut(*flags).len() as u32;
                    let params = [0u8; 8];
                    for (k, buffers, lanes) in [
                        ("tg_clear_word", &[*cond][..], 1),
                        ("tg_any_u8", &[*flags, *cond][..], lanes),
                    ] {
                        kernels
                            .launch(k, &params, buffers, lanes, state)
                            .expect("control kernels are checked present before a plan runs");
                        *trace.kernels.entry(k).or_default() += 1;
                    }
                }
            },
            Op::If { cond, body } => {
                if word(state, *cond) != 0 {
                    run_ops(body, backend, state, trace);
                }
            }
            Op::While {
                cond,
                max_windows,
                body,
            } => {
                let mut windows = 0;
                while windows < *max_windows && word(state, *cond) != 0 {
                    run_ops(body, backend, state, trace);
                    windows += 1;
                }
                trace.windows.push(windows);
            }
        }
    }
}

fn run_pass<S: BufferSet>(p: &Pass<S>, backend: &Backend, state: &mut S, trace: &mut Trace) {
    let kernel = match backend {
        Backend::Cpu(_) => None,
        Backend::Emulated { kernels, .. } => {
            p.kernel.filter(|k| kernels.has(k)).map(|k| (kernels, k))
        }
    };
    match kernel {
        None => {
            (p.cpu)(state, backend.launch());
            let name = p.kernel.map_or_else(|| p.name.clone(), String::from);
            *trace.cpu_passes.entry(name).or_default() += 1;
        }
        Some((kernels, k)) => {
            let buffers: Vec<BufId> = p.buffers.iter().map(|(id, _)| *id).collect();
            kernels
                .launch(k, &p.params, &buffers, p.lanes, state)
                .expect("kernels are checked present before a plan runs");
            *trace.kernels.entry(k).or_default() += 1;
        }
    }
}
