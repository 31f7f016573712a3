use op_core::{DType, register_op};

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Cast {
    #[attr(one_of(f32, flaot64))]
    pub to: DType,
}

fn main() {}
