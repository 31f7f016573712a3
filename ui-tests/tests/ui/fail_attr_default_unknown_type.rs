use op_core::{DType, register_op};

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Cast {
    #[attr(default = flaot)]
    pub to: DType,
}

fn main() {}
