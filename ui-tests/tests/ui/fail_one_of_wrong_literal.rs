use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Pool {
    #[attr(one_of(SAME, VALID))]
    pub padding: String,
}

fn main() {}
