//! Graph primitives: captures, conditional nodes that join any capture, and user objects.
//!
//! **Joining a capture.** When a stream is capturing — a capture trackgen began, or a foreign
//! one such as PyTorch's `torch.cuda.graph` — trackgen adds its control flow to the capturing
//! graph itself and never ends the caller's capture (ending and restarting it would change the
//! capture id, on which PyTorch's allocator keys its memory pool). [`Recorder::conditional`]:
//!
//! 1. `cuStreamGetCaptureInfo_v3`: the capturing graph and the stream's current dependencies;
//! 2. `cuGraphConditionalHandleCreate` (done earlier by [`Recorder::condition`], so that a
//!    setter kernel can be captured before the node);
//! 3. `cuGraphAddNode_v2`: an IF or WHILE node after those dependencies, whose body graph the
//!    driver creates;
//! 4. `cuStreamUpdateCaptureDependencies_v2` (SET): the stream's next work follows the node;
//! 5. the body is captured on a side stream the [`Recorder`] owns, with
//!    `cuStreamBeginCaptureToGraph` into the body graph, then `cuStreamEndCapture` there.
//!
//! The condition of an IF or WHILE node is set on the device, by a kernel calling
//! `cudaGraphSetConditional(handle, value)` (see `kernels/exec/condition.cu`): before an IF
//! node, and at the end of each window of a WHILE body; or, for a constant, by the handle's
//! default value, assigned at every launch of the graph.
//!
//! **Lifetimes.** [`Recorder::pin`] moves owners of buffers and modules into a CUDA user object
//! retained by the capturing graph (`cuUserObjectCreate` + `cuGraphRetainUserObject` with
//! `MOVE`); graphs instantiated from it hold it too. When the last graph goes, the driver calls
//! the destructor, which drops those owners: memory goes onto the device's free queue, with no
//! CUDA call (a user-object destructor must make none).
//!
//! **No global state.** A recorder's side streams are its own; two recorders record on two
//! streams at once.

// Raw driver calls for graphs and captures: each block states why it holds. The crate root
// denies unsafe code elsewhere.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::{sys, CudaStream};

use super::device::{CudaDevice, Shared};
use super::driver_error;
use super::launch::{Arg, Module, ModuleHandle};
use super::memory::{Allocation, DeviceBuffer};
use crate::{Error, Result};

/// How a capture polices calls that are unsafe while capturing (`CUstreamCaptureMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureMode {
    /// Any thread's unsafe call fails while the capture is open (PyTorch's default).
    Global,
    /// Only this thread's unsafe calls fail.
    ThreadLocal,
    /// Nothing is policed.
    Relaxed,
}

impl CaptureMode {
    fn raw(self) -> sys::CUstreamCaptureMode {
        use sys::CUstreamCaptureMode as M;
        match self {
            CaptureMode::Global => M::CU_STREAM_CAPTURE_MODE_GLOBAL,
            CaptureMode::ThreadLocal => M::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            CaptureMode::Relaxed => M::CU_STREAM_CAPTURE_MODE_RELAXED,
        }
    }
}

/// The kind of a conditional node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConditionalKind {
    /// The body runs once if the condition is non-zero when the node starts.
    If,
    /// The body runs while the condition is non-zero, tested before each run.
    While,
}

/// A stream's capture: its id, the capturing graph and the stream's current dependencies.
struct CaptureState {
    id: u64,
    graph: sys::CUgraph,
    deps: Vec<sys::CUgraphNode>,
    edges: Option<Vec<sys::CUgraphEdgeData>>,
}

