//! The stateful-ops guide's `variable_and_stateless_op`: a stateless custom
//! op (`Examples>MultiplexDense`) used with a variable, as TensorFlow's
//! built-in ops are.
//!
//! The variable starts as ten int64 ones. For each position in
//! `[5, 1, 7, 5]`, the program prints the variable, builds `cond`, a
//! one-hot bool vector (the guide's `tf.one_hot(position, depth=n,
//! on_value=True, off_value=False, dtype=bool)`), and assigns
//! `multiplex(cond, v * 2, v)` (with `Example`, which doubles, for
//! `v * 2`): the element at the position doubles. Finally it prints the
//! variable again, exactly as the guide shows:
//!
//! ```text
//! [1 1 1 1 1 1 1 1 1 1]
//! [1 1 1 1 1 2 1 1 1 1]
//! [1 2 1 1 1 2 1 1 1 1]
//! [1 2 1 1 1 2 1 2 1 1]
//! [1 2 1 1 1 4 1 2 1 1]
//! ```
//!
//! Run it with `cargo run --example multiplex_2_variable`.

use op_core::{Result, Tensor};
use op_kernels::example::Example;
use op_kernels::multiplex::MultiplexDense;
use op_kernels::variable::Variable;

/// A vector as numpy prints an int array: `[1 2 10]` becomes `[ 1  2 10]`
/// (every element right-aligned to the widest, one space between).
pub fn numpy_str(values: &[i64]) -> String {
    let texts: Vec<String> = values.iter().map(i64::to_string).collect();
    let width = texts.iter().map(String::len).max().unwrap_or(0);
    let padded: Vec<String> = texts.iter().map(|t| format!("{t:>width$}")).collect();
    format!("[{}]", padded.join(" "))
}

/// A bool vector of length `depth`, true at `position` only (the guide's
/// `tf.one_hot` with `on_value=True, off_value=False`).
pub fn one_hot(position: usize, depth: usize) -> Result<Tensor> {
    Tensor::from_vec([depth], (0..depth).map(|i| i == position).collect())
}

/// The guide's `variable_and_stateless_op`; each line it prints goes to
/// `print`.
pub fn variable_and_stateless_op(mut print: impl FnMut(String)) -> Result<()> {
    let n = 10;
    let v = Variable::new(Tensor::from_vec([n], vec![1i64; n])?)?;
    for position in [5, 1, 7, 5] {
        let value = v.read()?;
        print(numpy_str(value.as_slice::<i64>()?));
        let cond = one_hot(position, n)?;
        let doubled = Example::call(&value).run()?;
        v.assign(MultiplexDense::call(cond, doubled, &value).run()?)?;
    }
    print(numpy_str(v.read()?.as_slice::<i64>()?));
    Ok(())
}

fn main() -> Result<()> {
    op_kernels::link();
    variable_and_stateless_op(|line| println!("{line}"))
}
