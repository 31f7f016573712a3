//! Full types on outputs, in each form that declares an op, checked at
//! compile time and carried into the OpDef as TensorFlow prints them.

use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::{Element, Registry, op, register_op};
use op_macros::op_def;

/// A shape tensor, as TensorFlow's Shape.
#[register_op(
    attrs("T: type", "out_type: {int32, int64} = DT_INT32"),
    inputs("input: T"),
    outputs("output: out_type"),
    full_types("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]")
)]
pub struct MyShape;

/// A list of tensors, and a type repeated for each of a list attr's types.
#[register_op(
    attrs("element_dtype: type", "Tout: list(type)"),
    inputs("n: int32"),
    outputs("handle: variant", "values: variant"),
    full_types(
        "handle: TFT_ARRAY[TFT_TENSOR[TFT_VAR{'element_dtype'}]]",
        "values: TFT_DATASET[TFT_FOR_EACH[TFT_PRODUCT, TFT_TENSOR[TFT_VAR{'Tout'}], TFT_VAR{'Tout'}]]",
    )
)]
pub struct MyList;

/// An op from a function: the output's element type is the function's `T`.
#[op(types(f32, i32), full_types("output: TFT_TENSOR[TFT_VAR{'T'}]"))]
pub fn copied<T: Element + Clone>(x: ArrayViewD<'_, T>) -> ArrayD<T> {
    x.to_owned()
}

fn main() {
    let def = Registry::global().op("MyShape").unwrap().def().as_ref().clone();
    let text = op_core::op_spec::pbtxt::op_def_to_string(&def);
    assert!(
        text.contains(
            "  experimental_full_type {\n    type_id: TFT_SHAPE_TENSOR\n    args {\n      type_id: TFT_VAR\n      s: \"out_type\"\n    }\n  }\n"
        ),
        "{text}"
    );
    let list = Registry::global().op("MyList").unwrap().def().as_ref().clone();
    assert_eq!(
        list.outputs[1].full_type.as_ref().unwrap().to_string(),
        "TFT_DATASET[TFT_FOR_EACH[TFT_PRODUCT, TFT_TENSOR[TFT_VAR{'Tout'}], TFT_VAR{'Tout'}]]"
    );
    let built = op_def! {
        name: "Built",
        attrs: ["T: type"],
        outputs: ["y: T"],
        full_types: ["y: TFT_TENSOR[TFT_VAR{'T'}]"],
    }
    .build()
    .unwrap();
    assert!(built.outputs[0].full_type.is_some());
    let copied = Registry::global().op("Copied").unwrap().def().as_ref().clone();
    assert_eq!(
        copied.outputs[0].full_type.as_ref().unwrap().to_string(),
        "TFT_TENSOR[TFT_VAR{'T'}]"
    );
}
