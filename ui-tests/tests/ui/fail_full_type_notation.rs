//! The full-type notation is TensorFlow's: an attr in braces, quoted. The
//! bracket form of TensorFlow's comments (`TFT_VAR["T"]`) and an unquoted
//! name say how to write it.

use op_macros::op_def;

fn main() {
    let _ = op_def! {
        name: "Copy",
        attrs: ["T: type"],
        inputs: ["x: T"],
        outputs: ["y: T", "z: T"],
        full_types: ["y: TFT_TENSOR[TFT_VAR[\"T\"]]", "z: TFT_TENSOR[TFT_VAR{T}]"],
    };
}