/// The capture `stream` takes part in, `None` when it is not capturing; an invalidated capture
/// is an [`Error::Invalid`].
fn capture_state(ctx: &Shared, stream: &CudaStream) -> Result<Option<CaptureState>> {
    ctx.ctx
        .bind_to_thread()
        .map_err(|e| driver_error("cuCtxSetCurrent", e))?;
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut id = 0u64;
    let mut graph = std::ptr::null_mut();
    let mut deps: *const sys::CUgraphNode = std::ptr::null();
    let mut edges: *const sys::CUgraphEdgeData = std::ptr::null();
    let mut count = 0usize;
    // SAFETY: every out pointer is valid; the stream is live (borrowed for the call).
    unsafe {
        sys::cuStreamGetCaptureInfo_v3(
            stream.cu_stream(),
            &mut status,
            &mut id,
            &mut graph,
            &mut deps,
            &mut edges,
            &mut count,
        )
    }
    .result()
    .map_err(|e| driver_error("cuStreamGetCaptureInfo_v3", e))?;
    match status {
        sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => Ok(None),
        sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_INVALIDATED => Err(Error::Invalid(
            format!("the capture {id} on this stream was invalidated (by an unsafe call)"),
        )),
        sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => {
            // SAFETY: the driver returns `count` nodes (and edge data, when non-null) valid until
            // the next call on this stream; they are copied at once.
            let deps = if count == 0 || deps.is_null() {
                Vec::new()
            } else {
                unsafe { std::slice::from_raw_parts(deps, count) }.to_vec()
            };
            let edges = if count == 0 || edges.is_null() {
                None
            } else {
                // SAFETY: as above.
                Some(unsafe { std::slice::from_raw_parts(edges, count) }.to_vec())
            };
            Ok(Some(CaptureState {
                id,
                graph,
                deps,
                edges,
            }))
        }
    }
}

/// A CUDA graph trackgen owns (from a capture it ended); destroyed when dropped.
#[derive(Debug)]
pub struct Graph {
    graph: sys::CUgraph,
    shared: Arc<Shared>,
}

// SAFETY: a CUgraph is a driver handle; trackgen never uses one graph from two threads at once
// (`&mut self` for nothing, `&self` methods only instantiate, which the driver allows
// concurrently with other reads).
unsafe impl Send for Graph {}
// SAFETY: see `Send`.
unsafe impl Sync for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: the graph came from cuStreamEndCapture and is destroyed once, here; graphs
        // instantiated from it are independent of it.
        let _ = unsafe { sys::cuGraphDestroy(self.graph) };
    }
}

/// An instantiated graph; destroyed when dropped (launches in flight finish first).
#[derive(Debug)]
pub struct GraphExec {
    exec: sys::CUgraphExec,
    shared: Arc<Shared>,
}

// SAFETY: a CUgraphExec is a driver handle; launching it from several threads is allowed (the
// driver orders launches of one exec).
unsafe impl Send for GraphExec {}
// SAFETY: see `Send`.
unsafe impl Sync for GraphExec {}

impl Drop for GraphExec {
    fn drop(&mut self) {
        // SAFETY: the exec came from cuGraphInstantiateWithFlags and is destroyed once, here; the
        // driver frees it after launches still in flight.
        let _ = unsafe { sys::cuGraphExecDestroy(self.exec) };
    }
}

impl CudaDevice {
    /// Begins a capture on `stream` (`cuStreamBeginCapture`), e.g. trackgen's own recording, or
    /// in tests a stand-in for a foreign capture.
    pub fn begin_capture(&self, stream: &CudaStream, mode: CaptureMode) -> Result<()> {
        self.check_stream(stream)?;
        self.bind()?;
        // SAFETY: the stream is live (borrowed) and belongs to this context.
        unsafe { sys::cuStreamBeginCapture_v2(stream.cu_stream(), mode.raw()) }
            .result()
            .map_err(|e| driver_error("cuStreamBeginCapture", e))
    }

    /// Ends the capture on `stream` and returns its graph.
    pub fn end_capture(&self, stream: &CudaStream) -> Result<Graph> {
        self.check_stream(stream)?;
        self.bind()?;
        let mut graph = std::ptr::null_mut();
        // SAFETY: the stream is live; `graph` is a valid out pointer.
        unsafe { sys::cuStreamEndCapture(stream.cu_stream(), &mut graph) }
            .result()
            .map_err(|e| driver_error("cuStreamEndCapture", e))?;
        Ok(Graph {
            graph,
            shared: self.shared.clone(),
        })
    }

    /// The id of the capture `stream` takes part in, or `None` when it is not capturing.
    pub fn capture_id(&self, stream: &CudaStream) -> Result<Option<u64>> {
        self.check_stream(stream)?;
        Ok(capture_state(&self.shared, stream)?.map(|s| s.id))
    }

    /// `Ok` if `stream` belongs to this device's context.
    fn check_stream(&self, stream: &CudaStream) -> Result<()> {
        if stream.context().cu_ctx() == self.context().cu_ctx() {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "a stream of another context used on CUDA device {}",
                self.ordinal()
            )))
        }
    }
}

