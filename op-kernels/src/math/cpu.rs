//! The CPU kernels of the math ops, for the types TensorFlow registers CPU
//! kernels for (`tensorflow/core/kernels/cwise_op_*.cc`, `relu_op.cc`,
//! `select_op.cc`, `aggregate_ops.cc`, `cast_op.cc`, `sequence_ops.cc`;
//! `Range` of `half` and `bfloat16` is left out).
//!
//! Each kernel picks a [`KernelContext`] helper, a cost per element and the
//! element function from [`unary`](super::unary), [`binary`](super::binary),
//! [`backprop`](super::backprop) or [`cast`](super::cast): the helpers reuse
//! an input's buffer when the caller handed it over, broadcast, and split
//! large tensors over the runtime's threads. `Range` writes its elements
//! ([`range`](super::range)) in blocks over the threads too.

use op_core::elementwise::Broadcast;
use op_core::{
    Code, Complex64, Complex128, DType, Element, Error, KernelConstruction, KernelContext, Result,
    Tensor, bf16, f16, kernel,
};

use super::backprop::{reciprocal_grad, relu_grad, rsqrt_grad, sigmoid_grad, sqrt_grad, tanh_grad};
use super::binary::{
    Arithmetic, Divide, DivideNoNan, FloorDivide, Power, add_into, maximum, minimum,
};
use super::cast::{CastSource, CastTarget, TruncateMantissa};
use super::ops::{
    AddN, AddV2, Cast, Conj, Cos, DivNoNan, Equal, Exp, FloorDiv, FloorMod, Greater, GreaterEqual,
    Less, LessEqual, Log, Maximum, Minimum, Mul, Neg, Pow, Range, RealDiv, Reciprocal,
    ReciprocalGrad, Relu, ReluGrad, Rsqrt, RsqrtGrad, Select, SelectV2, Sigmoid, SigmoidGrad, Sin,
    Sqrt, SqrtGrad, Square, SquaredDifference, Sub, Tanh, TanhGrad,
};
use super::range::{RangeElement, range_into};
use super::unary::{Floating, Negate, Transcendental, reciprocal, relu, square};

// What one element costs, in CPU cycles, for splitting work over threads
// (Eigen's functor costs, roughly).

/// An add, a compare, a select, a conversion.
const CHEAP: usize = 1;
/// A division.
const DIVIDE: usize = 5;
/// A division and a compare or two (`FloorDiv`, `FloorMod`, `DivNoNan`).
const DIVIDE_AND_COMPARE: usize = 6;
/// A square root and its reciprocal.
const SQRT: usize = 10;
/// `exp`, `log`, `sin`, `cos`, `tanh`, `sigmoid`.
const TRANSCENDENTAL: usize = 40;
/// `pow`.
const POW: usize = 80;

// ---- The helpers the kernels apply their element function with ----

/// Output 0 is `f` of each element of input 0, in its buffer when the
/// caller handed it over.
fn map<T: Element + Copy>(ctx: &mut KernelContext<'_>, cost: usize, f: fn(T) -> T) -> Result<()> {
    ctx.unary(0, 0, cost, |x: &T| f(*x))
}

/// Output 0 is `f` of inputs 0 and 1 broadcast together, in the buffer of
/// an input the caller handed over when it has the output's size.
fn zip<T: Element + Copy>(
    ctx: &mut KernelContext<'_>,
    cost: usize,
    f: fn(T, T) -> T,
) -> Result<()> {
    ctx.broadcast_binary([0, 1], 0, cost, |x: &T, y: &T| f(*x, *y))
}

/// [`zip`] for a function that may fail: the first failing element's
/// error.
fn try_zip<T: Element + Copy>(
    ctx: &mut KernelContext<'_>,
    cost: usize,
    f: fn(T, T) -> Result<T>,
) -> Result<()> {
    ctx.try_broadcast_binary([0, 1], 0, cost, |x: &T, y: &T| f(*x, *y))
}

