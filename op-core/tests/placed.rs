//! Tensors over lent memory (`Tensor::lend`, `Tensor::lend_mut`) and
//! kernels run with their outputs placed in the caller's buffers
//! (`PreparedOp::run_placed`): what the lite runtime runs framework
//! kernels with. Under Miri too (`.ci/run`): lent memory is raw pointers.

use std::sync::{Arc, LazyLock};

use op_core::registry::{KernelRegistration, OpRegistration, Registry};
use op_core::{Code, DType, FnKernel, KernelContext, OpDefBuilder, Result, Runtime, Tensor};

fn lend(values: &[f32]) -> Tensor {
    // SAFETY: every test drops its lent tensors before their memory.
    unsafe { Tensor::lend(DType::F32, &[values.len()], bytemuck::cast_slice(values)) }.unwrap()
}

fn lend_mut(values: &mut [f32]) -> Tensor {
    let dims = [values.len()];
    // SAFETY: as above, and the memory is used only through the tensor.
    unsafe { Tensor::lend_mut(DType::F32, &dims, bytemuck::cast_slice_mut(values)) }.unwrap()
}

#[test]
fn a_lent_tensor_reads_the_memory_and_copies_before_writing() {
    let arena = [1.0f32, 2.0, 3.0];
    let x = lend(&arena);
    assert_eq!(x.as_slice::<f32>().unwrap(), [1.0, 2.0, 3.0]);
    assert!(!x.is_unique(), "lent for reading: never unique");
    let mut copy = x.clone();
    copy.as_slice_mut::<f32>().unwrap()[0] = 9.0;
    assert_eq!(copy.as_slice::<f32>().unwrap(), [9.0, 2.0, 3.0]);
    assert_ne!(copy.buffer_address(), x.buffer_address());
    assert_eq!(x.as_slice::<f32>().unwrap(), [1.0, 2.0, 3.0]);
    drop((x, copy));
    assert_eq!(arena, [1.0, 2.0, 3.0], "the lent memory is unchanged");
}

#[test]
fn a_tensor_lent_for_writing_writes_in_place_while_it_alone_holds_it() {
    let mut arena = [0.0f32; 4];
    {
        let mut y = lend_mut(&mut arena);
        assert!(y.is_unique());
        y.as_slice_mut::<f32>().unwrap()[2] = 5.0;
        let reshaped = y.reshape([2, 2]).unwrap();
        assert_eq!(reshaped.buffer_address(), y.buffer_address());
        drop(reshaped);
        assert!(y.is_unique());
    }
    assert_eq!(arena, [0.0, 0.0, 5.0, 0.0]);
}

#[test]
fn lent_memory_must_hold_the_tensor_and_be_aligned_and_plain() {
    let words = [0u32; 4];
    let bytes: &[u8] = bytemuck::cast_slice(&words);
    // SAFETY: the tensors made are dropped before `words`.
    let lend = |dtype, dims: &[usize], bytes: &[u8]| unsafe { Tensor::lend(dtype, dims, bytes) };
    let err = lend(DType::F32, &[3], bytes).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "lent memory of 16 bytes does not hold a float tensor of shape [3] (12 bytes)"
    );
    let err = lend(DType::F32, &[3], &bytes[1..13]).unwrap_err();
    assert!(
        err.message().contains("is not aligned for float (4 bytes)"),
        "{err}"
    );
    for dtype in [DType::Bool, DType::String, DType::Resource, DType::Variant] {
        let err = lend(dtype, &[1], &bytes[..1]).unwrap_err();
        assert_eq!(
            err.message(),
            format!("a tensor over lent memory must be of a plain type, not {dtype}")
        );
    }
    let err = lend(DType::U8, &[usize::MAX, 2], bytes).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let t = lend(DType::U8, &[2, 8], bytes).unwrap();
    assert_eq!(t.as_slice::<u8>().unwrap(), [0; 16]);
    let empty = lend(DType::F64, &[0, 3], &[]).unwrap();
    assert_eq!(empty.num_elements(), 0);
}

