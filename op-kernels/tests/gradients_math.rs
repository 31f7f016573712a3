//! The gradients of the math family, checked numerically: every
//! differentiable op's registered gradient against central differences of
//! the op (see `gradient_check`), on random inputs and shapes (broadcasting
//! ones for the binary ops and `SelectV2`), in `double` and `float`,
//! `half` and `bfloat16` (looser), and `complex64`/`complex128` for the
//! ops that take complex numbers; with the gradient seeing full shapes (a
//! tape) or partial ones (a graph's, where broadcast reductions are
//! computed when the gradient runs). The points avoid where a function has
//! no derivative (`Relu` at 0, ties of `Maximum`); what TensorFlow defines
//! there is checked on its own.

mod gradient_check;
mod math_common;

use gradient_check::{Case, Shapes, check, components, from_components, pseudo_random};
use op_core::{Code, DType, Registry, Tensor};
use op_kernels::array::OnesLike;
use proptest::prelude::*;

// ---- Inputs ----

/// Where an op's inputs are drawn from, away from where it has no
/// derivative.
#[derive(Clone, Copy, Debug)]
enum Domain {
    /// `[-2, 2)`.
    Any,
    /// `[0.25, 2)`.
    Positive,
    /// `±[0.25, 2)`.
    AwayFromZero,
    /// Integers in `[-3, 2]` plus the offset: two grids with different
    /// offsets never tie.
    Grid(f64),
}

impl Domain {
    /// The value for `u` in `[-1, 1)`.
    fn at(self, u: f64) -> f64 {
        match self {
            Domain::Any => 2.0 * u,
            Domain::Positive => 0.25 + 0.875 * (u + 1.0),
            Domain::AwayFromZero => u.signum() * (0.25 + 1.75 * u.abs()),
            Domain::Grid(offset) => (3.0 * u).floor() + offset,
        }
    }
}

/// A tensor of `dtype` and shape `dims` with values from `domain` (for a
/// complex type, the real parts; the imaginary parts in `[-1, 1)`).
fn input(dtype: DType, dims: &[usize], domain: Domain, seed: u64) -> Tensor {
    let count: usize = dims.iter().product();
    let complex = dtype.is_complex();
    let width = if complex { 2 } else { 1 };
    let values: Vec<f64> = pseudo_random(seed, count * width)
        .into_iter()
        .enumerate()
        .map(|(c, u)| {
            if complex && c % 2 == 1 {
                u
            } else {
                domain.at(u)
            }
        })
        .collect();
    from_components(dtype, dims, &values)
}

/// Random shapes of rank 0 to 3, sizes 0 to 3 (0 seldom).
fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 8 => 1usize..4], 0..4)
}

/// The shapes the gradient may see.
fn shapes_seen() -> impl Strategy<Value = Shapes> {
    prop::sample::select(Shapes::ALL.to_vec())
}

/// How far a gradient computed in `dtype` may be from the numeric one
/// (relative, see `gradient_check::check`).
fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F64 | DType::Complex128 => 1e-6,
        DType::F32 | DType::Complex64 => 1e-4,
        DType::F16 => 1e-2,
        _ => 5e-2,
    }
}

/// The unary ops with their inputs' domains.
const UNARY: &[(&str, Domain)] = &[
    ("Neg", Domain::Any),
    ("Square", Domain::Any),
    ("Sqrt", Domain::Positive),
    ("Rsqrt", Domain::Positive),
    ("Exp", Domain::Any),
    ("Log", Domain::Positive),
    ("Sin", Domain::Any),
    ("Cos", Domain::Any),
    ("Tanh", Domain::Any),
    ("Sigmoid", Domain::Any),
    ("Relu", Domain::AwayFromZero),
    ("Reciprocal", Domain::AwayFromZero),
];

