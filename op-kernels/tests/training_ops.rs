//! The training ops (`ResourceApplyGradientDescent`,
//! `ResourceApplyMomentum`, `ResourceApplyAdam`): three steps against
//! TensorFlow's numbers in float, double and half, hand-computed steps
//! (bfloat16 too), the kernels against a naive reference on random sizes
//! (large ones split over threads), `use_locking`, copy-on-write for
//! readers, many threads on shared variables (no lost update, no deadlock),
//! every error (uninitialized, wrong dtype, wrong shape, not a scalar, one
//! variable twice, no integer kernel), the shape functions and the
//! not-differentiable marks.

use std::sync::Arc;
use std::time::Duration;

use op_core::shape_inference::testing::ShapeTest;
use op_core::threads::ThreadPool;
use op_core::{Code, DType, Error, Registry, Runtime, ShapeValue, Tensor, bf16, f16};
use op_kernels::training::{
    AdamParams, MomentumParams, Real, ResourceApplyAdam, ResourceApplyAdamCall,
    ResourceApplyGradientDescent, ResourceApplyGradientDescentCall, ResourceApplyMomentum,
    ResourceApplyMomentumCall,
};
use op_kernels::variable::Variable;
use proptest::prelude::*;

mod common;
use common::{assert_contains, run_jobs};

// ---- TensorFlow's numbers ----

/// The variable's initial value and each step's gradient, as in
/// `tools/tensorflow/training_reference.py`.
const INITIAL: [f64; 3] = [1.0, 2.0, -3.0];
const GRADS: [[f64; 3]; 3] = [[0.1, -0.2, 0.3], [0.5, 0.5, -1.0], [-0.25, 0.75, 2.0]];

