//! Kernels with typed resource parameters (`#[resource] counter: &Counter`)
//! and resource results (`-> Result<Arc<Counter>>`), as the macros generate
//! them: handles resolved and type-checked, owning handles made, errors
//! naming the op, node and input, and stateful ops run on every call.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use op_core::resource::{Resource, ResourceOpState};
use op_core::{
    Code, Element, KernelConstruction, KernelContext, OpCall, Registry, ResourceHandle, Result,
    Runtime, Tensor, kernel, register_op,
};

static COUNTERS_DROPPED: AtomicUsize = AtomicUsize::new(0);

/// A counter: the smallest stateful resource.
struct Counter {
    value: AtomicI64,
}

impl Counter {
    fn new(start: i64) -> Self {
        Counter {
            value: AtomicI64::new(start),
        }
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        COUNTERS_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

impl Resource for Counter {
    fn debug_string(&self) -> String {
        format!("Counter({})", self.value.load(Ordering::SeqCst))
    }
}

/// Another resource type, to hand a counter kernel the wrong handle.
struct NotACounter;

impl Resource for NotACounter {
    fn debug_string(&self) -> String {
        "NotACounter".into()
    }
}

/// Makes a counter; outputs an owning handle.
#[register_op(
    name = "Test>CounterCreate",
    outputs("counter: resource"),
    shape = "scalar"
)]
struct CounterCreate {
    #[attr(default = 0)]
    start: i64,
}

#[kernel(op = CounterCreate)]
fn counter_create(_ctx: &mut KernelContext<'_>, attrs: &CounterCreate) -> Result<Arc<Counter>> {
    Ok(Arc::new(Counter::new(attrs.start)))
}

/// Adds `by` to a counter; outputs the new value.
#[register_op(
    name = "Test>CounterAdd",
    inputs("counter: resource", "by: T"),
    outputs("value: int64"),
    attrs("T: {int32, int64}"),
    shape = "scalar"
)]
struct CounterAdd;

#[kernel(op = CounterAdd, types(i32, i64))]
fn counter_add<T: Element + Into<i64>>(
    ctx: &mut KernelContext<'_>,
    #[resource] counter: &Counter,
) -> Result<Tensor> {
    let by: i64 = ctx.input_scalar::<T>(1)?.into();
    let value = counter.value.fetch_add(by, Ordering::SeqCst) + by;
    Ok(Tensor::scalar(value))
}

/// Reads a counter; the kernel is registered by op name and names its
/// input explicitly.
#[register_op(
    name = "Test>CounterRead",
    inputs("handle: resource"),
    outputs("value: int64"),
    shape = "scalar"
)]
struct CounterRead;

#[kernel(op = "Test>CounterRead")]
fn counter_read(
    _ctx: &mut KernelContext<'_>,
    #[resource(input = "handle")] c: &Counter,
) -> Result<Tensor> {
    Ok(Tensor::scalar(c.value.load(Ordering::SeqCst)))
}

/// Copies one counter's value into another: two resource inputs, and
/// attrs between them.
#[register_op(name = "Test>CounterCopy", inputs("from: resource", "to: resource"))]
struct CounterCopy {
    #[attr(default = 1)]
    scale: i64,
}

#[kernel(op = CounterCopy)]
fn counter_copy(
    _ctx: &mut KernelContext<'_>,
    #[resource] to: &Counter,
    attrs: &CounterCopy,
    #[resource] from: &Counter,
) -> Result<()> {
    let value = from.value.load(Ordering::SeqCst) * attrs.scale;
    to.value.store(value, Ordering::SeqCst);
    Ok(())
}

fn create(start: i64) -> Tensor {
    CounterCreate::call().start(start).run().unwrap()
}

fn read(handle: &Tensor) -> i64 {
    CounterRead::call(handle)
        .run()
        .unwrap()
        .scalar_value()
        .unwrap()
}

#[test]
fn a_create_kernel_returns_an_owning_handle() {
    let handle = create(5);
    let h: ResourceHandle = handle.scalar_value().unwrap();
    assert!(h.is_owning());
    assert!(h.is_type::<Counter>().unwrap());
    assert_eq!(h.device, op_core::Device::CPU);
    assert_eq!(read(&handle), 5);
}

