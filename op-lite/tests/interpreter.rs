//! The interpreter: construction checks, the phases and their order,
//! arena sharing, temporaries and variables, inputs and outputs by index
//! and by name, and how kernel failures are reported.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{ModelBuilder, add, add_chain, assert_close, mul, resolver, resolver_of};
use op_core::{Code, DType, Error, Result};
use op_lite::kernel::{
    FnOp, InitContext, InvokeContext, LiteNode, LiteOp, PrepareContext, TemporaryLifetime,
};
use op_lite::model::{BuiltinOperator, Quantization};
use op_lite::{Interpreter, MutableOpResolver, lite_ensure};
use proptest::prelude::*;

fn allocated(model: &op_lite::Model, resolver: &MutableOpResolver) -> Interpreter {
    let mut interpreter = Interpreter::new(model, resolver).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter
}

#[test]
fn a_chain_of_adds_computes_what_direct_arithmetic_does() {
    let mut interpreter = allocated(&add_chain(10, 3), &resolver());
    interpreter.set_input(0, &[1.0f32, -2.0, 0.5]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [11.0, 8.0, 10.5]);
    // Again, with other inputs: nothing of the first run leaks.
    interpreter.set_input(0, &[0.0f32; 3]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [10.0; 3]);
}

#[test]
fn intermediates_whose_lifetimes_do_not_overlap_share_the_arena() {
    // 10 intermediates of 1 KiB between an input and an output: each is
    // live for two steps, so two buffers serve them all.
    let interpreter = allocated(&add_chain(11, 256), &resolver());
    assert_eq!(interpreter.arena_size(), 4 * 1024);
    // The constant lives in its own aligned block, not in the arena.
    assert_eq!(interpreter.constants_size(), 1024);
}

/// Counts of the phases a [`Probe`] went through, shared with the test.
#[derive(Default)]
struct Counts {
    init: AtomicUsize,
    prepare: AtomicUsize,
    invoke: AtomicUsize,
    drop: AtomicUsize,
}

/// A kernel that copies its input and counts its phases.
struct Probe(Arc<Counts>);

struct ProbeNode(Arc<Counts>);

impl LiteOp for Probe {
    fn init(&self, _ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>> {
        self.0.init.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(ProbeNode(self.0.clone())))
    }
}

impl LiteNode for ProbeNode {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        self.0.prepare.fetch_add(1, Ordering::Relaxed);
        let shape = ctx.input_shape(0)?;
        ctx.set_output_shape(0, shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        self.0.invoke.fetch_add(1, Ordering::Relaxed);
        let x = ctx.input::<f32>(0)?;
        ctx.output_mut::<f32>(0)?.copy_from_slice(x);
        Ok(())
    }
}

impl Drop for ProbeNode {
    fn drop(&mut self) {
        self.0.drop.fetch_add(1, Ordering::Relaxed);
    }
}

fn probe_chain() -> (op_lite::Model, MutableOpResolver, Arc<Counts>) {
    let model = ModelBuilder::chain(&["Probe", "Probe"], &[2]).build();
    let counts = Arc::new(Counts::default());
    (model, resolver_of("Probe", Probe(counts.clone())), counts)
}

#[test]
fn init_runs_once_per_node_prepare_once_per_plan_and_drop_frees_each_node() {
    let (model, resolver, counts) = probe_chain();
    let get = |c: &AtomicUsize| c.load(Ordering::Relaxed);
    let mut interpreter = Interpreter::new(&model, &resolver).unwrap();
    assert_eq!(get(&counts.init), 2);
    assert_eq!(get(&counts.prepare), 0);
    interpreter.allocate_tensors().unwrap();
    interpreter.allocate_tensors().unwrap();
    assert_eq!(
        get(&counts.prepare),
        2,
        "nothing changed: no second prepare"
    );
    interpreter.invoke().unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(get(&counts.invoke), 4);
    interpreter.resize_input_tensor(0, &[2]).unwrap();
    interpreter.allocate_tensors().unwrap();
    assert_eq!(get(&counts.prepare), 2, "the same shape is no resize");
    interpreter.resize_input_tensor(0, &[5]).unwrap();
    assert_eq!(
        interpreter.invoke().unwrap_err().code(),
        Code::FailedPrecondition,
        "a resize needs allocate_tensors before invoke"
    );
    interpreter.allocate_tensors().unwrap();
    assert_eq!(get(&counts.prepare), 4);
    assert_eq!(interpreter.output_shape(0).unwrap(), [5]);
    assert_eq!(get(&counts.init), 2, "init never runs again");
    drop(interpreter);
    assert_eq!(get(&counts.drop), 2);
}

#[test]
fn invoke_before_allocate_tensors_is_a_failed_precondition() {
    let mut interpreter = Interpreter::new(&add_chain(1, 2), &resolver()).unwrap();
    let err = interpreter.invoke().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message()
            .starts_with("Invoke called on model that is not ready")
    );
    let err = interpreter.input_mut::<f32>(0).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_eq!(
        err.message(),
        "tensor 0 ('x') has no memory yet: call allocate_tensors() first"
    );
}

