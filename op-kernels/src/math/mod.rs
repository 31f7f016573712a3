//! TensorFlow's elementwise math ops: the unary ops (`Neg`, `Square`,
//! `Sqrt`, `Rsqrt`, `Exp`, `Log`, `Sin`, `Cos`, `Tanh`, `Sigmoid`, `Relu`,
//! `Reciprocal`, `Conj`), the broadcasting binary ops (`AddV2`, `Sub`,
//! `Mul`, `RealDiv`, `Maximum`, `Minimum`, `Pow`, `SquaredDifference`,
//! `FloorDiv`, `FloorMod`, `DivNoNan`), the comparisons (`Greater`,
//! `Less`, `GreaterEqual`, `LessEqual`, `Equal`), selection (`Select`,
//! `SelectV2`), `AddN`, `Cast` and `Range`, with TensorFlow's OpDefs, shape
//! functions and CPU kernels for the types TensorFlow registers them for;
//! the ops their gradients are built from (`SqrtGrad`, `RsqrtGrad`,
//! `TanhGrad`, `SigmoidGrad`, `ReciprocalGrad`, `ReluGrad`); and the
//! gradients of all of them, with TensorFlow's formulas. The gradients of
//! the array, reduction and matmul ops are built from these too (`Range`,
//! `FloorDiv`, `FloorMod` and `DivNoNan` are here for them).
//!
//! Every kernel writes its output into an input's buffer when the caller
//! handed that input over and it has the output's type and size (what
//! lets a chain of elementwise ops in a graph run in place), broadcasts
//! NumPy style where TensorFlow does, and splits large tensors over the
//! runtime's threads; all three come from the
//! [`KernelContext`](op_core::KernelContext) helpers (`unary`,
//! `broadcast_binary`, `broadcast_ternary`), so a kernel is one line of
//! choosing an element function.
//!
//! # Layout
//!
//! The family is one folder, divided like the others (ops, kernels, math),
//! with the math split by the ops' arity because there is much of it
//! (`Range`, which makes a sequence rather than mapping elements, has its
//! own):
//!
//! | file | what it holds |
//! | --- | --- |
//! | `ops.rs` | every op's declaration, and the shape functions of `Equal`, `Select`, `SelectV2`, `AddN` and `Range` (the others are the library's `unchanged` and `broadcast`) |
//! | `cpu.rs` | every CPU kernel: a helper, a cost and an element function each; `Select`'s rules; `AddN`'s sum; `Cast`'s choice of conversion; `Range`'s checks |
//! | `unary.rs` | the element functions of the unary ops: [`Negate`], [`Transcendental`], [`Floating`], [`square`], [`relu`], [`reciprocal`] |
//! | `binary.rs` | the element functions of the binary ops and comparisons: [`Arithmetic`], [`Divide`], [`Power`], [`FloorDivide`], [`DivideNoNan`], [`maximum`], [`minimum`]; `AddN`'s [`add_into`] |
//! | `range.rs` | `Range`'s arithmetic: its length, with TensorFlow's checks, and its elements ([`RangeElement`], [`range_into`]) |
//! | `backprop.rs` | the element functions of the gradient ops: [`sqrt_grad`], [`rsqrt_grad`], [`tanh_grad`], [`sigmoid_grad`], [`reciprocal_grad`], [`relu_grad`] |
//! | `cast.rs` | the conversions of `Cast` between every pair of types ([`CastSource`], [`CastTarget`]) and what each does |
//! | `gpu.rs` | the GPU kernels (the `gpu` feature) of `Neg`, `Square`, `Sqrt`, `Exp`, `Log`, `Sin`, `Cos`, `Tanh`, `Sigmoid`, `Relu`, `AddV2`, `Sub`, `Mul`, `RealDiv` (broadcasting), `TanhGrad`, `SigmoidGrad` and `Cast`: three CUDA sources (unary, binary, conversion), each one template over a functor per op |
//! | `grad.rs` | the gradient of every differentiable op of the family (`#[gradient]`), TensorFlow's `math_grad.py` and `nn_grad.py` in Rust, the marks of those that are not differentiable, and the reduction of a broadcast gradient to an input's shape ([`reduce_gradient_args`], [`broadcast_reduction_axes`]) |
//!
//! The element functions are plain Rust over elements and slices, for a
//! lite runtime or a GPU kernel to reuse; each module says where its
//! results follow TensorFlow's CPU kernels and where (for undefined
//! behaviour in C++) they do not.
//!
//! # Conversions
//!
//! TensorFlow's CPU `Cast` converts with C++'s `static_cast` (through
//! Eigen); [`CastSource::cast`] gives the same results wherever C++ defines
//! them:
//!
//! | from → to | result |
//! | --- | --- |
//! | integer → integer | the value modulo 2^bits (`int64` 2^40 + 1 → `int32` 1, -1 → `uint8` 255) |
//! | integer → float | the nearest value, ties to even |
//! | float → integer | truncated toward zero (2.7 → 2, -2.7 → -2) |
//! | `double` → `float` | the nearest value, ties to even (overflow → infinity) |
//! | anything → `half`, `bfloat16` | through `float`, then to nearest, ties to even (`double` → `half` rounds twice, as Eigen does) |
//! | `half`, `bfloat16` → anything | through `float` (exact) |
//! | number → `bool` | `x != 0` (NaN → true) |
//! | `bool` → number | 1 or 0 |
//! | complex → real or `bool` | the real part, converted (as NumPy) |
//! | real → complex | the value, with a zero imaginary part |
//! | a type → itself | the input itself, its buffer shared (any type, strings too) |
//!
//! Strings, resources and the quantized types convert only to themselves;
//! any other pair is an `Unimplemented` error (`Cast string to float is not
//! supported`), as in TensorFlow.
//!
//! **Float to integer out of range.** C++ leaves a float outside the
//! integer type's range (and NaN) undefined, and TensorFlow's results there
//! follow the machine and the code path: on x86-64, `float` 1e10 → `int32`
//! gives `i32::MIN`, NaN → `int64` gives `i64::MIN`, and `float` 300 →
//! `int8` gives 44 (through a 32-bit integer) while `double` 300 → `int8`
//! gives 127. We define them instead, as Rust's `as` does: the result
//! saturates at the type's bounds (1e10 → `i32::MAX`, -1e10 → `i32::MIN`,
//! 300 → `int8` 127, -1 → `uint8` 0) and NaN becomes 0. In range, both
//! agree (truncation toward zero).
//!
//! **`Truncate`.** With `Truncate = true`, TensorFlow clears the low bits of
//! the source's mantissa that the target cannot hold before converting
//! (rounding toward zero instead of to nearest), for `double` →
//! `float`/`half`/`complex64` and `complex128` → `float`/`half`/`complex64`;
//! other pairs ignore it (TensorFlow 2.21 ignores it for `float` → `half`
//! and `bfloat16` too). We do the same ([`truncate_mantissa`]), except that
//! for `double` → `complex64` TensorFlow 2.21 clears 53 bits (it takes
//! `complex64`'s mantissa width to be 0, so 1.9999999999 becomes 0.5); we
//! clear the 29 that `float` cannot hold, as for `double` → `float`.