/// The broadcasting binary ops with their inputs' domains.
const BINARY: &[(&str, Domain, Domain)] = &[
    ("AddV2", Domain::Any, Domain::Any),
    ("Sub", Domain::Any, Domain::Any),
    ("Mul", Domain::Any, Domain::Any),
    ("RealDiv", Domain::Any, Domain::AwayFromZero),
    ("Maximum", Domain::Grid(0.25), Domain::Grid(0.75)),
    ("Minimum", Domain::Grid(0.25), Domain::Grid(0.75)),
    ("Pow", Domain::Positive, Domain::Any),
    ("SquaredDifference", Domain::Any, Domain::Any),
];

/// The gradient ops (`(y, dy)` of one shape) with their inputs' domains.
const GRADIENT_OPS: &[(&str, Domain, Domain)] = &[
    ("SqrtGrad", Domain::Positive, Domain::Any),
    ("RsqrtGrad", Domain::Positive, Domain::Any),
    ("TanhGrad", Domain::Any, Domain::Any),
    ("SigmoidGrad", Domain::Any, Domain::Any),
    ("ReciprocalGrad", Domain::AwayFromZero, Domain::Any),
    ("ReluGrad", Domain::Any, Domain::AwayFromZero),
];

/// The ops that take complex numbers, with their number of inputs. For
/// `SquaredDifference`, whose output is real, TensorFlow's gradient
/// (`2 * grad * (x - y)`) is the derivative for a real incoming gradient
/// only; it is checked with one.
const COMPLEX: &[(&str, usize)] = &[
    ("Neg", 1),
    ("Square", 1),
    ("Sqrt", 1),
    ("Rsqrt", 1),
    ("Exp", 1),
    ("Log", 1),
    ("Sin", 1),
    ("Cos", 1),
    ("Tanh", 1),
    ("Sigmoid", 1),
    ("Reciprocal", 1),
    ("Conj", 1),
    ("AddV2", 2),
    ("Sub", 2),
    ("Mul", 2),
    ("RealDiv", 2),
    ("Pow", 2),
    ("SquaredDifference", 2),
    ("SqrtGrad", 2),
    ("RsqrtGrad", 2),
    ("TanhGrad", 2),
    ("SigmoidGrad", 2),
    ("ReciprocalGrad", 2),
];

fn unary_case() -> impl Strategy<Value = (&'static str, Domain)> {
    prop::sample::select(UNARY.to_vec())
}

fn binary_case(
    ops: &'static [(&'static str, Domain, Domain)],
) -> impl Strategy<Value = (&'static str, Domain, Domain)> {
    prop::sample::select(ops.to_vec())
}

fn real_dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(vec![DType::F64, DType::F32])
}

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(48)
}

// ---- Every op ----

#[test]
fn every_math_op_has_a_gradient_or_is_marked_not_differentiable() {
    op_kernels::link();
    let differentiable = [
        "Neg",
        "Square",
        "Sqrt",
        "Rsqrt",
        "Exp",
        "Log",
        "Sin",
        "Cos",
        "Tanh",
        "Sigmoid",
        "Relu",
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "Maximum",
        "Minimum",
        "Pow",
        "SquaredDifference",
        "AddN",
        "Cast",
        "Select",
        "SelectV2",
        "Reciprocal",
        "Conj",
        "SqrtGrad",
        "RsqrtGrad",
        "TanhGrad",
        "SigmoidGrad",
        "ReciprocalGrad",
        "ReluGrad",
    ];
    for op in differentiable {
        let registration = Registry::global().gradient(op).unwrap();
        let registration = registration.unwrap_or_else(|| panic!("{op} has no gradient"));
        assert!(registration.functions.is_some(), "{op}");
        assert!(
            registration.file.ends_with("grad.rs"),
            "{op}: {}",
            registration.file
        );
    }
    for op in ["Greater", "Less", "GreaterEqual", "LessEqual", "Equal"] {
        let registration = Registry::global().gradient(op).unwrap();
        let registration = registration.unwrap_or_else(|| panic!("{op} is not marked"));
        assert!(registration.functions.is_none(), "{op}");
    }
}

// ---- Numeric checks on random inputs ----