#[test]
fn resource_parameters_receive_the_resource_of_the_named_input() {
    let handle = create(0);
    let add = |by: Tensor| -> i64 {
        CounterAdd::call(&handle, by)
            .run()
            .unwrap()
            .scalar_value()
            .unwrap()
    };
    assert_eq!(add(Tensor::scalar(2i32)), 2);
    assert_eq!(add(Tensor::scalar(40i64)), 42);
    assert_eq!(read(&handle), 42);

    let other = create(7);
    CounterCopy::call(&other, &handle).scale(3).run().unwrap();
    assert_eq!(read(&handle), 21, "to = from * scale");
    assert_eq!(read(&other), 7);
}

#[test]
fn stateful_ops_run_on_every_call_with_the_same_inputs() {
    let handle = create(0);
    let by = Tensor::scalar(1i64);
    for expected in 1..=100 {
        let value = OpCall::new("Test>CounterAdd")
            .input(&handle)
            .input(&by)
            .run()
            .unwrap();
        assert_eq!(value[0].scalar_value::<i64>().unwrap(), expected);
    }
    let runtime = Runtime::global();
    let prepared = OpCall::new("Test>CounterAdd")
        .input(&handle)
        .input(&by)
        .prepared(runtime)
        .unwrap();
    for expected in 101..=200 {
        let value = prepared.run(vec![handle.clone(), by.clone()]).unwrap();
        assert_eq!(value[0].scalar_value::<i64>().unwrap(), expected);
    }
    for op in ["Test>CounterCreate", "Test>CounterAdd", "Test>CounterRead"] {
        let entry = Registry::global().get(op).unwrap();
        assert!(entry.def().is_stateful, "{op} has a resource arg");
    }
}

#[test]
fn a_handle_to_another_resource_type_is_invalid_argument_naming_the_input() {
    let wrong = ResourceHandle::owning(op_core::Device::CPU, Arc::new(NotACounter));
    let err = CounterRead::call(Tensor::scalar(wrong))
        .node_name("reader")
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let message = err.to_string();
    assert!(
        message.contains("op Test>CounterRead (node 'reader'): input 0 ('handle')"),
        "{message}"
    );
    assert!(message.contains("NotACounter"), "{message}");
    assert!(
        message.contains("not a resource_kernels::Counter"),
        "{message}"
    );
}

#[test]
fn a_handle_of_another_device_is_refused_naming_both_devices() {
    // An owning handle made on the CPU, then rewritten to name GPU 1: the
    // CPU kernel must not use it, though it holds a live counter.
    let handle = CounterCreate::call().run().unwrap();
    let mut moved = handle.scalar_value::<ResourceHandle>().unwrap();
    assert_eq!(moved.device, op_core::Device::CPU);
    moved.device = op_core::Device::gpu(1);
    let err = CounterRead::call(Tensor::scalar(moved.clone()))
        .node_name("reader")
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let message = err.to_string();
    for part in [
        "op Test>CounterRead (node 'reader'): input 0 ('handle')",
        &format!("resource '{}'", moved.name),
        "is on device /job:localhost/replica:0/task:0/device:GPU:1",
        "this kernel runs on device /job:localhost/replica:0/task:0/device:CPU:0",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    // The handle as made still works.
    assert_eq!(
        CounterRead::call(handle)
            .run()
            .unwrap()
            .scalar_value::<i64>()
            .unwrap(),
        0
    );
}

#[test]
fn a_named_handle_to_a_missing_resource_is_not_found() {
    let runtime = Runtime::new();
    let handle = ResourceHandle::named::<Counter>(op_core::Device::CPU, "", "gone");
    let call = |runtime: &Runtime| {
        OpCall::new("Test>CounterRead")
            .input(Tensor::scalar(handle.clone()))
            .run_on(runtime)
    };
    let err = call(&runtime).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(
        err.to_string()
            .contains("resource 'gone' of type resource_kernels::Counter does not exist in container 'localhost'"),
        "{err}"
    );

    runtime
        .resource_manager()
        .create::<Counter>("", "gone", Counter::new(9))
        .unwrap();
    assert_eq!(call(&runtime).unwrap()[0].scalar_value::<i64>().unwrap(), 9);
    runtime
        .resource_manager()
        .delete::<Counter>("", "gone")
        .unwrap();
    assert_eq!(call(&runtime).unwrap_err().code(), Code::NotFound);
}

#[test]
fn the_counter_is_dropped_with_its_last_handle() {
    let before = COUNTERS_DROPPED.load(Ordering::SeqCst);
    let handle = create(1);
    let copy = handle.clone();
    drop(handle);
    // Other tests run concurrently and drop their own counters: only
    // "this one is still alive" and "at least one more was dropped" are
    // observable here without a shared lock.
    assert_eq!(read(&copy), 1);
    let h: ResourceHandle = copy.scalar_value().unwrap();
    drop(copy);
    let weak = {
        let runtime = Runtime::global();
        let counter = runtime.resource_manager().resource::<Counter>(&h).unwrap();
        drop(h);
        Arc::downgrade(&counter)
    };
    assert!(weak.upgrade().is_none(), "dropped with the last handle");
    assert!(COUNTERS_DROPPED.load(Ordering::SeqCst) > before);
}

/// A counter shared by name, made on first use: the look-up-or-create
/// resource op (TensorFlow's `ResourceOpKernel`).
#[register_op(
    name = "Test>SharedCounter",
    attrs("container: string = ''", "shared_name: string = ''"),
    outputs("handle: resource"),
    shape = "scalar"
)]
struct SharedCounter;

