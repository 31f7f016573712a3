//! Framework ops (op-kernels' `Cumprod`, `AddV2`, ...) run in the lite
//! interpreter as custom ops through `FrameworkOps`: their attrs from the
//! custom options, prepare from the shape function, invoke from the
//! kernel with its outputs in the arena; compared with the framework's own
//! runtime and with TensorFlow on the model its converter wrote.

mod common;

use common::{ModelBuilder, read_npy_f32};
use op_core::{AttrValue, Code, DType, Runtime, Tensor};
use op_lite::attrs::encode_attrs;
// At the crate root, where users look first (also `op_lite::bridge::FrameworkOps`).
use op_lite::FrameworkOps;
use op_lite::model::Model;
use op_lite::{Interpreter, MutableOpResolver, OpResolver};
use proptest::prelude::*;

fn framework() -> FrameworkOps {
    op_kernels::link();
    FrameworkOps::new()
}

fn options(attrs: &[(&str, AttrValue)]) -> Vec<u8> {
    let attrs: Vec<(String, AttrValue)> = attrs
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    encode_attrs(&attrs).unwrap()
}

/// `y = Cumprod(x, axis)` on a float `x` of `dims`, `axis` a constant.
fn cumprod_model(dims: &[usize], axis: i32, attrs: &[(&str, AttrValue)]) -> Model {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", dims);
    let axis = b.with_data("axis", DType::I32, &[], &axis.to_le_bytes());
    let y = b.f32("y", &[1]);
    b.custom_with("Cumprod", &[x, axis], &[y], options(attrs));
    b.input(x).output(y);
    b.build()
}

fn run(model: &Model, resolver: &dyn OpResolver, x: &[f32]) -> op_core::Result<Vec<f32>> {
    let mut interpreter = Interpreter::new(model, resolver)?;
    interpreter.allocate_tensors()?;
    interpreter.set_input(0, x)?;
    interpreter.invoke()?;
    Ok(interpreter.output::<f32>(0)?.to_vec())
}

#[test]
fn cumprod_runs_with_its_attrs_from_the_custom_options() {
    let resolver = framework();
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let model = cumprod_model(&[2, 3], 1, &[]);
    assert_eq!(
        run(&model, &resolver, &x).unwrap(),
        [1.0, 2.0, 6.0, 4.0, 20.0, 120.0]
    );
    let model = cumprod_model(
        &[2, 3],
        1,
        &[
            ("exclusive", AttrValue::Bool(true)),
            ("reverse", AttrValue::Bool(true)),
        ],
    );
    assert_eq!(
        run(&model, &resolver, &x).unwrap(),
        [6.0, 3.0, 1.0, 30.0, 6.0, 1.0]
    );
    let model = cumprod_model(&[2, 3], 0, &[("reverse", AttrValue::Bool(true))]);
    assert_eq!(
        run(&model, &resolver, &x).unwrap(),
        [4.0, 10.0, 18.0, 4.0, 5.0, 6.0]
    );
}

#[test]
fn the_output_shape_comes_from_the_shape_function_and_the_dtype_from_inference() {
    let mut interpreter = Interpreter::new(&cumprod_model(&[3, 2], -1, &[]), &framework()).unwrap();
    interpreter.allocate_tensors().unwrap();
    assert_eq!(interpreter.output_dtype(0).unwrap(), DType::F32);
    assert_eq!(interpreter.output_shape(0).unwrap(), [3, 2]);
}