#[test]
fn binary_gradients_reduce_the_usual_broadcasts_whatever_shapes_they_see() {
    op_kernels::link();
    let pairs: &[(&[usize], &[usize])] = &[
        (&[2, 3], &[3]),
        (&[3], &[2, 3]),
        (&[2, 1], &[1, 3]),
        (&[], &[2, 3]),
        (&[2, 3], &[]),
        (&[3], &[1, 3]),
        (&[1, 3], &[3]),
        (&[2, 3], &[2, 3]),
        (&[0, 3], &[3]),
        (&[2, 1, 3], &[4, 1]),
    ];
    for (op, dx, dy) in BINARY {
        for (seed, (x_dims, y_dims)) in pairs.iter().enumerate() {
            for dtype in [DType::F64, DType::F32] {
                for shapes in Shapes::ALL {
                    let seed = seed as u64;
                    let x = input(dtype, x_dims, *dx, seed);
                    let y = input(dtype, y_dims, *dy, seed + 100);
                    check(&Case::new(op, vec![x, y]), seed, shapes, tolerance(dtype));
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn unary_gradients_match_central_differences_in_every_float_type(
        (op, domain) in unary_case(),
        dtype in prop::sample::select(vec![DType::F64, DType::F32, DType::F16, DType::BF16]),
        dims in shape(),
        seed in any::<u64>(),
    ) {
        op_kernels::link();
        let case = Case::new(op, vec![input(dtype, &dims, domain, seed)]);
        check(&case, seed, Shapes::Known, tolerance(dtype));
    }

    #[test]
    fn binary_gradients_reduce_broadcasts_and_match_central_differences(
        (op, dx, dy) in binary_case(BINARY),
        dtype in real_dtype(),
        dims in math_common::broadcastable(2),
        shapes in shapes_seen(),
        seed in any::<u64>(),
    ) {
        op_kernels::link();
        let x = input(dtype, &dims[0], dx, seed);
        let y = input(dtype, &dims[1], dy, seed.rotate_left(17));
        check(&Case::new(op, vec![x, y]), seed, shapes, tolerance(dtype));
    }

    #[test]
    fn the_gradients_of_the_gradient_ops_match_central_differences(
        (op, da, db) in binary_case(GRADIENT_OPS),
        dtype in real_dtype(),
        dims in shape(),
        seed in any::<u64>(),
    ) {
        op_kernels::link();
        let a = input(dtype, &dims, da, seed);
        let b = input(dtype, &dims, db, seed.rotate_left(17));
        check(&Case::new(op, vec![a, b]), seed, Shapes::Known, tolerance(dtype));
    }

    #[test]
    fn complex_gradients_follow_tensorflows_convention(
        (op, arity) in prop::sample::select(COMPLEX.to_vec()),
        dtype in prop::sample::select(vec![DType::Complex128, DType::Complex64]),
        dims in shape(),
        seed in any::<u64>(),
    ) {
        op_kernels::link();
        // Inputs of one shape: `Sum` has no complex kernels yet, so a
        // complex broadcast cannot be reduced.
        // Real parts away from the branch cuts (and poles) at or left of 0.
        let x = input(dtype, &dims, Domain::Positive, seed);
        let mut case = if arity == 2 {
            let y = input(dtype, &dims, Domain::AwayFromZero, seed.rotate_left(17));
            Case::new(op, vec![x, y])
        } else {
            Case::new(op, vec![x])
        };
        if op == "SquaredDifference" {
            case = case.real_incoming();
        }
        check(&case, seed, Shapes::Known, tolerance(dtype));
    }

    #[test]
    fn select_gradients_go_to_the_chosen_values(
        dims in prop::collection::vec(1usize..4, 1..4),
        condition_form in 0usize..3,
        dtype in real_dtype(),
        seed in any::<u64>(),
    ) {
        op_kernels::link();
        // A scalar condition, one per element, or one per row.
        let cond_dims: Vec<usize> = match condition_form {
            0 => vec![],
            1 => dims.clone(),
            _ => vec![dims[0]],
        };
        let count: usize = cond_dims.iter().product();
        let cond: Vec<bool> = pseudo_random(seed, count).iter().map(|&u| u > 0.0).collect();
        let cond = Tensor::from_vec(&cond_dims, cond).unwrap();
        let t = input(dtype, &dims, Domain::Any, seed.rotate_left(7));
        let e = input(dtype, &dims, Domain::Any, seed.rotate_left(23));
        check(&Case::new("Select", vec![cond, t, e]), seed, Shapes::Known, tolerance(dtype));
    }

    #[test]
    fn select_v2_gradients_reduce_broadcasts(
        dims in math_common::broadcastable(3),
        dtype in real_dtype(),
        shapes in shapes_seen(),
        seed in any::<u64>(),
    ) {
        op_kernels::link();
        let count: usize = dims[0].iter().product();
        let cond: Vec<bool> = pseudo_random(seed, count).iter().map(|&u| u > 0.0).collect();
        let cond = Tensor::from_vec(&dims[0], cond).unwrap();
        let t = input(dtype, &dims[1], Domain::Any, seed.rotate_left(7));
        let e = input(dtype, &dims[2], Domain::Any, seed.rotate_left(23));
        check(&Case::new("SelectV2", vec![cond, t, e]), seed, shapes, tolerance(dtype));
    }

    #[test]
    fn add_n_passes_the_gradient_to_every_input(
        n in 1usize..5,
        dims in shape(),
        dtype in real_dtype(),
        seed in any::<u64>(),
    ) {
        op_kernels::link();
        let inputs = (0..n)
            .map(|i| input(dtype, &dims, Domain::Any, seed.rotate_left(i as u32 * 9)))
            .collect();
        check(&Case::new("AddN", inputs).list(), seed, Shapes::Known, tolerance(dtype));
    }

    #[test]
    fn cast_gradients_convert_back_between_float_and_complex_types(
        source in prop::sample::select(vec![DType::F64, DType::F32, DType::Complex128]),
        target in prop::sample::select(vec![DType::F64, DType::F32, DType::Complex128, DType::Complex64]),
        dims in shape(),
        seed in any::<u64>(),
    ) {
        op_kernels::link();
        let x = input(source, &dims, Domain::Any, seed);
        let case = Case::new("Cast", vec![x]).attr("DstT", target);
        let narrowest = if source == DType::F32 || target == DType::F32 || target == DType::Complex64 {
            DType::F32
        } else {
            DType::F64
        };
        check(&case, seed, Shapes::Known, tolerance(narrowest));
    }
}

// ---- Where the functions have no derivative, TensorFlow's choices ----

/// The gradients of `case` for an incoming gradient of ones, as `f64`s
/// (`None` for an input without one).
fn gradients_for_ones(case: &Case) -> Vec<Option<Vec<f64>>> {
    let outputs = case.run().unwrap();
    let ones = outputs
        .iter()
        .map(|out| Some(OnesLike::call(out).run().unwrap()))
        .collect::<Vec<_>>();
    case.gradients(&ones, Shapes::Known)
        .unwrap()
        .iter()
        .map(|g| g.as_ref().map(components))
        .collect()
}

fn vector(values: &[f64]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

#[test]
fn maximum_and_minimum_give_ties_to_the_first_input() {
    op_kernels::link();
    let (x, y) = (vector(&[1.0, 2.0, 3.0]), vector(&[1.0, 5.0, 0.0]));
    let max = gradients_for_ones(&Case::new("Maximum", vec![x.clone(), y.clone()]));
    assert_eq!(max[0].as_deref(), Some(&[1.0, 0.0, 1.0][..]));
    assert_eq!(max[1].as_deref(), Some(&[0.0, 1.0, 0.0][..]));
    let min = gradients_for_ones(&Case::new("Minimum", vec![x, y]));
    assert_eq!(min[0].as_deref(), Some(&[1.0, 1.0, 0.0][..]));
    assert_eq!(min[1].as_deref(), Some(&[0.0, 0.0, 1.0][..]));
}

#[test]
fn relu_passes_no_gradient_at_zero() {
    op_kernels::link();
    let grads = gradients_for_ones(&Case::new("Relu", vec![vector(&[-1.0, 0.0, 2.0])]));
    assert_eq!(grads[0].as_deref(), Some(&[0.0, 0.0, 1.0][..]));
}

#[test]
fn pow_gives_the_exponent_no_gradient_where_the_base_is_not_positive() {
    op_kernels::link();
    // TensorFlow 2.21, for x = [-2, -1, 0, 2] and y = [3, 3, 2, 3]:
    // d/dx = [12, 3, 0, 12], d/dy = [-0, -0, 0, 5.54517744] (8 ln 2).
    let (x, y) = (
        vector(&[-2.0, -1.0, 0.0, 2.0]),
        vector(&[3.0, 3.0, 2.0, 3.0]),
    );
    let grads = gradients_for_ones(&Case::new("Pow", vec![x, y]));
    assert_eq!(grads[0].as_deref(), Some(&[12.0, 3.0, 0.0, 12.0][..]));
    let dy = grads[1].as_ref().unwrap();
    assert_eq!(&dy[..3], [0.0, 0.0, 0.0]);
    assert!((dy[3] - 8.0 * 2f64.ln()).abs() < 1e-12);
}

#[test]
fn select_v2_sums_the_gradient_of_a_broadcast_value() {
    op_kernels::link();
    let cond = Tensor::from_vec([2, 2], vec![true, false, false, true]).unwrap();
    let (t, e) = (Tensor::scalar(1.0f64), vector(&[3.0, 4.0]));
    let grads = gradients_for_ones(&Case::new("SelectV2", vec![cond, t, e]));
    assert_eq!(grads[0], None);
    assert_eq!(grads[1].as_deref(), Some(&[2.0][..]));
    assert_eq!(grads[2].as_deref(), Some(&[1.0, 1.0][..]));
}

#[test]
fn cast_to_or_from_an_integer_passes_no_gradient() {
    op_kernels::link();
    for (x, target) in [
        (vector(&[1.5, 2.5]), DType::I32),
        (Tensor::from_vec([2], vec![1i32, 2]).unwrap(), DType::F32),
    ] {
        let case = Case::new("Cast", vec![x]).attr("DstT", target);
        assert_eq!(gradients_for_ones(&case), [None]);
    }
}

#[test]
fn a_gradient_of_inputs_of_one_known_shape_is_not_reduced() {
    op_kernels::link();
    // AddV2's gradient is then the incoming gradient itself, no copy.
    let (x, y) = (vector(&[1.0, 2.0]), vector(&[3.0, 4.0]));
    let grad = vector(&[0.5, -0.5]);
    let case = Case::new("AddV2", vec![x, y]);
    let grads = case
        .gradients(&[Some(grad.clone())], Shapes::Known)
        .unwrap();
    let at = grad.as_slice::<f64>().unwrap().as_ptr();
    for g in &grads {
        assert_eq!(g.as_ref().unwrap().as_slice::<f64>().unwrap().as_ptr(), at);
    }
}

#[test]
fn a_formula_constant_of_an_integer_type_is_an_error_naming_the_node() {
    op_kernels::link();
    // Integers carry no gradients; asked anyway, Square's `2 * x` fails.
    let case = Case::new(
        "Square",
        vec![Tensor::from_vec([2], vec![1i32, 2]).unwrap()],
    );
    let grad = Tensor::from_vec([2], vec![1i32, 1]).unwrap();
    let error = case.gradients(&[Some(grad)], Shapes::Known).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    let text = error.to_string();
    for part in ["gradient of", "Square", "int32", "no gradient"] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
}

#[test]
fn an_output_nobody_used_gives_zero_gradients() {
    op_kernels::link();
    let case = Case::new("Mul", vec![vector(&[1.0, 2.0]), vector(&[3.0, 4.0])]);
    let grads = case.gradients(&[None], Shapes::Known).unwrap();
    for g in grads {
        assert_eq!(components(&g.unwrap()), [0.0, 0.0]);
    }
}
