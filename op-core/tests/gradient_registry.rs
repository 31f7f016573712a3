//! Registering gradients: `#[gradient]` collected at link time and found by
//! the registry, both of its instantiations callable (eagerly on the
//! runtime, symbolically on a builder of graph outputs), `not_differentiable`
//! in its three spellings, and the registry's gradient conflicts (a
//! gradient for an unknown op, two gradients for one op) over isolated
//! registries of `static` registrations.
//!
//! Every op here has a `GradTest>` name: gradient registrations are global,
//! and these must not meet another crate's.

use std::cell::RefCell;
use std::sync::Arc;

use op_core::gradient::{Gradient, GradientBuilder, GradientRegistration, Value};
use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::registry::{ConflictKind, KernelRegistration, OpRegistration, Registry};
use op_core::shape_inference::PartialShape;
use op_core::symbolic::{GraphId, NodeId, Output};
use op_core::{
    Code, DType, Element, Executor, FnKernel, InputTypes, KernelContext, OpCall, OpDefBuilder,
    Result, Runtime, Tensor, gradient, op, register_op,
};

// ---- Ops and gradients declared with the macros (global registry) ----

/// `x + y`, elementwise, same shapes.
#[op(name = "GradTest>Add", types(f32, f64))]
pub fn grad_test_add<T: Element + Copy + std::ops::Add<Output = T>>(
    x: ArrayViewD<'_, T>,
    y: ArrayViewD<'_, T>,
) -> ArrayD<T> {
    &x + &y
}

/// `x * y`, elementwise, same shapes.
#[op(name = "GradTest>Mul", types(f32, f64))]
pub fn grad_test_mul<T: Element + Copy + std::ops::Mul<Output = T>>(
    x: ArrayViewD<'_, T>,
    y: ArrayViewD<'_, T>,
) -> ArrayD<T> {
    &x * &y
}

/// `x * x`, elementwise.
#[op(name = "GradTest>Square", types(f32, f64))]
pub fn grad_test_square<T: Element + Copy + std::ops::Mul<Output = T>>(
    x: ArrayViewD<'_, T>,
) -> ArrayD<T> {
    x.mapv(|v| v * v)
}

/// d(x²) = 2x dx, built as `grad * (x + x)` out of the ops above.
#[gradient(op = GradTestSquare)]
fn square_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let two_x = GradTestAdd::call_with(g.input(0), g.input(0)).run_on(g)?;
    Ok([Some(GradTestMul::call_with(g.grad(0)?, two_x).run_on(g)?)])
}

/// The sum of a list of same-shaped tensors.
#[op(name = "GradTest>Sum", types(f32))]
pub fn grad_test_sum<T: Element + Copy + std::ops::Add<Output = T>>(
    xs: &[ArrayViewD<'_, T>],
) -> Result<ArrayD<T>> {
    let mut sum = xs
        .first()
        .ok_or_else(|| op_core::Error::invalid_argument("GradTest>Sum of nothing"))?
        .to_owned();
    for x in &xs[1..] {
        sum = &sum + x;
    }
    Ok(sum)
}

/// Each summand receives the incoming gradient as it is: one per input
/// tensor, so a `Vec`.
#[gradient(op = GradTestSum)]
fn sum_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    let grad = g.grad(0)?;
    Ok(g.inputs().iter().map(|_| Some(grad.clone())).collect())
}

/// `x` scaled by an integer `factor` (an input that never receives a
/// gradient).
#[register_op(
    name = "GradTest>Scale",
    inputs("x: float", "factor: int32"),
    outputs("y: float")
)]
pub struct GradTestScale;

/// Named by its registered name, as for an op declared elsewhere.
#[gradient(op = "GradTest>Scale")]
fn scale_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    Ok([Some(g.grad(0)?), None])
}

/// Rounds to buckets: not differentiable, declared with the flag.
#[register_op(
    name = "GradTest>Bucket",
    inputs("x: float"),
    outputs("y: int64"),
    not_differentiable
)]
pub struct GradTestBucket;

/// Rounds down: not differentiable, declared with `#[op]`'s flag.
#[op(name = "GradTest>Floor", not_differentiable)]
pub fn grad_test_floor(x: ArrayViewD<'_, f32>) -> ArrayD<f32> {
    x.mapv(f32::floor)
}

// An op declared by hand, and marked not differentiable elsewhere.
op_core::inventory::submit! {
    OpRegistration::new(
        "GradTest>Elsewhere",
        || OpDefBuilder::new("GradTest>Elsewhere").input("x: float").output("y: bool").build(),
        file!(),
        line!(),
    )
}
op_core::not_differentiable!("GradTest>Elsewhere");

