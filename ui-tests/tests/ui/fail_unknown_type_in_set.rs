fn main() {
    let _ = op_macros::op_def! {
        name: "ZeroOut",
        attrs: ["T: {float, in32}"],
        inputs: ["to_zero: T"],
        outputs: ["zeroed: T"],
    };
}
