//! The gradient checker on the differentiable elementwise math ops, in
//! float64 and float32, on random shapes that broadcast: each op's
//! registered gradient, run through a tape, against central differences.
//! (Each family's own tests in op-kernels check every gradient, array and
//! reduction ops included, against central differences one op at a time;
//! this one checks the checker and the tape on top of them.)

use op_autodiff::checker::{compute_gradient, compute_gradient_with_delta};
use op_core::{DType, OpCall, Result, Tensor};
use proptest::prelude::*;

/// Unary ops and a domain their gradients are smooth on.
const UNARY: &[(&str, f64, f64)] = &[
    ("Neg", -2.0, 2.0),
    ("Square", -2.0, 2.0),
    ("Sqrt", 0.5, 2.0),
    ("Rsqrt", 0.5, 2.0),
    ("Exp", -1.0, 1.0),
    ("Log", 0.5, 2.0),
    ("Sin", -2.0, 2.0),
    ("Cos", -2.0, 2.0),
    ("Tanh", -2.0, 2.0),
    ("Sigmoid", -2.0, 2.0),
    ("Reciprocal", 0.5, 2.0),
];

/// Broadcasting binary ops, their inputs drawn from `[0.5, 2]`.
const BINARY: &[&str] = &["AddV2", "Sub", "Mul", "RealDiv", "Pow", "SquaredDifference"];

fn tensor(dtype: DType, dims: &[usize], values: &[f64]) -> Tensor {
    match dtype {
        DType::F64 => Tensor::from_vec(dims, values.to_vec()).unwrap(),
        _ => Tensor::from_vec(dims, values.iter().map(|&v| v as f32).collect()).unwrap(),
    }
}

fn run(op: &str, xs: &[Tensor]) -> Result<Tensor> {
    let mut call = OpCall::new(op);
    for x in xs {
        call = call.input(x);
    }
    Ok(call.run()?.remove(0))
}

/// The tolerance on the largest Jacobian difference.
fn tolerance(dtype: DType) -> f64 {
    if dtype == DType::F64 { 1e-6 } else { 2e-2 }
}

/// Two shapes that broadcast: `[a, b]` with one of `[b]`, `[a, 1]`,
/// `[1, b]`, `[]` or `[a, b]`.
fn broadcasting_shapes() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    (1usize..4, 1usize..4, 0usize..5).prop_map(|(a, b, kind)| {
        let other = match kind {
            0 => vec![b],
            1 => vec![a, 1],
            2 => vec![1, b],
            3 => vec![],
            _ => vec![a, b],
        };
        (vec![a, b], other)
    })
}

fn values(len: usize, low: f64, high: f64) -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(low..high, len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn unary_gradients_match_central_differences(
        op in 0..UNARY.len(),
        dims in proptest::collection::vec(1usize..4, 0..3),
        unit in values(27, 0.0, 1.0),
        double in any::<bool>(),
    ) {
        op_kernels::link();
        let (name, low, high) = UNARY[op];
        let dtype = if double { DType::F64 } else { DType::F32 };
        let n: usize = dims.iter().product();
        let x: Vec<f64> = unit[..n].iter().map(|u| low + u * (high - low)).collect();
        let check = compute_gradient(|xs| run(name, xs), &[tensor(dtype, &dims, &x)]).unwrap();
        prop_assert!(check.max_error() < tolerance(dtype), "{name} {dtype}: {check}");
    }

    #[test]
    fn broadcasting_binary_gradients_match_central_differences(
        op in 0..BINARY.len(),
        (x_dims, y_dims) in broadcasting_shapes(),
        unit in values(18, 0.5, 2.0),
        double in any::<bool>(),
        swap in any::<bool>(),
    ) {
        op_kernels::link();
        let name = BINARY[op];
        let dtype = if double { DType::F64 } else { DType::F32 };
        let (x_dims, y_dims) = if swap { (y_dims, x_dims) } else { (x_dims, y_dims) };
        let nx: usize = x_dims.iter().product();
        let ny: usize = y_dims.iter().product();
        let x = tensor(dtype, &x_dims, &unit[..nx]);
        let y = tensor(dtype, &y_dims, &unit[9..9 + ny]);
        let check = compute_gradient(|xs| run(name, xs), &[x, y]).unwrap();
        prop_assert!(check.max_error() < tolerance(dtype), "{name} {dtype} {x_dims:?} {y_dims:?}: {check}");
    }
}

#[test]
fn a_wrong_gradient_is_caught() {
    op_kernels::link();
    // d/dx of x * x is 2x; the checker given x * stop(x), whose gradient is
    // x, finds a difference of x where the numeric Jacobian sees 2x.
    let x = tensor(DType::F64, &[3], &[0.5, 1.0, 2.0]);
    let check = compute_gradient(
        |xs| {
            let stopped = run("StopGradient", &xs[..1])?;
            run("Mul", &[xs[0].clone(), stopped])
        },
        &[x],
    )
    .unwrap();
    assert!((check.max_error() - 2.0).abs() < 1e-6, "{check}");
    assert!(check.to_string().starts_with("max error"), "{check}");
}

#[test]
fn jacobians_are_laid_out_as_tensorflow_does() {
    op_kernels::link();
    // y = x[0..2] * w: dy_j/dx_k at row k, column j.
    let x = tensor(DType::F64, &[2], &[1.0, 2.0]);
    let w = tensor(DType::F64, &[2], &[3.0, 5.0]);
    let check = compute_gradient_with_delta(|xs| run("Mul", xs), &[x, w], Some(1e-4)).unwrap();
    let dx = &check.theoretical[0];
    assert_eq!((dx.rows, dx.columns), (2, 2));
    assert_eq!(dx.values, [3.0, 0.0, 0.0, 5.0]);
    assert_eq!(check.theoretical[1].values, [1.0, 0.0, 0.0, 2.0]);
    assert!(check.max_error() < 1e-9, "{check}");
}

#[test]
fn integer_inputs_are_refused_with_a_message() {
    op_kernels::link();
    let x = Tensor::from_vec([2], vec![1i32, 2]).unwrap();
    let error = compute_gradient(|xs| run("Neg", xs), &[x]).unwrap_err();
    assert!(error.message().contains("x0 is int32"), "{error}");
}
