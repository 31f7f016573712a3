//! What op-graph's tests share: ops that op-kernels does not have (a
//! matrix product, zeros of constant dims, a double that never works in
//! place, an op that always fails), and error assertions.

#![allow(dead_code)] // each test crate uses some

pub mod peak;

use op_core::ndarray::Ix2;
use op_core::shape_inference::{DimOrValue, InferenceContext};
use op_core::{Code, DType, Error, KernelContext, Result, Tensor, kernel, register_op};

/// Links op-kernels' ops.
pub fn link() {
    op_kernels::link();
}

/// Asserts that the error's full text (code, message, context) contains
/// every one of `parts`.
#[track_caller]
pub fn assert_contains(error: &Error, parts: &[&str]) {
    let text = error.to_string();
    for part in parts {
        assert!(
            text.contains(part),
            "expected {part:?} in the error:\n{text}"
        );
    }
}

/// `[n,k] x [k,m] -> [n,m]`.
fn matmul_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let a = c.with_rank(c.input(0)?, 2)?;
    let b = c.with_rank(c.input(1)?, 2)?;
    let (a_k, b_k) = (c.dim(a, 1)?, c.dim(b, 0)?);
    c.merge_dim(a_k, b_k)?;
    let (n, m) = (c.dim(a, 0)?, c.dim(b, 1)?);
    let out = c.matrix(n, m);
    c.set_output(0, out)
}

/// A float matrix product (ndarray's, through matrixmultiply).
///
/// a: `[n,k]`.
/// b: `[k,m]`.
/// product: `[n,m]`.
#[register_op(inputs("a: float", "b: float"), outputs("product: float"), shape_fn = matmul_shape)]
pub struct TestMatMul;

#[kernel(op = TestMatMul)]
fn test_matmul(ctx: &mut KernelContext<'_>) -> Result<()> {
    let matrix = |i: usize| -> Result<_> {
        ctx.input_view::<f32>(i)?
            .into_dimensionality::<Ix2>()
            .map_err(|e| Error::invalid_argument(e.to_string()))
    };
    let product = matrix(0)?.dot(&matrix(1)?);
    ctx.set_output(0, Tensor::from_array(product))
}

/// The shape the value of input 0 gives, when known; else a shape of
/// the input's length in dimensions.
fn zeros_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    if let Some(dims) = c.input_tensor(0) {
        let dims: Vec<DimOrValue> = dims
            .as_slice::<i32>()?
            .iter()
            .map(|&d| DimOrValue::Value(usize::try_from(d).ok()))
            .collect();
        let out = c.make_shape(dims);
        return c.set_output(0, out);
    }
    let dims = c.with_rank(c.input(0)?, 1)?;
    let rank = c.dim(dims, 0)?;
    let out = match c.value(rank) {
        Some(rank) => c.unknown_shape_of_rank(rank),
        None => c.unknown_shape(),
    };
    c.set_output(0, out)
}

/// Float zeros of the shape its input gives (a shape function that reads a
/// constant input's value).
///
/// dims: the shape.
/// output: zeros.
#[register_op(inputs("dims: int32"), outputs("output: float"), shape_fn = zeros_shape)]
pub struct TestZeros;

#[kernel(op = TestZeros)]
fn test_zeros(ctx: &mut KernelContext<'_>) -> Result<()> {
    let dims: Vec<usize> = ctx
        .input_slice::<i32>(0)?
        .iter()
        .map(|&d| usize::try_from(d).unwrap_or(0))
        .collect();
    ctx.allocate_output(0, &dims)?;
    Ok(())
}

/// Doubles its input into a new buffer, never in place.
///
/// x: any float tensor.
/// y: `2 * x`.
#[register_op(inputs("x: float"), outputs("y: float"), shape = "unchanged")]
pub struct TestCopyDouble;

#[kernel(op = TestCopyDouble)]
fn test_copy_double(ctx: &mut KernelContext<'_>) -> Result<()> {
    let dims = ctx.input(0)?.dims().to_vec();
    let mut y = ctx.allocate_temp(DType::F32, &dims)?;
    let x = ctx.input_slice::<f32>(0)?;
    for (y, x) in y.as_slice_mut::<f32>()?.iter_mut().zip(x) {
        *y = 2.0 * x;
    }
    ctx.set_output(0, y)
}

/// Always fails, with a `FailedPrecondition` error.
///
/// x: anything.
/// y: never made.
#[register_op(attrs("T: type"), inputs("x: T"), outputs("y: T"), shape = "unchanged")]
pub struct TestFail;

#[kernel(op = TestFail)]
fn test_fail(ctx: &mut KernelContext<'_>) -> Result<()> {
    Err(ctx.error(Code::FailedPrecondition, "this op always fails"))
}

