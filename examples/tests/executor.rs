//! The executor seam, as a downstream crate uses it: the typed wrappers
//! that `#[register_op]` generates and `OpCall` run on any `Executor`.
//!
//! - `Recorder` is a decorator (as a tape will be): it records each call,
//!   then runs it eagerly on buffers it owns, through the public
//!   `OpCall::prepared` and `PreparedOp::run_into`.
//! - `SymbolicBuilder` is what a graph builder will be: values are symbols,
//!   nothing runs, every call becomes a recorded node.

use std::cell::RefCell;

use op_core::{AttrValue, DType, Executor, OpCall, Result, Runtime, Tensor};
use op_kernels::list::{IntListInputExample, PolymorphicListExample};
use op_kernels::zero_out::{ZeroOut, ZeroOutPolymorphic, ZeroOutPreserveIndex};

/// One call as an executor saw it.
#[derive(Debug, PartialEq)]
struct Recorded {
    op: String,
    node_name: Option<String>,
    input_groups: Vec<Option<usize>>,
    attrs: Vec<(String, AttrValue)>,
}

impl Recorded {
    fn of<V>(call: &OpCall<'_, V>) -> Self {
        Recorded {
            op: call.op().to_owned(),
            node_name: call.given_node_name().map(str::to_owned),
            input_groups: call.input_groups().collect(),
            attrs: call
                .attrs()
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.clone()))
                .collect(),
        }
    }
}

/// Records every call, with its input dtypes, then runs it on `runtime`
/// in output slots of its own.
struct Recorder<'r> {
    runtime: &'r Runtime,
    calls: RefCell<Vec<(Recorded, Vec<DType>)>>,
}

impl<'r> Recorder<'r> {
    fn new(runtime: &'r Runtime) -> Self {
        Recorder {
            runtime,
            calls: RefCell::default(),
        }
    }

    fn record(&self, call: &OpCall<'_>) {
        let dtypes = call.inputs().iter().map(Tensor::dtype).collect();
        self.calls.borrow_mut().push((Recorded::of(call), dtypes));
    }
}

impl Executor for Recorder<'_> {
    type Value = Tensor;

    fn execute(&self, call: OpCall<'_>) -> Result<Vec<Tensor>> {
        self.record(&call);
        let prepared = call.prepared(self.runtime)?;
        let mut inputs = call.into_inputs();
        let mut outputs = vec![None; prepared.instance().output_types().len()];
        prepared.run_into(&mut inputs, &mut outputs)?;
        Ok(outputs.into_iter().flatten().collect())
    }

    fn execute_grouped(&self, call: OpCall<'_>) -> Result<Vec<Vec<Tensor>>> {
        self.record(&call);
        self.runtime.execute_grouped(call)
    }
}

#[test]
fn a_recording_executor_sees_a_typed_wrappers_call_and_runs_it_on_its_own_slots() {
    let runtime = Runtime::new();
    let recorder = Recorder::new(&runtime);
    let x = Tensor::from_vec([3], vec![5.0f32, 6.0, 7.0]).unwrap();

    let zeroed = ZeroOutPolymorphic::call(&x)
        .node_name("zero")
        .run_on(&recorder)
        .unwrap();

    assert_eq!(zeroed.as_slice::<f32>().unwrap(), [5.0, 0.0, 0.0]);
    let calls = recorder.calls.borrow();
    assert_eq!(
        *calls,
        [(
            Recorded {
                op: "ZeroOutPolymorphic".into(),
                node_name: Some("zero".into()),
                input_groups: vec![None],
                attrs: vec![],
            },
            vec![DType::F32]
        )]
    );
}

