//! `#[register_op]` in every form: spec strings, typed fields with
//! `#[attr(..)]` options, doc comments, flags and `wrapper`.

use op_core::{DType, Op, ShapeValue, register_op};

/// Zeroes every element of a vector but one.
///
/// to_zero: the vector.
/// zeroed: `to_zero` with every element but one set to zero.
#[register_op(
    attrs("T: {float, double, int32} = DT_INT32"),
    inputs("to_zero: T"),
    outputs("zeroed: T"),
)]
pub struct ZeroOut {
    /// The index of the element to keep.
    #[attr(default = 0, min = 0)]
    pub preserve_index: i64,
}

/// Every kind of typed field.
#[register_op(name = "Ui>AllFields", inputs("x: float"), outputs("y: float"))]
pub struct AllFields {
    /// A required int.
    pub count: i64,
    #[attr(default = -3)]
    pub offset: i32,
    /// `usize` means `int >= 0`.
    pub index: usize,
    #[attr(default = 1.5)]
    pub scale: f32,
    #[attr(default = true)]
    pub enabled: bool,
    #[attr(default = "same", one_of("same", "valid"))]
    pub padding: String,
    #[attr(name = "T", default = f32, one_of(f32, int64))]
    pub dtype: DType,
    pub shape: ShapeValue,
    #[attr(default = [1, 2, 3], min = 1)]
    pub strides: Vec<i64>,
    #[attr(default = [0.5])]
    pub weights: Vec<f32>,
    #[attr(default = [])]
    pub flags: Vec<bool>,
    #[attr(default = ["a", "b"])]
    pub names: Vec<String>,
    #[attr(default = [f32, int32])]
    pub types: Vec<DType>,
    #[attr(default = "bytes")]
    pub raw: Vec<u8>,
    pub shapes: Vec<ShapeValue>,
    #[attr(default = 7)]
    pub r#in: i64,
    /// A type group in `one_of`.
    #[attr(one_of(realnumbertype), default = float)]
    pub real: DType,
    #[attr(one_of("x", "y"), default = ["x"])]
    pub axes: Vec<String>,
}

/// A stateful op with every flag.
#[register_op(
    inputs("a: float", "b: float"),
    outputs("sum: float"),
    stateful,
    commutative,
    aggregate,
    allows_uninitialized_input,
    distributed_communication,
    deprecated(version = 4, explanation = "use AddV2"),
)]
pub struct FlaggedAdd;

/// A wrapper function is generated on request.
#[register_op(
    attrs("T: realnumbertype", "N: int >= 1"),
    inputs("xs: N * T"),
    outputs("total: T"),
    wrapper = add_n_ui,
)]
pub struct AddNUi {
    #[attr(default = false)]
    pub exact: bool,
}

/// An op with a single spec string given as `key = "..."`.
#[register_op(outputs = "out: int64")]
pub struct SingleOutput;

fn main() {
    assert_eq!(ZeroOut::NAME, "ZeroOut");
    assert_eq!(AllFields::NAME, "Ui>AllFields");
    let def = AllFields::op_def().unwrap();
    assert!(def.attr("T").is_some());
    assert!(def.attr("in").is_some());
    let flagged = FlaggedAdd::op_def().unwrap();
    assert!(flagged.is_stateful && flagged.is_commutative && flagged.is_aggregate);
    assert!(AddNUi::op_def().is_ok());
    assert!(SingleOutput::op_def().is_ok());
    // The wrapper exists and builds a call (running it needs a kernel).
    let _call = add_n_ui(vec![op_core::Tensor::scalar(1.0f32)]).exact(true);
    let _ = ZeroOut::call(op_core::Tensor::scalar(1i32)).preserve_index(0);
}