// What TensorFlow 2.21 computes: printed by
// tools/tensorflow/training_reference.py (its first section). Each const is
// the variable (or slot) after steps 1, 2 and 3; half values are written as
// the float they widen to. The scalar inputs: alpha 0.1 (gradient descent);
// lr 0.1, momentum 0.9 (momentum); lr 0.01, beta1 0.9, beta2 0.999,
// epsilon 1e-7, beta1_power 0.9^t, beta2_power 0.999^t (Adam). The slots
// do not depend on Nesterov (the script prints the same numbers for them
// with and without it), so each is written once, with the plain run's
// name.
const GRADIENT_DESCENT_F32: [[f32; 3]; 3] = [
    [0.99, 2.02, -3.03],
    [0.94, 1.97, -2.93],
    [0.965, 1.895, -3.13],
];
const MOMENTUM_F32: [[f32; 3]; 3] = [
    [0.99, 2.02, -3.03],
    [0.931, 1.988, -2.957],
    [0.9029, 1.8842001, -3.0913],
];
const MOMENTUM_ACCUM_F32: [[f32; 3]; 3] = [
    [0.1, -0.2, 0.3],
    [0.59, 0.32, -0.73],
    [0.28099996, 1.038, 1.3429999],
];
const MOMENTUM_NESTEROV_F32: [[f32; 3]; 3] = [
    [0.981, 2.038, -3.057],
    [0.8779, 1.9592001, -2.8913],
    [0.87761, 1.7907802, -3.21217],
];
const ADAM_F32: [[f32; 3]; 3] = [
    [0.9900003, 2.0099998, -3.01],
    [0.9813898, 2.0055776, -3.0047967],
    [0.97822756, 1.9983945, -3.0086],
];
const ADAM_M_F32: [[f32; 3]; 3] = [
    [0.010000003, -0.020000005, 0.030000009],
    [0.059000015, 0.032000005, -0.073000014],
    [0.028100006, 0.10380002, 0.13430004],
];
const ADAM_V_F32: [[f32; 3]; 3] = [
    [9.9998715e-06, 3.9999486e-05, 8.9998844e-05],
    [0.00025998664, 0.00028995628, 0.001089896],
    [0.00032222585, 0.00085215905, 0.005088755],
];
const ADAM_NESTEROV_F32: [[f32; 3]; 3] = [
    [0.9810006, 2.0189998, -3.0189998],
    [0.9659541, 2.0081103, -3.0071888],
    [0.96592146, 1.9964556, -3.0162752],
];
const GRADIENT_DESCENT_F64: [[f64; 3]; 3] = [
    [0.99, 2.02, -3.03],
    [0.94, 1.97, -2.9299999999999997],
    [0.965, 1.895, -3.13],
];
const MOMENTUM_F64: [[f64; 3]; 3] = [
    [0.99, 2.02, -3.03],
    [0.931, 1.988, -2.957],
    [0.9029, 1.8841999999999999, -3.0913],
];
const MOMENTUM_ACCUM_F64: [[f64; 3]; 3] = [
    [0.1, -0.2, 0.3],
    [0.59, 0.31999999999999995, -0.73],
    [0.281, 1.038, 1.343],
];
const MOMENTUM_NESTEROV_F64: [[f64; 3]; 3] = [
    [0.981, 2.038, -3.057],
    [0.8779, 1.9591999999999998, -2.8912999999999998],
    [0.87761, 1.7907799999999998, -3.21217],
];
const ADAM_F64: [[f64; 3]; 3] = [
    [0.9900003162177663, 2.009999841888617, -3.009999894591856],
    [0.9813899069976069, 2.0055777152201966, -3.0047965927238356],
    [0.9782276652986062, 1.998394698322465, -3.0085997213006914],
];
const ADAM_M_F64: [[f64; 3]; 3] = [
    [
        0.009999999999999998,
        -0.019999999999999997,
        0.029999999999999992,
    ],
    [
        0.05899999999999998,
        0.031999999999999994,
        -0.07299999999999998,
    ],
    [
        0.02809999999999999,
        0.10379999999999998,
        0.13429999999999997,
    ],
];
const ADAM_V_F64: [[f64; 3]; 3] = [
    [
        1.0000000000000011e-05,
        4.0000000000000044e-05,
        9.000000000000007e-05,
    ],
    [
        0.00025999000000000025,
        0.00028996000000000024,
        0.0010899100000000008,
    ],
    [
        0.0003222300100000003,
        0.0008521700400000007,
        0.005088820090000005,
    ],
];
const ADAM_NESTEROV_F64: [[f64; 3]; 3] = [
    [0.9810006008137561, 2.018999699588372, -3.018999799724526],
    [0.9659542755493756, 2.008110212667386, -3.007189017265198],
    [0.9659216403147596, 1.99645545634835, -3.0162754645210113],
];
const GRADIENT_DESCENT_F16: [[f32; 3]; 3] = [
    [0.9902344, 2.0195312, -3.0292969],
    [0.9404297, 1.9697266, -2.9296875],
    [0.96533203, 1.8945312, -3.1289062],
];
const MOMENTUM_F16: [[f32; 3]; 3] = [
    [0.9902344, 2.0195312, -3.0292969],
    [0.93115234, 1.9873047, -2.9570312],
    [0.9033203, 1.8837891, -3.0917969],
];
const MOMENTUM_ACCUM_F16: [[f32; 3]; 3] = [
    [0.099975586, -0.19995117, 0.30004883],
    [0.58984375, 0.32006836, -0.72998047],
    [0.28076172, 1.0380859, 1.34375],
];
const MOMENTUM_NESTEROV_F16: [[f32; 3]; 3] = [
    [0.98095703, 2.0371094, -3.0566406],
    [0.8779297, 1.9580078, -2.890625],
    [0.8774414, 1.7900391, -3.2109375],
];
const ADAM_F16: [[f32; 3]; 3] = [
    [0.9902344, 2.0097656, -3.0097656],
    [0.9814453, 2.0058594, -3.0039062],
    [0.9785156, 1.9990234, -3.0078125],
];
const ADAM_M_F16: [[f32; 3]; 3] = [
    [0.010009766, -0.020019531, 0.030029297],
    [0.059051514, 0.032043457, -0.07312012],
    [0.02810669, 0.103881836, 0.13427734],
];
const ADAM_V_F16: [[f32; 3]; 3] = [
    [9.775162e-06, 3.9041042e-05, 8.791685e-05],
    [0.0002539158, 0.00028324127, 0.0010643005],
    [0.00031471252, 0.00083208084, 0.004966736],
];
const ADAM_NESTEROV_F16: [[f32; 3]; 3] = [
    [0.98095703, 2.0195312, -3.0195312],
    [0.9658203, 2.0078125, -3.0078125],
    [0.9658203, 1.9960938, -3.0175781],
];

// ---- Helpers ----

/// The element types under test, with conversions to and from `f64` and
/// how close a result must be to TensorFlow's.
trait Float: Real + std::fmt::Debug {
    fn of(x: f64) -> Self;
    fn wide(self) -> f64;
    /// The largest difference allowed, relative to the expected value: two
    /// units in the last place of the type.
    const TOLERANCE: f64;
}

impl Float for f32 {
    fn of(x: f64) -> f32 {
        x as f32
    }
    fn wide(self) -> f64 {
        self.into()
    }
    const TOLERANCE: f64 = 2.0 * f32::EPSILON as f64;
}

impl Float for f64 {
    fn of(x: f64) -> f64 {
        x
    }
    fn wide(self) -> f64 {
        self
    }
    const TOLERANCE: f64 = 2.0 * f64::EPSILON;
}

/// The 16-bit floats, with two units in the last place of their 11 and 8
/// bits of precision.
macro_rules! float_16 {
    ($($t:ty => $tolerance:expr),*) => {$(
        impl Float for $t {
            fn of(x: f64) -> $t {
                <$t>::from_f64(x)
            }
            fn wide(self) -> f64 {
                self.to_f64()
            }
            const TOLERANCE: f64 = $tolerance;
        }
    )*};
}

float_16!(f16 => 2.0 / 1024.0, bf16 => 2.0 / 128.0);