/// [`zip`] for inputs of one shape, as TensorFlow's `BinaryElementWiseOp`
/// (`ReluGrad`) requires.
fn zip_same_shape<T: Element + Copy>(
    ctx: &mut KernelContext<'_>,
    cost: usize,
    f: fn(T, T) -> T,
) -> Result<()> {
    if ctx.input(0)?.dims() != ctx.input(1)?.dims() {
        return Err(not_same_shape(ctx, 1)?);
    }
    zip(ctx, cost, f)
}

/// Output 0 is `f` of inputs 0 and 1, which must have as many elements but
/// not necessarily one shape (TensorFlow's `SimpleBinaryOp`, the `*Grad`
/// ops): the output has input 0's shape.
fn zip_same_size<T: Element + Copy>(
    ctx: &mut KernelContext<'_>,
    cost: usize,
    f: fn(T, T) -> T,
) -> Result<()> {
    super::check_same_size(ctx)?;
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    if a.dims() == b.dims() {
        return zip(ctx, cost, f);
    }
    // Shapes of one size that differ (a caller that flattened one): walk
    // both as flat slices, in input 0's buffer when handed over.
    let other = b.clone();
    let other = other.as_slice::<T>()?;
    let threads = ctx.threads();
    let out = ctx.forward_input_to_output(0, 0)?.as_slice_mut::<T>()?;
    threads.shard_slice(out, cost, |offset, block| {
        for (x, y) in block.iter_mut().zip(&other[offset..]) {
            *x = f(*x, *y);
        }
    });
    Ok(())
}

/// TensorFlow's error for input `i` of an op whose inputs must all have
/// input 0's shape (`AddN`, `ReluGrad`).
fn not_same_shape(ctx: &KernelContext<'_>, i: usize) -> Result<Error> {
    Ok(ctx.error(
        Code::InvalidArgument,
        format_args!(
            "Inputs to operation {} of type {} must have the same size and shape.  Input 0: {} != input {i}: {}",
            ctx.node_name(),
            ctx.op_name(),
            ctx.input(0)?.shape(),
            ctx.input(i)?.shape()
        ),
    ))
}

/// Output 0 is the comparison `f` of inputs 0 and 1 broadcast together.
fn compare<T: Element>(
    ctx: &mut KernelContext<'_>,
    cost: usize,
    f: fn(&T, &T) -> bool,
) -> Result<()> {
    ctx.broadcast_binary_to([0, 1], 0, cost, f)
}

/// Element types that are ordered (`Relu`, `Maximum`, `Minimum` and the
/// comparisons).
trait Ordered: Element + Copy + PartialOrd {}

impl<T: Element + Copy + PartialOrd> Ordered for T {}

/// Ordered element types with `*` (`ReluGrad`).
trait OrderedArithmetic: Arithmetic + PartialOrd {}

impl<T: Arithmetic + PartialOrd> OrderedArithmetic for T {}

/// One kernel per line: the op, the kernel's name and element bound, the
/// helper with its cost per element and element function, and the types
/// TensorFlow registers CPU kernels for.
macro_rules! elementwise_kernels {
    ($($op:ident: $kernel:ident<$bound:path> = $helper:ident($cost:expr, $function:expr),
        types($($ty:ident),*);)*) => {$(
        #[kernel(op = $op, types($($ty),*))]
        fn $kernel<T: $bound>(ctx: &mut KernelContext<'_>) -> Result<()> {
            $helper(ctx, $cost, $function)
        }
    )*};
}

