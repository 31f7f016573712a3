//! Tests of `Tensor`: construction, typed access, sharing and copying.

use ndarray::{ArrayD, IxDyn, array};
use op_core::{
    Code, Complex64, Complex128, DType, Element, QInt8, QInt16, QInt32, QUInt8, QUInt16,
    ResourceHandle, Tensor, TensorShape, bf16, f16,
};
use proptest::prelude::*;

/// Builds a tensor from a shape and a list of values, panicking on error.
macro_rules! tensor {
    ($shape:expr, [$($value:expr),* $(,)?]) => {
        Tensor::from_vec($shape, vec![$($value),*]).unwrap()
    };
}

/// Checks construction and every typed accessor for one element type, with
/// `values` (four distinct values).
fn check_element<T: Element>(values: [T; 4]) {
    let mut t = Tensor::from_vec([2, 2], values.to_vec()).unwrap();
    assert_eq!(t.dtype(), T::DTYPE);
    assert_eq!(t.dims(), [2, 2]);
    assert_eq!(t.shape(), TensorShape::matrix(2, 2));
    assert_eq!(t.num_elements(), 4);
    assert_eq!(t.view::<T>().unwrap()[[1, 0]], values[2]);
    assert_eq!(t.as_slice::<T>().unwrap(), values);

    t.view_mut::<T>().unwrap()[[0, 0]] = values[3].clone();
    t.as_slice_mut::<T>().unwrap()[3] = values[0].clone();
    let expected = [
        values[3].clone(),
        values[1].clone(),
        values[2].clone(),
        values[0].clone(),
    ];
    assert_eq!(t.as_slice::<T>().unwrap(), expected);
    let array = t.clone().into_array::<T>().unwrap();
    assert_eq!(array.shape(), [2, 2]);
    assert_eq!(array.as_slice().unwrap(), expected);

    let scalar = Tensor::scalar(values[1].clone());
    assert_eq!(scalar.dtype(), T::DTYPE);
    assert_eq!(scalar.scalar_value::<T>().unwrap(), values[1]);

    let zeros = Tensor::zeros(T::DTYPE, [3]).unwrap();
    assert_eq!(zeros.as_slice::<T>().unwrap(), vec![T::default(); 3]);

    // Asking for any other element type is an error.
    if T::DTYPE != DType::Bool {
        assert!(t.view::<bool>().is_err());
    } else {
        assert!(t.view::<f32>().is_err());
    }
}

#[test]
fn every_element_type_is_constructible_and_viewable() {
    check_element([1.5f32, -2.0, 3.25, 4.0]);
    check_element([1.5f64, -2.0, 3.25, 4.0]);
    check_element([1.5, -2.0, 3.25, 4.0].map(f16::from_f32));
    check_element([1.5, -2.0, 3.25, 4.0].map(bf16::from_f32));
    check_element([1i8, -2, 3, i8::MIN]);
    check_element([1i16, -2, 3, i16::MAX]);
    check_element([1i32, -2, 3, i32::MIN]);
    check_element([1i64, -2, 3, i64::MAX]);
    check_element([1u8, 2, 3, u8::MAX]);
    check_element([1u16, 2, 3, u16::MAX]);
    check_element([1u32, 2, 3, u32::MAX]);
    check_element([1u64, 2, 3, u64::MAX]);
    check_element([true, false, false, true]);
    check_element([1.0, 2.0, -3.0, 0.5].map(|re| Complex64::new(re, -re)));
    check_element([1.0, 2.0, -3.0, 0.5].map(|re| Complex128::new(re, 2.0 * re)));
    check_element([
        b"a".to_vec(),
        vec![],
        b"\xff\x00".to_vec(),
        b"long string".to_vec(),
    ]);
    check_element([1, -2, 3, 4].map(QInt8));
    check_element([1, 2, 3, 4].map(QUInt8));
    check_element([1, -2, 3, 4].map(QInt16));
    check_element([1, 2, 3, 4].map(QUInt16));
    check_element([1, -2, 3, 4].map(QInt32));
    check_element(
        ["a", "b", "c", "d"].map(|name| ResourceHandle::new(op_core::Device::CPU, "", name, "Var")),
    );
}