impl Graph {
    /// Instantiates the graph for launching.
    pub fn instantiate(&self) -> Result<GraphExec> {
        self.shared
            .ctx
            .bind_to_thread()
            .map_err(|e| driver_error("cuCtxSetCurrent", e))?;
        let mut exec = std::ptr::null_mut();
        // SAFETY: the graph is live; `exec` is a valid out pointer.
        unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, self.graph, 0) }
            .result()
            .map_err(|e| driver_error("cuGraphInstantiateWithFlags", e))?;
        Ok(GraphExec {
            exec,
            shared: self.shared.clone(),
        })
    }

    /// The number of top-level nodes (a conditional node counts once, its body not at all).
    pub fn node_count(&self) -> Result<usize> {
        let mut count = 0usize;
        // SAFETY: a null node array asks for the count only, written through a valid pointer.
        unsafe { sys::cuGraphGetNodes(self.graph, std::ptr::null_mut(), &mut count) }
            .result()
            .map_err(|e| driver_error("cuGraphGetNodes", e))?;
        Ok(count)
    }
}

impl GraphExec {
    /// Launches the graph on `stream` (asynchronous).
    pub fn launch(&self, stream: &CudaStream) -> Result<()> {
        if stream.context().cu_ctx() != self.shared.ctx.cu_ctx() {
            return Err(Error::Invalid(
                "graph launched on a stream of another context".to_string(),
            ));
        }
        self.shared
            .ctx
            .bind_to_thread()
            .map_err(|e| driver_error("cuCtxSetCurrent", e))?;
        // SAFETY: the exec and the stream are live and belong to the same context.
        unsafe { sys::cuGraphLaunch(self.exec, stream.cu_stream()) }
            .result()
            .map_err(|e| driver_error("cuGraphLaunch", e))
    }
}

/// The condition of a conditional node, created in one capturing graph; its value is set on the
/// device by `cudaGraphSetConditional(handle, value)` (pass [`Condition::arg`] to the setter
/// kernel) or by its default at each launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Condition {
    handle: sys::CUgraphConditionalHandle,
    graph: usize,
}

impl Condition {
    /// The handle as a kernel argument (`cudaGraphConditionalHandle`, 64 bits).
    pub fn arg(&self) -> Arg<'static> {
        Arg::U64(self.handle)
    }
}

/// What a user object owns: the owners it keeps alive.
struct Pinned {
    _buffers: Vec<Arc<Allocation>>,
    _modules: Vec<Arc<ModuleHandle>>,
}

/// The user-object destructor: drops the owners, which queue what they own for freeing. Makes
/// no CUDA call.
unsafe extern "C" fn release_pinned(payload: *mut c_void) {
    // SAFETY: `payload` is the `Box<Pinned>` leaked by `pin_to_graph`; the driver calls the
    // destructor exactly once, when the last reference goes.
    drop(unsafe { Box::from_raw(payload.cast::<Pinned>()) });
}

/// Records conditional nodes and pins resources into captures, on side streams of its own.
#[derive(Debug)]
pub struct Recorder {
    shared: Arc<Shared>,
    side: Mutex<Vec<Arc<CudaStream>>>,
}

impl Recorder {
    /// A recorder for `device`, with one side stream made now (before any capture begins).
    pub fn new(device: &CudaDevice) -> Result<Self> {
        let side = device
            .context()
            .new_stream()
            .map_err(|e| driver_error("cuStreamCreate", e))?;
        Ok(Self {
            shared: device.shared.clone(),
            side: Mutex::new(vec![side]),
        })
    }

    /// The capture `stream` takes part in, or an [`Error::Invalid`] saying it is not capturing.
    fn capturing(&self, stream: &CudaStream, what: &str) -> Result<CaptureState> {
        if stream.context().cu_ctx() != self.shared.ctx.cu_ctx() {
            return Err(Error::Invalid(format!(
                "{what}: the stream belongs to another context"
            )));
        }
        capture_state(&self.shared, stream)?.ok_or_else(|| {
            Error::Invalid(format!(
                "{what}: the stream is not capturing (begin a capture first)"
            ))
        })
    }

