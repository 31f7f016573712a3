//! Symbolic gradients (`op_autodiff::symbolic`): values after running the
//! graph, sums over paths, several ys and xs, ops with several outputs,
//! unconnected xs, ops that stop or lack gradients, the errors, names,
//! variables, random graphs against central differences, and one gradient
//! function giving the same numbers eagerly and symbolically.
//!
//! The ops are this file's own (`Sym*`), with their kernels and gradients:
//! gradient registrations are global, so a test must not register one for
//! an op that op-kernels differentiates. The gradient functions build with
//! op-kernels' `Mul`, `AddV2` and `Neg`.

use std::ops::{Add, Mul as MulOp, Neg as NegOp};

use op_autodiff::symbolic::{Gradients, Unconnected, gradients};
use op_core::gradient::{Gradient, Value};
use op_core::op_instance::OpInstanceBuilder;
use op_core::shape_inference::InferenceContext;
use op_core::{
    Code, DType, Element, Error, KernelContext, Registry, Result, Runtime, ShapeValue, Tensor,
    kernel, register_op,
};
use op_graph::{GraphBuilder, Output, Runner, Session};
use op_kernels::math::{AddV2, Cast, Mul, Neg};
use op_kernels::variable::{AssignVariableOp, Var, VarHandleOp};
use proptest::prelude::*;

#[macro_use]
mod common;

// ---- The ops ----

unary_ops! {
    /// `x * x`.
    pub SymSquare;
    /// `x`, with no gradient registered.
    pub SymNoGrad;
    /// `x`, marked not differentiable (a local `StopGradient`).
    pub SymBlocked;
    /// `x`, whose gradient function fails.
    pub SymFailing;
    /// `x`, whose gradient function returns two gradients for its one input.
    pub SymWrongCount;
    /// `x`, whose gradient function returns a double for a float input.
    pub SymWrongDtype;
    /// `x`, whose gradient function returns five elements for any input.
    pub SymWrongShape;
}

op_core::not_differentiable!("SymBlocked");

/// Both outputs have the input's shape.
fn both_like_input(c: &mut InferenceContext<'_>) -> Result<()> {
    let x = c.input(0)?;
    c.set_output(0, x)?;
    c.set_output(1, x)
}

/// `x * y`, of one shape.
#[register_op(
    attrs("T: {float, double}"),
    inputs("x: T", "y: T"),
    outputs("z: T"),
    shape = "merge_inputs"
)]
pub struct SymMul;

/// Two outputs: `x * x` and `-x`.
#[register_op(
    attrs("T: {float, double}"),
    inputs("x: T"),
    outputs("sq: T", "neg: T"),
    shape_fn = both_like_input
)]
pub struct SymSplit2;

/// `x + k`, `k` an int32 of `x`'s shape: its gradient function (wrongly)
/// returns one for `k` too, which must be dropped.
#[register_op(
    inputs("x: float", "k: int32"),
    outputs("y: float"),
    shape = "merge_inputs"
)]
pub struct SymShift;

/// `x` and `x` rounded to int32, of `x`'s shape: its gradient function
/// fails if a gradient reaches the integer output.
#[register_op(
    inputs("x: float"),
    outputs("y: float", "rounded: int32"),
    shape_fn = both_like_input
)]
pub struct SymWithRounded;

/// The value of a float variable, read through its handle.
#[register_op(inputs("resource: resource"), outputs("value: float"), stateful)]
pub struct SymReadVar;

// ---- Kernels ----

/// What the float kernels compute with.
trait Real: Element + Copy + Add<Output = Self> + MulOp<Output = Self> + NegOp<Output = Self> {}
impl Real for f32 {}
impl Real for f64 {}

#[kernel(op = SymSquare, types(f32, f64))]
fn sym_square<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &T| *x * *x)
}

#[kernel(op = SymMul, types(f32, f64))]
fn sym_mul<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.binary([0, 1], 0, 1, |x: &T, y: &T| *x * *y)
}

#[kernel(op = SymSplit2, types(f32, f64))]
fn sym_split2<T: Real>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary_to(0, 0, 1, |x: &T| *x * *x)?;
    ctx.unary_to(0, 1, 1, |x: &T| -*x)
}

