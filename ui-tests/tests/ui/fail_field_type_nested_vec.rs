use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Pad {
    pub paddings: Vec<Vec<i64>>,
}

fn main() {}