    /// A condition handle in the graph `stream` is capturing into. With `default`, the
    /// condition is set to it at every launch of the graph; without, a kernel must set it before
    /// the node runs.
    pub fn condition(&self, stream: &CudaStream, default: Option<bool>) -> Result<Condition> {
        let state = self.capturing(stream, "a graph condition")?;
        let mut handle = 0;
        let (value, flags) = match default {
            Some(v) => (u32::from(v), sys::CU_GRAPH_COND_ASSIGN_DEFAULT),
            None => (0, 0),
        };
        // SAFETY: the graph is the live capturing graph, the context is current and is the
        // graph's, and `handle` is a valid out pointer.
        unsafe {
            sys::cuGraphConditionalHandleCreate(
                &mut handle,
                state.graph,
                self.shared.ctx.cu_ctx(),
                value,
                flags,
            )
        }
        .result()
        .map_err(|e| driver_error("cuGraphConditionalHandleCreate", e))?;
        Ok(Condition {
            handle,
            graph: state.graph as usize,
        })
    }

    /// Adds an IF or WHILE node on `condition` to the graph `stream` is capturing into, after
    /// the stream's current work, and records `body` into the node's body graph (on a side
    /// stream given to `body`). The stream's capture continues after the node: its id and mode
    /// are unchanged. `body` must only enqueue work on the stream it is given (no allocation, no
    /// synchronisation); its error, or a failure to capture, is returned.
    pub fn conditional(
        &self,
        stream: &CudaStream,
        condition: Condition,
        kind: ConditionalKind,
        body: impl FnOnce(&CudaStream) -> Result<()>,
    ) -> Result<()> {
        let state = self.capturing(stream, "a conditional node")?;
        if state.graph as usize != condition.graph {
            return Err(Error::Invalid(
                "a conditional node: its condition was created in another graph than the one \
                 the stream is capturing into"
                    .to_string(),
            ));
        }
        // SAFETY: CUgraphNodeParams is a C struct of integers, pointers and a union of such;
        // all-zero bytes are a valid (empty) value, filled in below.
        let mut params: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        params.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL;
        params.__bindgen_anon_1.conditional = sys::CUDA_CONDITIONAL_NODE_PARAMS {
            handle: condition.handle,
            type_: match kind {
                ConditionalKind::If => sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_IF,
                ConditionalKind::While => sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_WHILE,
            },
            size: 1,
            phGraph_out: std::ptr::null_mut(),
            ctx: self.shared.ctx.cu_ctx(),
        };
        let mut node = std::ptr::null_mut();
        let edges = state
            .edges
            .as_ref()
            .map_or(std::ptr::null(), |e| e.as_ptr());
        // SAFETY: the graph is the live capturing graph; `deps` (and `edges`, when present) hold
        // `deps.len()` entries copied from the driver's answer; `params` is a conditional node's
        // parameter set whose handle belongs to this graph (checked above).
        unsafe {
            sys::cuGraphAddNode_v2(
                &mut node,
                state.graph,
                state.deps.as_ptr(),
                edges,
                state.deps.len(),
                &mut params,
            )
        }
        .result()
        .map_err(|e| driver_error("cuGraphAddNode_v2 (conditional)", e))?;
        // SAFETY: reading back the union member written above; the driver set `phGraph_out` to
        // its array of `size` = 1 body graphs, owned by the node (null only if it did not).
        let bodies = unsafe { params.__bindgen_anon_1.conditional.phGraph_out };
        if bodies.is_null() {
            return Err(Error::CudaUnavailable(
                "cuGraphAddNode_v2 returned a conditional node without a body graph".to_string(),
            ));
        }
        // SAFETY: `bodies` is the driver's non-null array of one graph, valid while the node is.
        let body_graph = unsafe { *bodies };
        // SAFETY: `node` is the node just added to the stream's capturing graph; SET makes it
        // the stream's only dependency.
        unsafe {
            sys::cuStreamUpdateCaptureDependencies_v2(
                stream.cu_stream(),
                &mut node,
                std::ptr::null(),
                1,
                sys::CUstreamUpdateCaptureDependencies_flags::CU_STREAM_SET_CAPTURE_DEPENDENCIES
                    as u32,
            )
        }
        .result()
        .map_err(|e| driver_error("cuStreamUpdateCaptureDependencies_v2", e))?;
        self.capture_body(body_graph, body)
    }

