//! The eager gradient tape: what it records (every entry point, watched
//! values only, variables on their own, its own thread only, only while
//! active), the gradients it computes (chains, several paths, several
//! targets and outputs, output gradients, unconnected sources), persistent
//! and nested tapes (second derivatives), values that share a buffer, and
//! its errors.
//!
//! The ops here are test-local (`Tape*`), with their kernels and
//! gradients: the standard ops' gradients are registered elsewhere, and a
//! second registration for one op would conflict.

use std::sync::Arc;

use op_autodiff::Unconnected;
use op_autodiff::tape::{GradientOptions, GradientTape, TapeOptions};
use op_core::gradient::{Gradient, Value};
use op_core::{
    Code, DType, Element, Executor, KernelContext, OpCall, PreparedOp, Registry, Result, Runtime,
    Tensor, kernel, register_op,
};
use op_kernels::variable::Variable;
use proptest::prelude::*;

#[macro_use]
mod common;

/// The float types the test kernels run on.
trait Real: Element + Copy + std::ops::Mul<Output = Self> {
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn of(value: f32) -> Self;
}

impl Real for f32 {
    fn sin(self) -> Self {
        f32::sin(self)
    }
    fn cos(self) -> Self {
        f32::cos(self)
    }
    fn of(value: f32) -> Self {
        value
    }
}

impl Real for f64 {
    fn sin(self) -> Self {
        f64::sin(self)
    }
    fn cos(self) -> Self {
        f64::cos(self)
    }
    fn of(value: f32) -> Self {
        f64::from(value)
    }
}

unary_ops! {
    /// `y = x * x`.
    TapeSquare;
    /// `y = x * x * x`.
    TapeCube;
    /// `y = sin x`.
    TapeSin;
    /// `y = cos x`.
    TapeCos;
    /// `y = x`, in `x`'s own buffer (as `Identity` does).
    TapeForward;
    /// `y = x`, with no gradient registered.
    TapeNoGrad;
    /// `y = x`, whose gradient function returns two gradients for its one
    /// input.
    TapeWrongCount;
    /// `y = x`, whose gradient function returns a gradient of another shape.
    TapeWrongShape;
    /// `y = x * x`, computed by running `TapeMul` from inside the kernel: a
    /// run that begins and ends within another's.
    TapeSquareByMul;
}

identity_kernels! {
    TapeNoGrad => tape_no_grad,
    TapeWrongCount => tape_wrong_count,
    TapeWrongShape => tape_wrong_shape,
    TapeBlock => tape_block,
}

#[kernel(op = TapeSquare, types(f32, f64))]
fn tape_square<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &T| *x * *x)
}

/// d x² = 2 x dx
#[op_core::gradient(op = TapeSquare)]
fn tape_square_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let g_x = TapeMul::call_with(g.grad(0)?, g.input(0)).run_on(g)?;
    Ok([Some(TapeScale::call_with(g_x, 2.0).run_on(g)?)])
}

#[kernel(op = TapeCube, types(f32, f64))]
fn tape_cube<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &T| *x * *x * *x)
}

/// d x³ = 3 x² dx
#[op_core::gradient(op = TapeCube)]
fn tape_cube_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let square = TapeSquare::call_with(g.input(0)).run_on(g)?;
    let g_square = TapeMul::call_with(g.grad(0)?, square).run_on(g)?;
    Ok([Some(TapeScale::call_with(g_square, 3.0).run_on(g)?)])
}

/// `z = x * y`, elementwise.
#[register_op(
    attrs("T: {float, double}"),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "merge_inputs"
)]
struct TapeMul;

#[kernel(op = TapeMul, types(f32, f64))]
fn tape_mul<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.binary([0, 1], 0, 1, |x: &T, y: &T| *x * *y)
}

/// d(x y) = y dx + x dy
#[op_core::gradient(op = TapeMul)]
fn tape_mul_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let grad = g.grad(0)?;
    Ok([
        Some(TapeMul::call_with(grad.clone(), g.input(1)).run_on(g)?),
        Some(TapeMul::call_with(grad, g.input(0)).run_on(g)?),
    ])
}

/// `y = scale * x`.
#[register_op(
    attrs("T: {float, double}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
struct TapeScale {
    scale: f32,
}

#[kernel(op = TapeScale, types(f32, f64))]
fn tape_scale<T: Real>(ctx: &mut KernelContext<'_>, attrs: &TapeScale) -> Result<()> {
    let scale = T::of(attrs.scale);
    ctx.unary(0, 0, 1, move |x: &T| scale * *x)
}

/// d(s x) = s dx
#[op_core::gradient(op = TapeScale)]
fn tape_scale_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let scale: f32 = g.attr("scale")?;
    Ok([Some(TapeScale::call_with(g.grad(0)?, scale).run_on(g)?)])
}

#[kernel(op = TapeSin, types(f32, f64))]
fn tape_sin<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &T| x.sin())
}