identity_kernels! {
    SymNoGrad => sym_no_grad,
    SymBlocked => sym_blocked,
    SymFailing => sym_failing,
    SymWrongCount => sym_wrong_count,
    SymWrongDtype => sym_wrong_dtype,
    SymWrongShape => sym_wrong_shape,
}

#[kernel(op = SymShift)]
fn sym_shift(ctx: &mut KernelContext<'_>) -> Result<()> {
    #[allow(clippy::cast_precision_loss)] // small test values
    ctx.binary([0, 1], 0, 1, |x: &f32, k: &i32| x + *k as f32)
}

#[kernel(op = SymWithRounded)]
fn sym_with_rounded(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary_to(0, 0, 1, |x: &f32| *x)?;
    #[allow(clippy::cast_possible_truncation)] // small test values
    ctx.unary_to(0, 1, 1, |x: &f32| x.round() as i32)
}

#[kernel(op = SymReadVar)]
fn sym_read_var(ctx: &mut KernelContext<'_>) -> Result<()> {
    let value = ctx.resource::<Var>(0)?.value();
    let value = value.ok_or_else(|| Error::failed_precondition("SymReadVar: unassigned"))?;
    ctx.set_output(0, value)
}

// ---- Gradients ----

/// d(x²) = 2x dx
#[op_core::gradient(op = SymSquare)]
fn sym_square_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let two_x = AddV2::call_with(g.input(0), g.input(0)).run_on(g)?;
    Ok([Some(Mul::call_with(g.grad(0)?, two_x).run_on(g)?)])
}

/// d(xy) = y dx + x dy
#[op_core::gradient(op = SymMul)]
fn sym_mul_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    let grad = g.grad(0)?;
    Ok([
        Some(Mul::call_with(grad.clone(), g.input(1)).run_on(g)?),
        Some(Mul::call_with(grad, g.input(0)).run_on(g)?),
    ])
}

/// d(x², -x) = (2x dx, -dx): only the terms of the outputs used.
#[op_core::gradient(op = SymSplit2)]
fn sym_split2_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    let sq = match g.output_grad(0) {
        Some(grad) => {
            let two_x = AddV2::call_with(g.input(0), g.input(0)).run_on(g)?;
            Some(Mul::call_with(grad.clone(), two_x).run_on(g)?)
        }
        None => None,
    };
    let neg = match g.output_grad(1) {
        Some(grad) => Some(Neg::call_with(grad.clone()).run_on(g)?),
        None => None,
    };
    Ok([match (sq, neg) {
        (Some(a), Some(b)) => Some(AddV2::call_with(a, b).run_on(g)?),
        (a, b) => a.or(b),
    }])
}

#[op_core::gradient(op = SymFailing)]
fn sym_failing_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Err(g.error("deliberately broken"))
}

#[op_core::gradient(op = SymWrongCount)]
fn sym_wrong_count_grad<V: Value>(g: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    Ok(vec![Some(g.grad(0)?), Some(g.grad(0)?)])
}

#[op_core::gradient(op = SymWrongDtype)]
fn sym_wrong_dtype_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.constant(Tensor::scalar(1.0f64))?)])
}

#[op_core::gradient(op = SymWrongShape)]
fn sym_wrong_shape_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.constant(Tensor::from_vec([5], vec![0.0f32; 5])?)?)])
}

/// d(x + k) = dx; `k` is an integer, yet a gradient is returned for it.
#[op_core::gradient(op = SymShift)]
fn sym_shift_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 2]> {
    Ok([Some(g.grad(0)?), Some(g.input(1))])
}

/// dy = dx; the integer output must never get a gradient.
#[op_core::gradient(op = SymWithRounded)]
fn sym_with_rounded_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    if g.output_grad(1).is_some() {
        return Err(g.error("the integer output got a gradient"));
    }
    Ok([Some(g.grad(0)?)])
}

/// The gradient of a read reaches the variable's handle.
#[op_core::gradient(op = SymReadVar)]
fn sym_read_var_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}

// ---- Helpers ----

fn floats(values: &[f32]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

fn doubles(values: &[f64]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

/// A run of `session` feeding `feeds` and fetching `fetches`.
fn runner<'s>(
    session: &'s Session,
    feeds: impl IntoIterator<Item = (Output, Tensor)>,
    fetches: &[Output],
) -> Runner<'s> {
    let mut runner = session.runner();
    for (output, value) in feeds {
        runner = runner.feed(output, value);
    }
    for fetch in fetches {
        runner = runner.fetch(*fetch);
    }
    runner
}

