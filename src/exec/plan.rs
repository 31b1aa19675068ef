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
use std::time::{Duration, Instant};

use super::cuda::{ConditionalKind, CudaKernels, CudaStream, DeviceBuffer, Kernel};
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
    /// The kernels on a CUDA device, on device buffers ([`run_cuda`], [`record_cuda`]).
    Cuda {
        /// The device and its kernel table.
        kernels: Arc<CudaKernels>,
        /// The host pool (for work that stays on the host).
        launch: Launch,
    },
}

/// A device a backend runs on, as users name it: `cpu`, `emulated` (the CUDA kernels compiled
/// for the host), `cuda` or `cuda:N` (CUDA device N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// The CPU lane functions.
    Cpu,
    /// The CUDA kernels, compiled as host C++ and run on the CPU.
    Emulated,
    /// CUDA device `ordinal`.
    Cuda(usize),
}

impl std::str::FromStr for Device {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cpu" => Ok(Device::Cpu),
            "emulated" => Ok(Device::Emulated),
            "cuda" => Ok(Device::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Device::Cuda)
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "device {s:?}: expected cpu, emulated, cuda or cuda:N"
                    ))
                }),
        }
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => write!(f, "cpu"),
            Device::Emulated => write!(f, "emulated"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

impl Backend {
    /// The backend of `device`, with `launch` as its host pool: the emulated kernels are compiled
    /// (or loaded from the cache), a CUDA device is opened with its kernel table (an
    /// [`Error::CudaUnavailable`] says why it cannot be).
    pub fn new(device: Device, launch: Launch) -> Result<Self> {
        Ok(match device {
            Device::Cpu => Backend::Cpu(launch),
            Device::Emulated => Backend::Emulated {
                kernels: Arc::new(EmulatedKernels::build()?),
                launch,
                cpu_fallback: false,
            },
            Device::Cuda(ordinal) => Backend::Cuda {
                kernels: Arc::new(CudaKernels::new(ordinal)?),
                launch,
            },
        })
    }
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
            Backend::Emulated { launch, .. } | Backend::Cuda { launch, .. } => launch,
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
    /// Wall-clock time of each pass by the name it has in `cpu_passes` or `kernels` (its CPU
    /// lane function over all its lanes, or its emulated kernel's launch), summed over the
    /// times it ran. The host's control steps (`Any`, `If`, `While`) are not in it. On CUDA
    /// ([`run_cuda`]) passes are launched asynchronously and nothing is timed.
    pub pass_time: BTreeMap<String, Duration>,
}

impl Trace {
    /// Adds the run `other` to this one: launches, passes and times summed, its loops' windows
    /// after these.
    pub fn add(&mut self, other: Trace) {
        for (k, n) in other.kernels {
            *self.kernels.entry(k).or_default() += n;
        }
        for (k, n) in other.cpu_passes {
            *self.cpu_passes.entry(k).or_default() += n;
        }
        self.windows.extend(other.windows);
        for (k, d) in other.pass_time {
            *self.pass_time.entry(k).or_default() += d;
        }
    }

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
    if matches!(backend, Backend::Cuda { .. }) {
        return Err(Error::Invalid(
            "a plan on host buffers cannot run on the CUDA backend: run it on device buffers \
             (plan::run_cuda)"
                .into(),
        ));
    }
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
                Backend::Cpu(_) | Backend::Cuda { .. } => {
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
        Backend::Cpu(_) | Backend::Cuda { .. } => None,
        Backend::Emulated { kernels, .. } => {
            p.kernel.filter(|k| kernels.has(k)).map(|k| (kernels, k))
        }
    };
    let start = Instant::now();
    let name = match kernel {
        None => {
            (p.cpu)(state, backend.launch());
            let name = p.kernel.map_or_else(|| p.name.clone(), String::from);
            *trace.cpu_passes.entry(name.clone()).or_default() += 1;
            name
        }
        Some((kernels, k)) => {
            let buffers: Vec<BufId> = p.buffers.iter().map(|(id, _)| *id).collect();
            kernels
                .launch(k, &p.params, &buffers, p.lanes, state)
                .expect("kernels are checked present before a plan runs");
            *trace.kernels.entry(k).or_default() += 1;
            k.to_string()
        }
    };
    *trace.pass_time.entry(name).or_default() += start.elapsed();
}

/// A plan's state on a device: its buffers, by id.
pub trait DeviceBuffers {
    /// The device buffer of `id` (panics on an id the state does not have).
    fn device_buffer(&self, id: BufId) -> &DeviceBuffer;
}

/// The condition-setter unit (`kernels/exec/condition.cu`).
const CONDITION_UNIT: &str = "exec/condition.cu";

/// Loads every kernel `ops` launches, so that nothing is compiled or loaded while recording
/// (and a pass without a kernel is refused before anything runs). Call it before a capture
/// begins: loading a module is not allowed while a stream captures.
pub fn load_cuda<S>(ops: &[Op<S>], kernels: &CudaKernels) -> Result<()> {
    for op in ops {
        match op {
            Op::Pass(p) => {
                let k = p.kernel.ok_or_else(|| {
                    Error::Invalid(format!(
                        "stage {} has no kernel source: it runs on the CPU backend only",
                        p.name
                    ))
                })?;
                kernels.kernel(k)?;
            }
            Op::Any { .. } => {}
            Op::If { body, .. } | Op::While { body, .. } => load_cuda(body, kernels)?,
        }
    }
    for k in CONTROL_KERNELS {
        kernels.kernel(k)?;
    }
    for k in ["tg_set_condition", "tg_end_window"] {
        kernels.raw_kernel(CONDITION_UNIT, k)?;
    }
    Ok(())
}

/// Launches a pass's kernel on `stream`.
fn launch_pass<S, D: DeviceBuffers>(
    p: &Pass<S>,
    kernels: &CudaKernels,
    state: &D,
    stream: &CudaStream,
) -> Result<&'static str> {
    let name = p.kernel.expect("checked by load_cuda");
    let buffers: Vec<&DeviceBuffer> = p
        .buffers
        .iter()
        .map(|(id, _)| state.device_buffer(*id))
        .collect();
    kernels
        .kernel(name)?
        .launch_params(stream, &p.params, &buffers, p.lanes)?;
    Ok(name)
}

