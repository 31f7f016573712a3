//! [`Session`]: a graph with a runtime to run it on, an inter-op pool,
//! each node's kernel prepared once, and a plan per kind of run.
//!
//! ```standalone_crate
//! use op_core::{DType, Tensor};
//! use op_graph::{GraphBuilder, Session};
//! use op_kernels::example::Example;
//! # op_kernels::link();
//!
//! let b = GraphBuilder::new();
//! let x = b.placeholder("x", DType::F32, "[?]")?;
//! let y = Example::call_with(x).node_name("y").run_on(&b)?;
//! let session = Session::new(b.into_graph())?;
//!
//! // By name: the plan for these feeds and fetches is made once and kept.
//! let out = session.runner().feed("x", Tensor::from_vec([2], vec![1.0f32, 2.0])?).fetch("y").run()?;
//! assert_eq!(out[0].as_slice::<f32>()?, [2.0, 4.0]);
//!
//! // Or hold the plan and run it: no name is looked up per run.
//! let plan = session.plan().feed(x).fetch(y).build()?;
//! let out = plan.run([Tensor::from_vec([1], vec![5.0f32])?])?;
//! assert_eq!(out[0].as_slice::<f32>()?, [10.0]);
//! # Ok::<(), op_core::Error>(())
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use op_core::error::quoted;
use op_core::{AttrValue, Error, InputTypes, Result, Runtime, Tensor, TensorValue};

use crate::graph::{Graph, NodeId, Output};
use crate::plan::{Plan, StepKernel};

/// The runtime a session prepares kernels on.
enum RuntimeRef {
    Global,
    Shared(Arc<Runtime>),
}

impl RuntimeRef {
    fn get(&self) -> &Runtime {
        match self {
            RuntimeRef::Global => Runtime::global(),
            RuntimeRef::Shared(runtime) => runtime,
        }
    }
}

/// What one kind of run is asked for, as ids: the key of a session's plans.
#[derive(Clone, PartialEq, Eq, Hash)]
struct PlanKey {
    feeds: Vec<Output>,
    fetches: Vec<Output>,
    targets: Vec<NodeId>,
}

/// A graph ready to run: the [`Runtime`] its kernels run on (its device,
/// intra-op threads, allocator and resources), an inter-op pool for
/// independent branches, each node's kernel prepared once (on the first
/// plan that needs it) and kept, and one [`Plan`] per kind of run (feeds,
/// fetches and targets) made on first use and kept.
///
/// Stateful nodes (variables, hash tables) keep their state in the
/// runtime's resource manager, so runs of one session (and sessions on one
/// runtime) share it.
pub struct Session {
    graph: Arc<Graph>,
    runtime: RuntimeRef,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// Each node's kernel, once prepared (indexed by node).
    kernels: Mutex<Vec<Option<StepKernel>>>,
    plans: Mutex<HashMap<PlanKey, Arc<Plan>>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("graph", &self.graph.id())
            .field("nodes", &self.graph.len())
            .field("inter_op_threads", &self.inter_op_threads())
            .finish_non_exhaustive()
    }
}

/// Settings of a [`Session`] (see [`Session::builder`]).
#[must_use = "a session builder does nothing until `build()`"]
pub struct SessionBuilder {
    graph: Arc<Graph>,
    runtime: RuntimeRef,
    /// `None`: the shared inter-op pool.
    inter_op_threads: Option<usize>,
}

/// The inter-op pool of sessions that do not ask for their own: one thread
/// per core, started on first use and shared, as TensorFlow's sessions
/// share one by default. `None` on a one-core machine, or if the threads
/// cannot be started (runs then stay on the caller's thread).
static SHARED_POOL: std::sync::LazyLock<Option<Arc<rayon::ThreadPool>>> =
    std::sync::LazyLock::new(|| {
        match std::thread::available_parallelism().map_or(1, usize::from) {
            1 => None,
            threads => inter_op_pool(threads).ok().map(Arc::new),
        }
    });

