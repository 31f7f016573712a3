use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Round {
    #[attr(one_of(0, 1, 2))]
    pub mode: i64,
}

fn main() {}
