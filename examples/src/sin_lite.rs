//! Seed 002's custom `Sin` in the lite runtime: the trained
//! `y = sin(x + offset)` exported to a `.tflite` model with `Sin` kept a
//! custom op (the seed assumes TensorFlow Lite has no `SIN`), and the
//! seed's two C functions, `SinPrepare` and `SinEval`, in Rust. What
//! `cargo run --example sin_lite` runs and `tests/sin_lite.rs` checks.
//!
//! ```c++
//! TfLiteRegistration* Register_SIN() {
//!   static TfLiteRegistration r = {nullptr, nullptr, SinPrepare, SinEval};
//!   return &r;
//! }
//! resolver.AddCustom("Sin", Register_SIN());
//! ```
//!
//! is here [`register_sin`]: `resolver.add_custom("Sin", FnOp::new(sin_prepare, sin_eval))`.

use op_core::{DType, Result};
use op_graph::tflite::ExportOptions;
use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
use op_lite::{
    Interpreter, Model, MutableOpResolver, OpResolver, lite_ensure_eq, lite_ensure_types_eq,
};

use crate::sin::GraphTraining;

/// The seed's `SinPrepare`: one input, one output, of the input's shape.
///
/// ```c++
/// TF_LITE_ENSURE_EQ(context, NumInputs(node), 1);
/// TF_LITE_ENSURE_EQ(context, NumOutputs(node), 1);
/// ...
/// return context->ResizeTensor(context, output, output_size);
/// ```
pub fn sin_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    lite_ensure_eq!(ctx, ctx.num_inputs(), 1);
    lite_ensure_eq!(ctx, ctx.num_outputs(), 1);
    // The seed reads `input->data.f` unchecked; here a wrong dtype is an
    // error at prepare rather than garbage at invoke.
    lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::F32);
    let shape = ctx.input_shape(0)?;
    ctx.set_output_dtype(0, DType::F32)?;
    ctx.set_output_shape(0, shape)
}

/// The seed's `SinEval`: `output[i] = sin(input[i])`, into the buffer the
/// interpreter planned (nothing allocated).
pub fn sin_eval(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let input = ctx.input::<f32>(0)?;
    let output = ctx.output_mut::<f32>(0)?;
    for (y, x) in output.iter_mut().zip(input) {
        *y = x.sin();
    }
    Ok(())
}

/// The seed's `resolver.AddCustom("Sin", Register_SIN())` (a
/// `BuiltinOpResolver` derefs to the [`MutableOpResolver`] it extends).
pub fn register_sin(resolver: &mut MutableOpResolver) {
    resolver.add_custom("Sin", FnOp::new(sin_prepare, sin_eval));
}

/// The export options of the seed's model: `Sin` a custom op.
pub fn export_options() -> ExportOptions {
    ExportOptions::default().keep_custom("Sin")
}

/// The trained program as the bytes of a `.tflite` file, `Sin` custom.
pub fn export(training: &GraphTraining) -> Result<Vec<u8>> {
    training.export_tflite(&export_options())?.to_bytes()
}

/// Runs `model` in the lite runtime on `x` (its input `x`), with the ops
/// of `resolver`; returns its output. Building the interpreter is where a
/// missing op fails, in TensorFlow Lite's words.
pub fn run(model: &Model, resolver: &dyn OpResolver, x: &[f32]) -> Result<Vec<f32>> {
    let mut interpreter = Interpreter::new(model, resolver)?;
    interpreter.allocate_tensors()?;
    interpreter.set_input(interpreter.input_index("x")?, x)?;
    interpreter.invoke()?;
    Ok(interpreter.output::<f32>(0)?.to_vec())
}