/// A pool of `threads` inter-op threads.
fn inter_op_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("opkit-inter-op-{i}"))
        .build()
        .map_err(|e| {
            Error::resource_exhausted(format!(
                "starting an inter-op pool of {threads} threads: {e}"
            ))
        })
}

impl SessionBuilder {
    /// Runs kernels on `runtime` (its device, intra-op threads, allocator
    /// and resources) instead of [`Runtime::global`].
    pub fn runtime(mut self, runtime: Arc<Runtime>) -> SessionBuilder {
        self.runtime = RuntimeRef::Shared(runtime);
        self
    }

    /// Runs independent branches on a pool of `threads` inter-op threads
    /// of the session's own (TensorFlow's `inter_op_parallelism_threads`);
    /// 1 runs every node on the caller's thread. Default: a pool of one
    /// thread per core shared by every session that does not set this.
    pub fn inter_op_threads(mut self, threads: usize) -> SessionBuilder {
        self.inter_op_threads = Some(threads);
        self
    }

    /// The session; an `InvalidArgument` error for 0 threads, a
    /// `ResourceExhausted` error if the threads cannot be started.
    pub fn build(self) -> Result<Session> {
        let pool = match self.inter_op_threads {
            None => SHARED_POOL.clone(),
            Some(0) => {
                return Err(Error::invalid_argument(
                    "a session needs at least 1 inter-op thread, got 0",
                ));
            }
            Some(1) => None,
            Some(threads) => Some(Arc::new(inter_op_pool(threads)?)),
        };
        Ok(Session {
            kernels: Mutex::new(vec![None; self.graph.len()]),
            graph: self.graph,
            runtime: self.runtime,
            pool,
            plans: Mutex::default(),
        })
    }
}

impl Session {
    /// A session over `graph` on the global runtime, on the shared
    /// inter-op pool (one thread per core).
    pub fn new(graph: impl Into<Arc<Graph>>) -> Result<Session> {
        Session::builder(graph).build()
    }

    /// Settings for a session over `graph`: the runtime, the inter-op
    /// threads.
    pub fn builder(graph: impl Into<Arc<Graph>>) -> SessionBuilder {
        SessionBuilder {
            graph: graph.into(),
            runtime: RuntimeRef::Global,
            inter_op_threads: None,
        }
    }

    /// The graph.
    pub fn graph(&self) -> &Arc<Graph> {
        &self.graph
    }

    /// The runtime kernels run on.
    pub fn runtime(&self) -> &Runtime {
        self.runtime.get()
    }

    /// The number of inter-op threads.
    pub fn inter_op_threads(&self) -> usize {
        self.pool.as_ref().map_or(1, |p| p.current_num_threads())
    }

