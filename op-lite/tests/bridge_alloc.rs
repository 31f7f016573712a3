//! Invoking framework ops through the bridge allocates nothing but what
//! their kernels allocate themselves (prepare made the tensors lent from
//! the arena; each invoke points them at it): counted by this test
//! binary's global allocator, on the thread that invokes.

mod common;
mod counting;

use common::ModelBuilder;
use op_core::{AttrValue, DType, Tensor};
use op_lite::Interpreter;
use op_lite::attrs::encode_attrs;
use op_lite::bridge::FrameworkOps;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

#[test]
fn the_counter_sees_allocations() {
    assert!(counting::allocations(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}

/// Allocations of the first invoke and of each of three after it.
fn count(model: &op_lite::Model, x: &[f32]) -> (usize, usize) {
    op_kernels::link();
    let mut interpreter = Interpreter::new(model, &FrameworkOps::new()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, x).unwrap();
    let first = counting::allocations(|| interpreter.invoke().unwrap());
    let later = counting::allocations(|| {
        for _ in 0..3 {
            interpreter.invoke().unwrap();
        }
    });
    (first, later)
}

#[test]
fn elementwise_framework_ops_invoke_without_allocating() {
    // y = (x + c) * x: AddV2 and Mul through the bridge, their outputs
    // made in the arena by the elementwise helpers.
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[4, 16]);
    let c = b.constant("c", &[4, 16], &[0.5; 64]);
    let s = b.f32("s", &[4, 16]);
    let y = b.f32("y", &[4, 16]);
    b.custom("AddV2", &[x, c], &[s]);
    b.custom("Mul", &[s, x], &[y]);
    b.input(x).output(y);
    let xs: Vec<f32> = (0..64).map(|i| i as f32 / 8.0).collect();
    let (first, later) = count(&b.build(), &xs);
    assert_eq!(
        (first, later),
        (0, 0),
        "allocations in the first invoke, the next three"
    );
}

/// Allocations of one run of `Cumprod` on lent tensors, in the framework's
/// runtime alone: what its kernel allocates itself.
fn cumprod_kernel_allocations(x: &[f32]) -> usize {
    let prepared = op_core::Runtime::global()
        .prepare(
            "Cumprod",
            &[DType::F32.into(), DType::I32.into()],
            &[("reverse", AttrValue::Bool(true))],
        )
        .unwrap();
    let axis = [1i32];
    let mut y = [0.0f32; 64];
    // SAFETY: every tensor is dropped at the end of this function, and `y`
    // is used only through its tensor.
    let (mut inputs, mut placed) = unsafe {
        (
            [
                Tensor::lend(DType::F32, &[8, 8], bytemuck::cast_slice(x)).unwrap(),
                Tensor::lend(DType::I32, &[], bytemuck::cast_slice(&axis)).unwrap(),
            ],
            [Some(
                Tensor::lend_mut(DType::F32, &[8, 8], bytemuck::cast_slice_mut(&mut y)).unwrap(),
            )],
        )
    };
    let mut outputs = [None];
    let mut run = || {
        prepared
            .run_placed(&mut inputs, &mut placed, &mut outputs)
            .unwrap();
        placed[0] = outputs[0].take();
    };
    run();
    counting::allocations(run)
}

#[test]
fn cumprod_invokes_allocating_only_what_its_kernel_allocates() {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[8, 8]);
    let axis = b.with_data("axis", DType::I32, &[], &1i32.to_le_bytes());
    let y = b.f32("y", &[8, 8]);
    let options = encode_attrs(&[("reverse".to_string(), AttrValue::Bool(true))]).unwrap();
    b.custom_with("Cumprod", &[x, axis], &[y], options);
    b.input(x).output(y);
    let xs: Vec<f32> = (0..64).map(|i| 1.0 + i as f32 / 64.0).collect();
    let (first, later) = count(&b.build(), &xs);
    let kernel = cumprod_kernel_allocations(&xs);
    // The scan kernel reads its axis into a Vec and lists its rows'
    // chunks in another: its own, not the bridge's.
    assert!(
        kernel > 0,
        "the kernel no longer allocates: assert zero below"
    );
    assert_eq!(first, kernel, "the first invoke: the kernel's own");
    assert_eq!(
        later,
        3 * kernel,
        "three invokes, each the kernel's {kernel} allocation(s)"
    );
}