/// d sin x = cos x dx
#[op_core::gradient(op = TapeSin)]
fn tape_sin_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let cos = TapeCos::call_with(g.input(0)).run_on(g)?;
    Ok([Some(TapeMul::call_with(g.grad(0)?, cos).run_on(g)?)])
}

#[kernel(op = TapeCos, types(f32, f64))]
fn tape_cos<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &T| x.cos())
}

/// d cos x = -sin x dx
#[op_core::gradient(op = TapeCos)]
fn tape_cos_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let sin = TapeSin::call_with(g.input(0)).run_on(g)?;
    let g_sin = TapeMul::call_with(g.grad(0)?, sin).run_on(g)?;
    Ok([Some(TapeScale::call_with(g_sin, -1.0).run_on(g)?)])
}

/// `(sin x, cos x)`: two outputs.
#[register_op(
    attrs("T: {float, double}"),
    inputs("x: T"),
    outputs("sin: T", "cos: T"),
    shape_fn = |c| {
        let x = c.input(0)?;
        c.set_output(0, x)?;
        c.set_output(1, x)
    }
)]
struct TapeSinCos;

#[kernel(op = TapeSinCos, types(f32, f64))]
fn tape_sin_cos<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &T| x.sin())?;
    ctx.unary(0, 1, 1, |x: &T| x.cos())
}

/// d(sin x, cos x) = (cos x dx, -sin x dx); an unused output's gradient is
/// zeros (`g.grad`).
#[op_core::gradient(op = TapeSinCos)]
fn tape_sin_cos_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let from_sin = TapeMul::call_with(g.grad(0)?, g.output(1)).run_on(g)?;
    let minus_sin = TapeScale::call_with(g.output(0), -1.0).run_on(g)?;
    let from_cos = TapeMul::call_with(g.grad(1)?, minus_sin).run_on(g)?;
    Ok([Some(
        OpCall::with_values("AddN")
            .input_list([from_sin, from_cos])
            .run_on(g)?
            .remove(0),
    )])
}

#[kernel(op = TapeForward, types(f32, f64))]
fn tape_forward<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

#[op_core::gradient(op = TapeForward)]
fn tape_forward_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}

#[kernel(op = TapeSquareByMul, types(f32, f64))]
fn tape_square_by_mul<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let x = ctx.input(0)?.clone();
    let y = TapeMul::call(&x, &x).run()?;
    ctx.set_output(0, y)
}

#[op_core::gradient(op = TapeSquareByMul)]
fn tape_square_by_mul_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    tape_square_grad(g)
}

/// `z = y`, in `y`'s own buffer; `x` only rides along.
#[register_op(
    attrs("T: {float, double}"),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "unchanged"
)]
struct TapePickSecond;

#[kernel(op = TapePickSecond, types(f32, f64))]
fn tape_pick_second<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let y = ctx.input(1)?.clone();
    ctx.set_output(0, y)
}

#[op_core::gradient(op = TapePickSecond)]
fn tape_pick_second_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    Ok([None, Some(g.grad(0)?)])
}

#[op_core::gradient(op = TapeWrongCount)]
fn tape_wrong_count_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    Ok(vec![Some(g.grad(0)?), None])
}

#[op_core::gradient(op = TapeWrongShape)]
fn tape_wrong_shape_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.constant(Tensor::from_vec([5], vec![0.0f64; 5])?)?)])
}

/// `y = x`, not differentiable: nothing flows back through it.
#[register_op(
    attrs("T: {float, double}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged",
    not_differentiable
)]
struct TapeBlock;

/// `y = round(x)` as int32: an output that carries no gradient (and no
/// gradient registered: none is needed).
#[register_op(inputs("x: double"), outputs("y: int32"), shape = "unchanged")]
struct TapeToInt;

#[kernel(op = TapeToInt)]
fn tape_to_int(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary_to(0, 0, 1, |x: &f64| x.round() as i32)
}

/// `y = x` as double.
#[register_op(inputs("x: int32"), outputs("y: double"), shape = "unchanged")]
struct TapeToDouble;

#[kernel(op = TapeToDouble)]
fn tape_to_double(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary_to(0, 0, 1, |x: &i32| f64::from(*x))
}

fn vector(values: &[f64]) -> Tensor {
    op_kernels::link();
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

/// `tape`, and `values` as a double vector that it watches.
fn watching<E: Executor<Value = Tensor>>(
    tape: GradientTape<E>,
    values: &[f64],
) -> (GradientTape<E>, Tensor) {
    let mut x = vector(values);
    tape.watch(&mut x);
    (tape, x)
}

fn values(tensor: &Option<Tensor>) -> Vec<f64> {
    tensor
        .as_ref()
        .expect("a gradient")
        .as_slice::<f64>()
        .unwrap()
        .to_vec()
}

fn assert_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-9 * (1.0 + w.abs()),
            "{got:?} vs {want:?}"
        );
    }
}

fn read(variable: &Variable<'_>) -> Tensor {
    variable.read().unwrap()
}

