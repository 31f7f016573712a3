use op_core::register_op;

mod facade {}

#[register_op(crate = "crate::facade", inputs("x: float"), outputs("y: float"))]
pub struct Double;

fn main() {}
