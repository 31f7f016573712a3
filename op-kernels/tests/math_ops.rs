//! The math family's declarations: the kernels cover the types TensorFlow
//! registers CPU kernels for, and the shape functions infer what
//! TensorFlow's do, one line per case (the cases were checked against
//! TensorFlow 2.21's graph-mode inference). That the OpDefs are
//! TensorFlow's own is `tensorflow_opdefs.rs`'s check, for every op.

use op_core::shape_inference::testing::ShapeTest;
use op_core::{DType, Registry};

/// The unary ops, whose output has their input's shape.
const UNARY: &[&str] = &[
    "Neg", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Sin", "Cos", "Tanh", "Sigmoid", "Relu",
];

/// The dtypes op `name`'s CPU kernels are registered for, sorted (the GPU
/// kernels' are `gpu_elementwise.rs`'s check).
fn kernel_types(name: &str) -> Vec<DType> {
    let entry = Registry::global().op(name).unwrap();
    let mut types: Vec<DType> = entry
        .kernels()
        .iter()
        .filter(|k| k.device == op_core::DeviceType::Cpu)
        .flat_map(|k| k.constraints.iter().map(|c| c.dtype))
        .collect();
    types.sort_by_key(|d| d.enum_value());
    types
}

fn sorted(mut types: Vec<DType>) -> Vec<DType> {
    types.sort_by_key(|d| d.enum_value());
    types
}

#[test]
fn kernels_cover_the_types_tensorflow_registers_on_cpu() {
    op_kernels::link();
    use DType::*;
    let floats = vec![F32, F64, F16, BF16];
    let complex = vec![Complex64, Complex128];
    let signed = vec![I8, I16, I32, I64];
    let unsigned = vec![U8, U16, U32, U64];
    let cat =
        |parts: &[&Vec<DType>]| sorted(parts.iter().flat_map(|p| p.iter().copied()).collect());
    // TensorFlow 2.21's CPU kernels (tensorflow.python.framework.kernels).
    let numbers = cat(&[&floats, &complex, &signed, &unsigned]);
    let reals = cat(&[&floats, &signed, &unsigned]);
    let float_like = cat(&[&floats, &complex]);
    for op in ["AddV2", "Sub", "Mul", "Square", "AddN"] {
        assert_eq!(kernel_types(op), numbers, "{op}");
    }
    for op in ["Maximum", "Minimum", "Relu", "Greater", "Less"] {
        assert_eq!(kernel_types(op), reals, "{op}");
    }
    for op in ["ReluGrad", "GreaterEqual", "LessEqual"] {
        assert_eq!(kernel_types(op), reals, "{op}");
    }
    for op in [
        "Sqrt", "Rsqrt", "Exp", "Log", "Sin", "Cos", "Tanh", "Sigmoid", "RealDiv",
    ] {
        assert_eq!(kernel_types(op), float_like, "{op}");
    }
    // The ops the gradients are built from (`math_gradient_ops.rs`).
    for op in [
        "Reciprocal",
        "SqrtGrad",
        "RsqrtGrad",
        "TanhGrad",
        "SigmoidGrad",
        "ReciprocalGrad",
    ] {
        assert_eq!(kernel_types(op), float_like, "{op}");
    }
    // TensorFlow's third type, `variant`, has no tensors here.
    assert_eq!(kernel_types("Conj"), complex);
    assert_eq!(kernel_types("Neg"), cat(&[&floats, &complex, &signed]));
    assert_eq!(kernel_types("Pow"), cat(&[&floats, &complex, &signed]));
    assert_eq!(
        kernel_types("SquaredDifference"),
        cat(&[&floats, &complex, &vec![I32, I64]])
    );
    let quantized = vec![QInt8, QUInt8, QInt16, QUInt16, QInt32];
    assert_eq!(
        kernel_types("Equal"),
        cat(&[&numbers, &quantized, &vec![Bool, String]])
    );
    for op in ["Select", "SelectV2"] {
        assert_eq!(
            kernel_types(op),
            cat(&[&numbers, &vec![Bool, String, Resource]]),
            "{op}"
        );
    }
    // One CPU Cast kernel for every pair, as TensorFlow's.
    let cast = Registry::global().op("Cast").unwrap();
    let cpu: Vec<_> = cast
        .kernels()
        .iter()
        .filter(|k| k.device == op_core::DeviceType::Cpu)
        .collect();
    assert_eq!(cpu.len(), 1);
    assert!(cpu[0].constraints.is_empty());
}

#[test]
fn unary_ops_keep_their_input_shape() {
    op_kernels::link();
    for op in UNARY {
        let t = ShapeTest::new(op);
        t.ok("[2,?]", "in0");
        t.ok("?", "in0");
    }
    ShapeTest::new("Cast")
        .attr("DstT", DType::I32)
        .ok("[?,3]", "in0");
}