/// Kernels of `TestCounted` created so far.
pub static COUNTED_KERNELS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Returns its input; counts its kernels' creations in
/// [`COUNTED_KERNELS`].
///
/// x: anything.
/// y: `x`.
#[register_op(attrs("T: type"), inputs("x: T"), outputs("y: T"), shape = "unchanged")]
pub struct TestCounted;

/// `TestCounted`'s kernel.
pub struct TestCountedKernel;

#[kernel(op = TestCounted)]
impl TestCountedKernel {
    fn new(_ctx: &op_core::KernelConstruction<'_>) -> Result<Self> {
        COUNTED_KERNELS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(TestCountedKernel)
    }

    fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()> {
        let x = ctx.input(0)?.clone();
        ctx.set_output(0, x)
    }
}

/// Runs of `TestRendezvous` that have arrived.
pub static ARRIVED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Returns its input once `partners` runs of the op (counted in
/// [`ARRIVED`]) are under way at once; a `DeadlineExceeded` error if they
/// are not within 10 seconds (they ran one after another).
///
/// x: anything.
/// y: `x`.
#[register_op(inputs("x: float"), outputs("y: float"), shape = "unchanged")]
pub struct TestRendezvous {
    /// How many runs must be under way at once.
    pub partners: i64,
}

#[kernel(op = TestRendezvous)]
fn test_rendezvous(ctx: &mut KernelContext<'_>, attrs: &TestRendezvous) -> Result<()> {
    use std::sync::atomic::Ordering;
    ARRIVED.fetch_add(1, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while ARRIVED.load(Ordering::SeqCst) < attrs.partners as usize {
        if std::time::Instant::now() > deadline {
            return Err(ctx.error(
                Code::DeadlineExceeded,
                "the partners never ran at the same time",
            ));
        }
        std::thread::yield_now();
    }
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

/// Writes a tensor of a fixed-size number dtype or bool as a version 1
/// `.npy` file (for the scripts that check exported models in LiteRT).
pub fn write_npy(path: &std::path::Path, tensor: &Tensor) {
    fn le<T: op_core::Element, const N: usize>(
        tensor: &Tensor,
        bytes: impl Fn(&T) -> [u8; N],
    ) -> Vec<u8> {
        tensor
            .as_slice::<T>()
            .unwrap()
            .iter()
            .flat_map(bytes)
            .collect()
    }
    let (descr, data): (&str, Vec<u8>) = match tensor.dtype() {
        DType::F32 => ("<f4", le(tensor, |v: &f32| v.to_le_bytes())),
        DType::I64 => ("<i8", le(tensor, |v: &i64| v.to_le_bytes())),
        DType::I32 => ("<i4", le(tensor, |v: &i32| v.to_le_bytes())),
        DType::I16 => ("<i2", le(tensor, |v: &i16| v.to_le_bytes())),
        DType::I8 => ("|i1", le(tensor, |v: &i8| v.to_le_bytes())),
        DType::U8 => ("|u1", le(tensor, |v: &u8| v.to_le_bytes())),
        DType::Bool => ("|b1", le(tensor, |v: &bool| [u8::from(*v)])),
        other => panic!("write_npy: {other} tensors are not written"),
    };
    let dims: Vec<String> = tensor.dims().iter().map(|d| format!("{d},")).collect();
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': ({}), }}",
        dims.join(" ")
    );
    // The header ends in a newline at a multiple of 64 bytes.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(data);
    std::fs::write(path, bytes).unwrap();
}

/// A binary GraphDef: a float placeholder `x`, then `n` `Identity` nodes
/// `n0`, `n1`, ..., each reading the one before (the import benchmark's
/// and the import memory test's graph).
pub fn identity_chain_graphdef(n: usize) -> Vec<u8> {
    use op_graph::graphdef::proto;
    use prost::Message;
    let float = || {
        let value = proto::attr_value::Value::Type(DType::F32.enum_value());
        proto::AttrValue { value: Some(value) }
    };
    let node = |name: String, op: &str, input: Option<String>, attr: &str| proto::NodeDef {
        name,
        op: op.into(),
        input: input.into_iter().collect(),
        attr: [(attr.to_owned(), float())].into_iter().collect(),
        ..Default::default()
    };
    let mut def = proto::GraphDef::default();
    def.node
        .push(node("x".into(), "Placeholder", None, "dtype"));
    for i in 0..n {
        let input = if i == 0 {
            "x".into()
        } else {
            format!("n{}", i - 1)
        };
        def.node
            .push(node(format!("n{i}"), "Identity", Some(input), "T"));
    }
    def.encode_to_vec()
}
