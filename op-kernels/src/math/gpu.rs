//! The GPU kernels of the elementwise math ops: the unary ops (`Neg`,
//! `Square`, `Sqrt`, `Exp`, `Log`, `Sin`, `Cos`, `Tanh`, `Sigmoid`,
//! `Relu`), the broadcasting binary ops (`AddV2`, `Sub`, `Mul`,
//! `RealDiv`), the gradient ops `TanhGrad` and `SigmoidGrad`, and `Cast`
//! between `float`, `double`, `int32` and `int64`.
//!
//! One CUDA source per shape of op, each a template applied to one functor
//! struct per op (no source per op):
//!
//! - [`UNARY`]: the prelude's `map` over 16-byte packs; the output is the
//!   input's buffer when the caller handed it over, as on the CPU.
//! - [`BINARY`]: `zip_flat` for operands of one shape or a one-element
//!   operand (packs, the scalar read once), and `zip_strided` for a
//!   general broadcast: the output's merged dimensions and each operand's
//!   strides ([`Broadcast::dims`], [`Broadcast::strides`], the CPU
//!   kernels' plan), up to [`MAX_RANK`] of them, passed by value in a
//!   [`Strides`] struct. The output is an input's buffer when the caller
//!   handed over one with the output's element count.
//! - [`CAST`]: one conversion template; C++ casts where they are what the
//!   CPU's `Cast` does, CUDA's round-toward-zero intrinsics for floats to
//!   integers (they saturate and give 0 for NaN, as the CPU's definition
//!   does).
//!
//! The results agree with the CPU kernels' exactly for the arithmetic and
//! conversions, and to within CUDA's documented error bounds (a few ulp)
//! for `sqrt`'s neighbours `exp`, `log`, `sin`, `cos`, `tanh`.

use op_core::elementwise::Broadcast;
use op_core::{Code, Result, kernel};
use op_cuda::cudarc::driver::DeviceRepr;
use op_cuda::{DevicePtr, GpuContext, GpuKernelSource};

use super::ops::{
    AddV2, Cast, Cos, Exp, Log, Mul, Neg, RealDiv, Relu, Sigmoid, SigmoidGrad, Sin, Sqrt, Square,
    Sub, Tanh, TanhGrad,
};
use crate::device::Device;
use crate::gpu::Gpu;
use crate::gpu::elementwise::{CudaElement, launch_packed};

/// `<op>_<dtype>(const T* x, T* y, u64 n)`: `y[i] = op(x[i])`.
pub static UNARY: GpuKernelSource = GpuKernelSource {
    name: "math_unary",
    source: concat!(
        crate::cuda_prelude!(),
        r#"
// The float and double function of one name.
#define FLOAT_FUNCTION(name, f32, f64)                                    \
    __device__ __forceinline__ float name(float x) { return f32(x); }      \
    __device__ __forceinline__ double name(double x) { return f64(x); }
FLOAT_FUNCTION(fn_sqrt, sqrtf, sqrt)
FLOAT_FUNCTION(fn_exp, expf, exp)
FLOAT_FUNCTION(fn_log, logf, log)
FLOAT_FUNCTION(fn_sin, sinf, sin)
FLOAT_FUNCTION(fn_cos, cosf, cos)
FLOAT_FUNCTION(fn_tanh, tanhf, tanh)

#define FUNCTOR(Name, expression)                                                 \
    template <typename T>                                                         \
    struct Name {                                                                 \
        __device__ __forceinline__ T operator()(T x) const { return expression; } \
    };
FUNCTOR(Neg, wrap_neg(x))
FUNCTOR(Square, wrap_mul(x, x))
FUNCTOR(Sqrt, fn_sqrt(x))
FUNCTOR(Exp, fn_exp(x))
FUNCTOR(Log, fn_log(x))
FUNCTOR(Sin, fn_sin(x))
FUNCTOR(Cos, fn_cos(x))
FUNCTOR(Tanh, fn_tanh(x))
FUNCTOR(Sigmoid, T(1) / (T(1) + fn_exp(-x)))
// Eigen's (x < 0) ? 0 : x: NaN and -0.0 stay.
FUNCTOR(Relu, x < T(0) ? T(0) : x)

#define UNARY(Op, name, T, suffix)                                         \
    extern "C" __global__ void name##_##suffix(const T* x, T* y, u64 n) {  \
        map(Op<T>(), x, y, n);                                             \
    }
#define UNARY_FLOAT(Op, name) UNARY(Op, name, float, f32) UNARY(Op, name, double, f64)
#define UNARY_INT(Op, name) UNARY(Op, name, int, i32) UNARY(Op, name, i64, i64)
UNARY_FLOAT(Neg, neg) UNARY_INT(Neg, neg)
UNARY_FLOAT(Square, square) UNARY_INT(Square, square)
UNARY_FLOAT(Sqrt, sqrt)
UNARY_FLOAT(Exp, exp)
UNARY_FLOAT(Log, log)
UNARY_FLOAT(Sin, sin)
UNARY_FLOAT(Cos, cos)
UNARY_FLOAT(Tanh, tanh)
UNARY_FLOAT(Sigmoid, sigmoid)
UNARY_FLOAT(Relu, relu) UNARY_INT(Relu, relu)
"#
    ),
    entries: &[
        "neg_f32",
        "neg_f64",
        "neg_i32",
        "neg_i64",
        "square_f32",
        "square_f64",
        "square_i32",
        "square_i64",
        "sqrt_f32",
        "sqrt_f64",
        "exp_f32",
        "exp_f64",
        "log_f32",
        "log_f64",
        "sin_f32",
        "sin_f64",
        "cos_f32",
        "cos_f64",
        "tanh_f32",
        "tanh_f64",
        "sigmoid_f32",
        "sigmoid_f64",
        "relu_f32",
        "relu_f64",
        "relu_i32",
        "relu_i64",
    ],
};

