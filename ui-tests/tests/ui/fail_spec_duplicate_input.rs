use op_core::register_op;

#[register_op(inputs("x: float", "x: float"), outputs("sum: float"))]
pub struct Add;

fn main() {}