struct SharedCounterKernel {
    state: ResourceOpState<Counter>,
}

#[kernel(op = SharedCounter)]
impl SharedCounterKernel {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        Ok(SharedCounterKernel {
            state: ResourceOpState::new(c, false)?,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        self.state
            .set_handle_output(ctx, 0, || Ok(Counter::new(100)))
    }
}

fn shared_counter(runtime: &Runtime, container: &str, shared_name: &str, node: &str) -> Tensor {
    OpCall::new("Test>SharedCounter")
        .attr("container", container)
        .attr("shared_name", shared_name)
        .node_name(node)
        .run_on(runtime)
        .unwrap()
        .remove(0)
}

fn add_on(runtime: &Runtime, handle: &Tensor, by: i64) -> i64 {
    OpCall::new("Test>CounterAdd")
        .input(handle)
        .input(Tensor::scalar(by))
        .run_on(runtime)
        .unwrap()[0]
        .scalar_value()
        .unwrap()
}

#[test]
fn a_shared_name_gives_every_node_one_resource_in_the_manager() {
    let runtime = Runtime::new();
    let a = shared_counter(&runtime, "", "hits", "a");
    let b = shared_counter(&runtime, "", "hits", "b");
    assert_eq!(add_on(&runtime, &a, 1), 101);
    assert_eq!(add_on(&runtime, &b, 1), 102, "b sees a's update");
    let handle: ResourceHandle = a.scalar_value().unwrap();
    assert!(!handle.is_owning());
    assert_eq!(
        (handle.container.as_str(), handle.name.as_str()),
        ("localhost", "hits")
    );
    assert!(runtime.resource_manager().is_initialized(&handle));

    let other = shared_counter(&runtime, "elsewhere", "hits", "c");
    assert_eq!(add_on(&runtime, &other, 1), 101, "another container");

    // Deleted from the manager, it is made afresh on the next call.
    runtime.resource_manager().delete_handle(&handle).unwrap();
    assert!(!runtime.resource_manager().is_initialized(&handle));
    let err = OpCall::new("Test>CounterAdd")
        .input(&a)
        .input(Tensor::scalar(1i64))
        .run_on(&runtime)
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    let a = shared_counter(&runtime, "", "hits", "a");
    assert_eq!(add_on(&runtime, &a, 1), 101, "made afresh");
}

/// The node `name` of `Test>SharedCounter` with no shared name, prepared
/// as a graph prepares its nodes (one kernel per node).
fn counter_node(runtime: &Runtime, name: &str) -> Arc<op_core::PreparedOp> {
    runtime
        .prepare_named(
            "Test>SharedCounter",
            &[],
            &[("container", "".into()), ("shared_name", "".into())],
            name,
        )
        .unwrap()
}

fn run_node(node: &op_core::PreparedOp) -> Tensor {
    node.run(Vec::new()).unwrap().remove(0)
}

fn counter_of(runtime: &Runtime, handle: &Tensor) -> Arc<Counter> {
    let handle: ResourceHandle = handle.scalar_value().unwrap();
    runtime
        .resource_manager()
        .resource::<Counter>(&handle)
        .unwrap()
}

#[test]
fn an_eager_call_without_a_shared_name_makes_a_fresh_resource() {
    // The report, with a counter for the queue: every eager call
    // returned the same resource, as the calls share one cached kernel.
    let runtime = Runtime::new();
    let a = shared_counter(&runtime, "", "", "node_1");
    let b = shared_counter(&runtime, "", "", "node_1");
    assert_eq!(add_on(&runtime, &a, 1), 101);
    assert_eq!(add_on(&runtime, &b, 1), 101, "b is a counter of its own");
    assert_eq!(add_on(&runtime, &a, 1), 102);
    for handle in [&a, &b] {
        let handle: ResourceHandle = handle.scalar_value().unwrap();
        assert!(handle.is_owning(), "owned by its handle alone");
    }
    assert_ne!(
        a.scalar_value::<ResourceHandle>().unwrap(),
        b.scalar_value::<ResourceHandle>().unwrap()
    );
    // The typed wrapper, on the global runtime, twice from one call site.
    let counters: Vec<Tensor> = (0..2)
        .map(|_| SharedCounter::call().run().unwrap())
        .collect();
    assert_eq!(add_on(Runtime::global(), &counters[0], 5), 105);
    assert_eq!(read(&counters[1]), 100);
    assert_eq!(runtime.resource_manager().debug_string(), "");

    // Nothing kept: each counter goes with its last handle.
    let weak = Arc::downgrade(&counter_of(&runtime, &a));
    drop(a);
    assert!(weak.upgrade().is_none());
}

#[test]
fn eager_calls_on_many_threads_make_a_resource_each() {
    let runtime = Runtime::new();
    let handles: Vec<Tensor> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let handle = shared_counter(&runtime, "", "", "one_node");
                    assert_eq!(add_on(&runtime, &handle, 1), 101, "its own counter");
                    handle
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let counters: Vec<Arc<Counter>> = handles.iter().map(|h| counter_of(&runtime, h)).collect();
    for (i, a) in counters.iter().enumerate() {
        assert_eq!(a.value.load(Ordering::SeqCst), 101);
        for b in &counters[i + 1..] {
            assert!(!Arc::ptr_eq(a, b), "8 calls, 8 counters");
        }
    }
}

#[test]
fn an_eager_call_with_a_shared_name_gets_the_same_resource_each_time() {
    let runtime = Runtime::new();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..10 {
                    let handle = shared_counter(&runtime, "", "everyone", "node");
                    add_on(&runtime, &handle, 1);
                }
            });
        }
    });
    let handle = shared_counter(&runtime, "", "everyone", "node");
    assert_eq!(add_on(&runtime, &handle, 0), 140, "40 calls, one counter");
    let named: ResourceHandle = handle.scalar_value().unwrap();
    assert!(!named.is_owning());
    assert_eq!(named.name, "everyone");
}