fn tensor<T: Float>(values: &[f64]) -> Tensor {
    Tensor::from_vec([values.len()], values.iter().map(|&x| T::of(x)).collect()).unwrap()
}

fn scalar<T: Float>(x: f64) -> Tensor {
    Tensor::scalar(T::of(x))
}

/// A new anonymous variable holding `values`, of `T`.
fn variable<T: Float>(values: &[f64]) -> Variable<'static> {
    op_kernels::link();
    Variable::new(tensor::<T>(values)).unwrap()
}

fn values<T: Float>(v: &Variable<'_>) -> Vec<f64> {
    let value = v.read().unwrap();
    value
        .as_slice::<T>()
        .unwrap()
        .iter()
        .map(|x| x.wide())
        .collect()
}

/// Asserts that each of `got` is within `T::TOLERANCE` of `want`
/// (relative), naming `what`.
#[track_caller]
fn assert_close<T: Float>(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        let allowed = T::TOLERANCE * w.abs().max(1e-30);
        assert!(
            (g - w).abs() <= allowed,
            "{what} ({}): got {got:?}, TensorFlow's {want:?}",
            T::DTYPE
        );
    }
}

fn widen32(rows: [[f32; 3]; 3]) -> [[f64; 3]; 3] {
    rows.map(|row| row.map(f64::from))
}

/// A `ResourceApplyGradientDescent` of `delta` at rate `alpha` on the
/// variable behind `var`, in `T`.
fn descend<T: Float>(var: &Tensor, alpha: f64, delta: &[f64]) -> ResourceApplyGradientDescentCall {
    ResourceApplyGradientDescent::call(var, scalar::<T>(alpha), tensor::<T>(delta))
}

/// A `ResourceApplyMomentum` of `grad` at rate `lr` with `momentum` on the
/// variables behind `var` and `accum`, in `T`.
fn momentum<T: Float>(
    var: &Tensor,
    accum: &Tensor,
    lr: f64,
    grad: &[f64],
    momentum: f64,
) -> ResourceApplyMomentumCall {
    ResourceApplyMomentum::call(
        var,
        accum,
        scalar::<T>(lr),
        tensor::<T>(grad),
        scalar::<T>(momentum),
    )
}

/// A `ResourceApplyAdam` of `grad` with the scalars of `p` (and its
/// `use_nesterov`) on the variables behind `var`, `m` and `v`, in `T`.
fn adam<T: Float>(
    [var, m, v]: [&Tensor; 3],
    p: &AdamParams<f64>,
    grad: &[f64],
) -> ResourceApplyAdamCall {
    ResourceApplyAdam::call(
        var,
        m,
        v,
        scalar::<T>(p.beta1_power),
        scalar::<T>(p.beta2_power),
        scalar::<T>(p.lr),
        scalar::<T>(p.beta1),
        scalar::<T>(p.beta2),
        scalar::<T>(p.epsilon),
        tensor::<T>(grad),
    )
    .use_nesterov(p.nesterov)
}

/// Adam's scalars with TensorFlow's defaults but for the learning rate
/// (`lr`), at step `t` (from 1).
fn adam_params(lr: f64, t: i32, nesterov: bool) -> AdamParams<f64> {
    AdamParams {
        beta1_power: 0.9f64.powi(t),
        beta2_power: 0.999f64.powi(t),
        lr,
        beta1: 0.9,
        beta2: 0.999,
        epsilon: 1e-7,
        nesterov,
    }
}

// ---- Against TensorFlow ----