/// The forward node of op `name` with inputs of these dtypes.
fn node(name: &str, inputs: &[InputTypes]) -> (Arc<op_core::OpDef>, op_core::OpInstance) {
    let entry = Registry::global().op(name).unwrap();
    (entry.def().clone(), entry.instance(inputs, &[]).unwrap())
}

#[test]
fn a_gradient_is_found_by_its_op_name_with_where_it_was_declared() {
    for op in ["GradTest>Square", "GradTest>Sum", "GradTest>Scale"] {
        let registration = Registry::global().gradient(op).unwrap().expect(op);
        assert_eq!(registration.op, op);
        assert!(registration.functions.is_some(), "{op}");
        assert_eq!(registration.file, file!());
        assert!(registration.location().starts_with(file!()));
    }
}

#[test]
fn an_op_without_a_gradient_has_none() {
    let registry = Registry::global();
    assert!(registry.get("GradTest>Add").is_some());
    assert!(registry.gradient("GradTest>Add").unwrap().is_none());
    assert!(registry.gradient("GradTest>NoSuchOp").unwrap().is_none());
}

#[test]
fn the_eager_gradient_runs_its_ops_at_once_on_the_runtime() {
    let (def, node) = node("GradTest>Square", &[DType::F32.into()]);
    let x = Tensor::from_vec([3], vec![1.0f32, -2.0, 3.0]).unwrap();
    let y = GradTestSquare::call(x.clone()).run().unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), [1.0, 4.0, 9.0]);
    let dy = Tensor::from_vec([3], vec![1.0f32, 1.0, 0.5]).unwrap();
    let (inputs, outputs, grads) = ([x], [y], [Some(dy)]);
    let g = Gradient::new(Runtime::global(), &def, &node, &inputs, &outputs, &grads).unwrap();

    let functions = Registry::global()
        .gradient("GradTest>Square")
        .unwrap()
        .unwrap()
        .functions
        .unwrap();
    let dx = (functions.eager)(&g).unwrap();

    // 2x · dy
    assert_eq!(dx.len(), 1);
    let dx = dx[0].as_ref().expect("x is a float input");
    assert_eq!(dx.as_slice::<f32>().unwrap(), [2.0, -4.0, 3.0]);
}

#[test]
fn the_eager_gradient_works_for_every_type_the_op_has() {
    let (def, node) = node("GradTest>Square", &[DType::F64.into()]);
    let x = Tensor::from_vec([2], vec![0.25f64, -4.0]).unwrap();
    let y = GradTestSquare::call(x.clone()).run().unwrap();
    let (inputs, outputs, grads) = (
        [x],
        [y],
        [Some(Tensor::from_vec([2], vec![2.0f64, 1.0]).unwrap())],
    );
    let g = Gradient::new(Runtime::global(), &def, &node, &inputs, &outputs, &grads).unwrap();
    let grad = Registry::global()
        .gradient("GradTest>Square")
        .unwrap()
        .unwrap();
    let dx = (grad.functions.unwrap().eager)(&g).unwrap();
    assert_eq!(
        dx[0].as_ref().unwrap().as_slice::<f64>().unwrap(),
        [1.0, -8.0]
    );
}

#[test]
fn a_list_input_receives_one_gradient_per_tensor() {
    let (def, node) = node("GradTest>Sum", &[vec![DType::F32; 3].into()]);
    let xs: Vec<Tensor> = (0..3)
        .map(|i| Tensor::from_vec([2], vec![i as f32, 1.0]).unwrap())
        .collect();
    let y = GradTestSum::call(xs.clone()).run().unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), [3.0, 3.0]);
    let (outputs, grads) = (
        [y],
        [Some(Tensor::from_vec([2], vec![0.5f32, -1.0]).unwrap())],
    );
    let g = Gradient::new(Runtime::global(), &def, &node, &xs, &outputs, &grads).unwrap();
    let grad = Registry::global()
        .gradient("GradTest>Sum")
        .unwrap()
        .unwrap();
    let dxs = (grad.functions.unwrap().eager)(&g).unwrap();
    assert_eq!(dxs.len(), 3);
    for dx in dxs {
        assert_eq!(dx.unwrap().as_slice::<f32>().unwrap(), [0.5, -1.0]);
    }
}

#[test]
fn an_input_that_receives_no_gradient_gets_none() {
    let (def, node) = node("GradTest>Scale", &[DType::F32.into(), DType::I32.into()]);
    let inputs = [Tensor::scalar(1.5f32), Tensor::scalar(2i32)];
    let (outputs, grads) = ([Tensor::scalar(3.0f32)], [Some(Tensor::scalar(0.5f32))]);
    let g = Gradient::new(Runtime::global(), &def, &node, &inputs, &outputs, &grads).unwrap();
    let grad = Registry::global()
        .gradient("GradTest>Scale")
        .unwrap()
        .unwrap();
    let dx = (grad.functions.unwrap().eager)(&g).unwrap();
    assert_eq!(dx.len(), 2);
    assert_eq!(dx[0].as_ref().unwrap().scalar_value::<f32>().unwrap(), 0.5);
    assert!(dx[1].is_none());
}

