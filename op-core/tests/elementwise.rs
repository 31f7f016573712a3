//! The elementwise helpers of `KernelContext` (`unary`, `unary_to`,
//! `try_unary_to`, `binary`, `ternary`), intra-op threads, and what kernels
//! see of the allocator: forwarding, splitting work, panics and errors in
//! blocks, sizes past the limit.

use std::sync::Arc;

use op_core::allocator::{AllocatorConfig, HostAllocator};
use op_core::threads::ThreadPool;
use op_core::{Code, Error, KernelContext, OpCall, Result, Runtime, Tensor, kernel, register_op};

/// `y = x + 1` on floats (`unary`: in place when handed over).
#[register_op(
    name = "Ew>AddOne",
    inputs("x: float"),
    outputs("y: float"),
    shape = "unchanged"
)]
struct AddOne;

#[kernel(op = AddOne)]
fn add_one(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| x + 1.0)
}

/// `y = x as f64` (`unary_to`).
#[register_op(
    name = "Ew>Widen",
    inputs("x: int32"),
    outputs("y: double"),
    shape = "unchanged"
)]
struct Widen;

#[kernel(op = Widen)]
fn widen(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary_to(0, 0, 1, |x: &i32| f64::from(*x))
}

/// `y = 100 / x` on int32, an error for a zero (`try_unary_to`).
#[register_op(
    name = "Ew>Divide",
    inputs("x: int32"),
    outputs("y: int32"),
    shape = "unchanged"
)]
struct Divide;

#[kernel(op = Divide)]
fn divide(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.try_unary_to(0, 0, 5, |x: &i32| {
        100i32
            .checked_div(*x)
            .ok_or_else(|| Error::invalid_argument(format!("cannot divide by {x}")))
    })
}

/// `z = x * y` (`binary`).
#[register_op(
    name = "Ew>Mul",
    inputs("x: float", "y: float"),
    outputs("z: float"),
    shape = "merge_inputs"
)]
struct Mul;

#[kernel(op = Mul)]
fn mul(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.binary([0, 1], 0, 1, |x: &f32, y: &f32| x * y)
}

/// `out = c ? a : b` on strings (`ternary`, a type that is not plain).
#[register_op(
    name = "Ew>Pick",
    inputs("c: bool", "a: string", "b: string"),
    outputs("out: string"),
    shape = "merge_inputs"
)]
struct Pick;

#[kernel(op = Pick)]
fn pick(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.ternary(
        [0, 1, 2],
        0,
        3,
        |c: &bool, a: &Vec<u8>, b: &Vec<u8>| {
            if *c { a.clone() } else { b.clone() }
        },
    )
}

/// Panics at element `x == 12345` (in one block of many).
#[register_op(
    name = "Ew>PanicAt",
    inputs("x: float"),
    outputs("y: float"),
    shape = "unchanged"
)]
struct PanicAt;

#[kernel(op = PanicAt)]
fn panic_at(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1000, |x: &f32| {
        assert!(*x != 12345.0, "element 12345 is cursed");
        *x
    })
}

/// A vector of `n` zeros, through `allocate_output`.
#[register_op(name = "Ew>Zeros", inputs("n: int64"), outputs("zeros: float"))]
struct Zeros;

#[kernel(op = Zeros)]
fn zeros(ctx: &mut KernelContext<'_>) -> Result<()> {
    let n = ctx.input_scalar::<i64>(0)?;
    let dims = [usize::try_from(n).unwrap_or(usize::MAX), 2];
    ctx.allocate_output(0, &dims)?;
    Ok(())
}

fn two_threads() -> Runtime {
    Runtime::new().with_threads(Arc::new(ThreadPool::new(2).unwrap()))
}

fn run(runtime: &Runtime, op: &str, inputs: Vec<Tensor>) -> Result<Tensor> {
    let mut call = OpCall::new(op);
    for input in inputs {
        call = call.input(input);
    }
    Ok(call.run_on(runtime)?.remove(0))
}

fn floats(n: usize) -> Tensor {
    Tensor::from_vec([n], (0..n).map(|i| i as f32).collect()).unwrap()
}

#[test]
fn unary_works_in_place_on_a_handed_over_input_and_leaves_a_shared_one_alone() {
    let runtime = Runtime::new();
    let input = floats(1000);
    let ptr = input.as_slice::<f32>().unwrap().as_ptr();

    let shared = run(&runtime, "Ew>AddOne", vec![input.clone()]).unwrap();
    assert_ne!(shared.as_slice::<f32>().unwrap().as_ptr(), ptr);
    assert_eq!(
        input.as_slice::<f32>().unwrap()[7],
        7.0,
        "the input is unchanged"
    );
    assert_eq!(shared.as_slice::<f32>().unwrap()[7], 8.0);

    let moved = run(&runtime, "Ew>AddOne", vec![input]).unwrap();
    assert_eq!(moved.as_slice::<f32>().unwrap().as_ptr(), ptr, "forwarded");
    assert_eq!(moved.as_slice::<f32>().unwrap()[7], 8.0);
}

