fn main() {
    let zero_out = op_macros::op_def! {
        name: "ZeroOut",
        attrs: ["T: {float, int32} = DT_INT32"],
        inputs: ["to_zero: T"],
        outputs: ["zeroed: T"],
    };
    assert!(zero_out.build().is_ok());
    let table = op_macros::op_def! {
        name: "Examples>SimpleHashTableCreate",
        attrs: ["key_dtype: type", "value_dtype: type"],
        outputs: ["output: resource"],
        stateful: true,
    };
    assert!(table.build().unwrap().is_stateful);
}