#[test]
fn relending_points_a_lent_tensor_at_new_memory_in_place() {
    let first = [1.0f32, 2.0];
    let second = [3.0f32, 4.0];
    let mut x = lend(&first);
    let address = x.buffer_address();
    // SAFETY: `x` is dropped before `second`, which nobody writes.
    unsafe { x.relend(bytemuck::cast_slice(&second)) }.unwrap();
    assert_eq!(x.as_slice::<f32>().unwrap(), [3.0, 4.0]);
    assert_eq!(x.buffer_address(), address, "the same tensor, repointed");

    let mut out = [0.0f32; 2];
    let mut y = lend_mut(&mut [0.0f32; 2]);
    let address = y.buffer_address();
    // SAFETY: `y` is dropped before `out`, which is used only through it.
    unsafe { y.relend_mut(bytemuck::cast_slice_mut(&mut out)) }.unwrap();
    assert_eq!(y.buffer_address(), address);
    y.as_slice_mut::<f32>().unwrap()[1] = 6.0;
    drop(y);
    assert_eq!(out, [0.0, 6.0]);

    // A tensor that is not lent, or shared, or of other bytes, is replaced.
    let mut z = Tensor::from_vec([2], vec![0.0f32; 2]).unwrap();
    // SAFETY: as for `x`.
    unsafe { z.relend(bytemuck::cast_slice(&second)) }.unwrap();
    assert_eq!(z.as_slice::<f32>().unwrap(), [3.0, 4.0]);
    assert!(!z.is_unique(), "now lent");
    let clone = x.clone();
    // SAFETY: as for `x`.
    unsafe { x.relend(bytemuck::cast_slice(&first)) }.unwrap();
    assert_ne!(x.buffer_address(), clone.buffer_address());
    assert_eq!(
        (
            x.as_slice::<f32>().unwrap(),
            clone.as_slice::<f32>().unwrap()
        ),
        (&[1.0, 2.0][..], &[3.0, 4.0][..])
    );
    // SAFETY: fails before lending anything.
    let err = unsafe { x.relend(bytemuck::cast_slice(&[1.0f32; 3])) }.unwrap_err();
    assert!(
        err.message()
            .contains("does not hold a float tensor of shape [2]"),
        "{err}"
    );
}

#[test]
fn an_unbound_lent_tensor_holds_nothing_until_relent_in_place() {
    let mut x = Tensor::unbound_lent(DType::F32, &[2], false).unwrap();
    let err = x.as_slice::<f32>().unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert!(
        x.clone().as_slice_mut::<f32>().is_err(),
        "nothing to copy either"
    );
    let address = x.buffer_address();
    let values = [5.0f32, 6.0];
    // SAFETY: `x` is dropped before `values`, which nobody writes.
    unsafe { x.relend(bytemuck::cast_slice(&values)) }.unwrap();
    assert_eq!(x.as_slice::<f32>().unwrap(), [5.0, 6.0]);
    assert_eq!(x.buffer_address(), address, "bound in place");

    let mut y = Tensor::unbound_lent(DType::I64, &[3], true).unwrap();
    assert!(y.as_slice_mut::<i64>().is_err());
    let mut out = [0i64; 3];
    {
        // SAFETY: `y` is dropped at the end of the block; `out` is used
        // only through it until then.
        unsafe { y.relend_mut(bytemuck::cast_slice_mut(&mut out)) }.unwrap();
        y.as_slice_mut::<i64>().unwrap()[0] = 4;
        drop(y);
    }
    assert_eq!(out, [4, 0, 0]);
    let err = Tensor::unbound_lent(DType::Bool, &[1], false).unwrap_err();
    assert_eq!(
        err.message(),
        "a tensor over lent memory must be of a plain type, not bool"
    );
    assert_eq!(
        Tensor::unbound_lent(DType::F32, &[0], true)
            .unwrap()
            .num_elements(),
        0
    );
}

// ---------------------------------------------------------------------------
// Kernels that make their outputs in each of the ways there are.

/// `y = 2x` through the elementwise helper (in place when it may).
fn twice(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| x * 2.0)
}

/// `y = x` but `y[0]` left as `allocate_output` made it.
fn skip_first(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = ctx.input(0)?.clone();
    let y = ctx.allocate_output(0, x.dims())?.as_slice_mut::<f32>()?;
    y[1..].copy_from_slice(&x.as_slice::<f32>()?[1..]);
    Ok(())
}

/// `y = -x`, in the input's own buffer (copied first when shared).
fn negate_in_place(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    for v in ctx.forward_input_to_output(0, 0)?.as_slice_mut::<f32>()? {
        *v = -*v;
    }
    Ok(())
}

/// `y = [x.len()]`: a tensor of its own, of another shape than `x`.
fn count(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let n = ctx.input(0)?.num_elements() as f32;
    ctx.set_output(0, Tensor::from_vec([1], vec![n])?)
}

/// An op `x: float -> y: float` and its one kernel, `f`.
macro_rules! unary_op {
    ($op:ident, $kernel:ident, $name:literal, $f:ident) => {
        static $op: OpRegistration = OpRegistration::new(
            $name,
            || {
                OpDefBuilder::new($name)
                    .input("x: float")
                    .output("y: float")
                    .build()
            },
            "tests/placed.rs",
            line!(),
        );
        static $kernel: KernelRegistration = KernelRegistration::new(
            $name,
            op_core::DeviceType::Cpu,
            stringify!($f),
            |c| FnKernel::<()>::create(c, $f),
            "tests/placed.rs",
            line!(),
        );
    };
}