/// Runs the graph `b` built, feeding `feeds`, and returns `fetches` as
/// float vectors.
fn run(b: GraphBuilder, feeds: &[(Output, Tensor)], fetches: &[Output]) -> Vec<Vec<f32>> {
    let session = Session::new(b.into_graph()).unwrap();
    runner(&session, feeds.iter().cloned(), fetches)
        .run()
        .unwrap()
        .iter()
        .map(|t| t.as_slice::<f32>().unwrap().to_vec())
        .collect()
}

/// A graph (with op-kernels linked) and its float placeholder `x` of shape
/// `[len]`.
fn graph_with_x(len: usize) -> (GraphBuilder, Output) {
    op_kernels::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, [len]).unwrap();
    (b, x)
}

/// The gradient, at `x = values`, of the `y` that `build` makes from `x`.
fn gradient_at(values: &[f32], build: impl FnOnce(&GraphBuilder, Output) -> Output) -> Vec<f32> {
    let (b, x) = graph_with_x(values.len());
    let y = build(&b, x);
    let dx = gradients(&b, &[y], &[x]).unwrap()[0].unwrap();
    run(b, &[(x, floats(values))], &[dx]).remove(0)
}

/// The error of differentiating the `y` that `build` makes from a float
/// `x` of shape `[2]`.
fn gradient_error(build: impl FnOnce(&GraphBuilder, Output) -> Output) -> Error {
    let (b, x) = graph_with_x(2);
    let y = build(&b, x);
    gradients(&b, &[y], &[x]).unwrap_err()
}

#[track_caller]
fn assert_close(actual: &[f32], expected: &[f32]) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (a, e) in actual.iter().zip(expected) {
        assert!(
            (a - e).abs() <= 1e-5 * (1.0 + e.abs()),
            "{actual:?} vs {expected:?}"
        );
    }
}

#[track_caller]
fn assert_contains(error: &Error, parts: &[&str]) {
    let text = error.to_string();
    for part in parts {
        assert!(
            text.contains(part),
            "expected {part:?} in the error:\n{text}"
        );
    }
}