#[test]
fn a_two_input_elementwise_op_runs_with_broadcasting() {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2, 3]);
    let c = b.constant("c", &[3], &[10.0, 20.0, 30.0]);
    let y = b.f32("y", &[2, 3]);
    b.custom("AddV2", &[x, c], &[y]);
    b.input(x).output(y);
    let y = run(&b.build(), &framework(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert_eq!(y, [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
}

#[test]
fn the_converter_s_cumprod_model_gives_tensorflow_s_numbers() {
    let path = format!(
        "{}/tests/data/cumprod_custom.tflite",
        env!("CARGO_MANIFEST_DIR")
    );
    let model = Model::from_bytes(&std::fs::read(path).unwrap()).unwrap();
    let (shape, x) = read_npy_f32("cumprod_custom.input");
    assert_eq!(shape, [2, 4]);
    let (_, expected) = read_npy_f32("cumprod_custom.output");
    // Without the bridge, the model's custom op is missing, in TensorFlow
    // Lite's words.
    let err = Interpreter::new(&model, &MutableOpResolver::new()).unwrap_err();
    assert!(
        err.message()
            .starts_with("Didn't find custom operator for name 'Cumprod'"),
        "{err}"
    );
    let y = run(&model, &framework().over(MutableOpResolver::new()), &x).unwrap();
    for (y, e) in y.iter().zip(&expected) {
        assert!(
            (y - e).abs() <= 1e-6 * e.abs().max(1.0),
            "{y} != {e}: {expected:?}"
        );
    }
}

#[test]
fn a_resolver_s_own_registration_wins_over_the_framework_op() {
    fn prepare(ctx: &mut op_lite::PrepareContext<'_>) -> op_core::Result<()> {
        let shape = ctx.input_shape(0)?;
        ctx.set_output_shape(0, shape)
    }
    fn invoke(ctx: &mut op_lite::InvokeContext<'_>) -> op_core::Result<()> {
        ctx.output_mut::<f32>(0)?.fill(7.0);
        Ok(())
    }
    let mut base = MutableOpResolver::new();
    base.add_custom("Cumprod", op_lite::FnOp::new(prepare, invoke));
    let resolver = framework().over(base);
    let y = run(&cumprod_model(&[2], 0, &[]), &resolver, &[2.0, 3.0]).unwrap();
    assert_eq!(y, [7.0, 7.0]);
    let names: Vec<String> = resolver.custom_ops().into_iter().map(|(n, _)| n).collect();
    assert!(names.contains(&"Cumprod".to_string()) && names.contains(&"AddV2".to_string()));
}

#[test]
fn wrong_attrs_are_typed_errors_naming_the_node_and_the_attr() {
    let resolver = framework();
    let err = Interpreter::new(
        &cumprod_model(&[2], 0, &[("exclusive", AttrValue::Int(1))]),
        &resolver,
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message()
            .contains("op Cumprod: custom option 'exclusive' is an int (1), expected a value of attr type bool"),
        "{err}"
    );
    assert!(err.to_string().contains("Node number 0 (Cumprod)"), "{err}");
    let err = Interpreter::new(
        &cumprod_model(&[2], 0, &[("reversed", AttrValue::Bool(true))]),
        &resolver,
    )
    .unwrap_err();
    assert!(err.message().contains("did you mean 'reverse'?"), "{err}");
    // A type the inputs contradict fails at prepare, from dtype inference.
    let model = cumprod_model(&[2], 0, &[("T", AttrValue::Type(DType::I32))]);
    let mut interpreter = Interpreter::new(&model, &resolver).unwrap();
    let err = interpreter.allocate_tensors().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("op Cumprod"), "{err}");
}

#[test]
fn an_unknown_op_is_missing_and_a_stateful_op_is_refused() {
    let resolver = framework();
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2]);
    let y = b.f32("y", &[2]);
    b.custom("Cumprd", &[x], &[y]);
    b.input(x).output(y);
    let err = Interpreter::new(&b.build(), &resolver).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("did you mean 'Cumprod'?"), "{err}");

    let stateful = op_core::Registry::global()
        .ops()
        .find(|op| op.def().is_stateful && op.shape_fn().is_some())
        .expect("a stateful op with a shape function")
        .def()
        .name
        .clone();
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2]);
    let y = b.f32("y", &[2]);
    b.custom(&stateful, &[x], &[y]);
    b.input(x).output(y);
    let err = Interpreter::new(&b.build(), &resolver).unwrap_err();
    assert!(
        err.message()
            .contains(&format!("op {stateful} is stateful")),
        "{err}"
    );
}