/// Three steps of a training op, one per gradient of `GRADS`, on a
/// variable starting at `INITIAL` and `N - 1` zeroed slots: `apply` runs
/// step `t` (from 1) on them with that step's gradient, and after each step
/// each of them (named in `names`) is checked against TensorFlow's values
/// in `want`.
fn check_steps<T: Float, const N: usize>(
    what: &str,
    names: [&str; N],
    want: [[[f64; 3]; 3]; N],
    apply: impl Fn([&Tensor; N], i32, &[f64]) -> Result<(), Error>,
) {
    let variables: [Variable<'static>; N] =
        std::array::from_fn(|i| variable::<T>(if i == 0 { &INITIAL } else { &[0.0; 3] }));
    for (step, grad) in GRADS.iter().enumerate() {
        let t = step as i32 + 1;
        apply(variables.each_ref().map(Variable::handle), t, grad).unwrap();
        for ((variable, name), want) in variables.iter().zip(names).zip(&want) {
            let what = format!("{what}, step {t}, {name}");
            assert_close::<T>(&what, &values::<T>(variable), &want[step]);
        }
    }
}

fn check_gradient_descent<T: Float>(want: [[f64; 3]; 3]) {
    check_steps::<T, 1>("gradient descent", ["var"], [want], |[var], _, grad| {
        descend::<T>(var, 0.1, grad).run()
    });
}

#[test]
fn gradient_descent_gives_tensorflows_numbers() {
    check_gradient_descent::<f32>(widen32(GRADIENT_DESCENT_F32));
    check_gradient_descent::<f64>(GRADIENT_DESCENT_F64);
    check_gradient_descent::<f16>(widen32(GRADIENT_DESCENT_F16));
}

fn check_momentum<T: Float>(nesterov: bool, want: [[f64; 3]; 3], want_accum: [[f64; 3]; 3]) {
    let what = format!("momentum (nesterov {nesterov})");
    let want = [want, want_accum];
    check_steps::<T, 2>(&what, ["var", "accum"], want, |[var, accum], _, grad| {
        momentum::<T>(var, accum, 0.1, grad, 0.9)
            .use_nesterov(nesterov)
            .run()
    });
}

#[test]
fn momentum_gives_tensorflows_numbers_with_and_without_nesterov() {
    check_momentum::<f32>(false, widen32(MOMENTUM_F32), widen32(MOMENTUM_ACCUM_F32));
    check_momentum::<f32>(
        true,
        widen32(MOMENTUM_NESTEROV_F32),
        widen32(MOMENTUM_ACCUM_F32),
    );
    check_momentum::<f64>(false, MOMENTUM_F64, MOMENTUM_ACCUM_F64);
    check_momentum::<f64>(true, MOMENTUM_NESTEROV_F64, MOMENTUM_ACCUM_F64);
    check_momentum::<f16>(false, widen32(MOMENTUM_F16), widen32(MOMENTUM_ACCUM_F16));
    check_momentum::<f16>(
        true,
        widen32(MOMENTUM_NESTEROV_F16),
        widen32(MOMENTUM_ACCUM_F16),
    );
}

fn check_adam<T: Float>(nesterov: bool, want: [[[f64; 3]; 3]; 3]) {
    let what = format!("Adam (nesterov {nesterov})");
    check_steps::<T, 3>(&what, ["var", "m", "v"], want, |variables, t, grad| {
        adam::<T>(variables, &adam_params(0.01, t, nesterov), grad).run()
    });
}

#[test]
fn adam_gives_tensorflows_numbers_with_and_without_nesterov() {
    check_adam::<f32>(false, [ADAM_F32, ADAM_M_F32, ADAM_V_F32].map(widen32));
    check_adam::<f32>(
        true,
        [ADAM_NESTEROV_F32, ADAM_M_F32, ADAM_V_F32].map(widen32),
    );
    check_adam::<f64>(false, [ADAM_F64, ADAM_M_F64, ADAM_V_F64]);
    check_adam::<f64>(true, [ADAM_NESTEROV_F64, ADAM_M_F64, ADAM_V_F64]);
    check_adam::<f16>(false, [ADAM_F16, ADAM_M_F16, ADAM_V_F16].map(widen32));
    check_adam::<f16>(
        true,
        [ADAM_NESTEROV_F16, ADAM_M_F16, ADAM_V_F16].map(widen32),
    );
}

// ---- By hand ----

/// Values chosen so that every intermediate is exact in every type
/// (bfloat16 included): the results are exact.
fn by_hand<T: Float>() {
    // var -= alpha * delta
    let var = variable::<T>(&[1.0, 2.0]);
    descend::<T>(var.handle(), 0.5, &[2.0, -4.0]).run().unwrap();
    assert_eq!(values::<T>(&var), [0.0, 4.0], "{}", T::DTYPE);

    // accum = 0.5 * 0.5 + 1 = 1.25; var = 1 - 0.5 * 1.25 = 0.375, or with
    // Nesterov 1 - (1 * 0.5 + 1.25 * 0.5 * 0.5) = 0.1875.
    for (nesterov, want) in [(false, 0.375), (true, 0.1875)] {
        let var = variable::<T>(&[1.0]);
        let accum = variable::<T>(&[0.5]);
        momentum::<T>(var.handle(), accum.handle(), 0.5, &[1.0], 0.5)
            .use_nesterov(nesterov)
            .run()
            .unwrap();
        assert_eq!(values::<T>(&accum), [1.25], "{}", T::DTYPE);
        assert_eq!(
            values::<T>(&var),
            [want],
            "{} nesterov {nesterov}",
            T::DTYPE
        );
    }

    // beta1 0.5, beta2 0.75, step 1, grad 2: m = 2 * 0.5 = 1, v = 4 * 0.25
    // = 1, alpha = 0.5 * sqrt(0.25) / 0.5 = 0.5; var = 3 - 1 * 0.5 / (1 +
    // epsilon), or with Nesterov 3 - (2 * 0.5 + 0.5 * 1) * 0.5 / (1 +
    // epsilon).
    for (nesterov, epsilon, want) in [
        (false, 0.0, 2.5),
        (false, 1.0, 2.75),
        (true, 0.0, 2.25),
        (true, 1.0, 2.625),
    ] {
        let var = variable::<T>(&[3.0]);
        let m = variable::<T>(&[0.0]);
        let v = variable::<T>(&[0.0]);
        let p = AdamParams {
            beta1_power: 0.5,
            beta2_power: 0.75,
            lr: 0.5,
            beta1: 0.5,
            beta2: 0.75,
            epsilon,
            nesterov,
        };
        adam::<T>([var.handle(), m.handle(), v.handle()], &p, &[2.0])
            .run()
            .unwrap();
        assert_eq!(values::<T>(&m), [1.0], "{}", T::DTYPE);
        assert_eq!(values::<T>(&v), [1.0], "{}", T::DTYPE);
        let what = format!("{} nesterov {nesterov} epsilon {epsilon}", T::DTYPE);
        assert_eq!(values::<T>(&var), [want], "{what}");
    }
}

#[test]
fn hand_computed_steps_are_exact_in_every_type() {
    by_hand::<f32>();
    by_hand::<f64>();
    by_hand::<f16>();
    by_hand::<bf16>();
}

#[test]
fn the_slice_functions_compute_what_the_kernels_do() {
    let mut var = [1.0f32, 2.0];
    op_kernels::training::gradient_descent(&mut var, 0.5, &[2.0, -4.0]);
    assert_eq!(var, [0.0, 4.0]);

    let (mut var, mut accum) = ([1.0f64], [0.5f64]);
    let p = MomentumParams {
        lr: 0.5,
        momentum: 0.5,
        nesterov: true,
    };
    op_kernels::training::momentum(&mut var, &mut accum, &[1.0], p);
    assert_eq!((var, accum), ([0.1875], [1.25]));

    let p = AdamParams {
        beta1_power: 0.5f32,
        beta2_power: 0.75,
        lr: 0.5,
        beta1: 0.5,
        beta2: 0.75,
        epsilon: 1.0,
        nesterov: false,
    };
    assert_eq!(p.alpha(), 0.5);
    let (mut var, mut m, mut v) = ([3.0f32], [0.0f32], [0.0f32]);
    op_kernels::training::adam(&mut var, &mut m, &mut v, &[2.0], &p, p.alpha());
    assert_eq!((var, m, v), ([2.75], [1.0], [1.0]));
}

// ---- Against a naive reference, on random sizes ----

/// TensorFlow's Adam functor, element by element, written out again.
fn naive_adam(x: &mut f32, m: &mut f32, v: &mut f32, g: f32, p: &AdamParams<f32>) {
    let alpha = p.lr * (1.0 - p.beta2_power).sqrt() / (1.0 - p.beta1_power);
    *m += (g - *m) * (1.0 - p.beta1);
    *v += (g * g - *v) * (1.0 - p.beta2);
    let numerator = if p.nesterov {
        (g * (1.0 - p.beta1) + p.beta1 * *m) * alpha
    } else {
        *m * alpha
    };
    *x -= numerator / (v.sqrt() + p.epsilon);
}

/// A runtime whose kernels split large work over 4 threads.
fn threaded() -> &'static Runtime {
    static RUNTIME: std::sync::LazyLock<Runtime> = std::sync::LazyLock::new(|| {
        Runtime::new().with_threads(Arc::new(ThreadPool::new(4).unwrap()))
    });
    op_kernels::link();
    &RUNTIME
}

