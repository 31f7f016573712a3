//! The optimizers (`Sgd`, `Momentum`, `Adam`) against Keras' numbers, with
//! fixed gradients, eagerly (on the runtime, with `Variable` handles) and
//! in a graph (a `GraphBuilder` and a `Session`): the same optimizer code
//! gives TensorFlow's values in both modes. Also: the state they keep
//! (the step count, slots, graph initializers and names), several
//! variables of several dtypes in one step, a saved model that resumes
//! training, slots of variables of unknown shape, and every error.

use std::sync::Arc;

use op_autodiff::optimizers::{Adam, Momentum, Optimizer, Sgd};
use op_core::symbolic::Output;
use op_core::{Code, DType, Error, Executor, OpCall, Runtime, ShapeValue, Tensor, bf16};
use op_graph::saved_model;
use op_graph::{Graph, GraphBuilder, Session};
use op_kernels::variable::Variable;

/// The variable's initial value and each step's gradient, as in
/// `tools/tensorflow/training_reference.py`.
const INITIAL: [f64; 3] = [1.0, 2.0, -3.0];
const GRADS: [[f64; 3]; 3] = [[0.1, -0.2, 0.3], [0.5, 0.5, -1.0], [-0.25, 0.75, 2.0]];

// What Keras 3 (TensorFlow 2.21) computes: printed by
// tools/tensorflow/training_reference.py (its second section), the
// variable after steps 1, 2 and 3 of `apply_gradients` with the gradients
// above: `SGD()`, `SGD(momentum=0.9)`, `SGD(momentum=0.9, nesterov=True)`,
// `Adam()`, `Adam(learning_rate=0.01)` on float32, and `Adam()` on
// float64; then Adam's formula on float64 with float64 hyperparameters,
// through TensorFlow's `ResourceApplyAdam` and `Pow` (Keras' own float64
// Adam rounds the betas to float32 first: `ops.cast` of a Python float
// makes a float32 tensor).
const KERAS_SGD: [[f32; 3]; 3] = [
    [0.999, 2.002, -3.003],
    [0.994, 1.9970001, -2.993],
    [0.9965, 1.9895, -3.013],
];
const KERAS_SGD_MOMENTUM: [[f32; 3]; 3] = [
    [0.999, 2.002, -3.003],
    [0.9931, 1.9988, -2.9957001],
    [0.99029, 1.98842, -3.00913],
];
const KERAS_SGD_NESTEROV: [[f32; 3]; 3] = [
    [0.9981, 2.0038, -3.0057],
    [0.98779, 1.99592, -2.98913],
    [0.98776096, 1.9790779, -3.021217],
];
const KERAS_ADAM: [[f32; 3]; 3] = [
    [0.999, 2.001, -3.001],
    [0.99813896, 2.0005577, -3.0004797],
    [0.99782276, 1.9998393, -3.00086],
];
const KERAS_ADAM_LR_0_01: [[f32; 3]; 3] = [
    [0.99000037, 2.0099998, -3.0099998],
    [0.98139006, 2.0055776, -3.0047965],
    [0.97822785, 1.9983946, -3.0085995],
];
const KERAS_ADAM_F64: [[f64; 3]; 3] = [
    [0.9990000382498092, 2.000999977560724, -3.000999982831013],
    [0.9981390030214037, 2.0005577678180018, -3.000479656084881],
    [0.9978227809376881, 1.9998394708669864, -3.000859966433578],
];
const ADAM_F64_DOUBLE_BETAS: [[f64; 3]; 3] = [
    [0.9990000316217766, 2.0009999841888617, -3.0009999894591854],
    [0.9981389906997606, 2.0005577715220197, -3.0004796592723832],
    [0.9978227665298606, 1.9998394698322466, -3.000859972130069],
];

/// How close to Keras: Keras writes some steps differently from
/// TensorFlow's training ops (momentum as `m = momentum * m - lr * grad;
/// var += m`, Adam's `1 - beta_1` in double before the cast), which
/// changes the last bits; relative to the value.
const TOLERANCE_F32: f64 = 1e-6;
/// A few units in the last place of a double.
const TOLERANCE_F64: f64 = 1e-14;
/// Keras' float64 Adam uses the betas rounded to float32 in `beta^t`,
/// which moves its results by about 1e-8.
const TOLERANCE_KERAS_F64: f64 = 2e-8;