/// The names of the graph's nodes that start with `prefix`.
fn names_under(b: &GraphBuilder, prefix: &str) -> Vec<String> {
    b.graph()
        .nodes()
        .iter()
        .map(|n| n.name().to_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

fn square(b: &GraphBuilder, x: Output) -> Output {
    SymSquare::call_with(x).run_on(b).unwrap()
}

fn mul(b: &GraphBuilder, x: Output, y: Output) -> Output {
    SymMul::call_with(x, y).run_on(b).unwrap()
}

// ---- Values ----

#[test]
fn the_gradient_of_a_chain_is_the_product_of_the_local_gradients() {
    let dx = gradient_at(&[1.0, -2.0, 0.5], |b, x| square(b, square(b, x))); // x⁴
    assert_close(&dx, &[4.0, -32.0, 0.5]); // 4x³
}

#[test]
fn gradients_over_several_paths_are_summed_with_one_add_n() {
    let (b, x) = graph_with_x(2);
    let y = mul(&b, square(&b, x), x); // x³, x reaching y twice
    let dx = gradients(&b, &[y], &[x]).unwrap()[0].unwrap();
    let add_ns: Vec<String> = b
        .graph()
        .nodes()
        .iter()
        .filter(|n| n.op() == "AddN")
        .map(|n| n.name().to_owned())
        .collect();
    assert_eq!(add_ns, ["gradients/AddN"]);
    assert_eq!(b.graph().tensor_name(dx).to_string(), "gradients/AddN");
    let out = run(b, &[(x, floats(&[2.0, -1.0]))], &[dx]);
    assert_close(&out[0], &[12.0, 3.0]); // 3x²
}

#[test]
fn one_contribution_is_used_as_it_is_without_add_n() {
    let (b, x) = graph_with_x(2);
    let y = square(&b, x);
    gradients(&b, &[y], &[x]).unwrap();
    assert!(b.graph().nodes().iter().all(|n| n.op() != "AddN"));
}

#[test]
fn several_ys_and_xs_give_the_gradients_of_the_sum_of_the_ys() {
    op_kernels::link();
    let b = GraphBuilder::new();
    let a = b.placeholder("a", DType::F32, [2]).unwrap();
    let c = b.placeholder("c", DType::F32, [2]).unwrap();
    let y1 = mul(&b, a, c);
    let y2 = square(&b, a);
    let grads = gradients(&b, &[y1, y2], &[a, c]).unwrap();
    let (da, dc) = (grads[0].unwrap(), grads[1].unwrap());
    let feeds = [(a, floats(&[1.0, 2.0])), (c, floats(&[3.0, -4.0]))];
    let out = run(b, &feeds, &[da, dc]);
    assert_close(&out[0], &[5.0, 0.0]); // c + 2a
    assert_close(&out[1], &[1.0, 2.0]); // a
}

#[test]
fn an_x_given_twice_gets_the_same_gradient_twice() {
    let (b, x) = graph_with_x(1);
    let y = square(&b, x);
    let grads = gradients(&b, &[y], &[x, x]).unwrap();
    assert_eq!(grads[0], grads[1]);
    assert!(grads[0].is_some());
}

#[test]
fn a_y_that_is_an_x_gets_its_grad_y() {
    assert_close(&gradient_at(&[5.0, 6.0], |_, x| x), &[1.0, 1.0]);
}

#[test]
fn an_x_that_is_also_between_gets_the_gradients_through_later_xs_too() {
    op_kernels::link();
    let b = GraphBuilder::new();
    let a = b.placeholder("a", DType::F32, [1]).unwrap();
    let s = square(&b, a);
    let y = square(&b, s); // a⁴ = s²
    let grads = gradients(&b, &[y], &[a, s]).unwrap();
    let out = run(
        b,
        &[(a, floats(&[2.0]))],
        &[grads[0].unwrap(), grads[1].unwrap()],
    );
    assert_close(&out[0], &[32.0]); // 4a³
    assert_close(&out[1], &[8.0]); // 2s
}

#[test]
fn grad_ys_weight_each_y() {
    let (b, x) = graph_with_x(2);
    let y1 = square(&b, x);
    let weights = b.constant(floats(&[10.0, 100.0])).unwrap();
    let dx = Gradients::new(&[y1, x], &[x])
        .grad_ys([Some(weights), None])
        .build(&b)
        .unwrap()[0]
        .unwrap();
    let out = run(b, &[(x, floats(&[1.0, 2.0]))], &[dx]);
    assert_close(&out[0], &[21.0, 401.0]); // 2x·w + 1
}

#[test]
fn grad_ys_of_the_wrong_count_dtype_or_shape_are_errors() {
    let (b, x) = graph_with_x(2);
    let y = square(&b, x);
    let err = Gradients::new(&[y], &[x])
        .grad_ys([None, None])
        .build(&b)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["2 grad_ys given for 1 ys"]);

    let double = b.constant(doubles(&[1.0, 1.0])).unwrap();
    let err = Gradients::new(&[y], &[x])
        .grad_ys([Some(double)])
        .build(&b)
        .unwrap_err();
    assert_contains(
        &err,
        &[
            "grad_ys[0]",
            "double [2]",
            "does not fit ys[0]",
            "'SymSquare', float [2]",
        ],
    );

    let three = b.constant(floats(&[1.0, 1.0, 1.0])).unwrap();
    let err = Gradients::new(&[y], &[x])
        .grad_ys([Some(three)])
        .build(&b)
        .unwrap_err();
    assert_contains(&err, &["float [3]", "does not fit"]);
}

// ---- Several outputs ----

#[test]
fn an_op_with_two_outputs_gets_one_gradient_per_output_none_for_an_unused_one() {
    let (b, x) = graph_with_x(2);
    let both = SymSplit2::call_with(x).run_on(&b).unwrap();
    let (sq, neg) = (both.0, both.1);

    // Only `neg` used: the gradient function sees no gradient for `sq`,
    // so it builds no 2x term.
    let dx = gradients(&b, &[neg], &[x]).unwrap()[0].unwrap();
    let ops: Vec<String> = b
        .graph()
        .nodes()
        .iter()
        .filter(|n| n.name().starts_with("gradients/SymSplit2_grad/"))
        .map(|n| n.op().to_owned())
        .collect();
    assert_eq!(ops, ["Neg"]);
    // Both used: 2x - 1.
    let dx_both = gradients(&b, &[sq, neg], &[x]).unwrap()[0].unwrap();
    let out = run(b, &[(x, floats(&[3.0, -1.0]))], &[dx, dx_both]);
    assert_close(&out[0], &[-1.0, -1.0]);
    assert_close(&out[1], &[5.0, -3.0]);
}

// ---- Unconnected, stopped, not trainable ----

#[test]
fn an_x_no_y_depends_on_gets_none_or_zeros_on_request() {
    let (b, x) = graph_with_x(2);
    let other = b.placeholder("other", DType::F32, [3]).unwrap();
    let blocked = b.placeholder("blocked", DType::F32, [2]).unwrap();
    let stop = SymBlocked::call_with(blocked).run_on(&b).unwrap();
    let y = mul(&b, square(&b, x), stop);
    let none = gradients(&b, &[y], &[other, blocked]).unwrap();
    assert_eq!(none, [None, None]);

    let zeros = Gradients::new(&[y], &[other, blocked, x])
        .unconnected(Unconnected::Zeros)
        .build(&b)
        .unwrap();
    let [Some(z_other), Some(z_blocked), Some(dx)] = zeros[..] else {
        panic!("zeros were asked for: {zeros:?}")
    };
    assert_eq!(b.graph().node(z_other.node()).unwrap().op(), "ZerosLike");
    let feeds = [
        (x, floats(&[1.0, 2.0])),
        (other, floats(&[7.0, 8.0, 9.0])),
        (blocked, floats(&[3.0, 4.0])),
    ];
    let out = run(b, &feeds, &[z_other, z_blocked, dx]);
    assert_eq!(out[0], [0.0; 3]);
    assert_eq!(out[1], [0.0; 2]);
    assert_close(&out[2], &[6.0, 16.0]); // 2x · blocked
}

#[test]
fn not_differentiable_ops_pass_no_gradient_on() {
    let dx = gradient_at(&[3.0, -2.0], |b, x| {
        let held = SymBlocked::call_with(x).run_on(b).unwrap();
        mul(b, x, held) // x · stop(x): the gradient is stop(x)
    });
    assert_close(&dx, &[3.0, -2.0]);
}

#[test]
fn stop_gradients_hold_outputs_constant() {
    let (b, x) = graph_with_x(2);
    let s = square(&b, x);
    let y = mul(&b, x, s); // x · x², with x² held: the gradient is x²
    let dx = Gradients::new(&[y], &[x])
        .stop_gradients(&[s])
        .build(&b)
        .unwrap()[0]
        .unwrap();
    let out = run(b, &[(x, floats(&[3.0, -2.0]))], &[dx]);
    assert_close(&out[0], &[9.0, 4.0]);
}

#[test]
fn an_op_without_a_gradient_behind_a_not_differentiable_one_is_no_error() {
    let dx = gradient_at(&[1.0, 2.0], |b, x| {
        let no_grad = SymNoGrad::call_with(x).run_on(b).unwrap();
        let held = SymBlocked::call_with(no_grad).run_on(b).unwrap();
        mul(b, square(b, x), held)
    });
    assert_close(&dx, &[2.0, 8.0]); // 2x · x
}

#[test]
fn integer_inputs_never_get_gradients_even_when_a_function_returns_one() {
    let (b, x) = graph_with_x(2);
    let k = b.placeholder("k", DType::I32, [2]).unwrap();
    let y = SymShift::call_with(x, k).run_on(&b).unwrap();
    let grads = gradients(&b, &[y], &[x, k]).unwrap();
    assert!(grads[0].is_some());
    assert_eq!(grads[1], None);
    let zeros = Gradients::new(&[y], &[k])
        .unconnected(Unconnected::Zeros)
        .build(&b)
        .unwrap();
    assert_eq!(
        b.graph().output_dtype(zeros[0].unwrap()).unwrap(),
        DType::I32
    );
}

#[test]
fn an_integer_output_gets_no_gradient_even_when_its_reader_returns_one() {
    let dx = gradient_at(&[0.4, 2.6], |b, x| {
        let (y, rounded) = SymWithRounded::call_with(x).run_on(b).unwrap();
        SymShift::call_with(y, rounded).run_on(b).unwrap()
    });
    assert_close(&dx, &[1.0, 1.0]);
}

#[test]
fn an_integer_path_carries_no_gradient_and_needs_none() {
    let (b, x) = graph_with_x(2);
    let c = b.placeholder("c", DType::F32, [2]).unwrap();
    // Cast has no gradient registered here; the integer edge cuts the path.
    let k = Cast::call_with(x, DType::I32).run_on(&b).unwrap();
    let y = SymShift::call_with(c, k).run_on(&b).unwrap();
    assert_eq!(gradients(&b, &[y], &[x]).unwrap(), [None]);
}

// ---- Errors ----

#[test]
fn an_op_without_a_gradient_on_a_path_is_an_error_naming_op_node_path_and_fixes() {
    let err = gradient_error(|b, x| {
        let sq = SymSquare::call_with(x).node_name("sq").run_on(b).unwrap();
        let mid = SymNoGrad::call_with(sq)
            .node_name("nograd")
            .run_on(b)
            .unwrap();
        SymSquare::call_with(mid)
            .node_name("out")
            .run_on(b)
            .unwrap()
    });
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "op SymNoGrad",
            "node 'nograd'",
            "x -> sq -> nograd -> out",
            "#[gradient(op = SymNoGrad)]",
            "not_differentiable",
            "op_core::not_differentiable!(\"SymNoGrad\")",
        ],
    );
}