unary_op!(TWICE, TWICE_KERNEL, "Twice", twice);
unary_op!(SKIP_FIRST, SKIP_FIRST_KERNEL, "SkipFirst", skip_first);
unary_op!(NEGATE, NEGATE_KERNEL, "NegateInPlace", negate_in_place);
unary_op!(COUNT, COUNT_KERNEL, "Count", count);

static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    Runtime::with_registry(Arc::new(Registry::new(
        [&TWICE, &SKIP_FIRST, &NEGATE, &COUNT],
        [
            &TWICE_KERNEL,
            &SKIP_FIRST_KERNEL,
            &NEGATE_KERNEL,
            &COUNT_KERNEL,
        ],
    )))
});

/// Runs `op` on `x` with its output placed in `y` (prefilled with 99s,
/// as an arena reused from another tensor would be): whether the output
/// was placed, and its values.
fn run_placed(op: &str, x: &[f32], y: &mut [f32]) -> (bool, Vec<f32>) {
    y.fill(99.0);
    let prepared = RUNTIME.prepare(op, &[DType::F32.into()], &[]).unwrap();
    let mut inputs = [lend(x)];
    let out = lend_mut(y);
    let address = out.buffer_address();
    let mut placed = [Some(out)];
    let mut outputs = [None];
    prepared
        .run_placed(&mut inputs, &mut placed, &mut outputs)
        .unwrap();
    let output = outputs[0].take().unwrap();
    let was_placed = output.buffer_address() == address;
    assert_eq!(
        placed[0].is_none(),
        was_placed,
        "a placed buffer is taken or left"
    );
    let values = output.as_slice::<f32>().unwrap().to_vec();
    drop((inputs, placed, output));
    if was_placed {
        assert_eq!(values, y, "the output is the caller's memory");
    }
    (was_placed, values)
}

#[test]
fn an_elementwise_output_is_made_in_the_placed_buffer() {
    let x = [1.0f32, -2.0, 3.5];
    let mut y = [0.0f32; 3];
    assert_eq!(
        run_placed("Twice", &x, &mut y),
        (true, vec![2.0, -4.0, 7.0])
    );
    assert_eq!(x, [1.0, -2.0, 3.5], "the lent input is not reused in place");
}

#[test]
fn an_allocated_output_is_the_placed_buffer_zeroed() {
    let x = [1.0f32, 2.0, 3.0];
    let mut y = [0.0f32; 3];
    assert_eq!(
        run_placed("SkipFirst", &x, &mut y),
        (true, vec![0.0, 2.0, 3.0])
    );
}

#[test]
fn an_output_made_otherwise_is_left_for_the_caller_to_copy() {
    // Forwarding a lent input copies it: the output is that copy.
    let x = [1.0f32, 2.0];
    let mut y = [0.0f32; 2];
    assert_eq!(
        run_placed("NegateInPlace", &x, &mut y),
        (false, vec![-1.0, -2.0])
    );
    assert_eq!(x, [1.0, 2.0]);
    assert_eq!(y, [99.0, 99.0], "the placed buffer is untouched");
    // A tensor of the kernel's own, of another shape than the one placed.
    let mut y = [0.0f32; 2];
    assert_eq!(run_placed("Count", &x, &mut y), (false, vec![2.0]));
}

#[test]
fn a_placed_buffer_of_another_shape_or_dtype_is_not_used() {
    let prepared = RUNTIME.prepare("Twice", &[DType::F32.into()], &[]).unwrap();
    let x = [1.0f32, 2.0];
    let mut wrong_shape = [0.0f32; 3];
    let mut wrong_dtype = [0i32; 2];
    let mut inputs = [lend(&x)];
    // SAFETY: dropped before `wrong_dtype`, used only through it.
    let int =
        unsafe { Tensor::lend_mut(DType::I32, &[2], bytemuck::cast_slice_mut(&mut wrong_dtype)) }
            .unwrap();
    for buffer in [lend_mut(&mut wrong_shape), int] {
        let mut placed = [Some(buffer)];
        let mut outputs = [None];
        prepared
            .run_placed(&mut inputs, &mut placed, &mut outputs)
            .unwrap();
        assert!(placed[0].is_some(), "not taken");
        assert_eq!(
            outputs[0].as_ref().unwrap().as_slice::<f32>().unwrap(),
            [2.0, 4.0]
        );
    }
    assert_eq!(wrong_shape, [0.0; 3]);
}

#[test]
fn run_placed_checks_its_inputs_like_run_into() {
    let prepared = RUNTIME.prepare("Twice", &[DType::F32.into()], &[]).unwrap();
    let x = [1u8, 2];
    // SAFETY: dropped before `x`.
    let mut inputs = [unsafe { Tensor::lend(DType::U8, &[2], &x) }.unwrap()];
    let err = prepared
        .run_placed(&mut inputs, &mut [], &mut [None])
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message()
            .contains("must be float, got a tensor of uint8"),
        "{err}"
    );
}