    /// A run to describe by names or ids: feeds with their values,
    /// fetches, targets; then [`Runner::run`].
    pub fn runner(&self) -> Runner<'_> {
        Runner {
            session: self,
            feeds: Vec::new(),
            values: Vec::new(),
            fetches: Vec::new(),
            targets: Vec::new(),
        }
    }

    /// A plan to describe by names or ids: fed outputs, fetches, targets;
    /// then [`PlanRequest::build`].
    pub fn plan(&self) -> PlanRequest<'_> {
        PlanRequest {
            session: self,
            feeds: Vec::new(),
            fetches: Vec::new(),
            targets: Vec::new(),
        }
    }

    /// The plan for `key`, made on first use.
    fn plan_for(&self, key: PlanKey) -> Result<Arc<Plan>> {
        if let Some(plan) = self.lock_plans().get(&key) {
            return Ok(plan.clone());
        }
        // Made outside the lock: preparing kernels may take a while, and
        // two threads making one plan make the same plan.
        let plan = Arc::new(Plan::new(
            self.graph.clone(),
            self.pool.clone(),
            key.feeds.clone(),
            key.fetches.clone(),
            key.targets.clone(),
            |node| self.kernel(node),
        )?);
        Ok(self.lock_plans().entry(key).or_insert(plan).clone())
    }

    fn lock_plans(&self) -> std::sync::MutexGuard<'_, HashMap<PlanKey, Arc<Plan>>> {
        self.plans.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Node `id`'s kernel, prepared on first use (a `Const` node's value,
    /// converted once).
    fn kernel(&self, id: NodeId) -> Result<StepKernel> {
        let cached =
            self.kernels.lock().unwrap_or_else(PoisonError::into_inner)[id.index()].clone();
        if let Some(kernel) = cached {
            return Ok(kernel);
        }
        let node = &self.graph.nodes()[id.index()];
        let kernel = self.prepare(id).map_err(|e| {
            e.with_context(format!(
                "while preparing node {} (op {}) to run",
                quoted(node.name()),
                node.op()
            ))
        })?;
        self.kernels.lock().unwrap_or_else(PoisonError::into_inner)[id.index()] =
            Some(kernel.clone());
        Ok(kernel)
    }

    fn prepare(&self, id: NodeId) -> Result<StepKernel> {
        let node = &self.graph.nodes()[id.index()];
        let instance = node.instance();
        if node.op() == "Const" {
            // The graph checked the value when the node was added.
            let value: TensorValue = instance.get_attr("value")?;
            return Ok(StepKernel::Constant(Tensor::from_tensor_value(&value)?));
        }
        let types = instance.input_types();
        let inputs: Vec<InputTypes> = node
            .op_def()
            .inputs
            .iter()
            .enumerate()
            .map(|(arg, def)| {
                let range = instance.input_arg_range(arg).unwrap_or_default();
                match def.is_list() {
                    true => InputTypes::List(types[range].to_vec()),
                    false => InputTypes::Single(types[range.start]),
                }
            })
            .collect();
        let attrs: Vec<(&str, AttrValue)> = instance
            .attrs()
            .iter()
            .map(|(n, v)| (n.as_str(), v.clone()))
            .collect();
        let op = self
            .runtime
            .get()
            .prepare_named(node.op(), &inputs, &attrs, node.name())?;
        Ok(StepKernel::Prepared(op))
    }

    fn resolve_output(&self, what: &str, r: &OutputRef) -> Result<Output> {
        let found = match r {
            OutputRef::Name(name) => self.graph.find_output(name),
            OutputRef::Output(o) => self.graph.check_output(*o).map(|()| *o),
        };
        found.map_err(|e| e.with_context(format!("in {what} {}", self.describe_output(r))))
    }

    fn describe_output(&self, r: &OutputRef) -> String {
        match r {
            OutputRef::Name(name) => quoted(name).to_string(),
            OutputRef::Output(o) => quoted(&self.graph.tensor_name(*o).to_string()).to_string(),
        }
    }

    fn resolve_node(&self, r: &NodeRef) -> Result<NodeId> {
        let found = match r {
            NodeRef::Name(name) => self.graph.find_node(name),
            NodeRef::Node(id) => self.graph.check_node(*id).map(|()| *id),
        };
        found.map_err(|e| {
            let what = match r {
                NodeRef::Name(name) => quoted(name).to_string(),
                NodeRef::Node(id) => format!("{id:?}"),
            };
            e.with_context(format!("in target {what}"))
        })
    }

    fn key(
        &self,
        feeds: &[OutputRef],
        fetches: &[OutputRef],
        targets: &[NodeRef],
    ) -> Result<PlanKey> {
        Ok(PlanKey {
            feeds: feeds
                .iter()
                .map(|f| self.resolve_output("feed", f))
                .collect::<Result<_>>()?,
            fetches: fetches
                .iter()
                .map(|f| self.resolve_output("fetch", f))
                .collect::<Result<_>>()?,
            targets: targets
                .iter()
                .map(|t| self.resolve_node(t))
                .collect::<Result<_>>()?,
        })
    }
}

/// An output named for a run: `node`, `node:k`, or an [`Output`] of the
/// session's graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputRef {
    /// `node` or `node:k`.
    Name(String),
    /// An output id.
    Output(Output),
}

impl From<&str> for OutputRef {
    fn from(name: &str) -> Self {
        OutputRef::Name(name.to_owned())
    }
}