/// The most merged dimensions a general broadcast on the GPU takes (after
/// [`Broadcast`] drops the sizes of 1 and merges neighbours treated
/// alike, which leaves few: `[2,3,4] + [4]` is `[6,4] + [1,4]`).
pub const MAX_RANK: usize = 6;

/// A general broadcast's index arithmetic, passed to `zip_strided` by
/// value: the output's merged dimensions (outermost first) and each
/// operand's stride along them (0 where it is stretched). Laid out as the
/// CUDA struct `Strides`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Strides {
    dims: [u64; MAX_RANK],
    a: [u64; MAX_RANK],
    b: [u64; MAX_RANK],
    rank: u32,
    _padding: u32,
}

// SAFETY: `Strides` is `repr(C)` plain data (integers only), laid out as
// the CUDA struct `Strides` in `BINARY` (three arrays of 6 u64, an int,
// padding to 8 bytes), which kernels take by value.
unsafe impl DeviceRepr for Strides {}

impl Strides {
    /// The strides of `plan`, or `None` past [`MAX_RANK`] dimensions.
    pub fn of(plan: &Broadcast<2>) -> Option<Strides> {
        let rank = plan.dims().len();
        if rank > MAX_RANK {
            return None;
        }
        let mut strides = Strides {
            rank: rank as u32,
            ..Strides::default()
        };
        for (i, &d) in plan.dims().iter().enumerate() {
            strides.dims[i] = d as u64;
            strides.a[i] = plan.strides(0)[i] as u64;
            strides.b[i] = plan.strides(1)[i] as u64;
        }
        Some(strides)
    }
}

