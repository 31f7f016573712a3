//! Shape functions on `#[register_op]` and `#[op]`: every function of the
//! library by name, a custom function and a closure, each checked with the
//! `INFER_OK` / `INFER_ERROR` notation.

use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::shape_inference::InferenceContext;
use op_core::shape_inference::testing::ShapeTest;
use op_core::{Result, op, register_op};

/// Copies its input.
#[register_op(attrs("T: type"), inputs("x: T"), outputs("y: T"), shape = "unchanged")]
pub struct Identity;

/// Counts its input's elements.
#[register_op(inputs("x: float"), outputs("n: int64"), shape = "scalar")]
pub struct Size;

/// An output whose shape depends on the input's values.
#[register_op(inputs("x: int32"), outputs("y: float"), shape = "unknown")]
pub struct Where;

/// Adds two tensors, NumPy style.
#[register_op(attrs("T: {float, int32}"), inputs("x: T", "y: T"), outputs("z: T"), shape = "broadcast")]
pub struct AddV2;

/// Adds `N` tensors of one shape.
#[register_op(attrs("N: int", "T: {float, int32}"), inputs("in: N * T"), outputs("sum: T"), shape = "merge_inputs")]
pub struct AddN;

/// Returns its list unchanged.
#[register_op(attrs("T: list(type)"), inputs("in: T"), outputs("out: T"), shape = "pass_through")]
pub struct IdentityN;

/// The transpose of a matrix: `[n,m]` gives `[m,n]`.
fn transpose_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let x = c.with_rank(c.input(0)?, 2)?;
    let (rows, cols) = (c.dim(x, 0)?, c.dim(x, 1)?);
    let y = c.matrix(cols, rows);
    c.set_output(0, y)
}

/// Transposes a matrix.
#[register_op(inputs("x: float"), outputs("y: float"), shape_fn = transpose_shape)]
pub struct Transpose;

/// Flattens a tensor into a vector.
#[register_op(
    inputs("x: float"),
    outputs("y: float"),
    shape_fn = |c| {
        let x = c.input(0)?;
        let n = if c.fully_defined(x) {
            let mut n = c.make_dim(Some(1));
            for i in 0..c.rank(x).unwrap_or(0) {
                let d = c.dim(x, i as i64)?;
                n = c.multiply(n, d)?;
            }
            n
        } else {
            c.unknown_dim()
        };
        let y = c.vector(n);
        c.set_output(0, y)
    }
)]
pub struct Flatten;

/// The sum of a tensor's elements, declared by its signature.
#[op(shape = "scalar")]
pub fn sum_all(x: ArrayViewD<'_, f32>) -> f32 {
    x.sum()
}

/// Both inputs, swapped, with a closure for the shape function.
#[op(outputs("a", "b"), shape_fn = |c| {
    let (x, y) = (c.input(0)?, c.input(1)?);
    c.set_output(0, y)?;
    c.set_output(1, x)
})]
pub fn swap(x: ArrayViewD<'_, i32>, y: ArrayViewD<'_, f32>) -> (ArrayD<f32>, ArrayD<i32>) {
    (y.to_owned(), x.to_owned())
}

/// Transposes a matrix, with a custom function on `#[op]`.
#[op(shape_fn = transpose_shape)]
pub fn transposed(x: ArrayViewD<'_, f32>) -> ArrayD<f32> {
    x.t().to_owned()
}

fn main() {
    let t = ShapeTest::new("Identity");
    t.ok("[2,?]", "in0");
    t.ok("?", "in0");

    let t = ShapeTest::new("Size");
    t.ok("[2,3]", "[]");
    t.ok("?", "[]");

    ShapeTest::new("Where").ok("[4]", "?");

    let t = ShapeTest::new("AddV2");
    t.ok("[2,1];[3]", "[d0_0,d1_0]");
    t.ok("[];[?,3]", "[d1_0,d1_1]");
    t.ok("?;[3]", "?");
    t.error("[2];[3]", "incompatible shapes for broadcasting");

    let t = ShapeTest::new("AddN");
    t.ok("[2,?];[?,3]", "[d0_0,d1_1]");
    t.error("[2];[3]", "input 0 ('in'[0]) has shape [2] and input 1 ('in'[1]) has shape [3]");

    ShapeTest::new("IdentityN").ok("[1];?;[]", "in0;in1;in2");

    let t = ShapeTest::new("Transpose");
    t.ok("[2,3]", "[d0_1,d0_0]");
    t.ok("?", "[?,?]");
    t.error("[1,2,3]", "must be rank 2 but is rank 3");

    let t = ShapeTest::new("Flatten");
    t.ok("[2,3,4]", "[24]");
    t.ok("[5]", "[d0_0]");
    t.ok("[2,?]", "[?]");
    t.ok("[]", "[1]");

    ShapeTest::new("SumAll").ok("[2,3]", "[]");
    ShapeTest::new("Swap").ok("[2];[3,4]", "in1;in0");
    let t = ShapeTest::new("Transposed");
    t.ok("[2,?]", "[d0_1,d0_0]");
    t.error("[2]", "input 0 ('x') has shape [2], which must be rank 2 but is rank 1");
}