#[test]
fn inputs_and_outputs_are_found_by_tensor_name_or_signature_name() {
    let mut b = ModelBuilder::new();
    let a = b.f32("serving_default_a:0", &[1]);
    let c = b.f32("serving_default_b:0", &[1]);
    let y = b.f32("StatefulPartitionedCall:0", &[1]);
    b.builtin(BuiltinOperator::ADD, 1, &[a, c], &[y]);
    b.input(a).input(c).output(y);
    b.signature(&[("a", a), ("b", c)], &[("sum", y)]);
    let mut interpreter = allocated(&b.build(), &resolver());
    assert_eq!(interpreter.input_index("serving_default_b:0").unwrap(), 1);
    assert_eq!(interpreter.input_index("b").unwrap(), 1);
    assert_eq!(interpreter.output_index("sum").unwrap(), 0);
    assert_eq!(interpreter.input_name(0).unwrap(), "serving_default_a:0");
    let err = interpreter.input_index("c").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        err.message(),
        "the model has no input named 'c' (its inputs are 'serving_default_a:0', \
         'serving_default_b:0', 'a', 'b'); did you mean 'a'?"
    );
    let (ia, ib) = (
        interpreter.input_index("a").unwrap(),
        interpreter.input_index("b").unwrap(),
    );
    interpreter.set_input(ia, &[2.0f32]).unwrap();
    interpreter.set_input(ib, &[3.0f32]).unwrap();
    interpreter.invoke().unwrap();
    let sum = interpreter.output_index("sum").unwrap();
    assert_eq!(interpreter.output::<f32>(sum).unwrap(), [5.0]);
}

#[test]
fn reading_or_writing_with_the_wrong_dtype_size_or_index_is_an_error() {
    let mut interpreter = allocated(&add_chain(1, 3), &resolver());
    let err = interpreter.input_mut::<i32>(0).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "input 0 ('x') has dtype float, not int32");
    let err = interpreter.output::<f64>(0).unwrap_err();
    assert_eq!(err.message(), "output 0 ('y') has dtype float, not double");
    let err = interpreter.set_input(0, &[1.0f32; 4]).unwrap_err();
    assert_eq!(
        err.message(),
        "input 0 ('x') of shape [3] holds 3 elements, not 4"
    );
    let err = interpreter.input::<f32>(1).unwrap_err();
    assert_eq!(
        err.message(),
        "input 1 is out of range: the model has 1 input"
    );
    assert_eq!(interpreter.output_bytes(0).unwrap().len(), 12);
    assert_eq!(interpreter.input_dtype(0).unwrap(), DType::F32);
}

#[test]
fn a_missing_builtin_names_the_op_and_version_and_all_missing_ops_are_listed() {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[1]);
    let [t, u, v] = ["t", "u", "v"].map(|n| b.f32(n, &[1]));
    b.builtin(BuiltinOperator::CONV_2D, 2, &[x], &[t]);
    b.builtin(BuiltinOperator::CONV_2D, 2, &[t], &[u]);
    b.custom("Sin", &[u], &[v]);
    b.input(x).output(v);
    let mut only_add = MutableOpResolver::new();
    only_add.add_builtin(BuiltinOperator::ADD, common::add_op());
    let err = Interpreter::new(&b.build(), &only_add).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let lines: Vec<&str> = err.message().lines().collect();
    assert_eq!(
        lines,
        [
            "Didn't find op for builtin opcode 'CONV_2D' version '2' (node 0). The resolver has no kernel for CONV_2D.",
            "Didn't find custom operator for name 'Sin' (version 1, node 2). No custom operators are \
             registered: add it with MutableOpResolver::add_custom.",
        ]
    );
}

#[test]
fn quantized_tensors_and_unsupported_dtypes_are_rejected_naming_the_tensor() {
    let mut b = ModelBuilder::new();
    let x = b.tensor("image", DType::U8, &[4]);
    let y = b.f32("y", &[4]);
    b.custom("Sin", &[x], &[y]);
    b.input(x).output(y);
    b.model_mut().subgraphs[0].tensors[0].quantization = Some(Quantization {
        scale: vec![0.5],
        zero_point: vec![3],
        quantized_dimension: 0,
    });
    let err = Interpreter::new(&b.build(), &resolver()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert_eq!(
        err.message(),
        "tensor 0 ('image'), input 0 of node 0 (Sin), is quantized (scale [0.5], zero point [3]): \
         quantized models are not supported by this runtime; convert the model without \
         quantization"
    );
    // Empty quantization parameters, as converters write for float models,
    // are no quantization.
    b.model_mut().subgraphs[0].tensors[0].quantization = Some(Quantization::default());
    assert!(Interpreter::new(&b.build(), &resolver()).is_ok());

    b.model_mut().subgraphs[0].tensors[0].dtype = DType::String;
    let err = Interpreter::new(&b.build(), &resolver()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert_eq!(
        err.message(),
        "tensor 0 ('image') has dtype string, which this runtime cannot hold (only fixed-size, \
         unquantized dtypes)"
    );
}

/// A model with one ADD node, `y = x + c`, for the tests that break it.
fn one_add() -> ModelBuilder {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2]);
    let c = b.constant("c", &[2], &[1.0, 2.0]);
    let y = b.f32("y", &[2]);
    b.builtin(BuiltinOperator::ADD, 1, &[x, c], &[y]);
    b.input(x).output(y);
    b
}