/// A builder of graph outputs that records what it is asked to build: the
/// symbolic mode, without a graph.
struct Recorder {
    graph: GraphId,
    built: RefCell<Vec<(String, Vec<Output>, Output)>>,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            graph: GraphId::unique(),
            built: RefCell::new(Vec::new()),
        }
    }

    /// A value of this builder that no op made (a forward input, say).
    fn value(&self, index: u32) -> Output {
        NodeId::new(self.graph, index).output(0)
    }
}

impl Executor for Recorder {
    type Value = Output;

    fn execute(&self, call: OpCall<'_, Output>) -> Result<Vec<Output>> {
        let mut built = self.built.borrow_mut();
        let output = NodeId::new(self.graph, 1000 + built.len() as u32).output(0);
        built.push((call.op().to_owned(), call.inputs().to_vec(), output));
        Ok(vec![output])
    }

    fn execute_grouped(&self, call: OpCall<'_, Output>) -> Result<Vec<Vec<Output>>> {
        Ok(vec![self.execute(call)?])
    }
}

impl GradientBuilder for Recorder {
    fn constant(&self, _: Tensor) -> Result<Output> {
        Err(op_core::Error::unimplemented("no constants in this test"))
    }

    fn dtype(&self, _: &Output) -> Result<DType> {
        Ok(DType::F32)
    }

    fn shape(&self, _: &Output) -> Result<PartialShape> {
        Ok(PartialShape::unknown())
    }
}

#[test]
fn the_symbolic_gradient_builds_the_same_ops_on_graph_outputs() {
    let (def, node) = node("GradTest>Square", &[DType::F32.into()]);
    let recorder = Recorder::new();
    let (x, y, dy) = (recorder.value(0), recorder.value(1), recorder.value(2));
    let (inputs, outputs, grads) = ([x], [y], [Some(dy)]);
    let g = Gradient::new(&recorder, &def, &node, &inputs, &outputs, &grads).unwrap();
    let grad = Registry::global()
        .gradient("GradTest>Square")
        .unwrap()
        .unwrap();

    let dx = (grad.functions.unwrap().symbolic)(&g).unwrap();

    let built = recorder.built.borrow();
    let [(add, add_inputs, two_x), (mul, mul_inputs, product)] = &built[..] else {
        panic!("expected two ops, built {built:?}");
    };
    assert_eq!(
        (add.as_str(), &add_inputs[..]),
        ("GradTest>Add", &[x, x][..])
    );
    assert_eq!(
        (mul.as_str(), &mul_inputs[..]),
        ("GradTest>Mul", &[dy, *two_x][..])
    );
    assert_eq!(dx, [Some(*product)]);
}

#[test]
fn not_differentiable_in_each_spelling_registers_no_function() {
    for op in ["GradTest>Bucket", "GradTest>Floor", "GradTest>Elsewhere"] {
        let registration = Registry::global().gradient(op).unwrap().expect(op);
        assert!(registration.functions.is_none(), "{op}");
        assert_eq!(registration.file, file!(), "{op}");
    }
}

#[test]
fn the_registrations_of_this_program_do_not_conflict() {
    Registry::global().check().unwrap();
}

#[test]
fn the_listing_names_each_gradient_under_its_op() {
    let listing = Registry::global().to_string();
    let square = Registry::global()
        .gradient("GradTest>Square")
        .unwrap()
        .unwrap();
    let bucket = Registry::global()
        .gradient("GradTest>Bucket")
        .unwrap()
        .unwrap();
    assert!(
        listing.contains(&format!("\n    gradient  ({})\n", square.location())),
        "{listing}"
    );
    assert!(
        listing.contains(&format!(
            "\n    not differentiable  ({})\n",
            bucket.location()
        )),
        "{listing}"
    );
}

// ---- Conflicts, over isolated registries of `static` registrations ----