fn values_of(len: usize) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(-10.0f32..10.0, len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Sizes from empty to 40,000 elements: the large ones are split over
    /// the pool's threads, and every element must still be updated once,
    /// exactly as the reference does.
    #[test]
    fn every_kernel_matches_a_naive_reference_at_any_size(
        (var0, m0, v0, grad) in (0usize..40_000).prop_flat_map(|n| {
            (values_of(n), values_of(n), values_of(n).prop_map(|v| v.iter().map(|x| x.abs()).collect::<Vec<f32>>()), values_of(n))
        }),
        nesterov in any::<bool>(),
        step in 1i32..50,
    ) {
        let rt = threaded();
        let n = var0.len();
        let t = |v: &[f32]| Tensor::from_vec([n], v.to_vec()).unwrap();
        let new = |v: &[f32]| Variable::new_on(rt, t(v)).unwrap();
        let read = |v: &Variable<'_>| v.read().unwrap().as_slice::<f32>().unwrap().to_vec();

        // Gradient descent.
        let var = new(&var0);
        ResourceApplyGradientDescent::call(var.handle(), Tensor::scalar(0.25f32), t(&grad))
            .run_on(rt)
            .unwrap();
        let want: Vec<f32> = var0.iter().zip(&grad).map(|(x, g)| x - g * 0.25).collect();
        prop_assert_eq!(read(&var), want);

        // Momentum.
        let (var, accum) = (new(&var0), new(&m0));
        ResourceApplyMomentum::call(var.handle(), accum.handle(), Tensor::scalar(0.1f32), t(&grad), Tensor::scalar(0.9f32))
            .use_nesterov(nesterov)
            .run_on(rt)
            .unwrap();
        let mut want_var = var0.clone();
        let mut want_accum = m0.clone();
        for i in 0..n {
            want_accum[i] = want_accum[i] * 0.9 + grad[i];
            want_var[i] -= if nesterov {
                grad[i] * 0.1 + want_accum[i] * 0.9 * 0.1
            } else {
                want_accum[i] * 0.1
            };
        }
        prop_assert_eq!(read(&var), want_var);
        prop_assert_eq!(read(&accum), want_accum);

        // Adam.
        let p = AdamParams {
            beta1_power: 0.9f32.powi(step),
            beta2_power: 0.999f32.powi(step),
            lr: 0.001,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-7,
            nesterov,
        };
        let (var, m, v) = (new(&var0), new(&m0), new(&v0));
        ResourceApplyAdam::call(
            var.handle(), m.handle(), v.handle(),
            Tensor::scalar(p.beta1_power), Tensor::scalar(p.beta2_power), Tensor::scalar(p.lr),
            Tensor::scalar(p.beta1), Tensor::scalar(p.beta2), Tensor::scalar(p.epsilon), t(&grad),
        )
        .use_nesterov(nesterov)
        .run_on(rt)
        .unwrap();
        let (mut want_var, mut want_m, mut want_v) = (var0.clone(), m0.clone(), v0.clone());
        for i in 0..n {
            naive_adam(&mut want_var[i], &mut want_m[i], &mut want_v[i], grad[i], &p);
        }
        prop_assert_eq!(read(&var), want_var);
        prop_assert_eq!(read(&m), want_m);
        prop_assert_eq!(read(&v), want_v);
    }
}