elementwise_kernels! {
    // Unary ops.
    Neg: neg<Negate> = map(CHEAP, T::negate),
        types(bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128);
    Square: square_kernel<Arithmetic> = map(CHEAP, square::<T>),
        types(bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32,
            uint64, complex64, complex128);
    Sqrt: sqrt<Transcendental> = map(SQRT, T::sqrt),
        types(bfloat16, half, float, double, complex64, complex128);
    Rsqrt: rsqrt<Transcendental> = map(SQRT, T::rsqrt),
        types(bfloat16, half, float, double, complex64, complex128);
    Exp: exp<Transcendental> = map(TRANSCENDENTAL, T::exp),
        types(bfloat16, half, float, double, complex64, complex128);
    Log: log<Transcendental> = map(TRANSCENDENTAL, T::log),
        types(bfloat16, half, float, double, complex64, complex128);
    Sin: sin<Transcendental> = map(TRANSCENDENTAL, T::sin),
        types(bfloat16, half, float, double, complex64, complex128);
    Cos: cos<Transcendental> = map(TRANSCENDENTAL, T::cos),
        types(bfloat16, half, float, double, complex64, complex128);
    Tanh: tanh<Transcendental> = map(TRANSCENDENTAL, T::tanh),
        types(bfloat16, half, float, double, complex64, complex128);
    Sigmoid: sigmoid<Transcendental> = map(TRANSCENDENTAL, T::sigmoid),
        types(bfloat16, half, float, double, complex64, complex128);
    Relu: relu_kernel<Ordered> = map(CHEAP, relu::<T>),
        types(float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32,
            uint64);
    Reciprocal: reciprocal_kernel<Floating> = map(DIVIDE, reciprocal::<T>),
        types(bfloat16, half, float, double, complex64, complex128);
    Conj: conj<Floating> = map(CHEAP, T::conj),
        types(complex64, complex128);

    // The gradients of unary ops: `(y, dy)` of as many elements.
    SqrtGrad: sqrt_grad_kernel<Floating> = zip_same_size(DIVIDE, sqrt_grad::<T>),
        types(bfloat16, half, float, double, complex64, complex128);
    RsqrtGrad: rsqrt_grad_kernel<Floating> = zip_same_size(CHEAP, rsqrt_grad::<T>),
        types(bfloat16, half, float, double, complex64, complex128);
    TanhGrad: tanh_grad_kernel<Floating> = zip_same_size(CHEAP, tanh_grad::<T>),
        types(bfloat16, half, float, double, complex64, complex128);
    SigmoidGrad: sigmoid_grad_kernel<Floating> = zip_same_size(CHEAP, sigmoid_grad::<T>),
        types(bfloat16, half, float, double, complex64, complex128);
    ReciprocalGrad: reciprocal_grad_kernel<Floating> = zip_same_size(CHEAP, reciprocal_grad::<T>),
        types(bfloat16, half, float, double, complex64, complex128);
    ReluGrad: relu_grad_kernel<OrderedArithmetic> = zip_same_shape(CHEAP, relu_grad::<T>),
        types(float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32,
            uint64);

    // Binary ops, broadcasting.
    AddV2: add_v2<Arithmetic> = zip(CHEAP, T::add),
        types(bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32,
            int64, complex64, complex128);
    Sub: sub<Arithmetic> = zip(CHEAP, T::sub),
        types(bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, complex64,
            complex128, uint32, uint64);
    Mul: mul<Arithmetic> = zip(CHEAP, T::mul),
        types(bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64,
            int64, complex64, complex128);
    RealDiv: real_div<Divide> = zip(DIVIDE, T::divide),
        types(bfloat16, half, float, double, complex64, complex128);
    Maximum: maximum_kernel<Ordered> = zip(CHEAP, maximum::<T>),
        types(bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64,
            uint64);
    Minimum: minimum_kernel<Ordered> = zip(CHEAP, minimum::<T>),
        types(bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64,
            uint64);
    Pow: pow<Power> = try_zip(POW, T::power),
        types(bfloat16, float, half, double, int8, int16, int32, int64, complex64, complex128);
    SquaredDifference: squared_difference<Arithmetic> = zip(CHEAP, T::squared_difference),
        types(bfloat16, half, float, double, int32, int64, complex64, complex128);
    FloorDiv: floor_div<FloorDivide> = try_zip(DIVIDE_AND_COMPARE, T::floor_div),
        types(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, half, bfloat16);
    FloorMod: floor_mod<FloorDivide> = try_zip(DIVIDE_AND_COMPARE, T::floor_mod),
        types(i8, i16, i32, i64, u8, u16, u32, u64, half, bfloat16, f32, f64);
    DivNoNan: div_no_nan<DivideNoNan> = zip(DIVIDE_AND_COMPARE, T::div_no_nan),
        types(half, float, bfloat16, double, complex64, complex128);

    // Comparisons, broadcasting, to bool.
    Greater: greater<Ordered> = compare(CHEAP, |x: &T, y: &T| x > y),
        types(float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32,
            uint64);
    Less: less<Ordered> = compare(CHEAP, |x: &T, y: &T| x < y),
        types(float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32,
            uint64);
    GreaterEqual: greater_equal<Ordered> = compare(CHEAP, |x: &T, y: &T| x >= y),
        types(float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32,
            uint64);
    LessEqual: less_equal<Ordered> = compare(CHEAP, |x: &T, y: &T| x <= y),
        types(float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32,
            uint64);
}

