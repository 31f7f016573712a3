//! Ops for op-tf's Python tests, as a TensorFlow library
//! (`libop_tf_test_ops.so`): ops that fail on purpose, for which
//! `op-tf/python/tests/test_faults.py` checks that each failure is a clear
//! Python error and that TensorFlow goes on; and a counter kept by name,
//! for which `test_resources.py` checks name-based resources
//! (`container`, `shared_name`), an op kind that the shipped ops have only
//! under TensorFlow's own names.

use std::sync::atomic::{AtomicI64, Ordering};

use op_core::resource::{Resource, ResourceOpState};
use op_core::shape_inference::InferenceContext;
use op_core::{KernelConstruction, KernelContext, Result, Tensor, kernel, register_op};

op_tf::export!();
// And to ONNX Runtime (domain `op_tf_test_ops`), for op-onnx's fault tests.
op_onnx::export!();
// And to JAX, for op-jax's fault tests.
op_jax::export!();
// And to PyTorch (namespace `op_tf_test_ops`), for op-torch's fault tests.
op_torch::export!();

/// Panics in its kernel's run, naming its input's first element.
///
/// x: any float vector.
/// y: never made.
#[register_op(inputs("x: float"), outputs("y: float"), shape = "unchanged")]
pub struct PanicInCompute;

#[kernel(op = PanicInCompute)]
fn panic_in_compute(ctx: &mut KernelContext<'_>) -> Result<()> {
    let first = ctx
        .input_slice::<f32>(0)?
        .first()
        .copied()
        .unwrap_or_default();
    panic!("the kernel was given {first}")
}

/// Panics when its kernel is created.
///
/// x: any float tensor.
/// y: never made.
#[register_op(inputs("x: float"), outputs("y: float"), shape = "unchanged")]
pub struct PanicInConstruction;

/// The kernel of [`PanicInConstruction`].
pub struct PanicInConstructionKernel;

#[kernel(op = PanicInConstruction)]
impl PanicInConstructionKernel {
    fn new(_ctx: &KernelConstruction<'_>) -> Result<Self> {
        panic!("no kernel today")
    }

    fn compute(&self, _ctx: &mut KernelContext<'_>) -> Result<()> {
        Ok(())
    }
}

fn panicking_shape(_c: &mut InferenceContext<'_>) -> Result<()> {
    panic!("the shape function gave up")
}

/// Panics in its shape function, when a graph is built.
///
/// x: any float tensor.
/// y: `x`.
#[register_op(inputs("x: float"), outputs("y: float"), shape_fn = panicking_shape)]
pub struct PanicInShape;

#[kernel(op = PanicInShape)]
fn panic_in_shape(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.forward_input_to_output(0, 0).map(|_| ())
}

/// A count: the resource of [`NamedCounter`].
pub struct Counter(AtomicI64);

impl Resource for Counter {
    fn debug_string(&self) -> String {
        format!("Counter({})", self.0.load(Ordering::Relaxed))
    }
}

/// Makes a counter, or finds the one of this `container` and
/// `shared_name`; outputs its handle.
///
/// handle: a handle naming the counter when `shared_name` is set; else one
///   that owns a new counter.
/// container: the counter's container (empty: the default one).
/// shared_name: the counter's name (empty: a counter of its own).
#[register_op(
    name = "OpkitTest>NamedCounter",
    outputs("handle: resource"),
    attrs("container: string = ''", "shared_name: string = ''"),
    stateful,
    shape = "scalar"
)]
pub struct NamedCounter;

/// The kernel of [`NamedCounter`]: the counter found or made by
/// [`ResourceOpState`]'s rules.
pub struct NamedCounterKernel(ResourceOpState<Counter>);

#[kernel(op = NamedCounter)]
impl NamedCounterKernel {
    fn new(c: &KernelConstruction<'_>) -> Result<Self> {
        Ok(NamedCounterKernel(ResourceOpState::new(c, false)?))
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        self.0
            .set_handle_output(ctx, 0, || Ok(Counter(AtomicI64::new(0))))
    }
}

