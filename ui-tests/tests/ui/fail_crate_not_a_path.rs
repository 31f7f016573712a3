use op_core::register_op;

#[register_op(crate = "my facade", inputs("x: float"), outputs("y: float"))]
pub struct Double;

fn main() {}