#[test]
fn an_error_of_a_gradient_function_names_the_node() {
    let err = gradient_error(|b, x| {
        SymFailing::call_with(x)
            .node_name("broken")
            .run_on(b)
            .unwrap()
    });
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["deliberately broken", "node 'broken'", "op SymFailing"],
    );
}

#[test]
fn a_gradient_function_returning_the_wrong_count_is_an_error_naming_the_op() {
    let err = gradient_error(|b, x| {
        SymWrongCount::call_with(x)
            .node_name("counted")
            .run_on(b)
            .unwrap()
    });
    assert_contains(
        &err,
        &[
            "op SymWrongCount returned 2 gradient(s)",
            "node 'counted'",
            "1 input(s)",
        ],
    );
}

#[test]
fn a_gradient_of_another_dtype_or_shape_than_its_input_is_an_error() {
    let err = gradient_error(|b, x| {
        SymWrongDtype::call_with(x)
            .node_name("typed")
            .run_on(b)
            .unwrap()
    });
    assert_contains(
        &err,
        &[
            "op SymWrongDtype",
            "input 0 of",
            "node 'typed'",
            "'x', float [2]",
            "double []",
        ],
    );

    let err = gradient_error(|b, x| {
        SymWrongShape::call_with(x)
            .node_name("shaped")
            .run_on(b)
            .unwrap()
    });
    assert_contains(&err, &["node 'shaped'", "'x', float [2]", "float [5]"]);
}

