//! `Example`: doubles its input for every registered dtype (integers wrap),
//! and reports a clear `NotFound` for a dtype the op allows but no kernel
//! implements.

use op_core::{
    Code, Complex, Complex64, Complex128, DType, Element, OpCall, QInt8, QUInt16, Tensor, bf16, f16,
};
use op_kernels::example::{Example, times_two};
use proptest::prelude::*;

mod common;
use common::assert_contains;

/// Runs Example through the typed wrapper and by name, checks dtype, shape
/// and values, and returns nothing.
#[track_caller]
fn check_doubles<T: Element + Copy>(dims: &[usize], input: Vec<T>, expected: Vec<T>) {
    let t = Tensor::from_vec(dims, input).unwrap();
    let out = Example::call(&t).run().unwrap();
    assert_eq!(out.dtype(), T::DTYPE);
    assert_eq!(out.dims(), dims);
    assert_eq!(out.as_slice::<T>().unwrap(), &expected[..]);

    let out = OpCall::new("Example").input(t).run().unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dtype(), T::DTYPE);
    assert_eq!(out[0].dims(), dims);
    assert_eq!(out[0].as_slice::<T>().unwrap(), &expected[..]);
}

#[test]
fn doubles_floats() {
    op_kernels::link();
    check_doubles::<f32>(&[3], vec![1.5, -2.0, 0.0], vec![3.0, -4.0, 0.0]);
    check_doubles::<f64>(
        &[2, 2],
        vec![1.0, 2.0, 3.0, -0.25],
        vec![2.0, 4.0, 6.0, -0.5],
    );
    check_doubles::<f16>(
        &[2],
        vec![f16::from_f32(1.5), f16::from_f32(-3.0)],
        vec![f16::from_f32(3.0), f16::from_f32(-6.0)],
    );
    check_doubles::<bf16>(
        &[2],
        vec![bf16::from_f32(0.5), bf16::from_f32(8.0)],
        vec![bf16::from_f32(1.0), bf16::from_f32(16.0)],
    );
    // Overflow to infinity, as in TensorFlow.
    check_doubles::<f32>(&[1], vec![f32::MAX], vec![f32::INFINITY]);
}

#[test]
fn doubles_integers_with_wrapping() {
    check_doubles::<i8>(&[4], vec![1, -3, 100, -128], vec![2, -6, -56, 0]);
    check_doubles::<u8>(&[3], vec![0, 100, 200], vec![0, 200, 144]);
    check_doubles::<i16>(&[2], vec![20000, -5], vec![-25536, -10]);
    check_doubles::<u16>(&[2], vec![40000, 7], vec![14464, 14]);
    check_doubles::<i32>(&[3], vec![i32::MAX, -1, 21], vec![-2, -2, 42]);
    check_doubles::<u32>(&[2], vec![u32::MAX, 3], vec![u32::MAX - 1, 6]);
    check_doubles::<i64>(&[2], vec![i64::MIN, 1 << 40], vec![0, 1 << 41]);
    check_doubles::<u64>(&[1], vec![u64::MAX], vec![u64::MAX - 1]);
}

#[test]
fn doubles_complex_numbers() {
    check_doubles::<Complex64>(
        &[2],
        vec![Complex::new(1.0, -2.0), Complex::new(0.5, 0.0)],
        vec![Complex::new(2.0, -4.0), Complex::new(1.0, 0.0)],
    );
    check_doubles::<Complex128>(
        &[1, 1],
        vec![Complex::new(-3.0, 4.0)],
        vec![Complex::new(-6.0, 8.0)],
    );
}

#[test]
fn doubles_scalars_and_empty_tensors() {
    let out = Example::call(Tensor::scalar(21i32)).run().unwrap();
    assert_eq!(out.rank(), 0);
    assert_eq!(out.scalar_value::<i32>().unwrap(), 42);
    check_doubles::<f32>(&[0, 3], vec![], vec![]);
}

#[test]
fn every_allowed_real_or_complex_type_has_a_kernel() {
    let registry = op_core::Registry::global();
    let entry = registry.op("Example").unwrap();
    let mut kernel_types: Vec<DType> = entry
        .kernels()
        .iter()
        .filter(|k| k.device == op_core::DeviceType::Cpu)
        .map(|k| {
            assert_eq!(k.constraints.len(), 1);
            assert_eq!(k.constraints[0].attr, "T");
            k.constraints[0].dtype
        })
        .collect();
    kernel_types.sort_by_key(|d| d.enum_value());
    let mut expected: Vec<DType> = op_core::op_spec::dtype::REAL_NUMBER_TYPES.to_vec();
    expected.extend([DType::Complex64, DType::Complex128]);
    expected.sort_by_key(|d| d.enum_value());
    assert_eq!(kernel_types, expected);
}

#[cfg(feature = "gpu")]
#[test]
fn the_gpu_kernel_takes_float_double_int32_and_int64() {
    let registry = op_core::Registry::global();
    let entry = registry.op("Example").unwrap();
    let mut gpu_types: Vec<DType> = entry
        .kernels()
        .iter()
        .filter(|k| k.device == op_core::DeviceType::Gpu)
        .map(|k| k.constraints[0].dtype)
        .collect();
    gpu_types.sort_by_key(|d| d.enum_value());
    assert_eq!(gpu_types, [DType::F32, DType::F64, DType::I32, DType::I64]);
}