/// `<op>_<dtype>(const T* a, const T* b, T* y, u64 n, int a_scalar, int
/// b_scalar)` (operands of the output's element count, or one element)
/// and `<op>_strided_<dtype>(const T* a, const T* b, T* y, u64 n, Strides
/// s)` (a general broadcast): `y[i] = op(a[..], b[..])`.
pub static BINARY: GpuKernelSource = GpuKernelSource {
    name: "math_binary",
    source: concat!(
        crate::cuda_prelude!(),
        r#"
#define FUNCTOR(Name, expression)                                                      \
    template <typename T>                                                              \
    struct Name {                                                                      \
        __device__ __forceinline__ T operator()(T a, T b) const { return expression; } \
    };
FUNCTOR(Add, wrap_add(a, b))
FUNCTOR(Sub, wrap_sub(a, b))
FUNCTOR(Mul, wrap_mul(a, b))
FUNCTOR(Div, a / b)
// (y, dy): the gradients of tanh and sigmoid from their outputs.
FUNCTOR(TanhGrad, b * (T(1) - a * a))
FUNCTOR(SigmoidGrad, b * (a * (T(1) - a)))

// y[i] = f(a[i or 0], b[i or 0]): each operand has n elements or one (a
// scalar, read once). Packs when the full operands and y are aligned.
template <typename T, typename F>
__device__ __forceinline__ void zip_flat(F f, const T* a, const T* b, T* y, u64 n,
                                         int a_scalar, int b_scalar) {
    constexpr int N = Pack<T>::N;
    u64 done = 0;
    const u64 full = (a_scalar ? 0 : (u64)a) | (b_scalar ? 0 : (u64)b) | (u64)y;
    if ((full & 15) == 0) {
        const T a0 = a[0], b0 = b[0];
        const Pack<T>* as = reinterpret_cast<const Pack<T>*>(a);
        const Pack<T>* bs = reinterpret_cast<const Pack<T>*>(b);
        Pack<T>* ys = reinterpret_cast<Pack<T>*>(y);
        const u64 packs = n / N;
        for (u64 i = thread_index(); i < packs; i += thread_count()) {
            Pack<T> p, q;
            if (a_scalar) {
#pragma unroll
                for (int k = 0; k < N; ++k) p.v[k] = a0;
            } else {
                p = as[i];
            }
            if (b_scalar) {
#pragma unroll
                for (int k = 0; k < N; ++k) q.v[k] = b0;
            } else {
                q = bs[i];
            }
#pragma unroll
            for (int k = 0; k < N; ++k) p.v[k] = f(p.v[k], q.v[k]);
            ys[i] = p;
        }
        done = packs * N;
    }
    for (u64 i = done + thread_index(); i < n; i += thread_count()) {
        y[i] = f(a[a_scalar ? 0 : i], b[b_scalar ? 0 : i]);
    }
}

#define MAX_RANK 6
struct Strides {
    u64 dims[MAX_RANK];
    u64 a[MAX_RANK];
    u64 b[MAX_RANK];
    int rank;
};

// y[i] = f(a[ia], b[ib]), the operands' offsets from i's index in the
// merged output dimensions.
template <typename T, typename F>
__device__ __forceinline__ void zip_strided(F f, const T* a, const T* b, T* y, u64 n,
                                            const Strides& s) {
    for (u64 i = thread_index(); i < n; i += thread_count()) {
        u64 rest = i, ia = 0, ib = 0;
#pragma unroll
        for (int d = MAX_RANK - 1; d >= 0; --d) {
            if (d < s.rank) {
                const u64 index = rest % s.dims[d];
                rest /= s.dims[d];
                ia += index * s.a[d];
                ib += index * s.b[d];
            }
        }
        y[i] = f(a[ia], b[ib]);
    }
}

#define BINARY(Op, name, T, suffix)                                                     \
    extern "C" __global__ void name##_##suffix(const T* a, const T* b, T* y, u64 n,     \
                                               int a_scalar, int b_scalar) {            \
        zip_flat(Op<T>(), a, b, y, n, a_scalar, b_scalar);                              \
    }                                                                                   \
    extern "C" __global__ void name##_strided_##suffix(const T* a, const T* b, T* y,    \
                                                       u64 n, Strides s) {              \
        zip_strided(Op<T>(), a, b, y, n, s);                                            \
    }
#define BINARY_FLOAT(Op, name) BINARY(Op, name, float, f32) BINARY(Op, name, double, f64)
#define BINARY_INT(Op, name) BINARY(Op, name, int, i32) BINARY(Op, name, i64, i64)
BINARY_FLOAT(Add, add) BINARY_INT(Add, add)
BINARY_FLOAT(Sub, sub) BINARY_INT(Sub, sub)
BINARY_FLOAT(Mul, mul) BINARY_INT(Mul, mul)
BINARY_FLOAT(Div, div)
BINARY_FLOAT(TanhGrad, tanh_grad)
BINARY_FLOAT(SigmoidGrad, sigmoid_grad)
"#
    ),
    entries: &[
        "add_f32",
        "add_strided_f32",
        "add_f64",
        "add_strided_f64",
        "add_i32",
        "add_strided_i32",
        "add_i64",
        "add_strided_i64",
        "sub_f32",
        "sub_strided_f32",
        "sub_f64",
        "sub_strided_f64",
        "sub_i32",
        "sub_strided_i32",
        "sub_i64",
        "sub_strided_i64",
        "mul_f32",
        "mul_strided_f32",
        "mul_f64",
        "mul_strided_f64",
        "mul_i32",
        "mul_strided_i32",
        "mul_i64",
        "mul_strided_i64",
        "div_f32",
        "div_strided_f32",
        "div_f64",
        "div_strided_f64",
        "tanh_grad_f32",
        "tanh_grad_strided_f32",
        "tanh_grad_f64",
        "tanh_grad_strided_f64",
        "sigmoid_grad_f32",
        "sigmoid_grad_strided_f32",
        "sigmoid_grad_f64",
        "sigmoid_grad_strided_f64",
    ],
};