#[track_caller]
fn assert_close(what: &str, got: &[f64], want: &[f64], tolerance: f64) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tolerance * w.abs().max(1.0),
            "{what}: got {got:?}, Keras' {want:?}"
        );
    }
}

fn f32s(values: &[f64]) -> Tensor {
    Tensor::from_vec([values.len()], values.iter().map(|&x| x as f32).collect()).unwrap()
}

fn f64s(values: &[f64]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

fn wide(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DType::F32 => t
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|&x| x.into())
            .collect(),
        DType::F64 => t.as_slice::<f64>().unwrap().to_vec(),
        DType::BF16 => t
            .as_slice::<bf16>()
            .unwrap()
            .iter()
            .map(|x| x.to_f64())
            .collect(),
        other => panic!("no test values of dtype {other}"),
    }
}

fn steps32(rows: [[f32; 3]; 3]) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|r| r.iter().map(|&x| x.into()).collect())
        .collect()
}

fn steps64(rows: [[f64; 3]; 3]) -> Vec<Vec<f64>> {
    rows.iter().map(|r| r.to_vec()).collect()
}

// ---- Eagerly ----

/// Three eager steps of `optimizer` on a variable of `dtype` (float or
/// double); the variable after each.
fn eager<O: Optimizer<Tensor>>(mut optimizer: O, dtype: DType) -> Vec<Vec<f64>> {
    op_kernels::link();
    let make = |values: &[f64]| {
        if dtype == DType::F64 {
            f64s(values)
        } else {
            f32s(values)
        }
    };
    let var = Variable::new(make(&INITIAL)).unwrap();
    let mut seen = Vec::new();
    for grad in GRADS {
        optimizer
            .apply_gradients(Runtime::global(), &[(make(&grad), var.handle().clone())])
            .unwrap();
        seen.push(wide(&var.read().unwrap()));
    }
    seen
}

#[track_caller]
fn check(what: &str, got: Vec<Vec<f64>>, want: Vec<Vec<f64>>, tolerance: f64) {
    for (step, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_close(&format!("{what}, step {}", step + 1), g, w, tolerance);
    }
}

/// [`check`]s `got` against Keras' float numbers `want`.
#[track_caller]
fn check_f32(what: &str, got: Vec<Vec<f64>>, want: [[f32; 3]; 3]) {
    check(what, got, steps32(want), TOLERANCE_F32);
}

fn sgd_momentum<V>(nesterov: bool) -> Sgd<V> {
    let mut sgd = Sgd::new();
    sgd.momentum = 0.9;
    sgd.nesterov = nesterov;
    sgd
}

#[test]
fn eager_sgd_gives_keras_numbers_with_and_without_momentum() {
    check_f32("SGD()", eager(Sgd::new(), DType::F32), KERAS_SGD);
    check_f32(
        "SGD(momentum=0.9)",
        eager(sgd_momentum(false), DType::F32),
        KERAS_SGD_MOMENTUM,
    );
    check_f32(
        "SGD(nesterov)",
        eager(sgd_momentum(true), DType::F32),
        KERAS_SGD_NESTEROV,
    );
}

#[test]
fn eager_momentum_is_keras_sgd_with_momentum() {
    check_f32(
        "Momentum(0.01, 0.9)",
        eager(Momentum::new(0.01, 0.9), DType::F32),
        KERAS_SGD_MOMENTUM,
    );
    let mut nesterov = Momentum::new(0.01, 0.9);
    nesterov.nesterov = true;
    check_f32(
        "Momentum(nesterov)",
        eager(nesterov, DType::F32),
        KERAS_SGD_NESTEROV,
    );
}

#[test]
fn eager_adam_gives_keras_numbers_in_float_and_double() {
    check_f32("Adam()", eager(Adam::new(), DType::F32), KERAS_ADAM);
    check_f32(
        "Adam(0.01)",
        eager(Adam::with_learning_rate(0.01), DType::F32),
        KERAS_ADAM_LR_0_01,
    );
    for (what, want, tolerance) in [
        ("Adam() float64", ADAM_F64_DOUBLE_BETAS, TOLERANCE_F64),
        ("Adam() float64, Keras", KERAS_ADAM_F64, TOLERANCE_KERAS_F64),
    ] {
        check(
            what,
            eager(Adam::new(), DType::F64),
            steps64(want),
            tolerance,
        );
    }
}