/// Launches the reduction `cond = any(flags)` on `stream`.
fn launch_any<D: DeviceBuffers>(
    kernels: &CudaKernels,
    state: &D,
    flags: BufId,
    cond: BufId,
    stream: &CudaStream,
) -> Result<()> {
    let (f, c) = (state.device_buffer(flags), state.device_buffer(cond));
    let params = [0u8; 8];
    kernels
        .kernel("tg_clear_word")?
        .launch_params(stream, &params, &[c], 1)?;
    kernels
        .kernel("tg_any_u8")?
        .launch_params(stream, &params, &[f, c], f.len() as u32)
}

/// Runs `ops` eagerly on the device's library stream: kernels launch in order; an `If` or a
/// `While` reads its condition word back (one synchronisation per decision). The reference for
/// the recorded form ([`record_cuda`]), and what a run without graphs does.
pub fn run_cuda<S, D: DeviceBuffers>(
    ops: &[Op<S>],
    kernels: &CudaKernels,
    state: &D,
) -> Result<Trace> {
    load_cuda(ops, kernels)?;
    let mut trace = Trace::default();
    run_cuda_ops(ops, kernels, state, &mut trace)?;
    kernels.device().synchronize()?;
    Ok(trace)
}

fn read_word<D: DeviceBuffers>(kernels: &CudaKernels, state: &D, id: BufId) -> Result<u32> {
    let mut word = [0u8; 4];
    kernels
        .device()
        .download(state.device_buffer(id), &mut word)?;
    Ok(u32::from_le_bytes(word))
}

fn run_cuda_ops<S, D: DeviceBuffers>(
    ops: &[Op<S>],
    kernels: &CudaKernels,
    state: &D,
    trace: &mut Trace,
) -> Result<()> {
    let stream = kernels.device().stream().clone();
    for op in ops {
        match op {
            Op::Pass(p) => {
                let name = launch_pass(p, kernels, state, &stream)?;
                *trace.kernels.entry(name).or_default() += 1;
            }
            Op::Any { flags, cond } => {
                launch_any(kernels, state, *flags, *cond, &stream)?;
                for k in CONTROL_KERNELS {
                    *trace.kernels.entry(k).or_default() += 1;
                }
            }
            Op::If { cond, body } => {
                if read_word(kernels, state, *cond)? != 0 {
                    run_cuda_ops(body, kernels, state, trace)?;
                }
            }
            Op::While {
                cond,
                max_windows,
                body,
            } => {
                let mut windows = 0;
                while windows < *max_windows && read_word(kernels, state, *cond)? != 0 {
                    run_cuda_ops(body, kernels, state, trace)?;
                    windows += 1;
                }
                trace.windows.push(windows);
            }
        }
    }
    Ok(())
}

