fn main() {
    let _ = op_macros::op_def! {
        inputs: ["x: float"],
    };
}