#[test]
fn outputs_of_another_graph_are_rejected() {
    let (_other, foreign) = graph_with_x(2);
    let (b, x) = graph_with_x(2);
    let err = gradients(&b, &[foreign], &[x]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["in ys[0] of gradients"]);
    let err = gradients(&b, &[x], &[x, foreign]).unwrap_err();
    assert_contains(&err, &["in xs[1] of gradients"]);
}

#[test]
fn a_complex_y_needs_its_grad_y() {
    op_kernels::link();
    let b = GraphBuilder::new();
    let z = b.placeholder("z", DType::Complex64, [2]).unwrap();
    let err = gradients(&b, &[z], &[z]).unwrap_err();
    assert_contains(&err, &["ys[0]", "is complex: give its grad_ys"]);
}

// ---- Names ----

#[test]
fn gradient_nodes_are_named_under_a_gradients_scope_as_in_tensorflow() {
    let (b, x) = graph_with_x(2);
    let y = {
        let _layer = b.name_scope("layer");
        square(&b, x)
    };
    gradients(&b, &[y], &[x]).unwrap();
    assert_eq!(
        names_under(&b, "gradients"),
        [
            "gradients/grad_ys_0",
            "gradients/layer/SymSquare_grad/AddV2",
            "gradients/layer/SymSquare_grad/Mul",
        ]
    );
    gradients(&b, &[y], &[x]).unwrap();
    assert_eq!(names_under(&b, "gradients_1/").len(), 3);
    Gradients::new(&[y], &[x])
        .name("backward")
        .build(&b)
        .unwrap();
    assert_eq!(names_under(&b, "backward/")[0], "backward/grad_ys_0");
    {
        let _outer = b.name_scope("train");
        gradients(&b, &[y], &[x]).unwrap();
    }
    assert_eq!(names_under(&b, "train/gradients/").len(), 3);
}