/// A change that breaks a model.
type Breaking = fn(&mut op_lite::Model);

/// The message of the error `Interpreter::new` gives after `breaking` the
/// one-ADD model.
fn construction_error(breaking: impl FnOnce(&mut op_lite::Model)) -> String {
    let mut b = one_add();
    breaking(b.model_mut());
    let err = Interpreter::new(&b.build(), &resolver()).unwrap_err();
    format!("{}: {}", err.code(), err.message())
}

#[test]
fn malformed_subgraphs_are_errors_naming_the_node_and_the_tensor() {
    assert!(Interpreter::new(&one_add().build(), &resolver()).is_ok());
    let cases: [(Breaking, &str); 10] = [
        (
            |m| m.subgraphs.clear(),
            "InvalidArgument: the model has no subgraphs",
        ),
        (
            |m| m.subgraphs[0].operators[0].inputs[0] = Some(9),
            "InvalidArgument: node 0 names tensor 9, but the subgraph has 3 tensors",
        ),
        (
            |m| m.subgraphs[0].operators[0].opcode_index = 4,
            "InvalidArgument: node 0 uses operator code 4, but the model has 1 operator code",
        ),
        (
            |m| m.subgraphs[0].inputs.clear(),
            "InvalidArgument: node 0 reads tensor 0 ('x'), which no earlier node writes and which \
             is not a constant, a subgraph input or a variable",
        ),
        (
            |m| m.subgraphs[0].operators[0].outputs = vec![1],
            "InvalidArgument: node 0 writes tensor 1 ('c'), which is a constant",
        ),
        (
            |m| {
                let again = m.subgraphs[0].operators[0].clone();
                m.subgraphs[0].operators.push(again);
            },
            "InvalidArgument: node 1 writes tensor 2 ('y'), which is already written by node 0",
        ),
        (
            |m| m.subgraphs[0].outputs.push(7),
            "InvalidArgument: subgraph output 1 is tensor 7, but the subgraph has 3 tensors",
        ),
        (
            |m| m.buffers[1].data.pop().map(drop).unwrap_or(()),
            "InvalidArgument: tensor 1 ('c') of shape [2] and dtype float needs 8 bytes, but its \
             buffer 1 holds 7",
        ),
        (
            |m| m.subgraphs[0].tensors[1].buffer = 5,
            "InvalidArgument: tensor 1 ('c') names buffer 5, but the model has 2 buffers",
        ),
        (
            |m| m.subgraphs[0].tensors[0].shape = vec![usize::MAX, 2],
            "InvalidArgument: tensor 0 ('x') of shape [18446744073709551615, 2] and dtype float is \
             larger than the address space",
        ),
    ];
    for (breaking, expected) in cases {
        assert_eq!(construction_error(breaking), expected);
    }
}

#[test]
fn an_output_no_node_writes_and_a_node_that_writes_its_input_are_errors() {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[1]);
    let y = b.f32("y", &[1]);
    let z = b.f32("z", &[1]);
    b.custom("Sin", &[x], &[y]);
    b.input(x).output(y).output(z);
    let err = Interpreter::new(&b.build(), &resolver()).unwrap_err();
    assert_eq!(
        err.message(),
        "subgraph output 1 is tensor 2 ('z'), which no node writes"
    );
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[1]);
    let y = b.f32("y", &[1]);
    b.custom("Sin", &[x], &[y]);
    b.custom("Sin", &[x], &[x]);
    b.input(x).output(y);
    let err = Interpreter::new(&b.build(), &resolver()).unwrap_err();
    assert_eq!(
        err.message(),
        "node 1 writes tensor 0 ('x'), which is a subgraph input"
    );
}

/// Fails in invoke when its input's first element is negative, panics
/// when it is NaN; copies otherwise.
fn picky_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let x = ctx.input::<f32>(0)?;
    assert!(!x[0].is_nan(), "a NaN reached the picky kernel");
    lite_ensure!(ctx, x[0] >= 0.0);
    ctx.output_mut::<f32>(0)?.copy_from_slice(x);
    Ok(())
}

fn same_shape_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    let shape = ctx.input_shape(0)?;
    ctx.set_output_shape(0, shape)
}