/// With `incompatible_shape_error` false, inputs that do not broadcast
/// give the scalar `false`, as TensorFlow's kernel does.
#[kernel(
    op = Equal,
    types(
        bool, string, complex128, complex64, int64, int32, qint32, quint16, quint8, qint16, qint8,
        uint64, uint32, uint16, bfloat16, int16, int8, uint8, double, half, float
    )
)]
fn equal<T: Element>(ctx: &mut KernelContext<'_>, attrs: &Equal) -> Result<()> {
    if !attrs.incompatible_shape_error {
        let (x, y) = (ctx.input(0)?.shape(), ctx.input(1)?.shape());
        if x.broadcast(&y).is_none() {
            return ctx.set_output(0, Tensor::scalar(false));
        }
    }
    ctx.broadcast_binary_to([0, 1], 0, CHEAP, |x: &T, y: &T| x == y)
}

// ---- Selection ----

/// `t` where `c`, else `e`.
fn choose<T: Clone>(c: &bool, t: &T, e: &T) -> T {
    if *c { t.clone() } else { e.clone() }
}

/// `Select`, with TensorFlow's rules and messages (`select_op.cc`): a
/// scalar condition picks `t` or `e` whole (sharing its buffer), a vector
/// condition against higher-rank values picks rows, and otherwise all
/// three must have one shape.
#[kernel(
    op = Select,
    types(
        resource, string, bool, complex128, complex64, double, float, bfloat16, half, int32, int8,
        uint8, int16, uint16, uint32, int64, uint64
    )
)]
fn select<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let (cond, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    let same_values = |ctx: &KernelContext<'_>| {
        if t.dims() == e.dims() {
            return Ok(());
        }
        Err(ctx.error(
            Code::InvalidArgument,
            format_args!(
                "'then' and 'else' must have the same size.  but received: {} vs. {}",
                t.shape(),
                e.shape()
            ),
        ))
    };
    if cond.rank() == 0 {
        same_values(ctx)?;
        let chosen = if cond.scalar_value::<bool>()? { t } else { e }.clone();
        return ctx.set_output(0, chosen);
    }
    let cond_dims = if cond.rank() == 1 && t.rank() != 1 {
        // One condition per slice along dimension 0: a `[n,1,...,1]`
        // condition broadcast over the values.
        if t.rank() == 0 {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "'then' must be at least a vector, but saw shape: {}",
                    t.shape()
                ),
            ));
        }
        if t.dims()[0] != cond.num_elements() {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!(
                    "Number of batches of 'then' must match size of 'cond', but saw: {} vs. {}",
                    t.dims()[0],
                    cond.num_elements()
                ),
            ));
        }
        same_values(ctx)?;
        let mut dims = vec![1; t.rank()];
        dims[0] = cond.num_elements();
        dims
    } else {
        for (i, input) in [(1, t), (2, e)] {
            if input.dims() != cond.dims() {
                return Err(ctx.error(
                    Code::InvalidArgument,
                    format_args!(
                        "Inputs to operation {} of type {} must have the same size and shape.  Input 0: {} != input {i}: {}",
                        ctx.node_name(),
                        ctx.op_name(),
                        cond.shape(),
                        input.shape()
                    ),
                ));
            }
        }
        cond.dims().to_vec()
    };
    let plan = Broadcast::new([&cond_dims, t.dims(), e.dims()])
        .ok_or_else(|| ctx.error(Code::Internal, "checked shapes do not broadcast"))?;
    ctx.broadcast_ternary(&plan, [0, 1, 2], 0, CHEAP, choose::<T>)
}

