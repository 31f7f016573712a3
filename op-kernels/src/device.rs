//! The devices a kernel body is written over: seed 003's `Device` template
//! parameter (`ExampleOp<CPUDevice, T>`, `ExampleOp<GPUDevice, T>`).
//!
//! A kernel whose checks and allocation are the same on every device is
//! one generic function over a [`Device`]; the arithmetic is a functor
//! trait the device implements (`ExampleFunctor<T>` in
//! [`example`](crate::example)). The device says how the kernel call looks
//! to it ([`Device::Context`]), how the output of an elementwise op is made
//! ([`Device::unary_output`]: in the input's own buffer when the caller
//! handed it over, as TensorFlow's `forward_input_or_allocate_output`) and
//! what a functor then works on ([`Device::Unary`]: slices on the CPU,
//! device addresses on a GPU).
//!
//! [`Cpu`] is here; the GPU device is `gpu::Gpu` (the `gpu` feature).

use op_core::threads::ThreadPool;
use op_core::{Element, Error, KernelContext, Result, Tensor};

/// A device a generic kernel body runs on.
pub trait Device: Sized + 'static {
    /// The kernel call as the device's kernels see it: `KernelContext` on
    /// the CPU, op-cuda's `GpuContext` on a GPU.
    type Context<'c, 'a: 'c>;

    /// What an elementwise functor reads and writes: input and output
    /// elements of type `T` (possibly one buffer), and the device to run
    /// on.
    type Unary<'b, T: Element>;

    /// Output `output` with input `input`'s shape and dtype `T`: the
    /// input's buffer when nobody else holds it (the caller handed it
    /// over), else a new buffer, not zeroed (the functor writes every
    /// element).
    ///
    /// Returns an `InvalidArgument` error if the input or the output is
    /// not of type `T`, and the allocation's errors.
    fn unary_output<'b, T: Element>(
        ctx: &'b mut Self::Context<'_, '_>,
        input: usize,
        output: usize,
    ) -> Result<Self::Unary<'b, T>>;

    /// `e`, from a functor, with the op and node of the call (as every
    /// error the context returns).
    fn node_error(ctx: &Self::Context<'_, '_>, e: Error) -> Error;
}

/// The host's CPUs, with the runtime's intra-op threads (TensorFlow's
/// `Eigen::ThreadPoolDevice`).
#[derive(Debug, Clone, Copy)]
pub struct Cpu;

/// An elementwise functor's work on the CPU: the runtime's threads, and
/// the elements.
#[derive(Debug)]
pub struct CpuUnary<'b, T> {
    /// The threads to split the work over.
    pub threads: &'b ThreadPool,
    /// The input and output elements.
    pub elements: CpuElements<'b, T>,
}

/// An elementwise op's input and output on the CPU.
#[derive(Debug)]
pub enum CpuElements<'b, T> {
    /// The input's own buffer became the output: read and overwrite each
    /// element.
    InPlace(&'b mut [T]),
    /// A new output beside the input (which someone else holds).
    Apart {
        /// The input (a shared handle: read it with `as_slice`).
        input: Tensor,
        /// The output's elements, as many as the input's, unspecified
        /// until written.
        output: &'b mut [T],
    },
}

impl Device for Cpu {
    type Context<'c, 'a: 'c> = KernelContext<'a>;
    type Unary<'b, T: Element> = CpuUnary<'b, T>;

    fn unary_output<'b, T: Element>(
        ctx: &'b mut KernelContext<'_>,
        input: usize,
        output: usize,
    ) -> Result<CpuUnary<'b, T>> {
        let threads = ctx.threads();
        let candidate = ctx.input(input)?;
        if candidate.is_unique() && candidate.dtype() == T::DTYPE {
            let values = ctx
                .forward_input_to_output(input, output)?
                .as_slice_mut::<T>()?;
            return Ok(CpuUnary {
                threads,
                elements: CpuElements::InPlace(values),
            });
        }
        let input = candidate.clone();
        // Checks the input's dtype before anything is allocated.
        input.as_slice::<T>()?;
        let output = ctx
            .allocate_output_for_writing(output, input.dims())?
            .as_slice_mut::<T>()?;
        Ok(CpuUnary {
            threads,
            elements: CpuElements::Apart { input, output },
        })
    }

    fn node_error(ctx: &KernelContext<'_>, e: Error) -> Error {
        ctx.error(e.code(), e.message())
    }
}

impl<T: Element> CpuUnary<'_, T> {
    /// Every output element is `f` of its input element, split over the
    /// threads by `cost_per_element` (CPU cycles), in place or apart.
    ///
    /// Returns an `InvalidArgument` error if the input is not of type `T`.
    pub fn map(self, cost_per_element: usize, f: impl Fn(&T) -> T + Sync) -> Result<()> {
        match self.elements {
            CpuElements::InPlace(values) => {
                self.threads
                    .shard_slice(values, cost_per_element, |_, block| {
                        op_core::elementwise::map_in_place(block, &f);
                    });
            }
            CpuElements::Apart { input, output } => {
                let x = input.as_slice::<T>()?;
                self.threads
                    .shard_slice(output, cost_per_element, |offset, block| {
                        op_core::elementwise::map_into(&x[offset..], block, &f);
                    });
            }
        }
        Ok(())
    }
}
