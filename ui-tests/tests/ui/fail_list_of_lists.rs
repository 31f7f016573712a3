fn main() {
    let _ = op_macros::op_def! {
        name: "Nested",
        attrs: ["l: list(list(int))"],
    };
}