#[test]
fn the_defaults_are_keras() {
    let sgd = Sgd::<Tensor>::new();
    assert_eq!(
        (sgd.learning_rate, sgd.momentum, sgd.nesterov),
        (0.01, 0.0, false)
    );
    let adam = Adam::<Tensor>::new();
    assert_eq!(
        (adam.learning_rate, adam.beta_1, adam.beta_2, adam.epsilon),
        (0.001, 0.9, 0.999, 1e-7)
    );
    let momentum = Momentum::<Tensor>::new(0.1, 0.5);
    assert_eq!(
        (momentum.learning_rate, momentum.momentum, momentum.nesterov),
        (0.1, 0.5, false)
    );
}

/// The value, of `dtype`, of the variable behind `handle` on `runtime`.
fn read_as(runtime: &Runtime, handle: &Tensor, dtype: DType) -> Tensor {
    let [value] = runtime
        .execute_array(
            OpCall::new("ReadVariableOp")
                .input(handle)
                .attr("dtype", dtype),
        )
        .unwrap();
    value
}

/// The value of the int64 variable (a step count) behind `handle`.
fn read_i64(handle: &Tensor) -> i64 {
    read_as(Runtime::global(), handle, DType::I64)
        .scalar_value::<i64>()
        .unwrap()
}

#[test]
fn eager_state_is_the_step_count_and_zeroed_slots_made_on_first_use() {
    op_kernels::link();
    let mut adam = Adam::new();
    assert!(adam.iterations().is_none());
    assert!(adam.variables().is_empty());
    let a = Variable::new(f32s(&[1.0, 2.0])).unwrap();
    let b = Variable::new(Tensor::from_vec([2, 2], vec![1.0f64; 4]).unwrap()).unwrap();
    let grads = [
        (f32s(&[0.5, 0.5]), a.handle().clone()),
        (
            Tensor::from_vec([2, 2], vec![0.25f64; 4]).unwrap(),
            b.handle().clone(),
        ),
    ];
    adam.apply_gradients(Runtime::global(), &grads).unwrap();
    assert_eq!(read_i64(adam.iterations().unwrap()), 1);
    // The step count, then m and v of each variable, of its dtype and shape.
    assert_eq!(adam.variables().len(), 5);
    assert!(adam.initializers().is_empty());
    let m_b = read_as(Runtime::global(), &adam.variables()[3], DType::F64);
    assert_eq!(m_b.dims(), [2, 2]);
    // m = (1 - 0.9) * grad after the first step.
    assert_close("m of b", &wide(&m_b), &[0.025; 4], 1e-15);

    // The second step reuses the slots.
    adam.apply_gradients(Runtime::global(), &grads).unwrap();
    assert_eq!(adam.variables().len(), 5);
    assert_eq!(read_i64(adam.iterations().unwrap()), 2);

    // Plain SGD has no slots, but counts its steps.
    let mut sgd = Sgd::new();
    sgd.apply_gradients(Runtime::global(), &grads[..1]).unwrap();
    assert_eq!(sgd.variables().len(), 1);
    assert_eq!(read_i64(sgd.iterations().unwrap()), 1);
}

#[test]
fn each_dtype_gets_its_own_hyperparameters_in_one_step() {
    op_kernels::link();
    let x32 = Variable::new(f32s(&INITIAL)).unwrap();
    let x64 = Variable::new(f64s(&INITIAL)).unwrap();
    let x16 = Variable::new(Tensor::from_vec([3], INITIAL.map(bf16::from_f64).to_vec()).unwrap())
        .unwrap();
    let mut adam = Adam::new();
    for grad in GRADS {
        let grads = [
            (f32s(&grad), x32.handle().clone()),
            (f64s(&grad), x64.handle().clone()),
            (
                Tensor::from_vec([3], grad.map(bf16::from_f64).to_vec()).unwrap(),
                x16.handle().clone(),
            ),
        ];
        adam.apply_gradients(Runtime::global(), &grads).unwrap();
    }
    assert_close(
        "float",
        &wide(&x32.read().unwrap()),
        &steps32(KERAS_ADAM)[2],
        TOLERANCE_F32,
    );
    assert_close(
        "double",
        &wide(&x64.read().unwrap()),
        &steps64(ADAM_F64_DOUBLE_BETAS)[2],
        TOLERANCE_F64,
    );
    // bfloat16 keeps 8 bits, too few to hold steps of 0.001 near 1: its
    // first moment shows that it took the steps, with its own
    // hyperparameters (m = 0.1 g3 + 0.09 g2 + 0.081 g1).
    let [_, _, _, _, _, m16, _] = adam.variables() else {
        panic!("expected the step count and two slots of each variable");
    };
    let m16 = read_as(Runtime::global(), m16, DType::BF16);
    let want: Vec<f64> = (0..3)
        .map(|i| 0.1 * GRADS[2][i] + 0.09 * GRADS[1][i] + 0.081 * GRADS[0][i])
        .collect();
    assert_close("bfloat16 m", &wide(&m16), &want, 1.0 / 64.0);
    assert_eq!(read_i64(adam.iterations().unwrap()), 3);
}

