//! The CPU kernels of `Const`, `Placeholder` and `PlaceholderWithDefault`,
//! each for every dtype (TensorFlow registers them unconstrained).

use op_core::error::quoted;
use op_core::{
    Code, DType, Error, KernelConstruction, KernelContext, Result, ShapeValue, Tensor, TensorValue,
    kernel,
};

use super::ops::{Const, Placeholder, PlaceholderWithDefault};

/// `Const`: the `value` attr as a tensor, made once when the kernel is
/// created; each run outputs it shared (no copy per run, and a consumer
/// that writes to it copies first, so the constant never changes).
pub struct ConstKernel {
    tensor: Tensor,
}

#[kernel(op = Const)]
impl ConstKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        let value: TensorValue = ctx.get_attr("value")?;
        let dtype: DType = ctx.get_attr("dtype")?;
        let node = ctx.instance();
        let tensor = Tensor::from_tensor_value(&value)
            .map_err(|e| Error::new(e.code(), format!("{node}: attr 'value': {}", e.message())))?;
        // TensorFlow's ConstantOp check, in its words.
        if tensor.dtype() != dtype {
            return Err(Error::invalid_argument(format!(
                "{node}: Type mismatch between value ({}) and dtype ({dtype})",
                tensor.dtype()
            )));
        }
        Ok(ConstKernel { tensor })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        ctx.set_output(0, self.tensor.clone())
    }
}

/// `Placeholder`: running it is the error that says it must be fed.
pub struct PlaceholderKernel {
    dtype: DType,
    shape: ShapeValue,
}

#[kernel(op = Placeholder)]
impl PlaceholderKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        Ok(PlaceholderKernel {
            dtype: ctx.get_attr("dtype")?,
            shape: ctx.get_attr("shape")?,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        // TensorFlow's message, which names the shape only when it has a
        // known rank above 0.
        let name = quoted(ctx.node_name());
        let message = if !self.shape.unknown_rank && !self.shape.dims.is_empty() {
            format!(
                "You must feed a value for placeholder tensor {name} with dtype {} and shape {}",
                self.dtype, self.shape
            )
        } else {
            format!(
                "You must feed a value for placeholder tensor {name} with dtype {}",
                self.dtype
            )
        };
        Err(ctx.error(Code::InvalidArgument, message))
    }
}

/// `PlaceholderWithDefault` when not fed: the default, passed through
/// without a copy, if it has a shape the `shape` attr allows (the shape
/// function rejects any other, so the kernel does too).
pub struct PlaceholderWithDefaultKernel {
    shape: ShapeValue,
}

#[kernel(op = PlaceholderWithDefault)]
impl PlaceholderWithDefaultKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        Ok(PlaceholderWithDefaultKernel {
            shape: ctx.get_attr("shape")?,
        })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let dims = ctx.input(0)?.dims();
        let fits = self.shape.unknown_rank
            || (self.shape.dims.len() == dims.len()
                && self
                    .shape
                    .dims
                    .iter()
                    .zip(dims)
                    .all(|(want, &have)| want.size == -1 || want.size == have as i64));
        if !fits {
            let message = format!(
                "input 'input' has shape {}, which the shape attr {} does not allow",
                ctx.input(0)?.shape(),
                self.shape
            );
            return Err(ctx.error(Code::InvalidArgument, message));
        }
        super::super::identity::forward(ctx, 0, 0)
    }
}