mod backprop;
mod binary;
mod cast;
mod cpu;
#[cfg(feature = "gpu")]
mod gpu;
mod grad;
mod ops;
mod range;
mod unary;

pub use backprop::{reciprocal_grad, relu_grad, rsqrt_grad, sigmoid_grad, sqrt_grad, tanh_grad};
pub use binary::{
    Arithmetic, DIVISION_BY_ZERO, Divide, DivideNoNan, FloorDivide, POW_ERROR, Power, add_into,
    maximum, minimum,
};
pub use cast::{CastSource, CastTarget, TruncateMantissa, cast_into, truncate_mantissa};
pub use cpu::CastKernel;
pub(crate) use grad::conj;
pub use grad::{broadcast_reduction_axes, reduce_gradient_args};
pub use ops::*;
pub use range::{RangeElement, range_into};
pub use unary::{Floating, Negate, Transcendental, reciprocal, relu, square};

/// TensorFlow's error (`SimpleBinaryOp`, the `*Grad` ops) when inputs 0
/// and 1 do not hold as many elements, for the CPU and GPU kernels alike.
fn check_same_size(ctx: &op_core::KernelContext<'_>) -> op_core::Result<()> {
    let (a, b) = (ctx.input(0)?.num_elements(), ctx.input(1)?.num_elements());
    if a != b {
        return Err(ctx.error(
            op_core::Code::InvalidArgument,
            format_args!(
                "The two arguments to a cwise op must have same number of elements, got {a} and {b}"
            ),
        ));
    }
    Ok(())
}