#[test]
fn a_graph_node_without_a_shared_name_has_one_resource_for_all_its_runs() {
    let runtime = Runtime::new();
    let node = counter_node(&runtime, "node_1");
    let first = run_node(&node);
    let again = run_node(&counter_node(&runtime, "node_1"));
    assert_eq!(add_on(&runtime, &first, 1), 101);
    assert_eq!(add_on(&runtime, &again, 1), 102, "one node, one counter");
    let other = run_node(&counter_node(&runtime, "node_2"));
    assert_eq!(add_on(&runtime, &other, 1), 101, "another node");
    // An eager call of the same name is not the node.
    let eager = shared_counter(&runtime, "", "", "node_1");
    assert_eq!(add_on(&runtime, &eager, 1), 101);
    assert_eq!(add_on(&runtime, &run_node(&node), 1), 103);
    let handle: ResourceHandle = first.scalar_value().unwrap();
    assert!(
        handle.is_owning(),
        "private resources are owned by their handles"
    );
    assert_eq!(runtime.resource_manager().debug_string(), "");
}

#[test]
fn kernels_know_whether_they_serve_eager_calls() {
    let runtime = Runtime::new();
    let eager = OpCall::new("Test>SharedCounter")
        .prepared(&runtime)
        .unwrap();
    let node = counter_node(&runtime, "Test>SharedCounter");
    assert!(
        !Arc::ptr_eq(&eager, &node),
        "an eager kernel and a node's are two kernels"
    );
    let entry = Registry::global().get("Test>SharedCounter").unwrap();
    let instance = op_core::OpInstanceBuilder::new(entry.def())
        .build()
        .unwrap();
    let mgr = op_core::resource::ResourceMgr::new();
    let construction = KernelConstruction::new(entry.def(), &instance, op_core::Device::CPU, &mgr);
    assert!(!construction.is_eager(), "a node's, unless told");
    assert!(construction.eager(true).is_eager());
}