#[test]
fn an_output_shape_the_shape_function_cannot_know_is_an_error_at_prepare() {
    // Reshape to a shape that is an input, not a constant: unknown at prepare.
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2, 3]);
    let shape = b.tensor("shape", DType::I32, &[2]);
    let y = b.f32("y", &[3, 2]);
    b.custom("Reshape", &[x, shape], &[y]);
    b.input(x).input(shape).output(y);
    let mut interpreter = Interpreter::new(&b.build(), &framework()).unwrap();
    let err = interpreter.allocate_tensors().unwrap_err();
    assert!(err.message().contains("which is not fully known"), "{err}");

    // With the shape a constant, it runs.
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2, 3]);
    let shape = b.with_data("shape", DType::I32, &[2], bytemuck::cast_slice(&[3i32, 2]));
    let y = b.f32("y", &[1]);
    b.custom("Reshape", &[x, shape], &[y]);
    b.input(x).output(y);
    let mut interpreter = Interpreter::new(&b.build(), &framework()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter
        .set_input(0, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(interpreter.output_shape(0).unwrap(), [3, 2]);
    assert_eq!(
        interpreter.output::<f32>(0).unwrap(),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
}

proptest! {
    /// Cumprod in the lite interpreter is the framework's own Cumprod, for
    /// any shape, axis and flags.
    #[test]
    fn cumprod_matches_the_framework_runtime(
        (dims, x) in proptest::collection::vec(1usize..4, 1..4).prop_flat_map(|dims| {
            let n = dims.iter().product::<usize>();
            (Just(dims), proptest::collection::vec(-2.0f32..2.0, n))
        }),
        axis_seed in 0usize..8,
        exclusive in any::<bool>(),
        reverse in any::<bool>(),
    ) {
        let axis = (axis_seed % dims.len()) as i32 - if axis_seed >= 4 { dims.len() as i32 } else { 0 };
        let attrs = [("exclusive", AttrValue::Bool(exclusive)), ("reverse", AttrValue::Bool(reverse))];
        let lite = run(&cumprod_model(&dims, axis, &attrs), &framework(), &x).unwrap();
        let expected = Runtime::global()
            .run(
                "Cumprod",
                vec![Tensor::from_vec(&dims, x.clone()).unwrap(), Tensor::scalar(axis)],
                &[("exclusive", AttrValue::Bool(exclusive)), ("reverse", AttrValue::Bool(reverse))],
            )
            .unwrap();
        prop_assert_eq!(lite, expected[0].as_slice::<f32>().unwrap());
    }
}

#[test]
fn a_list_input_takes_the_inputs_the_single_ones_leave() {
    // ConcatV2(values: N * T, axis: Tidx): three values, then the axis.
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[2, 1]);
    let c = b.constant("c", &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let axis = b.with_data("axis", DType::I32, &[], &1i32.to_le_bytes());
    let y = b.f32("y", &[1]);
    b.custom("ConcatV2", &[x, c, x, axis], &[y]);
    b.input(x).output(y);
    let mut interpreter = Interpreter::new(&b.build(), &framework()).unwrap();
    interpreter.allocate_tensors().unwrap();
    assert_eq!(interpreter.output_shape(0).unwrap(), [2, 4]);
    interpreter.set_input(0, &[9.0f32, 8.0]).unwrap();
    interpreter.invoke().unwrap();
    assert_eq!(
        interpreter.output::<f32>(0).unwrap(),
        [9.0, 1.0, 2.0, 9.0, 8.0, 3.0, 4.0, 8.0]
    );
}

#[test]
fn framework_ops_run_beside_the_builtins() {
    // y = Cumprod(x * 2, axis 0): the builtin MUL, then the framework op.
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[3]);
    let two = b.constant("two", &[1], &[2.0]);
    let doubled = b.f32("doubled", &[3]);
    let axis = b.with_data("axis", DType::I32, &[], &0i32.to_le_bytes());
    let y = b.f32("y", &[3]);
    b.builtin(
        op_lite::model::BuiltinOperator::MUL,
        1,
        &[x, two],
        &[doubled],
    );
    b.custom("Cumprod", &[doubled, axis], &[y]);
    b.input(x).output(y);
    let resolver = framework().over(op_lite::builtins::BuiltinOpResolver::new());
    let y = run(&b.build(), &resolver, &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(y, [2.0, 8.0, 48.0]);
}