#[kernel(
    op = SelectV2,
    types(
        resource, string, bool, complex128, complex64, double, float, bfloat16, half, int32, int8,
        uint8, int16, uint16, uint32, int64, uint64
    )
)]
fn select_v2<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let (cond, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    let plan = Broadcast::new([cond.dims(), t.dims(), e.dims()]).ok_or_else(|| {
        ctx.error(
            Code::InvalidArgument,
            format_args!(
                "condition {}, then {}, and else {} must be broadcastable",
                cond.shape(),
                t.shape(),
                e.shape()
            ),
        )
    })?;
    ctx.broadcast_ternary(&plan, [0, 1, 2], 0, CHEAP, choose::<T>)
}

// ---- Sum of a list ----

/// The sum of the inputs, which must have one shape, in the buffer of the
/// first input the caller handed over (TensorFlow's `AddN` reuses one the
/// same way), else in a copy of input 0; the others are added in order.
/// One input is returned as it is.
#[kernel(
    op = AddN,
    types(
        complex128, complex64, double, float, bfloat16, half, int32, int8, uint8, int16, uint16,
        uint32, int64, uint64
    )
)]
fn add_n<T: Arithmetic>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let count = ctx.num_inputs();
    let first = ctx.input(0)?;
    for i in 1..count {
        let input = ctx.input(i)?;
        if input.dims() != first.dims() {
            return Err(not_same_shape(ctx, i)?);
        }
    }
    if count == 1 {
        let only = first.clone();
        return ctx.set_output(0, only);
    }
    let reused = (0..count)
        .find(|&i| {
            ctx.input(i)
                .is_ok_and(|t| t.is_unique() && t.dtype() == T::DTYPE)
        })
        .unwrap_or(0);
    // Handles on the other inputs, to read while the reused one is the
    // output being written.
    let others = (0..count)
        .filter(|&i| i != reused)
        .map(|i| ctx.input(i).cloned())
        .collect::<Result<Vec<Tensor>>>()?;
    let others = others
        .iter()
        .map(Tensor::as_slice::<T>)
        .collect::<Result<Vec<&[T]>>>()?;
    let threads = ctx.threads();
    // A copy of input 0 when no input was handed over.
    let sum = ctx
        .forward_input_to_output(reused, 0)?
        .as_slice_mut::<T>()?;
    threads.shard_slice(sum, count, |offset, block| {
        for other in &others {
            add_into(block, &other[offset..]);
        }
    });
    Ok(())
}

// ---- Sequences ----

/// `Range`, with TensorFlow's checks (`sequence_ops.cc`): three scalars,
/// and the range's own ([`RangeElement::range_len`]).
#[kernel(op = Range, types(Tidx = [f32, f64, i32, i64]))]
fn range<T: RangeElement>(ctx: &mut KernelContext<'_>) -> Result<()> {
    for (i, name) in ["start", "limit", "delta"].iter().enumerate() {
        let input = ctx.input(i)?;
        if input.rank() != 0 {
            return Err(ctx.error(
                Code::InvalidArgument,
                format_args!("{name} must be a scalar, not shape {}", input.shape()),
            ));
        }
    }
    let (start, limit, delta) = (
        ctx.input_scalar::<T>(0)?,
        ctx.input_scalar::<T>(1)?,
        ctx.input_scalar::<T>(2)?,
    );
    let len = T::range_len(start, limit, delta).map_err(|e| ctx.error(e.code(), e.message()))?;
    let threads = ctx.threads();
    let output = ctx.allocate_output(0, &[len])?.as_slice_mut::<T>()?;
    threads.shard_slice(output, 2, |offset, block| {
        range_into(start, delta, offset, block)
    });
    Ok(())
}

// ---- Conversion ----

