use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"))]
pub struct Scale<T> {
    pub factor: T,
}

fn main() {}
