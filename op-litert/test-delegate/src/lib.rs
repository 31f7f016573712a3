//! A LiteRT delegate library for op-litert's Python tests
//! (`libop_litert_test_delegate.so`): the seed's custom `Sin`, and `Bad`,
//! whose invoke panics, and `Two`, whose prepare wants two inputs (a custom op no model of TensorFlow's converter has:
//! the tests make one by renaming `Sin` in `sin_custom.tflite`). No framework ops are linked, so
//! the bridge offers none, and `Cumprod` is a custom op it lacks.

use op_core::{DType, Result};
use op_lite::kernel::{InvokeContext, PrepareContext};
use op_lite::{lite_ensure_eq, lite_ensure_types_eq, lite_kernel};

op_litert::export!();

/// The seed's custom `Sin`: `SinPrepare` and `SinEval`.
struct Sin;

#[lite_kernel(custom = "Sin")]
impl Sin {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        lite_ensure_eq!(ctx, ctx.num_inputs(), 1);
        lite_ensure_eq!(ctx, ctx.num_outputs(), 1);
        lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::F32);
        let shape = ctx.input_shape(0)?;
        ctx.set_output_dtype(0, DType::F32)?;
        ctx.set_output_shape(0, shape)
    }

    fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
        let input = ctx.input::<f32>(0)?;
        let output = ctx.output_mut::<f32>(0)?;
        for (y, x) in output.iter_mut().zip(input) {
            *y = x.sin();
        }
        Ok(())
    }
}

/// Panics in its invoke: a panic must come back to Python as an error.
struct Bad;

#[lite_kernel(custom = "Bad")]
impl Bad {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        let shape = ctx.input_shape(0)?;
        ctx.set_output_shape(0, shape)
    }

    fn invoke(_ctx: &mut InvokeContext<'_>) -> Result<()> {
        panic!("Bad's invoke panics on purpose")
    }
}

/// Wants two inputs: on a one-input model its prepare fails, and the error
/// must name the op and what it expected.
struct Two;

#[lite_kernel(custom = "Two")]
impl Two {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        lite_ensure_eq!(ctx, ctx.num_inputs(), 2);
        Ok(())
    }

    fn invoke(_ctx: &mut InvokeContext<'_>) -> Result<()> {
        Ok(())
    }
}