fn identity(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

/// Gives no gradients: enough for the registry, which never calls it.
fn no_gradients<V: Value>(_: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    Ok(Vec::new())
}

static SMOOTH: OpRegistration = OpRegistration::new(
    "Smooth",
    || {
        OpDefBuilder::new("Smooth")
            .input("x: float")
            .output("y: float")
            .build()
    },
    "smooth.rs",
    1,
);
static SMOOTH_KERNEL: KernelRegistration = KernelRegistration::new(
    "Smooth",
    op_core::DeviceType::Cpu,
    "smooth",
    |c| FnKernel::<()>::create(c, identity),
    "smooth.rs",
    2,
);
static SMOOTH_GRAD: GradientRegistration = GradientRegistration::new(
    "Smooth",
    no_gradients::<Tensor>,
    no_gradients::<Output>,
    "grads.rs",
    10,
);
static SMOOTH_GRAD_AGAIN: GradientRegistration = GradientRegistration::new(
    "Smooth",
    no_gradients::<Tensor>,
    no_gradients::<Output>,
    "more_grads.rs",
    20,
);
static SMOOTH_NOT_DIFFERENTIABLE: GradientRegistration =
    GradientRegistration::not_differentiable("Smooth", "marks.rs", 30);
static SMOTH_GRAD: GradientRegistration = GradientRegistration::new(
    "Smoth",
    no_gradients::<Tensor>,
    no_gradients::<Output>,
    "typo.rs",
    7,
);

fn smooth_with(gradients: &[&'static GradientRegistration]) -> Registry {
    Registry::new([&SMOOTH], [&SMOOTH_KERNEL]).with_gradients(gradients.iter().copied())
}

#[test]
fn a_gradient_of_an_isolated_registry_is_found() {
    let registry = smooth_with(&[&SMOOTH_GRAD]);
    registry.check().unwrap();
    let found = registry.gradient("Smooth").unwrap().unwrap();
    assert!(std::ptr::eq(found, &SMOOTH_GRAD));
    assert!(registry.to_string().contains(
        "\n  Smooth  (smooth.rs:1)\n    kernel smooth: device='cpu'\n    gradient  (grads.rs:10)\n"
    ));
}

#[test]
fn a_gradient_for_an_unknown_op_is_a_conflict_that_suggests_the_name() {
    let registry = smooth_with(&[&SMOTH_GRAD]);
    let [conflict] = registry.conflicts() else {
        panic!("{:?}", registry.conflicts());
    };
    assert_eq!(conflict.kind, ConflictKind::GradientForUnknownOp);
    assert_eq!(conflict.op, "Smoth");
    assert_eq!(
        conflict.message,
        "a gradient at typo.rs:7 is for op 'Smoth', which is not registered; did you mean 'Smooth'?"
    );
    assert!(registry.gradient("Smoth").unwrap().is_none());
    assert!(registry.gradient("Smooth").unwrap().is_none());
    let err = registry.check().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(err.message().contains(&conflict.message), "{err}");
}

#[test]
fn two_gradients_for_one_op_are_a_conflict_naming_both_locations() {
    // In either order: the registry sorts them.
    for gradients in [
        [&SMOOTH_GRAD, &SMOOTH_GRAD_AGAIN],
        [&SMOOTH_GRAD_AGAIN, &SMOOTH_GRAD],
    ] {
        let registry = smooth_with(&gradients);
        let [conflict] = registry.conflicts() else {
            panic!("{:?}", registry.conflicts());
        };
        assert_eq!(conflict.kind, ConflictKind::DuplicateGradient);
        assert!(conflict.kind.is_about_gradients());
        assert_eq!(
            conflict.message,
            "op 'Smooth' has two gradients: a gradient at grads.rs:10 and a gradient at more_grads.rs:20; remove one"
        );

        let err = registry.gradient("Smooth").unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition);
        assert!(err.message().contains("grads.rs:10"), "{err}");
        assert!(err.message().contains("more_grads.rs:20"), "{err}");

        let err = registry.check().unwrap_err();
        assert_eq!(
            err.message(),
            format!("1 registration conflict(s):\n  {}", conflict.message)
        );
        assert!(
            registry
                .to_string()
                .ends_with(&format!("1 conflict(s):\n  {}\n", conflict.message))
        );
    }
}

#[test]
fn a_gradient_and_a_not_differentiable_mark_for_one_op_conflict() {
    let registry = smooth_with(&[&SMOOTH_NOT_DIFFERENTIABLE, &SMOOTH_GRAD]);
    let [conflict] = registry.conflicts() else {
        panic!("{:?}", registry.conflicts());
    };
    assert_eq!(conflict.kind, ConflictKind::DuplicateGradient);
    assert_eq!(
        conflict.message,
        "op 'Smooth' has two gradients: a gradient at grads.rs:10 and a not_differentiable mark at marks.rs:30; remove one"
    );
}

#[test]
fn a_gradient_conflict_does_not_stop_the_op_from_running() {
    let registry = smooth_with(&[&SMOOTH_GRAD, &SMOOTH_GRAD_AGAIN, &SMOTH_GRAD]);
    assert_eq!(registry.conflicts().len(), 2);
    assert!(registry.op("Smooth").is_ok());
    let runtime = Runtime::with_registry(Arc::new(registry));
    let x = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
    let y = OpCall::new("Smooth").input(&x).run_on(&runtime).unwrap();
    assert_eq!(y, [x]);
}