fn picky_model() -> (op_lite::Model, MutableOpResolver) {
    let b = ModelBuilder::chain(&["Sin", "Picky"], &[1]);
    let mut resolver = resolver();
    resolver.add_custom("Picky", FnOp::new(same_shape_prepare, picky_invoke));
    (b.build(), resolver)
}

#[test]
fn a_kernel_error_in_invoke_is_an_error_framed_with_the_node() {
    let (model, resolver) = picky_model();
    let mut interpreter = allocated(&model, &resolver);
    interpreter.set_input(0, &[-1.0f32]).unwrap();
    let err = interpreter.invoke().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().starts_with("op-lite/tests/interpreter.rs:"),
        "{err}"
    );
    assert!(
        err.message().ends_with(" x[0] >= 0.0 was not true."),
        "{err}"
    );
    assert_eq!(err.context(), ["Node number 1 (Picky) failed to invoke."]);
    // An error is not a panic: the interpreter stays ready.
    interpreter.set_input(0, &[1.0f32]).unwrap();
    interpreter.invoke().unwrap();
    assert_close(interpreter.output::<f32>(0).unwrap(), &[1.0f32.sin()]);
}

#[test]
fn a_panicking_kernel_is_contained_and_reported_as_internal_naming_the_node() {
    let (model, resolver) = picky_model();
    let mut interpreter = allocated(&model, &resolver);
    interpreter.set_input(0, &[f32::NAN]).unwrap();
    let err = interpreter.invoke().unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert_eq!(
        err.message(),
        "the kernel of node 1 (Picky) panicked in invoke: a NaN reached the picky kernel"
    );
    assert_eq!(err.context(), ["Node number 1 (Picky) failed to invoke."]);
    // The kernel's state is suspect: prepare again before the next invoke.
    assert_eq!(
        interpreter.invoke().unwrap_err().code(),
        Code::FailedPrecondition
    );
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[0.5f32]).unwrap();
    interpreter.invoke().unwrap();
    assert_close(interpreter.output::<f32>(0).unwrap(), &[0.5f32.sin()]);
}

/// Panics in prepare.
fn panicking_prepare(_: &mut PrepareContext<'_>) -> Result<()> {
    panic!("prepare went wrong: {}", 42)
}

/// Fails in init unless its options have a float `alpha`.
struct Scale;

struct ScaleNode {
    alpha: f32,
}

impl LiteOp for Scale {
    fn init(&self, ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>> {
        let alpha = ctx.option::<f32>("alpha")?;
        if ctx.option_or("negate", false)? {
            return Ok(Box::new(ScaleNode { alpha: -alpha }));
        }
        Ok(Box::new(ScaleNode { alpha }))
    }
}

impl LiteNode for ScaleNode {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        same_shape_prepare(ctx)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let x = ctx.input::<f32>(0)?;
        for (y, x) in ctx.output_mut::<f32>(0)?.iter_mut().zip(x) {
            *y = self.alpha * x;
        }
        Ok(())
    }
}

fn scale_model(options: Vec<u8>) -> op_lite::Model {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2]);
    let y = b.f32("y", &[2]);
    b.custom_with("Scale", &[x], &[y], options);
    b.input(x).output(y);
    b.build()
}

fn flexbuffer_map(build: impl FnOnce(&mut flexbuffers::MapBuilder<'_>)) -> Vec<u8> {
    let mut builder = flexbuffers::Builder::default();
    let mut map = builder.start_map();
    build(&mut map);
    map.end_map();
    builder.view().to_vec()
}

#[test]
fn custom_options_are_read_as_typed_values_at_init() {
    let resolver = resolver_of("Scale", Scale);
    let options = flexbuffer_map(|m| {
        m.push("alpha", 2.5f32);
        m.push("negate", true);
    });
    let mut interpreter = allocated(&scale_model(options), &resolver);
    interpreter.set_input(0, &[1.0f32, -2.0]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [-2.5, 5.0]);
}

#[test]
fn a_custom_option_of_the_wrong_type_or_missing_names_the_option_the_type_and_the_node() {
    let resolver = resolver_of("Scale", Scale);
    let options = flexbuffer_map(|m| m.push("alpha", "two"));
    let err = Interpreter::new(&scale_model(options), &resolver).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "custom option 'alpha' is a string ('two'), expected a float (f32)"
    );
    assert_eq!(
        err.context(),
        ["Node number 0 (Scale) failed to initialize."]
    );

    let options = flexbuffer_map(|m| m.push("alhpa", 1.0f32));
    let err = Interpreter::new(&scale_model(options), &resolver).unwrap_err();
    assert_eq!(
        err.message(),
        "custom option 'alpha' is missing (the options are 'alhpa'); did you mean 'alhpa'?"
    );

    let err = Interpreter::new(&scale_model(vec![1, 2, 3]), &resolver).unwrap_err();
    assert!(
        err.message()
            .starts_with("custom options (3 bytes) are not a valid flexbuffer map"),
        "{err}"
    );
    assert_eq!(
        err.context(),
        ["Node number 0 (Scale) failed to initialize."]
    );
}

