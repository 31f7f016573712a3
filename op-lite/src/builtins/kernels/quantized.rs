//! QUANTIZE and DEQUANTIZE: registered so that a quantized model fails
//! with a message that says so, rather than "Didn't find op for builtin
//! opcode 'QUANTIZE'", which reads like a missing registration.

use op_core::Result;
use op_core::error::quoted;

use crate::kernel::{InitContext, InvokeContext, LiteNode, PrepareContext};
use crate::model::BuiltinOperator as Op;

/// A node of a quantized model: fails in prepare, naming its tensors.
struct Quantized;

/// `init` of QUANTIZE and DEQUANTIZE.
pub(crate) fn init_quantized(_ctx: &InitContext<'_>, _code: Op) -> Result<Box<dyn LiteNode>> {
    Ok(Box::new(Quantized))
}

impl LiteNode for Quantized {
    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        let input = match ctx.num_inputs() {
            0 => "no input".to_string(),
            _ => format!(
                "input 0 ({}, {})",
                quoted(ctx.input_name(0)?),
                ctx.input_dtype(0)?
            ),
        };
        let output = match ctx.num_outputs() {
            0 => "no output".to_string(),
            _ => format!(
                "output 0 ({}, {})",
                quoted(ctx.output_name(0)?),
                ctx.output_dtype(0)?
            ),
        };
        Err(ctx.error(format_args!(
            "{} ({input} to {output}) belongs to a quantized model: quantized models are not \
             supported by this runtime; convert the model without quantization",
            ctx.op_name()
        )))
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        Err(ctx.error("quantized models are not supported by this runtime"))
    }
}