/// `cast_<src>_<dst>(const S* x, D* y, u64 n)` for every pair of
/// `float`, `double`, `int32`, `int64`, and `cast_truncate_f64_f32`
/// (`Truncate = true`: the 29 low mantissa bits cleared first).
pub static CAST: GpuKernelSource = GpuKernelSource {
    name: "math_cast",
    source: concat!(
        crate::cuda_prelude!(),
        r#"
// C++'s conversions (integers wrap, to float rounds to nearest), except
// floats to integers: toward zero, saturating, NaN to 0 (PTX cvt.rzi).
template <typename D, typename S>
__device__ __forceinline__ D convert(S x) { return (D)x; }
template <> __device__ __forceinline__ int convert<int, float>(float x) { return __float2int_rz(x); }
template <> __device__ __forceinline__ i64 convert<i64, float>(float x) { return __float2ll_rz(x); }
template <> __device__ __forceinline__ int convert<int, double>(double x) { return __double2int_rz(x); }
template <> __device__ __forceinline__ i64 convert<i64, double>(double x) { return __double2ll_rz(x); }
template <> __device__ __forceinline__ int convert<int, i64>(i64 x) { return (int)(unsigned)(u64)x; }

template <typename S, typename D>
__device__ __forceinline__ void cast(const S* x, D* y, u64 n) {
    for (u64 i = thread_index(); i < n; i += thread_count()) y[i] = convert<D>(x[i]);
}

#define CAST(S, s, D, d)                                                               \
    extern "C" __global__ void cast_##s##_##d(const S* x, D* y, u64 n) { cast(x, y, n); }
#define CAST_FROM(S, s) \
    CAST(S, s, float, f32) CAST(S, s, double, f64) CAST(S, s, int, i32) CAST(S, s, i64, i64)
CAST_FROM(float, f32)
CAST_FROM(double, f64)
CAST_FROM(int, i32)
CAST_FROM(i64, i64)

extern "C" __global__ void cast_truncate_f64_f32(const double* x, float* y, u64 n) {
    for (u64 i = thread_index(); i < n; i += thread_count()) {
        const double v = x[i];
        y[i] = isnan(v) ? (float)v
                        : (float)__longlong_as_double(__double_as_longlong(v) & (~0ull << 29));
    }
}
"#
    ),
    entries: &[
        "cast_f32_f32",
        "cast_f32_f64",
        "cast_f32_i32",
        "cast_f32_i64",
        "cast_f64_f32",
        "cast_f64_f64",
        "cast_f64_i32",
        "cast_f64_i64",
        "cast_i32_f32",
        "cast_i32_f64",
        "cast_i32_i32",
        "cast_i32_i64",
        "cast_i64_f32",
        "cast_i64_f64",
        "cast_i64_i32",
        "cast_i64_i64",
        "cast_truncate_f64_f32",
    ],
};

op_core::inventory::submit! { op_cuda::kernel::RegisteredSource(&UNARY) }
op_core::inventory::submit! { op_cuda::kernel::RegisteredSource(&BINARY) }
op_core::inventory::submit! { op_cuda::kernel::RegisteredSource(&CAST) }

// ---- What the kernels apply their entry point with ----

/// Output 0 is entry `<base>_<T>` of [`UNARY`] over input 0, in its
/// buffer when the caller handed it over.
fn map<T: CudaElement>(ctx: &mut GpuContext<'_, '_>, base: &str) -> Result<()> {
    let work = Gpu::unary_output::<T>(ctx, 0, 0)?;
    let launched = work
        .gpu
        .function(&UNARY, &T::entry(base))
        // SAFETY: every entry of UNARY is `(const T*, T*, u64)` over the
        // prelude's `map`, touching elements 0..n of each buffer.
        .and_then(|f| unsafe { work.map(&f) });
    launched.map_err(|e| Gpu::node_error(ctx, e))
}