/// The number of `While` ops in `ops` (each needs a device window counter when recorded).
pub fn count_loops<S>(ops: &[Op<S>]) -> usize {
    ops.iter()
        .map(|op| match op {
            Op::Pass(_) | Op::Any { .. } => 0,
            Op::If { body, .. } => count_loops(body),
            Op::While { body, .. } => 1 + count_loops(body),
        })
        .sum()
}

/// Records `ops` into the graph `stream` is capturing (trackgen's own capture, or a foreign one
/// such as PyTorch's), without ending it: passes become kernel nodes, `If` an IF node and `While`
/// a WHILE node whose body ends with a kernel that counts the window and sets the condition
/// (`cond != 0` and fewer than `max_windows` windows). `counters` holds one `u32` device word per
/// `While` ([`count_loops`]), reset by the graph itself before each loop. Every buffer of
/// `state`, the counters and the loaded modules are pinned to the graph (a user object), so
/// dropping their Rust owners while the graph lives frees nothing it reads. Every kernel must be
/// loaded first ([`load_cuda`], before the capture began).
pub fn record_cuda<S, D: DeviceBuffers>(
    ops: &[Op<S>],
    kernels: &CudaKernels,
    state: &D,
    buffers: &[&DeviceBuffer],
    counters: &[DeviceBuffer],
    stream: &CudaStream,
) -> Result<()> {
    if counters.len() < count_loops(ops) {
        return Err(Error::Invalid(format!(
            "recording a plan with {} loops: {} window counters given",
            count_loops(ops),
            counters.len()
        )));
    }
    let setters = Setters {
        set: kernels.raw_kernel(CONDITION_UNIT, "tg_set_condition")?,
        end: kernels.raw_kernel(CONDITION_UNIT, "tg_end_window")?,
    };
    let mut next_counter = 0;
    record_ops(
        ops,
        kernels,
        state,
        counters,
        &mut next_counter,
        &setters,
        stream,
    )?;
    let mut pinned: Vec<&DeviceBuffer> = buffers.to_vec();
    pinned.extend(counters.iter());
    let modules = kernels.loaded_modules();
    let modules: Vec<_> = modules.iter().collect();
    kernels.recorder().pin(stream, &pinned, &modules)
}

/// The condition-setter kernels.
struct Setters {
    set: Kernel,
    end: Kernel,
}

fn record_ops<S, D: DeviceBuffers>(
    ops: &[Op<S>],
    kernels: &CudaKernels,
    state: &D,
    counters: &[DeviceBuffer],
    next_counter: &mut usize,
    setters: &Setters,
    stream: &CudaStream,
) -> Result<()> {
    use super::cuda::Arg;
    for op in ops {
        match op {
            Op::Pass(p) => {
                launch_pass(p, kernels, state, stream)?;
            }
            Op::Any { flags, cond } => launch_any(kernels, state, *flags, *cond, stream)?,
            Op::If { cond, body } => {
                let condition = kernels.recorder().condition(stream, None)?;
                setters.set.launch(
                    stream,
                    1,
                    1,
                    &[condition.arg(), Arg::Buffer(state.device_buffer(*cond))],
                )?;
                let mut inner = Ok(());
                kernels
                    .recorder()
                    .conditional(stream, condition, ConditionalKind::If, |s| {
                        inner =
                            record_ops(body, kernels, state, counters, next_counter, setters, s);
                        Ok(())
                    })?;
                inner?;
            }
            Op::While {
                cond,
                max_windows,
                body,
            } => {
                let counter = &counters[*next_counter];
                *next_counter += 1;
                if *max_windows == 0 {
                    continue;
                }
                kernels
                    .kernel("tg_clear_word")?
                    .launch_params(stream, &[0u8; 8], &[counter], 1)?;
                let condition = kernels.recorder().condition(stream, None)?;
                let cond_buffer = state.device_buffer(*cond);
                setters
                    .set
                    .launch(stream, 1, 1, &[condition.arg(), Arg::Buffer(cond_buffer)])?;
                let mut inner = Ok(());
                kernels
                    .recorder()
                    .conditional(stream, condition, ConditionalKind::While, |s| {
                        inner =
                            record_ops(body, kernels, state, counters, next_counter, setters, s)
                                .and_then(|()| {
                                    setters.end.launch(
                                        s,
                                        1,
                                        1,
                                        &[
                                            condition.arg(),
                                            Arg::Buffer(cond_buffer),
                                            Arg::Buffer(counter),
                                            Arg::U32(*max_windows),
                                        ],
                                    )
                                });
                        Ok(())
                    })?;
                inner?;
            }
        }
    }
    Ok(())
}