#[test]
fn element_dtypes_cover_every_dtype_but_variant() {
    let dtypes = [
        f32::DTYPE,
        f64::DTYPE,
        f16::DTYPE,
        bf16::DTYPE,
        i8::DTYPE,
        i16::DTYPE,
        i32::DTYPE,
        i64::DTYPE,
        u8::DTYPE,
        u16::DTYPE,
        u32::DTYPE,
        u64::DTYPE,
        bool::DTYPE,
        Complex64::DTYPE,
        Complex128::DTYPE,
        <Vec<u8>>::DTYPE,
        QInt8::DTYPE,
        QUInt8::DTYPE,
        QInt16::DTYPE,
        QUInt16::DTYPE,
        QInt32::DTYPE,
        ResourceHandle::DTYPE,
    ];
    for &dtype in op_spec::dtype::ALL_TYPES {
        let count = dtypes.iter().filter(|&&d| d == dtype).count();
        let expected = usize::from(dtype != DType::Variant);
        assert_eq!(count, expected, "{dtype}");
    }
}

#[test]
fn zeros_for_every_dtype_but_variant() {
    for &dtype in op_spec::dtype::ALL_TYPES {
        let result = Tensor::zeros(dtype, [2, 0, 3]);
        if dtype == DType::Variant {
            let err = result.unwrap_err();
            assert_eq!(err.code(), Code::Unimplemented);
            assert_eq!(err.message(), "tensors of dtype variant are not supported");
            continue;
        }
        let t = result.unwrap();
        assert_eq!(t.dtype(), dtype);
        assert_eq!(t.dims(), [2, 0, 3]);
        assert_eq!(t.num_elements(), 0);
        let scalar = Tensor::zeros(dtype, TensorShape::scalar()).unwrap();
        assert_eq!(scalar.rank(), 0);
        assert_eq!(scalar.num_elements(), 1);
    }
    let t = Tensor::zeros(DType::I32, [2, 2]).unwrap();
    assert_eq!(t.as_slice::<i32>().unwrap(), [0; 4]);
    let t = Tensor::zeros(DType::String, [1]).unwrap();
    assert_eq!(t.as_slice::<Vec<u8>>().unwrap(), [Vec::<u8>::new()]);
}

#[test]
fn from_array_and_into_array_do_not_copy() {
    let array = ArrayD::from_shape_vec(IxDyn(&[2, 3]), (0..6).map(|x| x as f32).collect()).unwrap();
    let ptr = array.as_ptr();
    let t = Tensor::from_array(array);
    assert!(t.is_unique());
    assert!(!t.is_shared());
    assert_eq!(t.view::<f32>().unwrap().as_ptr(), ptr);
    assert_eq!(t.as_slice::<f32>().unwrap().as_ptr(), ptr);
    let back = t.into_array::<f32>().unwrap();
    assert_eq!(back.as_ptr(), ptr);
    assert_eq!(back.shape(), [2, 3]);

    // `From` and fixed-dimension arrays too.
    let array = array![[1u8, 2], [3, 4]];
    let ptr = array.as_ptr();
    let t = Tensor::from(array);
    assert_eq!(t.as_slice::<u8>().unwrap().as_ptr(), ptr);
}

#[test]
fn from_vec_does_not_copy() {
    let data = vec![1i64, 2, 3];
    let ptr = data.as_ptr();
    let t = Tensor::from_vec([3], data).unwrap();
    assert_eq!(t.as_slice::<i64>().unwrap().as_ptr(), ptr);
}

#[test]
fn clones_share_the_buffer_and_writes_copy_on_write() {
    let mut a = tensor!([2], [1i32, 2]);
    let ptr = a.as_slice::<i32>().unwrap().as_ptr();
    let b = a.clone();
    assert!(a.is_shared() && b.is_shared());
    assert_eq!(b.as_slice::<i32>().unwrap().as_ptr(), ptr);

    a.view_mut::<i32>().unwrap()[[0]] = 10;
    assert_eq!(a.as_slice::<i32>().unwrap(), [10, 2]);
    assert_eq!(b.as_slice::<i32>().unwrap(), [1, 2]);
    assert!(a.is_unique() && b.is_unique());
    assert_ne!(a.as_slice::<i32>().unwrap().as_ptr(), ptr);
    assert_eq!(b.as_slice::<i32>().unwrap().as_ptr(), ptr);

    // into_array copies only while shared.
    let c = b.clone();
    let owned = b.into_array::<i32>().unwrap();
    assert_ne!(owned.as_ptr(), ptr);
    assert_eq!(c.into_array::<i32>().unwrap().as_ptr(), ptr);
}