/// Adds one to a counter; outputs the new count.
///
/// counter: a counter's handle, from `OpkitTest>NamedCounter`.
/// count: the count after this call.
#[register_op(
    name = "OpkitTest>CounterIncrement",
    inputs("counter: resource"),
    outputs("count: int64"),
    stateful,
    shape = "scalar"
)]
pub struct CounterIncrement;

#[kernel(op = CounterIncrement)]
fn counter_increment(
    _ctx: &mut KernelContext<'_>,
    #[resource] counter: &Counter,
) -> Result<Tensor> {
    Ok(Tensor::scalar(
        counter.0.fetch_add(1, Ordering::Relaxed) + 1,
    ))
}

// ---- The guide's attr examples: declarations only, no kernels ----
//
// For `test_attrs.py`: their OpDefs in TensorFlow's registry against what
// the guide's C++ `REGISTER_OP`s give, and TensorFlow's wrappers checking
// their constraints and filling their defaults when a graph is built.

/// The guide's enum attr.
///
/// e: one of two strings.
#[register_op(name = "EnumExample", attrs("e: {'apple', 'orange'}"))]
pub struct EnumExample;

/// The guide's restricted type attr.
///
/// t: int32, float or bool.
#[register_op(name = "RestrictedTypeExample", attrs("t: {int32, float, bool}"))]
pub struct RestrictedTypeExample;

/// The guide's `numbertype` attr.
///
/// t: any number type.
#[register_op(name = "NumberType", attrs("t: numbertype"))]
pub struct NumberType;

/// The guide's number-or-bool attr.
///
/// t: any number type, or bool.
#[register_op(name = "NumberOrBooleanType", attrs("t: {numbertype, bool}"))]
pub struct NumberOrBooleanType;

/// The guide's int attr with a minimum.
///
/// a: at least 2.
#[register_op(name = "MinIntExample", attrs("a: int >= 2"))]
pub struct MinIntExample;

/// The guide's type-list attr with a minimum length.
///
/// a: at least three types, each int32 or float.
#[register_op(name = "TypeListExample", attrs("a: list({int32, float}) >= 3"))]
pub struct TypeListExample;

/// The guide's attr with a default.
///
/// i: any int, 0 unless given.
#[register_op(name = "AttrDefaultExample", attrs("i: int = 0"))]
pub struct AttrDefaultExample;

/// The guide's attr with a minimum and a default.
///
/// i: at least 1, 1 unless given.
#[register_op(name = "AttrConstraintAndDefaultExample", attrs("i: int >= 1 = 1"))]
pub struct AttrConstraintAndDefaultExample;

/// The guide's default of every attr type.
///
/// s: a string.
/// i: an int.
/// f: a float.
/// b: a bool.
/// ty: a type.
/// sh: a shape.
/// te: a tensor.
/// l_empty: a list of ints, empty.
/// l_int: a list of ints.
#[register_op(
    name = "AttrDefaultExampleForAllTypes",
    attrs(
        "s: string = 'foo'",
        "i: int = 0",
        "f: float = 1.0",
        "b: bool = true",
        "ty: type = DT_INT32",
        "sh: shape = { dim { size: 1 } dim { size: 2 } }",
        "te: tensor = { dtype: DT_INT32 int_val: 5 }",
        "l_empty: list(int) = []",
        "l_int: list(int) = [2, 3, 5, 7]"
    )
)]
pub struct AttrDefaultExampleForAllTypes;

/// The guide's inputs of built-in types.
///
/// integers: int32 values.
/// complex_numbers: complex64 values.
#[register_op(
    name = "BuiltInTypesExample",
    inputs("integers: int32", "complex_numbers: complex64")
)]
pub struct BuiltInTypesExample;