/// The variable tests rely on op-kernels' gradient of `ReadVariableOp`.
#[test]
fn reads_variable_op_has_a_gradient() {
    op_kernels::link();
    assert!(
        Registry::global()
            .gradient("ReadVariableOp")
            .unwrap()
            .is_some_and(|r| r.functions.is_some())
    );
}

#[test]
fn a_watched_tensor_gets_the_derivative_of_a_chain_of_ops() {
    let (tape, x) = watching(GradientTape::new(), &[0.5, -1.0, 2.0]);
    let y = TapeSin::call(TapeSquare::call(&x).run().unwrap())
        .run()
        .unwrap();
    assert_eq!(tape.recorded_ops(), 2);
    let grads = tape.gradient(&y, &[&x]).unwrap();
    let x_values = x.as_slice::<f64>().unwrap();
    let want: Vec<f64> = x_values.iter().map(|x| (x * x).cos() * 2.0 * x).collect();
    assert_close(&values(&grads[0]), &want);
}

#[test]
fn ops_on_unwatched_tensors_are_not_recorded() {
    let x = vector(&[1.0, 2.0]);
    let tape = GradientTape::new();
    let y = TapeSquare::call(&x).run().unwrap();
    assert_eq!(tape.recorded_ops(), 0);
    assert_eq!(tape.gradient(&y, &[&x]).unwrap(), [None]);
}

#[test]
fn every_entry_point_is_recorded() {
    let (tape, x) = watching(GradientTape::new(), &[3.0]);
    // A typed wrapper on the global runtime, and on the tape.
    let a = TapeScale::call(&x, 2.0).run().unwrap();
    let b = TapeScale::call(&a, 2.0).run_on(&tape).unwrap();
    // A call by name.
    let c = OpCall::new("TapeScale")
        .input(&b)
        .attr("scale", 2.0f32)
        .run()
        .unwrap()
        .remove(0);
    // A prepared op, run and run into slots.
    let prepared: Arc<PreparedOp> = Runtime::global()
        .prepare(
            "TapeScale",
            &[DType::F64.into()],
            &[("scale", 2.0f32.into())],
        )
        .unwrap();
    let d = prepared.run(vec![c]).unwrap().remove(0);
    let mut outputs = [None];
    prepared.run_into(&mut [d], &mut outputs).unwrap();
    let e = outputs[0].take().unwrap();
    assert_eq!(tape.recorded_ops(), 5);
    assert_eq!(e.as_slice::<f64>().unwrap(), [96.0]);
    assert_eq!(values(&tape.gradient(&e, &[&x]).unwrap()[0]), [32.0]);
}

#[test]
fn a_tape_is_an_executor_over_another() {
    /// Code generic over its executor, handed a tape.
    fn cube_on<E: op_core::Executor<Value = Tensor>>(executor: &E, x: &Tensor) -> Tensor {
        TapeCube::call(x).run_on(executor).unwrap()
    }
    let runtime = Runtime::new();
    let (tape, x) = watching(GradientTape::over(&runtime), &[2.0]);
    let y = cube_on(&tape, &x);
    assert!(std::ptr::eq(*tape.executor(), &runtime));
    assert_eq!(y.as_slice::<f64>().unwrap(), [8.0]);
    assert_eq!(values(&tape.gradient(&y, &[&x]).unwrap()[0]), [12.0]);
}

#[test]
fn several_paths_to_a_source_are_summed() {
    let (tape, x) = watching(GradientTape::new(), &[1.5, -2.0]);
    // x·x·sin x: three uses of x.
    let y = TapeMul::call(
        TapeMul::call(&x, &x).run().unwrap(),
        TapeSin::call(&x).run().unwrap(),
    )
    .run()
    .unwrap();
    let grads = tape.gradient(&y, &[&x]).unwrap();
    let want: Vec<f64> = [1.5f64, -2.0]
        .iter()
        .map(|x| 2.0 * x * x.sin() + x * x * x.cos())
        .collect();
    assert_close(&values(&grads[0]), &want);
}

#[test]
fn variables_read_on_the_tape_are_watched_on_their_own() {
    let variable = Variable::new(vector(&[1.0, -3.0])).unwrap();
    let tape = GradientTape::new();
    let y = TapeSquare::call(read(&variable)).run().unwrap();
    let grads = tape.gradient(&y, &[variable.handle()]).unwrap();
    assert_eq!(values(&grads[0]), [2.0, -6.0]);
}

#[test]
fn without_watching_accessed_variables_only_watched_handles_are_sources() {
    let variable = Variable::new(vector(&[4.0])).unwrap();
    let tape = GradientTape::with_options(
        Runtime::global(),
        TapeOptions::new().watch_accessed_variables(false),
    );
    let y = TapeSquare::call(read(&variable)).run().unwrap();
    assert_eq!(tape.recorded_ops(), 0);
    assert_eq!(tape.gradient(&y, &[variable.handle()]).unwrap(), [None]);

    let tape = GradientTape::with_options(
        Runtime::global(),
        TapeOptions::new().watch_accessed_variables(false),
    );
    let mut handle = variable.handle().clone();
    tape.watch(&mut handle);
    let y = TapeSquare::call(read(&variable)).run().unwrap();
    assert_eq!(values(&tape.gradient(&y, &[&handle]).unwrap()[0]), [8.0]);
}