#[test]
fn the_recorder_sees_list_inputs_and_list_outputs_grouped() {
    let runtime = Runtime::new();
    let recorder = Recorder::new(&runtime);
    let sum = IntListInputExample::call([Tensor::scalar(2i32), Tensor::scalar(3i32)])
        .run_on(&recorder)
        .unwrap();
    assert_eq!(sum.scalar_value::<i32>().unwrap(), 5);
    let same = PolymorphicListExample::call([Tensor::scalar(1.5f64), Tensor::scalar(7i64)])
        .run_on(&recorder)
        .unwrap();
    assert_eq!(same.len(), 2);
    assert_eq!(same[1].scalar_value::<i64>().unwrap(), 7);

    let calls = recorder.calls.borrow();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].0.op, "IntListInputExample");
    assert_eq!(calls[0].0.input_groups, [Some(2)]);
    assert_eq!(calls[0].1, [DType::I32; 2]);
    assert_eq!(calls[1].0.op, "PolymorphicListExample");
    assert_eq!(calls[1].0.input_groups, [Some(2)]);
    assert_eq!(calls[1].1, [DType::F64, DType::I64]);
}

#[test]
fn errors_pass_through_a_decorating_executor_unchanged() {
    let runtime = Runtime::new();
    let recorder = Recorder::new(&runtime);
    let direct = ZeroOut::call(Tensor::scalar(1.0f32))
        .run_on(&runtime)
        .unwrap_err();
    let recorded = ZeroOut::call(Tensor::scalar(1.0f32))
        .run_on(&recorder)
        .unwrap_err();
    assert_eq!(recorded.to_string(), direct.to_string());
    assert_eq!(recorder.calls.borrow().len(), 1);
}

/// A value of the symbolic builder: the node that made it and which of
/// its outputs it is.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Symbol {
    node: usize,
    output: usize,
}

/// Records calls on symbols and runs nothing, as a graph builder will.
#[derive(Default)]
struct SymbolicBuilder {
    nodes: RefCell<Vec<(Recorded, Vec<Symbol>)>>,
}

impl SymbolicBuilder {
    fn add(&self, call: OpCall<'_, Symbol>, outputs: usize) -> Vec<Symbol> {
        let mut nodes = self.nodes.borrow_mut();
        let node = nodes.len();
        nodes.push((Recorded::of(&call), call.into_inputs()));
        (0..outputs).map(|output| Symbol { node, output }).collect()
    }
}

impl Executor for SymbolicBuilder {
    type Value = Symbol;

    /// Every op here has one output (a real graph builder reads the
    /// op's definition).
    fn execute(&self, call: OpCall<'_, Symbol>) -> Result<Vec<Symbol>> {
        Ok(self.add(call, 1))
    }

    fn execute_grouped(&self, call: OpCall<'_, Symbol>) -> Result<Vec<Vec<Symbol>>> {
        Ok(vec![self.add(call, 1)])
    }
}

#[test]
fn the_same_wrapper_builds_symbolic_calls_that_run_nothing() {
    let builder = SymbolicBuilder::default();
    let input = Symbol {
        node: 99,
        output: 0,
    };
    let zeroed = ZeroOutPreserveIndex::call_with(input, 1)
        .node_name("z")
        .run_on(&builder)
        .unwrap();
    let again = ZeroOutPolymorphic::call_with(zeroed)
        .run_on(&builder)
        .unwrap();

    assert_eq!(zeroed, Symbol { node: 0, output: 0 });
    assert_eq!(again, Symbol { node: 1, output: 0 });
    let nodes = builder.nodes.borrow();
    assert_eq!(nodes[0].0.node_name.as_deref(), Some("z"));
    assert_eq!(nodes[0].0.op, "ZeroOutPreserveIndex");
    assert_eq!(
        nodes[0].0.attrs,
        [("preserve_index".to_owned(), AttrValue::Int(1))]
    );
    assert_eq!(nodes[0].1, [input]);
    assert_eq!(nodes[1].1, [zeroed]);
}

#[test]
fn op_call_runs_on_a_runtime_behind_a_pointer() {
    let runtime = std::sync::Arc::new(Runtime::new());
    let y = OpCall::new("ZeroOut")
        .input(Tensor::from_vec([2], vec![4i32, 5]).unwrap())
        .run_on(&runtime)
        .unwrap();
    assert_eq!(y[0].as_slice::<i32>().unwrap(), [4, 0]);
}