#[test]
fn binary_ops_broadcast_partial_shapes_as_tensorflow_does() {
    op_kernels::link();
    for op in [
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "Maximum",
        "Minimum",
        "Pow",
        "SquaredDifference",
        "Greater",
        "Less",
        "Equal",
    ] {
        let t = ShapeTest::new(op);
        t.ok("[2,3];[2,3]", "[d0_0,d0_1]");
        t.ok("[?,3];[3]", "[d0_0,d0_1]");
        t.ok("[2,1,3];[4,1]", "[d0_0,d1_0,d0_2]");
        t.ok("[?];[2]", "[d1_0]");
        t.ok("[2];[?]", "[d0_0]");
        t.ok("[?];[?]", "[?]");
        t.ok("[1];[?]", "[d1_0]");
        t.ok("[?,1];[1,?]", "[d0_0,d1_1]");
        t.ok("[];[?,?]", "[d1_0,d1_1]");
        t.ok("?;[3]", "?");
        // A known 0 against an unknown size: unknown (it may be an error).
        t.ok("[0];[?]", "[?]");
        t.ok("[?];[0]", "[?]");
        t.error(
            "[2];[3]",
            "incompatible shapes for broadcasting: input 0 ('x') has shape [2] and input 1 ('y') has shape [3]",
        );
    }
}

#[test]
fn equal_without_incompatible_shape_error_gives_a_scalar_or_unknown_shape() {
    op_kernels::link();
    let t = ShapeTest::new("Equal").attr("incompatible_shape_error", false);
    t.ok("[2];[3]", "[]");
    t.ok("[2,3];[4,3]", "[]");
    t.ok("[?];[2]", "?");
    t.ok("[2];[?]", "?");
    t.ok("[0];[?]", "?");
    t.ok("[?];[?]", "[?]");
    t.ok("[1];[?]", "[d1_0]");
    t.ok("[?,3];[3]", "[d0_0,d0_1]");
    t.ok("?;[3]", "?");
}

#[test]
fn select_takes_a_scalar_an_equal_or_a_row_condition() {
    op_kernels::link();
    let t = ShapeTest::new("Select");
    t.ok("[];[2,3];[2,3]", "in1");
    t.ok("[2];[2,3];[2,3]", "in1");
    t.ok("[2,3];[2,3];[2,3]", "in1");
    t.ok("[2,3];[2,?];[?,3]", "[d1_0,d2_1]");
    t.ok("[2];[2];[2]", "in1");
    t.ok("?;[2,3];[2,3]", "in1");
    // Unknown values: the output is theirs (unknown too).
    t.ok("[2,?];?;?", "in1");
    t.ok("[2];[?,3];?", "in1");
    t.error(
        "[3];[2,3];[2,3]",
        "dimension 0 in both shapes must be equal, but input 0 ('condition') has shape [3] and shape [2]",
    );
    t.error("[3];[2];[2]", "dimension 0 in both shapes must be equal");
    t.error(
        "[2];[];[]",
        "shapes must be equal rank, but input 1 ('t') has shape [] and input 0 ('condition') has shape [2]",
    );
    t.error(
        "[2,3];[3,2];[3,2]",
        "dimension 0 in both shapes must be equal",
    );
    t.error(
        "[1,3];[2,3];[2,3]",
        "dimension 0 in both shapes must be equal",
    );
    t.error(
        "[?];[2,3];[3,3]",
        "input 1 ('t') has shape [2,3] and input 2 ('e') has shape [3,3]",
    );
    t.error("[2,3,4];[2,3];[2,3]", "shapes must be equal rank");
}

#[test]
fn select_v2_broadcasts_all_three() {
    op_kernels::link();
    let t = ShapeTest::new("SelectV2");
    t.ok("[2,1];[3];[]", "[d0_0,d1_0]");
    t.ok("[];[2,3];[2,3]", "[d1_0,d1_1]");
    t.ok("[?];[2];[1]", "[d1_0]");
    t.ok("[4,1,1];[3,1];[2]", "[d0_0,d1_0,d2_0]");
    t.ok("?;[2];[2]", "?");
    t.ok("[2];?;[2]", "?");
    t.error(
        "[2];[3];[2]",
        "input 1 ('t') has shape [3] and input 2 ('e') has shape [2]",
    );
    t.error("[3];[2];[2]", "incompatible shapes for broadcasting");
}

#[test]
fn add_n_merges_every_input_from_the_last() {
    op_kernels::link();
    let t = ShapeTest::new("AddN");
    t.ok("[2,3]", "in0");
    t.ok("[2,?];[?,3]", "[d0_0,d1_1]");
    t.ok("[2,3];?;[?,3]", "in0");
    t.ok("?;?", "in0");
    t.ok("[2,3];[2,3];[2,3]", "in0");
    t.error(
        "[2];[3]",
        "dimension 0 in both shapes must be equal, but input 0 ('inputs'[0]) has shape [2] and input 1 ('inputs'[1]) has shape [3]",
    );
    t.error("[2];[2,1]", "shapes must be equal rank");
    let err = t.run("[1,2];[?,?];[3,2]").unwrap_err();
    assert!(err.message().contains("shape [1,2]"), "{err}");
    assert_eq!(err.context(), ["From merging shape 0 with other shapes."]);
}