/// A conversion of input 0 into output 0, chosen for one `(SrcT, DstT,
/// Truncate)` when the kernel is made.
type CastFn = fn(&mut KernelContext<'_>) -> Result<()>;

/// `Cast`'s kernel: one for every pair of types, as TensorFlow's (which
/// also picks the conversion once, in its constructor).
pub struct CastKernel {
    convert: CastFn,
}

#[kernel(op = Cast)]
impl CastKernel {
    fn new(ctx: &KernelConstruction<'_>) -> Result<Self> {
        let src: DType = ctx.get_attr("SrcT")?;
        let dst: DType = ctx.get_attr("DstT")?;
        let Cast { truncate } = ctx.attrs()?;
        let convert = cast_fn(src, dst, truncate)
            .ok_or_else(|| Error::unimplemented(format!("Cast {src} to {dst} is not supported")))?;
        Ok(CastKernel { convert })
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        (self.convert)(ctx)
    }
}

/// The conversion from `src` to `dst` (with `Truncate`), if supported.
fn cast_fn(src: DType, dst: DType, truncate: bool) -> Option<CastFn> {
    if src == dst {
        return Some(same_type);
    }
    if truncate {
        let truncated: Option<CastFn> = match (src, dst) {
            (DType::F64, DType::F32) => Some(cast_truncated::<f64, f32, 24>),
            (DType::F64, DType::F16) => Some(cast_truncated::<f64, f16, 11>),
            (DType::F64, DType::Complex64) => Some(cast_truncated::<f64, Complex64, 24>),
            (DType::Complex128, DType::F32) => Some(cast_truncated::<Complex128, f32, 24>),
            (DType::Complex128, DType::F16) => Some(cast_truncated::<Complex128, f16, 11>),
            (DType::Complex128, DType::Complex64) => {
                Some(cast_truncated::<Complex128, Complex64, 24>)
            }
            _ => None,
        };
        if truncated.is_some() {
            return truncated;
        }
    }
    match src {
        DType::F32 => cast_from::<f32>(dst),
        DType::F64 => cast_from::<f64>(dst),
        DType::F16 => cast_from::<f16>(dst),
        DType::BF16 => cast_from::<bf16>(dst),
        DType::I8 => cast_from::<i8>(dst),
        DType::I16 => cast_from::<i16>(dst),
        DType::I32 => cast_from::<i32>(dst),
        DType::I64 => cast_from::<i64>(dst),
        DType::U8 => cast_from::<u8>(dst),
        DType::U16 => cast_from::<u16>(dst),
        DType::U32 => cast_from::<u32>(dst),
        DType::U64 => cast_from::<u64>(dst),
        DType::Bool => cast_from::<bool>(dst),
        DType::Complex64 => cast_from::<Complex64>(dst),
        DType::Complex128 => cast_from::<Complex128>(dst),
        _ => None,
    }
}

/// The conversion from `S` to `dst`, if supported.
fn cast_from<S: CastSource>(dst: DType) -> Option<CastFn> {
    Some(match dst {
        DType::F32 => cast::<S, f32>,
        DType::F64 => cast::<S, f64>,
        DType::F16 => cast::<S, f16>,
        DType::BF16 => cast::<S, bf16>,
        DType::I8 => cast::<S, i8>,
        DType::I16 => cast::<S, i16>,
        DType::I32 => cast::<S, i32>,
        DType::I64 => cast::<S, i64>,
        DType::U8 => cast::<S, u8>,
        DType::U16 => cast::<S, u16>,
        DType::U32 => cast::<S, u32>,
        DType::U64 => cast::<S, u64>,
        DType::Bool => cast::<S, bool>,
        DType::Complex64 => cast::<S, Complex64>,
        DType::Complex128 => cast::<S, Complex128>,
        _ => return None,
    })
}

/// Output 0 is input 0 converted to `D`.
fn cast<S: CastSource, D: CastTarget>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary_to(0, 0, CHEAP, |x: &S| x.cast::<D>())
}

/// Output 0 is input 0 with its mantissas cut to `BITS` bits, converted to
/// `D` (`Truncate = true`).
fn cast_truncated<S: TruncateMantissa, D: CastTarget, const BITS: u32>(
    ctx: &mut KernelContext<'_>,
) -> Result<()> {
    ctx.unary_to(0, 0, CHEAP, |x: &S| x.truncate_mantissa(BITS).cast::<D>())
}

/// A cast to the input's own type: the input itself, sharing its buffer,
/// for every type (strings and resources too), as TensorFlow does.
fn same_type(ctx: &mut KernelContext<'_>) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}
