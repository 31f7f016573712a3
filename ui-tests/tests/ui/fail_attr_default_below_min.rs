use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Shift {
    #[attr(default = -1, min = 0)]
    pub amount: i64,
}

fn main() {}