impl From<String> for OutputRef {
    fn from(name: String) -> Self {
        OutputRef::Name(name)
    }
}

impl From<Output> for OutputRef {
    fn from(output: Output) -> Self {
        OutputRef::Output(output)
    }
}

/// A node named for a run's targets: its name, or its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeRef {
    /// The node's name.
    Name(String),
    /// The node's id.
    Node(NodeId),
}

impl From<&str> for NodeRef {
    fn from(name: &str) -> Self {
        NodeRef::Name(name.to_owned())
    }
}

impl From<String> for NodeRef {
    fn from(name: String) -> Self {
        NodeRef::Name(name)
    }
}

impl From<NodeId> for NodeRef {
    fn from(id: NodeId) -> Self {
        NodeRef::Node(id)
    }
}

/// The node of `output`.
impl From<Output> for NodeRef {
    fn from(output: Output) -> Self {
        NodeRef::Node(output.node())
    }
}

/// One run of a [`Session`], described by names or ids (see
/// [`Session::runner`]).
#[must_use = "a runner does nothing until `run()`"]
pub struct Runner<'s> {
    session: &'s Session,
    feeds: Vec<OutputRef>,
    values: Vec<Tensor>,
    fetches: Vec<OutputRef>,
    targets: Vec<NodeRef>,
}

impl Runner<'_> {
    /// Feeds `value` to `output` (a placeholder's, or any output, whose
    /// producer then does not run for it). Handing a tensor over (not a
    /// clone) lets the kernels it flows into reuse its buffer.
    pub fn feed(mut self, output: impl Into<OutputRef>, value: Tensor) -> Self {
        self.feeds.push(output.into());
        self.values.push(value);
        self
    }

    /// Fetches `output`: [`run`](Self::run) returns its value, in the
    /// order fetched.
    pub fn fetch(mut self, output: impl Into<OutputRef>) -> Self {
        self.fetches.push(output.into());
        self
    }

    /// Runs `node` (and what it needs) though nothing of it is fetched: a
    /// stateful node run for its effect, an initializer, a `NoOp` that
    /// groups others.
    pub fn target(mut self, node: impl Into<NodeRef>) -> Self {
        self.targets.push(node.into());
        self
    }

    /// Runs: the plan for these feeds, fetches and targets is made the
    /// first time and kept by the session. Unknown names are `NotFound`
    /// errors, outputs a node does not have `InvalidArgument` errors;
    /// then as [`Plan::run`].
    pub fn run(self) -> Result<Vec<Tensor>> {
        let key = self
            .session
            .key(&self.feeds, &self.fetches, &self.targets)?;
        self.session.plan_for(key)?.run(self.values)
    }
}

/// A plan to make, described by names or ids (see [`Session::plan`]).
#[must_use = "a plan request does nothing until `build()`"]
pub struct PlanRequest<'s> {
    session: &'s Session,
    feeds: Vec<OutputRef>,
    fetches: Vec<OutputRef>,
    targets: Vec<NodeRef>,
}

impl PlanRequest<'_> {
    /// `output` will be fed: [`Plan::run`] takes its value, in the order
    /// of the feeds.
    pub fn feed(mut self, output: impl Into<OutputRef>) -> Self {
        self.feeds.push(output.into());
        self
    }

    /// `output` will be fetched.
    pub fn fetch(mut self, output: impl Into<OutputRef>) -> Self {
        self.fetches.push(output.into());
        self
    }

    /// `node` will run though nothing of it is fetched.
    pub fn target(mut self, node: impl Into<NodeRef>) -> Self {
        self.targets.push(node.into());
        self
    }

    /// The plan: pruned, ordered, every kernel prepared (the session's
    /// plan for these feeds, fetches and targets, made now if it was not
    /// before). Errors as [`Runner::run`]'s, before anything runs.
    pub fn build(self) -> Result<Arc<Plan>> {
        let key = self
            .session
            .key(&self.feeds, &self.fetches, &self.targets)?;
        self.session.plan_for(key)
    }
}