#[test]
fn variables_of_any_rank_are_updated_elementwise() {
    let var =
        Variable::new(Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap()).unwrap();
    let delta = Tensor::from_vec([2, 2], vec![1.0f32, 1.0, 2.0, 2.0]).unwrap();
    ResourceApplyGradientDescent::call(var.handle(), Tensor::scalar(1.0f32), delta)
        .run()
        .unwrap();
    let value = var.read().unwrap();
    assert_eq!(value.dims(), [2, 2]);
    assert_eq!(value.as_slice::<f32>().unwrap(), [0.0, 1.0, 1.0, 2.0]);
}

// ---- Locking, sharing, threads ----

#[test]
fn use_locking_is_accepted_and_changes_nothing() {
    let a = variable::<f32>(&INITIAL);
    let b = variable::<f32>(&INITIAL);
    for (var, locking) in [(&a, false), (&b, true)] {
        descend::<f32>(var.handle(), 0.1, &GRADS[0])
            .use_locking(locking)
            .run()
            .unwrap();
    }
    assert_eq!(values::<f32>(&a), values::<f32>(&b));
}

#[test]
fn a_value_read_before_an_update_does_not_change() {
    let var = variable::<f32>(&[1.0, 2.0]);
    let before = var.read().unwrap();
    descend::<f32>(var.handle(), 1.0, &[1.0, 1.0])
        .run()
        .unwrap();
    assert_eq!(before.as_slice::<f32>().unwrap(), [1.0, 2.0]);
    assert_eq!(values::<f32>(&var), [0.0, 1.0]);
}

#[test]
fn named_variables_are_updated_through_any_of_their_handles() {
    op_kernels::link();
    let shape = ShapeValue::from_sizes(&[2]);
    let a = Variable::named("", "training_ops_named", DType::F64, shape.clone()).unwrap();
    let b = Variable::named("", "training_ops_named", DType::F64, shape).unwrap();
    a.assign(tensor::<f64>(&[1.0, 2.0])).unwrap();
    descend::<f64>(b.handle(), 0.5, &[2.0, 2.0]).run().unwrap();
    assert_eq!(values::<f64>(&a), [0.0, 1.0]);
    a.destroy().unwrap();
}

#[test]
fn updates_from_many_threads_are_never_lost() {
    const THREADS: usize = 8;
    const STEPS: usize = 50;
    const LEN: usize = 30_000;
    let rt = threaded();
    let var = Variable::new_on(rt, Tensor::from_vec([LEN], vec![0.0f32; LEN]).unwrap()).unwrap();
    let handle = var.handle().clone();
    let ones = Tensor::from_vec([LEN], vec![1.0f32; LEN]).unwrap();
    let jobs = (0..THREADS)
        .map(|i| {
            let (handle, ones) = (handle.clone(), ones.clone());
            let job: Box<dyn FnOnce() + Send> = Box::new(move || {
                for _ in 0..STEPS {
                    ResourceApplyGradientDescent::call(&handle, Tensor::scalar(1.0f32), &ones)
                        .run_on(rt)
                        .unwrap();
                }
            });
            (format!("thread {i}"), job)
        })
        .collect();
    run_jobs(jobs, Duration::from_secs(120));
    let value = var.read().unwrap();
    let want = -((THREADS * STEPS) as f32);
    assert!(value.as_slice::<f32>().unwrap().iter().all(|&x| x == want));
}

