use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Shift {
    #[attr(default = "zero")]
    pub amount: i64,
}

fn main() {}
