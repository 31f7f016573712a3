//! The README's shape-inference example: a custom shape function on a
//! downstream op, tested in the one-line notation, and inference from
//! shapes alone through the registry.

use op_core::shape_inference::testing::ShapeTest;
use op_core::shape_inference::{InferenceContext, PartialShape};
use op_core::{DType, Registry, Result, register_op};

/// [n,k] x [k,m] -> [n,m]
fn matmul_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let a = c.with_rank(c.input(0)?, 2)?;
    let b = c.with_rank(c.input(1)?, 2)?;
    let (a_k, b_k) = (c.dim(a, 1)?, c.dim(b, 0)?);
    c.merge_dim(a_k, b_k)?;
    let (n, m) = (c.dim(a, 0)?, c.dim(b, 1)?);
    let out = c.matrix(n, m);
    c.set_output(0, out)
}

/// Multiplies two matrices (declared here only for its shape function).
#[register_op(inputs("a: float", "b: float"), outputs("product: float"), shape_fn = matmul_shape)]
pub struct MatMul;

#[test]
fn the_readme_shape_function() {
    let t = ShapeTest::new("MatMul");
    t.ok("[2,3];[3,4]", "[d0_0,d1_1]");
    t.ok("?;[3,4]", "[?,d1_1]");
    t.error("[2,3];[4,5]", "dimensions must be equal, but are 3 and 4");
    t.error(
        "[2,3];[4,5]",
        "(dimension 1 of input 0 ('a') with shape [2,3]; dimension 0 of input 1 ('b') with shape [4,5])",
    );
    t.error(
        "[2];[2,2]",
        "input 0 ('a') has shape [2], which must be rank 2 but is rank 1",
    );
}

#[test]
fn inference_from_shapes_alone() -> Result<()> {
    let shapes = Registry::global().infer_shapes(
        "MatMul",
        &[DType::F32.into(), DType::F32.into()],
        &[],
        &["[?,3]".parse()?, "[3,7]".parse()?],
        &[],
    )?;
    assert_eq!(shapes, ["[?,7]".parse::<PartialShape>()?]);
    Ok(())
}