/// Which input's buffer a binary op's output takes: the first the caller
/// handed over (nobody else holds it) with the output's dtype and element
/// count, on the GPU.
fn reusable_input<T: CudaElement>(ctx: &GpuContext<'_, '_>, n: usize) -> Option<usize> {
    (0..2).find(|&i| {
        ctx.input(i).is_ok_and(|t| {
            t.is_unique() && t.dtype() == T::DTYPE && !t.is_on_host() && t.num_elements() == n
        })
    })
}

/// How a binary op's operands are read.
enum Operands {
    /// Each operand has the output's element count or one element.
    Flat { a_scalar: bool, b_scalar: bool },
    /// A general broadcast.
    Strided(Strides),
}

/// Output 0 is entry `<base>_<T>` (or `<base>_strided_<T>`) of
/// [`BINARY`] over inputs 0 and 1 broadcast together, NumPy style, in the
/// buffer of an input the caller handed over when it has the output's
/// element count.
fn zip<T: CudaElement>(ctx: &mut GpuContext<'_, '_>, base: &str) -> Result<()> {
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    let plan = Broadcast::new([a.dims(), b.dims()]).ok_or_else(|| {
        let names = &ctx.op_def().inputs;
        ctx.error(
            Code::InvalidArgument,
            format_args!(
                "Incompatible shapes: {} vs. {} (input 0 ('{}') and input 1 ('{}') do not broadcast: aligned from the right, each pair of dimensions must be equal or one of them 1)",
                a.shape(),
                b.shape(),
                names[0].name,
                names[1].name
            ),
        )
    })?;
    let operands = if plan.dims().len() <= 1 {
        Operands::Flat {
            a_scalar: plan.operand_elements(0) == 1,
            b_scalar: plan.operand_elements(1) == 1,
        }
    } else {
        Operands::Strided(Strides::of(&plan).ok_or_else(|| {
            ctx.error(
                Code::Unimplemented,
                format_args!(
                    "broadcasting {} with {} on a GPU: {} dimensions after merging, the GPU kernels take at most {MAX_RANK}",
                    a.shape(),
                    b.shape(),
                    plan.dims().len()
                ),
            )
        })?)
    };
    let dims = plan.shape().dims().to_vec();
    zip_into::<T>(ctx, base, operands, &dims)
}

/// Output 0, of shape `dims`, is entry `<base>_<T>` (or
/// `<base>_strided_<T>`) of [`BINARY`] over inputs 0 and 1 read as
/// `operands` says, in the buffer of an input the caller handed over when
/// it has the output's element count.
fn zip_into<T: CudaElement>(
    ctx: &mut GpuContext<'_, '_>,
    base: &str,
    operands: Operands,
    dims: &[usize],
) -> Result<()> {
    let n: usize = dims.iter().product();
    let (pa, pb) = (ctx.input_ptr::<T>(0)?, ctx.input_ptr::<T>(1)?);
    let py: DevicePtr<T> = match reusable_input::<T>(ctx, n) {
        Some(i) => {
            ctx.forward_input_or_allocate_output(i, 0, dims)?;
            if i == 0 { pa } else { pb }
        }
        None => ctx.allocate_output_for_writing::<T>(0, dims)?,
    };
    if n == 0 {
        return Ok(());
    }
    let gpu = ctx.gpu().clone();
    let launched = match operands {
        Operands::Flat { a_scalar, b_scalar } => {
            gpu.function(&BINARY, &T::entry(base)).and_then(|f| {
                let args = (pa, pb, py, n as u64, a_scalar as i32, b_scalar as i32);
                // SAFETY: `<op>_<T>(const T* a, const T* b, T* y, u64 n,
                // int, int)` reads a and b at i < n (or 0 where flagged
                // scalar: those hold one element) and writes y at i < n;
                // y holds n elements, a non-scalar operand n too.
                unsafe { launch_packed::<T>(&gpu, &f, n, &args) }
            })
        }
        Operands::Strided(strides) => gpu
            .function(&BINARY, &T::entry(&format!("{base}_strided")))
            .and_then(|f| {
                let args = (pa, pb, py, n as u64, strides);
                // SAFETY: `<op>_strided_<T>(const T*, const T*, T*, u64,
                // Strides)` writes y at i < n and reads each operand at
                // the offsets its strides give for indices within the
                // merged dims, which are within its elements (the plan
                // is the inputs' broadcast).
                unsafe { gpu.launch_elementwise(&f, n, &args) }
            }),
    };
    launched.map_err(|e| Gpu::node_error(ctx, e))
}

