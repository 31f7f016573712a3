//! A misspelt library shape function: the error points at the string,
//! suggests the closest name and lists the library.

use op_core::register_op;

#[register_op(inputs("x: float"), outputs("y: float"), shape = "unchangd")]
pub struct Copy;

fn main() {}
