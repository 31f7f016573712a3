use op_core::register_op;

#[register_op(attrs("T type"), inputs("x: T"), outputs("y: T"))]
pub struct Identity;

fn main() {}