#[test]
fn a_panic_in_prepare_is_contained_too() {
    let b = ModelBuilder::unary("Bad", &[1]);
    let resolver = resolver_of("Bad", FnOp::new(panicking_prepare, picky_invoke));
    let mut interpreter = Interpreter::new(&b.build(), &resolver).unwrap();
    let err = interpreter.allocate_tensors().unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert_eq!(
        err.message(),
        "the kernel of node 0 (Bad) panicked in prepare: prepare went wrong: 42"
    );
    assert_eq!(err.context(), ["Node number 0 (Bad) failed to prepare."]);
}

/// Counts its invokes in a persistent temporary and squares its input
/// through a scratch one: `y = x * x + count`.
fn counter_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    let shape = ctx.input_shape(0)?;
    let scratch = ctx.add_temporary(DType::F32, shape, TemporaryLifetime::Scratch)?;
    let count = ctx.add_temporary(DType::I32, &[1], TemporaryLifetime::Persistent)?;
    lite_ensure!(ctx, (scratch, count) == (0, 1));
    ctx.set_output_shape(0, shape)
}

fn counter_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let x = ctx.input::<f32>(0)?;
    let scratch = ctx.temporary_mut::<f32>(0)?;
    let count = ctx.temporary_mut::<i32>(1)?;
    count[0] += 1;
    for (s, x) in scratch.iter_mut().zip(x) {
        *s = x * x;
    }
    for (y, s) in ctx.output_mut::<f32>(0)?.iter_mut().zip(&*scratch) {
        *y = s + count[0] as f32;
    }
    Ok(())
}

#[test]
fn persistent_temporaries_keep_their_values_between_invokes_and_scratch_ones_are_planned() {
    let b = ModelBuilder::chain(&["Counter", "Sin"], &[3]);
    let mut resolver = resolver();
    resolver.add_custom("Counter", FnOp::new(counter_prepare, counter_invoke));
    let mut interpreter = allocated(&b.build(), &resolver);
    let xs = [1.0f32, 2.0, 3.0];
    for count in 1..=3 {
        interpreter.set_input(0, &xs).unwrap();
        interpreter.invoke().unwrap();
        let expected: Vec<f32> = xs.iter().map(|x| (x * x + count as f32).sin()).collect();
        assert_close(interpreter.output::<f32>(0).unwrap(), &expected);
    }
    // x, y and the counter persist, t lives across both nodes, the scratch
    // at node 0: all five are live at node 0, 64 bytes each.
    assert_eq!(interpreter.arena_size(), 5 * 64);
    // Planning again resets the persistent temporary.
    interpreter.resize_input_tensor(0, &[1]).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &[2.0f32]).unwrap();
    interpreter.invoke().unwrap();
    assert_close(interpreter.output::<f32>(0).unwrap(), &[5.0f32.sin()]);
}

/// `state += x; y = state`, with `state` a variable input.
fn accumulate_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let x = ctx.input::<f32>(1)?;
    let state = ctx.variable_mut::<f32>(0)?;
    for (s, x) in state.iter_mut().zip(x) {
        *s += x;
    }
    ctx.output_mut::<f32>(0)?.copy_from_slice(state);
    Ok(())
}

fn accumulate_model(initial: Option<&[f32]>) -> op_lite::Model {
    let mut b = ModelBuilder::new();
    let state = b.variable("state", &[2], initial);
    let x = b.f32("x", &[2]);
    let y = b.f32("y", &[2]);
    b.custom("Accumulate", &[state, x], &[y]);
    b.input(x).output(y);
    b.build()
}

#[test]
fn variables_start_from_their_buffer_and_keep_their_state_between_invokes() {
    let mut resolver = MutableOpResolver::new();
    resolver.add_custom(
        "Accumulate",
        FnOp::new(same_shape_prepare, accumulate_invoke),
    );
    let mut interpreter = allocated(&accumulate_model(Some(&[10.0, 20.0])), &resolver);
    interpreter.set_input(0, &[1.0f32, 2.0]).unwrap();
    interpreter.invoke().unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [12.0, 24.0]);

    let mut interpreter = allocated(&accumulate_model(None), &resolver);
    interpreter.set_input(0, &[1.0f32, 2.0]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [1.0, 2.0]);
}

/// Reads its variable input, then tries to write it.
fn read_then_write_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let _ = ctx.input::<f32>(0)?;
    ctx.variable_mut::<f32>(0)?;
    Ok(())
}

/// Takes its output twice.
fn output_twice_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let _first = ctx.output_mut::<f32>(0)?;
    ctx.output_mut::<f32>(0)?;
    Ok(())
}

/// Writes a non-variable input.
fn write_input_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    ctx.variable_mut::<f32>(1)?;
    Ok(())
}

