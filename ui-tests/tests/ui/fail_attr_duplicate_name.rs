use op_core::{DType, register_op};

/// The field declares `T` a second time.
#[register_op(attrs("T: {float, int32}"), inputs("x: T"), outputs("y: T"))]
pub struct Cast {
    #[attr(name = "T")]
    pub dtype: DType,
}

fn main() {}
