fn main() {
    let _ = op_macros::op_def! {
        name: "zero_out",
        attrs: ["T: {float, int32} = DT_INT64"],
        inputs: ["ToZero: T"],
        outputs: ["zeroed: U"],
    };
}