#[test]
fn integer_variables_are_not_watched() {
    let variable = Variable::new(Tensor::from_vec([1], vec![3i32]).unwrap()).unwrap();
    let tape = GradientTape::new();
    let value = read(&variable);
    assert_eq!(tape.recorded_ops(), 0);
    assert_eq!(tape.gradient(&value, &[variable.handle()]).unwrap(), [None]);
}

#[test]
fn two_reads_of_a_variable_are_two_values() {
    let variable = Variable::new(vector(&[3.0])).unwrap();
    let tape = GradientTape::new();
    let a = read(&variable);
    let b = read(&variable);
    let y = TapeMul::call(&a, &b).run().unwrap();
    let grads = tape.gradient(&y, &[variable.handle(), &a, &b]).unwrap();
    assert_eq!(values(&grads[0]), [6.0]);
    // ∂y/∂a = b: one read, not both.
    assert_eq!(values(&grads[1]), [3.0]);
    assert_eq!(values(&grads[2]), [3.0]);
}

#[test]
fn a_tensor_sharing_a_variables_buffer_is_not_taken_for_a_read_of_it() {
    let initial = vector(&[2.0]);
    // The variable holds `initial`'s buffer itself.
    let variable = Variable::new(&initial).unwrap();
    let tape = GradientTape::new();
    let y = TapeMul::call(read(&variable), &initial).run().unwrap();
    // ∂(v · initial)/∂v = initial, not 2v.
    assert_eq!(
        values(&tape.gradient(&y, &[variable.handle()]).unwrap()[0]),
        [2.0]
    );
}

#[test]
fn an_output_in_its_inputs_buffer_is_a_value_of_its_own() {
    let (tape, x) = watching(GradientTape::new(), &[5.0]);
    let y = TapeForward::call(&x).run().unwrap();
    assert_ne!(y.identity(), x.identity());
    let z = TapeMul::call(&y, &x).run().unwrap();
    let grads = tape.gradient(&z, &[&x, &y]).unwrap();
    // dz/dx = y + x (through y); ∂z/∂y = x.
    assert_eq!(values(&grads[0]), [10.0]);
    assert_eq!(values(&grads[1]), [5.0]);
}

#[test]
fn an_output_in_an_unknown_tensors_buffer_is_a_value_of_its_own() {
    let (tape, x) = watching(GradientTape::new(), &[5.0]);
    let c = vector(&[7.0]);
    // y is c's buffer, computed on x's tape.
    let y = TapePickSecond::call(&x, &c).run().unwrap();
    let z = TapeMul::call(&y, &c).run().unwrap();
    let grads = tape.gradient(&z, &[&x, &y]).unwrap();
    assert_eq!(grads[0], None);
    // ∂z/∂y = c, once: c is a constant, not y.
    assert_eq!(values(&grads[1]), [7.0]);
}

#[test]
fn a_watched_scalar_gets_an_identity_of_its_own_and_stays_in_its_tensor() {
    let mut x = Tensor::scalar(3.0f64);
    assert_eq!(x.identity(), None);
    let tape = GradientTape::new();
    tape.watch(&mut x);
    assert!(x.identity().is_some());
    assert_eq!(x.buffer_address(), None, "no buffer was allocated");
    assert_eq!(x.scalar_value::<f64>().unwrap(), 3.0);
    // An equal scalar is another value.
    let y = TapeMul::call(&x, Tensor::scalar(3.0f64)).run().unwrap();
    let z = TapeSquare::call(&y).run().unwrap();
    assert_eq!(values(&tape.gradient(&y, &[&x]).unwrap()[0]), [3.0]);
    let tape = GradientTape::new();
    let mut y = y;
    tape.watch(&mut y);
    let w = TapeSquare::call(&y).run().unwrap();
    assert_eq!(values(&tape.gradient(&w, &[&y]).unwrap()[0]), [18.0]);
    assert_eq!(z.scalar_value::<f64>().unwrap(), 81.0);
}

#[test]
fn a_run_that_fails_leaves_the_tape_as_it_was() {
    let (tape, x) = watching(GradientTape::new(), &[3.0, 4.0]);
    let error = TapeMul::call(&x, vector(&[1.0, 2.0, 3.0]))
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument, "{error}");
    assert_eq!(tape.recorded_ops(), 0);
    let y = TapeSquare::call(&x).run().unwrap();
    assert_eq!(tape.recorded_ops(), 1);
    assert_eq!(values(&tape.gradient(&y, &[&x]).unwrap()[0]), [6.0, 8.0]);
}