// ---- Eager errors ----

#[track_caller]
fn assert_error(result: Result<(), Error>, code: Code, parts: &[&str]) {
    let e = result.unwrap_err();
    assert_eq!(e.code(), code, "{e}");
    let text = e.to_string();
    for part in parts {
        assert!(text.contains(part), "expected {part:?} in: {text}");
    }
}

#[test]
fn eager_mistakes_are_typed_errors_naming_the_optimizer_and_the_variable() {
    op_kernels::link();
    let rt = Runtime::global();
    let var = Variable::new(f32s(&[1.0, 2.0])).unwrap();
    let mut adam = Adam::new();

    assert_error(
        adam.apply_gradients(rt, &[]),
        Code::InvalidArgument,
        &["Adam", "no (gradient, variable) pairs"],
    );
    assert_error(
        adam.apply_gradients(rt, &[(f32s(&[1.0, 1.0]), f32s(&[1.0, 1.0]))]),
        Code::InvalidArgument,
        &[
            "Adam.apply_gradients",
            "expected a variable's handle",
            "float",
        ],
    );
    let pair = (f32s(&[1.0, 1.0]), var.handle().clone());
    assert_error(
        adam.apply_gradients(rt, &[pair.clone(), pair.clone()]),
        Code::InvalidArgument,
        &["has two gradients", var.name()],
    );
    let ints = Variable::new(Tensor::from_vec([2], vec![1i32, 2]).unwrap()).unwrap();
    assert_error(
        adam.apply_gradients(
            rt,
            &[(
                Tensor::from_vec([2], vec![1i32, 1]).unwrap(),
                ints.handle().clone(),
            )],
        ),
        Code::InvalidArgument,
        &["has dtype int32", "float, double, half and bfloat16"],
    );
    // Nothing was made by the refused calls.
    assert!(adam.iterations().is_none());

    // The training op's own checks: a gradient of another shape.
    assert_error(
        adam.apply_gradients(rt, &[(f32s(&[1.0, 1.0, 1.0]), var.handle().clone())]),
        Code::InvalidArgument,
        &["ResourceApplyAdam", "input 9 ('grad') has shape [3]"],
    );
    assert_eq!(var.read().unwrap().as_slice::<f32>().unwrap(), [1.0, 2.0]);
    // The slots have the variable's shape, not the bad gradient's, and the
    // failed step was not counted: the next good step is step 1.
    adam.apply_gradients(rt, std::slice::from_ref(&pair))
        .unwrap();
    assert_eq!(read_i64(adam.iterations().unwrap()), 1);
    let moved = var.read().unwrap();
    assert_close("after a good step", &wide(&moved), &[0.999, 1.999], 1e-6);

    // A variable with no value has no shape for its slots.
    let empty = Variable::uninitialized(DType::F32, ShapeValue::from_sizes(&[2])).unwrap();
    assert_error(
        Adam::new().apply_gradients(rt, &[(f32s(&[1.0, 1.0]), empty.handle().clone())]),
        Code::FailedPrecondition,
        &["Adam.apply_gradients", "uninitialized", empty.name()],
    );
    let named = Variable::named(
        "",
        "optimizers_never_assigned",
        DType::F32,
        ShapeValue::from_sizes(&[2]),
    )
    .unwrap();
    assert_error(
        Adam::new().apply_gradients(rt, &[(f32s(&[1.0, 1.0]), named.handle().clone())]),
        Code::FailedPrecondition,
        &["optimizers_never_assigned", "uninitialized"],
    );

    let mut sgd = Sgd::new();
    sgd.learning_rate = f64::NAN;
    assert_error(
        sgd.apply_gradients(rt, std::slice::from_ref(&pair)),
        Code::InvalidArgument,
        &["SGD", "learning_rate is NaN"],
    );
    let mut momentum = Momentum::new(0.1, -0.5);
    assert_error(
        momentum.apply_gradients(rt, &[pair]),
        Code::InvalidArgument,
        &["momentum is -0.5", "at least 0"],
    );
}