#[test]
fn a_tensor_is_borrowed_for_the_invoke_and_conflicting_borrows_are_errors() {
    let cases: [(op_lite::kernel::InvokeFn, &str); 3] = [
        (
            read_then_write_invoke,
            "input 0 ('state') is already read as an input in this invoke",
        ),
        (
            output_twice_invoke,
            "output 0 ('y') is already taken for writing in this invoke",
        ),
        (
            write_input_invoke,
            "input 1 ('x') is not a variable tensor: only variables are written through inputs",
        ),
    ];
    for (invoke, expected) in cases {
        let mut resolver = MutableOpResolver::new();
        resolver.add_custom("Accumulate", FnOp::new(same_shape_prepare, invoke));
        let mut interpreter = allocated(&accumulate_model(None), &resolver);
        let err = interpreter.invoke().unwrap_err();
        assert_eq!(err.message(), expected);
        assert_eq!(
            err.context(),
            ["Node number 0 (Accumulate) failed to invoke."]
        );
        // The flags do not outlive the invoke: the same error again, not
        // a stale borrow.
        assert_eq!(interpreter.invoke().unwrap_err().message(), expected);
    }
}

/// Reads the target shape from its constant input 1 in prepare:
/// RESHAPE's way, and checks the constant is aligned.
fn reshape_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    lite_ensure!(ctx, ctx.is_constant_input(1)?);
    lite_ensure!(ctx, !ctx.is_constant_input(0)?);
    let shape = ctx.constant_input::<i32>(1)?;
    lite_ensure!(
        ctx,
        (shape.as_ptr() as usize).is_multiple_of(op_lite::arena::ALIGNMENT)
    );
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    ctx.set_output_shape(0, &dims)
}

fn copy_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let x = ctx.input_bytes(0)?;
    ctx.output_bytes_mut(0)?.copy_from_slice(x);
    Ok(())
}

#[test]
fn prepare_reads_constant_inputs_from_aligned_memory() {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[6]);
    let padding = b.with_data("padding", DType::U8, &[3], &[1, 2, 3]);
    let shape = b.with_data("shape", DType::I32, &[2], bytemuck::cast_slice(&[2i32, 3]));
    let y = b.f32("y", &[6]);
    b.builtin(BuiltinOperator::RESHAPE, 1, &[x, shape, padding], &[y]);
    b.input(x).output(y);
    let mut resolver = MutableOpResolver::new();
    resolver.add_builtin(
        BuiltinOperator::RESHAPE,
        FnOp::new(reshape_prepare, copy_invoke),
    );
    let mut interpreter = allocated(&b.build(), &resolver);
    assert_eq!(interpreter.output_shape(0).unwrap(), [2, 3]);
    interpreter
        .set_input(0, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(
        interpreter.output::<f32>(0).unwrap(),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
}

/// Checks what the node info says of an omitted optional input.
fn optional_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    lite_ensure!(
        ctx,
        ctx.num_inputs() == 3 && ctx.has_input(0) && !ctx.has_input(1)
    );
    lite_ensure!(ctx, !ctx.has_input(3), "past the end");
    let err = ctx.input_shape(1).unwrap_err();
    lite_ensure!(
        ctx,
        err.message() == "input 1 is an omitted optional input; check has_input(1) first",
        "{}",
        err.message()
    );
    let err = ctx.input_dtype(5).unwrap_err();
    lite_ensure!(
        ctx,
        err.message() == "input 5 is out of range: the node has 3 inputs",
        "{}",
        err.message()
    );
    let err = ctx.constant_input::<f32>(2).unwrap_err();
    lite_ensure!(
        ctx,
        err.message()
            == "input 2 ('x') is not a constant of the model: its value is known only at invoke",
        "{}",
        err.message()
    );
    same_shape_prepare(ctx)
}

#[test]
fn omitted_optional_inputs_and_out_of_range_indices_are_reported_to_the_kernel() {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2]);
    let y = b.f32("y", &[2]);
    b.custom_optional("Optional", &[Some(x), None, Some(x)], &[y]);
    b.input(x).output(y);
    let resolver = resolver_of("Optional", FnOp::new(optional_prepare, copy_invoke));
    let mut interpreter = allocated(&b.build(), &resolver);
    interpreter.set_input(0, &[1.0f32, 2.0]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [1.0, 2.0]);
}

#[test]
fn an_output_dtype_the_arena_cannot_hold_is_rejected_at_prepare() {
    fn to_string_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        ctx.set_output_dtype(0, DType::String)
    }
    let b = ModelBuilder::unary("ToString", &[2]);
    let resolver = resolver_of("ToString", FnOp::new(to_string_prepare, copy_invoke));
    let mut interpreter = Interpreter::new(&b.build(), &resolver).unwrap();
    let err = interpreter.allocate_tensors().unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert_eq!(
        err.message(),
        "output 0 ('y') has dtype string, which this runtime cannot hold (only fixed-size, \
         unquantized dtypes)"
    );
    assert_eq!(
        err.context(),
        ["Node number 0 (ToString) failed to prepare."]
    );
}