#[test]
fn into_shared_and_from_shared_do_not_copy() {
    let t = tensor!([3], [1u16, 2, 3]);
    let ptr = t.as_slice::<u16>().unwrap().as_ptr();
    let shared = t.into_shared::<u16>().unwrap();
    assert_eq!(shared.as_ptr(), ptr);
    let t = Tensor::from(shared.clone());
    assert!(t.is_shared());
    assert_eq!(t.as_slice::<u16>().unwrap().as_ptr(), ptr);
}

#[test]
fn non_standard_layouts_are_copied_into_standard_layout() {
    let transposed = array![[1, 2, 3], [4, 5, 6]].reversed_axes();
    let t = Tensor::from_array(transposed);
    assert_eq!(t.dims(), [3, 2]);
    assert_eq!(t.as_slice::<i32>().unwrap(), [1, 4, 2, 5, 3, 6]);

    let strided = array![1.0f64, 2.0, 3.0, 4.0].slice_move(ndarray::s![..;2]);
    let t = Tensor::from(strided);
    assert_eq!(t.as_slice::<f64>().unwrap(), [1.0, 3.0]);
}

#[test]
fn wrong_dtype_is_an_error_naming_both_dtypes() {
    let mut t = tensor!([2], [1i32, 2]);
    let expected = "tensor has dtype int32 but float was requested";
    for err in [
        t.view::<f32>().unwrap_err(),
        t.as_slice::<f32>().unwrap_err(),
        t.scalar_value::<f32>().unwrap_err(),
        t.view_mut::<f32>().unwrap_err(),
        t.as_slice_mut::<f32>().unwrap_err(),
        t.clone().into_array::<f32>().unwrap_err(),
        t.clone().into_shared::<f32>().unwrap_err(),
    ] {
        assert_eq!(err.code(), Code::InvalidArgument);
        assert_eq!(err.message(), expected);
    }
    let err = Tensor::string("x").view::<f16>().unwrap_err();
    assert_eq!(
        err.message(),
        "tensor has dtype string but half was requested"
    );
}

#[test]
fn scalars() {
    let t = Tensor::scalar(2.5f32);
    assert_eq!(t.rank(), 0);
    assert_eq!(t.dims(), [] as [usize; 0]);
    assert_eq!(t.shape(), TensorShape::scalar());
    assert_eq!(t.num_elements(), 1);
    assert_eq!(t.scalar_value::<f32>().unwrap(), 2.5);
    assert_eq!(t.view::<f32>().unwrap()[[]], 2.5);
    assert_eq!(t, Tensor::from_vec([], vec![2.5f32]).unwrap());

    for shape in [vec![1], vec![1, 1], vec![0], vec![3]] {
        let t = Tensor::zeros(DType::F32, shape.clone()).unwrap();
        let err = t.scalar_value::<f32>().unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert_eq!(
            err.message(),
            format!(
                "expected a scalar tensor but got shape {}",
                TensorShape::new(shape)
            )
        );
    }
}

#[test]
fn strings_are_bytes() {
    let t = Tensor::string("héllo");
    assert_eq!(t.dtype(), DType::String);
    assert_eq!(t.scalar_value::<Vec<u8>>().unwrap(), "héllo".as_bytes());

    let t = Tensor::strings([2, 1], [&b"\xff"[..], b"ok"]).unwrap();
    assert_eq!(
        t.as_slice::<Vec<u8>>().unwrap(),
        [vec![0xff], b"ok".to_vec()]
    );
    let t = Tensor::strings([2], vec![String::from("a"), String::from("b")]).unwrap();
    assert_eq!(t.num_elements(), 2);
    assert!(Tensor::strings([3], ["a"]).is_err());
}

#[test]
fn shape_mismatch_is_an_error_naming_both() {
    let err = Tensor::from_vec([2, 3], vec![0.0f32; 5]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "shape [2,3] has 6 elements but 5 values were given"
    );
    let err = Tensor::from_vec([], Vec::<f32>::new()).unwrap_err();
    assert_eq!(
        err.message(),
        "shape [] has 1 elements but 0 values were given"
    );
    assert!(Tensor::from_vec([0, 4], Vec::<f32>::new()).is_ok());
}

#[test]
fn reshape_shares_the_buffer() {
    let t = tensor!([2, 3], [1, 2, 3, 4, 5, 6]);
    let r = t.reshape([3, 1, 2]).unwrap();
    assert_eq!(r.dims(), [3, 1, 2]);
    assert_eq!(r.view::<i32>().unwrap()[[2, 0, 1]], 6);
    assert_eq!(
        r.as_slice::<i32>().unwrap().as_ptr(),
        t.as_slice::<i32>().unwrap().as_ptr()
    );
    let err = t.reshape([4]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "cannot reshape a tensor of shape [2,3] (6 elements) to shape [4] (4 elements)"
    );
}

