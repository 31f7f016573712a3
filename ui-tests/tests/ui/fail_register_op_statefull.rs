use op_core::register_op;

#[register_op(outputs("handle: resource"), statefull)]
pub struct MakeTable;

fn main() {}
