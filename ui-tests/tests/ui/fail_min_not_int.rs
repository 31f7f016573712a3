use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Shift {
    #[attr(min = "x")]
    pub amount: i64,
}

fn main() {}