#[test]
fn strict_resizing_changes_only_the_dimensions_the_signature_leaves_open() {
    let mut b = ModelBuilder::unary("Sin", &[1, 3]);
    b.model_mut().subgraphs[0].tensors[0].shape_signature = Some(vec![-1, 3]);
    let mut interpreter = Interpreter::new(&b.build(), &resolver()).unwrap();
    interpreter.resize_input_tensor_strict(0, &[4, 3]).unwrap();
    let err = interpreter
        .resize_input_tensor_strict(0, &[4, 2])
        .unwrap_err();
    assert_eq!(
        err.message(),
        "input 0 ('x') cannot be resized to [4, 2]: its shape signature is [-1, 3]"
    );
    let err = interpreter
        .resize_input_tensor(0, &[usize::MAX, 2])
        .unwrap_err();
    assert!(err.message().ends_with("its size overflows"), "{err}");
    interpreter.allocate_tensors().unwrap();
    assert_eq!(interpreter.output_shape(0).unwrap(), [4, 3]);
}

#[test]
fn the_interpreter_can_move_to_another_thread() {
    fn assert_send<T: Send>(_: &T) {}
    let interpreter = allocated(&add_chain(2, 2), &resolver());
    assert_send(&interpreter);
    let handle = std::thread::spawn(move || {
        let mut interpreter = interpreter;
        interpreter.set_input(0, &[1.0f32, 2.0]).unwrap();
        interpreter.invoke().unwrap();
        interpreter.output::<f32>(0).unwrap().to_vec()
    });
    assert_eq!(handle.join().unwrap(), [3.0, 4.0]);
}

/// A graph of ADD and MUL nodes drawn at random: each node reads two
/// values (subgraph inputs, earlier nodes' outputs, or a constant) and the
/// outputs are the last node and any others drawn.
#[derive(Clone, Debug)]
struct RandomGraph {
    len: usize,
    inputs: usize,
    /// (is MUL, left operand, right operand); an operand indexes the values
    /// so far: inputs, then the constant, then node outputs.
    nodes: Vec<(bool, usize, usize)>,
    extra_outputs: Vec<usize>,
}

fn random_graph() -> impl Strategy<Value = RandomGraph> {
    (1usize..6, 1usize..4, 1usize..14).prop_flat_map(|(len, inputs, n)| {
        let nodes: Vec<_> = (0..n)
            .map(|k| {
                let values = inputs + 1 + k;
                (any::<bool>(), 0..values, 0..values)
            })
            .collect();
        (
            Just(len),
            Just(inputs),
            nodes,
            proptest::collection::vec(0..n, 0..3),
        )
            .prop_map(|(len, inputs, nodes, extra_outputs)| RandomGraph {
                len,
                inputs,
                nodes,
                extra_outputs,
            })
    })
}

impl RandomGraph {
    fn model(&self) -> op_lite::Model {
        let mut b = ModelBuilder::new();
        let mut values: Vec<usize> = (0..self.inputs)
            .map(|i| b.f32(&format!("in{i}"), &[self.len]))
            .collect();
        for &t in &values {
            b.input(t);
        }
        let constant: Vec<f32> = (0..self.len).map(|i| 0.25 * i as f32 - 0.5).collect();
        values.push(b.constant("c", &[self.len], &constant));
        for (k, &(is_mul, l, r)) in self.nodes.iter().enumerate() {
            let t = b.f32(&format!("n{k}"), &[self.len]);
            let op = if is_mul {
                BuiltinOperator::MUL
            } else {
                BuiltinOperator::ADD
            };
            b.builtin(op, 1, &[values[l], values[r]], &[t]);
            values.push(t);
        }
        let first_node = self.inputs + 1;
        let mut outputs = vec![self.nodes.len() - 1];
        for &k in &self.extra_outputs {
            if !outputs.contains(&k) {
                outputs.push(k);
            }
        }
        for k in outputs {
            b.output(values[first_node + k]);
        }
        b.build()
    }