// ---- Variables ----

/// A float variable `[1, 2]` named `name` (assigned by node `init`) and
/// its handle.
fn variable(b: &GraphBuilder, name: &str) -> Output {
    let v = VarHandleOp::call_with(DType::F32, ShapeValue::from_sizes(&[2]))
        .shared_name(name)
        .node_name("v")
        .run_on(b)
        .unwrap();
    let init = b.constant(floats(&[1.0, 2.0])).unwrap();
    AssignVariableOp::call_with(v, init)
        .node_name("init")
        .run_on(b)
        .unwrap();
    v
}

/// A session of the graph `b` built, on a runtime of its own (so that the
/// variable is this test's), with the variable assigned (`init` run).
fn initialized(b: GraphBuilder) -> Session {
    let session = Session::builder(b.into_graph())
        .runtime(std::sync::Arc::new(Runtime::new()))
        .build()
        .unwrap();
    session.runner().target("init").run().unwrap();
    session
}

#[test]
fn gradients_reach_a_variable_handle_through_its_reads() {
    op_kernels::link();
    let b = GraphBuilder::new();
    let v = variable(&b, "symbolic_test_reads");
    let read1 = SymReadVar::call_with(v).run_on(&b).unwrap();
    let read2 = SymReadVar::call_with(v).run_on(&b).unwrap();
    let y = mul(&b, square(&b, read1), read2); // v³
    let dv = gradients(&b, &[y], &[v]).unwrap()[0].unwrap();
    assert_eq!(b.graph().output_dtype(dv).unwrap(), DType::F32);
    let session = initialized(b);
    let out = session.runner().fetch(dv).run().unwrap();
    assert_close(out[0].as_slice::<f32>().unwrap(), &[3.0, 12.0]); // 3v²
}

#[test]
fn zeros_for_an_unconnected_variable_handle_have_its_values_shape() {
    op_kernels::link();
    let b = GraphBuilder::new();
    let v = variable(&b, "symbolic_test_zeros");
    let x = b.placeholder("x", DType::F32, [2]).unwrap();
    let y = square(&b, x);
    let dv = Gradients::new(&[y], &[v])
        .unconnected(Unconnected::Zeros)
        .build(&b)
        .unwrap()[0]
        .unwrap();
    let session = initialized(b);
    let out = session.runner().fetch(dv).run().unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [0.0, 0.0]);

    // A resource that is no VarHandleOp's does not tell its value's dtype.
    let b = GraphBuilder::new();
    let h = b.placeholder("h", DType::Resource, "[]").unwrap();
    let err = Gradients::new(&[], &[h])
        .unconnected(Unconnected::Zeros)
        .build(&b)
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert_contains(&err, &["'h'", "Placeholder"]);
}

// ---- One function, two modes ----

#[test]
fn the_same_gradient_function_gives_the_same_numbers_eagerly_and_symbolically() {
    op_kernels::link();
    let (a, c, dz) = (
        floats(&[1.0, 2.0]),
        floats(&[3.0, -1.0]),
        floats(&[0.5, 2.0]),
    );

    let registry = Registry::global();
    let functions = registry
        .gradient("SymMul")
        .unwrap()
        .unwrap()
        .functions
        .unwrap();
    let op = registry.op("SymMul").unwrap().def().clone();
    let node = OpInstanceBuilder::new(&op)
        .name("m")
        .input(DType::F32)
        .input(DType::F32)
        .build()
        .unwrap();
    let z = SymMul::call(&a, &c).run().unwrap();
    let inputs = [a.clone(), c.clone()];
    let (outputs, grads) = ([z], [Some(dz.clone())]);
    let context = Gradient::new(Runtime::global(), &op, &node, &inputs, &outputs, &grads).unwrap();
    let eager = (functions.eager)(&context).unwrap();

    let b = GraphBuilder::new();
    let pa = b.placeholder("a", DType::F32, [2]).unwrap();
    let pc = b.placeholder("c", DType::F32, [2]).unwrap();
    let pdz = b.placeholder("dz", DType::F32, [2]).unwrap();
    let y = mul(&b, pa, pc);
    let grads = Gradients::new(&[y], &[pa, pc])
        .grad_ys([Some(pdz)])
        .build(&b)
        .unwrap();
    let symbolic = run(
        b,
        &[(pa, a), (pc, c), (pdz, dz)],
        &[grads[0].unwrap(), grads[1].unwrap()],
    );
    for (eager, symbolic) in eager.iter().zip(&symbolic) {
        assert_eq!(
            eager.as_ref().unwrap().as_slice::<f32>().unwrap(),
            &symbolic[..]
        );
    }
    assert_eq!(symbolic, [vec![1.5, -2.0], vec![0.5, 4.0]]);
}

