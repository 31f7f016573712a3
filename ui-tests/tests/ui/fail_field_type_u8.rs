use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Quantize {
    pub bits: u8,
}

fn main() {}