#[test]
fn equality_compares_dtype_shape_and_values() {
    let a = tensor!([2], [1i32, 2]);
    assert_eq!(a, tensor!([2], [1i32, 2]));
    assert_ne!(a, tensor!([2], [1i32, 3]));
    assert_ne!(a, tensor!([2, 1], [1i32, 2]));
    assert_ne!(a, tensor!([2], [1i64, 2]));
}

#[test]
fn debug_shows_dtype_shape_and_first_values() {
    let t = tensor!([2, 2], [1i32, 2, 3, 4]);
    assert_eq!(
        format!("{t:?}"),
        "Tensor { dtype: int32, shape: [2,2], values: [1, 2, 3, 4] }"
    );
    let t = Tensor::zeros(DType::F32, [20]).unwrap();
    assert_eq!(
        format!("{t:?}"),
        format!(
            "Tensor {{ dtype: float, shape: [20], values: [{}, ...] }}",
            vec!["0.0"; 16].join(", ")
        )
    );
    let t = Tensor::strings([2], ["a\"b", "\u{7f}"]).unwrap();
    assert_eq!(
        format!("{t:?}"),
        r#"Tensor { dtype: string, shape: [2], values: ["a\"b", "\x7f"] }"#
    );
    assert_eq!(
        format!("{:?}", Tensor::scalar(QInt8(-3))),
        "Tensor { dtype: qint8, shape: [], values: [QInt8(-3)] }"
    );
}

#[test]
fn tensors_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Tensor>();
}

/// A shape with at most 4 dims of up to 5 elements each.
fn small_shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..5, 0..=4)
}

proptest! {
    #[test]
    fn from_vec_view_into_array_round_trip(
        (dims, data) in small_shape().prop_flat_map(|dims| {
            let n = dims.iter().product::<usize>();
            (Just(dims), prop::collection::vec(any::<i32>(), n))
        })
    ) {
        let copy = data.clone();
        let ptr = copy.as_ptr();
        let t = Tensor::from_vec(dims.clone(), copy).unwrap();
        prop_assert_eq!(t.dims(), &dims[..]);
        prop_assert_eq!(t.num_elements(), data.len());
        prop_assert_eq!(t.as_slice::<i32>().unwrap(), &data[..]);
        let view = t.view::<i32>().unwrap();
        prop_assert_eq!(view.shape(), &dims[..]);
        prop_assert_eq!(view.iter().copied().collect::<Vec<_>>(), data.clone());
        drop(view);
        let array = t.into_array::<i32>().unwrap();
        prop_assert_eq!(array.shape(), &dims[..]);
        if !data.is_empty() {
            prop_assert_eq!(array.as_ptr(), ptr);
        }
        prop_assert_eq!(array.into_raw_vec_and_offset().0, data);
    }

    #[test]
    fn from_vec_rejects_wrong_lengths(dims in small_shape(), len in 0usize..700) {
        let n: usize = dims.iter().product();
        let result = Tensor::from_vec(dims, vec![0u8; len]);
        prop_assert_eq!(result.is_ok(), n == len);
    }

    #[test]
    fn zeros_have_the_shape(dims in small_shape()) {
        let t = Tensor::zeros(DType::F64, dims.clone()).unwrap();
        prop_assert_eq!(t.shape(), TensorShape::new(dims.clone()));
        prop_assert!(t.as_slice::<f64>().unwrap().iter().all(|&x| x == 0.0));
        prop_assert_eq!(t.num_elements(), TensorShape::new(dims).num_elements());
    }
}

