use op_core::register_op;

#[allow(non_camel_case_types)]
#[register_op(inputs("to_zero: int32"), outputs("zeroed: int32"))]
pub struct zero_out;

fn main() {}
