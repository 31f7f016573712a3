fn main() {
    let _ = op_macros::op_def! {
        name: "ZeroOut",
        input: ["to_zero: int32"],
    };
}