// ---- In a graph ----

/// A graph with variable `w` (float32, `INITIAL`, declared of shape
/// `var_shape`), a placeholder `g` of shape `gradient_shape` for its
/// gradient, and `optimizer`'s step; the session on a runtime of its own
/// with `w` and the optimizer initialized.
struct Trainer {
    session: Session,
    step: op_core::symbolic::NodeId,
    read: Output,
}

fn graph_trainer<O: Optimizer<Output>>(
    optimizer: &mut O,
    var_shape: ShapeValue,
    gradient_shape: &str,
) -> Trainer {
    op_kernels::link();
    let b = GraphBuilder::new();
    let [w] = b
        .execute_array(
            OpCall::with_values("VarHandleOp")
                .attr("shared_name", "w")
                .attr("dtype", DType::F32)
                .attr("shape", var_shape)
                .node_name("w"),
        )
        .unwrap();
    let initial = b.constant(f32s(&INITIAL)).unwrap();
    OpCall::with_values("AssignVariableOp")
        .input(w)
        .input(initial)
        .node_name("w/init")
        .run_on(&b)
        .unwrap();
    let w_init = b.last_node().unwrap();
    let g = b.placeholder("g", DType::F32, gradient_shape).unwrap();
    let step = optimizer.apply_gradients(&b, &[(g, w)]).unwrap();
    let [read] = b
        .execute_array(
            OpCall::with_values("ReadVariableOp")
                .input(w)
                .attr("dtype", DType::F32)
                .node_name("w/read"),
        )
        .unwrap();
    let session = Session::builder(b.into_graph())
        .runtime(Arc::new(Runtime::new()))
        .build()
        .unwrap();
    // The variable first: a slot of a variable of unknown shape is made
    // like its value.
    session.runner().target(w_init).run().unwrap();
    let mut init = session.runner();
    for &node in optimizer.initializers() {
        init = init.target(node);
    }
    init.run().unwrap();
    Trainer {
        session,
        step,
        read,
    }
}

impl Trainer {
    /// Runs one step with the gradient `grad`.
    fn apply(&self, grad: &[f64]) {
        self.session
            .runner()
            .feed("g", f32s(grad))
            .target(self.step)
            .run()
            .unwrap();
    }

    /// Runs the three steps; the variable after each.
    fn run(&self) -> Vec<Vec<f64>> {
        GRADS
            .iter()
            .map(|grad| {
                self.apply(grad);
                let out = self.session.runner().fetch(self.read).run().unwrap();
                wide(&out[0])
            })
            .collect()
    }
}

/// `w`'s shape, declared.
fn known() -> ShapeValue {
    ShapeValue::from_sizes(&[3])
}

fn graph<O: Optimizer<Output>>(mut optimizer: O) -> Vec<Vec<f64>> {
    graph_trainer(&mut optimizer, known(), "[3]").run()
}

#[test]
fn graph_sgd_momentum_and_adam_give_keras_numbers() {
    check_f32("graph SGD()", graph(Sgd::new()), KERAS_SGD);
    check_f32(
        "graph SGD(momentum=0.9)",
        graph(sgd_momentum(false)),
        KERAS_SGD_MOMENTUM,
    );
    check_f32(
        "graph SGD(nesterov)",
        graph(sgd_momentum(true)),
        KERAS_SGD_NESTEROV,
    );
    check_f32(
        "graph Momentum(0.01, 0.9)",
        graph(Momentum::new(0.01, 0.9)),
        KERAS_SGD_MOMENTUM,
    );
    check_f32("graph Adam()", graph(Adam::new()), KERAS_ADAM);
    check_f32(
        "graph Adam(0.01)",
        graph(Adam::with_learning_rate(0.01)),
        KERAS_ADAM_LR_0_01,
    );
}

#[test]
fn eager_and_graph_steps_are_the_same_numbers() {
    let eager = eager(Adam::with_learning_rate(0.01), DType::F32);
    let graph = graph(Adam::with_learning_rate(0.01));
    assert_eq!(eager, graph);
}

#[test]
fn slots_of_a_variable_of_undeclared_shape_are_made_like_its_value() {
    let mut adam = Adam::new();
    let trainer = graph_trainer(&mut adam, ShapeValue::unknown_rank(), "?");
    check_f32(
        "graph Adam(), gradient of unknown shape",
        trainer.run(),
        KERAS_ADAM,
    );
}