#[test]
fn updates_that_take_two_variables_in_opposite_roles_never_deadlock() {
    let a = variable::<f32>(&[0.0; 4]);
    let b = variable::<f32>(&[0.0; 4]);
    let jobs = [
        (a.handle().clone(), b.handle().clone()),
        (b.handle().clone(), a.handle().clone()),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (var, accum))| {
        let job: Box<dyn FnOnce() + Send> = Box::new(move || {
            for _ in 0..500 {
                momentum::<f32>(&var, &accum, 0.0, &[1.0; 4], 0.0)
                    .run()
                    .unwrap();
            }
        });
        (format!("thread {i}"), job)
    })
    .collect();
    run_jobs(jobs, Duration::from_secs(60));
    // accum = accum * 0 + 1 on every step; lr 0 leaves var.
    assert_eq!(values::<f32>(&a), [1.0; 4]);
    assert_eq!(values::<f32>(&b), [1.0; 4]);
}

// ---- Errors ----

/// A float Adam step of `grad` (node `adam_step`) on the variables behind
/// `var`, `m` and `v`.
fn adam_call(var: &Tensor, m: &Tensor, v: &Tensor, grad: &[f64]) -> Result<(), Error> {
    adam::<f32>([var, m, v], &adam_params(0.001, 1, false), grad)
        .node_name("adam_step")
        .run()
}

#[test]
fn an_uninitialized_variable_is_a_failed_precondition_naming_the_input() {
    op_kernels::link();
    let var = variable::<f32>(&[1.0, 2.0]);
    let m = Variable::uninitialized(DType::F32, ShapeValue::from_sizes(&[2])).unwrap();
    let v = variable::<f32>(&[0.0, 0.0]);
    let e = adam_call(var.handle(), m.handle(), v.handle(), &[1.0, 1.0]).unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert_contains(
        &e,
        &[
            "op ResourceApplyAdam (node 'adam_step')",
            "input 1 ('m')",
            "uninitialized",
            m.name(),
        ],
    );
    // Nothing was updated.
    assert_eq!(values::<f32>(&var), [1.0, 2.0]);

    // A named variable that was never assigned does not exist yet.
    let named = Variable::named(
        "",
        "training_ops_never_assigned",
        DType::F32,
        ShapeValue::from_sizes(&[2]),
    )
    .unwrap();
    let e = descend::<f32>(named.handle(), 0.1, &[1.0, 1.0])
        .run()
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert_contains(
        &e,
        &[
            "input 0 ('var')",
            "training_ops_never_assigned",
            "never assigned, or destroyed",
        ],
    );
}

#[test]
fn a_variable_of_another_dtype_is_an_invalid_argument() {
    let var = variable::<f64>(&[1.0, 2.0]);
    let e = descend::<f32>(var.handle(), 0.1, &[1.0, 1.0])
        .node_name("gd")
        .run()
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(
        &e,
        &[
            "op ResourceApplyGradientDescent (node 'gd')",
            "input 0 ('var')",
            "has dtype double, but T is float",
        ],
    );

    let var = variable::<f32>(&[1.0, 2.0]);
    let m = variable::<f16>(&[0.0, 0.0]);
    let e = adam_call(var.handle(), m.handle(), var.handle(), &[1.0, 1.0]).unwrap_err();
    assert_contains(&e, &["input 1 ('m')", "has dtype half, but T is float"]);
}

#[test]
fn shapes_that_differ_from_the_variables_are_an_invalid_argument() {
    let var = variable::<f32>(&[1.0, 2.0]);
    let unchanged = var.clone();
    let e = descend::<f32>(var.handle(), 0.1, &[1.0, 1.0, 1.0])
        .run()
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(
        &e,
        &["input 2 ('delta') has shape [3], but the variable of input 0 ('var') has shape [2]"],
    );

    let accum = variable::<f32>(&[0.0, 0.0, 0.0]);
    let e = momentum::<f32>(var.handle(), accum.handle(), 0.1, &[1.0, 1.0], 0.9)
        .run()
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(
        &e,
        &[
            "op ResourceApplyMomentum",
            "input 1 ('accum') has shape [3], but the variable of input 0 ('var') has shape [2]",
        ],
    );

    // The same number of elements in another shape is another shape.
    let var = Variable::new(Tensor::from_vec([2, 3], vec![0.0f32; 6]).unwrap()).unwrap();
    let grad = Tensor::from_vec([3, 2], vec![0.0f32; 6]).unwrap();
    let e = ResourceApplyGradientDescent::call(var.handle(), scalar::<f32>(0.1), grad)
        .run()
        .unwrap_err();
    assert_contains(
        &e,
        &["input 2 ('delta') has shape [3,2]", "has shape [2,3]"],
    ); // A refused update changes nothing.
    assert_eq!(values::<f32>(&unchanged), [1.0, 2.0]);
    assert_eq!(values::<f32>(&accum), [0.0, 0.0, 0.0]);
}

