//! Ops that fail on purpose, as a TensorFlow library
//! (`libop_tf_faults.so`): op-tf's Python tests
//! (`op-tf/python/tests/test_faults.py`) check that each failure is a clear
//! Python error and that TensorFlow goes on.

use op_core::shape_inference::InferenceContext;
use op_core::{KernelConstruction, KernelContext, Result, kernel, register_op};

op_tf::export!();

/// Panics in its kernel's run, naming its input's first element.
///
/// x: any float vector.
/// y: never made.
#[register_op(inputs("x: float"), outputs("y: float"), shape = "unchanged")]
pub struct PanicInCompute;

#[kernel(op = PanicInCompute)]
fn panic_in_compute(ctx: &mut KernelContext<'_>) -> Result<()> {
    let first = ctx
        .input_slice::<f32>(0)?
        .first()
        .copied()
        .unwrap_or_default();
    panic!("the kernel was given {first}")
}

/// Panics when its kernel is created.
///
/// x: any float tensor.
/// y: never made.
#[register_op(inputs("x: float"), outputs("y: float"), shape = "unchanged")]
pub struct PanicInConstruction;

/// The kernel of [`PanicInConstruction`].
pub struct PanicInConstructionKernel;

#[kernel(op = PanicInConstruction)]
impl PanicInConstructionKernel {
    fn new(_ctx: &KernelConstruction<'_>) -> Result<Self> {
        panic!("no kernel today")
    }

    fn compute(&self, _ctx: &mut KernelContext<'_>) -> Result<()> {
        Ok(())
    }
}

fn panicking_shape(_c: &mut InferenceContext<'_>) -> Result<()> {
    panic!("the shape function gave up")
}

/// Panics in its shape function, when a graph is built.
///
/// x: any float tensor.
/// y: `x`.
#[register_op(inputs("x: float"), outputs("y: float"), shape_fn = panicking_shape)]
pub struct PanicInShape;

#[kernel(op = PanicInShape)]
fn panic_in_shape(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.forward_input_to_output(0, 0).map(|_| ())
}