#[test]
fn qint8_is_allowed_but_has_no_kernel() {
    let q = Tensor::from_vec([2], vec![QInt8(1), QInt8(-2)]).unwrap();
    let err = Example::call(&q).run().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let text = err.to_string();
    assert_contains(
        &err,
        &[
            "no kernel for op 'Example' on device 'cpu' with attrs T=qint8",
            "registered kernels:",
            "device='cpu'; T=float",
            "device='cpu'; T=int8",
            "device='cpu'; T=complex128",
            "example::<f32>",
            // Every kernel is one constraint away, so none is singled out.
            "kernels on 'cpu' cover T in {float, double, int32,",
            "complex128, half, uint32, uint64}",
        ],
    );
    // One line per kernel: 12 real types and 2 complex ones.
    assert_eq!(text.matches("\n    device='cpu'; T=").count(), 14, "{text}");

    let err = OpCall::new("Example").input(&q).run().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["no kernel for op 'Example'", "T=qint8"]);

    let err = Example::call(Tensor::from_vec([1], vec![QUInt16(3)]).unwrap())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["T=quint16"]);
}

#[test]
fn non_numeric_types_are_not_allowed() {
    for t in [
        Tensor::scalar(true),
        Tensor::string("12"),
        Tensor::from_vec([2], vec![false, true]).unwrap(),
    ] {
        let dtype = t.dtype();
        let err = Example::call(t).run().unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err}");
        assert_contains(
            &err,
            &[
                "op Example",
                "input 'input'",
                &dtype.to_string(),
                "attr 'T'",
            ],
        );
    }
}

#[test]
fn wrong_number_of_inputs_is_rejected() {
    let t = Tensor::scalar(1.0f32);
    let err = OpCall::new("Example")
        .input(&t)
        .input(&t)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["op Example", "expects 1 input(s) (input), got 2"]);

    let err = OpCall::new("Example").input_list([&t]).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["op Example", "input 'input'", "single tensor"]);
}

#[test]
fn the_output_is_a_new_buffer_and_the_input_is_unchanged() {
    let t = Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap();
    let out = Example::call(&t).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [2, 4, 6]);
    assert_eq!(t.as_slice::<i32>().unwrap(), [1, 2, 3]);
}

#[test]
fn the_functor_doubles_a_slice() {
    assert_eq!(times_two(&[1i8, 64, -64]), [2, -128, -128]);
    assert_eq!(times_two::<f64>(&[]), Vec::<f64>::new());
}

proptest! {
    #[test]
    fn f32_output_is_twice_the_input(values in proptest::collection::vec(any::<f32>(), 0..64)) {
        let t = Tensor::from_vec([values.len()], values.clone()).unwrap();
        let out = Example::call(&t).run().unwrap();
        prop_assert_eq!(out.dtype(), DType::F32);
        prop_assert_eq!(out.dims(), &[values.len()]);
        for (got, x) in out.as_slice::<f32>().unwrap().iter().zip(&values) {
            let want = 2.0 * x;
            prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "2 * {} = {}, got {}", x, want, got);
        }
    }

    #[test]
    fn i32_output_is_twice_the_input(
        values in proptest::collection::vec(any::<i32>(), 0..64),
        rows in 1usize..4,
    ) {
        let len = values.len() / rows * rows;
        let values = values[..len].to_vec();
        let t = Tensor::from_vec([rows, len / rows], values.clone()).unwrap();
        let out = OpCall::new("Example").input(t).run().unwrap();
        let expected: Vec<i32> = values.iter().map(|x| x.wrapping_mul(2)).collect();
        prop_assert_eq!(out[0].dims(), &[rows, len / rows]);
        prop_assert_eq!(out[0].as_slice::<i32>().unwrap(), &expected[..]);
    }
}

#[test]
fn a_handed_over_input_is_doubled_in_place_and_a_shared_one_is_kept() {
    let input = Tensor::from_vec([1000], vec![1.5f32; 1000]).unwrap();
    let ptr = input.as_slice::<f32>().unwrap().as_ptr();
    let doubled = Example::call(&input).run().unwrap();
    assert_ne!(doubled.as_slice::<f32>().unwrap().as_ptr(), ptr);
    assert_eq!(input.as_slice::<f32>().unwrap()[0], 1.5);
    let in_place = Example::call(input).run().unwrap();
    assert_eq!(in_place.as_slice::<f32>().unwrap().as_ptr(), ptr);
    assert_eq!(in_place, doubled);
}

/// A runtime's settings apply to the ops it prepared before they changed:
/// the builder methods forget those ops rather than leave them on the old
/// allocator.
#[test]
fn a_new_allocator_applies_to_ops_prepared_before_it() {
    use op_core::allocator::{AllocatorConfig, HostAllocator};
    let x = Tensor::from_vec([1024], vec![1.0f32; 1024]).unwrap();
    let first = HostAllocator::new(AllocatorConfig::default());
    let runtime = op_core::Runtime::new().with_allocator(first.clone());
    // `&x` is shared, so the kernel allocates its output.
    let y = Example::call(&x).run_on(&runtime).unwrap();
    assert_eq!(first.stats().bytes_in_use, 4096);
    drop(y);

    let second = HostAllocator::new(AllocatorConfig::default());
    let runtime = runtime.with_allocator(second.clone());
    let y = Example::call(&x).run_on(&runtime).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap()[0], 2.0);
    assert_eq!(
        second.stats().bytes_in_use,
        4096,
        "the op kept the old allocator"
    );
    assert_eq!(first.stats().bytes_in_use, 0);
}