/// Builds, views, clones, mutates (copy-on-write), converts and drops
/// tensors of `T` of shape `dims` holding `values`: once over a `Vec`
/// handed over (`from_vec`) and once over memory from the allocator
/// (`zeros`, then written), which is inline for small tensors and a cached
/// block for large ones.
fn check_lifecycle<T: Element>(dims: &[usize], values: Vec<T>) -> Result<(), TestCaseError> {
    let n = values.len();
    let from_vec = Tensor::from_vec(dims, values.clone()).unwrap();
    let mut allocated = Tensor::zeros(T::DTYPE, dims).unwrap();
    prop_assert!(
        allocated
            .as_slice::<T>()
            .unwrap()
            .iter()
            .all(|v| *v == T::default())
    );
    allocated
        .as_slice_mut::<T>()
        .unwrap()
        .clone_from_slice(&values);

    // Allocated plain tensors of at most 8 bytes live inside the tensor, so
    // their clones are copies rather than shares. (`bool` is not plain: not
    // every byte is a valid `bool`, so it lives in a `Vec`.)
    let allocated_is_small =
        T::DTYPE != DType::Bool && T::DTYPE.size_of().is_some_and(|size| size * n <= 8);
    for (t, small) in [(from_vec, false), (allocated, allocated_is_small)] {
        prop_assert_eq!(t.dtype(), T::DTYPE);
        prop_assert_eq!(t.dims(), dims);
        prop_assert_eq!(t.num_elements(), n);
        prop_assert_eq!(t.as_slice::<T>().unwrap(), &values[..]);
        let view = t.view::<T>().unwrap();
        prop_assert_eq!(view.shape(), dims);
        prop_assert!(view.iter().eq(values.iter()));
        drop(view);

        // Clones share (or, small, copy); a write copies, and only the
        // writer changes.
        let mut clone = t.clone();
        if small {
            prop_assert!(!t.is_shared() && !clone.is_shared());
            prop_assert!(t.is_unique() && clone.is_unique());
            if n > 0 {
                prop_assert_ne!(
                    clone.as_slice::<T>().unwrap().as_ptr(),
                    t.as_slice::<T>().unwrap().as_ptr()
                );
            }
        } else {
            prop_assert!(t.is_shared() && clone.is_shared());
            prop_assert_eq!(
                clone.as_slice::<T>().unwrap().as_ptr(),
                t.as_slice::<T>().unwrap().as_ptr()
            );
        }
        if let (Some(first), Some(last)) = (values.first(), values.last()) {
            clone.as_slice_mut::<T>().unwrap()[0] = last.clone();
            prop_assert!(clone.is_unique() && t.is_unique());
            prop_assert_eq!(&t.as_slice::<T>().unwrap()[0], first);
            prop_assert_eq!(&clone.as_slice::<T>().unwrap()[0], last);
            prop_assert_eq!(&clone.as_slice::<T>().unwrap()[1..], &values[1..]);
        }
        prop_assert_eq!(clone.dims(), dims);

        // An identity of its own (a tape's way to tell values apart),
        // small tensors included: the same value, an identity that clones
        // and reshapes share, and that a write takes away.
        let mut own = t.clone();
        own.make_distinct().unwrap();
        prop_assert_eq!(&own, &t);
        prop_assert!(own.identity().is_some());
        prop_assert_ne!(own.identity(), t.identity());
        prop_assert_eq!(own.clone().identity(), own.identity());
        prop_assert_eq!(own.reshape([n]).unwrap().identity(), own.identity());
        let mut written = own.clone();
        written.as_slice_mut::<T>().unwrap();
        prop_assert_ne!(written.identity(), own.identity());
        // Alone in its buffer, a tensor keeps its identity; one held inside
        // the tensor (whose copies may be anywhere: a copy of a small
        // buffer is held so too) gets another.
        let in_buffer = own.buffer_address().is_some();
        let before = own.identity();
        own.make_distinct().unwrap();
        prop_assert_eq!(own.identity() == before, in_buffer);

        // Reshapes share the buffer and keep the values.
        let flat = t.reshape([n]).unwrap();
        prop_assert_eq!(flat.as_slice::<T>().unwrap(), &values[..]);
        prop_assert_eq!(flat.reshape(dims).unwrap(), t.clone());

        // Arrays out and back.
        let array = t.clone().into_array::<T>().unwrap();
        prop_assert_eq!(array.shape(), dims);
        prop_assert!(array.iter().eq(values.iter()));
        prop_assert_eq!(Tensor::from_array(array), t.clone());
        let shared = t.clone().into_shared::<T>().unwrap();
        prop_assert_eq!(Tensor::from_shared(shared), t);
    }
    Ok(())
}

/// A shape of rank 0 to 6 (4 under Miri; zero-size dims included) and `n` values of
/// `strategy`, `n` its element count.
fn shape_and_values<S: Strategy + Clone>(
    strategy: S,
) -> impl Strategy<Value = (Vec<usize>, Vec<S::Value>)> {
    let (max_dim, max_rank) = if cfg!(miri) { (3, 4) } else { (4, 6) };
    prop::collection::vec(0usize..max_dim, 0..=max_rank).prop_flat_map(move |dims| {
        let n = dims.iter().product::<usize>();
        (Just(dims), prop::collection::vec(strategy.clone(), n))
    })
}

