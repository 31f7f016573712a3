//! The CPU kernel of `Example`: the CPU's [`ExampleFunctor`], applying
//! [`Double::double`] over the runtime's threads, and its registration for
//! every real and complex type.

use op_core::{KernelContext, Result, kernel};

use super::functor::{ExampleFunctor, example_op};
use super::math::Double;
use super::ops::Example;
use crate::device::{Cpu, CpuUnary};

/// What one element costs, in CPU cycles, for splitting work over threads.
const COST_PER_ELEMENT: usize = 1;

/// Seed 003's `ExampleFunctor<CPUDevice, T>`.
impl<T: Double> ExampleFunctor<T> for Cpu {
    fn compute(work: CpuUnary<'_, T>) -> Result<()> {
        work.map(COST_PER_ELEMENT, |x: &T| x.double())
    }
}

/// Seed 003's `REGISTER_CPU(T)`: `ExampleOp<CPUDevice, T>`.
#[kernel(op = Example, types(realnumbertype, complex64, complex128))]
fn example<T: Double>(ctx: &mut KernelContext<'_>) -> Result<()> {
    example_op::<Cpu, T>(ctx)
}