    /// Each node's value, computed directly.
    fn evaluate(&self, inputs: &[Vec<f32>]) -> Vec<Vec<f32>> {
        let mut values: Vec<Vec<f32>> = inputs.to_vec();
        values.push((0..self.len).map(|i| 0.25 * i as f32 - 0.5).collect());
        for &(is_mul, l, r) in &self.nodes {
            let f = if is_mul { mul } else { add };
            let value = values[l]
                .iter()
                .zip(&values[r])
                .map(|(a, b)| f(*a, *b))
                .collect();
            values.push(value);
        }
        values.split_off(self.inputs + 1)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// However the arena is shared, every output equals direct arithmetic,
    /// on a first and a second invoke with other inputs.
    #[test]
    fn random_graphs_compute_what_direct_arithmetic_does(
        graph in random_graph(),
        seeds in proptest::collection::vec(-4.0f32..4.0, 2),
    ) {
        let model = graph.model();
        let mut interpreter = allocated(&model, &resolver());
        for seed in seeds {
            let inputs: Vec<Vec<f32>> = (0..graph.inputs)
                .map(|i| (0..graph.len).map(|j| seed + (i * 7 + j) as f32 * 0.5).collect())
                .collect();
            for (i, values) in inputs.iter().enumerate() {
                interpreter.set_input(i, values).unwrap();
            }
            interpreter.invoke().unwrap();
            let expected = graph.evaluate(&inputs);
            for (o, &t) in model.subgraphs[0].outputs.iter().enumerate() {
                let k: usize = model.subgraphs[0].tensors[t].name[1..].parse().unwrap();
                prop_assert_eq!(interpreter.output::<f32>(o).unwrap(), &expected[k][..]);
            }
        }
    }
}

/// Errors convert into a caller's own error type through `From`.
#[test]
fn lite_ensure_returns_into_any_error_that_converts_from_the_framework_s() {
    #[derive(Debug)]
    struct Mine(#[allow(dead_code)] Error);
    impl From<Error> for Mine {
        fn from(e: Error) -> Mine {
            Mine(e)
        }
    }
    fn check(ctx: &PrepareContext<'_>) -> std::result::Result<(), Mine> {
        lite_ensure!(ctx, ctx.num_inputs() == 7);
        Ok(())
    }
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        check(ctx).map_err(|Mine(e)| e)
    }
    let b = ModelBuilder::unary("Seven", &[1]);
    let resolver = resolver_of("Seven", FnOp::new(prepare, copy_invoke));
    let err = Interpreter::new(&b.build(), &resolver)
        .unwrap()
        .allocate_tensors()
        .unwrap_err();
    assert!(
        err.message()
            .ends_with("ctx.num_inputs() == 7 was not true."),
        "{err}"
    );
    assert_eq!(err.context(), ["Node number 0 (Seven) failed to prepare."]);
}

/// Fails `lite_ensure_types_eq!` on a float input.
fn wants_int_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    op_lite::lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::I32);
    Ok(())
}

/// Fails `lite_ensure_near!` unless its input has about one element.
fn near_one_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    let len = ctx.input_len(0)? as f64;
    op_lite::lite_ensure_near!(ctx, len, 1.0, 0.5);
    Ok(())
}

#[test]
fn the_ensure_macros_name_the_condition_and_both_values() {
    let cases: [(op_lite::kernel::PrepareFn, &str); 2] = [
        (
            wants_int_prepare,
            " ctx.input_dtype(0)? != DType::I32 (float != int32)",
        ),
        (near_one_prepare, " len not near 1.0 (3 != 1)"),
    ];
    for (prepare, expected) in cases {
        let model = ModelBuilder::unary("Check", &[3]).build();
        let resolver = resolver_of("Check", FnOp::new(prepare, copy_invoke));
        let err = Interpreter::new(&model, &resolver)
            .unwrap()
            .allocate_tensors()
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(
            err.message().starts_with("op-lite/tests/interpreter.rs:"),
            "{err}"
        );
        assert!(err.message().ends_with(expected), "{err}");
        assert_eq!(err.context(), ["Node number 0 (Check) failed to prepare."]);
    }
}

/// Panics in init.
struct PanicsInInit;

impl LiteOp for PanicsInInit {
    fn init(&self, _ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>> {
        panic!("no state for you")
    }
}

#[test]
fn a_panic_in_init_fails_construction_with_an_internal_error() {
    let model = ModelBuilder::unary("Init", &[1]).build();
    let err = Interpreter::new(&model, &resolver_of("Init", PanicsInInit)).unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert_eq!(
        err.message(),
        "the kernel of node 0 (Init) panicked in init: no state for you"
    );
    assert_eq!(
        err.context(),
        ["Node number 0 (Init) failed to initialize."]
    );
}

/// Sets its output to a shape whose element count overflows.
fn huge_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    ctx.set_output_shape(0, &[usize::MAX, 2])
}

/// Asks for its input's element count.
fn len_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    ctx.input_len(0)?;
    same_shape_prepare(ctx)
}

#[test]
fn a_shape_whose_size_overflows_is_an_error_in_the_next_prepare_and_at_planning() {
    let mut resolver = resolver_of("Huge", FnOp::new(huge_prepare, copy_invoke));
    resolver.add_custom("Len", FnOp::new(len_prepare, copy_invoke));
    let model = ModelBuilder::chain(&["Huge", "Len"], &[1]).build();
    let err = Interpreter::new(&model, &resolver)
        .unwrap()
        .allocate_tensors()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "input 0's shape [18446744073709551615, 2] has more elements than the address space"
    );
    assert_eq!(err.context(), ["Node number 1 (Len) failed to prepare."]);
    let model = ModelBuilder::unary("Huge", &[1]).build();
    let err = Interpreter::new(&model, &resolver)
        .unwrap()
        .allocate_tensors()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "tensor 1 ('y') of shape [18446744073709551615, 2] and dtype float is larger than the \
         address space"
    );
}