// ---- Random graphs ----

/// One step of a random graph: an op and where its inputs come from
/// (indices into the values so far, taken modulo their count).
#[derive(Clone, Debug)]
enum Step {
    Square(usize),
    Mul(usize, usize),
    Split2(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        any::<usize>().prop_map(Step::Square),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Step::Mul(a, b)),
        any::<usize>().prop_map(Step::Split2),
    ]
}

/// The graph: `xs` placeholders of shape [2] (float64), then `steps`;
/// returns the builder, the xs and every value.
fn random_graph(xs: usize, steps: &[Step]) -> (GraphBuilder, Vec<Output>, Vec<Output>) {
    let b = GraphBuilder::new();
    let xs: Vec<Output> = (0..xs)
        .map(|i| b.placeholder(&format!("x{i}"), DType::F64, [2]).unwrap())
        .collect();
    let mut values = xs.clone();
    for step in steps {
        let pick = |i: usize| values[i % values.len()];
        match *step {
            Step::Square(a) => values.push(square(&b, pick(a))),
            Step::Mul(a, c) => values.push(mul(&b, pick(a), pick(c))),
            Step::Split2(a) => {
                let (sq, neg) = SymSplit2::call_with(pick(a)).run_on(&b).unwrap();
                values.extend([sq, neg]);
            }
        }
    }
    (b, xs, values)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// On random DAGs over [-1, 1] (so values stay in [-1, 1]), every
    /// gradient matches central differences of the sum of the ys, and an x
    /// given `None` is one the ys do not change with.
    #[test]
    fn gradients_of_random_graphs_match_central_differences(
        x_count in 1usize..=3,
        steps in prop::collection::vec(step(), 1..=7),
        y_picks in prop::collection::vec(any::<usize>(), 1..=2),
        x_values in prop::collection::vec(-1.0f64..=1.0, 6),
    ) {
        op_kernels::link();
        let (b, xs, values) = random_graph(x_count, &steps);
        // The ys: from the values the steps made, or an x if none.
        let made = &values[x_count..];
        let ys: Vec<Output> = y_picks.iter().map(|i| made[i % made.len()]).collect();
        let grads = gradients(&b, &ys, &xs).unwrap();
        let session = Session::new(b.into_graph()).unwrap();
        let point: Vec<Vec<f64>> = (0..x_count).map(|i| x_values[2 * i..2 * i + 2].to_vec()).collect();
        let at = |point: &[Vec<f64>], fetches: &[Output]| {
            let feeds = xs.iter().zip(point).map(|(x, value)| (*x, doubles(value)));
            runner(&session, feeds, fetches).run().unwrap()
        };
        let sum_of_ys = |point: &[Vec<f64>]| -> f64 {
            at(point, &ys).iter().map(|t| t.as_slice::<f64>().unwrap().iter().sum::<f64>()).sum()
        };
        let fetches: Vec<Output> = grads.iter().flatten().copied().collect();
        let mut fetched = at(&point, &fetches).into_iter();
        let h = 1e-6;
        for (i, grad) in grads.iter().enumerate() {
            let analytic = grad.map(|_| fetched.next().unwrap().as_slice::<f64>().unwrap().to_vec());
            for j in 0..2 {
                let (mut up, mut down) = (point.clone(), point.clone());
                up[i][j] += h;
                down[i][j] -= h;
                let numeric = (sum_of_ys(&up) - sum_of_ys(&down)) / (2.0 * h);
                let value = analytic.as_ref().map_or(0.0, |a| a[j]);
                prop_assert!(
                    (value - numeric).abs() <= 1e-5 * (1.0 + numeric.abs()),
                    "d/dx{}[{}]: gradients {:?}, central differences {}", i, j, analytic, numeric
                );
            }
        }
    }
}