#[test]
fn a_bad_shared_name_fails_when_the_kernel_is_made() {
    let err = OpCall::new("Test>SharedCounter")
        .attr("shared_name", "_reserved")
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.to_string()
            .contains("shared_name '_reserved' cannot start with '_'"),
        "{err}"
    );
}

#[test]
fn racing_first_calls_create_one_shared_resource() {
    let runtime = Runtime::new();
    std::thread::scope(|s| {
        for t in 0..8 {
            let runtime = &runtime;
            s.spawn(move || {
                let handle = shared_counter(runtime, "", "raced", &format!("t{t}"));
                add_on(runtime, &handle, 1);
            });
        }
    });
    let handle = shared_counter(&runtime, "", "raced", "reader");
    assert_eq!(
        add_on(&runtime, &handle, 0),
        108,
        "8 increments on one counter"
    );
}

#[test]
fn dropping_a_runtime_frees_its_kernels_and_resources_though_this_thread_called_it() {
    let runtime = Runtime::new();
    // A resource the manager holds by name, and one a graph node's kernel
    // holds (no shared name: private to the node's kernel); the shared one
    // is called twice, so this thread's call cache has it and has hit it.
    let shared = shared_counter(&runtime, "", "kept", "shared_node");
    let private = run_node(&counter_node(&runtime, "private_node"));
    shared_counter(&runtime, "", "kept", "shared_node");
    run_node(&counter_node(&runtime, "private_node"));
    assert_eq!(add_on(&runtime, &shared, 1), 101);
    assert_eq!(add_on(&runtime, &private, 1), 101);
    let counter = |handle: &Tensor| {
        let handle: ResourceHandle = handle.scalar_value().unwrap();
        Arc::downgrade(
            &runtime
                .resource_manager()
                .resource::<Counter>(&handle)
                .unwrap(),
        )
    };
    let (shared_counter, private_counter) = (counter(&shared), counter(&private));
    let manager = Arc::downgrade(runtime.resource_manager());
    let kernel = OpCall::new("Test>SharedCounter")
        .attr("container", "")
        .attr("shared_name", "kept")
        .node_name("shared_node")
        .prepared(&runtime)
        .map(|prepared| Arc::downgrade(&prepared))
        .unwrap();
    drop((shared, private));
    assert!(private_counter.upgrade().is_some(), "its kernel holds it");

    drop(runtime);
    assert!(
        kernel.upgrade().is_none(),
        "the runtime's kernels are freed"
    );
    assert!(manager.upgrade().is_none(), "its resource manager is freed");
    assert!(
        shared_counter.upgrade().is_none(),
        "the manager's resource is freed"
    );
    assert!(
        private_counter.upgrade().is_none(),
        "the kernel's resource is freed"
    );
}

/// Counts of `Probe`s made and dropped; only the test below makes them.
static PROBES_MADE: AtomicUsize = AtomicUsize::new(0);
static PROBES_DROPPED: AtomicUsize = AtomicUsize::new(0);

/// A resource whose drop is observable.
struct Probe;

impl Probe {
    fn new() -> Probe {
        PROBES_MADE.fetch_add(1, Ordering::SeqCst);
        Probe
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        PROBES_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

impl Resource for Probe {
    fn debug_string(&self) -> String {
        "Probe".into()
    }
}

/// Makes a `Probe` on first use, private to its kernel (no `shared_name`),
/// and outputs an owning handle to it.
#[register_op(
    name = "Test>ProbeResource",
    attrs("container: string = ''", "shared_name: string = ''"),
    outputs("handle: resource"),
    shape = "scalar"
)]
struct ProbeResource;