    /// Records `body` into `graph` on a side stream.
    fn capture_body(
        &self,
        graph: sys::CUgraph,
        body: impl FnOnce(&CudaStream) -> Result<()>,
    ) -> Result<()> {
        let side = self.take_side()?;
        // SAFETY: the side stream is live and not capturing (streams return to the pool only
        // after their capture ended); `graph` is a live body graph of this context; no
        // dependencies are passed.
        let began = unsafe {
            sys::cuStreamBeginCaptureToGraph(
                side.cu_stream(),
                graph,
                std::ptr::null(),
                std::ptr::null(),
                0,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }
        .result()
        .map_err(|e| driver_error("cuStreamBeginCaptureToGraph", e));
        if let Err(e) = began {
            self.give_side(side);
            return Err(e);
        }
        let recorded = body(&side);
        let mut ended = std::ptr::null_mut();
        // SAFETY: the side stream is capturing into `graph` (begun above); `ended` is a valid out
        // pointer. The returned graph is `graph` itself, owned by the conditional node.
        let end = unsafe { sys::cuStreamEndCapture(side.cu_stream(), &mut ended) }
            .result()
            .map_err(|e| driver_error("cuStreamEndCapture (conditional body)", e));
        self.give_side(side);
        recorded?;
        end?;
        if ended != graph {
            return Err(Error::CudaUnavailable(
                "cuStreamEndCapture returned another graph than the conditional body".to_string(),
            ));
        }
        Ok(())
    }

    /// A side stream for a body capture (a new one when all are in use: nested bodies).
    fn take_side(&self) -> Result<Arc<CudaStream>> {
        if let Some(side) = self.side.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(side);
        }
        self.shared
            .ctx
            .new_stream()
            .map_err(|e| driver_error("cuStreamCreate", e))
    }

    fn give_side(&self, side: Arc<CudaStream>) {
        self.side
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(side);
    }

    /// Keeps `buffers` and `modules` alive for as long as the graph `stream` is capturing into
    /// (and every graph instantiated from it) lives, through one user object that graph owns.
    /// The Rust values may be dropped at once; the memory is queued for freeing when the last
    /// graph goes.
    pub fn pin(
        &self,
        stream: &CudaStream,
        buffers: &[&DeviceBuffer],
        modules: &[&Module],
    ) -> Result<()> {
        let state = self.capturing(stream, "pinning resources")?;
        for buffer in buffers {
            if !Arc::ptr_eq(&buffer.alloc.shared, &self.shared) {
                return Err(Error::Invalid(
                    "pinning resources: a buffer of another device".to_string(),
                ));
            }
        }
        for module in modules {
            if !Arc::ptr_eq(&module.handle.shared, &self.shared) {
                return Err(Error::Invalid(
                    "pinning resources: a module of another device".to_string(),
                ));
            }
        }
        let payload = Box::into_raw(Box::new(Pinned {
            _buffers: buffers.iter().map(|b| b.alloc.clone()).collect(),
            _modules: modules.iter().map(|m| m.handle.clone()).collect(),
        }));
        let mut object = std::ptr::null_mut();
        // SAFETY: `payload` is a leaked box that the destructor reclaims exactly once; the
        // destructor makes no CUDA call (it drops owners, which push onto a queue). The driver
        // requires NO_DESTRUCTOR_SYNC.
        let created = unsafe {
            sys::cuUserObjectCreate(
                &mut object,
                payload.cast(),
                Some(release_pinned),
                1,
                sys::CUuserObject_flags::CU_USER_OBJECT_NO_DESTRUCTOR_SYNC as u32,
            )
        }
        .result();
        if let Err(e) = created {
            // SAFETY: creation failed, so the driver holds no reference to `payload`.
            drop(unsafe { Box::from_raw(payload) });
            return Err(driver_error("cuUserObjectCreate", e));
        }
        // SAFETY: `object` is live with our one reference, which MOVE hands to the graph.
        let retained = unsafe {
            sys::cuGraphRetainUserObject(
                state.graph,
                object,
                1,
                sys::CUuserObjectRetain_flags::CU_GRAPH_USER_OBJECT_MOVE as u32,
            )
        }
        .result();
        if let Err(e) = retained {
            // SAFETY: the graph took no reference; releasing ours runs the destructor.
            let _ = unsafe { sys::cuUserObjectRelease(object, 1) };
            return Err(driver_error("cuGraphRetainUserObject", e));
        }
        Ok(())
    }
}