fn node_names(graph: &Graph) -> Vec<String> {
    graph.nodes().iter().map(|n| n.name().to_owned()).collect()
}

#[test]
fn graph_variables_are_named_and_initialized_by_nodes() {
    op_kernels::link();
    let mut adam = Adam::new();
    let trainer = graph_trainer(&mut adam, known(), "[3]");
    let graph = trainer.session.graph();
    let names = node_names(graph);
    for name in ["Adam/iterations", "Adam/w/m", "Adam/w/v"] {
        let node = graph
            .node_by_name(name)
            .unwrap_or_else(|| panic!("no node {name} in {names:?}"));
        assert_eq!(node.op(), "VarHandleOp");
        // Its shared name is its node name: a saved model finds it by it.
        assert_eq!(
            node.attr("shared_name"),
            Some(&op_core::AttrValue::from(name)),
            "{name}"
        );
    }
    assert_eq!(graph.node(trainer.step).unwrap().name(), "Adam/step");
    assert_eq!(graph.node(trainer.step).unwrap().op(), "NoOp");
    assert_eq!(adam.variables().len(), 3);
    assert_eq!(adam.initializers().len(), 3);
    for &init in adam.initializers() {
        assert_eq!(graph.node(init).unwrap().op(), "AssignVariableOp");
    }
    // Three steps count three.
    let iterations = graph.tensor_name(*adam.iterations().unwrap()).to_string();
    assert_eq!(iterations, "Adam/iterations");
    trainer.run();
    let runtime = trainer.session.runtime();
    let handle = op_core::ResourceHandle::named::<op_kernels::variable::Var>(
        runtime.device(),
        runtime.resource_manager().default_container(),
        "Adam/iterations",
    );
    let value = read_as(runtime, &Tensor::scalar(handle), DType::I64);
    assert_eq!(value.scalar_value::<i64>().unwrap(), 3);
}

#[test]
fn a_saved_model_resumes_training_where_it_stopped() {
    let mut adam = Adam::with_learning_rate(0.01);
    let trainer = graph_trainer(&mut adam, known(), "[3]");
    // Two steps, saved with the slots and the step count, loaded, one more.
    for grad in &GRADS[..2] {
        trainer.apply(grad);
    }
    let dir = std::env::temp_dir().join(format!("opkit-optimizers-{}", std::process::id()));
    saved_model::save(&dir, &trainer.session, []).unwrap();
    let loaded = saved_model::load_on(&dir, Arc::new(Runtime::new())).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    loaded
        .session
        .runner()
        .feed("g", f32s(&GRADS[2]))
        .target("Adam/step")
        .run()
        .unwrap();
    let out = loaded.session.runner().fetch("w/read").run().unwrap();
    assert_close(
        "after loading",
        &wide(&out[0]),
        &steps32(KERAS_ADAM_LR_0_01)[2],
        TOLERANCE_F32,
    );
}

#[test]
fn graph_mistakes_are_errors_when_the_step_is_built() {
    op_kernels::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[3]").unwrap();
    let n = b.placeholder("n", DType::I32, "[3]").unwrap();
    let [w] = b
        .execute_array(
            OpCall::with_values("VarHandleOp")
                .attr("shared_name", "iw")
                .attr("dtype", DType::I32)
                .attr("shape", ShapeValue::from_sizes(&[3])),
        )
        .unwrap();
    let mut adam = Adam::new();
    assert_error(
        adam.apply_gradients(&b, &[(x, x)]).map(drop),
        Code::InvalidArgument,
        &[
            "Adam.apply_gradients",
            "expected a variable's handle",
            "'x'",
        ],
    );
    assert_error(
        adam.apply_gradients(&b, &[(n, w)]).map(drop),
        Code::InvalidArgument,
        &["has dtype int32"],
    );
    assert!(adam.variables().is_empty());
}

#[test]
fn an_optimizer_runs_on_a_runtime_of_its_own() {
    op_kernels::link();
    let rt = Arc::new(Runtime::new());
    let var = Variable::new_on(&rt, f32s(&[1.0])).unwrap();
    let mut sgd = Sgd::new();
    sgd.apply_gradients(&*rt, &[(f32s(&[1.0]), var.handle().clone())])
        .unwrap();
    assert_eq!(var.read().unwrap().as_slice::<f32>().unwrap(), [0.99]);
}