/// [`zip`] for inputs with as many elements (the `*Grad` ops: TensorFlow's
/// `SimpleBinaryOp`): output 0 has input 0's shape.
fn zip_same_size<T: CudaElement>(ctx: &mut GpuContext<'_, '_>, base: &str) -> Result<()> {
    super::check_same_size(ctx)?;
    // One count, possibly two shapes (a caller that flattened one): both
    // are read flat, the output has input 0's shape.
    let dims = ctx.input(0)?.dims().to_vec();
    let operands = Operands::Flat {
        a_scalar: false,
        b_scalar: false,
    };
    zip_into::<T>(ctx, base, operands, &dims)
}

/// One GPU kernel per line: the op, the kernel's name, the helper and its
/// entry point's base name, the types.
macro_rules! gpu_kernels {
    ($($op:ident: $kernel:ident = $helper:ident($base:literal), types($($ty:ident),*);)*) => {$(
        #[kernel(op = $op, device = "gpu", types($($ty),*))]
        fn $kernel<T: CudaElement>(ctx: &mut GpuContext<'_, '_>) -> Result<()> {
            $helper::<T>(ctx, $base)
        }
    )*};
}

gpu_kernels! {
    Neg: neg_gpu = map("neg"), types(f32, f64, i32, i64);
    Square: square_gpu = map("square"), types(f32, f64, i32, i64);
    Sqrt: sqrt_gpu = map("sqrt"), types(f32, f64);
    Exp: exp_gpu = map("exp"), types(f32, f64);
    Log: log_gpu = map("log"), types(f32, f64);
    Sin: sin_gpu = map("sin"), types(f32, f64);
    Cos: cos_gpu = map("cos"), types(f32, f64);
    Tanh: tanh_gpu = map("tanh"), types(f32, f64);
    Sigmoid: sigmoid_gpu = map("sigmoid"), types(f32, f64);
    Relu: relu_gpu = map("relu"), types(f32, f64, i32, i64);

    AddV2: add_v2_gpu = zip("add"), types(f32, f64, i32, i64);
    Sub: sub_gpu = zip("sub"), types(f32, f64, i32, i64);
    Mul: mul_gpu = zip("mul"), types(f32, f64, i32, i64);
    RealDiv: real_div_gpu = zip("div"), types(f32, f64);

    TanhGrad: tanh_grad_gpu = zip_same_size("tanh_grad"), types(f32, f64);
    SigmoidGrad: sigmoid_grad_gpu = zip_same_size("sigmoid_grad"), types(f32, f64);
}

/// `Cast` between `float`, `double`, `int32` and `int64`: to its own type
/// the input itself (its buffer shared, as on the CPU), else one
/// conversion kernel into a new buffer.
#[kernel(
    op = Cast,
    device = "gpu",
    types(SrcT = [f32, f64, i32, i64], DstT = [f32, f64, i32, i64])
)]
fn cast_gpu<S: CudaElement, D: CudaElement>(
    ctx: &mut GpuContext<'_, '_>,
    attrs: &Cast,
) -> Result<()> {
    if S::DTYPE == D::DTYPE {
        let x = ctx.input(0)?.clone();
        return ctx.set_output(0, x);
    }
    let input = ctx.input(0)?;
    let (n, dims) = (input.num_elements(), input.dims().to_vec());
    let x = ctx.input_ptr::<S>(0)?;
    let y = ctx.allocate_output_for_writing::<D>(0, &dims)?;
    let entry = if attrs.truncate && (S::SUFFIX, D::SUFFIX) == ("f64", "f32") {
        "cast_truncate_f64_f32".to_owned()
    } else {
        format!("cast_{}_{}", S::SUFFIX, D::SUFFIX)
    };
    let f = ctx.function(&CAST, &entry)?;
    // SAFETY: cast_<s>_<d>(const S*, D*, u64 n) reads x and writes y at
    // i < n; x holds n elements of S, y n of D.
    unsafe { ctx.launch_elementwise(&f, n, &(x, y, n as u64)) }
}
