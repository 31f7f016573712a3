//! Saved models keep every resource that can be saved: a resource-creating
//! node's resource (here a counter of this test's own, one per node, as
//! TensorFlow's `ResourceOpKernel` makes) is written with the model and
//! restored into the resource the loaded session makes for that node.

use std::sync::{Arc, Mutex};

use op_core::checkpoint::{self, Saveable};
use op_core::resource::{Resource, ResourceOpState};
use op_core::{
    Code, DType, KernelConstruction, KernelContext, Registry, Result, Runtime, Tensor, kernel,
    register_op,
};
use op_graph::saved_model::{self, Signature};
use op_graph::{Graph, NewNode, NodeId, Session};

/// A counter that can be saved when `saveable`.
struct Counter {
    count: Mutex<i64>,
    saveable: bool,
}

impl Resource for Counter {
    fn debug_string(&self) -> String {
        format!("Counter({})", self.count.lock().unwrap())
    }

    fn saveable(&self) -> Option<&dyn Saveable> {
        self.saveable.then_some(self as &dyn Saveable)
    }
}

impl Saveable for Counter {
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
        Ok(vec![(
            "count/value".into(),
            Tensor::scalar(*self.count.lock().unwrap()),
        )])
    }

    fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()> {
        let [count] = checkpoint::take_tensors(tensors, ["count/value"], "Counter", "counter")?;
        *self.count.lock().unwrap() = count.scalar_value()?;
        Ok(())
    }
}

#[register_op(
    name = "Test>SavedCounter",
    attrs(
        "saveable: bool = true",
        "container: string = ''",
        "shared_name: string = ''"
    ),
    outputs("handle: resource"),
    shape = "scalar",
    stateful
)]
struct SavedCounter;

struct SavedCounterKernel {
    state: ResourceOpState<Counter>,
    saveable: bool,
}

#[kernel(op = SavedCounter)]
impl SavedCounterKernel {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        Ok(SavedCounterKernel {
            state: ResourceOpState::new(c, false)?,
            saveable: c.get_attr("saveable")?,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let saveable = self.saveable;
        self.state.set_handle_output(ctx, 0, || {
            Ok(Counter {
                count: Mutex::new(0),
                saveable,
            })
        })
    }
}

/// Adds `by` to the counter and outputs its new value.
#[register_op(
    name = "Test>SavedCounterAdd",
    inputs("handle: resource", "by: int64"),
    outputs("count: int64"),
    shape = "scalar",
    stateful
)]
struct SavedCounterAdd;

#[kernel(op = SavedCounterAdd)]
fn saved_counter_add(ctx: &mut KernelContext<'_>, #[resource] handle: &Counter) -> Result<Tensor> {
    let by: i64 = ctx.input_scalar(1)?;
    let mut count = handle.count.lock().unwrap();
    *count += by;
    Ok(Tensor::scalar(*count))
}

/// `count = counter + by`, with a saveable counter `counter` and another,
/// `unsaved`, whose resource says it cannot be saved.
fn model() -> (Graph, NodeId) {
    op_kernels::link();
    let mut g = Graph::new();
    let by = g
        .add(
            NewNode::new("Placeholder")
                .name("by")
                .attr("dtype", DType::I64)
                .attr("shape", op_core::ShapeValue::from_sizes(&[])),
        )
        .unwrap();
    let counter = g
        .add(NewNode::new("Test>SavedCounter").name("counter"))
        .unwrap();
    let unsaved = g
        .add(
            NewNode::new("Test>SavedCounter")
                .name("scope/unsaved")
                .attr("saveable", false),
        )
        .unwrap();
    let count = g
        .add(
            NewNode::new("Test>SavedCounterAdd")
                .name("count")
                .input(counter.output(0))
                .input(by.output(0)),
        )
        .unwrap();
    g.add(
        NewNode::new("Test>SavedCounterAdd")
            .name("unsaved_count")
            .input(unsaved.output(0))
            .input(by.output(0)),
    )
    .unwrap();
    (g, count)
}

fn add(model: &saved_model::SavedModel, by: i64) -> (i64, i64) {
    let out = model
        .run("serving_default", [("by", Tensor::scalar(by))])
        .unwrap();
    (
        out["count"].scalar_value().unwrap(),
        out["unsaved"].scalar_value().unwrap(),
    )
}

fn signature() -> Signature {
    Signature::new()
        .input("by", "by")
        .output("count", "count")
        .output("unsaved", "unsaved_count")
}

#[test]
fn a_saveable_resource_is_saved_and_restored_with_the_model() {
    let (graph, _) = model();
    let session = Session::builder(graph)
        .runtime(Arc::new(Runtime::new()))
        .build()
        .unwrap();
    for by in [5i64, 7] {
        session
            .runner()
            .feed("by", Tensor::scalar(by))
            .fetch("count")
            .fetch("unsaved_count")
            .run()
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    saved_model::save(dir.path(), &session, [("serving_default", signature())]).unwrap();
    let saved = checkpoint::read(dir.path().join("resources.safetensors")).unwrap();
    assert_eq!(saved.keys().collect::<Vec<_>>(), ["counter:0/count/value"]);
    assert_eq!(saved["counter:0/count/value"], Tensor::scalar(12i64));

    // A fresh runtime: the saved counter goes on from 12, the other from 0.
    let model = saved_model::load(dir.path(), Registry::global()).unwrap();
    assert_eq!(model.resources, ["counter:0"]);
    assert_eq!(add(&model, 1), (13, 1));
    assert_eq!(add(&model, 1), (14, 2));
}

#[test]
fn damaged_resource_state_is_an_error_naming_it() {
    let (graph, _) = model();
    let session = Session::builder(graph)
        .runtime(Arc::new(Runtime::new()))
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    saved_model::save(dir.path(), &session, [("serving_default", signature())]).unwrap();
    let path = dir.path().join("resources.safetensors");
    for (tensors, expected) in [
        (
            vec![("nowhere:0/count/value", Tensor::scalar(1i64))],
            "resources.safetensors holds resource 'nowhere:0', which no resource-creating node",
        ),
        (
            vec![("scope/unsaved:0/count/value", Tensor::scalar(1i64))],
            "holds state for resource 'scope/unsaved:0', but the resource this session creates \
             for it cannot be restored",
        ),
        (
            vec![("counter", Tensor::scalar(1i64))],
            "which is not named <node>:<output>/<key>",
        ),
        (
            vec![("counter:0/count/value", Tensor::scalar(1.5f32))],
            "restoring resource 'counter:0'",
        ),
    ] {
        checkpoint::write(&path, tensors).unwrap();
        let e = saved_model::load(dir.path(), Registry::global()).unwrap_err();
        assert!(e.to_string().contains(expected), "{e}");
        assert!(e.to_string().contains("loading the saved model"), "{e}");
        assert_ne!(e.code(), Code::Internal, "{e}");
    }
    let at = path.clone();
    let model_dir = dir.path().to_path_buf();
    op_core::testing::files::assert_refuses_non_regular_files(&at, move || {
        saved_model::load(&model_dir, Registry::global()).map(drop)
    });
}