#[test]
fn ops_a_kernel_runs_itself_are_recorded_apart_from_its_own_run() {
    let (tape, x) = watching(GradientTape::persistent(), &[3.0, -2.0]);
    // The inner `TapeMul` begins and ends inside `TapeSquareByMul`'s run.
    let y = TapeSquareByMul::call(&x).run().unwrap();
    let z = TapeMul::call(&y, &x).run().unwrap();
    assert_eq!(tape.recorded_ops(), 3);
    assert_eq!(values(&tape.gradient(&y, &[&x]).unwrap()[0]), [6.0, -4.0]);
    // z = x³: 3x², through y's own gradient only (the inner product's
    // output is not y: the tape gave y a buffer of its own or saw it fresh).
    assert_eq!(values(&tape.gradient(&z, &[&x]).unwrap()[0]), [27.0, 12.0]);
}

#[test]
fn a_persistent_tape_computes_gradients_many_times() {
    let (tape, x) = watching(GradientTape::persistent(), &[2.0]);
    assert!(tape.is_persistent());
    let y = TapeSquare::call(&x).run().unwrap();
    let z = TapeCube::call(&x).run().unwrap();
    assert_eq!(values(&tape.gradient(&y, &[&x]).unwrap()[0]), [4.0]);
    assert_eq!(values(&tape.gradient(&z, &[&x]).unwrap()[0]), [12.0]);
    assert_eq!(values(&tape.gradient(&y, &[&x]).unwrap()[0]), [4.0]);
    // It still records, and never its own gradient computations.
    assert!(tape.is_recording());
    assert_eq!(tape.recorded_ops(), 2);
}

#[test]
fn a_non_persistent_tape_refuses_a_second_gradient() {
    let (tape, x) = watching(GradientTape::new(), &[2.0]);
    let y = TapeSquare::call(&x).run().unwrap();
    assert_eq!(values(&tape.gradient(&y, &[&x]).unwrap()[0]), [4.0]);
    assert!(!tape.is_recording());
    let err = tape.gradient(&y, &[&x]).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(err.message().contains("not persistent"), "{err}");
    assert!(
        err.message().contains("GradientTape::persistent()"),
        "{err}"
    );
}

#[test]
fn nested_tapes_give_the_second_derivative_of_x_cubed() {
    let (outer, mut x) = watching(GradientTape::new(), &[-1.0, 0.5, 2.0]);
    let inner = GradientTape::new();
    inner.watch(&mut x);
    let y = TapeCube::call(&x).run().unwrap();
    let dy_dx = inner.gradient(&y, &[&x]).unwrap().remove(0).unwrap();
    assert_close(dy_dx.as_slice::<f64>().unwrap(), &[3.0, 0.75, 12.0]);
    let d2y_dx2 = outer.gradient(&dy_dx, &[&x]).unwrap();
    assert_close(&values(&d2y_dx2[0]), &[-6.0, 3.0, 12.0]);
}

#[test]
fn nested_tapes_give_the_second_derivative_of_sin() {
    let (outer, mut x) = watching(GradientTape::new(), &[0.3, 1.7]);
    let dy_dx = {
        let inner = GradientTape::new();
        inner.watch(&mut x);
        let y = TapeSin::call(&x).run().unwrap();
        inner.gradient(&y, &[&x]).unwrap().remove(0).unwrap()
    };
    let d2y_dx2 = outer.gradient(&dy_dx, &[&x]).unwrap();
    assert_close(&values(&d2y_dx2[0]), &[-(0.3f64.sin()), -(1.7f64.sin())]);
}

#[test]
fn nested_tapes_give_the_second_derivative_through_a_variable() {
    let variable = Variable::new(vector(&[2.0, -1.0])).unwrap();
    let outer = GradientTape::new();
    // Read on the outer tape alone first: the inner tape's read of the
    // same buffer must still be a value both tapes know.
    let first = read(&variable);
    let inner = GradientTape::new();
    let y = TapeCube::call(read(&variable)).run().unwrap();
    let dy = inner
        .gradient(&y, &[variable.handle()])
        .unwrap()
        .remove(0)
        .unwrap();
    assert_eq!(dy.as_slice::<f64>().unwrap(), [12.0, 3.0]);
    let d2y = outer
        .gradient(&[&dy, &first], &[variable.handle()])
        .unwrap();
    // 6v, plus 1 from `first`.
    assert_eq!(values(&d2y[0]), [13.0, -5.0]);
}

#[test]
fn ops_run_with_no_tape_active_are_not_recorded() {
    let mut x = vector(&[2.0]);
    let before = TapeSquare::call(&x).run().unwrap();
    let tape = GradientTape::persistent();
    tape.watch(&mut x);
    let during = TapeSquare::call(&x).run().unwrap();
    let paused = {
        let _paused = tape.stop_recording();
        assert!(!tape.is_recording());
        TapeSquare::call(&x).run().unwrap()
    };
    assert!(tape.is_recording());
    tape.stop();
    let after = TapeSquare::call(&x).run().unwrap();
    assert_eq!(tape.recorded_ops(), 1);
    let grads = tape
        .gradient(&[&before, &during, &paused, &after], &[&x])
        .unwrap();
    assert_eq!(values(&grads[0]), [4.0]);
    assert_eq!(tape.gradient(&before, &[&x]).unwrap(), [None]);
    assert_eq!(tape.gradient(&paused, &[&x]).unwrap(), [None]);
    assert_eq!(tape.gradient(&after, &[&x]).unwrap(), [None]);
    drop(tape);
    // A dropped tape is gone from the thread: nothing records.
    let tape = GradientTape::new();
    let y = TapeSquare::call(&x).run().unwrap();
    assert_eq!(tape.recorded_ops(), 0);
    assert_eq!(tape.gradient(&y, &[&x]).unwrap(), [None]);
}