struct ProbeKernel(ResourceOpState<Probe>);

#[kernel(op = ProbeResource)]
impl ProbeKernel {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        Ok(ProbeKernel(ResourceOpState::new(c, false)?))
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        self.0.set_handle_output(ctx, 0, || Ok(Probe::new()))
    }
}

/// Calls `Test>ProbeResource` on `runtime` every way: eagerly through the
/// typed wrapper and through `OpCall`, each twice (a miss, then a hit of
/// this thread's call cache), dropping the handles (each call made a
/// probe, gone with its handle); and as two graph nodes, each run twice
/// (each node's kernel keeps one probe). Returns the eager kernels.
fn call_probe_every_way(runtime: &Runtime) -> Vec<std::sync::Weak<op_core::PreparedOp>> {
    for _ in 0..2 {
        let handle = ProbeResource::call().run_on(runtime).unwrap();
        assert!(handle.scalar_value::<ResourceHandle>().unwrap().is_owning());
        OpCall::new("Test>ProbeResource").run_on(runtime).unwrap();
        OpCall::new("Test>ProbeResource")
            .node_name("second_node")
            .run_on(runtime)
            .unwrap();
        for node in ["first_node", "second_node"] {
            let prepared = runtime
                .prepare_named("Test>ProbeResource", &[], &[], node)
                .unwrap();
            prepared.run(Vec::new()).unwrap();
        }
    }
    ["Test>ProbeResource", "second_node"]
        .iter()
        .map(|name| {
            let prepared = OpCall::new("Test>ProbeResource")
                .node_name(name)
                .prepared(runtime)
                .unwrap();
            Arc::downgrade(&prepared)
        })
        .collect()
}

#[test]
fn dropping_a_runtime_drops_its_kernels_private_resources_at_once_though_its_callers_live_on() {
    let runtime = Arc::new(Runtime::new());
    let (called, on_called) = std::sync::mpsc::channel();
    let (release, on_release) = std::sync::mpsc::channel::<()>();
    // A second thread calls the runtime, lets go of it, and stays alive
    // (with its call cache) until after the runtime is gone.
    let caller = std::thread::spawn({
        let runtime = runtime.clone();
        move || {
            let kernels = call_probe_every_way(&runtime);
            drop(runtime);
            called.send(kernels).unwrap();
            on_release.recv_timeout(Duration::from_secs(60)).unwrap();
        }
    });
    let mut kernels = on_called.recv_timeout(Duration::from_secs(60)).unwrap();
    kernels.extend(call_probe_every_way(&runtime));
    let made = PROBES_MADE.load(Ordering::SeqCst);
    assert_eq!(made, 2 * 6 + 2, "one per eager call, one per node");
    assert_eq!(
        PROBES_DROPPED.load(Ordering::SeqCst),
        2 * 6,
        "the eager calls' went with their handles; the nodes' kernels hold theirs"
    );

    let runtime = Arc::into_inner(runtime).expect("the caller let go of it");
    drop(runtime);
    let dropped = PROBES_DROPPED.load(Ordering::SeqCst);
    let kernels_left = kernels.iter().filter(|k| k.upgrade().is_some()).count();
    release.send(()).unwrap();
    caller.join().unwrap();
    assert_eq!(
        dropped, made,
        "dropped with the runtime, while both calling threads lived"
    );
    assert_eq!(kernels_left, 0, "the eager kernels went with the runtime");
}

#[test]
fn resource_handles_name_their_device_as_tensorflow_does() {
    let runtime = Runtime::new();
    let handles = [
        create(1),
        shared_counter(&runtime, "", "device_test", "shared"),
        shared_counter(&runtime, "", "", "private"),
    ];
    for handle in &handles {
        let handle: ResourceHandle = handle.scalar_value().unwrap();
        assert_eq!(handle.device, op_core::Device::CPU);
        // TensorFlow's `ResourceHandleProto.device` and `handle.device` in
        // Python: the full name of the device that made the handle.
        let full = "/job:localhost/replica:0/task:0/device:CPU:0";
        assert_eq!(handle.device.to_string(), full);
        assert!(
            format!("{handle:?}").starts_with(&format!("ResourceHandle {{ device: {full}, ")),
            "{handle:?}"
        );
    }
}
