//! `ExternalNode`: a lite kernel over another runtime's memory, in place,
//! with its constant inputs readable in prepare, its temporaries its own,
//! and writes into memory another tensor shares refused.

use op_core::{Code, DType, Result};
use op_lite::external::{ExternalNode, HostTensor, NodeSpec};
use op_lite::kernel::{FnOp, InvokeContext, PrepareContext, TemporaryLifetime};

/// `y = x * k`, `k` a constant input read in prepare; `x` staged through a
/// scratch temporary.
fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    let k = ctx.constant_input::<f32>(1)?;
    if k.len() != 1 {
        return Err(ctx.error("k is a scalar"));
    }
    let shape = ctx.input_shape(0)?.to_vec();
    ctx.add_temporary(DType::F32, &shape, TemporaryLifetime::Scratch)?;
    ctx.set_output_shape(0, &shape)
}

fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let (x, k) = (ctx.input::<f32>(0)?, ctx.input::<f32>(1)?[0]);
    let scratch = ctx.temporary_mut::<f32>(0)?;
    scratch.copy_from_slice(x);
    let y = ctx.output_mut::<f32>(0)?;
    for (y, s) in y.iter_mut().zip(scratch.iter()) {
        *y = s * k;
    }
    Ok(())
}

const SHAPE: [usize; 1] = [3];
const SCALAR: [usize; 1] = [1];

fn tensor<'a>(
    name: &'a str,
    data: &mut [f32],
    shape: &'a [usize],
    constant: bool,
) -> HostTensor<'a> {
    HostTensor {
        name,
        dtype: DType::F32,
        shape,
        data: data.as_mut_ptr().cast(),
        bytes: std::mem::size_of_val(data),
        constant,
        variable: false,
    }
}

fn node() -> ExternalNode {
    let spec = NodeSpec {
        index: 4,
        op: "Scale",
        version: 1,
        custom_options: &[],
        num_inputs: 2,
        num_outputs: 1,
    };
    ExternalNode::init(&FnOp::new(prepare, invoke), &spec).unwrap()
}

#[test]
fn it_reads_constants_in_prepare_and_writes_the_host_s_output_in_place() {
    let (mut x, mut k, mut y) = ([1.0f32, 2.0, 3.0], [2.5f32], [0.0f32; 3]);
    let mut node = node();
    let ins = [
        Some(tensor("x", &mut x, &SHAPE, false)),
        Some(tensor("k", &mut k, &SCALAR, true)),
    ];
    let outs = [tensor("y", &mut y, &SHAPE, false)];
    // SAFETY: the arrays are live and disjoint for the calls.
    let prepared = unsafe { node.prepare(&ins, &outs) }.unwrap();
    assert_eq!(prepared[0].shape, [3]);
    // SAFETY: as above.
    unsafe { node.invoke(&ins, &outs) }.unwrap();
    assert_eq!(y, [2.5, 5.0, 7.5]);
}

#[test]
fn a_non_constant_input_is_not_readable_in_prepare() {
    let (mut x, mut k, mut y) = ([1.0f32; 3], [2.0f32], [0.0f32; 3]);
    let mut node = node();
    let ins = [
        Some(tensor("x", &mut x, &SHAPE, false)),
        Some(tensor("k", &mut k, &SCALAR, false)),
    ];
    let outs = [tensor("y", &mut y, &SHAPE, false)];
    // SAFETY: live, disjoint arrays.
    let err = unsafe { node.prepare(&ins, &outs) }.unwrap_err();
    assert!(
        err.message().contains("input 1 ('k') is not a constant"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("Node number 4 (Scale) failed to prepare."),
        "{err}"
    );
}

#[test]
fn an_output_sharing_memory_with_an_input_is_refused() {
    let (mut x, mut k) = ([1.0f32; 3], [2.0f32]);
    let mut node = node();
    let x_ptr = x.as_mut_ptr();
    let ins = [
        Some(tensor("x", &mut x, &SHAPE, false)),
        Some(tensor("k", &mut k, &SCALAR, true)),
    ];
    let mut outs = [ins[0].unwrap()];
    outs[0].name = "y";
    assert_eq!(outs[0].data, x_ptr.cast());
    // SAFETY: live arrays; the overlap is what invoke must refuse.
    unsafe { node.prepare(&ins, &outs) }.unwrap();
    // SAFETY: as above.
    let err = unsafe { node.invoke(&ins, &outs) }.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message()
            .contains("tensor 'y' shares memory with tensor 'x'"),
        "{err}"
    );
}

#[test]
fn invoke_refuses_an_output_of_another_shape_than_prepare_made() {
    let (mut x, mut k, mut y) = ([1.0f32; 3], [2.0f32], [0.0f32; 3]);
    let mut node = node();
    let ins = [
        Some(tensor("x", &mut x, &SHAPE, false)),
        Some(tensor("k", &mut k, &SCALAR, true)),
    ];
    let outs = [tensor("y", &mut y, &SHAPE, false)];
    // SAFETY: live, disjoint arrays.
    unsafe { node.prepare(&ins, &outs) }.unwrap();
    let mut small = [0.0f32; 1];
    let outs = [tensor("y", &mut small, &SCALAR, false)];
    // SAFETY: as above.
    let err = unsafe { node.invoke(&ins, &outs) }.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message()
            .contains("is float [1], but prepare made it float [3]"),
        "{err}"
    );
}