#[test]
fn a_tape_does_not_see_another_threads_ops() {
    let (tape, x) = watching(GradientTape::new(), &[2.0]);
    let shared = x.clone();
    let elsewhere = std::thread::spawn(move || TapeSquare::call(&shared).run().unwrap())
        .join()
        .unwrap();
    assert_eq!(tape.recorded_ops(), 0);
    let here = TapeCube::call(&x).run().unwrap();
    let grads = tape.gradient(&[&elsewhere, &here], &[&x]).unwrap();
    assert_eq!(values(&grads[0]), [12.0]);
}

#[test]
fn several_targets_sum_and_output_gradients_weigh_them() {
    let (tape, x) = watching(GradientTape::persistent(), &[2.0, 3.0]);
    let square = TapeSquare::call(&x).run().unwrap();
    let cube = TapeCube::call(&x).run().unwrap();
    let grads = tape
        .gradient(&vec![square.clone(), cube.clone()], &[&x])
        .unwrap();
    assert_eq!(values(&grads[0]), [4.0 + 12.0, 6.0 + 27.0]);
    let weighted = tape
        .gradient_with(
            &[&square, &cube],
            &[&x],
            GradientOptions::new()
                .output_gradients([Some(vector(&[1.0, 10.0])), Some(vector(&[0.5, 0.0]))]),
        )
        .unwrap();
    assert_eq!(values(&weighted[0]), [4.0 + 6.0, 60.0]);
    // `None`: that target starts from ones.
    let half_given = tape
        .gradient_with(
            &[&square, &cube],
            &[&x],
            GradientOptions::new().output_gradients([None, Some(vector(&[0.0, 2.0]))]),
        )
        .unwrap();
    assert_eq!(values(&half_given[0]), [4.0, 6.0 + 54.0]);

    let err = tape
        .gradient_with(
            &[&square, &cube],
            &[&x],
            GradientOptions::new().output_gradients([Some(vector(&[1.0, 1.0]))]),
        )
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message()
            .contains("1 output gradient(s) for 2 target(s)"),
        "{err}"
    );
    let err = tape
        .gradient_with(
            &square,
            &[&x],
            GradientOptions::new().output_gradients([Some(vector(&[1.0]))]),
        )
        .unwrap_err();
    assert_eq!(
        err.message(),
        "GradientTape::gradient: output gradient 0 is a double tensor of shape [1], but target 0 is a double tensor of shape [2]"
    );
}

#[test]
fn a_target_that_is_a_source_has_gradient_one() {
    let (tape, x) = watching(GradientTape::new(), &[2.0, 3.0]);
    assert_eq!(values(&tape.gradient(&x, &[&x]).unwrap()[0]), [1.0, 1.0]);
}

#[test]
fn an_intermediate_value_can_be_a_source() {
    let (tape, x) = watching(GradientTape::new(), &[2.0]);
    let y = TapeSquare::call(&x).run().unwrap();
    let z = TapeSin::call(&y).run().unwrap();
    let grads = tape.gradient(&z, &[&y, &x]).unwrap();
    assert_close(&values(&grads[0]), &[4f64.cos()]);
    assert_close(&values(&grads[1]), &[4f64.cos() * 4.0]);
}

#[test]
fn unconnected_sources_get_none_or_zeros() {
    let mut x = vector(&[1.0]);
    let mut unused = Tensor::from_vec([2, 2], vec![1.0f32; 4]).unwrap();
    let variable = Variable::new(Tensor::from_vec([3], vec![1.0f32; 3]).unwrap()).unwrap();
    let read_variable = Variable::new(Tensor::from_vec([2], vec![1.0f64; 2]).unwrap()).unwrap();
    let tape = GradientTape::persistent();
    tape.watch(&mut x);
    tape.watch(&mut unused);
    let y = TapeSquare::call(&x).run().unwrap();
    // Read on the tape, but not used for y.
    let _ = read(&read_variable);
    let sources = [&x, &unused, variable.handle(), read_variable.handle()];
    let grads = tape.gradient(&y, &sources).unwrap();
    assert_eq!(values(&grads[0]), [2.0]);
    assert_eq!(grads[1..], [None, None, None]);
    let grads = tape
        .gradient_with(
            &y,
            &sources,
            GradientOptions::new().unconnected(Unconnected::Zeros),
        )
        .unwrap();
    assert_eq!(values(&grads[0]), [2.0]);
    assert_eq!(grads[1], Some(Tensor::zeros(DType::F32, [2, 2]).unwrap()));
    assert_eq!(grads[2], Some(Tensor::zeros(DType::F32, [3]).unwrap()));
    assert_eq!(grads[3], Some(Tensor::zeros(DType::F64, [2]).unwrap()));
}