#[test]
fn split_work_gives_the_single_threaded_result_for_every_helper() {
    let one = Runtime::new().with_threads(Arc::new(ThreadPool::single()));
    let two = two_threads();
    let n = 100_003; // not a multiple of any block size
    let ints = Tensor::from_vec([n], (0..n as i32).map(|i| i % 97 + 1).collect()).unwrap();
    let cond = Tensor::from_vec([n], (0..n).map(|i| i % 3 == 0).collect()).unwrap();
    let a = Tensor::strings([n], (0..n).map(|i| format!("a{i}"))).unwrap();
    let b = Tensor::strings([n], (0..n).map(|i| format!("b{i}"))).unwrap();
    let calls: [(&str, Vec<Tensor>); 5] = [
        ("Ew>AddOne", vec![floats(n)]),
        ("Ew>Widen", vec![ints.clone()]),
        ("Ew>Divide", vec![ints]),
        ("Ew>Mul", vec![floats(n), floats(n)]),
        ("Ew>Pick", vec![cond, a, b]),
    ];
    for (op, inputs) in calls {
        let expected = run(&one, op, inputs.clone()).unwrap();
        let got = run(&two, op, inputs).unwrap();
        assert_eq!(got, expected, "{op}");
        assert_eq!(got.dims(), [n], "{op}");
    }
    let picked = run(
        &two,
        "Ew>Pick",
        vec![
            Tensor::from_vec([2], vec![true, false]).unwrap(),
            Tensor::strings([2], ["x", "y"]).unwrap(),
            Tensor::strings([2], ["p", "q"]).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(picked, Tensor::strings([2], ["x", "q"]).unwrap());
}

#[test]
fn the_first_failing_element_is_the_error_however_the_work_is_split() {
    for runtime in [
        Runtime::new().with_threads(Arc::new(ThreadPool::single())),
        two_threads(),
    ] {
        let mut values = vec![1i32; 200_000];
        values[150_000] = 0;
        values[10] = 0;
        values[11] = 0;
        let err = run(
            &runtime,
            "Ew>Divide",
            vec![Tensor::from_vec([200_000], values).unwrap()],
        )
        .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert_eq!(err.message(), "cannot divide by 0");
    }
}

#[test]
fn a_panic_in_one_block_is_an_internal_error_and_the_pool_stays_usable() {
    let runtime = two_threads();
    let n = 1_000_000;
    let err = run(&runtime, "Ew>PanicAt", vec![floats(n)]).unwrap_err();
    assert_eq!(err.code(), Code::Internal, "{err}");
    assert!(err.message().contains("element 12345 is cursed"), "{err}");
    assert!(
        err.to_string()
            .contains("in kernel panic_at of op Ew>PanicAt"),
        "{err}"
    );
    // The same pool, again, many times.
    for _ in 0..20 {
        let out = run(&runtime, "Ew>AddOne", vec![floats(n)]).unwrap();
        assert_eq!(out.as_slice::<f32>().unwrap()[n - 1], n as f32);
    }
    assert!(run(&runtime, "Ew>PanicAt", vec![floats(n)]).is_err());
}

#[test]
fn inputs_of_different_shapes_are_an_error_naming_both() {
    let err = run(&Runtime::new(), "Ew>Mul", vec![floats(3), floats(4)]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "op Ew>Mul (node 'Ew>Mul'): input 0 ('x') and input 1 ('y') must have the same shape, but they have shapes [3] and [4]"
    );
}

#[test]
fn an_output_too_big_to_count_or_to_hold_is_an_error_naming_op_output_and_shape() {
    let limited = HostAllocator::new(AllocatorConfig::default().max_tensor_bytes(1 << 20));
    let runtime = Runtime::new().with_allocator(limited);
    // 2^62 * 2 elements do not fit in a usize: InvalidArgument.
    let err = run(&runtime, "Ew>Zeros", vec![Tensor::scalar(1i64 << 62)]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(
        err.message().starts_with(
            "op Ew>Zeros (node 'Ew>Zeros'): output 0 ('zeros'): shape [4611686018427387904,2] has too many elements"
        ),
        "{err}"
    );
    // 2^40 floats fit in a usize but not under the 1 MiB limit.
    let err = run(&runtime, "Ew>Zeros", vec![Tensor::scalar(1i64 << 40)]).unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err}");
    assert!(
        err.message().starts_with(
            "op Ew>Zeros (node 'Ew>Zeros'): output 0 ('zeros'): allocating a float tensor of shape [1099511627776,2]: 8796093022208 bytes is more than"
        ),
        "{err}"
    );
    // Under the limit: fine, and zeros.
    let out = run(&runtime, "Ew>Zeros", vec![Tensor::scalar(1000i64)]).unwrap();
    assert!(out.as_slice::<f32>().unwrap().iter().all(|v| *v == 0.0));
    // A 2-element output past a 4-byte limit comes from the elementwise path.
    let tiny = Runtime::new().with_allocator(HostAllocator::new(
        AllocatorConfig::default().max_tensor_bytes(4),
    ));
    let err = run(
        &tiny,
        "Ew>Widen",
        vec![Tensor::from_vec([2], vec![1i32, 2]).unwrap()],
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err}");
    assert!(
        err.message().starts_with(
            "op Ew>Widen (node 'Ew>Widen'): output 0 ('y'): allocating a double tensor of shape [2]"
        ),
        "{err}"
    );
}

#[test]
fn a_steady_loop_reuses_its_output_buffers() {
    let alloc = HostAllocator::new(AllocatorConfig::default());
    let runtime = Runtime::new().with_allocator(alloc.clone());
    let input = floats(1_000_000);
    let warm = run(&runtime, "Ew>AddOne", vec![input.clone()]).unwrap();
    drop(warm);
    let before = alloc.stats();
    for _ in 0..50 {
        let out = run(&runtime, "Ew>AddOne", vec![input.clone()]).unwrap();
        assert_eq!(out.as_slice::<f32>().unwrap()[999_999], 1_000_000.0);
    }
    let after = alloc.stats();
    assert_eq!(after.misses, before.misses, "no new buffer after the first");
    assert_eq!(after.hits, before.hits + 50);
    assert_eq!(after.bytes_in_use, 0);
    assert_eq!(after.bytes_cached, 4 << 20, "one 4 MB buffer, kept");
}