proptest! {
    // Miri interprets about a thousand times slower: a few cases there.
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 1 } else { 64 }))]

    #[test]
    fn every_dtype_lives_and_dies_well((dims, values) in shape_and_values(any::<u8>())) {
        let n = values.len();
        let floats: Vec<f32> = values.iter().map(|v| f32::from(*v) - 100.5).collect();
        check_lifecycle(&dims, floats.clone())?;
        check_lifecycle(&dims, floats.iter().map(|v| f64::from(*v) * 1e300).collect())?;
        check_lifecycle(&dims, floats.iter().map(|v| f16::from_f32(*v)).collect())?;
        check_lifecycle(&dims, floats.iter().map(|v| bf16::from_f32(*v)).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| *v as i8).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| i16::from(*v).wrapping_mul(-300)).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| i32::from(*v) << 20).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| i64::from(*v) << 50).collect())?;
        check_lifecycle(&dims, values.clone())?;
        check_lifecycle(&dims, values.iter().map(|v| u16::from(*v) * 257).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| u32::from(*v) << 24).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| u64::from(*v) << 56).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| v % 2 == 1).collect())?;
        check_lifecycle(&dims, floats.iter().map(|v| Complex64::new(*v, -v)).collect())?;
        check_lifecycle(&dims, floats.iter().map(|v| Complex128::new(f64::from(*v), 2.0)).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| vec![*v; usize::from(*v % 5)]).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| QInt8(*v as i8)).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| QUInt8(*v)).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| QInt16(i16::from(*v))).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| QUInt16(u16::from(*v))).collect())?;
        check_lifecycle(&dims, values.iter().map(|v| QInt32(i32::from(*v))).collect())?;
        check_lifecycle(
            &dims,
            (0..n)
                .map(|i| ResourceHandle::new(op_core::Device::CPU, "c", format!("r{i}"), "Var"))
                .collect(),
        )?;
    }

    #[test]
    fn large_plain_tensors_live_in_reused_blocks(
        n in 17usize..if cfg!(miri) { 300 } else { 5000 },
        seed in any::<u32>(),
    ) {
        // Past the inline size: blocks of the global allocator.
        let values: Vec<f32> = (0..n).map(|i| (i as u32 ^ seed) as f32).collect();
        check_lifecycle(&[n], values)?;
    }
}

#[test]
fn element_counts_that_overflow_are_errors_not_panics() {
    let huge = isize::MAX as usize;
    for dims in [
        vec![usize::MAX, 2],
        vec![2, usize::MAX],
        vec![huge, 3],
        vec![0, usize::MAX, 2],
        vec![huge + 1],
    ] {
        let shape = TensorShape::try_new(&dims).unwrap_err();
        for err in [
            Tensor::from_vec(&dims, vec![1u8]).unwrap_err(),
            Tensor::strings(&dims, ["a"]).unwrap_err(),
            Tensor::zeros(DType::F32, &dims).unwrap_err(),
            Tensor::from_vec([1], vec![1u8])
                .unwrap()
                .reshape(&dims)
                .unwrap_err(),
        ] {
            assert_eq!(err.code(), Code::InvalidArgument, "{dims:?}: {err}");
            assert_eq!(err.message(), shape.message(), "{dims:?}");
        }
    }
    // A count that fits but whose bytes do not.
    let err = Tensor::zeros(DType::F64, [1 << 61]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(
        err.message().contains("more bytes than fit in memory"),
        "{err}"
    );
}

#[test]
fn tensors_past_the_allocator_limit_are_resource_exhausted_not_aborts() {
    // 4 TiB of floats and 24 TiB of strings: more than any machine this
    // runs on, refused before any memory is touched.
    for (dtype, dims) in [(DType::F32, [1usize << 40]), (DType::String, [1 << 40])] {
        let err = Tensor::zeros(dtype, dims).unwrap_err();
        assert_eq!(err.code(), Code::ResourceExhausted, "{err}");
        assert!(
            err.message().starts_with(&format!(
                "allocating a {dtype} tensor of shape [1099511627776]: "
            )),
            "{err}"
        );
    }
}

#[test]
fn host_tensors_are_on_the_cpu() {
    assert_eq!(Tensor::scalar(1.0f32).device(), op_core::Device::CPU);
    assert_eq!(
        Tensor::zeros(DType::I8, [100_000]).unwrap().device(),
        op_core::Device::CPU
    );
}
