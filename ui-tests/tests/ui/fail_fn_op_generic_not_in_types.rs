use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::{Element, op};

#[op]
pub fn times_two<T: Element + Copy + std::ops::Add<Output = T>>(x: ArrayViewD<'_, T>) -> ArrayD<T> {
    x.mapv(|v| v + v)
}

fn main() {}