#[test]
fn a_multi_output_op_gets_zeros_for_its_unused_output() {
    let (tape, x) = watching(GradientTape::persistent(), &[0.7]);
    let (sin, cos) = TapeSinCos::call(&x).run().unwrap();
    assert_close(
        &values(&tape.gradient(&sin, &[&x]).unwrap()[0]),
        &[0.7f64.cos()],
    );
    assert_close(
        &values(&tape.gradient(&cos, &[&x]).unwrap()[0]),
        &[-(0.7f64.sin())],
    );
    assert_close(
        &values(&tape.gradient(&[&sin, &cos], &[&x]).unwrap()[0]),
        &[0.7f64.cos() - 0.7f64.sin()],
    );
}

#[test]
fn a_missing_gradient_is_an_error_naming_the_op_the_node_and_the_fixes() {
    let (tape, x) = watching(GradientTape::new(), &[1.0]);
    let y = TapeSquare::call(&x).node_name("squared").run().unwrap();
    let y = TapeNoGrad::call(&y)
        .node_name("no_grad_node")
        .run()
        .unwrap();
    let z = TapeSquare::call(&y).run().unwrap();
    let err = tape.gradient(&z, &[&x]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(
        err.message(),
        "no gradient is registered for op TapeNoGrad, but node 'no_grad_node' lies on a path from a source to a target: (source) -> squared -> no_grad_node. Register one with `#[gradient(op = TapeNoGrad)]` on a gradient function, or, if no gradient should flow through it, mark the op `not_differentiable` (on its `#[register_op]`, or `op_core::not_differentiable!(\"TapeNoGrad\")`)"
    );
}

#[test]
fn a_gradient_function_returning_the_wrong_count_or_shape_is_an_error_naming_the_op() {
    let (tape, x) = watching(GradientTape::persistent(), &[1.0, 2.0]);
    let counted = TapeWrongCount::call(&x).node_name("counted").run().unwrap();
    let shaped = TapeWrongShape::call(&x).node_name("shaped").run().unwrap();
    let err = tape.gradient(&counted, &[&x]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "the gradient function of op TapeWrongCount returned 2 gradient(s) for op TapeWrongCount (node 'counted'), which has 1 input(s): return one per input (None where there is none)"
    );
    let err = tape.gradient(&shaped, &[&x]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "the gradient function of op TapeWrongShape returned, for input 0 of op TapeWrongShape (node 'shaped') (double [2]), a gradient that does not fit it: double [5]"
    );
}

#[test]
fn an_op_off_the_path_needs_no_gradient() {
    let (tape, x) = watching(GradientTape::new(), &[1.0]);
    let c = vector(&[2.0]);
    // TapeNoGrad runs on the tape, but only on what does not reach y.
    let unrelated = TapeNoGrad::call(&x).run().unwrap();
    let y = TapeSquare::call(&x).run().unwrap();
    let grads = tape.gradient(&y, &[&x, &c]).unwrap();
    assert_eq!(values(&grads[0]), [2.0]);
    assert_eq!(grads[1], None);
    drop(unrelated);
}

#[test]
fn a_not_differentiable_op_stops_the_gradient_without_error() {
    let (tape, x) = watching(GradientTape::new(), &[3.0]);
    let blocked = TapeBlock::call(&x).run().unwrap();
    // y = x · block(x): only the first factor carries a gradient.
    let y = TapeMul::call(&x, &blocked).run().unwrap();
    assert_eq!(values(&tape.gradient(&y, &[&x]).unwrap()[0]), [3.0]);
}

#[test]
fn integer_values_never_get_gradients() {
    let mut x = vector(&[2.4]);
    let mut ints = Tensor::from_vec([1], vec![3i32]).unwrap();
    let tape = GradientTape::persistent();
    tape.watch(&mut x);
    tape.watch(&mut ints);
    // Through an integer: no gradient, and none is needed from the casts.
    let rounded = TapeToInt::call(&x).run().unwrap();
    let back = TapeToDouble::call(&rounded).run().unwrap();
    let y = TapeSquare::call(&back).run().unwrap();
    assert_eq!(tape.recorded_ops(), 0);
    assert_eq!(tape.gradient(&y, &[&x]).unwrap(), [None]);
    // An integer source: none, even when zeros are asked for.
    let from_ints = TapeToDouble::call(&ints).run().unwrap();
    let options = GradientOptions::new().unconnected(Unconnected::Zeros);
    assert_eq!(
        tape.gradient_with(&from_ints, &[&ints], options).unwrap(),
        [None]
    );
}

#[test]
fn the_standard_ops_that_forward_buffers_give_values_of_their_own() {
    use op_kernels::array::Reshape;
    use op_kernels::identity::Identity;
    use op_kernels::math::Mul;
    let (tape, x) = watching(GradientTape::new(), &[2.0, -3.0]);
    let y = Identity::call(&x).run().unwrap();
    // Reshaped there and back: x's buffer and dims again.
    let column = Reshape::call(&x, Tensor::from_vec([2], vec![2i32, 1]).unwrap())
        .run()
        .unwrap();
    let z = Reshape::call(&column, Tensor::from_vec([1], vec![2i32]).unwrap())
        .run()
        .unwrap();
    assert_ne!(z.identity(), x.identity());
    let w = Mul::call(Mul::call(&y, &x).run().unwrap(), &z)
        .run()
        .unwrap();
    let grads = tape.gradient(&w, &[&x, &y, &z]).unwrap();
    // w = x³ through three values: 3x²; ∂w/∂y = xz = x², ∂w/∂z = yx = x².
    assert_eq!(values(&grads[0]), [12.0, 27.0]);
    assert_eq!(values(&grads[1]), [4.0, 9.0]);
    assert_eq!(values(&grads[2]), [4.0, 9.0]);
}

#[test]
fn the_standard_ops_that_forward_scalars_give_values_of_their_own() {
    use op_kernels::array::Reshape;
    use op_kernels::identity::Identity;
    use op_kernels::math::Mul;
    op_kernels::link();
    let mut x = Tensor::scalar(-3.0f64);
    let tape = GradientTape::new();
    tape.watch(&mut x);
    // Copies of x, with its tag: each becomes a value of its own.
    let y = Identity::call(&x).run().unwrap();
    let column = Reshape::call(&x, Tensor::from_vec([1], vec![1i32]).unwrap())
        .run()
        .unwrap();
    let z = Reshape::call(&column, Tensor::from_vec([0], Vec::<i32>::new()).unwrap())
        .run()
        .unwrap();
    assert_eq!(z.dims(), x.dims());
    for value in [&y, &z] {
        assert!(value.identity().is_some());
        assert_ne!(value.identity(), x.identity());
        assert_eq!(value.buffer_address(), None);
    }
    let w = Mul::call(Mul::call(&y, &x).run().unwrap(), &z)
        .run()
        .unwrap();
    let grads = tape.gradient(&w, &[&x, &y, &z]).unwrap();
    // w = x³ through three values: 3x² = 27; ∂w/∂y = ∂w/∂z = x² = 9.
    assert_eq!(values(&grads[0]), [27.0]);
    assert_eq!(values(&grads[1]), [9.0]);
    assert_eq!(values(&grads[2]), [9.0]);
}

#[test]
fn a_written_copy_of_a_watched_scalar_is_not_watched() {
    let mut x = Tensor::scalar(2.0f64);
    let tape = GradientTape::new();
    tape.watch(&mut x);
    let mut written = x.clone();
    written.as_slice_mut::<f64>().unwrap()[0] = 5.0;
    assert_eq!(written.identity(), None);
    let y = TapeSquare::call(&written).run().unwrap();
    assert_eq!(tape.recorded_ops(), 0);
    assert_eq!(tape.gradient(&y, &[&x]).unwrap()[0], None);
}

#[test]
fn nested_tapes_differentiate_the_sum_over_paths() {
    use op_kernels::math::Mul;
    let (outer, mut x) = watching(GradientTape::new(), &[-1.0, 0.5, 2.0]);
    let inner = GradientTape::new();
    inner.watch(&mut x);
    // x · x · x: the inner gradient sums three paths with AddN, which the
    // outer tape records and differentiates.
    let y = Mul::call(Mul::call(&x, &x).run().unwrap(), &x)
        .run()
        .unwrap();
    let dy = inner.gradient(&y, &[&x]).unwrap().remove(0).unwrap();
    assert_close(dy.as_slice::<f64>().unwrap(), &[3.0, 0.75, 12.0]);
    assert_close(
        &values(&outer.gradient(&dy, &[&x]).unwrap()[0]),
        &[-6.0, 3.0, 12.0],
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// d(sin x · x²) = (cos x · x² + 2x sin x) dx, and d² of x³ = 6x.
    #[test]
    fn gradients_match_the_derivatives_on_random_inputs(
        xs in prop::collection::vec(-3.0f64..3.0, 1..8)
    ) {
        let (outer, mut x) = watching(GradientTape::new(), &xs);
        let inner = GradientTape::persistent();
        inner.watch(&mut x);
        let y = TapeMul::call(
            TapeSin::call(&x).run().unwrap(),
            TapeSquare::call(&x).run().unwrap(),
        )
        .run()
        .unwrap();
        let dy = inner.gradient(&y, &[&x]).unwrap();
        let want: Vec<f64> = xs.iter().map(|x| x.cos() * x * x + 2.0 * x * x.sin()).collect();
        assert_close(&values(&dy[0]), &want);
        let cube = TapeCube::call(&x).run().unwrap();
        let d_cube = inner.gradient(&cube, &[&x]).unwrap().remove(0).unwrap();
        let d2 = outer.gradient(&d_cube, &[&x]).unwrap();
        let want: Vec<f64> = xs.iter().map(|x| 6.0 * x).collect();
        assert_close(&values(&d2[0]), &want);
    }
}