#[test]
fn hyperparameters_that_are_not_scalars_are_an_invalid_argument() {
    let var = variable::<f32>(&[1.0, 2.0]);
    let accum = variable::<f32>(&[0.0, 0.0]);
    let e = ResourceApplyMomentum::call(
        var.handle(),
        accum.handle(),
        scalar::<f32>(0.1),
        tensor::<f32>(&[1.0, 1.0]),
        tensor::<f32>(&[0.9]),
    )
    .run()
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(
        &e,
        &["input 4 ('momentum') must be a scalar, but has shape [1]"],
    );
    assert_eq!(values::<f32>(&var), [1.0, 2.0]);
}

#[test]
fn one_variable_in_two_roles_is_an_invalid_argument() {
    let var = variable::<f32>(&[1.0, 2.0]);
    let v = variable::<f32>(&[0.0, 0.0]);
    let e = adam_call(var.handle(), v.handle(), v.handle(), &[1.0, 1.0]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(
        &e,
        &["input 1 ('m') and input 2 ('v') are the same variable"],
    );
}

#[test]
fn integer_variables_have_no_kernel_as_in_tensorflow() {
    op_kernels::link();
    let var = Variable::new(Tensor::from_vec([2], vec![1i32, 2]).unwrap()).unwrap();
    let e = ResourceApplyGradientDescent::call(
        var.handle(),
        Tensor::scalar(1i32),
        Tensor::from_vec([2], vec![1i32, 1]).unwrap(),
    )
    .run()
    .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert_contains(&e, &["ResourceApplyGradientDescent"]);
}

#[test]
fn a_handle_to_another_kind_of_resource_is_an_error_naming_the_input() {
    op_kernels::link();
    let table = op_kernels::hash_table::SimpleHashTableHandle::<i64, f32>::new(0.0).unwrap();
    let e = descend::<f32>(table.handle(), 0.1, &[1.0])
        .run()
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_contains(&e, &["op ResourceApplyGradientDescent", "input 0 ('var')"]);
}

// ---- Shape functions, registration ----

#[test]
fn the_shape_functions_check_the_scalars_and_the_gradient() {
    op_kernels::link();
    let t = ShapeTest::new("ResourceApplyGradientDescent").attr("T", DType::F32);
    t.ok("[];[];[2,3]", "");
    t.ok("?;?;?", "");
    t.error(
        "[];[1];[2]",
        "input 1 ('alpha') has shape [1], which must be rank 0 but is rank 1",
    );

    let t = ShapeTest::new("ResourceApplyMomentum").attr("T", DType::F32);
    t.ok("[];[];[];[5];[]", "");
    t.ok("?;?;?;?;?", "");
    t.error(
        "[];[];[2];[5];[]",
        "input 2 ('lr') has shape [2], which must be rank 0 but is rank 1",
    );
    t.error(
        "[];[];[];[5];[1,1]",
        "input 4 ('momentum') has shape [1,1], which must be rank 0 but is rank 2",
    );

    let t = ShapeTest::new("ResourceApplyAdam").attr("T", DType::F64);
    t.ok("[];[];[];[];[];[];[];[];[];[4,4]", "");
    t.ok("?;?;?;?;?;?;?;?;?;?", "");
    t.error(
        "[];[];[];[];[];[];[];[];[3];[4]",
        "input 8 ('epsilon') has shape [3], which must be rank 0 but is rank 1",
    );
    t.error(
        "[];[];[];[2];[];[];[];[];[];[4]",
        "input 3 ('beta1_power') has shape [2]",
    );
}

#[test]
fn the_training_ops_are_registered_stateful_and_not_differentiable() {
    op_kernels::link();
    let registry = Registry::global();
    for op in [
        "ResourceApplyGradientDescent",
        "ResourceApplyMomentum",
        "ResourceApplyAdam",
    ] {
        let def = registry
            .get(op)
            .unwrap_or_else(|| panic!("{op} is not registered"));
        assert!(def.def().is_stateful, "{op}");
        // float, double, half, bfloat16 (and float, double on GPUs,
        // tests/gpu_kernels.rs).
        let cpu = def
            .kernels()
            .iter()
            .filter(|k| k.device == op_core::DeviceType::Cpu)
            .count();
        assert_eq!(cpu, 4, "{op}");
        let gradient = registry
            .gradient(op)
            .unwrap()
            .unwrap_or_else(|| panic!("{op} has no gradient entry"));
        assert!(
            gradient.functions.is_none(),
            "{op} must be marked not differentiable"
        );
    }
    assert!(registry.check().is_ok(), "{:?}", registry.check());
}

#[test]
fn use_locking_and_use_nesterov_can_be_set_together() {
    let var = variable::<f32>(&[1.0]);
    let accum = variable::<f32>(&[0.0]);
    // Both attrs set: the kernel sees use_nesterov (a Nesterov step differs).
    momentum::<f32>(var.handle(), accum.handle(), 0.5, &[1.0], 0.5)
        .use_locking(true)
        .use_nesterov(true)
        .run()
        .unwrap();
    // accum = 1; var = 1 - (0.5 + 1 * 0.5 * 0.5) = 0.25.
    assert_eq!(values::<f32>(&var), [0.25]);
}
